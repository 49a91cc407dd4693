/* unit.pdb: PodDisruptionBudget objects as decoded (ingest/k8s_json.h) and
 * the budgets' table and matcher (ingest/pdb.c): which pods a budget
 * selects (namespace, selector; empty selects all, absent none), the
 * disruptions each allows in its three modes, the count-down on eviction,
 * a budget declared again, the full table, and more budgets in one choice
 * than it has bits. JSON is written with ' for " (load() swaps them). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ingest/ingest.h"
#include "shm/shm.h"

struct fx {
	struct intern *strings;
	struct res_names res;
	struct pdb_table pdbs;
	struct pdb_matcher m;
	uint32_t groups[8]; /* the pods' groups, in file order */
	unsigned n_pods;
	char err[512];
};

static int on_pod(void *arg, const struct pod_spec *p, const struct k8s_pod_meta *m,
		  char *err, size_t err_len)
{
	(void)m, (void)err, (void)err_len;
	struct fx *f = arg;
	assert_true(f->n_pods < 8);
	f->groups[f->n_pods++] = p->group;
	return 0;
}

static int on_pdb(void *arg, const struct k8s_pdb *b, char *err, size_t err_len)
{
	struct fx *f = arg;
	return pdb_table_put(&f->pdbs, f->strings, b, err, err_len);
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	if (f == NULL || (f->strings = intern_create()) == NULL)
		return -1;
	res_names_init(&f->res);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	intern_destroy(f->strings);
	free(f);
	return 0;
}

static int load(struct fx *f, const char *json)
{
	char buf[8192];
	size_t n = strlen(json);
	assert_true(n < sizeof(buf));
	for (size_t i = 0; i <= n; i++)
		buf[i] = json[i] == '\'' ? '"' : json[i];
	struct k8s_ctx kc = {.strings = f->strings, .res = &f->res};
	struct k8s_visitor v = {.arg = f, .pod = on_pod, .pdb = on_pdb};
	f->n_pods = 0;
	f->err[0] = '\0';
	return k8s_load_buffer("p.json", buf, n, &kc, &v, f->err, sizeof(f->err));
}

#define PDB(name, ns, spec, status) \
	"{'apiVersion':'policy/v1','kind':'PodDisruptionBudget','metadata':" \
	"{'name':'" name "','namespace':'" ns "'},'spec':{" spec "}" status "}"
#define POD(ns, labels) \
	"{'kind':'Pod','metadata':{'name':'p','namespace':'" ns "','labels':{" \
	labels "}},'spec':{'containers':[{'name':'c'}]}}"

/* Which pods each budget selects, and what each allows. */
static void test_selects_and_allows(void **state)
{
	struct fx *f = *state;
	assert_int_equal(load(f, PDB("db", "prod", "'minAvailable':2,'selector':"
				     "{'matchLabels':{'app':'db'}}",
				     ",'status':{'disruptionsAllowed':1}")
			      PDB("web", "prod", "'maxUnavailable':3,'selector':"
				  "{'matchExpressions':[{'key':'app','operator':'In',"
				  "'values':['web','api']}]}", "")
			      PDB("all", "batch", "'minAvailable':2,'selector':{}", "")
			      PDB("none", "prod", "'maxUnavailable':1", "")), 0);
	assert_int_equal(f->pdbs.n, 4);
	assert_int_equal(f->pdbs.e[0].mode, K8S_PDB_ALLOWED);
	assert_int_equal(f->pdbs.e[0].value, 1);
	assert_int_equal(f->pdbs.e[1].mode, K8S_PDB_MAX_UNAVAILABLE);
	assert_int_equal(f->pdbs.e[2].mode, K8S_PDB_MIN_AVAILABLE);
	assert_false(f->pdbs.e[3].selects);

	assert_int_equal(load(f, POD("prod", "'app':'db'") POD("prod", "'app':'api'")
			      POD("batch", "'app':'db'") POD("prod", "'app':'cache'")
			      POD("batch", "")), 0);
	uint32_t db = f->groups[0], api = f->groups[1], batch_db = f->groups[2];
	uint32_t cache = f->groups[3], batch = f->groups[4];
	struct pdb_matcher *m = &f->m;
	pdb_matcher_init(m, &f->pdbs, f->strings);
	assert_true(pdb_matcher_counts(m));
	/* Three batch pods placed: "all" (minAvailable 2) allows one. */
	pdb_matcher_count(m, batch_db);
	pdb_matcher_count(m, batch);
	pdb_matcher_count(m, batch);
	pdb_matcher_count(m, db);
	uint32_t m_db = pdb_matcher_mask(m, db);
	uint32_t m_api = pdb_matcher_mask(m, api);
	uint32_t m_bdb = pdb_matcher_mask(m, batch_db);
	assert_int_equal(pdb_matcher_mask(m, cache), 0);
	assert_int_equal(pdb_matcher_mask(m, 0), 0);
	assert_int_equal(pdb_matcher_mask(m, db), m_db); /* from the cache */
	assert_int_equal(__builtin_popcount(m_db), 1);
	assert_int_equal(__builtin_popcount(m_api), 1);
	assert_int_equal(__builtin_popcount(m_bdb), 1); /* "all", not "db" */
	assert_int_not_equal(m_db, m_api);
	assert_int_not_equal(m_db, m_bdb);
	uint32_t n;
	const int32_t *allowed = pdb_matcher_finish(m, &n);
	assert_int_equal(n, 3);
	assert_int_equal(allowed[__builtin_ctz(m_db)], 1);
	assert_int_equal(allowed[__builtin_ctz(m_api)], 3);
	assert_int_equal(allowed[__builtin_ctz(m_bdb)], 1);

	/* Evictions count down the status and maxUnavailable ones; a budget
	 * declared again starts over. */
	struct pod_group scratch;
	pdb_table_evicted(&f->pdbs, f->strings, &scratch, db);
	pdb_table_evicted(&f->pdbs, f->strings, &scratch, db);
	pdb_table_evicted(&f->pdbs, f->strings, &scratch, api);
	pdb_table_evicted(&f->pdbs, f->strings, &scratch, batch_db);
	pdb_matcher_init(m, &f->pdbs, f->strings);
	m_db = pdb_matcher_mask(m, db);
	/* PB2: each bit's disruptions as it is handed out, before any
	 * finish (the node chains' way: status and maxUnavailable budgets
	 * need no count). */
	const int32_t *early = pdb_matcher_allowed(m);
	assert_int_equal(early[__builtin_ctz(m_db)], 0);
	m_api = pdb_matcher_mask(m, api);
	assert_int_equal(early[__builtin_ctz(m_api)], 2);
	allowed = pdb_matcher_finish(m, &n);
	assert_int_equal(n, 2);
	assert_int_equal(allowed[__builtin_ctz(m_db)], 0); /* never below 0 */
	assert_int_equal(allowed[__builtin_ctz(m_api)], 2);
	assert_int_equal(f->pdbs.e[2].evicted, 0); /* minAvailable: counted live */
	assert_int_equal(load(f, PDB("db", "prod", "'minAvailable':2,'selector':"
				     "{'matchLabels':{'app':'db'}}",
				     ",'status':{'disruptionsAllowed':1}")), 0);
	assert_int_equal(f->pdbs.n, 4);
	assert_int_equal(f->pdbs.e[0].evicted, 0);
}

/* 40 budgets selecting one pod: 31 get bits, the rest share the last,
 * which allows nothing. */
static void test_more_budgets_than_bits(void **state)
{
	struct fx *f = *state;
	char json[256], err[256];
	for (unsigned i = 0; i < 40; i++) {
		snprintf(json, sizeof(json), PDB("b%u", "prod", "'maxUnavailable':5,"
						 "'selector':{}", ""), i);
		assert_int_equal(load(f, json), 0);
	}
	assert_int_equal(load(f, POD("prod", "'app':'x'")), 0);
	struct pdb_matcher *m = &f->m;
	pdb_matcher_init(m, &f->pdbs, f->strings);
	assert_false(pdb_matcher_counts(m));
	assert_int_equal(pdb_matcher_mask(m, f->groups[0]), UINT32_MAX);
	const int32_t *early = pdb_matcher_allowed(m); /* PB2: no finish */
	assert_int_equal(early[0], 5);
	assert_int_equal(early[PDB_CHOICE_MAX - 2], 5);
	assert_int_equal(early[PDB_CHOICE_MAX - 1], 0);
	uint32_t n;
	const int32_t *allowed = pdb_matcher_finish(m, &n);
	assert_int_equal(n, PDB_CHOICE_MAX);
	assert_int_equal(allowed[0], 5);
	assert_int_equal(allowed[PDB_CHOICE_MAX - 2], 5);
	assert_int_equal(allowed[PDB_CHOICE_MAX - 1], 0);
	/* The table itself is bounded. */
	struct k8s_pdb b = {.ns = 1, .mode = K8S_PDB_MAX_UNAVAILABLE, .value = 1};
	int rc = 0;
	for (uint32_t i = 0; rc == 0; i++) {
		assert_int_equal(intern_add_str(f->strings, json, &b.name), 0);
		snprintf(json, sizeof(json), "prod/x%u", i);
		rc = pdb_table_put(&f->pdbs, f->strings, &b, err, sizeof(err));
	}
	assert_int_equal(rc, -ENOSPC);
	assert_int_equal(f->pdbs.n, PDB_TABLE_MAX);
	assert_non_null(strstr(err, "the most kept"));
}

/* EW1 (ingest/pdb.c): one matcher for choice after choice, as the evictor
 * keeps it (struct producers' pdb_m), its caches cleared by their first
 * reader after each init, not by init. A group's mask and count cached
 * under one table are not read under the next one, an init over an empty
 * table between them included. Fails with the caches left as they were at
 * init (db's mask from table A read under table B: tried). */
static void test_matcher_reused(void **state)
{
	struct fx *f = *state;
	assert_int_equal(load(f, POD("prod", "'app':'db'") POD("prod", "'app':'web'")), 0);
	uint32_t db = f->groups[0], web = f->groups[1];
	assert_int_equal(load(f, PDB("db", "prod", "'minAvailable':0,'selector':"
				     "{'matchLabels':{'app':'db'}}", "")), 0);
	struct pdb_table *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
	struct pdb_table *none = calloc(1, sizeof(*none));
	assert_non_null(a);
	assert_non_null(b);
	assert_non_null(none);
	*a = f->pdbs;
	memset(&f->pdbs, 0, sizeof(f->pdbs));
	assert_int_equal(load(f, PDB("web", "prod", "'minAvailable':0,'selector':"
				     "{'matchLabels':{'app':'web'}}", "")), 0);
	*b = f->pdbs;
	struct pdb_matcher *m = &f->m;
	memset(m, 0xa5, sizeof(*m)); /* as malloc may hand it out */
	for (unsigned round = 0; round < 2; round++) {
		pdb_matcher_init(m, a, f->strings);
		assert_true(pdb_matcher_counts(m));
		pdb_matcher_count(m, db);
		pdb_matcher_count(m, db);
		assert_int_equal(pdb_matcher_mask(m, db), 1);
		assert_int_equal(pdb_matcher_mask(m, web), 0);
		uint32_t n;
		const int32_t *allowed = pdb_matcher_finish(m, &n);
		assert_int_equal(n, 1);
		assert_int_equal(allowed[0], 2); /* two db pods, minAvailable 0 */

		pdb_matcher_init(m, none, f->strings);
		assert_false(pdb_matcher_counts(m));
		pdb_matcher_count(m, db); /* no budget: counts nothing */
		assert_int_equal(pdb_matcher_mask(m, db), 0);

		pdb_matcher_init(m, b, f->strings);
		pdb_matcher_count(m, web);
		pdb_matcher_count(m, db); /* not web's: table A's count unread */
		assert_int_equal(pdb_matcher_mask(m, db), 0);
		assert_int_equal(pdb_matcher_mask(m, web), 1);
		allowed = pdb_matcher_finish(m, &n);
		assert_int_equal(n, 1);
		assert_int_equal(allowed[0], 1);
	}
	free(none);
	free(b);
	free(a);
}

/* Refusals, by path. */
static void test_refusals(void **state)
{
	struct fx *f = *state;
	struct {
		const char *json, *err;
	} bad[] = {
		{"{'kind':'PodDisruptionBudget','metadata':{'name':'x'}}",
		 "p.json: poddisruptionbudget default/x: spec: missing"},
		{"{'kind':'PodDisruptionBudget','metadata':{'name':'x'},'spec':{}}",
		 "spec: minAvailable or maxUnavailable (or status.disruptionsAllowed) "
		 "is needed"},
		{"{'kind':'PodDisruptionBudget','metadata':{'name':'x'},'spec':"
		 "{'minAvailable':'50%'}}",
		 "spec.minAvailable: a percentage needs the pods the controller "
		 "expects"},
		{"{'kind':'PodDisruptionBudget','metadata':{'name':'x'},'spec':"
		 "{'minAvailable':'150%'}}",
		 "spec.minAvailable: \"150%\": expected an integer or a percentage"},
		{"{'kind':'PodDisruptionBudget','metadata':{'name':'x'},'spec':"
		 "{'maxUnavailable':'x%'}}",
		 "spec.maxUnavailable: \"x%\": expected an integer or a percentage"},
		{"{'kind':'PodDisruptionBudget','metadata':{'name':'x'},'spec':"
		 "{'maxUnavailable':-1}}",
		 "spec.maxUnavailable: -1: expected an integer 0..2147483647"},
		{"{'kind':'PodDisruptionBudget','metadata':{'name':'x'},'spec':"
		 "{'minAvailable':1,'maxUnavailable':1}}",
		 "spec: minAvailable and maxUnavailable cannot both be set"},
		{"{'kind':'PodDisruptionBudget','metadata':{'name':'x'},'spec':"
		 "{'minAvailable':1},'status':{'disruptionsAllowed':'1'}}",
		 "status.disruptionsAllowed: expected an integer"},
		{"{'kind':'PodDisruptionBudget','metadata':{'name':'x'},'spec':"
		 "{'minAvailable':1,'selector':{'matchExpressions':[{'key':'a',"
		 "'operator':'Maybe'}]}}}",
		 "spec.selector.matchExpressions[0].operator"},
		/* policy/v1's two values only, spelled exactly. */
		{"{'kind':'PodDisruptionBudget','metadata':{'name':'x'},'spec':"
		 "{'minAvailable':1,'unhealthyPodEvictionPolicy':'alwaysallow'}}",
		 "spec.unhealthyPodEvictionPolicy: \"alwaysallow\": expected "
		 "\"IfHealthyBudget\" or \"AlwaysAllow\""},
		{"{'kind':'PodDisruptionBudget','metadata':{'name':'x'},'spec':"
		 "{'minAvailable':1,'unhealthyPodEvictionPolicy':1}}",
		 "spec.unhealthyPodEvictionPolicy: 1: expected"},
		{"{'kind':'PodDisruptionBudget','metadata':{'name':'x'},'spec':"
		 "{'minAvailable':1,'unhealthyPodEvictionPolicy':'AlwaysAllow '}}",
		 "spec.unhealthyPodEvictionPolicy: \"AlwaysAllow \": expected"},
	};
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(load(f, bad[i].json), -EINVAL);
		if (strstr(f->err, bad[i].err) == NULL)
			fail_msg("case %u: got \"%s\", expected \"%s\"", i, f->err,
				 bad[i].err);
	}
	/* A percentage with a status is fine: the status decides. */
	assert_int_equal(load(f, "{'kind':'PodDisruptionBudget','metadata':{'name':"
			      "'y'},'spec':{'minAvailable':'50%','selector':{}},"
			      "'status':{'disruptionsAllowed':2}}"), 0);
	assert_int_equal(f->pdbs.e[f->pdbs.n - 1].mode, K8S_PDB_ALLOWED);
	assert_int_equal(f->pdbs.e[f->pdbs.n - 1].value, 2);
	assert_int_equal(f->pdbs.e[f->pdbs.n - 1].unhealthy, K8S_PDB_IF_HEALTHY_BUDGET);
	/* spec.unhealthyPodEvictionPolicy kept for the drain's ladder; null
	 * and absent are IfHealthyBudget, the API's default. */
	static const struct {
		const char *value;
		uint8_t want;
	} ok[] = {{"'AlwaysAllow'", K8S_PDB_ALWAYS_ALLOW},
		  {"'IfHealthyBudget'", K8S_PDB_IF_HEALTHY_BUDGET},
		  {"null", K8S_PDB_IF_HEALTHY_BUDGET}};
	for (unsigned i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		char json[512];
		snprintf(json, sizeof(json), "{'kind':'PodDisruptionBudget','metadata':"
			 "{'name':'u%u'},'spec':{'maxUnavailable':0,'selector':{},"
			 "'unhealthyPodEvictionPolicy':%s}}", i, ok[i].value);
		assert_int_equal(load(f, json), 0);
		assert_int_equal(f->pdbs.e[f->pdbs.n - 1].unhealthy, ok[i].want);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_selects_and_allows, setup, teardown),
		cmocka_unit_test_setup_teardown(test_more_budgets_than_bits, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_matcher_reused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refusals, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
