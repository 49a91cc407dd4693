/* stress.preempt_chains: preemption from the node chains (shm/placements.h,
 * PN1, PN2) chooses what the walk of every placement chooses.
 *
 * The real daemon, in process, on random clusters (seeded: the same ones
 * each run): nodes of 2 to 8 cpu, filled with pods of random size (500m,
 * 1 or 2 cpu) and priority (0, 100, 500 or 2000, the last above every
 * preemptor: never a victim), placed, released at random so records are
 * reused on other nodes; then pods of priority 1000 of 1, 2 or 3 cpu that
 * fit nowhere wait and preempt, one at a time. With
 * producers_preempt_check() on, each preemption also makes the walk's
 * choice (ingest/producers_preempt.c) and counts a difference of node,
 * candidates or victims: none may differ, and every preemption must have
 * been checked. A fill pod is released after every other preemptor, so
 * that chains also lose records without gaining one, and each summary a
 * preemption keeps (chain_sum_of) is compared with its chain summed up
 * afresh (a difference counts as one too). One node in four is tainted
 * and half the preemptors are held to a zone, so the walk's static
 * filters and the chains' shortcut of them (preempt_plain_pass) meet
 * both kinds. DefaultPreemption's choice itself is unit.preempt's (kube
 * pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go,
 * SelectVictimsOnNode, and pkg/scheduler/framework/preemption/preemption.go,
 * DryRunPreemption's offset over every potential node: a random node,
 * whether it holds victims or not).
 *
 * Again with PodDisruptionBudgets (PB2): four budgets with a status
 * (disruptionsAllowed 0, 1, 2, 0: what kube-scheduler reads) over the
 * fill pods' four app labels; the chains take each victim's budgets as
 * they visit its node, the walk takes them all, and they must choose the
 * same (filterPodsWithPDBViolation's reprieve, default_preemption.go).
 * And how many placement records a preemption reads with a budget
 * present, on 2,000 nodes: those of the nodes the choice visits, not the
 * table (the walk read all 4,000 each time). */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/base.h"
#include "daemon/daemon.h"
#include "fixture.h"
#include "ingest/ingest.h"
#include "shmsched/client.h"

static struct fixture_dir fx;

static int setup(void **state)
{
	(void)state;
	fixture_dir_make(&fx, "pchain", 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	fixture_dir_remove(&fx);
	return 0;
}

static uint32_t next_rand(uint64_t *seed)
{
	*seed = *seed * UINT64_C(6364136223846793005) + 1442695040888963407u;
	return (uint32_t)(*seed >> 33);
}

static const char *const classes[] = {"p0", "p100", "p500", "p2000", "high"};
static const int class_values[] = {0, 100, 500, 2000, 1000};

/* The cluster file: `n` nodes of random cpu, labelled zone a or b, one in
 * four tainted (the fill pods tolerate it, the preemptors do not), and
 * the PriorityClasses; with `pdbs`, the four budgets over app a0..a3. */
static void write_cluster(unsigned n, uint64_t *seed, bool pdbs)
{
	FILE *f = fopen(fx.cluster, "w");
	assert_non_null(f);
	fputs("{\"kind\":\"List\",\"items\":[", f);
	for (unsigned i = 0; i < n; i++)
		fprintf(f, "%s{\"kind\":\"Node\",\"metadata\":{\"name\":\"n%u\","
			"\"labels\":{\"zone\":\"%s\"}},\"spec\":{%s},"
			"\"status\":{\"allocatable\":{\"cpu\":\"%u\",\"memory\":"
			"\"64Gi\",\"pods\":\"110\"}}}", i ? "," : "", i,
			i % 2 ? "a" : "b", i % 4 == 0 ? "\"taints\":[{\"key\":"
			"\"dedicated\",\"value\":\"x\",\"effect\":\"NoSchedule\"}]" : "",
			2 + next_rand(seed) % 7);
	for (unsigned c = 0; c < 5; c++)
		fprintf(f, ",{\"kind\":\"PriorityClass\",\"metadata\":{\"name\":"
			"\"%s\"},\"value\":%d}", classes[c], class_values[c]);
	for (unsigned b = 0; pdbs && b < 4; b++)
		fprintf(f, ",{\"apiVersion\":\"policy/v1\",\"kind\":"
			"\"PodDisruptionBudget\",\"metadata\":{\"name\":\"b%u\"},"
			"\"spec\":{\"minAvailable\":1,\"selector\":{\"matchLabels\":"
			"{\"app\":\"a%u\"}}},\"status\":{\"disruptionsAllowed\":%u}}",
			b, b, b % 3);
	fputs("]}", f);
	fclose(f);
}

/* `more`: further fields of the spec, each followed by a comma; `app`:
 * its app label (NULL: none). */
static uint32_t template_of(struct shmsched_client *c, const char *cls,
			    const char *cpu, const char *more, const char *app)
{
	char json[512], labels[64] = "";
	if (app != NULL)
		snprintf(labels, sizeof(labels), ",\"labels\":{\"app\":\"%s\"}", app);
	snprintf(json, sizeof(json), "{\"kind\":\"Pod\",\"metadata\":{\"name\":"
		 "\"t\"%s},\"spec\":{%s\"priorityClassName\":\"%s\",\"containers\":"
		 "[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"%s\"}}}]}}",
		 labels, more, cls, cpu);
	return fixture_template(c, json);
}

/* One cluster: returns the preemptions made. */
static uint64_t one_cluster(uint64_t seed, bool pdbs)
{
	enum { NODES = 60, FILL = 400, PREEMPTORS = 25 };
	write_cluster(NODES, &seed, pdbs);
	struct daemon_config cfg = fixture_config(&fx);
	cfg.slots = 1024;
	struct daemon *d = fixture_start(&cfg);
	struct shmsched_client *low = fixture_connect(fx.sock);
	struct shmsched_client *hi = fixture_connect(fx.sock);
	char err[512];
	static const char *const sizes[] = {"500m", "1", "2"};
	uint32_t fill_t[4][3];
	static const char *const apps[] = {"a0", "a1", "a2", "a3"};
	for (unsigned c = 0; c < 4; c++)
		for (unsigned z = 0; z < 3; z++)
			fill_t[c][z] = template_of(low, classes[c], sizes[z],
						   "\"tolerations\":[{\"key\":"
						   "\"dedicated\",\"operator\":"
						   "\"Exists\"}],", apps[(c + z) % 4]);
	static const char *const big[] = {"1", "2", "3"};
	/* Half of them held to zone a: the chains' shortcut of the static
	 * filters (preempt_plain_pass) is for the others only. */
	uint32_t high_t[6];
	for (unsigned z = 0; z < 3; z++) {
		high_t[z] = template_of(hi, "high", big[z], "", NULL);
		high_t[3 + z] = template_of(hi, "high", big[z],
					    "\"nodeSelector\":{\"zone\":\"a\"},", NULL);
	}
	/* Fill, releasing now and then: records reused on other nodes. */
	uint64_t placed[FILL];
	unsigned n_placed = 0;
	struct shmsched_result r;
	for (unsigned i = 0; i < FILL; i++) {
		uint32_t x = next_rand(&seed);
		struct shmsched_pod p = {.cookie = i + 1,
					 .template_id = fill_t[x % 4][x / 4 % 3]};
		assert_int_equal(shmsched_submit(low, &p, 1), 1);
		assert_int_equal(fixture_await(low, &r, 1, 5000), 1);
		if (r.status == SHMSCHED_PLACED)
			placed[n_placed++] = r.placement_id;
		if (n_placed > 0 && x % 5 == 0) {
			unsigned k = x / 20 % n_placed;
			assert_int_equal(shmsched_release(low, placed[k], err, sizeof(err)), 0);
			placed[k] = placed[--n_placed];
		}
	}
	/* Preemptors, one at a time, each until it is placed (most by
	 * preemption; a few fit a hole), or a while when nothing can make
	 * room (then it waits on, and the next one comes). */
	struct daemon_stats ds;
	for (unsigned i = 0; i < PREEMPTORS; i++) {
		struct shmsched_pod p = {.cookie = 100000 + i, .flags = SHMSCHED_WAIT,
					 .template_id = high_t[next_rand(&seed) % 6]};
		assert_int_equal(shmsched_submit(hi, &p, 1), 1);
		(void)fixture_await(hi, &r, 1, 1000);
		/* A release between preemptions: a chain that loses a record
		 * and gains none, which the summaries' key must see (PN3).
		 * The pod may be a victim already: then nothing happens. */
		if (i % 2 == 1 && n_placed > 0) {
			unsigned k = next_rand(&seed) % n_placed;
			(void)shmsched_release(low, placed[k], err, sizeof(err));
			placed[k] = placed[--n_placed];
		}
	}
	daemon_stop(d, 1000, &ds);
	shmsched_disconnect(low);
	shmsched_disconnect(hi);
	return ds.preemptions;
}

static void chains_choose_as_the_walk(bool pdbs)
{
	uint64_t checked0, mismatches0;
	producers_preempt_checked(&checked0, &mismatches0);
	producers_preempt_check(true);
	uint64_t asked = 0;
	for (uint64_t seed = 1; seed <= 3; seed++)
		asked += one_cluster(seed * 7919, pdbs);
	producers_preempt_check(false);
	uint64_t checked, mismatches;
	producers_preempt_checked(&checked, &mismatches);
	checked -= checked0;
	mismatches -= mismatches0;
	print_message("preempt_chains: %" PRIu64 " preemptions asked, %" PRIu64
		      " checked against the walk, %" PRIu64 " differed\n",
		      asked, checked, mismatches);
	assert_true(asked >= 40);
	assert_int_equal(checked, asked);
	assert_int_equal(mismatches, 0);
}

static void test_chains_choose_as_the_walk(void **state)
{
	(void)state;
	chains_choose_as_the_walk(false);
}

static void test_chains_choose_as_the_walk_pdbs(void **state)
{
	(void)state;
	chains_choose_as_the_walk(true);
}

/* 2,000 nodes of 2 cpu, each holding two fill pods of 1 cpu (app a1,
 * under budget b1, which allows 1,000 disruptions), then preemptors of 1
 * cpu: each reads the records of the nodes the choice visits (kube's
 * numCandidates, 200 here, and what the rows leave it), not the 4,000
 * placements. On the old code (the walk whenever a budget exists) every
 * preemption read the whole table. (Where every candidate would violate
 * a budget, DryRunPreemption itself visits every node: it stops only
 * once one candidate does not, pkg/scheduler/framework/preemption/
 * preemption.go; so does the choice here.) */
static void test_pdb_reads_candidates(void **state)
{
	(void)state;
	enum { NODES = 2000, PODS = 2 * NODES, PREEMPTORS = 8 };
	FILE *f = fopen(fx.cluster, "w");
	assert_non_null(f);
	fputs("{\"kind\":\"List\",\"items\":[", f);
	for (unsigned i = 0; i < NODES; i++)
		fprintf(f, "%s{\"kind\":\"Node\",\"metadata\":{\"name\":\"n%u\"},"
			"\"status\":{\"allocatable\":{\"cpu\":\"2\",\"memory\":"
			"\"64Gi\",\"pods\":\"110\"}}}", i ? "," : "", i);
	for (unsigned c = 0; c < 5; c++)
		fprintf(f, ",{\"kind\":\"PriorityClass\",\"metadata\":{\"name\":"
			"\"%s\"},\"value\":%d}", classes[c], class_values[c]);
	fputs(",{\"apiVersion\":\"policy/v1\",\"kind\":\"PodDisruptionBudget\","
	      "\"metadata\":{\"name\":\"b1\"},\"spec\":{\"minAvailable\":1,"
	      "\"selector\":{\"matchLabels\":{\"app\":\"a1\"}}},\"status\":"
	      "{\"disruptionsAllowed\":1000}}]}", f);
	fclose(f);
	struct daemon_config cfg = fixture_config(&fx);
	cfg.slots = 8192;
	struct daemon *d = fixture_start(&cfg);
	struct shmsched_client *low = fixture_connect(fx.sock);
	struct shmsched_client *hi = fixture_connect(fx.sock);
	uint32_t fill = template_of(low, "p0", "1", "", "a1");
	uint32_t high = template_of(hi, "high", "1", "", NULL);
	static struct shmsched_result r[PODS];
	unsigned placed = 0;
	for (unsigned i = 0; i < PODS; i += 100) {
		struct shmsched_pod p[100];
		for (unsigned k = 0; k < 100; k++)
			p[k] = (struct shmsched_pod){.cookie = i + k + 1, .template_id = fill};
		assert_int_equal(shmsched_submit(low, p, 100), 100);
		assert_int_equal(fixture_await(low, r, 100, 10000), 100);
		for (unsigned k = 0; k < 100; k++)
			placed += r[k].status == SHMSCHED_PLACED;
	}
	assert_int_equal(placed, PODS);
	uint64_t before = producers_preempt_records();
	struct daemon_stats ds;
	for (unsigned i = 0; i < PREEMPTORS; i++) {
		struct shmsched_pod p = {.cookie = 100000 + i, .flags = SHMSCHED_WAIT,
					 .template_id = high};
		assert_int_equal(shmsched_submit(hi, &p, 1), 1);
		assert_int_equal(fixture_await(hi, r, 1, 5000), 1);
		assert_int_equal(r[0].status, SHMSCHED_PLACED);
	}
	uint64_t read = producers_preempt_records() - before;
	daemon_stop(d, 1000, &ds);
	shmsched_disconnect(low);
	shmsched_disconnect(hi);
	print_message("preempt_chains: %u preemptions with a budget on %u nodes "
		      "(%u placements): %.1f records read each\n", PREEMPTORS, NODES,
		      PODS, (double)read / PREEMPTORS);
	assert_int_equal(ds.preemptions, PREEMPTORS);
	assert_true(read < (uint64_t)PREEMPTORS * PODS / 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_chains_choose_as_the_walk, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_chains_choose_as_the_walk_pdbs, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_pdb_reads_candidates, setup,
						teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
