/* Producer regions: see producer_region.h. */
#include "shm/producer_region.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* The smallest power of two above n: rings hold count - 1 handles. */
static uint32_t ring_slots_for(uint32_t n)
{
	uint32_t r = 2;
	while (r <= n)
		r <<= 1;
	return r;
}

int producer_region_create(uint32_t n_slots, struct producer_region *out,
			   char *err, size_t err_len)
{
	memset(out, 0, sizeof(*out));
	if (n_slots == 0 || n_slots > PRODUCER_SLOTS_MAX) {
		snprintf(err, err_len, "producer region: %u slots: expected 1..%u",
			 n_slots, PRODUCER_SLOTS_MAX);
		return -EINVAL;
	}
	uint32_t rs = ring_slots_for(n_slots);
	size_t ring_bytes = ring_memsize(rs);
	const struct shm_section_spec specs[] = {
		{SHM_SECTION_SLOTS, (uint64_t)n_slots * sizeof(struct shmsched_slot)},
		{SHM_SECTION_SUBMIT_RING, ring_bytes},
		{SHM_SECTION_COMPLETION_RING, ring_bytes},
		{SHM_SECTION_NOTICES, sizeof(struct shmsched_notices)},
	};
	out->region = shm_region_create("shmsched-producer", SHM_REGION_KIND_PRODUCER,
					specs, 4, 0);
	if (out->region == NULL) {
		int rc = -errno;
		snprintf(err, err_len, "producer region: cannot create: %s",
			 strerror(errno));
		return rc;
	}
	struct shm_span sl = shm_region_section(out->region, SHM_SECTION_SLOTS);
	struct shm_span su = shm_region_section(out->region, SHM_SECTION_SUBMIT_RING);
	struct shm_span co = shm_region_section(out->region,
						SHM_SECTION_COMPLETION_RING);
	out->slots = sl.base;
	out->notices = shm_region_section(out->region, SHM_SECTION_NOTICES).base;
	out->n_slots = n_slots;
	out->ring_slots = rs;
	out->submit = ring_init(su.base, su.size, rs, "submit");
	out->completion = ring_init(co.base, co.size, rs, "completion");
	if (out->submit == NULL || out->completion == NULL) {
		snprintf(err, err_len, "producer region: cannot initialise its rings");
		producer_region_close(out);
		return -EINVAL;
	}
	return 0;
}

int producer_region_attach(int fd, struct producer_region *out, char *err,
			   size_t err_len)
{
	memset(out, 0, sizeof(*out));
	out->region = shm_region_attach(fd, SHM_REGION_KIND_PRODUCER, 0, err, err_len);
	if (out->region == NULL)
		return -errno;
	struct shm_span sl = shm_region_section(out->region, SHM_SECTION_SLOTS);
	struct shm_span su = shm_region_section(out->region, SHM_SECTION_SUBMIT_RING);
	struct shm_span co = shm_region_section(out->region,
						SHM_SECTION_COMPLETION_RING);
	struct shm_span no = shm_region_section(out->region, SHM_SECTION_NOTICES);
	uint64_t n = sl.size / sizeof(struct shmsched_slot);
	if (sl.base == NULL || su.base == NULL || co.base == NULL || n == 0 ||
	    n > PRODUCER_SLOTS_MAX || sl.size % sizeof(struct shmsched_slot) != 0 ||
	    no.base == NULL || no.size < sizeof(struct shmsched_notices)) {
		snprintf(err, err_len, "producer region: sections missing or of the "
			 "wrong size (slots section %llu bytes)",
			 (unsigned long long)sl.size);
		producer_region_close(out);
		return -EPROTO;
	}
	out->slots = sl.base;
	out->notices = no.base;
	out->n_slots = (uint32_t)n;
	out->ring_slots = ring_slots_for(out->n_slots);
	out->submit = ring_attach(su.base, su.size, out->ring_slots);
	out->completion = ring_attach(co.base, co.size, out->ring_slots);
	if (out->submit == NULL || out->completion == NULL) {
		snprintf(err, err_len, "producer region: a ring is not one of %u slots",
			 out->ring_slots);
		producer_region_close(out);
		return -EPROTO;
	}
	return 0;
}

void producer_region_close(struct producer_region *p)
{
	shm_region_close(p->region);
	memset(p, 0, sizeof(*p));
}
