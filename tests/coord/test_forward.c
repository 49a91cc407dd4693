/* unit.forward: the values of coord/forward.h (a forwarded pod's request
 * and its answer), decoded strictly at their bounds; the protocol itself
 * runs against a real etcd in stress.etcd_forward. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "coord/coord.h"
#include "coord/value_text.h"

static int request(const char *v, size_t len, char host[MEMBERSHIP_HOST_MAX],
		   const uint8_t **pod, size_t *pod_len)
{
	char msg[256] = "";
	int rc = forward_request_decode((const uint8_t *)v, len, host, pod, pod_len, msg,
					sizeof(msg));
	if (rc != 0) {
		assert_int_equal(rc, -EINVAL);
		assert_true(msg[0] != '\0');
		assert_int_equal(host[0], 0);
		assert_null(*pod);
		assert_int_equal(*pod_len, 0);
	}
	return rc;
}

static void request_bounds(void **state)
{
	(void)state;
	char host[MEMBERSHIP_HOST_MAX];
	const uint8_t *pod;
	size_t pl;
	const char ok[] = "1 host-a\n{\"kind\":\"Pod\"}";
	assert_int_equal(request(ok, sizeof(ok) - 1, host, &pod, &pl), 0);
	assert_string_equal(host, "host-a");
	assert_int_equal(pl, strlen("{\"kind\":\"Pod\"}"));
	assert_memory_equal(pod, "{\"kind\":\"Pod\"}", pl);
	/* The pod is opaque: any byte, a newline or a NUL included. */
	const char bytes[] = "1 h\n\0\n\xff";
	assert_int_equal(request(bytes, sizeof(bytes) - 1, host, &pod, &pl), 0);
	assert_int_equal(pl, 3);
	const char *bad[] = {"", "1", "1 ", "2 host-a\nx", "1  host-a\nx", "1 host-a\n",
			     "1 host-a", "1 host/a\nx", "1 \nx", "1 host a\nx"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(request(bad[i], strlen(bad[i]), host, &pod, &pl), -EINVAL);
	/* The host's bound: MEMBERSHIP_HOST_MAX - 1 bytes, not one more. */
	char v[2 * MEMBERSHIP_HOST_MAX + 8];
	for (size_t n = MEMBERSHIP_HOST_MAX - 1; n <= MEMBERSHIP_HOST_MAX; n++) {
		memcpy(v, "1 ", 2);
		memset(v + 2, 'h', n);
		memcpy(v + 2 + n, "\nx", 2);
		int rc = request(v, n + 4, host, &pod, &pl);
		assert_int_equal(rc, n < MEMBERSHIP_HOST_MAX ? 0 : -EINVAL);
	}
	/* The pod's bound: FORWARD_POD_MAX bytes, not one more. */
	size_t big = 4 + FORWARD_POD_MAX + 1;
	char *b = malloc(big);
	assert_non_null(b);
	memcpy(b, "1 h\n", 4);
	memset(b + 4, 'p', FORWARD_POD_MAX + 1);
	assert_int_equal(request(b, big - 1, host, &pod, &pl), 0);
	assert_int_equal(pl, FORWARD_POD_MAX);
	assert_int_equal(request(b, big, host, &pod, &pl), -EINVAL);
	free(b);
}

static void answer_round_trip(void **state)
{
	(void)state;
	struct forward_answer a, z;
	memset(&z, 0, sizeof(z));
	char text[FORWARD_ANSWER_MAX], msg[256];
	const char *good[] = {"1 placed n0", "1 placed node-1.zone-a.example",
			      "1 refused 0/3 nodes are available: 3 Insufficient cpu.",
			      "1 refused x"};
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		size_t n = strlen(good[i]);
		assert_int_equal(forward_answer_decode((const uint8_t *)good[i], n, &a, msg,
						       sizeof(msg)), 0);
		assert_int_equal(a.placed, i < 2);
		assert_int_equal(forward_answer_encode(&a, text), (int)n);
		assert_memory_equal(text, good[i], n);
	}
	const char *bad[] = {"", "1 placed ", "1 placed N0", "1 placed n 0", "1 refused ",
			     "1 refused a\nb", "2 placed n0", "1 placed\tn0", "placed n0",
			     "1 refused \x7f"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&a, 0x5a, sizeof(a));
		msg[0] = '\0';
		assert_int_equal(forward_answer_decode((const uint8_t *)bad[i], strlen(bad[i]),
						       &a, msg, sizeof(msg)), -EINVAL);
		assert_true(msg[0] != '\0');
		assert_memory_equal(&a, &z, sizeof(a));
	}
	/* The reason's bound, and the node's. */
	char v[16 + FORWARD_REASON_MAX + PLACEMENT_NODE_MAX];
	for (size_t n = FORWARD_REASON_MAX; n <= FORWARD_REASON_MAX + 1; n++) {
		memcpy(v, "1 refused ", 10);
		memset(v + 10, 'r', n);
		assert_int_equal(forward_answer_decode((const uint8_t *)v, 10 + n, &a, msg,
						       sizeof(msg)),
				 n <= FORWARD_REASON_MAX ? 0 : -EINVAL);
	}
	for (size_t n = PLACEMENT_NODE_MAX; n <= PLACEMENT_NODE_MAX + 1; n++) {
		memcpy(v, "1 placed ", 9);
		memset(v + 9, 'n', n);
		assert_int_equal(forward_answer_decode((const uint8_t *)v, 9 + n, &a, msg,
						       sizeof(msg)),
				 n <= PLACEMENT_NODE_MAX ? 0 : -EINVAL);
	}
	/* The encoder refuses what the decoder would. */
	memset(&a, 0, sizeof(a));
	assert_int_equal(forward_answer_encode(&a, text), -EINVAL);
	a.placed = true;
	strcpy(a.node, "Upper");
	assert_int_equal(forward_answer_encode(&a, text), -EINVAL);
}

static void uids(void **state)
{
	(void)state;
	assert_true(forward_uid_valid("0", 1));
	assert_true(forward_uid_valid("66fb94745619188c0000000000000002", 32));
	assert_false(forward_uid_valid("", 0));
	assert_false(forward_uid_valid("A", 1));
	assert_false(forward_uid_valid("a/b", 3));
	char u[FORWARD_UID_MAX + 2];
	memset(u, 'a', sizeof(u));
	assert_true(forward_uid_valid(u, FORWARD_UID_MAX));
	assert_false(forward_uid_valid(u, FORWARD_UID_MAX + 1));
}

/* coord/value_text.h's canonical decimal, which the values' decoders
 * share: its bound exact at both ends, a maximum below a digit included. */
static void decimal_bounds(void **state)
{
	(void)state;
	uint64_t v;
	assert_true(value_text_decimal("0", 1, 0, &v));
	assert_int_equal(v, 0);
	assert_false(value_text_decimal("5", 1, 3, &v));
	assert_true(value_text_decimal("3", 1, 3, &v));
	assert_false(value_text_decimal("10", 2, 9, &v));
	assert_true(value_text_decimal("18446744073709551615", 20, UINT64_MAX, &v));
	assert_true(v == UINT64_MAX);
	assert_false(value_text_decimal("18446744073709551616", 20, UINT64_MAX, &v));
	assert_false(value_text_decimal("99999999999999999999", 20, UINT64_MAX, &v));
	assert_false(value_text_decimal("00", 2, 9, &v));
	assert_false(value_text_decimal("", 0, 9, &v));
	assert_false(value_text_decimal("-1", 2, 9, &v));
	int64_t i;
	assert_true(value_text_decimal_i64("9223372036854775807", 19, INT64_MAX, &i));
	assert_false(value_text_decimal_i64("9223372036854775808", 19, INT64_MAX, &i));
	assert_false(value_text_decimal_i64("1", 1, -1, &i));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(request_bounds),
		cmocka_unit_test(answer_round_trip),
		cmocka_unit_test(uids),
		cmocka_unit_test(decimal_bounds),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
