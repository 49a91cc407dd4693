/* Fuzz target: the region header decoder (shm/layout_check.c) on arbitrary
 * bytes. The input is the mapped header; its length is the mapped size,
 * unless the input is longer than a header, when the 8 bytes after the
 * header give the mapped size (so size mismatches are explored too). */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "shm/shm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* A header-sized, aligned buffer: the decoder reads whole fields. */
	_Alignas(8) uint8_t buf[SHM_HEADER_SIZE];
	memset(buf, 0, sizeof(buf));
	memcpy(buf, data, size < sizeof(buf) ? size : sizeof(buf));
	uint64_t mapped = size;
	if (size >= sizeof(buf) + 8)
		memcpy(&mapped, data + sizeof(buf), 8);
	else if (size > sizeof(buf))
		mapped = sizeof(buf);

	struct shm_header copy;
	char err[256];
	for (uint32_t kind = 0; kind <= 3; kind++) {
		int rc = layout_check_header(buf, mapped, kind, &copy, err,
					     sizeof(err));
		if (rc == 0) {
			/* What the decoder accepts, callers may index without checks. */
			if (copy.section_count > SHM_SECTION_MAX)
				__builtin_trap();
			for (uint32_t i = 0; i < copy.section_count; i++)
				if (copy.sections[i].offset + copy.sections[i].size >
				    mapped)
					__builtin_trap();
		} else if (err[0] == '\0') {
			__builtin_trap(); /* every refusal says why */
		}
	}
	return 0;
}
