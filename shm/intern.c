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
 *
 * Reclaim (issue 41), route (b) of the two considered:
 * (a) a reference count per entry, taken and dropped by every holder
 *     (templates, nodes, placement records, priority classes, gangs,
 *     PDBs, plugin constants, the workers' compiled classes, observers'
 *     copies), freed after an RCU grace period and the workers' caches.
 *     About thirty places store ids, several in files other changes are
 *     rewriting now; one forgotten take is a use after free that reads
 *     another string, silently. Not safe to do in one step.
 * (b) chosen: a string a producer's template adds is tagged with that
 *     producer's uid (the entry's `tag`), and the uid is charged for it
 *     for as long as the string is in the table (ingest/producers.c): a
 *     new name or a reconnect does not give the charge back, a restart
 *     rebuilds it from the tags. At a start (a quiet point: no worker, no
 *     producer, no private holder but the start-up's own, which the
 *     pinning covers) intern_reclaim() frees every tagged string that no
 *     record of the region holds (shm/recount.c: the current snapshot's
 *     nodes, the placement records, the ledger's term groups). A freed
 *     entry keeps its id and its bytes: intern_add takes the most recently
 *     freed entry of the smallest size class that fits (LIFO free lists,
 *     class floor(log2(room))) before it appends. Observers in other
 *     processes read the epoch (I2) around a read and retry when a
 *     reclaim moved it.
 *     While a daemon runs (issue 41's last item) the same reclaim runs
 *     after producers left (ingest/producers.c, prod_strings_reclaim):
 *     the writer, holding the producers' lock (so no other thread
 *     interns, declares or preempts), marks every holder it can see (the
 *     start's, plus the live producers' templates, the nodes' groups in
 *     the ledger, PriorityClasses, PodGroups and PDBs), moves the epoch
 *     (intern_announce) and waits a grace period (shm/rcu.h): the
 *     workers' engines, whose caches (classes keyed by specs of ids,
 *     evaluations, inter-pod views) the writer cannot walk, drop them all
 *     at their next call once they see the epoch moved, and a worker's
 *     pod in flight is of a live producer (a gone one's pods were dropped
 *     by the grace period its disconnection waited). Only then are the
 *     unmarked tagged strings freed, and the epoch moved again.
 * Marks: a mark records the count, the arena's use and each free list's
 * length. Between a mark and its rollback entries are only taken from the
 * free lists (they grow only at a reclaim), so the ids taken since the
 * mark are still stored above each list's length, and a rollback frees
 * them again.
 * Cost: intern_add of a new string checks the free lists first (one test
 * per class while the lists are empty); a hit or a lookup is unchanged.
 * The free lists take 8 bytes per free entry of private memory.
 */
#include "shm/intern.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "shm/carve.h"
#include "shm/layout.h"

#include "base/base.h"

struct free_item {
	uint32_t id;
	uint32_t room; /* bytes at the entry's offset it may use, NUL included */
};

struct intern {
	struct intern_shared *shared; /* count and arena_used (see intern.h) */
	struct intern_entry *entries; /* [max_strings] */
	char *arena;                  /* [arena_size] */
	uint32_t max_strings;
	uint64_t arena_size;
	uint32_t *slots;        /* id + 1; 0 = empty; the writer's alone */
	uint32_t slot_mask;
	struct shm_span owned;  /* intern_create()'s private memory */
	/* The writer's: free entries by size class (see the note above);
	 * items at and above len[k] are the ones taken since the last
	 * reclaim, kept for rollbacks. */
	struct free_item *free_items[INTERN_CLASSES];
	uint32_t free_len[INTERN_CLASSES];
	uint64_t live_bytes;    /* intern_use(): lengths + 1 of live strings */
	bool pin_on_find;       /* a resumed table before its reclaim */
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
		if (entry_of(t, id)->tag == INTERN_TAG_FREE)
			continue;
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
	t->live_bytes = 0;
	for (uint32_t id = 0; id < t->shared->count; id++) {
		if (entry_of(t, id)->tag == INTERN_TAG_FREE)
			continue;
		t->live_bytes += entry_of(t, id)->len + 1u;
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
 * and id 0 the empty string; a free entry an empty string (then n_free is
 * set to the free entries counted). */
static int check_strings(const struct intern *t, char *err, size_t err_len)
{
	struct intern_shared *sh = t->shared;
	uint32_t n_free = 0;
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
		if (e->tag == INTERN_TAG_FREE) {
			if (id == 0 || e->len != 0)
				return errmsg_rc(-EBADMSG, err, err_len, "intern "
						 "table: string %u is damaged: free, "
						 "with length %u (expected a string "
						 "other than 0, of length 0)", id,
						 e->len);
			n_free++;
		}
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
	sh->n_free = n_free;
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
	if (__atomic_load_n(&t.entries[id].tag, __ATOMIC_RELAXED) == INTERN_TAG_FREE)
		return -ENOENT; /* freed by a reclaim: names no string */
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
		t->shared->epoch = 0;
		t->shared->n_free = 0;
		uint32_t id;
		rc = index_strings(t);
		if (rc == 0)
			rc = intern_add(t, "", 0, &id);
	} else if (rc == 0) {
		rc = check_strings(t, err, err_len);
		if (rc == 0)
			rc = index_strings(t);
		t->pin_on_find = true; /* until intern_reclaim() */
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
	for (int k = 0; k < INTERN_CLASSES; k++)
		free(t->free_items[k]);
	free(t);
}

/* The size class of an entry with `room` bytes. */
static int class_of(uint64_t room)
{
	int k = 0;
	while (k < INTERN_CLASSES - 1 && (UINT64_C(2) << k) <= room)
		k++;
	return k;
}

/* Takes a free entry with room for `need` bytes (a string and its NUL):
 * the last freed of the smallest class sure to fit, else of the class
 * below if its last item fits. False when none. */
static bool take_free(struct intern *t, size_t need, uint32_t *id)
{
	if (t->shared->n_free == 0)
		return false;
	int k = class_of(need);
	if ((UINT64_C(1) << k) < need && k < INTERN_CLASSES - 1)
		k++; /* class k holds rooms of at least 2^k */
	int below = class_of(need);
	if (below != k && t->free_len[below] > 0 &&
	    t->free_items[below][t->free_len[below] - 1].room >= need)
		k = below;
	for (; k < INTERN_CLASSES; k++) {
		uint32_t n = t->free_len[k];
		if (n > 0 && t->free_items[k][n - 1].room >= need) {
			t->free_len[k] = n - 1;
			*id = t->free_items[k][n - 1].id;
			return true;
		}
	}
	return false;
}

/* The figures intern_use() reads from any thread: stored relaxed by the
 * writer alone (partner: intern_use's relaxed loads; figures). */
static void add_live(struct intern *t, int64_t bytes, int32_t free_entries)
{
	__atomic_store_n(&t->live_bytes, t->live_bytes + (uint64_t)bytes,
			 __ATOMIC_RELAXED);
	if (free_entries != 0)
		__atomic_store_n(&t->shared->n_free,
				 t->shared->n_free + (uint32_t)free_entries,
				 __ATOMIC_RELAXED);
}

/* Writes string `s` into entry `id` (new or reused) at its offset. */
static void fill_entry(struct intern *t, uint32_t id, const char *s, size_t len,
		       uint32_t h)
{
	struct intern_entry *e = entry_of(t, id);
	char *dst = t->arena + e->offset;
	memcpy(dst, s, len);
	dst[len] = '\0';
	e->len = (uint32_t)len;
	e->hash = h;
	int64_t number = 0;
	e->is_number = strconv_parse_int64(s, len, &number);
	e->number = number;
	e->tag = INTERN_TAG_PINNED; /* intern_tag_since() charges it */
	add_live(t, (int64_t)len + 1, 0);
}

int intern_add(struct intern *t, const char *s, size_t len, uint32_t *id)
{
	if (len > INTERN_MAX_LEN)
		return -E2BIG;
	if (len > 0 && memchr(s, '\0', len) != NULL)
		return -EINVAL;
	uint32_t h = hash_bytes(s, len), slot;
	if (lookup(t, s, len, h, &slot, id)) {
		if (t->pin_on_find)
			entry_of(t, *id)->tag = INTERN_TAG_PINNED;
		return 0;
	}
	struct intern_shared *sh = t->shared;
	uint32_t reused;
	if (take_free(t, len + 1, &reused)) {
		/* A freed id: no thread of this daemon holds it (it was freed
		 * at start), and observers check the epoch (I2). */
		fill_entry(t, reused, s, len, h);
		add_live(t, 0, -1);
		t->slots[slot] = reused + 1;
		*id = reused;
		return 0;
	}
	uint32_t old_mask = t->slot_mask;
	int rc = reserve(t, len);
	if (rc < 0)
		return rc;
	if (t->slot_mask != old_mask)
		lookup(t, s, len, h, &slot, id); /* the table grew: find the new slot */
	entry_of(t, sh->count)->offset = sh->arena_used;
	fill_entry(t, sh->count, s, len, h);
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
	if (len > INTERN_MAX_LEN || !lookup(t, s, len, hash_bytes(s, len), &slot, id))
		return false;
	if (t->pin_on_find) /* entries are the region's, not the table's */
		entry_of(t, *id)->tag = INTERN_TAG_PINNED;
	return true;
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
	*m = (struct intern_mark){t->shared->count, t->shared->arena_used, {0}};
	for (int k = 0; k < INTERN_CLASSES; k++)
		m->reused[k] = t->free_len[k];
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

/* Removes id's slot from the hash table. */
static void unindex(struct intern *t, uint32_t id)
{
	uint32_t i = entry_of(t, id)->hash & t->slot_mask;
	while (t->slots[i] != id + 1)
		i = (i + 1) & t->slot_mask;
	slot_delete(t, i);
}

/* Makes entry `id` free: the empty string, its bytes reusable. */
static void free_entry(struct intern *t, uint32_t id)
{
	struct intern_entry *e = entry_of(t, id);
	add_live(t, -((int64_t)e->len + 1), 1);
	t->arena[e->offset] = '\0';
	e->len = 0;
	e->hash = hash_bytes("", 0);
	e->number = 0;
	e->is_number = 0;
	e->tag = INTERN_TAG_FREE;
}

void intern_rollback(struct intern *t, const struct intern_mark *m)
{
	/* Freed entries taken since the mark: free again. */
	for (int k = 0; k < INTERN_CLASSES; k++) {
		for (uint32_t j = t->free_len[k]; j < m->reused[k]; j++) {
			uint32_t id = t->free_items[k][j].id;
			unindex(t, id);
			free_entry(t, id);
		}
		if (m->reused[k] > t->free_len[k])
			t->free_len[k] = m->reused[k];
	}
	for (uint32_t id = t->shared->count; id-- > m->count;) {
		unindex(t, id);
		add_live(t, -((int64_t)entry_of(t, id)->len + 1), 0);
	}
	/* I1: release as in intern_add, for one rule for the count; no reader
	 * holds these ids. The count goes back before the arena is reused. */
	__atomic_store_n(&t->shared->count, m->count, __ATOMIC_RELEASE);
	t->shared->arena_used = m->arena_used;
}

/* Calls fn(t, id, arg) for each id added since `m`. */
static void each_added(const struct intern *t, const struct intern_mark *m,
		       void (*fn)(const struct intern *, uint32_t, void *), void *arg)
{
	for (int k = 0; k < INTERN_CLASSES; k++)
		for (uint32_t j = t->free_len[k]; j < m->reused[k]; j++)
			fn(t, t->free_items[k][j].id, arg);
	for (uint32_t id = m->count; id < t->shared->count; id++)
		fn(t, id, arg);
}

struct added_sum {
	uint32_t strings;
	uint64_t bytes;
};

static void add_up(const struct intern *t, uint32_t id, void *arg)
{
	struct added_sum *a = arg;
	a->strings++;
	a->bytes += entry_of(t, id)->len + 1u;
}

void intern_added_since(const struct intern *t, const struct intern_mark *m,
			uint32_t *strings, uint64_t *bytes)
{
	struct added_sum a = {0, 0};
	each_added(t, m, add_up, &a);
	*strings = a.strings;
	*bytes = a.bytes;
}

static void set_tag(const struct intern *t, uint32_t id, void *arg)
{
	entry_of(t, id)->tag = *(const uint32_t *)arg;
}

void intern_tag_since(struct intern *t, const struct intern_mark *m,
		      uint32_t tag)
{
	each_added(t, m, set_tag, &tag);
}

void intern_tagged(const struct intern *t,
		   void (*fn)(void *arg, uint32_t tag, uint32_t len), void *arg)
{
	for (uint32_t id = 1; id < t->shared->count; id++) {
		const struct intern_entry *e = entry_of(t, id);
		if (e->tag != INTERN_TAG_PINNED && e->tag != INTERN_TAG_FREE)
			fn(arg, e->tag, e->len);
	}
}

void intern_use(const struct intern *t, uint32_t *strings, uint64_t *bytes)
{
	/* Relaxed: figures (add_live, I1). */
	*strings = __atomic_load_n(&t->shared->count, __ATOMIC_RELAXED) -
		   __atomic_load_n(&t->shared->n_free, __ATOMIC_RELAXED);
	*bytes = __atomic_load_n(&t->live_bytes, __ATOMIC_RELAXED);
}

int intern_observe_epoch(struct shm_span span, uint32_t max_strings,
			 uint64_t arena_size, uint32_t *epoch)
{
	struct intern t;
	struct shm_carve c = {.span = span};
	carve(&c, max_strings, arena_size, &t);
	if (span.base == NULL || c.overflow)
		return -EINVAL;
	/* O2/I2: acquire, partner of the release in intern_reclaim(). */
	*epoch = __atomic_load_n(&t.shared->epoch, __ATOMIC_ACQUIRE);
	return 0;
}

uint32_t intern_epoch(const struct intern *t)
{
	/* I2: acquire, partner of the releases in intern_announce() and
	 * intern_reclaim(). */
	return __atomic_load_n(&t->shared->epoch, __ATOMIC_ACQUIRE);
}

void intern_announce(struct intern *t)
{
	/* I2: release (the writer alone stores it), partner of
	 * intern_epoch()'s acquire in the workers (read after their
	 * quiescent point, which the caller's grace period waits for) and of
	 * observers' acquire. */
	__atomic_store_n(&t->shared->epoch, t->shared->epoch + 1, __ATOMIC_RELEASE);
}

int intern_reclaim(struct intern *t, const uint64_t *held,
		   struct intern_reclaim_stats *out)
{
	struct intern_shared *sh = t->shared;
	*out = (struct intern_reclaim_stats){0, 0, 0};
	uint64_t words = (sh->arena_used + 63) / 64 + 1;
	uint64_t *starts = calloc(words, sizeof(*starts));
	uint32_t per_class[INTERN_CLASSES] = {0};
	struct free_item *items[INTERN_CLASSES] = {0};
	if (starts == NULL)
		return -ENOMEM;
	for (uint32_t id = 0; id < sh->count; id++) {
		uint64_t off = entry_of(t, id)->offset;
		starts[off / 64] |= UINT64_C(1) << (off % 64);
	}
	/* The ids to free, counted by their class first (nothing changes
	 * until every list is allocated). */
	for (uint32_t id = 1; id < sh->count; id++) {
		const struct intern_entry *e = entry_of(t, id);
		bool freeing = e->tag != INTERN_TAG_PINNED && e->tag != INTERN_TAG_FREE &&
			       !(held[id / 64] >> (id % 64) & 1);
		if (e->tag != INTERN_TAG_FREE && !freeing)
			continue;
		/* Its room: up to the next string's first byte. */
		uint64_t end = e->offset + 1;
		while (end < sh->arena_used && !(starts[end / 64] >> (end % 64) & 1))
			end++;
		per_class[class_of(end - e->offset)]++;
	}
	int rc = 0;
	for (int k = 0; k < INTERN_CLASSES && rc == 0; k++)
		if (per_class[k] > 0 &&
		    (items[k] = calloc(per_class[k], sizeof(*items[k]))) == NULL)
			rc = -ENOMEM;
	if (rc < 0) {
		for (int k = 0; k < INTERN_CLASSES; k++)
			free(items[k]);
		free(starts);
		return rc;
	}
	uint32_t fill[INTERN_CLASSES] = {0};
	for (uint32_t id = 1; id < sh->count; id++) {
		struct intern_entry *e = entry_of(t, id);
		bool freeing = e->tag != INTERN_TAG_PINNED && e->tag != INTERN_TAG_FREE &&
			       !(held[id / 64] >> (id % 64) & 1);
		if (e->tag != INTERN_TAG_FREE && !freeing)
			continue;
		uint64_t end = e->offset + 1;
		while (end < sh->arena_used && !(starts[end / 64] >> (end % 64) & 1))
			end++;
		if (freeing) {
			out->freed++;
			out->freed_bytes += e->len + 1u;
			unindex(t, id);
			free_entry(t, id);
		}
		int k = class_of(end - e->offset);
		items[k][fill[k]++] = (struct free_item){id, (uint32_t)(end - e->offset)};
	}
	free(starts);
	for (int k = 0; k < INTERN_CLASSES; k++) {
		free(t->free_items[k]);
		t->free_items[k] = items[k];
		t->free_len[k] = fill[k];
	}
	out->free = sh->n_free;
	t->pin_on_find = false;
	/* I2: release, partner of an observer's acquire loads of the epoch
	 * around its read: the entries freed are written before it, and no
	 * freed id is reused before this store (reuse begins after return). */
	if (out->freed > 0)
		__atomic_store_n(&sh->epoch, sh->epoch + 1, __ATOMIC_RELEASE);
	return 0;
}

void intern_limits(const struct intern *t, uint32_t *max_strings,
		   uint64_t *arena_size)
{
	*max_strings = t->max_strings;
	*arena_size = t->arena_size;
}
