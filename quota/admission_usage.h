/* Kueue's admission fair sharing (KEP-4136, kueue
 * pkg/util/admissionfairsharing/admission_fair_sharing.go): per LocalQueue,
 * the resources it consumed over time as a decayed average with a
 * half-life, and the order it gives the workloads waiting in one
 * ClusterQueue: the LocalQueue with the lower usage / weight first.
 *
 * Per LocalQueue (struct afs_lq):
 *   - live: what its admitted workloads hold now (charged at admission,
 *     given back at release);
 *   - consumed: Kueue's status.fairSharing.admissionFairSharingStatus
 *     .consumedResources. At each sample, elapsed seconds after the last,
 *       alpha = 1 - 0.5^(elapsed / usageHalfLifeTime)   (calculateAlphaRate)
 *       consumed = consumed x (1 - alpha) + live x alpha (CalculateDecayedConsumed)
 *     and with usageHalfLifeTime 0 consumed is reset to nothing
 *     (localqueue_controller.go, reconcileConsumedUsage);
 *   - the entry penalty: a workload admitted adds its request x
 *     alpha(usageSamplingInterval) to consumed at once
 *     (CalculateEntryPenalty; Kueue keeps it pending until the workload's
 *     admission is observed, then folds it into consumedResources,
 *     workload_controller.go updateAfsConsumedUsage: here it is folded at
 *     admission, since the daemon observes its own admissions).
 * The usage that orders (CalculateUsage): the sum over resources of
 * resourceWeights[r] (1 when absent) x consumed[r], divided by the
 * LocalQueue's spec.fairSharing.weight; +infinity for a weight of 0.
 * Quantities are as Kueue's AsApproximateFloat64 gives them: cpu in
 * cores, everything else in units (the tree counts cpu in millicores:
 * afs_config_resolve folds the 1/1000 into cpu's weight).
 *
 * Pure: no clock (the caller gives `now`), no allocation, no lock; a
 * struct afs_lq is its caller's to guard.
 */
#ifndef SHMSCHED_QUOTA_ADMISSION_USAGE_H
#define SHMSCHED_QUOTA_ADMISSION_USAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "quota/quota.h"

/* Kueue's default usageSamplingInterval: 5 minutes
 * (apis/config/v1beta2/configuration_types.go, AdmissionFairSharing). */
#define AFS_SAMPLING_DEFAULT_NS (UINT64_C(300) * 1000000000u)
/* resourceWeights: at most one per resource the tree can name. */
#define AFS_MAX_WEIGHTS QUOTA_MAX_RESOURCES

/* Kueue's Configuration .admissionFairSharing, as read (names). */
struct afs_settings {
	uint64_t half_life_ns;  /* usageHalfLifeTime; 0: usage reset at each sample */
	uint64_t sampling_ns;   /* usageSamplingInterval; > 0 */
	int n_weights;          /* resourceWeights */
	char weight_name[AFS_MAX_WEIGHTS][QUOTA_NAME_MAX + 1];
	double weight[AFS_MAX_WEIGHTS];
};

/* The settings resolved against one tree's resources. */
struct afs_config {
	uint64_t half_life_ns;
	uint64_t sampling_ns;
	int n_resources;
	/* Per tree resource: resourceWeights (1 when absent) x its unit in
	 * Kueue's float (cpu: 1/1000, millicores to cores). */
	double scale[QUOTA_MAX_RESOURCES];
};

/* One LocalQueue's admission usage. Zero it to start. */
struct afs_lq {
	double consumed[QUOTA_MAX_RESOURCES]; /* in the tree's units */
	int64_t live[QUOTA_MAX_RESOURCES];
	uint64_t last_ns;                     /* the last sample; 0: none yet */
};

/* Kueue's calculateAlphaRate: 1 - 0.5^(elapsed / half_life); 0 for a
 * half-life of 0. */
double afs_alpha(uint64_t elapsed_ns, uint64_t half_life_ns);

/* Kueue's validateAdmissionFairSharing: usageSamplingInterval > 0, each
 * resourceWeights value >= 0 (and finite), no resource twice. 0, or
 * -EINVAL with a message naming the field, the value and what was
 * expected. */
int afs_settings_check(const struct afs_settings *s, char *err, size_t err_len);

/* `s` for the sealed tree `t`: a weight for a resource the tree does not
 * name is kept by no resource (Kueue: a map lookup that never hits). */
void afs_config_resolve(struct afs_config *c, const struct afs_settings *s,
			const struct quota_tree *t);

/* Whether a sample is due at `now` (none yet, or usageSamplingInterval
 * since the last). */
bool afs_due(const struct afs_config *c, const struct afs_lq *lq, uint64_t now_ns);

/* One sample at `now`: consumed decayed toward live (above). The first
 * sample only stamps the time (Kueue's new entry: elapsed 0). A `now`
 * before the last sample counts as no time (Kueue clamps elapsed at 0
 * and keeps the stamp monotonic). */
void afs_sample(const struct afs_config *c, struct afs_lq *lq, uint64_t now_ns);

/* A workload of this LocalQueue admitted with `request` (the tree's
 * resources): live grows, and consumed takes the entry penalty. */
void afs_admit(const struct afs_config *c, struct afs_lq *lq,
	       const int64_t *request);

/* Its release: live shrinks (never below 0). */
void afs_release(const struct afs_config *c, struct afs_lq *lq,
		 const int64_t *request);

/* Kueue's CalculateUsage with the LocalQueue's weight in thousandths:
 * +infinity for a weight <= 0. */
double afs_usage(const struct afs_config *c, const struct afs_lq *lq,
		 int64_t weight_milli);

/* Kueue's order of two waiting workloads of one ClusterQueue with
 * admission fair sharing (pkg/cache/queue/cluster_queue.go: cmp.Compare
 * of the two LocalQueues' usage, then the base order): < 0 when usage a
 * goes first, 0 when the base order decides. */
int afs_compare(double a, double b);

#endif
