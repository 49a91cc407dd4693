/* unit.approval_table: ingest/approval.c's table on its own, on a clock
 * the test passes: its bounds (APPROVAL_ASKS_MAX asks: one more is not
 * asked, and goes as the deadline would send it: kept fail-closed,
 * disrupted fail-open), a page of pending asks with the rest counted, an
 * ask no drain looked at for APPROVAL_ASK_STALE_NS forgotten, a deny held
 * one deadline then asked again, and a connection gone taking its asks. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ingest/approval.h"

#define MS UINT64_C(1000000)

static struct approval *with(uint64_t conn, bool fail_open, uint32_t deadline_ms)
{
	struct approval *a = approval_create();
	assert_non_null(a);
	struct control_approval_register r = {.deadline_ms = deadline_ms,
					      .fail_open = fail_open,
					      .selector = "", .selector_len = 0};
	snprintf(r.name, sizeof(r.name), "m%llu", (unsigned long long)conn);
	uint32_t id;
	char err[256];
	assert_int_equal(approval_register(a, conn, &r, &id, err, sizeof(err)), 0);
	return a;
}

static enum approval_outcome decide(struct approval *a, uint64_t placement,
				    uint64_t now, char *why)
{
	return approval_decide(a, 0, placement, OP_APPROVAL_DRAIN, "pod p", "n1",
			       now, why, 600);
}

static void test_asks_bounded(void **state)
{
	(void)state;
	char why[600];
	for (int open = 0; open < 2; open++) {
		struct approval *a = with(7, open, 1000);
		for (uint64_t k = 1; k <= APPROVAL_ASKS_MAX; k++)
			assert_int_equal(decide(a, k, 1000 * MS, why), APPROVAL_KEEP);
		assert_non_null(strstr(why, "no answer yet"));
		enum approval_outcome o = decide(a, APPROVAL_ASKS_MAX + 1, 1000 * MS, why);
		assert_int_equal(o, open ? APPROVAL_EVICT : APPROVAL_KEEP);
		assert_non_null(strstr(why, "asks outstanding"));
		/* A page: 64 of them, the rest counted. */
		static struct op_approval_ask page[OP_APPROVAL_PAGE];
		uint32_t more;
		assert_int_equal(approval_pending(a, 7, page, OP_APPROVAL_PAGE, &more),
				 OP_APPROVAL_PAGE);
		assert_int_equal(more, APPROVAL_ASKS_MAX - OP_APPROVAL_PAGE);
		assert_int_equal(approval_pending(a, 8, page, OP_APPROVAL_PAGE, &more), 0);
		/* A disrupted pod frees its ask: room for the next one. */
		approval_disrupted(a, 1);
		assert_int_equal(decide(a, APPROVAL_ASKS_MAX + 1, 1000 * MS, why),
				 APPROVAL_KEEP);
		assert_non_null(strstr(why, "asked (ask"));
		struct approval_stats st;
		approval_stats(a, &st);
		assert_int_equal(st.asked, APPROVAL_ASKS_MAX + 1);
		approval_free(a);
	}
}

static void test_stale_and_deny(void **state)
{
	(void)state;
	char why[600], err[256];
	struct approval *a = with(7, false, 1000);
	assert_int_equal(decide(a, 1, 0, why), APPROVAL_KEEP);
	static struct op_approval_ask page[4];
	uint32_t more;
	assert_int_equal(approval_pending(a, 7, page, 4, &more), 1);
	struct op_approval_answer ans = {.ask_id = page[0].ask_id,
					 .verdict = OP_APPROVAL_DENY};
	assert_int_equal(approval_answer(a, 8, &ans, 10 * MS, err, sizeof(err)), -EPERM);
	assert_int_equal(approval_answer(a, 7, &ans, 10 * MS, err, sizeof(err)), 0);
	assert_int_equal(decide(a, 1, 1009 * MS, why), APPROVAL_KEEP);
	assert_non_null(strstr(why, ": denied"));
	/* One deadline after the deny: asked again, a new ask. */
	assert_int_equal(decide(a, 1, 1010 * MS, why), APPROVAL_KEEP);
	assert_non_null(strstr(why, "no answer yet"));
	assert_int_equal(approval_pending(a, 7, page, 4, &more), 1);
	uint64_t second = page[0].ask_id;
	assert_true(second > ans.ask_id);
	ans.verdict = OP_APPROVAL_GRANT;
	assert_int_equal(approval_answer(a, 7, &ans, 1020 * MS, err, sizeof(err)),
			 -ENOENT); /* the old ask's id is gone */
	/* Nobody looks at it for APPROVAL_ASK_STALE_NS: forgotten. */
	uint64_t later = 1010 * MS + APPROVAL_ASK_STALE_NS + 1;
	assert_int_equal(decide(a, 2, later, why), APPROVAL_KEEP);
	assert_int_equal(approval_pending(a, 7, page, 4, &more), 1);
	assert_true(page[0].ask_id > second);
	/* The connection gone: its registration and asks with it. */
	assert_true(approval_drop(a, 7));
	assert_false(approval_drop(a, 7));
	assert_int_equal(approval_pending(a, 7, page, 4, &more), 0);
	struct approval_stats st;
	approval_stats(a, &st);
	assert_int_equal(st.registrations, 0);
	assert_int_equal(st.denied, 1);
	approval_free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_asks_bounded),
		cmocka_unit_test(test_stale_and_deny),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
