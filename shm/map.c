/* Shared memory with huge pages when they can be had: see map.h.
 *
 * Order of attempts, as the design asks:
 *   1. memfd_create(MFD_HUGETLB | MFD_HUGE_2MB): real 2 MiB pages, reserved
 *      at mmap time, so an empty pool fails there with ENOMEM, cleanly.
 *   2. an ordinary memfd mapped at a 2 MiB-aligned address with
 *      madvise(MADV_HUGEPAGE), which lets transparent huge pages back it
 *      when /sys/kernel/mm/transparent_hugepage/shmem_enabled allows.
 * Both are sealed against shrinking, so no process holding the fd can cut
 * the file under another's mapping.
 */
#include "shm/map.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/memfd.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shm/layout.h"
#include "base/base.h"

#define HUGE_2MB (UINT64_C(2) << 20)

static uint64_t round_up(uint64_t v, uint64_t align)
{
	return (v + align - 1) / align * align;
}

/* Maps `fd` (size bytes) at an address aligned to SHM_REGION_ALIGN: reserve
 * an oversized PROT_NONE range, map the file over its aligned part, return
 * the slop.
 *
 * When the MAP_FIXED mmap fails, only the slop is returned, never the
 * aligned part: a file mapping whose mmap hook fails after the old range
 * was cleared (hugetlbfs with an empty pool, ENOMEM) leaves a hole there
 * (Linux 6.12 and later: vms_abort_munmap_vmas), another thread's mmap
 * may take the hole at once, and munmap() of the whole reservation then
 * unmapped that thread's memory (unit.budgets under TSan: the allocator's
 * calloc of a worker's eval table lost 2 MiB and faulted). What stays of
 * the aligned part when the kernel kept it is PROT_NONE address space,
 * never backed. */
static void *map_aligned(int fd, uint64_t size, int prot)
{
	size_t span = (size_t)(size + SHM_REGION_ALIGN);
	void *reserve = mmap(NULL, span, PROT_NONE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (reserve == MAP_FAILED)
		return NULL;
	uintptr_t start = (uintptr_t)reserve;
	uintptr_t aligned = (uintptr_t)round_up(start, SHM_REGION_ALIGN);
	void *p = mmap((void *)aligned, (size_t)size, prot, MAP_SHARED | MAP_FIXED,
		       fd, 0);
	int saved = errno;
	if (aligned > start)
		munmap(reserve, aligned - start);
	uintptr_t end = aligned + (uintptr_t)size;
	if (start + span > end)
		munmap((void *)end, start + span - end);
	errno = saved;
	return p == MAP_FAILED ? NULL : p;
}

/* A hugetlb memfd mapped where the kernel puts it: it aligns hugetlb
 * mappings to their page size (2 MiB = SHM_REGION_ALIGN), so no MAP_FIXED
 * is needed, and an empty pool fails this mmap without touching any other
 * range (see map_aligned). */
static void *map_hugetlb(int fd, uint64_t size)
{
	void *p = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE, MAP_SHARED,
		       fd, 0);
	if (p == MAP_FAILED)
		return NULL;
	if ((uintptr_t)p % SHM_REGION_ALIGN != 0) {
		munmap(p, (size_t)size); /* ours: just mapped */
		errno = EINVAL;
		return NULL;
	}
	return p;
}

static int seal_size(int fd)
{
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0)
		return -errno;
	return 0;
}

/* memfd_create(mfd_flags) of `size` bytes, mapped aligned and sealed. */
static int memfd_map(const char *name, unsigned mfd_flags, uint64_t size,
		     struct shm_mapping *out)
{
	int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING | mfd_flags);
	if (fd < 0)
		return -errno;
	int rc = 0;
	if (ftruncate(fd, (off_t)size) < 0) {
		rc = -errno;
		goto fail_truncate;
	}
	void *p = (mfd_flags & MFD_HUGETLB) ? map_hugetlb(fd, size)
					    : map_aligned(fd, size, PROT_READ | PROT_WRITE);
	if (p == NULL) {
		rc = -errno;
		goto fail_map;
	}
	rc = seal_size(fd);
	if (rc < 0)
		goto fail_seal;
	out->fd = fd;
	out->base = p;
	out->size = size;
	return 0;

fail_seal:
	munmap(p, (size_t)size);
fail_map:
fail_truncate:
	close(fd);
	return rc;
}

static int try_hugetlb(const char *name, uint64_t size, struct shm_mapping *out)
{
	int rc = memfd_map(name, MFD_HUGETLB | MFD_HUGE_2MB, size, out);
	if (rc < 0)
		return rc;
	out->page_size = HUGE_2MB;
	out->hugetlb = true;
	snprintf(out->backing, sizeof(out->backing), "hugetlb memfd, 2 MiB pages");
	return 0;
}

static void read_shmem_thp_mode(char *buf, size_t len)
{
	snprintf(buf, len, "unknown");
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/shmem_enabled", "r");
	if (f == NULL)
		return;
	char line[128];
	if (fgets(line, sizeof(line), f) != NULL) {
		/* The active mode is the one in brackets: "always [never] ...". */
		char *open = strchr(line, '['), *close_br = open ? strchr(open, ']') : NULL;
		if (open != NULL && close_br != NULL) {
			*close_br = '\0';
			snprintf(buf, len, "%s", open + 1);
		}
	}
	fclose(f);
}

static int try_fallback(const char *name, uint64_t size, int hugetlb_err,
			struct shm_mapping *out)
{
	int rc = memfd_map(name, 0, size, out);
	if (rc < 0)
		return rc;
	/* Advice only: its failure (no THP in this kernel) changes nothing. */
	int advised = madvise(out->base, (size_t)size, MADV_HUGEPAGE) == 0;
	char thp[32];
	read_shmem_thp_mode(thp, sizeof(thp));
	out->page_size = (size_t)sysconf(_SC_PAGESIZE);
	out->hugetlb = false;
	snprintf(out->backing, sizeof(out->backing),
		 "memfd, %zu KiB pages (hugetlb: %s; MADV_HUGEPAGE %s, "
		 "shmem_enabled=%s)",
		 out->page_size / 1024,
		 hugetlb_err ? strerror(-hugetlb_err) : "not tried",
		 advised ? "advised" : "refused", thp);
	return 0;
}

int shm_map_create(const char *name, uint64_t size, unsigned flags,
		   struct shm_mapping *out)
{
	memset(out, 0, sizeof(*out));
	out->fd = -1;
	if (size == 0 || size > (UINT64_C(1) << 46))
		return -EINVAL;
	size = round_up(size, SHM_REGION_ALIGN);

	int hugetlb_err = 0;
	if (!(flags & SHM_MAP_NO_HUGETLB)) {
		hugetlb_err = try_hugetlb(name, size, out);
		if (hugetlb_err == 0) {
			log_msg(LOG_LEVEL_INFO, "region %s: %" PRIu64 " MiB on %s",
				name, size >> 20, out->backing);
			return 0;
		}
		if (flags & SHM_MAP_REQUIRE_HUGETLB)
			return hugetlb_err;
	}
	int rc = try_fallback(name, size, hugetlb_err, out);
	if (rc == 0)
		log_msg(LOG_LEVEL_INFO, "region %s: %" PRIu64 " MiB on %s", name,
			size >> 20, out->backing);
	return rc;
}

int shm_map_create_on(int fd, uint64_t size, bool hugetlb, struct shm_mapping *out)
{
	memset(out, 0, sizeof(*out));
	out->fd = -1;
	if (size == 0 || size > (UINT64_C(1) << 46))
		return -EINVAL;
	size = round_up(size, SHM_REGION_ALIGN);
	if (ftruncate(fd, (off_t)size) < 0)
		return -errno;
	void *p = map_aligned(fd, size, PROT_READ | PROT_WRITE);
	if (p == NULL)
		return -errno;
	/* Advice only, as for a memfd: huge pages if THP for shmem allows. */
	int advised = !hugetlb && madvise(p, (size_t)size, MADV_HUGEPAGE) == 0;
	out->fd = fd;
	out->base = p;
	out->size = size;
	out->hugetlb = hugetlb;
	out->page_size = hugetlb ? HUGE_2MB : (size_t)sysconf(_SC_PAGESIZE);
	if (hugetlb) {
		snprintf(out->backing, sizeof(out->backing), "hugetlbfs, 2 MiB pages");
	} else {
		char thp[32];
		read_shmem_thp_mode(thp, sizeof(thp));
		snprintf(out->backing, sizeof(out->backing),
			 "POSIX shm, %zu KiB pages (MADV_HUGEPAGE %s, "
			 "shmem_enabled=%s)", out->page_size / 1024,
			 advised ? "advised" : "refused", thp);
	}
	return 0;
}

int shm_map_attach(int fd, unsigned flags, struct shm_mapping *out)
{
	memset(out, 0, sizeof(*out));
	out->fd = -1;
	struct stat st;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (st.st_size <= 0)
		return -EINVAL;
	int prot = (flags & SHM_MAP_READONLY) ? PROT_READ : PROT_READ | PROT_WRITE;
	void *p = map_aligned(fd, (uint64_t)st.st_size, prot);
	if (p == NULL)
		return -errno;
	out->fd = fd;
	out->base = p;
	out->size = (uint64_t)st.st_size;
	out->page_size = (size_t)st.st_blksize;
	out->hugetlb = st.st_blksize >= (blksize_t)HUGE_2MB;
	snprintf(out->backing, sizeof(out->backing), "attached memfd, %zu KiB pages",
		 out->page_size / 1024);
	return 0;
}

void shm_map_release(struct shm_mapping *m)
{
	if (m->base != NULL)
		munmap(m->base, (size_t)m->size);
	if (m->fd >= 0)
		close(m->fd);
	m->base = NULL;
	m->fd = -1;
}
