/* The worker thread pool: N threads, each pinned to its own core, each with
 * scratch memory on its own NUMA node, each calling a poll function over and
 * over and sleeping when there is nothing to do.
 *
 * Concurrency contract:
 * - pool_start() and pool_stop() are called by one owner thread, once each.
 * - pool_wake(), pool_size(), pool_sleeping() and pool_worker_stats() may be
 *   called from any thread, including from inside a poll function, at any
 *   time between pool_start() returning and pool_stop() being called.
 * - The poll function runs on the pool's threads only; worker `index` always
 *   calls it from the same thread with the same scratch. Workers are liburcu
 *   QSBR reader threads (registered, online while they poll): a poll may read
 *   RCU-protected data, and each poll ends in a quiescent state, so it must
 *   not keep RCU-protected pointers from one call to the next.
 * - Ordering: everything a thread wrote before pool_wake() is visible to any
 *   poll that begins after a worker woke or noticed the wake-up. Each worker
 *   reads the wake-up word before each poll, so work published before
 *   pool_wake() is either seen by a poll already under way or by the next
 *   one; it is never slept on.
 */
#ifndef SHMSCHED_WORKERS_POOL_H
#define SHMSCHED_WORKERS_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pool;

struct pool_config {
	/* Worker threads; 0: one per core less one (at least 1), leaving a
	 * core for the thread that feeds them. At most POOL_WORKERS_MAX. */
	unsigned workers;
	/* Pin each worker to a core of its own with hwloc (wrapping around,
	 * with a warning, when there are more workers than cores). */
	bool pin;
	/* Scratch memory per worker, zeroed, page-aligned, from libnuma on the
	 * worker's NUMA node where there is one; 0: none (scratch is NULL). */
	size_t scratch_bytes;
	/* Idle polls spent spinning before the worker starts yielding, or
	 * before the timed spin (0: POOL_SPIN_POLLS_DEFAULT). */
	unsigned spin_polls;
	/* Then, idle microseconds spent spinning, however many polls that
	 * takes; while the recent gaps between work are longer than this the
	 * worker skips the spin and sleeps at once (workers/idle_ladder.h).
	 * 0, with spin_polls 0 too (the default config spins by time):
	 * POOL_SPIN_US_DEFAULT with doorbells, POOL_SPIN_US_NO_DOORBELLS
	 * without them or where futex_waitv is missing; 0 with spin_polls
	 * given: none (a caller that counts polls, as the tests do, gets its
	 * count alone, and no adapting). */
	uint32_t spin_us;
	/* Idle polls with a sched_yield() before each, after spinning and
	 * before sleeping (0: POOL_YIELD_POLLS_DEFAULT). */
	unsigned yield_polls;
	/* Longest sleep, in microseconds, before an idle worker polls again
	 * even without a wake-up (0: POOL_SLEEP_MAX_US_DEFAULT). */
	uint32_t sleep_max_us;
	/* Optional: other processes' doorbells (see pool_doorbells_fn), so
	 * that they can wake a sleeping worker; `awake` is then required. */
	struct pool_doorbells_ops *doorbells;
};

/* A futex word in memory shared with another process, and the value a
 * worker read from it before the poll after which it sleeps: a FUTEX_WAKE
 * on the word after changing it wakes the worker (futex_waitv, Linux 5.16;
 * on older kernels only the sleep's timeout does). */
struct pool_doorbell {
	uint32_t *word;
	uint32_t seen;
};
/* futex_waitv takes 128 words; the worker's own wake-up word is one. */
#define POOL_DOORBELLS_MAX 127u

struct pool_doorbells_ops {
	/* Before a poll after which worker `index` sleeps if it finds
	 * nothing: announce the sleep where the doorbells' owners look, then
	 * (after a full fence) fill out[0..n) with each word and the value it
	 * holds now; returns n <= max. Runs on the worker, RCU-online. */
	unsigned (*announce)(void *arg, unsigned index, struct pool_doorbell *out,
			     unsigned max);
	/* A poll after an announcement found work: take the announcement back. */
	void (*awake)(void *arg, unsigned index);
};

#define POOL_WORKERS_MAX 1024u
/* Polls before the clock is first read: a gap this short reads none. */
#define POOL_SPIN_POLLS_DEFAULT 16u
/* About a wake-up by a doorbell (bench/pool_wakeup.c: median 39.5 us on
 * the loaded 2-vCPU VM), the break-even of a spin against a sleep: a gap
 * this short a spin catches at once; a longer one the spin would pay in
 * full and then sleep anyway, so while gaps are longer the worker sleeps
 * at once (idle_ladder.h). At the engine's half rate (~3 us between pods)
 * it spins; at the gateway's 5,000-10,000 requests/s (100-200 us) it
 * sleeps, leaving the core to nginx and the gateway. With doorbells only:
 * it was 2 ms, before them, and is without them. */
#define POOL_SPIN_US_DEFAULT 50u
/* Without doorbells a producer in another process cannot wake a sleeping
 * worker, and its pod waits up to sleep_max_us: the spin covers a steady
 * stream's gaps up to this (it still adapts: sparser work, which would
 * have found the worker asleep anyway, sleeps at once). */
#define POOL_SPIN_US_NO_DOORBELLS 2000u
#define POOL_YIELD_POLLS_DEFAULT 50u
#define POOL_SLEEP_MAX_US_DEFAULT 1000u

/* Polls for work on worker `index` (0 .. pool_size() - 1) with that worker's
 * scratch memory. Returns how much work it did; 0 means it found none. */
typedef unsigned (*pool_poll_fn)(void *arg, unsigned index, void *scratch);

/* Starts the workers and returns once each one is pinned, has its scratch
 * memory and has registered with liburcu; from then on they poll.
 * Returns NULL with errno set and a message in err (when err_len > 0) on:
 *   EINVAL  cfg or poll is NULL, or cfg->workers > POOL_WORKERS_MAX;
 *   ENOMEM  the pool or a worker's scratch memory could not be allocated;
 *   ENODEV  hwloc could not load the machine's topology;
 *   EAGAIN  a thread could not be created;
 *   other   hwloc_set_cpubind() failed for a worker (its errno).
 * Logs one line per worker at info level: index, cpu, NUMA node, where its
 * scratch memory came from. */
struct pool *pool_start(const struct pool_config *cfg, pool_poll_fn poll,
			void *arg, char *err, size_t err_len);

/* New work may have arrived: wakes the sleeping workers. When none sleeps
 * this is one atomic add and one load, no system call. */
void pool_wake(struct pool *p);

/* Asks every worker to stop after its current poll (work still pending
 * stays pending), wakes the sleeping ones, joins them and frees the pool and
 * the scratch memory. p may be NULL. Call once, from the owner thread,
 * after every other thread has stopped calling pool_ functions on p; polls
 * still under way may call them until they return. */
void pool_stop(struct pool *p);

/* The number of workers. */
unsigned pool_size(const struct pool *p);

/* How many workers are asleep or about to be (announced, not yet back).
 * A snapshot for tests, benchmarks and monitoring. When it reads
 * pool_size(p), every worker's poll has returned and its counters, read
 * after this, are the ones it wrote before going to sleep. */
unsigned pool_sleeping(const struct pool *p);

struct pool_worker_stats {
	uint64_t polls;      /* calls to the poll function */
	uint64_t busy_polls; /* of which returned nonzero */
	uint64_t sleeps;     /* futex waits entered */
	uint64_t wakeups;    /* of which ended by a wake-up, not the timeout */
	int cpu;             /* OS index of the PU it is pinned to; -1 unpinned */
	int numa_node;       /* its NUMA node (libnuma numbering); -1 unknown */
};

/* Copies worker `index`'s counters. They are read while the worker runs,
 * each one on its own, so they may be a few polls apart; once every poll has
 * returned for good (nothing more to do, all asleep) they add up exactly.
 * Returns 0, or -EINVAL when index >= pool_size(p) (out is then zeroed,
 * cpu and numa_node -1). */
int pool_worker_stats(const struct pool *p, unsigned index,
		      struct pool_worker_stats *out);

/* Fair share between the producers one worker serves: deficit round robin
 * on measured time. A producer's first turn in each round of its worker
 * (see "Light producers go first" below) adds POOL_FAIR_QUANTUM_NS to its
 * allowance, its credit capped at POOL_FAIR_CARRY_NS and a quantum beyond
 * one pod's cost (enough to save up for a pod dearer than a quantum and to
 * keep what it could have used, never enough to hoard); while the
 * allowance covers a pod at its recent cost and it has pods, it is served
 * bursts of as many as fit (1 .. POOL_FAIR_BURST; 1 while its cost is not
 * known), each charged the time it took. The turn ends when the allowance
 * is spent (the debt carries over); when the producer has no pod left (if
 * it had none all turn it keeps no credit; if it ran dry after some, as a
 * closed-loop producer does between its answers and its next submit, it
 * keeps the rest, up to the cap: what it could have used); or after
 * POOL_FAIR_BURSTS bursts. So every busy producer of a worker can use
 * about a quantum per round, however cheap or dear its pods: neither a
 * burst's cap on pods nor a moment's empty ring ends a cheap producer's
 * share (it used to get one burst a turn, a fraction of its quantum, beside
 * a noisy producer that spent all of its own).
 *
 * The quantum is as long as it is because a switch between producers costs
 * the next one: after a turn of pods that each scan every node, the cache
 * holds the other producer's lines, and the cheap producer's first pods
 * refill it on its own account (0.06-0.27 ms a switch with 1 ms turns,
 * measured on 10,000 nodes; docs/perf/2026-11-28-fair-share.md). With
 * 1 ms turns that was 13.7 % of a cheap producer's time (median), and on
 * a loaded machine its pods ran 1.4-1.5x their cost alone: half of the
 * worker, about 3x slower than alone, where an equal share sets the floor
 * at 2x. A 4 ms turn pays the refill a quarter as often (6.2 %). The
 * price: under saturation, a producer's pod may wait a 4 ms turn (plus a
 * pod) of each other busy producer of its worker, not 1 ms. The carried
 * credit stays at 1 ms, so a producer that ran dry is not given a turn of
 * two quanta.
 *
 * The cap on bursts (POOL_FAIR_BURSTS x POOL_FAIR_BURST = 4,096 pods a
 * turn) is above a quantum's worth of pods that cost 1 us or more; pods
 * cheaper than that end their turn early, and keep the rest (capped).
 *
 * Light producers go first (DRR++, MacGregor and Shi; the sparse flows of
 * FQ-CoDel, RFC 8290 section 4.2). A 4 ms turn made a producer that needs
 * little of its worker wait for each pod up to a whole turn of a busy one
 * (p50 2 ms, p99 4 ms beside a flood, 2 us and 58 us alone). Now:
 *  - A producer is heavy when its last turn ended with pods left (its
 *    allowance spent, or POOL_FAIR_BURSTS bursts); light when its last
 *    turn ran dry or was idle (it did not use all it had).
 *  - The quantum is given once per round, not per turn: pool_fair_turn
 *    takes the worker's round, and a producer's turn adds the quantum only
 *    in a round it has not had it in (an idle turn does not take it).
 *  - Between two bursts of a heavy producer's turn, the caller's cut()
 *    looks at the worker's other producers (one look per burst, not per
 *    pod); if one is light, has pods waiting and its allowance in this
 *    round covers a pod (pool_fair_light), the heavy turn ends there. The
 *    heavy producer keeps its remaining credit for the rest of the round,
 *    the light one is served next, and the worker's round does not end
 *    until a pass over its producers has no cut turn.
 * The bound: a light producer's pod that comes during a heavy turn waits
 * at most one burst of it (POOL_FAIR_BURST pods, or fewer if its allowance
 * is short) and the light turns before it, not the turn. It cannot be
 * gamed for time: in a round each producer has one quantum (plus what it
 * carried, capped as above), however many turns it is served in, so a
 * producer light every turn (one pod at a time) or light and heavy by
 * turns gets no more than its share; it is only served sooner. Its price
 * is more switches while a light producer has pods, each charged to the
 * producer served after it. */
#define POOL_FAIR_QUANTUM_NS INT64_C(4000000)
#define POOL_FAIR_BURST 32u
#define POOL_FAIR_BURSTS 128u
#define POOL_FAIR_CARRY_NS INT64_C(1000000)

struct pool_fair {
	int64_t deficit_ns; /* time it may still use; negative: its debt */
	uint64_t cost_ns;   /* its recent cost per pod, smoothed */
	/* The figure the rule is kept on: worker time charged to this
	 * producer (its bursts' spent_ns, summed; pool_fair_turn adds, the
	 * caller may reset it). Over the producers of one worker these add
	 * up to the time its turns served pods, so each one's share of the
	 * worker is its used_ns over their sum. */
	uint64_t used_ns;
	/* The worker's round in which it last had its quantum (0: never). */
	uint64_t round;
	/* Its last turn ended with pods left: it is cut for light ones. */
	bool heavy;
};

/* Serves up to `want` (1..POOL_FAIR_BURST) pods of the producer; returns
 * how many it took (0: it had none), or a negative errno to end the turn
 * (passed back), with the time they took in *spent_ns. */
typedef int (*pool_fair_burst_fn)(void *arg, unsigned want, uint64_t *spent_ns);

/* Whether the turn of a heavy producer ends here for a light one, asked
 * between its bursts (the caller looks at the worker's other producers:
 * pods waiting and pool_fair_light). */
typedef bool (*pool_fair_cut_fn)(void *arg);

/* One turn of one producer, under the rule above, in the worker's round
 * `round` (the caller starts it at 1 and adds one after each pass over the
 * worker's producers in which no turn was cut). `cut` may be NULL (never
 * cut); it is asked only in a heavy producer's turn, after a burst that
 * served pods. Returns the pods served (0 when its allowance does not
 * cover a pod yet: *out_of_time is then true, and the caller knows whether
 * it has pods waiting), or burst's negative return; either way f->used_ns
 * has grown by the time of the bursts that served pods. *cut_short is
 * true when cut() ended it. Pure but for burst and cut: tests step it
 * with made-up costs. */
int pool_fair_turn(struct pool_fair *f, uint64_t round, pool_fair_burst_fn burst,
		   pool_fair_cut_fn cut, void *arg, bool *out_of_time,
		   bool *cut_short);

/* Whether a producer with pods waiting may cut a heavy turn in round
 * `round`: it is light, and its allowance this round (the quantum added,
 * capped, if it has not had this round's) covers a pod at its recent
 * cost. Pure. */
bool pool_fair_light(const struct pool_fair *f, uint64_t round);

#endif
