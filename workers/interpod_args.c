/* The inter-pod plugins' arguments: kube-scheduler's defaults
 * (interpodaffinity and podtopologyspread pluginConfig, v1 defaults.go). */
#include "workers/interpod.h"

#include <string.h>

void interpod_args_from(struct interpod_args *a, const struct plugin_ctx *ctx,
			const struct score_config *sc)
{
	memset(a, 0, sizeof(*a));
	a->hard_pod_affinity_weight = 1;
	/* podtopologyspread/plugin.go systemDefaultConstraints. */
	a->system_defaulted = true;
	a->n_default_spread = 2;
	a->default_spread[0] = (struct interpod_default_spread){
		.topology_key = ctx->id_hostname_key, .max_skew = 3};
	a->default_spread[1] = (struct interpod_default_spread){
		.topology_key = ctx->id_zone_key, .max_skew = 5};
	a->score_interpod = sc->weight_inter_pod > 0;
	a->score_spread = sc->weight_spread > 0;
}
