/* unit.worker_time: the fair share's figure per producer identity
 * (daemon_identity_times, issue 41 item 5), against the real daemon in
 * process (one worker; its producers connect from this process):
 * - pods placed for one identity are charged to it, and to no other
 *   (an identity connected beside it, with no pod, stays at 0);
 * - the figure is worker time: no more than the wall time the pods took;
 * - it outlives the connection (read after the producer went, as
 *   shmsched-bench --noisy reads it), and a later identity's pods leave
 *   it as it was.
 * Each assertion fails when the figure is not kept (0), charged to the
 * wrong identity, or dropped with the connection. */
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
#include "shmsched/client.h"

#include "fixture.h"

static struct fixture_dir fx;

/* The figure of the identity named `name` (fails if there is none). */
static uint64_t worker_ns(struct daemon *d, const char *name)
{
	struct daemon_identity_time t[16];
	unsigned n = daemon_identity_times(d, t, 16);
	assert_true(n <= 16);
	for (unsigned i = 0; i < n; i++)
		if (strcmp(t[i].name, name) == 0)
			return t[i].worker_ns;
	fail_msg("no identity named \"%s\" among %u", name, n);
	return 0;
}

/* Places `n` pods of template `tid` and waits for every answer. */
static void place(struct shmsched_client *c, uint32_t tid, unsigned n)
{
	unsigned sent = 0, got = 0;
	struct shmsched_result res[32];
	time_t deadline = time(NULL) + 30;
	while (got < n && time(NULL) <= deadline) {
		if (sent < n) {
			struct shmsched_pod pod = {.cookie = sent, .template_id = tid};
			int acc = shmsched_submit(c, &pod, 1);
			assert_true(acc >= 0);
			sent += (unsigned)acc;
		}
		int k = shmsched_poll(c, res, 32);
		assert_true(k >= 0);
		for (int i = 0; i < k; i++)
			assert_int_equal(res[i].status, SHMSCHED_PLACED);
		got += (unsigned)k;
		if (k == 0 && sent == n)
			usleep(100);
	}
	assert_int_equal(got, n);
}

static void test_charged_to_its_identity(void **state)
{
	(void)state;
	struct daemon_config cfg = {.socket_path = fx.sock, .synthetic_nodes = 256,
				    .seed = 1, .workers = 1, .slots = 64};
	struct daemon *d = fixture_start(&cfg);
	char err[512];
	static const char tmpl[] =
		"{\"kind\":\"Pod\",\"metadata\":{\"name\":\"t\"},\"spec\":"
		"{\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":"
		"{\"cpu\":\"10m\"}}}]}}";
	struct shmsched_client *a = fixture_connect_as(fx.sock, "cheap-a");
	struct shmsched_client *b = fixture_connect_as(fx.sock, "idle-b");
	uint32_t ta, tb;
	assert_int_equal(shmsched_register_template(a, tmpl, sizeof(tmpl) - 1, &ta,
						    err, sizeof(err)), 0);
	assert_int_equal(shmsched_register_template(b, tmpl, sizeof(tmpl) - 1, &tb,
						    err, sizeof(err)), 0);
	assert_int_equal(worker_ns(d, "cheap-a"), 0);

	uint64_t t0 = now_ns();
	place(a, ta, 300);
	uint64_t wall = now_ns() - t0;
	uint64_t fa = worker_ns(d, "cheap-a");
	assert_true(fa > 0);             /* kept */
	assert_true(fa <= wall);         /* worker time, within the wall time */
	assert_int_equal(worker_ns(d, "idle-b"), 0); /* not charged to b */

	/* It outlives the connection. */
	fixture_leave(d, a);
	assert_int_equal(worker_ns(d, "cheap-a"), fa);

	/* b's pods are b's; a's figure stays. */
	place(b, tb, 100);
	assert_true(worker_ns(d, "idle-b") > 0);
	assert_int_equal(worker_ns(d, "cheap-a"), fa);

	shmsched_disconnect(b);
	struct daemon_stats ds;
	daemon_stop(d, 1000, &ds);
}

static int setup(void **state)
{
	(void)state;
	fixture_dir_make(&fx, "wtime", 0);
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
		cmocka_unit_test_setup_teardown(test_charged_to_its_identity, setup,
						teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
