/* unit.intern_reclaim: issue 41's start-time reclaim of the intern table
 * (shm/intern.h), on a section in private memory re-attached as a
 * restarted daemon would:
 * - a string tagged with a producer uid that no holder marks is freed; a
 *   pinned one, a held one and id 0 stay; the epoch moves (I2); an
 *   observer reads a freed id as ENOENT;
 * - a new string takes a freed id and its bytes (the high-water mark and
 *   the arena's use do not move), the shortest room that fits; a rollback
 *   frees it again and the next add takes it again;
 * - before the reclaim, what a resumed table finds is pinned;
 * - a section holding free entries re-attaches (checked) with its free
 *   entries counted and reusable after the next reclaim.
 * old: no tags, no reclaim (intern_reclaim did not exist). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "shm/carve.h"
#include "shm/layout.h"
#include "shm/shm.h"

#define MAX 1024u
#define ARENA (UINT64_C(1) << 16)

static struct intern *attach(struct shm_span span, bool fresh)
{
	char err[256];
	struct intern *t = intern_create_in(span, MAX, ARENA, fresh, err, sizeof(err));
	if (t == NULL)
		fail_msg("intern_create_in: %s", err);
	return t;
}

static uint32_t add(struct intern *t, const char *s)
{
	uint32_t id;
	assert_int_equal(intern_add_str(t, s, &id), 0);
	return id;
}

/* Adds `s` as producer uid 1000's template would. */
static uint32_t add_tagged(struct intern *t, const char *s)
{
	struct intern_mark m;
	intern_mark(t, &m);
	uint32_t id = add(t, s);
	intern_tag_since(t, &m, intern_uid_tag(1000));
	return id;
}

static void reclaim(struct intern *t, const uint32_t *held, size_t n_held,
		    struct intern_reclaim_stats *st)
{
	uint64_t bits[MAX / 64 + 1] = {0};
	for (size_t i = 0; i < n_held; i++)
		bits[held[i] / 64] |= UINT64_C(1) << (held[i] % 64);
	assert_int_equal(intern_reclaim(t, bits, st), 0);
}

static void test_reclaim_and_reuse(void **state)
{
	(void)state;
	struct shm_span span = shm_span_private(intern_section_size(MAX, ARENA));
	assert_non_null(span.base);
	struct intern *t = attach(span, true);
	uint32_t pinned = add(t, "node-label");
	uint32_t held = add_tagged(t, "default/held-pod");
	uint32_t gone = add_tagged(t, "a-unique-label-value-of-the-attacker-0000");
	uint32_t small = add_tagged(t, "x1");
	uint32_t found = add_tagged(t, "found-by-the-config");
	uint32_t count = intern_count(t);
	intern_destroy(t);

	/* A restart: the table resumed; the start-up's config finds one. */
	t = attach(span, false);
	uint32_t id;
	assert_true(intern_find(t, "found-by-the-config", 19, &id));
	assert_int_equal(id, found);
	uint32_t epoch0, epoch1;
	assert_int_equal(intern_observe_epoch(span, MAX, ARENA, &epoch0), 0);
	struct intern_reclaim_stats st;
	reclaim(t, &held, 1, &st);
	assert_int_equal(st.freed, 2); /* gone and small; found was pinned */
	assert_int_equal(st.free, 2);
	assert_int_equal(intern_observe_epoch(span, MAX, ARENA, &epoch1), 0);
	assert_int_equal(epoch1, epoch0 + 1);
	assert_string_equal(intern_str(t, pinned), "node-label");
	assert_string_equal(intern_str(t, held), "default/held-pod");
	assert_string_equal(intern_str(t, found), "found-by-the-config");
	assert_false(intern_find(t, "x1", 2, &id));
	const char *s;
	uint32_t len;
	assert_int_equal(intern_observe_str(span, MAX, ARENA, gone, &s, &len), -ENOENT);
	uint32_t live;
	uint64_t bytes;
	intern_use(t, &live, &bytes);
	assert_int_equal(live, count - 2);

	/* Reuse: the short string takes small's room (3 bytes), not gone's. */
	struct intern_mark m;
	intern_mark(t, &m);
	uint32_t y = add(t, "y2");
	assert_int_equal(y, small);
	assert_int_equal(m.count, intern_count(t));
	uint32_t strings;
	intern_added_since(t, &m, &strings, &bytes);
	assert_int_equal(strings, 1);
	assert_int_equal(bytes, 3);
	/* A rollback frees it again; the next add takes it again. */
	intern_rollback(t, &m);
	assert_false(intern_find(t, "y2", 2, &id));
	assert_int_equal(add(t, "z3"), small);
	/* A long one takes gone's room; then the table appends. */
	assert_int_equal(add(t, "another-unique-value"), gone);
	uint32_t next = add(t, "appended");
	assert_int_equal(next, count);
	assert_int_equal(intern_observe_str(span, MAX, ARENA, gone, &s, &len), 0);
	assert_int_equal(len, strlen("another-unique-value"));
	assert_memory_equal(s, "another-unique-value", len);
	intern_destroy(t);
	shm_span_release(span);
}

static void test_free_entries_reattach(void **state)
{
	(void)state;
	struct shm_span span = shm_span_private(intern_section_size(MAX, ARENA));
	assert_non_null(span.base);
	struct intern *t = attach(span, true);
	uint32_t ids[8];
	for (int i = 0; i < 8; i++) {
		char s[32];
		snprintf(s, sizeof(s), "value-%d", i);
		ids[i] = add_tagged(t, s);
	}
	intern_destroy(t);
	t = attach(span, false);
	struct intern_reclaim_stats st;
	reclaim(t, ids, 2, &st); /* the first two held */
	assert_int_equal(st.freed, 6);
	intern_destroy(t);
	/* Another restart: the free entries are checked and counted, and the
	 * uid's tags of the held ones kept; reusable after its reclaim. */
	t = attach(span, false);
	uint32_t live;
	uint64_t bytes;
	intern_use(t, &live, &bytes);
	assert_int_equal(live, intern_count(t) - 6);
	reclaim(t, ids, 2, &st);
	assert_int_equal(st.freed, 0);
	assert_int_equal(st.free, 6);
	uint32_t count = intern_count(t);
	for (int i = 0; i < 6; i++) {
		char s[32];
		snprintf(s, sizeof(s), "other-%d", i);
		assert_true(add(t, s) < count);
	}
	assert_int_equal(intern_count(t), count);
	intern_destroy(t);
	shm_span_release(span);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reclaim_and_reuse),
		cmocka_unit_test(test_free_entries_reattach),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
