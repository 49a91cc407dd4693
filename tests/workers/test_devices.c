/* unit.devices: the device rules (shm/devices.h), their reservation
 * (ledger_reserve with an assignment), GPU fragmentation (workers/frag.c)
 * and the engine's device choices, on cases small enough to check by hand.
 * Every expected number is worked out in a comment beside it. */
#define _LGPL_SOURCE 1

#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <urcu/urcu-qsbr.h>

#include <cmocka.h>

#include "ingest/ingest.h"
#include "bind/bind.h"
#include "shm/shm.h"
#include "workers/frag_internal.h"
#include "workers/workers.h"

/* Model ids: any distinct non-zero values do for the pure functions. */
#define MODEL_A 7u
#define MODEL_B 9u
#define MODEL_C 11u

static struct pod_spec sharing_pod(uint16_t milli)
{
	struct pod_spec p;
	memset(&p, 0, sizeof(p));
	p.num_gpu = 1;
	p.gpu_milli = milli;
	return p;
}

static struct pod_spec whole_pod(uint8_t n)
{
	struct pod_spec p;
	memset(&p, 0, sizeof(p));
	p.num_gpu = n;
	p.gpu_milli = GPU_MILLI_PER_DEVICE;
	return p;
}

static struct pod_spec cores_pod(uint16_t k)
{
	struct pod_spec p;
	memset(&p, 0, sizeof(p));
	p.exclusive_cores = k;
	return p;
}

/* Marks cores lo..hi (inclusive) as held in a view. */
static void hold_cores(struct device_view *v, unsigned lo, unsigned hi)
{
	for (unsigned c = lo; c <= hi; c++)
		v->cores_free[c / 64] &= ~(UINT64_C(1) << (c % 64));
}

static void set_free(struct device_view *v, const uint16_t *free_milli, unsigned n)
{
	for (unsigned g = 0; g < n; g++)
		v->gpu_free[g] = free_milli[g];
}

/* --- fit and choice ------------------------------------------------------ */

static void test_sharing_best_fit(void **state)
{
	(void)state;
	struct node_devices d = {.gpu_model = MODEL_A, .n_gpus = 4};
	struct device_view v;
	devices_view_empty(&d, &v);
	set_free(&v, (const uint16_t[]){1000, 400, 600, 400}, 4);
	struct device_assignment a;

	/* 300: 400 is the least free that holds it; devices 1 and 3 tie,
	 * the lower wins. */
	struct pod_spec p = sharing_pod(300);
	assert_int_equal(devices_fit(&d, &v, &p), DEVICE_FITS);
	assert_int_equal(devices_best_fit_gpu(&d, &v, 300), 1);
	assert_int_equal(devices_assign(&d, &v, &p, -1, &a), DEVICE_FITS);
	assert_int_equal(a.gpu_mask, 1u << 1);
	assert_int_equal(a.gpu_milli, 300);
	assert_int_equal(a.n_cores, 0);
	/* 500: only 1000 and 600 hold it; 600 is the tighter. */
	p = sharing_pod(500);
	assert_int_equal(devices_assign(&d, &v, &p, -1, &a), DEVICE_FITS);
	assert_int_equal(a.gpu_mask, 1u << 2);
	/* 600 fits device 2 exactly. */
	p = sharing_pod(600);
	assert_int_equal(devices_assign(&d, &v, &p, -1, &a), DEVICE_FITS);
	assert_int_equal(a.gpu_mask, 1u << 2);
	/* 700: only device 0. */
	p = sharing_pod(700);
	assert_int_equal(devices_assign(&d, &v, &p, -1, &a), DEVICE_FITS);
	assert_int_equal(a.gpu_mask, 1u << 0);

	/* A device asked for by index is kept when it holds the share... */
	p = sharing_pod(300);
	assert_int_equal(devices_assign(&d, &v, &p, 2, &a), DEVICE_FITS);
	assert_int_equal(a.gpu_mask, 1u << 2);
	/* ...and replaced by the best fit when it does not, or is no device. */
	p = sharing_pod(500);
	assert_int_equal(devices_assign(&d, &v, &p, 1, &a), DEVICE_FITS);
	assert_int_equal(a.gpu_mask, 1u << 2);
	assert_int_equal(devices_assign(&d, &v, &p, 9, &a), DEVICE_FITS);
	assert_int_equal(a.gpu_mask, 1u << 2);

	/* Every device has less free than 900 (the sum, 2200, does not
	 * count: a share lives on one device). */
	set_free(&v, (const uint16_t[]){800, 400, 600, 400}, 4);
	p = sharing_pod(900);
	assert_int_equal(devices_best_fit_gpu(&d, &v, 900), -1);
	assert_false(devices_gpu_fits(&d, &v, &p));
	assert_int_equal(devices_fit(&d, &v, &p), DEVICE_MISFIT_GPU);
	memset(&a, 0xff, sizeof(a));
	assert_int_equal(devices_assign(&d, &v, &p, -1, &a), DEVICE_MISFIT_GPU);
	struct device_assignment zero;
	memset(&zero, 0, sizeof(zero));
	assert_memory_equal(&a, &zero, sizeof(a));

	/* Devices past n_gpus never count, whatever the view says. */
	struct node_devices two = {.gpu_model = MODEL_A, .n_gpus = 2};
	set_free(&v, (const uint16_t[]){100, 100, 1000, 1000}, 4);
	p = sharing_pod(500);
	assert_int_equal(devices_fit(&two, &v, &p), DEVICE_MISFIT_GPU);
}

static void test_whole_devices(void **state)
{
	(void)state;
	struct node_devices d = {.gpu_model = MODEL_A, .n_gpus = 4};
	struct device_view v;
	devices_view_empty(&d, &v);
	struct device_assignment a;

	/* Empty: the lowest N. */
	assert_int_equal(devices_whole_free(&d, &v), 4);
	struct pod_spec p = whole_pod(3);
	assert_int_equal(devices_assign(&d, &v, &p, -1, &a), DEVICE_FITS);
	assert_int_equal(a.gpu_mask, 0x7);
	assert_int_equal(a.gpu_milli, 1000);

	/* 999 free is not whole: devices 0 and 2 are the only whole ones. */
	set_free(&v, (const uint16_t[]){1000, 999, 1000, 0}, 4);
	assert_int_equal(devices_whole_free(&d, &v), 2);
	p = whole_pod(2);
	assert_int_equal(devices_fit(&d, &v, &p), DEVICE_FITS);
	assert_int_equal(devices_assign(&d, &v, &p, -1, &a), DEVICE_FITS);
	assert_int_equal(a.gpu_mask, 0x5);
	p = whole_pod(3);
	assert_int_equal(devices_fit(&d, &v, &p), DEVICE_MISFIT_GPU);
	assert_int_equal(devices_assign(&d, &v, &p, -1, &a), DEVICE_MISFIT_GPU);
	assert_int_equal(a.gpu_mask, 0);

	/* One whole device is not a best fit, and a device asked for by
	 * index does not count: the lowest whole one. */
	set_free(&v, (const uint16_t[]){999, 500, 1000, 1000}, 4);
	p = whole_pod(1);
	assert_int_equal(devices_assign(&d, &v, &p, 0, &a), DEVICE_FITS);
	assert_int_equal(a.gpu_mask, 1u << 2);

	/* More than the node has. */
	devices_view_empty(&d, &v);
	p = whole_pod(5);
	assert_int_equal(devices_fit(&d, &v, &p), DEVICE_MISFIT_GPU);
}

static void test_models(void **state)
{
	(void)state;
	struct node_devices d = {.gpu_model = MODEL_B, .n_gpus = 2};
	struct device_view v;
	devices_view_empty(&d, &v);

	struct pod_spec p = sharing_pod(500);
	/* No model set: any model. */
	assert_true(devices_model_ok(&d, &p));
	assert_int_equal(devices_fit(&d, &v, &p), DEVICE_FITS);
	/* A set holding the node's model, not first. */
	p.n_gpu_models = 3;
	p.gpu_models[0] = MODEL_A;
	p.gpu_models[1] = MODEL_B;
	p.gpu_models[2] = MODEL_C;
	assert_true(devices_model_ok(&d, &p));
	assert_int_equal(devices_fit(&d, &v, &p), DEVICE_FITS);
	/* A set without it: the model fails before any device is looked at,
	 * even for a request no device could hold either. */
	p.n_gpu_models = 2;
	p.gpu_models[1] = MODEL_C;
	assert_false(devices_model_ok(&d, &p));
	assert_int_equal(devices_fit(&d, &v, &p), DEVICE_MISFIT_MODEL);
	assert_false(devices_gpu_fits(&d, &v, &p));
	struct pod_spec big = whole_pod(8);
	big.n_gpu_models = 1;
	big.gpu_models[0] = MODEL_A;
	assert_int_equal(devices_fit(&d, &v, &big), DEVICE_MISFIT_MODEL);
	struct device_assignment a;
	assert_int_equal(devices_assign(&d, &v, &big, -1, &a), DEVICE_MISFIT_MODEL);
	assert_int_equal(a.gpu_mask, 0);
	/* A node that gives no model matches no set, only an empty one. */
	struct node_devices unnamed = {.gpu_model = 0, .n_gpus = 2};
	assert_int_equal(devices_fit(&unnamed, &v, &p), DEVICE_MISFIT_MODEL);
	p.n_gpu_models = 0;
	assert_int_equal(devices_fit(&unnamed, &v, &p), DEVICE_FITS);
	/* A pod that asks for no GPU is not held to a model set. */
	struct pod_spec none = cores_pod(0);
	none.n_gpu_models = 1;
	none.gpu_models[0] = MODEL_A;
	assert_int_equal(devices_fit(&d, &v, &none), DEVICE_FITS);
	assert_true(devices_gpu_fits(&d, &v, &none));
}

static void test_cores_pack_and_spread(void **state)
{
	(void)state;
	/* 16 cores, 2 NUMA nodes: 0-7 and 8-15. */
	struct node_devices d = {.n_numa = 2, .n_cores = 16};
	struct device_view v;
	devices_view_empty(&d, &v);
	assert_int_equal(v.cores_free[0], 0xffff);
	assert_int_equal(devices_numa_of(&d, 7), 0);
	assert_int_equal(devices_numa_of(&d, 8), 1);
	struct device_assignment a;
	uint64_t set[CORE_WORDS];

	/* Empty: both have 8, a tie, the lower NUMA node, lowest cores. */
	struct pod_spec p = cores_pod(4);
	assert_true(devices_takes_cores(&d, &p));
	assert_int_equal(devices_assign(&d, &v, &p, -1, &a), DEVICE_FITS);
	assert_int_equal(a.cpuset[0], 0xf);
	assert_int_equal(a.n_cores, 4);
	assert_int_equal(a.gpu_mask, 0);

	/* 0-5 held: NUMA 0 has 2 free (6, 7), NUMA 1 has 8. */
	hold_cores(&v, 0, 5);
	/* k 2: NUMA 0 is the best fit (fewest free that still hold 2). */
	assert_true(devices_pick_cores(&d, &v, 2, set));
	assert_int_equal(set[0], 0xc0);
	/* k 3: NUMA 0 cannot, NUMA 1 packs them: 8, 9, 10. */
	assert_true(devices_pick_cores(&d, &v, 3, set));
	assert_int_equal(set[0], 0x700);

	/* And 8-11 held too: NUMA 0 has 6, 7; NUMA 1 has 12-15. */
	hold_cores(&v, 8, 11);
	/* k 4 packs on NUMA 1 (4 free, the only one that holds 4). */
	assert_true(devices_pick_cores(&d, &v, 4, set));
	assert_int_equal(set[0], 0xf000);
	/* k 5: no NUMA node has 5; spread from the most free: NUMA 1 gives
	 * 12-15, then NUMA 0 its lowest, 6. */
	p = cores_pod(5);
	assert_int_equal(devices_assign(&d, &v, &p, -1, &a), DEVICE_FITS);
	assert_int_equal(a.cpuset[0], 0xf040);
	assert_int_equal(a.n_cores, 5);
	char buf[64];
	devices_format_cpuset(a.cpuset, buf, sizeof(buf));
	assert_string_equal(buf, "6,12-15");
	/* k 6: every free core. */
	assert_true(devices_pick_cores(&d, &v, 6, set));
	assert_int_equal(set[0], 0xf0c0);
	/* k 7: only 6 are free. */
	p = cores_pod(7);
	assert_int_equal(devices_fit(&d, &v, &p), DEVICE_MISFIT_CORES);
	assert_int_equal(devices_assign(&d, &v, &p, -1, &a), DEVICE_MISFIT_CORES);
	assert_int_equal(a.cpuset[0], 0);
	assert_int_equal(a.n_cores, 0);
	set[0] = 1;
	assert_false(devices_pick_cores(&d, &v, 7, set));
	assert_int_equal(set[0], 0);
}

static void test_cores_numa_best_fit(void **state)
{
	(void)state;
	/* 16 cores, 4 NUMA nodes of 4: 0-3, 4-7, 8-11, 12-15. */
	struct node_devices d = {.n_numa = 4, .n_cores = 16};
	struct device_view v;
	devices_view_empty(&d, &v);
	hold_cores(&v, 0, 0);   /* NUMA 0: 3 free (1-3) */
	hold_cores(&v, 4, 5);   /* NUMA 1: 2 free (6, 7) */
	hold_cores(&v, 12, 12); /* NUMA 3: 3 free (13-15); NUMA 2: 4 free */
	uint64_t set[CORE_WORDS];
	/* k 1 and 2: NUMA 1, the fewest free that hold them. */
	assert_true(devices_pick_cores(&d, &v, 1, set));
	assert_int_equal(set[0], 0x40);
	assert_true(devices_pick_cores(&d, &v, 2, set));
	assert_int_equal(set[0], 0xc0);
	/* k 3: NUMA 0 and 3 tie at 3 free: the lower, NUMA 0. */
	assert_true(devices_pick_cores(&d, &v, 3, set));
	assert_int_equal(set[0], 0xe);
	/* k 4: only NUMA 2. */
	assert_true(devices_pick_cores(&d, &v, 4, set));
	assert_int_equal(set[0], 0xf00);
	/* k 6: spread, most free first: NUMA 2 (4: 8-11), then NUMA 0 and 3
	 * tie at 3, the lower: NUMA 0 gives 1 and 2. */
	assert_true(devices_pick_cores(&d, &v, 6, set));
	assert_int_equal(set[0], 0xf06);
}

static void test_cores_across_words(void **state)
{
	(void)state;
	/* 128 cores, 2 NUMA nodes: 0-63 (word 0) and 64-127 (word 1). */
	struct node_devices d = {.n_numa = 2, .n_cores = 128};
	struct device_view v;
	devices_view_empty(&d, &v);
	assert_int_equal(v.cores_free[0], UINT64_MAX);
	assert_int_equal(v.cores_free[1], UINT64_MAX);
	assert_int_equal(v.cores_free[2], 0);
	hold_cores(&v, 0, 61); /* NUMA 0: 62, 63 free */
	uint64_t set[CORE_WORDS];
	/* k 3 packs on NUMA 1: 64, 65, 66. */
	assert_true(devices_pick_cores(&d, &v, 3, set));
	assert_int_equal(set[0], 0);
	assert_int_equal(set[1], 0x7);
	hold_cores(&v, 64, 125); /* NUMA 1: 126, 127 free */
	/* k 4: spread; 2 and 2 tie, NUMA 0 first, then NUMA 1. */
	assert_true(devices_pick_cores(&d, &v, 4, set));
	assert_int_equal(set[0], UINT64_C(3) << 62);
	assert_int_equal(set[1], UINT64_C(3) << 62);
	char buf[64];
	devices_format_cpuset(set, buf, sizeof(buf));
	assert_string_equal(buf, "62-63,126-127");
}

static void test_cores_not_opted_in(void **state)
{
	(void)state;
	/* n_cores 0: the node shares its cpu; cores are never checked. */
	struct node_devices d = {.gpu_model = MODEL_A, .n_gpus = 1};
	struct device_view v;
	devices_view_empty(&d, &v);
	struct pod_spec p = cores_pod(200);
	assert_false(devices_takes_cores(&d, &p));
	assert_true(devices_wanted(&p));
	assert_int_equal(devices_fit(&d, &v, &p), DEVICE_FITS);
	struct device_assignment a;
	assert_int_equal(devices_assign(&d, &v, &p, -1, &a), DEVICE_FITS);
	assert_int_equal(a.n_cores, 0);
	assert_int_equal(a.cpuset[0], 0);
	uint64_t set[CORE_WORDS];
	assert_false(devices_pick_cores(&d, &v, 1, set));

	/* A GPU and cores together: GPU first in the order of misfits. */
	struct node_devices both = {.gpu_model = MODEL_A, .n_gpus = 2,
				    .n_numa = 1, .n_cores = 4};
	devices_view_empty(&both, &v);
	p = sharing_pod(500);
	p.exclusive_cores = 4;
	assert_int_equal(devices_assign(&both, &v, &p, -1, &a), DEVICE_FITS);
	assert_int_equal(a.gpu_mask, 1);
	assert_int_equal(a.cpuset[0], 0xf);
	devices_view_apply(&v, &a, +1);
	assert_int_equal(v.gpu_free[0], 500);
	assert_int_equal(v.cores_free[0], 0);
	/* 500 more fits device 0 (best fit), cores do not. */
	assert_int_equal(devices_fit(&both, &v, &p), DEVICE_MISFIT_CORES);
	p.gpu_milli = 600; /* fits device 1 only; cores still do not */
	assert_int_equal(devices_fit(&both, &v, &p), DEVICE_MISFIT_CORES);
	v.gpu_free[1] = 100;
	assert_int_equal(devices_fit(&both, &v, &p), DEVICE_MISFIT_GPU);
	v.gpu_free[1] = 1000;
	devices_view_apply(&v, &a, -1);
	assert_int_equal(v.gpu_free[0], 1000);
	assert_int_equal(v.cores_free[0], 0xf);
}

/* --- reservation --------------------------------------------------------- */

static uint32_t sid(struct intern *t, const char *s)
{
	uint32_t v;
	assert_int_equal(intern_add_str(t, s, &v), 0);
	return v;
}

static struct node_event gpu_node(struct intern *t, const char *name, uint32_t model,
				  uint8_t n_gpus, uint8_t n_numa, uint16_t n_cores)
{
	struct node_event e;
	memset(&e, 0, sizeof(e));
	e.kind = NODE_EVENT_ADD;
	e.name = e.spec.name = sid(t, name);
	e.spec.allocatable.v[RES_CPU] = 16000;
	e.spec.allocatable.v[RES_MEMORY] = 64LL << 30;
	e.spec.allocatable.v[RES_PODS] = 110;
	e.spec.devices = (struct node_devices){.gpu_model = model, .n_gpus = n_gpus,
					       .n_numa = n_numa, .n_cores = n_cores};
	return e;
}

static void with_cpu(struct pod_spec *p, int64_t cpu_milli)
{
	p->request.v[RES_CPU] = p->nonzero_cpu_milli = cpu_milli;
	p->request.v[RES_MEMORY] = p->nonzero_mem_bytes = 1LL << 30;
}

/* The counters a refused reservation must leave as they were. */
struct counters {
	struct res_vec used;
	int64_t nz_cpu, nz_mem;
	uint32_t gpu[NODE_MAX_GPUS];
	uint64_t cores[CORE_WORDS];
};

static void read_counters(struct cluster *c, uint32_t slot, struct counters *out)
{
	memset(out, 0, sizeof(*out));
	const struct node_alloc *a = ledger_node(cluster_ledger(c), slot);
	ledger_load_used(a, &out->used, &out->nz_cpu, &out->nz_mem);
	memcpy(out->gpu, a->gpu_used, sizeof(out->gpu));
	memcpy(out->cores, a->cores_used, sizeof(out->cores));
}

static void test_reserve_all_or_nothing(void **state)
{
	(void)state;
	struct intern *t = intern_create();
	struct cluster *c = cluster_create(t, 2);
	assert_non_null(c);
	/* 4 GPUs; 16 cores on 2 NUMA nodes. */
	struct node_event ev = gpu_node(t, "n0", sid(t, "A100"), 4, 2, 16);
	char err[256];
	assert_int_equal(cluster_apply(c, &ev, 1, err, sizeof(err)), 0);
	const struct res_vec *alloc = &cluster_snapshot(c)->nodes[0].allocatable;
	const struct node_alloc *na = ledger_node(cluster_ledger(c), 0);
	struct counters before, after;

	/* A: 600 milli of device 1, cores 0-1, 2 cpu. */
	struct pod_spec pa = sharing_pod(600);
	pa.exclusive_cores = 2;
	with_cpu(&pa, 2000);
	struct device_assignment da = {.gpu_mask = 1u << 1, .gpu_milli = 600,
				       .n_cores = 2, .cpuset = {0x3}};
	uint64_t head = ledger_changes_head(cluster_ledger(c));
	assert_int_equal(ledger_reserve(cluster_ledger(c), 0, alloc, &pa, &da, NULL, NULL), 0);
	assert_int_equal(ledger_changes_head(cluster_ledger(c)), head + 1);
	uint32_t slot = 99;
	assert_int_equal(ledger_change_at(cluster_ledger(c), head, &slot), 1);
	assert_int_equal(slot, 0);
	read_counters(c, 0, &after);
	assert_int_equal(after.gpu[0], 0);
	assert_int_equal(after.gpu[1], 600);
	assert_int_equal(after.gpu[2], 0);
	assert_int_equal(after.gpu[3], 0);
	assert_int_equal(after.cores[0], 0x3);
	assert_int_equal(after.used.v[RES_CPU], 2000);
	assert_int_equal(after.used.v[RES_MEMORY], 1LL << 30);
	assert_int_equal(after.used.v[RES_PODS], 1);
	assert_int_equal(after.nz_cpu, 2000);

	/* The view the engine reads: 1000 - 600 = 400 on device 1; pool
	 * 0xffff less cores 0-1. */
	struct device_view v;
	ledger_load_devices(na, &ev.spec.devices, &v);
	assert_int_equal(v.gpu_free[0], 1000);
	assert_int_equal(v.gpu_free[1], 400);
	assert_int_equal(v.gpu_free[4], 0); /* past n_gpus: nothing free */
	assert_int_equal(v.cores_free[0], 0xfffc);

	/* D: 100 milli of device 3 (so device 3 is not whole). */
	struct pod_spec pd = sharing_pod(100);
	with_cpu(&pd, 1000);
	struct device_assignment dd = {.gpu_mask = 1u << 3, .gpu_milli = 100};
	assert_int_equal(ledger_reserve(cluster_ledger(c), 0, alloc, &pd, &dd, NULL, NULL), 0);

	/* Refusals, each changing nothing. The change log gains one entry
	 * when counters moved and were rolled back (cpu, memory and the pod
	 * count always move before the devices are tried). */
	struct {
		const char *what;
		struct pod_spec pod;
		struct device_assignment dev;
	} refused[4];
	/* 600 + 500 > 1000 on device 1. */
	refused[0].what = "share past a device";
	refused[0].pod = sharing_pod(500);
	refused[0].dev = (struct device_assignment){.gpu_mask = 1u << 1, .gpu_milli = 500};
	/* Devices 0 and 2 whole are free, but core 1 is held: the GPUs taken
	 * before the cores are refused must come back. */
	refused[1].what = "a held core";
	refused[1].pod = whole_pod(2);
	refused[1].pod.exclusive_cores = 2;
	refused[1].dev = (struct device_assignment){.gpu_mask = 0x5, .gpu_milli = 1000,
						    .n_cores = 2, .cpuset = {0x6}};
	/* Device 0 whole is free, device 3 has 100 taken: device 0 must
	 * come back. */
	refused[2].what = "a device not whole";
	refused[2].pod = whole_pod(2);
	refused[2].dev = (struct device_assignment){.gpu_mask = 0x9, .gpu_milli = 1000};
	/* Free cores 2-3 but held core 0 in the same word. */
	refused[3].what = "one held core among free ones";
	refused[3].pod = cores_pod(3);
	refused[3].dev = (struct device_assignment){.n_cores = 3, .cpuset = {0xd}};
	for (int i = 0; i < 4; i++) {
		with_cpu(&refused[i].pod, 1000);
		read_counters(c, 0, &before);
		head = ledger_changes_head(cluster_ledger(c));
		int rc = ledger_reserve(cluster_ledger(c), 0, alloc, &refused[i].pod, &refused[i].dev,
					 NULL, NULL);
		if (rc != -EAGAIN)
			fail_msg("%s: ledger_reserve returned %d, expected -EAGAIN",
				 refused[i].what, rc);
		read_counters(c, 0, &after);
		if (memcmp(&before, &after, sizeof(before)) != 0)
			fail_msg("%s: a refused reservation changed the counters",
				 refused[i].what);
		assert_int_equal(ledger_changes_head(cluster_ledger(c)), head + 1);
		assert_int_equal(ledger_change_at(cluster_ledger(c), head, &slot), 1);
		assert_int_equal(slot, 0);
	}

	/* Refused on cpu, the first counter: nothing moved, nothing logged,
	 * and the devices were never tried. */
	struct pod_spec huge = whole_pod(1);
	with_cpu(&huge, 100000);
	struct device_assignment dh = {.gpu_mask = 1u << 0, .gpu_milli = 1000};
	read_counters(c, 0, &before);
	head = ledger_changes_head(cluster_ledger(c));
	assert_int_equal(ledger_reserve(cluster_ledger(c), 0, alloc, &huge, &dh, NULL, NULL), -EAGAIN);
	read_counters(c, 0, &after);
	assert_memory_equal(&before, &after, sizeof(before));
	assert_int_equal(ledger_changes_head(cluster_ledger(c)), head);

	/* What was refused then fits once A is given back. */
	head = ledger_changes_head(cluster_ledger(c));
	assert_int_equal(ledger_account(cluster_ledger(c), 0, &pa, &da, -1), 0);
	assert_int_equal(ledger_changes_head(cluster_ledger(c)), head + 1);
	read_counters(c, 0, &after);
	assert_int_equal(after.gpu[1], 0);
	assert_int_equal(after.gpu[3], 100);
	assert_int_equal(after.cores[0], 0);
	assert_int_equal(after.used.v[RES_CPU], 1000); /* D's */
	assert_int_equal(after.used.v[RES_PODS], 1);
	assert_int_equal(after.nz_cpu, 1000);
	assert_int_equal(ledger_reserve(cluster_ledger(c), 0, alloc, &refused[1].pod, &refused[1].dev,
					 NULL, NULL), 0);
	read_counters(c, 0, &after);
	assert_int_equal(after.gpu[0], 1000);
	assert_int_equal(after.gpu[2], 1000);
	assert_int_equal(after.cores[0], 0x6);

	/* Bound pods are accounted without a check, devices included. */
	assert_int_equal(ledger_account(cluster_ledger(c), 0, &pa, &da, +1), 0);
	read_counters(c, 0, &after);
	assert_int_equal(after.gpu[1], 600);
	assert_int_equal(after.cores[0], 0x7);
	assert_int_equal(ledger_account(cluster_ledger(c), 0, &pa, &da, -1), 0);
	assert_int_equal(ledger_account(cluster_ledger(c), 0, &refused[1].pod, &refused[1].dev, -1), 0);
	assert_int_equal(ledger_account(cluster_ledger(c), 0, &pd, &dd, -1), 0);
	read_counters(c, 0, &after);
	struct counters zero;
	memset(&zero, 0, sizeof(zero));
	assert_memory_equal(&after, &zero, sizeof(zero));

	cluster_destroy(c);
	intern_destroy(t);
}

/* --- fragmentation ------------------------------------------------------- */

/* Builds a mix through the engine's own path: counts[i] pods of pods[i],
 * then frag_mix_build (every shape is in: these mixes are small enough
 * that the 95 % cover takes them all). */
static void mix_of(struct frag_mix *m, const struct pod_spec *pods,
		   const unsigned *counts, unsigned n)
{
	struct frag_counter *c = malloc(sizeof(*c));
	assert_non_null(c);
	frag_counter_init(c);
	for (unsigned i = 0; i < n; i++)
		for (unsigned k = 0; k < counts[i]; k++)
			frag_counter_add(c, &pods[i]);
	memset(m, 0, sizeof(*m));
	frag_mix_build(m, c, FRAG_MAX_TYPES, false);
	free(c);
}

/* The shapes of the hand-checked cases: S (cpu 1000, one device, 500
 * milli), N (cpu 100, no GPU), T (cpu 1000, 200 milli), W1 and W2 (cpu
 * 1000, one or two whole devices). */
static struct pod_spec shape_s(void)
{
	struct pod_spec p = sharing_pod(500);
	with_cpu(&p, 1000);
	return p;
}

static struct pod_spec shape_n(void)
{
	struct pod_spec p = cores_pod(0);
	with_cpu(&p, 100);
	return p;
}

static struct pod_spec shape_gpu(struct pod_spec p)
{
	with_cpu(&p, 1000);
	return p;
}

/* frag_growth from the node's fragmentation now: the one call that
 * knows frag_growth's arguments. */
static int64_t growth_of(const struct frag_mix *m, const struct node_devices *d,
			 int64_t cpu_left, const struct device_view *v,
			 const struct pod_spec *pod, int *gpu)
{
	int64_t before = frag_amount(m, d, cpu_left, v->gpu_free);
	return frag_growth(m, d, cpu_left, v, before, pod, gpu);
}

/* S x2 + N x1. */
static void two_shape_mix(struct frag_mix *m)
{
	struct pod_spec pods[2] = {shape_s(), shape_n()};
	mix_of(m, pods, (const unsigned[]){2, 1}, 2);
	assert_int_equal(m->total, 3);
}

static void test_frag_amount(void **state)
{
	(void)state;
	struct frag_mix m;
	two_shape_mix(&m);
	struct node_devices d = {.gpu_model = MODEL_A, .n_gpus = 2};
	uint16_t free_milli[NODE_MAX_GPUS] = {1000, 300};

	/* Free 1300. S: device 0 holds 500, device 1 (300) does not: 300
	 * fragmented, x2 = 600. N asks no GPU: all 1300 fragmented, x1.
	 * 600 + 1300 = 1900. */
	assert_int_equal(frag_amount(&m, &d, 8000, free_milli), 1900);
	/* cpu left 500 < S's 1000: S cannot run at all, 1300 x2 = 2600;
	 * + 1300 = 3900. */
	assert_int_equal(frag_amount(&m, &d, 500, free_milli), 3900);
	/* Exactly S's cpu is enough: back to 1900. */
	assert_int_equal(frag_amount(&m, &d, 1000, free_milli), 1900);
	/* Nothing free: nothing to fragment. */
	uint16_t none[NODE_MAX_GPUS] = {0};
	assert_int_equal(frag_amount(&m, &d, 8000, none), 0);
	/* Free milli past n_gpus is not the node's: {1000}: S fits, 0
	 * fragmented; N: 1000. */
	struct node_devices one = {.gpu_model = MODEL_A, .n_gpus = 1};
	assert_int_equal(frag_amount(&m, &one, 8000, free_milli), 1000);

	/* S wanting model B on an A node cannot run: 2600 + 1300 = 3900;
	 * wanting {A, B} it can: 1900. */
	struct pod_spec pods[4] = {shape_s(), shape_n()};
	pods[0].n_gpu_models = 1;
	pods[0].gpu_models[0] = MODEL_B;
	mix_of(&m, pods, (const unsigned[]){2, 1}, 2);
	assert_int_equal(frag_amount(&m, &d, 8000, free_milli), 3900);
	pods[0].n_gpu_models = 2;
	pods[0].gpu_models[0] = MODEL_A;
	pods[0].gpu_models[1] = MODEL_B;
	mix_of(&m, pods, (const unsigned[]){2, 1}, 2);
	assert_int_equal(frag_amount(&m, &d, 8000, free_milli), 1900);

	/* W2 x2 + N x1. {1000, 300}: one whole device, W2 cannot run:
	 * 1300 x2 + 1300 = 3900. {1000, 1000}: 0 + 2000. Three devices
	 * {1000, 1000, 300}: 300 x2 + 2300 = 2900. */
	pods[0] = shape_gpu(whole_pod(2));
	mix_of(&m, pods, (const unsigned[]){2, 1}, 2);
	assert_int_equal(frag_amount(&m, &d, 8000, free_milli), 3900);
	uint16_t whole2[NODE_MAX_GPUS] = {1000, 1000};
	assert_int_equal(frag_amount(&m, &d, 8000, whole2), 2000);
	struct node_devices three = {.gpu_model = MODEL_A, .n_gpus = 3};
	uint16_t whole3[NODE_MAX_GPUS] = {1000, 1000, 300};
	assert_int_equal(frag_amount(&m, &three, 8000, whole3), 2900);

	/* S x2, T, W1, N x1 each, on 4 devices {1000, 300, 600, 100}, free
	 * 2000:
	 *   S (500): 1000 and 600 hold it; 300 + 100 below: 400 x2 = 800;
	 *   T (200): 1000, 300, 600 hold it; 100 below:            100;
	 *   W1: 1000 is whole; 300 + 600 + 100 below:             1000;
	 *   N: all:                                               2000;
	 * 3900. With cpu left 900 only N (cpu 100) can run: 2000 x5 = 10000. */
	pods[0] = shape_s();
	pods[1] = shape_gpu(sharing_pod(200));
	pods[2] = shape_gpu(whole_pod(1));
	pods[3] = shape_n();
	mix_of(&m, pods, (const unsigned[]){2, 1, 1, 1}, 4);
	assert_int_equal(m.total, 5);
	struct node_devices four = {.gpu_model = MODEL_A, .n_gpus = 4};
	uint16_t mixed[NODE_MAX_GPUS] = {1000, 300, 600, 100};
	assert_int_equal(frag_amount(&m, &four, 8000, mixed), 3900);
	assert_int_equal(frag_amount(&m, &four, 900, mixed), 10000);
}

static void test_frag_growth(void **state)
{
	(void)state;
	struct frag_mix m;
	two_shape_mix(&m);
	struct node_devices d = {.gpu_model = MODEL_A, .n_gpus = 2};
	struct device_view v;
	devices_view_empty(&d, &v);
	v.gpu_free[1] = 300; /* {1000, 300}: 1900 before (test_frag_amount) */
	int gpu = 99;

	/* 200 milli, cpu 1000 (cpu left 8000 -> 7000, S still runs).
	 * Device 0: {800, 300}, free 1100: S 300 x2 + N 1100 = 1700, -200.
	 * Device 1: {1000, 100}, free 1100: S 100 x2 + N 1100 = 1300, -600.
	 * Device 1 grows it least (fills the fragment). */
	struct pod_spec p = sharing_pod(200);
	with_cpu(&p, 1000);
	assert_int_equal(growth_of(&m, &d, 8000, &v, &p, &gpu), -600);
	assert_int_equal(gpu, 1);
	/* 600 milli: only device 0: {400, 300}, free 700; S has no device
	 * with 500: 700 x2 + 700 = 2100, +200. */
	p = sharing_pod(600);
	with_cpu(&p, 1000);
	assert_int_equal(growth_of(&m, &d, 8000, &v, &p, &gpu), 200);
	assert_int_equal(gpu, 0);
	/* One whole device: device 0 -> {0, 300}, free 300: S 300 x2 + 300 =
	 * 900, -1000; no device index for whole devices. */
	p = whole_pod(1);
	with_cpu(&p, 1000);
	assert_int_equal(growth_of(&m, &d, 8000, &v, &p, &gpu), -1000);
	assert_int_equal(gpu, -1);
	/* No GPU, 7500 cpu: cpu left 500 < S's 1000: 1300 x2 + 1300 = 3900,
	 * +2000. */
	p = cores_pod(0);
	with_cpu(&p, 7500);
	assert_int_equal(growth_of(&m, &d, 8000, &v, &p, &gpu), 2000);
	assert_int_equal(gpu, -1);

	/* Three devices {500, 500, 1000}: before, S fits all three (0) and
	 * N has 2000: 2000. 200 milli on device 0 (or 1, the same):
	 * {300, 500, 1000}: S 300 x2 + 1800 = 2400, +400. On device 2:
	 * {500, 500, 800}: 0 + 1800, -200. FGD keeps the halves whole. */
	struct node_devices three = {.gpu_model = MODEL_A, .n_gpus = 3};
	devices_view_empty(&three, &v);
	v.gpu_free[0] = v.gpu_free[1] = 500;
	p = sharing_pod(200);
	with_cpu(&p, 1000);
	assert_int_equal(growth_of(&m, &three, 8000, &v, &p, &gpu), -200);
	assert_int_equal(gpu, 2);
	/* With N alone in the mix every device gives 1800 - 2000 = -200: a
	 * tie, the lowest index. */
	struct pod_spec n = shape_n();
	mix_of(&m, &n, (const unsigned[]){1}, 1);
	assert_int_equal(growth_of(&m, &three, 8000, &v, &p, &gpu), -200);
	assert_int_equal(gpu, 0);
	/* An empty mix: no growth; the first device that fits. */
	memset(&m, 0, sizeof(m));
	assert_int_equal(growth_of(&m, &three, 8000, &v, &p, &gpu), 0);
	assert_int_equal(gpu, 0);
}

/* Model reservation (frag_internal.h). The cluster: model A with 6 GPUs
 * (6,000 milli), model B with 2 (2,000); 8,000 in all. The mix: 6 pods of
 * one whole GPU on any model and 2 bound to B; mix total 8 pods. GPU
 * demand 8,000, of which B-bound 2,000; B's need is 2,000 and A's none.
 * pressure(B) = 2,000 x 8,000 / (8,000 x 2,000) = 1.0; pressure(A) = 0.
 * A whole GPU on B at 100 %: 8 x 1 x 1,000 x 1.0 = 8,000; at 50 %: 4,000;
 * a 500-milli share on B: 4,000; anything on A, a CPU-only pod, a model
 * the cluster lacks, or 0 %: nothing. Then a mix where the bound pods
 * accept A or B (4 and 4 pods): their 4,000 splits by capacity, A 3,000
 * and B 1,000; share(A) = 3,000 x 8,000 / (8,000 x 6,000) = 0.5 and
 * share(B) = 1,000 x 8,000 / (8,000 x 2,000) = 0.5: no model is
 * preferred; past the free 0.2, pressure (0.5 - 0.2) / 0.8 = 0.375, and a
 * whole GPU costs 8 x 1,000 x 0.375 = 3,000 on either. (In the first mix
 * share(B) = 1 gives pressure (1 - 0.2) / 0.8 = 1.) Last, 1 B-bound pod
 * among 9 any-model ones: share(B) = 1,000 x 8,000 / (10,000 x 2,000) =
 * 0.4, pressure 0.25, a whole GPU on B 10 x 1,000 x 0.25 = 2,500; and
 * if that one B-bound pod asks 250 milli, share(B) = 250 x 8,000 / (9,250
 * x 2,000) = 0.11, under the free 0.2: nothing. */
static void test_frag_model_reservation(void **state)
{
	(void)state;
	struct frag_models fm;
	frag_models_reset(&fm);
	frag_models_add(&fm, MODEL_A, 4);
	frag_models_add(&fm, MODEL_B, 2);
	frag_models_add(&fm, MODEL_A, 2);
	frag_models_add(&fm, 0, 8); /* no model given: not counted */
	struct pod_spec any = whole_pod(1), on_b = whole_pod(1);
	with_cpu(&any, 1000);
	with_cpu(&on_b, 1000);
	on_b.n_gpu_models = 1;
	on_b.gpu_models[0] = MODEL_B;
	struct pod_spec pods[2] = {any, on_b};
	unsigned counts[2] = {6, 2};
	struct frag_mix *m = malloc(sizeof(*m));
	assert_non_null(m);
	mix_of(m, pods, counts, 2);
	assert_int_equal(m->total, 8);
	assert_int_equal(frag_reservation(&fm, m, MODEL_B, &any, 100), 8000);
	assert_int_equal(frag_reservation(&fm, m, MODEL_B, &any, 50), 4000);
	struct pod_spec share = sharing_pod(500);
	assert_int_equal(frag_reservation(&fm, m, MODEL_B, &share, 100), 4000);
	assert_int_equal(frag_reservation(&fm, m, MODEL_A, &any, 100), 0);
	struct pod_spec cpu = shape_n();
	assert_int_equal(frag_reservation(&fm, m, MODEL_B, &cpu, 100), 0);
	assert_int_equal(frag_reservation(&fm, m, MODEL_C, &any, 100), 0);
	assert_int_equal(frag_reservation(&fm, m, MODEL_B, &any, 0), 0);

	struct pod_spec on_ab = on_b;
	on_ab.n_gpu_models = 2;
	on_ab.gpu_models[0] = MODEL_A;
	on_ab.gpu_models[1] = MODEL_B;
	pods[1] = on_ab;
	counts[0] = counts[1] = 4;
	uint64_t epoch = m->epoch;
	mix_of(m, pods, counts, 2);
	m->epoch = epoch + 1; /* a new mix: the pressure is computed again */
	assert_int_equal(frag_reservation(&fm, m, MODEL_A, &any, 100), 3000);
	assert_int_equal(frag_reservation(&fm, m, MODEL_B, &any, 100), 3000);

	pods[1] = on_b;
	counts[0] = 9;
	counts[1] = 1;
	mix_of(m, pods, counts, 2);
	m->epoch = epoch + 2;
	assert_int_equal(frag_reservation(&fm, m, MODEL_B, &any, 100), 2500);
	pods[1] = sharing_pod(250);
	with_cpu(&pods[1], 1000);
	pods[1].n_gpu_models = 1;
	pods[1].gpu_models[0] = MODEL_B;
	mix_of(m, pods, counts, 2);
	assert_int_equal(m->n, 2); /* the B-bound shape is in the mix */
	m->epoch = epoch + 3;
	assert_int_equal(frag_reservation(&fm, m, MODEL_B, &any, 100), 0);
	free(m);
}

/* cpu-limited shares (frag_internal.h), one shape S (500 milli, cpu
 * 1,000), weight 1, on a node of two devices:
 * - both free, cpu 2,000: the devices hold 4 pods of S, the cpu 2. The
 *   paper counts nothing fragmented. Walking from the most free device,
 *   2 pods fill the first (free 1,000, own 2 x 500); the second is left:
 *   usable (3 x 1,000 + 1,000) / 4 = 1,000 of 2,000: 1,000 fragmented.
 * - cpu 4,000: the cpu holds all 4: nothing, as the paper.
 * - free 1,000 and 300, cpu 1,000: the paper counts the 300 only; the cpu
 *   holds one pod of the first device's two: usable (3 x 1,000 + 500) / 4
 *   = 875 of 1,300: 425.
 * - cpu 500: S does not fit at all: all 2,000, either way. */
static void test_frag_cpu_limited(void **state)
{
	(void)state;
	struct pod_spec pods[1] = {shape_s()};
	unsigned counts[1] = {1};
	struct frag_mix *m = malloc(sizeof(*m));
	assert_non_null(m);
	mix_of(m, pods, counts, 1);
	struct node_devices d = {.n_gpus = 2};
	uint16_t both[NODE_MAX_GPUS] = {1000, 1000}, part[NODE_MAX_GPUS] = {1000, 300};
	assert_int_equal(frag_amount(m, &d, 2000, both), 0);
	assert_int_equal(frag_amount(m, &d, 1000, part), 300);
	m->cpu_limited = true;
	assert_int_equal(frag_amount(m, &d, 2000, both), 1000);
	assert_int_equal(frag_amount(m, &d, 4000, both), 0);
	assert_int_equal(frag_amount(m, &d, 1000, part), 425);
	assert_int_equal(frag_amount(m, &d, 500, both), 2000);
	free(m);
}

static void test_frag_mix(void **state)
{
	(void)state;
	struct frag_counter *c = malloc(sizeof(*c));
	assert_non_null(c);
	frag_counter_init(c);
	struct pod_spec a = sharing_pod(500), b = whole_pod(2), x = sharing_pod(100),
			y = cores_pod(0);
	with_cpu(&a, 1000);
	with_cpu(&b, 4000);
	with_cpu(&x, 1000);
	with_cpu(&y, 300);
	/* 40 A, 21 B, 2 X, 1 Y: 64 pods, due a build at the 16th, 32nd and
	 * 64th (FRAG_FIRST_REFRESH 16, then doubling). */
	for (int i = 0; i < 64; i++) {
		const struct pod_spec *p = i < 40 ? &a : i < 61 ? &b : i < 63 ? &x : &y;
		assert_int_equal(frag_counter_add(c, p), i == 15 || i == 31 || i == 63);
	}
	struct frag_mix m;
	memset(&m, 0, sizeof(m));
	frag_mix_build(&m, c, FRAG_MAX_TYPES, false);
	/* By count: A 40 (40/64 < 95 %: go on), B 21 (61/64 = 95.3 %: the
	 * one that crosses the cover is taken, then stop). */
	assert_int_equal(m.epoch, 1);
	assert_int_equal(m.n, 2);
	assert_int_equal(m.weight[0], 40);
	assert_int_equal(m.weight[1], 21);
	assert_int_equal(m.total, 61);
	assert_int_equal(m.shape[0].gpu_milli, 500);
	assert_int_equal(m.shape[0].num_gpu, 1);
	assert_int_equal(m.shape[0].cpu_milli, 1000);
	assert_int_equal(m.shape[1].num_gpu, 2);
	assert_int_equal(m.shape[1].cpu_milli, 4000);
	/* The next build is due at 2 x 64 = 128 pods. */
	for (int i = 64; i < 127; i++)
		assert_false(frag_counter_add(c, &y));
	assert_true(frag_counter_add(c, &y));
	free(c);
}

/* --- the engine ---------------------------------------------------------- */

struct eworld {
	struct intern *strings;
	struct res_names res;
	struct plugin_ctx ctx;
	struct cluster *c;
	struct engine *e;
	uint32_t a100, v100, h100;
	uint64_t seq;
};

static void eworld_init(struct eworld *w, const struct node_event *ev, unsigned n,
			const struct sched_config *cfg)
{
	char err[256];
	assert_int_equal(cluster_apply(w->c, ev, n, err, sizeof(err)), 0);
	w->e = engine_create(w->c, &w->ctx, cfg, 1, 0);
	assert_non_null(w->e);
}

static void eworld_strings(struct eworld *w, unsigned capacity)
{
	memset(w, 0, sizeof(*w));
	w->strings = intern_create();
	res_names_init(&w->res);
	assert_int_equal(plugin_ctx_init(&w->ctx, w->strings, &w->res), 0);
	w->c = cluster_create(w->strings, capacity);
	assert_non_null(w->c);
	w->a100 = sid(w->strings, "A100");
	w->v100 = sid(w->strings, "V100");
	w->h100 = sid(w->strings, "H100");
}

static void eworld_destroy(struct eworld *w)
{
	engine_destroy(w->e);
	cluster_destroy(w->c);
	intern_destroy(w->strings);
}

/* Places with both paths, which must agree on node, score and devices;
 * commits what they chose. Returns the placement. */
static struct placement place_commit(struct eworld *w, const struct pod_spec *pod)
{
	struct placement fast, ref;
	uint64_t seq = w->seq++;
	assert_int_equal(engine_place_reference(w->e, pod, seq, NULL, &ref), 0);
	assert_int_equal(engine_place(w->e, pod, seq, &fast), 0);
	assert_int_equal(fast.slot, ref.slot);
	assert_int_equal(fast.score, ref.score);
	assert_memory_equal(&fast.devices, &ref.devices, sizeof(fast.devices));
	if (fast.slot >= 0)
		assert_int_equal(commit_pod(w->e, pod, (uint32_t)fast.slot,
					       &fast.devices), 0);
	urcu_qsbr_quiescent_state();
	return fast;
}

static struct pod_spec model_pod(struct pod_spec p, uint32_t model, int64_t cpu)
{
	with_cpu(&p, cpu);
	if (model != 0) {
		p.n_gpu_models = 1;
		p.gpu_models[0] = model;
	}
	return p;
}

static void test_engine_best_fit(void **state)
{
	(void)state;
	struct eworld w;
	eworld_strings(&w, 4);
	/* n0: 4 A100, 16 cores on 2 NUMA nodes; n1: 2 V100; n2: 2 A100.
	 * All 16 cpu: cpu_max 16000, gpu_max 4000. */
	struct node_event ev[3] = {
		gpu_node(w.strings, "n0", w.a100, 4, 2, 16),
		gpu_node(w.strings, "n1", w.v100, 2, 0, 0),
		gpu_node(w.strings, "n2", w.a100, 2, 0, 0),
	};
	struct sched_config cfg;
	sched_config_default(&cfg);
	cfg.percentage_of_nodes_to_score = 100;
	cfg.profiles[0].score.weight_taint = cfg.profiles[0].score.weight_affinity = 0;
	cfg.profiles[0].score.weight_fit = cfg.profiles[0].score.weight_balanced = 0;
	cfg.profiles[0].score.weight_gpu_best_fit = 1;
	eworld_init(&w, ev, 3, &cfg);
	struct placement pl;

	/* P1: 500 milli of an A100, 1 cpu. GpuBestFit = 100000 - 50000 cpu
	 * left / 16000 - 50000 GPU left / 4000:
	 * n0: 100000 - 46875 (15000) - 43750 (3500) = 9375;
	 * n2: 100000 - 46875 (15000) - 18750 (1500) = 34375. n2, device 0
	 * (both whole: the lower). */
	struct pod_spec p1 = model_pod(sharing_pod(500), w.a100, 1000);
	pl = place_commit(&w, &p1);
	assert_int_equal(pl.slot, 2);
	assert_int_equal(pl.score, 34375);
	assert_int_equal(pl.feasible, 2);
	assert_int_equal(pl.devices.gpu_mask, 1u << 0);
	assert_int_equal(pl.devices.gpu_milli, 500);
	/* P2: 300 milli: n2 (cpu 14000 -> 43750; GPU 1200 -> 15000:
	 * 41250) over n0 (6875); on n2 {500, 1000} the best fit is device 0. */
	struct pod_spec p2 = model_pod(sharing_pod(300), w.a100, 1000);
	pl = place_commit(&w, &p2);
	assert_int_equal(pl.slot, 2);
	assert_int_equal(pl.score, 41250);
	assert_int_equal(pl.devices.gpu_mask, 1u << 0);
	assert_int_equal(pl.devices.gpu_milli, 300);
	/* P3: two whole A100: n2 has one whole device left, so n0, 0 and 1. */
	struct pod_spec p3 = model_pod(whole_pod(2), w.a100, 1000);
	pl = place_commit(&w, &p3);
	assert_int_equal(pl.slot, 0);
	assert_int_equal(pl.feasible, 1);
	assert_int_equal(pl.devices.gpu_mask, 0x3);
	assert_int_equal(pl.devices.gpu_milli, 1000);
	/* P4: a whole V100: only n1. */
	struct pod_spec p4 = model_pod(whole_pod(1), w.v100, 1000);
	pl = place_commit(&w, &p4);
	assert_int_equal(pl.slot, 1);
	assert_int_equal(pl.devices.gpu_mask, 1u << 0);
	/* P5: 900 of an A100. n2 {200, 1000}: cpu 13000 -> 40625, GPU 300 ->
	 * 3750: 55625. n0 {0, 0, 1000, 1000}: cpu 14000 -> 43750, GPU 1100
	 * -> 13750: 42500. n2, device 1. */
	struct pod_spec p5 = model_pod(sharing_pod(900), w.a100, 1000);
	pl = place_commit(&w, &p5);
	assert_int_equal(pl.slot, 2);
	assert_int_equal(pl.score, 55625);
	assert_int_equal(pl.devices.gpu_mask, 1u << 1);
	/* P6: 900 again: n2 {200, 100} cannot; n0, devices 2 and 3 tie at
	 * 1000: device 2. */
	pl = place_commit(&w, &p5);
	assert_int_equal(pl.slot, 0);
	assert_int_equal(pl.devices.gpu_mask, 1u << 2);
	assert_int_equal(pl.devices.gpu_milli, 900);
	/* P7: a whole A100 with 4 exclusive cores: only n0 has a whole A100
	 * (device 3); cores 0-3 (NUMA 0, the lower of two equal). */
	struct pod_spec p7 = model_pod(whole_pod(1), w.a100, 4000);
	p7.exclusive_cores = 4;
	pl = place_commit(&w, &p7);
	assert_int_equal(pl.slot, 0);
	assert_int_equal(pl.devices.gpu_mask, 1u << 3);
	assert_int_equal(pl.devices.n_cores, 4);
	assert_int_equal(pl.devices.cpuset[0], 0xf);

	/* The counters are what the placements say. */
	const struct node_alloc *a0 = ledger_node(cluster_ledger(w.c), 0);
	const struct node_alloc *a1 = ledger_node(cluster_ledger(w.c), 1);
	const struct node_alloc *a2 = ledger_node(cluster_ledger(w.c), 2);
	assert_int_equal(a0->gpu_used[0], 1000);
	assert_int_equal(a0->gpu_used[1], 1000);
	assert_int_equal(a0->gpu_used[2], 900);
	assert_int_equal(a0->gpu_used[3], 1000);
	assert_int_equal(a0->cores_used[0], 0xf);
	assert_int_equal(a0->used[RES_CPU], 1000 + 1000 + 4000);
	assert_int_equal(a0->used[RES_PODS], 3);
	assert_int_equal(a1->gpu_used[0], 1000);
	assert_int_equal(a1->gpu_used[1], 0);
	assert_int_equal(a2->gpu_used[0], 800);
	assert_int_equal(a2->gpu_used[1], 900);
	assert_int_equal(a2->used[RES_PODS], 3);
	assert_int_equal(a2->cores_used[0], 0);

	/* Unschedulable: 500 of an A100. n0 {0, 0, 100, 0} and n2 {200, 100}
	 * have no device with 500; n1 is a V100. */
	char msg[512];
	struct pod_spec p8 = model_pod(sharing_pod(500), w.a100, 1000);
	pl = place_commit(&w, &p8);
	assert_int_equal(pl.slot, -1);
	engine_message(w.e, msg, sizeof(msg));
	assert_string_equal(msg, "0/3 nodes are available: 1 node(s) didn't have the "
				 "requested GPU model, 2 node(s) didn't have a GPU "
				 "device with enough free.");
	/* A model no node has. */
	struct pod_spec p9 = model_pod(sharing_pod(100), w.h100, 1000);
	pl = place_commit(&w, &p9);
	assert_int_equal(pl.slot, -1);
	engine_message(w.e, msg, sizeof(msg));
	assert_string_equal(msg, "0/3 nodes are available: 3 node(s) didn't have the "
				 "requested GPU model.");
	/* P10: 8 exclusive cores, 8 cpu, no GPU. GPU left is all free milli:
	 * n0: cpu 10000 - 8000 = 2000 -> 6250, GPU 100 -> 1250: 92500;
	 * n1: 15000 - 8000 -> 21875, 1000 -> 12500: 65625;
	 * n2: 13000 - 8000 -> 15625, 300 -> 3750: 80625.
	 * n0, where NUMA 0 has 4 free (4-7) and NUMA 1 all 8: NUMA 1. */
	struct pod_spec p10 = model_pod(cores_pod(8), 0, 8000);
	pl = place_commit(&w, &p10);
	assert_int_equal(pl.slot, 0);
	assert_int_equal(pl.score, 92500);
	assert_int_equal(pl.devices.gpu_mask, 0);
	assert_int_equal(pl.devices.n_cores, 8);
	assert_int_equal(pl.devices.cpuset[0], 0xff00);
	/* P11: 2 cores, 2 cpu: n0 (cpu left 0: 98750) over n2 (61875) and
	 * n1 (46875); NUMA 0's 4 free hold 2: cores 4, 5. */
	struct pod_spec p11 = model_pod(cores_pod(2), 0, 2000);
	pl = place_commit(&w, &p11);
	assert_int_equal(pl.slot, 0);
	assert_int_equal(pl.score, 98750);
	assert_int_equal(pl.devices.cpuset[0], 0x30);
	assert_int_equal(a0->cores_used[0], 0xff3f);
	assert_int_equal(a0->used[RES_CPU], 16000);

	/* P7 again: n0 has neither the cpu nor a whole A100 now. */
	pl = place_commit(&w, &p7);
	assert_int_equal(pl.slot, -1);
	/* Given back (cpu 4000, device 3, cores 0-3), it fits where it was:
	 * NUMA 0 has 0-3, 6, 7 free, NUMA 1 none; the lowest four. */
	struct device_assignment back = {.gpu_mask = 1u << 3, .gpu_milli = 1000,
					 .n_cores = 4, .cpuset = {0xf}};
	assert_int_equal(ledger_account(cluster_ledger(w.c), 0, &p7, &back, -1), 0);
	assert_int_equal(a0->cores_used[0], 0xff30);
	assert_int_equal(a0->gpu_used[3], 0);
	pl = place_commit(&w, &p7);
	assert_int_equal(pl.slot, 0);
	assert_int_equal(pl.devices.gpu_mask, 1u << 3);
	assert_int_equal(pl.devices.cpuset[0], 0xf);
	assert_int_equal(a0->cores_used[0], 0xff3f);
	eworld_destroy(&w);
}

static void test_engine_cores(void **state)
{
	(void)state;
	struct eworld w;
	eworld_strings(&w, 2);
	/* One node, no GPU, 8 cores on 2 NUMA nodes: 0-3 and 4-7. */
	struct node_event ev = gpu_node(w.strings, "c0", 0, 0, 2, 8);
	struct sched_config cfg;
	sched_config_default(&cfg);
	eworld_init(&w, &ev, 1, &cfg);
	const struct node_alloc *a = ledger_node(cluster_ledger(w.c), 0);
	/* 3: a tie at 4 free, NUMA 0: 0-2. */
	struct pod_spec p3 = model_pod(cores_pod(3), 0, 3000);
	struct placement pl = place_commit(&w, &p3);
	assert_int_equal(pl.slot, 0);
	assert_int_equal(pl.devices.cpuset[0], 0x7);
	/* 2: NUMA 0 has 1, NUMA 1 4: 4, 5. */
	struct pod_spec p2 = model_pod(cores_pod(2), 0, 2000);
	pl = place_commit(&w, &p2);
	assert_int_equal(pl.devices.cpuset[0], 0x30);
	/* 1: NUMA 0's last (the best fit), 3. */
	struct pod_spec p1 = model_pod(cores_pod(1), 0, 1000);
	pl = place_commit(&w, &p1);
	assert_int_equal(pl.devices.cpuset[0], 0x8);
	/* 3 again: only 6 and 7 are free, though 10 cpu are. */
	pl = place_commit(&w, &p3);
	assert_int_equal(pl.slot, -1);
	char msg[512];
	engine_message(w.e, msg, sizeof(msg));
	assert_string_equal(msg, "0/1 nodes are available: 1 node(s) didn't have "
				 "enough free exclusive cores.");
	/* 2 takes them. */
	pl = place_commit(&w, &p2);
	assert_int_equal(pl.devices.cpuset[0], 0xc0);
	assert_int_equal(a->cores_used[0], 0xff);
	assert_int_equal(a->used[RES_CPU], 8000);
	eworld_destroy(&w);
}

static void test_engine_fragmentation(void **state)
{
	(void)state;
	struct eworld w;
	eworld_strings(&w, 4);
	struct node_event ev[2] = {
		gpu_node(w.strings, "n0", w.a100, 2, 0, 0),
		gpu_node(w.strings, "n1", w.a100, 2, 0, 0),
	};
	struct sched_config cfg;
	sched_config_default(&cfg);
	cfg.percentage_of_nodes_to_score = 100;
	cfg.profiles[0].score.weight_taint = cfg.profiles[0].score.weight_affinity = 0;
	cfg.profiles[0].score.weight_fit = cfg.profiles[0].score.weight_balanced = 0;
	cfg.profiles[0].score.weight_gpu_frag = 1;
	eworld_init(&w, ev, 2, &cfg);
	/* n1 already holds 800 milli of device 0: free {200, 1000}. */
	struct pod_spec bound = model_pod(sharing_pod(800), 0, 1000);
	struct device_assignment bd = {.gpu_mask = 1u << 0, .gpu_milli = 800};
	assert_int_equal(ledger_account(cluster_ledger(w.c), 1, &bound, &bd, +1), 0);

	/* The mix learns from the first 64 pods it sees (placed, not
	 * committed): all S (500 milli, 1 cpu), so the mix is S x 64. */
	struct pod_spec s = model_pod(sharing_pod(500), 0, 1000);
	struct placement pl;
	for (int i = 0; i < 64; i++)
		assert_int_equal(engine_place(w.e, &s, w.seq++, &pl), 0);

	/* Q1: 200 milli. n0 {1000, 1000}: S fits either way, no growth:
	 * score 50000. n1 {200, 1000}: before, S has device 1 and 200 is
	 * fragmented (x64 = 12800); on device 0 -> {0, 1000}: 0, growth
	 * -12800; on device 1 -> {200, 800}: still 200, growth 0. So n1,
	 * device 0: 100000 / (1 + e^-(12800 / 64 / 1000)) = 54983. */
	struct pod_spec q = model_pod(sharing_pod(200), 0, 1000);
	pl = place_commit(&w, &q);
	assert_int_equal(pl.slot, 1);
	assert_int_equal(pl.score, 54983);
	assert_int_equal(pl.devices.gpu_mask, 1u << 0);
	assert_int_equal(pl.devices.gpu_milli, 200);
	const struct node_alloc *a1 = ledger_node(cluster_ledger(w.c), 1);
	assert_int_equal(a1->gpu_used[0], 1000);

	/* From here n0 alone: n1 cordoned. */
	struct node_event cordon;
	memset(&cordon, 0, sizeof(cordon));
	cordon.kind = NODE_EVENT_CORDON;
	cordon.name = ev[1].name;
	char err[256];
	assert_int_equal(cluster_apply(w.c, &cordon, 1, err, sizeof(err)), 0);
	const struct node_alloc *a0 = ledger_node(cluster_ledger(w.c), 0);

	/* Q2: 300 on {1000, 1000}: equal, device 0 -> {700, 1000}. */
	q = model_pod(sharing_pod(300), 0, 1000);
	pl = place_commit(&w, &q);
	assert_int_equal(pl.slot, 0);
	assert_int_equal(pl.devices.gpu_mask, 1u << 0);
	/* Q3: 300 again. Device 0 -> {400, 1000}: S loses 400 (growth
	 * +25600); device 1 -> {700, 700}: S fits both (growth 0). Device 1,
	 * where a best fit would take device 0. */
	pl = place_commit(&w, &q);
	assert_int_equal(pl.slot, 0);
	assert_int_equal(pl.devices.gpu_mask, 1u << 1);
	assert_int_equal(pl.score, 50000);
	/* Q4: 300 on {700, 700}: a tie, device 0 -> {400, 700}. */
	pl = place_commit(&w, &q);
	assert_int_equal(pl.devices.gpu_mask, 1u << 0);
	/* Q5: 400 on {400, 700}. Before: 400 fragmented (25600). Device 0
	 * -> {0, 700}: 0, growth -25600; device 1 -> {400, 300}: S fits
	 * nowhere, all 700 (44800), +19200. Device 0. */
	struct pod_spec q5 = model_pod(sharing_pod(400), 0, 1000);
	pl = place_commit(&w, &q5);
	assert_int_equal(pl.devices.gpu_mask, 1u << 0);
	assert_int_equal(a0->gpu_used[0], 1000);
	assert_int_equal(a0->gpu_used[1], 300);
	assert_int_equal(a0->used[RES_PODS], 4);
	/* Q6: 800: only 700 free on device 1; n1 is cordoned. */
	struct pod_spec q6 = model_pod(sharing_pod(800), 0, 1000);
	pl = place_commit(&w, &q6);
	assert_int_equal(pl.slot, -1);
	char msg[512];
	engine_message(w.e, msg, sizeof(msg));
	assert_string_equal(msg, "0/2 nodes are available: 1 node(s) didn't have a GPU "
				 "device with enough free, 1 node(s) were unschedulable.");
	eworld_destroy(&w);
}

int main(void)
{
	urcu_qsbr_register_thread();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sharing_best_fit),
		cmocka_unit_test(test_whole_devices),
		cmocka_unit_test(test_models),
		cmocka_unit_test(test_cores_pack_and_spread),
		cmocka_unit_test(test_cores_numa_best_fit),
		cmocka_unit_test(test_cores_across_words),
		cmocka_unit_test(test_cores_not_opted_in),
		cmocka_unit_test(test_reserve_all_or_nothing),
		cmocka_unit_test(test_frag_amount),
		cmocka_unit_test(test_frag_growth),
		cmocka_unit_test(test_frag_mix),
		cmocka_unit_test(test_frag_model_reservation),
		cmocka_unit_test(test_frag_cpu_limited),
		cmocka_unit_test(test_engine_best_fit),
		cmocka_unit_test(test_engine_fragmentation),
		cmocka_unit_test(test_engine_cores),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	urcu_qsbr_unregister_thread();
	return rc;
}
