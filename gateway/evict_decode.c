/* The eviction and drain bodies (gateway/evict_decode.h): jansson
 * (gateway/json_body.h), then each member checked by name and type.
 * Nothing here trusts the body: its size is bounded before parsing, every
 * member's type is checked before its value is read, strings are bounded
 * before they are copied. */
#include "gateway/evict_decode.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "gateway/json_body.h"

/* A string member's value, or NULL; absent and null are NULL with 0, any
 * other type -EINVAL. */
static int opt_string(const json_t *obj, const char *key, const char *where,
		      const char **out, char *err, size_t err_len)
{
	const json_t *v = json_object_get(obj, key);
	*out = NULL;
	if (v == NULL || json_is_null(v))
		return 0;
	if (!json_is_string(v)) {
		snprintf(err, err_len, "%s%s: expected a string", where, key);
		return -EINVAL;
	}
	*out = json_string_value(v);
	return 0;
}

int gw_eviction_decode(const char *body, size_t len, const char *ns,
		       const char *name, struct gw_eviction *out, char *err,
		       size_t err_len)
{
	json_t *root = NULL;
	*out = (struct gw_eviction){0};
	int rc = gw_json_body_object(body, len, GW_EVICT_BODY_MAX, "Eviction",
				     NULL, &root, err, err_len);
	if (rc < 0)
		return rc;
	const char *api, *kind, *mname, *mns;
	if ((rc = opt_string(root, "apiVersion", "", &api, err, err_len)) < 0 ||
	    (rc = opt_string(root, "kind", "", &kind, err, err_len)) < 0)
		goto cleanup;
	rc = -EINVAL;
	if (api != NULL && strcmp(api, "policy/v1") != 0 &&
	    strcmp(api, "policy/v1beta1") != 0) {
		snprintf(err, err_len, "apiVersion \"%.64s\": expected policy/v1 "
			 "(or policy/v1beta1)", api);
		goto cleanup;
	}
	if (kind != NULL && strcmp(kind, "Eviction") != 0) {
		snprintf(err, err_len, "not a Eviction object: kind \"%.64s\"", kind);
		goto cleanup;
	}
	const json_t *meta = json_object_get(root, "metadata");
	if (meta != NULL && !json_is_object(meta) && !json_is_null(meta)) {
		snprintf(err, err_len, "metadata: expected an object");
		goto cleanup;
	}
	if ((rc = opt_string(meta, "name", "metadata.", &mname, err, err_len)) < 0 ||
	    (rc = opt_string(meta, "namespace", "metadata.", &mns, err, err_len)) < 0)
		goto cleanup;
	rc = -EINVAL;
	/* eviction.go: name != eviction.Name, the same words. */
	if (mname == NULL || strcmp(mname, name) != 0) {
		snprintf(err, err_len, "name in URL does not match name in Eviction "
			 "object");
		goto cleanup;
	}
	/* The apiserver's create handler: an object's namespace, when set,
	 * must be the request's. */
	if (mns != NULL && mns[0] != '\0' && strcmp(mns, ns) != 0) {
		snprintf(err, err_len, "the namespace of the provided object does "
			 "not match the namespace sent on the request");
		goto cleanup;
	}
	const json_t *opts = json_object_get(root, "deleteOptions");
	if (opts != NULL && !json_is_object(opts) && !json_is_null(opts)) {
		snprintf(err, err_len, "deleteOptions: expected an object");
		goto cleanup;
	}
	const json_t *dry = json_object_get(opts, "dryRun");
	if (dry != NULL && !json_is_null(dry)) {
		if (!json_is_array(dry)) {
			snprintf(err, err_len, "deleteOptions.dryRun: expected a list "
				 "of strings (\"All\")");
			goto cleanup;
		}
		for (size_t i = 0; i < json_array_size(dry); i++) {
			const char *s = json_string_value(json_array_get(dry, i));
			if (s == NULL || strcmp(s, "All") != 0) {
				snprintf(err, err_len, "deleteOptions.dryRun[%zu]: %s%.64s%s: "
					 "expected \"All\"", i, s ? "\"" : "",
					 s ? s : "not a string", s ? "\"" : "");
				goto cleanup;
			}
			out->dry_run = true;
		}
	}
	rc = 0;
cleanup:
	json_decref(root);
	return rc;
}

static int opt_bool(const json_t *v, const char *key, bool *out, char *err,
		    size_t err_len)
{
	if (json_is_null(v))
		return 0;
	if (!json_is_boolean(v)) {
		snprintf(err, err_len, "drain: %s: expected true or false", key);
		return -EINVAL;
	}
	*out = json_is_true(v);
	return 0;
}

int gw_drain_decode(const char *body, size_t len, struct gw_drain_req *out,
		    char *err, size_t err_len)
{
	*out = (struct gw_drain_req){0};
	if (gw_json_body_blank(body, len))
		return 0; /* no body: the defaults */
	json_t *root = NULL;
	int rc = gw_json_body_object(body, len, GW_EVICT_BODY_MAX, "drain", NULL,
				     &root, err, err_len);
	if (rc < 0)
		return rc;
	const char *key;
	json_t *v;
	rc = -EINVAL;
	json_object_foreach(root, key, v) {
		if (strcmp(key, "timeoutSeconds") == 0) {
			if (json_is_null(v))
				continue;
			json_int_t t = json_is_integer(v) ? json_integer_value(v) : -1;
			if (t < 0 || t > GW_DRAIN_TIMEOUT_MAX) {
				snprintf(err, err_len, "drain: timeoutSeconds: expected "
					 "an integer from 0 (until done) to %u",
					 GW_DRAIN_TIMEOUT_MAX);
				goto cleanup;
			}
			out->timeout_s = (uint32_t)t;
		} else if (strcmp(key, "dryRun") == 0) {
			if (opt_bool(v, key, &out->dry_run, err, err_len) < 0)
				goto cleanup;
		} else if (strcmp(key, "force") == 0) {
			if (opt_bool(v, key, &out->force, err, err_len) < 0)
				goto cleanup;
		} else if (strcmp(key, "surge") == 0) {
			if (opt_bool(v, key, &out->surge, err, err_len) < 0)
				goto cleanup;
		} else if (strcmp(key, "podSelector") == 0) {
			if (json_is_null(v))
				continue;
			if (!json_is_string(v) ||
			    json_string_length(v) > GW_DRAIN_SELECTOR_MAX ||
			    strlen(json_string_value(v)) != json_string_length(v)) {
				snprintf(err, err_len, "drain: podSelector: expected a "
					 "label selector of at most %u bytes, without "
					 "NUL (key=value, key!=value, key, !key, joined "
					 "by ',')", GW_DRAIN_SELECTOR_MAX);
				goto cleanup;
			}
			memcpy(out->selector, json_string_value(v),
			       json_string_length(v) + 1);
		} else {
			snprintf(err, err_len, "drain: unknown field \"%.64s\": expected "
				 "timeoutSeconds, dryRun, force, surge or podSelector",
				 key);
			goto cleanup;
		}
	}
	rc = 0;
cleanup:
	json_decref(root);
	return rc;
}
