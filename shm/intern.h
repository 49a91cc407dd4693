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
 * It lives in the daemon's private memory.
 */
#ifndef SHMSCHED_SHM_INTERN_H
#define SHMSCHED_SHM_INTERN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define INTERN_MAX_LEN 4096u /* longer strings are refused (-E2BIG) */

struct intern;

/* Returns a table holding only "" (id 0), or NULL with errno ENOMEM. */
struct intern *intern_create(void);
void intern_destroy(struct intern *t);

/* Sets *id to the id of the `len` bytes at `s`, adding them if new.
 * Returns 0, -E2BIG (len > INTERN_MAX_LEN), -EINVAL (a NUL byte inside),
 * -ENOMEM, or -EOVERFLOW (2^32 - 1 strings). */
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
	uint32_t n_arena;
	uint32_t arena_used;
};

/* The writer's: the table as it is now. */
void intern_mark(const struct intern *t, struct intern_mark *m);

/* The writer's: forgets every string added since `m` (their ids are
 * reused). No reader may hold one of their ids: call it only for strings
 * of a request that was never published. Cost: O(strings forgotten). */
void intern_rollback(struct intern *t, const struct intern_mark *m);

#endif
