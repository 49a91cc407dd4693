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
 * Files (sched_config_internal.h names what each shares): this one holds
 * the messages, typed access to values, profiles, the rest of the v1 type
 * and the entry points; stage (1) is sched_config_yaml.c.
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

/* ---- messages ---------------------------------------------------------- */

/* Best effort: a failed allocation only loses a line number. */
void scfg_lines_add(struct line_table *t, const void *at, unsigned line)
{
	if (t == NULL || at == NULL)
		return;
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		struct line_mark *v = realloc(t->v, cap * sizeof(*v));
		if (v == NULL)
			return;
		t->v = v;
		t->cap = cap;
	}
	t->v[t->n++] = (struct line_mark){.at = at, .line = line};
}

static unsigned lines_find(const struct line_table *t, const void *at)
{
	if (t == NULL || at == NULL)
		return 0;
	for (size_t i = 0; i < t->n; i++)
		if (t->v[i].at == at)
			return t->v[i].line;
	return 0;
}


static void vappendf(char *buf, size_t len, size_t *pos, const char *fmt,
		     va_list ap) __attribute__((format(printf, 4, 0)));

static void vappendf(char *buf, size_t len, size_t *pos, const char *fmt,
		     va_list ap)
{
	if (len == 0 || *pos >= len - 1)
		return;
	int n = vsnprintf(buf + *pos, len - *pos, fmt, ap);
	if (n < 0)
		return;
	*pos += (size_t)n;
	if (*pos > len - 1)
		*pos = len - 1; /* truncated */
}

__attribute__((format(printf, 4, 5)))
void scfg_appendf(char *buf, size_t len, size_t *pos, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vappendf(buf, len, pos, fmt, ap);
	va_end(ap);
}

__attribute__((format(printf, 4, 0)))
static int vfail_line(struct dec *d, unsigned line, int rc, const char *fmt,
		      va_list ap)
{
	if (d->n_errors >= SCHED_CONFIG_ERRORS_MAX) {
		d->n_dropped++;
		return rc;
	}
	d->n_errors++;
	if (d->err == NULL || d->err_len == 0)
		return rc;
	size_t pos = d->err_pos;
	if (pos > 0)
		scfg_appendf(d->err, d->err_len, &pos, "\n");
	if (line > 0)
		scfg_appendf(d->err, d->err_len, &pos, "%s:%u: ", d->name, line);
	else
		scfg_appendf(d->err, d->err_len, &pos, "%s: ", d->name);
	if (d->path_len > 0)
		scfg_appendf(d->err, d->err_len, &pos, "%s: ", d->path);
	vappendf(d->err, d->err_len, &pos, fmt, ap);
	d->err_pos = pos;
	return rc;
}

/* Folds one step's result into a walk's: the walk's result is its first
 * error, and the walk goes on with the next sibling (the error's message
 * is written) unless memory ran out. True: stop. */
bool scfg_failed(int *walk_rc, int rc)
{
	if (rc != 0 && *walk_rc == 0)
		*walk_rc = rc;
	return rc == -ENOMEM;
}

/* An error at a known input line (parsing). */
__attribute__((format(printf, 4, 5)))
int scfg_fail_line(struct dec *d, unsigned line, int rc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	rc = vfail_line(d, line, rc, fmt, ap);
	va_end(ap);
	return rc;
}

/* An error at the decoder's current path. */
__attribute__((format(printf, 3, 4)))
int scfg_fail(struct dec *d, int rc, const char *fmt, ...)
{
	unsigned line = 0;
	unsigned top = d->depth < FIELD_DEPTH_MAX ? d->depth : FIELD_DEPTH_MAX;
	while (top > 0 && line == 0)
		line = lines_find(d->lines, d->anchor[--top]);
	va_list ap;
	va_start(ap, fmt);
	rc = vfail_line(d, line, rc, fmt, ap);
	va_end(ap);
	return rc;
}

/* A warning at the decoder's current path, with its line: a field
 * accepted with no effect, a name that means nothing. */
__attribute__((format(printf, 2, 3)))
void scfg_warn_at(struct dec *d, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	unsigned line = 0;
	unsigned top = d->depth < FIELD_DEPTH_MAX ? d->depth : FIELD_DEPTH_MAX;
	while (top > 0 && line == 0)
		line = lines_find(d->lines, d->anchor[--top]);
	if (line > 0)
		log_msg(LOG_LEVEL_WARN, "%s:%u: %s: %s", d->name, line, d->path, msg);
	else
		log_msg(LOG_LEVEL_WARN, "%s: %s: %s", d->name, d->path, msg);
}

/* A key the v1 type does not have, named as kube-scheduler names it. */
int scfg_unknown_field(struct dec *d, const char *key)
{
	return scfg_fail(d, -EINVAL, "unknown field \"%s\"", key);
}

/* A value as JSON text, shortened, for messages. */
const char *scfg_show(const json_t *v, char *buf, size_t len)
{
	char *s = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
	if (s == NULL) {
		snprintf(buf, len, "(a value)");
		return buf;
	}
	if (strlen(s) < len)
		snprintf(buf, len, "%s", s);
	else
		snprintf(buf, len, "%.*s...", (int)(len - 4), s);
	free(s);
	return buf;
}

size_t scfg_push_key(struct dec *d, const void *anchor, const char *key)
{
	size_t old = d->path_len;
	scfg_appendf(d->path, sizeof(d->path), &d->path_len, old ? ".%s" : "%s", key);
	if (d->depth < FIELD_DEPTH_MAX)
		d->anchor[d->depth] = anchor;
	d->depth++;
	return old;
}

size_t scfg_push_index(struct dec *d, const json_t *elem, size_t i)
{
	size_t old = d->path_len;
	scfg_appendf(d->path, sizeof(d->path), &d->path_len, "[%zu]", i);
	if (d->depth < FIELD_DEPTH_MAX)
		d->anchor[d->depth] = elem;
	d->depth++;
	return old;
}

void scfg_pop(struct dec *d, size_t old)
{
	d->path_len = old;
	d->path[old] = '\0';
	d->depth--;
}
/* ---- the decoder: values ----------------------------------------------- */

bool scfg_present(const json_t *v)
{
	return v != NULL && !json_is_null(v);
}

bool scfg_str_is(const json_t *v, const char *lit)
{
	size_t n = strlen(lit);
	return json_is_string(v) && json_string_length(v) == n &&
	       memcmp(json_string_value(v), lit, n) == 0;
}

const char *scfg_key_anchor(json_t *obj, const char *key)
{
	void *it = json_object_iter_at(obj, key);
	return it ? json_object_iter_key(it) : NULL;
}

int scfg_not_supported(struct dec *d)
{
	return scfg_fail(d, -EINVAL, "not supported by shmsched");
}

int scfg_need_object(struct dec *d, const json_t *v)
{
	char vb[SHOW_LEN];
	if (json_is_object(v))
		return 0;
	return scfg_fail(d, -EINVAL, "%s is not a mapping", scfg_show(v, vb, sizeof(vb)));
}

int scfg_need_array(struct dec *d, const json_t *v)
{
	char vb[SHOW_LEN];
	if (json_is_array(v))
		return 0;
	return scfg_fail(d, -EINVAL, "%s is not a list", scfg_show(v, vb, sizeof(vb)));
}

int scfg_need_string(struct dec *d, const json_t *v)
{
	char vb[SHOW_LEN];
	if (json_is_string(v))
		return 0;
	return scfg_fail(d, -EINVAL, "%s is not a string", scfg_show(v, vb, sizeof(vb)));
}

/* Every member of `obj` whose key is not in `known` (NULL-terminated) is an
 * unknown field, as kube-scheduler's strict decoding names it. */
int scfg_only_known(struct dec *d, json_t *obj, const char *const *known)
{
	const char *key;
	json_t *val;
	int walk = 0;
	json_object_foreach(obj, key, val) {
		const char *const *k = known;
		while (*k != NULL && strcmp(*k, key) != 0)
			k++;
		if (*k != NULL)
			continue;
		size_t m = scfg_push_key(d, key, key);
		scfg_failed(&walk, scfg_unknown_field(d, key));
		scfg_pop(d, m);
	}
	return walk;
}

int scfg_get_int(struct dec *d, const json_t *v, int64_t lo, int64_t hi,
		   int64_t *out)
{
	char vb[SHOW_LEN];
	if (!json_is_integer(v))
		return scfg_fail(d, -EINVAL, "%s is not an integer",
			    scfg_show(v, vb, sizeof(vb)));
	json_int_t x = json_integer_value(v);
	if (x < lo || x > hi)
		return scfg_fail(d, -ERANGE, "%s is not in %lld..%lld",
			    scfg_show(v, vb, sizeof(vb)), (long long)lo, (long long)hi);
	*out = (int64_t)x;
	return 0;
}

int scfg_get_bool(struct dec *d, const json_t *v, bool *out)
{
	char vb[SHOW_LEN];
	if (!json_is_boolean(v))
		return scfg_fail(d, -EINVAL, "%s is not true or false",
			    scfg_show(v, vb, sizeof(vb)));
	*out = json_is_true(v);
	return 0;
}

/* obj[key] must be the string `want`. */
int scfg_expect_const(struct dec *d, json_t *obj, const char *key,
			const char *want)
{
	char vb[SHOW_LEN];
	json_t *v = json_object_get(obj, key);
	int rc = 0;
	size_t m = scfg_push_key(d, scfg_key_anchor(obj, key), key);
	if (!scfg_present(v))
		rc = scfg_fail(d, -EINVAL, "missing; expected %s", want);
	else if (!scfg_str_is(v, want))
		rc = scfg_fail(d, -EINVAL, "%s is not %s", scfg_show(v, vb, sizeof(vb)), want);
	scfg_pop(d, m);
	return rc;
}

/* A {name: ..., ...} entry's name: a non-empty string without NUL. */
int scfg_get_name(struct dec *d, json_t *obj, const char *what,
		    const char **name, size_t *len)
{
	char vb[SHOW_LEN];
	json_t *v = json_object_get(obj, "name");
	int rc = 0;
	size_t m = scfg_push_key(d, scfg_key_anchor(obj, "name"), "name");
	if (!scfg_present(v)) {
		rc = scfg_fail(d, -EINVAL, "missing; expected %s", what);
	} else if (!json_is_string(v) || json_string_length(v) == 0 ||
		   strlen(json_string_value(v)) != json_string_length(v)) {
		rc = scfg_fail(d, -EINVAL, "%s is not %s", scfg_show(v, vb, sizeof(vb)), what);
	} else {
		*name = json_string_value(v);
		*len = json_string_length(v);
	}
	scfg_pop(d, m);
	return rc;
}

bool scfg_is_type_key(const char *key)
{
	return strcmp(key, "apiVersion") == 0 || strcmp(key, "kind") == 0;
}

/* A plugin's args: a mapping whose apiVersion and kind, when given, are
 * v1's and `kind`. */
int scfg_check_args(struct dec *d, json_t *args, const char *kind)
{
	int rc = scfg_need_object(d, args);
	if (rc == 0 && json_object_get(args, "apiVersion") != NULL)
		rc = scfg_expect_const(d, args, "apiVersion", CONFIG_API_VERSION);
	if (rc == 0 && json_object_get(args, "kind") != NULL)
		rc = scfg_expect_const(d, args, "kind", kind);
	return rc;
}

/* apimachinery's IsQualifiedName (a label key): an optional DNS-subdomain
 * prefix and '/', then 1..63 of [A-Za-z0-9-_.], alphanumeric at both
 * ends. */
static bool is_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9');
}

bool scfg_is_qualified_name(const char *s, size_t n)
{
	const char *slash = memchr(s, '/', n);
	if (slash != NULL) {
		size_t p = (size_t)(slash - s);
		if (p == 0 || p > 253)
			return false;
		for (size_t i = 0; i < p; i++) {
			char c = s[i];
			bool edge = i == 0 || i == p - 1;
			if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
			      (!edge && (c == '-' || c == '.'))))
				return false;
		}
		s = slash + 1;
		n -= p + 1;
	}
	if (n == 0 || n > 63 || !is_alnum(s[0]) || !is_alnum(s[n - 1]))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!is_alnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
			return false;
	return true;
}

/* A string interned into the load's table. */
int scfg_intern_value(struct dec *d, const json_t *v, uint32_t *id)
{
	if (d->strings == NULL)
		return scfg_fail(d, -EINVAL, "cannot be read here (no string table given)");
	int rc = intern_add(d->strings, json_string_value(v), json_string_length(v),
			    id);
	if (rc < 0)
		return scfg_fail(d, rc, "cannot be stored: %s", strerror(-rc));
	return 0;
}
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
		.name = name ? name : "(config)",
		.err = err,
		.err_len = err_len,
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
		if (d.n_dropped > 0 && err != NULL && err_len > 0)
			scfg_appendf(err, err_len, &d.err_pos, "\n(and %u more error%s)",
				d.n_dropped, d.n_dropped == 1 ? "" : "s");
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
	struct dec d = {.name = path ? path : "(config)", .err = err,
			.err_len = err_len};
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
