/* unit.plugins: each filter and score against the cases of Kubernetes' own
 * unit tests (pkg/scheduler/framework/plugins/...), rebuilt by hand with
 * the model's structs. Every case names the Go test file and case it
 * comes from; cases marked "from <file>.go semantics" check a rule of the
 * Go code that its tests do not spell out. */
#include "fixture.h"

/* ------------------------------------------------------------------ */
/* NodeUnschedulable                                                    */

static void test_unschedulable(void **state)
{
	struct fx *f = *state;
	struct node_spec n;
	struct pod_spec p;

	/* from nodeunschedulable/node_unschedulable_test.go: "Does not
	 * schedule pod to unschedulable node (node.spec.unschedulable==true)" */
	node_init(f, &n, "node1");
	n.unschedulable = true;
	pod_init(&p);
	assert_false(filter_unschedulable(&f->ctx, &p, &n));

	/* same file: "Schedule pod to normal node" */
	n.unschedulable = false;
	assert_true(filter_unschedulable(&f->ctx, &p, &n));

	/* same file: "Schedule pod with toleration to unschedulable node
	 * (node.spec.unschedulable==true)": key
	 * node.kubernetes.io/unschedulable, effect NoSchedule, no operator. */
	n.unschedulable = true;
	pod_tol(f, &p, "node.kubernetes.io/unschedulable", TOL_EQUAL, "",
		TAINT_NO_SCHEDULE);
	assert_true(filter_unschedulable(&f->ctx, &p, &n));

	/* from toleration.go semantics: an empty key with Exists tolerates
	 * every taint, the unschedulable one included... */
	pod_init(&p);
	pod_tol(f, &p, "", TOL_EXISTS, "", TAINT_EFFECT_ALL);
	assert_true(filter_unschedulable(&f->ctx, &p, &n));
	/* ...but not with a different effect. */
	pod_init(&p);
	pod_tol(f, &p, "", TOL_EXISTS, "", TAINT_NO_EXECUTE);
	assert_false(filter_unschedulable(&f->ctx, &p, &n));
}

/* ------------------------------------------------------------------ */
/* NodeName                                                             */

static void test_node_name(void **state)
{
	struct fx *f = *state;
	struct node_spec n;
	struct pod_spec p;

	node_init(f, &n, "foo");
	pod_init(&p);
	/* from nodename/node_name_test.go: "no host specified" */
	assert_true(filter_node_name(&p, &n));
	/* same file: "host matches" */
	p.node_name = sid(f, "foo");
	assert_true(filter_node_name(&p, &n));
	/* same file: "host doesn't match" */
	p.node_name = sid(f, "bar");
	assert_false(filter_node_name(&p, &n));
}

/* ------------------------------------------------------------------ */
/* Tolerations and TaintToleration                                      */

static bool tol(struct fx *f, const char *tk, uint8_t op, const char *tv, uint8_t te,
		const char *k, const char *v, uint8_t e)
{
	struct toleration t = {sid(f, tk), sid(f, tv), op, te};
	struct taint taint = {sid(f, k), sid(f, v), e};
	return toleration_tolerates(&t, &taint);
}

static void test_toleration_tolerates(void **state)
{
	struct fx *f = *state;

	/* from staging/src/k8s.io/api/core/v1/toleration_test.go
	 * TestTolerationToleratesTaint: */
	/* "toleration and taint have the same key and effect, and operator
	 * is Exists, and taint has no value, expect tolerated" */
	assert_true(tol(f, "foo", TOL_EXISTS, "", TAINT_NO_SCHEDULE,
			"foo", "", TAINT_NO_SCHEDULE));
	/* "... operator is Exists, and taint has some value, expect tolerated" */
	assert_true(tol(f, "foo", TOL_EXISTS, "", TAINT_NO_SCHEDULE,
			"foo", "bar", TAINT_NO_SCHEDULE));
	/* "toleration and taint have the same effect, toleration has empty
	 * key and operator is Exists, means match all taints, expect tolerated" */
	assert_true(tol(f, "", TOL_EXISTS, "", TAINT_NO_SCHEDULE,
			"foo", "bar", TAINT_NO_SCHEDULE));
	/* "toleration and taint have the same key, effect and value, and
	 * operator is Equal, expect tolerated" */
	assert_true(tol(f, "foo", TOL_EQUAL, "bar", TAINT_NO_SCHEDULE,
			"foo", "bar", TAINT_NO_SCHEDULE));
	/* "toleration and taint have the same key and effect, but different
	 * values, and operator is Equal, expect not tolerated" */
	assert_false(tol(f, "foo", TOL_EQUAL, "value1", TAINT_NO_SCHEDULE,
			 "foo", "value2", TAINT_NO_SCHEDULE));
	/* "toleration and taint have the same key and value, but different
	 * effects, and operator is Equal, expect not tolerated" */
	assert_false(tol(f, "foo", TOL_EQUAL, "bar", TAINT_NO_SCHEDULE,
			 "foo", "bar", TAINT_NO_EXECUTE));
	/* from toleration.go semantics: an empty effect matches every effect;
	 * a different key never matches. */
	assert_true(tol(f, "foo", TOL_EQUAL, "bar", TAINT_EFFECT_ALL,
			"foo", "bar", TAINT_NO_EXECUTE));
	assert_false(tol(f, "foo", TOL_EXISTS, "", TAINT_EFFECT_ALL,
			 "other", "bar", TAINT_NO_SCHEDULE));
	/* An empty key with Equal (refused by API validation) matches any key
	 * with the same value, as ToleratesTaint reads it. */
	assert_true(tol(f, "", TOL_EQUAL, "bar", TAINT_EFFECT_ALL,
			"anything", "bar", TAINT_NO_SCHEDULE));
}

static void test_filter_taints(void **state)
{
	struct fx *f = *state;
	struct node_spec n;
	struct pod_spec p;

	/* from tainttoleration/taint_toleration_test.go TestTaintTolerationFilter: */
	/* "A pod having no tolerations can't be scheduled onto a node with
	 * nonempty taints" */
	node_init(f, &n, "nodeA");
	node_taint(f, &n, "dedicated", "user1", TAINT_NO_SCHEDULE);
	pod_init(&p);
	assert_int_equal(filter_taints(&p, &n), 0);

	/* "A pod which can be scheduled on a dedicated node assigned to user1
	 * with effect NoSchedule" */
	pod_tol(f, &p, "dedicated", TOL_EQUAL, "user1", TAINT_NO_SCHEDULE);
	assert_int_equal(filter_taints(&p, &n), -1);

	/* "A pod which can't be scheduled on a dedicated node assigned to
	 * user2 with effect NoSchedule" */
	pod_init(&p);
	pod_tol(f, &p, "dedicated", TOL_EQUAL, "user2", TAINT_NO_SCHEDULE);
	assert_int_equal(filter_taints(&p, &n), 0);

	/* "A pod can be scheduled onto the node, with a toleration uses
	 * operator Exists that tolerates the taints on the node" */
	node_init(f, &n, "nodeA");
	node_taint(f, &n, "foo", "bar", TAINT_NO_SCHEDULE);
	pod_init(&p);
	pod_tol(f, &p, "foo", TOL_EXISTS, "", TAINT_NO_SCHEDULE);
	assert_int_equal(filter_taints(&p, &n), -1);

	/* "A pod has multiple tolerations, node has multiple taints, all the
	 * taints are tolerated, pod can be scheduled onto the node" */
	node_init(f, &n, "nodeA");
	node_taint(f, &n, "dedicated", "user2", TAINT_NO_SCHEDULE);
	node_taint(f, &n, "foo", "bar", TAINT_NO_SCHEDULE);
	pod_init(&p);
	pod_tol(f, &p, "dedicated", TOL_EQUAL, "user2", TAINT_NO_SCHEDULE);
	pod_tol(f, &p, "foo", TOL_EXISTS, "", TAINT_NO_SCHEDULE);
	assert_int_equal(filter_taints(&p, &n), -1);

	/* "A pod has a toleration that keys and values match the taint on the
	 * node, but (non-empty) effect doesn't match, can't be scheduled" */
	node_init(f, &n, "nodeA");
	node_taint(f, &n, "foo", "bar", TAINT_NO_SCHEDULE);
	pod_init(&p);
	pod_tol(f, &p, "foo", TOL_EQUAL, "bar", TAINT_PREFER_NO_SCHEDULE);
	assert_int_equal(filter_taints(&p, &n), 0);

	/* "The pod has a toleration that keys and values match the taint on
	 * the node, the effect of toleration is empty, and the effect of taint
	 * is NoSchedule. Pod can be scheduled onto the node" */
	pod_init(&p);
	pod_tol(f, &p, "foo", TOL_EQUAL, "bar", TAINT_EFFECT_ALL);
	assert_int_equal(filter_taints(&p, &n), -1);

	/* "The pod has a toleration that key and value don't match the taint
	 * on the node, but the effect of taint on node is PreferNoSchedule" */
	node_init(f, &n, "nodeA");
	node_taint(f, &n, "dedicated", "user1", TAINT_PREFER_NO_SCHEDULE);
	pod_init(&p);
	pod_tol(f, &p, "dedicated", TOL_EQUAL, "user2", TAINT_NO_SCHEDULE);
	assert_int_equal(filter_taints(&p, &n), -1);

	/* "The pod has no toleration, but the effect of taint on node is
	 * PreferNoSchedule. Pod can be scheduled onto the node" */
	pod_init(&p);
	assert_int_equal(filter_taints(&p, &n), -1);

	/* from taint_toleration.go semantics: NoExecute filters too, and the
	 * index is that of the first untolerated one in node order. */
	node_init(f, &n, "nodeA");
	node_taint(f, &n, "soft", "x", TAINT_PREFER_NO_SCHEDULE);
	node_taint(f, &n, "tolerated", "x", TAINT_NO_SCHEDULE);
	node_taint(f, &n, "gone", "x", TAINT_NO_EXECUTE);
	node_taint(f, &n, "later", "x", TAINT_NO_SCHEDULE);
	pod_init(&p);
	pod_tol(f, &p, "tolerated", TOL_EXISTS, "", TAINT_EFFECT_ALL);
	assert_int_equal(filter_taints(&p, &n), 2);
	/* An empty-key Exists toleration with an effect covers that effect only. */
	pod_tol(f, &p, "", TOL_EXISTS, "", TAINT_NO_EXECUTE);
	assert_int_equal(filter_taints(&p, &n), 3);
	pod_tol(f, &p, "", TOL_EXISTS, "", TAINT_EFFECT_ALL);
	assert_int_equal(filter_taints(&p, &n), -1);

	/* Keys whose ids share the low 6 bits (plugins.c summarises keys in
	 * 64 bits) still need the exact key: 64 ids apart. */
	uint32_t k1 = sid(f, "collide-a"), k2;
	char name[32];
	for (unsigned i = 0;; i++) {
		snprintf(name, sizeof(name), "collide-filler-%u", i);
		k2 = sid(f, name);
		if (k2 % 64 == k1 % 64)
			break;
	}
	node_init(f, &n, "nodeA");
	n.taints[n.n_taints++] = (struct taint){k2, 0, TAINT_NO_SCHEDULE};
	pod_init(&p);
	p.tolerations[p.n_tolerations++] = (struct toleration){
		.key = k1, .op = TOL_EXISTS, .effect = TAINT_EFFECT_ALL};
	assert_int_equal(filter_taints(&p, &n), 0);
	p.tolerations[0].key = k2;
	assert_int_equal(filter_taints(&p, &n), -1);
}

/* Raw taint scores for the nodes, normalised reversed, as the plugin's
 * Score + NormalizeScore do. */
static void taint_scores(const struct pod_spec *p, const struct node_spec *nodes,
			 size_t n, int64_t *out)
{
	for (size_t i = 0; i < n; i++)
		out[i] = score_taint_raw(p, &nodes[i]);
	score_normalize(out, n, true);
}

static void test_score_taints(void **state)
{
	struct fx *f = *state;
	struct node_spec n[3];
	struct pod_spec p;
	int64_t s[3];

	/* from tainttoleration/taint_toleration_test.go TestTaintTolerationScore: */
	/* "node with taints tolerated by the pod, gets a higher score than
	 * those node with intolerable taints" */
	pod_init(&p);
	pod_tol(f, &p, "foo", TOL_EQUAL, "bar", TAINT_PREFER_NO_SCHEDULE);
	node_init(f, &n[0], "nodeA");
	node_taint(f, &n[0], "foo", "bar", TAINT_PREFER_NO_SCHEDULE);
	node_init(f, &n[1], "nodeB");
	node_taint(f, &n[1], "foo", "blah", TAINT_PREFER_NO_SCHEDULE);
	taint_scores(&p, n, 2, s);
	assert_int_equal(s[0], 100);
	assert_int_equal(s[1], 0);

	/* "the nodes that all of their taints are tolerated by the pod, get
	 * the same score, no matter how many tolerable taints a node has" */
	pod_init(&p);
	pod_tol(f, &p, "cpu-type", TOL_EQUAL, "arm64", TAINT_PREFER_NO_SCHEDULE);
	pod_tol(f, &p, "disk-type", TOL_EQUAL, "ssd", TAINT_PREFER_NO_SCHEDULE);
	node_init(f, &n[0], "nodeA");
	node_init(f, &n[1], "nodeB");
	node_taint(f, &n[1], "cpu-type", "arm64", TAINT_PREFER_NO_SCHEDULE);
	node_init(f, &n[2], "nodeC");
	node_taint(f, &n[2], "cpu-type", "arm64", TAINT_PREFER_NO_SCHEDULE);
	node_taint(f, &n[2], "disk-type", "ssd", TAINT_PREFER_NO_SCHEDULE);
	taint_scores(&p, n, 3, s);
	assert_int_equal(s[0], 100);
	assert_int_equal(s[1], 100);
	assert_int_equal(s[2], 100);

	/* "the more intolerable taints a node has, the lower score it gets." */
	pod_init(&p);
	pod_tol(f, &p, "foo", TOL_EQUAL, "bar", TAINT_PREFER_NO_SCHEDULE);
	taint_scores(&p, n, 3, s);
	assert_int_equal(s[0], 100);
	assert_int_equal(s[1], 50);
	assert_int_equal(s[2], 0);

	/* "only taints and tolerations that have effect PreferNoSchedule are
	 * checked by taints-tolerations priority function" */
	pod_init(&p);
	pod_tol(f, &p, "cpu-type", TOL_EQUAL, "arm64", TAINT_NO_SCHEDULE);
	pod_tol(f, &p, "disk-type", TOL_EQUAL, "ssd", TAINT_NO_SCHEDULE);
	node_init(f, &n[1], "nodeB");
	node_taint(f, &n[1], "cpu-type", "arm64", TAINT_NO_SCHEDULE);
	taint_scores(&p, n, 3, s);
	assert_int_equal(s[0], 100);
	assert_int_equal(s[1], 100);
	assert_int_equal(s[2], 0);

	/* "Default behaviour No taints and tolerations, lands on node with no
	 * taints" */
	pod_init(&p);
	node_init(f, &n[1], "nodeB");
	node_taint(f, &n[1], "cpu-type", "arm64", TAINT_PREFER_NO_SCHEDULE);
	taint_scores(&p, n, 2, s);
	assert_int_equal(s[0], 100);
	assert_int_equal(s[1], 0);

	/* from taint_toleration.go semantics: an empty-effect toleration counts
	 * for PreferNoSchedule taints. */
	pod_tol(f, &p, "cpu-type", TOL_EXISTS, "", TAINT_EFFECT_ALL);
	assert_int_equal(score_taint_raw(&p, &n[1]), 0);
}

/* ------------------------------------------------------------------ */
/* NodeAffinity                                                         */

static void test_affinity_node_selector(void **state)
{
	struct fx *f = *state;
	struct node_spec n;
	struct pod_spec p;

	/* from nodeaffinity/node_affinity_test.go TestNodeAffinity: */
	/* "missing labels" */
	node_init(f, &n, "node1");
	pod_init(&p);
	pod_selector(f, &p, "foo", "bar");
	assert_false(filter_affinity(&f->ctx, &p, &n));
	/* "same labels" */
	node_label(f, &n, "foo", "bar");
	assert_true(filter_affinity(&f->ctx, &p, &n));
	/* "node labels are superset" */
	node_label(f, &n, "baz", "blah");
	assert_true(filter_affinity(&f->ctx, &p, &n));
	/* "node labels are subset" */
	node_init(f, &n, "node1");
	node_label(f, &n, "foo", "bar");
	pod_selector(f, &p, "baz", "blah");
	assert_false(filter_affinity(&f->ctx, &p, &n));
	/* "Pod with an Affinity matches node's labels but the
	 * PodSpec.NodeSelector(the old thing that we are deprecating) is not
	 * satisfied, won't schedule onto the node" */
	node_init(f, &n, "node1");
	node_label(f, &n, "foo", "barrrrrr");
	pod_init(&p);
	pod_selector(f, &p, "foo", "bar");
	struct sel_term *t = pod_term(&p);
	pod_expr(f, &p, t, "foo", SEL_EXISTS, NULL);
	assert_false(filter_affinity(&f->ctx, &p, &n));
	/* "Pod with an Affinity and a PodSpec.NodeSelector(the old thing that
	 * we are deprecating) both are satisfied, will schedule onto the node" */
	node_init(f, &n, "node1");
	node_label(f, &n, "foo", "bar");
	assert_true(filter_affinity(&f->ctx, &p, &n));
	/* "Pod with no Affinity will schedule onto a node" */
	pod_init(&p);
	assert_true(filter_affinity(&f->ctx, &p, &n));
}

/* One required term with one expression against labels {key: value}. */
static bool one_expr(struct fx *f, const char *label_key, const char *label_value,
		     const char *key, uint8_t op, const char *v1, const char *v2)
{
	struct node_spec n;
	struct pod_spec p;

	node_init(f, &n, "node1");
	if (label_key)
		node_label(f, &n, label_key, label_value);
	node_label(f, &n, "zzz-unrelated", "x");
	pod_init(&p);
	struct sel_term *t = pod_term(&p);
	pod_expr(f, &p, t, key, op, v1, v2, NULL);
	return filter_affinity(&f->ctx, &p, &n);
}

static void test_affinity_operators(void **state)
{
	struct fx *f = *state;

	/* from nodeaffinity/node_affinity_test.go TestNodeAffinity: */
	/* "Pod with matchExpressions using In operator that matches the
	 * existing node" */
	assert_true(one_expr(f, "foo", "bar", "foo", SEL_IN, "bar", "value2"));
	/* "Pod with affinity that don't match node's labels won't schedule
	 * onto the node" */
	assert_false(one_expr(f, "foo", "bar", "foo", SEL_IN, "value1", "value2"));
	/* "Pod with matchExpressions using Gt operator that matches the
	 * existing node" (kernel-version 0206 > 0204) */
	assert_true(one_expr(f, "kernel-version", "0206", "kernel-version", SEL_GT,
			     "0204", NULL));
	/* "Pod with matchExpressions using NotIn operator that matches the
	 * existing node" */
	assert_true(one_expr(f, "mem-type", "DDR3", "mem-type", SEL_NOT_IN, "DDR", "DDR2"));
	/* "Pod with matchExpressions using Exists operator that matches the
	 * existing node" */
	assert_true(one_expr(f, "GPU", "NVIDIA-GRID-K1", "GPU", SEL_EXISTS, NULL, NULL));

	/* from k8s.io/apimachinery/pkg/labels/selector.go Requirement.Matches
	 * semantics (selector_test.go TestRequirementMatches): */
	/* In needs the label. */
	assert_false(one_expr(f, NULL, NULL, "foo", SEL_IN, "bar", NULL));
	/* NotIn matches an absent label; fails on a listed value. */
	assert_true(one_expr(f, NULL, NULL, "mem-type", SEL_NOT_IN, "DDR", NULL));
	assert_false(one_expr(f, "mem-type", "DDR", "mem-type", SEL_NOT_IN, "DDR", "DDR2"));
	/* Exists / DoesNotExist. */
	assert_false(one_expr(f, NULL, NULL, "GPU", SEL_EXISTS, NULL, NULL));
	assert_true(one_expr(f, NULL, NULL, "GPU", SEL_DOES_NOT_EXIST, NULL, NULL));
	assert_false(one_expr(f, "GPU", "x", "GPU", SEL_DOES_NOT_EXIST, NULL, NULL));
	/* Gt / Lt: strict, need the label, and need it to parse as int64. */
	assert_false(one_expr(f, "kernel-version", "0204", "kernel-version", SEL_GT,
			      "0204", NULL));
	assert_false(one_expr(f, NULL, NULL, "kernel-version", SEL_GT, "0204", NULL));
	assert_false(one_expr(f, "kernel-version", "02a6", "kernel-version", SEL_GT,
			      "0204", NULL));
	assert_false(one_expr(f, "kernel-version", "", "kernel-version", SEL_GT,
			      "-1", NULL));
	assert_true(one_expr(f, "kernel-version", "-5", "kernel-version", SEL_LT,
			     "-4", NULL));
	assert_true(one_expr(f, "kernel-version", "+3", "kernel-version", SEL_LT,
			     "4", NULL));
	assert_false(one_expr(f, "kernel-version", "4", "kernel-version", SEL_LT,
			      "4", NULL));
	assert_false(one_expr(f, NULL, NULL, "kernel-version", SEL_LT, "4", NULL));
	assert_false(one_expr(f, "kernel-version", "9223372036854775808",
			      "kernel-version", SEL_GT, "0", NULL)); /* overflows */
	assert_false(one_expr(f, "kernel-version", "1.5", "kernel-version", SEL_LT,
			      "4", NULL));
}

static void test_affinity_terms(void **state)
{
	struct fx *f = *state;
	struct node_spec n;
	struct pod_spec p;
	struct sel_term *t;

	node_init(f, &n, "node1");
	node_label(f, &n, "foo", "bar");

	/* from nodeaffinity/node_affinity_test.go TestNodeAffinity: "Pod with
	 * empty MatchExpressions is not a valid value will match no objects
	 * and won't schedule onto the node" */
	pod_init(&p);
	pod_term(&p);
	assert_false(filter_affinity(&f->ctx, &p, &n));

	/* from component-helpers nodeaffinity.go semantics: a required
	 * selector with no terms at all matches nothing. */
	pod_init(&p);
	p.has_required = true;
	assert_false(filter_affinity(&f->ctx, &p, &n));

	/* An empty term beside a matching one does not hide it. */
	pod_init(&p);
	pod_term(&p);
	t = pod_term(&p);
	pod_expr(f, &p, t, "foo", SEL_IN, "bar", NULL);
	assert_true(filter_affinity(&f->ctx, &p, &n));

	/* "Pod with multiple matchExpressions ANDed that matches the existing
	 * node" */
	node_init(f, &n, "node1");
	node_label(f, &n, "GPU", "NVIDIA-GRID-K1");
	pod_init(&p);
	t = pod_term(&p);
	pod_expr(f, &p, t, "GPU", SEL_EXISTS, NULL);
	pod_expr(f, &p, t, "GPU", SEL_NOT_IN, "AMD", "INTER", NULL);
	assert_true(filter_affinity(&f->ctx, &p, &n));

	/* "Pod with multiple matchExpressions ANDed that doesn't match the
	 * existing node" */
	pod_init(&p);
	t = pod_term(&p);
	pod_expr(f, &p, t, "GPU", SEL_EXISTS, NULL);
	pod_expr(f, &p, t, "GPU", SEL_IN, "AMD", "INTER", NULL);
	assert_false(filter_affinity(&f->ctx, &p, &n));

	/* "Pod with multiple NodeSelectorTerms ORed in affinity, matches the
	 * node's labels and will schedule onto the node" */
	node_init(f, &n, "node1");
	node_label(f, &n, "foo", "bar");
	pod_init(&p);
	t = pod_term(&p);
	pod_expr(f, &p, t, "foo", SEL_IN, "bar", "value2", NULL);
	t = pod_term(&p);
	pod_expr(f, &p, t, "diffkey", SEL_IN, "wrong", "value2", NULL);
	assert_true(filter_affinity(&f->ctx, &p, &n));
}

static void test_affinity_match_fields(void **state)
{
	struct fx *f = *state;
	struct node_spec n1, n2;
	struct pod_spec p;
	struct sel_term *t;

	node_init(f, &n1, "node1");
	node_init(f, &n2, "node2");
	node_label(f, &n2, "foo", "bar");

	/* from nodeaffinity/node_affinity_test.go TestNodeAffinity: */
	/* "Pod with matchFields using In operator that matches the existing
	 * node" / "... that does not match the existing node" */
	pod_init(&p);
	t = pod_term(&p);
	pod_field(f, &p, t, "metadata.name", SEL_IN, "node1", NULL);
	assert_true(filter_affinity(&f->ctx, &p, &n1));
	assert_false(filter_affinity(&f->ctx, &p, &n2));

	/* "Pod with two terms: matchFields does not match, but
	 * matchExpressions matches" */
	pod_init(&p);
	t = pod_term(&p);
	pod_field(f, &p, t, "metadata.name", SEL_IN, "node1", NULL);
	pod_field(f, &p, t, "metadata.name", SEL_IN, "node2", NULL);
	t = pod_term(&p);
	pod_expr(f, &p, t, "foo", SEL_IN, "bar", NULL);
	assert_true(filter_affinity(&f->ctx, &p, &n2));
	/* the first term alone (name is node1 AND node2) matches neither */
	p.n_terms = 1;
	assert_false(filter_affinity(&f->ctx, &p, &n1));
	assert_false(filter_affinity(&f->ctx, &p, &n2));

	/* "Pod with one term: matchFields does not match, but
	 * matchExpressions matches" */
	pod_init(&p);
	t = pod_term(&p);
	pod_field(f, &p, t, "metadata.name", SEL_IN, "node1", NULL);
	pod_expr(f, &p, t, "foo", SEL_IN, "bar", NULL);
	assert_false(filter_affinity(&f->ctx, &p, &n2));

	/* from nodeaffinity.go semantics: NotIn on the name; two values or
	 * another operator is a parse error, and the term matches nothing. */
	pod_init(&p);
	t = pod_term(&p);
	pod_field(f, &p, t, "metadata.name", SEL_NOT_IN, "node1", NULL);
	assert_false(filter_affinity(&f->ctx, &p, &n1));
	assert_true(filter_affinity(&f->ctx, &p, &n2));
	pod_init(&p);
	t = pod_term(&p);
	pod_field(f, &p, t, "metadata.name", SEL_IN, "node1", "node2", NULL);
	assert_false(filter_affinity(&f->ctx, &p, &n1));
	pod_init(&p);
	t = pod_term(&p);
	pod_field(f, &p, t, "metadata.name", SEL_EXISTS, NULL);
	assert_false(filter_affinity(&f->ctx, &p, &n1));
}

/* A requirement labels.NewRequirement refuses (the decoder marks it
 * `invalid`: ingest/k8s_json_meta.c) makes its term a parse error. kube's
 * LazyErrorNodeSelector.Match (component-helpers/scheduling/corev1/
 * nodeaffinity/nodeaffinity.go) skips such a term, so it matches no node,
 * and the pod's other terms still count; Filter ignores the error. */
static void test_affinity_invalid_requirement(void **state)
{
	struct fx *f = *state;
	struct node_spec n;
	struct pod_spec p;
	struct sel_term *t;

	node_init(f, &n, "node1");
	node_label(f, &n, "foo", "bar");

	/* from nodeaffinity/node_affinity_test.go TestNodeAffinity: "Pod with
	 * an invalid value in Affinity term won't be scheduled onto the node"
	 * (NotIn "invalid value: ___@#$%^", node labelled foo=bar). */
	pod_init(&p);
	t = pod_term(&p);
	pod_expr(f, &p, t, "foo", SEL_NOT_IN, "invalid value: ___@#$%^", NULL);
	p.exprs[t->first_expr].invalid = 1;
	assert_false(filter_affinity(&f->ctx, &p, &n));

	/* The lazy error is per term: a second, valid term still places the
	 * pod (LazyErrorNodeSelector.Match collects the error and goes on). */
	t = pod_term(&p);
	pod_expr(f, &p, t, "foo", SEL_EXISTS, NULL);
	assert_true(filter_affinity(&f->ctx, &p, &n));

	/* Gt with a value labels.NewRequirement refuses ("-1" parses as an
	 * int64 but is not a valid label value): no node, even one whose
	 * value is greater. */
	node_label(f, &n, "cores", "8");
	pod_init(&p);
	t = pod_term(&p);
	pod_expr(f, &p, t, "cores", SEL_GT, "-1", NULL);
	assert_true(filter_affinity(&f->ctx, &p, &n));
	p.exprs[t->first_expr].invalid = 1;
	assert_false(filter_affinity(&f->ctx, &p, &n));
}

/* NodeAffinity PreFilter (nodeaffinity/node_affinity.go): the terms'
 * `matchFields` metadata.name In sets, intersected within a term and
 * united across terms; empty means "pod affinity terms conflict". */
static void test_affinity_terms_conflict(void **state)
{
	struct fx *f = *state;
	struct pod_spec p;
	struct sel_term *t;

	/* from nodeaffinity/node_affinity_test.go TestNodeAffinity: "Pod with
	 * two conflicting mach field requirements" (In node1 AND In node2 in
	 * one term): wantPreFilterStatus UnschedulableAndUnresolvable,
	 * errReasonConflict. */
	pod_init(&p);
	t = pod_term(&p);
	pod_field(f, &p, t, "metadata.name", SEL_IN, "node1", NULL);
	pod_field(f, &p, t, "metadata.name", SEL_IN, "node2", NULL);
	assert_true(affinity_terms_conflict(&p));

	/* The same name twice: {node1}, no conflict. */
	pod_init(&p);
	t = pod_term(&p);
	pod_field(f, &p, t, "metadata.name", SEL_IN, "node1", NULL);
	pod_field(f, &p, t, "metadata.name", SEL_IN, "node1", NULL);
	assert_false(affinity_terms_conflict(&p));

	/* "Pod with two terms: matchFields does not match, but
	 * matchExpressions matches": a term with no name requirement lets
	 * every node through (PreFilter returns nil). */
	pod_init(&p);
	t = pod_term(&p);
	pod_field(f, &p, t, "metadata.name", SEL_IN, "node1", NULL);
	pod_field(f, &p, t, "metadata.name", SEL_IN, "node2", NULL);
	t = pod_term(&p);
	pod_expr(f, &p, t, "foo", SEL_IN, "bar", NULL);
	assert_false(affinity_terms_conflict(&p));

	/* The union: one term's set empty, the other's {node2}: no conflict
	 * (PreFilterResult {node2}). Both terms' sets empty: conflict. */
	pod_init(&p);
	t = pod_term(&p);
	pod_field(f, &p, t, "metadata.name", SEL_IN, "node1", NULL);
	pod_field(f, &p, t, "metadata.name", SEL_IN, "node2", NULL);
	t = pod_term(&p);
	pod_field(f, &p, t, "metadata.name", SEL_IN, "node2", NULL);
	assert_false(affinity_terms_conflict(&p));
	pod_init(&p);
	t = pod_term(&p);
	pod_field(f, &p, t, "metadata.name", SEL_IN, "node1", NULL);
	pod_field(f, &p, t, "metadata.name", SEL_IN, "node2", NULL);
	t = pod_term(&p);
	pod_field(f, &p, t, "metadata.name", SEL_IN, "node3", NULL);
	pod_field(f, &p, t, "metadata.name", SEL_IN, "node4", NULL);
	assert_true(affinity_terms_conflict(&p));

	/* NotIn does not narrow; an empty term (no matchFields) lets all
	 * through; no required affinity, or no terms, is no conflict. */
	pod_init(&p);
	t = pod_term(&p);
	pod_field(f, &p, t, "metadata.name", SEL_NOT_IN, "node1", NULL);
	pod_field(f, &p, t, "metadata.name", SEL_NOT_IN, "node2", NULL);
	assert_false(affinity_terms_conflict(&p));
	pod_init(&p);
	pod_term(&p);
	assert_false(affinity_terms_conflict(&p));
	pod_init(&p);
	assert_false(affinity_terms_conflict(&p));
	p.has_required = true;
	assert_false(affinity_terms_conflict(&p));
}

static void test_score_affinity(void **state)
{
	struct fx *f = *state;
	struct node_spec n[3];
	struct pod_spec p;
	struct sel_term *t;
	int64_t s[3];

	/* from nodeaffinity/node_affinity_test.go TestNodeAffinityPriority:
	 * "all nodes matches preferred scheduling requirements of pod but
	 * with different priorities" — affinity2 with label1, label5, label2:
	 * raw 2, 11, 4, normalised 18, 100, 36. */
	pod_init(&p);
	t = pod_preferred(&p, 2);
	pod_expr(f, &p, t, "foo", SEL_IN, "bar", NULL);
	t = pod_preferred(&p, 4);
	pod_expr(f, &p, t, "key", SEL_IN, "value", NULL);
	t = pod_preferred(&p, 5);
	pod_expr(f, &p, t, "foo", SEL_IN, "bar", NULL);
	pod_expr(f, &p, t, "key", SEL_IN, "value", NULL);
	pod_expr(f, &p, t, "az", SEL_IN, "az1", NULL);

	node_init(f, &n[0], "node1");
	node_label(f, &n[0], "foo", "bar");
	node_init(f, &n[1], "node5");
	node_label(f, &n[1], "foo", "bar");
	node_label(f, &n[1], "key", "value");
	node_label(f, &n[1], "az", "az1");
	node_init(f, &n[2], "node2");
	node_label(f, &n[2], "key", "value");
	for (int i = 0; i < 3; i++)
		s[i] = score_affinity_raw(&f->ctx, &p, &n[i]);
	assert_int_equal(s[0], 2);
	assert_int_equal(s[1], 11);
	assert_int_equal(s[2], 4);
	score_normalize(s, 3, false);
	assert_int_equal(s[0], 18);
	assert_int_equal(s[1], 100);
	assert_int_equal(s[2], 36);

	/* same test: "no node matches preferred scheduling requirements in
	 * NodeAffinity of pod" (label4 {abc: az11, def: az22}) */
	node_init(f, &n[0], "node1");
	node_label(f, &n[0], "abc", "az11");
	node_label(f, &n[0], "def", "az22");
	assert_int_equal(score_affinity_raw(&f->ctx, &p, &n[0]), 0);

	/* from nodeaffinity.go semantics: weight-0 and empty preferred terms
	 * are dropped. */
	pod_init(&p);
	pod_preferred(&p, 7);
	t = pod_preferred(&p, 0);
	pod_expr(f, &p, t, "foo", SEL_DOES_NOT_EXIST, NULL);
	assert_int_equal(score_affinity_raw(&f->ctx, &p, &n[2]), 0);
}

/* ------------------------------------------------------------------ */
/* NodePorts                                                            */

/* node_ports_test.go's newPod("m1", ...) against a node already holding
 * the ports in `used`. Arrays end with NULL. */
static bool ports_fit(struct fx *f, const char *const *want, const char *const *used)
{
	struct node_spec n;
	struct pod_spec p;
	struct view w;

	node_init(f, &n, "node1");
	view_init(&w, &n);
	pod_init(&p);
	for (; *want; want++)
		p.ports[p.n_ports++] = port(f, *want);
	for (; *used; used++)
		w.ports[w.v.n_ports++] = port(f, *used);
	return filter_ports(&f->ctx, &p, &w.v);
}

#define L(...) ((const char *const[]){__VA_ARGS__, NULL})
#define NONE ((const char *const[]){NULL})

static void test_ports(void **state)
{
	struct fx *f = *state;

	/* from nodeports/node_ports_test.go TestNodePorts: */
	assert_true(ports_fit(f, NONE, NONE)); /* "nothing running" */
	assert_true(ports_fit(f, L("UDP/127.0.0.1/8080"), L("UDP/127.0.0.1/9090")));
	/* ^ "other port" */
	assert_false(ports_fit(f, L("UDP/127.0.0.1/8080"), L("UDP/127.0.0.1/8080")));
	/* ^ "same udp port" */
	assert_false(ports_fit(f, L("TCP/127.0.0.1/8080"), L("TCP/127.0.0.1/8080")));
	/* ^ "same tcp port" */
	assert_true(ports_fit(f, L("TCP/127.0.0.1/8080"), L("TCP/127.0.0.2/8080")));
	/* ^ "different host ip" */
	assert_true(ports_fit(f, L("UDP/127.0.0.1/8080"), L("TCP/127.0.0.1/8080")));
	/* ^ "different protocol" */
	assert_false(ports_fit(f, L("UDP/127.0.0.1/8000", "UDP/127.0.0.1/8080"),
			       L("UDP/127.0.0.1/8080")));
	/* ^ "second udp port conflict" */
	assert_false(ports_fit(f, L("TCP/127.0.0.1/8001", "UDP/127.0.0.1/8080"),
			       L("TCP/127.0.0.1/8001", "UDP/127.0.0.1/8081")));
	/* ^ "first tcp port conflict" */
	assert_false(ports_fit(f, L("TCP/0.0.0.0/8001"), L("TCP/127.0.0.1/8001")));
	/* ^ "first tcp port conflict due to 0.0.0.0 hostIP" */
	assert_false(ports_fit(f, L("TCP/10.0.10.10/8001", "TCP/0.0.0.0/8001"),
			       L("TCP/127.0.0.1/8001")));
	/* ^ "TCP hostPort conflict due to 0.0.0.0 hostIP" */
	assert_false(ports_fit(f, L("TCP/127.0.0.1/8001"), L("TCP/0.0.0.0/8001")));
	/* ^ "second tcp port conflict to 0.0.0.0 hostIP" */
	assert_true(ports_fit(f, L("UDP/127.0.0.1/8001"), L("TCP/0.0.0.0/8001")));
	/* ^ "second different protocol" */
	assert_false(ports_fit(f, L("UDP/127.0.0.1/8001"),
			       L("TCP/0.0.0.0/8001", "UDP/0.0.0.0/8001")));
	/* ^ "UDP hostPort conflict due to 0.0.0.0 hostIP" */

	/* from framework/types.go HostPortInfo semantics: an empty hostIP is
	 * sanitised to 0.0.0.0, on either side. */
	struct node_spec n;
	struct pod_spec p;
	struct view w;
	node_init(f, &n, "node1");
	view_init(&w, &n);
	pod_init(&p);
	p.ports[p.n_ports++] = (struct host_port){.ip = 0, .port = 8001};
	w.ports[w.v.n_ports++] = port(f, "TCP/127.0.0.1/8001");
	assert_false(filter_ports(&f->ctx, &p, &w.v));
	p.ports[0] = port(f, "TCP/127.0.0.1/8001");
	w.ports[0] = (struct host_port){.ip = 0, .port = 8001};
	assert_false(filter_ports(&f->ctx, &p, &w.v));
	p.ports[0] = port(f, "SCTP/127.0.0.1/8001");
	assert_true(filter_ports(&f->ctx, &p, &w.v));
}

/* ------------------------------------------------------------------ */
/* NodeResourcesFit filter                                              */

/* fit_test.go's node: makeAllocatableResources(10, 20, 32, 5, 20, 5):
 * cpu 10m, memory 20, pods 32, extendedResourceA 5, ephemeral-storage 20,
 * hugePageResourceA 5; and one existing pod using cpu / memory. */
static void fit_node(struct fx *f, struct node_spec *n, struct view *w,
		     int64_t used_cpu, int64_t used_mem)
{
	node_init(f, n, "machine1");
	n->allocatable.v[RES_CPU] = 10;
	n->allocatable.v[RES_MEMORY] = 20;
	n->allocatable.v[RES_PODS] = 32;
	n->allocatable.v[f->res_ext_a] = 5;
	n->allocatable.v[RES_EPHEMERAL] = 20;
	n->allocatable.v[f->res_hugepages] = 5;
	view_init(w, n);
	view_add_pod(w, used_cpu, used_mem);
}

static void assert_reasons(const struct reason *got, unsigned n_got,
			   const struct reason *want, unsigned n_want)
{
	assert_int_equal(n_got, n_want);
	for (unsigned i = 0; i < n_want; i++) {
		assert_int_equal(got[i].code, want[i].code);
		assert_int_equal(got[i].resource, want[i].resource);
		assert_int_equal(got[i].key, want[i].key);
		assert_int_equal(got[i].value, want[i].value);
	}
}

#define INSUFFICIENT(r) ((struct reason){.code = REASON_INSUFFICIENT, .resource = (r)})
#define TOO_MANY ((struct reason){.code = REASON_TOO_MANY_PODS})

static void test_fit_enough(void **state)
{
	struct fx *f = *state;
	struct node_spec n;
	struct view w;
	struct pod_spec p;
	struct reason r[FILTER_MAX_REASONS];

	/* from noderesources/fit_test.go TestEnoughRequests: */
	/* "no resources requested always fits" */
	fit_node(f, &n, &w, 10, 20);
	pod_init(&p);
	assert_int_equal(filter_resources(&p, &w.v, r), 0);

	/* "too many resources fails" */
	pod_request(&p, 1, 1);
	assert_reasons(r, filter_resources(&p, &w.v, r),
		       (struct reason[]){INSUFFICIENT(RES_CPU), INSUFFICIENT(RES_MEMORY)}, 2);

	/* "too many resources fails due to init container cpu": effective
	 * request max(1, 3) = 3 cpu against 8 used of 10. */
	fit_node(f, &n, &w, 8, 19);
	pod_request(&p, 3, 1);
	assert_reasons(r, filter_resources(&p, &w.v, r),
		       (struct reason[]){INSUFFICIENT(RES_CPU)}, 1);

	/* "both resources fit" */
	fit_node(f, &n, &w, 5, 5);
	pod_request(&p, 1, 1);
	assert_int_equal(filter_resources(&p, &w.v, r), 0);

	/* "one resource memory fits" */
	fit_node(f, &n, &w, 9, 5);
	pod_request(&p, 2, 1);
	assert_reasons(r, filter_resources(&p, &w.v, r),
		       (struct reason[]){INSUFFICIENT(RES_CPU)}, 1);

	/* "one resource cpu fits" */
	fit_node(f, &n, &w, 5, 19);
	pod_request(&p, 1, 2);
	assert_reasons(r, filter_resources(&p, &w.v, r),
		       (struct reason[]){INSUFFICIENT(RES_MEMORY)}, 1);

	/* "equal edge case" */
	pod_request(&p, 5, 1);
	assert_int_equal(filter_resources(&p, &w.v, r), 0);

	/* "extended resource fits" */
	fit_node(f, &n, &w, 0, 0);
	pod_init(&p);
	p.request.v[f->res_ext_a] = 1;
	assert_int_equal(filter_resources(&p, &w.v, r), 0);

	/* "extended resource capacity enforced" */
	pod_request(&p, 1, 1);
	p.request.v[f->res_ext_a] = 10;
	assert_reasons(r, filter_resources(&p, &w.v, r),
		       (struct reason[]){INSUFFICIENT(f->res_ext_a)}, 1);

	/* "extended resource allocatable enforced" */
	w.used.v[f->res_ext_a] = 5;
	p.request.v[f->res_ext_a] = 1;
	assert_reasons(r, filter_resources(&p, &w.v, r),
		       (struct reason[]){INSUFFICIENT(f->res_ext_a)}, 1);

	/* "extended resource allocatable enforced for unknown resource" */
	w.used.v[f->res_ext_a] = 0;
	p.request.v[f->res_ext_a] = 0;
	p.request.v[f->res_ext_b] = 1;
	assert_reasons(r, filter_resources(&p, &w.v, r),
		       (struct reason[]){INSUFFICIENT(f->res_ext_b)}, 1);

	/* "hugepages resource capacity enforced" */
	pod_init(&p);
	pod_request(&p, 1, 1);
	p.request.v[f->res_hugepages] = 10;
	assert_reasons(r, filter_resources(&p, &w.v, r),
		       (struct reason[]){INSUFFICIENT(f->res_hugepages)}, 1);

	/* from fit_test.go TestStorageRequests semantics (ephemeral-storage
	 * request over allocatable), with cpu and memory short too: every
	 * shortfall is reported, in index order. */
	fit_node(f, &n, &w, 10, 20);
	pod_init(&p);
	pod_request(&p, 1, 1);
	p.request.v[RES_EPHEMERAL] = 25;
	assert_reasons(r, filter_resources(&p, &w.v, r),
		       (struct reason[]){INSUFFICIENT(RES_CPU), INSUFFICIENT(RES_MEMORY),
					 INSUFFICIENT(RES_EPHEMERAL)}, 3);
}

static void test_fit_pods_count(void **state)
{
	struct fx *f = *state;
	struct node_spec n;
	struct view w;
	struct pod_spec p;
	struct reason r[FILTER_MAX_REASONS];

	/* from noderesources/fit_test.go TestNotEnoughRequests, node
	 * makeAllocatableResources(10, 20, 1, 0, 0, 0) holding one pod: */
	/* "even without specified resources, predicate fails when there's no
	 * space for additional pod" */
	fit_node(f, &n, &w, 10, 20);
	n.allocatable.v[RES_PODS] = 1;
	pod_init(&p);
	assert_reasons(r, filter_resources(&p, &w.v, r), &TOO_MANY, 1);

	/* "even if both resources fit, predicate fails when there's no space
	 * for additional pod" */
	fit_node(f, &n, &w, 5, 5);
	n.allocatable.v[RES_PODS] = 1;
	pod_request(&p, 1, 1);
	assert_reasons(r, filter_resources(&p, &w.v, r), &TOO_MANY, 1);

	/* "even for equal edge case predicate fails when there's no space for
	 * additional pod" */
	fit_node(f, &n, &w, 5, 19);
	n.allocatable.v[RES_PODS] = 1;
	pod_request(&p, 5, 1);
	assert_reasons(r, filter_resources(&p, &w.v, r), &TOO_MANY, 1);

	/* from fit.go fitsRequest semantics: "Too many pods" first, then the
	 * resources; a zero-request pod checks only the pod count. */
	fit_node(f, &n, &w, 10, 20);
	n.allocatable.v[RES_PODS] = 1;
	pod_request(&p, 1, 0);
	assert_reasons(r, filter_resources(&p, &w.v, r),
		       (struct reason[]){TOO_MANY, INSUFFICIENT(RES_CPU)}, 2);
	/* A node with no room at all still takes a zero-request pod. */
	n.allocatable.v[RES_PODS] = 32;
	n.allocatable.v[RES_CPU] = 0;
	n.allocatable.v[RES_MEMORY] = 0;
	pod_init(&p);
	assert_int_equal(filter_resources(&p, &w.v, r), 0);
}

/* ------------------------------------------------------------------ */
/* filter_node order and reason words                                  */

static void test_filter_node_order(void **state)
{
	struct fx *f = *state;
	struct node_spec n;
	struct view w;
	struct pod_spec p;
	struct reason r[FILTER_MAX_REASONS];

	/* from framework/runtime/framework.go RunFilterPlugins semantics: the
	 * first failing plugin decides, in the default profile's order. */
	fit_node(f, &n, &w, 10, 20);
	n.unschedulable = true;
	node_taint(f, &n, "dedicated", "user1", TAINT_NO_SCHEDULE);
	pod_init(&p);
	p.node_name = sid(f, "elsewhere");
	pod_selector(f, &p, "foo", "bar");
	p.ports[p.n_ports++] = port(f, "TCP/0.0.0.0/80");
	w.ports[w.v.n_ports++] = port(f, "TCP/10.0.0.1/80");
	pod_request(&p, 1, 1);

	assert_reasons(r, filter_node(&f->ctx, &p, &w.v, r),
		       &(struct reason){.code = REASON_UNSCHEDULABLE}, 1);
	n.unschedulable = false;
	assert_reasons(r, filter_node(&f->ctx, &p, &w.v, r),
		       &(struct reason){.code = REASON_NODE_NAME}, 1);
	p.node_name = n.name;
	assert_reasons(r, filter_node(&f->ctx, &p, &w.v, r),
		       &(struct reason){.code = REASON_TAINT,
					.key = sid(f, "dedicated"),
					.value = sid(f, "user1")}, 1);
	pod_tol(f, &p, "dedicated", TOL_EXISTS, "", TAINT_EFFECT_ALL);
	assert_reasons(r, filter_node(&f->ctx, &p, &w.v, r),
		       &(struct reason){.code = REASON_AFFINITY}, 1);
	node_label(f, &n, "foo", "bar");
	assert_reasons(r, filter_node(&f->ctx, &p, &w.v, r),
		       &(struct reason){.code = REASON_PORTS}, 1);
	w.v.n_ports = 0;
	assert_reasons(r, filter_node(&f->ctx, &p, &w.v, r),
		       (struct reason[]){INSUFFICIENT(RES_CPU), INSUFFICIENT(RES_MEMORY)}, 2);
	pod_request(&p, 0, 0);
	assert_int_equal(filter_node(&f->ctx, &p, &w.v, r), 0);
}

static void test_reason_format(void **state)
{
	struct fx *f = *state;
	char buf[256];

	/* The words kube-scheduler uses (each plugin's ErrReason constant). */
	struct {
		struct reason r;
		const char *want;
	} cases[] = {
		{{.code = REASON_UNSCHEDULABLE}, "node(s) were unschedulable"},
		{{.code = REASON_NODE_NAME}, "node(s) didn't match the requested node name"},
		{{.code = REASON_TAINT, .key = sid(f, "node-role.kubernetes.io/control-plane")},
		 "node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }"},
		{{.code = REASON_TAINT, .key = sid(f, "dedicated"), .value = sid(f, "user1")},
		 "node(s) had untolerated taint {dedicated: user1}"},
		{{.code = REASON_AFFINITY}, "node(s) didn't match Pod's node affinity/selector"},
		{{.code = REASON_PORTS},
		 "node(s) didn't have free ports for the requested pod ports"},
		{{.code = REASON_TOO_MANY_PODS}, "Too many pods"},
		{INSUFFICIENT(RES_CPU), "Insufficient cpu"},
		{INSUFFICIENT(RES_EPHEMERAL), "Insufficient ephemeral-storage"},
		{INSUFFICIENT(f->res_gpu), "Insufficient nvidia.com/gpu"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int len = reason_format(&f->ctx, &cases[i].r, buf, sizeof(buf));
		assert_string_equal(buf, cases[i].want);
		assert_int_equal(len, (int)strlen(cases[i].want));
	}
	/* snprintf's contract: the full length even when cut. */
	assert_int_equal(reason_format(&f->ctx, &cases[0].r, buf, 5), 26);
	assert_string_equal(buf, "node");
}

/* ------------------------------------------------------------------ */
/* Scores: NodeResourcesFit (Least / Most allocated), Balanced          */

static struct score_config cfg_default(void)
{
	struct score_config c;
	memset(&c, 0, sizeof(c));
	c.weight_taint = 3;
	c.weight_affinity = 2;
	c.weight_fit = 1;
	c.weight_balanced = 1;
	c.fit_strategy = FIT_LEAST_ALLOCATED;
	c.n_fit_resources = 2;
	c.fit_resources[0] = (struct res_weight){RES_CPU, 1};
	c.fit_resources[1] = (struct res_weight){RES_MEMORY, 1};
	c.n_balanced_resources = 2;
	c.balanced_resources[0] = (struct res_weight){RES_CPU, 1};
	c.balanced_resources[1] = (struct res_weight){RES_MEMORY, 1};
	return c;
}

/* A node with allocatable cpu / memory (and optionally one more). */
static void score_node(struct fx *f, struct node_spec *n, struct view *w,
		       int64_t cpu, int64_t mem)
{
	node_init(f, n, "node");
	n->allocatable.v[RES_CPU] = cpu;
	n->allocatable.v[RES_MEMORY] = mem;
	view_init(w, n);
}

static int64_t fit(const struct score_config *c, const struct pod_spec *p,
		   const struct view *w)
{
	return score_fit(c, p, &w->v);
}

/* helper/shape_score.go BuildBrokenLinearFunction, as
 * requested_to_capacity_ratio.go uses it: the points' scores scaled to
 * 0..100 first (score * MaxNodeScore / MaxCustomPriorityScore), then
 * interpolated in integers. The points of TestBrokenLinearFunction
 * (requested_to_capacity_ratio_test.go); where Go's unscaled helper would
 * truncate differently the value is the scaled function's. */
static void test_score_shape(void **state)
{
	(void)state;
	static const struct shape_point up[] = {{10, 1}, {90, 9}};
	static const struct {
		int64_t p, want;
	} c1[] = {{-10, 10}, {0, 10}, {9, 10}, {10, 10}, {15, 15}, {20, 20},
		  {89, 89}, {90, 90}, {99, 90}, {100, 90}, {110, 90}};
	for (size_t i = 0; i < sizeof(c1) / sizeof(c1[0]); i++)
		assert_int_equal(score_shape(up, 2, c1[i].p), c1[i].want);
	static const struct shape_point peak[] = {{0, 2}, {40, 10}, {100, 0}};
	static const struct {
		int64_t p, want;
	} c2[] = {{-10, 20}, {0, 20}, {20, 60}, {30, 80}, {40, 100}, {70, 50},
		  {100, 0}, {110, 0}};
	for (size_t i = 0; i < sizeof(c2) / sizeof(c2[0]); i++)
		assert_int_equal(score_shape(peak, 3, c2[i].p), c2[i].want);
	static const struct shape_point flat[] = {{0, 2}, {40, 2}, {100, 2}};
	for (int64_t p = -10; p <= 110; p += 10)
		assert_int_equal(score_shape(flat, 3, p), 20);
	/* Integer interpolation truncates toward zero, as Go's. */
	static const struct shape_point down[] = {{0, 10}, {30, 0}};
	assert_int_equal(score_shape(down, 2, 10), 67); /* 100 - 100*10/30 */
	static const struct shape_point one[] = {{50, 7}};
	assert_int_equal(score_shape(one, 1, 0), 70);
	assert_int_equal(score_shape(one, 1, 100), 70);
}

/* noderesources/requested_to_capacity_ratio_test.go. */
static void test_score_requested_to_capacity_ratio(void **state)
{
	struct fx *f = *state;
	struct score_config c = cfg_default();
	struct node_spec n1, n2;
	struct view w1, w2;
	struct pod_spec p;
	c.fit_strategy = FIT_REQUESTED_TO_CAPACITY_RATIO;
	c.n_shape = 2;
	c.shape[0] = (struct shape_point){0, 10};
	c.shape[1] = (struct shape_point){100, 0};

	/* TestRequestedToCapacityRatioScoringStrategy, shape (0, 10), (100, 0):
	 * "nothing scheduled, nothing requested": 100, 100. The stand-ins'
	 * memory (3 x 200Mi) passes the nodes' 10000 bytes: that resource
	 * scores 0 and counts in neither sum. */
	pod_init(&p);
	pod_request(&p, -1, -1);
	score_node(f, &n1, &w1, 4000000, 10000);
	view_add_pod(&w1, -1, -1);
	view_add_pod(&w1, -1, -1);
	score_node(f, &n2, &w2, 4000000, 10000);
	assert_int_equal(fit(&c, &p, &w1), 100);
	assert_int_equal(fit(&c, &p, &w2), 100);
	/* "nothing scheduled, resources requested, differently sized nodes":
	 * 38 (37.5 rounded half away from zero), 50 */
	pod_request(&p, 3000, 5000);
	score_node(f, &n1, &w1, 4000, 10000);
	score_node(f, &n2, &w2, 6000, 10000);
	assert_int_equal(fit(&c, &p, &w1), 38);
	assert_int_equal(fit(&c, &p, &w2), 50);
	/* "no resources requested, pods scheduled with resources": 38, 50 */
	pod_init(&p);
	p.nonzero_cpu_milli = p.nonzero_mem_bytes = 0; /* requests of 0 */
	score_node(f, &n1, &w1, 4000, 10000);
	view_add_pod(&w1, 3000, 5000);
	score_node(f, &n2, &w2, 6000, 10000);
	view_add_pod(&w2, 3000, 5000);
	assert_int_equal(fit(&c, &p, &w1), 38);
	assert_int_equal(fit(&c, &p, &w2), 50);

	/* TestResourceBinPackingSingleExtended: intel.com/foo weight 1, shape
	 * (0, 0), (100, 1); node1 has 8, node2 4. */
	c.n_fit_resources = 1;
	c.fit_resources[0] = (struct res_weight){(uint8_t)f->res_ext_a, 1};
	c.shape[0] = (struct shape_point){0, 0};
	c.shape[1] = (struct shape_point){100, 1};
	score_node(f, &n1, &w1, 4000, 10000LL * 1024 * 1024);
	n1.allocatable.v[f->res_ext_a] = 8;
	score_node(f, &n2, &w2, 4000, 10000LL * 1024 * 1024);
	n2.allocatable.v[f->res_ext_a] = 4;
	/* "nothing scheduled, nothing requested": 0, 0 */
	pod_init(&p);
	assert_int_equal(fit(&c, &p, &w1), 0);
	assert_int_equal(fit(&c, &p, &w2), 0);
	/* "resources requested, pods scheduled with less resources": 2, 5 */
	p.request.v[f->res_ext_a] = 2;
	assert_int_equal(fit(&c, &p, &w1), 2);
	assert_int_equal(fit(&c, &p, &w2), 5);
	/* "... on node with existing pod running": 2, 10 */
	w2.used.v[f->res_ext_a] = 2;
	assert_int_equal(fit(&c, &p, &w2), 10);
	/* "resources requested, pods scheduled with more resources": 5, 10 */
	w2.used.v[f->res_ext_a] = 0;
	p.request.v[f->res_ext_a] = 4;
	assert_int_equal(fit(&c, &p, &w1), 5);
	assert_int_equal(fit(&c, &p, &w2), 10);

	/* TestResourceBinPackingMultipleExtended: foo weight 3, bar weight 5;
	 * node1 foo 8 bar 4, node2 foo 4 bar 8; a pod of foo 2, bar 2:
	 * (2*3 + 5*5) / 8 = 3.875 -> 4 and (5*3 + 2*5) / 8 = 3.125 -> 3. */
	c.n_fit_resources = 2;
	c.fit_resources[0] = (struct res_weight){(uint8_t)f->res_ext_a, 3};
	c.fit_resources[1] = (struct res_weight){(uint8_t)f->res_ext_b, 5};
	n1.allocatable.v[f->res_ext_b] = 4;
	n2.allocatable.v[f->res_ext_b] = 8;
	pod_init(&p);
	p.request.v[f->res_ext_a] = 2;
	p.request.v[f->res_ext_b] = 2;
	assert_int_equal(fit(&c, &p, &w1), 4);
	assert_int_equal(fit(&c, &p, &w2), 3);
	/* An overcommitted resource scores as utilization 100:
	 * (10*3 + 5*5) / 8 = 6.875 -> 7. */
	p.request.v[f->res_ext_a] = 9;
	assert_int_equal(fit(&c, &p, &w1), 7);
}

/* nodeaffinity/node_affinity.go Filter with NodeAffinityArgs.addedAffinity:
 * the added selector first ("node(s) didn't match scheduler-enforced node
 * affinity"), then the pod's; after NodeUnschedulable, NodeName and
 * TaintToleration in filter_node_profile's order (TestNodeAffinity's
 * "Matches added affinity and Pod's node affinity", "Matches added
 * affinity but not Pod's node affinity", "Doesn't match added affinity"). */
static void test_added_affinity(void **state)
{
	struct fx *f = *state;
	struct score_config c = cfg_default();
	struct node_spec n;
	struct view w;
	struct pod_spec p;
	struct reason r[FILTER_MAX_REASONS];
	struct sel_term *t;
	/* addedAffinity: required zone In (foo); preferred 5: disk In (ssd). */
	c.has_added_affinity = true;
	pod_init(&c.added_affinity);
	t = pod_term(&c.added_affinity);
	pod_expr(f, &c.added_affinity, t, "zone", SEL_IN, "foo", NULL);
	t = pod_preferred(&c.added_affinity, 5);
	pod_expr(f, &c.added_affinity, t, "disk", SEL_IN, "ssd", NULL);

	node_init(f, &n, "node1");
	node_label(f, &n, "zone", "foo");
	node_label(f, &n, "foo", "bar");
	view_init(&w, &n);
	n.allocatable.v[RES_PODS] = 10;
	pod_init(&p);
	t = pod_term(&p);
	pod_expr(f, &p, t, "foo", SEL_IN, "bar", NULL);
	assert_int_equal(filter_node_profile(&f->ctx, &c, &p, &w.v, r), 0);
	assert_true(filter_added_affinity(&f->ctx, &c, &n));
	/* Matches the added affinity, not the pod's. */
	pod_init(&p);
	t = pod_term(&p);
	pod_expr(f, &p, t, "foo", SEL_IN, "baz", NULL);
	assert_int_equal(filter_node_profile(&f->ctx, &c, &p, &w.v, r), 1);
	assert_int_equal(r[0].code, REASON_AFFINITY);
	/* Does not match the added affinity: its reason, whatever the pod's. */
	node_init(f, &n, "node1");
	node_label(f, &n, "zone", "bar");
	node_label(f, &n, "foo", "bar");
	n.allocatable.v[RES_PODS] = 10;
	assert_false(filter_added_affinity(&f->ctx, &c, &n));
	assert_int_equal(filter_node_profile(&f->ctx, &c, &p, &w.v, r), 1);
	assert_int_equal(r[0].code, REASON_ENFORCED_AFFINITY);
	char text[128];
	reason_format(&f->ctx, &r[0], text, sizeof(text));
	assert_string_equal(text, "node(s) didn't match scheduler-enforced node "
			    "affinity");
	/* Filters before NodeAffinity come first. */
	n.unschedulable = true;
	assert_int_equal(filter_node_profile(&f->ctx, &c, &p, &w.v, r), 1);
	assert_int_equal(r[0].code, REASON_UNSCHEDULABLE);
	/* Without a profile (or with one that adds nothing), the pod's own. */
	n.unschedulable = false;
	assert_int_equal(filter_node(&f->ctx, &p, &w.v, r), 1);
	assert_int_equal(r[0].code, REASON_AFFINITY);
	c.has_added_affinity = false;
	assert_true(filter_added_affinity(&f->ctx, &c, &n));
	/* Only preferred terms added: every node passes the added filter,
	 * and the score is the added terms' (score_affinity_raw over it). */
	c.has_added_affinity = true;
	c.added_affinity.has_required = false;
	assert_true(filter_added_affinity(&f->ctx, &c, &n));
	node_label(f, &n, "disk", "ssd");
	assert_int_equal(score_affinity_raw(&f->ctx, &c.added_affinity, &n), 5);
}

static void test_score_least_allocated(void **state)
{
	struct fx *f = *state;
	struct score_config c = cfg_default();
	struct node_spec n1, n2;
	struct view w1, w2;
	struct pod_spec p;

	/* from noderesources/least_allocated_test.go
	 * TestLeastAllocatedScoringStrategy: */
	/* "nothing scheduled, nothing requested" */
	score_node(f, &n1, &w1, 4000, 10000);
	pod_init(&p);
	assert_int_equal(fit(&c, &p, &w1), 100);

	/* "nothing scheduled, resources requested, differently sized nodes":
	 * 37 and 50 */
	pod_request(&p, 3000, 5000);
	score_node(f, &n2, &w2, 6000, 10000);
	assert_int_equal(fit(&c, &p, &w1), 37);
	assert_int_equal(fit(&c, &p, &w2), 50);

	/* "no resources requested, pods scheduled" */
	pod_init(&p);
	score_node(f, &n1, &w1, 4000, 10000);
	view_add_pod(&w1, 0, 0);
	view_add_pod(&w1, 0, 0);
	assert_int_equal(fit(&c, &p, &w1), 100);

	/* "no resources requested, pods scheduled with resources": 70, 57 */
	score_node(f, &n1, &w1, 10000, 20000);
	view_add_pod(&w1, 3000, 0);
	view_add_pod(&w1, 3000, 0);
	score_node(f, &n2, &w2, 10000, 20000);
	view_add_pod(&w2, 3000, 0);
	view_add_pod(&w2, 3000, 5000);
	assert_int_equal(fit(&c, &p, &w1), 70);
	assert_int_equal(fit(&c, &p, &w2), 57);

	/* "resources requested, pods scheduled with resources": 57, 45 */
	pod_request(&p, 3000, 5000);
	score_node(f, &n1, &w1, 10000, 20000);
	view_add_pod(&w1, 3000, 0);
	score_node(f, &n2, &w2, 10000, 20000);
	view_add_pod(&w2, 3000, 5000);
	assert_int_equal(fit(&c, &p, &w1), 57);
	assert_int_equal(fit(&c, &p, &w2), 45);

	/* "resources requested, pods scheduled with resources, differently
	 * sized nodes": 57, 60 */
	n2.allocatable.v[RES_MEMORY] = 50000;
	assert_int_equal(fit(&c, &p, &w2), 60);

	/* "requested resources exceed node capacity": 50, 25 */
	pod_request(&p, 3000, 0);
	score_node(f, &n1, &w1, 4000, 10000);
	view_add_pod(&w1, 3000, 0);
	score_node(f, &n2, &w2, 4000, 10000);
	view_add_pod(&w2, 3000, 5000);
	assert_int_equal(fit(&c, &p, &w1), 50);
	assert_int_equal(fit(&c, &p, &w2), 25);

	/* "zero node resources, pods scheduled with resources": 0 */
	pod_init(&p);
	score_node(f, &n1, &w1, 0, 0);
	view_add_pod(&w1, 3000, 0);
	assert_int_equal(fit(&c, &p, &w1), 0);

	/* "nothing scheduled, resources requested with different weight on
	 * CPU and memory, differently sized nodes": 41, 50 */
	c.fit_resources[0] = (struct res_weight){RES_MEMORY, 2};
	c.fit_resources[1] = (struct res_weight){RES_CPU, 1};
	pod_request(&p, 3000, 5000);
	score_node(f, &n1, &w1, 4000, 10000);
	score_node(f, &n2, &w2, 6000, 10000);
	assert_int_equal(fit(&c, &p, &w1), 41);
	assert_int_equal(fit(&c, &p, &w2), 50);

	/* extendedResourceSet: cpu 1, memory 1, extended 1. */
	c = cfg_default();
	c.n_fit_resources = 3;
	c.fit_resources[2] = (struct res_weight){(uint8_t)f->res_ext_a, 1};
	/* "bypass extended resource if the pod does not request": 50, 50 */
	score_node(f, &n1, &w1, 6000, 10000);
	score_node(f, &n2, &w2, 6000, 10000);
	n2.allocatable.v[f->res_ext_a] = 4;
	assert_int_equal(fit(&c, &p, &w1), 50);
	assert_int_equal(fit(&c, &p, &w2), 50);
	/* "honor extended resource if the pod requests": 50, 60 */
	p.request.v[f->res_ext_a] = 2;
	n1.allocatable.v[f->res_ext_a] = 4;
	n2.allocatable.v[f->res_ext_a] = 10;
	assert_int_equal(fit(&c, &p, &w1), 50);
	assert_int_equal(fit(&c, &p, &w2), 60);

	/* "if the node doesn't have a resource": 55, 55 (extended weight 2) */
	c.fit_resources[0] = (struct res_weight){(uint8_t)f->res_ext_a, 2};
	c.fit_resources[1] = (struct res_weight){RES_CPU, 1};
	c.fit_resources[2] = (struct res_weight){RES_MEMORY, 1};
	pod_init(&p);
	pod_request(&p, 3000, 4000);
	n1.allocatable.v[f->res_ext_a] = 0;
	n2.allocatable.v[f->res_ext_a] = 4;
	assert_int_equal(fit(&c, &p, &w1), 55);
	assert_int_equal(fit(&c, &p, &w2), 55);
}

static void test_score_most_allocated(void **state)
{
	struct fx *f = *state;
	struct score_config c = cfg_default();
	struct node_spec n1, n2;
	struct view w1, w2;
	struct pod_spec p;

	c.fit_strategy = FIT_MOST_ALLOCATED;
	/* from noderesources/most_allocated_test.go
	 * TestMostAllocatedScoringStrategy: */
	/* "nothing scheduled, nothing requested": 0 */
	score_node(f, &n1, &w1, 4000, 10000);
	pod_init(&p);
	assert_int_equal(fit(&c, &p, &w1), 0);

	/* "nothing scheduled, resources requested, differently sized nodes":
	 * 62, 50 */
	pod_request(&p, 3000, 5000);
	score_node(f, &n2, &w2, 6000, 10000);
	assert_int_equal(fit(&c, &p, &w1), 62);
	assert_int_equal(fit(&c, &p, &w2), 50);

	/* "no resources requested, pods scheduled with resources": 30, 42 */
	pod_init(&p);
	score_node(f, &n1, &w1, 10000, 20000);
	view_add_pod(&w1, 3000, 0);
	view_add_pod(&w1, 3000, 0);
	score_node(f, &n2, &w2, 10000, 20000);
	view_add_pod(&w2, 3000, 0);
	view_add_pod(&w2, 3000, 5000);
	assert_int_equal(fit(&c, &p, &w1), 30);
	assert_int_equal(fit(&c, &p, &w2), 42);

	/* "resources requested, pods scheduled with resources": 42, 55 */
	pod_request(&p, 3000, 5000);
	score_node(f, &n1, &w1, 10000, 20000);
	view_add_pod(&w1, 3000, 0);
	score_node(f, &n2, &w2, 10000, 20000);
	view_add_pod(&w2, 3000, 5000);
	assert_int_equal(fit(&c, &p, &w1), 42);
	assert_int_equal(fit(&c, &p, &w2), 55);

	/* "resources requested equal node capacity": 95, 75 */
	pod_request(&p, 5000, 9000);
	score_node(f, &n1, &w1, 5000, 10000);
	score_node(f, &n2, &w2, 10000, 9000);
	assert_int_equal(fit(&c, &p, &w1), 95);
	assert_int_equal(fit(&c, &p, &w2), 75);

	/* "nothing scheduled, resources requested, differently sized nodes"
	 * with memory weight 2: 58, 50 */
	c.fit_resources[0] = (struct res_weight){RES_MEMORY, 2};
	c.fit_resources[1] = (struct res_weight){RES_CPU, 1};
	pod_request(&p, 3000, 5000);
	score_node(f, &n1, &w1, 4000, 10000);
	score_node(f, &n2, &w2, 6000, 10000);
	assert_int_equal(fit(&c, &p, &w1), 58);
	assert_int_equal(fit(&c, &p, &w2), 50);

	/* "no resources requested, pods scheduled, nonzero request for
	 * resource": containers without requests count 100m / 200Mi;
	 * node1 (two such pods) 80, node2 30. */
	c = cfg_default();
	c.fit_strategy = FIT_MOST_ALLOCATED;
	pod_init(&p);
	pod_request(&p, -1, -1);
	score_node(f, &n1, &w1, 250, 1000LL * 1024 * 1024);
	view_add_pod(&w1, -1, -1);
	view_add_pod(&w1, -1, -1);
	score_node(f, &n2, &w2, 250, 1000LL * 1024 * 1024);
	assert_int_equal(fit(&c, &p, &w1), 80);
	assert_int_equal(fit(&c, &p, &w2), 30);

	/* extendedResourceSet */
	c.n_fit_resources = 3;
	c.fit_resources[2] = (struct res_weight){(uint8_t)f->res_ext_a, 1};
	/* "bypass extended resource if the pod does not request": 50, 50 */
	pod_init(&p);
	pod_request(&p, 3000, 5000);
	score_node(f, &n1, &w1, 6000, 10000);
	score_node(f, &n2, &w2, 6000, 10000);
	n2.allocatable.v[f->res_ext_a] = 4;
	assert_int_equal(fit(&c, &p, &w1), 50);
	assert_int_equal(fit(&c, &p, &w2), 50);
	/* "honor extended resource if the pod request": 50, 40 */
	p.request.v[f->res_ext_a] = 2;
	n1.allocatable.v[f->res_ext_a] = 4;
	n2.allocatable.v[f->res_ext_a] = 10;
	assert_int_equal(fit(&c, &p, &w1), 50);
	assert_int_equal(fit(&c, &p, &w2), 40);

	/* "if the node doesn't have a resource": 45, 45 */
	c.fit_resources[0] = (struct res_weight){(uint8_t)f->res_ext_a, 2};
	c.fit_resources[1] = (struct res_weight){RES_CPU, 1};
	c.fit_resources[2] = (struct res_weight){RES_MEMORY, 1};
	pod_init(&p);
	pod_request(&p, 3000, 4000);
	n1.allocatable.v[f->res_ext_a] = 0;
	n2.allocatable.v[f->res_ext_a] = 4;
	assert_int_equal(fit(&c, &p, &w1), 45);
	assert_int_equal(fit(&c, &p, &w2), 45);

	/* from resource_allocation.go semantics: "pods" in the list is
	 * ignored, and ephemeral-storage uses actual requests. */
	c = cfg_default();
	c.n_fit_resources = 1;
	c.fit_resources[0] = (struct res_weight){RES_PODS, 1};
	assert_int_equal(fit(&c, &p, &w1), 0);
	c.fit_resources[0] = (struct res_weight){RES_EPHEMERAL, 1};
	n1.allocatable.v[RES_EPHEMERAL] = 1000;
	w1.used.v[RES_EPHEMERAL] = 250;
	p.request.v[RES_EPHEMERAL] = 250;
	assert_int_equal(fit(&c, &p, &w1), 50); /* least: (1000 - 500) / 1000 */
}

static void test_score_balanced(void **state)
{
	struct fx *f = *state;
	struct score_config c = cfg_default();
	struct node_spec n1, n2;
	struct view w1, w2;
	struct pod_spec p;

	/* from noderesources/balanced_allocation_test.go
	 * TestNodeResourcesBalancedAllocation; its pods: cpuOnly (3000m,
	 * memory 0) on node1, cpuAndMemory (3000m, 5000) on node2,
	 * cpuAndMemoryAndGPU (3000m, 5000, 3 GPU). */

	/* "nothing scheduled, nothing requested, skip in PreScore" */
	pod_init(&p);
	assert_true(score_balanced_skips(&c, &p));
	/* BalancedAllocation uses actual requests: stand-ins do not count. */
	pod_request(&p, -1, -1);
	assert_true(score_balanced_skips(&c, &p));

	/* "nothing scheduled, resources requested, differently sized nodes":
	 * 87, 100 */
	pod_request(&p, 3000, 5000);
	assert_false(score_balanced_skips(&c, &p));
	score_node(f, &n1, &w1, 4000, 10000);
	score_node(f, &n2, &w2, 6000, 10000);
	assert_int_equal(score_balanced(&c, &p, &w1.v), 87);
	assert_int_equal(score_balanced(&c, &p, &w2.v), 100);

	/* "resources requested, pods scheduled with resources": 82, 95 */
	score_node(f, &n1, &w1, 10000, 20000);
	view_add_pod(&w1, 3000, 0);
	score_node(f, &n2, &w2, 10000, 20000);
	view_add_pod(&w2, 3000, 5000);
	assert_int_equal(score_balanced(&c, &p, &w1.v), 82);
	assert_int_equal(score_balanced(&c, &p, &w2.v), 95);

	/* "resources requested, pods scheduled with resources, differently
	 * sized nodes": 82, 80 */
	n2.allocatable.v[RES_MEMORY] = 50000;
	assert_int_equal(score_balanced(&c, &p, &w2.v), 80);

	/* "requested resources at node capacity": pod cpuOnly; 50, 75 */
	pod_request(&p, 3000, 0);
	score_node(f, &n1, &w1, 6000, 10000);
	view_add_pod(&w1, 3000, 0);
	score_node(f, &n2, &w2, 6000, 10000);
	view_add_pod(&w2, 3000, 5000);
	assert_int_equal(score_balanced(&c, &p, &w1.v), 50);
	assert_int_equal(score_balanced(&c, &p, &w2.v), 75);

	/* "include scalar resource on a node for balanced resource
	 * allocation": pod {memory 0, gpu 1}; cpu, memory, gpu; nodes 3500m,
	 * 40000, 8 GPU; node1 holds cpuAndMemoryAndGPU, node2 cpuAndMemory:
	 * 70, 65 (the three-resource standard deviation). */
	c.n_balanced_resources = 3;
	c.balanced_resources[2] = (struct res_weight){(uint8_t)f->res_gpu, 1};
	pod_init(&p);
	p.request.v[f->res_gpu] = 1;
	assert_false(score_balanced_skips(&c, &p));
	score_node(f, &n1, &w1, 3500, 40000);
	n1.allocatable.v[f->res_gpu] = 8;
	view_add_pod(&w1, 3000, 5000);
	w1.used.v[f->res_gpu] = 3;
	score_node(f, &n2, &w2, 3500, 40000);
	n2.allocatable.v[f->res_gpu] = 8;
	view_add_pod(&w2, 3000, 5000);
	assert_int_equal(score_balanced(&c, &p, &w1.v), 70);
	assert_int_equal(score_balanced(&c, &p, &w2.v), 65);

	/* "node without the scalar resource should skip the scalar resource":
	 * pod cpuAndMemory, nothing scheduled; 63, 63 */
	pod_init(&p);
	pod_request(&p, 3000, 5000);
	score_node(f, &n1, &w1, 3500, 40000);
	n1.allocatable.v[f->res_gpu] = 8;
	score_node(f, &n2, &w2, 3500, 40000);
	assert_int_equal(score_balanced(&c, &p, &w1.v), 63);
	assert_int_equal(score_balanced(&c, &p, &w2.v), 63);

	/* from balanced_allocation.go semantics: a fraction over 1 (a node
	 * already overcommitted) is capped at 1: cpu 9000/6000 -> 1, memory
	 * 0 -> std 0.5, score 50 (uncapped it would be 25). */
	c.n_balanced_resources = 2;
	pod_init(&p);
	pod_request(&p, 3000, 0);
	score_node(f, &n1, &w1, 6000, 10000);
	view_add_pod(&w1, 6000, 0);
	assert_int_equal(score_balanced(&c, &p, &w1.v), 50);

	/* from balanced_allocation.go semantics: one resource left gives
	 * std 0, score 100; none left, also 100. */
	c.n_balanced_resources = 1;
	assert_int_equal(score_balanced(&c, &p, &w1.v), 100);
	c.n_balanced_resources = 0;
	assert_int_equal(score_balanced(&c, &p, &w1.v), 100);
	assert_true(score_balanced_skips(&c, &p));
}

/* ------------------------------------------------------------------ */
/* DefaultNormalizeScore                                                */

static void test_normalize(void **state)
{
	(void)state;
	/* from helper/normalize_score_test.go TestDefaultNormalizeScore: */
	struct {
		int64_t in[4];
		bool reverse;
		int64_t want[4];
	} cases[] = {
		{{10, 20, 30, 40}, false, {25, 50, 75, 100}},
		{{10, 20, 30, 40}, true, {75, 50, 25, 0}},
		{{1000, 10, 20, 30}, false, {100, 1, 2, 3}},
		{{1000, 10, 20, 30}, true, {0, 99, 98, 97}},
		{{1, 1, 1, 1}, false, {100, 100, 100, 100}},
		{{1, 1, 1, 1}, true, {0, 0, 0, 0}},
		{{0, 0, 0, 0}, false, {0, 0, 0, 0}},
		{{0, 0, 0, 0}, true, {100, 100, 100, 100}},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		score_normalize(cases[i].in, 4, cases[i].reverse);
		assert_memory_equal(cases[i].in, cases[i].want, sizeof(cases[i].want));
	}
	score_normalize(NULL, 0, true); /* no scores: nothing to do */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unschedulable),
		cmocka_unit_test(test_score_shape),
		cmocka_unit_test(test_node_name),
		cmocka_unit_test(test_toleration_tolerates),
		cmocka_unit_test(test_filter_taints),
		cmocka_unit_test(test_score_taints),
		cmocka_unit_test(test_affinity_node_selector),
		cmocka_unit_test(test_affinity_operators),
		cmocka_unit_test(test_affinity_terms),
		cmocka_unit_test(test_affinity_match_fields),
		cmocka_unit_test(test_affinity_invalid_requirement),
		cmocka_unit_test(test_affinity_terms_conflict),
		cmocka_unit_test(test_score_affinity),
		cmocka_unit_test(test_ports),
		cmocka_unit_test(test_fit_enough),
		cmocka_unit_test(test_fit_pods_count),
		cmocka_unit_test(test_filter_node_order),
		cmocka_unit_test(test_reason_format),
		cmocka_unit_test(test_score_least_allocated),
		cmocka_unit_test(test_score_requested_to_capacity_ratio),
		cmocka_unit_test(test_added_affinity),
		cmocka_unit_test(test_score_most_allocated),
		cmocka_unit_test(test_score_balanced),
		cmocka_unit_test(test_normalize),
	};
	return cmocka_run_group_tests(tests, fx_setup, fx_teardown);
}
