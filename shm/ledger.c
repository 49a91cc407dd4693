/* The ledger's commit protocol: how a placement takes a node's resources,
 * devices and host ports without a lock, and how readers learn what moved.
 *
 * State, per node slot (struct node_alloc, one record, cache-line aligned):
 * used[r] and the two non-zero sums, gpu_used[g], cores_used[w], and the
 * host-port table with its try-lock. Globally: the change log, a ring of
 * LEDGER_CHANGE_LOG_SLOTS entries behind a 64-bit head.
 *
 * Readers (the engine's filters and scores, the invariant checkers):
 *   V1  Load each counter it needs, relaxed, one at a time. The result is
 *       a view, not a snapshot: two counters may come from different
 *       instants. Nothing is published through a counter, so relaxed is
 *       enough; the commit below re-checks every counter it moves.
 *
 * A placement (ledger_reserve), with the node's allocatable from the
 * snapshot the pod was placed with:
 *   C1  For r = 0 .. RES_MAX-1 in that order, take the pod's request of r
 *       with a compare-and-swap loop that refuses when used[r] + request
 *       would pass allocatable[r] (the pod count takes 1). Relaxed: each
 *       counter is its own fact; the CAS alone makes the check and the
 *       add one step, so no counter passes allocatable, even for an
 *       instant.
 *   C2  Take the exact devices of the assignment: per GPU, a CAS that
 *       refuses to pass GPU_MILLI_PER_DEVICE; per 64-core word, a CAS that
 *       refuses a word where any wanted bit is already set. All or none:
 *       a refusal gives back the devices taken so far. Relaxed, as C1.
 *   C3  If the pod has host ports: try the node's port lock once (acquire,
 *       partner of C3's release). Busy: -EBUSY, a conflict like any other
 *       (a placement never waits). Held: check the table is not full and
 *       the ports are free (the NodePorts rule, passed in from workers/),
 *       append them, unlock (release, partner of the acquire).
 *   C4  Add the non-zero stand-ins (relaxed fetch-add): scores read them,
 *       nothing refuses on them.
 *   then L1, L2 for the slot.
 *   U1  On any refusal in C1-C3: give back, in reverse, whatever this
 *       attempt took (relaxed fetch-sub and fetch-and), then, if any
 *       counter moved at all, L1, L2: a reader may have seen the taken
 *       value, and its cache must learn that it went back.
 *
 * Pod groups (shm/pod_group.h), after C2 and before C3 in a placement,
 * after the counters in A1:
 *   T1  Each entry of groups[] is one 64-bit word, (group << 32) | pods,
 *       moved only by compare-and-swap (relaxed: the word is its own
 *       fact), so a reader's load sees a group and its count together.
 *       n_groups only grows (relaxed CAS), up to NODE_MAX_GROUPS; entries
 *       at and past it are zero.
 *   T2  Adding a pod: +1 on an entry of its group with a count; else claim
 *       an entry whose count is 0 (any group) by CAS; else claim index
 *       n_groups by CAS on n_groups, then the entry. Two placements of a
 *       new group may claim two entries: readers add entries up, so the
 *       sum per group is exact. Full: -ENOSPC, nothing taken.
 *   T3  Removing one (A1 with sign -1, U1): -1 by CAS on an entry of its
 *       group with a count.
 *   T4  A pod whose group has terms also moves the node's term_pods and
 *       the ledger's term_pods (sequentially consistent fetch-add).
 *   T5  The inter-pod guard (its user is bind/resolver.c): pods under
 *       inter-pod rules are placed and committed one at a time, under
 *       interpod_lock, so each sees the one before. A pod with terms
 *       first announces itself (interpod_announced += 1, sequentially
 *       consistent) and only then reads other nodes' groups. A pod that
 *       was under no rule commits without the lock, then reads
 *       term_pods + interpod_announced: 0 means
 *       any pod with terms placed later announced after this commit and
 *       so sees it; otherwise it checks its node under the lock and gives
 *       the placement back if a rule now refuses it. Both sides store,
 *       then pass a rendezvous (an acquire-release fetch-add on
 *       interpod_sync, rather than a fence, which ThreadSanitizer cannot
 *       follow), then load: the fetch-adds are totally ordered, and the
 *       later one acquires what the earlier one released, so of two
 *       racing pods at least one sees the other's store.
 *   T6  The term groups (process-private: only workers read them): every
 *       group with terms that was ever placed or bound, each once, and
 *       term_epoch, moved by every such placement or bound pod. Adding
 *       one: claim the id in an open-addressing set by CAS from 0
 *       (relaxed: the set only deduplicates); the winner takes an index
 *       of the list by fetch-add (relaxed) and stores the id there
 *       (release; a reader that meets 0 stops and comes back); past
 *       LEDGER_TERM_GROUPS the list overflows (term_overflow, release)
 *       and readers must assume any group may be touched. Then, after T4,
 *       term_epoch += 1 (sequentially consistent). A worker that reads
 *       term_epoch (sequentially consistent) before it decides that no
 *       term group touches its pod (workers/interpod.c) has seen, in the
 *       list, every group placed before that read (the list's release
 *       stores precede the epoch's RMW, which its load reads from). The
 *       list only grows: a group whose pods are all gone stays in it,
 *       which only makes a worker careful.
 *       T5's watch after a lock-free commit reads interpod_announced and
 *       then term_epoch (sequentially consistent): a pod with terms placed
 *       after the worker's first read of the epoch either still has its
 *       announcement up, or has moved the epoch, whose RMW precedes its
 *       withdrawal; either way the worker re-checks.
 *
 * Preemption (ledger_swap): a preemptor takes a node's use from its
 * victims in one move, so that no other placement can take the room the
 * victims leave before the preemptor has it (the nominated node held):
 *   X1  Per counter r, the change d[r] = preemptor's - victims' (the pod
 *       count: 1 - victims). Those that grow, in index order, by C1's
 *       checked compare-and-swap: the counter passes allocatable at no
 *       instant. A refusal gives back the growths made so far (U1).
 *   X2  The preemptor's group, as T2 (a full table: U1 on X1).
 *   X3  The counters that shrink (d[r] <= 0), and the non-zero stand-ins,
 *       by relaxed fetch-add: a counter that only falls cannot pass its
 *       limit, so these need no check and cannot fail. Nothing is ever
 *       given back after X3.
 *   X4  The victims' devices, ports and groups go as A1's do (sign -1),
 *       then L1, L2 once for the slot.
 *   The preemptor takes no devices and no host ports (the caller's rule).
 *
 * Bound pods and releases (ledger_account):
 *   A1  Add or subtract the pod's use without checking (relaxed fetch-add,
 *       fetch-or / fetch-and for cores); host ports under the port lock,
 *       waited for (spinning) since these must not fail. Then L1, L2.
 *
 * A removed node's record, and a new node's:
 *   NR1  Cleared with relaxed stores, and the slot's generation moved on,
 *       only when no reader can reach the slot: for a removed node after
 *       an RCU grace period (the caller, shm/cluster.c, knows no snapshot
 *       holding the node is still read), so no C1-C3 can be landing on it;
 *       for an added node before the snapshot that shows it is published.
 *       The grace period or the publication orders the stores; they are
 *       atomic only so that ThreadSanitizer, which cannot see liburcu's
 *       ordering, sees no plain race.
 *
 * The change log (writer after A1, C4 or U1; readers are caches):
 *   L1  Take index i with a release fetch-add on the head: a reader that
 *       acquires a head past i (L3) sees the counter moves made before.
 *   L2  Store the entry for i, (lap + 1) << 32 | slot with lap = i / SLOTS,
 *       with release: a reader that acquires it (L4) sees the moves too.
 *   L3  A reader loads the head with acquire (partner of L1).
 *   L4  It loads entry i with acquire (partner of L2) and checks its lap:
 *       this lap's entry is the slot; last lap's means the writer took i
 *       but has not stored it yet (look again later); a later lap's means
 *       the reader fell a whole ring behind and must rescan every node.
 *
 * Guarantees:
 * - No overcommit: C1 and C2 never let a counter pass its limit; U1 only
 *   lowers counters. A1 is unchecked by design (pods already bound, and
 *   releases of what was taken).
 * - Reads (V1, L3, L4) are wait-free.
 * - Placements never wait: each CAS loop of C1 and C2 fails only when
 *   another thread changed that same counter meanwhile (lock-free), and
 *   C3 only tries the lock. A refused placement is a conflict, placed
 *   again by the resolver (bind/resolver.c) a bounded number of times.
 * - Appends to the change log are wait-free (one fetch-add, one store).
 * - A1 and ledger_copy_ports may spin on the port lock, whose holder keeps
 *   it for at most NODE_MAX_HOST_PORTS entries of work; they wait longer
 *   only if the holder's thread is preempted inside it.
 * - A cache that applies every logged slot it reads (L3, L4) after reading
 *   its counters ends exact: every move is followed by an entry, and the
 *   entry's acquire makes the move visible.
 */
#include "shm/ledger.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "shm/carve.h"
#include "shm/cluster.h"

/* The ledger's section of the state region (all of it shared: another
 * process may map it read-only, and a restarted daemon re-attaches it). */
struct ledger_shared {
	uint32_t capacity;
	uint32_t reserved;
	_Alignas(64) uint64_t change_head; /* L1, L3 */
	_Alignas(64) uint64_t term_pods;   /* T4 */
};

struct ledger {
	uint32_t capacity;
	struct ledger_shared *shared;
	struct node_alloc *nodes; /* [capacity] */
	uint32_t *node_gen;       /* [capacity]: NR1 */
	uint64_t *changes;        /* [LEDGER_CHANGE_LOG_SLOTS]: L2, L4 */
	struct shm_span owned;    /* ledger_create()'s private memory */
	pthread_mutex_t interpod_lock; /* T5 */
	uint64_t interpod_announced;   /* T5: pods with terms being placed */
	uint64_t interpod_sync;        /* T5: the rendezvous both sides pass */
	/* T6: the groups with terms ever placed; see there. */
	uint32_t term_set[LEDGER_TERM_GROUPS * 2]; /* open addressing, 0 empty */
	uint32_t term_list[LEDGER_TERM_GROUPS];
	uint32_t term_claimed;         /* T6: list indices taken */
	bool term_overflow;            /* T6 */
	uint64_t term_epoch;           /* T6 */
};

/* The section's pieces, in order; measures when c->span.base is NULL. */
static void carve(struct shm_carve *c, uint32_t capacity, struct ledger *l)
{
	l->shared = shm_carve_next(c, sizeof(struct ledger_shared), 64);
	l->node_gen = shm_carve_next(c, (uint64_t)capacity * sizeof(uint32_t), 64);
	l->nodes = shm_carve_next(c, (uint64_t)capacity * sizeof(struct node_alloc), 64);
	l->changes = shm_carve_next(c, LEDGER_CHANGE_LOG_SLOTS * sizeof(uint64_t), 64);
}

uint64_t ledger_section_size(uint32_t capacity)
{
	struct shm_carve c = {0};
	struct ledger l;
	carve(&c, capacity, &l);
	return c.used;
}

struct ledger *ledger_create_in(struct shm_span span, uint32_t capacity, bool fresh)
{
	struct ledger *l = calloc(1, sizeof(*l));
	if (l == NULL)
		return NULL;
	struct shm_carve c = {.span = span};
	carve(&c, capacity, l);
	if (capacity == 0 || c.overflow ||
	    (!fresh && l->shared->capacity != capacity)) {
		free(l);
		errno = capacity == 0 || c.overflow ? EINVAL : EPROTO;
		return NULL;
	}
	l->capacity = capacity;
	pthread_mutex_init(&l->interpod_lock, NULL);
	/* Fresh memory reads zero already (a new file or mapping): only the
	 * header is written, so the records' pages stay unbacked until used. */
	if (fresh)
		l->shared->capacity = capacity;
	return l;
}

struct ledger *ledger_create(uint32_t capacity)
{
	struct shm_span mem = shm_span_private(capacity ? ledger_section_size(capacity)
							: 0);
	if (mem.base == NULL) {
		errno = capacity == 0 ? EINVAL : ENOMEM;
		return NULL;
	}
	struct ledger *l = ledger_create_in(mem, capacity, true);
	if (l == NULL) {
		shm_span_release(mem);
		errno = ENOMEM;
		return NULL;
	}
	l->owned = mem;
	return l;
}

void ledger_destroy(struct ledger *l)
{
	if (l == NULL)
		return;
	shm_span_release(l->owned);
	pthread_mutex_destroy(&l->interpod_lock);
	free(l);
}

uint32_t ledger_capacity(const struct ledger *l)
{
	return l->capacity;
}

struct node_alloc *ledger_node(struct ledger *l, uint32_t slot)
{
	return &l->nodes[slot];
}

struct node_alloc *ledger_nodes(struct ledger *l)
{
	return l->nodes;
}

/* --- the change log ------------------------------------------------------ */

static void change_append(struct ledger *l, uint32_t slot)
{
	/* L1: release, partner of L3. */
	uint64_t i = __atomic_fetch_add(&l->shared->change_head, 1, __ATOMIC_RELEASE);
	uint64_t lap = i / LEDGER_CHANGE_LOG_SLOTS;
	uint64_t entry = ((lap + 1) & UINT32_MAX) << 32 | slot;
	/* L2: release, partner of L4. */
	__atomic_store_n(&l->changes[i & (LEDGER_CHANGE_LOG_SLOTS - 1)], entry,
			 __ATOMIC_RELEASE);
}

uint64_t ledger_changes_head(const struct ledger *l)
{
	/* L3: acquire, partner of L1. */
	return __atomic_load_n(&l->shared->change_head, __ATOMIC_ACQUIRE);
}

int ledger_change_at(const struct ledger *l, uint64_t idx, uint32_t *slot)
{
	/* L4: acquire, partner of L2. */
	uint64_t e = __atomic_load_n(&l->changes[idx & (LEDGER_CHANGE_LOG_SLOTS - 1)],
				     __ATOMIC_ACQUIRE);
	uint32_t want = (uint32_t)(idx / LEDGER_CHANGE_LOG_SLOTS + 1);
	uint32_t tag = (uint32_t)(e >> 32);
	if (tag == want) {
		*slot = (uint32_t)e;
		return 1;
	}
	return tag == want - 1 ? 0 : -1;
}

int ledger_changes_read(const struct ledger *l, uint64_t *pos, uint64_t head,
			uint32_t *out, unsigned max)
{
	unsigned n = 0;
	for (; *pos < head && n < max; (*pos)++, n++) {
		int got = ledger_change_at(l, *pos, &out[n]);
		if (got == 0)
			break; /* its writer is between taking and storing it */
		if (got < 0)
			return -1;
	}
	return (int)n;
}

/* --- NR1 ------------------------------------------------------------------ */

void ledger_reset_node(struct ledger *l, uint32_t slot)
{
	struct node_alloc *a = &l->nodes[slot];
	/* NR1: relaxed; the caller's grace period orders these. */
	for (int r = 0; r < RES_MAX; r++)
		__atomic_store_n(&a->used[r], 0, __ATOMIC_RELAXED);
	__atomic_store_n(&a->used_nonzero_cpu_milli, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&a->used_nonzero_mem_bytes, 0, __ATOMIC_RELAXED);
	for (int g = 0; g < NODE_MAX_GPUS; g++)
		__atomic_store_n(&a->gpu_used[g], 0, __ATOMIC_RELAXED);
	for (int w = 0; w < CORE_WORDS; w++)
		__atomic_store_n(&a->cores_used[w], 0, __ATOMIC_RELAXED);
	__atomic_store_n(&a->n_ports, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&a->port_lock, 0, __ATOMIC_RELAXED);
	for (int g = 0; g < NODE_MAX_GROUPS; g++)
		__atomic_store_n(&a->groups[g], 0, __ATOMIC_RELAXED);
	__atomic_store_n(&a->n_groups, 0, __ATOMIC_RELAXED);
	/* T4: the node's pods with terms go with it. */
	uint32_t tp = __atomic_exchange_n(&a->term_pods, 0, __ATOMIC_RELAXED);
	if (tp != 0)
		__atomic_fetch_sub(&l->shared->term_pods, tp, __ATOMIC_SEQ_CST);
	/* NR1: relaxed; the snapshot's publication (add) or the grace period
	 * (remove) orders it for readers. */
	__atomic_store_n(&l->node_gen[slot], l->node_gen[slot] + 1, __ATOMIC_RELAXED);
}

uint32_t ledger_node_generation(const struct ledger *l, uint32_t slot)
{
	/* NR1: relaxed, see ledger.h. */
	return __atomic_load_n(&l->node_gen[slot], __ATOMIC_RELAXED);
}

const uint32_t *ledger_node_generations(const struct ledger *l)
{
	return l->node_gen;
}

bool ledger_slot_current(const struct ledger *l, const struct snapshot *snap,
			 uint32_t slot, uint32_t node_gen)
{
	return slot < snap->n_slots && snap->present[slot] &&
	       node_gen == ledger_node_generation(l, slot);
}

/* --- C3: the port table ---------------------------------------------------- */

static bool ports_trylock(struct node_alloc *a)
{
	uint32_t expected = 0;
	/* C3: acquire, partner of the release in ports_unlock(): the table
	 * as the last holder left it. */
	return __atomic_compare_exchange_n(&a->port_lock, &expected, 1, false,
					   __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

static void ports_unlock(struct node_alloc *a)
{
	/* C3: release, partner of the acquire in ports_trylock(). */
	__atomic_store_n(&a->port_lock, 0, __ATOMIC_RELEASE);
}

/* A1's wait for the port lock: only for bound pods, releases and copies,
 * which must not fail, while another thread holds it for a few dozen
 * instructions. */
static void ports_lock(struct node_alloc *a)
{
	while (!ports_trylock(a))
		__builtin_ia32_pause();
}

unsigned ledger_copy_ports(struct node_alloc *a, struct host_port *out)
{
	ports_lock(a);
	unsigned n = a->n_ports;
	memcpy(out, a->ports, n * sizeof(*out));
	ports_unlock(a);
	return n;
}

static void ports_remove(struct node_alloc *a, const struct host_port *p)
{
	for (uint32_t i = 0; i < a->n_ports; i++) {
		struct host_port *q = &a->ports[i];
		if (q->port == p->port && q->protocol == p->protocol && q->ip == p->ip) {
			*q = a->ports[--a->n_ports];
			return;
		}
	}
}

/* --- C2: devices ------------------------------------------------------------ */

/* Adds or removes an assignment's devices without checking (A1, U1):
 * relaxed. */
static void devices_account(struct node_alloc *a, const struct device_assignment *dev,
			    int sign)
{
	for (unsigned g = 0; g < NODE_MAX_GPUS; g++)
		if (dev->gpu_mask >> g & 1)
			__atomic_fetch_add(&a->gpu_used[g],
					   (uint32_t)(sign * dev->gpu_milli),
					   __ATOMIC_RELAXED);
	for (unsigned w = 0; w < CORE_WORDS; w++) {
		if (dev->cpuset[w] == 0)
			continue;
		if (sign > 0)
			__atomic_fetch_or(&a->cores_used[w], dev->cpuset[w],
					  __ATOMIC_RELAXED);
		else
			__atomic_fetch_and(&a->cores_used[w], ~dev->cpuset[w],
					   __ATOMIC_RELAXED);
	}
}

/* C2: takes GPU g's milli if it stays within a device. Relaxed. */
static bool gpu_take(uint32_t *used, uint32_t milli)
{
	uint32_t cur = __atomic_load_n(used, __ATOMIC_RELAXED);
	do {
		if (cur + milli > GPU_MILLI_PER_DEVICE)
			return false;
	} while (!__atomic_compare_exchange_n(used, &cur, cur + milli, true,
					      __ATOMIC_RELAXED, __ATOMIC_RELAXED));
	return true;
}

/* C2: sets `want` in a core word if none of it is set. Relaxed. */
static bool cores_take(uint64_t *word, uint64_t want)
{
	uint64_t cur = __atomic_load_n(word, __ATOMIC_RELAXED);
	do {
		if (cur & want)
			return false;
	} while (!__atomic_compare_exchange_n(word, &cur, cur | want, true,
					      __ATOMIC_RELAXED, __ATOMIC_RELAXED));
	return true;
}

/* C2: takes every device of `dev` or none: on a refusal, gives back what
 * it took. Returns whether it took them; *moved says a counter moved. */
static bool devices_take(struct node_alloc *a, const struct device_assignment *dev,
			 bool *moved)
{
	struct device_assignment got = {.gpu_milli = dev->gpu_milli};
	bool ok = true;
	for (unsigned g = 0; ok && g < NODE_MAX_GPUS; g++) {
		if (!(dev->gpu_mask >> g & 1))
			continue;
		ok = gpu_take(&a->gpu_used[g], dev->gpu_milli);
		if (ok)
			got.gpu_mask |= (uint16_t)(1u << g);
	}
	for (unsigned w = 0; ok && w < CORE_WORDS; w++) {
		if (dev->cpuset[w] == 0)
			continue;
		ok = cores_take(&a->cores_used[w], dev->cpuset[w]);
		if (ok)
			got.cpuset[w] = dev->cpuset[w];
	}
	if (!ok) {
		devices_account(a, &got, -1); /* U1 */
		for (unsigned w = 0; w < CORE_WORDS; w++)
			*moved |= got.cpuset[w] != 0;
		*moved |= got.gpu_mask != 0;
	}
	return ok;
}

/* --- T1-T4: pod groups ------------------------------------------------------- */

static inline uint64_t group_word(uint32_t group, uint32_t pods)
{
	return (uint64_t)group << 32 | pods;
}

/* T1: CAS `e` from `cur` to `next`. Relaxed. */
static bool group_cas(uint64_t *e, uint64_t *cur, uint64_t next)
{
	return __atomic_compare_exchange_n(e, cur, next, false, __ATOMIC_RELAXED,
					   __ATOMIC_RELAXED);
}

/* T2: one more pod of `group`. Returns false when the table is full. */
static bool group_take(struct node_alloc *a, uint32_t group)
{
	for (;;) {
		uint32_t n = __atomic_load_n(&a->n_groups, __ATOMIC_RELAXED);
		int free_at = -1;
		for (uint32_t i = 0; i < n; i++) {
			uint64_t cur = __atomic_load_n(&a->groups[i], __ATOMIC_RELAXED);
			if ((uint32_t)cur == 0) {
				if (free_at < 0)
					free_at = (int)i;
				continue;
			}
			while ((uint32_t)(cur >> 32) == group && (uint32_t)cur != 0)
				if (group_cas(&a->groups[i], &cur, cur + 1))
					return true;
		}
		if (free_at >= 0) {
			uint64_t cur = __atomic_load_n(&a->groups[free_at], __ATOMIC_RELAXED);
			if ((uint32_t)cur == 0 &&
			    group_cas(&a->groups[free_at], &cur, group_word(group, 1)))
				return true;
			continue; /* taken meanwhile: look again */
		}
		if (n >= NODE_MAX_GROUPS)
			return false;
		if (__atomic_compare_exchange_n(&a->n_groups, &n, n + 1, false,
						__ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
			/* Index n is ours alone and still zero. */
			uint64_t zero = 0;
			if (group_cas(&a->groups[n], &zero, group_word(group, 1)))
				return true;
		}
	}
}

/* T3: one pod of `group` fewer. */
static void group_give(struct node_alloc *a, uint32_t group)
{
	uint32_t n = __atomic_load_n(&a->n_groups, __ATOMIC_RELAXED);
	for (uint32_t i = 0; i < n; i++) {
		uint64_t cur = __atomic_load_n(&a->groups[i], __ATOMIC_RELAXED);
		while ((uint32_t)(cur >> 32) == group && (uint32_t)cur != 0)
			if (group_cas(&a->groups[i], &cur, cur - 1))
				return;
	}
}

/* T4: the pod's terms, counted on the node and in the ledger. */
static void term_pods_add(struct ledger *l, struct node_alloc *a, int sign)
{
	__atomic_fetch_add(&a->term_pods, (uint32_t)sign, __ATOMIC_RELAXED);
	__atomic_fetch_add(&l->shared->term_pods, (uint64_t)(int64_t)sign,
			   __ATOMIC_SEQ_CST);
}

/* T6: `group` (with terms) in the set and the list, once. */
static void term_group_note(struct ledger *l, uint32_t group)
{
	const uint32_t mask = LEDGER_TERM_GROUPS * 2 - 1;
	uint32_t i = (uint32_t)(((uint64_t)group * UINT64_C(0x9e3779b97f4a7c15)) >> 32) & mask;
	for (uint32_t probes = 0; probes <= mask; probes++, i = (i + 1) & mask) {
		/* T6: relaxed; the set only deduplicates. */
		uint32_t cur = __atomic_load_n(&l->term_set[i], __ATOMIC_RELAXED);
		if (cur == group)
			return;
		if (cur != 0)
			continue;
		if (!__atomic_compare_exchange_n(&l->term_set[i], &cur, group, false,
						 __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
			if (cur == group)
				return;
			continue; /* another group took the entry */
		}
		/* T6: the list index (relaxed: only uniqueness), then the id
		 * (release, read by ledger_term_group_at's acquire). */
		uint32_t at = __atomic_fetch_add(&l->term_claimed, 1, __ATOMIC_RELAXED);
		if (at < LEDGER_TERM_GROUPS)
			__atomic_store_n(&l->term_list[at], group, __ATOMIC_RELEASE);
		else
			__atomic_store_n(&l->term_overflow, true, __ATOMIC_RELEASE);
		return;
	}
	__atomic_store_n(&l->term_overflow, true, __ATOMIC_RELEASE); /* T6: set full */
}

/* T2 and T4 (and T6) for a placement or a bound pod; false when full. */
static bool groups_add(struct ledger *l, struct node_alloc *a,
		       const struct pod_spec *pod)
{
	if (pod->group == 0)
		return true;
	if (!group_take(a, pod->group))
		return false;
	if (pod->group_terms) {
		term_group_note(l, pod->group);
		term_pods_add(l, a, +1);
		/* T6: after the list's store and T4. */
		__atomic_fetch_add(&l->term_epoch, 1, __ATOMIC_SEQ_CST);
	}
	return true;
}

/* T3 and T4. */
static void groups_remove(struct ledger *l, struct node_alloc *a,
			  const struct pod_spec *pod)
{
	if (pod->group == 0)
		return;
	if (pod->group_terms)
		term_pods_add(l, a, -1);
	group_give(a, pod->group);
}

unsigned ledger_load_groups(const struct node_alloc *a,
			    struct group_count out[NODE_MAX_GROUPS])
{
	/* T1, V1: relaxed. */
	uint32_t n = __atomic_load_n(&a->n_groups, __ATOMIC_RELAXED);
	unsigned k = 0;
	for (uint32_t i = 0; i < n && i < NODE_MAX_GROUPS; i++) {
		uint64_t e = __atomic_load_n(&a->groups[i], __ATOMIC_RELAXED);
		if ((uint32_t)e != 0)
			out[k++] = (struct group_count){(uint32_t)(e >> 32), (uint32_t)e};
	}
	return k;
}

uint64_t ledger_term_pods(const struct ledger *l)
{
	/* T4: sequentially consistent, see there. */
	return __atomic_load_n(&l->shared->term_pods, __ATOMIC_SEQ_CST);
}

void ledger_interpod_lock(struct ledger *l)
{
	pthread_mutex_lock(&l->interpod_lock);
}

void ledger_interpod_unlock(struct ledger *l)
{
	pthread_mutex_unlock(&l->interpod_lock);
}

void ledger_interpod_announce(struct ledger *l, int sign)
{
	/* T5: the announcement, then the rendezvous before the reads of other
	 * nodes' groups. */
	__atomic_fetch_add(&l->interpod_announced, (uint64_t)(int64_t)sign,
			   __ATOMIC_SEQ_CST);
	__atomic_fetch_add(&l->interpod_sync, 1, __ATOMIC_ACQ_REL);
}

bool ledger_interpod_watch(struct ledger *l, uint64_t epoch)
{
	/* T5: the rendezvous after the commit's stores, before these loads;
	 * T6: the announcements, then the epoch. */
	__atomic_fetch_add(&l->interpod_sync, 1, __ATOMIC_ACQ_REL);
	return __atomic_load_n(&l->interpod_announced, __ATOMIC_SEQ_CST) > 0 ||
	       __atomic_load_n(&l->term_epoch, __ATOMIC_SEQ_CST) != epoch;
}

uint64_t ledger_term_epoch(const struct ledger *l)
{
	/* T6: sequentially consistent, see there. */
	return __atomic_load_n(&l->term_epoch, __ATOMIC_SEQ_CST);
}

uint32_t ledger_term_groups(const struct ledger *l)
{
	/* T6: relaxed; an index claimed but not stored reads 0 below. */
	uint32_t n = __atomic_load_n(&l->term_claimed, __ATOMIC_RELAXED);
	if (__atomic_load_n(&l->term_overflow, __ATOMIC_ACQUIRE))
		return UINT32_MAX;
	return n < LEDGER_TERM_GROUPS ? n : LEDGER_TERM_GROUPS;
}

uint32_t ledger_term_group_at(const struct ledger *l, uint32_t i)
{
	/* T6: acquire, partner of term_group_note's release. */
	return i < LEDGER_TERM_GROUPS
		? __atomic_load_n(&l->term_list[i], __ATOMIC_ACQUIRE) : 0;
}

void ledger_clear_term_pods(struct ledger *l)
{
	/* T4: no other thread runs (recount). */
	__atomic_store_n(&l->shared->term_pods, 0, __ATOMIC_SEQ_CST);
}

/* --- V1: views -------------------------------------------------------------- */

void ledger_load_devices(const struct node_alloc *a, const struct node_devices *d,
			 struct device_view *out)
{
	/* V1: relaxed. */
	unsigned g = 0;
	for (; g < d->n_gpus; g++)
		out->gpu_free[g] = (uint16_t)(GPU_MILLI_PER_DEVICE -
					      __atomic_load_n(&a->gpu_used[g],
							      __ATOMIC_RELAXED));
	for (; g < NODE_MAX_GPUS; g++)
		out->gpu_free[g] = 0;
	for (unsigned w = 0; w < CORE_WORDS; w++) {
		uint64_t pool = devices_core_pool_word(d, w);
		out->cores_free[w] = pool == 0 ? 0
			: pool & ~__atomic_load_n(&a->cores_used[w], __ATOMIC_RELAXED);
	}
}

void ledger_load_used(const struct node_alloc *a, struct res_vec *used,
		      int64_t *nonzero_cpu_milli, int64_t *nonzero_mem_bytes)
{
	/* V1: relaxed. */
	for (int r = 0; r < RES_MAX; r++)
		used->v[r] = __atomic_load_n(&a->used[r], __ATOMIC_RELAXED);
	*nonzero_cpu_milli = __atomic_load_n(&a->used_nonzero_cpu_milli,
					     __ATOMIC_RELAXED);
	*nonzero_mem_bytes = __atomic_load_n(&a->used_nonzero_mem_bytes,
					     __ATOMIC_RELAXED);
}

/* --- A1 ----------------------------------------------------------------------- */

int ledger_account(struct ledger *l, uint32_t slot, const struct pod_spec *pod,
		   const struct device_assignment *dev, int sign)
{
	struct node_alloc *a = &l->nodes[slot];
	if (sign > 0 && !groups_add(l, a, pod))
		return -ENOSPC;
	if (pod->n_ports > 0) {
		ports_lock(a);
		if (sign > 0 && a->n_ports + pod->n_ports > NODE_MAX_HOST_PORTS) {
			ports_unlock(a);
			groups_remove(l, a, pod);
			return -ENOSPC;
		}
		for (unsigned i = 0; i < pod->n_ports; i++) {
			if (sign > 0)
				a->ports[a->n_ports++] = pod->ports[i];
			else
				ports_remove(a, &pod->ports[i]);
		}
		ports_unlock(a);
	}
	/* A1: relaxed. */
	for (int r = 0; r < RES_MAX; r++)
		if (r != RES_PODS && pod->request.v[r] != 0)
			__atomic_fetch_add(&a->used[r], sign * pod->request.v[r],
					   __ATOMIC_RELAXED);
	__atomic_fetch_add(&a->used[RES_PODS], sign, __ATOMIC_RELAXED);
	__atomic_fetch_add(&a->used_nonzero_cpu_milli, sign * pod->nonzero_cpu_milli,
			   __ATOMIC_RELAXED);
	__atomic_fetch_add(&a->used_nonzero_mem_bytes, sign * pod->nonzero_mem_bytes,
			   __ATOMIC_RELAXED);
	if (dev != NULL)
		devices_account(a, dev, sign);
	if (sign < 0)
		groups_remove(l, a, pod);
	change_append(l, slot);
	return 0;
}

/* --- C1-C4, U1 ------------------------------------------------------------------ */

/* C1: used += delta if the result stays within limit. Relaxed. */
static bool counter_take(int64_t *used, int64_t delta, int64_t limit)
{
	int64_t cur = __atomic_load_n(used, __ATOMIC_RELAXED);
	do {
		if (cur + delta > limit)
			return false;
	} while (!__atomic_compare_exchange_n(used, &cur, cur + delta, true,
					      __ATOMIC_RELAXED, __ATOMIC_RELAXED));
	return true;
}

int ledger_reserve(struct ledger *l, uint32_t slot,
		   const struct res_vec *allocatable, const struct pod_spec *pod,
		   const struct device_assignment *dev,
		   ledger_ports_free_fn ports_free, const void *arg)
{
	struct node_alloc *a = &l->nodes[slot];
	int r = 0;
	int rc = 0;
	bool moved = false;
	bool have_devices = false;
	for (; r < RES_MAX; r++) { /* C1 */
		int64_t delta = r == RES_PODS ? 1 : pod->request.v[r];
		if (delta > 0 && !counter_take(&a->used[r], delta, allocatable->v[r])) {
			rc = -EAGAIN;
			goto undo_counters;
		}
	}
	if (dev != NULL) { /* C2 */
		if (!devices_take(a, dev, &moved)) {
			rc = -EAGAIN;
			goto undo_counters;
		}
		have_devices = true;
	}
	if (!groups_add(l, a, pod)) { /* T2 */
		rc = -ENOSPC;
		goto undo_counters;
	}
	if (pod->n_ports > 0) { /* C3 */
		if (!ports_trylock(a)) {
			rc = -EBUSY;
			groups_remove(l, a, pod); /* U1 */
			goto undo_counters;
		}
		if (a->n_ports + pod->n_ports > NODE_MAX_HOST_PORTS)
			rc = -ENOSPC;
		else if (!ports_free(arg, pod, a->ports, a->n_ports))
			rc = -EADDRINUSE;
		for (unsigned i = 0; rc == 0 && i < pod->n_ports; i++)
			a->ports[a->n_ports++] = pod->ports[i];
		ports_unlock(a);
		if (rc < 0) {
			groups_remove(l, a, pod); /* U1 */
			goto undo_counters;
		}
	}
	/* C4: relaxed. */
	__atomic_fetch_add(&a->used_nonzero_cpu_milli, pod->nonzero_cpu_milli,
			   __ATOMIC_RELAXED);
	__atomic_fetch_add(&a->used_nonzero_mem_bytes, pod->nonzero_mem_bytes,
			   __ATOMIC_RELAXED);
	change_append(l, slot);
	return 0;

undo_counters:
	/* U1: give back in reverse; log the rollback if anything moved, since a
	 * reader may have seen what this attempt took. */
	if (have_devices) {
		devices_account(a, dev, -1);
		moved = true;
	}
	while (r-- > 0) {
		int64_t delta = r == RES_PODS ? 1 : pod->request.v[r];
		if (delta > 0) {
			/* U1: relaxed. */
			__atomic_fetch_sub(&a->used[r], delta, __ATOMIC_RELAXED);
			moved = true;
		}
	}
	if (moved)
		change_append(l, slot);
	return rc;
}

/* --- X1-X4 ------------------------------------------------------------------------- */

int ledger_swap(struct ledger *l, uint32_t slot, const struct res_vec *allocatable,
		const struct pod_spec *pod, const struct pod_spec *victims,
		const struct device_assignment *victim_devs, unsigned n_victims)
{
	struct node_alloc *a = &l->nodes[slot];
	int64_t d[RES_MAX];
	int64_t nz_cpu = pod->nonzero_cpu_milli, nz_mem = pod->nonzero_mem_bytes;
	for (int r = 0; r < RES_MAX; r++)
		d[r] = r == RES_PODS ? 1 : pod->request.v[r];
	for (unsigned k = 0; k < n_victims; k++) {
		for (int r = 0; r < RES_MAX; r++)
			d[r] -= r == RES_PODS ? 1 : victims[k].request.v[r];
		nz_cpu -= victims[k].nonzero_cpu_milli;
		nz_mem -= victims[k].nonzero_mem_bytes;
	}
	int r = 0;
	for (; r < RES_MAX; r++) /* X1 */
		if (d[r] > 0 && !counter_take(&a->used[r], d[r], allocatable->v[r]))
			goto undo;
	if (!groups_add(l, a, pod)) /* X2 */
		goto undo;
	for (r = 0; r < RES_MAX; r++) /* X3: relaxed, see there. */
		if (d[r] < 0)
			__atomic_fetch_add(&a->used[r], d[r], __ATOMIC_RELAXED);
	__atomic_fetch_add(&a->used_nonzero_cpu_milli, nz_cpu, __ATOMIC_RELAXED);
	__atomic_fetch_add(&a->used_nonzero_mem_bytes, nz_mem, __ATOMIC_RELAXED);
	for (unsigned k = 0; k < n_victims; k++) { /* X4 */
		const struct pod_spec *v = &victims[k];
		if (v->n_ports > 0) {
			ports_lock(a);
			for (unsigned i = 0; i < v->n_ports; i++)
				ports_remove(a, &v->ports[i]);
			ports_unlock(a);
		}
		if (victim_devs != NULL)
			devices_account(a, &victim_devs[k], -1);
		groups_remove(l, a, v);
	}
	change_append(l, slot);
	return 0;

undo:;
	/* U1 for X1: relaxed; logged when anything had moved, as C1's. A
	 * refusal inside X1 stopped at r; a full group table after it. */
	int rc = r < RES_MAX ? -EAGAIN : -ENOSPC;
	bool moved = false;
	while (r-- > 0)
		if (d[r] > 0) {
			__atomic_fetch_sub(&a->used[r], d[r], __ATOMIC_RELAXED);
			moved = true;
		}
	if (moved)
		change_append(l, slot);
	return rc;
}

/* --- invariant checkers ----------------------------------------------------------- */

uint64_t ledger_overcommits(const struct ledger *l, const struct snapshot *snap)
{
	uint64_t bad = 0;
	for (uint32_t i = 0; i < snap->n_slots; i++) {
		if (!snap->present[i])
			continue;
		struct res_vec used;
		int64_t nz_cpu, nz_mem;
		ledger_load_used(&l->nodes[i], &used, &nz_cpu, &nz_mem);
		for (int r = 0; r < RES_MAX; r++)
			bad += used.v[r] > snap->allocatable[r][i];
	}
	return bad;
}

uint64_t ledger_pods(const struct ledger *l, const struct snapshot *snap)
{
	uint64_t pods = 0;
	for (uint32_t i = 0; i < snap->n_slots; i++)
		if (snap->present[i]) /* V1: relaxed. */
			pods += (uint64_t)__atomic_load_n(&l->nodes[i].used[RES_PODS],
							  __ATOMIC_RELAXED);
	return pods;
}

void ledger_devices_in_use(const struct ledger *l, const struct snapshot *snap,
			   uint64_t *gpu_milli, uint64_t *cores)
{
	*gpu_milli = 0;
	*cores = 0;
	for (uint32_t i = 0; i < snap->n_slots; i++) {
		if (!snap->present[i])
			continue;
		const struct node_alloc *a = &l->nodes[i];
		/* V1: relaxed. */
		for (unsigned g = 0; g < NODE_MAX_GPUS; g++)
			*gpu_milli += __atomic_load_n(&a->gpu_used[g], __ATOMIC_RELAXED);
		for (unsigned w = 0; w < CORE_WORDS; w++)
			*cores += (uint64_t)__builtin_popcountll(
				__atomic_load_n(&a->cores_used[w], __ATOMIC_RELAXED));
	}
}
