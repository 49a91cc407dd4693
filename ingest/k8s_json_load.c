/* Kubernetes Node and Pod JSON into the model: see k8s_json.h.
 *
 * The buffer is read as a stream of JSON values (jansson's json_loadb with
 * JSON_DISABLE_EOF_CHECK, resumed where the last value ended), so one
 * object, one List, one array and JSON Lines are all the same loop; a
 * syntax error is placed by line and column in the whole buffer. Each value
 * is an object, a list of them (any kind ending in "List"), or an array of
 * those. One object is decoded at a time into a zero-filled record (so
 * equal specs are equal bytes, model.h) and handed to the visitor; nothing
 * of it is kept after.
 *
 * Two passes, over the same stream: the first (k8s_objects_read_*) keeps
 * the Namespaces, Services and controllers in a k8s_objects; the second
 * decodes Nodes and Pods, which read them (a term's namespaceSelector, a
 * pod's default spread selector), so the objects may come anywhere in
 * either file. A buffer that cannot name those kinds skips the first.
 *
 * The decoder applies what the API server would have applied before a
 * scheduler saw the object: requests defaulted from limits, pod-level
 * requests defaulted (defaults.go), allocatable from capacity, hostPort
 * from containerPort under hostNetwork, a Namespace's name label. Requests
 * follow k8s.io/component-helpers/resource/helpers.go (PodRequests, with and
 * without NonMissingContainerRequests, pod-level resources replacing the
 * containers' aggregate) and are computed in one pass over the containers,
 * with overflow checks. A pod to place that needs what shmsched does not
 * do (volume binding, gates, claims) is decoded whole and visited with its
 * reason, for the visitor to answer on its own.
 *
 * Devices (docs/reference/kubernetes-fields.md, "Devices") are read last, from annotations, labels and
 * the nvidia.com/gpu resource already decoded; a pod's exclusive cores need
 * its QoS class, tracked while its containers' requests are read (or taken
 * from spec.resources when set).
 *
 * A visitor that leaves `node` or `pod` NULL does not expect that kind in
 * its file: meeting one is an error, not a silent skip.
 *
 * Messages, field paths and typed access are the strict JSON core's
 * (base/json_in.h), which the gateway's request bodies share: one error
 * line, "<file>: <object>: <path>: <what>".
 *
 * Cost: linear in the input (jansson's tree; twice when the first pass
 * runs), plus a sort of at most NODE_MAX_LABELS labels per node and 16
 * selector entries per pod; a pod to place with objects known also walks
 * its namespace's Services (found by binary search) and, per term with a
 * namespaceSelector, the Namespaces.
 */
#include "ingest/k8s_json_internal.h"
#include "ingest/kueue_json.h"

/* --- objects, lists, the stream ----------------------------------------- */

/* A kind that names a list ("List", "NodeList", "ServiceList" ...): its
 * items' kind when they leave theirs out (none for "List"), into buf. */
static bool list_kind(const char *kind, size_t len, char *item, size_t item_len)
{
	if (len < 4 || memcmp(kind + len - 4, "List", 4) != 0)
		return false;
	size_t n = len - 4 < item_len - 1 ? len - 4 : item_len - 1;
	memcpy(item, kind, n);
	item[n] = '\0';
	return true;
}

static int decode_item(struct decoder *d, const json_t *obj, const char *item_kind,
		       bool top);

/* k8s_set_field_validation()'s: written once in main(), before threads. */
static int fv_level = K8S_FIELDS_STRICT;
static void (*fv_warn)(void *arg, const char *line);
static void *fv_warn_arg;

void k8s_set_field_validation(int level, void (*warn)(void *arg, const char *line),
			      void *arg)
{
	fv_level = level;
	fv_warn = warn;
	fv_warn_arg = arg;
}

/* Field validation (k8s_set_field_validation): the object's member names
 * against its Kubernetes type, by policy/policy.h's walker. Strict refuses
 * the object naming its unknown fields; Warn hands them to fv_warn;
 * Ignore does not look. The second pass only (the first reads the same
 * objects again there). */
static int check_fields(struct decoder *d, const json_t *obj, const char *kind,
			size_t kind_len)
{
	if (d->objects_pass || fv_level == K8S_FIELDS_IGNORE)
		return 0;
	char k[64];
	if (kind_len >= sizeof(k) || memchr(kind, '\0', kind_len) != NULL)
		return 0;
	memcpy(k, kind, kind_len);
	k[kind_len] = '\0';
	const char *api = json_string_value(json_object_get(obj, "apiVersion"));
	struct k8s_fields_report r;
	if (k8s_fields_check(obj, api, k, "", &r) == 0)
		return 0;
	/* Who it is, as far as its metadata says (the kind's own decoder
	 * has not read it yet). */
	const json_t *meta = json_object_get(obj, "metadata");
	const char *ns = json_string_value(json_object_get(meta, "namespace"));
	const char *name = json_string_value(json_object_get(meta, "name"));
	char who[sizeof(d->in.subject)];
	if (name != NULL)
		snprintf(who, sizeof(who), "%s %.100s%s%.200s",
			 strcmp(k, "Pod") == 0 ? "pod" : strcmp(k, "Node") == 0 ? "node" : k,
			 ns != NULL ? ns : strcmp(k, "Pod") == 0 ? "default" : "",
			 ns != NULL || strcmp(k, "Pod") == 0 ? "/" : "", name);
	else
		snprintf(who, sizeof(who), "%s", d->in.subject);
	char line[K8S_FIELDS_MAX_REPORT * K8S_FIELDS_MSG_MAX + 64];
	k8s_fields_report_line(&r, line, sizeof(line));
	if (fv_level == K8S_FIELDS_WARN) {
		if (fv_warn != NULL) {
			char msg[sizeof(line) + 512];
			snprintf(msg, sizeof(msg), "%s: %s: %s", d->in.source, who, line);
			fv_warn(fv_warn_arg, msg);
		}
		return 0;
	}
	if (d->in.err != NULL && d->in.err_len > 0)
		snprintf(d->in.err, d->in.err_len, "%s: %s: %s (fieldValidation=Strict; "
			 "Warn or Ignore to load it anyway)", d->in.source, who, line);
	return -EINVAL;
}

static int decode_list(struct decoder *d, const json_t *obj, const char *item_kind)
{
	json_t *items, *item;
	size_t i;
	int rc = json_in_get(&d->in, obj, "items", JSON_IN_ARRAY, &items);
	if (rc < 0 || items == NULL)
		return rc;
	json_array_foreach(items, i, item) {
		rc = decode_item(d, item, item_kind[0] != '\0' ? item_kind : NULL, false);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* One object (or, at the top, a list of them). The first pass
 * (d->objects_pass) reads Namespaces, Services and controllers and passes
 * over the rest unchecked (the second pass checks it); the second decodes
 * Nodes and Pods, passes over what the first read, and skips (cluster
 * file) or refuses other kinds. */
static int decode_item(struct decoder *d, const json_t *obj, const char *item_kind,
		       bool top)
{
	const char *kind;
	size_t kind_len;
	char q[JSON_IN_SHOW_MAX + 16], items_kind[64];
	snprintf(d->in.subject, sizeof(d->in.subject), "object #%zu", d->index);
	json_in_pop(&d->in, 0);
	if (!json_is_object(obj)) {
		d->index++;
		if (d->objects_pass)
			return 0;
		return json_in_fail(&d->in, -EINVAL, "expected an object, got %s", json_in_kind(obj));
	}
	int rc = json_in_get_str(&d->in, obj, "kind", &kind, &kind_len);
	if (rc < 0) {
		d->index++;
		return d->objects_pass ? 0 : rc;
	}
	if (top && list_kind(kind, kind_len, items_kind, sizeof(items_kind))) {
		rc = check_fields(d, obj, kind, kind_len);
		return rc < 0 ? rc : decode_list(d, obj, items_kind);
	}
	size_t index = d->index++;
	if (kind_len == 0 && item_kind != NULL) {
		kind = item_kind;
		kind_len = strlen(kind);
	}
	int okind = kj_obj_kind_of(kind, kind_len);
	if (d->objects_pass) {
		switch (okind) {
		case OBJ_NAMESPACE:
			return kj_decode_namespace(d, obj);
		case OBJ_SERVICE:
			return kj_decode_service(d, obj);
		case OBJ_RC:
			return kj_decode_rc(d, obj);
		case OBJ_RS:
		case OBJ_SS:
			return kj_decode_controller(d, obj, okind);
		default:
			return 0;
		}
	}
	rc = kind_len > 0 ? check_fields(d, obj, kind, kind_len) : 0;
	if (rc < 0)
		return rc;
	if (kind_len == 0) {
		/* No kind and no list to say: only a pod has containers. */
		json_t *spec = json_object_get(obj, "spec");
		if (json_is_object(spec) && json_object_get(spec, "containers") != NULL) {
			rc = check_fields(d, obj, "Pod", 3);
			return rc < 0 ? rc : kj_decode_pod(d, obj, index);
		}
		return json_in_fail(&d->in, -EINVAL, "kind missing (and no spec.containers to "
			    "tell a Pod)");
	}
	if (json_in_str_is(kind, kind_len, "Node"))
		return kj_decode_node(d, obj);
	if (json_in_str_is(kind, kind_len, "Pod"))
		return kj_decode_pod(d, obj, index);
	if (json_in_str_is(kind, kind_len, "PriorityClass"))
		return kj_decode_priority_class(d, obj);
	if (json_in_str_is(kind, kind_len, "PodGroup"))
		return kj_decode_pod_group(d, obj);
	if (json_in_str_is(kind, kind_len, "Workload"))
		return kj_decode_workload(d, obj);
	if (json_in_str_is(kind, kind_len, "PodDisruptionBudget"))
		return kj_decode_pdb(d, obj);
	if (okind >= 0)
		return 0; /* read by the first pass */
	if (d->ctx->cluster_file &&
	    kueue_is_object(json_string_value(json_object_get(obj, "apiVersion")),
			    kind, kind_len)) {
		/* Kueue's: read by ingest/kueue_json.h (cluster_load.c). */
		if (d->ctx->skipped != NULL)
			d->ctx->skipped->kueue++;
		return 0;
	}
	if (d->ctx->cluster_file) {
		kj_count_skipped(d, kind, kind_len);
		return 0;
	}
	return json_in_fail_at(&d->in, "kind", -EINVAL, "%s is not Node, Pod, PriorityClass, PodGroup, "
		       "Workload, PodDisruptionBudget, Namespace, Service, ReplicationController, ReplicaSet or "
		       "StatefulSet%s (a cluster "
		       "file skips other kinds; a pods file refuses them)",
		       json_in_show_str(kind, kind_len, q, sizeof(q)),
		       top ? ", nor a list of them" : "");
}

static int decode_value(struct decoder *d, const json_t *root)
{
	if (!json_is_array(root))
		return decode_item(d, root, NULL, true);
	json_t *item;
	size_t i;
	json_array_foreach(root, i, item) {
		int rc = decode_item(d, item, NULL, true);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* "<file>:<line>:<column>: <text>", placed in the whole buffer (jansson
 * counts from where this value began; columns in characters). */
static int syntax_error(struct decoder *d, const char *buf, size_t off,
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
	if (d->in.err != NULL && d->in.err_len > 0) {
		if (je->line < 1)
			snprintf(d->in.err, d->in.err_len, "%s: %s", d->in.source, je->text);
		else
			snprintf(d->in.err, d->in.err_len, "%s:%ld:%ld: %s", d->in.source,
				 line + je->line - 1,
				 je->line == 1 ? col + je->column : (long)je->column,
				 je->text);
	}
	return -EINVAL;
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* Every JSON value of the buffer through decode_value(). */
static int load_stream(const char *name, const char *buf, size_t len,
		       struct k8s_ctx *ctx, const struct k8s_visitor *v,
		       bool objects_pass, char *err, size_t err_len)
{
	struct decoder *d = calloc(1, sizeof(*d));
	if (d == NULL) {
		if (err != NULL && err_len > 0)
			snprintf(err, err_len, "%s: out of memory", name);
		return -ENOMEM;
	}
	d->in.source = name;
	d->ctx = ctx;
	d->v = v;
	d->in.err = err;
	d->in.err_len = err_len;
	d->objects_pass = objects_pass;
	if (err != NULL && err_len > 0)
		err[0] = '\0';
	int rc = 0;
	if (len > INT_MAX) {
		/* jansson reports positions as int. */
		if (err != NULL && err_len > 0)
			snprintf(err, err_len, "%s: %zu bytes, more than %d",
				 name, len, INT_MAX);
		rc = -EFBIG;
		goto out;
	}
	size_t off = 0;
	while (off < len && is_space(buf[off]))
		off++;
	while (off < len) {
		json_error_t je;
		json_t *root = json_loadb(buf + off, len - off,
					  JSON_DISABLE_EOF_CHECK, &je);
		if (root == NULL) {
			rc = syntax_error(d, buf, off, &je);
			goto out;
		}
		rc = decode_value(d, root);
		json_decref(root);
		if (rc < 0)
			goto out;
		if (je.position <= 0) {
			/* Cannot happen for an object or array; never loop. */
			rc = syntax_error(d, buf, off, &je);
			goto out;
		}
		off += (size_t)je.position;
		while (off < len && is_space(buf[off]))
			off++;
	}
out:
	free(d);
	return rc;
}

int k8s_load_buffer(const char *name, const char *buf, size_t len,
		    struct k8s_ctx *ctx, const struct k8s_visitor *v, char *err,
		    size_t err_len)
{
	return load_stream(name, buf, len, ctx, v, false, err, err_len);
}

/* Whether the buffer may name a kind the first pass reads: its bytes, or
 * a \u escape that could spell one. A buffer with none (a file of Nodes
 * and Pods only) is not parsed twice. */
static bool may_hold_objects(const char *buf, size_t len)
{
	static const char *const words[] = {"Namespace", "Service", "ReplicaSet",
					    "StatefulSet", "ReplicationController",
					    "\\u"};
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (memmem(buf, len, words[i], strlen(words[i])) != NULL)
			return true;
	return false;
}

int k8s_objects_read_buffer(const char *name, const char *buf, size_t len,
			    struct k8s_ctx *ctx, char *err, size_t err_len)
{
	if (err != NULL && err_len > 0)
		err[0] = '\0';
	if (ctx->objects == NULL) {
		if (err != NULL && err_len > 0)
			snprintf(err, err_len, "%s: no k8s_objects to read into", name);
		return -EINVAL;
	}
	if (len <= INT_MAX && !may_hold_objects(buf, len))
		return 0;
	static const struct k8s_visitor none = {0};
	return load_stream(name, buf, len, ctx, &none, true, err, err_len);
}

/* The whole file in *buf (malloc'd). */
static int read_whole(const char *path, char **out, size_t *out_len, char *err,
		      size_t err_len)
{
	char ebuf[128];
	int rc = file_read_all(path, 0, out, out_len);
	if (rc < 0)
		errmsg(err, err_len, "%s: cannot read: %s", path,
		       strerror_r(-rc, ebuf, sizeof(ebuf)));
	return rc;
}

int k8s_load_file(const char *path, struct k8s_ctx *ctx,
		  const struct k8s_visitor *v, char *err, size_t err_len)
{
	char *buf;
	size_t len;
	int rc = read_whole(path, &buf, &len, err, err_len);
	if (rc < 0)
		return rc;
	rc = k8s_load_buffer(path, buf, len, ctx, v, err, err_len);
	free(buf);
	return rc;
}

int k8s_objects_read_file(const char *path, struct k8s_ctx *ctx, char *err,
			  size_t err_len)
{
	char *buf;
	size_t len;
	int rc = read_whole(path, &buf, &len, err, err_len);
	if (rc < 0)
		return rc;
	rc = k8s_objects_read_buffer(path, buf, len, ctx, err, err_len);
	free(buf);
	return rc;
}

/* k8s_load_one()'s visitor: counts objects, keeps the one wanted. */
struct one {
	struct pod_spec *pod;
	struct node_spec *node;
	int got;
};

static int one_pod(void *arg, const struct pod_spec *pod,
		   const struct k8s_pod_meta *meta, char *err, size_t err_len)
{
	struct one *o = arg;
	if (meta->other_scheduler) {
		snprintf(err, err_len, "spec.schedulerName names a scheduler no "
			 "profile of shmsched's configuration has");
		return -EINVAL;
	}
	if (meta->unsupported != NULL) {
		/* A template is placed as given: it cannot be answered on its own. */
		snprintf(err, err_len, "%s: shmsched cannot place this pod",
			 meta->unsupported);
		return -EINVAL;
	}
	if (o->pod == NULL || o->got++ > 0) {
		snprintf(err, err_len, "expected exactly one %s",
			 o->pod != NULL ? "Pod" : "Node");
		return -EINVAL;
	}
	*o->pod = *pod;
	return 0;
}

static int one_node(void *arg, const struct node_spec *node, char *err,
		    size_t err_len)
{
	struct one *o = arg;
	if (o->node == NULL || o->got++ > 0) {
		snprintf(err, err_len, "expected exactly one %s",
			 o->pod != NULL ? "Pod" : "Node");
		return -EINVAL;
	}
	*o->node = *node;
	return 0;
}

int k8s_load_one(const char *name, const char *buf, size_t len,
		 struct k8s_ctx *ctx, struct pod_spec *pod, struct node_spec *node,
		 char *err, size_t err_len)
{
	struct one o = {.pod = pod, .node = pod != NULL ? NULL : node};
	struct k8s_visitor v = {.arg = &o, .pod = one_pod, .node = one_node};
	int rc = k8s_load_buffer(name, buf, len, ctx, &v, err, err_len);
	if (rc == 0 && o.got != 1) {
		snprintf(err, err_len, "%s: expected exactly one %s", name,
			 pod != NULL ? "Pod" : "Node");
		rc = -EINVAL;
	}
	return rc;
}
