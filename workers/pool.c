/* The worker thread pool: pinned threads that poll, back off and sleep.
 *
 * What: pool_start() makes N threads. Each pins itself to a core of its own
 * (hwloc, spread round-robin over the NUMA nodes; wrapping around with a
 * warning when there are more workers than cores), takes zeroed scratch
 * memory from libnuma on its node (an aligned heap block where libnuma
 * cannot serve that node), registers as a liburcu QSBR reader, and then
 * calls the poll function over and over until pool_stop().
 *
 * Backoff, per worker, counted in consecutive idle polls (a poll that did
 * work resets the count to 0), stepped by workers/idle_ladder.c:
 *   SPIN   idle < spin_polls, then for spin_us since the clock's first
 *          read (the clock read every 16 polls): poll again after a pause
 *          instruction;
 *   YIELD  idle < spin_polls + yield_polls: go RCU-offline, sched_yield(),
 *          come back online, poll again;
 *   SLEEP  otherwise: go RCU-offline and wait on the futex word wake_seq
 *          (and on the doorbells, below) for at most sleep_max_us, come
 *          back online, poll again. A worker that wakes and still finds
 *          nothing sleeps again at once: only a poll that did work sends
 *          it back to SPIN.
 * A ladder that spins by time (spin_us, the default: 50 us with doorbells,
 * 2 ms without them, when a sleeping worker's pod may wait sleep_max_us)
 * adapts: while the recent gaps between work have been longer than
 * spin_us, an idle worker skips SPIN and YIELD and sleeps after one more
 * poll, to be woken by pool_wake() or a doorbell. A spin that work does
 * not end in time costs its whole length, and on a machine whose cores
 * the producers share (2 cores: nginx, the gateway, a load generator)
 * that is their CPU.
 * An idle worker therefore costs one poll per sleep_max_us once asleep, and
 * spins for at most spin_polls polls and spin_us plus yield_polls yields
 * after its last work (none while work is sparse). A producer in another
 * process cannot call pool_wake(), so without a doorbell a pod that
 * finds the worker asleep waits up to sleep_max_us (at 200 pods/s on the
 * bench, p50 541 us and p90 999 us), and a steady stream should not let the
 * worker fall asleep between two pods.
 *
 * Doorbells (optional, pool_doorbells_ops): words in memory other processes
 * share, on which a sleeping worker also waits (futex_waitv):
 *     worker: D1 announce() marks the sleep where the owners look, fences,
 *               and reads each word into seen, before the poll; the poll
 *               finds nothing; the sleep waits on every word against its
 *               seen, as on wake_seq; a later poll that finds work calls
 *               awake() to take the mark back
 *     owner:  (publishes work where the poll looks)
 *             D2 full fence; if the mark is set: word += 1, FUTEX_WAKE
 *   Store-buffering again: either the poll after D1 sees the work, or D2
 *   sees the mark; then the owner's add comes after D1's read (or the poll
 *   would have seen the work it follows), so the kernel's compare fails or
 *   its FUTEX_WAKE finds the worker waiting. Owners are not trusted: a word
 *   they scribble on only wakes the worker early (a poll, then sleep
 *   again), a doorbell never rung leaves the timeout. Where futex_waitv is
 *   missing (Linux before 5.16) the worker waits on wake_seq alone.
 *
 * Invariants:
 * - No lost wake-up: work published before pool_wake() is found by a poll
 *   that starts after it, or by a poll under way, without waiting for the
 *   sleep timeout. The protocol, with labels used at each atomic:
 *     worker: W1 seen = load(wake_seq)          acquire, before each poll
 *             poll() finds nothing
 *             PS1 sleepers += 1                   seq_cst
 *             PS2 if load(wake_seq) == seen       seq_cst
 *                   FUTEX_WAIT(wake_seq, seen)   the kernel re-checks
 *             PS3 sleepers -= 1                   relaxed
 *     waker:  (publishes work, by its own means)
 *             K1 wake_seq += 1                   seq_cst (release for W1)
 *             K2 if load(sleepers) != 0          seq_cst
 *                   FUTEX_WAKE(wake_seq, all)
 *   If W1 reads K1's value (or a later one), K1 releases the work to the
 *   poll that follows. If not, PS1/PS2 against K1/K2 is the store-buffering
 *   pattern, all seq_cst: either PS2 sees K1 (seen is stale, no sleep) or K2
 *   sees PS1 and calls FUTEX_WAKE, which the kernel orders against the
 *   waiter's own compare of wake_seq with seen. The word is 32 bits; only
 *   exactly 2^32 wake-ups between W1 and PS2 could fool the compare, and
 *   then the timeout still bounds the sleep.
 * - A sleeping or yielding worker is RCU-offline, so a writer's
 *   rcu_synchronize() (shm/rcu.h) never waits for it; a polling worker
 *   announces a quiescent state after every poll, so it waits at most one
 *   poll per worker.
 * - Each worker's counters are written by that worker only.
 *
 * Wake-up latency: from pool_wake() to the poll that sees the work, one
 * futex wake and a thread switch-in for a sleeping worker (tens of
 * microseconds; bench/pool_wakeup.c measures it), one poll for a spinning
 * one. A missed FUTEX_WAKE (a bug, or a wake-up issued by something other
 * than pool_wake) costs at most sleep_max_us.
 *
 * Slow path only: pool_start() and pool_stop() allocate, log and lock; the
 * loop itself makes no system call while there is work.
 */
#include "workers/pool.h"

#include "base/base.h"

#include <errno.h>
#include <hwloc.h>
#include <limits.h>
#include <linux/futex.h>
#include <numa.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "shm/shm.h"
#include "workers/idle_ladder.h"

#define CACHE_LINE 64
#define PAGE_ALIGN 4096

enum scratch_source {
	SCRATCH_NONE,
	SCRATCH_NUMA,
	SCRATCH_HEAP,
};

enum gate_state {
	GATE_WAIT,  /* workers set up and wait */
	GATE_RUN,   /* every worker is ready: poll */
	GATE_ABORT, /* pool_start() failed: exit without polling */
};

struct pool_worker {
	/* Written by this worker only, with relaxed stores; read relaxed by
	 * pool_worker_stats(). Relaxed is enough: each is a counter read on
	 * its own and orders nothing. First on its own cache line. */
	_Alignas(CACHE_LINE) uint64_t polls;
	uint64_t busy_polls;
	uint64_t sleeps;
	uint64_t wakeups;

	/* Set before the thread starts, or by the thread before it reports to
	 * the gate (under gate_lock); read-only afterwards. */
	struct pool *pool;
	pthread_t thread;
	unsigned index;
	int cpu;
	int numa_node;
	hwloc_bitmap_t cpuset; /* NULL: unpinned; freed once started */
	void *scratch;
	enum scratch_source scratch_source;
	char scratch_note[64]; /* why the heap, for the log line */
	int start_err;         /* 0 or a negative errno */
	char start_msg[160];

	/* The worker's own: the doorbells it sleeps on (pool_doorbells_ops),
	 * and whether a sleep is announced. */
	struct pool_doorbell bells[POOL_DOORBELLS_MAX];
	bool announced;
};

struct pool {
	/* The wake-up line: written by pool_wake() and by workers going to
	 * sleep, read by every worker before each poll. */
	_Alignas(CACHE_LINE) uint32_t wake_seq; /* the futex word */
	uint32_t sleepers;
	uint32_t stop;

	/* Read-only once the workers run. */
	_Alignas(CACHE_LINE) pool_poll_fn poll;
	void *arg;
	unsigned n;
	unsigned spin_end;  /* idle polls that spin */
	uint64_t spin_ns;   /* then idle time that spins, 0: none */
	unsigned yield_end; /* idle polls that spin or yield */
	bool spin_by_doorbells; /* spin_ns the default with doorbells */
	struct timespec sleep_max;
	struct pool_doorbells_ops *doorbells; /* NULL: none */
	size_t scratch_bytes;
	hwloc_topology_t topo; /* only while starting */
	struct pool_worker *workers;

	/* The start gate: slow path, a plain mutex and condition. */
	pthread_mutex_t gate_lock;
	pthread_cond_t gate_cond;
	unsigned gate_ready;
	enum gate_state gate;
};

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#else
	__asm__ __volatile__("" ::: "memory");
#endif
}

static long futex_wait(uint32_t *word, uint32_t expected,
		       const struct timespec *timeout)
{
	return syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, expected, timeout,
		       NULL, 0);
}

static void futex_wake_all(uint32_t *word)
{
	syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

/* Set once futex_waitv is found missing (ENOSYS: a kernel before 5.16):
 * workers then sleep on their own word alone. Relaxed: a hint. */
static int waitv_missing;

/* FUTEX_WAIT on wake_seq and on n doorbells at once, up to the sleep's
 * timeout. As futex_wait: 0 (or the woken word's index) on a wake-up, -1
 * with errno EAGAIN (a word moved), ETIMEDOUT, EINTR, or EFAULT (a
 * producer's region unmapped meanwhile: a wake-up too, harmless). */
static long futex_wait_bells(struct pool *p, uint32_t seen,
			     const struct pool_doorbell *b, unsigned n)
{
#ifdef __NR_futex_waitv
	if (!__atomic_load_n(&waitv_missing, __ATOMIC_RELAXED)) {
		struct futex_waitv v[POOL_DOORBELLS_MAX + 1];
		memset(v, 0, (n + 1) * sizeof(v[0]));
		v[0].uaddr = (uintptr_t)&p->wake_seq;
		v[0].val = seen;
		v[0].flags = FUTEX_32 | FUTEX_PRIVATE_FLAG;
		for (unsigned i = 0; i < n; i++) {
			v[i + 1].uaddr = (uintptr_t)b[i].word;
			v[i + 1].val = b[i].seen;
			v[i + 1].flags = FUTEX_32; /* shared: another process's */
		}
		/* futex_waitv's timeout is absolute. */
		uint64_t end = now_ns() + (uint64_t)p->sleep_max.tv_sec * 1000000000u +
			       (uint64_t)p->sleep_max.tv_nsec;
		struct timespec until = {.tv_sec = (time_t)(end / 1000000000u),
					 .tv_nsec = (long)(end % 1000000000u)};
		long r = syscall(__NR_futex_waitv, v, n + 1, 0, &until, CLOCK_MONOTONIC);
		if (r >= 0 || errno != ENOSYS)
			return r >= 0 ? 0 : r;
		/* GS1, relaxed — partner the worker's load after its
		 * sleep: a hint that it reads sooner or later. */
		__atomic_store_n(&waitv_missing, 1, __ATOMIC_RELAXED);
	}
#else
	(void)b;
	(void)n;
#endif
	return futex_wait(&p->wake_seq, seen, &p->sleep_max);
}

/* ---- worker side ---- */

/* Sleeps on wake_seq unless it moved since `seen` (read before the poll
 * that found nothing). See the protocol in the note at the top. */
static void worker_sleep(struct pool_worker *w, uint32_t seen, unsigned n_bells)
{
	struct pool *p = w->pool;

	/* PS1, seq_cst — partner K2: a waker that reads sleepers after this
	 * will call FUTEX_WAKE. */
	__atomic_fetch_add(&p->sleepers, 1, __ATOMIC_SEQ_CST);
	/* PS2, seq_cst — partner K1: with PS1 before it, either this sees a
	 * wake-up issued since W1 or that wake-up's K2 sees PS1. */
	if (__atomic_load_n(&p->wake_seq, __ATOMIC_SEQ_CST) == seen) {
		stat_inc(&w->sleeps);
		long r = n_bells > 0 ? futex_wait_bells(p, seen, w->bells, n_bells)
				     : futex_wait(&p->wake_seq, seen, &p->sleep_max);
		/* 0: FUTEX_WAKE (or spurious); EAGAIN: the word moved between
		 * PS2 (D1 for a doorbell) and the kernel's compare; EFAULT: a
		 * doorbell's region went away. Wake-ups all; ETIMEDOUT and
		 * EINTR are not. */
		if (r == 0 || errno == EAGAIN || errno == EFAULT)
			stat_inc(&w->wakeups);
	}
	/* PS3, relaxed — partner K2: a waker that still sees this worker
	 * only makes a FUTEX_WAKE nobody needs; it can never see 0 while the
	 * worker waits, since this runs after the wait. */
	__atomic_fetch_sub(&p->sleepers, 1, __ATOMIC_RELAXED);
}

/* The ladder's clock (idle_ladder.h takes it as a function, for tests). */
static uint64_t ladder_clock(void)
{
	return now_ns();
}

static void worker_loop(struct pool_worker *w)
{
	struct pool *p = w->pool;
	uint64_t polls = 0, busy_polls = 0;
	struct idle_ladder ladder;
	idle_ladder_init(&ladder, p->spin_end, p->spin_ns, p->yield_end - p->spin_end);

	for (;;) {
		/* W1, acquire — partner K1 (pool_wake, pool_stop): work
		 * published before a wake-up this reads is visible to the
		 * poll below; the value is what worker_sleep() compares. */
		uint32_t seen = __atomic_load_n(&p->wake_seq, __ATOMIC_ACQUIRE);
		/* Relaxed — partner pool_stop()'s store, which comes before
		 * its K1: once W1 reads that K1 this load must see the stop;
		 * until then one more poll is harmless. */
		if (__atomic_load_n(&p->stop, __ATOMIC_RELAXED))
			break;
		/* D1 — partner the doorbells' owners' D2: this poll may be
		 * the last before a sleep, so the sleep is announced and each
		 * doorbell read before it (announce() fences in between). */
		unsigned n_bells = 0;
		if (idle_ladder_sleep_next(&ladder) && p->doorbells != NULL) {
			n_bells = p->doorbells->announce(p->arg, w->index, w->bells,
							 POOL_DOORBELLS_MAX);
			w->announced = true;
		}

		unsigned did = p->poll(p->arg, w->index, w->scratch);
		if (did != 0 && w->announced) {
			w->announced = false;
			p->doorbells->awake(p->arg, w->index);
		}
		rcu_quiescent();

		/* Own counters: relaxed stores, see struct pool_worker. */
		__atomic_store_n(&w->polls, ++polls, __ATOMIC_RELAXED);
		if (did != 0) {
			__atomic_store_n(&w->busy_polls, ++busy_polls,
					 __ATOMIC_RELAXED);
			idle_ladder_work(&ladder, did, ladder_clock);
			continue;
		}
		enum idle_step step = idle_ladder_idle(&ladder, ladder_clock);
		if (step == IDLE_SPIN) {
			cpu_relax();
			continue;
		}
		/* Offline before giving up the CPU, or a writer's
		 * synchronize_rcu() would wait for this thread's next poll:
		 * up to sleep_max_us per grace period, for ever if it hung. */
		rcu_offline();
		if (step == IDLE_YIELD) {
			sched_yield();
		} else {
			worker_sleep(w, seen, n_bells);
			/* GS1, relaxed — partner futex_wait_bells' store: a
			 * hint. Doorbells that cannot wake: the spin of a
			 * pool without them. */
			if (p->spin_by_doorbells &&
			    __atomic_load_n(&waitv_missing, __ATOMIC_RELAXED))
				idle_ladder_set_spin(&ladder,
						     (uint64_t)POOL_SPIN_US_NO_DOORBELLS * 1000u);
		}
		rcu_online();
	}
}

static bool scratch_alloc(struct pool_worker *w, size_t bytes)
{
	int node = w->numa_node;
	if (node < 0) {
		snprintf(w->scratch_note, sizeof(w->scratch_note), "%s",
			 w->cpuset == NULL ? "unpinned" : "no NUMA node found");
	} else if (numa_available() < 0) {
		snprintf(w->scratch_note, sizeof(w->scratch_note),
			 "libnuma unavailable");
	} else if (node > numa_max_node() ||
		   !numa_bitmask_isbitset(numa_all_nodes_ptr, (unsigned)node)) {
		/* numa_alloc_onnode() would return memory anyway and only
		 * print an error: check first. */
		snprintf(w->scratch_note, sizeof(w->scratch_note),
			 "node %d unknown to libnuma", node);
	} else {
		w->scratch = numa_alloc_onnode(bytes, node);
		if (w->scratch != NULL) {
			w->scratch_source = SCRATCH_NUMA;
			return true;
		}
		snprintf(w->scratch_note, sizeof(w->scratch_note),
			 "numa_alloc_onnode failed");
	}
	size_t rounded = (bytes + PAGE_ALIGN - 1) / PAGE_ALIGN * PAGE_ALIGN;
	if (posix_memalign(&w->scratch, PAGE_ALIGN, rounded) != 0) {
		w->scratch = NULL;
		return false;
	}
	w->scratch_source = SCRATCH_HEAP;
	return true;
}

/* Pins the calling thread and makes its scratch memory; 0 or a negative
 * errno with start_msg set. */
static int worker_setup(struct pool_worker *w)
{
	struct pool *p = w->pool;

	if (w->cpuset != NULL &&
	    hwloc_set_cpubind(p->topo, w->cpuset, HWLOC_CPUBIND_THREAD) < 0) {
		int e = errno;
		snprintf(w->start_msg, sizeof(w->start_msg),
			 "worker %u: hwloc_set_cpubind to cpu %d: %s", w->index,
			 w->cpu, strerror(e));
		return -e;
	}
	if (p->scratch_bytes == 0)
		return 0;
	if (!scratch_alloc(w, p->scratch_bytes)) {
		snprintf(w->start_msg, sizeof(w->start_msg),
			 "worker %u: scratch of %zu bytes: out of memory",
			 w->index, p->scratch_bytes);
		return -ENOMEM;
	}
	/* Fault the pages in now, from the pinned thread (first touch puts
	 * heap pages on this node too), so the loop takes no page faults. */
	memset(w->scratch, 0, p->scratch_bytes);
	return 0;
}

static void *worker_main(void *arg)
{
	struct pool_worker *w = arg;
	struct pool *p = w->pool;

	int err = worker_setup(w);
	rcu_register();
	/* Offline while waiting at the gate: a grace period elsewhere in the
	 * process need not wait for pool_start(). */
	rcu_offline();

	pthread_mutex_lock(&p->gate_lock);
	w->start_err = err;
	p->gate_ready++;
	pthread_cond_broadcast(&p->gate_cond);
	while (p->gate == GATE_WAIT)
		pthread_cond_wait(&p->gate_cond, &p->gate_lock);
	bool run = p->gate == GATE_RUN;
	pthread_mutex_unlock(&p->gate_lock);

	rcu_online();
	if (run)
		worker_loop(w);
	rcu_unregister();
	return NULL;
}

/* ---- placement ---- */

struct core_slot {
	hwloc_obj_t core;
	int node_rank; /* logical index of its NUMA node, 0 if none */
	int rank;      /* its position among the cores of that node */
};

static int core_slot_cmp(const void *a, const void *b)
{
	const struct core_slot *x = a, *y = b;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	if (x->node_rank != y->node_rank)
		return x->node_rank < y->node_rank ? -1 : 1;
	return x->core->logical_index < y->core->logical_index ? -1 : 1;
}

/* In hwloc 2 NUMA nodes hang off the side of the tree, not above the PUs:
 * the core's node is the one whose cpuset holds the core's. */
static hwloc_obj_t core_numa_node(hwloc_topology_t topo, hwloc_obj_t core)
{
	hwloc_obj_t node = NULL;
	while ((node = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_NUMANODE,
						  node)) != NULL)
		if (node->cpuset != NULL &&
		    hwloc_bitmap_isincluded(core->cpuset, node->cpuset))
			return node;
	return NULL;
}

/* The cores in placement order: the first core of each NUMA node, then
 * the second of each, and so on, so that a pool smaller than the machine
 * spreads over its nodes. Returns the count; *out is malloc'd. */
/* The cores (or PUs) that share a PU with `allowed` (the CPU set the
 * process was started with: taskset, a cgroup), in the order workers take
 * them. */
static int cores_in_order(hwloc_topology_t topo, hwloc_const_bitmap_t allowed,
			  struct core_slot **out)
{
	hwloc_obj_type_t type = HWLOC_OBJ_CORE;
	int n = hwloc_get_nbobjs_by_type(topo, type);
	if (n <= 0) {
		/* Some virtual machines show PUs without cores. */
		type = HWLOC_OBJ_PU;
		n = hwloc_get_nbobjs_by_type(topo, type);
	}
	if (n <= 0)
		return 0;
	int nodes = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
	struct core_slot *slots = calloc((size_t)n, sizeof(*slots));
	int *per_node = calloc(nodes > 0 ? (size_t)nodes : 1, sizeof(*per_node));
	if (slots == NULL || per_node == NULL) {
		free(slots);
		free(per_node);
		return -ENOMEM;
	}
	int kept = 0;
	for (int i = 0; i < n; i++) {
		hwloc_obj_t core = hwloc_get_obj_by_type(topo, type, (unsigned)i);
		if (core == NULL || !hwloc_bitmap_intersects(core->cpuset, allowed))
			continue;
		hwloc_obj_t node = core_numa_node(topo, core);
		int k = node != NULL && (int)node->logical_index < nodes ?
			(int)node->logical_index : 0;
		slots[kept++] = (struct core_slot){core, k, per_node[k]++};
	}
	qsort(slots, (size_t)kept, sizeof(*slots), core_slot_cmp);
	free(per_node);
	*out = slots;
	return kept;
}

/* Decides each worker's cpu, node and cpuset (pinned pools only). */
static int place_workers(struct pool *p, const struct core_slot *cores,
			 int n_cores, hwloc_const_bitmap_t allowed, char *err,
			 size_t err_len)
{
	if (p->n > (unsigned)n_cores)
		log_msg(LOG_LEVEL_WARN,
			"pool: %u workers but %d cores: worker i shares the core "
			"of worker i mod %d",
			p->n, n_cores, n_cores);
	for (unsigned i = 0; i < p->n; i++) {
		struct pool_worker *w = &p->workers[i];
		hwloc_obj_t core = cores[i % (unsigned)n_cores].core;
		w->cpuset = hwloc_bitmap_dup(core->cpuset);
		/* Only PUs the process may run on: a core may be half allowed. */
		if (w->cpuset != NULL)
			hwloc_bitmap_and(w->cpuset, w->cpuset, allowed);
		if (w->cpuset == NULL) {
			errmsg(err, err_len, "pool: worker %u: out of memory", i);
			return -ENOMEM;
		}
		/* One PU of the core: no migrations between its hyperthreads,
		 * and a cpu number that means something. */
		hwloc_bitmap_singlify(w->cpuset);
		w->cpu = hwloc_bitmap_first(w->cpuset);
		hwloc_obj_t node = core_numa_node(p->topo, core);
		if (node != NULL)
			w->numa_node = (int)node->os_index;
		else if (core->nodeset != NULL && !hwloc_bitmap_iszero(core->nodeset))
			w->numa_node = hwloc_bitmap_first(core->nodeset);
	}
	return 0;
}

/* ---- owner side ---- */

/* Frees everything; the threads are joined or were never started. */
static void pool_free(struct pool *p)
{
	for (unsigned i = 0; i < p->n; i++) {
		struct pool_worker *w = &p->workers[i];
		if (w->cpuset != NULL)
			hwloc_bitmap_free(w->cpuset);
		if (w->scratch_source == SCRATCH_NUMA)
			numa_free(w->scratch, p->scratch_bytes);
		else
			free(w->scratch);
	}
	if (p->topo != NULL)
		hwloc_topology_destroy(p->topo);
	pthread_cond_destroy(&p->gate_cond);
	pthread_mutex_destroy(&p->gate_lock);
	free(p->workers);
	free(p);
}

static void log_worker(const struct pool *p, const struct pool_worker *w)
{
	char scratch[128];
	switch (w->scratch_source) {
	case SCRATCH_NONE:
		snprintf(scratch, sizeof(scratch), "no scratch");
		break;
	case SCRATCH_NUMA:
		snprintf(scratch, sizeof(scratch),
			 "scratch %zu bytes from libnuma on node %d",
			 p->scratch_bytes, w->numa_node);
		break;
	case SCRATCH_HEAP:
		snprintf(scratch, sizeof(scratch),
			 "scratch %zu bytes from the heap (%s)", p->scratch_bytes,
			 w->scratch_note);
		break;
	}
	if (w->cpu >= 0)
		log_msg(LOG_LEVEL_INFO, "pool: worker %u on cpu %d, NUMA node %d, %s",
			w->index, w->cpu, w->numa_node, scratch);
	else
		log_msg(LOG_LEVEL_INFO, "pool: worker %u unpinned, %s", w->index,
			scratch);
}

struct pool *pool_start(const struct pool_config *cfg, pool_poll_fn poll,
			void *arg, char *err, size_t err_len)
{
	int e = 0; /* 0 or a negative errno, as everywhere in this file */
	struct core_slot *cores = NULL;
	hwloc_bitmap_t allowed = NULL;
	unsigned started = 0;

	if (cfg == NULL || poll == NULL) {
		errmsg(err, err_len, "pool: %s is NULL",
			cfg == NULL ? "config" : "poll function");
		errno = EINVAL;
		return NULL;
	}
	if (cfg->workers > POOL_WORKERS_MAX) {
		errmsg(err, err_len,
			"pool: workers: %u is too many, expected at most %u",
			cfg->workers, POOL_WORKERS_MAX);
		errno = EINVAL;
		return NULL;
	}

	if (cfg->doorbells != NULL &&
	    (cfg->doorbells->announce == NULL || cfg->doorbells->awake == NULL)) {
		errmsg(err, err_len, "pool: doorbells without %s",
		       cfg->doorbells->announce == NULL ? "announce" : "awake");
		errno = EINVAL;
		return NULL;
	}

	struct pool *p;
	if (posix_memalign((void **)&p, CACHE_LINE, sizeof(*p)) != 0) {
		errmsg(err, err_len, "pool: out of memory");
		errno = ENOMEM;
		return NULL;
	}
	memset(p, 0, sizeof(*p));
	pthread_mutex_init(&p->gate_lock, NULL);
	pthread_cond_init(&p->gate_cond, NULL);
	p->gate = GATE_WAIT;
	p->poll = poll;
	p->arg = arg;
	p->scratch_bytes = cfg->scratch_bytes;
	unsigned spin = cfg->spin_polls ? cfg->spin_polls : POOL_SPIN_POLLS_DEFAULT;
	unsigned yield = cfg->yield_polls ? cfg->yield_polls : POOL_YIELD_POLLS_DEFAULT;
	uint32_t sleep_us = cfg->sleep_max_us ? cfg->sleep_max_us :
				POOL_SLEEP_MAX_US_DEFAULT;
	p->spin_end = spin;
	p->doorbells = cfg->doorbells;
	uint32_t spin_us = cfg->spin_us ? cfg->spin_us :
			   cfg->spin_polls ? 0 :
			   cfg->doorbells != NULL ? POOL_SPIN_US_DEFAULT :
						    POOL_SPIN_US_NO_DOORBELLS;
	p->spin_by_doorbells = cfg->spin_us == 0 && cfg->spin_polls == 0 &&
			       cfg->doorbells != NULL;
	p->spin_ns = (uint64_t)spin_us * 1000u;
	p->yield_end = spin > UINT_MAX - yield ? UINT_MAX : spin + yield;
	p->sleep_max.tv_sec = sleep_us / 1000000u;
	p->sleep_max.tv_nsec = (long)(sleep_us % 1000000u) * 1000;

	if (hwloc_topology_init(&p->topo) < 0) {
		p->topo = NULL;
		e = -ENODEV;
		errmsg(err, err_len, "pool: hwloc_topology_init failed");
		goto fail_topology;
	}
	if (hwloc_topology_load(p->topo) < 0) {
		e = -ENODEV;
		errmsg(err, err_len, "pool: hwloc_topology_load: %s",
			strerror(errno));
		goto fail_topology;
	}
	/* The CPU set the process was started with (taskset, a cgroup), as
	 * the calling thread has it (every thread inherits it): workers pin
	 * inside it, never outside. Not HWLOC_CPUBIND_PROCESS: that is the
	 * union over every thread, including ones bound before a narrowing
	 * (a sanitizer's own, say). */
	allowed = hwloc_bitmap_alloc();
	if (allowed == NULL ||
	    hwloc_get_cpubind(p->topo, allowed, HWLOC_CPUBIND_THREAD) < 0 ||
	    hwloc_bitmap_iszero(allowed)) {
		if (allowed != NULL)
			hwloc_bitmap_copy(allowed, hwloc_topology_get_allowed_cpuset(p->topo));
		else {
			e = -ENOMEM;
			errmsg(err, err_len, "pool: out of memory");
			goto fail_topology;
		}
	}
	int n_cores = cores_in_order(p->topo, allowed, &cores);
	if (n_cores < 0) {
		e = n_cores;
		errmsg(err, err_len, "pool: out of memory");
		goto fail_topology;
	}
	if (n_cores == 0 && cfg->pin) {
		e = -ENODEV;
		errmsg(err, err_len, "pool: pin: hwloc found no cores to pin to");
		goto fail_topology;
	}
	p->n = cfg->workers;
	if (p->n == 0)
		p->n = n_cores > 1 ? (unsigned)n_cores - 1 : 1;

	if (posix_memalign((void **)&p->workers, CACHE_LINE,
			   p->n * sizeof(*p->workers)) != 0) {
		p->workers = NULL;
		e = -ENOMEM;
		errmsg(err, err_len, "pool: %u workers: out of memory", p->n);
		goto fail_workers;
	}
	memset(p->workers, 0, p->n * sizeof(*p->workers));
	for (unsigned i = 0; i < p->n; i++) {
		p->workers[i].pool = p;
		p->workers[i].index = i;
		p->workers[i].cpu = -1;
		p->workers[i].numa_node = -1;
	}
	if (cfg->pin) {
		int r = place_workers(p, cores, n_cores, allowed, err, err_len);
		if (r < 0) {
			e = r;
			goto fail_place;
		}
	}

	for (; started < p->n; started++) {
		struct pool_worker *w = &p->workers[started];
		int r = pthread_create(&w->thread, NULL, worker_main, w);
		if (r != 0) {
			e = -r;
			errmsg(err, err_len,
				"pool: worker %u of %u: pthread_create: %s",
				started, p->n, strerror(r));
			goto fail_threads;
		}
	}

	pthread_mutex_lock(&p->gate_lock);
	while (p->gate_ready < p->n)
		pthread_cond_wait(&p->gate_cond, &p->gate_lock);
	for (unsigned i = 0; i < p->n && e == 0; i++) {
		if (p->workers[i].start_err != 0) {
			e = p->workers[i].start_err;
			errmsg(err, err_len, "pool: %s", p->workers[i].start_msg);
		}
	}
	p->gate = e == 0 ? GATE_RUN : GATE_ABORT;
	pthread_cond_broadcast(&p->gate_cond);
	pthread_mutex_unlock(&p->gate_lock);
	if (e != 0)
		goto fail_setup;

	for (unsigned i = 0; i < p->n; i++)
		log_worker(p, &p->workers[i]);
	/* The threads are bound; the topology and cpusets are no longer used. */
	for (unsigned i = 0; i < p->n; i++) {
		if (p->workers[i].cpuset != NULL) {
			hwloc_bitmap_free(p->workers[i].cpuset);
			p->workers[i].cpuset = NULL;
		}
	}
	hwloc_topology_destroy(p->topo);
	p->topo = NULL;
	hwloc_bitmap_free(allowed);
	free(cores);
	return p;

fail_threads:
	pthread_mutex_lock(&p->gate_lock);
	p->gate = GATE_ABORT;
	pthread_cond_broadcast(&p->gate_cond);
	pthread_mutex_unlock(&p->gate_lock);
fail_setup:
	for (unsigned i = 0; i < started; i++)
		pthread_join(p->workers[i].thread, NULL);
fail_place:
fail_workers:
fail_topology:
	hwloc_bitmap_free(allowed);
	free(cores);
	if (p->workers == NULL)
		p->n = 0;
	pool_free(p);
	errno = -e;
	return NULL;
}

void pool_wake(struct pool *p)
{
	/* K1, seq_cst — partners W1 (as a release: the caller's work is
	 * visible to a poll that reads this value) and PS2 (store-buffering
	 * pair with K2 against PS1). */
	__atomic_fetch_add(&p->wake_seq, 1, __ATOMIC_SEQ_CST);
	/* K2, seq_cst — partner PS1: a worker that announced itself before
	 * this either saw K1 at PS2 or is woken here. */
	if (__atomic_load_n(&p->sleepers, __ATOMIC_SEQ_CST) != 0)
		futex_wake_all(&p->wake_seq);
}

void pool_stop(struct pool *p)
{
	if (p == NULL)
		return;
	/* Relaxed — partner the workers' relaxed load after W1: the K1 below
	 * releases this store to them. */
	__atomic_store_n(&p->stop, 1, __ATOMIC_RELAXED);
	/* K1 as in pool_wake(), and a FUTEX_WAKE whoever sleeps. */
	__atomic_fetch_add(&p->wake_seq, 1, __ATOMIC_SEQ_CST);
	futex_wake_all(&p->wake_seq);
	for (unsigned i = 0; i < p->n; i++)
		pthread_join(p->workers[i].thread, NULL);
	pool_free(p);
}

unsigned pool_size(const struct pool *p)
{
	return p->n;
}

unsigned pool_sleeping(const struct pool *p)
{
	/* Acquire — partner PS1 (a seq_cst read-modify-write, so a release):
	 * a caller that sees a worker asleep also sees the counters it wrote
	 * before going to sleep. It orders nothing else. */
	return __atomic_load_n(&p->sleepers, __ATOMIC_ACQUIRE);
}

int pool_worker_stats(const struct pool *p, unsigned index,
		      struct pool_worker_stats *out)
{
	memset(out, 0, sizeof(*out));
	out->cpu = -1;
	out->numa_node = -1;
	if (index >= p->n)
		return -EINVAL;
	const struct pool_worker *w = &p->workers[index];
	/* Relaxed: counters read one by one, see struct pool_worker. */
	out->polls = __atomic_load_n(&w->polls, __ATOMIC_RELAXED);
	out->busy_polls = __atomic_load_n(&w->busy_polls, __ATOMIC_RELAXED);
	out->sleeps = __atomic_load_n(&w->sleeps, __ATOMIC_RELAXED);
	out->wakeups = __atomic_load_n(&w->wakeups, __ATOMIC_RELAXED);
	out->cpu = w->cpu;
	out->numa_node = w->numa_node;
	return 0;
}

/* The allowance a producer has for a turn in round `round`: its credit,
 * plus the quantum if it has not had this round's, capped at the carry, a
 * quantum and one pod. */
static int64_t fair_allowance(const struct pool_fair *f, uint64_t round)
{
	if (f->round == round)
		return f->deficit_ns;
	int64_t d = f->deficit_ns + POOL_FAIR_QUANTUM_NS;
	int64_t cap = POOL_FAIR_CARRY_NS + POOL_FAIR_QUANTUM_NS + (int64_t)f->cost_ns;
	return d > cap ? cap : d;
}

/* Covers a pod at its recent cost (any positive allowance while the cost
 * is not known). */
static bool fair_covers(const struct pool_fair *f, int64_t allowance)
{
	return allowance > 0 && (uint64_t)allowance >= f->cost_ns;
}

bool pool_fair_light(const struct pool_fair *f, uint64_t round)
{
	return !f->heavy && fair_covers(f, fair_allowance(f, round));
}

/* See pool.h. Turn bounds: at most the credit cap (the carry, a quantum
 * and one pod) plus one burst's overrun of the time, and POOL_FAIR_BURSTS bursts
 * (a producer whose pods cost nothing measurable cannot hold the worker).
 * A round's bound: the quantum is added once per round, so however many
 * turns a cut splits a round into, a producer's time in it is at most the
 * same cap and a burst's overrun. */
int pool_fair_turn(struct pool_fair *f, uint64_t round, pool_fair_burst_fn burst,
		   pool_fair_cut_fn cut, void *arg, bool *out_of_time,
		   bool *cut_short)
{
	*out_of_time = false;
	*cut_short = false;
	bool fresh = f->round != round;
	int64_t before = f->deficit_ns;
	f->deficit_ns = fair_allowance(f, round);
	int served = 0;
	for (unsigned b = 0; b < POOL_FAIR_BURSTS; b++) {
		/* Served only when the allowance covers a pod at its recent
		 * cost: a producer of pods dearer than a quantum saves up
		 * over turns. */
		if (!fair_covers(f, f->deficit_ns)) {
			*out_of_time = true;
			break;
		}
		/* A light producer waits: a heavy turn ends between bursts,
		 * keeping the rest of its allowance for this round. */
		if (served > 0 && f->heavy && cut != NULL && cut(arg)) {
			*cut_short = true;
			f->round = round;
			return served;
		}
		/* Cost not known yet (a new producer): one pod, to learn it
		 * without a burst of dear pods holding the worker. */
		uint64_t fit = f->cost_ns ? (uint64_t)f->deficit_ns / f->cost_ns : 1;
		unsigned want = fit < 1 ? 1 : fit > POOL_FAIR_BURST
				? POOL_FAIR_BURST : (unsigned)fit;
		uint64_t spent = 0;
		int n = burst(arg, want, &spent);
		if (n < 0) {
			f->round = round;
			return n;
		}
		if (n == 0) {
			/* Idle all of its first turn of a round: no credit
			 * kept, and the round's quantum not taken, so a pod
			 * that comes later this round may still cut a heavy
			 * turn (unless the quantum paid a debt: then taken).
			 * Idle in a later turn of the round: it keeps what it
			 * has of this round's. Ran dry after pods (a
			 * closed-loop producer refilling as its answers come):
			 * it could have used the rest, which it keeps, up to
			 * the cap above. Either way it is light. */
			f->heavy = false;
			if (served == 0 && fresh) {
				if (before >= 0) {
					f->deficit_ns = 0;
					return 0;
				}
				if (f->deficit_ns > 0)
					f->deficit_ns = 0;
			}
			f->round = round;
			return served;
		}
		served += n;
		f->deficit_ns -= (int64_t)spent;
		f->used_ns += spent;
		/* The cost per pod, smoothed over the last few bursts. */
		uint64_t per_pod = spent / (unsigned)n;
		f->cost_ns = f->cost_ns ? (f->cost_ns * 3 + per_pod) / 4 : per_pod;
	}
	/* Its allowance spent, or POOL_FAIR_BURSTS bursts, with pods left. */
	f->heavy = true;
	f->round = round;
	return served;
}
