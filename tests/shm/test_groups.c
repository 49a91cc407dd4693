/* unit.groups: the ledger's pods per group (T1-T4 in shm/ledger.c).
 * One thread: counts follow commits and releases, a free entry is reused,
 * a full table refuses a new group and takes nothing, pods with terms are
 * counted on the node and in the ledger, and a removed node's go with it.
 * Threads: four reserve and release pods of eight groups on one node at
 * once; the sums per group are exact after every run (no entry lost or
 * counted twice), whatever entries the racing claims ended in. And the
 * groups' encoding, read back and refused when damaged. The term groups
 * (T6): each listed once, the epoch moved by every pod with terms, the
 * watch after a lock-free commit stepped by hand, the list's overflow. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "shm/shm.h"

static struct pod_spec pod_in(uint32_t group, bool terms)
{
	struct pod_spec p;
	memset(&p, 0, sizeof(p));
	p.request.v[RES_CPU] = p.nonzero_cpu_milli = 1;
	p.group = group;
	p.group_terms = terms;
	return p;
}

/* Pods of `group` on the node, adding up every entry that holds it. */
static uint64_t pods_of(struct ledger *l, uint32_t slot, uint32_t group)
{
	struct group_count g[NODE_MAX_GROUPS];
	unsigned n = ledger_load_groups(ledger_node(l, slot), g);
	uint64_t sum = 0;
	for (unsigned i = 0; i < n; i++)
		if (g[i].group == group)
			sum += g[i].pods;
	return sum;
}

/* The encoding (shm/pod_group.c): one group written out as its comment
 * says, read back equal, and every damaged form refused. */
static void test_encoding(void **state)
{
	(void)state;
	struct pod_group g = {.ns = 5, .n_labels = 1, .n_terms = 1, .n_spread = 1,
			      .n_reqs = 1, .n_values = 1, .n_namespaces = 1};
	g.labels[0] = (struct label){7, 8};
	g.terms[0] = (struct group_term){.kind = TERM_REQUIRED_ANTI_AFFINITY,
					 .topology_key = 9,
					 .selector = {.present = true, .n_reqs = 1},
					 .n_ns = 1};
	g.spread[0] = (struct group_spread){.topology_key = 10, .max_skew = 1,
					    .min_domains = 1, .hard = true,
					    .node_taints_policy = SPREAD_POLICY_IGNORE,
					    .selector = {.present = true, .n_reqs = 1}};
	g.reqs[0] = (struct group_req){.key = 7, .op = SEL_IN, .n_values = 1};
	g.values[0] = 8;
	g.namespaces[0] = 5;
	char enc[GROUP_ENCODED_MAX + 1];
	int len = pod_group_encode(&g, enc, sizeof(enc));
	/* tests/fuzz/corpus/pod_group/full holds the same bytes. */
	assert_string_equal(enc, "G1 5 1 1 1 1 1 1 0 0 0 7 8 1 0 0 9 1 0 1 0 1 "
			    "10 1 1 1 0 1 1 0 1 7 1 0 1 8 5");
	struct pod_group back;
	assert_int_equal(pod_group_decode(enc, (size_t)len, &back), 0);
	assert_true(group_term_matches(&back, &back.terms[0], &back));
	assert_int_equal(back.spread[0].node_taints_policy, SPREAD_POLICY_IGNORE);
	/* Every prefix, a trailing byte, a leading zero, an index past its
	 * array, an unsorted label pair, a required term with a weight. */
	for (int cut = 0; cut < len; cut++)
		assert_int_equal(pod_group_decode(enc, (size_t)cut, &back), -EBADMSG);
	static const char *const bad[] = {
		"G1 5 1 1 1 1 1 1 0 0 0 7 8 1 0 0 9 1 0 1 0 1 10 1 1 1 0 1 1 0 1 7 1 0 1 8 5 ",
		"G1 05 0 0 0 0 0 0 0 0 0",
		"G1 5 0 0 0 0 0 0 1 0 1",
		"G1 5 2 0 0 0 0 0 0 0 0 9 1 7 1",
		"G1 5 0 1 0 0 0 0 0 0 0 1 0 5 9 0 0 0 0 0",
		"G2 0 0 0 0 0 0 0 0 0 0",
		"G1 -0 0 0 0 0 0 0 0 0 0",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(pod_group_decode(bad[i], strlen(bad[i]), &back),
				 -EBADMSG);
	/* A terminating pod's group: "G1T", read back terminating, matched by
	 * its own term (inter-pod affinity counts it) and by no spread
	 * selector (podtopologyspread's countPodsMatchSelector skips it). */
	assert_int_equal(pod_group_decode(enc, (size_t)len, &back), 0);
	assert_false(back.terminating);
	assert_true(group_spread_matches(&back, &back.spread[0].selector, &back));
	g.terminating = true;
	len = pod_group_encode(&g, enc, sizeof(enc));
	assert_string_equal(enc, "G1T 5 1 1 1 1 1 1 0 0 0 7 8 1 0 0 9 1 0 1 0 1 "
			    "10 1 1 1 0 1 1 0 1 7 1 0 1 8 5");
	assert_int_equal(pod_group_decode(enc, (size_t)len, &back), 0);
	assert_true(back.terminating);
	assert_true(group_term_matches(&back, &back.terms[0], &back));
	assert_false(group_spread_matches(&back, &back.spread[0].selector, &back));
	assert_int_equal(pod_group_decode("G1TT 0 0 0 0 0 0 0 0 0 0",
					  strlen("G1TT 0 0 0 0 0 0 0 0 0 0"), &back),
			 -EBADMSG);
	assert_int_equal(pod_group_decode("G1T", 3, &back), -EBADMSG);
	g.terminating = false;
	/* A group breaking a rule is not encoded. */
	g.terms[0].weight = 3;
	assert_int_equal(pod_group_encode(&g, enc, sizeof(enc)), -EINVAL);
	g.terms[0].weight = 0;
	assert_int_equal(pod_group_encode(&g, enc, 10), -E2BIG);
}

static const struct res_vec roomy = {.v = {[RES_CPU] = 1 << 30, [RES_PODS] = 1 << 30}};

static void test_counts_follow_commits(void **state)
{
	(void)state;
	struct ledger *l = ledger_create(4);
	assert_non_null(l);
	struct pod_spec a = pod_in(11, false), b = pod_in(12, true), none = pod_in(0, false);
	assert_int_equal(ledger_reserve(l, 1, &roomy, &a, NULL, NULL, NULL), 0);
	assert_int_equal(ledger_reserve(l, 1, &roomy, &a, NULL, NULL, NULL), 0);
	assert_int_equal(ledger_account(l, 1, &b, NULL, +1), 0);
	assert_int_equal(ledger_reserve(l, 1, &roomy, &none, NULL, NULL, NULL), 0);
	assert_int_equal(pods_of(l, 1, 11), 2);
	assert_int_equal(pods_of(l, 1, 12), 1);
	assert_int_equal(pods_of(l, 2, 11), 0);
	/* A pod of no group takes no entry; one with terms counts in T4. */
	struct group_count g[NODE_MAX_GROUPS];
	assert_int_equal(ledger_load_groups(ledger_node(l, 1), g), 2);
	assert_int_equal(ledger_term_pods(l), 1);
	assert_int_equal(ledger_node(l, 1)->term_pods, 1);

	/* Releases: group 11 empties, and its entry serves group 13 next. */
	ledger_account(l, 1, &a, NULL, -1);
	ledger_account(l, 1, &a, NULL, -1);
	ledger_account(l, 1, &b, NULL, -1);
	assert_int_equal(pods_of(l, 1, 11), 0);
	assert_int_equal(ledger_term_pods(l), 0);
	struct pod_spec c = pod_in(13, false);
	assert_int_equal(ledger_reserve(l, 1, &roomy, &c, NULL, NULL, NULL), 0);
	assert_int_equal(pods_of(l, 1, 13), 1);
	assert_int_equal(ledger_node(l, 1)->n_groups, 2);

	/* A removed node's pods with terms leave the ledger's count. */
	assert_int_equal(ledger_account(l, 2, &b, NULL, +1), 0);
	assert_int_equal(ledger_term_pods(l), 1);
	ledger_reset_node(l, 2);
	assert_int_equal(ledger_term_pods(l), 0);
	assert_int_equal(pods_of(l, 2, 12), 0);
	ledger_destroy(l);
}

static void test_full_table_refuses_and_takes_nothing(void **state)
{
	(void)state;
	struct ledger *l = ledger_create(2);
	assert_non_null(l);
	for (uint32_t g = 1; g <= NODE_MAX_GROUPS; g++) {
		struct pod_spec p = pod_in(g, false);
		assert_int_equal(ledger_reserve(l, 0, &roomy, &p, NULL, NULL, NULL), 0);
	}
	struct res_vec used_before;
	int64_t nz_cpu, nz_mem;
	ledger_load_used(ledger_node(l, 0), &used_before, &nz_cpu, &nz_mem);
	struct pod_spec extra = pod_in(NODE_MAX_GROUPS + 1, true);
	assert_int_equal(ledger_reserve(l, 0, &roomy, &extra, NULL, NULL, NULL), -ENOSPC);
	assert_int_equal(ledger_account(l, 0, &extra, NULL, +1), -ENOSPC);
	struct res_vec used_after;
	ledger_load_used(ledger_node(l, 0), &used_after, &nz_cpu, &nz_mem);
	assert_memory_equal(&used_before, &used_after, sizeof(used_after));
	assert_int_equal(ledger_term_pods(l), 0);
	/* A group already there still fits. */
	struct pod_spec again = pod_in(7, false);
	assert_int_equal(ledger_reserve(l, 0, &roomy, &again, NULL, NULL, NULL), 0);
	assert_int_equal(pods_of(l, 0, 7), 2);
	ledger_destroy(l);
}

#define THREADS 4
#define ROUNDS 20000
#define GROUPS 8

struct racer {
	struct ledger *l;
	unsigned id;
	uint64_t placed[GROUPS + 1]; /* pods left placed, by group */
};

static void *race(void *arg)
{
	struct racer *r = arg;
	uint64_t x = 0x9e3779b97f4a7c15u * (r->id + 1);
	for (unsigned i = 0; i < ROUNDS; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		uint32_t g = 1 + (uint32_t)(x % GROUPS);
		struct pod_spec p = pod_in(g, g == 1);
		if ((x >> 32) % 3 != 0 || r->placed[g] == 0) {
			if (ledger_reserve(r->l, 0, &roomy, &p, NULL, NULL, NULL) == 0)
				r->placed[g]++;
		} else {
			ledger_account(r->l, 0, &p, NULL, -1);
			r->placed[g]--;
		}
	}
	return NULL;
}

static void test_racing_claims_keep_exact_sums(void **state)
{
	(void)state;
	for (int run = 0; run < 5; run++) {
		struct ledger *l = ledger_create(1);
		assert_non_null(l);
		pthread_t t[THREADS];
		struct racer r[THREADS];
		for (unsigned i = 0; i < THREADS; i++) {
			r[i] = (struct racer){.l = l, .id = i + 10 * (unsigned)run};
			assert_int_equal(pthread_create(&t[i], NULL, race, &r[i]), 0);
		}
		for (unsigned i = 0; i < THREADS; i++)
			pthread_join(t[i], NULL);
		uint64_t violations = 0, total = 0;
		for (uint32_t g = 1; g <= GROUPS; g++) {
			uint64_t want = 0;
			for (unsigned i = 0; i < THREADS; i++)
				want += r[i].placed[g];
			violations += pods_of(l, 0, g) != want;
			total += want;
		}
		assert_int_equal(violations, 0);
		uint64_t with_terms = 0;
		for (unsigned i = 0; i < THREADS; i++)
			with_terms += r[i].placed[1];
		assert_int_equal(ledger_term_pods(l), with_terms);
		assert_int_equal(ledger_node(l, 0)->used[RES_PODS], (int64_t)total);
		ledger_destroy(l);
	}
}

/* T6, stepped by hand: a worker reads the epoch, decides its pod is
 * under no rule, commits without the lock; a pod with terms placed in
 * between (announced, committed, withdrawn) must make the watch say
 * "check again"; with none, the watch stays quiet. */
static void test_term_groups_and_epoch(void **state)
{
	(void)state;
	struct ledger *l = ledger_create(4);
	assert_non_null(l);
	struct pod_spec plain = pod_in(21, false), anti = pod_in(22, true),
			other = pod_in(23, true);
	assert_int_equal(ledger_term_groups(l), 0);
	uint64_t epoch = ledger_term_epoch(l);
	assert_int_equal(ledger_reserve(l, 0, &roomy, &plain, NULL, NULL, NULL), 0);
	assert_false(ledger_interpod_watch(l, epoch)); /* nothing happened */

	/* A pod with terms between the worker's read and its watch. */
	epoch = ledger_term_epoch(l);
	ledger_interpod_announce(l, +1);
	assert_true(ledger_interpod_watch(l, epoch)); /* announced */
	assert_int_equal(ledger_reserve(l, 1, &roomy, &anti, NULL, NULL, NULL), 0);
	ledger_interpod_announce(l, -1);
	assert_true(ledger_interpod_watch(l, epoch)); /* withdrawn, epoch moved */
	assert_int_equal(ledger_term_groups(l), 1);
	assert_int_equal(ledger_term_group_at(l, 0), 22);

	/* The same group again, bound or placed, is listed once; releases
	 * leave the list as it is; a second group is appended. */
	uint64_t before = ledger_term_epoch(l);
	assert_int_equal(ledger_account(l, 2, &anti, NULL, +1), 0);
	assert_int_equal(ledger_term_epoch(l), before + 1);
	ledger_account(l, 2, &anti, NULL, -1);
	ledger_account(l, 1, &anti, NULL, -1);
	assert_int_equal(ledger_term_epoch(l), before + 1);
	assert_int_equal(ledger_term_groups(l), 1);
	assert_int_equal(ledger_reserve(l, 3, &roomy, &other, NULL, NULL, NULL), 0);
	assert_int_equal(ledger_term_groups(l), 2);
	assert_int_equal(ledger_term_group_at(l, 1), 23);
	assert_int_equal(ledger_term_group_at(l, 2), 0); /* not there */
	ledger_destroy(l);
}

/* More term groups than the list holds: the list says so (UINT32_MAX),
 * so readers assume every group may be touched. */
static void test_term_groups_overflow(void **state)
{
	(void)state;
	struct ledger *l = ledger_create(LEDGER_TERM_GROUPS / NODE_MAX_GROUPS + 2);
	assert_non_null(l);
	uint32_t g = 1;
	for (uint32_t slot = 0; g <= LEDGER_TERM_GROUPS + 1; slot++)
		for (unsigned k = 0; k < NODE_MAX_GROUPS && g <= LEDGER_TERM_GROUPS + 1;
		     k++, g++) {
			struct pod_spec p = pod_in(g, true);
			assert_int_equal(ledger_account(l, slot, &p, NULL, +1), 0);
			assert_int_equal(ledger_term_groups(l),
					 g <= LEDGER_TERM_GROUPS ? g : UINT32_MAX);
		}
	ledger_destroy(l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_encoding),
		cmocka_unit_test(test_counts_follow_commits),
		cmocka_unit_test(test_full_table_refuses_and_takes_nothing),
		cmocka_unit_test(test_racing_claims_keep_exact_sums),
		cmocka_unit_test(test_term_groups_and_epoch),
		cmocka_unit_test(test_term_groups_overflow),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
