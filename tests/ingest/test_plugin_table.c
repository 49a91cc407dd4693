/* unit.plugin_table: the one plugin table (workers/plugin_table.h) against
 * kube-scheduler's, and both readers of it against the table, so that a
 * second copy of a plugin's name or default weight, re-added in the engine
 * or the configuration, fails here.
 *
 * kube's facts, cited: the default profile, its order and its weights are
 * getDefaultPlugins in pkg/scheduler/apis/config/v1/default_plugins.go
 * (kubernetes/kubernetes): MultiPoint TaintToleration 3, NodeAffinity 2,
 * NodeResourcesFit 1, PodTopologySpread 2, InterPodAffinity 2,
 * NodeResourcesBalancedAllocation 1, ImageLocality 1, the rest without a
 * weight, with DynamicResources put before DefaultPreemption by
 * applyFeatureGates (DynamicResourceAllocation, on by default since
 * v1.34); EBSLimits, GCEPDLimits and AzureDiskLimits, still in that list
 * before v1.31, are removed from v1 (invalidPluginsByVersion). The names
 * are the constants of pkg/scheduler/framework/plugins/names/names.go. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "ingest/ingest.h"
#include "ingest/sched_config_internal.h"
#include "shm/shm.h"
#include "workers/workers.h"

struct kube_default {
	const char *name;
	int weight; /* 0: listed without a weight */
};

/* default_plugins.go getDefaultPlugins, MultiPoint.Enabled, in order. */
static const struct kube_default kube_defaults[] = {
	{"SchedulingGates", 0},
	{"PrioritySort", 0},
	{"NodeUnschedulable", 0},
	{"NodeName", 0},
	{"TaintToleration", 3},
	{"NodeAffinity", 2},
	{"NodePorts", 0},
	{"NodeResourcesFit", 1},
	{"VolumeRestrictions", 0},
	{"NodeVolumeLimits", 0},
	{"VolumeBinding", 0},
	{"VolumeZone", 0},
	{"PodTopologySpread", 2},
	{"InterPodAffinity", 2},
	{"DynamicResources", 0},
	{"DefaultPreemption", 0},
	{"NodeResourcesBalancedAllocation", 1},
	{"ImageLocality", 1},
	{"DefaultBinder", 0},
};
#define N_KUBE (sizeof(kube_defaults) / sizeof(kube_defaults[0]))

/* The score plugins the engine computes (enum score_plugin), with their
 * names.go names (ours last) and kube's default weight (ours: off). */
static const struct {
	int score;
	const char *name;
	int64_t weight;
} engine_scores[] = {
	{SCORE_TAINT, "TaintToleration", 3},
	{SCORE_AFFINITY, "NodeAffinity", 2},
	{SCORE_FIT, "NodeResourcesFit", 1},
	{SCORE_SPREAD, "PodTopologySpread", 2},
	{SCORE_INTER_POD, "InterPodAffinity", 2},
	{SCORE_BALANCED, "NodeResourcesBalancedAllocation", 1},
	{SCORE_GPU_BEST_FIT, "GpuBestFit", 0},
	{SCORE_GPU_FRAG, "GpuFragmentation", 0},
};
#define N_SCORES (sizeof(engine_scores) / sizeof(engine_scores[0]))

/* The filters the engine runs (filter_node_profile, workers/plugins.h):
 * each must have one row that keeps it at FilterPlugin. */
static const char *const engine_filters[] = {
	"NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity",
	"NodePorts", "NodeResourcesFit",
};

static int rows_named(const char *name)
{
	int n = 0;
	for (int i = 0; i < PLUGIN_COUNT; i++)
		n += strcmp(plugin_table[i].name, name) == 0;
	return n;
}

static void test_default_profile_is_kubes(void **state)
{
	(void)state;
	assert_true(N_KUBE <= PLUGIN_COUNT);
	for (size_t i = 0; i < N_KUBE; i++) {
		assert_string_equal(plugin_table[i].name, kube_defaults[i].name);
		assert_int_equal(plugin_table[i].weight, kube_defaults[i].weight);
	}
	/* Past kube's list: ours, not in the default profile. */
	for (size_t i = N_KUBE; i < PLUGIN_COUNT; i++)
		assert_int_equal(plugin_table[i].weight, PLUGIN_NOT_DEFAULT);
}

static void test_one_row_per_plugin(void **state)
{
	(void)state;
	for (int i = 0; i < PLUGIN_COUNT; i++) {
		assert_int_equal(rows_named(plugin_table[i].name), 1);
		assert_int_equal(plugin_lookup(plugin_table[i].name,
					       strlen(plugin_table[i].name)), i);
		/* A score row implements Score; only a score row has a weight
		 * other than kube's 0, ImageLocality's fixed one aside. */
		if (plugin_table[i].score >= 0)
			assert_true(plugin_table[i].points &
				    PLUGIN_BIT(PLUGIN_EXT_SCORE));
		else if (!plugin_table[i].fixed_weight)
			assert_int_equal(plugin_table[i].weight, 0);
	}
	assert_int_equal(plugin_lookup("NoSuchPlugin", 12), -1);
	for (size_t f = 0; f < sizeof(engine_filters) / sizeof(engine_filters[0]); f++) {
		assert_int_equal(rows_named(engine_filters[f]), 1);
		int i = plugin_lookup(engine_filters[f], strlen(engine_filters[f]));
		assert_true(plugin_table[i].keep & PLUGIN_BIT(PLUGIN_EXT_FILTER));
	}
}

/* Every score the engine computes has exactly one row, and the engine's
 * name for it is that row's name itself (the same pointer: a second
 * list of names, even with equal text, fails). */
static void test_engine_scores_read_the_table(void **state)
{
	(void)state;
	assert_int_equal(N_SCORES, SCORE_PLUGINS);
	for (size_t k = 0; k < N_SCORES; k++) {
		int s = engine_scores[k].score, rows = 0;
		for (int i = 0; i < PLUGIN_COUNT; i++)
			rows += plugin_table[i].score == s;
		assert_int_equal(rows, 1);
		int i = plugin_of_score(s);
		assert_true(i >= 0);
		assert_string_equal(plugin_table[i].name, engine_scores[k].name);
		assert_ptr_equal(score_plugin_names[s], plugin_table[i].name);
		assert_int_equal(plugin_default_weight(s), engine_scores[k].weight);
	}
	assert_int_equal(plugin_of_score(SCORE_PLUGINS), -1);
}

/* The configuration's default profile takes its weights from the table,
 * each into its own field. */
static void test_config_defaults_read_the_table(void **state)
{
	(void)state;
	struct sched_config cfg;
	sched_config_default(&cfg);
	struct score_config *sc = &cfg.profiles[0].score;
	for (size_t k = 0; k < N_SCORES; k++) {
		int s = engine_scores[k].score;
		int64_t *w = score_config_weight(sc, s);
		assert_non_null(w);
		assert_int_equal(w ? *w : -1, engine_scores[k].weight);
		assert_int_equal(score_plugin_enabled(sc, s), engine_scores[k].weight > 0);
		for (size_t j = 0; j < k; j++)
			assert_ptr_not_equal(w, score_config_weight(sc, engine_scores[j].score));
	}
	assert_null(score_config_weight(sc, SCORE_PLUGINS));
}

/* A file naming each score plugin sets that plugin's field: the
 * configuration's names are the table's. */
static void test_config_names_reach_their_fields(void **state)
{
	(void)state;
	struct intern *strings = intern_create();
	assert_non_null(strings);
	for (size_t k = 0; k < N_SCORES; k++) {
		char text[512], err[512] = "";
		snprintf(text, sizeof(text),
			 "apiVersion: kubescheduler.config.k8s.io/v1\n"
			 "kind: KubeSchedulerConfiguration\n"
			 "profiles:\n"
			 "- plugins:\n"
			 "    score:\n"
			 "      enabled:\n"
			 "      - name: %s\n"
			 "        weight: 7\n",
			 engine_scores[k].name);
		struct sched_config cfg;
		struct res_names res;
		res_names_init(&res);
		int rc = sched_config_load_buffer("sched.yaml", text, strlen(text), &cfg,
						  &res, strings, err, sizeof(err));
		if (rc != 0)
			fail_msg("%s: rc %d: %s", engine_scores[k].name, rc, err);
		struct score_config *sc = &cfg.profiles[0].score;
		for (size_t j = 0; j < N_SCORES; j++) {
			int64_t *w = score_config_weight(sc, engine_scores[j].score);
			assert_non_null(w);
			assert_int_equal(w ? *w : -1, j == k ? 7 : engine_scores[j].weight);
		}
	}
	intern_destroy(strings);
}

/* The args table (ingest/sched_config_args.c) names plugins by the one
 * table's names: each entry a row of plugin_table, once; its kind is the
 * plugin's name and "Args" (kube's rule for every args type); each field
 * has a setter and every field is named once. */
static void test_args_table_names_rows(void **state)
{
	(void)state;
	unsigned n = 0;
	for (const struct args_kind *k = scfg_args_table; k->plugin != NULL; k++, n++) {
		assert_int_equal(rows_named(k->plugin), 1);
		assert_ptr_equal(scfg_args_of(k->plugin, strlen(k->plugin)), k);
		char want[96];
		snprintf(want, sizeof(want), "%sArgs", k->plugin);
		assert_string_equal(k->kind, want);
		assert_true((k->fields != NULL) != (k->decode != NULL));
		for (const struct arg_field *f = k->fields; f != NULL && f->name; f++) {
			assert_non_null(f->set);
			for (const struct arg_field *g = k->fields; g < f; g++)
				assert_string_not_equal(g->name, f->name);
		}
	}
	assert_int_equal(n, 9);
	assert_null(scfg_args_of("ImageLocality", 13));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_default_profile_is_kubes),
		cmocka_unit_test(test_one_row_per_plugin),
		cmocka_unit_test(test_engine_scores_read_the_table),
		cmocka_unit_test(test_config_defaults_read_the_table),
		cmocka_unit_test(test_config_names_reach_their_fields),
		cmocka_unit_test(test_args_table_names_rows),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
