/* shmsched-bench: how fast, compared to what.
 *
 * Two measurements in one run, so they can be compared as a ratio on the
 * same noisy machine:
 * - ring_limit: the bare round trip of 8-byte handles between two processes
 *   through two SP/SC DPDK rings in a shared-memory region, no scheduling
 *   work: the physical limit of this design's transport here;
 * - engine: pods per second through the real path: producer processes
 *   (libshmsched-client) submit pods from a template mix through their
 *   regions to a daemon in this process (cli/daemon.c) on a synthetic
 *   cluster, and read every answer (bench/engine_run.c).
 * The reference scheduler, latency at a fixed rate, sweeps and plots come
 * with issue 5; this program prints null rather than a figure it did not
 * measure.
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

#include "bench/engine_run.h"
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
	bool engine; /* false: --ring-limit-only */
	bool syscalls; /* --syscalls: two more runs with the daemon under strace */
	struct engine_run_config run;
};

static void usage(FILE *to)
{
	fprintf(to,
		"usage: shmsched-bench [--nodes N] [--running M] [--pods P]\n"
		"                      [--producers K] [--workers W] [--seed S]\n"
		"                      [--handles N] [--burst B] [--runs R]\n"
		"                      [--ring-slots S] [--ring-limit-only] [--json]\n"
		"\n"
		"engine: K producer processes submit P pods (40 templates: requests,\n"
		"selectors, required and preferred affinity, tolerations) through\n"
		"shared-memory rings to a daemon in this process with W workers, on a\n"
		"synthetic cluster of N nodes with M running pods; every answer is read\n"
		"back; then the node counters are checked against allocatable.\n"
		"  --nodes N         default 10000\n"
		"  --running M       default 20000\n"
		"  --pods P          default 200000\n"
		"  --producers K     default 1\n"
		"  --workers W       default: one per core less one, at least 1\n"
		"  --seed S          the synthetic cluster and tie-breaks (default 1)\n"
		"\n"
		"ring_limit: handles sent to a forked echo process and back through\n"
		"two SP/SC DPDK rings; each handle is checked on return.\n"
		"  --handles N       round trips per run (default 2000000)\n"
		"  --burst B         handles per enqueue/dequeue, 1..256 (default 32)\n"
		"  --runs R          runs; the median is reported (default 3)\n"
		"  --ring-slots S    slots per ring, a power of two (default 1024)\n"
		"  --ring-limit-only skip the engine run\n"
		"  --syscalls        also run the daemon (shmschedd beside this program)\n"
		"                    under strace -f -c for P/2 and P pods and report\n"
		"                    the system calls that grow with pods, per pod\n"
		"\n"
		"  --json            one JSON object on stdout instead of the table\n");
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
		{"nodes", required_argument, NULL, 'N'},
		{"running", required_argument, NULL, 'M'},
		{"pods", required_argument, NULL, 'P'},
		{"producers", required_argument, NULL, 'K'},
		{"workers", required_argument, NULL, 'W'},
		{"seed", required_argument, NULL, 'S'},
		{"ring-limit-only", no_argument, NULL, 'L'},
		{"syscalls", no_argument, NULL, 'Y'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	*o = (struct options){.handles = 2000000, .burst = 32, .runs = 3,
			      .ring_slots = 1024, .engine = true,
			      .run = {.nodes = 10000, .running = 20000, .pods = 200000,
				      .producers = 1, .seed = 1}};
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
		case 'N':
			if (parse_u64("--nodes", optarg, 1, 1u << 24, &v))
				return 2;
			o->run.nodes = (uint32_t)v;
			break;
		case 'M':
			if (parse_u64("--running", optarg, 0, UINT32_MAX, &v))
				return 2;
			o->run.running = (uint32_t)v;
			break;
		case 'P':
			if (parse_u64("--pods", optarg, 1, UINT64_C(1) << 40, &v))
				return 2;
			o->run.pods = v;
			break;
		case 'K':
			if (parse_u64("--producers", optarg, 1, 64, &v))
				return 2;
			o->run.producers = (unsigned)v;
			break;
		case 'W':
			if (parse_u64("--workers", optarg, 0, 256, &v))
				return 2;
			o->run.workers = (unsigned)v;
			break;
		case 'S':
			if (parse_u64("--seed", optarg, 0, UINT64_MAX, &v))
				return 2;
			o->run.seed = v;
			break;
		case 'L':
			o->engine = false;
			break;
		case 'Y':
			o->syscalls = true;
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

/* shmschedd beside this program (build/bench -> build/cli, or one bindir). */
static int daemon_exe_path(char *buf, size_t len)
{
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return -errno;
	self[n] = '\0';
	char *slash = strrchr(self, '/');
	if (slash == NULL)
		return -ENOENT;
	*slash = '\0';
	snprintf(buf, len, "%s/../cli/shmschedd", self);
	if (access(buf, X_OK) == 0)
		return 0;
	snprintf(buf, len, "%s/shmschedd", self);
	return access(buf, X_OK) == 0 ? 0 : -ENOENT;
}

/* Two runs with the daemon as a child under strace, of P/2 and P pods:
 * the calls that grow with pods, per pod. */
static int measure_syscalls(const struct engine_run_config *base, double *out,
			    char *err, size_t err_len)
{
	char exe[4200], trace[] = "/tmp/shmsched-strace-XXXXXX";
	if (daemon_exe_path(exe, sizeof(exe)) < 0) {
		snprintf(err, err_len, "no shmschedd beside this program");
		return -ENOENT;
	}
	int fd = mkstemp(trace);
	if (fd < 0) {
		snprintf(err, err_len, "mkstemp: %s", strerror(errno));
		return -errno;
	}
	close(fd);
	struct engine_run_config c = *base;
	c.daemon_exe = exe;
	c.strace_out = trace;
	c.progress = false;
	struct engine_run_result a, b;
	c.pods = base->pods / 2;
	int rc = engine_run(&c, &a, err, err_len);
	c.pods = base->pods;
	if (rc == 0)
		rc = engine_run(&c, &b, err, err_len);
	unlink(trace);
	if (rc == 0)
		*out = ((double)b.syscalls - (double)a.syscalls) /
		       (double)(base->pods - base->pods / 2);
	return rc;
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
	/* The daemon runs in this process: its start-up lines are not the
	 * report. SHMSCHED_LOG=info shows them. */
	if (getenv("SHMSCHED_LOG") == NULL)
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

	struct engine_run_result er;
	char err[1024];
	if (o.engine) {
		o.run.progress = tty;
		if (engine_run(&o.run, &er, err, sizeof(err)) < 0) {
			fprintf(stderr, "shmsched-bench: engine run: %s\n", err);
			return 1;
		}
	}
	double syscalls_per_pod = -1;
	if (o.engine && o.syscalls &&
	    measure_syscalls(&o.run, &syscalls_per_pod, err, sizeof(err)) < 0) {
		fprintf(stderr, "shmsched-bench: --syscalls: %s\n", err);
		return 1;
	}
	if (o.json) {
		printf("{\"pods\":%" PRIu64 ",\"nodes\":%u,\"running\":%u,"
		       "\"producers\":%u,\"workers\":%u,", o.engine ? o.run.pods : 0,
		       o.run.nodes, o.run.running, o.run.producers,
		       o.engine ? er.workers : 0);
		if (o.engine)
			printf("\"engine\":{\"pods_per_sec\":%.0f,\"wall_s\":%.3f,"
			       "\"answered\":%" PRIu64 ",\"placed\":%" PRIu64
			       ",\"unschedulable\":%" PRIu64 ",\"rejected\":%" PRIu64
			       ",\"cancelled\":%" PRIu64 ",\"conflicts\":%" PRIu64
			       ",\"overcommits\":%" PRIu64 ",\"p50_us\":%.1f,"
			       "\"p90_us\":%.1f,\"p99_us\":%.1f,\"p999_us\":%.1f,"
			       "\"latency\":\"closed loop: includes queueing\"},",
			       er.pods_per_sec, er.wall_s, er.answered, er.placed,
			       er.unschedulable, er.rejected, er.cancelled, er.conflicts,
			       er.overcommits, er.p50_us, er.p90_us, er.p99_us, er.p999_us);
		else
			printf("\"engine\":null,");
		printf("\"ring_limit\":{\"pods_per_sec\":%.0f,"
		       "\"round_trips_per_sec\":%.0f,\"ns_per_round_trip\":%.2f,"
		       "\"min_per_sec\":%.0f,\"max_per_sec\":%.0f,\"runs\":%u,"
		       "\"handles_per_run\":%" PRIu64 ",\"burst\":%u,"
		       "\"ring_slots\":%u,\"ring\":\"%s\",\"page_size\":%zu},",
		       median, median, 1e9 / median, rates[0], rates[o.runs - 1],
		       o.runs, o.handles, o.burst, o.ring_slots, ring_impl_name(),
		       shm_region_page_size(rg.region));
		if (o.engine)
			printf("\"engine_over_ring_limit\":%.6f,", er.pods_per_sec / median);
		if (syscalls_per_pod >= 0)
			printf("\"reference\":null,\"syscalls_per_pod\":%.4f}\n",
			       syscalls_per_pod);
		else
			printf("\"reference\":null,\"syscalls_per_pod\":null}\n");
	} else {
		printf("shmsched-bench (%ld cores)\n", sysconf(_SC_NPROCESSORS_ONLN));
		printf("  ring_limit  two SP/SC %s rings, %u slots, bursts of %u: "
		       "%.2f M round trips/s median of %u (min %.2f, max %.2f)\n",
		       ring_impl_name(), o.ring_slots, o.burst, median / 1e6, o.runs,
		       rates[0] / 1e6, rates[o.runs - 1] / 1e6);
		printf("  memory      %s\n", shm_region_backing(rg.region));
		if (o.engine) {
			printf("  engine      %" PRIu64 " pods from %u producer processes "
			       "to %u workers, %u nodes (%u running pods)\n",
			       o.run.pods, o.run.producers, er.workers, er.nodes,
			       o.run.running);
			printf("              %.0f pods/s (%.3f s), %.4f of ring_limit\n",
			       er.pods_per_sec, er.wall_s, er.pods_per_sec / median);
			printf("              %" PRIu64 " placed, %" PRIu64 " unschedulable, %"
			       PRIu64 " rejected, %" PRIu64 " cancelled, %" PRIu64
			       " conflicts, %" PRIu64 " overcommits\n", er.placed,
			       er.unschedulable, er.rejected, er.cancelled, er.conflicts,
			       er.overcommits);
			printf("              submit-to-answer p50 %.0f us, p99 %.0f us "
			       "(closed loop: queueing included)\n", er.p50_us, er.p99_us);
		}
		if (syscalls_per_pod >= 0)
			printf("  syscalls    %.4f per pod (the daemon under strace, "
			       "runs of %" PRIu64 " and %" PRIu64 " pods)\n",
			       syscalls_per_pod, o.run.pods / 2, o.run.pods);
		printf("  reference   not measured yet (issue 5)\n");
	}
	free(rates);
	ring_echo_pair_close(&rg);
	return 0;
}
