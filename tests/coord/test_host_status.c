/* tests/coord: a host's status value in etcd (coord/host_status.h), a
 * decoder of outside input, and the chooser of hosts to forward a pod to
 * (coord/forward_choose.h).
 *
 * round_trips: a value encodes and decodes back to the same value and
 * text, the largest (HOST_STATUS_SHARDS shards at their longest names and
 * largest numbers, `more` at SHARD_MAX) included, within
 * HOST_STATUS_VALUE_MAX.
 * refusals: each way out of the format refused with a message naming the
 * field and a zeroed value (the join's value, the host's name alone,
 * among them), the encoder refusing what the decoder would, and a value
 * over HOST_STATUS_VALUE_MAX bytes refused before it is read.
 * chooser: only hosts with a shard whose largest free cpu, memory and
 * pods on one node each cover the request; this host excluded; best
 * first (most free cpu on a fitting shard, then memory, then lag, then
 * name); at most fan_out. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "coord/coord.h"

static struct host_status v, back, zero;
static char text[HOST_STATUS_VALUE_MAX + 2], again[HOST_STATUS_VALUE_MAX + 1];

static void round_trip(const char *want)
{
	char msg[256];
	int n = host_status_encode(&v, text);
	assert_true(n > 0);
	assert_true(n <= HOST_STATUS_VALUE_MAX);
	if (want != NULL)
		assert_string_equal(text, want);
	assert_int_equal(host_status_decode(text, (size_t)n, &back, msg, sizeof(msg)), 0);
	assert_memory_equal(&v, &back, sizeof(v));
	assert_int_equal(host_status_encode(&back, again), n);
	assert_string_equal(text, again);
}

static void shard(uint32_t i, const char *name, uint32_t nodes, int64_t lc, int64_t lm,
		  int64_t lp, int64_t sc, int64_t sm, int64_t sp)
{
	struct host_status_shard *s = &v.shards[i];
	memset(s, 0, sizeof(*s));
	snprintf(s->name, sizeof(s->name), "%s", name);
	s->nodes = nodes;
	s->largest_cpu_milli = lc;
	s->largest_mem_bytes = lm;
	s->largest_pods = lp;
	s->sum_cpu_milli = sc;
	s->sum_mem_bytes = sm;
	s->sum_pods = sp;
}

static void test_round_trips(void **state)
{
	(void)state;
	memset(&v, 0, sizeof(v));
	round_trip("1 status 0 0 0");
	v.lag_records = 12;
	v.lag_oldest_ms = 340;
	v.n = 2;
	shard(0, "zone-a", 2, 4000, 8589934592, 110, 6000, 12884901888, 210);
	shard(1, "zone-b", 0, 0, 0, 0, 0, 0, 0);
	round_trip("1 status 12 340 0 zone-a 2 4000 8589934592 110 6000 12884901888 210 "
		   "zone-b 0 0 0 0 0 0 0");
	/* The largest: every shard at its longest name, every number at its
	 * largest, and `more`. */
	memset(&v, 0, sizeof(v));
	v.lag_records = INT64_MAX;
	v.lag_oldest_ms = INT64_MAX;
	v.n = HOST_STATUS_SHARDS;
	v.more = SHARD_MAX;
	for (uint32_t i = 0; i < HOST_STATUS_SHARDS; i++) {
		char name[SHARD_NAME_MAX];
		memset(name, 'z', SHARD_NAME_MAX - 1);
		name[SHARD_NAME_MAX - 1] = '\0';
		snprintf(name + SHARD_NAME_MAX - 3, 3, "%02" PRIu32, i);
		shard(i, name, UINT32_MAX, INT64_MAX, INT64_MAX, INT64_MAX, INT64_MAX, INT64_MAX,
		      INT64_MAX);
	}
	round_trip(NULL);
	assert_int_equal((int)strlen(text), HOST_STATUS_VALUE_MAX);
}

static void refused(const char *t, const char *field)
{
	char msg[256];
	memset(&back, 0xa5, sizeof(back));
	assert_int_equal(host_status_decode(t, strlen(t), &back, msg, sizeof(msg)), -EINVAL);
	if (strstr(msg, field) == NULL)
		fail_msg("\"%s\": message \"%s\" lacks \"%s\"", t, msg, field);
	assert_memory_equal(&back, &zero, sizeof(back));
}

static void test_refusals(void **state)
{
	(void)state;
	refused("", "version");
	refused("host-a", "version"); /* the join's value */
	refused("2 status 0 0 0", "version");
	refused("1 slice 0 0 0", "kind");
	refused("1 status 0 0", "fields");
	refused("1 status 0  0 0", "lag oldest ms");
	refused("1 status 01 0 0", "lag records");
	refused("1 status -1 0 0", "lag records");
	refused("1 status 9223372036854775808 0 0", "lag records");
	refused("1 status 0 0 257", "more");
	refused("1 status 0 0 1", "more 1 with 0 shards");
	refused("1 status 0 0 0 ", "name");
	refused("1 status 0 0 0 a 1 1 1 1 1 1", "fields");
	refused("1 status 0 0 0 a/b 1 1 1 1 1 1 1", "name");
	refused("1 status 0 0 0 a 4294967296 1 1 1 1 1 1", "nodes");
	refused("1 status 0 0 0 a 1 2 1 1 1 1 1", "largest");
	refused("1 status 0 0 0 a 0 0 0 0 1 0 0", "without nodes");
	refused("1 status 0 0 0 a 1 1 1 1 1 1 1 a 1 1 1 1 1 1 1", "ascending");
	refused("1 status 0 0 0 b 1 1 1 1 1 1 1 a 1 1 1 1 1 1 1", "ascending");
	refused("1 status 0 0 0 a 1 1 1 1 1 1 x", "sum pods");
	/* The names read so far are in the message (made before the value
	 * is zeroed). */
	refused("1 status 0 0 0 a 1 1 1 1 1 1 x", "shard a: sum pods");
	refused("1 status 0 0 0 b 1 1 1 1 1 1 1 a 1 1 1 1 1 1 1", "\"a\" after \"b\"");
	/* Past HOST_STATUS_SHARDS shards. */
	char big[HOST_STATUS_VALUE_MAX + 64];
	size_t at = (size_t)snprintf(big, sizeof(big), "1 status 0 0 0");
	for (int i = 0; i <= HOST_STATUS_SHARDS; i++)
		at += (size_t)snprintf(big + at, sizeof(big) - at, " s%02d 1 1 1 1 1 1 1", i);
	refused(big, "more than 16 shards");
	/* Over the bound: refused before it is read. */
	memset(big, ' ', sizeof(big));
	char msg[256];
	assert_int_equal(host_status_decode(big, HOST_STATUS_VALUE_MAX + 1, &back, msg,
					    sizeof(msg)), -EINVAL);
	assert_non_null(strstr(msg, "expected at most"));
	/* The encoder refuses what the decoder would. */
	memset(&v, 0, sizeof(v));
	v.n = 1;
	shard(0, "a", 1, 2, 1, 1, 1, 1, 1);
	assert_int_equal(host_status_encode(&v, text), -EINVAL);
	shard(0, "a b", 1, 1, 1, 1, 1, 1, 1);
	assert_int_equal(host_status_encode(&v, text), -EINVAL);
	shard(0, "a", 1, 1, 1, 1, 1, 1, 1);
	v.more = 1;
	assert_int_equal(host_status_encode(&v, text), -EINVAL);
	v.more = 0;
	v.lag_records = -1;
	assert_int_equal(host_status_encode(&v, text), -EINVAL);
}

/* Host statuses for the chooser: one shard each unless said. */
static struct host_status st[6];

static void one(struct host_status *h, int64_t lc, int64_t lm, int64_t lp, int64_t sc,
		int64_t sm, int64_t lag)
{
	memset(h, 0, sizeof(*h));
	h->n = 1;
	h->lag_records = lag;
	snprintf(h->shards[0].name, SHARD_NAME_MAX, "z");
	h->shards[0] = (struct host_status_shard){.nodes = 2, .largest_cpu_milli = lc,
		.largest_mem_bytes = lm, .largest_pods = lp, .sum_cpu_milli = sc,
		.sum_mem_bytes = sm, .sum_pods = 2 * lp};
	snprintf(h->shards[0].name, SHARD_NAME_MAX, "z");
}

static void test_chooser(void **state)
{
	(void)state;
	one(&st[0], 4000, 4000, 10, 8000, 8000, 0);  /* a: fits, most cpu */
	one(&st[1], 999, 4000, 10, 9000, 9000, 0);   /* b: cpu short on one node */
	one(&st[2], 1000, 999, 10, 9000, 9000, 0);   /* c: memory short */
	one(&st[3], 1000, 1000, 0, 9000, 9000, 0);   /* d: no pod free */
	one(&st[4], 1000, 1000, 1, 2000, 3000, 5);   /* e: fits, less cpu */
	one(&st[5], 1000, 1000, 1, 2000, 3000, 0);   /* f: as e, less lag */
	/* g: two shards, the second fits with the most cpu of all. */
	static struct host_status g;
	one(&g, 100, 100, 1, 100, 100, 0);
	g.n = 2;
	g.shards[1] = g.shards[0];
	snprintf(g.shards[1].name, SHARD_NAME_MAX, "zz");
	g.shards[1].largest_cpu_milli = 1000;
	g.shards[1].largest_mem_bytes = 1000;
	g.shards[1].sum_cpu_milli = 20000;
	g.shards[1].sum_mem_bytes = 20000;
	struct forward_host hosts[] = {
		{"a", &st[0]}, {"b", &st[1]}, {"c", &st[2]}, {"d", &st[3]},
		{"e", &st[4]}, {"f", &st[5]}, {"g", &g}, {"none", NULL},
	};
	size_t n = sizeof(hosts) / sizeof(hosts[0]);
	struct forward_need req = {.cpu_milli = 1000, .mem_bytes = 1000};
	size_t out[8];
	size_t k = forward_candidates(hosts, n, "x", &req, 8, out);
	assert_int_equal(k, 4);
	assert_string_equal(hosts[out[0]].name, "g");
	assert_string_equal(hosts[out[1]].name, "a");
	assert_string_equal(hosts[out[2]].name, "f"); /* less lag than e */
	assert_string_equal(hosts[out[3]].name, "e");
	/* This host excluded; fan-out bounds it, the best kept. */
	k = forward_candidates(hosts, n, "g", &req, 2, out);
	assert_int_equal(k, 2);
	assert_string_equal(hosts[out[0]].name, "a");
	assert_string_equal(hosts[out[1]].name, "f");
	assert_int_equal(forward_candidates(hosts, n, "g", &req, 0, out), 0);
	/* Exactly the largest free fits; one more does not. */
	req.cpu_milli = 4000;
	req.mem_bytes = 4000;
	k = forward_candidates(hosts, n, NULL, &req, 8, out);
	assert_int_equal(k, 1);
	assert_string_equal(hosts[out[0]].name, "a");
	req.cpu_milli = 4001;
	assert_int_equal(forward_candidates(hosts, n, NULL, &req, 8, out), 0);
	/* A shard of no nodes never fits. */
	req.cpu_milli = 0;
	req.mem_bytes = 0;
	st[0].shards[0].nodes = 0;
	k = forward_candidates(hosts, 1, NULL, &req, 8, out);
	assert_int_equal(k, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trips),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_chooser),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
