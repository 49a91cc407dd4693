/* gateway/decode.c: request bodies of Pods. Each form (a Pod, a List, a
 * PodList, JSON Lines, values back to back), every refusal with the place
 * and JSON path it names, the limits, equal specs found once whatever the
 * member order, names and cookies; then bounded input: every prefix of a
 * valid body and random bytes, which must be refused or decoded, never
 * crash (ASan and UBSan builds run this too). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>

#include <cmocka.h>

#include "base/base.h"
#include "gateway/gateway.h"

static const struct gw_limits lim = {.max_pods = 1000, .max_specs = 64};

#define POD(name, cpu) \
	"{\"kind\":\"Pod\",\"metadata\":{\"name\":\"" name "\"},\"spec\":" \
	"{\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":" \
	"{\"cpu\":\"" cpu "\"}}}]}}"

static int decode(const char *body, struct gw_batch *b, char *err, size_t len)
{
	return gw_decode_pods(body, strlen(body), &lim, b, err, len);
}

static void expect_error(const char *body, int rc_want, const char *text)
{
	struct gw_batch b;
	char err[512] = "";
	int rc = decode(body, &b, err, sizeof(err));
	if (rc != rc_want || strstr(err, text) == NULL)
		fail_msg("body %.80s: rc %d (want %d), error \"%s\" (want \"%s\")",
			 body, rc, rc_want, err, text);
	gw_batch_free(&b);
}

static void test_one_pod(void **state)
{
	(void)state;
	struct gw_batch b;
	char err[512];
	assert_int_equal(decode(POD("web-1", "100m"), &b, err, sizeof(err)), 0);
	assert_int_equal(b.n_pods, 1);
	assert_int_equal(b.n_specs, 1);
	assert_string_equal(gw_pod_name(&b, &b.pods[0]), "default/web-1");
	assert_true(b.pods[0].cookie == gw_cookie("default/web-1", 13));
	assert_true(b.pods[0].cookie != 0);
	/* The key keeps namespace, labels and spec; the name and anything
	 * else in metadata are gone. */
	const json_t *k = b.specs[0].canon;
	assert_string_equal(json_string_value(json_object_get(k, "kind")), "Pod");
	const json_t *m = json_object_get(k, "metadata");
	assert_string_equal(json_string_value(json_object_get(m, "namespace")),
			    "default");
	assert_null(json_object_get(m, "name"));
	assert_non_null(json_object_get(k, "spec"));
	assert_string_equal(b.specs[0].where, "line 1");
	gw_batch_free(&b);
}

/* Replicas share one key; a different request, label or namespace does
 * not; member order does not matter. */
static void test_spec_keys(void **state)
{
	(void)state;
	const char *body =
		POD("a", "100m") "\n" POD("b", "100m") "\n" POD("c", "200m") "\n"
		"{\"spec\":{\"containers\":[{\"resources\":{\"requests\":{\"cpu\":"
		"\"100m\"}},\"name\":\"c\"}]},\"metadata\":{\"name\":\"d\"},\"kind\":\"Pod\"}\n"
		"{\"kind\":\"Pod\",\"metadata\":{\"name\":\"e\",\"labels\":{\"app\":\"x\"}},"
		"\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":"
		"{\"cpu\":\"100m\"}}}]}}\n"
		"{\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\",\"namespace\":\"prod\","
		"\"uid\":\"u-1\",\"annotations\":{\"x\":\"y\"}},\"spec\":{\"containers\":"
		"[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"100m\"}}}]}}\n";
	struct gw_batch b;
	char err[512];
	assert_int_equal(decode(body, &b, err, sizeof(err)), 0);
	assert_int_equal(b.n_pods, 6);
	assert_int_equal(b.n_specs, 4);
	assert_int_equal(b.pods[0].spec, b.pods[1].spec);
	assert_int_equal(b.pods[0].spec, b.pods[3].spec); /* members reordered */
	assert_int_not_equal(b.pods[0].spec, b.pods[2].spec);
	assert_int_not_equal(b.pods[0].spec, b.pods[4].spec); /* labels */
	assert_int_not_equal(b.pods[0].spec, b.pods[5].spec); /* namespace */
	assert_string_equal(gw_pod_name(&b, &b.pods[5]), "prod/a");
	assert_string_equal(b.specs[b.pods[2].spec].where, "line 3");
	/* The hash ignores member order; the keys stay distinct. */
	assert_true(b.specs[b.pods[0].spec].hash ==
		    gw_spec_hash(b.specs[b.pods[3].spec].canon));
	gw_batch_free(&b);
}

static void test_lists(void **state)
{
	(void)state;
	struct gw_batch b;
	char err[512];
	const char *list = "{\"kind\":\"List\",\"apiVersion\":\"v1\",\"items\":["
		POD("a", "1") "," POD("b", "1") "]}";
	assert_int_equal(decode(list, &b, err, sizeof(err)), 0);
	assert_int_equal(b.n_pods, 2);
	assert_int_equal(b.n_specs, 1);
	assert_string_equal(b.specs[0].where, "line 1: items[0]");
	gw_batch_free(&b);
	/* kubectl's PodList, items without their kind; a List beside a Pod. */
	const char *mixed = "{\"kind\":\"PodList\",\"items\":[{\"metadata\":{\"name\":"
		"\"x\"},\"spec\":{\"containers\":[]}}]}\n" POD("y", "1");
	assert_int_equal(decode(mixed, &b, err, sizeof(err)), 0);
	assert_int_equal(b.n_pods, 2);
	gw_batch_free(&b);
	/* An empty list is zero pods, not an error. */
	assert_int_equal(decode("{\"kind\":\"List\",\"items\":[]}", &b, err,
				sizeof(err)), 0);
	assert_int_equal(b.n_pods, 0);
	gw_batch_free(&b);
	/* Values back to back, no newline between them. */
	assert_int_equal(decode(POD("p", "1") POD("q", "1"), &b, err, sizeof(err)), 0);
	assert_int_equal(b.n_pods, 2);
	gw_batch_free(&b);
}

/* Every refusal names where and what. */
static void test_refusals(void **state)
{
	(void)state;
	expect_error("", -EINVAL, "the body holds no Pod");
	expect_error("  \n\n ", -EINVAL, "the body holds no Pod");
	expect_error("{\"kind\":\"Pod\",", -EINVAL, "line 1, column");
	expect_error(POD("a", "1") "\n\n{\"kind\":\"Pod\" \"x\"}", -EINVAL,
		     "line 3, column");
	expect_error("[1,2]", -EINVAL, "line 1: expected a Pod or a List of Pods, "
		     "found an array");
	expect_error("{\"kind\":\"Node\",\"metadata\":{\"name\":\"n\"}}", -EINVAL,
		     "line 1: kind: \"Node\": expected \"Pod\"");
	expect_error("{\"kind\":7,\"metadata\":{\"name\":\"n\"}}", -EINVAL,
		     "kind: a number: expected \"Pod\"");
	expect_error("{\"kind\":\"Pod\",\"spec\":{}}", -EINVAL,
		     "line 1: metadata.name: required");
	expect_error("{\"kind\":\"Pod\",\"metadata\":[],\"spec\":{}}", -EINVAL,
		     "metadata: expected an object, found an array");
	expect_error("{\"kind\":\"Pod\",\"metadata\":{\"name\":3},\"spec\":{}}",
		     -EINVAL, "metadata.name: expected a string, found a number");
	expect_error("{\"kind\":\"Pod\",\"metadata\":{\"name\":\"\"},\"spec\":{}}",
		     -EINVAL, "metadata.name: empty");
	expect_error("{\"kind\":\"Pod\",\"metadata\":{\"name\":\"a/b\"},\"spec\":{}}",
		     -EINVAL, "metadata.name: \"a/b\": a '/'");
	expect_error("{\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\",\"namespace\":"
		     "\"x\\ny\"},\"spec\":{}}", -EINVAL,
		     "metadata.namespace: \"x\ny\": a '/' or a control character");
	expect_error("{\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\",\"labels\":[]},"
		     "\"spec\":{}}", -EINVAL, "metadata.labels: expected an object");
	expect_error("{\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\"}}", -EINVAL,
		     "line 1: spec: required");
	expect_error("{\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\"},\"spec\":7}",
		     -EINVAL, "spec: expected an object, found a number");
	expect_error("{\"kind\":\"List\",\"items\":{}}", -EINVAL,
		     "line 1: items: expected an array, found an object");
	expect_error("{\"kind\":\"List\",\"items\":[" POD("a", "1") ",{\"kind\":\"Pod\","
		     "\"metadata\":{},\"spec\":{}}]}", -EINVAL,
		     "line 1: items[1]: metadata.name: required");
	expect_error(POD("a", "1") "\n" POD("a", "2"), -EINVAL,
		     "line 2: pod default/a: appears twice in the request (first at "
		     "line 1)");
	expect_error("{\"kind\":\"Pod\",\"kind\":\"Pod\",\"metadata\":{\"name\":"
		     "\"a\"},\"spec\":{}}", -EINVAL, "duplicate object key");
	/* A name past Kubernetes' 253 bytes. */
	char body[1024];
	char name[300];
	memset(name, 'n', 254);
	name[254] = '\0';
	snprintf(body, sizeof(body), "{\"metadata\":{\"name\":\"%s\"},\"spec\":{}}", name);
	expect_error(body, -EINVAL, "metadata.name: 254 bytes, at most 253");
}

static void test_limits(void **state)
{
	(void)state;
	const struct gw_limits small = {.max_pods = 2, .max_specs = 1};
	struct gw_batch b;
	char err[512];
	const char *three = POD("a", "1") POD("b", "1") POD("c", "1");
	assert_int_equal(gw_decode_pods(three, strlen(three), &small, &b, err,
					sizeof(err)), -E2BIG);
	assert_non_null(strstr(err, "line 1: more than 2 pods in one request"));
	gw_batch_free(&b);
	const char *two = POD("a", "1") POD("b", "2");
	assert_int_equal(gw_decode_pods(two, strlen(two), &small, &b, err,
					sizeof(err)), -E2BIG);
	assert_non_null(strstr(err, "more than 1 distinct pod specs"));
	gw_batch_free(&b);
}

/* Many pods: the tables grow and every name stays findable. */
static void test_many(void **state)
{
	(void)state;
	struct json_buf body = {0};
	for (int i = 0; i < 900; i++)
		json_buf_printf(&body, "{\"metadata\":{\"name\":\"p-%d\",\"namespace\":"
				"\"ns-%d\"},\"spec\":{\"containers\":[{\"name\":\"c\","
				"\"resources\":{\"requests\":{\"cpu\":\"%dm\"}}}]}}\n",
				i, i % 7, 100 + i % 50);
	struct gw_batch b;
	char err[512];
	/* 50 requests x 7 namespaces: lcm(50, 7) = 350 distinct keys > 64. */
	assert_int_equal(gw_decode_pods(body.data, body.len, &lim, &b, err,
					sizeof(err)), -E2BIG);
	assert_non_null(strstr(err, "line 65: more than 64 distinct pod specs"));
	json_buf_free(&body);
	gw_batch_free(&b);
	const struct gw_limits big = {.max_pods = 1000, .max_specs = 1000};
	for (int i = 0; i < 900; i++)
		json_buf_printf(&body, "{\"metadata\":{\"name\":\"p-%d\",\"namespace\":"
				"\"ns-%d\"},\"spec\":{\"containers\":[{\"name\":\"c\","
				"\"resources\":{\"requests\":{\"cpu\":\"%dm\"}}}]}}\n",
				i, i % 7, 100 + i % 50);
	assert_int_equal(gw_decode_pods(body.data, body.len, &big, &b, err,
					sizeof(err)), 0);
	assert_int_equal(b.n_pods, 900);
	assert_int_equal(b.n_specs, 350);
	for (size_t i = 0; i < b.n_pods; i++) {
		char want[64];
		snprintf(want, sizeof(want), "ns-%zu/p-%zu", i % 7, i);
		assert_string_equal(gw_pod_name(&b, &b.pods[i]), want);
		assert_true(b.pods[i].cookie == gw_cookie(want, strlen(want)));
	}
	json_buf_free(&body);
	gw_batch_free(&b);
}


/* ExtenderArgs: both modes, Go's case-insensitive members, every refusal
 * naming the Go field. */
static void test_extender_args(void **state)
{
	(void)state;
	struct gw_extender_args x;
	char err[512];
	const char *names = "{\"Pod\":" POD("p", "1") ",\"NodeNames\":[\"a\",\"b\"]}";
	assert_int_equal(gw_decode_extender_args(names, strlen(names), 10, &x, err,
						 sizeof(err)), 0);
	assert_true(x.node_names);
	assert_int_equal(x.n_names, 2);
	assert_string_equal(x.names[1], "b");
	assert_string_equal(x.pod_name, "default/p");
	assert_null(x.nodes);
	gw_extender_args_free(&x);
	const char *nodes = "{\"pod\":{\"metadata\":{\"name\":\"q\",\"namespace\":\"n\","
		"\"uid\":\"u-7\"},\"spec\":{}},\"nodes\":{\"items\":[{\"metadata\":"
		"{\"name\":\"a\"}}]},\"NodeNames\":null}";
	assert_int_equal(gw_decode_extender_args(nodes, strlen(nodes), 10, &x, err,
						 sizeof(err)), 0);
	assert_false(x.node_names);
	assert_int_equal(x.n_names, 1);
	assert_string_equal(x.pod_uid, "u-7");
	assert_string_equal(x.pod_name, "n/q");
	assert_non_null(x.nodes);
	gw_extender_args_free(&x);
	struct {
		const char *body;
		int rc;
		const char *text;
	} bad[] = {
		{"[]", -EINVAL, "ExtenderArgs: expected an object"},
		{"{\"NodeNames\":[]}", -EINVAL, "Pod: required"},
		{"{\"Pod\":{\"spec\":{}},\"NodeNames\":[]}", -EINVAL, "Pod: metadata.name: required"},
		{"{\"Pod\":" POD("p", "1") "}", -EINVAL, "Nodes or NodeNames: one is required"},
		{"{\"Pod\":" POD("p", "1") ",\"Nodes\":{},\"NodeNames\":[]}", -EINVAL,
		 "only one may be given"},
		{"{\"Pod\":" POD("p", "1") ",\"NodeNames\":{}}", -EINVAL,
		 "NodeNames: expected an array"},
		{"{\"Pod\":" POD("p", "1") ",\"NodeNames\":[\"a\",\"\"]}", -EINVAL,
		 "NodeNames[1]: expected a name"},
		{"{\"Pod\":" POD("p", "1") ",\"Nodes\":[]}", -EINVAL,
		 "Nodes: expected a NodeList object"},
		{"{\"Pod\":" POD("p", "1") ",\"Nodes\":{\"items\":[7]}}", -EINVAL,
		 "Nodes.items[0]: expected a Node object"},
		{"{\"Pod\":" POD("p", "1") ",\"Nodes\":{\"items\":[{\"metadata\":{}}]}}",
		 -EINVAL, "Nodes.items[0].metadata.name"},
		{"{\"Pod\":" POD("p", "1") ",\"NodeNames\":[\"a\",\"b\",\"c\"]}", -E2BIG,
		 "NodeNames: 3 nodes; at most 2"},
		{"{\"Pod\":{\"metadata\":{\"name\":\"p\",\"uid\":3},\"spec\":{}},"
		 "\"NodeNames\":[]}", -EINVAL, "Pod.metadata.uid"},
		{"{\"Pod\":", -EINVAL, "line 1, column"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		int rc = gw_decode_extender_args(bad[i].body, strlen(bad[i].body), 2, &x,
						 err, sizeof(err));
		if (rc != bad[i].rc || strstr(err, bad[i].text) == NULL)
			fail_msg("%s: rc %d, \"%s\" (want %d, \"%s\")", bad[i].body, rc,
				 err, bad[i].rc, bad[i].text);
		gw_extender_args_free(&x);
	}
}

/* Bounded input: every prefix of a valid body, and random bytes and
 * mutations, are decoded or refused with a message, never crash. */
static void test_bounded_input(void **state)
{
	(void)state;
	const char *valid = "{\"kind\":\"List\",\"items\":[" POD("a", "1") ","
		POD("b", "2") "]}\n" POD("c", "3") "\n";
	size_t len = strlen(valid);
	char err[512];
	struct gw_batch b;
	for (size_t n = 0; n <= len; n++) {
		err[0] = '\0';
		int rc = gw_decode_pods(valid, n, &lim, &b, err, sizeof(err));
		assert_true(rc == 0 || (rc == -EINVAL && err[0] != '\0'));
		gw_batch_free(&b);
	}
	uint64_t seed = 7;
	char buf[512];
	for (int round = 0; round < 20000; round++) {
		size_t n = rng_below(&seed, sizeof(buf));
		if (round % 2 == 0) {
			for (size_t i = 0; i < n; i++)
				buf[i] = (char)rng_next(&seed);
		} else {
			n = n < len ? n : len;
			memcpy(buf, valid, n);
			for (int k = 0; k < 4 && n > 0; k++)
				buf[rng_below(&seed, n)] = "{}[]\":,x0 \n"[rng_below(&seed, 11)];
		}
		err[0] = '\0';
		int rc = gw_decode_pods(buf, n, &lim, &b, err, sizeof(err));
		assert_true(rc == 0 || ((rc == -EINVAL || rc == -E2BIG) && err[0] != '\0'));
		for (size_t i = 0; rc == 0 && i < b.n_pods; i++)
			assert_true(b.pods[i].spec < b.n_specs);
		gw_batch_free(&b);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_pod),
		cmocka_unit_test(test_spec_keys),
		cmocka_unit_test(test_lists),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_many),
		cmocka_unit_test(test_extender_args),
		cmocka_unit_test(test_bounded_input),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
