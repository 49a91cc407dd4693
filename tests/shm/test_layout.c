/* unit.layout: the region header decoder on valid, corrupted and truncated
 * input (bounded-input tests; tests/fuzz/fuzz_layout.c explores the rest). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "shm/shm.h"

#define REGION_SIZE (UINT64_C(4) << 20)

/* A valid header for a producer region of REGION_SIZE with two sections. */
static void make_valid(struct shm_header *h)
{
	memset(h, 0, sizeof(*h));
	h->magic = SHM_MAGIC;
	h->abi_version = SHM_ABI_VERSION;
	h->header_size = SHM_HEADER_SIZE;
	h->total_size = REGION_SIZE;
	h->kind = SHM_REGION_KIND_PRODUCER;
	h->section_count = 2;
	h->page_size = 4096;
	h->ready = SHM_READY;
	h->sections[0] = (struct shm_section){.offset = 4096, .size = 8192, .id = 1};
	h->sections[1] = (struct shm_section){.offset = 16384, .size = 100, .id = 2};
}

static int check(const struct shm_header *h, uint32_t kind, char *err)
{
	struct shm_header copy;
	return layout_check_header(h, REGION_SIZE, kind, &copy, err, 256);
}

static void test_valid_header_is_accepted_and_copied(void **state)
{
	(void)state;
	struct shm_header h, copy;
	char err[256] = "";
	make_valid(&h);
	assert_int_equal(layout_check_header(&h, REGION_SIZE, SHM_REGION_KIND_PRODUCER,
					     &copy, err, sizeof(err)), 0);
	assert_memory_equal(&h, &copy, sizeof(h));
	assert_int_equal(check(&h, 0, err), 0); /* any kind */
}

static void test_wrong_magic(void **state)
{
	(void)state;
	struct shm_header h;
	char err[256];
	make_valid(&h);
	h.magic ^= 1;
	assert_int_equal(check(&h, 0, err), -EPROTO);
	assert_non_null(strstr(err, "not a shmsched region"));
}

static void test_version_mismatch_names_both_sides(void **state)
{
	(void)state;
	struct shm_header h;
	char err[256];
	make_valid(&h);
	h.abi_version = SHM_ABI_VERSION + 6;
	assert_int_equal(check(&h, 0, err), -EPROTONOSUPPORT);
	char want[128];
	snprintf(want, sizeof(want), "made by ABI version %u, this program uses "
		 "ABI version %u", SHM_ABI_VERSION + 6, SHM_ABI_VERSION);
	assert_non_null(strstr(err, want));
}

static void test_not_ready(void **state)
{
	(void)state;
	struct shm_header h;
	char err[256];
	make_valid(&h);
	h.ready = 0;
	assert_int_equal(check(&h, 0, err), -EAGAIN);
	assert_non_null(strstr(err, "not ready"));
}

static void test_size_mismatch_names_both_sizes(void **state)
{
	(void)state;
	struct shm_header h;
	char err[256];
	make_valid(&h);
	h.total_size = REGION_SIZE * 2;
	assert_int_equal(check(&h, 0, err), -EPROTO);
	assert_non_null(strstr(err, "header says 8388608 bytes, the mapped file "
				    "has 4194304"));
}

static void test_kind_mismatch(void **state)
{
	(void)state;
	struct shm_header h;
	char err[256];
	make_valid(&h);
	assert_int_equal(check(&h, SHM_REGION_KIND_STATE, err), -EPROTO);
	assert_non_null(strstr(err, "is a producer region, this program "
				    "expected a state region"));
	h.kind = 77;
	assert_int_equal(check(&h, 0, err), -EPROTO);
	assert_non_null(strstr(err, "unknown"));
}

static void test_bad_header_size(void **state)
{
	(void)state;
	struct shm_header h;
	char err[256];
	make_valid(&h);
	h.header_size = 256;
	assert_int_equal(check(&h, 0, err), -EPROTO);
	assert_non_null(strstr(err, "header size mismatch"));
}

static void test_bad_sections(void **state)
{
	(void)state;
	struct shm_header h;
	char err[256];

	make_valid(&h);
	h.section_count = SHM_SECTION_MAX + 1;
	assert_int_equal(check(&h, 0, err), -EPROTO);

	make_valid(&h);
	h.sections[1].id = 0;
	assert_int_equal(check(&h, 0, err), -EPROTO);

	make_valid(&h);
	h.sections[1].id = 1; /* duplicate */
	assert_int_equal(check(&h, 0, err), -EPROTO);
	assert_non_null(strstr(err, "appears twice"));

	make_valid(&h);
	h.sections[1].offset = 4096 + 4096; /* overlaps section 0 */
	assert_int_equal(check(&h, 0, err), -EPROTO);
	assert_non_null(strstr(err, "overlaps"));

	make_valid(&h);
	h.sections[0].offset = 0; /* overlaps the header */
	assert_int_equal(check(&h, 0, err), -EPROTO);

	make_valid(&h);
	h.sections[1].offset = 16384 + 1; /* misaligned */
	assert_int_equal(check(&h, 0, err), -EPROTO);

	make_valid(&h);
	h.sections[1].size = 0;
	assert_int_equal(check(&h, 0, err), -EPROTO);

	make_valid(&h);
	h.sections[1].size = REGION_SIZE; /* past the end */
	assert_int_equal(check(&h, 0, err), -EPROTO);
	assert_non_null(strstr(err, "does not fit"));

	make_valid(&h);
	h.sections[1].size = UINT64_MAX; /* offset + size overflows */
	assert_int_equal(check(&h, 0, err), -EPROTO);

	make_valid(&h);
	h.sections[1].offset = UINT64_MAX - 4095;
	assert_int_equal(check(&h, 0, err), -EPROTO);
}

static void test_truncated_mapping_is_rejected(void **state)
{
	(void)state;
	struct shm_header h, copy;
	char err[256];
	make_valid(&h);
	for (uint64_t len = 0; len < SHM_HEADER_SIZE; len++)
		assert_int_equal(layout_check_header(&h, len, 0, &copy, err,
						     sizeof(err)), -EPROTO);
}

/* Every single-byte corruption of a valid header either still passes (the
 * byte was reserved or informational) or is refused; none crashes, and the
 * copy used afterwards always passes the checks that matter. */
static void test_every_byte_flip_is_handled(void **state)
{
	(void)state;
	struct shm_header h, copy;
	char err[256];
	static const uint8_t patterns[] = {0x01, 0x80, 0xff, 0x10};
	for (size_t i = 0; i < sizeof(h); i++) {
		for (size_t p = 0; p < sizeof(patterns); p++) {
			make_valid(&h);
			((uint8_t *)&h)[i] ^= patterns[p];
			int rc = layout_check_header(&h, REGION_SIZE, 0, &copy, err,
						     sizeof(err));
			assert_true(rc == 0 || rc == -EPROTO || rc == -EAGAIN ||
				    rc == -EPROTONOSUPPORT);
			if (rc == 0) {
				assert_int_equal(copy.magic, SHM_MAGIC);
				assert_true(copy.section_count <= SHM_SECTION_MAX);
				for (uint32_t s = 0; s < copy.section_count; s++)
					assert_true(copy.sections[s].offset +
							    copy.sections[s].size <=
						    REGION_SIZE);
			}
		}
	}
}

static void test_kind_names(void **state)
{
	(void)state;
	assert_string_equal(layout_kind_name(SHM_REGION_KIND_STATE), "state");
	assert_string_equal(layout_kind_name(SHM_REGION_KIND_PRODUCER), "producer");
	assert_string_equal(layout_kind_name(0), "unknown");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid_header_is_accepted_and_copied),
		cmocka_unit_test(test_wrong_magic),
		cmocka_unit_test(test_version_mismatch_names_both_sides),
		cmocka_unit_test(test_not_ready),
		cmocka_unit_test(test_size_mismatch_names_both_sizes),
		cmocka_unit_test(test_kind_mismatch),
		cmocka_unit_test(test_bad_header_size),
		cmocka_unit_test(test_bad_sections),
		cmocka_unit_test(test_truncated_mapping_is_rejected),
		cmocka_unit_test(test_every_byte_flip_is_handled),
		cmocka_unit_test(test_kind_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
