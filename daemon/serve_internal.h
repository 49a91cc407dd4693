/* The per-pod loop of the daemon's workers: each worker polls the submit
 * rings of its share of producers (table index i where i % workers ==
 * worker), and for every slot handed over: decode and check it
 * (ingest/record.c), place and commit it (bind/resolver.c), answer it in
 * the slot and hand it back on the completion ring. Exactly one answer per
 * slot handed over: placed, unschedulable (kube-scheduler's message),
 * rejected (what was wrong with the slot), or, at shutdown, cancelled.
 * A pod that fits nowhere and may wait goes to the scheduling queue
 * (daemon/wait.c). Placing and answering are daemon/attempt.c's, which
 * both this intake and the queue's call down into; neither calls the
 * other back.
 *
 * No system call, lock or allocation per pod: clock_gettime(CLOCK_MONOTONIC)
 * is served by the vDSO.
 *
 * Threads: serve_poll() is the worker pool's callback (workers/pool.h), one
 * call at a time per worker index, on QSBR reader threads.
 */
#ifndef SHMSCHED_DAEMON_SERVE_INTERNAL_H
#define SHMSCHED_DAEMON_SERVE_INTERNAL_H

#include <stdint.h>

#include "base/base.h"
#include "bind/bind.h"
#include "ingest/ingest.h"
#include "shm/shm.h"
#include "workers/workers.h"
#include "daemon/attempt_internal.h" /* struct serve_stats */

struct serve;
struct serve_wait_config;

/* `engines[i]` is worker i's engine (all on one cluster); `stats` has
 * room for `workers`; every placement is recorded in `placements`; pods
 * that wait are kept as `wc` says (daemon/wait_internal.h). Returns NULL
 * with errno. */
struct serve *serve_create(struct producers *p, struct placements *placements,
			   const struct res_names *res, struct engine **engines,
			   struct serve_stats *stats, unsigned workers,
			   const struct serve_wait_config *wc);
void serve_destroy(struct serve *s);

struct persist;
/* Every placement's record also goes to the durable store `p` (sync
 * durability: answers wait for it). Before the pool starts. Returns 0 or
 * -ENOMEM. */
int serve_set_persist(struct serve *s, struct persist *p);

/* Pods are placed under the quotas of `q` (attempt_set_quota). Before the
 * pool starts. */
struct quota_charge;
void serve_set_quota(struct serve *s, struct quota_charge *q);
/* attempt_set_lifecycle. */
struct taint_evict;
void serve_set_lifecycle(struct serve *s, struct taint_evict *te);

/* attempt_set_quarantine (daemon/attempt_internal.h). */
struct quarantine;
/* With --etcd: the shard gate of every attempt (attempt_set_shard_gate).
 * 0 or -ENOMEM. */
struct shard_gate;
int serve_set_shard_gate(struct serve *s, struct shard_gate *g);
/* With --etcd-durability sync: placements committed to etcd before their
 * answers (attempt_set_etcd_sync). Before the workers start. */
struct etcd_sync;
void serve_set_etcd_sync(struct serve *s, struct etcd_sync *es);

int serve_set_quarantine(struct serve *s, struct quarantine *q, uint32_t pool_key,
			 const struct intern *strings);

/* From now on, answer every submitted pod SHMSCHED_CANCELLED instead of
 * placing it (shutdown after the drain deadline). Any thread. */
void serve_cancel_all(struct serve *s);

/* The service times of every pod so far (a pod's decode, placement,
 * commit and answer on its worker), summed over the workers: relaxed
 * reads, exact once the workers have stopped. Any thread. */
void serve_service_hist(const struct serve *s, uint64_t out[HIST_BUCKETS]);

/* The pool callback: returns the number of slots answered. */
unsigned serve_poll(void *arg, unsigned worker, void *scratch);

/* The pool's doorbells (workers/pool.h): a worker about to sleep marks
 * `asleep` in the regions of the producers it serves and sleeps on their
 * doorbells too, so a producer's submit wakes it (include/shmsched/wire.h
 * has the protocol). Its arg is the serve. */
extern struct pool_doorbells_ops serve_doorbells;

/* Answers every slot left in the submit rings, on the calling thread, once
 * the workers have stopped: what serve_poll would do, with the current
 * mode (placing, or cancelling after serve_cancel_all); then every waiting
 * pod, cancelled. Returns how many. */
unsigned serve_drain(struct serve *s);

struct wait_stats;
/* The waiting pods' figures (daemon/wait_internal.h). Any thread. */
void serve_wait_stats(const struct serve *s, struct wait_stats *out);

#endif
