/* The values of quota by escrow's keys in etcd (issue 40;
 * docs/design/multi-host.md, "Quota by escrow"; the arithmetic in
 * coord/quota_escrow.h). Written by the coordinator (a slice) and by a
 * shard's owner (its acknowledgement, its use), read by the others:
 * outside input, decoded strictly (tests/fuzz/fuzz_quota_escrow_value.c).
 *
 * The text, one space between fields, nothing else; one cell a (flavor,
 * resource) of the queue, the cells in strictly increasing order of
 * (flavor, resource) by bytes (so one value has one text):
 *   quota/<queue>/<s>       "1 slice" then " <flavor> <resource> <amount>" a cell
 *   quota/<queue>/<s>/ack   "1 ack <revision>" then the slice's cells: the
 *                           slice key's modification revision the owner
 *                           admits against (0: the key was absent, the
 *                           slice empty), and that slice
 *   quota/<queue>/<s>/use   "1 use" then " <flavor> <resource> <use> <more>"
 *                           a cell: the owner's use attributed to s, and
 *                           what its waiting pods want beyond it
 *                           (coord/quota_escrow_member.h, QE7)
 * 1 is the format's version; a flavor is a ResourceFlavor's name (1 to
 * 253 bytes of [a-z0-9.-]); a resource a qualified name (1 to 317 bytes
 * of [A-Za-z0-9._/-]); numbers decimal, no sign, no leading zero, amounts
 * at most QUOTA_ESCROW_QUANTITY_MAX, the revision 0 to INT64_MAX. At most
 * QUOTA_ESCROW_CELLS cells and QUOTA_ESCROW_VALUE_MAX bytes. */
#ifndef SHMSCHED_COORD_QUOTA_ESCROW_VALUE_H
#define SHMSCHED_COORD_QUOTA_ESCROW_VALUE_H

#include <stddef.h>
#include <stdint.h>

#define QUOTA_ESCROW_CELLS 32
#define QUOTA_ESCROW_FLAVOR_MAX 253
#define QUOTA_ESCROW_RESOURCE_MAX 317
/* "1 slice" / "1 use" / "1 ack " + a revision, then each cell: its two
 * names, two numbers of up to 17 digits (2^54) and four spaces. */
#define QUOTA_ESCROW_VALUE_MAX                                                          \
	(6 + 19 + QUOTA_ESCROW_CELLS *                                                  \
			  (4 + QUOTA_ESCROW_FLAVOR_MAX + QUOTA_ESCROW_RESOURCE_MAX + 2 * 17))

enum quota_escrow_kind {
	QUOTA_ESCROW_SLICE = 1,
	QUOTA_ESCROW_ACK,
	QUOTA_ESCROW_USE,
};

struct quota_escrow_cell {
	char flavor[QUOTA_ESCROW_FLAVOR_MAX + 1];
	char resource[QUOTA_ESCROW_RESOURCE_MAX + 1];
	int64_t amount; /* the slice; the use */
	int64_t more;   /* QUOTA_ESCROW_USE only: wanted beyond the use; else 0 */
};

struct quota_escrow_value {
	enum quota_escrow_kind kind;
	int64_t revision; /* QUOTA_ESCROW_ACK only (0: no slice key); else 0 */
	size_t n;
	struct quota_escrow_cell cells[QUOTA_ESCROW_CELLS];
};

/* Writes the text into out (QUOTA_ESCROW_VALUE_MAX + 1 bytes, NUL-ended);
 * its length, or -EINVAL (a kind, name, number or order out of the
 * format). */
int quota_escrow_value_encode(const struct quota_escrow_value *v, char *out);

/* Reads len bytes (not NUL-ended). 0, or -EINVAL with msg naming the
 * field, the value and what was expected, and *out zeroed. */
int quota_escrow_value_decode(const void *text, size_t len, struct quota_escrow_value *out,
			      char *msg, size_t msglen);

#endif
