/* The lease and pool-release bodies (gateway/pool_decode.h): jansson with
 * duplicates refused, one object, only the members named there. Cost:
 * one parse of at most GW_POOL_BODY_MAX bytes. */
#include "gateway/pool_decode.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

static bool blank(const char *body, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (body[i] != ' ' && body[i] != '\t' && body[i] != '\r' &&
		    body[i] != '\n')
			return false;
	return true;
}

/* The body as one JSON object (*out, the caller's to decref), or -EINVAL. */
static int load_object(const char *body, size_t len, const char *what,
		       json_t **out, char *err, size_t err_len)
{
	*out = NULL;
	if (len > GW_POOL_BODY_MAX) {
		snprintf(err, err_len, "%s: a body of %zu bytes; at most %u", what,
			 len, GW_POOL_BODY_MAX);
		return -EINVAL;
	}
	json_error_t je;
	json_t *root = json_loadb(body, len, JSON_REJECT_DUPLICATES, &je);
	if (root == NULL) {
		snprintf(err, err_len, "%s: not JSON: %.200s (line %d, column %d)",
			 what, je.text, je.line, je.column);
		return -EINVAL;
	}
	if (!json_is_object(root)) {
		json_decref(root);
		snprintf(err, err_len, "%s: expected a JSON object", what);
		return -EINVAL;
	}
	*out = root;
	return 0;
}

static bool printable(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return false;
	return true;
}

int gw_lease_decode(const char *body, size_t len, char *err, size_t err_len)
{
	if (blank(body, len))
		return 0;
	json_t *root;
	int rc = load_object(body, len, "lease", &root, err, err_len);
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
	if (blank(body, len))
		return 0;
	json_t *root;
	int rc = load_object(body, len, "release", &root, err, err_len);
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
		    strlen(t) != tl || !printable(t, tl)) {
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
	       memchr(s, '\0', len) == NULL && printable(s, len);
}
