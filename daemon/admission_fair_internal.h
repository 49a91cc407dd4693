/* Admission fair sharing in the daemon (Kueue's KEP-4136; the arithmetic
 * is quota/admission_usage.h's): one ledger of every LocalQueue's decayed
 * usage for the tree in force.
 *
 * Who calls what:
 *   - a worker, once a pod under quota is placed (daemon/attempt.c, inside
 *     its gate): afsl_admit, with the pod's LocalQueue and charge (its
 *     live usage grows, and the entry penalty is added);
 *   - the free hook (qc_on_free, inside the hook's gate): afsl_release;
 *   - qc_recount at a resume: afsl_live (live usage, no penalty);
 *   - each worker's poll (daemon/wait.c): afsl_tick, which samples every
 *     LocalQueue once usageSamplingInterval passed on the ledger's clock
 *     (one compare when not due);
 *   - daemon/wait.c's fair-sharing pick: afsl_usage orders the pods of a
 *     ClusterQueue with admissionScope UsageBasedAdmissionFairSharing;
 *   - qc_replace, holding every gate: afsl_rebind carries each
 *     LocalQueue's record to the new tree by its namespace and name, and
 *     each resource by name.
 * LocalQueue indices are those of the tree in force (quota_local_queue_*):
 * every caller above runs inside a gate, so no index of an older tree
 * reaches the ledger.
 *
 *   - with a durable store, the saver (afsl_saver_start, its own
 *     thread): woken by each sample afsl_tick takes, it writes the
 *     records of the LocalQueues whose usage changed to the store in one
 *     write transaction (the whole table after a start or a rebind), so
 *     a daemon killed without a clean stop restarts from its last
 *     sample's usage, not from nothing (issue 37: "kept in the durable
 *     store so a restart does not reset fairness").
 *
 * Threads: one mutex guards the records (each call holds it for one
 * record, or for the whole table in afsl_tick, afsl_rebind and the
 * saver's encoding: every sampling interval, and at a swap). The mutex
 * is a leaf: nothing is taken while holding it (afsl_tick only signals
 * the saver's condition; the saver writes to the store after releasing
 * it). The cost to a worker: one pthread_cond_signal per interval.
 */
#ifndef SHMSCHED_DAEMON_ADMISSION_FAIR_INTERNAL_H
#define SHMSCHED_DAEMON_ADMISSION_FAIR_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "quota/quota.h"

struct afs_ledger;

/* For the sealed tree `t` (not owned; afsl_rebind names the next), with
 * `s` (checked by afs_settings_check) and the clock `clock_ns(arg)`
 * (monotonic ns; NULL: base/clock.h's now_ns). NULL with errno. */
struct afs_ledger *afsl_create(const struct afs_settings *s,
			       const struct quota_tree *t,
			       uint64_t (*clock_ns)(void *), void *clock_arg);
void afsl_destroy(struct afs_ledger *l);

/* LocalQueue `lq` (of the tree in force; out of range: nothing) admitted
 * a workload charging `charge` (the tree's resources). */
void afsl_admit(struct afs_ledger *l, int lq, const int64_t *charge);
/* The same, live usage only (a placement counted again at a resume). */
void afsl_live(struct afs_ledger *l, int lq, const int64_t *charge);
/* Its release. */
void afsl_release(struct afs_ledger *l, int lq, const int64_t *charge);

/* Samples every LocalQueue if the sampling interval passed since the
 * last (the first call stamps). */
void afsl_tick(struct afs_ledger *l);

/* LocalQueue `lq`'s usage (Kueue's CalculateUsage: consumed, weighted,
 * divided by the LocalQueue's weight); 0 for an index out of range. */
double afsl_usage(struct afs_ledger *l, int lq);

/* The tree `t` is now in force: records carried by names. Holding every
 * gate (qc_replace). On -ENOMEM the records start again from nothing. */
int afsl_rebind(struct afs_ledger *l, const struct quota_tree *t);

/* The durable store (bind/store.h, table afs): afsl_save writes every
 * LocalQueue's consumed usage by names, stamped with the wall clock
 * (a slow-path write: the daemon's clean stop calls it, after
 * afsl_saver_stop); afsl_load, after the
 * resumed placements were counted (qc_recount), reads them back into the
 * LocalQueues of the tree in force, each decayed for the time since it
 * was saved toward what it holds now (Kueue's first reconcile after a
 * restart decays by the time since lastUpdate), and counts in *skipped
 * those of LocalQueues no longer there. 0, or -errno with a message (a
 * damaged record: -EBADMSG). */
struct store;
int afsl_save(struct afs_ledger *l, struct store *st, char *err, size_t err_len);
int afsl_load(struct afs_ledger *l, struct store *st, uint64_t *loaded,
	      uint64_t *skipped, char *err, size_t err_len);

/* The saver: a thread that, after each sample (afsl_tick), writes to
 * `st` the records (as afsl_save's) of the LocalQueues whose consumed
 * usage changed since its last write, in one write transaction
 * (store_put_afs); its first write after the start, after a rebind or
 * after a failed write replaces the table (store_replace_afs). A failed
 * write is logged once (and its recovery), and tried again at the next
 * sample. Start after afsl_load; 0, or -errno with a message. Stop
 * before `st` closes: a write in progress finishes first; idempotent,
 * NULL: nothing. afsl_saves: the write transactions it made. */
int afsl_saver_start(struct afs_ledger *l, struct store *st, char *err,
		     size_t err_len);
void afsl_saver_stop(struct afs_ledger *l);
uint64_t afsl_saves(struct afs_ledger *l);

#endif
