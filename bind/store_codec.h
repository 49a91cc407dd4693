/* The durable store's records: how a node, a placement and a producer
 * identity are written as bytes (bind/store.h keeps them), and read back.
 *
 * Strings travel by value (an intern id means nothing after a reboot);
 * a placement names its node by name (slots are rebuilt) and keeps its id
 * (index and generation: what producers hold). Every record starts with
 * its format version. Decoding treats the bytes as untrusted (a damaged
 * disk, a hostile file): every length and count is checked, every enum
 * value too; a record that does not check out is refused with what is
 * wrong, never half-used.
 *
 * Format (little-endian, packed), version STORE_CODEC_VERSION:
 *   str        u16 length, then that many bytes (no NUL), <= INTERN_MAX_LEN
 *   node       u8 version, u8 unschedulable, u8 ready, u8 n_gpus, u8 n_numa,
 *              u8 reserved, u16 n_cores, u16 n_labels, u16 n_taints,
 *              i64 allocatable[RES_MAX], str name, str gpu_model,
 *              n_labels x (str key, str value),
 *              n_taints x (str key, str value, u8 effect)
 *   placement  u8 version, u8 n_ports, u16 reserved, u32 owner, u64 cookie,
 *              i64 request[RES_MAX], i64 nonzero_cpu_milli,
 *              i64 nonzero_mem_bytes, u16 gpu_mask, u16 gpu_milli,
 *              u16 n_cores, u16 reserved, u64 cpuset[CORE_WORDS],
 *              n_ports x (str ip, u16 port, u8 protocol),
 *              str node, str pod, u8 group_terms, group, i32 priority
 *   group      u16 length 0 (none), or that many bytes of the group's
 *              encoding (shm/pod_group.h: its ids only hold places), then
 *              one str per id in pod_group_map_ids() order, interned anew
 *   identity   u8 version, u8 reserved[3], u32 uid, str name
 *   afs        u8 version, u8 reserved, u16 n, u64 last_ns, str namespace,
 *              str name, n x (str resource, f64 consumed)
 *              (one LocalQueue's admission fair sharing usage,
 *              quota/admission_usage.h; f64 as its IEEE 754 bits)
 */
#ifndef SHMSCHED_BIND_STORE_CODEC_H
#define SHMSCHED_BIND_STORE_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include "shm/shm.h"

#define STORE_CODEC_VERSION 3u /* 2: placements carry their group; 3: and
				* their priority */
/* The longest placement record: what the store's queue entries hold. */
#define STORE_CODEC_PLACEMENT_MAX 8192u

/* Writes node `n` (strings from `t`) into buf. Returns the length, or
 * -E2BIG when it does not fit `cap`. */
int store_encode_node(const struct node_spec *n, const struct intern *t,
		      uint8_t *buf, size_t cap);

/* Reads a node, interning its strings in `t`. Returns 0, or -EBADMSG with
 * what is wrong in `err`, -ENOSPC/-ENOMEM from the intern table. */
int store_decode_node(const uint8_t *buf, size_t len, struct intern *t,
		      struct node_spec *out, char *err, size_t err_len);

/* Writes placement record `r`, whose node is named `node` (its name id). */
int store_encode_placement(const struct placement_record *r, uint32_t node,
			   const struct intern *t, uint8_t *buf, size_t cap);

/* Reads a placement: the record (slot and node generation left 0) and its
 * node's name, interned in `t`. Errors as store_decode_node(). */
int store_decode_placement(const uint8_t *buf, size_t len, struct intern *t,
			   struct placement_record *out, uint32_t *node,
			   char *err, size_t err_len);

int store_encode_identity(const struct state_identity *id, uint8_t *buf,
			  size_t cap);
int store_decode_identity(const uint8_t *buf, size_t len,
			  struct state_identity *out, char *err, size_t err_len);

/* One LocalQueue's decayed usage (admission fair sharing: Kueue's
 * status.fairSharing.admissionFairSharingStatus, consumedResources and
 * lastUpdate), by names: the tree's indices do not outlive it. Bounds as
 * quota/quota.h's (a namespace is a DNS label, a name at most 253 bytes,
 * at most 16 resources). */
#define STORE_AFS_NAMESPACE_MAX 63
#define STORE_AFS_NAME_MAX 253
#define STORE_AFS_RESOURCES 16

struct store_afs {
	char ns[STORE_AFS_NAMESPACE_MAX + 1];
	char name[STORE_AFS_NAME_MAX + 1];
	uint64_t last_ns;   /* when saved: wall-clock (CLOCK_REALTIME) ns */
	uint16_t n;         /* resources below, each named once */
	char resource[STORE_AFS_RESOURCES][STORE_AFS_NAME_MAX + 1];
	double consumed[STORE_AFS_RESOURCES]; /* finite, >= 0 */
};

/* Writes `a` (its first min(n, STORE_AFS_RESOURCES) resources). Returns
 * the length, or -E2BIG when it does not fit `cap`. */
int store_encode_afs(const struct store_afs *a, uint8_t *buf, size_t cap);

/* Reads one: 0, or -EBADMSG with what is wrong in `err` (another
 * version, a length past the end or the bound, an empty name, a NUL
 * inside one, a resource twice, a consumed value negative or not finite,
 * bytes after the end). *out is zeroed first, names NUL-padded. */
int store_decode_afs(const uint8_t *buf, size_t len, struct store_afs *out,
		     char *err, size_t err_len);

#endif
