/* The in-process baselines: see quality.h.
 *
 * Both runs build what the daemon builds (daemon/daemon.c): an intern table,
 * the resource names, the scheduler configuration, the plugins' strings and
 * the cluster; then the workload's templates are decoded as the daemon
 * decodes a registered template (one Pod of Kubernetes JSON, ns_name
 * cleared), and pod k of the stream is the template's spec with k's extras
 * added by record_decode(), the very function a worker decodes a slot
 * with, so the baselines place byte-equal specs to the engine run's.
 *
 * Everything runs on the calling thread, a registered RCU reader for the
 * placements only: nothing else writes the cluster meanwhile, so every
 * commit of a placement must succeed, and a failed one is an error.
 *
 * Cost: reference_run() is O(nodes) filters and scores per pod (that is
 * the baseline). quality_run() runs the reference twice per pod per side
 * (the scoring table and, for the reference side, the side itself) plus
 * the side's placement: O(nodes) per pod; it is meant for small clusters.
 */
#include "bench/quality.h"
#include "bind/bind.h"
#include "base/base.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/progress.h"
#include "ingest/ingest.h"
#include "shm/shm.h"
#include "workers/workers.h"

/* Clock and progress checks every this many pods (a power of two): the
 * reference takes some microseconds per pod even on small clusters, so a
 * check per 64 pods costs nothing and still stops within milliseconds. */
#define CHECK_EVERY 64u

/* Room for nodes added later: none are, but the daemon asks the same. */
#define EXTRA_SLOTS 1024u

/* What the daemon builds before its workers start, and the templates. */
struct base {
	struct intern *strings;
	struct res_names res;
	struct sched_config cfg;
	struct plugin_ctx ctx;
	struct cluster *cluster;
	struct pod_spec *templates; /* [n_templates] */
	uint32_t n_templates;
	struct record_pod *pod;     /* the current pod (too big for a stack) */
};

static int decode_templates(struct base *b, const struct workload *w, char *err,
			    size_t err_len)
{
	if (w->n_templates == 0) {
		snprintf(err, err_len, "workload: no templates");
		return -EINVAL;
	}
	b->templates = calloc(w->n_templates, sizeof(*b->templates));
	if (b->templates == NULL) {
		snprintf(err, err_len, "workload: %" PRIu32 " templates: out of memory",
			 w->n_templates);
		return -ENOMEM;
	}
	struct k8s_ctx kc = {.strings = b->strings, .res = &b->res};
	for (uint32_t i = 0; i < w->n_templates; i++) {
		char name[64];
		snprintf(name, sizeof(name), "workload template %" PRIu32, i);
		size_t len = w->template_len != NULL ? w->template_len[i]
						     : strlen(w->template_json[i]);
		/* As the daemon's template registration decodes it. */
		int rc = k8s_load_one(name, w->template_json[i], len, &kc,
				      &b->templates[i], NULL, err, err_len);
		if (rc < 0)
			return rc;
	}
	b->n_templates = w->n_templates;
	return 0;
}

static void base_free(struct base *b)
{
	free(b->pod);
	free(b->templates);
	cluster_destroy(b->cluster);
	intern_destroy(b->strings);
	memset(b, 0, sizeof(*b));
}

/* The daemon's start (daemon/daemon.c) up to its engines, then the templates.
 * Call before the thread registers as a reader: loading the cluster waits
 * for grace periods. */
static int base_init(struct base *b, const struct baseline_config *cfg,
		     const char *cluster_path, uint32_t nodes, uint32_t running,
		     char *err, size_t err_len)
{
	memset(b, 0, sizeof(*b));
	b->strings = intern_create();
	b->pod = calloc(1, sizeof(*b->pod));
	if (b->strings == NULL || b->pod == NULL) {
		snprintf(err, err_len, "out of memory");
		base_free(b);
		return -ENOMEM;
	}
	res_names_init(&b->res);
	sched_config_default(&b->cfg);
	int rc = 0;
	if (cfg->config_path != NULL)
		rc = sched_config_load(cfg->config_path, &b->cfg, &b->res,
				       b->strings, err, err_len);
	if (rc == 0 && (rc = plugin_ctx_init(&b->ctx, b->strings, &b->res)) < 0)
		snprintf(err, err_len, "plugin strings: %s", strerror(-rc));
	if (rc == 0 && cluster_path != NULL) {
		struct cluster_load_stats st;
		rc = cluster_load_file(cluster_path, b->strings, &b->res, EXTRA_SLOTS,
				       &b->cluster, &st, err, err_len);
		if (rc == 0 && st.quota != NULL)
			fprintf(stderr, "warning: %s: its Kueue objects are not "
				"applied by this benchmark: pods are placed "
				"without quotas\n", cluster_path);
		if (rc == 0)
			quota_tree_free(st.quota);
	} else if (rc == 0) {
		struct synthetic_stats st;
		rc = synthetic_cluster(nodes, running, cfg->seed, EXTRA_SLOTS,
				       b->strings, &b->cluster, &st, err, err_len);
	}
	if (rc == 0)
		rc = decode_templates(b, cfg->w, err, err_len);
	if (rc < 0)
		base_free(b);
	return rc;
}

_Static_assert(WORKLOAD_MAX_EXTRA <= SHMSCHED_MAX_EXTRA,
	       "a workload pod's extras fit in a slot");

/* Pod k of the stream into b->pod->spec, through the slot decoder. */
static int make_pod(struct base *b, const struct workload *w, uint64_t k,
		    char *err, size_t err_len)
{
	struct workload_pod wp;
	workload_pod(w, k, &wp);
	struct shmsched_slot slot;
	memset(&slot, 0, sizeof(slot));
	/* A template index past UINT32_MAX - 1 wraps to 0, which the decoder
	 * rejects like any other template that does not exist. */
	slot.template_id = wp.template_idx + 1;
	if (wp.n_extra > WORKLOAD_MAX_EXTRA) {
		snprintf(err, err_len, "workload pod %" PRIu64 ": n_extra %u: at "
			 "most %d", k, (unsigned)wp.n_extra, WORKLOAD_MAX_EXTRA);
		return -EINVAL;
	}
	slot.n_extra = wp.n_extra;
	for (unsigned i = 0; i < wp.n_extra; i++) {
		const struct workload_extra *x = &wp.extra[i];
		if (x->resource != WORKLOAD_CPU && x->resource != WORKLOAD_MEMORY) {
			snprintf(err, err_len, "workload pod %" PRIu64 ": extra[%u]."
				 "resource %u: expected cpu (%d) or memory (%d)", k, i,
				 (unsigned)x->resource, WORKLOAD_CPU, WORKLOAD_MEMORY);
			return -EINVAL;
		}
		slot.extra[i].resource = x->resource == WORKLOAD_CPU ? RES_CPU
								     : RES_MEMORY;
		slot.extra[i].quantity = x->amount;
	}
	struct record_templates t = {b->templates, b->n_templates};
	char why[256];
	if (record_decode(&slot, &t, &b->res, b->pod, why, sizeof(why)) < 0) {
		snprintf(err, err_len, "workload pod %" PRIu64 ": %s", k, why);
		return -EINVAL;
	}
	return 0;
}

static int commit(struct engine *e, struct base *b, uint64_t k, int64_t slot,
		  const char *who, char *err, size_t err_len)
{
	int rc = commit_pod(e, b->pod->spec, (uint32_t)slot, NULL);
	if (rc < 0)
		snprintf(err, err_len, "%s: pod %" PRIu64 ": commit to node slot %"
			 PRId64 " failed (%s): impossible with one thread", who, k,
			 slot, strerror(-rc));
	return rc;
}

/* --- reference_run ------------------------------------------------------ */

int reference_run(const struct baseline_config *cfg, struct reference_result *out,
		  char *err, size_t err_len)
{
	memset(out, 0, sizeof(*out));
	if (cfg->w == NULL || (cfg->pods == 0 && !(cfg->max_seconds > 0))) {
		snprintf(err, err_len, "reference: %s", cfg->w == NULL
			 ? "no workload" : "pods 0 and max_seconds 0: no bound");
		return -EINVAL;
	}
	struct base b;
	int rc = base_init(&b, cfg, cfg->cluster_path, cfg->nodes, cfg->running,
			   err, err_len);
	if (rc < 0)
		return rc;
	struct sched_config sc = b.cfg;
	sched_config_set_percentage(&sc, 100);
	struct engine *e = engine_create(b.cluster, &b.ctx, &sc, cfg->seed, 0);
	if (e == NULL) {
		rc = -errno;
		snprintf(err, err_len, "reference: cannot create engine: %s",
			 strerror(errno));
		goto fail_engine;
	}

	struct progress bar;
	progress_begin(&bar, cfg->progress, "reference", cfg->pods);
	rcu_register();
	double start = now_s();
	uint64_t k = 0;
	for (; cfg->pods == 0 || k < cfg->pods; k++) {
		if (k % CHECK_EVERY == 0 && k > 0) {
			double t = now_s();
			if (cfg->max_seconds > 0 && t - start >= cfg->max_seconds)
				break;
			progress_update(&bar, k);
			/* Holds no snapshot here: lets a grace period pass
			 * (none is waited for today; cheap hygiene). */
			rcu_quiescent();
		}
		if ((rc = make_pod(&b, cfg->w, k, err, err_len)) < 0)
			break;
		struct placement pl;
		if ((rc = engine_place_reference(e, b.pod->spec, k, NULL, &pl)) < 0) {
			snprintf(err, err_len, "reference: pod %" PRIu64 ": %s", k,
				 strerror(-rc));
			break;
		}
		if (pl.slot < 0) {
			out->unschedulable++;
			continue;
		}
		if ((rc = commit(e, &b, k, pl.slot, "reference", err, err_len)) < 0)
			break;
		out->placed++;
	}
	out->wall_s = now_s() - start;
	rcu_unregister();
	progress_end(&bar);
	out->pods = out->placed + out->unschedulable;
	out->pods_per_sec = out->wall_s > 0 ? (double)out->pods / out->wall_s : 0;
	engine_destroy(e);
fail_engine:
	base_free(&b);
	return rc < 0 ? rc : 0;
}

/* --- quality_run -------------------------------------------------------- */

/* The reference's total of each node it scored for the current pod: a
 * slot's entry counts only when its stamp is the pod's (k + 1), so the
 * table is never cleared. */
struct score_table {
	int64_t *total;  /* [capacity] */
	uint64_t *stamp; /* [capacity] */
	uint32_t capacity;
	uint64_t current;
	int64_t best;
	uint32_t scored;
};

static void on_scored(void *arg, uint32_t slot, const int64_t scores[SCORE_PLUGINS],
		      int64_t total)
{
	struct score_table *t = arg;
	(void)scores;
	if (slot >= t->capacity)
		return;
	t->total[slot] = total;
	t->stamp[slot] = t->current;
	if (t->scored++ == 0 || total > t->best)
		t->best = total;
}

/* Sum of used over sum of allocatable of cpu and memory, present nodes. */
static void alloc_ratios(const struct cluster *c, double *cpu, double *mem)
{
	const struct snapshot *s = cluster_snapshot(c);
	double used_cpu = 0, used_mem = 0, alloc_cpu = 0, alloc_mem = 0;
	for (uint32_t i = 0; i < s->n_slots; i++) {
		if (!s->present[i])
			continue;
		struct res_vec used;
		int64_t nz_cpu, nz_mem;
		ledger_load_used(ledger_node(cluster_ledger(c), i), &used, &nz_cpu, &nz_mem);
		used_cpu += (double)used.v[RES_CPU];
		used_mem += (double)used.v[RES_MEMORY];
		alloc_cpu += (double)s->allocatable[RES_CPU][i];
		alloc_mem += (double)s->allocatable[RES_MEMORY][i];
	}
	*cpu = alloc_cpu > 0 ? used_cpu / alloc_cpu : 0;
	*mem = alloc_mem > 0 ? used_mem / alloc_mem : 0;
}

enum side_kind { SIDE_ENGINE_DEFAULT, SIDE_ENGINE_100, SIDE_REFERENCE };

static const char *const side_names[] = {
	[SIDE_ENGINE_DEFAULT] = "quality engine",
	[SIDE_ENGINE_100] = "quality engine@100",
	[SIDE_REFERENCE] = "quality reference",
};

/* The placement loop of one side, on b's cluster; the thread is a reader. */
static int side_loop(const struct baseline_config *cfg, struct base *b,
		     enum side_kind kind, struct engine *side, struct engine *ref,
		     struct score_table *t, double max_s, struct quality_side *out,
		     char *err, size_t err_len)
{
	const char *who = side_names[kind];
	struct engine_explain x = {.arg = t, .scored = on_scored};
	struct progress bar;
	progress_begin(&bar, cfg->progress, who, cfg->pods);
	double start = now_s();
	int rc = 0;
	uint64_t k = 0;
	for (; cfg->pods == 0 || k < cfg->pods; k++) {
		if (k % CHECK_EVERY == 0 && k > 0) {
			double now = now_s();
			if (max_s > 0 && now - start >= max_s)
				break;
			progress_update(&bar, k);
			rcu_quiescent();
		}
		if ((rc = make_pod(b, cfg->w, k, err, err_len)) < 0)
			break;
		const struct pod_spec *pod = b->pod->spec;
		/* The reference's scores over the state the side places on. */
		struct placement best, pl;
		t->current = k + 1;
		t->scored = 0;
		rc = engine_place_reference(ref, pod, k, &x, &best);
		if (rc == 0)
			rc = kind == SIDE_REFERENCE
				? engine_place_reference(side, pod, k, NULL, &pl)
				: engine_place(side, pod, k, &pl);
		if (rc < 0) {
			snprintf(err, err_len, "%s: pod %" PRIu64 ": %s", who, k,
				 strerror(-rc));
			break;
		}
		if (pl.slot < 0) {
			out->full = true;
			break;
		}
		out->compared++;
		/* Not in the table: the reference found the node infeasible
		 * (cannot happen over the same state; counted as worse). */
		if (t->scored > 0 && (uint64_t)pl.slot < t->capacity &&
		    t->stamp[pl.slot] == t->current && t->total[pl.slot] == t->best)
			out->same_score++;
		if ((rc = commit(side, b, k, pl.slot, who, err, err_len)) < 0)
			break;
		out->placed++;
	}
	out->wall_s = now_s() - start;
	alloc_ratios(b->cluster, &out->cpu_alloc_ratio, &out->mem_alloc_ratio);
	out->same_score_pct = out->compared
		? 100.0 * (double)out->same_score / (double)out->compared : 0;
	progress_end(&bar);
	return rc;
}

static int run_side(const struct baseline_config *cfg, enum side_kind kind,
		    double max_s, struct quality_side *out, char *err,
		    size_t err_len)
{
	memset(out, 0, sizeof(*out));
	struct base b;
	int rc = base_init(&b, cfg, NULL, cfg->nodes, cfg->running, err, err_len);
	if (rc < 0)
		return rc;
	struct sched_config at100 = b.cfg, side_cfg = b.cfg;
	sched_config_set_percentage(&at100, 100);
	if (kind != SIDE_ENGINE_DEFAULT)
		sched_config_set_percentage(&side_cfg, 100);
	out->percentage = sched_profile_percentage(&side_cfg, 0);

	struct score_table t = {.capacity = cluster_capacity(b.cluster)};
	t.total = calloc(t.capacity ? t.capacity : 1, sizeof(*t.total));
	t.stamp = calloc(t.capacity ? t.capacity : 1, sizeof(*t.stamp));
	/* The same seed in both: the reference scan of pod k starts where the
	 * side's does and breaks ties with the same draws. */
	struct engine *ref = engine_create(b.cluster, &b.ctx, &at100, cfg->seed, 0);
	struct engine *side = engine_create(b.cluster, &b.ctx, &side_cfg, cfg->seed, 0);
	if (t.total == NULL || t.stamp == NULL || ref == NULL || side == NULL) {
		rc = -ENOMEM;
		snprintf(err, err_len, "%s: cannot create engines: out of memory",
			 side_names[kind]);
		goto fail_alloc;
	}
	rcu_register();
	rc = side_loop(cfg, &b, kind, side, ref, &t, max_s, out, err, err_len);
	rcu_unregister();
fail_alloc:
	engine_destroy(side);
	engine_destroy(ref);
	free(t.stamp);
	free(t.total);
	base_free(&b);
	return rc;
}

int quality_run(const struct baseline_config *cfg, struct quality_result *out,
		char *err, size_t err_len)
{
	memset(out, 0, sizeof(*out));
	if (cfg->w == NULL) {
		snprintf(err, err_len, "quality: no workload");
		return -EINVAL;
	}
	out->nodes = cfg->nodes;
	double max_s = cfg->max_seconds > 0 ? cfg->max_seconds / 3 : 0;
	int rc = run_side(cfg, SIDE_ENGINE_DEFAULT, max_s, &out->engine_default,
			  err, err_len);
	if (rc == 0)
		rc = run_side(cfg, SIDE_ENGINE_100, max_s, &out->engine_100, err,
			      err_len);
	if (rc == 0)
		rc = run_side(cfg, SIDE_REFERENCE, max_s, &out->reference, err,
			      err_len);
	return rc;
}
