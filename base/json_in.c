/* The strict JSON decoders' core: see json_in.h.
 *
 * Every write into a fixed buffer goes through append(), which cuts at the
 * buffer's end and never leaves it unterminated, so no input can make an
 * error line or a path overrun. Nothing here allocates.
 */
#include "base/json_in.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

static void append(char *buf, size_t len, size_t *used, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void append(char *buf, size_t len, size_t *used, const char *fmt, ...)
{
	if (buf == NULL || *used >= len)
		return;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf + *used, len - *used, fmt, ap);
	va_end(ap);
	if (n > 0)
		*used = *used + (size_t)n < len ? *used + (size_t)n : len - 1;
}

/* --- values in messages --------------------------------------------------- */

const char *json_in_show_str(const char *s, size_t len, char *buf, size_t buf_len)
{
	size_t used = 0;
	append(buf, buf_len, &used, "\"");
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		if (i == JSON_IN_SHOW_MAX) {
			append(buf, buf_len, &used, "...");
			break;
		}
		if (c == '"' || c == '\\')
			append(buf, buf_len, &used, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			append(buf, buf_len, &used, "\\x%02x", c);
		else
			append(buf, buf_len, &used, "%c", c);
	}
	append(buf, buf_len, &used, "\"");
	return buf;
}

const char *json_in_kind(const json_t *v)
{
	if (v == NULL)
		return "nothing";
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return "an object";
	case JSON_ARRAY:
		return "an array";
	case JSON_STRING:
		return "a string";
	case JSON_INTEGER:
	case JSON_REAL:
		return "a number";
	case JSON_TRUE:
	case JSON_FALSE:
		return "a boolean";
	case JSON_NULL:
		return "null";
	}
	return "a value";
}

const char *json_in_show(const json_t *v, char *buf, size_t buf_len)
{
	if (v == NULL)
		return json_in_kind(v);
	switch (json_typeof(v)) {
	case JSON_STRING:
		return json_in_show_str(json_string_value(v), json_string_length(v),
					buf, buf_len);
	case JSON_INTEGER:
		snprintf(buf, buf_len, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		return buf;
	case JSON_REAL:
		snprintf(buf, buf_len, "%.17g", json_real_value(v));
		return buf;
	case JSON_OBJECT:
	case JSON_ARRAY:
	case JSON_TRUE:
	case JSON_FALSE:
	case JSON_NULL:
		break;
	}
	return json_in_kind(v);
}

bool json_in_str_is(const char *s, size_t len, const char *lit)
{
	return strlen(lit) == len && memcmp(s, lit, len) == 0;
}

/* --- the error line ------------------------------------------------------- */

/* Where the next line goes in err, its "<source>: <subject>: " written;
 * returns the position after them, or err_len when no line is written. */
static size_t prefix(struct json_in *in)
{
	in->n_errors++;
	if (in->err == NULL || in->err_len == 0)
		return in->err_len;
	size_t used = 0;
	if (in->max_lines > 0) {
		if (in->n_errors - in->n_dropped > in->max_lines) {
			in->n_dropped++;
			return in->err_len;
		}
		used = in->err_pos;
		if (used > 0)
			append(in->err, in->err_len, &used, "\n");
	}
	if (in->source != NULL && in->source[0] != '\0') {
		if (in->line > 0)
			append(in->err, in->err_len, &used, "%s:%u: ", in->source,
			       in->line);
		else
			append(in->err, in->err_len, &used, "%s: ", in->source);
	}
	if (in->subject[0] != '\0')
		append(in->err, in->err_len, &used, "%s: ", in->subject);
	return used;
}

/* The line's end: err_pos after it, for the next appended line. */
static void ended(struct json_in *in, size_t used)
{
	size_t n = strlen(in->err + (used < in->err_len ? used : in->err_len - 1));
	in->err_pos = (used < in->err_len ? used : in->err_len - 1) + n;
}

int json_in_fail(struct json_in *in, int rc, const char *fmt, ...)
{
	size_t used = prefix(in);
	if (used >= in->err_len)
		return rc;
	if (in->path_len > 0)
		append(in->err, in->err_len, &used, "%s: ", in->path);
	if (used < in->err_len) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(in->err + used, in->err_len - used, fmt, ap);
		va_end(ap);
	}
	ended(in, used);
	return rc;
}

int json_in_fail_at(struct json_in *in, const char *field, int rc,
		    const char *fmt, ...)
{
	size_t used = prefix(in);
	if (used >= in->err_len)
		return rc;
	char what[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	size_t start = used;
	append(in->err, in->err_len, &used, "%s%s%s: %s", in->path,
	       in->path_len > 0 ? "." : "", field, what);
	ended(in, start);
	return rc;
}

/* --- the path ------------------------------------------------------------- */

size_t json_in_push(struct json_in *in, const char *fmt, ...)
{
	size_t mark = in->path_len;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(in->path + mark, sizeof(in->path) - mark, fmt, ap);
	va_end(ap);
	if (n > 0)
		in->path_len = mark + (size_t)n < sizeof(in->path) ?
				       mark + (size_t)n : sizeof(in->path) - 1;
	return mark;
}

void json_in_pop(struct json_in *in, size_t mark)
{
	in->path_len = mark;
	in->path[mark] = '\0';
}

size_t json_in_field(struct json_in *in, const char *name)
{
	return in->path_len > 0 ? json_in_push(in, ".%s", name)
				: json_in_push(in, "%s", name);
}

size_t json_in_index(struct json_in *in, size_t i)
{
	return json_in_push(in, "[%zu]", i);
}

/* A map key: `.key` when that reads unambiguously enough, else `["key"]`. */
size_t json_in_key(struct json_in *in, const char *key, size_t len)
{
	bool plain = len > 0;
	for (size_t i = 0; i < len && plain; i++) {
		char c = key[i];
		plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			(c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.' ||
			c == '/';
	}
	if (plain)
		return json_in_field(in, key);
	char q[JSON_IN_SHOW_MAX + 16];
	return json_in_push(in, "[%s]", json_in_show_str(key, len, q, sizeof(q)));
}

/* --- typed access --------------------------------------------------------- */

static const char *const want_text[] = {
	[JSON_IN_OBJECT] = "an object", [JSON_IN_ARRAY] = "an array",
	[JSON_IN_STRING] = "a string",  [JSON_IN_BOOL] = "a boolean",
	[JSON_IN_INT] = "an integer",
};

const char *json_in_want_text(enum json_in_want w)
{
	return want_text[w];
}

bool json_in_is(const json_t *v, enum json_in_want w)
{
	if (v == NULL)
		return false;
	switch (w) {
	case JSON_IN_OBJECT:
		return json_is_object(v);
	case JSON_IN_ARRAY:
		return json_is_array(v);
	case JSON_IN_STRING:
		return json_is_string(v);
	case JSON_IN_BOOL:
		return json_is_boolean(v);
	case JSON_IN_INT:
		return json_is_integer(v);
	}
	return false;
}

int json_in_check(struct json_in *in, const json_t *v, enum json_in_want w)
{
	if (json_in_is(v, w))
		return 0;
	return json_in_fail(in, -EINVAL, "expected %s, got %s", want_text[w],
			    json_in_kind(v));
}

int json_in_get(struct json_in *in, const json_t *obj, const char *key,
		enum json_in_want w, json_t **out)
{
	json_t *v = json_object_get(obj, key);
	*out = NULL;
	if (v == NULL || json_is_null(v))
		return 0;
	if (!json_in_is(v, w)) {
		size_t mark = json_in_field(in, key);
		int rc = json_in_check(in, v, w);
		json_in_pop(in, mark);
		return rc;
	}
	*out = v;
	return 0;
}

int json_in_get_str(struct json_in *in, const json_t *obj, const char *key,
		    const char **s, size_t *len)
{
	json_t *v;
	int rc = json_in_get(in, obj, key, JSON_IN_STRING, &v);
	*s = v != NULL ? json_string_value(v) : "";
	*len = v != NULL ? json_string_length(v) : 0;
	return rc;
}
