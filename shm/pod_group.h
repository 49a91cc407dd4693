/* A pod group: what inter-pod rules (InterPodAffinity, PodTopologySpread)
 * know of a pod. Its namespace and labels (what other pods' selectors
 * match), its pod affinity and anti-affinity terms, and its topology
 * spread constraints. Pods whose groups are equal are alike to every
 * inter-pod rule, so the ledger counts pods per group on each node
 * (shm/ledger.h) and never needs a pod's own labels.
 *
 * A group is named by the intern id (shm/intern.h) of its canonical
 * encoding (pod_group_encode), carried in pod_spec.group and in placement
 * records. The encoding is a line of decimal numbers, intern ids among
 * them, so it is compact and as stable as the ids (the state region keeps
 * them across a daemon restart; the durable store translates them,
 * bind/store_codec.c). Anyone may decode it (pod_group_decode), and a
 * decoded group is checked whole: a damaged string is refused, never
 * trusted.
 *
 * What ingest/ resolves before encoding, so that matching needs nothing
 * but two groups:
 * - a term's namespaces: its own list, plus the namespaces its
 *   namespaceSelector selects among the Namespace objects known at the
 *   time; none and no selector means the pod's own namespace; an empty
 *   namespaceSelector ({}) means every namespace (all_namespaces);
 * - matchLabelKeys / mismatchLabelKeys: merged into the selector as
 *   `key In (the pod's value)` / `key NotIn (the pod's value)` for the
 *   keys the pod has, as kube-apiserver (pod affinity) and kube-scheduler
 *   (spread) merge them;
 * - the default spread selector: the selectors of the Services,
 *   ReplicaSets, StatefulSets and ReplicationControllers that select the
 *   pod, ANDed (kube-scheduler's helper.DefaultSelector), used by a
 *   profile's default constraints when the pod has none of its own.
 *
 * Concurrency: pure functions of their arguments; any thread.
 */
#ifndef SHMSCHED_SHM_POD_GROUP_H
#define SHMSCHED_SHM_POD_GROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shm/model.h"

#define GROUP_MAX_LABELS 64      /* metadata.labels */
#define GROUP_MAX_TERMS 32       /* pod (anti-)affinity terms, all four kinds */
#define GROUP_MAX_SPREAD 8       /* topologySpreadConstraints */
#define GROUP_MAX_REQS 128       /* selector requirements, all selectors */
#define GROUP_MAX_VALUES 256     /* requirement values, all requirements */
#define GROUP_MAX_NAMESPACES 64  /* term namespaces, all terms */

/* A label selector requirement; a matchLabels pair is `key In (value)`.
 * op is SEL_IN, SEL_NOT_IN, SEL_EXISTS or SEL_DOES_NOT_EXIST
 * (shm/model.h). */
struct group_req {
	uint32_t key;
	uint8_t op;
	uint16_t first_value; /* into pod_group.values */
	uint16_t n_values;
};

/* A metav1.LabelSelector: its requirements ANDed. A nil selector (absent)
 * matches nothing; an empty one ({}) matches everything. */
struct group_selector {
	bool present;
	uint16_t first_req; /* into pod_group.reqs */
	uint16_t n_reqs;
};

enum group_term_kind {
	TERM_REQUIRED_AFFINITY = 0,      /* podAffinity.required... */
	TERM_REQUIRED_ANTI_AFFINITY = 1, /* podAntiAffinity.required... */
	TERM_PREFERRED_AFFINITY = 2,     /* podAffinity.preferred... */
	TERM_PREFERRED_ANTI_AFFINITY = 3,/* podAntiAffinity.preferred... */
};

/* A pod affinity term (kube-scheduler's framework.AffinityTerm, with the
 * weight of a WeightedPodAffinityTerm). */
struct group_term {
	uint8_t kind;           /* enum group_term_kind */
	bool all_namespaces;    /* namespaceSelector {} */
	int32_t weight;         /* preferred: 1..100; required: 0 */
	uint32_t topology_key;  /* a node label key, never 0 */
	struct group_selector selector;
	uint16_t first_ns;      /* into pod_group.namespaces */
	uint16_t n_ns;
};

enum spread_policy {
	SPREAD_POLICY_HONOR = 0,
	SPREAD_POLICY_IGNORE = 1,
};

/* A topologySpreadConstraint. */
struct group_spread {
	uint32_t topology_key;
	int32_t max_skew;       /* >= 1 */
	int32_t min_domains;    /* >= 1 (1 when not given) */
	bool hard;              /* whenUnsatisfiable DoNotSchedule */
	uint8_t node_affinity_policy; /* enum spread_policy; default Honor */
	uint8_t node_taints_policy;   /* enum spread_policy; default Ignore */
	struct group_selector selector;
};

struct pod_group {
	uint32_t ns;            /* interned namespace */
	/* The pod has metadata.deletionTimestamp: it still counts toward
	 * inter-pod affinity, but no spread selector matches it, as
	 * kube-scheduler's countPodsMatchSelector skips terminating pods
	 * (podtopologyspread/common.go). */
	bool terminating;
	uint16_t n_labels;
	uint16_t n_terms;       /* sorted by kind, then in the pod's order */
	uint16_t n_spread;
	uint16_t n_reqs;
	uint16_t n_values;
	uint16_t n_namespaces;
	struct group_selector default_selector; /* not present: none selects it */
	struct label labels[GROUP_MAX_LABELS];  /* sorted by key, keys unique */
	struct group_term terms[GROUP_MAX_TERMS];
	struct group_spread spread[GROUP_MAX_SPREAD];
	struct group_req reqs[GROUP_MAX_REQS];
	uint32_t values[GROUP_MAX_VALUES];
	uint32_t namespaces[GROUP_MAX_NAMESPACES];
};

/* The longest encoding (INTERN_MAX_LEN). */
#define GROUP_ENCODED_MAX 4096u

/* Writes the canonical encoding of `g` (whose unused entries are ignored)
 * into buf. Returns its length, or -E2BIG when it would pass `len` (or
 * GROUP_ENCODED_MAX), or -EINVAL when `g` breaks a rule above (counts
 * past a limit, an index outside its array, labels unsorted). */
int pod_group_encode(const struct pod_group *g, char *buf, size_t len);

/* Decodes `len` bytes into *out (zero-filled first). Returns 0, or
 * -EBADMSG when they are not an encoding pod_group_encode could write. */
int pod_group_decode(const char *s, size_t len, struct pod_group *out);

/* Calls fn on every intern id `g` holds (namespace, label keys and
 * values, topology keys, requirement keys and values, term namespaces),
 * always in the same order, letting it rewrite them: how the durable
 * store carries a group's strings by value. Stops at fn's first non-zero
 * return and returns it. */
int pod_group_map_ids(struct pod_group *g, int (*fn)(void *arg, uint32_t *id),
		      void *arg);

/* The number of terms of a kind, and the first (terms are sorted). */
unsigned pod_group_terms(const struct pod_group *g, enum group_term_kind kind,
			 const struct group_term **first);

/* The value of label `key` on `labels` (sorted by key), or false. */
bool labels_get(const struct label *labels, unsigned n, uint32_t key,
		uint32_t *value);

/* Whether selector `sel` of group `g` matches the labels. */
bool group_selector_matches(const struct pod_group *g,
			    const struct group_selector *sel,
			    const struct label *labels, unsigned n_labels);

/* framework.AffinityTerm.Matches: term `t` of group `g` matches a pod of
 * group `pod` (its namespace among the term's, and its labels by the
 * term's selector). */
bool group_term_matches(const struct pod_group *g, const struct group_term *t,
			const struct pod_group *pod);

/* Whether group `pod` matches spread constraint (or default selector)
 * `sel` of group `g`: not terminating, same namespace as `g`, and the
 * selector (countPodsMatchSelector). */
bool group_spread_matches(const struct pod_group *g,
			  const struct group_selector *sel,
			  const struct pod_group *pod);

#endif
