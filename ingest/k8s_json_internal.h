/* The Kubernetes decoder's private header: the decoder's state and the
 * functions its files share. Only ingest/ includes it. Its files call one
 * way, each only the files listed below it here (a reader reads them
 * bottom-up):
 *
 *   k8s_json_load.c      the loads: the stream, lists, the kinds' dispatch,
 *                        the entry points (the design note is at its head);
 *   k8s_json_pod.c       Pods (their scheduling fields in _sched.c, their
 *                        requests in _requests.c, default spreading from
 *                        _objects.c, tolerations by _node.c's taint effects);
 *   k8s_json_sched.c     priority, PriorityClasses, gangs, Workloads,
 *                        PodGroups, PodDisruptionBudgets;
 *   k8s_json_requests.c  a pod's requests and host ports;
 *   k8s_json_objects.c   Namespaces, Services and controllers, their store;
 *   k8s_json_node.c      Nodes;
 *   k8s_json_meta.c      what every kind shares: names, labels, annotations,
 *                        selectors, node affinity, the visit;
 *   k8s_json_values.c    strings, quantities and resources at the path.
 */
#ifndef SHMSCHED_INGEST_K8S_JSON_INTERNAL_H
#define SHMSCHED_INGEST_K8S_JSON_INTERNAL_H

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
#include "base/base.h"
#include "policy/policy.h"
#include "shm/shm.h"
#include "workers/workers.h"

/* The API server's stand-ins for a missing request, used by the scheduler's
 * LeastAllocated / MostAllocated scoring
 * (pkg/scheduler/util: DefaultMilliCPURequest, DefaultMemoryRequest). */
#define NONZERO_CPU_MILLI 100
#define NONZERO_MEM_BYTES (INT64_C(200) * 1024 * 1024)

struct decoder {
	/* The error line (base/json_in.h): source the file's name, subject
	 * "pod default/web-7", "node n1", "object #3", and the path. */
	struct json_in in;
	struct k8s_ctx *ctx;
	const struct k8s_visitor *v;
	size_t index;  /* position of the next Node or Pod in the file */
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

static const char *const want_text[] = {
	[JSON_IN_OBJECT] = "an object", [JSON_IN_ARRAY] = "an array", [JSON_IN_STRING] = "a string",
	[JSON_IN_BOOL] = "a boolean",   [JSON_IN_INT] = "an integer",
};

/* What default spreading and namespaceSelector read of the objects, by
 * intern id. A Namespace's labels and a Service's or RC's selector are
 * label pairs; a ReplicaSet's or StatefulSet's selector is requirements.
 * Entries are found by (kind, namespace, name) through an open-addressed
 * index, which also refuses a second object of the same name; a pod's
 * Services through a list sorted by namespace, built when first needed
 * after a read. */
enum obj_kind { OBJ_NAMESPACE, OBJ_SERVICE, OBJ_RC, OBJ_RS, OBJ_SS, OBJ_KINDS };

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

/* k8s_json_values.c */
int kj_intern_here(struct decoder *d, const char *s, size_t len, uint32_t *id);
int kj_string_here(struct decoder *d, const json_t *v, uint32_t *id);
int kj_get_id(struct decoder *d, const json_t *obj, const char *key, uint32_t *id);
int kj_quantity_here(struct decoder *d, const json_t *v, enum quantity_unit unit,
			 int64_t *out);
int kj_resource_here(struct decoder *d, const char *name, size_t len, int *idx);
int kj_resource_list(struct decoder *d, const json_t *obj, const char *key,
			 int64_t v[RES_MAX], bool has[RES_MAX], bool *present);

/* k8s_json_meta.c */
int kj_label_map(struct decoder *d, const json_t *obj, const char *key,
		     struct label *out, size_t max, size_t *n, bool selector);
void kj_label_set_merge(struct label *set, size_t *n, const struct label *l);
int kj_object_name(struct decoder *d, const json_t *obj, const char *kind,
		       bool namespaced, const char **ns, size_t *ns_len,
		       const char **name, size_t *name_len);
int kj_visited(struct decoder *d, int rc);
void kj_count_skipped(struct decoder *d, const char *kind, size_t len);
int kj_get_annotations(struct decoder *d, const json_t *obj, json_t **ann);
int kj_annotation_int(struct decoder *d, const json_t *ann, const char *key,
			  long min, long max, int over_rc, const char *limit,
			  long *out, bool *present);
int kj_node_affinity(struct decoder *d, const json_t *na);
int kj_group_req_add(struct decoder *d, uint32_t key, uint8_t op,
			 const uint32_t *values, size_t n_values,
			 struct group_selector *sel);
int kj_label_selector(struct decoder *d, const json_t *obj, const char *key,
			  struct group_selector *sel);
int kj_merge_label_keys(struct decoder *d, const json_t *obj, const char *key,
			    uint8_t op, struct group_selector *sel);

/* k8s_json_node.c */
int kj_taint_effect(const char *s, size_t len, bool allow_all, uint8_t *out);
int kj_decode_node(struct decoder *d, const json_t *obj);

/* k8s_json_objects.c */
const struct obj *kj_obj_find(const struct k8s_objects *o, uint8_t kind,
				  uint32_t ns, uint32_t name);
size_t kj_services_of(struct k8s_objects *o, uint32_t ns, size_t *first);
bool kj_labels_subset(const struct label *sel, size_t n_sel,
			  const struct label *labels, size_t n_labels);
int kj_obj_kind_of(const char *kind, size_t len);
int kj_decode_namespace(struct decoder *d, const json_t *obj);
int kj_decode_service(struct decoder *d, const json_t *obj);
int kj_decode_rc(struct decoder *d, const json_t *obj);
int kj_decode_controller(struct decoder *d, const json_t *obj, int kind);

/* k8s_json_requests.c */
int kj_pod_requests(struct decoder *d, const json_t *spec, bool host_network);

/* k8s_json_sched.c */
int kj_pod_priority(struct decoder *d, const json_t *spec);
int kj_pod_wait(struct decoder *d, const json_t *obj);
int kj_pod_gang(struct decoder *d, const json_t *obj, const json_t *spec,
		    const char *ns, size_t ns_len);
int kj_intern_ns_name(struct decoder *d, const char *ns, size_t ns_len,
			  const char *name, size_t name_len, uint32_t *id);
int kj_decode_workload(struct decoder *d, const json_t *obj);
int kj_decode_pod_group(struct decoder *d, const json_t *obj);
int kj_decode_pdb(struct decoder *d, const json_t *obj);
int kj_decode_priority_class(struct decoder *d, const json_t *obj);

/* k8s_json_pod.c */
int kj_decode_pod(struct decoder *d, const json_t *obj, size_t index);

#endif
