/* The first pass's objects: Namespaces, Services and controllers
 * (ReplicationControllers, ReplicaSets, StatefulSets) kept in a
 * k8s_objects, their store and index, and their decoders. Part of the
 * Kubernetes decoder: see k8s_json_load.c's note and k8s_json_internal.h. */
#include "ingest/k8s_json_internal.h"

static const char *const obj_kind_name[OBJ_KINDS] = {
	[OBJ_NAMESPACE] = "Namespace",
	[OBJ_SERVICE] = "Service",
	[OBJ_RC] = "ReplicationController",
	[OBJ_RS] = "ReplicaSet",
	[OBJ_SS] = "StatefulSet",
};

/* --- objects: Namespaces, Services, controllers (k8s_objects) ------------------ */

struct k8s_objects *k8s_objects_create(void)
{
	return calloc(1, sizeof(struct k8s_objects));
}

void k8s_objects_destroy(struct k8s_objects *o)
{
	if (o == NULL)
		return;
	free(o->objs);
	free(o->labels);
	free(o->reqs);
	free(o->values);
	free(o->index);
	free(o->services);
	free(o);
}

void k8s_objects_counts(const struct k8s_objects *o, struct k8s_objects_counts *out)
{
	*out = o->counts;
}

/* Room for `more` elements of `size` in *p (holding n of cap). */
static int reserve(void **p, size_t *cap, size_t n, size_t more, size_t size)
{
	if (n + more <= *cap)
		return 0;
	size_t c = *cap ? *cap : 64;
	while (c < n + more)
		c *= 2;
	void *q = realloc(*p, c * size);
	if (q == NULL)
		return -ENOMEM;
	*p = q;
	*cap = c;
	return 0;
}

static size_t obj_hash(uint8_t kind, uint32_t ns, uint32_t name, size_t mask)
{
	uint64_t h = ((uint64_t)ns << 32 | name) * UINT64_C(0x9e3779b97f4a7c15);
	h ^= (uint64_t)kind * UINT64_C(0xc2b2ae3d27d4eb4f);
	return (size_t)(h >> 29) & mask;
}

/* The slot of (kind, ns, name) in the index: its entry, or the empty one
 * where it would go. */
static uint32_t *obj_slot(const struct k8s_objects *o, uint8_t kind, uint32_t ns,
			  uint32_t name)
{
	size_t i = obj_hash(kind, ns, name, o->index_mask);
	for (;; i = (i + 1) & o->index_mask) {
		uint32_t e = o->index[i];
		if (e == 0)
			return &o->index[i];
		const struct obj *x = &o->objs[e - 1];
		if (x->kind == kind && x->ns == ns && x->name == name)
			return &o->index[i];
	}
}

const struct obj *kj_obj_find(const struct k8s_objects *o, uint8_t kind,
				  uint32_t ns, uint32_t name)
{
	if (o->index == NULL)
		return NULL;
	uint32_t e = *obj_slot(o, kind, ns, name);
	return e != 0 ? &o->objs[e - 1] : NULL;
}

/* Adds an object; -EEXIST for a second one of the same kind, namespace and
 * name, -ENOMEM. Its labels or requirements were appended just before. */
static int obj_add(struct k8s_objects *o, const struct obj *x)
{
	if ((o->n_objs + 1) * 2 > o->index_mask + 1 || o->index == NULL) {
		size_t slots = o->index == NULL ? 256 : (o->index_mask + 1) * 2;
		uint32_t *idx = calloc(slots, sizeof(*idx));
		if (idx == NULL)
			return -ENOMEM;
		free(o->index);
		o->index = idx;
		o->index_mask = slots - 1;
		for (size_t i = 0; i < o->n_objs; i++) {
			const struct obj *y = &o->objs[i];
			*obj_slot(o, y->kind, y->ns, y->name) = (uint32_t)i + 1;
		}
	}
	uint32_t *slot = obj_slot(o, x->kind, x->ns, x->name);
	if (*slot != 0)
		return -EEXIST;
	if (reserve((void **)&o->objs, &o->cap_objs, o->n_objs, 1, sizeof(*o->objs)) < 0)
		return -ENOMEM;
	o->objs[o->n_objs] = *x;
	*slot = (uint32_t)++o->n_objs;
	o->services_stale = true;
	return 0;
}

static int service_order(const void *a, const void *b, void *arg)
{
	const struct k8s_objects *o = arg;
	uint32_t x = o->objs[*(const uint32_t *)a].ns, y = o->objs[*(const uint32_t *)b].ns;
	return x < y ? -1 : x > y;
}

/* The Services of namespace `ns`: *first into o->services, count returned. */
size_t kj_services_of(struct k8s_objects *o, uint32_t ns, size_t *first)
{
	*first = 0;
	if (o->services_stale) {
		o->n_services = 0;
		if (reserve((void **)&o->services, &o->cap_services, 0, o->n_objs + 1,
			    sizeof(*o->services)) < 0)
			return 0; /* n_services 0: retried next time */
		for (size_t i = 0; i < o->n_objs; i++)
			if (o->objs[i].kind == OBJ_SERVICE)
				o->services[o->n_services++] = (uint32_t)i;
		qsort_r(o->services, o->n_services, sizeof(*o->services),
			service_order, o);
		o->services_stale = false;
	}
	size_t lo = 0, hi = o->n_services;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (o->objs[o->services[mid]].ns < ns)
			lo = mid + 1;
		else
			hi = mid;
	}
	size_t n = 0;
	while (lo + n < o->n_services && o->objs[o->services[lo + n]].ns == ns)
		n++;
	*first = lo;
	return n;
}

/* Whether every pair of `sel` (sorted by key) is among `labels` (sorted). */
bool kj_labels_subset(const struct label *sel, size_t n_sel,
			  const struct label *labels, size_t n_labels)
{
	for (size_t i = 0; i < n_sel; i++) {
		uint32_t v;
		if (!labels_get(labels, (unsigned)n_labels, sel[i].key, &v) ||
		    v != sel[i].value)
			return false;
	}
	return true;
}

/* --- objects: the first pass (k8s_objects_read_*) ------------------------------ */

int kj_obj_kind_of(const char *kind, size_t len)
{
	for (int k = 0; k < OBJ_KINDS; k++)
		if (json_in_str_is(kind, len, obj_kind_name[k]))
			return k;
	return -1;
}

/* A map of strings at member `key` of `obj` (a Namespace's labels, a
 * Service's or RC's selector) appended to the objects' labels, sorted by
 * key, with room for one more; *n its size. */
static int obj_label_map(struct decoder *d, const json_t *obj, const char *key,
			 size_t *n, bool selector)
{
	struct k8s_objects *o = d->ctx->objects;
	json_t *map = json_object_get(obj, key);
	*n = 0;
	if (json_is_object(map) && json_object_size(map) > OBJECT_MAX_LABELS) {
		size_t mark = json_in_field(&d->in, key);
		int rc = json_in_fail(&d->in, -ENOSPC, "%zu entries, at most %d (OBJECT_MAX_LABELS)",
			      json_object_size(map), OBJECT_MAX_LABELS);
		json_in_pop(&d->in, mark);
		return rc;
	}
	if (reserve((void **)&o->labels, &o->cap_labels, o->n_labels,
		    OBJECT_MAX_LABELS + 1, sizeof(*o->labels)) < 0)
		return json_in_fail(&d->in, -ENOMEM, "out of memory");
	return kj_label_map(d, obj, key, &o->labels[o->n_labels], OBJECT_MAX_LABELS, n,
			 selector);
}

/* The object's name (and namespace) as intern ids, and d->in.subject. */
static int obj_identity(struct decoder *d, const json_t *obj, int kind, struct obj *x)
{
	static const char *const who[OBJ_KINDS] = {
		[OBJ_NAMESPACE] = "namespace", [OBJ_SERVICE] = "service",
		[OBJ_RC] = "replicationcontroller", [OBJ_RS] = "replicaset",
		[OBJ_SS] = "statefulset",
	};
	const char *ns, *name;
	size_t ns_len, name_len;
	bool namespaced = kind != OBJ_NAMESPACE;
	*x = (struct obj){.kind = (uint8_t)kind, .first = 0};
	int rc = kj_object_name(d, obj, who[kind], namespaced, &ns, &ns_len, &name,
			     &name_len);
	if (rc < 0)
		return rc;
	size_t mark = json_in_field(&d->in, "metadata.name");
	rc = kj_intern_here(d, name, name_len, &x->name);
	json_in_pop(&d->in, mark);
	if (rc == 0 && namespaced) {
		mark = json_in_field(&d->in, "metadata.namespace");
		rc = kj_intern_here(d, ns, ns_len, &x->ns);
		json_in_pop(&d->in, mark);
	}
	return rc;
}

/* Adds `x`, whose labels (x->n of them) were written at o->n_labels. */
static int obj_added(struct decoder *d, struct obj *x, bool labels)
{
	struct k8s_objects *o = d->ctx->objects;
	if (labels)
		x->first = (uint32_t)o->n_labels;
	int rc = obj_add(o, x);
	if (rc == -EEXIST)
		return json_in_fail(&d->in, -EEXIST, "a second %s of this name",
			    obj_kind_name[x->kind]);
	if (rc < 0)
		return json_in_fail(&d->in, rc, "out of memory");
	if (labels)
		o->n_labels += x->n;
	return 0;
}

/* A Namespace: its labels, and kubernetes.io/metadata.name, which the API
 * server sets to its name (SetDefaults_Namespace). */
int kj_decode_namespace(struct decoder *d, const json_t *obj)
{
	struct k8s_objects *o = d->ctx->objects;
	struct obj x;
	json_t *meta;
	uint32_t key;
	size_t n = 0;
	int rc = obj_identity(d, obj, OBJ_NAMESPACE, &x);
	if (rc == 0)
		rc = json_in_get(&d->in, obj, "metadata", JSON_IN_OBJECT, &meta);
	if (rc < 0)
		return rc;
	size_t mark = json_in_field(&d->in, "metadata");
	rc = obj_label_map(d, meta, "labels", &n, false);
	json_in_pop(&d->in, mark);
	if (rc == 0)
		rc = kj_intern_here(d, "kubernetes.io/metadata.name",
				 strlen("kubernetes.io/metadata.name"), &key);
	if (rc < 0)
		return rc;
	kj_label_set_merge(&o->labels[o->n_labels], &n, &(struct label){key, x.name});
	x.n = (uint32_t)n;
	rc = obj_added(d, &x, true);
	if (rc == 0)
		o->counts.namespaces++;
	return rc;
}

/* A Service: its spec.selector. One without (nil) selects no pod
 * (GetPodServices); one with {} selects every pod of its namespace and
 * adds nothing to a selector: neither is kept. */
int kj_decode_service(struct decoder *d, const json_t *obj)
{
	struct obj x;
	json_t *spec;
	size_t n = 0;
	int rc = obj_identity(d, obj, OBJ_SERVICE, &x);
	if (rc == 0)
		rc = json_in_get(&d->in, obj, "spec", JSON_IN_OBJECT, &spec);
	if (rc < 0 || spec == NULL)
		return rc;
	size_t mark = json_in_field(&d->in, "spec");
	rc = obj_label_map(d, spec, "selector", &n, true);
	json_in_pop(&d->in, mark);
	if (rc < 0 || n == 0)
		return rc;
	x.n = (uint32_t)n;
	rc = obj_added(d, &x, true);
	if (rc == 0)
		d->ctx->objects->counts.services++;
	return rc;
}

/* A ReplicationController: its spec.selector, which the API server
 * defaults to spec.template.metadata.labels when empty
 * (SetDefaults_ReplicationController). */
int kj_decode_rc(struct decoder *d, const json_t *obj)
{
	struct obj x;
	json_t *spec, *tmpl = NULL, *meta = NULL;
	size_t n = 0;
	int rc = obj_identity(d, obj, OBJ_RC, &x);
	if (rc == 0)
		rc = json_in_get(&d->in, obj, "spec", JSON_IN_OBJECT, &spec);
	if (rc < 0)
		return rc;
	if (spec != NULL) {
		size_t mark = json_in_field(&d->in, "spec");
		rc = obj_label_map(d, spec, "selector", &n, true);
		if (rc == 0 && n == 0)
			rc = json_in_get(&d->in, spec, "template", JSON_IN_OBJECT, &tmpl);
		if (rc == 0 && tmpl != NULL) {
			size_t m = json_in_field(&d->in, "template");
			rc = json_in_get(&d->in, tmpl, "metadata", JSON_IN_OBJECT, &meta);
			if (rc == 0 && meta != NULL) {
				size_t mm = json_in_field(&d->in, "metadata");
				rc = obj_label_map(d, meta, "labels", &n, false);
				json_in_pop(&d->in, mm);
			}
			json_in_pop(&d->in, m);
		}
		json_in_pop(&d->in, mark);
	}
	if (rc < 0)
		return rc;
	x.n = (uint32_t)n;
	rc = obj_added(d, &x, true);
	if (rc == 0)
		d->ctx->objects->counts.controllers++;
	return rc;
}

/* A ReplicaSet or StatefulSet: its spec.selector, a LabelSelector,
 * validated as the API server validates it (parsed into the decoder's
 * group pool, then copied out). nil and {} add no requirement. */
int kj_decode_controller(struct decoder *d, const json_t *obj, int kind)
{
	struct k8s_objects *o = d->ctx->objects;
	struct pod_group *g = &d->group;
	struct group_selector sel = {0};
	struct obj x;
	json_t *spec;
	int rc = obj_identity(d, obj, kind, &x);
	if (rc == 0)
		rc = json_in_get(&d->in, obj, "spec", JSON_IN_OBJECT, &spec);
	if (rc < 0)
		return rc;
	memset(g, 0, sizeof(*g));
	if (spec != NULL) {
		size_t mark = json_in_field(&d->in, "spec");
		rc = kj_label_selector(d, spec, "selector", &sel);
		json_in_pop(&d->in, mark);
	}
	if (rc == 0 && (reserve((void **)&o->reqs, &o->cap_reqs, o->n_reqs, sel.n_reqs,
				sizeof(*o->reqs)) < 0 ||
			reserve((void **)&o->values, &o->cap_values, o->n_values,
				g->n_values, sizeof(*o->values)) < 0))
		rc = json_in_fail(&d->in, -ENOMEM, "out of memory");
	if (rc < 0)
		return rc;
	x.first = (uint32_t)o->n_reqs;
	x.n = sel.n_reqs;
	rc = obj_added(d, &x, false);
	if (rc < 0)
		return rc;
	for (unsigned i = 0; i < sel.n_reqs; i++) {
		const struct group_req *r = &g->reqs[sel.first_req + i];
		o->reqs[o->n_reqs++] = (struct obj_req){
			.key = r->key, .op = r->op, .first_value = (uint32_t)o->n_values,
			.n_values = r->n_values};
		if (r->n_values > 0) /* values may be NULL with none yet */
			memcpy(&o->values[o->n_values], &g->values[r->first_value],
			       r->n_values * sizeof(*o->values));
		o->n_values += r->n_values;
	}
	o->counts.controllers++;
	return 0;
}
