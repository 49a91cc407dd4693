/* The one table of scheduler plugins: every plugin a
 * KubeSchedulerConfiguration may name, with the extension points it
 * implements, the points shmsched always runs it at, the score of ours
 * it is (enum score_plugin), and its weight in kube-scheduler's default
 * profile. kube-scheduler keeps the names once
 * (pkg/scheduler/framework/plugins/names/names.go) and the default
 * profile with its weights once
 * (pkg/scheduler/apis/config/v1/default_plugins.go, getDefaultPlugins);
 * here both are this one table (workers/plugin_table.c), which the
 * configuration (ingest/sched_config_plugins.c: merge, multiPoint
 * expansion, the default profile's weights) and the engine's explain
 * output (score_plugin_names) read. tests/ingest/test_plugin_table.c
 * ties it to kube's values.
 *
 * Concurrency: constant data; read from any thread. */
#ifndef SHMSCHED_WORKERS_PLUGIN_TABLE_H
#define SHMSCHED_WORKERS_PLUGIN_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "workers/score_config.h"

/* The extension points of a profile's `plugins` (v1.Plugins), multiPoint
 * first, in the type's field order. */
enum plugin_ext {
	PLUGIN_EXT_MULTI_POINT = 0,
	PLUGIN_EXT_PRE_ENQUEUE,
	PLUGIN_EXT_QUEUE_SORT,
	PLUGIN_EXT_PRE_FILTER,
	PLUGIN_EXT_FILTER,
	PLUGIN_EXT_POST_FILTER,
	PLUGIN_EXT_PRE_SCORE,
	PLUGIN_EXT_SCORE,
	PLUGIN_EXT_RESERVE,
	PLUGIN_EXT_PERMIT,
	PLUGIN_EXT_PRE_BIND,
	PLUGIN_EXT_BIND,
	PLUGIN_EXT_POST_BIND,
	PLUGIN_EXT_POINTS,
};

/* The points' field names in a configuration ("multiPoint", ...), and
 * kube's interface names as its messages say them ("FilterPlugin", ...). */
extern const char *const plugin_ext_names[PLUGIN_EXT_POINTS];
extern const char *const plugin_ext_types[PLUGIN_EXT_POINTS];

#define PLUGIN_BIT(p) (1u << (p))

/* plugin_info.weight of a plugin not in kube's default profile. */
#define PLUGIN_NOT_DEFAULT (-1)

struct plugin_info {
	const char *name;   /* as a configuration spells it (names.go) */
	uint16_t points;    /* PLUGIN_BIT of each point it implements */
	uint16_t keep;      /* points shmsched always runs it at: not to disable */
	int8_t score;       /* its score (enum score_plugin), or -1: none of ours */
	int8_t weight;      /* its weight in kube's default multiPoint list (0:
			     * in it, no weight given), or PLUGIN_NOT_DEFAULT */
	bool fixed_weight;  /* a score shmsched does not compute: only its
			     * default weight (or disabling it) is accepted */
};

/* kube-scheduler's default profile in its order, then ours. */
#define PLUGIN_COUNT 21
extern const struct plugin_info plugin_table[PLUGIN_COUNT];

/* The row of the plugin named by `len` bytes at `name`, or -1. O(rows). */
int plugin_lookup(const char *name, size_t len);

/* The row of score `score` (enum score_plugin), or -1. O(rows). */
int plugin_of_score(int score);

/* The default weight of score `score` (enum score_plugin) in kube's
 * default profile; 0 for ours, which run only when a profile enables
 * them. */
int64_t plugin_default_weight(int score);

#endif
