/* stress.daemon: the real daemon, in process, with producers in other
 * processes (forked before any daemon thread starts, and released by a
 * flag in shared memory once the socket is up).
 *
 * Invariants, each a count that must read zero:
 * - overcommits: a node counter above allocatable, sampled by this process
 *   all through the run, and at the end;
 * - lost answers: pods submitted and never answered (by the daemon, or,
 *   for pods it never saw before it went away, by the client library's
 *   CANCELLED answers);
 * - duplicate answers: a cookie answered twice, or one never submitted.
 * Cases: four producers on a tight cluster, releasing half of what is
 * placed so commits keep conflicting; a producer killed with SIGKILL in
 * mid-stream while the others go on; a producer writing random bytes and
 * out-of-range handles into its region beside a well-behaved one; a
 * scribbler writing random bytes over its whole region, ring indices and
 * geometry included, beside two well-behaved ones (the scribbler is
 * disconnected, the others get every answer, the daemon stays up); and a
 * shutdown with pods in flight, every one of them answered. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "daemon/daemon.h"
#include "client/control_client.h"
#include "fixture.h"
#include "ingest/ingest.h"
#include "shm/shm.h"
#include "shmsched/client.h"

#define MAX_PRODUCERS 6

/* What each producer process reports, in memory shared with the parent. */
struct report {
	uint64_t submitted, answered, duplicates, placed, unschedulable;
	uint64_t rejected, cancelled, released;
	int error; /* nonzero: the producer failed; `why` says how */
	char why[600];
};

struct shared {
	int go;   /* __atomic: set by the parent once the daemon listens */
	int stop; /* __atomic: set by the parent to end endless producers */
	struct report r[MAX_PRODUCERS];
};

static struct shared *sh;
static struct fixture_dir fx;

static const char tight_cluster[] =
	"{\"kind\":\"List\",\"items\":["
	"%s"
	"]}";

static void write_cluster(void)
{
	char nodes[4096] = "";
	for (int i = 0; i < 8; i++) {
		char n[256];
		snprintf(n, sizeof(n), "%s{\"kind\":\"Node\",\"metadata\":{\"name\":"
			 "\"n%d\"},\"status\":{\"allocatable\":{\"cpu\":\"4\","
			 "\"memory\":\"8Gi\",\"pods\":\"30\"}}}", i ? "," : "", i);
		strcat(nodes, n);
	}
	FILE *f = fopen(fx.cluster, "w");
	assert_non_null(f);
	fprintf(f, tight_cluster, nodes);
	fclose(f);
}

static const char pod_json[] =
	"{\"kind\":\"Pod\",\"metadata\":{\"name\":\"t\"},\"spec\":{\"containers\":"
	"[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"500m\","
	"\"memory\":\"1Gi\"}}}]}}";

static void fail_report(struct report *r, const char *what, const char *err)
{
	r->error = 1;
	snprintf(r->why, sizeof(r->why), "%s: %s", what, err);
}

static void wait_go(void)
{
	while (!__atomic_load_n(&sh->go, __ATOMIC_ACQUIRE))
		usleep(1000);
}

/* A well-behaved producer: `pods` pods (0: until told to stop), every
 * answer checked against what it submitted; releases every other placed
 * pod when `release` is set. */
static void producer(int id, uint64_t pods, bool release)
{
	struct report *r = &sh->r[id];
	char err[512];
	wait_go();
	struct shmsched_client *c;
	if (shmsched_connect(fx.sock, &c, err, sizeof(err)) < 0) {
		fail_report(r, "connect", err);
		_exit(1);
	}
	uint32_t tid;
	if (shmsched_register_template(c, pod_json, strlen(pod_json), &tid, err,
				       sizeof(err)) < 0) {
		fail_report(r, "template", err);
		_exit(1);
	}
	uint64_t limit = pods ? pods : UINT64_MAX;
	size_t seen_len = pods ? pods : 10000000;
	uint8_t *seen = calloc(seen_len, 1);
	struct shmsched_pod batch[64];
	struct shmsched_result res[64];
	uint64_t next = 0;
	bool gone = false; /* the daemon has gone: submit no more, read answers */
	for (;;) {
		bool stopping = gone || __atomic_load_n(&sh->stop, __ATOMIC_RELAXED) ||
				next == limit || next == seen_len;
		if (!stopping) {
			unsigned n = 0;
			for (; n < 64 && next + n < limit && next + n < seen_len; n++)
				batch[n] = (struct shmsched_pod){
					.cookie = ((uint64_t)id << 40) | (next + n),
					.template_id = tid};
			int acc = shmsched_submit(c, batch, n);
			if (acc == -ECONNRESET) {
				gone = true; /* its answers still come from poll */
				acc = 0;
			} else if (acc < 0) {
				fail_report(r, "submit", strerror(-acc));
				break;
			}
			next += (unsigned)acc;
			/* Relaxed: a figure the parent samples. */
			__atomic_store_n(&r->submitted, next, __ATOMIC_RELAXED);
		}
		int got = shmsched_poll(c, res, 64);
		if (got < 0) {
			if (r->answered < next)
				fail_report(r, "poll", strerror(-got));
			break;
		}
		for (int k = 0; k < got; k++) {
			uint64_t cookie = res[k].cookie;
			uint64_t idx = cookie & ((UINT64_C(1) << 40) - 1);
			if ((cookie >> 40) != (uint64_t)id || idx >= next || seen[idx]++) {
				r->duplicates++;
				continue;
			}
			r->answered++;
			switch (res[k].status) {
			case SHMSCHED_PLACED:
				r->placed++;
				if (release && (idx & 1)) {
					if (shmsched_release(c, res[k].placement_id,
							     err, sizeof(err)) == 0)
						r->released++;
					else
						fail_report(r, "release", err);
				}
				break;
			case SHMSCHED_UNSCHEDULABLE:
				r->unschedulable++;
				break;
			case SHMSCHED_REJECTED:
				r->rejected++;
				break;
			case SHMSCHED_CANCELLED:
				r->cancelled++;
				break;
			default:
				r->duplicates++;
			}
		}
		if (stopping && shmsched_in_flight(c) == 0)
			break;
	}
	free(seen);
	shmsched_disconnect(c);
	_exit(r->error ? 1 : 0);
}

/* Connects, registers and attaches the region with raw control calls (no
 * client library), for producers that write into their region as no
 * library would. Exits the process on a failure, reported in r. */
static void raw_register(struct report *r, int *fd, int *region_fd,
			 struct producer_region *p)
{
	char err[512];
	wait_go();
	*fd = control_client_connect(fx.sock, 5000, err, sizeof(err));
	if (*fd < 0) {
		fail_report(r, "connect", err);
		_exit(1);
	}
	struct op_request op = {.kind = OP_REGISTER};
	struct op_registered reg;
	*region_fd = -1;
	uint32_t len;
	if (control_client_call(*fd, &op, sizeof(op), &reg, sizeof(reg), &len,
				region_fd, 5000, err, sizeof(err)) < 0 ||
	    *region_fd < 0) {
		fail_report(r, "register", err);
		_exit(1);
	}
	if (producer_region_attach(*region_fd, p, err, sizeof(err)) < 0) {
		fail_report(r, "attach", err);
		_exit(1);
	}
}

/* A producer that breaks its side: random bytes in every slot, and handles
 * past its slots, straight into the region (no client library). */
static void vandal(int id)
{
	struct report *r = &sh->r[id];
	int fd, region_fd;
	struct producer_region p;
	raw_register(r, &fd, &region_fd, &p);
	uint64_t rng = 0x1234567 + (uint64_t)id;
	for (int round = 0; round < 20; round++) {
		uint8_t *bytes = (uint8_t *)p.slots;
		for (size_t i = 0; i < (size_t)p.n_slots * sizeof(*p.slots); i++) {
			rng ^= rng << 13;
			rng ^= rng >> 7;
			rng ^= rng << 17;
			bytes[i] = (uint8_t)rng;
		}
		uint64_t h[64];
		unsigned n = 0;
		for (uint32_t i = 0; i < 64 && i < p.n_slots; i++)
			h[n++] = i;
		h[n - 1] = UINT64_MAX - (uint64_t)round; /* past the slots */
		unsigned sent = 0;
		while (sent < n)
			sent += ring_enqueue_burst(p.submit, h + sent, n - sent);
		r->submitted += n - 1;
		time_t deadline = time(NULL) + 30;
		for (uint64_t got = 0; got < n - 1;) {
			if (time(NULL) > deadline) {
				fail_report(r, "answers", "none for 30 s");
				_exit(1);
			}
			uint64_t back[64];
			unsigned m = ring_dequeue_burst(p.completion, back, 64);
			for (unsigned k = 0; k < m; k++) {
				uint32_t st = p.slots[back[k]].status;
				r->answered++;
				r->rejected += st == SHMSCHED_REJECTED;
				r->placed += st == SHMSCHED_PLACED;
			}
			got += m;
			if (m == 0)
				usleep(100);
		}
	}
	producer_region_close(&p);
	close(region_fd);
	close(fd);
	_exit(0);
}

/* A producer that writes random bytes over its whole region, the region
 * header, both rings' geometry, indices and entries, and the slots, again
 * and again, until the daemon hangs up on it (or 20 s pass). Reports as
 * `answered` whether it was disconnected. */
static void scribbler(int id)
{
	struct report *r = &sh->r[id];
	int fd, region_fd;
	struct producer_region p;
	raw_register(r, &fd, &region_fd, &p);
	struct shm_span all = shm_region_span(p.region);
	uint64_t rng = 0xfeedface + (uint64_t)id;
	time_t deadline = time(NULL) + 20;
	while (time(NULL) < deadline) {
		uint64_t *words = all.base;
		for (size_t i = 0; i < all.size / sizeof(uint64_t); i++) {
			rng ^= rng << 13;
			rng ^= rng >> 7;
			rng ^= rng << 17;
			words[i] = rng;
		}
		r->submitted++;
		/* Hung up on: the next read of the control socket sees EOF. */
		char byte;
		ssize_t got = recv(fd, &byte, 1, MSG_DONTWAIT);
		if (got == 0) {
			r->answered = 1;
			break;
		}
		usleep(1000);
	}
	producer_region_close(&p);
	close(region_fd);
	close(fd);
	_exit(0);
}

/* A producer that rings its doorbell as fast as it can, with its own
 * words scribbled on (include/shmsched/wire.h: `asleep` and `doorbell`
 * are its to write), for 3 s, its rings left alone. `answered` whether
 * it was disconnected (it must not be: nothing it did is a fault). */
static void bell_ringer(int id)
{
	struct report *r = &sh->r[id];
	int fd, region_fd;
	struct producer_region p;
	raw_register(r, &fd, &region_fd, &p);
	uint64_t rng = 0xbe11 + (uint64_t)id, rings = 0;
	time_t deadline = time(NULL) + 3;
	while (time(NULL) < deadline) {
		rng ^= rng << 13;
		rng ^= rng >> 7;
		rng ^= rng << 17;
		__atomic_store_n(&p.notices->doorbell, (uint32_t)rng, __ATOMIC_RELAXED);
		__atomic_store_n(&p.notices->asleep, (uint32_t)(rng >> 32), __ATOMIC_RELAXED);
		syscall(SYS_futex, &p.notices->doorbell, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
		rings++;
	}
	r->submitted = rings;
	char byte;
	r->answered = recv(fd, &byte, 1, MSG_DONTWAIT) == 0; /* hung up on */
	producer_region_close(&p);
	close(region_fd);
	close(fd);
	_exit(0);
}

static void bell_ringer_entry(int id, uint64_t pods, bool release)
{
	(void)pods;
	(void)release;
	bell_ringer(id);
}

static void scribbler_entry(int id, uint64_t pods, bool release)
{
	(void)pods;
	(void)release;
	scribbler(id);
}

static pid_t spawn(void (*fn)(int, uint64_t, bool), int id, uint64_t pods,
		   bool release)
{
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		fn(id, pods, release);
	}
	return pid;
}

static void vandal_entry(int id, uint64_t pods, bool release)
{
	(void)pods;
	(void)release;
	vandal(id);
}

static struct daemon *start(unsigned workers)
{
	struct daemon_config cfg = fixture_config(&fx);
	cfg.workers = workers;
	cfg.slots = 512;
	struct daemon *d = fixture_start(&cfg);
	__atomic_store_n(&sh->go, 1, __ATOMIC_RELEASE);
	return d;
}

/* Waits for the children, sampling overcommits meanwhile. */
static uint64_t watch(struct daemon *d, pid_t *pids, int n, int *statuses)
{
	uint64_t over = 0;
	int left = n;
	while (left > 0) {
		over += daemon_overcommits(d);
		for (int i = 0; i < n; i++) {
			if (pids[i] <= 0)
				continue;
			int st;
			if (waitpid(pids[i], &st, WNOHANG) == pids[i]) {
				statuses[i] = st;
				pids[i] = 0;
				left--;
			}
		}
		usleep(500);
	}
	return over;
}

static void check_producer(int i, int status)
{
	struct report *r = &sh->r[i];
	print_message("producer %d: %" PRIu64 " submitted, %" PRIu64 " answered ("
		      "%" PRIu64 " placed, %" PRIu64 " unschedulable, %" PRIu64
		      " rejected, %" PRIu64 " cancelled), %" PRIu64 " released, %"
		      PRIu64 " duplicates%s%s\n", i, r->submitted, r->answered,
		      r->placed, r->unschedulable, r->rejected, r->cancelled,
		      r->released, r->duplicates, r->error ? ": " : "",
		      r->error ? r->why : "");
	assert_int_equal(r->error, 0);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_int_equal(r->duplicates, 0);
	assert_int_equal(r->answered, r->submitted);
}

static int setup(void **state)
{
	(void)state;
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	assert_true(sh != MAP_FAILED);
	memset(sh, 0, sizeof(*sh));
	fixture_dir_make(&fx, "daemon", 0);
	write_cluster();
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	fixture_dir_remove(&fx);
	munmap(sh, sizeof(*sh));
	return 0;
}

static void test_four_producers_tight_cluster(void **state)
{
	(void)state;
	pid_t pids[4];
	int st[4];
	for (int i = 0; i < 4; i++)
		pids[i] = spawn(producer, i, 5000, true);
	struct daemon *d = start(2);
	uint64_t over = watch(d, pids, 4, st);
	over += daemon_overcommits(d);
	uint64_t on_nodes = daemon_pods_on_nodes(d);
	struct daemon_stats ds;
	daemon_stop(d, 5000, &ds);
	print_message("daemon: %" PRIu64 " pods, %" PRIu64 " placed, %" PRIu64
		      " unschedulable, %" PRIu64 " conflicts, %" PRIu64
		      " overcommits seen\n", ds.pods, ds.placed, ds.unschedulable,
		      ds.conflicts, over);
	uint64_t placed = 0, released = 0;
	for (int i = 0; i < 4; i++) {
		check_producer(i, st[i]);
		placed += sh->r[i].placed;
		released += sh->r[i].released;
	}
	assert_int_equal(over, 0);
	assert_int_equal(ds.pods, 4 * 5000);
	assert_int_equal(ds.placed, placed);
	/* What the nodes hold is exactly what was placed and not released,
	 * and so is what the placement table says the producers hold. */
	assert_int_equal(on_nodes, placed - released);
	assert_int_equal(ds.placements, placed - released);
	assert_true(ds.unschedulable > 0); /* the cluster really was tight */
}

static void test_kill_one_producer(void **state)
{
	(void)state;
	pid_t pids[4];
	int st[4];
	for (int i = 0; i < 3; i++)
		pids[i] = spawn(producer, i, 20000, true);
	pids[3] = spawn(producer, 3, 0, true); /* endless: it will be killed */
	struct daemon *d = start(2);
	while (__atomic_load_n(&sh->r[3].submitted, __ATOMIC_RELAXED) < 2000)
		usleep(200);
	kill(pids[3], SIGKILL);
	uint64_t over = watch(d, pids, 4, st);
	/* The daemon notices every producer leave, the killed one too. */
	struct daemon_stats ds;
	for (int waited = 0; waited < 5000; waited++) {
		daemon_get_stats(d, &ds);
		if (ds.producers_gone == 4)
			break;
		usleep(1000);
	}
	daemon_stop(d, 5000, &ds);
	print_message("killed producer 3 after %" PRIu64 " pods; daemon served %"
		      PRIu64 " producers, %" PRIu64 " gone\n", sh->r[3].submitted,
		      ds.producers_registered, ds.producers_gone);
	assert_true(WIFSIGNALED(st[3]));
	for (int i = 0; i < 3; i++)
		check_producer(i, st[i]);
	assert_int_equal(over, 0);
	assert_int_equal(ds.producers_registered, 4);
	assert_int_equal(ds.producers_gone, 4);
}

static void test_random_bytes_are_rejected(void **state)
{
	(void)state;
	pid_t pids[2];
	int st[2];
	pids[0] = spawn(vandal_entry, 0, 0, false);
	pids[1] = spawn(producer, 1, 5000, false);
	struct daemon *d = start(2);
	uint64_t over = watch(d, pids, 2, st);
	struct daemon_stats ds;
	daemon_stop(d, 5000, &ds);
	struct report *v = &sh->r[0];
	print_message("vandal: %" PRIu64 " slots of random bytes, %" PRIu64
		      " answered, %" PRIu64 " rejected, %" PRIu64 " placed; daemon: %"
		      PRIu64 " bad handles\n", v->submitted, v->answered, v->rejected,
		      v->placed, ds.bad_handles);
	assert_int_equal(v->error, 0);
	assert_int_equal(v->answered, v->submitted);
	assert_int_equal(v->rejected + v->placed, v->answered);
	assert_int_equal(ds.bad_handles, 20); /* one past-the-end handle a round */
	check_producer(1, st[1]);
	assert_int_equal(over, 0);
}

/* An attacker (`entry`, as producer 0) beside two honest producers on
 * `workers` workers, then, the attack over, a late honest producer: the
 * daemon must still serve. Checks the honest three (every pod answered
 * once) and that no node was overcommitted; returns the attacker's report,
 * with its exit status in *st0 and the daemon's figures in *ds. */
static struct report *attack_beside_others(void (*entry)(int, uint64_t, bool),
					   unsigned workers, int *st0,
					   struct daemon_stats *ds)
{
	pid_t pids[3];
	int st[3];
	pids[0] = spawn(entry, 0, 0, false);
	pids[1] = spawn(producer, 1, 5000, true);
	pids[2] = spawn(producer, 2, 5000, false);
	struct daemon *d = start(workers);
	uint64_t over = watch(d, pids, 3, st);
	/* Still serving: a new producer gets its answers after the attack. */
	pid_t late = spawn(producer, 3, 1000, false);
	int late_st;
	over += watch(d, &late, 1, &late_st);
	daemon_stop(d, 5000, ds);
	check_producer(1, st[1]);
	check_producer(2, st[2]);
	check_producer(3, late_st);
	assert_int_equal(over, 0);
	*st0 = st[0];
	return &sh->r[0];
}

static void test_scribbler_cannot_hurt_others(void **state)
{
	(void)state;
	int st0;
	struct daemon_stats ds;
	struct report *v = attack_beside_others(scribbler_entry, 2, &st0, &ds);
	print_message("scribbler: %" PRIu64 " rounds of random bytes over its "
		      "region, %s; daemon: %" PRIu64 " producer(s) disconnected "
		      "for broken rings\n", v->submitted,
		      v->answered ? "disconnected by the daemon" : "never disconnected",
		      ds.producer_faults);
	assert_int_equal(v->error, 0);
	assert_true(WIFEXITED(st0));
	assert_int_equal(v->answered, 1);
	assert_int_equal(ds.producer_faults, 1);
}

/* A producer ringing its doorbell without pause, on the worker the other
 * two share: it wakes that worker for nothing, over and over, and is
 * not a fault; the others' pods are all answered, once each, with no
 * overcommit, and the daemon stays up for a producer that comes after. */
static void test_bell_ringer_cannot_hurt_others(void **state)
{
	(void)state;
	int st0;
	struct daemon_stats ds;
	struct report *v = attack_beside_others(bell_ringer_entry, 1, &st0, &ds);
	print_message("bell ringer: %" PRIu64 " rings in 3 s, %s\n", v->submitted,
		      v->answered ? "disconnected by the daemon" : "never disconnected");
	assert_int_equal(v->error, 0);
	assert_true(WIFEXITED(st0));
	assert_true(v->submitted > 1000);
	assert_int_equal(v->answered, 0);
	assert_int_equal(ds.producer_faults, 0);
}

static void test_shutdown_answers_every_pod(void **state)
{
	(void)state;
	pid_t pids[2];
	int st[2];
	pids[0] = spawn(producer, 0, 0, false);
	pids[1] = spawn(producer, 1, 0, false);
	struct daemon *d = start(1);
	while (__atomic_load_n(&sh->r[0].submitted, __ATOMIC_RELAXED) < 3000 ||
	       __atomic_load_n(&sh->r[1].submitted, __ATOMIC_RELAXED) < 3000)
		usleep(200);
	/* No drain time: what the workers have not placed is cancelled. */
	struct daemon_stats ds;
	daemon_stop(d, 0, &ds);
	__atomic_store_n(&sh->stop, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < 2; i++)
		assert_int_equal(waitpid(pids[i], &st[i], 0), pids[i]);
	print_message("shutdown: daemon answered %" PRIu64 " pods (%" PRIu64
		      " cancelled)\n", ds.pods, ds.cancelled);
	for (int i = 0; i < 2; i++)
		check_producer(i, st[i]);
	/* The daemon answered what it saw; the library cancelled the rest. */
	assert_true(ds.pods <= sh->r[0].submitted + sh->r[1].submitted);
	assert_true(ds.cancelled > 0 || ds.pods == sh->r[0].submitted +
					       sh->r[1].submitted);
}

/* ---- devices: the answer names them, a release gives them back ------ */

/* One node with two GPUs and eight exclusive cores over two NUMA nodes
 * (0-3 and 4-7). */
static const char gpu_cluster[] =
	"{\"kind\":\"List\",\"items\":[{\"kind\":\"Node\",\"metadata\":{"
	"\"name\":\"g0\",\"annotations\":{\"alibabacloud.com/gpu-count\":\"2\","
	"\"shmsched.io/cpu-manager-policy\":\"static\",\"shmsched.io/numa-nodes\":"
	"\"2\"}},\"status\":{\"allocatable\":{\"cpu\":\"8\",\"memory\":"
	"\"16Gi\",\"pods\":\"30\"}}}]}";

/* Half a GPU, shared cpu (Burstable). */
static const char share_json[] =
	"{\"kind\":\"Pod\",\"metadata\":{\"name\":\"share\",\"annotations\":"
	"{\"alibabacloud.com/gpu-milli\":\"500\"}},\"spec\":{\"containers\":"
	"[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"500m\","
	"\"memory\":\"1Gi\"}}}]}}";

/* 300 milli of a GPU and two exclusive cores (Guaranteed, whole cpus). */
static const char pinned_json[] =
	"{\"kind\":\"Pod\",\"metadata\":{\"name\":\"pinned\",\"annotations\":"
	"{\"alibabacloud.com/gpu-milli\":\"300\"}},\"spec\":{\"containers\":"
	"[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"2\","
	"\"memory\":\"1Gi\"},\"limits\":{\"cpu\":\"2\",\"memory\":\"1Gi\"}}}]}}";

/* Both GPUs, whole. */
static const char whole_json[] =
	"{\"kind\":\"Pod\",\"metadata\":{\"name\":\"whole\",\"annotations\":"
	"{\"alibabacloud.com/gpu-count\":\"2\"}},\"spec\":{\"containers\":"
	"[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}";

static int setup_gpu(void **state)
{
	setup(state);
	FILE *f = fopen(fx.cluster, "w");
	assert_non_null(f);
	fputs(gpu_cluster, f);
	fclose(f);
	return 0;
}

/* What the nodes hold now: GPU milli and exclusive cores. */
static void in_use(struct daemon *d, uint64_t gpu_milli, uint64_t cores)
{
	uint64_t g, k;
	daemon_devices_in_use(d, &g, &k);
	assert_int_equal(g, gpu_milli);
	assert_int_equal(k, cores);
}

/* A release of `id` is refused with `code`, says `why`, gives nothing
 * back. */
static void refused(struct shmsched_client *c, struct daemon *d, uint64_t id,
		    int code, const char *why)
{
	char err[512];
	uint64_t g, k, pods = daemon_pods_on_nodes(d);
	daemon_devices_in_use(d, &g, &k);
	assert_int_equal(shmsched_release(c, id, err, sizeof(err)), code);
	if (strstr(err, why) == NULL)
		fail_msg("release refused with \"%s\"; expected \"%s\" in it",
			 err, why);
	in_use(d, g, k);
	assert_int_equal(daemon_pods_on_nodes(d), pods);
}

/* Roles: a producer may not change the cluster or register resource
 * names; the admin socket may; a refused request interns nothing. */
static void test_roles(void **state)
{
	(void)state;
	struct daemon *d = start(1);
	char err[512];
	struct shmsched_client *c, *a;
	c = fixture_connect(fx.sock);

	/* A producer's node events: refused, naming the admin socket. */
	static const char big_node[] =
		"{\"kind\":\"Node\",\"metadata\":{\"name\":\"invented\"},"
		"\"status\":{\"allocatable\":{\"cpu\":\"1000000\",\"pods\":\"110\"}}}";
	assert_int_equal(shmsched_node_event(c, SHMSCHED_NODE_ADD, big_node,
					     strlen(big_node), err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "admin socket"));
	assert_non_null(strstr(err, fx.admin));
	assert_int_equal(shmsched_node_event(c, SHMSCHED_NODE_CORDON, "n1", 2, err,
					     sizeof(err)), -EPERM);
	assert_int_equal(shmsched_node_event(c, SHMSCHED_NODE_REMOVE, "n1", 2, err,
					     sizeof(err)), -EPERM);
	struct daemon_stats ds;
	daemon_get_stats(d, &ds);
	assert_int_equal(ds.nodes, 8);

	/* Resource names: a producer looks up, never registers. */
	uint32_t idx;
	assert_int_equal(shmsched_resource(c, "cpu", &idx, err, sizeof(err)), 0);
	assert_int_equal(shmsched_resource(c, "example.com/made-up", &idx, err,
					   sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "admin socket"));
	static const char pod_new_res[] =
		"{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\"},\"spec\":"
		"{\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":"
		"{\"example.com/made-up\":\"1\"}}}]}}";
	uint32_t tid;
	assert_int_equal(shmsched_register_template(c, pod_new_res,
						    strlen(pod_new_res), &tid, err,
						    sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "not registered"));

	/* The admin socket: the same requests are taken. */
	a = fixture_connect(fx.admin);
	assert_int_equal(shmsched_node_event(a, SHMSCHED_NODE_CORDON, "n1", 2, err,
					     sizeof(err)), 0);
	assert_int_equal(shmsched_node_event(a, SHMSCHED_NODE_UNCORDON, "n1", 2, err,
					     sizeof(err)), 0);
	assert_int_equal(shmsched_resource(a, "example.com/made-up", &idx, err,
					   sizeof(err)), 0);
	/* Now registered, the producer may look it up and use it. */
	uint32_t idx2;
	assert_int_equal(shmsched_resource(c, "example.com/made-up", &idx2, err,
					   sizeof(err)), 0);
	assert_int_equal(idx2, idx);
	assert_int_equal(shmsched_register_template(c, pod_new_res,
						    strlen(pod_new_res), &tid, err,
						    sizeof(err)), 0);

	/* Removing names the table does not hold interns nothing, even from
	 * the admin: 1,000 refusals of 4 KB names leave the table as it was. */
	daemon_get_stats(d, &ds);
	uint32_t before = ds.interned_strings;
	static char name[4096];
	for (int i = 0; i < 1000; i++) {
		int n = snprintf(name, sizeof(name), "no-such-node-%d-", i);
		memset(name + n, 'x', sizeof(name) - 1 - (size_t)n);
		assert_int_equal(shmsched_node_event(a, SHMSCHED_NODE_REMOVE, name,
						     sizeof(name) - 1, err,
						     sizeof(err)), -ENOENT);
	}
	daemon_get_stats(d, &ds);
	assert_int_equal(ds.interned_strings, before);
	assert_int_equal(ds.nodes, 8);

	/* Templates and nodes refused late (after their labels were read)
	 * leave no string behind either, from producers or admins. */
	static char bad[2048];
	for (int i = 0; i < 200; i++) {
		snprintf(bad, sizeof(bad),
			 "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p%d\"},\"spec\":"
			 "{\"nodeSelector\":{\"k%d-a\":\"v%d-a\",\"k%d-b\":\"v%d-b\"},"
			 "\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":"
			 "{\"cpu\":\"12x\"}}}]}}", i, i, i, i, i);
		assert_int_equal(shmsched_register_template(c, bad, strlen(bad), &tid,
							    err, sizeof(err)), -EINVAL);
		snprintf(bad, sizeof(bad),
			 "{\"kind\":\"Node\",\"metadata\":{\"name\":\"new-%d\","
			 "\"labels\":{\"l%d\":\"w%d\"}},\"status\":{\"allocatable\":"
			 "{\"cpu\":\"-1\"}}}", i, i, i);
		assert_int_equal(shmsched_node_event(a, SHMSCHED_NODE_ADD, bad,
						     strlen(bad), err, sizeof(err)),
				 -EINVAL);
	}
	daemon_get_stats(d, &ds);
	assert_int_equal(ds.interned_strings, before);

	shmsched_disconnect(a);
	shmsched_disconnect(c);
	daemon_stop(d, 1000, NULL);
}

/* Ownership: placements belong to the identity (uid, name) that made
 * them. They stay counted when it disconnects, it may release them after
 * it reconnects, no other identity may, and a placement whose node was
 * removed is refused as stale with nothing given back. */
static void test_ownership(void **state)
{
	(void)state;
	struct daemon *d = start(1);
	char err[512];
	struct shmsched_client *a, *b, *admin;
	if (shmsched_connect_named(fx.sock, "job-a", &a, err, sizeof(err)) < 0)
		fail_msg("connect: %s", err);
	uint32_t tid = fixture_template(a, pod_json);
	struct shmsched_result r[4];
	for (int i = 0; i < 4; i++) {
		fixture_place_one(a, tid, (uint64_t)i + 1, &r[i]);
		assert_int_equal(r[i].status, SHMSCHED_PLACED);
	}
	assert_int_equal(daemon_pods_on_nodes(d), 4);
	struct daemon_stats ds;
	daemon_get_stats(d, &ds);
	assert_int_equal(ds.placements, 4);
	shmsched_disconnect(a);
	/* Gone, but its pods still run: still counted. */
	usleep(100 * 1000);
	assert_int_equal(daemon_pods_on_nodes(d), 4);

	/* Another name of the same uid is another identity. */
	if (shmsched_connect_named(fx.sock, "job-b", &b, err, sizeof(err)) < 0)
		fail_msg("connect: %s", err);
	refused(b, d, r[0].placement_id, -EPERM, "belongs to another producer");
	/* The same name again: its placements are its own. */
	if (shmsched_connect_named(fx.sock, "job-a", &a, err, sizeof(err)) < 0)
		fail_msg("connect: %s", err);
	assert_int_equal(shmsched_release(a, r[0].placement_id, err, sizeof(err)), 0);
	assert_int_equal(daemon_pods_on_nodes(d), 3);

	/* An admin may release any placement. */
	admin = fixture_connect(fx.admin);
	assert_int_equal(shmsched_release(admin, r[1].placement_id, err,
					  sizeof(err)), 0);
	assert_int_equal(daemon_pods_on_nodes(d), 2);

	/* r[2]'s node is removed, and a new node takes its slot: the release
	 * is stale, and gives nothing back to the new node. */
	char name[64];
	assert_int_equal(shmsched_node_name(a, r[2].node_id, name, sizeof(name),
					    err, sizeof(err)), 0);
	assert_int_equal(shmsched_node_event(admin, SHMSCHED_NODE_REMOVE, name,
					     strlen(name), err, sizeof(err)), 0);
	static const char fresh[] =
		"{\"kind\":\"Node\",\"metadata\":{\"name\":\"fresh\"},"
		"\"status\":{\"allocatable\":{\"cpu\":\"4\",\"memory\":\"8Gi\","
		"\"pods\":\"30\"}}}";
	assert_int_equal(shmsched_node_event(admin, SHMSCHED_NODE_ADD, fresh,
					     strlen(fresh), err, sizeof(err)), 0);
	uint64_t before = daemon_pods_on_nodes(d);
	refused(a, d, r[2].placement_id, -ESTALE, "its node was removed");
	assert_int_equal(daemon_pods_on_nodes(d), before);
	/* Forgotten after that: a second try names nothing. */
	refused(a, d, r[2].placement_id, -ENOENT, "no such placement");
	assert_int_equal(daemon_overcommits(d), 0);

	/* Listings: a producer sees its own, an admin every producer's. */
	struct shmsched_client *b2 = b;
	uint32_t tid_b = fixture_template(b2, pod_json);
	struct shmsched_result rb;
	fixture_place_one(b2, tid_b, 99, &rb);
	assert_int_equal(rb.status, SHMSCHED_PLACED);
	struct shmsched_placement page[8];
	uint32_t cursor = 0;
	int n = 0, got;
	while (cursor != UINT32_MAX &&
	       (got = shmsched_placements(a, &cursor, page + n, 8 - (unsigned)n,
					  err, sizeof(err))) >= 0)
		n += got;
	assert_int_equal(n, 1);
	assert_true(page[0].placement_id == r[3].placement_id);
	assert_string_equal(page[0].owner_name, "job-a");
	assert_int_equal(page[0].cpu_milli, 500);
	assert_int_equal(page[0].node_id, r[3].node_id);
	cursor = 0;
	n = 0;
	/* A page of one at a time: the cursor resumes after each. */
	while (cursor != UINT32_MAX &&
	       (got = shmsched_placements(admin, &cursor, page + n, 1, err,
					  sizeof(err))) >= 0)
		n += got;
	assert_int_equal(n, 2);
	bool saw_b = false;
	for (int i = 0; i < n; i++)
		saw_b |= strcmp(page[i].owner_name, "job-b") == 0 &&
			 page[i].placement_id == rb.placement_id;
	assert_true(saw_b);

	shmsched_disconnect(admin);
	shmsched_disconnect(b);
	shmsched_disconnect(a);
	daemon_stop(d, 1000, &ds);
	assert_int_equal(ds.placements, 2); /* r[3] and b's, still running */
}

static void test_devices_named_and_released(void **state)
{
	(void)state;
	struct daemon *d = start(1);
	char err[512], text[64];
	struct shmsched_client *c = fixture_connect(fx.sock);
	uint32_t share = fixture_template(c, share_json);
	uint32_t pinned = fixture_template(c, pinned_json);
	uint32_t whole = fixture_template(c, whole_json);

	/* A share of one GPU, named with its milli; no cores. */
	struct shmsched_result a, b;
	fixture_place_one(c, share, 1, &a);
	assert_int_equal(a.status, SHMSCHED_PLACED);
	assert_int_equal(__builtin_popcount(a.devices.gpu_mask), 1);
	assert_true(a.devices.gpu_mask < 4); /* GPU 0 or 1 */
	assert_int_equal(a.devices.gpu_milli, 500);
	assert_int_equal(a.devices.n_cores, 0);
	assert_int_equal(shmsched_format_cpuset(&a.devices, text, sizeof(text)), 0);
	assert_int_equal(shmsched_format_gpus(&a.devices, text, sizeof(text)), 1);
	assert_true(strcmp(text, "0") == 0 || strcmp(text, "1") == 0);
	assert_string_equal(a.message, "");
	in_use(d, 500, 0);

	/* 300 more by best fit: the same GPU; two cores on one NUMA node. */
	fixture_place_one(c, pinned, 2, &b);
	assert_int_equal(b.status, SHMSCHED_PLACED);
	assert_int_equal(b.devices.gpu_mask, a.devices.gpu_mask);
	assert_int_equal(b.devices.gpu_milli, 300);
	assert_int_equal(b.devices.n_cores, 2);
	assert_int_equal(__builtin_popcountll(b.devices.cpuset[0]), 2);
	assert_true((b.devices.cpuset[0] & ~UINT64_C(0xf)) == 0 ||
		    (b.devices.cpuset[0] & ~UINT64_C(0xf0)) == 0);
	assert_int_equal(b.devices.cpuset[1] | b.devices.cpuset[2] |
			 b.devices.cpuset[3], 0);
	assert_int_equal(shmsched_format_cpuset(&b.devices, text, sizeof(text)), 3);
	print_message("share: GPU %s, %u milli; pinned: GPU mask 0x%x, %u milli, "
		      "cores %s\n", a.devices.gpu_mask == 1 ? "0" : "1",
		      a.devices.gpu_milli, b.devices.gpu_mask, b.devices.gpu_milli,
		      text);
	in_use(d, 800, 2);

	/* Forged releases: ids never issued, another generation of a's
	 * record, an index past the table: each refused, nothing given back. */
	assert_true(a.placement_id != 0 && b.placement_id != 0);
	assert_true(a.placement_id != b.placement_id);
	refused(c, d, 0, -ENOENT, "no such placement");
	refused(c, d, a.placement_id + (UINT64_C(1) << 32), -ENOENT,
		"no such placement");
	refused(c, d, (a.placement_id & ~UINT64_C(0xffffffff)) | 0xfffffffe,
		-ENOENT, "no such placement");
	refused(c, d, UINT64_MAX, -ENOENT, "no such placement");

	/* Another producer cannot release them, whatever it sends. */
	struct shmsched_client *other;
	if (shmsched_connect_named(fx.sock, "other", &other, err, sizeof(err)) < 0)
		fail_msg("connect other: %s", err);
	refused(other, d, a.placement_id, -EPERM, "belongs to another producer");
	refused(other, d, b.placement_id, -EPERM, "belongs to another producer");

	/* The right ones give back exactly what each took, once. */
	assert_int_equal(shmsched_release(c, a.placement_id, err, sizeof(err)), 0);
	in_use(d, 300, 2);
	refused(c, d, a.placement_id, -ENOENT, "released already");
	assert_int_equal(shmsched_release(c, b.placement_id, err, sizeof(err)), 0);
	in_use(d, 0, 0);
	assert_int_equal(daemon_pods_on_nodes(d), 0);
	shmsched_disconnect(other);

	/* Whole GPUs: both devices, 1000 each; then given back. */
	fixture_place_one(c, whole, 3, &a);
	assert_int_equal(a.status, SHMSCHED_PLACED);
	assert_int_equal(a.devices.gpu_mask, 3);
	assert_int_equal(a.devices.gpu_milli, 1000);
	assert_int_equal(shmsched_format_gpus(&a.devices, text, sizeof(text)), 3);
	assert_string_equal(text, "0,1");
	in_use(d, 2000, 0);
	/* No device left for a share: unschedulable, with no devices. */
	fixture_place_one(c, share, 4, &b);
	assert_int_equal(b.status, SHMSCHED_UNSCHEDULABLE);
	assert_int_equal(b.devices.gpu_mask, 0);
	assert_true(strlen(b.message) > 0);
	assert_int_equal(shmsched_release(c, a.placement_id, err, sizeof(err)), 0);
	in_use(d, 0, 0);
	assert_int_equal(daemon_overcommits(d), 0);

	shmsched_disconnect(c);
	struct daemon_stats ds;
	daemon_stop(d, 1000, &ds);
}

/* ---- profiles: a template's schedulerName picks its profile ---------- */

/* Two nodes; only "b" carries pool=batch. */
static const char two_nodes[] =
	"{\"kind\":\"List\",\"items\":["
	"{\"kind\":\"Node\",\"metadata\":{\"name\":\"a\",\"labels\":{\"pool\":\"web\"}},"
	"\"status\":{\"allocatable\":{\"cpu\":\"4\",\"memory\":\"8Gi\",\"pods\":\"50\"}}},"
	"{\"kind\":\"Node\",\"metadata\":{\"name\":\"b\",\"labels\":{\"pool\":\"batch\"}},"
	"\"status\":{\"allocatable\":{\"cpu\":\"4\",\"memory\":\"8Gi\",\"pods\":\"50\"}}}]}";

/* default-scheduler as kube's; "batch" keeps its pods on pool=batch
 * (NodeAffinity addedAffinity) and packs them. */
static const char two_profiles[] =
	"apiVersion: kubescheduler.config.k8s.io/v1\n"
	"kind: KubeSchedulerConfiguration\n"
	"profiles:\n"
	"- schedulerName: default-scheduler\n"
	"- schedulerName: batch\n"
	"  pluginConfig:\n"
	"  - name: NodeAffinity\n"
	"    args:\n"
	"      addedAffinity:\n"
	"        requiredDuringSchedulingIgnoredDuringExecution:\n"
	"          nodeSelectorTerms:\n"
	"          - matchExpressions: [{key: pool, operator: In, values: [batch]}]\n"
	"  - name: NodeResourcesFit\n"
	"    args: {scoringStrategy: {type: MostAllocated}}\n";

static void test_profiles(void **state)
{
	(void)state;
	char config[160], err[512];
	snprintf(config, sizeof(config), "%s/sched.yaml", fx.dir);
	FILE *f = fopen(config, "w");
	assert_non_null(f);
	fputs(two_profiles, f);
	fclose(f);
	f = fopen(fx.cluster, "w");
	assert_non_null(f);
	fputs(two_nodes, f);
	fclose(f);
	struct daemon_config cfg = fixture_config(&fx);
	cfg.config_path = config;
	struct daemon *d = daemon_start(&cfg, err, sizeof(err));
	if (d == NULL)
		fail_msg("daemon_start: %s", err);
	struct shmsched_client *c = fixture_connect(fx.sock);
	static const char batch_json[] =
		"{\"kind\":\"Pod\",\"metadata\":{\"name\":\"job\"},\"spec\":{"
		"\"schedulerName\":\"batch\",\"containers\":[{\"name\":\"c\","
		"\"resources\":{\"requests\":{\"cpu\":\"100m\"}}}]}}";
	static const char plain_json[] =
		"{\"kind\":\"Pod\",\"metadata\":{\"name\":\"web\"},\"spec\":{"
		"\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":"
		"{\"cpu\":\"100m\"}}}]}}";
	static const char other_json[] =
		"{\"kind\":\"Pod\",\"metadata\":{\"name\":\"v\"},\"spec\":{"
		"\"schedulerName\":\"volcano\",\"containers\":[{\"name\":\"c\"}]}}";
	uint32_t batch = fixture_template(c, batch_json);
	uint32_t plain = fixture_template(c, plain_json);
	uint32_t tid;
	assert_true(shmsched_register_template(c, other_json, strlen(other_json),
					       &tid, err, sizeof(err)) < 0);
	if (strstr(err, "no profile") == NULL)
		fail_msg("volcano template refused with \"%s\"", err);
	/* Every batch pod lands on b; the plain pods (LeastAllocated, no
	 * added affinity) go to a once b holds more. */
	unsigned on_a = 0;
	char name[64];
	for (uint64_t i = 0; i < 6; i++) {
		struct shmsched_result r;
		fixture_place_one(c, batch, 10 + i, &r);
		assert_int_equal(r.status, SHMSCHED_PLACED);
		assert_int_equal(shmsched_node_name(c, r.node_id, name, sizeof(name),
						    err, sizeof(err)), 0);
		assert_string_equal(name, "b");
		fixture_place_one(c, plain, 100 + i, &r);
		assert_int_equal(r.status, SHMSCHED_PLACED);
		assert_int_equal(shmsched_node_name(c, r.node_id, name, sizeof(name),
						    err, sizeof(err)), 0);
		on_a += strcmp(name, "a") == 0;
	}
	assert_true(on_a >= 5);
	shmsched_disconnect(c);
	struct daemon_stats ds;
	daemon_stop(d, 1000, &ds);
	unlink(config);
}

int main(void)
{
	setenv("SHMSCHED_LOG", "warn", 0);
	signal(SIGPIPE, SIG_IGN);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_four_producers_tight_cluster,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_kill_one_producer, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_random_bytes_are_rejected, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_scribbler_cannot_hurt_others,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_bell_ringer_cannot_hurt_others,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_shutdown_answers_every_pod,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_roles, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ownership, setup, teardown),
		cmocka_unit_test_setup_teardown(test_devices_named_and_released,
						setup_gpu, teardown),
		cmocka_unit_test_setup_teardown(test_profiles, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
