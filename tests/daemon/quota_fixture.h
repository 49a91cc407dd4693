/* Quota helpers for tests/daemon/ (beside fixture.h): the quota trees the
 * quota tests start the daemon over (one cohort "ml" of ClusterQueues,
 * one flavor "fa", one resource "cpu", LocalQueues in namespace default),
 * a template of a pod under a LocalQueue (with a PriorityClass or a
 * nodeSelector), and a ClusterQueue's cpu usage. A failure fails the
 * running cmocka test with a message naming what was asked. Linked into
 * the library daemon_fixture (tests/daemon/meson.build). */
#ifndef SHMSCHED_TESTS_DAEMON_QUOTA_FIXTURE_H
#define SHMSCHED_TESTS_DAEMON_QUOTA_FIXTURE_H

#include <stdint.h>

#include "quota/quota.h"
#include "shmsched/client.h"

/* One ClusterQueue of the cohort "ml". */
struct quota_fixture_queue {
	const char *name;        /* "team-a" */
	const char *local_queue; /* its LocalQueue default/<local_queue>; NULL: none */
	int64_t cpu_milli;       /* nominalQuota of cpu in flavor "fa" (0: set, none) */
	int64_t weight_milli;    /* fairSharing.weight; 0: Kueue's default, 1 */
	const struct quota_preemption *preemption; /* NULL: Kueue's defaults (Never) */
};

/* A sealed tree: flavor "fa", resource "cpu", cohort "ml" (with
 * `cohort_cpu_milli` of cpu of its own when > 0; none otherwise), and
 * queues[0..n) in it, in that order, each with its cpu nominalQuota and
 * no borrowingLimit or lendingLimit, and its LocalQueue. */
struct quota_tree *quota_fixture_cohort(int64_t cohort_cpu_milli,
					const struct quota_fixture_queue *queues,
					unsigned n);

/* A pod "t" of namespace default under LocalQueue `queue` (the label
 * kueue.x-k8s.io/queue-name), one container requesting `cpu`; with
 * spec.priorityClassName `priority_class` and spec.nodeSelector
 * `node_selector` (a JSON object) when not NULL. */
struct quota_fixture_pod {
	const char *queue;
	const char *cpu;
	const char *priority_class;
	const char *node_selector;
};

/* Registers p's template on `c` (fixture_template). Returns its id. */
uint32_t quota_fixture_template(struct shmsched_client *c,
				const struct quota_fixture_pod *p);

/* ClusterQueue `cq`'s usage of cpu in flavor "fa" (a quota_fixture_cohort
 * tree). */
int64_t quota_fixture_usage(const struct quota_tree *t, const char *cq);

#endif
