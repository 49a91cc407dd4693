/* shmsched resync: declares the pods bound on a node, or on every node,
 * through the daemon's admin socket: the file is passed to the daemon as
 * an open fd (it maps it), so its size is bounded by the daemon's limit,
 * not by a control message. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <shmsched/client.h>

#include "cli/node.h"

#define TRY "Try 'shmsched resync --help' for more information.\n"

static void usage(FILE *to)
{
	fprintf(to,
		"usage: shmsched resync --pods FILE [--node NAME] [--json]\n"
		"                       [--admin-socket PATH]\n"
		"\n"
		"Reconciles the daemon with the source of truth: FILE holds the pods\n"
		"bound in the cluster (Kubernetes JSON, e.g. `kubectl get pods -A -o\n"
		"json`, whatever scheduler placed them); afterwards the placements the\n"
		"daemon counts on NAME (or, without --node, on every node) are exactly\n"
		"those pods, matched by namespace/name. Prints what changed: added,\n"
		"removed, resized, unchanged, and pods skipped (not bound, finished,\n"
		"on another or an unknown node). A producer's placement that no\n"
		"declared pod names is given back: its release then finds nothing.\n");
}

int resync_main(int argc, char **argv)
{
	const char *given = NULL, *pods = NULL, *node = NULL;
	bool json = false;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			usage(stdout);
			return 0;
		}
		if (strcmp(a, "--json") == 0) {
			json = true;
			continue;
		}
		const char **to = strcmp(a, "--pods") == 0 ? &pods
				  : strcmp(a, "--node") == 0 ? &node
				  : strcmp(a, "--admin-socket") == 0 ? &given : NULL;
		if (to == NULL) {
			fprintf(stderr, "shmsched resync: %s \"%s\"\n" TRY,
				a[0] == '-' ? "unrecognized option" :
				"unexpected argument", a);
			return 2;
		}
		if (++i == argc || argv[i][0] == '\0') {
			fprintf(stderr, "shmsched resync: %s needs a value\n" TRY, a);
			return 2;
		}
		*to = argv[i];
	}
	if (pods == NULL) {
		fprintf(stderr, "shmsched resync: --pods FILE is required\n" TRY);
		return 2;
	}
	int fd = open(pods, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "shmsched resync: %s: %s\n", pods, strerror(errno));
		return 1;
	}
	char path[4096], err[1024];
	const char *sock = cli_admin_socket(given, path, sizeof(path));
	struct shmsched_client *c;
	struct shmsched_resync_result r;
	int rc = shmsched_connect(sock, &c, err, sizeof(err));
	if (rc == 0) {
		rc = shmsched_resync(c, fd, node, &r, err, sizeof(err));
		shmsched_disconnect(c);
	}
	close(fd);
	if (rc < 0) {
		fprintf(stderr, "shmsched resync %s: %s\n", pods, err);
		return 1;
	}
	if (json)
		printf("{\"added\":%" PRIu64 ",\"removed\":%" PRIu64 ",\"resized\":%"
		       PRIu64 ",\"unchanged\":%" PRIu64 ",\"skipped\":%" PRIu64 "}\n",
		       r.added, r.removed, r.resized, r.unchanged, r.skipped);
	else
		printf("shmsched resync %s (%s): %" PRIu64 " added, %" PRIu64
		       " removed, %" PRIu64 " resized, %" PRIu64 " unchanged, %"
		       PRIu64 " skipped\n", pods, node ? node : "every node",
		       r.added, r.removed, r.resized, r.unchanged, r.skipped);
	return 0;
}
