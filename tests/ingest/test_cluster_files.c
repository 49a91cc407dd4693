/* unit.cluster_files: a cluster file as `kubectl get -o json` prints it
 * (examples/kubectl-cluster.json: a v1 List of Namespaces, Nodes, bound
 * Pods carrying podAntiAffinity like kubeadm's CoreDNS, PVCs, spread
 * constraints, schedulerName volcano, pod-level resources and unknown
 * fields, Services, ReplicaSets, a StatefulSet, and kinds shmsched does not
 * read) loads through both of cluster_load.h's paths: the daemon's (into a
 * cluster it made, with placement records) and shmsched place's (both
 * files' objects read first). The files are given as arguments. */
#define _LGPL_SOURCE 1
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <urcu/urcu-qsbr.h>

#include "ingest/ingest.h"
#include "shm/shm.h"

static const char *cluster_path, *pods_path;

static int64_t used_on(struct cluster *cl, struct intern *strings, const char *node,
		       int r)
{
	uint32_t id;
	assert_true(intern_find(strings, node, strlen(node), &id));
	int64_t slot = cluster_slot_of(cl, id);
	assert_true(slot >= 0);
	return ledger_node(cluster_ledger(cl), (uint32_t)slot)->used[r];
}

static void check_loaded(struct cluster *cl, struct intern *strings,
			 const struct cluster_load_stats *st)
{
	assert_int_equal(st->nodes, 7);
	/* 24 Pods: 22 bound and running, the Succeeded job pod and the gated
	 * pending one skipped. */
	assert_int_equal(st->running_pods, 22);
	assert_int_equal(st->finished_pods, 1);
	assert_int_equal(st->pending_pods, 1);
	assert_int_equal(st->orphan_pods, 0);
	/* Deployment 3, DaemonSet 1, ConfigMap 2, PersistentVolumeClaim 1,
	 * Event 4, EndpointSlice 1; the PriorityClass is read (issue 16). */
	assert_int_equal(st->skipped.total, 12);
	assert_int_equal(st->skipped.n_kinds, 6);
	for (unsigned k = 0; k < st->skipped.n_kinds; k++)
		assert_string_not_equal(st->skipped.kinds[k].kind, "PriorityClass");
	for (unsigned k = 0; k < st->skipped.n_kinds; k++)
		if (strcmp(st->skipped.kinds[k].kind, "Event") == 0)
			assert_int_equal(st->skipped.kinds[k].count, 4);
	/* worker-3: a web pod (500m) and the etl pod, whose pod-level request
	 * (2 cpu) counts, not its containers' (none); kube-proxy asks none. */
	assert_int_equal(used_on(cl, strings, "worker-3", RES_CPU), 2500);
	assert_int_equal(used_on(cl, strings, "worker-3", RES_PODS), 3);
	/* worker-4: db-0 with its PVC (1 cpu); the Succeeded pod is not. */
	assert_int_equal(used_on(cl, strings, "worker-4", RES_CPU), 1000);
	/* gpu-1: the volcano pod counts like any other. */
	assert_int_equal(used_on(cl, strings, "gpu-1", RES_CPU), 8000);
	/* CoreDNS, db-0 and the volcano pod carry pod (anti-)affinity terms. */
	assert_true(ledger_term_pods(cluster_ledger(cl)) >= 4);
	/* The GPU node keeps its 80 Node Feature Discovery and GPU operator
	 * labels (more than the 64 a node once held). */
	uint32_t id;
	assert_true(intern_find(strings, "gpu-1", 5, &id));
	const struct snapshot *snap = cluster_snapshot(cl);
	assert_int_equal(snap->nodes[cluster_slot_of(cl, id)].n_labels, 80);
}

/* The daemon's path: shmschedd --cluster. */
static void test_into_with_records(void **state)
{
	(void)state;
	struct intern *strings = intern_create();
	struct res_names res;
	res_names_init(&res);
	struct cluster *cl = cluster_create(strings, 16);
	struct placements *records = placements_create(64);
	assert_non_null(cl);
	assert_non_null(records);
	struct cluster_load_stats st;
	char err[512];
	int rc = cluster_load_file_into(cluster_path, strings, &res, cl, records, &st,
					err, sizeof(err));
	if (rc != 0)
		fail_msg("%s", err);
	check_loaded(cl, strings, &st);
	assert_int_equal(placements_high_water(records), 22);
	placements_destroy(records);
	cluster_destroy(cl);
	intern_destroy(strings);
}

/* shmsched place's path: both files' objects first, then the cluster. */
static void test_with_both_files_objects(void **state)
{
	(void)state;
	struct intern *strings = intern_create();
	struct res_names res;
	res_names_init(&res);
	struct k8s_objects *objects = k8s_objects_create();
	assert_non_null(objects);
	struct k8s_ctx ctx = {.strings = strings, .res = &res, .objects = objects};
	char err[512];
	assert_int_equal(k8s_objects_read_file(cluster_path, &ctx, err, sizeof(err)), 0);
	assert_int_equal(k8s_objects_read_file(pods_path, &ctx, err, sizeof(err)), 0);
	struct k8s_objects_counts c;
	k8s_objects_counts(objects, &c);
	assert_int_equal(c.namespaces, 5);
	assert_int_equal(c.services, 4);    /* "kubernetes" has no selector */
	assert_int_equal(c.controllers, 5); /* four ReplicaSets, a StatefulSet */
	struct cluster *cl;
	struct cluster_load_stats st;
	int rc = cluster_load_file_objects(cluster_path, strings, &res, objects, 0, &cl,
					   &st, err, sizeof(err));
	if (rc != 0)
		fail_msg("%s", err);
	check_loaded(cl, strings, &st);
	cluster_destroy(cl);
	k8s_objects_destroy(objects);
	intern_destroy(strings);
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: %s CLUSTER_JSON PODS_JSON\n", argv[0]);
		return 2;
	}
	cluster_path = argv[1];
	pods_path = argv[2];
	urcu_qsbr_register_thread();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_into_with_records),
		cmocka_unit_test(test_with_both_files_objects),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	urcu_qsbr_unregister_thread();
	return rc;
}
