/* coord/: coordination of several shmschedd hosts through etcd (issue 40;
 * the plan, and what is built, in docs/design/multi-host.md).
 * Today: the etcd client (coord/etcd_client.h) and its JSON codec
 * (coord/etcd_codec.h, public for its fuzz target and tests); the fenced,
 * pipelined committer of a shard's placements (coord/commit_queue.h), the
 * placement value it writes (coord/placement_value.h) and the batch
 * value of several placements a key (coord/batch_value.h), a shard's
 * rebuild from etcd (coord/rebuild.h) and the watch stream
 * (coord/watch.h); a host's status value in hosts/<host>
 * (coord/host_status.h: its shards' free capacity, its replication lag)
 * and the chooser of hosts to forward a pod to (coord/forward_choose.h); the
 * quota escrow's split and two-phase rule (coord/quota_escrow.h), its
 * keys' values
 * (coord/quota_escrow_value.h) and its rounds through etcd
 * (coord/quota_escrow_round.h), run by a host's membership
 * (coord/quota_escrow_member.h: its slices, acknowledgements and use
 * reports); the protocol of a pod forwarded to another host
 * (coord/forward.h, not called by the daemon yet). */
#ifndef SHMSCHED_COORD_COORD_H
#define SHMSCHED_COORD_COORD_H

#include "coord/etcd_client.h"
#include "coord/etcd_codec.h"
#include "coord/commit_queue.h"
#include "coord/placement_value.h"
#include "coord/batch_value.h"
#include "coord/host_status.h"
#include "coord/forward_choose.h"
#include "coord/quota_escrow.h"
#include "coord/quota_escrow_value.h"
#include "coord/quota_escrow_round.h"
#include "coord/quota_escrow_member.h"
#include "coord/rebuild.h"
#include "coord/watch.h"
#include "coord/membership.h"
#include "coord/forward.h"
#include "coord/shard_assign.h"
#include "coord/shard_map.h"

#endif
