/* The equivalence-class key of a pod: its spec from `node_name` on, where
 * each array counts only up to its count (n_selector, n_terms, ...). The
 * plugins read nothing past a count, so two specs equal this way schedule
 * alike; and since ingest/ zero-fills unused entries, this is every byte
 * of the spec from node_name on, read in a fraction of the time (a
 * typical spec's key is 200-300 of its 1,700 bytes). Inline: hashed once
 * per pod on the fast path. */
#ifndef SHMSCHED_WORKERS_POD_CLASS_H
#define SHMSCHED_WORKERS_POD_CLASS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "shm/shm.h"

/* The fixed part of the key: everything from node_name up to the first
 * counted array (the counts included). */
#define POD_CLASS_KEY_OFFSET offsetof(struct pod_spec, node_name)
#define POD_CLASS_FIXED_END offsetof(struct pod_spec, selector)

/* The static part: everything but the requests (node_name, the device
 * model fields, then from profile on). Static filters and static scores
 * read only these fields, so pods that differ only in their requests
 * share a class's static results. */
#define POD_STATIC_OFFSET offsetof(struct pod_spec, profile)

/* FNV-1a over 8-byte words with an extra shift-xor per word. */
static inline uint64_t pod_hash_bytes(uint64_t h, const void *at, size_t n)
{
	const unsigned char *p = at;
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		uint64_t w;
		memcpy(&w, p + i, 8);
		h = (h ^ w) * UINT64_C(0x100000001b3);
		h ^= h >> 29;
	}
	for (; i < n; i++)
		h = (h ^ p[i]) * UINT64_C(0x100000001b3);
	return h;
}

static inline size_t pod_count(uint8_t n, size_t max)
{
	return n < max ? n : max;
}

/* The counted arrays in key order: each one's start and its bytes. */
#define POD_CLASS_ARRAYS(pod, X)                                                   \
	X((pod)->selector, pod_count((pod)->n_selector, POD_MAX_SELECTOR) *         \
				   sizeof((pod)->selector[0]))                       \
	X((pod)->terms, pod_count((pod)->n_terms, POD_MAX_TERMS) *                  \
				sizeof((pod)->terms[0]))                             \
	X((pod)->preferred, pod_count((pod)->n_preferred, POD_MAX_PREFERRED) *      \
				    sizeof((pod)->preferred[0]))                     \
	X((pod)->exprs, pod_count((pod)->n_exprs, POD_MAX_EXPRS) *                  \
				sizeof((pod)->exprs[0]))                             \
	X((pod)->values, pod_count((pod)->n_values, POD_MAX_VALUES) *               \
				 sizeof((pod)->values[0]))                           \
	X((pod)->tolerations, pod_count((pod)->n_tolerations, POD_MAX_TOLERATIONS) * \
				      sizeof((pod)->tolerations[0]))                 \
	X((pod)->ports, pod_count((pod)->n_ports, POD_MAX_PORTS) *                  \
				sizeof((pod)->ports[0]))

static inline uint64_t pod_hash_arrays(uint64_t h, const struct pod_spec *pod)
{
#define POD_HASH_ONE(at, n) h = pod_hash_bytes(h, at, n);
	POD_CLASS_ARRAYS(pod, POD_HASH_ONE)
#undef POD_HASH_ONE
	return h ^ (h >> 32);
}

/* Whether the counted arrays of a and b are equal; their counts must be
 * (the fixed parts compared equal first). */
static inline bool pod_arrays_equal(const struct pod_spec *a, const struct pod_spec *b)
{
	bool eq = true;
#define POD_EQ_ONE(at, n) eq = eq && memcmp(at, (const void *)((const unsigned char *)b + \
		((const unsigned char *)(at) - (const unsigned char *)a)), n) == 0;
	POD_CLASS_ARRAYS(a, POD_EQ_ONE)
#undef POD_EQ_ONE
	return eq;
}

static inline uint64_t pod_class_hash(const struct pod_spec *pod)
{
	uint64_t h = pod_hash_bytes(UINT64_C(0xcbf29ce484222325),
				    (const unsigned char *)pod + POD_CLASS_KEY_OFFSET,
				    POD_CLASS_FIXED_END - POD_CLASS_KEY_OFFSET);
	return pod_hash_arrays(h, pod);
}

static inline bool pod_class_equal(const struct pod_spec *a, const struct pod_spec *b)
{
	return memcmp((const unsigned char *)a + POD_CLASS_KEY_OFFSET,
		      (const unsigned char *)b + POD_CLASS_KEY_OFFSET,
		      POD_CLASS_FIXED_END - POD_CLASS_KEY_OFFSET) == 0 &&
	       pod_arrays_equal(a, b);
}

/* pod_class_equal(a, b) where b's group and group_terms read as 0: what
 * class `a` (a fast-path key: engine.c's fast_key) is for a pod `b` whose
 * inter-pod group the fast path does not read, without copying b. */
static inline bool pod_class_equal_ungrouped(const struct pod_spec *a,
					     const struct pod_spec *b)
{
	_Static_assert(offsetof(struct pod_spec, group) >= POD_CLASS_KEY_OFFSET &&
		       offsetof(struct pod_spec, group_terms) + sizeof(b->group_terms) <=
		       POD_CLASS_FIXED_END &&
		       offsetof(struct pod_spec, group_terms) > offsetof(struct pod_spec, group),
		       "group and group_terms inside the key, in this order");
	const size_t g = offsetof(struct pod_spec, group);
	const size_t after = offsetof(struct pod_spec, group_terms) + sizeof(b->group_terms);
	return a->group == 0 && !a->group_terms &&
	       memcmp((const unsigned char *)a + POD_CLASS_KEY_OFFSET,
		      (const unsigned char *)b + POD_CLASS_KEY_OFFSET,
		      g - POD_CLASS_KEY_OFFSET) == 0 &&
	       memcmp((const unsigned char *)a + g + sizeof(b->group),
		      (const unsigned char *)b + g + sizeof(b->group),
		      offsetof(struct pod_spec, group_terms) - g - sizeof(b->group)) == 0 &&
	       memcmp((const unsigned char *)a + after, (const unsigned char *)b + after,
		      POD_CLASS_FIXED_END - after) == 0 &&
	       pod_arrays_equal(a, b);
}

/* The static key also holds the GPU model set a GPU pod accepts: it sits
 * among the requests in struct pod_spec but is a static filter
 * (DeviceModel), so two GPU pods that accept different models must not
 * share static results, or one would scan only the other's models' nodes.
 * Only the models the filter reads: none for a pod that asks for no GPU,
 * whatever its gpu_models hold (num_gpu and gpu_milli are requests,
 * read by the dynamic DeviceFit). */
static inline unsigned pod_static_models(const struct pod_spec *pod)
{
	return pod->num_gpu > 0 ? pod_count(pod->n_gpu_models, POD_MAX_GPU_MODELS) : 0;
}

static inline uint64_t pod_static_hash(const struct pod_spec *pod)
{
	uint64_t h = (UINT64_C(0xcbf29ce484222325) ^ pod->node_name) *
		     UINT64_C(0x100000001b3);
	unsigned models = pod_static_models(pod);
	h = (h ^ models) * UINT64_C(0x100000001b3);
	h = pod_hash_bytes(h, pod->gpu_models, models * sizeof(pod->gpu_models[0]));
	h = pod_hash_bytes(h, (const unsigned char *)pod + POD_STATIC_OFFSET,
			   POD_CLASS_FIXED_END - POD_STATIC_OFFSET);
	return pod_hash_arrays(h, pod);
}

static inline bool pod_static_equal(const struct pod_spec *a, const struct pod_spec *b)
{
	unsigned models = pod_static_models(a);
	return a->node_name == b->node_name && models == pod_static_models(b) &&
	       memcmp(a->gpu_models, b->gpu_models,
		      models * sizeof(a->gpu_models[0])) == 0 &&
	       memcmp((const unsigned char *)a + POD_STATIC_OFFSET,
		      (const unsigned char *)b + POD_STATIC_OFFSET,
		      POD_CLASS_FIXED_END - POD_STATIC_OFFSET) == 0 &&
	       pod_arrays_equal(a, b);
}

#endif
