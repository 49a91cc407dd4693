/* Kueue's admission fair sharing: see admission_usage.h.
 *
 * Design: plain arithmetic on one LocalQueue's record, in doubles as
 * Kueue computes it (resource.MulByFloat, AsApproximateFloat64). The
 * time is the caller's (the daemon's injected clock), so tests give exact
 * instants. The units are folded once, into afs_config.scale, so that a
 * usage is one multiply-add per resource.
 */
#include "quota/admission_usage.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include "base/base.h"

double afs_alpha(uint64_t elapsed_ns, uint64_t half_life_ns)
{
	/* kueue admission_fair_sharing.go, calculateAlphaRate. */
	if (half_life_ns == 0)
		return 0.0;
	return 1.0 - pow(0.5, (double)elapsed_ns / (double)half_life_ns);
}

int afs_settings_check(const struct afs_settings *s, char *err, size_t err_len)
{
	/* kueue pkg/config/validation.go, validateAdmissionFairSharing. */
	if (s->sampling_ns == 0)
		return errmsg_rc(-EINVAL, err, err_len,
				 "admissionFairSharing.usageSamplingInterval: 0; "
				 "expected a duration greater than 0");
	if (s->n_weights < 0 || s->n_weights > AFS_MAX_WEIGHTS)
		return errmsg_rc(-EINVAL, err, err_len,
				 "admissionFairSharing.resourceWeights: %d "
				 "entries; expected at most %d", s->n_weights,
				 AFS_MAX_WEIGHTS);
	for (int i = 0; i < s->n_weights; i++) {
		double w = s->weight[i];
		if (!(w >= 0.0) || !isfinite(w))
			return errmsg_rc(-EINVAL, err, err_len,
					 "admissionFairSharing.resourceWeights[\"%s\"]: "
					 "%g; expected a finite number >= 0",
					 s->weight_name[i], w);
		for (int j = 0; j < i; j++)
			if (strcmp(s->weight_name[i], s->weight_name[j]) == 0)
				return errmsg_rc(-EINVAL, err, err_len,
						 "admissionFairSharing.resourceWeights"
						 "[\"%s\"]: given twice; expected each "
						 "resource once", s->weight_name[i]);
	}
	return 0;
}

void afs_config_resolve(struct afs_config *c, const struct afs_settings *s,
			const struct quota_tree *t)
{
	memset(c, 0, sizeof(*c));
	c->half_life_ns = s->half_life_ns;
	c->sampling_ns = s->sampling_ns;
	c->n_resources = quota_n_resources(t);
	for (int r = 0; r < c->n_resources; r++) {
		const char *name = quota_resource_name(t, r);
		double w = 1.0; /* CalculateUsage: "if !found { weight = 1 }" */
		for (int i = 0; i < s->n_weights; i++)
			if (strcmp(s->weight_name[i], name) == 0)
				w = s->weight[i];
		/* The tree counts cpu in millicores; Kueue's float is cores. */
		c->scale[r] = strcmp(name, "cpu") == 0 ? w / 1000.0 : w;
	}
}

bool afs_due(const struct afs_config *c, const struct afs_lq *lq, uint64_t now_ns)
{
	return lq->last_ns == 0 || now_ns < lq->last_ns ||
	       now_ns - lq->last_ns >= c->sampling_ns;
}

void afs_sample(const struct afs_config *c, struct afs_lq *lq, uint64_t now_ns)
{
	if (lq->last_ns == 0) {
		lq->last_ns = now_ns; /* a new entry: LastUpdate = now */
		if (c->half_life_ns != 0)
			return;
	}
	if (c->half_life_ns == 0) {
		/* reconcileConsumedUsage: "Reset AFS consumed resources". */
		memset(lq->consumed, 0, sizeof(lq->consumed));
		if (now_ns > lq->last_ns)
			lq->last_ns = now_ns;
		return;
	}
	/* Elapsed clamped at 0, the stamp kept monotonic (Kueue's
	 * "canonical note" in reconcileConsumedUsage). */
	uint64_t elapsed = now_ns > lq->last_ns ? now_ns - lq->last_ns : 0;
	double alpha = afs_alpha(elapsed, c->half_life_ns);
	for (int r = 0; r < c->n_resources; r++)
		lq->consumed[r] = lq->consumed[r] * (1.0 - alpha) +
				  (double)lq->live[r] * alpha;
	if (now_ns > lq->last_ns)
		lq->last_ns = now_ns;
}

void afs_admit(const struct afs_config *c, struct afs_lq *lq,
	       const int64_t *request)
{
	/* scheduler.go updateEntryPenalty -> CalculateEntryPenalty: the
	 * request x alpha(usageSamplingInterval, usageHalfLifeTime). */
	double alpha = afs_alpha(c->sampling_ns, c->half_life_ns);
	for (int r = 0; r < c->n_resources; r++) {
		int64_t v = request[r] < 0 ? 0 : request[r];
		lq->live[r] = lq->live[r] > QUOTA_SUM_MAX - v ? QUOTA_SUM_MAX
							       : lq->live[r] + v;
		lq->consumed[r] += (double)v * alpha;
	}
}

void afs_release(const struct afs_config *c, struct afs_lq *lq,
		 const int64_t *request)
{
	for (int r = 0; r < c->n_resources; r++) {
		int64_t v = request[r] < 0 ? 0 : request[r];
		lq->live[r] = lq->live[r] > v ? lq->live[r] - v : 0;
	}
}

double afs_usage(const struct afs_config *c, const struct afs_lq *lq,
		 int64_t weight_milli)
{
	/* CalculateUsage: "Avoid dividing by a non-positive weight". */
	if (weight_milli <= 0)
		return (double)INFINITY;
	double u = 0.0;
	for (int r = 0; r < c->n_resources; r++)
		u += c->scale[r] * lq->consumed[r];
	return u / ((double)weight_milli / 1000.0);
}

int afs_compare(double a, double b)
{
	/* cluster_queue.go: cmp.Compare(usageA, usageB), lower first. */
	return a < b ? -1 : (a > b ? 1 : 0);
}
