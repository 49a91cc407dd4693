/* PriorityClasses and a pod's priority, as kube-apiserver's Priority
 * admission plugin decides it (plugin/pkg/admission/priority/admission.go)
 * and as PriorityClass validation allows (pkg/apis/scheduling/validation):
 *
 * - a pod that names a class gets its value and its preemptionPolicy; a
 *   class that does not exist refuses the pod ("no PriorityClass with name
 *   X was found"), and so does a spec.priority or spec.preemptionPolicy
 *   that differs from what the class gives;
 * - a pod that names none gets the globalDefault class's (name, value and
 *   policy), else priority 0 and PreemptLowerPriority;
 * - system-cluster-critical (2000000000) and system-node-critical
 *   (2000001000) always exist; other names starting with "system-" are
 *   reserved; a user class's value is at most 1000000000
 *   (HighestUserDefinablePriority); at most one class is globalDefault; a
 *   class's value never changes once declared.
 * Pods of a cluster file were admitted by their API server already: their
 * spec.priority is taken as it is (lenient), and an unknown class name
 * there leaves priority 0 rather than refusing the file.
 *
 * Concurrency: one writer thread (the daemon's control thread, or a
 * loader); readers on that thread. */
#ifndef SHMSCHED_INGEST_PRIORITY_H
#define SHMSCHED_INGEST_PRIORITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shm/shm.h"
#include "ingest/k8s_json.h"

#define PRIORITY_CLASSES_MAX 512u
#define PRIORITY_HIGHEST_USER 1000000000 /* HighestUserDefinablePriority */
#define PRIORITY_SYSTEM_CLUSTER_CRITICAL 2000000000
#define PRIORITY_SYSTEM_NODE_CRITICAL 2000001000

struct priority_classes {
	uint32_t n;
	struct k8s_priority_class c[PRIORITY_CLASSES_MAX];
};

/* The two system classes, interned into `strings`. Returns 0 or a
 * negative errno. */
int priority_classes_init(struct priority_classes *t, struct intern *strings);

/* Declares a class (or declares one again, unchanged but for
 * globalDefault and preemptionPolicy). Returns 0, or with a message in
 * err: -EINVAL (a reserved name, a value out of range or changed, a second
 * globalDefault), -ENOSPC (PRIORITY_CLASSES_MAX). */
int priority_classes_put(struct priority_classes *t, const struct intern *strings,
			 const struct k8s_priority_class *pc, char *err,
			 size_t err_len);

/* The class named `name` (interned id), or NULL. */
const struct k8s_priority_class *priority_classes_find(const struct priority_classes *t,
						       uint32_t name);

/* Sets pod->priority and POD_PREEMPT_NEVER as admission would (above);
 * `lenient` for pods already admitted (a cluster file). Returns 0, or
 * -EINVAL with a message in err (naming the field). */
int priority_resolve(const struct priority_classes *t, const struct intern *strings,
		     struct pod_spec *pod, bool lenient, char *err, size_t err_len);

/* A visitor's priority_class callback (ingest/k8s_json.h) that puts each
 * class into the struct priority_classes `arg`'s table: `strings` is
 * needed too, so arg is a struct priority_loader. */
struct priority_loader {
	struct priority_classes *classes;
	const struct intern *strings;
	struct gang_table *gangs; /* may be NULL: PodGroups skipped */
};
int priority_loader_visit(void *arg, const struct k8s_priority_class *pc,
			  char *err, size_t err_len);
/* The same for PodGroups (arg: a struct priority_loader). */
int priority_loader_visit_group(void *arg, const struct k8s_pod_group *pg,
				char *err, size_t err_len);

/* PodGroups (coscheduling's scheduling.x-k8s.io/v1alpha1), what a pod's
 * label scheduling.x-k8s.io/pod-group names: at least minMember pods of
 * the group are placed together or none is (daemon/wait.c, bind/gang.c),
 * and the first waits scheduleTimeoutSeconds (GANG_TIMEOUT_DEFAULT_S when
 * not given) for the others. A PodGroup may be declared again (it
 * replaces the old one for pods registered later). */
#define GANG_TABLE_MAX 4096u
#define GANG_TIMEOUT_DEFAULT_S 60u /* coscheduling's permitWaitingTimeSeconds */
#define GANG_MIN_MAX 256u          /* members placed together, at most */

struct gang_table {
	uint32_t n;
	struct k8s_pod_group g[GANG_TABLE_MAX];
};

/* Returns 0, or -ENOSPC / -EINVAL (minMember above GANG_MIN_MAX) with a
 * message. */
int gang_table_put(struct gang_table *t, const struct intern *strings,
		   const struct k8s_pod_group *pg, char *err, size_t err_len);

/* Sets pod->gang_min and gang_timeout_s from its PodGroup. Returns 0 (no
 * gang: nothing to do), or -EINVAL with a message when no PodGroup of
 * that name was declared. */
int gang_resolve(const struct gang_table *t, const struct intern *strings,
		 struct pod_spec *pod, char *err, size_t err_len);

/* Puts every PriorityClass and PodGroup of the Kubernetes JSON file `path`
 * into `t` and `gangs` (its Nodes and Pods are skipped): the daemon reads
 * its cluster file's at every start, also when it resumes a state region.
 * Returns 0, or a negative errno with a message in err. */
int priority_load_file(const char *path, struct priority_classes *t,
		       struct gang_table *gangs, struct intern *strings, char *err,
		       size_t err_len);

#endif
