/* workers/: placing pods, the one public header for the rest of the tree:
 * the worker thread pool (pool.h), the engine (engine.h) with its plugins,
 * equivalence classes and score configuration, the choice of devices, and
 * the scheduling queue of waiting pods (queue.h).
 * Knows nothing of how results are delivered: committing is bind/'s. */
#ifndef SHMSCHED_WORKERS_WORKERS_H
#define SHMSCHED_WORKERS_WORKERS_H

#include "workers/score_config.h"
#include "workers/plugins.h"
#include "workers/plugin_table.h"
#include "workers/interpod.h"
#include "workers/pod_class.h"
#include "workers/device_choice.h"
#include "workers/engine.h"
#include "workers/pool.h"
#include "workers/queue.h"
#include "workers/preempt.h"

#endif
