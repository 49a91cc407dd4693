/* shmsched pool: the pools a running daemon quarantined for a template
 * whose pods failed there together (shmschedd --pool-label), listed or
 * released through its admin socket (shmsched_pools). Thin: the daemon
 * writes the listing. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/node.h"
#include "shmsched/client.h"

static void usage(FILE *to)
{
	fprintf(to,
		"usage: shmsched pool list [--admin-socket PATH]\n"
		"       shmsched pool release POOL [TEMPLATE] [--admin-socket PATH]\n"
		"\n"
		"list: every (pool, template) pair the daemon tracks, quarantined\n"
		"ones first: the failures, placements and nodes of its window.\n"
		"release: lifts pool POOL's quarantines (the value of the daemon's\n"
		"--pool-label), every template's, or TEMPLATE's (\"namespace/name\").\n"
		"The admin socket as for `shmsched node`.\n");
}

int pool_main(int argc, char **argv)
{
	const char *given = NULL, *args[3] = {NULL, NULL, NULL};
	int n = 0;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			usage(stdout);
			return 0;
		} else if (strcmp(argv[i], "--admin-socket") == 0 && i + 1 < argc) {
			given = argv[++i];
		} else if (argv[i][0] != '-' && n < 3) {
			args[n++] = argv[i];
		} else {
			fprintf(stderr, "shmsched pool: %s \"%s\"\n"
				"Try 'shmsched pool --help' for more information.\n",
				strcmp(argv[i], "--admin-socket") == 0
				? "a value is needed after" : "unexpected argument",
				argv[i]);
			return 2;
		}
	}
	bool list = n == 1 && strcmp(args[0], "list") == 0;
	bool release = n >= 2 && strcmp(args[0], "release") == 0;
	if (!list && !release) {
		fprintf(stderr, "shmsched pool: expected \"list\", or \"release POOL "
			"[TEMPLATE]\"\nTry 'shmsched pool --help' for more "
			"information.\n");
		return 2;
	}
	char path[4096], err[1024];
	const char *sock = cli_admin_socket(given, path, sizeof(path));
	struct shmsched_client *c;
	if (shmsched_connect(sock, &c, err, sizeof(err)) < 0) {
		fprintf(stderr, "shmsched pool: %s\n", err);
		return 1;
	}
	unsigned held = 0, released = 0;
	char *text = NULL;
	int rc = shmsched_pools(c, release ? args[1] : NULL, release ? args[2] : NULL,
				&held, &released, list ? &text : NULL, err,
				sizeof(err));
	shmsched_disconnect(c);
	if (rc < 0) {
		fprintf(stderr, "shmsched pool: %s\n", err);
		return 1;
	}
	if (list) {
		fputs(text, stdout);
		fprintf(stderr, "shmsched pool: %u quarantined\n", held);
	} else {
		printf("%u quarantines lifted; %u left\n", released, held);
	}
	free(text);
	return 0;
}
