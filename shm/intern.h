/* The string intern table: every label key and value, taint key, node name
 * and resource name becomes a 32-bit id, so the engine compares integers.
 *
 * Id 0 is always the empty string (which the model also reads as "not
 * set"). Ids are dense, stable and never reused; the table only grows.
 *
 * Concurrency: one writer thread at a time adds (intern_add*, intern_find
 * too, which uses the writer's hash table); any thread may read
 * (intern_str, intern_len, intern_int) an id that reached it through
 * something published after the id was added: stored strings never move.
 * The strings live in a section of the state region (shm/layout.h: struct
 * intern_shared), so observers read them and a restarted daemon keeps
 * every id; the hash table is the writer's private memory.
 */
#ifndef SHMSCHED_SHM_INTERN_H
#define SHMSCHED_SHM_INTERN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shm/offset.h"

#define INTERN_MAX_LEN 4096u /* longer strings are refused (-E2BIG) */
/* intern_create()'s room: virtual, backed only as strings arrive. */
#define INTERN_DEFAULT_STRINGS (UINT32_C(1) << 22)
#define INTERN_DEFAULT_ARENA (UINT64_C(1) << 28)

struct intern;

/* Returns a table holding only "" (id 0) in private memory, with room for
 * INTERN_DEFAULT_STRINGS strings in INTERN_DEFAULT_ARENA bytes, or NULL
 * with errno ENOMEM. */
struct intern *intern_create(void);

/* The bytes a table of `max_strings` strings in `arena_size` bytes takes. */
uint64_t intern_section_size(uint32_t max_strings, uint64_t arena_size);

/* A table in `span` (its section of the state region): `fresh` sets it up
 * holding only ""; otherwise it checks what a previous daemon left there
 * (every string below the count inside the arena, terminated, its hash
 * right) and indexes it. Returns NULL with errno and a message in `err`:
 * EINVAL (no room), EPROTO (made for other sizes), EBADMSG (damaged),
 * ENOMEM. */
struct intern *intern_create_in(struct shm_span span, uint32_t max_strings,
				uint64_t arena_size, bool fresh, char *err,
				size_t err_len);
void intern_destroy(struct intern *t);

/* For observers (a read-only mapping of the state region; no struct
 * intern): string `id` of the strings section in `span`, made for
 * `max_strings` strings in `arena_size` bytes, read by protocol O2
 * (shm/layout.h): the count loaded with acquire, then the entry checked
 * against the arena, since a crash or a hostile writer may leave anything
 * there. Sets *str to its first byte (inside the span) and *len to its
 * length; copy exactly *len bytes, and do not count on the NUL after them
 * (the bytes are shared memory). Returns 0, or:
 *   -EINVAL   the span does not hold such a section
 *   -ENOENT   id is not below the table's count
 *   -EBADMSG  its entry lies outside the arena, or is longer than
 *             INTERN_MAX_LEN
 * Any thread, any process; writes nothing. */
int intern_observe_str(struct shm_span span, uint32_t max_strings,
		       uint64_t arena_size, uint32_t id, const char **str,
		       uint32_t *len);

/* Sets *id to the id of the `len` bytes at `s`, adding them if new.
 * Returns 0, -E2BIG (len > INTERN_MAX_LEN), -EINVAL (a NUL byte inside),
 * -ENOMEM, or -ENOSPC (the table's strings or arena are full). */
int intern_add(struct intern *t, const char *s, size_t len, uint32_t *id);

/* Same for a NUL-terminated string. */
int intern_add_str(struct intern *t, const char *s, uint32_t *id);

/* Finds without adding. Returns true and sets *id when present. */
bool intern_find(const struct intern *t, const char *s, size_t len, uint32_t *id);

/* The string of an id, NUL-terminated; "" for an id not in the table. */
const char *intern_str(const struct intern *t, uint32_t id);
size_t intern_len(const struct intern *t, uint32_t id);

/* The string as a base-10 int64, as Go's strconv.ParseInt(s, 10, 64)
 * reads it (optional sign, digits only, no overflow): what Gt and Lt
 * compare. Returns false when it is not one. Parsed once per string. */
bool intern_int(const struct intern *t, uint32_t id, int64_t *out);

uint32_t intern_count(const struct intern *t);

/* A point to roll back to: strings interned for a request that is then
 * refused are forgotten, so refused requests cannot grow the table. */
struct intern_mark {
	uint32_t count;
	uint64_t arena_used;
};

/* The writer's: the table as it is now. */
void intern_mark(const struct intern *t, struct intern_mark *m);

/* The table's room: `max_strings` entries, `arena_size` bytes of strings
 * (issue 41: what budgets of the table are made from). */
void intern_limits(const struct intern *t, uint32_t *max_strings,
		   uint64_t *arena_size);

/* The writer's: forgets every string added since `m` (their ids are
 * reused). No reader may hold one of their ids: call it only for strings
 * of a request that was never published. Cost: O(strings forgotten). */
void intern_rollback(struct intern *t, const struct intern_mark *m);

#endif
