/* unit.budgets: issue 41's budgets per producer identity, against the real
 * daemon in process (its producers connect from this process):
 * - the string table: a producer identity whose templates would add more
 *   than --strings-per-identity to the table is refused with EDQUOT, the
 *   message naming the budget, the identity (uid, name), what it holds and
 *   what it asked; nothing of the refused template stays in the table;
 *   another identity still registers; the charge is given back when the
 *   identity's connections go, so it may register again;
 * - compiled templates: past --template-bytes-per-identity a template is
 *   registered uncompiled (and its pods still placed); what was charged is
 *   given back (freed) when the producer goes;
 * - the workers' classes compiled ahead for a gone producer's templates
 *   are freed after 30 s unused (30 s of the engines' clock, which the
 *   test steps: daemon_config.engine_clock_ns);
 * - identities: a uid registering 70 names one after another (each gone,
 *   holding no placement) keeps being accepted (before: the 65th was
 *   refused with EBUSY for good); a name holding a placement keeps its
 *   identity and may release it later.
 * Each assertion marked "old:" failed on the code before the budgets. */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/base.h"
#include "daemon/daemon.h"
#include "fixture.h"
#include "shmsched/client.h"
#include "workers/workers.h"

static struct fixture_dir fx;

/* The workers' engines' clock: the real one plus a step the test makes
 * (0 until then), and how many reads have seen the step. */
static uint64_t clock_step_ns;
static uint64_t clock_stepped_reads;

static uint64_t stepped_clock(void)
{
	/* acquire: pairs with the test's release store of the step. */
	uint64_t step = __atomic_load_n(&clock_step_ns, __ATOMIC_ACQUIRE);
	/* release: pairs with the test's acquire load of the count. */
	if (step != 0)
		__atomic_fetch_add(&clock_stepped_reads, 1, __ATOMIC_RELEASE);
	return now_ns() + step;
}

static struct daemon *start(uint64_t strings, uint64_t template_bytes)
{
	struct daemon_config cfg = {.socket_path = fx.sock, .synthetic_nodes = 64,
				    .seed = 1, .workers = 1, .slots = 64,
				    .strings_per_identity = strings,
				    .template_bytes_per_identity = template_bytes,
				    .engine_clock_ns = stepped_clock};
	return fixture_start(&cfg);
}

static void test_string_budget(void **state)
{
	(void)state;
	struct daemon *d = start(4096, 0);
	struct shmsched_client *hog = fixture_connect_as(fx.sock, "hog");
	char err[512], want[128];
	uint32_t tid;
	int i = 0, rc;
	while ((rc = fixture_template_n(hog, "hog", i, &tid, err,
					sizeof(err))) == 0 && i < 1000)
		i++;
	/* old: never refused (1,000 templates taken). */
	assert_int_equal(rc, -EDQUOT);
	print_message("refused after %d templates: %s\n", i, err);
	assert_true(i >= 10 && i < 40);
	snprintf(want, sizeof(want), "producer identity (uid %u, name \"hog\")",
		 (unsigned)getuid());
	assert_non_null(strstr(err, want));
	assert_non_null(strstr(err, "of its budget of 4096 (--strings-per-identity)"));
	assert_non_null(strstr(err, "its new strings take "));
	assert_non_null(strstr(err, " holds "));
	/* Nothing of the refused template stayed. */
	struct daemon_stats ds;
	daemon_get_stats(d, &ds);
	uint32_t count = ds.interned_strings;
	uint64_t charged = ds.strings_charged;
	assert_true(charged > 0 && charged <= 4096);
	assert_int_equal(fixture_template_n(hog, "hog", i, &tid, err, sizeof(err)),
			 -EDQUOT);
	daemon_get_stats(d, &ds);
	assert_int_equal(ds.interned_strings, count);
	/* A template of strings the table holds already costs nothing. */
	assert_int_equal(fixture_template_n(hog, "hog", 0, &tid, err, sizeof(err)), 0);

	/* Another identity has its own budget. */
	struct shmsched_client *other = fixture_connect_as(fx.sock, "other");
	assert_int_equal(fixture_template_n(other, "other", 0, &tid, err,
					    sizeof(err)), 0);

	/* Gone: the charge is given back, and it registers again. */
	fixture_leave(d, hog);
	daemon_get_stats(d, &ds);
	assert_true(ds.strings_charged < charged);
	hog = fixture_connect_as(fx.sock, "hog");
	assert_int_equal(fixture_template_n(hog, "again", 0, &tid, err, sizeof(err)), 0);

	/* The admin is charged but never refused. */
	struct shmsched_client *admin = fixture_connect(fx.admin);
	for (int k = 0; k < 60; k++)
		if (fixture_template_n(admin, "admin", k, &tid, err, sizeof(err)) < 0)
			fail_msg("admin template %d: %s", k, err);
	shmsched_disconnect(admin);
	shmsched_disconnect(hog);
	shmsched_disconnect(other);
	daemon_stop(d, 1000, &ds);
}

static const char small_pod[] =
	"{\"kind\":\"Pod\",\"metadata\":{\"name\":\"t\"},\"spec\":{\"containers\":"
	"[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"10m\"}}}]}}";

static void test_template_bytes(void **state)
{
	(void)state;
	char err[512];
	uint32_t tid;
	struct daemon_stats ds;

	/* The default budget: compiled, charged, freed when it goes. */
	struct daemon *d = start(0, 0);
	struct shmsched_client *c = fixture_connect_as(fx.sock, "compiled");
	for (int i = 0; i < 4; i++)
		assert_int_equal(shmsched_register_template(c, small_pod,
							    strlen(small_pod), &tid,
							    err, sizeof(err)), 0);
	daemon_get_stats(d, &ds);
	assert_true(ds.template_bytes >= 4 * 64 * sizeof(uint32_t));
	assert_int_equal(ds.templates_uncompiled, 0);
	fixture_leave(d, c);
	daemon_get_stats(d, &ds);
	assert_int_equal(ds.template_bytes, 0);
	daemon_stop(d, 1000, &ds);

	/* A budget below one template's: each registered uncompiled, and
	 * its pods placed all the same. */
	d = start(0, 1);
	c = fixture_connect_as(fx.sock, "lazy");
	for (int i = 0; i < 4; i++)
		assert_int_equal(shmsched_register_template(c, small_pod,
							    strlen(small_pod), &tid,
							    err, sizeof(err)), 0);
	daemon_get_stats(d, &ds);
	/* old: compiled whatever they held. */
	assert_int_equal(ds.template_bytes, 0);
	assert_int_equal(ds.templates_uncompiled, 4);
	struct shmsched_result r;
	fixture_place_one(c, tid, 7, &r);
	assert_int_equal(r.status, SHMSCHED_PLACED);
	shmsched_disconnect(c);
	daemon_stop(d, 1000, &ds);
}

/* The workers' classes compiled ahead for a gone producer's templates,
 * which no pod used, are freed once ENGINE_PREPARED_TTL_NS (30 s) has
 * passed (old: they stayed until the class cache budget pushed them out:
 * no eviction at all here). */
static void test_prepared_classes_freed(void **state)
{
	(void)state;
	char err[512];
	uint32_t tid;
	struct daemon_stats ds;
	struct daemon *d = start(0, 0);
	struct shmsched_client *c = fixture_connect_as(fx.sock, "gone");
	for (int i = 0; i < 8; i++)
		assert_int_equal(fixture_template_n(c, "gone", i, &tid, err,
						    sizeof(err)), 0);
	/* A pod of another template, answered: its worker has looked at
	 * the producer since, so it was given the 8 to compile ahead. They
	 * differ from one another only in a label, which no inter-pod rule
	 * reads, so they are one class (workers/engine.c, fast_key); this
	 * pod asks for other cpu, so it is not of that class. */
	static const char other_pod[] =
		"{\"kind\":\"Pod\",\"metadata\":{\"name\":\"t\"},\"spec\":{\"containers\":"
		"[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"20m\"}}}]}}";
	assert_int_equal(shmsched_register_template(c, other_pod, strlen(other_pod),
						    &tid, err, sizeof(err)), 0);
	struct shmsched_result r;
	fixture_place_one(c, tid, 1, &r);
	assert_int_equal(r.status, SHMSCHED_PLACED);
	fixture_leave(d, c);
	/* Past the TTL on the engine's clock (it was a sleep(33) on the
	 * wall clock). The first read that sees the step is an idle call's
	 * sweep_prepared (nothing else reads it while no template comes),
	 * which then sweeps: the second read is a later idle call's, so the
	 * sweep has finished. */
	__atomic_store_n(&clock_stepped_reads, 0, __ATOMIC_RELAXED);
	/* release: pairs with stepped_clock's acquire load. */
	__atomic_store_n(&clock_step_ns, ENGINE_PREPARED_TTL_NS + ENGINE_SWEEP_NS,
			 __ATOMIC_RELEASE);
	time_t deadline = time(NULL) + 20;
	/* acquire: pairs with stepped_clock's release add. */
	while (__atomic_load_n(&clock_stepped_reads, __ATOMIC_ACQUIRE) < 2 &&
	       time(NULL) <= deadline)
		usleep(1000);
	assert_true(__atomic_load_n(&clock_stepped_reads, __ATOMIC_ACQUIRE) >= 2);
	daemon_stop(d, 1000, &ds);
	__atomic_store_n(&clock_step_ns, 0, __ATOMIC_RELAXED);
	print_message("class evictions: %llu\n",
		      (unsigned long long)ds.caches.class_evictions);
	assert_true(ds.caches.class_evictions >= 1);
}

static void test_identities_freed(void **state)
{
	(void)state;
	struct daemon *d = start(0, 0);
	char err[512], name[32];
	uint32_t tid;

	/* A name with a placement: it keeps its identity. */
	struct shmsched_client *keeper = fixture_connect_as(fx.sock, "keeper");
	assert_int_equal(shmsched_register_template(keeper, small_pod,
						    strlen(small_pod), &tid, err,
						    sizeof(err)), 0);
	struct shmsched_result r;
	fixture_place_one(keeper, tid, 1, &r);
	assert_int_equal(r.status, SHMSCHED_PLACED);
	fixture_leave(d, keeper);

	/* 70 names one after another (old: the 64th new one was refused,
	 * EBUSY, for good). */
	for (int i = 0; i < 70; i++) {
		snprintf(name, sizeof(name), "job-%d", i);
		struct shmsched_client *c;
		if (shmsched_connect_named(fx.sock, name, &c, err, sizeof(err)) < 0)
			fail_msg("name %d: %s", i, err);
		fixture_leave(d, c);
	}

	/* 63 more names, each leaving a placement: with the keeper's, 64
	 * identities of this uid that placements name. None is freed, so a
	 * new name is refused. */
	for (int i = 0; i < 63; i++) {
		snprintf(name, sizeof(name), "holder-%d", i);
		struct shmsched_client *c = fixture_connect_as(fx.sock, name);
		assert_int_equal(shmsched_register_template(c, small_pod,
							    strlen(small_pod), &tid,
							    err, sizeof(err)), 0);
		struct shmsched_result held;
		fixture_place_one(c, tid, 100 + (uint64_t)i, &held);
		assert_int_equal(held.status, SHMSCHED_PLACED);
		fixture_leave(d, c);
	}
	struct shmsched_client *c;
	assert_int_equal(shmsched_connect_named(fx.sock, "one-too-many", &c, err,
						sizeof(err)), -EBUSY);
	assert_non_null(strstr(err, "most names the daemon keeps for one uid"));

	/* The keeper's placement is still its own; released, and the keeper
	 * gone, its identity is freed for a new name. */
	keeper = fixture_connect_as(fx.sock, "keeper");
	assert_int_equal(shmsched_release(keeper, r.placement_id, err, sizeof(err)), 0);
	fixture_leave(d, keeper);
	c = fixture_connect_as(fx.sock, "one-more");
	shmsched_disconnect(c);
	struct daemon_stats ds;
	daemon_stop(d, 1000, &ds);
}

static int setup(void **state)
{
	(void)state;
	fixture_dir_make(&fx, "budgets", 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	fixture_dir_remove(&fx);
	return 0;
}

int main(void)
{
	setenv("SHMSCHED_LOG", "warn", 0);
	signal(SIGPIPE, SIG_IGN);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_string_budget, setup, teardown),
		cmocka_unit_test_setup_teardown(test_template_bytes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_identities_freed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_prepared_classes_freed, setup,
						teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
