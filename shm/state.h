/* The state region: the daemon's cluster state in one named shared-memory
 * file that outlives the daemon (its layout and read protocol: the "state
 * region" part of shm/layout.h).
 *
 * The daemon opens it by name: a new one is created exclusively (on
 * hugetlbfs when a pool can hold it, else POSIX shm in /dev/shm with
 * MADV_HUGEPAGE); an existing one is re-attached only when it is a regular
 * file (not a link), owned by the daemon's euid, that group and others may
 * not write (nor read, beyond what the configuration grants), and after
 * its header, versions and section sizes check out, and the daemon holds an exclusive flock on it while it runs.
 * Observers open it read-only and take no lock. With no name the region is
 * an anonymous memfd: the same layout, gone with the process (tests, the
 * benchmark).
 *
 * Concurrency: a struct state is owned by the thread that opened it; the
 * sections it maps follow their own protocols.
 */
#ifndef SHMSCHED_SHM_STATE_H
#define SHMSCHED_SHM_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "shm/layout.h"
#include "shm/offset.h"

struct state_config {
	const char *name;        /* [A-Za-z0-9._-], 1..STATE_NAME_MAX - 1
				  * bytes, not starting with '.'; NULL:
				  * anonymous */
	uint32_t max_nodes;      /* for a new region; an existing one keeps
				  * its own */
	uint32_t max_placements;
	uint32_t max_strings;
	uint64_t arena_size;
	uint32_t workers;        /* stats blocks used, <= STATE_WORKERS_MAX */
	unsigned mode;           /* file mode of a new region; 0: 0600, or
				  * 0640 with has_group. Never group- or
				  * other-writable (-EINVAL) */
	gid_t group;             /* its group, when has_group: observers */
	bool has_group;
	bool fresh;              /* remove any region of that name, then
				  * create one exclusively (never attach) */
	bool no_hugetlb;         /* skip the hugetlbfs attempt */
};

struct state;

/* Checks a region name. Returns 0, or -EINVAL with why in `err`. */
int state_name_check(const char *name, char *err, size_t err_len);

/* The path of region `name`'s file (where it is, or where a new one would
 * go on POSIX shm). Returns `buf`, or NULL when it does not fit. */
const char *state_path(const char *name, char *buf, size_t len);

/* Opens the daemon's region: re-attaches an existing one (*fresh false) or
 * creates it (*fresh true, zeroed; the caller fills the sections). Returns
 * 0, or a negative errno with a message in `err` naming the region:
 *   -EINVAL    a bad name or configuration
 *   -EPERM     the file is not ours: a link, not a regular file, another
 *              owner, or a mode others may write (owner, mode, fix named)
 *   -EBUSY     another daemon holds it (its pid named), or (fresh) a file
 *              appeared under the name while it was made
 *   -EPROTONOSUPPORT  made by another ABI version (both named)
 *   -EBADMSG, -EPROTO  damaged: what is wrong
 *   any errno of open, flock, fstat, ftruncate, mmap. */
int state_open(const struct state_config *cfg, struct state **out, bool *fresh,
	       char *err, size_t err_len);

/* Maps region `name` read-only for an observer (no lock, nothing written).
 * Same errors as state_open(), and -ENOENT when there is no such region;
 * -EPERM for a file that is not a regular one (a fifo) or a link. Any
 * owner is accepted: the daemon may run as another user. */
int state_observe(const char *name, struct state **out, char *err, size_t err_len);

/* Unmaps; the daemon's lock goes with it. NULL is a no-op. */
void state_close(struct state *st);

/* Removes region `name`'s file (the state is gone once the last mapping
 * goes). Returns 0, -ENOENT, -EBUSY (a daemon holds it), or an errno. */
int state_remove(const char *name, char *err, size_t err_len);

/* True when a daemon holds region `name` now (its lock is taken). */
bool state_daemon_running(const char *name);

/* The same for the file an observer's `st` maps (state_observe): whether a
 * daemon holds that very file, even if its name has since been removed and
 * made again. For the daemon's own region: true. */
bool state_held(const struct state *st);

/* For an observer: copies the meta section to *out and checks the copy
 * as an attach checks the meta (capacities in range, every section the
 * size they take). The shared meta may change under an observer (a
 * hostile writer may rewrite it); indexing with the checked copy's
 * capacities stays inside the sections whatever it later says. Returns 0,
 * or -EBADMSG with what is wrong in `err`. Reads only. */
int state_meta_copy(const struct state *st, struct state_meta *out, char *err,
		    size_t err_len);

struct state_meta *state_meta(const struct state *st);
struct shm_span state_section(const struct state *st, uint32_t id);
/* What backs it, for a person. */
const char *state_backing(const struct state *st);
size_t state_page_size(const struct state *st);
uint64_t state_size(const struct state *st); /* the region's bytes */
const char *state_name(const struct state *st); /* "" anonymous */

#endif
