/* The failure route's body and id (gateway/failure_decode.h): jansson
 * (gateway/json_body.h), then each member checked by name and type.
 * Nothing here trusts the body: its size is bounded before parsing, every
 * member's type is checked before its value is read, the reason is
 * bounded and checked for control characters before it is copied. */
#include "gateway/failure_decode.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "gateway/json_body.h"

bool gw_failure_id(const char *s, size_t len, uint64_t *id)
{
	*id = 0;
	if (len == 0 || len > 20 || s[0] == '0')
		return false;
	uint64_t v = 0;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		unsigned d = (unsigned)(s[i] - '0');
		if (v > (UINT64_MAX - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*id = v;
	return true;
}

int gw_failure_decode(const char *body, size_t len, struct gw_failure_req *out,
		      char *err, size_t err_len)
{
	*out = (struct gw_failure_req){0};
	/* Blank within the bound: no reason (past it, refused for its size). */
	if (len <= GW_FAILURE_BODY_MAX && gw_json_body_blank(body, len))
		return 0;
	json_t *root;
	int rc = gw_json_body_object(body, len, GW_FAILURE_BODY_MAX, "failure",
				     " ({\"reason\":TEXT,\"exitCode\":N})", &root,
				     err, err_len);
	if (rc < 0)
		return rc;
	rc = -EINVAL;
	const char *key, *reason = NULL;
	size_t reason_len = 0;
	bool has_code = false;
	json_int_t code = 0;
	json_t *v;
	json_object_foreach(root, key, v) {
		if (strcmp(key, "reason") == 0) {
			if (json_is_null(v))
				continue;
			if (!json_is_string(v)) {
				snprintf(err, err_len, "failure: reason: expected a "
					 "string");
				goto cleanup;
			}
			reason = json_string_value(v);
			reason_len = json_string_length(v);
			bool printable = gw_text_printable(reason, reason_len);
			if (reason_len > GW_FAILURE_REASON_MAX || !printable) {
				snprintf(err, err_len, "failure: reason: %zu bytes%s; "
					 "expected at most %u bytes without control "
					 "characters (it goes to the daemon's log)",
					 reason_len, printable ? ""
					 : " holding a control character",
					 GW_FAILURE_REASON_MAX);
				goto cleanup;
			}
		} else if (strcmp(key, "exitCode") == 0) {
			if (json_is_null(v))
				continue;
			if (!json_is_integer(v) || json_integer_value(v) < INT32_MIN ||
			    json_integer_value(v) > INT32_MAX) {
				snprintf(err, err_len, "failure: exitCode: expected an "
					 "integer from %" PRId32 " to %" PRId32
					 " (a container's exit code)", INT32_MIN,
					 INT32_MAX);
				goto cleanup;
			}
			has_code = true;
			code = json_integer_value(v);
		} else {
			snprintf(err, err_len, "failure: unknown field \"%.64s\": "
				 "expected reason or exitCode", key);
			goto cleanup;
		}
	}
	int n;
	if (has_code)
		n = snprintf(out->reason, sizeof(out->reason), "exit code %" PRId32
			     "%s%.*s", (int32_t)code, reason_len > 0 ? ": " : "",
			     (int)reason_len, reason != NULL ? reason : "");
	else
		n = snprintf(out->reason, sizeof(out->reason), "%.*s",
			     (int)reason_len, reason != NULL ? reason : "");
	if (n < 0 || (size_t)n > GW_FAILURE_REASON_MAX) {
		out->reason[0] = '\0';
		snprintf(err, err_len, "failure: \"exit code %" PRId32 ": \" and a "
			 "reason of %zu bytes make %d bytes; at most %u (shorten the "
			 "reason)", (int32_t)code, reason_len, n, GW_FAILURE_REASON_MAX);
		goto cleanup;
	}
	rc = 0;
cleanup:
	json_decref(root);
	return rc;
}
