/* stress.control_release: OP_RELEASE and OP_REGISTER on the wire, against
 * the real daemon (in process) through raw control calls, no client
 * library.
 *
 * OP_RELEASE's body is struct op_release, 8 bytes since ABI version 3: a
 * placement id, nothing a producer could forge about what it gives back.
 * The daemon takes exactly that size and refuses any other (the 120 bytes
 * of version 2 included) with a message that names both sizes. OP_REGISTER
 * takes an empty body or a 64-byte NUL-terminated name, and nothing else.
 */
#include <errno.h>
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
#include "client/control_client.h"
#include "ingest/ingest.h"

#define TIMEOUT_MS 5000

static struct fixture_dir fx;

static const char node_json[] =
	"{\"kind\":\"List\",\"items\":[{\"kind\":\"Node\",\"metadata\":{\"name\":"
	"\"n0\"},\"status\":{\"allocatable\":{\"cpu\":\"4\",\"memory\":\"8Gi\","
	"\"pods\":\"30\"}}}]}";

static const char pod_json[] =
	"{\"kind\":\"Pod\",\"metadata\":{\"name\":\"t\"},\"spec\":{\"containers\":"
	"[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"500m\"}}}]}}";

static int setup(void **state)
{
	(void)state;
	fixture_dir_make(&fx, "release", 0);
	FILE *f = fopen(fx.cluster, "w");
	assert_non_null(f);
	fputs(node_json, f);
	fclose(f);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	fixture_dir_remove(&fx);
	return 0;
}

/* One request: the header, then `body[0..len)`. Returns the call's result,
 * the daemon's text in err. */
static int request(int fd, uint32_t kind, const void *body, uint32_t len,
		   void *resp, uint32_t cap, int *resp_fd, char *err,
		   size_t err_len)
{
	static uint8_t buf[sizeof(struct op_request) + 4096];
	struct op_request op = {.kind = kind};
	assert_true(len <= sizeof(buf) - sizeof(op));
	memcpy(buf, &op, sizeof(op));
	if (len > 0)
		memcpy(buf + sizeof(op), body, len);
	return control_client_call(fd, buf, (uint32_t)(sizeof(op) + len), resp,
				   cap, NULL, resp_fd, TIMEOUT_MS, err, err_len);
}

static void test_release_body_size(void **state)
{
	(void)state;
	struct daemon_config cfg = fixture_config(&fx);
	struct daemon *d = fixture_start(&cfg);
	char err[512];
	int fd = control_client_connect(fx.sock, TIMEOUT_MS, err, sizeof(err));
	assert_true(fd >= 0);
	struct op_registered reg;
	int region_fd = -1;
	assert_int_equal(request(fd, OP_REGISTER, NULL, 0, &reg, sizeof(reg),
				 &region_fd, err, sizeof(err)), 0);
	assert_true(region_fd >= 0);
	close(region_fd);
	struct op_template t;
	assert_int_equal(request(fd, OP_TEMPLATE, pod_json, sizeof(pod_json) - 1,
				 &t, sizeof(t), NULL, err, sizeof(err)), 0);

	/* Any size but 8 is refused, and says which size it wanted. */
	static const uint32_t wrong[] = {0, 1, 7, 9, 80, 120};
	uint8_t body[200];
	memset(body, 0, sizeof(body));
	for (size_t i = 0; i < sizeof(wrong) / sizeof(wrong[0]); i++) {
		char want[80];
		assert_int_equal(request(fd, OP_RELEASE, body, wrong[i], NULL, 0,
					 NULL, err, sizeof(err)), -EINVAL);
		snprintf(want, sizeof(want), "release: a body of %u bytes; "
			 "expected 8", wrong[i]);
		assert_non_null(strstr(err, want));
	}
	/* 8 bytes: an id, little-endian; none was ever issued. */
	struct op_release r = {.placement_id = UINT64_C(0x100000003)};
	assert_int_equal(request(fd, OP_RELEASE, &r, sizeof(r), NULL, 0, NULL,
				 err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "placement 4294967299: no such placement"));
	/* Nothing was given back by any of them. */
	assert_int_equal(daemon_pods_on_nodes(d), 0);

	/* OP_REGISTER: a second time on one connection is refused; on a new
	 * connection, a name must be 64 bytes and NUL-terminated. */
	assert_int_equal(request(fd, OP_REGISTER, NULL, 0, &reg, sizeof(reg),
				 &region_fd, err, sizeof(err)), -EALREADY);
	int fd2 = control_client_connect(fx.sock, TIMEOUT_MS, err, sizeof(err));
	assert_true(fd2 >= 0);
	memset(body, 'x', sizeof(body));
	assert_int_equal(request(fd2, OP_REGISTER, body, 10, &reg, sizeof(reg),
				 &region_fd, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "a body of 10 bytes; expected 0 or 64"));
	assert_int_equal(request(fd2, OP_REGISTER, body, 64, &reg, sizeof(reg),
				 &region_fd, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "not NUL-terminated"));
	close(fd2);

	close(fd);
	struct daemon_stats ds;
	daemon_stop(d, 1000, &ds);
}

int main(void)
{
	setenv("SHMSCHED_LOG", "warn", 0);
	signal(SIGPIPE, SIG_IGN);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_release_body_size, setup,
						teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
