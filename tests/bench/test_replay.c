/* The openb replay (bench/replay.h, bench/openb.h) on traces small enough
 * to work out by hand: the top-up stops where the protocol says, each pod
 * gets one attempt, devices decide what fits, and the unallocated-GPU
 * curve is what the arithmetic in each test's comment gives; bad CSV is
 * rejected with the line named.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "bench/openb.h"
#include "bench/replay.h"

/* Two nodes: node-a with 2 GPUs of model A, node-b with 1 GPU of model B:
 * 3,000 milli in all, so the top-up stops below 3,900 (130 %). */
static const char nodes_csv[] =
	"sn,cpu_milli,memory_mib,gpu,model\n"
	"node-a,32000,65536,2,A\n"
	"node-b,32000,65536,1,B\n";

static char dir[64];

/* |got - want| < 0.005, with both in the failure message. */
static void near(double got, double want)
{
	if (!(fabs(got - want) < 0.005))
		fail_msg("got %.4f, want %.4f", got, want);
}

static void write_file(const char *name, const char *text)
{
	char path[128];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/shmsched-replay-XXXXXX");
	if (mkdtemp(dir) == NULL)
		return -1;
	write_file("openb_node_list_gpu_node.csv", nodes_csv);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static void run_all_policies(const char *list, uint64_t want_pods,
			     uint64_t want_placed, const double *want, const int *loads,
			     unsigned n_loads)
{
	struct openb_trace t;
	char err[512];
	assert_int_equal(openb_load(dir, list, &t, err, sizeof(err)), 0);
	assert_int_equal(t.gpu_milli_total, 3000);
	/* Ours, and the paper's node choice: the outcomes below do not
	 * depend on which node takes a pod. */
	struct replay_opts opts[2] = {replay_opts_ours(), replay_opts_ours()};
	opts[1].paper_choice = true;
	opts[1].model_reservation = 0;
	for (unsigned k = 0; k < 2; k++)
	for (int p = 0; p < REPLAY_POLICIES; p++) {
		for (uint64_t seed = 42; seed < 45; seed++) {
			struct replay_run r;
			assert_int_equal(replay_run(&t, (enum replay_policy)p, &opts[k],
						    seed, &r, err, sizeof(err)), 0);
			assert_int_equal(r.pods, want_pods);
			assert_int_equal(r.placed, want_placed);
			for (unsigned i = 0; i < n_loads; i++) {
				if (isnan(want[i]))
					assert_true(isnan(r.unalloc[loads[i]]));
				else
					near(r.unalloc[loads[i]], want[i]);
			}
		}
	}
	openb_free(&t);
}

/* Three pods of 600 milli on one GPU each (1,800 = 60 %). The top-up adds
 * copies while the total stays within 3,900: 6 pods, 3,600 milli. Two
 * shares of 600 never fit one device, so the 3 GPUs take 3 pods, whatever
 * the policy and order; the other 3 fail. After each pod, arrived % and
 * allocated %: (20, 20) (40, 40) (60, 60) (80, 60) (100, 60) (120, 60).
 * Unallocated at 100 % = 100 - 60 = 40; at 20 % = 80; at 130 % no pod
 * arrived within 1 %: not a number. */
static void test_shares_one_per_device(void **state)
{
	(void)state;
	write_file("openb_pod_list_shares.csv",
		   "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos\n"
		   "p0,1000,1024,1,600,,LS\n"
		   "p1,1000,1024,1,600,,LS\n"
		   "p2,1000,1024,1,600,,LS\n");
	const int loads[] = {20, 60, 100, 120, 130};
	const double want[] = {80, 40, 40, 40, (double)NAN};
	run_all_policies("shares", 6, 3, want, loads, 5);
}

/* Whole GPUs of model B only: just node-b's one GPU can take them. Two in
 * the list (2,000); the top-up adds one more (3,000; a fourth would pass
 * 3,900). Arrived / allocated %: (33.3, 33.33) (66.7, 33.33) (100, 33.33):
 * unallocated at 100 % = 66.67. The multi-GPU columns' file (five columns,
 * no gpu_spec) reads too: see the next test. */
static void test_model_restricts(void **state)
{
	(void)state;
	write_file("openb_pod_list_modelb.csv",
		   "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos\n"
		   "p0,1000,1024,1,1000,B,LS\n"
		   "p1,1000,1024,1,1000,B,LS\n");
	const int loads[] = {33, 67, 100};
	const double want[] = {66.67, 66.67, 66.67};
	run_all_policies("openb_pod_list_modelb", 3, 1, want, loads, 3);
}

/* A 2-GPU pod fits node-a only, once; a CPU-only pod everywhere. List:
 * 2-GPU (2,000) + CPU-only (0). The top-up samples until the next 2-GPU
 * pod would pass 3,900: the arrivals hold exactly one more 2-GPU pod
 * (4,000 > 3,900 stops it) and any number of CPU-only pods, so arrived
 * GPU is 2,000: 66.7 %, allocated 66.67 % from the first 2-GPU pod on. */
static void test_multi_gpu_five_columns(void **state)
{
	(void)state;
	write_file("openb_pod_list_multi.csv",
		   "name,cpu_milli,memory_mib,num_gpu,gpu_milli\n"
		   "p0,1000,1024,2,1000\n"
		   "p1,1000,1024,0,0\n");
	struct openb_trace t;
	char err[512];
	assert_int_equal(openb_load(dir, "multi", &t, err, sizeof(err)), 0);
	struct replay_run r;
	assert_int_equal(replay_run(&t, REPLAY_FGD, NULL, 42, &r, err, sizeof(err)), 0);
	assert_true(r.pods >= 2);
	assert_int_equal(r.placed, r.pods); /* CPU pods fit; the 2-GPU pod too */
	assert_int_equal(r.gpu_milli_allocated, 2000);
	near(r.unalloc[67], 100.0 - 66.67);
	openb_free(&t);
}

/* The arrival order is the shuffled list, then samples: a permutation
 * first, for every seed. */
static void test_arrivals_start_with_a_permutation(void **state)
{
	(void)state;
	struct openb_trace t;
	char err[512];
	assert_int_equal(openb_load(dir, "shares", &t, err, sizeof(err)), 0);
	for (uint64_t seed = 0; seed < 20; seed++) {
		uint32_t *order;
		long n = replay_arrivals(&t, NULL, seed, &order);
		assert_int_equal(n, 6);
		unsigned seen = 0;
		for (int i = 0; i < 3; i++)
			seen |= 1u << order[i];
		assert_int_equal(seen, 7);
		free(order);
	}
	openb_free(&t);
}

/* The top-up's check. A list of one 2-GPU pod (2,000 of 3,000 milli);
 * the limit is 3,900. Ours checks the whole request: 2,000 + 2,000 passes
 * it, so the list alone arrives. The paper's tuneUpPods checks one
 * device's milli: 2,000 + 1,000 does not pass, so a copy arrives (4,000
 * in all); then 4,000 + 1,000 does. */
static void test_top_up_check(void **state)
{
	(void)state;
	write_file("openb_pod_list_twogpu.csv",
		   "name,cpu_milli,memory_mib,num_gpu,gpu_milli\n"
		   "p0,1000,1024,2,1000\n");
	struct openb_trace t;
	char err[512];
	assert_int_equal(openb_load(dir, "twogpu", &t, err, sizeof(err)), 0);
	struct replay_opts paper = replay_opts_ours();
	paper.paper_top_up = true;
	for (uint64_t seed = 42; seed < 45; seed++) {
		uint32_t *order;
		assert_int_equal(replay_arrivals(&t, NULL, seed, &order), 1);
		free(order);
		assert_int_equal(replay_arrivals(&t, &paper, seed, &order), 2);
		free(order);
	}
	openb_free(&t);
}

static void test_bad_csv_names_the_line(void **state)
{
	(void)state;
	static const struct {
		const char *text, *want;
	} cases[] = {
		{"name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,1000,1024,2,500\n",
		 ":2: num_gpu/gpu_milli"},
		{"name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,-1,1024,1,500\n",
		 ":2: cpu_milli"},
		{"name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,1000,1024,17,1000\n",
		 ":2: num_gpu"},
		{"name,cpu_milli,memory_mib,num_gpu\np0,1000,1024,1\n",
		 "no column \"gpu_milli\""},
		{"name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,1000\n",
		 ":2: line: too few fields"},
		{"name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,1x,1024,1,500\n",
		 ":2: cpu_milli"},
		{"", "empty file"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		write_file("openb_pod_list_bad.csv", cases[i].text);
		struct openb_trace t;
		char err[512] = "";
		assert_int_equal(openb_load(dir, "bad", &t, err, sizeof(err)), -EINVAL);
		if (strstr(err, cases[i].want) == NULL)
			fail_msg("case %zu: \"%s\" lacks \"%s\"", i, err, cases[i].want);
	}
	struct openb_trace t;
	char err[512];
	assert_true(openb_load(dir, "missing", &t, err, sizeof(err)) < 0);
	assert_non_null(strstr(err, "openb_pod_list_missing.csv"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shares_one_per_device),
		cmocka_unit_test(test_model_restricts),
		cmocka_unit_test(test_multi_gpu_five_columns),
		cmocka_unit_test(test_arrivals_start_with_a_permutation),
		cmocka_unit_test(test_top_up_check),
		cmocka_unit_test(test_bad_csv_names_the_line),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
