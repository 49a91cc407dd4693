/* Filter and score plugins, one pod against one node: kube-scheduler's
 * semantics, literally. The engine (workers/engine.c) calls these, both in
 * its plain full scan and in its fast path, so the two cannot disagree on
 * what a plugin means.
 *
 * Sources (kubernetes/kubernetes, pkg/scheduler/framework/plugins/): each
 * function names the file whose behaviour it follows.
 *
 * Concurrency: pure functions of their arguments; call from any thread.
 */
#ifndef SHMSCHED_WORKERS_PLUGINS_H
#define SHMSCHED_WORKERS_PLUGINS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shm/shm.h"
#include "workers/score_config.h"

/* Strings the plugins compare against, interned once. */
struct plugin_ctx {
	const struct intern *strings;
	const struct res_names *res;
	uint32_t id_unschedulable_key; /* "node.kubernetes.io/unschedulable" */
	uint32_t id_metadata_name;     /* "metadata.name" */
	uint32_t id_any_ip;            /* "0.0.0.0" */
	uint32_t id_hostname_key;      /* "kubernetes.io/hostname" */
	uint32_t id_zone_key;          /* "topology.kubernetes.io/zone" */
};

/* Interns the strings above into `strings`. Returns 0 or a negative errno. */
int plugin_ctx_init(struct plugin_ctx *ctx, struct intern *strings,
		    const struct res_names *res);

/* What a filter sees of a node: its spec and what pods on it use now. */
struct node_view {
	const struct node_spec *spec;
	const struct res_vec *used;     /* actual requests; v[RES_PODS] = pods on it */
	int64_t used_nonzero_cpu_milli; /* with the 100m stand-ins, for scores */
	int64_t used_nonzero_mem_bytes; /* with the 200Mi stand-ins, for scores */
	const struct host_port *ports;  /* host ports of pods on it */
	unsigned n_ports;
	const struct device_view *dev;  /* free devices; read only for a pod
					 * that wants devices, or by device scores */
};

enum reason_code {
	REASON_UNSCHEDULABLE = 1, /* "node(s) were unschedulable" */
	REASON_NODE_NAME,         /* "node(s) didn't match the requested node name" */
	REASON_TAINT,             /* "node(s) had untolerated taint {<key>: <value>}" */
	REASON_AFFINITY,          /* "node(s) didn't match Pod's node affinity/selector" */
	REASON_PORTS,             /* "node(s) didn't have free ports for the requested pod ports" */
	REASON_TOO_MANY_PODS,     /* "Too many pods" */
	REASON_GPU_MODEL,         /* "node(s) didn't have the requested GPU model" */
	REASON_GPU,               /* "node(s) didn't have a GPU device with enough free" */
	REASON_CORES,             /* "node(s) didn't have enough free exclusive cores" */
	REASON_SPREAD_LABEL,      /* "node(s) didn't match pod topology spread constraints (missing required label)" */
	REASON_SPREAD,            /* "node(s) didn't match pod topology spread constraints" */
	REASON_POD_AFFINITY,      /* "node(s) didn't match pod affinity rules" */
	REASON_POD_ANTI_AFFINITY, /* "node(s) didn't match pod anti-affinity rules" */
	REASON_EXISTING_ANTI_AFFINITY, /* "node(s) didn't satisfy existing pods anti-affinity rules" */
	REASON_ENFORCED_AFFINITY, /* "node(s) didn't match scheduler-enforced node affinity" */
	REASON_INSUFFICIENT,      /* "Insufficient <resource name>" (last: see diagnosis.h) */
};

struct reason {
	uint8_t code;     /* enum reason_code */
	uint8_t resource; /* REASON_INSUFFICIENT: enum res_index */
	uint32_t key;     /* REASON_TAINT: the taint's key and value ids */
	uint32_t value;
};

/* At most one reason per resource plus "Too many pods". */
#define FILTER_MAX_REASONS (RES_MAX + 1)

/* --- filters, each false/0 when the node fails --- */

/* nodeunschedulable/node_unschedulable.go: passes unless spec.unschedulable
 * and the pod does not tolerate node.kubernetes.io/unschedulable:NoSchedule. */
bool filter_unschedulable(const struct plugin_ctx *ctx, const struct pod_spec *pod,
			  const struct node_spec *node);

/* nodename/node_name.go: passes when spec.nodeName is unset or equal. */
bool filter_node_name(const struct pod_spec *pod, const struct node_spec *node);

/* tainttoleration/taint_toleration.go: the index in node->taints of the
 * first NoSchedule or NoExecute taint the pod does not tolerate, or -1. */
int filter_taints(const struct pod_spec *pod, const struct node_spec *node);

/* nodeaffinity/node_affinity.go: nodeSelector AND the required terms. */
bool filter_affinity(const struct plugin_ctx *ctx, const struct pod_spec *pod,
		     const struct node_spec *node);

/* NodeAffinity PreFilter's rejection: every required term names nodes
 * by `matchFields` metadata.name In, and no name satisfies all of any one
 * term's. kube-scheduler then answers UnschedulableAndUnresolvable with
 * AFFINITY_CONFLICT_MSG before any Filter runs: its FitError is
 * "0/N nodes are available: pod affinity terms conflict." (such a pod
 * matches no node, so filter_affinity() refuses it everywhere too). */
#define AFFINITY_CONFLICT_MSG "pod affinity terms conflict"
bool affinity_terms_conflict(const struct pod_spec *pod);

/* nodeports/node_ports.go: no requested host port conflicts with one in use
 * (same protocol and port, and same IP or either IP the wildcard). */
bool filter_ports(const struct plugin_ctx *ctx, const struct pod_spec *pod,
		  const struct node_view *node);

/* noderesources/fit.go fitsRequest: writes one reason per shortfall ("Too
 * many pods" first, then each insufficient resource in index order) and
 * returns how many; 0 when it fits. Resources the pod requests 0 of are not
 * checked. */
unsigned filter_resources(const struct pod_spec *pod, const struct node_view *node,
			  struct reason out[FILTER_MAX_REASONS]);

/* DeviceModel (ours, static): the node's GPU model is in the pod's set. */
bool filter_device_model(const struct pod_spec *pod, const struct node_spec *node);

/* DeviceFit (ours, after NodeResourcesFit): shm/devices.h's rules on the
 * node's free devices. Writes at most one reason (REASON_GPU or
 * REASON_CORES); returns how many. */
unsigned filter_devices(const struct pod_spec *pod, const struct node_view *node,
			struct reason *out);

/* nodeaffinity/node_affinity.go Filter's first test: a profile's
 * addedAffinity (NodeAffinityArgs) required terms match the node. True
 * when the profile adds none. Inline: most profiles add none, and the
 * static filters ask it of every node. The added affinity is a pod
 * spec's affinity fields with no nodeSelector, so filter_affinity() is
 * its NodeSelector.Match. */
static inline bool filter_added_affinity(const struct plugin_ctx *ctx,
					 const struct score_config *profile,
					 const struct node_spec *node)
{
	return profile == NULL || !profile->has_added_affinity ||
	       !profile->added_affinity.has_required ||
	       filter_affinity(ctx, &profile->added_affinity, node);
}

/* The filters in kube-scheduler's order (NodeUnschedulable, NodeName,
 * TaintToleration, NodeAffinity (the profile's added affinity, then the
 * pod's), then our DeviceModel, NodePorts, NodeResourcesFit, then our
 * DeviceFit), stopping at the first plugin that fails, as the framework
 * does. `profile` is the pod's (NULL: no added affinity). Returns the
 * number of reasons written; 0 means the node is feasible. */
unsigned filter_node_profile(const struct plugin_ctx *ctx,
			     const struct score_config *profile,
			     const struct pod_spec *pod, const struct node_view *node,
			     struct reason out[FILTER_MAX_REASONS]);

/* filter_node_profile() for a profile that adds no node affinity. */
unsigned filter_node(const struct plugin_ctx *ctx, const struct pod_spec *pod,
		     const struct node_view *node,
		     struct reason out[FILTER_MAX_REASONS]);

/* toleration.go ToleratesTaint. */
bool toleration_tolerates(const struct toleration *t, const struct taint *taint);

/* The one table of reason texts, as kube-scheduler words them: the whole
 * text of each code that has no argument (NULL for REASON_TAINT and
 * REASON_INSUFFICIENT), and the fixed parts of the two with arguments.
 * reason_format() and the diagnosis (diagnosis.c) both write from it. */
extern const char *const reason_fixed_text[REASON_INSUFFICIENT + 1];
#define REASON_INSUFFICIENT_PREFIX "Insufficient "
#define REASON_TAINT_PREFIX "node(s) had untolerated taint {"
#define REASON_TAINTS_OTHER_TEXT "node(s) had untolerated taint(s)"

/* Writes a reason as kube-scheduler words it. Returns snprintf's result. */
/* Whether a node failing for `code` stays unschedulable whatever is
 * preempted on it: the reasons kube-scheduler's plugins return with
 * UnschedulableAndUnresolvable (NodeUnschedulable, NodeName,
 * TaintToleration, NodeAffinity, PodTopologySpread's missing label,
 * InterPodAffinity's unmatched affinity rules) and the GPU model; the
 * extender protocol's FailedAndUnresolvableNodes. The others (ports,
 * resources, devices free, skew, anti-affinity) are plain Unschedulable. */
bool reason_unresolvable(uint8_t code);

int reason_format(const struct plugin_ctx *ctx, const struct reason *r, char *buf,
		  size_t len);

/* --- scores: 0..100 (MaxNodeScore) unless said otherwise --- */

#define MAX_NODE_SCORE 100 /* framework.MaxNodeScore */

/* NodeResourcesFit's and BalancedAllocation's scores of one pod under one
 * profile, with what depends on the pod alone worked out once
 * (resource_allocation.go calculateResourceAllocatableRequest's pod side):
 * per scored resource, the pod's request (with or without the stand-ins)
 * and which of the node's used counters it adds to. score_fit() and
 * score_balanced() are a plan made and used once; a caller that scores
 * one pod against many nodes makes the plan once. */
enum score_used {
	SCORE_USED_ACTUAL = 0,      /* node->used->v[res] */
	SCORE_USED_NONZERO_CPU = 1, /* node->used_nonzero_cpu_milli */
	SCORE_USED_NONZERO_MEM = 2, /* node->used_nonzero_mem_bytes */
};

struct score_plan_res {
	uint8_t res;   /* enum res_index */
	uint8_t used;  /* enum score_used */
	int64_t pod;   /* the pod's request of it */
	int64_t weight;
};

struct score_plan {
	const struct score_config *cfg; /* the profile's: strategy and shape */
	uint8_t n_fit, n_balanced;
	struct score_plan_res fit[RES_MAX];
	struct score_plan_res balanced[RES_MAX];
};

void score_plan_init(struct score_plan *p, const struct score_config *cfg,
		     const struct pod_spec *pod);

/* The node's side (calculateResourceAllocatableRequest): its allocatable
 * of the entry's resource and the requested total with the pod, or false
 * to leave the resource out (allocatable 0). */
static inline bool score_plan_node(const struct score_plan_res *e,
				   const struct node_view *node, int64_t *alloc,
				   int64_t *req)
{
	int64_t used = e->used == SCORE_USED_NONZERO_CPU ? node->used_nonzero_cpu_milli
		     : e->used == SCORE_USED_NONZERO_MEM ? node->used_nonzero_mem_bytes
							 : node->used->v[e->res];
	*alloc = node->spec->allocatable.v[e->res];
	*req = used + e->pod;
	return *alloc != 0;
}

/* RequestedToCapacityRatio's score (plugins.c), and the population
 * standard deviation BalancedAllocation takes of more than two fractions:
 * the rarer paths of the two inline scores below. */
int64_t score_plan_rtcr(const struct score_plan *p, const struct node_view *node);
double score_balanced_std(const double *frac, unsigned n, double total);

/* NodeResourcesFit's score of the plan's pod on `node`: least_allocated.go,
 * most_allocated.go (inline: a leaf or a scan asks it of every node), or
 * RequestedToCapacityRatio. */
static inline int64_t score_plan_fit(const struct score_plan *p,
				     const struct node_view *node)
{
	if (p->cfg->fit_strategy == FIT_REQUESTED_TO_CAPACITY_RATIO)
		return score_plan_rtcr(p, node);
	bool most = p->cfg->fit_strategy == FIT_MOST_ALLOCATED;
	int64_t node_score = 0, weight_sum = 0;

	for (unsigned i = 0; i < p->n_fit; i++) {
		int64_t alloc, req, s;
		if (!score_plan_node(&p->fit[i], node, &alloc, &req))
			continue;
		if (most) /* mostRequestedScore: request capped at capacity */
			s = (req > alloc ? alloc : req) * MAX_NODE_SCORE / alloc;
		else /* leastRequestedScore: overcommitted scores 0 */
			s = req > alloc ? 0 : (alloc - req) * MAX_NODE_SCORE / alloc;
		int64_t w = p->fit[i].weight;
		node_score += s * w;
		weight_sum += w;
	}
	return weight_sum == 0 ? 0 : node_score / weight_sum;
}

/* BalancedAllocation's score of the plan's pod on `node`
 * (balanced_allocation.go, with actual requests): each resource's
 * fraction capped at 1; two resources (the default): |f0 - f1| / 2;
 * more: the population standard deviation; fewer: 0. */
static inline int64_t score_plan_balanced(const struct score_plan *p,
					  const struct node_view *node)
{
	double frac[RES_MAX];
	double total = 0;
	unsigned n = 0;

	for (unsigned i = 0; i < p->n_balanced; i++) {
		int64_t alloc, req;
		if (!score_plan_node(&p->balanced[i], node, &alloc, &req))
			continue;
		double f = (double)req / (double)alloc;
		if (f > 1)
			f = 1;
		total += f;
		frac[n++] = f;
	}
	double std = 0;
	if (n == 2) {
		std = (frac[0] - frac[1]) / 2;
		if (std < 0)
			std = -std;
	} else if (n > 2) {
		std = score_balanced_std(frac, n, total);
	}
	return (int64_t)((1 - std) * (double)MAX_NODE_SCORE);
}

/* noderesources/least_allocated.go, most_allocated.go and
 * requested_to_capacity_ratio.go through resource_allocation.go: the
 * configured strategy and resource weights, with non-zero (stand-in)
 * requests for cpu and memory. */
int64_t score_fit(const struct score_config *cfg, const struct pod_spec *pod,
		  const struct node_view *node);

/* helper/shape_score.go BuildBrokenLinearFunction over `shape` with scores
 * scaled to 0..MAX_NODE_SCORE (requested_to_capacity_ratio.go), at
 * utilization `p` (0..100). */
int64_t score_shape(const struct shape_point *shape, unsigned n, int64_t p);

/* noderesources/balanced_allocation.go with actual requests. */
int64_t score_balanced(const struct score_config *cfg, const struct pod_spec *pod,
		       const struct node_view *node);

/* balanced_allocation.go PreScore: true (skip the plugin for this pod) when
 * the pod requests none of the configured resources. */
bool score_balanced_skips(const struct score_config *cfg, const struct pod_spec *pod);

/* nodeaffinity Score before normalising: the sum of the weights of the
 * preferred terms the node matches. */
int64_t score_affinity_raw(const struct plugin_ctx *ctx, const struct pod_spec *pod,
			   const struct node_spec *node);

/* tainttoleration Score before normalising: the number of PreferNoSchedule
 * taints the pod does not tolerate. */
int64_t score_taint_raw(const struct pod_spec *pod, const struct node_spec *node);

/* Device scores keep thousandths of a point, so close candidates do not
 * tie: a total is in these units (other scores count SCORE_FINE each). */
#define SCORE_FINE 1000

/* GpuBestFit (ours; the FGD paper's BestFit), in thousandths:
 * 100 * (1 - cpu left after / 2 cpu_max - GPU milli left after / 2 gpu_max),
 * where cpu_max and gpu_max are the largest node's (gpu_max 0: no GPU
 * term). Least left over scores most. */
int64_t score_gpu_best_fit(const struct pod_spec *pod, const struct node_view *node,
			   int64_t cpu_max, int64_t gpu_max);

/* GpuFragmentation (ours; FGD's score), in thousandths: 100 *
 * sigmoid(-growth / 1000), growth being the mix-weighted fragmented GPU
 * milli per pod of the mix the placement adds (workers/frag.c); 50 for no
 * change. */
int64_t score_gpu_frag_of_growth(int64_t growth, uint64_t mix_total);

/* helper/normalize_score.go DefaultNormalizeScore(100, reverse, scores). */
void score_normalize(int64_t *scores, size_t n, bool reverse);

#endif
