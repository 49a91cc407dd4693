/* A host's membership through etcd: see coord/membership.h for the keys
 * and the protocol.
 *
 * Design: one thread, one etcd client (a client is one thread's), a loop
 * of ticks; the lease's keep-alives on a thread and client of their own
 * (coord/lease_renewer.h), so that nothing a tick does delays them. Each
 * tick costs one range of the cluster's keys before its shards (every
 * host, the coordinator key) and two a shard (the first key past the
 * last shard's; its keys before its placements: assigned, its
 * committers' lane keys, owner): O(hosts + shards) keys, never its
 * placements, and a transaction per change (the coordinator's
 * assignments in lists of ETCD_MAX_TXN_OPS; each take and release
 * alone), and with a status callback a put of the host's status at most
 * once a second, only when its text changed (HOST_STATUS_VALUE_MAX
 * bytes; the callback's pass over the nodes is its own cost). The first
 * range reads every host's status with its key: about 200 bytes a shard
 * listed (each shard is listed by its one owner) and 52 a host. Nothing
 * here is on a placement's path: the caller keeps what the callbacks
 * tell it and checks that itself.
 *
 * Invariants: a shard is told owned only after its owner key was put with
 * this host's lease, and told not owned before the key is deleted; the
 * instant told by alive_until never passes the last successful renewal's
 * send time + TTL - TTL/4 (the renewer's to tell, LR1); a lease the
 * renewer found expired is dropped here once, at the next tick's start.
 * `stop` is the only other state shared with other threads: EM1.
 */
#include "coord/membership.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/base.h"
#include "coord/etcd_client.h"
#include "coord/lease_renewer.h"
#include "coord/shard_assign.h"

#define TICK_DEFAULT_NS UINT64_C(250000000)
#define NS_PER_S UINT64_C(1000000000)
#define KEY_MAX 256

struct shard_state {
	shard_name_t name;
	char assigned[MEMBERSHIP_HOST_MAX]; /* "": none */
	char owner[MEMBERSHIP_HOST_MAX];    /* "": none */
	int64_t owner_lease;
};

struct membership {
	struct membership_config cfg;
	char cluster[128], host[MEMBERSHIP_HOST_MAX], prefix[160];
	size_t prefix_len;
	struct etcd_client *c;
	struct lease_renewer *renewer; /* the keep-alives' thread (LR1) */
	pthread_t thread;
	bool stop; /* EM1: release by membership_stop, acquire by the loop */
	pthread_mutex_t mu; /* guards st */
	struct membership_status st;
	int64_t lease; /* this thread's view: the one held, 0 after a loss */
	int last_rc;         /* the last tick's, for its log lines */
	/* What the last range read. */
	char hosts[MEMBERSHIP_HOSTS_MAX][MEMBERSHIP_HOST_MAX];
	size_t n_hosts;
	char coordinator[MEMBERSHIP_HOST_MAX];
	int64_t coordinator_lease;
	bool coordinator_present;
	struct shard_state shards[SHARD_MAX];
	size_t n_shards;
	/* What the caller was told it owns. */
	shard_name_t owned[SHARD_MAX];
	size_t n_owned;
	/* The coordinator's scratch: the shards it sees, its keys. */
	shard_name_t seen[SHARD_MAX];
	size_t n_seen;
	char keys[ETCD_MAX_TXN_OPS][KEY_MAX];
	struct quota_escrow_member *escrow; /* NULL: no queue split */
	/* The host's status: the last text put at this lease (status_len 0:
	 * none yet, the key holds the name), when it was last asked for. */
	struct host_status status;
	char status_text[HOST_STATUS_VALUE_MAX + 1];
	char status_put[HOST_STATUS_VALUE_MAX + 1];
	size_t status_len;
	uint64_t status_at;
	bool status_asked;
	int escrow_rc; /* its last tick's, for its log lines */
};

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec;
}

static uint64_t clock_now(const struct membership *m)
{
	return m->cfg.clock_ns != NULL ? m->cfg.clock_ns() : mono_ns();
}

int membership_prefix(const char *cluster, char *buf, size_t len)
{
	int n = snprintf(buf, len, "/shmsched/%s/", cluster);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : n;
}

static void count(struct membership *m, uint64_t *field, uint64_t n)
{
	pthread_mutex_lock(&m->mu);
	*field += n;
	pthread_mutex_unlock(&m->mu);
}

/* The key prefix + a + b + c into buf (KEY_MAX bytes); its length. */
static size_t key_of(const struct membership *m, char *buf, const char *a, const char *b,
		     const char *c)
{
	int n = snprintf(buf, KEY_MAX, "%s%s%s%s", m->prefix, a, b, c);
	return n < 0 ? 0 : (size_t)n < KEY_MAX ? (size_t)n : KEY_MAX - 1;
}

static void tell_owned(struct membership *m)
{
	if (m->cfg.owned != NULL)
		m->cfg.owned(m->cfg.arg, (const shard_name_t *)m->owned, m->n_owned);
	pthread_mutex_lock(&m->mu);
	m->st.owned = m->n_owned;
	pthread_mutex_unlock(&m->mu);
}

static bool owned_has(const struct membership *m, const char *s)
{
	for (size_t i = 0; i < m->n_owned; i++)
		if (strcmp(m->owned[i], s) == 0)
			return true;
	return false;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(a, b);
}

static void owned_set(struct membership *m, const char *s, bool own)
{
	bool has = owned_has(m, s);
	if (own == has || (own && m->n_owned == SHARD_MAX))
		return;
	if (own) {
		snprintf(m->owned[m->n_owned++], SHARD_NAME_MAX, "%s", s);
	} else {
		size_t k = 0;
		for (size_t i = 0; i < m->n_owned; i++)
			if (strcmp(m->owned[i], s) != 0)
				memcpy(m->owned[k++], m->owned[i], SHARD_NAME_MAX);
		m->n_owned = k;
	}
	qsort(m->owned, m->n_owned, sizeof(m->owned[0]), by_name);
	log_msg(LOG_LEVEL_INFO, "membership %s: shard %s %s (%zu owned)", m->host, s,
		own ? "taken" : "given up", m->n_owned);
	tell_owned(m);
}

/* The lease is gone (expired, or never granted): nothing is owned. */
static void lose_lease(struct membership *m)
{
	m->lease = 0;
	lease_renewer_drop(m->renewer); /* tells 0 */
	if (m->n_owned > 0) {
		m->n_owned = 0;
		tell_owned(m);
	}
	if (m->escrow != NULL) { /* nothing owned: the sums 0, no request */
		char err[8];
		(void)quota_escrow_member_owned(m->escrow, m->c, m->prefix, 0, NULL, 0, err,
						sizeof(err));
	}
	pthread_mutex_lock(&m->mu);
	m->st.lease = 0;
	m->st.coordinator = false;
	pthread_mutex_unlock(&m->mu);
}

/* Puts key = this host's name with `lease` only if the key does not exist
 * (compare CREATE == 0): *took says whether it did. */
static int put_if_absent(struct membership *m, const char *key, size_t kl, int64_t lease,
			 bool *took)
{
	struct etcd_compare cmp = {.target = ETCD_CMP_CREATE, .result = ETCD_CMP_EQUAL,
				   .key = key, .key_len = kl};
	struct etcd_op put = {.kind = ETCD_OP_PUT, .key = key, .key_len = kl,
			      .value = m->host, .value_len = strlen(m->host), .lease = lease};
	struct etcd_txn t = {&cmp, 1, &put, 1, NULL, 0};
	struct etcd_txn_result r;
	int rc = etcd_txn(m->c, &t, &r);
	*took = rc == 0 && r.succeeded;
	if (rc == 0)
		etcd_txn_result_free(&r);
	return rc;
}

/* Grants a lease and puts hosts/<host> with it, only if no live host
 * holds that name (CREATE == 0): a second host of the same name, or this
 * one restarted before its old lease lapsed, waits (-EEXIST) until the
 * key goes with its lease. */
static int join(struct membership *m)
{
	int64_t id = 0, ttl = 0;
	uint64_t sent = clock_now(m);
	int rc = etcd_lease_grant(m->c, m->cfg.ttl_s, &id, &ttl);
	if (rc != 0)
		return rc;
	char key[KEY_MAX];
	size_t kl = key_of(m, key, "hosts/", m->host, "");
	bool put_ok;
	rc = put_if_absent(m, key, kl, id, &put_ok);
	if (!put_ok) {
		(void)etcd_lease_revoke(m->c, id);
		return rc != 0 ? rc : -EEXIST;
	}
	m->lease = id;
	m->status_len = 0; /* the key holds the name again */
	m->status_asked = false;
	lease_renewer_hold(m->renewer, id, sent); /* tells the instant */
	pthread_mutex_lock(&m->mu);
	m->st.lease = id;
	m->st.joins++;
	pthread_mutex_unlock(&m->mu);
	return 0;
}

/* A keep-alive (the renewer's thread) found the lease expired: it told
 * 0 already (placing nothing); here its shards are dropped, once. */
static int take_loss(struct membership *m)
{
	if (m->lease == 0 || !lease_renewer_take_loss(m->renewer, m->lease))
		return 0;
	lose_lease(m);
	return -ENOENT;
}

static struct shard_state *shard_find(struct membership *m, const char *name, size_t len,
				      bool add)
{
	for (size_t i = 0; i < m->n_shards; i++)
		if (strlen(m->shards[i].name) == len && memcmp(m->shards[i].name, name, len) == 0)
			return &m->shards[i];
	if (!add || m->n_shards == SHARD_MAX || !shard_name_valid(name, len))
		return NULL;
	struct shard_state *s = &m->shards[m->n_shards++];
	memset(s, 0, sizeof(*s));
	memcpy(s->name, name, len);
	return s;
}

static void copy_value(char *dst, const struct etcd_kv *kv)
{
	size_t n = kv->value_len < MEMBERSHIP_HOST_MAX - 1 ? kv->value_len
							   : MEMBERSHIP_HOST_MAX - 1;
	memcpy(dst, kv->value, n);
	dst[n] = '\0';
}

/* Takes in one range's keys: hosts, the coordinator, shards' assigned
 * and owner keys (any other key is skipped). */
static void take_keys(struct membership *m, const struct etcd_range_result *r)
{
	for (size_t i = 0; i < r->n_kvs; i++) {
		const struct etcd_kv *kv = &r->kvs[i];
		const char *k = (const char *)kv->key + m->prefix_len;
		size_t kl = kv->key_len - m->prefix_len;
		if (kl > 6 && memcmp(k, "hosts/", 6) == 0) {
			if (m->n_hosts < MEMBERSHIP_HOSTS_MAX && kl - 6 < MEMBERSHIP_HOST_MAX) {
				memcpy(m->hosts[m->n_hosts], k + 6, kl - 6);
				m->hosts[m->n_hosts++][kl - 6] = '\0';
			}
		} else if (kl == 11 && memcmp(k, "coordinator", 11) == 0) {
			copy_value(m->coordinator, kv);
			m->coordinator_lease = kv->lease;
			m->coordinator_present = true;
		} else if (kl > 7 && memcmp(k, "shards/", 7) == 0) {
			const char *name = k + 7;
			const char *slash = memchr(name, '/', kl - 7);
			if (slash == NULL)
				continue;
			struct shard_state *s = shard_find(m, name, (size_t)(slash - name), true);
			size_t rest = kl - 7 - (size_t)(slash - name);
			if (s == NULL)
				continue;
			if (rest == 9 && memcmp(slash, "/assigned", 9) == 0) {
				copy_value(s->assigned, kv);
			} else if (rest == 6 && memcmp(slash, "/owner", 6) == 0) {
				copy_value(s->owner, kv);
				s->owner_lease = kv->lease;
			}
		}
	}
}

/* Reads hosts, the coordinator and each shard's keys before its pods/:
 * not the shards' placements (shards/<s>/pods/, as many as there are
 * pods: read whole every tick, 50,000 of them made each tick megabytes
 * and delayed the renewals past the lease). The keys before "shards/" in
 * one range; then each shard found by the first key past the last one's
 * (shards/<s>0, just past every shards/<s>/ key), and read up to
 * shards/<s>/pods/ (assigned, its committers' lane keys, owner). One
 * range, then two a shard. A shard's batch keys (shards/<s>/sets/,
 * coord/batch_value.h) sort after pods/, so this read never holds them. */
static int read_state(struct membership *m)
{
	uint8_t end[sizeof(m->prefix)];
	size_t end_len = etcd_prefix_end(m->prefix, m->prefix_len, end);
	char from[KEY_MAX], to[KEY_MAX];
	size_t fl = key_of(m, from, "", "", ""), tl = key_of(m, to, "shards/", "", "");
	struct etcd_range_result r;
	int rc = etcd_range(m->c, from, fl, to, tl, 0, &r);
	if (rc != 0)
		return rc;
	m->n_hosts = 0;
	m->n_shards = 0;
	m->coordinator_present = false;
	take_keys(m, &r);
	etcd_range_result_free(&r);
	/* `to` is the cursor: shards/ first. */
	for (;;) {
		rc = etcd_range(m->c, to, tl, end, end_len, 1, &r);
		if (rc != 0)
			return rc;
		/* Past the shards (a key family after them): done too. */
		if (r.n_kvs == 0 || r.kvs[0].key_len < m->prefix_len + 7 ||
		    memcmp(r.kvs[0].key + m->prefix_len, "shards/", 7) != 0) {
			etcd_range_result_free(&r);
			return 0;
		}
		const char *name = (const char *)r.kvs[0].key + m->prefix_len + 7;
		size_t left = r.kvs[0].key_len - m->prefix_len - 7;
		const char *slash = memchr(name, '/', left);
		char shard[SHARD_NAME_MAX + 1];
		size_t nl = slash != NULL ? (size_t)(slash - name) : left;
		bool ok = nl > 0 && nl <= SHARD_NAME_MAX - 1;
		if (ok) {
			memcpy(shard, name, nl);
			shard[nl] = '\0';
		}
		etcd_range_result_free(&r);
		if (!ok)
			return -EPROTO; /* not a key this code writes */
		fl = key_of(m, from, "shards/", shard, "/");
		tl = key_of(m, to, "shards/", shard, "/pods/");
		rc = etcd_range(m->c, from, fl, to, tl, 0, &r);
		if (rc != 0)
			return rc;
		take_keys(m, &r);
		etcd_range_result_free(&r);
		tl = key_of(m, to, "shards/", shard, "0"); /* '/' + 1 */
	}
}

/* compare CREATE(coordinator) == 0, put it with our lease. */
static int elect(struct membership *m)
{
	char key[KEY_MAX];
	size_t kl = key_of(m, key, "coordinator", "", "");
	bool took;
	int rc = put_if_absent(m, key, kl, m->lease, &took);
	if (rc == 0 && took) {
		snprintf(m->coordinator, sizeof(m->coordinator), "%s", m->host);
		m->coordinator_lease = m->lease;
		m->coordinator_present = true;
	}
	return rc;
}

static int host_index(const struct membership *m, const char *h)
{
	for (size_t i = 0; i < m->n_hosts; i++)
		if (strcmp(m->hosts[i], h) == 0)
			return (int)i;
	return -1;
}

/* As coordinator: assigns the shards this host sees to the live hosts
 * and writes the changes, fenced by LEASE(coordinator) == our lease. */
static int coordinate(struct membership *m)
{
	shard_name_t *seen = m->seen;
	size_t n = m->cfg.shards != NULL ? m->cfg.shards(m->cfg.arg, seen, SHARD_MAX) : 0;
	if (n > SHARD_MAX)
		n = SHARD_MAX;
	qsort(seen, n, sizeof(seen[0]), by_name);
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if ((k == 0 || strcmp(seen[k - 1], seen[i]) != 0) &&
		    shard_name_valid(seen[i], strlen(seen[i])))
			memcpy(seen[k++], seen[i], SHARD_NAME_MAX);
	n = k;
	m->n_seen = n;
	int32_t prior[SHARD_MAX], out[SHARD_MAX];
	for (size_t i = 0; i < n; i++) {
		const struct shard_state *s = shard_find(m, seen[i], strlen(seen[i]), false);
		prior[i] = s != NULL && s->assigned[0] ? host_index(m, s->assigned) : -1;
	}
	if (shard_assign(prior, n, m->n_hosts, out) < 0 || m->n_hosts == 0)
		return 0;
	char ckey[KEY_MAX];
	size_t ckl = key_of(m, ckey, "coordinator", "", "");
	struct etcd_compare cmp = {.target = ETCD_CMP_LEASE, .result = ETCD_CMP_EQUAL,
				   .key = ckey, .key_len = ckl, .number = m->lease};
	char (*keys)[KEY_MAX] = m->keys;
	struct etcd_op ops[ETCD_MAX_TXN_OPS];
	size_t i = 0;
	while (i < n) {
		size_t nops = 0;
		for (; i < n && nops < ETCD_MAX_TXN_OPS; i++) {
			if (out[i] == prior[i])
				continue;
			size_t kl = key_of(m, keys[nops], "shards/", seen[i], "/assigned");
			const char *h = m->hosts[out[i]];
			ops[nops] = (struct etcd_op){.kind = ETCD_OP_PUT, .key = keys[nops],
						     .key_len = kl, .value = h,
						     .value_len = strlen(h)};
			nops++;
		}
		if (nops == 0)
			break;
		struct etcd_txn t = {&cmp, 1, ops, nops, NULL, 0};
		struct etcd_txn_result r;
		int rc = etcd_txn(m->c, &t, &r);
		if (rc != 0)
			return rc;
		bool ok = r.succeeded;
		etcd_txn_result_free(&r);
		if (!ok)
			return 0; /* deposed: the next tick reads who is */
		count(m, &m->st.assigned, nops);
	}
	return 0;
}

/* Takes an assigned shard without owner; releases an owned one assigned
 * elsewhere (told first). */
static int take_or_release(struct membership *m, struct shard_state *s)
{
	char key[KEY_MAX];
	size_t kl = key_of(m, key, "shards/", s->name, "/owner");
	bool mine = s->owner[0] != '\0' && s->owner_lease == m->lease;
	bool assigned_here = strcmp(s->assigned, m->host) == 0;
	if (mine && !assigned_here) {
		owned_set(m, s->name, false); /* stop placing before the key goes */
		if (m->escrow != NULL) {
			char err[512];
			bool gone = false;
			int rc = quota_escrow_member_release(m->escrow, m->c, m->prefix, m->lease,
							     s->name, &gone, err, sizeof(err));
			if (rc != 0)
				return rc;
			if (gone)
				count(m, &m->st.releases, 1);
			s->owner[0] = '\0';
			s->owner_lease = 0;
			return 0;
		}
		struct etcd_compare cmp = {.target = ETCD_CMP_LEASE, .result = ETCD_CMP_EQUAL,
					   .key = key, .key_len = kl, .number = m->lease};
		struct etcd_op del = {.kind = ETCD_OP_DELETE, .key = key, .key_len = kl};
		struct etcd_txn t = {&cmp, 1, &del, 1, NULL, 0};
		struct etcd_txn_result r;
		int rc = etcd_txn(m->c, &t, &r);
		if (rc != 0)
			return rc;
		if (r.succeeded)
			count(m, &m->st.releases, 1);
		etcd_txn_result_free(&r);
		s->owner[0] = '\0';
		s->owner_lease = 0;
		return 0;
	}
	if (mine) {
		owned_set(m, s->name, true); /* e.g. after a restart of the thread's view */
		return 0;
	}
	if (s->owner[0] == '\0' && assigned_here) {
		bool took;
		int rc = put_if_absent(m, key, kl, m->lease, &took);
		if (rc != 0)
			return rc;
		if (took) {
			count(m, &m->st.takes, 1);
			snprintf(s->owner, sizeof(s->owner), "%s", m->host);
			s->owner_lease = m->lease;
			owned_set(m, s->name, true);
		}
		return 0;
	}
	/* Owned by another lease (ours lost, or another host's). */
	owned_set(m, s->name, false);
	return 0;
}

/* Quota by escrow: the coordinator's rounds over the shards it assigns,
 * then the owner's reads and acknowledgements of its slices. A failure
 * is logged when it changes; the next tick tries again. */
static void escrow_tick(struct membership *m, bool coordinating)
{
	char err[512] = "", owner_err[512] = "";
	int rc = 0;
	if (coordinating)
		rc = quota_escrow_member_coordinate(m->escrow, m->c, m->prefix, m->lease,
						    (const shard_name_t *)m->seen, m->n_seen, err,
						    sizeof(err));
	/* The owner's step even when the rounds failed (too many shards to
	 * split, say): its slices as they are still go in force. */
	int owner_rc = quota_escrow_member_owned(m->escrow, m->c, m->prefix, m->lease,
						 (const shard_name_t *)m->owned, m->n_owned,
						 owner_err, sizeof(owner_err));
	if (owner_rc != 0) {
		rc = owner_rc;
		memcpy(err, owner_err, sizeof(err));
	}
	if (rc != 0) {
		count(m, &m->st.errors, 1);
		if (rc != m->escrow_rc)
			log_msg(LOG_LEVEL_WARN, "membership %s: quota by escrow: %s", m->host,
				err);
	} else if (m->escrow_rc != 0) {
		log_msg(LOG_LEVEL_INFO, "membership %s: quota by escrow: answers again", m->host);
	}
	m->escrow_rc = rc;
}

/* The host's status, asked for at most once every
 * MEMBERSHIP_STATUS_EVERY_NS, put in hosts/<host> when its text changed:
 * compare LEASE(hosts/<host>) == the lease (the key is ours: never put
 * back after it went with a lapsed lease). 0, or a negative errno. */
static int status_tick(struct membership *m)
{
	uint64_t now = clock_now(m);
	if (m->status_asked && now - m->status_at < MEMBERSHIP_STATUS_EVERY_NS)
		return 0;
	m->status_asked = true;
	m->status_at = now;
	memset(&m->status, 0, sizeof(m->status));
	m->cfg.status(m->cfg.arg, (const shard_name_t *)m->owned, m->n_owned, &m->status);
	int n = host_status_encode(&m->status, m->status_text);
	if (n < 0)
		return n;
	if ((size_t)n == m->status_len && memcmp(m->status_text, m->status_put, (size_t)n) == 0)
		return 0;
	char key[KEY_MAX];
	size_t kl = key_of(m, key, "hosts/", m->host, "");
	struct etcd_compare cmp = {.target = ETCD_CMP_LEASE, .result = ETCD_CMP_EQUAL,
				   .key = key, .key_len = kl, .number = m->lease};
	struct etcd_op put = {.kind = ETCD_OP_PUT, .key = key, .key_len = kl,
			      .value = m->status_text, .value_len = (size_t)n,
			      .lease = m->lease};
	struct etcd_txn t = {&cmp, 1, &put, 1, NULL, 0};
	struct etcd_txn_result r;
	int rc = etcd_txn(m->c, &t, &r);
	if (rc != 0)
		return rc;
	bool ok = r.succeeded;
	etcd_txn_result_free(&r);
	if (!ok)
		return 0; /* the key not ours now: a lapse the next tick finds */
	memcpy(m->status_put, m->status_text, (size_t)n);
	m->status_len = (size_t)n;
	count(m, &m->st.status_puts, 1);
	return 0;
}

static void tick(struct membership *m)
{
	int rc = take_loss(m);
	if (rc == 0 && m->lease == 0)
		rc = join(m);
	if (rc == 0)
		rc = read_state(m);
	if (rc == 0 && !m->coordinator_present)
		rc = elect(m);
	bool coordinating = rc == 0 && m->coordinator_present &&
			    m->coordinator_lease == m->lease;
	pthread_mutex_lock(&m->mu);
	m->st.coordinator = coordinating;
	pthread_mutex_unlock(&m->mu);
	if (coordinating) {
		rc = coordinate(m);
		if (rc == 0)
			rc = read_state(m); /* the assignments just written */
	}
	for (size_t i = 0; rc == 0 && i < m->n_shards; i++)
		rc = take_or_release(m, &m->shards[i]);
	/* An owned shard whose keys are gone (the owner key with a lapsed
	 * lease, a shard no longer seen) is owned no more. */
	for (size_t i = 0; rc == 0 && i < m->n_owned;) {
		const char *o = m->owned[i];
		const struct shard_state *s = shard_find(m, o, strlen(o), false);
		if (s == NULL || s->owner_lease != m->lease)
			owned_set(m, o, false);
		else
			i++;
	}
	/* Told every tick: the caller finds the nodes of a shard's value
	 * that reached it since. */
	if (m->lease != 0)
		tell_owned(m);
	if (rc == 0 && m->escrow != NULL)
		escrow_tick(m, coordinating);
	if (rc == 0 && m->lease != 0 && m->cfg.status != NULL)
		rc = status_tick(m);
	if (rc != 0 && rc != -ENOENT)
		count(m, &m->st.errors, 1);
	/* Logged when it changes: a failing etcd is not a line per tick. */
	if (rc != m->last_rc && rc == -EEXIST)
		log_msg(LOG_LEVEL_WARN, "membership %s: %shosts/%s is held by a live "
			"lease (another host of this name, or this one's before a "
			"restart): waiting for it to go", m->host, m->prefix, m->host);
	else if (rc != m->last_rc && rc != 0 && rc != -ENOENT)
		log_msg(LOG_LEVEL_WARN, "membership %s: etcd: %s (placing nothing once "
			"the lease is not surely alive)", m->host, etcd_client_error(m->c));
	else if (rc == 0 && m->last_rc != 0 && m->last_rc != -ENOENT && m->last_rc != -EEXIST)
		log_msg(LOG_LEVEL_INFO, "membership %s: etcd answers again", m->host);
	m->last_rc = rc;
}

static void *loop(void *arg)
{
	struct membership *m = arg;
	uint64_t ttl = (uint64_t)m->cfg.ttl_s * NS_PER_S;
	uint64_t tick_ns = m->cfg.tick_ns != 0 ? m->cfg.tick_ns
			 : ttl / 6 < TICK_DEFAULT_NS ? ttl / 6 : TICK_DEFAULT_NS;
	/* EM1: acquire, partner of membership_stop's release. */
	while (!__atomic_load_n(&m->stop, __ATOMIC_ACQUIRE)) {
		tick(m);
		struct timespec ts = {(time_t)(tick_ns / NS_PER_S), (long)(tick_ns % NS_PER_S)};
		nanosleep(&ts, NULL);
	}
	return NULL;
}

int membership_start(struct membership **out, const struct membership_config *cfg,
		     char *err, size_t errlen)
{
	*out = NULL;
	if (cfg->ttl_s < MEMBERSHIP_TTL_MIN_S || cfg->ttl_s > 3600) {
		snprintf(err, errlen, "the lease's TTL: %lld s: expected %d to 3600 seconds",
			 (long long)cfg->ttl_s, MEMBERSHIP_TTL_MIN_S);
		return -EINVAL;
	}
	size_t hl = cfg->host != NULL ? strlen(cfg->host) : 0;
	if (!shard_name_valid(cfg->host, hl) || hl >= MEMBERSHIP_HOST_MAX) {
		snprintf(err, errlen, "the host's name: \"%s\": expected 1 to %d "
			 "characters of A-Z, a-z, 0-9, '.', '_' or '-'",
			 cfg->host != NULL ? cfg->host : "", MEMBERSHIP_HOST_MAX - 1);
		return -EINVAL;
	}
	size_t cl = cfg->cluster != NULL ? strlen(cfg->cluster) : 0;
	if (!shard_name_valid(cfg->cluster, cl)) {
		snprintf(err, errlen, "the cluster's name: \"%s\": expected 1 to %u "
			 "characters of A-Z, a-z, 0-9, '.', '_' or '-'",
			 cfg->cluster != NULL ? cfg->cluster : "", SHARD_NAME_MAX - 1);
		return -EINVAL;
	}
	struct membership *m = calloc(1, sizeof(*m));
	if (m == NULL) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	m->cfg = *cfg;
	snprintf(m->host, sizeof(m->host), "%s", cfg->host);
	snprintf(m->cluster, sizeof(m->cluster), "%s", cfg->cluster);
	m->cfg.host = m->host;
	m->cfg.cluster = m->cluster;
	m->prefix_len = (size_t)membership_prefix(m->cluster, m->prefix, sizeof(m->prefix));
	struct lease_renewer_config rc_cfg = {.endpoints = cfg->endpoints, .host = m->host,
					      .ttl_s = cfg->ttl_s,
					      .alive_until = cfg->alive_until, .arg = cfg->arg,
					      .clock_ns = cfg->clock_ns};
	int rc = lease_renewer_start(&m->renewer, &rc_cfg, err, errlen);
	if (rc != 0) {
		free(m);
		return rc;
	}
	/* A request's answer within TTL/3: a stuck request holds this thread's
	 * work (not the renewals) a while, not forever. */
	long ms = (long)(cfg->ttl_s * 1000 / 3);
	struct etcd_client_options o = {.timeout_ms = ms, .connect_timeout_ms = ms / 2};
	rc = etcd_client_open(&m->c, cfg->endpoints, &o, err, errlen);
	if (rc != 0) {
		lease_renewer_stop(m->renewer);
		free(m);
		return rc;
	}
	if (cfg->n_escrow_queues > 0) {
		m->escrow = quota_escrow_member_new(cfg->escrow_queues, cfg->n_escrow_queues,
						    cfg->escrow_in_force, cfg->arg);
		if (m->escrow == NULL) {
			snprintf(err, errlen, "quota by escrow: %zu queues: out of memory or "
				 "more than %u", cfg->n_escrow_queues, QUOTA_ESCROW_MEMBER_QUEUES);
			etcd_client_close(m->c);
			lease_renewer_stop(m->renewer);
			free(m);
			return -EINVAL;
		}
		quota_escrow_member_set_use(m->escrow, cfg->escrow_use);
	}
	m->cfg.escrow_queues = NULL; /* copied */
	pthread_mutex_init(&m->mu, NULL);
	rc = pthread_create(&m->thread, NULL, loop, m);
	if (rc != 0) {
		snprintf(err, errlen, "the membership thread: %s", strerror(rc));
		quota_escrow_member_free(m->escrow);
		etcd_client_close(m->c);
		lease_renewer_stop(m->renewer);
		pthread_mutex_destroy(&m->mu);
		free(m);
		return -rc;
	}
	*out = m;
	return 0;
}

void membership_stop(struct membership *m)
{
	if (m == NULL)
		return;
	/* EM1: release, partner of the loop's acquire. */
	__atomic_store_n(&m->stop, true, __ATOMIC_RELEASE);
	pthread_join(m->thread, NULL);
	if (m->n_owned > 0) {
		m->n_owned = 0;
		tell_owned(m);
	}
	lease_renewer_drop(m->renewer); /* 0 told before the keys go */
	lease_renewer_stop(m->renewer);
	if (m->lease != 0)
		(void)etcd_lease_revoke(m->c, m->lease);
	m->lease = 0;
	quota_escrow_member_free(m->escrow);
	etcd_client_close(m->c);
	pthread_mutex_destroy(&m->mu);
	free(m);
}

void membership_get_status(struct membership *m, struct membership_status *out)
{
	pthread_mutex_lock(&m->mu);
	*out = m->st;
	pthread_mutex_unlock(&m->mu);
	lease_renewer_get_stats(m->renewer, &out->renew);
	out->renewals = out->renew.renewals;
	out->losses = out->renew.losses;
	out->errors += out->renew.errors;
}
