/* Sync commits of a sharded host's placements: see etcd_sync_internal.h.
 *
 * Design: a table of the owned shards' committers under one mutex (mu),
 * held by a worker only to find its node's shard and copy one record into
 * that committer (commit_queue_push copies: no pointer into the caller's
 * stack outlives the push), and by the membership thread to open or take
 * out an entry; a committer is closed (it drains, then answers the rest)
 * outside the mutex, after its entry is gone, so no worker can push into
 * a closing committer. Each worker waits on its own slot (waiter: mutex,
 * condition, the sequence of the record it waits for): the record's
 * cookie is (worker << 40 | sequence), so a completion that comes after
 * its worker gave up (ETCD_SYNC_WAIT_MS) matches no wait and is dropped.
 *
 * Cost per pod: a snapshot label lookup, the value's encoding, one push
 * (a lane's mutex) and a wait of one etcd transaction (a raft round and
 * an fsync: milliseconds), which is the cost that matters. A release:
 * one push, not waited for. A take (membership thread, before the gate
 * opens the shard): one paged read of the shard, one walk of the
 * placement table (the bound records' cookies, sorted) and a ledger
 * charge a placement counted.
 */
#define _GNU_SOURCE 1

#include "daemon/etcd_sync_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/base.h"

struct shard_committer {
	shard_name_t name;
	int64_t lease;
	struct commit_queue *q;
};

struct waiter {
	pthread_mutex_t mu;
	pthread_cond_t done_cv;
	uint64_t seq;  /* the record waited for (0: none) */
	uint64_t next; /* the last sequence handed out: never reused */
	bool done;
	int rc;
};

struct etcd_sync {
	char endpoints[1024];
	char prefix[COMMIT_PREFIX_MAX + 1];
	struct cluster *cluster;
	struct placements *placements;
	const struct intern *strings;
	struct etcd_client *reader; /* the membership thread's: rebuilds */
	uint32_t key;
	unsigned workers;
	struct membership *membership; /* ES1 */
	pthread_mutex_t mu;
	size_t n;
	struct shard_committer shards[SHARD_MAX];
	struct waiter *waiters; /* [workers] */
	uint64_t committed, refused, counted, deletes_dropped; /* relaxed counters */
	uint64_t host_hash; /* the first half of this host's uids */
};

#define COOKIE_SEQ_BITS 40
/* A uid: this host's name's hash (with its incarnation's number mixed
 * in when its ids restart at every start: etcd_sync_create) and the
 * placement's id, 16 hexadecimal digits each: placement ids are per host
 * (two hosts' first placements have the same id), the pair is not. */
#define UID_HALF 16

/* FNV-1a, 64 bits; never 0 (a cookie of 0 is a cluster file's pod). */
static uint64_t fnv1a(const char *s, size_t n)
{
	uint64_t h = 14695981039346656037ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)s[i]) * 1099511628211ull;
	return h != 0 ? h : 1;
}

struct etcd_sync *etcd_sync_create(const char *endpoints, const char *prefix,
				   const char *host, uint64_t incarnation, struct cluster *c,
				   struct placements *pl, const struct intern *strings,
				   uint32_t key, unsigned workers)
{
	struct etcd_sync *s = calloc(1, sizeof(*s));
	if (s == NULL)
		return NULL;
	s->waiters = calloc(workers, sizeof(*s->waiters));
	if (s->waiters == NULL) {
		free(s);
		return NULL;
	}
	snprintf(s->endpoints, sizeof(s->endpoints), "%s", endpoints);
	snprintf(s->prefix, sizeof(s->prefix), "%s", prefix);
	s->host_hash = fnv1a(host, strlen(host));
	if (incarnation != 0) {
		/* One FNV-1a of "<name>/<incarnation in 16 hex digits>". */
		char mixed[MEMBERSHIP_HOST_MAX + 16];
		int n = snprintf(mixed, sizeof(mixed), "%s/%016" PRIx64, host, incarnation);
		if (n > 0 && (size_t)n < sizeof(mixed))
			s->host_hash = fnv1a(mixed, (size_t)n);
	}
	s->cluster = c;
	s->placements = pl;
	s->strings = strings;
	s->key = key;
	s->workers = workers;
	pthread_mutex_init(&s->mu, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	for (unsigned i = 0; i < workers; i++) {
		pthread_mutex_init(&s->waiters[i].mu, NULL);
		pthread_cond_init(&s->waiters[i].done_cv, &ca);
	}
	pthread_condattr_destroy(&ca);
	return s;
}

void etcd_sync_set_membership(struct etcd_sync *s, struct membership *m)
{
	/* ES1: release, partner of the membership thread's acquire in
	 * lease_now: the membership is whole before its thread reads it
	 * here (its own thread may run its first ticks before this). */
	__atomic_store_n(&s->membership, m, __ATOMIC_RELEASE);
}

void etcd_sync_destroy(struct etcd_sync *s, long drain_ms)
{
	if (s == NULL)
		return;
	for (size_t i = 0; i < s->n; i++)
		commit_queue_close(s->shards[i].q, drain_ms);
	for (unsigned i = 0; i < s->workers; i++) {
		pthread_mutex_destroy(&s->waiters[i].mu);
		pthread_cond_destroy(&s->waiters[i].done_cv);
	}
	pthread_mutex_destroy(&s->mu);
	if (s->reader != NULL)
		etcd_client_close(s->reader);
	free(s->waiters);
	free(s);
}

/* The lease this host holds now (0: none). */
static int64_t lease_now(struct etcd_sync *s)
{
	/* ES1: acquire, partner of etcd_sync_set_membership's release. */
	struct membership *m = __atomic_load_n(&s->membership, __ATOMIC_ACQUIRE);
	if (m == NULL)
		return 0;
	struct membership_status st;
	membership_get_status(m, &st);
	return st.lease;
}

static bool named(const shard_name_t *names, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(names[i], name) == 0)
			return true;
	return false;
}

static size_t ready_at(struct etcd_sync *s, int64_t lease, const shard_name_t *names,
		       size_t n, shard_name_t *ready)
{
	size_t k = 0;
	pthread_mutex_lock(&s->mu);
	for (size_t i = 0; i < n && k < SHARD_MAX; i++)
		for (size_t j = 0; j < s->n; j++)
			if (s->shards[j].lease == lease && strcmp(s->shards[j].name, names[i]) == 0) {
				memcpy(ready[k++], names[i], sizeof(shard_name_t));
				break;
			}
	pthread_mutex_unlock(&s->mu);
	return k;
}

size_t etcd_sync_ready(struct etcd_sync *s, const shard_name_t *names, size_t n,
		       shard_name_t *ready)
{
	int64_t lease = lease_now(s);
	return lease == 0 ? 0 : ready_at(s, lease, names, n, ready);
}

/* A record's completion, on its lane's thread. */
static void on_done(void *ctx, uint64_t cookie, int rc, int64_t revision)
{
	(void)revision;
	struct etcd_sync *s = ctx;
	unsigned w = (unsigned)(cookie >> COOKIE_SEQ_BITS);
	if (w >= s->workers)
		return;
	struct waiter *wt = &s->waiters[w];
	pthread_mutex_lock(&wt->mu);
	if (wt->seq == (cookie & ((1ull << COOKIE_SEQ_BITS) - 1)) && !wt->done) {
		wt->done = true;
		wt->rc = rc;
		pthread_cond_signal(&wt->done_cv);
	}
	pthread_mutex_unlock(&wt->mu);
}

/* A shard's placements as read from etcd, before any is counted (a
 * compaction between pages starts the read again: nothing to undo). */
struct read_pod {
	char node[PLACEMENT_NODE_MAX + 1];
	int64_t cpu_milli, mem_bytes;
	uint64_t host, id; /* the uid's halves (valid: 32 hex digits) */
	bool valid;
	uint64_t key_hash; /* the uid's hash, never 0: a counted record's cookie */
};

struct shard_read {
	struct read_pod *pods;
	size_t n, cap;
};

static int read_item(void *ctx, const struct rebuild_item *it)
{
	struct shard_read *r = ctx;
	if (it->kind != REBUILD_POD)
		return 0;
	if (r->n == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 256;
		struct read_pod *p = realloc(r->pods, cap * sizeof(*p));
		if (p == NULL)
			return -ENOMEM;
		r->pods = p;
		r->cap = cap;
	}
	struct read_pod *p = &r->pods[r->n++];
	snprintf(p->node, sizeof(p->node), "%s", it->pod->node);
	p->cpu_milli = it->pod->cpu_milli;
	p->mem_bytes = it->pod->mem_bytes;
	/* A host's: 32 hexadecimal digits (etcd_sync_put); anything else is
	 * counted by its hash alone. */
	bool hex = it->name_len == 2 * UID_HALF;
	for (size_t i = 0; hex && i < 2 * UID_HALF; i++)
		hex = (it->name[i] >= '0' && it->name[i] <= '9') ||
		      (it->name[i] >= 'a' && it->name[i] <= 'f');
	p->valid = hex;
	if (hex) {
		char half[UID_HALF + 1] = {0};
		memcpy(half, it->name, UID_HALF);
		p->host = (uint64_t)strtoull(half, NULL, 16);
		p->id = (uint64_t)strtoull(it->name + UID_HALF, NULL, 16);
	}
	p->key_hash = fnv1a(it->name, it->name_len);
	return 0;
}

static void read_reset(void *ctx)
{
	((struct shard_read *)ctx)->n = 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Whether read pod p is already in this host's table: one of its own
 * (this host's uid, its id live on the same node) or one counted by an
 * earlier take (a bound record whose cookie is its uid's hash: `counted`,
 * sorted, n). */
static bool already_here(struct etcd_sync *s, const struct read_pod *p, uint32_t slot,
			 const uint64_t *counted, size_t n)
{
	if (p->valid && p->host == s->host_hash) {
		uint64_t id;
		const struct placement_record *r =
			placements_at(s->placements, (uint32_t)p->id, &id);
		if (r != NULL && id == p->id && r->owner != PLACEMENT_OWNER_BOUND &&
		    r->slot == slot)
			return true;
	}
	/* bsearch's array may not be NULL, even with n 0 (UBSan says so). */
	return n != 0 &&
	       bsearch(&p->key_hash, counted, n, sizeof(*counted), cmp_u64) != NULL;
}

/* Counts the placements of shard `name` that etcd holds and this host
 * does not (another host's, before a failover or a move) in its ledger,
 * each as a bound placement record (PLACEMENT_OWNER_BOUND: an admin's
 * release or a drain finds it; its cookie a hash of its key's uid), so a
 * pod is never placed in room they hold. 0, or a negative errno with the
 * shard left closed (tried again on the next tick). Membership thread;
 * before the gate opens the shard. */
static int count_shard(struct etcd_sync *s, const char *name)
{
	char err[256];
	if (s->reader == NULL) {
		struct etcd_client_options o = {.timeout_ms = 3000};
		int rc = etcd_client_open(&s->reader, s->endpoints, &o, err, sizeof(err));
		if (rc < 0) {
			log_msg(LOG_LEVEL_WARN, "shard %s: reading it from etcd: %s", name, err);
			return rc;
		}
	}
	struct shard_read rd = {0};
	struct rebuild_callbacks cb = {.item = read_item, .reset = read_reset, .ctx = &rd};
	int64_t rev = 0;
	int rc = coord_rebuild_shard_named(s->reader, s->prefix, name, 0, &cb, &rev, err,
					   sizeof(err));
	if (rc != 0) {
		log_msg(LOG_LEVEL_WARN, "shard %s: reading its placements from etcd: %s", name,
			err);
		free(rd.pods);
		return rc < 0 ? rc : -EIO;
	}
	/* The bound records counted by earlier takes, by their cookies. */
	uint32_t cap = placements_capacity(s->placements);
	uint64_t *counted = NULL;
	size_t n_counted = 0, cap_counted = 0;
	for (uint32_t i = 0; i < cap && rd.n > 0; i++) {
		uint64_t id;
		const struct placement_record *r = placements_at(s->placements, i, &id);
		if (r == NULL || r->owner != PLACEMENT_OWNER_BOUND || r->cookie == 0)
			continue;
		if (n_counted == cap_counted) {
			cap_counted = cap_counted ? 2 * cap_counted : 256;
			uint64_t *c = realloc(counted, cap_counted * sizeof(*c));
			if (c == NULL) {
				free(counted);
				free(rd.pods);
				return -ENOMEM;
			}
			counted = c;
		}
		counted[n_counted++] = r->cookie;
	}
	if (n_counted > 0)
		qsort(counted, n_counted, sizeof(*counted), cmp_u64);
	size_t added = 0, unknown = 0, full = 0;
	struct ledger *l = cluster_ledger(s->cluster);
	rcu_register();
	for (size_t i = 0; i < rd.n; i++) {
		const struct read_pod *p = &rd.pods[i];
		uint32_t nid;
		int64_t slot = -1;
		if (intern_find(s->strings, p->node, strlen(p->node), &nid))
			slot = cluster_slot_of(s->cluster, nid);
		if (slot < 0) {
			unknown++; /* a node this host does not have: nothing to count on */
			continue;
		}
		if (already_here(s, p, (uint32_t)slot, counted, n_counted))
			continue;
		struct pod_spec pod = {0};
		pod.request.v[RES_CPU] = p->cpu_milli;
		pod.request.v[RES_MEMORY] = p->mem_bytes;
		pod.nonzero_cpu_milli = p->cpu_milli;
		pod.nonzero_mem_bytes = p->mem_bytes;
		int64_t ix = placements_take(s->placements);
		if (ix < 0 || ledger_account(l, (uint32_t)slot, &pod, NULL, +1) < 0) {
			if (ix >= 0)
				placements_untake(s->placements, (uint32_t)ix);
			full++;
			continue;
		}
		placements_fill(s->placements, (uint32_t)ix, PLACEMENT_OWNER_BOUND, (uint32_t)slot,
				ledger_node_generation(l, (uint32_t)slot), &pod, NULL,
				p->key_hash);
		added++;
	}
	rcu_unregister();
	__atomic_fetch_add(&s->counted, added, __ATOMIC_RELAXED);
	log_msg(full > 0 ? LOG_LEVEL_WARN : LOG_LEVEL_INFO,
		"shard %s taken: %zu placements read from etcd at revision %" PRId64 ", %zu "
		"of other hosts counted on its nodes, %zu on nodes this host lacks, %zu not "
		"counted (the placement table full)", name, rd.n, rev, added, unknown, full);
	free(counted);
	free(rd.pods);
	return full > 0 ? -ENOSPC : 0;
}

size_t etcd_sync_owned(struct etcd_sync *s, const shard_name_t *names, size_t n,
		       shard_name_t *ready)
{
	int64_t lease = lease_now(s);
	/* Out first: the shards released, or of an older lease. */
	struct commit_queue *closing[SHARD_MAX];
	size_t n_closing = 0;
	pthread_mutex_lock(&s->mu);
	for (size_t j = 0; j < s->n;) {
		if (s->shards[j].lease == lease && named(names, n, s->shards[j].name)) {
			j++;
			continue;
		}
		closing[n_closing++] = s->shards[j].q;
		s->shards[j] = s->shards[--s->n];
	}
	pthread_mutex_unlock(&s->mu);
	for (size_t i = 0; i < n_closing; i++)
		commit_queue_close(closing[i], 1000);
	if (lease == 0)
		return 0;
	for (size_t i = 0; i < n; i++) {
		pthread_mutex_lock(&s->mu);
		bool have = false;
		for (size_t j = 0; j < s->n && !have; j++)
			have = strcmp(s->shards[j].name, names[i]) == 0;
		pthread_mutex_unlock(&s->mu);
		if (have || s->n >= SHARD_MAX)
			continue;
		struct commit_queue_config cfg = {
			.endpoints = s->endpoints,
			.prefix = s->prefix,
			.shard_name = names[i],
			.lease = lease,
			.on_done = on_done,
			.ctx = s,
		};
		struct commit_queue *q;
		char err[256];
		int rc = commit_queue_open(&q, &cfg, err, sizeof(err));
		if (rc < 0) {
			/* Not ready: the gate keeps the shard closed; tried again
			 * on the next tick (the owned set is told every tick). */
			log_msg(LOG_LEVEL_WARN, "shard %s: its etcd committer: %s", names[i], err);
			continue;
		}
		/* The placements etcd holds counted before the gate opens the
		 * shard: once the owner key is ours no other host writes there.
		 * A failed read leaves the shard closed. */
		if (count_shard(s, names[i]) < 0) {
			commit_queue_close(q, 0);
			continue;
		}
		pthread_mutex_lock(&s->mu);
		struct shard_committer *sc = &s->shards[s->n++];
		memcpy(sc->name, names[i], sizeof(shard_name_t));
		sc->lease = lease;
		sc->q = q;
		pthread_mutex_unlock(&s->mu);
	}
	return ready_at(s, lease, names, n, ready);
}

__attribute__((format(printf, 5, 6)))
static int refuse(struct etcd_sync *s, int rc, char *why, size_t len, const char *fmt, ...)
{
	__atomic_fetch_add(&s->refused, 1, __ATOMIC_RELAXED);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
	return rc;
}

int etcd_sync_put(struct etcd_sync *s, unsigned w, uint32_t slot, uint32_t node_gen,
		  const struct pod_spec *pod, uint64_t id, char *why, size_t len)
{
	const struct snapshot *snap = cluster_snapshot(s->cluster);
	uint32_t v;
	if (slot >= snap->n_slots || !snap->present[slot] ||
	    !labels_get(snap->nodes[slot].labels, snap->nodes[slot].n_labels, s->key, &v))
		return refuse(s, -ENOENT, why, len,
			      "the pod's node is in no shard (its shard label is gone): "
			      "the placement is not committed to etcd");
	const char *shard = intern_str(s->strings, v);
	struct placement_value pv = {
		.node_generation = node_gen,
		.cpu_milli = pod->request.v[RES_CPU],
		.mem_bytes = pod->request.v[RES_MEMORY],
		.gpus = pod->num_gpu,
	};
	snprintf(pv.node, sizeof(pv.node), "%s", intern_str(s->strings, snap->nodes[slot].name));
	char uid[2 * UID_HALF + 1];
	snprintf(uid, sizeof(uid), "%016" PRIx64 "%016" PRIx64, s->host_hash, id);
	struct waiter *wt = &s->waiters[w];
	pthread_mutex_lock(&wt->mu);
	uint64_t seq = (wt->next + 1) & ((1ull << COOKIE_SEQ_BITS) - 1);
	wt->seq = wt->next = seq == 0 ? 1 : seq;
	wt->done = false;
	struct commit_record r = {
		.op = COMMIT_PUT,
		.uid = uid,
		.value = &pv,
		.cookie = (uint64_t)w << COOKIE_SEQ_BITS | wt->seq,
	};
	pthread_mutex_unlock(&wt->mu);
	struct timespec deadline;
	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += ETCD_SYNC_WAIT_MS / 1000;
	int rc;
	for (;;) {
		rc = -ESTALE;
		pthread_mutex_lock(&s->mu);
		for (size_t j = 0; j < s->n; j++)
			if (strcmp(s->shards[j].name, shard) == 0) {
				rc = commit_queue_push(s->shards[j].q, &r);
				break;
			}
		pthread_mutex_unlock(&s->mu);
		if (rc != -EAGAIN)
			break;
		/* Backpressure: a lane full, or its oldest record past the
		 * window; wait for room, never drop. */
		struct timespec now, pause = {0, 1000000};
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec > deadline.tv_sec ||
		    (now.tv_sec == deadline.tv_sec && now.tv_nsec >= deadline.tv_nsec))
			return refuse(s, -ETIMEDOUT, why, len,
				      "shard %s's etcd commit queue stayed full for %d ms: the "
				      "placement is not committed", shard, ETCD_SYNC_WAIT_MS);
		nanosleep(&pause, NULL);
	}
	if (rc == -ESTALE || rc == -ESHUTDOWN)
		return refuse(s, -ESTALE, why, len,
			      "shard %s lost its lease before the placement was committed", shard);
	if (rc < 0)
		return refuse(s, rc, why, len, "shard %s: the placement could not be queued for "
			      "etcd: %s", shard, strerror(-rc));
	pthread_mutex_lock(&wt->mu);
	int wrc = 0;
	while (!wt->done && wrc != ETIMEDOUT)
		wrc = pthread_cond_timedwait(&wt->done_cv, &wt->mu, &deadline);
	bool done = wt->done;
	rc = wt->rc;
	wt->seq = 0; /* a late completion matches nothing */
	pthread_mutex_unlock(&wt->mu);
	if (!done)
		return refuse(s, -ETIMEDOUT, why, len,
			      "shard %s: etcd did not answer the placement's commit within %d ms: "
			      "it is not kept", shard, ETCD_SYNC_WAIT_MS);
	if (rc == -ESTALE || rc == -ECANCELED)
		return refuse(s, -ESTALE, why, len,
			      "shard %s lost its lease before the placement was committed", shard);
	if (rc != 0)
		return refuse(s, rc, why, len, "shard %s: etcd refused the placement's commit: %s",
			      shard, strerror(-rc));
	__atomic_fetch_add(&s->committed, 1, __ATOMIC_RELAXED);
	return 0;
}

void etcd_sync_delete(struct etcd_sync *s, uint64_t id)
{
	const struct placement_record *r = placements_get(s->placements, id);
	/* A bound record (a cluster file's pod, or another host's placement
	 * counted on a take: its key is not known here) deletes nothing. */
	if (r == NULL || r->owner == PLACEMENT_OWNER_BOUND)
		return;
	const struct snapshot *snap = cluster_snapshot(s->cluster);
	uint32_t v;
	if (r->slot >= snap->n_slots || !snap->present[r->slot] ||
	    !labels_get(snap->nodes[r->slot].labels, snap->nodes[r->slot].n_labels, s->key, &v))
		return; /* its node gone */
	const char *shard = intern_str(s->strings, v);
	char name[2 * UID_HALF + 1];
	snprintf(name, sizeof(name), "%016" PRIx64 "%016" PRIx64, s->host_hash, id);
	/* No worker's: on_done drops its completion. */
	struct commit_record rec = {.op = COMMIT_DELETE,
				    .uid = name,
				    .cookie = (uint64_t)s->workers << COOKIE_SEQ_BITS};
	int rc = -EAGAIN;
	for (int tries = 0; rc == -EAGAIN && tries < ETCD_SYNC_DELETE_TRIES; tries++) {
		if (tries > 0) {
			struct timespec pause = {0, 1000000};
			nanosleep(&pause, NULL);
		}
		rc = -ESTALE; /* not owned now: the key stays */
		pthread_mutex_lock(&s->mu);
		for (size_t j = 0; j < s->n; j++)
			if (strcmp(s->shards[j].name, shard) == 0) {
				rc = commit_queue_push(s->shards[j].q, &rec);
				break;
			}
		pthread_mutex_unlock(&s->mu);
	}
	if (rc != 0)
		__atomic_fetch_add(&s->deletes_dropped, 1, __ATOMIC_RELAXED);
}

void etcd_sync_get_counts(struct etcd_sync *s, struct etcd_sync_counts *out)
{
	*out = (struct etcd_sync_counts){
		.committed = __atomic_load_n(&s->committed, __ATOMIC_RELAXED),
		.refused = __atomic_load_n(&s->refused, __ATOMIC_RELAXED),
		.counted = __atomic_load_n(&s->counted, __ATOMIC_RELAXED),
		.deletes_dropped = __atomic_load_n(&s->deletes_dropped, __ATOMIC_RELAXED),
	};
}
