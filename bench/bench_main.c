/* shmsched-bench: how fast, compared to what.
 *
 * Everything in one run, so the figures can be compared as ratios on the
 * same noisy machine:
 * - ring_limit: the bare round trip of 8-byte handles between two processes
 *   through two SP/SC DPDK rings in a shared-memory region, no scheduling
 *   work: the limit of this design's transport here (handles/s, reported
 *   as pods_per_sec: one handle per pod);
 * - engine: pods per second through the real path, closed loop: producer
 *   processes (libshmsched-client) submit the workload's pods through
 *   their regions to a daemon in this process (bench/engine_run.c);
 * - latency: the same path open loop, at half the engine's measured rate
 *   (or --rate), latency from each pod's scheduled submit time;
 * - reference: kube-scheduler's algorithm done literally, in process, on
 *   the same cluster and pods, time-bounded (bench/quality.h);
 * - quality: the engine's choices against the reference's on a small
 *   cluster filled until a pod fails (bench/quality.h);
 * - sweeps over nodes or workers repeat engine, reference and ring_limit
 *   per point (the node sweep's engine R times, in rounds, with
 *   --sweep-runs); --plot draws them (bench/plot.c).
 * Output: bench/report.c. A figure not measured prints as null / "not
 * measured", never as a number.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/engine_run.h"
#include "bench/plot.h"
#include "bench/progress.h"
#include "bench/quality.h"
#include "bench/report.h"
#include "bench/trace_main.h"
#include "bench/ring_echo.h"
#include "bench/workload.h"
#include "base/base.h"
#include "shm/shm.h"
#include "shmsched/version.h"

#define TRY "Try 'shmsched-bench --help' for more information.\n"

#define MAX_SWEEP 64
/* A synthetic node takes 110 pods: a quality cluster cannot take more. */
#define PODS_PER_NODE 110
/* --noisy's regions: 32768 slots (20 MiB each), so the flood queued
 * before the start (engine_run.h, slots) outlasts a run of 30,000 pods
 * at half of what its producer did alone (its pods cost ~20 us: 0.6 s of
 * the worker's time), should the flood's process get no core meanwhile. */
#define NOISY_SLOTS 32768u

struct options {
	uint64_t handles;
	unsigned burst;
	unsigned runs;
	unsigned ring_slots;
	bool json;
	bool engine;   /* false: --ring-limit-only */
	bool syscalls; /* --syscalls: two more runs with the daemon under strace */
	struct engine_run_config run;
	const char *workload_path;
	bool latency;
	uint64_t noisy_pods;   /* --noisy [N]: the fair-share check; 0: off */
	double noisy_rate;     /* --noisy-rate [R]: pods/s; -1: half of what the
				* producer did alone; 0: off */
	double churn_rate;     /* --churn RATE: node events/s; 0: off */
	bool rate_half;       /* --rate half (the default) */
	double rate;          /* --rate R */
	uint64_t latency_pods; /* 0: min(100000, pods / 5) */
	bool reference;
	double reference_seconds;
	double sweep_reference_seconds;
	unsigned sweep_runs;  /* --sweep-runs R: engine runs per node point */
	bool quality;
	uint32_t quality_nodes;
	uint64_t quality_pods;   /* 0: until a pod fails */
	double quality_seconds;
	uint64_t sweep_nodes[MAX_SWEEP];
	size_t n_sweep_nodes;
	uint64_t sweep_workers[MAX_SWEEP];
	size_t n_sweep_workers;
	bool sweep_workers_all;
	const char *plot_dir;
	int progress; /* -1: stderr is a terminal; 0 / 1: forced */
};

static void usage(FILE *to)
{
	fprintf(to,
		"usage: shmsched-bench [options]\n"
		"       shmsched-bench --trace openb [trace options]  (the GPU trace\n"
		"                      replay: shmsched-bench --trace openb --help)\n"
		"\n"
		"engine: K producer processes submit P pods through shared-memory\n"
		"rings to a daemon in this process with W workers, closed loop; every\n"
		"answer is read back; then the node counters are checked against\n"
		"allocatable (overcommits).\n"
		"  --nodes N            synthetic cluster: N nodes (default 10000)\n"
		"  --running M          ... with M pods running (default 100000)\n"
		"  --cluster FILE       a Kubernetes JSON cluster instead (Nodes, and\n"
		"                       Pods bound to them)\n"
		"  --pods P             pods to place (default 1000000)\n"
		"  --workload FILE      Pods from a Kubernetes JSON file (a Pod, a List,\n"
		"                       or one per line), cycled; default: a mix of 40\n"
		"                       templates with Zipf popularity (bench/workload.c)\n"
		"  --producers K        default 1; each pinned to a core of its own\n"
		"                       past the workers' where there are enough\n"
		"  --no-pin-producers   leave them where the kernel puts them\n"
		"  --workers W          default: one per core less one, at least 1\n"
		"  --seed S             cluster, workload and tie-breaks (default 1)\n"
		"\n"
		"latency: open loop, the producers together submit at a fixed rate;\n"
		"latency runs from each pod's scheduled submit time.\n"
		"  --rate R|half        pods/s, or half the engine's measured rate\n"
		"                       (default half)\n"
		"  --latency-pods N     default: the smaller of 100000 and P/5\n"
		"  --no-latency         skip it\n"
		"\n"
		"fair share: N pods (default 30000) of one producer on one worker,\n"
		"alone and then beside a second producer that floods the daemon\n"
		"with unique, unschedulable pods; reports both times and the ratio.\n"
		"  --noisy[=N]          run it (off by default)\n"
		"  --noisy-rate[=R]     and again with the producer submitting at R\n"
		"                       pods/s (default: half of what it did alone),\n"
		"                       not saturating its worker: its latency alone\n"
		"                       and beside the flood (implies --noisy)\n"
		"\n"
		"churn: the engine run again with node events beside it, sent\n"
		"through the admin socket as an operator's tools would: cordon\n"
		"node-i, uncordon it at the next event (synthetic cluster only);\n"
		"reports the pods/s beside the run without churn.\n"
		"  --churn RATE         node events per second (off by default)\n"
		"\n"
		"durability: the daemon keeps its placements in a durable store\n"
		"(LMDB) in DIR, as shmschedd --state-dir does.\n"
		"  --state-dir DIR      off by default\n"
		"  --durability MODE    none, async (the default) or sync\n"
		"\n"
		"the daemon: --no-warm runs it without the thread that faults the\n"
		"placement table's next pages in ahead of the workers (shmschedd\n"
		"--no-warm); --no-doorbells without the doorbells by which a\n"
		"producer wakes a sleeping worker (a pod then waits for its next\n"
		"poll, up to 1 ms: the comparison at low rates).\n"
		"\n"
		"reference: kube-scheduler's algorithm literally, in process, one pod\n"
		"at a time over every node, on the same cluster and pods.\n"
		"  --reference-seconds S  time bound (default 5)\n"
		"  --no-reference\n"
		"quality: engine vs reference choices on a small synthetic cluster\n"
		"filled until a pod fails.\n"
		"  --quality-nodes N    default 500\n"
		"  --quality-pods N     at most N pods (default: until a pod fails)\n"
		"  --quality-seconds S  time bound over its three runs (default 60)\n"
		"  --no-quality\n"
		"\n"
		"sweeps: engine, reference and ring_limit again per point, a row each.\n"
		"  --sweep-nodes LIST   e.g. 1000,10000,100000 (running pods and pods\n"
		"                       scaled in proportion, pods at most P)\n"
		"  --sweep-workers LIST|all  e.g. 1,2,4 or all (1..cores)\n"
		"  --sweep-reference-seconds S  the reference's bound per point (default 2)\n"
		"  --sweep-runs R       the node sweep's engine runs per point, in R\n"
		"                       rounds of every point in turn; a point reports\n"
		"                       its median run, and each round the first point's\n"
		"                       pods/s over the last's (default 1, at most %d)\n"
		"\n"
		"ring_limit: handles sent to a forked echo process and back through\n"
		"two SP/SC DPDK rings; each handle is checked on return.\n"
		"  --handles N          round trips per run (default 2000000)\n"
		"  --burst B            handles per enqueue/dequeue, 1..256 (default 32)\n"
		"  --runs R             runs; the median is reported (default 3)\n"
		"  --ring-slots S       slots per ring, a power of two (default 1024)\n"
		"  --ring-limit-only    measure ring_limit only\n"
		"\n"
		"  --syscalls           also run the daemon (shmschedd beside this\n"
		"                       program) under strace -f -c for P/2 and P pods\n"
		"                       and report the system calls per pod\n"
		"  --plot DIR           data files, a gnuplot script and PNGs in DIR\n"
		"  --progress, --no-progress  progress bars on stderr (default: when\n"
		"                       stderr is a terminal)\n"
		"  --json               one JSON object on stdout instead of the table\n",
		SWEEP_MAX_RUNS);
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

static int parse_seconds(const char *opt, const char *s, double min, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno != 0 || end == s || *end != '\0' || !isfinite(v) || v < min ||
	    v > 1e9) {
		fprintf(stderr, "shmsched-bench: %s: \"%s\" is not a number of at "
			"least %g\n", opt, s, min);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

/* "1000,10000,100000": each in min..max, at most MAX_SWEEP. */
static int parse_list(const char *opt, const char *s, uint64_t min, uint64_t max,
		      uint64_t *out, size_t *n)
{
	char buf[1024];
	if (strlen(s) >= sizeof(buf) || s[0] == '\0') {
		fprintf(stderr, "shmsched-bench: %s: \"%s\": expected a list like "
			"1000,10000\n", opt, s);
		return -EINVAL;
	}
	strcpy(buf, s);
	*n = 0;
	char *save = NULL;
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (*n == MAX_SWEEP) {
			fprintf(stderr, "shmsched-bench: %s: more than %d points\n",
				opt, MAX_SWEEP);
			return -EINVAL;
		}
		if (parse_u64(opt, t, min, max, &out[(*n)++]) < 0)
			return -EINVAL;
	}
	if (*n == 0) {
		fprintf(stderr, "shmsched-bench: %s: \"%s\": no values\n", opt, s);
		return -EINVAL;
	}
	return 0;
}

enum {
	OPT_HANDLES = 256, OPT_BURST, OPT_RUNS, OPT_RING_SLOTS, OPT_JSON, OPT_NODES,
	OPT_RUNNING, OPT_PODS, OPT_PRODUCERS, OPT_WORKERS, OPT_SEED,
	OPT_RING_LIMIT_ONLY, OPT_SYSCALLS, OPT_HELP, OPT_CLUSTER, OPT_WORKLOAD,
	OPT_RATE, OPT_LATENCY_PODS, OPT_NO_LATENCY, OPT_REFERENCE_SECONDS,
	OPT_NO_REFERENCE, OPT_QUALITY_NODES, OPT_QUALITY_PODS,
	OPT_QUALITY_SECONDS, OPT_NO_QUALITY, OPT_SWEEP_NODES, OPT_SWEEP_WORKERS,
	OPT_SWEEP_REFERENCE_SECONDS, OPT_SWEEP_RUNS, OPT_PLOT, OPT_PROGRESS, OPT_NO_PROGRESS,
	OPT_NOISY, OPT_NOISY_RATE, OPT_STATE_DIR, OPT_DURABILITY, OPT_CHURN, OPT_NO_WARM,
	OPT_NO_DOORBELLS, OPT_NO_PIN_PRODUCERS, OPT_VERSION,
};

static int parse_one(int c, const char *arg, struct options *o)
{
	uint64_t v;
	switch (c) {
	case OPT_HANDLES:
		if (parse_u64("--handles", arg, 1, UINT64_C(1) << 40, &v))
			return 2;
		o->handles = v;
		break;
	case OPT_BURST:
		if (parse_u64("--burst", arg, 1, 256, &v))
			return 2;
		o->burst = (unsigned)v;
		break;
	case OPT_RUNS:
		if (parse_u64("--runs", arg, 1, 1000, &v))
			return 2;
		o->runs = (unsigned)v;
		break;
	case OPT_RING_SLOTS:
		if (parse_u64("--ring-slots", arg, 2, 1u << 24, &v))
			return 2;
		if (v & (v - 1)) {
			fprintf(stderr, "shmsched-bench: --ring-slots: %" PRIu64
				" is not a power of two\n", v);
			return 2;
		}
		o->ring_slots = (unsigned)v;
		break;
	case OPT_NODES:
		if (parse_u64("--nodes", arg, 1, 1u << 24, &v))
			return 2;
		o->run.nodes = (uint32_t)v;
		break;
	case OPT_RUNNING:
		if (parse_u64("--running", arg, 0, UINT32_MAX, &v))
			return 2;
		o->run.running = (uint32_t)v;
		break;
	case OPT_PODS:
		if (parse_u64("--pods", arg, 1, UINT64_C(1) << 40, &v))
			return 2;
		o->run.pods = v;
		break;
	case OPT_PRODUCERS:
		if (parse_u64("--producers", arg, 1, 64, &v))
			return 2;
		o->run.producers = (unsigned)v;
		break;
	case OPT_WORKERS:
		if (parse_u64("--workers", arg, 0, 256, &v))
			return 2;
		o->run.workers = (unsigned)v;
		break;
	case OPT_SEED:
		if (parse_u64("--seed", arg, 0, UINT64_MAX, &v))
			return 2;
		o->run.seed = v;
		break;
	case OPT_RATE:
		if (strcmp(arg, "half") == 0) {
			o->rate_half = true;
			o->rate = 0;
		} else {
			if (parse_seconds("--rate", arg, 0, &o->rate))
				return 2;
			if (!(o->rate > 0)) {
				fprintf(stderr, "shmsched-bench: --rate: \"%s\": expected "
					"pods per second above 0, or half\n", arg);
				return 2;
			}
			o->rate_half = false;
		}
		break;
	case OPT_LATENCY_PODS:
		if (parse_u64("--latency-pods", arg, 1, UINT64_C(1) << 40, &v))
			return 2;
		o->latency_pods = v;
		break;
	case OPT_REFERENCE_SECONDS:
		if (parse_seconds("--reference-seconds", arg, 0.001,
				  &o->reference_seconds))
			return 2;
		break;
	case OPT_SWEEP_REFERENCE_SECONDS:
		if (parse_seconds("--sweep-reference-seconds", arg, 0.001,
				  &o->sweep_reference_seconds))
			return 2;
		break;
	case OPT_SWEEP_RUNS:
		if (parse_u64("--sweep-runs", arg, 1, SWEEP_MAX_RUNS, &v))
			return 2;
		o->sweep_runs = (unsigned)v;
		break;
	case OPT_QUALITY_NODES:
		if (parse_u64("--quality-nodes", arg, 1, 1u << 20, &v))
			return 2;
		o->quality_nodes = (uint32_t)v;
		break;
	case OPT_QUALITY_PODS:
		if (parse_u64("--quality-pods", arg, 1, UINT64_C(1) << 40, &v))
			return 2;
		o->quality_pods = v;
		break;
	case OPT_QUALITY_SECONDS:
		if (parse_seconds("--quality-seconds", arg, 0.001, &o->quality_seconds))
			return 2;
		break;
	case OPT_SWEEP_NODES:
		if (parse_list("--sweep-nodes", arg, 1, 1u << 24, o->sweep_nodes,
			       &o->n_sweep_nodes))
			return 2;
		break;
	case OPT_SWEEP_WORKERS:
		o->sweep_workers_all = strcmp(arg, "all") == 0;
		o->n_sweep_workers = 0;
		if (!o->sweep_workers_all &&
		    parse_list("--sweep-workers", arg, 1, 256, o->sweep_workers,
			       &o->n_sweep_workers))
			return 2;
		break;
	case OPT_CLUSTER:
		o->run.cluster_path = arg;
		break;
	case OPT_WORKLOAD:
		o->workload_path = arg;
		break;
	case OPT_PLOT:
		if (arg[0] == '\0') {
			fprintf(stderr, "shmsched-bench: --plot: expected a directory\n");
			return 2;
		}
		o->plot_dir = arg;
		break;
	case OPT_JSON:
		o->json = true;
		break;
	case OPT_RING_LIMIT_ONLY:
		o->engine = false;
		break;
	case OPT_SYSCALLS:
		o->syscalls = true;
		break;
	case OPT_NO_LATENCY:
		o->latency = false;
		break;
	case OPT_NOISY:
		o->noisy_pods = 30000;
		if (arg != NULL && parse_u64("--noisy", arg, 1, UINT64_C(1) << 32,
					      &o->noisy_pods) < 0)
			return 2;
		break;
	case OPT_NOISY_RATE:
		if (o->noisy_pods == 0)
			o->noisy_pods = 30000;
		o->noisy_rate = -1;
		if (arg != NULL && strcmp(arg, "half") != 0) {
			if (parse_seconds("--noisy-rate", arg, 0, &o->noisy_rate))
				return 2;
			if (!(o->noisy_rate > 0)) {
				fprintf(stderr, "shmsched-bench: --noisy-rate: \"%s\": "
					"expected pods per second above 0, or half\n", arg);
				return 2;
			}
		}
		break;
	case OPT_CHURN:
		if (parse_seconds("--churn", arg, 0, &o->churn_rate))
			return 2;
		if (!(o->churn_rate > 0) || o->churn_rate > 1e6) {
			fprintf(stderr, "shmsched-bench: --churn: \"%s\": expected "
				"node events per second in (0, 1000000]\n", arg);
			return 2;
		}
		break;
	case OPT_STATE_DIR:
		o->run.state_dir = arg;
		break;
	case OPT_NO_PIN_PRODUCERS:
		o->run.no_pin_producers = true;
		break;
	case OPT_NO_DOORBELLS:
		o->run.no_doorbells = true;
		break;
	case OPT_NO_WARM:
		o->run.no_warm = true;
		break;
	case OPT_DURABILITY:
		o->run.durability = strcmp(arg, "none") == 0 ? 0
				    : strcmp(arg, "async") == 0 ? 1
				    : strcmp(arg, "sync") == 0 ? 2 : -1;
		if (o->run.durability < 0) {
			fprintf(stderr, "shmsched-bench: --durability: \"%s\": "
				"expected none, async or sync\n", arg);
			return 2;
		}
		break;
	case OPT_NO_REFERENCE:
		o->reference = false;
		break;
	case OPT_NO_QUALITY:
		o->quality = false;
		break;
	case OPT_PROGRESS:
		o->progress = 1;
		break;
	case OPT_NO_PROGRESS:
		o->progress = 0;
		break;
	case OPT_HELP:
	case 'h':
		usage(stdout);
		exit(0);
	case OPT_VERSION:
		printf("shmsched-bench %s\n", SHMSCHED_VERSION_STRING);
		exit(0);
	default: /* getopt_long has said what is wrong */
		fprintf(stderr, TRY);
		return 2;
	}
	return 0;
}

static int parse_args(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{"handles", required_argument, NULL, OPT_HANDLES},
		{"burst", required_argument, NULL, OPT_BURST},
		{"runs", required_argument, NULL, OPT_RUNS},
		{"ring-slots", required_argument, NULL, OPT_RING_SLOTS},
		{"json", no_argument, NULL, OPT_JSON},
		{"nodes", required_argument, NULL, OPT_NODES},
		{"running", required_argument, NULL, OPT_RUNNING},
		{"pods", required_argument, NULL, OPT_PODS},
		{"producers", required_argument, NULL, OPT_PRODUCERS},
		{"workers", required_argument, NULL, OPT_WORKERS},
		{"seed", required_argument, NULL, OPT_SEED},
		{"ring-limit-only", no_argument, NULL, OPT_RING_LIMIT_ONLY},
		{"syscalls", no_argument, NULL, OPT_SYSCALLS},
		{"cluster", required_argument, NULL, OPT_CLUSTER},
		{"workload", required_argument, NULL, OPT_WORKLOAD},
		{"rate", required_argument, NULL, OPT_RATE},
		{"latency-pods", required_argument, NULL, OPT_LATENCY_PODS},
		{"no-latency", no_argument, NULL, OPT_NO_LATENCY},
		{"noisy", optional_argument, NULL, OPT_NOISY},
		{"noisy-rate", optional_argument, NULL, OPT_NOISY_RATE},
		{"churn", required_argument, NULL, OPT_CHURN},
		{"state-dir", required_argument, NULL, OPT_STATE_DIR},
		{"no-warm", no_argument, NULL, OPT_NO_WARM},
		{"no-doorbells", no_argument, NULL, OPT_NO_DOORBELLS},
		{"no-pin-producers", no_argument, NULL, OPT_NO_PIN_PRODUCERS},
		{"durability", required_argument, NULL, OPT_DURABILITY},
		{"reference-seconds", required_argument, NULL, OPT_REFERENCE_SECONDS},
		{"no-reference", no_argument, NULL, OPT_NO_REFERENCE},
		{"quality-nodes", required_argument, NULL, OPT_QUALITY_NODES},
		{"quality-pods", required_argument, NULL, OPT_QUALITY_PODS},
		{"quality-seconds", required_argument, NULL, OPT_QUALITY_SECONDS},
		{"no-quality", no_argument, NULL, OPT_NO_QUALITY},
		{"sweep-nodes", required_argument, NULL, OPT_SWEEP_NODES},
		{"sweep-runs", required_argument, NULL, OPT_SWEEP_RUNS},
		{"sweep-workers", required_argument, NULL, OPT_SWEEP_WORKERS},
		{"sweep-reference-seconds", required_argument, NULL,
		 OPT_SWEEP_REFERENCE_SECONDS},
		{"plot", required_argument, NULL, OPT_PLOT},
		{"progress", no_argument, NULL, OPT_PROGRESS},
		{"no-progress", no_argument, NULL, OPT_NO_PROGRESS},
		{"help", no_argument, NULL, OPT_HELP},
		{"version", no_argument, NULL, OPT_VERSION},
		{NULL, 0, NULL, 0},
	};
	*o = (struct options){.handles = 2000000, .burst = 32, .runs = 3,
			      .ring_slots = 1024, .engine = true, .latency = true,
			      .rate_half = true, .reference = true,
			      .reference_seconds = 5, .sweep_reference_seconds = 2,
			      .sweep_runs = 1,
			      .quality = true, .quality_nodes = 500,
			      .quality_seconds = 60, .progress = -1,
			      .run = {.nodes = 10000, .running = 100000,
				      .durability = 1 /* async, with --state-dir */,
				      .pods = 1000000, .producers = 1, .seed = 1}};
	bool rate_given = false;
	int c;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		rate_given |= c == OPT_RATE;
		int rc = parse_one(c, optarg, o);
		if (rc)
			return rc;
	}
	if (optind < argc) {
		fprintf(stderr, "shmsched-bench: unexpected argument \"%s\"\n" TRY,
			argv[optind]);
		return 2;
	}
	if (rate_given && !o->latency) {
		fprintf(stderr, "shmsched-bench: --rate and --no-latency: the rate is "
			"the latency run's; give one of them\n");
		return 2;
	}
	if (o->run.cluster_path != NULL && o->churn_rate > 0) {
		fprintf(stderr, "shmsched-bench: --churn names the synthetic "
			"cluster's nodes; not with --cluster %s\n", o->run.cluster_path);
		return 2;
	}
	if (o->run.cluster_path != NULL && o->n_sweep_nodes > 0) {
		fprintf(stderr, "shmsched-bench: --sweep-nodes: sizes the synthetic "
			"cluster; not with --cluster %s\n", o->run.cluster_path);
		return 2;
	}
	if (!o->engine && (o->plot_dir || o->n_sweep_nodes || o->n_sweep_workers ||
			   o->sweep_workers_all || o->syscalls)) {
		fprintf(stderr, "shmsched-bench: --ring-limit-only: measures the rings "
			"alone; not with --plot, --sweep-* or --syscalls\n");
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

/* The median of v[0..n) (n > 0): the mean of the two middle ones for
 * even n. Sorts v. */
static double median_of(double *v, unsigned n)
{
	qsort(v, n, sizeof(v[0]), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* ring_limit: the median of o->runs round-trip runs. */
static int measure_ring_limit(const struct options *o, struct ring_echo_pair *rg,
			      bool progress, struct ring_limit_result *out)
{
	double rates[1000];
	struct progress bar;
	progress_begin(&bar, progress, "ring_limit", o->runs);
	for (unsigned i = 0; i < o->runs; i++) {
		progress_update(&bar, i);
		struct ring_echo_result res;
		if (run_once(o, rg, &res) < 0) {
			progress_end(&bar);
			return -1;
		}
		rates[i] = (double)res.received * 1e9 / (double)res.elapsed_ns;
	}
	progress_end(&bar);
	double median = median_of(rates, o->runs);
	*out = (struct ring_limit_result){
		.median = median,
		.min = rates[0], .max = rates[o->runs - 1], .runs = o->runs,
		.burst = o->burst, .ring_slots = o->ring_slots, .handles = o->handles,
		.ring = ring_impl_name(), .page_size = shm_region_page_size(rg->region)};
	snprintf(out->backing, sizeof(out->backing), "%s",
		 shm_region_backing(rg->region));
	return 0;
}

static void machine_info(struct bench_report *r)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	r->cores = n > 0 ? (unsigned)n : 1;
	snprintf(r->cpu_model, sizeof(r->cpu_model), "unknown cpu");
	FILE *f = fopen("/proc/cpuinfo", "r");
	if (f == NULL)
		return;
	char line[512];
	while (fgets(line, sizeof(line), f) != NULL) {
		char *colon = strchr(line, ':');
		if (strncmp(line, "model name", 10) != 0 || colon == NULL)
			continue;
		colon += 1 + (colon[1] == ' ');
		colon[strcspn(colon, "\n")] = '\0';
		snprintf(r->cpu_model, sizeof(r->cpu_model), "%s", colon);
		break;
	}
	fclose(f);
}

static struct baseline_config baseline_for(const struct engine_run_config *run,
					   double max_seconds, bool progress)
{
	return (struct baseline_config){
		.cluster_path = run->cluster_path, .nodes = run->nodes,
		.running = run->running, .seed = run->seed, .w = run->w,
		.pods = run->pods, .max_seconds = max_seconds, .progress = progress};
}

/* The reference on the engine run's cluster and pods. Returns true when it
 * measured; otherwise `note` says why not (and a failure is on stderr). */
static bool run_reference(const struct engine_run_config *run, double max_seconds,
			  bool progress, struct reference_result *out, char *note,
			  size_t note_len, bool *failed)
{
#ifdef HAVE_BENCH_QUALITY
	char err[1024];
	struct baseline_config bc = baseline_for(run, max_seconds, progress);
	if (reference_run(&bc, out, err, sizeof(err)) < 0) {
		fprintf(stderr, "shmsched-bench: reference: %s\n", err);
		snprintf(note, note_len, "failed: %s", err);
		*failed = true;
		return false;
	}
	return true;
#else
	(void)run, (void)max_seconds, (void)progress, (void)out, (void)failed;
	snprintf(note, note_len, "not built (bench/quality.c is missing)");
	return false;
#endif
}

static bool run_quality(const struct options *o, bool progress,
			struct quality_result *out, char *note, size_t note_len,
			bool *failed)
{
#ifdef HAVE_BENCH_QUALITY
	char err[1024];
	/* Synthetic at quality_nodes, running pods scaled in proportion. */
	struct engine_run_config small = o->run;
	small.cluster_path = NULL;
	small.nodes = o->quality_nodes;
	small.running = o->run.nodes == 0 ? 0
		: (uint32_t)((uint64_t)o->run.running * o->quality_nodes / o->run.nodes);
	small.pods = o->quality_pods ? o->quality_pods
				     : (uint64_t)o->quality_nodes * PODS_PER_NODE + 1;
	struct baseline_config bc = baseline_for(&small, o->quality_seconds, progress);
	if (quality_run(&bc, out, err, sizeof(err)) < 0) {
		fprintf(stderr, "shmsched-bench: quality: %s\n", err);
		snprintf(note, note_len, "failed: %s", err);
		*failed = true;
		return false;
	}
	return true;
#else
	(void)o, (void)progress, (void)out, (void)failed;
	snprintf(note, note_len, "not built (bench/quality.c is missing)");
	return false;
#endif
}

/* A sweep point's engine run: the main run's configuration at `nodes`
 * nodes (vary "nodes") or with `workers` workers. */
static struct engine_run_config sweep_config(const struct options *o, bool progress,
					     const char *vary, uint32_t nodes,
					     unsigned workers, char *phase, size_t phase_len)
{
	struct engine_run_config run = o->run;
	if (strcmp(vary, "nodes") == 0) {
		/* Same fill as the main run: running and pods per node kept,
		 * pods at most --pods. */
		run.running = (uint32_t)((uint64_t)o->run.running * nodes / o->run.nodes);
		if (nodes < o->run.nodes)
			run.pods = o->run.pods * nodes / o->run.nodes;
		run.pods = run.pods ? run.pods : 1;
		run.nodes = nodes;
		snprintf(phase, phase_len, "nodes %u", nodes);
	} else {
		run.workers = workers;
		snprintf(phase, phase_len, "workers %u", workers);
	}
	run.progress = progress;
	run.phase = phase;
	run.rate = 0;
	return run;
}

/* The rest of a sweep point, after its engine runs: reference (bounded)
 * and ring_limit. */
static int sweep_point_finish(const struct options *o, struct ring_echo_pair *rg,
			      bool progress, const struct engine_run_config *run,
			      struct sweep_point *p, bool *failed)
{
	char note[256];
	p->have_reference = run_reference(run, o->sweep_reference_seconds, progress,
					  &p->reference, note, sizeof(note), failed);
	struct ring_limit_result rl;
	if (measure_ring_limit(o, rg, progress, &rl) < 0)
		return -1;
	p->ring_limit = rl.median;
	return 0;
}

/* One sweep point: one engine run, reference and ring_limit. */
static int sweep_point(const struct options *o, struct ring_echo_pair *rg,
		       bool progress, const char *vary, uint32_t nodes,
		       unsigned workers, struct sweep_point *p, bool *failed)
{
	char phase[32], err[1024];
	struct engine_run_config run =
		sweep_config(o, progress, vary, nodes, workers, phase, sizeof(phase));
	*p = (struct sweep_point){.vary = vary, .running = run.running, .pods = run.pods,
				  .runs = 1};
	if (engine_run(&run, &p->engine, err, sizeof(err)) < 0) {
		fprintf(stderr, "shmsched-bench: sweep %s: engine run: %s\n", phase, err);
		return -1;
	}
	p->engine_min = p->engine_max = p->engine.pods_per_sec;
	return sweep_point_finish(o, rg, progress, &run, p, failed);
}

/* The round whose figure is the median of v[0..n) (the lower middle
 * one for even n: a run's own figure). */
static unsigned median_round(const double *v, unsigned n)
{
	double sorted[SWEEP_MAX_RUNS];
	memcpy(sorted, v, n * sizeof(sorted[0]));
	qsort(sorted, n, sizeof(sorted[0]), cmp_double);
	unsigned k = 0;
	while (k + 1 < n && v[k] != sorted[(n - 1) / 2])
		k++;
	return k;
}

/* The node sweep with R = --sweep-runs above 1: R rounds, each running
 * every point's engine in turn, so that a drift of the machine's speed
 * falls on all points alike. A point's row is its median run's, with
 * its least and greatest pods/s; each round's pods/s of the first point
 * over the last's is kept too. Then each point's reference and
 * ring_limit, once. Fills sweep[0..n). */
static int sweep_nodes_rounds(const struct options *o, struct ring_echo_pair *rg,
			      bool progress, struct sweep_point *sweep, size_t n,
			      struct bench_report *r, bool *failed)
{
	unsigned rounds = o->sweep_runs;
	struct engine_run_result *res = calloc(n * rounds, sizeof(*res));
	struct engine_run_config *run = calloc(n, sizeof(*run));
	char (*phase)[32] = calloc(n, sizeof(*phase));
	int rc = -1;
	if (res == NULL || run == NULL || phase == NULL) {
		fprintf(stderr, "shmsched-bench: sweep: out of memory\n");
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		run[i] = sweep_config(o, progress, "nodes", (uint32_t)o->sweep_nodes[i], 0,
				      phase[i], sizeof(phase[i]));
	char err[1024];
	for (unsigned round = 0; round < rounds; round++) {
		for (size_t i = 0; i < n; i++)
			if (engine_run(&run[i], &res[i * rounds + round], err, sizeof(err)) < 0) {
				fprintf(stderr, "shmsched-bench: sweep %s, round %u of %u: "
					"engine run: %s\n", phase[i], round + 1, rounds, err);
				goto out;
			}
		double last = res[(n - 1) * rounds + round].pods_per_sec;
		if (n >= 2 && last > 0)
			r->sweep_round_ratio[r->n_sweep_rounds++] =
				res[round].pods_per_sec / last;
	}
	if (r->n_sweep_rounds > 0) {
		double ratios[SWEEP_MAX_RUNS];
		memcpy(ratios, r->sweep_round_ratio, r->n_sweep_rounds * sizeof(ratios[0]));
		r->sweep_round_median = median_of(ratios, r->n_sweep_rounds);
	}
	for (size_t i = 0; i < n; i++) {
		double pps[SWEEP_MAX_RUNS];
		struct sweep_point *p = &sweep[i];
		*p = (struct sweep_point){.vary = "nodes", .running = run[i].running,
					  .pods = run[i].pods, .runs = rounds,
					  .engine_min = HUGE_VAL, .engine_max = 0};
		for (unsigned k = 0; k < rounds; k++) {
			pps[k] = res[i * rounds + k].pods_per_sec;
			p->engine_min = fmin(p->engine_min, pps[k]);
			p->engine_max = fmax(p->engine_max, pps[k]);
		}
		p->engine = res[i * rounds + median_round(pps, rounds)];
		if (sweep_point_finish(o, rg, progress, &run[i], p, failed) < 0)
			goto out;
	}
	rc = 0;
out:
	free(phase);
	free(run);
	free(res);
	return rc;
}

static int run_sweeps(const struct options *o, struct ring_echo_pair *rg,
		      bool progress, struct bench_report *r, bool *failed)
{
	uint64_t workers[256];
	size_t n_workers = o->n_sweep_workers;
	if (o->sweep_workers_all) {
		n_workers = r->cores < 256 ? r->cores : 256;
		for (size_t i = 0; i < n_workers; i++)
			workers[i] = i + 1;
	} else {
		memcpy(workers, o->sweep_workers, n_workers * sizeof(workers[0]));
	}
	size_t n = o->n_sweep_nodes + n_workers;
	if (n == 0)
		return 0;
	r->sweep = calloc(n, sizeof(*r->sweep));
	if (r->sweep == NULL) {
		fprintf(stderr, "shmsched-bench: sweep: out of memory\n");
		return -1;
	}
	if (o->sweep_runs > 1 && o->n_sweep_nodes > 0) {
		if (sweep_nodes_rounds(o, rg, progress, r->sweep, o->n_sweep_nodes, r,
				       failed) < 0)
			return -1;
		r->n_sweep = o->n_sweep_nodes;
	}
	for (size_t i = 0; o->sweep_runs == 1 && i < o->n_sweep_nodes; i++, r->n_sweep++)
		if (sweep_point(o, rg, progress, "nodes", (uint32_t)o->sweep_nodes[i],
				0, &r->sweep[r->n_sweep], failed) < 0)
			return -1;
	for (size_t i = 0; i < n_workers; i++, r->n_sweep++)
		if (sweep_point(o, rg, progress, "workers", o->run.nodes,
				(unsigned)workers[i], &r->sweep[r->n_sweep], failed) < 0)
			return -1;
	return 0;
}

/* The fair-share check: one producer's pods on one worker, alone and
 * beside a flood of unique, unschedulable pods from another producer. One
 * worker, so that both producers share it: what the check is about. */
static int run_noisy(const struct options *o, bool progress, struct bench_report *r)
{
	char err[1400];
	struct engine_run_config run = o->run;
	run.pods = o->noisy_pods;
	run.producers = 1;
	run.workers = 1;
	run.rate = 0;
	/* Each run of a pair starts alike: classes compiled, the flood (in
	 * the second) in full flow (engine_run.h). */
	run.settle = true;
	run.slots = NOISY_SLOTS;
	run.progress = progress;
	run.phase = "noisy: alone";
	if (engine_run(&run, &r->noisy_alone, err, sizeof(err)) < 0) {
		fprintf(stderr, "shmsched-bench: noisy, alone: %s\n", err);
		return -1;
	}
	run.noisy = true;
	run.phase = "noisy: beside the flood";
	if (engine_run(&run, &r->noisy_beside, err, sizeof(err)) < 0) {
		fprintf(stderr, "shmsched-bench: noisy, beside the flood: %s\n", err);
		return -1;
	}
	r->have_noisy = true;
	if (o->noisy_rate == 0)
		return 0;
	/* Again at a fixed rate the producer keeps up with alone (half of
	 * what it did closed-loop, by default): fair share should keep its
	 * latency close to alone's, its worker not being its bottleneck. */
	run.rate = o->noisy_rate > 0 ? o->noisy_rate
		   : r->noisy_alone.pods_per_sec / 2;
	if (!(run.rate > 0)) {
		fprintf(stderr, "shmsched-bench: noisy at a rate: the run alone "
			"measured no rate to halve\n");
		return -1;
	}
	r->noisy_rate = run.rate;
	r->noisy_rate_half = o->noisy_rate < 0;
	run.noisy = false;
	run.phase = "noisy: at a rate, alone";
	if (engine_run(&run, &r->noisy_rate_alone, err, sizeof(err)) < 0) {
		fprintf(stderr, "shmsched-bench: noisy at a rate, alone: %s\n", err);
		return -1;
	}
	run.noisy = true;
	run.phase = "noisy: at a rate, beside the flood";
	if (engine_run(&run, &r->noisy_rate_beside, err, sizeof(err)) < 0) {
		fprintf(stderr, "shmsched-bench: noisy at a rate, beside the flood: "
			"%s\n", err);
		return -1;
	}
	r->have_noisy_rate = true;
	return 0;
}

/* The engine's closed-loop run again, node events beside it; compared
 * with r->engine, the run without them. */
static int run_churn(const struct options *o, bool progress, struct bench_report *r)
{
	char err[1400];
	struct engine_run_config run = o->run;
	run.rate = 0;
	run.progress = progress;
	run.phase = "churn";
	run.churn_rate = o->churn_rate;
	if (engine_run(&run, &r->churn, err, sizeof(err)) < 0) {
		fprintf(stderr, "shmsched-bench: churn run: %s\n", err);
		return -1;
	}
	r->churn_rate = o->churn_rate;
	r->have_churn = true;
	return 0;
}

/* The engine's closed-loop run, then the open-loop latency run. */
static int run_engine(const struct options *o, bool progress, struct bench_report *r)
{
	char err[1400];
	struct engine_run_config run = o->run;
	run.progress = progress;
	run.phase = "engine";
	if (engine_run(&run, &r->engine, err, sizeof(err)) < 0) {
		fprintf(stderr, "shmsched-bench: engine run: %s\n", err);
		return -1;
	}
	r->have_engine = true;
	if (!o->latency)
		return 0;
	run.rate = o->rate_half ? r->engine.pods_per_sec / 2 : o->rate;
	r->latency_rate_from = o->rate_half ? "half of the engine's" : "--rate";
	if (!(run.rate > 0)) {
		fprintf(stderr, "shmsched-bench: latency: skipped: the engine run "
			"measured no rate to halve\n");
		return 0;
	}
	run.pods = o->latency_pods ? o->latency_pods
		   : (o->run.pods / 5 < 100000 ? o->run.pods / 5 : 100000);
	run.pods = run.pods ? run.pods : 1;
	/* Half a second of the machine's own pauses first: the floor under
	 * the percentiles below (no daemon runs now). */
	r->have_pauses = pauses_measure(500, &r->pauses) == 0;
	run.phase = "latency";
	run.watch_others = true;
	if (engine_run(&run, &r->latency, err, sizeof(err)) < 0) {
		fprintf(stderr, "shmsched-bench: latency run: %s\n", err);
		return -1;
	}
	r->have_latency = true;
	return 0;
}

int main(int argc, char **argv)
{
	/* --trace selects the trace replay, with options of its own. */
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--trace") == 0 || strncmp(argv[i], "--trace=", 8) == 0)
			return trace_main(argc, argv);
	struct options o;
	int rc = parse_args(argc, argv, &o);
	if (rc)
		return rc;
	/* The daemon runs in this process: its start-up lines are not the
	 * report. SHMSCHED_LOG=info shows them. */
	if (getenv("SHMSCHED_LOG") == NULL)
		log_set_level(LOG_LEVEL_WARN);
	bool progress = o.progress < 0 ? isatty(STDERR_FILENO) : o.progress == 1;

	static struct bench_report r;
	r = (struct bench_report){.nodes = o.run.nodes, .running = o.run.running,
				  .pods = o.run.pods, .seed = o.run.seed,
				  .producers = o.run.producers, .workers = o.run.workers,
				  .cluster_path = o.run.cluster_path,
				  .workload = o.workload_path,
				  .reference_seconds = o.reference_seconds,
				  .syscalls_per_pod = -1};
	machine_info(&r);
	char err[1400];
	struct workload w;
	if (o.engine) {
		rc = o.workload_path ? workload_load(&w, o.workload_path, err, sizeof(err))
				     : workload_default(&w, o.run.seed, err, sizeof(err));
		if (rc < 0) {
			fprintf(stderr, "shmsched-bench: --workload: %s\n", err);
			return 2;
		}
		w.seed = o.run.seed;
		o.run.w = &w;
		r.templates = w.n_templates;
	}

	struct ring_echo_pair rg;
	rc = ring_echo_pair_create(o.ring_slots, 0, &rg);
	if (rc < 0) {
		fprintf(stderr, "shmsched-bench: cannot create the rings: %s\n",
			strerror(-rc));
		return 1;
	}
	if (measure_ring_limit(&o, &rg, progress, &r.ring) < 0)
		return 1;
	bool failed = false; /* a baseline failed: the report says so, exit 1 */
	snprintf(r.reference_note, sizeof(r.reference_note), "--no-reference");
	snprintf(r.quality_note, sizeof(r.quality_note), "--no-quality");
	if (o.engine) {
		if (run_engine(&o, progress, &r) < 0)
			return 1;
		if (o.noisy_pods > 0 && run_noisy(&o, progress, &r) < 0)
			return 1;
		if (o.churn_rate > 0 && run_churn(&o, progress, &r) < 0)
			return 1;
		if (o.reference)
			r.have_reference = run_reference(&o.run, o.reference_seconds,
							 progress, &r.reference,
							 r.reference_note,
							 sizeof(r.reference_note), &failed);
		if (o.quality)
			r.have_quality = run_quality(&o, progress, &r.quality,
						     r.quality_note,
						     sizeof(r.quality_note), &failed);
		if (o.syscalls &&
		    measure_syscalls(&o.run, &r.syscalls_per_pod, err, sizeof(err)) < 0) {
			fprintf(stderr, "shmsched-bench: --syscalls: %s\n", err);
			return 1;
		}
		if (run_sweeps(&o, &rg, progress, &r, &failed) < 0)
			return 1;
	} else {
		snprintf(r.reference_note, sizeof(r.reference_note), "--ring-limit-only");
		snprintf(r.quality_note, sizeof(r.quality_note), "--ring-limit-only");
	}
	if (o.json)
		report_json(stdout, &r);
	else
		report_table(stdout, &r);
	fflush(stdout);
	if (o.plot_dir != NULL) {
		char note[512];
		if (plot_write(o.plot_dir, &r, note, sizeof(note), err, sizeof(err)) < 0) {
			fprintf(stderr, "shmsched-bench: %s\n", err);
			failed = true;
		} else {
			fprintf(stderr, "shmsched-bench: %s\n", note);
		}
	}
	free(r.sweep);
	if (o.engine)
		workload_free(&w);
	ring_echo_pair_close(&rg);
	return failed ? 1 : 0;
}
