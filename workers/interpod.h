/* Inter-pod rules: kube-scheduler's InterPodAffinity and PodTopologySpread
 * plugins, for one pod against the nodes of a snapshot, literally.
 *
 * What kube-scheduler reads of every pod on every node, the ledger keeps
 * per node as pods per group (shm/ledger.h, ledger_load_groups; a group
 * is shm/pod_group.h). PreFilter and PreScore walk every node's groups
 * once per pod, as kube walks every pod, adding up topology pairs (a node
 * label key and value) into maps; Filter and Score then look a node's
 * pairs up. Matching a term against a group is remembered per group, so
 * a walk costs O(nodes + groups on them).
 *
 * Sources (kubernetes/kubernetes, pkg/scheduler/framework/plugins/):
 * interpodaffinity/filtering.go, scoring.go; podtopologyspread/common.go,
 * filtering.go, scoring.go. What differs is in the README ("Inter-pod
 * affinity and topology spread").
 *
 * Concurrency: one struct interpod per thread (an engine's). The caller
 * is an RCU reader of the snapshot for as long as it uses the results.
 * The ledger's counts move under it (other engines' commits): the walk
 * is a view, as every filter's is; the guard in bind/resolver.c makes
 * placements of pods under inter-pod rules exact.
 */
#ifndef SHMSCHED_WORKERS_INTERPOD_H
#define SHMSCHED_WORKERS_INTERPOD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shm/shm.h"
#include "workers/plugins.h"

/* A profile's arguments for the two plugins (pluginConfig). */
#define INTERPOD_MAX_DEFAULT_SPREAD SPREAD_MAX_DEFAULTS

struct interpod_args {
	/* InterPodAffinityArgs */
	int32_t hard_pod_affinity_weight;        /* default 1 */
	bool ignore_preferred_terms_of_existing; /* default false */
	/* PodTopologySpreadArgs: the constraints a pod with none of its own
	 * gets, with its group's default selector (none: no constraint).
	 * defaultingType System fills kube's system defaults here, List the
	 * profile's own defaultConstraints. */
	unsigned n_default_spread;
	struct spread_default default_spread[INTERPOD_MAX_DEFAULT_SPREAD];
	bool system_defaulted; /* defaultingType System */
	/* Whether the scores run at all (their weights are not 0). */
	bool score_interpod;
	bool score_spread;
};

/* The arguments of profile `sc`: its hardPodAffinityWeight and
 * ignorePreferredTermsOfExistingPods, System defaulting (zone maxSkew 5
 * and hostname maxSkew 3, ScheduleAnyway) or, with List, its own
 * defaultConstraints, and the scores on where it weighs them
 * (workers/interpod_args.c). */
void interpod_args_from(struct interpod_args *a, const struct plugin_ctx *ctx,
			const struct score_config *sc);

struct interpod;

/* Creates one thread's state, reading group encodings from `strings`.
 * Returns NULL with errno ENOMEM. */
struct interpod *interpod_create(const struct intern *strings);
void interpod_destroy(struct interpod *ip);

/* The decoded group of id `group` (remembered), or NULL when it is 0 or
 * does not decode (a damaged string: the pod is then seen as in no
 * group). */
const struct pod_group *interpod_group(struct interpod *ip, uint32_t group);

/* Whether inter-pod rules can touch `pod` at all: its group has terms or
 * spread constraints, or default constraints apply to it, or some placed
 * pod has terms (ledger_term_pods(l) > 0). When false, the plugins pass
 * every node and score nothing, so the caller may skip them. */
bool interpod_applies(struct interpod *ip, const struct ledger *l,
		      const struct pod_spec *pod, const struct interpod_args *args);

/* PreFilter for `pod` over every node of `s` with counts from `l`: the
 * pairs of its required affinity, its required anti-affinity, existing
 * pods' required anti-affinity against it, and its hard spread
 * constraints. Returns 0, or -ENOMEM. */
int interpod_prefilter(struct interpod *ip, const struct snapshot *s,
		       struct ledger *l, const struct plugin_ctx *ctx,
		       const struct pod_spec *pod, const struct interpod_args *args);

/* Filter for one node after interpod_prefilter, in kube's plugin order
 * (PodTopologySpread, then InterPodAffinity): 0 when it passes, else the
 * reason code (REASON_SPREAD_LABEL, REASON_SPREAD, REASON_POD_AFFINITY,
 * REASON_POD_ANTI_AFFINITY, REASON_EXISTING_ANTI_AFFINITY:
 * workers/plugins.h). */
uint8_t interpod_filter(const struct interpod *ip, const struct snapshot *s,
			uint32_t slot);

/* PreScore for the `n` nodes that passed every filter (their slots in
 * visiting order): the pairs of the pod's preferred terms and existing
 * pods' terms, and its soft spread constraints' counts. Call it after
 * interpod_prefilter for the same pod (whose per-group results it
 * reuses); for any other pod it scores nothing. Returns 0 or -ENOMEM. */
int interpod_prescore(struct interpod *ip, const struct snapshot *s,
		      struct ledger *l, const struct plugin_ctx *ctx,
		      const struct pod_spec *pod, const struct interpod_args *args,
		      const uint32_t *slots, size_t n);

/* Score of each plugin for the i-th of the prescored nodes, before
 * normalising. */
int64_t interpod_score_affinity(struct interpod *ip, const struct snapshot *s,
				uint32_t slot);
int64_t interpod_score_spread(struct interpod *ip, const struct snapshot *s,
			      struct ledger *l, uint32_t slot);

/* NormalizeScore of each plugin over the `n` prescored nodes' raw scores
 * (in the order given to interpod_prescore), in place: 0..MAX_NODE_SCORE. */
void interpod_normalize_affinity(const struct interpod *ip, int64_t *scores,
				 size_t n);
void interpod_normalize_spread(const struct interpod *ip, const uint32_t *slots,
			       int64_t *scores, size_t n);

#endif
