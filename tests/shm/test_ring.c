/* unit.ring_dpdk and unit.ring_fake: the ring contract of shm/ring.h, run
 * against each implementation (the same source, linked twice), and the
 * daemon's guarded end (struct ring_guard) against a peer that plays fair
 * and one that writes random bytes over the whole ring. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "shm/shm.h"

#define SLOTS 64u

struct fixture {
	void *mem;
	size_t size;
	struct ring *r;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	f->size = ring_memsize(SLOTS);
	assert_true(f->size > 0);
	assert_int_equal(posix_memalign(&f->mem, 64, f->size), 0);
	memset(f->mem, 0x5a, f->size); /* init must not depend on zeroed memory */
	f->r = ring_init(f->mem, f->size, SLOTS, "unit");
	assert_non_null(f->r);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	free(f->mem);
	free(f);
	return 0;
}

static void test_bad_init_arguments(void **state)
{
	(void)state;
	assert_int_equal(ring_memsize(0), 0);
	assert_int_equal(ring_memsize(1), 0);
	assert_int_equal(ring_memsize(48), 0); /* not a power of two */
	assert_int_equal(ring_memsize(1u << 29), 0);
	assert_true(ring_memsize(2) > 0);
	assert_true(ring_memsize(1024) >= 1024 * sizeof(uint64_t));

	size_t need = ring_memsize(SLOTS);
	void *mem = NULL;
	assert_int_equal(posix_memalign(&mem, 64, need + 64), 0);
	errno = 0;
	assert_null(ring_init(mem, need - 1, SLOTS, "small"));
	assert_int_equal(errno, EINVAL);
	assert_null(ring_init((char *)mem + 8, need, SLOTS, "misaligned"));
	assert_null(ring_init(mem, need, 48, "odd"));
	assert_null(ring_init(NULL, need, SLOTS, "null"));
	free(mem);
}

static void test_empty_ring(void **state)
{
	struct fixture *f = *state;
	uint64_t out[4];
	assert_int_equal(ring_count(f->r), 0);
	assert_int_equal(ring_capacity(f->r), SLOTS - 1);
	assert_int_equal(ring_dequeue_burst(f->r, out, 4), 0);
}

static void test_fifo_and_partial_bursts(void **state)
{
	struct fixture *f = *state;
	uint64_t in[SLOTS], out[SLOTS];
	for (unsigned i = 0; i < SLOTS; i++)
		in[i] = 1000 + i;
	assert_int_equal(ring_enqueue_burst(f->r, in, 10), 10);
	assert_int_equal(ring_count(f->r), 10);
	assert_int_equal(ring_dequeue_burst(f->r, out, 3), 3);
	assert_int_equal(out[0], 1000);
	assert_int_equal(out[2], 1002);
	/* Asking for more than there is returns what there is. */
	assert_int_equal(ring_dequeue_burst(f->r, out, 32), 7);
	assert_int_equal(out[0], 1003);
	assert_int_equal(out[6], 1009);
	assert_int_equal(ring_count(f->r), 0);
}

/* A full ring is back-pressure: a partial burst, then 0, never an overwrite. */
static void test_full_ring_refuses_without_loss(void **state)
{
	struct fixture *f = *state;
	uint64_t in[SLOTS + 8], out[SLOTS + 8];
	for (unsigned i = 0; i < SLOTS + 8; i++)
		in[i] = UINT64_MAX - i;
	assert_int_equal(ring_enqueue_burst(f->r, in, SLOTS + 8), SLOTS - 1);
	assert_int_equal(ring_count(f->r), SLOTS - 1);
	assert_int_equal(ring_enqueue_burst(f->r, in, 1), 0);
	assert_int_equal(ring_dequeue_burst(f->r, out, SLOTS + 8), SLOTS - 1);
	for (unsigned i = 0; i < SLOTS - 1; i++)
		assert_int_equal(out[i], UINT64_MAX - i);
}

/* Many laps around the ring with bursts that do not divide its size. */
static void test_wraparound_keeps_order(void **state)
{
	struct fixture *f = *state;
	uint64_t next_in = 0, next_out = 0, buf[37];
	for (unsigned round = 0; round < 10000; round++) {
		unsigned want = 1 + round % 37;
		for (unsigned i = 0; i < want; i++)
			buf[i] = next_in + i;
		next_in += ring_enqueue_burst(f->r, buf, want);
		unsigned n = ring_dequeue_burst(f->r, buf, 1 + (round * 7) % 37);
		for (unsigned i = 0; i < n; i++)
			assert_int_equal(buf[i], next_out + i);
		next_out += n;
		assert_int_equal(ring_count(f->r), next_in - next_out);
	}
	assert_true(next_out > 50 * SLOTS);
}

static void test_attach_checks_the_ring(void **state)
{
	struct fixture *f = *state;
	assert_ptr_equal(ring_attach(f->mem, f->size, SLOTS), f->r);
	errno = 0;
	assert_null(ring_attach(f->mem, f->size, SLOTS * 2)); /* other geometry */
	assert_int_equal(errno, EPROTO);
	assert_null(ring_attach(f->mem, f->size - 1, SLOTS));
	/* Uninitialised memory is not a ring. */
	void *junk = NULL;
	assert_int_equal(posix_memalign(&junk, 64, f->size), 0);
	memset(junk, 0, f->size);
	assert_null(ring_attach(junk, f->size, SLOTS));
	memset(junk, 0xff, f->size);
	assert_null(ring_attach(junk, f->size, SLOTS));
	free(junk);
}

/* The guard against an honest peer: both directions, across wrap-around,
 * the same handles in the same order as the plain functions. */
static void test_guard_round_trip(void **state)
{
	struct fixture *f = *state;
	struct ring_guard cons, prod;
	assert_int_equal(ring_guard_init(&cons, f->r, SLOTS, RING_GUARD_CONSUMER), 0);
	uint64_t in[SLOTS], out[SLOTS];
	uint64_t next = 1, expect = 1;
	for (int round = 0; round < 50; round++) {
		unsigned n = 1 + (unsigned)(round * 7) % (SLOTS - 1);
		for (unsigned i = 0; i < n; i++)
			in[i] = next++;
		assert_int_equal(ring_enqueue_burst(f->r, in, n), n);
		assert_int_equal(ring_guard_dequeue(&cons, out, SLOTS), (int)n);
		for (unsigned i = 0; i < n; i++)
			assert_true(out[i] == expect++);
		assert_int_equal(ring_guard_dequeue(&cons, out, SLOTS), 0);
	}
	/* The other direction on a fresh ring: the guard produces. */
	struct ring *r2 = ring_init(f->mem, f->size, SLOTS, "unit2");
	assert_non_null(r2);
	assert_int_equal(ring_guard_init(&prod, r2, SLOTS, RING_GUARD_PRODUCER), 0);
	next = expect = 1;
	for (int round = 0; round < 50; round++) {
		unsigned n = 1 + (unsigned)(round * 5) % (SLOTS - 1);
		for (unsigned i = 0; i < n; i++)
			in[i] = next++;
		assert_int_equal(ring_guard_enqueue(&prod, in, n), (int)n);
		assert_int_equal(ring_dequeue_burst(r2, out, SLOTS), n);
		for (unsigned i = 0; i < n; i++)
			assert_true(out[i] == expect++);
	}
	/* Full: the guard refuses without loss, as the plain ring does. */
	for (unsigned i = 0; i < SLOTS; i++)
		in[i] = i;
	assert_int_equal(ring_guard_enqueue(&prod, in, SLOTS), (int)ring_capacity(r2));
	assert_int_equal(ring_guard_enqueue(&prod, in, 1), 0);
	assert_int_equal(ring_dequeue_burst(r2, out, SLOTS), ring_capacity(r2));
}

static void test_guard_init_refuses_bad_arguments(void **state)
{
	struct fixture *f = *state;
	struct ring_guard g;
	assert_int_equal(ring_guard_init(&g, f->r, 3, RING_GUARD_CONSUMER), -EINVAL);
	assert_int_equal(ring_guard_init(&g, f->r, SLOTS, 0), -EINVAL);
	assert_int_equal(ring_guard_init(&g, NULL, SLOTS, RING_GUARD_PRODUCER), -EINVAL);
}

static void scribble(uint8_t *bytes, size_t n, uint64_t *rng)
{
	for (size_t i = 0; i < n; i++) {
		*rng ^= *rng << 13;
		*rng ^= *rng >> 7;
		*rng ^= *rng << 17;
		bytes[i] = (uint8_t)*rng;
	}
}

/* A peer that rewrites the whole ring (geometry, both indices, entries)
 * with random bytes between calls: each call either moves at most the
 * ring's capacity or reports -EPROTO; nothing is read or written outside
 * the ring's memory (ASan builds check that: the buffer is exactly
 * ring_memsize() bytes), and the guard's private geometry never changes.
 * Every other round the peer plays fair with the indices and scribbles
 * only the entries (the last SLOTS * 8 bytes in both implementations):
 * then the guard must take exactly what was enqueued, whatever the
 * handles say. */
static void test_guard_survives_a_scribbling_peer(void **state)
{
	struct fixture *f = *state;
	struct ring_guard cons, prod;
	uint64_t rng = 0x9d2c5680u;
	uint64_t buf[4 * SLOTS];
	unsigned refused = 0, moved = 0;
	for (int round = 0; round < 20000; round++) {
		if (round % 2 == 1) {
			struct ring *r = ring_init(f->mem, f->size, SLOTS, "unit");
			assert_non_null(r);
			assert_int_equal(ring_guard_init(&cons, r, SLOTS,
							 RING_GUARD_CONSUMER), 0);
			unsigned k = 1 + (unsigned)(rng % (SLOTS - 1));
			assert_int_equal(ring_enqueue_burst(r, buf, k), k);
			scribble((uint8_t *)f->mem + f->size - SLOTS * sizeof(uint64_t),
				 SLOTS * sizeof(uint64_t), &rng);
			assert_int_equal(ring_guard_dequeue(&cons, buf, 4 * SLOTS), (int)k);
			moved++;
			continue;
		}
		assert_int_equal(ring_guard_init(&cons, f->r, SLOTS, RING_GUARD_CONSUMER), 0);
		assert_int_equal(ring_guard_init(&prod, f->r, SLOTS, RING_GUARD_PRODUCER), 0);
		for (int call = 0; call < 4; call++) {
			scribble(f->mem, f->size, &rng);
			int a = ring_guard_dequeue(&cons, buf, 4 * SLOTS);
			int b = ring_guard_enqueue(&prod, buf, 4 * SLOTS);
			assert_true(a == -EPROTO || (a >= 0 && a <= (int)(SLOTS - 1)));
			assert_true(b == -EPROTO || (b >= 0 && b <= (int)(SLOTS - 1)));
			refused += (a < 0) + (b < 0);
			assert_int_equal(cons.mask, SLOTS - 1);
			assert_int_equal(prod.mask, SLOTS - 1);
		}
	}
	assert_true(refused > 0);
	assert_true(moved > 0);
}

static void test_impl_name(void **state)
{
	(void)state;
	const char *name = ring_impl_name();
	assert_true(strcmp(name, "dpdk") == 0 || strcmp(name, "fake") == 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_init_arguments),
		cmocka_unit_test_setup_teardown(test_empty_ring, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fifo_and_partial_bursts, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_full_ring_refuses_without_loss,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_wraparound_keeps_order, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_attach_checks_the_ring, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_guard_round_trip, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_guard_init_refuses_bad_arguments,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_guard_survives_a_scribbling_peer,
						setup, teardown),
		cmocka_unit_test(test_impl_name),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
