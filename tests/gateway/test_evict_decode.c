/* unit.gateway_evict_decode: the bodies of the Eviction API and of a drain
 * (gateway/evict_decode.c). The Eviction's rules are kube-apiserver's
 * (kubernetes/kubernetes pkg/registry/core/pod/storage/eviction.go:
 * "name in URL does not match name in Eviction object", policy/v1 and
 * policy/v1beta1 accepted, deleteOptions.dryRun ["All"]); the drain's are
 * `shmsched node drain`'s flags. Bounded input: bodies past
 * GW_EVICT_BODY_MAX, selectors past 1024 bytes, timeouts past a week, and
 * deep or odd JSON are refused with a message. */
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

static int evict(const char *body, struct gw_eviction *ev, char *err, size_t len)
{
	err[0] = '\0';
	return gw_eviction_decode(body, strlen(body), "team-a", "web-0", ev, err, len);
}

static void evict_bad(const char *body, const char *says)
{
	struct gw_eviction ev;
	char err[512];
	assert_int_equal(evict(body, &ev, err, sizeof(err)), -EINVAL);
	if (strstr(err, says) == NULL)
		fail_msg("%s: said \"%s\", expected \"%s\"", body, err, says);
}

static void test_eviction(void **state)
{
	(void)state;
	struct gw_eviction ev;
	char err[512];
	assert_int_equal(evict("{\"apiVersion\":\"policy/v1\",\"kind\":\"Eviction\","
			       "\"metadata\":{\"name\":\"web-0\",\"namespace\":\"team-a\"}}",
			       &ev, err, sizeof(err)), 0);
	assert_false(ev.dry_run);
	assert_int_equal(evict("{\"apiVersion\":\"policy/v1beta1\",\"metadata\":{\"name\":"
			       "\"web-0\"},\"deleteOptions\":{\"dryRun\":[\"All\"],"
			       "\"gracePeriodSeconds\":0}}", &ev, err, sizeof(err)), 0);
	assert_true(ev.dry_run);
	assert_int_equal(evict("{\"metadata\":{\"name\":\"web-0\"},\"deleteOptions\":"
			       "{\"dryRun\":[]}}", &ev, err, sizeof(err)), 0);
	assert_false(ev.dry_run);
	evict_bad("{\"metadata\":{\"name\":\"web-1\"}}",
		  "name in URL does not match name in Eviction object");
	evict_bad("{\"kind\":\"Eviction\"}",
		  "name in URL does not match name in Eviction object");
	evict_bad("{\"metadata\":{\"name\":\"web-0\",\"namespace\":\"team-b\"}}",
		  "namespace of the provided object does not match");
	evict_bad("{\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"web-0\"}}",
		  "expected policy/v1");
	evict_bad("{\"kind\":\"Pod\",\"metadata\":{\"name\":\"web-0\"}}",
		  "not a Eviction object");
	evict_bad("{\"metadata\":{\"name\":7}}", "metadata.name: expected a string");
	evict_bad("{\"metadata\":[]}", "metadata: expected an object");
	evict_bad("{\"metadata\":{\"name\":\"web-0\"},\"deleteOptions\":{\"dryRun\":"
		  "[\"Some\"]}}", "deleteOptions.dryRun[0]: \"Some\": expected \"All\"");
	evict_bad("{\"metadata\":{\"name\":\"web-0\"},\"deleteOptions\":{\"dryRun\":true}}",
		  "expected a list");
	evict_bad("{\"metadata\":{\"name\":\"web-0\"},\"deleteOptions\":5}",
		  "deleteOptions: expected an object");
	evict_bad("[]", "expected a JSON object");
	evict_bad("", "not JSON");
	evict_bad("{\"metadata\":{\"name\":\"web-0\"}} {}", "not JSON");
	evict_bad("{\"metadata\":{\"name\":\"web-0\",\"name\":\"web-0\"}}", "not JSON");
	/* A NUL inside the name must not pass as "web-0". */
	evict_bad("{\"metadata\":{\"name\":\"web-0\\u0000x\"}}", "not JSON");
}

static void test_eviction_bounded(void **state)
{
	(void)state;
	/* Just past the bound, though valid: refused before parsing. */
	size_t n = GW_EVICT_BODY_MAX + 1;
	char *big = malloc(n + 1);
	assert_non_null(big);
	const char *head = "{\"metadata\":{\"name\":\"web-0\"},\"pad\":\"";
	memset(big, 'x', n);
	memcpy(big, head, strlen(head));
	big[n - 2] = '"';
	big[n - 1] = '}';
	big[n] = '\0';
	evict_bad(big, "at most 16384");
	/* At the bound: taken. */
	big[n - 3] = '"';
	big[n - 2] = '}';
	big[n - 1] = '\0';
	struct gw_eviction ev;
	char err[512];
	assert_int_equal(evict(big, &ev, err, sizeof(err)), 0);
	free(big);
	/* Deep nesting inside an ignored member: jansson's depth limit. */
	char deep[4200];
	size_t k = (size_t)snprintf(deep, sizeof(deep), "{\"metadata\":{\"name\":"
				    "\"web-0\"},\"x\":");
	for (int i = 0; i < 2048; i++)
		deep[k++] = '[';
	for (int i = 0; i < 2048; i++)
		deep[k++] = ']';
	deep[k++] = '}';
	deep[k] = '\0';
	evict_bad(deep, "not JSON");
}

static void drain_bad(const char *body, const char *says)
{
	struct gw_drain_req q;
	char err[512] = "";
	assert_int_equal(gw_drain_decode(body, strlen(body), &q, err, sizeof(err)),
			 -EINVAL);
	if (strstr(err, says) == NULL)
		fail_msg("%s: said \"%s\", expected \"%s\"", body, err, says);
}

static void test_drain(void **state)
{
	(void)state;
	struct gw_drain_req q;
	char err[512];
	assert_int_equal(gw_drain_decode("", 0, &q, err, sizeof(err)), 0);
	assert_int_equal(q.timeout_s, 0);
	assert_false(q.dry_run || q.force || q.surge);
	assert_string_equal(q.selector, "");
	assert_int_equal(gw_drain_decode(" \n", 2, &q, err, sizeof(err)), 0);
	const char *all = "{\"timeoutSeconds\":90,\"dryRun\":true,\"force\":true,"
			  "\"surge\":true,\"podSelector\":\"app=db,tier!=web\"}";
	assert_int_equal(gw_drain_decode(all, strlen(all), &q, err, sizeof(err)), 0);
	assert_int_equal(q.timeout_s, 90);
	assert_true(q.dry_run && q.force && q.surge);
	assert_string_equal(q.selector, "app=db,tier!=web");
	const char *nulls = "{\"timeoutSeconds\":null,\"podSelector\":null}";
	assert_int_equal(gw_drain_decode(nulls, strlen(nulls), &q, err, sizeof(err)), 0);
	drain_bad("{\"timeoutSeconds\":-1}", "timeoutSeconds: expected an integer");
	drain_bad("{\"timeoutSeconds\":604801}", "to 604800");
	drain_bad("{\"timeoutSeconds\":\"5m\"}", "timeoutSeconds");
	drain_bad("{\"dryRun\":1}", "dryRun: expected true or false");
	drain_bad("{\"force\":\"yes\"}", "force: expected true or false");
	drain_bad("{\"surge\":1}", "surge: expected true or false");
	drain_bad("{\"podSelector\":5}", "podSelector: expected a label selector");
	drain_bad("{\"gracePeriodSeconds\":5}", "unknown field \"gracePeriodSeconds\"");
	drain_bad("[]", "expected a JSON object");
	drain_bad("{", "not JSON");
	/* A selector of 1024 bytes is taken, 1025 refused. */
	char sel[1100];
	size_t k = (size_t)snprintf(sel, sizeof(sel), "{\"podSelector\":\"");
	memset(sel + k, 'a', 1024);
	memcpy(sel + k + 1024, "\"}", 3);
	assert_int_equal(gw_drain_decode(sel, strlen(sel), &q, err, sizeof(err)), 0);
	assert_int_equal(strlen(q.selector), 1024);
	memset(sel + k, 'a', 1025);
	memcpy(sel + k + 1025, "\"}", 3);
	drain_bad(sel, "at most 1024 bytes");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_eviction),
		cmocka_unit_test(test_eviction_bounded),
		cmocka_unit_test(test_drain),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
