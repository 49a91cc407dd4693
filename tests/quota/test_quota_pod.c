/* unit.quota_pod: a pod under quota (quota/quota_pod.c), the pieces the
 * daemon (daemon/quota_charge.c) and `shmsched place` (cli/place_quota.c)
 * share: the LocalQueue from the pod's namespace and queue label, with
 * Kueue's pending reason for one that does not exist
 * (kubernetes-sigs/kueue pkg/controller/core/workload_controller.go:
 * "LocalQueue ns/name doesn't exist"); the charge (requests of the
 * resources the tree names, 1 "pods" where it names it, a resource it
 * names nowhere refused with the resource's name); a flavor's nodeLabels
 * merged into the nodeSelector (a conflicting value or a selector past
 * POD_MAX_SELECTOR refused) and checked against a node's labels.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "quota/quota.h"
#include "shm/shm.h"

#define NO QUOTA_NO_LIMIT
#define W1 QUOTA_WEIGHT_DEFAULT_MILLI

static char err[512];

struct world {
	struct quota_tree *t;
	struct intern *strings;
	struct res_names res;
	struct quota_pod_names names;
	int a, spot, plain, cpu, pods;
};

/* ClusterQueue team-a (cohort org) with flavors "spot" (nodeLabels
 * zone=z1, tier=spot) and "plain" (none), covering cpu and pods;
 * LocalQueue team-a/jobs. */
static void make(struct world *w)
{
	memset(w, 0, sizeof(*w));
	assert_int_equal(quota_tree_new(&w->t), 0);
	struct quota_tree *t = w->t;
	w->spot = quota_flavor_add(t, "spot", err, sizeof(err));
	w->plain = quota_flavor_add(t, "plain", err, sizeof(err));
	assert_int_equal(quota_flavor_label_add(t, w->spot, "zone", "z1", err,
						sizeof(err)), 0);
	assert_int_equal(quota_flavor_label_add(t, w->spot, "tier", "spot", err,
						sizeof(err)), 0);
	w->cpu = quota_resource_add(t, "cpu", err, sizeof(err));
	w->pods = quota_resource_add(t, "pods", err, sizeof(err));
	assert_true(quota_cohort_add(t, "org", NULL, W1, err, sizeof(err)) >= 0);
	w->a = quota_cluster_queue_add(t, "team-a", "org", W1, NULL, err, sizeof(err));
	assert_true(w->a >= 0 && w->cpu >= 0 && w->pods >= 0);
	for (int f = 0; f < 2; f++) {
		assert_int_equal(quota_set(t, w->a, f, w->cpu, 4000, NO, NO, err,
					   sizeof(err)), 0);
		assert_int_equal(quota_set(t, w->a, f, w->pods, 10, NO, NO, err,
					   sizeof(err)), 0);
	}
	assert_true(quota_local_queue_add(t, "team-a", "jobs", "team-a", err,
					  sizeof(err)) >= 0);
	if (quota_seal(t, err, sizeof(err)) < 0)
		fail_msg("quota_seal: %s", err);
	w->strings = intern_create();
	assert_non_null(w->strings);
	res_names_init(&w->res);
	assert_int_equal(quota_pod_names_intern(&w->names, t, w->strings), 0);
}

static void unmake(struct world *w)
{
	intern_destroy(w->strings);
	quota_tree_free(w->t);
}

static uint32_t id(struct world *w, const char *s)
{
	uint32_t v;
	assert_int_equal(intern_add_str(w->strings, s, &v), 0);
	return v;
}

/* The group id of a pod of namespace `ns` labelled key=value (none when
 * `key` is NULL). */
static uint32_t group(struct world *w, const char *ns, const char *key,
		      const char *value)
{
	struct pod_group g;
	memset(&g, 0, sizeof(g));
	g.ns = id(w, ns);
	if (key != NULL) {
		g.labels[0] = (struct label){.key = id(w, key), .value = id(w, value)};
		g.n_labels = 1;
	}
	char buf[GROUP_ENCODED_MAX];
	int n = pod_group_encode(&g, buf, sizeof(buf));
	assert_true(n > 0);
	uint32_t gid;
	assert_int_equal(intern_add(w->strings, buf, (size_t)n, &gid), 0);
	return gid;
}

static int cmp_label(const void *a, const void *b)
{
	const struct label *x = a, *y = b;
	return x->key < y->key ? -1 : x->key > y->key;
}

static void sort_labels(struct label *l, unsigned n)
{
	qsort(l, n, sizeof(l[0]), cmp_label);
}

static void test_queue(void **state)
{
	(void)state;
	struct world w;
	make(&w);
	struct pod_group scratch;
	char why[512] = "";
	int lq = 7;
	/* No group, no label, another label: under no quota. */
	assert_int_equal(quota_pod_queue(w.t, &w.names, w.strings, 0, &scratch, &lq,
					 why, sizeof(why)), QUOTA_POD_NONE);
	assert_int_equal(lq, -1);
	uint32_t g = group(&w, "team-a", NULL, NULL);
	assert_int_equal(quota_pod_queue(w.t, &w.names, w.strings, g, &scratch, &lq,
					 why, sizeof(why)), QUOTA_POD_NONE);
	g = group(&w, "team-a", "app", "jobs");
	assert_int_equal(quota_pod_queue(w.t, &w.names, w.strings, g, &scratch, NULL,
					 why, sizeof(why)), QUOTA_POD_NONE);
	assert_string_equal(why, "");
	/* Its LocalQueue: the ClusterQueue and the LocalQueue's index. */
	g = group(&w, "team-a", QUOTA_QUEUE_LABEL, "jobs");
	assert_int_equal(quota_pod_queue(w.t, &w.names, w.strings, g, &scratch, &lq,
					 why, sizeof(why)), w.a);
	assert_int_equal(lq, quota_local_queue_index(w.t, "team-a", "jobs"));
	assert_true(lq >= 0);
	/* Another namespace's: Kueue's pending reason. */
	g = group(&w, "team-b", QUOTA_QUEUE_LABEL, "jobs");
	assert_int_equal(quota_pod_queue(w.t, &w.names, w.strings, g, &scratch, &lq,
					 why, sizeof(why)), QUOTA_POD_REFUSED);
	assert_int_equal(lq, -1);
	assert_string_equal(why, "metadata.labels[\"kueue.x-k8s.io/queue-name\"]: "
			    "LocalQueue team-b/jobs doesn't exist (expected a "
			    "LocalQueue of the pod's namespace)");
	unmake(&w);
}

static void test_charge(void **state)
{
	(void)state;
	struct world w;
	make(&w);
	struct quota_pod_map map = {0};
	struct res_vec req = {0};
	int64_t out[QUOTA_MAX_RESOURCES];
	unsigned missing = 99;
	req.v[RES_CPU] = 1500;
	req.v[RES_PODS] = 5; /* ignored: a pod is 1 "pods" */
	memset(out, 0x55, sizeof(out));
	assert_int_equal(quota_pod_charge(w.t, &w.res, &map, &req, out, &missing), 0);
	assert_int_equal(out[w.cpu], 1500);
	assert_int_equal(out[w.pods], 1);
	assert_int_equal(map.count, w.res.count);
	/* A resource the tree names nowhere: its index, then its words. */
	req.v[RES_MEMORY] = 1 << 20;
	assert_int_equal(quota_pod_charge(w.t, &w.res, &map, &req, out, &missing),
			 -ENOENT);
	assert_int_equal(missing, RES_MEMORY);
	char why[512];
	quota_uncovered_message(w.t, w.a, w.res.name[missing], "the pod", why,
				sizeof(why));
	assert_string_equal(why, "ClusterQueue \"team-a\" covers no resource "
			    "\"memory\", which the pod requests (no ClusterQueue "
			    "names it)");
	/* A name added later: the map is made again for it. */
	req.v[RES_MEMORY] = 0;
	int gpu = res_register(&w.res, "example.com/gpu", strlen("example.com/gpu"));
	assert_true(gpu >= RES_FIRST_NAMED);
	req.v[gpu] = 1;
	assert_int_equal(quota_pod_charge(w.t, &w.res, &map, &req, out, &missing),
			 -ENOENT);
	assert_int_equal(missing, (unsigned)gpu);
	assert_int_equal(map.count, w.res.count);
	unmake(&w);
}

/* The map's one pass (issue 37): exactly the tree's resources written,
 * requests it does not name refused wherever they stand, the first one
 * told; a slot past res->count (no name yet) is refused too. */
static void test_charge_bounds(void **state)
{
	(void)state;
	struct world w;
	make(&w);
	struct quota_pod_map map = {0};
	struct res_vec req = {0};
	int64_t out[QUOTA_MAX_RESOURCES];
	unsigned missing = 99;
	int n = quota_n_resources(w.t);
	assert_int_equal(n, 2); /* cpu, pods */
	memset(out, 0x55, sizeof(out));
	req.v[RES_CPU] = 7;
	assert_int_equal(quota_pod_charge(w.t, &w.res, &map, &req, out, &missing), 0);
	assert_int_equal(out[w.cpu], 7);
	assert_int_equal(out[w.pods], 1);
	int64_t untouched;
	memset(&untouched, 0x55, sizeof(untouched));
	for (int r = n; r < QUOTA_MAX_RESOURCES; r++)
		assert_true(out[r] == untouched);
	/* Nothing requested but "pods": cpu charged 0, not left as it was. */
	req.v[RES_CPU] = 0;
	assert_int_equal(quota_pod_charge(w.t, &w.res, &map, &req, out, &missing), 0);
	assert_int_equal(out[w.cpu], 0);
	assert_int_equal(out[w.pods], 1);
	/* The last slot, past res->count: refused, and named. */
	assert_true(w.res.count < RES_MAX);
	req.v[RES_MAX - 1] = 1;
	assert_int_equal(quota_pod_charge(w.t, &w.res, &map, &req, out, &missing),
			 -ENOENT);
	assert_int_equal(missing, RES_MAX - 1);
	/* Two refused: the first one told. */
	req.v[RES_EPHEMERAL] = 1;
	req.v[RES_MEMORY] = 1;
	assert_int_equal(quota_pod_charge(w.t, &w.res, &map, &req, out, &missing),
			 -ENOENT);
	assert_int_equal(missing, RES_MEMORY);
	/* A negative quantity (never decoded, but bits are bits) is refused
	 * like any other where the tree names nothing. */
	memset(&req, 0, sizeof(req));
	req.v[RES_EPHEMERAL] = -1;
	assert_int_equal(quota_pod_charge(w.t, &w.res, &map, &req, out, &missing),
			 -ENOENT);
	assert_int_equal(missing, RES_EPHEMERAL);
	unmake(&w);
}

static void test_flavor_spec(void **state)
{
	(void)state;
	struct world w;
	make(&w);
	struct pod_spec pod, out;
	memset(&pod, 0, sizeof(pod));
	uint32_t app = id(&w, "app"), web = id(&w, "web"), zone = id(&w, "zone");
	uint32_t z1 = id(&w, "z1"), z2 = id(&w, "z2"), tier = id(&w, "tier");
	uint32_t spot = id(&w, "spot");
	/* The pod's selector app=web: the flavor's two labels merged in, in
	 * key order. */
	pod.selector[0] = (struct label){.key = app, .value = web};
	pod.n_selector = 1;
	assert_true(quota_pod_flavor_spec(&w.names, w.spot, &pod, &out));
	assert_int_equal(out.n_selector, 3);
	for (unsigned i = 1; i < out.n_selector; i++)
		assert_true(out.selector[i - 1].key < out.selector[i].key);
	uint32_t v;
	assert_true(labels_get(out.selector, out.n_selector, zone, &v) && v == z1);
	assert_true(labels_get(out.selector, out.n_selector, tier, &v) && v == spot);
	assert_true(labels_get(out.selector, out.n_selector, app, &v) && v == web);
	/* A flavor without nodeLabels: the pod as it is. */
	assert_true(quota_pod_flavor_spec(&w.names, w.plain, &pod, &out));
	assert_int_equal(out.n_selector, 1);
	/* The same value for a key: kept once; another value: refused. */
	pod.selector[0] = (struct label){.key = zone, .value = z1};
	pod.n_selector = 1;
	assert_true(quota_pod_flavor_spec(&w.names, w.spot, &pod, &out));
	assert_int_equal(out.n_selector, 2);
	pod.selector[0].value = z2;
	assert_false(quota_pod_flavor_spec(&w.names, w.spot, &pod, &out));
	/* A selector full already: no room for the flavor's labels. */
	memset(&pod, 0, sizeof(pod));
	for (unsigned i = 0; i < POD_MAX_SELECTOR; i++) {
		char key[16];
		snprintf(key, sizeof(key), "a%02u", i);
		pod.selector[i] = (struct label){.key = id(&w, key), .value = web};
	}
	sort_labels(pod.selector, POD_MAX_SELECTOR);
	pod.n_selector = POD_MAX_SELECTOR;
	assert_false(quota_pod_flavor_spec(&w.names, w.spot, &pod, &out));
	assert_true(quota_pod_flavor_spec(&w.names, w.plain, &pod, &out));
	assert_int_equal(out.n_selector, POD_MAX_SELECTOR);
	unmake(&w);
}

static void test_node_has_flavor(void **state)
{
	(void)state;
	struct world w;
	make(&w);
	struct label node[3] = {
		{.key = id(&w, "tier"), .value = id(&w, "spot")},
		{.key = id(&w, "zone"), .value = id(&w, "z1")},
		{.key = id(&w, "disk"), .value = id(&w, "ssd")},
	};
	sort_labels(node, 3); /* labels_get wants them sorted by key */
	assert_true(quota_pod_node_has_flavor(&w.names, w.spot, node, 3));
	assert_true(quota_pod_node_has_flavor(&w.names, w.plain, node, 0));
	assert_false(quota_pod_node_has_flavor(&w.names, w.spot, node, 0));
	for (int i = 0; i < 3; i++)
		if (node[i].key == id(&w, "zone"))
			node[i].value = id(&w, "z2");
	assert_false(quota_pod_node_has_flavor(&w.names, w.spot, node, 3));
	unmake(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_queue),
		cmocka_unit_test(test_charge),
		cmocka_unit_test(test_charge_bounds),
		cmocka_unit_test(test_flavor_spec),
		cmocka_unit_test(test_node_has_flavor),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
