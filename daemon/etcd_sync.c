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
 * an fsync: milliseconds), which is the cost that matters.
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
	bool done;
	int rc;
};

struct etcd_sync {
	char endpoints[1024];
	char prefix[COMMIT_PREFIX_MAX + 1];
	struct cluster *cluster;
	const struct intern *strings;
	uint32_t key;
	unsigned workers;
	struct membership *membership; /* ES1 */
	pthread_mutex_t mu;
	size_t n;
	struct shard_committer shards[SHARD_MAX];
	struct waiter *waiters; /* [workers] */
	uint64_t committed, refused; /* relaxed counters */
};

#define COOKIE_SEQ_BITS 40

struct etcd_sync *etcd_sync_create(const char *endpoints, const char *prefix,
				   struct cluster *c, const struct intern *strings,
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
	s->cluster = c;
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
	char uid[17];
	snprintf(uid, sizeof(uid), "%016" PRIx64, id);
	struct waiter *wt = &s->waiters[w];
	pthread_mutex_lock(&wt->mu);
	uint64_t seq = (wt->seq + 1) & ((1ull << COOKIE_SEQ_BITS) - 1);
	wt->seq = seq == 0 ? 1 : seq;
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

void etcd_sync_counts(struct etcd_sync *s, uint64_t *committed, uint64_t *refused)
{
	*committed = __atomic_load_n(&s->committed, __ATOMIC_RELAXED);
	*refused = __atomic_load_n(&s->refused, __ATOMIC_RELAXED);
}
