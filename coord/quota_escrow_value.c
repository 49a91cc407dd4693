/* Quota by escrow's values in etcd (coord/quota_escrow_value.h): encode,
 * and a strict decoder of what etcd gives back (outside input). One text,
 * one value: single spaces, no sign, no leading zeros, cells in strictly
 * increasing (flavor, resource) order, so decode(encode(v)) is v and
 * encode(decode(t)) is t. Cost: one pass over at most
 * QUOTA_ESCROW_VALUE_MAX bytes; no allocation.
 */
#include "coord/quota_escrow_value.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "base/base.h"
#include "coord/quota_escrow.h"
#include "coord/value_text.h"

static bool flavor_ok(const char *s, size_t n)
{
	if (n == 0 || n > QUOTA_ESCROW_FLAVOR_MAX)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.'))
			return false;
	}
	return true;
}

static bool resource_ok(const char *s, size_t n)
{
	if (n == 0 || n > QUOTA_ESCROW_RESOURCE_MAX)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '-' || c == '.' || c == '_' || c == '/'))
			return false;
	}
	return true;
}

/* (flavor, resource) of a before b, by bytes. */
static bool cell_before(const struct quota_escrow_cell *a, const struct quota_escrow_cell *b)
{
	int c = strcmp(a->flavor, b->flavor);
	return c < 0 || (c == 0 && strcmp(a->resource, b->resource) < 0);
}

static bool amount_ok(int64_t v)
{
	return v >= 0 && v <= QUOTA_ESCROW_QUANTITY_MAX;
}

static const char *kind_word(enum quota_escrow_kind k)
{
	switch (k) {
	case QUOTA_ESCROW_SLICE:
		return "slice";
	case QUOTA_ESCROW_ACK:
		return "ack";
	case QUOTA_ESCROW_USE:
		return "use";
	}
	return NULL;
}

int quota_escrow_value_encode(const struct quota_escrow_value *v, char *out)
{
	const char *word = kind_word(v->kind);
	if (word == NULL || v->n > QUOTA_ESCROW_CELLS || v->revision < 0 ||
	    (v->kind != QUOTA_ESCROW_ACK && v->revision != 0))
		return -EINVAL;
	size_t used = 0;
	int w = v->kind == QUOTA_ESCROW_ACK
			? snprintf(out, QUOTA_ESCROW_VALUE_MAX + 1, "1 ack %" PRId64, v->revision)
			: snprintf(out, QUOTA_ESCROW_VALUE_MAX + 1, "1 %s", word);
	if (w < 0)
		return -EINVAL;
	used = (size_t)w;
	for (size_t i = 0; i < v->n; i++) {
		const struct quota_escrow_cell *c = &v->cells[i];
		size_t fl = strnlen(c->flavor, sizeof(c->flavor));
		size_t rl = strnlen(c->resource, sizeof(c->resource));
		if (!flavor_ok(c->flavor, fl) || !resource_ok(c->resource, rl) ||
		    !amount_ok(c->amount) || !amount_ok(c->more) ||
		    (v->kind != QUOTA_ESCROW_USE && c->more != 0) ||
		    (i > 0 && !cell_before(&v->cells[i - 1], c)))
			return -EINVAL;
		w = v->kind == QUOTA_ESCROW_USE
			    ? snprintf(out + used, QUOTA_ESCROW_VALUE_MAX + 1 - used,
				       " %s %s %" PRId64 " %" PRId64, c->flavor, c->resource,
				       c->amount, c->more)
			    : snprintf(out + used, QUOTA_ESCROW_VALUE_MAX + 1 - used,
				       " %s %s %" PRId64, c->flavor, c->resource, c->amount);
		if (w < 0 || used + (size_t)w > QUOTA_ESCROW_VALUE_MAX)
			return -EINVAL;
		used += (size_t)w;
	}
	return (int)used;
}

/* A refusal (coord/value_text.h): "quota escrow value: " and why; out
 * zeroed. */
#define REFUSE(out, msg, msglen, ...)                                                      \
	value_text_refuse((out), sizeof(*(out)), (msg), (msglen),                          \
			  "quota escrow value: " __VA_ARGS__)

int quota_escrow_value_decode(const void *text, size_t len, struct quota_escrow_value *out,
			      char *msg, size_t msglen)
{
	const char *s = text;
	memset(out, 0, sizeof(*out));
	if (msglen)
		msg[0] = '\0';
	if (len > QUOTA_ESCROW_VALUE_MAX)
		return REFUSE(out, msg, msglen, "%zu bytes; expected at most %d", len,
			      QUOTA_ESCROW_VALUE_MAX);
	/* Fields: version, kind, [revision], then cells of `per` fields. */
	size_t start = 0, field = 0, head = 2, per = 3;
	for (size_t i = 0; i <= len; i++) {
		if (i < len && s[i] != ' ')
			continue;
		const char *f = s + start;
		size_t n = i - start;
		int shown = (int)(n > 40 ? 40 : n);
		start = i + 1;
		if (field == 0) {
			if (n != 1 || f[0] != '1')
				return REFUSE(out, msg, msglen, "version \"%.*s\": expected 1",
					      shown, f);
		} else if (field == 1) {
			if (n == 5 && memcmp(f, "slice", 5) == 0) {
				out->kind = QUOTA_ESCROW_SLICE;
			} else if (n == 3 && memcmp(f, "ack", 3) == 0) {
				out->kind = QUOTA_ESCROW_ACK;
				head = 3;
			} else if (n == 3 && memcmp(f, "use", 3) == 0) {
				out->kind = QUOTA_ESCROW_USE;
				per = 4;
			} else {
				return REFUSE(out, msg, msglen, "kind \"%.*s\": expected slice, ack "
					      "or use", shown, f);
			}
		} else if (field < head) {
			if (!value_text_decimal_i64(f, n, INT64_MAX, &out->revision))
				return REFUSE(out, msg, msglen, "revision \"%.*s\": expected a "
					      "decimal 0 to %" PRId64 " without leading zeros",
					      shown, f, INT64_MAX);
		} else {
			size_t cell = (field - head) / per, part = (field - head) % per;
			if (cell >= QUOTA_ESCROW_CELLS)
				return REFUSE(out, msg, msglen, "more than %d cells", QUOTA_ESCROW_CELLS);
			struct quota_escrow_cell *c = &out->cells[cell];
			if (part == 0) {
				if (!flavor_ok(f, n))
					return REFUSE(out, msg, msglen, "cell %zu: flavor \"%.*s\": "
						      "expected 1 to %d bytes of a-z, 0-9, '.', '-'",
						      cell + 1, shown, f, QUOTA_ESCROW_FLAVOR_MAX);
				memcpy(c->flavor, f, n);
			} else if (part == 1) {
				if (!resource_ok(f, n))
					return REFUSE(out, msg, msglen, "cell %zu: resource \"%.*s\": "
						      "expected 1 to %d bytes of A-Z, a-z, 0-9, '.', "
						      "'_', '/', '-'", cell + 1, shown, f,
						      QUOTA_ESCROW_RESOURCE_MAX);
				memcpy(c->resource, f, n);
				if (cell > 0 && !cell_before(&out->cells[cell - 1], c))
					return REFUSE(out, msg, msglen, "cell %zu: (%s, %s) after "
						      "(%s, %s): expected cells in strictly increasing "
						      "(flavor, resource) order", cell + 1, c->flavor,
						      c->resource, out->cells[cell - 1].flavor,
						      out->cells[cell - 1].resource);
			} else {
				int64_t *to = part == 2 ? &c->amount : &c->more;
				if (!value_text_decimal_i64(f, n, QUOTA_ESCROW_QUANTITY_MAX, to))
					return REFUSE(out, msg, msglen, "cell %zu: %s \"%.*s\": "
						      "expected a decimal 0 to %" PRId64 " without "
						      "leading zeros", cell + 1,
						      part == 3 ? "more" : out->kind == QUOTA_ESCROW_USE
						      ? "use" : "amount", shown, f,
						      QUOTA_ESCROW_QUANTITY_MAX);
				if (part == per - 1)
					out->n = cell + 1;
			}
		}
		field++;
	}
	if (field < head || (field - head) % per != 0)
		return REFUSE(out, msg, msglen, "%zu fields: expected %zu and %zu a cell", field,
			      head, per);
	return 0;
}
