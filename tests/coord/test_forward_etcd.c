/* stress.etcd_forward: coord/forward.h's protocol against a real 3-member
 * etcd (tests/coord/etcd_cluster.sh; without it, SKIP and 77). The hosts
 * are simulated: a client and a lease each.
 *
 * 1. placed_answer_taken_once: a forwarder sends a pod to a target; the
 *    target lists it and answers "placed" in one transaction with its own
 *    fence (its owner key on its lease) and its placement's put; the
 *    forwarder reads the answer once (a second read finds none), its
 *    withdrawal then says the target answered (0), and the placement key
 *    is there. A second send of the same uid while the first waits is
 *    refused (-EEXIST).
 * 2. withdrawn_is_never_placed: withdrawn first (1), the target's answer
 *    commits nothing: 0, request gone, no placement key, no answer.
 * 3. fence_failed_keeps_the_request: the target's fence fails (its owner
 *    key on another lease): 0, the request not gone, nothing committed;
 *    the request still there to be withdrawn.
 * 4. race_exactly_once (FW1): 300 rounds, the target's answer and the
 *    forwarder's withdrawal on two threads released together: in each
 *    round exactly one wins, the placement key exists exactly when the
 *    target won, and an answer is read exactly then. Both sides win some
 *    rounds (otherwise the race was not run).
 * 5. dead_forwarder (FW2): the forwarder's lease revoked: its requests
 *    go, and the target's answer commits nothing (no placement). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coord/coord.h"
#include "etcd_test.h"

static struct etcd_test_cluster cl;
static const char *const cluster = "fwdtest";
static const char pod[] = "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\"}}";

static int64_t grant(struct etcd_client *ec)
{
	int64_t id, ttl;
	assert_int_equal(etcd_lease_grant(ec, 30, &id, &ttl), 0);
	return id;
}

/* The target's own commit: its owner key on its lease (the fence) and
 * its placement's key. */
struct target {
	struct etcd_client *ec;
	int64_t lease;
	char owner[128], placement[128];
	struct etcd_compare fence;
	struct etcd_op put;
};

static void target_up(struct target *t, const char *name)
{
	t->ec = etcd_test_open(cl.endpoints);
	t->lease = grant(t->ec);
	snprintf(t->owner, sizeof(t->owner), "/shmsched/%s/shards/s-%s/owner", cluster, name);
	assert_int_equal(etcd_put(t->ec, t->owner, strlen(t->owner), name, strlen(name),
				  t->lease, NULL), 0);
	t->fence = (struct etcd_compare){.target = ETCD_CMP_LEASE, .result = ETCD_CMP_EQUAL,
					 .key = t->owner, .key_len = strlen(t->owner),
					 .number = t->lease};
}

static void target_placement(struct target *t, const char *uid)
{
	snprintf(t->placement, sizeof(t->placement), "/shmsched/%s/shards/s/pods/%s", cluster,
		 uid);
	t->put = (struct etcd_op){.kind = ETCD_OP_PUT, .key = t->placement,
				  .key_len = strlen(t->placement), .value = "3 n0",
				  .value_len = 4};
}

static bool exists(struct etcd_client *ec, const char *key)
{
	struct etcd_range_result r;
	assert_int_equal(etcd_range(ec, key, strlen(key), NULL, 0, 0, &r), 0);
	bool there = r.n_kvs > 0;
	etcd_range_result_free(&r);
	return there;
}

/* The target's one request for uid: listed, asserted there. */
static struct forward_request listed(struct target *t, const char *uid,
				     struct etcd_range_result *kvs)
{
	struct forward_request rq[8];
	size_t bad = 0;
	int n = forward_list(t->ec, cluster, "host-t", rq, 8, kvs, &bad);
	assert_int_equal(bad, 0);
	for (int i = 0; i < n; i++)
		if (strcmp(rq[i].uid, uid) == 0)
			return rq[i];
	fail_msg("request %s not listed (%d listed)", uid, n);
	return rq[0];
}

static const struct forward_answer placed_n0 = {.placed = true, .node = "n0"};

/* A forwarder (its client and lease) and a target named tname, up. */
static void parties_up(struct etcd_client **fw, int64_t *fl, struct target *t, const char *tname)
{
	*fw = etcd_test_open(cl.endpoints);
	*fl = grant(*fw);
	target_up(t, tname);
}

static void parties_down(struct etcd_client *fw, struct target *t)
{
	etcd_client_close(t->ec);
	etcd_client_close(fw);
}

/* `forwarder` sends pod uid to host-t, which lists it (into kvs: the
 * caller frees it); the target's placement key set for uid. */
static struct forward_request sent(struct etcd_client *fw, int64_t fl, struct target *t,
				   const char *forwarder, const char *uid,
				   struct etcd_range_result *kvs)
{
	target_placement(t, uid);
	assert_int_equal(forward_send(fw, cluster, forwarder, fl, "host-t", uid, pod,
				      sizeof(pod) - 1), 0);
	return listed(t, uid, kvs);
}

static void placed_answer_taken_once(void **state)
{
	(void)state;
	struct etcd_client *fw;
	int64_t fl;
	struct target t;
	parties_up(&fw, &fl, &t, "t1");
	struct etcd_range_result kvs;
	struct forward_request r = sent(fw, fl, &t, "host-f", "a1", &kvs);
	assert_int_equal(forward_send(fw, cluster, "host-f", fl, "host-t", "a1", pod,
				      sizeof(pod) - 1), -EEXIST);
	assert_string_equal(r.forwarder, "host-f");
	assert_int_equal(r.lease, fl);
	assert_int_equal(r.pod_len, sizeof(pod) - 1);
	assert_memory_equal(r.pod, pod, r.pod_len);
	struct forward_answer none;
	char msg[256];
	assert_int_equal(forward_read_answer(fw, cluster, "host-f", "a1", &none, msg,
					     sizeof(msg)), 0);
	bool gone = true;
	assert_int_equal(forward_answer(t.ec, cluster, "host-t", &r, &placed_n0, &t.fence, 1,
					&t.put, 1, &gone), 1);
	assert_false(gone);
	etcd_range_result_free(&kvs);
	assert_true(exists(t.ec, t.placement));
	struct forward_answer a;
	assert_int_equal(forward_read_answer(fw, cluster, "host-f", "a1", &a, msg, sizeof(msg)),
			 1);
	assert_true(a.placed);
	assert_string_equal(a.node, "n0");
	assert_int_equal(forward_read_answer(fw, cluster, "host-f", "a1", &a, msg, sizeof(msg)),
			 0);
	assert_int_equal(forward_withdraw(fw, cluster, "host-t", "a1"), 0);
	parties_down(fw, &t);
}

static void withdrawn_is_never_placed(void **state)
{
	(void)state;
	struct etcd_client *fw;
	int64_t fl;
	struct target t;
	parties_up(&fw, &fl, &t, "t2");
	struct etcd_range_result kvs;
	struct forward_request r = sent(fw, fl, &t, "host-f", "b1", &kvs);
	assert_int_equal(forward_withdraw(fw, cluster, "host-t", "b1"), 1);
	bool gone = false;
	assert_int_equal(forward_answer(t.ec, cluster, "host-t", &r, &placed_n0, &t.fence, 1,
					&t.put, 1, &gone), 0);
	assert_true(gone);
	etcd_range_result_free(&kvs);
	assert_false(exists(t.ec, t.placement));
	struct forward_answer a;
	char msg[256];
	assert_int_equal(forward_read_answer(fw, cluster, "host-f", "b1", &a, msg, sizeof(msg)),
			 0);
	/* Sent again under the uid: the answer read from the first request
	 * (its create revision) cannot take the second. */
	assert_int_equal(forward_send(fw, cluster, "host-f", fl, "host-t", "b1", pod,
				      sizeof(pod) - 1), 0);
	assert_int_equal(forward_answer(t.ec, cluster, "host-t", &r, &placed_n0, &t.fence, 1,
					&t.put, 1, &gone), 0);
	assert_true(gone);
	assert_false(exists(t.ec, t.placement));
	assert_int_equal(forward_withdraw(fw, cluster, "host-t", "b1"), 1);
	parties_down(fw, &t);
}

static void fence_failed_keeps_the_request(void **state)
{
	(void)state;
	struct etcd_client *fw;
	int64_t fl;
	struct target t;
	parties_up(&fw, &fl, &t, "t3");
	t.fence.number = fl; /* not the owner key's lease: the fence fails */
	struct etcd_range_result kvs;
	struct forward_request r = sent(fw, fl, &t, "host-f", "c1", &kvs);
	bool gone = true;
	assert_int_equal(forward_answer(t.ec, cluster, "host-t", &r, &placed_n0, &t.fence, 1,
					&t.put, 1, &gone), 0);
	assert_false(gone);
	etcd_range_result_free(&kvs);
	assert_false(exists(t.ec, t.placement));
	assert_int_equal(forward_withdraw(fw, cluster, "host-t", "c1"), 1);
	parties_down(fw, &t);
}

/* The race: each side waits at the barrier, then acts once. */
struct side {
	struct etcd_client *ec;
	pthread_barrier_t *go;
	struct target *t;
	const struct forward_request *r;
	const char *uid;
	int rc;
	bool gone;
};

static void *answer_side(void *arg)
{
	struct side *s = arg;
	pthread_barrier_wait(s->go);
	s->rc = forward_answer(s->ec, cluster, "host-t", s->r, &placed_n0, &s->t->fence, 1,
			       &s->t->put, 1, &s->gone);
	return NULL;
}

static void *withdraw_side(void *arg)
{
	struct side *s = arg;
	pthread_barrier_wait(s->go);
	s->rc = forward_withdraw(s->ec, cluster, "host-t", s->uid);
	return NULL;
}

static void race_exactly_once(void **state)
{
	(void)state;
	struct etcd_client *fw;
	int64_t fl;
	struct target t;
	parties_up(&fw, &fl, &t, "t4");
	pthread_barrier_t go;
	pthread_barrier_init(&go, NULL, 2);
	unsigned answered = 0, withdrawn = 0, violations = 0;
	for (unsigned i = 0; i < 300; i++) {
		char uid[32];
		snprintf(uid, sizeof(uid), "d%x", i);
		struct etcd_range_result kvs;
		struct forward_request r = sent(fw, fl, &t, "host-f", uid, &kvs);
		struct side a = {.ec = t.ec, .go = &go, .t = &t, .r = &r};
		struct side w = {.ec = fw, .go = &go, .uid = uid};
		pthread_t ta, tw;
		pthread_create(&ta, NULL, answer_side, &a);
		pthread_create(&tw, NULL, withdraw_side, &w);
		pthread_join(ta, NULL);
		pthread_join(tw, NULL);
		etcd_range_result_free(&kvs);
		assert_true(a.rc == 0 || a.rc == 1);
		assert_true(w.rc == 0 || w.rc == 1);
		struct forward_answer ans;
		char msg[256];
		int got = forward_read_answer(fw, cluster, "host-f", uid, &ans, msg, sizeof(msg));
		bool placed = exists(t.ec, t.placement);
		/* FW1: exactly one side won; the placement and the answer
		 * exactly when the target did. */
		if (a.rc + w.rc != 1 || placed != (a.rc == 1) || got != a.rc ||
		    (a.rc == 0 && !a.gone))
			violations++;
		answered += a.rc == 1;
		withdrawn += w.rc == 1;
	}
	pthread_barrier_destroy(&go);
	printf("race: %u rounds answered by the target, %u withdrawn first, %u violations\n",
	       answered, withdrawn, violations);
	assert_int_equal(violations, 0);
	assert_int_equal(answered + withdrawn, 300);
	/* Both outcomes seen, or the race was never run. */
	assert_true(answered > 0);
	assert_true(withdrawn > 0);
	parties_down(fw, &t);
}

static void dead_forwarder(void **state)
{
	(void)state;
	struct etcd_client *fw;
	int64_t fl;
	struct target t;
	parties_up(&fw, &fl, &t, "t5");
	struct etcd_range_result kvs;
	struct forward_request r = sent(fw, fl, &t, "host-g", "e1", &kvs);
	assert_int_equal(etcd_lease_revoke(fw, fl), 0);
	bool gone = false;
	assert_int_equal(forward_answer(t.ec, cluster, "host-t", &r, &placed_n0, &t.fence, 1,
					&t.put, 1, &gone), 0);
	assert_true(gone);
	etcd_range_result_free(&kvs);
	assert_false(exists(t.ec, t.placement));
	struct forward_request rq[8];
	size_t bad = 0;
	int n = forward_list(t.ec, cluster, "host-t", rq, 8, &kvs, &bad);
	for (int i = 0; i < n; i++)
		assert_string_not_equal(rq[i].uid, "e1");
	etcd_range_result_free(&kvs);
	parties_down(fw, &t);
}

int main(void)
{
	int rc = etcd_test_cluster_from_env(&cl);
	if (rc != 0)
		return rc; /* 77: skipped */
	setvbuf(stdout, NULL, _IOLBF, 0);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(placed_answer_taken_once),
		cmocka_unit_test(withdrawn_is_never_placed),
		cmocka_unit_test(fence_failed_keeps_the_request),
		cmocka_unit_test(race_exactly_once),
		cmocka_unit_test(dead_forwarder),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
