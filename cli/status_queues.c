/* shmsched status --queues: the daemon's figures that its state region
 * does not hold, asked of its admin socket (OP_QUEUE_METRICS,
 * ingest/control_ops.h): Prometheus text, in the answer or, past one
 * answer's room, whole in a sealed memfd (sealed_text_read: its seals and
 * size checked, at most OP_QUEUE_METRICS_MAX_BYTES). The layout, at most
 * STATUS_QUEUE_LINES rows then "... and K more", is
 * cli/status_queues_text.c's, in memory bounded whatever the text's size:
 * the text itself is all this holds. */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/admin_call.h"
#include "cli/node.h"
#include "cli/status.h"
#include "cli/status_queues_text.h"
#include "ingest/ingest.h"

int status_queues(const char *admin_socket)
{
	static char msg[CONTROL_MAX_PAYLOAD + 1];
	char buf[4096 + 16];
	const char *sock = cli_admin_socket(admin_socket, buf, sizeof(buf));
	struct op_queue_shown shown;
	uint32_t got;
	int fd;
	if (cli_admin_call_fd("status", sock, OP_QUEUE, OP_QUEUE_METRICS, NULL, 0,
			      5000, sizeof(shown), msg, CONTROL_MAX_PAYLOAD, &got,
			      &fd) < 0)
		return 1;
	memcpy(&shown, msg, sizeof(shown));
	if (shown.text_bytes != got - sizeof(shown) ||
	    (shown.fd_bytes > 0 && shown.text_bytes > 0)) {
		fprintf(stderr, "shmsched status: the daemon's answer holds %zu bytes "
			"of text; it says %u (and %u in a memfd)\n",
			got - sizeof(shown), shown.text_bytes, shown.fd_bytes);
		if (fd >= 0)
			close(fd);
		return 1;
	}
	/* Past one answer the text comes whole in a sealed memfd. */
	char *text = msg + sizeof(shown), *whole = NULL;
	text[shown.text_bytes] = '\0';
	if (shown.fd_bytes > 0 || fd >= 0) {
		char err[512];
		int rc = sealed_text_read(fd, shown.fd_bytes, OP_QUEUE_METRICS_MAX_BYTES,
					  "the daemon's metrics", &whole, err,
					  sizeof(err));
		if (fd >= 0)
			close(fd);
		if (rc < 0) {
			fprintf(stderr, "shmsched status: %s\n", err);
			return 1;
		}
		text = whole;
	}
	status_queues_print(text, stdout);
	free(whole);
	return 0;
}
