/* tests/coord: the committer (coord/commit_queue.c), the placement value
 * (coord/placement_value.c) and a shard's rebuild (coord/rebuild.c) with
 * no etcd: a fake etcd in a thread speaks just enough of the gRPC
 * gateway's JSON (POST /v3/kv/txn and /v3/kv/range, as etcd 3.4 writes
 * them: api/etcdserverpb/rpc.proto, int64 as strings, zero values left
 * out) and evaluates the committer's two compares, LEASE(owner) and
 * VERSION(lane key), the way etcd's txn does (3.4's etcdserver/apply.go,
 * applyCompare: a missing key has version 0 and lease 0). It can drop a
 * connection before answering, having applied the transaction or not.
 *
 * Checks: a batch whose answer was lost is sent again and committed once
 * (the fake counts applied puts: each record once), and one refused
 * after its first send landed too; the fence failing
 * answers the batch and every later record -ESTALE with nothing applied;
 * a full lane refuses with -EAGAIN at exactly its bound, and one whose
 * oldest record is older than max_window_ms too (injected clock); a close
 * answers queued records -ECANCELED and an unanswered batch -EIO; a put
 * and a delete of one pod go in two transactions, in push order; the
 * value's text both ways and its refusals; the rebuild's paging at one
 * revision, its restart after a compaction, and its refusal of a value
 * that does not decode. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "coord/coord.h"
#include "fake_http.h"

#define PREFIX "/u/"
#define LEASE 0x1234

/* ---- the value ----------------------------------------------------------- */

static void value_both_ways(void **state)
{
	(void)state;
	struct placement_value v = {.node_generation = UINT64_MAX, .cpu_milli = INT64_MAX,
				    .mem_bytes = 0, .gpus = 8};
	strcpy(v.node, "gpu-a.zone-b");
	strcpy(v.queue, "team-a");
	char text[PLACEMENT_VALUE_MAX + 1];
	int n = placement_value_encode(&v, text);
	assert_string_equal(text,
			    "1 gpu-a.zone-b 18446744073709551615 9223372036854775807 0 8 team-a");
	struct placement_value back;
	char msg[200];
	assert_int_equal(placement_value_decode(text, (size_t)n, &back, msg, sizeof(msg)), 0);
	assert_string_equal(back.node, v.node);
	assert_string_equal(back.queue, v.queue);
	assert_true(back.node_generation == UINT64_MAX && back.cpu_milli == INT64_MAX &&
		    back.gpus == 8 && back.mem_bytes == 0);
	v.queue[0] = '\0';
	n = placement_value_encode(&v, text);
	assert_non_null(strstr(text, " 8 -"));
	assert_int_equal(placement_value_decode(text, (size_t)n, &back, msg, sizeof(msg)), 0);
	assert_string_equal(back.queue, "");
	/* The longest value encodes within the bound. */
	memset(v.node, 'n', PLACEMENT_NODE_MAX);
	v.node[PLACEMENT_NODE_MAX] = '\0';
	memset(v.queue, 'q', PLACEMENT_QUEUE_MAX);
	v.queue[PLACEMENT_QUEUE_MAX] = '\0';
	v.mem_bytes = INT64_MAX;
	v.gpus = INT64_MAX;
	n = placement_value_encode(&v, text);
	assert_true(n > 0 && n <= PLACEMENT_VALUE_MAX);
	assert_int_equal(placement_value_decode(text, (size_t)n, &back, msg, sizeof(msg)), 0);
	/* Refused: bad names, negative numbers. */
	strcpy(v.node, "Node_1");
	assert_int_equal(placement_value_encode(&v, text), -EINVAL);
	strcpy(v.node, "n");
	v.cpu_milli = -1;
	assert_int_equal(placement_value_encode(&v, text), -EINVAL);
}

static void value_refusals(void **state)
{
	(void)state;
	static const struct {
		const char *text;
		const char *field;
	} bad[] = {
		{"", "version"},
		{"4 n 1 1 1 1 -", "version"},
		{"3 n 1 1 1 1 -", "7 fields; expected 9"},
		{"2 n 1 1 1 1 -", "7 fields; expected 8"},
		{"2 n 1 1 1 1 - default ", "labels"},
		{"2 n 1 1 1 1 - Default", "namespace"},
		{"2 n 1 1 1 1 - a.b", "namespace"},
		{"2 n 1 1 1 1 - - app", "labels"},
		{"2 n 1 1 1 1 - - b=1 a=1", "labels"},
		{"2 n 1 1 1 1 - - a=1 a=2", "labels"},
		{"2 n 1 1 1 1 - - a=1  b=2", "labels"},
		{"2 n 1 1 1 1 - - a=x y", "labels"},
		{"2 n 1 1 1 1 - - a==", "labels"},
		{"2 n 1 1 1 1 - - Ex.com/a=1", "labels"},
		{"2 n 1 1 1 1 - - a/b/c=1", "labels"},
		{"2 n 1 1 1 1 - - /a=1", "labels"},
		{"2 n 1 1 1 1 - - =1", "labels"},
		{"2 n 1 1 1 1 - - a=1 ", "labels"},
		{"1 N 1 1 1 1 -", "node"},
		{"1  1 1 1 1 -", "node"},
		{"1 n 01 1 1 1 -", "node generation"},
		{"1 n 18446744073709551616 1 1 1 -", "node generation"},
		{"1 n 1 9223372036854775808 1 1 -", "cpu milli"},
		{"1 n 1 1 -1 1 -", "memory bytes"},
		{"1 n 1 1 1 +1 -", "gpus"},
		{"1 n 1 1 1 1 a.b", "queue"},
		{"1 n 1 1 1 1 ", "queue"},
		{"1 n 1 1 1 1 - x", "more than 7"},
		{"1 n 1 1 1 1", "6 fields"},
		{"1 n 1 1 1 1 -\n", "queue"},
	};
	struct placement_value v;
	char msg[200];
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc = placement_value_decode(bad[i].text, strlen(bad[i].text), &v, msg,
						sizeof(msg));
		if (rc != -EINVAL || !strstr(msg, bad[i].field))
			fail_msg("\"%s\": rc %d, \"%s\"; expected -EINVAL naming %s", bad[i].text,
				 rc, msg, bad[i].field);
		assert_int_equal(v.node[0], 0);
	}
	/* Longer than the bound: refused by length, before reading. */
	char big[PLACEMENT_VALUE_MAX + 2];
	memset(big, 'a', sizeof(big));
	assert_int_equal(placement_value_decode(big, sizeof(big), &v, msg, sizeof(msg)), -EINVAL);
	assert_non_null(strstr(msg, "at most"));
}

/* Version 2: the namespace and labels, both ways, and their bounds (the
 * pod decoder's: 64 labels, a key's prefix 253 bytes and name 63, a value
 * 63) within PLACEMENT_LABELS_MAX bytes. */
static void value_v2(void **state)
{
	(void)state;
	struct placement_value v = {.version = 2, .node_generation = 3, .cpu_milli = 100};
	strcpy(v.node, "n0");
	strcpy(v.ns, "team-a");
	strcpy(v.labels, "app=x example.com/tier=Web_1.b version=");
	v.n_labels = 3;
	char text[PLACEMENT_VALUE_MAX + 1];
	int n = placement_value_encode(&v, text);
	assert_string_equal(text, "2 n0 3 100 0 0 - team-a app=x example.com/tier=Web_1.b version=");
	struct placement_value back;
	char msg[200];
	assert_int_equal(placement_value_decode(text, (size_t)n, &back, msg, sizeof(msg)), 0);
	assert_int_equal(back.version, 2);
	assert_string_equal(back.ns, "team-a");
	assert_string_equal(back.labels, v.labels);
	assert_int_equal(back.n_labels, 3);
	/* No namespace, no labels. */
	v.ns[0] = v.labels[0] = '\0';
	v.n_labels = 0;
	n = placement_value_encode(&v, text);
	assert_string_equal(text, "2 n0 3 100 0 0 - -");
	assert_int_equal(placement_value_decode(text, (size_t)n, &back, msg, sizeof(msg)), 0);
	assert_true(back.ns[0] == '\0' && back.n_labels == 0 && back.version == 2);
	/* A version 1 value decodes as version 1, and re-encodes the same. */
	assert_int_equal(placement_value_decode("1 n0 3 100 0 0 -", 16, &back, msg, sizeof(msg)),
			 0);
	assert_int_equal(back.version, 1);
	assert_int_equal(placement_value_encode(&back, text), 16);
	/* The longest key and value. */
	char key[PLACEMENT_LABEL_KEY_MAX + 1];
	memset(key, 'p', 253);
	key[253] = '/';
	memset(key + 254, 'K', 63);
	key[PLACEMENT_LABEL_KEY_MAX] = '\0';
	snprintf(v.labels, sizeof(v.labels), "%s=%063d", key, 7);
	v.n_labels = 1;
	n = placement_value_encode(&v, text);
	assert_true(n > 0);
	assert_int_equal(placement_value_decode(text, (size_t)n, &back, msg, sizeof(msg)), 0);
	/* One byte more in the name, the prefix or the value: refused. */
	v.labels[253] = 'p';
	assert_int_equal(placement_value_encode(&v, text), -EINVAL);
	snprintf(v.labels, sizeof(v.labels), "a=%064d", 7);
	assert_int_equal(placement_value_encode(&v, text), -EINVAL);
	/* 64 labels within the bytes; a 65th refused. */
	size_t at = 0;
	for (int i = 0; i < PLACEMENT_LABELS_COUNT + 1; i++)
		at += (size_t)snprintf(v.labels + at, sizeof(v.labels) - at, "%sk%02d=v", i ? " " : "",
				       i);
	v.n_labels = PLACEMENT_LABELS_COUNT + 1;
	assert_int_equal(placement_value_encode(&v, text), -EINVAL);
	n = snprintf(text, sizeof(text), "2 n0 3 100 0 0 - - %s", v.labels);
	assert_int_equal(placement_value_decode(text, (size_t)n, &back, msg, sizeof(msg)), -EINVAL);
	assert_non_null(strstr(msg, "at most 64"));
	v.labels[at - 6] = '\0'; /* the 65th gone */
	v.n_labels = PLACEMENT_LABELS_COUNT;
	n = placement_value_encode(&v, text);
	assert_true(n > 0);
	assert_int_equal(placement_value_decode(text, (size_t)n, &back, msg, sizeof(msg)), 0);
	assert_int_equal(back.n_labels, PLACEMENT_LABELS_COUNT);
	/* A count that does not match the text, or a version 1 value with
	 * labels: refused by the encoder. */
	v.n_labels = 3;
	assert_int_equal(placement_value_encode(&v, text), -EINVAL);
	v.version = 1;
	v.n_labels = PLACEMENT_LABELS_COUNT;
	assert_int_equal(placement_value_encode(&v, text), -EINVAL);
	/* Labels over PLACEMENT_LABELS_MAX bytes: refused by the decoder
	 * (the value's bound holds them otherwise). */
	char big[PLACEMENT_VALUE_MAX + 1];
	n = snprintf(big, sizeof(big), "2 n0 3 100 0 0 - -");
	for (int i = 0; (size_t)n + 80 < sizeof(big); i++)
		n += snprintf(big + n, sizeof(big) - (size_t)n, " k%03d=%060d", i, i);
	assert_int_equal(placement_value_decode(big, (size_t)n, &back, msg, sizeof(msg)), -EINVAL);
}

/* Version 3 (issue 40, quota surviving a host's death): the placement's
 * ClusterQueue and ResourceFlavor by name (Kueue's names: DNS subdomains,
 * 253 bytes), both ways, and the refusals: a name too long or out of its
 * alphabet, a flavor without a queue or below version 3. */
static void value_v3(void **state)
{
	(void)state;
	struct placement_value v = {.version = 3, .node_generation = 3, .cpu_milli = 2000};
	strcpy(v.node, "n0");
	strcpy(v.queue, "team-a.batch");
	strcpy(v.flavor, "on-demand");
	strcpy(v.ns, "ns-a");
	strcpy(v.labels, "app=x");
	v.n_labels = 1;
	char text[PLACEMENT_VALUE_MAX + 1];
	int n = placement_value_encode(&v, text);
	assert_string_equal(text, "3 n0 3 2000 0 0 team-a.batch on-demand ns-a app=x");
	struct placement_value back;
	char msg[200];
	assert_int_equal(placement_value_decode(text, (size_t)n, &back, msg, sizeof(msg)), 0);
	assert_int_equal(back.version, 3);
	assert_string_equal(back.queue, "team-a.batch");
	assert_string_equal(back.flavor, "on-demand");
	assert_string_equal(back.ns, "ns-a");
	assert_string_equal(back.labels, "app=x");
	assert_int_equal(back.n_labels, 1);
	assert_int_equal(placement_value_encode(&back, text), n);
	/* No flavor, no namespace, no labels. */
	v.flavor[0] = v.ns[0] = v.labels[0] = '\0';
	v.n_labels = 0;
	n = placement_value_encode(&v, text);
	assert_string_equal(text, "3 n0 3 2000 0 0 team-a.batch - -");
	assert_int_equal(placement_value_decode(text, (size_t)n, &back, msg, sizeof(msg)), 0);
	assert_true(back.flavor[0] == '\0' && back.ns[0] == '\0' && back.version == 3);
	/* The longest names, every field at its longest: within the bound. */
	memset(v.node, 'n', PLACEMENT_NODE_MAX);
	v.node[PLACEMENT_NODE_MAX] = '\0';
	memset(v.queue, 'q', PLACEMENT_CQ_MAX);
	v.queue[PLACEMENT_CQ_MAX] = '\0';
	memset(v.flavor, 'f', PLACEMENT_FLAVOR_MAX);
	v.flavor[PLACEMENT_FLAVOR_MAX] = '\0';
	memset(v.ns, 's', PLACEMENT_NS_MAX);
	v.ns[PLACEMENT_NS_MAX] = '\0';
	v.node_generation = UINT64_MAX;
	v.cpu_milli = v.mem_bytes = v.gpus = INT64_MAX;
	size_t at = 0;
	for (int i = 0; at + 40 < PLACEMENT_LABELS_MAX; i++)
		at += (size_t)snprintf(v.labels + at, sizeof(v.labels) - at, "%sk%02d=%030d",
				       i ? " " : "", i, i);
	v.n_labels = (uint8_t)((at + 1) / 35);
	n = placement_value_encode(&v, text);
	assert_true(n > 0 && n <= PLACEMENT_VALUE_MAX);
	assert_int_equal(placement_value_decode(text, (size_t)n, &back, msg, sizeof(msg)), 0);
	assert_string_equal(back.queue, v.queue);
	assert_string_equal(back.flavor, v.flavor);
	v.labels[0] = '\0';
	v.n_labels = 0;
	/* Refused by the encoder: a name one byte too long, out of its
	 * alphabet, a flavor without a queue, a flavor below version 3, a
	 * version not known. */
	char long_name[PLACEMENT_CQ_MAX + 2];
	memset(long_name, 'q', PLACEMENT_CQ_MAX + 1);
	long_name[PLACEMENT_CQ_MAX + 1] = '\0';
	struct placement_value w = {.version = 3};
	strcpy(w.node, "n0");
	strcpy(w.queue, "cq");
	strcpy(w.flavor, "Default");
	assert_int_equal(placement_value_encode(&w, text), -EINVAL);
	strcpy(w.flavor, "default");
	strcpy(w.queue, "team_a");
	assert_int_equal(placement_value_encode(&w, text), -EINVAL);
	strcpy(w.queue, "-");
	assert_int_equal(placement_value_encode(&w, text), -EINVAL);
	w.queue[0] = '\0';
	assert_int_equal(placement_value_encode(&w, text), -EINVAL);
	strcpy(w.queue, "cq");
	w.version = 2;
	assert_int_equal(placement_value_encode(&w, text), -EINVAL);
	w.version = 4;
	assert_int_equal(placement_value_encode(&w, text), -EINVAL);
	w.version = 3;
	assert_int_equal(placement_value_encode(&w, text), (int)strlen("3 n0 0 0 0 0 cq default -"));
	/* Refused by the decoder, each naming its field. */
	char too_long[PLACEMENT_CQ_MAX + 64];
	snprintf(too_long, sizeof(too_long), "3 n0 1 1 1 1 %s default -", long_name);
	const struct {
		const char *text;
		const char *field;
	} bad[] = {
		{too_long, "field queue"},
		{"3 n0 1 1 1 1 Team-A default -", "field queue"},
		{"3 n0 1 1 1 1 team_a default -", "field queue"},
		{"3 n0 1 1 1 1 cq Default -", "field flavor"},
		{"3 n0 1 1 1 1 cq de/fault -", "field flavor"},
		{"3 n0 1 1 1 1 - default -", "field flavor"},
		{"3 n0 1 1 1 1 cq default", "8 fields; expected 9"},
		{"3 n0 1 1 1 1 cq default Ns", "field namespace"},
		{"3 n0 1 1 1 1 cq default - a=1 ", "labels"},
		{"2 n0 1 1 1 1 cq.b -", "field queue"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc = placement_value_decode(bad[i].text, strlen(bad[i].text), &back, msg,
						sizeof(msg));
		if (rc != -EINVAL || !strstr(msg, bad[i].field))
			fail_msg("\"%.80s\": rc %d, \"%s\"; expected -EINVAL naming %s",
				 bad[i].text, rc, msg, bad[i].field);
		assert_int_equal(back.queue[0], 0);
	}
	/* The longest queue and flavor decode; one byte more does not. */
	long_name[PLACEMENT_CQ_MAX] = '\0';
	snprintf(too_long, sizeof(too_long), "3 n0 1 1 1 1 cq %s -", long_name);
	assert_int_equal(placement_value_decode(too_long, strlen(too_long), &back, msg,
						sizeof(msg)), 0);
	assert_int_equal(strlen(back.flavor), PLACEMENT_FLAVOR_MAX);
}

/* ---- a fake etcd ----------------------------------------------------------- */

enum fake_mode {
	FAKE_OK,
	FAKE_DROP, /* close unanswered, apply nothing */
};

/* The queue's clock in the tests that inject one (open_on). */
static _Atomic int64_t fake_now_ns;

struct fake {
	struct fake_http http;
	/* FK2: the test sets mode and owner_lease, the server reads them; the
	 * rest is the server's, read by the test after the queue is flushed
	 * or closed (each request is answered before the client's call
	 * returns: the socket orders them). All seq_cst: a test. */
	atomic_int mode;
	/* In FAKE_OK: this many txns are applied (when their compares hold)
	 * and their connection closed unanswered. */
	atomic_int drop_next;
	/* Then this many are refused as etcd refuses a write when its space
	 * quota is exceeded (gRPC code 8), nothing applied. */
	atomic_int refuse_next;
	atomic_llong owner_lease;
	atomic_llong lane_version;
	atomic_int txns, applied_txns, dropped;
	/* Added to fake_now_ns before a transaction is answered succeeded
	 * (its round trip on the queue's injected clock); and, when above 0,
	 * the succeeded answers left before the fake turns to FAKE_DROP. */
	atomic_llong advance_ns;
	atomic_int answers_left;
	/* Applied operations in order: 'P' or 'D' and the key's uid. */
	char log[4096][24];
	atomic_int n_log;
	/* Ranges (rebuild): answers given in order, one a request. */
	const char *const *range_answers;
	atomic_int n_ranges;
	char last_range[1024];
};

/* A 200 answer, the connection kept. */
static void answer(struct fake_http_exchange *x, const char *body)
{
	fake_http_answer(x, 200, body, strlen(body), false);
}

static int64_t json_i64(const json_t *o, const char *name)
{
	const char *s = json_string_value(json_object_get(o, name));
	return s ? strtoll(s, NULL, 10) : 0;
}

/* A key's bytes from base64 into out (NUL-ended). */
static void key_of(const json_t *o, char *out, size_t len)
{
	const char *b = json_string_value(json_object_get(o, "key"));
	size_t n = 0;
	uint8_t buf[512];
	out[0] = '\0';
	if (b && strlen(b) / 4 * 3 < sizeof(buf) &&
	    etcd_b64_decode(b, strlen(b), buf, &n) == 0 && n < len) {
		memcpy(out, buf, n);
		out[n] = '\0';
	}
}

/* Whether a txn writes one key twice (etcd refuses it: "duplicate key
 * given in txn request": 3.4's etcdserver/api/v3rpc/key.go, checkIntervals). */
static bool fake_dup(const char *body)
{
	json_t *root = json_loads(body, 0, NULL);
	const json_t *ops = json_object_get(root, "success");
	bool dup = false;
	for (size_t i = 0; i < json_array_size(ops) && !dup; i++)
		for (size_t j = 0; j < i && !dup; j++) {
			char a[256], b[256];
			const json_t *x = json_array_get(ops, i), *y = json_array_get(ops, j);
			const json_t *xo = json_object_get(x, "request_put");
			const json_t *yo = json_object_get(y, "request_put");
			key_of(xo ? xo : json_object_get(x, "request_delete_range"), a, sizeof(a));
			key_of(yo ? yo : json_object_get(y, "request_delete_range"), b, sizeof(b));
			dup = strcmp(a, b) == 0;
		}
	json_decref(root);
	return dup;
}

/* An error as etcd's gateway answers it (400, gRPC's code), the
 * connection kept. */
static void answer_error(struct fake_http_exchange *x, int code, const char *message)
{
	char e[256];
	snprintf(e, sizeof(e), "{\"error\":\"%s\",\"code\":%d,\"message\":\"%s\"}", message, code,
		 message);
	fake_http_answer(x, 400, e, strlen(e), false);
}

/* Evaluates a txn body; true when its compares held (and applies it). */
static bool fake_txn(struct fake *f, const char *body, bool apply)
{
	json_t *root = json_loads(body, 0, NULL);
	const json_t *cmp = json_object_get(root, "compare");
	bool ok = true;
	for (size_t i = 0; i < json_array_size(cmp); i++) {
		const json_t *c = json_array_get(cmp, i);
		const char *target = json_string_value(json_object_get(c, "target"));
		if (target && strcmp(target, "LEASE") == 0)
			ok &= json_i64(c, "lease") == atomic_load(&f->owner_lease);
		else if (target && strcmp(target, "VERSION") == 0)
			ok &= json_i64(c, "version") == atomic_load(&f->lane_version);
		else
			ok = false;
	}
	if (ok && apply) {
		const json_t *ops = json_object_get(root, "success");
		for (size_t i = 0; i < json_array_size(ops); i++) {
			const json_t *op = json_array_get(ops, i);
			const json_t *put = json_object_get(op, "request_put");
			const json_t *del = json_object_get(op, "request_delete_range");
			char key[256];
			key_of(put ? put : del, key, sizeof(key));
			const char *pods = strstr(key, "/pods/");
			if (!pods)
				continue; /* the lane key */
			int n = atomic_load(&f->n_log);
			if (n < 4096) {
				snprintf(f->log[n], sizeof(f->log[n]), "%c%s", put ? 'P' : 'D',
					 pods + 6);
				atomic_store(&f->n_log, n + 1);
			}
		}
		atomic_fetch_add(&f->lane_version, 1);
		atomic_fetch_add(&f->applied_txns, 1);
	}
	json_decref(root);
	return ok;
}

static void fake_failure(struct fake *f, char *out, size_t len)
{
	char owner_b64[128], lane_b64[128];
	char owner[64];
	commit_owner_key(PREFIX, 1, owner, sizeof(owner));
	etcd_b64_encode((const uint8_t *)owner, strlen(owner), owner_b64);
	etcd_b64_encode((const uint8_t *)"lane", 4, lane_b64);
	long long lease = atomic_load(&f->owner_lease);
	long long version = atomic_load(&f->lane_version);
	char owner_kvs[256] = "", lane_kvs[256] = "";
	if (lease)
		snprintf(owner_kvs, sizeof(owner_kvs),
			 ",\"kvs\":[{\"key\":\"%s\",\"lease\":\"%lld\",\"version\":\"1\"}],"
			 "\"count\":\"1\"",
			 owner_b64, lease);
	if (version)
		snprintf(lane_kvs, sizeof(lane_kvs),
			 ",\"kvs\":[{\"key\":\"%s\",\"version\":\"%lld\"}],\"count\":\"1\"",
			 lane_b64, version);
	snprintf(out, len,
		 "{\"header\":{\"revision\":\"9\"},\"responses\":["
		 "{\"response_range\":{\"header\":{\"revision\":\"9\"}%s}},"
		 "{\"response_range\":{\"header\":{\"revision\":\"9\"}%s}}]}",
		 owner_kvs, lane_kvs);
}

/* One request: a range answered from range_answers (or the lane key's
 * version), a txn evaluated and answered, refused or dropped (closed
 * unanswered) as the fake is told. */
static void fake_handle(void *arg, struct fake_http_exchange *x)
{
	struct fake *f = arg;
	const char *path = x->path, *body = x->body;
	char out[2048];
	if (strcmp(path, "/v3/kv/range") == 0) {
		int i = atomic_fetch_add(&f->n_ranges, 1);
		snprintf(f->last_range, sizeof(f->last_range), "%s", body);
		const char *a = f->range_answers ? f->range_answers[i] : NULL;
		if (a && strncmp(a, "ERR", 3) == 0) {
			answer_error(x, 11, "mvcc: required revision has been compacted");
		} else if (a) {
			answer(x, a);
		} else {
			/* The lane key: its version, as the txns left it. */
			long long v = atomic_load(&f->lane_version);
			if (v)
				snprintf(out, sizeof(out),
					 "{\"header\":{\"revision\":\"3\"},"
					 "\"kvs\":[{\"key\":\"bGFuZQ==\","
					 "\"version\":\"%lld\"}],\"count\":\"1\"}",
					 v);
			else
				snprintf(out, sizeof(out), "{\"header\":{\"revision\":\"3\"}}");
			answer(x, out);
		}
	} else if (atomic_load(&f->drop_next) == 0 && atomic_load(&f->refuse_next) > 0) {
		atomic_fetch_sub(&f->refuse_next, 1);
		atomic_fetch_add(&f->txns, 1);
		answer_error(x, 8, "etcdserver: mvcc: database space exceeded");
	} else if (fake_dup(body)) {
		atomic_fetch_add(&f->txns, 1);
		answer_error(x, 3, "etcdserver: duplicate key given in txn request");
	} else {
		atomic_fetch_add(&f->txns, 1);
		int mode = atomic_load(&f->mode);
		bool ok = fake_txn(f, body, mode != FAKE_DROP);
		if (mode == FAKE_DROP || atomic_load(&f->drop_next) > 0) {
			if (mode != FAKE_DROP)
				atomic_fetch_sub(&f->drop_next, 1);
			atomic_fetch_add(&f->dropped, 1);
			return; /* closed unanswered */
		} else if (ok) {
			atomic_fetch_add(&fake_now_ns, atomic_load(&f->advance_ns));
			if (atomic_load(&f->answers_left) > 0 &&
			    atomic_fetch_sub(&f->answers_left, 1) == 1)
				atomic_store(&f->mode, FAKE_DROP);
			answer(x, "{\"header\":{\"revision\":\"8\"},\"succeeded\":true}");
		} else {
			fake_failure(f, out, sizeof(out));
			answer(x, out);
		}
	}
}

static struct fake *fake_start(void)
{
	struct fake *f = calloc(1, sizeof(*f));
	atomic_store(&f->owner_lease, LEASE);
	fake_http_start(&f->http, fake_handle, f);
	return f;
}

static void fake_stop(struct fake *f)
{
	fake_http_stop(&f->http);
	free(f);
}

/* ---- the committer against it -------------------------------------------- */

struct answers {
	atomic_int count[256];
	atomic_int rc[256];
};

static void on_done(void *ctx, uint64_t cookie, int rc, int64_t revision)
{
	struct answers *a = ctx;
	(void)revision;
	assert_true(cookie < 256);
	atomic_fetch_add(&a->count[cookie], 1);
	atomic_store(&a->rc[cookie], rc);
}

static int64_t clock_of_test(void *ctx)
{
	(void)ctx;
	return atomic_load(&fake_now_ns);
}

static struct commit_queue *open_on(struct fake *f, struct answers *a, unsigned capacity)
{
	char eps[64], err[256];
	snprintf(eps, sizeof(eps), "http://127.0.0.1:%d", f->http.port);
	struct commit_queue_config cfg = {
		.endpoints = eps, .prefix = PREFIX, .shard = 1, .lease = LEASE, .in_flight = 1,
		.batch = 60, .capacity = capacity, .max_window_ms = 500, .timeout_ms = 2000,
		.on_done = on_done, .ctx = a, .now_ns = clock_of_test,
	};
	struct commit_queue *q;
	if (commit_queue_open(&q, &cfg, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	return q;
}

static int push(struct commit_queue *q, enum commit_op op, int i)
{
	char uid[16];
	snprintf(uid, sizeof(uid), "pod-%d", i);
	struct placement_value v = {.node_generation = 1, .cpu_milli = 100};
	strcpy(v.node, "node-1");
	struct commit_record r = {.op = op, .uid = uid, .value = &v, .cookie = (uint64_t)i};
	return commit_queue_push(q, &r);
}

static void lost_answer_commits_once(void **state)
{
	(void)state;
	struct fake *f = fake_start();
	struct answers *a = calloc(1, sizeof(*a));
	/* The first send applied, its answer lost; libcurl sends it again
	 * on a new connection (a kept one closed before any byte came), and
	 * that answer is lost too: the lane sends it a third time. */
	atomic_store(&f->drop_next, 2);
	struct commit_queue *q = open_on(f, a, 1024);
	for (int i = 0; i < 10; i++)
		assert_int_equal(push(q, COMMIT_PUT, i), 0);
	commit_queue_flush(q);
	struct commit_queue_stats st;
	commit_queue_stats(q, &st);
	commit_queue_close(q, 0);
	for (int i = 0; i < 10; i++) {
		assert_int_equal(a->count[i], 1);
		assert_int_equal(a->rc[i], 0);
	}
	/* Applied once though sent three times: the retry found it. */
	assert_int_equal(atomic_load(&f->applied_txns), st.txns);
	assert_int_equal(atomic_load(&f->txns), st.txns + 2);
	assert_int_equal(atomic_load(&f->n_log), 10);
	assert_int_equal(st.landed_twice, 1);
	assert_true(st.retries >= 1);
	assert_int_equal(st.committed, 10);
	free(a);
	fake_stop(f);
}

/* Refused (etcd's space alarm) after a send that had landed: the lane
 * key says it landed, so it is committed; refused with nothing landed,
 * the batch fails with etcd's error and the lane goes on. */
static void refused_after_landing(void **state)
{
	(void)state;
	struct fake *f = fake_start();
	struct answers *a = calloc(1, sizeof(*a));
	atomic_store(&f->drop_next, 1);
	atomic_store(&f->refuse_next, 1);
	struct commit_queue *q = open_on(f, a, 1024);
	assert_int_equal(push(q, COMMIT_PUT, 1), 0);
	commit_queue_flush(q);
	assert_int_equal(a->count[1], 1);
	assert_int_equal(a->rc[1], 0);
	assert_int_equal(atomic_load(&f->n_log), 1);
	atomic_store(&f->refuse_next, 1);
	assert_int_equal(push(q, COMMIT_PUT, 2), 0);
	commit_queue_flush(q);
	assert_int_equal(a->rc[2], -ENOSPC);
	assert_int_equal(push(q, COMMIT_PUT, 3), 0);
	commit_queue_flush(q);
	assert_int_equal(a->rc[3], 0);
	struct commit_queue_stats st;
	commit_queue_stats(q, &st);
	commit_queue_close(q, 0);
	assert_int_equal(atomic_load(&f->n_log), 2);
	assert_string_equal(f->log[1], "Ppod-3");
	assert_int_equal(st.landed_twice, 1);
	assert_int_equal(st.failed, 1);
	assert_int_equal(st.committed, 2);
	free(a);
	fake_stop(f);
}

static void fence_fails_everything_after(void **state)
{
	(void)state;
	struct fake *f = fake_start();
	struct answers *a = calloc(1, sizeof(*a));
	struct commit_queue *q = open_on(f, a, 1024);
	for (int i = 0; i < 5; i++)
		assert_int_equal(push(q, COMMIT_PUT, i), 0);
	commit_queue_flush(q);
	int sent_before = atomic_load(&f->txns);
	/* Another host's lease on the owner key now. */
	atomic_store(&f->owner_lease, 999);
	for (int i = 5; i < 40; i++) {
		int rc = push(q, COMMIT_PUT, i);
		if (rc == -ESTALE) { /* the lane found the fence already */
			atomic_fetch_add(&a->count[i], 1);
			atomic_store(&a->rc[i], -ESTALE);
		} else {
			assert_int_equal(rc, 0);
		}
	}
	commit_queue_flush(q);
	assert_true(commit_queue_fenced(q));
	assert_int_equal(push(q, COMMIT_PUT, 41), -ESTALE);
	char err[512];
	commit_queue_error(q, err, sizeof(err));
	assert_non_null(strstr(err, "no longer carries lease 4660"));
	assert_non_null(strstr(err, "/u/shards/1/owner"));
	struct commit_queue_stats st;
	commit_queue_stats(q, &st);
	commit_queue_close(q, 0);
	for (int i = 0; i < 40; i++) {
		assert_int_equal(a->count[i], 1);
		assert_int_equal(a->rc[i], i < 5 ? 0 : -ESTALE);
	}
	assert_int_equal(a->count[41], 0);
	assert_int_equal(atomic_load(&f->n_log), 5); /* nothing after the fence */
	assert_true(st.stale >= 1 && st.stale <= 35);
	/* The fence was learned once; the rest were never sent. */
	assert_int_equal(atomic_load(&f->txns) - sent_before, 1);
	free(a);
	fake_stop(f);
}

static void backpressure_and_close(void **state)
{
	(void)state;
	struct fake *f = fake_start();
	struct answers *a = calloc(1, sizeof(*a));
	atomic_store(&f->mode, FAKE_DROP); /* never answered */
	atomic_store(&fake_now_ns, 1000000000);
	struct commit_queue *q = open_on(f, a, 100);
	size_t bound_records;
	long bound_ms;
	commit_queue_window_bound(q, &bound_records, &bound_ms);
	assert_int_equal(bound_records, 100 + 60);
	assert_int_equal(bound_ms, 500);
	/* The lane takes up to a batch into flight; the ring holds 100. */
	int accepted = 0, i = 0;
	for (; i < 200; i++) {
		int rc = push(q, COMMIT_PUT, i);
		if (rc == -EAGAIN)
			break;
		assert_int_equal(rc, 0);
		accepted++;
		if (i == 0) {
			/* Wait for the lane to take it into flight. */
			size_t n;
			long ms;
			for (int k = 0; k < 200; k++) {
				while (atomic_load(&f->txns) == 0)
					usleep(1000);
				commit_queue_window(q, &n, &ms);
				if (n == 1)
					break;
			}
		}
	}
	/* One in flight, the ring full. */
	assert_int_equal(accepted, 101);
	size_t n;
	long ms;
	commit_queue_window(q, &n, &ms);
	assert_int_equal(n, 101);
	assert_int_equal(ms, 0);
	commit_queue_close(q, 0);
	int canceled = 0, unknown = 0;
	for (int k = 0; k < accepted; k++) {
		assert_int_equal(a->count[k], 1);
		canceled += a->rc[k] == -ECANCELED;
		unknown += a->rc[k] == -EIO;
	}
	assert_int_equal(unknown, 1);
	assert_int_equal(canceled, 100);
	assert_int_equal(atomic_load(&f->n_log), 0);

	/* The window: a transaction unanswered for 500 ms refuses pushes,
	 * room or not. */
	memset(a, 0, sizeof(*a));
	q = open_on(f, a, 100);
	int sent = atomic_load(&f->txns);
	assert_int_equal(push(q, COMMIT_PUT, 0), 0);
	assert_int_equal(push(q, COMMIT_PUT, 1), 0);
	while (atomic_load(&f->txns) == sent) /* in flight before the clock moves */
		usleep(1000);
	atomic_fetch_add(&fake_now_ns, 400 * 1000000LL);
	assert_int_equal(push(q, COMMIT_PUT, 2), 0);
	atomic_fetch_add(&fake_now_ns, 101 * 1000000LL);
	assert_int_equal(push(q, COMMIT_PUT, 3), -EAGAIN);
	commit_queue_window(q, &n, &ms);
	assert_int_equal(n, 3);
	assert_int_equal(ms, 501);
	commit_queue_close(q, 0);
	free(a);
	fake_stop(f);
}

/* The window's rule holds the transaction in flight, not the oldest
 * record: records queued behind slow commits are older than the window,
 * yet a lane whose etcd answers takes more. The old rule (oldest record)
 * refused here, and went on refusing until the ring had drained. */
static void window_holds_the_transaction(void **state)
{
	(void)state;
	const int64_t ms = 1000000;
	struct fake *f = fake_start();
	struct answers *a = calloc(1, sizeof(*a));
	atomic_store(&fake_now_ns, 1000000000);
	atomic_store(&f->mode, FAKE_DROP);
	struct commit_queue *q = open_on(f, a, 240);
	/* Record 0 in flight, unanswered; 1 to 180 queued behind it. */
	assert_int_equal(push(q, COMMIT_PUT, 0), 0);
	while (atomic_load(&f->txns) == 0)
		usleep(1000);
	for (int i = 1; i <= 180; i++)
		assert_int_equal(push(q, COMMIT_PUT, i), 0);
	/* etcd answers two transactions, 300 ms of the clock each ({0},
	 * then 1 to 60), then stops again: 61 to 120 in flight, taken now,
	 * 121 to 180 queued at the start, 600 ms ago. */
	atomic_store(&f->advance_ns, 300 * ms);
	atomic_store(&f->answers_left, 2);
	atomic_store(&f->mode, FAKE_OK);
	size_t n = 0;
	long age = 0;
	for (int k = 0; k < 5000; k++) {
		commit_queue_window(q, &n, &age);
		if (n == 120 && atomic_load(&f->mode) == FAKE_DROP)
			break;
		usleep(1000);
	}
	assert_int_equal(n, 120);
	assert_int_equal(age, 600);
	assert_int_equal(a->rc[60], 0);
	/* The transaction in flight is 0 ms old: room, so taken. */
	assert_int_equal(push(q, COMMIT_PUT, 181), 0);
	/* Unanswered past the window: a stalled etcd refuses. */
	atomic_fetch_add(&fake_now_ns, 501 * ms);
	assert_int_equal(push(q, COMMIT_PUT, 182), -EAGAIN);
	commit_queue_close(q, 0);
	free(a);
	fake_stop(f);
}

static void one_pod_keeps_its_order(void **state)
{
	(void)state;
	struct fake *f = fake_start();
	struct answers *a = calloc(1, sizeof(*a));
	struct commit_queue *q = open_on(f, a, 1024);
	/* Pod 9's answer lost twice: the lane backs off (20 ms) while the
	 * next three queue up behind it. */
	atomic_store(&f->drop_next, 2);
	assert_int_equal(push(q, COMMIT_PUT, 9), 0);
	while (atomic_load(&f->dropped) < 2)
		usleep(1000);
	/* Placed, and released in the same burst: the release never in the
	 * placement's batch (etcd refuses a transaction that writes one key
	 * twice), never before it. */
	assert_int_equal(push(q, COMMIT_PUT, 7), 0);
	assert_int_equal(push(q, COMMIT_PUT, 8), 0);
	assert_int_equal(push(q, COMMIT_DELETE, 7), 0);
	commit_queue_flush(q);
	commit_queue_close(q, 0);
	for (int i = 7; i <= 9; i++) {
		assert_int_equal(a->count[i], i == 7 ? 2 : 1);
		assert_int_equal(a->rc[i], 0);
	}
	assert_int_equal(atomic_load(&f->n_log), 4);
	assert_string_equal(f->log[0], "Ppod-9");
	assert_string_equal(f->log[1], "Ppod-7");
	assert_string_equal(f->log[2], "Ppod-8");
	assert_string_equal(f->log[3], "Dpod-7");
	assert_int_equal(atomic_load(&f->applied_txns), 3);
	free(a);
	fake_stop(f);
}

static void refuses_bad_input(void **state)
{
	(void)state;
	struct fake *f = fake_start();
	struct answers *a = calloc(1, sizeof(*a));
	struct commit_queue *q = open_on(f, a, 64);
	struct placement_value v = {.cpu_milli = 1};
	strcpy(v.node, "n");
	const char *bad[] = {"", "a/b", "a b", "0123456789012345678901234567890123456789012345678901234567890123"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct commit_record r = {.op = COMMIT_PUT, .uid = bad[i], .value = &v};
		assert_int_equal(commit_queue_push(q, &r), -EINVAL);
	}
	struct commit_record r = {.op = COMMIT_PUT, .uid = "ok", .value = NULL};
	assert_int_equal(commit_queue_push(q, &r), -EINVAL);
	strcpy(v.node, "Bad");
	r.value = &v;
	assert_int_equal(commit_queue_push(q, &r), -EINVAL);
	commit_queue_close(q, 0);

	char err[256];
	struct commit_queue_config cfg = {.endpoints = "http://127.0.0.1:1", .prefix = PREFIX,
					  .lease = 1, .on_done = on_done, .in_flight = 17};
	assert_int_equal(commit_queue_open(&q, &cfg, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "in_flight: 17; expected 1 to 16"));
	cfg.in_flight = 2;
	cfg.batch = 128;
	assert_int_equal(commit_queue_open(&q, &cfg, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "batch: 128; expected 1 to 127"));
	cfg.batch = 0;
	cfg.lease = 0;
	assert_int_equal(commit_queue_open(&q, &cfg, err, sizeof(err)), -EINVAL);
	free(a);
	fake_stop(f);
}

/* ---- the rebuild ------------------------------------------------------------ */

struct got {
	int pods, nodes, resets;
	char names[16][32];
	/* The batch key each pod came from ("-" for a key of its own). */
	char batches[16][32];
	/* Return 7 at this uid (NULL: never). */
	const char *stop_at;
};

static int on_item(void *ctx, const struct rebuild_item *it)
{
	struct got *g = ctx;
	int n = g->pods + g->nodes;
	if (n < 16) {
		snprintf(g->names[n], sizeof(g->names[n]), "%c%s", it->kind == REBUILD_POD ? 'p' : 'n',
			 it->name);
		snprintf(g->batches[n], sizeof(g->batches[n]), "%s", it->batch ? it->batch : "-");
		if (it->batch)
			assert_int_equal(strlen(it->batch), it->batch_len);
		assert_int_equal(strlen(it->name), it->name_len);
	}
	if (g->stop_at && strcmp(it->name, g->stop_at) == 0)
		return 7;
	if (it->kind == REBUILD_POD)
		g->pods++;
	else
		g->nodes++;
	return 0;
}

static void on_reset(void *ctx)
{
	struct got *g = ctx;
	g->resets++;
	g->pods = g->nodes = 0;
}

/* A fake answering ranges with `answers` in turn (*f), and a client of
 * it. */
static struct etcd_client *range_client(const char *const *answers, struct fake **f)
{
	*f = fake_start();
	(*f)->range_answers = answers;
	char eps[64], err[256];
	snprintf(eps, sizeof(eps), "http://127.0.0.1:%d", (*f)->http.port);
	struct etcd_client *c;
	assert_int_equal(etcd_client_open(&c, eps, NULL, err, sizeof(err)), 0);
	return c;
}

/* A range answer of kvs (key suffix, value) under /u/shards/1/<what>/. */
static char *range_answer(const char *what, int rev, bool more, const char *const *kv, size_t n)
{
	json_t *kvs = json_array();
	for (size_t i = 0; i < n; i++) {
		char key[128], kb[256], vb[512];
		snprintf(key, sizeof(key), PREFIX "shards/1/%s/%s", what, kv[2 * i]);
		etcd_b64_encode((const uint8_t *)key, strlen(key), kb);
		etcd_b64_encode((const uint8_t *)kv[2 * i + 1], strlen(kv[2 * i + 1]), vb);
		json_array_append_new(kvs, json_pack("{ssss}", "key", kb, "value", vb));
	}
	char r[16];
	snprintf(r, sizeof(r), "%d", rev);
	json_t *o = json_pack("{s{ss}sosb}", "header", "revision", r, "kvs", kvs, "more", more);
	char *text = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	return text;
}

static void rebuild_pages_and_restarts(void **state)
{
	(void)state;
	const char *p1[] = {"a", "1 n1 1 1 1 0 -", "b", "1 n1 1 1 1 0 -"};
	const char *p2[] = {"c", "1 n2 2 1 1 0 q"};
	const char *n1[] = {"n1", "x"};
	char *a_p1 = range_answer("pods", 50, true, p1, 2);
	char *a_p2 = range_answer("pods", 50, false, p2, 1);
	char *a_n1 = range_answer("nodes", 50, false, n1, 1);
	char *a_p1b = range_answer("pods", 60, false, p1, 2);
	/* No batch keys (read between pods and nodes). */
	char *a_b50 = range_answer("sets", 50, false, NULL, 0);
	char *a_b60 = range_answer("sets", 60, false, NULL, 0);
	/* First pass: a page, then compacted; second: all. */
	const char *answers[] = {a_p1, "ERR", a_p1b, a_b60, a_n1, NULL};
	struct fake *f;
	struct etcd_client *c = range_client(answers, &f);
	char err[256];
	struct got g = {0};
	struct rebuild_callbacks cb = {.item = on_item, .reset = on_reset, .ctx = &g};
	int64_t rev = 0;
	assert_int_equal(coord_rebuild_shard(c, PREFIX, 1, 2, &cb, &rev, err, sizeof(err)), 0);
	assert_int_equal(rev, 60);
	assert_int_equal(g.resets, 1);
	assert_int_equal(g.pods, 2);
	assert_int_equal(g.nodes, 1);
	assert_string_equal(g.names[0], "pa");
	assert_string_equal(g.names[2], "nn1");
	/* The second pass's node page asked at the first page's revision. */
	assert_non_null(strstr(f->last_range, "\"revision\":\"60\""));
	assert_non_null(strstr(f->last_range, "\"limit\":\"2\""));

	/* Pages: the second starts after the first's last key. */
	const char *answers2[] = {a_p1, a_p2, a_b50, a_n1, NULL};
	atomic_store(&f->n_ranges, 0);
	f->range_answers = answers2;
	memset(&g, 0, sizeof(g));
	assert_int_equal(coord_rebuild_shard(c, PREFIX, 1, 2, &cb, &rev, err, sizeof(err)), 0);
	assert_int_equal(g.pods, 3);
	assert_int_equal(rev, 50);

	/* A value that does not decode stops it, naming the key. */
	const char *badv[] = {"z", "1 n1 1 1 1 0"};
	char *a_bad = range_answer("pods", 70, false, badv, 1);
	const char *answers3[] = {a_bad, NULL};
	atomic_store(&f->n_ranges, 0);
	f->range_answers = answers3;
	assert_int_equal(coord_rebuild_shard(c, PREFIX, 1, 2, &cb, &rev, err, sizeof(err)),
			 -EPROTO);
	assert_non_null(strstr(err, "/u/shards/1/pods/z"));
	assert_non_null(strstr(err, "6 fields"));
	/* A key with a '/' after the prefix. */
	const char *badk[] = {"x/y", "1 n1 1 1 1 0 -"};
	char *a_badk = range_answer("pods", 70, false, badk, 1);
	const char *answers4[] = {a_badk, NULL};
	atomic_store(&f->n_ranges, 0);
	f->range_answers = answers4;
	assert_int_equal(coord_rebuild_shard(c, PREFIX, 1, 2, &cb, &rev, err, sizeof(err)),
			 -EPROTO);
	/* Compacted every time: -ERANGE after the restarts. */
	const char *answers5[] = {"ERR", "ERR", "ERR", "ERR", "ERR", NULL};
	atomic_store(&f->n_ranges, 0);
	f->range_answers = answers5;
	memset(&g, 0, sizeof(g));
	assert_int_equal(coord_rebuild_shard(c, PREFIX, 1, 2, &cb, &rev, err, sizeof(err)),
			 -ERANGE);
	assert_int_equal(g.resets, REBUILD_MAX_RESTARTS);
	etcd_client_close(c);
	fake_stop(f);
	free(a_b50);
	free(a_b60);
	free(a_p1);
	free(a_p2);
	free(a_n1);
	free(a_p1b);
	free(a_bad);
	free(a_badk);
}

/* Batch keys (coord/batch_value.h), read between the pods and the nodes:
 * each placement handed as a pod with its batch key's name, pages of at
 * most REBUILD_BATCH_PAGE keys whatever the page asked, the next page
 * after the last key; a batch that does not decode stops the rebuild
 * before any of its placements is handed; the caller's stop inside a
 * batch is the rebuild's return. */
static void rebuild_reads_batch_keys(void **state)
{
	(void)state;
	const char *p[] = {"a", "1 n1 1 1 1 0 -"};
	const char *b1[] = {"h1-1", "4\nd 1 n1 1 1 1 0 -\ne 3 n2 1 1 1 0 cq f ns"};
	const char *b2[] = {"h1-2", "4\nc 2 n1 1 1 1 0 - - app=x"};
	const char *n1[] = {"n1", "x"};
	char *a_p = range_answer("pods", 40, false, p, 1);
	char *a_b1 = range_answer("sets", 40, true, b1, 1);
	char *a_b2 = range_answer("sets", 40, false, b2, 1);
	char *a_n1 = range_answer("nodes", 40, false, n1, 1);
	const char *answers[] = {a_p, a_b1, a_b2, a_n1, NULL};
	struct fake *f;
	struct etcd_client *c = range_client(answers, &f);
	char err[300];
	struct got g = {0};
	struct rebuild_callbacks cb = {.item = on_item, .reset = on_reset, .ctx = &g};
	int64_t rev = 0;
	assert_int_equal(coord_rebuild_shard(c, PREFIX, 1, 1000, &cb, &rev, err, sizeof(err)), 0);
	assert_int_equal(rev, 40);
	assert_int_equal(g.pods, 4);
	assert_int_equal(g.nodes, 1);
	const char *want[] = {"pa", "pd", "pe", "pc", "nn1"};
	const char *from[] = {"-", "h1-1", "h1-1", "h1-2", "-"};
	for (int i = 0; i < 5; i++) {
		assert_string_equal(g.names[i], want[i]);
		assert_string_equal(g.batches[i], from[i]);
	}

	/* A bad batch (uids out of order) after a good one: -EPROTO naming
	 * the key and the line, none of its placements handed. The request
	 * for it asked at most REBUILD_BATCH_PAGE keys, from just past
	 * the first page's last key. */
	const char *bad[] = {"h1-2", "4\nb 1 n1 1 1 1 0 -\na 1 n1 1 1 1 0 -"};
	char *a_bad = range_answer("sets", 40, false, bad, 1);
	const char *answers2[] = {a_p, a_b1, a_bad, NULL};
	atomic_store(&f->n_ranges, 0);
	f->range_answers = answers2;
	memset(&g, 0, sizeof(g));
	assert_int_equal(coord_rebuild_shard(c, PREFIX, 1, 1000, &cb, &rev, err, sizeof(err)),
			 -EPROTO);
	assert_non_null(strstr(err, "/u/shards/1/sets/h1-2"));
	assert_non_null(strstr(err, "line 3: uid \"a\" is not above"));
	assert_int_equal(g.pods, 3);
	assert_non_null(strstr(f->last_range, "\"limit\":\"256\""));
	char key_b64[128];
	const char *after = PREFIX "shards/1/sets/h1-1";
	uint8_t after0[64];
	memcpy(after0, after, strlen(after) + 1); /* the key and a zero byte */
	etcd_b64_encode(after0, strlen(after) + 1, key_b64);
	assert_non_null(strstr(f->last_range, key_b64));

	/* The caller stops at e, inside the first batch. */
	const char *answers3[] = {a_p, a_b1, NULL};
	atomic_store(&f->n_ranges, 0);
	f->range_answers = answers3;
	memset(&g, 0, sizeof(g));
	g.stop_at = "e";
	assert_int_equal(coord_rebuild_shard(c, PREFIX, 1, 1000, &cb, &rev, err, sizeof(err)), 7);
	assert_int_equal(g.pods, 2);
	assert_non_null(strstr(err, "h1-1, uid e (7)"));
	etcd_client_close(c);
	fake_stop(f);
	free(a_p);
	free(a_b1);
	free(a_b2);
	free(a_n1);
	free(a_bad);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(value_both_ways),
		cmocka_unit_test(value_refusals),
		cmocka_unit_test(value_v2),
		cmocka_unit_test(value_v3),
		cmocka_unit_test(lost_answer_commits_once),
		cmocka_unit_test(refused_after_landing),
		cmocka_unit_test(fence_fails_everything_after),
		cmocka_unit_test(backpressure_and_close),
		cmocka_unit_test(window_holds_the_transaction),
		cmocka_unit_test(one_pod_keeps_its_order),
		cmocka_unit_test(refuses_bad_input),
		cmocka_unit_test(rebuild_pages_and_restarts),
		cmocka_unit_test(rebuild_reads_batch_keys),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
