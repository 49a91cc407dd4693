/* The approval webhooks' registration, URL and answer
 * (gateway/webhook_decode.h): jansson for the JSON (the registration's
 * opening is gateway/json_body.h's), each member checked by name and type
 * before its value is read, every string bounded and checked for control
 * characters before it is copied (gw_text_printable); the URL and the
 * RFC 3339 time by hand, byte by byte, nothing resolved. Nothing here
 * trusts its input: sizes are bounded before parsing. */
#include "gateway/webhook_decode.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "gateway/json_body.h"

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_hex(char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* RFC 3986's pchar and '/' '?': unreserved, sub-delims, ':' '@' (a %
 * escape is checked by the caller). */
static bool path_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c) ||
	       (c != '\0' && strchr("-._~!$&'()*+,;=:@/?", c) != NULL);
}

int gw_webhook_url_parse(const char *url, size_t len, struct gw_webhook_url *out,
			 char *err, size_t err_len)
{
	*out = (struct gw_webhook_url){0};
	static const char scheme[] = "http://", v4[] = "127.0.0.1", v6[] = "[::1]";
	static const char expect[] = "expected http://127.0.0.1:PORT/PATH or "
				     "http://[::1]:PORT/PATH (the gateway calls "
				     "webhooks on loopback only)";
	bool printable = gw_text_printable(url, len);
	if (len == 0 || len > GW_WEBHOOK_URL_MAX || !printable) {
		snprintf(err, err_len, "url: %zu bytes%s; %s, at most %u bytes", len,
			 len > 0 && !printable ? " holding a control character" : "",
			 expect, GW_WEBHOOK_URL_MAX);
		return -EINVAL;
	}
	size_t at = sizeof(scheme) - 1;
	if (len < at || memcmp(url, scheme, at) != 0) {
		snprintf(err, err_len, "url \"%.*s\": not plain http://; %s",
			 (int)(len < 200 ? len : 200), url, expect);
		return -EINVAL;
	}
	if (len - at >= sizeof(v4) - 1 && memcmp(url + at, v4, sizeof(v4) - 1) == 0) {
		at += sizeof(v4) - 1;
	} else if (len - at >= sizeof(v6) - 1 &&
		   memcmp(url + at, v6, sizeof(v6) - 1) == 0) {
		at += sizeof(v6) - 1;
		out->v6 = true;
	} else {
		snprintf(err, err_len, "url \"%.*s\": the host is not 127.0.0.1 or "
			 "[::1] (a literal loopback address: no name is resolved); "
			 "%s", (int)(len < 200 ? len : 200), url, expect);
		return -EINVAL;
	}
	unsigned port = 0;
	size_t digits = 0;
	if (at < len && url[at] == ':') {
		for (at++; at < len && is_digit(url[at]) && digits < 6; at++, digits++)
			port = port * 10 + (unsigned)(url[at] - '0');
	}
	if (digits == 0 || digits > 5 || port == 0 || port > 65535 ||
	    url[at - digits] == '0') {
		snprintf(err, err_len, "url \"%.*s\": expected :PORT after the host, "
			 "1..65535 in decimal without a leading zero; %s",
			 (int)(len < 200 ? len : 200), url, expect);
		return -EINVAL;
	}
	if (at < len && url[at] != '/') {
		snprintf(err, err_len, "url \"%.*s\": byte %zu ('%c') after the port; "
			 "expected the end or a path (/...); %s",
			 (int)(len < 200 ? len : 200), url, at + 1, url[at], expect);
		return -EINVAL;
	}
	for (size_t i = at; i < len; i++) {
		if (url[i] == '%' && i + 2 < len && is_hex(url[i + 1]) &&
		    is_hex(url[i + 2])) {
			i += 2;
			continue;
		}
		if (!path_char(url[i])) {
			snprintf(err, err_len, "url \"%.*s\": byte %zu (0x%02x) in the "
				 "path; expected RFC 3986's unreserved, sub-delims, "
				 "':', '@', '/', '?' or a %%XX escape (no '#', no "
				 "space)", (int)(len < 200 ? len : 200), url, i + 1,
				 (unsigned char)url[i]);
			return -EINVAL;
		}
	}
	memcpy(out->text, url, len);
	out->text[len] = '\0';
	out->port = port;
	return 0;
}

static bool name_ok(const char *s, size_t len)
{
	if (len == 0 || len > GW_WEBHOOK_NAME_MAX)
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c) ||
		      c == '.' || c == '_' || c == '-'))
			return false;
	}
	return true;
}

/* The registration's "disruptions" (gateway/webhook_decode.h) into
 * out->reclaim and out->preempt: 0, or -EINVAL with why. */
static int disruptions(json_t *v, struct gw_webhook_reg *out, char *err,
		       size_t err_len)
{
	static const char expect[] = "expected an array of distinct \"drain\", "
				     "\"reclaim\" and \"preempt\" (the drain "
				     "always asks, listed or not)";
	if (json_is_null(v))
		return 0;
	if (!json_is_array(v) || json_array_size(v) > 3) {
		snprintf(err, err_len, "webhook: disruptions: %s%s", expect,
			 json_is_array(v) ? ", at most 3" : "");
		return -EINVAL;
	}
	bool seen[3] = {false, false, false};
	static const char *const names[3] = {"drain", "reclaim", "preempt"};
	size_t i;
	json_t *e;
	json_array_foreach(v, i, e) {
		const char *s = json_is_string(e) ? json_string_value(e) : NULL;
		size_t sl = s != NULL ? json_string_length(e) : 0;
		unsigned k = 0;
		while (k < 3 && (s == NULL || strlen(names[k]) != sl ||
				 memcmp(names[k], s, sl) != 0))
			k++;
		if (k == 3) {
			if (s != NULL && gw_text_printable(s, sl))
				snprintf(err, err_len, "webhook: disruptions[%zu]: "
					 "unknown disruption \"%.64s\"; %s", i, s,
					 expect);
			else
				snprintf(err, err_len, "webhook: disruptions[%zu]: "
					 "not a printable string; %s", i, expect);
			return -EINVAL;
		}
		if (seen[k]) {
			snprintf(err, err_len, "webhook: disruptions[%zu]: \"%s\" "
				 "twice; %s", i, names[k], expect);
			return -EINVAL;
		}
		seen[k] = true;
	}
	out->reclaim = seen[1];
	out->preempt = seen[2];
	return 0;
}

int gw_webhook_reg_decode(const char *body, size_t len, struct gw_webhook_reg *out,
			  char *err, size_t err_len)
{
	*out = (struct gw_webhook_reg){.deadline_s = GW_WEBHOOK_DEADLINE_DEFAULT_S};
	json_t *root;
	int rc = gw_json_body_object(body, len, GW_WEBHOOK_BODY_MAX, "webhook",
				     " ({\"name\":N,\"url\":U,\"selector\":S,"
				     "\"deadlineSeconds\":D,\"failurePolicy\":"
				     "\"Open\"|\"Closed\",\"disruptions\":[\"drain\","
				     "\"reclaim\",\"preempt\"]})", &root, err, err_len);
	if (rc < 0)
		return rc;
	rc = -EINVAL;
	bool has_name = false, has_url = false;
	const char *key;
	json_t *v;
	json_object_foreach(root, key, v) {
		const char *s = json_is_string(v) ? json_string_value(v) : NULL;
		size_t sl = s != NULL ? json_string_length(v) : 0;
		if (strcmp(key, "name") == 0) {
			if (s == NULL || !name_ok(s, sl)) {
				snprintf(err, err_len, "webhook: name: expected a string "
					 "of 1..%u bytes of A-Z, a-z, 0-9, '.', '_' "
					 "and '-'", GW_WEBHOOK_NAME_MAX);
				goto cleanup;
			}
			memcpy(out->name, s, sl);
			has_name = true;
		} else if (strcmp(key, "url") == 0) {
			if (s == NULL) {
				snprintf(err, err_len, "webhook: url: expected a string");
				goto cleanup;
			}
			char why[512];
			if (gw_webhook_url_parse(s, sl, &out->url, why, sizeof(why)) < 0) {
				snprintf(err, err_len, "webhook: %s", why);
				goto cleanup;
			}
			has_url = true;
		} else if (strcmp(key, "selector") == 0) {
			if (json_is_null(v))
				continue;
			if (s == NULL || sl > GW_WEBHOOK_SELECTOR_MAX ||
			    !gw_text_printable(s, sl)) {
				snprintf(err, err_len, "webhook: selector: expected a "
					 "string of at most %u bytes without control "
					 "characters (the drain's pod selector: key=value, "
					 "key!=value, key, !key, joined by ',')",
					 GW_WEBHOOK_SELECTOR_MAX);
				goto cleanup;
			}
			memcpy(out->selector, s, sl);
		} else if (strcmp(key, "deadlineSeconds") == 0) {
			if (!json_is_integer(v) || json_integer_value(v) < 1 ||
			    json_integer_value(v) > GW_WEBHOOK_DEADLINE_MAX_S) {
				snprintf(err, err_len, "webhook: deadlineSeconds: expected "
					 "an integer from 1 to %u (a day)",
					 GW_WEBHOOK_DEADLINE_MAX_S);
				goto cleanup;
			}
			out->deadline_s = (uint32_t)json_integer_value(v);
		} else if (strcmp(key, "failurePolicy") == 0) {
			if (s != NULL && strcmp(s, "Open") == 0 && sl == 4) {
				out->fail_open = true;
			} else if (s != NULL && strcmp(s, "Closed") == 0 && sl == 6) {
				out->fail_open = false;
			} else {
				snprintf(err, err_len, "webhook: failurePolicy: expected "
					 "\"Open\" (no answer by the deadline: the pod "
					 "is evicted) or \"Closed\" (kept)");
				goto cleanup;
			}
		} else if (strcmp(key, "disruptions") == 0) {
			if (disruptions(v, out, err, err_len) < 0)
				goto cleanup;
		} else {
			snprintf(err, err_len, "webhook: unknown field \"%.64s\": expected "
				 "name, url, selector, deadlineSeconds, failurePolicy "
				 "or disruptions", key);
			goto cleanup;
		}
	}
	if (!has_name || !has_url) {
		snprintf(err, err_len, "webhook: %s is required", !has_name ? "name"
			 : "url");
		goto cleanup;
	}
	rc = 0;
cleanup:
	json_decref(root);
	if (rc < 0)
		*out = (struct gw_webhook_reg){0};
	return rc;
}

/* Days from 1970-01-01 to y-m-d (proleptic Gregorian; Howard Hinnant's
 * days_from_civil). */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	unsigned yoe = (unsigned)(y - era * 400);
	unsigned doy = (153 * (m + (m > 2 ? (unsigned)-3 : 9)) + 2) / 5 + d - 1;
	unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (int64_t)doe - 719468;
}

/* `n` decimal digits at s[*at], into *v. */
static bool num(const char *s, size_t len, size_t *at, unsigned n, unsigned *v)
{
	*v = 0;
	if (*at + n > len)
		return false;
	for (unsigned i = 0; i < n; i++) {
		if (!is_digit(s[*at + i]))
			return false;
		*v = *v * 10 + (unsigned)(s[*at + i] - '0');
	}
	*at += n;
	return true;
}

static bool lit(const char *s, size_t len, size_t *at, const char *any)
{
	if (*at >= len || strchr(any, s[*at]) == NULL || s[*at] == '\0')
		return false;
	(*at)++;
	return true;
}

bool gw_rfc3339_ms(const char *s, size_t len, int64_t *ms)
{
	*ms = 0;
	size_t at = 0;
	unsigned y, mo, d, h, mi, se, oh = 0, om = 0;
	if (!num(s, len, &at, 4, &y) || !lit(s, len, &at, "-") ||
	    !num(s, len, &at, 2, &mo) || !lit(s, len, &at, "-") ||
	    !num(s, len, &at, 2, &d) || !lit(s, len, &at, "Tt") ||
	    !num(s, len, &at, 2, &h) || !lit(s, len, &at, ":") ||
	    !num(s, len, &at, 2, &mi) || !lit(s, len, &at, ":") ||
	    !num(s, len, &at, 2, &se))
		return false;
	static const unsigned mdays[12] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31,
					   30, 31};
	bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
	if (y < 1970 || mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] ||
	    (mo == 2 && d == 29 && !leap) || h > 23 || mi > 59 || se > 60)
		return false;
	unsigned frac = 0, scale = 100;
	if (at < len && s[at] == '.') {
		at++;
		size_t first = at;
		for (; at < len && is_digit(s[at]); at++) {
			frac += (unsigned)(s[at] - '0') * scale;
			scale /= 10;
		}
		if (at == first)
			return false;
	}
	int sign = 0;
	if (lit(s, len, &at, "Zz")) {
		sign = 0;
	} else if (at < len && (s[at] == '+' || s[at] == '-')) {
		sign = s[at] == '+' ? 1 : -1;
		at++;
		if (!num(s, len, &at, 2, &oh) || !lit(s, len, &at, ":") ||
		    !num(s, len, &at, 2, &om) || oh > 23 || om > 59)
			return false;
	} else {
		return false;
	}
	if (at != len)
		return false;
	if (se == 60) /* a leap second: as the second after */
		se = 59, frac = 999;
	int64_t t = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + se;
	t -= sign * (int64_t)(oh * 3600 + om * 60);
	*ms = t * 1000 + frac;
	return true;
}

int gw_webhook_answer_decode(const char *body, size_t len, int64_t now_ms,
			     struct gw_webhook_answer *out, char *err,
			     size_t err_len)
{
	*out = (struct gw_webhook_answer){0};
	static const char shape[] = "{\"decision\":\"grant\"|\"deny\"|\"notBefore\","
				    "\"notBefore\":RFC3339,\"message\":TEXT}";
	if (len > GW_WEBHOOK_ANSWER_MAX) {
		snprintf(err, err_len, "answer of %zu bytes; at most %u", len,
			 GW_WEBHOOK_ANSWER_MAX);
		return -EINVAL;
	}
	json_error_t je;
	json_t *root = json_loadb(body, len, JSON_REJECT_DUPLICATES, &je);
	if (root == NULL) {
		snprintf(err, err_len, "answer not JSON: %.200s (line %d, column %d); "
			 "expected %s", je.text, je.line, je.column, shape);
		return -EINVAL;
	}
	int rc = -EINVAL;
	if (!json_is_object(root)) {
		snprintf(err, err_len, "answer: expected a JSON object %s", shape);
		goto cleanup;
	}
	const char *key, *when = NULL;
	size_t when_len = 0;
	json_t *v;
	json_object_foreach(root, key, v) {
		const char *s = json_is_string(v) ? json_string_value(v) : NULL;
		size_t sl = s != NULL ? json_string_length(v) : 0;
		if (strcmp(key, "decision") == 0) {
			if (s != NULL && sl == 5 && strcmp(s, "grant") == 0) {
				out->decision = GW_WEBHOOK_GRANT;
			} else if (s != NULL && sl == 4 && strcmp(s, "deny") == 0) {
				out->decision = GW_WEBHOOK_DENY;
			} else if (s != NULL && sl == 9 && strcmp(s, "notBefore") == 0) {
				out->decision = GW_WEBHOOK_NOT_BEFORE;
			} else {
				snprintf(err, err_len, "answer: decision: expected "
					 "\"grant\", \"deny\" or \"notBefore\"");
				goto cleanup;
			}
		} else if (strcmp(key, "notBefore") == 0) {
			if (s == NULL || sl > 64) {
				snprintf(err, err_len, "answer: notBefore: expected an "
					 "RFC 3339 time as a string "
					 "(\"2026-11-29T05:00:00Z\")");
				goto cleanup;
			}
			when = s;
			when_len = sl;
		} else if (strcmp(key, "message") == 0) {
			if (s == NULL || sl > GW_WEBHOOK_MESSAGE_MAX ||
			    !gw_text_printable(s, sl)) {
				snprintf(err, err_len, "answer: message: expected a "
					 "string of at most %u bytes without control "
					 "characters", GW_WEBHOOK_MESSAGE_MAX);
				goto cleanup;
			}
			memcpy(out->message, s, sl);
		} else {
			snprintf(err, err_len, "answer: unknown field \"%.64s\": "
				 "expected %s", key, shape);
			goto cleanup;
		}
	}
	if (out->decision == 0) {
		snprintf(err, err_len, "answer: decision is required: %s", shape);
		goto cleanup;
	}
	if ((out->decision == GW_WEBHOOK_NOT_BEFORE) != (when != NULL)) {
		snprintf(err, err_len, "answer: notBefore %s", when == NULL ?
			 "is required with the decision notBefore" :
			 "goes only with the decision notBefore");
		goto cleanup;
	}
	if (when != NULL) {
		int64_t t;
		if (!gw_rfc3339_ms(when, when_len, &t)) {
			snprintf(err, err_len, "answer: notBefore \"%.*s\": not an RFC "
				 "3339 time (expected \"2026-11-29T05:00:00Z\", a "
				 "year from 1970)", (int)when_len, when);
			goto cleanup;
		}
		int64_t ahead = t - now_ms;
		if (ahead > (int64_t)GW_WEBHOOK_NOT_BEFORE_MAX_S * 1000) {
			snprintf(err, err_len, "answer: notBefore \"%.*s\" is %" PRId64
				 " s ahead; at most %d (a day)", (int)when_len, when,
				 ahead / 1000, GW_WEBHOOK_NOT_BEFORE_MAX_S);
			goto cleanup;
		}
		out->not_before_ms = ahead < 1 ? 1 : (uint32_t)ahead;
	}
	rc = 0;
cleanup:
	json_decref(root);
	if (rc < 0)
		*out = (struct gw_webhook_answer){0};
	return rc;
}
