/* The scheduling model: what the engine knows of a node and of a pod.
 *
 * Types only. Every string is an interned id (shm/intern.h; id 0 is the
 * empty string, which also means "not set"). Every record has a fixed size
 * and holds no pointer, so a pod spec can later live in a shared-memory slot
 * and a node spec in a snapshot. ingest/ fills these from Kubernetes JSON;
 * workers/ reads them. Limits are fixed maxima: input that exceeds one is
 * rejected by name, never truncated.
 */
#ifndef SHMSCHED_SHM_MODEL_H
#define SHMSCHED_SHM_MODEL_H

#include <stdbool.h>
#include <stdint.h>

/* Resources: fixed indices for the four Kubernetes always has, then up to
 * RES_MAX - RES_FIRST_NAMED named ones (hugepages-*, extended resources such
 * as nvidia.com/gpu) registered by name in a struct res_names. */
enum res_index {
	RES_CPU = 0,       /* millicores */
	RES_MEMORY = 1,    /* bytes */
	RES_EPHEMERAL = 2, /* ephemeral-storage, bytes */
	RES_PODS = 3,      /* pod count (a node's allocatable "pods") */
	RES_FIRST_NAMED = 4,
	RES_MAX = 16,
};

#define RES_NAME_MAX 64

struct res_vec {
	int64_t v[RES_MAX];
};

/* The names of resources, by index. Indices below RES_FIRST_NAMED are
 * fixed ("cpu", "memory", "ephemeral-storage", "pods"). */
struct res_names {
	unsigned count; /* RES_FIRST_NAMED..RES_MAX */
	char name[RES_MAX][RES_NAME_MAX];
};

struct label {
	uint32_t key;
	uint32_t value;
};

enum taint_effect {
	TAINT_EFFECT_ALL = 0, /* in a toleration only: tolerates every effect */
	TAINT_NO_SCHEDULE = 1,
	TAINT_PREFER_NO_SCHEDULE = 2,
	TAINT_NO_EXECUTE = 3,
};

struct taint {
	uint32_t key;
	uint32_t value;
	uint8_t effect; /* enum taint_effect, never TAINT_EFFECT_ALL */
};

enum node_ready {
	NODE_READY_UNKNOWN = 0, /* no Ready condition given */
	NODE_READY_TRUE = 1,
	NODE_READY_FALSE = 2,
};

#define NODE_MAX_LABELS 512
#define NODE_MAX_TAINTS 16

/* Devices a node carries, beside its aggregate allocatable.
 *
 * GPUs: n_gpus devices of one model, each worth GPU_MILLI_PER_DEVICE milli;
 * a pod takes milli from one device (sharing) or whole devices. Cores: when
 * the node opts in to exclusive cores (Kubernetes' static CPU manager
 * policy), cores 0..n_cores-1 form the pool exclusive cores are taken from,
 * split over n_numa NUMA nodes in order, n_cores / n_numa each (so core i
 * is on NUMA node i / (n_cores / n_numa)). n_cores 0: the node has not
 * opted in and every pod shares its cpu. Where these come from in
 * Kubernetes JSON: docs/reference/kubernetes-fields.md, "Devices". */
#define NODE_MAX_GPUS 16
#define NODE_MAX_CORES 256
#define NODE_MAX_NUMA 8
#define CORE_WORDS (NODE_MAX_CORES / 64)
#define GPU_MILLI_PER_DEVICE 1000

struct node_devices {
	uint32_t gpu_model; /* interned model name; 0 = not given */
	uint8_t n_gpus;     /* 0..NODE_MAX_GPUS */
	uint8_t n_numa;     /* 1..NODE_MAX_NUMA when n_cores > 0, else 0 */
	uint16_t n_cores;   /* 0..NODE_MAX_CORES, a multiple of n_numa */
};

struct node_spec {
	uint32_t name;
	uint16_t n_labels;
	uint16_t n_taints;
	bool unschedulable; /* spec.unschedulable */
	uint8_t ready;      /* enum node_ready; stored, not filtered on (docs/reference/kubernetes-fields.md) */
	struct res_vec allocatable;
	struct node_devices devices;
	struct label labels[NODE_MAX_LABELS]; /* sorted by key, keys unique */
	struct taint taints[NODE_MAX_TAINTS]; /* in the order given */
};

enum sel_op {
	SEL_IN = 1,
	SEL_NOT_IN = 2,
	SEL_EXISTS = 3,
	SEL_DOES_NOT_EXIST = 4,
	SEL_GT = 5,
	SEL_LT = 6,
};

/* One node selector requirement (matchExpressions or matchFields). */
struct sel_expr {
	uint32_t key;         /* label key id; for a field, the id of "metadata.name" */
	uint8_t op;           /* enum sel_op */
	uint8_t field;        /* 1: matchFields (metadata.name only), 0: labels */
	uint16_t n_values;
	uint16_t first_value; /* index into pod_spec.values */
	/* 1: labels.NewRequirement refuses it (a value that is not a valid
	 * label value; for Gt / Lt, one that is not an int64), which
	 * kube-apiserver does not check: kube-scheduler's lazy-error node
	 * selector then matches its term against no node (the pod's other
	 * terms still count). Fits in the padding before `number`. */
	uint8_t invalid;
	int64_t number;       /* the operand of SEL_GT / SEL_LT */
};

/* A node selector term: its expressions ANDed. An empty term (n_exprs 0)
 * matches nothing, as in Kubernetes. */
struct sel_term {
	uint16_t first_expr; /* index into pod_spec.exprs */
	uint16_t n_exprs;
};

struct pref_term {
	int32_t weight; /* 1..100 */
	struct sel_term term;
};

enum tol_op {
	TOL_EQUAL = 0,
	TOL_EXISTS = 1,
};

struct toleration {
	uint32_t key;   /* 0 (empty) with TOL_EXISTS tolerates every key */
	uint32_t value;
	uint8_t op;     /* enum tol_op */
	uint8_t effect; /* enum taint_effect; TAINT_EFFECT_ALL matches all */
	/* tolerationSeconds given (effect NoExecute only): a NoExecute taint
	 * it tolerates evicts the pod after `seconds` (<= 0: at once); not
	 * given: never (the taint manager, daemon/taint_evict_internal.h).
	 * Kubernetes' int64 clamped to int32 (68 years). */
	uint8_t has_seconds;
	uint8_t reserved; /* 0 */
	int32_t seconds;
};

enum port_protocol {
	PROTO_TCP = 0,
	PROTO_UDP = 1,
	PROTO_SCTP = 2,
};

struct host_port {
	uint32_t ip;      /* interned hostIP; 0 ("") and "0.0.0.0" are the wildcard */
	uint16_t port;    /* 1..65535 */
	uint8_t protocol; /* enum port_protocol */
};

#define POD_MAX_SELECTOR 16
#define POD_MAX_TERMS 8
#define POD_MAX_PREFERRED 8
#define POD_MAX_EXPRS 32
#define POD_MAX_VALUES 64
#define POD_MAX_TOLERATIONS 16
#define POD_MAX_PORTS 8
#define POD_MAX_GPU_MODELS 8

/* The scheduling-relevant part of a pod. Two pods whose specs are equal
 * byte for byte from `node_name` on are in the same equivalence class;
 * ingest/ zero-fills unused entries so that holds. */
/* pod_spec.priority_flags. */
#define POD_PRIORITY_GIVEN 0x1u    /* spec.priority was in the input */
#define POD_PREEMPT_NEVER 0x2u     /* preemptionPolicy: Never */
#define POD_PREEMPTION_GIVEN 0x4u  /* spec.preemptionPolicy was in the input */
/* The pod's own default for waiting (annotation shmsched.io/wait), below
 * its slot's flags and above shmschedd --wait: a template's pods wait
 * without every producer setting SHMSCHED_WAIT. */
#define POD_WAIT 0x8u              /* "true" */
#define POD_NO_WAIT 0x10u          /* "false" */

struct pod_spec {
	uint32_t ns_name; /* interned "namespace/name": identity, not a constraint */

	/* Priority (spec.priority, or its PriorityClass's value: the
	 * admission rules are ingest/priority.h's): the order pods wait in
	 * (PrioritySort) and whom they may preempt. Not a constraint on
	 * nodes, so not part of the equivalence class either. */
	int32_t priority;
	uint32_t priority_class; /* interned spec.priorityClassName; 0: none */
	uint8_t priority_flags;  /* POD_PRIORITY_GIVEN, POD_PREEMPT_NEVER, ... */
	/* A gang (coscheduling's label scheduling.x-k8s.io/pod-group): the
	 * interned "namespace/name" of its PodGroup, 0 none; how many of its
	 * pods must be placed together, and how long the first waits for the
	 * rest (ingest/k8s_json_sched.c fills these from the PodGroup). */
	uint32_t gang;
	uint32_t gang_min;
	uint32_t gang_timeout_s;

	/* --- everything below is the equivalence class --- */
	uint32_t node_name; /* spec.nodeName; 0 = unset */
	/* Effective requests (Kubernetes PodRequests: max(sum of containers
	 * and sidecars, each init container plus earlier sidecars) + overhead).
	 * v[RES_PODS] is 0: every pod counts one against "pods". */
	struct res_vec request;
	/* The same with the 100m cpu / 200Mi memory stand-ins for containers
	 * without a cpu / memory request: for LeastAllocated / MostAllocated
	 * scoring only. Equal to `request` for other resources. */
	int64_t nonzero_cpu_milli;
	int64_t nonzero_mem_bytes;

	/* Devices. num_gpu 0: none. num_gpu 1 with gpu_milli below
	 * GPU_MILLI_PER_DEVICE: a share of one device with that much free.
	 * num_gpu N with gpu_milli GPU_MILLI_PER_DEVICE: N wholly free devices.
	 * gpu_models: the models the pod accepts (sorted ids); none: any.
	 * The model set is a static filter: it is part of the static key too
	 * (workers/pod_class.h), though it sits here among the requests. */
	uint8_t num_gpu;
	uint8_t n_gpu_models;
	uint16_t gpu_milli;
	uint32_t gpu_models[POD_MAX_GPU_MODELS];
	/* Whole cores for a Guaranteed pod with an integer cpu request
	 * (request / 1000), taken exclusively on a node that opted in; 0 for
	 * every other pod. On a node that did not opt in the pod shares cpu
	 * as any other. */
	uint16_t exclusive_cores;

	/* The pod's group for inter-pod rules (InterPodAffinity,
	 * PodTopologySpread): the interned id of its canonical encoding of
	 * namespace, labels, pod (anti-)affinity terms and spread constraints
	 * (shm/pod_group.h). Pods of one group are alike to every
	 * inter-pod rule. 0: no group (matches no selector, has no terms). */
	uint32_t group;
	bool group_terms; /* the group has pod (anti-)affinity terms */

	/* --- from here on the static part (workers/pod_class.h) --- */
	/* The profile that schedules the pod: its index in the configuration's
	 * profiles (ingest/sched_config.h), chosen by spec.schedulerName; 0
	 * is the first profile (default-scheduler unless configured). */
	uint8_t profile;
	bool has_required;  /* requiredDuringScheduling...: present (even empty) */
	uint8_t n_selector; /* spec.nodeSelector entries */
	uint8_t n_terms;    /* required node selector terms, ORed */
	uint8_t n_preferred;
	uint8_t n_exprs;
	uint8_t n_values;
	uint8_t n_tolerations;
	uint8_t n_ports;

	struct label selector[POD_MAX_SELECTOR]; /* sorted by key */
	struct sel_term terms[POD_MAX_TERMS];
	struct pref_term preferred[POD_MAX_PREFERRED];
	struct sel_expr exprs[POD_MAX_EXPRS];
	uint32_t values[POD_MAX_VALUES];
	struct toleration tolerations[POD_MAX_TOLERATIONS];
	struct host_port ports[POD_MAX_PORTS];
};

/* The exact devices a placement takes on its node: what the commit
 * reserves, what a release gives back, and what the answer names so a node
 * agent can apply it. Zero: none. */
struct device_assignment {
	uint16_t gpu_mask;  /* bit i: GPU device i */
	uint16_t gpu_milli; /* milli taken from each device in gpu_mask */
	uint16_t n_cores;   /* bits set in cpuset */
	uint16_t reserved;  /* 0 */
	uint64_t cpuset[CORE_WORDS]; /* bit i of word i / 64: core i */
};

#endif
