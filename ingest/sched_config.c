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
 * multiPoint to every extension point as kube-scheduler does (the section
 * "plugins" below); NodeAffinity's addedAffinity is read by the pod
 * decoder (ingest/k8s_json.c) so both mean the same.
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

#include "ingest/k8s_json.h"
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
	struct intern *strings; /* where args' strings go (may be NULL) */
	char path[FIELD_PATH_LEN];
	size_t path_len;
	const void *anchor[FIELD_DEPTH_MAX];
	unsigned depth;
	/* Errors written to err (at most SCHED_CONFIG_ERRORS_MAX), where the
	 * next one goes, and how many more were found. */
	unsigned n_errors;
	size_t err_pos;
	unsigned n_dropped;
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
	if (d->n_errors >= SCHED_CONFIG_ERRORS_MAX) {
		d->n_dropped++;
		return rc;
	}
	d->n_errors++;
	if (d->err == NULL || d->err_len == 0)
		return rc;
	size_t pos = d->err_pos;
	if (pos > 0)
		appendf(d->err, d->err_len, &pos, "\n");
	if (line > 0)
		appendf(d->err, d->err_len, &pos, "%s:%u: ", d->name, line);
	else
		appendf(d->err, d->err_len, &pos, "%s: ", d->name);
	if (d->path_len > 0)
		appendf(d->err, d->err_len, &pos, "%s: ", d->path);
	vappendf(d->err, d->err_len, &pos, fmt, ap);
	d->err_pos = pos;
	return rc;
}

/* Folds one step's result into a walk's: the walk's result is its first
 * error, and the walk goes on with the next sibling (the error's message
 * is written) unless memory ran out. True: stop. */
static bool failed(int *walk_rc, int rc)
{
	if (rc != 0 && *walk_rc == 0)
		*walk_rc = rc;
	return rc == -ENOMEM;
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

/* A warning at the decoder's current path, with its line: a field
 * accepted with no effect, a name that means nothing. */
__attribute__((format(printf, 2, 3)))
static void warn_at(struct dec *d, const char *fmt, ...)
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

/* ---- the decoder: values ----------------------------------------------- */

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

static int need_array(struct dec *d, const json_t *v)
{
	char vb[SHOW_LEN];
	if (json_is_array(v))
		return 0;
	return fail(d, -EINVAL, "%s is not a list", show(v, vb, sizeof(vb)));
}

static int need_string(struct dec *d, const json_t *v)
{
	char vb[SHOW_LEN];
	if (json_is_string(v))
		return 0;
	return fail(d, -EINVAL, "%s is not a string", show(v, vb, sizeof(vb)));
}

/* Every member of `obj` whose key is not in `known` (NULL-terminated) is an
 * unknown field, as kube-scheduler's strict decoding names it. */
static int only_known(struct dec *d, json_t *obj, const char *const *known)
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
		size_t m = push_key(d, key, key);
		failed(&walk, unknown_field(d, key));
		pop(d, m);
	}
	return walk;
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

static int get_bool(struct dec *d, const json_t *v, bool *out)
{
	char vb[SHOW_LEN];
	if (!json_is_boolean(v))
		return fail(d, -EINVAL, "%s is not true or false",
			    show(v, vb, sizeof(vb)));
	*out = json_is_true(v);
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

static bool is_type_key(const char *key)
{
	return strcmp(key, "apiVersion") == 0 || strcmp(key, "kind") == 0;
}

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

/* apimachinery's IsQualifiedName (a label key): an optional DNS-subdomain
 * prefix and '/', then 1..63 of [A-Za-z0-9-_.], alphanumeric at both
 * ends. */
static bool is_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9');
}

static bool is_qualified_name(const char *s, size_t n)
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
static int intern_value(struct dec *d, const json_t *v, uint32_t *id)
{
	if (d->strings == NULL)
		return fail(d, -EINVAL, "cannot be read here (no string table given)");
	int rc = intern_add(d->strings, json_string_value(v), json_string_length(v),
			    id);
	if (rc < 0)
		return fail(d, rc, "cannot be stored: %s", strerror(-rc));
	return 0;
}

/* ---- plugins: kube's merge and multiPoint expansion ---------------------
 *
 * A profile's `plugins` holds one {enabled, disabled} set per extension
 * point, multiPoint among them. What runs where follows kube-scheduler:
 * 1. mergePluginSet (apis/config/v1/default_plugins.go) merges each set
 *    into the defaults, which are all in multiPoint: `disabled` drops
 *    defaults by name ("*": all), an `enabled` entry naming a default
 *    replaces it in place, other enabled entries are appended.
 * 2. expandMultiPointPlugins (framework/runtime/framework.go) then gives
 *    each point its own enabled plugins, plus every multiPoint plugin that
 *    implements the point and that the point does not disable (its
 *    disabled "*" skips the expansion); a plugin enabled at the point
 *    itself overrides its multiPoint entry.
 * 3. getScoreWeights: a score plugin's weight is its score entry's, else
 *    its multiPoint entry's; 0 or none is 1.
 * Then shmsched's own rule: the plugins it implements as filters, and
 * those that stand for what it always does (scheduling gates, the queue
 * sort, the binder), must stay enabled: disabling one is refused, since
 * shmsched cannot place without it. Plugins it does not run (volumes,
 * claims, preemption) may be disabled: for the pods shmsched places that
 * changes nothing. */

/* Removed from the v1 API (validation.go, invalidPluginsByVersion). */
static const char *const plugins_removed[] = {
	"AzureDiskLimits", "CinderLimits", "EBSLimits", "GCEPDLimits", NULL,
};

#define PLUGIN_ALL (-2)     /* "*" in a disabled list */
#define PLUGIN_UNKNOWN (-1)

/* A row of plugin_table (workers/plugin_table.h), PLUGIN_ALL or
 * PLUGIN_UNKNOWN. */
static int plugin_entry_lookup(const char *name, size_t len)
{
	if (len == 1 && name[0] == '*')
		return PLUGIN_ALL;
	int i = plugin_lookup(name, len);
	return i >= 0 ? i : PLUGIN_UNKNOWN;
}

static bool implements(int plugin, enum plugin_ext p)
{
	return plugin >= 0 && (plugin_table[plugin].points & PLUGIN_BIT(p)) != 0;
}

/* One entry of an enabled or disabled list, as read. */
#define SET_ENTRIES_MAX 64

struct plugin_entry {
	int16_t plugin;  /* index into plugin_table, PLUGIN_ALL or PLUGIN_UNKNOWN */
	int32_t weight;  /* 0: none */
	json_t *elem;    /* the entry, for messages */
	uint16_t index;  /* its position in the list */
};

struct plugin_set {
	json_t *obj;               /* the {enabled, disabled} mapping, or NULL */
	unsigned n_enabled, n_disabled;
	struct plugin_entry enabled[SET_ENTRIES_MAX];
	struct plugin_entry disabled[SET_ENTRIES_MAX];
};

struct plugins_in {
	json_t *obj; /* the profile's `plugins`, or NULL */
	struct plugin_set set[PLUGIN_EXT_POINTS];
};

/* The path of a list entry (plugins.<point>.<list>[i].name), pushed onto
 * the decoder's; undone by pop_entry(). */
struct entry_mark {
	size_t path_len;
	unsigned depth;
};

static struct entry_mark push_entry(struct dec *d, const struct plugins_in *in,
				    enum plugin_ext p, bool enabled,
				    const struct plugin_entry *e)
{
	struct entry_mark mk = {d->path_len, d->depth};
	const char *list = enabled ? "enabled" : "disabled";
	push_key(d, key_anchor(in->obj, plugin_ext_names[p]), plugin_ext_names[p]);
	push_key(d, key_anchor(in->set[p].obj, list), list);
	push_index(d, e->elem, e->index);
	push_key(d, key_anchor(e->elem, "name"), "name");
	return mk;
}

static void pop_entry(struct dec *d, struct entry_mark mk)
{
	d->path_len = mk.path_len;
	d->path[mk.path_len] = '\0';
	d->depth = mk.depth;
}

static int decode_plugin_entry(struct dec *d, json_t *e, bool enabling,
			       struct plugin_entry *out)
{
	static const char *const keys[] = {"name", "weight", NULL};
	char vb[SHOW_LEN];
	int rc = need_object(d, e);
	if (rc != 0)
		return rc;
	int walk = only_known(d, e, keys);
	const char *name;
	size_t len;
	rc = get_name(d, e, "a plugin name", &name, &len);
	if (rc != 0)
		return rc;
	/* The v1 type's weight is an int32; shmsched bounds it further. */
	int64_t weight = 0;
	json_t *w = json_object_get(e, "weight");
	if (present(w)) {
		size_t m = push_key(d, key_anchor(e, "weight"), "weight");
		failed(&walk, get_int(d, w, 0, WEIGHT_MAX, &weight));
		pop(d, m);
	}
	out->plugin = (int16_t)plugin_entry_lookup(name, len);
	out->weight = (int32_t)weight;
	out->elem = e;
	size_t m = push_key(d, key_anchor(e, "name"), "name");
	json_t *nv = json_object_get(e, "name");
	if (enabling && is_one_of(name, len, plugins_removed)) {
		failed(&walk, fail(d, -EINVAL, "%s was invalid in version \"%s\" "
				   "(KubeSchedulerConfiguration is version \"%s\")",
				   show(nv, vb, sizeof(vb)), CONFIG_API_VERSION,
				   CONFIG_API_VERSION));
	} else if (enabling && out->plugin == PLUGIN_ALL) {
		failed(&walk, fail(d, -EINVAL, "\"*\" may only be disabled"));
	} else if (enabling && out->plugin == PLUGIN_UNKNOWN) {
		failed(&walk, fail(d, -EINVAL, "%s: no such plugin (shmsched has "
				   "kube-scheduler's in-tree plugins and GpuBestFit, "
				   "GpuFragmentation; out-of-tree plugins are not "
				   "supported)", show(nv, vb, sizeof(vb))));
	} else if (!enabling && out->plugin == PLUGIN_UNKNOWN &&
		   !is_one_of(name, len, plugins_removed)) {
		warn_at(d, "disables %s, which no plugin is named: no effect",
			show(nv, vb, sizeof(vb)));
	}
	pop(d, m);
	return walk;
}

static int decode_plugin_list(struct dec *d, json_t *list, bool enabling,
			      struct plugin_entry *out, unsigned *n_out)
{
	*n_out = 0;
	if (!present(list))
		return 0;
	int rc = need_array(d, list);
	if (rc != 0)
		return rc;
	if (json_array_size(list) > SET_ENTRIES_MAX)
		return fail(d, -ENOSPC, "%zu entries, at most %d",
			    json_array_size(list), SET_ENTRIES_MAX);
	size_t i;
	json_t *e;
	int walk = 0;
	json_array_foreach(list, i, e) {
		size_t m = push_index(d, e, i);
		struct plugin_entry *pe = &out[*n_out];
		rc = decode_plugin_entry(d, e, enabling, pe);
		pop(d, m);
		pe->index = (uint16_t)i;
		if (rc == 0)
			(*n_out)++;
		if (failed(&walk, rc))
			break;
	}
	return walk;
}

static int decode_plugin_set(struct dec *d, json_t *set, struct plugin_set *out)
{
	static const char *const keys[] = {"enabled", "disabled", NULL};
	memset(out, 0, sizeof(*out));
	if (!present(set))
		return 0;
	int rc = need_object(d, set);
	if (rc != 0)
		return rc;
	out->obj = set;
	int walk = only_known(d, set, keys);
	size_t m = push_key(d, key_anchor(set, "enabled"), "enabled");
	failed(&walk, decode_plugin_list(d, json_object_get(set, "enabled"), true,
					 out->enabled, &out->n_enabled));
	pop(d, m);
	m = push_key(d, key_anchor(set, "disabled"), "disabled");
	failed(&walk, decode_plugin_list(d, json_object_get(set, "disabled"), false,
					 out->disabled, &out->n_disabled));
	pop(d, m);
	return walk;
}

static const struct plugin_entry *disabled_by(const struct plugin_set *s,
					      int plugin)
{
	for (unsigned i = 0; i < s->n_disabled; i++)
		if (s->disabled[i].plugin == plugin ||
		    s->disabled[i].plugin == PLUGIN_ALL)
			return &s->disabled[i];
	return NULL;
}

static bool disables_all(const struct plugin_set *s)
{
	for (unsigned i = 0; i < s->n_disabled; i++)
		if (s->disabled[i].plugin == PLUGIN_ALL)
			return true;
	return false;
}

static bool disables(const struct plugin_set *s, int plugin)
{
	for (unsigned i = 0; i < s->n_disabled; i++)
		if (s->disabled[i].plugin == plugin)
			return true;
	return false;
}

/* One plugin of the merged multiPoint list: a default or a custom entry. */
struct merged {
	int16_t plugin;
	int32_t weight;
	const struct plugin_entry *from; /* NULL: kube's default */
};

#define MERGED_MAX (PLUGIN_COUNT + SET_ENTRIES_MAX)

/* mergePluginSet for multiPoint: the defaults, each dropped if disabled
 * or replaced in place by a custom entry of its name (the last, as Go's
 * map keeps it), then the custom entries that replaced nothing. */
static unsigned merge_multi_point(const struct plugin_set *custom,
				  struct merged out[MERGED_MAX])
{
	bool replaced[SET_ENTRIES_MAX] = {false};
	unsigned n = 0;
	if (!disables_all(custom)) {
		for (int p = 0; p < PLUGIN_COUNT; p++) {
			if (plugin_table[p].weight == PLUGIN_NOT_DEFAULT || disables(custom, p))
				continue;
			struct merged m = {(int16_t)p, plugin_table[p].weight, NULL};
			for (unsigned i = custom->n_enabled; i-- > 0;)
				if (custom->enabled[i].plugin == p) {
					m.weight = custom->enabled[i].weight;
					m.from = &custom->enabled[i];
					replaced[i] = true;
					break;
				}
			out[n++] = m;
		}
	}
	for (unsigned i = 0; i < custom->n_enabled; i++)
		if (!replaced[i])
			out[n++] = (struct merged){custom->enabled[i].plugin,
						   custom->enabled[i].weight,
						   &custom->enabled[i]};
	return n;
}

/* What runs at each point, and each score's weight. */
struct plugins_out {
	bool on[PLUGIN_EXT_POINTS][PLUGIN_COUNT];
	int64_t weight[PLUGIN_COUNT]; /* score weight when on at PLUGIN_EXT_SCORE */
	const struct plugin_entry *weight_from[PLUGIN_COUNT]; /* NULL: a default */
	uint8_t weight_point[PLUGIN_COUNT]; /* the list weight_from is in */
};

static int plugin_error(struct dec *d, const struct plugins_in *in,
			enum plugin_ext p, bool enabled,
			const struct plugin_entry *e, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));

/* An error at a list entry (plugins.<p>.<list>[i].name), or at `plugins`
 * itself when `e` is NULL. */
static int plugin_error(struct dec *d, const struct plugins_in *in,
			enum plugin_ext p, bool enabled,
			const struct plugin_entry *e, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (e == NULL)
		return fail(d, -EINVAL, "%s", msg);
	struct entry_mark mk = push_entry(d, in, p, enabled, e);
	int rc = fail(d, -EINVAL, "%s", msg);
	pop_entry(d, mk);
	return rc;
}

/* Steps 1-3 above for one profile. */
static int expand_plugins(struct dec *d, const struct plugins_in *in,
			  struct plugins_out *out)
{
	struct merged multi[MERGED_MAX];
	unsigned n_multi = merge_multi_point(&in->set[PLUGIN_EXT_MULTI_POINT], multi);
	int walk = 0;
	memset(out, 0, sizeof(*out));

	/* A plugin twice in multiPoint is registered twice (framework.go:
	 * "already registered"), whatever point it would reach first. */
	for (unsigned i = 0; i < n_multi; i++)
		for (unsigned j = 0; j < i; j++)
			if (multi[j].plugin == multi[i].plugin && multi[i].from) {
				failed(&walk, plugin_error(
					d, in, PLUGIN_EXT_MULTI_POINT, true, multi[i].from,
					"plugin \"%s\" already registered in multiPoint",
					plugin_table[multi[i].plugin].name));
				break;
			}

	for (int p = PLUGIN_EXT_MULTI_POINT + 1; p < PLUGIN_EXT_POINTS; p++) {
		const struct plugin_set *s = &in->set[p];
		/* updatePluginList: the point's own entries. */
		for (unsigned i = 0; i < s->n_enabled; i++) {
			const struct plugin_entry *e = &s->enabled[i];
			if (!implements(e->plugin, (enum plugin_ext)p)) {
				failed(&walk, plugin_error(
					d, in, (enum plugin_ext)p, true, e,
					"plugin \"%s\" does not extend %s",
					plugin_table[e->plugin].name, plugin_ext_types[p]));
				continue;
			}
			if (out->on[p][e->plugin]) {
				failed(&walk, plugin_error(
					d, in, (enum plugin_ext)p, true, e,
					"plugin \"%s\" already registered as \"%s\"",
					plugin_table[e->plugin].name, plugin_ext_types[p]));
				continue;
			}
			out->on[p][e->plugin] = true;
		}
		/* expandMultiPointPlugins. */
		if (disables_all(s))
			continue;
		for (unsigned i = 0; i < n_multi; i++) {
			int pl = multi[i].plugin;
			if (implements(pl, (enum plugin_ext)p) && !disables(s, pl))
				out->on[p][pl] = true;
		}
	}

	/* getScoreWeights: the score entry's weight, else multiPoint's. */
	for (int pl = 0; pl < PLUGIN_COUNT; pl++) {
		if (!out->on[PLUGIN_EXT_SCORE][pl])
			continue;
		const struct plugin_set *s = &in->set[PLUGIN_EXT_SCORE];
		bool found = false;
		for (unsigned i = 0; i < s->n_enabled && !found; i++)
			if (s->enabled[i].plugin == pl) {
				out->weight[pl] = s->enabled[i].weight;
				out->weight_from[pl] = &s->enabled[i];
				out->weight_point[pl] = PLUGIN_EXT_SCORE;
				found = true;
			}
		for (unsigned i = 0; i < n_multi && !found; i++)
			if (multi[i].plugin == pl) {
				out->weight[pl] = multi[i].weight;
				out->weight_from[pl] = multi[i].from;
				out->weight_point[pl] = PLUGIN_EXT_MULTI_POINT;
				found = true;
			}
		if (out->weight[pl] == 0)
			out->weight[pl] = 1;
	}
	return walk;
}

/* The entry that turned `plugin` off at `p`: the point's own disabled
 * entry, else multiPoint's. */
static const struct plugin_entry *turned_off(const struct plugins_in *in,
					     enum plugin_ext p, int plugin,
					     enum plugin_ext *where)
{
	const struct plugin_entry *e = disabled_by(&in->set[p], plugin);
	*where = p;
	if (e == NULL) {
		e = disabled_by(&in->set[PLUGIN_EXT_MULTI_POINT], plugin);
		*where = PLUGIN_EXT_MULTI_POINT;
	}
	return e;
}

/* shmsched's rule over the expansion (see above), and the weights into
 * `sc`. */
static int apply_plugins(struct dec *d, const struct plugins_in *in,
			 const struct plugins_out *out, struct score_config *sc)
{
	/* A plugin turned off where shmsched runs it: by which entry, at
	 * which point. One message per entry and point names them all. */
	struct off {
		const struct plugin_entry *e; /* NULL: none (cannot happen) */
		uint8_t where, point;
		int16_t plugin;
		bool done;
	} off[PLUGIN_COUNT * PLUGIN_EXT_POINTS];
	unsigned n_off = 0;
	int walk = 0;
	for (int pl = 0; pl < PLUGIN_COUNT; pl++) {
		const struct plugin_info *info = &plugin_table[pl];
		const struct plugin_entry *reported = NULL;
		for (int p = PLUGIN_EXT_MULTI_POINT + 1; p < PLUGIN_EXT_POINTS; p++) {
			bool must = (info->keep & PLUGIN_BIT(p)) != 0;
			/* A score runs on its PreScore's state. */
			if (p == PLUGIN_EXT_PRE_SCORE && info->score >= 0 &&
			    implements(pl, PLUGIN_EXT_PRE_SCORE) && out->on[PLUGIN_EXT_SCORE][pl])
				must = true;
			if (!must || out->on[p][pl])
				continue;
			enum plugin_ext where;
			const struct plugin_entry *e =
				turned_off(in, (enum plugin_ext)p, pl, &where);
			if (e != NULL && e == reported)
				continue; /* once per plugin and entry */
			reported = e;
			off[n_off++] = (struct off){e, (uint8_t)where, (uint8_t)p,
						    (int16_t)pl, false};
		}
		if (info->fixed_weight && out->on[PLUGIN_EXT_SCORE][pl] &&
		    out->weight[pl] != info->weight) {
			failed(&walk, plugin_error(
				d, in, (enum plugin_ext)out->weight_point[pl], true,
				out->weight_from[pl], "%s with weight %lld: shmsched "
				"does not compute this score (only its default weight "
				"%d, or disabling it, is accepted)", info->name,
				(long long)out->weight[pl], info->weight));
		}
		int64_t *w = score_config_weight(sc, info->score);
		if (w != NULL)
			*w = out->on[PLUGIN_EXT_SCORE][pl] ? out->weight[pl] : 0;
	}
	for (unsigned i = 0; i < n_off; i++) {
		if (off[i].done)
			continue;
		char names[512];
		size_t pos = 0;
		unsigned n = 0;
		names[0] = '\0';
		for (unsigned j = i; j < n_off; j++)
			if (!off[j].done && off[j].e == off[i].e &&
			    off[j].point == off[i].point) {
				appendf(names, sizeof(names), &pos, "%s%s", n ? ", " : "",
					plugin_table[off[j].plugin].name);
				off[j].done = true;
				n++;
			}
		if (off[i].point == PLUGIN_EXT_PRE_SCORE)
			failed(&walk, plugin_error(
				d, in, (enum plugin_ext)off[i].where, false, off[i].e,
				"disables %s at preScore while %s score runs: not "
				"supported by shmsched", names, n > 1 ? "their" : "its"));
		else
			failed(&walk, plugin_error(
				d, in, (enum plugin_ext)off[i].where, false, off[i].e,
				"disables %s at %s: shmsched always runs %s there "
				"(turning %s off is not supported)", names,
				plugin_ext_names[off[i].point], n > 1 ? "them" : "it",
				n > 1 ? "one" : "it"));
	}
	return walk;
}

/* The queue sort set as written, for validateCommonQueueSort: every
 * profile's must be the same. */
static void queue_sort_signature(const struct plugin_set *s, char *buf,
				 size_t len)
{
	size_t pos = 0;
	buf[0] = '\0';
	for (unsigned i = 0; i < s->n_enabled; i++)
		appendf(buf, len, &pos, "+%d/%d", s->enabled[i].plugin,
			(int)s->enabled[i].weight);
	for (unsigned i = 0; i < s->n_disabled; i++)
		appendf(buf, len, &pos, "-%d", s->disabled[i].plugin);
}

static int decode_plugins(struct dec *d, json_t *plugins, struct plugins_in *in)
{
	memset(in, 0, sizeof(*in));
	if (!present(plugins))
		return 0;
	int rc = need_object(d, plugins);
	if (rc != 0)
		return rc;
	in->obj = plugins;
	const char *key;
	json_t *val;
	int walk = 0;
	json_object_foreach(plugins, key, val) {
		int p = 0;
		while (p < PLUGIN_EXT_POINTS && strcmp(plugin_ext_names[p], key) != 0)
			p++;
		size_t m = push_key(d, key, key);
		rc = p < PLUGIN_EXT_POINTS ? decode_plugin_set(d, val, &in->set[p])
				    : unknown_field(d, key);
		pop(d, m);
		if (failed(&walk, rc))
			break;
	}
	return walk;
}

/* ---- pluginConfig args ---------------------------------------------------- */

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
	static const char *const keys[] = {"name", "weight", NULL};
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
	int walk = 0;
	json_array_foreach(list, i, e) {
		const char *name;
		size_t len, m = push_index(d, e, i);
		rc = need_object(d, e);
		if (rc != 0)
			goto fail_entry;
		rc = only_known(d, e, keys);
		int name_rc = get_name(d, e, "a resource name", &name, &len);
		if (name_rc != 0) {
			failed(&rc, name_rc);
			goto fail_entry;
		}
		int64_t weight = 0;
		json_t *w = json_object_get(e, "weight");
		size_t mw = push_key(d, key_anchor(e, "weight"), "weight");
		if (present(w) && !json_is_integer(w)) {
			failed(&rc, fail(d, -EINVAL, "%s is not an integer",
					 show(w, vb, sizeof(vb))));
		} else {
			weight = present(w) ? (int64_t)json_integer_value(w) : 0;
			if (weight == 0)
				weight = 1;
			if (balanced && weight != 1)
				failed(&rc, fail(d, -EINVAL, "%s is not 1 (the only weight "
						 "NodeResourcesBalancedAllocation takes)",
						 show(w, vb, sizeof(vb))));
			else if (weight < 1 || weight > WEIGHT_MAX)
				failed(&rc, fail(d, -ERANGE, "%s is not in 1..%d",
						 show(w, vb, sizeof(vb)), WEIGHT_MAX));
		}
		pop(d, mw);

		size_t mn = push_key(d, key_anchor(e, "name"), "name");
		json_t *nv = json_object_get(e, "name");
		int idx = res_register(d->res, name, len);
		int reg_rc = 0;
		if (idx == -ENOSPC)
			reg_rc = fail(d, -ENOSPC, "%s: too many resource names (shmsched "
				      "knows at most %d)", show(nv, vb, sizeof(vb)),
				      RES_MAX);
		else if (idx == -ENAMETOOLONG)
			reg_rc = fail(d, -ENAMETOOLONG, "%s is longer than %d bytes",
				      show(nv, vb, sizeof(vb)), RES_NAME_MAX - 1);
		else if (idx < 0 || idx >= RES_MAX)
			reg_rc = fail(d, idx < 0 ? idx : -EINVAL, "%s cannot be registered",
				      show(nv, vb, sizeof(vb)));
		for (unsigned j = 0; reg_rc == 0 && j < n; j++)
			if (got[j].resource == idx)
				reg_rc = fail(d, -EINVAL, "%s is listed twice",
					      show(nv, vb, sizeof(vb)));
		failed(&rc, reg_rc);
		/* Distinct indices below RES_MAX: n never passes RES_MAX. */
		if (rc == 0 && n < RES_MAX)
			set_res_weight(&got[n++], idx, weight);
		pop(d, mn);
fail_entry:
		pop(d, m);
		if (failed(&walk, rc))
			break;
	}
	if (walk != 0)
		return walk;
	memcpy(out, got, n * sizeof(got[0]));
	*n_out = (uint8_t)n;
	return 0;
}

/* A function shape (validation_pluginargs.go validateFunctionShape): at
 * least one point; utilizations strictly increasing (the first that is
 * not is reported), each in 0..100; scores in 0..SHAPE_MAX_SCORE. */
static int decode_shape(struct dec *d, json_t *list, struct shape_point *out,
			uint8_t *n_out)
{
	static const char *const keys[] = {"utilization", "score", NULL};
	char vb[SHOW_LEN];
	int64_t util[SHAPE_MAX_POINTS], score[SHAPE_MAX_POINTS];
	int rc = need_array(d, list);
	if (rc != 0)
		return rc;
	size_t n = json_array_size(list);
	if (n == 0)
		return fail(d, -EINVAL, "empty: at least one point must be specified");
	if (n > SHAPE_MAX_POINTS)
		return fail(d, -EINVAL, "%zu points: utilizations strictly increasing "
			    "in 0..100 are at most %d", n, SHAPE_MAX_POINTS);
	int walk = 0;
	size_t i;
	json_t *e;
	json_array_foreach(list, i, e) {
		size_t m = push_index(d, e, i);
		util[i] = score[i] = 0; /* Go's zero values when absent */
		rc = need_object(d, e);
		if (rc == 0) {
			rc = only_known(d, e, keys);
			static const char *const f[] = {"utilization", "score"};
			int64_t *dst[] = {&util[i], &score[i]};
			for (int k = 0; k < 2; k++) {
				json_t *v = json_object_get(e, f[k]);
				if (!present(v))
					continue;
				size_t mk = push_key(d, key_anchor(e, f[k]), f[k]);
				failed(&rc, get_int(d, v, INT32_MIN, INT32_MAX, dst[k]));
				pop(d, mk);
			}
		}
		pop(d, m);
		if (failed(&walk, rc))
			return walk;
	}
	if (walk != 0)
		return walk;
	for (i = 1; i < n; i++)
		if (util[i - 1] >= util[i]) {
			json_t *pt = json_array_get(list, i);
			size_t m = push_index(d, pt, i);
			size_t mu = push_key(d, key_anchor(pt, "utilization"), "utilization");
			failed(&walk, fail(d, -EINVAL, "%lld is not more than the point "
					   "before's %lld: values must be sorted in "
					   "increasing order", (long long)util[i],
					   (long long)util[i - 1]));
			pop(d, mu);
			pop(d, m);
			break;
		}
	for (i = 0; i < n; i++) {
		json_t *pt = json_array_get(list, i);
		size_t m = push_index(d, pt, i);
		if (util[i] < 0 || util[i] > 100) {
			size_t mu = push_key(d, key_anchor(pt, "utilization"), "utilization");
			failed(&walk, fail(d, -ERANGE, "%s is not in 0..100",
					   show(json_object_get(pt, "utilization"), vb,
						sizeof(vb))));
			pop(d, mu);
		}
		if (score[i] < 0 || score[i] > SHAPE_MAX_SCORE) {
			size_t ms = push_key(d, key_anchor(pt, "score"), "score");
			failed(&walk, fail(d, -ERANGE, "%s is not in 0..%d",
					   show(json_object_get(pt, "score"), vb, sizeof(vb)),
					   SHAPE_MAX_SCORE));
			pop(d, ms);
		}
		pop(d, m);
	}
	if (walk != 0)
		return walk;
	memset(out, 0, SHAPE_MAX_POINTS * sizeof(*out));
	for (i = 0; i < n; i++) {
		out[i].utilization = (uint8_t)util[i];
		out[i].score = (uint8_t)score[i];
	}
	*n_out = (uint8_t)n;
	return 0;
}

static int decode_strategy(struct dec *d, json_t *s, struct score_config *sc)
{
	static const char *const keys[] = {"type", "resources",
					   "requestedToCapacityRatio", NULL};
	static const char *const rtcr_keys[] = {"shape", NULL};
	char vb[SHOW_LEN];
	int rc = need_object(d, s);
	if (rc != 0)
		return rc;
	int walk = only_known(d, s, keys);
	/* kube defaults a missing scoringStrategy, not a missing type: an
	 * empty type fails its validation, so it fails here too. */
	json_t *t = json_object_get(s, "type");
	size_t m = push_key(d, key_anchor(s, "type"), "type");
	bool rtcr = false;
	if (!present(t))
		rc = fail(d, -EINVAL, "missing; expected LeastAllocated, "
			  "MostAllocated or RequestedToCapacityRatio");
	else if (str_is(t, "LeastAllocated"))
		sc->fit_strategy = FIT_LEAST_ALLOCATED;
	else if (str_is(t, "MostAllocated"))
		sc->fit_strategy = FIT_MOST_ALLOCATED;
	else if ((rtcr = str_is(t, "RequestedToCapacityRatio")))
		sc->fit_strategy = FIT_REQUESTED_TO_CAPACITY_RATIO;
	else
		rc = fail(d, -EINVAL, "%s is not LeastAllocated, MostAllocated or "
			  "RequestedToCapacityRatio", show(t, vb, sizeof(vb)));
	pop(d, m);
	failed(&walk, rc);

	json_t *r = json_object_get(s, "resources");
	m = push_key(d, key_anchor(s, "resources"), "resources");
	failed(&walk, decode_resources(d, r, false, sc->fit_resources,
				       &sc->n_fit_resources));
	pop(d, m);

	json_t *ratio = json_object_get(s, "requestedToCapacityRatio");
	m = push_key(d, key_anchor(s, "requestedToCapacityRatio"),
		     "requestedToCapacityRatio");
	if (rtcr && !present(ratio)) {
		failed(&walk, fail(d, -EINVAL, "missing: required when type is "
				   "RequestedToCapacityRatio"));
	} else if (!rtcr && present(ratio) && present(t) && walk == 0) {
		failed(&walk, fail(d, -EINVAL, "given, but type is %s: kube-scheduler "
				   "takes it only with RequestedToCapacityRatio",
				   show(t, vb, sizeof(vb))));
	} else if (rtcr) {
		rc = need_object(d, ratio);
		if (rc == 0) {
			rc = only_known(d, ratio, rtcr_keys);
			json_t *shape = json_object_get(ratio, "shape");
			size_t ms = push_key(d, key_anchor(ratio, "shape"), "shape");
			if (present(shape))
				failed(&rc, decode_shape(d, shape, sc->shape,
							 &sc->n_shape));
			else
				failed(&rc, fail(d, -EINVAL, "empty: at least one "
						 "point must be specified"));
			pop(d, ms);
		}
		failed(&walk, rc);
	}
	pop(d, m);
	return walk;
}

static int decode_fit_args(struct dec *d, json_t *args, struct score_config *sc)
{
	static const char *const keys[] = {"apiVersion", "kind", "scoringStrategy",
					   "ignoredResources",
					   "ignoredResourceGroups", NULL};
	int rc = check_args(d, args, "NodeResourcesFitArgs");
	if (rc != 0)
		return rc;
	int walk = only_known(d, args, keys);
	static const char *const lists[] = {"ignoredResources",
					    "ignoredResourceGroups"};
	for (int l = 0; l < 2; l++) {
		json_t *v = json_object_get(args, lists[l]);
		if (!present(v))
			continue;
		size_t m = push_key(d, key_anchor(args, lists[l]), lists[l]);
		rc = need_array(d, v);
		/* An empty list is the default: harmless. Any entry would
		 * let the fit filter ignore a resource shmsched checks. */
		if (rc == 0 && json_array_size(v) > 0)
			rc = not_supported(d);
		pop(d, m);
		failed(&walk, rc);
	}
	json_t *s = json_object_get(args, "scoringStrategy");
	if (present(s)) {
		size_t m = push_key(d, key_anchor(args, "scoringStrategy"),
				    "scoringStrategy");
		failed(&walk, decode_strategy(d, s, sc));
		pop(d, m);
	}
	return walk;
}

static int decode_balanced_args(struct dec *d, json_t *args,
				struct score_config *sc)
{
	static const char *const keys[] = {"apiVersion", "kind", "resources", NULL};
	int rc = check_args(d, args, "NodeResourcesBalancedAllocationArgs");
	if (rc != 0)
		return rc;
	int walk = only_known(d, args, keys);
	size_t m = push_key(d, key_anchor(args, "resources"), "resources");
	failed(&walk, decode_resources(d, json_object_get(args, "resources"), true,
				       sc->balanced_resources,
				       &sc->n_balanced_resources));
	pop(d, m);
	return walk;
}

/* InterPodAffinityArgs. */
static int decode_interpod_args(struct dec *d, json_t *args, struct score_config *sc)
{
	static const char *const keys[] = {"apiVersion", "kind",
					   "hardPodAffinityWeight",
					   "ignorePreferredTermsOfExistingPods", NULL};
	int rc = check_args(d, args, "InterPodAffinityArgs");
	if (rc != 0)
		return rc;
	int walk = only_known(d, args, keys);
	json_t *v = json_object_get(args, "hardPodAffinityWeight");
	if (present(v)) {
		int64_t w;
		size_t m = push_key(d, key_anchor(args, "hardPodAffinityWeight"),
				    "hardPodAffinityWeight");
		if ((rc = get_int(d, v, 0, 100, &w)) == 0)
			sc->hard_pod_affinity_weight = (int32_t)w;
		pop(d, m);
		failed(&walk, rc);
	}
	v = json_object_get(args, "ignorePreferredTermsOfExistingPods");
	if (present(v)) {
		size_t m = push_key(d, key_anchor(args,
						  "ignorePreferredTermsOfExistingPods"),
				    "ignorePreferredTermsOfExistingPods");
		failed(&walk, get_bool(d, v, &sc->ignore_preferred_terms_of_existing));
		pop(d, m);
	}
	return walk;
}

/* One of PodTopologySpreadArgs.defaultConstraints: a
 * TopologySpreadConstraint validated as ValidatePodTopologySpreadArgs
 * does (maxSkew > 0, a topologyKey that is a label name,
 * whenUnsatisfiable given, no labelSelector: each pod's default selector
 * is used), and minDomains (>= 1) and the node inclusion policies as a
 * pod's. */
static int decode_default_constraint(struct dec *d, json_t *c,
				     struct spread_default *out)
{
	static const char *const keys[] = {"maxSkew", "topologyKey",
					   "whenUnsatisfiable", "labelSelector",
					   "minDomains", "nodeAffinityPolicy",
					   "nodeTaintsPolicy", "matchLabelKeys", NULL};
	char vb[SHOW_LEN];
	int rc = need_object(d, c);
	if (rc != 0)
		return rc;
	int walk = only_known(d, c, keys);
	memset(out, 0, sizeof(*out));
	out->min_domains = 1;
	out->node_affinity_policy = SPREAD_POLICY_HONOR;
	out->node_taints_policy = SPREAD_POLICY_IGNORE;
	int64_t v;
	json_t *x = json_object_get(c, "maxSkew");
	size_t m = push_key(d, key_anchor(c, "maxSkew"), "maxSkew");
	if (!present(x))
		rc = fail(d, -EINVAL, "missing: not in valid range (0, inf)");
	else if ((rc = get_int(d, x, 1, INT32_MAX, &v)) == 0)
		out->max_skew = (int32_t)v;
	pop(d, m);
	failed(&walk, rc);

	x = json_object_get(c, "topologyKey");
	m = push_key(d, key_anchor(c, "topologyKey"), "topologyKey");
	if (!present(x) || (json_is_string(x) && json_string_length(x) == 0))
		rc = fail(d, -EINVAL, "missing: can not be empty");
	else if ((rc = need_string(d, x)) == 0 &&
		 !is_qualified_name(json_string_value(x), json_string_length(x)))
		rc = fail(d, -EINVAL, "%s is not a label name", show(x, vb, sizeof(vb)));
	else if (rc == 0)
		rc = intern_value(d, x, &out->topology_key);
	pop(d, m);
	failed(&walk, rc);

	x = json_object_get(c, "whenUnsatisfiable");
	m = push_key(d, key_anchor(c, "whenUnsatisfiable"), "whenUnsatisfiable");
	rc = 0;
	if (!present(x) || str_is(x, ""))
		rc = fail(d, -EINVAL, "missing: can not be empty (DoNotSchedule or "
			  "ScheduleAnyway)");
	else if (str_is(x, "DoNotSchedule"))
		out->hard = true;
	else if (!str_is(x, "ScheduleAnyway"))
		rc = fail(d, -EINVAL, "%s is not DoNotSchedule or ScheduleAnyway",
			  show(x, vb, sizeof(vb)));
	pop(d, m);
	failed(&walk, rc);

	x = json_object_get(c, "labelSelector");
	if (present(x)) {
		m = push_key(d, key_anchor(c, "labelSelector"), "labelSelector");
		failed(&walk, fail(d, -EINVAL, "forbidden: a default constraint must "
				   "not define a selector, as it is deduced for each "
				   "pod"));
		pop(d, m);
	}
	x = json_object_get(c, "minDomains");
	if (present(x)) {
		m = push_key(d, key_anchor(c, "minDomains"), "minDomains");
		if ((rc = get_int(d, x, 1, INT32_MAX, &v)) == 0)
			out->min_domains = (int32_t)v;
		pop(d, m);
		failed(&walk, rc);
	}
	static const char *const policies[] = {"nodeAffinityPolicy",
					       "nodeTaintsPolicy"};
	uint8_t *pol[] = {&out->node_affinity_policy, &out->node_taints_policy};
	for (int k = 0; k < 2; k++) {
		x = json_object_get(c, policies[k]);
		if (!present(x))
			continue;
		m = push_key(d, key_anchor(c, policies[k]), policies[k]);
		rc = 0;
		if (str_is(x, "Honor"))
			*pol[k] = SPREAD_POLICY_HONOR;
		else if (str_is(x, "Ignore"))
			*pol[k] = SPREAD_POLICY_IGNORE;
		else
			rc = fail(d, -EINVAL, "%s is not Honor or Ignore",
				  show(x, vb, sizeof(vb)));
		pop(d, m);
		failed(&walk, rc);
	}
	x = json_object_get(c, "matchLabelKeys");
	if (present(x)) {
		m = push_key(d, key_anchor(c, "matchLabelKeys"), "matchLabelKeys");
		rc = need_array(d, x);
		if (rc == 0 && json_array_size(x) > 0)
			warn_at(d, "accepted, no effect: kube-scheduler sets a default "
				"constraint's selector to the pod's default selector, "
				"whatever these keys would add");
		pop(d, m);
		failed(&walk, rc);
	}
	return walk;
}

/* GpuFragmentationArgs (ours): maxShapes, modelReservation, cpuLimited. */
static int decode_gpu_frag_args(struct dec *d, json_t *args, struct score_config *sc)
{
	static const char *const keys[] = {"apiVersion", "kind", "maxShapes",
					   "modelReservation", "cpuLimited", NULL};
	int rc = check_args(d, args, "GpuFragmentationArgs");
	if (rc != 0)
		return rc;
	int walk = only_known(d, args, keys);
	int64_t v;
	json_t *x = json_object_get(args, "maxShapes");
	if (present(x)) {
		size_t m = push_key(d, key_anchor(args, "maxShapes"), "maxShapes");
		if ((rc = get_int(d, x, 1, SCORE_GPU_FRAG_MAX_SHAPES, &v)) == 0)
			sc->gpu_frag_max_shapes = (int32_t)v;
		pop(d, m);
		failed(&walk, rc);
	}
	x = json_object_get(args, "modelReservation");
	if (present(x)) {
		size_t m = push_key(d, key_anchor(args, "modelReservation"),
				    "modelReservation");
		if ((rc = get_int(d, x, 0, 1000, &v)) == 0)
			sc->gpu_frag_model_reservation = (int32_t)v;
		pop(d, m);
		failed(&walk, rc);
	}
	x = json_object_get(args, "cpuLimited");
	if (present(x)) {
		size_t m = push_key(d, key_anchor(args, "cpuLimited"), "cpuLimited");
		failed(&walk, get_bool(d, x, &sc->gpu_frag_cpu_limited));
		pop(d, m);
	}
	return walk;
}

/* PodTopologySpreadArgs: defaultingType System (kube's defaults: it takes
 * no defaultConstraints) or List with the profile's own constraints
 * (none: no default spreading). */
static int decode_spread_args(struct dec *d, json_t *args, struct score_config *sc)
{
	static const char *const keys[] = {"apiVersion", "kind", "defaultConstraints",
					   "defaultingType", NULL};
	char vb[SHOW_LEN];
	int rc = check_args(d, args, "PodTopologySpreadArgs");
	if (rc != 0)
		return rc;
	int walk = only_known(d, args, keys);
	/* defaults.go: none or "" is System. */
	json_t *dt = json_object_get(args, "defaultingType");
	bool list = false;
	size_t m = push_key(d, key_anchor(args, "defaultingType"), "defaultingType");
	if (present(dt) && str_is(dt, "List"))
		list = true;
	else if (present(dt) && !str_is(dt, "System") && !str_is(dt, ""))
		failed(&walk, fail(d, -EINVAL, "%s is not System or List",
				   show(dt, vb, sizeof(vb))));
	pop(d, m);
	sc->spread_defaulting = list ? SPREAD_DEFAULTING_LIST : SPREAD_DEFAULTING_SYSTEM;
	sc->n_default_spread = 0;
	memset(sc->default_spread, 0, sizeof(sc->default_spread));

	json_t *dc = json_object_get(args, "defaultConstraints");
	if (!present(dc))
		return walk;
	m = push_key(d, key_anchor(args, "defaultConstraints"), "defaultConstraints");
	rc = need_array(d, dc);
	if (rc == 0 && json_array_size(dc) > 0 && !list && walk == 0)
		rc = fail(d, -EINVAL, "given, but defaultingType is System: "
			  "kube-scheduler takes defaultConstraints only with "
			  "defaultingType List");
	else if (rc == 0 && json_array_size(dc) > SPREAD_MAX_DEFAULTS)
		rc = fail(d, -ENOSPC, "%zu constraints, at most %d "
			  "(SPREAD_MAX_DEFAULTS)", json_array_size(dc),
			  SPREAD_MAX_DEFAULTS);
	if (rc != 0 || !list) {
		pop(d, m);
		failed(&walk, rc);
		return walk;
	}
	size_t i;
	json_t *c;
	unsigned n = 0;
	json_array_foreach(dc, i, c) {
		size_t mi = push_index(d, c, i);
		struct spread_default got;
		rc = decode_default_constraint(d, c, &got);
		/* validateConstraintNotRepeat: one per key and action. */
		for (unsigned j = 0; rc == 0 && j < n; j++)
			if (sc->default_spread[j].topology_key == got.topology_key &&
			    sc->default_spread[j].hard == got.hard)
				rc = fail(d, -EINVAL, "the same topologyKey and "
					  "whenUnsatisfiable as defaultConstraints[%u] "
					  "(kube-scheduler: Duplicate value)", j);
		if (rc == 0)
			sc->default_spread[n++] = got;
		pop(d, mi);
		if (failed(&walk, rc))
			break;
	}
	sc->n_default_spread = (uint8_t)n;
	pop(d, m);
	return walk;
}

/* NodeAffinityArgs.addedAffinity: the keys of a core/v1 NodeAffinity,
 * checked strictly here (the pod decoder ignores unknown fields), then
 * read by the pod decoder (ingest/k8s_json.c) as a pod's node affinity, so
 * both mean the same. */
static int check_node_affinity_keys(struct dec *d, json_t *na)
{
	static const char *const aff[] = {
		"requiredDuringSchedulingIgnoredDuringExecution",
		"preferredDuringSchedulingIgnoredDuringExecution", NULL};
	static const char *const selector[] = {"nodeSelectorTerms", NULL};
	static const char *const term[] = {"matchExpressions", "matchFields", NULL};
	static const char *const req[] = {"key", "operator", "values", NULL};
	static const char *const pref[] = {"weight", "preference", NULL};
	if (!json_is_object(na))
		return 0; /* the pod decoder names the type */
	int walk = only_known(d, na, aff);
	json_t *r = json_object_get(na, aff[0]);
	json_t *terms = json_is_object(r) ? json_object_get(r, selector[0]) : NULL;
	json_t *prefs = json_object_get(na, aff[1]);
	if (json_is_object(r)) {
		size_t m = push_key(d, key_anchor(na, aff[0]), aff[0]);
		failed(&walk, only_known(d, r, selector));
		pop(d, m);
	}
	/* Every term, required or preferred, with its path. */
	for (int kind = 0; kind < 2; kind++) {
		json_t *list = kind == 0 ? terms : prefs;
		if (!json_is_array(list))
			continue;
		size_t m0 = push_key(d, key_anchor(na, aff[kind]), aff[kind]);
		size_t m1 = kind == 0 ? push_key(d, key_anchor(r, selector[0]),
						 selector[0]) : 0;
		size_t i;
		json_t *t;
		json_array_foreach(list, i, t) {
			size_t mi = push_index(d, t, i);
			json_t *tt = t;
			size_t mp = 0;
			if (kind == 1 && json_is_object(t)) {
				failed(&walk, only_known(d, t, pref));
				tt = json_object_get(t, "preference");
				mp = push_key(d, key_anchor(t, "preference"), "preference");
			}
			if (json_is_object(tt)) {
				failed(&walk, only_known(d, tt, term));
				for (int l = 0; term[l] != NULL; l++) {
					json_t *reqs = json_object_get(tt, term[l]);
					if (!json_is_array(reqs))
						continue;
					size_t ml = push_key(d, key_anchor(tt, term[l]),
							     term[l]);
					size_t k;
					json_t *rq;
					json_array_foreach(reqs, k, rq) {
						size_t mk = push_index(d, rq, k);
						if (json_is_object(rq))
							failed(&walk, only_known(d, rq, req));
						pop(d, mk);
					}
					pop(d, ml);
				}
			}
			if (kind == 1 && json_is_object(t))
				pop(d, mp);
			pop(d, mi);
		}
		if (kind == 0)
			pop(d, m1);
		pop(d, m0);
	}
	return walk;
}

static int decode_added_affinity(struct dec *d, json_t *na, struct score_config *sc)
{
	int rc = check_node_affinity_keys(d, na);
	if (rc != 0)
		return rc;
	if (d->strings == NULL)
		return fail(d, -EINVAL, "cannot be read here (no string table given)");
	/* As a pod: {"kind": "Pod", "metadata": ..., "spec": {"affinity":
	 * {"nodeAffinity": <addedAffinity>}}}. */
	json_t *pod = json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:{s:O}}}",
				"apiVersion", "v1", "kind", "Pod", "metadata",
				"name", "added-affinity", "namespace", "default",
				"spec", "affinity", "nodeAffinity", na);
	char *text = pod != NULL ? json_dumps(pod, JSON_COMPACT) : NULL;
	json_decref(pod);
	if (text == NULL)
		return fail(d, -ENOMEM, "out of memory");
	struct pod_spec got;
	char why[512];
	struct k8s_ctx kc = {.strings = d->strings, .res = d->res,
			     .no_new_resources = true};
	rc = k8s_load_one("", text, strlen(text), &kc, &got, NULL, why, sizeof(why));
	free(text);
	if (rc < 0) {
		/* "<name>: pod default/added-affinity: spec.affinity.nodeAffinity.X:
		 * msg" -> "X: msg", under this path. */
		static const char lead[] = "spec.affinity.nodeAffinity";
		const char *at = strstr(why, lead);
		at = at != NULL ? at + sizeof(lead) - 1 : why;
		if (*at == '.')
			at++;
		return fail(d, rc, "%s (read as a pod's node affinity)", at);
	}
	/* NewNodeSelector (component-helpers nodeaffinity.go) reports every
	 * requirement labels.NewRequirement refuses, and the plugin's New
	 * fails on it: the pod decoder only marks those in required terms. */
	for (unsigned i = 0; i < got.n_exprs; i++)
		if (got.exprs[i].invalid)
			return fail(d, -EINVAL, "requiredDuringSchedulingIgnoredDuring"
				    "Execution: a requirement's value is not a valid "
				    "label value (or, for Gt / Lt, not an integer); "
				    "kube-scheduler's NewNodeSelector refuses it "
				    "(read as a pod's node affinity)");
	struct pod_spec *a = &sc->added_affinity;
	memset(a, 0, sizeof(*a));
	a->has_required = got.has_required;
	a->n_terms = got.n_terms;
	a->n_preferred = got.n_preferred;
	a->n_exprs = got.n_exprs;
	a->n_values = got.n_values;
	memcpy(a->terms, got.terms, sizeof(a->terms));
	memcpy(a->preferred, got.preferred, sizeof(a->preferred));
	memcpy(a->exprs, got.exprs, sizeof(a->exprs));
	memcpy(a->values, got.values, sizeof(a->values));
	sc->has_added_affinity = a->has_required || a->n_preferred > 0;
	return 0;
}

static int decode_node_affinity_args(struct dec *d, json_t *args,
				     struct score_config *sc)
{
	static const char *const keys[] = {"apiVersion", "kind", "addedAffinity",
					   NULL};
	int rc = check_args(d, args, "NodeAffinityArgs");
	if (rc != 0)
		return rc;
	int walk = only_known(d, args, keys);
	json_t *na = json_object_get(args, "addedAffinity");
	if (present(na)) {
		size_t m = push_key(d, key_anchor(args, "addedAffinity"), "addedAffinity");
		failed(&walk, decode_added_affinity(d, na, sc));
		pop(d, m);
	}
	return walk;
}

/* Args of plugins whose args shmsched does not read (DefaultPreemption:
 * shmschedd's preemption keeps kube's defaults; volumes, claims: not run):
 * their fields checked as kube checks them, then one warning. */
static int decode_idle_args(struct dec *d, json_t *args, const char *plugin)
{
	static const char *const preempt[] = {"apiVersion", "kind",
					      "minCandidateNodesPercentage",
					      "minCandidateNodesAbsolute", NULL};
	static const char *const volume[] = {"apiVersion", "kind",
					     "bindTimeoutSeconds", "shape", NULL};
	static const char *const dra[] = {"apiVersion", "kind", "filterTimeout",
					  "bindingTimeout", NULL};
	char kind[64];
	snprintf(kind, sizeof(kind), "%sArgs", plugin);
	int rc = check_args(d, args, kind);
	if (rc != 0)
		return rc;
	int walk;
	if (strcmp(plugin, "DefaultPreemption") == 0) {
		walk = only_known(d, args, preempt);
		/* defaults.go 10 and 100; validation: 0..100, >= 0, not both 0. */
		int64_t v[2] = {10, 100};
		for (int k = 0; k < 2; k++) {
			const char *f = preempt[2 + k];
			json_t *x = json_object_get(args, f);
			if (!present(x))
				continue;
			size_t m = push_key(d, key_anchor(args, f), f);
			failed(&walk, get_int(d, x, 0, k == 0 ? 100 : INT32_MAX, &v[k]));
			pop(d, m);
		}
		if (walk == 0 && v[0] == 0 && v[1] == 0)
			failed(&walk, fail(d, -EINVAL, "minCandidateNodesPercentage and "
					   "minCandidateNodesAbsolute cannot both be 0"));
		if (walk == 0)
			warn_at(d, "accepted, no effect: shmschedd's preemption uses kube's "
				"defaults (10%%, at least 100 candidate nodes)");
	} else if (strcmp(plugin, "VolumeBinding") == 0) {
		walk = only_known(d, args, volume);
		json_t *x = json_object_get(args, "bindTimeoutSeconds");
		int64_t v;
		if (present(x)) {
			size_t m = push_key(d, key_anchor(args, "bindTimeoutSeconds"),
					    "bindTimeoutSeconds");
			failed(&walk, get_int(d, x, 0, INT64_MAX, &v));
			pop(d, m);
		}
		x = json_object_get(args, "shape");
		if (present(x)) {
			struct shape_point pts[SHAPE_MAX_POINTS];
			uint8_t n;
			size_t m = push_key(d, key_anchor(args, "shape"), "shape");
			failed(&walk, decode_shape(d, x, pts, &n));
			pop(d, m);
		}
		if (walk == 0)
			warn_at(d, "accepted, no effect: shmsched places no pod with "
				"volumes to bind");
	} else {
		walk = only_known(d, args, dra);
		for (int k = 2; dra[k] != NULL; k++) {
			json_t *x = json_object_get(args, dra[k]);
			if (!present(x))
				continue;
			size_t m = push_key(d, key_anchor(args, dra[k]), dra[k]);
			failed(&walk, need_string(d, x));
			pop(d, m);
		}
		if (walk == 0)
			warn_at(d, "accepted, no effect: shmsched places no pod with "
				"resource claims");
	}
	return walk;
}

static int decode_plugin_config(struct dec *d, json_t *list,
				struct score_config *sc)
{
	static const char *const keys[] = {"name", "args", NULL};
	char vb[SHOW_LEN];
	if (!present(list))
		return 0;
	int rc = need_array(d, list);
	if (rc != 0)
		return rc;
	int walk = 0;
	size_t i;
	json_t *e;
	json_array_foreach(list, i, e) {
		const char *name;
		size_t len, m = push_index(d, e, i);
		rc = need_object(d, e);
		if (rc != 0)
			goto next;
		rc = only_known(d, e, keys);
		int name_rc = get_name(d, e, "a plugin name", &name, &len);
		if (name_rc != 0) {
			failed(&rc, name_rc);
			goto next;
		}
		json_t *nv = json_object_get(e, "name");
		/* validatePluginConfig: one config per name. */
		for (size_t j = 0; j < i; j++) {
			json_t *other = json_object_get(json_array_get(list, j), "name");
			if (json_is_string(other) && json_equal(other, nv)) {
				size_t mn = push_key(d, key_anchor(e, "name"), "name");
				failed(&rc, fail(d, -EINVAL, "%s is configured twice "
						 "(pluginConfig[%zu]; kube-scheduler: "
						 "Duplicate value)",
						 show(nv, vb, sizeof(vb)), j));
				pop(d, mn);
				goto next;
			}
		}
		json_t *args = json_object_get(e, "args");
		size_t ma = push_key(d, key_anchor(e, "args"), "args");
		int p = plugin_entry_lookup(name, len);
		if (is_one_of(name, len, plugins_removed)) {
			size_t mn = push_key(d, key_anchor(e, "name"), "name");
			failed(&rc, fail(d, -EINVAL, "%s was invalid in version \"%s\"",
					 show(nv, vb, sizeof(vb)), CONFIG_API_VERSION));
			pop(d, mn);
		} else if (!present(args)) {
			/* None: the plugin's defaults. */
		} else if (p >= 0 && plugin_table[p].score == SCORE_FIT) {
			failed(&rc, decode_fit_args(d, args, sc));
		} else if (p >= 0 && plugin_table[p].score == SCORE_BALANCED) {
			failed(&rc, decode_balanced_args(d, args, sc));
		} else if (p >= 0 && plugin_table[p].score == SCORE_INTER_POD) {
			failed(&rc, decode_interpod_args(d, args, sc));
		} else if (p >= 0 && plugin_table[p].score == SCORE_SPREAD) {
			failed(&rc, decode_spread_args(d, args, sc));
		} else if (p >= 0 && plugin_table[p].score == SCORE_AFFINITY) {
			failed(&rc, decode_node_affinity_args(d, args, sc));
		} else if (p >= 0 && plugin_table[p].score == SCORE_GPU_FRAG) {
			failed(&rc, decode_gpu_frag_args(d, args, sc));
		} else if (is_one_of(name, len, (const char *const[]){
					     "DefaultPreemption", "VolumeBinding",
					     "DynamicResources", NULL})) {
			failed(&rc, decode_idle_args(d, args, name));
		} else if (p >= 0) {
			warn_at(d, "accepted, no effect: %s takes no args",
				show(nv, vb, sizeof(vb)));
		} else {
			warn_at(d, "accepted, no effect: %s is no plugin of shmsched's "
				"or kube-scheduler's", show(nv, vb, sizeof(vb)));
		}
		pop(d, ma);
next:
		pop(d, m);
		if (failed(&walk, rc))
			break;
	}
	return walk;
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
	default_resources(sc->fit_resources, &sc->n_fit_resources);
	default_resources(sc->balanced_resources, &sc->n_balanced_resources);
}

#define QUEUE_SORT_SIG 512

static int decode_scheduler_name(struct dec *d, json_t *v, bool single,
				 struct sched_profile *p)
{
	char vb[SHOW_LEN];
	/* defaults.go names the profile only when it is the only one. */
	if (!present(v))
		return single ? 0 : fail(d, -EINVAL, "missing: every profile of "
					 "several needs its schedulerName");
	if (!json_is_string(v))
		return fail(d, -EINVAL, "%s is not a string", show(v, vb, sizeof(vb)));
	size_t n = json_string_length(v);
	if (n == 0)
		return fail(d, -EINVAL, "empty: a profile needs a schedulerName");
	if (n > SCHED_NAME_MAX || strlen(json_string_value(v)) != n)
		return fail(d, -EINVAL, "%s is not a scheduler name (at most %d bytes, "
			    "no NUL)", show(v, vb, sizeof(vb)), SCHED_NAME_MAX);
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
	int rc = need_object(d, prof);
	if (rc != 0)
		return rc;
	int walk = only_known(d, prof, keys);
	size_t m = push_key(d, key_anchor(prof, "schedulerName"), "schedulerName");
	failed(&walk, decode_scheduler_name(d, json_object_get(prof, "schedulerName"),
					    single, p));
	pop(d, m);

	json_t *v = json_object_get(prof, "percentageOfNodesToScore");
	if (present(v)) {
		int64_t pct;
		m = push_key(d, key_anchor(prof, "percentageOfNodesToScore"),
			     "percentageOfNodesToScore");
		if ((rc = get_int(d, v, 0, 100, &pct)) == 0)
			p->percentage_of_nodes_to_score = (int32_t)pct;
		pop(d, m);
		failed(&walk, rc);
	}

	/* Plugins, defaults included: the expansion gives every weight. */
	json_t *plugins = json_object_get(prof, "plugins");
	m = push_key(d, key_anchor(prof, "plugins"), "plugins");
	rc = decode_plugins(d, plugins, in);
	if (rc == 0) {
		struct plugins_out out;
		rc = expand_plugins(d, in, &out);
		if (rc == 0)
			rc = apply_plugins(d, in, &out, &p->score);
		queue_sort_signature(&in->set[PLUGIN_EXT_QUEUE_SORT], queue_sig,
				     QUEUE_SORT_SIG);
	}
	pop(d, m);
	failed(&walk, rc);

	m = push_key(d, key_anchor(prof, "pluginConfig"), "pluginConfig");
	failed(&walk, decode_plugin_config(d, json_object_get(prof, "pluginConfig"),
					   &p->score));
	pop(d, m);
	return walk;
}

static int decode_profiles(struct dec *d, json_t *list, struct sched_config *cfg)
{
	char vb[SHOW_LEN];
	if (!present(list))
		return 0;
	int rc = need_array(d, list);
	if (rc != 0)
		return rc;
	size_t n = json_array_size(list);
	/* None: kube-scheduler adds one default profile. */
	if (n == 0)
		return 0;
	int walk = 0;
	if (n > SCHED_MAX_PROFILES) {
		size_t m = push_index(d, json_array_get(list, SCHED_MAX_PROFILES),
				      SCHED_MAX_PROFILES);
		failed(&walk, fail(d, -ENOSPC, "%zu profiles, at most %d "
				   "(SCHED_MAX_PROFILES)", n, SCHED_MAX_PROFILES));
		pop(d, m);
		n = SCHED_MAX_PROFILES;
	}
	struct plugins_in *in = malloc(sizeof(*in));
	char (*sig)[QUEUE_SORT_SIG] = malloc(SCHED_MAX_PROFILES * sizeof(*sig));
	if (in == NULL || sig == NULL) {
		free(in);
		free(sig);
		return fail(d, -ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < n; i++) {
		json_t *prof = json_array_get(list, i);
		profile_default(&cfg->profiles[i]);
		size_t m = push_index(d, prof, i);
		rc = decode_profile(d, prof, n == 1, &cfg->profiles[i], in, sig[i]);
		pop(d, m);
		if (failed(&walk, rc))
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
			size_t m = push_index(d, prof, i);
			size_t mn = push_key(d, key_anchor(prof, "schedulerName"),
					     "schedulerName");
			failed(&walk, fail(d, -EINVAL, "%s is profiles[%zu]'s "
					   "schedulerName too (kube-scheduler: "
					   "Duplicate value)",
					   show(name, vb, sizeof(vb)), j));
			pop(d, mn);
			pop(d, m);
			break;
		}
		if (strcmp(sig[i], sig[0]) != 0) {
			size_t m = push_index(d, prof, i);
			json_t *pl = json_object_get(prof, "plugins");
			size_t mp = push_key(d, key_anchor(prof, "plugins"), "plugins");
			size_t mq = push_key(d, json_is_object(pl)
						? key_anchor(pl, "queueSort") : NULL,
					     "queueSort");
			failed(&walk, fail(d, -EINVAL, "not profiles[0]'s: the queue "
					   "sort must be the same for all profiles"));
			pop(d, mq);
			pop(d, mp);
			pop(d, m);
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
	int rc = need_object(d, v);
	if (rc != 0)
		return rc;
	int walk = only_known(d, v, keys);
	for (int k = 0; k < 3; k++) {
		json_t *x = json_object_get(v, keys[k]);
		if (!present(x))
			continue;
		size_t m = push_key(d, key_anchor(v, keys[k]), keys[k]);
		failed(&walk, need_string(d, x));
		pop(d, m);
	}
	json_t *x = json_object_get(v, "qps");
	if (present(x) && !json_is_number(x)) {
		size_t m = push_key(d, key_anchor(v, "qps"), "qps");
		failed(&walk, fail(d, -EINVAL, "%s is not a number",
				   show(x, vb, sizeof(vb))));
		pop(d, m);
	}
	x = json_object_get(v, "burst");
	if (present(x)) {
		int64_t b;
		size_t m = push_key(d, key_anchor(v, "burst"), "burst");
		failed(&walk, get_int(d, x, 0, INT32_MAX, &b));
		pop(d, m);
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
	int rc = need_object(d, v);
	if (rc != 0)
		return rc;
	int walk = only_known(d, v, keys);
	bool elect = false;
	json_t *x = json_object_get(v, "leaderElect");
	if (present(x)) {
		size_t m = push_key(d, key_anchor(v, "leaderElect"), "leaderElect");
		failed(&walk, get_bool(d, x, &elect));
		pop(d, m);
	}
	for (int k = 1; keys[k] != NULL; k++) {
		x = json_object_get(v, keys[k]);
		if (!present(x))
			continue;
		size_t m = push_key(d, key_anchor(v, keys[k]), keys[k]);
		failed(&walk, need_string(d, x));
		pop(d, m);
	}
	/* validation.go: only lease locks. */
	x = json_object_get(v, "resourceLock");
	if (elect && json_is_string(x) && !str_is(x, "leases") && !str_is(x, "")) {
		size_t m = push_key(d, key_anchor(v, "resourceLock"), "resourceLock");
		failed(&walk, fail(d, -EINVAL, "%s: resourceLock value must be "
				   "\"leases\"", show(x, vb, sizeof(vb))));
		pop(d, m);
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
		if (!present(val))
			return 0;
		if ((rc = get_int(d, val, 1, INT32_MAX, &v)) != 0)
			return rc;
		if (strcmp(key, "parallelism") == 0) {
			cfg->parallelism = (int32_t)v;
			warn_at(d, "accepted, no effect: shmsched's workers are "
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
		if (!present(val))
			return 0;
		rc = key[0] == 'c' ? decode_connection(d, val)
				   : decode_leader_election(d, val);
		if (rc == 0)
			warn_at(d, "accepted, no effect in shmsched (one daemon per "
				"state region; no API server connection)");
		return rc;
	}
	for (int i = 0; strings[i] != NULL; i++)
		if (strcmp(key, strings[i]) == 0) {
			if (present(val) && (rc = need_string(d, val)) != 0)
				return rc;
			warn_at(d, "accepted, no effect in shmsched");
			return 0;
		}
	for (int i = 0; bools[i] != NULL; i++)
		if (strcmp(key, bools[i]) == 0) {
			bool b;
			if (present(val) && (rc = get_bool(d, val, &b)) != 0)
				return rc;
			warn_at(d, "accepted, no effect in shmsched");
			return 0;
		}
	if (strcmp(key, "extenders") == 0) {
		if (present(val) && (rc = need_array(d, val)) != 0)
			return rc;
		/* An extender filters and scores over HTTP, per pod: shmsched
		 * cannot call one, and ignoring it would change placements. */
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
	int walk = 0;
	json_object_foreach(root, key, val) {
		size_t m = push_key(d, key, key);
		if (is_type_key(key))
			rc = 0;
		else if (strcmp(key, "percentageOfNodesToScore") == 0)
			rc = present(val) ? get_int(d, val, 0, 100, &pct) : 0;
		else if (strcmp(key, "profiles") == 0)
			rc = decode_profiles(d, val, cfg);
		else
			rc = decode_other_top(d, key, val, cfg);
		pop(d, m);
		if (failed(&walk, rc))
			return walk;
	}
	if (cfg->pod_initial_backoff_seconds > cfg->pod_max_backoff_seconds) {
		size_t m = push_key(d, key_anchor(root, "podInitialBackoffSeconds"),
				    "podInitialBackoffSeconds");
		rc = fail(d, -EINVAL, "%d is more than podMaxBackoffSeconds (%d)",
			  cfg->pod_initial_backoff_seconds,
			  cfg->pod_max_backoff_seconds);
		pop(d, m);
		failed(&walk, rc);
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
		return fail_line(&d, 0, -EINVAL, "no configuration or registry given");
	if (buf == NULL)
		buf = "";

	rc = parse_tree(&d, &lines, buf, len, &root);
	if (rc != 0)
		goto fail_parse;
	/* On the heap: a config is some 40 KiB. */
	next = malloc(sizeof(*next));
	if (next == NULL) {
		rc = fail_line(&d, 0, -ENOMEM, "out of memory");
		goto fail_alloc;
	}
	sched_config_default(next);
	memcpy(&saved, res, sizeof(saved));
	if (strings != NULL)
		intern_mark(strings, &mark);
	rc = decode_root(&d, root, next);
	if (rc != 0) {
		if (d.n_dropped > 0 && err != NULL && err_len > 0)
			appendf(err, err_len, &d.err_pos, "\n(and %u more error%s)",
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
	rc = sched_config_load_buffer(path, buf, len, cfg, res, strings, err,
				      err_len);

fail_read:
	free(buf);
fail_alloc:
	close(fd);
	return rc;
}
