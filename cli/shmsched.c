/* shmsched: the command-line tool. Thin: it picks the subcommand. */
#include <stdio.h>
#include <string.h>

#include "cli/approve.h"
#include "cli/cluster.h"
#include "cli/node.h"
#include "cli/place.h"
#include "cli/policy.h"
#include "cli/queue.h"
#include "cli/status.h"
#include "shmsched/version.h"

#define TRY "Try 'shmsched --help' for more information.\n"

static void usage(FILE *to)
{
	fprintf(to,
		"usage: shmsched <command> [options]\n"
		"\n"
		"commands:\n"
		"  place    place the pods of a file on a cluster, one JSON line per pod\n"
		"           (shmsched place --help)\n"
		"  node     add, update, remove, cordon or uncordon a node of a running\n"
		"           daemon, through its admin socket (shmsched node --help)\n"
		"  placements  list a running daemon's live placements, through its\n"
		"           admin socket (shmsched placements --help)\n"
		"  resync   declare the pods bound on a node or every node, from a\n"
		"           Kubernetes pod list (shmsched resync --help)\n"
		"  policy   show, reload or apply a running daemon's policy (who may\n"
		"           use which namespaces and PriorityClasses), through its admin\n"
		"           socket (shmsched policy --help)\n"
		"  queue    apply, delete or list a running daemon's Kueue queues\n"
		"           (ClusterQueue, LocalQueue, ...) through its admin socket\n"
		"           (shmsched queue --help)\n"
		"  approve  a manager that approves (or not) a drain's evictions of\n"
		"           the pods a selector picks (shmsched approve --help)\n"
		"  pool     list or release the pools a running daemon quarantined for\n"
		"           a template whose pods fail there (shmsched pool --help)\n"
		"  store    check a durable store (shmsched store check DIR)\n"
		"  status   a daemon's state region read in place: daemon, nodes,\n"
		"           producers, workers; also a crashed one's (shmsched status --help)\n"
		"  cluster  a multi-host cluster's hosts, leases and shards, read from\n"
		"           etcd (shmsched cluster --help)\n"
		"\n"
		"  -h, --help  print this help\n"
		"  --version   print the version\n"
		"\n"
		"exit status: 0 done; 1 a failure (no daemon, a damaged store, ...);\n"
		"2 bad usage or input\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "shmsched: a command is needed\n" TRY);
		return 2;
	}
	if (strcmp(argv[1], "place") == 0)
		return place_main(argc - 1, argv + 1);
	if (strcmp(argv[1], "node") == 0)
		return node_main(argc - 1, argv + 1);
	if (strcmp(argv[1], "placements") == 0)
		return placements_main(argc - 1, argv + 1);
	if (strcmp(argv[1], "resync") == 0)
		return resync_main(argc - 1, argv + 1);
	if (strcmp(argv[1], "policy") == 0)
		return policy_main(argc - 1, argv + 1);
	if (strcmp(argv[1], "queue") == 0)
		return queue_main(argc - 1, argv + 1);
	if (strcmp(argv[1], "approve") == 0)
		return approve_main(argc - 1, argv + 1);
	if (strcmp(argv[1], "pool") == 0)
		return pool_main(argc - 1, argv + 1);
	if (strcmp(argv[1], "store") == 0)
		return store_main(argc - 1, argv + 1);
	if (strcmp(argv[1], "status") == 0)
		return status_main(argc - 1, argv + 1);
	if (strcmp(argv[1], "cluster") == 0)
		return cluster_main(argc - 1, argv + 1);
	if (strcmp(argv[1], "--version") == 0) {
		printf("shmsched %s\n", SHMSCHED_VERSION_STRING);
		return 0;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		usage(stdout);
		return 0;
	}
	if (argv[1][0] == '-')
		fprintf(stderr, "shmsched: unrecognized option '%s'\n" TRY, argv[1]);
	else
		fprintf(stderr, "shmsched: unknown command \"%s\"\n" TRY, argv[1]);
	return 2;
}
