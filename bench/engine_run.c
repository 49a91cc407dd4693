/* Pods per second through the real path: see engine_run.h.
 *
 * The producers are forked before the daemon starts any thread (a fork of
 * a threaded process is unsafe), wait on a flag in shared memory, then
 * connect. Each registers the same TEMPLATES templates (a deployment-like
 * mix: requests from 100m/128Mi to 2 cpu/2Gi, a share with a zone
 * nodeSelector, with required affinity on a cores label, with preferred
 * affinity on instance types, with tolerations for the dedicated pools),
 * submits its share round-robin over them in bursts as room allows, and
 * records each answer's submit-to-answer time in a log-linear histogram in
 * shared memory. Closed loop: every producer keeps its region full, so the
 * latencies include queueing. A producer with no answer to read sleeps 20 µs
 * rather than spin, leaving the cores to the daemon's workers.
 */
#include "bench/engine_run.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/daemon.h"
#include "shmsched/client.h"

#define TEMPLATES 40
#define MAX_PRODUCERS 64
/* Latency histogram: 64 powers of two of nanoseconds, 16 linear steps each. */
#define HIST_SUB 16
#define HIST_BUCKETS (64 * HIST_SUB)

struct producer_report {
	uint64_t answered, placed, unschedulable, rejected, cancelled;
	uint64_t first_submit_ns, last_answer_ns;
	uint64_t hist[HIST_BUCKETS];
	int error;
	char why[600];
};

struct shared {
	int go;   /* __atomic: released by the parent when the daemon listens */
	int quit; /* __atomic: the parent gave up */
	struct producer_report r[MAX_PRODUCERS];
};

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static unsigned bucket_of(uint64_t ns)
{
	if (ns < HIST_SUB)
		return (unsigned)ns;
	unsigned log2 = 63u - (unsigned)__builtin_clzll(ns);
	unsigned sub = (unsigned)((ns >> (log2 - 4)) & (HIST_SUB - 1));
	return log2 * HIST_SUB + sub;
}

static double bucket_ns(unsigned b)
{
	if (b < HIST_SUB)
		return b;
	unsigned log2 = b / HIST_SUB, sub = b % HIST_SUB;
	return (double)(UINT64_C(1) << log2) * (1.0 + (sub + 0.5) / HIST_SUB);
}

/* Template k of the mix, as Pod JSON. */
static int template_json(unsigned k, char *buf, size_t len)
{
	static const char *const cpu[] = {"100m", "250m", "500m", "1", "2"};
	static const char *const mem[] = {"128Mi", "256Mi", "512Mi", "1Gi", "2Gi"};
	static const char *const zones[] = {"zone-a", "zone-b", "zone-c"};
	static const char *const types[] = {"m.4xlarge", "r.16xlarge", "c.8xlarge"};
	static const char *const pools[] = {"gpu", "batch", "infra"};
	static const char *const effects[] = {"NoSchedule", "NoSchedule", "NoExecute"};
	char extra[512] = "";
	switch (k % 10) {
	case 1:
	case 2:
		snprintf(extra, sizeof(extra), ",\"nodeSelector\":{"
			 "\"topology.kubernetes.io/zone\":\"%s\"}", zones[k % 3]);
		break;
	case 3:
		snprintf(extra, sizeof(extra), ",\"affinity\":{\"nodeAffinity\":{"
			 "\"requiredDuringSchedulingIgnoredDuringExecution\":{"
			 "\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":"
			 "\"cores\",\"operator\":\"Gt\",\"values\":[\"%d\"]}]}]}}}",
			 8 << (k % 3));
		break;
	case 4:
		snprintf(extra, sizeof(extra), ",\"affinity\":{\"nodeAffinity\":{"
			 "\"preferredDuringSchedulingIgnoredDuringExecution\":[{"
			 "\"weight\":%u,\"preference\":{\"matchExpressions\":[{\"key\":"
			 "\"node.kubernetes.io/instance-type\",\"operator\":\"In\","
			 "\"values\":[\"%s\"]}]}}]}}", 10 + k, types[k % 3]);
		break;
	case 5:
		snprintf(extra, sizeof(extra), ",\"tolerations\":[{\"key\":"
			 "\"dedicated\",\"operator\":\"Equal\",\"value\":\"%s\","
			 "\"effect\":\"%s\"}],\"nodeSelector\":{\"pool\":\"%s\"}",
			 pools[k % 3], effects[k % 3], pools[k % 3]);
		break;
	default:
		break;
	}
	return snprintf(buf, len, "{\"kind\":\"Pod\",\"metadata\":{\"name\":"
			"\"deploy-%u\"},\"spec\":{\"containers\":[{\"name\":\"app\","
			"\"resources\":{\"requests\":{\"cpu\":\"%s\",\"memory\":"
			"\"%s\"}}}]%s}}", k, cpu[k % 5], mem[(k / 5) % 5], extra);
}

static void fail(struct producer_report *r, const char *what, const char *err)
{
	r->error = 1;
	snprintf(r->why, sizeof(r->why), "%s: %s", what, err);
}

static void producer(struct shared *sh, unsigned id, const char *sock,
		     uint64_t pods)
{
	struct producer_report *r = &sh->r[id];
	char err[512], json[1024];
	while (!__atomic_load_n(&sh->go, __ATOMIC_ACQUIRE)) {
		if (__atomic_load_n(&sh->quit, __ATOMIC_RELAXED))
			_exit(1);
		usleep(1000);
	}
	struct shmsched_client *c = shmsched_connect(sock, err, sizeof(err));
	if (c == NULL) {
		fail(r, "connect", err);
		_exit(1);
	}
	uint32_t tid[TEMPLATES];
	for (unsigned k = 0; k < TEMPLATES; k++) {
		int len = template_json(k, json, sizeof(json));
		if (shmsched_register_template(c, json, (size_t)len, &tid[k], err,
					       sizeof(err)) < 0) {
			fail(r, "template", err);
			_exit(1);
		}
	}
	struct shmsched_pod batch[256];
	static struct shmsched_result res[256];
	uint64_t next = 0;
	r->first_submit_ns = now_ns();
	while (r->answered < pods) {
		if (next < pods) {
			unsigned n = 0;
			for (; n < 256 && next + n < pods; n++)
				batch[n] = (struct shmsched_pod){
					.cookie = next + n,
					.template_id = tid[(next + n) % TEMPLATES]};
			int acc = shmsched_submit(c, batch, n);
			if (acc > 0)
				next += (unsigned)acc;
		}
		int got = shmsched_poll(c, res, 256);
		if (got < 0) {
			fail(r, "poll", strerror(-got));
			break;
		}
		for (int k = 0; k < got; k++) {
			r->answered++;
			r->placed += res[k].status == SHMSCHED_PLACED;
			r->unschedulable += res[k].status == SHMSCHED_UNSCHEDULABLE;
			r->rejected += res[k].status == SHMSCHED_REJECTED;
			r->cancelled += res[k].status == SHMSCHED_CANCELLED;
			r->hist[bucket_of(res[k].complete_ns - res[k].submit_ns)]++;
		}
		if (got > 0) {
			r->last_answer_ns = now_ns();
		} else {
			/* Nothing back yet: give the core to the daemon's workers
			 * (on a small machine they share it) rather than spin. */
			struct timespec pause = {.tv_nsec = 20000};
			nanosleep(&pause, NULL);
		}
	}
	shmsched_disconnect(c);
	_exit(r->error ? 1 : 0);
}

static double percentile(const uint64_t *hist, uint64_t total, double q)
{
	uint64_t want = (uint64_t)(q * (double)total), seen = 0;
	for (unsigned b = 0; b < HIST_BUCKETS; b++) {
		seen += hist[b];
		if (seen > want)
			return bucket_ns(b) / 1000.0;
	}
	return 0;
}

/* The daemon as a child: strace -f -c -o OUT shmschedd ..., waiting for its
 * socket to appear. */
static int start_child(const struct engine_run_config *cfg, const char *sock,
		       pid_t *child, char *err, size_t err_len)
{
	char nodes[64], workers[16], seed[32];
	snprintf(nodes, sizeof(nodes), "%u:%u", cfg->nodes, cfg->running);
	snprintf(workers, sizeof(workers), "%u", cfg->workers);
	snprintf(seed, sizeof(seed), "%" PRIu64, cfg->seed);
	const char *argv[] = {"strace", "-f", "-c", "-o", cfg->strace_out,
			      cfg->daemon_exe, "--synthetic", nodes, "--socket",
			      sock, "--seed", seed,
			      cfg->workers ? "--workers" : NULL, workers, NULL};
	fflush(NULL);
	*child = fork();
	if (*child < 0) {
		snprintf(err, err_len, "fork: %s", strerror(errno));
		return -errno;
	}
	if (*child == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		int null = open("/dev/null", O_WRONLY);
		dup2(null, STDOUT_FILENO);
		dup2(null, STDERR_FILENO);
		/* execvp takes char *const[]; it does not write the strings. */
		execvp("strace", (char *const *)argv);
		_exit(127);
	}
	for (int i = 0; i < 600; i++) { /* up to 60 s for a big cluster */
		struct stat st;
		if (stat(sock, &st) == 0)
			return 0;
		int status;
		if (waitpid(*child, &status, WNOHANG) == *child) {
			snprintf(err, err_len, "strace %s exited before the daemon was "
				 "ready (is strace installed?)", cfg->daemon_exe);
			*child = -1;
			return -ECHILD;
		}
		usleep(100000);
	}
	snprintf(err, err_len, "%s: no socket after 60 s", cfg->daemon_exe);
	return -ETIMEDOUT;
}

/* Stops the child daemon (SIGTERM to shmschedd, strace's child) and reads
 * the total of strace's summary. */
static int stop_child(const struct engine_run_config *cfg, pid_t child,
		      uint64_t *calls, char *err, size_t err_len)
{
	char cmd[64];
	snprintf(cmd, sizeof(cmd), "pkill -TERM -P %d", (int)child);
	if (system(cmd) != 0)
		kill(child, SIGTERM);
	int status;
	waitpid(child, &status, 0);
	FILE *f = fopen(cfg->strace_out, "r");
	if (f == NULL) {
		snprintf(err, err_len, "%s: %s", cfg->strace_out, strerror(errno));
		return -errno;
	}
	char line[256];
	*calls = 0;
	while (fgets(line, sizeof(line), f) != NULL) {
		/* "100.00    0.012345           3      1045        12 total" */
		double pct, secs;
		unsigned long long usecs, n;
		if (strstr(line, " total") != NULL &&
		    sscanf(line, "%lf %lf %llu %llu", &pct, &secs, &usecs, &n) == 4)
			*calls = n;
	}
	fclose(f);
	return 0;
}

int engine_run(const struct engine_run_config *cfg, struct engine_run_result *out,
	       char *err, size_t err_len)
{
	memset(out, 0, sizeof(*out));
	if (cfg->producers == 0 || cfg->producers > MAX_PRODUCERS || cfg->pods == 0) {
		snprintf(err, err_len, "--producers must be 1..%d and --pods > 0",
			 MAX_PRODUCERS);
		return -EINVAL;
	}
	struct shared *sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
				 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED) {
		snprintf(err, err_len, "mmap: %s", strerror(errno));
		return -ENOMEM;
	}
	memset(sh, 0, sizeof(*sh));
	char dir[] = "/tmp/shmsched-bench-XXXXXX", sock[64];
	if (mkdtemp(dir) == NULL) {
		snprintf(err, err_len, "mkdtemp: %s", strerror(errno));
		munmap(sh, sizeof(*sh));
		return -errno;
	}
	snprintf(sock, sizeof(sock), "%s/s.sock", dir);

	pid_t pids[MAX_PRODUCERS];
	for (unsigned i = 0; i < cfg->producers; i++) {
		uint64_t share = cfg->pods / cfg->producers +
				 (i < cfg->pods % cfg->producers);
		fflush(NULL);
		pids[i] = fork();
		if (pids[i] == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			producer(sh, i, sock, share);
		}
	}
	struct daemon *d = NULL;
	pid_t child = -1;
	int rc = 0;
	if (cfg->daemon_exe != NULL) {
		rc = start_child(cfg, sock, &child, err, err_len);
	} else {
		struct daemon_config dc = {.socket_path = sock,
					   .synthetic_nodes = cfg->nodes,
					   .synthetic_running = cfg->running,
					   .seed = cfg->seed, .workers = cfg->workers,
					   .pin = true, .slots = 4096};
		d = daemon_start(&dc, err, err_len);
		if (d == NULL)
			rc = -EINVAL;
	}
	if (rc < 0)
		__atomic_store_n(&sh->quit, 1, __ATOMIC_RELAXED);
	else
		__atomic_store_n(&sh->go, 1, __ATOMIC_RELEASE);
	unsigned left = cfg->producers;
	int status[MAX_PRODUCERS];
	while (left > 0) {
		for (unsigned i = 0; i < cfg->producers; i++) {
			if (pids[i] <= 0)
				continue;
			if (waitpid(pids[i], &status[i], WNOHANG) == pids[i]) {
				pids[i] = 0;
				left--;
			}
		}
		if (cfg->progress && rc == 0) {
			uint64_t answered = 0;
			for (unsigned i = 0; i < cfg->producers; i++)
				answered += __atomic_load_n(&sh->r[i].answered,
							    __ATOMIC_RELAXED);
			fprintf(stderr, "\rengine: %" PRIu64 "/%" PRIu64 " pods answered",
				answered, cfg->pods);
		}
		usleep(20000);
	}
	if (cfg->progress)
		fprintf(stderr, "\r%60s\r", "");
	if (d != NULL) {
		out->overcommits = daemon_overcommits(d);
		struct daemon_stats ds;
		daemon_stop(d, 5000, &ds);
		out->conflicts = ds.conflicts;
		out->workers = ds.workers;
		out->nodes = ds.nodes;
	}
	if (child > 0 && stop_child(cfg, child, &out->syscalls, err, err_len) < 0 &&
	    rc == 0)
		rc = -EIO;
	static uint64_t hist[HIST_BUCKETS];
	memset(hist, 0, sizeof(hist));
	uint64_t first = UINT64_MAX, last = 0;
	for (unsigned i = 0; i < cfg->producers; i++) {
		struct producer_report *r = &sh->r[i];
		if (rc == 0 && (r->error || !WIFEXITED(status[i]) ||
				WEXITSTATUS(status[i]) != 0)) {
			snprintf(err, err_len, "producer %u: %s", i,
				 r->error ? r->why : "exited abnormally");
			rc = -EIO;
		}
		out->answered += r->answered;
		out->placed += r->placed;
		out->unschedulable += r->unschedulable;
		out->rejected += r->rejected;
		out->cancelled += r->cancelled;
		if (r->first_submit_ns && r->first_submit_ns < first)
			first = r->first_submit_ns;
		if (r->last_answer_ns > last)
			last = r->last_answer_ns;
		for (unsigned b = 0; b < HIST_BUCKETS; b++)
			hist[b] += r->hist[b];
	}
	out->pods = cfg->pods;
	out->templates = TEMPLATES;
	out->wall_s = last > first ? (double)(last - first) / 1e9 : 0;
	out->pods_per_sec = out->wall_s > 0 ? (double)out->answered / out->wall_s : 0;
	out->p50_us = percentile(hist, out->answered, 0.50);
	out->p90_us = percentile(hist, out->answered, 0.90);
	out->p99_us = percentile(hist, out->answered, 0.99);
	out->p999_us = percentile(hist, out->answered, 0.999);
	munmap(sh, sizeof(*sh));
	rmdir(dir);
	return rc;
}
