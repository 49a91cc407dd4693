/* unit.queue: the scheduling queue (workers/queue.h) stepped by hand, with
 * time passed in: every transition between activeQ, backoffQ and
 * unschedulable, kube's backoff durations, PrioritySort's order, the
 * QueueingHints (an event wakes exactly the pods it can help), the flush
 * of pods unschedulable too long, deadlines, owners, lost events, and the
 * wake-up of a pod refused by pod affinity when something was placed
 * during its attempt (E6). queue_check() after every step. */
#include "fixture.h"

#include <errno.h>

#include "base/base.h"

#define S UINT64_C(1000000000)

struct qfx {
	struct fx f;
	struct queue_events *ev;
	struct sched_queue *q;
	struct ledger *ledger;
	/* A snapshot by hand: 4 nodes; n1 tainted, n2 cordoned, n3 labelled
	 * zone=b, slot 4 empty. */
	uint8_t present[5];
	struct node_spec nodes[5];
	struct snapshot snap;
	struct pod_spec plain, zone_b;
};

static struct queue_config config(struct qfx *x)
{
	return (struct queue_config){
		.owners = 2, .per_owner = 8,
		.initial_backoff_ns = 1 * S, .max_backoff_ns = 10 * S,
		.max_unschedulable_ns = 300 * S, .pop_from_backoff = false,
		.ctx = &x->f.ctx, .ledger = x->ledger,
	};
}

static int setup(void **state)
{
	struct qfx *x = calloc(1, sizeof(*x));
	void *fs;
	if (x == NULL || fx_setup(&fs) != 0)
		return -1;
	x->f = *(struct fx *)fs;
	free(fs);
	for (int i = 0; i < 4; i++) {
		char name[8];
		snprintf(name, sizeof(name), "n%d", i);
		node_init(&x->f, &x->nodes[i], name);
		x->nodes[i].allocatable.v[RES_CPU] = 4000;
		x->nodes[i].allocatable.v[RES_MEMORY] = INT64_C(1) << 30;
		x->present[i] = 1;
	}
	node_taint(&x->f, &x->nodes[1], "dedicated", "gpu", TAINT_NO_SCHEDULE);
	x->nodes[2].unschedulable = true;
	node_label(&x->f, &x->nodes[3], "zone", "b");
	x->snap = (struct snapshot){.generation = 1, .n_slots = 5, .n_nodes = 4,
				    .present = x->present, .nodes = x->nodes};
	pod_init(&x->plain);
	pod_init(&x->zone_b);
	pod_selector(&x->f, &x->zone_b, "zone", "b");
	x->ev = queue_events_create();
	x->ledger = ledger_create(8);
	struct queue_config c = config(x);
	x->q = queue_create(&c, x->ev);
	if (x->ev == NULL || x->ledger == NULL || x->q == NULL)
		return -1;
	*state = x;
	return 0;
}

static int teardown(void **state)
{
	struct qfx *x = *state;
	queue_destroy(x->q);
	queue_events_destroy(x->ev);
	ledger_destroy(x->ledger);
	intern_destroy(x->f.strings);
	free(x);
	return 0;
}

static void check(struct qfx *x)
{
	assert_int_equal(queue_check(x->q), 0);
}

static struct queue_pod pod_of(const struct pod_spec *spec, int32_t prio,
			       uint32_t codes, uint32_t res)
{
	return (struct queue_pod){.spec = spec, .priority = prio, .codes = codes,
				  .res = res};
}

#define C(code) QUEUE_CODE(code)
#define R(res) (1u << (res))

static void publish(struct qfx *x, struct queue_event e)
{
	queue_events_publish(x->ev, &e);
}

/* A release of a pod asking `cpu` milli and `mem` bytes from `slot`. */
static struct queue_event release(uint32_t slot, int64_t cpu, int64_t mem)
{
	struct pod_spec p;
	pod_init(&p);
	p.request.v[RES_CPU] = cpu;
	p.request.v[RES_MEMORY] = mem;
	return queue_event_release(slot, &p, NULL);
}

/* Fills n0's 4 cpu with two fillers of 2 cpu (and `mem` bytes each),
 * accounted in the ledger; returns the filler. */
static struct pod_spec fill_n0(struct qfx *x, int64_t mem)
{
	struct pod_spec filler;
	pod_init(&filler);
	filler.request.v[RES_CPU] = 2000;
	filler.request.v[RES_MEMORY] = mem;
	for (int i = 0; i < 2; i++)
		assert_int_equal(ledger_account(x->ledger, 0, &filler, NULL, +1), 0);
	return filler;
}

static void test_park_wake_pop(void **state)
{
	struct qfx *x = *state;
	struct sched_queue *q = x->q;
	uint32_t a = queue_id(q, 0, 3);
	struct queue_pod p = pod_of(&x->plain, 0, C(REASON_INSUFFICIENT), R(RES_CPU));
	assert_int_equal(queue_park(q, a, &p, 100 * S), 0);
	check(x);
	assert_int_equal(queue_where(q, a), QUEUE_UNSCHEDULABLE);
	assert_int_equal(queue_attempts(q, a), 1);
	assert_int_equal(queue_park(q, a, &p, 100 * S), -EINVAL); /* queued already */
	assert_int_equal(queue_park(q, 16, &p, 100 * S), -EINVAL); /* out of range */
	/* Time alone does not move an unschedulable pod, nor does it pop. */
	assert_int_equal(queue_tick(q, 150 * S), 0);
	assert_int_equal(queue_pop(q, 150 * S), QUEUE_NONE);
	/* A memory release on a fitting node cannot help a cpu shortage. */
	publish(x, release(0, 0, 1 << 20));
	assert_int_equal(queue_absorb(q, &x->snap, 150 * S), 0);
	assert_int_equal(queue_where(q, a), QUEUE_UNSCHEDULABLE);
	/* A cpu release on a node it cannot use (tainted) cannot either. */
	publish(x, release(1, 500, 0));
	assert_int_equal(queue_absorb(q, &x->snap, 150 * S), 0);
	/* A cpu release on n0 can: past its backoff (1 s), straight to active. */
	publish(x, release(0, 500, 0));
	assert_int_equal(queue_absorb(q, &x->snap, 150 * S), 1);
	check(x);
	assert_int_equal(queue_where(q, a), QUEUE_ACTIVE);
	struct queue_stats st;
	queue_get_stats(q, &st);
	assert_int_equal(st.events, 3);
	assert_int_equal(st.woken, 1);
	assert_int_equal(st.hints_skipped, 2);
	assert_int_equal(st.active, 1);
	/* Popped: in its attempt, counted. */
	assert_int_equal(queue_pop(q, 150 * S), a);
	assert_int_equal(queue_where(q, a), QUEUE_ATTEMPT);
	assert_int_equal(queue_attempts(q, a), 2);
	check(x);
	/* Fails again at 200 s: unschedulable, backoff now 2 s. An event at
	 * 201 s moves it to backoffQ; time then moves it to active at 202 s. */
	assert_int_equal(queue_park(q, a, &p, 200 * S), 0);
	publish(x, release(0, 500, 0));
	assert_int_equal(queue_absorb(q, &x->snap, 201 * S), 1);
	assert_int_equal(queue_where(q, a), QUEUE_BACKOFF);
	assert_int_equal(queue_tick(q, 202 * S - 1), 0);
	assert_int_equal(queue_pop(q, 202 * S - 1), QUEUE_NONE);
	assert_int_equal(queue_tick(q, 202 * S), 1);
	assert_int_equal(queue_where(q, a), QUEUE_ACTIVE);
	check(x);
	/* Answered: forgotten from any state. */
	assert_true(queue_done(q, a));
	assert_false(queue_done(q, a));
	assert_int_equal(queue_where(q, a), QUEUE_OUT);
	assert_int_equal(queue_owner_count(q, 0), 0);
	check(x);
}

/* kube's calculateBackoffDuration at 1 s and 10 s: 1, 2, 4, 8, 10, 10. */
static void test_backoff_doubles_to_max(void **state)
{
	struct qfx *x = *state;
	struct sched_queue *q = x->q;
	uint32_t a = queue_id(q, 1, 0);
	struct queue_pod p = pod_of(&x->plain, 0, 0, 0);
	p.error = true; /* straight to backoffQ: its end is visible by ticks */
	uint64_t want[] = {1, 2, 4, 8, 10, 10, 10};
	uint64_t now = 1000 * S;
	for (unsigned k = 0; k < sizeof(want) / sizeof(want[0]); k++) {
		assert_int_equal(queue_park(q, a, &p, now), 0);
		assert_int_equal(queue_where(q, a), QUEUE_BACKOFF);
		assert_int_equal(queue_tick(q, now + want[k] * S - 1), 0);
		assert_int_equal(queue_tick(q, now + want[k] * S), 1);
		assert_int_equal(queue_pop(q, now + want[k] * S), a);
		assert_int_equal(queue_attempts(q, a), k + 2);
		now += want[k] * S;
		check(x);
	}
	assert_true(queue_done(q, a));
}

/* PrioritySort: higher priority first, then the one queued earlier. */
static void test_priority_order(void **state)
{
	struct qfx *x = *state;
	struct sched_queue *q = x->q;
	int32_t prio[] = {0, 100, 0, 100, -5, 2000000000};
	uint64_t at[] = {10, 12, 9, 11, 1, 13};
	for (unsigned i = 0; i < 6; i++) {
		struct queue_pod p = pod_of(&x->plain, prio[i], 0, 0);
		assert_int_equal(queue_park(q, i, &p, at[i] * S), 0);
	}
	/* A new node everyone fits wakes all six, past their backoffs. */
	publish(x, queue_event_node(0));
	assert_int_equal(queue_absorb(q, &x->snap, 100 * S), 6);
	check(x);
	uint32_t order[] = {5, 3, 1, 2, 0, 4};
	for (unsigned i = 0; i < 6; i++) {
		assert_int_equal(queue_pop(q, 100 * S), order[i]);
		check(x);
	}
	assert_int_equal(queue_pop(q, 100 * S), QUEUE_NONE);
	for (unsigned i = 0; i < 6; i++)
		assert_true(queue_done(q, i));
}

/* Each event wakes exactly the pods whose recorded reasons it can
 * resolve, on a node they can use. */
static void test_hints_wake_exactly(void **state)
{
	struct qfx *x = *state;
	struct sched_queue *q = x->q;
	struct pod_spec tolerant = x->plain;
	pod_tol(&x->f, &tolerant, "dedicated", TOL_EQUAL, "gpu", TAINT_NO_SCHEDULE);
	struct pod_spec ports = x->plain;
	ports.n_ports = 1;
	ports.ports[0] = port(&x->f, "TCP/0.0.0.0/80");
	struct {
		const struct pod_spec *spec;
		uint32_t codes, res;
	} pods[] = {
		/* 0: cpu short */
		{&x->plain, C(REASON_INSUFFICIENT), R(RES_CPU)},
		/* 1: memory short */
		{&x->plain, C(REASON_INSUFFICIENT), R(RES_MEMORY)},
		/* 2: blocked by taints on some nodes, cpu on others */
		{&x->plain, C(REASON_TAINT) | C(REASON_INSUFFICIENT), R(RES_CPU)},
		/* 3: tolerates the taint, cpu short */
		{&tolerant, C(REASON_INSUFFICIENT), R(RES_CPU)},
		/* 4: only a taint (and a cordon) */
		{&x->plain, C(REASON_TAINT) | C(REASON_UNSCHEDULABLE), 0},
		/* 5: wants zone b, which has no cpu */
		{&x->zone_b, C(REASON_AFFINITY) | C(REASON_INSUFFICIENT), R(RES_CPU)},
		/* 6: ports */
		{&ports, C(REASON_PORTS), 0},
		/* 7: too many pods */
		{&x->plain, C(REASON_TOO_MANY_PODS), 0},
	};
	unsigned n = sizeof(pods) / sizeof(pods[0]);
	struct {
		struct queue_event ev;
		const char *woken; /* pods it must wake, as a set of digits */
	} steps[] = {
		/* cpu on n0 (fits everyone statically) */
		{release(0, 100, 0), "0237"},
		/* memory on n0 */
		{release(0, 0, 100), "17"},
		/* cpu on tainted n1: only the tolerant pod can use n1 */
		{release(1, 100, 0), "3"},
		/* cpu on cordoned n2: nobody tolerates the cordon */
		{release(2, 100, 0), ""},
		/* cpu on n3, zone b */
		{release(3, 100, 0), "02357"},
		/* a port released on n0 */
		{queue_event_release(0, &ports, NULL), "67"},
		/* n2 uncordoned (a node event) */
		{queue_event_node(2), "0123467"},
		/* n1 changed: only the tolerant pod can use it */
		{queue_event_node(1), "3"},
		/* an empty slot, a removed node: nobody */
		{queue_event_node(4), ""},
	};
	for (unsigned s = 0; s < sizeof(steps) / sizeof(steps[0]); s++) {
		/* n2 cordoned, except for the uncordon step. */
		x->nodes[2].unschedulable = steps[s].ev.codes != QUEUE_EV_NODE ||
					    steps[s].ev.slot != 2;
		for (unsigned i = 0; i < n; i++) {
			struct queue_pod p = pod_of(pods[i].spec, 0, pods[i].codes,
						    pods[i].res);
			assert_int_equal(queue_park(q, i, &p, 10 * S), 0);
		}
		publish(x, steps[s].ev);
		unsigned want = (unsigned)strlen(steps[s].woken);
		assert_int_equal(queue_absorb(q, &x->snap, 100 * S), want);
		for (unsigned i = 0; i < n; i++) {
			bool woken = strchr(steps[s].woken, (int)('0' + i)) != NULL;
			if ((queue_where(q, i) == QUEUE_ACTIVE) != woken)
				fail_msg("step %u: pod %u %s", s, i,
					 woken ? "not woken" : "woken");
		}
		check(x);
		for (unsigned i = 0; i < n; i++)
			assert_true(queue_done(q, i));
	}
	x->nodes[2].unschedulable = true;
}

/* Released pods of a group may end anti-affinity and spread refusals
 * wherever their node is; a placement only affinity and spread ones. */
static void test_interpod_hints(void **state)
{
	struct qfx *x = *state;
	struct sched_queue *q = x->q;
	uint32_t codes[] = {C(REASON_POD_ANTI_AFFINITY), C(REASON_POD_AFFINITY),
			    C(REASON_SPREAD), C(REASON_EXISTING_ANTI_AFFINITY)};
	struct pod_spec grouped = x->plain;
	grouped.group = 7;
	for (unsigned round = 0; round < 3; round++) {
		for (unsigned i = 0; i < 4; i++) {
			struct queue_pod p = pod_of(&x->plain, 0, codes[i], 0);
			assert_int_equal(queue_park(q, i, &p, 10 * S), 0);
		}
		struct queue_event e;
		const char *want;
		if (round == 0) { /* a grouped pod leaves cordoned n2 */
			e = queue_event_release(2, &grouped, NULL);
			want = "0123";
		} else if (round == 1) { /* a pod without a group leaves */
			e = queue_event_release(2, &x->plain, NULL);
			want = "";
		} else { /* a grouped pod was placed */
			e = queue_event_placed();
			want = "12";
		}
		publish(x, e);
		assert_int_equal(queue_absorb(q, &x->snap, 100 * S), strlen(want));
		for (unsigned i = 0; i < 4; i++)
			assert_int_equal(queue_where(q, i) == QUEUE_ACTIVE,
					 strchr(want, (int)('0' + i)) != NULL);
		for (unsigned i = 0; i < 4; i++)
			assert_true(queue_done(q, i));
		check(x);
	}
}

/* E6: a pod refused by pod affinity is woken at once when something was
 * placed while it was attempted, and counted as waiting for placements
 * while it is unschedulable. */
static void test_placement_during_attempt(void **state)
{
	struct qfx *x = *state;
	struct sched_queue *q = x->q;
	struct queue_pod p = pod_of(&x->plain, 0, C(REASON_POD_AFFINITY), 0);
	p.change_head = ledger_changes_head(x->ledger);
	assert_false(queue_events_want_placed(x->ev));
	assert_int_equal(queue_park(q, 0, &p, 10 * S), 0);
	assert_int_equal(queue_where(q, 0), QUEUE_UNSCHEDULABLE);
	assert_true(queue_events_want_placed(x->ev));
	/* Another pod placed during the next attempt: the change log moved. */
	assert_int_equal(queue_pop(q, 10 * S), QUEUE_NONE);
	publish(x, queue_event_node(0));
	queue_absorb(q, &x->snap, 20 * S);
	assert_int_equal(queue_pop(q, 20 * S), 0);
	assert_false(queue_events_want_placed(x->ev));
	struct pod_spec one;
	pod_init(&one);
	assert_int_equal(ledger_account(x->ledger, 0, &one, NULL, +1), 0);
	assert_int_equal(queue_park(q, 0, &p, 20 * S), 0);
	assert_int_not_equal(queue_where(q, 0), QUEUE_UNSCHEDULABLE);
	assert_false(queue_events_want_placed(x->ev));
	check(x);
	assert_true(queue_done(q, 0));
}

/* A gang's own rollback, published as releases before it parks again:
 * the pod parked with events_from past them is not woken by them (its
 * attempt would only fail again), and is by the next release. */
static void test_events_from_skips_own_rollback(void **state)
{
	struct qfx *x = *state;
	struct sched_queue *q = x->q;
	struct queue_pod p = pod_of(&x->plain, 0, C(REASON_INSUFFICIENT), R(RES_CPU));
	publish(x, release(0, 500, 0));
	publish(x, release(0, 500, 0));
	p.events_from = queue_events_head(x->ev);
	assert_int_equal(queue_park(q, 0, &p, 10 * S), 0);
	assert_int_equal(queue_absorb(q, &x->snap, 20 * S), 0);
	assert_int_equal(queue_where(q, 0), QUEUE_UNSCHEDULABLE);
	struct queue_stats st;
	queue_get_stats(q, &st);
	assert_int_equal(st.events, 2);
	assert_int_equal(st.hints_skipped, 2);
	publish(x, release(0, 500, 0));
	assert_int_equal(queue_absorb(q, &x->snap, 20 * S), 1);
	assert_int_equal(queue_where(q, 0), QUEUE_ACTIVE);
	check(x);
	assert_true(queue_done(q, 0));
}

static void test_pop_from_backoff_and_flush(void **state)
{
	struct qfx *x = *state;
	struct queue_config c = config(x);
	c.pop_from_backoff = true;
	struct sched_queue *q = queue_create(&c, x->ev);
	assert_non_null(q);
	struct queue_pod p = pod_of(&x->plain, 0, C(REASON_TAINT), 0);
	assert_int_equal(queue_park(q, 1, &p, 10 * S), 0);
	assert_int_equal(queue_park(q, 2, &p, 11 * S), 0);
	/* Woken inside its backoff, activeQ empty: popped early. */
	publish(x, queue_event_node(0));
	assert_int_equal(queue_absorb(q, &x->snap, 10 * S + 1), 2);
	assert_int_equal(queue_where(q, 1), QUEUE_BACKOFF);
	assert_int_equal(queue_pop(q, 10 * S + 2), 1);
	assert_int_equal(queue_pop(q, 10 * S + 2), 2);
	assert_int_equal(queue_park(q, 1, &p, 20 * S), 0);
	assert_int_equal(queue_park(q, 2, &p, 30 * S), 0);
	/* podMaxInUnschedulablePodsDuration: 1 moves at 320 s, 2 at 330 s. */
	assert_int_equal(queue_tick(q, 320 * S - 1), 0);
	assert_int_equal(queue_tick(q, 320 * S), 1);
	assert_int_equal(queue_where(q, 1), QUEUE_ACTIVE);
	assert_int_equal(queue_where(q, 2), QUEUE_UNSCHEDULABLE);
	assert_int_equal(queue_tick(q, 330 * S), 1);
	struct queue_stats st;
	queue_get_stats(q, &st);
	assert_int_equal(st.flushed, 2);
	assert_int_equal(queue_check(q), 0);
	queue_destroy(q);
}

static void test_deadlines_and_owners(void **state)
{
	struct qfx *x = *state;
	struct sched_queue *q = x->q;
	struct queue_pod p = pod_of(&x->plain, 0, C(REASON_TAINT), 0);
	p.deadline_ns = 50 * S;
	assert_int_equal(queue_park(q, queue_id(q, 1, 2), &p, 10 * S), 0);
	p.deadline_ns = 40 * S;
	assert_int_equal(queue_park(q, queue_id(q, 1, 5), &p, 10 * S), 0);
	p.deadline_ns = 0;
	assert_int_equal(queue_park(q, queue_id(q, 0, 1), &p, 10 * S), 0);
	check(x);
	assert_int_equal(queue_expired(q, 39 * S), QUEUE_NONE);
	assert_int_equal(queue_expired(q, 40 * S), queue_id(q, 1, 5));
	assert_true(queue_done(q, queue_id(q, 1, 5)));
	assert_int_equal(queue_expired(q, 45 * S), QUEUE_NONE);
	assert_int_equal(queue_expired(q, 60 * S), queue_id(q, 1, 2));
	check(x);
	/* A purge, one by one. */
	assert_int_equal(queue_owner_count(q, 1), 1);
	assert_int_equal(queue_owner_count(q, 0), 1);
	uint32_t id;
	unsigned n = 0;
	while ((id = queue_first_of(q, 1)) != QUEUE_NONE) {
		assert_int_equal(queue_owner(q, id), 1);
		assert_true(queue_done(q, id));
		n++;
	}
	assert_int_equal(n, 1);
	assert_int_equal(queue_expired(q, 100 * S), QUEUE_NONE);
	assert_int_equal(queue_first_of(q, 0), queue_id(q, 0, 1));
	assert_true(queue_done(q, queue_id(q, 0, 1)));
	check(x);
}

/* A release wakes as many pods refused for resources as the room it
 * leaves holds, in PrioritySort's order: node n0 has 2 cpu free after
 * it; three pods of 1 cpu are short of cpu, the last parked of higher
 * priority: it and the first are woken, the second is not; a pod refused
 * also by something the counters do not decide (ports) is woken anyway. */
static void test_release_wakes_what_fits(void **state)
{
	struct qfx *x = *state;
	struct sched_queue *q = x->q;
	/* n0: 4000m of 4000 used: two fillers. */
	struct pod_spec filler = fill_n0(x, 0);
	for (uint32_t i = 0; i < 3; i++) {
		struct queue_pod p = pod_of(&x->plain, i == 2 ? 5 : 0,
					    C(REASON_INSUFFICIENT), R(RES_CPU));
		p.request.v[RES_CPU] = 1000;
		assert_int_equal(queue_park(q, i, &p, 10 * S), 0);
	}
	struct queue_pod pp = pod_of(&x->plain, 0, C(REASON_INSUFFICIENT) |
				     C(REASON_PORTS), R(RES_CPU));
	pp.request.v[RES_CPU] = 3000;
	assert_int_equal(queue_park(q, 3, &pp, 10 * S), 0);
	/* One filler leaves (its counters first, then the event). */
	assert_int_equal(ledger_account(x->ledger, 0, &filler, NULL, -1), 0);
	publish(x, queue_event_release(0, &filler, NULL));
	assert_int_equal(queue_absorb(q, &x->snap, 100 * S), 3);
	assert_int_equal(queue_where(q, 0), QUEUE_ACTIVE);
	assert_int_equal(queue_where(q, 1), QUEUE_UNSCHEDULABLE);
	assert_int_equal(queue_where(q, 2), QUEUE_ACTIVE);
	assert_int_equal(queue_where(q, 3), QUEUE_ACTIVE);
	/* A node added with room for one wakes one more. */
	publish(x, queue_event_node(3));
	x->nodes[3].allocatable.v[RES_CPU] = 1500;
	assert_int_equal(queue_absorb(q, &x->snap, 100 * S), 1);
	assert_int_equal(queue_where(q, 1), QUEUE_ACTIVE);
	x->nodes[3].allocatable.v[RES_CPU] = 4000;
	check(x);
	for (uint32_t i = 0; i < 4; i++)
		assert_true(queue_done(q, i));
}

/* A release's room in PrioritySort's order among many candidates, and the
 * hint asked once per run of pods alike (same spec, codes and resources)
 * but not across a change of any. n0 has 2 cpu free after the release.
 * Parked, in this order: 0 (plain, refused for a taint: the release
 * cannot help), 1 (2 cpu), 2 (1 cpu), 3 (3 cpu, priority 5), 4 (1 cpu,
 * priority 5), 5 (1 cpu), 6 (zone=b selector, 1 cpu, priority 10: n0 has
 * no zone, so never), all but 0 short of cpu. PrioritySort: 6, 3, 4, 1,
 * 2, 5; 6 cannot, 3 does not fit, 4 takes 1 cpu, 1 no longer fits, 2
 * takes the last. Woken: 4 and 2. */
static void test_room_order_among_many(void **state)
{
	struct qfx *x = *state;
	struct sched_queue *q = x->q;
	struct pod_spec filler = fill_n0(x, 0);
	struct queue_pod taint = pod_of(&x->plain, 0, C(REASON_TAINT), 0);
	assert_int_equal(queue_park(q, 0, &taint, 10 * S), 0);
	static const struct {
		int64_t cpu;
		int32_t prio;
		bool zone_b;
	} pods[] = {{2000, 0, false}, {1000, 0, false}, {3000, 5, false},
		    {1000, 5, false}, {1000, 0, false}, {1000, 10, true}};
	for (uint32_t i = 0; i < 6; i++) {
		struct queue_pod p = pod_of(pods[i].zone_b ? &x->zone_b : &x->plain,
					    pods[i].prio, C(REASON_INSUFFICIENT), R(RES_CPU));
		p.request.v[RES_CPU] = pods[i].cpu;
		assert_int_equal(queue_park(q, i + 1, &p, (11 + i) * S), 0);
	}
	check(x);
	assert_int_equal(ledger_account(x->ledger, 0, &filler, NULL, -1), 0);
	publish(x, queue_event_release(0, &filler, NULL));
	assert_int_equal(queue_absorb(q, &x->snap, 100 * S), 2);
	static const uint8_t want[7] = {QUEUE_UNSCHEDULABLE, QUEUE_UNSCHEDULABLE,
					QUEUE_ACTIVE, QUEUE_UNSCHEDULABLE, QUEUE_ACTIVE,
					QUEUE_UNSCHEDULABLE, QUEUE_UNSCHEDULABLE};
	for (uint32_t i = 0; i < 7; i++)
		assert_int_equal(queue_where(q, i), want[i]);
	struct queue_stats st;
	queue_get_stats(q, &st);
	assert_int_equal(st.woken, 2);
	assert_int_equal(st.hints_skipped, 5); /* 0 and 6 by the hint, 1, 3, 5 by the room */
	/* activeQ: 4 (priority 5) before 2. */
	assert_int_equal(queue_pop(q, 100 * S), 4);
	assert_int_equal(queue_pop(q, 100 * S), 2);
	check(x);
	for (uint32_t i = 0; i < 7; i++)
		assert_true(queue_done(q, i));
}

/* A room that holds more than ROOM_SELECTIONS (8) pods: node n0, empty
 * (4000m), announced by a node event; 15 pods short of cpu, of 250m or
 * 1000m, priorities 0-4, parked in turn. The pods woken are those a
 * literal pass gives: PrioritySort's order (priority, then the time
 * queued), each taken while it fits what is left. */
static void test_room_for_many(void **state)
{
	struct qfx *x = *state;
	struct sched_queue *q = x->q;
	enum { N = 15 };
	int64_t cpu[N];
	int32_t prio[N];
	for (uint32_t i = 0; i < N; i++) {
		cpu[i] = i % 3 == 0 ? 1000 : 250;
		prio[i] = (int32_t)((i * 7) % 5);
		struct queue_pod p = pod_of(&x->plain, prio[i], C(REASON_INSUFFICIENT),
					    R(RES_CPU));
		p.request.v[RES_CPU] = cpu[i];
		assert_int_equal(queue_park(q, i, &p, (10 + i) * S), 0);
	}
	/* The literal pass. */
	uint32_t order[N];
	for (uint32_t i = 0; i < N; i++)
		order[i] = i;
	for (uint32_t i = 1; i < N; i++)
		for (uint32_t j = i; j > 0 && prio[order[j]] > prio[order[j - 1]]; j--) {
			uint32_t t = order[j];
			order[j] = order[j - 1];
			order[j - 1] = t;
		}
	bool want[N] = {0};
	int64_t left = 4000;
	unsigned n_want = 0;
	for (uint32_t k = 0; k < N; k++)
		if (cpu[order[k]] <= left) {
			left -= cpu[order[k]];
			want[order[k]] = true;
			n_want++;
		}
	assert_true(n_want > 8); /* past the selections, into the sort */
	publish(x, queue_event_node(0));
	assert_int_equal(queue_absorb(q, &x->snap, 100 * S), n_want);
	for (uint32_t i = 0; i < N; i++)
		assert_int_equal(queue_where(q, i),
				 want[i] ? QUEUE_ACTIVE : QUEUE_UNSCHEDULABLE);
	check(x);
	for (uint32_t i = 0; i < N; i++)
		assert_true(queue_done(q, i));
}

/* QS1-QS2: an event whose node's room no parked pod can use is told
 * without walking the list, with the same outcome as the walk (nothing
 * woken, every pod counted in hints_skipped), and an event that one pod
 * may use is walked. n0 is full (two 2-cpu fillers); parked: pods 0-9 of
 * 1 cpu and 1 MiB, short of cpu (a preempting pod's release: its room is
 * held again before the event is read). Then, each a case the summary
 * must not skip: a pod that asks no cpu (the resources every pod asks
 * leave cpu out), a smaller pod (the least request is the bound), a pod
 * refused for host ports (a node event may wake it whatever the room). */
static void test_room_nobody_uses_unwalked(void **state)
{
	struct qfx *x = *state;
	struct sched_queue *q = x->q;
	struct pod_spec filler = fill_n0(x, 1 << 20);
	struct queue_pod p = pod_of(&x->plain, 0, C(REASON_INSUFFICIENT), R(RES_CPU));
	p.request.v[RES_CPU] = 1000;
	p.request.v[RES_MEMORY] = 1 << 20;
	for (uint32_t i = 0; i < 10; i++)
		assert_int_equal(queue_park(q, i, &p, (10 + i) * S), 0);
	check(x);
	/* A filler released and its room held again (the preemptor's). */
	assert_int_equal(ledger_account(x->ledger, 0, &filler, NULL, -1), 0);
	assert_int_equal(ledger_account(x->ledger, 0, &filler, NULL, +1), 0);
	publish(x, queue_event_release(0, &filler, NULL));
	assert_int_equal(queue_absorb(q, &x->snap, 100 * S), 0);
	struct queue_stats st;
	queue_get_stats(q, &st);
	assert_int_equal(st.events, 1);
	assert_int_equal(st.events_unwalked, 1);
	assert_int_equal(st.hints_skipped, 10);
	assert_int_equal(st.unschedulable, 10);

	/* Pod 10 asks memory only: n0's memory is free, so the release's
	 * room may serve it; walked, and it is woken. */
	struct queue_pod mem = pod_of(&x->plain, 0, C(REASON_INSUFFICIENT),
				      R(RES_MEMORY));
	mem.request.v[RES_MEMORY] = 1 << 20;
	assert_int_equal(queue_park(q, 10, &mem, 20 * S), 0);
	check(x);
	publish(x, queue_event_release(0, &filler, NULL));
	assert_int_equal(queue_absorb(q, &x->snap, 100 * S), 1);
	assert_int_equal(queue_where(q, 10), QUEUE_ACTIVE);
	queue_get_stats(q, &st);
	assert_int_equal(st.events_unwalked, 1);
	assert_int_equal(st.hints_skipped, 20);

	/* 500m free on n0: pods 0-9 (1 cpu) cannot use it, pod 11 (250m)
	 * can; the least request is its, so the event is walked. */
	assert_int_equal(ledger_account(x->ledger, 0, &filler, NULL, -1), 0);
	struct pod_spec part;
	pod_init(&part);
	part.request.v[RES_CPU] = 1500;
	assert_int_equal(ledger_account(x->ledger, 0, &part, NULL, +1), 0);
	struct queue_pod small = p;
	small.request.v[RES_CPU] = 250;
	assert_int_equal(queue_park(q, 11, &small, 21 * S), 0);
	check(x);
	publish(x, queue_event_release(0, &filler, NULL));
	assert_int_equal(queue_absorb(q, &x->snap, 100 * S), 1);
	assert_int_equal(queue_where(q, 11), QUEUE_ACTIVE);
	queue_get_stats(q, &st);
	assert_int_equal(st.events_unwalked, 1);
	/* Pods 10 and 11 gone, the sum still counts pod 10's asks (memory
	 * only) until the list is empty: an event of n0, full again, is
	 * walked, and wakes none. */
	assert_int_equal(ledger_account(x->ledger, 0, &part, NULL, -1), 0);
	assert_int_equal(ledger_account(x->ledger, 0, &filler, NULL, +1), 0);
	publish(x, queue_event_node(0));
	assert_int_equal(queue_absorb(q, &x->snap, 100 * S), 0);
	queue_get_stats(q, &st);
	assert_int_equal(st.events_unwalked, 1);
	for (uint32_t i = 0; i < 12; i++)
		queue_done(q, i);
	check(x);
	/* Empty, then pods 0-9 again: the sum afresh, unwalked again. */
	for (uint32_t i = 0; i < 10; i++)
		assert_int_equal(queue_park(q, i, &p, (30 + i) * S), 0);
	check(x);
	publish(x, queue_event_node(0));
	assert_int_equal(queue_absorb(q, &x->snap, 100 * S), 0);
	queue_get_stats(q, &st);
	assert_int_equal(st.events_unwalked, 2);
	/* Pod 12, as big, was refused for host ports too: a node event on
	 * n0 may help it whatever the room (HINT_QUEUE), so it is walked. */
	struct queue_pod ports = p;
	ports.codes |= C(REASON_PORTS);
	assert_int_equal(queue_park(q, 12, &ports, 40 * S), 0);
	check(x);
	publish(x, queue_event_node(0));
	assert_int_equal(queue_absorb(q, &x->snap, 100 * S), 1);
	assert_int_equal(queue_where(q, 12), QUEUE_ACTIVE);
	queue_get_stats(q, &st);
	assert_int_equal(st.events_unwalked, 2);
	for (uint32_t i = 0; i < 10; i++)
		assert_int_equal(queue_where(q, i), QUEUE_UNSCHEDULABLE);
	/* It left: the count is exact, so the next such event is unwalked. */
	publish(x, queue_event_node(0));
	assert_int_equal(queue_absorb(q, &x->snap, 100 * S), 0);
	queue_get_stats(q, &st);
	assert_int_equal(st.events_unwalked, 3);
	for (uint32_t i = 0; i < 13; i++)
		queue_done(q, i);
	check(x);
}

/* A queue that falls a whole ring behind wakes everyone. */
static void test_lost_events_wake_all(void **state)
{
	struct qfx *x = *state;
	struct sched_queue *q = x->q;
	struct queue_pod p = pod_of(&x->plain, 0, C(REASON_TAINT), 0);
	for (uint32_t i = 0; i < 5; i++)
		assert_int_equal(queue_park(q, i, &p, 10 * S), 0);
	for (unsigned i = 0; i < QUEUE_EVENTS + 1; i++)
		publish(x, release(0, 1, 0)); /* none can help a taint */
	assert_int_equal(queue_absorb(q, &x->snap, 100 * S), 5);
	struct queue_stats st;
	queue_get_stats(q, &st);
	assert_int_equal(st.lost_events, 1);
	/* Caught up: the next event is read normally. */
	publish(x, release(0, 1, 0));
	for (uint32_t i = 0; i < 5; i++) {
		assert_int_equal(queue_pop(q, 100 * S), i);
		assert_int_equal(queue_park(q, i, &p, 100 * S), 0);
	}
	assert_int_equal(queue_absorb(q, &x->snap, 200 * S), 0);
	queue_get_stats(q, &st);
	assert_int_equal(st.lost_events, 1);
	check(x);
	for (uint32_t i = 0; i < 5; i++)
		assert_true(queue_done(q, i));
}

/* Random operations against the structure's own check. */
static void test_random_walk(void **state)
{
	struct qfx *x = *state;
	struct sched_queue *q = x->q;
	uint64_t rng = 42, now = 0;
	for (unsigned step = 0; step < 20000; step++) {
		uint32_t id = (uint32_t)(rng_next(&rng) % 16);
		now += rng_next(&rng) % (3 * S);
		struct queue_pod p = pod_of(&x->plain, (int32_t)(rng_next(&rng) % 3),
					    C(REASON_INSUFFICIENT), R(RES_CPU));
		/* Mixed requests and reasons: queue_check judges QS1's sum. */
		p.request.v[RES_CPU] = (int64_t)(rng_next(&rng) % 3) * 1000;
		p.request.v[RES_MEMORY] = (int64_t)(rng_next(&rng) % 2) << 20;
		if (rng_next(&rng) % 7 == 0)
			p.codes |= C(REASON_PORTS);
		p.deadline_ns = rng_next(&rng) % 4 == 0 ? now + 20 * S : 0;
		p.error = rng_next(&rng) % 5 == 0;
		switch (rng_next(&rng) % 6) {
		case 0:
			if (queue_where(q, id) == QUEUE_OUT)
				assert_int_equal(queue_park(q, id, &p, now), 0);
			break;
		case 1:
			publish(x, release((uint32_t)(rng_next(&rng) % 5), 100, 0));
			queue_absorb(q, &x->snap, now);
			break;
		case 2:
			queue_tick(q, now);
			break;
		case 3: {
			uint32_t got = queue_pop(q, now);
			if (got != QUEUE_NONE) {
				if (rng_next(&rng) % 2)
					assert_int_equal(queue_park(q, got, &p, now), 0);
				else
					assert_true(queue_done(q, got));
			}
			break;
		}
		case 4:
			if (rng_next(&rng) % 2) {
				queue_done(q, id);
			} else if (queue_take(q, id) == 0) {
				assert_int_equal(queue_where(q, id), QUEUE_ATTEMPT);
				assert_int_equal(queue_park(q, id, &p, now), 0);
			}
			break;
		default: {
			uint32_t e = queue_expired(q, now);
			if (e != QUEUE_NONE)
				assert_true(queue_done(q, e));
		}
		}
		if (queue_check(q) != 0)
			fail_msg("step %u: queue_check failed", step);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_park_wake_pop, setup, teardown),
		cmocka_unit_test_setup_teardown(test_backoff_doubles_to_max, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_priority_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hints_wake_exactly, setup, teardown),
		cmocka_unit_test_setup_teardown(test_interpod_hints, setup, teardown),
		cmocka_unit_test_setup_teardown(test_placement_during_attempt, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_events_from_skips_own_rollback,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_pop_from_backoff_and_flush, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_deadlines_and_owners, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_release_wakes_what_fits, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_room_order_among_many, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_room_for_many, setup, teardown),
		cmocka_unit_test_setup_teardown(test_room_nobody_uses_unwalked, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_lost_events_wake_all, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_random_walk, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
