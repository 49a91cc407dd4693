/* The layout of every shmsched shared-memory region: types only.
 *
 * A region is one memfd, mapped whole by each process that uses it, at
 * whatever address that process gets. Nothing inside a region is a pointer:
 * every reference is a byte offset from the region's first byte.
 *
 * Header (offset 0, SHM_HEADER_SIZE bytes, little-endian, native alignment):
 *
 *   offset  size  field          meaning
 *   ------  ----  -------------  ---------------------------------------------
 *        0     8  magic          SHM_MAGIC ("SHMSCHED" read as a u64)
 *        8     4  abi_version    SHM_ABI_VERSION of the creator
 *       12     4  header_size    SHM_HEADER_SIZE of the creator
 *       16     8  total_size     bytes in the region (= the memfd's size)
 *       24     4  kind           enum shm_region_kind
 *       28     4  section_count  entries used in sections[], <= SHM_SECTION_MAX
 *       32     4  page_size      bytes per page the creator obtained (info only)
 *       36     4  ready          0 while the creator fills the region; then
 *                                SHM_READY, stored with release order
 *       40    24  reserved       zero
 *       64   384  sections[16]   { u64 offset; u64 size; u32 id; u32 reserved }
 *      448    64  reserved       zero
 *
 * Sections start at multiples of SHM_SECTION_ALIGN, after the header, in
 * increasing offset order, do not overlap, and end inside total_size. Each
 * id appears at most once.
 *
 * Version rule: SHM_ABI_VERSION changes with any change to this header or to
 * the layout of any section. Both sides of a region ship together, so a
 * reader accepts exactly its own version and refuses any other with a message
 * that names both versions (there is no compatibility window to get wrong).
 *
 * Read protocol: the creator writes every field and section, then stores
 * ready = SHM_READY with release order; an attacher loads ready with acquire
 * order and refuses the region (EAGAIN) until it reads SHM_READY. After that
 * the header never changes. Sections that change afterwards have their own
 * protocols (rings: rte_ring head/tail; snapshots: RCU), stated where defined.
 * An attacher that did not create the region treats every byte of it as
 * untrusted and validates it before use (shm/layout_check.c).
 *
 * Crashes: regions live only in memory (memfd), never on disk. A region
 * lasts while any process maps it or holds its fd, and is freed by the
 * kernel after the last one goes; no state survives a restart of the daemon,
 * which rebuilds from its inputs. The creator seals the memfd's size, so a
 * peer cannot shrink a region under another's mapping (which would SIGBUS).
 */
#ifndef SHMSCHED_SHM_LAYOUT_H
#define SHMSCHED_SHM_LAYOUT_H

#include <stdint.h>

#define SHM_MAGIC UINT64_C(0x44454843534d4853) /* "SHMSCHED" in memory order */
#define SHM_ABI_VERSION 3u /* 2: a placed slot names its devices; 3: and its
                            * placement id, which a release names */
#define SHM_READY UINT32_C(0x59444552) /* "REDY"; any other value: not ready */
#define SHM_HEADER_SIZE 512u
#define SHM_SECTION_MAX 16u
#define SHM_SECTION_ALIGN 4096u
/* Regions are sized and aligned to 2 MiB whatever the page size obtained, so
 * a huge-page and a fallback region have the same layout. */
#define SHM_REGION_ALIGN (UINT64_C(2) << 20)

enum shm_region_kind {
	SHM_REGION_KIND_STATE = 1,    /* the daemon's cluster state */
	SHM_REGION_KIND_PRODUCER = 2, /* one producer's slots and rings */
};

/* Section ids. More arrive with the stages that own them. */
enum shm_section_id {
	SHM_SECTION_SUBMIT_RING = 1,     /* producer -> daemon handles */
	SHM_SECTION_COMPLETION_RING = 2, /* daemon -> producer handles */
	SHM_SECTION_SLOTS = 3,           /* struct shmsched_slot[] (shmsched/wire.h) */
};

struct shm_section {
	uint64_t offset;
	uint64_t size;
	uint32_t id;
	uint32_t reserved;
};

struct shm_header {
	uint64_t magic;
	uint32_t abi_version;
	uint32_t header_size;
	uint64_t total_size;
	uint32_t kind;
	uint32_t section_count;
	uint32_t page_size;
	uint32_t ready; /* accessed only with __atomic builtins; see above */
	uint8_t reserved0[24];
	struct shm_section sections[SHM_SECTION_MAX];
	uint8_t reserved1[64];
};

_Static_assert(sizeof(struct shm_section) == 24, "section entry is 24 bytes");
_Static_assert(sizeof(struct shm_header) == SHM_HEADER_SIZE, "header size");
_Static_assert(__builtin_offsetof(struct shm_header, sections) == 64,
	       "sections start at byte 64");
_Static_assert(__builtin_offsetof(struct shm_header, ready) == 36,
	       "ready is at byte 36");

#endif
