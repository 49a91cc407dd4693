/* stress.pool: the worker thread pool with real threads.
 *
 * Invariants that must read zero or match exactly: every submitted item is
 * polled exactly once; no wake-up is lost (the pools here sleep for up to
 * 10-30 s between polls unless woken, so a lost wake-up shows as a stall
 * that the bounded waits catch); busy polls equal items processed; scratch
 * memory is private, zeroed and stays put; a pinned worker runs on the cpu
 * it reports. Timing bounds are loose (seconds, or 60 ms of CPU in 300 ms
 * idle) and prove only "no busy spin" and "no lost wake-up".
 */
#if defined(__SANITIZE_THREAD__)
#define UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define UNDER_TSAN 1
#endif
#endif
/* As in workers/pool.c: liburcu's inline paths only without TSan. */
#ifndef UNDER_TSAN
#define _LGPL_SOURCE 1
#endif

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <linux/futex.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <urcu/urcu-qsbr.h>

#include <cmocka.h>

#include "workers/workers.h"
#include "base/base.h"

#define ITEMS 1000000u
#define WAIT_NS (5ull * 1000000000ull)

static void sleep_us(unsigned us)
{
	struct timespec ts = {us / 1000000u, (long)(us % 1000000u) * 1000};
	nanosleep(&ts, NULL);
}

static void spin_ns(uint64_t ns)
{
	uint64_t end = now_ns() + ns;
	while (now_ns() < end)
		;
}

/* ---- a shared queue of numbered items ---- */

struct queue {
	uint64_t submitted; /* items 0 .. submitted-1 may be taken */
	uint64_t claimed;   /* items 0 .. claimed-1 are taken */
	uint64_t done;      /* items processed */
	uint8_t *count;     /* times each item was processed */
	uint64_t n;
	uint64_t bad_scratch; /* scratch not private or not kept */
};

static void queue_init(struct queue *q, uint64_t n)
{
	memset(q, 0, sizeof(*q));
	q->n = n;
	q->count = calloc(n, 1);
	assert_non_null(q->count);
}

static void queue_submit(struct queue *q, uint64_t upto)
{
	/* Release — partner the acquire in queue_poll(): nothing to publish
	 * but the number, yet it keeps the test honest about order. */
	__atomic_store_n(&q->submitted, upto, __ATOMIC_RELEASE);
}

static uint64_t items_done(struct queue *q)
{
	/* Acquire — partner the release increment in queue_poll(): the
	 * counts written before it are visible. */
	return __atomic_load_n(&q->done, __ATOMIC_ACQUIRE);
}

/* Takes one item and processes it: returns 1, or 0 when none is left. */
static unsigned queue_poll(void *arg, unsigned index, void *scratch)
{
	struct queue *q = arg;
	uint64_t c = __atomic_load_n(&q->claimed, __ATOMIC_RELAXED);
	for (;;) {
		/* Acquire — partner queue_submit(). */
		uint64_t s = __atomic_load_n(&q->submitted, __ATOMIC_ACQUIRE);
		if (c >= s)
			return 0;
		/* Relaxed: the claim only divides the items; the counts are
		 * atomics of their own. */
		if (__atomic_compare_exchange_n(&q->claimed, &c, c + 1, false,
						__ATOMIC_RELAXED, __ATOMIC_RELAXED))
			break;
	}
	__atomic_fetch_add(&q->count[c], 1, __ATOMIC_RELAXED);
	if (scratch != NULL) {
		/* Private and kept: word 0 holds the owner from its first poll on. */
		uint64_t *w = scratch;
		if (w[0] == 0)
			w[0] = index + 1u;
		if (w[0] != index + 1u)
			__atomic_fetch_add(&q->bad_scratch, 1, __ATOMIC_RELAXED);
	}
	/* Release — partner items_done(). */
	__atomic_fetch_add(&q->done, 1, __ATOMIC_RELEASE);
	return 1;
}

static bool wait_done(struct queue *q, uint64_t want)
{
	uint64_t deadline = now_ns() + WAIT_NS;
	while (items_done(q) < want) {
		if (now_ns() > deadline)
			return false;
		sched_yield();
	}
	return true;
}

static bool wait_all_asleep(struct pool *p)
{
	uint64_t deadline = now_ns() + WAIT_NS;
	while (pool_sleeping(p) < pool_size(p)) {
		if (now_ns() > deadline)
			return false;
		sleep_us(100);
	}
	return true;
}

static struct pool *start(const struct pool_config *cfg, pool_poll_fn fn,
			  void *arg)
{
	char err[256] = "";
	struct pool *p = pool_start(cfg, fn, arg, err, sizeof(err));
	if (p == NULL)
		fail_msg("pool_start: %s (errno %d)", err, errno);
	return p;
}

static uint64_t sum_stat(struct pool *p, size_t offset)
{
	uint64_t sum = 0;
	for (unsigned i = 0; i < pool_size(p); i++) {
		struct pool_worker_stats st;
		assert_int_equal(pool_worker_stats(p, i, &st), 0);
		uint64_t v;
		memcpy(&v, (const char *)&st + offset, sizeof(v));
		sum += v;
	}
	return sum;
}

/* ---- tests ---- */

/* A million items submitted in random bursts, with pauses long enough for
 * the workers to fall asleep: each item is processed exactly once, no
 * wake-up is lost, and busy polls add up to the items. */
static void test_every_item_exactly_once(void **state)
{
	(void)state;
	struct queue q;
	queue_init(&q, ITEMS);
	struct pool_config cfg = {
		.workers = 3, /* more than the 2 cores of a small machine */
		.pin = true,
		.scratch_bytes = 1 << 16,
		.spin_polls = 50,
		.yield_polls = 5,
		.sleep_max_us = 10u * 1000000u, /* a lost wake-up stalls 10 s */
	};
	struct pool *p = start(&cfg, queue_poll, &q);
	unsigned seed = 12345;
	uint64_t sub = 0;
	unsigned quiet = 0;
	while (sub < ITEMS) {
		uint64_t burst = 1 + (uint64_t)(rand_r(&seed) % 4096);
		if (burst > ITEMS - sub)
			burst = ITEMS - sub;
		sub += burst;
		queue_submit(&q, sub);
		pool_wake(p);
		switch (rand_r(&seed) % 16) {
		case 0: /* let them drain and fall asleep */
			if (!wait_done(&q, sub))
				fail_msg("stalled at %llu of %llu: lost wake-up?",
					 (unsigned long long)items_done(&q),
					 (unsigned long long)sub);
			assert_true(wait_all_asleep(p));
			quiet++;
			break;
		case 1: /* catch them on their way to sleep */
			spin_ns((uint64_t)(rand_r(&seed) % 200) * 1000);
			break;
		default:
			break;
		}
	}
	if (!wait_done(&q, ITEMS))
		fail_msg("stalled at %llu of %u: lost wake-up?",
			 (unsigned long long)items_done(&q), ITEMS);
	assert_true(wait_all_asleep(p));

	uint64_t wrong = 0;
	for (uint64_t i = 0; i < ITEMS; i++)
		wrong += q.count[i] != 1;
	assert_int_equal(wrong, 0);
	assert_int_equal(__atomic_load_n(&q.bad_scratch, __ATOMIC_RELAXED), 0);
	assert_int_equal(sum_stat(p, offsetof(struct pool_worker_stats, busy_polls)),
			 ITEMS);
	assert_true(sum_stat(p, offsetof(struct pool_worker_stats, polls)) >= ITEMS);
	assert_true(sum_stat(p, offsetof(struct pool_worker_stats, sleeps)) > 0);
	assert_true(quiet > 0);
	pool_stop(p);
	free(q.count);
}

/* One item at a time, submitted at random moments while the worker goes
 * to sleep (one spin, one yield): the window between its last poll and its
 * futex wait is where a wake-up would be lost. One worker, since a second
 * one asleep would be woken by the same pool_wake() and hide the loss. The
 * delays sweep the first 20 us after an item is done, where the worker
 * spins, yields and announces its sleep. */
static void test_no_lost_wakeup(void **state)
{
	(void)state;
	enum { ROUNDS = 5000 };
	struct queue q;
	queue_init(&q, ROUNDS);
	struct pool_config cfg = {
		.workers = 1,
		.pin = true,
		.spin_polls = 1,
		.yield_polls = 1,
		.sleep_max_us = 10u * 1000000u,
	};
	struct pool *p = start(&cfg, queue_poll, &q);
	unsigned seed = 777;
	for (uint64_t i = 1; i <= ROUNDS; i++) {
		queue_submit(&q, i);
		pool_wake(p);
		if (!wait_done(&q, i))
			fail_msg("round %llu: item not processed in 5 s: lost wake-up",
				 (unsigned long long)i);
		spin_ns((uint64_t)(rand_r(&seed) % 20000));
	}
	uint64_t wrong = 0;
	for (uint64_t i = 0; i < ROUNDS; i++)
		wrong += q.count[i] != 1;
	assert_int_equal(wrong, 0);
	pool_stop(p);
	free(q.count);
}

/* All asleep with a 30 s timeout; one item and a pool_wake(): processed
 * within seconds, by a worker whose futex wait ended by the wake-up. */
static void test_wake_after_sleep(void **state)
{
	(void)state;
	struct queue q;
	queue_init(&q, 1);
	struct pool_config cfg = {
		.workers = 2,
		.pin = true,
		.spin_polls = 10,
		.yield_polls = 2,
		.sleep_max_us = 30u * 1000000u,
	};
	struct pool *p = start(&cfg, queue_poll, &q);
	assert_true(wait_all_asleep(p));
	sleep_us(20000); /* into the kernel, not just announced */
	uint64_t sleeps = sum_stat(p, offsetof(struct pool_worker_stats, sleeps));
	uint64_t wakeups = sum_stat(p, offsetof(struct pool_worker_stats, wakeups));
	assert_true(sleeps >= pool_size(p));

	queue_submit(&q, 1);
	pool_wake(p);
	assert_true(wait_done(&q, 1));
	assert_int_equal(q.count[0], 1);
	assert_true(sum_stat(p, offsetof(struct pool_worker_stats, wakeups)) > wakeups);
	assert_int_equal(sum_stat(p, offsetof(struct pool_worker_stats, busy_polls)), 1);
	pool_stop(p);
	free(q.count);
}

/* Doorbells (workers/pool.h): a queue whose owner, another thread here,
 * rings a word instead of calling pool_wake(). */
struct bell_queue {
	struct queue q; /* first: queue_poll() takes the arg as a queue */
	uint32_t bell;  /* the doorbell (a futex word) */
	uint32_t marked; /* the workers' mark: ring */
	uint32_t awakes; /* awake() calls */
};

/* The fences of D1 and D2: a seq_cst read-modify-write of one word by
 * both sides, which ThreadSanitizer models (it takes no fence; the
 * daemon's fence faces another process, where it sees nothing anyway). */
static uint32_t fence_word;

static unsigned bell_announce(void *arg, unsigned index, struct pool_doorbell *out,
			      unsigned max)
{
	(void)index;
	struct bell_queue *b = arg;
	assert_true(max >= 1);
	__atomic_store_n(&b->marked, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&fence_word, 0, __ATOMIC_SEQ_CST);
	out[0].word = &b->bell;
	out[0].seen = __atomic_load_n(&b->bell, __ATOMIC_ACQUIRE);
	return 1;
}

static void bell_awake(void *arg, unsigned index)
{
	(void)index;
	struct bell_queue *b = arg;
	__atomic_store_n(&b->marked, 0, __ATOMIC_RELAXED);
	__atomic_fetch_add(&b->awakes, 1, __ATOMIC_RELAXED);
}

static struct pool_doorbells_ops bell_ops = {bell_announce, bell_awake};

/* The owner's D2: published, fenced, rung where marked. */
static void bell_ring(struct bell_queue *b)
{
	__atomic_fetch_add(&fence_word, 0, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&b->marked, __ATOMIC_RELAXED) == 0)
		return;
	__atomic_fetch_add(&b->bell, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &b->bell, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

/* All asleep with a 30 s timeout, then items with only a doorbell rung, no
 * pool_wake(): each processed within seconds by a worker whose wait ended
 * by a wake-up, and the mark taken back each time (awake). Where the kernel
 * lacks futex_waitv, skipped. A doorbell set without awake() is refused. */
static void test_doorbell_wakes(void **state)
{
	(void)state;
#ifdef __NR_futex_waitv
	if (syscall(__NR_futex_waitv, NULL, 0, 0, NULL, 0) < 0 && errno == ENOSYS)
		skip();
#else
	skip();
#endif
	struct bell_queue b = {0};
	queue_init(&b.q, 5);
	struct pool_doorbells_ops half = {bell_announce, NULL};
	struct pool_config cfg = {
		.workers = 2,
		.pin = true,
		.spin_polls = 10,
		.yield_polls = 2,
		.sleep_max_us = 30u * 1000000u,
		.doorbells = &half,
	};
	char err[128];
	errno = 0;
	assert_null(pool_start(&cfg, queue_poll, &b, err, sizeof(err)));
	assert_int_equal(errno, EINVAL);
	assert_non_null(strstr(err, "awake"));

	cfg.doorbells = &bell_ops;
	struct pool *p = start(&cfg, queue_poll, &b);
	for (uint64_t i = 1; i <= 5; i++) {
		assert_true(wait_all_asleep(p));
		sleep_us(20000); /* into the kernel, not just announced */
		assert_int_equal(__atomic_load_n(&b.marked, __ATOMIC_RELAXED), 1);
		uint64_t wakeups = sum_stat(p, offsetof(struct pool_worker_stats, wakeups));
		uint32_t awakes = __atomic_load_n(&b.awakes, __ATOMIC_RELAXED);
		queue_submit(&b.q, i);
		bell_ring(&b);
		assert_true(wait_done(&b.q, i));
		assert_int_equal(b.q.count[i - 1], 1);
		assert_true(sum_stat(p, offsetof(struct pool_worker_stats, wakeups)) > wakeups);
		assert_true(__atomic_load_n(&b.awakes, __ATOMIC_RELAXED) > awakes);
	}
	pool_stop(p);
	free(b.q.count);
}

static unsigned always_busy(void *arg, unsigned index, void *scratch)
{
	(void)index;
	(void)scratch;
	__atomic_fetch_add((uint64_t *)arg, 1, __ATOMIC_RELAXED);
	return 1;
}

/* Stop returns and joins with work pending: with workers that never run
 * out of work, and with a queue that still holds most of a million items. */
static void test_stop_with_work_pending(void **state)
{
	(void)state;
	uint64_t calls = 0;
	struct pool_config cfg = {.workers = 2, .pin = true};
	struct pool *p = start(&cfg, always_busy, &calls);
	while (__atomic_load_n(&calls, __ATOMIC_RELAXED) < 1000)
		sched_yield();
	pool_stop(p);
	uint64_t after = __atomic_load_n(&calls, __ATOMIC_RELAXED);
	sleep_us(10000);
	/* Joined: nobody polls any more. */
	assert_int_equal(__atomic_load_n(&calls, __ATOMIC_RELAXED), after);

	struct queue q;
	queue_init(&q, ITEMS);
	p = start(&cfg, queue_poll, &q);
	queue_submit(&q, ITEMS);
	pool_wake(p);
	pool_stop(p);
	uint64_t done = items_done(&q), sum = 0, wrong = 0;
	for (uint64_t i = 0; i < ITEMS; i++) {
		sum += q.count[i];
		wrong += q.count[i] > 1;
	}
	assert_int_equal(wrong, 0);
	assert_int_equal(sum, done);
	free(q.count);
}

static unsigned never_busy(void *arg, unsigned index, void *scratch)
{
	(void)arg;
	(void)index;
	(void)scratch;
	return 0;
}

/* Stores work (value) in *word, wakes the pool and waits until a poll
 * has brought the word down to 0. */
static void hand_and_wait(struct pool *p, uint32_t *word, uint32_t value)
{
	/* Release — partner the poll's exchange or acquire load. */
	__atomic_store_n(word, value, __ATOMIC_RELEASE);
	pool_wake(p);
	uint64_t deadline = now_ns() + WAIT_NS;
	/* Acquire — partner the poll's exchange or release store. */
	while (__atomic_load_n(word, __ATOMIC_ACQUIRE) != 0)
		assert_true(now_ns() < deadline);
}

static uint64_t worker0_polls(struct pool *p)
{
	struct pool_worker_stats st;
	assert_int_equal(pool_worker_stats(p, 0, &st), 0);
	return st.polls;
}

/* One item at a time (flag), or a stream of its own: while budget > 0,
 * every other poll does work (busy, idle, busy, ...), whatever the time,
 * so the ladder sees a stream of gaps of one idle poll. The test writes
 * flag, budget and skip only while the worker sleeps (or, flag, before it
 * takes it). */
struct stream {
	uint32_t flag;
	uint32_t budget;
	bool skip;
	uint64_t calls;
	uint64_t calls_at_end; /* calls when the budget ran out */
	/* The worker's clock at its last item and at its last poll: how
	 * long it went on polling after the item, whatever held the test
	 * thread up meanwhile. */
	uint64_t last_item_ns;
	uint64_t last_poll_ns;
};

static unsigned stream_poll(void *arg, unsigned index, void *scratch)
{
	(void)index;
	(void)scratch;
	struct stream *s = arg;
	/* Relaxed: written by the worker only, read by the test once it is
	 * asleep (pool_sleeping's acquire). */
	uint64_t calls = __atomic_load_n(&s->calls, __ATOMIC_RELAXED) + 1;
	__atomic_store_n(&s->calls, calls, __ATOMIC_RELAXED);
	uint64_t t = now_ns();
	__atomic_store_n(&s->last_poll_ns, t, __ATOMIC_RELAXED);
	/* Acq_rel — partner the test's release store: one item of work. */
	if (__atomic_exchange_n(&s->flag, 0, __ATOMIC_ACQ_REL)) {
		__atomic_store_n(&s->last_item_ns, t, __ATOMIC_RELAXED);
		return 1;
	}
	/* Acquire — partner the test's release store of the budget, after
	 * its store of skip. */
	uint32_t budget = __atomic_load_n(&s->budget, __ATOMIC_ACQUIRE);
	if (budget == 0)
		return 0;
	bool skip = __atomic_load_n(&s->skip, __ATOMIC_RELAXED);
	__atomic_store_n(&s->skip, !skip, __ATOMIC_RELAXED);
	if (skip)
		return 0;
	if (budget == 1) {
		__atomic_store_n(&s->calls_at_end, calls, __ATOMIC_RELAXED);
		__atomic_store_n(&s->last_item_ns, t, __ATOMIC_RELAXED);
	}
	/* Release — partner the test's acquire wait for 0. */
	__atomic_store_n(&s->budget, budget - 1, __ATOMIC_RELEASE);
	return 1;
}

/* Has stream_poll do n items, work every other poll, and waits until the
 * worker sleeps after them. */
static void run_stream(struct pool *p, struct stream *st, uint32_t n)
{
	/* Relaxed: ordered by hand_and_wait's release store of the budget. */
	__atomic_store_n(&st->skip, false, __ATOMIC_RELAXED);
	hand_and_wait(p, &st->budget, n);
	assert_true(wait_all_asleep(p));
}

/* The timed backoff adapts (workers/idle_ladder.c; stepped by hand with
 * a made-up clock in unit.idle_ladder). Items far apart (each after the
 * worker is asleep, over 1 ms apart): the worker sleeps after exactly two
 * idle polls, the one that finds nothing and the one that announces the
 * sleep; the ladder before it spun 1,000 polls and 2 ms and yielded 50
 * times after each. A stream with work every other poll (400 items):
 * never a sleep in it (one would last the 10 s sleep_max_us: no
 * wake-up comes), and after its last item the spin is back: over
 * POOL_SPIN_POLLS_DEFAULT + POOL_YIELD_POLLS_DEFAULT idle polls before
 * the sleep. Both counted in polls, not time: a slow machine (TSan, a
 * loaded CI) passes as a quick one. */
static void test_timed_ladder_adapts(void **state)
{
	(void)state;
	/* The spin of a pool with doorbells (this one is woken by
	 * pool_wake() alone). */
	struct pool_config cfg = {.workers = 1, .pin = true,
				  .spin_us = POOL_SPIN_US_DEFAULT,
				  .sleep_max_us = 10u * 1000000u};
	struct stream st = {0};
	struct pool *p = start(&cfg, stream_poll, &st);
	assert_true(wait_all_asleep(p));
	sleep_us(20000); /* a long first gap: the average is over 5 ms */
	for (int round = 0; round < 4; round++) {
		uint64_t before = worker0_polls(p);
		hand_and_wait(p, &st.flag, 1);
		assert_true(wait_all_asleep(p));
		uint64_t polls = worker0_polls(p) - before;
		print_message("sparse item %d: %llu polls\n", round,
			      (unsigned long long)polls);
		/* The wake-up's busy poll and two idle ones. */
		assert_int_equal(polls, 3);
		sleep_us(1000);
	}

	run_stream(p, &st, 400);
	uint64_t after = __atomic_load_n(&st.calls, __ATOMIC_RELAXED) -
			 __atomic_load_n(&st.calls_at_end, __ATOMIC_RELAXED);
	print_message("after a stream: %llu idle polls before the sleep\n",
		      (unsigned long long)after);
	assert_true(after > POOL_SPIN_POLLS_DEFAULT + POOL_YIELD_POLLS_DEFAULT);
	pool_stop(p);
}

/* The default config without doorbells, whose producers in other
 * processes could not wake it: after a stream (stream_poll's own, as
 * above) the worker polls on for POOL_SPIN_US_NO_DOORBELLS (2 ms) before
 * it sleeps, as it did before the ladder adapted (with the count-only spin
 * of long ago it slept within about 100 us). Timed by the worker's own
 * clock at its polls. */
static void test_default_without_doorbells_spins_long(void **state)
{
	(void)state;
	struct pool_config cfg = {.workers = 1, .pin = true, .yield_polls = 1};
	struct stream st = {0};
	struct pool *p = start(&cfg, stream_poll, &st);
	assert_true(wait_all_asleep(p));
	run_stream(p, &st, 400);
	uint64_t polled = __atomic_load_n(&st.last_poll_ns, __ATOMIC_RELAXED) -
			  __atomic_load_n(&st.last_item_ns, __ATOMIC_RELAXED);
	print_message("without doorbells: polled %.2f ms after a stream\n",
		      (double)polled / 1e6);
	assert_true(polled >= (uint64_t)POOL_SPIN_US_NO_DOORBELLS * 1000u);
	pool_stop(p);
}

/* Stop wakes sleepers: with a 30 s sleep, pool_stop() takes seconds at most. */
static void test_stop_while_asleep(void **state)
{
	(void)state;
	struct pool_config cfg = {.workers = 2, .pin = true, .spin_polls = 1,
				  .yield_polls = 1,
				  .sleep_max_us = 30u * 1000000u};
	struct pool *p = start(&cfg, never_busy, NULL);
	assert_true(wait_all_asleep(p));
	sleep_us(20000);
	uint64_t t0 = now_ns();
	pool_stop(p);
	assert_true(now_ns() - t0 < WAIT_NS);
}

/* Idle workers do not spin: 300 ms idle costs the whole process under
 * 60 ms of CPU with the default backoff. */
static void test_idle_cpu(void **state)
{
	(void)state;
	struct pool_config cfg = {.workers = 2, .pin = true};
	struct pool *p = start(&cfg, never_busy, NULL);
	assert_true(wait_all_asleep(p));
	sleep_us(50000);
	struct rusage r0, r1;
	getrusage(RUSAGE_SELF, &r0);
	sleep_us(300000);
	getrusage(RUSAGE_SELF, &r1);
	long used_us = (r1.ru_utime.tv_sec - r0.ru_utime.tv_sec) * 1000000L +
		       (r1.ru_utime.tv_usec - r0.ru_utime.tv_usec) +
		       (r1.ru_stime.tv_sec - r0.ru_stime.tv_sec) * 1000000L +
		       (r1.ru_stime.tv_usec - r0.ru_stime.tv_usec);
	print_message("idle: %ld us of CPU in 300 ms with %u workers\n", used_us,
		      pool_size(p));
	assert_true(used_us < 60000);
	pool_stop(p);
}

static void *synchronize_thread(void *arg)
{
	(void)arg;
	urcu_qsbr_synchronize_rcu();
	return NULL;
}

static void synchronize_within_bound(void)
{
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, synchronize_thread, NULL), 0);
	struct timespec deadline;
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += 5;
	int r = pthread_timedjoin_np(t, NULL, &deadline);
	if (r != 0) {
		/* The writer is stuck for good; nothing can be cleaned up. */
		fprintf(stderr, "synchronize_rcu did not return in 5 s\n");
		_exit(1);
	}
}

/* A writer's grace period does not wait for sleeping workers. */
static void test_synchronize_rcu_while_asleep(void **state)
{
	(void)state;
	struct pool_config cfg = {.workers = 2, .pin = true, .spin_polls = 1,
				  .yield_polls = 1,
				  .sleep_max_us = 30u * 1000000u};
	struct pool *p = start(&cfg, never_busy, NULL);
	assert_true(wait_all_asleep(p));
	sleep_us(20000);
	synchronize_within_bound();
	synchronize_within_bound();
	pool_stop(p);
}

/* Nor for busy ones: each poll ends in a quiescent state. */
static void test_synchronize_rcu_while_busy(void **state)
{
	(void)state;
	uint64_t calls = 0;
	struct pool_config cfg = {.workers = 2, .pin = true};
	struct pool *p = start(&cfg, always_busy, &calls);
	while (__atomic_load_n(&calls, __ATOMIC_RELAXED) < 1000)
		sched_yield();
	for (int i = 0; i < 20; i++)
		synchronize_within_bound();
	pool_stop(p);
}

/* ---- RCU readers: polls read a pointer the test replaces and frees ---- */

#ifndef UNDER_TSAN
struct boxed {
	uint64_t magic;
	uint64_t generation;
};

#define BOXED_MAGIC 0x5eed5eed5eed5eedull

static struct boxed *current_box;
static uint64_t torn_reads;

static unsigned rcu_poll(void *arg, unsigned index, void *scratch)
{
	(void)arg;
	(void)index;
	(void)scratch;
	struct boxed *b = rcu_dereference(current_box);
	if (b->magic != BOXED_MAGIC)
		__atomic_fetch_add(&torn_reads, 1, __ATOMIC_RELAXED);
	/* Every other poll idle, so workers also yield and sleep. */
	return (unsigned)(b->generation & 1);
}

#endif

/* Readers never see a freed box (ASan would report the read after free);
 * skipped under TSan, which cannot see liburcu's grace periods. */
static void test_rcu_readers(void **state)
{
	(void)state;
#ifdef UNDER_TSAN
	skip();
#else
	struct boxed *b = malloc(sizeof(*b));
	assert_non_null(b);
	*b = (struct boxed){BOXED_MAGIC, 0};
	rcu_assign_pointer(current_box, b);
	struct pool_config cfg = {.workers = 2, .pin = true, .spin_polls = 5,
				  .yield_polls = 2, .sleep_max_us = 200};
	struct pool *p = start(&cfg, rcu_poll, NULL);
	for (uint64_t g = 1; g <= 2000; g++) {
		struct boxed *nb = malloc(sizeof(*nb));
		assert_non_null(nb);
		*nb = (struct boxed){BOXED_MAGIC, g};
		struct boxed *old = rcu_xchg_pointer(&current_box, nb);
		pool_wake(p);
		urcu_qsbr_synchronize_rcu();
		old->magic = 0;
		free(old);
	}
	pool_stop(p);
	free(current_box);
	assert_int_equal(torn_reads, 0);
#endif
}

/* ---- placement and scratch ---- */

static int seen_cpu[8];
static void *seen_scratch[8];
static uint64_t cpu_mismatch;
static uint64_t scratch_dirty;

static struct pool *where_pool; /* set after pool_start() returns */

static unsigned where_poll(void *arg, unsigned index, void *scratch)
{
	(void)arg;
	/* Acquire — partner the release store in test_pinning_and_scratch(). */
	const struct pool *p = __atomic_load_n(&where_pool, __ATOMIC_ACQUIRE);
	if (p == NULL || index >= 8)
		return 0;
	struct pool_worker_stats st;
	pool_worker_stats(p, index, &st);
	int cpu = sched_getcpu();
	__atomic_store_n(&seen_cpu[index], cpu, __ATOMIC_RELAXED);
	if (st.cpu >= 0 && cpu != st.cpu)
		__atomic_fetch_add(&cpu_mismatch, 1, __ATOMIC_RELAXED);
	if (__atomic_load_n(&seen_scratch[index], __ATOMIC_RELAXED) == NULL) {
		const unsigned char *s = scratch;
		for (size_t i = 0; i < (1u << 20); i++)
			if (s[i] != 0) {
				__atomic_fetch_add(&scratch_dirty, 1, __ATOMIC_RELAXED);
				break;
			}
		__atomic_store_n(&seen_scratch[index], scratch, __ATOMIC_RELAXED);
	}
	return 0;
}

/* Each pinned worker runs on the cpu it reports, which is a core of its
 * own when there are enough; its scratch is its own, page-aligned and
 * zeroed. */
static void test_pinning_and_scratch(void **state)
{
	(void)state;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned n = ncpu >= 2 ? 2 : 1;
	struct pool_config cfg = {.workers = n, .pin = true,
				  .scratch_bytes = 1u << 20, .spin_polls = 100,
				  .yield_polls = 10, .sleep_max_us = 1000};
	struct pool *p = start(&cfg, where_poll, NULL);
	__atomic_store_n(&where_pool, p, __ATOMIC_RELEASE);
	pool_wake(p);
	uint64_t deadline = now_ns() + WAIT_NS;
	for (unsigned i = 0; i < n; i++)
		while (__atomic_load_n(&seen_scratch[i], __ATOMIC_RELAXED) == NULL)
			assert_true(now_ns() < deadline);
	sleep_us(20000);
	for (unsigned i = 0; i < n; i++) {
		struct pool_worker_stats st;
		assert_int_equal(pool_worker_stats(p, i, &st), 0);
		assert_true(st.cpu >= 0);
		assert_true(st.numa_node >= 0);
		assert_int_equal(__atomic_load_n(&seen_cpu[i], __ATOMIC_RELAXED), st.cpu);
		void *mine = __atomic_load_n(&seen_scratch[i], __ATOMIC_RELAXED);
		assert_int_equal((uintptr_t)mine % 4096, 0);
		for (unsigned j = 0; j < i; j++) {
			struct pool_worker_stats other;
			pool_worker_stats(p, j, &other);
			assert_int_not_equal(st.cpu, other.cpu);
			assert_ptr_not_equal(mine, __atomic_load_n(&seen_scratch[j],
								  __ATOMIC_RELAXED));
		}
	}
	assert_int_equal(__atomic_load_n(&cpu_mismatch, __ATOMIC_RELAXED), 0);
	assert_int_equal(__atomic_load_n(&scratch_dirty, __ATOMIC_RELAXED), 0);
	struct pool_worker_stats st;
	assert_int_equal(pool_worker_stats(p, n, &st), -EINVAL);
	assert_int_equal(st.cpu, -1);
	pool_stop(p);
	__atomic_store_n(&where_pool, NULL, __ATOMIC_RELAXED);
}

/* Unpinned, default size: at least one worker, cpu -1, polls run. */
static void test_unpinned_defaults(void **state)
{
	(void)state;
	uint64_t calls = 0;
	struct pool_config cfg = {.pin = false, .scratch_bytes = 100};
	struct pool *p = start(&cfg, always_busy, &calls);
	assert_true(pool_size(p) >= 1);
	while (__atomic_load_n(&calls, __ATOMIC_RELAXED) < 100)
		sched_yield();
	struct pool_worker_stats st;
	assert_int_equal(pool_worker_stats(p, 0, &st), 0);
	assert_int_equal(st.cpu, -1);
	pool_stop(p);
	pool_stop(NULL);
}

static void test_bad_config(void **state)
{
	(void)state;
	char err[256] = "";
	errno = 0;
	assert_null(pool_start(NULL, never_busy, NULL, err, sizeof(err)));
	assert_int_equal(errno, EINVAL);
	assert_non_null(strstr(err, "config"));

	struct pool_config cfg = {.workers = POOL_WORKERS_MAX + 1};
	errno = 0;
	assert_null(pool_start(&cfg, never_busy, NULL, err, sizeof(err)));
	assert_int_equal(errno, EINVAL);
	assert_non_null(strstr(err, "workers"));

	cfg.workers = 1;
	errno = 0;
	assert_null(pool_start(&cfg, NULL, NULL, err, sizeof(err)));
	assert_int_equal(errno, EINVAL);
	assert_non_null(strstr(err, "poll"));
}

/* Started under a narrower CPU set (as with taskset -c), pinned workers
 * pin inside it: every worker reports an allowed cpu, and runs there. */
static void test_pins_inside_the_process_cpu_set(void **state)
{
	(void)state;
	cpu_set_t saved, only;
	assert_int_equal(sched_getaffinity(0, sizeof(saved), &saved), 0);
	int last = -1;
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &saved))
			last = c;
	assert_true(last >= 0);
	CPU_ZERO(&only);
	CPU_SET(last, &only);
	assert_int_equal(sched_setaffinity(0, sizeof(only), &only), 0);
	struct pool_config cfg = {.workers = 2, .pin = true, .spin_polls = 1,
				  .yield_polls = 1, .sleep_max_us = 1000};
	struct pool *p = start(&cfg, where_poll, NULL);
	assert_int_equal(sched_setaffinity(0, sizeof(saved), &saved), 0);
	for (unsigned i = 0; i < pool_size(p); i++) {
		struct pool_worker_stats st;
		assert_int_equal(pool_worker_stats(p, i, &st), 0);
		if (st.cpu != last)
			fail_msg("worker %u pinned to cpu %d; the process was given "
				 "only cpu %d", i, st.cpu, last);
	}
	pool_stop(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_config),
		cmocka_unit_test(test_unpinned_defaults),
		cmocka_unit_test(test_pinning_and_scratch),
		cmocka_unit_test(test_pins_inside_the_process_cpu_set),
		cmocka_unit_test(test_wake_after_sleep),
		cmocka_unit_test(test_doorbell_wakes),
		cmocka_unit_test(test_stop_while_asleep),
		cmocka_unit_test(test_stop_with_work_pending),
		cmocka_unit_test(test_idle_cpu),
		cmocka_unit_test(test_timed_ladder_adapts),
		cmocka_unit_test(test_default_without_doorbells_spins_long),
		cmocka_unit_test(test_synchronize_rcu_while_asleep),
		cmocka_unit_test(test_synchronize_rcu_while_busy),
		cmocka_unit_test(test_rcu_readers),
		cmocka_unit_test(test_no_lost_wakeup),
		cmocka_unit_test(test_every_item_exactly_once),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
