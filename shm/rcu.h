/* liburcu QSBR as the tree uses it, behind one small API, so that
 * ThreadSanitizer is told what a grace period orders.
 *
 * TSan cannot see liburcu's grace periods (they synchronise through
 * liburcu's own counters, futex and membarrier), so without help it reports
 * every free after urcu_qsbr_synchronize_rcu() as a race with the readers'
 * earlier accesses. Under TSan these wrappers make each quiescent point (a
 * quiescent state, going offline, unregistering) a release of one token,
 * and the end of a grace period an acquire of it: the order RCU
 * guarantees. Elsewhere they are liburcu's calls and nothing more.
 *
 * Concurrency: as liburcu QSBR: readers are registered threads; a reader
 * must not keep a protected pointer across rcu_quiescent() or rcu_offline();
 * rcu_synchronize() must not be called by an online reader.
 */
#ifndef SHMSCHED_SHM_RCU_H
#define SHMSCHED_SHM_RCU_H

void rcu_register(void);   /* this thread becomes a reader, online */
void rcu_unregister(void); /* ... and stops being one */
void rcu_quiescent(void);  /* holds no protected pointer at this point */
void rcu_offline(void);    /* holds none until rcu_online() (sleeps, waits) */
void rcu_online(void);
void rcu_synchronize(void); /* every reader has passed a quiescent point */

#endif
