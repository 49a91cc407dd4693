/* The lease and pool-release bodies (gateway/pool_decode.h): jansson with
 * duplicates refused, one object (gateway/json_body.h), only the members
 * named there. Cost: one parse of at most GW_POOL_BODY_MAX bytes. */
#include "gateway/pool_decode.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "gateway/json_body.h"

int gw_lease_decode(const char *body, size_t len, char *err, size_t err_len)
{
	if (gw_json_body_blank(body, len))
		return 0;
	json_t *root;
	int rc = gw_json_body_object(body, len, GW_POOL_BODY_MAX, "lease", NULL,
				     &root, err, err_len);
	if (rc < 0)
		return rc;
	const char *key = json_object_iter_key(json_object_iter(root));
	if (key != NULL) {
		snprintf(err, err_len, "lease: unknown field \"%.64s\": expected an "
			 "empty body or {} (a lease carries only the node's name, "
			 "from the URL)", key);
		rc = -EINVAL;
	}
	json_decref(root);
	return rc;
}

int gw_pool_release_decode(const char *body, size_t len,
			   struct gw_pool_release_req *out, char *err,
			   size_t err_len)
{
	*out = (struct gw_pool_release_req){{0}};
	if (gw_json_body_blank(body, len))
		return 0;
	json_t *root;
	int rc = gw_json_body_object(body, len, GW_POOL_BODY_MAX, "release", NULL,
				     &root, err, err_len);
	if (rc < 0)
		return rc;
	const char *key;
	json_t *v;
	json_object_foreach(root, key, v) {
		if (strcmp(key, "template") != 0) {
			snprintf(err, err_len, "release: unknown field \"%.64s\": "
				 "expected template", key);
			rc = -EINVAL;
			break;
		}
		if (json_is_null(v))
			continue;
		const char *t = json_is_string(v) ? json_string_value(v) : NULL;
		size_t tl = t != NULL ? json_string_length(v) : 0;
		const char *slash = t != NULL ? memchr(t, '/', tl) : NULL;
		if (t == NULL || tl > GW_POOL_NAME_MAX || slash == NULL ||
		    slash == t || slash == t + tl - 1 ||
		    memchr(slash + 1, '/', tl - (size_t)(slash - t) - 1) != NULL ||
		    strlen(t) != tl || !gw_text_printable(t, tl)) {
			snprintf(err, err_len, "release: template: expected "
				 "\"namespace/name\" (at most %u bytes, printable) or "
				 "null", GW_POOL_NAME_MAX);
			rc = -EINVAL;
			break;
		}
		memcpy(out->template_, t, tl + 1);
	}
	if (rc < 0)
		out->template_[0] = '\0';
	json_decref(root);
	return rc;
}

bool gw_pool_name_ok(const char *s, size_t len)
{
	return len > 0 && len <= GW_POOL_NAME_MAX && memchr(s, '/', len) == NULL &&
	       memchr(s, '\0', len) == NULL && gw_text_printable(s, len);
}
