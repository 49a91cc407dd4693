/* tests/coord: quota by escrow's values in etcd
 * (coord/quota_escrow_value.h), a decoder of outside input.
 *
 * round_trips: each kind encodes and decodes back to the same value and
 * text, the largest value (every cell at its longest names and numbers)
 * included, and it fits QUOTA_ESCROW_VALUE_MAX.
 * refusals: each way out of the format refused with a message naming the
 * field and a zeroed value, and the encoder refusing what the decoder
 * would (a bounded input: over QUOTA_ESCROW_VALUE_MAX bytes, over
 * QUOTA_ESCROW_CELLS cells). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "coord/coord.h"

static struct quota_escrow_value v, back, zero;
static char text[QUOTA_ESCROW_VALUE_MAX + 2], again[QUOTA_ESCROW_VALUE_MAX + 1];

static void round_trip(const char *want)
{
	char msg[256];
	int n = quota_escrow_value_encode(&v, text);
	assert_true(n > 0);
	if (want != NULL)
		assert_string_equal(text, want);
	assert_int_equal(quota_escrow_value_decode(text, (size_t)n, &back, msg, sizeof(msg)), 0);
	assert_memory_equal(&v, &back, sizeof(v));
	assert_int_equal(quota_escrow_value_encode(&back, again), n);
	assert_string_equal(text, again);
}

static void cell(size_t i, const char *flavor, const char *resource, int64_t amount,
		 int64_t more)
{
	memset(&v.cells[i], 0, sizeof(v.cells[i]));
	snprintf(v.cells[i].flavor, sizeof(v.cells[i].flavor), "%s", flavor);
	snprintf(v.cells[i].resource, sizeof(v.cells[i].resource), "%s", resource);
	v.cells[i].amount = amount;
	v.cells[i].more = more;
}

/* Every cell at its longest names and largest numbers, then a round trip. */
static void largest(enum quota_escrow_kind kind, int64_t revision)
{
	memset(&v, 0, sizeof(v));
	v.kind = kind;
	v.revision = revision;
	v.n = QUOTA_ESCROW_CELLS;
	for (size_t i = 0; i < QUOTA_ESCROW_CELLS; i++) {
		memset(v.cells[i].flavor, 'a', QUOTA_ESCROW_FLAVOR_MAX);
		snprintf(v.cells[i].flavor + QUOTA_ESCROW_FLAVOR_MAX - 2, 3, "%02zu", i);
		memset(v.cells[i].resource, 'R', QUOTA_ESCROW_RESOURCE_MAX);
		v.cells[i].amount = QUOTA_ESCROW_QUANTITY_MAX;
		v.cells[i].more = kind == QUOTA_ESCROW_USE ? QUOTA_ESCROW_QUANTITY_MAX : 0;
	}
	round_trip(NULL);
}

static void round_trips(void **state)
{
	(void)state;
	memset(&v, 0, sizeof(v));
	v.kind = QUOTA_ESCROW_SLICE;
	v.n = 2;
	cell(0, "default", "cpu", 2000, 0);
	cell(1, "default", "memory", 4294967296, 0);
	round_trip("1 slice default cpu 2000 default memory 4294967296");
	v.kind = QUOTA_ESCROW_ACK;
	v.revision = 42;
	cell(1, "spot", "nvidia.com/gpu", 1, 0);
	round_trip("1 ack 42 default cpu 2000 spot nvidia.com/gpu 1");
	memset(&v, 0, sizeof(v));
	v.kind = QUOTA_ESCROW_USE;
	v.n = 1;
	cell(0, "default", "cpu", 1500, 500);
	round_trip("1 use default cpu 1500 500");
	v.n = 0;
	memset(v.cells, 0, sizeof(v.cells));
	round_trip("1 use");
	/* The largest: every cell at its longest. */
	largest(QUOTA_ESCROW_USE, 0);
	largest(QUOTA_ESCROW_ACK, INT64_MAX);
}

static void refused(const char *t, const char *field)
{
	char msg[256];
	assert_int_equal(quota_escrow_value_decode(t, strlen(t), &back, msg, sizeof(msg)),
			 -EINVAL);
	assert_memory_equal(&back, &zero, sizeof(back));
	if (strstr(msg, field) == NULL)
		fail_msg("\"%s\": message \"%s\" names no \"%s\"", t, msg, field);
}

static void refusals(void **state)
{
	(void)state;
	refused("", "version");
	refused("2 slice", "version");
	refused("1", "fields");
	refused("1 slices", "kind");
	refused("1 ack", "fields");
	refused("1 ack 012 a cpu 1", "revision");
	refused("1 ack 9223372036854775808", "revision");
	refused("1  slice", "kind");
	refused("1 slice ", "flavor");
	refused("1 slice a cpu 1 ", "flavor");
	refused("1 slice A cpu 1", "flavor");
	refused("1 slice a c@u 1", "resource");
	refused("1 slice a cpu", "fields");
	refused("1 slice a cpu -1", "amount");
	refused("1 slice a cpu 01", "amount");
	refused("1 slice a cpu 18014398509481985", "amount"); /* 2^54 + 1 */
	refused("1 use a cpu 1", "fields");
	refused("1 use a cpu 1 x", "more");
	refused("1 slice b cpu 1 a cpu 1", "order");
	refused("1 slice a cpu 1 a cpu 1", "order");
	refused("1 slice a memory 1 a cpu 1", "order");
	/* The names read so far are in the message (made before the value
	 * is zeroed). */
	refused("1 slice b cpu 1 a cpu 1", "(a, cpu) after (b, cpu)");
	/* Over the cell bound, and over the byte bound. */
	char *big = text;
	size_t used = (size_t)sprintf(big, "1 slice");
	for (int i = 0; i <= QUOTA_ESCROW_CELLS; i++)
		used += (size_t)sprintf(big + used, " f%03d cpu 1", i);
	refused(big, "cells");
	memset(big, 'a', QUOTA_ESCROW_VALUE_MAX + 1);
	big[QUOTA_ESCROW_VALUE_MAX + 1] = '\0';
	refused(big, "bytes");
	/* The encoder refuses what the decoder would. */
	memset(&v, 0, sizeof(v));
	assert_int_equal(quota_escrow_value_encode(&v, again), -EINVAL); /* no kind */
	v.kind = QUOTA_ESCROW_SLICE;
	v.revision = 3;
	assert_int_equal(quota_escrow_value_encode(&v, again), -EINVAL);
	v.revision = 0;
	v.n = 2;
	cell(0, "b", "cpu", 1, 0);
	cell(1, "a", "cpu", 1, 0);
	assert_int_equal(quota_escrow_value_encode(&v, again), -EINVAL);
	cell(1, "c", "cpu", 1, 2); /* `more` only in a use */
	assert_int_equal(quota_escrow_value_encode(&v, again), -EINVAL);
	cell(1, "c", "cpu", QUOTA_ESCROW_QUANTITY_MAX + 1, 0);
	assert_int_equal(quota_escrow_value_encode(&v, again), -EINVAL);
	cell(1, "c", "", 1, 0);
	assert_int_equal(quota_escrow_value_encode(&v, again), -EINVAL);
	v.n = QUOTA_ESCROW_CELLS + 1;
	assert_int_equal(quota_escrow_value_encode(&v, again), -EINVAL);
	v.kind = QUOTA_ESCROW_ACK; /* a negative revision */
	v.n = 0;
	v.revision = -1;
	assert_int_equal(quota_escrow_value_encode(&v, again), -EINVAL);
	/* An acknowledgement of an absent slice: revision 0, no cells. */
	memset(&v, 0, sizeof(v));
	v.kind = QUOTA_ESCROW_ACK;
	round_trip("1 ack 0");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(round_trips),
		cmocka_unit_test(refusals),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
