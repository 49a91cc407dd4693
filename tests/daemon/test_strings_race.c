/* stress.strings_reclaim_race: issue 41's run-time reclaim of the string
 * table while workers place (meant for the TSan and ASan builds too).
 *
 * The real daemon in process, two workers. A steady producer places pods
 * of its own template the whole time. Meanwhile, round after round, a
 * producer under a new name registers template A (a label value unique
 * to the round), places one pod of it, registers template B (a required
 * pod affinity to A's label, kube's InterPodAffinity: a pod B's selector
 * matches must run in B's topology domain, the node), places one pod of
 * it, checks B landed on A's node, releases both, and leaves. Its placements stay; its
 * templates' strings (B's affinity, its group) are held by nothing then,
 * so the small --strings-per-identity makes the daemon reclaim them every
 * few rounds, and later rounds' strings take the freed ids.
 *
 * What a wrong string would do: a reused id read as its old string (an
 * engine whose inter-pod groups, decoded by id, outlived the reclaim; a
 * freed label value a placement still holds) sends a round's B to an
 * earlier round's node, or finds no pod (UNSCHEDULABLE). So every B must
 * be placed on its A's node, every steady pod placed, reclaims must have
 * run (strings_reclaims > 0), and under TSan no race may be reported.
 * Rounds: SHMSCHED_STRESS_ROUNDS (default 60): a few seconds. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "daemon/daemon.h"
#include "fixture.h"
#include "shm/shm.h"
#include "shmsched/client.h"

static struct fixture_dir fx;
static char region[64];

static struct daemon *start(void)
{
	struct daemon_config cfg = {.socket_path = fx.sock, .synthetic_nodes = 16,
				    .seed = 3, .workers = 2, .slots = 64,
				    .state_name = region,
				    .strings_per_identity = 6144};
	return fixture_start(&cfg);
}

static void place(struct shmsched_client *c, uint32_t tid, uint64_t cookie,
		  struct shmsched_result *out)
{
	struct shmsched_pod pod = {.cookie = cookie, .template_id = tid,
				   .flags = SHMSCHED_NO_WAIT};
	assert_int_equal(shmsched_submit(c, &pod, 1), 1);
	fixture_poll_one(c, out);
	assert_int_equal(out->cookie, cookie);
}

struct steady {
	int stop; /* a flag: relaxed __atomic loads and stores */
	uint64_t placed, other;
};

/* No cmocka assertion off the test's thread: failures are counted. */
static void *steady_main(void *arg)
{
	struct steady *st = arg;
	static const char json[] = "{\"kind\":\"Pod\",\"metadata\":{\"name\":"
		"\"s\",\"labels\":{\"app\":\"steady\"}},\"spec\":{\"containers\":"
		"[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"1m\"}}}]}}";
	struct shmsched_client *c;
	char err[512];
	uint32_t tid;
	if (shmsched_connect_named(fx.sock, "steady", &c, err, sizeof(err)) < 0) {
		st->other++;
		return NULL;
	}
	if (shmsched_register_template(c, json, strlen(json), &tid, err,
				       sizeof(err)) < 0) {
		st->other++;
		shmsched_disconnect(c);
		return NULL;
	}
	uint64_t cookie = 1;
	while (!__atomic_load_n(&st->stop, __ATOMIC_RELAXED)) {
		struct shmsched_pod pod = {.cookie = cookie++, .template_id = tid,
					   .flags = SHMSCHED_NO_WAIT};
		if (shmsched_submit(c, &pod, 1) != 1) {
			st->other++;
			break;
		}
		struct shmsched_result res;
		int got = 0;
		for (int spins = 0; got == 0 && spins < 100000; spins++) {
			got = shmsched_poll(c, &res, 1);
			if (got == 0)
				usleep(100);
		}
		if (got == 1 && res.status == SHMSCHED_PLACED &&
		    shmsched_release(c, res.placement_id, err, sizeof(err)) == 0)
			st->placed++; /* and released: the nodes never fill */
		else
			st->other++;
	}
	shmsched_disconnect(c);
	return NULL;
}

static void test_reclaim_while_placing(void **state)
{
	(void)state;
	const char *env = getenv("SHMSCHED_STRESS_ROUNDS");
	int rounds = env != NULL ? atoi(env) : 60;
	struct daemon *d = start();
	struct steady st = {0};
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, steady_main, &st), 0);
	char json[1024], name[32], value[64];
	int wrong = 0;
	for (int r = 0; r < rounds; r++) {
		snprintf(name, sizeof(name), "churn-%d", r);
		snprintf(value, sizeof(value), "round-%d-%08x", r,
			 (unsigned)(r * 2654435761u));
		struct shmsched_client *c = fixture_connect_as(fx.sock, name);
		snprintf(json, sizeof(json), "{\"kind\":\"Pod\",\"metadata\":{"
			 "\"name\":\"a%d\",\"labels\":{\"round\":\"%s\"}},"
			 "\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":"
			 "{\"requests\":{\"cpu\":\"1m\"}}}]}}", r, value);
		struct shmsched_result a, b, x;
		place(c, fixture_template(c, json), 1, &a);
		assert_int_equal(a.status, SHMSCHED_PLACED);
		/* D: affinity to a label no pod has: never placed, but the
		 * workers decode its group and compile its class. */
		snprintf(json, sizeof(json), "{\"kind\":\"Pod\",\"metadata\":{"
			 "\"name\":\"d%d\",\"labels\":{\"dead\":\"%s\"}},"
			 "\"spec\":{\"affinity\":{\"podAffinity\":{"
			 "\"requiredDuringSchedulingIgnoredDuringExecution\":[{"
			 "\"labelSelector\":{\"matchLabels\":{\"round\":\"none-%s\"}},"
			 "\"topologyKey\":\"kubernetes.io/hostname\"}]}},"
			 "\"containers\":[{\"name\":\"c\",\"resources\":"
			 "{\"requests\":{\"cpu\":\"1m\"}}}]}}", r, value, value);
		place(c, fixture_template(c, json), 3, &x);
		if (x.status == SHMSCHED_PLACED) {
			print_message("round %d: D placed on node %u\n", r, x.node_id);
			wrong++;
		}
		/* B: affinity to A's label: A's node. */
		snprintf(json, sizeof(json), "{\"kind\":\"Pod\",\"metadata\":{"
			 "\"name\":\"b%d\",\"labels\":{\"follows\":\"%s\"}},"
			 "\"spec\":{\"affinity\":{\"podAffinity\":{"
			 "\"requiredDuringSchedulingIgnoredDuringExecution\":[{"
			 "\"labelSelector\":{\"matchLabels\":{\"round\":\"%s\"}},"
			 "\"topologyKey\":\"kubernetes.io/hostname\"}]}},"
			 "\"containers\":[{\"name\":\"c\",\"resources\":"
			 "{\"requests\":{\"cpu\":\"1m\"}}}]}}", r, value, value);
		place(c, fixture_template(c, json), 2, &b);
		if (b.status != SHMSCHED_PLACED || b.node_id != a.node_id) {
			print_message("round %d: B status %u on node %u, A on %u: %s\n",
				      r, b.status, b.node_id, a.node_id, b.message);
			wrong++;
		}
		/* Released: nothing holds the round's strings once it goes. */
		char err[256];
		if (shmsched_release(c, a.placement_id, err, sizeof(err)) < 0 ||
		    (b.status == SHMSCHED_PLACED &&
		     shmsched_release(c, b.placement_id, err, sizeof(err)) < 0))
			fail_msg("round %d: release: %s", r, err);
		fixture_leave(d, c);
	}
	__atomic_store_n(&st.stop, 1, __ATOMIC_RELAXED);
	pthread_join(th, NULL);
	struct daemon_stats ds;
	daemon_get_stats(d, &ds);
	print_message("%d rounds, %d wrong; steady pods %llu placed, %llu not; "
		      "%llu reclaim(s) freed %llu string(s); %u strings now\n",
		      rounds, wrong, (unsigned long long)st.placed,
		      (unsigned long long)st.other,
		      (unsigned long long)ds.strings_reclaims,
		      (unsigned long long)ds.strings_reclaimed, ds.interned_strings);
	assert_int_equal(wrong, 0);
	assert_int_equal(st.other, 0);
	assert_true(st.placed > 0);
	assert_true(ds.strings_reclaims > 0);
	daemon_stop(d, 1000, &ds);
}

static int setup(void **state)
{
	(void)state;
	fixture_dir_make(&fx, "srace", 0);
	snprintf(region, sizeof(region), "shmsched-srace-%d", (int)getpid());
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	char err[256];
	fixture_dir_remove(&fx);
	state_remove(region, err, sizeof(err));
	return 0;
}

int main(void)
{
	setenv("SHMSCHED_LOG", "warn", 0);
	signal(SIGPIPE, SIG_IGN);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_reclaim_while_placing, setup,
						teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
