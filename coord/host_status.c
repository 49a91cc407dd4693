/* A host's status value in etcd (coord/host_status.h): encode, and a
 * strict decoder of what etcd gives back (outside input). One text, one
 * value: single spaces, no sign, no leading zeros, shards in strictly
 * ascending order, so decode(encode(v)) is v and encode(decode(t)) is t.
 * Cost: one pass over at most HOST_STATUS_VALUE_MAX bytes; no
 * allocation. */
#include "coord/host_status.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "base/base.h"
#include "coord/value_text.h"

/* The head's fields ("1 status <records> <oldest> <more>"), a shard's. */
#define HEAD_FIELDS 5u
#define SHARD_FIELDS 8u

static const char *const shard_field[SHARD_FIELDS] = {
	"shard", "nodes", "largest cpu", "largest memory", "largest pods",
	"sum cpu", "sum memory", "sum pods",
};

/* Whether one shard's figures hold together: each largest at most its
 * sum, and a shard of no nodes all 0. */
static bool figures_ok(const struct host_status_shard *s)
{
	if (s->largest_cpu_milli < 0 || s->largest_mem_bytes < 0 || s->largest_pods < 0 ||
	    s->largest_cpu_milli > s->sum_cpu_milli || s->largest_mem_bytes > s->sum_mem_bytes ||
	    s->largest_pods > s->sum_pods)
		return false;
	return s->nodes > 0 || (s->sum_cpu_milli == 0 && s->sum_mem_bytes == 0 && s->sum_pods == 0);
}

int host_status_encode(const struct host_status *v, char *out)
{
	if (v->n > HOST_STATUS_SHARDS || v->more > SHARD_MAX ||
	    (v->more > 0 && v->n != HOST_STATUS_SHARDS) || v->lag_records < 0 ||
	    v->lag_oldest_ms < 0)
		return -EINVAL;
	int w = snprintf(out, HOST_STATUS_VALUE_MAX + 1, "1 status %" PRId64 " %" PRId64 " %" PRIu32,
			 v->lag_records, v->lag_oldest_ms, v->more);
	if (w < 0)
		return -EINVAL;
	size_t used = (size_t)w;
	for (uint32_t i = 0; i < v->n; i++) {
		const struct host_status_shard *s = &v->shards[i];
		size_t nl = strnlen(s->name, sizeof(s->name));
		if (!shard_name_valid(s->name, nl) || nl >= SHARD_NAME_MAX || !figures_ok(s) ||
		    (i > 0 && strcmp(v->shards[i - 1].name, s->name) >= 0))
			return -EINVAL;
		w = snprintf(out + used, HOST_STATUS_VALUE_MAX + 1 - used,
			     " %s %" PRIu32 " %" PRId64 " %" PRId64 " %" PRId64 " %" PRId64
			     " %" PRId64 " %" PRId64, s->name, s->nodes, s->largest_cpu_milli,
			     s->largest_mem_bytes, s->largest_pods, s->sum_cpu_milli,
			     s->sum_mem_bytes, s->sum_pods);
		if (w < 0 || used + (size_t)w > HOST_STATUS_VALUE_MAX)
			return -EINVAL;
		used += (size_t)w;
	}
	return (int)used;
}

/* A refusal (coord/value_text.h): "host status: " and why; out zeroed. */
#define REFUSE(out, msg, msglen, ...) \
	value_text_refuse((out), sizeof(*(out)), (msg), (msglen), "host status: " __VA_ARGS__)

/* Field `part` (1..7) of a shard: its number into the shard. */
static bool shard_number(struct host_status_shard *s, size_t part, const char *f, size_t n)
{
	int64_t v;
	if (!value_text_decimal_i64(f, n, part == 1 ? (int64_t)UINT32_MAX : INT64_MAX, &v))
		return false;
	int64_t *to[SHARD_FIELDS] = {NULL, NULL, &s->largest_cpu_milli, &s->largest_mem_bytes,
				     &s->largest_pods, &s->sum_cpu_milli, &s->sum_mem_bytes,
				     &s->sum_pods};
	if (part == 1)
		s->nodes = (uint32_t)v;
	else
		*to[part] = v;
	return true;
}

int host_status_decode(const void *text, size_t len, struct host_status *out, char *msg,
		       size_t msglen)
{
	const char *s = text;
	memset(out, 0, sizeof(*out));
	if (msglen)
		msg[0] = '\0';
	if (len > HOST_STATUS_VALUE_MAX)
		return REFUSE(out, msg, msglen, "%zu bytes; expected at most %d", len,
			      HOST_STATUS_VALUE_MAX);
	size_t start = 0, field = 0;
	int64_t more = 0;
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
			if (n != 6 || memcmp(f, "status", 6) != 0)
				return REFUSE(out, msg, msglen, "kind \"%.*s\": expected status",
					      shown, f);
		} else if (field < HEAD_FIELDS) {
			static const char *const name[] = {"lag records", "lag oldest ms", "more"};
			int64_t *to[] = {&out->lag_records, &out->lag_oldest_ms, &more};
			int64_t max = field == 4 ? (int64_t)SHARD_MAX : INT64_MAX;
			if (!value_text_decimal_i64(f, n, max, to[field - 2]))
				return REFUSE(out, msg, msglen, "%s \"%.*s\": expected a decimal 0 "
					      "to %" PRId64 " without leading zeros",
					      name[field - 2], shown, f, max);
		} else {
			size_t k = (field - HEAD_FIELDS) / SHARD_FIELDS;
			size_t part = (field - HEAD_FIELDS) % SHARD_FIELDS;
			if (k >= HOST_STATUS_SHARDS)
				return REFUSE(out, msg, msglen, "more than %d shards",
					      HOST_STATUS_SHARDS);
			struct host_status_shard *sh = &out->shards[k];
			if (part == 0) {
				if (!shard_name_valid(f, n) || n >= SHARD_NAME_MAX)
					return REFUSE(out, msg, msglen, "shard %zu: name \"%.*s\": "
						      "expected 1 to %u bytes of A-Z, a-z, 0-9, '.', "
						      "'_', '-'", k + 1, shown, f, SHARD_NAME_MAX - 1);
				memcpy(sh->name, f, n);
				if (k > 0 && strcmp(out->shards[k - 1].name, sh->name) >= 0)
					return REFUSE(out, msg, msglen, "shard %zu: \"%s\" after "
						      "\"%s\": expected shards in strictly ascending "
						      "order", k + 1, sh->name, out->shards[k - 1].name);
			} else if (!shard_number(sh, part, f, n)) {
				return REFUSE(out, msg, msglen, "shard %s: %s \"%.*s\": expected a "
					      "decimal 0 to %" PRId64 " without leading zeros",
					      sh->name, shard_field[part], shown, f,
					      part == 1 ? (int64_t)UINT32_MAX : INT64_MAX);
			} else if (part == SHARD_FIELDS - 1) {
				if (!figures_ok(sh))
					return REFUSE(out, msg, msglen, "shard %s: a largest figure "
						      "over its sum, or figures without nodes: "
						      "expected each largest at most its sum, and "
						      "all 0 with 0 nodes", sh->name);
				out->n = (uint32_t)k + 1;
			}
		}
		field++;
	}
	if (field < HEAD_FIELDS || (field - HEAD_FIELDS) % SHARD_FIELDS != 0)
		return REFUSE(out, msg, msglen, "%zu fields: expected %u and %u a shard", field,
			      HEAD_FIELDS, SHARD_FIELDS);
	if (more > 0 && out->n != HOST_STATUS_SHARDS)
		return REFUSE(out, msg, msglen, "more %" PRId64 " with %" PRIu32 " shards: "
			      "expected more only after %d shards", more, out->n,
			      HOST_STATUS_SHARDS);
	out->more = (uint32_t)more;
	return 0;
}
