/* shmsched-bench: how fast, compared to what.
 *
 * So far it measures one thing, the ring_limit baseline: the bare round trip
 * of 8-byte handles between two processes through two SP/SC DPDK rings in a
 * shared-memory region, with no scheduling work. Every later figure of the
 * engine is compared against it. The engine exists (`shmsched place` runs it
 * in process); running it behind these rings (the daemon, issue 4) and the
 * pods-per-second modes (issue 5) do not yet, and this program says so
 * rather than print anything it did not measure.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/ring_echo.h"
#include "shm/log.h"
#include "shm/region.h"
#include "shm/ring.h"

struct options {
	uint64_t handles;
	unsigned burst;
	unsigned runs;
	unsigned ring_slots;
	bool json;
};

static void usage(FILE *to)
{
	fprintf(to,
		"usage: shmsched-bench [--handles N] [--burst B] [--runs R]\n"
		"                      [--ring-slots S] [--json]\n"
		"\n"
		"Measures the ring_limit baseline: handles sent by this process to a\n"
		"forked echo process and back through two single-producer/single-\n"
		"consumer DPDK rings in one shared-memory region. Each handle is\n"
		"checked on return; a run with any loss, duplicate or reorder fails.\n"
		"\n"
		"  --handles N     round trips per run (default 10000000)\n"
		"  --burst B       handles per enqueue/dequeue, 1..256 (default 32)\n"
		"  --runs R        runs; the median is reported (default 5)\n"
		"  --ring-slots S  slots per ring, a power of two (default 1024)\n"
		"  --json          one JSON object on stdout instead of the table\n"
		"\n"
		"Not measured yet (issues 4 and 5): the engine behind the rings, the\n"
		"reference scheduler, pods per second, latency percentiles. The engine\n"
		"itself runs in process in `shmsched place --stats`.\n");
}

static int parse_u64(const char *opt, const char *s, uint64_t min, uint64_t max,
		     uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || s[0] == '-' || v < min ||
	    v > max) {
		fprintf(stderr,
			"shmsched-bench: %s: \"%s\" is not a whole number in "
			"%" PRIu64 "..%" PRIu64 "\n", opt, s, min, max);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

static int parse_args(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{"handles", required_argument, NULL, 'n'},
		{"burst", required_argument, NULL, 'b'},
		{"runs", required_argument, NULL, 'r'},
		{"ring-slots", required_argument, NULL, 's'},
		{"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	*o = (struct options){.handles = 10000000, .burst = 32, .runs = 5,
			      .ring_slots = 1024};
	int c;
	uint64_t v;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'n':
			if (parse_u64("--handles", optarg, 1, UINT64_C(1) << 40, &v))
				return 2;
			o->handles = v;
			break;
		case 'b':
			if (parse_u64("--burst", optarg, 1, 256, &v))
				return 2;
			o->burst = (unsigned)v;
			break;
		case 'r':
			if (parse_u64("--runs", optarg, 1, 1000, &v))
				return 2;
			o->runs = (unsigned)v;
			break;
		case 's':
			if (parse_u64("--ring-slots", optarg, 2, 1u << 24, &v))
				return 2;
			if (v & (v - 1)) {
				fprintf(stderr, "shmsched-bench: --ring-slots: %" PRIu64
					" is not a power of two\n", v);
				return 2;
			}
			o->ring_slots = (unsigned)v;
			break;
		case 'j':
			o->json = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "shmsched-bench: unexpected argument \"%s\"\n",
			argv[optind]);
		return 2;
	}
	return 0;
}

/* One run: a forked echo server, this process drives. */
static int run_once(const struct options *o, struct ring_echo_pair *rg,
		    struct ring_echo_result *res)
{
	pid_t pid = fork();
	if (pid < 0) {
		fprintf(stderr, "shmsched-bench: fork: %s\n", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		/* Never outlive the driver, even if it is killed. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		ring_echo_serve(rg->to_server, rg->to_driver, o->handles, o->burst);
		_exit(0);
	}
	ring_echo_drive(rg->to_server, rg->to_driver, o->handles, o->burst, res);
	int status;
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0) {
		fprintf(stderr, "shmsched-bench: echo process failed\n");
		return -1;
	}
	if (!res->ok) {
		fprintf(stderr,
			"shmsched-bench: ring check FAILED: %" PRIu64
			" mismatches (first at %" PRIu64 "), checksum %016" PRIx64
			" vs peer %016" PRIx64 "\n", res->mismatches,
			res->first_mismatch, res->checksum, res->peer_checksum);
		return -1;
	}
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	struct options o;
	int rc = parse_args(argc, argv, &o);
	if (rc)
		return rc;
	if (o.json)
		log_set_level(LOG_LEVEL_WARN);

	struct ring_echo_pair rg;
	rc = ring_echo_pair_create(o.ring_slots, 0, &rg);
	if (rc < 0) {
		fprintf(stderr, "shmsched-bench: cannot create the rings: %s\n",
			strerror(-rc));
		return 1;
	}

	bool tty = isatty(STDERR_FILENO);
	double *rates = calloc(o.runs, sizeof(*rates));
	if (rates == NULL)
		return 1;
	for (unsigned i = 0; i < o.runs; i++) {
		if (tty)
			fprintf(stderr, "\rring_limit: run %u/%u ...", i + 1, o.runs);
		struct ring_echo_result res;
		if (run_once(&o, &rg, &res) < 0)
			return 1;
		rates[i] = (double)res.received * 1e9 / (double)res.elapsed_ns;
	}
	if (tty)
		fprintf(stderr, "\r%40s\r", "");
	qsort(rates, o.runs, sizeof(*rates), cmp_double);
	double median = o.runs % 2 ? rates[o.runs / 2]
				   : (rates[o.runs / 2 - 1] + rates[o.runs / 2]) / 2;

	if (o.json) {
		printf("{\"ring_limit\":{\"round_trips_per_sec\":%.0f,"
		       "\"ns_per_round_trip\":%.2f,\"min_per_sec\":%.0f,"
		       "\"max_per_sec\":%.0f,\"runs\":%u,\"handles_per_run\":%" PRIu64
		       ",\"burst\":%u,\"ring_slots\":%u,\"ring\":\"%s\","
		       "\"page_size\":%zu,\"checked\":true},"
		       "\"engine\":null,\"reference\":null}\n",
		       median, 1e9 / median, rates[0], rates[o.runs - 1], o.runs,
		       o.handles, o.burst, o.ring_slots, ring_impl_name(),
		       shm_region_page_size(rg.region));
	} else {
		printf("shmsched-bench: ring_limit baseline (no scheduling yet)\n");
		printf("  transport   two SP/SC %s rings, %u slots, in one shared "
		       "region\n", ring_impl_name(), o.ring_slots);
		printf("  memory      %s\n", shm_region_backing(rg.region));
		printf("  work        %" PRIu64 " handles per run, bursts of %u, "
		       "%u runs, every handle checked\n", o.handles, o.burst, o.runs);
		printf("  round trips %.2f M/s median (min %.2f, max %.2f), "
		       "%.1f ns each\n", median / 1e6, rates[0] / 1e6,
		       rates[o.runs - 1] / 1e6, 1e9 / median);
		printf("  engine      not behind the rings yet (issue 4); in process: "
		       "shmsched place --stats\n");
	}
	free(rates);
	ring_echo_pair_close(&rg);
	return 0;
}
