/* The strict JSON decoders' one core: a path stack, typed access to
 * jansson values, and one error line, shared by the Kubernetes decoder
 * (ingest/k8s_json.h) and the gateway's request bodies (gateway/decode.c).
 *
 * The error line is "<source>: <subject>: <path>: <what>", each of the
 * first three left out when empty: source names the input ("cluster.json",
 * "line 3"), subject the object being read ("pod default/web-7"), path
 * the field inside it as Go spells it ("spec.containers[0].image", a map
 * key that is not plain as `["a b"]`). A type error reads "expected an
 * object, got an array". Values are quoted escaped and cut at
 * JSON_IN_SHOW_MAX bytes, so an error line is bounded whatever the input.
 *
 * Errors collected: every json_in_fail() counts in n_errors. With
 * max_lines 0 (the Kubernetes decoder, the gateway: they return on the
 * first error) its line replaces err's, so a caller may replace a callee's
 * line with a better one. With max_lines > 0 (a decoder that reads on
 * after an error, the field's next sibling, to report a file's errors
 * together) each line is appended, one per line, up to max_lines; those
 * past it are counted in n_dropped for the caller to say so.
 *
 * A decoder that knows the input line (YAML) sets `line` before failing:
 * the source reads "<source>:<line>".
 *
 * Go reads a null member as an absent one: json_in_get() gives NULL for
 * both. The header declares jansson's json_t without including jansson.h,
 * so base/base.h stays free of it; the library (base_json) links jansson.
 */
#ifndef SHMSCHED_BASE_JSON_IN_H
#define SHMSCHED_BASE_JSON_IN_H

#include <stdbool.h>
#include <stddef.h>

typedef struct json_t json_t; /* jansson's; C11 allows the repeat */

#define JSON_IN_SHOW_MAX 80 /* bytes of a value quoted in a message */
#define JSON_IN_PATH_MAX 512
#define JSON_IN_SUBJECT_MAX 320

struct json_in {
	const char *source;                /* NULL or "": left out */
	char subject[JSON_IN_SUBJECT_MAX]; /* "": left out */
	char path[JSON_IN_PATH_MAX];
	size_t path_len;
	unsigned line; /* 0: none; else "<source>:<line>" */
	char *err; /* the error line(s); NULL or err_len 0: none written */
	size_t err_len;
	unsigned max_lines; /* 0: one line, replaced; else appended up to this */
	unsigned n_errors;  /* every error */
	unsigned n_dropped; /* errors past max_lines, not written */
	size_t err_pos;     /* where the next appended line goes */
};

enum json_in_want {
	JSON_IN_OBJECT,
	JSON_IN_ARRAY,
	JSON_IN_STRING,
	JSON_IN_BOOL,
	JSON_IN_INT,
};

/* "an object", "a string", "a number", "null" ...; "nothing" for NULL. */
const char *json_in_kind(const json_t *v);
/* What `w` asks for, as json_in_kind() says it ("an integer" for INT). */
const char *json_in_want_text(enum json_in_want w);
bool json_in_is(const json_t *v, enum json_in_want w);

/* `s` quoted for a message into buf: escaped, cut at JSON_IN_SHOW_MAX. */
const char *json_in_show_str(const char *s, size_t len, char *buf, size_t buf_len);
/* A value for a message: a string quoted, a number written, else its kind. */
const char *json_in_show(const json_t *v, char *buf, size_t buf_len);
bool json_in_str_is(const char *s, size_t len, const char *lit);

/* The path: each push returns a mark that json_in_pop() goes back to. A
 * path longer than JSON_IN_PATH_MAX is cut, never overrun. */
size_t json_in_push(struct json_in *in, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void json_in_pop(struct json_in *in, size_t mark);
size_t json_in_field(struct json_in *in, const char *name);
size_t json_in_index(struct json_in *in, size_t i);
size_t json_in_key(struct json_in *in, const char *key, size_t len);

/* The error line at the current path (at `field` below it for _at);
 * returns rc. */
int json_in_fail(struct json_in *in, int rc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int json_in_fail_at(struct json_in *in, const char *field, int rc,
		    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* `v` (at the current path) is what `w` asks for, or -EINVAL. */
int json_in_check(struct json_in *in, const json_t *v, enum json_in_want w);
/* Member `key` of `obj` as `w`; *out NULL when absent or null. */
int json_in_get(struct json_in *in, const json_t *obj, const char *key,
		enum json_in_want w, json_t **out);
/* A string member; "" when absent or null. */
int json_in_get_str(struct json_in *in, const json_t *obj, const char *key,
		    const char **s, size_t *len);

#endif
