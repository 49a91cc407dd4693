/* The inter-pod plugins' arguments, from a profile's pluginConfig
 * (ingest/sched_config.c; defaults as kube's v1 defaults.go). */
#include "workers/interpod.h"

#include <string.h>

void interpod_args_from(struct interpod_args *a, const struct plugin_ctx *ctx,
			const struct score_config *sc)
{
	memset(a, 0, sizeof(*a));
	a->hard_pod_affinity_weight = sc->hard_pod_affinity_weight;
	a->ignore_preferred_terms_of_existing = sc->ignore_preferred_terms_of_existing;
	a->score_interpod = sc->weight_inter_pod > 0;
	a->score_spread = sc->weight_spread > 0;
	if (sc->spread_defaulting == SPREAD_DEFAULTING_NONE)
		return; /* List with no defaultConstraints */
	/* podtopologyspread/plugin.go systemDefaultConstraints. */
	a->system_defaulted = true;
	a->n_default_spread = 2;
	a->default_spread[0] = (struct interpod_default_spread){
		.topology_key = ctx->id_hostname_key, .max_skew = 3};
	a->default_spread[1] = (struct interpod_default_spread){
		.topology_key = ctx->id_zone_key, .max_skew = 5};
}
