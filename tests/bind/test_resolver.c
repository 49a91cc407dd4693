/* unit.resolver: the resolver's paths, stepped by hand on one thread.
 *
 * Two engines A and B share a cluster of two nodes, each with room for
 * exactly one pod. The commit step given to A's resolver runs B first:
 * B places the same shape and commits it, taking the node A just chose,
 * and only then does A's commit go to the ledger. So the race is certain,
 * not hoped for:
 * - conflict then retry: A's first commit is refused (conflicts == 1), A
 *   places again against the counters as they are now, lands on the other
 *   node and commits (attempts == 2, placed == 1);
 * - give-up: a commit step that always refuses ends the loop after
 *   RESOLVER_MAX_ATTEMPTS placements with gave_up set, nothing committed;
 * - unschedulable: with both nodes full, one placement, no commit.
 * After each, the ledger holds exactly what was committed. Then, on a
 * fresh cluster, a gang's run of placements (GC2) ends with the gang. */
#define _LGPL_SOURCE 1

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <urcu/urcu-qsbr.h>

#include <cmocka.h>

#include "bind/bind.h"
#include "ingest/ingest.h"
#include "shm/shm.h"
#include "workers/workers.h"

struct world {
	struct intern *strings;
	struct res_names res;
	struct plugin_ctx pctx;
	struct sched_config cfg;
	struct cluster *cluster;
	struct engine *a, *b;
	struct pod_spec pod; /* 3 cpu: one per 4-cpu node */
};

/* What the step did, for the assertions. */
struct step {
	struct world *w;
	unsigned calls;
	int64_t b_slot;       /* where B committed, -1 before it has */
	uint32_t a_first_slot;/* the node A chose first */
};

static int setup(void **state)
{
	static struct world w;
	memset(&w, 0, sizeof(w));
	urcu_qsbr_register_thread();
	w.strings = intern_create();
	res_names_init(&w.res);
	assert_int_equal(plugin_ctx_init(&w.pctx, w.strings, &w.res), 0);
	sched_config_default(&w.cfg);
	w.cluster = cluster_create(w.strings, 2);
	assert_non_null(w.cluster);
	struct node_event ev[2];
	char err[256];
	for (int i = 0; i < 2; i++) {
		memset(&ev[i], 0, sizeof(ev[i]));
		assert_int_equal(intern_add_str(w.strings, i ? "n1" : "n0", &ev[i].name), 0);
		ev[i].kind = NODE_EVENT_ADD;
		ev[i].spec.name = ev[i].name;
		ev[i].spec.allocatable.v[RES_CPU] = 4000;
		ev[i].spec.allocatable.v[RES_MEMORY] = 8LL << 30;
		ev[i].spec.allocatable.v[RES_PODS] = 110;
	}
	assert_int_equal(cluster_apply(w.cluster, ev, 2, err, sizeof(err)), 0);
	w.a = engine_create(w.cluster, &w.pctx, &w.cfg, 1, 0);
	w.b = engine_create(w.cluster, &w.pctx, &w.cfg, 2, 0);
	assert_non_null(w.a);
	assert_non_null(w.b);
	w.pod.request.v[RES_CPU] = w.pod.nonzero_cpu_milli = 3000;
	w.pod.request.v[RES_MEMORY] = w.pod.nonzero_mem_bytes = 1LL << 30;
	*state = &w;
	return 0;
}

static int teardown(void **state)
{
	struct world *w = *state;
	engine_destroy(w->a);
	engine_destroy(w->b);
	cluster_destroy(w->cluster);
	intern_destroy(w->strings);
	urcu_qsbr_unregister_thread();
	return 0;
}

static int64_t cpu_used(struct world *w, uint32_t slot)
{
	struct res_vec used;
	int64_t nz_cpu, nz_mem;
	ledger_load_used(ledger_node(cluster_ledger(w->cluster), slot), &used,
			 &nz_cpu, &nz_mem);
	return used.v[RES_CPU];
}

/* A's commit step: the first time, B places and commits onto the node A
 * chose before A commits; every commit then goes to the ledger. */
static int b_commits_first(void *arg, struct engine *e, const struct pod_spec *pod,
			   uint32_t slot, const struct device_assignment *dev)
{
	struct step *s = arg;
	if (s->calls++ == 0) {
		s->a_first_slot = slot;
		/* B's commit onto exactly A's choice: the ledger decides between
		 * them, as it would between two workers. */
		assert_int_equal(commit_pod(s->w->b, pod, slot, NULL), 0);
		s->b_slot = slot;
	}
	return commit_pod(e, pod, slot, dev);
}

static int always_refuse(void *arg, struct engine *e, const struct pod_spec *pod,
			 uint32_t slot, const struct device_assignment *dev)
{
	(void)e, (void)pod, (void)slot, (void)dev;
	((struct step *)arg)->calls++;
	return -EAGAIN;
}

static void test_conflict_then_retry(void **state)
{
	struct world *w = *state;
	struct step s = {.w = w, .b_slot = -1};
	struct resolver_stats st = {0};
	struct resolve_result r;
	assert_int_equal(resolver_place_stepped(w->a, &w->pod, 7, b_commits_first,
						&s, &r, &st), 0);
	assert_int_equal(r.attempts, 2);
	assert_int_equal(st.conflicts, 1);
	assert_int_equal(st.placed, 1);
	assert_int_equal(st.gave_up, 0);
	assert_false(r.gave_up);
	assert_int_equal(s.calls, 2);
	/* B took A's first choice; A's retry went to the other node. */
	assert_int_equal(s.b_slot, s.a_first_slot);
	assert_true(r.placement.slot >= 0);
	assert_int_not_equal(r.placement.slot, s.b_slot);
	/* The ledger holds exactly the two commits, one per node. */
	assert_int_equal(cpu_used(w, 0), 3000);
	assert_int_equal(cpu_used(w, 1), 3000);
	assert_int_equal(ledger_overcommits(cluster_ledger(w->cluster),
					    cluster_snapshot(w->cluster)), 0);
}

static void test_full_is_unschedulable(void **state)
{
	/* Runs after test_conflict_then_retry: both nodes hold 3 of 4 cpu. */
	struct world *w = *state;
	struct step s = {.w = w};
	struct resolver_stats st = {0};
	struct resolve_result r;
	assert_int_equal(resolver_place_stepped(w->a, &w->pod, 8, always_refuse,
						&s, &r, &st), 0);
	assert_int_equal(r.attempts, 1);
	assert_int_equal(s.calls, 0);
	assert_int_equal(st.unschedulable, 1);
	assert_true(r.placement.slot < 0);
	assert_false(r.gave_up);
}

static void test_give_up_after_max_attempts(void **state)
{
	struct world *w = *state;
	struct pod_spec small = w->pod;
	small.request.v[RES_CPU] = small.nonzero_cpu_milli = 500;
	struct step s = {.w = w};
	struct resolver_stats st = {0};
	struct resolve_result r;
	assert_int_equal(resolver_place_stepped(w->a, &small, 9, always_refuse,
						&s, &r, &st), 0);
	assert_true(r.gave_up);
	assert_int_equal(r.attempts, RESOLVER_MAX_ATTEMPTS);
	assert_int_equal(s.calls, RESOLVER_MAX_ATTEMPTS);
	assert_int_equal(st.conflicts, RESOLVER_MAX_ATTEMPTS);
	assert_int_equal(st.gave_up, 1);
	assert_int_equal(st.placed, 0);
	assert_true(r.placement.slot < 0);
	/* Nothing was committed by the refused attempts. */
	assert_int_equal(cpu_used(w, 0), 3000);
	assert_int_equal(cpu_used(w, 1), 3000);
}

static void test_plain_resolver_commits(void **state)
{
	/* resolver_place() itself: the same loop with the real commit. */
	struct world *w = *state;
	struct pod_spec small = w->pod;
	small.request.v[RES_CPU] = small.nonzero_cpu_milli = 1000;
	struct resolver_stats st = {0};
	struct resolve_result r;
	assert_int_equal(resolver_place(w->b, &small, 10, &r, &st), 0);
	assert_int_equal(r.attempts, 1);
	assert_int_equal(st.placed, 1);
	assert_true(r.placement.slot >= 0);
	assert_int_equal(cpu_used(w, (uint32_t)r.placement.slot), 4000);
}

/* GC2 (workers/engine.h, engine_run_begin): bind/gang.c places a gang's
 * pods as one run, in which a pod at the run's last pod's address takes
 * that pod's class without comparing specs. Outside a run the address
 * means nothing: a spec rewritten in place after the run (as a template
 * freed and another made at its address) is placed by what it says now.
 * Fails when engine_run_end keeps the run's last pod. */
static void test_run_ends_with_the_gang(void **state)
{
	struct world *w = *state;
	static struct pod_spec sp;
	sp = w->pod;
	sp.request.v[RES_CPU] = sp.nonzero_cpu_milli = 100;
	sp.request.v[RES_MEMORY] = sp.nonzero_mem_bytes = 64LL << 20;
	assert_int_equal(intern_add_str(w->strings, "n0", &sp.node_name), 0);
	const struct pod_spec *pods[4] = {&sp, &sp, &sp, &sp};
	struct resolver_stats st = {0};
	struct resolve_result r[4];
	struct engine_stats es;
	int64_t on = -1;
	for (unsigned run = 0; run < 4; run++) {
		unsigned failed = 0;
		assert_int_equal(gang_place(w->a, pods, 4, 100 + 4 * run, r, &failed,
					    &st), 0);
		for (unsigned i = 0; i < 4; i++) {
			if (on < 0)
				on = r[i].placement.slot;
			assert_int_equal(r[i].placement.slot, on);
		}
	}
	/* The runs' later pods took their class from the run (or the memo). */
	engine_get_stats(w->a, &es);
	assert_true(es.class_hits >= 3);
	assert_int_equal(cpu_used(w, (uint32_t)on), 1600);
	/* Rewritten at the same address: the other node now, outside a run
	 * and in one. */
	assert_int_equal(intern_add_str(w->strings, "n1", &sp.node_name), 0);
	struct resolve_result one;
	assert_int_equal(resolver_place(w->a, &sp, 200, &one, &st), 0);
	assert_int_equal(one.placement.slot, 1 - on);
	unsigned failed = 0;
	assert_int_equal(gang_place(w->a, pods, 4, 300, r, &failed, &st), 0);
	for (unsigned i = 0; i < 4; i++)
		assert_int_equal(r[i].placement.slot, 1 - on);
	assert_int_equal(cpu_used(w, (uint32_t)(1 - on)), 500);
}

int main(void)
{
	/* In this order: each test starts from the ledger the last one left. */
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_conflict_then_retry),
		cmocka_unit_test(test_full_is_unschedulable),
		cmocka_unit_test(test_give_up_after_max_attempts),
		cmocka_unit_test(test_plain_resolver_commits),
	};
	/* A cluster of its own: the tests above leave both nodes full. */
	const struct CMUnitTest runs[] = {
		cmocka_unit_test(test_run_ends_with_the_gang),
	};
	int failed = cmocka_run_group_tests(tests, setup, teardown);
	return failed + cmocka_run_group_tests(runs, setup, teardown);
}
