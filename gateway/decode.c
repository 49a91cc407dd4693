/* Request bodies of Pods: see decode.h.
 *
 * The body is parsed one top-level value at a time (jansson with
 * JSON_DISABLE_EOF_CHECK, which says where the value ended), so JSON Lines
 * never hold more than one pod's tree at once; a List is one value and is
 * held whole. Line numbers in errors count from the body's first byte.
 *
 * Two open-addressing tables, sized to keep at most half full, find equal
 * spec keys (by gw_spec_hash, then json_equal) and repeated pod names (by
 * cookie, then the name itself). Every count is checked against the
 * limits before it grows anything, so a body can make the decoder
 * allocate only in proportion to its own size.
 *
 * Messages, paths and type checks are the strict JSON core's
 * (base/json_in.h), the Kubernetes decoder's too: one error line,
 * "<where in the body>: <path>: <what>", a type error "expected an
 * object, got an array".
 *
 * The spec cache (the fast path). Most of a one-pod request's cost was
 * jansson building the tree of a spec the gateway had seen before (the
 * same Deployment's replicas, one request each). Each thread keeps the
 * specs it decoded, keyed by the exact bytes of a top-level Pod's
 * apiVersion and spec values; a value takes the fast path only when:
 *   (1) json_scan (gateway/json_scan.h) finds it one whole JSON object,
 *      nested at most FAST_DEPTH, whose members are apiVersion, kind,
 *      metadata and spec, each at most once, with plain keys, kind
 *      absent or exactly "Pod", apiVersion absent or a plain string;
 *   (2) its apiVersion and spec bytes equal an entry's, and an entry is
 *      made only after the full path accepted a top-level Pod with those
 *      bytes (the second time it did: a spec seen once costs no copy),
 *      found no unknown field in it, and ended the value where the
 *      scanner did: the same bytes parse to the same tree (jansson is
 *      deterministic), so the spec needs no parse and no field check;
 *   (3) its metadata has no unknown field (its members are name,
 *      namespace, labels and annotations, fields the walk never enters;
 *      else the field walk of {"metadata": ...} as a Pod finds none) and
 *      passes pod_parts. It is built directly when it holds only plain
 *      strings and objects of them, one key at most once (simple_object:
 *      the tree jansson would make), else parsed by jansson.
 * Then the pod goes through add_parts, the full path's own code, with the
 * entry's tree itself (a reference, not a copy: GP1 below) and the
 * entry's spec hash. Anything else (a miss, an unknown field, an escape,
 * any error) declines before the batch is touched, and the value takes
 * the full path, which alone writes messages: the fast path accepts only
 * what the full path accepts, with the same batch.
 * The cache is two-way (GW_SPEC_CACHE_SLOTS; a key has two slots, a new
 * entry takes a free one or the one used least recently), an entry at
 * most GW_SPEC_CACHE_ENTRY_MAX bytes of key.
 *
 * Shared trees (GP1, GP2). A batch leaves the thread (to the dispatcher,
 * and is freed by whichever thread lets go of its job last), so an
 * entry's tree may be read and freed elsewhere. That is safe because the
 * tree is never changed once cache_put made it (nothing writes into a
 * decoded spec: the dispatcher registers a deep copy, the extender pins a
 * copy; jansson's reads change nothing, its dumps track loops in a table
 * of their own) and its count of references is atomic. Our own code
 * takes and lets go of a spec's references (spec_ref, spec_let_go), not
 * jansson's json_incref/json_decref: theirs read the count plainly
 * before their atomic, and their decrement is release only, where the
 * holder that frees must also acquire every other holder's reads. So:
 *   GP1 spec_ref: count += 1, relaxed (the caller holds a reference:
 *       the entry's, or the batch's own)
 *   GP2 spec_let_go: count -= 1, acq_rel; the holder that reaches 0
 *       frees the tree after every other holder's GP2 (release), so
 *       after all their reads
 * and the batch's free holds its spec past the free of its key, so that
 * jansson's own decrement inside that free (of a member) is never the
 * last. A jansson without atomic counts (JANSSON_THREAD_SAFE_REFCOUNT
 * unset) gets a copy per pod, as before.
 * Sharing saves a one-pod request the copy and its free: its decode and
 * free took 28,305 instructions and take 21,492 (callgrind, one thread);
 * in the gateway, whose batches are freed by another thread, about
 * 11,000 (docs/perf/2026-11-29-gateway.md).
 */
#include "gateway/decode.h"
#include "gateway/json_scan.h"
#include "base/base.h"
#include "policy/policy.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int fail(char *err, size_t err_len, int rc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int fail(char *err, size_t err_len, int rc, const char *fmt, ...)
{
	if (err_len > 0) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, err_len, fmt, ap);
		va_end(ap);
	}
	return rc;
}

/* --- the spec key's hash ------------------------------------------------- */

enum { TAG_OBJECT = 1, TAG_ARRAY, TAG_STRING, TAG_INTEGER, TAG_REAL, TAG_TRUE,
       TAG_FALSE, TAG_NULL };

/* An object's hash is a sum of per-member hashes, the same whatever the
 * order of the members: these three say it once, for gw_spec_hash() and
 * for the key hashed from its parts (pod_parts_hash). */
static uint64_t member_hash(const char *key, uint64_t value_hash)
{
	return rng_hash(hash64(key, strlen(key)) ^ (value_hash * 3));
}

static uint64_t object_hash(uint64_t member_sum, size_t members)
{
	return rng_hash(member_sum ^ (TAG_OBJECT + members * 16));
}

static uint64_t string_hash(const char *s, size_t len)
{
	return rng_hash(hash64(s, len) ^ TAG_STRING);
}

uint64_t gw_spec_hash(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: {
		uint64_t sum = 0;
		const char *key;
		json_t *member;
		json_object_foreach((json_t *)v, key, member)
			sum += member_hash(key, gw_spec_hash(member));
		return object_hash(sum, json_object_size(v));
	}
	case JSON_ARRAY: {
		uint64_t h = TAG_ARRAY;
		size_t i;
		json_t *e;
		json_array_foreach(v, i, e)
			h = rng_hash(h ^ gw_spec_hash(e));
		return rng_hash(h + json_array_size(v));
	}
	case JSON_STRING:
		return string_hash(json_string_value(v), json_string_length(v));
	case JSON_INTEGER:
		return rng_hash((uint64_t)json_integer_value(v) ^
				((uint64_t)TAG_INTEGER << 56));
	case JSON_REAL: {
		double d = json_real_value(v);
		uint64_t bits;
		memcpy(&bits, &d, sizeof(bits));
		return rng_hash(bits ^ ((uint64_t)TAG_REAL << 56));
	}
	case JSON_TRUE:
		return rng_hash(TAG_TRUE);
	case JSON_FALSE:
		return rng_hash(TAG_FALSE);
	case JSON_NULL:
		return rng_hash(TAG_NULL);
	}
	return 0;
}

uint64_t gw_cookie(const char *ns_name, size_t len)
{
	uint64_t c = hash64(ns_name, len);
	return c != 0 ? c : 1; /* 0 is a bound pod's cookie in listings */
}

/* --- one pod ------------------------------------------------------------ */

/* A name Kubernetes could have made: 1..max bytes, no '/' (it separates
 * namespace and name here), no control characters. The API server is
 * stricter (DNS names); the daemon takes any string, so this is the least
 * the gateway's own paths (/v1/placements/{ns}/{name}) need. */
static int check_name(struct json_in *in, const json_t *v, const char *field,
		      size_t max)
{
	const char *s = json_string_value(v);
	size_t len = json_string_length(v);
	const char *bad = NULL;
	if (s == NULL)
		bad = "type";
	else if (len == 0 || len > max)
		bad = "length";
	for (size_t i = 0; bad == NULL && i < len; i++)
		if (s[i] == '/' || (unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			bad = "byte";
	if (bad == NULL)
		return 0; /* the path is written only for an error */
	size_t mark = json_in_field(in, field);
	int rc;
	if (s == NULL)
		rc = json_in_check(in, v, JSON_IN_STRING);
	else if (len == 0)
		rc = json_in_fail(in, -EINVAL, "empty");
	else if (len > max)
		rc = json_in_fail(in, -EINVAL, "%zu bytes, at most %zu", len, max);
	else
		rc = json_in_fail(in, -EINVAL, "\"%.*s\": a '/' or a control "
				  "character", (int)(len < 64 ? len : 64), s);
	json_in_pop(in, mark);
	return rc;
}

/* What a pod's key is made of, checked, pointing into the pod. */
struct pod_parts {
	const char *ns;       /* "default" when absent */
	const json_t *labels; /* NULL when absent */
	const json_t *spec;
};

/* The parts of `pod`, errors at `in`'s place. */
static int pod_parts(struct json_in *in, const json_t *pod, struct pod_parts *out,
		     char *ns_name, size_t ns_name_len)
{
	if (!json_is_object(pod))
		return json_in_fail(in, -EINVAL, "expected a Pod object, got %s",
				    json_in_kind(pod));
	const json_t *kind = json_object_get(pod, "kind");
	if (kind != NULL && !(json_is_string(kind) &&
			      strcmp(json_string_value(kind), "Pod") == 0))
		return json_in_fail_at(in, "kind", -EINVAL, "%s%s%s: expected "
				       "\"Pod\"", json_is_string(kind) ? "\"" : "",
				       json_is_string(kind) ? json_string_value(kind)
							    : json_in_kind(kind),
				       json_is_string(kind) ? "\"" : "");
	const json_t *meta = json_object_get(pod, "metadata");
	if (meta == NULL || json_is_null(meta))
		return json_in_fail_at(in, "metadata.name", -EINVAL, "required");
	/* The path is written only for an error: this runs for every pod. */
	json_t *labels = json_is_object(meta) ? json_object_get(meta, "labels") : NULL;
	if (labels != NULL && json_is_null(labels))
		labels = NULL;
	if (!json_is_object(meta) || (labels != NULL && !json_is_object(labels))) {
		size_t mark = json_in_field(in, "metadata");
		int rc = json_in_check(in, meta, JSON_IN_OBJECT);
		if (rc == 0)
			rc = json_in_get(in, meta, "labels", JSON_IN_OBJECT, &labels);
		json_in_pop(in, mark);
		return rc;
	}
	int rc;
	const json_t *name = json_object_get(meta, "name");
	if (name == NULL || json_is_null(name))
		return json_in_fail_at(in, "metadata.name", -EINVAL, "required");
	rc = check_name(in, name, "metadata.name", GW_NAME_MAX);
	if (rc < 0)
		return rc;
	const json_t *ns = json_object_get(meta, "namespace");
	out->ns = "default";
	if (ns != NULL && !json_is_null(ns)) {
		rc = check_name(in, ns, "metadata.namespace", GW_NAMESPACE_MAX);
		if (rc < 0)
			return rc;
		out->ns = json_string_value(ns);
	}
	out->labels = labels;
	out->spec = json_object_get(pod, "spec");
	if (out->spec == NULL || json_is_null(out->spec))
		return json_in_fail_at(in, "spec", -EINVAL, "required");
	if (!json_is_object(out->spec)) {
		size_t mark = json_in_field(in, "spec");
		rc = json_in_check(in, out->spec, JSON_IN_OBJECT);
		json_in_pop(in, mark);
		return rc;
	}
	int n = snprintf(ns_name, ns_name_len, "%s/%s", out->ns,
			 json_string_value(name));
	if (n < 0 || (size_t)n >= ns_name_len)
		return json_in_fail_at(in, "metadata", -EINVAL, "namespace/name "
				       "too long");
	return 0;
}

/* gw_spec_hash() of the key pod_key() would build from `p`, without
 * building it: a pod whose key equals one seen allocates nothing. */
static uint64_t pod_parts_hash(const struct pod_parts *p, uint64_t spec_hash)
{
	uint64_t meta = member_hash("namespace", string_hash(p->ns, strlen(p->ns)));
	if (p->labels != NULL)
		meta += member_hash("labels", gw_spec_hash(p->labels));
	uint64_t sum = member_hash("apiVersion", string_hash("v1", 2)) +
		       member_hash("kind", string_hash("Pod", 3)) +
		       member_hash("metadata", object_hash(meta, p->labels ? 2 : 1)) +
		       member_hash("spec", spec_hash);
	return object_hash(sum, 4);
}

/* Whether the key `canon` is the one `p` would make. */
static bool pod_parts_equal(const json_t *canon, const struct pod_parts *p)
{
	const json_t *meta = json_object_get(canon, "metadata");
	const json_t *labels = json_object_get(meta, "labels");
	const char *ns = json_string_value(json_object_get(meta, "namespace"));
	return ns != NULL && strcmp(ns, p->ns) == 0 &&
	       (labels == NULL ? p->labels == NULL
			       : p->labels != NULL && json_equal(labels, p->labels)) &&
	       json_equal(json_object_get(canon, "spec"), p->spec);
}

/* A reference to a spec tree that another thread may hold too (GP1). */
static json_t *spec_ref(const json_t *spec)
{
	json_t *s = (json_t *)spec;
#if JANSSON_THREAD_SAFE_REFCOUNT
	/* GP1's read, relaxed: whether it is a singleton (null, true: never
	 * counted; no count becomes that), which no thread changes. */
	if (s != NULL && __atomic_load_n(&s->refcount, __ATOMIC_RELAXED) != (size_t)-1)
		__atomic_add_fetch(&s->refcount, 1, __ATOMIC_RELAXED); /* GP1 */
	return s;
#else
	return json_incref(s);
#endif
}

/* Lets go of a reference spec_ref() took or a tree's first (GP2). */
static void spec_let_go(json_t *s)
{
#if JANSSON_THREAD_SAFE_REFCOUNT
	/* GP2's read, relaxed: a singleton, as in spec_ref. */
	if (s == NULL || __atomic_load_n(&s->refcount, __ATOMIC_RELAXED) == (size_t)-1)
		return;
	/* GP2: acq_rel, partner every other holder's GP2: the last one
	 * frees the tree after all their reads. json_delete is what
	 * json_decref calls at 0. */
	if (__atomic_sub_fetch(&s->refcount, 1, __ATOMIC_ACQ_REL) == 0)
		json_delete(s);
#else
	json_decref(s);
#endif
}

json_t *gw_spec_tree_hold(const json_t *canon)
{
#if JANSSON_THREAD_SAFE_REFCOUNT
	json_t *spec = json_object_get(canon, "spec");
	/* A singleton (null: a key always has an object here) is never
	 * counted, and its address says nothing of its content's origin. */
	if (spec == NULL || __atomic_load_n(&spec->refcount, __ATOMIC_RELAXED) ==
	    (size_t)-1)
		return NULL;
	return spec_ref(spec); /* GP1: the caller holds canon, which holds it */
#else
	(void)canon;
	return NULL;
#endif
}

void gw_spec_tree_release(json_t *tree)
{
	spec_let_go(tree); /* GP2 */
}

/* The key: only what placement reads. It copies nothing deep: the key
 * holds references to the body's own subtrees. Members in this order
 * (the template's text, json_dumps, keeps it). */
static json_t *pod_key(const struct pod_parts *p)
{
	json_t *m = json_object();
	json_t *k = json_object();
	if (m == NULL || k == NULL)
		goto fail;
	/* p->ns is jansson's (valid UTF-8) or "default": no check needed. */
	if (json_object_set_new_nocheck(m, "namespace", json_string_nocheck(p->ns)) < 0 ||
	    (p->labels != NULL &&
	     json_object_set_nocheck(m, "labels", (json_t *)p->labels) < 0) ||
	    json_object_set_new_nocheck(k, "apiVersion", json_string_nocheck("v1")) < 0 ||
	    json_object_set_new_nocheck(k, "kind", json_string_nocheck("Pod")) < 0)
		goto fail;
	int rc = json_object_set_new_nocheck(k, "metadata", m);
	m = NULL; /* k's now, or freed */
	/* The spec may be a cache entry's, shared (GP1). */
	if (rc < 0 || json_object_set_new_nocheck(k, "spec", spec_ref(p->spec)) < 0)
		goto fail;
	return k;
fail:
	json_decref(m);
	json_decref(k);
	return NULL;
}

int gw_pod_key(const json_t *pod, const char *where, json_t **canon,
	       char *ns_name, size_t ns_name_len, char *err, size_t err_len)
{
	*canon = NULL;
	struct pod_parts parts;
	struct json_in in = {.source = where, .err = err, .err_len = err_len};
	int rc = pod_parts(&in, pod, &parts, ns_name, ns_name_len);
	if (rc < 0)
		return rc;
	*canon = pod_key(&parts);
	if (*canon == NULL)
		return json_in_fail(&in, -ENOMEM, "out of memory");
	return 0;
}

/* --- the batch ---------------------------------------------------------- */

void gw_batch_free(struct gw_batch *b)
{
	for (size_t i = 0; i < b->n_specs; i++) {
		/* Its spec may be a cache entry's, shared: held past the key's
		 * free (jansson's decrement of it there is never the last),
		 * then let go (GP2). */
		json_t *spec = spec_ref(json_object_get(b->specs[i].canon, "spec"));
		json_decref(b->specs[i].canon);
		spec_let_go(spec);
	}
	for (size_t i = 0; i < b->n_warnings; i++)
		free(b->warnings[i]);
	free(b->pods);
	free(b->specs);
	free(b->names);
	free(b->spec_table);
	free(b->pod_table);
	*b = (struct gw_batch){0};
}

int gw_batch_one(struct gw_batch *b, json_t *key, const char *ns_name,
		 const char *where)
{
	*b = (struct gw_batch){0};
	size_t len = strlen(ns_name);
	b->pods = calloc(1, sizeof(*b->pods));
	b->specs = calloc(1, sizeof(*b->specs));
	b->names = malloc(len + 1);
	if (b->pods == NULL || b->specs == NULL || b->names == NULL) {
		json_decref(key);
		gw_batch_free(b);
		return -ENOMEM;
	}
	memcpy(b->names, ns_name, len + 1);
	b->names_len = b->names_cap = len + 1;
	b->specs[0] = (struct gw_spec){.canon = key, .hash = gw_spec_hash(key)};
	snprintf(b->specs[0].where, sizeof(b->specs[0].where), "%s", where);
	b->pods[0] = (struct gw_pod){.cookie = gw_cookie(ns_name, len)};
	b->n_pods = b->cap_pods = 1;
	b->n_specs = b->cap_specs = 1;
	return 0;
}

/* Doubles a table of indices + 1 keyed by `key_of`, re-inserting each. */
static int table_grow(uint32_t **table, size_t *mask, size_t n,
		      uint64_t (*key_of)(const struct gw_batch *, size_t),
		      const struct gw_batch *b)
{
	size_t cap = (*mask + 1) * 2;
	uint32_t *t = calloc(cap, sizeof(*t));
	if (t == NULL)
		return -ENOMEM;
	for (size_t k = 0; k < n; k++) {
		size_t i = key_of(b, k) & (cap - 1);
		while (t[i] != 0)
			i = (i + 1) & (cap - 1);
		t[i] = (uint32_t)k + 1;
	}
	free(*table);
	*table = t;
	*mask = cap - 1;
	return 0;
}

static uint64_t spec_key(const struct gw_batch *b, size_t k)
{
	return b->specs[k].hash;
}

static uint64_t cookie_key(const struct gw_batch *b, size_t k)
{
	return b->pods[k].cookie;
}

struct decoder {
	struct gw_batch *b;
	const struct gw_limits *lim;
	struct json_in in; /* source: where the value or pod is in the body */
	size_t unknown;    /* unknown fields the last check_fields found */
};

/* Field validation of one Pod or List (gw_limits.field_validation), as
 * kube-apiserver's ?fieldValidation: Strict refuses naming every unknown
 * field (-EINVAL, answered 400); Warn keeps kube's warning text for each
 * ("unknown field \"spec.nodeSelectr\"") and drops the field; Ignore drops
 * it. The walker is policy/policy.h's, the one the daemon's decoder uses. */
static int check_fields(struct decoder *d, const json_t *obj, const char *kind,
			const char *prefix)
{
	const char *api = json_string_value(json_object_get(obj, "apiVersion"));
	struct k8s_fields_report r;
	d->unknown = k8s_fields_check(obj, api, kind, prefix, &r);
	if (d->unknown == 0)
		return 0;
	if (d->lim->field_validation == K8S_FIELDS_STRICT) {
		char line[K8S_FIELDS_MAX_REPORT * K8S_FIELDS_MSG_MAX + 64];
		k8s_fields_report_line(&r, line, sizeof(line));
		return json_in_fail(&d->in, -EINVAL, "%s (fieldValidation=Strict: "
				    "?fieldValidation=Warn or Ignore drops them)", line);
	}
	struct gw_batch *b = d->b;
	for (size_t i = 0; i < r.n && d->lim->field_validation == K8S_FIELDS_WARN; i++) {
		b->n_warnings_total++;
		if (b->n_warnings == GW_MAX_WARNINGS)
			continue;
		/* "<path>: unknown field..." into kube's "unknown field \"<path>\"". */
		const char *m = r.msg[i];
		const char *colon = strstr(m, ": unknown field");
		char *w = NULL;
		if (colon != NULL &&
		    asprintf(&w, "unknown field \"%.*s\"", (int)(colon - m), m) < 0)
			w = NULL;
		if (w == NULL)
			return json_in_fail(&d->in, -ENOMEM, "out of memory");
		b->warnings[b->n_warnings++] = w;
	}
	if (d->lim->field_validation == K8S_FIELDS_WARN)
		b->n_warnings_total += r.total - r.n;
	/* Dropped: the daemon (Strict by default) never sees them. */
	k8s_fields_prune((json_t *)obj, api, kind);
	return 0;
}

/* Adds a pod of checked parts called `name` found at `where` (the
 * batch's warnings from `warned` on are its own), whose spec hashes to
 * spec_hash (gw_spec_hash(parts->spec)). */
static int add_parts(struct decoder *d, const struct pod_parts *pp,
		     const char *name, const char *where, size_t warned,
		     uint64_t spec_hash)
{
	struct gw_batch *b = d->b;
	const struct pod_parts parts = *pp;
	json_t *canon = NULL;
	d->in.source = where;
	if (b->n_pods == d->lim->max_pods) {
		return json_in_fail(&d->in, -E2BIG, "more than %zu pods in one "
				    "request", d->lim->max_pods);
	}
	size_t name_len = strlen(name);
	uint64_t cookie = gw_cookie(name, name_len);

	/* The same pod twice in one body would get two answers for one
	 * name: refused, naming both places. */
	size_t i = cookie & b->pod_mask;
	for (; b->pod_table[i] != 0; i = (i + 1) & b->pod_mask) {
		const struct gw_pod *o = &b->pods[b->pod_table[i] - 1];
		if (o->cookie != cookie)
			continue;
		if (strcmp(gw_pod_name(b, o), name) == 0)
			return json_in_fail(&d->in, -EINVAL, "pod %s: appears twice "
					    "in the request (first at %s)", name,
					    b->specs[o->spec].where);
		return json_in_fail(&d->in, -EINVAL, "pod %s: its 64-bit key equals "
				    "pod %s's (a hash collision): rename one", name,
				    gw_pod_name(b, o));
	}

	/* Its spec key: an equal one of this body, or a new one. */
	uint64_t h = pod_parts_hash(&parts, spec_hash);
	size_t s = h & b->spec_mask;
	int64_t spec = -1;
	for (; b->spec_table[s] != 0; s = (s + 1) & b->spec_mask) {
		struct gw_spec *o = &b->specs[b->spec_table[s] - 1];
		if (o->hash == h && pod_parts_equal(o->canon, &parts)) {
			spec = b->spec_table[s] - 1;
			break;
		}
	}
	if (spec < 0) {
		if (b->n_specs == d->lim->max_specs) {
			return json_in_fail(&d->in, -E2BIG, "more than %zu distinct "
					    "pod specs in one request (the templates "
					    "one daemon connection holds: "
					    "--max-templates)", d->lim->max_specs);
		}
		if (b->n_specs == b->cap_specs) {
			size_t cap = b->cap_specs ? b->cap_specs * 2 : 8;
			struct gw_spec *p = realloc(b->specs, cap * sizeof(*p));
			if (p == NULL)
				goto oom;
			b->specs = p;
			b->cap_specs = cap;
		}
		canon = pod_key(&parts);
		if (canon == NULL)
			goto oom;
		spec = (int64_t)b->n_specs;
		struct gw_spec *ns = &b->specs[b->n_specs++];
		ns->canon = canon;
		ns->hash = h;
		snprintf(ns->where, sizeof(ns->where), "%s", where);
		canon = NULL;
		b->spec_table[s] = (uint32_t)spec + 1;
		if (b->n_specs * 2 > b->spec_mask + 1 &&
		    table_grow(&b->spec_table, &b->spec_mask, b->n_specs, spec_key,
			       b) < 0)
			goto oom;
	}
	if (b->n_pods == b->cap_pods) {
		size_t cap = b->cap_pods ? b->cap_pods * 2 : 16;
		struct gw_pod *p = realloc(b->pods, cap * sizeof(*p));
		if (p == NULL)
			goto oom;
		b->pods = p;
		b->cap_pods = cap;
	}
	if (b->names_len + name_len + 1 > b->names_cap) {
		size_t cap = b->names_cap ? b->names_cap * 2 : 1024;
		while (cap < b->names_len + name_len + 1)
			cap *= 2;
		char *p = realloc(b->names, cap);
		if (p == NULL)
			goto oom;
		b->names = p;
		b->names_cap = cap;
	}
	memcpy(b->names + b->names_len, name, name_len + 1);
	b->pods[b->n_pods] = (struct gw_pod){.cookie = cookie,
					     .spec = (uint32_t)spec,
					     .name_off = (uint32_t)b->names_len,
					     .first_warning = (uint8_t)warned,
					     .n_warnings = (uint8_t)(b->n_warnings - warned)};
	b->names_len += name_len + 1;
	/* i still names the free bucket the search above ended on. */
	b->pod_table[i] = (uint32_t)++b->n_pods;
	if (b->n_pods * 2 > b->pod_mask + 1 &&
	    table_grow(&b->pod_table, &b->pod_mask, b->n_pods, cookie_key, b) < 0)
		goto oom;
	return 0;
oom:
	json_decref(canon);
	return json_in_fail(&d->in, -ENOMEM, "out of memory");
}

/* Adds one pod object found at `where`. */
static int add_pod(struct decoder *d, const json_t *obj, const char *where,
		   const char *prefix)
{
	char name[GW_NAMESPACE_MAX + 1 + GW_NAME_MAX + 1];
	struct pod_parts parts;
	size_t warned = d->b->n_warnings;
	d->in.source = where;
	d->unknown = 0;
	int rc = json_is_object(obj) ? check_fields(d, obj, "Pod", prefix) : 0;
	if (rc < 0)
		return rc;
	rc = pod_parts(&d->in, obj, &parts, name, sizeof(name));
	if (rc < 0)
		return rc;
	return add_parts(d, &parts, name, where, warned, gw_spec_hash(parts.spec));
}

/* One top-level value starting on `line`: a Pod, or a List of them. */
static int add_value(struct decoder *d, const json_t *v, size_t line)
{
	char where[GW_WHERE_MAX];
	snprintf(where, sizeof(where), "line %zu", line);
	d->in.source = where;
	if (!json_is_object(v))
		return json_in_fail(&d->in, -EINVAL, "expected a Pod or a List of "
				    "Pods, got %s", json_in_kind(v));
	const json_t *kind = json_object_get(v, "kind");
	const char *k = json_is_string(kind) ? json_string_value(kind) : NULL;
	if (k == NULL || strcmp(k, "List") != 0) {
		if (k == NULL || strcmp(k, "PodList") != 0)
			return add_pod(d, v, where, "");
	}
	int rc = check_fields(d, v, k, "");
	if (rc < 0)
		return rc;
	json_t *items;
	rc = json_in_get(&d->in, v, "items", JSON_IN_ARRAY, &items);
	if (rc < 0 || items == NULL)
		return rc; /* absent or null: an empty list, no pod */
	size_t i;
	json_t *item;
	json_array_foreach(items, i, item) {
		snprintf(where, sizeof(where), "line %zu: items[%zu]", line, i);
		char prefix[32];
		snprintf(prefix, sizeof(prefix), "items[%zu].", i);
		rc = add_pod(d, item, where, prefix);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* --- the spec cache and the fast path (the design note's (1)-(3)) ---------- */

/* The deepest nesting the fast path scans (a pod's spec is a few levels
 * deep); deeper values take the full path. It bounds spec_copy()'s
 * recursion too. */
#define FAST_DEPTH 64u
/* apiVersion bytes the fast path takes ("v1", "scheduling.k8s.io/v1"). */
#define FAST_API_MAX 64u

/* Keys remembered after one miss (8 bytes each). */
#define SEEN_SLOTS (4u * GW_SPEC_CACHE_SLOTS)

struct cache_entry {
	uint64_t key;      /* cache_key() of its bytes */
	char *bytes;       /* apiVersion's then spec's; NULL: a free slot */
	size_t api_len;    /* SIZE_MAX: no apiVersion */
	size_t spec_len;
	json_t *spec;      /* the tree, never changed once made: batches
			    * hold references to it (GP1, GP2) */
	uint64_t spec_hash; /* gw_spec_hash(spec) */
	uint64_t used;     /* spec_cache.tick when last found or made */
};

struct spec_cache {
	struct cache_entry e[GW_SPEC_CACHE_SLOTS];
	/* Keys missed once, two-way as the entries: a key is cached when it
	 * is missed a second time, so that specs seen once (each request its
	 * own) pay no copy into the cache. */
	uint64_t seen[SEEN_SLOTS];
	uint64_t tick;
	struct gw_spec_cache_stats st;
};

static pthread_key_t cache_tls;
static pthread_once_t cache_once = PTHREAD_ONCE_INIT;
static bool cache_ok; /* written once under cache_once, read after it */

static void cache_entry_free(struct spec_cache *c, struct cache_entry *e)
{
	if (e->bytes == NULL)
		return;
	c->st.entries--;
	c->st.bytes -= (e->api_len == SIZE_MAX ? 0 : e->api_len) + e->spec_len;
	free(e->bytes);
	spec_let_go(e->spec); /* GP2: batches may still hold it */
	*e = (struct cache_entry){0};
}

static void cache_destroy(void *arg)
{
	struct spec_cache *c = arg;
	for (size_t i = 0; i < GW_SPEC_CACHE_SLOTS; i++)
		cache_entry_free(c, &c->e[i]);
	free(c);
}

static void cache_init_once(void)
{
	cache_ok = pthread_key_create(&cache_tls, cache_destroy) == 0;
}

/* The calling thread's cache, made on first use; NULL: none (no memory). */
static struct spec_cache *cache_get(bool create)
{
	pthread_once(&cache_once, cache_init_once);
	if (!cache_ok)
		return NULL;
	struct spec_cache *c = pthread_getspecific(cache_tls);
	if (c == NULL && create) {
		c = calloc(1, sizeof(*c));
		if (c != NULL && pthread_setspecific(cache_tls, c) != 0) {
			free(c);
			c = NULL;
		}
	}
	return c;
}

void gw_spec_cache_stats(struct gw_spec_cache_stats *out)
{
	struct spec_cache *c = cache_get(false);
	*out = c != NULL ? c->st : (struct gw_spec_cache_stats){0};
}

void gw_spec_cache_clear(void)
{
	struct spec_cache *c = cache_get(false);
	if (c == NULL)
		return;
	for (size_t i = 0; i < GW_SPEC_CACHE_SLOTS; i++)
		cache_entry_free(c, &c->e[i]);
	memset(c->seen, 0, sizeof(c->seen));
	c->st = (struct gw_spec_cache_stats){0};
}

/* A copy of `v` sharing nothing with it, members in the same order; NULL
 * when out of memory. Recursion: v's depth, below FAST_DEPTH ((1)). */
static json_t *spec_copy(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: {
		json_t *o = json_object();
		const char *key;
		size_t key_len;
		json_t *m;
		if (o == NULL)
			return NULL;
		json_object_keylen_foreach((json_t *)v, key, key_len, m) {
			if (json_object_setn_new_nocheck(o, key, key_len,
							 spec_copy(m)) < 0) {
				json_decref(o);
				return NULL;
			}
		}
		return o;
	}
	case JSON_ARRAY: {
		json_t *a = json_array();
		size_t i;
		json_t *e;
		if (a == NULL)
			return NULL;
		json_array_foreach(v, i, e) {
			if (json_array_append_new(a, spec_copy(e)) < 0) {
				json_decref(a);
				return NULL;
			}
		}
		return a;
	}
	case JSON_STRING:
		return json_stringn_nocheck(json_string_value(v), json_string_length(v));
	case JSON_INTEGER:
		return json_integer(json_integer_value(v));
	case JSON_REAL:
		return json_real(json_real_value(v));
	case JSON_TRUE:
		return json_true();
	case JSON_FALSE:
		return json_false();
	case JSON_NULL:
		return json_null();
	}
	return NULL;
}

/* What (1) found in one value: its spec and apiVersion bytes. */
struct fast_key {
	bool ok;            /* (1) held: the value may be cached */
	uint64_t key;
	const char *api;    /* NULL: absent */
	size_t api_len;
	const char *spec;
	size_t spec_len;
	const char *meta;
	size_t meta_len;
	size_t end;         /* the value's length */
};

static uint64_t cache_key(const struct fast_key *k)
{
	uint64_t h = HASH64_SEED;
	if (k->api != NULL) {
		h = hash64_add(h, "A", 1);
		h = hash64_add(h, k->api, k->api_len);
	}
	h = hash64_add(h, "S", 1);
	return rng_hash(hash64_add(h, k->spec, k->spec_len));
}

static bool key_is(const char *text, const struct json_scan_member *m,
		   const char *name)
{
	size_t n = strlen(name);
	return m->key_len == n && memcmp(text + m->key_off, name, n) == 0;
}

/* (1) on the value at text[0..avail): fills *k (k->ok false: it does not
 * hold, the value takes the full path uncached). */
static void fast_scan(const char *text, size_t avail, struct fast_key *k)
{
	struct json_scan sc;
	size_t bad;
	*k = (struct fast_key){0};
	if (json_scan_value(text, avail, FAST_DEPTH, &sc, &bad) < 0 ||
	    !sc.is_object || sc.n_members > 4)
		return;
	bool kind = false;
	for (size_t i = 0; i < sc.n_members; i++) {
		const struct json_scan_member *m = &sc.m[i];
		const char *v = text + m->value_off;
		if (m->key_escaped)
			return;
		if (key_is(text, m, "kind")) {
			if (kind || m->value_len != 5 || memcmp(v, "\"Pod\"", 5) != 0)
				return;
			kind = true;
		} else if (key_is(text, m, "apiVersion")) {
			if (k->api != NULL || v[0] != '"' || m->value_escaped ||
			    m->value_len - 2 > FAST_API_MAX)
				return;
			k->api = v + 1;
			k->api_len = m->value_len - 2;
		} else if (key_is(text, m, "metadata")) {
			if (k->meta != NULL || v[0] != '{')
				return;
			k->meta = v;
			k->meta_len = m->value_len;
		} else if (key_is(text, m, "spec")) {
			if (k->spec != NULL || v[0] != '{' ||
			    m->value_len > GW_SPEC_CACHE_ENTRY_MAX)
				return;
			k->spec = v;
			k->spec_len = m->value_len;
		} else {
			return;
		}
	}
	if (k->meta == NULL || k->spec == NULL)
		return;
	k->end = sc.end;
	k->key = cache_key(k);
	k->ok = true;
}

/* A key's two slots (two-way: two hot specs rarely evict each other). */
static struct cache_entry *cache_slot(struct spec_cache *c, uint64_t key, int way)
{
	return &c->e[(way == 0 ? key : key >> 32) & (GW_SPEC_CACHE_SLOTS - 1)];
}

static struct cache_entry *cache_find(struct spec_cache *c, const struct fast_key *k)
{
	size_t api_len = k->api != NULL ? k->api_len : SIZE_MAX;
	size_t api_bytes = k->api != NULL ? k->api_len : 0;
	for (int way = 0; way < 2; way++) {
		struct cache_entry *e = cache_slot(c, k->key, way);
		if (e->bytes != NULL && e->key == k->key && e->api_len == api_len &&
		    e->spec_len == k->spec_len &&
		    memcmp(e->bytes, k->api != NULL ? k->api : "", api_bytes) == 0 &&
		    memcmp(e->bytes + api_bytes, k->spec, k->spec_len) == 0) {
			e->used = ++c->tick;
			return e;
		}
	}
	return NULL;
}

/* (2)'s entry: after the full path accepted the top-level Pod `pod` whose
 * bytes gave *k, with no unknown field. Out of memory: no entry. */
static void cache_put(struct spec_cache *c, const struct fast_key *k,
		      const json_t *pod)
{
	const json_t *spec = json_object_get(pod, "spec");
	uint64_t *s0 = &c->seen[k->key & (SEEN_SLOTS - 1)];
	uint64_t *s1 = &c->seen[(k->key >> 32) & (SEEN_SLOTS - 1)];
	if (!json_is_object(spec))
		return;
	if (*s0 != k->key && *s1 != k->key) {
		/* The first miss: remembered (in a free way, else either), not
		 * cached. */
		*(*s0 == 0 ? s0 : *s1 == 0 ? s1 : (++c->tick & 1) ? s0 : s1) = k->key;
		return;
	}
	size_t api_bytes = k->api != NULL ? k->api_len : 0;
	char *bytes = malloc(api_bytes + k->spec_len);
	json_t *copy = spec_copy(spec);
	if (bytes == NULL || copy == NULL) {
		free(bytes);
		json_decref(copy);
		return;
	}
	if (k->api != NULL)
		memcpy(bytes, k->api, api_bytes);
	memcpy(bytes + api_bytes, k->spec, k->spec_len);
	/* A free slot of the two, else the one used least recently. */
	struct cache_entry *e = cache_slot(c, k->key, 0);
	struct cache_entry *e1 = cache_slot(c, k->key, 1);
	if (e->bytes != NULL && (e1->bytes == NULL || e1->used < e->used))
		e = e1;
	cache_entry_free(c, e);
	*e = (struct cache_entry){.key = k->key, .bytes = bytes,
				  .api_len = k->api != NULL ? k->api_len : SIZE_MAX,
				  .spec_len = k->spec_len, .spec = copy,
				  .spec_hash = gw_spec_hash(copy), .used = ++c->tick};
	c->st.entries++;
	c->st.bytes += api_bytes + k->spec_len;
	c->st.inserts++;
}

/* The tree jansson would make of text[0..len), when it is an object of
 * at most JSON_SCAN_MAX_MEMBERS members with plain keys whose values are
 * plain strings or (depth > 1) such objects: a metadata with its labels.
 * NULL: not that simple, a key twice (jansson's JSON_REJECT_DUPLICATES
 * refuses it), or out of memory; jansson then parses it. */
static json_t *simple_object(const char *text, size_t len, unsigned depth)
{
	struct json_scan sc;
	size_t bad;
	if (json_scan_value(text, len, depth, &sc, &bad) < 0 || !sc.is_object ||
	    sc.end != len || sc.n_members > JSON_SCAN_MAX_MEMBERS)
		return NULL;
	json_t *o = json_object();
	if (o == NULL)
		return NULL;
	for (size_t i = 0; i < sc.n_members; i++) {
		const struct json_scan_member *m = &sc.m[i];
		const char *key = text + m->key_off;
		const char *v = text + m->value_off;
		json_t *c = NULL;
		if (m->key_escaped || json_object_getn(o, key, m->key_len) != NULL)
			goto no;
		if (v[0] == '"' && !m->value_escaped)
			c = json_stringn_nocheck(v + 1, m->value_len - 2);
		else if (v[0] == '{' && depth > 1)
			c = simple_object(v, m->value_len, depth - 1);
		if (c == NULL || json_object_setn_new_nocheck(o, key, m->key_len, c) < 0)
			goto no;
	}
	return o;
no:
	json_decref(o);
	return NULL;
}

/* Whether k8s_fields_check() would find no unknown field in a Pod whose
 * only member is `meta`: every member one of these ObjectMeta fields,
 * none of which it walks into (policy/k8s_fields_table.c: scalars). Else
 * the walk itself decides. */
static bool meta_fields_known(const json_t *meta)
{
	const char *key;
	json_t *v;
	json_object_foreach((json_t *)meta, key, v)
		if (strcmp(key, "name") != 0 && strcmp(key, "namespace") != 0 &&
		    strcmp(key, "labels") != 0 && strcmp(key, "annotations") != 0)
			return false;
	return true;
}

/* (3) and the pod's addition for a value whose spec is entry `e`'s.
 * Returns 1 (declined: the batch untouched, the value takes the full
 * path), or add_parts()' result. */
static int fast_add(struct decoder *d, const struct fast_key *k,
		    const struct cache_entry *e, const char *where)
{
	char api[FAST_API_MAX + 1];
	if (k->api != NULL) {
		memcpy(api, k->api, k->api_len);
		api[k->api_len] = '\0';
	}
	json_error_t je;
	json_t *meta = simple_object(k->meta, k->meta_len, 2);
	if (meta == NULL)
		meta = json_loadb(k->meta, k->meta_len, JSON_REJECT_DUPLICATES, &je);
	json_t *pod = json_object();
	if (meta == NULL || pod == NULL ||
	    json_object_set_new_nocheck(pod, "metadata", meta) < 0) {
		json_decref(pod);
		return 1; /* meta is the pod's, or NULL */
	}
	int rc = 1;
	struct k8s_fields_report r;
	if (!(json_is_object(meta) && meta_fields_known(meta)) &&
	    k8s_fields_check(pod, k->api != NULL ? api : NULL, "Pod", "", &r) != 0)
		goto out;
#if JANSSON_THREAD_SAFE_REFCOUNT
	json_t *spec = spec_ref(e->spec); /* GP1: the entry's tree itself */
#else
	json_t *spec = spec_copy(e->spec);
#endif
	if (json_object_set_new_nocheck(pod, "spec", spec) < 0)
		goto out;
	char name[GW_NAMESPACE_MAX + 1 + GW_NAME_MAX + 1];
	struct pod_parts parts;
	struct json_in quiet = {.source = where}; /* no message: declined */
	if (pod_parts(&quiet, pod, &parts, name, sizeof(name)) < 0)
		goto out;
	rc = add_parts(d, &parts, name, where, d->b->n_warnings, e->spec_hash);
out:
	json_decref(pod);
	return rc;
}

int gw_decode_pods(const char *body, size_t len, const struct gw_limits *lim,
		   struct gw_batch *out, char *err, size_t err_len)
{
	*out = (struct gw_batch){0};
	out->spec_mask = 15;
	out->pod_mask = 15;
	out->spec_table = calloc(out->spec_mask + 1, sizeof(uint32_t));
	out->pod_table = calloc(out->pod_mask + 1, sizeof(uint32_t));
	struct decoder d = {.b = out, .lim = lim, .in = {.err = err, .err_len = err_len}};
	if (out->spec_table == NULL || out->pod_table == NULL)
		return json_in_fail(&d.in, -ENOMEM, "out of memory");
	size_t off = 0, line = 1, values = 0;
	for (;;) {
		/* Skip whitespace between values, counting lines. */
		while (off < len && (body[off] == ' ' || body[off] == '\t' ||
				     body[off] == '\r' || body[off] == '\n')) {
			if (body[off] == '\n')
				line++;
			off++;
		}
		if (off == len)
			break;
		struct fast_key fk = {0};
		struct spec_cache *cache = lim->no_spec_cache ? NULL : cache_get(true);
		if (cache != NULL)
			fast_scan(body + off, len - off, &fk);
		const struct cache_entry *hit = fk.ok ? cache_find(cache, &fk) : NULL;
		if (hit != NULL) {
			char where[GW_WHERE_MAX];
			snprintf(where, sizeof(where), "line %zu", line);
			int rc = fast_add(&d, &fk, hit, where);
			if (rc <= 0) {
				if (rc < 0)
					return rc;
				cache->st.hits++;
				values++;
				for (size_t k = off; k < off + fk.end; k++)
					if (body[k] == '\n')
						line++;
				off += fk.end;
				continue;
			}
		}
		if (fk.ok)
			cache->st.misses++;
		json_error_t je;
		json_t *v = json_loadb(body + off, len - off,
				       JSON_DISABLE_EOF_CHECK | JSON_REJECT_DUPLICATES,
				       &je);
		if (v == NULL) {
			/* jansson counts lines from 1 at the value's start. */
			d.in.source = NULL;
			return json_in_fail(&d.in, -EINVAL, "line %zu, column %d: JSON: "
					    "%s", line + (size_t)(je.line > 0 ? je.line - 1 : 0),
					    je.column, je.text);
		}
		size_t used = (size_t)je.position;
		d.unknown = 0;
		int rc = add_value(&d, v, line);
		/* (2): an entry only for what the full path took whole. */
		if (rc == 0 && fk.ok && hit == NULL && d.unknown == 0 &&
		    used == fk.end)
			cache_put(cache, &fk, v);
		json_decref(v);
		if (rc < 0)
			return rc;
		values++;
		for (size_t k = off; k < off + used && k < len; k++)
			if (body[k] == '\n')
				line++;
		if (used == 0) {
			d.in.source = NULL;
			return json_in_fail(&d.in, -EINVAL, "line %zu: JSON: no progress",
					    line);
		}
		off += used;
	}
	if (values == 0)
		return json_in_fail(&d.in, -EINVAL, "the body holds no Pod: expected "
				    "a Pod, a List of Pods, or JSON Lines of Pods");
	return 0;
}

/* --- the extender's arguments ---------------------------------------------- */

const json_t *gw_member_ci(const json_t *obj, const char *name)
{
	if (!json_is_object(obj))
		return NULL;
	const json_t *v = json_object_get(obj, name);
	if (v != NULL)
		return v;
	const char *key;
	json_t *member;
	json_object_foreach((json_t *)obj, key, member)
		if (strcasecmp(key, name) == 0)
			return member;
	return NULL;
}

void gw_extender_args_free(struct gw_extender_args *a)
{
	json_decref(a->pod_key);
	json_decref(a->root);
	free(a->names);
	*a = (struct gw_extender_args){0};
}

int gw_decode_extender_args(const char *body, size_t len, size_t max_nodes,
			    struct gw_extender_args *out, char *err, size_t err_len)
{
	*out = (struct gw_extender_args){0};
	struct json_in in = {.err = err, .err_len = err_len};
	json_error_t je;
	out->root = json_loadb(body, len, JSON_REJECT_DUPLICATES, &je);
	if (out->root == NULL)
		return json_in_fail(&in, -EINVAL, "line %d, column %d: JSON: %s",
				    je.line, je.column, je.text);
	if (!json_is_object(out->root))
		return json_in_fail_at(&in, "ExtenderArgs", -EINVAL, "expected an "
				       "object, got %s", json_in_kind(out->root));
	const json_t *pod = gw_member_ci(out->root, "Pod");
	if (pod == NULL || json_is_null(pod))
		return json_in_fail_at(&in, "Pod", -EINVAL, "required");
	int rc = gw_pod_key(pod, "Pod", &out->pod_key, out->pod_name,
			    sizeof(out->pod_name), err, err_len);
	if (rc < 0)
		return rc;
	const json_t *uid = json_object_get(json_object_get(pod, "metadata"), "uid");
	if (uid != NULL && !json_is_null(uid)) {
		if (!json_is_string(uid) || json_string_length(uid) >= sizeof(out->pod_uid))
			return json_in_fail_at(&in, "Pod.metadata.uid", -EINVAL,
					       "expected a string of at most %zu "
					       "bytes", sizeof(out->pod_uid) - 1);
		snprintf(out->pod_uid, sizeof(out->pod_uid), "%s", json_string_value(uid));
	}
	const json_t *nodes = gw_member_ci(out->root, "Nodes");
	const json_t *names = gw_member_ci(out->root, "NodeNames");
	if (nodes != NULL && json_is_null(nodes))
		nodes = NULL;
	if (names != NULL && json_is_null(names))
		names = NULL;
	if (nodes == NULL && names == NULL)
		return json_in_fail(&in, -EINVAL, "Nodes or NodeNames: one is required "
				    "(NodeNames when the extender is nodeCacheCapable)");
	if (nodes != NULL && names != NULL)
		return json_in_fail(&in, -EINVAL, "Nodes and NodeNames: only one may "
				    "be given");
	const json_t *list = names;
	if (nodes != NULL) {
		if (!json_is_object(nodes))
			return json_in_fail_at(&in, "Nodes", -EINVAL, "expected a "
					       "NodeList object, got %s",
					       json_in_kind(nodes));
		json_in_field(&in, "Nodes");
		json_t *items;
		rc = json_in_get(&in, nodes, "items", JSON_IN_ARRAY, &items);
		if (rc < 0)
			return rc;
		list = items;
		out->nodes = list;
	} else {
		out->node_names = true;
		if (!json_is_array(names))
			return json_in_fail_at(&in, "NodeNames", -EINVAL, "expected an "
					       "array of strings, got %s",
					       json_in_kind(names));
	}
	/* The path: Nodes.items or NodeNames, each entry below it. */
	json_in_pop(&in, 0);
	json_in_field(&in, nodes != NULL ? "Nodes.items" : "NodeNames");
	size_t n = list ? json_array_size(list) : 0;
	if (n > max_nodes)
		return json_in_fail(&in, -E2BIG, "%zu nodes; at most %zu", n,
				    max_nodes);
	out->names = calloc(n ? n : 1, sizeof(*out->names));
	if (out->names == NULL) {
		json_in_pop(&in, 0);
		return json_in_fail(&in, -ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < n; i++) {
		const json_t *e = json_array_get(list, i);
		const json_t *name = e;
		size_t mark = json_in_index(&in, i);
		if (nodes != NULL) {
			if (!json_is_object(e))
				return json_in_fail(&in, -EINVAL, "expected a Node "
						    "object, got %s", json_in_kind(e));
			name = json_object_get(json_object_get(e, "metadata"), "name");
			json_in_field(&in, "metadata.name");
		}
		if (!json_is_string(name) || json_string_length(name) == 0 ||
		    json_string_length(name) > GW_NAME_MAX)
			return json_in_fail(&in, -EINVAL, "expected a name of 1 to "
					    "253 bytes");
		json_in_pop(&in, mark);
		out->names[i] = json_string_value(name);
	}
	out->n_names = n;
	return 0;
}

/* --- query parameters ----------------------------------------------------- */

/* A query value as a person sees it in an error: printable ASCII, cut at
 * 32 bytes, anything else as '?' (it came from a URL). */
static void shown_value(const char *text, size_t len, char shown[40])
{
	size_t n = 0;
	for (size_t k = 0; text != NULL && k < len && n < 32; k++)
		shown[n++] = (text[k] >= 0x20 && text[k] < 0x7f && text[k] != '"')
			? text[k] : '?';
	shown[n] = '\0';
}

int gw_parse_explain(const char *text, size_t len, bool *out, char *err,
		     size_t err_len)
{
	if (text != NULL && len == 4 && memcmp(text, "true", 4) == 0) {
		*out = true;
		return 0;
	}
	if (text != NULL && len == 5 && memcmp(text, "false", 5) == 0) {
		*out = false;
		return 0;
	}
	char shown[40];
	shown_value(text, len, shown);
	return fail(err, err_len, -EINVAL, "?explain=\"%s%s\": expected true (each "
		    "answer line adds its pod's filter reasons and scores) or "
		    "false", shown, text != NULL && len > 32 ? "..." : "");
}

int gw_parse_wait(const char *text, size_t len, unsigned max_s, unsigned *out_s,
		  char *err, size_t err_len)
{
	char shown[40];
	shown_value(text, len, shown);
	uint64_t v = 0;
	size_t digits = 0;
	while (text != NULL && digits < len && digits <= 10 &&
	       text[digits] >= '0' && text[digits] <= '9')
		v = v * 10 + (uint64_t)(text[digits++] - '0');
	if (text == NULL || digits == 0 || digits != len || digits > 10 || v > max_s)
		return fail(err, err_len, -EINVAL, "?wait=\"%s%s\": expected a whole "
			    "number of seconds from 0 to %u (0: answer at once; "
			    "N: an unschedulable pod waits up to N s for a node)",
			    shown, text != NULL && len > 32 ? "..." : "", max_s);
	*out_s = (unsigned)v;
	return 0;
}
