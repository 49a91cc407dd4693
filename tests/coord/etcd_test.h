/* tests/coord/etcd_test.h: what the tests against a real etcd
 * (tests/coord/etcd_cluster.sh: SHMSCHED_ETCD_ENDPOINTS and
 * SHMSCHED_ETCD_PIDS) share: the cluster read from the environment, a
 * client that fails the test when it cannot open, the endpoints ordered
 * leader first (to kill the member a client talks to), a census of a
 * key prefix read back in pages, the monotonic clock and a sleep. Used by
 * test_etcd_commit.c, test_etcd_fence.c, test_membership.c and
 * test_forward_etcd.c; cmocka's fail_msg on any etcd error. */
#ifndef SHMSCHED_TESTS_COORD_ETCD_TEST_H
#define SHMSCHED_TESTS_COORD_ETCD_TEST_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "coord/coord.h"

/* The 3-member etcd etcd_cluster.sh started. */
struct etcd_test_cluster {
	const char *endpoints;              /* "http://127.0.0.1:P,..." */
	pid_t pids[ETCD_MAX_ENDPOINTS];     /* the members', in that order */
	size_t n;
};

/* Reads the cluster from the environment: 0, or 77 (the test's exit
 * status: skipped) after printing SKIP when either variable is unset. */
int etcd_test_cluster_from_env(struct etcd_test_cluster *cl);

/* A client of `eps` with a 3 s timeout; the test fails if it cannot open. */
struct etcd_client *etcd_test_open(const char *eps);

/* CLOCK_MONOTONIC in seconds. */
double etcd_test_now_s(void);

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t etcd_test_now_ns(void);

/* Sleeps ms milliseconds (nanosleep; a signal may cut it short). */
void etcd_test_sleep_ms(long ms);

/* The cluster's endpoints into order[0..len) with the leader's first;
 * returns the leader's index in cl (its pid: cl->pids[i]). */
size_t etcd_test_leader_first(const struct etcd_test_cluster *cl, char *order,
			      size_t len);

/* A prefix read back: its keys, those created at or after a revision,
 * those written more than once (version other than 1). */
struct etcd_census {
	size_t keys;
	size_t late;
	size_t rewritten;
};

/* Reads every key under `prefix` (pages of 2,000: the whole prefix in one
 * answer would pass the client's response bound), counting in *out;
 * `after` 0 counts no key late. on_key, when not NULL, is called with
 * each key (arg passed through). */
struct etcd_census etcd_test_census(struct etcd_client *c, const char *prefix,
				    int64_t after,
				    void (*on_key)(const uint8_t *key, size_t len,
						   void *arg),
				    void *arg);

#endif
