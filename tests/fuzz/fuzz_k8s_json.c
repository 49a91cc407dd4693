/* Fuzz target: the Node/Pod JSON decoder (ingest/k8s_json.h) on arbitrary
 * bytes, as shmsched place reads them: the objects pass (Namespaces,
 * Services, controllers) first, then the bytes as a cluster file and as a
 * pods file against those objects. Every refusal must say why, and what is
 * accepted must hold the model's invariants (counts within limits, sorted
 * keys, indices into the pools in range, a group that decodes, a reason
 * for a pod that is not ours to place), so consumers may index without
 * checks. */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ingest/ingest.h"
#include "shm/shm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct target {
	struct res_names res;
	struct intern *strings;
	bool cluster_file;
};

static int on_node(void *arg, const struct node_spec *n, char *err, size_t err_len)
{
	const struct res_names *res = &((const struct target *)arg)->res;
	(void)err;
	(void)err_len;
	if (n->name == 0 || n->n_labels > NODE_MAX_LABELS ||
	    n->n_taints > NODE_MAX_TAINTS || n->ready > NODE_READY_FALSE)
		__builtin_trap();
	for (unsigned i = 1; i < n->n_labels; i++)
		if (n->labels[i - 1].key >= n->labels[i].key)
			__builtin_trap();
	for (unsigned i = 0; i < n->n_taints; i++)
		if (n->taints[i].effect == TAINT_EFFECT_ALL ||
		    n->taints[i].effect > TAINT_NO_EXECUTE)
			__builtin_trap();
	for (unsigned r = 0; r < RES_MAX; r++)
		if (n->allocatable.v[r] < 0 || (r >= res->count && n->allocatable.v[r]))
			__builtin_trap();
	/* Devices: within the model's limits, the pool split evenly. */
	const struct node_devices *dev = &n->devices;
	if (dev->n_gpus > NODE_MAX_GPUS || dev->n_cores > NODE_MAX_CORES ||
	    (dev->n_cores == 0) != (dev->n_numa == 0) || dev->n_numa > NODE_MAX_NUMA ||
	    (dev->n_cores > 0 && dev->n_cores % dev->n_numa != 0) ||
	    (int64_t)dev->n_cores * 1000 > n->allocatable.v[RES_CPU])
		__builtin_trap();
	return 0;
}

static void check_term(const struct pod_spec *p, const struct sel_term *t)
{
	if (t->first_expr + t->n_exprs > p->n_exprs)
		__builtin_trap();
	for (unsigned i = t->first_expr; i < t->first_expr + t->n_exprs; i++) {
		const struct sel_expr *e = &p->exprs[i];
		if (e->first_value + e->n_values > p->n_values || e->op < SEL_IN ||
		    e->op > SEL_LT || e->key == 0)
			__builtin_trap();
	}
}

static int on_pod(void *arg, const struct pod_spec *p,
		  const struct k8s_pod_meta *meta, char *err, size_t err_len)
{
	const struct target *t = arg;
	(void)err;
	(void)err_len;
	if (p->ns_name == 0 || meta->ns_name != p->ns_name ||
	    meta->phase > POD_PHASE_UNKNOWN)
		__builtin_trap();
	/* Not ours to place: a reason and its path, only for a pod to place
	 * of the default scheduler. */
	if ((meta->unsupported != NULL) != (meta->unsupported_kind != 0) ||
	    meta->unsupported_kind >= K8S_UNSUPPORTED_COUNT ||
	    (meta->unsupported != NULL &&
	     (t->cluster_file || meta->other_scheduler ||
	      strncmp(meta->unsupported, "spec.", 5) != 0)))
		__builtin_trap();
	/* The group decodes, and a default selector comes only to a pod to
	 * place without constraints of its own. */
	struct pod_group g;
	if (p->group == 0 ||
	    pod_group_decode(intern_str(t->strings, p->group),
			     intern_len(t->strings, p->group), &g) != 0 ||
	    (g.default_selector.present &&
	     (t->cluster_file || g.n_spread > 0 || g.default_selector.n_reqs == 0)))
		__builtin_trap();
	if (p->n_selector > POD_MAX_SELECTOR || p->n_terms > POD_MAX_TERMS ||
	    p->n_preferred > POD_MAX_PREFERRED || p->n_exprs > POD_MAX_EXPRS ||
	    p->n_values > POD_MAX_VALUES || p->n_tolerations > POD_MAX_TOLERATIONS ||
	    p->n_ports > POD_MAX_PORTS)
		__builtin_trap();
	for (unsigned i = 1; i < p->n_selector; i++)
		if (p->selector[i - 1].key >= p->selector[i].key)
			__builtin_trap();
	for (unsigned i = 0; i < p->n_terms; i++)
		check_term(p, &p->terms[i]);
	for (unsigned i = 0; i < p->n_preferred; i++) {
		if (p->preferred[i].weight < 1 || p->preferred[i].weight > 100)
			__builtin_trap();
		check_term(p, &p->preferred[i].term);
	}
	for (unsigned r = 0; r < RES_MAX; r++)
		if (p->request.v[r] < 0)
			__builtin_trap();
	if (p->request.v[RES_PODS] != 0 || p->nonzero_cpu_milli < p->request.v[RES_CPU] ||
	    p->nonzero_mem_bytes < p->request.v[RES_MEMORY])
		__builtin_trap();
	for (unsigned i = 0; i < p->n_ports; i++)
		if (p->ports[i].port == 0 || p->ports[i].protocol > PROTO_SCTP)
			__builtin_trap();
	/* Devices: a share of one device or whole ones; a model set only
	 * with a GPU, sorted, unused entries zero (equivalence bytes). */
	if (p->num_gpu > NODE_MAX_GPUS || (p->num_gpu == 0) != (p->gpu_milli == 0) ||
	    p->gpu_milli > GPU_MILLI_PER_DEVICE ||
	    (p->num_gpu > 1 && p->gpu_milli != GPU_MILLI_PER_DEVICE) ||
	    p->n_gpu_models > POD_MAX_GPU_MODELS ||
	    (p->num_gpu == 0 && p->n_gpu_models != 0) ||
	    p->exclusive_cores > NODE_MAX_CORES ||
	    (p->exclusive_cores > 0 &&
	     p->exclusive_cores * INT64_C(1000) != p->request.v[RES_CPU]))
		__builtin_trap();
	for (unsigned i = 0; i < POD_MAX_GPU_MODELS; i++)
		if ((i < p->n_gpu_models) != (p->gpu_models[i] != 0) ||
		    (i > 0 && i < p->n_gpu_models &&
		     p->gpu_models[i - 1] >= p->gpu_models[i]))
			__builtin_trap();
	return 0;
}

/* A PriorityClass and a PodGroup are as validated: value in int32, a
 * name; minMember 1..100000 (0: a scheduling.k8s.io group's basic
 * policy), a timeout of 0 (none) or 1..86400. A PodDisruptionBudget: a
 * name and namespace, a known mode, a count >= 0, a selector of its own
 * namespace. */
static int on_class(void *arg, const struct k8s_priority_class *pc, char *err,
		    size_t err_len)
{
	(void)arg, (void)err, (void)err_len;
	if (pc->name == 0)
		__builtin_trap();
	return 0;
}

static int on_group(void *arg, const struct k8s_pod_group *pg, char *err,
		    size_t err_len)
{
	(void)arg, (void)err, (void)err_len;
	if (pg->name == 0 || pg->min_member > 100000 ||
	    pg->timeout_s > 86400)
		__builtin_trap();
	return 0;
}

static int on_pdb(void *arg, const struct k8s_pdb *b, char *err, size_t err_len)
{
	(void)arg, (void)err, (void)err_len;
	if (b->name == 0 || b->ns == 0 || b->mode > K8S_PDB_MIN_AVAILABLE ||
	    b->value < 0 || (b->selector != NULL && b->selector->ns != b->ns))
		__builtin_trap();
	return 0;
}

static void check_refusal(int rc, const char *err, bool objects_pass)
{
	if (rc < 0 && (err[0] == '\0' || strncmp(err, "fuzz.json", 9) != 0))
		__builtin_trap(); /* every refusal says why, naming the file */
	if (rc < 0 && rc != -EINVAL && rc != -ENOSPC && rc != -ENOMEM &&
	    !(objects_pass && rc == -EEXIST))
		__builtin_trap();
}

/* fieldValidation=Warn: a line, never empty. */
static void on_warn(void *arg, const char *line)
{
	(void)arg;
	if (line == NULL || line[0] == '\0')
		__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct target t;
	res_names_init(&t.res);
	t.strings = intern_create();
	struct k8s_objects *objects = k8s_objects_create();
	struct k8s_skipped skipped = {0};
	if (t.strings == NULL || objects == NULL)
		goto out;
	struct k8s_ctx ctx = {.strings = t.strings, .res = &t.res, .objects = objects,
			      .skipped = &skipped};
	struct k8s_visitor v = {.arg = &t, .node = on_node, .pod = on_pod,
				.priority_class = on_class, .pod_group = on_group,
				.pdb = on_pdb};
	char err[512];
	int rc = k8s_objects_read_buffer("fuzz.json", (const char *)data, size, &ctx,
					 err, sizeof(err));
	check_refusal(rc, err, true);
	/* The level of field validation by the input's size: each of
	 * Strict (which refuses early), Warn and Ignore (which decode on)
	 * is reached, and a given input always runs the same. */
	k8s_set_field_validation((int)(size % 3), on_warn, NULL);
	for (int pass = 0; pass < 2; pass++) {
		t.cluster_file = ctx.cluster_file = pass == 0;
		rc = k8s_load_buffer("fuzz.json", (const char *)data, size, &ctx, &v,
				     err, sizeof(err));
		check_refusal(rc, err, false);
	}
	if (skipped.n_kinds > K8S_SKIPPED_KINDS || skipped.n_kinds > skipped.total)
		__builtin_trap();
out:
	k8s_objects_destroy(objects);
	intern_destroy(t.strings);
	return 0;
}
