/* The fenced, pipelined committer (coord/commit_queue.h).
 *
 * Each lane: a ring of fixed-size slots under a short mutex (push copies
 * one slot in; the lane's thread copies up to a batch out), a condition
 * variable for the thread to wait on, and its own etcd client. The lane's
 * thread takes a batch (stopping early at a uid already in it: etcd
 * refuses a transaction that writes one key twice), sends
 *   compare: LEASE(owner) == lease, VERSION(lane key) == committed
 *   success: the records' puts and deletes, put lane key
 *   failure: range owner, range lane key
 * and settles it: succeeded, committed; not, and the lane key one version
 * ahead: an earlier send of this batch landed, committed; not, and the
 * owner key gone or on another lease: fenced (EC1), -ESTALE for it and all
 * after. No answer: the same transaction again after a back-off, until an
 * answer comes or the close's deadline passes.
 *
 * Invariants: a record is in exactly one place (its lane's ring, the
 * lane's batch, or answered); a lane has at most one transaction in
 * flight, so its records commit in push order; nothing is sent once
 * fenced. Cost a record: one slot copy in, one out (the bytes in use, not
 * the slot's 3 KB), its key's and value's base64 and JSON
 * (coord/etcd_codec.c), and 1/batch of a round trip. */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "coord/commit_queue.h"
#include "coord/shard_map.h"
#include "coord/etcd_client.h"
#include "coord/value_text.h"

struct slot {
	uint64_t cookie;
	int64_t enq_ns;
	uint8_t op;
	uint8_t uid_len;
	uint16_t value_len;
	char uid[COMMIT_UID_MAX + 1];
	char value[PLACEMENT_VALUE_MAX + 1];
};

/* A slot's bytes in use: its head, uid and value with the value's NUL.
 * A copy of a slot copies these alone: the value's room (PLACEMENT_VALUE_MAX,
 * 2,961 bytes) is rarely more than a few dozen used, and each record was
 * copied whole twice (into the ring, into the batch). */
static size_t slot_used(const struct slot *s)
{
	return offsetof(struct slot, value) + s->value_len + 1;
}

static void slot_copy(struct slot *to, const struct slot *from)
{
	memcpy(to, from, slot_used(from));
}

struct lane {
	struct commit_queue *q;
	unsigned index;
	pthread_t thread;
	bool started;
	struct etcd_client *client;

	pthread_mutex_t mu;
	pthread_cond_t wake; /* the thread: records, or closing */
	pthread_cond_t idle; /* flush: the lane answered a batch */
	struct slot *ring;
	size_t cap, head, count;
	/* Records taken into the batch and not yet answered, the oldest's
	 * push time (0 when none): the window; and when the batch was taken:
	 * the transaction's age, which the window's rule holds. Under mu. */
	size_t inflight;
	int64_t inflight_oldest_ns, inflight_taken_ns;
	/* Answered records, under mu: flush waits for it to reach a mark. */
	uint64_t answered, pushed;

	/* The lane thread's own. */
	struct slot batch[COMMIT_MAX_BATCH];
	size_t n_batch;
	int64_t committed; /* the lane key's version */
	bool version_known;
	char lane_key[COMMIT_PREFIX_MAX + 160];
};

struct commit_queue {
	struct commit_queue_config cfg;
	char owner_key[COMMIT_PREFIX_MAX + 128];
	char shard[64]; /* its name in the keys */
	char pod_prefix[COMMIT_PREFIX_MAX + 128];
	size_t pod_prefix_len;
	struct lane lanes[COMMIT_MAX_IN_FLIGHT];
	unsigned n_lanes;
	/* EC1: set once (release) by the lane that finds the owner key gone;
	 * read (acquire) by push and every lane before it sends: a lane that
	 * sees it sends nothing more. etcd itself refuses any batch sent
	 * before the flag is seen (its compare fails the same way). */
	atomic_bool fenced;
	/* EC2: set (release) by close under each lane's mutex; read by push
	 * (acquire) and by lanes under their mutex. */
	atomic_bool closing;
	/* EC3: the close's deadline in ns (0: none yet), written by close
	 * before it sets closing (EC2 orders it); read by lanes retrying. */
	_Atomic int64_t drain_deadline_ns;
	/* EC4: counters, relaxed: statistics, read by commit_queue_stats
	 * only (no decision depends on them). */
	_Atomic uint64_t committed, stale, failed, txns, retries, landed_twice;
	pthread_mutex_t err_mu;
	char error[512];
};

static int64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t now_ns(const struct commit_queue *q)
{
	return q->cfg.now_ns ? q->cfg.now_ns(q->cfg.clock_ctx) : mono_ns();
}

static void set_error(struct commit_queue *q, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void set_error(struct commit_queue *q, const char *fmt, ...)
{
	va_list ap;
	pthread_mutex_lock(&q->err_mu);
	va_start(ap, fmt);
	vsnprintf(q->error, sizeof(q->error), fmt, ap);
	va_end(ap);
	pthread_mutex_unlock(&q->err_mu);
}

int commit_owner_key(const char *prefix, uint32_t shard, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%sshards/%" PRIu32 "/owner", prefix, shard);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : n;
}

int commit_pod_key(const char *prefix, uint32_t shard, const char *uid, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%sshards/%" PRIu32 "/pods/%s", prefix, shard, uid);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : n;
}

static bool uid_ok(const char *uid, size_t *len)
{
	size_t n = uid ? strnlen(uid, COMMIT_UID_MAX + 1) : 0;
	if (!value_text_name(uid, n, 1, COMMIT_UID_MAX))
		return false;
	*len = n;
	return true;
}

/* FNV-1a: a pod's lane. */
static unsigned lane_of(const char *uid, size_t n, unsigned lanes)
{
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)uid[i]) * 16777619u;
	return h % lanes;
}

int commit_queue_push(struct commit_queue *q, const struct commit_record *r)
{
	size_t uid_len;
	if (!uid_ok(r->uid, &uid_len) || (r->op != COMMIT_PUT && r->op != COMMIT_DELETE) ||
	    (r->op == COMMIT_PUT && !r->value))
		return -EINVAL;
	struct slot s;
	s.cookie = r->cookie;
	s.op = (uint8_t)r->op;
	s.uid_len = (uint8_t)uid_len;
	memcpy(s.uid, r->uid, uid_len);
	s.uid[uid_len] = '\0';
	s.value_len = 0;
	s.value[0] = '\0';
	if (r->op == COMMIT_PUT) {
		int n = placement_value_encode(r->value, s.value);
		if (n < 0)
			return -EINVAL;
		s.value_len = (uint16_t)n;
	}
	if (atomic_load_explicit(&q->fenced, memory_order_acquire)) /* EC1 */
		return -ESTALE;
	struct lane *l = &q->lanes[lane_of(s.uid, uid_len, q->n_lanes)];
	int64_t now = now_ns(q);
	int rc = 0;
	pthread_mutex_lock(&l->mu);
	/* The window's rule: a transaction unanswered for max_window_ms (a
	 * stalled etcd) refuses. Not the oldest record's age: under a load
	 * etcd keeps up with only slowly, that stays past the window until
	 * the whole ring has drained (seconds), refusing every push all the
	 * while; the ring's bound paces such a load a batch at a time. */
	int64_t taken = l->inflight ? l->inflight_taken_ns : 0;
	if (atomic_load_explicit(&q->closing, memory_order_acquire)) /* EC2 */
		rc = -ESHUTDOWN;
	else if (l->count == l->cap ||
		 (taken && now - taken > (int64_t)q->cfg.max_window_ms * 1000000))
		rc = -EAGAIN;
	else {
		s.enq_ns = now;
		slot_copy(&l->ring[(l->head + l->count) % l->cap], &s);
		l->count++;
		l->pushed++;
		if (l->count == 1)
			pthread_cond_signal(&l->wake);
	}
	pthread_mutex_unlock(&l->mu);
	return rc;
}

/* Answers the lane's batch with rc and empties it. */
static void answer_batch(struct lane *l, int rc, int64_t revision)
{
	struct commit_queue *q = l->q;
	for (size_t i = 0; i < l->n_batch; i++)
		q->cfg.on_done(q->cfg.ctx, l->batch[i].cookie, rc, revision);
	_Atomic uint64_t *counter = rc == 0 ? &q->committed : rc == -ESTALE ? &q->stale : &q->failed;
	atomic_fetch_add_explicit(counter, l->n_batch, memory_order_relaxed); /* EC4 */
	pthread_mutex_lock(&l->mu);
	l->answered += l->n_batch;
	l->inflight = 0;
	l->inflight_oldest_ns = 0;
	pthread_cond_broadcast(&l->idle);
	pthread_mutex_unlock(&l->mu);
	l->n_batch = 0;
}

/* Takes up to a batch from the ring, under mu; stops at a uid already in
 * the batch (it waits for the next one, keeping its order). */
static void take_batch(struct lane *l)
{
	size_t max = l->q->cfg.batch;
	l->n_batch = 0;
	while (l->count > 0 && l->n_batch < max) {
		const struct slot *s = &l->ring[l->head];
		bool dup = false;
		for (size_t i = 0; i < l->n_batch && !dup; i++)
			dup = l->batch[i].uid_len == s->uid_len &&
			      memcmp(l->batch[i].uid, s->uid, s->uid_len) == 0;
		if (dup)
			break;
		slot_copy(&l->batch[l->n_batch++], s);
		l->head = (l->head + 1) % l->cap;
		l->count--;
	}
	l->inflight = l->n_batch;
	l->inflight_oldest_ns = l->n_batch ? l->batch[0].enq_ns : 0;
	l->inflight_taken_ns = now_ns(l->q);
}

/* Waits up to ms, or until closing. */
static void backoff(struct lane *l, long ms)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (ms % 1000) * 1000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&l->mu);
	if (!atomic_load_explicit(&l->q->closing, memory_order_acquire)) /* EC2 */
		pthread_cond_timedwait(&l->wake, &l->mu, &ts);
	pthread_mutex_unlock(&l->mu);
}

/* Past the close's deadline: a lane stops retrying. */
static bool drained_out(const struct commit_queue *q)
{
	int64_t d = atomic_load_explicit(&q->drain_deadline_ns, memory_order_relaxed); /* EC3 */
	return atomic_load_explicit(&q->closing, memory_order_acquire) && /* EC2 */
	       d != 0 && mono_ns() > d;
}

/* Errors after which etcd surely applied nothing: the batch fails. The
 * rest (no answer, no leader, a garbled answer) leave the outcome unknown:
 * sent again. */
static bool refused(int rc)
{
	return rc == -EINVAL || rc == -E2BIG || rc == -ENOSPC || rc == -EACCES || rc == -ENOMEM;
}

/* Reads the lane key's version (how many batches the lane committed under
 * this lease before: 0 for a new lane). */
static int read_version(struct lane *l)
{
	struct etcd_range_result r;
	int rc = etcd_range(l->client, l->lane_key, strlen(l->lane_key), NULL, 0, 0, &r);
	if (rc == 0) {
		l->committed = r.n_kvs ? r.kvs[0].version : 0;
		l->version_known = true;
		etcd_range_result_free(&r);
	}
	return rc;
}

/* Sends the batch until its outcome is known; answers it. */
static void commit_batch(struct lane *l)
{
	struct commit_queue *q = l->q;
	char arena[COMMIT_MAX_BATCH][COMMIT_PREFIX_MAX + 96];
	struct etcd_op ops[COMMIT_MAX_BATCH + 1];
	size_t n = l->n_batch;
	for (size_t i = 0; i < n; i++) {
		const struct slot *s = &l->batch[i];
		int kl = snprintf(arena[i], sizeof(arena[i]), "%.*s%s", (int)q->pod_prefix_len,
				  q->pod_prefix, s->uid);
		ops[i] = (struct etcd_op){
			.kind = s->op == COMMIT_PUT ? ETCD_OP_PUT : ETCD_OP_DELETE,
			.key = arena[i],
			.key_len = (size_t)kl,
			.value = s->op == COMMIT_PUT ? s->value : NULL,
			.value_len = s->value_len,
		};
	}
	long wait_ms = 20;
	for (unsigned attempt = 0;; attempt++) {
		if (atomic_load_explicit(&q->fenced, memory_order_acquire)) { /* EC1 */
			/* Only a batch never sent: one sent may have landed
			 * before the fence fell, and is settled below. */
			if (attempt == 0) {
				answer_batch(l, -ESTALE, 0);
				return;
			}
		}
		if (attempt > 0 && drained_out(q)) {
			/* A send was made whose outcome is unknown. */
			answer_batch(l, -EIO, 0);
			return;
		}
		if (attempt > 0) {
			backoff(l, wait_ms);
			wait_ms = wait_ms * 2 > 1000 ? 1000 : wait_ms * 2;
		}
		if (!l->version_known) {
			int rc = read_version(l);
			if (rc != 0) {
				set_error(q, "commit queue lane %u: reading %s: %s", l->index,
					  l->lane_key, etcd_client_error(l->client));
				if (refused(rc)) {
					answer_batch(l, rc, 0);
					return;
				}
				/* Nothing was sent: the batch is still unsent. */
				if (drained_out(q)) {
					answer_batch(l, -ECANCELED, 0);
					return;
				}
				backoff(l, wait_ms);
				wait_ms = wait_ms * 2 > 1000 ? 1000 : wait_ms * 2;
				attempt = (unsigned)-1; /* the next pass is a first send */
				continue;
			}
		}
		char version[24];
		int vl = snprintf(version, sizeof(version), "%" PRId64, l->committed + 1);
		ops[n] = (struct etcd_op){.kind = ETCD_OP_PUT, .key = l->lane_key,
					  .key_len = strlen(l->lane_key), .value = version,
					  .value_len = (size_t)vl};
		struct etcd_compare cmp[2] = {
			{.target = ETCD_CMP_LEASE, .result = ETCD_CMP_EQUAL, .key = q->owner_key,
			 .key_len = strlen(q->owner_key), .number = q->cfg.lease},
			{.target = ETCD_CMP_VERSION, .result = ETCD_CMP_EQUAL, .key = l->lane_key,
			 .key_len = strlen(l->lane_key), .number = l->committed},
		};
		struct etcd_op reads[2] = {
			{.kind = ETCD_OP_RANGE, .key = q->owner_key, .key_len = strlen(q->owner_key)},
			{.kind = ETCD_OP_RANGE, .key = l->lane_key, .key_len = strlen(l->lane_key)},
		};
		struct etcd_txn t = {cmp, 2, ops, n + 1, reads, 2};
		struct etcd_txn_result r;
		if (attempt > 0)
			atomic_fetch_add_explicit(&q->retries, 1, memory_order_relaxed); /* EC4 */
		int rc = etcd_txn(l->client, &t, &r);
		if (rc != 0) {
			set_error(q, "commit queue lane %u: %s", l->index,
				  etcd_client_error(l->client));
			if (refused(rc)) {
				/* Refused now; but an earlier send of it (this
				 * lane's, or libcurl's own resend) may have
				 * landed: the lane key says. Unreadable: not
				 * known yet, sent again unchanged (its compare
				 * still says "committed so far"). */
				int64_t before = l->committed;
				if (read_version(l) != 0)
					continue;
				if (l->committed == before + 1) {
					atomic_fetch_add_explicit(&q->txns, 1,
								  memory_order_relaxed); /* EC4 */
					atomic_fetch_add_explicit(&q->landed_twice, 1,
								  memory_order_relaxed); /* EC4 */
					answer_batch(l, 0, 0);
					return;
				}
				answer_batch(l, rc, 0);
				return;
			}
			continue;
		}
		if (r.succeeded) {
			l->committed++;
			atomic_fetch_add_explicit(&q->txns, 1, memory_order_relaxed); /* EC4 */
			int64_t rev = r.revision;
			etcd_txn_result_free(&r);
			answer_batch(l, 0, rev);
			return;
		}
		int64_t lane_version = -1, owner_lease = 0;
		bool owner_present = false;
		if (r.n_ranges == 2) {
			owner_present = r.ranges[0].n_kvs > 0;
			owner_lease = owner_present ? r.ranges[0].kvs[0].lease : 0;
			lane_version = r.ranges[1].n_kvs ? r.ranges[1].kvs[0].version : 0;
		}
		int64_t rev = r.revision;
		etcd_txn_result_free(&r);
		if (lane_version == l->committed + 1) {
			/* An earlier send landed; its answer was lost. Even on
			 * a first attempt: libcurl sends a request again itself
			 * when a kept connection turns out closed before any
			 * byte of the answer (coord/etcd_client.c). */
			l->committed++;
			atomic_fetch_add_explicit(&q->txns, 1, memory_order_relaxed);	      /* EC4 */
			atomic_fetch_add_explicit(&q->landed_twice, 1, memory_order_relaxed); /* EC4 */
			answer_batch(l, 0, rev);
			return;
		}
		if (lane_version == l->committed && (!owner_present || owner_lease != q->cfg.lease)) {
			set_error(q,
				  "commit queue shard %s: the owner key %s %s lease %" PRId64
				  " (at revision %" PRId64 "): fenced, nothing more is committed",
				  q->shard, q->owner_key,
				  owner_present ? "no longer carries" : "is gone with", q->cfg.lease,
				  rev);
			atomic_store_explicit(&q->fenced, true, memory_order_release); /* EC1 */
			answer_batch(l, -ESTALE, 0);
			return;
		}
		/* The lane key is not where this lane left it: another writer
		 * of the same lane (two queues on one lease and shard). */
		set_error(q,
			  "commit queue lane %u: %s is at version %" PRId64 ", expected %" PRId64
			  "; another committer writes this lane",
			  l->index, l->lane_key, lane_version, l->committed);
		l->version_known = false;
		answer_batch(l, -EPROTO, 0);
		return;
	}
}

static void *lane_run(void *arg)
{
	struct lane *l = arg;
	struct commit_queue *q = l->q;
	for (;;) {
		pthread_mutex_lock(&l->mu);
		while (l->count == 0 &&
		       !atomic_load_explicit(&q->closing, memory_order_acquire)) /* EC2 */
			pthread_cond_wait(&l->wake, &l->mu);
		if (l->count == 0) {
			pthread_mutex_unlock(&l->mu);
			return NULL;
		}
		take_batch(l);
		pthread_mutex_unlock(&l->mu);
		if (atomic_load_explicit(&q->fenced, memory_order_acquire)) /* EC1 */
			answer_batch(l, -ESTALE, 0);
		else if (drained_out(q))
			answer_batch(l, -ECANCELED, 0);
		else
			commit_batch(l);
	}
}

static int config_error(int rc, char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int config_error(int rc, char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return rc;
}

int commit_queue_open(struct commit_queue **out, const struct commit_queue_config *cfg,
		      char *err, size_t errlen)
{
	*out = NULL;
	if (errlen)
		err[0] = '\0';
	struct commit_queue_config c = *cfg;
	c.in_flight = c.in_flight ? c.in_flight : 4;
	c.batch = c.batch ? c.batch : 60;
	c.capacity = c.capacity ? c.capacity : 8192;
	c.max_window_ms = c.max_window_ms ? c.max_window_ms : 1000;
	c.timeout_ms = c.timeout_ms ? c.timeout_ms : 3000;
	if (!c.prefix || strlen(c.prefix) > COMMIT_PREFIX_MAX)
		return config_error(-EINVAL, err, errlen,
				    "commit queue prefix: expected at most %d bytes, got %zu",
				    COMMIT_PREFIX_MAX, c.prefix ? strlen(c.prefix) : 0);
	if (c.shard_name != NULL && !shard_name_valid(c.shard_name, strlen(c.shard_name)))
		return config_error(-EINVAL, err, errlen,
				    "commit queue shard name: \"%.80s\": expected 1 to %u bytes of "
				    "[A-Za-z0-9._-]", c.shard_name, SHARD_NAME_MAX - 1);
	if (c.in_flight > COMMIT_MAX_IN_FLIGHT)
		return config_error(-EINVAL, err, errlen, "commit queue in_flight: %u; expected 1 to %d",
				    c.in_flight, COMMIT_MAX_IN_FLIGHT);
	if (c.batch > COMMIT_MAX_BATCH)
		return config_error(-EINVAL, err, errlen, "commit queue batch: %u; expected 1 to %d",
				    c.batch, COMMIT_MAX_BATCH);
	if (c.capacity < c.in_flight || c.capacity > (1u << 24))
		return config_error(-EINVAL, err, errlen,
				    "commit queue capacity: %u; expected %u (a record a lane) "
				    "to %u",
				    c.capacity, c.in_flight, 1u << 24);
	if (c.lease == 0 || !c.on_done || c.max_window_ms < 0 || c.timeout_ms < 0)
		return config_error(-EINVAL, err, errlen,
				    "commit queue: expected a lease, on_done and windows >= 0");
	struct commit_queue *q = calloc(1, sizeof(*q));
	if (!q)
		return config_error(-ENOMEM, err, errlen, "commit queue: out of memory");
	q->cfg = c;
	pthread_mutex_init(&q->err_mu, NULL);
	if (c.shard_name != NULL)
		snprintf(q->shard, sizeof(q->shard), "%s", c.shard_name);
	else
		snprintf(q->shard, sizeof(q->shard), "%" PRIu32, c.shard);
	q->cfg.shard_name = NULL; /* the caller's string: not kept */
	snprintf(q->owner_key, sizeof(q->owner_key), "%sshards/%s/owner", c.prefix, q->shard);
	q->pod_prefix_len = (size_t)snprintf(q->pod_prefix, sizeof(q->pod_prefix),
					     "%sshards/%s/pods/", c.prefix, q->shard);
	q->n_lanes = c.in_flight;
	struct etcd_client_options opts = {.timeout_ms = c.timeout_ms};
	int rc = 0;
	for (unsigned i = 0; i < q->n_lanes; i++) {
		struct lane *l = &q->lanes[i];
		l->q = q;
		l->index = i;
		pthread_mutex_init(&l->mu, NULL);
		pthread_cond_init(&l->wake, NULL);
		pthread_cond_init(&l->idle, NULL);
	}
	for (unsigned i = 0; i < q->n_lanes; i++) {
		struct lane *l = &q->lanes[i];
		l->cap = c.capacity / c.in_flight;
		snprintf(l->lane_key, sizeof(l->lane_key),
			 "%sshards/%s/commit/%016" PRIx64 "/%u", c.prefix, q->shard,
			 (uint64_t)c.lease, i);
		l->ring = calloc(l->cap, sizeof(*l->ring));
		if (!l->ring) {
			rc = config_error(-ENOMEM, err, errlen, "commit queue: out of memory");
			break;
		}
		rc = etcd_client_open(&l->client, c.endpoints, &opts, err, errlen);
		if (rc != 0)
			break;
	}
	for (unsigned i = 0; rc == 0 && i < q->n_lanes; i++) {
		if (pthread_create(&q->lanes[i].thread, NULL, lane_run, &q->lanes[i]) != 0) {
			rc = config_error(-EAGAIN, err, errlen, "commit queue: no thread for lane %u",
					  i);
			break;
		}
		q->lanes[i].started = true;
	}
	if (rc != 0) {
		commit_queue_close(q, 0);
		return rc;
	}
	*out = q;
	return 0;
}

void commit_queue_flush(struct commit_queue *q)
{
	for (unsigned i = 0; i < q->n_lanes; i++) {
		struct lane *l = &q->lanes[i];
		pthread_mutex_lock(&l->mu);
		uint64_t mark = l->pushed;
		while (l->answered < mark && l->started)
			pthread_cond_wait(&l->idle, &l->mu);
		pthread_mutex_unlock(&l->mu);
	}
}

void commit_queue_close(struct commit_queue *q, long drain_ms)
{
	if (!q)
		return;
	atomic_store_explicit(&q->drain_deadline_ns, mono_ns() + (int64_t)drain_ms * 1000000,
			      memory_order_relaxed); /* EC3: ordered by EC2 below */
	for (unsigned i = 0; i < q->n_lanes; i++) {
		struct lane *l = &q->lanes[i];
		pthread_mutex_lock(&l->mu);
		atomic_store_explicit(&q->closing, true, memory_order_release); /* EC2 */
		pthread_cond_broadcast(&l->wake);
		pthread_mutex_unlock(&l->mu);
	}
	for (unsigned i = 0; i < q->n_lanes; i++) {
		struct lane *l = &q->lanes[i];
		if (l->started)
			pthread_join(l->thread, NULL);
		etcd_client_close(l->client);
		free(l->ring);
		pthread_mutex_destroy(&l->mu);
		pthread_cond_destroy(&l->wake);
		pthread_cond_destroy(&l->idle);
	}
	pthread_mutex_destroy(&q->err_mu);
	free(q);
}

void commit_queue_window(struct commit_queue *q, size_t *records, long *oldest_ms)
{
	int64_t now = now_ns(q), oldest = 0;
	size_t n = 0;
	for (unsigned i = 0; i < q->n_lanes; i++) {
		struct lane *l = &q->lanes[i];
		pthread_mutex_lock(&l->mu);
		n += l->count + l->inflight;
		int64_t o = l->inflight ? l->inflight_oldest_ns
					: l->count ? l->ring[l->head].enq_ns : 0;
		if (o && (!oldest || o < oldest))
			oldest = o;
		pthread_mutex_unlock(&l->mu);
	}
	*records = n;
	*oldest_ms = oldest ? (long)((now - oldest) / 1000000) : 0;
}

void commit_queue_window_bound(const struct commit_queue *q, size_t *records, long *ms)
{
	*records = (size_t)q->lanes[0].cap * q->n_lanes + (size_t)q->cfg.batch * q->n_lanes;
	*ms = q->cfg.max_window_ms;
}

void commit_queue_stats(const struct commit_queue *q, struct commit_queue_stats *out)
{
	/* EC4: relaxed reads of statistics. */
	out->committed = atomic_load_explicit(&q->committed, memory_order_relaxed);
	out->stale = atomic_load_explicit(&q->stale, memory_order_relaxed);
	out->failed = atomic_load_explicit(&q->failed, memory_order_relaxed);
	out->txns = atomic_load_explicit(&q->txns, memory_order_relaxed);
	out->retries = atomic_load_explicit(&q->retries, memory_order_relaxed);
	out->landed_twice = atomic_load_explicit(&q->landed_twice, memory_order_relaxed);
}

bool commit_queue_fenced(const struct commit_queue *q)
{
	return atomic_load_explicit(&q->fenced, memory_order_acquire); /* EC1 */
}

void commit_queue_error(struct commit_queue *q, char *buf, size_t len)
{
	pthread_mutex_lock(&q->err_mu);
	snprintf(buf, len, "%s", q->error);
	pthread_mutex_unlock(&q->err_mu);
}
