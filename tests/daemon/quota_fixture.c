/* Quota helpers for tests/daemon/: see quota_fixture.h. */
#include "quota_fixture.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#include <cmocka.h>

#include "fixture.h"

struct quota_tree *quota_fixture_cohort(int64_t cohort_cpu_milli,
					const struct quota_fixture_queue *queues,
					unsigned n)
{
	struct quota_tree *t;
	char err[256] = "";
	assert_int_equal(quota_tree_new(&t), 0);
	int f = quota_flavor_add(t, "fa", err, sizeof(err));
	int cpu = quota_resource_add(t, "cpu", err, sizeof(err));
	int co = quota_cohort_add(t, "ml", NULL, QUOTA_WEIGHT_DEFAULT_MILLI, err,
				  sizeof(err));
	if (f < 0 || cpu < 0 || co < 0)
		fail_msg("tree: %s", err);
	if (cohort_cpu_milli > 0 &&
	    quota_set(t, co, f, cpu, cohort_cpu_milli, QUOTA_NO_LIMIT,
		      QUOTA_NO_LIMIT, err, sizeof(err)) < 0)
		fail_msg("cohort ml: %s", err);
	for (unsigned i = 0; i < n; i++) {
		const struct quota_fixture_queue *q = &queues[i];
		int64_t w = q->weight_milli > 0 ? q->weight_milli
						: QUOTA_WEIGHT_DEFAULT_MILLI;
		int cq = quota_cluster_queue_add(t, q->name, "ml", w, q->preemption,
						 err, sizeof(err));
		if (cq < 0 ||
		    quota_set(t, cq, f, cpu, q->cpu_milli, QUOTA_NO_LIMIT,
			      QUOTA_NO_LIMIT, err, sizeof(err)) < 0)
			fail_msg("ClusterQueue %s: %s", q->name, err);
		if (q->local_queue != NULL &&
		    quota_local_queue_add(t, "default", q->local_queue, q->name, err,
					  sizeof(err)) < 0)
			fail_msg("LocalQueue default/%s: %s", q->local_queue, err);
	}
	if (quota_seal(t, err, sizeof(err)) < 0)
		fail_msg("quota_seal: %s", err);
	return t;
}

uint32_t quota_fixture_template(struct shmsched_client *c,
				const struct quota_fixture_pod *p)
{
	char json[1024], cls[160] = "", sel[384] = "";
	if (p->priority_class != NULL)
		snprintf(cls, sizeof(cls), "\"priorityClassName\":\"%s\",",
			 p->priority_class);
	if (p->node_selector != NULL)
		snprintf(sel, sizeof(sel), "\"nodeSelector\":%s,", p->node_selector);
	snprintf(json, sizeof(json), "{\"kind\":\"Pod\",\"metadata\":{\"name\":"
		 "\"t\",\"namespace\":\"default\",\"labels\":{\"kueue.x-k8s.io/"
		 "queue-name\":\"%s\"}},\"spec\":{%s%s\"containers\":[{\"name\":"
		 "\"c\",\"resources\":{\"requests\":{\"cpu\":\"%s\"}}}]}}", p->queue,
		 cls, sel, p->cpu);
	return fixture_template(c, json);
}

int64_t quota_fixture_usage(const struct quota_tree *t, const char *cq)
{
	int q = quota_cluster_queue_find(t, cq);
	if (q < 0)
		fail_msg("no ClusterQueue %s", cq);
	return quota_usage(t, q, quota_flavor_find(t, "fa"),
			   quota_resource_find(t, "cpu"));
}
