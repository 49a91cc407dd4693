/* Device views and the cpuset format: see devices.h. Cost: O(GPUs + cores)
 * per call. */
#include "shm/devices.h"

#include <stdio.h>
#include <string.h>

void devices_view_empty(const struct node_devices *d, struct device_view *out)
{
	memset(out, 0, sizeof(*out));
	for (unsigned g = 0; g < d->n_gpus; g++)
		out->gpu_free[g] = GPU_MILLI_PER_DEVICE;
	for (unsigned w = 0; w < CORE_WORDS; w++)
		out->cores_free[w] = devices_core_pool_word(d, w);
}

void devices_view_apply(struct device_view *v, const struct device_assignment *a,
			int sign)
{
	for (unsigned g = 0; g < NODE_MAX_GPUS; g++)
		if (a->gpu_mask >> g & 1)
			v->gpu_free[g] = (uint16_t)(v->gpu_free[g] - sign * a->gpu_milli);
	for (unsigned w = 0; w < CORE_WORDS; w++) {
		if (sign > 0)
			v->cores_free[w] &= ~a->cpuset[w];
		else
			v->cores_free[w] |= a->cpuset[w];
	}
}

int devices_format_cpuset(const uint64_t set[CORE_WORDS], char *buf, unsigned long len)
{
	int n = 0;
	if (len > 0)
		buf[0] = '\0';
	for (unsigned c = 0; c < NODE_MAX_CORES;) {
		if (!(set[c / 64] >> (c % 64) & 1)) {
			c++;
			continue;
		}
		unsigned end = c;
		while (end + 1 < NODE_MAX_CORES && set[(end + 1) / 64] >> ((end + 1) % 64) & 1)
			end++;
		size_t used = (size_t)n < len ? (size_t)n : len;
		int w = end > c ? snprintf(buf + used, len - used, "%s%u-%u", n ? "," : "", c, end)
				: snprintf(buf + used, len - used, "%s%u", n ? "," : "", c);
		n += w;
		c = end + 1;
	}
	return n;
}
