/* `shmsched place`: see place.h and `shmsched place --help`.
 *
 * Every input is read and checked before the first line is printed, so a
 * bad file yields a message and exit status 2, never half an answer. Pods
 * are kept as (name, class) pairs: replicas share one decoded spec.
 */
#define _LGPL_SOURCE 1

#include "cli/place.h"
#include "cli/place_quota.h"
#include "bind/bind.h"
#include "base/base.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <urcu/urcu-qsbr.h>

#include "ingest/ingest.h"
#include "policy/policy.h"
#include "shm/shm.h"
#include "workers/workers.h"

struct options {
	const char *cluster_path;
	const char *pods_path;
	const char *config_path;
	int32_t percentage; /* -1: from the config */
	uint64_t seed;
	bool explain;
	bool reference;
	bool stats;
	int field_validation; /* enum k8s_field_validation */
};

#define TRY "Try 'shmsched place --help' for more information.\n"

static void usage(FILE *to)
{
	fprintf(to,
		"usage: shmsched place --cluster FILE --pods FILE [--config FILE]\n"
		"                      [--percentage-of-nodes-to-score N] [--seed N]\n"
		"                      [--explain] [--reference] [--stats]\n"
		"                      [--field-validation Strict|Warn|Ignore]\n"
		"\n"
		"Loads the Nodes of --cluster and its Pods bound to a node (counted as\n"
		"that node's use), then places the Pods of --pods in order, counting each\n"
		"placement before the next, and prints one JSON line per pod:\n"
		"  {\"pod\":\"default/web-7\",\"node\":\"n12\"}\n"
		"  {\"pod\":\"default/web-8\",\"node\":null,\"message\":\"0/3 nodes are available: ...\"}\n"
		"A pod that needs what shmsched does not do (volume binding, scheduling\n"
		"gates, resource claims) is answered with \"unsupported\":true and why:\n"
		"  {\"pod\":\"default/db-0\",\"node\":null,\"unsupported\":true,\"message\":\n"
		"   \"not scheduled by shmsched: spec.volumes[0].persistentVolumeClaim: ...\"}\n"
		"Kueue's objects in --cluster (ClusterQueues, LocalQueues, ...) are applied\n"
		"as the daemon applies them: a pod labelled kueue.x-k8s.io/queue-name is\n"
		"charged to its ClusterQueue or answered with the daemon's refusal.\n"
		"Files hold Kubernetes JSON: one object, a List, an array, or JSON Lines.\n"
		"\n"
		"  --config FILE    a KubeSchedulerConfiguration (YAML or JSON)\n"
		"  --percentage-of-nodes-to-score N\n"
		"                   0..100; 0 is kube-scheduler's adaptive default;\n"
		"                   overrides the config file (default: the config's, else 0)\n"
		"  --seed N         random start offsets and tie-breaks (default 1)\n"
		"  --explain        add \"profile\" (the pod's profile, by schedulerName),\n"
		"                   \"filtered\" (each node that failed a filter, with\n"
		"                   its reasons) and \"scores\" (each scored node's plugin\n"
		"                   scores and weighted total); uses --reference\n"
		"  --reference      use the literal one-node-at-a-time algorithm instead of\n"
		"                   the fast path (same answers, slower)\n"
		"  --stats          print timing and engine counters on stderr\n"
		"  --field-validation Strict|Warn|Ignore\n"
		"                   a field that is not a field of the object's Kubernetes\n"
		"                   type (\"spec.nodeSelectr\"): Strict refuses the file\n"
		"                   naming it (exit 2), Warn names it on stderr and drops\n"
		"                   it, Ignore drops it silently, as kube-apiserver's\n"
		"                   fieldValidation (default Strict, as kubectl)\n"
		"\n"
		"Exit status: 0 every pod answered; 2 bad input (message on stderr,\n"
		"nothing on stdout); 1 an internal failure.\n");
}

static int parse_uint(const char *opt, const char *s, uint64_t max, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || s[0] == '-' || v > max) {
		fprintf(stderr, "shmsched place: %s: \"%s\" is not a whole number in "
			"0..%" PRIu64 "\n", opt, s, max);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

static int parse_args(int argc, char **argv, struct options *o)
{
	enum { OPT_PCT = 256, OPT_SEED, OPT_EXPLAIN, OPT_REFERENCE, OPT_STATS,
	       OPT_FIELDS };
	static const struct option longopts[] = {
		{"cluster", required_argument, NULL, 'c'},
		{"pods", required_argument, NULL, 'p'},
		{"config", required_argument, NULL, 'f'},
		{"percentage-of-nodes-to-score", required_argument, NULL, OPT_PCT},
		{"seed", required_argument, NULL, OPT_SEED},
		{"explain", no_argument, NULL, OPT_EXPLAIN},
		{"reference", no_argument, NULL, OPT_REFERENCE},
		{"stats", no_argument, NULL, OPT_STATS},
		{"field-validation", required_argument, NULL, OPT_FIELDS},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	*o = (struct options){.percentage = -1, .seed = 1};
	/* getopt_long names the program by argv[0] in its messages. */
	static char prog[] = "shmsched place";
	argv[0] = prog;
	uint64_t v;
	int c;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			o->cluster_path = optarg;
			break;
		case 'p':
			o->pods_path = optarg;
			break;
		case 'f':
			o->config_path = optarg;
			break;
		case OPT_PCT:
			if (parse_uint("--percentage-of-nodes-to-score", optarg, 100, &v))
				return 2;
			o->percentage = (int32_t)v;
			break;
		case OPT_SEED:
			if (parse_uint("--seed", optarg, UINT64_MAX, &v))
				return 2;
			o->seed = v;
			break;
		case OPT_EXPLAIN:
			o->explain = true;
			o->reference = true;
			break;
		case OPT_REFERENCE:
			o->reference = true;
			break;
		case OPT_STATS:
			o->stats = true;
			break;
		case OPT_FIELDS: {
			enum k8s_field_validation fv;
			if (k8s_field_validation_parse(optarg, &fv) < 0) {
				fprintf(stderr, "shmsched place: --field-validation: "
					"\"%s\": expected Strict, Warn or Ignore\n", optarg);
				return 2;
			}
			o->field_validation = (int)fv;
			break;
		}
		case 'h':
			usage(stdout);
			exit(0);
		default: /* getopt_long has said what is wrong */
			fprintf(stderr, TRY);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "shmsched place: unexpected argument \"%s\"\n" TRY,
			argv[optind]);
		return 2;
	}
	if (o->cluster_path == NULL || o->pods_path == NULL) {
		fprintf(stderr, "shmsched place: --cluster and --pods are required\n"
			TRY);
		return 2;
	}
	return 0;
}

/* --- the pods to place, deduplicated by class --------------------------- */

struct pod_ref {
	uint32_t ns_name;
	uint32_t spec; /* index into specs; UINT32_MAX: not ours to place */
	uint32_t unsupported; /* with it: index into pod_list.unsupported */
};

struct pod_list {
	struct pod_ref *pods;
	size_t n, cap;
	struct pod_spec *specs;
	size_t n_specs, cap_specs;
	uint32_t *table; /* spec index + 1, open addressing by class hash */
	size_t table_mask;
	const char *path;
	size_t other_scheduler; /* pods for another scheduler, skipped */
	/* Pods that need what shmsched does not do (k8s_pod_meta.unsupported):
	 * answered in order with their reason, never placed. */
	char **unsupported;
	size_t n_unsupported, cap_unsupported;
	size_t unsupported_by_kind[K8S_UNSUPPORTED_COUNT];
};

static int table_insert(struct pod_list *l, uint32_t idx)
{
	size_t i = pod_class_hash(&l->specs[idx]) & l->table_mask;
	while (l->table[i] != 0)
		i = (i + 1) & l->table_mask;
	l->table[i] = idx + 1;
	return 0;
}

static int table_grow(struct pod_list *l)
{
	size_t n = (l->table_mask + 1) * 2;
	uint32_t *t = calloc(n, sizeof(*t));
	if (t == NULL)
		return -ENOMEM;
	free(l->table);
	l->table = t;
	l->table_mask = n - 1;
	for (size_t k = 0; k < l->n_specs; k++)
		table_insert(l, (uint32_t)k);
	return 0;
}

/* The index of the spec equal to `pod` in scheduling terms, added if new. */
static int64_t spec_index(struct pod_list *l, const struct pod_spec *pod)
{
	size_t i = pod_class_hash(pod) & l->table_mask;
	for (; l->table[i] != 0; i = (i + 1) & l->table_mask)
		if (pod_class_equal(&l->specs[l->table[i] - 1], pod))
			return l->table[i] - 1;
	if (l->n_specs == l->cap_specs) {
		size_t cap = l->cap_specs * 2;
		struct pod_spec *s = realloc(l->specs, cap * sizeof(*s));
		if (s == NULL)
			return -ENOMEM;
		l->specs = s;
		l->cap_specs = cap;
	}
	uint32_t idx = (uint32_t)l->n_specs++;
	l->specs[idx] = *pod;
	l->specs[idx].ns_name = 0;
	/* Growing re-inserts every spec, this one included. */
	if (l->n_specs * 2 > l->table_mask + 1)
		return table_grow(l) < 0 ? -ENOMEM : (int64_t)idx;
	l->table[i] = idx + 1;
	return idx;
}

static int on_pod(void *arg, const struct pod_spec *pod,
		  const struct k8s_pod_meta *meta, char *err, size_t err_len)
{
	struct pod_list *l = arg;
	if (meta->other_scheduler) {
		l->other_scheduler++; /* not ours: kube-scheduler ignores it */
		return 0;
	}
	int64_t idx;
	uint32_t reason = 0;
	if (meta->unsupported != NULL) {
		/* Its own answer, in order: the text outlives the visit. */
		idx = UINT32_MAX;
		if (l->n_unsupported == l->cap_unsupported) {
			size_t cap = l->cap_unsupported ? l->cap_unsupported * 2 : 16;
			char **u = realloc(l->unsupported, cap * sizeof(*u));
			if (u == NULL)
				idx = -ENOMEM;
			else {
				l->unsupported = u;
				l->cap_unsupported = cap;
			}
		}
		if (idx >= 0 && (l->unsupported[l->n_unsupported] =
					 strdup(meta->unsupported)) == NULL)
			idx = -ENOMEM;
		if (idx >= 0) {
			reason = (uint32_t)l->n_unsupported++;
			l->unsupported_by_kind[meta->unsupported_kind]++;
		}
	} else {
		idx = spec_index(l, pod);
	}
	if (idx >= 0 && l->n == l->cap) {
		size_t cap = l->cap * 2;
		struct pod_ref *p = realloc(l->pods, cap * sizeof(*p));
		if (p == NULL)
			idx = -ENOMEM;
		else {
			l->pods = p;
			l->cap = cap;
		}
	}
	if (idx < 0) {
		snprintf(err, err_len, "out of memory");
		return -ENOMEM;
	}
	l->pods[l->n++] = (struct pod_ref){pod->ns_name, (uint32_t)idx, reason};
	return 0;
}

static int on_node_in_pods_file(void *arg, const struct node_spec *node,
				char *err, size_t err_len)
{
	const struct pod_list *l = arg;
	(void)node;
	snprintf(err, err_len, "%s: holds a Node; nodes go in --cluster, the pods "
		 "file holds only Pods", l->path);
	return -EINVAL;
}

static int load_pods(const char *path, struct intern *strings,
		     struct res_names *res, struct k8s_objects *objects,
		     const struct sched_config *cfg,
		     struct pod_list *l, char *err, size_t err_len)
{
	*l = (struct pod_list){.cap = 1024, .cap_specs = 64, .table_mask = 255,
			       .path = path};
	l->pods = malloc(l->cap * sizeof(*l->pods));
	l->specs = malloc(l->cap_specs * sizeof(*l->specs));
	l->table = calloc(l->table_mask + 1, sizeof(*l->table));
	if (l->pods == NULL || l->specs == NULL || l->table == NULL) {
		snprintf(err, err_len, "out of memory");
		return -ENOMEM;
	}
	/* A pod's spec.schedulerName picks its profile (pod_spec.profile). */
	struct k8s_ctx ctx = {.strings = strings, .res = res, .objects = objects,
			      .profiles = cfg};
	struct k8s_visitor v = {.arg = l, .pod = on_pod,
				.node = on_node_in_pods_file};
	return k8s_load_file(path, &ctx, &v, err, err_len);
}

static void free_pods(struct pod_list *l)
{
	for (size_t i = 0; i < l->n_unsupported; i++)
		free(l->unsupported[i]);
	free(l->unsupported);
	free(l->pods);
	free(l->specs);
	free(l->table);
}

/* --- explain ----------------------------------------------------------- */

struct explain_buf {
	const struct snapshot *snap;
	const struct plugin_ctx *ctx;
	const struct score_config *score;
	FILE *filtered; /* JSON members, comma-separated, built in memory */
	FILE *scores;
	char *filtered_text, *scores_text;
	size_t filtered_len, scores_len;
	bool any_filtered, any_scored;
};

static const char *node_name(const struct explain_buf *x, uint32_t slot)
{
	return intern_str(x->ctx->strings, x->snap->nodes[slot].name);
}

static void on_filtered(void *arg, uint32_t slot, const struct reason *reasons,
			unsigned n)
{
	struct explain_buf *x = arg;
	if (x->any_filtered)
		putc(',', x->filtered);
	x->any_filtered = true;
	json_out_string(x->filtered, node_name(x, slot));
	fputs(":[", x->filtered);
	for (unsigned i = 0; i < n; i++) {
		char text[512];
		reason_format(x->ctx, &reasons[i], text, sizeof(text));
		if (i > 0)
			putc(',', x->filtered);
		json_out_string(x->filtered, text);
	}
	putc(']', x->filtered);
}

/* A score in thousandths of a point (SCORE_FINE) as a JSON number. */
static void print_fine(FILE *f, int64_t v)
{
	fprintf(f, "%s%" PRId64 ".%03" PRId64, v < 0 ? "-" : "",
		(v < 0 ? -v : v) / SCORE_FINE, (v < 0 ? -v : v) % SCORE_FINE);
}

static void on_scored(void *arg, uint32_t slot, const int64_t scores[SCORE_PLUGINS],
		      int64_t total)
{
	struct explain_buf *x = arg;
	if (x->any_scored)
		putc(',', x->scores);
	x->any_scored = true;
	json_out_string(x->scores, node_name(x, slot));
	putc(':', x->scores);
	putc('{', x->scores);
	for (int p = 0; p < SCORE_PLUGINS; p++) {
		if (!score_plugin_enabled(x->score, p))
			continue;
		fprintf(x->scores, "\"%s\":", score_plugin_names[p]);
		/* The device scores keep thousandths; the others are whole. */
		if (p == SCORE_GPU_BEST_FIT || p == SCORE_GPU_FRAG)
			print_fine(x->scores, scores[p]);
		else
			fprintf(x->scores, "%" PRId64, scores[p]);
		putc(',', x->scores);
	}
	fputs("\"total\":", x->scores);
	print_fine(x->scores, total);
	putc('}', x->scores);
}

static int explain_open(struct explain_buf *x)
{
	x->filtered = open_memstream(&x->filtered_text, &x->filtered_len);
	x->scores = open_memstream(&x->scores_text, &x->scores_len);
	x->any_filtered = x->any_scored = false;
	return x->filtered && x->scores ? 0 : -ENOMEM;
}

static void explain_close(struct explain_buf *x)
{
	if (x->filtered)
		fclose(x->filtered);
	if (x->scores)
		fclose(x->scores);
	free(x->filtered_text);
	free(x->scores_text);
	x->filtered = x->scores = NULL;
	x->filtered_text = x->scores_text = NULL;
}

/* One placement of a pod (place_quota_place's `place`): the fast path or
 * the literal one, its explanation from this attempt only. */
struct place_call {
	struct engine *engine;
	size_t seq;
	struct placement *pl;
	struct engine_explain *hooks; /* NULL: no --explain */
	bool reference;
	unsigned calls;
};

static int place_one(void *arg, const struct pod_spec *spec, int *slot)
{
	struct place_call *c = arg;
	if (c->hooks != NULL && c->calls > 0) {
		/* Another flavor tried: only its explanation is told. */
		struct explain_buf *x = c->hooks->arg;
		explain_close(x);
		if (explain_open(x) < 0)
			return -ENOMEM;
	}
	c->calls++;
	int rc = c->reference ? engine_place_reference(c->engine, spec, c->seq,
						       c->hooks, c->pl)
			      : engine_place(c->engine, spec, c->seq, c->pl);
	*slot = c->pl->slot;
	return rc;
}

/* --- main --------------------------------------------------------------- */

static int run(const struct options *o)
{
	char err[1024] = "";
	int status = 2;
	struct intern *strings = intern_create();
	struct res_names res;
	struct sched_config cfg;
	struct plugin_ctx pctx;
	struct cluster *cluster = NULL;
	struct engine *engine = NULL;
	struct pod_list pods = {0};
	struct cluster_load_stats cstats;
	struct k8s_objects *objects = k8s_objects_create();
	struct json_buf line = {0}; /* one answer, in the shape json_out.h gives */
	struct place_quota *quota = NULL; /* the cluster file's Kueue quotas */
	if (strings == NULL || objects == NULL) {
		k8s_objects_destroy(objects);
		intern_destroy(strings);
		fprintf(stderr, "shmsched place: out of memory\n");
		return 1;
	}
	res_names_init(&res);
	double t0 = now_s();

	sched_config_default(&cfg);
	if (o->config_path != NULL &&
	    sched_config_load(o->config_path, &cfg, &res, strings, err,
			      sizeof(err)) < 0)
		goto fail_input;
	if (o->percentage >= 0)
		sched_config_set_percentage(&cfg, o->percentage);
	if (plugin_ctx_init(&pctx, strings, &res) < 0) {
		status = 1;
		snprintf(err, sizeof(err), "out of memory");
		goto fail_input;
	}
	/* Both files' Namespaces, Services and controllers first: a bound
	 * pod's namespaceSelector and a pending pod's default spread selector
	 * see them all, whichever file and place they come in. */
	struct k8s_ctx octx = {.strings = strings, .res = &res, .objects = objects};
	if (k8s_objects_read_file(o->cluster_path, &octx, err, sizeof(err)) < 0 ||
	    k8s_objects_read_file(o->pods_path, &octx, err, sizeof(err)) < 0)
		goto fail_input;
	if (cluster_load_file_objects(o->cluster_path, strings, &res, objects, 0,
				      &cluster, &cstats, err, sizeof(err)) < 0)
		goto fail_input;
	if (cstats.quota != NULL) {
		/* The cluster file's Kueue objects, applied as the daemon
		 * applies them (cli/place_quota.h). */
		quota = place_quota_create(cstats.quota, strings, &res);
		if (quota == NULL) {
			quota_tree_free(cstats.quota);
			status = 1;
			snprintf(err, sizeof(err), "its Kueue objects: %s",
				 strerror(errno));
			goto fail_input;
		}
		cstats.quota = NULL;
	}
	if (load_pods(o->pods_path, strings, &res, objects, &cfg, &pods, err,
		      sizeof(err)) < 0)
		goto fail_input;
	double t_loaded = now_s();

	engine = engine_create(cluster, &pctx, &cfg, o->seed, 0);
	if (engine == NULL) {
		status = 1;
		snprintf(err, sizeof(err), "cannot create the engine: %s",
			 strerror(errno));
		goto fail_input;
	}
	status = 1;
	static char outbuf[1 << 20];
	setvbuf(stdout, outbuf, _IOFBF, sizeof(outbuf));
	struct explain_buf x = {.ctx = &pctx};
	struct engine_explain hooks = {.arg = &x, .filtered = on_filtered,
				       .scored = on_scored};
	uint64_t placed = 0;
	for (size_t i = 0; i < pods.n; i++) {
		if (pods.pods[i].spec == UINT32_MAX) {
			/* Not shmsched's to place: told apart from unschedulable
			 * by "unsupported". */
			fputs("{\"pod\":", stdout);
			json_out_string(stdout, intern_str(strings, pods.pods[i].ns_name));
			fputs(",\"node\":null,\"unsupported\":true,\"message\":", stdout);
			char msg[1024];
			snprintf(msg, sizeof(msg), "not scheduled by shmsched: %s",
				 pods.unsupported[pods.pods[i].unsupported]);
			json_out_string(stdout, msg);
			fputs("}\n", stdout);
			continue;
		}
		const struct pod_spec *spec = &pods.specs[pods.pods[i].spec];
		struct placement pl;
		int rc;
		if (o->explain) {
			x.snap = cluster_snapshot(cluster);
			x.score = &cfg.profiles[spec->profile].score;
			if (explain_open(&x) < 0) {
				snprintf(err, sizeof(err), "out of memory");
				goto fail_run;
			}
		}
		struct place_call call = {.engine = engine, .seq = i, .pl = &pl,
					  .hooks = o->explain ? &hooks : NULL,
					  .reference = o->reference};
		char quota_why[SHMSCHED_MESSAGE_MAX] = "";
		int slot;
		rc = quota != NULL ? place_quota_place(quota, spec, place_one, &call, &slot,
						       quota_why, sizeof(quota_why))
				   : place_one(&call, spec, &slot);
		if (rc == 0 && call.calls == 0)
			pl.slot = -1; /* refused by quota before any node was tried */
		if (rc < 0) {
			snprintf(err, sizeof(err), "out of memory");
			goto fail_run;
		}
		/* One thread: nothing can take the node between the placement and
		 * its commit, so a refusal here is a bug, reported as one. */
		if (pl.slot >= 0 &&
		    (rc = commit_pod(engine, spec, (uint32_t)pl.slot,
				       &pl.devices)) < 0) {
			snprintf(err, sizeof(err), "internal error: pod %zu: the commit "
				 "of its placement was refused: %s", i, strerror(-rc));
			goto fail_run;
		}
		const struct snapshot *snap = cluster_snapshot(cluster);
		char msg[4096], set[1024];
		struct json_answer ans = {
			.pod = intern_str(strings, pods.pods[i].ns_name)};
		if (pl.slot >= 0) {
			placed++;
			ans.node = intern_str(strings, snap->nodes[pl.slot].name);
			ans.gpu_mask = pl.devices.gpu_mask;
			ans.gpu_milli = pl.devices.gpu_milli;
			if (pl.devices.n_cores > 0) {
				devices_format_cpuset(pl.devices.cpuset, set, sizeof(set));
				ans.cpuset = set;
			}
		} else if (quota_why[0] != '\0') {
			ans.message = quota_why;
		} else {
			engine_message(engine, msg, sizeof(msg));
			ans.message = msg;
		}
		json_buf_reset(&line);
		json_answer_open(&line, &ans);
		if (o->explain) {
			fflush(x.filtered);
			fflush(x.scores);
			/* The profile that placed it, whose plugins score. */
			json_buf_puts(&line, ",\"profile\":");
			json_buf_string(&line, cfg.profiles[spec->profile].scheduler_name);
			json_buf_printf(&line, ",\"filtered\":{%s},\"scores\":{%s}",
					x.filtered_text, x.scores_text);
			explain_close(&x);
		}
		json_buf_put(&line, "}\n", 2);
		if (line.failed) {
			snprintf(err, sizeof(err), "out of memory");
			goto fail_run;
		}
		fwrite(line.data, 1, line.len, stdout);
		/* A quiescent state per pod: snapshots may be reclaimed between pods. */
		urcu_qsbr_quiescent_state();
	}
	if (fflush(stdout) != 0) {
		snprintf(err, sizeof(err), "writing the output: %s", strerror(errno));
		goto fail_run;
	}
	if (pods.other_scheduler > 0)
		fprintf(stderr, "shmsched place: %zu pod%s for other schedulers "
			"skipped (a spec.schedulerName no profile has)\n",
			pods.other_scheduler, pods.other_scheduler == 1 ? "" : "s");
	if (o->stats && pods.n_unsupported > 0) {
		static const char *const why[K8S_UNSUPPORTED_COUNT] = {
			[K8S_UNSUPPORTED_VOLUME_BINDING] = "volume binding",
			[K8S_UNSUPPORTED_SCHEDULING_GATES] = "scheduling gates",
			[K8S_UNSUPPORTED_RESOURCE_CLAIMS] = "resource claims",
		};
		fprintf(stderr, "shmsched place: %zu pod%s not scheduled by shmsched "
			"(\"unsupported\":true):", pods.n_unsupported,
			pods.n_unsupported == 1 ? "" : "s");
		const char *sep = " ";
		for (int k = 1; k < K8S_UNSUPPORTED_COUNT; k++) {
			if (pods.unsupported_by_kind[k] == 0)
				continue;
			fprintf(stderr, "%s%zu %s", sep, pods.unsupported_by_kind[k], why[k]);
			sep = ", ";
		}
		fputc('\n', stderr);
	}
	if (o->stats) {
		double t_end = now_s();
		fprintf(stderr,
			"shmsched place: %u nodes, %u running pods counted (%u orphan, "
			"%u finished, %u pending skipped), %zu pods in %zu classes\n"
			"shmsched place: load %.3f s, place %.3f s (%.0f pods/s), "
			"%" PRIu64 " placed, %" PRIu64 " unschedulable, %s path\n",
			cstats.nodes, cstats.running_pods, cstats.orphan_pods,
			cstats.finished_pods, cstats.pending_pods,
			pods.n - pods.n_unsupported, pods.n_specs,
			t_loaded - t0, t_end - t_loaded,
			(double)pods.n / (t_end - t_loaded + 1e-9), placed,
			(uint64_t)(pods.n - pods.n_unsupported) - placed,
			o->reference ? "reference" : "fast");
		struct k8s_objects_counts oc;
		k8s_objects_counts(objects, &oc);
		fprintf(stderr, "shmsched place: objects read: %u namespaces, %u services "
			"with a selector, %u controllers (replication controllers, replica "
			"sets, stateful sets); %u objects of other kinds skipped",
			oc.namespaces, oc.services, oc.controllers, cstats.skipped.total);
		for (unsigned k = 0; k < cstats.skipped.n_kinds; k++)
			fprintf(stderr, "%s%s %u", k ? ", " : " (",
				cstats.skipped.kinds[k].kind, cstats.skipped.kinds[k].count);
		fputs(cstats.skipped.n_kinds > 0 ? ")\n" : "\n", stderr);
		struct engine_stats st;
		engine_get_stats(engine, &st);
		if (!o->reference)
			fprintf(stderr,
				"shmsched place: class hits %" PRIu64 ", compiles %" PRIu64
				", first sights %" PRIu64 ", flushes %" PRIu64
				", nodes checked %" PRIu64 ", shards skipped %" PRIu64
				", diagnosis scans %" PRIu64 ", indexed %" PRIu64
				" (leaf updates %" PRIu64 ", rebuilds %" PRIu64 ")\n",
				st.class_hits, st.class_misses, st.first_sights,
				st.class_flushes, st.nodes_checked, st.shards_skipped,
				st.diagnosis_scans, st.indexed_pods, st.index_updates,
				st.index_rebuilds);
	}
	status = 0;
	goto done;

fail_run:
	fprintf(stderr, "shmsched place: %s\n", err);
	goto done;
fail_input:
	fprintf(stderr, "shmsched place: %s\n", err);
done:
	json_buf_free(&line);
	engine_destroy(engine);
	place_quota_destroy(quota);
	free_pods(&pods);
	cluster_destroy(cluster);
	k8s_objects_destroy(objects);
	intern_destroy(strings);
	return status;
}

/* --field-validation=Warn: each object's unknown fields, on stderr. */
static void warn_field(void *arg, const char *line)
{
	(void)arg;
	fprintf(stderr, "shmsched place: warning: %s\n", line);
}

int place_main(int argc, char **argv)
{
	struct options o;
	int rc = parse_args(argc, argv, &o);
	if (rc)
		return rc;
	k8s_set_field_validation(o.field_validation, warn_field, NULL);
	urcu_qsbr_register_thread();
	int status = run(&o);
	urcu_qsbr_unregister_thread();
	return status;
}
