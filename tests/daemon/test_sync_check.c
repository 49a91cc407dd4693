/* unit.sync_check: the sync guarantee's checker (sync_check.h) on made-up
 * answers and etcd histories, one case a verdict: a clean run passes,
 * and each kind of fault (lost, phantom, twice, unfenced, overcommit by
 * the answers or by the keys at the end) is counted and fails it, so the
 * stress runs of failover_load.c can fail. The uid's first half is
 * learned from the answers (a restarted host may mix its incarnation in);
 * the fallback is FNV-1a 64 of the host's name, as daemon/etcd_sync.c
 * writes it: the known vector for "a" (0xaf63dc4c8601ec8c) pins it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "sync_check.h"

static const char *const hosts[2] = {"host-a", "host-b"};
static const struct sync_node nodes[2] = {{"n0", 2000, 4ll << 30}, {"n1", 2000, 4ll << 30}};

struct run {
	struct sync_answer a[16];
	size_t na;
	struct sync_event e[32];
	size_t ne;
	size_t died[2];
	struct sync_incarnation inc[4];
	size_t n_inc;
	bool lost_ok;
	struct sync_report r;
};

static void uid(int host, uint64_t id, char *out)
{
	snprintf(out, SYNC_NAME_MAX, "%016" PRIx64 "%016" PRIx64, sync_host_hash(hosts[host]),
		 id);
}

static void owner(struct run *r, int64_t rev, const char *shard, int host)
{
	struct sync_event *e = &r->e[r->ne++];
	*e = (struct sync_event){.revision = rev, .kind = SYNC_EVENT_OWNER, .deleted = host < 0};
	snprintf(e->shard, sizeof(e->shard), "%s", shard);
	if (host >= 0)
		snprintf(e->name, sizeof(e->name), "%s", hosts[host]);
}

static void put(struct run *r, int64_t rev, const char *shard, int host, uint64_t id,
		const char *node, int64_t cpu)
{
	struct sync_event *e = &r->e[r->ne++];
	*e = (struct sync_event){.revision = rev, .kind = SYNC_EVENT_POD, .cpu_milli = cpu,
				 .mem_bytes = 1 << 20, .version = 1};
	snprintf(e->shard, sizeof(e->shard), "%s", shard);
	snprintf(e->node, sizeof(e->node), "%s", node);
	uid(host, id, e->name);
}

/* A put whose uid's first half is hi (a host mixing in its incarnation). */
static void put_hi(struct run *r, int64_t rev, const char *shard, uint64_t hi, uint64_t id,
		   const char *node, int64_t cpu)
{
	put(r, rev, shard, 0, id, node, cpu);
	snprintf(r->e[r->ne - 1].name, SYNC_NAME_MAX, "%016" PRIx64 "%016" PRIx64, hi, id);
}

static void del(struct run *r, int64_t rev, const char *shard, int host, uint64_t id)
{
	struct sync_event *e = &r->e[r->ne++];
	*e = (struct sync_event){.revision = rev, .kind = SYNC_EVENT_POD, .deleted = true};
	snprintf(e->shard, sizeof(e->shard), "%s", shard);
	uid(host, id, e->name);
}

static void answer(struct run *r, int host, uint64_t id, const char *node, int64_t cpu,
		   uint64_t placed, uint64_t released)
{
	struct sync_answer *a = &r->a[r->na++];
	*a = (struct sync_answer){.host = host, .placement_id = id, .cpu_milli = cpu,
				  .mem_bytes = 1 << 20, .placed_ns = placed,
				  .released_ns = released};
	snprintf(a->node, sizeof(a->node), "%s", node);
}

static int check(struct run *r)
{
	struct sync_input in = {.hosts = hosts, .n_hosts = 2, .died_in_flight = r->died,
				.answers = r->a, .n_answers = r->na, .events = r->e,
				.n_events = r->ne, .nodes = nodes, .n_nodes = 2,
				.incarnations = r->inc, .n_incarnations = r->n_inc,
				.lost_ok = r->lost_ok};
	int rc = sync_check(&in, &r->r);
	char line[1024];
	sync_report_format(&r->r, line, sizeof(line));
	printf("  %s\n%s", line, r->r.detail);
	return rc;
}

/* host-a owns z0 (n0), host-b z1 (n1); a placement each, one released
 * and its key deleted, one released keeping its key; a killed host-b's
 * pod in flight left a key no answer names (allowed: 1 in flight). */
static void base(struct run *r)
{
	memset(r, 0, sizeof(*r));
	owner(r, 2, "z0", 0);
	owner(r, 3, "z1", 1);
	put(r, 4, "z0", 0, 1, "n0", 500);
	answer(r, 0, 1, "n0", 500, 100, 0);
	put(r, 5, "z0", 0, 2, "n0", 500);
	answer(r, 0, 2, "n0", 500, 110, 150);
	del(r, 6, "z0", 0, 2);
	put(r, 7, "z1", 1, 1, "n1", 500);
	answer(r, 1, 1, "n1", 500, 120, 160);
	put(r, 8, "z1", 1, 2, "n1", 500);
	r->died[1] = 1;
}

static void clean_run_passes(void **state)
{
	(void)state;
	static struct run r;
	base(&r);
	assert_int_equal(check(&r), 0);
	assert_true(r.r.ok);
	assert_int_equal(r.r.placed, 3);
	assert_int_equal(r.r.released, 2);
	assert_int_equal(r.r.released_kept, 1);
	assert_int_equal(r.r.keys_end, 3);
	assert_int_equal(r.r.unanswered, 1);
	assert_int_equal(r.r.unanswered_allowed, 1);
	assert_int_equal(r.r.lost + r.r.phantom + r.r.twice + r.r.unfenced + r.r.overcommit, 0);
	assert_int_equal(r.r.peak_cpu_milli, 1000);
}

static void lost_fails_unless_lost_ok(void **state)
{
	(void)state;
	static struct run r;
	base(&r);
	answer(&r, 0, 9, "n0", 250, 200, 0); /* placed, never committed */
	assert_int_equal(check(&r), 0);
	assert_int_equal(r.r.lost, 1);
	assert_false(r.r.ok);
	r.lost_ok = true; /* async: counted, not failed */
	assert_int_equal(check(&r), 0);
	assert_int_equal(r.r.lost, 1);
	assert_true(r.r.ok);
	/* A key deleted under a live answer is lost too. */
	base(&r);
	del(&r, 9, "z0", 0, 1);
	assert_int_equal(check(&r), 0);
	assert_int_equal(r.r.lost, 1);
	assert_false(r.r.ok);
}

static void unanswered_beyond_died_is_phantom(void **state)
{
	(void)state;
	static struct run r;
	base(&r);
	r.died[1] = 0;
	assert_int_equal(check(&r), 0);
	assert_int_equal(r.r.phantom, 1);
	assert_false(r.r.ok);
}

static void twice_fails(void **state)
{
	(void)state;
	static struct run r;
	/* A put over a live key (a restarted host reusing an id). */
	base(&r);
	put(&r, 9, "z0", 0, 1, "n0", 250);
	assert_int_equal(check(&r), 0);
	assert_int_equal(r.r.twice, 1);
	assert_false(r.r.ok);
	/* One uid in two shards at once (not after the first's delete). */
	base(&r);
	owner(&r, 9, "z1", -1);
	owner(&r, 10, "z1", 0);
	put(&r, 11, "z1", 0, 2, "n1", 250);
	assert_int_equal(check(&r), 0);
	assert_int_equal(r.r.twice, 0);
	put(&r, 12, "z1", 0, 1, "n1", 250);
	assert_int_equal(check(&r), 0);
	assert_int_equal(r.r.twice, 1);
	assert_false(r.r.ok);
	/* Two answers of one uid, the first not released. */
	base(&r);
	answer(&r, 0, 1, "n0", 500, 300, 0);
	assert_int_equal(check(&r), 0);
	assert_true(r.r.twice >= 1);
	assert_false(r.r.ok);
	/* The same id again after its release: not twice. */
	base(&r);
	put(&r, 9, "z0", 0, 2, "n0", 500);
	answer(&r, 0, 2, "n0", 500, 300, 0);
	assert_int_equal(check(&r), 0);
	assert_int_equal(r.r.twice, 0);
	assert_true(r.r.ok);
}

/* host-a restarted (incarnation 2) reuses its first life's ids: with a
 * first half of its own (learned from the answers) nothing collides; with
 * the name's hash alone the reused id lands on the dead life's key. */
static void incarnations_learned(void **state)
{
	(void)state;
	static struct run r;
	base(&r);
	owner(&r, 9, "z0", -1); /* host-a killed: its lease gone */
	owner(&r, 10, "z0", 0); /* host-a again */
	put_hi(&r, 11, "z0", 0x1234, 1, "n0", 250);
	answer(&r, 0, 1, "n0", 250, 300, 0);
	r.a[r.na - 1].incarnation = 2;
	put_hi(&r, 12, "z0", 0x1234, 7, "n0", 250);
	answer(&r, 0, 7, "n0", 250, 310, 0);
	r.a[r.na - 1].incarnation = 2;
	assert_int_equal(check(&r), 0);
	assert_true(r.r.ok);
	assert_int_equal(r.r.keys_end, 5);
	/* The same, each put's writer known by the owner at its revision
	 * and the incarnations' start revisions (the stress runs' way). */
	r.inc[0] = (struct sync_incarnation){0, 0, 0};
	r.inc[1] = (struct sync_incarnation){1, 0, 0};
	r.inc[2] = (struct sync_incarnation){0, 2, 9};
	r.n_inc = 3;
	assert_int_equal(check(&r), 0);
	assert_true(r.r.ok);
	assert_int_equal(r.r.keys_end, 5);
	/* An incarnation said to start after its puts: its answers name keys
	 * that are not theirs (lost), the puts no answer (phantom). */
	r.inc[2].from_revision = 20;
	assert_int_equal(check(&r), 0);
	assert_false(r.r.ok);
	/* The same with the name's hash: incarnation 2's id 1 over the first's. */
	base(&r);
	owner(&r, 9, "z0", -1);
	owner(&r, 10, "z0", 0);
	put(&r, 11, "z0", 0, 1, "n0", 250);
	answer(&r, 0, 1, "n0", 250, 300, 0);
	r.a[r.na - 1].incarnation = 2;
	assert_int_equal(check(&r), 0);
	assert_int_equal(r.r.twice, 2); /* the answers, the put */
	assert_false(r.r.ok);
	/* Incarnation 2 writing while host-b owns the shard: its half is
	 * known to be host-a's, so the write is unfenced. */
	base(&r);
	owner(&r, 9, "z0", -1);
	owner(&r, 10, "z0", 0);
	put_hi(&r, 11, "z0", 0x1234, 7, "n0", 250);
	answer(&r, 0, 7, "n0", 250, 300, 0);
	r.a[r.na - 1].incarnation = 2;
	owner(&r, 12, "z0", -1);
	owner(&r, 13, "z0", 1);
	put_hi(&r, 14, "z0", 0x1234, 8, "n0", 250);
	answer(&r, 0, 8, "n0", 250, 320, 0);
	r.a[r.na - 1].incarnation = 2;
	assert_int_equal(check(&r), 0);
	assert_int_equal(r.r.unfenced, 1);
	assert_false(r.r.ok);
}

static void unfenced_fails(void **state)
{
	(void)state;
	static struct run r;
	/* host-a's lease lapsed (its owner key deleted), host-b took z0;
	 * host-a then writes there. */
	base(&r);
	owner(&r, 9, "z0", -1);
	owner(&r, 10, "z0", 1);
	put(&r, 11, "z0", 0, 3, "n0", 250);
	answer(&r, 0, 3, "n0", 250, 300, 0);
	assert_int_equal(check(&r), 0);
	assert_int_equal(r.r.unfenced, 1);
	assert_false(r.r.ok);
	/* A write to a shard with no owner at all. */
	base(&r);
	owner(&r, 9, "z0", -1);
	del(&r, 10, "z0", 0, 1);
	assert_int_equal(check(&r), 0);
	assert_int_equal(r.r.unfenced, 1);
}

static void overcommit_fails(void **state)
{
	(void)state;
	static struct run r;
	/* n0 holds 500 live (id 1); 1.6 cpu more answered while it lives. */
	base(&r);
	put(&r, 9, "z0", 0, 3, "n0", 1600);
	answer(&r, 0, 3, "n0", 1600, 300, 400);
	assert_int_equal(check(&r), 0);
	assert_int_equal(r.r.overcommit, 1);
	assert_false(r.r.ok);
	/* 1.5 cpu fits beside it. */
	base(&r);
	put(&r, 9, "z0", 0, 3, "n0", 1500);
	answer(&r, 0, 3, "n0", 1500, 300, 0);
	assert_int_equal(check(&r), 0);
	assert_int_equal(r.r.overcommit, 0);
	assert_true(r.r.ok);
	/* Keys at the end over n1's 2 cpu (unanswered ones: allowed as keys,
	 * not as room). */
	base(&r);
	r.died[1] = 2;
	put(&r, 9, "z1", 1, 3, "n1", 1600);
	assert_int_equal(check(&r), 0);
	assert_int_equal(r.r.overcommit, 1);
	assert_int_equal(r.r.phantom, 0);
	assert_false(r.r.ok);
}

/* A released placement's delete landing after the host's next put:
 * etcd's keys over n0's cpu for a moment, the answers never: counted as
 * info (explained), not failed; ended otherwise, noted as unexplained. */
static void late_delete_is_info(void **state)
{
	(void)state;
	static struct run r;
	base(&r);
	put(&r, 9, "z0", 0, 3, "n0", 1000);
	answer(&r, 0, 3, "n0", 1000, 300, 305);
	put(&r, 10, "z0", 0, 4, "n0", 1000); /* 2500m in etcd */
	answer(&r, 0, 4, "n0", 1000, 310, 0);
	del(&r, 11, "z0", 0, 3);
	assert_int_equal(check(&r), 0);
	assert_true(r.r.ok);
	assert_int_equal(r.r.etcd_over, 1);
	assert_int_equal(r.r.etcd_over_unexplained, 0);
	assert_int_equal(r.r.peak_cpu_milli, 1500);
	assert_int_equal(r.r.peak_etcd_cpu_milli, 2500);
	/* The key deleted was no released pod's. */
	r.a[r.na - 2].released_ns = 0;
	assert_int_equal(check(&r), 0);
	assert_int_equal(r.r.etcd_over_unexplained, 1);
}

/* The released pod's delete never lands (its host killed after placing
 * on the room): n0's keys at the end hold 2500m of 2000m, its live pods
 * 1500m. Info, not an overcommit (CI's stress.etcd_sync_loss, stop 49:
 * 2250m on n0 by kept keys). A live pod's key there instead fails. */
static void kept_key_over_at_end_is_info(void **state)
{
	(void)state;
	static struct run r;
	base(&r);
	put(&r, 9, "z0", 0, 3, "n0", 1000);
	answer(&r, 0, 3, "n0", 1000, 300, 305);
	put(&r, 10, "z0", 0, 4, "n0", 1000);
	answer(&r, 0, 4, "n0", 1000, 310, 0);
	assert_int_equal(check(&r), 0);
	assert_true(r.r.ok);
	assert_int_equal(r.r.overcommit, 0);
	assert_int_equal(r.r.etcd_over_end_kept, 1);
	assert_int_equal(r.r.released_kept, 2);
	r.a[r.na - 2].released_ns = 0; /* id 3 live: 2500m of live pods */
	assert_int_equal(check(&r), 0);
	assert_false(r.r.ok);
	assert_int_equal(r.r.overcommit, 1);
	assert_int_equal(r.r.etcd_over_end_kept, 0);
}

static void bad_input_refused(void **state)
{
	(void)state;
	static struct run r;
	base(&r);
	snprintf(r.e[2].name, sizeof(r.e[2].name), "%s", "not-a-uid");
	assert_int_equal(check(&r), -EINVAL);
	base(&r);
	answer(&r, 0, 5, "n9", 1, 1, 0);
	assert_int_equal(check(&r), -EINVAL);
	/* FNV-1a 64's vector for "a". */
	assert_true(sync_host_hash("a") == 0xaf63dc4c8601ec8cull);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(clean_run_passes),
		cmocka_unit_test(lost_fails_unless_lost_ok),
		cmocka_unit_test(unanswered_beyond_died_is_phantom),
		cmocka_unit_test(twice_fails),
		cmocka_unit_test(incarnations_learned),
		cmocka_unit_test(unfenced_fails),
		cmocka_unit_test(overcommit_fails),
		cmocka_unit_test(late_delete_is_info),
		cmocka_unit_test(kept_key_over_at_end_is_info),
		cmocka_unit_test(bad_input_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
