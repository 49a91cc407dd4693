/* Intern table: see intern.h.
 *
 * Strings are kept NUL-terminated in one fixed arena, their entries in one
 * fixed array (both in the state region, shm/layout.h); neither ever moves,
 * so a reader may call intern_str() on an id it was handed while the one
 * writer adds more (the id reached the reader through something the writer
 * published after interning it, which orders the entry before the read).
 * An open-addressing hash table (linear probing, power-of-two size, at
 * most half full), used by the writer alone, maps a string to its id.
 * Lookup cost: one hash of the string plus, on average, under two probes.
 */
#include "shm/intern.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "shm/carve.h"
#include "shm/layout.h"

#include "base/base.h"

struct intern {
	struct intern_shared *shared; /* count and arena_used (see intern.h) */
	struct intern_entry *entries; /* [max_strings] */
	char *arena;                  /* [arena_size] */
	uint32_t max_strings;
	uint64_t arena_size;
	uint32_t *slots;        /* id + 1; 0 = empty; the writer's alone */
	uint32_t slot_mask;
	struct shm_span owned;  /* intern_create()'s private memory */
};

static struct intern_entry *entry_of(const struct intern *t, uint32_t id)
{
	return &t->entries[id];
}

static const char *str_of(const struct intern *t, uint32_t id)
{
	return t->arena + t->entries[id].offset;
}

static uint32_t hash_bytes(const char *s, size_t len)
{
	/* FNV-1a, then a final mix so that linear probing sees spread bits. */
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < len; i++) {
		h ^= (uint8_t)s[i];
		h *= 16777619u;
	}
	h ^= h >> 16;
	h *= 0x7feb352du;
	h ^= h >> 15;
	return h;
}

static bool lookup(const struct intern *t, const char *s, size_t len, uint32_t h,
		   uint32_t *slot_out, uint32_t *id)
{
	uint32_t i = h & t->slot_mask;
	for (;; i = (i + 1) & t->slot_mask) {
		uint32_t v = t->slots[i];
		if (v == 0) {
			*slot_out = i;
			return false;
		}
		const struct intern_entry *e = entry_of(t, v - 1);
		if (e->hash == h && e->len == len && memcmp(str_of(t, v - 1), s, len) == 0) {
			*id = v - 1;
			return true;
		}
	}
}

static int grow_slots(struct intern *t)
{
	uint32_t n = (t->slot_mask + 1) * 2;
	uint32_t *slots = calloc(n, sizeof(*slots));
	if (slots == NULL)
		return -ENOMEM;
	for (uint32_t id = 0; id < t->shared->count; id++) {
		uint32_t i = entry_of(t, id)->hash & (n - 1);
		while (slots[i] != 0)
			i = (i + 1) & (n - 1);
		slots[i] = id + 1;
	}
	free(t->slots);
	t->slots = slots;
	t->slot_mask = n - 1;
	return 0;
}

/* Room for one more string of `len` bytes: arena, entry, slots. */
static int reserve(struct intern *t, size_t len)
{
	if (t->shared->count >= t->max_strings ||
	    t->shared->arena_used + len + 1 > t->arena_size)
		return -ENOSPC;
	if ((uint64_t)(t->shared->count + 1) * 2 > t->slot_mask + 1)
		return grow_slots(t);
	return 0;
}

static void carve(struct shm_carve *c, uint32_t max_strings, uint64_t arena_size,
		  struct intern *t)
{
	t->shared = shm_carve_next(c, sizeof(struct intern_shared), 64);
	t->entries = shm_carve_next(c, (uint64_t)max_strings *
				    sizeof(struct intern_entry), 64);
	t->arena = shm_carve_next(c, arena_size, 64);
}

uint64_t intern_section_size(uint32_t max_strings, uint64_t arena_size)
{
	struct shm_carve c = {0};
	struct intern t;
	carve(&c, max_strings, arena_size, &t);
	return c.used;
}

/* The writer's hash table over the strings the section holds. */
static int index_strings(struct intern *t)
{
	uint32_t n = 512;
	while ((uint64_t)t->shared->count * 2 > n)
		n *= 2;
	t->slots = calloc(n, sizeof(*t->slots));
	if (t->slots == NULL)
		return -ENOMEM;
	t->slot_mask = n - 1;
	for (uint32_t id = 0; id < t->shared->count; id++) {
		uint32_t i = entry_of(t, id)->hash & t->slot_mask;
		while (t->slots[i] != 0)
			i = (i + 1) & t->slot_mask;
		t->slots[i] = id + 1;
	}
	return 0;
}

/* Checks what a previous daemon left: every entry below the count inside
 * the used arena (offset and length checked before a byte there is read),
 * NUL-terminated with no NUL before its end, its hash and number right,
 * and id 0 the empty string. */
static int check_strings(const struct intern *t, char *err, size_t err_len)
{
	const struct intern_shared *sh = t->shared;
	if (sh->max_strings != t->max_strings || sh->arena_size != t->arena_size)
		return errmsg_rc(-EPROTO, err, err_len, "intern table: made for %u "
				 "strings and %llu bytes, expected %u and %llu",
				 sh->max_strings, (unsigned long long)sh->arena_size,
				 t->max_strings, (unsigned long long)t->arena_size);
	if (sh->count == 0 || sh->count > t->max_strings ||
	    sh->arena_used > t->arena_size)
		return errmsg_rc(-EBADMSG, err, err_len, "intern table: count %u or "
				 "arena use %llu out of range", sh->count,
				 (unsigned long long)sh->arena_used);
	for (uint32_t id = 0; id < sh->count; id++) {
		const struct intern_entry *e = entry_of(t, id);
		/* Offset and length first: nothing is read at them before. */
		if (e->len > INTERN_MAX_LEN || e->offset > sh->arena_used ||
		    (uint64_t)e->len + 1 > sh->arena_used - e->offset)
			return errmsg_rc(-EBADMSG, err, err_len, "intern table: "
					 "string %u is damaged: offset %llu, length "
					 "%u lie outside the %llu bytes of the arena "
					 "in use", id, (unsigned long long)e->offset,
					 e->len, (unsigned long long)sh->arena_used);
		const char *str = str_of(t, id);
		int64_t number = 0;
		bool is_number = strconv_parse_int64(str, e->len, &number);
		if (str[e->len] != '\0' || memchr(str, '\0', e->len) != NULL ||
		    hash_bytes(str, e->len) != e->hash || (id == 0 && e->len != 0) ||
		    e->is_number != is_number || (is_number && e->number != number))
			return errmsg_rc(-EBADMSG, err, err_len, "intern table: "
					 "string %u is damaged: its bytes at offset "
					 "%llu (length %u) do not match its entry "
					 "(NUL, hash 0x%08x or number)", id,
					 (unsigned long long)e->offset, e->len,
					 e->hash);
	}
	return 0;
}

int intern_observe_str(struct shm_span span, uint32_t max_strings,
		       uint64_t arena_size, uint32_t id, const char **str,
		       uint32_t *len)
{
	struct intern t;
	struct shm_carve c = {.span = span};
	carve(&c, max_strings, arena_size, &t);
	if (span.base == NULL || c.overflow)
		return -EINVAL;
	/* O2: acquire, partner of I1: the entries below the count, and their
	 * bytes, are complete. */
	uint32_t count = __atomic_load_n(&t.shared->count, __ATOMIC_ACQUIRE);
	if (id >= count || id >= max_strings)
		return -ENOENT;
	/* Each field loaded once (relaxed: the count's acquire ordered them),
	 * then checked: the section is not trusted, and a value checked must
	 * be the value used. */
	uint64_t off = __atomic_load_n(&t.entries[id].offset, __ATOMIC_RELAXED);
	uint32_t n = __atomic_load_n(&t.entries[id].len, __ATOMIC_RELAXED);
	if (n > INTERN_MAX_LEN || off > arena_size || n > arena_size - off)
		return -EBADMSG;
	*str = t.arena + off;
	*len = n;
	return 0;
}

struct intern *intern_create_in(struct shm_span span, uint32_t max_strings,
				uint64_t arena_size, bool fresh, char *err,
				size_t err_len)
{
	struct intern *t = calloc(1, sizeof(*t));
	if (t == NULL) {
		errmsg_rc(-ENOMEM, err, err_len, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	struct shm_carve c = {.span = span};
	carve(&c, max_strings, arena_size, t);
	t->max_strings = max_strings;
	t->arena_size = arena_size;
	int rc = max_strings < 1 || arena_size < 1 || c.overflow
		 ? errmsg_rc(-EINVAL, err, err_len, "intern table: no room")
		 : 0;
	if (rc == 0 && fresh) {
		t->shared->max_strings = max_strings;
		t->shared->arena_size = arena_size;
		t->shared->count = 0;
		t->shared->arena_used = 0;
		uint32_t id;
		rc = index_strings(t);
		if (rc == 0)
			rc = intern_add(t, "", 0, &id);
	} else if (rc == 0) {
		rc = check_strings(t, err, err_len);
		if (rc == 0)
			rc = index_strings(t);
	}
	if (rc < 0) {
		if (rc == -ENOMEM)
			errmsg_rc(rc, err, err_len, "out of memory");
		free(t->slots);
		free(t);
		errno = -rc;
		return NULL;
	}
	return t;
}

struct intern *intern_create(void)
{
	/* Backed only as strings arrive. */
	struct shm_span mem = shm_span_private(intern_section_size(
		INTERN_DEFAULT_STRINGS, INTERN_DEFAULT_ARENA));
	if (mem.base == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	char err[128];
	struct intern *t = intern_create_in(mem, INTERN_DEFAULT_STRINGS,
					    INTERN_DEFAULT_ARENA, true, err,
					    sizeof(err));
	if (t == NULL) {
		shm_span_release(mem);
		errno = ENOMEM;
		return NULL;
	}
	t->owned = mem;
	return t;
}

void intern_destroy(struct intern *t)
{
	if (t == NULL)
		return;
	shm_span_release(t->owned);
	free(t->slots);
	free(t);
}

int intern_add(struct intern *t, const char *s, size_t len, uint32_t *id)
{
	if (len > INTERN_MAX_LEN)
		return -E2BIG;
	if (len > 0 && memchr(s, '\0', len) != NULL)
		return -EINVAL;
	uint32_t h = hash_bytes(s, len), slot;
	if (lookup(t, s, len, h, &slot, id))
		return 0;
	uint32_t old_mask = t->slot_mask;
	int rc = reserve(t, len);
	if (rc < 0)
		return rc;
	if (t->slot_mask != old_mask)
		lookup(t, s, len, h, &slot, id); /* the table grew: find the new slot */
	struct intern_shared *sh = t->shared;
	char *dst = t->arena + sh->arena_used;
	memcpy(dst, s, len);
	dst[len] = '\0';
	struct intern_entry *e = entry_of(t, sh->count);
	e->offset = sh->arena_used;
	e->len = (uint32_t)len;
	e->hash = h;
	int64_t number = 0;
	e->is_number = strconv_parse_int64(s, len, &number);
	e->number = number;
	sh->arena_used += len + 1;
	t->slots[slot] = sh->count + 1;
	*id = sh->count;
	/* I1: release, the entry and its bytes before the count that covers
	 * them. Partners: an observer's acquire load of the count (layout.h);
	 * in the daemon, the relaxed load in known() is ordered by whatever
	 * handed the id to the reader. */
	__atomic_store_n(&sh->count, sh->count + 1, __ATOMIC_RELEASE);
	return 0;
}

int intern_add_str(struct intern *t, const char *s, uint32_t *id)
{
	return intern_add(t, s, strlen(s), id);
}

bool intern_find(const struct intern *t, const char *s, size_t len, uint32_t *id)
{
	uint32_t slot;
	if (len > INTERN_MAX_LEN)
		return false;
	return lookup(t, s, len, hash_bytes(s, len), &slot, id);
}

/* Readers: an id a reader holds reached it through something the writer
 * published after interning it, so its chunk exists and its entry is
 * written. Relaxed: the count only tells ids the table never gave (read as
 * ""), which only the writer's own thread asks about. */
static bool known(const struct intern *t, uint32_t id)
{
	return id < __atomic_load_n(&t->shared->count, __ATOMIC_RELAXED);
}

const char *intern_str(const struct intern *t, uint32_t id)
{
	return known(t, id) ? str_of(t, id) : "";
}

size_t intern_len(const struct intern *t, uint32_t id)
{
	return known(t, id) ? entry_of(t, id)->len : 0;
}

bool intern_int(const struct intern *t, uint32_t id, int64_t *out)
{
	if (!known(t, id) || !entry_of(t, id)->is_number)
		return false;
	*out = entry_of(t, id)->number;
	return true;
}

uint32_t intern_count(const struct intern *t)
{
	return __atomic_load_n(&t->shared->count, __ATOMIC_RELAXED);
}

void intern_mark(const struct intern *t, struct intern_mark *m)
{
	*m = (struct intern_mark){t->shared->count, t->shared->arena_used};
}

/* Empties slot i of the hash table and moves later members of its probe
 * run back, so that every remaining string is still found from its home
 * slot (backward-shift deletion for linear probing). */
static void slot_delete(struct intern *t, uint32_t i)
{
	uint32_t mask = t->slot_mask;
	t->slots[i] = 0;
	for (uint32_t j = (i + 1) & mask; t->slots[j] != 0; j = (j + 1) & mask) {
		uint32_t home = entry_of(t, t->slots[j] - 1)->hash & mask;
		/* j's entry may move to i if its home is not in (i, j]. */
		bool stays = i <= j ? (home > i && home <= j)
				    : (home > i || home <= j);
		if (!stays) {
			t->slots[i] = t->slots[j];
			t->slots[j] = 0;
			i = j;
		}
	}
}

void intern_rollback(struct intern *t, const struct intern_mark *m)
{
	for (uint32_t id = t->shared->count; id-- > m->count;) {
		uint32_t i = entry_of(t, id)->hash & t->slot_mask;
		while (t->slots[i] != id + 1)
			i = (i + 1) & t->slot_mask;
		slot_delete(t, i);
	}
	/* I1: release as in intern_add, for one rule for the count; no reader
	 * holds these ids. The count goes back before the arena is reused. */
	__atomic_store_n(&t->shared->count, m->count, __ATOMIC_RELEASE);
	t->shared->arena_used = m->arena_used;
}

void intern_limits(const struct intern *t, uint32_t *max_strings,
		   uint64_t *arena_size)
{
	*max_strings = t->max_strings;
	*arena_size = t->arena_size;
}
