/* Fuzz target: the gateway's request bodies (gateway/decode.c) on arbitrary
 * bytes, as POST /v1/placements receives them. What the decoder accepts
 * must hold together: every pod names a spec of the batch, its name is
 * "namespace/name" with its cookie, no name twice, every spec's hash is
 * its key's (and survives a round trip through text with keys sorted),
 * no two specs equal; what it refuses must say why. The same bytes as
 * kube-scheduler's ExtenderArgs (gw_decode_extender_args): accepted, every
 * candidate is a name within bounds. The same bytes as ?wait=SECONDS
 * (gw_parse_wait): accepted exactly when they are 1 to 10 decimal digits
 * of a value within the range, which is what it returns. The same bytes
 * as ?explain=VALUE (gw_parse_explain): accepted exactly when they are
 * "true" or "false", refused naming ?explain= within a bounded message.
 * And the fast path (decode.c's spec cache, filled by earlier inputs and
 * by the first of two decodes here) against the full jansson path
 * (gw_limits.no_spec_cache): the same result, message and batch. */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gateway/gateway.h"
#include "policy/policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
static void extender_args(const uint8_t *data, size_t size);
static void wait_value(const uint8_t *data, size_t size);
static void explain_value(const uint8_t *data, size_t size);
static void same_as_full_path(const uint8_t *data, size_t size,
			      const struct gw_limits *lim);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* Field validation by the input's size: Strict, Warn, Ignore. */
	const struct gw_limits lim = {.max_pods = 256, .max_specs = 32,
				      .field_validation = (int)(size % 3)};
	struct gw_batch b;
	char err[512];
	err[0] = '\0';
	extender_args(data, size);
	wait_value(data, size);
	explain_value(data, size);
	same_as_full_path(data, size, &lim);
	int rc = gw_decode_pods((const char *)data, size, &lim, &b, err, sizeof(err));
	if (rc < 0) {
		if (err[0] == '\0' || (rc != -EINVAL && rc != -E2BIG && rc != -ENOMEM))
			abort();
		gw_batch_free(&b);
		return 0;
	}
	if (b.n_pods > lim.max_pods || b.n_specs > lim.max_specs)
		abort();
	/* Warnings bounded, only under Warn; what reaches the daemon holds
	 * no unknown field at any level. */
	if (b.n_warnings > GW_MAX_WARNINGS || b.n_warnings > b.n_warnings_total ||
	    (lim.field_validation != K8S_FIELDS_WARN && b.n_warnings_total != 0))
		abort();
	for (size_t s = 0; s < b.n_specs; s++) {
		struct k8s_fields_report r;
		if (k8s_fields_check(b.specs[s].canon, "v1", "Pod", "", &r) != 0)
			abort();
	}
	for (size_t i = 0; i < b.n_pods; i++) {
		const struct gw_pod *p = &b.pods[i];
		const char *name = gw_pod_name(&b, p);
		if (p->spec >= b.n_specs || p->cookie == 0 ||
		    p->cookie != gw_cookie(name, strlen(name)) ||
		    strchr(name, '/') == NULL || strchr(name, '/') != strrchr(name, '/'))
			abort();
		for (size_t k = 0; k < i; k++)
			if (strcmp(gw_pod_name(&b, &b.pods[k]), name) == 0)
				abort();
	}
	for (size_t s = 0; s < b.n_specs; s++) {
		const json_t *key = b.specs[s].canon;
		if (b.specs[s].hash != gw_spec_hash(key))
			abort();
		char *text = json_dumps(key, JSON_SORT_KEYS | JSON_COMPACT);
		json_t *again = text ? json_loads(text, 0, NULL) : NULL;
		if (again != NULL && gw_spec_hash(again) != b.specs[s].hash)
			abort();
		json_decref(again);
		free(text);
		for (size_t t = 0; t < s; t++)
			if (json_equal(b.specs[t].canon, key))
				abort();
	}
	gw_batch_free(&b);
	return 0;
}

static void extender_args(const uint8_t *data, size_t size)
{
	struct gw_extender_args x;
	char err[512];
	err[0] = '\0';
	int rc = gw_decode_extender_args((const char *)data, size, 64, &x, err,
					 sizeof(err));
	if (rc < 0 && err[0] == '\0')
		abort();
	if (rc == 0) {
		if (x.pod_key == NULL || x.n_names > 64 || strchr(x.pod_name, '/') == NULL)
			abort();
		for (size_t i = 0; i < x.n_names; i++)
			if (x.names[i] == NULL || x.names[i][0] == '\0' ||
			    strlen(x.names[i]) > GW_NAME_MAX)
				abort();
	}
	gw_extender_args_free(&x);
}

static void explain_value(const uint8_t *data, size_t size)
{
	char err[256];
	err[0] = '\0';
	bool on = false;
	int rc = gw_parse_explain((const char *)data, size, &on, err, sizeof(err));
	bool is_true = size == 4 && memcmp(data, "true", 4) == 0;
	bool is_false = size == 5 && memcmp(data, "false", 5) == 0;
	if ((rc == 0) != (is_true || is_false) || (rc == 0 && on != is_true) ||
	    (rc < 0 && (rc != -EINVAL || strstr(err, "?explain=") == NULL ||
			strlen(err) > 200)))
		abort();
}

static void wait_value(const uint8_t *data, size_t size)
{
	char err[256];
	err[0] = '\0';
	unsigned s = 12345;
	int rc = gw_parse_wait((const char *)data, size, 300, &s, err, sizeof(err));
	uint64_t v = 0;
	bool digits = size >= 1 && size <= 10;
	for (size_t i = 0; digits && i < size; i++) {
		digits = data[i] >= '0' && data[i] <= '9';
		v = v * 10 + (uint64_t)(data[i] - '0');
	}
	bool want = digits && v <= 300;
	if (want != (rc == 0) || (rc == 0 && s != v) || (rc < 0 && (rc != -EINVAL ||
	    s != 12345 || strstr(err, "?wait=") == NULL || strlen(err) > 200)))
		abort();
}

/* Twice through the cache (a miss may fill it, then a hit), each against
 * the full path. */
static void same_as_full_path(const uint8_t *data, size_t size,
			      const struct gw_limits *lim)
{
	struct gw_limits full = *lim;
	full.no_spec_cache = true;
	for (int round = 0; round < 2; round++) {
		struct gw_batch a, b;
		char ea[512] = "", eb[512] = "";
		int ra = gw_decode_pods((const char *)data, size, &full, &a, ea, sizeof(ea));
		int rb = gw_decode_pods((const char *)data, size, lim, &b, eb, sizeof(eb));
		if (ra != rb || (ra < 0 && strcmp(ea, eb) != 0))
			abort();
		if (ra == 0 && (a.n_pods != b.n_pods || a.n_specs != b.n_specs ||
				a.n_warnings != b.n_warnings ||
				a.n_warnings_total != b.n_warnings_total))
			abort();
		for (size_t i = 0; ra == 0 && i < a.n_pods; i++)
			if (a.pods[i].cookie != b.pods[i].cookie ||
			    a.pods[i].spec != b.pods[i].spec ||
			    strcmp(gw_pod_name(&a, &a.pods[i]), gw_pod_name(&b, &b.pods[i])) != 0)
				abort();
		for (size_t i = 0; ra == 0 && i < a.n_warnings; i++)
			if (strcmp(a.warnings[i], b.warnings[i]) != 0)
				abort();
		for (size_t i = 0; ra == 0 && i < a.n_specs; i++) {
			char *ta = json_dumps(a.specs[i].canon, JSON_COMPACT);
			char *tb = json_dumps(b.specs[i].canon, JSON_COMPACT);
			bool same = ta != NULL && tb != NULL && strcmp(ta, tb) == 0 &&
				    a.specs[i].hash == b.specs[i].hash &&
				    strcmp(a.specs[i].where, b.specs[i].where) == 0;
			free(ta);
			free(tb);
			if (!same)
				abort();
		}
		gw_batch_free(&a);
		gw_batch_free(&b);
	}
}
