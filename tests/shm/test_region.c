/* unit.region: region create (huge pages and the fallback), attach at a
 * second address, refusals of mismatched regions, sealing, offsets. */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "shm/shm.h"

static const struct shm_section_spec two_sections[] = {
	{SHM_SECTION_SUBMIT_RING, 10000},
	{SHM_SECTION_COMPLETION_RING, 3 << 20},
};

static struct shm_region *make(unsigned flags)
{
	struct shm_region *r = shm_region_create("test", SHM_REGION_KIND_PRODUCER,
						 two_sections, 2, flags);
	assert_non_null(r);
	return r;
}

static void check_layout(const struct shm_region *r)
{
	struct shm_span all = shm_region_span(r);
	assert_int_equal((uintptr_t)all.base % SHM_REGION_ALIGN, 0);
	assert_int_equal(all.size % SHM_REGION_ALIGN, 0);
	assert_true(all.size >= SHM_HEADER_SIZE + 10000 + (3 << 20));
	uint64_t prev_end = SHM_HEADER_SIZE;
	for (unsigned i = 0; i < 2; i++) {
		struct shm_span s = shm_region_section(r, two_sections[i].id);
		assert_non_null(s.base);
		assert_int_equal(s.size, two_sections[i].size);
		uint64_t off = shm_span_offset(all, s.base);
		assert_int_equal(off % SHM_SECTION_ALIGN, 0);
		assert_true(off >= prev_end);
		assert_true(shm_span_contains(all, s.base, s.size));
		prev_end = off + s.size;
		/* zero-filled and writable */
		const uint8_t *b = s.base;
		for (uint64_t k = 0; k < s.size; k += 997)
			assert_int_equal(b[k], 0);
		memset(s.base, 0xab, (size_t)s.size);
	}
	assert_null(shm_region_section(r, 99).base);
}

/* The fallback, forced: what runs on machines with no huge-page pool. */
static void test_fallback_region(void **state)
{
	(void)state;
	struct shm_region *r = make(SHM_MAP_NO_HUGETLB);
	assert_false(shm_region_hugetlb(r));
	assert_int_equal(shm_region_page_size(r), (size_t)sysconf(_SC_PAGESIZE));
	assert_non_null(strstr(shm_region_backing(r), "hugetlb: not tried"));
	check_layout(r);
	const struct shm_header *h = shm_region_span(r).base;
	assert_int_equal(h->magic, SHM_MAGIC);
	assert_int_equal(h->ready, SHM_READY);
	assert_int_equal(h->page_size, shm_region_page_size(r));
	shm_region_close(r);
}

/* Default flags: huge pages where the pool has them, else the fallback with
 * the hugetlb error named. Either is right; each must be consistent. */
static void test_default_region_reports_what_it_got(void **state)
{
	(void)state;
	struct shm_region *r = make(0);
	if (shm_region_hugetlb(r)) {
		assert_int_equal(shm_region_page_size(r), 2u << 20);
		assert_non_null(strstr(shm_region_backing(r), "2 MiB pages"));
	} else {
		assert_non_null(strstr(shm_region_backing(r), "hugetlb: "));
		assert_null(strstr(shm_region_backing(r), "not tried"));
	}
	check_layout(r);
	shm_region_close(r);
}

static void test_required_hugetlb_fails_cleanly_or_works(void **state)
{
	(void)state;
	errno = 0;
	struct shm_region *r = shm_region_create("test", SHM_REGION_KIND_PRODUCER,
						 two_sections, 2,
						 SHM_MAP_REQUIRE_HUGETLB);
	if (r != NULL) {
		assert_true(shm_region_hugetlb(r));
		check_layout(r);
		shm_region_close(r);
	} else {
		/* Empty pool: ENOMEM at mmap (or ENOSPC); no hugetlbfs: EINVAL. */
		assert_true(errno == ENOMEM || errno == ENOSPC || errno == EINVAL);
	}
}

static void test_bad_specs_are_refused(void **state)
{
	(void)state;
	struct shm_section_spec dup[] = {{1, 10}, {1, 10}};
	struct shm_section_spec zero_id[] = {{0, 10}};
	struct shm_section_spec zero_size[] = {{1, 0}};
	struct shm_section_spec many[SHM_SECTION_MAX + 1];
	for (unsigned i = 0; i < SHM_SECTION_MAX + 1; i++)
		many[i] = (struct shm_section_spec){i + 1, 8};

	errno = 0;
	assert_null(shm_region_create("t", SHM_REGION_KIND_PRODUCER, dup, 2, 0));
	assert_int_equal(errno, EINVAL);
	assert_null(shm_region_create("t", SHM_REGION_KIND_PRODUCER, zero_id, 1, 0));
	assert_null(shm_region_create("t", SHM_REGION_KIND_PRODUCER, zero_size, 1, 0));
	assert_null(shm_region_create("t", SHM_REGION_KIND_PRODUCER, many,
				      SHM_SECTION_MAX + 1, 0));
	assert_null(shm_region_create("t", SHM_REGION_KIND_PRODUCER, NULL, 0, 0));
	assert_null(shm_region_create("t", (enum shm_region_kind)9, zero_size, 1, 0));
	assert_int_equal(errno, EINVAL);
}

/* A second mapping of the same memfd, as another process would attach it:
 * a different address, the same bytes. */
static void test_attach_sees_the_same_memory_elsewhere(void **state)
{
	(void)state;
	struct shm_region *r = make(0);
	char err[256];
	struct shm_region *a = shm_region_attach(shm_region_fd(r),
						 SHM_REGION_KIND_PRODUCER, 0, err,
						 sizeof(err));
	assert_non_null(a);
	assert_ptr_not_equal(shm_region_span(a).base, shm_region_span(r).base);
	assert_int_equal(shm_region_span(a).size, shm_region_span(r).size);
	assert_int_equal(shm_region_kind(a), SHM_REGION_KIND_PRODUCER);

	struct shm_span sr = shm_region_section(r, SHM_SECTION_COMPLETION_RING);
	struct shm_span sa = shm_region_section(a, SHM_SECTION_COMPLETION_RING);
	assert_int_equal(sa.size, sr.size);
	assert_int_equal(shm_span_offset(shm_region_span(a), sa.base),
			 shm_span_offset(shm_region_span(r), sr.base));
	((volatile uint64_t *)sr.base)[7] = 0x1122334455667788u;
	assert_int_equal(((volatile uint64_t *)sa.base)[7], 0x1122334455667788u);

	/* The attach has its own fd; closing the creator leaves it working. */
	shm_region_close(r);
	assert_int_equal(((volatile uint64_t *)sa.base)[7], 0x1122334455667788u);
	shm_region_close(a);
}

static struct shm_header *shared_header(struct shm_region *r)
{
	return shm_region_span(r).base;
}

static void expect_refusal(struct shm_region *r, uint32_t kind, int want_errno,
			   const char *want_text)
{
	char err[256] = "";
	errno = 0;
	assert_null(shm_region_attach(shm_region_fd(r), kind, 0, err, sizeof(err)));
	assert_int_equal(errno, want_errno);
	if (strstr(err, want_text) == NULL)
		fail_msg("message \"%s\" lacks \"%s\"", err, want_text);
}

static void test_attach_refuses_mismatches(void **state)
{
	(void)state;
	struct shm_region *r = make(0);
	struct shm_header *h = shared_header(r);
	struct shm_header saved = *h;

	h->magic = 0x1234;
	expect_refusal(r, 0, EPROTO, "not a shmsched region");
	*h = saved;

	h->abi_version = SHM_ABI_VERSION + 1;
	char want[128];
	snprintf(want, sizeof(want), "region was made by ABI version %u, this "
		 "program uses ABI version %u", SHM_ABI_VERSION + 1, SHM_ABI_VERSION);
	expect_refusal(r, 0, EPROTONOSUPPORT, want);
	*h = saved;

	h->total_size += SHM_REGION_ALIGN;
	expect_refusal(r, 0, EPROTO, "size mismatch");
	*h = saved;

	expect_refusal(r, SHM_REGION_KIND_STATE, EPROTO,
		       "is a producer region, this program expected a state region");

	__atomic_store_n(&h->ready, 0, __ATOMIC_RELEASE);
	expect_refusal(r, 0, EAGAIN, "not ready");
	*h = saved;

	char err[256];
	struct shm_region *a = shm_region_attach(shm_region_fd(r), 0, 0, err,
						 sizeof(err));
	assert_non_null(a); /* restored: accepted again */
	shm_region_close(a);
	shm_region_close(r);
}

static void test_attach_refuses_a_plain_file(void **state)
{
	(void)state;
	FILE *f = tmpfile();
	assert_non_null(f);
	char err[256];
	errno = 0;
	assert_null(shm_region_attach(fileno(f), 0, 0, err, sizeof(err)));
	assert_int_equal(errno, EINVAL); /* empty */
	char junk[4096];
	memset(junk, 'x', sizeof(junk));
	assert_int_equal(fwrite(junk, 1, sizeof(junk), f), sizeof(junk));
	fflush(f);
	assert_null(shm_region_attach(fileno(f), 0, 0, err, sizeof(err)));
	assert_int_equal(errno, EPROTO);
	assert_non_null(strstr(err, "not a shmsched region"));
	fclose(f);
}

/* A peer holding the fd cannot shrink the region under our mapping. */
static void test_region_size_is_sealed(void **state)
{
	(void)state;
	struct shm_region *r = make(0);
	assert_int_equal(ftruncate(shm_region_fd(r), 4096), -1);
	assert_int_equal(errno, EPERM);
	assert_int_equal(ftruncate(shm_region_fd(r), (off_t)shm_region_span(r).size * 2),
			 -1);
	shm_region_close(r);
}

/* A read-only attach really is read-only: a write faults. */
static void test_readonly_attach_faults_on_write(void **state)
{
	(void)state;
	struct shm_region *r = make(0);
	char err[256];
	struct shm_region *ro = shm_region_attach(shm_region_fd(r), 0,
						  SHM_MAP_READONLY, err, sizeof(err));
	assert_non_null(ro);
	struct shm_span s = shm_region_section(ro, SHM_SECTION_SUBMIT_RING);
	struct shm_span w = shm_region_section(r, SHM_SECTION_SUBMIT_RING);
	((volatile uint8_t *)w.base)[5] = 42;
	assert_int_equal(((volatile uint8_t *)s.base)[5], 42);
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		signal(SIGSEGV, SIG_DFL);
		((volatile uint8_t *)s.base)[5] = 1;
		_exit(0); /* reached only if the write did not fault */
	}
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGSEGV);
	shm_region_close(ro);
	shm_region_close(r);
}

static void test_span_bounds(void **state)
{
	(void)state;
	/* The span is outer[1..101): a byte before it exists, so the test
	 * names it without pointing outside an object. */
	char outer[101];
	char *buf = outer + 1;
	struct shm_span s = {.base = buf, .size = 100};
	assert_ptr_equal(shm_span_at(s, 0, 100), buf);
	assert_ptr_equal(shm_span_at(s, 99, 1), buf + 99);
	assert_ptr_equal(shm_span_at(s, 100, 0), buf + 100);
	assert_null(shm_span_at(s, 100, 1));
	assert_null(shm_span_at(s, 0, 101));
	assert_null(shm_span_at(s, UINT64_MAX, 2));
	assert_null(shm_span_at(s, 2, UINT64_MAX));
	assert_int_equal(shm_span_offset(s, buf + 42), 42);
	assert_true(shm_span_contains(s, buf + 10, 90));
	assert_false(shm_span_contains(s, buf + 10, 91));
	assert_false(shm_span_contains(s, outer, 1));
}

int main(void)
{
	setenv("SHMSCHED_LOG", "warn", 0);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fallback_region),
		cmocka_unit_test(test_default_region_reports_what_it_got),
		cmocka_unit_test(test_required_hugetlb_fails_cleanly_or_works),
		cmocka_unit_test(test_bad_specs_are_refused),
		cmocka_unit_test(test_attach_sees_the_same_memory_elsewhere),
		cmocka_unit_test(test_attach_refuses_mismatches),
		cmocka_unit_test(test_attach_refuses_a_plain_file),
		cmocka_unit_test(test_region_size_is_sealed),
		cmocka_unit_test(test_readonly_attach_faults_on_write),
		cmocka_unit_test(test_span_bounds),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
