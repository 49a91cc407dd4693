/* A placement's value in etcd (coord/placement_value.h): encode, and a
 * strict decoder of what etcd gives back (outside input). One text, one
 * value: no leading zeros, no sign, single spaces, so decode(encode(v))
 * is v and encode(decode(t)) is t. Cost: one pass over at most
 * PLACEMENT_VALUE_MAX bytes; no allocation. */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "coord/placement_value.h"

static bool name_ok(const char *s, size_t n, size_t max, bool dots)
{
	if (n == 0 || n > max)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
		      (dots && c == '.')))
			return false;
	}
	return true;
}

int placement_value_encode(const struct placement_value *v, char *out)
{
	size_t node_len = strnlen(v->node, sizeof(v->node));
	size_t queue_len = strnlen(v->queue, sizeof(v->queue));
	if (!name_ok(v->node, node_len, PLACEMENT_NODE_MAX, true) ||
	    (queue_len && !name_ok(v->queue, queue_len, PLACEMENT_QUEUE_MAX, false)) ||
	    (queue_len == 1 && v->queue[0] == '-') || v->cpu_milli < 0 || v->mem_bytes < 0 ||
	    v->gpus < 0)
		return -EINVAL;
	int n = snprintf(out, PLACEMENT_VALUE_MAX + 1, "1 %s %" PRIu64 " %" PRId64 " %" PRId64
			 " %" PRId64 " %s",
			 v->node, v->node_generation, v->cpu_milli, v->mem_bytes, v->gpus,
			 queue_len ? v->queue : "-");
	return n < 0 || n > PLACEMENT_VALUE_MAX ? -EINVAL : n;
}

/* A decimal without sign or leading zero, at most max. */
static bool number_ok(const char *s, size_t n, uint64_t max, uint64_t *out)
{
	if (n == 0 || n > 20 || (n > 1 && s[0] == '0'))
		return false;
	uint64_t v = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		unsigned d = (unsigned)(s[i] - '0');
		if (v > (max - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*out = v;
	return true;
}

static const char *const field_names[] = {"version", "node", "node generation", "cpu milli",
					  "memory bytes", "gpus", "queue"};

int placement_value_decode(const void *text, size_t len, struct placement_value *out, char *msg,
			   size_t msglen)
{
	const char *s = text;
	memset(out, 0, sizeof(*out));
	if (msglen)
		msg[0] = '\0';
	if (len > PLACEMENT_VALUE_MAX) {
		snprintf(msg, msglen, "placement value: %zu bytes; expected at most %d", len,
			 PLACEMENT_VALUE_MAX);
		return -EINVAL;
	}
	size_t start = 0, field = 0;
	for (size_t i = 0; i <= len; i++) {
		if (i < len && s[i] != ' ')
			continue;
		const char *f = s + start;
		size_t n = i - start;
		bool ok;
		uint64_t u = 0;
		const char *expected;
		switch (field) {
		case 0:
			ok = n == 1 && f[0] == '1';
			expected = "1 (the only version)";
			break;
		case 1:
			ok = name_ok(f, n, PLACEMENT_NODE_MAX, true);
			if (ok)
				memcpy(out->node, f, n);
			expected = "a node name (1 to 253 bytes of a-z, 0-9, '.', '-')";
			break;
		case 2:
			ok = number_ok(f, n, UINT64_MAX, &u);
			out->node_generation = u;
			expected = "a decimal uint64 without leading zeros";
			break;
		case 3:
		case 4:
		case 5:
			ok = number_ok(f, n, INT64_MAX, &u);
			if (field == 3)
				out->cpu_milli = (int64_t)u;
			else if (field == 4)
				out->mem_bytes = (int64_t)u;
			else
				out->gpus = (int64_t)u;
			expected = "a decimal int64 >= 0 without leading zeros";
			break;
		case 6:
			ok = (n == 1 && f[0] == '-') || name_ok(f, n, PLACEMENT_QUEUE_MAX, false);
			if (ok && !(n == 1 && f[0] == '-'))
				memcpy(out->queue, f, n);
			expected = "a queue name (1 to 63 bytes of a-z, 0-9, '-') or \"-\"";
			break;
		default:
			snprintf(msg, msglen, "placement value: more than 7 fields; expected 7");
			memset(out, 0, sizeof(*out));
			return -EINVAL;
		}
		if (!ok) {
			snprintf(msg, msglen, "placement value: field %s: \"%.*s\" is not %s",
				 field_names[field], (int)(n > 40 ? 40 : n), f, expected);
			memset(out, 0, sizeof(*out));
			return -EINVAL;
		}
		field++;
		start = i + 1;
	}
	if (field != 7) {
		snprintf(msg, msglen, "placement value: %zu fields; expected 7", field);
		memset(out, 0, sizeof(*out));
		return -EINVAL;
	}
	return 0;
}
