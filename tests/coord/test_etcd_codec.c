/* tests/coord: the etcd client's JSON codec (coord/etcd_codec.c) and its
 * bounds, with no etcd: answers captured from etcd 3.4.23's gRPC gateway
 * (Debian's etcd-server, by curl) decoded, damaged answers refused with
 * the field named, requests' shapes, base64 both ways. And the client
 * (coord/etcd_client.c) against a fake HTTP server in a thread: failover
 * past an endpoint that refuses connections, a response over the limit
 * refused, and transactions over 128 operations or 1.5 MiB refused before
 * anything is sent. The shapes follow etcd's api/etcdserverpb/rpc.proto
 * (3.4) as the gateway writes it (protobuf's JSON: int64 as strings, zero
 * values left out). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "coord/coord.h"
#include "fake_http.h"

static void b64_both_ways(void **state)
{
	(void)state;
	uint8_t in[300], out[300];
	char text[401];
	for (size_t i = 0; i < sizeof(in); i++)
		in[i] = (uint8_t)(i * 7 + 3);
	for (size_t n = 0; n <= 7; n++) {
		etcd_b64_encode(in, n, text);
		assert_int_equal(strlen(text), etcd_b64_len(n));
		size_t m = 99;
		assert_int_equal(etcd_b64_decode(text, strlen(text), out, &m), 0);
		assert_int_equal(m, n);
		assert_memory_equal(in, out, n);
	}
	etcd_b64_encode((const uint8_t *)"foo", 3, text);
	assert_string_equal(text, "Zm9v");
	size_t m;
	/* Refused: unpadded, a character outside the alphabet, '=' inside,
	 * and bits the padding drops left set ("Zh==" would be "f" too). */
	const char *bad[] = {"Zm9", "Zm9v=", "Zm 9", "Z=9v", "Zm9v\n", "Zh==", "Zm9w=Zm9",
			     "Zm-_"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(etcd_b64_decode(bad[i], strlen(bad[i]), out, &m), -EINVAL);
	assert_int_equal(etcd_b64_decode("Zg==", 4, out, &m), 0);
	assert_int_equal(m, 1);
	assert_int_equal(out[0], 'f');
}

#define HDR                                                                               \
	"\"header\":{\"cluster_id\":\"324952591200643719\",\"member_id\":\"3319814642761637952\"," \
	"\"revision\":\"3\",\"raft_term\":\"2\"}"

static void decodes_captured_answers(void **state)
{
	(void)state;
	struct etcd_response r;
	char msg[256];
	const char *range = "{" HDR ",\"kvs\":[{\"key\":\"Zm9v\",\"create_revision\":\"2\","
			    "\"mod_revision\":\"2\",\"version\":\"1\",\"value\":\"YmFy\","
			    "\"lease\":\"2324035686521061382\"}],\"count\":\"1\"}";
	assert_int_equal(etcd_decode_response(ETCD_RESP_RANGE, range, strlen(range), &r, msg,
					      sizeof(msg)),
			 0);
	assert_int_equal(r.revision, 3);
	assert_int_equal(r.range.n_kvs, 1);
	assert_int_equal(r.range.count, 1);
	assert_int_equal(r.range.kvs[0].key_len, 3);
	assert_string_equal((char *)r.range.kvs[0].key, "foo");
	assert_string_equal((char *)r.range.kvs[0].value, "bar");
	assert_int_equal(r.range.kvs[0].create_revision, 2);
	assert_int_equal(r.range.kvs[0].version, 1);
	assert_true(r.range.kvs[0].lease == 2324035686521061382LL);
	etcd_response_free(&r);

	/* A transaction that held, with a range among its answers. */
	const char *txn_ok =
		"{" HDR ",\"succeeded\":true,\"responses\":[{\"response_put\":{\"header\":"
		"{\"revision\":\"3\"}}},{\"response_range\":{\"header\":{\"revision\":\"3\"},"
		"\"kvs\":[{\"key\":\"YQ==\",\"create_revision\":\"3\",\"mod_revision\":\"3\","
		"\"version\":\"1\",\"value\":\"Yg==\"}],\"count\":\"1\"}},"
		"{\"response_delete_range\":{\"header\":{\"revision\":\"3\"}}}]}";
	assert_int_equal(etcd_decode_response(ETCD_RESP_TXN, txn_ok, strlen(txn_ok), &r, msg,
					      sizeof(msg)),
			 0);
	assert_true(r.txn.succeeded);
	assert_int_equal(r.txn.n_ranges, 1);
	assert_int_equal(r.txn.ranges[0].n_kvs, 1);
	assert_string_equal((char *)r.txn.ranges[0].kvs[0].key, "a");
	assert_int_equal(r.txn.ranges[0].kvs[0].lease, 0); /* absent: no lease */
	etcd_response_free(&r);

	/* One that failed: the gateway leaves "succeeded" (false) out. */
	const char *txn_failed = "{" HDR ",\"responses\":[{\"response_range\":{\"header\":"
				 "{\"revision\":\"3\"},\"count\":\"0\"}}]}";
	assert_int_equal(etcd_decode_response(ETCD_RESP_TXN, txn_failed, strlen(txn_failed), &r,
					      msg, sizeof(msg)),
			 0);
	assert_false(r.txn.succeeded);
	assert_int_equal(r.txn.n_ranges, 1);
	assert_int_equal(r.txn.ranges[0].n_kvs, 0);
	etcd_response_free(&r);

	const char *grant = "{" HDR ",\"ID\":\"2324035686521061382\",\"TTL\":\"3\"}";
	assert_int_equal(etcd_decode_response(ETCD_RESP_LEASE_GRANT, grant, strlen(grant), &r,
					      msg, sizeof(msg)),
			 0);
	assert_true(r.lease_id == 2324035686521061382LL);
	assert_int_equal(r.ttl, 3);
	/* /v3/lease/timetolive, captured from etcd 3.4.23: a live lease, and
	 * one that is gone (TTL -1, no grantedTTL). */
	const char *ttl_live = "{" HDR ",\"ID\":\"2465899078078292998\",\"TTL\":\"29\","
			       "\"grantedTTL\":\"30\"}";
	const char *ttl_gone = "{" HDR ",\"ID\":\"12345\",\"TTL\":\"-1\"}";
	assert_int_equal(etcd_decode_response(ETCD_RESP_LEASE_TTL, ttl_live, strlen(ttl_live), &r,
					      msg, sizeof(msg)),
			 0);
	assert_true(r.lease_id == 2465899078078292998LL);
	assert_int_equal(r.ttl, 29);
	assert_int_equal(r.granted_ttl, 30);
	assert_int_equal(etcd_decode_response(ETCD_RESP_LEASE_TTL, ttl_gone, strlen(ttl_gone), &r,
					      msg, sizeof(msg)),
			 0);
	assert_int_equal(r.ttl, -1);
	assert_int_equal(r.granted_ttl, 0);
	/* A keep-alive is a stream's message; an expired lease has no TTL. */
	const char *alive = "{\"result\":{" HDR ",\"ID\":\"7\",\"TTL\":\"3\"}}";
	const char *gone = "{\"result\":{" HDR ",\"ID\":\"7\"}}";
	assert_int_equal(etcd_decode_response(ETCD_RESP_LEASE_KEEPALIVE, alive, strlen(alive), &r,
					      msg, sizeof(msg)),
			 0);
	assert_int_equal(r.ttl, 3);
	assert_int_equal(etcd_decode_response(ETCD_RESP_LEASE_KEEPALIVE, gone, strlen(gone), &r,
					      msg, sizeof(msg)),
			 0);
	assert_int_equal(r.ttl, 0);
	const char *del = "{" HDR ",\"deleted\":\"1\"}";
	assert_int_equal(etcd_decode_response(ETCD_RESP_DELETE, del, strlen(del), &r, msg,
					      sizeof(msg)),
			 0);
	assert_int_equal(r.deleted, 1);
	const char *status = "{\"header\":{\"member_id\":\"14686902309849610056\",\"revision\":"
			     "\"1\"},\"version\":\"3.4.23\",\"leader\":\"1237069423773772934\"}";
	assert_int_equal(etcd_decode_response(ETCD_RESP_STATUS, status, strlen(status), &r, msg,
					      sizeof(msg)),
			 0);
	assert_true(r.member_id == 14686902309849610056ULL);
	assert_true(r.leader_id == 1237069423773772934ULL);
}

static void refuses_damaged_answers(void **state)
{
	(void)state;
	struct {
		enum etcd_resp_kind kind;
		const char *body;
		const char *names;
	} cases[] = {
		{ETCD_RESP_PUT, "", "not JSON"},
		{ETCD_RESP_PUT, "[]", "expected a JSON object"},
		{ETCD_RESP_PUT, "{\"header\":[]}", "field header"},
		{ETCD_RESP_PUT, "{\"header\":{\"revision\":\"12x\"}}", "field revision"},
		{ETCD_RESP_PUT, "{\"header\":{\"revision\":\"99999999999999999999\"}}",
		 "field revision"},
		{ETCD_RESP_PUT, "{\"header\":{\"revision\":true}}", "field revision"},
		{ETCD_RESP_PUT, "{\"header\":{\"revision\":\"\\t5\"}}", "field revision"},
		{ETCD_RESP_PUT, "{\"header\":{\"revision\":\" 5\"}}", "field revision"},
		{ETCD_RESP_PUT, "{\"header\":{\"revision\":\"\"}}", "field revision"},
		{ETCD_RESP_PUT, "{\"header\":{\"revision\":\"1\",\"revision\":\"2\"}}", "not JSON"},
		{ETCD_RESP_RANGE, "{\"kvs\":{}}", "field kvs"},
		{ETCD_RESP_RANGE, "{\"kvs\":[1]}", "field kvs[]"},
		{ETCD_RESP_RANGE, "{\"kvs\":[{\"value\":\"YQ==\"}]}", "field kvs[].key"},
		{ETCD_RESP_RANGE, "{\"kvs\":[{\"key\":\"YQ=\"}]}", "field key"},
		{ETCD_RESP_RANGE, "{\"kvs\":[{\"key\":\"YQ==\"},{\"key\":\"YQ==\",\"version\":1.5}]}",
		 "field version"},
		{ETCD_RESP_RANGE, "{\"more\":\"yes\"}", "field more"},
		{ETCD_RESP_TXN, "{\"succeeded\":1}", "field succeeded"},
		{ETCD_RESP_TXN, "{\"responses\":[{}]}", "field responses[]"},
		{ETCD_RESP_TXN, "{\"responses\":[{\"response_zap\":{}}]}", "field responses[]"},
		{ETCD_RESP_TXN, "{\"responses\":[{\"response_range\":{\"kvs\":[{\"key\":5}]}}]}",
		 "field key"},
		{ETCD_RESP_LEASE_KEEPALIVE, "{\"ID\":\"7\",\"TTL\":\"3\"}", "field result"},
		{ETCD_RESP_LEASE_GRANT, "{\"ID\":\"-\"}", "field ID"},
		{ETCD_RESP_LEASE_TTL, "{\"ID\":\"7\",\"TTL\":\"x\"}", "field TTL"},
		{ETCD_RESP_LEASE_TTL, "{\"ID\":\"7\",\"TTL\":\"3\",\"grantedTTL\":\"3s\"}",
		 "field grantedTTL"},
		{ETCD_RESP_STATUS, "{\"header\":{\"member_id\":\"-1\"}}", "field member_id"},
		{ETCD_RESP_STATUS, "{\"header\":{\"member_id\":\"\"}}", "field member_id"},
		{ETCD_RESP_STATUS, "{\"header\":{},\"leader\":\"18446744073709551616\"}",
		 "field leader"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct etcd_response r;
		char msg[256];
		int rc = etcd_decode_response(cases[i].kind, cases[i].body, strlen(cases[i].body), &r,
					      msg, sizeof(msg));
		if (rc != -EPROTO || !strstr(msg, cases[i].names))
			fail_msg("case %zu (%s): rc %d, \"%s\"; expected -EPROTO naming \"%s\"", i,
				 cases[i].body, rc, msg, cases[i].names);
		assert_null(r.range.kvs);
		assert_null(r.txn.ranges);
	}
	/* Every prefix of a good answer is refused, never read past. */
	const char *range = "{" HDR ",\"kvs\":[{\"key\":\"Zm9v\",\"value\":\"YmFy\"}],\"count\":\"1\"}";
	for (size_t n = 0; n < strlen(range); n++) {
		char *cut = malloc(n ? n : 1);
		memcpy(cut, range, n);
		struct etcd_response r;
		char msg[128];
		assert_int_equal(etcd_decode_response(ETCD_RESP_RANGE, cut, n, &r, msg, sizeof(msg)),
				 -EPROTO);
		free(cut);
	}
}

static void decodes_errors(void **state)
{
	(void)state;
	char msg[256];
	const char *nf = "{\"error\":\"etcdserver: requested lease not found\",\"message\":"
			 "\"etcdserver: requested lease not found\",\"code\":5}";
	assert_int_equal(etcd_decode_error(nf, strlen(nf), msg, sizeof(msg)), -ENOENT);
	assert_non_null(strstr(msg, "requested lease not found"));
	const char *unavailable = "{\"error\":\"etcdserver: leader changed\",\"code\":14}";
	assert_int_equal(etcd_decode_error(unavailable, strlen(unavailable), msg, sizeof(msg)),
			 -EAGAIN);
	assert_non_null(strstr(msg, "leader changed"));
	const char *bad[] = {"", "{}", "{\"code\":\"5\"}", "{\"code\":5,\"message\":7}", "nope"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(etcd_decode_error(bad[i], strlen(bad[i]), msg, sizeof(msg)), -EPROTO);
}

static void encodes_requests(void **state)
{
	(void)state;
	struct etcd_compare cmp[] = {
		{.target = ETCD_CMP_LEASE, .result = ETCD_CMP_EQUAL, .key = "o", .key_len = 1,
		 .number = 2324035686521061382LL},
		{.target = ETCD_CMP_VALUE, .result = ETCD_CMP_NOT_EQUAL, .key = "o", .key_len = 1,
		 .value = "\xff\x00", .value_len = 2},
		{.target = ETCD_CMP_VERSION, .result = ETCD_CMP_LESS, .key = "v", .key_len = 1},
		{.target = ETCD_CMP_CREATE, .result = ETCD_CMP_GREATER, .key = "c", .key_len = 1,
		 .number = 9},
		{.target = ETCD_CMP_MOD, .result = ETCD_CMP_EQUAL, .key = "m", .key_len = 1,
		 .number = -1},
	};
	struct etcd_op ops[] = {
		{.kind = ETCD_OP_PUT, .key = "k", .key_len = 1, .value = "v", .value_len = 1,
		 .lease = 5},
		{.kind = ETCD_OP_RANGE, .key = "a", .key_len = 1, .range_end = "b", .range_end_len = 1},
		{.kind = ETCD_OP_DELETE, .key = "d", .key_len = 1},
	};
	struct etcd_txn t = {cmp, 5, ops, 3, ops, 1};
	char *text = etcd_encode_txn(&t);
	assert_non_null(text);
	json_t *j = json_loads(text, 0, NULL);
	assert_non_null(j);
	const char *want_cmp =
		"[{\"target\":\"LEASE\",\"result\":\"EQUAL\",\"key\":\"bw==\",\"lease\":"
		"\"2324035686521061382\"},{\"target\":\"VALUE\",\"result\":\"NOT_EQUAL\",\"key\":"
		"\"bw==\",\"value\":\"/wA=\"},{\"target\":\"VERSION\",\"result\":\"LESS\",\"key\":"
		"\"dg==\",\"version\":\"0\"},{\"target\":\"CREATE\",\"result\":\"GREATER\",\"key\":"
		"\"Yw==\",\"create_revision\":\"9\"},{\"target\":\"MOD\",\"result\":\"EQUAL\","
		"\"key\":\"bQ==\",\"mod_revision\":\"-1\"}]";
	const char *want_ok =
		"[{\"request_put\":{\"key\":\"aw==\",\"value\":\"dg==\",\"lease\":\"5\"}},"
		"{\"request_range\":{\"key\":\"YQ==\",\"range_end\":\"Yg==\"}},"
		"{\"request_delete_range\":{\"key\":\"ZA==\"}}]";
	json_t *wc = json_loads(want_cmp, 0, NULL), *wo = json_loads(want_ok, 0, NULL);
	assert_true(json_equal(json_object_get(j, "compare"), wc));
	assert_true(json_equal(json_object_get(j, "success"), wo));
	assert_int_equal(json_array_size(json_object_get(j, "failure")), 1);
	json_decref(wc);
	json_decref(wo);
	json_decref(j);
	free(text);
	/* A target out of range is not encoded. */
	struct etcd_compare odd = {.target = (enum etcd_cmp_target)9, .key = "o", .key_len = 1};
	struct etcd_txn t2 = {&odd, 1, NULL, 0, NULL, 0};
	assert_null(etcd_encode_txn(&t2));

	text = etcd_encode_lease_grant(5);
	assert_string_equal(text, "{\"TTL\":\"5\"}");
	free(text);
	text = etcd_encode_put("foo", 3, "", 0, 0);
	assert_string_equal(text, "{\"key\":\"Zm9v\",\"value\":\"\"}");
	free(text);

	uint8_t end[4];
	assert_int_equal(etcd_prefix_end("ab", 2, end), 2);
	assert_memory_equal(end, "ac", 2);
	assert_int_equal(etcd_prefix_end("a\xff", 2, end), 1);
	assert_memory_equal(end, "b", 1);
	assert_int_equal(etcd_prefix_end("\xff\xff", 2, end), 1);
	assert_int_equal(end[0], 0);
}

/* ---- the client against a fake HTTP server ------------------------------ */

struct fake {
	struct fake_http http;
	/* FK1: both written by one thread and read by the other, relaxed:
	 * the socket orders them (the test sets body_bytes before it sends a
	 * request, the server counts a request before it answers), which
	 * ThreadSanitizer does not see. */
	size_t body_bytes; /* the 200 answer's body: a range of this size */
	int requests;
};

/* One request a connection is enough here: counted, answered, closed. */
static void fake_handle(void *arg, struct fake_http_exchange *x)
{
	struct fake *f = arg;
	__atomic_fetch_add(&f->requests, 1, __ATOMIC_RELAXED); /* FK1 */
	size_t body = __atomic_load_n(&f->body_bytes, __ATOMIC_RELAXED); /* FK1 */
	char *resp = malloc(body);
	/* {"kvs":[],"count":"0","x":"....."} padded to body bytes. */
	const char *head = "{\"count\":\"0\",\"x\":\"";
	memcpy(resp, head, strlen(head));
	memset(resp + strlen(head), 'a', body - strlen(head) - 2);
	memcpy(resp + body - 2, "\"}", 2);
	fake_http_answer(x, 200, resp, body, true);
	free(resp);
}

static void client_bounds_and_failover(void **state)
{
	(void)state;
	struct fake f = {.body_bytes = 100};
	fake_http_start(&f.http, fake_handle, &f);
	/* A port nobody listens on: bound, then closed. */
	int dead_port;
	close(fake_http_listen_loopback(&dead_port));

	char endpoints[128], err[256];
	snprintf(endpoints, sizeof(endpoints), "http://127.0.0.1:%d,http://127.0.0.1:%d/",
		 dead_port, f.http.port);
	struct etcd_client_options opts = {.max_response_bytes = 4096, .timeout_ms = 5000};
	struct etcd_client *c;
	assert_int_equal(etcd_client_open(&c, endpoints, &opts, err, sizeof(err)), 0);
	assert_int_equal(etcd_client_endpoints(c), 2);

	/* The first endpoint refuses: the second answers. */
	struct etcd_range_result r;
	assert_int_equal(etcd_range(c, "k", 1, NULL, 0, 0, &r), 0);
	etcd_range_result_free(&r);
	assert_int_equal(etcd_client_current(c), 1);

	/* An answer over the limit is refused, not buffered. */
	__atomic_store_n(&f.body_bytes, 5000, __ATOMIC_RELAXED); /* FK1 */
	assert_int_equal(etcd_range(c, "k", 1, NULL, 0, 0, &r), -EMSGSIZE);
	assert_non_null(strstr(etcd_client_error(c), "exceeds 4096 bytes"));
	char named[64];
	snprintf(named, sizeof(named), "etcd http://127.0.0.1:%d/v3/kv/range", f.http.port);
	assert_non_null(strstr(etcd_client_error(c), named));
	__atomic_store_n(&f.body_bytes, 100, __ATOMIC_RELAXED); /* FK1 */

	int before = __atomic_load_n(&f.requests, __ATOMIC_RELAXED); /* FK1 */
	/* 129 operations: refused before sending. */
	struct etcd_op *ops = calloc(129, sizeof(*ops));
	for (size_t i = 0; i < 129; i++)
		ops[i] = (struct etcd_op){.kind = ETCD_OP_PUT, .key = "k", .key_len = 1};
	struct etcd_txn t = {NULL, 0, ops, 129, NULL, 0};
	struct etcd_txn_result tr;
	assert_int_equal(etcd_txn(c, &t, &tr), -E2BIG);
	assert_non_null(strstr(etcd_client_error(c), "at most 128"));
	t = (struct etcd_txn){NULL, 0, NULL, 0, ops, 129};
	assert_int_equal(etcd_txn(c, &t, &tr), -E2BIG);
	/* 128 puts of 12 KiB each: about 2 MiB of JSON, over 1.5 MiB. */
	size_t big = 12 * 1024;
	char *value = malloc(big);
	memset(value, 'v', big);
	for (size_t i = 0; i < 128; i++) {
		ops[i].value = value;
		ops[i].value_len = big;
	}
	t = (struct etcd_txn){NULL, 0, ops, 128, NULL, 0};
	assert_int_equal(etcd_txn(c, &t, &tr), -E2BIG);
	assert_non_null(strstr(etcd_client_error(c), "--max-request-bytes"));
	assert_int_equal(etcd_put(c, "k", 1, value, 0, 0, NULL), 0); /* still fine after */
	assert_int_equal(__atomic_load_n(&f.requests, __ATOMIC_RELAXED), before + 1); /* FK1 */
	free(value);
	free(ops);
	etcd_client_close(c);

	/* Nobody at all: -ECONNREFUSED naming the endpoints' count. */
	snprintf(endpoints, sizeof(endpoints), "http://127.0.0.1:%d,http://127.0.0.1:%d",
		 dead_port, dead_port);
	assert_int_equal(etcd_client_open(&c, endpoints, NULL, err, sizeof(err)), 0);
	assert_int_equal(etcd_put(c, "k", 1, "v", 1, 0, NULL), -ECONNREFUSED);
	assert_non_null(strstr(etcd_client_error(c), "none of 2 endpoints"));
	etcd_client_close(c);

	char longest[ETCD_MAX_ENDPOINT_LEN + 2];
	memcpy(longest, "http://", 7);
	memset(longest + 7, 'a', ETCD_MAX_ENDPOINT_LEN - 6);
	longest[ETCD_MAX_ENDPOINT_LEN + 1] = '\0';
	const char *bad[] = {"", "127.0.0.1:2379", "http://a,,http://b", "ftp://x", longest};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(etcd_client_open(&c, bad[i], NULL, err, sizeof(err)), -EINVAL);
		assert_null(c);
		assert_non_null(strstr(err, "etcd endpoints"));
	}

	fake_http_stop(&f.http);
}

/* The one-pass transaction body (etcd_encode_txn) against jansson's
 * compact text of the same objects, byte for byte: the objects built here
 * as the encoder built them before issue 40's cut (jansson, members in
 * the order set). Random transactions (seeded: the same each run) of
 * every compare target and result, every operation kind, keys and values
 * of 0 to 40 arbitrary bytes (base64's three paddings), leases and
 * numbers at int64's ends; a failure list of none, too. */
static json_t *ref_b64(const void *bytes, size_t n)
{
	char *text = malloc(etcd_b64_len(n) + 1);
	etcd_b64_encode(bytes ? bytes : (const void *)"", n, text);
	json_t *s = json_string(text);
	free(text);
	return s;
}

static json_t *ref_int(int64_t v)
{
	char text[24];
	snprintf(text, sizeof(text), "%lld", (long long)v);
	return json_string(text);
}

static json_t *ref_op(const struct etcd_op *op)
{
	json_t *o = json_object();
	json_object_set_new(o, "key", ref_b64(op->key, op->key_len));
	if (op->kind == ETCD_OP_PUT) {
		json_object_set_new(o, "value", ref_b64(op->value, op->value_len));
		if (op->lease != 0)
			json_object_set_new(o, "lease", ref_int(op->lease));
	} else if (op->range_end) {
		json_object_set_new(o, "range_end", ref_b64(op->range_end, op->range_end_len));
	}
	const char *name = op->kind == ETCD_OP_PUT     ? "request_put"
			   : op->kind == ETCD_OP_RANGE ? "request_range"
						       : "request_delete_range";
	return json_pack("{so}", name, o);
}

static char *ref_txn(const struct etcd_txn *t)
{
	static const char *const targets[] = {"VERSION", "CREATE", "MOD", "VALUE", "LEASE"};
	static const char *const fields[] = {"version", "create_revision", "mod_revision",
					     "value", "lease"};
	static const char *const results[] = {"EQUAL", "GREATER", "LESS", "NOT_EQUAL"};
	json_t *cmp = json_array(), *ok = json_array(), *fail = json_array();
	for (size_t i = 0; i < t->n_compare; i++) {
		const struct etcd_compare *c = &t->compare[i];
		json_t *o = json_pack("{ssss}", "target", targets[c->target], "result",
				      results[c->result]);
		json_object_set_new(o, "key", ref_b64(c->key, c->key_len));
		json_object_set_new(o, fields[c->target], c->target == ETCD_CMP_VALUE
								 ? ref_b64(c->value, c->value_len)
								 : ref_int(c->number));
		json_array_append_new(cmp, o);
	}
	for (size_t i = 0; i < t->n_success; i++)
		json_array_append_new(ok, ref_op(&t->success[i]));
	for (size_t i = 0; i < t->n_failure; i++)
		json_array_append_new(fail, ref_op(&t->failure[i]));
	json_t *root = json_pack("{sososo}", "compare", cmp, "success", ok, "failure", fail);
	char *text = json_dumps(root, JSON_COMPACT);
	json_decref(root);
	return text;
}

static uint64_t rnd_state = 88172645463325252ULL;
static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

static int64_t rnd_number(void)
{
	static const int64_t ends[] = {0, 1, -1, INT64_MAX, INT64_MIN, 2324035686521061382LL};
	return rnd() % 2 ? ends[rnd() % 6] : (int64_t)rnd();
}

static void encodes_txn_as_jansson(void **state)
{
	(void)state;
	static uint8_t bytes[64][41];
	for (size_t i = 0; i < 64; i++)
		for (size_t k = 0; k < 41; k++)
			bytes[i][k] = (uint8_t)rnd();
	struct etcd_compare cmp[4];
	struct etcd_op ops[2][130];
	for (unsigned round = 0; round < 400; round++) {
		size_t nc = rnd() % 5, n[2] = {rnd() % 130, round % 3 ? rnd() % 4 : 0};
		for (size_t i = 0; i < nc && i < 4; i++)
			cmp[i] = (struct etcd_compare){
				.target = (enum etcd_cmp_target)(rnd() % 5),
				.result = (enum etcd_cmp_result)(rnd() % 4),
				.key = bytes[rnd() % 64], .key_len = rnd() % 41,
				.number = rnd_number(), .value = bytes[rnd() % 64],
				.value_len = rnd() % 41};
		if (nc > 4)
			nc = 4;
		for (size_t l = 0; l < 2; l++)
			for (size_t i = 0; i < n[l]; i++) {
				bool end = rnd() % 2;
				ops[l][i] = (struct etcd_op){
					.kind = (enum etcd_op_kind)(rnd() % 3),
					.key = bytes[rnd() % 64], .key_len = rnd() % 41,
					.value = rnd() % 8 ? bytes[rnd() % 64] : NULL,
					.range_end = end ? bytes[rnd() % 64] : NULL,
					.range_end_len = end ? rnd() % 41 : 0,
					.lease = rnd() % 3 ? 0 : rnd_number()};
				ops[l][i].value_len = ops[l][i].value ? rnd() % 41 : 0;
			}
		struct etcd_txn t = {cmp, nc, ops[0], n[0], ops[1], n[1]};
		char *got = etcd_encode_txn(&t), *want = ref_txn(&t);
		assert_non_null(got);
		assert_string_equal(got, want);
		free(got);
		free(want);
	}
	/* An empty one, and an operation of no known kind refused. */
	struct etcd_txn empty = {NULL, 0, NULL, 0, NULL, 0};
	char *text = etcd_encode_txn(&empty);
	assert_string_equal(text, "{\"compare\":[],\"success\":[],\"failure\":[]}");
	free(text);
	struct etcd_op odd = {.kind = (enum etcd_op_kind)7, .key = "k", .key_len = 1};
	struct etcd_txn t3 = {NULL, 0, &odd, 1, NULL, 0};
	assert_null(etcd_encode_txn(&t3));
	struct etcd_compare odd_result = {.target = ETCD_CMP_LEASE,
					  .result = (enum etcd_cmp_result)4};
	struct etcd_txn t4 = {&odd_result, 1, NULL, 0, NULL, 0};
	assert_null(etcd_encode_txn(&t4));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(b64_both_ways),
		cmocka_unit_test(decodes_captured_answers),
		cmocka_unit_test(refuses_damaged_answers),
		cmocka_unit_test(decodes_errors),
		cmocka_unit_test(encodes_requests),
		cmocka_unit_test(encodes_txn_as_jansson),
		cmocka_unit_test(client_bounds_and_failover),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
