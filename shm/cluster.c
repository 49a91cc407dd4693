/* Cluster state: snapshots published with liburcu QSBR and stable node
 * slots. See cluster.h for the contract; live use is shm/ledger.c.
 *
 * A write copies the current snapshot, applies the events to the copy,
 * recomputes the structure-of-arrays columns and shard summaries, publishes
 * the copy (a release store of the pointer, as rcu_assign_pointer) and
 * frees the old one after
 * urcu_qsbr_synchronize_rcu(), then clears the ledger records of removed
 * nodes (shm/ledger.c, R1). Cost: O(slots) per cluster_apply() call,
 * however many events it carries, so writers batch.
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

#include "shm/rcu.h"

struct cluster {
	struct intern *strings;
	uint32_t capacity;
	/* RCU-protected: published with a release store, read with an
	 * acquire load (rcu_assign_pointer / rcu_dereference's orders, as
	 * __atomic builtins that ThreadSanitizer can see). */
	struct snapshot *current;
	uint32_t n_nodes; /* the current snapshot's, relaxed: a figure */
	struct ledger *ledger;    /* live use per slot */
	int32_t *slot_of_name;    /* [name id] slot + 1, 0 = none; writer side */
	uint32_t slot_of_name_len;
	uint64_t freed;
};

static void snapshot_free(struct snapshot *s)
{
	if (s == NULL)
		return;
	free(s->present);
	free(s->nodes);
	for (int r = 0; r < RES_MAX; r++)
		free(s->allocatable[r]);
	free(s->shards);
	free(s);
}

static struct snapshot *snapshot_alloc(uint32_t n_slots)
{
	struct snapshot *s = calloc(1, sizeof(*s));
	if (s == NULL)
		return NULL;
	size_t n = n_slots ? n_slots : 1;
	s->n_slots = n_slots;
	s->n_shards = (n_slots + SNAP_SHARD_SLOTS - 1) / SNAP_SHARD_SLOTS;
	s->present = calloc(n, 1);
	s->nodes = calloc(n, sizeof(*s->nodes));
	s->shards = calloc(s->n_shards ? s->n_shards : 1, sizeof(*s->shards));
	bool ok = s->present && s->nodes && s->shards;
	for (int r = 0; r < RES_MAX && ok; r++)
		ok = (s->allocatable[r] = calloc(n, sizeof(int64_t))) != NULL;
	if (!ok) {
		snapshot_free(s);
		return NULL;
	}
	return s;
}

/* The derived columns: structure of arrays, shard summaries, node count. */
static void snapshot_derive(struct snapshot *s)
{
	s->n_nodes = 0;
	memset(s->shards, 0, s->n_shards * sizeof(*s->shards));
	for (uint32_t i = 0; i < s->n_slots; i++) {
		const struct node_spec *n = &s->nodes[i];
		for (int r = 0; r < RES_MAX; r++)
			s->allocatable[r][i] = s->present[i] ? n->allocatable.v[r] : 0;
		if (!s->present[i])
			continue;
		s->n_nodes++;
		struct shard_summary *sh = &s->shards[i / SNAP_SHARD_SLOTS];
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

struct cluster *cluster_create(struct intern *strings, uint32_t capacity)
{
	if (strings == NULL || capacity == 0 ||
	    capacity > (1u << 28)) {
		errno = EINVAL;
		return NULL;
	}
	struct cluster *c = calloc(1, sizeof(*c));
	if (c == NULL)
		return NULL;
	c->strings = strings;
	c->capacity = capacity;
	c->ledger = ledger_create(capacity);
	c->current = snapshot_alloc(0);
	if (c->ledger == NULL || c->current == NULL) {
		ledger_destroy(c->ledger);
		snapshot_free(c->current);
		free(c);
		errno = ENOMEM;
		return NULL;
	}
	c->current->generation = 1;
	return c;
}

void cluster_destroy(struct cluster *c)
{
	if (c == NULL)
		return;
	ledger_destroy(c->ledger);
	snapshot_free(c->current);
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

int cluster_apply(struct cluster *c, const struct node_event *events, size_t n,
		  char *err, size_t err_len)
{
	const struct snapshot *old = c->current;
	/* Room for every ADD to take a new slot. */
	uint32_t max_slots = old->n_slots;
	for (size_t i = 0; i < n; i++)
		if (events[i].kind == NODE_EVENT_ADD && max_slots < c->capacity)
			max_slots++;
	int rc = 0;
	for (size_t i = 0; i < n && rc == 0; i++)
		rc = name_map_reserve(c, events[i].name);
	struct snapshot *s = rc == 0 ? snapshot_alloc(max_slots) : NULL;
	int64_t *slots = calloc(n ? n : 1, sizeof(*slots));
	struct undo *log = calloc(n ? n : 1, sizeof(*log));
	if (s == NULL || slots == NULL || log == NULL) {
		free(log);
		free(slots);
		snapshot_free(s);
		return errmsg_rc(-ENOMEM, err, err_len, "out of memory for a snapshot");
	}
	memcpy(s->present, old->present, old->n_slots);
	memcpy(s->nodes, old->nodes, old->n_slots * sizeof(*s->nodes));
	s->n_slots = old->n_slots;

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
		free(log);
		free(slots);
		snapshot_free(s);
		return rc;
	}
	/* A new node starts from nothing. Its slot is reachable by no reader:
	 * it is empty in every snapshot still held (see free_slot). */
	for (size_t i = 0; i < n; i++)
		if (events[i].kind == NODE_EVENT_ADD)
			ledger_reset_node(c->ledger, (uint32_t)slots[i]);
	free(log);
	s->generation = old->generation + 1;
	snapshot_derive(s);

	struct snapshot *prev = c->current;
	/* Release: the snapshot's contents before the pointer that shows it
	 * (partner: the acquire in cluster_snapshot()). */
	__atomic_store_n(&c->current, s, __ATOMIC_RELEASE);
	/* Relaxed: a figure for threads that are not readers. */
	__atomic_store_n(&c->n_nodes, s->n_nodes, __ATOMIC_RELAXED);
	/* Every reader that could hold `prev` has passed a quiescent state. */
	rcu_synchronize();
	snapshot_free(prev);
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

uint32_t cluster_nodes(const struct cluster *c)
{
	/* Relaxed: a figure (cluster.h). */
	return __atomic_load_n(&c->n_nodes, __ATOMIC_RELAXED);
}
