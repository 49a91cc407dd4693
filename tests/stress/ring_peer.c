/* ring_peer: the far side of stress.ring_procs, as a separately executed
 * program. It attaches to an echo pair's region by fd, at an address other
 * than the parent's, and echoes a given number of handles.
 *
 * usage: ring_peer FD SLOTS COUNT BURST PARENT_BASE PARENT_SIZE
 * PARENT_BASE is the parent's mapping address (hex); the peer first reserves
 * that range so its own mapping cannot land there, then checks it did not.
 * Exit 0 on success; 2 usage, 3 same address, 4 attach refused.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>

#include "bench/ring_echo.h"

int main(int argc, char **argv)
{
	if (argc != 7) {
		fprintf(stderr, "usage: ring_peer FD SLOTS COUNT BURST PARENT_BASE "
			"PARENT_SIZE\n");
		return 2;
	}
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	int fd = atoi(argv[1]);
	unsigned slots = (unsigned)strtoul(argv[2], NULL, 10);
	uint64_t count = strtoull(argv[3], NULL, 10);
	unsigned burst = (unsigned)strtoul(argv[4], NULL, 10);
	uintptr_t parent_base = (uintptr_t)strtoull(argv[5], NULL, 16);
	size_t parent_size = (size_t)strtoull(argv[6], NULL, 10);

	/* Occupy the parent's address range (if anything else already holds
	 * part of it, that part is occupied anyway). */
	void *hold = mmap((void *)parent_base, parent_size, PROT_NONE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	(void)hold;

	struct ring_echo_pair pair;
	char err[256] = "";
	int rc = ring_echo_pair_attach(fd, slots, &pair, err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr, "ring_peer: attach refused: %s\n", err);
		return 4;
	}
	uintptr_t base = (uintptr_t)shm_region_span(pair.region).base;
	if (base == parent_base) {
		fprintf(stderr, "ring_peer: mapped at the parent's address %#" PRIxPTR
			"\n", base);
		return 3;
	}
	uint64_t sum = ring_echo_serve(pair.to_server, pair.to_driver, count, burst);
	printf("ring_peer: at %#" PRIxPTR " (parent %#" PRIxPTR "), echoed %" PRIu64
	       " handles, checksum %016" PRIx64 "\n", base, parent_base, count, sum);
	ring_echo_pair_close(&pair);
	return 0;
}
