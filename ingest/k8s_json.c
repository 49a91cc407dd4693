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
 * Cost: linear in the input (jansson's tree; twice when the first pass
 * runs), plus a sort of at most NODE_MAX_LABELS labels per node and 16
 * selector entries per pod; a pod to place with objects known also walks
 * its namespace's Services (found by binary search) and, per term with a
 * namespaceSelector, the Namespaces.
 */
#include "ingest/k8s_json.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "ingest/quantity.h"
#include "policy/policy.h"
#include "shm/shm.h"
#include "workers/workers.h"

/* The API server's stand-ins for a missing request, used by the scheduler's
 * LeastAllocated / MostAllocated scoring
 * (pkg/scheduler/util: DefaultMilliCPURequest, DefaultMemoryRequest). */
#define NONZERO_CPU_MILLI 100
#define NONZERO_MEM_BYTES (INT64_C(200) * 1024 * 1024)

#define SHOW_MAX 80 /* bytes of a value quoted in a message */

struct decoder {
	const char *file;
	struct k8s_ctx *ctx;
	const struct k8s_visitor *v;
	char *err;
	size_t err_len;
	size_t index;  /* position of the next Node or Pod in the file */
	char who[320]; /* "pod default/web-7", "node n1", "object #3" */
	char path[512];
	size_t path_len;
	struct node_spec node;
	struct pod_spec pod;
	struct pod_group group; /* the pod's, before it is encoded */
	/* Guaranteed QoS so far: every container seen has cpu and memory
	 * limits equal to its (defaulted) requests; needs one container. */
	bool guaranteed;
	size_t n_containers;
	bool other_scheduler; /* the pod names a scheduler other than ours */
	uint8_t unsupported_kind; /* enum k8s_unsupported: the pod's own answer */
	char unsupported[768];    /* and its "<path>: <why>" */
	bool objects_pass;        /* k8s_objects_read_*: only the objects' kinds */
};

/* --- messages ----------------------------------------------------------- */

static void append(char *buf, size_t len, size_t *used, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void append(char *buf, size_t len, size_t *used, const char *fmt, ...)
{
	if (buf == NULL || *used >= len)
		return;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf + *used, len - *used, fmt, ap);
	va_end(ap);
	if (n > 0)
		*used = *used + (size_t)n < len ? *used + (size_t)n : len - 1;
}

/* `s` quoted for a message: escaped, cut at SHOW_MAX bytes. */
static const char *show_str(const char *s, size_t len, char *buf, size_t buf_len)
{
	size_t used = 0;
	append(buf, buf_len, &used, "\"");
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		if (i == SHOW_MAX) {
			append(buf, buf_len, &used, "...");
			break;
		}
		if (c == '"' || c == '\\')
			append(buf, buf_len, &used, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			append(buf, buf_len, &used, "\\x%02x", c);
		else
			append(buf, buf_len, &used, "%c", c);
	}
	append(buf, buf_len, &used, "\"");
	return buf;
}

static const char *json_kind(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return "an object";
	case JSON_ARRAY:
		return "an array";
	case JSON_STRING:
		return "a string";
	case JSON_INTEGER:
	case JSON_REAL:
		return "a number";
	case JSON_TRUE:
	case JSON_FALSE:
		return "a boolean";
	case JSON_NULL:
		return "null";
	}
	return "a value";
}

/* A JSON value for a message. */
static const char *show(const json_t *v, char *buf, size_t buf_len)
{
	switch (json_typeof(v)) {
	case JSON_STRING:
		return show_str(json_string_value(v), json_string_length(v), buf,
				buf_len);
	case JSON_INTEGER:
		snprintf(buf, buf_len, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		return buf;
	case JSON_REAL:
		snprintf(buf, buf_len, "%.17g", json_real_value(v));
		return buf;
	case JSON_OBJECT:
	case JSON_ARRAY:
	case JSON_TRUE:
	case JSON_FALSE:
	case JSON_NULL:
		break;
	}
	return json_kind(v);
}

static int fail(struct decoder *d, int rc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Writes "<file>: <who>: <path>: <what>" and returns rc. */
static int fail(struct decoder *d, int rc, const char *fmt, ...)
{
	if (d->err == NULL || d->err_len == 0)
		return rc;
	size_t used = 0;
	append(d->err, d->err_len, &used, "%s: %s: ", d->file, d->who);
	if (d->path_len > 0)
		append(d->err, d->err_len, &used, "%s: ", d->path);
	if (used < d->err_len) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(d->err + used, d->err_len - used, fmt, ap);
		va_end(ap);
	}
	return rc;
}

static int fail_at(struct decoder *d, const char *field, int rc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* The same, for `field` below the current path. */
static int fail_at(struct decoder *d, const char *field, int rc, const char *fmt, ...)
{
	char what[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	size_t used = 0;
	if (d->err == NULL || d->err_len == 0)
		return rc;
	append(d->err, d->err_len, &used, "%s: %s: ", d->file, d->who);
	append(d->err, d->err_len, &used, "%s%s%s: %s", d->path,
	       d->path_len > 0 ? "." : "", field, what);
	return rc;
}

/* --- field paths ---------------------------------------------------------- */

static size_t path_push(struct decoder *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Appends to the path; path_pop(mark) undoes it. */
static size_t path_push(struct decoder *d, const char *fmt, ...)
{
	size_t mark = d->path_len;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(d->path + mark, sizeof(d->path) - mark, fmt, ap);
	va_end(ap);
	if (n > 0)
		d->path_len = mark + (size_t)n < sizeof(d->path) ?
				      mark + (size_t)n : sizeof(d->path) - 1;
	return mark;
}

static void path_pop(struct decoder *d, size_t mark)
{
	d->path_len = mark;
	d->path[mark] = '\0';
}

static size_t path_field(struct decoder *d, const char *name)
{
	return d->path_len > 0 ? path_push(d, ".%s", name) : path_push(d, "%s", name);
}

static size_t path_index(struct decoder *d, size_t i)
{
	return path_push(d, "[%zu]", i);
}

/* A map key: `.key` when that reads unambiguously enough, else `["key"]`. */
static size_t path_key(struct decoder *d, const char *key, size_t len)
{
	bool plain = len > 0;
	for (size_t i = 0; i < len && plain; i++) {
		char c = key[i];
		plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			(c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.' ||
			c == '/';
	}
	if (plain)
		return path_field(d, key);
	char q[SHOW_MAX + 16];
	return path_push(d, "[%s]", show_str(key, len, q, sizeof(q)));
}

/* --- typed access ------------------------------------------------------- */

enum want { W_OBJECT, W_ARRAY, W_STRING, W_BOOL, W_INT };

static const char *const want_text[] = {
	[W_OBJECT] = "an object", [W_ARRAY] = "an array", [W_STRING] = "a string",
	[W_BOOL] = "a boolean",   [W_INT] = "an integer",
};

static bool is_wanted(const json_t *v, enum want w)
{
	switch (w) {
	case W_OBJECT:
		return json_is_object(v);
	case W_ARRAY:
		return json_is_array(v);
	case W_STRING:
		return json_is_string(v);
	case W_BOOL:
		return json_is_boolean(v);
	case W_INT:
		return json_is_integer(v);
	}
	return false;
}

/* The value at the current path, checked. */
static int check_type(struct decoder *d, const json_t *v, enum want w)
{
	if (is_wanted(v, w))
		return 0;
	return fail(d, -EINVAL, "expected %s, got %s", want_text[w], json_kind(v));
}

/* Member `key` of `obj`; *out is NULL when absent or null (Go reads a null
 * field as an absent one). */
static int get(struct decoder *d, const json_t *obj, const char *key,
	       enum want w, json_t **out)
{
	json_t *v = json_object_get(obj, key);
	*out = NULL;
	if (v == NULL || json_is_null(v))
		return 0;
	if (!is_wanted(v, w)) {
		size_t mark = path_field(d, key);
		int rc = check_type(d, v, w);
		path_pop(d, mark);
		return rc;
	}
	*out = v;
	return 0;
}

/* A string member; "" when absent or null. */
static int get_str(struct decoder *d, const json_t *obj, const char *key,
		   const char **s, size_t *len)
{
	json_t *v;
	int rc = get(d, obj, key, W_STRING, &v);
	*s = v != NULL ? json_string_value(v) : "";
	*len = v != NULL ? json_string_length(v) : 0;
	return rc;
}

static bool str_is(const char *s, size_t len, const char *lit)
{
	return strlen(lit) == len && memcmp(s, lit, len) == 0;
}

/* Interns `s` found at the current path. */
static int intern_here(struct decoder *d, const char *s, size_t len, uint32_t *id)
{
	int rc = intern_add(d->ctx->strings, s, len, id);
	char q[SHOW_MAX + 16];
	switch (rc) {
	case 0:
		return 0;
	case -E2BIG:
		return fail(d, -EINVAL, "%s is too long (%zu bytes, at most %u)",
			    show_str(s, len, q, sizeof(q)), len, INTERN_MAX_LEN);
	case -EINVAL:
		return fail(d, -EINVAL, "%s holds a NUL byte",
			    show_str(s, len, q, sizeof(q)));
	case -ENOMEM:
		return fail(d, rc, "out of memory");
	default:
		return fail(d, rc, "cannot add %s to the string table (%d)",
			    show_str(s, len, q, sizeof(q)), rc);
	}
}

/* `v`, which must be a string, interned. */
static int string_here(struct decoder *d, const json_t *v, uint32_t *id)
{
	int rc = check_type(d, v, W_STRING);
	return rc < 0 ? rc : intern_here(d, json_string_value(v),
					 json_string_length(v), id);
}

/* Member `key`, a string, interned; id 0 when absent. */
static int get_id(struct decoder *d, const json_t *obj, const char *key, uint32_t *id)
{
	const char *s;
	size_t len;
	*id = 0;
	int rc = get_str(d, obj, key, &s, &len);
	if (rc < 0 || len == 0)
		return rc;
	size_t mark = path_field(d, key);
	rc = intern_here(d, s, len, id);
	path_pop(d, mark);
	return rc;
}

/* --- quantities and resources ------------------------------------------ */

/* The value at the current path as a quantity. Quantity.UnmarshalJSON
 * takes a string (trimmed of spaces) or a bare JSON number. */
static int quantity_here(struct decoder *d, const json_t *v, enum quantity_unit unit,
			 int64_t *out)
{
	char num[48], q[SHOW_MAX + 16];
	const char *s;
	size_t len;
	if (json_is_string(v)) {
		s = json_string_value(v);
		len = json_string_length(v);
		while (len > 0 && (s[0] == ' ' || (s[0] >= '\t' && s[0] <= '\r'))) {
			s++;
			len--;
		}
		while (len > 0 && (s[len - 1] == ' ' ||
				   (s[len - 1] >= '\t' && s[len - 1] <= '\r')))
			len--;
	} else if (json_is_integer(v)) {
		snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT,
			 json_integer_value(v));
		s = num;
		len = strlen(num);
	} else if (json_is_real(v)) {
		/* The shortest text that reads back as the same double: what
		 * the file most likely said ("0.1", not 0.1000000000000000055). */
		double x = json_real_value(v);
		for (int prec = 1; prec <= 17; prec++) {
			snprintf(num, sizeof(num), "%.*g", prec, x);
			if (strtod(num, NULL) == x)
				break;
		}
		s = num;
		len = strlen(num);
	} else {
		return fail(d, -EINVAL, "expected a quantity (a string), got %s",
			    json_kind(v));
	}
	int rc = quantity_parse(s, len, unit, out);
	switch (rc) {
	case 0:
		return 0;
	case -ERANGE:
		return fail(d, -EINVAL, "%s is too large (%s must fit in 64 bits)",
			    show(v, q, sizeof(q)),
			    unit == QUANTITY_MILLI ? "millicores" : "the value");
	case -EDOM:
		return fail(d, -EINVAL, "%s is negative", show(v, q, sizeof(q)));
	default:
		return fail(d, -EINVAL, "%s is not a quantity", show(v, q, sizeof(q)));
	}
}

/* The model's index for resource `name` (found at the current path), or -1
 * for a name the model does not keep. hugepages-* and extended resources
 * are registered. */
static int resource_here(struct decoder *d, const char *name, size_t len, int *idx)
{
	*idx = res_lookup(d->ctx->res, name, len);
	if (*idx >= 0 || !res_name_is_scalar(name, len))
		return 0;
	char q[SHOW_MAX + 16];
	if (d->ctx->no_new_resources)
		return fail(d, -EPERM, "resource %s is not registered: only the "
			    "admin socket registers resource names",
			    show_str(name, len, q, sizeof(q)));
	int rc = res_register(d->ctx->res, name, len);
	if (rc >= 0) {
		*idx = rc;
		return 0;
	}
	if (rc == -ENOSPC)
		return fail(d, -ENOSPC, "resource %s: no room for another named "
			    "resource (at most %d besides cpu, memory, "
			    "ephemeral-storage and pods)",
			    show_str(name, len, q, sizeof(q)),
			    RES_MAX - RES_FIRST_NAMED);
	if (rc == -ENAMETOOLONG)
		return fail(d, -EINVAL, "resource name %s is longer than %d bytes",
			    show_str(name, len, q, sizeof(q)), RES_NAME_MAX - 1);
	return fail(d, rc, "resource %s cannot be registered (%d)",
		    show_str(name, len, q, sizeof(q)), rc);
}

/* A ResourceList (name -> quantity) at member `key`. For each entry with an
 * index, v[idx] is set and has[idx] marked. Entries the model does not keep
 * are still checked as quantities, as the API server would. */
static int resource_list(struct decoder *d, const json_t *obj, const char *key,
			 int64_t v[RES_MAX], bool has[RES_MAX], bool *present)
{
	json_t *list;
	int rc = get(d, obj, key, W_OBJECT, &list);
	if (present != NULL)
		*present = list != NULL;
	if (rc < 0 || list == NULL)
		return rc;
	size_t outer = path_field(d, key);
	const char *name;
	json_t *q;
	json_object_foreach(list, name, q) {
		size_t len = strlen(name);
		size_t mark = path_key(d, name, len);
		int idx;
		rc = resource_here(d, name, len, &idx);
		int64_t value = 0;
		if (rc == 0)
			rc = quantity_here(d, q, idx == RES_CPU ? QUANTITY_MILLI :
							      QUANTITY_UNITS, &value);
		path_pop(d, mark);
		if (rc < 0)
			break;
		if (idx >= 0) {
			v[idx] = value;
			has[idx] = true;
		}
	}
	path_pop(d, outer);
	return rc;
}

/* --- devices ------------------------------------------------------------- */

/* Where devices are read from (docs/reference/kubernetes-fields.md, "Devices"): Alibaba's GPU-sharing
 * annotations, NVIDIA's device plugin resource and GPU feature discovery
 * label, and two annotations of ours for the static CPU manager. */
#define GPU_RESOURCE "nvidia.com/gpu"
#define ANN_GPU_COUNT "alibabacloud.com/gpu-count"
#define ANN_GPU_MILLI "alibabacloud.com/gpu-milli"
#define GPU_MODEL_KEY "alibabacloud.com/gpu-card-model" /* node label, pod annotation */
#define LABEL_GPU_PRODUCT "nvidia.com/gpu.product"
#define ANN_CPU_POLICY "shmsched.io/cpu-manager-policy"
#define ANN_NUMA_NODES "shmsched.io/numa-nodes"
#define ANN_WAIT "shmsched.io/wait" /* pod annotation: "true" or "false" */

/* metadata.annotations of `obj`: *ann NULL when absent. */
static int get_annotations(struct decoder *d, const json_t *obj, json_t **ann)
{
	json_t *meta;
	*ann = NULL;
	int rc = get(d, obj, "metadata", W_OBJECT, &meta);
	if (rc < 0 || meta == NULL)
		return rc;
	size_t mark = path_field(d, "metadata");
	rc = get(d, meta, "annotations", W_OBJECT, ann);
	path_pop(d, mark);
	return rc;
}

/* Annotation `key` as a decimal integer in min..max; *present false when
 * absent. Above max fails with `over_rc` and names `limit`, the model's
 * bound. Call with the path at metadata.annotations. */
static int annotation_int(struct decoder *d, const json_t *ann, const char *key,
			  long min, long max, int over_rc, const char *limit,
			  long *out, bool *present)
{
	char q[SHOW_MAX + 16];
	*out = 0;
	*present = false;
	json_t *v = ann != NULL ? json_object_get(ann, key) : NULL;
	if (v == NULL || json_is_null(v))
		return 0;
	size_t mark = path_key(d, key, strlen(key));
	int rc = check_type(d, v, W_STRING);
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
		rc = fail(d, -EINVAL, "%s is not an integer (%ld..%ld)",
			  show_str(s, len, q, sizeof(q)), min, max);
	else if (n < min)
		rc = fail(d, -EINVAL, "%s is not in %ld..%ld",
			  show_str(s, len, q, sizeof(q)), min, max);
	else if (n > max)
		rc = fail(d, over_rc, "%s is not in %ld..%ld (%s)",
			  show_str(s, len, q, sizeof(q)), min, max, limit);
	else
		*out = n;
	*present = rc == 0;
	path_pop(d, mark);
	return rc;
}

/* The node's GPU count from its resource list (allocatable, else capacity,
 * as the rest of the node): a whole number of devices. */
static int node_gpu_resource(struct decoder *d, const json_t *status, long *n)
{
	char q[SHOW_MAX + 16];
	*n = 0;
	if (status == NULL)
		return 0;
	const char *list_key = "allocatable";
	json_t *list = json_object_get(status, list_key);
	if (list == NULL || json_is_null(list)) {
		list_key = "capacity";
		list = json_object_get(status, list_key);
	}
	json_t *v = json_is_object(list) ? json_object_get(list, GPU_RESOURCE) : NULL;
	if (v == NULL)
		return 0;
	size_t outer = path_field(d, "status");
	path_field(d, list_key);
	path_key(d, GPU_RESOURCE, strlen(GPU_RESOURCE));
	int64_t units = 0, milli = 0;
	/* resource_list() has read it as a quantity already. */
	int rc = quantity_here(d, v, QUANTITY_UNITS, &units);
	if (rc == 0 && units > NODE_MAX_GPUS)
		rc = fail(d, -ENOSPC, "%" PRId64 " devices, at most %d "
			  "(NODE_MAX_GPUS)", units, NODE_MAX_GPUS);
	if (rc == 0)
		rc = quantity_here(d, v, QUANTITY_MILLI, &milli);
	if (rc == 0 && milli % 1000 != 0)
		rc = fail(d, -EINVAL, "%s is not a whole number of devices",
			  show(v, q, sizeof(q)));
	if (rc == 0)
		*n = (long)units;
	path_pop(d, outer);
	return rc;
}

/* The exclusive core pool of a node that opted in. Call with the path at
 * metadata.annotations. */
static int node_cores(struct decoder *d, const json_t *ann)
{
	struct node_devices *dev = &d->node.devices;
	const char *s = "";
	size_t len = 0;
	long numa;
	bool has_numa;
	char q[SHOW_MAX + 16];
	int rc = annotation_int(d, ann, ANN_NUMA_NODES, 1, NODE_MAX_NUMA, -ENOSPC,
				"NODE_MAX_NUMA", &numa, &has_numa);
	if (rc == 0 && ann != NULL)
		rc = get_str(d, ann, ANN_CPU_POLICY, &s, &len);
	if (rc < 0 || ann == NULL)
		return rc;
	/* "" is the kubelet's default, none. */
	if (len == 0 || str_is(s, len, "none"))
		return 0;
	size_t mark = path_key(d, ANN_CPU_POLICY, strlen(ANN_CPU_POLICY));
	if (!str_is(s, len, "static")) {
		rc = fail(d, -EINVAL, "%s is not static or none",
			  show_str(s, len, q, sizeof(q)));
		goto out;
	}
	if (!has_numa)
		numa = 1;
	int64_t cores = d->node.allocatable.v[RES_CPU] / 1000;
	if (cores > NODE_MAX_CORES)
		cores = NODE_MAX_CORES; /* the pool is the first NODE_MAX_CORES */
	cores -= cores % numa;
	if (cores == 0) {
		rc = fail(d, -EINVAL, "static needs a whole core per NUMA node: "
			  "allocatable cpu %" PRId64 "m over %ld NUMA node%s",
			  d->node.allocatable.v[RES_CPU], numa, numa == 1 ? "" : "s");
		goto out;
	}
	dev->n_cores = (uint16_t)cores;
	dev->n_numa = (uint8_t)numa;
out:
	path_pop(d, mark);
	return rc;
}

/* The node's GPU model: the first of its two labels that is set. */
static int node_gpu_model(struct decoder *d, const json_t *obj)
{
	static const char *const keys[] = {GPU_MODEL_KEY, LABEL_GPU_PRODUCT};
	json_t *meta = json_object_get(obj, "metadata");
	json_t *labels = json_is_object(meta) ? json_object_get(meta, "labels") : NULL;
	if (!json_is_object(labels))
		return 0;
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		/* label_map() has checked these are strings. */
		json_t *v = json_object_get(labels, keys[i]);
		if (!json_is_string(v) || json_string_length(v) == 0)
			continue;
		size_t mark = path_field(d, "metadata.labels");
		path_key(d, keys[i], strlen(keys[i]));
		int rc = intern_here(d, json_string_value(v), json_string_length(v),
				     &d->node.devices.gpu_model);
		path_pop(d, mark);
		return rc;
	}
	return 0;
}

/* GPUs, their model and the exclusive core pool of a node whose labels,
 * allocatable and status are decoded. The count annotation wins over the
 * resource (the resource is then not checked as a count). */
static int node_devices(struct decoder *d, const json_t *obj, const json_t *status)
{
	json_t *ann;
	long gpus;
	bool has_count;
	int rc = get_annotations(d, obj, &ann);
	if (rc < 0)
		return rc;
	size_t mark = path_field(d, "metadata.annotations");
	rc = annotation_int(d, ann, ANN_GPU_COUNT, 0, NODE_MAX_GPUS, -ENOSPC,
			    "NODE_MAX_GPUS", &gpus, &has_count);
	if (rc == 0)
		rc = node_cores(d, ann);
	path_pop(d, mark);
	if (rc == 0 && !has_count)
		rc = node_gpu_resource(d, status, &gpus);
	if (rc == 0)
		rc = node_gpu_model(d, obj);
	d->node.devices.n_gpus = (uint8_t)gpus;
	return rc;
}

static int u32_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* The pod's model set from "A|B|C": parts trimmed of blanks, empty ones
 * skipped, duplicates dropped, sorted by id. Call with the path at the
 * annotation. */
static int pod_gpu_models(struct decoder *d, const char *s, size_t len)
{
	struct pod_spec *p = &d->pod;
	size_t start = 0;
	for (size_t i = 0; i <= len; i++) {
		if (i < len && s[i] != '|')
			continue;
		size_t a = start, b = i;
		start = i + 1;
		while (a < b && is_blank(s[a]))
			a++;
		while (b > a && is_blank(s[b - 1]))
			b--;
		if (a == b)
			continue;
		uint32_t id;
		int rc = intern_here(d, s + a, b - a, &id);
		if (rc < 0)
			return rc;
		bool seen = false;
		for (unsigned k = 0; k < p->n_gpu_models && !seen; k++)
			seen = p->gpu_models[k] == id;
		if (seen)
			continue;
		if (p->n_gpu_models == POD_MAX_GPU_MODELS)
			return fail(d, -ENOSPC, "more than %d GPU models "
				    "(POD_MAX_GPU_MODELS)", POD_MAX_GPU_MODELS);
		p->gpu_models[p->n_gpu_models++] = id;
	}
	qsort(p->gpu_models, p->n_gpu_models, sizeof(p->gpu_models[0]), u32_cmp);
	return 0;
}

/* The pod's GPUs (annotations, else the nvidia.com/gpu request), its model
 * set, and its exclusive cores. After pod_requests(): it reads the
 * effective requests and the QoS class. */
static int pod_devices(struct decoder *d, const json_t *obj)
{
	struct pod_spec *p = &d->pod;
	json_t *ann;
	long count, milli;
	bool has_count, has_milli;
	const char *models = "";
	size_t models_len = 0;
	int rc = get_annotations(d, obj, &ann);
	if (rc < 0)
		return rc;
	size_t mark = path_field(d, "metadata.annotations");
	rc = annotation_int(d, ann, ANN_GPU_COUNT, 1, NODE_MAX_GPUS, -ENOSPC,
			    "NODE_MAX_GPUS", &count, &has_count);
	if (rc == 0)
		rc = annotation_int(d, ann, ANN_GPU_MILLI, 1, GPU_MILLI_PER_DEVICE,
				    -EINVAL, "GPU_MILLI_PER_DEVICE", &milli, &has_milli);
	if (rc == 0 && ann != NULL)
		rc = get_str(d, ann, GPU_MODEL_KEY, &models, &models_len);
	if (rc < 0)
		goto out;
	if (has_count || has_milli) {
		if (!has_count)
			count = 1;
		if (!has_milli)
			milli = GPU_MILLI_PER_DEVICE;
		if (count > 1 && milli < GPU_MILLI_PER_DEVICE) {
			size_t m = path_key(d, ANN_GPU_MILLI, strlen(ANN_GPU_MILLI));
			rc = fail(d, -EINVAL, "a multi-GPU pod takes whole devices: "
				  "%s %ld needs %ld, not %ld", ANN_GPU_COUNT, count,
				  (long)GPU_MILLI_PER_DEVICE, milli);
			path_pop(d, m);
			goto out;
		}
	} else {
		int idx = res_lookup(d->ctx->res, GPU_RESOURCE, strlen(GPU_RESOURCE));
		int64_t n = idx >= 0 ? p->request.v[idx] : 0;
		if (n > NODE_MAX_GPUS) {
			path_pop(d, mark);
			rc = fail(d, -ENOSPC, "requests %" PRId64 " %s, at most %d "
				  "(NODE_MAX_GPUS)", n, GPU_RESOURCE, NODE_MAX_GPUS);
			goto out;
		}
		count = (long)n;
		milli = n > 0 ? GPU_MILLI_PER_DEVICE : 0;
	}
	p->num_gpu = (uint8_t)count;
	p->gpu_milli = (uint16_t)milli;
	/* A model set without a GPU decides nothing: ignored. */
	if (p->num_gpu > 0 && models_len > 0) {
		size_t m = path_key(d, GPU_MODEL_KEY, strlen(GPU_MODEL_KEY));
		rc = pod_gpu_models(d, models, models_len);
		path_pop(d, m);
		if (rc < 0)
			goto out;
	}

	/* The static CPU manager's rule, for the pod as a whole. */
	int64_t cpu = p->request.v[RES_CPU];
	if (d->guaranteed && cpu > 0 && cpu % 1000 == 0) {
		if (cpu / 1000 > NODE_MAX_CORES) {
			path_pop(d, mark);
			rc = fail(d, -ENOSPC, "a Guaranteed pod requesting %" PRId64
				  " whole cores takes them exclusively: at most %d "
				  "(NODE_MAX_CORES)", cpu / 1000, NODE_MAX_CORES);
			goto out;
		}
		p->exclusive_cores = (uint16_t)(cpu / 1000);
	}
out:
	path_pop(d, mark);
	return rc;
}

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
	char q[SHOW_MAX + 16];
	if (slash != NULL && memchr(name, '/', name_len) != NULL)
		return fail(d, -EINVAL, "label key %s (%zu bytes) is not a valid "
			    "qualified name: at most one '/'",
			    show_str(s, len, q, sizeof(q)), len);
	if (slash != NULL && !dns1123_subdomain(s, (size_t)(slash - s)))
		return fail(d, -EINVAL, "label key %s (%zu bytes): its prefix (%zu "
			    "bytes) is not a DNS-1123 subdomain (at most %u bytes: "
			    "lowercase alphanumerics, '-' or '.', each part starting "
			    "and ending with an alphanumeric)",
			    show_str(s, len, q, sizeof(q)), len,
			    (size_t)(slash - s), LABEL_PREFIX_MAX);
	if (!qualified_part(name, name_len))
		return fail(d, -EINVAL, "label key %s (%zu bytes): its name (%zu "
			    "bytes) must be 1 to %u characters: alphanumerics, '-', "
			    "'_' or '.', starting and ending with an alphanumeric",
			    show_str(s, len, q, sizeof(q)), len, name_len,
			    LABEL_NAME_MAX);
	return 0;
}

/* A label value as metadata.labels holds it (IsValidLabelValue). */
static int check_label_value_strict(struct decoder *d, const char *s, size_t len)
{
	char q[SHOW_MAX + 16];
	if (len == 0 || qualified_part(s, len))
		return 0;
	return fail(d, -EINVAL, "%s is not a valid label value (%zu bytes; at most "
		    "%u characters: alphanumerics, '-', '_' or '.', starting and "
		    "ending with an alphanumeric)", show_str(s, len, q, sizeof(q)),
		    len, LABEL_NAME_MAX);
}

static int check_label_value(struct decoder *d, const char *s, size_t len);

/* A map of strings (labels, nodeSelector, a selector's matchLabels) at
 * member `key`, into `out` sorted by key id; every key and value checked
 * as ValidateLabels checks them before anything is interned (a
 * `selector`'s values as check_label_value() says). */
static int label_map(struct decoder *d, const json_t *obj, const char *key,
		     struct label *out, size_t max, size_t *n, bool selector)
{
	json_t *map;
	int rc = get(d, obj, key, W_OBJECT, &map);
	*n = 0;
	if (rc < 0 || map == NULL)
		return rc;
	size_t outer = path_field(d, key);
	if (json_object_size(map) > max) {
		rc = fail(d, -ENOSPC, "%zu entries, at most %zu",
			  json_object_size(map), max);
		goto out;
	}
	const char *k;
	json_t *val;
	json_object_foreach(map, k, val) {
		size_t len = strlen(k);
		size_t mark = path_key(d, k, len);
		struct label *l = &out[*n];
		rc = check_type(d, val, W_STRING);
		if (rc == 0)
			rc = check_label_key(d, k, len);
		if (rc == 0)
			rc = selector ? check_label_value(d, json_string_value(val),
							  json_string_length(val))
				      : check_label_value_strict(d, json_string_value(val),
								 json_string_length(val));
		if (rc == 0)
			rc = intern_here(d, k, len, &l->key);
		if (rc == 0)
			rc = string_here(d, val, &l->value);
		path_pop(d, mark);
		if (rc < 0)
			goto out;
		(*n)++;
	}
	qsort(out, *n, sizeof(*out), label_cmp);
out:
	path_pop(d, outer);
	return rc;
}

static int taint_effect(const char *s, size_t len, bool allow_all, uint8_t *out)
{
	if (allow_all && len == 0)
		*out = TAINT_EFFECT_ALL;
	else if (str_is(s, len, "NoSchedule"))
		*out = TAINT_NO_SCHEDULE;
	else if (str_is(s, len, "PreferNoSchedule"))
		*out = TAINT_PREFER_NO_SCHEDULE;
	else if (str_is(s, len, "NoExecute"))
		*out = TAINT_NO_EXECUTE;
	else
		return -EINVAL;
	return 0;
}

static int node_taint(struct decoder *d, const json_t *t, struct taint *out)
{
	const char *s = "";
	size_t len = 0;
	char q[SHOW_MAX + 16];
	int rc = check_type(d, t, W_OBJECT);
	if (rc == 0)
		rc = get_str(d, t, "key", &s, &len);
	if (rc < 0)
		return rc;
	if (len == 0)
		return fail_at(d, "key", -EINVAL, "missing");
	if ((rc = get_id(d, t, "key", &out->key)) < 0 ||
	    (rc = get_id(d, t, "value", &out->value)) < 0 ||
	    (rc = get_str(d, t, "effect", &s, &len)) < 0)
		return rc;
	if (taint_effect(s, len, false, &out->effect) < 0)
		return fail_at(d, "effect", -EINVAL, "%s is not NoSchedule, "
			       "PreferNoSchedule or NoExecute",
			       show_str(s, len, q, sizeof(q)));
	return 0;
}

static int node_conditions(struct decoder *d, const json_t *status)
{
	json_t *conds, *c;
	size_t i;
	int rc = get(d, status, "conditions", W_ARRAY, &conds);
	if (rc < 0 || conds == NULL)
		return rc;
	size_t outer = path_field(d, "conditions");
	json_array_foreach(conds, i, c) {
		size_t mark = path_index(d, i);
		const char *type, *s;
		size_t type_len, len;
		char q[SHOW_MAX + 16];
		rc = check_type(d, c, W_OBJECT);
		if (rc == 0)
			rc = get_str(d, c, "type", &type, &type_len);
		if (rc == 0 && str_is(type, type_len, "Ready")) {
			rc = get_str(d, c, "status", &s, &len);
			if (rc < 0)
				;
			else if (str_is(s, len, "True"))
				d->node.ready = NODE_READY_TRUE;
			else if (str_is(s, len, "False"))
				d->node.ready = NODE_READY_FALSE;
			else if (str_is(s, len, "Unknown"))
				d->node.ready = NODE_READY_UNKNOWN;
			else
				rc = fail_at(d, "status", -EINVAL, "%s is not True, False "
					     "or Unknown", show_str(s, len, q, sizeof(q)));
		}
		path_pop(d, mark);
		if (rc < 0)
			break;
	}
	path_pop(d, outer);
	return rc;
}

/* Sets d->who from metadata: "<kind> <name>" or "<kind> <ns>/<name>". */
static int object_name(struct decoder *d, const json_t *obj, const char *kind,
		       bool namespaced, const char **ns, size_t *ns_len,
		       const char **name, size_t *name_len)
{
	json_t *meta;
	int rc = get(d, obj, "metadata", W_OBJECT, &meta);
	if (rc < 0)
		return rc;
	*name = *ns = "";
	*name_len = *ns_len = 0;
	if (meta != NULL) {
		size_t mark = path_field(d, "metadata");
		rc = get_str(d, meta, "name", name, name_len);
		if (rc == 0 && namespaced)
			rc = get_str(d, meta, "namespace", ns, ns_len);
		path_pop(d, mark);
		if (rc < 0)
			return rc;
	}
	if (*name_len == 0)
		return fail_at(d, "metadata.name", -EINVAL, "missing");
	if (namespaced && *ns_len == 0) {
		*ns = "default";
		*ns_len = strlen(*ns);
	}
	if (namespaced)
		snprintf(d->who, sizeof(d->who), "%s %.*s/%.*s", kind,
			 (int)(*ns_len < 100 ? *ns_len : 100), *ns,
			 (int)(*name_len < 200 ? *name_len : 200), *name);
	else
		snprintf(d->who, sizeof(d->who), "%s %.*s", kind,
			 (int)(*name_len < 300 ? *name_len : 300), *name);
	return 0;
}

/* Calls the visitor, making sure a refusal comes with a message. */
static int visited(struct decoder *d, int rc)
{
	if (rc >= 0)
		return 0;
	if (d->err != NULL && d->err_len > 0 && d->err[0] == '\0') {
		d->path_len = 0;
		d->path[0] = '\0';
		char ebuf[128];
		fail(d, rc, "refused by the loader (%s)",
		     strerror_r(-rc, ebuf, sizeof(ebuf)));
	}
	return rc;
}

static int decode_node(struct decoder *d, const json_t *obj)
{
	struct node_spec *n = &d->node;
	const char *ns, *name;
	size_t ns_len, name_len;
	json_t *meta, *spec, *status, *taints, *t;
	size_t i, n_labels;
	memset(n, 0, sizeof(*n));

	int rc = object_name(d, obj, "node", false, &ns, &ns_len, &name, &name_len);
	if (rc < 0)
		return rc;
	size_t mark = path_field(d, "metadata.name");
	rc = intern_here(d, name, name_len, &n->name);
	path_pop(d, mark);
	if (rc < 0)
		return rc;
	if ((rc = get(d, obj, "metadata", W_OBJECT, &meta)) < 0)
		return rc;
	mark = path_field(d, "metadata");
	rc = label_map(d, meta, "labels", n->labels, NODE_MAX_LABELS, &n_labels,
		       false);
	path_pop(d, mark);
	if (rc < 0)
		return rc;
	n->n_labels = (uint16_t)n_labels;

	if ((rc = get(d, obj, "spec", W_OBJECT, &spec)) < 0)
		return rc;
	if (spec != NULL) {
		json_t *unsched;
		mark = path_field(d, "spec");
		rc = get(d, spec, "unschedulable", W_BOOL, &unsched);
		if (rc == 0 && unsched != NULL)
			n->unschedulable = json_is_true(unsched);
		if (rc == 0)
			rc = get(d, spec, "taints", W_ARRAY, &taints);
		if (rc == 0 && taints != NULL) {
			size_t outer = path_field(d, "taints");
			if (json_array_size(taints) > NODE_MAX_TAINTS)
				rc = fail(d, -ENOSPC, "%zu taints, at most %d",
					  json_array_size(taints), NODE_MAX_TAINTS);
			json_array_foreach(taints, i, t) {
				if (rc < 0)
					break;
				size_t m = path_index(d, i);
				rc = node_taint(d, t, &n->taints[i]);
				path_pop(d, m);
			}
			n->n_taints = (uint16_t)json_array_size(taints);
			path_pop(d, outer);
		}
		path_pop(d, mark);
		if (rc < 0)
			return rc;
	}

	if ((rc = get(d, obj, "status", W_OBJECT, &status)) < 0)
		return rc;
	if (status != NULL) {
		int64_t v[RES_MAX] = {0};
		bool has[RES_MAX] = {false}, present;
		mark = path_field(d, "status");
		rc = node_conditions(d, status);
		/* SetDefaults_NodeStatus: no allocatable means all of capacity. */
		if (rc == 0)
			rc = resource_list(d, status, "allocatable", v, has, &present);
		if (rc == 0 && !present)
			rc = resource_list(d, status, "capacity", v, has, NULL);
		path_pop(d, mark);
		if (rc < 0)
			return rc;
		for (int r = 0; r < RES_MAX; r++)
			n->allocatable.v[r] = v[r];
	}
	if ((rc = node_devices(d, obj, status)) < 0)
		return rc;

	if (d->v->node == NULL)
		return fail(d, -EINVAL, "a Node in a file read for pods only");
	if (d->err != NULL && d->err_len > 0)
		d->err[0] = '\0';
	return visited(d, d->v->node(d->v->arg, n, d->err, d->err_len));
}

/* --- pods: requests -------------------------------------------------------- */

/* PodRequests, accumulated one container at a time (helpers.go,
 * aggregateContainerResourcesByFn). */
struct req_acc {
	int64_t sum[RES_MAX];      /* containers and restartable init containers */
	int64_t sidecars[RES_MAX]; /* restartable init containers so far */
	int64_t init_max[RES_MAX]; /* max over init containers of their need */
};

/* spec.resources, pod-level resources (KEP-2837, beta and on by default
 * since v1.34): cpu, memory and hugepages-<size> only. */
struct pod_level {
	bool present; /* an object, even {}: QoS is then the pod's (qos.go) */
	int64_t req[RES_MAX], lim[RES_MAX];
	bool has_req[RES_MAX], has_lim[RES_MAX];
};

/* What a pod's containers add up to, beside its pod-level resources. */
struct pod_acc {
	struct req_acc actual;  /* requests, defaulted from limits */
	struct req_acc nonzero; /* the same with the scoring stand-ins */
	struct req_acc limits;  /* limits (saturating: only compared) */
	bool req_named[RES_MAX]; /* some container requests it (after defaulting) */
	bool lim_named[RES_MAX]; /* some container limits it */
	struct pod_level level;
};

static bool add_ok(int64_t *a, int64_t b)
{
	return !__builtin_add_overflow(*a, b, a);
}

static int64_t max64(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

/* The aggregate of an accumulator: max(sum, init containers). */
static int64_t acc_total(const struct req_acc *acc, int r)
{
	return max64(acc->sum[r], acc->init_max[r]);
}

enum container_kind { CONTAINER, INIT_CONTAINER, SIDECAR };

/* Adds one container. An overflow is an error, or (`saturate`, for limits,
 * which are only compared) the largest value. */
static int acc_add(struct decoder *d, struct req_acc *acc, enum container_kind kind,
		   const int64_t req[RES_MAX], bool saturate)
{
	for (int r = 0; r < RES_MAX; r++) {
		bool ok = true;
		int64_t need = req[r];
		switch (kind) {
		case CONTAINER:
			ok = add_ok(&acc->sum[r], req[r]);
			break;
		case SIDECAR:
			/* Added to the pod's total, and needed (with the earlier
			 * sidecars) while it starts. */
			ok = add_ok(&acc->sum[r], req[r]) &&
			     add_ok(&acc->sidecars[r], req[r]);
			need = acc->sidecars[r];
			break;
		case INIT_CONTAINER:
			ok = add_ok(&need, acc->sidecars[r]);
			break;
		}
		if (!ok && saturate) {
			acc->sum[r] = acc->sidecars[r] = need = INT64_MAX;
		} else if (!ok) {
			return fail_at(d, "resources.requests", -EINVAL, "the pod's total "
				       "%s does not fit in 64 bits",
				       d->ctx->res->name[r]);
		}
		if (kind != CONTAINER)
			acc->init_max[r] = max64(acc->init_max[r], need);
	}
	return 0;
}

/* A resource's amount for a message: millicores for cpu, else units. */
static const char *show_amount(int r, int64_t v, char *buf, size_t len)
{
	snprintf(buf, len, "%" PRId64 "%s", v, r == RES_CPU ? "m" : "");
	return buf;
}

static bool is_hugepages(const char *name)
{
	return strncmp(name, "hugepages-", 10) == 0;
}

/* One container's requests (requests defaulted from limits, as the API
 * server does) into the accumulators; a regular container's limits are
 * checked against the pod's (validatePodResourceConsistency). */
static int container_requests(struct decoder *d, const json_t *c,
			      enum container_kind kind, struct pod_acc *acc)
{
	int64_t req[RES_MAX] = {0}, lim[RES_MAX] = {0};
	bool has_req[RES_MAX] = {false}, has_lim[RES_MAX] = {false};
	const struct pod_level *pl = &acc->level;
	char a[32], b[32];
	json_t *res;
	int rc = get(d, c, "resources", W_OBJECT, &res);
	if (rc < 0)
		return rc;
	if (res != NULL) {
		size_t mark = path_field(d, "resources");
		rc = resource_list(d, res, "requests", req, has_req, NULL);
		if (rc == 0)
			rc = resource_list(d, res, "limits", lim, has_lim, NULL);
		for (int r = 0; r < RES_MAX && rc == 0 && kind == CONTAINER; r++) {
			if (!has_lim[r] || !pl->has_lim[r] || lim[r] <= pl->lim[r])
				continue;
			const char *name = d->ctx->res->name[r];
			size_t m = path_field(d, "limits");
			path_key(d, name, strlen(name));
			rc = fail(d, -EINVAL, "%s must be less than or equal to the pod's "
				  "limit of %s (spec.resources.limits)",
				  show_amount(r, lim[r], a, sizeof(a)),
				  show_amount(r, pl->lim[r], b, sizeof(b)));
			path_pop(d, m);
		}
		path_pop(d, mark);
		if (rc < 0)
			return rc;
	}
	for (int r = 0; r < RES_MAX; r++) {
		if (!has_req[r] && has_lim[r]) {
			req[r] = lim[r];
			has_req[r] = true;
		}
		acc->req_named[r] |= has_req[r];
		acc->lim_named[r] |= has_lim[r];
	}
	/* qos.go (ComputePodQOS): Guaranteed needs positive cpu and memory
	 * limits in every container, and requests equal to them. The API
	 * server rejects a request above its limit, so equal sums (what
	 * qos.go compares) are equal per container. */
	d->n_containers++;
	if (!has_lim[RES_CPU] || lim[RES_CPU] <= 0 || req[RES_CPU] != lim[RES_CPU] ||
	    !has_lim[RES_MEMORY] || lim[RES_MEMORY] <= 0 ||
	    req[RES_MEMORY] != lim[RES_MEMORY])
		d->guaranteed = false;
	req[RES_PODS] = 0; /* every pod counts one; a request for it is not one */
	lim[RES_PODS] = 0;
	int64_t nz[RES_MAX];
	memcpy(nz, req, sizeof(nz));
	if (!has_req[RES_CPU])
		nz[RES_CPU] = NONZERO_CPU_MILLI;
	if (!has_req[RES_MEMORY])
		nz[RES_MEMORY] = NONZERO_MEM_BYTES;
	rc = acc_add(d, &acc->actual, kind, req, false);
	if (rc == 0)
		rc = acc_add(d, &acc->nonzero, kind, nz, false);
	if (rc == 0)
		rc = acc_add(d, &acc->limits, kind, lim, true);
	return rc;
}

/* hugepages-<size>: `v` is a whole multiple of the page size
 * (validation.go, validateResourceQuantityHugePageValue). Call with the
 * path at the entry. */
static int hugepage_multiple(struct decoder *d, const char *name, const json_t *raw,
			     int64_t v)
{
	const char *size = name + strlen("hugepages-");
	int64_t page = 0, page_milli = 0;
	char q[SHOW_MAX + 16];
	int rc = quantity_parse(size, strlen(size), QUANTITY_UNITS, &page);
	if (rc == 0)
		rc = quantity_parse(size, strlen(size), QUANTITY_MILLI, &page_milli);
	if (rc < 0 || page <= 0 || page_milli % 1000 != 0 || v % page != 0)
		return fail(d, -EINVAL, "%s is not a whole multiple of the page size "
			    "of %s", show(raw, q, sizeof(q)), name);
	return 0;
}

/* spec.resources.requests or .limits at member `key`: only the resources
 * pod-level resources support (IsSupportedPodLevelResource), as
 * kube-apiserver's validatePodResourceName allows. */
static int pod_level_list(struct decoder *d, const json_t *res, const char *key,
			  int64_t v[RES_MAX], bool has[RES_MAX])
{
	json_t *list, *q;
	const char *name;
	char s[SHOW_MAX + 16];
	int rc = get(d, res, key, W_OBJECT, &list);
	if (rc < 0 || list == NULL)
		return rc;
	size_t outer = path_field(d, key);
	json_object_foreach(list, name, q) {
		size_t len = strlen(name);
		size_t mark = path_key(d, name, len);
		int idx = -1;
		int64_t value = 0;
		if (!str_is(name, len, "cpu") && !str_is(name, len, "memory") &&
		    !is_hugepages(name))
			rc = fail(d, -EINVAL, "%s is not a pod-level resource (cpu, "
				  "memory and hugepages-<size> are)",
				  show_str(name, len, s, sizeof(s)));
		else
			rc = resource_here(d, name, len, &idx);
		if (rc == 0)
			rc = quantity_here(d, q, idx == RES_CPU ? QUANTITY_MILLI :
							      QUANTITY_UNITS, &value);
		if (rc == 0 && is_hugepages(name))
			rc = hugepage_multiple(d, name, q, value);
		path_pop(d, mark);
		if (rc < 0)
			break;
		v[idx] = value;
		has[idx] = true;
	}
	path_pop(d, outer);
	return rc;
}

/* spec.resources as written, before the containers are read. */
static int pod_level_read(struct decoder *d, const json_t *spec, struct pod_level *pl)
{
	json_t *res, *os;
	const char *os_name = "";
	size_t os_len = 0;
	memset(pl, 0, sizeof(*pl));
	int rc = get(d, spec, "resources", W_OBJECT, &res);
	if (rc < 0 || res == NULL)
		return rc;
	pl->present = true;
	size_t mark = path_field(d, "resources");
	rc = pod_level_list(d, res, "requests", pl->req, pl->has_req);
	if (rc == 0)
		rc = pod_level_list(d, res, "limits", pl->lim, pl->has_lim);
	path_pop(d, mark);
	if (rc == 0)
		rc = get(d, spec, "os", W_OBJECT, &os);
	if (rc == 0 && os != NULL) {
		mark = path_field(d, "os");
		rc = get_str(d, os, "name", &os_name, &os_len);
		path_pop(d, mark);
	}
	if (rc < 0)
		return rc;
	bool any = false, cpu_mem = false, huge = false;
	for (int r = 0; r < RES_MAX; r++) {
		bool set = pl->has_req[r] || pl->has_lim[r];
		any |= set;
		cpu_mem |= set && (r == RES_CPU || r == RES_MEMORY);
		huge |= set && r >= RES_FIRST_NAMED;
	}
	mark = path_field(d, "resources");
	if (any && str_is(os_name, os_len, "windows"))
		rc = fail(d, -EINVAL, "may not be set for a windows pod (spec.os.name)");
	else if (huge && !cpu_mem)
		rc = fail(d, -EINVAL, "hugepages need a cpu or memory request or limit "
			  "beside them");
	path_pop(d, mark);
	return rc;
}

/* kube-apiserver's defaulting of pod-level requests (defaults.go,
 * defaultHugePagePodLimits then defaultPodRequests), then its checks of
 * them (validateResourceRequirements, validatePodResourceConsistency),
 * then the pod's QoS class (qos.go ComputePodQOS: with spec.resources set,
 * the pod's own resources decide it). Call with the path at spec. */
static int pod_level_apply(struct decoder *d, struct pod_acc *acc)
{
	struct pod_level *pl = &acc->level;
	const struct res_names *names = d->ctx->res;
	char a[32], b[32];
	int rc = 0;
	if (!pl->present)
		return 0;
	bool any_req = false, any_lim = false;
	for (int r = 0; r < RES_MAX; r++) {
		any_req |= pl->has_req[r];
		any_lim |= pl->has_lim[r];
	}
	/* A hugepages limit of the containers becomes the pod's, unless the
	 * pod requests that size. */
	for (int r = RES_FIRST_NAMED; r < RES_MAX && (any_req || any_lim); r++) {
		if (!is_hugepages(names->name[r]) || !acc->lim_named[r] ||
		    pl->has_req[r] || pl->has_lim[r])
			continue;
		pl->lim[r] = acc_total(&acc->limits, r);
		pl->has_lim[r] = any_lim = true;
	}
	/* With a pod limit, an unset pod request is the containers' aggregate
	 * (cpu and memory, when some container requests them), else the
	 * limit. */
	for (int r = 0; r < RES_MAX && any_lim; r++) {
		if (pl->has_req[r])
			continue;
		if ((r == RES_CPU || r == RES_MEMORY) && acc->req_named[r]) {
			pl->req[r] = acc_total(&acc->actual, r);
			pl->has_req[r] = true;
		} else if (pl->has_lim[r]) {
			pl->req[r] = pl->lim[r];
			pl->has_req[r] = true;
		}
	}
	size_t outer = path_field(d, "resources");
	for (int r = 0; r < RES_MAX && rc == 0; r++) {
		bool huge = r >= RES_FIRST_NAMED;
		const char *name = names->name[r];
		int64_t agg = acc_total(&acc->actual, r);
		size_t mark = path_field(d, "requests");
		path_key(d, name, strlen(name));
		if (pl->has_req[r] && huge && !pl->has_lim[r])
			rc = fail(d, -EINVAL, "a hugepages request needs a limit "
				  "(spec.resources.limits): hugepages are not "
				  "overcommitted");
		else if (pl->has_req[r] && pl->has_lim[r] && huge &&
			 pl->req[r] != pl->lim[r])
			rc = fail(d, -EINVAL, "%s must equal its limit of %s: hugepages "
				  "are not overcommitted",
				  show_amount(r, pl->req[r], a, sizeof(a)),
				  show_amount(r, pl->lim[r], b, sizeof(b)));
		else if (pl->has_req[r] && pl->has_lim[r] && pl->req[r] > pl->lim[r])
			rc = fail(d, -EINVAL, "%s must be less than or equal to the %s "
				  "limit of %s", show_amount(r, pl->req[r], a, sizeof(a)),
				  name, show_amount(r, pl->lim[r], b, sizeof(b)));
		else if (pl->has_req[r] && agg > pl->req[r])
			rc = fail(d, -EINVAL, "%s must be greater than or equal to the "
				  "aggregate container requests of %s",
				  show_amount(r, pl->req[r], a, sizeof(a)),
				  show_amount(r, agg, b, sizeof(b)));
		path_pop(d, mark);
		if (rc == 0 && huge && pl->has_lim[r] &&
		    acc_total(&acc->limits, r) > pl->lim[r]) {
			mark = path_field(d, "limits");
			path_key(d, name, strlen(name));
			rc = fail(d, -EINVAL, "%s must be greater than or equal to the "
				  "aggregate container limits of %s",
				  show_amount(r, pl->lim[r], a, sizeof(a)),
				  show_amount(r, acc_total(&acc->limits, r), b, sizeof(b)));
			path_pop(d, mark);
		}
	}
	path_pop(d, outer);
	if (rc < 0)
		return rc;
	/* Guaranteed: positive cpu and memory limits, and every positive cpu
	 * and memory request equal to its limit; nothing at all: BestEffort. */
	unsigned n_req = 0, n_lim = 0;
	bool equal = true;
	for (int r = RES_CPU; r <= RES_MEMORY; r++) {
		bool req = pl->has_req[r] && pl->req[r] > 0;
		bool lim = pl->has_lim[r] && pl->lim[r] > 0;
		n_req += req;
		n_lim += lim;
		equal &= !req || (lim && pl->req[r] == pl->lim[r]);
	}
	d->guaranteed = n_lim == 2 && n_req == n_lim && equal;
	return 0;
}

/* --- pods: host ports --------------------------------------------------- */

static int container_ports(struct decoder *d, const json_t *c, bool host_network)
{
	struct pod_spec *p = &d->pod;
	json_t *ports, *port;
	size_t i;
	int rc = get(d, c, "ports", W_ARRAY, &ports);
	if (rc < 0 || ports == NULL)
		return rc;
	size_t outer = path_field(d, "ports");
	json_array_foreach(ports, i, port) {
		size_t mark = path_index(d, i);
		json_t *hp, *cp;
		json_int_t host = 0;
		const char *s;
		size_t len;
		char q[SHOW_MAX + 16];
		rc = check_type(d, port, W_OBJECT);
		if (rc == 0)
			rc = get(d, port, "hostPort", W_INT, &hp);
		if (rc == 0)
			rc = get(d, port, "containerPort", W_INT, &cp);
		if (rc < 0)
			goto next;
		host = hp != NULL ? json_integer_value(hp) : 0;
		/* SetDefaults_Pod: under hostNetwork the container's port is
		 * the host's. */
		if (host == 0 && host_network && cp != NULL)
			host = json_integer_value(cp);
		if (host == 0)
			goto next;
		if (host < 0 || host > 65535) {
			rc = fail_at(d, "hostPort", -EINVAL, "%" JSON_INTEGER_FORMAT
				     " is not a port (1..65535)", host);
			goto next;
		}
		if (p->n_ports >= POD_MAX_PORTS) {
			rc = fail(d, -ENOSPC, "more than %d host ports in the pod",
				  POD_MAX_PORTS);
			goto next;
		}
		struct host_port *h = &p->ports[p->n_ports];
		h->port = (uint16_t)host;
		if ((rc = get_str(d, port, "protocol", &s, &len)) < 0)
			goto next;
		if (len == 0 || str_is(s, len, "TCP")) {
			h->protocol = PROTO_TCP;
		} else if (str_is(s, len, "UDP")) {
			h->protocol = PROTO_UDP;
		} else if (str_is(s, len, "SCTP")) {
			h->protocol = PROTO_SCTP;
		} else {
			rc = fail_at(d, "protocol", -EINVAL, "%s is not TCP, UDP or SCTP",
				     show_str(s, len, q, sizeof(q)));
			goto next;
		}
		if ((rc = get_id(d, port, "hostIP", &h->ip)) < 0)
			goto next;
		p->n_ports++;
next:
		path_pop(d, mark);
		if (rc < 0)
			break;
	}
	path_pop(d, outer);
	return rc;
}

/* Containers (kind CONTAINER) or init containers: requests and ports. */
static int containers(struct decoder *d, const json_t *spec, const char *key,
		      bool host_network, struct pod_acc *acc)
{
	json_t *list, *c;
	size_t i;
	int rc = get(d, spec, key, W_ARRAY, &list);
	if (rc < 0 || list == NULL)
		return rc;
	bool init = strcmp(key, "initContainers") == 0;
	size_t outer = path_field(d, key);
	json_array_foreach(list, i, c) {
		size_t mark = path_index(d, i);
		enum container_kind kind = init ? INIT_CONTAINER : CONTAINER;
		const char *policy;
		size_t policy_len;
		rc = check_type(d, c, W_OBJECT);
		if (rc == 0 && init) {
			rc = get_str(d, c, "restartPolicy", &policy, &policy_len);
			if (str_is(policy, policy_len, "Always"))
				kind = SIDECAR;
		}
		if (rc == 0)
			rc = container_requests(d, c, kind, acc);
		/* nodeports/node_ports.go takes host ports from spec.containers;
		 * sidecars count too (they keep running). A plain init container
		 * has exited before the containers start: its ports hold nothing. */
		if (rc == 0 && kind != INIT_CONTAINER)
			rc = container_ports(d, c, host_network);
		path_pop(d, mark);
		if (rc < 0)
			break;
	}
	path_pop(d, outer);
	return rc;
}

/* Effective requests: PodRequests, with pod-level resources: max(sum,
 * init containers), each resource spec.resources.requests names (after
 * kube-apiserver's defaulting) taken from there instead, then overhead.
 * The scoring stand-ins are per container, so a pod-level request
 * replaces them too (NonMissingContainerRequests). */
static int pod_requests(struct decoder *d, const json_t *spec, bool host_network)
{
	struct pod_spec *p = &d->pod;
	struct pod_acc acc;
	int64_t overhead[RES_MAX] = {0};
	bool has[RES_MAX] = {false};
	memset(&acc, 0, sizeof(acc));
	d->guaranteed = true;
	d->n_containers = 0;
	int rc = pod_level_read(d, spec, &acc.level);
	if (rc == 0)
		rc = containers(d, spec, "containers", host_network, &acc);
	if (rc == 0)
		rc = containers(d, spec, "initContainers", host_network, &acc);
	if (d->n_containers == 0)
		d->guaranteed = false; /* BestEffort */
	if (rc == 0)
		rc = pod_level_apply(d, &acc);
	if (rc == 0)
		rc = resource_list(d, spec, "overhead", overhead, has, NULL);
	if (rc < 0)
		return rc;
	overhead[RES_PODS] = 0;
	size_t mark = path_field(d, "overhead");
	for (int r = 0; r < RES_MAX; r++) {
		int64_t a = acc_total(&acc.actual, r);
		int64_t z = acc_total(&acc.nonzero, r);
		if (acc.level.has_req[r])
			a = z = acc.level.req[r];
		if (!add_ok(&a, overhead[r]) || !add_ok(&z, overhead[r])) {
			rc = fail(d, -EINVAL, "the pod's total %s does not fit in "
				  "64 bits", d->ctx->res->name[r]);
			break;
		}
		p->request.v[r] = a;
		if (r == RES_CPU)
			p->nonzero_cpu_milli = z;
		if (r == RES_MEMORY)
			p->nonzero_mem_bytes = z;
	}
	path_pop(d, mark);
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
		if (str_is(s, len, ops[i].name)) {
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
	int rc = check_type(d, r, W_OBJECT);
	if (rc == 0)
		rc = get_str(d, r, "key", key, key_len);
	if (rc == 0)
		rc = get_str(d, r, "operator", op, op_len);
	if (rc == 0)
		rc = get(d, r, "values", W_ARRAY, values);
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
	char q[SHOW_MAX + 16];
	int rc = requirement_members(d, r, &key, &key_len, &op, &op_len, &values);
	if (rc < 0)
		return rc;
	if (p->n_exprs >= POD_MAX_EXPRS)
		return fail(d, -ENOSPC, "more than %d node selector requirements "
			    "in the pod (POD_MAX_EXPRS)", POD_MAX_EXPRS);
	struct sel_expr *e = &p->exprs[p->n_exprs];
	e->invalid = 0;
	size_t n_values = values != NULL ? json_array_size(values) : 0;
	if (key_len == 0)
		return fail_at(d, "key", -EINVAL, "missing");
	if (field && !str_is(key, key_len, "metadata.name"))
		return fail_at(d, "key", -EINVAL, "%s is not a supported field "
			       "(only metadata.name)", show_str(key, key_len, q, sizeof(q)));
	if (sel_operator(op, op_len, &e->op) < 0 ||
	    (field && e->op != SEL_IN && e->op != SEL_NOT_IN))
		return fail_at(d, "operator", -EINVAL, "%s is not %s",
			       show_str(op, op_len, q, sizeof(q)),
			       field ? "In or NotIn" :
			       "In, NotIn, Exists, DoesNotExist, Gt or Lt");
	switch ((enum sel_op)e->op) {
	case SEL_IN:
	case SEL_NOT_IN:
		if (field && n_values != 1)
			return fail_at(d, "values", -EINVAL, "%zu values, a field "
				       "selector takes exactly one", n_values);
		if (n_values == 0)
			return fail_at(d, "values", -EINVAL, "must not be empty for "
				       "operator %.*s", (int)op_len, op);
		break;
	case SEL_EXISTS:
	case SEL_DOES_NOT_EXIST:
		if (n_values != 0)
			return fail_at(d, "values", -EINVAL, "must be empty for "
				       "operator %.*s", (int)op_len, op);
		break;
	case SEL_GT:
	case SEL_LT:
		if (n_values != 1)
			return fail_at(d, "values", -EINVAL, "%zu values, operator "
				       "%.*s takes exactly one", n_values, (int)op_len, op);
		break;
	}
	size_t mark = path_field(d, "key");
	/* ValidateNodeSelectorRequirement: ValidateLabelName on the key. */
	rc = field ? 0 : check_label_key(d, key, key_len);
	if (rc == 0)
		rc = intern_here(d, key, key_len, &e->key);
	path_pop(d, mark);
	if (rc < 0)
		return rc;
	e->field = field ? 1 : 0;
	e->first_value = p->n_values;
	e->n_values = (uint16_t)n_values;
	if (n_values > (size_t)(POD_MAX_VALUES - p->n_values))
		return fail_at(d, "values", -ENOSPC, "more than %d node selector values "
			       "in the pod (POD_MAX_VALUES)", POD_MAX_VALUES);
	size_t outer = path_field(d, "values");
	json_array_foreach(values, i, val) {
		size_t m = path_index(d, i);
		uint32_t *id = &p->values[p->n_values];
		rc = string_here(d, val, id);
		bool bad = false;
		if (rc == 0 && !field)
			bad = !label_value_ok(json_string_value(val),
					      json_string_length(val));
		if (rc == 0 && (e->op == SEL_GT || e->op == SEL_LT) &&
		    !intern_int(d->ctx->strings, *id, &e->number))
			bad = true;
		if (bad && preferred && !d->ctx->cluster_file)
			rc = fail(d, -EINVAL, "%s does not parse as a requirement's "
				  "value (%s); kube-scheduler's NodeAffinity "
				  "PreScore fails on such a preferred term",
				  show(val, q, sizeof(q)),
				  e->op == SEL_GT || e->op == SEL_LT ?
				  "an integer that is a valid label value" :
				  "a valid label value");
		if (bad) {
			e->invalid = 1;
			e->number = 0;
		}
		path_pop(d, m);
		if (rc < 0)
			break;
		p->n_values++;
	}
	path_pop(d, outer);
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
	int rc = check_type(d, t, W_OBJECT);
	out->first_expr = p->n_exprs;
	for (int l = 0; l < 2 && rc == 0; l++) {
		json_t *list, *r;
		size_t i;
		rc = get(d, t, lists[l], W_ARRAY, &list);
		if (rc < 0 || list == NULL)
			continue;
		size_t outer = path_field(d, lists[l]);
		json_array_foreach(list, i, r) {
			size_t mark = path_index(d, i);
			rc = sel_requirement(d, r, l == 1, preferred);
			path_pop(d, mark);
			if (rc < 0)
				break;
		}
		path_pop(d, outer);
	}
	out->n_exprs = (uint16_t)(p->n_exprs - out->first_expr);
	return rc;
}

static int node_affinity(struct decoder *d, const json_t *na)
{
	struct pod_spec *p = &d->pod;
	json_t *req, *terms, *prefs, *t;
	size_t i;
	int rc = get(d, na, "requiredDuringSchedulingIgnoredDuringExecution",
		     W_OBJECT, &req);
	if (rc < 0)
		return rc;
	if (req != NULL) {
		size_t outer = path_field(d, "requiredDuringSchedulingIgnoredDuringExecution");
		p->has_required = true;
		rc = get(d, req, "nodeSelectorTerms", W_ARRAY, &terms);
		if (rc == 0 && terms != NULL) {
			size_t m = path_field(d, "nodeSelectorTerms");
			if (json_array_size(terms) > POD_MAX_TERMS)
				rc = fail(d, -ENOSPC, "%zu terms, at most %d "
					  "(POD_MAX_TERMS)", json_array_size(terms),
					  POD_MAX_TERMS);
			json_array_foreach(terms, i, t) {
				if (rc < 0)
					break;
				size_t mark = path_index(d, i);
				rc = sel_term(d, t, &p->terms[i], false);
				path_pop(d, mark);
				if (rc == 0)
					p->n_terms++;
			}
			path_pop(d, m);
		}
		path_pop(d, outer);
		if (rc < 0)
			return rc;
	}
	rc = get(d, na, "preferredDuringSchedulingIgnoredDuringExecution", W_ARRAY,
		 &prefs);
	if (rc < 0 || prefs == NULL)
		return rc;
	size_t outer = path_field(d, "preferredDuringSchedulingIgnoredDuringExecution");
	if (json_array_size(prefs) > POD_MAX_PREFERRED)
		rc = fail(d, -ENOSPC, "%zu terms, at most %d (POD_MAX_PREFERRED)",
			  json_array_size(prefs), POD_MAX_PREFERRED);
	json_array_foreach(prefs, i, t) {
		if (rc < 0)
			break;
		size_t mark = path_index(d, i);
		json_t *w, *pref;
		struct pref_term *pt = &p->preferred[i];
		rc = check_type(d, t, W_OBJECT);
		if (rc == 0)
			rc = get(d, t, "weight", W_INT, &w);
		if (rc == 0 && (w == NULL || json_integer_value(w) < 1 ||
				json_integer_value(w) > 100)) {
			size_t m = path_field(d, "weight");
			if (w == NULL)
				rc = fail(d, -EINVAL, "missing (1..100)");
			else
				rc = fail(d, -EINVAL, "%" JSON_INTEGER_FORMAT
					  " is not in 1..100", json_integer_value(w));
			path_pop(d, m);
		}
		if (rc == 0)
			rc = get(d, t, "preference", W_OBJECT, &pref);
		if (rc == 0) {
			pt->weight = (int32_t)json_integer_value(w);
			pt->term.first_expr = p->n_exprs;
			if (pref != NULL) {
				size_t m = path_field(d, "preference");
				rc = sel_term(d, pref, &pt->term, true);
				path_pop(d, m);
			}
		}
		path_pop(d, mark);
		if (rc == 0)
			p->n_preferred++;
	}
	path_pop(d, outer);
	return rc;
}

/* --- pods: tolerations --------------------------------------------------- */

static int toleration(struct decoder *d, const json_t *t, struct toleration *out)
{
	const char *key = "", *op = "", *value = "", *effect = "";
	size_t key_len = 0, op_len = 0, value_len = 0, effect_len = 0;
	char q[SHOW_MAX + 16];
	int rc = check_type(d, t, W_OBJECT);
	if (rc == 0)
		rc = get_str(d, t, "key", &key, &key_len);
	if (rc == 0)
		rc = get_str(d, t, "operator", &op, &op_len);
	if (rc == 0)
		rc = get_str(d, t, "value", &value, &value_len);
	if (rc == 0)
		rc = get_str(d, t, "effect", &effect, &effect_len);
	if (rc < 0)
		return rc;
	if (op_len == 0 || str_is(op, op_len, "Equal"))
		out->op = TOL_EQUAL;
	else if (str_is(op, op_len, "Exists"))
		out->op = TOL_EXISTS;
	else
		return fail_at(d, "operator", -EINVAL, "%s is not Equal or Exists",
			       show_str(op, op_len, q, sizeof(q)));
	if (out->op == TOL_EXISTS && value_len > 0)
		return fail_at(d, "value", -EINVAL, "%s must be empty when operator "
			       "is Exists", show_str(value, value_len, q, sizeof(q)));
	if (key_len == 0 && out->op != TOL_EXISTS)
		return fail_at(d, "operator", -EINVAL, "an empty key needs operator "
			       "Exists");
	if (taint_effect(effect, effect_len, true, &out->effect) < 0)
		return fail_at(d, "effect", -EINVAL, "%s is not NoSchedule, "
			       "PreferNoSchedule or NoExecute",
			       show_str(effect, effect_len, q, sizeof(q)));
	if ((rc = get_id(d, t, "key", &out->key)) < 0)
		return rc;
	return get_id(d, t, "value", &out->value);
}

/* --- objects: Namespaces, Services, controllers (k8s_objects) ------------------ */

/* What default spreading and namespaceSelector read of the objects, by
 * intern id. A Namespace's labels and a Service's or RC's selector are
 * label pairs; a ReplicaSet's or StatefulSet's selector is requirements.
 * Entries are found by (kind, namespace, name) through an open-addressed
 * index, which also refuses a second object of the same name; a pod's
 * Services through a list sorted by namespace, built when first needed
 * after a read. */
enum obj_kind { OBJ_NAMESPACE, OBJ_SERVICE, OBJ_RC, OBJ_RS, OBJ_SS, OBJ_KINDS };

static const char *const obj_kind_name[OBJ_KINDS] = {
	[OBJ_NAMESPACE] = "Namespace",
	[OBJ_SERVICE] = "Service",
	[OBJ_RC] = "ReplicationController",
	[OBJ_RS] = "ReplicaSet",
	[OBJ_SS] = "StatefulSet",
};

_Static_assert(OBJECT_MAX_REQS <= GROUP_MAX_REQS &&
		       OBJECT_MAX_VALUES <= GROUP_MAX_VALUES &&
		       OBJECT_MAX_LABELS + 1 <= GROUP_MAX_REQS,
	       "an object's selector is parsed into (and merged into) a group's pool");

struct obj_req {
	uint32_t key;
	uint8_t op; /* SEL_IN, SEL_NOT_IN, SEL_EXISTS, SEL_DOES_NOT_EXIST */
	uint32_t first_value;
	uint16_t n_values;
};

struct obj {
	uint8_t kind;   /* enum obj_kind */
	uint32_t ns;    /* 0 for a Namespace */
	uint32_t name;
	uint32_t first; /* into labels (Namespace, Service, RC) or reqs (RS, SS) */
	uint32_t n;
};

struct k8s_objects {
	struct obj *objs;
	size_t n_objs, cap_objs;
	struct label *labels;
	size_t n_labels, cap_labels;
	struct obj_req *reqs;
	size_t n_reqs, cap_reqs;
	uint32_t *values;
	size_t n_values, cap_values;
	uint32_t *index;  /* obj index + 1, by obj_hash; 0 empty */
	size_t index_mask;
	uint32_t *services; /* obj indices of Services, by namespace ... */
	size_t n_services, cap_services;
	bool services_stale; /* ... rebuilt when objects were added since */
	struct k8s_objects_counts counts;
};

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

static const struct obj *obj_find(const struct k8s_objects *o, uint8_t kind,
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
static size_t services_of(struct k8s_objects *o, uint32_t ns, size_t *first)
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
static bool labels_subset(const struct label *sel, size_t n_sel,
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

/* --- pod groups (shm/pod_group.h) ------------------------------------------ */

static int group_req_add(struct decoder *d, uint32_t key, uint8_t op,
			 const uint32_t *values, size_t n_values,
			 struct group_selector *sel)
{
	struct pod_group *g = &d->group;
	/* The objects pass parses a controller's selector into the same pool
	 * (then copies it out), under the objects' own limits. */
	if (d->objects_pass && g->n_reqs >= OBJECT_MAX_REQS)
		return fail(d, -ENOSPC, "more than %d label selector requirements "
			    "(OBJECT_MAX_REQS)", OBJECT_MAX_REQS);
	if (d->objects_pass && n_values > (size_t)(OBJECT_MAX_VALUES - g->n_values))
		return fail(d, -ENOSPC, "more than %d label selector values "
			    "(OBJECT_MAX_VALUES)", OBJECT_MAX_VALUES);
	if (g->n_reqs >= GROUP_MAX_REQS)
		return fail(d, -ENOSPC, "more than %d label selector requirements in "
			    "the pod's terms and constraints (GROUP_MAX_REQS)",
			    GROUP_MAX_REQS);
	if (n_values > (size_t)(GROUP_MAX_VALUES - g->n_values))
		return fail(d, -ENOSPC, "more than %d label selector values in the "
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
	char q[SHOW_MAX + 16];
	int rc = requirement_members(d, r, &key, &key_len, &op, &op_len, &values);
	if (rc < 0)
		return rc;
	size_t n_values = values != NULL ? json_array_size(values) : 0;
	if (key_len == 0)
		return fail_at(d, "key", -EINVAL, "missing");
	if (sel_operator(op, op_len, &code) < 0 || code == SEL_GT || code == SEL_LT)
		return fail_at(d, "operator", -EINVAL, "%s is not In, NotIn, Exists "
			       "or DoesNotExist", show_str(op, op_len, q, sizeof(q)));
	bool with_values = code == SEL_IN || code == SEL_NOT_IN;
	if (with_values && n_values == 0)
		return fail_at(d, "values", -EINVAL, "must not be empty for operator "
			       "%.*s", (int)op_len, op);
	if (!with_values && n_values != 0)
		return fail_at(d, "values", -EINVAL, "must be empty for operator "
			       "%.*s", (int)op_len, op);
	if (n_values > GROUP_MAX_VALUES || (d->objects_pass && n_values > OBJECT_MAX_VALUES))
		return fail_at(d, "values", -ENOSPC, "%zu values, at most %d (%s)",
			       n_values, d->objects_pass ? OBJECT_MAX_VALUES : GROUP_MAX_VALUES,
			       d->objects_pass ? "OBJECT_MAX_VALUES" : "GROUP_MAX_VALUES");
	uint32_t key_id;
	size_t mark = path_field(d, "key");
	rc = check_label_key(d, key, key_len); /* ValidateLabelName */
	if (rc == 0)
		rc = intern_here(d, key, key_len, &key_id);
	path_pop(d, mark);
	size_t outer = path_field(d, "values");
	json_array_foreach(values, i, val) {
		if (rc < 0)
			break;
		size_t m = path_index(d, i);
		rc = string_here(d, val, &ids[i]);
		if (rc == 0)
			rc = check_label_value(d, json_string_value(val),
					       json_string_length(val));
		path_pop(d, m);
	}
	path_pop(d, outer);
	return rc < 0 ? rc : group_req_add(d, key_id, code, ids, n_values, sel);
}

/* A metav1.LabelSelector at member `key` (absent: nil, matches nothing),
 * its requirements appended to the group's pool. */
static int label_selector(struct decoder *d, const json_t *obj, const char *key,
			  struct group_selector *sel)
{
	json_t *ls, *exprs, *e;
	size_t i;
	*sel = (struct group_selector){.first_req = d->group.n_reqs};
	int rc = get(d, obj, key, W_OBJECT, &ls);
	if (rc < 0 || ls == NULL) {
		sel->first_req = 0;
		return rc;
	}
	sel->present = true;
	size_t outer = path_field(d, key);
	struct label ml[GROUP_MAX_REQS];
	size_t n_ml;
	rc = label_map(d, ls, "matchLabels", ml, GROUP_MAX_REQS, &n_ml, true);
	for (size_t k = 0; rc == 0 && k < n_ml; k++) {
		size_t m = path_field(d, "matchLabels");
		/* label_map() has checked the key and the value. */
		path_pop(d, m);
		rc = group_req_add(d, ml[k].key, SEL_IN, &ml[k].value, 1, sel);
	}
	if (rc == 0)
		rc = get(d, ls, "matchExpressions", W_ARRAY, &exprs);
	if (rc == 0 && exprs != NULL) {
		size_t mark = path_field(d, "matchExpressions");
		json_array_foreach(exprs, i, e) {
			size_t m = path_index(d, i);
			rc = label_requirement(d, e, sel);
			path_pop(d, m);
			if (rc < 0)
				break;
		}
		path_pop(d, mark);
	}
	path_pop(d, outer);
	return rc;
}

/* matchLabelKeys / mismatchLabelKeys at member `key`: `k In (the pod's
 * value)` (or NotIn) for each key the pod has a label for, merged into the
 * selector as kube-apiserver and kube-scheduler merge them. */
static int merge_label_keys(struct decoder *d, const json_t *obj, const char *key,
			    uint8_t op, struct group_selector *sel)
{
	json_t *keys, *k;
	size_t i;
	int rc = get(d, obj, key, W_ARRAY, &keys);
	if (rc < 0 || keys == NULL || json_array_size(keys) == 0)
		return rc;
	size_t outer = path_field(d, key);
	if (!sel->present)
		rc = fail(d, -EINVAL, "needs a labelSelector");
	json_array_foreach(keys, i, k) {
		if (rc < 0)
			break;
		size_t m = path_index(d, i);
		uint32_t id, value;
		rc = check_type(d, k, W_STRING);
		if (rc == 0 && json_string_length(k) == 0)
			rc = fail(d, -EINVAL, "an empty key");
		if (rc == 0)
			rc = intern_here(d, json_string_value(k), json_string_length(k),
					 &id);
		if (rc == 0 && labels_get(d->group.labels, d->group.n_labels, id, &value))
			rc = group_req_add(d, id, op, &value, 1, sel);
		path_pop(d, m);
	}
	path_pop(d, outer);
	return rc;
}

/* Whether namespace `ns` is already among term `t`'s. */
static bool term_has_ns(const struct pod_group *g, const struct group_term *t,
			uint32_t ns)
{
	for (unsigned i = t->first_ns; i < g->n_namespaces; i++)
		if (g->namespaces[i] == ns)
			return true;
	return false;
}

/* A term's namespaceSelector (present): {} is every namespace; one with
 * requirements adds the namespaces it selects among the Namespace objects
 * read (k8s_ctx.objects) to the term's, as kube-scheduler's
 * mergeAffinityTermNamespacesIfNotEmpty does, but once, when the pod is
 * read. The selector is parsed into the group's pool and taken back out:
 * only the namespaces stay. */
static int namespace_selector(struct decoder *d, const json_t *t,
			      struct group_term *term)
{
	struct pod_group *g = &d->group;
	struct k8s_objects *o = d->ctx->objects;
	struct group_selector sel;
	uint16_t n_reqs = g->n_reqs, n_values = g->n_values;
	int rc = label_selector(d, t, "namespaceSelector", &sel);
	if (rc < 0)
		return rc;
	g->n_reqs = n_reqs;
	g->n_values = n_values;
	if (sel.n_reqs == 0) {
		term->all_namespaces = true; /* labels.Everything() */
		return 0;
	}
	if (o == NULL && !d->ctx->cluster_file)
		return fail_at(d, "namespaceSelector", -EINVAL, "a selector with "
			       "requirements needs the Namespace objects of a cluster "
			       "file (shmsched place reads them; a template cannot use "
			       "one)");
	for (size_t i = 0; o != NULL && i < o->n_objs; i++) {
		const struct obj *x = &o->objs[i];
		if (x->kind != OBJ_NAMESPACE ||
		    !group_selector_matches(g, &sel, &o->labels[x->first], x->n) ||
		    term_has_ns(g, term, x->name))
			continue;
		if (g->n_namespaces >= GROUP_MAX_NAMESPACES)
			return fail_at(d, "namespaceSelector", -ENOSPC, "selects more "
				       "than %d namespaces with the pod's other terms "
				       "(GROUP_MAX_NAMESPACES)", GROUP_MAX_NAMESPACES);
		g->namespaces[g->n_namespaces++] = x->name;
	}
	return 0;
}

/* A PodAffinityTerm of `kind`, with `weight` for a preferred one. */
static int pod_affinity_term(struct decoder *d, const json_t *t, uint8_t kind,
			     int32_t weight)
{
	struct pod_group *g = &d->group;
	json_t *nss = NULL, *nsel = NULL, *ns;
	size_t i;
	int rc = check_type(d, t, W_OBJECT);
	if (rc < 0)
		return rc;
	if (g->n_terms >= GROUP_MAX_TERMS)
		return fail(d, -ENOSPC, "more than %d pod affinity terms "
			    "(GROUP_MAX_TERMS)", GROUP_MAX_TERMS);
	struct group_term term = {.kind = kind, .weight = weight,
				  .first_ns = g->n_namespaces};
	const char *tk = "";
	size_t tk_len = 0;
	if ((rc = get_str(d, t, "topologyKey", &tk, &tk_len)) < 0)
		return rc;
	if (tk_len == 0)
		return fail_at(d, "topologyKey", -EINVAL, "missing (it must not be "
			       "empty)");
	size_t mark = path_field(d, "topologyKey");
	rc = intern_here(d, tk, tk_len, &term.topology_key);
	path_pop(d, mark);
	if (rc == 0)
		rc = label_selector(d, t, "labelSelector", &term.selector);
	if (rc == 0)
		rc = merge_label_keys(d, t, "matchLabelKeys", SEL_IN, &term.selector);
	if (rc == 0)
		rc = merge_label_keys(d, t, "mismatchLabelKeys", SEL_NOT_IN,
				      &term.selector);
	if (rc == 0)
		rc = get(d, t, "namespaces", W_ARRAY, &nss);
	if (rc == 0)
		rc = get(d, t, "namespaceSelector", W_OBJECT, &nsel);
	if (rc < 0)
		return rc;
	size_t outer = path_field(d, "namespaces");
	json_array_foreach(nss, i, ns) {
		size_t m = path_index(d, i);
		uint32_t id;
		rc = check_type(d, ns, W_STRING);
		if (rc == 0 && g->n_namespaces >= GROUP_MAX_NAMESPACES)
			rc = fail(d, -ENOSPC, "more than %d namespaces in the pod's "
				  "terms (GROUP_MAX_NAMESPACES)", GROUP_MAX_NAMESPACES);
		if (rc == 0)
			rc = intern_here(d, json_string_value(ns), json_string_length(ns),
					 &id);
		if (rc == 0)
			g->namespaces[g->n_namespaces++] = id;
		path_pop(d, m);
		if (rc < 0)
			break;
	}
	path_pop(d, outer);
	if (rc == 0 && nsel != NULL)
		rc = namespace_selector(d, t, &term);
	if (rc < 0)
		return rc;
	/* getNamespacesFromPodAffinityTerm: no namespaces and no selector
	 * (nil, not one selecting nothing) means the pod's own. */
	if (g->n_namespaces == term.first_ns && !term.all_namespaces && nsel == NULL) {
		/* No namespaces, no selector: the pod's own. */
		if (g->n_namespaces >= GROUP_MAX_NAMESPACES)
			return fail(d, -ENOSPC, "more than %d namespaces in the pod's "
				    "terms (GROUP_MAX_NAMESPACES)", GROUP_MAX_NAMESPACES);
		g->namespaces[g->n_namespaces++] = g->ns;
	}
	term.n_ns = (uint16_t)(g->n_namespaces - term.first_ns);
	g->terms[g->n_terms++] = term;
	return 0;
}

/* podAffinity or podAntiAffinity at member `key` of `aff`: required terms
 * of `required`, preferred ones of required + 2 (enum group_term_kind),
 * appended in that order by the caller's calls. */
static int pod_affinity_list(struct decoder *d, const json_t *aff, const char *key,
			     bool preferred, uint8_t kind)
{
	json_t *pa, *list, *t;
	size_t i;
	int rc = get(d, aff, key, W_OBJECT, &pa);
	if (rc < 0 || pa == NULL)
		return rc;
	size_t outer = path_field(d, key);
	const char *lkey = preferred ? "preferredDuringSchedulingIgnoredDuringExecution"
				     : "requiredDuringSchedulingIgnoredDuringExecution";
	rc = get(d, pa, lkey, W_ARRAY, &list);
	if (rc == 0 && list != NULL) {
		size_t mark = path_field(d, lkey);
		json_array_foreach(list, i, t) {
			size_t m = path_index(d, i);
			if (!preferred) {
				rc = pod_affinity_term(d, t, kind, 0);
			} else {
				json_t *w = NULL, *term = NULL;
				rc = check_type(d, t, W_OBJECT);
				if (rc == 0)
					rc = get(d, t, "weight", W_INT, &w);
				if (rc == 0)
					rc = get(d, t, "podAffinityTerm", W_OBJECT, &term);
				json_int_t weight = w != NULL ? json_integer_value(w) : 0;
				if (rc == 0 && (weight < 1 || weight > 100))
					rc = fail_at(d, "weight", -EINVAL, "%" JSON_INTEGER_FORMAT
						     " is not 1..100", weight);
				if (rc == 0 && term == NULL)
					rc = fail_at(d, "podAffinityTerm", -EINVAL, "missing");
				if (rc == 0) {
					size_t pm = path_field(d, "podAffinityTerm");
					rc = pod_affinity_term(d, term, kind, (int32_t)weight);
					path_pop(d, pm);
				}
			}
			path_pop(d, m);
			if (rc < 0)
				break;
		}
		path_pop(d, mark);
	}
	path_pop(d, outer);
	return rc;
}

/* One topologySpreadConstraint, validated as kube-apiserver's
 * validateTopologySpreadConstraints does. */
static int spread_constraint(struct decoder *d, const json_t *c)
{
	struct pod_group *g = &d->group;
	json_t *skew = NULL, *mind = NULL;
	const char *tk = "", *when = "", *nap = "", *ntp = "";
	size_t tk_len = 0, when_len = 0, nap_len = 0, ntp_len = 0;
	char q[SHOW_MAX + 16];
	int rc = check_type(d, c, W_OBJECT);
	if (rc == 0)
		rc = get(d, c, "maxSkew", W_INT, &skew);
	if (rc == 0)
		rc = get(d, c, "minDomains", W_INT, &mind);
	if (rc == 0)
		rc = get_str(d, c, "topologyKey", &tk, &tk_len);
	if (rc == 0)
		rc = get_str(d, c, "whenUnsatisfiable", &when, &when_len);
	if (rc == 0)
		rc = get_str(d, c, "nodeAffinityPolicy", &nap, &nap_len);
	if (rc == 0)
		rc = get_str(d, c, "nodeTaintsPolicy", &ntp, &ntp_len);
	if (rc < 0)
		return rc;
	if (g->n_spread >= GROUP_MAX_SPREAD)
		return fail(d, -ENOSPC, "more than %d topologySpreadConstraints "
			    "(GROUP_MAX_SPREAD)", GROUP_MAX_SPREAD);
	struct group_spread sc = {.min_domains = 1,
				  .node_affinity_policy = SPREAD_POLICY_HONOR,
				  .node_taints_policy = SPREAD_POLICY_IGNORE};
	json_int_t max_skew = skew != NULL ? json_integer_value(skew) : 0;
	if (max_skew < 1 || max_skew > INT32_MAX)
		return fail_at(d, "maxSkew", -EINVAL, "%" JSON_INTEGER_FORMAT " is not "
			       "greater than zero", max_skew);
	sc.max_skew = (int32_t)max_skew;
	if (tk_len == 0)
		return fail_at(d, "topologyKey", -EINVAL, "missing (it must not be "
			       "empty)");
	if (str_is(when, when_len, "DoNotSchedule"))
		sc.hard = true;
	else if (!str_is(when, when_len, "ScheduleAnyway"))
		return fail_at(d, "whenUnsatisfiable", -EINVAL, "%s is not "
			       "DoNotSchedule or ScheduleAnyway",
			       show_str(when, when_len, q, sizeof(q)));
	if (mind != NULL) {
		json_int_t m = json_integer_value(mind);
		if (m < 1 || m > INT32_MAX)
			return fail_at(d, "minDomains", -EINVAL, "%" JSON_INTEGER_FORMAT
				       " is not greater than zero", m);
		if (!sc.hard)
			return fail_at(d, "minDomains", -EINVAL, "only with "
				       "whenUnsatisfiable DoNotSchedule");
		sc.min_domains = (int32_t)m;
	}
	static const char *const policy_field[2] = {"nodeAffinityPolicy",
						    "nodeTaintsPolicy"};
	const char *ps[2] = {nap, ntp};
	size_t pl[2] = {nap_len, ntp_len};
	uint8_t *pv[2] = {&sc.node_affinity_policy, &sc.node_taints_policy};
	for (int k = 0; k < 2; k++) {
		if (pl[k] == 0)
			continue;
		if (str_is(ps[k], pl[k], "Honor"))
			*pv[k] = SPREAD_POLICY_HONOR;
		else if (str_is(ps[k], pl[k], "Ignore"))
			*pv[k] = SPREAD_POLICY_IGNORE;
		else
			return fail_at(d, policy_field[k], -EINVAL, "%s is not Honor or "
				       "Ignore", show_str(ps[k], pl[k], q, sizeof(q)));
	}
	size_t mark = path_field(d, "topologyKey");
	rc = intern_here(d, tk, tk_len, &sc.topology_key);
	path_pop(d, mark);
	if (rc == 0)
		rc = label_selector(d, c, "labelSelector", &sc.selector);
	if (rc == 0)
		rc = merge_label_keys(d, c, "matchLabelKeys", SEL_IN, &sc.selector);
	if (rc == 0)
		g->spread[g->n_spread++] = sc;
	return rc;
}

/* The controller of a pod: the first metadata.ownerReferences entry with
 * controller: true (metav1.GetControllerOfNoCopy); *kind OBJ_KINDS when
 * none, or one default spreading does not read. */
static int pod_controller(struct decoder *d, const json_t *obj, uint8_t *kind,
			  uint32_t *name)
{
	json_t *meta, *refs, *ref;
	size_t i;
	*kind = OBJ_KINDS;
	*name = 0;
	int rc = get(d, obj, "metadata", W_OBJECT, &meta);
	if (rc < 0 || meta == NULL)
		return rc;
	size_t outer = path_field(d, "metadata");
	rc = get(d, meta, "ownerReferences", W_ARRAY, &refs);
	size_t mark = path_field(d, "ownerReferences");
	json_array_foreach(refs, i, ref) {
		json_t *ctl = NULL;
		const char *api = "", *k = "";
		size_t api_len = 0, k_len = 0;
		if (rc < 0)
			break;
		size_t m = path_index(d, i);
		rc = check_type(d, ref, W_OBJECT);
		if (rc == 0)
			rc = get(d, ref, "controller", W_BOOL, &ctl);
		if (rc == 0)
			rc = get_str(d, ref, "apiVersion", &api, &api_len);
		if (rc == 0)
			rc = get_str(d, ref, "kind", &k, &k_len);
		if (rc == 0 && ctl != NULL && json_is_true(ctl)) {
			/* helper.DefaultSelector's rcKind, rsKind, ssKind: the
			 * group and version must be these. */
			if (str_is(api, api_len, "v1") && str_is(k, k_len,
								 "ReplicationController"))
				*kind = OBJ_RC;
			else if (str_is(api, api_len, "apps/v1") &&
				 str_is(k, k_len, "ReplicaSet"))
				*kind = OBJ_RS;
			else if (str_is(api, api_len, "apps/v1") &&
				 str_is(k, k_len, "StatefulSet"))
				*kind = OBJ_SS;
			if (*kind != OBJ_KINDS) {
				const char *n;
				size_t n_len;
				rc = get_str(d, ref, "name", &n, &n_len);
				/* A name never interned names no object read. */
				if (rc == 0 && !intern_find(d->ctx->strings, n, n_len, name))
					*kind = OBJ_KINDS;
			}
			path_pop(d, m);
			break; /* only the first controller counts */
		}
		path_pop(d, m);
	}
	path_pop(d, mark);
	path_pop(d, outer);
	return rc;
}

/* Adds `l` to `set` (sorted by key, at most `max`): a key already there
 * takes the new value (labels.Merge). */
static void label_set_merge(struct label *set, size_t *n, const struct label *l)
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

/* kube-scheduler's helper.DefaultSelector (framework/plugins/helper/
 * spread.go) for a pod to place: the selectors of the Services of its
 * namespace that select it, merged, then its controller's (a
 * ReplicationController's merged in; a ReplicaSet's or StatefulSet's
 * requirements added), found by name in its namespace. Nothing selects
 * it: no default selector, and so no default constraint
 * (buildDefaultConstraints). */
static int pod_default_selector(struct decoder *d, const json_t *obj)
{
	struct pod_group *g = &d->group;
	struct k8s_objects *o = d->ctx->objects;
	struct label set[GROUP_MAX_LABELS + OBJECT_MAX_LABELS];
	size_t n_set = 0, first;
	uint8_t kind;
	uint32_t owner;
	int rc = pod_controller(d, obj, &kind, &owner);
	if (rc < 0)
		return rc;
	size_t n = services_of(o, g->ns, &first);
	for (size_t i = 0; i < n; i++) {
		const struct obj *svc = &o->objs[o->services[first + i]];
		if (!labels_subset(&o->labels[svc->first], svc->n, g->labels, g->n_labels))
			continue;
		/* It selects the pod: its pairs are the pod's own labels. */
		for (uint32_t k = 0; k < svc->n; k++)
			label_set_merge(set, &n_set, &o->labels[svc->first + k]);
	}
	const struct obj *ctl = kind != OBJ_KINDS ? obj_find(o, kind, g->ns, owner) : NULL;
	if (ctl != NULL && ctl->kind == OBJ_RC)
		for (uint32_t k = 0; k < ctl->n && n_set < GROUP_MAX_LABELS + OBJECT_MAX_LABELS; k++)
			label_set_merge(set, &n_set, &o->labels[ctl->first + k]);
	g->default_selector = (struct group_selector){.present = true,
						      .first_req = g->n_reqs};
	for (size_t k = 0; k < n_set && rc == 0; k++)
		rc = group_req_add(d, set[k].key, SEL_IN, &set[k].value, 1,
				   &g->default_selector);
	if (ctl != NULL && ctl->kind != OBJ_RC) {
		for (uint32_t k = 0; k < ctl->n && rc == 0; k++) {
			const struct obj_req *r = &o->reqs[ctl->first + k];
			/* An Exists requirement has no values, and the pool
			 * may be empty (NULL): no pointer into it then. */
			const uint32_t *vals = r->n_values ? &o->values[r->first_value] : NULL;
			rc = group_req_add(d, r->key, r->op, vals, r->n_values,
					   &g->default_selector);
		}
	}
	/* selector.Empty(): no default constraint. */
	if (rc == 0 && g->default_selector.n_reqs == 0)
		g->default_selector = (struct group_selector){0};
	return rc;
}

/* The pod's group: namespace `ns`, metadata.labels, spec.affinity's
 * podAffinity and podAntiAffinity, spec.topologySpreadConstraints;
 * encoded and interned into pod.group. */
static int pod_group_fields(struct decoder *d, const json_t *obj, const json_t *spec,
			    const char *ns, size_t ns_len)
{
	struct pod_group *g = &d->group;
	json_t *meta, *aff = NULL, *tsc, *c;
	size_t n, i;
	memset(g, 0, sizeof(*g));
	int rc = intern_here(d, ns, ns_len, &g->ns);
	if (rc == 0)
		rc = get(d, obj, "metadata", W_OBJECT, &meta);
	if (rc == 0 && meta != NULL) {
		size_t mark = path_field(d, "metadata");
		rc = label_map(d, meta, "labels", g->labels, GROUP_MAX_LABELS, &n,
			       false);
		g->n_labels = (uint16_t)n;
		/* A terminating pod (kubectl shows it Terminating) still counts
		 * toward inter-pod affinity, but not toward spreading. */
		json_t *deleted = NULL;
		if (rc == 0)
			rc = get(d, meta, "deletionTimestamp", W_STRING, &deleted);
		g->terminating = deleted != NULL;
		path_pop(d, mark);
	}
	if (rc < 0)
		return rc;
	if (spec != NULL) {
		size_t mark = path_field(d, "spec");
		rc = get(d, spec, "affinity", W_OBJECT, &aff);
		if (rc == 0 && aff != NULL) {
			size_t am = path_field(d, "affinity");
			rc = pod_affinity_list(d, aff, "podAffinity", false,
					       TERM_REQUIRED_AFFINITY);
			if (rc == 0)
				rc = pod_affinity_list(d, aff, "podAntiAffinity", false,
						       TERM_REQUIRED_ANTI_AFFINITY);
			if (rc == 0)
				rc = pod_affinity_list(d, aff, "podAffinity", true,
						       TERM_PREFERRED_AFFINITY);
			if (rc == 0)
				rc = pod_affinity_list(d, aff, "podAntiAffinity", true,
						       TERM_PREFERRED_ANTI_AFFINITY);
			path_pop(d, am);
		}
		if (rc == 0)
			rc = get(d, spec, "topologySpreadConstraints", W_ARRAY, &tsc);
		if (rc == 0 && tsc != NULL) {
			size_t tm = path_field(d, "topologySpreadConstraints");
			json_array_foreach(tsc, i, c) {
				size_t m = path_index(d, i);
				rc = spread_constraint(d, c);
				path_pop(d, m);
				if (rc < 0)
					break;
			}
			path_pop(d, tm);
		}
		path_pop(d, mark);
		if (rc < 0)
			return rc;
	}
	/* Only a pod to place with no constraints of its own is ever the
	 * incoming pod whose default constraints run; another pod's default
	 * selector would only split its group. */
	if (!d->ctx->cluster_file && d->ctx->objects != NULL && g->n_spread == 0 &&
	    (rc = pod_default_selector(d, obj)) < 0)
		return rc;
	char enc[GROUP_ENCODED_MAX + 1];
	int len = pod_group_encode(g, enc, sizeof(enc));
	if (len < 0)
		return fail(d, len == -E2BIG ? -ENOSPC : -EINVAL, "its labels, pod "
			    "affinity terms and spread constraints take more than %u "
			    "bytes encoded (GROUP_ENCODED_MAX)", GROUP_ENCODED_MAX);
	rc = intern_here(d, enc, (size_t)len, &d->pod.group);
	d->pod.group_terms = g->n_terms > 0;
	return rc;
}

/* --- pods ---------------------------------------------------------------- */

/* The first field of a pod to place that needs what shmsched does not do:
 * remembered as the pod's own answer (k8s_pod_meta.unsupported), "<path
 * of `field`>: <why>". The rest of the pod is still decoded and checked,
 * so a malformed file is still refused whole. */
static void mark_unsupported(struct decoder *d, uint8_t kind, const char *field,
			     const char *why)
{
	if (d->unsupported_kind != K8S_UNSUPPORTED_NONE)
		return;
	d->unsupported_kind = kind;
	snprintf(d->unsupported, sizeof(d->unsupported), "%s%s%s: %s", d->path,
		 d->path_len > 0 ? "." : "", field, why);
}

/* Member `key`, an array (`w` W_ARRAY) or object: whether it holds
 * anything. Absent, null, [] and {} hold nothing. */
static int get_nonempty(struct decoder *d, const json_t *obj, const char *key,
			enum want w, bool *nonempty)
{
	json_t *v;
	int rc = get(d, obj, key, w, &v);
	*nonempty = v != NULL && (w == W_ARRAY ? json_array_size(v) > 0 :
						  json_object_size(v) > 0);
	return rc;
}

/* Fields of a pod to place that would change where it may go and that
 * shmsched does not model: the pod is answered on its own, never placed
 * by a spec that leaves them out (mark_unsupported). */
static int pod_unsupported(struct decoder *d, const json_t *spec)
{
	json_t *vols, *vol;
	const char *s;
	size_t len, i;
	char q[SHOW_MAX + 16];
	int rc = get_str(d, spec, "schedulerName", &s, &len);
	if (rc < 0)
		return rc;
	int profile = sched_profile_of(d->ctx->profiles, s, len);
	if (profile < 0) {
		/* Not ours to place: kube-scheduler ignores such a pod, and so
		 * does whoever visits it (meta.other_scheduler); nothing else it
		 * carries is checked. */
		d->other_scheduler = true;
		(void)q;
		return 0;
	}
	d->pod.profile = (uint8_t)profile;
	bool gates, claims;
	if ((rc = get_nonempty(d, spec, "schedulingGates", W_ARRAY, &gates)) < 0 ||
	    (rc = get_nonempty(d, spec, "resourceClaims", W_ARRAY, &claims)) < 0)
		return rc;
	/* kube-scheduler's SchedulingGates PreEnqueue keeps a gated pod out
	 * of the queue until its gates are removed. */
	if (gates)
		mark_unsupported(d, K8S_UNSUPPORTED_SCHEDULING_GATES, "schedulingGates",
				 "the pod waits for its scheduling gates to be removed, "
				 "and shmsched keeps no pod waiting");
	if (claims)
		mark_unsupported(d, K8S_UNSUPPORTED_RESOURCE_CLAIMS, "resourceClaims",
				 "dynamic resource allocation is not supported");
	if ((rc = get(d, spec, "volumes", W_ARRAY, &vols)) < 0 || vols == NULL)
		return rc;
	size_t outer = path_field(d, "volumes");
	json_array_foreach(vols, i, vol) {
		size_t mark = path_index(d, i);
		bool pvc = false, eph = false;
		rc = check_type(d, vol, W_OBJECT);
		if (rc == 0)
			rc = get_nonempty(d, vol, "persistentVolumeClaim", W_OBJECT, &pvc);
		if (rc == 0)
			rc = get_nonempty(d, vol, "ephemeral", W_OBJECT, &eph);
		/* VolumeBinding, VolumeZone, VolumeRestrictions and
		 * NodeVolumeLimits act on claims. */
		if (pvc)
			mark_unsupported(d, K8S_UNSUPPORTED_VOLUME_BINDING,
					 "persistentVolumeClaim",
					 "volume binding is not supported");
		if (eph)
			mark_unsupported(d, K8S_UNSUPPORTED_VOLUME_BINDING, "ephemeral",
					 "a generic ephemeral volume is a claim, and volume "
					 "binding is not supported");
		path_pop(d, mark);
		if (rc < 0)
			break;
	}
	path_pop(d, outer);
	return rc;
}

static int pod_phase(struct decoder *d, const json_t *obj, uint8_t *phase)
{
	static const char *const names[] = {
		[POD_PHASE_PENDING] = "Pending",     [POD_PHASE_RUNNING] = "Running",
		[POD_PHASE_SUCCEEDED] = "Succeeded", [POD_PHASE_FAILED] = "Failed",
		[POD_PHASE_UNKNOWN] = "Unknown",
	};
	json_t *status;
	const char *s = "";
	size_t len = 0;
	char q[SHOW_MAX + 16];
	*phase = POD_PHASE_PENDING;
	int rc = get(d, obj, "status", W_OBJECT, &status);
	if (rc < 0 || status == NULL)
		return rc;
	size_t mark = path_field(d, "status");
	rc = get_str(d, status, "phase", &s, &len);
	if (rc == 0 && len > 0) {
		size_t i = 0;
		while (i < sizeof(names) / sizeof(names[0]) && !str_is(s, len, names[i]))
			i++;
		if (i < sizeof(names) / sizeof(names[0]))
			*phase = (uint8_t)i;
		else
			rc = fail_at(d, "phase", -EINVAL, "%s is not Pending, Running, "
				     "Succeeded, Failed or Unknown",
				     show_str(s, len, q, sizeof(q)));
	}
	path_pop(d, mark);
	return rc;
}

static int pod_spec_fields(struct decoder *d, const json_t *spec)
{
	struct pod_spec *p = &d->pod;
	json_t *hn, *aff, *na, *tols, *t;
	size_t i, n_sel;
	int rc;
	/* In a cluster file a pod is counted (bound) or skipped (pending),
	 * whatever it carries, as kube-scheduler counts it: only a pod to
	 * place is refused for what shmsched cannot do for it. */
	if ((rc = get_id(d, spec, "nodeName", &p->node_name)) < 0 ||
	    (!d->ctx->cluster_file && (rc = pod_unsupported(d, spec)) < 0) ||
	    (rc = get(d, spec, "hostNetwork", W_BOOL, &hn)) < 0 ||
	    (rc = pod_requests(d, spec, hn != NULL && json_is_true(hn))) < 0 ||
	    (rc = label_map(d, spec, "nodeSelector", p->selector,
			    POD_MAX_SELECTOR, &n_sel, true)) < 0)
		return rc;
	p->n_selector = (uint8_t)n_sel;

	if ((rc = get(d, spec, "affinity", W_OBJECT, &aff)) < 0)
		return rc;
	if (aff != NULL) {
		size_t mark = path_field(d, "affinity");
		rc = get(d, aff, "nodeAffinity", W_OBJECT, &na);
		if (rc == 0 && na != NULL) {
			size_t m = path_field(d, "nodeAffinity");
			rc = node_affinity(d, na);
			path_pop(d, m);
		}
		path_pop(d, mark);
		if (rc < 0)
			return rc;
	}

	if ((rc = get(d, spec, "tolerations", W_ARRAY, &tols)) < 0 || tols == NULL)
		return rc;
	size_t outer = path_field(d, "tolerations");
	if (json_array_size(tols) > POD_MAX_TOLERATIONS)
		rc = fail(d, -ENOSPC, "%zu tolerations, at most %d "
			  "(POD_MAX_TOLERATIONS)", json_array_size(tols),
			  POD_MAX_TOLERATIONS);
	json_array_foreach(tols, i, t) {
		if (rc < 0)
			break;
		size_t mark = path_index(d, i);
		rc = toleration(d, t, &p->tolerations[i]);
		path_pop(d, mark);
		if (rc == 0)
			p->n_tolerations++;
	}
	path_pop(d, outer);
	return rc;
}

/* spec.priority, priorityClassName and preemptionPolicy, as given (the
 * class is resolved by ingest/priority.h). */
static int pod_priority(struct decoder *d, const json_t *spec)
{
	struct pod_spec *p = &d->pod;
	json_t *v;
	const char *s;
	size_t len;
	char q[SHOW_MAX + 16];
	int rc = get(d, spec, "priority", W_INT, &v);
	if (rc < 0)
		return rc;
	if (v != NULL) {
		json_int_t n = json_integer_value(v);
		if (n < INT32_MIN || n > INT32_MAX)
			return fail_at(d, "priority", -EINVAL, "%" JSON_INTEGER_FORMAT
				       " is not a 32-bit integer", n);
		p->priority = (int32_t)n;
		p->priority_flags |= POD_PRIORITY_GIVEN;
	}
	if ((rc = get_id(d, spec, "priorityClassName", &p->priority_class)) < 0 ||
	    (rc = get_str(d, spec, "preemptionPolicy", &s, &len)) < 0)
		return rc;
	if (len == 0)
		return 0;
	p->priority_flags |= POD_PREEMPTION_GIVEN;
	if (str_is(s, len, "Never"))
		p->priority_flags |= POD_PREEMPT_NEVER;
	else if (!str_is(s, len, "PreemptLowerPriority"))
		return fail_at(d, "preemptionPolicy", -EINVAL, "%s: expected "
			       "PreemptLowerPriority or Never",
			       show_str(s, len, q, sizeof(q)));
	return 0;
}

/* The pod's own default for waiting in the queue (shm/model.h,
 * POD_WAIT): annotation shmsched.io/wait, "true" or "false". */
static int pod_wait(struct decoder *d, const json_t *obj)
{
	json_t *ann;
	const char *s;
	size_t len;
	char q[SHOW_MAX + 16];
	int rc = get_annotations(d, obj, &ann);
	if (rc < 0 || ann == NULL)
		return rc;
	size_t mark = path_field(d, "metadata.annotations");
	json_t *v = json_object_get(ann, ANN_WAIT);
	rc = v != NULL && !json_is_null(v) ? get_str(d, ann, ANN_WAIT, &s, &len) : 0;
	if (rc == 0 && v != NULL && !json_is_null(v)) {
		path_key(d, ANN_WAIT, strlen(ANN_WAIT));
		if (str_is(s, len, "true"))
			d->pod.priority_flags |= POD_WAIT;
		else if (str_is(s, len, "false"))
			d->pod.priority_flags |= POD_NO_WAIT;
		else
			rc = fail(d, -EINVAL, "%s: expected \"true\" or \"false\"",
				  show_str(s, len, q, sizeof(q)));
	}
	path_pop(d, mark);
	return rc;
}

/* The pod's gang, named one of three ways (at most one), interned as the
 * gang table's key (ingest/priority.h):
 *   - coscheduling's label scheduling.x-k8s.io/pod-group: NAME, the
 *     PodGroup NAME of the pod's namespace: "namespace/NAME";
 *   - Kubernetes 1.36's spec.schedulingGroup.podGroupName (a
 *     scheduling.k8s.io/v1alpha2 PodGroup): "namespace/NAME" too;
 *   - Kubernetes 1.35's spec.workloadRef {name, podGroup,
 *     podGroupReplicaKey}: "namespace/WORKLOAD/GROUP", and
 *     "namespace/WORKLOAD/GROUP/KEY" for a replica (its own gang, with
 *     the group's policy). Names carry no '/', so the forms cannot meet. */
#define GANG_LABEL "scheduling.x-k8s.io/pod-group"

/* spec.KEY.FIELD as a non-empty name without '/' (or absent when
 * optional), appended to buf[*at..) after a '/'. */
static int gang_part(struct decoder *d, const json_t *ref, const char *field,
		     bool optional, char *buf, size_t *at)
{
	const char *s;
	size_t len;
	char q[SHOW_MAX + 16];
	int rc = get_str(d, ref, field, &s, &len);
	if (rc < 0)
		return rc;
	if (len == 0)
		return optional ? 0 : fail_at(d, field, -EINVAL, "missing");
	if (memchr(s, '/', len) != NULL)
		return fail_at(d, field, -EINVAL, "%s: a name has no '/'",
			       show_str(s, len, q, sizeof(q)));
	if (*at + 1 + len > INTERN_MAX_LEN)
		return fail_at(d, field, -EINVAL, "too long: the gang's name is at "
			       "most %u bytes", INTERN_MAX_LEN);
	buf[(*at)++] = '/';
	memcpy(buf + *at, s, len);
	*at += len;
	return 0;
}

static int pod_gang(struct decoder *d, const json_t *obj, const json_t *spec,
		    const char *ns, size_t ns_len)
{
	json_t *meta = json_object_get(obj, "metadata");
	json_t *labels = json_is_object(meta) ? json_object_get(meta, "labels") : NULL;
	json_t *v = json_is_object(labels) ? json_object_get(labels, GANG_LABEL) : NULL;
	bool label = v != NULL && json_is_string(v) && json_string_length(v) > 0;
	json_t *wref = NULL, *sgroup = NULL;
	int rc = 0;
	if (spec != NULL) {
		size_t mark = path_field(d, "spec");
		rc = get(d, spec, "workloadRef", W_OBJECT, &wref);
		if (rc == 0)
			rc = get(d, spec, "schedulingGroup", W_OBJECT, &sgroup);
		path_pop(d, mark);
		if (rc < 0)
			return rc;
	}
	if (label + (wref != NULL) + (sgroup != NULL) > 1)
		return fail_at(d, wref != NULL ? "spec.workloadRef" : "spec.schedulingGroup",
			       -EINVAL, "a pod names one gang at most (the label "
			       GANG_LABEL ", spec.workloadRef or spec.schedulingGroup)");
	char full[INTERN_MAX_LEN + 1];
	size_t at = ns_len;
	memcpy(full, ns, ns_len);
	const char *where;
	if (label) {
		/* The labels' own checks reported any other type. */
		where = "metadata.labels";
		size_t len = json_string_length(v);
		if (ns_len + 1 + len > INTERN_MAX_LEN)
			return fail_at(d, where, -EINVAL, GANG_LABEL ": too long");
		full[at++] = '/';
		memcpy(full + at, json_string_value(v), len);
		at += len;
	} else if (wref != NULL) {
		where = "spec.workloadRef";
		size_t mark = path_field(d, where);
		rc = gang_part(d, wref, "name", false, full, &at);
		if (rc == 0)
			rc = gang_part(d, wref, "podGroup", false, full, &at);
		if (rc == 0)
			rc = gang_part(d, wref, "podGroupReplicaKey", true, full, &at);
		path_pop(d, mark);
	} else if (sgroup != NULL) {
		where = "spec.schedulingGroup";
		size_t mark = path_field(d, where);
		rc = gang_part(d, sgroup, "podGroupName", false, full, &at);
		path_pop(d, mark);
	} else {
		return 0;
	}
	if (rc < 0)
		return rc;
	size_t mark = path_field(d, where);
	rc = intern_here(d, full, at, &d->pod.gang);
	path_pop(d, mark);
	return rc;
}

/* A gang's policy, scheduling.k8s.io's PodGroupPolicy (v1alpha1, a
 * Workload's podGroups[].policy) or PodGroupSchedulingPolicy (v1alpha2,
 * a PodGroup's spec.schedulingPolicy): exactly one of basic (pods placed
 * one by one: min_member 0) and gang.minCount. */
static int gang_policy(struct decoder *d, const json_t *parent, const char *key,
		       uint32_t *min_member)
{
	json_t *pol, *basic, *gang, *v;
	int rc = get(d, parent, key, W_OBJECT, &pol);
	if (rc < 0)
		return rc;
	if (pol == NULL)
		return fail_at(d, key, -EINVAL, "missing: basic or gang");
	size_t mark = path_field(d, key);
	rc = get(d, pol, "basic", W_OBJECT, &basic);
	if (rc == 0)
		rc = get(d, pol, "gang", W_OBJECT, &gang);
	if (rc == 0 && (basic != NULL) == (gang != NULL))
		rc = fail(d, -EINVAL, "exactly one of basic and gang");
	if (rc == 0 && gang != NULL) {
		path_field(d, "gang");
		rc = get(d, gang, "minCount", W_INT, &v);
		if (rc == 0 && (v == NULL || json_integer_value(v) < 1 ||
				json_integer_value(v) > 100000))
			rc = fail_at(d, "minCount", -EINVAL, "%s: expected 1..100000",
				     v == NULL ? "missing" : "out of range");
		if (rc == 0)
			*min_member = (uint32_t)json_integer_value(v);
	} else if (rc == 0) {
		*min_member = 0;
	}
	path_pop(d, mark);
	return rc;
}

/* kube-scheduler's GangScheduling waits a fixed 5 minutes for a gang. */
#define KUBE_GANG_TIMEOUT_S 300u

/* A Workload: scheduling.k8s.io/v1alpha1 (Kubernetes 1.35): each of its
 * spec.podGroups is a gang table entry "namespace/WORKLOAD/GROUP"; or
 * v1alpha2 (1.36), whose podGroupTemplates are templates for the PodGroup
 * objects a controller creates, which carry the policy: nothing to read.
 * To the visitor's pod_group, or skipped when it takes none. */
/* An object's "namespace/name", interned: how pods, PodGroups and budgets
 * are named. */
static int intern_ns_name(struct decoder *d, const char *ns, size_t ns_len,
			  const char *name, size_t name_len, uint32_t *id)
{
	if (ns_len + 1 + name_len > INTERN_MAX_LEN)
		return fail_at(d, "metadata.name", -EINVAL, "namespace and name are "
			       "longer than %u bytes", INTERN_MAX_LEN);
	char full[INTERN_MAX_LEN + 1];
	memcpy(full, ns, ns_len);
	full[ns_len] = '/';
	memcpy(full + ns_len + 1, name, name_len);
	size_t mark = path_field(d, "metadata.name");
	int rc = intern_here(d, full, ns_len + 1 + name_len, id);
	path_pop(d, mark);
	return rc;
}

static void count_skipped(struct decoder *d, const char *kind, size_t len);

static int decode_workload(struct decoder *d, const json_t *obj)
{
	const char *ns, *name, *api = "";
	size_t ns_len, name_len, api_len = 0;
	json_t *spec, *groups, *g;
	char q[SHOW_MAX + 16];
	int rc = object_name(d, obj, "workload", true, &ns, &ns_len, &name, &name_len);
	if (rc == 0)
		rc = get_str(d, obj, "apiVersion", &api, &api_len);
	if (rc < 0)
		return rc;
	if (str_is(api, api_len, "scheduling.k8s.io/v1alpha2"))
		return 0;
	if (api_len > 0 && !str_is(api, api_len, "scheduling.k8s.io/v1alpha1")) {
		/* Another group's Workload (Kueue's kueue.x-k8s.io, say), or a
		 * version this reader does not know: a cluster file skips and
		 * counts it like any other kind. */
		if (d->ctx->cluster_file) {
			count_skipped(d, "Workload", 8);
			return 0;
		}
		return fail_at(d, "apiVersion", -EINVAL, "%s: expected "
			       "scheduling.k8s.io/v1alpha1 or v1alpha2",
			       show_str(api, api_len, q, sizeof(q)));
	}
	rc = get(d, obj, "spec", W_OBJECT, &spec);
	if (rc < 0)
		return rc;
	if (spec == NULL)
		return fail_at(d, "spec", -EINVAL, "missing");
	size_t mark = path_field(d, "spec");
	rc = get(d, spec, "podGroups", W_ARRAY, &groups);
	if (rc == 0 && (groups == NULL || json_array_size(groups) == 0))
		rc = fail_at(d, "podGroups", -EINVAL, "missing: at least one pod group");
	size_t i, list = path_field(d, "podGroups");
	json_array_foreach(rc == 0 ? groups : NULL, i, g) {
		size_t item = path_index(d, i);
		struct k8s_pod_group pg = {.timeout_s = KUBE_GANG_TIMEOUT_S};
		char full[INTERN_MAX_LEN + 1];
		size_t at = ns_len;
		memcpy(full, ns, ns_len);
		if (!json_is_object(g))
			rc = fail(d, -EINVAL, "not an object");
		if (rc == 0 && name_len + 1 + ns_len > INTERN_MAX_LEN)
			rc = fail(d, -EINVAL, "the workload's name is too long");
		if (rc == 0) {
			full[at++] = '/';
			memcpy(full + at, name, name_len);
			at += name_len;
			rc = gang_part(d, g, "name", false, full, &at);
		}
		if (rc == 0)
			rc = gang_policy(d, g, "policy", &pg.min_member);
		if (rc == 0)
			rc = intern_here(d, full, at, &pg.name);
		path_pop(d, item);
		if (rc == 0 && d->v->pod_group != NULL) {
			if (d->err != NULL && d->err_len > 0)
				d->err[0] = '\0';
			rc = visited(d, d->v->pod_group(d->v->arg, &pg, d->err,
							d->err_len));
		}
		if (rc < 0)
			break;
	}
	path_pop(d, list);
	path_pop(d, mark);
	return rc;
}

/* A PodGroup: to the visitor, or skipped when it takes none. */
static int decode_pod_group(struct decoder *d, const json_t *obj)
{
	struct k8s_pod_group pg = {0};
	const char *ns, *name;
	size_t ns_len, name_len;
	json_t *spec, *v;
	int rc = object_name(d, obj, "podgroup", true, &ns, &ns_len, &name, &name_len);
	if (rc < 0)
		return rc;
	rc = intern_ns_name(d, ns, ns_len, name, name_len, &pg.name);
	if (rc < 0)
		return rc;
	if (rc == 0)
		rc = get(d, obj, "spec", W_OBJECT, &spec);
	if (rc < 0)
		return rc;
	if (spec == NULL)
		return fail_at(d, "spec", -EINVAL, "missing");
	size_t mark = path_field(d, "spec");
	const char *api;
	size_t api_len;
	rc = get_str(d, obj, "apiVersion", &api, &api_len);
	if (rc == 0 && api_len > 18 && memcmp(api, "scheduling.k8s.io/", 18) == 0) {
		/* Kubernetes' own (v1alpha2, 1.36): spec.schedulingPolicy. */
		pg.timeout_s = KUBE_GANG_TIMEOUT_S;
		rc = gang_policy(d, spec, "schedulingPolicy", &pg.min_member);
		path_pop(d, mark);
		goto visit;
	}
	if (rc == 0)
		rc = get(d, spec, "minMember", W_INT, &v);
	if (rc == 0 && (v == NULL || json_integer_value(v) < 1 ||
			json_integer_value(v) > 100000))
		rc = fail_at(d, "minMember", -EINVAL, "%s: expected 1..100000",
			     v == NULL ? "missing" : "out of range");
	if (rc == 0)
		pg.min_member = (uint32_t)json_integer_value(v);
	if (rc == 0)
		rc = get(d, spec, "scheduleTimeoutSeconds", W_INT, &v);
	if (rc == 0 && v != NULL && (json_integer_value(v) < 1 ||
				     json_integer_value(v) > 86400))
		rc = fail_at(d, "scheduleTimeoutSeconds", -EINVAL, "%" JSON_INTEGER_FORMAT
			     ": expected 1..86400", json_integer_value(v));
	if (rc == 0 && v != NULL)
		pg.timeout_s = (uint32_t)json_integer_value(v);
	path_pop(d, mark);
visit:
	if (rc < 0 || d->v->pod_group == NULL)
		return rc;
	if (d->err != NULL && d->err_len > 0)
		d->err[0] = '\0';
	return visited(d, d->v->pod_group(d->v->arg, &pg, d->err, d->err_len));
}

/* spec.KEY of a PodDisruptionBudget, an IntOrString: an integer
 * 0..2^31-1 into *out, or a percentage "0%".."100%" (*percent true), or
 * absent (*present false). */
static int pdb_count(struct decoder *d, const json_t *spec, const char *key,
		     int32_t *out, bool *present, bool *percent)
{
	char q[SHOW_MAX + 16];
	json_t *v = json_object_get(spec, key);
	*present = *percent = false;
	if (v == NULL || json_is_null(v))
		return 0;
	if (json_is_string(v)) {
		const char *s = json_string_value(v);
		size_t len = json_string_length(v);
		long n = 0;
		bool ok = len >= 2 && len <= 4 && s[len - 1] == '%';
		for (size_t i = 0; ok && i + 1 < len; i++) {
			ok = s[i] >= '0' && s[i] <= '9';
			n = n * 10 + (s[i] - '0');
		}
		if (!ok || n > 100)
			return fail_at(d, key, -EINVAL, "%s: expected an integer or a "
				       "percentage 0%%..100%%", show(v, q, sizeof(q)));
		*out = (int32_t)n;
		*present = *percent = true;
		return 0;
	}
	if (!json_is_integer(v) || json_integer_value(v) < 0 ||
	    json_integer_value(v) > INT32_MAX)
		return fail_at(d, key, -EINVAL, "%s: expected an integer 0..%d",
			       show(v, q, sizeof(q)), INT32_MAX);
	*out = (int32_t)json_integer_value(v);
	*present = true;
	return 0;
}

/* A PodDisruptionBudget (policy/v1): to the visitor, or skipped when it
 * takes none. */
static int decode_pdb(struct decoder *d, const json_t *obj)
{
	struct k8s_pdb b = {0};
	const char *ns, *name;
	size_t ns_len, name_len;
	json_t *spec, *status, *v;
	int rc = object_name(d, obj, "poddisruptionbudget", true, &ns, &ns_len, &name,
			     &name_len);
	if (rc < 0)
		return rc;
	rc = intern_ns_name(d, ns, ns_len, name, name_len, &b.name);
	if (rc < 0)
		return rc;
	struct pod_group *g = &d->group;
	memset(g, 0, sizeof(*g));
	if (rc == 0)
		rc = intern_here(d, ns, ns_len, &b.ns);
	g->ns = b.ns;
	if (rc == 0)
		rc = get(d, obj, "spec", W_OBJECT, &spec);
	if (rc == 0)
		rc = get(d, obj, "status", W_OBJECT, &status);
	if (rc < 0)
		return rc;
	if (spec == NULL)
		return fail_at(d, "spec", -EINVAL, "missing");
	size_t mark = path_field(d, "spec");
	int32_t min = 0, max = 0;
	bool has_min = false, has_max = false, min_pct = false, max_pct = false;
	rc = label_selector(d, spec, "selector", &g->default_selector);
	if (rc == 0)
		rc = pdb_count(d, spec, "minAvailable", &min, &has_min, &min_pct);
	if (rc == 0)
		rc = pdb_count(d, spec, "maxUnavailable", &max, &has_max, &max_pct);
	if (rc == 0 && has_min && has_max)
		rc = fail(d, -EINVAL, "minAvailable and maxUnavailable cannot both "
			  "be set");
	path_pop(d, mark);
	if (rc < 0)
		return rc;
	b.selector = g->default_selector.present ? g : NULL;
	v = status != NULL ? json_object_get(status, "disruptionsAllowed") : NULL;
	if (v != NULL && !json_is_null(v)) {
		if (!json_is_integer(v) || json_integer_value(v) < 0 ||
		    json_integer_value(v) > INT32_MAX)
			return fail_at(d, "status.disruptionsAllowed", -EINVAL,
				       "expected an integer 0..%d", INT32_MAX);
		b.mode = K8S_PDB_ALLOWED;
		b.value = (int32_t)json_integer_value(v);
	} else if (min_pct || max_pct) {
		return fail_at(d, min_pct ? "spec.minAvailable" : "spec.maxUnavailable",
			       -EINVAL, "a percentage needs the pods the controller "
			       "expects: give status.disruptionsAllowed (kubectl get "
			       "-o json carries it) or an integer");
	} else if (has_max) {
		b.mode = K8S_PDB_MAX_UNAVAILABLE;
		b.value = max;
	} else if (has_min) {
		b.mode = K8S_PDB_MIN_AVAILABLE;
		b.value = min;
	} else {
		return fail_at(d, "spec", -EINVAL, "minAvailable or maxUnavailable "
			       "(or status.disruptionsAllowed) is needed");
	}
	if (d->v->pdb == NULL)
		return 0;
	if (d->err != NULL && d->err_len > 0)
		d->err[0] = '\0';
	return visited(d, d->v->pdb(d->v->arg, &b, d->err, d->err_len));
}

/* A PriorityClass: to the visitor, or skipped when it takes none. */
static int decode_priority_class(struct decoder *d, const json_t *obj)
{
	struct k8s_priority_class pc = {0};
	const char *ns, *name, *s;
	size_t ns_len, name_len, len;
	json_t *v;
	char q[SHOW_MAX + 16];
	int rc = object_name(d, obj, "priorityclass", false, &ns, &ns_len, &name,
			     &name_len);
	if (rc < 0)
		return rc;
	size_t mark = path_field(d, "metadata.name");
	rc = intern_here(d, name, name_len, &pc.name);
	path_pop(d, mark);
	if (rc == 0)
		rc = get(d, obj, "value", W_INT, &v);
	if (rc < 0)
		return rc;
	if (v == NULL)
		return fail_at(d, "value", -EINVAL, "missing");
	json_int_t n = json_integer_value(v);
	if (n < INT32_MIN || n > INT32_MAX)
		return fail_at(d, "value", -EINVAL, "%" JSON_INTEGER_FORMAT
			       " is not a 32-bit integer", n);
	pc.value = (int32_t)n;
	if ((rc = get(d, obj, "globalDefault", W_BOOL, &v)) < 0)
		return rc;
	pc.global_default = v != NULL && json_is_true(v);
	if ((rc = get_str(d, obj, "preemptionPolicy", &s, &len)) < 0)
		return rc;
	if (str_is(s, len, "Never"))
		pc.preempt_never = true;
	else if (len > 0 && !str_is(s, len, "PreemptLowerPriority"))
		return fail_at(d, "preemptionPolicy", -EINVAL, "%s: expected "
			       "PreemptLowerPriority or Never",
			       show_str(s, len, q, sizeof(q)));
	if (d->v->priority_class == NULL)
		return 0;
	if (d->err != NULL && d->err_len > 0)
		d->err[0] = '\0';
	return visited(d, d->v->priority_class(d->v->arg, &pc, d->err, d->err_len));
}

static int decode_pod(struct decoder *d, const json_t *obj, size_t index)
{
	struct pod_spec *p = &d->pod;
	struct k8s_pod_meta meta = {.index = index};
	const char *ns, *name;
	size_t ns_len, name_len;
	json_t *spec;
	memset(p, 0, sizeof(*p));

	int rc = object_name(d, obj, "pod", true, &ns, &ns_len, &name, &name_len);
	if (rc < 0)
		return rc;
	rc = intern_ns_name(d, ns, ns_len, name, name_len, &p->ns_name);
	if (rc < 0)
		return rc;
	meta.ns_name = p->ns_name;
	if (rc == 0)
		rc = pod_phase(d, obj, &meta.phase);
	if (rc == 0)
		rc = get(d, obj, "spec", W_OBJECT, &spec);
	d->guaranteed = false;
	d->other_scheduler = false;
	d->unsupported_kind = K8S_UNSUPPORTED_NONE;
	d->unsupported[0] = '\0';
	if (rc == 0 && spec != NULL) {
		size_t mark = path_field(d, "spec");
		rc = pod_spec_fields(d, spec);
		if (rc == 0)
			rc = pod_priority(d, spec);
		path_pop(d, mark);
	}
	if (rc == 0)
		rc = pod_wait(d, obj);
	if (rc == 0)
		rc = pod_devices(d, obj);
	if (rc == 0)
		rc = pod_group_fields(d, obj, spec, ns, ns_len);
	if (rc == 0)
		rc = pod_gang(d, obj, spec, ns, ns_len);
	if (rc < 0)
		return rc;

	meta.other_scheduler = d->other_scheduler;
	if (d->unsupported_kind != K8S_UNSUPPORTED_NONE) {
		meta.unsupported_kind = d->unsupported_kind;
		meta.unsupported = d->unsupported;
	}
	if (d->v->pod == NULL)
		return fail(d, -EINVAL, "a Pod in a file read for nodes only");
	if (d->err != NULL && d->err_len > 0)
		d->err[0] = '\0';
	return visited(d, d->v->pod(d->v->arg, p, &meta, d->err, d->err_len));
}

/* --- objects: the first pass (k8s_objects_read_*) ------------------------------ */

static int obj_kind_of(const char *kind, size_t len)
{
	for (int k = 0; k < OBJ_KINDS; k++)
		if (str_is(kind, len, obj_kind_name[k]))
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
		size_t mark = path_field(d, key);
		int rc = fail(d, -ENOSPC, "%zu entries, at most %d (OBJECT_MAX_LABELS)",
			      json_object_size(map), OBJECT_MAX_LABELS);
		path_pop(d, mark);
		return rc;
	}
	if (reserve((void **)&o->labels, &o->cap_labels, o->n_labels,
		    OBJECT_MAX_LABELS + 1, sizeof(*o->labels)) < 0)
		return fail(d, -ENOMEM, "out of memory");
	return label_map(d, obj, key, &o->labels[o->n_labels], OBJECT_MAX_LABELS, n,
			 selector);
}

/* The object's name (and namespace) as intern ids, and d->who. */
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
	int rc = object_name(d, obj, who[kind], namespaced, &ns, &ns_len, &name,
			     &name_len);
	if (rc < 0)
		return rc;
	size_t mark = path_field(d, "metadata.name");
	rc = intern_here(d, name, name_len, &x->name);
	path_pop(d, mark);
	if (rc == 0 && namespaced) {
		mark = path_field(d, "metadata.namespace");
		rc = intern_here(d, ns, ns_len, &x->ns);
		path_pop(d, mark);
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
		return fail(d, -EEXIST, "a second %s of this name",
			    obj_kind_name[x->kind]);
	if (rc < 0)
		return fail(d, rc, "out of memory");
	if (labels)
		o->n_labels += x->n;
	return 0;
}

/* A Namespace: its labels, and kubernetes.io/metadata.name, which the API
 * server sets to its name (SetDefaults_Namespace). */
static int decode_namespace(struct decoder *d, const json_t *obj)
{
	struct k8s_objects *o = d->ctx->objects;
	struct obj x;
	json_t *meta;
	uint32_t key;
	size_t n = 0;
	int rc = obj_identity(d, obj, OBJ_NAMESPACE, &x);
	if (rc == 0)
		rc = get(d, obj, "metadata", W_OBJECT, &meta);
	if (rc < 0)
		return rc;
	size_t mark = path_field(d, "metadata");
	rc = obj_label_map(d, meta, "labels", &n, false);
	path_pop(d, mark);
	if (rc == 0)
		rc = intern_here(d, "kubernetes.io/metadata.name",
				 strlen("kubernetes.io/metadata.name"), &key);
	if (rc < 0)
		return rc;
	label_set_merge(&o->labels[o->n_labels], &n, &(struct label){key, x.name});
	x.n = (uint32_t)n;
	rc = obj_added(d, &x, true);
	if (rc == 0)
		o->counts.namespaces++;
	return rc;
}

/* A Service: its spec.selector. One without (nil) selects no pod
 * (GetPodServices); one with {} selects every pod of its namespace and
 * adds nothing to a selector: neither is kept. */
static int decode_service(struct decoder *d, const json_t *obj)
{
	struct obj x;
	json_t *spec;
	size_t n = 0;
	int rc = obj_identity(d, obj, OBJ_SERVICE, &x);
	if (rc == 0)
		rc = get(d, obj, "spec", W_OBJECT, &spec);
	if (rc < 0 || spec == NULL)
		return rc;
	size_t mark = path_field(d, "spec");
	rc = obj_label_map(d, spec, "selector", &n, true);
	path_pop(d, mark);
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
static int decode_rc(struct decoder *d, const json_t *obj)
{
	struct obj x;
	json_t *spec, *tmpl = NULL, *meta = NULL;
	size_t n = 0;
	int rc = obj_identity(d, obj, OBJ_RC, &x);
	if (rc == 0)
		rc = get(d, obj, "spec", W_OBJECT, &spec);
	if (rc < 0)
		return rc;
	if (spec != NULL) {
		size_t mark = path_field(d, "spec");
		rc = obj_label_map(d, spec, "selector", &n, true);
		if (rc == 0 && n == 0)
			rc = get(d, spec, "template", W_OBJECT, &tmpl);
		if (rc == 0 && tmpl != NULL) {
			size_t m = path_field(d, "template");
			rc = get(d, tmpl, "metadata", W_OBJECT, &meta);
			if (rc == 0 && meta != NULL) {
				size_t mm = path_field(d, "metadata");
				rc = obj_label_map(d, meta, "labels", &n, false);
				path_pop(d, mm);
			}
			path_pop(d, m);
		}
		path_pop(d, mark);
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
static int decode_controller(struct decoder *d, const json_t *obj, int kind)
{
	struct k8s_objects *o = d->ctx->objects;
	struct pod_group *g = &d->group;
	struct group_selector sel = {0};
	struct obj x;
	json_t *spec;
	int rc = obj_identity(d, obj, kind, &x);
	if (rc == 0)
		rc = get(d, obj, "spec", W_OBJECT, &spec);
	if (rc < 0)
		return rc;
	memset(g, 0, sizeof(*g));
	if (spec != NULL) {
		size_t mark = path_field(d, "spec");
		rc = label_selector(d, spec, "selector", &sel);
		path_pop(d, mark);
	}
	if (rc == 0 && (reserve((void **)&o->reqs, &o->cap_reqs, o->n_reqs, sel.n_reqs,
				sizeof(*o->reqs)) < 0 ||
			reserve((void **)&o->values, &o->cap_values, o->n_values,
				g->n_values, sizeof(*o->values)) < 0))
		rc = fail(d, -ENOMEM, "out of memory");
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

/* Counts an object of a kind shmsched does not read (k8s_ctx.skipped). */
static void count_skipped(struct decoder *d, const char *kind, size_t len)
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
	char who[sizeof(d->who)];
	if (name != NULL)
		snprintf(who, sizeof(who), "%s %.100s%s%.200s",
			 strcmp(k, "Pod") == 0 ? "pod" : strcmp(k, "Node") == 0 ? "node" : k,
			 ns != NULL ? ns : strcmp(k, "Pod") == 0 ? "default" : "",
			 ns != NULL || strcmp(k, "Pod") == 0 ? "/" : "", name);
	else
		snprintf(who, sizeof(who), "%s", d->who);
	char line[K8S_FIELDS_MAX_REPORT * K8S_FIELDS_MSG_MAX + 64];
	k8s_fields_report_line(&r, line, sizeof(line));
	if (fv_level == K8S_FIELDS_WARN) {
		if (fv_warn != NULL) {
			char msg[sizeof(line) + 512];
			snprintf(msg, sizeof(msg), "%s: %s: %s", d->file, who, line);
			fv_warn(fv_warn_arg, msg);
		}
		return 0;
	}
	if (d->err != NULL && d->err_len > 0)
		snprintf(d->err, d->err_len, "%s: %s: %s (fieldValidation=Strict; "
			 "Warn or Ignore to load it anyway)", d->file, who, line);
	return -EINVAL;
}

static int decode_list(struct decoder *d, const json_t *obj, const char *item_kind)
{
	json_t *items, *item;
	size_t i;
	int rc = get(d, obj, "items", W_ARRAY, &items);
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
	char q[SHOW_MAX + 16], items_kind[64];
	snprintf(d->who, sizeof(d->who), "object #%zu", d->index);
	path_pop(d, 0);
	if (!json_is_object(obj)) {
		d->index++;
		if (d->objects_pass)
			return 0;
		return fail(d, -EINVAL, "expected an object, got %s", json_kind(obj));
	}
	int rc = get_str(d, obj, "kind", &kind, &kind_len);
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
	int okind = obj_kind_of(kind, kind_len);
	if (d->objects_pass) {
		switch (okind) {
		case OBJ_NAMESPACE:
			return decode_namespace(d, obj);
		case OBJ_SERVICE:
			return decode_service(d, obj);
		case OBJ_RC:
			return decode_rc(d, obj);
		case OBJ_RS:
		case OBJ_SS:
			return decode_controller(d, obj, okind);
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
			return rc < 0 ? rc : decode_pod(d, obj, index);
		}
		return fail(d, -EINVAL, "kind missing (and no spec.containers to "
			    "tell a Pod)");
	}
	if (str_is(kind, kind_len, "Node"))
		return decode_node(d, obj);
	if (str_is(kind, kind_len, "Pod"))
		return decode_pod(d, obj, index);
	if (str_is(kind, kind_len, "PriorityClass"))
		return decode_priority_class(d, obj);
	if (str_is(kind, kind_len, "PodGroup"))
		return decode_pod_group(d, obj);
	if (str_is(kind, kind_len, "Workload"))
		return decode_workload(d, obj);
	if (str_is(kind, kind_len, "PodDisruptionBudget"))
		return decode_pdb(d, obj);
	if (okind >= 0)
		return 0; /* read by the first pass */
	if (d->ctx->cluster_file) {
		count_skipped(d, kind, kind_len);
		return 0;
	}
	return fail_at(d, "kind", -EINVAL, "%s is not Node, Pod, PriorityClass, PodGroup, "
		       "Workload, PodDisruptionBudget, Namespace, Service, ReplicationController, ReplicaSet or "
		       "StatefulSet%s (a cluster "
		       "file skips other kinds; a pods file refuses them)",
		       show_str(kind, kind_len, q, sizeof(q)),
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
	if (d->err != NULL && d->err_len > 0) {
		if (je->line < 1)
			snprintf(d->err, d->err_len, "%s: %s", d->file, je->text);
		else
			snprintf(d->err, d->err_len, "%s:%ld:%ld: %s", d->file,
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
	d->file = name;
	d->ctx = ctx;
	d->v = v;
	d->err = err;
	d->err_len = err_len;
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
	char *buf = NULL;
	size_t len = 0, cap = 0;
	int rc = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		goto fail_open;
	}
	for (;;) {
		if (len == cap) {
			size_t new_cap = cap == 0 ? 65536 : cap * 2;
			char *nb = realloc(buf, new_cap);
			if (nb == NULL) {
				rc = -ENOMEM;
				goto fail_read;
			}
			buf = nb;
			cap = new_cap;
		}
		ssize_t n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = -errno;
			goto fail_read;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	*out = buf;
	*out_len = len;
	return 0;

fail_read:
	free(buf);
	close(fd);
fail_open:
	if (err != NULL && err_len > 0)
		snprintf(err, err_len, "%s: cannot read: %s", path,
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
	o->pod->ns_name = 0;
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
