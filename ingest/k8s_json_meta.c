/* Metadata and selectors, for every kind of object: the object's name
 * (d->in.subject), label maps and their key and value rules, annotations,
 * label selectors into a pod group's requirement pool, node selector terms
 * (a pod's nodeAffinity), and what a visit leaves (a refusal's message, a
 * skipped kind's count). Part of the Kubernetes decoder: see
 * k8s_json_load.c's note and k8s_json_internal.h; it calls only
 * k8s_json_values.c. */
#include "ingest/k8s_json_internal.h"

/* --- nodes --------------------------------------------------------------- */

static int label_cmp(const void *a, const void *b)
{
	const struct label *x = a, *y = b;
	return x->key < y->key ? -1 : x->key > y->key;
}

/* Kubernetes' own limits on labels (issue 41: a label is a string every
 * node or template holds for good, so its size is bounded where it comes
 * in). As apimachinery's pkg/util/validation (IsQualifiedName for a key,
 * IsValidLabelValue for a value) and pkg/apis/meta/v1/validation
 * (ValidateLabels, ValidateLabelName) check them:
 *   key   = [prefix '/'] name; prefix a DNS-1123 subdomain (at most 253
 *           bytes: lowercase alphanumerics, '-' and '.', each dot-separated
 *           part starting and ending with an alphanumeric); name 1..63
 *           bytes of [A-Za-z0-9] and '-', '_', '.', starting and ending
 *           with an alphanumeric
 *   value = empty, or 1..63 bytes as a key's name */
#define LABEL_NAME_MAX 63u
#define LABEL_PREFIX_MAX 253u

static bool is_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* A qualified name's name part or a label value (non-empty here). */
static bool qualified_part(const char *s, size_t len)
{
	if (len == 0 || len > LABEL_NAME_MAX || !is_alnum(s[0]) || !is_alnum(s[len - 1]))
		return false;
	for (size_t i = 0; i < len; i++)
		if (!is_alnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
			return false;
	return true;
}

/* IsDNS1123Subdomain. */
static bool dns1123_subdomain(const char *s, size_t len)
{
	if (len == 0 || len > LABEL_PREFIX_MAX)
		return false;
	size_t start = 0;
	for (size_t i = 0; i <= len; i++) {
		if (i < len && s[i] != '.') {
			bool ok = (s[i] >= 'a' && s[i] <= 'z') ||
				  (s[i] >= '0' && s[i] <= '9') || s[i] == '-';
			if (!ok)
				return false;
			continue;
		}
		/* A part [start, i): starts and ends with an alphanumeric. */
		if (i == start || s[start] == '-' || s[i - 1] == '-')
			return false;
		start = i + 1;
	}
	return true;
}

/* A label key (or a selector requirement's key) at the current path, as
 * IsQualifiedName checks it. */
static int check_label_key(struct decoder *d, const char *s, size_t len)
{
	const char *slash = memchr(s, '/', len);
	const char *name = slash != NULL ? slash + 1 : s;
	size_t name_len = len - (size_t)(name - s);
	char q[JSON_IN_SHOW_MAX + 16];
	if (slash != NULL && memchr(name, '/', name_len) != NULL)
		return json_in_fail(&d->in, -EINVAL, "label key %s (%zu bytes) is not a valid "
			    "qualified name: at most one '/'",
			    json_in_show_str(s, len, q, sizeof(q)), len);
	if (slash != NULL && !dns1123_subdomain(s, (size_t)(slash - s)))
		return json_in_fail(&d->in, -EINVAL, "label key %s (%zu bytes): its prefix (%zu "
			    "bytes) is not a DNS-1123 subdomain (at most %u bytes: "
			    "lowercase alphanumerics, '-' or '.', each part starting "
			    "and ending with an alphanumeric)",
			    json_in_show_str(s, len, q, sizeof(q)), len,
			    (size_t)(slash - s), LABEL_PREFIX_MAX);
	if (!qualified_part(name, name_len))
		return json_in_fail(&d->in, -EINVAL, "label key %s (%zu bytes): its name (%zu "
			    "bytes) must be 1 to %u characters: alphanumerics, '-', "
			    "'_' or '.', starting and ending with an alphanumeric",
			    json_in_show_str(s, len, q, sizeof(q)), len, name_len,
			    LABEL_NAME_MAX);
	return 0;
}

/* A label value as metadata.labels holds it (IsValidLabelValue). */
static int check_label_value_strict(struct decoder *d, const char *s, size_t len)
{
	char q[JSON_IN_SHOW_MAX + 16];
	if (len == 0 || qualified_part(s, len))
		return 0;
	return json_in_fail(&d->in, -EINVAL, "%s is not a valid label value (%zu bytes; at most "
		    "%u characters: alphanumerics, '-', '_' or '.', starting and "
		    "ending with an alphanumeric)", json_in_show_str(s, len, q, sizeof(q)),
		    len, LABEL_NAME_MAX);
}

static int check_label_value(struct decoder *d, const char *s, size_t len);

/* A map of strings (labels, nodeSelector, a selector's matchLabels) at
 * member `key`, into `out` sorted by key id; every key and value checked
 * as ValidateLabels checks them before anything is interned (a
 * `selector`'s values as check_label_value() says). */
int kj_label_map(struct decoder *d, const json_t *obj, const char *key,
		     struct label *out, size_t max, size_t *n, bool selector)
{
	json_t *map;
	int rc = json_in_get(&d->in, obj, key, JSON_IN_OBJECT, &map);
	*n = 0;
	if (rc < 0 || map == NULL)
		return rc;
	size_t outer = json_in_field(&d->in, key);
	if (json_object_size(map) > max) {
		rc = json_in_fail(&d->in, -ENOSPC, "%zu entries, at most %zu",
			  json_object_size(map), max);
		goto out;
	}
	const char *k;
	json_t *val;
	json_object_foreach(map, k, val) {
		size_t len = strlen(k);
		size_t mark = json_in_key(&d->in, k, len);
		struct label *l = &out[*n];
		rc = json_in_check(&d->in, val, JSON_IN_STRING);
		if (rc == 0)
			rc = check_label_key(d, k, len);
		if (rc == 0)
			rc = selector ? check_label_value(d, json_string_value(val),
							  json_string_length(val))
				      : check_label_value_strict(d, json_string_value(val),
								 json_string_length(val));
		if (rc == 0)
			rc = kj_intern_here(d, k, len, &l->key);
		if (rc == 0)
			rc = kj_string_here(d, val, &l->value);
		json_in_pop(&d->in, mark);
		if (rc < 0)
			goto out;
		(*n)++;
	}
	qsort(out, *n, sizeof(*out), label_cmp);
out:
	json_in_pop(&d->in, outer);
	return rc;
}

/* Adds `l` to `set` (sorted by key, at most `max`): a key already there
 * takes the new value (labels.Merge). */
void kj_label_set_merge(struct label *set, size_t *n, const struct label *l)
{
	size_t i = 0;
	while (i < *n && set[i].key < l->key)
		i++;
	if (i < *n && set[i].key == l->key) {
		set[i].value = l->value;
		return;
	}
	memmove(&set[i + 1], &set[i], (*n - i) * sizeof(*set));
	set[i] = *l;
	(*n)++;
}

/* Sets d->in.subject from metadata: "<kind> <name>" or "<kind> <ns>/<name>". */
int kj_object_name(struct decoder *d, const json_t *obj, const char *kind,
		       bool namespaced, const char **ns, size_t *ns_len,
		       const char **name, size_t *name_len)
{
	json_t *meta;
	int rc = json_in_get(&d->in, obj, "metadata", JSON_IN_OBJECT, &meta);
	if (rc < 0)
		return rc;
	*name = *ns = "";
	*name_len = *ns_len = 0;
	if (meta != NULL) {
		size_t mark = json_in_field(&d->in, "metadata");
		rc = json_in_get_str(&d->in, meta, "name", name, name_len);
		if (rc == 0 && namespaced)
			rc = json_in_get_str(&d->in, meta, "namespace", ns, ns_len);
		json_in_pop(&d->in, mark);
		if (rc < 0)
			return rc;
	}
	if (*name_len == 0)
		return json_in_fail_at(&d->in, "metadata.name", -EINVAL, "missing");
	if (namespaced && *ns_len == 0) {
		*ns = "default";
		*ns_len = strlen(*ns);
	}
	if (namespaced)
		snprintf(d->in.subject, sizeof(d->in.subject), "%s %.*s/%.*s", kind,
			 (int)(*ns_len < 100 ? *ns_len : 100), *ns,
			 (int)(*name_len < 200 ? *name_len : 200), *name);
	else
		snprintf(d->in.subject, sizeof(d->in.subject), "%s %.*s", kind,
			 (int)(*name_len < 300 ? *name_len : 300), *name);
	return 0;
}

/* Calls the visitor, making sure a refusal comes with a message. */
int kj_visited(struct decoder *d, int rc)
{
	if (rc >= 0)
		return 0;
	if (d->in.err != NULL && d->in.err_len > 0 && d->in.err[0] == '\0') {
		d->in.path_len = 0;
		d->in.path[0] = '\0';
		char ebuf[128];
		json_in_fail(&d->in, rc, "refused by the loader (%s)",
		     strerror_r(-rc, ebuf, sizeof(ebuf)));
	}
	return rc;
}

/* Counts an object of a kind shmsched does not read (k8s_ctx.skipped). */
void kj_count_skipped(struct decoder *d, const char *kind, size_t len)
{
	struct k8s_skipped *sk = d->ctx->skipped;
	if (sk == NULL)
		return;
	sk->total++;
	size_t cut = len < sizeof(sk->kinds[0].kind) - 1 ? len :
							 sizeof(sk->kinds[0].kind) - 1;
	for (unsigned i = 0; i < sk->n_kinds; i++) {
		if (strlen(sk->kinds[i].kind) == cut &&
		    memcmp(sk->kinds[i].kind, kind, cut) == 0) {
			sk->kinds[i].count++;
			return;
		}
	}
	if (sk->n_kinds == K8S_SKIPPED_KINDS)
		return;
	memcpy(sk->kinds[sk->n_kinds].kind, kind, cut);
	sk->kinds[sk->n_kinds].kind[cut] = '\0';
	sk->kinds[sk->n_kinds++].count = 1;
}

/* --- annotations ------------------------------------------------------- */

/* metadata.annotations of `obj`: *ann NULL when absent. */
int kj_get_annotations(struct decoder *d, const json_t *obj, json_t **ann)
{
	json_t *meta;
	*ann = NULL;
	int rc = json_in_get(&d->in, obj, "metadata", JSON_IN_OBJECT, &meta);
	if (rc < 0 || meta == NULL)
		return rc;
	size_t mark = json_in_field(&d->in, "metadata");
	rc = json_in_get(&d->in, meta, "annotations", JSON_IN_OBJECT, ann);
	json_in_pop(&d->in, mark);
	return rc;
}

/* Annotation `key` as a decimal integer in min..max; *present false when
 * absent. Above max fails with `over_rc` and names `limit`, the model's
 * bound. Call with the path at metadata.annotations. */
int kj_annotation_int(struct decoder *d, const json_t *ann, const char *key,
			  long min, long max, int over_rc, const char *limit,
			  long *out, bool *present)
{
	char q[JSON_IN_SHOW_MAX + 16];
	*out = 0;
	*present = false;
	json_t *v = ann != NULL ? json_object_get(ann, key) : NULL;
	if (v == NULL || json_is_null(v))
		return 0;
	size_t mark = json_in_key(&d->in, key, strlen(key));
	int rc = json_in_check(&d->in, v, JSON_IN_STRING);
	const char *s = rc == 0 ? json_string_value(v) : "";
	size_t len = rc == 0 ? json_string_length(v) : 0;
	long n = 0;
	bool digits = len > 0;
	for (size_t i = 0; i < len && digits; i++) {
		digits = s[i] >= '0' && s[i] <= '9';
		/* Saturates past max: any length reads without overflow. */
		n = n > max ? n : n * 10 + (s[i] - '0');
	}
	if (rc < 0)
		;
	else if (!digits)
		rc = json_in_fail(&d->in, -EINVAL, "%s is not an integer (%ld..%ld)",
			  json_in_show_str(s, len, q, sizeof(q)), min, max);
	else if (n < min)
		rc = json_in_fail(&d->in, -EINVAL, "%s is not in %ld..%ld",
			  json_in_show_str(s, len, q, sizeof(q)), min, max);
	else if (n > max)
		rc = json_in_fail(&d->in, over_rc, "%s is not in %ld..%ld (%s)",
			  json_in_show_str(s, len, q, sizeof(q)), min, max, limit);
	else
		*out = n;
	*present = rc == 0;
	json_in_pop(&d->in, mark);
	return rc;
}

/* --- pods: node affinity --------------------------------------------- */

static int sel_operator(const char *s, size_t len, uint8_t *op)
{
	static const struct {
		const char *name;
		enum sel_op op;
	} ops[] = {
		{"In", SEL_IN},         {"NotIn", SEL_NOT_IN},
		{"Exists", SEL_EXISTS}, {"DoesNotExist", SEL_DOES_NOT_EXIST},
		{"Gt", SEL_GT},         {"Lt", SEL_LT},
	};
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		if (json_in_str_is(s, len, ops[i].name)) {
			*op = (uint8_t)ops[i].op;
			return 0;
		}
	}
	return -EINVAL;
}

/* A selector requirement's members (node or label selector alike): key,
 * operator, and values (NULL when absent). */
static int requirement_members(struct decoder *d, const json_t *r, const char **key,
			       size_t *key_len, const char **op, size_t *op_len,
			       json_t **values)
{
	int rc = json_in_check(&d->in, r, JSON_IN_OBJECT);
	if (rc == 0)
		rc = json_in_get_str(&d->in, r, "key", key, key_len);
	if (rc == 0)
		rc = json_in_get_str(&d->in, r, "operator", op, op_len);
	if (rc == 0)
		rc = json_in_get(&d->in, r, "values", JSON_IN_ARRAY, values);
	return rc;
}

/* validation.IsValidLabelValue: empty, or a qualified name's name part. */
static bool label_value_ok(const char *s, size_t len)
{
	return len == 0 || qualified_part(s, len);
}

/* One NodeSelectorRequirement, validated as ValidateNodeSelectorRequirement
 * and ValidateNodeFieldSelectorRequirement do. What kube-apiserver lets
 * through but labels.NewRequirement refuses (a value that is not a valid
 * label value; for Gt / Lt, one that is not an int64) marks the
 * requirement invalid: its term then matches no node (shm/model.h). In a
 * preferred term (`preferred`) such a pod to place is refused instead:
 * kube-scheduler's NewPreferredSchedulingTerms fails on it, and with it
 * NodeAffinity's PreScore, so the pod is never scored onto a node. */
static int sel_requirement(struct decoder *d, const json_t *r, bool field,
			   bool preferred)
{
	struct pod_spec *p = &d->pod;
	const char *key = "", *op = "";
	size_t key_len = 0, op_len = 0;
	json_t *values = NULL, *val;
	size_t i;
	char q[JSON_IN_SHOW_MAX + 16];
	int rc = requirement_members(d, r, &key, &key_len, &op, &op_len, &values);
	if (rc < 0)
		return rc;
	if (p->n_exprs >= POD_MAX_EXPRS)
		return json_in_fail(&d->in, -ENOSPC, "more than %d node selector requirements "
			    "in the pod (POD_MAX_EXPRS)", POD_MAX_EXPRS);
	struct sel_expr *e = &p->exprs[p->n_exprs];
	e->invalid = 0;
	size_t n_values = values != NULL ? json_array_size(values) : 0;
	if (key_len == 0)
		return json_in_fail_at(&d->in, "key", -EINVAL, "missing");
	if (field && !json_in_str_is(key, key_len, "metadata.name"))
		return json_in_fail_at(&d->in, "key", -EINVAL, "%s is not a supported field "
			       "(only metadata.name)", json_in_show_str(key, key_len, q, sizeof(q)));
	if (sel_operator(op, op_len, &e->op) < 0 ||
	    (field && e->op != SEL_IN && e->op != SEL_NOT_IN))
		return json_in_fail_at(&d->in, "operator", -EINVAL, "%s is not %s",
			       json_in_show_str(op, op_len, q, sizeof(q)),
			       field ? "In or NotIn" :
			       "In, NotIn, Exists, DoesNotExist, Gt or Lt");
	switch ((enum sel_op)e->op) {
	case SEL_IN:
	case SEL_NOT_IN:
		if (field && n_values != 1)
			return json_in_fail_at(&d->in, "values", -EINVAL, "%zu values, a field "
				       "selector takes exactly one", n_values);
		if (n_values == 0)
			return json_in_fail_at(&d->in, "values", -EINVAL, "must not be empty for "
				       "operator %.*s", (int)op_len, op);
		break;
	case SEL_EXISTS:
	case SEL_DOES_NOT_EXIST:
		if (n_values != 0)
			return json_in_fail_at(&d->in, "values", -EINVAL, "must be empty for "
				       "operator %.*s", (int)op_len, op);
		break;
	case SEL_GT:
	case SEL_LT:
		if (n_values != 1)
			return json_in_fail_at(&d->in, "values", -EINVAL, "%zu values, operator "
				       "%.*s takes exactly one", n_values, (int)op_len, op);
		break;
	}
	size_t mark = json_in_field(&d->in, "key");
	/* ValidateNodeSelectorRequirement: ValidateLabelName on the key. */
	rc = field ? 0 : check_label_key(d, key, key_len);
	if (rc == 0)
		rc = kj_intern_here(d, key, key_len, &e->key);
	json_in_pop(&d->in, mark);
	if (rc < 0)
		return rc;
	e->field = field ? 1 : 0;
	e->first_value = p->n_values;
	e->n_values = (uint16_t)n_values;
	if (n_values > (size_t)(POD_MAX_VALUES - p->n_values))
		return json_in_fail_at(&d->in, "values", -ENOSPC, "more than %d node selector values "
			       "in the pod (POD_MAX_VALUES)", POD_MAX_VALUES);
	size_t outer = json_in_field(&d->in, "values");
	json_array_foreach(values, i, val) {
		size_t m = json_in_index(&d->in, i);
		uint32_t *id = &p->values[p->n_values];
		rc = kj_string_here(d, val, id);
		bool bad = false;
		if (rc == 0 && !field)
			bad = !label_value_ok(json_string_value(val),
					      json_string_length(val));
		if (rc == 0 && (e->op == SEL_GT || e->op == SEL_LT) &&
		    !intern_int(d->ctx->strings, *id, &e->number))
			bad = true;
		if (bad && preferred && !d->ctx->cluster_file)
			rc = json_in_fail(&d->in, -EINVAL, "%s does not parse as a requirement's "
				  "value (%s); kube-scheduler's NodeAffinity "
				  "PreScore fails on such a preferred term",
				  json_in_show(val, q, sizeof(q)),
				  e->op == SEL_GT || e->op == SEL_LT ?
				  "an integer that is a valid label value" :
				  "a valid label value");
		if (bad) {
			e->invalid = 1;
			e->number = 0;
		}
		json_in_pop(&d->in, m);
		if (rc < 0)
			break;
		p->n_values++;
	}
	json_in_pop(&d->in, outer);
	if (rc == 0)
		p->n_exprs++;
	return rc;
}

/* A NodeSelectorTerm: its requirements appended to the pod's pool. */
static int sel_term(struct decoder *d, const json_t *t, struct sel_term *out,
		    bool preferred)
{
	struct pod_spec *p = &d->pod;
	static const char *const lists[] = {"matchExpressions", "matchFields"};
	int rc = json_in_check(&d->in, t, JSON_IN_OBJECT);
	out->first_expr = p->n_exprs;
	for (int l = 0; l < 2 && rc == 0; l++) {
		json_t *list, *r;
		size_t i;
		rc = json_in_get(&d->in, t, lists[l], JSON_IN_ARRAY, &list);
		if (rc < 0 || list == NULL)
			continue;
		size_t outer = json_in_field(&d->in, lists[l]);
		json_array_foreach(list, i, r) {
			size_t mark = json_in_index(&d->in, i);
			rc = sel_requirement(d, r, l == 1, preferred);
			json_in_pop(&d->in, mark);
			if (rc < 0)
				break;
		}
		json_in_pop(&d->in, outer);
	}
	out->n_exprs = (uint16_t)(p->n_exprs - out->first_expr);
	return rc;
}

int kj_node_affinity(struct decoder *d, const json_t *na)
{
	struct pod_spec *p = &d->pod;
	json_t *req, *terms, *prefs, *t;
	size_t i;
	int rc = json_in_get(&d->in, na, "requiredDuringSchedulingIgnoredDuringExecution",
		     JSON_IN_OBJECT, &req);
	if (rc < 0)
		return rc;
	if (req != NULL) {
		size_t outer = json_in_field(&d->in, "requiredDuringSchedulingIgnoredDuringExecution");
		p->has_required = true;
		rc = json_in_get(&d->in, req, "nodeSelectorTerms", JSON_IN_ARRAY, &terms);
		if (rc == 0 && terms != NULL) {
			size_t m = json_in_field(&d->in, "nodeSelectorTerms");
			if (json_array_size(terms) > POD_MAX_TERMS)
				rc = json_in_fail(&d->in, -ENOSPC, "%zu terms, at most %d "
					  "(POD_MAX_TERMS)", json_array_size(terms),
					  POD_MAX_TERMS);
			json_array_foreach(terms, i, t) {
				if (rc < 0)
					break;
				size_t mark = json_in_index(&d->in, i);
				rc = sel_term(d, t, &p->terms[i], false);
				json_in_pop(&d->in, mark);
				if (rc == 0)
					p->n_terms++;
			}
			json_in_pop(&d->in, m);
		}
		json_in_pop(&d->in, outer);
		if (rc < 0)
			return rc;
	}
	rc = json_in_get(&d->in, na, "preferredDuringSchedulingIgnoredDuringExecution", JSON_IN_ARRAY,
		 &prefs);
	if (rc < 0 || prefs == NULL)
		return rc;
	size_t outer = json_in_field(&d->in, "preferredDuringSchedulingIgnoredDuringExecution");
	if (json_array_size(prefs) > POD_MAX_PREFERRED)
		rc = json_in_fail(&d->in, -ENOSPC, "%zu terms, at most %d (POD_MAX_PREFERRED)",
			  json_array_size(prefs), POD_MAX_PREFERRED);
	json_array_foreach(prefs, i, t) {
		if (rc < 0)
			break;
		size_t mark = json_in_index(&d->in, i);
		json_t *w, *pref;
		struct pref_term *pt = &p->preferred[i];
		rc = json_in_check(&d->in, t, JSON_IN_OBJECT);
		if (rc == 0)
			rc = json_in_get(&d->in, t, "weight", JSON_IN_INT, &w);
		if (rc == 0 && (w == NULL || json_integer_value(w) < 1 ||
				json_integer_value(w) > 100)) {
			size_t m = json_in_field(&d->in, "weight");
			if (w == NULL)
				rc = json_in_fail(&d->in, -EINVAL, "missing (1..100)");
			else
				rc = json_in_fail(&d->in, -EINVAL, "%" JSON_INTEGER_FORMAT
					  " is not in 1..100", json_integer_value(w));
			json_in_pop(&d->in, m);
		}
		if (rc == 0)
			rc = json_in_get(&d->in, t, "preference", JSON_IN_OBJECT, &pref);
		if (rc == 0) {
			pt->weight = (int32_t)json_integer_value(w);
			pt->term.first_expr = p->n_exprs;
			if (pref != NULL) {
				size_t m = json_in_field(&d->in, "preference");
				rc = sel_term(d, pref, &pt->term, true);
				json_in_pop(&d->in, m);
			}
		}
		json_in_pop(&d->in, mark);
		if (rc == 0)
			p->n_preferred++;
	}
	json_in_pop(&d->in, outer);
	return rc;
}

/* --- pod groups (shm/pod_group.h) ------------------------------------------ */

int kj_group_req_add(struct decoder *d, uint32_t key, uint8_t op,
			 const uint32_t *values, size_t n_values,
			 struct group_selector *sel)
{
	struct pod_group *g = &d->group;
	/* The objects pass parses a controller's selector into the same pool
	 * (then copies it out), under the objects' own limits. */
	if (d->objects_pass && g->n_reqs >= OBJECT_MAX_REQS)
		return json_in_fail(&d->in, -ENOSPC, "more than %d label selector requirements "
			    "(OBJECT_MAX_REQS)", OBJECT_MAX_REQS);
	if (d->objects_pass && n_values > (size_t)(OBJECT_MAX_VALUES - g->n_values))
		return json_in_fail(&d->in, -ENOSPC, "more than %d label selector values "
			    "(OBJECT_MAX_VALUES)", OBJECT_MAX_VALUES);
	if (g->n_reqs >= GROUP_MAX_REQS)
		return json_in_fail(&d->in, -ENOSPC, "more than %d label selector requirements in "
			    "the pod's terms and constraints (GROUP_MAX_REQS)",
			    GROUP_MAX_REQS);
	if (n_values > (size_t)(GROUP_MAX_VALUES - g->n_values))
		return json_in_fail(&d->in, -ENOSPC, "more than %d label selector values in the "
			    "pod's terms and constraints (GROUP_MAX_VALUES)",
			    GROUP_MAX_VALUES);
	g->reqs[g->n_reqs++] = (struct group_req){
		.key = key, .op = op, .first_value = g->n_values,
		.n_values = (uint16_t)n_values};
	if (n_values > 0) /* an Exists requirement may pass no array */
		memcpy(&g->values[g->n_values], values, n_values * sizeof(*values));
	g->n_values = (uint16_t)(g->n_values + n_values);
	sel->n_reqs++;
	return 0;
}

/* A label value as a selector may name it (validation.IsValidLabelValue):
 * at most 63 bytes, empty or alphanumerics, '-', '_' and '.', starting and
 * ending with an alphanumeric. kube-scheduler turns every selector value
 * into a labels.Requirement, which checks this and refuses the pod at
 * PreFilter (UnschedulableAndUnresolvable); kube-apiserver refuses such a
 * pod already. A pod to place is refused here, naming the value; a cluster
 * file's pod is counted whatever it carries (kube-apiserver lets pods made
 * before the check keep such values). */
static int check_label_value(struct decoder *d, const char *s, size_t len)
{
	if (d->ctx->cluster_file)
		return 0;
	return check_label_value_strict(d, s, len);
}

/* One LabelSelectorRequirement (In, NotIn, Exists, DoesNotExist), validated
 * as ValidateLabelSelectorRequirement does. */
static int label_requirement(struct decoder *d, const json_t *r,
			     struct group_selector *sel)
{
	const char *key = "", *op = "";
	size_t key_len = 0, op_len = 0, i;
	json_t *values = NULL, *val;
	uint8_t code;
	uint32_t ids[GROUP_MAX_VALUES];
	char q[JSON_IN_SHOW_MAX + 16];
	int rc = requirement_members(d, r, &key, &key_len, &op, &op_len, &values);
	if (rc < 0)
		return rc;
	size_t n_values = values != NULL ? json_array_size(values) : 0;
	if (key_len == 0)
		return json_in_fail_at(&d->in, "key", -EINVAL, "missing");
	if (sel_operator(op, op_len, &code) < 0 || code == SEL_GT || code == SEL_LT)
		return json_in_fail_at(&d->in, "operator", -EINVAL, "%s is not In, NotIn, Exists "
			       "or DoesNotExist", json_in_show_str(op, op_len, q, sizeof(q)));
	bool with_values = code == SEL_IN || code == SEL_NOT_IN;
	if (with_values && n_values == 0)
		return json_in_fail_at(&d->in, "values", -EINVAL, "must not be empty for operator "
			       "%.*s", (int)op_len, op);
	if (!with_values && n_values != 0)
		return json_in_fail_at(&d->in, "values", -EINVAL, "must be empty for operator "
			       "%.*s", (int)op_len, op);
	if (n_values > GROUP_MAX_VALUES || (d->objects_pass && n_values > OBJECT_MAX_VALUES))
		return json_in_fail_at(&d->in, "values", -ENOSPC, "%zu values, at most %d (%s)",
			       n_values, d->objects_pass ? OBJECT_MAX_VALUES : GROUP_MAX_VALUES,
			       d->objects_pass ? "OBJECT_MAX_VALUES" : "GROUP_MAX_VALUES");
	uint32_t key_id;
	size_t mark = json_in_field(&d->in, "key");
	rc = check_label_key(d, key, key_len); /* ValidateLabelName */
	if (rc == 0)
		rc = kj_intern_here(d, key, key_len, &key_id);
	json_in_pop(&d->in, mark);
	size_t outer = json_in_field(&d->in, "values");
	json_array_foreach(values, i, val) {
		if (rc < 0)
			break;
		size_t m = json_in_index(&d->in, i);
		rc = kj_string_here(d, val, &ids[i]);
		if (rc == 0)
			rc = check_label_value(d, json_string_value(val),
					       json_string_length(val));
		json_in_pop(&d->in, m);
	}
	json_in_pop(&d->in, outer);
	return rc < 0 ? rc : kj_group_req_add(d, key_id, code, ids, n_values, sel);
}

/* A metav1.LabelSelector at member `key` (absent: nil, matches nothing),
 * its requirements appended to the group's pool. */
int kj_label_selector(struct decoder *d, const json_t *obj, const char *key,
			  struct group_selector *sel)
{
	json_t *ls, *exprs, *e;
	size_t i;
	*sel = (struct group_selector){.first_req = d->group.n_reqs};
	int rc = json_in_get(&d->in, obj, key, JSON_IN_OBJECT, &ls);
	if (rc < 0 || ls == NULL) {
		sel->first_req = 0;
		return rc;
	}
	sel->present = true;
	size_t outer = json_in_field(&d->in, key);
	struct label ml[GROUP_MAX_REQS];
	size_t n_ml;
	rc = kj_label_map(d, ls, "matchLabels", ml, GROUP_MAX_REQS, &n_ml, true);
	for (size_t k = 0; rc == 0 && k < n_ml; k++) {
		size_t m = json_in_field(&d->in, "matchLabels");
		/* kj_label_map() has checked the key and the value. */
		json_in_pop(&d->in, m);
		rc = kj_group_req_add(d, ml[k].key, SEL_IN, &ml[k].value, 1, sel);
	}
	if (rc == 0)
		rc = json_in_get(&d->in, ls, "matchExpressions", JSON_IN_ARRAY, &exprs);
	if (rc == 0 && exprs != NULL) {
		size_t mark = json_in_field(&d->in, "matchExpressions");
		json_array_foreach(exprs, i, e) {
			size_t m = json_in_index(&d->in, i);
			rc = label_requirement(d, e, sel);
			json_in_pop(&d->in, m);
			if (rc < 0)
				break;
		}
		json_in_pop(&d->in, mark);
	}
	json_in_pop(&d->in, outer);
	return rc;
}

/* matchLabelKeys / mismatchLabelKeys at member `key`: `k In (the pod's
 * value)` (or NotIn) for each key the pod has a label for, merged into the
 * selector as kube-apiserver and kube-scheduler merge them. */
int kj_merge_label_keys(struct decoder *d, const json_t *obj, const char *key,
			    uint8_t op, struct group_selector *sel)
{
	json_t *keys, *k;
	size_t i;
	int rc = json_in_get(&d->in, obj, key, JSON_IN_ARRAY, &keys);
	if (rc < 0 || keys == NULL || json_array_size(keys) == 0)
		return rc;
	size_t outer = json_in_field(&d->in, key);
	if (!sel->present)
		rc = json_in_fail(&d->in, -EINVAL, "needs a labelSelector");
	json_array_foreach(keys, i, k) {
		if (rc < 0)
			break;
		size_t m = json_in_index(&d->in, i);
		uint32_t id, value;
		rc = json_in_check(&d->in, k, JSON_IN_STRING);
		if (rc == 0 && json_string_length(k) == 0)
			rc = json_in_fail(&d->in, -EINVAL, "an empty key");
		if (rc == 0)
			rc = kj_intern_here(d, json_string_value(k), json_string_length(k),
					 &id);
		if (rc == 0 && labels_get(d->group.labels, d->group.n_labels, id, &value))
			rc = kj_group_req_add(d, id, op, &value, 1, sel);
		json_in_pop(&d->in, m);
	}
	json_in_pop(&d->in, outer);
	return rc;
}
