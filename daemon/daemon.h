/* The daemon, assembled: cluster state, engines, producers, the control
 * socket and the worker pool. shmschedd's main starts one; the benchmark
 * runs one in process. The parts are the modules' (see each header); this
 * only wires them and orders start and stop.
 */
#ifndef SHMSCHED_DAEMON_DAEMON_H
#define SHMSCHED_DAEMON_DAEMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct daemon_config {
	const char *socket_path;   /* required */
	const char *cluster_path;  /* Kubernetes JSON; NULL: synthetic */
	uint32_t synthetic_nodes;  /* when cluster_path is NULL */
	uint32_t synthetic_running;
	const char *config_path;   /* KubeSchedulerConfiguration; NULL: defaults */
	uint64_t seed;             /* synthetic cluster, tie-breaks */
	unsigned workers;          /* 0: one per core less one, at least 1 */
	bool pin;                  /* pin workers to cores (hwloc) */
	uint32_t slots;            /* per producer region; 0: 4096 */
	const uid_t *allowed_uids; /* none and no gids: the daemon's own uid */
	size_t n_allowed_uids;
	const gid_t *allowed_gids;
	size_t n_allowed_gids;
};

struct daemon_stats {
	uint32_t nodes;
	unsigned workers;
	uint64_t producers_registered, producers_gone;
	uint64_t producer_faults;  /* disconnected for breaking their region's rings */
	uint64_t pods, placed, unschedulable, rejected, cancelled;
	uint64_t conflicts, gave_up, bad_handles, completion_overflows;
};

struct daemon;

/* Starts everything; on return the socket accepts producers. Returns NULL
 * with a message in `err` (input errors name the file and field). The
 * calling thread must not be a liburcu reader. */
struct daemon *daemon_start(const struct daemon_config *cfg, char *err,
			    size_t err_len);

/* Stops: refuses new producers, lets the workers answer what is already
 * submitted for up to `drain_ms`, answers what is left SHMSCHED_CANCELLED,
 * stops the workers, closes every connection and frees everything. Every
 * pod submitted before the call is answered. */
void daemon_stop(struct daemon *d, unsigned drain_ms, struct daemon_stats *out);

/* Figures so far (relaxed reads of the workers' counters). */
void daemon_get_stats(struct daemon *d, struct daemon_stats *out);

/* The invariant check: node counters (every resource) above allocatable,
 * counted now. Zero unless something is broken, or a cluster file's bound
 * pods already exceeded a node when it was loaded. */
uint64_t daemon_overcommits(struct daemon *d);

/* Pods the nodes hold now (the sum of their pod counters), to check
 * against what was placed and released. */
uint64_t daemon_pods_on_nodes(struct daemon *d);

/* Devices the nodes hold now: GPU milli summed over every node's devices,
 * and exclusive cores held; to check that releases give back what was
 * placed. The same calling rule as daemon_overcommits(). */
void daemon_devices_in_use(struct daemon *d, uint64_t *gpu_milli,
			   uint64_t *cores);

#endif
