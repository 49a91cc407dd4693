/* The inter-pod plugins' arguments, from a profile's pluginConfig
 * (ingest/sched_config.h; defaults as kube's v1 defaults.go). */
#include "workers/interpod.h"

#include <string.h>

static void set_default(struct spread_default *d, uint32_t key, int32_t max_skew,
			bool hard, int32_t min_domains, uint8_t affinity_policy,
			uint8_t taints_policy)
{
	memset(d, 0, sizeof(*d));
	d->topology_key = key;
	d->max_skew = max_skew;
	d->hard = hard;
	d->min_domains = min_domains;
	d->node_affinity_policy = affinity_policy;
	d->node_taints_policy = taints_policy;
}

void interpod_args_from(struct interpod_args *a, const struct plugin_ctx *ctx,
			const struct score_config *sc)
{
	memset(a, 0, sizeof(*a));
	a->hard_pod_affinity_weight = sc->hard_pod_affinity_weight;
	a->ignore_preferred_terms_of_existing = sc->ignore_preferred_terms_of_existing;
	a->score_interpod = sc->weight_inter_pod > 0;
	a->score_spread = sc->weight_spread > 0;
	if (sc->spread_defaulting == SPREAD_DEFAULTING_LIST) {
		/* The profile's own list (none: no default spreading). */
		unsigned n = sc->n_default_spread;
		if (n > INTERPOD_MAX_DEFAULT_SPREAD)
			n = INTERPOD_MAX_DEFAULT_SPREAD;
		for (unsigned i = 0; i < n; i++) {
			const struct spread_default *c = &sc->default_spread[i];
			set_default(&a->default_spread[i], c->topology_key, c->max_skew,
				    c->hard, c->min_domains, c->node_affinity_policy,
				    c->node_taints_policy);
		}
		a->n_default_spread = n;
		return;
	}
	/* podtopologyspread/plugin.go systemDefaultConstraints. */
	a->system_defaulted = true;
	a->n_default_spread = 2;
	set_default(&a->default_spread[0], ctx->id_hostname_key, 3, false, 1,
		    SPREAD_POLICY_HONOR, SPREAD_POLICY_IGNORE);
	set_default(&a->default_spread[1], ctx->id_zone_key, 5, false, 1,
		    SPREAD_POLICY_HONOR, SPREAD_POLICY_IGNORE);
}
