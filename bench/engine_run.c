/* Pods per second through the real path: see engine_run.h.
 *
 * The producers are forked before the daemon starts any thread (a fork of
 * a threaded process is unsafe), wait on a flag in shared memory, then
 * connect, register every template of the workload (the daemon checks each
 * pod; a refusal is reported naming the pod) and look up the resources of
 * per-pod extras. When all are ready the parent publishes a common start
 * time; producer i then submits pods i, i+K, i+2K, ... of the stream
 * (workload_pod(), a pure function of the pod's index) and records each
 * answer's latency in a log-linear histogram in shared memory.
 *
 * Closed loop: every producer keeps its region full; a producer with no
 * answer to read sleeps 20 µs rather than spin, leaving the cores to the
 * daemon's workers. Open loop: pod k is due at start + k/rate; a producer
 * busy-polls (sleeping would add its wake-up time to every latency),
 * submits what is due, and latency runs from the due time, so back-pressure
 * from a full region shows as latency.
 */
#include "bench/engine_run.h"
#include "base/base.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench/progress.h"
#include "bench/workload.h"
#include "daemon/daemon.h"
#include "shmsched/client.h"

#define MAX_PRODUCERS 64
#define BATCH 256
#define LATE_NS 1000000u

struct producer_report {
	uint64_t answered; /* __atomic relaxed store by the producer; the
			    * parent reads it (relaxed) for progress only */
	uint64_t placed, unschedulable, rejected, cancelled, late;
	uint64_t last_answer_ns;
	uint64_t hist[HIST_BUCKETS];
	uint64_t seen_hist[HIST_BUCKETS]; /* the same, to this producer's poll */
	int error;
	char why[1200];
};

/* Written by the parent and the producers, in shared memory. Edges:
 * G: the parent's release store of go, after the daemon listens, pairs
 *    with the producers' acquire loads before they connect.
 * R: each producer's release increment of ready, after its set-up (and
 *    its error report, if any), pairs with the parent's acquire load.
 * S: the parent's release store of start_ns pairs with the producers'
 *    acquire loads before the first submit.
 * F: with settle, the parent's release store of flood_go pairs with the
 *    noisy producer's acquire load before its first submit.
 * The reports are read by the parent only after waitpid(), which orders
 * them. */
struct shared {
	int go;
	int quit; /* relaxed both sides: a plain stop request, no data with it */
	int noisy_stop; /* relaxed, as quit: the flood ends */
	int flood_go; /* F: with settle, the flood begins */
	uint64_t noisy_submitted; /* relaxed, the flood's: pods it submitted */
	int churn_stop; /* relaxed, as quit: node events end */
	uint64_t churn_events; /* written by the churn process; read after waitpid */
	uint64_t churn_failed;
	char churn_why[512];
	unsigned ready;
	uint64_t start_ns;
	struct producer_report r[MAX_PRODUCERS];
	struct producer_report noisy;
};

double engine_run_bucket_ns(unsigned b)
{
	return hist_bucket_ns(b);
}

double engine_run_bucket_upper_ns(unsigned b)
{
	return hist_bucket_upper_ns(b);
}

double engine_run_percentile_us(const uint64_t *hist, double q)
{
	return hist_percentile_ns(hist, q) / 1000.0;
}

__attribute__((format(printf, 2, 3)))
static void fail(struct producer_report *r, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	r->error = 1;
	vsnprintf(r->why, sizeof(r->why), fmt, ap);
	va_end(ap);
}

/* Connects, registers the templates, looks up the extras' resources. */
static struct shmsched_client *producer_setup(const struct engine_run_config *cfg,
					      struct producer_report *r,
					      const char *sock, uint32_t *tid,
					      uint32_t *res_index)
{
	const struct workload *w = cfg->w;
	char err[600];
	struct shmsched_client *c;
	if (shmsched_connect(sock, &c, err, sizeof(err)) < 0) {
		fail(r, "connect: %s", err);
		return NULL;
	}
	for (uint32_t t = 0; t < w->n_templates; t++) {
		if (shmsched_register_template(c, w->template_json[t],
					       w->template_len[t], &tid[t], err,
					       sizeof(err)) < 0) {
			fail(r, "%s: pod %s: the daemon refused it: %s", w->source,
			     w->template_name[t], err);
			goto fail_registered;
		}
	}
	if (w->unique_share > 0) {
		static const char *const names[] = {"cpu", "memory"};
		for (unsigned i = 0; i < 2; i++)
			if (shmsched_resource(c, names[i], &res_index[i], err,
					      sizeof(err)) < 0) {
				fail(r, "resource %s: %s", names[i], err);
				goto fail_registered;
			}
	}
	return c;

fail_registered:
	shmsched_disconnect(c);
	return NULL;
}

static void fill_pod(const struct engine_run_config *cfg, const uint32_t *tid,
		     const uint32_t *res_index, uint64_t k, struct shmsched_pod *p)
{
	struct workload_pod wp;
	workload_pod(cfg->w, k, &wp);
	*p = (struct shmsched_pod){.cookie = k, .template_id = tid[wp.template_idx],
				   .n_extra = wp.n_extra};
	for (unsigned e = 0; e < wp.n_extra && e < SHMSCHED_MAX_EXTRA; e++)
		p->extra[e] = (struct shmsched_extra){
			.resource = res_index[wp.extra[e].resource],
			.quantity = wp.extra[e].amount};
}

/* A child's wait for the parent's go (G); it leaves (_exit 1) if the
 * parent gave up first (quit). */
static void await_go(struct shared *sh)
{
	while (!__atomic_load_n(&sh->go, __ATOMIC_ACQUIRE)) { /* G */
		if (__atomic_load_n(&sh->quit, __ATOMIC_RELAXED))
			_exit(1);
		usleep(1000);
	}
}

static void producer(const struct engine_run_config *cfg, struct shared *sh,
		     unsigned id, const char *sock)
{
	struct producer_report *r = &sh->r[id];
	uint64_t share = cfg->pods / cfg->producers + (id < cfg->pods % cfg->producers);
	await_go(sh);
	uint32_t *tid = calloc(cfg->w->n_templates, sizeof(*tid));
	uint32_t res_index[2] = {0, 0};
	struct shmsched_client *c = NULL;
	if (tid == NULL)
		fail(r, "out of memory");
	else
		c = producer_setup(cfg, r, sock, tid, res_index);
	__atomic_add_fetch(&sh->ready, 1, __ATOMIC_RELEASE); /* R */
	if (c == NULL)
		_exit(1);
	uint64_t start;
	while ((start = __atomic_load_n(&sh->start_ns, __ATOMIC_ACQUIRE)) == 0) { /* S */
		if (__atomic_load_n(&sh->quit, __ATOMIC_RELAXED))
			_exit(1);
		usleep(100);
	}
	bool open_loop = cfg->rate > 0;
	double ns_per_pod = open_loop ? 1e9 / cfg->rate : 0;
	while (now_ns() < start)
		;
	/* batch[0..filled) are pods next, next+1, ... (this producer's j:
	 * pod id + j*K), built once and kept until the region takes them. */
	struct shmsched_pod batch[BATCH];
	static struct shmsched_result res[BATCH];
	uint64_t next = 0, answered = 0;
	unsigned filled = 0;
	while (answered < share) {
		uint64_t now = now_ns();
		for (; filled < BATCH && next + filled < share; filled++) {
			uint64_t k = id + (next + filled) * cfg->producers;
			if (open_loop && start + (uint64_t)((double)k * ns_per_pod) > now)
				break; /* not due yet */
			fill_pod(cfg, tid, res_index, k, &batch[filled]);
		}
		if (filled > 0) {
			int acc = shmsched_submit(c, batch, filled);
			if (acc < 0) {
				fail(r, "submit: %s", strerror(-acc));
				break;
			}
			for (int i = 0; open_loop && i < acc; i++) {
				uint64_t due = start + (uint64_t)((double)batch[i].cookie *
								  ns_per_pod);
				r->late += now - due > LATE_NS;
			}
			filled -= (unsigned)acc;
			memmove(batch, batch + acc, filled * sizeof(batch[0]));
			next += (unsigned)acc;
		}
		int got = shmsched_poll(c, res, BATCH);
		if (got < 0) {
			fail(r, "poll: %s", strerror(-got));
			break;
		}
		/* The answer's own time is the daemon's; a client has it only
		 * once the daemon hands it back and its poll finds it. */
		uint64_t seen = got > 0 ? now_ns() : 0;
		for (int i = 0; i < got; i++) {
			r->placed += res[i].status == SHMSCHED_PLACED;
			r->unschedulable += res[i].status == SHMSCHED_UNSCHEDULABLE;
			r->rejected += res[i].status == SHMSCHED_REJECTED;
			r->cancelled += res[i].status == SHMSCHED_CANCELLED;
			uint64_t from = open_loop
				? start + (uint64_t)((double)res[i].cookie * ns_per_pod)
				: res[i].submit_ns;
			uint64_t lat = res[i].complete_ns > from ? res[i].complete_ns - from : 0;
			r->hist[hist_bucket(lat)]++;
			r->seen_hist[hist_bucket(seen > from ? seen - from : 0)]++;
		}
		if (got > 0) {
			answered += (unsigned)got;
			/* Relaxed: the parent only shows it; waitpid orders the rest. */
			__atomic_store_n(&r->answered, answered, __ATOMIC_RELAXED);
			r->last_answer_ns = seen;
		} else if (!open_loop) {
			/* Nothing back yet: give the core to the daemon's workers
			 * (on a small machine they share it) rather than spin. */
			struct timespec pause = {.tv_nsec = 20000};
			nanosleep(&pause, NULL);
		}
	}
	shmsched_disconnect(c);
	_exit(r->error ? 1 : 0);
}

/* The noisy producer: one template, and every pod made unique and
 * unschedulable by an extra cpu request no node can hold (a million cores
 * and then some), so each costs the daemon a scan over every node. It
 * keeps its region full from flood_go (with settle; else from the
 * common start) until told to stop. With settle the parent starts the
 * counted producers once the flood has answers (its first pods, which
 * teach the daemon their cost, are then no part of the run), so that
 * they meet it in full flow whatever the scheduler ran first (under
 * chrt -f a spinning worker and a busy-polling producer may leave it no
 * core at the start). */
static void noisy_producer(struct shared *sh, const char *sock)
{
	static const char pod[] =
		"{\"kind\":\"Pod\",\"metadata\":{\"name\":\"noisy\"},\"spec\":"
		"{\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":"
		"{\"cpu\":\"1\"}}}]}}";
	struct producer_report *r = &sh->noisy;
	await_go(sh);
	char err[600];
	struct shmsched_client *c;
	uint32_t tid, cpu;
	if (shmsched_connect_named(sock, "noisy", &c, err, sizeof(err)) < 0 ||
	    shmsched_register_template(c, pod, sizeof(pod) - 1, &tid, err,
				       sizeof(err)) < 0 ||
	    shmsched_resource(c, "cpu", &cpu, err, sizeof(err)) < 0) {
		fail(r, "noisy producer: %s", err);
		_exit(1);
	}
	while (!__atomic_load_n(&sh->flood_go, __ATOMIC_ACQUIRE) && /* F */
	       __atomic_load_n(&sh->start_ns, __ATOMIC_ACQUIRE) == 0) { /* S */
		if (__atomic_load_n(&sh->quit, __ATOMIC_RELAXED))
			_exit(1);
		usleep(100);
	}
	static struct shmsched_result res[BATCH];
	struct shmsched_pod batch[BATCH];
	uint64_t k = 0;
	while (!__atomic_load_n(&sh->noisy_stop, __ATOMIC_RELAXED) &&
	       !__atomic_load_n(&sh->quit, __ATOMIC_RELAXED)) {
		for (unsigned i = 0; i < BATCH; i++)
			batch[i] = (struct shmsched_pod){
				.cookie = k + i, .template_id = tid, .n_extra = 1,
				.extra = {{.resource = cpu,
					   .quantity = INT64_C(1000000000) + (int64_t)(k + i)}}};
		int acc = shmsched_submit(c, batch, BATCH);
		if (acc > 0) {
			k += (unsigned)acc;
			/* Relaxed: the parent waits on it for the region to fill. */
			__atomic_store_n(&sh->noisy_submitted, k, __ATOMIC_RELAXED);
		}
		int got = shmsched_poll(c, res, BATCH);
		if (got > 0)
			__atomic_store_n(&r->answered, r->answered + (unsigned)got,
					 __ATOMIC_RELAXED);
		/* Its pods are slow to answer: poll gently, leaving the cores
		 * to the daemon and the counted producer. */
		if (acc <= 0 && got <= 0)
			usleep(1000);
	}
	shmsched_disconnect(c);
	_exit(0);
}

/* Node churn: from the common start until told to stop, node events at
 * `rate` per second through the admin socket, as an operator's tools send
 * them: cordon a node, and uncordon it at the next event, a different
 * node each time (node-0, node-1, ... of the synthetic cluster), so the
 * cluster stays as it was on average. */
static void churn_process(struct shared *sh, const char *admin_sock, double rate,
			  uint32_t nodes)
{
	await_go(sh);
	char err[400];
	struct shmsched_client *c;
	if (shmsched_connect(admin_sock, &c, err, sizeof(err)) < 0) {
		snprintf(sh->churn_why, sizeof(sh->churn_why), "churn: %s", err);
		_exit(1);
	}
	uint64_t start;
	while ((start = __atomic_load_n(&sh->start_ns, __ATOMIC_ACQUIRE)) == 0) { /* S */
		if (__atomic_load_n(&sh->quit, __ATOMIC_RELAXED))
			_exit(1);
		usleep(100);
	}
	uint64_t k = 0;
	char name[32];
	while (!__atomic_load_n(&sh->churn_stop, __ATOMIC_RELAXED) &&
	       !__atomic_load_n(&sh->quit, __ATOMIC_RELAXED)) {
		uint64_t due = start + (uint64_t)((double)k * 1e9 / rate);
		uint64_t now = now_ns();
		if (now < due) {
			uint64_t wait_us = (due - now) / 1000;
			usleep(wait_us > 10000 ? 10000 : (useconds_t)wait_us + 1);
			continue;
		}
		/* Event 2i cordons node i, 2i + 1 uncordons it. */
		snprintf(name, sizeof(name), "node-%u", (uint32_t)((k / 2) % nodes));
		int rc = shmsched_node_event(c, k % 2 ? SHMSCHED_NODE_UNCORDON
						      : SHMSCHED_NODE_CORDON,
					     name, strlen(name), err, sizeof(err));
		if (rc < 0) {
			sh->churn_failed++;
			snprintf(sh->churn_why, sizeof(sh->churn_why), "churn: %s", err);
		} else {
			sh->churn_events++;
		}
		k++;
	}
	shmsched_disconnect(c);
	_exit(0);
}

/* Room for every pod of the run, none of which is released, and the
 * running pods: the daemon records each placement and each bound pod
 * (DAEMON_MAX_PLACEMENTS when that is enough). */
static uint32_t max_placements(const struct engine_run_config *cfg)
{
	uint64_t want = cfg->pods + (uint64_t)cfg->running + 1024;
	return want <= DAEMON_MAX_PLACEMENTS ? DAEMON_MAX_PLACEMENTS
	       : want >= UINT32_MAX - 1 ? UINT32_MAX - 1 : (uint32_t)want;
}

/* The daemon as a child: strace -f -c -o OUT shmschedd ..., waiting for its
 * socket to appear. */
static int start_child(const struct engine_run_config *cfg, const char *sock,
		       pid_t *child, char *err, size_t err_len)
{
	char nodes[64], workers[16], seed[32], placements[16];
	snprintf(nodes, sizeof(nodes), "%u:%u", cfg->nodes, cfg->running);
	snprintf(workers, sizeof(workers), "%u", cfg->workers);
	snprintf(seed, sizeof(seed), "%" PRIu64, cfg->seed);
	snprintf(placements, sizeof(placements), "%u", max_placements(cfg));
	const char *argv[] = {"strace", "-f", "-c", "-o", cfg->strace_out,
			      cfg->daemon_exe,
			      cfg->cluster_path ? "--cluster" : "--synthetic",
			      cfg->cluster_path ? cfg->cluster_path : nodes, "--socket",
			      sock, "--seed", seed, "--max-placements", placements,
			      "--ephemeral",
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

/* The fair share's figure (daemon_identity_times): worker time spent on
 * the pods of the noisy producer's identity (named "noisy") into *noisy,
 * and on every other identity's (the counted producers') into *counted. */
static void identity_times(struct daemon *d, uint64_t *counted, uint64_t *noisy)
{
	struct daemon_identity_time t[MAX_PRODUCERS + 8];
	unsigned n = daemon_identity_times(d, t, MAX_PRODUCERS + 8);
	*counted = *noisy = 0;
	for (unsigned i = 0; i < n && i < MAX_PRODUCERS + 8; i++) {
		if (strcmp(t[i].name, "noisy") == 0)
			*noisy += t[i].worker_ns;
		else
			*counted += t[i].worker_ns;
	}
}

/* Waits until every producer has set up (or one failed) and, with the
 * flood, until it has answers (reading its figure then into
 * *noisy_ns_at_start, at *read_ns), then publishes the start time.
 * Returns 0, or -EIO when a producer failed or exited. */
static int release_producers(const struct engine_run_config *cfg, struct shared *sh,
			     const pid_t *pids, pid_t noisy, struct daemon *d,
			     uint64_t *noisy_ns_at_start, uint64_t *read_ns,
			     struct others_window **others)
{
	while (__atomic_load_n(&sh->ready, __ATOMIC_ACQUIRE) < cfg->producers) { /* R */
		for (unsigned i = 0; i < cfg->producers; i++) {
			/* WNOWAIT: the caller reaps it and reads its status. */
			siginfo_t info = {0};
			if (waitid(P_PID, (id_t)pids[i], &info,
				   WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid != 0)
				return -EIO;
		}
		usleep(1000);
	}
	for (unsigned i = 0; i < cfg->producers; i++)
		if (sh->r[i].error) /* ordered by R */
			return -EIO;
	/* Settled: the workers asleep, every class compiled ahead (up to
	 * 60 s; then it starts anyway). Then the flood in full flow (see
	 * noisy_producer): answers back (for up to 60 s: a big cluster's
	 * first scans; else its message), and its region full (up to 10 s;
	 * then it starts anyway). */
	for (unsigned ms = 0; cfg->settle && d != NULL && ms < 60000 &&
	     !daemon_workers_asleep(d); ms++)
		usleep(1000);
	if (noisy > 0 && cfg->settle)
		__atomic_store_n(&sh->flood_go, 1, __ATOMIC_RELEASE); /* F */
	uint32_t slots = cfg->slots ? cfg->slots : 4096;
	for (unsigned ms = 0; noisy > 0 && cfg->settle; ms++) {
		uint64_t answered = __atomic_load_n(&sh->noisy.answered,
						    __ATOMIC_RELAXED);
		uint64_t submitted = __atomic_load_n(&sh->noisy_submitted,
						     __ATOMIC_RELAXED);
		if (answered > 0 && (submitted - answered + BATCH >= slots ||
				     ms >= 10000))
			break; /* its region full, or as full as it gets */
		siginfo_t info = {0};
		if (ms >= 60000 || (waitid(P_PID, (id_t)noisy, &info,
					   WEXITED | WNOHANG | WNOWAIT) == 0 &&
				    info.si_pid != 0))
			return -EIO;
		usleep(1000);
	}
	if (noisy > 0 && cfg->settle && d != NULL) {
		uint64_t counted;
		identity_times(d, &counted, noisy_ns_at_start);
		*read_ns = now_ns();
	}
	/* Read before the start is set: the read takes milliseconds. */
	if (cfg->watch_others)
		*others = others_begin();
	/* A millisecond ahead, so every producer starts on the same clock. */
	__atomic_store_n(&sh->start_ns, now_ns() + 1000000, __ATOMIC_RELEASE); /* S */
	return 0;
}

static int start_daemon(const struct engine_run_config *cfg, const char *sock,
			struct daemon **d, pid_t *child, char *err, size_t err_len)
{
	if (cfg->daemon_exe != NULL)
		return start_child(cfg, sock, child, err, err_len);
	struct daemon_config dc = {.socket_path = sock,
				   .cluster_path = cfg->cluster_path,
				   .synthetic_nodes = cfg->nodes,
				   .synthetic_running = cfg->running,
				   .seed = cfg->seed, .workers = cfg->workers,
				   .pin = true, .slots = cfg->slots ? cfg->slots : 4096,
				   .max_placements = max_placements(cfg),
				   /* Room for a synthetic cluster past the default
				    * (the 100,000-node sweep point). */
				   .max_nodes = cfg->nodes > DAEMON_MAX_NODES ? cfg->nodes : 0,
				   .state_dir = cfg->state_dir,
				   .durability = cfg->durability,
				   .no_warm = cfg->no_warm,
				   .no_doorbells = cfg->no_doorbells};
	*d = daemon_start(&dc, err, err_len);
	return *d == NULL ? -EINVAL : 0;
}

/* The core producer `id` is pinned to, or -1: the allowed cores from the
 * last down, past the workers' (the pool takes the first ones,
 * workers/pool.c), one each, as a deployment pins its producers. Left to
 * the kernel, some runs fell behind for the rest of the run (device
 * machine, 2 cores by taskset: the open loop's p90 10-47 ms, every pod
 * submitted on time), as a busy-polling producer sharing the worker's
 * core would make them (not confirmed). None is pinned where fewer cores
 * are free than producers. */
static int producer_cpu(const struct engine_run_config *cfg, unsigned id)
{
	cpu_set_t allowed;
	if (cfg->no_pin_producers || sched_getaffinity(0, sizeof(allowed), &allowed) < 0)
		return -1;
	int n = CPU_COUNT(&allowed);
	int workers = (int)(cfg->workers ? cfg->workers : daemon_default_workers());
	if (n - workers < (int)cfg->producers)
		return -1;
	int skip = (int)id; /* the id-th allowed core from the last */
	for (int cpu = CPU_SETSIZE - 1; cpu >= 0; cpu--)
		if (CPU_ISSET(cpu, &allowed) && skip-- == 0)
			return cpu;
	return -1;
}

int engine_run(const struct engine_run_config *cfg, struct engine_run_result *out,
	       char *err, size_t err_len)
{
	memset(out, 0, sizeof(*out));
	if (cfg->producers == 0 || cfg->producers > MAX_PRODUCERS || cfg->pods == 0 ||
	    cfg->w == NULL || cfg->w->n_templates == 0 || !(cfg->rate >= 0)) {
		snprintf(err, err_len, "--producers must be 1..%d, --pods > 0, "
			 "--rate >= 0 and a workload given", MAX_PRODUCERS);
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
		int e = errno;
		snprintf(err, err_len, "mkdtemp: %s", strerror(e));
		munmap(sh, sizeof(*sh));
		return -e;
	}
	snprintf(sock, sizeof(sock), "%s/s.sock", dir);

	pid_t pids[MAX_PRODUCERS];
	int status[MAX_PRODUCERS];
	unsigned forked = 0;
	int rc = 0;
	struct others_window *others = NULL;
	out->producers_pinned = producer_cpu(cfg, 0) >= 0;
	for (unsigned i = 0; i < cfg->producers; i++) {
		int cpu = producer_cpu(cfg, i);
		fflush(NULL);
		pids[i] = fork();
		if (pids[i] == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			if (cpu >= 0) {
				cpu_set_t one;
				CPU_ZERO(&one);
				CPU_SET(cpu, &one);
				(void)sched_setaffinity(0, sizeof(one), &one);
			}
			producer(cfg, sh, i, sock);
		}
		if (pids[i] < 0) {
			snprintf(err, err_len, "fork: %s", strerror(errno));
			rc = -EAGAIN;
			break;
		}
		forked++;
	}
	pid_t noisy = -1;
	if (rc == 0 && cfg->noisy) {
		fflush(NULL);
		noisy = fork();
		if (noisy == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			noisy_producer(sh, sock);
		}
	}
	pid_t churn = -1;
	if (rc == 0 && cfg->churn_rate > 0) {
		char admin[80];
		snprintf(admin, sizeof(admin), "%s.admin", sock);
		fflush(NULL);
		churn = fork();
		if (churn == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			churn_process(sh, admin, cfg->churn_rate,
				      cfg->nodes ? cfg->nodes : 1);
		}
	}
	struct daemon *d = NULL;
	pid_t child = -1;
	uint64_t noisy_at_start = 0, read_at_start = 0, sampled_ns = 0;
	if (rc == 0)
		rc = start_daemon(cfg, sock, &d, &child, err, err_len);
	if (rc == 0) {
		__atomic_store_n(&sh->go, 1, __ATOMIC_RELEASE); /* G */
		if (release_producers(cfg, sh, pids, noisy, d, &noisy_at_start,
				      &read_at_start, &others) < 0)
			rc = -EIO; /* the producer's message is taken below */
	}
	if (rc < 0)
		__atomic_store_n(&sh->quit, 1, __ATOMIC_RELAXED);

	struct progress bar;
	progress_begin(&bar, cfg->progress && rc == 0,
		       cfg->phase ? cfg->phase : "engine", cfg->pods);
	unsigned left = forked;
	for (unsigned i = 0; i < forked; i++)
		status[i] = 0;
	/* Beside the flood, the flood's figure is read as the counted
	 * producers get their last answer (within a millisecond): its time
	 * after that is no part of the run. */
	bool sampled = !cfg->noisy || d == NULL;
	while (left > 0) {
		for (unsigned i = 0; i < forked; i++) {
			if (pids[i] <= 0)
				continue;
			pid_t got = waitpid(pids[i], &status[i], WNOHANG);
			if (got == pids[i] || (got < 0 && errno == ECHILD)) {
				pids[i] = 0;
				left--;
				/* One producer failing would leave the others
				 * waiting for a start that never comes. */
				if (!WIFEXITED(status[i]) || WEXITSTATUS(status[i]) != 0)
					__atomic_store_n(&sh->quit, 1, __ATOMIC_RELAXED);
			}
		}
		uint64_t answered = 0;
		for (unsigned i = 0; i < forked; i++)
			answered += __atomic_load_n(&sh->r[i].answered, __ATOMIC_RELAXED);
		progress_update(&bar, answered);
		if (!sampled && answered >= cfg->pods) {
			uint64_t counted, noisy_ns;
			identity_times(d, &counted, &noisy_ns);
			sampled_ns = now_ns();
			out->noisy_worker_ns = noisy_ns - noisy_at_start;
			sampled = true;
		}
		usleep(sampled ? 20000 : 1000);
	}
	progress_end(&bar);
	if (others != NULL) {
		others_end(others, &out->others);
		out->have_others = rc == 0;
	}
	if (churn > 0) {
		__atomic_store_n(&sh->churn_stop, 1, __ATOMIC_RELAXED);
		int st;
		waitpid(churn, &st, 0);
		out->churn_events = sh->churn_events;
		out->churn_failed = sh->churn_failed;
		if (rc == 0 && (!WIFEXITED(st) || WEXITSTATUS(st) != 0 ||
				sh->churn_failed > 0)) {
			snprintf(err, err_len, "%s", sh->churn_why[0] ? sh->churn_why
				 : "the churn process exited abnormally");
			rc = -EIO;
		}
	}
	if (noisy > 0) {
		__atomic_store_n(&sh->noisy_stop, 1, __ATOMIC_RELAXED);
		int st;
		waitpid(noisy, &st, 0);
		out->noisy_answered = sh->noisy.answered;
		if (rc == 0 && (sh->noisy.error || !WIFEXITED(st) ||
				WEXITSTATUS(st) != 0)) {
			snprintf(err, err_len, "%s", sh->noisy.error ? sh->noisy.why
				 : "the noisy producer exited abnormally");
			rc = -EIO;
		}
	}
	if (d != NULL) {
		/* The counted producers' figure now that they have gone (it
		 * outlives them: it is their identity's); the flood's as read
		 * above. */
		uint64_t noisy_now;
		identity_times(d, &out->counted_worker_ns, &noisy_now);
		if (!cfg->noisy)
			out->noisy_worker_ns = noisy_now;
		out->have_worker_ns = sampled;
		out->overcommits = daemon_overcommits(d);
		daemon_service_hist(d, out->service_hist);
		out->service_p50_us = engine_run_percentile_us(out->service_hist, 0.5);
		out->service_p99_us = engine_run_percentile_us(out->service_hist, 0.99);
		out->service_p999_us = engine_run_percentile_us(out->service_hist, 0.999);
		for (unsigned b = 0; b < HIST_BUCKETS; b++) {
			out->service_ns += (double)out->service_hist[b] * hist_bucket_ns(b);
			if (hist_bucket_ns(b) > 1e6)
				out->service_over_1ms += out->service_hist[b];
		}
		struct daemon_stats ds;
		daemon_stop(d, 5000, &ds);
		out->conflicts = ds.conflicts;
		out->workers = ds.workers;
		out->nodes = ds.nodes;
		out->caches = ds.caches;
	}
	uint64_t calls = 0;
	if (child > 0 && stop_child(cfg, child, &calls, err, err_len) < 0 && rc == 0)
		rc = -EIO;
	out->syscalls = calls;
	out->workers = out->workers ? out->workers : cfg->workers;
	out->nodes = out->nodes ? out->nodes : cfg->nodes;
	uint64_t start = sh->start_ns, last = 0;
	bool reported = false;
	for (unsigned i = 0; i < forked; i++) {
		struct producer_report *r = &sh->r[i];
		bool failed = r->error || !WIFEXITED(status[i]) || WEXITSTATUS(status[i]) != 0;
		/* The first producer with its own reason explains the run. */
		if (failed && !reported && (r->error || rc == 0)) {
			snprintf(err, err_len, "producer %u: %s", i,
				 r->error ? r->why : "exited abnormally");
			reported = r->error;
			rc = -EIO;
		}
		out->answered += r->answered;
		out->placed += r->placed;
		out->unschedulable += r->unschedulable;
		out->rejected += r->rejected;
		out->cancelled += r->cancelled;
		out->late_submits += r->late;
		if (r->last_answer_ns > last)
			last = r->last_answer_ns;
		for (unsigned b = 0; b < HIST_BUCKETS; b++) {
			out->hist[b] += r->hist[b];
			out->seen_hist[b] += r->seen_hist[b];
		}
	}
	out->pods = cfg->pods;
	out->templates = cfg->w->n_templates;
	out->rate = cfg->rate;
	out->wall_s = start != 0 && last > start ? (double)(last - start) / 1e9 : 0;
	/* The flood's figure spans from its read before the start to its
	 * read after the last answer: the worker served the flood alone
	 * outside the run, at most this long. */
	out->worker_ns_lag_ns = (sampled_ns > last ? sampled_ns - last : 0) +
				(start > read_at_start && read_at_start != 0
				 ? start - read_at_start : 0);
	out->pods_per_sec = out->wall_s > 0 ? (double)out->answered / out->wall_s : 0;
	out->achieved_rate = cfg->rate > 0 ? out->pods_per_sec : 0;
	out->p50_us = engine_run_percentile_us(out->hist, 0.50);
	out->p90_us = engine_run_percentile_us(out->hist, 0.90);
	out->p99_us = engine_run_percentile_us(out->hist, 0.99);
	out->p999_us = engine_run_percentile_us(out->hist, 0.999);
	out->seen_p50_us = engine_run_percentile_us(out->seen_hist, 0.50);
	out->seen_p90_us = engine_run_percentile_us(out->seen_hist, 0.90);
	out->seen_p99_us = engine_run_percentile_us(out->seen_hist, 0.99);
	out->seen_p999_us = engine_run_percentile_us(out->seen_hist, 0.999);
	munmap(sh, sizeof(*sh));
	rmdir(dir);
	return rc;
}
