/* unit.sync_history: the replay of etcd's watch events into the sync
 * checker's events (sync_history.h), without etcd. A pod key's put and
 * delete are one event each; a batch key's (shards/<s>/sets/<name>,
 * coord/batch_value.h) are diffed against the uids the key held: its
 * first put puts each, a rewrite deletes the uids it dropped and puts the
 * ones it added (the kept ones are no event: sync_check.c counts a put
 * over a live key as "twice"), a delete deletes every one held; two
 * batch keys hold their uids apart; a uid kept with another placement, or
 * a value that does not decode, is -EPROTO naming the key. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "coord/coord.h"
#include "sync_history.h"

#define SHARDS "/t/shards/"

static int take(struct sync_history_reader *r, const char *key, const char *value,
		int64_t rev)
{
	char k[256];
	snprintf(k, sizeof(k), SHARDS "%s", key);
	struct etcd_watch_event we = {.deleted = value == NULL};
	we.kv.key = (uint8_t *)k;
	we.kv.key_len = strlen(k);
	we.kv.value = (uint8_t *)(value ? value : "");
	we.kv.value_len = value ? strlen(value) : 0;
	we.kv.mod_revision = rev;
	we.kv.version = value ? 1 : 0;
	return sync_history_take(r, &we);
}

/* Event i: "P<shard>/<uid>@<node>" or "D<shard>/<uid>", at rev. */
static void expect(const struct sync_history_reader *r, size_t i, const char *what, int64_t rev)
{
	assert_true(i < r->n);
	const struct sync_event *e = &r->ev[i];
	char got[200];
	if (e->deleted)
		snprintf(got, sizeof(got), "D%s/%s", e->shard, e->name);
	else
		snprintf(got, sizeof(got), "P%s/%s@%s", e->shard, e->name, e->node);
	assert_string_equal(got, what);
	assert_int_equal(e->revision, rev);
	assert_int_equal(e->kind, SYNC_EVENT_POD);
}

static void batch_keys_replay_as_placements(void **state)
{
	(void)state;
	struct sync_history_reader r;
	sync_history_reader_init(&r, SHARDS);
	assert_int_equal(take(&r, "1/pods/x", "1 n0 1 100 1 0 -", 3), 0);
	assert_int_equal(take(&r, "1/commit/00/0", "x", 4), 0); /* not a placement */
	assert_int_equal(take(&r, "1/sets/h-1", "4\na 1 n0 1 100 1 0 -\nb 1 n1 1 200 1 0 -", 5),
			 0);
	assert_int_equal(take(&r, "2/sets/h-1", "4\na 1 n2 1 100 1 0 -", 6), 0);
	assert_int_equal(take(&r, "1/sets/h-1", "4\nb 1 n1 1 200 1 0 -\nc 1 n0 1 300 1 0 -", 7),
			 0);
	assert_int_equal(take(&r, "1/sets/h-1", NULL, 8), 0);
	assert_int_equal(take(&r, "1/pods/x", NULL, 9), 0);
	assert_int_equal(take(&r, "1/sets/never", NULL, 10), 0); /* held nothing */
	assert_int_equal(r.n, 9);
	expect(&r, 0, "P1/x@n0", 3);
	expect(&r, 1, "P1/a@n0", 5);
	expect(&r, 2, "P1/b@n1", 5);
	assert_int_equal(r.ev[2].cpu_milli, 200);
	assert_int_equal(r.ev[2].version, 1);
	expect(&r, 3, "P2/a@n2", 6);
	expect(&r, 4, "D1/a", 7);
	expect(&r, 5, "P1/c@n0", 7);
	assert_int_equal(r.ev[5].cpu_milli, 300);
	expect(&r, 6, "D1/b", 8);
	expect(&r, 7, "D1/c", 8);
	expect(&r, 8, "D1/x", 9);
	assert_int_equal(r.n_batches, 1); /* 2/sets/h-1 */
	sync_history_reader_free(&r);
}

static void refusals_name_the_key(void **state)
{
	(void)state;
	struct sync_history_reader r;
	sync_history_reader_init(&r, SHARDS);
	assert_int_equal(take(&r, "1/sets/h-1", "4\na 1 n0 1 100 1 0 -", 5), 0);
	/* a kept, but on another node: not a rewrite a writer makes. */
	assert_int_equal(take(&r, "1/sets/h-1", "4\na 1 n1 1 100 1 0 -", 6), -EPROTO);
	assert_non_null(strstr(r.err, "/t/shards/1/sets/h-1 at revision 6: uid a changed"));
	/* Not a batch value (uids descending). */
	assert_int_equal(take(&r, "1/sets/h-2", "4\nb 1 n0 1 1 1 0 -\na 1 n0 1 1 1 0 -", 7),
			 -EPROTO);
	assert_non_null(strstr(r.err, "/t/shards/1/sets/h-2: batch value: line 3"));
	/* A key of one placement holding a batch value is refused too. */
	assert_int_equal(take(&r, "1/pods/y", "4\na 1 n0 1 100 1 0 -", 8), -EPROTO);
	assert_int_equal(r.n, 1);
	sync_history_reader_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(batch_keys_replay_as_placements),
		cmocka_unit_test(refusals_name_the_key),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
