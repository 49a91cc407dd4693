/* GPU fragmentation with respect to a mix of pod shapes, after
 * Fragmentation Gradient Descent (Weng et al., USENIX ATC'23).
 *
 * A node's free GPU milli are fragmented for a pod shape when that shape
 * cannot use them: all of them when the shape cannot run on the node at all
 * (it asks for no GPU, the model is wrong, its cpu does not fit, or too few
 * devices have enough free), else those on devices with less free than the
 * shape asks per device. A node's fragmentation is the mix-weighted sum
 * over shapes; the score of placing a pod is how much it grows.
 *
 * The mix: the shapes the engine has seen, counted as pods come
 * (frag_counter_add, O(1)), and turned into a mix of the most frequent
 * shapes covering FRAG_COVER_PERMILLE of pods (frag_mix_build) at pod
 * counts FRAG_FIRST_REFRESH, x2, x2, ... up to every FRAG_MAX_INTERVAL
 * pods, so cached per-node results change only at those few points (the
 * mix's epoch says when). Early and doubling, because placements made
 * with a rough mix stay: from 64 and x4, FGD-online left 0.2 points more
 * unallocated GPU on openb's default list (5.11 against 4.93 %, 10 seeds).
 *
 * Shape key (the paper's): non-zero cpu request, GPU milli per device,
 * device count, model set. Memory is not part of it.
 *
 * cpu-limited shares (ours, not the paper's): to the paper a sharing
 * shape can use all the free milli of every device that holds one of its
 * pods, if the node's cpu holds one. But when the free cpu holds fewer of
 * its pods (cap = cpu left / its cpu) than the devices do (the sum over
 * devices of free / its milli), the rest is stranded: the shape can use
 * only the devices cap pods would fill, most free first. They count 3/4
 * of their free milli plus 1/4 of the pods' own milli (cap x its milli) as
 * usable (FRAG_CPU_WHOLE_QUARTERS); the rest of the node's free milli is
 * fragmented. Measured on openb at 100 % arrived, 5 seeds: with the pods'
 * milli alone the default list went from 4.80 to 4.34 % unallocated but
 * gpushare80 from 11.21 to 11.00 only; with the devices' free milli alone
 * 4.63 and 10.67; the 3:1 blend 4.42 and 10.79, below the paper's FGD on
 * both. Cost: nothing for a node whose cpu holds as many pods as its free
 * milli could (left / milli); else O(GPUs) per sharing shape.
 *
 * Model reservation (ours, not the paper's): a shape bound to GPU models
 * counts as fragmented all the free GPUs of a node of another model, and
 * nothing more; so the measure sees nothing wrong in giving the last free
 * GPUs of a scarce model to pods that could have run anywhere, and the
 * pods bound to that model fail later. frag_models keeps, per GPU model
 * of the cluster, its capacity and its pressure: the GPU demand that the
 * mix's model-bound shapes put on it (a shape's demand split over the
 * models it accepts by their capacity), as a share of the mix's whole GPU
 * demand, over the model's share of the cluster's GPUs: the share of the
 * model's GPUs its bound pods would take in a full cluster. Up to
 * FRAG_PRESSURE_FREE_PERMILLE that share presses nothing (steering pods
 * off a model whose bound pods leave most of it free costs more packing
 * than it saves: on openb's gpuspec05, whose busiest model's share is 0.2,
 * any pressure cost 0.2 points); above, the pressure rises linearly to 1
 * at a share of 1. Placing g milli on a node of model m then adds weight x
 * g x pressure(m) milli to the growth: a pod that fits several models
 * goes to the least pressed, and a pod bound to one model pays the same
 * everywhere it can go. A mix with no model-bound shape has pressure 0
 * everywhere: the paper's FGD.
 *
 * Concurrency: a counter and a mix belong to one engine (one thread).
 */
#ifndef SHMSCHED_WORKERS_FRAG_INTERNAL_H
#define SHMSCHED_WORKERS_FRAG_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "shm/shm.h"
#include "workers/score_config.h"

#define FRAG_MAX_TYPES SCORE_GPU_FRAG_MAX_SHAPES
#define FRAG_COVER_PERMILLE 950
#define FRAG_COUNT_SLOTS 1024u /* shapes counted at most (a power of two) */
#define FRAG_FIRST_REFRESH 16u
#define FRAG_MAX_INTERVAL 65536u
#define FRAG_KEEP_PERMILLE 20

struct frag_shape {
	int64_t cpu_milli; /* non-zero cpu request */
	uint16_t gpu_milli;
	uint8_t num_gpu;
	uint8_t n_models;
	uint32_t models[POD_MAX_GPU_MODELS];
};

struct frag_mix {
	uint64_t epoch; /* +1 per build: cached fragmentation is stale */
	bool cpu_limited; /* the cpu-limited measure of shares (above) */
	unsigned n;
	uint64_t total; /* sum of weight[] */
	/* GPU shapes sorted by gpu_milli, so one walk over a node's sorted
	 * free values answers every shape; CPU-only shapes are one sum. */
	struct frag_shape shape[FRAG_MAX_TYPES];
	uint32_t weight[FRAG_MAX_TYPES]; /* pods of the shape counted */
	/* For the cpu-limited measure, per shape: 2^32 / gpu_milli rounded
	 * up for a sharing shape with a cpu request (free / milli is then
	 * (free x inv) >> 32, exact for free and milli up to 1,000), else 0. */
	uint64_t share_inv[FRAG_MAX_TYPES];
	uint64_t cpu_only_weight;        /* of shapes that ask for no GPU */
};

struct frag_count {
	uint64_t hash; /* 0: empty */
	struct frag_shape shape;
	uint32_t count;
};

struct frag_counter {
	uint64_t pods;
	uint64_t next_refresh;
	uint32_t n_shapes;
	uint64_t dropped; /* pods of shapes past FRAG_COUNT_SLOTS / 2 */
	struct frag_count slot[FRAG_COUNT_SLOTS];
};

/* Per GPU model of the cluster (at most FRAG_MAX_MODELS; a model past
 * them has pressure 0): capacity from the snapshot, pressure from the mix. */
#define FRAG_CPU_WHOLE_QUARTERS 3
#define FRAG_MAX_MODELS 32
#define FRAG_PRESSURE_FREE_PERMILLE 200
struct frag_models {
	unsigned n;
	uint64_t mix_epoch; /* the mix's epoch + 1 the pressure is for; 0: stale */
	bool pressed;       /* some model has pressure (else every answer is 0) */
	uint32_t model[FRAG_MAX_MODELS];
	int64_t capacity[FRAG_MAX_MODELS];         /* GPU milli */
	int64_t pressure_permille[FRAG_MAX_MODELS];
};

/* Forgets every model (a new snapshot generation). */
void frag_models_reset(struct frag_models *fm);

/* Counts a node's GPUs into its model's capacity. */
void frag_models_add(struct frag_models *fm, uint32_t model, unsigned n_gpus);

/* The extra growth, weighted as frag_growth's, of placing `pod` on a node
 * of `model` with reservation weight `percent`: mix total x percent / 100
 * x the pod's GPU milli x pressure(model). Recomputes the pressure when
 * the mix has changed since. O(1) then; O(shapes x models x models) once
 * per mix. */
int64_t frag_reservation(struct frag_models *fm, const struct frag_mix *m,
			 uint32_t model, const struct pod_spec *pod, int32_t percent);

void frag_counter_init(struct frag_counter *c);

/* Counts a pod's shape. Returns true when the mix is due a rebuild. */
bool frag_counter_add(struct frag_counter *c, const struct pod_spec *pod);

/* The mix of the most frequent shapes counted, covering
 * FRAG_COVER_PERMILLE of pods (at most max_shapes, 1..FRAG_MAX_TYPES),
 * with epoch + 1; unless it is close to *m (same shapes, shares within
 * FRAG_KEEP_PERMILLE in L1 distance): then *m stays, so cached scores stay
 * valid. Returns whether *m changed. */
bool frag_mix_build(struct frag_mix *m, const struct frag_counter *c,
		    unsigned max_shapes, bool cpu_limited);

/* Fragmented GPU milli of a node in state (cpu_left, gpu_free), weighted:
 * sum over shapes of weight x fragmented milli. O(shapes + GPUs log GPUs);
 * with m->cpu_limited, O(GPUs) more per sharing shape whose pods the cpu
 * limits. */
int64_t frag_amount(const struct frag_mix *m, const struct node_devices *d,
		    int64_t cpu_left, const uint16_t gpu_free[NODE_MAX_GPUS]);

/* The growth of fragmentation (weighted, as frag_amount) from placing the
 * pod, which fits, on a node in state (cpu_left, v) whose fragmentation is
 * `before` (frag_amount's), on the device that grows it least (lowest
 * index on a tie: *gpu, -1 for none or whole devices, which are the lowest
 * free ones). */
int64_t frag_growth(const struct frag_mix *m, const struct node_devices *d,
		    int64_t cpu_left, const struct device_view *v, int64_t before,
		    const struct pod_spec *pod, int *gpu);

#endif
