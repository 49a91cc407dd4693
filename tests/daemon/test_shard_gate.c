/* The shard gate (daemon/shard_gate_internal.h) without etcd: the
 * membership's callbacks called by hand on a cluster of three nodes
 * n0..n2 in zones z0..z2.
 *
 * verdicts: no lease (never told, or its instant reached) refuses; a
 * lease with nothing owned refuses; owned shards become one requirement
 * "zone In (their values)" in every required term of the pod's copy (a
 * shard no node carries is left out); a spec with no room refuses.
 * shards_and_note: the shards the coordinator sees are the zones the
 * nodes carry; the note names a node and its shard.
 * publish_race: a writer alternates the owned set between {z0, z1} and
 * {z2} while two readers take requirements: every requirement a reader
 * sees is one of the two sets (torn reads counted: must be 0), and the
 * readers saw both (the race is real). A torn read is rare even without
 * the seqlock (none in 3 runs with its checks removed: the window is a few
 * stores): this checks that the seqlock never hands out a mixed set, and
 * TSan runs it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "daemon/shard_gate_internal.h"

#define NODES 3

static struct intern *strings;
static struct cluster *cluster;
static uint32_t zone_key, zones[NODES];

static int setup(void **state)
{
	(void)state;
	strings = intern_create();
	assert_non_null(strings);
	assert_int_equal(intern_add_str(strings, SHARD_LABEL_DEFAULT, &zone_key), 0);
	cluster = cluster_create(strings, 8);
	assert_non_null(cluster);
	static struct node_event ev[NODES];
	for (int i = 0; i < NODES; i++) {
		char name[8], zone[8];
		snprintf(name, sizeof(name), "n%d", i);
		snprintf(zone, sizeof(zone), "z%d", i);
		uint32_t id;
		assert_int_equal(intern_add_str(strings, name, &id), 0);
		assert_int_equal(intern_add_str(strings, zone, &zones[i]), 0);
		memset(&ev[i], 0, sizeof(ev[i]));
		ev[i].kind = NODE_EVENT_ADD;
		ev[i].name = id;
		ev[i].spec.name = id;
		ev[i].spec.n_labels = 1;
		ev[i].spec.labels[0] = (struct label){zone_key, zones[i]};
		ev[i].spec.allocatable.v[RES_CPU] = 4000;
	}
	char err[256];
	assert_int_equal(cluster_apply(cluster, ev, NODES, err, sizeof(err)), 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	cluster_destroy(cluster);
	intern_destroy(strings);
	return 0;
}

static void own(struct shard_gate *g, const char *a, const char *b)
{
	shard_name_t names[2];
	size_t n = 0;
	if (a != NULL)
		snprintf(names[n++], SHARD_NAME_MAX, "%s", a);
	if (b != NULL)
		snprintf(names[n++], SHARD_NAME_MAX, "%s", b);
	shard_gate_owned(g, (const shard_name_t *)names, n);
}

/* The values of the requirement the gate added last to term t of out. */
static unsigned added(const struct pod_spec *out, unsigned t, uint32_t *values)
{
	const struct sel_term *term = &out->terms[t];
	const struct sel_expr *ex = &out->exprs[term->first_expr + term->n_exprs - 1];
	assert_int_equal(ex->key, zone_key);
	assert_int_equal(ex->op, SEL_IN);
	memcpy(values, &out->values[ex->first_value], ex->n_values * sizeof(*values));
	return ex->n_values;
}

static void verdicts(void **state)
{
	(void)state;
	struct shard_gate *g = shard_gate_create(cluster, strings, zone_key, SHARD_LABEL_DEFAULT);
	assert_non_null(g);
	static struct pod_spec pod, out;
	memset(&pod, 0, sizeof(pod));
	char why[512];
	assert_int_equal(shard_gate_spec(g, &pod, 50, &out, why, sizeof(why)),
			 SHARD_GATE_NO_LEASE);
	shard_gate_alive_until(g, 100);
	assert_int_equal(shard_gate_spec(g, &pod, 100, &out, why, sizeof(why)),
			 SHARD_GATE_NO_LEASE);
	assert_non_null(strstr(why, "lease"));
	assert_int_equal(shard_gate_spec(g, &pod, 99, &out, why, sizeof(why)),
			 SHARD_GATE_NONE_OWNED);
	own(g, "z1", "z9"); /* z9: no node carries it */
	assert_int_equal(shard_gate_spec(g, &pod, 99, &out, why, sizeof(why)), SHARD_GATE_PLACE);
	assert_true(out.has_required);
	assert_int_equal(out.n_terms, 1);
	uint32_t v[SHARD_GATE_IDS];
	assert_int_equal(added(&out, 0, v), 1);
	assert_int_equal(v[0], zones[1]);
	/* Two required terms: each gets the requirement, after its own. */
	own(g, "z0", "z2");
	pod.has_required = true;
	pod.n_terms = 2;
	pod.n_exprs = 2;
	pod.exprs[0] = (struct sel_expr){.key = zone_key, .op = SEL_EXISTS};
	pod.exprs[1] = (struct sel_expr){.key = zone_key, .op = SEL_DOES_NOT_EXIST};
	pod.terms[0] = (struct sel_term){.first_expr = 0, .n_exprs = 1};
	pod.terms[1] = (struct sel_term){.first_expr = 1, .n_exprs = 1};
	assert_int_equal(shard_gate_spec(g, &pod, 99, &out, why, sizeof(why)), SHARD_GATE_PLACE);
	for (unsigned t = 0; t < 2; t++) {
		assert_int_equal(out.terms[t].n_exprs, 2);
		assert_int_equal(out.exprs[out.terms[t].first_expr].op,
				 t == 0 ? SEL_EXISTS : SEL_DOES_NOT_EXIST);
		assert_int_equal(added(&out, t, v), 2);
		assert_true((v[0] == zones[0] && v[1] == zones[2]) ||
			    (v[0] == zones[2] && v[1] == zones[0]));
	}
	/* No room: the expressions full. */
	pod.n_exprs = POD_MAX_EXPRS;
	assert_int_equal(shard_gate_spec(g, &pod, 99, &out, why, sizeof(why)),
			 SHARD_GATE_NO_ROOM);
	assert_non_null(strstr(why, "no room"));
	/* Required terms present but none: it matches no node, kept as is. */
	pod.n_exprs = 0;
	pod.n_terms = 0;
	assert_int_equal(shard_gate_spec(g, &pod, 99, &out, why, sizeof(why)), SHARD_GATE_PLACE);
	assert_true(out.has_required);
	assert_int_equal(out.n_terms, 0);
	struct shard_gate_counts c;
	shard_gate_get_counts(g, &c);
	assert_int_equal(c.owned, 2);
	assert_int_equal(c.alive_until, 100);
	shard_gate_alive_until(g, 0); /* a loss */
	pod.n_exprs = 2;
	assert_int_equal(shard_gate_spec(g, &pod, 1, &out, why, sizeof(why)),
			 SHARD_GATE_NO_LEASE);
	shard_gate_destroy(g);
}

static void shards_and_note(void **state)
{
	(void)state;
	struct shard_gate *g = shard_gate_create(cluster, strings, zone_key, SHARD_LABEL_DEFAULT);
	shard_name_t seen[8];
	size_t n = shard_gate_shards(g, seen, 8);
	assert_int_equal(n, NODES);
	bool found[NODES] = {false};
	for (size_t i = 0; i < n; i++)
		for (int z = 0; z < NODES; z++)
			found[z] |= strcmp(seen[i], (const char[]){'z', (char)('0' + z), 0}) == 0;
	for (int z = 0; z < NODES; z++)
		assert_true(found[z]);
	char buf[128];
	rcu_register();
	const struct snapshot *s = cluster_snapshot(cluster);
	int64_t slot = cluster_slot_of(cluster, s->nodes[0].name);
	assert_true(slot >= 0);
	assert_true(shard_gate_note(g, s, (uint32_t)slot, buf, sizeof(buf)));
	char want[96];
	snprintf(want, sizeof(want), "node %s belongs to shard %s owned by another host",
		 intern_str(strings, s->nodes[slot].name),
		 intern_str(strings, s->nodes[slot].labels[0].value));
	assert_string_equal(buf, want);
	assert_false(shard_gate_note(g, s, 7, buf, sizeof(buf))); /* empty slot */
	rcu_unregister();
	shard_gate_destroy(g);
}

#define ROUNDS 2000
#define ROUNDS_SOME 100
#define ROUNDS_SECONDS 5

struct race {
	struct shard_gate *g;
	bool stop;
	uint64_t torn, saw_two, saw_one;
};

static void *reader(void *arg)
{
	struct race *r = arg;
	static _Thread_local struct pod_spec pod, out;
	memset(&pod, 0, sizeof(pod));
	char why[512];
	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		if (shard_gate_spec(r->g, &pod, 1, &out, why, sizeof(why)) != SHARD_GATE_PLACE) {
			__atomic_add_fetch(&r->torn, 1, __ATOMIC_RELAXED);
			continue;
		}
		uint32_t v[SHARD_GATE_IDS];
		unsigned n = added(&out, 0, v);
		bool two = n == 2 && ((v[0] == zones[0] && v[1] == zones[1]) ||
				      (v[0] == zones[1] && v[1] == zones[0]));
		bool one = n == 1 && v[0] == zones[2];
		if (two)
			__atomic_add_fetch(&r->saw_two, 1, __ATOMIC_RELAXED);
		else if (one)
			__atomic_add_fetch(&r->saw_one, 1, __ATOMIC_RELAXED);
		else
			__atomic_add_fetch(&r->torn, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static void publish_race(void **state)
{
	(void)state;
	struct race r = {.g = shard_gate_create(cluster, strings, zone_key, SHARD_LABEL_DEFAULT)};
	shard_gate_alive_until(r.g, UINT64_MAX);
	own(r.g, "z0", "z1");
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&t[i], NULL, reader, &r), 0);
	/* At most ROUNDS, and no more once ROUNDS_SOME were done in
	 * ROUNDS_SECONDS: on a loaded 2-core machine each round waits for a
	 * reader to be scheduled (the run took over 30 s once at load 16). */
	struct timespec t0, now;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < ROUNDS; i++) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (i >= ROUNDS_SOME && now.tv_sec - t0.tv_sec >= ROUNDS_SECONDS)
			break;
		if (i % 2)
			own(r.g, "z0", "z1");
		else
			own(r.g, "z2", NULL);
		/* Until a reader has read since (at most ~1 s a round): each
		 * set is read, and reads overlap the next publish. */
		uint64_t seen = __atomic_load_n(&r.saw_two, __ATOMIC_RELAXED) +
				__atomic_load_n(&r.saw_one, __ATOMIC_RELAXED);
		for (int k = 0; k < 1000000 &&
				__atomic_load_n(&r.saw_two, __ATOMIC_RELAXED) +
				__atomic_load_n(&r.saw_one, __ATOMIC_RELAXED) == seen; k++)
			sched_yield();
	}
	own(r.g, "z0", "z1");
	__atomic_store_n(&r.stop, true, __ATOMIC_RELEASE);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	printf("publish_race: %llu reads of {z0, z1}, %llu of {z2}, %llu torn\n",
	       (unsigned long long)r.saw_two, (unsigned long long)r.saw_one,
	       (unsigned long long)r.torn);
	assert_int_equal(r.torn, 0);
	assert_true(r.saw_two > 0 && r.saw_one > 0);
	shard_gate_destroy(r.g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(verdicts),
		cmocka_unit_test(shards_and_note),
		cmocka_unit_test(publish_race),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
