/* KubeSchedulerConfiguration reader, stage 1: the bytes to one jansson
 * tree (sched_config_internal.h; the design note is sched_config_load.c's).
 *
 * JSON through json_loadb when the text starts with '{' (falling back to
 * YAML, since a YAML flow mapping starts so too), YAML through libyaml's
 * event parser otherwise. YAML scalars are resolved like YAML 1.2's core
 * schema, reduced: plain integers become integers, plain decimals reals,
 * true/false booleans, null/~/empty null, everything else (quoted scalars
 * always) strings. Anchors, aliases, explicit tags other than !!str and a
 * second document are refused: kube-scheduler reads one plain document,
 * and an alias would let a small file expand into a large tree. The line
 * of every container, non-singleton scalar and mapping key is recorded
 * (scfg_lines_add) for the decoder's messages.
 *
 * Cost: linear in the input; nesting is limited to YAML_DEPTH_MAX so the
 * recursive builder's stack is bounded; jansson limits JSON nesting
 * itself. */
#include "ingest/sched_config_internal.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

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
		return scfg_fail_line(y->d, 0, -ENOMEM, "out of memory reading YAML");
	const char *problem = p->problem ? p->problem : "not valid YAML";
	if (p->context != NULL)
		return scfg_fail_line(y->d, mark_line(&p->problem_mark), -EINVAL,
				 "%s: %s", p->context, problem);
	return scfg_fail_line(y->d, mark_line(&p->problem_mark), -EINVAL, "%s",
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

/* A plain scalar's value by the (reduced) core schema. `s` is
 * NUL-terminated by libyaml and holds no NUL (the reader refuses them). */
static json_t *yaml_plain(const char *s, size_t n)
{
	static const char *const nulls[] = {"", "~", "null", "Null", "NULL", NULL};
	static const char *const trues[] = {"true", "True", "TRUE", NULL};
	static const char *const falses[] = {"false", "False", "FALSE", NULL};
	if (scfg_is_one_of(s, n, nulls))
		return json_null();
	if (scfg_is_one_of(s, n, trues))
		return json_true();
	if (scfg_is_one_of(s, n, falses))
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
			return scfg_fail_line(y->d, line, -EINVAL,
					 "YAML tag %s is not supported (only !!str)",
					 tag);
		plain = false;
	}
	json_t *v = plain ? yaml_plain(s, n) : json_stringn(s, n);
	if (v == NULL)
		return scfg_fail_line(y->d, line, -EINVAL,
				 "a scalar is not valid UTF-8 or memory ran out");
	if (!json_is_null(v) && !json_is_boolean(v))
		scfg_lines_add(y->lines, v, line); /* not the shared singletons */
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
		return scfg_fail_line(y->d, line, -ENOMEM, "out of memory");
	scfg_lines_add(y->lines, arr, line);
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
			rc = scfg_fail_line(y->d, line, -ENOMEM, "out of memory");
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
		return scfg_fail_line(y->d, line, -ENOMEM, "out of memory");
	scfg_lines_add(y->lines, obj, line);
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
			rc = scfg_fail_line(y->d, key_line, -EINVAL,
				       "a mapping key must be a plain string");
			goto fail_key_event;
		}
		const char *k = (const char *)key.data.scalar.value;
		if (strlen(k) != key.data.scalar.length) {
			rc = scfg_fail_line(y->d, key_line, -EINVAL,
				       "a mapping key holds a NUL character");
			goto fail_key_event;
		}
		if (json_object_get(obj, k) != NULL) {
			rc = scfg_fail_line(y->d, key_line, -EINVAL,
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
			rc = scfg_fail_line(y->d, key_line, -ENOMEM,
				       "cannot store key (out of memory or not UTF-8)");
			goto fail_key_event;
		}
		scfg_lines_add(y->lines, json_object_iter_key(json_object_iter_at(obj, k)),
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
		rc = scfg_fail_line(y->d, line, -EINVAL,
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
		rc = scfg_fail_line(y->d, line, -EINVAL, "unexpected YAML structure");
		goto done;
	}
	if (anchor != NULL) {
		rc = scfg_fail_line(y->d, line, -EINVAL,
			       "YAML anchors (&%s) are not supported",
			       (const char *)anchor);
		goto done;
	}
	if (tag != NULL) {
		rc = scfg_fail_line(y->d, line, -EINVAL, "YAML tag %s is not supported",
			       (const char *)tag);
		goto done;
	}
	if (ev->type != YAML_SCALAR_EVENT && depth >= YAML_DEPTH_MAX) {
		rc = scfg_fail_line(y->d, line, -EINVAL, "nested deeper than %d levels",
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
		return scfg_fail_line(d, 0, -ENOMEM, "out of memory");
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
		rc = scfg_fail_line(d, mark_line(&ev.start_mark), -EINVAL,
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

int scfg_parse_tree(struct dec *d, struct line_table *lines, const char *buf,
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
		struct dec quiet = {.in = {.source = d->in.source, .err = discard,
					   .err_len = sizeof(discard),
					   .max_lines = SCHED_CONFIG_ERRORS_MAX}};
		if (yaml_load(&quiet, lines, buf, len, root) == 0)
			return 0;
		lines->n = 0;
		return scfg_fail_line(d, jerr.line > 0 ? (unsigned)jerr.line : 0,
				 -EINVAL, "%s", jerr.text);
	}
	return yaml_load(d, lines, buf, len, root);
}
