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
 * counts FRAG_FIRST_REFRESH, x4, x4, ... up to every FRAG_MAX_INTERVAL
 * pods, so cached per-node results change only at those few points (the
 * mix's epoch says when).
 *
 * Shape key (the paper's): non-zero cpu request, GPU milli per device,
 * device count, model set. Memory is not part of it.
 *
 * Concurrency: a counter and a mix belong to one engine (one thread).
 */
#ifndef SHMSCHED_WORKERS_FRAG_INTERNAL_H
#define SHMSCHED_WORKERS_FRAG_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "shm/shm.h"

#define FRAG_MAX_TYPES 64
#define FRAG_COVER_PERMILLE 950
#define FRAG_COUNT_SLOTS 1024u /* shapes counted at most (a power of two) */
#define FRAG_FIRST_REFRESH 64u
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
	unsigned n;
	uint64_t total; /* sum of weight[] */
	/* GPU shapes sorted by gpu_milli, so one walk over a node's sorted
	 * free values answers every shape; CPU-only shapes are one sum. */
	struct frag_shape shape[FRAG_MAX_TYPES];
	uint32_t weight[FRAG_MAX_TYPES]; /* pods of the shape counted */
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

void frag_counter_init(struct frag_counter *c);

/* Counts a pod's shape. Returns true when the mix is due a rebuild. */
bool frag_counter_add(struct frag_counter *c, const struct pod_spec *pod);

/* The mix of the most frequent shapes counted, covering
 * FRAG_COVER_PERMILLE of pods (at most FRAG_MAX_TYPES), with epoch + 1;
 * unless it is close to *m (same shapes, shares within FRAG_KEEP_PERMILLE
 * in L1 distance): then *m stays, so cached scores stay valid. Returns
 * whether *m changed. */
bool frag_mix_build(struct frag_mix *m, const struct frag_counter *c);

/* Fragmented GPU milli of a node in state (cpu_left, gpu_free), weighted:
 * sum over shapes of weight x fragmented milli. O(shapes + GPUs log GPUs). */
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
