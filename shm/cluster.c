/* Cluster state: snapshots published with liburcu QSBR and stable node
 * slots. See cluster.h for the contract; live use is shm/ledger.c.
 *
 * Snapshots live in two fixed buffers of the state region (shm/layout.h).
 * A write brings the other buffer up to the current snapshot (S1), applies
 * the events to it, updates the structure-of-arrays columns, shard
 * summaries and checksum (S2), publishes it (a release store of the
 * pointer, as rcu_assign_pointer, and of the region's index, S3), and waits
 * for urcu_qsbr_synchronize_rcu(): after it no daemon thread holds the old
 * buffer, which the next write reuses. Readers in other processes cannot
 * take part in the grace period, so they use the buffer's sequence number
 * instead (O3) and retry when it moved. Then the write clears the ledger
 * records of removed nodes (shm/ledger.c, NR1).
 *
 * Catch-up: the other buffer holds the snapshot before the current one
 * (generation g - 1 when g is current), so bringing it to g copies only the
 * slots publish g changed, which the spec log names (N1). Where the log
 * cannot say (a batch of more than half the log, a failed write into that
 * buffer, the first write since this process attached), every slot is
 * copied. The columns and summaries are recomputed for the slots copied or
 * changed and their shards; the checksum's sum (shm/snapshots.c) moves by
 * the changed slots' terms. Cost per cluster_apply(): O((slots changed by
 * it and by the publish before) x sizeof(node_spec) + shards), plus
 * free_slot()'s scan of the present bytes when the batch adds; and
 * O(slots x sizeof(node_spec)) on the full-copy path.
 */
#define _LGPL_SOURCE 1

#include "shm/cluster.h"

#include "base/base.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <urcu/urcu-qsbr.h>

#include "shm/carve.h"
#include "shm/layout.h"

#include "shm/rcu.h"

struct cluster {
	struct intern *strings;
	uint32_t capacity;
	/* RCU-protected: published with a release store, read with an
	 * acquire load (rcu_assign_pointer / rcu_dereference's orders, as
	 * __atomic builtins that ThreadSanitizer can see). Points at one of
	 * views[]. */
	struct snapshot *current;
	/* The two buffers of the snapshots section, as this process sees
	 * them: pointers into the region and their header. A write builds
	 * the one that is not current (shm/layout.h, S1-S3). */
	struct snapshot views[2];
	struct state_snapshot *headers[2];
	uint32_t *current_index;  /* state_meta.current_snapshot (S3) */
	uint32_t n_nodes; /* the current snapshot's, relaxed: a figure */
	struct ledger *ledger;    /* live use per slot */
	int32_t *slot_of_name;    /* [name id] slot + 1, 0 = none; writer side */
	uint32_t slot_of_name_len;
	uint64_t freed;
	struct shm_span owned;    /* cluster_create()'s private memory */
	uint32_t owned_index;     /* the current index, when not in a region */
	/* The slots each publish changed (cluster_changed_slots): entries
	 * (generation << 32) | slot, CLUSTER_SPEC_ALL for "every slot";
	 * process-private (caches are). N1: the writer stores entries
	 * (relaxed), then the head (release), then the snapshot (release). */
	uint64_t spec_head;
	uint64_t spec_log[CLUSTER_SPEC_LOG];
	/* The writer's own record of the two buffers (catch-up, above):
	 * the generation whose slots, columns and summaries views[b] holds
	 * whole, 0 when unknown (a failed write into it, or not written since
	 * this process attached); and the checksum's sum of the current
	 * snapshot's slot terms (shm/snapshots.c). */
	uint64_t buffer_generation[2];
	uint64_t slot_sum;
	uint64_t full_copies;     /* writes that copied every slot */
	uint32_t catch_up[CLUSTER_SPEC_LOG / 2]; /* the slots S1 copied */
};

/* N1: the slots of publish `generation` into the log, before the head
 * (release) and the snapshot that shows them. A batch larger than half the
 * log is one "every slot" entry, so a reader never meets a batch that
 * overwrites itself. */
static void spec_log_append(struct cluster *c, uint64_t generation,
			    const int64_t *slots, size_t n)
{
	uint64_t head = c->spec_head;
	uint64_t tag = (generation & UINT32_MAX) << 32;
	if (n > CLUSTER_SPEC_LOG / 2) {
		__atomic_store_n(&c->spec_log[head++ % CLUSTER_SPEC_LOG],
				 tag | CLUSTER_SPEC_ALL, __ATOMIC_RELAXED);
	} else {
		for (size_t i = 0; i < n; i++)
			__atomic_store_n(&c->spec_log[head++ % CLUSTER_SPEC_LOG],
					 tag | (uint32_t)slots[i], __ATOMIC_RELAXED);
	}
	/* Release, partner of the acquire in cluster_changed_slots(). */
	__atomic_store_n(&c->spec_head, head, __ATOMIC_RELEASE);
}

int cluster_changed_slots(const struct cluster *c, uint64_t from, uint64_t to,
			  uint32_t *out, uint32_t max)
{
	if (to <= from)
		return 0;
	if (to - from >= UINT32_MAX)
		return -1;
	/* Acquire, partner of N1's release: every entry of a generation up
	 * to the caller's snapshot's is here (the head was stored first). */
	uint64_t head = __atomic_load_n(&c->spec_head, __ATOMIC_ACQUIRE);
	uint64_t oldest = head > CLUSTER_SPEC_LOG / 2 ? head - CLUSTER_SPEC_LOG / 2 : 0;
	uint32_t n = 0;
	bool reached = false;
	uint64_t i = head;
	/* Newest first, down to an entry of `from` or older. Generations are
	 * compared modulo 2^32, within the window to - from. */
	while (i > oldest) {
		uint64_t e = __atomic_load_n(&c->spec_log[(i - 1) % CLUSTER_SPEC_LOG],
					     __ATOMIC_RELAXED);
		uint32_t gen = (uint32_t)(e >> 32), slot = (uint32_t)e;
		uint32_t back = (uint32_t)to - gen; /* 0: `to` itself */
		if (back >= (uint32_t)(to - from) && back < UINT32_MAX / 2) {
			reached = true; /* an entry of `from` or before */
			break;
		}
		i--;
		if (back >= UINT32_MAX / 2)
			continue; /* a later generation than the caller's */
		if (slot == CLUSTER_SPEC_ALL || n == max)
			return -1;
		out[n++] = slot;
	}
	/* The writer may be storing a batch past the newest head: it
	 * overwrites entries below that head's half-log window, so an entry
	 * read there (down to index `lowest`) may not be what it was. */
	uint64_t lowest = reached ? i - 1 : i;
	uint64_t head2 = __atomic_load_n(&c->spec_head, __ATOMIC_ACQUIRE);
	if (head2 - lowest > CLUSTER_SPEC_LOG / 2)
		return -1;
	if (!reached && !(i == 0 && head < CLUSTER_SPEC_LOG / 2))
		return -1; /* fell off the window before finding `from` */
	return (int)n;
}

/* S1: the buffer is about to change. */
static void buffer_open(struct state_snapshot *h)
{
	/* S1: relaxed store, then a release fence: an observer that sees
	 * any write below sees seq odd (or changed) when it re-reads. */
	__atomic_store_n(&h->seq, h->seq + 1, __ATOMIC_RELAXED);
	state_fence_release();
}

/* S2: the buffer holds `v`, whole, whose checksum is `checksum`. */
static void buffer_close(struct state_snapshot *h, const struct snapshot *v,
			 uint64_t checksum)
{
	h->generation = v->generation;
	h->n_slots = v->n_slots;
	h->n_nodes = v->n_nodes;
	h->n_shards = v->n_shards;
	h->checksum = checksum;
	/* S2: release, partner of O3's acquire loads. */
	__atomic_store_n(&h->seq, h->seq + 1, __ATOMIC_RELEASE);
}

/* The derived columns of one slot: structure of arrays. */
static void slot_derive(struct snapshot *s, uint32_t i)
{
	for (int r = 0; r < RES_MAX; r++)
		s->allocatable[r][i] = s->present[i] ? s->nodes[i].allocatable.v[r] : 0;
}

/* One shard's summary, from its slots alone (a maximum cannot be moved
 * down by one slot's change). */
static void shard_derive(struct snapshot *s, uint32_t shard)
{
	struct shard_summary *sh = &s->shards[shard];
	memset(sh, 0, sizeof(*sh));
	uint32_t end = (shard + 1) * SNAP_SHARD_SLOTS;
	if (end > s->n_slots)
		end = s->n_slots;
	for (uint32_t i = shard * SNAP_SHARD_SLOTS; i < end; i++) {
		const struct node_spec *n = &s->nodes[i];
		if (!s->present[i])
			continue;
		sh->present++;
		for (int r = 0; r < RES_MAX; r++)
			if (n->allocatable.v[r] > sh->max_allocatable[r])
				sh->max_allocatable[r] = n->allocatable.v[r];
		sh->any_unschedulable |= n->unschedulable;
		for (unsigned t = 0; t < n->n_taints; t++)
			sh->any_hard_taint |= n->taints[t].effect == TAINT_NO_SCHEDULE ||
					      n->taints[t].effect == TAINT_NO_EXECUTE;
	}
}

/* The node count, from the shard summaries: O(shards). */
static void count_nodes(struct snapshot *s)
{
	s->n_nodes = 0;
	for (uint32_t b = 0; b < s->n_shards; b++)
		s->n_nodes += s->shards[b].present;
}

/* The derived columns, whole: structure of arrays, shard summaries, node
 * count. */
static void snapshot_derive(struct snapshot *s)
{
	for (uint32_t i = 0; i < s->n_slots; i++)
		slot_derive(s, i);
	for (uint32_t b = 0; b < s->n_shards; b++)
		shard_derive(s, b);
	count_nodes(s);
}

static int cmp_slot(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return (x > y) - (x < y);
}

/* Sorts slots[] and drops repeats; returns how many are left. */
static size_t sort_unique(uint32_t *slots, size_t n)
{
	if (n == 0)
		return 0;
	qsort(slots, n, sizeof(*slots), cmp_slot);
	size_t k = 1;
	for (size_t i = 1; i < n; i++)
		if (slots[i] != slots[k - 1])
			slots[k++] = slots[i];
	return k;
}

/* The derived columns of the slots in slots[] (sorted, unique) and of
 * their shards; the rest are as they were, and right, since their slots
 * did not change. */
static void snapshot_derive_slots(struct snapshot *s, const uint32_t *slots,
				  size_t n)
{
	for (size_t i = 0; i < n; i++) {
		slot_derive(s, slots[i]);
		uint32_t shard = slots[i] / SNAP_SHARD_SLOTS;
		if (i + 1 == n || slots[i + 1] / SNAP_SHARD_SLOTS != shard)
			shard_derive(s, shard);
	}
	count_nodes(s);
}

static int name_map_reserve(struct cluster *c, uint32_t name)
{
	if (name < c->slot_of_name_len)
		return 0;
	uint32_t len = c->slot_of_name_len ? c->slot_of_name_len : 1024;
	while (len <= name)
		len *= 2;
	int32_t *m = realloc(c->slot_of_name, len * sizeof(*m));
	if (m == NULL)
		return -ENOMEM;
	memset(m + c->slot_of_name_len, 0,
	       (len - c->slot_of_name_len) * sizeof(*m));
	c->slot_of_name = m;
	c->slot_of_name_len = len;
	return 0;
}

int64_t cluster_slot_of(const struct cluster *c, uint32_t name)
{
	if (name >= c->slot_of_name_len || c->slot_of_name[name] == 0)
		return -1;
	return c->slot_of_name[name] - 1;
}

/* Checks the current snapshot a previous daemon left and rebuilds the
 * name map from it. */
static int adopt_snapshot(struct cluster *c, uint32_t cur, char *err,
			  size_t err_len)
{
	struct state_snapshot *h = c->headers[cur];
	struct snapshot *v = &c->views[cur];
	uint32_t strings = intern_count(c->strings);
	if ((h->seq & 1) || h->n_slots > c->capacity || h->generation == 0 ||
	    h->n_shards != (h->n_slots + SNAP_SHARD_SLOTS - 1) / SNAP_SHARD_SLOTS)
		return errmsg_rc(-EBADMSG, err, err_len, "snapshot %u: header "
				 "damaged (seq %llu, %u slots of %u)", cur,
				 (unsigned long long)h->seq, h->n_slots, c->capacity);
	v->generation = h->generation;
	v->n_slots = h->n_slots;
	v->n_nodes = h->n_nodes;
	v->n_shards = h->n_shards;
	c->slot_sum = cluster_slot_sum(v);
	if (cluster_checksum_of(v, c->slot_sum) != h->checksum)
		return errmsg_rc(-EBADMSG, err, err_len, "snapshot %u (generation "
				 "%llu): checksum mismatch", cur,
				 (unsigned long long)h->generation);
	for (uint32_t i = 0; i < v->n_slots; i++) {
		if (!v->present[i])
			continue;
		const struct node_spec *n = &v->nodes[i];
		if (v->present[i] != 1 || n->name == 0 || n->name >= strings ||
		    n->n_labels > NODE_MAX_LABELS || n->n_taints > NODE_MAX_TAINTS ||
		    n->devices.n_gpus > NODE_MAX_GPUS ||
		    n->devices.n_cores > NODE_MAX_CORES)
			return errmsg_rc(-EBADMSG, err, err_len, "snapshot: node "
					 "slot %u damaged", i);
		int rc = name_map_reserve(c, n->name);
		if (rc < 0)
			return errmsg_rc(rc, err, err_len, "out of memory");
		if (c->slot_of_name[n->name] != 0)
			return errmsg_rc(-EBADMSG, err, err_len, "snapshot: node %s "
					 "in two slots", intern_str(c->strings, n->name));
		c->slot_of_name[n->name] = (int32_t)i + 1;
	}
	snapshot_derive(v);
	if (v->n_nodes != h->n_nodes)
		return errmsg_rc(-EBADMSG, err, err_len, "snapshot: %u nodes "
				 "present, header says %u", v->n_nodes, h->n_nodes);
	return 0;
}

struct cluster *cluster_create_in(struct intern *strings, uint32_t capacity,
				  const struct cluster_memory *mem, bool fresh,
				  char *err, size_t err_len)
{
	if (strings == NULL || capacity == 0 || capacity > (1u << 28)) {
		errmsg_rc(-EINVAL, err, err_len, "cluster: capacity %u out of "
			  "range 1..%u", capacity, 1u << 28);
		errno = EINVAL;
		return NULL;
	}
	struct cluster *c = calloc(1, sizeof(*c));
	if (c == NULL) {
		errmsg_rc(-ENOMEM, err, err_len, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	c->strings = strings;
	c->capacity = capacity;
	c->current_index = mem->current;
	int rc = cluster_snapshots_in(mem->snapshots, capacity, c->headers,
				      c->views);
	c->ledger = rc < 0 ? NULL : ledger_create_in(mem->ledger, capacity, fresh);
	if (c->ledger == NULL) {
		rc = errmsg_rc(-EINVAL, err, err_len, "cluster: the snapshots or "
			       "ledger section does not fit %u nodes", capacity);
		goto fail;
	}
	if (fresh) {
		for (int b = 0; b < 2; b++) {
			memset(c->headers[b], 0, sizeof(*c->headers[b]));
			c->views[b].n_slots = 0;
			c->views[b].n_shards = 0;
		}
		c->views[0].generation = 1;
		buffer_open(c->headers[0]);
		buffer_close(c->headers[0], &c->views[0],
			     cluster_snapshot_checksum(&c->views[0]));
		*c->current_index = 0;
		c->buffer_generation[0] = 1;
		c->slot_sum = 0;
	} else {
		uint32_t cur = *c->current_index;
		if (cur > 1) {
			rc = errmsg_rc(-EBADMSG, err, err_len, "current snapshot "
				       "index %u (expected 0 or 1)", cur);
			goto fail;
		}
		rc = adopt_snapshot(c, cur, err, err_len);
		if (rc < 0)
			goto fail;
		c->buffer_generation[cur] = c->views[cur].generation;
	}
	c->current = &c->views[*c->current_index];
	c->n_nodes = c->current->n_nodes;
	return c;

fail:
	ledger_destroy(c->ledger);
	free(c->slot_of_name);
	free(c);
	errno = -rc;
	return NULL;
}

struct cluster *cluster_create(struct intern *strings, uint32_t capacity)
{
	if (capacity == 0 || capacity > (1u << 28)) {
		errno = EINVAL;
		return NULL;
	}
	uint64_t snaps = cluster_snapshots_section_size(capacity);
	uint64_t ledger = ledger_section_size(capacity);
	struct shm_span m = shm_span_private(snaps + ledger);
	if (m.base == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	uint32_t index = 0;
	struct cluster_memory mem = {
		.snapshots = {m.base, snaps},
		.ledger = {(char *)m.base + snaps, ledger},
		.current = &index,
	};
	char err[160];
	struct cluster *c = cluster_create_in(strings, capacity, &mem, true, err,
					      sizeof(err));
	if (c == NULL) {
		int saved = errno;
		shm_span_release(m);
		errno = saved;
		return NULL;
	}
	c->owned = m;
	c->owned_index = index;
	c->current_index = &c->owned_index;
	return c;
}

void cluster_destroy(struct cluster *c)
{
	if (c == NULL)
		return;
	ledger_destroy(c->ledger);
	shm_span_release(c->owned);
	free(c->slot_of_name);
	free(c);
}

/* A free slot: the lowest one at or after *hint that is empty both in the
 * snapshot being built and in the current one (a slot freed by this batch
 * is reused only by a later batch, after its grace period), else one past
 * the end. *hint only moves forward, so a batch of adds costs O(slots). */
static int64_t free_slot(const struct snapshot *s, const struct snapshot *old,
			 uint32_t capacity, uint32_t *hint)
{
	for (uint32_t i = *hint; i < s->n_slots; i++)
		if (!s->present[i] && (i >= old->n_slots || !old->present[i])) {
			*hint = i + 1;
			return i;
		}
	*hint = s->n_slots + 1;
	return s->n_slots < capacity ? (int64_t)s->n_slots : -1;
}

struct undo {
	uint32_t name;
	int32_t old; /* previous slot_of_name value */
};

static void map_set(struct cluster *c, struct undo *log, size_t *n_log,
		    uint32_t name, int32_t value)
{
	log[(*n_log)++] = (struct undo){name, c->slot_of_name[name]};
	c->slot_of_name[name] = value;
}

static int apply_one(struct cluster *c, struct snapshot *s,
		     const struct snapshot *old, const struct node_event *e,
		     int64_t *slot_out, uint32_t *hint,
		     struct undo *log, size_t *n_log, char *err, size_t err_len)
{
	const char *name = intern_str(c->strings, e->name);
	int64_t slot = cluster_slot_of(c, e->name);
	*slot_out = slot;
	switch (e->kind) {
	case NODE_EVENT_ADD:
		if (slot >= 0)
			return errmsg_rc(-EEXIST, err, err_len, "node %s: already exists", name);
		if (e->spec.name != e->name)
			return errmsg_rc(-EINVAL, err, err_len,
				    "node %s: event and spec names differ", name);
		slot = free_slot(s, old, c->capacity, hint);
		if (slot < 0)
			return errmsg_rc(-ENOSPC, err, err_len, "node %s: no free slot: the "
				    "cluster holds at most %u nodes", name, c->capacity);
		if ((uint32_t)slot == s->n_slots)
			s->n_slots++;
		s->present[slot] = 1;
		s->nodes[slot] = e->spec;
		map_set(c, log, n_log, e->name, (int32_t)slot + 1);
		*slot_out = slot;
		return 0;
	case NODE_EVENT_UPDATE:
	case NODE_EVENT_REMOVE:
	case NODE_EVENT_CORDON:
	case NODE_EVENT_UNCORDON:
		break;
	default:
		return errmsg_rc(-EINVAL, err, err_len, "node %s: unknown event kind %u",
			    name, e->kind);
	}
	if (slot < 0)
		return errmsg_rc(-ENOENT, err, err_len, "node %s: no such node", name);
	if (e->kind == NODE_EVENT_UPDATE) {
		if (e->spec.name != e->name)
			return errmsg_rc(-EINVAL, err, err_len,
				    "node %s: event and spec names differ", name);
		s->nodes[slot] = e->spec;
	} else if (e->kind == NODE_EVENT_REMOVE) {
		s->present[slot] = 0;
		memset(&s->nodes[slot], 0, sizeof(s->nodes[slot]));
		map_set(c, log, n_log, e->name, 0);
	} else {
		s->nodes[slot].unschedulable = e->kind == NODE_EVENT_CORDON;
	}
	return 0;
}

/* S1's copy: brings `s`, which holds generation `have` (0: unknown), to
 * `old`. Copies the slots changed since `have`, which it lists in
 * c->catch_up[] and counts, or every slot, and then returns -1. */
static int catch_up(struct cluster *c, struct snapshot *s, uint64_t have,
		    const struct snapshot *old)
{
	int n = have == 0 ? -1
		: cluster_changed_slots(c, have, old->generation, c->catch_up,
					sizeof(c->catch_up) / sizeof(c->catch_up[0]));
	s->n_slots = old->n_slots;
	if (n < 0) {
		c->full_copies++;
		memcpy(s->present, old->present, old->n_slots);
		memcpy(s->nodes, old->nodes, old->n_slots * sizeof(*s->nodes));
		return -1;
	}
	/* Byte for byte, padding included: the checksum's terms of these
	 * slots in `s` are then those of `old`. */
	for (int i = 0; i < n; i++) {
		uint32_t slot = c->catch_up[i];
		s->present[slot] = old->present[slot];
		memcpy(&s->nodes[slot], &old->nodes[slot], sizeof(s->nodes[slot]));
	}
	return n;
}

/* S2's derived columns and checksum for the slots the batch changed
 * (changed[0..n_changed), sorted and unique) and the n_copied slots
 * catch-up copied (c->catch_up; -1: every slot was). Returns the
 * checksum; the new sum is stored in *sum. */
static uint64_t snapshot_finish(struct cluster *c, struct snapshot *s,
				const struct snapshot *old, uint32_t *changed,
				size_t n_changed, int n_copied, uint64_t *sum)
{
	/* A changed slot's term moves from `old`'s (0 past its slots: the
	 * slot was not summed there) to the new one. */
	uint64_t next = c->slot_sum;
	for (size_t i = 0; i < n_changed; i++) {
		uint32_t slot = changed[i];
		if (slot < old->n_slots)
			next -= cluster_slot_term(old, slot);
		next += cluster_slot_term(s, slot);
	}
	*sum = next;
	s->n_shards = (s->n_slots + SNAP_SHARD_SLOTS - 1) / SNAP_SHARD_SLOTS;
	if (n_copied < 0) {
		snapshot_derive(s);
	} else {
		/* changed[] has room for the copied slots after its own. */
		memcpy(changed + n_changed, c->catch_up,
		       (size_t)n_copied * sizeof(*changed));
		size_t n = sort_unique(changed, n_changed + (size_t)n_copied);
		snapshot_derive_slots(s, changed, n);
	}
	return cluster_checksum_of(s, next);
}

int cluster_apply(struct cluster *c, const struct node_event *events, size_t n,
		  char *err, size_t err_len)
{
	const struct snapshot *old = c->current;
	uint32_t target = *c->current_index ^ 1;
	struct snapshot *s = &c->views[target];
	struct state_snapshot *hdr = c->headers[target];
	int rc = 0;
	for (size_t i = 0; i < n && rc == 0; i++)
		rc = name_map_reserve(c, events[i].name);
	int64_t *slots = rc == 0 ? calloc(n ? n : 1, sizeof(*slots)) : NULL;
	struct undo *log = rc == 0 ? calloc(n ? n : 1, sizeof(*log)) : NULL;
	uint32_t *changed = rc == 0 ? calloc(n + CLUSTER_SPEC_LOG / 2,
					     sizeof(*changed)) : NULL;
	if (slots == NULL || log == NULL || changed == NULL) {
		free(changed);
		free(log);
		free(slots);
		return errmsg_rc(-ENOMEM, err, err_len, "out of memory for a snapshot");
	}
	/* The target buffer is no daemon thread's: its last reader passed a
	 * grace period at the end of the write that made it old. Until S2
	 * it holds no generation whole. */
	buffer_open(hdr);
	int n_copied = catch_up(c, s, c->buffer_generation[target], old);
	c->buffer_generation[target] = 0;

	/* The name map follows the batch as it goes (later events see earlier
	 * ones); on an error the undo log restores it and nothing is published. */
	size_t n_log = 0;
	uint32_t hint = 0;
	for (size_t i = 0; i < n && rc == 0; i++)
		rc = apply_one(c, s, old, &events[i], &slots[i], &hint, log, &n_log,
			       err, err_len);
	if (rc < 0) {
		while (n_log-- > 0)
			c->slot_of_name[log[n_log].name] = log[n_log].old;
		free(changed);
		free(log);
		free(slots);
		/* Never current: an observer retries on it. Its slots are left
		 * half-written: the next write here copies them all
		 * (buffer_generation 0). */
		s->generation = 0;
		s->n_slots = 0;
		s->n_shards = 0;
		snapshot_derive(s);
		buffer_close(hdr, s, cluster_snapshot_checksum(s));
		return rc;
	}
	/* A new node starts from nothing. Its slot is reachable by no reader:
	 * it is empty in every snapshot still held (see free_slot). */
	for (size_t i = 0; i < n; i++)
		if (events[i].kind == NODE_EVENT_ADD)
			ledger_reset_node(c->ledger, (uint32_t)slots[i]);
	free(log);
	s->generation = old->generation + 1;
	spec_log_append(c, s->generation, slots, n);
	for (size_t i = 0; i < n; i++)
		changed[i] = (uint32_t)slots[i];
	size_t n_changed = sort_unique(changed, n);
	uint64_t sum;
	uint64_t checksum = snapshot_finish(c, s, old, changed, n_changed,
					    n_copied, &sum);
	free(changed);
	buffer_close(hdr, s, checksum);
	c->buffer_generation[target] = s->generation;
	c->slot_sum = sum;

	/* Release: the snapshot's contents before the pointer that shows it
	 * (partner: the acquire in cluster_snapshot()). */
	__atomic_store_n(&c->current, s, __ATOMIC_RELEASE);
	/* S3: release, partner of O3's acquire (observers in other
	 * processes, shm/layout.h). */
	__atomic_store_n(c->current_index, target, __ATOMIC_RELEASE);
	/* Relaxed: a figure for threads that are not readers. */
	__atomic_store_n(&c->n_nodes, s->n_nodes, __ATOMIC_RELAXED);
	/* Every reader that could hold `old` has passed a quiescent state:
	 * its buffer is free for the next write. */
	rcu_synchronize();
	c->freed++;
	/* Only now can no placement be landing on a removed node's record. A
	 * node removed and re-added in one batch keeps nothing either: the add
	 * took another slot. */
	for (size_t i = 0; i < n; i++)
		if (events[i].kind == NODE_EVENT_REMOVE)
			ledger_reset_node(c->ledger, (uint32_t)slots[i]);
	free(slots);
	return 0;
}

const struct snapshot *cluster_snapshot(const struct cluster *c)
{
	/* Acquire: partner of the release in cluster_apply(). */
	return __atomic_load_n(&c->current, __ATOMIC_ACQUIRE);
}

struct ledger *cluster_ledger(const struct cluster *c)
{
	return c->ledger;
}

uint32_t cluster_capacity(const struct cluster *c)
{
	return c->capacity;
}

uint64_t cluster_snapshots_freed(const struct cluster *c)
{
	return c->freed;
}

uint64_t cluster_full_copies(const struct cluster *c)
{
	return c->full_copies;
}

uint32_t cluster_nodes(const struct cluster *c)
{
	/* Relaxed: a figure (cluster.h). */
	return __atomic_load_n(&c->n_nodes, __ATOMIC_RELAXED);
}
