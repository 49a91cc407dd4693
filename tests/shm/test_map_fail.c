/* unit.map_fail: a mapping that fails never unmaps memory that is not its
 * own. Deterministic, with the kernel's part played by a wrapper around
 * mmap (linked with --wrap=mmap64: glibc's name for it with 64-bit file
 * offsets): the MAP_FIXED mmap of the region's file over its reserved
 * range fails as Linux 6.12 and later fail it when a
 * file's mmap hook refuses (hugetlbfs with an empty pool): the range is
 * left unmapped (vms_abort_munmap_vmas), and here another thread's
 * mapping takes it at once, before the mmap returns.
 *
 * Old: map_aligned() then unmapped its whole reservation, that thread's
 * mapping with it (mincore() found it gone: ENOMEM). Seen for real under
 * TSan in unit.budgets, where the allocator's calloc of a worker's eval
 * table lost 2 MiB to a producer region's failed hugetlb mapping. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "shm/shm.h"

void *__real_mmap64(void *addr, size_t len, int prot, int flags, int fd,
		  off_t off);
void *__wrap_mmap64(void *addr, size_t len, int prot, int flags, int fd,
		  off_t off);

static bool fail_fixed;     /* the next MAP_FIXED file mapping fails */
static void *victim;        /* the other thread's mapping, in the hole */
static size_t victim_len;

void *__wrap_mmap64(void *addr, size_t len, int prot, int flags, int fd,
		  off_t off)
{
	if (!fail_fixed || !(flags & MAP_FIXED) || fd < 0)
		return __real_mmap64(addr, len, prot, flags, fd, off);
	fail_fixed = false;
	/* The kernel cleared the range, then the file's mmap hook failed. */
	assert_int_equal(munmap(addr, len), 0);
	/* Another thread's mmap lands in the hole. */
	victim = __real_mmap64(addr, len, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
			     -1, 0);
	assert_true(victim == addr);
	victim_len = len;
	memset(victim, 0x5a, len);
	errno = ENOMEM;
	return MAP_FAILED;
}

static bool still_mapped(void *p, size_t len)
{
	unsigned char vec[1024];
	size_t pages = len / (size_t)sysconf(_SC_PAGESIZE);
	assert_true(pages <= sizeof(vec));
	return mincore(p, len, vec) == 0;
}

/* The ordinary memfd path (map_aligned) with its MAP_FIXED failing. */
static void test_failed_fixed_keeps_others(void **state)
{
	(void)state;
	struct shm_mapping m;
	fail_fixed = true;
	int rc = shm_map_create("shmsched-map-fail", 2u << 20,
				SHM_MAP_NO_HUGETLB, &m);
	assert_int_equal(rc, -ENOMEM);
	assert_non_null(victim);
	/* old: gone (munmap of the whole reservation took it). */
	assert_true(still_mapped(victim, victim_len));
	assert_int_equal(((unsigned char *)victim)[victim_len - 1], 0x5a);
	munmap(victim, victim_len);
	victim = NULL;
}

/* And a mapping that works still works (the wrapper passes it on). */
static void test_mapping_works(void **state)
{
	(void)state;
	struct shm_mapping m;
	assert_int_equal(shm_map_create("shmsched-map-fail", 2u << 20, 0, &m), 0);
	assert_int_equal((uintptr_t)m.base % (2u << 20), 0);
	memset(m.base, 1, 4096);
	shm_map_release(&m);
}

int main(void)
{
	setenv("SHMSCHED_LOG", "warn", 0);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_failed_fixed_keeps_others),
		cmocka_unit_test(test_mapping_works),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
