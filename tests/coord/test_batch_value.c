/* tests/coord: a batch key's value (coord/batch_value.c), several
 * placements a key. Checks: the writer's text decodes to the same
 * placements in the same order and the writer makes the same bytes from
 * them (versions 1, 2 and 3 mixed); the bounds, each at the bound taken
 * and one past refused: BATCH_PLACEMENTS_MAX placements, BATCH_VALUE_MAX
 * bytes, a uid of BATCH_UID_MAX bytes; the decoder's refusals name the
 * line and the field, and its callback sees nothing of a refused text;
 * a callback's error stops the walk. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coord/coord.h"

/* What the callback saw. */
struct seen {
	int n;
	char uid[BATCH_PLACEMENTS_MAX + 1][BATCH_UID_MAX + 1];
	struct placement_value v[4];
	int stop_at; /* return -ECANCELED at this one (1-based); 0: never */
};

static int collect(void *ctx, const char *uid, const struct placement_value *v)
{
	struct seen *s = ctx;
	if (s->n >= BATCH_PLACEMENTS_MAX + 1)
		return -EOVERFLOW;
	snprintf(s->uid[s->n], sizeof(s->uid[s->n]), "%s", uid);
	if (s->n < 4)
		s->v[s->n] = *v;
	s->n++;
	return s->stop_at == s->n ? -ECANCELED : 0;
}

static struct placement_value small(void)
{
	struct placement_value v = {.version = 1, .node_generation = 1, .cpu_milli = 1,
				    .mem_bytes = 1, .gpus = 1};
	snprintf(v.node, sizeof(v.node), "n");
	return v;
}

static void both_ways(void **state)
{
	(void)state;
	struct placement_value v1 = small();
	struct placement_value v2 = {.version = 2, .node_generation = 7, .cpu_milli = 250};
	snprintf(v2.node, sizeof(v2.node), "node-2.example");
	snprintf(v2.ns, sizeof(v2.ns), "default");
	snprintf(v2.labels, sizeof(v2.labels), "app=web tier=front");
	v2.n_labels = 2;
	struct placement_value v3 = {.version = 3, .node_generation = UINT64_MAX,
				     .cpu_milli = INT64_MAX, .mem_bytes = 1 << 30, .gpus = 8};
	snprintf(v3.node, sizeof(v3.node), "n3");
	snprintf(v3.queue, sizeof(v3.queue), "cq.team-a");
	snprintf(v3.flavor, sizeof(v3.flavor), "h200");
	snprintf(v3.ns, sizeof(v3.ns), "team-a");

	static struct batch_writer w;
	batch_value_start(&w);
	assert_int_equal(batch_value_add(&w, "0b5e-uid", &v3), 0);
	assert_int_equal(batch_value_add(&w, "A", &v1), 0);
	assert_int_equal(batch_value_add(&w, "a", &v2), 0);
	assert_int_equal(w.count, 3);
	assert_string_equal(w.text, "4\n0b5e-uid 3 n3 18446744073709551615 9223372036854775807 "
				    "1073741824 8 cq.team-a h200 team-a\n"
				    "A 1 n 1 1 1 1 -\n"
				    "a 2 node-2.example 7 250 0 0 - default app=web tier=front");
	assert_int_equal(w.len, strlen(w.text));
	assert_true(batch_value_is(w.text, w.len));

	static struct seen s;
	char msg[256];
	assert_int_equal(batch_value_decode(w.text, w.len, collect, &s, msg, sizeof(msg)), 3);
	assert_int_equal(s.n, 3);
	assert_string_equal(s.uid[0], "0b5e-uid");
	assert_string_equal(s.uid[1], "A");
	assert_string_equal(s.uid[2], "a");
	assert_memory_equal(&s.v[0], &v3, sizeof(v3));
	assert_memory_equal(&s.v[1], &v1, sizeof(v1));
	assert_memory_equal(&s.v[2], &v2, sizeof(v2));
	assert_int_equal(batch_value_decode(w.text, w.len, NULL, NULL, msg, sizeof(msg)), 3);

	/* A key of one placement is not a batch. */
	assert_false(batch_value_is("3 n 1 1 1 1 - - -", 17));
	assert_false(batch_value_is("4", 1));
}

static void writer_refusals_leave_it_unchanged(void **state)
{
	(void)state;
	struct placement_value v = small();
	static struct batch_writer w, before;
	batch_value_start(&w);
	assert_int_equal(batch_value_add(&w, "m", &v), 0);
	before = w;
	/* Not above the last: equal, below, a prefix of it. */
	assert_int_equal(batch_value_add(&w, "m", &v), -EINVAL);
	assert_int_equal(batch_value_add(&w, "l", &v), -EINVAL);
	assert_int_equal(batch_value_add(&w, "", &v), -EINVAL);
	assert_int_equal(batch_value_add(&w, "n/1", &v), -EINVAL);
	assert_int_equal(batch_value_add(&w, "n 1", &v), -EINVAL);
	assert_int_equal(batch_value_add(&w, "n\n1", &v), -EINVAL);
	struct placement_value bad = v;
	bad.cpu_milli = -1;
	assert_int_equal(batch_value_add(&w, "n", &bad), -EINVAL);
	assert_memory_equal(&w, &before, sizeof(w));
	assert_int_equal(batch_value_add(&w, "mm", &v), 0);
}

/* A uid of BATCH_UID_MAX bytes is taken, one more byte refused, by the
 * writer and the decoder. */
static void uid_bound(void **state)
{
	(void)state;
	struct placement_value v = small();
	char uid[BATCH_UID_MAX + 2];
	memset(uid, 'u', sizeof(uid) - 1);
	uid[BATCH_UID_MAX] = '\0';
	static struct batch_writer w;
	batch_value_start(&w);
	assert_int_equal(batch_value_add(&w, uid, &v), 0);
	char msg[256];
	assert_int_equal(batch_value_decode(w.text, w.len, NULL, NULL, msg, sizeof(msg)), 1);

	uid[BATCH_UID_MAX] = 'u';
	uid[BATCH_UID_MAX + 1] = '\0';
	batch_value_start(&w);
	assert_int_equal(batch_value_add(&w, uid, &v), -EINVAL);
	char text[256];
	int n = snprintf(text, sizeof(text), "4\n%s 1 n 1 1 1 1 -", uid);
	assert_int_equal(batch_value_decode(text, (size_t)n, NULL, NULL, msg, sizeof(msg)),
			 -EINVAL);
	assert_non_null(strstr(msg, "line 2: uid"));
}

/* BATCH_PLACEMENTS_MAX placements are taken; the next add is -E2BIG and
 * a text of one more line is refused. */
static void count_bound(void **state)
{
	(void)state;
	struct placement_value v = small();
	static struct batch_writer w;
	batch_value_start(&w);
	char uid[16];
	for (int i = 0; i < BATCH_PLACEMENTS_MAX; i++) {
		snprintf(uid, sizeof(uid), "u%04d", i);
		assert_int_equal(batch_value_add(&w, uid, &v), 0);
	}
	size_t len = w.len;
	snprintf(uid, sizeof(uid), "u%04d", BATCH_PLACEMENTS_MAX);
	assert_int_equal(batch_value_add(&w, uid, &v), -E2BIG);
	assert_int_equal(w.len, len);
	assert_int_equal(w.count, BATCH_PLACEMENTS_MAX);

	static struct seen s;
	char msg[256];
	assert_int_equal(batch_value_decode(w.text, w.len, collect, &s, msg, sizeof(msg)),
			 BATCH_PLACEMENTS_MAX);
	assert_int_equal(s.n, BATCH_PLACEMENTS_MAX);

	static char text[BATCH_VALUE_MAX + 64];
	memcpy(text, w.text, w.len);
	int n = snprintf(text + w.len, sizeof(text) - w.len, "\n%s 1 n 1 1 1 1 -", uid);
	memset(&s, 0, sizeof(s));
	assert_int_equal(batch_value_decode(text, w.len + (size_t)n, collect, &s, msg, sizeof(msg)),
			 -EINVAL);
	assert_non_null(strstr(msg, "more than 128 placements"));
	assert_int_equal(s.n, 0);
}

/* Exactly BATCH_VALUE_MAX bytes are taken, by the writer and the decoder;
 * a line one byte longer is -E2BIG, a text one byte longer refused by its
 * length. Lines "\nuNN 1 <node> 1 1 1 1 -", the node's length chosen to
 * land on the bound. */
static void bytes_bound(void **state)
{
	(void)state;
	struct placement_value v = small();
	static struct batch_writer w;
	batch_value_start(&w);
	const size_t fixed = strlen("\nu00 1  1 1 1 1 -");
	char uid[16];
	int i = 0;
	for (;; i++) {
		size_t left = BATCH_VALUE_MAX - w.len;
		if (left <= fixed + PLACEMENT_NODE_MAX)
			break;
		/* Leave at least fixed + 1 for the last line. */
		size_t node = left - (fixed + PLACEMENT_NODE_MAX) > fixed ? PLACEMENT_NODE_MAX
									    : 1;
		memset(v.node, 'a', node);
		v.node[node] = '\0';
		snprintf(uid, sizeof(uid), "u%02d", i);
		assert_int_equal(batch_value_add(&w, uid, &v), 0);
	}
	size_t node = BATCH_VALUE_MAX - w.len - fixed;
	assert_true(node >= 1 && node <= PLACEMENT_NODE_MAX);
	memset(v.node, 'b', node + 1);
	v.node[node + 1] = '\0';
	snprintf(uid, sizeof(uid), "u%02d", i);
	size_t len = w.len;
	assert_int_equal(batch_value_add(&w, uid, &v), -E2BIG);
	assert_int_equal(w.len, len);
	v.node[node] = '\0';
	assert_int_equal(batch_value_add(&w, uid, &v), 0);
	assert_int_equal(w.len, BATCH_VALUE_MAX);
	assert_int_equal(strlen(w.text), BATCH_VALUE_MAX);

	char msg[256];
	int count = (int)w.count;
	assert_int_equal(batch_value_decode(w.text, w.len, NULL, NULL, msg, sizeof(msg)), count);
	static char text[BATCH_VALUE_MAX + 1];
	memcpy(text, w.text, BATCH_VALUE_MAX);
	text[BATCH_VALUE_MAX] = '-';
	assert_int_equal(batch_value_decode(text, sizeof(text), NULL, NULL, msg, sizeof(msg)),
			 -EINVAL);
	assert_non_null(strstr(msg, "8193 bytes; expected at most 8192"));
}

static void decoder_refusals(void **state)
{
	(void)state;
	static const struct {
		const char *text;
		const char *why;
	} bad[] = {
		{"", "version line"},
		{"4", "version line"},
		{"4\n", "version line"},
		{"3\na 1 n 1 1 1 1 -", "version line"},
		{"4 a 1 n 1 1 1 1 -", "version line"},
		{"40\na 1 n 1 1 1 1 -", "version line"},
		{"4\n\na 1 n 1 1 1 1 -", "line 2: uid \"\""},
		{"4\na 1 n 1 1 1 1 -\n", "line 3: uid \"\""},
		{"4\na 1 n 1 1 1 1 -\r\n", "line 2 (uid \"a\"): placement value: field queue"},
		{"4\na", "line 2: uid \"a\" has no placement value"},
		{"4\na ", "line 2 (uid \"a\"): placement value: field version"},
		{"4\n a 1 n 1 1 1 1 -", "line 2: uid \"\""},
		{"4\na  1 n 1 1 1 1 -", "line 2 (uid \"a\"): placement value: field version"},
		{"4\na/b 1 n 1 1 1 1 -", "line 2: uid \"a/b\""},
		{"4\na 4\nb 1 n 1 1 1 1 -", "line 2 (uid \"a\"): placement value: field version"},
		{"4\na 1 n 1 1 1 1 -\nb 1 N 1 1 1 1 -", "line 3 (uid \"b\"): placement value: "
							"field node"},
		{"4\nb 1 n 1 1 1 1 -\na 1 n 1 1 1 1 -", "line 3: uid \"a\" is not above"},
		{"4\na 1 n 1 1 1 1 -\na 1 n 1 1 1 1 -", "line 3: uid \"a\" is not above"},
		{"4\nab 1 n 1 1 1 1 -\na 1 n 1 1 1 1 -", "line 3: uid \"a\" is not above"},
		{"4\na 2 n 1 1 1 1 - - a=1\nb 2 n 1 1 1 1 - - b=1 a=1",
		 "line 3 (uid \"b\"): placement value: labels"},
	};
	static struct seen s;
	char msg[300];
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&s, 0, sizeof(s));
		int rc = batch_value_decode(bad[i].text, strlen(bad[i].text), collect, &s, msg,
					    sizeof(msg));
		if (rc != -EINVAL || !strstr(msg, bad[i].why) || s.n != 0)
			fail_msg("\"%s\": rc %d, %d seen, \"%s\"; expected -EINVAL naming %s",
				 bad[i].text, rc, s.n, msg, bad[i].why);
	}
	/* A NUL inside: a uid's byte, refused. */
	assert_int_equal(batch_value_decode("4\na\0 1 n 1 1 1 1 -", 18, NULL, NULL, msg,
					    sizeof(msg)),
			 -EINVAL);
	assert_non_null(strstr(msg, "line 2: uid"));
}

static void callback_error_stops(void **state)
{
	(void)state;
	const char *text = "4\na 1 n 1 1 1 1 -\nb 1 n 1 1 1 1 -\nc 1 n 1 1 1 1 -";
	static struct seen s;
	s.stop_at = 2;
	char msg[256];
	assert_int_equal(batch_value_decode(text, strlen(text), collect, &s, msg, sizeof(msg)),
			 -ECANCELED);
	assert_int_equal(s.n, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(both_ways),
		cmocka_unit_test(writer_refusals_leave_it_unchanged),
		cmocka_unit_test(uid_bound),
		cmocka_unit_test(count_bound),
		cmocka_unit_test(bytes_bound),
		cmocka_unit_test(decoder_refusals),
		cmocka_unit_test(callback_error_stops),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
