/* Validation of a region header read from memory another process wrote.
 *
 * This is the decoder of the one piece of outside input that every region
 * attach reads; it is pure (no I/O, no allocation) so that it can be fuzzed
 * (tests/fuzz/fuzz_layout.c) and tested on bounded inputs.
 */
#ifndef SHMSCHED_SHM_LAYOUT_CHECK_H
#define SHMSCHED_SHM_LAYOUT_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "shm/layout.h"

/* Checks the header at the start of `mem`, a mapping of `mapped_size` bytes,
 * against what this program expects, and copies it into `*out` (the copy is
 * what callers use afterwards: the shared bytes may change under them).
 * `expected_kind` 0 accepts any kind.
 *
 * Loads `ready` with acquire order (partner: the creator's release store in
 * shm_region_create) before reading anything else.
 *
 * Returns 0, or a negative errno with a message for a person in `err`:
 *   -EAGAIN          the creator has not finished (ready != SHM_READY)
 *   -EPROTONOSUPPORT ABI version differs (the message names both versions)
 *   -EPROTO          anything else malformed: magic, sizes, kind, sections
 */
int layout_check_header(const void *mem, uint64_t mapped_size,
			uint32_t expected_kind, struct shm_header *out,
			char *err, size_t err_len);

/* Returns a name for a region kind ("state", "producer") or "unknown". */
const char *layout_kind_name(uint32_t kind);

#endif
