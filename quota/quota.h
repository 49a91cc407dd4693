/* The quota tree: Kueue's ResourceFlavors, Cohorts, ClusterQueues and
 * LocalQueues (kueue.x-k8s.io/v1beta2), built by calls, then sealed; after
 * the seal, quota_try_charge() admits a request iff Kueue would (it fits
 * the ClusterQueue's nominal quota, or borrows from its cohort tree within
 * every borrowingLimit and without touching what lenders keep back by
 * lendingLimit) and charges it along the queue's path up the tree without
 * a lock; quota_release() gives it back. quota_share() is Kueue's dominant
 * resource share (fair sharing).
 *
 * The daemon charges its placements to it when given one
 * (daemon/quota_charge_internal.h).
 *
 * Threads: building (the _add and _set calls, quota_seal) is one thread's,
 * before any charge. After a successful quota_seal(), quota_try_charge(),
 * quota_release() and the read-outs may be called from any number of
 * threads at once; the tree's shape and quotas do not change any more.
 * To change quotas while charges are held, a caller builds a new tree and
 * carries the charges over with quota_force_charge() (the daemon:
 * daemon/quota_charge.c, qc_replace).
 *
 * Quantities are int64, in the units the rest of the tree uses for a
 * resource (cpu in millicores, memory and every other resource in units:
 * ingest/quantity.h), each in [0, QUOTA_QUANTITY_MAX].
 *
 * Every building call that can fail takes (char *err, size_t err_len) and
 * writes a message naming the object, the field, the value and what was
 * expected.
 */
#ifndef SHMSCHED_QUOTA_QUOTA_H
#define SHMSCHED_QUOTA_QUOTA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Kueue's fair-sharing order of waiting heads (quota/fair_share.c). */
#include "quota/fair_share.h"

/* Bounds. Names: Kueue's ClusterQueueReference, CohortReference and
 * ResourceFlavorReference are at most 253 bytes; a namespace is a DNS label
 * (63). The counts bound memory: a sealed tree holds one counter per
 * (queue or cohort, flavor, resource). */
#define QUOTA_NAME_MAX 253
#define QUOTA_NAMESPACE_MAX 63
#define QUOTA_MAX_FLAVORS 16
/* ResourceFlavorSpec.NodeLabels: +kubebuilder:validation:MaxProperties=8
 * (kueue apis/kueue/v1beta1/resourceflavor_types.go). A label key is an
 * optional DNS subdomain prefix (253) and '/' and a name (63); a value
 * at most 63 (k8s.io/apimachinery validation). */
#define QUOTA_MAX_FLAVOR_LABELS 8
#define QUOTA_LABEL_KEY_MAX (253 + 1 + 63)
#define QUOTA_LABEL_VALUE_MAX 63
#define QUOTA_MAX_RESOURCES 16
#define QUOTA_MAX_CLUSTER_QUEUES 4096
#define QUOTA_MAX_COHORTS 4096
#define QUOTA_MAX_LOCAL_QUEUES 65536
/* Cohort levels above a ClusterQueue, the root included. */
#define QUOTA_MAX_DEPTH 8
/* Any nominalQuota, limit or request. 2^56: 72 PB of memory in bytes;
 * sums of up to QUOTA_MAX_CLUSTER_QUEUES + QUOTA_MAX_COHORTS of them
 * saturate at QUOTA_SUM_MAX, so no counter arithmetic overflows. */
#define QUOTA_QUANTITY_MAX (INT64_C(1) << 56)
#define QUOTA_SUM_MAX (INT64_C(1) << 60)

/* borrowingLimit or lendingLimit absent (Kueue's nil): no limit. */
#define QUOTA_NO_LIMIT INT64_C(-1)
/* fairSharing.weight absent: 1 (fair_sharing.go, defaultWeight), in
 * thousandths. */
#define QUOTA_WEIGHT_DEFAULT_MILLI INT64_C(1000)
#define QUOTA_WEIGHT_MAX_MILLI (INT64_C(1) << 40)

/* Kueue's admission fair sharing: a LocalQueue's decayed usage
 * (quota/admission_usage.c; it needs the bounds above). */
#include "quota/admission_usage.h"

/* ClusterQueue .spec.preemption: the daemon does not act on it yet;
 * reclaim_choose (below) chooses victims by it. The defaults are Kueue's:
 * every policy Never. */
enum quota_preempt_policy {
	QUOTA_PREEMPT_NEVER = 0,
	QUOTA_PREEMPT_LOWER_PRIORITY,
	QUOTA_PREEMPT_ANY,                         /* reclaimWithinCohort only */
	QUOTA_PREEMPT_LOWER_OR_NEWER_EQUAL_PRIORITY, /* withinClusterQueue only */
};

struct quota_preemption {
	enum quota_preempt_policy reclaim_within_cohort;
	enum quota_preempt_policy borrow_within_cohort; /* .policy */
	bool has_max_priority_threshold;
	int32_t max_priority_threshold; /* borrowWithinCohort.maxPriorityThreshold */
	enum quota_preempt_policy within_cluster_queue;
};

struct quota_tree;

/* An empty tree: -ENOMEM, else 0 and *out. */
int quota_tree_new(struct quota_tree **out);
void quota_tree_free(struct quota_tree *t);

/* A ResourceFlavor (.metadata.name). Returns its index (>= 0, in the order
 * added), or -EEXIST, -ENAMETOOLONG, -EINVAL (empty), -ENOSPC (over
 * QUOTA_MAX_FLAVORS), -EBUSY (sealed). */
int quota_flavor_add(struct quota_tree *t, const char *name, char *err,
		     size_t err_len);

/* One of a ResourceFlavor's .spec.nodeLabels (the syntax of keys and
 * values is the decoder's to check; here: lengths, no key twice, at most
 * QUOTA_MAX_FLAVOR_LABELS). A pod given this flavor may only land on nodes
 * with every label (Kueue adds them to the pod's nodeSelector). 0, or
 * -EINVAL, -EEXIST, -ENOSPC, -ENOMEM, -EBUSY. */
int quota_flavor_label_add(struct quota_tree *t, int flavor, const char *key,
			   const char *value, char *err, size_t err_len);
int quota_flavor_n_labels(const struct quota_tree *t, int flavor);
/* Label i < quota_flavor_n_labels(): pointers into the tree. */
void quota_flavor_label(const struct quota_tree *t, int flavor, int i,
			const char **key, const char **value);
const char *quota_flavor_name(const struct quota_tree *t, int flavor);

/* A resource name ("cpu", "memory", "nvidia.com/gpu"): its index, added
 * on first use (>= 0), or -ENAMETOOLONG, -EINVAL, -ENOSPC, -EBUSY. */
int quota_resource_add(struct quota_tree *t, const char *name, char *err,
		       size_t err_len);

/* A Cohort: .metadata.name, .spec.parentName (NULL or "": a root; a name
 * no Cohort has when sealed: an implicit root with no quota, as Kueue
 * does), .spec.fairSharing.weight in thousandths (QUOTA_WEIGHT_DEFAULT_MILLI
 * when absent). A Cohort that a ClusterQueue or parentName names but that
 * is never added exists implicitly, with no quota. Returns a node id
 * (>= 0) or -EEXIST, -ENAMETOOLONG, -EINVAL, -ENOSPC, -EBUSY. */
int quota_cohort_add(struct quota_tree *t, const char *name,
		     const char *parent, int64_t weight_milli, char *err,
		     size_t err_len);

/* A ClusterQueue: .metadata.name, .spec.cohortName (NULL or "": none),
 * .spec.fairSharing.weight in thousandths, .spec.preemption (NULL: all
 * Never). Refuses reclaimWithinCohort Never with borrowWithinCohort not
 * Never (Kueue's validation rule), and a policy value the field does not
 * take. Returns a node id (>= 0) or -errno as quota_cohort_add(). */
int quota_cluster_queue_add(struct quota_tree *t, const char *name,
			    const char *cohort, int64_t weight_milli,
			    const struct quota_preemption *preemption,
			    char *err, size_t err_len);

/* One entry of a node's .spec.resourceGroups[].flavors[].resources[]:
 * nominalQuota, borrowingLimit and lendingLimit (QUOTA_NO_LIMIT: absent)
 * of (flavor, resource) for the ClusterQueue or Cohort `node`. Refuses a
 * negative or too large value, a second entry for the same (flavor,
 * resource) (-EEXIST), and (Kueue's webhook) a lendingLimit over a
 * ClusterQueue's nominalQuota. Limits on a node without a parent are
 * refused at quota_seal(), when parents are known. The grouping itself
 * (coveredResources; each flavor and each resource in one group only) is
 * the decoder's to check: the tree holds the entries. */
int quota_set(struct quota_tree *t, int node, int flavor, int resource,
	      int64_t nominal, int64_t borrowing_limit, int64_t lending_limit,
	      char *err, size_t err_len);

/* A LocalQueue: .metadata.namespace, .metadata.name, .spec.clusterQueue
 * (the name of a ClusterQueue, checked at quota_seal()). Returns its index
 * or -EEXIST, -ENAMETOOLONG, -EINVAL, -ENOSPC, -EBUSY. */
int quota_local_queue_add(struct quota_tree *t, const char *ns,
			  const char *name, const char *cluster_queue,
			  char *err, size_t err_len);

/* A LocalQueue's .spec.fairSharing.weight in thousandths
 * (QUOTA_WEIGHT_DEFAULT_MILLI until set): admission fair sharing divides
 * its usage by it (quota/admission_usage.h). `lq` is what
 * quota_local_queue_add returned. 0, or -EINVAL (no such LocalQueue, a
 * weight out of [0, QUOTA_WEIGHT_MAX_MILLI]), -EBUSY (sealed), with a
 * message. */
int quota_local_queue_set_weight(struct quota_tree *t, int lq,
				 int64_t weight_milli, char *err, size_t err_len);

/* ClusterQueue `node`'s .spec.admissionScope.admissionMode:
 * UsageBasedAdmissionFairSharing (true) or NoAdmissionFairSharing (false,
 * the default). 0, -EINVAL (not a ClusterQueue), -EBUSY (sealed). */
int quota_cluster_queue_set_admission_fair_sharing(struct quota_tree *t,
						   int node, bool on);

/* Ends building: resolves cohort names (adding implicit cohorts), refuses
 * a cycle of parentName (naming a Cohort on it), a path deeper than
 * QUOTA_MAX_DEPTH, a borrowingLimit or lendingLimit on a node without a
 * parent, a LocalQueue naming no ClusterQueue; computes each node's
 * subtree quota. -EINVAL, -ELOOP, -E2BIG, -ENOENT, -ENOMEM with a
 * message. Idempotent once it succeeded; after a failure the tree is only
 * fit for quota_tree_free(). */
int quota_seal(struct quota_tree *t, char *err, size_t err_len);

/* A new sealed tree of the sealed `src`'s objects (no usage), each
 * ClusterQueue's nominalQuota of (flavor, resource) replaced by
 * nominal(arg, cq, flavor, resource, its nominal), in [0,
 * QUOTA_QUANTITY_MAX], and its lendingLimit lowered to that where over
 * it; Cohorts' entries as they are. Node ids, flavors and resources keep
 * their numbers. For quota by escrow (daemon/quota_escrow_host.c): a host
 * admits against the slices of the shards it owns. 0, or a negative
 * errno (-ENOMEM; -EINVAL: `src` not sealed, a nominal out of range)
 * with a message. */
int quota_tree_copy_nominals(const struct quota_tree *src,
			     int64_t (*nominal)(void *arg, int cq, int flavor, int resource,
						int64_t nominal),
			     void *arg, struct quota_tree **out, char *err, size_t err_len);

/* Lookups by name: a node id or index, or -ENOENT. */
int quota_flavor_find(const struct quota_tree *t, const char *name);
int quota_resource_find(const struct quota_tree *t, const char *name);
int quota_cluster_queue_find(const struct quota_tree *t, const char *name);
int quota_cohort_find(const struct quota_tree *t, const char *name);
/* The ClusterQueue node a LocalQueue names (after the seal), or -ENOENT. */
int quota_local_queue_find(const struct quota_tree *t, const char *ns,
			   const char *name);

/* LocalQueues by index (what quota_local_queue_add returned): the index
 * of (ns, name) after the seal or -ENOENT; how many; the ClusterQueue
 * node it names (after the seal; -ENOENT for no such index); its names
 * (NULLs for no such index); its weight (0 for no such index). */
int quota_local_queue_index(const struct quota_tree *t, const char *ns,
			    const char *name);
int quota_n_local_queues(const struct quota_tree *t);
int quota_local_queue_cq(const struct quota_tree *t, int lq);
void quota_local_queue_name(const struct quota_tree *t, int lq,
			    const char **ns, const char **name);
int64_t quota_local_queue_weight_milli(const struct quota_tree *t, int lq);
/* Whether ClusterQueue `node` orders its waiting workloads by admission
 * fair sharing (quota_cluster_queue_set_admission_fair_sharing). */
bool quota_node_admission_fair_sharing(const struct quota_tree *t, int node);

/* Shape, for the read-outs and tests. */
int quota_n_nodes(const struct quota_tree *t);
int quota_n_flavors(const struct quota_tree *t);
int quota_n_resources(const struct quota_tree *t);
bool quota_node_is_cohort(const struct quota_tree *t, int node);
/* Parent node id, or -1 for a root or a ClusterQueue without a cohort.
 * After the seal. */
int quota_node_parent(const struct quota_tree *t, int node);
const char *quota_node_name(const struct quota_tree *t, int node);
const char *quota_resource_name(const struct quota_tree *t, int resource);
int64_t quota_node_weight_milli(const struct quota_tree *t, int node);
/* The flavors `node`'s resourceGroups name, in the order first given to
 * quota_set() (the order Kueue tries them in). Returns their number. */
int quota_node_flavors(const struct quota_tree *t, int node, const int **order);
const struct quota_preemption *quota_node_preemption(
	const struct quota_tree *t, int node);

/* Admits and charges `request[0 .. quota_n_resources())` of one `flavor` to
 * ClusterQueue `cq` iff Kueue's ClusterQueueSnapshot.Fits would: for each
 * resource with a non-zero request, request <= Available(flavor, resource)
 * (resource_node.go, available()). All or nothing. Returns 0 (charged),
 * -ENOSPC (does not fit now), -ENOENT (a requested resource the queue does
 * not cover in this flavor), -EINVAL (not sealed, not a ClusterQueue, a
 * request out of range). Lock-free: O(depth x resources) compare-and-swaps
 * when nothing races. */
int quota_try_charge(struct quota_tree *t, int cq, int flavor,
		     const int64_t *request);

/* quota_try_charge(), and on 0 *borrowed: whether this admission took
 * cq past its nominal (subtree) quota in some resource it asks, judged by
 * the counter its own compare-and-swap left (reclaim_borrowed's test, made
 * at the charge instead of by a read after it, which may also count a
 * charge that raced it). */
int quota_try_charge_borrowed(struct quota_tree *t, int cq, int flavor,
			      const int64_t *request, bool *borrowed);

/* Charges as quota_try_charge() does but past any quota or limit (the
 * counters may then stand above them; quota_try_charge() refuses until
 * they are below again): for usage carried into a new tree whose quotas
 * were cut, as Kueue keeps admitted workloads when a quota shrinks.
 * 0, -ENOENT (a requested resource not covered in this flavor), -EINVAL. */
int quota_force_charge(struct quota_tree *t, int cq, int flavor,
		       const int64_t *request);

/* quota_force_charge(), and on 0 *borrowed as quota_try_charge_borrowed
 * gives it: whether this charge took cq past its nominal (subtree) quota
 * in some resource it asks, judged by the counter its own compare-and-swap
 * left. For usage admitted elsewhere and carried in (another host's
 * placements counted on a shard's take: QV3 in daemon/etcd_sync.c), so
 * that it is borrowed room by the rule a local admission's is. */
int quota_force_charge_borrowed(struct quota_tree *t, int cq, int flavor,
				const int64_t *request, bool *borrowed);

/* What quota_try_charge() of the same arguments would return now, with
 * nothing charged: 0, -ENOSPC, -ENOENT, -EINVAL (relaxed reads, a
 * moment's view: a charge or release racing it may change the answer).
 * For a pod waiting for quota, read after quota_generation(): a release
 * that it missed moves the generation. O(depth x resources), no writes. */
int quota_would_charge(const struct quota_tree *t, int cq, int flavor,
		       const int64_t *request);

/* Gives back what a successful quota_try_charge() (or quota_force_charge())
 * of the same arguments took (Kueue's removeUsage). Lock-free. */
void quota_release(struct quota_tree *t, int cq, int flavor,
		   const int64_t *request);

/* The root of `node`'s cohort tree (the node itself without a parent),
 * or -1 before the seal or for a node that does not exist. */
int quota_node_root(const struct quota_tree *t, int node);

/* The generation of `node`'s cohort tree: the count of quota_release()
 * calls into any ClusterQueue of that tree (acquire: what those releases
 * gave back is seen by a charge made after this read). A pod refused by
 * quota can wait until it moves: nothing was given back in its tree
 * before then. 0 before the seal or for a node that does not exist. */
uint64_t quota_generation(const struct quota_tree *t, int node);

/* Read-outs after the seal, any thread (relaxed reads: a view). Usage of a
 * ClusterQueue is the sum of its live charges; of a Cohort, the sum over
 * its children of what each uses past what it keeps (Kueue's Usage). */
int64_t quota_usage(const struct quota_tree *t, int node, int flavor,
		    int resource);
/* Kueue's SubtreeQuota: a ClusterQueue's nominalQuota; a Cohort's own
 * plus each child's subtree quota less what the child keeps. */
int64_t quota_subtree_quota(const struct quota_tree *t, int node, int flavor,
			    int resource);
/* What the node keeps from its parent (Kueue's localQuota): subtree quota
 * less lendingLimit, 0 without one. */
int64_t quota_kept(const struct quota_tree *t, int node, int flavor,
		   int resource);
/* The entry quota_set() gave (zeros and QUOTA_NO_LIMIT when none);
 * returns whether there was one. */
bool quota_entry(const struct quota_tree *t, int node, int flavor,
		 int resource, int64_t *nominal, int64_t *borrowing_limit,
		 int64_t *lending_limit);
/* Compare-and-swaps that lost a race, since the seal. */
uint64_t quota_conflicts(const struct quota_tree *t);

/* Kueue's dominant resource share of a node (fair_sharing.go,
 * dominantResourceShare): per resource, borrowed = usage + request -
 * subtree quota summed over the flavors where it is positive; ratio =
 * borrowed x 1000 / lendable (what the parent could give this node, over
 * all flavors), for a lendable > 0; the dominant resource has the largest
 * ratio, ties to the smaller name. A root, or a node borrowing nothing,
 * has ratio 0. */
struct quota_share {
	double ratio;           /* unweighted: borrowed x 1000 / lendable */
	int64_t weight_milli;   /* the node's fairSharing.weight */
	int dominant;           /* resource index, -1 when none */
	bool borrowing;         /* usage + request past subtree quota somewhere */
};

/* The share of `node` with `request` of `flavor` added (flavor < 0 or
 * request NULL: none). 0, or -EINVAL. */
int quota_share(const struct quota_tree *t, int node, int flavor,
		const int64_t *request, struct quota_share *out);
/* ratio / weight (Kueue's PreciseWeightedShare): 0 when ratio is 0;
 * +infinity for weight 0. */
double quota_share_weighted(const struct quota_share *s);
/* Kueue's roundedWeightedShare: ceil(weighted), INT64_MAX for a weight 0
 * that borrows. */
int64_t quota_share_rounded(const struct quota_share *s);
/* Kueue's CompareDRS: < 0 when a goes first for scheduling (and last for
 * preemption). A zero weight that borrows sorts after every other; two of
 * them by unweighted ratio. */
int quota_share_compare(const struct quota_share *a,
			const struct quota_share *b);

/* Kueue's quota metrics of the sealed tree, in the Prometheus text format
 * (quota/quota_metrics.c; Kueue's pkg/metrics/metrics.go): the gauges
 * kueue_cluster_queue_nominal_quota, _borrowing_limit, _lending_limit,
 * _resource_usage and _resource_reservation with the labels cohort,
 * cluster_queue, flavor, resource (one series per entry quota_set gave),
 * kueue_cluster_queue_weighted_share{cluster_queue, cohort} and
 * kueue_cohort_weighted_share{cohort}; cpu in cores, the rest in units,
 * an absent limit +Inf. At most `max_queues` ClusterQueues (and as many
 * Cohorts) per family; a comment line says how many more were left out.
 * Writes into buf as snprintf does (cut to len, NUL-terminated when len >
 * 0) and returns the length of the whole text. Any thread (relaxed reads:
 * a figure of the moment). */
size_t quota_metrics_text(const struct quota_tree *t, unsigned max_queues,
			  char *buf, size_t len);

/* The Prometheus text writer quota_metrics_text uses, for the daemon's own
 * quota series (daemon/quota_charge.c): appends as snprintf does into
 * buf[0..len) (cut, NUL-terminated while there is room) and counts in
 * `used` what the whole text needs. quota_text_label writes key="v" (a
 * comma first when `comma`), with \, " and newline escaped: names come
 * from a file. */
struct quota_text {
	char *buf;
	size_t len, used;
};
__attribute__((format(printf, 2, 3)))
void quota_text_put(struct quota_text *o, const char *fmt, ...);
void quota_text_label(struct quota_text *o, const char *key, const char *v,
		      bool comma);

/* --- why quota refuses (quota/quota_message.c) --- */

/* Why `charge` fits none of ClusterQueue cq's flavors now, for a person:
 * flavors[0..n) as tried, rcs[i] what each refused with (-ENOSPC: no
 * quota left; -ENOENT: no quota for a resource asked; -EXDEV: its
 * nodeLabels conflict with the pod's nodeSelector). Each flavor with its
 * reason, those without quota left first: `ClusterQueue "a": cpu
 * 6000m/4000m of its nominal quota in flavor "on-demand" (asks 1000m);
 * its borrowingLimit 2000m from cohort "org" is reached. Flavor "spot":
 * cpu 2000m/2000m of its nominal quota (asks 1000m); cohort "org":
 * nothing left to borrow (2000m/2000m in use)`. At most len bytes: the
 * flavors that do not fit are counted ("N more flavor(s) refused"). The
 * daemon's and `shmsched place`'s words. */
void quota_refusal_message(const struct quota_tree *t, int cq, const int *flavors,
			   const int *rcs, int n, const int64_t *charge, char *buf,
			   size_t len);

/* Why no flavor of ClusterQueue cq, flavors[0..n) as tried, could be
 * charged `charge` though none lacked room: the first resource asked that
 * no flavor covers (`ClusterQueue "a" covers "memory" in none of its
 * flavors, and WHO requests it`), else every flavor's nodeLabels conflict
 * with the nodeSelector (`ClusterQueue "a": no flavor of it can take WHO
 * (...)`). `who`: "the pod", "its pod group". */
void quota_unfit_message(const struct quota_tree *t, int cq, const int *flavors,
			 int n, const int64_t *charge, const char *who, char *buf,
			 size_t len);

/* --- reclaim and preemption by quota (quota/reclaim.c) ---
 *
 * Which admitted pods a pod refused by its ClusterQueue's quota may
 * evict so that it fits, as Kueue's classical
 * preemption chooses them (pkg/scheduler/preemption/preemption.go,
 * classicalPreemptions; classical/candidate_generator.go;
 * common/ordering.go, CandidatesOrdering), with the ClusterQueue's
 * .spec.preemption (quota_node_preemption) and disruption budgets. Pure:
 * it reads the tree's quotas and a copy of its usage, never charges or
 * releases; the caller evicts the victims, gives their quota back, then
 * places the preemptor by a normal attempt.
 *
 * Where this differs from Kueue (quota/reclaim.c says why: no pod is ever
 * evicted in a cycle):
 *   - A pod of another ClusterQueue is a victim only if its own admission
 *     took its queue past nominal quota (`borrowed`, reclaim_borrowed()),
 *     and a preemptor evicts pods of other queues only if it is then within
 *     its own queue's nominal quota (Kueue's hierarchical advantage taken at
 *     the ClusterQueue's own level, and its ReclaimWithoutBorrowing), or,
 *     with borrowWithinCohort LowerPriority, if each such victim has a
 *     lower priority than its own (and at most maxPriorityThreshold: Kueue's
 *     ReclaimWhileBorrowing); when only pods above that would do,
 *     reclaim_choose refuses with RECLAIM_WHY_BORROW.
 *   - Budgets Kueue has not: a minimum run time before a pod may be
 *     evicted, and a cap on what the victims hold over what the preemptor
 *     asks.
 *
 * Threads: a struct reclaim_work is one thread's; the tree is only read
 * (relaxed reads of usage: a view, which the caller's charge re-checks).
 */

/* An admitted pod (a candidate) or the pod that asks (the preemptor). */
struct reclaim_pod {
	uint64_t uid;          /* unique; the last tie-break, smaller first */
	int cq;                /* its ClusterQueue node */
	int flavor;            /* the flavor charged (a candidate's) */
	int32_t priority;
	uint64_t created_ns;   /* queue order (LowerOrNewerEqualPriority) */
	uint64_t admitted_ns;  /* quota reserved (a candidate's) */
	bool borrowed;         /* its admission took its queue past nominal */
	int64_t request[QUOTA_MAX_RESOURCES]; /* in the tree's resources */
};

/* Disruption budgets (the daemon's flags). */
struct reclaim_budget {
	uint64_t now_ns;
	/* A pod admitted less than this long ago is no victim (0: none). */
	uint64_t min_run_ns;
	/* Victims' requests in a resource needing preemption, over the
	 * preemptor's, at most this many thousandths (0: no cap). */
	uint32_t evict_cap_milli;
};

#define RECLAIM_EVICT_CAP_DEFAULT_MILLI 1500u

enum reclaim_why {
	RECLAIM_OK = 0,
	RECLAIM_WHY_POLICY,   /* withinClusterQueue and reclaimWithinCohort Never */
	RECLAIM_WHY_FITS,     /* nothing needs preemption: it fits now */
	RECLAIM_WHY_NONE,     /* no set of allowed victims makes room */
	RECLAIM_WHY_YOUNG,    /* ... none without pods under the minimum run time */
	RECLAIM_WHY_CAP,      /* the fewest victims hold more than the cap */
	RECLAIM_WHY_BORROW,   /* it would end borrowing, and borrowWithinCohort
			       * allows none of the pods it would evict */
};

struct reclaim_work;

/* Scratch for `t` (sized by its nodes and resources). NULL with errno. */
struct reclaim_work *reclaim_work_new(const struct quota_tree *t);
void reclaim_work_free(struct reclaim_work *w);

/* Whether a pod just charged `request` of `flavor` to `cq` stands past
 * its queue's nominal quota in a resource it asks (Kueue's BorrowingWith,
 * read after the charge): the `borrowed` of its reclaim_pod. */
bool reclaim_borrowed(const struct quota_tree *t, int cq, int flavor,
		      const int64_t *request);

/* The victims for `pre` (its flavor: the one to try; its request does
 * not fit there now) among `cand[0..n)` (admitted pods; those of other
 * trees or flavors are ignored), under its ClusterQueue's
 * .spec.preemption and `budget`. On 0, victims[0..*n_victims) are
 * indices into cand, the fewest Kueue's heuristic finds (candidates in
 * order, then each but the last put back if the preemptor still fits),
 * in the order chosen; `victims` must hold n. `node_ok`, when given, is
 * asked as Kueue asks its TAS check: whether, with the victims so far
 * gone, a node takes the preemptor (arg, victims, count); NULL: yes.
 * Returns 0, -ENOSPC (no victims: *why says which reason), -EINVAL (a
 * bad node, flavor or request), -ENOMEM. `why` may be NULL. */
int reclaim_choose(struct reclaim_work *w, const struct quota_tree *t,
		   const struct reclaim_pod *pre, const struct reclaim_pod *cand,
		   size_t n, const struct reclaim_budget *budget,
		   bool (*node_ok)(void *arg, const uint32_t *victims, size_t k),
		   void *node_ok_arg, uint32_t *victims, size_t *n_victims,
		   enum reclaim_why *why);

/* RO1: whether the last reclaim_choose on `w` had an attempt that read
 * every candidate it kept without the preemptor fitting. When not, any
 * candidates that would come after the last one given (in RCL2's order:
 * another queue's before the preemptor's own, then priority, admission
 * time, uid) change nothing: a caller that gives the candidates in that
 * order may give a prefix, and give more only while this says true (RO2
 * in daemon/quota_charge.c). */
bool reclaim_ran_out(const struct reclaim_work *w);

/* A sentence for `why` about ClusterQueue `cq` (for a refusal). */
void reclaim_message(const struct quota_tree *t, int cq, enum reclaim_why why,
		     char *buf, size_t len);

/* --- a pod under quota (quota/quota_pod.c, the library quota_pod) ---
 *
 * What the daemon's placements (daemon/quota_charge.c, daemon/attempt.c)
 * and `shmsched place` (cli/place_quota.c) both read of a pod: its
 * LocalQueue, from its namespace and the label QUOTA_QUEUE_LABEL; its
 * charge, from its requests; its nodeSelector with a flavor's
 * nodeLabels. The one part of quota/ that reads the scheduling model
 * (shm/model.h, shm/pod_group.h, shm/intern.h): the rest includes only
 * base/. The structs of shm/ are named here, not included (shm/shm.h
 * brings liburcu's headers). */

/* Kueue's label naming a pod's LocalQueue (constants.QueueLabel). */
#define QUOTA_QUEUE_LABEL "kueue.x-k8s.io/queue-name"

/* quota_pod_queue's answers besides a ClusterQueue node (>= 0). */
#define QUOTA_POD_NONE (-1)    /* no queue label: not under quota */
#define QUOTA_POD_REFUSED (-2) /* a label naming no LocalQueue: `why` says so */

struct intern;
struct label;
struct pod_group;
struct pod_spec;
struct res_names;
struct res_vec;

/* A flavor's nodeLabels as intern ids, sorted by key. */
struct quota_pod_flavor {
	unsigned n;
	struct {
		uint32_t key, value;
	} labels[QUOTA_MAX_FLAVOR_LABELS];
};

/* The intern ids of tree `t` that a pod's lookups compare: the queue
 * label's key and every flavor's nodeLabels. */
struct quota_pod_names {
	uint32_t queue_key;
	struct quota_pod_flavor flavors[QUOTA_MAX_FLAVORS];
};

/* Fills *n for `t`, adding its strings to `strings` (the intern table's
 * writer's thread). 0, or -ENOMEM or -ENOSPC (the table is full). */
int quota_pod_names_intern(struct quota_pod_names *n, const struct quota_tree *t,
			   struct intern *strings);

/* The ClusterQueue of the pod of group `group` (its namespace and labels,
 * decoded into `scratch`): >= 0, with *lq its LocalQueue's index
 * (quota_local_queue_index); QUOTA_POD_NONE (no group, or no queue label;
 * *lq -1); QUOTA_POD_REFUSED with why "metadata.labels[...]: LocalQueue
 * NS/NAME doesn't exist (...)", Kueue's pending reason (*lq -1). `lq` may
 * be NULL. */
int quota_pod_queue(const struct quota_tree *t, const struct quota_pod_names *n,
		    const struct intern *strings, uint32_t group,
		    struct pod_group *scratch, int *lq, char *why, size_t why_len);

/* `pod` with flavor f's nodeLabels merged into its nodeSelector, into
 * *out: false when the pod's own nodeSelector asks another value for one
 * of the keys, or the selector would pass POD_MAX_SELECTOR (no node can
 * take the pod in that flavor then). */
bool quota_pod_flavor_spec(const struct quota_pod_names *n, int flavor,
			   const struct pod_spec *pod, struct pod_spec *out);

/* Whether node labels `labels[0..count)` (sorted by key) carry all of
 * flavor f's nodeLabels. */
bool quota_pod_node_has_flavor(const struct quota_pod_names *n, int flavor,
			       const struct label *labels, unsigned count);

/* Which of the tree's resources each of `res`'s names is (-1: none),
 * built for one tree and the res->count it was read at (0: not yet). One
 * thread's. Made with of_res, so that a charge is a pass without a branch
 * over the request and one write per resource of the tree: refused[i] is
 * all ones where a request is refused (of_res[i] < 0, i not "pods"), 0
 * elsewhere; tree resource r is charged (v[slot_of[r]] & keep[r]) |
 * one[r] (keep all ones where a name maps to r, one[r] 1 for "pods"). */
#define QUOTA_POD_RES_SLOTS 16 /* shm/model.h's RES_MAX */
struct quota_pod_map {
	unsigned count;
	int8_t of_res[QUOTA_POD_RES_SLOTS];
	uint8_t slot_of[QUOTA_MAX_RESOURCES];
	uint8_t n_resources;
	int64_t refused[QUOTA_POD_RES_SLOTS];
	int64_t keep[QUOTA_MAX_RESOURCES];
	int64_t one[QUOTA_MAX_RESOURCES];
};

/* The charge of a pod requesting `request` (its "pods" entry ignored)
 * into out[0 .. quota_n_resources(t)): each resource requested that the
 * tree names, and 1 for "pods" where the tree names it (Kueue counts a
 * pod as 1 "pods"). `map` is made again first when res->count moved
 * (names are only added). Returns 0, or -ENOENT with *missing the index
 * (in `res`) of a requested resource the tree names nowhere: see
 * quota_uncovered_message. */
int quota_pod_charge(const struct quota_tree *t, const struct res_names *res,
		     struct quota_pod_map *map, const struct res_vec *request,
		     int64_t *out, unsigned *missing);

/* quota_pod_charge's -ENOENT for a person: `ClusterQueue "a" covers no
 * resource "R", which WHO requests (no ClusterQueue names it)`. `who`:
 * "the pod", "a pod of its pod group". (quota/quota_message.c) */
void quota_uncovered_message(const struct quota_tree *t, int cq,
			     const char *resource, const char *who, char *buf,
			     size_t len);

#endif
