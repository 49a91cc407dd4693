/* Nodes: devices (GPUs, cores, NUMA) from status, labels and
 * annotations, taints, conditions, and decode_node() itself. Part of the
 * Kubernetes decoder: see k8s_json_load.c's note and k8s_json_internal.h. */
#include "ingest/k8s_json_internal.h"

/* --- devices ------------------------------------------------------------- */

/* The node's GPU count from its resource list (allocatable, else capacity,
 * as the rest of the node): a whole number of devices. */
static int node_gpu_resource(struct decoder *d, const json_t *status, long *n)
{
	char q[JSON_IN_SHOW_MAX + 16];
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
	size_t outer = json_in_field(&d->in, "status");
	json_in_field(&d->in, list_key);
	json_in_key(&d->in, GPU_RESOURCE, strlen(GPU_RESOURCE));
	int64_t units = 0, milli = 0;
	/* kj_resource_list() has read it as a quantity already. */
	int rc = kj_quantity_here(d, v, QUANTITY_UNITS, &units);
	if (rc == 0 && units > NODE_MAX_GPUS)
		rc = json_in_fail(&d->in, -ENOSPC, "%" PRId64 " devices, at most %d "
			  "(NODE_MAX_GPUS)", units, NODE_MAX_GPUS);
	if (rc == 0)
		rc = kj_quantity_here(d, v, QUANTITY_MILLI, &milli);
	if (rc == 0 && milli % 1000 != 0)
		rc = json_in_fail(&d->in, -EINVAL, "%s is not a whole number of devices",
			  json_in_show(v, q, sizeof(q)));
	if (rc == 0)
		*n = (long)units;
	json_in_pop(&d->in, outer);
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
	char q[JSON_IN_SHOW_MAX + 16];
	int rc = kj_annotation_int(d, ann, ANN_NUMA_NODES, 1, NODE_MAX_NUMA, -ENOSPC,
				"NODE_MAX_NUMA", &numa, &has_numa);
	if (rc == 0 && ann != NULL)
		rc = json_in_get_str(&d->in, ann, ANN_CPU_POLICY, &s, &len);
	if (rc < 0 || ann == NULL)
		return rc;
	/* "" is the kubelet's default, none. */
	if (len == 0 || json_in_str_is(s, len, "none"))
		return 0;
	size_t mark = json_in_key(&d->in, ANN_CPU_POLICY, strlen(ANN_CPU_POLICY));
	if (!json_in_str_is(s, len, "static")) {
		rc = json_in_fail(&d->in, -EINVAL, "%s is not static or none",
			  json_in_show_str(s, len, q, sizeof(q)));
		goto out;
	}
	if (!has_numa)
		numa = 1;
	int64_t cores = d->node.allocatable.v[RES_CPU] / 1000;
	if (cores > NODE_MAX_CORES)
		cores = NODE_MAX_CORES; /* the pool is the first NODE_MAX_CORES */
	cores -= cores % numa;
	if (cores == 0) {
		rc = json_in_fail(&d->in, -EINVAL, "static needs a whole core per NUMA node: "
			  "allocatable cpu %" PRId64 "m over %ld NUMA node%s",
			  d->node.allocatable.v[RES_CPU], numa, numa == 1 ? "" : "s");
		goto out;
	}
	dev->n_cores = (uint16_t)cores;
	dev->n_numa = (uint8_t)numa;
out:
	json_in_pop(&d->in, mark);
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
		/* kj_label_map() has checked these are strings. */
		json_t *v = json_object_get(labels, keys[i]);
		if (!json_is_string(v) || json_string_length(v) == 0)
			continue;
		size_t mark = json_in_field(&d->in, "metadata.labels");
		json_in_key(&d->in, keys[i], strlen(keys[i]));
		int rc = kj_intern_here(d, json_string_value(v), json_string_length(v),
				     &d->node.devices.gpu_model);
		json_in_pop(&d->in, mark);
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
	int rc = kj_get_annotations(d, obj, &ann);
	if (rc < 0)
		return rc;
	size_t mark = json_in_field(&d->in, "metadata.annotations");
	rc = kj_annotation_int(d, ann, ANN_GPU_COUNT, 0, NODE_MAX_GPUS, -ENOSPC,
			    "NODE_MAX_GPUS", &gpus, &has_count);
	if (rc == 0)
		rc = node_cores(d, ann);
	json_in_pop(&d->in, mark);
	if (rc == 0 && !has_count)
		rc = node_gpu_resource(d, status, &gpus);
	if (rc == 0)
		rc = node_gpu_model(d, obj);
	d->node.devices.n_gpus = (uint8_t)gpus;
	return rc;
}

int kj_taint_effect(const char *s, size_t len, bool allow_all, uint8_t *out)
{
	if (allow_all && len == 0)
		*out = TAINT_EFFECT_ALL;
	else if (json_in_str_is(s, len, "NoSchedule"))
		*out = TAINT_NO_SCHEDULE;
	else if (json_in_str_is(s, len, "PreferNoSchedule"))
		*out = TAINT_PREFER_NO_SCHEDULE;
	else if (json_in_str_is(s, len, "NoExecute"))
		*out = TAINT_NO_EXECUTE;
	else
		return -EINVAL;
	return 0;
}

static int node_taint(struct decoder *d, const json_t *t, struct taint *out)
{
	const char *s = "";
	size_t len = 0;
	char q[JSON_IN_SHOW_MAX + 16];
	int rc = json_in_check(&d->in, t, JSON_IN_OBJECT);
	if (rc == 0)
		rc = json_in_get_str(&d->in, t, "key", &s, &len);
	if (rc < 0)
		return rc;
	if (len == 0)
		return json_in_fail_at(&d->in, "key", -EINVAL, "missing");
	if ((rc = kj_get_id(d, t, "key", &out->key)) < 0 ||
	    (rc = kj_get_id(d, t, "value", &out->value)) < 0 ||
	    (rc = json_in_get_str(&d->in, t, "effect", &s, &len)) < 0)
		return rc;
	if (kj_taint_effect(s, len, false, &out->effect) < 0)
		return json_in_fail_at(&d->in, "effect", -EINVAL, "%s is not NoSchedule, "
			       "PreferNoSchedule or NoExecute",
			       json_in_show_str(s, len, q, sizeof(q)));
	return 0;
}

static int node_conditions(struct decoder *d, const json_t *status)
{
	json_t *conds, *c;
	size_t i;
	int rc = json_in_get(&d->in, status, "conditions", JSON_IN_ARRAY, &conds);
	if (rc < 0 || conds == NULL)
		return rc;
	size_t outer = json_in_field(&d->in, "conditions");
	json_array_foreach(conds, i, c) {
		size_t mark = json_in_index(&d->in, i);
		const char *type, *s;
		size_t type_len, len;
		char q[JSON_IN_SHOW_MAX + 16];
		rc = json_in_check(&d->in, c, JSON_IN_OBJECT);
		if (rc == 0)
			rc = json_in_get_str(&d->in, c, "type", &type, &type_len);
		if (rc == 0 && json_in_str_is(type, type_len, "Ready")) {
			rc = json_in_get_str(&d->in, c, "status", &s, &len);
			if (rc < 0)
				;
			else if (json_in_str_is(s, len, "True"))
				d->node.ready = NODE_READY_TRUE;
			else if (json_in_str_is(s, len, "False"))
				d->node.ready = NODE_READY_FALSE;
			else if (json_in_str_is(s, len, "Unknown"))
				d->node.ready = NODE_READY_UNKNOWN;
			else
				rc = json_in_fail_at(&d->in, "status", -EINVAL, "%s is not True, False "
					     "or Unknown", json_in_show_str(s, len, q, sizeof(q)));
		}
		json_in_pop(&d->in, mark);
		if (rc < 0)
			break;
	}
	json_in_pop(&d->in, outer);
	return rc;
}

int kj_decode_node(struct decoder *d, const json_t *obj)
{
	struct node_spec *n = &d->node;
	const char *ns, *name;
	size_t ns_len, name_len;
	json_t *meta, *spec, *status, *taints, *t;
	size_t i, n_labels;
	memset(n, 0, sizeof(*n));

	int rc = kj_object_name(d, obj, "node", false, &ns, &ns_len, &name, &name_len);
	if (rc < 0)
		return rc;
	size_t mark = json_in_field(&d->in, "metadata.name");
	rc = kj_intern_here(d, name, name_len, &n->name);
	json_in_pop(&d->in, mark);
	if (rc < 0)
		return rc;
	if ((rc = json_in_get(&d->in, obj, "metadata", JSON_IN_OBJECT, &meta)) < 0)
		return rc;
	mark = json_in_field(&d->in, "metadata");
	rc = kj_label_map(d, meta, "labels", n->labels, NODE_MAX_LABELS, &n_labels,
		       false);
	json_in_pop(&d->in, mark);
	if (rc < 0)
		return rc;
	n->n_labels = (uint16_t)n_labels;

	if ((rc = json_in_get(&d->in, obj, "spec", JSON_IN_OBJECT, &spec)) < 0)
		return rc;
	if (spec != NULL) {
		json_t *unsched;
		mark = json_in_field(&d->in, "spec");
		rc = json_in_get(&d->in, spec, "unschedulable", JSON_IN_BOOL, &unsched);
		if (rc == 0 && unsched != NULL)
			n->unschedulable = json_is_true(unsched);
		if (rc == 0)
			rc = json_in_get(&d->in, spec, "taints", JSON_IN_ARRAY, &taints);
		if (rc == 0 && taints != NULL) {
			size_t outer = json_in_field(&d->in, "taints");
			if (json_array_size(taints) > NODE_MAX_TAINTS)
				rc = json_in_fail(&d->in, -ENOSPC, "%zu taints, at most %d",
					  json_array_size(taints), NODE_MAX_TAINTS);
			json_array_foreach(taints, i, t) {
				if (rc < 0)
					break;
				size_t m = json_in_index(&d->in, i);
				rc = node_taint(d, t, &n->taints[i]);
				json_in_pop(&d->in, m);
			}
			n->n_taints = (uint16_t)json_array_size(taints);
			json_in_pop(&d->in, outer);
		}
		json_in_pop(&d->in, mark);
		if (rc < 0)
			return rc;
	}

	if ((rc = json_in_get(&d->in, obj, "status", JSON_IN_OBJECT, &status)) < 0)
		return rc;
	if (status != NULL) {
		int64_t v[RES_MAX] = {0};
		bool has[RES_MAX] = {false}, present;
		mark = json_in_field(&d->in, "status");
		rc = node_conditions(d, status);
		/* SetDefaults_NodeStatus: no allocatable means all of capacity. */
		if (rc == 0)
			rc = kj_resource_list(d, status, "allocatable", v, has, &present);
		if (rc == 0 && !present)
			rc = kj_resource_list(d, status, "capacity", v, has, NULL);
		json_in_pop(&d->in, mark);
		if (rc < 0)
			return rc;
		for (int r = 0; r < RES_MAX; r++)
			n->allocatable.v[r] = v[r];
	}
	if ((rc = node_devices(d, obj, status)) < 0)
		return rc;

	if (d->v->node == NULL)
		return json_in_fail(&d->in, -EINVAL, "a Node in a file read for pods only");
	if (d->in.err != NULL && d->in.err_len > 0)
		d->in.err[0] = '\0';
	return kj_visited(d, d->v->node(d->v->arg, n, d->in.err, d->in.err_len));
}
