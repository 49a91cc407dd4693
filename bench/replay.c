/* The openb replay: see replay.h. Cost per run: building a cluster of the
 * trace's nodes, then one engine placement and commit per arriving pod. */
#include "bench/replay.h"
#include "bind/bind.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/progress.h"
#include "ingest/ingest.h"
#include "shm/shm.h"
#include "base/base.h"
#include "workers/workers.h"

/* The aggregate GPU milli of a node and a pod, beside the per-device
 * check: what LeastAllocated and MostAllocated score GPUs by. */
#define GPU_MILLI_RESOURCE "alibabacloud.com/gpu-milli"
#define MIB (INT64_C(1) << 20)

const char *const replay_policy_names[REPLAY_POLICIES] = {
	[REPLAY_LEAST_ALLOCATED] = "LeastAllocated",
	[REPLAY_MOST_ALLOCATED] = "MostAllocated",
	[REPLAY_BEST_FIT] = "BestFit",
	[REPLAY_FGD] = "FGD",
	[REPLAY_FGD_ONLINE] = "FGD-online",
	[REPLAY_FGD_CPU] = "FGD-cpu",
	[REPLAY_RANDOM] = "RandomFit",
};

const int replay_paper_policy[REPLAY_POLICIES] = {
	[REPLAY_LEAST_ALLOCATED] = -1,
	[REPLAY_MOST_ALLOCATED] = 3, /* 04-GpuPacking: the nearest in spirit */
	[REPLAY_BEST_FIT] = 4,       /* 05-BestFit */
	[REPLAY_FGD] = 5,            /* 06-FGD */
	[REPLAY_FGD_ONLINE] = 5,
	[REPLAY_FGD_CPU] = 5,
	[REPLAY_RANDOM] = 0,         /* 01-Random */
};

#define HEAD "apiVersion: kubescheduler.config.k8s.io/v1\n" \
	     "kind: KubeSchedulerConfiguration\n" \
	     "percentageOfNodesToScore: 100\n" \
	     "profiles:\n" \
	     "- plugins:\n" \
	     "    score:\n" \
	     "      disabled: [{name: \"*\"}]\n"
#define FIT(strategy) \
	"      enabled: [{name: NodeResourcesFit, weight: 1}]\n" \
	"  pluginConfig:\n" \
	"  - name: NodeResourcesFit\n" \
	"    args:\n" \
	"      scoringStrategy:\n" \
	"        type: " strategy "\n" \
	"        resources: [{name: cpu, weight: 1}, {name: memory, weight: 1},\n" \
	"                    {name: " GPU_MILLI_RESOURCE ", weight: 1}]\n"

#define FGD_PLUGINS \
	"      enabled: [{name: GpuFragmentation, weight: 40},\n" \
	"                {name: GpuBestFit, weight: 1}]\n"

/* Each policy as the profile a user would write. */
static const char *const profile[REPLAY_POLICIES] = {
	[REPLAY_LEAST_ALLOCATED] = HEAD FIT("LeastAllocated"),
	[REPLAY_MOST_ALLOCATED] = HEAD FIT("MostAllocated"),
	[REPLAY_BEST_FIT] = HEAD "      enabled: [{name: GpuBestFit, weight: 1}]\n",
	/* Fragmentation first, best fit second: at these weights a point of
	 * GpuBestFit weighs about as much as one milli of fragmentation
	 * growth (per pod of the mix), so best fit decides between nodes of
	 * nearly equal growth. Alone, FGD draws at random among the many
	 * equal empty nodes and spreads shares over them (docs/guides/gpu-trace.md). */
	[REPLAY_FGD] = HEAD FGD_PLUGINS,
	[REPLAY_FGD_ONLINE] = HEAD FGD_PLUGINS,
	[REPLAY_FGD_CPU] = HEAD FGD_PLUGINS,
	/* No score: every feasible node ties, and ties are drawn uniformly. */
	[REPLAY_RANDOM] = HEAD,
};

struct replay_opts replay_opts_ours(void)
{
	return (struct replay_opts){.mix_shapes = 256, .model_reservation = 100};
}

static int64_t pod_gpu_milli(const struct openb_pod *p)
{
	return (int64_t)p->num_gpu * p->gpu_milli;
}

long replay_arrivals(const struct openb_trace *t, const struct replay_opts *opts,
		     uint64_t seed, uint32_t **order)
{
	bool paper_top_up = opts != NULL && opts->paper_top_up;
	int64_t limit = t->gpu_milli_total * REPLAY_TOP_UP_PERCENT / 100;
	size_t cap = t->n_pods * 2 + 16;
	uint32_t *o = malloc(cap * sizeof(*o));
	if (o == NULL)
		return -ENOMEM;
	uint64_t rng = seed ^ UINT64_C(0x6f70656e62); /* "openb" */
	for (size_t i = 0; i < t->n_pods; i++)
		o[i] = (uint32_t)i;
	for (size_t i = t->n_pods; i > 1; i--) { /* Fisher-Yates */
		size_t j = rng_below(&rng, i);
		uint32_t x = o[i - 1];
		o[i - 1] = o[j];
		o[j] = x;
	}
	/* Trim: the shuffled list up to the first pod that would pass the
	 * limit; then top up by sampling with replacement, likewise. */
	int64_t arrived = 0;
	size_t n = 0;
	for (; n < t->n_pods; n++) {
		int64_t g = pod_gpu_milli(&t->pods[o[n]]);
		if (arrived + g > limit)
			break;
		arrived += g;
	}
	bool full = n < t->n_pods;
	while (!full) {
		uint32_t i = (uint32_t)rng_below(&rng, t->n_pods);
		int64_t g = pod_gpu_milli(&t->pods[i]);
		/* simulator.go tuneUpPods: podTotalMilliGpuReq + podRes.MilliGpu,
		 * one device's milli, against the limit. */
		int64_t check = paper_top_up ? (t->pods[i].num_gpu ? t->pods[i].gpu_milli : 0)
					     : g;
		if (arrived + check > limit)
			break;
		if (n == cap) {
			cap *= 2;
			uint32_t *q = realloc(o, cap * sizeof(*o));
			if (q == NULL) {
				free(o);
				return -ENOMEM;
			}
			o = q;
		}
		o[n++] = i;
		arrived += g;
		/* A trace of CPU pods only never reaches the limit. */
		if (n > t->n_pods * 100 + 1000000)
			break;
	}
	*order = o;
	return (long)n;
}

struct world {
	struct intern *strings;
	struct res_names res;
	struct sched_config cfg;
	struct plugin_ctx ctx;
	struct cluster *cluster;
	struct pod_spec *specs; /* [t->n_pods] */
	int gpu_res;
};

static void world_free(struct world *w)
{
	if (w->cluster != NULL)
		cluster_destroy(w->cluster);
	if (w->strings != NULL)
		intern_destroy(w->strings);
	free(w->specs);
}

/* "A|B|A" into sorted unique interned ids. */
static int models_of(struct intern *strings, const char *spec,
		     uint32_t out[POD_MAX_GPU_MODELS], uint8_t *n, char *err,
		     size_t err_len)
{
	*n = 0;
	for (const char *p = spec; *p != '\0';) {
		size_t len = strcspn(p, "|");
		if (len > 0) {
			uint32_t id;
			int rc = intern_add(strings, p, len, &id);
			if (rc < 0) {
				snprintf(err, err_len, "gpu_spec: out of memory");
				return rc;
			}
			bool have = false;
			for (unsigned i = 0; i < *n; i++)
				have |= out[i] == id;
			if (!have) {
				if (*n == POD_MAX_GPU_MODELS) {
					snprintf(err, err_len, "gpu_spec \"%s\": more than %d "
						 "models", spec, POD_MAX_GPU_MODELS);
					return -EINVAL;
				}
				unsigned j = (*n)++;
				for (; j > 0 && out[j - 1] > id; j--)
					out[j] = out[j - 1];
				out[j] = id;
			}
		}
		p += len;
		if (*p == '|')
			p++;
	}
	return 0;
}

static int world_build(struct world *w, const struct openb_trace *t,
		       enum replay_policy policy, const struct replay_opts *o,
		       char *err, size_t err_len)
{
	memset(w, 0, sizeof(*w));
	w->strings = intern_create();
	w->specs = calloc(t->n_pods, sizeof(*w->specs));
	struct node_event *ev = calloc(t->n_nodes, sizeof(*ev));
	int rc = 0;
	if (w->strings == NULL || w->specs == NULL || ev == NULL) {
		snprintf(err, err_len, "out of memory");
		rc = -ENOMEM;
		goto out;
	}
	res_names_init(&w->res);
	rc = res_register(&w->res, GPU_MILLI_RESOURCE, strlen(GPU_MILLI_RESOURCE));
	if (rc < 0) {
		snprintf(err, err_len, "%s: cannot register", GPU_MILLI_RESOURCE);
		goto out;
	}
	w->gpu_res = rc;
	/* FGD's profiles carry GpuFragmentation's args. */
	char text[2048];
	bool fgd = policy == REPLAY_FGD || policy == REPLAY_FGD_ONLINE ||
		   policy == REPLAY_FGD_CPU;
	int len = fgd ? snprintf(text, sizeof(text),
				 "%s  pluginConfig:\n  - name: GpuFragmentation\n"
				 "    args: {maxShapes: %u, modelReservation: %d, "
				 "cpuLimited: %s}\n", profile[policy], o->mix_shapes,
				 o->model_reservation,
				 policy == REPLAY_FGD_CPU ? "true" : "false")
		      : snprintf(text, sizeof(text), "%s", profile[policy]);
	if (len < 0 || (size_t)len >= sizeof(text)) {
		rc = -EINVAL;
		snprintf(err, err_len, "%s: profile too long", replay_policy_names[policy]);
		goto out;
	}
	rc = sched_config_load_buffer(replay_policy_names[policy], text, (size_t)len,
				      &w->cfg, &w->res, w->strings, err, err_len);
	if (rc < 0)
		goto out;
	if ((rc = plugin_ctx_init(&w->ctx, w->strings, &w->res)) < 0) {
		snprintf(err, err_len, "plugin strings: %s", strerror(-rc));
		goto out;
	}
	w->cluster = cluster_create(w->strings, (uint32_t)t->n_nodes);
	if (w->cluster == NULL) {
		rc = -ENOMEM;
		snprintf(err, err_len, "cluster: out of memory");
		goto out;
	}
	for (size_t i = 0; i < t->n_nodes; i++) {
		const struct openb_node *n = &t->nodes[i];
		struct node_event *e = &ev[i];
		e->kind = NODE_EVENT_ADD;
		if ((rc = intern_add_str(w->strings, n->name, &e->name)) < 0 ||
		    (n->model[0] != '\0' &&
		     (rc = intern_add_str(w->strings, n->model,
					  &e->spec.devices.gpu_model)) < 0)) {
			snprintf(err, err_len, "node names: out of memory");
			goto out;
		}
		e->spec.name = e->name;
		e->spec.ready = NODE_READY_TRUE;
		e->spec.allocatable.v[RES_CPU] = n->cpu_milli;
		e->spec.allocatable.v[RES_MEMORY] = n->memory_mib * MIB;
		e->spec.allocatable.v[RES_PODS] = 1001; /* the paper's simulator's */
		e->spec.allocatable.v[w->gpu_res] = (int64_t)n->gpus * GPU_MILLI_PER_DEVICE;
		e->spec.devices.n_gpus = n->gpus;
	}
	rc = cluster_apply(w->cluster, ev, t->n_nodes, err, err_len);
	if (rc < 0)
		goto out;
	for (size_t i = 0; i < t->n_pods; i++) {
		const struct openb_pod *p = &t->pods[i];
		struct pod_spec *s = &w->specs[i];
		s->request.v[RES_CPU] = p->cpu_milli;
		s->request.v[RES_MEMORY] = p->memory_mib * MIB;
		s->request.v[w->gpu_res] = pod_gpu_milli(p);
		/* The 100m / 200Mi stand-ins of a container without requests. */
		s->nonzero_cpu_milli = p->cpu_milli ? p->cpu_milli : 100;
		s->nonzero_mem_bytes = p->memory_mib ? p->memory_mib * MIB : 200 * MIB;
		s->num_gpu = p->num_gpu;
		s->gpu_milli = p->gpu_milli;
		if (p->num_gpu > 0 &&
		    (rc = models_of(w->strings, p->gpu_spec, s->gpu_models,
				    &s->n_gpu_models, err, err_len)) < 0)
			goto out;
	}
out:
	free(ev);
	if (rc < 0)
		world_free(w);
	return rc;
}

/* The paper's simulator's node among the candidates the reference path
 * scored (replay_opts.paper_choice): every candidate's score as the
 * paper's plugin computes it, then the highest, ties to the lowest node
 * name. */
struct paper_pick {
	enum replay_policy policy;
	uint32_t n;
	uint32_t *slot;  /* [t->n_nodes] */
	int64_t *score;  /* [t->n_nodes] whole points, before normalising */
};

static void paper_scored(void *arg, uint32_t slot, const int64_t raw[SCORE_PLUGINS],
			 int64_t total)
{
	(void)total;
	struct paper_pick *pp = arg;
	/* int64(score): best_fit_score.go and fgd_score.go truncate to whole
	 * points; ours are the same functions in thousandths. */
	int plugin = pp->policy == REPLAY_BEST_FIT ? SCORE_GPU_BEST_FIT : SCORE_GPU_FRAG;
	pp->slot[pp->n] = slot;
	pp->score[pp->n++] = raw[plugin] / SCORE_FINE;
}

/* BestFit's scores min-max normalised to 0..100 first (plugin_utils.go
 * NormalizeScore, integer division; FGD has no normalising step); then
 * the highest, ties to the lowest node name: the paper's fork of
 * generic_scheduler.go selectHost. The node list is sorted by name and
 * added in order, so the lowest name is the lowest slot. Returns the slot,
 * or -1 with no candidate. */
static int64_t paper_choose(const struct paper_pick *pp)
{
	int64_t lo = INT64_MAX, hi = INT64_MIN;
	for (uint32_t i = 0; i < pp->n; i++) {
		lo = pp->score[i] < lo ? pp->score[i] : lo;
		hi = pp->score[i] > hi ? pp->score[i] : hi;
	}
	int64_t best = INT64_MIN, slot = -1;
	for (uint32_t i = 0; i < pp->n; i++) {
		int64_t s = pp->score[i];
		if (pp->policy == REPLAY_BEST_FIT)
			s = hi == lo ? 0 : (s - lo) * 100 / (hi - lo);
		if (s > best || (s == best && pp->slot[i] < slot)) {
			best = s;
			slot = pp->slot[i];
		}
	}
	return slot;
}

/* Python's round() on the analysis script's floats: half to even. */
static long round_half_even(double x)
{
	return lrint(x); /* the default rounding mode rounds half to even */
}

int replay_run(const struct openb_trace *t, enum replay_policy policy,
	       const struct replay_opts *o, uint64_t seed, struct replay_run *out,
	       char *err, size_t err_len)
{
	memset(out, 0, sizeof(*out));
	struct replay_opts ours = replay_opts_ours();
	if (o == NULL)
		o = &ours;
	struct world w;
	int rc = world_build(&w, t, policy, o, err, err_len);
	if (rc < 0)
		return rc;
	uint32_t *order = NULL;
	long n = replay_arrivals(t, o, seed, &order);
	bool paper = o != NULL && o->paper_choice &&
		     (policy == REPLAY_BEST_FIT || policy == REPLAY_FGD ||
		      policy == REPLAY_FGD_ONLINE || policy == REPLAY_FGD_CPU);
	struct paper_pick pp = {.policy = policy};
	struct engine_explain explain = {.arg = &pp, .scored = paper_scored};
	/* Per load k: the sum and count of allocation % of the pods whose
	 * arrived % rounds to k. */
	double sum[PAPER_LOADS] = {0}, near_sum[PAPER_LOADS] = {0};
	uint32_t cnt[PAPER_LOADS] = {0}, near_cnt[PAPER_LOADS] = {0};
	struct engine *e = NULL;
	if (n < 0) {
		rc = (int)n;
		snprintf(err, err_len, "arrivals: out of memory");
		goto out;
	}
	if (paper) {
		pp.slot = calloc(t->n_nodes ? t->n_nodes : 1, sizeof(*pp.slot));
		pp.score = calloc(t->n_nodes ? t->n_nodes : 1, sizeof(*pp.score));
		if (pp.slot == NULL || pp.score == NULL) {
			rc = -ENOMEM;
			snprintf(err, err_len, "paper choice: out of memory");
			goto out;
		}
	}
	e = engine_create(w.cluster, &w.ctx, &w.cfg, seed, 0);
	if (e == NULL) {
		rc = -ENOMEM;
		snprintf(err, err_len, "engine: out of memory");
		goto out;
	}
	/* FGD scores against the mix of the whole pod list, as the paper does
	 * (its "target workload"); FGD-online learns it from the pods as they
	 * arrive (workers/frag.c). */
	if (policy == REPLAY_FGD || policy == REPLAY_FGD_CPU)
		engine_learn_shapes(e, w.specs, t->n_pods);
	double total = (double)t->gpu_milli_total;
	int64_t arrived = 0, allocated = 0;
	rcu_register();
	uint64_t spent = 0;
	for (long i = 0; i < n; i++) {
		const struct openb_pod *p = &t->pods[order[i]];
		const struct pod_spec *spec = &w.specs[order[i]];
		struct placement pl;
		uint64_t a = now_ns();
		if (paper) {
			/* The reference path scores every feasible node (100 %
			 * of nodes): the paper's rule picks among them. */
			pp.n = 0;
			rc = engine_place_reference(e, spec, (uint64_t)i, &explain, &pl);
			if (rc == 0 && pl.slot >= 0)
				rc = engine_assign_devices(e, spec,
							   (uint32_t)paper_choose(&pp), &pl);
		} else {
			rc = engine_place(e, spec, (uint64_t)i, &pl);
		}
		if (rc == 0 && pl.slot >= 0)
			rc = commit_pod(e, spec, (uint32_t)pl.slot, &pl.devices);
		spent += now_ns() - a;
		if (rc < 0) {
			/* One thread: nothing else can take the node. */
			snprintf(err, err_len, "pod %ld: %s: impossible with one thread",
				 i, strerror(-rc));
			break;
		}
		arrived += pod_gpu_milli(p);
		if (pl.slot >= 0) {
			allocated += pod_gpu_milli(p);
			out->placed++;
		}
		out->pods++;
		double alloc_pct = round(allocated / total * 100.0 * 100.0) / 100.0;
		long k = round_half_even(arrived / total * 100.0);
		for (long j = k - 1; j <= k + 1; j++) {
			if (j < 0 || j >= PAPER_LOADS)
				continue;
			if (j == k) {
				sum[j] += alloc_pct;
				cnt[j]++;
			} else {
				near_sum[j] += alloc_pct;
				near_cnt[j]++;
			}
		}
		if ((i & 63) == 63)
			rcu_quiescent();
	}
	rcu_unregister();
	out->seconds = (double)spent * 1e-9;
	out->gpu_milli_allocated = (uint64_t)allocated;
	for (int k = 0; k < PAPER_LOADS; k++) {
		if (cnt[k] > 0)
			out->unalloc[k] = 100.0 - sum[k] / cnt[k];
		else if (near_cnt[k] > 0)
			out->unalloc[k] = 100.0 - near_sum[k] / near_cnt[k];
		else
			out->unalloc[k] = (double)NAN;
	}
out:
	engine_destroy(e);
	free(pp.slot);
	free(pp.score);
	free(order);
	world_free(&w);
	return rc;
}
