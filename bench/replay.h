/* Replay of the openb GPU trace through the engine, with the FGD paper's
 * protocol (docs/guides/gpu-trace.md): the trace's GPU nodes; the pods
 * shuffled with the seed, then topped up by sampling with replacement (or
 * trimmed) until the arrived GPU request would pass 130 % of the cluster's
 * GPU milli; one attempt per pod (engine_place, then commit_pod), no
 * deletions, no retries.
 *
 * Every policy is a KubeSchedulerConfiguration profile (replay.c), loaded
 * by ingest/sched_config.h as a user's file would be: the engine scores
 * with it exactly as the daemon would, percentageOfNodesToScore 100.
 *
 * Metric, as the paper's analysis: after each pod, the arrived GPU milli
 * (failed pods included) and the allocated GPU milli as % of capacity;
 * unallocated GPU % at load k = 100 - the mean allocation over the pods
 * whose arrived % rounds to k (or, where none does, within 1).
 */
#ifndef SHMSCHED_BENCH_REPLAY_H
#define SHMSCHED_BENCH_REPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bench/openb.h"

enum replay_policy {
	REPLAY_LEAST_ALLOCATED = 0,
	REPLAY_MOST_ALLOCATED,
	REPLAY_BEST_FIT,
	REPLAY_FGD,        /* mix of the whole pod list, as the paper */
	REPLAY_FGD_ONLINE, /* mix learnt from arriving pods */
	REPLAY_FGD_CPU,    /* FGD with cpuLimited shares (ours) */
	REPLAY_RANDOM,
	REPLAY_POLICIES,
};

extern const char *const replay_policy_names[REPLAY_POLICIES];
/* The paper's policy each is compared with (index in paper_policy_names,
 * -1: none). */
extern const int replay_paper_policy[REPLAY_POLICIES];

#define REPLAY_TOP_UP_PERCENT 130

/* Switches between our replay and the paper's simulator
 * (hkust-adsl/kubernetes-scheduler-simulator), one difference each, so
 * each can be measured alone (docs/guides/gpu-trace.md);
 * replay_opts_ours() gives ours. */
struct replay_opts {
	/* The node, for BestFit, FGD and FGD-online: the paper's plugins
	 * truncate their score to whole points (BestFit's then min-max
	 * normalised to 0..100) and its scheduler fork breaks ties by the
	 * lowest node name (selectHost); ours keeps thousandths, breaks FGD's
	 * near ties by GpuBestFit and exact ties at random. Emulated from
	 * the reference path's scores (engine_place_reference), so slow. */
	bool paper_choice;
	/* The top-up: the paper's tuneUpPods checks the limit against one
	 * device's milli (podRes.MilliGpu), so a multi-GPU pod can pass 130 %
	 * by up to 7 GPUs; ours checks the pod's whole request. */
	bool paper_top_up;
	/* The FGD policies' GpuFragmentationArgs. mix_shapes: the most
	 * shapes in the mix, 1..256; 256, ours and the paper's, leaves the
	 * 95 % cover alone (this replay had 64 until issue 18). model_reservation:
	 * percent; ours 100, the paper's 0 (workers/frag_internal.h). */
	uint32_t mix_shapes;
	int32_t model_reservation;
};

/* Ours: every switch off, the FGD args as docs/guides/gpu-trace.md's table. */
struct replay_opts replay_opts_ours(void);

struct replay_run {
	double unalloc[PAPER_LOADS]; /* NAN where no pod arrived near that load */
	uint64_t pods;               /* attempted */
	uint64_t placed;
	uint64_t gpu_milli_allocated;
	double seconds;              /* in engine_place + commit_pod only */
};

/* One run of one policy with one seed; `o` NULL: ours. Returns 0, or a
 * negative errno with a message. */
int replay_run(const struct openb_trace *t, enum replay_policy policy,
	       const struct replay_opts *o, uint64_t seed, struct replay_run *out,
	       char *err, size_t err_len);

/* The arrival order for a seed (indices into t->pods): the shuffled list,
 * then the top-up (o->paper_top_up: the paper's check). Returns the count,
 * or a negative errno. *order is malloc'd. Exposed for tests. */
long replay_arrivals(const struct openb_trace *t, const struct replay_opts *o,
		     uint64_t seed, uint32_t **order);

#endif
