/* unit.gateway_webhook_decode: the approval webhooks' outside input
 * (gateway/webhook_decode.c): a registration's body, its URL (loopback,
 * plain HTTP, literal addresses only: anything else could make the
 * gateway call out anywhere), a webhook's answer, and RFC 3339 times
 * (RFC 3339 section 5.6; what Kubernetes' metav1.Time marshals:
 * k8s.io/apimachinery pkg/apis/meta/v1/time.go, time.RFC3339). Bounded
 * input: bodies past their bound, names, selectors, URLs and messages
 * past theirs, control characters, unknown members, a notBefore more
 * than a day ahead are refused with a message naming the field. On the
 * old tree none of this existed (/v1/approvals/webhooks was 404). */
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

static void url_bad(const char *url, const char *says)
{
	struct gw_webhook_url u;
	char err[1200] = "";
	assert_int_equal(gw_webhook_url_parse(url, strlen(url), &u, err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(u.text, "");
	if (strstr(err, says) == NULL)
		fail_msg("%.80s: said \"%s\", expected \"%s\"", url, err, says);
}

static void url_ok(const char *url, unsigned port, bool v6)
{
	struct gw_webhook_url u;
	char err[1200] = "";
	if (gw_webhook_url_parse(url, strlen(url), &u, err, sizeof(err)) != 0)
		fail_msg("%s: refused: %s", url, err);
	assert_string_equal(u.text, url);
	assert_int_equal(u.port, port);
	assert_int_equal(u.v6, v6);
}

/* Loopback only: the trust boundary (SSRF). */
static void test_url(void **state)
{
	(void)state;
	url_ok("http://127.0.0.1:8080", 8080, false);
	url_ok("http://127.0.0.1:1/", 1, false);
	url_ok("http://[::1]:65535/approve?team=a&x=%2F", 65535, true);
	url_ok("http://127.0.0.1:80/a-b_c.d~e/f:g@h!$&'()*+,;=", 80, false);
	url_bad("https://127.0.0.1:443/", "not plain http://");
	url_bad("HTTP://127.0.0.1:80/", "not plain http://");
	url_bad("file:///etc/passwd", "not plain http://");
	url_bad("http://localhost:80/", "the host is not 127.0.0.1 or [::1]");
	url_bad("http://10.0.0.1:80/", "the host is not 127.0.0.1 or [::1]");
	url_bad("http://169.254.169.254:80/latest/meta-data", "the host is not");
	url_bad("http://127.0.0.2:80/", "the host is not");
	url_bad("http://127.0.0.1.evil.example:80/", "expected :PORT");
	url_bad("http://127.0.0.1:80@evil.example/", "after the port");
	url_bad("http://user@127.0.0.1:80/", "the host is not");
	url_bad("http://[::ffff:127.0.0.1]:80/", "the host is not");
	url_bad("http://[::1]/", "expected :PORT");
	url_bad("http://127.0.0.1/", "expected :PORT");
	url_bad("http://127.0.0.1:0/", "expected :PORT");
	url_bad("http://127.0.0.1:65536/", "expected :PORT");
	url_bad("http://127.0.0.1:080/", "without a leading zero");
	url_bad("http://127.0.0.1:123456/", "expected :PORT");
	url_bad("http://127.0.0.1:80/a#frag", "in the path");
	url_bad("http://127.0.0.1:80/a b", "in the path");
	url_bad("http://127.0.0.1:80/a\\b", "in the path");
	url_bad("http://127.0.0.1:80/%zz", "in the path");
	url_bad("http://127.0.0.1:80/\xc3\xa9", "in the path");
	url_bad("http://127.0.0.1:80/\n", "control character");
	url_bad("", "expected http://127.0.0.1:PORT");
	char longer[GW_WEBHOOK_URL_MAX + 2];
	memset(longer, 'a', sizeof(longer) - 1);
	longer[sizeof(longer) - 1] = '\0';
	memcpy(longer, "http://127.0.0.1:80/", 20);
	url_bad(longer, "at most 512 bytes");
	longer[GW_WEBHOOK_URL_MAX] = '\0';
	url_ok(longer, 80, false);
}

static void reg_bad(const char *body, const char *says)
{
	struct gw_webhook_reg r;
	char err[1200] = "";
	assert_int_equal(gw_webhook_reg_decode(body, strlen(body), &r, err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(r.name, "");
	if (strstr(err, says) == NULL)
		fail_msg("%.80s: said \"%s\", expected \"%s\"", body, err, says);
}

static void test_registration(void **state)
{
	(void)state;
	struct gw_webhook_reg r;
	char err[1200];
	const char *body = "{\"name\":\"db-keeper\",\"url\":\"http://127.0.0.1:9000/"
			   "ask\",\"selector\":\"app=db\",\"deadlineSeconds\":5,"
			   "\"failurePolicy\":\"Open\"}";
	assert_int_equal(gw_webhook_reg_decode(body, strlen(body), &r, err,
					       sizeof(err)), 0);
	assert_string_equal(r.name, "db-keeper");
	assert_string_equal(r.url.text, "http://127.0.0.1:9000/ask");
	assert_string_equal(r.selector, "app=db");
	assert_int_equal(r.deadline_s, 5);
	assert_true(r.fail_open);
	/* The defaults: every pod, 30 s, Closed. */
	body = "{\"name\":\"k\",\"url\":\"http://[::1]:9/\",\"selector\":null}";
	assert_int_equal(gw_webhook_reg_decode(body, strlen(body), &r, err,
					       sizeof(err)), 0);
	assert_string_equal(r.selector, "");
	assert_int_equal(r.deadline_s, GW_WEBHOOK_DEADLINE_DEFAULT_S);
	assert_false(r.fail_open);

	reg_bad("", "not JSON");
	reg_bad("[]", "expected a JSON object");
	reg_bad("{\"url\":\"http://127.0.0.1:9/\"}", "name is required");
	reg_bad("{\"name\":\"k\"}", "url is required");
	reg_bad("{\"name\":\"k\",\"url\":\"http://10.1.2.3:9/\"}",
		"webhook: url \"http://10.1.2.3:9/\": the host is not 127.0.0.1");
	reg_bad("{\"name\":\"k\",\"url\":9}", "url: expected a string");
	reg_bad("{\"name\":\"a b\",\"url\":\"http://127.0.0.1:9/\"}", "name: expected");
	reg_bad("{\"name\":\"\",\"url\":\"http://127.0.0.1:9/\"}", "name: expected");
	reg_bad("{\"name\":\"k/x\",\"url\":\"http://127.0.0.1:9/\"}", "name: expected");
	reg_bad("{\"name\":\"k\",\"url\":\"http://127.0.0.1:9/\",\"deadlineSeconds\":0}",
		"deadlineSeconds: expected an integer from 1 to 86400");
	reg_bad("{\"name\":\"k\",\"url\":\"http://127.0.0.1:9/\",\"deadlineSeconds\":86401}",
		"deadlineSeconds");
	reg_bad("{\"name\":\"k\",\"url\":\"http://127.0.0.1:9/\",\"deadlineSeconds\":\"5\"}",
		"deadlineSeconds");
	reg_bad("{\"name\":\"k\",\"url\":\"http://127.0.0.1:9/\",\"failurePolicy\":\"Fail\"}",
		"failurePolicy: expected \"Open\"");
	reg_bad("{\"name\":\"k\",\"url\":\"http://127.0.0.1:9/\",\"selector\":\"a\\u0001\"}",
		"selector: expected");
	reg_bad("{\"name\":\"k\",\"url\":\"http://127.0.0.1:9/\",\"webhook\":1}",
		"unknown field \"webhook\"");
	reg_bad("{\"name\":\"k\",\"name\":\"j\",\"url\":\"http://127.0.0.1:9/\"}",
		"not JSON");
	reg_bad("{\"name\":\"k\",\"url\":\"http://127.0.0.1:9/\"} x", "not JSON");
	assert_false(r.reclaim);
	assert_false(r.preempt);

	/* disruptions: the drain always asks; reclaim and preempt opt in. */
	static const struct {
		const char *list;
		bool reclaim, preempt;
	} scopes[] = {
		{"null", false, false},
		{"[]", false, false},
		{"[\"drain\"]", false, false},
		{"[\"reclaim\"]", true, false},
		{"[\"preempt\"]", false, true},
		{"[\"drain\",\"reclaim\"]", true, false},
		{"[\"preempt\",\"drain\",\"reclaim\"]", true, true},
	};
	for (size_t i = 0; i < sizeof(scopes) / sizeof(scopes[0]); i++) {
		char b[256];
		snprintf(b, sizeof(b), "{\"name\":\"k\",\"url\":\"http://127.0.0.1:9/\","
			 "\"disruptions\":%s}", scopes[i].list);
		if (gw_webhook_reg_decode(b, strlen(b), &r, err, sizeof(err)) != 0)
			fail_msg("%s: %s", b, err);
		if (r.reclaim != scopes[i].reclaim || r.preempt != scopes[i].preempt)
			fail_msg("%s: reclaim %d preempt %d", b, r.reclaim, r.preempt);
	}
	reg_bad("{\"name\":\"k\",\"url\":\"http://127.0.0.1:9/\",\"disruptions\":"
		"[\"reclaim\",\"preemption\"]}", "disruptions[1]: unknown disruption "
		"\"preemption\"; expected an array of distinct \"drain\", \"reclaim\" "
		"and \"preempt\"");
	reg_bad("{\"name\":\"k\",\"url\":\"http://127.0.0.1:9/\",\"disruptions\":"
		"[\"Reclaim\"]}", "unknown disruption \"Reclaim\"");
	reg_bad("{\"name\":\"k\",\"url\":\"http://127.0.0.1:9/\",\"disruptions\":"
		"[\"reclaim\",\"reclaim\"]}", "disruptions[1]: \"reclaim\" twice");
	reg_bad("{\"name\":\"k\",\"url\":\"http://127.0.0.1:9/\",\"disruptions\":"
		"\"reclaim\"}", "disruptions: expected an array");
	reg_bad("{\"name\":\"k\",\"url\":\"http://127.0.0.1:9/\",\"disruptions\":"
		"[1]}", "disruptions[0]: not a printable string");
	reg_bad("{\"name\":\"k\",\"url\":\"http://127.0.0.1:9/\",\"disruptions\":"
		"[\"reclaim\\u0001\"]}", "disruptions[0]: not a printable string");
	reg_bad("{\"name\":\"k\",\"url\":\"http://127.0.0.1:9/\",\"disruptions\":"
		"[\"drain\",\"reclaim\",\"preempt\",\"drain\"]}",
		"disruptions: expected an array of distinct \"drain\", \"reclaim\" and "
		"\"preempt\" (the drain always asks, listed or not), at most 3");
	/* Bounds: a name of 64 bytes, a selector of 1,025, a body past 16 KiB. */
	char buf[GW_WEBHOOK_BODY_MAX + 64];
	snprintf(buf, sizeof(buf), "{\"name\":\"%064d\",\"url\":\"http://127.0.0.1:9/\"}", 0);
	reg_bad(buf, "name: expected a string of 1..63 bytes");
	snprintf(buf, sizeof(buf), "{\"name\":\"k\",\"url\":\"http://127.0.0.1:9/\","
		 "\"selector\":\"%01025d\"}", 0);
	reg_bad(buf, "selector: expected a string of at most 1024 bytes");
	memset(buf, ' ', sizeof(buf) - 1);
	buf[sizeof(buf) - 1] = '\0';
	memcpy(buf, "{\"name\":\"k\",\"url\":\"http://127.0.0.1:9/\"}", 40);
	reg_bad(buf, "a body of 16447 bytes; at most 16384");
}

static void answer_bad(const char *body, const char *says)
{
	struct gw_webhook_answer a;
	char err[1200] = "";
	assert_int_equal(gw_webhook_answer_decode(body, strlen(body),
						  INT64_C(1795928400000), &a, err,
						  sizeof(err)), -EINVAL);
	assert_int_equal(a.decision, 0);
	if (strstr(err, says) == NULL)
		fail_msg("%.80s: said \"%s\", expected \"%s\"", body, err, says);
}

/* 2026-11-29T05:00:00Z as Unix ms. */
#define NOW INT64_C(1795928400000)

static void test_answer(void **state)
{
	(void)state;
	struct gw_webhook_answer a;
	char err[1200];
	const char *b = "{\"decision\":\"grant\"}";
	assert_int_equal(gw_webhook_answer_decode(b, strlen(b), NOW, &a, err,
						  sizeof(err)), 0);
	assert_int_equal(a.decision, GW_WEBHOOK_GRANT);
	assert_int_equal(a.not_before_ms, 0);
	b = "{\"decision\":\"deny\",\"message\":\"primary busy\"}";
	assert_int_equal(gw_webhook_answer_decode(b, strlen(b), NOW, &a, err,
						  sizeof(err)), 0);
	assert_int_equal(a.decision, GW_WEBHOOK_DENY);
	assert_string_equal(a.message, "primary busy");
	/* An hour and a half ahead, given in another offset. */
	b = "{\"decision\":\"notBefore\",\"notBefore\":\"2026-11-29T07:30:00.5+01:00\"}";
	assert_int_equal(gw_webhook_answer_decode(b, strlen(b), NOW, &a, err,
						  sizeof(err)), 0);
	assert_int_equal(a.decision, GW_WEBHOOK_NOT_BEFORE);
	assert_int_equal(a.not_before_ms, 5400500);
	/* A time passed: 1 ms from now. */
	b = "{\"decision\":\"notBefore\",\"notBefore\":\"2020-01-01T00:00:00Z\"}";
	assert_int_equal(gw_webhook_answer_decode(b, strlen(b), NOW, &a, err,
						  sizeof(err)), 0);
	assert_int_equal(a.not_before_ms, 1);

	answer_bad("", "answer not JSON");
	answer_bad("\"grant\"", "answer not JSON");
	answer_bad("[1]", "answer: expected a JSON object");
	answer_bad("{}", "decision is required");
	answer_bad("{\"decision\":\"allow\"}", "decision: expected \"grant\"");
	answer_bad("{\"decision\":\"Grant\"}", "decision: expected");
	answer_bad("{\"decision\":true}", "decision: expected");
	answer_bad("{\"decision\":\"notBefore\"}", "notBefore is required");
	answer_bad("{\"decision\":\"grant\",\"notBefore\":\"2026-11-29T06:00:00Z\"}",
		   "goes only with the decision notBefore");
	answer_bad("{\"decision\":\"notBefore\",\"notBefore\":\"tomorrow\"}",
		   "not an RFC 3339 time");
	answer_bad("{\"decision\":\"notBefore\",\"notBefore\":1795928400}",
		   "notBefore: expected an RFC 3339 time as a string");
	answer_bad("{\"decision\":\"notBefore\",\"notBefore\":\"2026-12-01T05:00:00Z\"}",
		   "is 172800 s ahead; at most 86400");
	answer_bad("{\"decision\":\"grant\",\"allowed\":true}", "unknown field \"allowed\"");
	answer_bad("{\"decision\":\"grant\",\"decision\":\"deny\"}", "not JSON");
	answer_bad("{\"decision\":\"grant\",\"message\":\"a\\nb\"}", "message: expected");
	char buf[GW_WEBHOOK_ANSWER_MAX + 64];
	snprintf(buf, sizeof(buf), "{\"decision\":\"grant\",\"message\":\"%0257d\"}", 0);
	answer_bad(buf, "message: expected a string of at most 256 bytes");
	memset(buf, ' ', sizeof(buf) - 1);
	buf[sizeof(buf) - 1] = '\0';
	memcpy(buf, "{\"decision\":\"grant\"}", 20);
	answer_bad(buf, "answer of 4159 bytes; at most 4096");
}

static void time_is(const char *s, int64_t want)
{
	int64_t ms;
	if (!gw_rfc3339_ms(s, strlen(s), &ms))
		fail_msg("%s: refused", s);
	assert_int_equal(ms, want);
}

static void time_bad(const char *s)
{
	int64_t ms = 1;
	if (gw_rfc3339_ms(s, strlen(s), &ms))
		fail_msg("%s: accepted as %lld", s, (long long)ms);
	assert_int_equal(ms, 0);
}

static void test_rfc3339(void **state)
{
	(void)state;
	time_is("1970-01-01T00:00:00Z", 0);
	time_is("2026-11-29T05:00:00Z", NOW);
	time_is("2026-11-29t05:00:00z", NOW);
	time_is("2026-11-29T06:00:00+01:00", NOW);
	time_is("2026-11-28T21:30:00-07:30", NOW);
	time_is("2026-11-29T05:00:00.123456789Z", NOW + 123);
	time_is("2024-02-29T00:00:00Z", INT64_C(1709164800000));
	time_is("2016-12-31T23:59:60Z", INT64_C(1483228799999));
	time_bad("");
	time_bad("2026-11-29");
	time_bad("2026-11-29T05:00:00");
	time_bad("2026-11-29 05:00:00Z");
	time_bad("2026-02-29T00:00:00Z");
	time_bad("2100-02-29T00:00:00Z");
	time_bad("2026-13-01T00:00:00Z");
	time_bad("2026-04-31T00:00:00Z");
	time_bad("2026-11-29T24:00:00Z");
	time_bad("2026-11-29T05:60:00Z");
	time_bad("2026-11-29T05:00:61Z");
	time_bad("2026-11-29T05:00:00.Z");
	time_bad("2026-11-29T05:00:00+0100");
	time_bad("2026-11-29T05:00:00Z ");
	time_bad("1969-12-31T23:59:59Z");
	time_bad("+2026-11-29T05:00:00Z");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_url),
		cmocka_unit_test(test_registration),
		cmocka_unit_test(test_answer),
		cmocka_unit_test(test_rfc3339),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
