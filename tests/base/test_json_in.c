/* base/json_in.h: the strict JSON decoders' core, shared by the Kubernetes
 * decoder and the gateway's bodies. The one error line and its parts left
 * out when empty, type errors, null read as absent, map keys quoted, and
 * the bounds: a path or a value of any length never overruns its buffer. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "base/base.h"

static void test_error_line_parts(void **state)
{
	(void)state;
	char err[256];
	struct json_in in = {.source = "c.json", .err = err, .err_len = sizeof(err)};
	snprintf(in.subject, sizeof(in.subject), "pod default/a");
	size_t m = json_in_field(&in, "spec");
	json_in_field(&in, "containers");
	json_in_index(&in, 2);
	assert_int_equal(json_in_fail(&in, -EINVAL, "bad %d", 7), -EINVAL);
	assert_string_equal(err, "c.json: pod default/a: spec.containers[2]: bad 7");
	json_in_pop(&in, m);
	assert_int_equal(in.path_len, 0);
	assert_int_equal(json_in_fail_at(&in, "kind", -EPERM, "no"), -EPERM);
	assert_string_equal(err, "c.json: pod default/a: kind: no");
	/* Parts left out when empty: the gateway's "line 3: <path>: <what>". */
	struct json_in gw = {.source = "line 3", .err = err, .err_len = sizeof(err)};
	json_in_field(&gw, "items");
	json_in_fail(&gw, -EINVAL, "x");
	assert_string_equal(err, "line 3: items: x");
	assert_int_equal(in.n_errors, 2);
	assert_int_equal(gw.n_errors, 1);
	/* No buffer: counted, nothing written. */
	struct json_in quiet = {0};
	assert_int_equal(json_in_fail(&quiet, -EINVAL, "x"), -EINVAL);
	assert_int_equal(quiet.n_errors, 1);
}

/* A decoder that reads on after an error (max_lines > 0) gets each line
 * appended, those past max_lines counted, and a source line when set. */
static void test_errors_collected(void **state)
{
	(void)state;
	char err[256];
	struct json_in in = {.source = "s.yaml", .err = err, .err_len = sizeof(err),
			     .max_lines = 2};
	in.line = 4;
	json_in_field(&in, "profiles");
	json_in_fail(&in, -EINVAL, "one");
	in.line = 0;
	json_in_fail_at(&in, "x", -EINVAL, "two");
	json_in_fail(&in, -EINVAL, "three");
	assert_string_equal(err, "s.yaml:4: profiles: one\ns.yaml: profiles.x: two");
	assert_int_equal(in.n_errors, 3);
	assert_int_equal(in.n_dropped, 1);
	/* A small buffer: cut, never overrun, still terminated. */
	char small[20];
	struct json_in cut = {.source = "s", .err = small, .err_len = sizeof(small),
			      .max_lines = 8};
	for (int i = 0; i < 5; i++)
		json_in_fail(&cut, -EINVAL, "a long message %d", i);
	assert_int_equal(strlen(small), sizeof(small) - 1);
	assert_int_equal(cut.n_errors, 5);
}

static void test_typed_access(void **state)
{
	(void)state;
	char err[256];
	struct json_in in = {.err = err, .err_len = sizeof(err)};
	json_t *o = json_loads("{\"a\":[1],\"n\":null,\"s\":\"x\"}", 0, NULL);
	assert_non_null(o);
	json_t *v;
	assert_int_equal(json_in_get(&in, o, "a", JSON_IN_OBJECT, &v), -EINVAL);
	assert_null(v);
	assert_string_equal(err, "a: expected an object, got an array");
	assert_int_equal(in.path_len, 0); /* the member's name popped again */
	assert_int_equal(json_in_get(&in, o, "n", JSON_IN_STRING, &v), 0);
	assert_null(v); /* null reads as absent, as in Go */
	const char *s;
	size_t len;
	assert_int_equal(json_in_get_str(&in, o, "missing", &s, &len), 0);
	assert_string_equal(s, "");
	assert_int_equal(json_in_get_str(&in, o, "s", &s, &len), 0);
	assert_int_equal(len, 1);
	assert_string_equal(json_in_kind(NULL), "nothing");
	assert_int_equal(json_in_check(&in, json_object_get(o, "s"), JSON_IN_INT),
			 -EINVAL);
	assert_string_equal(err, "expected an integer, got a string");
	json_decref(o);
}

static void test_bounds(void **state)
{
	(void)state;
	char err[64];
	struct json_in in = {.err = err, .err_len = sizeof(err)};
	char big[2000];
	memset(big, 'k', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	for (int i = 0; i < 10; i++)
		json_in_field(&in, big);
	assert_int_equal(in.path_len, JSON_IN_PATH_MAX - 1);
	assert_int_equal(strlen(in.path), JSON_IN_PATH_MAX - 1);
	json_in_fail(&in, -EINVAL, "%s", big);
	assert_int_equal(strlen(err), sizeof(err) - 1);
	/* A key that is not plain is quoted, escaped and cut. */
	json_in_pop(&in, 0);
	json_in_key(&in, "a b\"\n", 5);
	assert_string_equal(in.path, "[\"a b\\\"\\x0a\"]");
	char q[JSON_IN_SHOW_MAX + 16];
	json_in_show_str(big, strlen(big), q, sizeof(q));
	assert_int_equal(strlen(q), 1 + JSON_IN_SHOW_MAX + 3 + 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_error_line_parts),
		cmocka_unit_test(test_errors_collected),
		cmocka_unit_test(test_typed_access),
		cmocka_unit_test(test_bounds),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
