/* tests/coord/etcd_test.h's helpers for the tests against a real etcd. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "etcd_test.h"

int etcd_test_cluster_from_env(struct etcd_test_cluster *cl)
{
	*cl = (struct etcd_test_cluster){.endpoints = getenv("SHMSCHED_ETCD_ENDPOINTS")};
	const char *pids = getenv("SHMSCHED_ETCD_PIDS");
	if (cl->endpoints == NULL || pids == NULL) {
		printf("SKIP: run under tests/coord/etcd_cluster.sh (SHMSCHED_ETCD_ENDPOINTS "
		       "and SHMSCHED_ETCD_PIDS unset)\n");
		return 77;
	}
	for (const char *p = pids; *p && cl->n < ETCD_MAX_ENDPOINTS;) {
		cl->pids[cl->n++] = (pid_t)strtol(p, (char **)&p, 10);
		if (*p == ',')
			p++;
	}
	return 0;
}

struct etcd_client *etcd_test_open(const char *eps)
{
	struct etcd_client *c;
	char err[256];
	struct etcd_client_options o = {.timeout_ms = 3000};
	if (etcd_client_open(&c, eps, &o, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	return c;
}

double etcd_test_now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

uint64_t etcd_test_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void etcd_test_sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

size_t etcd_test_leader_first(const struct etcd_test_cluster *cl, char *order,
			      size_t len)
{
	struct etcd_client *probe = etcd_test_open(cl->endpoints);
	uint64_t member = 0, leader = 0;
	size_t li = cl->n;
	for (size_t i = 0; i < cl->n; i++) {
		if (etcd_member_status(probe, i, &member, &leader) != 0)
			fail_msg("%s", etcd_client_error(probe));
		if (member == leader)
			li = i;
	}
	etcd_client_close(probe);
	assert_true(li < cl->n);
	char *copy = strdup(cl->endpoints), *eps[ETCD_MAX_ENDPOINTS] = {0}, *save = NULL;
	assert_non_null(copy);
	size_t k = 0;
	for (char *t = strtok_r(copy, ",", &save); t && k < ETCD_MAX_ENDPOINTS;
	     t = strtok_r(NULL, ",", &save))
		eps[k++] = t;
	assert_true(li < k);
	snprintf(order, len, "%s", eps[li] ? eps[li] : "");
	for (size_t i = 0; i < k; i++)
		if (i != li)
			snprintf(order + strlen(order), len - strlen(order), ",%s", eps[i]);
	free(copy);
	return li;
}

struct etcd_census etcd_test_census(struct etcd_client *c, const char *prefix,
				    int64_t after,
				    void (*on_key)(const uint8_t *key, size_t len,
						   void *arg),
				    void *arg)
{
	/* Each page starts just after the last key of the one before (that
	 * key and a zero byte). */
	uint8_t end[128], from[256];
	size_t end_len = etcd_prefix_end(prefix, strlen(prefix), end);
	size_t from_len = strlen(prefix);
	assert_true(from_len <= sizeof(from));
	memcpy(from, prefix, from_len);
	struct etcd_census k = {0};
	for (;;) {
		struct etcd_range_result r;
		if (etcd_range(c, from, from_len, end, end_len, 2000, &r) != 0)
			fail_msg("%s", etcd_client_error(c));
		k.keys += r.n_kvs;
		for (size_t i = 0; i < r.n_kvs; i++) {
			if (after && r.kvs[i].create_revision >= after)
				k.late++;
			if (r.kvs[i].version != 1)
				k.rewritten++;
			if (on_key != NULL)
				on_key(r.kvs[i].key, r.kvs[i].key_len, arg);
		}
		bool more = r.more && r.n_kvs > 0;
		if (more) {
			const struct etcd_kv *last = &r.kvs[r.n_kvs - 1];
			assert_true(last->key_len + 1 <= sizeof(from));
			memcpy(from, last->key, last->key_len);
			from[last->key_len] = 0;
			from_len = last->key_len + 1;
		}
		etcd_range_result_free(&r);
		if (!more)
			return k;
	}
}
