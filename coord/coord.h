/* coord/: coordination of several shmschedd hosts through etcd (issue 40;
 * the plan, and what is built, in docs/design/multi-host.md).
 * Today: the etcd client (coord/etcd_client.h) and its JSON codec
 * (coord/etcd_codec.h, public for its fuzz target and tests); nothing of
 * the daemon uses them yet. */
#ifndef SHMSCHED_COORD_COORD_H
#define SHMSCHED_COORD_COORD_H

#include "coord/etcd_client.h"
#include "coord/etcd_codec.h"
#include "coord/membership.h"
#include "coord/shard_assign.h"
#include "coord/shard_map.h"

#endif
