/* The placement table: see placements.h for the protocol (F1, F2, PC1,
 * PC2, PL1, P1, P2, H1, PN1, PN2).
 * Cost: take and untake are one compare-and-swap loop each (retried only
 * when another thread moved the head); a worker's (_w) take, untake and
 * publish take its cache's lock, its own cache line, and a take pops the
 * stack once in 32 (walking up to 32 links); fill is one record copy, one
 * release store and the node chain's compare-and-swap; get is O(1); free
 * is O(1) and the node chain's walk to the record (O(the node's pods));
 * next is O(records skipped).
 */
#include "shm/placements.h"

#include "base/base.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "shm/carve.h"

#define NIL UINT32_MAX
#define POPULATE_PAGES 16u /* per placements_populate_ahead() call */
#define CACHE_BATCH 32u    /* records a worker's cache takes from the stack */
#define CACHE_MAX 64u      /* records a worker's cache holds at most */

/* A worker's cache of free records (PC1, PC2, PL1): its own cache line(s),
 * so that a placement writes no line every worker writes. */
struct placements_cache {
	_Alignas(64) uint32_t lock; /* PC1: 1 held */
	uint32_t n;                 /* idx[0, n) are free records, taken
				     * off the stack (F1) */
	uint64_t published;         /* PL1: the worker's publishes, a figure */
	uint32_t idx[CACHE_MAX];
};

/* The table's section of the state region: what a restarted daemon and an
 * observer read. The free stack (head and links) is the daemon's private
 * memory, rebuilt from the records' owners on re-attach. */
struct placements_shared {
	uint32_t capacity;
	uint32_t reserved;
	_Alignas(64) uint64_t live; /* filled and not freed: a figure */
	uint32_t high_water;        /* records below it have been used: scans
				     * stop there (H1) */
};

struct placements {
	uint32_t capacity;
	struct placements_shared *shared;
	struct placement_record *recs; /* [capacity] */
	uint32_t *next;         /* [capacity]: the free stack's links (F1, F2) */
	uint32_t *node_head;    /* [capacity]: each node slot's chain (PN1, PN2) */
	uint32_t *node_next;    /* [capacity]: the chains' links */
	uint32_t *node_unlinks; /* [capacity]: records off each chain (PN3) */
	_Alignas(64) uint64_t head; /* tag << 32 | top index (NIL: empty) */
	struct shm_span owned;  /* placements_create()'s private memory */
	/* placements_populate_ahead()'s: records [0, populated) are backed;
	 * `populate_off` once the kernel refused. Its one thread's. */
	uint32_t populated;
	bool populate_off;
	/* placements_set_free_hook()'s: set before other threads use the
	 * table, then only read. */
	placements_free_fn free_hook;
	void *free_arg;
	/* placements_set_workers()'s: set before other threads use the
	 * table, then only read (the caches' contents: PC1). */
	struct placements_cache *caches; /* [n_caches] */
	unsigned n_caches;
};

static void carve(struct shm_carve *c, uint32_t capacity, struct placements *t)
{
	t->shared = shm_carve_next(c, sizeof(struct placements_shared), 64);
	t->recs = shm_carve_next(c, (uint64_t)capacity * sizeof(struct placement_record), 64);
}

const struct placement_record *placements_records_in(struct shm_span span,
						     uint32_t capacity,
						     uint32_t *high_water)
{
	struct placements t;
	struct shm_carve c = {.span = span};
	carve(&c, capacity, &t);
	if (c.overflow || t.shared == NULL || t.shared->capacity != capacity)
		return NULL;
	/* H1: relaxed, a bound for the scan; clamped, the section is not
	 * trusted. */
	uint32_t hw = __atomic_load_n(&t.shared->high_water, __ATOMIC_RELAXED);
	*high_water = hw < capacity ? hw : capacity;
	return t.recs;
}

uint64_t placements_section_size(uint32_t capacity)
{
	struct shm_carve c = {0};
	struct placements t;
	carve(&c, capacity, &t);
	return c.used;
}

struct placements *placements_create_in(struct shm_span span, uint32_t capacity,
					bool fresh)
{
	if (capacity == 0 || capacity >= NIL) {
		errno = EINVAL;
		return NULL;
	}
	/* Aligned: `head` has a cache line of its own (calloc would give
	 * 16 bytes, sharing it with the pointers every worker reads). */
	struct placements *t = aligned_alloc(64, sizeof(*t));
	if (t == NULL)
		return NULL;
	memset(t, 0, sizeof(*t));
	struct shm_carve c = {.span = span};
	carve(&c, capacity, t);
	t->next = c.overflow ? NULL : malloc((size_t)capacity * sizeof(*t->next));
	t->node_head = c.overflow ? NULL : malloc((size_t)capacity * sizeof(uint32_t));
	t->node_next = c.overflow ? NULL : malloc((size_t)capacity * sizeof(uint32_t));
	t->node_unlinks = c.overflow ? NULL : calloc(capacity, sizeof(uint32_t));
	bool got = t->next != NULL && t->node_head != NULL && t->node_next != NULL &&
		   t->node_unlinks != NULL;
	if (!got || (!fresh && t->shared->capacity != capacity)) {
		errno = c.overflow ? EINVAL : !got ? ENOMEM : EPROTO;
		free(t->next);
		free(t->node_head);
		free(t->node_next);
		free(t->node_unlinks);
		free(t);
		return NULL;
	}
	t->capacity = capacity;
	if (fresh) {
		/* Fresh memory reads zero already; only the header is set, so
		 * the records' pages stay unbacked until first used. */
		t->shared->capacity = capacity;
		t->shared->live = 0;
	}
	if (fresh)
		t->shared->high_water = 0;
	placements_reindex(t);
	return t;
}

void placements_reindex(struct placements *t)
{
	/* The free records, index 0 on top: the first placements use the
	 * first records. On re-attach, every record without an owner is free,
	 * including one a worker had taken but not filled when the daemon
	 * died (its commit, if any, is not counted: see ledger_recount). */
	uint32_t top = NIL;
	uint64_t live = 0;
	uint32_t hw = t->shared->high_water;
	if (hw > t->capacity)
		hw = t->capacity; /* damaged: the owners tell (the caller checks) */
	/* The node chains again (PN1), each in index order: no other thread
	 * runs, plain stores. PN3: every chain counts as changed (a reader's
	 * key from before no longer matches). */
	for (uint32_t i = 0; i < t->capacity; i++) {
		t->node_head[i] = NIL;
		t->node_unlinks[i]++;
	}
	/* The caches' records are free again below, their figures counted
	 * from the owners. */
	for (unsigned w = 0; w < t->n_caches; w++) {
		t->caches[w].n = 0;
		t->caches[w].published = 0;
	}
	for (uint32_t i = t->capacity; i-- > 0;) {
		if (i < hw && t->recs[i].owner != 0) {
			live++;
			uint32_t slot = t->recs[i].slot;
			if (slot < t->capacity) {
				t->node_next[i] = t->node_head[slot];
				t->node_head[slot] = i;
			}
			continue;
		}
		t->next[i] = top;
		top = i;
	}
	t->head = top;
	/* Relaxed: no other thread runs yet. */
	__atomic_store_n(&t->shared->live, live, __ATOMIC_RELAXED);
	__atomic_store_n(&t->shared->high_water, hw, __ATOMIC_RELAXED);
}

int placements_restore(struct placements *t, uint64_t id,
		       const struct placement_record *r)
{
	uint32_t index = (uint32_t)id, gen = (uint32_t)(id >> 32);
	if (index >= t->capacity || gen == 0 || r->owner == 0)
		return -EINVAL;
	struct placement_record *dst = &t->recs[index];
	if (dst->owner != 0)
		return -EEXIST;
	*dst = *r;
	dst->gen = gen;
	if (index >= t->shared->high_water)
		t->shared->high_water = index + 1;
	return 0;
}

struct placements *placements_create(uint32_t capacity)
{
	/* A record's page is backed only when it is first written. */
	struct shm_span mem = shm_span_private(capacity ? placements_section_size(capacity)
							: 0);
	if (mem.base == NULL) {
		errno = capacity == 0 ? EINVAL : ENOMEM;
		return NULL;
	}
	struct placements *t = placements_create_in(mem, capacity, true);
	if (t == NULL) {
		int saved = errno;
		shm_span_release(mem);
		errno = saved;
		return NULL;
	}
	t->owned = mem;
	return t;
}

void placements_destroy(struct placements *t)
{
	if (t == NULL)
		return;
	shm_span_release(t->owned);
	free(t->next);
	free(t->node_head);
	free(t->node_next);
	free(t->node_unlinks);
	free(t->caches);
	free(t);
}

int placements_set_workers(struct placements *t, unsigned workers)
{
	if (t->caches != NULL || workers == 0)
		return -EINVAL;
	t->caches = aligned_alloc(64, workers * sizeof(*t->caches));
	if (t->caches == NULL)
		return -ENOMEM;
	memset(t->caches, 0, workers * sizeof(*t->caches));
	t->n_caches = workers;
	return 0;
}

uint32_t placements_capacity(const struct placements *t)
{
	return t->capacity;
}

/* H1: moves the mark past `index` (a record just taken). Relaxed; the
 * mark only bounds scans, which read each record's owner with acquire
 * anyway. Moved only upwards, rarely (records are reused lowest first;
 * a cache's batch moves it once). */
static void raise_high_water(struct placements *t, uint32_t index)
{
	uint32_t hw = __atomic_load_n(&t->shared->high_water, __ATOMIC_RELAXED);
	while (index >= hw &&
	       !__atomic_compare_exchange_n(&t->shared->high_water, &hw, index + 1,
					    true, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

/* F1: up to `want` records off the stack into `out`, in one
 * compare-and-swap. Returns how many (0: the stack is empty). */
static uint32_t pop_batch(struct placements *t, uint32_t *out, uint32_t want)
{
	/* F1: acquire, partner of F2's release. */
	uint64_t head = __atomic_load_n(&t->head, __ATOMIC_ACQUIRE);
	for (;;) {
		uint32_t n = 0, at = (uint32_t)head;
		/* Relaxed: a stale link fails the compare-and-swap below, whose
		 * tag has moved on since the link was written (any pop or push
		 * moves it: while it stays, the records walked stay stacked). */
		while (n < want && at != NIL && at < t->capacity) {
			out[n++] = at;
			at = __atomic_load_n(&t->next[at], __ATOMIC_RELAXED);
		}
		if (n == 0)
			return 0;
		uint64_t next = ((head >> 32) + 1) << 32 | at;
		/* F1: acquire on success. */
		if (__atomic_compare_exchange_n(&t->head, &head, next, true,
						__ATOMIC_ACQUIRE, __ATOMIC_ACQUIRE))
			return n;
	}
}

static int64_t cache_steal(struct placements *t, unsigned w);

int64_t placements_take(struct placements *t)
{
	uint32_t top;
	if (pop_batch(t, &top, 1) == 0)
		/* PC2: from the workers' caches (a resync's or a cluster
		 * file's bound pods, while workers run). */
		return t->n_caches > 0 ? cache_steal(t, t->n_caches) : -ENOSPC;
	raise_high_water(t, top);
	return top;
}

/* PC1: worker w's cache, held: acquire, partner of cache_unlock's release
 * (the records and figure the last holder left). Uncontended but for a
 * stealer (cache_steal) or a second thread given the same w. */
static struct placements_cache *cache_lock(struct placements *t, unsigned w)
{
	struct placements_cache *c = &t->caches[w];
	while (__atomic_exchange_n(&c->lock, 1, __ATOMIC_ACQUIRE) != 0)
		while (__atomic_load_n(&c->lock, __ATOMIC_RELAXED) != 0)
			__builtin_ia32_pause();
	return c;
}

static void cache_unlock(struct placements_cache *c)
{
	/* PC1: release, partner of cache_lock's acquire. */
	__atomic_store_n(&c->lock, 0, __ATOMIC_RELEASE);
}

/* PC2: a record out of another worker's cache, when the stack is empty:
 * so a take fails only when every record is live or taken. Each cache
 * under its lock, none skipped on a look without it: one being refilled
 * holds its lock from the pop on, so its batch is not missed. Only when
 * the stack ran dry, so rare. */
static int64_t cache_steal(struct placements *t, unsigned w)
{
	/* Every cache but w's (w == n_caches: every cache). */
	for (unsigned k = w < t->n_caches ? 1 : 0; k < t->n_caches; k++) {
		struct placements_cache *c = cache_lock(t, (w + k) % t->n_caches);
		int64_t got = c->n > 0 ? (int64_t)c->idx[--c->n] : -ENOSPC;
		cache_unlock(c);
		if (got >= 0)
			return got;
	}
	return -ENOSPC;
}

int64_t placements_take_w(struct placements *t, unsigned w)
{
	if (w >= t->n_caches)
		return placements_take(t);
	struct placements_cache *c = cache_lock(t, w);
	if (c->n == 0) {
		/* The batch in reverse, so the lowest index is taken first. */
		uint32_t got[CACHE_BATCH], top = 0;
		uint32_t n = pop_batch(t, got, CACHE_BATCH);
		for (uint32_t i = 0; i < n; i++) {
			c->idx[n - 1 - i] = got[i];
			top = got[i] > top ? got[i] : top;
		}
		c->n = n;
		if (n > 0)
			raise_high_water(t, top); /* H1: once a batch */
	}
	int64_t got = c->n > 0 ? (int64_t)c->idx[--c->n] : -ENOSPC;
	cache_unlock(c);
	return got >= 0 ? got : cache_steal(t, w);
}

static void push(struct placements *t, uint32_t index)
{
	uint64_t head = __atomic_load_n(&t->head, __ATOMIC_RELAXED);
	for (;;) {
		/* F2: relaxed; the release below publishes it. */
		__atomic_store_n(&t->next[index], (uint32_t)head, __ATOMIC_RELAXED);
		uint64_t want = ((head >> 32) + 1) << 32 | index;
		/* F2: release, partner of F1's acquire. */
		if (__atomic_compare_exchange_n(&t->head, &head, want, true,
						__ATOMIC_RELEASE, __ATOMIC_RELAXED))
			return;
	}
}

void placements_untake(struct placements *t, uint32_t index)
{
	push(t, index);
}

void placements_untake_w(struct placements *t, unsigned w, uint32_t index)
{
	if (w < t->n_caches) {
		struct placements_cache *c = cache_lock(t, w);
		bool kept = c->n < CACHE_MAX;
		if (kept) {
			c->idx[c->n++] = index;
		}
		cache_unlock(c);
		if (kept)
			return;
	}
	push(t, index);
}

const struct placement_record *placements_prepare(struct placements *t,
						  uint32_t index, uint32_t slot,
						  uint32_t node_gen,
						  const struct pod_spec *pod,
						  const struct device_assignment *dev,
						  uint64_t cookie, uint64_t *id)
{
	struct placement_record *r = &t->recs[index];
	r->pod_name = pod->ns_name;
	r->cookie = cookie;
	r->group = pod->group;
	r->group_terms = pod->group_terms;
	r->priority = pod->priority;
	/* vDSO, no system call: preemption's tie-break between victims. */
	r->placed_ns = now_ns();
	uint32_t gen = r->gen == 0 ? 1 : r->gen;
	r->gen = gen;
	r->slot = slot;
	r->node_gen = node_gen;
	r->request = pod->request;
	r->nonzero_cpu_milli = pod->nonzero_cpu_milli;
	r->nonzero_mem_bytes = pod->nonzero_mem_bytes;
	if (dev != NULL)
		r->dev = *dev;
	else
		memset(&r->dev, 0, sizeof(r->dev));
	r->n_ports = pod->n_ports;
	memcpy(r->ports, pod->ports, pod->n_ports * sizeof(r->ports[0]));
	r->quota = 0;
	*id = (uint64_t)gen << 32 | index;
	return r;
}

void placements_set_quota(struct placements *t, uint32_t index, uint32_t quota)
{
	/* The worker's alone until P1 publishes it; after, only the quota's
	 * replacement rewrites it (QA4, daemon/quota_charge.c): relaxed, the
	 * quota's own gates order it for the hook. */
	__atomic_store_n(&t->recs[index].quota, quota, __ATOMIC_RELAXED);
}

void placements_set_free_hook(struct placements *t, placements_free_fn fn,
			      void *arg)
{
	t->free_hook = fn;
	t->free_arg = arg;
}

static void publish(struct placements *t, uint32_t index, uint32_t owner);

void placements_publish(struct placements *t, uint32_t index, uint32_t owner)
{
	/* PL1: relaxed, a figure. */
	__atomic_fetch_add(&t->shared->live, 1, __ATOMIC_RELAXED);
	publish(t, index, owner);
}

void placements_publish_w(struct placements *t, unsigned w, uint32_t index,
			  uint32_t owner)
{
	if (w >= t->n_caches) {
		placements_publish(t, index, owner);
		return;
	}
	/* PL1: the worker's own figure, no read-modify-write: relaxed, and
	 * only its holders write it (PC1). */
	struct placements_cache *c = cache_lock(t, w);
	__atomic_store_n(&c->published, c->published + 1, __ATOMIC_RELAXED);
	cache_unlock(c);
	publish(t, index, owner);
}

static void publish(struct placements *t, uint32_t index, uint32_t owner)
{
	/* P1: release, partner of P2's acquire. */
	__atomic_store_n(&t->recs[index].owner, owner, __ATOMIC_RELEASE);
	uint32_t slot = t->recs[index].slot;
	if (slot >= t->capacity)
		return; /* on no chain (placements_node_indexed) */
	/* PN1: the link relaxed, then the head with release (partner of PN2's
	 * acquire); retried only when another publisher on the same node,
	 * or the freeing thread, moved the head meanwhile. */
	uint32_t *head = &t->node_head[slot];
	uint32_t h = __atomic_load_n(head, __ATOMIC_RELAXED);
	do
		__atomic_store_n(&t->node_next[index], h, __ATOMIC_RELAXED);
	while (!__atomic_compare_exchange_n(head, &h, index, true, __ATOMIC_RELEASE,
					    __ATOMIC_RELAXED));
}

/* PN1's unlink, on the freeing thread: `index` off its node's chain. */
static void node_unlink(struct placements *t, uint32_t slot, uint32_t index)
{
	if (slot >= t->capacity)
		return;
	uint32_t *head = &t->node_head[slot];
	/* PN1: relaxed; the freeing thread wrote or read every link it
	 * follows here but the publishers' heads, acquired below. */
	uint32_t after = __atomic_load_n(&t->node_next[index], __ATOMIC_RELAXED);
	for (;;) {
		/* PN2: acquire, partner of PN1's release (a publisher's link). */
		uint32_t h = __atomic_load_n(head, __ATOMIC_ACQUIRE);
		if (h == index) {
			/* PN1: a publisher may push meanwhile: then again, and
			 * the record is below the head now. Relaxed: the
			 * records the head leads to were published before. */
			if (__atomic_compare_exchange_n(head, &h, after, false,
							__ATOMIC_RELAXED, __ATOMIC_RELAXED))
				return;
			continue;
		}
		for (uint32_t at = h; at != NIL;) {
			/* PN2: acquire. */
			uint32_t nx = __atomic_load_n(&t->node_next[at], __ATOMIC_ACQUIRE);
			if (nx == index) {
				/* PN1: release, partner of PN2's acquire. */
				__atomic_store_n(&t->node_next[at], after, __ATOMIC_RELEASE);
				return;
			}
			at = nx;
		}
		return; /* on no chain: restored past a damaged mark */
	}
}

bool placements_node_indexed(const struct placements *t, uint32_t n_slots)
{
	return n_slots <= t->capacity;
}

uint32_t placements_node_first(const struct placements *t, uint32_t slot)
{
	if (slot >= t->capacity)
		return NIL;
	/* PN2: acquire, partner of PN1's release. */
	return __atomic_load_n(&t->node_head[slot], __ATOMIC_ACQUIRE);
}

uint32_t placements_node_unlinks(const struct placements *t, uint32_t slot)
{
	if (slot >= t->capacity)
		return 0;
	/* PN3: relaxed (see placements_free). */
	return __atomic_load_n(&t->node_unlinks[slot], __ATOMIC_RELAXED);
}

const uint32_t *placements_node_heads(const struct placements *t)
{
	return t->node_head;
}

const uint32_t *placements_node_unlink_counts(const struct placements *t)
{
	return t->node_unlinks;
}

uint32_t placements_node_next(const struct placements *t, uint32_t index)
{
	/* PN2: acquire, partner of PN1's release. */
	return __atomic_load_n(&t->node_next[index], __ATOMIC_ACQUIRE);
}

uint64_t placements_fill(struct placements *t, uint32_t index, uint32_t owner,
			 uint32_t slot, uint32_t node_gen,
			 const struct pod_spec *pod,
			 const struct device_assignment *dev, uint64_t cookie)
{
	uint64_t id;
	placements_prepare(t, index, slot, node_gen, pod, dev, cookie, &id);
	placements_publish(t, index, owner);
	return id;
}

const struct placement_record *placements_get(const struct placements *t, uint64_t id)
{
	uint32_t index = (uint32_t)id;
	if (index >= t->capacity)
		return NULL;
	const struct placement_record *r = &t->recs[index];
	/* P2: acquire, partner of P1. */
	if (__atomic_load_n(&r->owner, __ATOMIC_ACQUIRE) == 0 ||
	    r->gen != (uint32_t)(id >> 32))
		return NULL;
	return r;
}

void placements_free(struct placements *t, uint64_t id)
{
	struct placement_record *r = &t->recs[(uint32_t)id];
	/* The record is still live here (the caller's placements_get()). */
	node_unlink(t, r->slot, (uint32_t)id);
	/* PN3: relaxed; its readers hold off frees (PN2), so they are
	 * ordered after it by what holds them off. */
	if (r->slot < t->capacity)
		__atomic_store_n(&t->node_unlinks[r->slot], t->node_unlinks[r->slot] + 1,
				 __ATOMIC_RELAXED);
	/* QA4: relaxed; a rewrite to another non-zero value or to 0 may race
	 * this test: the hook reads it again under the quota's gate. */
	if (__atomic_load_n(&r->quota, __ATOMIC_RELAXED) != 0 && t->free_hook != NULL)
		t->free_hook(t->free_arg, r);
	/* P2: relaxed; F2's release orders it for the next popper. */
	__atomic_store_n(&r->owner, 0, __ATOMIC_RELAXED);
	r->gen = r->gen + 1 == 0 ? 1 : r->gen + 1;
	/* PL1: relaxed, a figure (it may wrap below 0 while the workers'
	 * figures hold the publishes: placements_live sums them). */
	__atomic_fetch_sub(&t->shared->live, 1, __ATOMIC_RELAXED);
	push(t, (uint32_t)id);
}

uint32_t placements_high_water(const struct placements *t)
{
	/* H1: relaxed. */
	return __atomic_load_n(&t->shared->high_water, __ATOMIC_RELAXED);
}

uint64_t placements_next(const struct placements *t, uint32_t *cursor)
{
	uint32_t end = placements_high_water(t);
	for (uint32_t i = *cursor; i < end; i++) {
		const struct placement_record *r = &t->recs[i];
		/* P2: acquire, partner of P1. */
		if (__atomic_load_n(&r->owner, __ATOMIC_ACQUIRE) != 0) {
			*cursor = i + 1;
			return (uint64_t)r->gen << 32 | i;
		}
	}
	*cursor = t->capacity;
	return 0;
}

const struct placement_record *placements_at(const struct placements *t,
					     uint32_t index, uint64_t *id)
{
	if (index >= placements_high_water(t))
		return NULL;
	const struct placement_record *r = &t->recs[index];
	/* P2: acquire, partner of P1. */
	if (__atomic_load_n(&r->owner, __ATOMIC_ACQUIRE) == 0)
		return NULL;
	*id = (uint64_t)r->gen << 32 | index;
	return r;
}

uint32_t placements_index_of(const struct placements *t,
			     const struct placement_record *r)
{
	return (uint32_t)(r - t->recs);
}

void placement_use(const struct placement_record *r, struct pod_spec *pod)
{
	memset(pod, 0, sizeof(*pod));
	pod->request = r->request;
	pod->request.v[RES_PODS] = 0;
	pod->nonzero_cpu_milli = r->nonzero_cpu_milli;
	pod->nonzero_mem_bytes = r->nonzero_mem_bytes;
	pod->n_ports = r->n_ports <= POD_MAX_PORTS ? r->n_ports : POD_MAX_PORTS;
	memcpy(pod->ports, r->ports, pod->n_ports * sizeof(pod->ports[0]));
	pod->group = r->group;
	pod->group_terms = r->group_terms;
	pod->priority = r->priority;
}

uint32_t placements_populate_ahead(struct placements *t, uint32_t ahead)
{
	if (t->populate_off)
		return 0;
	/* H1: relaxed, a bound. */
	uint32_t hw = __atomic_load_n(&t->shared->high_water, __ATOMIC_RELAXED);
	uint64_t want = (uint64_t)hw + ahead;
	uint32_t target = want < t->capacity ? (uint32_t)want : t->capacity;
	if (target <= t->populated)
		return 0;
	/* Whole pages: the first one the range touches, to the end of its
	 * last record; at most POPULATE_PAGES of them, so the call stays
	 * short (the kernel does not preempt it midway everywhere). */
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t from = (uintptr_t)&t->recs[t->populated] & ~(page - 1);
	uintptr_t to = (uintptr_t)&t->recs[target];
	if (to - from > POPULATE_PAGES * page) {
		to = from + POPULATE_PAGES * page;
		target = (uint32_t)((to - (uintptr_t)t->recs) / sizeof(t->recs[0]));
		if (target <= t->populated) /* a record larger than the pages */
			target = t->populated + 1;
		to = (uintptr_t)&t->recs[target];
	}
	if (madvise((void *)from, to - from, MADV_POPULATE_WRITE) != 0) {
		t->populate_off = true;
		return 0;
	}
	uint32_t grown = target - t->populated;
	t->populated = target;
	return grown;
}

uint64_t placements_live(const struct placements *t)
{
	/* PL1: relaxed, a figure: the shared count and every worker's,
	 * modulo 2^64. */
	uint64_t live = __atomic_load_n(&t->shared->live, __ATOMIC_RELAXED);
	for (unsigned w = 0; w < t->n_caches; w++)
		live += __atomic_load_n(&t->caches[w].published, __ATOMIC_RELAXED);
	return live;
}
