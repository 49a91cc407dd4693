/* Decoding a request body of Pods: what POST /v1/placements and the
 * extender verbs take from the outside, checked before anything reaches
 * the daemon.
 *
 * A body is a sequence of JSON values (whitespace between them: JSON Lines,
 * or one value): each a Pod, or a List / PodList whose items are Pods (as
 * `kubectl get pods -o json` prints them). A Pod needs metadata.name (and
 * may give metadata.namespace, default "default") and spec; what spec
 * holds is checked by the daemon when the pod's template is registered.
 *
 * Each pod is reduced to its *spec key*: the parts of the Pod that can
 * change where it goes (metadata.namespace and metadata.labels, which
 * inter-pod rules read, and spec), as a canonical JSON object, and a hash
 * of it that does not depend on the order of object members. Pods of equal
 * keys share one template in the daemon; their names travel beside it.
 * Within one body equal keys are found once (a table by hash, then
 * json_equal), so a batch of replicas costs one key.
 *
 * A pod's cookie (its id on the rings) is hash64(namespace/name), never 0:
 * stable across restarts, so the gateway can find a pod's placement again
 * from the daemon's listing, which carries the cookie.
 *
 * Errors say where and what, with the JSON path inside the body:
 *   line 3: items[2]: metadata.name: required
 *   line 7, column 12: JSON: '}' expected near ','
 * Cost: one jansson parse of the body, one walk of each pod's key, O(1)
 * table work per pod; a top-level Pod whose spec bytes the calling thread
 * decoded before: one scan of its bytes and a parse of its metadata only.
 *
 * Threads: a batch belongs to one thread at a time; nothing is shared.
 * Each thread keeps its own spec cache (its trees never leave it: the
 * batch gets a copy), freed when the thread ends.
 */
#ifndef SHMSCHED_GATEWAY_DECODE_H
#define SHMSCHED_GATEWAY_DECODE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Kubernetes' bounds on a name (DNS subdomain) and a namespace (label). */
#define GW_NAME_MAX 253
#define GW_NAMESPACE_MAX 63
/* Bytes of a pod's place in its body, as errors show it. */
#define GW_WHERE_MAX 64

struct gw_limits {
	size_t max_pods;  /* pods in one body */
	size_t max_specs; /* distinct spec keys in one body */
	/* Unknown fields of a Pod or List (?fieldValidation; enum
	 * k8s_field_validation of policy/policy.h, 0 = Strict): Strict
	 * refuses the body naming them ("line 1: spec.nodeSelectr: unknown
	 * field ..."); Warn drops them and names each in gw_batch.warnings;
	 * Ignore drops them. Dropped fields never reach the daemon. */
	int field_validation;
	/* true: every value through jansson, no spec cache (the oracle the
	 * tests compare the fast path with). */
	bool no_spec_cache;
};

/* The spec cache (decode.c's design note): per thread, two-way,
 * keyed by the exact bytes of a top-level Pod's apiVersion and spec,
 * filled when the same bytes are decoded the second time. At
 * most GW_SPEC_CACHE_SLOTS entries of at most GW_SPEC_CACHE_ENTRY_MAX
 * bytes (a longer spec is never cached). */
#define GW_SPEC_CACHE_SLOTS 64u
#define GW_SPEC_CACHE_ENTRY_MAX (8u << 10)

struct gw_spec_cache_stats {
	size_t entries; /* held now */
	size_t bytes;   /* their key bytes (apiVersion + spec text) */
	uint64_t hits, misses, inserts;
};

/* The calling thread's cache: its counts, or emptied. */
void gw_spec_cache_stats(struct gw_spec_cache_stats *out);
void gw_spec_cache_clear(void);

/* Warnings kept for one body (each a Warning header); past it, counted. */
#define GW_MAX_WARNINGS 32

/* A distinct spec key of the body. */
struct gw_spec {
	json_t *canon;            /* owned: {"apiVersion":"v1","kind":"Pod",
				   * "metadata":{"namespace":..,"labels":..},
				   * "spec":..} */
	uint64_t hash;            /* gw_spec_hash(canon) */
	char where[GW_WHERE_MAX]; /* its first pod's place in the body */
};

/* One pod of the body, in body order. */
struct gw_pod {
	uint64_t cookie;   /* hash64 of its namespace/name, never 0 */
	uint32_t spec;     /* index in the batch's specs */
	uint32_t name_off; /* namespace/name, NUL-terminated, in names */
	/* ?fieldValidation=Warn: its own warnings, batch.warnings[first_warning
	 * .. + n_warnings) (those kept; its answer line's "warnings"). */
	uint8_t first_warning, n_warnings;
};

struct gw_batch {
	struct gw_pod *pods;
	size_t n_pods, cap_pods;
	struct gw_spec *specs;
	size_t n_specs, cap_specs;
	char *names;       /* every pod's namespace/name, NUL-terminated */
	size_t names_len, names_cap;
	uint32_t *spec_table; /* spec index + 1, by hash */
	size_t spec_mask;
	uint32_t *pod_table;  /* pod index + 1, by cookie */
	size_t pod_mask;
	/* fieldValidation=Warn: the unknown fields dropped, kube's text for
	 * each ("unknown field \"spec.nodeSelectr\""), at most
	 * GW_MAX_WARNINGS kept; n_warnings_total counts them all. */
	char *warnings[GW_MAX_WARNINGS];
	size_t n_warnings, n_warnings_total;
};

/* Decodes body[0..len) into *out (which it initialises; free it with
 * gw_batch_free() whatever the result). Returns 0, or:
 *   -EINVAL  not JSON, or not Pods: err says where and what
 *   -E2BIG   more pods or distinct specs than `lim` allows (err says which)
 *   -ENOMEM  out of memory */
int gw_decode_pods(const char *body, size_t len, const struct gw_limits *lim,
		   struct gw_batch *out, char *err, size_t err_len);

void gw_batch_free(struct gw_batch *b);

/* The spec subtree of a key (canon's "spec"), which may be shared with
 * an HTTP thread's spec cache and other batches: a reference for a holder
 * in any thread (GP1), so that while it is held no other tree has its
 * address and its content does not change (decode.c's "Shared trees"),
 * or NULL where such a reference cannot be had (a jansson without atomic
 * counts): hold nothing then. Let go with gw_spec_tree_release() (GP2;
 * NULL: nothing), in any thread. */
json_t *gw_spec_tree_hold(const json_t *canon);
void gw_spec_tree_release(json_t *tree);

static inline const char *gw_pod_name(const struct gw_batch *b,
				      const struct gw_pod *p)
{
	return b->names + p->name_off;
}

/* Makes *b a batch of one pod called ns_name whose spec key is `key` (the
 * batch takes the reference); `where` names it in errors. 0 or -ENOMEM
 * (the reference dropped). */
int gw_batch_one(struct gw_batch *b, json_t *key, const char *ns_name,
		 const char *where);

/* One Pod object: checks its metadata and spec and builds its key.
 * `where` prefixes errors. On success *canon is a new reference,
 * ns_name[0..ns_name_len) holds "namespace/name". Returns 0 or -EINVAL
 * (err set), -ENOMEM. */
int gw_pod_key(const json_t *pod, const char *where, json_t **canon,
	       char *ns_name, size_t ns_name_len, char *err, size_t err_len);

/* The hash of a JSON value, equal for values that json_equal() calls
 * equal (object members in any order). Recursion is bounded by jansson's
 * own parse depth. */
uint64_t gw_spec_hash(const json_t *v);

/* The cookie of a pod called `ns_name` ("namespace/name"). */
uint64_t gw_cookie(const char *ns_name, size_t len);

/* The most a request may wait (?wait=SECONDS), unless the gateway is
 * configured otherwise: kube-scheduler's podMaxInUnschedulablePodsDuration,
 * 5 minutes. */
#define GW_WAIT_MAX_DEFAULT_S 300u

/* POST /v1/placements?wait=SECONDS: text[0..len) (as the query string
 * gave it, percent-decoded; NULL: no value) must be a decimal integer
 * 0..max_s, digits only (no sign, space, exponent or NUL), at most 10.
 * Returns 0 with the seconds in *out_s, or -EINVAL with err naming the
 * parameter, the value (cut and escaped when long or odd) and the range. */
int gw_parse_wait(const char *text, size_t len, unsigned max_s, unsigned *out_s,
		  char *err, size_t err_len);

/* The most pods one POST /v1/placements?explain=true may hold, unless the
 * gateway is configured otherwise: each line carries an O(nodes)
 * explanation. */
#define GW_EXPLAIN_MAX_PODS_DEFAULT 64u
/* And the most bytes of explanations its answer may carry together (every
 * pod of a template repeats the template's): more is refused with 413
 * before any pod is submitted. */
#define GW_EXPLAIN_MAX_BYTES_DEFAULT (32u << 20)

/* POST /v1/placements?explain=VALUE: text[0..len) (percent-decoded; NULL:
 * no value) must be "true" or "false", exactly. Returns 0 with *out set,
 * or -EINVAL with err naming the parameter and the value (cut and escaped
 * as gw_parse_wait's). */
int gw_parse_explain(const char *text, size_t len, bool *out, char *err,
		     size_t err_len);

/* --- kube-scheduler's extender protocol (k8s.io/kube-scheduler/extender/v1)
 *
 * Its types carry no json tags, so members are named as the Go fields
 * ("Pod", "Nodes", "NodeNames", ...), and Go decodes them whatever their
 * case: so does this. Errors name the path as the Go fields spell it. */

/* A member of `obj` by name, exact or else in any case (Go's
 * encoding/json), or NULL. */
const json_t *gw_member_ci(const json_t *obj, const char *name);

/* ExtenderArgs: the pod, and the candidate nodes: Nodes (a NodeList: the
 * extender is not nodeCacheCapable) or NodeNames (it is). */
struct gw_extender_args {
	json_t *root;             /* the whole body (owned) */
	json_t *pod_key;          /* the pod's spec key (owned; gw_pod_key) */
	char pod_name[GW_NAMESPACE_MAX + 1 + GW_NAME_MAX + 1];
	char pod_uid[128];        /* metadata.uid, "" when absent */
	bool node_names;          /* NodeNames was given (nodeCacheCapable) */
	const json_t *nodes;      /* Nodes.items (in root), or NULL */
	const char **names;       /* [n_names]: candidates, in order (into root) */
	size_t n_names;
};

/* Decodes ExtenderArgs from body[0..len) into *out (which it initialises;
 * free it with gw_extender_args_free() whatever the result). At most
 * max_nodes candidates. Returns 0, or -EINVAL (err: where and what),
 * -E2BIG (too many candidates), -ENOMEM. */
int gw_decode_extender_args(const char *body, size_t len, size_t max_nodes,
			    struct gw_extender_args *out, char *err, size_t err_len);
void gw_extender_args_free(struct gw_extender_args *a);

#endif
