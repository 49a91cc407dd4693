/* Kubernetes Node and Pod objects in JSON, into the model (shm/model.h).
 *
 * A file may hold one object (Node, Pod, PriorityClass, PodGroup, or a
 * List / NodeList / PodList / PriorityClassList / PodGroupList of them), a JSON array of
 * objects, or JSON Lines (one object per line). A pod's spec.priority,
 * priorityClassName and preemptionPolicy are read as given; resolving a
 * class name to its value is ingest/priority.h's.
 * Unknown fields are ignored; fields that would change placement and that
 * shmsched does not support are rejected by name. Devices (GPUs and
 * exclusive cores) come from a few annotations, labels and nvidia.com/gpu:
 * README, "Devices". Every error names the
 * file, the object, the field path and the value, e.g.
 *   pods.json: pod default/web-7: spec.containers[0].resources.requests.cpu: "12x" is not a quantity
 *
 * Concurrency: one thread per k8s_ctx (it adds to the intern table and may
 * register resource names).
 */
#ifndef SHMSCHED_INGEST_K8S_JSON_H
#define SHMSCHED_INGEST_K8S_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shm/shm.h"

struct k8s_ctx {
	struct intern *strings;
	struct res_names *res; /* named resources are registered as met ... */
	bool no_new_resources; /* ... unless set: an unknown one is refused
				* (-EPERM), for producers, who may not
				* register resource names */
	bool cluster_file;     /* pods are only counted (bound) or skipped
				* (pending): none is refused for a field
				* shmsched cannot place by (volumes, gates,
				* claims, pod-level resources, another
				* schedulerName) */
};

enum pod_phase {
	POD_PHASE_PENDING = 0, /* also: no status.phase given */
	POD_PHASE_RUNNING = 1,
	POD_PHASE_SUCCEEDED = 2,
	POD_PHASE_FAILED = 3,
	POD_PHASE_UNKNOWN = 4,
};

/* What a pod is beside its scheduling spec. */
struct k8s_pod_meta {
	uint32_t ns_name;   /* interned "namespace/name" (namespace "default" if none) */
	uint8_t phase;      /* enum pod_phase */
	size_t index;       /* 0-based position of the object in its file */
	/* spec.schedulerName names a scheduler other than default-scheduler:
	 * not ours to place (kube-scheduler ignores such a pod); a visitor
	 * placing pods skips and counts it. A cluster file counts it when it
	 * is bound, as any pod. */
	bool other_scheduler;
};

/* A PriorityClass (scheduling.k8s.io/v1): its name (interned), value,
 * globalDefault, and preemptionPolicy (Never, or PreemptLowerPriority). */
struct k8s_priority_class {
	uint32_t name;
	int32_t value;
	bool global_default;
	bool preempt_never;
};

/* A PodGroup (coscheduling, scheduling.x-k8s.io/v1alpha1): its
 * "namespace/name" (interned), spec.minMember (>= 1) and
 * spec.scheduleTimeoutSeconds (0: not given). */
struct k8s_pod_group {
	uint32_t name;
	uint32_t min_member;
	uint32_t timeout_s;
};

/* Called once per object, in file order. A negative return stops the load
 * and is returned by k8s_load_*; the visitor writes its own message into
 * `err` first when it has one. */
struct k8s_visitor {
	void *arg;
	int (*node)(void *arg, const struct node_spec *node, char *err, size_t err_len);
	int (*pod)(void *arg, const struct pod_spec *pod,
		   const struct k8s_pod_meta *meta, char *err, size_t err_len);
	/* PriorityClass objects; NULL: they are skipped. */
	int (*priority_class)(void *arg, const struct k8s_priority_class *pc,
			      char *err, size_t err_len);
	/* PodGroup objects; NULL: they are skipped. */
	int (*pod_group)(void *arg, const struct k8s_pod_group *pg, char *err,
			 size_t err_len);
};

/* Loads a file (see above). `name` in messages is the path as given.
 * Returns 0, or a negative errno with a message in `err`:
 *   -ENOENT etc.  the file cannot be read
 *   -EINVAL       malformed JSON, a bad field, an unsupported field
 *   -ENOSPC       a model limit (labels, terms, resources...) exceeded
 *   or what a visitor returned. */
int k8s_load_file(const char *path, struct k8s_ctx *ctx,
		  const struct k8s_visitor *v, char *err, size_t err_len);

/* The same for `len` bytes in memory named `name` (tests, fuzzing). */
int k8s_load_buffer(const char *name, const char *buf, size_t len,
		    struct k8s_ctx *ctx, const struct k8s_visitor *v, char *err,
		    size_t err_len);

/* Loads a buffer that must hold exactly one object: a Pod into *pod (pod
 * non-NULL, node NULL; its ns_name cleared, as a template's identity is no
 * part of its scheduling spec), or a Node into *node (the other way round).
 * Returns k8s_load_buffer()'s result, or -EINVAL with "expected exactly one
 * Pod" (or Node) when the buffer holds none, more, or the other kind. */
int k8s_load_one(const char *name, const char *buf, size_t len,
		 struct k8s_ctx *ctx, struct pod_spec *pod, struct node_spec *node,
		 char *err, size_t err_len);

#endif
