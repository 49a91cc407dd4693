/* stress.devices_stress: worker threads, each with its own engine, place
 * and release device pods (shares of a GPU, whole GPUs, exclusive cores,
 * models) on one small cluster through the resolver, while a checker
 * thread reads every node's device counters the whole time.
 *
 * Invariants, each a count that must read zero:
 * - overcommits: a GPU's milli the checker saw above GPU_MILLI_PER_DEVICE
 *   (or wrapped below 0), milli on a device past the node's n_gpus, a core
 *   bit outside the node's pool, cpu above allocatable, at any instant;
 * - bad assignments: a committed placement whose devices break the rules
 *   (wrong count, wrong model, cores on a node that did not opt in...);
 * - lost holds: a worker's own devices missing from the counters while it
 *   holds them (another placement's release cleared a shared core bit, or
 *   a device was given back twice);
 * - at the end, double holds (a core in two live assignments) and
 *   accounting errors (a device's milli, a node's cores bitmap, cpu or pod
 *   count differing from the union of the live assignments);
 * - answer errors: a resolver call that did not count exactly one answer.
 * The cluster is tight enough that commits conflict; the test checks that
 * they did. No snapshot is freed while the threads run, so ThreadSanitizer
 * builds run it too. */
#define _LGPL_SOURCE 1

#include <inttypes.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <urcu/urcu-qsbr.h>

#include <cmocka.h>

#include "bind/bind.h"
#include "base/base.h"
#include "ingest/ingest.h"
#include "shm/shm.h"
#include "rounds.h"

#define NODES 16
#define WORKERS 6

static struct cluster *cluster;
static struct intern *strings;
static struct res_names res;
static struct plugin_ctx pctx;
static struct sched_config cfg_best_fit, cfg_frag;
static uint32_t model_a, model_b;
static int done; /* workers finished: __atomic, relaxed (only ends a loop) */

struct held {
	uint32_t slot;
	struct pod_spec pod;
	struct device_assignment dev;
};

struct worker {
	unsigned id;
	uint64_t pods;
	struct held *held;
	size_t n_held;
	struct resolver_stats st;
	uint64_t releases;
	uint64_t shared, whole, cored; /* placements that took each kind */
	uint64_t bad_assignments, lost_holds, answer_errors, release_errors;
	bool setup_failed; /* no engine or no memory: cmocka asserts only on
			    * the main thread */
};

static void gen_pod(uint64_t *rng, struct pod_spec *p)
{
	memset(p, 0, sizeof(*p));
	unsigned kind = (unsigned)(rng_next(rng) % 10);
	unsigned cores = 0;
	if (kind < 5) { /* a share: 100..900 */
		p->num_gpu = 1;
		p->gpu_milli = (uint16_t)(100 * (1 + rng_next(rng) % 9));
	} else if (kind < 8) { /* whole: 1, 2 or 4 */
		static const uint8_t n[] = {1, 2, 4};
		p->num_gpu = n[rng_next(rng) % 3];
		p->gpu_milli = GPU_MILLI_PER_DEVICE;
	} else {
		cores = 1 + (unsigned)(rng_next(rng) % 8);
	}
	if (p->num_gpu > 0 && rng_next(rng) % 5 == 0)
		cores = 1 + (unsigned)(rng_next(rng) % 8);
	if (p->num_gpu > 0) {
		unsigned m = (unsigned)(rng_next(rng) % 20);
		if (m < 6) {
			p->n_gpu_models = 1;
			p->gpu_models[0] = model_a;
		} else if (m < 9) {
			p->n_gpu_models = 1;
			p->gpu_models[0] = model_b;
		} else if (m < 11) { /* both, sorted */
			p->n_gpu_models = 2;
			p->gpu_models[0] = model_a < model_b ? model_a : model_b;
			p->gpu_models[1] = model_a < model_b ? model_b : model_a;
		}
	}
	int64_t cpu = cores ? 1000 * (int64_t)cores
			    : 500 * (1 + (int64_t)(rng_next(rng) % 8));
	p->exclusive_cores = (uint16_t)cores;
	p->request.v[RES_CPU] = p->nonzero_cpu_milli = cpu;
	p->request.v[RES_MEMORY] = p->nonzero_mem_bytes = 1LL << 30;
}

static bool pool_has(const struct node_devices *d, const uint64_t set[CORE_WORDS])
{
	for (unsigned w = 0; w < CORE_WORDS; w++)
		for (unsigned b = 0; b < 64; b++)
			if ((set[w] >> b & 1) && w * 64 + b >= d->n_cores)
				return false;
	return true;
}

static unsigned popcount_set(const uint64_t set[CORE_WORDS])
{
	unsigned n = 0;
	for (unsigned w = 0; w < CORE_WORDS; w++)
		n += (unsigned)__builtin_popcountll(set[w]);
	return n;
}

/* Whether a committed assignment keeps shm/devices.h's rules on its node. */
static bool assignment_ok(const struct node_devices *d, const struct pod_spec *pod,
			  const struct device_assignment *a)
{
	if ((a->gpu_mask >> d->n_gpus) != 0)
		return false;
	if (pod->num_gpu == 0) {
		if (a->gpu_mask != 0)
			return false;
	} else {
		if ((unsigned)__builtin_popcount(a->gpu_mask) != pod->num_gpu ||
		    a->gpu_milli != pod->gpu_milli || !devices_model_ok(d, pod))
			return false;
	}
	unsigned want = devices_takes_cores(d, pod) ? pod->exclusive_cores : 0;
	return a->n_cores == want && popcount_set(a->cpuset) == want &&
	       pool_has(d, a->cpuset);
}

/* Whether the counters still show everything this assignment holds: only
 * its own release may take it away. */
static bool still_held(const struct held *h)
{
	const struct node_alloc *a = ledger_node(cluster_ledger(cluster), h->slot);
	for (unsigned g = 0; g < NODE_MAX_GPUS; g++)
		/* Relaxed, as every reader of the counters (node_alloc). */
		if ((h->dev.gpu_mask >> g & 1) &&
		    __atomic_load_n(&a->gpu_used[g], __ATOMIC_RELAXED) < h->dev.gpu_milli)
			return false;
	for (unsigned w = 0; w < CORE_WORDS; w++)
		if ((__atomic_load_n(&a->cores_used[w], __ATOMIC_RELAXED) & h->dev.cpuset[w]) !=
		    h->dev.cpuset[w])
			return false;
	return true;
}

static uint64_t answers(const struct resolver_stats *st)
{
	return st->placed + st->unschedulable + st->gave_up;
}

static void *work(void *arg)
{
	struct worker *w = arg;
	urcu_qsbr_register_thread();
	struct engine *e = engine_create(cluster, &pctx,
					 w->id % 2 ? &cfg_best_fit : &cfg_frag,
					 w->id + 1, 0);
	uint64_t rng = w->id * 7919 + 1;
	w->held = calloc(w->pods ? w->pods : 1, sizeof(*w->held));
	if (e == NULL || w->held == NULL) {
		w->setup_failed = true;
		engine_destroy(e);
		urcu_qsbr_unregister_thread();
		return NULL;
	}
	struct pod_spec pod;
	for (uint64_t i = 0; i < w->pods; i++) {
		gen_pod(&rng, &pod);
		struct resolve_result r;
		uint64_t before = answers(&w->st);
		if (resolver_place(e, &pod, i * WORKERS + w->id, &r, &w->st) < 0) {
			w->setup_failed = true; /* -ENOMEM */
			break;
		}
		w->answer_errors += answers(&w->st) != before + 1;
		if (r.placement.slot >= 0) {
			w->answer_errors += r.gave_up;
			const struct snapshot *s = cluster_snapshot(cluster);
			const struct node_devices *d = &s->nodes[r.placement.slot].devices;
			struct held *h = &w->held[w->n_held++];
			*h = (struct held){.slot = (uint32_t)r.placement.slot, .pod = pod,
					   .dev = r.placement.devices};
			w->bad_assignments += !assignment_ok(d, &pod, &h->dev);
			w->lost_holds += !still_held(h);
			w->shared += pod.num_gpu == 1 && pod.gpu_milli < GPU_MILLI_PER_DEVICE;
			w->whole += pod.gpu_milli == GPU_MILLI_PER_DEVICE;
			w->cored += h->dev.n_cores > 0;
		}
		/* Give back about as often as we take, so the cluster stays full. */
		if (w->n_held > 0 && rng_next(&rng) % 2 == 0) {
			size_t k = rng_next(&rng) % w->n_held;
			struct held *h = &w->held[k];
			w->lost_holds += !still_held(h);
			w->release_errors += ledger_account(cluster_ledger(cluster), h->slot, &h->pod,
							     &h->dev, -1) != 0;
			*h = w->held[--w->n_held];
			w->releases++;
		}
		urcu_qsbr_quiescent_state();
	}
	engine_destroy(e);
	urcu_qsbr_unregister_thread();
	return NULL;
}

struct checker {
	uint64_t sweeps, overcommits;
};

static void *check(void *arg)
{
	struct checker *ck = arg;
	urcu_qsbr_register_thread();
	const struct snapshot *s = cluster_snapshot(cluster);
	/* Relaxed: `done` only ends the loop. */
	while (!__atomic_load_n(&done, __ATOMIC_RELAXED)) {
		for (uint32_t i = 0; i < s->n_slots; i++) {
			const struct node_alloc *a = ledger_node(cluster_ledger(cluster), i);
			const struct node_devices *d = &s->nodes[i].devices;
			/* Relaxed, as every reader of the counters (node_alloc). */
			for (unsigned g = 0; g < NODE_MAX_GPUS; g++) {
				uint32_t used = __atomic_load_n(&a->gpu_used[g],
								__ATOMIC_RELAXED);
				ck->overcommits += g < d->n_gpus ? used > GPU_MILLI_PER_DEVICE
								 : used != 0;
			}
			uint64_t cores[CORE_WORDS];
			for (unsigned w = 0; w < CORE_WORDS; w++)
				cores[w] = __atomic_load_n(&a->cores_used[w], __ATOMIC_RELAXED);
			ck->overcommits += !pool_has(d, cores);
			int64_t cpu = __atomic_load_n(&a->used[RES_CPU], __ATOMIC_RELAXED);
			ck->overcommits += cpu > s->allocatable[RES_CPU][i] || cpu < 0;
		}
		ck->sweeps++;
		urcu_qsbr_quiescent_state();
	}
	urcu_qsbr_unregister_thread();
	return NULL;
}

static void setup_cluster(void)
{
	strings = intern_create();
	res_names_init(&res);
	assert_int_equal(plugin_ctx_init(&pctx, strings, &res), 0);
	assert_int_equal(intern_add_str(strings, "A100", &model_a), 0);
	assert_int_equal(intern_add_str(strings, "V100", &model_b), 0);
	/* Half the workers score with GpuFragmentation, half with GpuBestFit,
	 * beside the default scores. */
	sched_config_default(&cfg_frag);
	cfg_frag.profiles[0].score.weight_gpu_frag = 1;
	sched_config_default(&cfg_best_fit);
	cfg_best_fit.profiles[0].score.weight_gpu_best_fit = 1;
	cluster = cluster_create(strings, NODES);
	static struct node_event ev[NODES];
	char name[16], err[256];
	for (int i = 0; i < NODES; i++) {
		memset(&ev[i], 0, sizeof(ev[i]));
		snprintf(name, sizeof(name), "n%d", i);
		assert_int_equal(intern_add_str(strings, name, &ev[i].name), 0);
		ev[i].kind = NODE_EVENT_ADD;
		ev[i].spec.name = ev[i].name;
		ev[i].spec.allocatable.v[RES_CPU] = 64000;
		ev[i].spec.allocatable.v[RES_MEMORY] = 256LL << 30;
		ev[i].spec.allocatable.v[RES_PODS] = 110;
		/* Even nodes 8 A100, odd 4 V100; half of each opted in to
		 * exclusive cores, 32 on 2 NUMA nodes. */
		struct node_devices *d = &ev[i].spec.devices;
		d->gpu_model = i % 2 ? model_b : model_a;
		d->n_gpus = i % 2 ? 4 : 8;
		if (i % 4 < 2) {
			d->n_cores = 32;
			d->n_numa = 2;
		}
	}
	assert_int_equal(cluster_apply(cluster, ev, NODES, err, sizeof(err)), 0);
}

/* One round on a fresh cluster: every invariant checked; returns the
 * conflicts it saw. */
static uint64_t run_round(uint64_t pods)
{
	setup_cluster();
	__atomic_store_n(&done, 0, __ATOMIC_RELAXED);
	struct worker w[WORKERS];
	struct checker ck = {0};
	pthread_t tw[WORKERS], tc;
	urcu_qsbr_register_thread();
	assert_int_equal(pthread_create(&tc, NULL, check, &ck), 0);
	for (unsigned i = 0; i < WORKERS; i++) {
		w[i] = (struct worker){.id = i, .pods = pods};
		assert_int_equal(pthread_create(&tw[i], NULL, work, &w[i]), 0);
	}
	urcu_qsbr_thread_offline();
	for (unsigned i = 0; i < WORKERS; i++)
		pthread_join(tw[i], NULL);
	__atomic_store_n(&done, 1, __ATOMIC_RELAXED);
	pthread_join(tc, NULL);
	urcu_qsbr_thread_online();

	/* The union of the live assignments, node by node, against the
	 * counters. */
	static uint32_t milli[NODES][NODE_MAX_GPUS];
	static uint64_t cores[NODES][CORE_WORDS];
	int64_t cpu[NODES] = {0}, count[NODES] = {0};
	uint64_t double_holds = 0, accounting_errors = 0;
	uint64_t bad = 0, lost = 0, answer_errors = 0, release_errors = 0;
	uint64_t shared = 0, whole = 0, cored = 0, releases = 0;
	struct resolver_stats sum = {0};
	memset(milli, 0, sizeof(milli));
	memset(cores, 0, sizeof(cores));
	for (unsigned i = 0; i < WORKERS; i++) {
		assert_false(w[i].setup_failed);
		release_errors += w[i].release_errors;
		for (size_t k = 0; k < w[i].n_held; k++) {
			const struct held *h = &w[i].held[k];
			for (unsigned g = 0; g < NODE_MAX_GPUS; g++)
				if (h->dev.gpu_mask >> g & 1)
					milli[h->slot][g] += h->dev.gpu_milli;
			for (unsigned x = 0; x < CORE_WORDS; x++) {
				double_holds += (cores[h->slot][x] & h->dev.cpuset[x]) != 0;
				cores[h->slot][x] |= h->dev.cpuset[x];
			}
			cpu[h->slot] += h->pod.request.v[RES_CPU];
			count[h->slot]++;
		}
		sum.placed += w[i].st.placed;
		sum.unschedulable += w[i].st.unschedulable;
		sum.conflicts += w[i].st.conflicts;
		sum.gave_up += w[i].st.gave_up;
		releases += w[i].releases;
		bad += w[i].bad_assignments;
		lost += w[i].lost_holds;
		answer_errors += w[i].answer_errors;
		shared += w[i].shared;
		whole += w[i].whole;
		cored += w[i].cored;
		free(w[i].held);
	}
	for (int i = 0; i < NODES; i++) {
		const struct node_alloc *a = ledger_node(cluster_ledger(cluster), (uint32_t)i);
		for (unsigned g = 0; g < NODE_MAX_GPUS; g++)
			accounting_errors += a->gpu_used[g] != milli[i][g];
		for (unsigned x = 0; x < CORE_WORDS; x++)
			accounting_errors += a->cores_used[x] != cores[i][x];
		accounting_errors += a->used[RES_CPU] != cpu[i];
		accounting_errors += a->used[RES_PODS] != count[i];
	}
	print_message("%d workers x %" PRIu64 " pods: %" PRIu64 " placed (%" PRIu64
		      " shares, %" PRIu64 " whole, %" PRIu64 " with cores), %" PRIu64
		      " unschedulable, %" PRIu64 " conflicts, %" PRIu64 " gave up, %"
		      PRIu64 " released; checker: %" PRIu64 " sweeps, %" PRIu64
		      " overcommits; %" PRIu64 " bad assignments, %" PRIu64
		      " lost holds, %" PRIu64 " double holds, %" PRIu64
		      " accounting errors, %" PRIu64 " answer errors\n",
		      WORKERS, pods, sum.placed, shared, whole, cored, sum.unschedulable,
		      sum.conflicts, sum.gave_up, releases, ck.sweeps, ck.overcommits,
		      bad, lost, double_holds, accounting_errors, answer_errors);
	assert_int_equal(ck.overcommits, 0);
	assert_int_equal(bad, 0);
	assert_int_equal(lost, 0);
	assert_int_equal(double_holds, 0);
	assert_int_equal(accounting_errors, 0);
	assert_int_equal(answer_errors, 0);
	assert_int_equal(release_errors, 0);
	assert_int_equal(sum.placed + sum.unschedulable + sum.gave_up,
			 (uint64_t)WORKERS * pods);
	assert_true(ck.sweeps > 0);
	/* The run exercised what it claims to: a full cluster and every kind
	 * of device (conflicts: see the caller). */
	if (pods >= 1000) {
		assert_true(sum.unschedulable > 0);
		assert_true(shared > 0 && whole > 0 && cored > 0);
	}
	cluster_destroy(cluster);
	intern_destroy(strings);
	urcu_qsbr_unregister_thread();
	return sum.conflicts;
}

static void test_devices_never_overcommitted(void **state)
{
	(void)state;
	uint64_t pods = 5000;
	const char *env = getenv("SHMSCHED_DEVICES_PODS");
	if (env != NULL && *env != '\0')
		pods = strtoull(env, NULL, 10);
	/* Conflicts happened, or the run proved nothing about them
	 * (rounds.h). */
	unsigned rounds;
	uint64_t conflicts = rounds_until_conflicts(run_round, pods, &rounds);
	print_message("conflicts seen after %u round(s)\n", rounds);
	if (pods >= 1000)
		assert_true(conflicts > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_devices_never_overcommitted),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
