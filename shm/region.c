/* Regions: a header (layout.h) and sections in a memfd. See region.h.
 *
 * Invariant: every section lookup goes through `hdr`, the private copy made
 * (and, for attach, validated) when the region was opened; the shared header
 * is written once by the creator and never trusted afterwards.
 */
#include "shm/region.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shm/layout_check.h"

struct shm_region {
	struct shm_mapping map;
	struct shm_header hdr; /* private copy: see the file comment */
};

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) / a * a;
}

static int check_specs(enum shm_region_kind kind,
		       const struct shm_section_spec *specs, unsigned n)
{
	if (kind != SHM_REGION_KIND_STATE && kind != SHM_REGION_KIND_PRODUCER)
		return -EINVAL;
	if (n == 0 || n > SHM_SECTION_MAX || specs == NULL)
		return -EINVAL;
	for (unsigned i = 0; i < n; i++) {
		if (specs[i].id == 0 || specs[i].size == 0 ||
		    specs[i].size > (UINT64_C(1) << 44))
			return -EINVAL;
		for (unsigned j = 0; j < i; j++)
			if (specs[j].id == specs[i].id)
				return -EINVAL;
	}
	return 0;
}

/* Lays the sections out in r->hdr; returns the region's size. */
static uint64_t lay_out(struct shm_region *r, enum shm_region_kind kind,
			const struct shm_section_spec *specs, unsigned n_specs)
{
	struct shm_header *h = &r->hdr;
	h->magic = SHM_MAGIC;
	h->abi_version = SHM_ABI_VERSION;
	h->header_size = SHM_HEADER_SIZE;
	h->kind = kind;
	h->section_count = n_specs;
	uint64_t off = align_up(SHM_HEADER_SIZE, SHM_SECTION_ALIGN);
	for (unsigned i = 0; i < n_specs; i++) {
		h->sections[i].id = specs[i].id;
		h->sections[i].offset = off;
		h->sections[i].size = specs[i].size;
		off = align_up(off + specs[i].size, SHM_SECTION_ALIGN);
	}
	return off;
}

/* Writes the header into the new mapping and publishes it ready. */
static void publish(struct shm_region *r)
{
	struct shm_header *h = &r->hdr;
	h->total_size = r->map.size;
	h->page_size = (uint32_t)r->map.page_size;

	/* The memfd is new and zero-filled; write the header, then publish. */
	struct shm_header *shared = r->map.base;
	memcpy(shared, h, sizeof(*h));
	/* Release, partner of the acquire load in layout_check_header(): an
	 * attacher that sees SHM_READY sees the whole header. */
	__atomic_store_n(&shared->ready, SHM_READY, __ATOMIC_RELEASE);
	h->ready = SHM_READY;
}

/* Both creations: the specs checked, the layout, then a memfd (`fd` < 0:
 * shm_map_create with `name` and `flags`) or the caller's new file `fd`,
 * and the header published. */
static struct shm_region *create(const char *name, int fd, bool hugetlb,
				 enum shm_region_kind kind,
				 const struct shm_section_spec *specs,
				 unsigned n_specs, unsigned flags)
{
	int rc = check_specs(kind, specs, n_specs);
	if (rc < 0) {
		errno = -rc;
		return NULL;
	}
	struct shm_region *r = calloc(1, sizeof(*r));
	if (r == NULL)
		return NULL;
	uint64_t size = lay_out(r, kind, specs, n_specs);
	rc = fd < 0 ? shm_map_create(name, size, flags, &r->map)
		    : shm_map_create_on(fd, size, hugetlb, &r->map);
	if (rc < 0) {
		free(r);
		errno = -rc;
		return NULL;
	}
	publish(r);
	return r;
}

struct shm_region *shm_region_create(const char *name, enum shm_region_kind kind,
				     const struct shm_section_spec *specs,
				     unsigned n_specs, unsigned flags)
{
	return create(name, -1, false, kind, specs, n_specs, flags);
}

struct shm_region *shm_region_create_on(int fd, bool hugetlb,
					enum shm_region_kind kind,
					const struct shm_section_spec *specs,
					unsigned n_specs)
{
	if (fd < 0) {
		errno = EBADF;
		return NULL;
	}
	return create(NULL, fd, hugetlb, kind, specs, n_specs, 0);
}

struct shm_region *shm_region_attach(int fd, uint32_t expected_kind,
				     unsigned flags, char *err, size_t err_len)
{
	if (err != NULL && err_len > 0)
		err[0] = '\0';
	struct shm_region *r = calloc(1, sizeof(*r));
	if (r == NULL)
		return NULL;
	int rc = 0;
	int own_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (own_fd < 0) {
		rc = -errno;
		if (err != NULL)
			snprintf(err, err_len, "cannot duplicate region fd %d: %s",
				 fd, strerror(errno));
		goto fail_dup;
	}
	rc = shm_map_attach(own_fd, flags & SHM_MAP_READONLY, &r->map);
	if (rc < 0) {
		if (err != NULL)
			snprintf(err, err_len, "cannot map region fd %d: %s", fd,
				 strerror(-rc));
		goto fail_map;
	}
	rc = layout_check_header(r->map.base, r->map.size, expected_kind, &r->hdr,
				 err, err_len);
	if (rc < 0)
		goto fail_check;
	return r;

fail_check:
	shm_map_release(&r->map); /* closes own_fd too */
	free(r);
	errno = -rc;
	return NULL;
fail_map:
	close(own_fd);
fail_dup:
	free(r);
	errno = -rc;
	return NULL;
}

void shm_region_close(struct shm_region *r)
{
	if (r == NULL)
		return;
	shm_map_release(&r->map);
	free(r);
}

int shm_region_fd(const struct shm_region *r)
{
	return r->map.fd;
}

struct shm_span shm_region_span(const struct shm_region *r)
{
	return (struct shm_span){.base = r->map.base, .size = r->map.size};
}

uint32_t shm_region_kind(const struct shm_region *r)
{
	return r->hdr.kind;
}

size_t shm_region_page_size(const struct shm_region *r)
{
	return r->map.page_size;
}

bool shm_region_hugetlb(const struct shm_region *r)
{
	return r->map.hugetlb;
}

const char *shm_region_backing(const struct shm_region *r)
{
	return r->map.backing;
}

struct shm_span shm_region_section(const struct shm_region *r, uint32_t id)
{
	for (uint32_t i = 0; i < r->hdr.section_count; i++) {
		const struct shm_section *s = &r->hdr.sections[i];
		if (s->id == id)
			return (struct shm_span){
				.base = (char *)r->map.base + s->offset,
				.size = s->size,
			};
	}
	return (struct shm_span){.base = NULL, .size = 0};
}
