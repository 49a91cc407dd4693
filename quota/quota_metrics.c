/* Kueue's quota metrics of a sealed tree, in the Prometheus text format
 * (version 0.0.4): quota_metrics_text() in quota/quota.h.
 *
 * Names, labels, types and units are Kueue's (kubernetes-sigs/kueue
 * pkg/metrics/metrics.go; the values as pkg/cache/scheduler/clusterqueue.go
 * reports them): gauges with the labels cohort, cluster_queue, flavor,
 * resource, in that order (Kueue's replica_role and custom labels are not
 * written: one daemon, no custom labels). A quantity is written as
 * Kueue's AsApproximateFloat64 gives it: cpu in cores (our millicores /
 * 1000, written exactly), every other resource in units; an absent
 * borrowingLimit or lendingLimit is +Inf; a weighted share that is
 * +infinity (weight 0, borrowing) is NaN, as Kueue writes it.
 *
 * Cost: one pass over the tree's nodes per family, each (flavor,
 * resource) entry of a ClusterQueue once: O(queues x flavors x
 * resources) lines, at most `max_queues` ClusterQueues (and as many
 * Cohorts) each; the values are relaxed loads (quota_usage): a figure of
 * the moment, not one snapshot, while charges run.
 */
#include "quota/quota.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void quota_text_put(struct quota_text *o, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	size_t room = o->used < o->len ? o->len - o->used : 0;
	int n = vsnprintf(room ? o->buf + o->used : NULL, room, fmt, ap);
	va_end(ap);
	if (n > 0)
		o->used += (size_t)n;
}

void quota_text_label(struct quota_text *o, const char *key, const char *v,
		      bool comma)
{
	quota_text_put(o, "%s%s=\"", comma ? "," : "", key);
	for (; *v; v++) {
		if (*v == '\\' || *v == '"')
			quota_text_put(o, "\\%c", *v);
		else if (*v == '\n')
			quota_text_put(o, "\\n");
		else
			quota_text_put(o, "%c", *v);
	}
	quota_text_put(o, "\"");
}

/* A quantity as Kueue writes it: cpu in cores, the rest in units. */
static void put_quantity(struct quota_text *o, const struct quota_tree *t, int r, int64_t v)
{
	if (strcmp(quota_resource_name(t, r), "cpu") != 0) {
		quota_text_put(o, "%" PRId64, v);
		return;
	}
	int64_t a = v < 0 ? -v : v;
	if (a % 1000 == 0)
		quota_text_put(o, "%s%" PRId64, v < 0 ? "-" : "", a / 1000);
	else
		quota_text_put(o, "%s%" PRId64 ".%03" PRId64, v < 0 ? "-" : "", a / 1000, a % 1000);
}

enum family { F_NOMINAL, F_BORROWING, F_LENDING, F_USAGE, F_RESERVATION, F_FAMILIES };

static const struct {
	const char *name, *help;
} families[F_FAMILIES] = {
	[F_NOMINAL] = {"kueue_cluster_queue_nominal_quota",
		       "Reports the cluster_queue's resource nominal quota within "
		       "all the flavors"},
	[F_BORROWING] = {"kueue_cluster_queue_borrowing_limit",
			 "Reports the cluster_queue's resource borrowing limit "
			 "within all the flavors. If borrowingLimit is unset, this "
			 "metric reports +Inf."},
	[F_LENDING] = {"kueue_cluster_queue_lending_limit",
		       "Reports the cluster_queue's resource lending limit within "
		       "all the flavors. If lendingLimit is unset, this metric "
		       "reports +Inf."},
	[F_USAGE] = {"kueue_cluster_queue_resource_usage",
		     "Reports the cluster_queue's total resource usage within all "
		     "the flavors"},
	/* Without admission checks a reservation is an admission: equal. */
	[F_RESERVATION] = {"kueue_cluster_queue_resource_reservation",
			   "Reports the cluster_queue's total resource reservation "
			   "within all the flavors"},
};

static const char *cohort_of(const struct quota_tree *t, int node)
{
	int p = quota_node_parent(t, node);
	return p >= 0 ? quota_node_name(t, p) : "";
}

static void put_family(struct quota_text *o, const struct quota_tree *t, enum family f,
		       unsigned max_queues)
{
	quota_text_put(o, "# HELP %s %s\n# TYPE %s gauge\n", families[f].name, families[f].help,
	    families[f].name);
	unsigned queues = 0, left = 0;
	for (int n = 0; n < quota_n_nodes(t); n++) {
		if (quota_node_is_cohort(t, n))
			continue;
		if (queues == max_queues) {
			left++;
			continue;
		}
		queues++;
		const int *order;
		int nf = quota_node_flavors(t, n, &order);
		for (int k = 0; k < nf; k++)
			for (int r = 0; r < quota_n_resources(t); r++) {
				int64_t nominal, borrowing, lending;
				if (!quota_entry(t, n, order[k], r, &nominal, &borrowing,
						 &lending))
					continue;
				quota_text_put(o, "%s{", families[f].name);
				quota_text_label(o, "cohort", cohort_of(t, n), false);
				quota_text_label(o, "cluster_queue", quota_node_name(t, n), true);
				quota_text_label(o, "flavor", quota_flavor_name(t, order[k]), true);
				quota_text_label(o, "resource", quota_resource_name(t, r), true);
				quota_text_put(o, "} ");
				int64_t v = f == F_NOMINAL     ? nominal
					    : f == F_BORROWING ? borrowing
					    : f == F_LENDING   ? lending
							       : quota_usage(t, n, order[k], r);
				if (v == QUOTA_NO_LIMIT && (f == F_BORROWING || f == F_LENDING))
					quota_text_put(o, "+Inf");
				else
					put_quantity(o, t, r, v);
				quota_text_put(o, "\n");
			}
	}
	if (left > 0)
		quota_text_put(o, "# %s: %u more ClusterQueue%s not shown (at most %u)\n",
		    families[f].name, left, left == 1 ? "" : "s", max_queues);
}

/* kueue_cluster_queue_weighted_share{cluster_queue, cohort} and
 * kueue_cohort_weighted_share{cohort}: the dominant resource share less
 * nothing requested, over the weight (PreciseWeightedShare). */
static void put_shares(struct quota_text *o, const struct quota_tree *t, bool cohorts,
		       unsigned max_nodes)
{
	const char *name = cohorts ? "kueue_cohort_weighted_share"
				   : "kueue_cluster_queue_weighted_share";
	quota_text_put(o, "# HELP %s Reports a value that representing the maximum of the "
	    "ratios of usage above nominal quota to the lendable resources in the "
	    "%s, among all the resources provided by the %s, and divided by the "
	    "weight.\n# TYPE %s gauge\n", name, cohorts ? "Cohort" : "cohort",
	    cohorts ? "Cohort" : "ClusterQueue", name);
	unsigned shown = 0, left = 0;
	for (int n = 0; n < quota_n_nodes(t); n++) {
		if (quota_node_is_cohort(t, n) != cohorts)
			continue;
		if (shown == max_nodes) {
			left++;
			continue;
		}
		shown++;
		struct quota_share s;
		if (quota_share(t, n, -1, NULL, &s) < 0)
			continue;
		double w = quota_share_weighted(&s);
		quota_text_put(o, "%s{", name);
		if (cohorts) {
			quota_text_label(o, "cohort", quota_node_name(t, n), false);
		} else {
			quota_text_label(o, "cluster_queue", quota_node_name(t, n), false);
			quota_text_label(o, "cohort", cohort_of(t, n), true);
		}
		if (isinf(w))
			quota_text_put(o, "} NaN\n");
		else
			quota_text_put(o, "} %.17g\n", w);
	}
	if (left > 0)
		quota_text_put(o, "# %s: %u more %s not shown (at most %u)\n", name, left,
		    cohorts ? (left == 1 ? "Cohort" : "Cohorts")
			    : (left == 1 ? "ClusterQueue" : "ClusterQueues"), max_nodes);
}

size_t quota_metrics_text(const struct quota_tree *t, unsigned max_queues,
			  char *buf, size_t len)
{
	struct quota_text o = {.buf = buf, .len = len};
	if (len > 0)
		buf[0] = '\0';
	for (int f = 0; f < F_FAMILIES; f++)
		put_family(&o, t, (enum family)f, max_queues);
	put_shares(&o, t, false, max_queues);
	put_shares(&o, t, true, max_queues);
	return o.used;
}
