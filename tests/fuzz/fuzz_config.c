/* Fuzz target: the scheduler configuration reader (ingest/sched_config*.c)
 * on arbitrary bytes, YAML or JSON. What it accepts must be usable without
 * further checks; what it refuses must leave the config and the resource
 * registry (and the string table) as they were, with a message. Every
 * profile it accepts has a unique name that maps back to it. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ingest/ingest.h"
#include "shm/shm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_resources(const struct res_weight *r, unsigned n,
			    const struct res_names *res)
{
	if (n == 0 || n > RES_MAX)
		__builtin_trap();
	for (unsigned i = 0; i < n; i++) {
		if (r[i].resource >= res->count || r[i].weight < 1 ||
		    r[i].weight > 100)
			__builtin_trap();
		for (unsigned j = 0; j < i; j++)
			if (r[j].resource == r[i].resource)
				__builtin_trap();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct sched_config cfg, before; /* some 40 KiB each */
	struct res_names res, res_before;
	char err[1024];
	memset(&cfg, 0xa5, sizeof(cfg)); /* "untouched" must be visible */
	memcpy(&before, &cfg, sizeof(cfg));
	res_names_init(&res);
	memcpy(&res_before, &res, sizeof(res));
	/* A fresh table per input: a refused file must leave it as it was. */
	struct intern *strings = intern_create();
	if (strings == NULL)
		return 0;
	uint32_t strings_before = intern_count(strings);

	int rc = sched_config_load_buffer("fuzz.yaml", (const char *)data, size,
					  &cfg, &res, strings, err, sizeof(err));
	if (rc != 0) {
		if (rc > 0 || err[0] == '\0' || strnlen(err, sizeof(err)) == sizeof(err))
			__builtin_trap();
		if (memcmp(&cfg, &before, sizeof(cfg)) != 0 ||
		    memcmp(&res, &res_before, sizeof(res)) != 0 ||
		    intern_count(strings) != strings_before)
			__builtin_trap();
		intern_destroy(strings);
		return 0;
	}
	if (cfg.percentage_of_nodes_to_score < 0 ||
	    cfg.percentage_of_nodes_to_score > 100 || cfg.n_profiles < 1 ||
	    cfg.n_profiles > SCHED_MAX_PROFILES)
		__builtin_trap();
	for (uint32_t p = 0; p < cfg.n_profiles; p++) {
		const struct sched_profile *prof = &cfg.profiles[p];
		const struct score_config *sc = &prof->score;
		/* A name, unique, that maps back to this profile. */
		size_t name_len = strnlen(prof->scheduler_name, SCHED_NAME_MAX + 1);
		if (name_len == 0 || name_len > SCHED_NAME_MAX ||
		    sched_profile_of(&cfg, prof->scheduler_name, name_len) != (int)p)
			__builtin_trap();
		if (prof->percentage_of_nodes_to_score < -1 ||
		    prof->percentage_of_nodes_to_score > 100)
			__builtin_trap();
		const int64_t w[] = {sc->weight_taint, sc->weight_affinity,
				     sc->weight_fit, sc->weight_balanced,
				     sc->weight_spread, sc->weight_inter_pod,
				     sc->weight_gpu_best_fit, sc->weight_gpu_frag};
		for (unsigned i = 0; i < sizeof(w) / sizeof(w[0]); i++)
			if (w[i] < 0 || w[i] > 100)
				__builtin_trap();
		if (sc->fit_strategy != FIT_LEAST_ALLOCATED &&
		    sc->fit_strategy != FIT_MOST_ALLOCATED &&
		    sc->fit_strategy != FIT_REQUESTED_TO_CAPACITY_RATIO)
			__builtin_trap();
		/* A shape the scorer may walk: 1..101 points, utilizations
		 * strictly increasing in 0..100, scores 0..10. */
		if (sc->fit_strategy == FIT_REQUESTED_TO_CAPACITY_RATIO &&
		    (sc->n_shape < 1 || sc->n_shape > SHAPE_MAX_POINTS))
			__builtin_trap();
		for (unsigned i = 0; i < sc->n_shape; i++)
			if (sc->shape[i].utilization > 100 ||
			    sc->shape[i].score > SHAPE_MAX_SCORE ||
			    (i > 0 && sc->shape[i].utilization <=
					      sc->shape[i - 1].utilization))
				__builtin_trap();
		check_resources(sc->fit_resources, sc->n_fit_resources, &res);
		check_resources(sc->balanced_resources, sc->n_balanced_resources, &res);
		for (unsigned i = 0; i < sc->n_balanced_resources; i++)
			if (sc->balanced_resources[i].weight != 1)
				__builtin_trap();
		if (sc->n_default_spread > SPREAD_MAX_DEFAULTS)
			__builtin_trap();
		for (unsigned i = 0; i < sc->n_default_spread; i++)
			if (sc->default_spread[i].max_skew < 1 ||
			    sc->default_spread[i].min_domains < 1 ||
			    intern_len(strings, sc->default_spread[i].topology_key) == 0)
				__builtin_trap();
		const struct pod_spec *a = &sc->added_affinity;
		if (a->n_terms > POD_MAX_TERMS || a->n_preferred > POD_MAX_PREFERRED ||
		    a->n_exprs > POD_MAX_EXPRS || a->n_values > POD_MAX_VALUES)
			__builtin_trap();
	}
	intern_destroy(strings);
	return 0;
}
