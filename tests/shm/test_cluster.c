/* unit.cluster: node events as snapshots (add, update, remove, cordon,
 * uncordon), all-or-nothing batches, stable slots, accounting, and the
 * intern table and resource names they rest on. */
#define _LGPL_SOURCE 1

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <urcu/urcu-qsbr.h>

#include <cmocka.h>

#include "shm/carve.h"
#include "shm/layout.h"
#include "shm/shm.h"

struct fix {
	struct intern *strings;
	struct res_names res;
	struct cluster *c;
};

static uint32_t id(struct fix *f, const char *s)
{
	uint32_t v;
	assert_int_equal(intern_add_str(f->strings, s, &v), 0);
	return v;
}

static struct node_event add_event(struct fix *f, const char *name, int64_t cpu)
{
	struct node_event e;
	memset(&e, 0, sizeof(e));
	e.kind = NODE_EVENT_ADD;
	e.name = id(f, name);
	e.spec.name = e.name;
	e.spec.allocatable.v[RES_CPU] = cpu;
	e.spec.allocatable.v[RES_PODS] = 110;
	return e;
}

static struct node_event named_event(struct fix *f, uint8_t kind, const char *name)
{
	struct node_event e;
	memset(&e, 0, sizeof(e));
	e.kind = kind;
	e.name = id(f, name);
	e.spec.name = e.name;
	return e;
}

static int setup(void **state)
{
	struct fix *f = calloc(1, sizeof(*f));
	f->strings = intern_create();
	res_names_init(&f->res);
	f->c = cluster_create(f->strings, 4);
	assert_non_null(f->c);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fix *f = *state;
	cluster_destroy(f->c);
	intern_destroy(f->strings);
	free(f);
	return 0;
}

static void test_intern(void **state)
{
	(void)state;
	struct intern *t = intern_create();
	uint32_t a, b, c, e;
	assert_string_equal(intern_str(t, 0), "");
	assert_int_equal(intern_add_str(t, "", &e), 0);
	assert_int_equal(e, 0);
	assert_int_equal(intern_add_str(t, "zone", &a), 0);
	assert_int_equal(intern_add_str(t, "rack", &b), 0);
	assert_int_equal(intern_add_str(t, "zone", &c), 0);
	assert_int_equal(a, c);
	assert_int_not_equal(a, b);
	assert_string_equal(intern_str(t, b), "rack");
	assert_true(intern_find(t, "rack", 4, &c));
	assert_int_equal(c, b);
	assert_false(intern_find(t, "nope", 4, &c));
	assert_string_equal(intern_str(t, 999999), "");
	/* Gt/Lt operands: strconv.ParseInt(s, 10, 64). */
	int64_t v;
	struct { const char *s; bool ok; int64_t v; } nums[] = {
		{"42", true, 42}, {"-7", true, -7}, {"+3", true, 3},
		{"9223372036854775807", true, INT64_MAX},
		{"-9223372036854775808", true, INT64_MIN},
		{"9223372036854775808", false, 0}, {"1.5", false, 0}, {"", false, 0},
		{"-", false, 0}, {"0x10", false, 0}, {" 1", false, 0}, {"1_000", false, 0},
	};
	for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]); i++) {
		assert_int_equal(intern_add_str(t, nums[i].s, &a), 0);
		assert_int_equal(intern_int(t, a, &v), nums[i].ok);
		if (nums[i].ok)
			assert_int_equal(v, nums[i].v);
	}
	/* Growth keeps every id. */
	char buf[32];
	for (int i = 0; i < 20000; i++) {
		snprintf(buf, sizeof(buf), "s%d", i);
		assert_int_equal(intern_add_str(t, buf, &a), 0);
	}
	assert_true(intern_find(t, "s12345", 6, &a));
	assert_string_equal(intern_str(t, a), "s12345");
	assert_int_equal(intern_add(t, "a\0b", 3, &a), -EINVAL);
	char *big = malloc(INTERN_MAX_LEN + 2);
	memset(big, 'x', INTERN_MAX_LEN + 1);
	assert_int_equal(intern_add(t, big, INTERN_MAX_LEN + 1, &a), -E2BIG);
	free(big);
	intern_destroy(t);
}

/* Rollback: strings interned since a mark are forgotten, those before it
 * keep their ids and are still found (the hash table's probe runs stay
 * whole), across table growth and arena chunks, and the table goes on. */
static void test_intern_rollback(void **state)
{
	(void)state;
	struct intern *t = intern_create();
	char buf[64];
	uint32_t id;
	for (int i = 0; i < 3000; i++) {
		snprintf(buf, sizeof(buf), "kept-%d", i);
		assert_int_equal(intern_add_str(t, buf, &id), 0);
	}
	uint32_t kept = intern_count(t);
	struct intern_mark m;
	intern_mark(t, &m);
	static char big[4096];
	memset(big, 'b', sizeof(big));
	for (int i = 0; i < 20000; i++) {
		snprintf(buf, sizeof(buf), "refused-%d", i);
		assert_int_equal(intern_add_str(t, buf, &id), 0);
		/* Long ones too: the arena moves to new chunks. */
		int n = snprintf(big, 32, "long-%d-", i);
		big[n] = 'x';
		assert_int_equal(intern_add(t, big, 2000, &id), 0);
	}
	assert_true(intern_count(t) > kept + 20000);
	intern_rollback(t, &m);
	assert_int_equal(intern_count(t), kept);
	for (int i = 0; i < 3000; i++) {
		snprintf(buf, sizeof(buf), "kept-%d", i);
		assert_true(intern_find(t, buf, strlen(buf), &id));
		assert_string_equal(intern_str(t, id), buf);
	}
	for (int i = 0; i < 20000; i += 7) {
		snprintf(buf, sizeof(buf), "refused-%d", i);
		assert_false(intern_find(t, buf, strlen(buf), &id));
	}
	/* It goes on: new strings take the forgotten ids, found again. */
	assert_int_equal(intern_add_str(t, "after", &id), 0);
	assert_int_equal(id, kept);
	assert_true(intern_find(t, "after", 5, &id));
	assert_true(intern_find(t, "kept-17", 7, &id));
	intern_destroy(t);
}

static void test_resource_names(void **state)
{
	(void)state;
	struct res_names n;
	res_names_init(&n);
	assert_int_equal(res_lookup(&n, "cpu", 3), RES_CPU);
	assert_int_equal(res_lookup(&n, "pods", 4), RES_PODS);
	assert_int_equal(res_lookup(&n, "nvidia.com/gpu", 14), -1);
	assert_int_equal(res_register(&n, "nvidia.com/gpu", 14), RES_FIRST_NAMED);
	assert_int_equal(res_register(&n, "nvidia.com/gpu", 14), RES_FIRST_NAMED);
	assert_true(res_name_is_scalar("hugepages-2Mi", 13));
	assert_true(res_name_is_scalar("example.com/foo", 15));
	assert_false(res_name_is_scalar("kubernetes.io/foo", 17));
	assert_false(res_name_is_scalar("cpu", 3));
	char name[32];
	for (int i = RES_FIRST_NAMED + 1; i < RES_MAX; i++) {
		int len = snprintf(name, sizeof(name), "x.io/r%d", i);
		assert_int_equal(res_register(&n, name, (size_t)len), i);
	}
	assert_int_equal(res_register(&n, "x.io/one-too-many", 17), -ENOSPC);
}

static void test_add_update_remove_keep_slots(void **state)
{
	struct fix *f = *state;
	char err[256];
	struct node_event adds[] = {add_event(f, "a", 1000), add_event(f, "b", 2000),
				    add_event(f, "c", 3000)};
	uint64_t gen = cluster_snapshot(f->c)->generation;
	assert_int_equal(cluster_apply(f->c, adds, 3, err, sizeof(err)), 0);
	const struct snapshot *s = cluster_snapshot(f->c);
	assert_int_equal(s->generation, gen + 1);
	assert_int_equal(s->n_nodes, 3);
	int64_t slot_b = cluster_slot_of(f->c, id(f, "b"));
	assert_int_equal(slot_b, 1);
	assert_int_equal(s->allocatable[RES_CPU][slot_b], 2000);
	assert_int_equal(s->shards[0].max_allocatable[RES_CPU], 3000);

	/* Update and cordon keep the slot; the old snapshot is left intact. */
	const struct snapshot *before = s;
	(void)before;
	struct node_event upd = add_event(f, "b", 2500);
	upd.kind = NODE_EVENT_UPDATE;
	struct node_event cordon = named_event(f, NODE_EVENT_CORDON, "c");
	struct node_event batch[] = {upd, cordon};
	assert_int_equal(cluster_apply(f->c, batch, 2, err, sizeof(err)), 0);
	s = cluster_snapshot(f->c);
	assert_int_equal(cluster_slot_of(f->c, id(f, "b")), slot_b);
	assert_int_equal(s->allocatable[RES_CPU][slot_b], 2500);
	assert_true(s->nodes[cluster_slot_of(f->c, id(f, "c"))].unschedulable);
	assert_true(s->shards[0].any_unschedulable);

	/* Use is kept across an update, dropped by a remove. */
	struct pod_spec pod;
	memset(&pod, 0, sizeof(pod));
	pod.request.v[RES_CPU] = 100;
	assert_int_equal(ledger_account(cluster_ledger(f->c), (uint32_t)slot_b, &pod, NULL, +1), 0);
	assert_int_equal(ledger_node(cluster_ledger(f->c), (uint32_t)slot_b)->used[RES_CPU], 100);
	assert_int_equal(ledger_node(cluster_ledger(f->c), (uint32_t)slot_b)->used[RES_PODS], 1);
	struct node_event uncordon = named_event(f, NODE_EVENT_UNCORDON, "c");
	assert_int_equal(cluster_apply(f->c, &uncordon, 1, err, sizeof(err)), 0);
	assert_int_equal(ledger_node(cluster_ledger(f->c), (uint32_t)slot_b)->used[RES_CPU], 100);
	assert_false(cluster_snapshot(f->c)->nodes[2].unschedulable);

	struct node_event rm = named_event(f, NODE_EVENT_REMOVE, "b");
	assert_int_equal(cluster_apply(f->c, &rm, 1, err, sizeof(err)), 0);
	s = cluster_snapshot(f->c);
	assert_int_equal(s->n_nodes, 2);
	assert_int_equal(s->present[slot_b], 0);
	assert_int_equal(cluster_slot_of(f->c, id(f, "b")), -1);
	assert_int_equal(cluster_slot_of(f->c, id(f, "c")), 2); /* others stay */

	/* A new node reuses the empty slot, with no use carried over. */
	struct node_event d = add_event(f, "d", 4000);
	assert_int_equal(cluster_apply(f->c, &d, 1, err, sizeof(err)), 0);
	assert_int_equal(cluster_slot_of(f->c, id(f, "d")), slot_b);
	assert_int_equal(ledger_node(cluster_ledger(f->c), (uint32_t)slot_b)->used[RES_CPU], 0);
	assert_true(cluster_snapshots_freed(f->c) >= 5);
}

static void test_bad_batches_change_nothing(void **state)
{
	struct fix *f = *state;
	char err[256];
	struct node_event a = add_event(f, "a", 1000);
	assert_int_equal(cluster_apply(f->c, &a, 1, err, sizeof(err)), 0);
	const struct snapshot *s = cluster_snapshot(f->c);
	uint64_t gen = s->generation;

	/* The second event fails: the first must not land either. */
	struct node_event batch[] = {add_event(f, "b", 1), add_event(f, "a", 1)};
	assert_int_equal(cluster_apply(f->c, batch, 2, err, sizeof(err)), -EEXIST);
	assert_non_null(strstr(err, "node a: already exists"));
	assert_int_equal(cluster_snapshot(f->c)->generation, gen);
	assert_int_equal(cluster_slot_of(f->c, id(f, "b")), -1);

	struct node_event rm = named_event(f, NODE_EVENT_REMOVE, "zz");
	assert_int_equal(cluster_apply(f->c, &rm, 1, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "node zz: no such node"));

	struct node_event full[] = {add_event(f, "b", 1), add_event(f, "c", 1),
				    add_event(f, "d", 1), add_event(f, "e", 1)};
	assert_int_equal(cluster_apply(f->c, full, 4, err, sizeof(err)), -ENOSPC);
	assert_int_equal(cluster_snapshot(f->c)->n_nodes, 1);
	assert_int_equal(cluster_slot_of(f->c, id(f, "b")), -1);

	/* Remove and re-add in one batch is fine, and the node gets another
	 * slot: a slot freed in a batch is reused only after its grace period,
	 * so no placement still holding the old snapshot can land on it. */
	int64_t old_slot = cluster_slot_of(f->c, id(f, "a"));
	struct node_event again[] = {named_event(f, NODE_EVENT_REMOVE, "a"),
				     add_event(f, "a", 5)};
	assert_int_equal(cluster_apply(f->c, again, 2, err, sizeof(err)), 0);
	s = cluster_snapshot(f->c);
	int64_t new_slot = cluster_slot_of(f->c, id(f, "a"));
	assert_int_not_equal(new_slot, old_slot);
	assert_int_equal(s->allocatable[RES_CPU][new_slot], 5);
	assert_int_equal(s->present[old_slot], 0);
}

/* cluster_changed_slots: the slots each publish changed, between any two
 * generations within the log; -1 where it cannot say. */
static void test_changed_slots(void **state)
{
	(void)state;
	struct fix f = {.strings = intern_create()};
	res_names_init(&f.res);
	f.c = cluster_create(f.strings, 8);
	uint32_t out[4096];
	char err[256], name[16];
	/* Generation 1: empty; since then nothing. */
	assert_int_equal(cluster_changed_slots(f.c, 1, 1, out, 4096), 0);
	struct node_event ev[8];
	for (int i = 0; i < 3; i++) {
		snprintf(name, sizeof(name), "n%d", i);
		ev[i] = add_event(&f, name, 1000);
	}
	assert_int_equal(cluster_apply(f.c, ev, 3, err, sizeof(err)), 0); /* gen 2 */
	assert_int_equal(cluster_changed_slots(f.c, 1, 2, out, 4096), 3);
	ev[0] = named_event(&f, NODE_EVENT_CORDON, "n1");
	assert_int_equal(cluster_apply(f.c, ev, 1, err, sizeof(err)), 0); /* gen 3 */
	ev[0] = named_event(&f, NODE_EVENT_REMOVE, "n2");
	assert_int_equal(cluster_apply(f.c, ev, 1, err, sizeof(err)), 0); /* gen 4 */
	int64_t s1 = cluster_slot_of(f.c, id(&f, "n1"));
	assert_int_equal(cluster_changed_slots(f.c, 3, 4, out, 4096), 1);
	assert_int_equal(cluster_changed_slots(f.c, 2, 4, out, 4096), 2);
	assert_int_equal(out[1], (uint32_t)s1); /* newest first */
	/* Asked up to an older generation than the newest: later ones are
	 * left out. */
	assert_int_equal(cluster_changed_slots(f.c, 2, 3, out, 4096), 1);
	assert_int_equal(out[0], (uint32_t)s1);
	/* Too many for `max`. */
	assert_int_equal(cluster_changed_slots(f.c, 1, 4, out, 2), -1);
	/* Enough publishes to pass half the log: the oldest cannot be said. */
	for (int i = 0; i < 2100; i++) {
		ev[0] = named_event(&f, i % 2 ? NODE_EVENT_UNCORDON : NODE_EVENT_CORDON, "n0");
		assert_int_equal(cluster_apply(f.c, ev, 1, err, sizeof(err)), 0);
	}
	assert_int_equal(cluster_changed_slots(f.c, 4, 4 + 2100, out, 4096), -1);
	assert_int_equal(cluster_changed_slots(f.c, 4 + 2000, 4 + 2100, out, 4096), 100);
	cluster_destroy(f.c);
	/* A batch of more than half the log is "every slot". */
	f.c = cluster_create(f.strings, 2100);
	static struct node_event big[2100];
	for (int i = 0; i < 2100; i++) {
		snprintf(name, sizeof(name), "b%d", i);
		big[i] = add_event(&f, name, 1000);
	}
	assert_int_equal(cluster_apply(f.c, big, 2100, err, sizeof(err)), 0); /* gen 2 */
	assert_int_equal(cluster_changed_slots(f.c, 1, 2, out, 4096), -1);
	ev[0] = named_event(&f, NODE_EVENT_CORDON, "b7");
	assert_int_equal(cluster_apply(f.c, ev, 1, err, sizeof(err)), 0); /* gen 3 */
	assert_int_equal(cluster_changed_slots(f.c, 2, 3, out, 4096), 1);
	assert_int_equal(cluster_changed_slots(f.c, 1, 3, out, 4096), -1);
	cluster_destroy(f.c);
	intern_destroy(f.strings);
}

/* The incremental publish (shm/cluster.c, catch-up: only the slots the
 * publish before changed are copied into the other buffer, derived columns
 * recomputed per changed slot and shard, the checksum's sum moved per
 * changed slot) must leave each buffer as a full copy and recompute would.
 * After every random batch, the current buffer must equal a model of the
 * cluster, the other buffer the model one publish back, and each header's
 * checksum the whole recompute (what an observer runs). Batches add,
 * update, remove, cordon and uncordon nodes, reuse freed slots, remove and
 * re-add a name, fail half-way (the other buffer is left half-written),
 * pass half the spec log ("every slot"), and the cluster is re-attached
 * from its memory (as a restarted daemon does). Mismatches must read 0;
 * and both paths must have run (catch-ups, full copies > 0). */
#define INC_CAP 200u   /* slots: 4 shards of 64, and part of a fifth */
#define INC_NAMES 240u /* more names than slots: adds meet ENOSPC */

struct model {
	uint32_t n_slots;
	uint8_t present[INC_CAP];
	struct node_spec nodes[INC_CAP];
};

static struct model model_now, model_prev;

static uint64_t inc_rand(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static void random_spec(uint64_t *x, uint32_t name, struct node_spec *n)
{
	memset(n, 0, sizeof(*n));
	n->name = name;
	n->allocatable.v[RES_CPU] = (int64_t)(1 + inc_rand(x) % 64000);
	n->allocatable.v[RES_MEMORY] = (int64_t)(inc_rand(x) % (UINT64_C(1) << 40));
	n->allocatable.v[RES_PODS] = 110;
	n->unschedulable = inc_rand(x) % 8 == 0;
	n->n_labels = (uint16_t)(inc_rand(x) % 4);
	for (unsigned l = 0; l < n->n_labels; l++)
		n->labels[l] = (struct label){.key = l + 1,
					      .value = (uint32_t)(inc_rand(x) % 50)};
	n->n_taints = (uint16_t)(inc_rand(x) % 3);
	for (unsigned t = 0; t < n->n_taints; t++)
		n->taints[t] = (struct taint){.key = t + 1, .value = 1,
					      .effect = (uint8_t)(1 + inc_rand(x) % 3)};
}

/* Mismatches between one buffer and a model; 0 when they agree. */
static unsigned buffer_mismatches(const struct state_snapshot *h,
				  const struct snapshot *v_in, const struct model *m,
				  uint64_t generation)
{
	unsigned bad = 0;
	struct snapshot v = *v_in;
	v.generation = h->generation;
	v.n_slots = h->n_slots;
	v.n_nodes = h->n_nodes;
	v.n_shards = h->n_shards;
	bad += (h->seq & 1) != 0;
	bad += h->generation != generation;
	bad += h->n_slots != m->n_slots;
	bad += h->checksum != cluster_snapshot_checksum(&v);
	if (h->n_slots != m->n_slots)
		return bad;
	uint32_t nodes = 0;
	for (uint32_t i = 0; i < m->n_slots; i++) {
		nodes += m->present[i];
		bad += v.present[i] != m->present[i];
		bad += memcmp(&v.nodes[i], &m->nodes[i], sizeof(m->nodes[i])) != 0;
		for (int r = 0; r < RES_MAX; r++)
			bad += v.allocatable[r][i] !=
			       (m->present[i] ? m->nodes[i].allocatable.v[r] : 0);
	}
	bad += h->n_nodes != nodes;
	uint32_t shards = (m->n_slots + SNAP_SHARD_SLOTS - 1) / SNAP_SHARD_SLOTS;
	bad += h->n_shards != shards;
	for (uint32_t b = 0; b < shards && h->n_shards == shards; b++) {
		struct shard_summary want;
		memset(&want, 0, sizeof(want));
		for (uint32_t i = b * SNAP_SHARD_SLOTS;
		     i < m->n_slots && i < (b + 1) * SNAP_SHARD_SLOTS; i++) {
			const struct node_spec *n = &m->nodes[i];
			if (!m->present[i])
				continue;
			want.present++;
			for (int r = 0; r < RES_MAX; r++)
				if (n->allocatable.v[r] > want.max_allocatable[r])
					want.max_allocatable[r] = n->allocatable.v[r];
			want.any_unschedulable |= n->unschedulable;
			for (unsigned t = 0; t < n->n_taints; t++)
				want.any_hard_taint |= n->taints[t].effect != TAINT_PREFER_NO_SCHEDULE;
		}
		const struct shard_summary *got = &v.shards[b];
		bad += got->present != want.present;
		bad += got->any_unschedulable != want.any_unschedulable;
		bad += got->any_hard_taint != want.any_hard_taint;
		for (int r = 0; r < RES_MAX; r++)
			bad += got->max_allocatable[r] != want.max_allocatable[r];
	}
	return bad;
}

static void test_incremental_matches_full(void **state)
{
	(void)state;
	struct intern *strings = intern_create();
	uint64_t snaps = cluster_snapshots_section_size(INC_CAP);
	uint64_t ledger = ledger_section_size(INC_CAP);
	struct shm_span span = shm_span_private(snaps + ledger);
	assert_non_null(span.base);
	uint32_t current = 0;
	struct cluster_memory mem = {
		.snapshots = {span.base, snaps},
		.ledger = {(char *)span.base + snaps, ledger},
		.current = &current,
	};
	struct state_snapshot *hdr[2];
	struct snapshot views[2];
	assert_int_equal(cluster_snapshots_in(mem.snapshots, INC_CAP, hdr, views), 0);
	char err[256], name[16];
	struct cluster *c = cluster_create_in(strings, INC_CAP, &mem, true, err,
					      sizeof(err));
	assert_non_null(c);
	uint32_t names[INC_NAMES];
	for (uint32_t i = 0; i < INC_NAMES; i++) {
		snprintf(name, sizeof(name), "n%u", i);
		assert_int_equal(intern_add_str(strings, name, &names[i]), 0);
	}
	memset(&model_now, 0, sizeof(model_now));
	memset(&model_prev, 0, sizeof(model_prev));
	static struct node_event ev[2100];
	bool alive[INC_NAMES] = {false}, batch_alive[INC_NAMES], added[INC_NAMES];
	uint64_t x = 0x9e3779b97f4a7c15u, generation = 1;
	uint64_t full_before = 0, batches = 0, failed = 0, reattached = 0, big = 0;
	uint64_t reused = 0;
	unsigned mismatches = 0;
	for (int round = 0; round < 3000; round++) {
		uint64_t dice = inc_rand(&x) % 100;
		if (dice == 0) {
			/* Re-attach: the next write copies every slot. */
			full_before += cluster_full_copies(c);
			cluster_destroy(c);
			c = cluster_create_in(strings, INC_CAP, &mem, false, err,
					      sizeof(err));
			assert_non_null(c);
			reattached++;
			continue;
		}
		size_t n = 0;
		memcpy(batch_alive, alive, sizeof(alive));
		memset(added, 0, sizeof(added));
		if (dice == 1) {
			/* More than half the log: "every slot" for the next. */
			for (uint32_t i = 0; i < INC_NAMES && n < 2100; i++)
				for (int k = 0; alive[i] && k < 20 && n < 2100; k++) {
					memset(&ev[n], 0, sizeof(ev[n]));
					ev[n].kind = k % 2 ? NODE_EVENT_UNCORDON : NODE_EVENT_CORDON;
					ev[n++].name = names[i];
				}
			big += n > CLUSTER_SPEC_LOG / 2;
		} else {
			size_t want = 1 + inc_rand(&x) % 6;
			for (int tries = 0; n < want && tries < 100; tries++) {
				uint32_t i = (uint32_t)(inc_rand(&x) % INC_NAMES);
				uint8_t kind = (uint8_t)(1 + inc_rand(&x) % 5);
				/* Adds of new names; the rest of live ones. A name
				 * added in this batch is not removed in it (so its
				 * slot is the one it ends in). */
				if ((kind == NODE_EVENT_ADD) == batch_alive[i] ||
				    (kind == NODE_EVENT_REMOVE && added[i]))
					continue;
				memset(&ev[n], 0, sizeof(ev[n]));
				ev[n].kind = kind;
				ev[n].name = names[i];
				if (kind == NODE_EVENT_ADD || kind == NODE_EVENT_UPDATE)
					random_spec(&x, names[i], &ev[n].spec);
				batch_alive[i] = kind != NODE_EVENT_REMOVE;
				added[i] |= kind == NODE_EVENT_ADD;
				n++;
			}
			if (inc_rand(&x) % 12 == 0) {
				/* Fails last: the buffer is left half-written. */
				uint32_t i = (uint32_t)(inc_rand(&x) % INC_NAMES);
				memset(&ev[n], 0, sizeof(ev[n]));
				ev[n].kind = batch_alive[i] ? NODE_EVENT_ADD : NODE_EVENT_REMOVE;
				ev[n].name = names[i];
				ev[n++].spec.name = names[i];
			}
		}
		if (n == 0)
			continue;
		int rc = cluster_apply(c, ev, n, err, sizeof(err));
		if (rc < 0) {
			assert_true(rc == -EEXIST || rc == -ENOENT || rc == -ENOSPC);
			failed++;
			uint32_t cur = current;
			mismatches += buffer_mismatches(hdr[cur], &views[cur], &model_now,
							generation);
			assert_int_equal(mismatches, 0);
			assert_int_equal(hdr[cur ^ 1]->generation, 0);
			assert_int_equal(cluster_snapshot_checksum(&(struct snapshot){
				.generation = 0}), hdr[cur ^ 1]->checksum);
			continue;
		}
		batches++;
		memcpy(&model_prev, &model_now, sizeof(model_now));
		for (size_t e = 0; e < n; e++) {
			uint32_t i = (uint32_t)(ev[e].name - names[0]);
			assert_int_equal(ev[e].name, names[i]);
			int64_t slot = cluster_slot_of(c, ev[e].name);
			if (ev[e].kind == NODE_EVENT_ADD) {
				assert_true(slot >= 0 && slot < INC_CAP);
				/* Empty before, and not freed by this batch. */
				assert_int_equal(model_now.present[slot], 0);
				assert_true((uint32_t)slot >= model_prev.n_slots ||
					    !model_prev.present[slot]);
				reused += (uint32_t)slot < model_prev.n_slots;
				model_now.present[slot] = 1;
				model_now.nodes[slot] = ev[e].spec;
				if ((uint32_t)slot >= model_now.n_slots)
					model_now.n_slots = (uint32_t)slot + 1;
				alive[i] = true;
				continue;
			}
			/* Not removed later in the batch unless it was
			 * looked up here first: find its slot in the model. */
			for (slot = 0; slot < model_now.n_slots; slot++)
				if (model_now.present[slot] &&
				    model_now.nodes[slot].name == ev[e].name)
					break;
			assert_true(slot < model_now.n_slots);
			if (ev[e].kind == NODE_EVENT_UPDATE) {
				model_now.nodes[slot] = ev[e].spec;
			} else if (ev[e].kind == NODE_EVENT_REMOVE) {
				model_now.present[slot] = 0;
				memset(&model_now.nodes[slot], 0, sizeof(model_now.nodes[slot]));
				alive[i] = false;
			} else {
				model_now.nodes[slot].unschedulable =
					ev[e].kind == NODE_EVENT_CORDON;
			}
		}
		generation++;
		uint32_t cur = current;
		assert_ptr_equal(cluster_snapshot(c)->nodes, views[cur].nodes);
		mismatches += buffer_mismatches(hdr[cur], &views[cur], &model_now,
						generation);
		/* The other buffer: the publish before (a failed write went
		 * into the buffer this one then took). */
		mismatches += buffer_mismatches(hdr[cur ^ 1], &views[cur ^ 1],
						&model_prev, generation - 1);
		if (mismatches != 0)
			fail_msg("round %d (generation %llu): %u mismatches", round,
				 (unsigned long long)generation, mismatches);
	}
	uint64_t full = full_before + cluster_full_copies(c);
	print_message("incremental: %llu publishes, %llu failed, %llu big, %llu "
		      "re-attached, %llu slots reused, %llu full copies, %u "
		      "mismatches\n", (unsigned long long)batches,
		      (unsigned long long)failed, (unsigned long long)big,
		      (unsigned long long)reattached, (unsigned long long)reused,
		      (unsigned long long)full, mismatches);
	assert_int_equal(mismatches, 0);
	/* Both paths ran, and mostly the catch-up. */
	assert_true(failed > 0 && big > 0 && reattached > 0 && reused > 0);
	assert_true(full > 0 && full * 4 < batches);
	cluster_destroy(c);
	shm_span_release(span);
	intern_destroy(strings);
}

static void test_account_ports(void **state)
{
	struct fix *f = *state;
	char err[256];
	struct node_event a = add_event(f, "a", 1000);
	assert_int_equal(cluster_apply(f->c, &a, 1, err, sizeof(err)), 0);
	struct pod_spec pod;
	memset(&pod, 0, sizeof(pod));
	pod.n_ports = 2;
	pod.ports[0] = (struct host_port){.port = 80, .protocol = PROTO_TCP};
	pod.ports[1] = (struct host_port){.port = 53, .protocol = PROTO_UDP};
	pod.nonzero_cpu_milli = 100;
	for (int i = 0; i < 5; i++)
		assert_int_equal(ledger_account(cluster_ledger(f->c), 0, &pod, NULL, +1), 0);
	const struct node_alloc *al = ledger_node(cluster_ledger(f->c), 0);
	assert_int_equal(al->n_ports, 10);
	assert_int_equal(al->used_nonzero_cpu_milli, 500);
	assert_int_equal(ledger_account(cluster_ledger(f->c), 0, &pod, NULL, -1), 0);
	assert_int_equal(al->n_ports, 8);
	assert_int_equal(al->used[RES_PODS], 4);
}

int main(void)
{
	urcu_qsbr_register_thread();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_intern),
		cmocka_unit_test(test_intern_rollback),
		cmocka_unit_test(test_resource_names),
		cmocka_unit_test_setup_teardown(test_add_update_remove_keep_slots,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_batches_change_nothing, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_account_ports, setup, teardown),
		cmocka_unit_test(test_changed_slots),
		cmocka_unit_test(test_incremental_matches_full),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	urcu_qsbr_unregister_thread();
	return rc;
}
