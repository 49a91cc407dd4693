/* unit.diagnosis: reasons counted over nodes and kube-scheduler's FitError
 * message (pkg/scheduler/framework/types.go FitError.Error): counts,
 * byte-wise ordering as sort.Strings, distinct taints, cut output. */
#include "fixture.h"

#include "workers/diagnosis_internal.h"
#include "workers/workers.h"

static const struct reason r_unsched = {.code = REASON_UNSCHEDULABLE};
static const struct reason r_cpu = {.code = REASON_INSUFFICIENT, .resource = RES_CPU};
static const struct reason r_mem = {.code = REASON_INSUFFICIENT, .resource = RES_MEMORY};

static void add_n(struct diagnosis *d, const struct reason *r, unsigned n)
{
	while (n--)
		diagnosis_add(d, r);
}

static void expect(struct fx *f, const struct diagnosis *d, uint32_t nodes,
		   const char *want)
{
	char buf[4096];
	int len = diagnosis_format(d, &f->ctx, nodes, buf, sizeof(buf));
	assert_string_equal(buf, want);
	assert_int_equal(len, (int)strlen(want));
}

static void test_brief_example(void **state)
{
	struct fx *f = *state;
	struct diagnosis d;

	/* Two nodes short of cpu, one unschedulable. sort.Strings puts
	 * "1 node(s)..." before "2 Insufficient cpu" ('1' < '2'), so Go prints
	 * the unschedulable entry first, as in the familiar "0/3 nodes are
	 * available: 1 node(s) had untolerated taint {...}, 2 Insufficient
	 * cpu." */
	diagnosis_reset(&d);
	add_n(&d, &r_cpu, 2);
	diagnosis_add(&d, &r_unsched);
	expect(f, &d, 3, "0/3 nodes are available: 1 node(s) were unschedulable, "
			 "2 Insufficient cpu.");
}

static void test_sort_is_bytewise(void **state)
{
	struct fx *f = *state;
	struct diagnosis d;

	/* from types.go FitError.Error: sort.Strings over "<count> <reason>",
	 * so "10 ..." sorts before "2 ..." ('1' < '2'). */
	diagnosis_reset(&d);
	add_n(&d, &r_cpu, 10);
	add_n(&d, &r_mem, 2);
	expect(f, &d, 12, "0/12 nodes are available: 10 Insufficient cpu, "
			  "2 Insufficient memory.");

	/* Equal counts: the reason text decides ('I' < 'T' < 'n'). */
	diagnosis_reset(&d);
	add_n(&d, &r_unsched, 3);
	add_n(&d, &r_mem, 3);
	add_n(&d, &(struct reason){.code = REASON_TOO_MANY_PODS}, 3);
	add_n(&d, &r_cpu, 3);
	expect(f, &d, 9, "0/9 nodes are available: 3 Insufficient cpu, "
			 "3 Insufficient memory, 3 Too many pods, "
			 "3 node(s) were unschedulable.");
}

static void test_multiple_reasons_per_node(void **state)
{
	struct fx *f = *state;
	struct diagnosis d;
	struct node_spec n;
	struct pod_spec p;
	struct reason r[FILTER_MAX_REASONS];

	/* A node short of cpu and memory counts once under each; with the
	 * unschedulable third node the counts exceed the node count, as in
	 * Kubernetes (fit.go returns every shortfall as a reason). */
	diagnosis_reset(&d);
	node_init(f, &n, "n");
	n.allocatable.v[RES_CPU] = 1000;
	n.allocatable.v[RES_MEMORY] = 1000;
	struct res_vec used = {{0}};
	struct node_view v = {.spec = &n, .used = &used};
	pod_init(&p);
	pod_request(&p, 2000, 2000);
	for (int i = 0; i < 2; i++) {
		unsigned k = filter_node(&f->ctx, &p, &v, r);
		assert_int_equal(k, 2);
		for (unsigned j = 0; j < k; j++)
			diagnosis_add(&d, &r[j]);
	}
	n.unschedulable = true;
	unsigned k = filter_node(&f->ctx, &p, &v, r);
	assert_int_equal(k, 1);
	diagnosis_add(&d, &r[0]);
	expect(f, &d, 3, "0/3 nodes are available: 1 node(s) were unschedulable, "
			 "2 Insufficient cpu, 2 Insufficient memory.");
}

static void test_taints_distinct(void **state)
{
	struct fx *f = *state;
	struct diagnosis d;
	struct reason cp = {.code = REASON_TAINT,
			    .key = sid(f, "node-role.kubernetes.io/control-plane")};
	struct reason a1 = {.code = REASON_TAINT, .key = sid(f, "dedicated"),
			    .value = sid(f, "user1")};
	struct reason a2 = {.code = REASON_TAINT, .key = sid(f, "dedicated"),
			    .value = sid(f, "user2")};

	/* The message users see on a kubeadm cluster: the control-plane taint
	 * has an empty value, printed as "{key: }". */
	diagnosis_reset(&d);
	diagnosis_add(&d, &cp);
	add_n(&d, &r_cpu, 2);
	expect(f, &d, 3, "0/3 nodes are available: 1 node(s) had untolerated taint "
			 "{node-role.kubernetes.io/control-plane: }, 2 Insufficient cpu.");

	/* Same key, different values: two reasons; same pair: one. */
	diagnosis_reset(&d);
	add_n(&d, &a2, 2);
	add_n(&d, &a1, 2);
	add_n(&d, &a2, 1);
	expect(f, &d, 5, "0/5 nodes are available: "
			 "2 node(s) had untolerated taint {dedicated: user1}, "
			 "3 node(s) had untolerated taint {dedicated: user2}.");
}

static void test_every_reason_matches_reason_format(void **state)
{
	struct fx *f = *state;
	struct reason all[] = {
		{.code = REASON_UNSCHEDULABLE},
		{.code = REASON_NODE_NAME},
		{.code = REASON_TAINT, .key = sid(f, "k"), .value = sid(f, "v")},
		{.code = REASON_AFFINITY},
		{.code = REASON_PORTS},
		{.code = REASON_TOO_MANY_PODS},
		{.code = REASON_INSUFFICIENT, .resource = RES_EPHEMERAL},
		{.code = REASON_INSUFFICIENT, .resource = (uint8_t)f->res_gpu},
	};

	/* diagnosis.c keeps its own copy of the words; they must agree. */
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		struct diagnosis d;
		char text[256], want[300];
		diagnosis_reset(&d);
		diagnosis_add(&d, &all[i]);
		reason_format(&f->ctx, &all[i], text, sizeof(text));
		snprintf(want, sizeof(want), "0/1 nodes are available: 1 %s.", text);
		expect(f, &d, 1, want);
	}
}

static void test_empty_and_ignored(void **state)
{
	struct fx *f = *state;
	struct diagnosis d;

	/* No reason at all: Go appends nothing after the colon. */
	diagnosis_reset(&d);
	expect(f, &d, 0, "0/0 nodes are available:");
	/* Unknown codes and resources are ignored. */
	diagnosis_add(&d, &(struct reason){.code = 0});
	diagnosis_add(&d, &(struct reason){.code = 200});
	diagnosis_add(&d, &(struct reason){.code = REASON_INSUFFICIENT, .resource = RES_MAX});
	expect(f, &d, 4000000000u, "0/4000000000 nodes are available:");
}

static void test_cut_output(void **state)
{
	struct fx *f = *state;
	struct diagnosis d;
	const char *full = "0/3 nodes are available: 3 Insufficient cpu.";
	char buf[64];

	diagnosis_reset(&d);
	add_n(&d, &r_cpu, 3);
	/* snprintf's contract at every size: full length back, prefix kept,
	 * always terminated. */
	for (size_t len = 0; len <= strlen(full) + 1; len++) {
		memset(buf, 'x', sizeof(buf));
		int got = diagnosis_format(&d, &f->ctx, 3, len ? buf : NULL, len);
		assert_int_equal(got, (int)strlen(full));
		if (len == 0)
			continue;
		assert_int_equal(strlen(buf), len - 1 < strlen(full) ? len - 1 : strlen(full));
		assert_memory_equal(buf, full, strlen(buf));
		assert_int_equal(buf[len], 'x'); /* nothing past len */
	}
}

static void test_many_taints(void **state)
{
	struct fx *f = *state;
	static struct diagnosis d; /* static: keep the test's stack small */
	static char buf[1 << 16];
	char key[32];

	/* Past DIAGNOSIS_MAX_TAINTS distinct taints, the rest are counted
	 * under Kubernetes' newer generic wording; the total stays exact. */
	diagnosis_reset(&d);
	for (unsigned i = 0; i < DIAGNOSIS_MAX_TAINTS + 10; i++) {
		snprintf(key, sizeof(key), "t%04u", i);
		struct reason r = {.code = REASON_TAINT, .key = sid(f, key)};
		diagnosis_add(&d, &r);
		diagnosis_add(&d, &r); /* a second node with the same taint */
	}
	int len = diagnosis_format(&d, &f->ctx, 2 * (DIAGNOSIS_MAX_TAINTS + 10), buf,
				   sizeof(buf));
	assert_true(len > 0 && (size_t)len < sizeof(buf));
	assert_non_null(strstr(buf, "2 node(s) had untolerated taint {t0000: }, "
				    "2 node(s) had untolerated taint {t0001: }, "));
	assert_non_null(strstr(buf, "2 node(s) had untolerated taint {t0255: }, "
				    "20 node(s) had untolerated taint(s)."));
	assert_null(strstr(buf, "t0256"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_brief_example),
		cmocka_unit_test(test_sort_is_bytewise),
		cmocka_unit_test(test_multiple_reasons_per_node),
		cmocka_unit_test(test_taints_distinct),
		cmocka_unit_test(test_every_reason_matches_reason_format),
		cmocka_unit_test(test_empty_and_ignored),
		cmocka_unit_test(test_cut_output),
		cmocka_unit_test(test_many_taints),
	};
	return cmocka_run_group_tests(tests, fx_setup, fx_teardown);
}
