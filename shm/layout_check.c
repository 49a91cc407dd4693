/* Region header validation: see layout_check.h and the specification in
 * layout.h. Every field is checked in the caller's private copy, so a peer
 * rewriting the shared header during the check cannot make a checked value
 * differ from a used one. Cost: O(SHM_SECTION_MAX^2) compares, once per
 * attach. */
#include "shm/layout_check.h"

#include "base/base.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *layout_kind_name(uint32_t kind)
{
	switch (kind) {
	case SHM_REGION_KIND_STATE:
		return "state";
	case SHM_REGION_KIND_PRODUCER:
		return "producer";
	default:
		return "unknown";
	}
}

static bool kind_known(uint32_t kind)
{
	return kind == SHM_REGION_KIND_STATE || kind == SHM_REGION_KIND_PRODUCER;
}

static int check_sections(const struct shm_header *h, char *err, size_t err_len)
{
	uint64_t prev_end = SHM_HEADER_SIZE;
	for (uint32_t i = 0; i < h->section_count; i++) {
		const struct shm_section *s = &h->sections[i];
		if (s->id == 0)
			return errmsg_rc(-EPROTO, err, err_len,
				    "region header: section %" PRIu32 " has id 0", i);
		if (s->offset % SHM_SECTION_ALIGN != 0)
			return errmsg_rc(-EPROTO, err, err_len,
				    "region header: section %" PRIu32 " (id %" PRIu32
				    ") offset %" PRIu64 " is not a multiple of %u",
				    i, s->id, s->offset, SHM_SECTION_ALIGN);
		if (s->offset < prev_end)
			return errmsg_rc(-EPROTO, err, err_len,
				    "region header: section %" PRIu32 " (id %" PRIu32
				    ") at offset %" PRIu64 " overlaps the header or the "
				    "section before it (which ends at %" PRIu64 ")",
				    i, s->id, s->offset, prev_end);
		if (s->size == 0 || s->size > h->total_size ||
		    s->offset > h->total_size - s->size)
			return errmsg_rc(-EPROTO, err, err_len,
				    "region header: section %" PRIu32 " (id %" PRIu32
				    ") of %" PRIu64 " bytes at offset %" PRIu64
				    " does not fit in a region of %" PRIu64 " bytes",
				    i, s->id, s->size, s->offset, h->total_size);
		for (uint32_t j = 0; j < i; j++)
			if (h->sections[j].id == s->id)
				return errmsg_rc(-EPROTO, err, err_len,
					    "region header: section id %" PRIu32
					    " appears twice", s->id);
		prev_end = s->offset + s->size;
	}
	return 0;
}

int layout_check_header(const void *mem, uint64_t mapped_size,
			uint32_t expected_kind, struct shm_header *out,
			char *err, size_t err_len)
{
	if (mapped_size < SHM_HEADER_SIZE)
		return errmsg_rc(-EPROTO, err, err_len,
			    "region is %" PRIu64 " bytes, smaller than a %u-byte header",
			    mapped_size, SHM_HEADER_SIZE);

	const struct shm_header *shared = mem;
	/* Acquire, partner of the creator's release store of SHM_READY: the rest
	 * of the header, read below, was written before it. */
	uint32_t ready = __atomic_load_n(&shared->ready, __ATOMIC_ACQUIRE);
	memcpy(out, shared, sizeof(*out));
	const struct shm_header *h = out;

	if (h->magic != SHM_MAGIC)
		return errmsg_rc(-EPROTO, err, err_len,
			    "not a shmsched region: magic is 0x%016" PRIx64
			    ", expected 0x%016" PRIx64, h->magic, SHM_MAGIC);
	if (h->abi_version != SHM_ABI_VERSION)
		return errmsg_rc(-EPROTONOSUPPORT, err, err_len,
			    "ABI version mismatch: the region was made by ABI version "
			    "%" PRIu32 ", this program uses ABI version %u",
			    h->abi_version, SHM_ABI_VERSION);
	if (ready != SHM_READY)
		return errmsg_rc(-EAGAIN, err, err_len,
			    "region is not ready: its creator has not finished "
			    "initialising it");
	if (h->header_size != SHM_HEADER_SIZE)
		return errmsg_rc(-EPROTO, err, err_len,
			    "header size mismatch: the region's header is %" PRIu32
			    " bytes, this program's is %u", h->header_size,
			    SHM_HEADER_SIZE);
	if (h->total_size != mapped_size)
		return errmsg_rc(-EPROTO, err, err_len,
			    "size mismatch: the region's header says %" PRIu64
			    " bytes, the mapped file has %" PRIu64,
			    h->total_size, mapped_size);
	if (!kind_known(h->kind))
		return errmsg_rc(-EPROTO, err, err_len,
			    "region kind %" PRIu32 " is unknown to this program",
			    h->kind);
	if (expected_kind != 0 && h->kind != expected_kind)
		return errmsg_rc(-EPROTO, err, err_len,
			    "region kind mismatch: the region is a %s region, "
			    "this program expected a %s region",
			    layout_kind_name(h->kind), layout_kind_name(expected_kind));
	if (h->section_count > SHM_SECTION_MAX)
		return errmsg_rc(-EPROTO, err, err_len,
			    "region header: %" PRIu32 " sections, at most %u allowed",
			    h->section_count, SHM_SECTION_MAX);
	return check_sections(h, err, err_len);
}
