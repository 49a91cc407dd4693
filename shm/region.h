/* Shared-memory regions: create, attach, find sections.
 *
 * A region is a memfd holding a versioned header (layout.h) and up to
 * SHM_SECTION_MAX sections. The creator fills it and publishes it ready;
 * other processes attach to its fd, which checks the header before anything
 * else is read. Slow path only: creation and attach make system calls.
 *
 * Concurrency: a struct shm_region is owned by one thread at a time; the
 * memory it maps is shared and each section states its own protocol.
 */
#ifndef SHMSCHED_SHM_REGION_H
#define SHMSCHED_SHM_REGION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shm/layout.h"
#include "shm/map.h"
#include "shm/offset.h"

struct shm_region;

struct shm_section_spec {
	uint32_t id;   /* enum shm_section_id, unique and non-zero */
	uint64_t size; /* bytes, > 0 */
};

/* Creates a region of `kind` with the given sections, zero-filled, laid out
 * in the order given, each at a multiple of SHM_SECTION_ALIGN. `flags` are
 * shm_map_flags (SHM_MAP_NO_HUGETLB, SHM_MAP_REQUIRE_HUGETLB). The region
 * is published ready before this returns; callers that must fill sections
 * before a peer may attach do so before passing the fd on.
 * Returns the region, or NULL with errno:
 *   EINVAL   bad kind, no sections, too many, a zero id or size, duplicate ids
 *   ENOMEM, ENOSPC  hugetlb required and not available
 *   any errno of memfd_create, ftruncate, fcntl or mmap. */
struct shm_region *shm_region_create(const char *name, enum shm_region_kind kind,
				     const struct shm_section_spec *specs,
				     unsigned n_specs, unsigned flags);

/* As shm_region_create, on the new empty file `fd` (shm_map_create_on: a
 * named file that outlives the process), whose ownership it takes on
 * success only. */
struct shm_region *shm_region_create_on(int fd, bool hugetlb,
					enum shm_region_kind kind,
					const struct shm_section_spec *specs,
					unsigned n_specs);

/* Attaches to the region in memfd `fd` (dup'ed: the caller keeps its fd),
 * read-only with SHM_MAP_READONLY. `expected_kind` 0 accepts any kind.
 * Returns the region, or NULL with errno and a message in `err`:
 *   EAGAIN, EPROTONOSUPPORT, EPROTO  as layout_check_header()
 *   EINVAL   fd is not a region (empty file)
 *   any errno of dup, fstat or mmap. */
struct shm_region *shm_region_attach(int fd, uint32_t expected_kind,
				     unsigned flags, char *err, size_t err_len);

/* Unmaps, closes the region's fd and frees the handle. NULL is a no-op. */
void shm_region_close(struct shm_region *r);

int shm_region_fd(const struct shm_region *r);
struct shm_span shm_region_span(const struct shm_region *r);
uint32_t shm_region_kind(const struct shm_region *r);
size_t shm_region_page_size(const struct shm_region *r);
bool shm_region_hugetlb(const struct shm_region *r);
/* What backs the region, for a person (page size, and why no huge pages). */
const char *shm_region_backing(const struct shm_region *r);

/* Returns the section `id` as a span, or a span with base NULL and size 0
 * when the region has no such section. Uses the header as validated at
 * create or attach, never the shared copy. */
struct shm_span shm_region_section(const struct shm_region *r, uint32_t id);

#endif
