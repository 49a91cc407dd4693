/* The one table of scheduler plugins (see plugin_table.h).
 *
 * What: each plugin's row, kube-scheduler's default profile first, in
 * getDefaultPlugins' order (default_plugins.go, with DynamicResources,
 * on by default since v1.34, before DefaultPreemption as
 * applyFeatureGates puts it), then ours. The points each implements are
 * its Go type's interfaces. The engine's score names (score_plugin_names,
 * indexed by enum score_plugin) are not a second list: each entry points
 * at the name of its row (the NAME_ constants below, as names.go's), and
 * tests/ingest/test_plugin_table.c checks that every score has exactly
 * one row and that the pointers are the row's.
 *
 * Cost: lookups scan the 21 rows; they run while a configuration is read
 * and when explain output is written, never per node. */
#include "workers/plugin_table.h"

#include <string.h>

const char *const plugin_ext_names[PLUGIN_EXT_POINTS] = {
	"multiPoint", "preEnqueue", "queueSort", "preFilter", "filter",
	"postFilter", "preScore", "score", "reserve", "permit", "preBind",
	"bind", "postBind",
};

const char *const plugin_ext_types[PLUGIN_EXT_POINTS] = {
	"MultiPoint", "PreEnqueuePlugin", "QueueSortPlugin", "PreFilterPlugin",
	"FilterPlugin", "PostFilterPlugin", "PreScorePlugin", "ScorePlugin",
	"ReservePlugin", "PermitPlugin", "PreBindPlugin", "BindPlugin",
	"PostBindPlugin",
};

/* The names of the score plugins, once: the table's rows and
 * score_plugin_names both point here. */
static const char NAME_TAINT[] = "TaintToleration";
static const char NAME_AFFINITY[] = "NodeAffinity";
static const char NAME_FIT[] = "NodeResourcesFit";
static const char NAME_SPREAD[] = "PodTopologySpread";
static const char NAME_INTER_POD[] = "InterPodAffinity";
static const char NAME_BALANCED[] = "NodeResourcesBalancedAllocation";
static const char NAME_GPU_BEST_FIT[] = "GpuBestFit";
static const char NAME_GPU_FRAG[] = "GpuFragmentation";

const char *const score_plugin_names[SCORE_PLUGINS] = {
	[SCORE_TAINT] = NAME_TAINT,
	[SCORE_AFFINITY] = NAME_AFFINITY,
	[SCORE_FIT] = NAME_FIT,
	[SCORE_SPREAD] = NAME_SPREAD,
	[SCORE_INTER_POD] = NAME_INTER_POD,
	[SCORE_BALANCED] = NAME_BALANCED,
	[SCORE_GPU_BEST_FIT] = NAME_GPU_BEST_FIT,
	[SCORE_GPU_FRAG] = NAME_GPU_FRAG,
};

#define AT(p) PLUGIN_BIT(PLUGIN_EXT_##p)
#define PF_F (AT(PRE_FILTER) | AT(FILTER))
#define PS_S (AT(PRE_SCORE) | AT(SCORE))

const struct plugin_info plugin_table[PLUGIN_COUNT] = {
	{"SchedulingGates", AT(PRE_ENQUEUE), AT(PRE_ENQUEUE), -1, 0, false},
	{"PrioritySort", AT(QUEUE_SORT), AT(QUEUE_SORT), -1, 0, false},
	{"NodeUnschedulable", AT(FILTER), AT(FILTER), -1, 0, false},
	{"NodeName", AT(FILTER), AT(FILTER), -1, 0, false},
	{NAME_TAINT, AT(FILTER) | PS_S, AT(FILTER), SCORE_TAINT, 3, false},
	{NAME_AFFINITY, PF_F | PS_S, PF_F, SCORE_AFFINITY, 2, false},
	{"NodePorts", PF_F, PF_F, -1, 0, false},
	{NAME_FIT, PF_F | PS_S, PF_F, SCORE_FIT, 1, false},
	{"VolumeRestrictions", PF_F, 0, -1, 0, false},
	{"NodeVolumeLimits", PF_F, 0, -1, 0, false},
	{"VolumeBinding", PF_F | PS_S | AT(RESERVE) | AT(PRE_BIND), 0, -1, 0, false},
	{"VolumeZone", PF_F, 0, -1, 0, false},
	{NAME_SPREAD, PF_F | PS_S, PF_F, SCORE_SPREAD, 2, false},
	{NAME_INTER_POD, PF_F | PS_S, PF_F, SCORE_INTER_POD, 2, false},
	{"DynamicResources", AT(PRE_ENQUEUE) | PF_F | AT(POST_FILTER) | AT(RESERVE) |
	 AT(PRE_BIND), 0, -1, 0, false},
	{"DefaultPreemption", AT(PRE_ENQUEUE) | AT(POST_FILTER), 0, -1, 0, false},
	{NAME_BALANCED, PS_S, 0, SCORE_BALANCED, 1, false},
	{"ImageLocality", AT(SCORE), 0, -1, 1, true},
	{"DefaultBinder", AT(BIND), AT(BIND), -1, 0, false},
	{NAME_GPU_BEST_FIT, AT(SCORE), 0, SCORE_GPU_BEST_FIT, PLUGIN_NOT_DEFAULT, false},
	{NAME_GPU_FRAG, AT(SCORE), 0, SCORE_GPU_FRAG, PLUGIN_NOT_DEFAULT, false},
};

int plugin_lookup(const char *name, size_t len)
{
	for (int i = 0; i < PLUGIN_COUNT; i++)
		if (strlen(plugin_table[i].name) == len &&
		    memcmp(plugin_table[i].name, name, len) == 0)
			return i;
	return -1;
}

int plugin_of_score(int score)
{
	for (int i = 0; i < PLUGIN_COUNT; i++)
		if (plugin_table[i].score == score)
			return i;
	return -1;
}

int64_t plugin_default_weight(int score)
{
	int i = plugin_of_score(score);
	return i < 0 || plugin_table[i].weight == PLUGIN_NOT_DEFAULT ?
		       0 : plugin_table[i].weight;
}
