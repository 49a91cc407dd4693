/* Cluster state: snapshots published with liburcu QSBR, stable node slots,
 * allocation counters. See cluster.h for the contract.
 *
 * A write copies the current snapshot, applies the events to the copy,
 * recomputes the structure-of-arrays columns and shard summaries, publishes
 * the copy with rcu_assign_pointer and frees the old one after
 * urcu_qsbr_synchronize_rcu(). Cost: O(slots) per cluster_apply() call,
 * however many events it carries, so writers batch.
 */
#define _LGPL_SOURCE 1

#include "shm/cluster.h"

#include "shm/errmsg.h"

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
	struct snapshot *current; /* RCU-protected: rcu_assign_pointer / rcu_dereference */
	struct node_alloc *alloc; /* [capacity] */
	int32_t *slot_of_name;    /* [name id] slot + 1, 0 = none; writer side */
	uint32_t slot_of_name_len;
	uint64_t freed;
	/* The change log (cluster.h): entry = (lap + 1) << 32 | slot, where
	 * lap = index / CLUSTER_CHANGE_LOG_SLOTS, so a reader tells a current
	 * entry from last lap's (not yet stored) and from a later lap's. */
	uint64_t change_head;
	uint64_t *changes; /* [CLUSTER_CHANGE_LOG_SLOTS] */
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
	c->alloc = aligned_alloc(64, (size_t)capacity * sizeof(*c->alloc));
	c->current = snapshot_alloc(0);
	c->changes = calloc(CLUSTER_CHANGE_LOG_SLOTS, sizeof(*c->changes));
	if (c->alloc == NULL || c->current == NULL || c->changes == NULL) {
		free(c->changes);
		free(c->alloc);
		snapshot_free(c->current);
		free(c);
		errno = ENOMEM;
		return NULL;
	}
	memset(c->alloc, 0, (size_t)capacity * sizeof(*c->alloc));
	c->current->generation = 1;
	return c;
}

void cluster_destroy(struct cluster *c)
{
	if (c == NULL)
		return;
	free(c->alloc);
	free(c->changes);
	snapshot_free(c->current);
	free(c->slot_of_name);
	free(c);
}

static void change_append(struct cluster *c, uint32_t slot)
{
	/* Release: a reader that sees the head past i sees the counter moves
	 * made before it (cluster.h, the change log's protocol). */
	uint64_t i = __atomic_fetch_add(&c->change_head, 1, __ATOMIC_RELEASE);
	uint64_t lap = i / CLUSTER_CHANGE_LOG_SLOTS;
	uint64_t entry = ((lap + 1) & UINT32_MAX) << 32 | slot;
	/* Release: pairs with the reader's acquire load of the entry. */
	__atomic_store_n(&c->changes[i & (CLUSTER_CHANGE_LOG_SLOTS - 1)], entry,
			 __ATOMIC_RELEASE);
}

uint64_t cluster_changes_head(const struct cluster *c)
{
	/* Acquire: pairs with change_append's release fetch-add. */
	return __atomic_load_n(&c->change_head, __ATOMIC_ACQUIRE);
}

int cluster_change_at(const struct cluster *c, uint64_t idx, uint32_t *slot)
{
	/* Acquire: pairs with change_append's release store. */
	uint64_t e = __atomic_load_n(&c->changes[idx & (CLUSTER_CHANGE_LOG_SLOTS - 1)],
				     __ATOMIC_ACQUIRE);
	uint32_t want = (uint32_t)(idx / CLUSTER_CHANGE_LOG_SLOTS + 1);
	uint32_t tag = (uint32_t)(e >> 32);
	if (tag == want) {
		*slot = (uint32_t)e;
		return 1;
	}
	return tag == want - 1 ? 0 : -1;
}

/* Clears a record whose slot no reader can reach (see struct node_alloc).
 * Atomic stores all the same: the grace period that makes this safe is
 * liburcu's, which ThreadSanitizer cannot see. */
static void alloc_reset(struct node_alloc *a)
{
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
			alloc_reset(&c->alloc[slots[i]]);
	free(log);
	s->generation = old->generation + 1;
	snapshot_derive(s);

	struct snapshot *prev = c->current;
	rcu_assign_pointer(c->current, s);
	/* Every reader that could hold `prev` has passed a quiescent state. */
	rcu_synchronize();
	snapshot_free(prev);
	c->freed++;
	/* Only now can no placement be landing on a removed node's record. A
	 * node removed and re-added in one batch keeps nothing either: the add
	 * took another slot. */
	for (size_t i = 0; i < n; i++)
		if (events[i].kind == NODE_EVENT_REMOVE)
			alloc_reset(&c->alloc[slots[i]]);
	free(slots);
	return 0;
}

const struct snapshot *cluster_snapshot(const struct cluster *c)
{
	return rcu_dereference(c->current);
}

struct node_alloc *cluster_alloc(struct cluster *c, uint32_t slot)
{
	return &c->alloc[slot];
}

const struct node_alloc *cluster_alloc_const(const struct cluster *c,
					     uint32_t slot)
{
	return &c->alloc[slot];
}

static bool ports_trylock(struct node_alloc *a)
{
	uint32_t expected = 0;
	/* Acquire, partner of the release in ports_unlock(): the table
	 * as the last holder left it. */
	return __atomic_compare_exchange_n(&a->port_lock, &expected, 1, false,
					   __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

static void ports_unlock(struct node_alloc *a)
{
	/* Release, partner of the acquire in ports_trylock(). */
	__atomic_store_n(&a->port_lock, 0, __ATOMIC_RELEASE);
}

/* Waits for the port lock: only for bound pods and releases, which must
 * not fail, and only while another thread holds it for a few dozen
 * instructions. */
static void ports_lock(struct node_alloc *a)
{
	while (!ports_trylock(a))
		__builtin_ia32_pause();
}

unsigned cluster_copy_ports(struct node_alloc *a, struct host_port *out)
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

/* Adds or removes an assignment's devices without checking. Relaxed: see
 * struct node_alloc. */
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

/* Takes GPU g's milli if it stays within a device. Relaxed: see struct
 * node_alloc. */
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

/* Sets `want` in a core word if none of it is set. Relaxed: see struct
 * node_alloc. */
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

/* Takes every device of `dev` or none: on a refusal, gives back what it
 * took. Returns whether it took them; *moved says a counter moved. */
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
		devices_account(a, &got, -1);
		for (unsigned w = 0; w < CORE_WORDS; w++)
			*moved |= got.cpuset[w] != 0;
		*moved |= got.gpu_mask != 0;
	}
	return ok;
}

void cluster_load_devices(const struct node_alloc *a, const struct node_devices *d,
			  struct device_view *out)
{
	/* Relaxed: a view; the commit re-checks. */
	unsigned g = 0;
	for (; g < d->n_gpus; g++)
		out->gpu_free[g] = (uint16_t)(GPU_MILLI_PER_DEVICE -
					      __atomic_load_n(&a->gpu_used[g],
							      __ATOMIC_RELAXED));
	for (; g < NODE_MAX_GPUS; g++)
		out->gpu_free[g] = 0;
	for (unsigned w = 0; w < CORE_WORDS; w++) {
		int bits = (int)d->n_cores - (int)w * 64; /* pool cores in this word */
		uint64_t pool = bits >= 64 ? UINT64_MAX
			      : bits > 0 ? (UINT64_C(1) << bits) - 1 : 0;
		out->cores_free[w] = pool == 0 ? 0
			: pool & ~__atomic_load_n(&a->cores_used[w], __ATOMIC_RELAXED);
	}
}

int cluster_account(struct cluster *c, uint32_t slot, const struct pod_spec *pod,
		    const struct device_assignment *dev, int sign)
{
	struct node_alloc *a = &c->alloc[slot];
	if (pod->n_ports > 0) {
		ports_lock(a);
		if (sign > 0 && a->n_ports + pod->n_ports > NODE_MAX_HOST_PORTS) {
			ports_unlock(a);
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
	/* Relaxed: see struct node_alloc. */
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
	change_append(c, slot);
	return 0;
}

/* used += delta if the result stays within limit. Relaxed: see struct
 * node_alloc. */
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

int cluster_reserve(struct cluster *c, uint32_t slot,
		    const struct res_vec *allocatable, const struct pod_spec *pod,
		    const struct device_assignment *dev,
		    cluster_ports_free_fn ports_free, const void *arg)
{
	struct node_alloc *a = &c->alloc[slot];
	int r = 0;
	int rc = 0;
	bool moved = false;
	bool have_devices = false;
	for (; r < RES_MAX; r++) {
		int64_t delta = r == RES_PODS ? 1 : pod->request.v[r];
		if (delta > 0 && !counter_take(&a->used[r], delta, allocatable->v[r])) {
			rc = -EAGAIN;
			goto undo_counters;
		}
	}
	if (dev != NULL) {
		if (!devices_take(a, dev, &moved)) {
			rc = -EAGAIN;
			goto undo_counters;
		}
		have_devices = true;
	}
	if (pod->n_ports > 0) {
		if (!ports_trylock(a)) {
			rc = -EBUSY;
			goto undo_counters;
		}
		if (a->n_ports + pod->n_ports > NODE_MAX_HOST_PORTS)
			rc = -ENOSPC;
		else if (!ports_free(arg, pod, a->ports, a->n_ports))
			rc = -EADDRINUSE;
		for (unsigned i = 0; rc == 0 && i < pod->n_ports; i++)
			a->ports[a->n_ports++] = pod->ports[i];
		ports_unlock(a);
		if (rc < 0)
			goto undo_counters;
	}
	__atomic_fetch_add(&a->used_nonzero_cpu_milli, pod->nonzero_cpu_milli,
			   __ATOMIC_RELAXED);
	__atomic_fetch_add(&a->used_nonzero_mem_bytes, pod->nonzero_mem_bytes,
			   __ATOMIC_RELAXED);
	change_append(c, slot);
	return 0;

undo_counters:
	/* A reader may have seen the counters this attempt took: log the
	 * rollback too, or its cached view would keep them. */
	if (have_devices) {
		devices_account(a, dev, -1);
		moved = true;
	}
	while (r-- > 0) {
		int64_t delta = r == RES_PODS ? 1 : pod->request.v[r];
		if (delta > 0) {
			__atomic_fetch_sub(&a->used[r], delta, __ATOMIC_RELAXED);
			moved = true;
		}
	}
	if (moved)
		change_append(c, slot);
	return rc;
}

void cluster_load_used(const struct node_alloc *a, struct res_vec *used,
		       int64_t *nonzero_cpu_milli, int64_t *nonzero_mem_bytes)
{
	/* Relaxed: a view for filters and scores; the commit re-checks. */
	for (int r = 0; r < RES_MAX; r++)
		used->v[r] = __atomic_load_n(&a->used[r], __ATOMIC_RELAXED);
	*nonzero_cpu_milli = __atomic_load_n(&a->used_nonzero_cpu_milli,
					     __ATOMIC_RELAXED);
	*nonzero_mem_bytes = __atomic_load_n(&a->used_nonzero_mem_bytes,
					     __ATOMIC_RELAXED);
}

uint32_t cluster_capacity(const struct cluster *c)
{
	return c->capacity;
}

uint64_t cluster_snapshots_freed(const struct cluster *c)
{
	return c->freed;
}
