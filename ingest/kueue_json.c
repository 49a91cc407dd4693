/* Kueue's ResourceFlavors, Cohorts, ClusterQueues and LocalQueues into a
 * sealed quota tree: see kueue_json.h.
 *
 * Field names and rules are Kueue's own (kubernetes-sigs/kueue):
 * the _types.go files of apis/kueue/v1beta1/ and apis/kueue/v1beta2/ for
 * the fields, their enums and defaults; pkg/webhooks/clusterqueue_webhook.go
 * (validateResourceGroups, validateFlavorQuotas, validateLimit,
 * validateLendingLimit, validatePreemption, validateFlavorFungibility)
 * and pkg/webhooks/common.go (validateFairSharing) for what the API server
 * refuses. The two versions differ here in: ClusterQueue .spec.cohort
 * (v1beta1) against .spec.cohortName (v1beta2); .spec.admissionChecks
 * (v1beta1 only) and .spec.concurrentAdmissionPolicy (v1beta2 only); and
 * flavorFungibility's deprecated aliases Borrow and Preempt (v1beta1
 * only). A Cohort's parent is .spec.parentName in both (v1alpha1's
 * .spec.parent, renamed by kubernetes-sigs/kueue#5595, is refused with a
 * hint, as is that version).
 *
 * Order: objects are kept (a reference to each jansson tree) as they are
 * added and decoded at the seal in three passes, ResourceFlavors, then
 * Cohorts and ClusterQueues, then LocalQueues, so that a file may name a
 * flavor or a ClusterQueue before it defines it, as kubectl's output of
 * several kinds does.
 *
 * Lines: jansson keeps no positions, so each object remembers where its
 * top JSON value began in the buffer and the path to it (an array index,
 * items[j]); the decoder keeps the path of keys and indices it is at, next
 * to json_in's printed one, and an error walks the text along that path
 * (a small scanner over JSON that jansson already accepted, without
 * recursion) to the value's line. Only errors pay for it.
 *
 * Bounds: the buffer (KUEUE_FILE_MAX), jansson's nesting limit, the
 * objects kept (KUEUE_MAX_OBJECTS), resourceGroups (16, Kueue's MaxItems),
 * resources and flavors (the quota tree's 16), names (253), label values
 * (63); messages quote values cut at JSON_IN_SHOW_MAX bytes.
 *
 * Cost: linear in the input, plus the tree's own building costs.
 */
#include "ingest/kueue_json.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "ingest/quantity.h"

enum kq_kind { KQ_FLAVOR, KQ_COHORT, KQ_CLUSTER_QUEUE, KQ_LOCAL_QUEUE };

static const char *const kind_names[] = {"ResourceFlavor", "Cohort",
					 "ClusterQueue", "LocalQueue"};

/* One step of a path: a member's key or an array index. */
struct kq_comp {
	const char *key; /* NULL: index */
	size_t key_len;
	size_t index;
};

#define KQ_PREFIX_MAX 3 /* [i] of a top array, then items[j] of a List */
#define KQ_COMPS_MAX 24 /* the deepest field read is 8 steps down */

struct kq_obj {
	json_t *obj;  /* a reference */
	size_t base;  /* offset of its top value in the buffer */
	unsigned n_prefix;
	struct kq_comp prefix[KQ_PREFIX_MAX];
	enum kq_kind kind;
	int version; /* 1: v1beta1, 2: v1beta2 */
};

struct kueue_reader {
	const char *source;
	const char *buf; /* NULL: no lines */
	size_t len;
	struct kq_obj *objs;
	size_t n_objs, cap_objs;
	/* While decoding. */
	struct json_in in;
	struct kq_comp comps[KQ_COMPS_MAX];
	unsigned n_comps;
	const struct kq_obj *cur;
	struct quota_tree *t;
	char qerr[512];
};

/* --- where a value begins in the text ------------------------------------ */

static size_t sc_ws(const char *b, size_t n, size_t p)
{
	while (p < n && (b[p] == ' ' || b[p] == '\t' || b[p] == '\n' || b[p] == '\r'))
		p++;
	return p;
}

/* p at '"': past the closing quote. */
static size_t sc_string(const char *b, size_t n, size_t p)
{
	for (p++; p < n; p++) {
		if (b[p] == '\\')
			p++;
		else if (b[p] == '"')
			return p + 1;
	}
	return n;
}

/* Past one value at p (no recursion: depth counted). */
static size_t sc_value(const char *b, size_t n, size_t p)
{
	size_t depth = 0;
	while (p < n) {
		char c = b[p];
		if (c == '"') {
			p = sc_string(b, n, p);
		} else if (c == '{' || c == '[') {
			depth++;
			p++;
		} else if (c == '}' || c == ']') {
			if (depth == 0)
				return p;
			depth--;
			p++;
		} else if (depth == 0 && (c == ',' || c == ' ' || c == '\t' ||
					  c == '\n' || c == '\r')) {
			return p;
		} else {
			p++;
		}
		if (depth == 0 && (c == '"' || c == '}' || c == ']'))
			return p;
	}
	return p;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static bool sc_hex4(const char *b, size_t n, size_t p, unsigned *out)
{
	unsigned v = 0;
	if (p + 4 > n)
		return false;
	for (int i = 0; i < 4; i++) {
		int h = hexval(b[p + (size_t)i]);
		if (h < 0)
			return false;
		v = v << 4 | (unsigned)h;
	}
	*out = v;
	return true;
}

/* Appends code point cp as UTF-8 to dec (room checked by the caller). */
static size_t utf8_put(char *dec, size_t k, unsigned cp)
{
	if (cp < 0x80) {
		dec[k++] = (char)cp;
	} else if (cp < 0x800) {
		dec[k++] = (char)(0xc0 | cp >> 6);
		dec[k++] = (char)(0x80 | (cp & 0x3f));
	} else if (cp < 0x10000) {
		dec[k++] = (char)(0xe0 | cp >> 12);
		dec[k++] = (char)(0x80 | ((cp >> 6) & 0x3f));
		dec[k++] = (char)(0x80 | (cp & 0x3f));
	} else {
		dec[k++] = (char)(0xf0 | cp >> 18);
		dec[k++] = (char)(0x80 | ((cp >> 12) & 0x3f));
		dec[k++] = (char)(0x80 | ((cp >> 6) & 0x3f));
		dec[k++] = (char)(0x80 | (cp & 0x3f));
	}
	return k;
}

/* Whether the JSON string at p ('"') decodes to key[0 .. key_len). A key
 * longer than any read here does not match. */
static bool sc_key_is(const char *b, size_t n, size_t p, const char *key,
		      size_t key_len)
{
	char dec[QUOTA_LABEL_KEY_MAX + 64];
	size_t k = 0;
	for (p++; p < n && b[p] != '"'; p++) {
		if (k + 4 > sizeof(dec))
			return false;
		if (b[p] != '\\') {
			dec[k++] = b[p];
			continue;
		}
		if (++p >= n)
			return false;
		unsigned cp;
		switch (b[p]) {
		case 'b': cp = '\b'; break;
		case 'f': cp = '\f'; break;
		case 'n': cp = '\n'; break;
		case 'r': cp = '\r'; break;
		case 't': cp = '\t'; break;
		case 'u':
			if (!sc_hex4(b, n, p + 1, &cp))
				return false;
			p += 4;
			if (cp >= 0xd800 && cp < 0xdc00 && p + 6 < n &&
			    b[p + 1] == '\\' && b[p + 2] == 'u') {
				unsigned lo;
				if (sc_hex4(b, n, p + 3, &lo) && lo >= 0xdc00 &&
				    lo < 0xe000) {
					cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
					p += 6;
				}
			}
			break;
		default: cp = (unsigned char)b[p]; break; /* " \\ / */
		}
		k = utf8_put(dec, k, cp);
	}
	return k == key_len && memcmp(dec, key, k) == 0;
}

/* From the value at p, one step down (a member or an element); stays at p
 * when the text is not as expected. */
static size_t sc_step(const char *b, size_t n, size_t p, const struct kq_comp *c)
{
	p = sc_ws(b, n, p);
	if (p >= n)
		return p;
	if (c->key != NULL) {
		if (b[p] != '{')
			return p;
		size_t q = p + 1;
		for (;;) {
			q = sc_ws(b, n, q);
			if (q >= n || b[q] != '"')
				return p;
			bool match = sc_key_is(b, n, q, c->key, c->key_len);
			q = sc_ws(b, n, sc_string(b, n, q));
			if (q >= n || b[q] != ':')
				return p;
			q = sc_ws(b, n, q + 1);
			if (match)
				return q;
			q = sc_ws(b, n, sc_value(b, n, q));
			if (q >= n || b[q] != ',')
				return p;
			q++;
		}
	}
	if (b[p] != '[')
		return p;
	size_t q = p + 1;
	for (size_t i = 0; i < c->index; i++) {
		q = sc_ws(b, n, sc_value(b, n, sc_ws(b, n, q)));
		if (q >= n || b[q] != ',')
			return p;
		q++;
	}
	return sc_ws(b, n, q);
}

/* The line of the value at the current path (0: unknown). */
static unsigned kq_line(const struct kueue_reader *r)
{
	if (r->buf == NULL || r->cur == NULL || r->cur->base >= r->len)
		return 0;
	size_t p = r->cur->base;
	for (unsigned i = 0; i < r->cur->n_prefix; i++)
		p = sc_step(r->buf, r->len, p, &r->cur->prefix[i]);
	for (unsigned i = 0; i < r->n_comps; i++)
		p = sc_step(r->buf, r->len, p, &r->comps[i]);
	unsigned line = 1;
	for (const char *s = r->buf, *e = r->buf + p;
	     (s = memchr(s, '\n', (size_t)(e - s))) != NULL; s++)
		line++;
	return line;
}

/* --- the path, messages, typed access ------------------------------------ */

struct kq_mark {
	size_t in;
	unsigned n;
};

static struct kq_mark kq_field(struct kueue_reader *r, const char *name)
{
	struct kq_mark m = {json_in_field(&r->in, name), r->n_comps};
	if (r->n_comps < KQ_COMPS_MAX)
		r->comps[r->n_comps++] = (struct kq_comp){name, strlen(name), 0};
	return m;
}

static struct kq_mark kq_index(struct kueue_reader *r, size_t i)
{
	struct kq_mark m = {json_in_index(&r->in, i), r->n_comps};
	if (r->n_comps < KQ_COMPS_MAX)
		r->comps[r->n_comps++] = (struct kq_comp){NULL, 0, i};
	return m;
}

static void kq_pop(struct kueue_reader *r, struct kq_mark m)
{
	json_in_pop(&r->in, m.in);
	r->n_comps = m.n;
}

__attribute__((format(printf, 3, 4)))
static int kq_fail(struct kueue_reader *r, int rc, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	r->in.line = kq_line(r);
	json_in_fail(&r->in, rc, "%s", msg);
	r->in.line = 0;
	return rc;
}

/* kq_fail() at member `field` below the current path. */
__attribute__((format(printf, 4, 5)))
static int kq_fail_at(struct kueue_reader *r, const char *field, int rc,
		      const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	struct kq_mark m = kq_field(r, field);
	kq_fail(r, rc, "%s", msg);
	kq_pop(r, m);
	return rc;
}

/* kq_fail() at the object's metadata.name, wherever the decoder is (a
 * name the tree refuses: twice, too many). */
static int kq_fail_name(struct kueue_reader *r, int rc, const char *msg)
{
	struct json_in saved = r->in;
	struct kq_comp comps[KQ_COMPS_MAX];
	unsigned n = r->n_comps;
	memcpy(comps, r->comps, sizeof(comps));
	json_in_pop(&r->in, 0);
	r->n_comps = 0;
	struct kq_mark m = kq_field(r, "metadata");
	kq_fail_at(r, "name", rc, "%s", msg);
	kq_pop(r, m);
	memcpy(r->in.path, saved.path, sizeof(saved.path));
	r->in.path_len = saved.path_len;
	memcpy(r->comps, comps, sizeof(comps));
	r->n_comps = n;
	return rc;
}

static const char *show(const json_t *v, char *buf, size_t len)
{
	return json_in_show(v, buf, len);
}

/* Member `key` as `w`; *out NULL when absent or null. */
static int kq_get(struct kueue_reader *r, const json_t *obj, const char *key,
		  enum json_in_want w, json_t **out)
{
	json_t *v = json_object_get(obj, key);
	*out = NULL;
	if (v == NULL || json_is_null(v))
		return 0;
	if (!json_in_is(v, w))
		return kq_fail_at(r, key, -EINVAL, "expected %s, got %s",
				  json_in_want_text(w), json_in_kind(v));
	*out = v;
	return 0;
}

/* A string member; "" when absent or null. */
static int kq_get_str(struct kueue_reader *r, const json_t *obj,
		      const char *key, const char **s, size_t *len)
{
	json_t *v;
	int rc = kq_get(r, obj, key, JSON_IN_STRING, &v);
	*s = v != NULL ? json_string_value(v) : "";
	*len = v != NULL ? json_string_length(v) : 0;
	return rc;
}

/* Present: not absent, not null, not an empty array. */
static bool present(const json_t *v)
{
	return v != NULL && !json_is_null(v) &&
	       !(json_is_array(v) && json_array_size(v) == 0);
}

static bool in_list(const char *key, const char *const *known)
{
	for (; *known != NULL; known++)
		if (strcmp(key, *known) == 0)
			return true;
	return false;
}

/* Every member of `obj` is in `known`, else the first other one is
 * refused as unknown. `what` names the type, for the message. */
static int kq_known(struct kueue_reader *r, const json_t *obj,
		    const char *const *known, const char *what)
{
	const char *key;
	json_t *v;
	json_object_foreach((json_t *)obj, key, v) {
		if (!in_list(key, known))
			return kq_fail_at(r, key, -EINVAL, "unknown field: %s in "
					  KUEUE_GROUP "/v1beta%d has no such field",
					  what, r->cur != NULL ? r->cur->version : 2);
	}
	return 0;
}

/* A field Kueue has that shmsched does not act on: refused if present. */
static int kq_unsupported(struct kueue_reader *r, const json_t *obj,
			  const char *key, const char *why)
{
	if (!present(json_object_get(obj, key)))
		return 0;
	return kq_fail_at(r, key, -EINVAL, "not supported yet%s%s", why ? ": " : "",
			  why ? why : "");
}

/* --- names and labels (k8s.io/apimachinery/pkg/util/validation) --------- */

static bool is_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

static bool is_lower_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

/* IsDNS1123Label when max is 63, IsDNS1123Subdomain when 253 (Kueue's
 * ClusterQueueReference, CohortReference, ResourceFlavorReference and
 * LocalQueueName: MaxLength=253 and the subdomain pattern). */
static bool dns_name(const char *s, size_t len, size_t max, bool dots)
{
	if (len == 0 || len > max)
		return false;
	size_t start = 0;
	for (size_t i = 0; i <= len; i++) {
		if (i < len && !(dots && s[i] == '.')) {
			if (!is_lower_alnum(s[i]) && s[i] != '-')
				return false;
			continue;
		}
		if (i == start || s[start] == '-' || s[i - 1] == '-')
			return false;
		start = i + 1;
	}
	return true;
}

/* A qualified name's name part, or a non-empty label value. */
static bool qualified_part(const char *s, size_t len)
{
	if (len == 0 || len > 63 || !is_alnum(s[0]) || !is_alnum(s[len - 1]))
		return false;
	for (size_t i = 0; i < len; i++)
		if (!is_alnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
			return false;
	return true;
}

/* IsQualifiedName: [prefix/]name (label keys, resource names). */
static bool qualified_name(const char *s, size_t len)
{
	const char *slash = memchr(s, '/', len);
	if (slash == NULL)
		return qualified_part(s, len);
	size_t p = (size_t)(slash - s);
	return dns_name(s, p, 253, true) &&
	       qualified_part(slash + 1, len - p - 1);
}

/* A name at member `key` of `obj`, checked as a DNS subdomain (253) or
 * label (63). `required`: "" refused. */
static int kq_name(struct kueue_reader *r, const json_t *obj, const char *key,
		   size_t max, bool required, const char **out)
{
	size_t len;
	char q[JSON_IN_SHOW_MAX + 16];
	int rc = kq_get_str(r, obj, key, out, &len);
	if (rc < 0)
		return rc;
	if (len == 0) {
		if (required)
			return kq_fail_at(r, key, -EINVAL, "missing: a name is required");
		return 0;
	}
	if (!dns_name(*out, len, max, max > 63))
		return kq_fail_at(r, key, -EINVAL, "%s (%zu bytes) is not a %s (at most "
				  "%zu bytes: lowercase alphanumerics and '-'%s, "
				  "starting and ending with an alphanumeric)",
				  json_in_show_str(*out, len, q, sizeof(q)), len,
				  max > 63 ? "DNS-1123 subdomain" : "DNS-1123 label",
				  max, max > 63 ? ", dot-separated parts each" : "");
	return 0;
}

/* --- quantities ----------------------------------------------------------- */

/* The value at the current path as a quantity (Quantity.UnmarshalJSON: a
 * string, or a bare JSON integer). */
static int kq_quantity_here(struct kueue_reader *r, const json_t *v,
			    enum quantity_unit unit, int64_t *out)
{
	char num[48], q[JSON_IN_SHOW_MAX + 16];
	const char *s;
	size_t len;
	if (json_is_string(v)) {
		s = json_string_value(v);
		len = json_string_length(v);
		while (len > 0 && s[0] == ' ') {
			s++;
			len--;
		}
		while (len > 0 && s[len - 1] == ' ')
			len--;
	} else if (json_is_integer(v)) {
		snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		s = num;
		len = strlen(num);
	} else {
		return kq_fail(r, -EINVAL, "expected a quantity (a string), got %s",
			       json_in_kind(v));
	}
	int rc = quantity_parse(s, len, unit, out);
	if (rc == 0)
		return 0;
	if (rc == -ERANGE)
		return kq_fail(r, -EINVAL, "%s is too large (%s must fit in 64 bits)",
			       show(v, q, sizeof(q)),
			       unit == QUANTITY_MILLI ? "thousandths" : "the value");
	if (rc == -EDOM)
		return kq_fail(r, -EINVAL, "%s is negative: a quantity here must be >= 0",
			       show(v, q, sizeof(q)));
	return kq_fail(r, -EINVAL, "%s is not a quantity (\"500m\", \"2\", \"4Gi\")",
		       show(v, q, sizeof(q)));
}

/* .fairSharing at member "fairSharing" of `spec`: the weight in
 * thousandths (rounded up), QUOTA_WEIGHT_DEFAULT_MILLI when absent
 * (fairsharing_types.go: +kubebuilder:default=1). */
static int kq_fair_sharing(struct kueue_reader *r, const json_t *spec,
			   int64_t *weight)
{
	static const char *const known[] = {"weight", NULL};
	json_t *fs, *w;
	*weight = QUOTA_WEIGHT_DEFAULT_MILLI;
	int rc = kq_get(r, spec, "fairSharing", JSON_IN_OBJECT, &fs);
	if (rc < 0 || fs == NULL)
		return rc;
	struct kq_mark m = kq_field(r, "fairSharing");
	rc = kq_known(r, fs, known, "FairSharing");
	w = json_object_get(fs, "weight");
	if (rc == 0 && w != NULL && !json_is_null(w)) {
		struct kq_mark mw = kq_field(r, "weight");
		rc = kq_quantity_here(r, w, QUANTITY_MILLI, weight);
		if (rc == 0 && *weight > QUOTA_WEIGHT_MAX_MILLI)
			rc = kq_fail(r, -EINVAL, "%lld/1000 is more than the %lld/1000 "
				     "shmsched holds", (long long)*weight,
				     (long long)QUOTA_WEIGHT_MAX_MILLI);
		kq_pop(r, mw);
	}
	kq_pop(r, m);
	return rc;
}

/* --- metadata ------------------------------------------------------------- */

/* .metadata: the name (and for a LocalQueue the namespace, "default" when
 * absent); the bookkeeping kubectl prints is passed over, anything else
 * refused. Sets the subject of messages. */
static int kq_metadata(struct kueue_reader *r, const json_t *obj,
		       const char **name, const char **ns)
{
	static const char *const known[] = {
		"name", "namespace", "uid", "resourceVersion", "creationTimestamp",
		"generation", "managedFields", "labels", "annotations", "finalizers",
		NULL};
	const char *kind = kind_names[r->cur->kind];
	bool namespaced = r->cur->kind == KQ_LOCAL_QUEUE;
	json_t *meta;
	*name = "";
	*ns = "";
	int rc = kq_get(r, obj, "metadata", JSON_IN_OBJECT, &meta);
	if (rc < 0)
		return rc;
	if (meta == NULL)
		return kq_fail_at(r, "metadata", -EINVAL, "missing: a %s needs "
				  "metadata.name", kind);
	struct kq_mark m = kq_field(r, "metadata");
	rc = kq_name(r, meta, "name", QUOTA_NAME_MAX, true, name);
	if (rc == 0)
		snprintf(r->in.subject, sizeof(r->in.subject), "%s %s", kind, *name);
	if (rc == 0 && namespaced) {
		rc = kq_name(r, meta, "namespace", QUOTA_NAMESPACE_MAX, false, ns);
		if (rc == 0 && (*ns)[0] == '\0')
			*ns = "default";
	} else if (rc == 0) {
		const char *s;
		size_t len;
		rc = kq_get_str(r, meta, "namespace", &s, &len);
		if (rc == 0 && len > 0)
			rc = kq_fail_at(r, "namespace", -EINVAL, "a %s is cluster-scoped: "
					"it has no namespace", kind);
	}
	if (rc == 0)
		rc = kq_known(r, meta, known, "ObjectMeta (of what shmsched reads)");
	kq_pop(r, m);
	if (rc == 0 && namespaced)
		snprintf(r->in.subject, sizeof(r->in.subject), "%s %s/%s", kind, *ns,
			 *name);
	return rc;
}

/* --- ResourceFlavor -------------------------------------------------------- */

/* resourceflavor_types.go: spec.nodeLabels (MaxProperties=8), nodeTaints,
 * tolerations, topologyName. */
static int kq_flavor(struct kueue_reader *r, const json_t *spec, int flavor)
{
	static const char *const known[] = {"nodeLabels", "nodeTaints",
					    "tolerations", "topologyName", NULL};
	char q[JSON_IN_SHOW_MAX + 16];
	int rc = kq_known(r, spec, known, "ResourceFlavorSpec");
	if (rc == 0)
		rc = kq_unsupported(r, spec, "nodeTaints", "a flavor's taints");
	if (rc == 0)
		rc = kq_unsupported(r, spec, "tolerations", "a flavor's tolerations");
	if (rc == 0) {
		const json_t *tn = json_object_get(spec, "topologyName");
		if (tn != NULL && !json_is_null(tn))
			rc = kq_fail_at(r, "topologyName", -EINVAL, "not supported yet: "
					"topology-aware scheduling");
	}
	json_t *labels;
	if (rc == 0)
		rc = kq_get(r, spec, "nodeLabels", JSON_IN_OBJECT, &labels);
	if (rc < 0 || labels == NULL)
		return rc;
	struct kq_mark m = kq_field(r, "nodeLabels");
	const char *key;
	json_t *v;
	json_object_foreach(labels, key, v) {
		size_t klen = strlen(key);
		if (!qualified_name(key, klen)) {
			rc = kq_fail_at(r, key, -EINVAL, "label key %s is not a qualified "
					"name ([prefix/]name: the prefix a DNS-1123 "
					"subdomain, the name 1 to 63 alphanumerics, "
					"'-', '_' or '.', starting and ending with an "
					"alphanumeric)",
					json_in_show_str(key, klen, q, sizeof(q)));
			break;
		}
		struct kq_mark mk = kq_field(r, key);
		if (!json_is_string(v)) {
			rc = kq_fail(r, -EINVAL, "expected a string, got %s", json_in_kind(v));
		} else if (json_string_length(v) > 0 &&
			   !qualified_part(json_string_value(v), json_string_length(v))) {
			rc = kq_fail(r, -EINVAL, "%s is not a valid label value (at most 63 "
				     "alphanumerics, '-', '_' or '.', starting and "
				     "ending with an alphanumeric)", show(v, q, sizeof(q)));
		} else {
			rc = quota_flavor_label_add(r->t, flavor, key, json_string_value(v),
						    r->qerr, sizeof(r->qerr));
			if (rc < 0)
				rc = kq_fail(r, rc, "%s", r->qerr);
		}
		kq_pop(r, mk);
		if (rc < 0)
			break;
	}
	kq_pop(r, m);
	return rc;
}

/* --- resourceGroups (ClusterQueue and Cohort) ----------------------------- */

/* One resources[k] entry of a flavor: name must be coveredResources[k]. */
static int kq_resource_quota(struct kueue_reader *r, const json_t *rq, int node,
			     int flavor, int resource, bool has_parent,
			     bool is_cohort)
{
	static const char *const known[] = {"name", "nominalQuota",
					    "borrowingLimit", "lendingLimit", NULL};
	const char *rname = quota_resource_name(r->t, resource);
	enum quantity_unit unit = strcmp(rname, "cpu") == 0 ? QUANTITY_MILLI
							     : QUANTITY_UNITS;
	int64_t val[3] = {0, QUOTA_NO_LIMIT, QUOTA_NO_LIMIT};
	static const char *const fields[3] = {"nominalQuota", "borrowingLimit",
					      "lendingLimit"};
	const char *s = "";
	size_t len = 0;
	char q[JSON_IN_SHOW_MAX + 16];
	if (!json_is_object(rq))
		return kq_fail(r, -EINVAL, "expected an object, got %s", json_in_kind(rq));
	int rc = kq_known(r, rq, known, "ResourceQuota");
	if (rc == 0)
		rc = kq_get_str(r, rq, "name", &s, &len);
	if (rc < 0)
		return rc;
	if (strlen(rname) != len || memcmp(rname, s, len) != 0)
		return kq_fail_at(r, "name", -EINVAL, "%s: must match the name in "
				  "coveredResources at the same index (\"%s\")",
				  json_in_show_str(s, len, q, sizeof(q)), rname);
	for (int i = 0; i < 3; i++) {
		json_t *v = json_object_get(rq, fields[i]);
		if (v == NULL || json_is_null(v)) {
			if (i == 0)
				return kq_fail_at(r, fields[i], -EINVAL, "missing: "
						  "nominalQuota is required");
			continue;
		}
		struct kq_mark m = kq_field(r, fields[i]);
		rc = kq_quantity_here(r, v, unit, &val[i]);
		if (rc == 0 && i > 0 && !has_parent)
			rc = kq_fail(r, -EINVAL, "%s must be nil when %s is empty "
				     "(Kueue's validateLimit)", fields[i],
				     is_cohort ? "parentName" : "the cohort");
		if (rc == 0 && val[i] > QUOTA_QUANTITY_MAX)
			rc = kq_fail(r, -EINVAL, "%s is more than the %lld shmsched "
				     "holds", show(v, q, sizeof(q)),
				     (long long)QUOTA_QUANTITY_MAX);
		if (rc == 0 && i == 2 && !is_cohort && val[2] > val[0])
			rc = kq_fail(r, -EINVAL, "%s is more than nominalQuota: "
				     "lendingLimit must be less than or equal to "
				     "nominalQuota", show(v, q, sizeof(q)));
		kq_pop(r, m);
		if (rc < 0)
			return rc;
	}
	rc = quota_set(r->t, node, flavor, resource, val[0], val[1], val[2],
		       r->qerr, sizeof(r->qerr));
	return rc < 0 ? kq_fail(r, rc, "%s", r->qerr) : 0;
}

/* One flavors[j] of a group: its name (a ResourceFlavor of the file),
 * then exactly the group's covered resources, in order. */
static int kq_flavor_quotas(struct kueue_reader *r, const json_t *fq, int node,
			    const int *covered, size_t n_covered,
			    uint32_t *seen_flavors, bool has_parent,
			    bool is_cohort)
{
	static const char *const known[] = {"name", "resources", NULL};
	const char *name;
	char q[JSON_IN_SHOW_MAX + 16];
	json_t *res, *v;
	size_t k;
	if (!json_is_object(fq))
		return kq_fail(r, -EINVAL, "expected an object, got %s", json_in_kind(fq));
	int rc = kq_known(r, fq, known, "FlavorQuotas");
	if (rc == 0)
		rc = kq_name(r, fq, "name", QUOTA_NAME_MAX, true, &name);
	if (rc < 0)
		return rc;
	int flavor = quota_flavor_find(r->t, name);
	if (flavor < 0)
		return kq_fail_at(r, "name", -EINVAL, "%s: no ResourceFlavor of that "
				  "name in the file",
				  json_in_show_str(name, strlen(name), q, sizeof(q)));
	if (*seen_flavors & (UINT32_C(1) << flavor))
		return kq_fail_at(r, "name", -EINVAL, "Duplicate value %s: a flavor "
				  "may be in one resourceGroup, once",
				  json_in_show_str(name, strlen(name), q, sizeof(q)));
	*seen_flavors |= UINT32_C(1) << flavor;
	rc = kq_get(r, fq, "resources", JSON_IN_ARRAY, &res);
	if (rc < 0)
		return rc;
	size_t n = res != NULL ? json_array_size(res) : 0;
	if (n != n_covered)
		return kq_fail_at(r, "resources", -EINVAL, "%zu resources: flavors must "
				  "have the same number of resources as the "
				  "coveredResources (%zu)", n, n_covered);
	struct kq_mark m = kq_field(r, "resources");
	json_array_foreach(res, k, v) {
		struct kq_mark mi = kq_index(r, k);
		rc = kq_resource_quota(r, v, node, flavor, covered[k], has_parent,
				       is_cohort);
		kq_pop(r, mi);
		if (rc < 0)
			break;
	}
	kq_pop(r, m);
	return rc;
}

static int kq_group(struct kueue_reader *r, const json_t *g, int node,
		    uint32_t *seen_resources, uint32_t *seen_flavors,
		    bool has_parent, bool is_cohort)
{
	static const char *const known[] = {"coveredResources", "flavors", NULL};
	int covered[QUOTA_MAX_RESOURCES];
	char q[JSON_IN_SHOW_MAX + 16];
	json_t *cr, *fl, *v;
	size_t i;
	if (!json_is_object(g))
		return kq_fail(r, -EINVAL, "expected an object, got %s", json_in_kind(g));
	int rc = kq_known(r, g, known, "ResourceGroup");
	if (rc == 0)
		rc = kq_get(r, g, "coveredResources", JSON_IN_ARRAY, &cr);
	if (rc < 0)
		return rc;
	size_t n_cr = cr != NULL ? json_array_size(cr) : 0;
	if (n_cr == 0)
		return kq_fail_at(r, "coveredResources", -EINVAL, "missing: at least "
				  "one resource (MinItems=1)");
	if (n_cr > QUOTA_MAX_RESOURCES)
		return kq_fail_at(r, "coveredResources", -EINVAL, "%zu resources: not "
				  "supported yet: shmsched holds at most %d",
				  n_cr, QUOTA_MAX_RESOURCES);
	struct kq_mark m = kq_field(r, "coveredResources");
	json_array_foreach(cr, i, v) {
		struct kq_mark mi = kq_index(r, i);
		if (!json_is_string(v))
			rc = kq_fail(r, -EINVAL, "expected a string, got %s", json_in_kind(v));
		else if (!qualified_name(json_string_value(v), json_string_length(v)))
			rc = kq_fail(r, -EINVAL, "%s is not a resource name (a "
				     "qualified name: \"cpu\", \"nvidia.com/gpu\")",
				     show(v, q, sizeof(q)));
		if (rc == 0) {
			rc = quota_resource_add(r->t, json_string_value(v), r->qerr,
						sizeof(r->qerr));
			if (rc < 0)
				rc = kq_fail(r, rc, "%s", r->qerr);
		}
		if (rc >= 0) {
			covered[i] = rc;
			rc = 0;
			if (*seen_resources & (UINT32_C(1) << covered[i]))
				rc = kq_fail(r, -EINVAL, "Duplicate value %s: a resource "
					     "may be in one resourceGroup, once",
					     show(v, q, sizeof(q)));
			*seen_resources |= UINT32_C(1) << covered[i];
		}
		kq_pop(r, mi);
		if (rc < 0)
			break;
	}
	kq_pop(r, m);
	if (rc == 0)
		rc = kq_get(r, g, "flavors", JSON_IN_ARRAY, &fl);
	if (rc < 0)
		return rc;
	size_t n_fl = fl != NULL ? json_array_size(fl) : 0;
	if (n_fl == 0)
		return kq_fail_at(r, "flavors", -EINVAL, "missing: at least one "
				  "flavor (MinItems=1)");
	if (n_fl > QUOTA_MAX_FLAVORS)
		return kq_fail_at(r, "flavors", -EINVAL, "%zu flavors: not supported "
				  "yet: shmsched holds at most %d", n_fl,
				  QUOTA_MAX_FLAVORS);
	m = kq_field(r, "flavors");
	json_array_foreach(fl, i, v) {
		struct kq_mark mi = kq_index(r, i);
		rc = kq_flavor_quotas(r, v, node, covered, n_cr, seen_flavors,
				      has_parent, is_cohort);
		kq_pop(r, mi);
		if (rc < 0)
			break;
	}
	kq_pop(r, m);
	return rc;
}

/* spec.resourceGroups of a ClusterQueue or Cohort (MaxItems=16); each
 * resource and each flavor in one group only (validateResourceGroups). */
static int kq_resource_groups(struct kueue_reader *r, const json_t *spec,
			      int node, bool has_parent, bool is_cohort)
{
	json_t *groups, *g;
	size_t i;
	uint32_t seen_resources = 0, seen_flavors = 0;
	int rc = kq_get(r, spec, "resourceGroups", JSON_IN_ARRAY, &groups);
	if (rc < 0 || groups == NULL)
		return rc;
	if (json_array_size(groups) > KUEUE_MAX_RESOURCE_GROUPS)
		return kq_fail_at(r, "resourceGroups", -EINVAL, "%zu groups: at most "
				  "%d (MaxItems)", json_array_size(groups),
				  KUEUE_MAX_RESOURCE_GROUPS);
	struct kq_mark m = kq_field(r, "resourceGroups");
	json_array_foreach(groups, i, g) {
		struct kq_mark mi = kq_index(r, i);
		rc = kq_group(r, g, node, &seen_resources, &seen_flavors, has_parent,
			      is_cohort);
		kq_pop(r, mi);
		if (rc < 0)
			break;
	}
	kq_pop(r, m);
	return rc;
}

/* --- ClusterQueue --------------------------------------------------------- */

/* A string member that must be one of `values` ("" for absent: the
 * first, Kueue's default); *out its index. */
static int kq_enum(struct kueue_reader *r, const json_t *obj, const char *key,
		   const char *const *values, int *out)
{
	const char *s;
	size_t len;
	char q[JSON_IN_SHOW_MAX + 16], list[256] = "";
	int rc = kq_get_str(r, obj, key, &s, &len);
	*out = 0;
	if (rc < 0 || len == 0)
		return rc;
	for (int i = 0; values[i] != NULL; i++) {
		if (strlen(values[i]) == len && memcmp(values[i], s, len) == 0) {
			*out = i;
			return 0;
		}
		size_t at = strlen(list);
		snprintf(list + at, sizeof(list) - at, "%s%s", i > 0 ? ", " : "",
			 values[i]);
	}
	return kq_fail_at(r, key, -EINVAL, "%s is not one of %s",
			  json_in_show_str(s, len, q, sizeof(q)), list);
}

/* stopPolicy (ClusterQueue and LocalQueue): None only. */
static int kq_stop_policy(struct kueue_reader *r, const json_t *spec)
{
	static const char *const values[] = {"None", "Hold", "HoldAndDrain", NULL};
	int v;
	int rc = kq_enum(r, spec, "stopPolicy", values, &v);
	if (rc == 0 && v != 0)
		rc = kq_fail_at(r, "stopPolicy", -EINVAL, "%s: not supported yet "
				"(only None, the default)", values[v]);
	return rc;
}

/* .admissionScope (ClusterQueue): admissionMode, one of Kueue's
 * (kueue apis/kueue/v1beta2/fairsharing_types.go, AdmissionScope:
 * "+kubebuilder:validation:Enum=UsageBasedAdmissionFairSharing;
 * NoAdmissionFairSharing", "+required"). *on: UsageBased. */
static int kq_admission_scope(struct kueue_reader *r, const json_t *spec,
			      bool *on)
{
	static const char *const known[] = {"admissionMode", NULL};
	static const char *const modes[] = {"NoAdmissionFairSharing",
					    "UsageBasedAdmissionFairSharing", NULL};
	json_t *as;
	*on = false;
	int rc = kq_get(r, spec, "admissionScope", JSON_IN_OBJECT, &as);
	if (rc < 0 || as == NULL)
		return rc;
	struct kq_mark m = kq_field(r, "admissionScope");
	rc = kq_known(r, as, known, "AdmissionScope");
	if (rc == 0 && json_object_get(as, "admissionMode") == NULL)
		rc = kq_fail(r, -EINVAL, "admissionMode: missing (expected "
			     "UsageBasedAdmissionFairSharing or "
			     "NoAdmissionFairSharing)");
	int v = 0;
	if (rc == 0)
		rc = kq_enum(r, as, "admissionMode", modes, &v);
	*on = rc == 0 && v == 1;
	kq_pop(r, m);
	return rc;
}

static int kq_preemption(struct kueue_reader *r, const json_t *spec,
			 struct quota_preemption *p)
{
	static const char *const known[] = {"reclaimWithinCohort",
					    "borrowWithinCohort",
					    "withinClusterQueue", NULL};
	static const char *const known_bwc[] = {"policy", "maxPriorityThreshold",
						NULL};
	static const char *const reclaim[] = {"Never", "LowerPriority", "Any", NULL};
	static const char *const within[] = {"Never", "LowerPriority",
					     "LowerOrNewerEqualPriority", NULL};
	static const char *const borrow[] = {"Never", "LowerPriority", NULL};
	static const enum quota_preempt_policy map_reclaim[] = {
		QUOTA_PREEMPT_NEVER, QUOTA_PREEMPT_LOWER_PRIORITY, QUOTA_PREEMPT_ANY};
	static const enum quota_preempt_policy map_within[] = {
		QUOTA_PREEMPT_NEVER, QUOTA_PREEMPT_LOWER_PRIORITY,
		QUOTA_PREEMPT_LOWER_OR_NEWER_EQUAL_PRIORITY};
	json_t *pr, *bwc;
	int v;
	memset(p, 0, sizeof(*p));
	int rc = kq_get(r, spec, "preemption", JSON_IN_OBJECT, &pr);
	if (rc < 0 || pr == NULL)
		return rc;
	struct kq_mark m = kq_field(r, "preemption");
	rc = kq_known(r, pr, known, "ClusterQueuePreemption");
	if (rc == 0)
		rc = kq_enum(r, pr, "reclaimWithinCohort", reclaim, &v);
	if (rc == 0) {
		p->reclaim_within_cohort = map_reclaim[v];
		rc = kq_enum(r, pr, "withinClusterQueue", within, &v);
	}
	if (rc == 0) {
		p->within_cluster_queue = map_within[v];
		rc = kq_get(r, pr, "borrowWithinCohort", JSON_IN_OBJECT, &bwc);
	}
	if (rc == 0 && bwc != NULL) {
		struct kq_mark mb = kq_field(r, "borrowWithinCohort");
		rc = kq_known(r, bwc, known_bwc, "BorrowWithinCohort");
		if (rc == 0)
			rc = kq_enum(r, bwc, "policy", borrow, &v);
		if (rc == 0) {
			p->borrow_within_cohort = v ? QUOTA_PREEMPT_LOWER_PRIORITY
						    : QUOTA_PREEMPT_NEVER;
			json_t *t;
			rc = kq_get(r, bwc, "maxPriorityThreshold", JSON_IN_INT, &t);
			if (rc == 0 && t != NULL) {
				json_int_t x = json_integer_value(t);
				if (x < INT32_MIN || x > INT32_MAX)
					rc = kq_fail_at(r, "maxPriorityThreshold", -EINVAL,
							"%lld does not fit an int32",
							(long long)x);
				p->has_max_priority_threshold = true;
				p->max_priority_threshold = (int32_t)x;
			}
		}
		if (rc == 0 && p->reclaim_within_cohort == QUOTA_PREEMPT_NEVER &&
		    p->borrow_within_cohort != QUOTA_PREEMPT_NEVER)
			rc = kq_fail_at(r, "policy", -EINVAL, "reclaimWithinCohort=Never "
					"and borrowWithinCohort.Policy!=Never "
					"(Kueue's validatePreemption)");
		kq_pop(r, mb);
	}
	kq_pop(r, m);
	return rc;
}

/* flavorFungibility: only Kueue's default (whenCanBorrow MayStopSearch,
 * or v1beta1's alias Borrow; whenCanPreempt TryNextFlavor; no
 * preference), which is what shmsched's flavor order does. */
static int kq_fungibility(struct kueue_reader *r, const json_t *spec)
{
	static const char *const known[] = {"whenCanBorrow", "whenCanPreempt",
					    "preference", NULL};
	static const char *const borrow1[] = {"MayStopSearch", "TryNextFlavor",
					      "Borrow", NULL};
	static const char *const borrow2[] = {"MayStopSearch", "TryNextFlavor", NULL};
	static const char *const preempt1[] = {"TryNextFlavor", "MayStopSearch",
					       "Preempt", NULL};
	static const char *const preempt2[] = {"TryNextFlavor", "MayStopSearch", NULL};
	bool v1 = r->cur->version == 1;
	json_t *ff;
	int v;
	int rc = kq_get(r, spec, "flavorFungibility", JSON_IN_OBJECT, &ff);
	if (rc < 0 || ff == NULL)
		return rc;
	struct kq_mark m = kq_field(r, "flavorFungibility");
	rc = kq_known(r, ff, known, "FlavorFungibility");
	if (rc == 0)
		rc = kq_enum(r, ff, "whenCanBorrow", v1 ? borrow1 : borrow2, &v);
	if (rc == 0 && v == 1)
		rc = kq_fail_at(r, "whenCanBorrow", -EINVAL, "TryNextFlavor: not "
				"supported yet (only MayStopSearch, the default)");
	if (rc == 0)
		rc = kq_enum(r, ff, "whenCanPreempt", v1 ? preempt1 : preempt2, &v);
	if (rc == 0 && v != 0)
		rc = kq_fail_at(r, "whenCanPreempt", -EINVAL, "%s: not supported yet "
				"(only TryNextFlavor, the default)",
				(v1 ? preempt1 : preempt2)[v]);
	if (rc == 0)
		rc = kq_unsupported(r, ff, "preference", "only the default, "
				    "which is no preference");
	kq_pop(r, m);
	return rc;
}

/* namespaceSelector: `{}` (or empty matchLabels / matchExpressions) is
 * every namespace, Kueue's meaning; anything else is refused. */
static int kq_namespace_selector(struct kueue_reader *r, const json_t *spec)
{
	static const char *const known[] = {"matchLabels", "matchExpressions", NULL};
	json_t *sel;
	int rc = kq_get(r, spec, "namespaceSelector", JSON_IN_OBJECT, &sel);
	if (rc < 0 || sel == NULL)
		return rc;
	struct kq_mark m = kq_field(r, "namespaceSelector");
	rc = kq_known(r, sel, known, "LabelSelector");
	const json_t *ml = json_object_get(sel, "matchLabels");
	const json_t *me = json_object_get(sel, "matchExpressions");
	if (rc == 0 && ml != NULL && !json_is_null(ml) &&
	    !(json_is_object(ml) && json_object_size(ml) == 0))
		rc = kq_fail_at(r, "matchLabels", -EINVAL, "not supported yet: only "
				"an empty namespaceSelector ({}, every namespace)");
	if (rc == 0 && me != NULL && !json_is_null(me) &&
	    !(json_is_array(me) && json_array_size(me) == 0))
		rc = kq_fail_at(r, "matchExpressions", -EINVAL, "not supported yet: "
				"only an empty namespaceSelector ({}, every "
				"namespace)");
	kq_pop(r, m);
	return rc;
}

static int kq_cluster_queue(struct kueue_reader *r, const json_t *spec,
			    const char *name)
{
	static const char *const known1[] = {
		"resourceGroups", "cohort", "queueingStrategy", "namespaceSelector",
		"flavorFungibility", "preemption", "admissionChecks",
		"admissionChecksStrategy", "stopPolicy", "fairSharing",
		"admissionScope", NULL};
	static const char *const known2[] = {
		"resourceGroups", "cohortName", "queueingStrategy",
		"namespaceSelector", "flavorFungibility", "preemption",
		"admissionChecksStrategy", "stopPolicy", "fairSharing",
		"admissionScope", "concurrentAdmissionPolicy", NULL};
	static const char *const strategies[] = {"BestEffortFIFO", "StrictFIFO", NULL};
	bool v1 = r->cur->version == 1;
	const char *cohort_key = v1 ? "cohort" : "cohortName";
	const char *cohort = "";
	struct quota_preemption p;
	int64_t weight;
	int v;
	int rc = 0;
	/* The other version's spelling of the cohort, named. */
	if (json_object_get(spec, v1 ? "cohortName" : "cohort") != NULL)
		return kq_fail_at(r, v1 ? "cohortName" : "cohort", -EINVAL,
				  "unknown field: " KUEUE_GROUP "/%s spells it "
				  "spec.%s", v1 ? "v1beta1" : "v1beta2", cohort_key);
	rc = kq_known(r, spec, v1 ? known1 : known2, "ClusterQueueSpec");
	if (rc == 0)
		rc = kq_name(r, spec, cohort_key, QUOTA_NAME_MAX, false, &cohort);
	if (rc == 0)
		rc = kq_enum(r, spec, "queueingStrategy", strategies, &v);
	if (rc == 0 && v != 0)
		rc = kq_fail_at(r, "queueingStrategy", -EINVAL, "StrictFIFO: not "
				"supported yet (only BestEffortFIFO, the default)");
	if (rc == 0)
		rc = kq_stop_policy(r, spec);
	if (rc == 0 && v1)
		rc = kq_unsupported(r, spec, "admissionChecks", "admission checks");
	if (rc == 0)
		rc = kq_unsupported(r, spec, "admissionChecksStrategy",
				    "admission checks");
	bool afs = false;
	if (rc == 0)
		rc = kq_admission_scope(r, spec, &afs);
	if (rc == 0 && !v1 && json_object_get(spec, "concurrentAdmissionPolicy") != NULL &&
	    !json_is_null(json_object_get(spec, "concurrentAdmissionPolicy")))
		rc = kq_fail_at(r, "concurrentAdmissionPolicy", -EINVAL,
				"not supported yet: concurrent admission");
	if (rc == 0)
		rc = kq_namespace_selector(r, spec);
	if (rc == 0)
		rc = kq_fungibility(r, spec);
	if (rc == 0)
		rc = kq_preemption(r, spec, &p);
	if (rc == 0)
		rc = kq_fair_sharing(r, spec, &weight);
	if (rc < 0)
		return rc;
	int node = quota_cluster_queue_add(r->t, name, cohort, weight, &p, r->qerr,
					   sizeof(r->qerr));
	if (node < 0)
		return kq_fail_name(r, node, r->qerr);
	if (afs)
		(void)quota_cluster_queue_set_admission_fair_sharing(r->t, node, true);
	return kq_resource_groups(r, spec, node, cohort[0] != '\0', false);
}

/* --- Cohort, LocalQueue ---------------------------------------------------- */

static int kq_cohort(struct kueue_reader *r, const json_t *spec, const char *name)
{
	static const char *const known[] = {"parentName", "resourceGroups",
					    "fairSharing", NULL};
	const char *parent = "";
	int64_t weight = QUOTA_WEIGHT_DEFAULT_MILLI;
	/* v1alpha1's name for it, renamed when the API became v1beta1
	 * (kubernetes-sigs/kueue#5595). */
	if (json_object_get(spec, "parent") != NULL)
		return kq_fail_at(r, "parent", -EINVAL, "unknown field: "
				  KUEUE_GROUP "/v1beta%d spells it spec.parentName "
				  "(spec.parent was v1alpha1's)", r->cur->version);
	int rc = kq_known(r, spec, known, "CohortSpec");
	if (rc == 0)
		rc = kq_name(r, spec, "parentName", QUOTA_NAME_MAX, false, &parent);
	if (rc == 0)
		rc = kq_fair_sharing(r, spec, &weight);
	if (rc < 0)
		return rc;
	int node = quota_cohort_add(r->t, name, parent, weight, r->qerr,
				    sizeof(r->qerr));
	if (node < 0)
		return kq_fail_name(r, node, r->qerr);
	return kq_resource_groups(r, spec, node, parent[0] != '\0', true);
}

static int kq_local_queue(struct kueue_reader *r, const json_t *spec,
			  const char *ns, const char *name)
{
	static const char *const known[] = {"clusterQueue", "stopPolicy",
					    "fairSharing", NULL};
	const char *cq = "";
	int64_t weight;
	char q[JSON_IN_SHOW_MAX + 16];
	int rc = kq_known(r, spec, known, "LocalQueueSpec");
	if (rc == 0)
		rc = kq_name(r, spec, "clusterQueue", QUOTA_NAME_MAX, true, &cq);
	if (rc == 0)
		rc = kq_stop_policy(r, spec);
	if (rc == 0)
		rc = kq_fair_sharing(r, spec, &weight); /* admission fair sharing's */
	if (rc < 0)
		return rc;
	if (quota_cluster_queue_find(r->t, cq) < 0)
		return kq_fail_at(r, "clusterQueue", -EINVAL, "%s: no ClusterQueue of "
				  "that name in the file",
				  json_in_show_str(cq, strlen(cq), q, sizeof(q)));
	int lq = quota_local_queue_add(r->t, ns, name, cq, r->qerr, sizeof(r->qerr));
	if (lq < 0)
		return kq_fail_name(r, lq, r->qerr);
	rc = quota_local_queue_set_weight(r->t, lq, weight, r->qerr, sizeof(r->qerr));
	return rc < 0 ? kq_fail_name(r, rc, r->qerr) : 0;
}

/* One object, its kind's pass. */
static int kq_decode(struct kueue_reader *r, const struct kq_obj *o)
{
	static const char *const known[] = {"apiVersion", "kind", "metadata",
					    "spec", "status", NULL};
	const char *name, *ns;
	json_t *spec;
	r->cur = o;
	r->n_comps = 0;
	json_in_pop(&r->in, 0);
	snprintf(r->in.subject, sizeof(r->in.subject), "%s", kind_names[o->kind]);
	int rc = kq_metadata(r, o->obj, &name, &ns);
	if (rc == 0)
		rc = kq_known(r, o->obj, known, kind_names[o->kind]);
	if (rc == 0)
		rc = kq_get(r, o->obj, "spec", JSON_IN_OBJECT, &spec);
	if (rc < 0)
		return rc;
	json_t *empty = NULL;
	if (spec == NULL) {
		empty = json_object();
		if (empty == NULL)
			return kq_fail(r, -ENOMEM, "out of memory");
		spec = empty;
	}
	struct kq_mark m = kq_field(r, "spec");
	switch (o->kind) {
	case KQ_FLAVOR:
		rc = quota_flavor_add(r->t, name, r->qerr, sizeof(r->qerr));
		if (rc < 0)
			rc = kq_fail_name(r, rc, r->qerr);
		else
			rc = kq_flavor(r, spec, rc);
		break;
	case KQ_COHORT:
		rc = kq_cohort(r, spec, name);
		break;
	case KQ_CLUSTER_QUEUE:
		rc = kq_cluster_queue(r, spec, name);
		break;
	case KQ_LOCAL_QUEUE:
		rc = kq_local_queue(r, spec, ns, name);
		break;
	}
	kq_pop(r, m);
	json_decref(empty);
	return rc;
}

/* --- the reader ----------------------------------------------------------- */

int kueue_reader_new(const char *source, struct kueue_reader **out)
{
	*out = calloc(1, sizeof(**out));
	if (*out == NULL)
		return -ENOMEM;
	(*out)->source = source;
	return 0;
}

void kueue_reader_free(struct kueue_reader *r)
{
	if (r == NULL)
		return;
	for (size_t i = 0; i < r->n_objs; i++)
		json_decref(r->objs[i].obj);
	free(r->objs);
	quota_tree_free(r->t);
	free(r);
}

static void kq_begin(struct kueue_reader *r, char *err, size_t err_len)
{
	memset(&r->in, 0, sizeof(r->in));
	r->in.source = r->source;
	r->in.err = err;
	r->in.err_len = err_len;
	r->n_comps = 0;
	r->cur = NULL;
	if (err != NULL && err_len > 0)
		err[0] = '\0';
}

/* Checks apiVersion and kind of `obj` and keeps it. */
static int kq_add(struct kueue_reader *r, const json_t *obj, size_t base,
		  const struct kq_comp *prefix, unsigned n_prefix, size_t index)
{
	struct kq_obj o = {.base = base, .n_prefix = n_prefix, .version = 2};
	char q[JSON_IN_SHOW_MAX + 16];
	const char *kind = "", *api = "";
	size_t kind_len = 0, api_len = 0;
	if (n_prefix > 0)
		memcpy(o.prefix, prefix, n_prefix * sizeof(*prefix));
	r->cur = &o;
	r->n_comps = 0;
	json_in_pop(&r->in, 0);
	snprintf(r->in.subject, sizeof(r->in.subject), "object #%zu", index);
	if (!json_is_object(obj))
		return kq_fail(r, -EINVAL, "expected an object, got %s", json_in_kind(obj));
	int rc = kq_get_str(r, obj, "kind", &kind, &kind_len);
	if (rc == 0)
		rc = kq_get_str(r, obj, "apiVersion", &api, &api_len);
	if (rc < 0)
		return rc;
	if (!kueue_is_object(api, kind, kind_len))
		return kq_fail_at(r, "kind", -EINVAL, "%s (apiVersion %s) is not a "
				  "Kueue ResourceFlavor, Cohort, ClusterQueue or "
				  "LocalQueue (" KUEUE_GROUP "/v1beta1 or v1beta2)",
				  json_in_show_str(kind, kind_len, q, sizeof(q)),
				  api_len > 0 ? api : "missing");
	if (strcmp(api, KUEUE_GROUP "/v1beta1") == 0)
		o.version = 1;
	else if (strcmp(api, KUEUE_GROUP "/v1beta2") != 0)
		return kq_fail_at(r, "apiVersion", -EINVAL, "%s: not supported (only "
				  KUEUE_GROUP "/v1beta1 and v1beta2)",
				  json_in_show_str(api, api_len, q, sizeof(q)));
	for (int k = 0; k < 4; k++)
		if (strlen(kind_names[k]) == kind_len &&
		    memcmp(kind_names[k], kind, kind_len) == 0)
			o.kind = (enum kq_kind)k;
	if (r->n_objs >= KUEUE_MAX_OBJECTS)
		return kq_fail(r, -E2BIG, "more than %d Kueue objects", KUEUE_MAX_OBJECTS);
	if (r->n_objs == r->cap_objs) {
		size_t cap = r->cap_objs ? r->cap_objs * 2 : 64;
		struct kq_obj *p = realloc(r->objs, cap * sizeof(*p));
		if (p == NULL)
			return kq_fail(r, -ENOMEM, "out of memory");
		r->objs = p;
		r->cap_objs = cap;
	}
	o.obj = json_incref((json_t *)obj);
	r->objs[r->n_objs++] = o;
	r->cur = NULL;
	return 0;
}

int kueue_objects_add(struct kueue_reader *r, const json_t *obj, char *err,
		      size_t err_len)
{
	kq_begin(r, err, err_len);
	const char *buf = r->buf;
	r->buf = NULL; /* no position known */
	int rc = kq_add(r, obj, 0, NULL, 0, r->n_objs);
	r->buf = buf;
	return rc;
}

int kueue_reader_seal(struct kueue_reader *r, struct quota_tree **out,
		      char *err, size_t err_len)
{
	static const enum kq_kind passes[3][2] = {
		{KQ_FLAVOR, KQ_FLAVOR},
		{KQ_COHORT, KQ_CLUSTER_QUEUE},
		{KQ_LOCAL_QUEUE, KQ_LOCAL_QUEUE},
	};
	*out = NULL;
	kq_begin(r, err, err_len);
	quota_tree_free(r->t);
	r->t = NULL;
	int rc = quota_tree_new(&r->t);
	if (rc < 0)
		return kq_fail(r, rc, "out of memory");
	for (int p = 0; p < 3 && rc == 0; p++)
		for (size_t i = 0; i < r->n_objs && rc == 0; i++)
			if (r->objs[i].kind == passes[p][0] ||
			    r->objs[i].kind == passes[p][1])
				rc = kq_decode(r, &r->objs[i]);
	r->cur = NULL;
	r->n_comps = 0;
	json_in_pop(&r->in, 0);
	r->in.subject[0] = '\0';
	if (rc == 0) {
		rc = quota_seal(r->t, r->qerr, sizeof(r->qerr));
		if (rc < 0)
			kq_fail(r, rc, "%s", r->qerr);
	}
	if (rc < 0) {
		quota_tree_free(r->t);
		r->t = NULL;
		return rc;
	}
	*out = r->t;
	r->t = NULL;
	return 0;
}

/* --- buffers and files ----------------------------------------------------- */

struct kq_load {
	struct kueue_reader *r;
	bool mixed;
	size_t base;
	size_t index; /* objects met, for a message before the name is read */
};

static int kq_item(struct kq_load *l, const json_t *obj, struct kq_comp *prefix,
		   unsigned n_prefix, bool top);

static int kq_take(struct kq_load *l, const json_t *obj,
		   const struct kq_comp *prefix, unsigned n_prefix)
{
	size_t index = l->index++;
	if (l->mixed) {
		const json_t *k = json_object_get(obj, "kind");
		if (!json_is_object(obj) || !json_is_string(k) ||
		    !kueue_is_object(json_string_value(json_object_get(obj, "apiVersion")),
				     json_string_value(k), json_string_length(k)))
			return 0; /* another decoder's */
	}
	return kq_add(l->r, obj, l->base, prefix, n_prefix, index);
}

/* An object, or at the top a List of them. */
static int kq_item(struct kq_load *l, const json_t *obj, struct kq_comp *prefix,
		   unsigned n_prefix, bool top)
{
	const json_t *k = json_object_get(obj, "kind");
	const json_t *items = json_object_get(obj, "items");
	size_t klen = json_is_string(k) ? json_string_length(k) : 0;
	if (!top || klen < 4 || !json_is_object(obj) ||
	    memcmp(json_string_value(k) + klen - 4, "List", 4) != 0)
		return kq_take(l, obj, prefix, n_prefix);
	if (!json_is_array(items)) {
		if (l->mixed || items == NULL || json_is_null(items))
			return 0;
		struct kq_obj o = {.base = l->base, .n_prefix = n_prefix};
		if (n_prefix > 0)
			memcpy(o.prefix, prefix, n_prefix * sizeof(*prefix));
		l->r->cur = &o;
		l->r->n_comps = 0;
		json_in_pop(&l->r->in, 0);
		snprintf(l->r->in.subject, sizeof(l->r->in.subject), "%s",
			 json_string_value(k));
		int rc = kq_fail_at(l->r, "items", -EINVAL, "expected an array, got %s",
				    json_in_kind(items));
		l->r->cur = NULL;
		return rc;
	}
	size_t j;
	json_t *item;
	prefix[n_prefix] = (struct kq_comp){"items", 5, 0};
	json_array_foreach(items, j, item) {
		prefix[n_prefix + 1] = (struct kq_comp){NULL, 0, j};
		int rc = kq_take(l, item, prefix, n_prefix + 2);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int kq_syntax(struct kueue_reader *r, const char *buf, size_t off,
		     const json_error_t *je)
{
	long line = 1, col = 0;
	for (size_t i = 0; i < off; i++) {
		if (buf[i] == '\n') {
			line++;
			col = 0;
		} else if (((unsigned char)buf[i] & 0xc0) != 0x80) {
			col++;
		}
	}
	if (r->in.err != NULL && r->in.err_len > 0)
		snprintf(r->in.err, r->in.err_len, "%s:%ld:%ld: %s", r->source,
			 line + je->line - 1,
			 je->line <= 1 ? col + je->column : (long)je->column, je->text);
	return -EINVAL;
}

int kueue_load_buffer(const char *name, const char *buf, size_t len,
		      bool mixed, struct quota_tree **out, char *err,
		      size_t err_len)
{
	struct kueue_reader *r;
	*out = NULL;
	if (err != NULL && err_len > 0)
		err[0] = '\0';
	if (len > (mixed ? (size_t)INT_MAX : (size_t)KUEUE_FILE_MAX)) {
		if (err != NULL && err_len > 0)
			snprintf(err, err_len, "%s: %zu bytes, more than the %zu a file "
				 "of Kueue objects may have", name, len,
				 mixed ? (size_t)INT_MAX : (size_t)KUEUE_FILE_MAX);
		return -EFBIG;
	}
	if (kueue_reader_new(name, &r) < 0) {
		if (err != NULL && err_len > 0)
			snprintf(err, err_len, "%s: out of memory", name);
		return -ENOMEM;
	}
	r->buf = buf;
	r->len = len;
	kq_begin(r, err, err_len);
	struct kq_load l = {.r = r, .mixed = mixed};
	int rc = 0;
	size_t off = sc_ws(buf, len, 0);
	while (off < len && rc == 0) {
		json_error_t je;
		/* Duplicate keys: refused in a file of Kueue objects; in a
		 * cluster file, the rule of the decoder that read it first. */
		json_t *root = json_loadb(buf + off, len - off,
					  JSON_DISABLE_EOF_CHECK |
					  (mixed ? 0 : JSON_REJECT_DUPLICATES), &je);
		if (root == NULL) {
			rc = kq_syntax(r, buf, off, &je);
			break;
		}
		l.base = off;
		struct kq_comp prefix[KQ_PREFIX_MAX];
		if (json_is_array(root)) {
			size_t i;
			json_t *v;
			json_array_foreach(root, i, v) {
				prefix[0] = (struct kq_comp){NULL, 0, i};
				rc = kq_item(&l, v, prefix, 1, true);
				if (rc < 0)
					break;
			}
		} else {
			rc = kq_item(&l, root, prefix, 0, true);
		}
		json_decref(root);
		if (je.position <= 0 && rc == 0)
			rc = kq_syntax(r, buf, off, &je); /* never loop */
		off = sc_ws(buf, len, off + (size_t)je.position);
	}
	if (rc == 0 && !(mixed && r->n_objs == 0))
		rc = kueue_reader_seal(r, out, err, err_len);
	kueue_reader_free(r);
	return rc;
}

/* The whole file, refused past `max` bytes. */
static int kq_read(const char *path, size_t max, char **out, size_t *out_len,
		   char *err, size_t err_len)
{
	int rc = file_read_all(path, max, out, out_len);
	if (rc == -EFBIG)
		errmsg(err, err_len, "%s: more than the %zu bytes a file of Kueue "
		       "objects may have", path, max);
	else if (rc < 0)
		errmsg(err, err_len, "%s: cannot read: %s", path, strerror(-rc));
	return rc;
}

static int kq_load_file(const char *path, bool mixed, struct quota_tree **out,
			char *err, size_t err_len)
{
	char *buf = NULL;
	size_t len = 0;
	*out = NULL;
	/* A cluster file is bounded by the decoder that read it first. */
	int rc = kq_read(path, mixed ? (size_t)INT_MAX : KUEUE_FILE_MAX, &buf,
			 &len, err, err_len);
	if (rc < 0)
		return rc;
	rc = kueue_load_buffer(path, buf, len, mixed, out, err, err_len);
	free(buf);
	return rc;
}

int kueue_load_file(const char *path, struct quota_tree **out, char *err,
		    size_t err_len)
{
	return kq_load_file(path, false, out, err, err_len);
}

int kueue_load_file_mixed(const char *path, struct quota_tree **out,
			  char *err, size_t err_len)
{
	return kq_load_file(path, true, out, err, err_len);
}
