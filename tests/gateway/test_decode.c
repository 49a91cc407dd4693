/* gateway/decode.c: request bodies of Pods. Each form (a Pod, a List, a
 * PodList, JSON Lines, values back to back), every refusal with the place
 * and JSON path it names, the limits, equal specs found once whatever the
 * member order, names and cookies; then bounded input: every prefix of a
 * valid body and random bytes, which must be refused or decoded, never
 * crash (ASan and UBSan builds run this too). And ?wait=SECONDS: the
 * range, every malformed value refused naming the parameter and range. */
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
#include "policy/policy.h"

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
		     "got an array");
	expect_error("{\"kind\":\"Node\",\"metadata\":{\"name\":\"n\"}}", -EINVAL,
		     "line 1: kind: \"Node\": expected \"Pod\"");
	expect_error("{\"kind\":7,\"metadata\":{\"name\":\"n\"}}", -EINVAL,
		     "kind: a number: expected \"Pod\"");
	expect_error("{\"kind\":\"Pod\",\"spec\":{}}", -EINVAL,
		     "line 1: metadata.name: required");
	expect_error("{\"kind\":\"Pod\",\"metadata\":[],\"spec\":{}}", -EINVAL,
		     "metadata: expected an object, got an array");
	expect_error("{\"kind\":\"Pod\",\"metadata\":{\"name\":3},\"spec\":{}}",
		     -EINVAL, "metadata.name: expected a string, got a number");
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
		     -EINVAL, "spec: expected an object, got a number");
	expect_error("{\"kind\":\"List\",\"items\":{}}", -EINVAL,
		     "line 1: items: expected an array, got an object");
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

/* ?wait=SECONDS: 0..max, decimal digits only; everything else refused
 * with a message that names ?wait, the value and the range. */
static void test_wait(void **state)
{
	(void)state;
	char err[256];
	unsigned s = 7;
	static const struct {
		const char *text;
		unsigned max, want;
	} good[] = {{"0", 300, 0}, {"1", 300, 1}, {"300", 300, 300},
		    {"0007", 300, 7}, {"0000000000", 300, 0}, {"86400", 86400, 86400},
		    {"0", 0, 0}};
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		assert_int_equal(gw_parse_wait(good[i].text, strlen(good[i].text),
					       good[i].max, &s, err, sizeof(err)), 0);
		assert_int_equal(s, good[i].want);
	}
	static const char *const bad[] = {
		"", "-1", "+1", " 1", "1 ", "301", "1e2", "0x10", "1.5", "abc",
		"4294967296", "18446744073709551617", "99999999999999999999999999",
		"00000000001", /* 11 digits */ "3\"00", "1%00",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		s = 7;
		err[0] = '\0';
		assert_int_equal(gw_parse_wait(bad[i], strlen(bad[i]), 300, &s, err,
					       sizeof(err)), -EINVAL);
		assert_int_equal(s, 7); /* untouched */
		if (strstr(err, "?wait=") == NULL || strstr(err, "from 0 to 300") == NULL)
			fail_msg("\"%s\": %s", bad[i], err);
	}
	/* No value at all, and a NUL inside one (percent-decoded %00). */
	assert_int_equal(gw_parse_wait(NULL, 0, 300, &s, err, sizeof(err)), -EINVAL);
	assert_int_equal(gw_parse_wait("1\0", 2, 300, &s, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "?wait=\"1?\""));
	/* A long value is cut in the message, which stays bounded. */
	char big[4096];
	memset(big, '9', sizeof(big));
	assert_int_equal(gw_parse_wait(big, sizeof(big), 300, &s, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "...\""));
	assert_true(strlen(err) < 200);
	/* Every byte value alone: only digits pass. */
	for (int c = 0; c < 256; c++) {
		char one = (char)c;
		int rc = gw_parse_wait(&one, 1, 300, &s, err, sizeof(err));
		assert_int_equal(rc, c >= '0' && c <= '9' ? 0 : -EINVAL);
	}
	/* Max 0: only 0. */
	assert_int_equal(gw_parse_wait("1", 1, 0, &s, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "from 0 to 0"));
}

/* ?explain=true|false, exactly; everything else refused naming ?explain
 * and the value, cut and escaped. */
static void test_explain(void **state)
{
	(void)state;
	char err[256];
	bool on = false;
	assert_int_equal(gw_parse_explain("true", 4, &on, err, sizeof(err)), 0);
	assert_true(on);
	assert_int_equal(gw_parse_explain("false", 5, &on, err, sizeof(err)), 0);
	assert_false(on);
	static const char *const bad[] = {
		"", "1", "0", "yes", "TRUE", "True", "true ", " true", "truee", "tru",
		"falsey", "fals", "\"true\"", "true%00",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		on = true;
		err[0] = '\0';
		assert_int_equal(gw_parse_explain(bad[i], strlen(bad[i]), &on, err,
						  sizeof(err)), -EINVAL);
		assert_true(on); /* untouched */
		if (strstr(err, "?explain=") == NULL || strstr(err, "expected true") == NULL)
			fail_msg("\"%s\": %s", bad[i], err);
	}
	/* No value; a NUL inside one (percent-decoded %00); "true" cut short
	 * by the length. */
	assert_int_equal(gw_parse_explain(NULL, 0, &on, err, sizeof(err)), -EINVAL);
	assert_int_equal(gw_parse_explain("true\0", 5, &on, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "?explain=\"true?\""));
	assert_int_equal(gw_parse_explain("true", 3, &on, err, sizeof(err)), -EINVAL);
	/* A long value is cut in the message, which stays bounded. */
	char big[4096];
	memset(big, 't', sizeof(big));
	assert_int_equal(gw_parse_explain(big, sizeof(big), &on, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "...\""));
	assert_true(strlen(err) < 200);
}

/* ?fieldValidation (issue 35), as kube-apiserver's: Strict "will fail the
 * request with a BadRequest error if any unknown fields would be dropped
 * from the object ... The error returned from the server will contain all
 * unknown and duplicate fields encountered"; Warn "will send a warning via
 * the standard warning response header for each unknown field that is
 * dropped from the object"; Ignore drops them silently (meta/v1
 * CreateOptions.fieldValidation). Dropped fields never reach the daemon:
 * the spec key sent has none. Before, "nodeSelectr" went through to a
 * daemon that ignored it: the pod placed anywhere. */
static void test_field_validation(void **state)
{
	(void)state;
	const char *typo = "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\","
			   "\"lables\":{\"x\":\"y\"}},\"spec\":{\"nodeSelectr\":"
			   "{\"disk\":\"ssd\"},\"containers\":[{\"name\":\"c\"}]}}";
	expect_error(typo, -EINVAL, "line 1: metadata.lables: unknown field (did you "
		     "mean metadata.labels?); spec.nodeSelectr: unknown field (did you "
		     "mean spec.nodeSelector?) (fieldValidation=Strict");
	/* In a List's items, with the item's path. */
	char list[512];
	snprintf(list, sizeof(list), "{\"kind\":\"List\",\"items\":[%s,%s]}",
		 POD("ok", "1"), typo);
	expect_error(list, -EINVAL, "line 1: items[1]: items[1].metadata.lables: "
		     "unknown field");
	expect_error("{\"kind\":\"PodList\",\"itemz\":[]}", -EINVAL,
		     "itemz: unknown field");

	struct gw_limits warn = lim, ignore = lim;
	warn.field_validation = K8S_FIELDS_WARN;
	ignore.field_validation = K8S_FIELDS_IGNORE;
	struct gw_batch b;
	char err[512];
	assert_int_equal(gw_decode_pods(list, strlen(list), &warn, &b, err,
					sizeof(err)), 0);
	assert_int_equal(b.n_pods, 2);
	assert_int_equal(b.n_warnings, 2);
	assert_int_equal(b.n_warnings_total, 2);
	assert_string_equal(b.warnings[0], "unknown field \"items[1].metadata.lables\"");
	assert_string_equal(b.warnings[1], "unknown field \"items[1].spec.nodeSelectr\"");
	/* Each pod knows its own (its answer line's "warnings"). */
	assert_int_equal(b.pods[0].n_warnings, 0);
	assert_int_equal(b.pods[1].first_warning, 0);
	assert_int_equal(b.pods[1].n_warnings, 2);
	/* Dropped from what the daemon gets. */
	const json_t *spec = json_object_get(b.specs[b.pods[1].spec].canon, "spec");
	assert_null(json_object_get(spec, "nodeSelectr"));
	assert_non_null(json_object_get(spec, "containers"));
	gw_batch_free(&b);
	assert_int_equal(gw_decode_pods(typo, strlen(typo), &ignore, &b, err,
					sizeof(err)), 0);
	assert_int_equal(b.n_warnings_total, 0);
	spec = json_object_get(b.specs[0].canon, "spec");
	assert_null(json_object_get(spec, "nodeSelectr"));
	gw_batch_free(&b);
	/* Warnings are bounded; the rest counted. */
	char many[4096];
	size_t n = (size_t)snprintf(many, sizeof(many), "{\"kind\":\"Pod\","
				    "\"metadata\":{\"name\":\"m\"},\"spec\":{");
	for (int i = 0; i < 40; i++)
		n += (size_t)snprintf(many + n, sizeof(many) - n, "\"zz%d\":1,", i);
	snprintf(many + n, sizeof(many) - n, "\"containers\":[]}}");
	assert_int_equal(gw_decode_pods(many, strlen(many), &warn, &b, err,
					sizeof(err)), 0);
	assert_int_equal(b.n_warnings, K8S_FIELDS_MAX_REPORT);
	assert_int_equal(b.n_warnings_total, 40);
	gw_batch_free(&b);
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
		cmocka_unit_test(test_wait),
		cmocka_unit_test(test_explain),
		cmocka_unit_test(test_field_validation),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
