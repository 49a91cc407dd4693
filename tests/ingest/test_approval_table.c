/* unit.approval_table: ingest/approval.c's table on its own, on a clock
 * the test passes: its bounds (APPROVAL_ASKS_MAX asks: one more is not
 * asked, and goes as the deadline would send it: kept fail-closed,
 * disrupted fail-open), a page of pending asks with the rest counted, an
 * ask no drain looked at for APPROVAL_ASK_STALE_NS forgotten, a deny held
 * one deadline then asked again, and a connection gone taking its asks;
 * for quota reclaim and preemption (test_bars_and_due): what bars a pod
 * without an ask (a deny within its hold, a not-before ahead, fail-closed
 * past the deadline; not a pending ask within it, nor fail-open), and
 * approval_due telling each answer and each time passed once, the
 * drain's asks never unless reclaim or preemption asked too, the counts
 * by asker. */
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

static void test_bars_and_due(void **state)
{
	(void)state;
	char why[600], err[256];
	uint64_t ids[8];
	uint32_t askers[8];
	for (int open = 0; open < 2; open++) {
		struct approval *a = with(7, open, 1000);
		/* No ask: nothing bars; a drain's ask is never due. */
		assert_false(approval_bars(a, 0, 1, 0));
		assert_int_equal(decide(a, 9, 0, why), APPROVAL_KEEP);
		assert_int_equal(approval_due(a, 5000 * MS, ids, askers, 8), 0);
		/* Reclaim asks about 1 and 2, preemption about 3. */
		for (uint64_t p = 1; p <= 3; p++)
			assert_int_equal(approval_decide(a, 0, p, p < 3 ? OP_APPROVAL_RECLAIM
							 : OP_APPROVAL_PREEMPT, "pod p",
							 "n1", 0, why, sizeof(why)),
					 APPROVAL_KEEP);
		assert_false(approval_bars(a, 0, 1, 999 * MS)); /* pending, in time */
		assert_int_equal(approval_due(a, 999 * MS, ids, askers, 8), 0);
		static struct op_approval_ask page[8];
		uint32_t more;
		assert_int_equal(approval_pending(a, 7, page, 8, &more), 4);
		uint64_t ask[4] = {0};
		for (int k = 0; k < 4; k++)
			ask[page[k].placement_id - 1 < 4 ? page[k].placement_id - 1 : 3] =
				page[k].ask_id;
		/* 1 denied, 2 not before 500 ms: due once each now. */
		struct op_approval_answer deny = {.ask_id = ask[0],
						  .verdict = OP_APPROVAL_DENY};
		struct op_approval_answer later = {.ask_id = ask[1],
						   .verdict = OP_APPROVAL_NOT_BEFORE,
						   .not_before_ms = 500};
		assert_int_equal(approval_answer(a, 7, &deny, 100 * MS, err, sizeof(err)), 0);
		assert_int_equal(approval_answer(a, 7, &later, 100 * MS, err, sizeof(err)), 0);
		assert_int_equal(approval_due(a, 100 * MS, ids, askers, 8), 2);
		assert_int_equal(approval_due(a, 100 * MS, ids, askers, 8), 0);
		assert_true(approval_bars(a, 0, 1, 1099 * MS));  /* the deny's hold */
		assert_false(approval_bars(a, 0, 1, 1100 * MS));
		assert_true(approval_bars(a, 0, 2, 599 * MS));   /* not before */
		assert_false(approval_bars(a, 0, 2, 600 * MS));
		/* At 600 ms: 2's not-before due. At 1000: 3's deadline (and
		 * fail-closed bars it from then on). At 1100: 1's hold. */
		assert_int_equal(approval_due(a, 600 * MS, ids, askers, 8), 1);
		assert_int_equal(ids[0], 2);
		assert_int_equal(askers[0], 1u << OP_APPROVAL_RECLAIM);
		assert_int_equal(approval_due(a, 1000 * MS, ids, askers, 8), 1);
		assert_int_equal(ids[0], 3);
		assert_int_equal(askers[0], 1u << OP_APPROVAL_PREEMPT);
		assert_int_equal(approval_bars(a, 0, 3, 1000 * MS), !open);
		assert_int_equal(approval_due(a, 1100 * MS, ids, askers, 8), 1);
		assert_int_equal(ids[0], 1);
		struct approval_stats st;
		approval_stats(a, &st);
		assert_int_equal(st.by_asker[0].asked, 1);
		assert_int_equal(st.by_asker[1].asked, 2);
		assert_int_equal(st.by_asker[2].asked, 1);
		assert_int_equal(st.by_asker[1].denied, 1);
		assert_int_equal(st.by_asker[1].not_before, 1);
		/* The deadline passed unanswered, told by approval_due. */
		assert_int_equal(st.by_asker[2].timed_out_open, (uint64_t)open);
		assert_int_equal(st.by_asker[2].timed_out_closed, (uint64_t)!open);
		assert_int_equal(st.asked, 4);
		/* The drain's ask about 9, asked by reclaim too: shared, and
		 * reclaim's to wake from then on (its deadline passed). */
		assert_int_equal(approval_decide(a, 0, 9, OP_APPROVAL_RECLAIM, "pod p",
						 "n1", 1100 * MS, why, sizeof(why)),
				 open ? APPROVAL_EVICT : APPROVAL_KEEP);
		assert_int_equal(approval_due(a, 1100 * MS, ids, askers, 8), 1);
		assert_int_equal(ids[0], 9);
		assert_int_equal(askers[0], (1u << OP_APPROVAL_DRAIN) |
					    (1u << OP_APPROVAL_RECLAIM));
		approval_free(a);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_asks_bounded),
		cmocka_unit_test(test_stale_and_deny),
		cmocka_unit_test(test_bars_and_due),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
