/* Kueue's quota objects (kueue.x-k8s.io/v1beta1 and v1beta2:
 * ResourceFlavor, Cohort, ClusterQueue, LocalQueue) as kubectl prints them
 * (`kubectl get resourceflavors,clusterqueues,localqueues,cohorts -o
 * json`) into a sealed quota tree (quota/quota.h).
 *
 * Strict: every field is either honoured or refused; the fields Kueue
 * has that shmsched does not act on yet (nodeTaints, tolerations,
 * topologyName, admission checks, admissionScope, StrictFIFO, a stopPolicy
 * other than None, a flavorFungibility other than Kueue's default, a
 * namespaceSelector that is not `{}`) are refused as "not supported yet",
 * and a field neither version has is refused as unknown. The table of
 * fields is in docs/reference/kubernetes-fields.md, "Kueue objects".
 *
 * Every error is one line, "<file>:<line>: <object>: <path>: <what>"
 * (base/json_in.h), the line being where the field's value begins in the
 * file (objects handed to kueue_objects_add() without a file have none).
 *
 * Not thread-safe: one reader per thread. The tree returned is the
 * caller's (quota_tree_free), sealed: see quota.h for its threads.
 */
#ifndef SHMSCHED_INGEST_KUEUE_JSON_H
#define SHMSCHED_INGEST_KUEUE_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "quota/quota.h"

typedef struct json_t json_t; /* jansson's; C11 allows the repeat */

/* The API group of every kind read here ("kueue.x-k8s.io/<version>"). */
#define KUEUE_GROUP "kueue.x-k8s.io"
/* Bytes of a file or buffer of Kueue objects only: larger ones are refused
 * (-EFBIG) before they are parsed. A cluster of QUOTA_MAX_CLUSTER_QUEUES
 * queues with 16 flavors each is well under it. A cluster file (`mixed`)
 * is bounded as the Kubernetes decoder bounds it (INT_MAX), having been
 * read whole by it first. */
#define KUEUE_FILE_MAX (64u << 20)
/* Objects one reader keeps until kueue_reader_seal(): the quota tree's own
 * bounds summed (quota.h). */
#define KUEUE_MAX_OBJECTS                                                  \
	(QUOTA_MAX_FLAVORS + QUOTA_MAX_COHORTS + QUOTA_MAX_CLUSTER_QUEUES + \
	 QUOTA_MAX_LOCAL_QUEUES)
/* spec.resourceGroups: +kubebuilder:validation:MaxItems=16 (both
 * versions' clusterqueue_types.go and cohort_types.go). */
#define KUEUE_MAX_RESOURCE_GROUPS 16

/* Whether (apiVersion, kind) names one of the four kinds this decoder
 * reads, in any version of the group (a version it does not read is then
 * its to refuse, not another decoder's to skip). */
static inline bool kueue_is_object(const char *api_version, const char *kind,
				   size_t kind_len)
{
	static const char group[] = KUEUE_GROUP "/";
	if (api_version == NULL || kind == NULL ||
	    strncmp(api_version, group, sizeof(group) - 1) != 0)
		return false;
	static const char *const kinds[] = {"ResourceFlavor", "Cohort",
					    "ClusterQueue", "LocalQueue"};
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (strlen(kinds[i]) == kind_len &&
		    memcmp(kinds[i], kind, kind_len) == 0)
			return true;
	return false;
}

struct kueue_reader;

/* A reader whose messages name `source` (the file; kept by pointer, NULL
 * or "": none). 0 or -ENOMEM. */
int kueue_reader_new(const char *source, struct kueue_reader **out);
void kueue_reader_free(struct kueue_reader *r);

/* One object found in a file (a reference is kept until the seal): its
 * apiVersion and kind are checked now, the rest when the tree is built,
 * as objects may come in any order (a ClusterQueue before the
 * ResourceFlavors it names). 0, or -EINVAL (not a Kueue kind or version
 * read here), -E2BIG (more than KUEUE_MAX_OBJECTS), -ENOMEM. */
int kueue_objects_add(struct kueue_reader *r, const json_t *obj, char *err,
		      size_t err_len);

/* Decodes every object added (ResourceFlavors first, then Cohorts and
 * ClusterQueues, then LocalQueues) into a new tree and seals it. 0 and
 * *out (the caller's), or -errno with the message; *out NULL then. */
int kueue_reader_seal(struct kueue_reader *r, struct quota_tree **out,
		      char *err, size_t err_len);

/* `buf` holds one JSON value or a stream of them (as the cluster file
 * does), each an object, a List (`kind: List` or `<Kind>List`, with
 * `items`) or an array of those. With `mixed` false every object must be
 * a Kueue kind read here; with `mixed` true (a cluster file) other kinds
 * are passed over, and *out is NULL when there was no Kueue object.
 * Duplicate keys in an object are refused unless `mixed` (then the
 * cluster file's decoder's rule holds: the last one counts). */
int kueue_load_buffer(const char *name, const char *buf, size_t len,
		      bool mixed, struct quota_tree **out, char *err,
		      size_t err_len);

/* The file at `path`, of Kueue objects only: a sealed tree in *out. */
int kueue_load_file(const char *path, struct quota_tree **out, char *err,
		    size_t err_len);

/* The Kueue objects of a cluster file (other kinds passed over): *out
 * NULL when it has none. */
int kueue_load_file_mixed(const char *path, struct quota_tree **out,
			  char *err, size_t err_len);

#endif
