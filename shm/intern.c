/* Intern table: see intern.h.
 *
 * Strings are kept NUL-terminated in arena chunks of ARENA_CHUNK bytes, and
 * their entries in chunks of ENTRY_CHUNK; neither ever moves or shrinks, so
 * a reader may call intern_str() on an id it was handed while the one
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

#include "base/base.h"

#define ARENA_CHUNK (UINT32_C(1) << 20)
#define ENTRY_CHUNK_SHIFT 12
#define ENTRY_CHUNK (UINT32_C(1) << ENTRY_CHUNK_SHIFT)
#define ENTRY_CHUNKS (UINT32_C(1) << 20) /* 2^32 entries in all */

_Static_assert(ARENA_CHUNK > INTERN_MAX_LEN + 1, "a string fits in a chunk");

struct entry {
	const char *str; /* in an arena chunk: never moves */
	uint32_t len;
	uint32_t hash;
	int64_t number;
	bool is_number;
};

struct intern {
	char **arena;           /* chunks, [n_arena]; the list is the writer's */
	uint32_t n_arena, cap_arena;
	uint32_t arena_used;    /* bytes used in the last chunk */
	struct entry **entries; /* [ENTRY_CHUNKS] chunk pointers, by id >> shift */
	uint32_t count;         /* written with __atomic stores (see known()) */
	uint32_t *slots;        /* id + 1; 0 = empty; the writer's alone */
	uint32_t slot_mask;
};

static struct entry *entry_of(const struct intern *t, uint32_t id)
{
	return &t->entries[id >> ENTRY_CHUNK_SHIFT][id & (ENTRY_CHUNK - 1)];
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
		const struct entry *e = entry_of(t, v - 1);
		if (e->hash == h && e->len == len && memcmp(e->str, s, len) == 0) {
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
	for (uint32_t id = 0; id < t->count; id++) {
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

/* Room for one more string of `len` bytes: arena, entry chunk, slots. */
static int reserve(struct intern *t, size_t len)
{
	if (t->n_arena == 0 || t->arena_used + len + 1 > ARENA_CHUNK) {
		if (t->n_arena == t->cap_arena) {
			uint32_t cap = t->cap_arena ? t->cap_arena * 2 : 16;
			/* Only the chunk list moves, and only the writer reads it. */
			char **a = realloc(t->arena, cap * sizeof(*a));
			if (a == NULL)
				return -ENOMEM;
			t->arena = a;
			t->cap_arena = cap;
		}
		char *chunk = malloc(ARENA_CHUNK);
		if (chunk == NULL)
			return -ENOMEM;
		t->arena[t->n_arena++] = chunk;
		t->arena_used = 0;
	}
	uint32_t c = t->count >> ENTRY_CHUNK_SHIFT;
	if (t->entries[c] == NULL) {
		t->entries[c] = malloc(ENTRY_CHUNK * sizeof(struct entry));
		if (t->entries[c] == NULL)
			return -ENOMEM;
	}
	if ((uint64_t)(t->count + 1) * 2 > t->slot_mask + 1)
		return grow_slots(t);
	return 0;
}

struct intern *intern_create(void)
{
	struct intern *t = calloc(1, sizeof(*t));
	if (t == NULL)
		return NULL;
	t->slot_mask = 511;
	t->entries = calloc(ENTRY_CHUNKS, sizeof(*t->entries));
	t->slots = calloc(t->slot_mask + 1, sizeof(*t->slots));
	uint32_t id;
	if (t->entries == NULL || t->slots == NULL || intern_add(t, "", 0, &id) < 0) {
		intern_destroy(t);
		errno = ENOMEM;
		return NULL;
	}
	return t;
}

void intern_destroy(struct intern *t)
{
	if (t == NULL)
		return;
	for (uint32_t i = 0; i < t->n_arena; i++)
		free(t->arena[i]);
	free(t->arena);
	if (t->entries != NULL)
		for (uint32_t c = 0; c < ENTRY_CHUNKS && t->entries[c] != NULL; c++)
			free(t->entries[c]);
	free(t->entries);
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
	if (t->count == UINT32_MAX - 1)
		return -EOVERFLOW;
	uint32_t old_mask = t->slot_mask;
	int rc = reserve(t, len);
	if (rc < 0)
		return rc;
	if (t->slot_mask != old_mask)
		lookup(t, s, len, h, &slot, id); /* the table grew: find the new slot */
	char *dst = t->arena[t->n_arena - 1] + t->arena_used;
	memcpy(dst, s, len);
	dst[len] = '\0';
	t->arena_used += (uint32_t)len + 1;
	struct entry *e = entry_of(t, t->count);
	e->str = dst;
	e->len = (uint32_t)len;
	e->hash = h;
	e->is_number = strconv_parse_int64(s, len, &e->number);
	t->slots[slot] = t->count + 1;
	*id = t->count;
	/* Release: the entry above before the count that covers it (partner:
	 * the relaxed load in known() is ordered by whatever handed the id to
	 * the reader; the atomic store keeps the count itself race-free). */
	__atomic_store_n(&t->count, t->count + 1, __ATOMIC_RELEASE);
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
	return id < __atomic_load_n(&t->count, __ATOMIC_RELAXED);
}

const char *intern_str(const struct intern *t, uint32_t id)
{
	return known(t, id) ? entry_of(t, id)->str : "";
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
	return __atomic_load_n(&t->count, __ATOMIC_RELAXED);
}

void intern_mark(const struct intern *t, struct intern_mark *m)
{
	*m = (struct intern_mark){t->count, t->n_arena, t->arena_used};
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
	for (uint32_t id = t->count; id-- > m->count;) {
		uint32_t i = entry_of(t, id)->hash & t->slot_mask;
		while (t->slots[i] != id + 1)
			i = (i + 1) & t->slot_mask;
		slot_delete(t, i);
	}
	while (t->n_arena > m->n_arena)
		free(t->arena[--t->n_arena]);
	t->arena_used = m->arena_used;
	/* Relaxed would do (no reader holds these ids); release as in
	 * intern_add, for one rule for the count. */
	__atomic_store_n(&t->count, m->count, __ATOMIC_RELEASE);
}
