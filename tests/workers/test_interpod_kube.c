/* unit.interpod_kube: kube-scheduler's own plugin tests for InterPodAffinity
 * and PodTopologySpread, ported case by case as Node and Pod JSON, run
 * through the real decoder (ingest/k8s_json.h) and the plugins as the
 * engine calls them (workers/interpod.h).
 *
 * The cases live in tests/workers/kube_cases/, one file per upstream test
 * file (the directory is this program's first argument; meson passes it).
 * A file is one JSON object:
 *
 *   "upstream":      {repo, path, commit} of the Go test file ported
 *   "ported", "skipped_count": how many cases of each (checked here)
 *   "cases": [ {
 *     "test":  the Go test function, e.g. "TestSingleConstraint"
 *     "name":  the `name:` of its table entry, verbatim
 *     "plugin": "InterPodAffinity" or "PodTopologySpread": the plugin the
 *              upstream test runs (a filter refusal must be that plugin's)
 *     "note":  optional, what the translation had to decide
 *     "args":  optional, the plugin args the upstream case sets:
 *              hardPodAffinityWeight (int), ignorePreferredTermsOfExistingPods
 *              (bool), defaultingType ("System" or "List", the latter with
 *              no defaultConstraints); absent ones take kube's v1 defaults
 *     "nodes": [Node JSON], the snapshot's nodes, in the upstream order
 *     "pods":  [Pod JSON], the existing pods; spec.nodeName binds each
 *              (a pod bound to no listed node is not counted, as a
 *              kube snapshot node with no Node object is skipped)
 *     "pod":   Pod JSON, the incoming pod
 *     and exactly one expectation:
 *     "filter":  {node name: "pass" or kube's reason text}: PreFilter, then
 *                Filter on each named node (a PreFilter Skip is "pass")
 *     "score":   {node name: normalized score 0..100}: PreFilter (which
 *                PreScore builds on here), PreScore over the scored nodes
 *                (every node but "failedNodes", in order), Score, then
 *                NormalizeScore; a PreScore Skip scores 0 everywhere, as
 *                the framework then adds nothing for the plugin
 *     "failedNodes": optional with "score": nodes in the snapshot that
 *                PreScore is not given (upstream's failedNodes)
 *     "refused": a substring of the decoder's error: the incoming pod breaks
 *                kube-apiserver's validation, and shmsched's decoder
 *                refuses it (the upstream case expects it unschedulable)
 *   } ]
 *   "skipped": [ {test, name, reason} ]: cases that cannot be expressed
 *              as Node and Pod JSON, each with why
 *
 * To add a case: copy one, change its objects and expectation, and bump
 * "ported". Each case gets a fresh intern table, cluster and ledger, built
 * as `shmsched place --cluster` builds them (nodes as one snapshot, bound
 * pods through ledger_account). A mismatch prints the case and node and
 * fails the test at the end, after every case has run. */
#define _LGPL_SOURCE 1

#include <dirent.h>
#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <urcu/urcu-qsbr.h>

#include <cmocka.h>

#include "ingest/ingest.h"
#include "shm/shm.h"
#include "workers/workers.h"

#define MAX_NODES 64
#define MAX_PODS 256

static const char *cases_dir;

/* --- one world: the decoded nodes and bound pods -------------------------- */

struct world {
	struct intern *strings;
	struct res_names res;
	struct plugin_ctx ctx;
	struct node_event nodes[MAX_NODES];
	size_t n_nodes;
	struct pod_spec pods[MAX_PODS];
	size_t n_pods;
};

static int on_node(void *arg, const struct node_spec *node, char *err, size_t err_len)
{
	struct world *w = arg;
	if (w->n_nodes >= MAX_NODES) {
		snprintf(err, err_len, "more than %d nodes in a case", MAX_NODES);
		return -ENOSPC;
	}
	w->nodes[w->n_nodes++] = (struct node_event){
		.kind = NODE_EVENT_ADD, .name = node->name, .spec = *node};
	return 0;
}

static int on_pod(void *arg, const struct pod_spec *pod,
		  const struct k8s_pod_meta *meta, char *err, size_t err_len)
{
	struct world *w = arg;
	(void)meta;
	if (w->n_pods >= MAX_PODS) {
		snprintf(err, err_len, "more than %d pods in a case", MAX_PODS);
		return -ENOSPC;
	}
	w->pods[w->n_pods++] = *pod;
	return 0;
}

/* Decodes `objs` (a JSON array of Nodes and Pods) as a cluster file. */
static int load_objects(struct world *w, const json_t *objs, char *err, size_t err_len)
{
	char *text = json_dumps(objs, JSON_COMPACT);
	if (text == NULL) {
		snprintf(err, err_len, "json_dumps failed");
		return -ENOMEM;
	}
	struct k8s_ctx kc = {.strings = w->strings, .res = &w->res, .cluster_file = true};
	struct k8s_visitor v = {.arg = w, .node = on_node, .pod = on_pod};
	int rc = k8s_load_buffer("case", text, strlen(text), &kc, &v, err, err_len);
	free(text);
	return rc;
}

/* --- a case ------------------------------------------------------------------ */

struct tally {
	unsigned cases, filters, scores, refusals, mismatches;
};

static const char *reason_text(uint8_t code)
{
	return code == 0 ? "pass" : reason_fixed_text[code];
}

static bool spread_reason(uint8_t code)
{
	return code == REASON_SPREAD_LABEL || code == REASON_SPREAD;
}

#define MISMATCH(t, file, c, ...)                                              \
	do {                                                                   \
		(t)->mismatches++;                                             \
		print_message("%s: %s / %s: ", file,                           \
			      json_string_value(json_object_get(c, "test")),   \
			      json_string_value(json_object_get(c, "name")));  \
		print_message(__VA_ARGS__);                                    \
		print_message("\n");                                           \
	} while (0)

static int64_t slot_named(const struct world *w, const struct cluster *cl,
			  const char *name)
{
	uint32_t id;
	if (!intern_find(w->strings, name, strlen(name), &id))
		return -1;
	return cluster_slot_of(cl, id);
}

static void args_of(const json_t *c, struct world *w, struct interpod_args *args)
{
	struct sched_config cfg;
	sched_config_default(&cfg);
	const json_t *a = json_object_get(c, "args");
	const json_t *v;
	if ((v = json_object_get(a, "hardPodAffinityWeight")) != NULL)
		cfg.profiles[0].score.hard_pod_affinity_weight = (int32_t)json_integer_value(v);
	if ((v = json_object_get(a, "ignorePreferredTermsOfExistingPods")) != NULL)
		cfg.profiles[0].score.ignore_preferred_terms_of_existing = json_is_true(v);
	if ((v = json_object_get(a, "defaultingType")) != NULL)
		cfg.profiles[0].score.spread_defaulting =
			strcmp(json_string_value(v), "List") == 0
				? SPREAD_DEFAULTING_LIST : SPREAD_DEFAULTING_SYSTEM;
	interpod_args_from(args, &w->ctx, &cfg.profiles[0].score);
}

static void run_case(const char *file, const json_t *c, struct tally *t)
{
	struct world *w = calloc(1, sizeof(*w));
	assert_non_null(w);
	w->strings = intern_create();
	assert_non_null(w->strings);
	res_names_init(&w->res);
	assert_int_equal(plugin_ctx_init(&w->ctx, w->strings, &w->res), 0);
	char err[512];
	const char *plugin = json_string_value(json_object_get(c, "plugin"));
	assert_non_null(plugin);
	bool want_spread = strcmp(plugin, "PodTopologySpread") == 0;
	assert_true(want_spread || strcmp(plugin, "InterPodAffinity") == 0);

	/* The snapshot: nodes, then the bound pods counted on them. */
	json_t *objs = json_array();
	const json_t *o;
	size_t i;
	json_array_foreach(json_object_get(c, "nodes"), i, o)
		json_array_append(objs, (json_t *)o);
	json_array_foreach(json_object_get(c, "pods"), i, o)
		json_array_append(objs, (json_t *)o);
	int rc = load_objects(w, objs, err, sizeof(err));
	json_decref(objs);
	if (rc < 0)
		fail_msg("%s: %s: nodes and pods do not load: %s", file,
			 json_string_value(json_object_get(c, "name")), err);
	struct cluster *cl = cluster_create(w->strings, MAX_NODES);
	assert_non_null(cl);
	char why[256];
	if (w->n_nodes > 0)
		assert_int_equal(cluster_apply(cl, w->nodes, w->n_nodes, why, sizeof(why)), 0);
	struct ledger *l = cluster_ledger(cl);
	for (size_t k = 0; k < w->n_pods; k++) {
		int64_t slot = w->pods[k].node_name != 0
			? cluster_slot_of(cl, w->pods[k].node_name) : -1;
		if (slot >= 0)
			assert_int_equal(ledger_account(l, (uint32_t)slot, &w->pods[k],
							NULL, +1), 0);
	}

	/* The incoming pod, as a pod to place. */
	struct pod_spec pod;
	char *text = json_dumps(json_object_get(c, "pod"), JSON_COMPACT);
	struct k8s_ctx kc = {.strings = w->strings, .res = &w->res};
	rc = k8s_load_one("pod", text, strlen(text), &kc, &pod, NULL, err, sizeof(err));
	free(text);
	const json_t *refused = json_object_get(c, "refused");
	if (refused != NULL) {
		t->refusals++;
		if (rc >= 0)
			MISMATCH(t, file, c, "the pod was read; want it refused (%s)",
				 json_string_value(refused));
		else if (strstr(err, json_string_value(refused)) == NULL)
			MISMATCH(t, file, c, "refused with \"%s\", want \"%s\"", err,
				 json_string_value(refused));
		goto done;
	}
	if (rc < 0) {
		MISMATCH(t, file, c, "the incoming pod does not load: %s", err);
		goto done;
	}

	struct interpod_args args;
	args_of(c, w, &args);
	const struct snapshot *s = cluster_snapshot(cl);
	struct interpod *ip = interpod_create(&w->ctx);
	assert_non_null(ip);
	/* As the engine: nothing runs unless inter-pod rules can touch the
	 * pod; then PreFilter, Filter per node, PreScore over the nodes
	 * scored, Score, NormalizeScore. */
	bool on = interpod_applies(ip, l, &pod, &args);
	if (on)
		assert_int_equal(interpod_prefilter(ip, s, l, &w->ctx, &pod, &args), 0);

	const json_t *filter = json_object_get(c, "filter");
	const char *name;
	const json_t *want;
	json_object_foreach((json_t *)filter, name, want) {
		int64_t slot = slot_named(w, cl, name);
		if (slot < 0)
			fail_msg("%s: %s: no node %s", file,
				 json_string_value(json_object_get(c, "name")), name);
		uint8_t code = on ? interpod_filter(ip, s, (uint32_t)slot) : 0;
		t->filters++;
		if (strcmp(reason_text(code), json_string_value(want)) != 0 ||
		    (code != 0 && spread_reason(code) != want_spread))
			MISMATCH(t, file, c, "node %s: got \"%s\", want \"%s\"", name,
				 reason_text(code), json_string_value(want));
	}

	const json_t *score = json_object_get(c, "score");
	if (score != NULL) {
		const json_t *failed = json_object_get(c, "failedNodes");
		uint32_t slots[MAX_NODES];
		const char *names[MAX_NODES];
		int64_t got[MAX_NODES];
		size_t n = 0;
		json_array_foreach(json_object_get(c, "nodes"), i, o) {
			const char *nm = json_string_value(
				json_object_get(json_object_get(o, "metadata"), "name"));
			bool is_failed = false;
			const json_t *f;
			size_t k;
			json_array_foreach(failed, k, f)
				is_failed |= strcmp(json_string_value(f), nm) == 0;
			if (is_failed)
				continue;
			names[n] = nm;
			slots[n++] = (uint32_t)slot_named(w, cl, nm);
		}
		if (on) {
			assert_int_equal(interpod_prescore(ip, s, l, &w->ctx, &pod, &args,
							   slots, n), 0);
			for (size_t k = 0; k < n; k++)
				got[k] = want_spread
					? interpod_score_spread(ip, s, l, slots[k])
					: interpod_score_affinity(ip, s, slots[k]);
			if (want_spread)
				interpod_normalize_spread(ip, slots, got, n);
			else
				interpod_normalize_affinity(ip, got, n);
		} else {
			for (size_t k = 0; k < n; k++)
				got[k] = 0;
		}
		if (json_object_size(score) != n)
			MISMATCH(t, file, c, "%zu scores expected, %zu nodes scored",
				 json_object_size(score), n);
		for (size_t k = 0; k < n; k++) {
			const json_t *v = json_object_get(score, names[k]);
			t->scores++;
			if (v == NULL || json_integer_value(v) != got[k])
				MISMATCH(t, file, c, "node %s: score %lld, want %lld", names[k],
					 (long long)got[k],
					 v ? (long long)json_integer_value(v) : -1LL);
		}
	}
	interpod_destroy(ip);
done:
	t->cases++;
	cluster_destroy(cl);
	intern_destroy(w->strings);
	free(w);
}

static void run_file(const char *path, const char *file, struct tally *t)
{
	json_error_t jerr;
	json_t *root = json_load_file(path, 0, &jerr);
	if (root == NULL)
		fail_msg("%s:%d: %s", path, jerr.line, jerr.text);
	const json_t *cases = json_object_get(root, "cases");
	const json_t *skipped = json_object_get(root, "skipped");
	assert_true(json_is_array(cases));
	assert_true(json_is_array(skipped));
	/* The counts at the top say what the file holds. */
	assert_int_equal(json_integer_value(json_object_get(root, "ported")),
			 json_array_size(cases));
	assert_int_equal(json_integer_value(json_object_get(root, "skipped_count")),
			 json_array_size(skipped));
	const json_t *sk;
	size_t i;
	json_array_foreach(skipped, i, sk) {
		const json_t *reason = json_object_get(sk, "reason");
		assert_true(json_is_string(json_object_get(sk, "test")));
		assert_true(json_is_string(reason) && json_string_length(reason) > 0);
	}
	unsigned before = t->mismatches;
	const json_t *c;
	json_array_foreach(cases, i, c) {
		int kinds = (json_object_get(c, "filter") != NULL) +
			    (json_object_get(c, "score") != NULL) +
			    (json_object_get(c, "refused") != NULL);
		if (kinds != 1)
			fail_msg("%s: case %zu: needs exactly one of filter, score, refused",
				 file, i);
		run_case(file, c, t);
	}
	print_message("%s: %zu cases (%u mismatches), %zu skipped\n", file,
		      json_array_size(cases), t->mismatches - before,
		      json_array_size(skipped));
	json_decref(root);
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void test_kube_cases(void **state)
{
	(void)state;
	assert_non_null(cases_dir);
	DIR *d = opendir(cases_dir);
	assert_non_null(d);
	char *files[64];
	size_t n = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		size_t len = strlen(e->d_name);
		if (len > 5 && strcmp(e->d_name + len - 5, ".json") == 0 && n < 64)
			files[n++] = strdup(e->d_name);
	}
	closedir(d);
	qsort(files, n, sizeof(files[0]), name_cmp);
	assert_true(n > 0);
	urcu_qsbr_register_thread();
	struct tally t = {0};
	for (size_t i = 0; i < n; i++) {
		char path[4096];
		snprintf(path, sizeof(path), "%s/%s", cases_dir, files[i]);
		run_file(path, files[i], &t);
		free(files[i]);
	}
	urcu_qsbr_unregister_thread();
	print_message("%u cases: %u filter results, %u scores, %u refusals checked; "
		      "%u mismatches\n", t.cases, t.filters, t.scores, t.refusals,
		      t.mismatches);
	assert_int_equal(t.mismatches, 0);
	assert_true(t.filters > 0 && t.scores > 0);
}

int main(int argc, char **argv)
{
	cases_dir = argc > 1 ? argv[1] : "tests/workers/kube_cases";
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kube_cases),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
