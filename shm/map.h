/* Getting memory to share: a memfd mapped at a 2 MiB-aligned address, on
 * huge pages when the kernel can give them, on ordinary pages otherwise.
 *
 * Slow path only (region creation and attach). Never changes sysctls or the
 * huge-page pool: it takes what is there and says what it got.
 */
#ifndef SHMSCHED_SHM_MAP_H
#define SHMSCHED_SHM_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum shm_map_flags {
	/* Skip the hugetlb attempt (tests of the fallback, or by choice). */
	SHM_MAP_NO_HUGETLB = 1u << 0,
	/* Fail with the hugetlb error instead of falling back. */
	SHM_MAP_REQUIRE_HUGETLB = 1u << 1,
	/* attach only: map read-only. */
	SHM_MAP_READONLY = 1u << 2,
};

struct shm_mapping {
	int fd;
	void *base;        /* aligned to SHM_REGION_ALIGN */
	uint64_t size;     /* bytes mapped = the memfd's size */
	size_t page_size;  /* 2 MiB on hugetlb, else the base page size */
	bool hugetlb;
	char backing[160]; /* for a person: what was obtained and why */
};

/* Creates a memfd of at least `size` bytes (rounded up to SHM_REGION_ALIGN),
 * seals its size, and maps it shared and writable.
 * Returns 0, or a negative errno:
 *   -EINVAL  size is 0 or too large
 *   -ENOMEM, -ENOSPC  (with SHM_MAP_REQUIRE_HUGETLB) no huge pages
 *   any errno from memfd_create, ftruncate, fcntl or mmap. */
int shm_map_create(const char *name, uint64_t size, unsigned flags,
		   struct shm_mapping *out);

/* Sizes the new, empty file `fd` (on hugetlbfs when `hugetlb`, else on
 * tmpfs: /dev/shm) to `size` rounded up to SHM_REGION_ALIGN and maps it
 * shared and writable; advises huge pages for a tmpfs file. Takes
 * ownership of `fd` on success only. Returns 0, or a negative errno from
 * ftruncate or mmap (-ENOMEM on hugetlbfs: the pool is too small); -EINVAL
 * for a size of 0 or too large. */
int shm_map_create_on(int fd, uint64_t size, bool hugetlb, struct shm_mapping *out);

/* Maps all of an existing memfd (taking ownership of `fd` on success only).
 * Returns 0, or a negative errno from fstat or mmap; -EINVAL for an empty file. */
int shm_map_attach(int fd, unsigned flags, struct shm_mapping *out);

/* Unmaps and closes. Safe on a zeroed or already released mapping. */
void shm_map_release(struct shm_mapping *m);

#endif
