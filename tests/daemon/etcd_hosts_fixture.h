/* The harness of the multi-host tests (issue 40): real shmschedd hosts
 * with --etcd on one cluster file of one-node zones, run inside
 * tests/coord/etcd_cluster.sh, and what etcd says they own. Shared by
 * stress.etcd_hosts (test_etcd_hosts.c) and the kill-under-load runs
 * (failover_load.c); no cmocka here: errors are returned (negative errno)
 * with a message for a person, so a plain program can use it too.
 *
 * Host h is names[h]; its socket is <dir>/<name>.sock, its log (appended
 * over restarts) <dir>/<name>.log; zone z is "z<z>", its one node
 * "n<z>" (label topology.kubernetes.io/zone, shmschedd's default
 * --shard-by). */
#ifndef SHMSCHED_TESTS_ETCD_HOSTS_FIXTURE_H
#define SHMSCHED_TESTS_ETCD_HOSTS_FIXTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "coord/coord.h"

#define ETCD_HOSTS_MAX 8
#define ETCD_HOSTS_ZONES_MAX 16

struct etcd_hosts {
	const char *shmschedd;	  /* the daemon's path */
	const char *endpoints;	  /* SHMSCHED_ETCD_ENDPOINTS */
	const char *cluster_name; /* --etcd-cluster: the keys' prefix */
	const char *dir;	  /* sockets, logs, cluster.json */
	const char *const *names; /* [n] */
	int n;
	int zones;
	int ttl_s;		  /* --etcd-lease-ttl */
	const char *durability;	  /* --etcd-durability; NULL: the default */
	const char *cluster_file; /* --cluster, in dir; NULL: cluster.json */
	const char *shard_by;	  /* --shard-by; NULL: the default */
	bool no_etcd;		  /* the next host starts without --etcd at all
				   * (one host: a figure beside the others) */
	pid_t pids[ETCD_HOSTS_MAX]; /* 0: not running */
};

/* Writes <dir>/cluster.json: zones nodes n<z> in zone z<z>, each with
 * `cpu` and `memory` (Kubernetes quantities) and room for `pods` pods. */
int etcd_hosts_write_cluster(const struct etcd_hosts *e, const char *cpu, const char *memory,
			     unsigned pods, char *err, size_t errlen);
/* The same in <dir>/<file>, the objects `extra` (",{...},{...}" or "")
 * after the nodes (a ClusterQueue, its flavor, its LocalQueue). */
int etcd_hosts_write_cluster_file(const struct etcd_hosts *e, const char *file, const char *cpu,
				  const char *memory, unsigned pods, const char *extra, char *err,
				  size_t errlen);

/* Starts host h and returns when its socket accepts a producer (20 s at
 * most: -ETIMEDOUT; -ECHILD: it exited first). */
int etcd_host_start(struct etcd_hosts *e, int h, char *err, size_t errlen);

/* SIGCONT then SIGTERM, waited for; its wait status (-1: not running). */
int etcd_host_stop(struct etcd_hosts *e, int h);

/* SIGKILL, waited for. */
void etcd_host_kill(struct etcd_hosts *e, int h);

/* Prints the last 15 lines of the first n hosts' logs (<dir>/<name>.log),
 * for a run that failed. */
void etcd_hosts_print_logs(const struct etcd_hosts *e, int n);

/* Each zone's owner (a host index; -1: none, or a name not in names)
 * from etcd's shards/z<z>/owner now. 0 or the client's error. */
int etcd_hosts_owners(const struct etcd_hosts *e, struct etcd_client *ec, int *own,
		      char *err, size_t errlen);

/* Polls the owners every 20 ms until every zone is owned by a host in
 * `live` (a mask) and each live host owns floor or ceil of zones/live;
 * 0 with own[] and *took_s, or -ETIMEDOUT after limit_s (err says the
 * owners last read). */
int etcd_hosts_await_balanced(const struct etcd_hosts *e, struct etcd_client *ec,
			      unsigned live, int *own, double limit_s, double *took_s,
			      char *err, size_t errlen);

/* CLOCK_MONOTONIC in seconds; a sleep of ms milliseconds. */
double etcd_hosts_now_s(void);
void etcd_hosts_sleep_ms(unsigned ms);

#endif
