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
 * Deferred records (etcd_sync_defer): each worker has a table of
 * ETCD_SYNC_PENDING entries, its own (no lock: only its thread reads or
 * writes an entry), and a list of answered cookies under its waiter's
 * mutex, which the lane threads append to (on_done) and the worker
 * empties (etcd_sync_collect). A deferred cookie is (worker << 40 |
 * EP1 bit | serial << 12 | entry), so the list never holds more than the
 * table (one completion a record, commit_queue.h), and a completion is
 * matched to its entry by index and serial (an async record's cookie:
 * the next bit, serial << 14 | entry, no worker). The worker never gives up
 * on a deferred record: the committer answers every record it took,
 * its close included (commit_queue_close: -ECANCELED, -EIO), and the
 * daemon drains the table before it closes them (serve_drain).
 *
 * Async records (--etcd-durability async, etcd_sync_put returns at the
 * push): one table of ETCD_SYNC_ASYNC_MAX entries under async_mu (EP3),
 * an entry taken by the worker's put (only while the lost list has room
 * for it, so that list never overflows) and given back by its
 * completion on the lane's thread, which lists it lost when etcd did not
 * commit it; the membership thread takes the list (etcd_sync_take_lost)
 * and rolls those placements back (daemon.c, report_lost). The window is
 * the committer's (1 s, its capacity) and this table's.
 *
 * Cost per pod: a snapshot label lookup, the value's encoding, one push
 * (a lane's mutex), and where the worker blocks (etcd_sync_put in sync
 * mode) a wait of one etcd transaction (a raft round and an fsync:
 * milliseconds), which is the cost that matters; deferred, an entry of
 * the worker's table and its completion's list; async, an entry of the
 * async table (async_mu, twice). A release:
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
#include "daemon/pod_labels_internal.h"
#include "daemon/quota_charge_internal.h"
#include "ingest/ingest.h"

struct shard_committer {
	shard_name_t name;
	int64_t lease;
	struct commit_queue *q;
};

/* A deferred record's entry: its worker's alone. */
struct deferred {
	struct etcd_pending p;
	uint32_t serial; /* bumped at each use: a cookie's match */
	bool used;
	shard_name_t shard;
};

/* A deferred record's completion, as on_done appends it. */
struct answered {
	uint64_t cookie;
	int rc;
};

/* An async record's entry (under async_mu). */
struct async_entry {
	uint64_t id;
	uint32_t node;
	uint32_t serial;
	bool used;
	shard_name_t shard;
};

struct waiter {
	pthread_mutex_t mu;
	pthread_cond_t done_cv;
	uint64_t seq;  /* the record waited for (0: none) */
	uint64_t next; /* the last sequence handed out: never reused */
	bool done;
	int rc;
	/* Deferred records. The worker's own: */
	struct deferred *table; /* [ETCD_SYNC_PENDING] */
	uint32_t *free_ix;      /* [ETCD_SYNC_PENDING]: a stack of free entries */
	uint32_t n_free;
	size_t pending; /* entries used */
	/* Under mu (EP2: appended by lane threads, taken by the worker): */
	pthread_cond_t answered_cv;
	struct answered *answered; /* [ETCD_SYNC_PENDING] */
	size_t n_answered;
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
	struct producers *producers;   /* whose lock count_shard takes */
	struct quota_charge *quota;    /* NULL: no quotas (set before the threads) */
	pthread_mutex_t mu;
	size_t n;
	struct shard_committer shards[SHARD_MAX];
	struct waiter *waiters; /* [workers] */
	uint64_t committed, refused, counted, deletes_dropped; /* relaxed counters */
	/* --etcd-durability async: the records answered before their
	 * commits, in a table of ETCD_SYNC_ASYNC_MAX entries under async_mu
	 * (EP3: taken by a worker's put, given back by the lane's completion),
	 * and those etcd did not commit, until etcd_sync_take_lost. */
	bool async;
	pthread_mutex_t async_mu;
	struct async_entry *async_tab;
	uint32_t *async_free;
	uint32_t n_async_free;
	struct etcd_lost *lost; /* [ETCD_SYNC_ASYNC_MAX] */
	size_t n_lost;
	uint64_t lost_total; /* under async_mu */
	uint64_t labels_dropped; /* relaxed: placements written without labels */
	/* Relaxed tallies: placements written without their queue (a name
	 * out of the value's alphabet), and counted by a take without one
	 * (a queue or flavor this host's tree lacks; logged once). */
	uint64_t queue_dropped, queue_unknown;
	bool queue_unknown_logged; /* the membership thread's */
	uint64_t host_hash; /* the first half of this host's uids */
};

/* Transactions in flight a shard (the committer's lanes). */
#define ETCD_SYNC_LANES 4

#define COOKIE_SEQ_BITS 40
/* EP1: a deferred record's cookie has this bit, an async record's the
 * next; the blocking waits' sequences and the entries' serials and
 * indices stay below both. */
#define COOKIE_DEFERRED (1ull << (COOKIE_SEQ_BITS - 1))
#define COOKIE_ASYNC (1ull << (COOKIE_SEQ_BITS - 2))
#define COOKIE_WAIT_MASK (COOKIE_ASYNC - 1)
#define DEFER_IX_BITS 12
_Static_assert((1u << DEFER_IX_BITS) == ETCD_SYNC_PENDING, "a deferred entry's index bits");
#define DEFER_SERIAL_MASK ((1u << (COOKIE_SEQ_BITS - 2 - DEFER_IX_BITS)) - 1)
#define ASYNC_IX_BITS 14
_Static_assert((1u << ASYNC_IX_BITS) == ETCD_SYNC_ASYNC_MAX, "an async entry's index bits");
#define ASYNC_SERIAL_MASK ((1u << (COOKIE_SEQ_BITS - 2 - ASYNC_IX_BITS)) - 1)
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
				   uint32_t key, unsigned workers, bool async)
{
	struct etcd_sync *s = calloc(1, sizeof(*s));
	if (s == NULL)
		return NULL;
	pthread_mutex_init(&s->async_mu, NULL);
	s->async = async;
	if (async) {
		s->async_tab = calloc(ETCD_SYNC_ASYNC_MAX, sizeof(*s->async_tab));
		s->async_free = calloc(ETCD_SYNC_ASYNC_MAX, sizeof(*s->async_free));
		s->lost = calloc(ETCD_SYNC_ASYNC_MAX, sizeof(*s->lost));
		if (s->async_tab == NULL || s->async_free == NULL || s->lost == NULL) {
			free(s->async_tab);
			free(s->async_free);
			free(s->lost);
			free(s);
			return NULL;
		}
		for (uint32_t k = 0; k < ETCD_SYNC_ASYNC_MAX; k++)
			s->async_free[k] = ETCD_SYNC_ASYNC_MAX - 1 - k;
		s->n_async_free = ETCD_SYNC_ASYNC_MAX;
	}
	s->waiters = calloc(workers, sizeof(*s->waiters));
	if (s->waiters == NULL) {
		s->workers = 0;
		etcd_sync_destroy(s, 0);
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
		struct waiter *wt = &s->waiters[i];
		pthread_mutex_init(&wt->mu, NULL);
		pthread_cond_init(&wt->done_cv, &ca);
		pthread_cond_init(&wt->answered_cv, &ca);
		wt->table = calloc(ETCD_SYNC_PENDING, sizeof(*wt->table));
		wt->free_ix = calloc(ETCD_SYNC_PENDING, sizeof(*wt->free_ix));
		wt->answered = calloc(ETCD_SYNC_PENDING, sizeof(*wt->answered));
		if (wt->table == NULL || wt->free_ix == NULL || wt->answered == NULL) {
			pthread_condattr_destroy(&ca);
			s->workers = i + 1;
			etcd_sync_destroy(s, 0);
			return NULL;
		}
		for (uint32_t k = 0; k < ETCD_SYNC_PENDING; k++)
			wt->free_ix[k] = ETCD_SYNC_PENDING - 1 - k;
		wt->n_free = ETCD_SYNC_PENDING;
	}
	pthread_condattr_destroy(&ca);
	return s;
}

void etcd_sync_set_producers(struct etcd_sync *s, struct producers *p)
{
	s->producers = p; /* before the membership thread starts */
}

void etcd_sync_set_quota(struct etcd_sync *s, struct quota_charge *q)
{
	s->quota = q; /* before the membership thread and the workers start */
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
		struct waiter *wt = &s->waiters[i];
		pthread_mutex_destroy(&wt->mu);
		pthread_cond_destroy(&wt->done_cv);
		pthread_cond_destroy(&wt->answered_cv);
		free(wt->table);
		free(wt->free_ix);
		free(wt->answered);
	}
	pthread_mutex_destroy(&s->mu);
	pthread_mutex_destroy(&s->async_mu);
	if (s->reader != NULL)
		etcd_client_close(s->reader);
	free(s->waiters);
	free(s->async_tab);
	free(s->async_free);
	free(s->lost);
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

/* An async record's completion (EP3): its entry given back; one etcd
 * did not commit listed as lost (its pod was answered placed). */
static void async_done(struct etcd_sync *s, uint64_t cookie, int rc)
{
	uint32_t ix = (uint32_t)(cookie & (ETCD_SYNC_ASYNC_MAX - 1));
	uint32_t serial = (uint32_t)(cookie >> ASYNC_IX_BITS) & ASYNC_SERIAL_MASK;
	pthread_mutex_lock(&s->async_mu);
	struct async_entry *e = &s->async_tab[ix];
	if (e->used && e->serial == serial) {
		if (rc == 0) {
			__atomic_fetch_add(&s->committed, 1, __ATOMIC_RELAXED);
		} else {
			/* One entry a listed loss at most: the list has room. */
			struct etcd_lost *l = &s->lost[s->n_lost++];
			l->id = e->id;
			l->node = e->node;
			l->rc = rc;
			memcpy(l->shard, e->shard, sizeof(l->shard));
			s->lost_total++;
		}
		e->used = false;
		s->async_free[s->n_async_free++] = ix;
	}
	pthread_mutex_unlock(&s->async_mu);
}

/* A record's completion, on its lane's thread. */
static void on_done(void *ctx, uint64_t cookie, int rc, int64_t revision)
{
	(void)revision;
	struct etcd_sync *s = ctx;
	if ((cookie >> COOKIE_SEQ_BITS) == 0 && (cookie & COOKIE_ASYNC)) {
		async_done(s, cookie, rc);
		return;
	}
	unsigned w = (unsigned)(cookie >> COOKIE_SEQ_BITS);
	if (w >= s->workers)
		return;
	struct waiter *wt = &s->waiters[w];
	pthread_mutex_lock(&wt->mu);
	if (cookie & COOKIE_DEFERRED) {
		/* EP2: one completion a deferred record, so the list (the
		 * table's size) never overflows; the check is a guard. */
		if (wt->n_answered < ETCD_SYNC_PENDING)
			wt->answered[wt->n_answered++] = (struct answered){cookie, rc};
		pthread_cond_signal(&wt->answered_cv);
		pthread_mutex_unlock(&wt->mu);
		return;
	}
	if (wt->seq == (cookie & COOKIE_WAIT_MASK) && !wt->done) {
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
	int32_t charge; /* its queue and flavor: shard_read's charges[], or -1 */
	uint64_t host, id; /* the uid's halves (valid: 32 hex digits) */
	bool valid;
	uint64_t key_hash; /* the uid's hash, never 0: a counted record's cookie */
};

/* A version 3 value's ClusterQueue and flavor, by name: each distinct
 * pair once (a shard's placements name few). */
struct read_charge {
	char queue[PLACEMENT_CQ_MAX + 1];
	char flavor[PLACEMENT_FLAVOR_MAX + 1];
};

struct shard_read {
	struct read_pod *pods;
	size_t n, cap;
	struct read_charge *charges;
	size_t n_charges, cap_charges;
};

/* The index of (queue, flavor) in r->charges, added if new; -ENOMEM. */
static int32_t read_charge_of(struct shard_read *r, const struct placement_value *v)
{
	for (size_t i = 0; i < r->n_charges; i++)
		if (strcmp(r->charges[i].queue, v->queue) == 0 &&
		    strcmp(r->charges[i].flavor, v->flavor) == 0)
			return (int32_t)i;
	if (r->n_charges == r->cap_charges) {
		size_t cap = r->cap_charges ? 2 * r->cap_charges : 8;
		if (cap > INT32_MAX)
			return -E2BIG;
		struct read_charge *c = realloc(r->charges, cap * sizeof(*c));
		if (c == NULL)
			return -ENOMEM;
		r->charges = c;
		r->cap_charges = cap;
	}
	struct read_charge *c = &r->charges[r->n_charges];
	memcpy(c->queue, v->queue, sizeof(c->queue));
	memcpy(c->flavor, v->flavor, sizeof(c->flavor));
	return (int32_t)r->n_charges++;
}

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
	int32_t charge = -1;
	if (it->pod->queue[0] != '\0') {
		charge = read_charge_of(r, it->pod);
		if (charge < 0)
			return charge;
	}
	struct read_pod *p = &r->pods[r->n++];
	snprintf(p->node, sizeof(p->node), "%s", it->pod->node);
	p->cpu_milli = it->pod->cpu_milli;
	p->mem_bytes = it->pod->mem_bytes;
	p->charge = charge;
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
	struct shard_read *r = ctx;
	r->n = 0;
	r->n_charges = 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* A bound record already in the table, by its cookie (sorted first). */
struct counted_rec {
	uint64_t cookie;
	uint32_t index;
};

/* Whether read pod p is already in this host's table: one of its own
 * (this host's uid, its id live on the same node), or a bound record
 * whose cookie is its uid's hash (`counted`, sorted, n: counted by an
 * earlier take, or held by the shard watch), *bound then its entry. */
static bool already_here(struct etcd_sync *s, const struct read_pod *p, uint32_t slot,
			 const struct counted_rec *counted, size_t n,
			 const struct counted_rec **bound)
{
	*bound = NULL;
	if (p->valid && p->host == s->host_hash) {
		uint64_t id;
		const struct placement_record *r =
			placements_at(s->placements, (uint32_t)p->id, &id);
		if (r != NULL && id == p->id && r->owner != PLACEMENT_OWNER_BOUND &&
		    r->slot == slot)
			return true;
	}
	/* bsearch's array may not be NULL, even with n 0 (UBSan says so). */
	if (n != 0)
		*bound = bsearch(&p->key_hash, counted, n, sizeof(*counted), cmp_u64);
	return *bound != NULL;
}

/* count_shard's work on the placement table, under the producers' lock
 * (producers_locked): the control thread frees records there (a release)
 * and the shard watch makes bound records there too (shard_watch.c); a
 * walk of the table beside them raced (TSan, stress.etcd_sync_loss). */
struct count_work {
	struct etcd_sync *s;
	const struct shard_read *rd;
	size_t added, unknown, full, charged, borrowed, queue_unknown;
	const char *first_unknown; /* the first queue not charged: logged */
	int rc;
};

/* qc_enter's thread that is no worker: the free hook's gate (QA4 in
 * daemon/quota_charge.c). */
#define NOT_A_WORKER (~0u)

/* QV1: the quota tag of read pod p (0: none) with its charge made in this
 * host's tree, by its ClusterQueue's and flavor's names, inside the free
 * hook's gate (QA4: no qc_replace until the record is published, which
 * then carries the tag by name). Forced (qc_charge_counted): the
 * placement was admitted already, by its own host, and stays placed, as
 * qc_replace keeps admitted placements above a cut quota. A queue or
 * flavor this tree lacks, or a resource it does not cover: 0, counted.
 * QV3: the tag carries QC_TAG_BORROWED when the charge left its queue
 * past nominal quota in a resource it asks, as a local admission's does
 * (QA6 in daemon/quota_charge.c), so that the record goes to the borrowed
 * bucket of the reclaim index (RX1) and a lender's reclaim may evict it
 * (reclaim's NCY1 takes a pod of another queue only so marked). Judged
 * against this host's tree at the take, pod by pod in the order read:
 * before a dead host's slices are in force here (quota by escrow) the
 * nominal is smaller than it will be, so a pod may be marked borrowed
 * that the queue holds within nominal later; reclaim evicts it only
 * while its queue is past nominal at the choice (RCL4 in
 * quota/reclaim.c), as for a local pod whose queue's quota grew. */
static uint32_t charge_read(struct count_work *cw, const struct read_pod *p,
			    const struct res_vec *request)
{
	struct quota_charge *q = cw->s->quota;
	if (p->charge < 0 || q == NULL)
		return 0;
	const struct read_charge *c = &cw->rd->charges[p->charge];
	uint32_t tag = qc_charge_counted(q, c->queue, c->flavor, request);
	if (tag == 0) {
		if (cw->queue_unknown++ == 0)
			cw->first_unknown = c->queue;
		return 0;
	}
	cw->charged++;
	cw->borrowed += (tag & QC_TAG_BORROWED) != 0;
	return tag;
}

/* QV1 for read pod p that bound record `ix` holds already (the shard
 * watch made it while the shard was another host's, uncharged: that
 * host's quota then; or an earlier take did): charged now, its tag
 * written as qc_replace rewrites a published record's (relaxed, under
 * the free hook's gate, which qc_on_free reads it under; its other
 * readers, the evictor and a drain, run under the producers' lock, held
 * here). A record charged already is left as it is. */
static void charge_bound(struct count_work *cw, const struct read_pod *p, uint32_t ix)
{
	struct etcd_sync *s = cw->s;
	uint64_t id;
	const struct placement_record *r = placements_at(s->placements, ix, &id);
	if (p->charge < 0 || s->quota == NULL || r == NULL ||
	    __atomic_load_n(&r->quota, __ATOMIC_RELAXED) != 0)
		return;
	uint32_t tag = charge_read(cw, p, &r->request);
	if (tag == 0)
		return;
	placements_set_quota(s->placements, ix, tag);
	qc_placed(s->quota, ix, tag, r, id); /* RX1 */
}

static void count_locked(void *arg, struct intern *strings)
{
	(void)strings; /* read only here: s->strings */
	struct count_work *cw = arg;
	struct etcd_sync *s = cw->s;
	const struct shard_read *rd = cw->rd;
	/* The bound records counted by earlier takes, by their cookies. */
	uint32_t cap = placements_capacity(s->placements);
	struct counted_rec *counted = NULL;
	size_t n_counted = 0, cap_counted = 0;
	for (uint32_t i = 0; i < cap && rd->n > 0; i++) {
		uint64_t id;
		const struct placement_record *r = placements_at(s->placements, i, &id);
		if (r == NULL || r->owner != PLACEMENT_OWNER_BOUND || r->cookie == 0)
			continue;
		if (n_counted == cap_counted) {
			cap_counted = cap_counted ? 2 * cap_counted : 256;
			struct counted_rec *c = realloc(counted, cap_counted * sizeof(*c));
			if (c == NULL) {
				free(counted);
				cw->rc = -ENOMEM;
				return;
			}
			counted = c;
		}
		counted[n_counted++] = (struct counted_rec){r->cookie, i};
	}
	if (n_counted > 0)
		qsort(counted, n_counted, sizeof(*counted), cmp_u64);
	struct ledger *l = cluster_ledger(s->cluster);
	if (s->quota != NULL)
		qc_enter(s->quota, NOT_A_WORKER); /* QV1: the hook's gate */
	rcu_register();
	for (size_t i = 0; i < rd->n; i++) {
		const struct read_pod *p = &rd->pods[i];
		uint32_t nid;
		int64_t slot = -1;
		if (intern_find(s->strings, p->node, strlen(p->node), &nid))
			slot = cluster_slot_of(s->cluster, nid);
		if (slot < 0) {
			cw->unknown++; /* a node this host does not have: nothing to count on */
			continue;
		}
		const struct counted_rec *bound;
		if (already_here(s, p, (uint32_t)slot, counted, n_counted, &bound)) {
			if (bound != NULL)
				charge_bound(cw, p, bound->index);
			continue;
		}
		struct pod_spec pod = {0};
		pod.request.v[RES_CPU] = p->cpu_milli;
		pod.request.v[RES_MEMORY] = p->mem_bytes;
		pod.nonzero_cpu_milli = p->cpu_milli;
		pod.nonzero_mem_bytes = p->mem_bytes;
		int64_t ix = placements_take(s->placements);
		if (ix < 0 || ledger_account(l, (uint32_t)slot, &pod, NULL, +1) < 0) {
			if (ix >= 0)
				placements_untake(s->placements, (uint32_t)ix);
			cw->full++;
			continue;
		}
		uint64_t id;
		const struct placement_record *made = placements_prepare(
			s->placements, (uint32_t)ix, (uint32_t)slot,
			ledger_node_generation(l, (uint32_t)slot), &pod, NULL, p->key_hash, &id);
		uint32_t tag = charge_read(cw, p, &pod.request);
		if (tag != 0) { /* QA2, RX1: before the publish */
			placements_set_quota(s->placements, (uint32_t)ix, tag);
			qc_placed(s->quota, (uint32_t)ix, tag, made, id);
		}
		placements_publish(s->placements, (uint32_t)ix, PLACEMENT_OWNER_BOUND);
		cw->added++;
	}
	rcu_unregister();
	if (s->quota != NULL)
		qc_leave(s->quota, NOT_A_WORKER);
	free(counted);
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
		free(rd.charges);
		return rc < 0 ? rc : -EIO;
	}
	struct count_work cw = {.s = s, .rd = &rd};
	if (s->producers != NULL)
		producers_locked(s->producers, count_locked, &cw);
	else
		count_locked(&cw, NULL); /* no producers: nothing else writes */
	if (cw.rc < 0) {
		free(rd.pods);
		free(rd.charges);
		return cw.rc;
	}
	size_t added = cw.added, unknown = cw.unknown, full = cw.full;
	__atomic_fetch_add(&s->counted, added, __ATOMIC_RELAXED);
	__atomic_fetch_add(&s->queue_unknown, cw.queue_unknown, __ATOMIC_RELAXED);
	log_msg(full > 0 ? LOG_LEVEL_WARN : LOG_LEVEL_INFO,
		"shard %s taken: %zu placements read from etcd at revision %" PRId64 ", %zu "
		"of other hosts counted on its nodes (%zu charged to their ClusterQueues, "
		"%zu of them past nominal: borrowed), %zu on nodes this host lacks, %zu not "
		"counted (the placement table full)",
		name, rd.n, rev, added, cw.charged, cw.borrowed, unknown, full);
	if (cw.queue_unknown > 0 && !s->queue_unknown_logged) {
		/* Once a daemon: the metric counts every one. */
		s->queue_unknown_logged = true;
		log_msg(LOG_LEVEL_WARN, "shard %s taken: %zu placement(s) counted on their "
			"nodes but charged to no ClusterQueue: ClusterQueue \"%.253s\" (or its "
			"flavor, or a resource it holds) is not in this host's quotas "
			"(shmsched_etcd_placements_total{result=\"queue_unknown\"} counts "
			"them; logged once)", name, cw.queue_unknown, cw.first_unknown);
	}
	free(rd.pods);
	free(rd.charges);
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
			/* Full transactions (etcd's 128 operations): the
			 * committer's best pods/s on two cores
			 * (docs/perf/2026-11-29-etcd-commit.md). */
			.in_flight = ETCD_SYNC_LANES,
			.batch = COMMIT_MAX_BATCH,
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

/* The shard of node `slot` (inside the caller's read-side section: the
 * snapshot's label), or NULL when it has none. */
static const char *shard_of(struct etcd_sync *s, uint32_t slot)
{
	const struct snapshot *snap = cluster_snapshot(s->cluster);
	uint32_t v;
	if (slot >= snap->n_slots || !snap->present[slot] ||
	    !labels_get(snap->nodes[slot].labels, snap->nodes[slot].n_labels, s->key, &v))
		return NULL;
	return intern_str(s->strings, v);
}

/* QV2: the ClusterQueue and flavor of quota tag `quota` (not 0) in pv,
 * as version 3, by their names in the tree in force (the worker is inside
 * its gate: QA4). A name out of the value's alphabet leaves pv without
 * a queue (counted: queue_dropped); Kueue's names are DNS subdomains. */
static void queue_to_value(struct etcd_sync *s, uint32_t quota, struct placement_value *pv)
{
	const struct quota_tree *t = qc_tree(s->quota);
	int cq, flavor;
	qc_untag(quota, &cq, &flavor);
	const char *qn = quota_node_name(t, cq), *fn = quota_flavor_name(t, flavor);
	size_t ql = strlen(qn), fl = strlen(fn);
	struct placement_value v3 = *pv;
	v3.version = 3;
	if (ql <= PLACEMENT_CQ_MAX && fl <= PLACEMENT_FLAVOR_MAX) {
		memcpy(v3.queue, qn, ql + 1);
		memcpy(v3.flavor, fn, fl + 1);
		char text[PLACEMENT_VALUE_MAX + 1];
		if (placement_value_encode(&v3, text) >= 0) {
			*pv = v3;
			return;
		}
	}
	__atomic_fetch_add(&s->queue_dropped, 1, __ATOMIC_RELAXED);
}

/* Placement `id`'s value and uid (uid: 2 * UID_HALF + 1 bytes); `quota`
 * its quota tag (0: none). */
static void record_of(struct etcd_sync *s, uint32_t slot, uint32_t node_gen,
		      const struct pod_spec *pod, uint64_t id, uint32_t quota,
		      struct placement_value *pv, char *uid)
{
	const struct snapshot *snap = cluster_snapshot(s->cluster);
	*pv = (struct placement_value){
		.node_generation = node_gen,
		.cpu_milli = pod->request.v[RES_CPU],
		.mem_bytes = pod->request.v[RES_MEMORY],
		.gpus = pod->num_gpu,
	};
	snprintf(pv->node, sizeof(pv->node), "%s", intern_str(s->strings, snap->nodes[slot].name));
	/* Version 2: the pod's namespace and labels, for other hosts'
	 * inter-pod rules (daemon/shard_watch.c); labels past the value's
	 * bound go as version 1, counted without labels there. */
	if (pod_labels_to_value(s->strings, pod->group, pv) < 0)
		__atomic_fetch_add(&s->labels_dropped, 1, __ATOMIC_RELAXED);
	if (quota != 0 && s->quota != NULL)
		queue_to_value(s, quota, pv);
	snprintf(uid, 2 * UID_HALF + 1, "%016" PRIx64 "%016" PRIx64, s->host_hash, id);
}

/* One push into `shard`'s committer: commit_queue_push's answer, or
 * -ESTALE when this host does not own the shard now. */
static int push_to(struct etcd_sync *s, const char *shard, const struct commit_record *r)
{
	int rc = -ESTALE;
	pthread_mutex_lock(&s->mu);
	for (size_t j = 0; j < s->n; j++)
		if (strcmp(s->shards[j].name, shard) == 0) {
			rc = commit_queue_push(s->shards[j].q, r);
			break;
		}
	pthread_mutex_unlock(&s->mu);
	return rc;
}

/* A push refused other than -EAGAIN, in words. */
static int refuse_push(struct etcd_sync *s, int rc, const char *shard, char *why, size_t len)
{
	if (rc == -ESTALE || rc == -ESHUTDOWN)
		return refuse(s, -ESTALE, why, len,
			      "shard %s lost its lease before the placement was committed", shard);
	return refuse(s, rc, why, len, "shard %s: the placement could not be queued for "
		      "etcd: %s", shard, strerror(-rc));
}

/* A record's completion `rc` (on_done's), counted and in words: 0
 * committed; else the refusal. */
static int settle(struct etcd_sync *s, int rc, const char *shard, char *why, size_t len)
{
	if (rc == -ESTALE || rc == -ECANCELED)
		return refuse(s, -ESTALE, why, len,
			      "shard %s lost its lease before the placement was committed", shard);
	if (rc != 0)
		return refuse(s, rc, why, len, "shard %s: etcd refused the placement's commit: %s",
			      shard, strerror(-rc));
	__atomic_fetch_add(&s->committed, 1, __ATOMIC_RELAXED);
	return 0;
}

#define NO_SHARD_WHY \
	"the pod's node is in no shard (its shard label is gone): the placement is not " \
	"committed to etcd"

/* Backpressure on a full table or queue: false after a pause of 1 ms
 * (try again), true once `deadline` has passed (refused, counted, why
 * written). */
static bool full_past(struct etcd_sync *s, const struct timespec *deadline, const char *shard,
		      char *why, size_t len)
{
	struct timespec now, pause = {0, 1000000};
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (now.tv_sec > deadline->tv_sec ||
	    (now.tv_sec == deadline->tv_sec && now.tv_nsec >= deadline->tv_nsec)) {
		refuse(s, -ETIMEDOUT, why, len,
		       "shard %s's etcd commit queue stayed full for %d ms: the placement is not "
		       "committed", shard, ETCD_SYNC_WAIT_MS);
		return true;
	}
	nanosleep(&pause, NULL);
	return false;
}

/* etcd_sync_put in async mode: the record pushed into an entry of the
 * async table, not waited for. A full table or queue is waited out
 * (backpressure, never dropped), for ETCD_SYNC_WAIT_MS at most. */
static int put_async(struct etcd_sync *s, const char *shard, uint32_t slot,
		     const struct placement_value *pv, const char *uid, uint64_t id, char *why,
		     size_t len)
{
	struct timespec deadline;
	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += ETCD_SYNC_WAIT_MS / 1000;
	int rc;
	for (;;) {
		rc = -EAGAIN;
		pthread_mutex_lock(&s->async_mu);
		/* The lost list is drained by the membership thread: an entry
		 * is taken only while its loss, if it comes, has room. */
		bool room = s->n_async_free > 0 && s->n_lost + (ETCD_SYNC_ASYNC_MAX -
					s->n_async_free) < ETCD_SYNC_ASYNC_MAX;
		uint32_t ix = 0, serial = 0;
		if (room) {
			ix = s->async_free[--s->n_async_free];
			struct async_entry *e = &s->async_tab[ix];
			e->serial = serial = (e->serial + 1) & ASYNC_SERIAL_MASK;
			e->id = id;
			e->node = slot;
			e->used = true;
			snprintf(e->shard, sizeof(e->shard), "%s", shard);
		}
		pthread_mutex_unlock(&s->async_mu);
		if (room) {
			struct commit_record r = {
				.op = COMMIT_PUT,
				.uid = uid,
				.value = pv,
				.cookie = COOKIE_ASYNC | (uint64_t)serial << ASYNC_IX_BITS | ix,
			};
			rc = push_to(s, shard, &r);
			if (rc < 0) {
				pthread_mutex_lock(&s->async_mu);
				s->async_tab[ix].used = false;
				s->async_free[s->n_async_free++] = ix;
				pthread_mutex_unlock(&s->async_mu);
			}
		}
		if (rc != -EAGAIN)
			break;
		if (full_past(s, &deadline, shard, why, len))
			return -ETIMEDOUT;
	}
	return rc < 0 ? refuse_push(s, rc, shard, why, len) : 0;
}

int etcd_sync_put(struct etcd_sync *s, unsigned w, uint32_t slot, uint32_t node_gen,
		  const struct pod_spec *pod, uint64_t id, uint32_t quota, char *why, size_t len)
{
	const char *shard = shard_of(s, slot);
	if (shard == NULL)
		return refuse(s, -ENOENT, why, len, NO_SHARD_WHY);
	struct placement_value pv;
	char uid[2 * UID_HALF + 1];
	record_of(s, slot, node_gen, pod, id, quota, &pv, uid);
	if (s->async)
		return put_async(s, shard, slot, &pv, uid, id, why, len);
	struct waiter *wt = &s->waiters[w];
	pthread_mutex_lock(&wt->mu);
	uint64_t seq = (wt->next + 1) & COOKIE_WAIT_MASK;
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
		rc = push_to(s, shard, &r);
		if (rc != -EAGAIN)
			break;
		/* Backpressure: a lane full, or its oldest record past the
		 * window; wait for room, never drop. */
		if (full_past(s, &deadline, shard, why, len))
			return -ETIMEDOUT;
	}
	if (rc < 0)
		return refuse_push(s, rc, shard, why, len);
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
	return settle(s, rc, shard, why, len);
}

bool etcd_sync_async(const struct etcd_sync *s)
{
	return s->async;
}

uint64_t etcd_sync_host_hash(const struct etcd_sync *s)
{
	return s->host_hash;
}

size_t etcd_sync_take_lost(struct etcd_sync *s, struct etcd_lost *out, size_t max)
{
	size_t k = 0;
	pthread_mutex_lock(&s->async_mu);
	while (k < max && s->n_lost > 0)
		out[k++] = s->lost[--s->n_lost];
	pthread_mutex_unlock(&s->async_mu);
	return k;
}

int etcd_sync_defer(struct etcd_sync *s, unsigned w, uint32_t slot, uint32_t node_gen,
		    const struct pod_spec *pod, uint64_t id, const struct etcd_pending *p,
		    char *why, size_t len)
{
	const char *shard = shard_of(s, slot);
	if (shard == NULL)
		return refuse(s, -ENOENT, why, len, NO_SHARD_WHY);
	struct waiter *wt = &s->waiters[w];
	if (wt->n_free == 0)
		return -EAGAIN;
	struct placement_value pv;
	char uid[2 * UID_HALF + 1];
	record_of(s, slot, node_gen, pod, id, 0, &pv, uid); /* never under quota */
	/* The entry is whole before the push: a completion may come before
	 * push returns (it only lists the cookie: the entry is read by this
	 * thread alone, in etcd_sync_collect). */
	uint32_t ix = wt->free_ix[--wt->n_free];
	struct deferred *d = &wt->table[ix];
	d->serial = (d->serial + 1) & DEFER_SERIAL_MASK;
	d->p = *p;
	d->used = true;
	snprintf(d->shard, sizeof(d->shard), "%s", shard);
	struct commit_record r = {
		.op = COMMIT_PUT,
		.uid = uid,
		.value = &pv,
		.cookie = (uint64_t)w << COOKIE_SEQ_BITS | COOKIE_DEFERRED |
			  (uint64_t)d->serial << DEFER_IX_BITS | ix,
	};
	int rc = push_to(s, shard, &r);
	if (rc < 0) {
		d->used = false;
		wt->free_ix[wt->n_free++] = ix;
		return rc == -EAGAIN ? -EAGAIN : refuse_push(s, rc, shard, why, len);
	}
	wt->pending++;
	return 0;
}

size_t etcd_sync_collect(struct etcd_sync *s, unsigned w, struct etcd_done *out, size_t max,
			 int64_t wait_ns)
{
	struct waiter *wt = &s->waiters[w];
	if (wt->pending == 0 || max == 0)
		return 0;
	struct answered got[64];
	if (max > sizeof(got) / sizeof(got[0]))
		max = sizeof(got) / sizeof(got[0]);
	pthread_mutex_lock(&wt->mu);
	if (wt->n_answered == 0 && wait_ns > 0) {
		struct timespec deadline;
		clock_gettime(CLOCK_MONOTONIC, &deadline);
		deadline.tv_sec += wait_ns / 1000000000;
		deadline.tv_nsec += wait_ns % 1000000000;
		if (deadline.tv_nsec >= 1000000000) {
			deadline.tv_sec++;
			deadline.tv_nsec -= 1000000000;
		}
		int wrc = 0;
		while (wt->n_answered == 0 && wrc != ETIMEDOUT)
			wrc = pthread_cond_timedwait(&wt->answered_cv, &wt->mu, &deadline);
	}
	/* EP2: the newest first (the order of answers is not kept: each is
	 * its own pod's). */
	size_t k = 0;
	while (k < max && wt->n_answered > 0)
		got[k++] = wt->answered[--wt->n_answered];
	pthread_mutex_unlock(&wt->mu);
	size_t n = 0;
	for (size_t i = 0; i < k; i++) {
		uint32_t ix = (uint32_t)(got[i].cookie & (ETCD_SYNC_PENDING - 1));
		uint32_t serial = (uint32_t)(got[i].cookie >> DEFER_IX_BITS) & DEFER_SERIAL_MASK;
		struct deferred *d = &wt->table[ix];
		if (!d->used || d->serial != serial)
			continue; /* impossible: one completion a record */
		out[n].p = d->p;
		out[n].rc = settle(s, got[i].rc, d->shard, out[n].why, sizeof(out[n].why));
		n++;
		d->used = false;
		wt->free_ix[wt->n_free++] = ix;
		wt->pending--;
	}
	return n;
}

size_t etcd_sync_pending(const struct etcd_sync *s, unsigned w)
{
	return s->waiters[w].pending;
}

void etcd_sync_delete(struct etcd_sync *s, uint64_t id)
{
	const struct placement_record *r = placements_get(s->placements, id);
	/* A bound record (a cluster file's pod, or another host's placement
	 * counted on a take: its key is not known here) deletes nothing. */
	if (r == NULL || r->owner == PLACEMENT_OWNER_BOUND)
		return;
	const char *shard = shard_of(s, r->slot);
	if (shard == NULL)
		return; /* its node gone */
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
		rc = push_to(s, shard, &rec); /* -ESTALE not owned now: the key stays */
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
		.labels_dropped = __atomic_load_n(&s->labels_dropped, __ATOMIC_RELAXED),
		.queue_dropped = __atomic_load_n(&s->queue_dropped, __ATOMIC_RELAXED),
		.queue_unknown = __atomic_load_n(&s->queue_unknown, __ATOMIC_RELAXED),
	};
	pthread_mutex_lock(&s->async_mu);
	out->lost = s->lost_total;
	pthread_mutex_unlock(&s->async_mu);
}

void etcd_sync_lag(struct etcd_sync *s, int64_t *records, int64_t *oldest_ms)
{
	int64_t n = 0, oldest = 0;
	/* Under mu: a committer is closed only after it left the table. */
	pthread_mutex_lock(&s->mu);
	for (size_t j = 0; j < s->n; j++) {
		size_t r;
		long o;
		commit_queue_window(s->shards[j].q, &r, &o);
		n += (int64_t)r;
		if (o > oldest)
			oldest = o;
	}
	pthread_mutex_unlock(&s->mu);
	*records = n;
	*oldest_ms = oldest;
}
