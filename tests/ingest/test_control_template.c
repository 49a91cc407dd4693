/* unit.control_template: an OP_TEMPLATE request's body split
 * (control_template_split, ingest/control_proto.c), a decoder of what any
 * producer sends, on bounded and hostile input: the plain form is the Pod
 * as is; the scoped form (issue 41: a template's narrowing disrupt scope)
 * is refused for an unknown arg, a short header, a reserved field not 0,
 * a scope_len past the body or past OP_TEMPLATE_SCOPE_MAX; and what
 * control_template_join builds splits back to its parts. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ingest/control_ops.h"
#include "ingest/control_proto.h"

static char err[512];

static void test_plain(void **state)
{
	(void)state;
	struct control_template t;
	static const char pod[] = "{\"kind\":\"Pod\"}";
	assert_int_equal(control_template_split(OP_TEMPLATE_PLAIN, pod, sizeof(pod) - 1,
						&t, err, sizeof(err)), 0);
	assert_false(t.scoped);
	assert_ptr_equal(t.pod, pod);
	assert_int_equal(t.pod_len, sizeof(pod) - 1);
	assert_int_equal(control_template_split(OP_TEMPLATE_PLAIN, NULL, 0, &t, err,
						sizeof(err)), 0);
	/* An arg no side defines: refused, not read as plain. */
	assert_int_equal(control_template_split(2, pod, sizeof(pod) - 1, &t, err,
						sizeof(err)), -EPROTO);
	assert_non_null(strstr(err, "arg 2"));
	assert_int_equal(control_template_split(UINT32_MAX, pod, sizeof(pod) - 1, &t,
						err, sizeof(err)), -EPROTO);
}

static void test_join_split(void **state)
{
	(void)state;
	void *b;
	uint32_t n;
	static const char pod[] = "{\"kind\":\"Pod\"}";
	assert_int_equal(control_template_join("team-b,x-*", 10, pod, sizeof(pod) - 1,
					       &b, &n), 0);
	assert_int_equal(n, sizeof(struct op_template_scope) + 10 + sizeof(pod) - 1);
	struct control_template t;
	assert_int_equal(control_template_split(OP_TEMPLATE_SCOPED, b, n, &t, err,
						sizeof(err)), 0);
	assert_true(t.scoped);
	assert_int_equal(t.scope_len, 10);
	assert_memory_equal(t.scope, "team-b,x-*", 10);
	assert_int_equal(t.pod_len, sizeof(pod) - 1);
	assert_memory_equal(t.pod, pod, t.pod_len);
	free(b);
	/* An empty scope (disrupt nothing) and an empty pod are bytes too. */
	assert_int_equal(control_template_join("", 0, "", 0, &b, &n), 0);
	assert_int_equal(control_template_split(OP_TEMPLATE_SCOPED, b, n, &t, err,
						sizeof(err)), 0);
	assert_true(t.scoped);
	assert_int_equal(t.scope_len, 0);
	assert_int_equal(t.pod_len, 0);
	free(b);
	/* Bounds of the builder. */
	static char big[OP_TEMPLATE_SCOPE_MAX + 1];
	assert_int_equal(control_template_join(big, sizeof(big), pod, 1, &b, &n),
			 -EMSGSIZE);
	assert_null(b);
	assert_int_equal(control_template_join(big, 1, pod, CONTROL_MAX_PAYLOAD, &b, &n),
			 -EMSGSIZE);
}

static void test_scoped_hostile(void **state)
{
	(void)state;
	struct control_template t;
	unsigned char b[64] = {0};
	struct op_template_scope h = {.scope_len = 4};
	/* Shorter than the header: every length below 8. */
	for (uint32_t n = 0; n < sizeof(h); n++) {
		assert_int_equal(control_template_split(OP_TEMPLATE_SCOPED, b, n, &t,
							err, sizeof(err)), -EPROTO);
		assert_non_null(strstr(err, "shorter than its 8-byte header"));
	}
	/* reserved not 0. */
	h.reserved = 1;
	memcpy(b, &h, sizeof(h));
	assert_int_equal(control_template_split(OP_TEMPLATE_SCOPED, b, 20, &t, err,
						sizeof(err)), -EPROTO);
	assert_non_null(strstr(err, "reserved"));
	/* scope_len past the body: by one, and by UINT32_MAX (no wrap). */
	h.reserved = 0;
	h.scope_len = 13;
	memcpy(b, &h, sizeof(h));
	assert_int_equal(control_template_split(OP_TEMPLATE_SCOPED, b, 20, &t, err,
						sizeof(err)), -EPROTO);
	assert_non_null(strstr(err, "scope_len 13"));
	h.scope_len = 12; /* exactly the rest: the pod is empty */
	memcpy(b, &h, sizeof(h));
	assert_int_equal(control_template_split(OP_TEMPLATE_SCOPED, b, 20, &t, err,
						sizeof(err)), 0);
	assert_int_equal(t.pod_len, 0);
	h.scope_len = UINT32_MAX;
	memcpy(b, &h, sizeof(h));
	assert_int_equal(control_template_split(OP_TEMPLATE_SCOPED, b, sizeof(b), &t,
						err, sizeof(err)), -EPROTO);
	/* Past OP_TEMPLATE_SCOPE_MAX though the body holds it. */
	size_t n = sizeof(h) + OP_TEMPLATE_SCOPE_MAX + 1;
	unsigned char *w = calloc(1, n);
	assert_non_null(w);
	h.scope_len = OP_TEMPLATE_SCOPE_MAX + 1;
	memcpy(w, &h, sizeof(h));
	assert_int_equal(control_template_split(OP_TEMPLATE_SCOPED, w, (uint32_t)n, &t,
						err, sizeof(err)), -EPROTO);
	h.scope_len = OP_TEMPLATE_SCOPE_MAX;
	memcpy(w, &h, sizeof(h));
	assert_int_equal(control_template_split(OP_TEMPLATE_SCOPED, w, (uint32_t)n, &t,
						err, sizeof(err)), 0);
	assert_int_equal(t.pod_len, 1);
	free(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain),
		cmocka_unit_test(test_join_split),
		cmocka_unit_test(test_scoped_hostile),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
