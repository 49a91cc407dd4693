/* Other shards' placements, followed by a watch: see
 * shard_watch_internal.h.
 *
 * Design: one thread. What it follows is the shards this host does not
 * own, as key ranges: the shards it knows (its nodes' shard values) and
 * owns, in key order, cut into runs of shards not owned, each run one
 * range [shards/<first>/, the end of shards/<last>/) (a shard it does not
 * know, between two of a run, is followed with them). No range (every
 * shard owned, or nothing told yet): no list, no watch. Else a list of
 * the ranges in pages at one revision (restarted at the newest after a
 * compaction between pages), then one stream with a watch per range from
 * the list's revision + 1; a watch cut by a compaction (-ERANGE), a
 * change of the ranges (a take, a release, a new shard: the thread's
 * interrupt flag), or a stream of several ranges broken (its watches'
 * revisions may differ: coord/watch.h) lists again; a stream of one
 * range resumes where it broke. The records it holds are in a map
 * (daemon/record_map_internal.h) from the uid's hash (the record's
 * cookie) to the record's id and its shard's hash, the thread's alone.
 * A batch key (shards/<s>/sets/<name>, several placements: coord/
 * batch_value.h) is a pod key for each of its placements; since a watch
 * event carries a key's new value only, the uids' hashes each batch key
 * held are kept (daemon/batch_held_internal.h, the thread's alone, made
 * again by each list): a put counts the uids it did not hold and frees
 * those it no longer holds, a delete frees all it held.
 * Each message of the watch, and each list, is applied under the
 * producers' lock (producers_locked) and, inside it, the claims' mutex
 * (mu): a take (daemon/etcd_sync.c, count_shard) is claimed under mu
 * before it scans the table for cookies, so a record the watch makes is
 * either made before the claim (the take sees its cookie) or not made.
 * Lock order: the producers' lock, then mu; the membership thread takes
 * mu alone.
 *
 * Cost: per event, a key parse, a value decode (at most
 * PLACEMENT_VALUE_MAX bytes; a batch key's at most BATCH_VALUE_MAX, twice,
 * then a sort and a merge of at most 128 hashes), a map probe and, for a new foreign
 * placement, up to 129 intern lookups (its labels), a group encoding, a
 * record and a ledger charge; a list (at the start, a compaction, each
 * change of the ranges: a take, a release), O(keys in the ranges) plus a
 * walk of the placement table; every shard owned, nothing but that walk
 * per change. Nothing here is on a worker's path.
 */
#define _GNU_SOURCE 1

#include "daemon/shard_watch_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/base.h"
#include "daemon/batch_held_internal.h"
#include "daemon/pod_labels_internal.h"
#include "daemon/record_map_internal.h"
#include "daemon/shard_runs_internal.h"
#include "ingest/ingest.h"
#include "workers/workers.h"

/* Values of up to BATCH_VALUE_MAX (8 KiB, a batch key's), base64 in the
 * answer: 256 of them within the client's 4 MiB. */
#define LIST_PAGE 256
#define UID_HALF 16   /* etcd_sync.c's uids: two halves of 16 hex digits */
#define KEY_BYTES 512

struct shard_watch {
	struct shard_watch_config cfg;
	char endpoints[1024], prefix[COMMIT_PREFIX_MAX + 1];
	char host_hex[UID_HALF + 1];
	struct etcd_client *client;
	pthread_t thread;
	atomic_bool stop;      /* XS1 */
	atomic_bool interrupt; /* XS2: stop, a claim given up, other ranges: list again */
	pthread_mutex_t mu;    /* the claims and the wanted ranges */
	size_t n_claims;
	uint64_t claims[SHARD_MAX]; /* shard names' hashes */
	bool told;                       /* shard_watch_owned called once */
	struct shard_runs want, scratch; /* under mu */
	struct shard_runs cur;           /* the thread's: what it lists and watches */
	struct record_map map;           /* the thread's */
	struct batch_held held;          /* the thread's: each batch key's cookies */
	uint64_t batch_cookies[BATCH_PLACEMENTS_MAX]; /* the thread's scratch */
	uint64_t records, puts, deletes, relists, refused, unknown_node, errors; /* XS3 */
	uint64_t ranges, streams, received;                                       /* XS3 */
	int64_t revision;                                                         /* XS3 */
};

/* FNV-1a, 64 bits, never 0: etcd_sync.c's hash of a uid, the cookie of
 * the record counted for it. */
static uint64_t fnv1a(const char *s, size_t n)
{
	uint64_t h = 14695981039346656037ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)s[i]) * 1099511628211ull;
	return h != 0 ? h : 1;
}

static void bump(uint64_t *c, uint64_t by)
{
	/* XS3: relaxed, counters for the metrics; no partner. */
	__atomic_fetch_add(c, by, __ATOMIC_RELAXED);
}

/* ---- claims -------------------------------------------------------------- */

static bool claimed_locked(const struct shard_watch *w, uint64_t shard)
{
	for (size_t i = 0; i < w->n_claims; i++)
		if (w->claims[i] == shard)
			return true;
	return false;
}

void shard_watch_owned(struct shard_watch *w, const shard_name_t *known, size_t nk,
		       const shard_name_t *names, size_t n)
{
	if (w == NULL)
		return;
	uint64_t now[SHARD_MAX];
	size_t k = 0;
	for (size_t i = 0; i < n && k < SHARD_MAX; i++)
		now[k++] = fnv1a(names[i], strlen(names[i]));
	pthread_mutex_lock(&w->mu);
	bool given_up = false;
	for (size_t i = 0; i < w->n_claims && !given_up; i++) {
		bool kept = false;
		for (size_t j = 0; j < k && !kept; j++)
			kept = now[j] == w->claims[i];
		given_up = !kept;
	}
	memcpy(w->claims, now, k * sizeof(now[0]));
	w->n_claims = k;
	shard_runs_of(known, nk, names, n, &w->scratch);
	bool changed = !w->told || !shard_runs_equal(&w->scratch, &w->want);
	if (changed)
		w->want = w->scratch;
	w->told = true;
	pthread_mutex_unlock(&w->mu);
	/* XS2: release, partner of the acquire in the thread's loop (and
	 * watch_run's poll): a shard given up is the watch's again, from a
	 * list; other ranges to follow (a take, a new shard), from a list. */
	if (given_up || changed)
		atomic_store_explicit(&w->interrupt, true, memory_order_release);
}

/* ---- records --------------------------------------------------------------- */

/* shards/<s>/<dir><name> after the prefix (dir: "/pods/" or a batch
 * key's "/" BATCH_KEY_DIR): the shard and the name, or false. */
static bool shard_key(const struct shard_watch *w, const uint8_t *key, size_t len,
		      const char *dir, const char **shard, size_t *shard_len, const char **name,
		      size_t *name_len)
{
	size_t plen = strlen(w->prefix), dl = strlen(dir);
	static const char shards[] = "shards/";
	if (len <= plen + sizeof(shards) - 1 || memcmp(key, w->prefix, plen) != 0 ||
	    memcmp(key + plen, shards, sizeof(shards) - 1) != 0)
		return false;
	const char *s = (const char *)key + plen + sizeof(shards) - 1;
	size_t rest = len - plen - (sizeof(shards) - 1);
	const char *slash = memchr(s, '/', rest);
	if (slash == NULL || slash == s || (size_t)(s + rest - slash) <= dl ||
	    memcmp(slash, dir, dl) != 0)
		return false;
	*shard = s;
	*shard_len = (size_t)(slash - s);
	*name = slash + dl;
	*name_len = (size_t)(s + rest - *name);
	return true;
}

/* shards/<s>/pods/<uid> after the prefix: the shard and uid, or false. */
static bool pod_key(const struct shard_watch *w, const uint8_t *key, size_t len,
		    const char **shard, size_t *shard_len, const char **uid, size_t *uid_len)
{
	return shard_key(w, key, len, "/pods/", shard, shard_len, uid, uid_len) &&
	       memchr(*uid, '/', *uid_len) == NULL && memchr(*uid, '\0', *uid_len) == NULL;
}

/* shards/<s>/<BATCH_KEY_DIR><name> after the prefix: the shard, or false.
 * Its hash over the whole key names it in the held map. */
static bool batch_key(const struct shard_watch *w, const uint8_t *key, size_t len,
		      const char **shard, size_t *shard_len)
{
	const char *name;
	size_t name_len;
	return shard_key(w, key, len, "/" BATCH_KEY_DIR, shard, shard_len, &name, &name_len);
}

static bool own_uid(const struct shard_watch *w, const char *uid, size_t len)
{
	return len == 2 * UID_HALF && memcmp(uid, w->host_hex, UID_HALF) == 0;
}

/* Under the producers' lock: a record for the placement v of uid's hash
 * `cookie` on shard `shard`. */
static void make_record(struct shard_watch *w, struct intern *strings, uint64_t cookie,
			uint64_t shard, const struct placement_value *v)
{
	if (w->map.n >= w->cfg.max_records) {
		bump(&w->refused, 1);
		uint64_t refused = __atomic_load_n(&w->refused, __ATOMIC_RELAXED);
		if (refused == 1 || refused % 1000 == 0)
			log_msg(LOG_LEVEL_WARN, "shard watch: %zu other shards' placements "
				"held, the most it holds: another one on node %s not counted "
				"(%" PRIu64 " so far)", w->map.n, v->node, refused);
		return;
	}
	uint32_t nid;
	int64_t slot = -1;
	if (intern_find(strings, v->node, strlen(v->node), &nid))
		slot = cluster_slot_of(w->cfg.cluster, nid);
	if (slot < 0) {
		bump(&w->unknown_node, 1); /* a node this host does not have */
		return;
	}
	uint32_t group = 0;
	int rc = pod_labels_group(strings, v, &group);
	if (rc < 0) {
		bump(&w->errors, 1);
		log_msg(LOG_LEVEL_WARN, "shard watch: a placement on node %s: its labels could "
			"not be kept (%s): counted without them", v->node, strerror(-rc));
		group = 0;
	}
	struct pod_spec pod = {0};
	pod.request.v[RES_CPU] = v->cpu_milli;
	pod.request.v[RES_MEMORY] = v->mem_bytes;
	pod.nonzero_cpu_milli = v->cpu_milli;
	pod.nonzero_mem_bytes = v->mem_bytes;
	pod.group = group;
	struct ledger *l = cluster_ledger(w->cfg.cluster);
	int64_t ix = placements_take(w->cfg.placements);
	if (ix < 0 || ledger_account(l, (uint32_t)slot, &pod, NULL, +1) < 0) {
		if (ix >= 0)
			placements_untake(w->cfg.placements, (uint32_t)ix);
		bump(&w->refused, 1);
		log_msg(LOG_LEVEL_WARN, "shard watch: a placement on node %s not counted: %s",
			v->node, ix < 0 ? "the placement table is full"
					: "the node's group table is full");
		return;
	}
	uint64_t id = placements_fill(w->cfg.placements, (uint32_t)ix, PLACEMENT_OWNER_BOUND,
				      (uint32_t)slot, ledger_node_generation(l, (uint32_t)slot),
				      &pod, NULL, cookie);
	(void)record_map_put(&w->map, cookie, id, shard); /* below max: checked above */
	bump(&w->records, 1);
}

/* Under the producers' lock: frees the record of map entry e. */
static void free_record(struct shard_watch *w, struct record_entry *e)
{
	const struct placement_record *r = placements_get(w->cfg.placements, e->id);
	if (r != NULL && r->owner == PLACEMENT_OWNER_BOUND && r->cookie == e->cookie) {
		struct ledger *l = cluster_ledger(w->cfg.cluster);
		struct pod_spec pod;
		placement_use(r, &pod);
		uint32_t slot = r->slot;
		bool counted = ledger_node_generation(l, slot) == r->node_gen;
		if (counted)
			ledger_account(l, slot, &pod, NULL, -1);
		placements_free(w->cfg.placements, e->id);
		/* After the counters moved (A1): a waiting pod sees them. */
		if (counted && w->cfg.events != NULL) {
			struct queue_event ev = queue_event_release(slot, &pod, NULL);
			queue_events_publish(w->cfg.events, &ev);
		}
	}
	/* else an admin released it (or a drain): nothing left to give back */
	record_map_del(&w->map, e);
	/* XS3: relaxed; records is a gauge here. */
	__atomic_fetch_sub(&w->records, 1, __ATOMIC_RELAXED);
}

/* ---- a batch key's event -------------------------------------------------- */

struct batch_put {
	struct shard_watch *w;
	struct intern *strings;
	uint64_t shard;
	bool claimed;
	const uint64_t *held; /* what the key held: sorted */
	size_t n_held, n;
};

/* One placement of a batch key's new value (the whole value decoded
 * already): a new uid is counted as a pod key's put is. */
static int batch_put_one(void *ctx, const char *uid, const struct placement_value *v)
{
	struct batch_put *b = ctx;
	struct shard_watch *w = b->w;
	size_t ul = strlen(uid);
	uint64_t cookie = fnv1a(uid, ul);
	w->batch_cookies[b->n++] = cookie;
	if (batch_held_has(b->held, b->n_held, cookie) || b->claimed || own_uid(w, uid, ul) ||
	    record_map_find(&w->map, cookie) != NULL)
		return 0;
	bump(&w->puts, 1);
	make_record(w, b->strings, cookie, b->shard, v);
	return 0;
}

/* Under the producers' lock and mu: a batch key put (its new set: the
 * uids it no longer holds freed as a pod key's delete, the new ones
 * counted) or deleted (every uid it held freed). A value that does not
 * decode changes nothing (its placements stay counted: the safe side). */
static void apply_batch_event(struct shard_watch *w, struct intern *strings,
			      const struct etcd_watch_event *ev, const char *shard, size_t shard_len)
{
	uint64_t key = fnv1a((const char *)ev->kv.key, ev->kv.key_len);
	size_t n_held;
	const uint64_t *held = batch_held_get(&w->held, key, &n_held);
	size_t n = 0;
	if (!ev->deleted) {
		uint64_t sh = fnv1a(shard, shard_len);
		struct batch_put b = {w, strings, sh, claimed_locked(w, sh), held, n_held, 0};
		char msg[256];
		if (batch_value_decode(ev->kv.value, ev->kv.value_len, batch_put_one, &b, msg,
				       sizeof(msg)) < 0) {
			bump(&w->errors, 1);
			log_msg(LOG_LEVEL_WARN, "shard watch: key %.*s: %s", (int)ev->kv.key_len,
				(const char *)ev->kv.key, msg);
			return;
		}
		n = b.n;
		batch_held_sort(w->batch_cookies, n);
	}
	for (size_t i = 0; i < n_held; i++) {
		if (batch_held_has(w->batch_cookies, n, held[i]))
			continue;
		struct record_entry *e = record_map_find(&w->map, held[i]);
		if (e != NULL) {
			bump(&w->deletes, 1);
			free_record(w, e);
		}
	}
	if (batch_held_set(&w->held, key, w->batch_cookies, n) < 0) {
		bump(&w->refused, 1);
		log_msg(LOG_LEVEL_WARN, "shard watch: key %.*s: its placements not remembered "
			"(out of memory, or %zu batch keys held): a release there is not seen "
			"until the next list", (int)ev->kv.key_len, (const char *)ev->kv.key,
			w->held.keys.n);
	}
}

/* ---- a watch message ------------------------------------------------------- */

struct apply {
	struct shard_watch *w;
	const struct etcd_watch_message *m;
};

static void apply_message(void *arg, struct intern *strings)
{
	struct apply *a = arg;
	struct shard_watch *w = a->w;
	pthread_mutex_lock(&w->mu);
	for (size_t i = 0; i < a->m->n_events; i++) {
		const struct etcd_watch_event *ev = &a->m->events[i];
		const char *shard, *uid;
		size_t shard_len, uid_len;
		if (!pod_key(w, ev->kv.key, ev->kv.key_len, &shard, &shard_len, &uid, &uid_len)) {
			if (batch_key(w, ev->kv.key, ev->kv.key_len, &shard, &shard_len))
				apply_batch_event(w, strings, ev, shard, shard_len);
			continue; /* else an owner, an assignment, a commit lane's key */
		}
		uint64_t cookie = fnv1a(uid, uid_len);
		struct record_entry *e = record_map_find(&w->map, cookie);
		if (ev->deleted) {
			if (e != NULL) {
				bump(&w->deletes, 1);
				free_record(w, e);
			}
			continue;
		}
		uint64_t sh = fnv1a(shard, shard_len);
		if (e != NULL || own_uid(w, uid, uid_len) || claimed_locked(w, sh))
			continue;
		struct placement_value v;
		char msg[256];
		if (placement_value_decode(ev->kv.value, ev->kv.value_len, &v, msg, sizeof(msg)) !=
		    0) {
			bump(&w->errors, 1);
			log_msg(LOG_LEVEL_WARN, "shard watch: key %.*s: %s", (int)ev->kv.key_len,
				(const char *)ev->kv.key, msg);
			continue;
		}
		bump(&w->puts, 1);
		make_record(w, strings, cookie, sh, &v);
	}
	pthread_mutex_unlock(&w->mu);
}

static int on_message(void *ctx, const struct etcd_watch_message *m)
{
	struct shard_watch *w = ctx;
	bump(&w->received, m->n_events);
	/* Most messages are other keys' (each commit's lane key): the
	 * producers' lock only for a placement's key. */
	bool pods = false;
	for (size_t i = 0; i < m->n_events && !pods; i++) {
		const char *shard, *uid;
		size_t shard_len, uid_len;
		pods = pod_key(w, m->events[i].kv.key, m->events[i].kv.key_len, &shard, &shard_len,
			       &uid, &uid_len) ||
		       batch_key(w, m->events[i].kv.key, m->events[i].kv.key_len, &shard,
				 &shard_len);
	}
	if (pods) {
		struct apply a = {w, m};
		producers_locked(w->cfg.producers, apply_message, &a);
	}
	/* The revision seen through: the last event's, or a progress
	 * message's; never a "created" message's, which comes before the
	 * events it announces (as coord/watch.h resumes); the newest of the
	 * stream's watches (one may catch up behind another). XS3: relaxed,
	 * a gauge this thread alone writes. */
	int64_t seen = m->n_events > 0 ? m->events[m->n_events - 1].kv.mod_revision
		       : m->created    ? 0
				       : m->revision;
	if (seen > __atomic_load_n(&w->revision, __ATOMIC_RELAXED))
		__atomic_store_n(&w->revision, seen, __ATOMIC_RELAXED);
	return 0;
}

/* ---- a list ---------------------------------------------------------------- */

struct listed {
	uint64_t cookie, shard;
	bool claimed, made;
	struct placement_value v;
};

struct list {
	struct listed *items;
	size_t n, cap;
	struct record_map want; /* cookie -> index into items (as id) */
	struct batch_held held; /* the batch keys listed: the watch's, once applied */
};

/* The next item of l (grown by doubling); NULL out of memory. */
static struct listed *listed_next(struct list *l)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 256;
		struct listed *p = realloc(l->items, cap * sizeof(*p));
		if (p == NULL)
			return NULL;
		l->items = p;
		l->cap = cap;
	}
	return &l->items[l->n];
}

struct list_batch {
	struct shard_watch *w;
	struct list *l;
	uint64_t shard;
	size_t n;
};

/* One placement of a listed batch key: an item unless it is this
 * host's; its cookie kept for the key either way. */
static int list_batch_one(void *ctx, const char *uid, const struct placement_value *v)
{
	struct list_batch *b = ctx;
	size_t ul = strlen(uid);
	uint64_t cookie = fnv1a(uid, ul);
	b->w->batch_cookies[b->n++] = cookie;
	if (own_uid(b->w, uid, ul))
		return 0;
	struct listed *it = listed_next(b->l);
	if (it == NULL)
		return -ENOMEM;
	it->v = *v;
	it->cookie = cookie;
	it->shard = b->shard;
	it->claimed = it->made = false;
	b->l->n++;
	return 0;
}

/* A listed batch key: its placements as items, its cookies in l->held.
 * 0, or -ENOMEM (err says so); a value that does not decode is logged and
 * skipped, as a pod key's. */
static int list_batch_key(struct shard_watch *w, struct list *l, const struct etcd_kv *kv,
			  const char *shard, size_t shard_len, char *err, size_t errlen)
{
	struct list_batch b = {w, l, fnv1a(shard, shard_len), 0};
	size_t before = l->n;
	char msg[256];
	int rc = batch_value_decode(kv->value, kv->value_len, list_batch_one, &b, msg, sizeof(msg));
	if (rc == -ENOMEM) {
		snprintf(err, errlen, "listing: out of memory");
		return rc;
	}
	if (rc < 0) {
		l->n = before;
		bump(&w->errors, 1);
		log_msg(LOG_LEVEL_WARN, "shard watch: key %.*s: %s", (int)kv->key_len,
			(const char *)kv->key, msg);
		return 0;
	}
	batch_held_sort(w->batch_cookies, b.n);
	if (batch_held_set(&l->held, fnv1a((const char *)kv->key, kv->key_len), w->batch_cookies,
			   b.n) < 0)
		bump(&w->refused, 1); /* a release there is seen at the next list */
	return 0;
}

/* Range i of the thread's runs: its first key and its end, NUL-ended
 * (KEY_BYTES each); the first key's length, the end's in *end_len. */
static size_t run_range(const struct shard_watch *w, size_t i, char *key, uint8_t *end,
			size_t *end_len)
{
	char last[KEY_BYTES];
	int n = snprintf(last, sizeof(last), "%sshards/%s/", w->prefix, w->cur.last[i]);
	*end_len = etcd_prefix_end(last, (size_t)n, end);
	end[*end_len] = 0;
	return (size_t)snprintf(key, KEY_BYTES, "%sshards/%s/", w->prefix, w->cur.first[i]);
}

/* The foreign placements in the thread's ranges at one revision, into l
 * (reset on a compaction between pages). 0 with *revision, or a negative
 * errno (err says why). */
static int list_all(struct shard_watch *w, struct list *l, int64_t *revision, char *err,
		    size_t errlen)
{
	char from[KEY_BYTES + 1];
	uint8_t end[KEY_BYTES + 1];
	for (int pass = 0; pass < 4; pass++) {
		l->n = 0;
		batch_held_clear(&l->held);
		int64_t rev = 0;
		bool compacted = false;
		for (size_t run = 0; run < w->cur.n && !compacted; run++) {
			size_t end_len;
			size_t from_len = run_range(w, run, from, end, &end_len);
			for (;;) {
				struct etcd_range_result r;
				int rc = etcd_range_at(w->client, from, from_len, end, end_len,
						       LIST_PAGE, rev, &r);
				if (rc == -ERANGE) {
					compacted = true; /* between pages: again, at the newest */
					break;
				}
				if (rc != 0) {
					snprintf(err, errlen, "listing %sshards/%s/ to %s/: %s",
						 w->prefix, w->cur.first[run], w->cur.last[run],
						 etcd_client_error(w->client));
					return rc;
				}
				if (rev == 0)
					rev = r.revision;
				for (size_t i = 0; i < r.n_kvs; i++) {
					const struct etcd_kv *kv = &r.kvs[i];
					const char *shard, *uid;
					size_t shard_len, uid_len;
					if (!pod_key(w, kv->key, kv->key_len, &shard, &shard_len,
						     &uid, &uid_len)) {
						if (batch_key(w, kv->key, kv->key_len, &shard,
							      &shard_len) &&
						    list_batch_key(w, l, kv, shard, shard_len, err,
								   errlen) < 0) {
							etcd_range_result_free(&r);
							return -ENOMEM;
						}
						continue;
					}
					if (own_uid(w, uid, uid_len))
						continue;
					struct listed *it = listed_next(l);
					if (it == NULL) {
						etcd_range_result_free(&r);
						snprintf(err, errlen, "listing: out of memory");
						return -ENOMEM;
					}
					char msg[256];
					if (placement_value_decode(kv->value, kv->value_len, &it->v,
								   msg, sizeof(msg)) != 0) {
						bump(&w->errors, 1);
						log_msg(LOG_LEVEL_WARN, "shard watch: key %.*s: %s",
							(int)kv->key_len, (const char *)kv->key, msg);
						continue;
					}
					it->cookie = fnv1a(uid, uid_len);
					it->shard = fnv1a(shard, shard_len);
					it->claimed = it->made = false;
					l->n++;
				}
				bool more = r.more && r.n_kvs > 0;
				if (more) {
					const struct etcd_kv *last = &r.kvs[r.n_kvs - 1];
					if (last->key_len >= KEY_BYTES)
						more = false; /* keys are shorter: the list is done */
					else {
						memcpy(from, last->key, last->key_len);
						from[last->key_len] = '\0';
						from_len = last->key_len + 1;
					}
				}
				etcd_range_result_free(&r);
				if (!more)
					break;
			}
		}
		if (!compacted) {
			*revision = rev;
			return 0;
		}
	}
	snprintf(err, errlen, "listing %sshards/: compacted away 4 times", w->prefix);
	return -ERANGE;
}

struct relist {
	struct shard_watch *w;
	struct list *l;
	size_t adopted, made, freed;
};

/* Under the producers' lock: the records made to match the list. */
static void apply_list(void *arg, struct intern *strings)
{
	struct relist *rl = arg;
	struct shard_watch *w = rl->w;
	struct list *l = rl->l;
	pthread_mutex_lock(&w->mu);
	record_map_clear(&l->want);
	for (size_t i = 0; i < l->n; i++) {
		l->items[i].claimed = claimed_locked(w, l->items[i].shard);
		if (!l->items[i].claimed)
			(void)record_map_put(&l->want, l->items[i].cookie, i, 0); /* l->n <= max */
	}
	/* The old map: entries whose records went another way (an admin's
	 * release, a drain) forgotten, to be made again if still listed;
	 * records whose keys are gone, out of unclaimed shards, freed (a
	 * claimed shard's are the take's). A deletion shifts a later entry
	 * into i: look at i again. */
	for (size_t i = 0; i < w->map.cap;) {
		struct record_entry *e = &w->map.e[i];
		if (e->cookie == 0) {
			i++;
			continue;
		}
		const struct placement_record *r = placements_get(w->cfg.placements, e->id);
		if (r == NULL || r->owner != PLACEMENT_OWNER_BOUND || r->cookie != e->cookie) {
			record_map_del(&w->map, e);
			/* XS3: relaxed; records is a gauge here. */
			__atomic_fetch_sub(&w->records, 1, __ATOMIC_RELAXED);
			continue;
		}
		if (record_map_find(&l->want, e->cookie) != NULL || claimed_locked(w, e->shard)) {
			i++;
			continue;
		}
		free_record(w, e);
		rl->freed++;
	}
	/* Bound records with a wanted cookie: adopted (a take's, of a shard
	 * given up since, or the watch's own). */
	uint32_t cap = placements_capacity(w->cfg.placements);
	for (uint32_t i = 0; i < cap; i++) {
		uint64_t id;
		const struct placement_record *r = placements_at(w->cfg.placements, i, &id);
		if (r == NULL || r->owner != PLACEMENT_OWNER_BOUND || r->cookie == 0)
			continue;
		struct record_entry *want = record_map_find(&l->want, r->cookie);
		if (want == NULL || l->items[want->id].made)
			continue;
		l->items[want->id].made = true;
		if (record_map_find(&w->map, r->cookie) == NULL &&
		    record_map_put(&w->map, r->cookie, id, l->items[want->id].shard) == 0) {
			bump(&w->records, 1);
			rl->adopted++;
		}
	}
	for (size_t i = 0; i < l->n; i++) {
		struct listed *it = &l->items[i];
		if (it->claimed || it->made || record_map_find(&w->map, it->cookie) != NULL)
			continue;
		it->made = true;
		size_t before = w->map.n;
		make_record(w, strings, it->cookie, it->shard, &it->v);
		rl->made += w->map.n > before;
	}
	pthread_mutex_unlock(&w->mu);
}

/* ---- the thread ------------------------------------------------------------ */

static bool stopping(struct shard_watch *w)
{
	/* XS1: acquire, partner of shard_watch_stop's release. */
	return atomic_load_explicit(&w->stop, memory_order_acquire);
}

/* Sleeps ms, or less when stopped. */
static void pause_ms(struct shard_watch *w, unsigned ms)
{
	for (unsigned t = 0; t < ms && !stopping(w); t += 50) {
		struct timespec ts = {0, 50 * 1000000L};
		nanosleep(&ts, NULL);
	}
}

/* Whether the thread's interrupt flag is set: the ranges changed, a
 * shard was given up, or a stop. */
static bool interrupted(struct shard_watch *w)
{
	/* XS2: acquire, partner of shard_watch_owned's release. */
	return atomic_load_explicit(&w->interrupt, memory_order_acquire);
}

static void *watch_thread(void *arg)
{
	struct shard_watch *w = arg;
	struct list l = {0};
	struct watch_range *ranges = calloc(SHARD_MAX, sizeof(*ranges));
	char(*keys)[2][KEY_BYTES + 1] = calloc(SHARD_MAX, sizeof(*keys));
	if (ranges == NULL || keys == NULL || record_map_init(&l.want, w->cfg.max_records) < 0 ||
	    batch_held_init(&l.held, w->cfg.max_records) < 0) {
		log_msg(LOG_LEVEL_ERROR, "shard watch: out of memory: not watching");
		free(ranges);
		free(keys);
		return NULL;
	}
	char err[512];
	while (!stopping(w)) {
		/* XS2: the list reads every claim, and the ranges, as of now. */
		atomic_store_explicit(&w->interrupt, false, memory_order_relaxed);
		pthread_mutex_lock(&w->mu);
		bool told = w->told;
		w->cur = w->want;
		pthread_mutex_unlock(&w->mu);
		/* XS3: relaxed, a gauge. */
		__atomic_store_n(&w->ranges, (uint64_t)w->cur.n, __ATOMIC_RELAXED);
		if (!told) {
			pause_ms(w, 50); /* the membership thread has not told yet */
			continue;
		}
		int64_t rev = 0;
		if (w->cur.n > 0) {
			int rc = list_all(w, &l, &rev, err, sizeof(err));
			if (rc < 0) {
				bump(&w->errors, 1);
				log_msg(LOG_LEVEL_WARN, "shard watch: %s (again in 1 s)", err);
				pause_ms(w, 1000);
				continue;
			}
		} else {
			l.n = 0; /* nothing to follow: no list; the unclaimed records go */
			batch_held_clear(&l.held);
		}
		if (l.n > w->cfg.max_records) {
			/* want's bound (half its room): the rest would be refused */
			bump(&w->refused, l.n - w->cfg.max_records);
			l.n = w->cfg.max_records;
		}
		struct relist rl = {w, &l, 0, 0, 0};
		producers_locked(w->cfg.producers, apply_list, &rl);
		/* The batch keys as listed: what their next events diff against
		 * (the thread's alone, as both maps are). */
		batch_held_swap(&w->held, &l.held);
		if (w->cur.n == 0) {
			if (rl.freed > 0)
				log_msg(LOG_LEVEL_INFO, "shard watch: every shard this host's: "
					"%zu other hosts' placements freed", rl.freed);
			while (!stopping(w) && !interrupted(w))
				pause_ms(w, 50);
			continue;
		}
		bump(&w->relists, 1);
		/* XS3: relaxed, a gauge this thread alone writes. */
		if (rev > __atomic_load_n(&w->revision, __ATOMIC_RELAXED))
			__atomic_store_n(&w->revision, rev, __ATOMIC_RELAXED);
		log_msg(LOG_LEVEL_INFO, "shard watch: %zu other hosts' placements listed at "
			"revision %" PRId64 " in %zu key ranges (%s to %s): %zu counted now, %zu "
			"adopted, %zu freed; watching from %" PRId64, l.n, rev, w->cur.n,
			w->cur.first[0], w->cur.last[w->cur.n - 1], rl.made, rl.adopted,
			rl.freed, rev + 1);
		for (size_t i = 0; i < w->cur.n; i++) {
			size_t end_len;
			size_t key_len = run_range(w, i, keys[i][0], (uint8_t *)keys[i][1], &end_len);
			ranges[i] = (struct watch_range){keys[i][0], key_len, keys[i][1], end_len};
		}
		int64_t next = rev + 1;
		while (!stopping(w)) {
			struct watch_options o = {.endpoints = w->endpoints,
						  .ranges = ranges,
						  .n_ranges = w->cur.n,
						  .start_revision = next,
						  .stop = &w->interrupt};
			bump(&w->streams, 1);
			int rc = watch_run(&o, on_message, w, &next, err, sizeof(err));
			if (rc == -ERANGE) {
				/* Warn: the watch fell behind etcd's history. */
				log_msg(LOG_LEVEL_WARN, "shard watch: revision %" PRId64 " was "
					"compacted away (etcd keeps from %" PRId64 "): listing again",
					o.start_revision, next);
				break;
			}
			if (interrupted(w))
				break; /* list again */
			bump(&w->errors, 1);
			if (w->cur.n > 1) {
				/* Its watches may have stopped at different revisions. */
				log_msg(LOG_LEVEL_WARN, "shard watch: %s (listing again)", err);
				pause_ms(w, 250);
				break;
			}
			log_msg(LOG_LEVEL_WARN, "shard watch: %s (watching again from revision %"
				PRId64 ")", err, next);
			pause_ms(w, 250);
		}
	}
	free(l.items);
	free(ranges);
	free(keys);
	record_map_free(&l.want);
	batch_held_free(&l.held);
	return NULL;
}

int shard_watch_start(struct shard_watch **out, const struct shard_watch_config *cfg, char *err,
		      size_t errlen)
{
	*out = NULL;
	struct shard_watch *w = calloc(1, sizeof(*w));
	if (w == NULL)
		return errmsg_rc(-ENOMEM, err, errlen, "shard watch: out of memory");
	w->cfg = *cfg;
	if (w->cfg.max_records == 0)
		w->cfg.max_records = SHARD_WATCH_DEFAULT_MAX;
	snprintf(w->endpoints, sizeof(w->endpoints), "%s", cfg->endpoints);
	snprintf(w->prefix, sizeof(w->prefix), "%s", cfg->prefix);
	w->cfg.endpoints = w->endpoints;
	w->cfg.prefix = w->prefix;
	snprintf(w->host_hex, sizeof(w->host_hex), "%016" PRIx64, cfg->host_hash);
	pthread_mutex_init(&w->mu, NULL);
	struct etcd_client_options o = {.timeout_ms = 5000};
	int rc = record_map_init(&w->map, w->cfg.max_records);
	if (rc == 0)
		rc = batch_held_init(&w->held, w->cfg.max_records);
	if (rc == 0)
		rc = etcd_client_open(&w->client, w->endpoints, &o, err, errlen);
	else
		snprintf(err, errlen, "shard watch: out of memory");
	if (rc == 0) {
		rc = -pthread_create(&w->thread, NULL, watch_thread, w);
		if (rc < 0)
			snprintf(err, errlen, "shard watch: its thread: %s", strerror(-rc));
	}
	if (rc < 0) {
		if (w->client != NULL)
			etcd_client_close(w->client);
		record_map_free(&w->map);
		batch_held_free(&w->held);
		pthread_mutex_destroy(&w->mu);
		free(w);
		return rc;
	}
	*out = w;
	return 0;
}

void shard_watch_stop(struct shard_watch *w)
{
	if (w == NULL)
		return;
	/* XS1: release, partner of stopping()'s acquire; XS2 wakes a watch. */
	atomic_store_explicit(&w->stop, true, memory_order_release);
	atomic_store_explicit(&w->interrupt, true, memory_order_release);
	pthread_join(w->thread, NULL);
	etcd_client_close(w->client);
	record_map_free(&w->map);
	batch_held_free(&w->held);
	pthread_mutex_destroy(&w->mu);
	free(w);
}

void shard_watch_get_counts(struct shard_watch *w, struct shard_watch_counts *out)
{
	/* XS3: relaxed loads of the counters. */
	*out = (struct shard_watch_counts){
		.records = __atomic_load_n(&w->records, __ATOMIC_RELAXED),
		.revision = __atomic_load_n(&w->revision, __ATOMIC_RELAXED),
		.puts = __atomic_load_n(&w->puts, __ATOMIC_RELAXED),
		.deletes = __atomic_load_n(&w->deletes, __ATOMIC_RELAXED),
		.relists = __atomic_load_n(&w->relists, __ATOMIC_RELAXED),
		.refused = __atomic_load_n(&w->refused, __ATOMIC_RELAXED),
		.unknown_node = __atomic_load_n(&w->unknown_node, __ATOMIC_RELAXED),
		.errors = __atomic_load_n(&w->errors, __ATOMIC_RELAXED),
		.ranges = __atomic_load_n(&w->ranges, __ATOMIC_RELAXED),
		.streams = __atomic_load_n(&w->streams, __ATOMIC_RELAXED),
		.received = __atomic_load_n(&w->received, __ATOMIC_RELAXED),
	};
}
