/* shmsched queue apply -f FILE | delete KIND NAME | list: OP_QUEUE through
 * the daemon's admin socket (ingest/control_ops.h), one request through
 * cli/admin_call.c, as cli/policy.c does. APPLY sends the file's bytes and its name (for the daemon's
 * messages), never a path for the daemon to read. Every answer is the
 * ClusterQueues then in force, printed as the daemon wrote them. */
#include "cli/admin_call.h"
#include "cli/read_file.h"
#include "cli/queue.h"

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/node.h"
#include "ingest/ingest.h"

#define QUEUE_TIMEOUT_MS 30000
/* The objects' bytes one request carries. */
#define QUEUE_APPLY_MAX                                                    \
	(CONTROL_MAX_PAYLOAD - sizeof(struct op_request) -                 \
	 sizeof(struct op_queue_apply) - OP_QUEUE_SOURCE_MAX)

static void usage(FILE *to)
{
	fprintf(to,
		"usage: shmsched queue apply -f FILE     [--admin-socket PATH]\n"
		"       shmsched queue delete KIND NAME  [--admin-socket PATH]\n"
		"       shmsched queue list              [--admin-socket PATH]\n"
		"\n"
		"Kueue's objects (ResourceFlavor, Cohort, ClusterQueue, LocalQueue,\n"
		"kueue.x-k8s.io/v1beta1 or v1beta2) of a running daemon, changed while\n"
		"it runs. apply adds FILE's objects (JSON as `kubectl get -o json`\n"
		"prints them: objects, a List, or a stream of them), replacing those of\n"
		"the same kind and name; delete removes one (a LocalQueue is named\n"
		"NAMESPACE/NAME); list prints each ClusterQueue's quota, usage and what\n"
		"it borrows. A change is decoded with the daemon's other objects into\n"
		"new quotas, put in force at once; live placements keep their charges\n"
		"(by queue name), a cut quota leaves usage above it until pods end, and\n"
		"a refused change changes nothing. The daemon must have started with\n"
		"Kueue objects in its cluster file. Changes last until it stops.\n"
		"At most %zu bytes a FILE.\n"
		"\n"
		"  -f, --filename FILE  the objects to apply\n"
		"  --admin-socket PATH  the daemon's admin socket: else\n"
		"                       $SHMSCHED_ADMIN_SOCKET, else the daemon's\n"
		"                       socket with \".admin\" appended\n",
		(size_t)QUEUE_APPLY_MAX);
}

/* One OP_QUEUE request; prints the answer. Returns the exit status. */
static int call(const char *sock, uint32_t action, const void *body, size_t len)
{
	static char msg[CONTROL_MAX_PAYLOAD];
	struct op_queue_shown shown;
	uint32_t got;
	if (cli_admin_call("queue", sock, OP_QUEUE, action, body, len, QUEUE_TIMEOUT_MS,
			   sizeof(shown), msg, sizeof(msg), &got) < 0)
		return 1;
	memcpy(&shown, msg, sizeof(shown));
	if (shown.text_bytes != got - sizeof(shown)) {
		fprintf(stderr, "shmsched queue: the daemon's answer holds %zu bytes "
			"of text; it says %u\n", got - sizeof(shown),
			shown.text_bytes);
		return 1;
	}
	printf("# %u Kueue object(s), %u ClusterQueue(s) in force\n", shown.objects,
	       shown.cluster_queues);
	fwrite(msg + sizeof(shown), 1, shown.text_bytes, stdout);
	return 0;
}

static int apply(const char *sock, const char *file)
{
	char *text;
	size_t len;
	if (cli_read_file("queue", file, (unsigned)QUEUE_APPLY_MAX,
			  ", the most one apply carries (split the objects)",
			  &text, &len) < 0)
		return 2;
	size_t name_len = strlen(file);
	if (name_len > OP_QUEUE_SOURCE_MAX)
		name_len = OP_QUEUE_SOURCE_MAX;
	size_t body_len = sizeof(struct op_queue_apply) + name_len + len;
	char *body = malloc(body_len);
	if (body == NULL) {
		free(text);
		fprintf(stderr, "shmsched queue: out of memory\n");
		return 1;
	}
	struct op_queue_apply h = {.source_len = (uint32_t)name_len};
	memcpy(body, &h, sizeof(h));
	memcpy(body + sizeof(h), file, name_len);
	memcpy(body + sizeof(h) + name_len, text, len);
	free(text);
	int rc = call(sock, OP_QUEUE_APPLY, body, body_len);
	free(body);
	return rc;
}

int queue_main(int argc, char **argv)
{
	const char *given = NULL, *file = NULL;
	const char *args[3];
	int n = 0;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			usage(stdout);
			return 0;
		}
		if (strcmp(argv[i], "--admin-socket") == 0 && i + 1 < argc) {
			given = argv[++i];
		} else if ((strcmp(argv[i], "-f") == 0 ||
			    strcmp(argv[i], "--filename") == 0) && i + 1 < argc) {
			file = argv[++i];
		} else if (argv[i][0] == '-') {
			fprintf(stderr, "shmsched queue: unknown option \"%s\"\n", argv[i]);
			usage(stderr);
			return 2;
		} else if (n < 3) {
			args[n++] = argv[i];
		} else {
			fprintf(stderr, "shmsched queue: too many arguments\n");
			return 2;
		}
	}
	const char *verb = n > 0 ? args[0] : "";
	bool ok = (strcmp(verb, "apply") == 0 && n == 1 && file != NULL) ||
		  (strcmp(verb, "delete") == 0 && n == 3 && file == NULL) ||
		  (strcmp(verb, "list") == 0 && n == 1 && file == NULL);
	if (!ok) {
		usage(stderr);
		return 2;
	}
	char buf[PATH_MAX + 16];
	const char *sock = cli_admin_socket(given, buf, sizeof(buf));
	if (strcmp(verb, "list") == 0)
		return call(sock, OP_QUEUE_LIST, NULL, 0);
	if (strcmp(verb, "apply") == 0)
		return apply(sock, file);
	struct op_queue_delete d = {0};
	if (strlen(args[1]) >= sizeof(d.kind) || strlen(args[2]) >= sizeof(d.name)) {
		fprintf(stderr, "shmsched queue delete: KIND at most %zu bytes, NAME "
			"at most %zu\n", sizeof(d.kind) - 1, sizeof(d.name) - 1);
		return 2;
	}
	memcpy(d.kind, args[1], strlen(args[1]));
	memcpy(d.name, args[2], strlen(args[2]));
	return call(sock, OP_QUEUE_DELETE, &d, sizeof(d));
}
