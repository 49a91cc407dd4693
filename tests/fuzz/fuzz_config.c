/* Fuzz target: the scheduler configuration reader (ingest/sched_config.c)
 * on arbitrary bytes, YAML or JSON. What it accepts must be usable without
 * further checks; what it refuses must leave the config and the resource
 * registry as they were, with a message. */
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
	struct sched_config cfg, before;
	struct res_names res, res_before;
	char err[256];
	memset(&cfg, 0xa5, sizeof(cfg)); /* "untouched" must be visible */
	memcpy(&before, &cfg, sizeof(cfg));
	res_names_init(&res);
	memcpy(&res_before, &res, sizeof(res));

	int rc = sched_config_load_buffer("fuzz.yaml", (const char *)data, size,
					  &cfg, &res, err, sizeof(err));
	if (rc != 0) {
		if (rc > 0 || err[0] == '\0' || strnlen(err, sizeof(err)) == sizeof(err))
			__builtin_trap();
		if (memcmp(&cfg, &before, sizeof(cfg)) != 0 ||
		    memcmp(&res, &res_before, sizeof(res)) != 0)
			__builtin_trap();
		return 0;
	}
	const struct score_config *sc = &cfg.score;
	if (cfg.percentage_of_nodes_to_score < 0 ||
	    cfg.percentage_of_nodes_to_score > 100)
		__builtin_trap();
	const int64_t w[] = {sc->weight_taint, sc->weight_affinity,
			     sc->weight_fit, sc->weight_balanced,
			     sc->weight_gpu_best_fit, sc->weight_gpu_frag};
	for (unsigned i = 0; i < sizeof(w) / sizeof(w[0]); i++)
		if (w[i] < 0 || w[i] > 100)
			__builtin_trap();
	if (sc->fit_strategy != FIT_LEAST_ALLOCATED &&
	    sc->fit_strategy != FIT_MOST_ALLOCATED)
		__builtin_trap();
	check_resources(sc->fit_resources, sc->n_fit_resources, &res);
	check_resources(sc->balanced_resources, sc->n_balanced_resources, &res);
	for (unsigned i = 0; i < sc->n_balanced_resources; i++)
		if (sc->balanced_resources[i].weight != 1)
			__builtin_trap();
	return 0;
}
