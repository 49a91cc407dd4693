/* A placement's value in etcd (coord/placement_value.h): encode, and a
 * strict decoder of what etcd gives back (outside input), versions 1 and
 * 2 and 3. One text, one value: no leading zeros, no sign, single spaces,
 * labels in one order, so decode(encode(v)) is v and encode(decode(t)) is
 * t. Cost: one pass over at most PLACEMENT_VALUE_MAX bytes (a label's key
 * compared once with the one before); no allocation. */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "coord/placement_value.h"
#include "coord/value_text.h"

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

bool placement_label_ok(const char *key, size_t key_len, const char *value, size_t value_len)
{
	const char *slash = memchr(key, '/', key_len);
	const char *name = key;
	size_t name_len = key_len;
	if (slash != NULL) {
		size_t prefix = (size_t)(slash - key);
		if (!name_ok(key, prefix, 253, true))
			return false;
		name = slash + 1;
		name_len = key_len - prefix - 1;
	}
	return value_text_name(name, name_len, 1, 63) &&
	       value_text_name(value, value_len, 0, PLACEMENT_LABEL_VALUE_MAX);
}

/* The labels' text t (n bytes): "k=v" tokens, single spaces, keys
 * strictly ascending; their count, or -1. */
static int labels_ok(const char *t, size_t n)
{
	if (n == 0)
		return 0;
	if (n > PLACEMENT_LABELS_MAX)
		return -1;
	int count = 0;
	const char *prev = NULL;
	size_t prev_len = 0;
	for (size_t start = 0; start <= n;) {
		const char *end = memchr(t + start, ' ', n - start);
		size_t len = end != NULL ? (size_t)(end - (t + start)) : n - start;
		const char *tok = t + start;
		const char *eq = memchr(tok, '=', len);
		if (eq == NULL || ++count > PLACEMENT_LABELS_COUNT)
			return -1;
		size_t klen = (size_t)(eq - tok);
		if (!placement_label_ok(tok, klen, eq + 1, len - klen - 1))
			return -1;
		if (prev != NULL) {
			int c = memcmp(prev, tok, prev_len < klen ? prev_len : klen);
			if (c > 0 || (c == 0 && prev_len >= klen))
				return -1;
		}
		prev = tok;
		prev_len = klen;
		if (end == NULL)
			break;
		start += len + 1;
	}
	return count;
}

/* A queue or flavor field of a version: "" (written "-") or a name of its
 * alphabet; never "-" itself, which reads back as none. */
static bool field_name_ok(const char *s, size_t n, uint8_t version)
{
	if (n == 0)
		return true;
	if (n == 1 && s[0] == '-')
		return false;
	return version == 3 ? name_ok(s, n, PLACEMENT_CQ_MAX, true)
			    : name_ok(s, n, PLACEMENT_QUEUE_MAX, false);
}

int placement_value_encode(const struct placement_value *v, char *out)
{
	size_t node_len = strnlen(v->node, sizeof(v->node));
	size_t queue_len = strnlen(v->queue, sizeof(v->queue));
	size_t flavor_len = strnlen(v->flavor, sizeof(v->flavor));
	size_t ns_len = strnlen(v->ns, sizeof(v->ns));
	size_t labels_len = strnlen(v->labels, sizeof(v->labels));
	if (!name_ok(v->node, node_len, PLACEMENT_NODE_MAX, true) || v->version > 3 ||
	    !field_name_ok(v->queue, queue_len, v->version) || v->cpu_milli < 0 ||
	    v->mem_bytes < 0 || v->gpus < 0)
		return -EINVAL;
	if (v->version < 2 && (ns_len || labels_len || v->n_labels))
		return -EINVAL;
	if (flavor_len && (v->version < 3 || !queue_len || !field_name_ok(v->flavor, flavor_len, 3)))
		return -EINVAL;
	if (v->version >= 2 &&
	    ((ns_len && !name_ok(v->ns, ns_len, PLACEMENT_NS_MAX, false)) ||
	     (ns_len == 1 && v->ns[0] == '-') || labels_ok(v->labels, labels_len) != v->n_labels))
		return -EINVAL;
	bool v3 = v->version == 3;
	int n = snprintf(out, PLACEMENT_VALUE_MAX + 1, "%c %s %" PRIu64 " %" PRId64 " %" PRId64
			 " %" PRId64 " %s%s%s%s%s%s%s",
			 v->version >= 2 ? (char)('0' + v->version) : '1', v->node,
			 v->node_generation, v->cpu_milli, v->mem_bytes, v->gpus,
			 queue_len ? v->queue : "-", v3 ? " " : "",
			 v3 ? (flavor_len ? v->flavor : "-") : "", v->version >= 2 ? " " : "",
			 v->version >= 2 ? (ns_len ? v->ns : "-") : "", labels_len ? " " : "",
			 v->labels);
	return n < 0 || n > PLACEMENT_VALUE_MAX ? -EINVAL : n;
}

/* By kind: a version's field i is kind i, but below version 3 (no
 * flavor) kind i + 1 from the seventh on. */
enum { K_QUEUE = 6, K_FLAVOR = 7, K_NS = 8 }; /* then the labels */
static const char *const field_names[] = {"version", "node", "node generation", "cpu milli",
					  "memory bytes", "gpus", "queue", "flavor", "namespace"};

/* A refusal (coord/value_text.h): msg says why, out zeroed. */
#define REFUSE(out, msg, msglen, ...) \
	value_text_refuse((out), sizeof(*(out)), (msg), (msglen), __VA_ARGS__)

int placement_value_decode(const void *text, size_t len, struct placement_value *out, char *msg,
			   size_t msglen)
{
	const char *s = text;
	memset(out, 0, sizeof(*out));
	if (msglen)
		msg[0] = '\0';
	if (len > PLACEMENT_VALUE_MAX)
		return REFUSE(out, msg, msglen, "placement value: %zu bytes; expected at most %d",
			      len, PLACEMENT_VALUE_MAX);
	size_t start = 0, field = 0, fields = 7;
	for (size_t i = 0; i <= len; i++) {
		if (i < len && s[i] != ' ')
			continue;
		const char *f = s + start;
		size_t n = i - start;
		bool ok;
		uint64_t u = 0;
		const char *expected;
		size_t kind = field < K_FLAVOR || out->version == 3 ? field : field + 1;
		switch (kind) {
		case 0:
			ok = n == 1 && f[0] >= '1' && f[0] <= '3';
			if (ok)
				out->version = (uint8_t)(f[0] - '0');
			fields = out->version == 3 ? 9 : out->version == 2 ? 8 : 7;
			expected = "1, 2 or 3 (the versions known)";
			break;
		case 1:
			ok = name_ok(f, n, PLACEMENT_NODE_MAX, true);
			if (ok)
				memcpy(out->node, f, n);
			expected = "a node name (1 to 253 bytes of a-z, 0-9, '.', '-')";
			break;
		case 2:
			ok = value_text_decimal(f, n, UINT64_MAX, &u);
			out->node_generation = u;
			expected = "a decimal uint64 without leading zeros";
			break;
		case 3:
		case 4:
		case 5:
			ok = value_text_decimal(f, n, INT64_MAX, &u);
			if (field == 3)
				out->cpu_milli = (int64_t)u;
			else if (field == 4)
				out->mem_bytes = (int64_t)u;
			else
				out->gpus = (int64_t)u;
			expected = "a decimal int64 >= 0 without leading zeros";
			break;
		case K_QUEUE:
			if (out->version == 3) {
				ok = (n == 1 && f[0] == '-') || name_ok(f, n, PLACEMENT_CQ_MAX, true);
				expected = "a ClusterQueue name (1 to 253 bytes of a-z, 0-9, '.', "
					   "'-') or \"-\"";
			} else {
				ok = (n == 1 && f[0] == '-') ||
				     name_ok(f, n, PLACEMENT_QUEUE_MAX, false);
				expected = "a queue name (1 to 63 bytes of a-z, 0-9, '-') or \"-\"";
			}
			if (ok && !(n == 1 && f[0] == '-'))
				memcpy(out->queue, f, n);
			break;
		case K_FLAVOR:
			ok = (n == 1 && f[0] == '-') ||
			     (out->queue[0] != '\0' && name_ok(f, n, PLACEMENT_FLAVOR_MAX, true));
			if (ok && !(n == 1 && f[0] == '-'))
				memcpy(out->flavor, f, n);
			expected = "a ResourceFlavor name (1 to 253 bytes of a-z, 0-9, '.', '-'; "
				   "only with a queue) or \"-\"";
			break;
		case K_NS:
			if (out->version >= 2) {
				ok = (n == 1 && f[0] == '-') || name_ok(f, n, PLACEMENT_NS_MAX, false);
				if (ok && !(n == 1 && f[0] == '-'))
					memcpy(out->ns, f, n);
				expected = "a namespace (1 to 63 bytes of a-z, 0-9, '-') or \"-\"";
				break;
			}
			return REFUSE(out, msg, msglen,
				      "placement value: more than 7 fields; expected 7 in version 1");
		default: {
			/* Version 2's and 3's labels: the rest of the text, whole. */
			size_t rest = len - start;
			int count = rest > 0 ? labels_ok(f, rest) : -1;
			if (count <= 0)
				return REFUSE(out, msg, msglen,
					      "placement value: labels \"%.*s\" are not at most %d "
					      "key=value pairs (keys [prefix/]name, ascending, "
					      "unique; at most %d bytes)",
					      (int)(rest > 60 ? 60 : rest), f, PLACEMENT_LABELS_COUNT,
					      PLACEMENT_LABELS_MAX);
			memcpy(out->labels, f, rest);
			out->n_labels = (uint8_t)count;
			return 0;
		}
		}
		if (!ok)
			return REFUSE(out, msg, msglen, "placement value: field %s: \"%.*s\" is not %s",
				      field_names[kind], (int)(n > 40 ? 40 : n), f, expected);
		field++;
		start = i + 1;
	}
	if (field != fields)
		return REFUSE(out, msg, msglen, "placement value: %zu fields; expected %zu", field,
			      fields);
	return 0;
}
