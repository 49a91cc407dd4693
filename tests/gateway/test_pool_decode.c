/* unit.gateway_pool_decode: the bodies of PUT /v1/nodes/{name}/lease and
 * POST /v1/pools/{pool}/release, and the release URL's {pool}
 * (gateway/pool_decode.c). What they carry is what shmsched_node_event
 * (SHMSCHED_NODE_LEASE: the name only) and shmsched_pools (a pool and an
 * optional "namespace/name" template, each at most 256 bytes) take
 * (include/shmsched/client.h). Bounded input: bodies past
 * GW_POOL_BODY_MAX, templates past 256 bytes, control characters,
 * unknown members, a lease body with any member are refused with a
 * message. On the old tree none of this existed (the gateway had no
 * lease or pool route). */
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

static void lease_bad(const char *body, const char *says)
{
	char err[512] = "";
	assert_int_equal(gw_lease_decode(body, strlen(body), err, sizeof(err)),
			 -EINVAL);
	if (strstr(err, says) == NULL)
		fail_msg("%.80s: said \"%s\", expected \"%s\"", body, err, says);
}

static void test_lease(void **state)
{
	(void)state;
	char err[512];
	assert_int_equal(gw_lease_decode("", 0, err, sizeof(err)), 0);
	assert_int_equal(gw_lease_decode(" \r\n\t", 4, err, sizeof(err)), 0);
	assert_int_equal(gw_lease_decode("{}", 2, err, sizeof(err)), 0);
	assert_int_equal(gw_lease_decode(" { } \n", 6, err, sizeof(err)), 0);
	lease_bad("{\"holderIdentity\":\"n1\"}", "unknown field \"holderIdentity\"");
	lease_bad("{\"a\":null}", "expected an empty body or {}");
	lease_bad("[]", "expected a JSON object");
	lease_bad("null", "not JSON"); /* jansson: a top-level object or array */
	lease_bad("{", "not JSON");
	lease_bad("{}{}", "not JSON");
	lease_bad("{} x", "not JSON");
	/* Only len bytes are read: "{}" then junk past len is "{}". */
	assert_int_equal(gw_lease_decode("{}garbage", 2, err, sizeof(err)), 0);
}

static void release_bad(const char *body, const char *says)
{
	struct gw_pool_release_req q;
	char err[512] = "";
	assert_int_equal(gw_pool_release_decode(body, strlen(body), &q, err,
						sizeof(err)), -EINVAL);
	assert_string_equal(q.template_, "");
	if (strstr(err, says) == NULL)
		fail_msg("%.80s: said \"%s\", expected \"%s\"", body, err, says);
}

static void release_ok(const char *body, const char *tmpl)
{
	struct gw_pool_release_req q;
	char err[512] = "";
	assert_int_equal(gw_pool_release_decode(body, strlen(body), &q, err,
						sizeof(err)), 0);
	assert_string_equal(q.template_, tmpl);
}

static void test_release(void **state)
{
	(void)state;
	release_ok("", "");
	release_ok("  \n", "");
	release_ok("{}", "");
	release_ok("{\"template\":null}", "");
	release_ok("{\"template\":\"team-a/web\"}", "team-a/web");
	release_bad("{\"template\":\"team-a/web\",\"pool\":\"bad\"}",
		    "unknown field \"pool\": expected template");
	release_bad("{\"template\":\"web\"}", "expected \"namespace/name\"");
	release_bad("{\"template\":\"/web\"}", "expected \"namespace/name\"");
	release_bad("{\"template\":\"team-a/\"}", "expected \"namespace/name\"");
	release_bad("{\"template\":\"a/b/c\"}", "expected \"namespace/name\"");
	release_bad("{\"template\":\"a/b\\nforged\"}", "printable");
	release_bad("{\"template\":\"a/b\\u0000c\"}", "not JSON"); /* no JSON_ALLOW_NUL */
	release_bad("{\"template\":7}", "expected \"namespace/name\"");
	release_bad("{\"template\":\"a/b\",\"template\":\"c/d\"}", "not JSON");
	release_bad("[\"a/b\"]", "expected a JSON object");
	release_bad("{\"template\":", "not JSON");
}

static void test_bounds(void **state)
{
	(void)state;
	/* A template of exactly 256 bytes passes; 257 does not. */
	char body[600], t[300];
	memset(t, 'x', 256);
	t[0] = 'n';
	t[1] = '/';
	t[256] = '\0';
	snprintf(body, sizeof(body), "{\"template\":\"%s\"}", t);
	release_ok(body, t);
	t[256] = 'y';
	t[257] = '\0';
	snprintf(body, sizeof(body), "{\"template\":\"%s\"}", t);
	release_bad(body, "at most 256 bytes");
	/* Bodies past GW_POOL_BODY_MAX, even white space in an object. */
	size_t n = GW_POOL_BODY_MAX + 1;
	char *big = malloc(n + 1);
	assert_non_null(big);
	memset(big, ' ', n);
	big[0] = '{';
	big[n - 1] = '}';
	big[n] = '\0';
	release_bad(big, "at most 16384");
	lease_bad(big, "at most 16384");
	free(big);
	/* The URL's {pool}. */
	assert_true(gw_pool_name_ok("bad", 3));
	assert_true(gw_pool_name_ok("bad/release", 3));
	assert_false(gw_pool_name_ok("", 0));
	assert_false(gw_pool_name_ok("a/b", 3));
	assert_false(gw_pool_name_ok("a\tb", 3));
	assert_false(gw_pool_name_ok("a\0b", 3));
	char p[GW_POOL_NAME_MAX + 1];
	memset(p, 'p', sizeof(p));
	assert_true(gw_pool_name_ok(p, GW_POOL_NAME_MAX));
	assert_false(gw_pool_name_ok(p, GW_POOL_NAME_MAX + 1));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lease),
		cmocka_unit_test(test_release),
		cmocka_unit_test(test_bounds),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
