/* KubeSchedulerConfiguration reader: see sched_config.h.
 *
 * Two stages. (1) The bytes become one jansson tree: JSON through
 * json_loadb when the text starts with '{' (falling back to YAML, since a
 * YAML flow mapping starts so too), YAML through libyaml's event parser
 * otherwise. YAML scalars are resolved like YAML 1.2's core schema, reduced:
 * plain integers become integers, plain decimals reals, true/false booleans,
 * null/~/empty null, everything else (quoted scalars always) strings.
 * Anchors, aliases, explicit tags other than !!str and a second document
 * are refused: kube-scheduler reads one plain document, and an alias would
 * let a small file expand into a large tree. (2) One strict decoder walks
 * the tree: every key it does not know is an error naming its path, so a
 * setting shmsched does not implement is never silently ignored. Each
 * profile's plugins are merged with kube's defaults and expanded from
 * multiPoint to every extension point as kube-scheduler does
 * (sched_config_plugins.c, over the one plugin table of
 * workers/plugin_table.h); each plugin's args are read in
 * sched_config_args.c; NodeAffinity's addedAffinity is read by the pod
 * decoder (ingest/k8s_json.h) so both mean the same.
 *
 * Files (sched_config_internal.h names what each shares, in the one way
 * they call): this one holds profiles, the rest of the v1 type and the
 * entry points; stage (1) is sched_config_yaml.c; the messages and typed
 * access every file reports through are sched_config_dec.c's.
 *
 * Invariants: `cfg`, `res` and `strings` are changed only on success (the
 * decoder fills a copy of the defaults; the resource registry is restored
 * from a snapshot, the string table rolled back to its mark, on failure). Every error is one line in `err`:
 * "<name>[:<line>]: <field path>: <what was found and expected>". The
 * decoder reports a file's errors together: after an error in one field it
 * goes on with the field's next sibling (the field itself is abandoned),
 * so `err` lists up to SCHED_CONFIG_ERRORS_MAX errors, in file order, and
 * says how many more there were. A YAML or JSON syntax error stops at the
 * first: what follows it cannot be read.
 *
 * Line numbers: while building the tree from YAML we record the line of
 * every container, non-singleton scalar and mapping key (keyed by address:
 * jansson keeps a key's storage for the life of its object). The decoder
 * keeps a stack of the keys and elements on its current path and reports
 * the line of the innermost one recorded. JSON input has no line table.
 *
 * Cost: linear in the input (at most SCHED_CONFIG_FILE_MAX bytes from a
 * file); the line table is searched only to format an error. YAML nesting
 * is limited to YAML_DEPTH_MAX so the recursive builder's stack is bounded;
 * jansson limits JSON nesting itself.
 */
#include "ingest/sched_config.h"
#include "ingest/sched_config_internal.h"

#include "base/base.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "shm/shm.h"

/* ---- profiles ------------------------------------------------------------ */

/* kube-scheduler's default profile: default-scheduler, its plugins and
 * weights, LeastAllocated over cpu and memory, System spreading. */
static void profile_default(struct sched_profile *p)
{
	memset(p, 0, sizeof(*p)); /* padding too: configs compare by bytes */
	snprintf(p->scheduler_name, sizeof(p->scheduler_name), "%s",
		 SCHED_DEFAULT_NAME);
	p->percentage_of_nodes_to_score = -1;
	struct score_config *sc = &p->score;
	for (int i = 0; i < SCORE_PLUGINS; i++) {
		int64_t *w = score_config_weight(sc, i);
		if (w != NULL)
			*w = plugin_default_weight(i);
	}
	sc->fit_strategy = FIT_LEAST_ALLOCATED;
	sc->hard_pod_affinity_weight = 1;
	sc->spread_defaulting = SPREAD_DEFAULTING_SYSTEM;
	sc->gpu_frag_max_shapes = SCORE_GPU_FRAG_MAX_SHAPES;
	scfg_default_resources(sc->fit_resources, &sc->n_fit_resources);
	scfg_default_resources(sc->balanced_resources, &sc->n_balanced_resources);
}

#define QUEUE_SORT_SIG 512

static int decode_scheduler_name(struct dec *d, json_t *v, bool single,
				 struct sched_profile *p)
{
	char vb[SHOW_LEN];
	/* defaults.go names the profile only when it is the only one. */
	if (!scfg_present(v))
		return single ? 0 : scfg_fail(d, -EINVAL, "missing: every profile of "
					 "several needs its schedulerName");
	if (!json_is_string(v))
		return scfg_fail(d, -EINVAL, "%s is not a string", scfg_show(v, vb, sizeof(vb)));
	size_t n = json_string_length(v);
	if (n == 0)
		return scfg_fail(d, -EINVAL, "empty: a profile needs a schedulerName");
	if (n > SCHED_NAME_MAX || strlen(json_string_value(v)) != n)
		return scfg_fail(d, -EINVAL, "%s is not a scheduler name (at most %d bytes, "
			    "no NUL)", scfg_show(v, vb, sizeof(vb)), SCHED_NAME_MAX);
	memset(p->scheduler_name, 0, sizeof(p->scheduler_name));
	memcpy(p->scheduler_name, json_string_value(v), n);
	return 0;
}

static int decode_profile(struct dec *d, json_t *prof, bool single,
			  struct sched_profile *p, struct plugins_in *in,
			  char queue_sig[QUEUE_SORT_SIG])
{
	static const char *const keys[] = {"schedulerName", "percentageOfNodesToScore",
					   "plugins", "pluginConfig", NULL};
	queue_sig[0] = '\0';
	int rc = scfg_need_object(d, prof);
	if (rc != 0)
		return rc;
	int walk = scfg_only_known(d, prof, keys);
	size_t m = scfg_push_key(d, scfg_key_anchor(prof, "schedulerName"), "schedulerName");
	scfg_failed(&walk, decode_scheduler_name(d, json_object_get(prof, "schedulerName"),
					    single, p));
	scfg_pop(d, m);

	json_t *v = json_object_get(prof, "percentageOfNodesToScore");
	if (scfg_present(v)) {
		int64_t pct;
		m = scfg_push_key(d, scfg_key_anchor(prof, "percentageOfNodesToScore"),
			     "percentageOfNodesToScore");
		if ((rc = scfg_get_int(d, v, 0, 100, &pct)) == 0)
			p->percentage_of_nodes_to_score = (int32_t)pct;
		scfg_pop(d, m);
		scfg_failed(&walk, rc);
	}

	/* Plugins, defaults included: the expansion gives every weight. */
	json_t *plugins = json_object_get(prof, "plugins");
	m = scfg_push_key(d, scfg_key_anchor(prof, "plugins"), "plugins");
	rc = scfg_profile_plugins(d, plugins, in, &p->score, queue_sig,
				  QUEUE_SORT_SIG);
	scfg_pop(d, m);
	scfg_failed(&walk, rc);

	m = scfg_push_key(d, scfg_key_anchor(prof, "pluginConfig"), "pluginConfig");
	scfg_failed(&walk, scfg_decode_plugin_config(d, json_object_get(prof, "pluginConfig"),
					   &p->score));
	scfg_pop(d, m);
	return walk;
}

static int decode_profiles(struct dec *d, json_t *list, struct sched_config *cfg)
{
	char vb[SHOW_LEN];
	if (!scfg_present(list))
		return 0;
	int rc = scfg_need_array(d, list);
	if (rc != 0)
		return rc;
	size_t n = json_array_size(list);
	/* None: kube-scheduler adds one default profile. */
	if (n == 0)
		return 0;
	int walk = 0;
	if (n > SCHED_MAX_PROFILES) {
		size_t m = scfg_push_index(d, json_array_get(list, SCHED_MAX_PROFILES),
				      SCHED_MAX_PROFILES);
		scfg_failed(&walk, scfg_fail(d, -ENOSPC, "%zu profiles, at most %d "
				   "(SCHED_MAX_PROFILES)", n, SCHED_MAX_PROFILES));
		scfg_pop(d, m);
		n = SCHED_MAX_PROFILES;
	}
	struct plugins_in *in = malloc(sizeof(*in));
	char (*sig)[QUEUE_SORT_SIG] = malloc(SCHED_MAX_PROFILES * sizeof(*sig));
	if (in == NULL || sig == NULL) {
		free(in);
		free(sig);
		return scfg_fail(d, -ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < n; i++) {
		json_t *prof = json_array_get(list, i);
		profile_default(&cfg->profiles[i]);
		size_t m = scfg_push_index(d, prof, i);
		rc = decode_profile(d, prof, n == 1, &cfg->profiles[i], in, sig[i]);
		scfg_pop(d, m);
		if (scfg_failed(&walk, rc))
			goto done;
	}
	cfg->n_profiles = (uint32_t)n;
	/* validation.go: unique names, one queue sort for all. */
	for (size_t i = 1; i < n; i++) {
		json_t *prof = json_array_get(list, i);
		json_t *name = json_object_get(prof, "schedulerName");
		for (size_t j = 0; j < i && json_is_string(name); j++) {
			if (strcmp(cfg->profiles[i].scheduler_name,
				   cfg->profiles[j].scheduler_name) != 0)
				continue;
			size_t m = scfg_push_index(d, prof, i);
			size_t mn = scfg_push_key(d, scfg_key_anchor(prof, "schedulerName"),
					     "schedulerName");
			scfg_failed(&walk, scfg_fail(d, -EINVAL, "%s is profiles[%zu]'s "
					   "schedulerName too (kube-scheduler: "
					   "Duplicate value)",
					   scfg_show(name, vb, sizeof(vb)), j));
			scfg_pop(d, mn);
			scfg_pop(d, m);
			break;
		}
		if (strcmp(sig[i], sig[0]) != 0) {
			size_t m = scfg_push_index(d, prof, i);
			json_t *pl = json_object_get(prof, "plugins");
			size_t mp = scfg_push_key(d, scfg_key_anchor(prof, "plugins"), "plugins");
			size_t mq = scfg_push_key(d, json_is_object(pl)
						? scfg_key_anchor(pl, "queueSort") : NULL,
					     "queueSort");
			scfg_failed(&walk, scfg_fail(d, -EINVAL, "not profiles[0]'s: the queue "
					   "sort must be the same for all profiles"));
			scfg_pop(d, mq);
			scfg_pop(d, mp);
			scfg_pop(d, m);
		}
	}
done:
	free(in);
	free(sig);
	return walk;
}
/* ---- the rest of the v1 type --------------------------------------------- */

/* clientConnection and leaderElection (component-base's types): their
 * fields by name and type, and the checks kube-scheduler makes; no
 * effect here. */
static int decode_connection(struct dec *d, json_t *v)
{
	static const char *const keys[] = {"kubeconfig", "acceptContentTypes",
					   "contentType", "qps", "burst", NULL};
	char vb[SHOW_LEN];
	int rc = scfg_need_object(d, v);
	if (rc != 0)
		return rc;
	int walk = scfg_only_known(d, v, keys);
	for (int k = 0; k < 3; k++) {
		json_t *x = json_object_get(v, keys[k]);
		if (!scfg_present(x))
			continue;
		size_t m = scfg_push_key(d, scfg_key_anchor(v, keys[k]), keys[k]);
		scfg_failed(&walk, scfg_need_string(d, x));
		scfg_pop(d, m);
	}
	json_t *x = json_object_get(v, "qps");
	if (scfg_present(x) && !json_is_number(x)) {
		size_t m = scfg_push_key(d, scfg_key_anchor(v, "qps"), "qps");
		scfg_failed(&walk, scfg_fail(d, -EINVAL, "%s is not a number",
				   scfg_show(x, vb, sizeof(vb))));
		scfg_pop(d, m);
	}
	x = json_object_get(v, "burst");
	if (scfg_present(x)) {
		int64_t b;
		size_t m = scfg_push_key(d, scfg_key_anchor(v, "burst"), "burst");
		scfg_failed(&walk, scfg_get_int(d, x, 0, INT32_MAX, &b));
		scfg_pop(d, m);
	}
	return walk;
}

static int decode_leader_election(struct dec *d, json_t *v)
{
	static const char *const keys[] = {"leaderElect", "leaseDuration",
					   "renewDeadline", "retryPeriod",
					   "resourceLock", "resourceName",
					   "resourceNamespace", NULL};
	char vb[SHOW_LEN];
	int rc = scfg_need_object(d, v);
	if (rc != 0)
		return rc;
	int walk = scfg_only_known(d, v, keys);
	bool elect = false;
	json_t *x = json_object_get(v, "leaderElect");
	if (scfg_present(x)) {
		size_t m = scfg_push_key(d, scfg_key_anchor(v, "leaderElect"), "leaderElect");
		scfg_failed(&walk, scfg_get_bool(d, x, &elect));
		scfg_pop(d, m);
	}
	for (int k = 1; keys[k] != NULL; k++) {
		x = json_object_get(v, keys[k]);
		if (!scfg_present(x))
			continue;
		size_t m = scfg_push_key(d, scfg_key_anchor(v, keys[k]), keys[k]);
		scfg_failed(&walk, scfg_need_string(d, x));
		scfg_pop(d, m);
	}
	/* validation.go: only lease locks. */
	x = json_object_get(v, "resourceLock");
	if (elect && json_is_string(x) && !scfg_str_is(x, "leases") && !scfg_str_is(x, "")) {
		size_t m = scfg_push_key(d, scfg_key_anchor(v, "resourceLock"), "resourceLock");
		scfg_failed(&walk, scfg_fail(d, -EINVAL, "%s: resourceLock value must be "
				   "\"leases\"", scfg_show(x, vb, sizeof(vb))));
		scfg_pop(d, m);
	}
	return walk;
}

/* The v1 type's other top-level fields: kept where they will mean
 * something (the queue's), accepted with a warning where they cannot
 * here, refused where ignoring them would change placements. */
static int decode_other_top(struct dec *d, const char *key, json_t *val,
			    struct sched_config *cfg)
{
	static const char *const strings[] = {"healthzBindAddress",
					      "metricsBindAddress", NULL};
	static const char *const bools[] = {"enableProfiling",
					    "enableContentionProfiling",
					    "delayCacheUntilActive", NULL};
	int64_t v;
	int rc;
	if (strcmp(key, "parallelism") == 0 ||
	    strcmp(key, "podInitialBackoffSeconds") == 0 ||
	    strcmp(key, "podMaxBackoffSeconds") == 0) {
		if (!scfg_present(val))
			return 0;
		if ((rc = scfg_get_int(d, val, 1, INT32_MAX, &v)) != 0)
			return rc;
		if (strcmp(key, "parallelism") == 0) {
			cfg->parallelism = (int32_t)v;
			scfg_warn_at(d, "accepted, no effect: shmsched's workers are "
				"shmschedd --workers");
		} else if (strcmp(key, "podInitialBackoffSeconds") == 0) {
			/* The scheduling queue's (daemon/wait.c). */
			cfg->pod_initial_backoff_seconds = (int32_t)v;
		} else {
			cfg->pod_max_backoff_seconds = (int32_t)v;
		}
		return 0;
	}
	if (strcmp(key, "clientConnection") == 0 ||
	    strcmp(key, "leaderElection") == 0) {
		if (!scfg_present(val))
			return 0;
		rc = key[0] == 'c' ? decode_connection(d, val)
				   : decode_leader_election(d, val);
		if (rc == 0)
			scfg_warn_at(d, "accepted, no effect in shmsched (one daemon per "
				"state region; no API server connection)");
		return rc;
	}
	for (int i = 0; strings[i] != NULL; i++)
		if (strcmp(key, strings[i]) == 0) {
			if (scfg_present(val) && (rc = scfg_need_string(d, val)) != 0)
				return rc;
			scfg_warn_at(d, "accepted, no effect in shmsched");
			return 0;
		}
	for (int i = 0; bools[i] != NULL; i++)
		if (strcmp(key, bools[i]) == 0) {
			bool b;
			if (scfg_present(val) && (rc = scfg_get_bool(d, val, &b)) != 0)
				return rc;
			scfg_warn_at(d, "accepted, no effect in shmsched");
			return 0;
		}
	if (strcmp(key, "extenders") == 0) {
		if (scfg_present(val) && (rc = scfg_need_array(d, val)) != 0)
			return rc;
		/* An extender filters and scores over HTTP, per pod: shmsched
		 * cannot call one, and ignoring it would change placements. */
		if (scfg_present(val) && json_array_size(val) > 0)
			return scfg_fail(d, -EINVAL, "scheduler extenders are not supported "
				    "by shmsched (they would change placements)");
		return 0;
	}
	return scfg_unknown_field(d, key);
}

static int decode_root(struct dec *d, json_t *root, struct sched_config *cfg)
{
	char vb[SHOW_LEN];
	int64_t pct = 0;
	const char *key;
	json_t *val;
	int rc;
	if (root == NULL)
		return scfg_fail(d, -EINVAL, "empty; expected a " CONFIG_KIND);
	if (!json_is_object(root))
		return scfg_fail(d, -EINVAL, "%s is not a mapping; expected a "
			    CONFIG_KIND, scfg_show(root, vb, sizeof(vb)));
	rc = scfg_expect_const(d, root, "apiVersion", CONFIG_API_VERSION);
	if (rc == 0)
		rc = scfg_expect_const(d, root, "kind", CONFIG_KIND);
	if (rc != 0)
		return rc;
	int walk = 0;
	json_object_foreach(root, key, val) {
		size_t m = scfg_push_key(d, key, key);
		if (scfg_is_type_key(key))
			rc = 0;
		else if (strcmp(key, "percentageOfNodesToScore") == 0)
			rc = scfg_present(val) ? scfg_get_int(d, val, 0, 100, &pct) : 0;
		else if (strcmp(key, "profiles") == 0)
			rc = decode_profiles(d, val, cfg);
		else
			rc = decode_other_top(d, key, val, cfg);
		scfg_pop(d, m);
		if (scfg_failed(&walk, rc))
			return walk;
	}
	if (cfg->pod_initial_backoff_seconds > cfg->pod_max_backoff_seconds) {
		size_t m = scfg_push_key(d, scfg_key_anchor(root, "podInitialBackoffSeconds"),
				    "podInitialBackoffSeconds");
		rc = scfg_fail(d, -EINVAL, "%d is more than podMaxBackoffSeconds (%d)",
			  cfg->pod_initial_backoff_seconds,
			  cfg->pod_max_backoff_seconds);
		scfg_pop(d, m);
		scfg_failed(&walk, rc);
	}
	cfg->percentage_of_nodes_to_score = (int32_t)pct;
	return walk;
}
/* ---- public ------------------------------------------------------------ */

void sched_config_default(struct sched_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg)); /* padding too: configs compare by bytes */
	cfg->percentage_of_nodes_to_score = 0;
	cfg->n_profiles = 1;
	profile_default(&cfg->profiles[0]);
	cfg->parallelism = 16;
	cfg->pod_initial_backoff_seconds = 1;
	cfg->pod_max_backoff_seconds = 10;
}

int sched_config_load_buffer(const char *name, const char *buf, size_t len,
			     struct sched_config *cfg, struct res_names *res,
			     struct intern *strings, char *err, size_t err_len)
{
	struct line_table lines = {0};
	struct dec d = {
		.in = {.source = name ? name : "(config)", .err = err, .err_len = err_len,
		       .max_lines = SCHED_CONFIG_ERRORS_MAX},
		.lines = &lines,
		.res = res,
		.strings = strings,
	};
	struct sched_config *next = NULL;
	struct res_names saved;
	struct intern_mark mark;
	json_t *root = NULL;
	int rc;
	if (err != NULL && err_len > 0)
		err[0] = '\0';
	if (cfg == NULL || res == NULL || (buf == NULL && len > 0))
		return scfg_fail_line(&d, 0, -EINVAL, "no configuration or registry given");
	if (buf == NULL)
		buf = "";

	rc = scfg_parse_tree(&d, &lines, buf, len, &root);
	if (rc != 0)
		goto fail_parse;
	/* On the heap: a config is some 40 KiB. */
	next = malloc(sizeof(*next));
	if (next == NULL) {
		rc = scfg_fail_line(&d, 0, -ENOMEM, "out of memory");
		goto fail_alloc;
	}
	sched_config_default(next);
	memcpy(&saved, res, sizeof(saved));
	if (strings != NULL)
		intern_mark(strings, &mark);
	rc = decode_root(&d, root, next);
	if (rc != 0) {
		if (d.in.n_dropped > 0 && err != NULL && err_len > 0)
			scfg_appendf(err, err_len, &d.in.err_pos, "\n(and %u more error%s)",
				d.in.n_dropped, d.in.n_dropped == 1 ? "" : "s");
		goto fail_decode;
	}
	memcpy(cfg, next, sizeof(*next));
	free(next);
	json_decref(root);
	free(lines.v);
	return 0;

fail_decode:
	/* Nothing of a refused file stays: no reader has seen its strings. */
	if (strings != NULL)
		intern_rollback(strings, &mark);
	memcpy(res, &saved, sizeof(saved));
	free(next);
fail_alloc:
	json_decref(root);
fail_parse:
	free(lines.v);
	return rc;
}

int sched_config_load(const char *path, struct sched_config *cfg,
		      struct res_names *res, struct intern *strings, char *err,
		      size_t err_len)
{
	struct dec d = {.in = {.source = path ? path : "(config)", .err = err,
			       .err_len = err_len, .max_lines = SCHED_CONFIG_ERRORS_MAX}};
	size_t len = 0;
	int rc;
	if (path == NULL)
		return scfg_fail_line(&d, 0, -EINVAL, "no file name given");
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		return scfg_fail_line(&d, 0, rc, "cannot open: %s", strerror(-rc));
	}
	/* One allocation of the cap: read() tells the size, also for pipes. */
	char *buf = malloc(SCHED_CONFIG_FILE_MAX + 1);
	if (buf == NULL) {
		rc = scfg_fail_line(&d, 0, -ENOMEM, "out of memory");
		goto fail_alloc;
	}
	while (len <= SCHED_CONFIG_FILE_MAX) {
		ssize_t n = read(fd, buf + len, SCHED_CONFIG_FILE_MAX + 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = -errno;
			rc = scfg_fail_line(&d, 0, rc, "cannot read: %s", strerror(-rc));
			goto fail_read;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	if (len > SCHED_CONFIG_FILE_MAX) {
		rc = scfg_fail_line(&d, 0, -EFBIG, "larger than %u bytes",
			       SCHED_CONFIG_FILE_MAX);
		goto fail_read;
	}
	rc = sched_config_load_buffer(path, buf, len, cfg, res, strings, err,
				      err_len);

fail_read:
	free(buf);
fail_alloc:
	close(fd);
	return rc;
}
