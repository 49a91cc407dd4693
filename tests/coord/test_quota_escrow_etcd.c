/* tests/coord: quota by escrow's rounds through a real etcd
 * (coord/quota_escrow_round.h), started by tests/coord/etcd_cluster.sh
 * (SHMSCHED_ETCD_ENDPOINTS). Without it the program prints SKIP and
 * exits 77. The hosts here are simulated (a client and a lease each, what
 * they admit against kept in the test); shmschedd's hosts are in
 * stress.etcd_hosts (quota_by_escrow).
 *
 * 1. two_hosts_then_one: a queue of 4 cpu (4000 millicores) and 8 Gi of
 *    memory over 4 shards, two hosts owning 2 each: after the rounds the
 *    hosts admit against 2 cpu each, 4 in all (each host alone against the
 *    whole 4, as shmschedd does today, would be 8); one host's lease is
 *    revoked (a crash: etcd deletes its owner and acknowledgement keys),
 *    the other takes its shards and after the rounds admits against the
 *    whole 4 cpu.
 * 2. rebalance_waits_for_the_shrink: a shard's pods want 2 cpu more;
 *    the first round shrinks the other shards' slices and does not grow
 *    the asking shard's, nor does a second round; only once the owners
 *    acknowledged the shrinks does the next round grow it (to 3 cpu), all
 *    of the 4 admitted.
 * 3. many_shards_in_two_rounds: 60 shards, more than a round writes
 *    (QUOTA_ESCROW_ROUND_WRITES): the first round writes 42 slices, the
 *    next the other 18, and the hosts then admit against the whole 4 cpu.
 * 4. random_steps_keep_qe1: three hosts and a coordinator in random order
 *    (a round's read and its write apart, so that takes, acknowledgements,
 *    releases and crashes fall between them; crashes of hosts and of the
 *    coordinator, between a round's read and write and between phases):
 *    after every step, what live hosts admit against sums to at most the
 *    nominal in each cell (QE1); some rounds were refused by their
 *    compares and some committed; then, calm, the hosts admit against
 *    exactly the nominal.
 * 5. member_orders_force_and_keys: coord/quota_escrow_member.h, the
 *    membership's side, for two hosts of two shards each: after a few
 *    ticks each has 2 cpu in force; a host whose swap fails (in_force
 *    answers an error) acknowledges nothing (QE5), and acknowledges the
 *    slice's revision once a swap succeeds; a release puts the shard's
 *    slice out of force while its owner key still exists, then deletes
 *    its owner and acknowledgement keys (QE6).
 * 6. member_reports_use: the use reports (QE7): host 0 uses its 2 cpu
 *    and has 2 cpu more waiting, host 1 uses nothing: host 0's use keys
 *    say 1 cpu used and 1 more a shard (read back from etcd), host 1 puts
 *    none, a tick with the same use writes nothing (the keys' revisions
 *    stay), and the coordinator moves host 1's 2 cpu to host 0, never
 *    more than 4 cpu in force on both at any tick (QE1). Then host 1
 *    wants 2 cpu and host 0's use falls to 2 cpu with nothing waiting:
 *    the room goes back, 2 and 2. On the old code (no use reports) no
 *    use key appears and the split stays 2 and 2. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "coord/coord.h"

#define SHARDS_MAX 60
#define HOSTS 3
#define CELLS 2
#define TTL_S 30

static const char *endpoints;
static char prefix[128];
static const char *const queue = "team-a";
static shard_name_t shards[SHARDS_MAX];
static size_t n_shards;
static struct quota_escrow_value nominal;
static uint64_t rng = 0x2545f4914f6cdd1dull;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

struct host {
	struct etcd_client *c;
	int64_t lease; /* 0: crashed */
	int64_t applied[SHARDS_MAX][CELLS]; /* what it admits against */
	int64_t applied_rev[SHARDS_MAX];    /* -1: not admitting there */
	bool pending[SHARDS_MAX], to_ack[SHARDS_MAX];
	struct quota_escrow_value read[SHARDS_MAX];
	int64_t read_rev[SHARDS_MAX];
};

static struct host hosts[HOSTS];
static struct etcd_client *coord_client;
static int64_t coord_lease;
static struct quota_escrow_round *round_state;
static bool planned;
static size_t planned_writes;
static uint64_t committed_rounds, refused_rounds;

static struct etcd_client *client(void)
{
	struct etcd_client *c;
	char err[256];
	struct etcd_client_options o = {.timeout_ms = 10000};
	if (etcd_client_open(&c, endpoints, &o, err, sizeof(err)) != 0)
		fail_msg("etcd client: %s", err);
	return c;
}

static int64_t grant(struct etcd_client *c)
{
	int64_t id = 0, ttl = 0;
	assert_int_equal(etcd_lease_grant(c, TTL_S, &id, &ttl), 0);
	return id;
}

static size_t key(char *buf, size_t len, const char *a, const char *b, const char *c)
{
	int n = snprintf(buf, len, "%s%s%s%s", prefix, a, b, c);
	assert_true(n > 0 && (size_t)n < len);
	return (size_t)n;
}

/* CREATE(key) == 0, then put it with the lease. */
static bool put_if_absent(struct etcd_client *c, const char *k, size_t kl, int64_t lease)
{
	struct etcd_compare cmp = {.target = ETCD_CMP_CREATE, .result = ETCD_CMP_EQUAL,
				   .key = k, .key_len = kl};
	struct etcd_op put = {.kind = ETCD_OP_PUT, .key = k, .key_len = kl, .value = "x",
			      .value_len = 1, .lease = lease};
	struct etcd_txn t = {&cmp, 1, &put, 1, NULL, 0};
	struct etcd_txn_result r;
	assert_int_equal(etcd_txn(c, &t, &r), 0);
	bool ok = r.succeeded;
	etcd_txn_result_free(&r);
	return ok;
}

static void host_stop_on(struct host *h, size_t s)
{
	memset(h->applied[s], 0, sizeof(h->applied[s]));
	h->applied_rev[s] = -1;
	h->pending[s] = h->to_ack[s] = false;
}

static void host_join(struct host *h)
{
	h->lease = grant(h->c);
	for (size_t s = 0; s < n_shards; s++)
		host_stop_on(h, s);
}

static void coordinator_join(void)
{
	char k[256];
	size_t kl = key(k, sizeof(k), "coordinator", "", "");
	coord_lease = grant(coord_client);
	assert_true(put_if_absent(coord_client, k, kl, coord_lease));
	planned = false;
}

static void setup_world(const char *name, size_t n)
{
	n_shards = n;
	for (size_t s = 0; s < n; s++)
		snprintf(shards[s], sizeof(shards[s]), "z%zu", s);
	snprintf(prefix, sizeof(prefix), "/shmsched/escrow-%s-%d/", name, (int)getpid());
	memset(&nominal, 0, sizeof(nominal));
	nominal.kind = QUOTA_ESCROW_SLICE;
	nominal.n = CELLS;
	strcpy(nominal.cells[0].flavor, "default");
	strcpy(nominal.cells[0].resource, "cpu");
	nominal.cells[0].amount = 4000;
	strcpy(nominal.cells[1].flavor, "default");
	strcpy(nominal.cells[1].resource, "memory");
	nominal.cells[1].amount = 8589934592;
	coord_client = client();
	coordinator_join();
	for (int h = 0; h < HOSTS; h++) {
		hosts[h].c = client();
		host_join(&hosts[h]);
	}
	round_state = quota_escrow_round_new();
	assert_non_null(round_state);
	committed_rounds = refused_rounds = 0;
}

static void teardown_world(void)
{
	for (int h = 0; h < HOSTS; h++) {
		if (hosts[h].lease != 0)
			(void)etcd_lease_revoke(hosts[h].c, hosts[h].lease);
		etcd_client_close(hosts[h].c);
	}
	(void)etcd_lease_revoke(coord_client, coord_lease);
	uint8_t end[sizeof(prefix)];
	size_t el = etcd_prefix_end(prefix, strlen(prefix), end);
	(void)etcd_delete(coord_client, prefix, strlen(prefix), end, el, NULL);
	etcd_client_close(coord_client);
	quota_escrow_round_free(round_state);
}

static void coord_read(void)
{
	char err[512];
	size_t writes;
	int rc = quota_escrow_round_read(round_state, coord_client, prefix, queue, &nominal,
					 (const char(*)[SHARD_NAME_MAX])shards, n_shards, &writes,
					 err, sizeof(err));
	if (rc != 0)
		fail_msg("round read: %s", err);
	planned = true;
	planned_writes = writes;
}

static void coord_write(void)
{
	if (!planned)
		return;
	planned = false;
	char err[512];
	bool committed;
	int rc = quota_escrow_round_write(round_state, coord_client, coord_lease, &committed, err,
					  sizeof(err));
	if (rc != 0)
		fail_msg("round write: %s", err);
	committed_rounds += committed;
}

/* The owner key's holder now (-1: none). */
static int owner_of(size_t s)
{
	char k[256];
	size_t kl = key(k, sizeof(k), "shards/", shards[s], "/owner");
	struct etcd_range_result r;
	assert_int_equal(etcd_range(coord_client, k, kl, NULL, 0, 0, &r), 0);
	int who = -1;
	for (int h = 0; r.n_kvs > 0 && h < HOSTS; h++)
		if (hosts[h].lease != 0 && r.kvs[0].lease == hosts[h].lease)
			who = h;
	etcd_range_result_free(&r);
	return who;
}

static void take(int h, size_t s)
{
	char k[256];
	size_t kl = key(k, sizeof(k), "shards/", shards[s], "/owner");
	if (hosts[h].lease != 0 && put_if_absent(hosts[h].c, k, kl, hosts[h].lease))
		host_stop_on(&hosts[h], s);
}

static void read_slice(int h, size_t s)
{
	struct host *hs = &hosts[h];
	char err[512];
	if (hs->lease == 0)
		return;
	int rc = quota_escrow_read_slice(hs->c, prefix, queue, shards[s], &hs->read[s],
					 &hs->read_rev[s], err, sizeof(err));
	if (rc != 0)
		fail_msg("read slice: %s", err);
	hs->pending[s] = true;
}

/* QE4: never an older revision than the one in force. */
static void apply(int h, size_t s)
{
	struct host *hs = &hosts[h];
	if (hs->lease == 0 || !hs->pending[s] || hs->read_rev[s] <= hs->applied_rev[s])
		return;
	hs->pending[s] = false;
	memset(hs->applied[s], 0, sizeof(hs->applied[s]));
	for (size_t i = 0; i < hs->read[s].n; i++)
		for (size_t j = 0; j < CELLS; j++)
			if (strcmp(hs->read[s].cells[i].resource, nominal.cells[j].resource) == 0)
				hs->applied[s][j] = hs->read[s].cells[i].amount;
	hs->applied_rev[s] = hs->read_rev[s];
	hs->to_ack[s] = true;
}

static void put_owned(int h, size_t s, struct quota_escrow_value *v)
{
	char err[512];
	bool owned;
	int rc = quota_escrow_put_owned(hosts[h].c, prefix, queue, shards[s], hosts[h].lease, v,
					&owned, err, sizeof(err));
	if (rc != 0)
		fail_msg("put owned: %s", err);
}

static void ack(int h, size_t s)
{
	struct host *hs = &hosts[h];
	if (hs->lease == 0 || !hs->to_ack[s] || hs->applied_rev[s] < 0)
		return;
	struct quota_escrow_value v = nominal;
	v.kind = QUOTA_ESCROW_ACK;
	v.revision = hs->applied_rev[s];
	for (size_t j = 0; j < CELLS; j++)
		v.cells[j].amount = hs->applied[s][j];
	put_owned(h, s, &v);
	hs->to_ack[s] = false;
}

static void report_use(int h, size_t s, bool none)
{
	struct host *hs = &hosts[h];
	if (hs->lease == 0)
		return;
	struct quota_escrow_value v = nominal;
	v.kind = QUOTA_ESCROW_USE;
	for (size_t j = 0; j < CELLS; j++) {
		int64_t half = nominal.cells[j].amount / 2;
		v.cells[j].amount = none ? 0 : (int64_t)(rnd() % (uint64_t)(half / 2 + 1));
		v.cells[j].more = none || rnd() % 2 ? 0 : (int64_t)(rnd() % (uint64_t)(half + 1));
	}
	put_owned(h, s, &v);
}

static void release(int h, size_t s)
{
	struct host *hs = &hosts[h];
	if (hs->lease == 0)
		return;
	host_stop_on(hs, s); /* stop admitting first */
	char err[512];
	bool owned;
	const char *const queues[] = {queue};
	int rc = quota_escrow_release_keys(hs->c, prefix, shards[s], hs->lease, queues, 1,
					   &owned, err, sizeof(err));
	if (rc != 0)
		fail_msg("release: %s", err);
}

static void crash(int h)
{
	struct host *hs = &hosts[h];
	if (hs->lease == 0)
		return;
	for (size_t s = 0; s < n_shards; s++)
		host_stop_on(hs, s); /* the gate: nothing from now */
	assert_int_equal(etcd_lease_revoke(hs->c, hs->lease), 0); /* its keys go */
	hs->lease = 0;
}

/* QE1 in each cell: what live hosts admit against. */
static void check_qe1(void)
{
	for (size_t j = 0; j < CELLS; j++) {
		int64_t admitted = 0;
		for (int h = 0; h < HOSTS; h++)
			for (size_t s = 0; s < n_shards && hosts[h].lease != 0; s++)
				admitted += hosts[h].applied[s][j];
		if (admitted > nominal.cells[j].amount)
			fail_msg("QE1: %s admitted against %lld, nominal %lld",
				 nominal.cells[j].resource, (long long)admitted,
				 (long long)nominal.cells[j].amount);
	}
}

static int64_t admitted_by(int h, size_t j)
{
	int64_t a = 0;
	for (size_t s = 0; s < n_shards && hosts[h].lease != 0; s++)
		a += hosts[h].applied[s][j];
	return a;
}

/* Rounds until nothing changes: the coordinator, then every owner reads,
 * applies and acknowledges. */
static void settle(void)
{
	for (int i = 0; i < 8; i++) {
		coord_read();
		coord_write();
		check_qe1();
		for (size_t s = 0; s < n_shards; s++) {
			int h = owner_of(s);
			if (h < 0)
				continue;
			read_slice(h, s);
			apply(h, s);
			ack(h, s);
			check_qe1();
		}
	}
}

static void two_hosts_then_one(void **state)
{
	(void)state;
	setup_world("two", 4);
	crash(2); /* two hosts only */
	for (size_t s = 0; s < n_shards; s++)
		take((int)(s % 2), s);
	settle();
	assert_int_equal(admitted_by(0, 0), 2000);
	assert_int_equal(admitted_by(1, 0), 2000);
	assert_int_equal(admitted_by(0, 0) + admitted_by(1, 0), 4000); /* not 8000 */
	assert_int_equal(admitted_by(0, 1) + admitted_by(1, 1), 8589934592);
	crash(1);
	for (size_t s = 0; s < n_shards; s++)
		take(0, s);
	settle();
	assert_int_equal(admitted_by(0, 0), 4000);
	assert_int_equal(admitted_by(0, 1), 8589934592);
	print_message("two hosts: 2000m + 2000m of 4000m; one left: 4000m; rounds committed "
		      "%llu\n", (unsigned long long)committed_rounds);
	teardown_world();
}

static int64_t slice_of(size_t s, size_t j)
{
	struct quota_escrow_value v;
	int64_t rev;
	char err[512];
	if (quota_escrow_read_slice(coord_client, prefix, queue, shards[s], &v, &rev, err,
				    sizeof(err)) != 0)
		fail_msg("read slice: %s", err);
	return v.n > j ? v.cells[j].amount : 0;
}

static void rebalance_waits_for_the_shrink(void **state)
{
	(void)state;
	setup_world("rebalance", 4);
	crash(2);
	for (size_t s = 0; s < n_shards; s++)
		take((int)(s % 2), s);
	settle();
	/* Host 0's pods on z0 use its 1 cpu and want 2 more. */
	struct quota_escrow_value use = nominal;
	use.kind = QUOTA_ESCROW_USE;
	use.cells[0].amount = 1000;
	use.cells[0].more = 2000;
	use.cells[1].amount = use.cells[1].more = 0;
	put_owned(0, 0, &use);
	/* Phase one: the others shrink; z0 does not grow yet (z1 and z3 are
	 * host 1's, not acknowledged; z2 is host 0's, not applied). */
	coord_read();
	coord_write();
	assert_int_equal(slice_of(0, 0), 1000);
	int64_t shrunk = slice_of(1, 0) + slice_of(2, 0) + slice_of(3, 0);
	assert_int_equal(shrunk, 1000);
	/* Another round before the acknowledgements: still no growth (the
	 * older acknowledgements are not of the shrunk slices' revisions). */
	coord_read();
	coord_write();
	assert_int_equal(slice_of(0, 0), 1000);
	/* The owners put the shrinks in force and acknowledge them. */
	for (size_t s = 1; s < n_shards; s++) {
		read_slice((int)(s % 2), s);
		apply((int)(s % 2), s);
		ack((int)(s % 2), s);
		check_qe1();
	}
	/* Phase two: now z0 grows into the room. */
	coord_read();
	coord_write();
	assert_int_equal(slice_of(0, 0), 3000);
	read_slice(0, 0);
	apply(0, 0);
	check_qe1();
	assert_int_equal(admitted_by(0, 0) + admitted_by(1, 0), 4000);
	teardown_world();
}

/* More shards than one round writes: the first round grows the first
 * QUOTA_ESCROW_ROUND_WRITES slices, the next the rest. */
static void many_shards_in_two_rounds(void **state)
{
	(void)state;
	setup_world("many", SHARDS_MAX);
	crash(2);
	for (size_t s = 0; s < n_shards; s++)
		take((int)(s % 2), s);
	for (int i = 0; i < 3; i++) {
		/* The owners acknowledge what they read (first: no slice). */
		for (size_t s = 0; s < n_shards; s++) {
			read_slice((int)(s % 2), s);
			apply((int)(s % 2), s);
			ack((int)(s % 2), s);
		}
		check_qe1();
		if (i == 2)
			break;
		coord_read();
		assert_int_equal(planned_writes, i == 0 ? QUOTA_ESCROW_ROUND_WRITES
						       : SHARDS_MAX - QUOTA_ESCROW_ROUND_WRITES);
		coord_write();
	}
	assert_int_equal(admitted_by(0, 0) + admitted_by(1, 0), 4000);
	assert_int_equal(slice_of(0, 0), 67); /* 4000 / 60, one more to the first 40 */
	assert_int_equal(slice_of(SHARDS_MAX - 1, 0), 66);
	settle();
	assert_int_equal(admitted_by(0, 0) + admitted_by(1, 0), 4000);
	teardown_world();
}

static void random_steps_keep_qe1(void **state)
{
	(void)state;
	setup_world("random", 4);
	for (int i = 0; i < 1500; i++) {
		int h = (int)(rnd() % HOSTS);
		size_t s = (size_t)(rnd() % n_shards);
		unsigned action = (unsigned)(rnd() % 100);
		if (action < 10) {
			coord_read();
		} else if (action < 20) {
			uint64_t before = committed_rounds;
			bool had = planned && planned_writes > 0;
			coord_write();
			refused_rounds += had && committed_rounds == before;
		} else if (action < 30) {
			take(h, s);
		} else if (action < 45) {
			int o = owner_of(s);
			if (o >= 0)
				read_slice(o, s);
		} else if (action < 60) {
			int o = owner_of(s);
			if (o >= 0)
				apply(o, s);
		} else if (action < 75) {
			int o = owner_of(s);
			if (o >= 0)
				ack(o, s);
		} else if (action < 85) {
			int o = owner_of(s);
			if (o >= 0)
				report_use(o, s, false);
		} else if (action < 90) {
			int o = owner_of(s);
			if (o >= 0)
				release(o, s);
		} else if (action < 93) {
			crash(h);
		} else if (action < 96) {
			if (hosts[h].lease == 0)
				host_join(&hosts[h]);
		} else {
			/* The coordinator crashes (its plan lost) and a new
			 * one is elected once its key is gone. */
			assert_int_equal(etcd_lease_revoke(coord_client, coord_lease), 0);
			coordinator_join();
		}
		check_qe1();
	}
	/* Calm: every host back, every shard owned, no use. */
	for (int h = 0; h < HOSTS; h++)
		if (hosts[h].lease == 0)
			host_join(&hosts[h]);
	for (size_t s = 0; s < n_shards; s++) {
		if (owner_of(s) < 0)
			take((int)(s % HOSTS), s);
		assert_true(owner_of(s) >= 0);
		report_use(owner_of(s), s, true);
	}
	settle();
	for (size_t j = 0; j < CELLS; j++) {
		int64_t all = 0;
		for (int h = 0; h < HOSTS; h++)
			all += admitted_by(h, j);
		assert_int_equal(all, nominal.cells[j].amount);
	}
	print_message("random steps: rounds committed %llu, refused by their compares %llu\n",
		      (unsigned long long)committed_rounds, (unsigned long long)refused_rounds);
	assert_true(committed_rounds > 10);
	assert_true(refused_rounds > 0);
	teardown_world();
}

/* 5. The membership's side (coord/quota_escrow_member.h). */
struct member_host {
	int h;
	struct quota_escrow_member *m;
	int64_t cpu;     /* the sums last put in force */
	bool fail;       /* in_force answers an error */
	int release_of;  /* >= 0: a release of this shard is under way */
	int owner_seen;  /* owner_of(release_of) inside in_force */
};

static int member_in_force(void *arg, const struct quota_escrow_value *sums, size_t n)
{
	struct member_host *mh = arg;
	assert_int_equal(n, 1);
	if (mh->release_of >= 0)
		mh->owner_seen = owner_of((size_t)mh->release_of);
	if (mh->fail)
		return -EAGAIN;
	mh->cpu = sums[0].cells[0].amount;
	return 0;
}

/* The ack key's revision of host-owned shard s (-1: no key). */
static int64_t ack_revision(size_t s)
{
	char k[256];
	size_t kl = key(k, sizeof(k), "quota/", queue, "/");
	kl += (size_t)snprintf(k + kl, sizeof(k) - kl, "%s/ack", shards[s]);
	struct etcd_range_result r;
	assert_int_equal(etcd_range(coord_client, k, kl, NULL, 0, 0, &r), 0);
	int64_t rev = -1;
	if (r.n_kvs > 0) {
		struct quota_escrow_value v;
		char msg[128];
		assert_int_equal(quota_escrow_value_decode(r.kvs[0].value, r.kvs[0].value_len, &v,
							   msg, sizeof(msg)), 0);
		rev = v.revision;
	}
	etcd_range_result_free(&r);
	return rev;
}

static int member_tick(struct member_host *mh, const shard_name_t *owned, size_t n)
{
	char err[512];
	return quota_escrow_member_owned(mh->m, hosts[mh->h].c, prefix, hosts[mh->h].lease,
					 (const char(*)[SHARD_NAME_MAX])owned, n, err, sizeof(err));
}

static void member_orders_force_and_keys(void **state)
{
	(void)state;
	setup_world("member", 4);
	struct quota_escrow_queue q;
	memset(&q, 0, sizeof(q));
	snprintf(q.name, sizeof(q.name), "%s", queue);
	q.nominal = nominal;
	struct member_host mh[2];
	shard_name_t owned[2][2];
	for (int h = 0; h < 2; h++) {
		mh[h] = (struct member_host){.h = h, .release_of = -1, .owner_seen = -1};
		mh[h].m = quota_escrow_member_new(&q, 1, member_in_force, &mh[h]);
		assert_non_null(mh[h].m);
		for (size_t k = 0; k < 2; k++) {
			take(h, (size_t)h * 2 + k);
			memcpy(owned[h][k], shards[h * 2 + k], SHARD_NAME_MAX);
		}
	}
	struct quota_escrow_member *coord = quota_escrow_member_new(&q, 1, NULL, NULL);
	assert_non_null(coord);
	char err[512];
	for (int tick = 0; tick < 4; tick++) {
		assert_int_equal(quota_escrow_member_coordinate(coord, coord_client, prefix,
								coord_lease,
								(const char(*)[SHARD_NAME_MAX])shards,
								n_shards, err, sizeof(err)), 0);
		if (tick == 1)
			mh[0].fail = true; /* its first read of a written slice */
		for (int h = 0; h < 2; h++) {
			int rc = member_tick(&mh[h], (const shard_name_t *)owned[h], 2);
			if (mh[h].fail) {
				assert_int_equal(rc, -EAGAIN);
				/* QE5: the acknowledgements stay at revision 0. */
				assert_int_equal(ack_revision(0), 0);
				assert_int_equal(ack_revision(1), 0);
				mh[h].fail = false;
			} else {
				assert_int_equal(rc, 0);
			}
		}
	}
	assert_int_equal(mh[0].cpu, 2000);
	assert_int_equal(mh[1].cpu, 2000);
	assert_true(ack_revision(0) > 0);
	assert_true(ack_revision(3) > 0);
	/* QE6: host 0 releases z0: out of force while its owner key exists. */
	mh[0].release_of = 0;
	bool gone = false;
	assert_int_equal(quota_escrow_member_release(mh[0].m, hosts[0].c, prefix, hosts[0].lease,
						     shards[0], &gone, err, sizeof(err)), 0);
	assert_true(gone);
	assert_int_equal(mh[0].owner_seen, 0);
	assert_int_equal(mh[0].cpu, 1000);
	assert_int_equal(owner_of(0), -1);
	assert_int_equal(ack_revision(0), -1);
	assert_true(ack_revision(1) > 0);
	for (int h = 0; h < 2; h++)
		quota_escrow_member_free(mh[h].m);
	quota_escrow_member_free(coord);
	teardown_world();
}

/* 6. The use reports (QE7). */
struct use_host {
	struct member_host mh;
	int64_t use, more; /* cpu, millicores */
	unsigned calls;
};

static int member_use(void *arg, struct quota_escrow_value *use, size_t n)
{
	struct use_host *uh = arg;
	assert_int_equal(n, 1);
	assert_int_equal(use[0].kind, QUOTA_ESCROW_USE);
	assert_int_equal(use[0].n, CELLS);
	assert_string_equal(use[0].cells[0].resource, "cpu");
	use[0].cells[0].amount = uh->use;
	use[0].cells[0].more = uh->more;
	uh->calls++;
	return 0;
}

static int use_in_force(void *arg, const struct quota_escrow_value *sums, size_t n)
{
	struct use_host *uh = arg;
	return member_in_force(&uh->mh, sums, n);
}

/* Shard s's use key: its cpu use and more (false: no key), and its
 * modification revision. */
static bool use_of(size_t s, int64_t *use, int64_t *more, int64_t *mod)
{
	char k[256];
	size_t kl = key(k, sizeof(k), "quota/", queue, "/");
	kl += (size_t)snprintf(k + kl, sizeof(k) - kl, "%s/use", shards[s]);
	struct etcd_range_result r;
	assert_int_equal(etcd_range(coord_client, k, kl, NULL, 0, 0, &r), 0);
	bool there = r.n_kvs > 0;
	if (there) {
		struct quota_escrow_value v;
		char msg[128];
		assert_int_equal(quota_escrow_value_decode(r.kvs[0].value, r.kvs[0].value_len, &v,
							   msg, sizeof(msg)), 0);
		assert_int_equal(v.kind, QUOTA_ESCROW_USE);
		*use = v.cells[0].amount;
		*more = v.cells[0].more;
		*mod = r.kvs[0].mod_revision;
	}
	etcd_range_result_free(&r);
	return there;
}

/* Ticks (the coordinator's rounds, then each host's) until host 0 has
 * cpu0 and host 1 cpu1 in force (at most 30); QE1 checked on the
 * sums in force after each host's step. How many ticks. */
static int use_ticks(struct quota_escrow_member *coord, struct use_host *uh,
		     shard_name_t (*owned)[2], int64_t cpu0, int64_t cpu1)
{
	char err[512];
	for (int tick = 0; tick < 30; tick++) {
		if (uh[0].mh.cpu == cpu0 && uh[1].mh.cpu == cpu1)
			return tick;
		assert_int_equal(quota_escrow_member_coordinate(coord, coord_client, prefix,
								coord_lease,
								(const char(*)[SHARD_NAME_MAX])shards,
								n_shards, err, sizeof(err)), 0);
		for (int h = 0; h < 2; h++) {
			assert_int_equal(member_tick(&uh[h].mh, (const shard_name_t *)owned[h], 2), 0);
			if (uh[0].mh.cpu + uh[1].mh.cpu > nominal.cells[0].amount)
				fail_msg("QE1: %lld + %lld cpu in force, nominal %lld",
					 (long long)uh[0].mh.cpu, (long long)uh[1].mh.cpu,
					 (long long)nominal.cells[0].amount);
		}
	}
	fail_msg("hosts at %lld and %lld cpu after 30 ticks; expected %lld and %lld",
		 (long long)uh[0].mh.cpu, (long long)uh[1].mh.cpu, (long long)cpu0,
		 (long long)cpu1);
	return -1;
}

static void member_reports_use(void **state)
{
	(void)state;
	setup_world("use", 4);
	struct quota_escrow_queue q;
	memset(&q, 0, sizeof(q));
	snprintf(q.name, sizeof(q.name), "%s", queue);
	q.nominal = nominal;
	struct use_host uh[2];
	shard_name_t owned[2][2];
	memset(uh, 0, sizeof(uh));
	for (int h = 0; h < 2; h++) {
		uh[h].mh = (struct member_host){.h = h, .release_of = -1, .owner_seen = -1};
		uh[h].mh.m = quota_escrow_member_new(&q, 1, use_in_force, &uh[h]);
		assert_non_null(uh[h].mh.m);
		quota_escrow_member_set_use(uh[h].mh.m, member_use);
		for (size_t k = 0; k < 2; k++) {
			take(h, (size_t)h * 2 + k);
			memcpy(owned[h][k], shards[h * 2 + k], SHARD_NAME_MAX);
		}
	}
	struct quota_escrow_member *coord = quota_escrow_member_new(&q, 1, NULL, NULL);
	assert_non_null(coord);
	/* The even split first, nothing used. */
	use_ticks(coord, uh, owned, 2000, 2000);
	int64_t use, more, mod, mod2;
	for (size_t s = 0; s < 4; s++)
		assert_false(use_of(s, &use, &more, &mod));
	/* Host 0 uses its 2 cpu and 2 more wait: reported, 1 + 1 a shard. */
	uh[0].use = 2000;
	uh[0].more = 2000;
	char err[512];
	assert_int_equal(member_tick(&uh[0].mh, (const shard_name_t *)owned[0], 2), 0);
	for (size_t s = 0; s < 2; s++) {
		assert_true(use_of(s, &use, &more, &mod));
		assert_int_equal(use, 1000);
		assert_int_equal(more, 1000);
	}
	(void)use_of(0, &use, &more, &mod);
	assert_int_equal(member_tick(&uh[0].mh, (const shard_name_t *)owned[0], 2), 0);
	assert_true(use_of(0, &use, &more, &mod2));
	assert_int_equal(mod2, mod); /* unchanged: not written again */
	assert_true(uh[0].calls >= 2);
	/* The coordinator moves host 1's room to host 0. */
	int ticks = use_ticks(coord, uh, owned, 4000, 0);
	print_message("use reports: host 0 at 4 cpu after %d ticks\n", ticks);
	for (size_t s = 2; s < 4; s++)
		assert_false(use_of(s, &use, &more, &mod));
	/* Host 1's pods wait; host 0 runs 2 cpu, nothing waiting: back to
	 * 2 and 2. Host 0's use fills its slices in shard order: z0 2 cpu. */
	uh[0].use = 2000;
	uh[0].more = 0;
	uh[1].more = 2000;
	ticks = use_ticks(coord, uh, owned, 2000, 2000);
	print_message("use reports: back to 2 and 2 cpu after %d ticks\n", ticks);
	assert_true(use_of(0, &use, &more, &mod));
	assert_int_equal(more, 0);
	assert_true(use_of(2, &use, &more, &mod));
	assert_int_equal(use, 0);
	assert_int_equal(more, 1000);
	/* A release deletes the use key with the others. */
	bool gone = false;
	assert_int_equal(quota_escrow_member_release(uh[1].mh.m, hosts[1].c, prefix,
						     hosts[1].lease, shards[2], &gone, err,
						     sizeof(err)), 0);
	assert_true(gone);
	assert_false(use_of(2, &use, &more, &mod));
	for (int h = 0; h < 2; h++)
		quota_escrow_member_free(uh[h].mh.m);
	quota_escrow_member_free(coord);
	teardown_world();
}

int main(void)
{
	endpoints = getenv("SHMSCHED_ETCD_ENDPOINTS");
	if (endpoints == NULL || endpoints[0] == '\0') {
		printf("SKIP: run under tests/coord/etcd_cluster.sh (SHMSCHED_ETCD_ENDPOINTS "
		       "unset)\n");
		return 77;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(two_hosts_then_one),
		cmocka_unit_test(rebalance_waits_for_the_shrink),
		cmocka_unit_test(many_shards_in_two_rounds),
		cmocka_unit_test(random_steps_keep_qe1),
		cmocka_unit_test(member_orders_force_and_keys),
		cmocka_unit_test(member_reports_use),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
