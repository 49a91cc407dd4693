/* unit.strings_reclaim: issue 41, "the intern table filled for good", the
 * attack that remained after the budgets per identity: one uid that
 * reconnects again and again under new names, each time registering
 * templates with fresh unique label values, against the real daemon in
 * process, on a named state region that it then resumes:
 * - while the daemon runs, the strings of the names gone are freed (no
 *   template, node or placement holds them) and the uid's charge with
 *   them: each new name is stopped by its own identity's budget alone,
 *   and the table stays at about two names' strings (before the run-time
 *   reclaim: the uid was refused on the 5th name's first template until a
 *   restart; before the uid budget: every name was served and every
 *   string kept);
 * - afterwards a producer of another uid (nobody, run as a child process)
 *   still registers a template of new strings;
 * - a restart on the same region frees the rest (the table holds what it
 *   held before the attack), and the uid registers new strings again;
 * - a placed pod's labels (held only inside its group's encoding) survive
 *   a restart: a pod with required affinity to them joins it;
 * - they, and a connected producer's template, survive run-time reclaims
 *   too (test_live_holders_survive).
 * Must run as root (the child becomes nobody). */
#include <errno.h>
#include <grp.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "daemon/daemon.h"
#include "fixture.h"
#include "shm/shm.h"
#include "shmsched/client.h"

#define NOBODY 65534

static struct fixture_dir fx;
static char region[64], self[4096];
static const uid_t admitted[] = {0, NOBODY};

static struct daemon *start(void)
{
	struct daemon_config cfg = {.socket_path = fx.sock, .synthetic_nodes = 16,
				    .seed = 1, .workers = 1, .slots = 64,
				    .state_name = region,
				    .allowed_uids = admitted, .n_allowed_uids = 2,
				    .socket_mode = 0666,
				    .strings_per_identity = 4096};
	return fixture_start(&cfg);
}

/* The child, as nobody: one template of new strings; exit 0 if taken. */
static int victim(const char *path)
{
	struct shmsched_client *c;
	char err[512];
	if (shmsched_connect_named(path, "victim", &c, err, sizeof(err)) < 0) {
		fprintf(stderr, "victim: connect: %s\n", err);
		return 2;
	}
	int rc = fixture_template_n(c, "victim", 0, NULL, err, sizeof(err));
	if (rc < 0)
		fprintf(stderr, "victim: template refused: %s\n", err);
	shmsched_disconnect(c);
	return rc == 0 ? 0 : 1;
}

/* Runs victim() as nobody in a new process; its exit status. */
static int run_victim(void)
{
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		gid_t g = NOBODY;
		if (setgroups(0, NULL) < 0 || setresgid(g, g, g) < 0 ||
		    setresuid(NOBODY, NOBODY, NOBODY) < 0)
			_exit(3);
		execl(self, self, "victim", fx.sock, (char *)NULL);
		_exit(4);
	}
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

/* Connects as `name`, registers templates of new strings until one is
 * refused (at most 30), leaves; the number taken, the refusal in err. */
static int fill_name(struct daemon *d, const char *name, char *err, size_t len)
{
	struct shmsched_client *c = fixture_connect_as(fx.sock, name);
	int i = 0;
	while (i < 30 && fixture_template_n(c, name, i, NULL, err, len) == 0)
		i++;
	fixture_leave(d, c);
	return i;
}

static void test_reconnecting_uid(void **state)
{
	(void)state;
	if (geteuid() != 0)
		skip();
	struct daemon *d = start();
	struct daemon_stats ds;
	daemon_get_stats(d, &ds);
	uint32_t baseline = ds.interned_strings, most = baseline;
	char err[512], name[32];
	int taken = 0;
	/* New names, each filling its identity's budget, then leaving: the
	 * strings of the names gone are freed while the daemon runs, and
	 * the uid's charge with them, so every new name is served. */
	for (int names = 0; names < 12; names++) {
		snprintf(name, sizeof(name), "hog-%d", names);
		int i = fill_name(d, name, err, sizeof(err));
		/* old: the uid's budget (4 names' worth) was kept until a
		 * restart: the 5th name's first template was refused. */
		if (i == 0)
			fail_msg("name %d: first template refused: %s", names, err);
		/* Each name stops at its own identity's budget. */
		if (i == 30 || strstr(err, "(--strings-per-identity)") == NULL)
			fail_msg("name %d: %d templates, then: %s", names, i,
				 i == 30 ? "none refused" : err);
		taken += i;
		daemon_get_stats(d, &ds);
		if (ds.interned_strings > most)
			most = ds.interned_strings;
	}
	daemon_get_stats(d, &ds);
	print_message("12 names, %d templates; strings: %u before, at most %u "
		      "during, %u after; %llu reclaim(s) freed %llu string(s)\n",
		      taken, baseline, most, ds.interned_strings,
		      (unsigned long long)ds.strings_reclaims,
		      (unsigned long long)ds.strings_reclaimed);
	/* old: no reclaim while running, every string kept. */
	assert_true(ds.strings_reclaims > 0);
	assert_true(ds.strings_reclaimed >= (uint64_t)taken);
	/* The table holds about two names' strings at most (one gone, not
	 * reclaimed yet, and the next), not twelve. */
	assert_true((uint64_t)most < baseline + (uint64_t)taken / 3);

	/* Another uid's new strings are still taken. */
	assert_int_equal(run_victim(), 0);

	/* A restart frees what no record holds: the table is back to about
	 * its baseline (the victim's strings are freed too: it is gone). */
	daemon_stop(d, 1000, &ds);
	d = start();
	daemon_get_stats(d, &ds);
	print_message("strings: %u after a restart\n", ds.interned_strings);
	assert_true(ds.interned_strings <= baseline + 2);
	/* The uid's charge went with its strings. */
	struct shmsched_client *c = fixture_connect_as(fx.sock, "hog-again");
	for (int i = 0; i < 10; i++)
		if (fixture_template_n(c, "again", i, NULL, err, sizeof(err)) < 0)
			fail_msg("after the restart, template %d: %s", i, err);
	fixture_leave(d, c);
	daemon_stop(d, 1000, &ds);
}

/* Registers `json` on c and submits one pod of it (not waiting); its
 * answer. */
static void place_json(struct shmsched_client *c, const char *json,
		       struct shmsched_result *out)
{
	char err[512];
	uint32_t tid;
	if (shmsched_register_template(c, json, strlen(json), &tid, err,
				       sizeof(err)) < 0)
		fail_msg("template refused: %s", err);
	struct shmsched_pod pod = {.cookie = 7, .template_id = tid,
				   .flags = SHMSCHED_NO_WAIT};
	assert_int_equal(shmsched_submit(c, &pod, 1), 1);
	fixture_poll_one(c, out);
}

/* A placed pod's labels are held only inside its group's encoding (a
 * string of intern ids, shm/pod_group.h), which its placement record
 * names. The start-time reclaim must keep them: old, it marked the
 * group's id alone, freed the label value, and a later template's string
 * took its id, so a pod with required pod affinity to the placed pod's
 * label (kube's InterPodAffinity: a required term needs a pod its
 * selector matches in the topology domain) found no such pod. */
static void test_placed_labels_survive(void **state)
{
	(void)state;
	if (geteuid() != 0)
		skip();
	static const char value[] = "kept-0123456789012345678901234567890123456789012345";
	char json[1024];
	struct shmsched_result res;
	struct daemon_stats ds;
	struct daemon *d = start();
	struct shmsched_client *c = fixture_connect_as(fx.sock, "placed");
	snprintf(json, sizeof(json), "{\"kind\":\"Pod\",\"metadata\":{\"name\":"
		 "\"a\",\"labels\":{\"app\":\"%s\"}},\"spec\":{\"containers\":"
		 "[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":"
		 "\"10m\"}}}]}}", value);
	place_json(c, json, &res);
	assert_int_equal(res.status, SHMSCHED_PLACED);
	uint32_t node = res.node_id;
	fixture_leave(d, c); /* its placement stays */
	daemon_stop(d, 1000, &ds);

	d = start();
	/* New strings of the label value's size take the freed entries. */
	c = fixture_connect_as(fx.sock, "filler");
	char err[512];
	for (int i = 0; i < 8; i++)
		if (fixture_template_n(c, "fill", i, NULL, err, sizeof(err)) < 0)
			fail_msg("filler template %d: %s", i, err);
	fixture_leave(d, c);
	c = fixture_connect_as(fx.sock, "follower");
	snprintf(json, sizeof(json), "{\"kind\":\"Pod\",\"metadata\":{\"name\":"
		 "\"b\"},\"spec\":{\"affinity\":{\"podAffinity\":{"
		 "\"requiredDuringSchedulingIgnoredDuringExecution\":[{"
		 "\"labelSelector\":{\"matchLabels\":{\"app\":\"%s\"}},"
		 "\"topologyKey\":\"kubernetes.io/hostname\"}]}},"
		 "\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":"
		 "{\"cpu\":\"10m\"}}}]}}", value);
	place_json(c, json, &res);
	print_message("follower: status %u node %u (the placed pod's: %u) %s\n",
		      res.status, res.node_id, node, res.message);
	/* old: UNSCHEDULABLE, no pod matched the selector. */
	assert_int_equal(res.status, SHMSCHED_PLACED);
	assert_int_equal(res.node_id, node);
	fixture_leave(d, c);
	daemon_stop(d, 1000, &ds);
}

/* The same, and a live producer's template, through reclaims WITHOUT a
 * restart: the holders a running daemon has besides the records (the
 * connected producers' templates) are marked, and the workers' caches
 * dropped, before anything is freed. A placed pod's label value is held
 * only inside its group's encoding; a live producer's template (its own
 * new label value, and a required affinity to the placed pod's label)
 * only by the producer. Fillers of the same sizes then take every freed
 * entry. If the reclaim freed the placed label, a new template naming it
 * gets a new id and matches no pod (UNSCHEDULABLE); if it freed the live
 * template's group, its pods decode a filler's group instead: no
 * affinity, any node. */
static void test_live_holders_survive(void **state)
{
	(void)state;
	if (geteuid() != 0)
		skip();
	static const char value[] = "kept-0123456789012345678901234567890123456789012345";
	static const char live_value[] = "live-0123456789012345678901234567890123456789012345";
	char json[1024], err[512], name[32];
	struct shmsched_result res;
	struct daemon_stats ds;
	struct daemon *d = start();
	struct shmsched_client *c = fixture_connect_as(fx.sock, "placed");
	snprintf(json, sizeof(json), "{\"kind\":\"Pod\",\"metadata\":{\"name\":"
		 "\"a\",\"labels\":{\"app\":\"%s\"}},\"spec\":{\"containers\":"
		 "[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":"
		 "\"10m\"}}}]}}", value);
	place_json(c, json, &res);
	assert_int_equal(res.status, SHMSCHED_PLACED);
	uint32_t node = res.node_id;
	fixture_leave(d, c); /* its placement stays */

	/* The live producer's template: registered, not used yet. */
	struct shmsched_client *live = fixture_connect_as(fx.sock, "live");
	snprintf(json, sizeof(json), "{\"kind\":\"Pod\",\"metadata\":{\"name\":"
		 "\"l\",\"labels\":{\"tier\":\"%s\"}},\"spec\":{\"affinity\":{"
		 "\"podAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":"
		 "[{\"labelSelector\":{\"matchLabels\":{\"app\":\"%s\"}},"
		 "\"topologyKey\":\"kubernetes.io/hostname\"}]}},\"containers\":"
		 "[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":"
		 "\"10m\"}}}]}}", live_value, value);
	uint32_t live_tid;
	if (shmsched_register_template(live, json, strlen(json), &live_tid, err,
				       sizeof(err)) < 0)
		fail_msg("live template refused: %s", err);

	/* Names that fill their budgets and leave: reclaims run. */
	daemon_get_stats(d, &ds);
	uint64_t before = ds.strings_reclaims;
	for (int n = 0; n < 8; n++) {
		snprintf(name, sizeof(name), "filler-%d", n);
		(void)fill_name(d, name, err, sizeof(err));
	}
	daemon_get_stats(d, &ds);
	print_message("%llu reclaim(s), %llu string(s) freed\n",
		      (unsigned long long)(ds.strings_reclaims - before),
		      (unsigned long long)ds.strings_reclaimed);
	assert_true(ds.strings_reclaims >= before + 4);

	/* The live template still places, by its affinity. */
	struct shmsched_pod pod = {.cookie = 9, .template_id = live_tid,
				   .flags = SHMSCHED_NO_WAIT};
	assert_int_equal(shmsched_submit(live, &pod, 1), 1);
	fixture_poll_one(live, &res);
	print_message("live: status %u node %u (the placed pod's: %u) %s\n",
		      res.status, res.node_id, node, res.message);
	assert_int_equal(res.status, SHMSCHED_PLACED);
	assert_int_equal(res.node_id, node);

	/* A new template naming the placed pod's label finds that pod. */
	c = fixture_connect_as(fx.sock, "follower");
	snprintf(json, sizeof(json), "{\"kind\":\"Pod\",\"metadata\":{\"name\":"
		 "\"b\"},\"spec\":{\"affinity\":{\"podAffinity\":{"
		 "\"requiredDuringSchedulingIgnoredDuringExecution\":[{"
		 "\"labelSelector\":{\"matchLabels\":{\"app\":\"%s\"}},"
		 "\"topologyKey\":\"kubernetes.io/hostname\"}]}},"
		 "\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":"
		 "{\"cpu\":\"10m\"}}}]}}", value);
	place_json(c, json, &res);
	print_message("follower: status %u node %u %s\n", res.status, res.node_id,
		      res.message);
	assert_int_equal(res.status, SHMSCHED_PLACED);
	assert_int_equal(res.node_id, node);
	/* And one naming the live pod's label (held by the live template and
	 * now by its placement) finds the live pod. */
	snprintf(json, sizeof(json), "{\"kind\":\"Pod\",\"metadata\":{\"name\":"
		 "\"f\"},\"spec\":{\"affinity\":{\"podAffinity\":{"
		 "\"requiredDuringSchedulingIgnoredDuringExecution\":[{"
		 "\"labelSelector\":{\"matchLabels\":{\"tier\":\"%s\"}},"
		 "\"topologyKey\":\"kubernetes.io/hostname\"}]}},"
		 "\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":"
		 "{\"cpu\":\"10m\"}}}]}}", live_value);
	place_json(c, json, &res);
	assert_int_equal(res.status, SHMSCHED_PLACED);
	assert_int_equal(res.node_id, node);
	fixture_leave(d, c);
	shmsched_disconnect(live);
	daemon_stop(d, 1000, &ds);
}

static int setup(void **state)
{
	(void)state;
	fixture_dir_make(&fx, "reclaim", 1); /* nobody reaches the socket */
	snprintf(region, sizeof(region), "shmsched-reclaim-%d", (int)getpid());
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

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "victim") == 0)
		return victim(argv[2]);
	if (readlink("/proc/self/exe", self, sizeof(self) - 1) < 0)
		return 1;
	setenv("SHMSCHED_LOG", "warn", 0);
	signal(SIGPIPE, SIG_IGN);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_reconnecting_uid, setup, teardown),
		cmocka_unit_test_setup_teardown(test_placed_labels_survive, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_live_holders_survive, setup,
						teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
