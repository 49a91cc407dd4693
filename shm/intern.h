/* The string intern table: every label key and value, taint key, node name
 * and resource name becomes a 32-bit id, so the engine compares integers.
 *
 * Id 0 is always the empty string (which the model also reads as "not
 * set"). Ids are dense; a string is never moved. Issue 41: a string a
 * producer's template added carries a tag (that producer's uid, charged
 * for it: intern_tag_since); intern_reclaim() frees every tagged string
 * its caller found no holder of, and later adds reuse the freed ids and
 * arena bytes. It runs at a start, before any thread but the writer
 * runs, and while the daemon runs, after producers' connections ended
 * (ingest/producers.c: the writer marks every holder, moves the epoch,
 * waits a grace period in which every worker's engine drops its caches,
 * then frees).
 *
 * Concurrency: one writer thread at a time adds (intern_add*, intern_find
 * too, which uses the writer's hash table); any thread may read
 * (intern_str, intern_len, intern_int) an id that reached it through
 * something published after the id was added and that it holds: stored
 * strings never move, and an id is freed only when no holder has it (at
 * a start no other thread runs; at run time the caller's marks and grace
 * period see to it). The strings live in a section of the state region
 * (shm/layout.h: struct intern_shared), so observers read them and a
 * restarted daemon keeps every id a record holds; the hash table and the
 * free lists are the writer's private memory. An observer (another
 * process) holds nothing the writer can see: it re-reads an id's string
 * and may find it freed (-ENOENT) or, once reused, another string; the
 * epoch (I2) moves around every run-time reclaim, so a read bracketed by
 * two equal epochs read strings of one table.
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
/* An entry's tag (struct intern_entry.tag): */
#define INTERN_TAG_PINNED 0u          /* the daemon's: never freed */
#define INTERN_TAG_FREE UINT32_MAX    /* free: reusable */
/* Size classes of the free lists: a freed entry of c bytes (its string,
 * its NUL and any slack after it) is in class floor(log2(c)), the last
 * class holding every c >= 2^(INTERN_CLASSES - 1). */
#define INTERN_CLASSES 14

/* The tag of strings charged to producer uid `uid`. */
static inline uint32_t intern_uid_tag(uint32_t uid)
{
	return uid < UINT32_MAX - 1 ? uid + 1 : UINT32_MAX - 1;
}

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

/* On a resumed table, until intern_reclaim() runs, a string that
 * intern_add or intern_find finds is pinned (its tag set to
 * INTERN_TAG_PINNED): what the start-up reads before the reclaim (the
 * scheduler configuration, the plugins' constants) holds its ids in
 * private memory, which the reclaim does not see. */

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

/* Ids in use are below it (free ones included): the high-water mark. */
uint32_t intern_count(const struct intern *t);

/* The strings the table holds now, free entries not counted, and their
 * bytes (each string's length + 1). */
void intern_use(const struct intern *t, uint32_t *strings, uint64_t *bytes);

/* The epoch (I2 in shm/layout.h): moved by each intern_reclaim() that
 * freed a string, and by intern_announce(). An observer's copy of a
 * record is read with the strings of one epoch: the same before and
 * after. Returns 0 or -EINVAL (the span holds no such section). Any
 * thread, any process. */
int intern_observe_epoch(struct shm_span span, uint32_t max_strings,
			 uint64_t arena_size, uint32_t *epoch);

/* The same epoch for the daemon's threads (acquire, partner of the
 * release in intern_announce() and intern_reclaim()). A worker's engine
 * that finds it moved drops every cache that holds ids before it reads
 * one (workers/engine_sync.c). Any thread. */
uint32_t intern_epoch(const struct intern *t);

/* The writer's, before a run-time reclaim's grace period: moves the epoch
 * (release), so that every thread that passes a quiescent point after it
 * (shm/rcu.h) sees it moved and drops its caches of ids; after the grace
 * period no thread holds an id its caller marked nothing for, and
 * intern_reclaim() may free them. */
void intern_announce(struct intern *t);

/* A point to roll back to: strings interned for a request that is then
 * refused are forgotten, so refused requests cannot grow the table. */
struct intern_mark {
	uint32_t count;
	uint64_t arena_used;
	uint32_t reused[INTERN_CLASSES]; /* the free lists' lengths */
};

/* The writer's: the table as it is now. */
void intern_mark(const struct intern *t, struct intern_mark *m);

/* The table's room: `max_strings` entries, `arena_size` bytes of strings
 * (issue 41: what budgets of the table are made from). */
void intern_limits(const struct intern *t, uint32_t *max_strings,
		   uint64_t *arena_size);

/* The writer's: forgets every string added since `m` (their ids are
 * reused). No reader may hold one of their ids: call it only for strings
 * of a request that was never published. Marks do not nest across a
 * reclaim (the writer runs one only where it holds no mark). Cost:
 * O(strings forgotten). */
void intern_rollback(struct intern *t, const struct intern_mark *m);

/* The writer's: the strings added since `m` (new ids, and freed ids
 * reused), and their bytes (each string's length + 1). */
void intern_added_since(const struct intern *t, const struct intern_mark *m,
			uint32_t *strings, uint64_t *bytes);

/* The writer's: sets the tag of every string added since `m` (issue 41:
 * intern_uid_tag() of the producer whose template added them). */
void intern_tag_since(struct intern *t, const struct intern_mark *m,
		      uint32_t tag);

/* Calls fn(arg, tag, len) for every string below the count whose tag is
 * a producer uid's (neither pinned nor free): what each uid is charged,
 * rebuilt at a start. */
void intern_tagged(const struct intern *t,
		   void (*fn)(void *arg, uint32_t tag, uint32_t len), void *arg);

struct intern_reclaim_stats {
	uint32_t freed;       /* strings freed now */
	uint64_t freed_bytes; /* their lengths + 1 */
	uint32_t free;        /* free entries after it, reusable */
};

/* The reclaim (issue 41), the writer's, with no thread of this process
 * holding an id it frees (at a start: no other thread runs; at run time:
 * after intern_announce() and a grace period, ingest/producers.c): frees
 * every string whose tag is a

 * producer uid's and whose id's bit in `held` (max_strings bits, id i at
 * held[i / 64] bit i % 64) is clear, moves the epoch (I2) if any was,
 * and puts every free entry on the free lists that intern_add takes from
 * (an entry's room: the bytes up to the next string's). Ends the pinning
 * of a resumed table (see intern_add). Returns 0 or -ENOMEM (nothing
 * freed). Cost: O(count + arena used / 64) and arena used / 8 bytes for
 * the while. */
int intern_reclaim(struct intern *t, const uint64_t *held,
		   struct intern_reclaim_stats *out);

#endif
