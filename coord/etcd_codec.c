/* etcd v3's gRPC-gateway JSON (etcd 3.4 serves it on the client port; see
 * https://etcd.io/docs/v3.4/dev-guide/api_grpc_gateway/): the client's
 * request bodies and a strict decoder of the answers.
 *
 * The gateway writes protobuf's JSON mapping: bytes as padded base64,
 * int64 and uint64 as decimal strings, and fields at their zero value left
 * out (a failed transaction has no "succeeded", a key without a lease no
 * "lease", an expired lease's keep-alive no "TTL"). So an absent field
 * reads as zero, a present one must have its type exactly, and members
 * this decoder does not know are skipped (a newer etcd may add some).
 *
 * Invariants of a decoded answer: every kv's key and value are malloc'd
 * with a NUL after their bytes; n_kvs is the array's length; nothing is
 * kept on an error. The decoder is bounded by its input: the client
 * refuses a body over its limit before it gets here, and jansson holds
 * nesting to its own depth. Cost: one jansson parse of the body and one
 * copy of each key and value. A transaction's body (the committer's, up
 * to 128 operations) is written in one pass into one buffer, no jansson
 * objects: about 1,520 instructions a committer's put (callgrind), from
 * about 24,000 through jansson's objects and dump. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/base.h"
#include "coord/etcd_codec.h"

static const char b64_alphabet[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

size_t etcd_b64_len(size_t n)
{
	return (n + 2) / 3 * 4;
}

void etcd_b64_encode(const uint8_t *in, size_t n, char *out)
{
	size_t o = 0;
	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)in[i] << 16;
		if (i + 1 < n)
			v |= (uint32_t)in[i + 1] << 8;
		if (i + 2 < n)
			v |= in[i + 2];
		out[o++] = b64_alphabet[(v >> 18) & 63];
		out[o++] = b64_alphabet[(v >> 12) & 63];
		out[o++] = i + 1 < n ? b64_alphabet[(v >> 6) & 63] : '=';
		out[o++] = i + 2 < n ? b64_alphabet[v & 63] : '=';
	}
	out[o] = '\0';
}

static int b64_value(char ch)
{
	if (ch >= 'A' && ch <= 'Z')
		return ch - 'A';
	if (ch >= 'a' && ch <= 'z')
		return ch - 'a' + 26;
	if (ch >= '0' && ch <= '9')
		return ch - '0' + 52;
	if (ch == '+')
		return 62;
	if (ch == '/')
		return 63;
	return -1;
}

int etcd_b64_decode(const char *in, size_t n, uint8_t *out, size_t *out_len)
{
	if (n % 4 != 0)
		return -EINVAL;
	size_t o = 0;
	for (size_t i = 0; i < n; i += 4) {
		bool last = i + 4 == n;
		int pad = 0;
		if (last && in[i + 3] == '=')
			pad = in[i + 2] == '=' ? 2 : 1;
		uint32_t v = 0;
		for (int k = 0; k < 4; k++) {
			int d = k >= 4 - pad ? 0 : b64_value(in[i + (size_t)k]);
			if (d < 0)
				return -EINVAL;
			v = v << 6 | (uint32_t)d;
		}
		/* The bits padding drops must be zero: one text, one value. */
		if ((pad == 1 && (v & 0xff) != 0) || (pad == 2 && (v & 0xffff) != 0))
			return -EINVAL;
		out[o++] = (uint8_t)(v >> 16);
		if (pad < 2)
			out[o++] = (uint8_t)(v >> 8);
		if (pad < 1)
			out[o++] = (uint8_t)v;
	}
	*out_len = o;
	return 0;
}

/* ---- requests ---------------------------------------------------------- */

static json_t *b64_json(const void *bytes, size_t n)
{
	char *text = malloc(etcd_b64_len(n) + 1);
	if (!text)
		return NULL;
	etcd_b64_encode(bytes, n, text);
	json_t *s = json_string(text);
	free(text);
	return s;
}

static json_t *int_json(int64_t v)
{
	char text[24];
	snprintf(text, sizeof(text), "%" PRId64, v);
	return json_string(text);
}

/* Sets key (bytes as base64) on o; false when out of memory. */
static bool set_bytes(json_t *o, const char *name, const void *bytes, size_t n)
{
	json_t *v = b64_json(bytes ? bytes : "", n);
	return v && json_object_set_new(o, name, v) == 0;
}

static bool set_int(json_t *o, const char *name, int64_t v)
{
	json_t *j = int_json(v);
	return j && json_object_set_new(o, name, j) == 0;
}

static char *dump(json_t *o)
{
	char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
	json_decref(o);
	return text;
}

static json_t *put_json(const void *key, size_t key_len, const void *value, size_t value_len,
			int64_t lease)
{
	json_t *o = json_object();
	if (!o || !set_bytes(o, "key", key, key_len) ||
	    !set_bytes(o, "value", value, value_len) ||
	    (lease != 0 && !set_int(o, "lease", lease))) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *range_json(const void *key, size_t key_len, const void *range_end,
			  size_t range_end_len, int64_t limit, int64_t revision)
{
	json_t *o = json_object();
	if (!o || !set_bytes(o, "key", key, key_len) ||
	    (range_end && !set_bytes(o, "range_end", range_end, range_end_len)) ||
	    (limit != 0 && !set_int(o, "limit", limit)) ||
	    (revision != 0 && !set_int(o, "revision", revision))) {
		json_decref(o);
		return NULL;
	}
	return o;
}

char *etcd_encode_put(const void *key, size_t key_len, const void *value, size_t value_len,
		      int64_t lease)
{
	return dump(put_json(key, key_len, value, value_len, lease));
}

char *etcd_encode_range(const void *key, size_t key_len, const void *range_end,
			size_t range_end_len, int64_t limit)
{
	return dump(range_json(key, key_len, range_end, range_end_len, limit, 0));
}

char *etcd_encode_range_at(const void *key, size_t key_len, const void *range_end,
			   size_t range_end_len, int64_t limit, int64_t revision)
{
	return dump(range_json(key, key_len, range_end, range_end_len, limit, revision));
}

char *etcd_encode_delete(const void *key, size_t key_len, const void *range_end,
			 size_t range_end_len)
{
	return dump(range_json(key, key_len, range_end, range_end_len, 0, 0));
}

static const char *const target_names[] = {
	[ETCD_CMP_VERSION] = "VERSION", [ETCD_CMP_CREATE] = "CREATE",
	[ETCD_CMP_MOD] = "MOD",		[ETCD_CMP_VALUE] = "VALUE",
	[ETCD_CMP_LEASE] = "LEASE",
};
/* The compare's value field for each target (etcd's rpc.proto Compare). */
static const char *const target_fields[] = {
	[ETCD_CMP_VERSION] = "version", [ETCD_CMP_CREATE] = "create_revision",
	[ETCD_CMP_MOD] = "mod_revision", [ETCD_CMP_VALUE] = "value",
	[ETCD_CMP_LEASE] = "lease",
};
static const char *const result_names[] = {
	[ETCD_CMP_EQUAL] = "EQUAL",
	[ETCD_CMP_GREATER] = "GREATER",
	[ETCD_CMP_LESS] = "LESS",
	[ETCD_CMP_NOT_EQUAL] = "NOT_EQUAL",
};

/* A transaction's body, written in one pass into one buffer sized first
 * (issue 40, the committer's hot path: a transaction of up to 128 puts
 * was 3 jansson objects, 2 strings and 3 mallocs an operation, then a
 * dump). The text is what jansson's JSON_COMPACT wrote for the same
 * objects, byte for byte (tests/coord/test_etcd_codec.c compares them):
 * members in the order set, every string base64 or digits or a fixed
 * name, so nothing is escaped. */
struct body {
	char *p;
};

static void put_lit(struct body *b, const char *s, size_t n)
{
	memcpy(b->p, s, n);
	b->p += n;
}
#define PUT_LIT(b, s) put_lit((b), (s), sizeof(s) - 1)

/* "name":"<base64>" */
static void put_b64(struct body *b, const char *name, const void *bytes, size_t n)
{
	*b->p++ = '"';
	put_lit(b, name, strlen(name));
	PUT_LIT(b, "\":\"");
	etcd_b64_encode(bytes ? bytes : (const void *)"", n, b->p);
	b->p += etcd_b64_len(n);
	*b->p++ = '"';
}

/* "name":"<decimal>" */
static void put_int(struct body *b, const char *name, int64_t v)
{
	char text[24];
	int n = snprintf(text, sizeof(text), "%" PRId64, v);
	*b->p++ = '"';
	put_lit(b, name, strlen(name));
	PUT_LIT(b, "\":\"");
	put_lit(b, text, (size_t)n);
	*b->p++ = '"';
}

/* The most a "name":"<decimal>" member takes: an int64's 20 characters. */
#define INT_MEMBER_MAX(name_len) ((name_len) + 5 + 20)
/* A "name":"<base64 of n bytes>" member's length. */
static size_t b64_member_len(size_t name_len, size_t n)
{
	return name_len + 5 + etcd_b64_len(n);
}

static bool compare_ok(const struct etcd_compare *c)
{
	return (unsigned)c->target <= ETCD_CMP_LEASE && (unsigned)c->result <= ETCD_CMP_NOT_EQUAL;
}

static size_t compare_max(const struct etcd_compare *c)
{
	/* {"target":"T","result":"R",<key>,<field>} */
	size_t n = sizeof("{\"target\":\"\",\"result\":\"\",,}") - 1 +
		   strlen(target_names[c->target]) + strlen(result_names[c->result]) +
		   b64_member_len(3, c->key_len);
	size_t field = strlen(target_fields[c->target]);
	return n + (c->target == ETCD_CMP_VALUE ? b64_member_len(field, c->value_len)
						: INT_MEMBER_MAX(field));
}

static void put_compare(struct body *b, const struct etcd_compare *c)
{
	PUT_LIT(b, "{\"target\":\"");
	put_lit(b, target_names[c->target], strlen(target_names[c->target]));
	PUT_LIT(b, "\",\"result\":\"");
	put_lit(b, result_names[c->result], strlen(result_names[c->result]));
	PUT_LIT(b, "\",");
	put_b64(b, "key", c->key, c->key_len);
	*b->p++ = ',';
	if (c->target == ETCD_CMP_VALUE)
		put_b64(b, target_fields[c->target], c->value, c->value_len);
	else
		put_int(b, target_fields[c->target], c->number);
	*b->p++ = '}';
}

static const char *op_name(enum etcd_op_kind kind)
{
	switch (kind) {
	case ETCD_OP_PUT:
		return "request_put";
	case ETCD_OP_RANGE:
		return "request_range";
	case ETCD_OP_DELETE:
		return "request_delete_range";
	default:
		return NULL;
	}
}

/* {"NAME":{<key>,<value>,<lease>}} (a put) or {"NAME":{<key>,<range_end>}}:
 * 7 bytes around the name, at most 2 commas, the members. */
static size_t op_max(const struct etcd_op *op)
{
	size_t n = 7 + strlen(op_name(op->kind)) + 2 + b64_member_len(3, op->key_len);
	if (op->kind == ETCD_OP_PUT)
		return n + b64_member_len(5, op->value_len) + INT_MEMBER_MAX(5);
	return n + (op->range_end ? b64_member_len(9, op->range_end_len) : 0);
}

static void put_op(struct body *b, const struct etcd_op *op)
{
	PUT_LIT(b, "{\"");
	const char *name = op_name(op->kind);
	put_lit(b, name, strlen(name));
	PUT_LIT(b, "\":{");
	put_b64(b, "key", op->key, op->key_len);
	if (op->kind == ETCD_OP_PUT) {
		*b->p++ = ',';
		put_b64(b, "value", op->value, op->value_len);
		if (op->lease != 0) {
			*b->p++ = ',';
			put_int(b, "lease", op->lease);
		}
	} else if (op->range_end) {
		*b->p++ = ',';
		put_b64(b, "range_end", op->range_end, op->range_end_len);
	}
	PUT_LIT(b, "}}");
}

static void put_ops(struct body *b, const struct etcd_op *ops, size_t n)
{
	*b->p++ = '[';
	for (size_t i = 0; i < n; i++) {
		if (i > 0)
			*b->p++ = ',';
		put_op(b, &ops[i]);
	}
	*b->p++ = ']';
}

char *etcd_encode_txn(const struct etcd_txn *txn)
{
	/* Sized first: the most each member takes (a lease's or number's
	 * digits at their widest), every kind checked on the way. */
	size_t max = sizeof("{\"compare\":[],\"success\":[],\"failure\":[]}");
	for (size_t i = 0; i < txn->n_compare; i++) {
		if (!compare_ok(&txn->compare[i]))
			return NULL;
		max += compare_max(&txn->compare[i]) + 1;
	}
	const struct etcd_op *lists[2] = {txn->success, txn->failure};
	size_t counts[2] = {txn->n_success, txn->n_failure};
	for (size_t l = 0; l < 2; l++)
		for (size_t i = 0; i < counts[l]; i++) {
			if (!op_name(lists[l][i].kind))
				return NULL;
			max += op_max(&lists[l][i]) + 1;
		}
	char *text = malloc(max);
	if (!text)
		return NULL;
	struct body b = {text};
	PUT_LIT(&b, "{\"compare\":[");
	for (size_t i = 0; i < txn->n_compare; i++) {
		if (i > 0)
			*b.p++ = ',';
		put_compare(&b, &txn->compare[i]);
	}
	PUT_LIT(&b, "],\"success\":");
	put_ops(&b, txn->success, txn->n_success);
	PUT_LIT(&b, ",\"failure\":");
	put_ops(&b, txn->failure, txn->n_failure);
	PUT_LIT(&b, "}");
	*b.p = '\0';
	return text;
}

char *etcd_encode_lease_grant(int64_t ttl_s)
{
	json_t *o = json_object();
	if (o && !set_int(o, "TTL", ttl_s)) {
		json_decref(o);
		o = NULL;
	}
	return dump(o);
}

char *etcd_encode_lease_id(int64_t id)
{
	json_t *o = json_object();
	if (o && !set_int(o, "ID", id)) {
		json_decref(o);
		o = NULL;
	}
	return dump(o);
}

/* ---- responses --------------------------------------------------------- */

struct dec {
	char *msg;
	size_t msglen;
	int rc;
};

/* Records the first error: "field FIELD: WHAT". */
static int fail(struct dec *d, int rc, const char *field, const char *what)
{
	if (d->rc == 0) {
		d->rc = rc;
		snprintf(d->msg, d->msglen, "field %s: %s", field, what);
	}
	return rc;
}

/* WHAT naming the value it refuses (cut to 40 bytes). */
static int fail_value(struct dec *d, const char *field, const char *value, const char *expected)
{
	char what[96];
	snprintf(what, sizeof(what), "\"%.40s\" is not %s", value, expected);
	return fail(d, -EPROTO, field, what);
}

/* A number member's text (protobuf's JSON writes 64-bit integers as
 * strings): 1 with *s and *n set, 0 when absent, or the failure. */
static int number_text(struct dec *d, const json_t *v, const char *field, const char **s,
		       size_t *n)
{
	if (!v)
		return 0;
	if (!json_is_string(v))
		return fail(d, -EPROTO, field, "expected an integer as a string");
	*s = json_string_value(v);
	*n = json_string_length(v);
	return 1;
}

/* An int64 member: absent is 0; a decimal string (Go's strconv.ParseInt,
 * which etcd's gateway reads and FormatInt writes) or a JSON integer. */
static int get_i64(struct dec *d, const json_t *o, const char *field, int64_t *out)
{
	*out = 0;
	const json_t *v = json_object_get(o, field);
	if (json_is_integer(v)) {
		*out = json_integer_value(v);
		return 0;
	}
	const char *s;
	size_t n;
	int rc = number_text(d, v, field, &s, &n);
	if (rc <= 0)
		return rc;
	if (!strconv_parse_int64(s, n, out))
		return fail_value(d, field, s, "a decimal int64");
	return 0;
}

/* A uint64 (member ids): decimal digits only, within uint64. */
static int get_u64(struct dec *d, const json_t *o, const char *field, uint64_t *out)
{
	*out = 0;
	const char *s;
	size_t n;
	int rc = number_text(d, json_object_get(o, field), field, &s, &n);
	if (rc <= 0)
		return rc;
	uint64_t v = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned digit = (unsigned)(s[i] - '0');
		if (s[i] < '0' || s[i] > '9' || v > (UINT64_MAX - digit) / 10)
			return fail_value(d, field, s, "a decimal uint64");
		v = v * 10 + digit;
	}
	if (n == 0)
		return fail_value(d, field, s, "a decimal uint64");
	*out = v;
	return 0;
}

static int get_bool(struct dec *d, const json_t *o, const char *field, bool *out)
{
	*out = false;
	const json_t *v = json_object_get(o, field);
	if (!v)
		return 0;
	if (!json_is_boolean(v))
		return fail(d, -EPROTO, field, "expected true or false");
	*out = json_is_true(v);
	return 0;
}

/* An object member; absent reads as NULL (then every field in it is 0). */
static int get_object(struct dec *d, const json_t *o, const char *field, const json_t **out)
{
	*out = json_object_get(o, field);
	if (*out && !json_is_object(*out))
		return fail(d, -EPROTO, field, "expected an object");
	return 0;
}

/* Base64 bytes, malloc'd with a NUL after them; absent: "" (zero bytes). */
static int get_bytes(struct dec *d, const json_t *o, const char *field, uint8_t **out,
		     size_t *len)
{
	*out = NULL;
	*len = 0;
	const json_t *v = json_object_get(o, field);
	if (v && !json_is_string(v))
		return fail(d, -EPROTO, field, "expected base64 text");
	const char *s = v ? json_string_value(v) : "";
	size_t n = v ? json_string_length(v) : 0;
	uint8_t *buf = malloc(n / 4 * 3 + 1);
	if (!buf)
		return fail(d, -ENOMEM, field, "out of memory");
	if (etcd_b64_decode(s, n, buf, len) != 0) {
		free(buf);
		return fail(d, -EPROTO, field, "not padded base64");
	}
	buf[*len] = '\0';
	*out = buf;
	return 0;
}

static int header_revision(struct dec *d, const json_t *o, int64_t *rev)
{
	const json_t *h;
	if (get_object(d, o, "header", &h) != 0)
		return d->rc;
	*rev = 0;
	return h ? get_i64(d, h, "revision", rev) : 0;
}

void etcd_range_result_free(struct etcd_range_result *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n_kvs; i++) {
		free(r->kvs[i].key);
		free(r->kvs[i].value);
	}
	free(r->kvs);
	memset(r, 0, sizeof(*r));
}

void etcd_txn_result_free(struct etcd_txn_result *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n_ranges; i++)
		etcd_range_result_free(&r->ranges[i]);
	free(r->ranges);
	memset(r, 0, sizeof(*r));
}

void etcd_response_free(struct etcd_response *r)
{
	etcd_range_result_free(&r->range);
	etcd_txn_result_free(&r->txn);
}

/* One mvccpb.KeyValue; field names what holds it ("kvs[]"). */
static int decode_kv(struct dec *d, const json_t *kv, const char *field, struct etcd_kv *e)
{
	if (!json_is_object(kv))
		return fail(d, -EPROTO, field, "expected an object");
	if (!json_object_get(kv, "key")) {
		char name[48];
		snprintf(name, sizeof(name), "%s.key", field);
		return fail(d, -EPROTO, name, "missing");
	}
	if (get_bytes(d, kv, "key", &e->key, &e->key_len) != 0 ||
	    get_bytes(d, kv, "value", &e->value, &e->value_len) != 0 ||
	    get_i64(d, kv, "create_revision", &e->create_revision) != 0 ||
	    get_i64(d, kv, "mod_revision", &e->mod_revision) != 0 ||
	    get_i64(d, kv, "version", &e->version) != 0 ||
	    get_i64(d, kv, "lease", &e->lease) != 0)
		return d->rc;
	return 0;
}

static int decode_range(struct dec *d, const json_t *o, struct etcd_range_result *r)
{
	memset(r, 0, sizeof(*r));
	if (header_revision(d, o, &r->revision) != 0 || get_i64(d, o, "count", &r->count) != 0 ||
	    get_bool(d, o, "more", &r->more) != 0)
		return d->rc;
	const json_t *kvs = json_object_get(o, "kvs");
	if (!kvs)
		return 0;
	if (!json_is_array(kvs))
		return fail(d, -EPROTO, "kvs", "expected an array");
	size_t n = json_array_size(kvs);
	if (n == 0)
		return 0;
	r->kvs = calloc(n, sizeof(*r->kvs));
	if (!r->kvs)
		return fail(d, -ENOMEM, "kvs", "out of memory");
	for (size_t i = 0; i < n; i++) {
		r->n_kvs = i + 1; /* freed with what it holds on an error */
		if (decode_kv(d, json_array_get(kvs, i), "kvs[]", &r->kvs[i]) != 0)
			return d->rc;
	}
	return 0;
}

static int decode_txn(struct dec *d, const json_t *o, struct etcd_txn_result *t)
{
	if (header_revision(d, o, &t->revision) != 0 ||
	    get_bool(d, o, "succeeded", &t->succeeded) != 0)
		return d->rc;
	const json_t *resps = json_object_get(o, "responses");
	if (!resps)
		return 0;
	if (!json_is_array(resps))
		return fail(d, -EPROTO, "responses", "expected an array");
	size_t n = json_array_size(resps), ranges = 0;
	for (size_t i = 0; i < n; i++) {
		const json_t *r = json_array_get(resps, i);
		if (!json_is_object(r) || json_object_size(r) != 1)
			return fail(d, -EPROTO, "responses[]",
				    "expected an object with one response");
		if (json_object_get(r, "response_range"))
			ranges++;
		else if (!json_object_get(r, "response_put") &&
			 !json_object_get(r, "response_delete_range") &&
			 !json_object_get(r, "response_txn"))
			return fail(d, -EPROTO, "responses[]",
				    "expected response_put, _range, _delete_range or _txn");
	}
	if (ranges == 0)
		return 0;
	t->ranges = calloc(ranges, sizeof(*t->ranges));
	if (!t->ranges)
		return fail(d, -ENOMEM, "responses", "out of memory");
	for (size_t i = 0; i < n; i++) {
		const json_t *r;
		if (get_object(d, json_array_get(resps, i), "response_range", &r) != 0)
			return d->rc;
		if (!r)
			continue;
		int rc = decode_range(d, r, &t->ranges[t->n_ranges]);
		t->n_ranges++; /* freed with what it holds on an error */
		if (rc != 0)
			return rc;
	}
	return 0;
}

/* A body that must be one JSON object (duplicate members refused):
 * the object, or NULL with msg saying why. */
static json_t *load_object(const char *body, size_t len, char *msg, size_t msglen)
{
	if (msglen)
		msg[0] = '\0';
	json_error_t jerr;
	json_t *root = json_loadb(body, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!root) {
		snprintf(msg, msglen, "not JSON at byte %d: %s", jerr.position, jerr.text);
		return NULL;
	}
	if (!json_is_object(root)) {
		json_decref(root);
		snprintf(msg, msglen, "expected a JSON object");
		return NULL;
	}
	return root;
}

int etcd_decode_response(enum etcd_resp_kind kind, const char *body, size_t len,
			 struct etcd_response *out, char *msg, size_t msglen)
{
	memset(out, 0, sizeof(*out));
	struct dec d = {.msg = msg, .msglen = msglen};
	json_t *root = load_object(body, len, msg, msglen);
	if (!root)
		return -EPROTO;
	const json_t *o = root;
	switch (kind) {
	case ETCD_RESP_PUT:
	case ETCD_RESP_LEASE_REVOKE:
		header_revision(&d, o, &out->revision);
		break;
	case ETCD_RESP_DELETE:
		if (header_revision(&d, o, &out->revision) == 0)
			get_i64(&d, o, "deleted", &out->deleted);
		break;
	case ETCD_RESP_RANGE:
		decode_range(&d, o, &out->range);
		out->revision = out->range.revision;
		break;
	case ETCD_RESP_TXN:
		decode_txn(&d, o, &out->txn);
		out->revision = out->txn.revision;
		break;
	case ETCD_RESP_LEASE_KEEPALIVE:
		/* A stream's one message: {"result": {...}}. */
		if (get_object(&d, o, "result", &o) == 0 && !o)
			fail(&d, -EPROTO, "result", "missing");
		/* Then read as a grant's answer: the same fields. An attribute,
		 * not a comment: clang takes no comment as the mark. */
		__attribute__((fallthrough));
	case ETCD_RESP_LEASE_GRANT:
		if (d.rc == 0 && header_revision(&d, o, &out->revision) == 0 &&
		    get_i64(&d, o, "ID", &out->lease_id) == 0)
			get_i64(&d, o, "TTL", &out->ttl);
		break;
	case ETCD_RESP_LEASE_TTL:
		/* TTL -1 and no grantedTTL: the lease is gone. */
		if (header_revision(&d, o, &out->revision) == 0 &&
		    get_i64(&d, o, "ID", &out->lease_id) == 0 &&
		    get_i64(&d, o, "TTL", &out->ttl) == 0)
			get_i64(&d, o, "grantedTTL", &out->granted_ttl);
		break;
	case ETCD_RESP_STATUS: {
		const json_t *h;
		if (get_object(&d, o, "header", &h) == 0 && h &&
		    get_u64(&d, h, "member_id", &out->member_id) == 0)
			get_u64(&d, o, "leader", &out->leader_id);
		break;
	}
	case ETCD_RESP_KINDS:
	default:
		fail(&d, -EINVAL, "kind", "no such response kind");
		break;
	}
	json_decref(root);
	if (d.rc != 0)
		etcd_response_free(out);
	return d.rc;
}

int etcd_decode_error(const char *body, size_t len, char *msg, size_t msglen)
{
	if (msglen)
		msg[0] = '\0';
	json_t *root = json_loadb(body, len, JSON_REJECT_DUPLICATES, NULL);
	const json_t *code = json_object_get(root, "code");
	const json_t *text = json_object_get(root, "message");
	if (!text)
		text = json_object_get(root, "error");
	if (!json_is_integer(code) || (text && !json_is_string(text))) {
		json_decref(root);
		snprintf(msg, msglen, "an error answer that is not etcd's ({\"code\":N,...})");
		return -EPROTO;
	}
	json_int_t c = json_integer_value(code);
	snprintf(msg, msglen, "%s (gRPC code %lld)", text ? json_string_value(text) : "",
		 (long long)c);
	json_decref(root);
	switch (c) {
	case 3: /* InvalidArgument */
		return -EINVAL;
	case 4: /* DeadlineExceeded */
		return -ETIMEDOUT;
	case 5: /* NotFound */
		return -ENOENT;
	case 7:	 /* PermissionDenied */
	case 16: /* Unauthenticated */
		return -EACCES;
	case 8: /* ResourceExhausted */
		return -ENOSPC;
	case 9: /* FailedPrecondition */
		return -EBUSY;
	case 11: /* OutOfRange (compacted) */
		return -ERANGE;
	case 14: /* Unavailable */
		return -EAGAIN;
	default:
		return -EPROTO;
	}
}

/* ---- the watch stream's messages ----------------------------------------- */

void etcd_watch_message_free(struct etcd_watch_message *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n_events; i++) {
		free(m->events[i].kv.key);
		free(m->events[i].kv.value);
	}
	free(m->events);
	memset(m, 0, sizeof(*m));
}

static int decode_watch(struct dec *d, const json_t *root, size_t max_events,
			struct etcd_watch_message *m)
{
	const json_t *err = json_object_get(root, "error");
	if (err) {
		const json_t *text = json_is_object(err) ? json_object_get(err, "message") : NULL;
		char what[160];
		snprintf(what, sizeof(what), "the stream ended with an error: %.100s",
			 json_is_string(text) ? json_string_value(text) : "(no message)");
		return fail(d, -EIO, "error", what);
	}
	const json_t *o;
	if (get_object(d, root, "result", &o) != 0)
		return d->rc;
	if (!o)
		return fail(d, -EPROTO, "result", "missing");
	if (header_revision(d, o, &m->revision) != 0 || get_bool(d, o, "created", &m->created) != 0 ||
	    get_bool(d, o, "canceled", &m->canceled) != 0 ||
	    get_i64(d, o, "compact_revision", &m->compact_revision) != 0 ||
	    get_i64(d, o, "watch_id", &m->watch_id) != 0)
		return d->rc;
	const json_t *events = json_object_get(o, "events");
	if (!events)
		return 0;
	if (!json_is_array(events))
		return fail(d, -EPROTO, "events", "expected an array");
	size_t n = json_array_size(events);
	if (n > max_events) {
		char what[96];
		snprintf(what, sizeof(what), "%zu events in one message; at most %zu taken", n,
			 max_events);
		return fail(d, -EMSGSIZE, "events", what);
	}
	if (n == 0)
		return 0;
	m->events = calloc(n, sizeof(*m->events));
	if (!m->events)
		return fail(d, -ENOMEM, "events", "out of memory");
	for (size_t i = 0; i < n; i++) {
		const json_t *ev = json_array_get(events, i);
		struct etcd_watch_event *e = &m->events[i];
		m->n_events = i + 1; /* freed with what it holds on an error */
		if (!json_is_object(ev))
			return fail(d, -EPROTO, "events[]", "expected an object");
		const json_t *type = json_object_get(ev, "type");
		if (type && !json_is_string(type))
			return fail(d, -EPROTO, "events[].type", "expected PUT or DELETE");
		/* PUT is the zero value: left out. */
		if (!type || strcmp(json_string_value(type), "PUT") == 0)
			e->deleted = false;
		else if (strcmp(json_string_value(type), "DELETE") == 0)
			e->deleted = true;
		else
			return fail_value(d, "events[].type", json_string_value(type),
					  "PUT or DELETE");
		const json_t *kv;
		if (get_object(d, ev, "kv", &kv) != 0)
			return d->rc;
		if (!kv)
			return fail(d, -EPROTO, "events[].kv", "missing");
		if (decode_kv(d, kv, "events[].kv", &e->kv) != 0)
			return d->rc;
	}
	return 0;
}

int etcd_decode_watch(const char *line, size_t len, size_t max_events,
		      struct etcd_watch_message *out, char *msg, size_t msglen)
{
	memset(out, 0, sizeof(*out));
	struct dec d = {.msg = msg, .msglen = msglen};
	json_t *root = load_object(line, len, msg, msglen);
	if (!root)
		return -EPROTO;
	decode_watch(&d, root, max_events, out);
	json_decref(root);
	if (d.rc != 0)
		etcd_watch_message_free(out);
	return d.rc;
}
