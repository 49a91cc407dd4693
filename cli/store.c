/* shmsched store check DIR: a durable store checked without starting a
 * daemon or changing anything (bind/store.h, store_check): LMDB's own
 * checks, then every value's checksum. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "bind/bind.h"
#include "cli/node.h"

#define TRY "Try 'shmsched store --help' for more information.\n"

static void usage(FILE *to)
{
	fprintf(to,
		"usage: shmsched store check DIR\n"
		"       shmsched store --help\n"
		"\n"
		"Checks the durable store in DIR (shmschedd --state-dir) without\n"
		"changing it: that it is an LMDB environment of this format, not\n"
		"truncated, and that every record's checksum holds. Prints what it\n"
		"holds; exit 0 when sound, 1 with the first problem otherwise. A\n"
		"damaged store is never used by the daemon: move DIR aside (keep it\n"
		"for inspection, e.g. with mdb_dump from lmdb-utils) and start with\n"
		"a new one; the state region, if it still exists, fills it again.\n");
}

int store_main(int argc, char **argv)
{
	/* --help anywhere, as every command takes it (`store check --help`
	 * is not a directory called --help); any other option is refused. */
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			usage(stdout);
			return 0;
		}
	}
	for (int i = 1; i < argc; i++) {
		if (argv[i][0] == '-') {
			fprintf(stderr, "shmsched store: unrecognized option '%s'\n"
				TRY, argv[i]);
			return 2;
		}
	}
	if (argc < 2 || strcmp(argv[1], "check") != 0) {
		fprintf(stderr, "shmsched store: %s%s%s\n" TRY,
			argc < 2 ? "a command is needed (check)" : "unknown command \"",
			argc < 2 ? "" : argv[1], argc < 2 ? "" : "\"; expected check");
		return 2;
	}
	if (argc != 3) {
		fprintf(stderr, "shmsched store check: %s\n" TRY,
			argc < 3 ? "a directory is needed" : "one directory only");
		return 2;
	}
	uint64_t nodes, placements, identities;
	char err[1024];
	if (store_check(argv[2], &nodes, &placements, &identities, err,
			sizeof(err)) < 0) {
		fprintf(stderr, "shmsched store check: %s\n", err);
		return 1;
	}
	printf("shmsched store check %s: sound: %" PRIu64 " nodes, %" PRIu64
	       " placements, %" PRIu64 " identities\n", argv[2], nodes, placements,
	       identities);
	return 0;
}
