/* unit.fair: the fair share between the producers of one worker
 * (workers/pool.h, pool_fair_turn), stepped by hand: each producer's
 * bursts are made up (an injected cost per pod, a supply of pods), and a
 * simulated clock adds up the worker time each producer got.
 *
 * The issue it guards (41): a producer of cheap pods was served one burst
 * (at most POOL_FAIR_BURST pods) per turn, a small part of its quantum,
 * while a noisy producer beside it spent its whole quantum each turn: the
 * cheap one got about 14% of the worker (32 pods x 5 us against 1 ms) and
 * ran 8x slower than alone. Now a turn goes on while the allowance covers
 * a pod, so both get about half.
 *
 * Then (the same issue, item 5): half of the worker was still 3x slower
 * than alone, because each switch between producers costs the next one a
 * refill of its cache (0.06-0.49 ms measured beside a producer whose pods
 * scan 10,000 nodes) and 1 ms turns paid it every millisecond. A sim
 * producer's first burst after another producer's pods costs refill_ns
 * more: test_switch_refill.
 *
 * The figure (item 5 again): pool_fair_turn keeps used_ns, the worker time
 * charged to each producer, which the daemon adds up per producer identity
 * and shmsched-bench --noisy reports as each producer's share of its
 * worker. test_time_figure and test_rate_limited_figure check it against
 * the simulated clock.
 *
 * Light producers first (the same issue, item 5: DRR++, and the sparse
 * flows of FQ-CoDel, RFC 8290 section 4.2). Beside a flood, a producer
 * that needed little of its worker waited for each pod up to a whole 4 ms
 * turn of the flood (p50 2 ms, p99 4 ms, against 2 us and 58 us alone).
 * sim_pass steps passes over the producers as daemon/serve.c's serve_poll
 * does (a round ends with a pass in which no turn was cut), cutting a
 * heavy turn for a light producer with pods: test_light_cuts_heavy_turn
 * (and its control with no cut, the rule before), test_saturated_passes,
 * test_gamer_one_pod_at_a_time and test_gamer_light_heavy_by_turns. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "workers/pool.h"

struct sim_producer {
	struct pool_fair fair;
	uint64_t cost_ns;   /* injected: each pod costs this */
	uint64_t supply;    /* pods it has (UINT64_MAX: never runs dry) */
	uint64_t served;    /* pods served */
	uint64_t time_ns;   /* worker time its pods took */
	unsigned bursts;    /* bursts asked for, this turn */
	unsigned max_want;  /* the largest burst asked for */
	int fail;           /* nonzero: the burst returns it */
	uint64_t refill_ns; /* injected: its first burst after another
			     * producer's pods costs this more */
	uint64_t warm_ns;   /* worker time of its pods at their own cost */
};

/* A pod to come to `arrive_to` once the worker's clock reaches
 * arrive_at_ns (UINT64_MAX: none); each burst of another producer that
 * serves pods brings one to `feed` (NULL: none) when it has none. */
static struct sim_producer *arrive_to, *feed;
static uint64_t arrive_at_ns = UINT64_MAX;
/* When that pod came, and when it began to be served (UINT64_MAX: not
 * yet). */
static uint64_t arrived_ns = UINT64_MAX, arrival_served_ns = UINT64_MAX;

/* The producer whose pods the simulated worker served last. */
static struct sim_producer *last_served;
/* The simulated worker's clock: the time of every burst, whoever's. */
static uint64_t worker_clock_ns;

static int burst(void *arg, unsigned want, uint64_t *spent_ns)
{
	struct sim_producer *p = arg;
	p->bursts++;
	if (want > p->max_want)
		p->max_want = want;
	assert_true(want >= 1 && want <= POOL_FAIR_BURST);
	if (p->fail)
		return p->fail;
	uint64_t n = want < p->supply ? want : p->supply;
	if (n > 0 && p == arrive_to && arrived_ns != UINT64_MAX &&
	    arrival_served_ns == UINT64_MAX)
		arrival_served_ns = worker_clock_ns;
	if (p->supply != UINT64_MAX)
		p->supply -= n;
	*spent_ns = n * p->cost_ns;
	p->warm_ns += *spent_ns;
	if (n > 0) {
		if (last_served != NULL && last_served != p)
			*spent_ns += p->refill_ns;
		last_served = p;
	}
	p->served += n;
	p->time_ns += *spent_ns;
	worker_clock_ns += *spent_ns;
	if (arrive_to != NULL && worker_clock_ns >= arrive_at_ns) {
		arrive_to->supply++;
		arrive_at_ns = UINT64_MAX; /* it has come */
		arrived_ns = worker_clock_ns;
	}
	if (n > 0 && feed != NULL && feed != p && feed->supply == 0)
		feed->supply = 1;
	return (int)n;
}

/* One turn in a round of its own (each turn a new round, no cut): the
 * rule as it was before light producers went first. */
static uint64_t turn_round;

static int turn(struct sim_producer *p, bool *out_of_time)
{
	bool cut_short;
	p->bursts = 0;
	int n = pool_fair_turn(&p->fair, ++turn_round, burst, NULL, p,
			       out_of_time, &cut_short);
	assert_false(cut_short);
	return n;
}

/* The producers of the simulated worker, as serve_cut sees them. */
static struct sim_producer *world;
static unsigned world_n;
static uint64_t world_round;
static unsigned cuts;

/* pool_fair_cut_fn, as daemon/serve.c's serve_cut: another producer is
 * light in this round and has pods. */
static bool sim_cut(void *arg)
{
	for (unsigned i = 0; i < world_n; i++)
		if (&world[i] != arg && world[i].supply > 0 &&
		    pool_fair_light(&world[i].fair, world_round))
			return true;
	return false;
}

/* One pass over the producers, as serve_poll: each a turn in the worker's
 * round, which ends with a pass in which no turn was cut. `cut` false:
 * no cut, the rule before (each pass a round). */
static void sim_pass(struct sim_producer *p, unsigned n_p, bool cut)
{
	world = p;
	world_n = n_p;
	bool any = false;
	for (unsigned i = 0; i < n_p; i++) {
		bool oot, cut_short;
		p[i].bursts = 0;
		assert_true(pool_fair_turn(&p[i].fair, world_round, burst,
					   cut ? sim_cut : NULL, &p[i], &oot,
					   &cut_short) >= 0);
		if (cut_short) {
			any = true;
			cuts++;
		}
	}
	if (!any)
		world_round++;
}

static void sim_reset(void)
{
	last_served = NULL;
	worker_clock_ns = 0;
	arrive_to = NULL;
	feed = NULL;
	arrive_at_ns = UINT64_MAX;
	arrived_ns = UINT64_MAX;
	arrival_served_ns = UINT64_MAX;
	world_round = 1;
	cuts = 0;
}

/* Rounds of turns over the producers; returns nothing, fills time_ns. */
static void rounds(struct sim_producer *p, unsigned n_p, unsigned n_rounds)
{
	bool oot;
	for (unsigned r = 0; r < n_rounds; r++)
		for (unsigned i = 0; i < n_p; i++)
			assert_true(turn(&p[i], &oot) >= 0);
}

/* A cheap producer (5 us a pod) beside a noisy one (300 us a pod), both
 * always busy: each gets about half of the worker. The old rule (one
 * burst a turn) gave the cheap one 160 us of each 1.16 ms round, 14%. */
static void test_cheap_beside_noisy_get_half(void **state)
{
	(void)state;
	struct sim_producer p[2] = {
		{.cost_ns = 5000, .supply = UINT64_MAX},
		{.cost_ns = 300000, .supply = UINT64_MAX},
	};
	rounds(p, 2, 2000);
	double share = (double)p[0].time_ns / (double)(p[0].time_ns + p[1].time_ns);
	assert_true(share > 0.45 && share < 0.55);
	/* More than one burst a turn, each at most the burst's cap. */
	assert_true(p[0].served > 2000u * POOL_FAIR_BURST * 4);
	assert_int_equal(p[0].max_want, POOL_FAIR_BURST);
}

/* Pods dearer than a quantum (three quanta each) are saved up for over
 * turns, and the dear producer still gets about half beside a cheap one;
 * it is never served while its allowance is short of a pod (out_of_time,
 * 0 pods). */
static void test_dear_pods_save_up(void **state)
{
	(void)state;
	struct sim_producer p[2] = {
		{.cost_ns = 5000, .supply = UINT64_MAX},
		{.cost_ns = 3 * POOL_FAIR_QUANTUM_NS, .supply = UINT64_MAX},
	};
	bool oot;
	/* Its first pod: cost unknown, one pod to learn it; then it owes. */
	assert_int_equal(turn(&p[1], &oot), 1);
	assert_true(p[1].fair.deficit_ns < 0);
	assert_int_equal(turn(&p[1], &oot), 0);
	assert_true(oot);
	rounds(p, 2, 3000);
	double share = (double)p[1].time_ns / (double)(p[0].time_ns + p[1].time_ns);
	assert_true(share > 0.40 && share < 0.60);
}

/* A producer that runs dry after some pods keeps what it could have used
 * (capped: a carry and a quantum beyond a pod); one idle all turn keeps no
 * credit (its allowance is at most 0 after the turn), but keeps its debt. */
static void test_idle_keeps_no_credit(void **state)
{
	(void)state;
	struct sim_producer p = {.cost_ns = 1000, .supply = 10};
	bool oot;
	assert_int_equal(turn(&p, &oot), 10);
	assert_false(oot);
	assert_int_equal(p.fair.deficit_ns, POOL_FAIR_QUANTUM_NS - 10 * 1000);
	/* Ran dry again after 5: the rest carries, up to the cap (a carry
	 * and a quantum beyond a pod, less than two quanta). */
	p.supply = 5;
	assert_int_equal(turn(&p, &oot), 5);
	assert_true(POOL_FAIR_CARRY_NS < POOL_FAIR_QUANTUM_NS);
	assert_int_equal(p.fair.deficit_ns,
			 POOL_FAIR_CARRY_NS + POOL_FAIR_QUANTUM_NS + 1000 - 5 * 1000);
	p.supply = 1;
	assert_int_equal(turn(&p, &oot), 1);
	assert_int_equal(p.fair.deficit_ns,
			 POOL_FAIR_CARRY_NS + POOL_FAIR_QUANTUM_NS + 1000 - 1000);
	/* Nothing at all this turn: no credit, however many turns pass. */
	for (int i = 0; i < 100; i++)
		assert_int_equal(turn(&p, &oot), 0);
	assert_true(p.fair.deficit_ns <= 0);
	/* Debt carries: a dear burst leaves the allowance negative. */
	struct sim_producer d = {.cost_ns = 5000000, .supply = UINT64_MAX};
	assert_int_equal(turn(&d, &oot), 1);
	assert_int_equal(d.fair.deficit_ns, POOL_FAIR_QUANTUM_NS - 5000000);
	d.supply = 0;
	assert_int_equal(turn(&d, &oot), 0);
	assert_int_equal(d.fair.deficit_ns, 2 * POOL_FAIR_QUANTUM_NS - 5000000);
}

/* A turn ends when the allowance is spent (about a quantum's worth of
 * pods), or after POOL_FAIR_BURSTS bursts of pods that cost nothing. */
static void test_turn_bounds(void **state)
{
	(void)state;
	struct sim_producer p = {.cost_ns = 10000, .supply = UINT64_MAX};
	bool oot;
	(void)turn(&p, &oot); /* learns the cost */
	uint64_t before = p.time_ns;
	int n = turn(&p, &oot);
	assert_true(oot);
	uint64_t t = p.time_ns - before;
	/* At most the credit cap (a carry, a quantum and a pod) plus one
	 * burst. */
	assert_true(t <= (uint64_t)(POOL_FAIR_CARRY_NS + POOL_FAIR_QUANTUM_NS) +
			 10000 + 32 * 10000);
	assert_true(t >= (uint64_t)POOL_FAIR_QUANTUM_NS - 10000);
	assert_true(n >= 90);

	/* Pods that cost nothing measurable: the cost stays unknown, one pod
	 * a burst, and the turn ends after POOL_FAIR_BURSTS bursts. */
	struct sim_producer free_pods = {.cost_ns = 0, .supply = UINT64_MAX};
	n = turn(&free_pods, &oot);
	assert_int_equal(free_pods.bursts, POOL_FAIR_BURSTS);
	assert_int_equal(n, (int)POOL_FAIR_BURSTS);
}

/* Each switch between producers costs the next one a refill (0.3 ms,
 * the order measured beside a flood of pods that scan 10,000 nodes),
 * charged to it as its pods' time. A cheap producer (3 us a pod) beside a noisy one
 * (30 us), both always busy: each still gets about half of the worker,
 * and the cheap one's own work done in the same time (its pods at their
 * own cost) is at least 2/2.3 of half. Under the old 1 ms quantum a
 * 0.3 ms refill was 30% of each cheap turn: 2.86x slower than alone,
 * where an equal share's floor is 2x. With 4 ms turns: 2.16x. */
static void test_switch_refill(void **state)
{
	(void)state;
	struct sim_producer p[2] = {
		{.cost_ns = 3000, .supply = UINT64_MAX, .refill_ns = 300000},
		{.cost_ns = 30000, .supply = UINT64_MAX, .refill_ns = 300000},
	};
	last_served = NULL;
	rounds(p, 2, 500);
	uint64_t total = p[0].time_ns + p[1].time_ns;
	double share = (double)p[0].time_ns / (double)total;
	assert_true(share > 0.45 && share < 0.55);
	/* How much slower than alone (where all of the time is its own
	 * pods'): the worker time passed per unit of its own work. */
	double slowdown = (double)total / (double)p[0].warm_ns;
	assert_true(slowdown >= 1.9);
	assert_true(slowdown < 2.3);
}

/* The worker-time figure: a cheap producer (3 us a pod) and a dear one
 * (300 us), both always busy, stepped for 500 rounds on the simulated
 * clock. Each one's used_ns is exactly the time of its own bursts (a
 * figure charged to the other producer, or not kept, fails here), the two
 * add up to the worker's busy time, and each gets its 500 quanta within
 * one quantum: with constant costs a turn ends with its allowance in
 * [0, one pod), so the bound is a pod, and the first turn's single pod
 * (the cost is learnt) is within it too. The share is then half within
 * 0.1 % (a quantum of 500), and the cheap one's time over its equal share
 * (what shmsched-bench --noisy reports) within 1 +- 0.002. */
static void test_time_figure(void **state)
{
	(void)state;
	struct sim_producer p[2] = {
		{.cost_ns = 3000, .supply = UINT64_MAX},
		{.cost_ns = 300000, .supply = UINT64_MAX},
	};
	last_served = NULL;
	worker_clock_ns = 0;
	const unsigned n_rounds = 500;
	rounds(p, 2, n_rounds);
	assert_int_equal(p[0].fair.used_ns, p[0].time_ns);
	assert_int_equal(p[1].fair.used_ns, p[1].time_ns);
	assert_int_equal(p[0].fair.used_ns + p[1].fair.used_ns, worker_clock_ns);
	uint64_t quanta = (uint64_t)n_rounds * POOL_FAIR_QUANTUM_NS;
	for (unsigned i = 0; i < 2; i++) {
		assert_true(p[i].fair.used_ns <= quanta);
		assert_true(p[i].fair.used_ns + (uint64_t)POOL_FAIR_QUANTUM_NS >= quanta);
	}
	double equal = (double)worker_clock_ns / 2;
	double cheap_to_equal = (double)p[0].fair.used_ns / equal;
	assert_true(cheap_to_equal > 0.998 && cheap_to_equal < 1.002);
}

/* A cheap producer that does not saturate the worker (each round brings
 * it 300 pods of 3 us: 0.9 ms, under its 4 ms quantum) beside a dear one
 * always busy: it is served every pod in the round it came (its wait is
 * one dear turn at most, as alone it is none), its figure is exactly its
 * demand, and the dear one gets the rest of the worker, not more than a
 * quantum a round. */
static void test_rate_limited_figure(void **state)
{
	(void)state;
	struct sim_producer p[2] = {
		{.cost_ns = 3000, .supply = 0},
		{.cost_ns = 300000, .supply = UINT64_MAX},
	};
	last_served = NULL;
	worker_clock_ns = 0;
	bool oot;
	const unsigned n_rounds = 400, per_round = 300;
	for (unsigned r = 0; r < n_rounds; r++) {
		p[0].supply += per_round;
		assert_true(turn(&p[0], &oot) >= 0);
		/* Nothing left behind for the next round. */
		assert_int_equal(p[0].supply, 0);
		assert_true(turn(&p[1], &oot) >= 0);
	}
	uint64_t demand = (uint64_t)n_rounds * per_round * 3000;
	assert_int_equal(p[0].fair.used_ns, demand);
	assert_int_equal(p[0].fair.used_ns + p[1].fair.used_ns, worker_clock_ns);
	assert_true(p[1].fair.used_ns <= (uint64_t)n_rounds * POOL_FAIR_QUANTUM_NS);
	double share = (double)p[0].fair.used_ns / (double)worker_clock_ns;
	assert_true(share > 0.15 && share < 0.20); /* 0.9 of 4.9 ms: 18 % */
}

/* A light producer's pod that comes in the middle of a heavy producer's
 * turn: the heavy one (30 us a pod, always busy) beside a light one (3 us
 * a pod, idle so far); the pod comes 100 us into the heavy turn, during
 * its first burst. Returns how long the pod waited (from the end of the
 * burst it came in, when the simulated worker could first see it). In
 * both orders of the pass: the light producer after the heavy one (served
 * in the same pass) or before it (first in the next). */
static uint64_t due_ns; /* when light_wait's pod came */

static uint64_t light_wait(bool light_first, bool cut)
{
	struct sim_producer heavy = {.cost_ns = 30000, .supply = UINT64_MAX};
	struct sim_producer light = {.cost_ns = 3000, .supply = 0};
	struct sim_producer p[2];
	p[light_first ? 1 : 0] = heavy;
	p[light_first ? 0 : 1] = light;
	struct sim_producer *l = &p[light_first ? 0 : 1];
	sim_reset();
	for (int i = 0; i < 5; i++)
		sim_pass(p, 2, cut);
	assert_false(l->fair.heavy);
	assert_true(p[light_first ? 1 : 0].fair.heavy);
	/* The next pass's heavy turn starts at this clock (the light one,
	 * when first, is idle and takes no time). */
	arrive_to = l;
	arrive_at_ns = worker_clock_ns + 100000;
	due_ns = arrive_at_ns;
	for (int i = 0; i < 4 && arrival_served_ns == UINT64_MAX; i++)
		sim_pass(p, 2, cut);
	assert_int_not_equal(arrival_served_ns, UINT64_MAX);
	assert_int_equal(l->supply, 0);
	return arrival_served_ns - arrived_ns;
}

/* The pod is served at the end of the heavy burst it came in: no more of
 * the heavy turn runs first (a wait of 0 from then, at most one burst,
 * 32 x 30 us, from its coming). The control, no cut (the rule before):
 * it waited for the rest of the 4 ms turn. */
static void test_light_cuts_heavy_turn(void **state)
{
	(void)state;
	for (int first = 0; first < 2; first++) {
		assert_int_equal(light_wait(first, true), 0);
		assert_true(arrival_served_ns - due_ns <= POOL_FAIR_BURST * 30000);
		assert_int_equal(cuts, 1);
		uint64_t before = light_wait(first, false);
		assert_true(before > POOL_FAIR_QUANTUM_NS / 2);
		assert_int_equal(cuts, 0);
	}
}

/* Both saturating (3 us and 300 us a pod) in passes with the cut on: no
 * one is light, no turn is cut, and the shares stay equal as in
 * test_time_figure, each its quanta within one. */
static void test_saturated_passes(void **state)
{
	(void)state;
	struct sim_producer p[2] = {
		{.cost_ns = 3000, .supply = UINT64_MAX},
		{.cost_ns = 300000, .supply = UINT64_MAX},
	};
	sim_reset();
	for (int i = 0; i < 500; i++)
		sim_pass(p, 2, true);
	assert_int_equal(cuts, 0);
	uint64_t quanta = 500 * (uint64_t)POOL_FAIR_QUANTUM_NS;
	for (unsigned i = 0; i < 2; i++) {
		assert_true(p[i].fair.used_ns <= quanta);
		assert_true(p[i].fair.used_ns + (uint64_t)POOL_FAIR_QUANTUM_NS >= quanta);
	}
	double share = (double)p[0].fair.used_ns / (double)worker_clock_ns;
	assert_true(share > 0.499 && share < 0.501);
}

/* A producer that sends one pod at a time (one comes after each burst of
 * the other, so every turn of its own runs dry: it is light, and cuts the
 * heavy turn after each burst) but of dear pods, 2 ms each, beside a heavy
 * producer of 10 us pods (bursts of 0.32 ms). It is served sooner, but
 * gets no more than half of the worker: one quantum a round, however
 * many turns it cuts the round into. A rule that gave the quantum each
 * turn (each cut a new round) would hand it 2 ms per 0.32 ms burst: 86 %.
 * Checked over 200 rounds: its time is at most its quanta and a cap. */
static void test_gamer_one_pod_at_a_time(void **state)
{
	(void)state;
	struct sim_producer p[2] = {
		{.cost_ns = 10000, .supply = UINT64_MAX},
		{.cost_ns = 2000000, .supply = 1},
	};
	sim_reset();
	feed = &p[1];
	while (world_round < 200)
		sim_pass(p, 2, true);
	assert_true(cuts > 100); /* it did cut, each round */
	uint64_t rounds_had = world_round - 1;
	uint64_t cap = POOL_FAIR_CARRY_NS + POOL_FAIR_QUANTUM_NS + 2000000;
	assert_true(p[1].fair.used_ns <=
		    rounds_had * (uint64_t)POOL_FAIR_QUANTUM_NS + cap);
	double share = (double)p[1].fair.used_ns / (double)worker_clock_ns;
	assert_true(share < 0.52);
	/* And the heavy one is not squeezed below its share. */
	assert_true(p[0].fair.used_ns + (uint64_t)POOL_FAIR_QUANTUM_NS >=
		    rounds_had * (uint64_t)POOL_FAIR_QUANTUM_NS / 2);
}

/* A producer light and heavy by turns: one pod (light, it runs dry) and
 * then a flood (heavy, its quantum spent), its pods 20 us, beside a heavy
 * producer of 30 us pods. It cuts the other's turns when light, yet its
 * share of the worker is half at most, as in saturation. */
static void test_gamer_light_heavy_by_turns(void **state)
{
	(void)state;
	struct sim_producer p[2] = {
		{.cost_ns = 30000, .supply = UINT64_MAX},
		{.cost_ns = 20000, .supply = 0},
	};
	sim_reset();
	arrive_to = NULL;
	unsigned light_turns = 0;
	while (world_round < 400) {
		/* Light turn: a pod; heavy turn: more than a quantum. */
		if (p[1].supply == 0)
			p[1].supply = (world_round % 2) ? 1 : 1000;
		if (!p[1].fair.heavy)
			light_turns++;
		sim_pass(p, 2, true);
	}
	assert_true(cuts > 0);
	assert_true(light_turns > 100);
	uint64_t rounds_had = world_round - 1;
	uint64_t cap = POOL_FAIR_CARRY_NS + POOL_FAIR_QUANTUM_NS + 20000;
	assert_true(p[1].fair.used_ns <=
		    rounds_had * (uint64_t)POOL_FAIR_QUANTUM_NS + cap);
	double share = (double)p[1].fair.used_ns / (double)worker_clock_ns;
	assert_true(share < 0.51);
}

/* A burst's error ends the turn and is passed back. */
static void test_error_passed_back(void **state)
{
	(void)state;
	struct sim_producer p = {.cost_ns = 1000, .supply = UINT64_MAX,
				 .fail = -EPROTO};
	bool oot;
	assert_int_equal(turn(&p, &oot), -EPROTO);
	assert_int_equal(p.bursts, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cheap_beside_noisy_get_half),
		cmocka_unit_test(test_dear_pods_save_up),
		cmocka_unit_test(test_idle_keeps_no_credit),
		cmocka_unit_test(test_turn_bounds),
		cmocka_unit_test(test_switch_refill),
		cmocka_unit_test(test_error_passed_back),
		cmocka_unit_test(test_time_figure),
		cmocka_unit_test(test_rate_limited_figure),
		cmocka_unit_test(test_light_cuts_heavy_turn),
		cmocka_unit_test(test_saturated_passes),
		cmocka_unit_test(test_gamer_one_pod_at_a_time),
		cmocka_unit_test(test_gamer_light_heavy_by_turns),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
