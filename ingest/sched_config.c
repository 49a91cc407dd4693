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
 * setting shmsched does not implement is never silently ignored.
 *
 * Invariants: `cfg` and `res` are changed only on success (the decoder
 * fills a copy of the defaults; the resource registry is restored from a
 * snapshot on failure). Every failure writes one message to `err`:
 * "<name>[:<line>]: <field path>: <what was found and expected>".
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

#include "base/base.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>
#include <yaml.h>

#include "shm/shm.h"

#define CONFIG_API_VERSION "kubescheduler.config.k8s.io/v1"
#define CONFIG_KIND "KubeSchedulerConfiguration"
#define SCHED_CONFIG_FILE_MAX (1u << 20)
#define YAML_DEPTH_MAX 64
#define FIELD_PATH_LEN 256
#define FIELD_DEPTH_MAX 16
#define SHOW_LEN 96
#define WEIGHT_MAX 100

/* ---- messages ---------------------------------------------------------- */

struct line_mark {
	const void *at; /* a json_t, or a key's storage inside its object */
	unsigned line;
};

struct line_table {
	struct line_mark *v;
	size_t n, cap;
};

/* Best effort: a failed allocation only loses a line number. */
static void lines_add(struct line_table *t, const void *at, unsigned line)
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

/* The decoder's state: where it is in the tree, for messages. */
struct dec {
	const char *name;
	char *err;
	size_t err_len;
	const struct line_table *lines;
	struct res_names *res;
	char path[FIELD_PATH_LEN];
	size_t path_len;
	const void *anchor[FIELD_DEPTH_MAX];
	unsigned depth;
};

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
static void appendf(char *buf, size_t len, size_t *pos, const char *fmt, ...)
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
	size_t pos = 0;
	if (d->err == NULL || d->err_len == 0)
		return rc;
	d->err[0] = '\0';
	if (line > 0)
		appendf(d->err, d->err_len, &pos, "%s:%u: ", d->name, line);
	else
		appendf(d->err, d->err_len, &pos, "%s: ", d->name);
	if (d->path_len > 0)
		appendf(d->err, d->err_len, &pos, "%s: ", d->path);
	vappendf(d->err, d->err_len, &pos, fmt, ap);
	return rc;
}

/* An error at a known input line (parsing). */
__attribute__((format(printf, 4, 5)))
static int fail_line(struct dec *d, unsigned line, int rc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	rc = vfail_line(d, line, rc, fmt, ap);
	va_end(ap);
	return rc;
}

/* An error at the decoder's current path. */
__attribute__((format(printf, 3, 4)))
static int fail(struct dec *d, int rc, const char *fmt, ...)
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

/* A field accepted with no effect: one warning naming it, with its line. */
static void warn_no_effect(struct dec *d, const char *why)
{
	unsigned line = 0;
	unsigned top = d->depth < FIELD_DEPTH_MAX ? d->depth : FIELD_DEPTH_MAX;
	while (top > 0 && line == 0)
		line = lines_find(d->lines, d->anchor[--top]);
	if (line > 0)
		log_msg(LOG_LEVEL_WARN, "%s:%u: %s: accepted, %s", d->name, line,
			d->path, why);
	else
		log_msg(LOG_LEVEL_WARN, "%s: %s: accepted, %s", d->name, d->path, why);
}

/* A key the v1 type does not have, named as kube-scheduler names it. */
static int unknown_field(struct dec *d, const char *key)
{
	return fail(d, -EINVAL, "unknown field \"%s\"", key);
}

/* A value as JSON text, shortened, for messages. */
static const char *show(const json_t *v, char *buf, size_t len)
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

static size_t push_key(struct dec *d, const void *anchor, const char *key)
{
	size_t old = d->path_len;
	appendf(d->path, sizeof(d->path), &d->path_len, old ? ".%s" : "%s", key);
	if (d->depth < FIELD_DEPTH_MAX)
		d->anchor[d->depth] = anchor;
	d->depth++;
	return old;
}

static size_t push_index(struct dec *d, const json_t *elem, size_t i)
{
	size_t old = d->path_len;
	appendf(d->path, sizeof(d->path), &d->path_len, "[%zu]", i);
	if (d->depth < FIELD_DEPTH_MAX)
		d->anchor[d->depth] = elem;
	d->depth++;
	return old;
}

static void pop(struct dec *d, size_t old)
{
	d->path_len = old;
	d->path[old] = '\0';
	d->depth--;
}

/* ---- YAML to a jansson tree -------------------------------------------- */

struct yaml_in {
	yaml_parser_t parser;
	struct dec *d;
	struct line_table *lines;
};

static unsigned mark_line(const yaml_mark_t *m)
{
	return (unsigned)m->line + 1;
}

static int yaml_next(struct yaml_in *y, yaml_event_t *ev)
{
	if (yaml_parser_parse(&y->parser, ev))
		return 0;
	const yaml_parser_t *p = &y->parser;
	if (p->error == YAML_MEMORY_ERROR)
		return fail_line(y->d, 0, -ENOMEM, "out of memory reading YAML");
	const char *problem = p->problem ? p->problem : "not valid YAML";
	if (p->context != NULL)
		return fail_line(y->d, mark_line(&p->problem_mark), -EINVAL,
				 "%s: %s", p->context, problem);
	return fail_line(y->d, mark_line(&p->problem_mark), -EINVAL, "%s",
			 problem);
}

static bool all_digits(const char *s, size_t n)
{
	if (n == 0)
		return false;
	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

static bool is_yaml_int(const char *s, size_t n)
{
	if (n > 0 && (s[0] == '-' || s[0] == '+'))
		return all_digits(s + 1, n - 1);
	return all_digits(s, n);
}

/* [-+]? ( .digits | digits [. digits?] ) ( [eE] [-+]? digits )? with a '.'
 * or an exponent (else it was an integer). */
static bool is_yaml_float(const char *s, size_t n)
{
	size_t i = 0, int_digits = 0, frac_digits = 0;
	bool dot = false, exp = false;
	if (i < n && (s[i] == '-' || s[i] == '+'))
		i++;
	while (i < n && s[i] >= '0' && s[i] <= '9')
		i++, int_digits++;
	if (i < n && s[i] == '.') {
		dot = true;
		i++;
		while (i < n && s[i] >= '0' && s[i] <= '9')
			i++, frac_digits++;
	}
	if (int_digits + frac_digits == 0)
		return false;
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		exp = true;
		i++;
		if (i < n && (s[i] == '-' || s[i] == '+'))
			i++;
		if (!all_digits(s + i, n - i))
			return false;
		i = n;
	}
	return i == n && (dot || exp);
}

static bool is_one_of(const char *s, size_t n, const char *const *words)
{
	for (; *words != NULL; words++)
		if (strlen(*words) == n && memcmp(*words, s, n) == 0)
			return true;
	return false;
}

/* A plain scalar's value by the (reduced) core schema. `s` is
 * NUL-terminated by libyaml and holds no NUL (the reader refuses them). */
static json_t *yaml_plain(const char *s, size_t n)
{
	static const char *const nulls[] = {"", "~", "null", "Null", "NULL", NULL};
	static const char *const trues[] = {"true", "True", "TRUE", NULL};
	static const char *const falses[] = {"false", "False", "FALSE", NULL};
	if (is_one_of(s, n, nulls))
		return json_null();
	if (is_one_of(s, n, trues))
		return json_true();
	if (is_one_of(s, n, falses))
		return json_false();
	if (is_yaml_int(s, n)) {
		errno = 0;
		long long v = strtoll(s, NULL, 10);
		/* Out of range: left a string, so the decoder names it. */
		if (errno == 0)
			return json_integer(v);
	} else if (is_yaml_float(s, n)) {
		double v = strtod(s, NULL);
		if (isfinite(v))
			return json_real(v);
	}
	return json_stringn(s, n);
}

static int yaml_scalar(struct yaml_in *y, const yaml_event_t *ev, json_t **out)
{
	unsigned line = mark_line(&ev->start_mark);
	const char *s = (const char *)ev->data.scalar.value;
	size_t n = ev->data.scalar.length;
	const char *tag = (const char *)ev->data.scalar.tag;
	bool plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
	if (tag != NULL) {
		if (strcmp(tag, YAML_STR_TAG) != 0 && strcmp(tag, "!") != 0)
			return fail_line(y->d, line, -EINVAL,
					 "YAML tag %s is not supported (only !!str)",
					 tag);
		plain = false;
	}
	json_t *v = plain ? yaml_plain(s, n) : json_stringn(s, n);
	if (v == NULL)
		return fail_line(y->d, line, -EINVAL,
				 "a scalar is not valid UTF-8 or memory ran out");
	if (!json_is_null(v) && !json_is_boolean(v))
		lines_add(y->lines, v, line); /* not the shared singletons */
	*out = v;
	return 0;
}

static int yaml_node(struct yaml_in *y, yaml_event_t *ev, unsigned depth,
		     json_t **out);

static int yaml_sequence(struct yaml_in *y, unsigned line, unsigned depth,
			 json_t **out)
{
	int rc;
	json_t *arr = json_array();
	if (arr == NULL)
		return fail_line(y->d, line, -ENOMEM, "out of memory");
	lines_add(y->lines, arr, line);
	for (;;) {
		yaml_event_t ev;
		rc = yaml_next(y, &ev);
		if (rc != 0)
			goto fail_event;
		if (ev.type == YAML_SEQUENCE_END_EVENT) {
			yaml_event_delete(&ev);
			break;
		}
		json_t *v;
		rc = yaml_node(y, &ev, depth + 1, &v);
		if (rc != 0)
			goto fail_event;
		if (json_array_append_new(arr, v) != 0) {
			rc = fail_line(y->d, line, -ENOMEM, "out of memory");
			goto fail_event;
		}
	}
	*out = arr;
	return 0;

fail_event:
	json_decref(arr);
	return rc;
}

static int yaml_mapping(struct yaml_in *y, unsigned line, unsigned depth,
			json_t **out)
{
	yaml_event_t key, val;
	int rc;
	json_t *obj = json_object();
	if (obj == NULL)
		return fail_line(y->d, line, -ENOMEM, "out of memory");
	lines_add(y->lines, obj, line);
	for (;;) {
		rc = yaml_next(y, &key);
		if (rc != 0)
			goto fail_key;
		if (key.type == YAML_MAPPING_END_EVENT) {
			yaml_event_delete(&key);
			break;
		}
		unsigned key_line = mark_line(&key.start_mark);
		if (key.type != YAML_SCALAR_EVENT || key.data.scalar.anchor != NULL ||
		    (key.data.scalar.tag != NULL &&
		     strcmp((const char *)key.data.scalar.tag, YAML_STR_TAG) != 0)) {
			rc = fail_line(y->d, key_line, -EINVAL,
				       "a mapping key must be a plain string");
			goto fail_key_event;
		}
		const char *k = (const char *)key.data.scalar.value;
		if (strlen(k) != key.data.scalar.length) {
			rc = fail_line(y->d, key_line, -EINVAL,
				       "a mapping key holds a NUL character");
			goto fail_key_event;
		}
		if (json_object_get(obj, k) != NULL) {
			rc = fail_line(y->d, key_line, -EINVAL,
				       "duplicate key \"%s\"", k);
			goto fail_key_event;
		}
		rc = yaml_next(y, &val);
		if (rc != 0)
			goto fail_key_event;
		json_t *v;
		rc = yaml_node(y, &val, depth + 1, &v);
		if (rc != 0)
			goto fail_key_event;
		if (json_object_set_new(obj, k, v) != 0) {
			rc = fail_line(y->d, key_line, -ENOMEM,
				       "cannot store key (out of memory or not UTF-8)");
			goto fail_key_event;
		}
		lines_add(y->lines, json_object_iter_key(json_object_iter_at(obj, k)),
			  key_line);
		yaml_event_delete(&key);
	}
	*out = obj;
	return 0;

fail_key_event:
	yaml_event_delete(&key);
fail_key:
	json_decref(obj);
	return rc;
}

/* Builds the node that `ev` opens; takes `ev` over and deletes it. */
static int yaml_node(struct yaml_in *y, yaml_event_t *ev, unsigned depth,
		     json_t **out)
{
	unsigned line = mark_line(&ev->start_mark);
	const yaml_char_t *anchor = NULL, *tag = NULL;
	int rc;
	*out = NULL;
	switch (ev->type) {
	case YAML_SCALAR_EVENT:
		anchor = ev->data.scalar.anchor;
		break;
	case YAML_SEQUENCE_START_EVENT:
		anchor = ev->data.sequence_start.anchor;
		tag = ev->data.sequence_start.tag;
		if (tag != NULL && strcmp((const char *)tag, YAML_SEQ_TAG) == 0)
			tag = NULL;
		break;
	case YAML_MAPPING_START_EVENT:
		anchor = ev->data.mapping_start.anchor;
		tag = ev->data.mapping_start.tag;
		if (tag != NULL && strcmp((const char *)tag, YAML_MAP_TAG) == 0)
			tag = NULL;
		break;
	case YAML_ALIAS_EVENT:
		rc = fail_line(y->d, line, -EINVAL,
			       "YAML aliases (*%s) are not supported",
			       (const char *)ev->data.alias.anchor);
		goto done;
	case YAML_NO_EVENT:
	case YAML_STREAM_START_EVENT:
	case YAML_STREAM_END_EVENT:
	case YAML_DOCUMENT_START_EVENT:
	case YAML_DOCUMENT_END_EVENT:
	case YAML_SEQUENCE_END_EVENT:
	case YAML_MAPPING_END_EVENT:
	default:
		rc = fail_line(y->d, line, -EINVAL, "unexpected YAML structure");
		goto done;
	}
	if (anchor != NULL) {
		rc = fail_line(y->d, line, -EINVAL,
			       "YAML anchors (&%s) are not supported",
			       (const char *)anchor);
		goto done;
	}
	if (tag != NULL) {
		rc = fail_line(y->d, line, -EINVAL, "YAML tag %s is not supported",
			       (const char *)tag);
		goto done;
	}
	if (ev->type != YAML_SCALAR_EVENT && depth >= YAML_DEPTH_MAX) {
		rc = fail_line(y->d, line, -EINVAL, "nested deeper than %d levels",
			       YAML_DEPTH_MAX);
		goto done;
	}
	if (ev->type == YAML_SCALAR_EVENT)
		rc = yaml_scalar(y, ev, out);
	else if (ev->type == YAML_SEQUENCE_START_EVENT)
		rc = yaml_sequence(y, line, depth, out);
	else
		rc = yaml_mapping(y, line, depth, out);
done:
	yaml_event_delete(ev);
	return rc;
}

/* One document or none (*root NULL); a second one is an error. */
static int yaml_load(struct dec *d, struct line_table *lines, const char *buf,
		     size_t len, json_t **root)
{
	struct yaml_in y = {.d = d, .lines = lines};
	yaml_event_t ev;
	json_t *tree = NULL;
	int rc;
	if (!yaml_parser_initialize(&y.parser))
		return fail_line(d, 0, -ENOMEM, "out of memory");
	yaml_parser_set_input_string(&y.parser, (const unsigned char *)buf, len);

	rc = yaml_next(&y, &ev); /* stream start */
	if (rc != 0)
		goto fail_parse;
	yaml_event_delete(&ev);
	rc = yaml_next(&y, &ev);
	if (rc != 0)
		goto fail_parse;
	if (ev.type == YAML_STREAM_END_EVENT) {
		yaml_event_delete(&ev);
		goto done; /* empty */
	}
	yaml_event_delete(&ev); /* document start */
	rc = yaml_next(&y, &ev);
	if (rc != 0)
		goto fail_parse;
	rc = yaml_node(&y, &ev, 0, &tree);
	if (rc != 0)
		goto fail_parse;
	rc = yaml_next(&y, &ev); /* document end */
	if (rc != 0)
		goto fail_parse;
	yaml_event_delete(&ev);
	rc = yaml_next(&y, &ev);
	if (rc != 0)
		goto fail_parse;
	if (ev.type != YAML_STREAM_END_EVENT) {
		rc = fail_line(d, mark_line(&ev.start_mark), -EINVAL,
			       "a second YAML document; shmsched reads one "
			       "KubeSchedulerConfiguration per file");
		yaml_event_delete(&ev);
		goto fail_parse;
	}
	yaml_event_delete(&ev);
done:
	yaml_parser_delete(&y.parser);
	*root = tree;
	return 0;

fail_parse:
	json_decref(tree);
	yaml_parser_delete(&y.parser);
	return rc;
}

static int parse_tree(struct dec *d, struct line_table *lines, const char *buf,
		      size_t len, json_t **root)
{
	size_t i = 0;
	while (i < len && (buf[i] == ' ' || buf[i] == '\t' || buf[i] == '\r' ||
			   buf[i] == '\n'))
		i++;
	if (i < len && buf[i] == '{') {
		json_error_t jerr;
		json_t *tree = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
		if (tree != NULL) {
			*root = tree;
			return 0;
		}
		/* Perhaps a YAML flow mapping; if not, the JSON error is the
		 * one the author wants to see. */
		char discard[8];
		struct dec quiet = {.name = d->name, .err = discard,
				    .err_len = sizeof(discard)};
		if (yaml_load(&quiet, lines, buf, len, root) == 0)
			return 0;
		lines->n = 0;
		return fail_line(d, jerr.line > 0 ? (unsigned)jerr.line : 0,
				 -EINVAL, "%s", jerr.text);
	}
	return yaml_load(d, lines, buf, len, root);
}

/* ---- the decoder ------------------------------------------------------- */

static bool present(const json_t *v)
{
	return v != NULL && !json_is_null(v);
}

static bool str_is(const json_t *v, const char *lit)
{
	size_t n = strlen(lit);
	return json_is_string(v) && json_string_length(v) == n &&
	       memcmp(json_string_value(v), lit, n) == 0;
}

static const char *key_anchor(json_t *obj, const char *key)
{
	void *it = json_object_iter_at(obj, key);
	return it ? json_object_iter_key(it) : NULL;
}

static int not_supported(struct dec *d)
{
	return fail(d, -EINVAL, "not supported by shmsched");
}

static int need_object(struct dec *d, const json_t *v)
{
	char vb[SHOW_LEN];
	if (json_is_object(v))
		return 0;
	return fail(d, -EINVAL, "%s is not a mapping", show(v, vb, sizeof(vb)));
}

/* Refuses the first member of `obj` other than `a` and `b`, by its path. */
static int only_keys(struct dec *d, json_t *obj, const char *a, const char *b)
{
	const char *key;
	json_t *val;
	json_object_foreach(obj, key, val) {
		if (strcmp(key, a) != 0 && strcmp(key, b) != 0) {
			size_t m = push_key(d, key, key);
			int rc = not_supported(d);
			pop(d, m);
			return rc;
		}
	}
	return 0;
}

static int need_array(struct dec *d, const json_t *v)
{
	char vb[SHOW_LEN];
	if (json_is_array(v))
		return 0;
	return fail(d, -EINVAL, "%s is not a list", show(v, vb, sizeof(vb)));
}

static int get_int(struct dec *d, const json_t *v, int64_t lo, int64_t hi,
		   int64_t *out)
{
	char vb[SHOW_LEN];
	if (!json_is_integer(v))
		return fail(d, -EINVAL, "%s is not an integer",
			    show(v, vb, sizeof(vb)));
	json_int_t x = json_integer_value(v);
	if (x < lo || x > hi)
		return fail(d, -ERANGE, "%s is not in %lld..%lld",
			    show(v, vb, sizeof(vb)), (long long)lo, (long long)hi);
	*out = (int64_t)x;
	return 0;
}

/* obj[key] must be the string `want`. */
static int expect_const(struct dec *d, json_t *obj, const char *key,
			const char *want)
{
	char vb[SHOW_LEN];
	json_t *v = json_object_get(obj, key);
	int rc = 0;
	size_t m = push_key(d, key_anchor(obj, key), key);
	if (!present(v))
		rc = fail(d, -EINVAL, "missing; expected %s", want);
	else if (!str_is(v, want))
		rc = fail(d, -EINVAL, "%s is not %s", show(v, vb, sizeof(vb)), want);
	pop(d, m);
	return rc;
}

/* A {name: ..., ...} entry's name: a non-empty string without NUL. */
static int get_name(struct dec *d, json_t *obj, const char *what,
		    const char **name, size_t *len)
{
	char vb[SHOW_LEN];
	json_t *v = json_object_get(obj, "name");
	int rc = 0;
	size_t m = push_key(d, key_anchor(obj, "name"), "name");
	if (!present(v)) {
		rc = fail(d, -EINVAL, "missing; expected %s", what);
	} else if (!json_is_string(v) || json_string_length(v) == 0 ||
		   strlen(json_string_value(v)) != json_string_length(v)) {
		rc = fail(d, -EINVAL, "%s is not %s", show(v, vb, sizeof(vb)), what);
	} else {
		*name = json_string_value(v);
		*len = json_string_length(v);
	}
	pop(d, m);
	return rc;
}

/* kube-scheduler's other in-tree score plugins: disabling one is a no-op
 * here (shmsched never runs it), enabling one is an error. */
static const char *const kube_other_scores[] = {
	"ImageLocality",
	"VolumeBinding", NULL,
};

static int score_index(const char *name, size_t len)
{
	for (int i = 0; i < SCORE_PLUGINS; i++)
		if (strlen(score_plugin_names[i]) == len &&
		    memcmp(score_plugin_names[i], name, len) == 0)
			return i;
	return -1;
}

static int64_t *score_weight(struct score_config *sc, int i)
{
	switch ((enum score_plugin)i) {
	case SCORE_TAINT:
		return &sc->weight_taint;
	case SCORE_AFFINITY:
		return &sc->weight_affinity;
	case SCORE_FIT:
		return &sc->weight_fit;
	case SCORE_GPU_BEST_FIT:
		return &sc->weight_gpu_best_fit;
	case SCORE_GPU_FRAG:
		return &sc->weight_gpu_frag;
	case SCORE_SPREAD:
		return &sc->weight_spread;
	case SCORE_INTER_POD:
		return &sc->weight_inter_pod;
	case SCORE_BALANCED:
	case SCORE_PLUGINS:
	default:
		return &sc->weight_balanced;
	}
}

/* One profile's plugins.score as read, before the merge. */
struct score_pick {
	bool disable_all;
	bool disabled[SCORE_PLUGINS];
	bool enabled[SCORE_PLUGINS];
	int64_t weight[SCORE_PLUGINS];
};

static int decode_plugin_entry(struct dec *d, json_t *e, bool enabling,
			       struct score_pick *pick)
{
	char vb[SHOW_LEN];
	int rc = need_object(d, e);
	if (rc != 0)
		return rc;
	rc = only_keys(d, e, "name", "weight");
	if (rc != 0)
		return rc;
	const char *name;
	size_t len;
	rc = get_name(d, e, "a plugin name", &name, &len);
	if (rc != 0)
		return rc;
	/* framework.go: a score plugin's weight of 0 (or none) means 1. */
	int64_t weight = 0;
	json_t *w = json_object_get(e, "weight");
	if (present(w)) {
		size_t m = push_key(d, key_anchor(e, "weight"), "weight");
		rc = get_int(d, w, 0, WEIGHT_MAX, &weight);
		pop(d, m);
		if (rc != 0)
			return rc;
	}
	if (weight == 0)
		weight = 1;

	int i = score_index(name, len);
	size_t m = push_key(d, key_anchor(e, "name"), "name");
	json_t *nv = json_object_get(e, "name");
	if (enabling) {
		if (i < 0)
			rc = fail(d, -EINVAL, "%s is not supported by shmsched (it "
				  "scores with TaintToleration, NodeAffinity, "
				  "NodeResourcesFit, NodeResourcesBalancedAllocation, "
				  "GpuBestFit, GpuFragmentation)",
				  show(nv, vb, sizeof(vb)));
		else if (pick->enabled[i])
			rc = fail(d, -EINVAL, "%s is enabled twice",
				  show(nv, vb, sizeof(vb)));
		else {
			pick->enabled[i] = true;
			pick->weight[i] = weight;
		}
	} else if (len == 1 && name[0] == '*') {
		pick->disable_all = true;
	} else if (i >= 0) {
		pick->disabled[i] = true;
	} else if (!is_one_of(name, len, kube_other_scores)) {
		rc = fail(d, -EINVAL, "%s is not a kube-scheduler score plugin",
			  show(nv, vb, sizeof(vb)));
	}
	pop(d, m);
	return rc;
}

static int decode_plugin_list(struct dec *d, json_t *list, bool enabling,
			      struct score_pick *pick)
{
	if (!present(list))
		return 0;
	int rc = need_array(d, list);
	if (rc != 0)
		return rc;
	size_t i;
	json_t *e;
	json_array_foreach(list, i, e) {
		size_t m = push_index(d, e, i);
		rc = decode_plugin_entry(d, e, enabling, pick);
		pop(d, m);
		if (rc != 0)
			return rc;
	}
	return 0;
}

/* plugins.score, merged into the defaults as mergePluginSet
 * (default_plugins.go) merges a custom set: "disabled" drops defaults by name
 * ("*": all of them); an "enabled" entry naming a default replaces it in
 * place (its weight, not the default's); other enabled entries are appended.
 * Only the weights matter to shmsched, not the order. */
static int decode_score_set(struct dec *d, json_t *set, struct score_config *sc)
{
	struct score_pick pick = {0};
	const char *key;
	json_t *val;
	if (!present(set))
		return 0;
	int rc = need_object(d, set);
	if (rc != 0)
		return rc;
	json_object_foreach(set, key, val) {
		size_t m = push_key(d, key, key);
		if (strcmp(key, "enabled") == 0)
			rc = decode_plugin_list(d, val, true, &pick);
		else if (strcmp(key, "disabled") == 0)
			rc = decode_plugin_list(d, val, false, &pick);
		else
			rc = not_supported(d);
		pop(d, m);
		if (rc != 0)
			return rc;
	}
	for (int i = 0; i < SCORE_PLUGINS; i++) {
		int64_t w = score_plugin_default_weight[i];
		if (pick.disable_all || pick.disabled[i])
			w = 0;
		if (pick.enabled[i])
			w = pick.weight[i];
		*score_weight(sc, i) = w;
	}
	return 0;
}

static int decode_plugins(struct dec *d, json_t *plugins, struct score_config *sc)
{
	const char *key;
	json_t *val;
	if (!present(plugins))
		return 0;
	int rc = need_object(d, plugins);
	if (rc != 0)
		return rc;
	json_object_foreach(plugins, key, val) {
		size_t m = push_key(d, key, key);
		if (strcmp(key, "score") == 0)
			rc = decode_score_set(d, val, sc);
		else
			rc = fail(d, -EINVAL, "not supported by shmsched (only "
				  "plugins.score may be configured)");
		pop(d, m);
		if (rc != 0)
			return rc;
	}
	return 0;
}

/* Field by field, never by struct assignment, here and below: a struct
 * copy need not copy padding, and configs must compare equal by bytes. */
static void set_res_weight(struct res_weight *rw, int resource, int64_t weight)
{
	memset(rw, 0, sizeof(*rw));
	rw->resource = (uint8_t)resource;
	rw->weight = weight;
}

static void default_resources(struct res_weight *out, uint8_t *n)
{
	set_res_weight(&out[0], RES_CPU, 1);
	set_res_weight(&out[1], RES_MEMORY, 1);
	*n = 2;
}

/* A list of {name, weight}: scoringStrategy.resources (weight 1..100) or
 * the balanced allocation's resources (weight 1; validation_pluginargs.go).
 * In both a weight of 0 or none means 1 (defaults.go); an empty list means
 * cpu and memory. */
static int decode_resources(struct dec *d, json_t *list, bool balanced,
			    struct res_weight *out, uint8_t *n_out)
{
	char vb[SHOW_LEN];
	struct res_weight got[RES_MAX];
	unsigned n = 0;
	size_t i;
	json_t *e;
	if (!present(list) || (json_is_array(list) && json_array_size(list) == 0)) {
		default_resources(out, n_out);
		return 0;
	}
	int rc = need_array(d, list);
	if (rc != 0)
		return rc;
	json_array_foreach(list, i, e) {
		const char *name;
		size_t len, m = push_index(d, e, i);
		rc = need_object(d, e);
		if (rc != 0)
			goto fail_entry;
		rc = only_keys(d, e, "name", "weight");
		if (rc != 0)
			goto fail_entry;
		rc = get_name(d, e, "a resource name", &name, &len);
		if (rc != 0)
			goto fail_entry;
		int64_t weight = 0;
		json_t *w = json_object_get(e, "weight");
		size_t mw = push_key(d, key_anchor(e, "weight"), "weight");
		if (present(w) && !json_is_integer(w)) {
			rc = fail(d, -EINVAL, "%s is not an integer",
				  show(w, vb, sizeof(vb)));
		} else {
			weight = present(w) ? (int64_t)json_integer_value(w) : 0;
			if (weight == 0)
				weight = 1;
			if (balanced && weight != 1)
				rc = fail(d, -EINVAL, "%s is not 1 (the only weight "
					  "NodeResourcesBalancedAllocation takes)",
					  show(w, vb, sizeof(vb)));
			else if (weight < 1 || weight > WEIGHT_MAX)
				rc = fail(d, -ERANGE, "%s is not in 1..%d",
					  show(w, vb, sizeof(vb)), WEIGHT_MAX);
		}
		pop(d, mw);
		if (rc != 0)
			goto fail_entry;

		size_t mn = push_key(d, key_anchor(e, "name"), "name");
		json_t *nv = json_object_get(e, "name");
		int idx = res_register(d->res, name, len);
		if (idx == -ENOSPC)
			rc = fail(d, -ENOSPC, "%s: too many resource names (shmsched "
				  "knows at most %d)", show(nv, vb, sizeof(vb)), RES_MAX);
		else if (idx == -ENAMETOOLONG)
			rc = fail(d, -ENAMETOOLONG, "%s is longer than %d bytes",
				  show(nv, vb, sizeof(vb)), RES_NAME_MAX - 1);
		else if (idx < 0 || idx >= RES_MAX)
			rc = fail(d, idx < 0 ? idx : -EINVAL, "%s cannot be registered",
				  show(nv, vb, sizeof(vb)));
		for (unsigned j = 0; rc == 0 && j < n; j++)
			if (got[j].resource == idx)
				rc = fail(d, -EINVAL, "%s is listed twice",
					  show(nv, vb, sizeof(vb)));
		/* Distinct indices below RES_MAX: n never passes RES_MAX. */
		if (rc == 0 && n < RES_MAX)
			set_res_weight(&got[n++], idx, weight);
		pop(d, mn);
		if (rc != 0)
			goto fail_entry;
		pop(d, m);
		continue;
fail_entry:
		pop(d, m);
		return rc;
	}
	memcpy(out, got, n * sizeof(got[0]));
	*n_out = (uint8_t)n;
	return 0;
}

static int decode_strategy(struct dec *d, json_t *s, struct score_config *sc)
{
	char vb[SHOW_LEN];
	if (!present(s))
		return 0; /* defaults.go: LeastAllocated over cpu and memory */
	int rc = need_object(d, s);
	if (rc != 0)
		return rc;
	rc = only_keys(d, s, "type", "resources");
	if (rc != 0)
		return rc;
	/* kube defaults a missing scoringStrategy, not a missing type: an
	 * empty type fails its validation, so it fails here too. */
	json_t *t = json_object_get(s, "type");
	size_t m = push_key(d, key_anchor(s, "type"), "type");
	if (!present(t))
		rc = fail(d, -EINVAL, "missing; expected LeastAllocated or "
			  "MostAllocated");
	else if (str_is(t, "LeastAllocated"))
		sc->fit_strategy = FIT_LEAST_ALLOCATED;
	else if (str_is(t, "MostAllocated"))
		sc->fit_strategy = FIT_MOST_ALLOCATED;
	else if (str_is(t, "RequestedToCapacityRatio"))
		rc = fail(d, -EINVAL, "%s is not supported by shmsched; expected "
			  "LeastAllocated or MostAllocated", show(t, vb, sizeof(vb)));
	else
		rc = fail(d, -EINVAL, "%s is not LeastAllocated or MostAllocated",
			  show(t, vb, sizeof(vb)));
	pop(d, m);
	if (rc != 0)
		return rc;

	json_t *r = json_object_get(s, "resources");
	m = push_key(d, key_anchor(s, "resources"), "resources");
	rc = decode_resources(d, r, false, sc->fit_resources, &sc->n_fit_resources);
	pop(d, m);
	return rc;
}

/* args.apiVersion and args.kind are optional; when given they must be
 * right. */
/* A plugin's args: a mapping whose apiVersion and kind, when given, are
 * v1's and `kind`. */
static int check_args(struct dec *d, json_t *args, const char *kind)
{
	int rc = need_object(d, args);
	if (rc == 0 && json_object_get(args, "apiVersion") != NULL)
		rc = expect_const(d, args, "apiVersion", CONFIG_API_VERSION);
	if (rc == 0 && json_object_get(args, "kind") != NULL)
		rc = expect_const(d, args, "kind", kind);
	return rc;
}

static bool is_type_key(const char *key)
{
	return strcmp(key, "apiVersion") == 0 || strcmp(key, "kind") == 0;
}

static int decode_fit_args(struct dec *d, json_t *args, struct score_config *sc)
{
	const char *key;
	json_t *val;
	if (!present(args))
		return 0;
	int rc = check_args(d, args, "NodeResourcesFitArgs");
	if (rc != 0)
		return rc;
	json_object_foreach(args, key, val) {
		size_t m = push_key(d, key, key);
		if (strcmp(key, "scoringStrategy") == 0)
			rc = decode_strategy(d, val, sc);
		else if (strcmp(key, "ignoredResources") == 0 ||
			 strcmp(key, "ignoredResourceGroups") == 0) {
			/* An empty list is the default: harmless. */
			if (present(val) &&
			    !(json_is_array(val) && json_array_size(val) == 0))
				rc = not_supported(d);
		} else if (!is_type_key(key))
			rc = not_supported(d);
		pop(d, m);
		if (rc != 0)
			return rc;
	}
	return 0;
}

static int decode_balanced_args(struct dec *d, json_t *args,
				struct score_config *sc)
{
	const char *key;
	json_t *val;
	if (!present(args))
		return 0;
	int rc = check_args(d, args, "NodeResourcesBalancedAllocationArgs");
	if (rc != 0)
		return rc;
	json_object_foreach(args, key, val) {
		size_t m = push_key(d, key, key);
		if (strcmp(key, "resources") == 0)
			rc = decode_resources(d, val, true, sc->balanced_resources,
					      &sc->n_balanced_resources);
		else if (!is_type_key(key))
			rc = not_supported(d);
		pop(d, m);
		if (rc != 0)
			return rc;
	}
	return 0;
}

static int get_bool(struct dec *d, const json_t *v, bool *out)
{
	char vb[SHOW_LEN];
	if (!json_is_boolean(v))
		return fail(d, -EINVAL, "%s is not true or false",
			    show(v, vb, sizeof(vb)));
	*out = json_is_true(v);
	return 0;
}

/* InterPodAffinityArgs. */
static int decode_interpod_args(struct dec *d, json_t *args, struct score_config *sc)
{
	const char *key;
	json_t *val;
	if (!present(args))
		return 0;
	int rc = check_args(d, args, "InterPodAffinityArgs");
	if (rc != 0)
		return rc;
	json_object_foreach(args, key, val) {
		size_t m = push_key(d, key, key);
		int64_t w;
		if (strcmp(key, "hardPodAffinityWeight") == 0) {
			if (present(val) && (rc = get_int(d, val, 0, 100, &w)) == 0)
				sc->hard_pod_affinity_weight = (int32_t)w;
		} else if (strcmp(key, "ignorePreferredTermsOfExistingPods") == 0) {
			if (present(val))
				rc = get_bool(d, val, &sc->ignore_preferred_terms_of_existing);
		} else if (!is_type_key(key)) {
			rc = unknown_field(d, key);
		}
		pop(d, m);
		if (rc != 0)
			return rc;
	}
	return 0;
}

/* PodTopologySpreadArgs: defaultingType System, or List without
 * defaultConstraints (constraints of its own are not read yet). */
static int decode_spread_args(struct dec *d, json_t *args, struct score_config *sc)
{
	char vb[SHOW_LEN];
	const char *key;
	json_t *val;
	if (!present(args))
		return 0;
	int rc = check_args(d, args, "PodTopologySpreadArgs");
	if (rc != 0)
		return rc;
	json_t *dc = json_object_get(args, "defaultConstraints");
	bool have_constraints = json_is_array(dc) && json_array_size(dc) > 0;
	json_object_foreach(args, key, val) {
		size_t m = push_key(d, key, key);
		if (strcmp(key, "defaultingType") == 0) {
			if (str_is(val, "System")) {
				if (have_constraints)
					rc = fail(d, -EINVAL, "System takes no "
						  "defaultConstraints (kube-scheduler's "
						  "validation)");
				else
					sc->spread_defaulting = SPREAD_DEFAULTING_SYSTEM;
			} else if (str_is(val, "List")) {
				sc->spread_defaulting = SPREAD_DEFAULTING_NONE;
			} else if (present(val)) {
				rc = fail(d, -EINVAL, "%s is not System or List",
					  show(val, vb, sizeof(vb)));
			}
		} else if (strcmp(key, "defaultConstraints") == 0) {
			if (present(val) && !json_is_array(val))
				rc = need_array(d, val);
			else if (have_constraints)
				rc = fail(d, -EINVAL, "default constraints of a profile's "
					  "own are not supported by shmsched yet (System "
					  "defaulting, or List with none, is)");
		} else if (!is_type_key(key)) {
			rc = unknown_field(d, key);
		}
		pop(d, m);
		if (rc != 0)
			return rc;
	}
	/* kube's default for defaultingType is System; List is only chosen
	 * by saying so (defaults.go). */
	json_t *dt = json_object_get(args, "defaultingType");
	if (!present(dt))
		sc->spread_defaulting = SPREAD_DEFAULTING_SYSTEM;
	return 0;
}

static int decode_plugin_config(struct dec *d, json_t *list,
				struct score_config *sc)
{
	char vb[SHOW_LEN];
	bool seen[SCORE_PLUGINS] = {false};
	size_t i;
	json_t *e;
	if (!present(list))
		return 0;
	int rc = need_array(d, list);
	if (rc != 0)
		return rc;
	json_array_foreach(list, i, e) {
		const char *name;
		size_t len, m = push_index(d, e, i);
		rc = need_object(d, e);
		if (rc != 0)
			goto fail_entry;
		rc = only_keys(d, e, "name", "args");
		if (rc != 0)
			goto fail_entry;
		rc = get_name(d, e, "a plugin name", &name, &len);
		if (rc != 0)
			goto fail_entry;
		int p = score_index(name, len);
		json_t *nv = json_object_get(e, "name");
		if (p != SCORE_FIT && p != SCORE_BALANCED && p != SCORE_INTER_POD &&
		    p != SCORE_SPREAD) {
			size_t mn = push_key(d, key_anchor(e, "name"), "name");
			rc = fail(d, -EINVAL, "args of %s are not supported by "
				  "shmsched (only NodeResourcesFit, "
				  "NodeResourcesBalancedAllocation, InterPodAffinity "
				  "and PodTopologySpread take args)",
				  show(nv, vb, sizeof(vb)));
			pop(d, mn);
			goto fail_entry;
		}
		if (seen[p]) {
			size_t mn = push_key(d, key_anchor(e, "name"), "name");
			rc = fail(d, -EINVAL, "%s is configured twice",
				  show(nv, vb, sizeof(vb)));
			pop(d, mn);
			goto fail_entry;
		}
		seen[p] = true;
		size_t ma = push_key(d, key_anchor(e, "args"), "args");
		json_t *args = json_object_get(e, "args");
		if (p == SCORE_FIT)
			rc = decode_fit_args(d, args, sc);
		else if (p == SCORE_BALANCED)
			rc = decode_balanced_args(d, args, sc);
		else if (p == SCORE_INTER_POD)
			rc = decode_interpod_args(d, args, sc);
		else
			rc = decode_spread_args(d, args, sc);
		pop(d, ma);
		if (rc != 0)
			goto fail_entry;
		pop(d, m);
		continue;
fail_entry:
		pop(d, m);
		return rc;
	}
	return 0;
}

/* What a profile sets over the scheduler-wide settings. */
struct profile_out {
	bool pct_set;
	int64_t pct;
};

static int decode_profile(struct dec *d, json_t *prof, struct score_config *sc,
			  struct profile_out *po)
{
	char vb[SHOW_LEN];
	const char *key;
	json_t *val;
	int rc = need_object(d, prof);
	if (rc != 0)
		return rc;
	json_object_foreach(prof, key, val) {
		size_t m = push_key(d, key, key);
		if (strcmp(key, "schedulerName") == 0) {
			/* Any name: shmsched answers for whichever it is given. */
			if (present(val) && !json_is_string(val))
				rc = fail(d, -EINVAL, "%s is not a string",
					  show(val, vb, sizeof(vb)));
		} else if (strcmp(key, "percentageOfNodesToScore") == 0) {
			if (present(val)) {
				rc = get_int(d, val, 0, 100, &po->pct);
				po->pct_set = rc == 0;
			}
		} else if (strcmp(key, "plugins") == 0) {
			rc = decode_plugins(d, val, sc);
		} else if (strcmp(key, "pluginConfig") == 0) {
			rc = decode_plugin_config(d, val, sc);
		} else {
			rc = unknown_field(d, key);
		}
		pop(d, m);
		if (rc != 0)
			return rc;
	}
	return 0;
}

static int decode_profiles(struct dec *d, json_t *list, struct score_config *sc,
			   struct profile_out *po)
{
	if (!present(list))
		return 0;
	int rc = need_array(d, list);
	if (rc != 0)
		return rc;
	/* None: kube-scheduler adds one default profile. */
	if (json_array_size(list) == 0)
		return 0;
	if (json_array_size(list) > 1) {
		size_t m = push_index(d, json_array_get(list, 1), 1);
		rc = fail(d, -EINVAL, "a second profile is not supported by "
			  "shmsched (it schedules with one profile)");
		pop(d, m);
		return rc;
	}
	json_t *prof = json_array_get(list, 0);
	size_t m = push_index(d, prof, 0);
	rc = decode_profile(d, prof, sc, po);
	pop(d, m);
	return rc;
}

/* The v1 type's other top-level fields: kept where they will mean
 * something (the queue's), accepted with a warning where they cannot
 * here, refused where ignoring them would change placements. */
static int decode_other_top(struct dec *d, const char *key, json_t *val,
			    struct sched_config *cfg)
{
	static const char *const objects[] = {"leaderElection", "clientConnection",
					      NULL};
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
		if (!present(val))
			return 0;
		if ((rc = get_int(d, val, 1, INT32_MAX, &v)) != 0)
			return rc;
		if (strcmp(key, "parallelism") == 0) {
			cfg->parallelism = (int32_t)v;
			warn_no_effect(d, "no effect: shmsched's workers are "
				       "shmschedd --workers");
		} else if (strcmp(key, "podInitialBackoffSeconds") == 0) {
			/* The scheduling queue's (daemon/wait.c). */
			cfg->pod_initial_backoff_seconds = (int32_t)v;
		} else {
			cfg->pod_max_backoff_seconds = (int32_t)v;
		}
		return 0;
	}
	for (int i = 0; objects[i] != NULL; i++)
		if (strcmp(key, objects[i]) == 0) {
			if (present(val) && (rc = need_object(d, val)) != 0)
				return rc;
			warn_no_effect(d, "no effect in shmsched (one daemon per "
				       "state region; no API server connection)");
			return 0;
		}
	for (int i = 0; strings[i] != NULL; i++)
		if (strcmp(key, strings[i]) == 0) {
			char vb[SHOW_LEN];
			if (present(val) && !json_is_string(val))
				return fail(d, -EINVAL, "%s is not a string",
					    show(val, vb, sizeof(vb)));
			warn_no_effect(d, "no effect in shmsched");
			return 0;
		}
	for (int i = 0; bools[i] != NULL; i++)
		if (strcmp(key, bools[i]) == 0) {
			bool b;
			if (present(val) && (rc = get_bool(d, val, &b)) != 0)
				return rc;
			warn_no_effect(d, "no effect in shmsched");
			return 0;
		}
	if (strcmp(key, "extenders") == 0) {
		if (present(val) && (rc = need_array(d, val)) != 0)
			return rc;
		if (present(val) && json_array_size(val) > 0)
			return fail(d, -EINVAL, "scheduler extenders are not supported "
				    "by shmsched (they would change placements)");
		return 0;
	}
	return unknown_field(d, key);
}

static int decode_root(struct dec *d, json_t *root, struct sched_config *cfg)
{
	char vb[SHOW_LEN];
	struct profile_out po = {0};
	int64_t pct = 0;
	const char *key;
	json_t *val;
	int rc;
	if (root == NULL)
		return fail(d, -EINVAL, "empty; expected a " CONFIG_KIND);
	if (!json_is_object(root))
		return fail(d, -EINVAL, "%s is not a mapping; expected a "
			    CONFIG_KIND, show(root, vb, sizeof(vb)));
	rc = expect_const(d, root, "apiVersion", CONFIG_API_VERSION);
	if (rc == 0)
		rc = expect_const(d, root, "kind", CONFIG_KIND);
	if (rc != 0)
		return rc;
	json_object_foreach(root, key, val) {
		size_t m = push_key(d, key, key);
		if (is_type_key(key))
			rc = 0;
		else if (strcmp(key, "percentageOfNodesToScore") == 0)
			rc = present(val) ? get_int(d, val, 0, 100, &pct) : 0;
		else if (strcmp(key, "profiles") == 0)
			rc = decode_profiles(d, val, &cfg->score, &po);
		else
			rc = decode_other_top(d, key, val, cfg);
		pop(d, m);
		if (rc != 0)
			return rc;
	}
	if (cfg->pod_initial_backoff_seconds > cfg->pod_max_backoff_seconds) {
		size_t m = push_key(d, key_anchor(root, "podInitialBackoffSeconds"),
				    "podInitialBackoffSeconds");
		rc = fail(d, -EINVAL, "%d is more than podMaxBackoffSeconds (%d)",
			  cfg->pod_initial_backoff_seconds,
			  cfg->pod_max_backoff_seconds);
		pop(d, m);
		return rc;
	}
	/* The profile's own percentage wins over the scheduler-wide one. */
	cfg->percentage_of_nodes_to_score = (int32_t)(po.pct_set ? po.pct : pct);
	return 0;
}

/* ---- public ------------------------------------------------------------ */

void sched_config_default(struct sched_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg)); /* padding too: configs compare by bytes */
	cfg->percentage_of_nodes_to_score = 0;
	struct score_config *sc = &cfg->score;
	for (int i = 0; i < SCORE_PLUGINS; i++)
		*score_weight(sc, i) = score_plugin_default_weight[i];
	sc->fit_strategy = FIT_LEAST_ALLOCATED;
	sc->hard_pod_affinity_weight = 1;
	sc->spread_defaulting = SPREAD_DEFAULTING_SYSTEM;
	cfg->parallelism = 16;
	cfg->pod_initial_backoff_seconds = 1;
	cfg->pod_max_backoff_seconds = 10;
	default_resources(sc->fit_resources, &sc->n_fit_resources);
	default_resources(sc->balanced_resources, &sc->n_balanced_resources);
}

int sched_config_load_buffer(const char *name, const char *buf, size_t len,
			     struct sched_config *cfg, struct res_names *res,
			     char *err, size_t err_len)
{
	struct line_table lines = {0};
	struct dec d = {
		.name = name ? name : "(config)",
		.err = err,
		.err_len = err_len,
		.lines = &lines,
		.res = res,
	};
	struct sched_config next;
	struct res_names saved;
	json_t *root = NULL;
	int rc;
	if (err != NULL && err_len > 0)
		err[0] = '\0';
	if (cfg == NULL || res == NULL || (buf == NULL && len > 0))
		return fail_line(&d, 0, -EINVAL, "no configuration or registry given");
	if (buf == NULL)
		buf = "";

	rc = parse_tree(&d, &lines, buf, len, &root);
	if (rc != 0)
		goto fail_parse;
	sched_config_default(&next);
	memcpy(&saved, res, sizeof(saved));
	rc = decode_root(&d, root, &next);
	if (rc != 0)
		goto fail_decode;
	memcpy(cfg, &next, sizeof(next));
	json_decref(root);
	free(lines.v);
	return 0;

fail_decode:
	memcpy(res, &saved, sizeof(saved));
	json_decref(root);
fail_parse:
	free(lines.v);
	return rc;
}

int sched_config_load(const char *path, struct sched_config *cfg,
		      struct res_names *res, char *err, size_t err_len)
{
	struct dec d = {.name = path ? path : "(config)", .err = err,
			.err_len = err_len};
	size_t len = 0;
	int rc;
	if (path == NULL)
		return fail_line(&d, 0, -EINVAL, "no file name given");
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		return fail_line(&d, 0, rc, "cannot open: %s", strerror(-rc));
	}
	/* One allocation of the cap: read() tells the size, also for pipes. */
	char *buf = malloc(SCHED_CONFIG_FILE_MAX + 1);
	if (buf == NULL) {
		rc = fail_line(&d, 0, -ENOMEM, "out of memory");
		goto fail_alloc;
	}
	while (len <= SCHED_CONFIG_FILE_MAX) {
		ssize_t n = read(fd, buf + len, SCHED_CONFIG_FILE_MAX + 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = -errno;
			rc = fail_line(&d, 0, rc, "cannot read: %s", strerror(-rc));
			goto fail_read;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	if (len > SCHED_CONFIG_FILE_MAX) {
		rc = fail_line(&d, 0, -EFBIG, "larger than %u bytes",
			       SCHED_CONFIG_FILE_MAX);
		goto fail_read;
	}
	rc = sched_config_load_buffer(path, buf, len, cfg, res, err, err_len);

fail_read:
	free(buf);
fail_alloc:
	close(fd);
	return rc;
}
