/* The equivalence-class key of a pod: every byte of its spec from
 * `node_name` on (ingest/ zero-fills unused entries, so equal scheduling
 * specs are equal bytes). Inline: hashed once per pod on the fast path. */
#ifndef SHMSCHED_WORKERS_POD_CLASS_H
#define SHMSCHED_WORKERS_POD_CLASS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "shm/shm.h"

#define POD_CLASS_KEY_OFFSET offsetof(struct pod_spec, node_name)
#define POD_CLASS_KEY_SIZE (sizeof(struct pod_spec) - POD_CLASS_KEY_OFFSET)

/* FNV-1a over 8-byte words with an extra shift-xor per word. */
static inline uint64_t pod_class_hash(const struct pod_spec *pod)
{
	const unsigned char *p = (const unsigned char *)pod + POD_CLASS_KEY_OFFSET;
	uint64_t h = UINT64_C(0xcbf29ce484222325);
	size_t i = 0;
	for (; i + 8 <= POD_CLASS_KEY_SIZE; i += 8) {
		uint64_t w;
		memcpy(&w, p + i, 8);
		h = (h ^ w) * UINT64_C(0x100000001b3);
		h ^= h >> 29;
	}
	for (; i < POD_CLASS_KEY_SIZE; i++)
		h = (h ^ p[i]) * UINT64_C(0x100000001b3);
	return h ^ (h >> 32);
}

/* The static part of the key: everything but the requests (node_name,
 * the GPU model set a GPU pod accepts, then every byte from profile on).
 * Static filters and static scores read only these fields, so pods that
 * differ only in their requests share a class's static results. The model
 * set sits among the requests in struct pod_spec but is a static filter
 * (DeviceModel): two GPU pods that accept different models must not share
 * static results, or one would scan only the other's models' nodes. */
#define POD_STATIC_OFFSET offsetof(struct pod_spec, profile)
#define POD_STATIC_SIZE (sizeof(struct pod_spec) - POD_STATIC_OFFSET)

/* The models the static DeviceModel filter reads: none for a pod that
 * asks for no GPU, whatever its gpu_models hold. */
static inline unsigned pod_static_models(const struct pod_spec *pod)
{
	return pod->num_gpu > 0 ? pod->n_gpu_models : 0;
}

static inline uint64_t pod_static_hash(const struct pod_spec *pod)
{
	const unsigned char *p = (const unsigned char *)pod + POD_STATIC_OFFSET;
	uint64_t h = (UINT64_C(0xcbf29ce484222325) ^ pod->node_name) *
		     UINT64_C(0x100000001b3);
	unsigned models = pod_static_models(pod);
	h = (h ^ models) * UINT64_C(0x100000001b3);
	for (unsigned m = 0; m < models; m++)
		h = (h ^ pod->gpu_models[m]) * UINT64_C(0x100000001b3);
	size_t i = 0;
	for (; i + 8 <= POD_STATIC_SIZE; i += 8) {
		uint64_t w;
		memcpy(&w, p + i, 8);
		h = (h ^ w) * UINT64_C(0x100000001b3);
		h ^= h >> 29;
	}
	for (; i < POD_STATIC_SIZE; i++)
		h = (h ^ p[i]) * UINT64_C(0x100000001b3);
	return h ^ (h >> 32);
}

static inline bool pod_static_equal(const struct pod_spec *a, const struct pod_spec *b)
{
	unsigned models = pod_static_models(a);
	return a->node_name == b->node_name && models == pod_static_models(b) &&
	       memcmp(a->gpu_models, b->gpu_models, models * sizeof(a->gpu_models[0])) == 0 &&
	       memcmp((const unsigned char *)a + POD_STATIC_OFFSET,
		      (const unsigned char *)b + POD_STATIC_OFFSET, POD_STATIC_SIZE) == 0;
}

static inline bool pod_class_equal(const struct pod_spec *a, const struct pod_spec *b)
{
	return memcmp((const unsigned char *)a + POD_CLASS_KEY_OFFSET,
		      (const unsigned char *)b + POD_CLASS_KEY_OFFSET,
		      POD_CLASS_KEY_SIZE) == 0;
}

#endif
