/* shm/: shared memory and what lives in it, the one public header for the
 * rest of the tree: the region layout (layout.h is its specification) and
 * regions, offsets, rings and producer regions; the intern table and
 * resource names; the pod and node model; cluster snapshots and their RCU
 * publication (cluster.h); the ledger and its commit protocol (ledger.h,
 * specified in ledger.c); devices as the ledger holds them. Knows nothing
 * of scheduling policy. */
#ifndef SHMSCHED_SHM_SHM_H
#define SHMSCHED_SHM_SHM_H

#include "shm/layout.h"
#include "shm/layout_check.h"
#include "shm/offset.h"
#include "shm/map.h"
#include "shm/region.h"
#include "shm/ring.h"
#include "shm/producer_region.h"
#include "shm/model.h"
#include "shm/pod_group.h"
#include "shm/resources.h"
#include "shm/intern.h"
#include "shm/rcu.h"
#include "shm/devices.h"
#include "shm/ledger.h"
#include "shm/placements.h"
#include "shm/cluster.h"
#include "shm/state.h"
#include "shm/recount.h"
#include "shm/identity.h"
#include "shm/answer_bell.h"

#endif
