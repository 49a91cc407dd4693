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
 *   are freed after 30 s unused;
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

#include "daemon/daemon.h"
#include "shmsched/client.h"

static char dir[64], sock[128];

static struct daemon *start(uint64_t strings, uint64_t template_bytes)
{
	struct daemon_config cfg = {.socket_path = sock, .synthetic_nodes = 64,
				    .seed = 1, .workers = 1, .slots = 64,
				    .strings_per_identity = strings,
				    .template_bytes_per_identity = template_bytes};
	char err[512];
	struct daemon *d = daemon_start(&cfg, err, sizeof(err));
	if (d == NULL)
		fail_msg("daemon_start: %s", err);
	return d;
}

static struct shmsched_client *connect_as(const char *name)
{
	struct shmsched_client *c;
	char err[512];
	if (shmsched_connect_named(sock, name, &c, err, sizeof(err)) < 0)
		fail_msg("connect as \"%s\": %s", name, err);
	return c;
}

/* Disconnects `c` and waits until the daemon has seen it go. */
static void leave(struct daemon *d, struct shmsched_client *c)
{
	struct daemon_stats ds;
	daemon_get_stats(d, &ds);
	uint64_t gone = ds.producers_gone;
	shmsched_disconnect(c);
	time_t deadline = time(NULL) + 10;
	do {
		usleep(1000);
		daemon_get_stats(d, &ds);
	} while (ds.producers_gone == gone && time(NULL) <= deadline);
	assert_true(ds.producers_gone > gone);
}

/* A template with a label value of 60 bytes unique to (`tag`, `i`): its
 * new strings are about 60 bytes and an entry's share each. */
static int template_n(struct shmsched_client *c, const char *tag, int i,
		      uint32_t *tid, char *err, size_t err_len)
{
	char json[512], value[61];
	snprintf(value, sizeof(value), "%s-%d-%0*d", tag, i, 40, i);
	value[60] = '\0';
	snprintf(json, sizeof(json), "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"t\","
		 "\"labels\":{\"app\":\"%sz\"}},\"spec\":{\"containers\":[{\"name\":"
		 "\"c\",\"resources\":{\"requests\":{\"cpu\":\"10m\"}}}]}}", value);
	return shmsched_register_template(c, json, strlen(json), tid, err, err_len);
}

static void test_string_budget(void **state)
{
	(void)state;
	struct daemon *d = start(4096, 0);
	struct shmsched_client *hog = connect_as("hog");
	char err[512], want[128];
	uint32_t tid;
	int i = 0, rc;
	while ((rc = template_n(hog, "hog", i, &tid, err, sizeof(err))) == 0 && i < 1000)
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
	assert_int_equal(template_n(hog, "hog", i, &tid, err, sizeof(err)), -EDQUOT);
	daemon_get_stats(d, &ds);
	assert_int_equal(ds.interned_strings, count);
	/* A template of strings the table holds already costs nothing. */
	assert_int_equal(template_n(hog, "hog", 0, &tid, err, sizeof(err)), 0);

	/* Another identity has its own budget. */
	struct shmsched_client *other = connect_as("other");
	assert_int_equal(template_n(other, "other", 0, &tid, err, sizeof(err)), 0);

	/* Gone: the charge is given back, and it registers again. */
	leave(d, hog);
	daemon_get_stats(d, &ds);
	assert_true(ds.strings_charged < charged);
	hog = connect_as("hog");
	assert_int_equal(template_n(hog, "again", 0, &tid, err, sizeof(err)), 0);

	/* The admin is charged but never refused. */
	char admin_sock[160];
	snprintf(admin_sock, sizeof(admin_sock), "%s.admin", sock);
	struct shmsched_client *admin;
	if (shmsched_connect(admin_sock, &admin, err, sizeof(err)) < 0)
		fail_msg("connect admin: %s", err);
	for (int k = 0; k < 60; k++)
		if (template_n(admin, "admin", k, &tid, err, sizeof(err)) < 0)
			fail_msg("admin template %d: %s", k, err);
	shmsched_disconnect(admin);
	shmsched_disconnect(hog);
	shmsched_disconnect(other);
	daemon_stop(d, 1000, &ds);
}

static const char small_pod[] =
	"{\"kind\":\"Pod\",\"metadata\":{\"name\":\"t\"},\"spec\":{\"containers\":"
	"[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"10m\"}}}]}}";

static void place_one(struct shmsched_client *c, uint32_t tid, uint64_t cookie,
		      struct shmsched_result *out)
{
	struct shmsched_pod pod = {.cookie = cookie, .template_id = tid};
	assert_int_equal(shmsched_submit(c, &pod, 1), 1);
	time_t deadline = time(NULL) + 10;
	int got = 0;
	while (got == 0 && time(NULL) <= deadline) {
		got = shmsched_poll(c, out, 1);
		assert_true(got >= 0);
		if (got == 0)
			usleep(100);
	}
	assert_int_equal(got, 1);
	assert_int_equal(out->cookie, cookie);
}

static void test_template_bytes(void **state)
{
	(void)state;
	char err[512];
	uint32_t tid;
	struct daemon_stats ds;

	/* The default budget: compiled, charged, freed when it goes. */
	struct daemon *d = start(0, 0);
	struct shmsched_client *c = connect_as("compiled");
	for (int i = 0; i < 4; i++)
		assert_int_equal(shmsched_register_template(c, small_pod,
							    strlen(small_pod), &tid,
							    err, sizeof(err)), 0);
	daemon_get_stats(d, &ds);
	assert_true(ds.template_bytes >= 4 * 64 * sizeof(uint32_t));
	assert_int_equal(ds.templates_uncompiled, 0);
	leave(d, c);
	daemon_get_stats(d, &ds);
	assert_int_equal(ds.template_bytes, 0);
	daemon_stop(d, 1000, &ds);

	/* A budget below one template's: each registered uncompiled, and
	 * its pods placed all the same. */
	d = start(0, 1);
	c = connect_as("lazy");
	for (int i = 0; i < 4; i++)
		assert_int_equal(shmsched_register_template(c, small_pod,
							    strlen(small_pod), &tid,
							    err, sizeof(err)), 0);
	daemon_get_stats(d, &ds);
	/* old: compiled whatever they held. */
	assert_int_equal(ds.template_bytes, 0);
	assert_int_equal(ds.templates_uncompiled, 4);
	struct shmsched_result r;
	place_one(c, tid, 7, &r);
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
	struct shmsched_client *c = connect_as("gone");
	for (int i = 0; i < 8; i++)
		assert_int_equal(template_n(c, "gone", i, &tid, err, sizeof(err)), 0);
	/* A pod of another template, answered: its worker has looked at
	 * the producer since, so it was given the 8 to compile ahead. */
	assert_int_equal(shmsched_register_template(c, small_pod, strlen(small_pod),
						    &tid, err, sizeof(err)), 0);
	struct shmsched_result r;
	place_one(c, tid, 1, &r);
	assert_int_equal(r.status, SHMSCHED_PLACED);
	leave(d, c);
	sleep(33);
	daemon_stop(d, 1000, &ds);
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
	struct shmsched_client *keeper = connect_as("keeper");
	assert_int_equal(shmsched_register_template(keeper, small_pod,
						    strlen(small_pod), &tid, err,
						    sizeof(err)), 0);
	struct shmsched_result r;
	place_one(keeper, tid, 1, &r);
	assert_int_equal(r.status, SHMSCHED_PLACED);
	leave(d, keeper);

	/* 70 names one after another (old: the 64th new one was refused,
	 * EBUSY, for good). */
	for (int i = 0; i < 70; i++) {
		snprintf(name, sizeof(name), "job-%d", i);
		struct shmsched_client *c;
		if (shmsched_connect_named(sock, name, &c, err, sizeof(err)) < 0)
			fail_msg("name %d: %s", i, err);
		leave(d, c);
	}

	/* 63 more names, each leaving a placement: with the keeper's, 64
	 * identities of this uid that placements name. None is freed, so a
	 * new name is refused. */
	for (int i = 0; i < 63; i++) {
		snprintf(name, sizeof(name), "holder-%d", i);
		struct shmsched_client *c = connect_as(name);
		assert_int_equal(shmsched_register_template(c, small_pod,
							    strlen(small_pod), &tid,
							    err, sizeof(err)), 0);
		struct shmsched_result held;
		place_one(c, tid, 100 + (uint64_t)i, &held);
		assert_int_equal(held.status, SHMSCHED_PLACED);
		leave(d, c);
	}
	struct shmsched_client *c;
	assert_int_equal(shmsched_connect_named(sock, "one-too-many", &c, err,
						sizeof(err)), -EBUSY);
	assert_non_null(strstr(err, "most names the daemon keeps for one uid"));

	/* The keeper's placement is still its own; released, and the keeper
	 * gone, its identity is freed for a new name. */
	keeper = connect_as("keeper");
	assert_int_equal(shmsched_release(keeper, r.placement_id, err, sizeof(err)), 0);
	leave(d, keeper);
	c = connect_as("one-more");
	shmsched_disconnect(c);
	struct daemon_stats ds;
	daemon_stop(d, 1000, &ds);
}

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/shmsched-budgets-XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(sock, sizeof(sock), "%s/s.sock", dir);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	char admin[160];
	snprintf(admin, sizeof(admin), "%s.admin", sock);
	unlink(admin);
	unlink(sock);
	rmdir(dir);
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
