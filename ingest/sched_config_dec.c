/* KubeSchedulerConfiguration reader: the decoder (struct dec) every
 * stage reports through, the floor of the reader (it calls no other file
 * of it; sched_config_internal.h; the design note is sched_config_load.c's):
 * messages at the decoder's path with the line of the innermost node
 * recorded, up to SCHED_CONFIG_ERRORS_MAX of them (the path and the error
 * lines are the strict JSON core's, base/json_in.h, as the Kubernetes
 * decoder's), and typed access to the tree's values, each refusal naming
 * the path and the value. */
#include "ingest/sched_config.h"
#include "ingest/sched_config_internal.h"

#include "base/base.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "shm/shm.h"

/* ---- messages ---------------------------------------------------------- */

/* One message, before json_in puts the name, line and path in front of
 * it: longer than any the reader writes (values are shown cut at
 * SHOW_LEN bytes, lists and reasons are built in 512-byte buffers). */
#define FAIL_MSG_MAX 1024

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


__attribute__((format(printf, 4, 5)))
void scfg_appendf(char *buf, size_t len, size_t *pos, const char *fmt, ...)
{
	if (len == 0 || *pos >= len - 1)
		return;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf + *pos, len - *pos, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	*pos += (size_t)n;
	if (*pos > len - 1)
		*pos = len - 1; /* truncated */
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

/* An error at a known input line (parsing): json_in's error line, the
 * source read "<name>:<line>" (line 0: none known). */
__attribute__((format(printf, 4, 5)))
int scfg_fail_line(struct dec *d, unsigned line, int rc, const char *fmt, ...)
{
	char msg[FAIL_MSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	d->in.line = line;
	rc = json_in_fail(&d->in, rc, "%s", msg);
	d->in.line = 0;
	return rc;
}

/* The line of the innermost step of the path that has one recorded. */
static unsigned path_line(const struct dec *d)
{
	unsigned line = 0;
	unsigned top = d->depth < FIELD_DEPTH_MAX ? d->depth : FIELD_DEPTH_MAX;
	while (top > 0 && line == 0)
		line = lines_find(d->lines, d->anchor[--top]);
	return line;
}

/* An error at the decoder's current path. */
__attribute__((format(printf, 3, 4)))
int scfg_fail(struct dec *d, int rc, const char *fmt, ...)
{
	char msg[FAIL_MSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	d->in.line = path_line(d);
	rc = json_in_fail(&d->in, rc, "%s", msg);
	d->in.line = 0;
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
	unsigned line = path_line(d);
	if (line > 0)
		log_msg(LOG_LEVEL_WARN, "%s:%u: %s: %s", d->in.source, line, d->in.path, msg);
	else
		log_msg(LOG_LEVEL_WARN, "%s: %s: %s", d->in.source, d->in.path, msg);
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
	size_t old = json_in_field(&d->in, key);
	if (d->depth < FIELD_DEPTH_MAX)
		d->anchor[d->depth] = anchor;
	d->depth++;
	return old;
}

size_t scfg_push_index(struct dec *d, const json_t *elem, size_t i)
{
	size_t old = json_in_index(&d->in, i);
	if (d->depth < FIELD_DEPTH_MAX)
		d->anchor[d->depth] = elem;
	d->depth++;
	return old;
}

void scfg_pop(struct dec *d, size_t old)
{
	json_in_pop(&d->in, old);
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

bool scfg_is_one_of(const char *s, size_t n, const char *const *words)
{
	for (; *words != NULL; words++)
		if (strlen(*words) == n && memcmp(*words, s, n) == 0)
			return true;
	return false;
}
