/* The in-process baselines (bench/quality.h) on small synthetic clusters:
 * the reference run's counts add up and honour both bounds; the quality
 * run's sides fill the cluster and score as the engine's design says they
 * must (see test_quality_fills_and_agrees); bad input is an error with a
 * message, never a crash.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "bench/quality.h"
#include "bench/workload.h"

/* A file-like workload built by hand: the stream cycles over `order`. */
static char tmpl_small[] =
	"{\"kind\":\"Pod\",\"metadata\":{\"name\":\"small\"},\"spec\":{"
	"\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":"
	"{\"cpu\":\"500m\",\"memory\":\"1Gi\"}}}]}}";
static char tmpl_large[] =
	"{\"kind\":\"Pod\",\"metadata\":{\"name\":\"large\"},\"spec\":{"
	"\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":"
	"{\"cpu\":\"2\",\"memory\":\"6Gi\"}}}]}}";
/* Preferred zone affinity: NodeAffinity's score is normalised over the
 * candidates, so the sampled engine and the reference may differ here. */
static char tmpl_zone[] =
	"{\"kind\":\"Pod\",\"metadata\":{\"name\":\"zone\"},\"spec\":{"
	"\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":"
	"{\"cpu\":\"1\",\"memory\":\"2Gi\"}}}],"
	"\"affinity\":{\"nodeAffinity\":{"
	"\"preferredDuringSchedulingIgnoredDuringExecution\":[{\"weight\":10,"
	"\"preference\":{\"matchExpressions\":[{\"key\":"
	"\"topology.kubernetes.io/zone\",\"operator\":\"In\","
	"\"values\":[\"zone-a\"]}]}}]}}}}";
static char tmpl_bad[] = "{\"kind\":\"Pod\",\"spec\":{\"containers\":[{\"name\":"
	"\"c\",\"resources\":{\"requests\":{\"cpu\":\"12x\"}}}]}}";

static char *tmpl_json[] = {tmpl_small, tmpl_large, tmpl_zone};
static size_t tmpl_len[3];
static uint32_t order[] = {0, 0, 2, 1, 0, 2, 0, 1};

static struct workload hand_workload(void)
{
	for (int i = 0; i < 3; i++)
		tmpl_len[i] = strlen(tmpl_json[i]);
	return (struct workload){
		.seed = 1,
		.n_templates = 3,
		.template_json = tmpl_json,
		.template_len = tmpl_len,
		.order = order,
		.n_order = sizeof(order) / sizeof(order[0]),
	};
}

static struct baseline_config small_cluster(const struct workload *w)
{
	return (struct baseline_config){
		.nodes = 200, .running = 2000, .seed = 7, .w = w,
	};
}

static void test_reference_counts(void **state)
{
	(void)state;
	struct workload w = hand_workload();
	struct baseline_config cfg = small_cluster(&w);
	cfg.pods = 3000;
	struct reference_result r;
	char err[512] = "";
	assert_int_equal(reference_run(&cfg, &r, err, sizeof(err)), 0);
	assert_int_equal(r.pods, 3000);
	assert_int_equal(r.placed + r.unschedulable, r.pods);
	assert_true(r.placed > 0);
	assert_true(r.wall_s > 0);
	assert_true(r.pods_per_sec > 0);
}

/* Enough pods to fill 200 nodes: the cluster runs out and the rest are
 * unschedulable, still counted. */
static void test_reference_fills(void **state)
{
	(void)state;
	struct workload w = hand_workload();
	struct baseline_config cfg = small_cluster(&w);
	cfg.nodes = 20;
	cfg.running = 100;
	cfg.pods = 20000;
	struct reference_result r;
	char err[512] = "";
	assert_int_equal(reference_run(&cfg, &r, err, sizeof(err)), 0);
	assert_int_equal(r.pods, 20000);
	assert_true(r.unschedulable > 0);
	assert_int_equal(r.placed + r.unschedulable, r.pods);
}

static void test_reference_time_bound(void **state)
{
	(void)state;
	struct workload w = hand_workload();
	struct baseline_config cfg = small_cluster(&w);
	cfg.max_seconds = 0.2; /* pods 0: the clock alone bounds it */
	struct reference_result r;
	char err[512] = "";
	assert_int_equal(reference_run(&cfg, &r, err, sizeof(err)), 0);
	assert_true(r.pods > 0);
	assert_true(r.wall_s >= 0.2);
	assert_true(r.wall_s < 5); /* a check every 64 pods, each microseconds */
	assert_int_equal(r.placed + r.unschedulable, r.pods);
}

static void check_side(const struct quality_side *s, int32_t percentage)
{
	assert_int_equal(s->percentage, percentage);
	assert_true(s->full); /* pods 0: it ran until the first failure */
	assert_true(s->placed > 0);
	assert_int_equal(s->compared, s->placed);
	assert_true(s->same_score <= s->compared);
	assert_true(s->cpu_alloc_ratio > 0 && s->cpu_alloc_ratio <= 1);
	assert_true(s->mem_alloc_ratio > 0 && s->mem_alloc_ratio <= 1);
}

/* What the engine guarantees (workers/engine.h): for the same seed and
 * pod sequence number both paths visit nodes in the same order from the
 * same start and draw the same random numbers, so at percentage 100 the
 * fast path chooses the reference's node, and the reference side is the
 * scoring engine's own choice: both score the best, always. The default
 * percentage samples 100 of the 200 nodes (max(5, 50 - 200/125) % = 49 %,
 * at least 100), so its node is the best of a sample: often, not always,
 * the best total of all. */
static void test_quality_fills_and_agrees(void **state)
{
	(void)state;
	struct workload w = hand_workload();
	struct baseline_config cfg = small_cluster(&w);
	struct quality_result q;
	char err[512] = "";
	assert_int_equal(quality_run(&cfg, &q, err, sizeof(err)), 0);
	assert_int_equal(q.nodes, 200);
	check_side(&q.reference, 100);
	check_side(&q.engine_100, 100);
	check_side(&q.engine_default, 0);
	assert_int_equal(q.reference.same_score, q.reference.compared);
	assert_true(q.reference.same_score_pct == 100.0);
	assert_int_equal(q.engine_100.same_score, q.engine_100.compared);
	/* Same choices, same pods placed, same fill. */
	assert_int_equal(q.engine_100.placed, q.reference.placed);
	assert_true(q.engine_100.cpu_alloc_ratio == q.reference.cpu_alloc_ratio);
	assert_true(q.engine_default.same_score_pct > 0);
	printf("quality on 200 nodes: default %.1f %% (%llu placed), 100 %.1f %%, "
	       "reference %.1f %% (%llu placed), cpu %.3f mem %.3f\n",
	       q.engine_default.same_score_pct,
	       (unsigned long long)q.engine_default.placed,
	       q.engine_100.same_score_pct, q.reference.same_score_pct,
	       (unsigned long long)q.reference.placed, q.reference.cpu_alloc_ratio,
	       q.reference.mem_alloc_ratio);
}

/* The default mix (bench/workload.c), extras included, bounded by pods. */
static void test_quality_default_mix(void **state)
{
	(void)state;
	struct workload w;
	char err[512] = "";
	assert_int_equal(workload_default(&w, 3, err, sizeof(err)), 0);
	struct baseline_config cfg = small_cluster(&w);
	cfg.pods = 1500;
	struct quality_result q;
	int rc = quality_run(&cfg, &q, err, sizeof(err));
	if (rc != 0)
		fprintf(stderr, "quality_run: %s\n", err);
	assert_int_equal(rc, 0);
	assert_true(q.reference.placed > 0);
	assert_int_equal(q.reference.same_score, q.reference.compared);
	assert_int_equal(q.engine_100.same_score, q.engine_100.compared);
	assert_true(q.engine_default.compared > 0);
	struct reference_result r;
	cfg.pods = 1000;
	assert_int_equal(reference_run(&cfg, &r, err, sizeof(err)), 0);
	assert_int_equal(r.pods, 1000);
	workload_free(&w);
}

static void test_errors(void **state)
{
	(void)state;
	struct reference_result r;
	struct quality_result q;
	char err[512] = "";
	struct baseline_config cfg = small_cluster(NULL);
	cfg.pods = 10;
	assert_int_equal(reference_run(&cfg, &r, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "no workload"));
	assert_int_equal(quality_run(&cfg, &q, err, sizeof(err)), -EINVAL);

	struct workload w = hand_workload();
	cfg = small_cluster(&w);
	assert_int_equal(reference_run(&cfg, &r, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "no bound"));

	/* A template that is not a valid Pod: the decoder's message. */
	char *bad[] = {tmpl_small, tmpl_bad};
	size_t bad_len[] = {strlen(tmpl_small), strlen(tmpl_bad)};
	uint32_t bad_order[] = {0};
	struct workload wb = {.n_templates = 2, .template_json = bad,
			      .template_len = bad_len, .order = bad_order,
			      .n_order = 1};
	cfg = small_cluster(&wb);
	cfg.pods = 10;
	assert_int_equal(reference_run(&cfg, &r, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "workload template 1"));

	/* A stream naming a template that does not exist. */
	uint32_t far_order[] = {5};
	struct workload wf = hand_workload();
	wf.order = far_order;
	wf.n_order = 1;
	cfg = small_cluster(&wf);
	cfg.pods = 10;
	assert_int_equal(quality_run(&cfg, &q, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "workload pod 0"));

	/* A missing cluster file: the loader's error, passed on. */
	cfg = small_cluster(&w);
	cfg.pods = 10;
	cfg.cluster_path = "/nonexistent/cluster.json";
	assert_true(reference_run(&cfg, &r, err, sizeof(err)) < 0);
	assert_non_null(strstr(err, "/nonexistent/cluster.json"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reference_counts),
		cmocka_unit_test(test_reference_fills),
		cmocka_unit_test(test_reference_time_bound),
		cmocka_unit_test(test_quality_fills_and_agrees),
		cmocka_unit_test(test_quality_default_mix),
		cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
