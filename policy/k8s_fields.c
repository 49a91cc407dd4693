/* Kubernetes field validation: see policy.h, "Kubernetes field validation".
 *
 * One walker for every decoder of Kubernetes objects (ingest/k8s_json.h
 * for files, templates and `shmsched place`; gateway/decode.c for request
 * bodies). It follows the object and its type in the derived table
 * together: a member whose name the type lacks is unknown; a member that
 * holds objects of a known type (an object, an array of them, a map of
 * them) is walked in turn; anything else (strings, numbers, opaque types)
 * is not looked into. Unknown fields are all counted; the first
 * K8S_FIELDS_MAX_REPORT are named, each with the nearest field of its type
 * when one is near (edit distance <= 2, or equal but for case), as kubectl
 * users expect from a typo.
 *
 * The table (k8s_fields_table.c) is generated: scripts/derive-k8s-fields
 * reads Kubernetes' OpenAPI document; nothing here names a field by hand.
 *
 * Cost: O(members * fields of the type) string compares (a type has at
 * most ~50 fields); recursion depth is that of the type graph along the
 * input, bounded by the input's own depth (jansson's parser caps it).
 */
#include "policy/policy.h"
#include "policy/k8s_fields_internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#define PATH_MAX_LEN 384

struct walk {
	struct k8s_fields_report *r;
	bool prune; /* remove the unknown members as they are found */
	char path[PATH_MAX_LEN];
	size_t len;
};

int k8s_field_validation_parse(const char *s, enum k8s_field_validation *out)
{
	if (s == NULL)
		return -EINVAL;
	if (strcasecmp(s, "Strict") == 0)
		*out = K8S_FIELDS_STRICT;
	else if (strcasecmp(s, "Warn") == 0)
		*out = K8S_FIELDS_WARN;
	else if (strcasecmp(s, "Ignore") == 0)
		*out = K8S_FIELDS_IGNORE;
	else
		return -EINVAL;
	return 0;
}

const char *k8s_field_validation_name(enum k8s_field_validation v)
{
	switch (v) {
	case K8S_FIELDS_WARN:
		return "Warn";
	case K8S_FIELDS_IGNORE:
		return "Ignore";
	case K8S_FIELDS_STRICT:
	default:
		return "Strict";
	}
}

static const struct k8s_froot *root_of(const char *api_version, const char *kind)
{
	if (kind == NULL)
		return NULL;
	for (size_t i = 0; i < k8s_n_froots; i++) {
		const struct k8s_froot *r = &k8s_froots[i];
		if (strcmp(r->kind, kind) != 0)
			continue;
		/* A PodGroup with no apiVersion is scheduler-plugins' CRD
		 * (scheduling.x-k8s.io) to ingest/k8s_json.h, not the table's
		 * scheduling.k8s.io one. */
		if ((api_version == NULL || api_version[0] == '\0') &&
		    strcmp(kind, "PodGroup") == 0)
			return NULL;
		/* A generic List may name any version ("v1" as kubectl prints). */
		if (api_version == NULL || api_version[0] == '\0' ||
		    strcmp(api_version, r->api_version) == 0 || strcmp(kind, "List") == 0)
			return r;
	}
	return NULL;
}

bool k8s_fields_known_kind(const char *api_version, const char *kind)
{
	return root_of(api_version, kind) != NULL;
}

static const struct k8s_ffield *field_of(const struct k8s_ftype *t, const char *name)
{
	for (uint16_t i = 0; i < t->n; i++)
		if (strcmp(k8s_ffields[t->first + i].name, name) == 0)
			return &k8s_ffields[t->first + i];
	return NULL;
}

/* Levenshtein distance of a and b, capped: any value > cap means "far". */
static size_t distance(const char *a, const char *b, size_t cap)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > 64 || lb > 64)
		return cap + 1;
	if ((la > lb ? la - lb : lb - la) > cap)
		return cap + 1;
	size_t row[65];
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j];
			size_t best = diag + (a[i - 1] != b[j - 1]);
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

/* The field of t nearest to name: equal but for case first, then the
 * smallest edit distance <= 2 (the first such in the table's order). */
static const char *nearest(const struct k8s_ftype *t, const char *name)
{
	const char *best = NULL;
	size_t best_d = 3;
	for (uint16_t i = 0; i < t->n; i++) {
		const char *f = k8s_ffields[t->first + i].name;
		if (strcasecmp(f, name) == 0)
			return f;
		size_t d = distance(name, f, 2);
		if (d < best_d) {
			best_d = d;
			best = f;
		}
	}
	return best;
}

static void report(struct walk *w, const struct k8s_ftype *t, const char *name)
{
	struct k8s_fields_report *r = w->r;
	r->total++;
	if (r->n == K8S_FIELDS_MAX_REPORT)
		return;
	const char *near = nearest(t, name);
	char *m = r->msg[r->n++];
	if (near != NULL)
		snprintf(m, K8S_FIELDS_MSG_MAX,
			 "%.*s%.80s: unknown field (did you mean %.*s%s?)",
			 (int)w->len, w->path, name, (int)w->len, w->path, near);
	else
		snprintf(m, K8S_FIELDS_MSG_MAX, "%.*s%.80s: unknown field",
			 (int)w->len, w->path, name);
}

/* Appends pre, s, post to the path; returns the length to restore. Past
 * the buffer the path is cut (messages stay bounded), the walk goes on. */
static size_t push(struct walk *w, const char *pre, const char *s, const char *post)
{
	size_t mark = w->len;
	int n = snprintf(w->path + w->len, sizeof(w->path) - w->len, "%s%s%s",
			 pre, s, post);
	if (n > 0)
		w->len += (size_t)n < sizeof(w->path) - w->len ? (size_t)n
							      : sizeof(w->path) - w->len - 1;
	return mark;
}

static void walk_object(struct walk *w, const json_t *obj, uint16_t type);

static void walk_value(struct walk *w, const json_t *v, const struct k8s_ffield *f)
{
	size_t mark, i;
	const char *key;
	json_t *x;
	switch (f->shape) {
	case K8S_FIELD_OBJECT:
		if (json_is_object(v)) {
			mark = push(w, "", f->name, ".");
			walk_object(w, v, f->type);
			w->len = mark;
		}
		break;
	case K8S_FIELD_ARRAY:
		if (!json_is_array(v))
			break;
		json_array_foreach(v, i, x) {
			if (!json_is_object(x))
				continue;
			char idx[24];
			snprintf(idx, sizeof(idx), "%zu", i);
			mark = push(w, "", f->name, "[");
			push(w, "", idx, "].");
			walk_object(w, x, f->type);
			w->len = mark;
		}
		break;
	case K8S_FIELD_MAP:
		if (!json_is_object(v))
			break;
		json_object_foreach((json_t *)v, key, x) {
			if (!json_is_object(x))
				continue;
			mark = push(w, "", f->name, "[");
			push(w, "", key, "].");
			walk_object(w, x, f->type);
			w->len = mark;
		}
		break;
	default:
		break;
	}
}

static void walk_object(struct walk *w, const json_t *obj, uint16_t type)
{
	if (type >= k8s_n_ftypes)
		return;
	const struct k8s_ftype *t = &k8s_ftypes[type];
	const char *key;
	json_t *v;
	void *tmp;
	json_object_foreach_safe((json_t *)obj, tmp, key, v) {
		const struct k8s_ffield *f = field_of(t, key);
		if (f == NULL) {
			report(w, t, key);
			/* Safe: the iteration holds the next member. */
			if (w->prune)
				json_object_del((json_t *)obj, key);
		} else {
			walk_value(w, v, f);
		}
	}
}

size_t k8s_fields_check(const json_t *obj, const char *api_version,
			const char *kind, const char *prefix,
			struct k8s_fields_report *r)
{
	r->total = 0;
	r->n = 0;
	const struct k8s_froot *root = root_of(api_version, kind);
	if (root == NULL || !json_is_object(obj))
		return 0;
	struct walk w = {.r = r};
	w.len = 0;
	if (prefix != NULL)
		push(&w, "", prefix, "");
	walk_object(&w, obj, root->type);
	return r->total;
}

size_t k8s_fields_prune(json_t *obj, const char *api_version, const char *kind)
{
	struct k8s_fields_report r = {0};
	const struct k8s_froot *root = root_of(api_version, kind);
	if (root == NULL || !json_is_object(obj))
		return 0;
	struct walk w = {.r = &r, .prune = true};
	walk_object(&w, obj, root->type);
	return r.total;
}

void k8s_fields_report_line(const struct k8s_fields_report *r, char *buf,
			    size_t len)
{
	size_t used = 0;
	if (len == 0)
		return;
	buf[0] = '\0';
	for (size_t i = 0; i < r->n && used < len; i++) {
		int n = snprintf(buf + used, len - used, "%s%s", i > 0 ? "; " : "",
				 r->msg[i]);
		if (n < 0)
			return;
		used += (size_t)n;
	}
	if (r->total > r->n && used < len)
		snprintf(buf + used, len - used, "; and %zu more unknown field%s",
			 r->total - r->n, r->total - r->n == 1 ? "" : "s");
}
