/* Kubernetes Node and Pod objects in JSON, into the model (shm/model.h).
 *
 * A file may hold one object (Node, Pod, PriorityClass, PodGroup, or a
 * List / NodeList / PodList / PriorityClassList / PodGroupList of them), a JSON array of
 * objects, or JSON Lines (one object per line). A pod's spec.priority,
 * priorityClassName and preemptionPolicy are read as given; resolving a
 * class name to its value is ingest/priority.h's.
 * A field that is not a field of the object's Kubernetes type (a typo such
 * as spec.nodeSelectr) is refused by default, as kube-apiserver's
 * fieldValidation=Strict does: "spec.nodeSelectr: unknown field (did you
 * mean spec.nodeSelector?)"; k8s_set_field_validation() chooses Warn or
 * Ignore instead (policy/policy.h, "Kubernetes field validation"). Fields
 * of the type that shmsched does not act on are accepted; fields that
 * would change placement and that shmsched does not support are rejected
 * by name. Devices (GPUs and
 * exclusive cores) come from a few annotations, labels and nvidia.com/gpu:
 * docs/reference/kubernetes-fields.md, "Devices". Every error names the
 * file, the object, the field path and the value, e.g.
 *   pods.json: pod default/web-7: spec.containers[0].resources.requests.cpu: "12x" is not a quantity
 *
 * Besides Nodes and Pods a file may hold the objects that decide what
 * inter-pod rules read of a pod (k8s_objects_read_*): Namespaces (their
 * labels resolve a namespaceSelector) and the Services, ReplicaSets,
 * StatefulSets and ReplicationControllers that give a pod to place its
 * default spread selector (kube-scheduler's helper.DefaultSelector). They
 * are read in a pass of their own, before any pod, so that objects may come
 * in any order and in either file. Objects of other kinds are skipped and
 * counted in a cluster file (k8s_ctx.skipped), and refused in a pods file.
 *
 * Concurrency: one thread per k8s_ctx (it adds to the intern table and may
 * register resource names); a k8s_objects belongs to one thread too.
 */
#ifndef SHMSCHED_INGEST_K8S_JSON_H
#define SHMSCHED_INGEST_K8S_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shm/shm.h"

/* Namespaces, Services, ReplicationControllers, ReplicaSets and
 * StatefulSets read from files: opaque. */
struct k8s_objects;

/* Limits of what those objects carry (docs/reference/kubernetes-fields.md, "Limits"). */
#define OBJECT_MAX_LABELS 64   /* a Namespace's labels; a Service's or an RC's selector */
#define OBJECT_MAX_REQS 64     /* a ReplicaSet's or StatefulSet's selector requirements */
#define OBJECT_MAX_VALUES 256  /* their values */

/* Objects of kinds shmsched does not read, skipped in a cluster file. */
#define K8S_SKIPPED_KINDS 16
struct k8s_skipped {
	uint32_t total;
	/* Kueue's ResourceFlavors, Cohorts, ClusterQueues and LocalQueues:
	 * not skipped (not in total) but left to ingest/kueue_json.h, which
	 * the cluster loader runs when this is not 0. */
	uint32_t kueue;
	unsigned n_kinds; /* kinds named below; past K8S_SKIPPED_KINDS, in total only */
	struct {
		char kind[64]; /* cut at 63 bytes */
		uint32_t count;
	} kinds[K8S_SKIPPED_KINDS];
};

struct sched_config;

struct k8s_ctx {
	struct intern *strings;
	struct res_names *res; /* named resources are registered as met ... */
	bool no_new_resources; /* ... unless set: an unknown one is refused
				* (-EPERM), for producers, who may not
				* register resource names */
	bool cluster_file;     /* pods are only counted (bound) or skipped
				* (pending): none is refused for a field
				* shmsched cannot place by (volumes, gates,
				* claims, another schedulerName) */
	/* Read by k8s_objects_read_* and consulted by the loads: a pod to
	 * place gets its default spread selector from the Services and
	 * controllers, a namespaceSelector resolves against the Namespaces.
	 * NULL: none are known; a namespaceSelector with requirements is then
	 * refused for a pod to place (it could select nothing known), and
	 * resolves to no namespace in a cluster file. */
	struct k8s_objects *objects;
	struct k8s_skipped *skipped; /* NULL: not counted */
	/* The profiles a pod's spec.schedulerName chooses among
	 * (pod_spec.profile, workers/score_config.h sched_profile_of); a
	 * name no profile has is another scheduler's (meta.other_scheduler).
	 * NULL: kube's default, one profile named default-scheduler. */
	const struct sched_config *profiles;
};

/* How every load of the process treats unknown fields (policy/policy.h):
 * K8S_FIELDS_STRICT (the default) refuses the object (-EINVAL, naming
 * each unknown field, up to a bound); K8S_FIELDS_WARN loads it and hands
 * each object's unknown fields to warn(arg, line) as one line ("<file>:
 * <who>: <path>: unknown field ...") when warn is not NULL; K8S_FIELDS_IGNORE
 * loads it without looking. A program's flag (--field-validation) sets it
 * once, in main(), before any load and before any thread starts (thread
 * creation orders the write before every read; it is never written
 * again). */
void k8s_set_field_validation(int level, void (*warn)(void *arg, const char *line),
			      void *arg);

/* Why a pod to place is not shmsched's to place (k8s_pod_meta.unsupported). */
enum k8s_unsupported {
	K8S_UNSUPPORTED_NONE = 0,
	K8S_UNSUPPORTED_VOLUME_BINDING = 1, /* a persistentVolumeClaim or ephemeral volume */
	K8S_UNSUPPORTED_SCHEDULING_GATES = 2,
	K8S_UNSUPPORTED_RESOURCE_CLAIMS = 3, /* dynamic resource allocation */
	K8S_UNSUPPORTED_COUNT = 4,
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
	/* spec.schedulerName names a scheduler no profile has (ctx.profiles):
	 * not ours to place (kube-scheduler ignores such a pod); a visitor
	 * placing pods skips and counts it. A cluster file counts it when it
	 * is bound, as any pod. */
	bool other_scheduler;
	/* The pod needs what shmsched does not do (volume binding, scheduling
	 * gates, dynamic resource allocation): what (enum k8s_unsupported),
	 * and "<field path>: <why>", valid during the visit. The pod is whole
	 * and checked, but its placement would be wrong: a visitor answers it
	 * on its own ("not scheduled by shmsched"), never places it. Never set
	 * in a cluster file, nor for another scheduler's pod. */
	uint8_t unsupported_kind;
	const char *unsupported;
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

/* A PodDisruptionBudget (policy/v1) as preemption reads it: its
 * "namespace/name" (interned), its namespace, its spec.selector (in
 * `selector`'s default_selector, valid during the call; NULL when the
 * selector is absent: it selects no pod), and how many of its pods may
 * be disrupted now:
 *   K8S_PDB_ALLOWED        status.disruptionsAllowed, as the disruption
 *                          controller wrote it (kube-scheduler reads it);
 *   K8S_PDB_MAX_UNAVAILABLE  no status: spec.maxUnavailable, an integer
 *                          (every pod it selects taken as healthy);
 *   K8S_PDB_MIN_AVAILABLE  no status: the pods it selects now less
 *                          spec.minAvailable, an integer. */
enum k8s_pdb_mode {
	K8S_PDB_ALLOWED = 0,
	K8S_PDB_MAX_UNAVAILABLE = 1,
	K8S_PDB_MIN_AVAILABLE = 2,
};

/* spec.unhealthyPodEvictionPolicy (policy/v1; absent: IfHealthyBudget). */
enum k8s_pdb_unhealthy {
	K8S_PDB_IF_HEALTHY_BUDGET = 0,
	K8S_PDB_ALWAYS_ALLOW = 1,
};

struct pod_group;
struct k8s_pdb {
	uint32_t name;
	uint32_t ns;
	const struct pod_group *selector;
	uint8_t mode;   /* enum k8s_pdb_mode */
	uint8_t unhealthy; /* enum k8s_pdb_unhealthy */
	int32_t value;  /* disruptionsAllowed, maxUnavailable or minAvailable */
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
	/* PodDisruptionBudget objects; NULL: they are skipped. */
	int (*pdb)(void *arg, const struct k8s_pdb *b, char *err, size_t err_len);
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

struct k8s_objects *k8s_objects_create(void);
void k8s_objects_destroy(struct k8s_objects *objects);

/* What a k8s_objects holds: objects read, by kind. */
struct k8s_objects_counts {
	uint32_t namespaces;
	uint32_t services;    /* with a selector: the others select no pod */
	uint32_t controllers; /* ReplicationControllers, ReplicaSets, StatefulSets */
};
void k8s_objects_counts(const struct k8s_objects *objects,
			struct k8s_objects_counts *out);

/* The first pass over a file: its Namespaces, Services, ReplicaSets,
 * StatefulSets and ReplicationControllers (in lists too) into
 * ctx->objects, which must not be NULL; everything else is passed over
 * unread, and a buffer that cannot name one of these kinds (none of their
 * names, no \u escape) is not even parsed: JSON syntax is the second
 * pass's to check. Returns 0, or a negative errno
 * with a message in `err`: -EINVAL (a malformed field of such an object),
 * -ENOSPC (a limit above), -EEXIST (a second object of the same kind,
 * namespace and name), -ENOMEM. A load of the same file (k8s_load_*)
 * then passes these objects over. */
int k8s_objects_read_buffer(const char *name, const char *buf, size_t len,
			    struct k8s_ctx *ctx, char *err, size_t err_len);
int k8s_objects_read_file(const char *path, struct k8s_ctx *ctx, char *err,
			  size_t err_len);

/* Loads a buffer that must hold exactly one object: a Pod into *pod (pod
 * non-NULL, node NULL; its ns_name kept: a template's identity, outside
 * its class key, which its placements' records carry and the quarantine
 * of pools counts failures by, daemon/quarantine_internal.h), or a Node into *node (the other way round).
 * Returns k8s_load_buffer()'s result, or -EINVAL with "expected exactly one
 * Pod" (or Node) when the buffer holds none, more, or the other kind. */
int k8s_load_one(const char *name, const char *buf, size_t len,
		 struct k8s_ctx *ctx, struct pod_spec *pod, struct node_spec *node,
		 char *err, size_t err_len);

#endif
