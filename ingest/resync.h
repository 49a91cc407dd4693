/* Resync: the operators' reconciliation with the source of truth. A list
 * of Kubernetes Pods (as `kubectl get pods -o json` prints them, any
 * scheduler's) declares the pods bound on one node or on the whole
 * cluster; afterwards the placements counted there are exactly those pods
 * (docs/concepts.md: "declaring bound pods" is the admin's).
 *
 * Matching is by "namespace/name": a live placement record on a node in
 * scope whose pod name is a declared pod on that node, with the same use,
 * stays (unchanged); with another use it is replaced (resized); a record
 * no declared pod names is freed and its use given back (removed), whoever
 * owned it (a producer's release of it then finds nothing); a declared pod
 * no record names is recorded as bound (added). Producers' placements
 * carry their template's name, not their pod's, so a resync that covers
 * their node replaces them with the declared pods.
 *
 * Concurrency: the control thread (the one that frees records), while
 * workers place; what they place during the resync is not in its scope
 * (it is newer than the declaration).
 */
#ifndef SHMSCHED_INGEST_RESYNC_H
#define SHMSCHED_INGEST_RESYNC_H

#include <stddef.h>
#include <stdint.h>

#include "shm/shm.h"

struct resync_result {
	uint64_t added, removed, resized, unchanged;
	uint64_t skipped;   /* declared on a node the cluster does not have,
			     * or out of scope, not bound, or finished */
};

/* What the caller hears of each record change (the durable store).
 * `freed` is called just before the record is freed: once freed, a worker
 * may take it for a new placement at once, whose durable put must come
 * after this delete (they share the record's index). */
struct resync_hooks {
	void (*freed)(void *arg, uint64_t id);
	void (*added)(void *arg, uint64_t id);
	void *arg;
};

/* Applies the pods in buf[0..len) (JSON: a Pod, a List of them, or a
 * stream; `name` names it in messages) to `node` (NULL or "": every node).
 * Strings interned for it stay (the declared pods' names are in records).
 * Returns 0 and the counts, or a negative errno with a message: -EINVAL
 * (bad JSON, a field that is not a pod's, a Node in the list), -ENOENT (no
 * such node), -ENOSPC (more pods than placement records), -ENOMEM. On an
 * error in parsing or scope nothing is changed; -ENOSPC while recording
 * (workers took the records meanwhile) keeps what was done, counted. */
int resync_apply(struct cluster *c, struct placements *records,
		 struct intern *strings, struct res_names *res,
		 const char *name, const char *buf, size_t len, const char *node,
		 const struct resync_hooks *hooks, struct resync_result *out,
		 char *err, size_t err_len);

/* Reads the regular file open on `fd` into memory the caller frees
 * (*buf, NUL-terminated, *len bytes): read(2) into a buffer, never a
 * mapping, so a file truncated while it is read gives a short read, not
 * SIGBUS (issue 41). Refused, -EFBIG, when the file is, or grows to, more
 * than `max` bytes; -EINVAL when it is not a regular file. Returns 0 or a
 * negative errno with a message in `err`. */
int resync_read_fd(int fd, uint64_t max, char **buf, size_t *len, char *err,
		   size_t err_len);

#endif
