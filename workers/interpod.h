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
 * filtering.go, scoring.go. What differs is in docs/reference/kubernetes-fields.md
 * ("Inter-pod affinity and topology spread").
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

/* Creates one thread's state, reading group encodings from ctx->strings.
 * Returns NULL with errno ENOMEM. */
struct interpod *interpod_create(const struct plugin_ctx *ctx);
void interpod_destroy(struct interpod *ip);

/* Forgets every group decoded by id and every topology column (issue 41:
 * a run-time reclaim of the intern table may give their ids to other
 * strings; workers/engine_sync.c calls it when the table's epoch moved,
 * after the classes, whose views point into the groups, were dropped). */
void interpod_forget_groups(struct interpod *ip);


/* The decoded group of id `group` (remembered), or NULL when it is 0 or
 * does not decode (a damaged string: the pod is then seen as in no
 * group). */
const struct pod_group *interpod_group(struct interpod *ip, uint32_t group);

/* Whether inter-pod rules can touch `pod` at all: its group has terms or
 * spread constraints, or default constraints apply to it, or a placed pod
 * has a term (required or preferred, affinity or anti-affinity) that
 * matches its group (the ledger's term groups, T6 in shm/ledger.c, each
 * looked at once per group). When false, the plugins pass every node and
 * score nothing, so the caller may skip them. A caller that commits
 * without the inter-pod lock reads ledger_term_epoch() before asking (see
 * ledger_interpod_watch). */
bool interpod_applies(struct interpod *ip, const struct ledger *l,
		      const struct pod_spec *pod, const struct interpod_args *args);

/* PreFilter for `pod` over every node of `s` with counts from `l`: the
 * pairs of its required affinity, its required anti-affinity, existing
 * pods' required anti-affinity against it, and its hard spread
 * constraints. Returns 0, or -ENOMEM. */
int interpod_prefilter(struct interpod *ip, const struct snapshot *s,
		       struct ledger *l, const struct plugin_ctx *ctx,
		       const struct pod_spec *pod, const struct interpod_args *args);

/* A class's inter-pod counts (workers/engine.c keeps one per class whose
 * pods are under inter-pod rules): what PreFilter and PreScore add up for
 * its pod over every node, kept from the ledger's change log instead of
 * walked per pod. A pod then costs the nodes changed since the class's
 * last pod, plus O(domains) for each hard spread constraint's minimum.
 * Built from scratch for a new snapshot generation, another group, or a
 * log the view fell too far behind. Owned by one thread, like its
 * engine. */
struct interpod_view;
struct interpod_view *interpod_view_create(void);
void interpod_view_free(struct interpod_view *v);
size_t interpod_view_bytes(const struct interpod_view *v);
/* The change log position the view has counted up to, and how many times
 * it was built from scratch (a class index that holds results read from
 * it must not run ahead of the one, and starts over on the other). */
uint64_t interpod_view_log_pos(const struct interpod_view *v);
uint64_t interpod_view_builds(const struct interpod_view *v);

/* interpod_prefilter for a pod of the view's class, from the view brought
 * up to the change log: Filter, PreScore and Score then read it as they
 * read the literal walk's counts, with the same results. Returns 0 or
 * -ENOMEM (the view then builds from scratch next time). */
int interpod_prefilter_view(struct interpod *ip, struct interpod_view *v,
			    const struct snapshot *s, struct ledger *l,
			    const struct plugin_ctx *ctx, const struct pod_spec *pod,
			    const struct interpod_args *args);

/* Filter for one node after interpod_prefilter, in kube's plugin order
 * (PodTopologySpread, then InterPodAffinity): 0 when it passes, else the
 * reason code (REASON_SPREAD_LABEL, REASON_SPREAD, REASON_POD_AFFINITY,
 * REASON_POD_ANTI_AFFINITY, REASON_EXISTING_ANTI_AFFINITY:
 * workers/plugins.h). */
uint8_t interpod_filter(const struct interpod *ip, const struct snapshot *s,
			uint32_t slot);

/* After a PreFilter: whether the two plugins can change nothing for the
 * pod on any node that passes the other filters and has every topology
 * key of its hard spread constraints (interpod_hard_keys): no required
 * affinity term, no matching pod under its anti-affinity or whose
 * anti-affinity matches it, every eligible domain's skew within maxSkew
 * (a node that passed NodeAffinity and TaintToleration is eligible under
 * any inclusion policy), and neither score runs. The engine then answers
 * as for a pod under no rule (its class index included), which is the
 * same answer. */
bool interpod_uniform(const struct interpod *ip, const struct interpod_args *args);
bool interpod_hard_keys(const struct interpod *ip, uint32_t slot);

/* After a PreFilter: whether the two plugins' filter on any node that
 * passes the other filters and has every hard constraint's key depends
 * on that node's own pods alone, and neither score runs: no required
 * affinity term, the pod's anti-affinity and the placed pods' that match
 * it only on kubernetes.io/hostname, no two nodes sharing a hostname,
 * every eligible domain's skew within maxSkew. A node's filter result
 * (interpod_filter) then changes only when its own pods do, so a class
 * index can hold it per node, updated from the change log. */
bool interpod_node_local(struct interpod *ip, const struct snapshot *s,
			 const struct interpod_args *args);

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
