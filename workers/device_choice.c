/* Device fit and choice: see device_choice.h. Cost: O(GPUs + cores / 64)
 * per call, NUMA choice O(NUMA nodes * cores / 64). */
#include "workers/device_choice.h"

#include <string.h>

bool devices_model_ok(const struct node_devices *d, const struct pod_spec *pod)
{
	if (pod->n_gpu_models == 0)
		return true;
	for (unsigned i = 0; i < pod->n_gpu_models; i++)
		if (pod->gpu_models[i] == d->gpu_model)
			return true;
	return false;
}

unsigned devices_whole_free(const struct node_devices *d,
			    const struct device_view *v)
{
	unsigned n = 0;
	for (unsigned g = 0; g < d->n_gpus; g++)
		n += v->gpu_free[g] == GPU_MILLI_PER_DEVICE;
	return n;
}

int devices_best_fit_gpu(const struct node_devices *d, const struct device_view *v,
			 uint16_t gpu_milli)
{
	int best = -1;
	for (unsigned g = 0; g < d->n_gpus; g++)
		if (v->gpu_free[g] >= gpu_milli &&
		    (best < 0 || v->gpu_free[g] < v->gpu_free[best]))
			best = (int)g;
	return best;
}

bool devices_gpu_fits(const struct node_devices *d, const struct device_view *v,
		      const struct pod_spec *pod)
{
	if (pod->num_gpu == 0)
		return true;
	if (!devices_model_ok(d, pod))
		return false;
	if (pod->gpu_milli < GPU_MILLI_PER_DEVICE)
		return devices_best_fit_gpu(d, v, pod->gpu_milli) >= 0;
	return devices_whole_free(d, v) >= pod->num_gpu;
}

static unsigned popcount_words(const uint64_t *w, unsigned n)
{
	unsigned c = 0;
	for (unsigned i = 0; i < n; i++)
		c += (unsigned)__builtin_popcountll(w[i]);
	return c;
}

int devices_fit(const struct node_devices *d, const struct device_view *v,
		const struct pod_spec *pod)
{
	if (pod->num_gpu > 0) {
		if (!devices_model_ok(d, pod))
			return DEVICE_MISFIT_MODEL;
		if (!devices_gpu_fits(d, v, pod))
			return DEVICE_MISFIT_GPU;
	}
	if (devices_takes_cores(d, pod) &&
	    popcount_words(v->cores_free, CORE_WORDS) < pod->exclusive_cores)
		return DEVICE_MISFIT_CORES;
	return DEVICE_FITS;
}

/* The free cores of one NUMA node. */
static void numa_free(const struct node_devices *d, const struct device_view *v,
		      unsigned numa, uint64_t out[CORE_WORDS])
{
	unsigned per = d->n_cores / d->n_numa;
	memset(out, 0, CORE_WORDS * sizeof(uint64_t));
	for (unsigned c = numa * per; c < (numa + 1) * per; c++)
		if (v->cores_free[c / 64] >> (c % 64) & 1)
			out[c / 64] |= UINT64_C(1) << (c % 64);
}

/* Moves up to *k of the lowest set bits of `from` into `out`. */
static void take_lowest(const uint64_t from[CORE_WORDS], unsigned *k,
			uint64_t out[CORE_WORDS])
{
	for (unsigned w = 0; w < CORE_WORDS && *k > 0; w++) {
		uint64_t bits = from[w];
		while (bits != 0 && *k > 0) {
			uint64_t low = bits & -bits;
			out[w] |= low;
			bits &= bits - 1;
			(*k)--;
		}
	}
}

bool devices_pick_cores(const struct node_devices *d, const struct device_view *v,
			unsigned k, uint64_t out[CORE_WORDS])
{
	memset(out, 0, CORE_WORDS * sizeof(uint64_t));
	if (d->n_cores == 0 || d->n_numa == 0 ||
	    popcount_words(v->cores_free, CORE_WORDS) < k)
		return false;
	uint64_t per[NODE_MAX_NUMA][CORE_WORDS];
	unsigned n_free[NODE_MAX_NUMA];
	int pack = -1;
	for (unsigned m = 0; m < d->n_numa; m++) {
		numa_free(d, v, m, per[m]);
		n_free[m] = popcount_words(per[m], CORE_WORDS);
		if (n_free[m] >= k && (pack < 0 || n_free[m] < n_free[pack]))
			pack = (int)m;
	}
	if (pack >= 0) {
		take_lowest(per[pack], &k, out);
		return true;
	}
	/* Spread: the fewest NUMA nodes, most free first (lowest on a tie). */
	bool used[NODE_MAX_NUMA] = {false};
	while (k > 0) {
		int most = -1;
		for (unsigned m = 0; m < d->n_numa; m++)
			if (!used[m] && n_free[m] > 0 &&
			    (most < 0 || n_free[m] > n_free[most]))
				most = (int)m;
		used[most] = true; /* most >= 0: enough cores are free in all */
		take_lowest(per[most], &k, out);
	}
	return true;
}

int devices_assign(const struct node_devices *d, const struct device_view *v,
		   const struct pod_spec *pod, int gpu,
		   struct device_assignment *out)
{
	memset(out, 0, sizeof(*out));
	int misfit = devices_fit(d, v, pod);
	if (misfit != DEVICE_FITS)
		return misfit;
	if (pod->num_gpu > 0) {
		out->gpu_milli = pod->gpu_milli;
		if (pod->gpu_milli < GPU_MILLI_PER_DEVICE) {
			if (gpu < 0 || (unsigned)gpu >= d->n_gpus ||
			    v->gpu_free[gpu] < pod->gpu_milli)
				gpu = devices_best_fit_gpu(d, v, pod->gpu_milli);
			out->gpu_mask = (uint16_t)(1u << gpu);
		} else {
			unsigned need = pod->num_gpu;
			for (unsigned g = 0; g < d->n_gpus && need > 0; g++)
				if (v->gpu_free[g] == GPU_MILLI_PER_DEVICE) {
					out->gpu_mask |= (uint16_t)(1u << g);
					need--;
				}
		}
	}
	if (devices_takes_cores(d, pod)) {
		devices_pick_cores(d, v, pod->exclusive_cores, out->cpuset);
		out->n_cores = pod->exclusive_cores;
	}
	return DEVICE_FITS;
}
