/* The lease's keep-alives on their own thread and connection: see
 * coord/lease_renewer.h.
 *
 * Design: one thread that sleeps on a condition variable (CLOCK_MONOTONIC)
 * until the held lease's next renewal is due (TTL/3 after the last one's
 * send time; after a failed one, TTL/24 later), sends one keep-alive on
 * its own client with a timeout of min(TTL/3, what is left of the lease
 * since the last send) and takes the answer in under the lock. The lock
 * is never held across a request. Cost: one keep-alive every TTL/3, a
 * lock and a clock read each; nothing else is done here.
 *
 * Invariants: the instant told never passes the last successful send
 * time + TTL - TTL/4 of the lease held; an answer for a lease that was
 * dropped or replaced while it was in flight is ignored; a loss is told
 * (0) once by this thread and taken once by the membership thread.
 *
 * Shared state (LR1): every field below `mu` is read and written under
 * `mu` only, by this thread and by the membership thread (hold, drop,
 * take_loss) or a metrics reader (get_stats); the alive_until callback is
 * called under it too, so the values told are ordered. LR2: `cv` is
 * signalled under `mu` by hold, drop and stop, waited on by the thread.
 * `c` is this thread's alone after start (etcd clients are one thread's). */
#include "coord/lease_renewer.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/base.h"
#include "coord/etcd_client.h"

#define NS_PER_S UINT64_C(1000000000)
#define NS_PER_MS UINT64_C(1000000)
#define TIMEOUT_MIN_MS 50L

const double lease_renewer_bucket_s[LEASE_RENEWER_BUCKETS] = {
	0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0};

struct lease_renewer {
	struct lease_renewer_config cfg;
	char host[64];
	uint64_t ttl_ns;
	struct etcd_client *c; /* the thread's alone */
	pthread_t thread;
	pthread_mutex_t mu; /* LR1: guards all below */
	pthread_cond_t cv;  /* LR2 */
	bool stop;
	int64_t lease;       /* held, renewed: 0 none */
	uint64_t renewed_ns; /* its last successful renewal's (or grant's) send time */
	uint64_t retry_ns;   /* 0, or when a failed renewal is tried again */
	int64_t lost;        /* a lease found expired, not taken yet: 0 none */
	int last_rc;         /* the last keep-alive's, for its log lines */
	struct lease_renewer_stats st;
};

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec;
}

static uint64_t clock_now(const struct lease_renewer *r)
{
	return r->cfg.clock_ns != NULL ? r->cfg.clock_ns() : mono_ns();
}

/* Under mu (LR1). */
static void tell_alive_locked(struct lease_renewer *r)
{
	uint64_t until = r->lease == 0 ? 0 : r->renewed_ns + r->ttl_ns - r->ttl_ns / 4;
	if (r->cfg.alive_until != NULL)
		r->cfg.alive_until(r->cfg.arg, until);
}

/* Waits on cv (LR2) for at most wait_ns of real time; under mu. */
static void wait_locked(struct lease_renewer *r, uint64_t wait_ns)
{
	uint64_t at = mono_ns() + wait_ns;
	struct timespec ts = {(time_t)(at / NS_PER_S), (long)(at % NS_PER_S)};
	(void)pthread_cond_timedwait(&r->cv, &r->mu, &ts);
}

/* Under mu: a keep-alive of `id` sent at `sent` answered rc at `done`. */
static void take_answer_locked(struct lease_renewer *r, int64_t id, uint64_t sent,
			       uint64_t done, int rc)
{
	if (r->lease != id)
		return; /* dropped or replaced while in flight */
	if (rc == 0) {
		uint64_t gap = sent - r->renewed_ns, rtt = done - sent;
		if (gap > r->st.gap_max_ns)
			r->st.gap_max_ns = gap;
		if (rtt > r->st.rtt_max_ns)
			r->st.rtt_max_ns = rtt;
		r->st.rtt_sum_ns += rtt;
		for (size_t i = 0; i < LEASE_RENEWER_BUCKETS; i++)
			if ((double)rtt <= lease_renewer_bucket_s[i] * 1e9) {
				r->st.buckets[i]++;
				break;
			}
		r->st.renewals++;
		r->renewed_ns = sent;
		r->retry_ns = 0;
		tell_alive_locked(r);
		if (r->last_rc != 0 && r->last_rc != -ENOENT)
			log_msg(LOG_LEVEL_INFO, "membership %s: the lease's keep-alives are "
				"answered again", r->host);
	} else if (rc == -ENOENT) {
		r->st.losses++;
		r->lease = 0;
		r->lost = id;
		r->retry_ns = 0;
		tell_alive_locked(r); /* 0: placing nothing from now on */
		log_msg(LOG_LEVEL_WARN, "membership %s: the lease expired before its "
			"renewal: its shards are gone; joining again", r->host);
	} else {
		r->st.errors++;
		r->retry_ns = done + r->ttl_ns / 24;
		if (rc != r->last_rc)
			log_msg(LOG_LEVEL_WARN, "membership %s: the lease's keep-alive: etcd: "
				"%s (placing nothing once the lease is not surely alive)",
				r->host, etcd_client_error(r->c));
	}
	r->last_rc = rc;
}

static void *renew_loop(void *arg)
{
	struct lease_renewer *r = arg;
	pthread_mutex_lock(&r->mu);
	while (!r->stop) {
		if (r->lease == 0) {
			wait_locked(r, r->ttl_ns / 12);
			continue;
		}
		uint64_t now = clock_now(r);
		uint64_t due = r->retry_ns != 0 ? r->retry_ns : r->renewed_ns + r->ttl_ns / 3;
		if (now < due) {
			uint64_t w = due - now;
			wait_locked(r, w < r->ttl_ns / 12 ? w : r->ttl_ns / 12);
			continue;
		}
		int64_t id = r->lease;
		/* The deadline: inside what is left of the lease since the last
		 * renewal's send (etcd's own expiry is later still), and never
		 * longer than TTL/3. */
		uint64_t end = r->renewed_ns + r->ttl_ns;
		uint64_t left_ms = end > now ? (end - now) / NS_PER_MS : 0;
		long timeout_ms = (long)(r->ttl_ns / 3 / NS_PER_MS);
		if ((uint64_t)timeout_ms > left_ms)
			timeout_ms = (long)left_ms;
		if (timeout_ms < TIMEOUT_MIN_MS)
			timeout_ms = TIMEOUT_MIN_MS;
		pthread_mutex_unlock(&r->mu);
		etcd_client_set_timeout(r->c, timeout_ms);
		int64_t ttl = 0;
		uint64_t sent = clock_now(r);
		int rc = etcd_lease_keepalive(r->c, id, &ttl);
		uint64_t done = clock_now(r);
		pthread_mutex_lock(&r->mu);
		take_answer_locked(r, id, sent, done, rc);
	}
	pthread_mutex_unlock(&r->mu);
	return NULL;
}

int lease_renewer_start(struct lease_renewer **out, const struct lease_renewer_config *cfg,
			char *err, size_t errlen)
{
	*out = NULL;
	if (cfg->ttl_s < 2) {
		snprintf(err, errlen, "the lease's TTL: %lld s: expected 2 or more",
			 (long long)cfg->ttl_s);
		return -EINVAL;
	}
	struct lease_renewer *r = calloc(1, sizeof(*r));
	if (r == NULL) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	r->cfg = *cfg;
	snprintf(r->host, sizeof(r->host), "%s", cfg->host != NULL ? cfg->host : "");
	r->cfg.host = r->host;
	r->cfg.endpoints = NULL; /* not kept */
	r->ttl_ns = (uint64_t)cfg->ttl_s * NS_PER_S;
	long ms = (long)(cfg->ttl_s * 1000 / 3);
	struct etcd_client_options o = {.timeout_ms = ms, .connect_timeout_ms = ms / 2};
	int rc = etcd_client_open(&r->c, cfg->endpoints, &o, err, errlen);
	if (rc != 0) {
		free(r);
		return rc;
	}
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&r->cv, &ca);
	pthread_condattr_destroy(&ca);
	pthread_mutex_init(&r->mu, NULL);
	rc = pthread_create(&r->thread, NULL, renew_loop, r);
	if (rc != 0) {
		snprintf(err, errlen, "the lease's renewal thread: %s", strerror(rc));
		pthread_cond_destroy(&r->cv);
		pthread_mutex_destroy(&r->mu);
		etcd_client_close(r->c);
		free(r);
		return -rc;
	}
	*out = r;
	return 0;
}

void lease_renewer_stop(struct lease_renewer *r)
{
	if (r == NULL)
		return;
	pthread_mutex_lock(&r->mu);
	r->stop = true;
	pthread_cond_signal(&r->cv); /* LR2 */
	pthread_mutex_unlock(&r->mu);
	pthread_join(r->thread, NULL);
	etcd_client_close(r->c);
	pthread_cond_destroy(&r->cv);
	pthread_mutex_destroy(&r->mu);
	free(r);
}

void lease_renewer_hold(struct lease_renewer *r, int64_t lease, uint64_t sent_ns)
{
	pthread_mutex_lock(&r->mu);
	r->lease = lease;
	r->renewed_ns = sent_ns;
	r->retry_ns = 0;
	r->lost = 0;
	tell_alive_locked(r);
	pthread_cond_signal(&r->cv); /* LR2 */
	pthread_mutex_unlock(&r->mu);
}

int lease_renewer_take_loss(struct lease_renewer *r, int64_t lease)
{
	pthread_mutex_lock(&r->mu);
	int lost = lease != 0 && r->lost == lease;
	if (lost)
		r->lost = 0;
	pthread_mutex_unlock(&r->mu);
	return lost;
}

void lease_renewer_drop(struct lease_renewer *r)
{
	pthread_mutex_lock(&r->mu);
	r->lease = 0;
	r->retry_ns = 0;
	tell_alive_locked(r);
	pthread_cond_signal(&r->cv); /* LR2 */
	pthread_mutex_unlock(&r->mu);
}

void lease_renewer_get_stats(struct lease_renewer *r, struct lease_renewer_stats *out)
{
	pthread_mutex_lock(&r->mu);
	*out = r->st;
	pthread_mutex_unlock(&r->mu);
}
