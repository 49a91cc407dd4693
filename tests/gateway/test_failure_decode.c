/* unit.gateway_failure_decode: the body and id of POST
 * /v1/placements/{id}/failure (gateway/failure_decode.c). What OP_FAILURE
 * carries (shmsched_report_failure: a placement id and a reason of at
 * most 256 bytes for the daemon's log), with exitCode an int32 as
 * Kubernetes' ContainerStateTerminated.exitCode (k8s.io/api core/v1
 * types.go: ExitCode int32) folded into the reason. Bounded input: bodies
 * past GW_FAILURE_BODY_MAX, reasons past 256 bytes (alone or with their
 * exit code), control characters, unknown members, ids past UINT64_MAX
 * are refused with a message. On the old tree none of this existed (the
 * route answered 405). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gateway/gateway.h"

static int decode(const char *body, struct gw_failure_req *q, char *err, size_t len)
{
	err[0] = '\0';
	return gw_failure_decode(body, strlen(body), q, err, len);
}

static void bad(const char *body, const char *says)
{
	struct gw_failure_req q;
	char err[512];
	assert_int_equal(decode(body, &q, err, sizeof(err)), -EINVAL);
	assert_string_equal(q.reason, "");
	if (strstr(err, says) == NULL)
		fail_msg("%.80s: said \"%s\", expected \"%s\"", body, err, says);
}

static void test_body(void **state)
{
	(void)state;
	struct gw_failure_req q;
	char err[512];
	assert_int_equal(decode("{\"reason\":\"OOMKilled\",\"exitCode\":137}", &q, err,
				sizeof(err)), 0);
	assert_string_equal(q.reason, "exit code 137: OOMKilled");
	assert_int_equal(decode("{\"exitCode\":-1}", &q, err, sizeof(err)), 0);
	assert_string_equal(q.reason, "exit code -1");
	assert_int_equal(decode("{\"reason\":\"bad driver\"}", &q, err, sizeof(err)), 0);
	assert_string_equal(q.reason, "bad driver");
	assert_int_equal(decode("{\"reason\":null,\"exitCode\":null}", &q, err,
				sizeof(err)), 0);
	assert_string_equal(q.reason, "");
	assert_int_equal(decode("", &q, err, sizeof(err)), 0);
	assert_string_equal(q.reason, "");
	assert_int_equal(decode(" \r\n", &q, err, sizeof(err)), 0);
	assert_int_equal(decode("{}", &q, err, sizeof(err)), 0);

	bad("{\"reason\":\"x\",\"why\":1}", "unknown field \"why\": expected reason "
	    "or exitCode");
	bad("{\"reason\":7}", "reason: expected a string");
	bad("{\"exitCode\":\"137\"}", "exitCode: expected an integer from "
	    "-2147483648 to 2147483647");
	bad("{\"exitCode\":2147483648}", "exitCode: expected an integer");
	bad("{\"exitCode\":1.5}", "exitCode: expected an integer");
	bad("{\"reason\":\"a\\nforged log line\"}", "holding a control character");
	bad("{\"reason\":\"a\\u0000b\"}", "not JSON");
	bad("[\"reason\"]", "expected a JSON object");
	bad("{\"reason\":\"x\"} {}", "not JSON");
	bad("{\"reason\":\"x\",\"reason\":\"y\"}", "not JSON");
	bad("{\"reason\":", "not JSON");
}

static void test_bounds(void **state)
{
	(void)state;
	struct gw_failure_req q;
	char err[512];
	char body[GW_FAILURE_BODY_MAX + 64];
	/* 256 bytes: taken whole; 257: refused. */
	char reason[GW_FAILURE_REASON_MAX + 2];
	memset(reason, 'r', sizeof(reason));
	reason[GW_FAILURE_REASON_MAX] = '\0';
	snprintf(body, sizeof(body), "{\"reason\":\"%s\"}", reason);
	assert_int_equal(decode(body, &q, err, sizeof(err)), 0);
	assert_int_equal(strlen(q.reason), GW_FAILURE_REASON_MAX);
	reason[GW_FAILURE_REASON_MAX] = 'r';
	reason[GW_FAILURE_REASON_MAX + 1] = '\0';
	snprintf(body, sizeof(body), "{\"reason\":\"%s\"}", reason);
	bad(body, "reason: 257 bytes; expected at most 256 bytes");
	/* With its exit code the reason sent passes 256 bytes: refused, not
	 * cut. */
	reason[GW_FAILURE_REASON_MAX - 4] = '\0';
	snprintf(body, sizeof(body), "{\"reason\":\"%s\",\"exitCode\":1}", reason);
	bad(body, "make 265 bytes; at most 256");
	/* A body past its bound, whatever it holds. */
	memset(body, ' ', sizeof(body));
	memcpy(body, "{}", 2);
	assert_int_equal(gw_failure_decode(body, GW_FAILURE_BODY_MAX + 1, &q, err,
					   sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "a body of 16385 bytes; at most 16384"));
	assert_int_equal(gw_failure_decode(body, GW_FAILURE_BODY_MAX, &q, err,
					   sizeof(err)), 0);
	/* Deep JSON: refused by jansson's depth bound, with a message. */
	static char deep[8192];
	size_t n = 0;
	n += (size_t)snprintf(deep, sizeof(deep), "{\"reason\":");
	for (int i = 0; i < 4000; i++)
		deep[n++] = '[';
	deep[n] = '\0';
	bad(deep, "not JSON");
}

static void test_id(void **state)
{
	(void)state;
	uint64_t id;
	assert_true(gw_failure_id("42", 2, &id));
	assert_int_equal(id, 42);
	assert_true(gw_failure_id("18446744073709551615", 20, &id));
	assert_true(id == UINT64_MAX);
	assert_false(gw_failure_id("18446744073709551616", 20, &id));
	assert_int_equal(id, 0);
	assert_false(gw_failure_id("0", 1, &id));
	assert_false(gw_failure_id("007", 3, &id));
	assert_false(gw_failure_id("", 0, &id));
	assert_false(gw_failure_id("-1", 2, &id));
	assert_false(gw_failure_id("+1", 2, &id));
	assert_false(gw_failure_id("12a", 3, &id));
	assert_false(gw_failure_id("team-a", 6, &id));
	assert_false(gw_failure_id("123456789012345678901", 21, &id));
	/* Only len bytes are read. */
	assert_true(gw_failure_id("12/failure", 2, &id));
	assert_int_equal(id, 12);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_body),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_id),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
