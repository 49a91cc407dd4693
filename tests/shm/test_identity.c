/* unit.identity: the seqlock over a producer identity slot (shm/identity.h),
 * stepped by hand. The reader's hook runs between its copy (R3) and its
 * check (R4), where the daemon may free the slot and give it to another
 * identity (issue 41: identities are freed and their slots taken again).
 * Before the seqlock an observer loaded `used`, copied the name and
 * returned it: a reuse under the copy gave half of each name, and `used`,
 * 1 again, could not tell. Each case here makes the writer strike at that
 * instant and checks the reader throws its copy away. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "shm/shm.h"

struct strike {
	struct state_identity *slot;
	int kind;     /* 0: reuse, 1: free only, 2: half a name (mid-W2) */
	int calls;
};

/* The writer, between the reader's copy and its check. */
static void strike(void *arg)
{
	struct strike *s = arg;
	s->calls++;
	switch (s->kind) {
	case 0: /* freed (identities_reclaim), then taken (identity_of) */
		__atomic_store_n(&s->slot->used, 0, __ATOMIC_RELEASE);
		state_identity_write(s->slot, 2002, "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb");
		break;
	case 1:
		__atomic_store_n(&s->slot->used, 0, __ATOMIC_RELEASE);
		break;
	case 2: /* W1 and part of W2: the writer is still at it */
		__atomic_store_n(&s->slot->used, 0, __ATOMIC_RELEASE);
		s->slot->generation++;
		memcpy(s->slot->name, "bbbbbbbb", 8);
		break;
	}
}

static void make(struct state_identity *id)
{
	memset(id, 0, sizeof(*id));
	state_identity_write(id, 1001, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
}

static void stable_slot_is_copied(void **state)
{
	(void)state;
	struct state_identity id;
	make(&id);
	uint32_t uid = 0;
	char name[64];
	assert_int_equal(state_identity_read(&id, &uid, name, NULL, NULL), 1);
	assert_int_equal(uid, 1001);
	assert_string_equal(name, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
	assert_int_equal(id.generation, 2);
	assert_int_equal(id.used, 1);
}

static void free_slot_is_skipped(void **state)
{
	(void)state;
	struct state_identity id;
	memset(&id, 0, sizeof(id));
	uint32_t uid = 0;
	char name[64];
	assert_int_equal(state_identity_read(&id, &uid, name, NULL, NULL), 0);
}

static void reuse_under_the_copy_is_retried(void **state)
{
	(void)state;
	struct state_identity id;
	make(&id);
	struct strike s = {.slot = &id, .kind = 0};
	uint32_t uid = 0;
	char name[64];
	/* The copy holds the old identity; the slot is another's now. */
	assert_int_equal(state_identity_read(&id, &uid, name, strike, &s), -EAGAIN);
	assert_int_equal(s.calls, 1);
	/* The next try copies the new one whole. */
	assert_int_equal(state_identity_read(&id, &uid, name, NULL, NULL), 1);
	assert_int_equal(uid, 2002);
	assert_string_equal(name, "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb");
}

static void free_under_the_copy_reads_free(void **state)
{
	(void)state;
	struct state_identity id;
	make(&id);
	struct strike s = {.slot = &id, .kind = 1};
	uint32_t uid = 0;
	char name[64];
	assert_int_equal(state_identity_read(&id, &uid, name, strike, &s), 0);
}

static void half_written_is_retried_until_done(void **state)
{
	(void)state;
	struct state_identity id;
	make(&id);
	struct strike s = {.slot = &id, .kind = 2};
	uint32_t uid = 0;
	char name[64];
	assert_int_equal(state_identity_read(&id, &uid, name, strike, &s), -EAGAIN);
	/* Still odd: the writer has not finished, so no copy is taken. */
	assert_int_equal(state_identity_read(&id, &uid, name, NULL, NULL), -EAGAIN);
	/* The writer finishes (W2-W4). */
	id.uid = 2002;
	snprintf(id.name, sizeof(id.name), "%s", "bbbbbbbbccc");
	id.generation++;
	id.used = 1;
	assert_int_equal(state_identity_read(&id, &uid, name, NULL, NULL), 1);
	assert_string_equal(name, "bbbbbbbbccc");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(stable_slot_is_copied),
		cmocka_unit_test(free_slot_is_skipped),
		cmocka_unit_test(reuse_under_the_copy_is_retried),
		cmocka_unit_test(free_under_the_copy_reads_free),
		cmocka_unit_test(half_written_is_retried_until_done),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
