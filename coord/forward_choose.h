/* Which hosts a pod that fits none of its host's shards may be forwarded
 * to (issue 40; docs/design/multi-host.md, "Pods that do not fit at
 * home"): a pure function of the hosts' status values
 * (coord/host_status.h, read from etcd's hosts/<host> keys). The forward
 * itself is not built: nothing in shmschedd calls this yet.
 *
 * A host may fit the pod when one of its shards has, on one node, at
 * least the request's cpu, its memory and one pod free: each figure is
 * that resource's largest on one node, on its own, so two of them may be
 * two nodes' and the pod may still not fit there (it is "may": the target
 * places or refuses). The figures are as fresh as the host's last put
 * (at most one a second, coord/membership.c). */
#ifndef SHMSCHED_COORD_FORWARD_CHOOSE_H
#define SHMSCHED_COORD_FORWARD_CHOOSE_H

#include <stddef.h>
#include <stdint.h>

#include "coord/host_status.h"

struct forward_host {
	const char *name;                 /* the host's name */
	const struct host_status *status; /* its decoded value; NULL: none (skipped) */
};

struct forward_need {
	int64_t cpu_milli;
	int64_t mem_bytes;
};

/* Writes to out the indices (into hosts[0..n)) of at most fan_out hosts
 * whose status says the pod may fit, `self` (this host's name) excluded,
 * best first: the most free cpu summed over one shard that may fit, then
 * the most memory so, then the fewer records queued for etcd (the lag),
 * then by name. Returns how many. */
size_t forward_candidates(const struct forward_host *hosts, size_t n, const char *self,
			  const struct forward_need *req, size_t fan_out, size_t *out);

#endif
