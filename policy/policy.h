/* Who may place pods where, and at what priority: the daemon's policy
 * (shmschedd --policy FILE), and the gateway's for its authenticated
 * clients. Kubernetes gives this by RBAC (who may create pods in which
 * namespace) and by quota on PriorityClasses; a producer of shmsched has
 * no API server in front of it, so the daemon asks this instead.
 *
 * The file is JSON, read strictly (an unknown field, a duplicate key, a
 * value of the wrong type or past its bound is refused, naming the file,
 * the JSON path, the value and what was expected):
 *
 *   {"apiVersion": "shmsched.io/v1alpha1", "kind": "Policy", "rules": [
 *     {"uids": [1001], "names": ["team-a"],      local producers
 *      "users": ["alice"],                        gateway clients
 *      "namespaces": ["team-a", "team-a-*"],
 *      "priorityClasses": ["low", "high"],
 *      "disruptNamespaces": ["team-a"]}]}
 *
 * - A local producer (uid from SO_PEERCRED, the name it registered with)
 *   matches a rule whose "uids" holds its uid and whose "names" holds its
 *   name ("*": any name; "names" absent: any name). A gateway client
 *   matches a rule whose "users" holds its authenticated user name ("*":
 *   any authenticated user). The first rule that matches is the
 *   identity's; an identity no rule matches may place no pod.
 * - "namespaces": where its pods may be (a DNS-1123 label, a prefix
 *   ending in '*', or "*" for any). Gangs follow: a pod's PodGroup is in
 *   the pod's own namespace.
 * - "priorityClasses": the classes its pods may name (exact, prefix-'*',
 *   or "*"). A pattern never grants a class whose name starts "system-"
 *   (system-node-critical, system-cluster-critical): such a class only
 *   by its exact name. A pod that names no class is not checked (it gets
 *   the cluster's globalDefault class, the administrator's choice).
 * - "disruptNamespaces": whose pods its pods' preemptions may evict
 *   (patterns as "namespaces"); absent: its own "namespaces"; []: none.
 *
 * Without a policy (policy pointer NULL): any namespace, any class but the
 * system- ones, which only admin connections may name (as kube-apiserver's
 * Priority admission kept them to kube-system from 1.11 to 1.16, and
 * ResourceQuota's limitedResources does since: kubernetes PR #65593,
 * issue #65557), any victim.
 *
 * Bounds: the text at most POLICY_BYTES_MAX bytes (it fits one control
 * message, so `shmsched policy apply` takes any file the daemon reads),
 * POLICY_RULES_MAX rules, POLICY_LIST_MAX entries in each list, names as
 * below.
 *
 * Concurrency: a struct policy is immutable once made; any thread may read
 * it while no one frees it. The daemon replaces its policy under its
 * producers' lock.
 */
#ifndef SHMSCHED_POLICY_POLICY_H
#define SHMSCHED_POLICY_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <jansson.h>

#define POLICY_API_VERSION "shmsched.io/v1alpha1"
#define POLICY_KIND "Policy"
#define POLICY_BYTES_MAX (UINT32_C(60) << 10)
#define POLICY_RULES_MAX 256u
#define POLICY_LIST_MAX 64u
#define POLICY_NAME_MAX 63u      /* a registered producer name (op_register) */
#define POLICY_USER_MAX 255u     /* a gateway user name */
#define POLICY_NAMESPACE_MAX 63u /* a DNS-1123 label */
#define POLICY_CLASS_MAX 253u    /* a DNS-1123 subdomain */
#define POLICY_SYSTEM_PREFIX "system-"

struct policy;
struct policy_rule;

/* Parses `len` bytes of `text` (need not be NUL-terminated); `source`
 * names it in messages and in policy_source() (a path, or a phrase).
 * Returns 0 with *out, or -EINVAL (the text breaks a rule above), -E2BIG
 * (over POLICY_BYTES_MAX), -ENOMEM, each with a message in err. */
int policy_parse(const char *text, size_t len, const char *source,
		 struct policy **out, char *err, size_t err_len);

/* Reads and parses the file at `path` (at most POLICY_BYTES_MAX bytes).
 * Errors as policy_parse, and the errno of open(2) or read(2). */
int policy_load_file(const char *path, struct policy **out, char *err,
		     size_t err_len);

void policy_free(struct policy *pol);

/* Where it came from, as given to policy_parse. */
const char *policy_source(const struct policy *pol);
/* The text it was parsed from, exactly (not NUL-terminated: *len bytes). */
const char *policy_text(const struct policy *pol, size_t *len);
uint32_t policy_rules(const struct policy *pol);

/* The first rule for a local producer (uid, registered name), or for a
 * gateway client (its authenticated user name); NULL: none. */
const struct policy_rule *policy_find_local(const struct policy *pol, uid_t uid,
					    const char *name);
const struct policy_rule *policy_find_user(const struct policy *pol,
					   const char *user);
/* The rule's place in "rules" (0-based), for messages. */
uint32_t policy_rule_index(const struct policy_rule *r);

/* Whether rule `r` lets its identity place pods in namespace ns[0..len),
 * name PriorityClass `cls`, evict pods of namespace ns[0..len). A NULL
 * rule allows nothing. */
bool policy_allows_namespace(const struct policy_rule *r, const char *ns,
			     size_t len);
bool policy_allows_priority_class(const struct policy_rule *r, const char *cls);
bool policy_allows_disrupt(const struct policy_rule *r, const char *ns, size_t len);
/* Whether a rule lets its identity evict pods of any namespace. */
bool policy_disrupts_any(const struct policy_rule *r);

/* --- narrowing scopes (issue 41) -------------------------------------------
 * A producer may narrow, never widen, whose pods one of its templates may
 * disrupt: with the template it sends a scope, a list of namespace
 * patterns as "disruptNamespaces" holds them, as text: the patterns
 * separated by ',' ("team-b,team-c-*"; "": none; "*": whatever its rule
 * allows). A victim must then be allowed by the identity's rule AND by the
 * scope. The gateway sends each user's own disruptNamespaces this way, as
 * the daemon knows the gateway's identity only. The text is at most
 * POLICY_SCOPE_BYTES_MAX bytes, POLICY_LIST_MAX patterns, each as
 * "namespaces" takes it; anything else is refused, naming the pattern. */
#define POLICY_SCOPE_BYTES_MAX (POLICY_LIST_MAX * (POLICY_NAMESPACE_MAX + 2u))

struct policy_scope;

/* Parses text[0..len) (need not be NUL-terminated). Returns 0 with *out,
 * or -EINVAL (a pattern as above names it), -E2BIG (over the bounds),
 * -ENOMEM, each with a message in err. */
int policy_scope_parse(const char *text, size_t len, struct policy_scope **out,
		       char *err, size_t err_len);
void policy_scope_free(struct policy_scope *s);
/* Whether scope `s` holds namespace ns[0..len). */
bool policy_scope_allows(const struct policy_scope *s, const char *ns, size_t len);
/* The patterns of `s` as scope text, NUL-terminated, for messages. */
const char *policy_scope_text(const struct policy_scope *s);

/* Rule r's disruptNamespaces (absent: its namespaces) as scope text into
 * buf (NUL-terminated); a NULL rule: "" (none). Returns its length, or
 * -ENOSPC when buf is too short (POLICY_SCOPE_BYTES_MAX + 1 always does). */
int policy_rule_disrupt_text(const struct policy_rule *r, char *buf, size_t len);

/* Whether `cls` is a system- class (reserved to Kubernetes' own). */
bool policy_class_is_system(const char *cls);

/* The one check of a pod at admission, as the daemon makes it for a
 * template and the gateway would for each pod of a request: may `who`
 * place a pod in namespace `ns` (NUL-terminated) naming PriorityClass `cls`
 * (NULL or "": none)? `r` is who's rule (policy_find_local or
 * policy_find_user); `admin`: an admin connection (no policy applies to
 * it). With pol NULL, the default above. `who` names the identity in the
 * message ("uid 1001, name \"team-a\"", "user \"alice\"").
 * Returns 0, or -EPERM with a message in why naming the identity, the
 * namespace or class and the policy. */
int policy_admit(const struct policy *pol, const struct policy_rule *r,
		 bool admin, const char *who, const char *ns, const char *cls,
		 char *why, size_t why_len);

/* The gateway's one call for a pod of an authenticated client: the rule of
 * `user` (policy_find_user), then policy_admit as for a producer
 * connection (never admin). With pol NULL, the default. Returns 0 or
 * -EPERM with a message naming user "NAME", the namespace or class and the
 * policy; the gateway answers it 403 Forbidden. */
int policy_admit_user(const struct policy *pol, const char *user, const char *ns,
		      const char *cls, char *why, size_t why_len);

/* --- Kubernetes field validation (policy/k8s_fields.c) ------------------
 * Whether a Kubernetes object names only fields of its type, as the API
 * server's server-side field validation judges it (fieldValidation=
 * Strict|Warn|Ignore): every member name of the object, at every depth, is
 * looked up in a table derived from Kubernetes' published OpenAPI document
 * (policy/k8s_fields_table.c, scripts/derive-k8s-fields). A name that is
 * not a field of the type is "unknown": "spec.nodeSelectr: unknown field
 * (did you mean spec.nodeSelector?)". Maps (labels, annotations, resource
 * lists, nodeSelector) take any key; opaque types (Quantity, FieldsV1,
 * RawExtension) are not walked. A kind not in the table (a CRD such as
 * scheduling.x-k8s.io's PodGroup, another apiVersion) is not checked. */
enum k8s_field_validation {
	K8S_FIELDS_STRICT = 0, /* an unknown field refuses the object (default) */
	K8S_FIELDS_WARN = 1,   /* it is reported and dropped */
	K8S_FIELDS_IGNORE = 2, /* it is dropped silently */
};

/* The unknown fields of one object, at most K8S_FIELDS_MAX_REPORT named. */
#define K8S_FIELDS_MAX_REPORT 8
#define K8S_FIELDS_MSG_MAX 256
struct k8s_fields_report {
	size_t total;  /* unknown fields found (all of them, past those named) */
	size_t n;      /* those in msg */
	char msg[K8S_FIELDS_MAX_REPORT][K8S_FIELDS_MSG_MAX];
};

/* "Strict", "Warn" or "Ignore" (as kube-apiserver spells them; any case)
 * into *out. Returns 0 or -EINVAL. */
int k8s_field_validation_parse(const char *s, enum k8s_field_validation *out);
const char *k8s_field_validation_name(enum k8s_field_validation v);

/* Checks object `obj` of kind `kind` and apiVersion `api_version` (NULL
 * or "": the kind's version in the table), whose path in messages starts
 * with `prefix` ("" or "items[3]."). A list kind's items are not followed
 * (each is an object of its own). Fills *r (cleared first) and returns
 * r->total: 0 when every field is known, or when the kind is not in the
 * table. Each message reads "<path>: unknown field" and, when a field of
 * the type is within edit distance 2 or equal but for case, " (did you
 * mean <path of it>?)". Linear in the object's size. */
size_t k8s_fields_check(const json_t *obj, const char *api_version,
			const char *kind, const char *prefix,
			struct k8s_fields_report *r);

/* Removes from `obj` every member k8s_fields_check() would report (what
 * the API server does under Warn and Ignore: the field is dropped), so
 * that a reader after it (the daemon, Strict by default) sees none.
 * Returns how many were removed. */
size_t k8s_fields_prune(json_t *obj, const char *api_version, const char *kind);

/* Whether the table has a type for kind / apiVersion (as above). */
bool k8s_fields_known_kind(const char *api_version, const char *kind);

/* The report as one line: its messages joined by "; ", and "; and N more
 * unknown fields" past those named. */
void k8s_fields_report_line(const struct k8s_fields_report *r, char *buf,
			    size_t len);

#endif
