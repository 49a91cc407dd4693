/* Intern table: see intern.h.
 *
 * Strings are kept NUL-terminated in one growing byte arena and named by
 * offset; an open-addressing hash table (linear probing, power-of-two size,
 * at most half full) maps a string to its id. Lookup cost: one hash of the
 * string plus, on average, under two probes.
 */
#include "shm/intern.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "shm/strconv.h"

struct entry {
	uint64_t offset; /* into arena */
	uint32_t len;
	uint32_t hash;
	int64_t number;
	bool is_number;
};

struct intern {
	char *arena;
	uint64_t arena_used, arena_cap;
	struct entry *entries; /* by id */
	uint32_t count, entries_cap;
	uint32_t *slots; /* id + 1; 0 = empty */
	uint32_t slot_mask;
};

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
		const struct entry *e = &t->entries[v - 1];
		if (e->hash == h && e->len == len &&
		    memcmp(t->arena + e->offset, s, len) == 0) {
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
		uint32_t i = t->entries[id].hash & (n - 1);
		while (slots[i] != 0)
			i = (i + 1) & (n - 1);
		slots[i] = id + 1;
	}
	free(t->slots);
	t->slots = slots;
	t->slot_mask = n - 1;
	return 0;
}

static int reserve(struct intern *t, size_t len)
{
	if (t->arena_used + len + 1 > t->arena_cap) {
		uint64_t cap = t->arena_cap * 2;
		while (cap < t->arena_used + len + 1)
			cap *= 2;
		char *a = realloc(t->arena, (size_t)cap);
		if (a == NULL)
			return -ENOMEM;
		t->arena = a;
		t->arena_cap = cap;
	}
	if (t->count == t->entries_cap) {
		uint32_t cap = t->entries_cap * 2;
		struct entry *e = realloc(t->entries, cap * sizeof(*e));
		if (e == NULL)
			return -ENOMEM;
		t->entries = e;
		t->entries_cap = cap;
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
	t->arena_cap = 4096;
	t->entries_cap = 256;
	t->slot_mask = 511;
	t->arena = malloc((size_t)t->arena_cap);
	t->entries = malloc(t->entries_cap * sizeof(*t->entries));
	t->slots = calloc(t->slot_mask + 1, sizeof(*t->slots));
	uint32_t id;
	if (t->arena == NULL || t->entries == NULL || t->slots == NULL ||
	    intern_add(t, "", 0, &id) < 0) {
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
	free(t->arena);
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
	struct entry *e = &t->entries[t->count];
	e->offset = t->arena_used;
	e->len = (uint32_t)len;
	e->hash = h;
	e->is_number = strconv_parse_int64(s, len, &e->number);
	memcpy(t->arena + t->arena_used, s, len);
	t->arena[t->arena_used + len] = '\0';
	t->arena_used += len + 1;
	t->slots[slot] = t->count + 1;
	*id = t->count++;
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

const char *intern_str(const struct intern *t, uint32_t id)
{
	if (id >= t->count)
		return "";
	return t->arena + t->entries[id].offset;
}

size_t intern_len(const struct intern *t, uint32_t id)
{
	return id < t->count ? t->entries[id].len : 0;
}

bool intern_int(const struct intern *t, uint32_t id, int64_t *out)
{
	if (id >= t->count || !t->entries[id].is_number)
		return false;
	*out = t->entries[id].number;
	return true;
}

uint32_t intern_count(const struct intern *t)
{
	return t->count;
}
