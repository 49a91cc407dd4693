/* ingest/: decoding outside input, the one public header for the rest of
 * the tree: Kubernetes JSON and clusters from files, synthetic clusters,
 * the scheduler configuration, pod slots from producer regions, and the
 * control socket: its framing and operations (shared with client/), the
 * server, and producer registration. Knows nothing of how nodes are
 * chosen. */
#ifndef SHMSCHED_INGEST_INGEST_H
#define SHMSCHED_INGEST_INGEST_H

#include "ingest/quantity.h"
#include "ingest/k8s_json.h"
#include "ingest/kueue_json.h"
#include "ingest/priority.h"
#include "ingest/pdb.h"
#include "ingest/cluster_load.h"
#include "ingest/resync.h"
#include "ingest/synthetic.h"
#include "ingest/sched_config.h"
#include "ingest/record.h"
#include "ingest/control_proto.h"
#include "ingest/control_ops.h"
#include "ingest/control_server.h"
#include "ingest/producers.h"
#include "ingest/approval.h"

#endif
