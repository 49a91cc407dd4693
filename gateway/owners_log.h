/* The gateway's owners log (shmsched-gateway --owners-file PATH): which
 * HTTP user placed each pod, kept across a gateway restart (issue 41).
 *
 * The file, line by line (each ends in '\n'):
 *
 *   shmsched-gateway owners v1        the header, line 1
 *   + USER NAMESPACE/NAME             USER placed (or is placing) the pod
 *   - USER NAMESPACE/NAME             USER's pod was released
 *
 * Fields are separated by one space. USER and NAMESPACE/NAME are written
 * byte by byte: a byte in 0x21..0x7e other than '%' as itself, any other
 * (a space, a control byte, '%', UTF-8) as %XX in upper-case hex; one
 * spelling only, so the reader refuses "%41" for 'A' and "%2f". USER is
 * 1..255 bytes and holds no NUL; NAMESPACE (1..63 bytes) and NAME
 * (1..253) hold no '/' and no control byte, as the gateway's decoder
 * takes them. For each NAMESPACE/NAME the last '+' line wins (one owner a
 * name); a '-' line must name the owner of the '+' line it ends. A last
 * line without its '\n' is a write the gateway did not finish (it submits
 * a pod only after its line is written and synced): it is cut off, with a
 * warning. Any other fault refuses the whole file, naming PATH:LINE.
 *
 * Bounds (gw_owners_limits): the file's bytes (default 64 MiB), the live
 * entries (default 1,048,576), a line (GW_OWNERS_LINE_MAX, 2,048 bytes:
 * the longest escaped one is 1,720). Beyond them a read is refused with a
 * message and an append answers -EFBIG or -E2BIG: never more memory than
 * the file's bytes and a pointer an entry.
 *
 * Durability: gw_owners_append() writes its lines in one write() and
 * fdatasync()s them before it returns, and the dispatcher submits a pod
 * only after that; a tombstone is not synced (a lost one is harmless: the
 * start drops every entry the daemon does not hold, and the next append's
 * sync carries it). So for every pod the daemon holds, the file's last '+'
 * line for its name is the user whose submission placed it, and an entry
 * lost with a crash leaves a pod with no owner (admin only), never with
 * the wrong one. Compaction writes PATH.tmp (0600), fsyncs it, renames it
 * over PATH and fsyncs the directory: a crash leaves the old file or the
 * new one.
 *
 * Threads: one thread at a time per log (the dispatcher's).
 */
#ifndef SHMSCHED_GATEWAY_OWNERS_LOG_H
#define SHMSCHED_GATEWAY_OWNERS_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GW_OWNERS_HEADER "shmsched-gateway owners v1"
#define GW_OWNERS_LINE_MAX 2048u
#define GW_OWNERS_USER_MAX 255u            /* bytes of a user name */
#define GW_OWNERS_FILE_MAX_DEFAULT ((size_t)64 << 20)
#define GW_OWNERS_ENTRIES_DEFAULT ((size_t)1 << 20)
#define GW_OWNERS_COMPACT_MIN_DEFAULT 1024u

struct gw_owners_limits {
	size_t max_bytes;   /* the file, at most */
	size_t max_entries; /* live entries, at most */
	size_t compact_min; /* dead lines before run-time compaction is
			     * considered (then: when they exceed live ones) */
};

/* A pod and its user, for gw_owners_append(). */
struct gw_owner_rec {
	const char *user;   /* NUL-terminated */
	const char *name;   /* "namespace/name", NUL-terminated; its
			     * cookie is gw_cookie(name) */
};

struct gw_owners;

/* Parses text[0..len) (a file's contents; `source` names it in messages)
 * into a new log with no file behind it. Returns 0 with *out, or -EINVAL
 * (err: "SOURCE:LINE: what is wrong"), -E2BIG (more live entries than
 * lim->max_entries), -EFBIG (more than lim->max_bytes), -ENOMEM. *cut is
 * set to the bytes of a last line without its '\n' (dropped), else 0.
 * lim NULL: the defaults. */
int gw_owners_parse(const char *text, size_t len, const char *source,
		    const struct gw_owners_limits *lim, struct gw_owners **out,
		    size_t *cut, char *err, size_t err_len);

/* Opens the file at path, creating it (0600) when absent, and reads it.
 * Refuses (-EPERM) a symbolic link, anything but a regular file, a file
 * another uid owns or that group or others may read or write; -EINVAL,
 * -E2BIG, -EFBIG as gw_owners_parse(); -errno as open() and read() say.
 * An unfinished last line is cut from the file, with warn saying so (else
 * warn[0] == '\0'). Every message names the path. */
int gw_owners_open(const char *path, const struct gw_owners_limits *lim,
		   struct gw_owners **out, char *warn, size_t warn_len,
		   char *err, size_t err_len);

void gw_owners_close(struct gw_owners *o);

/* Live entries (names with an owner). */
size_t gw_owners_count(const struct gw_owners *o);

/* The owner of the pod whose cookie is `cookie`, or NULL; its name in
 * *name when name is not NULL. */
const char *gw_owners_find(const struct gw_owners *o, uint64_t cookie,
			   const char **name);

/* Records recs[0..n) as owned (replacing an owner of the same cookie):
 * their lines in one write, then fdatasync. Returns 0, -EINVAL (a user
 * or a name the format cannot hold), -E2BIG (live entries would pass the
 * bound), -EFBIG (the file would, even compacted), -EIO when an earlier
 * write could not be undone (the log refuses from then on), or write's
 * and fdatasync's -errno; on failure nothing is recorded and the file is
 * as it was. */
int gw_owners_append(struct gw_owners *o, const struct gw_owner_rec *recs,
		     size_t n, char *err, size_t err_len);

/* The pod of `cookie` was released: a '-' line (not synced) and the entry
 * goes. No entry: 0, nothing written. Returns 0 or -errno (the entry is
 * gone all the same). */
int gw_owners_release(struct gw_owners *o, uint64_t cookie, char *err,
		      size_t err_len);

/* The pod of `cookie` was not placed (or is gone): the entry goes, its
 * line stays dead in the file until compaction. */
void gw_owners_forget(struct gw_owners *o, uint64_t cookie);

/* Keeps only the entries keep(arg, cookie) accepts, then compacts the
 * file (also with nothing dropped). Returns 0 or -errno with err (the
 * entries are filtered all the same; the old file stays). */
int gw_owners_retain(struct gw_owners *o, bool (*keep)(void *arg, uint64_t cookie),
		     void *arg, char *err, size_t err_len);

/* Compacts the file when its dead lines exceed the live entries (and
 * lim.compact_min). Returns 1 when it did, 0 when not needed, -errno. */
int gw_owners_tidy(struct gw_owners *o, char *err, size_t err_len);

/* Lines in the file after the header (live and dead). */
size_t gw_owners_lines(const struct gw_owners *o);

#endif
