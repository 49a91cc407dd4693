/* stress.etcd_hosts: shmschedd hosts of one multi-host cluster through a
 * real 3-member etcd (issue 40 item 1; docs/design/multi-host.md), run by
 * tests/coord/etcd_cluster.sh (SHMSCHED_ETCD_ENDPOINTS; without it the
 * program prints SKIP and exits 77). Each host is a real shmschedd
 * (argv[1]) with --etcd, a lease TTL of 2 s (etcd's least), on the same
 * cluster file: four nodes n0..n3, one in each zone z0..z3 (the shards,
 * by topology.kubernetes.io/zone). What each host owns is read from etcd
 * (shards/<z>/owner, whose value is the owner's host name).
 *
 * 1. Two hosts join: the four shards are split 2 and 2; a pod selecting
 *    zone z is placed by the host that owns z (on n<z>), and answered
 *    unschedulable by the other, whose message names the node and its
 *    shard ("node n<z> belongs to shard z<z> owned by another host").
 * 2. A third joins: 2, 1, 1, exactly one shard moved (the coordinator
 *    moves the fewest, coord/shard_assign.h).
 *    `shmsched cluster status` (argv[2]) shows the three hosts with their
 *    leases' seconds left and each shard's owner, as etcd holds them.
 * 3. The third is SIGKILLed: its shard is owned by one of the two others
 *    within TTL + 2 s (measured from the kill, printed).
 * 4. A host is SIGSTOPped for TTL + 1 s, then continued: the first pod it
 *    answers after, for a zone it owned, is not placed (its lease lapsed
 *    while it was stopped; it checks its lease's instant on every pod,
 *    before its membership thread has noticed anything).
 * sync_commits_placements, rules_across_shards, sync_answers_after_commits,
 * async_answers_then_commits, quota_by_escrow, quota_escrow_by_use,
 * quota_survives_failover, quota_borrowed_reclaimed_after_failover,
 * status_shows_capacity, batch_keys_counted_on_take and
 * batch_keys_followed_by_watch (each described where it is defined)
 * follow, with their own clusters' keys. The whole run took 82 s on the
 * 2-vCPU VM at load 7, before the last case. */
#define _GNU_SOURCE 1

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <shmsched/client.h>

#include "coord/coord.h"
#include "etcd_hosts_fixture.h"

#define TTL_S 2
#define ZONES 4
#define HOSTS 3
#define BURST 100
/* Deferred sync answers (sync_answers_after_commits): pods streamed
 * through one worker, each checked in etcd after its answer is read;
 * SHMSCHED_ETCD_PIPE_PODS sets the timed stream's length
 * (bench/etcd_pipe.sh). */
#define PIPE_CHECKED 1000
#define PIPE_PODS 21000 /* > 4 MiB of keys in one shard's pods/ */
#define PIPE_REVOKE_MAX 3000

static const char *shmsched;
static const char *endpoints;
static char dir[64];
static const char *const names[HOSTS] = {"host-a", "host-b", "host-c"};
/* The hosts (etcd_hosts_fixture.h); hosts.cluster_name is the test's (each its
 * own keys). Their lease's TTL is TTL_S, but 5 s (the default) or
 * SHMSCHED_ETCD_TTL in sync_answers_after_commits and the async test: their
 * streams load etcd (on a loaded 2-vCPU machine) enough to delay a 2 s
 * lease's renewals past its TTL - TTL/4. */
static struct etcd_hosts hosts = {.cluster_name = "etcd-hosts", .dir = dir, .names = names,
				  .n = HOSTS, .zones = ZONES, .ttl_s = TTL_S};
static pid_t *const pids = hosts.pids;

static void sock_of(int h, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s.sock", dir, names[h]);
}

/* Starts host h; returns when its socket accepts a producer. */
static void start_host(int h)
{
	char err[512];
	if (etcd_host_start(&hosts, h, err, sizeof(err)) != 0)
		fail_msg("%s", err);
}

/* Stops host h (SIGTERM); its exit status (-1: none running). */
static int stop_host(int h)
{
	return etcd_host_stop(&hosts, h);
}

/* Stops host h (SIGTERM) and fails unless it exited 0 (the sanitizers'
 * builds check their reports so). */
static void stop_host_clean(int h)
{
	int st = stop_host(h);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		fail_msg("%s stopped with status 0x%x (log %s/%s.log)", names[h], st, dir,
			 names[h]);
}

/* Each zone's owner (a host index, -1: none) as etcd holds it now. */
static void owners(struct etcd_client *ec, int *own)
{
	char err[512];
	if (etcd_hosts_owners(&hosts, ec, own, err, sizeof(err)) != 0)
		fail_msg("%s", err);
}

/* How many zones host h owns in own[]. */
static int owned_by(const int *own, int h)
{
	int n = 0;
	for (int z = 0; z < ZONES; z++)
		n += own[z] == h;
	return n;
}

/* Polls etcd until every zone has an owner among `live` (a mask) and the
 * counts are balanced; returns the seconds it took, or fails after
 * `limit_s`. */
static double await_balanced(struct etcd_client *ec, unsigned live, int *own, double limit_s)
{
	char err[512];
	double took;
	if (etcd_hosts_await_balanced(&hosts, ec, live, own, limit_s, &took, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	return took;
}

/* A producer of host h and its templates: tid[z] selects zone z. */
struct producer {
	struct shmsched_client *c;
	uint32_t tid[ZONES];
	uint64_t cookie;
};

static void connect_to(int h, struct producer *p)
{
	char sock[128], err[256];
	sock_of(h, sock, sizeof(sock));
	if (shmsched_connect(sock, &p->c, err, sizeof(err)) != 0)
		fail_msg("connect %s: %s", sock, err);
	for (int z = 0; z < ZONES; z++) {
		char json[512];
		snprintf(json, sizeof(json),
			 "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p%d\"},\"spec\":{"
			 "\"nodeSelector\":{\"topology.kubernetes.io/zone\":\"z%d\"},"
			 "\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":"
			 "{\"cpu\":\"100m\"}}}]}}", z, z);
		if (shmsched_register_template(p->c, json, strlen(json), &p->tid[z], err,
					       sizeof(err)) != 0)
			fail_msg("template of zone z%d on %s: %s", z, names[h], err);
	}
}

/* A template of host h's producer p: a pod selecting zone z requesting
 * `cpu` (a quantity). */
static uint32_t template_of(struct producer *p, int h, int z, const char *cpu)
{
	char json[512], err[256];
	snprintf(json, sizeof(json),
		 "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"q%d\"},\"spec\":{"
		 "\"nodeSelector\":{\"topology.kubernetes.io/zone\":\"z%d\"},"
		 "\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":"
		 "{\"cpu\":\"%s\"}}}]}}", z, z, cpu);
	uint32_t tid;
	if (shmsched_register_template(p->c, json, strlen(json), &tid, err, sizeof(err)) != 0)
		fail_msg("template of zone z%d (cpu %s) on %s: %s", z, cpu, names[h], err);
	return tid;
}

/* Submits one pod of template tid and waits (15 s: a sync commit's
 * etcd round trip on a loaded machine) for its answer. */
static struct shmsched_result place_tid(struct producer *p, uint32_t tid)
{
	struct shmsched_pod pod = {.cookie = ++p->cookie, .template_id = tid};
	assert_int_equal(shmsched_submit(p->c, &pod, 1), 1);
	struct shmsched_result r;
	for (int i = 0; i < 1500; i++) {
		if (shmsched_poll(p->c, &r, 1) == 1) {
			assert_int_equal(r.cookie, p->cookie);
			return r;
		}
		etcd_hosts_sleep_ms(10);
	}
	fail_msg("no answer to a pod of template %u in 15 s", tid);
	return r;
}

/* Submits one pod selecting zone z and waits (10 s) for its answer. */
static struct shmsched_result place(struct producer *p, int z)
{
	struct shmsched_pod pod = {.cookie = ++p->cookie, .template_id = p->tid[z]};
	assert_int_equal(shmsched_submit(p->c, &pod, 1), 1);
	struct shmsched_result r;
	for (int i = 0; i < 1000; i++) {
		if (shmsched_poll(p->c, &r, 1) == 1) {
			assert_int_equal(r.cookie, p->cookie);
			return r;
		}
		etcd_hosts_sleep_ms(10);
	}
	fail_msg("no answer to a pod of zone z%d in 10 s", z);
	return r;
}

/* Every zone's pod on host h: placed where h owns the zone, else
 * unschedulable naming the node and its shard. */
static void check_places_own(struct producer *p, int h, const int *own)
{
	for (int z = 0; z < ZONES; z++) {
		struct shmsched_result r = place(p, z);
		if (own[z] == h) {
			if (r.status != SHMSCHED_PLACED)
				fail_msg("%s owns z%d but did not place its pod: %s", names[h], z,
					 r.message);
			char err[128];
			if (shmsched_release(p->c, r.placement_id, err, sizeof(err)) != 0)
				fail_msg("release on %s: %s", names[h], err);
			continue;
		}
		char want[96];
		snprintf(want, sizeof(want), "node n%d belongs to shard z%d owned by another "
			 "host", z, z);
		if (r.status != SHMSCHED_UNSCHEDULABLE || strstr(r.message, want) == NULL)
			fail_msg("%s does not own z%d: expected unschedulable with \"%s\", "
				 "got status %u: %s", names[h], z, want, r.status, r.message);
	}
}

/* Host h's metrics text (OP_QUEUE_METRICS on its admin socket),
 * malloc'd; fails the test when it cannot be read. */
static char *metrics_text(int h)
{
	char sock[160], err[256], *text = NULL;
	sock_of(h, sock, sizeof(sock));
	strcat(sock, ".admin");
	struct shmsched_client *c;
	if (shmsched_connect(sock, &c, err, sizeof(err)) != 0)
		fail_msg("connect %s: %s", sock, err);
	if (shmsched_queue(c, SHMSCHED_QUEUE_METRICS, NULL, NULL, 0, &text, err,
			   sizeof(err)) != 0)
		fail_msg("%s's metrics: %s", names[h], err);
	shmsched_disconnect(c);
	return text;
}

/* Whether host h's metrics text holds `line` (a whole line). */
static bool metrics_have(int h, const char *line)
{
	char *text = metrics_text(h);
	char want[160];
	snprintf(want, sizeof(want), "\n%s\n", line);
	bool have = strstr(text, want) != NULL;
	free(text);
	return have;
}

/* The value of host h's metric `name` (a line "name value"); fails when
 * it has none. */
static double metric_value(int h, const char *name)
{
	char *text = metrics_text(h);
	char want[160];
	snprintf(want, sizeof(want), "\n%s ", name);
	const char *at = strstr(text, want);
	if (at == NULL)
		fail_msg("%s's metrics lack %s", names[h], name);
	double v = strtod(at + strlen(want), NULL);
	free(text);
	return v;
}

static void assert_metrics(int h, const char *line)
{
	if (!metrics_have(h, line))
		fail_msg("%s's metrics lack the line \"%s\"", names[h], line);
}

/* `shmsched cluster status` (item 6) agrees with etcd's owners in own[]:
 * the counts, each host with its lease's seconds left (at most the TTL),
 * each shard's owner, none moving. */
static void check_cluster_status(const int *own, int n_hosts)
{
	char cmd[512], line[256], want[128];
	snprintf(cmd, sizeof(cmd), "%s cluster status --etcd %s --etcd-cluster etcd-hosts",
		 shmsched, endpoints);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	int host_lines = 0, shards = 0, header = 0;
	while (fgets(line, sizeof(line), p) != NULL) {
		printf("  %s", line);
		long left, granted;
		char *t;
		if (strncmp(line, "cluster etcd-hosts ", 19) == 0) {
			snprintf(want, sizeof(want), "%d hosts, %d shards, coordinator host-",
				 n_hosts, ZONES);
			header += strstr(line, want) != NULL;
		} else if (strncmp(line, "host ", 5) == 0) {
			t = strstr(line, "ttl-left ");
			assert_non_null(t);
			assert_int_equal(sscanf(t, "ttl-left %lds/%lds", &left, &granted), 2);
			assert_true(left >= 0 && left <= TTL_S && granted == TTL_S);
			host_lines++;
		} else if (strncmp(line, "shard ", 6) == 0) {
			int z = line[7] - '0';
			assert_true(line[6] == 'z' && z >= 0 && z < ZONES);
			snprintf(want, sizeof(want), "owner %s\n", names[own[z]]);
			if (strstr(line, want) == NULL)
				fail_msg("cluster status: \"%s\": expected %s", line, want);
			shards++;
		}
	}
	assert_int_equal(pclose(p), 0);
	assert_int_equal(header, 1);
	assert_int_equal(host_lines, n_hosts);
	assert_int_equal(shards, ZONES);
}

static void hosts_join_split_fail_over(void **state)
{
	(void)state;
	struct etcd_client *ec;
	char err[256];
	struct etcd_client_options o = {.timeout_ms = 3000};
	if (etcd_client_open(&ec, endpoints, &o, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	int own[ZONES], before[ZONES];

	/* 1. Two hosts. */
	start_host(0);
	start_host(1);
	double t = await_balanced(ec, 0x3u, own, 15.0);
	printf("two hosts: shards split 2/2 %.2f s after the second started\n", t);
	struct producer pa = {0}, pb = {0};
	connect_to(0, &pa);
	connect_to(1, &pb);
	owners(ec, own);
	check_places_own(&pa, 0, own);
	check_places_own(&pb, 1, own);
	/* Item 6's metrics: each host owns 2, its lease alive; one coordinates. */
	for (int h = 0; h < 2; h++) {
		assert_metrics(h, "shmsched_etcd_shards_owned 2");
		assert_metrics(h, "shmsched_etcd_lease_alive 1");
		/* The renewals' own thread (coord/lease_renewer.c). */
		assert_metrics(h, "# TYPE shmsched_etcd_lease_renew_seconds histogram");
		assert_metrics(h, "# TYPE shmsched_etcd_lease_renew_gap_max_seconds gauge");
	}
	assert_true(metrics_have(0, "shmsched_etcd_coordinator 1") !=
		    metrics_have(1, "shmsched_etcd_coordinator 1"));

	/* 2. A third joins: one shard moves to it, no other. */
	memcpy(before, own, sizeof(own));
	start_host(2);
	t = await_balanced(ec, 0x7u, own, 15.0);
	int moved = 0;
	for (int z = 0; z < ZONES; z++)
		moved += own[z] != before[z];
	printf("third host: rebalanced 2/1/1 in %.2f s, %d shard moved\n", t, moved);
	assert_int_equal(moved, 1);
	assert_int_equal(owned_by(own, 2), 1);
	check_cluster_status(own, 3);

	/* 3. The third killed: its shard owned again within TTL + 2 s. */
	int orphan = -1;
	for (int z = 0; z < ZONES; z++)
		if (own[z] == 2)
			orphan = z;
	double t0 = etcd_hosts_now_s();
	kill(pids[2], SIGKILL);
	waitpid(pids[2], NULL, 0);
	pids[2] = 0;
	t = await_balanced(ec, 0x3u, own, TTL_S + 2.0);
	printf("third host SIGKILLed: its shard z%d owned by %s %.2f s later (TTL %d s)\n",
	       orphan, names[own[orphan]], etcd_hosts_now_s() - t0, TTL_S);

	/* 4. Host a stopped past its TTL: host b takes every shard; a,
	 * continued, places nothing at once. */
	int a_zone = -1;
	for (int z = 0; z < ZONES; z++)
		if (own[z] == 0)
			a_zone = z;
	assert_true(a_zone >= 0);
	kill(pids[0], SIGSTOP);
	t0 = etcd_hosts_now_s();
	t = await_balanced(ec, 0x2u, own, TTL_S + 3.0);
	printf("host a SIGSTOPped: b owns all four shards %.2f s later\n", etcd_hosts_now_s() - t0);
	while (etcd_hosts_now_s() - t0 < TTL_S + 1.0)
		etcd_hosts_sleep_ms(20);
	kill(pids[0], SIGCONT);
	struct shmsched_result r = place(&pa, a_zone);
	printf("host a continued: its first pod of z%d: status %u: %s\n", a_zone, r.status,
	       r.message);
	assert_int_not_equal(r.status, SHMSCHED_PLACED);
	/* And b places there now. */
	r = place(&pb, a_zone);
	if (r.status != SHMSCHED_PLACED)
		fail_msg("host b owns z%d but did not place: %s", a_zone, r.message);
	/* a re-joins: the shards are split again. */
	t = await_balanced(ec, 0x3u, own, 10.0);
	printf("host a re-joined: split 2/2 again %.2f s after it continued\n",
	       etcd_hosts_now_s() - t0 - (TTL_S + 1.0));
	assert_metrics(0, "shmsched_etcd_events_total{event=\"loss\"} 1");
	shmsched_disconnect(pa.c);
	shmsched_disconnect(pb.c);
	etcd_client_close(ec);
	/* Both stop cleanly (a sanitizer's report at exit would fail them). */
	for (int h = 0; h < 2; h++)
		stop_host_clean(h);
}

static long long metric_of(int h, const char *name);

/* The placements etcd holds under shards/z<z>/pods/ of this test's
 * cluster: how many, each checked to decode as a placement on n<z>; the
 * sum of their cpu and the newest mod revision. */
static size_t pods_in_etcd(struct etcd_client *ec, int z, int64_t *cpu_milli,
			   int64_t *newest)
{
	char key[128], end[128];
	int kl = snprintf(key, sizeof(key), "/shmsched/%s/shards/z%d/pods/", hosts.cluster_name, z);
	memcpy(end, key, (size_t)kl);
	end[kl - 1] = '/' + 1;
	struct etcd_range_result r;
	if (etcd_range(ec, key, (size_t)kl, end, (size_t)kl, 0, &r) != 0)
		fail_msg("range %s: %s", key, etcd_client_error(ec));
	*newest = 0;
	*cpu_milli = 0;
	for (size_t i = 0; i < r.n_kvs; i++) {
		struct placement_value v;
		char msg[256], node[8];
		if (placement_value_decode(r.kvs[i].value, r.kvs[i].value_len, &v, msg,
					   sizeof(msg)) != 0)
			fail_msg("%.*s: %s", (int)r.kvs[i].key_len, r.kvs[i].key, msg);
		snprintf(node, sizeof(node), "n%d", z);
		assert_string_equal(v.node, node);
		/* uid: the host's hash and the placement's id, 16 hex each. */
		assert_int_equal(r.kvs[i].key_len, (size_t)kl + 32);
		*cpu_milli += v.cpu_milli;
		if (r.kvs[i].mod_revision > *newest)
			*newest = r.kvs[i].mod_revision;
	}
	size_t n = r.n_kvs;
	etcd_range_result_free(&r);
	return n;
}

/* Sync commits, deletes and the rebuild on takeover (issue 40 items 2
 * and 3, daemon/etcd_sync_internal.h):
 * 1. One host owning every shard places 50 pods of 50m on n0, each
 *    answered placed only once its key is in etcd: all 50 keys are
 *    there, on n0, 50m each. One released: its key goes (49).
 * 2. A burst of BURST pods on n1: pods/s printed, every key there.
 * 3. Its lease revoked behind its back (the owner keys go with it): its
 *    next pods of 1 cpu are not placed (the commit fenced: rolled back),
 *    no key is written after the revoke; once it has re-joined and owns
 *    z0 again, a pod of 1 cpu is placed: the rolled-back pods' room was
 *    given back (2.45 cpu held of n0's 4; one rolled-back cpu kept would
 *    leave 0.55).
 * 4. A second host joins, the first is SIGKILLed: the second counts the
 *    first's placements (3.45 cpu on n0) before it places there.
 * On the code before sync commits no key is written: fails at 1; with
 * the rebuild's count disabled, 4 places 1 cpu where 0.15 is free. */
static void sync_commits_placements(void **state)
{
	(void)state;
	hosts.cluster_name = "etcd-sync";
	struct etcd_client *ec;
	char err[256];
	struct etcd_client_options o = {.timeout_ms = 3000};
	if (etcd_client_open(&ec, endpoints, &o, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	int own[ZONES];
	start_host(0);
	await_balanced(ec, 0x1u, own, 15.0);
	struct producer pa = {0};
	connect_to(0, &pa);
	uint32_t small = template_of(&pa, 0, 0, "50m"), big = template_of(&pa, 0, 0, "1");
	double t0 = etcd_hosts_now_s();
	uint64_t first = 0;
	for (int i = 0; i < 50; i++) {
		struct shmsched_result r = place_tid(&pa, small);
		if (r.status != SHMSCHED_PLACED)
			fail_msg("pod %d of z0 not placed: %s", i, r.message);
		if (i == 0)
			first = r.placement_id;
	}
	double took = etcd_hosts_now_s() - t0;
	int64_t newest, cpu;
	assert_int_equal(pods_in_etcd(ec, 0, &cpu, &newest), 50);
	assert_int_equal(cpu, 50 * 50);
	printf("sync: 50 pods placed one at a time, each committed first, in %.2f s "
	       "(%.1f ms a pod, the test polling every 10 ms); 50 keys in etcd\n", took,
	       took * 1000.0 / 50);
	/* A release deletes its key (not waited for: within 5 s here). */
	if (shmsched_release(pa.c, first, err, sizeof(err)) != 0)
		fail_msg("release: %s", err);
	double tr = etcd_hosts_now_s();
	while (pods_in_etcd(ec, 0, &cpu, &newest) != 49 && etcd_hosts_now_s() - tr < 5.0)
		etcd_hosts_sleep_ms(10);
	assert_int_equal(pods_in_etcd(ec, 0, &cpu, &newest), 49);
	printf("a release: its key deleted from etcd %.3f s later\n", etcd_hosts_now_s() - tr);

	/* A burst (the figure of docs/perf/2026-11-29-etcd-sync.md): 100
	 * pods of 1m on n1 submitted at once to the one worker, each
	 * answered after its commit. */
	uint32_t tiny = template_of(&pa, 0, 1, "1m");
	struct shmsched_pod burst[BURST];
	for (int i = 0; i < BURST; i++)
		burst[i] = (struct shmsched_pod){.cookie = 1000000 + (uint64_t)i,
						 .template_id = tiny};
	int sent = 0, answered = 0;
	double tb = etcd_hosts_now_s();
	while (answered < BURST && etcd_hosts_now_s() - tb < 60.0) {
		if (sent < BURST) {
			int k = shmsched_submit(pa.c, burst + sent, (unsigned)(BURST - sent));
			assert_true(k >= 0);
			sent += k;
		}
		struct shmsched_result res[64];
		int k = shmsched_poll(pa.c, res, 64);
		assert_true(k >= 0);
		for (int i = 0; i < k; i++)
			if (res[i].status != SHMSCHED_PLACED)
				fail_msg("burst pod %llu: status %u: %s",
					 (unsigned long long)res[i].cookie, res[i].status,
					 res[i].message);
		answered += k;
		if (k == 0)
			etcd_hosts_sleep_ms(1);
	}
	double tbs = etcd_hosts_now_s() - tb;
	assert_int_equal(answered, BURST);
	assert_int_equal(pods_in_etcd(ec, 1, &cpu, &newest), BURST);
	printf("sync burst: %d pods, 1 worker, answered in %.2f s: %.0f pods/s, %d keys "
	       "on n1\n", BURST, tbs, BURST / tbs, BURST);

	/* The lease revoked: hosts/host-a carries it. */
	char key[96];
	snprintf(key, sizeof(key), "/shmsched/%s/hosts/%s", hosts.cluster_name, names[0]);
	struct etcd_range_result hr;
	if (etcd_range(ec, key, strlen(key), NULL, 0, 0, &hr) != 0 || hr.n_kvs != 1)
		fail_msg("range %s: %s", key, etcd_client_error(ec));
	int64_t lease = hr.kvs[0].lease, revoked_at = hr.revision;
	etcd_range_result_free(&hr);
	assert_int_equal(etcd_lease_revoke(ec, lease), 0);
	int lost = 0;
	for (int i = 0; i < 3; i++) {
		struct shmsched_result r = place_tid(&pa, big);
		printf("after the revoke, pod %d: status %u: %s\n", i, r.status, r.message);
		if (r.status == SHMSCHED_PLACED)
			fail_msg("a pod placed after its host's lease was revoked");
		lost += strstr(r.message, "lost its lease before the placement was committed") !=
			NULL;
	}
	assert_int_equal(pods_in_etcd(ec, 0, &cpu, &newest), 49);
	assert_true(newest < revoked_at + 1);
	printf("after the revoke: 0 pods placed, 0 keys written (%d of 3 refused by the "
	       "fence, the rest by the gate)\n", lost);

	/* Re-joined with a new lease: z0 is its own again; the room of the
	 * rolled-back pods is free. */
	await_balanced(ec, 0x1u, own, 15.0);
	struct shmsched_result r;
	double t1 = etcd_hosts_now_s();
	do {
		r = place_tid(&pa, big);
		if (r.status != SHMSCHED_PLACED)
			etcd_hosts_sleep_ms(100);
	} while (r.status != SHMSCHED_PLACED && etcd_hosts_now_s() - t1 < 10.0);
	if (r.status != SHMSCHED_PLACED)
		fail_msg("re-joined, a pod of 1 cpu on n0 (2.5 of 4 held) was not placed: %s",
			 r.message);
	assert_int_equal(pods_in_etcd(ec, 0, &cpu, &newest), 50);
	assert_int_equal(cpu, 49 * 50 + 1000);

	/* Failover (item 3's rebuild): b joins, a is SIGKILLed; b takes
	 * every shard, counting a's 50 placements on n0 (3.45 of its 4 cpu)
	 * before it places there: 400m fits, then 1 cpu does not (b alone
	 * would see 3.6 cpu free and overcommit n0: the code before the
	 * rebuild). The invariant, from etcd: n0's placements hold at most
	 * its 4 cpu. */
	start_host(1);
	await_balanced(ec, 0x3u, own, 15.0);
	double tk = etcd_hosts_now_s();
	kill(pids[0], SIGKILL);
	waitpid(pids[0], NULL, 0);
	pids[0] = 0;
	shmsched_disconnect(pa.c);
	await_balanced(ec, 0x2u, own, TTL_S + 3.0);
	struct producer pb = {0};
	connect_to(1, &pb);
	uint32_t fit = template_of(&pb, 1, 0, "400m"), over = template_of(&pb, 1, 0, "1");
	do {
		r = place_tid(&pb, fit);
		if (r.status != SHMSCHED_PLACED)
			etcd_hosts_sleep_ms(50);
	} while (r.status != SHMSCHED_PLACED && etcd_hosts_now_s() - tk < TTL_S + 10.0);
	if (r.status != SHMSCHED_PLACED)
		fail_msg("b owns z0 but did not place 400m there (3.45 of 4 cpu held): %s",
			 r.message);
	printf("a SIGKILLed: b placed on z0 %.2f s later, a's placements counted\n",
	       etcd_hosts_now_s() - tk);
	r = place_tid(&pb, over);
	printf("b, a pod of 1 cpu on n0 (3.85 of 4 cpu held): status %u: %s\n", r.status,
	       r.message);
	if (r.status == SHMSCHED_PLACED)
		fail_msg("b placed 1 cpu on n0 where a's placements hold 3.45 of 4 cpu and b's "
			 "0.4: an overcommit (a's placements not counted on takeover)");
	assert_null(strstr(r.message, "owned by another host"));
	assert_int_equal(pods_in_etcd(ec, 0, &cpu, &newest), 51);
	printf("n0 from etcd: 51 placements, %lld of 4000 millicores: 0 overcommits\n",
	       (long long)cpu);
	assert_true(cpu <= 4000);
	/* b's own count: a's 50 on n0 and BURST on n1, each once: counted
	 * on a take, or held from its watch of other shards before (a
	 * take counts none of those again); its 2 committed, its 1 refused
	 * (by the scheduler: no etcd refusal). */
	long long counted = metric_of(1, "shmsched_etcd_placements_total{result=\"counted\"}"),
		  watched = metric_of(1, "shmsched_etcd_foreign_placements");
	printf("b holds a's 150 placements: %lld counted on takes, %lld from its watch\n",
	       counted, watched);
	assert_int_equal(counted + watched, 150);
	assert_metrics(1, "shmsched_etcd_placements_total{result=\"committed\"} 1");
	assert_metrics(1, "shmsched_etcd_placements_total{result=\"refused\"} 0");
	shmsched_disconnect(pb.c);
	etcd_client_close(ec);
	stop_host_clean(1);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* The placement ids of the keys under shards/z<z>/pods/ (sorted,
 * malloc'd, *n of them), the sum of their cpu and the newest mod
 * revision. One host writes there in the tests that call it: every key's
 * uid has the same first half (an --ephemeral host's is its name's hash
 * with a number drawn at its start mixed in, so not known here). */
static uint64_t *ids_in_etcd(struct etcd_client *ec, int z, size_t *n, int64_t *cpu_milli,
			     int64_t *newest)
{
	char key[128], end[128], half[17] = {0};
	int kl = snprintf(key, sizeof(key), "/shmsched/%s/shards/z%d/pods/", hosts.cluster_name, z);
	memcpy(end, key, (size_t)kl);
	end[kl - 1] = '/' + 1;
	struct etcd_range_result r;
	if (etcd_range(ec, key, (size_t)kl, end, (size_t)kl, 0, &r) != 0)
		fail_msg("range %s: %s", key, etcd_client_error(ec));
	uint64_t *ids = malloc((r.n_kvs + 1) * sizeof(*ids));
	assert_non_null(ids);
	*n = 0;
	*cpu_milli = 0;
	*newest = 0;
	for (size_t i = 0; i < r.n_kvs; i++) {
		assert_int_equal(r.kvs[i].key_len, (size_t)kl + 32);
		struct placement_value v;
		char msg[256], id[17] = {0};
		if (placement_value_decode(r.kvs[i].value, r.kvs[i].value_len, &v, msg,
					   sizeof(msg)) != 0)
			fail_msg("%.*s: %s", (int)r.kvs[i].key_len, r.kvs[i].key, msg);
		*cpu_milli += v.cpu_milli;
		if (r.kvs[i].mod_revision > *newest)
			*newest = r.kvs[i].mod_revision;
		if (half[0] == 0)
			memcpy(half, r.kvs[i].key + kl, 16);
		if (memcmp(r.kvs[i].key + kl, half, 16) != 0)
			fail_msg("%.*s: a second host's key (the first had %s)",
				 (int)r.kvs[i].key_len, r.kvs[i].key, half);
		memcpy(id, r.kvs[i].key + kl + 16, 16);
		ids[(*n)++] = strtoull(id, NULL, 16);
	}
	etcd_range_result_free(&r);
	qsort(ids, *n, sizeof(*ids), cmp_u64);
	return ids;
}

/* The transactions committed in zone z's shard: the sum of its lane
 * keys' versions (coord/commit_queue.h: a lane key's version counts its
 * lane's committed batches). */
static int64_t txns_in_etcd(struct etcd_client *ec, int z)
{
	char key[128], end[128];
	int kl = snprintf(key, sizeof(key), "/shmsched/%s/shards/z%d/commit/", hosts.cluster_name, z);
	memcpy(end, key, (size_t)kl);
	end[kl - 1] = '/' + 1;
	struct etcd_range_result r;
	if (etcd_range(ec, key, (size_t)kl, end, (size_t)kl, 0, &r) != 0)
		fail_msg("range %s: %s", key, etcd_client_error(ec));
	int64_t n = 0;
	for (size_t i = 0; i < r.n_kvs; i++)
		n += r.kvs[i].version;
	etcd_range_result_free(&r);
	return n;
}

/* A stream of `total` pods of template tid through producer p, the
 * answers read as they come: each answer's placement id kept in placed[]
 * (n_placed) when PLACED, else its status and message handed to
 * `other` (NULL: any answer but PLACED fails). `check` (NULL: none) is
 * called after each poll that read answers with the placed ids it read
 * (new_placed of them at placed + n_placed - new_placed). `tick` is
 * called after each poll with the answers so far. Returns the seconds
 * from the first submit to the last answer. */
struct stream {
	struct producer *p;
	uint32_t tid;
	unsigned total;
	uint64_t *placed;
	size_t n_placed;
	unsigned answered;
	void (*check)(struct stream *st, size_t new_placed);
	void (*other)(struct stream *st, const struct shmsched_result *r);
	void (*tick)(struct stream *st);
	void *ctx;
};

static double stream_pods(struct stream *st)
{
	struct shmsched_pod batch[256];
	unsigned sent = 0;
	double t0 = etcd_hosts_now_s();
	while (st->answered < st->total && etcd_hosts_now_s() - t0 < 120.0) {
		if (sent < st->total) {
			unsigned want = st->total - sent;
			if (want > 256)
				want = 256;
			for (unsigned i = 0; i < want; i++)
				batch[i] = (struct shmsched_pod){.cookie = ++st->p->cookie,
								 .template_id = st->tid,
								 .flags = SHMSCHED_NO_WAIT};
			int k = shmsched_submit(st->p->c, batch, want);
			assert_true(k >= 0);
			st->p->cookie -= want - (unsigned)k;
			sent += (unsigned)k;
		}
		struct shmsched_result res[256];
		int k = shmsched_poll(st->p->c, res, 256);
		assert_true(k >= 0);
		size_t fresh = 0;
		for (int i = 0; i < k; i++) {
			if (res[i].status == SHMSCHED_EVICTED) {
				/* A notice (async: a lost placement's), not an
				 * answer. */
				if (st->other == NULL)
					fail_msg("placement %llu evicted: %s",
						 (unsigned long long)res[i].placement_id,
						 res[i].message);
				st->other(st, &res[i]);
				res[i] = res[--k]; /* the last read in its place */
				i--;
				continue;
			}
			if (res[i].status == SHMSCHED_PLACED) {
				st->placed[st->n_placed++] = res[i].placement_id;
				fresh++;
			} else if (st->other != NULL) {
				st->other(st, &res[i]);
			} else {
				fail_msg("pod %llu: status %u: %s",
					 (unsigned long long)res[i].cookie, res[i].status,
					 res[i].message);
			}
		}
		st->answered += (unsigned)k;
		if (fresh > 0 && st->check != NULL)
			st->check(st, fresh);
		if (st->tick != NULL)
			st->tick(st);
		if (k == 0)
			etcd_hosts_sleep_ms(1);
	}
	assert_int_equal(st->answered, st->total);
	return etcd_hosts_now_s() - t0;
}

/* Each of the `fresh` ids last read has its key in etcd (ranged after
 * the answers were read: an answer never comes before its commit). */
struct pipe_ctx {
	struct etcd_client *ec;
	int zone;
	unsigned ranges;
	/* The revoke: once `revoke_after` answers are read; the answers
	 * refused after it (fenced: the commit refused). */
	unsigned revoke_after;
	int64_t lease;
	bool revoked;
	unsigned refused, fenced;
	unsigned told; /* async: EVICTED notices of lost placements */
};

static void keys_there(struct stream *st, size_t fresh)
{
	struct pipe_ctx *pc = st->ctx;
	size_t n;
	int64_t cpu, newest;
	uint64_t *ids = ids_in_etcd(pc->ec, pc->zone, &n, &cpu, &newest);
	pc->ranges++;
	for (size_t i = st->n_placed - fresh; i < st->n_placed; i++)
		if (bsearch(&st->placed[i], ids, n, sizeof(*ids), cmp_u64) == NULL)
			fail_msg("placement %llu answered PLACED before its key "
				 "shards/z%d/pods/<host><id> was in etcd (%zu keys there)",
				 (unsigned long long)st->placed[i], pc->zone, n);
	free(ids);
}

static void revoke_once(struct stream *st)
{
	struct pipe_ctx *pc = st->ctx;
	if (pc->revoked || st->answered < pc->revoke_after)
		return;
	assert_int_equal(etcd_lease_revoke(pc->ec, pc->lease), 0);
	pc->revoked = true;
}

static void refused_after_revoke(struct stream *st, const struct shmsched_result *r)
{
	struct pipe_ctx *pc = st->ctx;
	if (r->status == SHMSCHED_EVICTED && pc->revoked &&
	    strstr(r->message, "lost when shard") != NULL) {
		pc->told++;
		return;
	}
	if (r->status != SHMSCHED_UNSCHEDULABLE || !pc->revoked)
		fail_msg("pod %llu: status %u%s: %s", (unsigned long long)r->cookie, r->status,
			 pc->revoked ? "" : " before the revoke", r->message);
	pc->refused++;
	pc->fenced += strstr(r->message, "lost its lease before the placement was "
				"committed") != NULL;
}

/* The lease host h holds (hosts/<h> carries it). */
static int64_t lease_of(struct etcd_client *ec, int h)
{
	char key[96];
	snprintf(key, sizeof(key), "/shmsched/%s/hosts/%s", hosts.cluster_name, names[h]);
	struct etcd_range_result hr;
	if (etcd_range(ec, key, strlen(key), NULL, 0, 0, &hr) != 0 || hr.n_kvs != 1)
		fail_msg("range %s: %s", key, etcd_client_error(ec));
	int64_t lease = hr.kvs[0].lease;
	etcd_range_result_free(&hr);
	return lease;
}

static long long metric_of(int h, const char *name);
static double await_metric(int h, const char *name, long long v, bool down, double limit_s);

/* Sync answers from the commits' completions (daemon/attempt.c,
 * etcd_defer; issue 40): one host owning every shard, one worker.
 * 1. PIPE_CHECKED pods (no requests, on n2) streamed; after each read of
 *    answers etcd is ranged: every pod read PLACED has its key there.
 * 2. A timed stream (PIPE_PODS, or SHMSCHED_ETCD_PIPE_PODS) on n2: pods/s,
 *    etcd's transactions/s and records a transaction printed; every
 *    PLACED pod's key there afterwards; the transactions carry more than
 *    2 records on average (the worker does not wait for each commit; on
 *    the code before, which blocked the worker on each pod's commit, 1
 *    record a transaction: fails here); the membership's ticks still
 *    without errors with over 4 MiB of keys in the shard (they read no
 *    placements: on the code before, each tick read every placement and
 *    failed past etcd_client's 4 MiB bound). Its shard watch follows no
 *    key range and receives no event over the stream (on the code before
 *    it watched every shard, its own too: every commit's keys came back
 *    to it).
 * 3. The lease revoked mid-stream (pods of 1m on n3): every pod answered
 *    PLACED has its key, every key is of a pod answered PLACED, the rest
 *    answered unschedulable (the fence's "lost its lease" or the gate's),
 *    no key written after the revoke; re-joined, n3's room is exactly
 *    etcd's keys': a pod of the rest of its 4 cpu fits, 1m more does not
 *    (0 overcommits, the rolled-back pods' room given back).
 * 4. A producer leaves with its pods' commits in flight: the host lives,
 *    places a new producer's pod, and stops with status 0 (its drain
 *    finishes what was deferred). */
static void sync_answers_after_commits(void **state)
{
	(void)state;
	hosts.cluster_name = "etcd-pipe";
	hosts.ttl_s = getenv("SHMSCHED_ETCD_TTL") != NULL ? atoi(getenv("SHMSCHED_ETCD_TTL")) : 5;
	struct etcd_client *ec;
	char err[256];
	/* Ranges of up to 50,000 keys (bench/etcd_pipe.sh) on a loaded
	 * machine: 3 s timed out. */
	struct etcd_client_options o = {.timeout_ms = 20000,
					.max_response_bytes = 64u << 20};
	if (etcd_client_open(&ec, endpoints, &o, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	int own[ZONES];
	start_host(0);
	await_balanced(ec, 0x1u, own, 15.0);
	struct producer pa = {0};
	connect_to(0, &pa);
	uint32_t none = template_of(&pa, 0, 2, "0");
	const char *env = getenv("SHMSCHED_ETCD_PIPE_PODS");
	unsigned total = env != NULL ? (unsigned)strtoul(env, NULL, 10) : PIPE_PODS;
	if (total < PIPE_CHECKED)
		total = PIPE_CHECKED;
	uint64_t *placed = malloc((size_t)(total + PIPE_CHECKED + PIPE_REVOKE_MAX) *
				  sizeof(*placed));
	assert_non_null(placed);

	/* 1. Each answer's key ranged after it is read. */
	struct pipe_ctx pc = {.ec = ec, .zone = 2};
	struct stream st = {.p = &pa, .tid = none, .total = PIPE_CHECKED, .placed = placed,
			    .check = keys_there, .ctx = &pc};
	double took = stream_pods(&st);
	printf("deferred sync: %u pods, each PLACED answer's key found in etcd by a range "
	       "after it was read (%u ranges), %.2f s\n", PIPE_CHECKED, pc.ranges, took);

	/* 2. Timed. Every shard the host's: its watch follows none. */
	await_metric(0, "shmsched_etcd_watch_ranges", 0, true, 10.0);
	long long received0 = metric_of(0, "shmsched_etcd_watch_received_total");
	long long streams0 = metric_of(0, "shmsched_etcd_watch_streams_total");
	int64_t txn0 = txns_in_etcd(ec, 2);
	struct stream tst = {.p = &pa, .tid = none, .total = total,
			     .placed = placed + PIPE_CHECKED};
	/* Marks for bench/etcd_pipe.sh, which reads each process's CPU
	 * between them (flushed: its stdout is a file). */
	printf("deferred sync: the timed stream starts\n");
	fflush(stdout);
	took = stream_pods(&tst);
	printf("deferred sync: the timed stream ends\n");
	fflush(stdout);
	int64_t txns = txns_in_etcd(ec, 2) - txn0;
	size_t n;
	int64_t cpu, newest;
	uint64_t *ids = ids_in_etcd(ec, 2, &n, &cpu, &newest);
	for (size_t i = 0; i < tst.n_placed; i++)
		if (bsearch(&tst.placed[i], ids, n, sizeof(*ids), cmp_u64) == NULL)
			fail_msg("placement %llu answered PLACED has no key in etcd",
				 (unsigned long long)tst.placed[i]);
	free(ids);
	assert_int_equal(n, PIPE_CHECKED + total);
	printf("deferred sync, 1 host, 1 worker: %u pods in %.2f s: %.0f pods/s; etcd: %lld "
	       "transactions, %.0f a second, %.1f records a transaction\n", total, took,
	       total / took, (long long)txns, (double)txns / took,
	       txns > 0 ? (double)total / (double)txns : 0.0);
	if (txns <= 0 || (double)total / (double)txns <= 2.0)
		fail_msg("%lld transactions for %u pods: the worker waited for each commit",
			 (long long)txns, total);
	long long received = metric_of(0, "shmsched_etcd_watch_received_total");
	printf("the watch of a host owning every shard: %lld key ranges, %lld events "
	       "received over the stream (%lld before), %lld streams opened (%lld before)\n",
	       metric_of(0, "shmsched_etcd_watch_ranges"), received - received0, received0,
	       metric_of(0, "shmsched_etcd_watch_streams_total"), streams0);
	assert_int_equal(metric_of(0, "shmsched_etcd_watch_ranges"), 0);
	assert_int_equal(received, received0);
	assert_int_equal(metric_of(0, "shmsched_etcd_watch_streams_total"), streams0);
	/* The membership's ticks read no placements: with more than 4 MiB of
	 * them (etcd_client's bound on a response), a read of the whole
	 * prefix failed every tick (and took megabytes a tick below it). */
	etcd_hosts_sleep_ms(600);
	assert_metrics(0, "shmsched_etcd_events_total{event=\"error\"} 0");

	/* 3. The lease revoked mid-stream. */
	uint32_t milli = template_of(&pa, 0, 3, "1m");
	pc = (struct pipe_ctx){.ec = ec, .zone = 3, .revoke_after = 300,
			       .lease = lease_of(ec, 0)};
	struct stream rst = {.p = &pa, .tid = milli, .total = PIPE_REVOKE_MAX,
			     .placed = placed, .other = refused_after_revoke,
			     .tick = revoke_once, .ctx = &pc};
	took = stream_pods(&rst);
	assert_true(pc.revoked);
	ids = ids_in_etcd(ec, 3, &n, &cpu, &newest);
	for (size_t i = 0; i < rst.n_placed; i++)
		if (bsearch(&rst.placed[i], ids, n, sizeof(*ids), cmp_u64) == NULL)
			fail_msg("placement %llu answered PLACED around the revoke has no key",
				 (unsigned long long)rst.placed[i]);
	free(ids);
	assert_int_equal(n, rst.n_placed); /* no key of a pod not answered PLACED */
	assert_int_equal(cpu, (int64_t)rst.n_placed);
	printf("lease revoked after %u answers: %zu placed, each with its key, no key "
	       "without its pod answered placed; %u unschedulable (%u fenced: \"lost its "
	       "lease\", the rest by the gate, until it re-joined); %.2f s\n",
	       pc.revoke_after, rst.n_placed, pc.refused, pc.fenced, took);
	assert_int_equal(rst.n_placed + pc.refused, PIPE_REVOKE_MAX);
	await_balanced(ec, 0x1u, own, 15.0);
	char rest[32];
	snprintf(rest, sizeof(rest), "%lldm", (long long)(4000 - cpu));
	uint32_t fill = template_of(&pa, 0, 3, rest);
	struct shmsched_result r;
	double t1 = etcd_hosts_now_s();
	do {
		r = place_tid(&pa, fill);
		if (r.status != SHMSCHED_PLACED)
			etcd_hosts_sleep_ms(100);
	} while (r.status != SHMSCHED_PLACED && etcd_hosts_now_s() - t1 < 10.0);
	if (r.status != SHMSCHED_PLACED)
		fail_msg("re-joined, the rest of n3 (%s, etcd holding %lldm) was not placed: "
			 "a rolled-back pod's room kept? %s", rest, (long long)cpu, r.message);
	r = place_tid(&pa, milli);
	if (r.status == SHMSCHED_PLACED)
		fail_msg("1m more placed on n3, full by etcd's keys: an overcommit");
	ids = ids_in_etcd(ec, 3, &n, &cpu, &newest);
	free(ids);
	assert_int_equal(cpu, 4000);
	printf("re-joined: n3 filled to its 4 cpu by etcd's keys, 1m more refused: %s\n",
	       r.message);

	/* 4. A producer leaves with commits in flight. */
	struct producer pb = {0};
	connect_to(0, &pb);
	struct shmsched_pod batch[256];
	for (unsigned i = 0; i < 256; i++)
		batch[i] = (struct shmsched_pod){.cookie = i + 1, .template_id = pb.tid[2],
						 .flags = SHMSCHED_NO_WAIT};
	int k = shmsched_submit(pb.c, batch, 256);
	assert_true(k > 0);
	shmsched_disconnect(pb.c);
	etcd_hosts_sleep_ms(200);
	int status;
	assert_int_equal(waitpid(pids[0], &status, WNOHANG), 0);
	r = place_tid(&pa, none);
	if (r.status != SHMSCHED_PLACED)
		fail_msg("after a producer left with pods in flight: %s", r.message);
	printf("a producer left with %d pods in flight: the host placed the next pod\n", k);
	/* And one leaving as the host stops: the drain answers what is
	 * deferred. */
	struct producer pc2 = {0};
	connect_to(0, &pc2);
	for (unsigned i = 0; i < 256; i++)
		batch[i].template_id = pc2.tid[2];
	assert_true(shmsched_submit(pc2.c, batch, 256) > 0);
	shmsched_disconnect(pa.c);
	free(placed);
	etcd_client_close(ec);
	int st0 = stop_host(0);
	shmsched_disconnect(pc2.c);
	if (!WIFEXITED(st0) || WEXITSTATUS(st0) != 0)
		fail_msg("%s stopped with status 0x%x (log %s/%s.log)", names[0], st0, dir,
			 names[0]);
}

/* How many lines of host h's log hold `what`. */
static unsigned log_lines(int h, const char *what)
{
	char log[128], line[1024];
	snprintf(log, sizeof(log), "%s/%s.log", dir, names[h]);
	FILE *f = fopen(log, "r");
	if (f == NULL)
		return 0;
	unsigned n = 0;
	while (fgets(line, sizeof(line), f) != NULL)
		n += strstr(line, what) != NULL;
	fclose(f);
	return n;
}

/* ---- rules across shards (daemon/shard_watch_internal.h) ----------------- */

#define CROSS_LABEL "example.com/shard"
#define LAG_N 20

/* Shard s<k>'s owner (a host index, -1: none). */
static int cross_owner(struct etcd_client *ec, int k)
{
	char key[96];
	snprintf(key, sizeof(key), "/shmsched/%s/shards/s%d/owner", hosts.cluster_name, k);
	struct etcd_range_result r;
	if (etcd_range(ec, key, strlen(key), NULL, 0, 0, &r) != 0)
		fail_msg("range %s: %s", key, etcd_client_error(ec));
	int own = -1;
	for (int h = 0; r.n_kvs == 1 && h < HOSTS; h++)
		if (r.kvs[0].value_len == strlen(names[h]) &&
		    memcmp(r.kvs[0].value, names[h], r.kvs[0].value_len) == 0)
			own = h;
	etcd_range_result_free(&r);
	return own;
}

/* The newest mod revision among shard s<k>'s placements, and how many;
 * -1 when etcd did not answer (a leader changing) and `may_fail`. */
static long cross_pods_or(struct etcd_client *ec, int k, int64_t *newest, bool may_fail)
{
	char key[128], end[128];
	int kl = snprintf(key, sizeof(key), "/shmsched/%s/shards/s%d/pods/", hosts.cluster_name, k);
	memcpy(end, key, (size_t)kl);
	end[kl - 1] = '/' + 1;
	struct etcd_range_result r;
	if (etcd_range(ec, key, (size_t)kl, end, (size_t)kl, 0, &r) != 0) {
		if (may_fail)
			return -1;
		fail_msg("range %s: %s", key, etcd_client_error(ec));
	}
	*newest = 0;
	for (size_t i = 0; i < r.n_kvs; i++)
		if (r.kvs[i].mod_revision > *newest)
			*newest = r.kvs[i].mod_revision;
	long n = (long)r.n_kvs;
	etcd_range_result_free(&r);
	return n;
}

static size_t cross_pods(struct etcd_client *ec, int k, int64_t *newest)
{
	return (size_t)cross_pods_or(ec, k, newest, false);
}

/* Host h's metric `name` (a line "name value"), or -1 when absent. */
static long long metric_of(int h, const char *name)
{
	char *text = metrics_text(h);
	char want[160];
	snprintf(want, sizeof(want), "\n%s ", name);
	const char *at = strstr(text, want);
	long long v = at != NULL ? atoll(at + strlen(want)) : -1;
	free(text);
	return v;
}

#define LOST_METRIC "shmsched_etcd_placements_total{result=\"lost\"}"

/* async (daemon/etcd_sync_internal.h; issue 40): one host, one worker,
 * --etcd-durability async.
 * 1. PIPE_PODS pods (no requests, n2) streamed, answered at once: every
 *    one placed, and every key in etcd within 20 s; pods/s printed, then
 *    the same stream through a host without --etcd (the figure beside).
 *    On the code before, async was refused (--etcd-durability); without
 *    the roll-back of lost placements (daemon.c report_lost) 2 fails.
 * 2. The lease revoked mid-stream (1m pods on n3): the pods answered
 *    PLACED whose keys are missing afterwards are exactly as many as the
 *    host reports lost (its metric) and logs ("answered placed, lost when
 *    shard z3's lease lapsed") and tells their producer (EVICTED
 *    notices, as many as its room takes); every key is of a pod answered placed;
 *    re-joined, n3's room is exactly etcd's keys' (the lost placements
 *    rolled back: a pod of the rest of its 4 cpu fits, 1m more does not). */
static void async_answers_then_commits(void **state)
{
	(void)state;
	hosts.cluster_name = "etcd-async";
	hosts.ttl_s = getenv("SHMSCHED_ETCD_TTL") != NULL ? atoi(getenv("SHMSCHED_ETCD_TTL")) : 5;
	hosts.durability = "async";
	struct etcd_client *ec;
	char err[256];
	/* Ranges of up to 50,000 keys (bench/etcd_pipe.sh) on a loaded
	 * machine: 3 s timed out. */
	struct etcd_client_options o = {.timeout_ms = 20000,
					.max_response_bytes = 64u << 20};
	if (etcd_client_open(&ec, endpoints, &o, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	int own[ZONES];
	start_host(0);
	await_balanced(ec, 0x1u, own, 15.0);
	struct producer pa = {0};
	connect_to(0, &pa);
	uint32_t none = template_of(&pa, 0, 2, "0");
	const char *env = getenv("SHMSCHED_ETCD_PIPE_PODS");
	unsigned total = env != NULL ? (unsigned)strtoul(env, NULL, 10) : PIPE_PODS;
	uint64_t *placed = malloc((size_t)(total + PIPE_REVOKE_MAX) * sizeof(*placed));
	assert_non_null(placed);

	/* 1. Answered at once, committed after. */
	struct stream st = {.p = &pa, .tid = none, .total = total, .placed = placed};
	double took = stream_pods(&st), async_took = took;
	/* Committed (the host's count, cheap to read), then every key read
	 * once. */
	double tc = etcd_hosts_now_s(), lag;
	while (metric_of(0, "shmsched_etcd_placements_total{result=\"committed\"}") <
		       (long long)total && etcd_hosts_now_s() - tc < 20.0)
		etcd_hosts_sleep_ms(10);
	lag = etcd_hosts_now_s() - tc;
	size_t n;
	int64_t cpu, newest;
	uint64_t *ids = ids_in_etcd(ec, 2, &n, &cpu, &newest);
	for (size_t i = 0; i < st.n_placed; i++)
		if (bsearch(&placed[i], ids, n, sizeof(*ids), cmp_u64) == NULL)
			fail_msg("placement %llu (async) has no key %.1f s after the last answer",
				 (unsigned long long)placed[i], lag);
	free(ids);
	printf("async, 1 host, 1 worker: %u pods answered in %.2f s: %.0f pods/s; every one "
	       "committed %.2f s after the last answer\n", total, took, total / took, lag);
	assert_int_equal(metric_of(0, LOST_METRIC), 0);

	/* 2. The lease revoked mid-stream. */
	uint32_t milli = template_of(&pa, 0, 3, "1m");
	struct pipe_ctx pc = {.ec = ec, .zone = 3, .revoke_after = 300,
			      .lease = lease_of(ec, 0)};
	struct stream rst = {.p = &pa, .tid = milli, .total = PIPE_REVOKE_MAX,
			     .placed = placed, .other = refused_after_revoke,
			     .tick = revoke_once, .ctx = &pc};
	took = stream_pods(&rst);
	assert_true(pc.revoked);
	await_balanced(ec, 0x1u, own, 15.0);
	/* The losses are rolled back by the membership's next ticks. */
	etcd_hosts_sleep_ms(1000);
	ids = ids_in_etcd(ec, 3, &n, &cpu, &newest);
	size_t missing = 0;
	qsort(rst.placed, rst.n_placed, sizeof(*rst.placed), cmp_u64);
	for (size_t i = 0; i < rst.n_placed; i++)
		missing += bsearch(&rst.placed[i], ids, n, sizeof(*ids), cmp_u64) == NULL;
	for (size_t i = 0; i < n; i++)
		if (bsearch(&ids[i], rst.placed, rst.n_placed, sizeof(*ids), cmp_u64) == NULL)
			fail_msg("key of placement %llu: its pod was not answered placed",
				 (unsigned long long)ids[i]);
	free(ids);
	long long lost = metric_of(0, LOST_METRIC);
	unsigned logged = log_lines(0, "lost when shard z3's lease lapsed");
	/* Each lost placement's owner told: an EVICTED notice naming why
	 * (notices past the producer's room are dropped and counted, by the
	 * client library or the daemon: best effort beside the log). */
	unsigned told = pc.told;
	double tn = etcd_hosts_now_s();
	while (etcd_hosts_now_s() - tn < 1.0) {
		struct shmsched_result res[64];
		int k = shmsched_poll(pa.c, res, 64);
		assert_true(k >= 0);
		for (int i = 0; i < k; i++) {
			if (res[i].status != SHMSCHED_EVICTED)
				fail_msg("after the revoke, status %u: %s", res[i].status,
					 res[i].message);
			assert_non_null(strstr(res[i].message, "lost when shard z3's lease"));
			told++;
		}
		if (k == 0)
			etcd_hosts_sleep_ms(10);
	}
	printf("async, lease revoked after %u answers: %zu placed, %zu of them without a key "
	       "afterwards; the host reports %lld lost (metric), logs %u and tells their "
	       "producer %u (evicted notices: the rest past its room); %u refused at once (%u fenced); %.2f s\n",
	       pc.revoke_after, rst.n_placed, missing, lost, logged, told, pc.refused,
	       pc.fenced, took);
	assert_int_equal(lost, (long long)missing);
	assert_int_equal(logged, (unsigned)missing);
	assert_true(told > 0 && told + shmsched_notices_lost(pa.c) <= missing);
	char rest[32];
	snprintf(rest, sizeof(rest), "%lldm", (long long)(4000 - cpu));
	uint32_t fill = template_of(&pa, 0, 3, rest);
	struct shmsched_result r;
	double t1 = etcd_hosts_now_s();
	do {
		r = place_tid(&pa, fill);
		if (r.status != SHMSCHED_PLACED)
			etcd_hosts_sleep_ms(100);
	} while (r.status != SHMSCHED_PLACED && etcd_hosts_now_s() - t1 < 10.0);
	if (r.status != SHMSCHED_PLACED)
		fail_msg("re-joined, the rest of n3 (%s, etcd holding %lldm) was not placed: "
			 "a lost placement's room kept? %s", rest, (long long)cpu, r.message);
	r = place_tid(&pa, milli);
	if (r.status == SHMSCHED_PLACED)
		fail_msg("1m more placed on n3, full by etcd's keys: an overcommit");
	shmsched_disconnect(pa.c);
	etcd_client_close(ec);
	stop_host_clean(0);

	/* The figure beside: one host without --etcd, the same stream. */
	hosts.no_etcd = true;
	start_host(1);
	struct producer pb = {0};
	connect_to(1, &pb);
	struct stream ost = {.p = &pb, .tid = template_of(&pb, 1, 2, "0"), .total = total,
			     .placed = placed};
	double one = stream_pods(&ost);
	printf("one host without --etcd, 1 worker: %u pods in %.2f s: %.0f pods/s (async "
	       "took %.2f times as long)\n", total, one, total / one, async_took / one);
	shmsched_disconnect(pb.c);
	free(placed);
}

/* Waits (limit_s) until host h's metric `name` is at least (or, `down`,
 * at most) v; the seconds it took. */
static double await_metric(int h, const char *name, long long v, bool down, double limit_s)
{
	double t0 = etcd_hosts_now_s();
	long long m = -1;
	while (etcd_hosts_now_s() - t0 < limit_s) {
		m = metric_of(h, name);
		if (m >= 0 && (down ? m <= v : m >= v))
			return etcd_hosts_now_s() - t0;
		etcd_hosts_sleep_ms(2);
	}
	fail_msg("%s's %s stayed %lld within %.1f s; expected %s %lld", names[h], name, m,
		 limit_s, down ? "at most" : "at least", v);
	return -1;
}

/* A template on host h's producer: a pod of 100m with labels app=<app>
 * on node <node>, and `extra` (JSON members of its spec, or ""). */
static uint32_t cross_template(struct producer *p, int h, const char *app, const char *node,
			       const char *extra)
{
	char json[1536], err[256];
	snprintf(json, sizeof(json),
		 "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"c-%s\",\"namespace\":\"default\","
		 "\"labels\":{\"app\":\"%s\"}},\"spec\":{\"nodeSelector\":{"
		 "\"kubernetes.io/hostname\":\"%s\"},%s\"containers\":[{\"name\":\"c\","
		 "\"resources\":{\"requests\":{\"cpu\":\"100m\"}}}]}}", app, app, node, extra);
	uint32_t tid;
	if (shmsched_register_template(p->c, json, strlen(json), &tid, err, sizeof(err)) != 0)
		fail_msg("template app=%s on %s (%s): %s", app, names[h], node, err);
	return tid;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Inter-pod rules across shards (issue 40, "Rules across shards"): four
 * nodes, two zones, two shards by the label example.com/shard, each zone
 * in both shards (x0: za s0, x1: za s1, x2: zb s0, x3: zb s1), two
 * hosts, one shard each: "a" owns s0, "b" s1 (whichever host that is).
 * 1. a places 2 pods app=x on x0 (zone za); b's watch sees them (its
 *    shmsched_etcd_watch_revision reaches their commit's revision; 2
 *    foreign placements). Each host's watch follows one key range (the
 *    other's shard: shmsched_etcd_watch_ranges 1).
 * 2. On b, a pod app=x on x1 (za) with topologySpreadConstraints maxSkew
 *    1 over zones, DoNotSchedule, nodeAffinityPolicy Ignore: refused (za
 *    3, zb 0: skew 3). A pod with required anti-affinity to app=x on
 *    kubernetes.io/hostname on x1: placed (a's pods are on x0); the same
 *    on topology.kubernetes.io/zone: refused.
 * 3. a releases its 2 pods: b sees the deletes (0 foreign), and places
 *    the spread pod, then the zone anti-affinity pod.
 * 4. The watch's lag: a places LAG_N pods, each answered after its
 *    commit; from the answer to b's watch revision reaching the commit's
 *    revision, median and max printed.
 * 5. etcd compacted at its newest revision, then a third host joins (it
 *    owns no shard: two shards, three hosts): its list at start counts
 *    every placement of a and b (a's LAG_N, b's 1) and none of its own.
 * 6. b's watch cut and resumed at a compacted revision (b stopped, the
 *    etcd member it reads killed, 5 of a's pods released, etcd
 *    compacted, b continued): it lists again and holds a's LAG_N - 5.
 * 7. A shard from b to a and back (daemon/shard_watch.c follows only the
 *    shards a host does not own): the third host stopped, b SIGKILLed: a
 *    takes s1 and, owning every shard, follows no range; b restarted: the
 *    coordinator gives it one of a's two shards (X), which a releases;
 *    b places a pod on X as soon as it owns it, and a's watch (one range
 *    again) holds every placement not its own (b's pod on s1 from step 3
 *    and this one: 2), none lost between its release and its watch.
 * On the code before the watch, b places the spread pod and the zone
 * anti-affinity pod in 2: it fails there. */
static void rules_across_shards(void **state)
{
	(void)state;
	hosts.cluster_name = "etcd-cross";
	hosts.cluster_file = "cross.json";
	hosts.shard_by = CROSS_LABEL;
	struct etcd_client *ec;
	char err[256];
	struct etcd_client_options o = {.timeout_ms = 3000};
	if (etcd_client_open(&ec, endpoints, &o, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	start_host(0);
	start_host(1);
	int a = -1, b = -1;
	double t0 = etcd_hosts_now_s();
	while (etcd_hosts_now_s() - t0 < 15.0) {
		a = cross_owner(ec, 0);
		b = cross_owner(ec, 1);
		if (a >= 0 && b >= 0 && a != b)
			break;
		etcd_hosts_sleep_ms(20);
	}
	if (a < 0 || b < 0 || a == b)
		fail_msg("shards s0, s1 not split between the two hosts in 15 s: %d %d", a, b);
	printf("cross: %s owns s0 (x0 za, x2 zb), %s owns s1 (x1 za, x3 zb)\n", names[a],
	       names[b]);
	struct producer pa = {0}, pb = {0};
	char sock[128];
	sock_of(a, sock, sizeof(sock));
	if (shmsched_connect(sock, &pa.c, err, sizeof(err)) != 0)
		fail_msg("connect %s: %s", sock, err);
	sock_of(b, sock, sizeof(sock));
	if (shmsched_connect(sock, &pb.c, err, sizeof(err)) != 0)
		fail_msg("connect %s: %s", sock, err);

	/* 1. a's two pods app=x in za. */
	uint32_t x_on_x0 = cross_template(&pa, a, "x", "x0", "");
	uint64_t ids[2];
	for (int i = 0; i < 2; i++) {
		struct shmsched_result r = place_tid(&pa, x_on_x0);
		if (r.status != SHMSCHED_PLACED)
			fail_msg("%s: pod app=x on x0 not placed: %s", names[a], r.message);
		ids[i] = r.placement_id;
	}
	int64_t rev;
	assert_int_equal(cross_pods(ec, 0, &rev), 2);
	double lag = await_metric(b, "shmsched_etcd_watch_revision", rev, false, 10.0);
	printf("cross: %s saw %s's 2 pods (revision %lld) %.3f s after their answers\n",
	       names[b], names[a], (long long)rev, lag);
	assert_int_equal(metric_of(b, "shmsched_etcd_foreign_placements"), 2);
	await_metric(a, "shmsched_etcd_watch_ranges", 1, false, 10.0);
	assert_int_equal(metric_of(a, "shmsched_etcd_watch_ranges"), 1);
	assert_int_equal(metric_of(b, "shmsched_etcd_watch_ranges"), 1);

	/* 2. b's rules count them. */
	uint32_t spread = cross_template(
		&pb, b, "x", "x1",
		"\"topologySpreadConstraints\":[{\"maxSkew\":1,\"topologyKey\":"
		"\"topology.kubernetes.io/zone\",\"whenUnsatisfiable\":\"DoNotSchedule\","
		"\"nodeAffinityPolicy\":\"Ignore\",\"labelSelector\":{\"matchLabels\":"
		"{\"app\":\"x\"}}}],");
	uint32_t anti_host = cross_template(
		&pb, b, "h", "x1",
		"\"affinity\":{\"podAntiAffinity\":{\"requiredDuringSchedulingIgnoredDuring"
		"Execution\":[{\"labelSelector\":{\"matchLabels\":{\"app\":\"x\"}},"
		"\"topologyKey\":\"kubernetes.io/hostname\"}]}},");
	uint32_t anti_zone = cross_template(
		&pb, b, "z", "x1",
		"\"affinity\":{\"podAntiAffinity\":{\"requiredDuringSchedulingIgnoredDuring"
		"Execution\":[{\"labelSelector\":{\"matchLabels\":{\"app\":\"x\"}},"
		"\"topologyKey\":\"topology.kubernetes.io/zone\"}]}},");
	struct shmsched_result r = place_tid(&pb, spread);
	printf("cross: %s, spread pod app=x on x1 (za 2 of a's, zb 0): status %u: %s\n",
	       names[b], r.status, r.message);
	if (r.status == SHMSCHED_PLACED)
		fail_msg("%s placed a pod app=x in za, whose 2 pods app=x on %s's shard make "
			 "the skew 3 (maxSkew 1): the other shard's pods not counted", names[b],
			 names[a]);
	r = place_tid(&pb, anti_host);
	if (r.status != SHMSCHED_PLACED)
		fail_msg("%s: anti-affinity to app=x on hostname, on x1 (a's pods on x0): not "
			 "placed: %s", names[b], r.message);
	if (shmsched_release(pb.c, r.placement_id, err, sizeof(err)) != 0)
		fail_msg("release: %s", err);
	r = place_tid(&pb, anti_zone);
	printf("cross: %s, anti-affinity to app=x on zone, on x1: status %u: %s\n", names[b],
	       r.status, r.message);
	if (r.status == SHMSCHED_PLACED)
		fail_msg("%s placed a pod with anti-affinity to app=x on zone in za, where %s's "
			 "pods app=x are", names[b], names[a]);

	/* 3. a's pods gone: b sees it. */
	for (int i = 0; i < 2; i++)
		if (shmsched_release(pa.c, ids[i], err, sizeof(err)) != 0)
			fail_msg("release on %s: %s", names[a], err);
	lag = await_metric(b, "shmsched_etcd_foreign_placements", 0, true, 10.0);
	printf("cross: %s saw the 2 releases %.3f s after they were answered\n", names[b], lag);
	r = place_tid(&pb, spread);
	if (r.status != SHMSCHED_PLACED)
		fail_msg("%s: spread pod app=x on x1 once a's pods went: not placed: %s",
			 names[b], r.message);
	uint64_t spread_id = r.placement_id;
	r = place_tid(&pb, anti_zone);
	/* b's own spread pod app=x is in za now: refused, by this host's own
	 * count (the same shard). */
	assert_int_not_equal(r.status, SHMSCHED_PLACED);
	if (shmsched_release(pb.c, spread_id, err, sizeof(err)) != 0)
		fail_msg("release: %s", err);
	r = place_tid(&pb, anti_zone);
	if (r.status != SHMSCHED_PLACED)
		fail_msg("%s: zone anti-affinity pod on x1, no app=x left: not placed: %s",
			 names[b], r.message);

	/* 4. The lag, over LAG_N commits. */
	uint32_t other = cross_template(&pa, a, "lag", "x2", "");
	double lags[LAG_N];
	uint64_t lag_ids[LAG_N];
	for (int i = 0; i < LAG_N; i++) {
		r = place_tid(&pa, other);
		double ta = etcd_hosts_now_s();
		if (r.status != SHMSCHED_PLACED)
			fail_msg("%s: pod %d on x2 not placed: %s", names[a], i, r.message);
		lag_ids[i] = r.placement_id;
		assert_int_equal(cross_pods(ec, 0, &rev), (size_t)i + 1);
		await_metric(b, "shmsched_etcd_watch_revision", rev, false, 10.0);
		lags[i] = etcd_hosts_now_s() - ta;
	}
	qsort(lags, LAG_N, sizeof(lags[0]), cmp_double);
	printf("cross: watch lag, %s's answer to %s's watch revision at its commit, %d "
	       "commits: median %.1f ms, max %.1f ms (the metric polled every 2 ms)\n",
	       names[a], names[b], LAG_N, lags[LAG_N / 2] * 1e3, lags[LAG_N - 1] * 1e3);
	assert_int_equal(metric_of(b, "shmsched_etcd_foreign_placements"), LAG_N);

	/* 5. Compacted, then a third host's list counts right. */
	struct etcd_range_result hr;
	if (etcd_range(ec, "/", 1, NULL, 0, 0, &hr) != 0)
		fail_msg("range: %s", etcd_client_error(ec));
	int64_t newest = hr.revision;
	etcd_range_result_free(&hr);
	assert_int_equal(etcd_compact(ec, newest), 0);
	start_host(2);
	await_metric(2, "shmsched_etcd_watch_events_total{event=\"relist\"}", 1, false, 15.0);
	/* Its list may come before the coordinator's answer: every shard is
	 * others' either way (it is given none of two). */
	await_metric(2, "shmsched_etcd_foreign_placements", LAG_N + 1, false, 10.0);
	assert_int_equal(metric_of(2, "shmsched_etcd_foreign_placements"), LAG_N + 1);
	/* It owns neither: s0 and s1 are one run, one range. */
	assert_int_equal(metric_of(2, "shmsched_etcd_watch_ranges"), 1);
	assert_int_equal(cross_owner(ec, 0), a);
	assert_int_equal(cross_owner(ec, 1), b);

	/* 6. b's watch cut, then resumed at a compacted revision: b stopped,
	 * the etcd member its watch reads (the first: endpoints are tried in
	 * order) killed, 5 of a's pods released, etcd compacted at its
	 * newest revision, b continued: its watch breaks, resumes on another
	 * member from a compacted revision, lists again and holds the 15
	 * left. */
	const char *pid_list = getenv("SHMSCHED_ETCD_PIDS");
	assert_non_null(pid_list);
	pid_t member0 = (pid_t)atol(pid_list);
	assert_true(member0 > 0);
	long long relists = metric_of(b, "shmsched_etcd_watch_events_total{event=\"relist\"}");
	kill(pids[b], SIGSTOP);
	double ts = etcd_hosts_now_s();
	kill(member0, SIGKILL);
	/* This test's client, on the others (a client moves on only when a
	 * connection cannot be made, and its connection was to member 0). */
	etcd_client_close(ec);
	const char *rest = strchr(endpoints, ',');
	assert_non_null(rest);
	if (etcd_client_open(&ec, rest + 1, &o, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	for (int i = 0; i < 5; i++)
		if (shmsched_release(pa.c, lag_ids[i], err, sizeof(err)) != 0)
			fail_msg("release on %s: %s", names[a], err);
	/* Member 0 may have led: its successor's election fails requests
	 * meanwhile (tried again). */
	while (cross_pods_or(ec, 0, &rev, true) != LAG_N - 5 && etcd_hosts_now_s() - ts < 15.0)
		etcd_hosts_sleep_ms(20);
	assert_int_equal(cross_pods(ec, 0, &rev), LAG_N - 5);
	int crc = -1;
	while (crc != 0 && etcd_hosts_now_s() - ts < 20.0) {
		if (etcd_range(ec, "/", 1, NULL, 0, 0, &hr) != 0) {
			etcd_hosts_sleep_ms(20);
			continue;
		}
		newest = hr.revision;
		etcd_range_result_free(&hr);
		crc = etcd_compact(ec, newest);
	}
	if (crc != 0)
		fail_msg("compact: %s", etcd_client_error(ec));
	kill(pids[b], SIGCONT);
	printf("cross: %s stopped %.2f s, etcd member 0 killed, 5 releases, compacted at "
	       "%lld\n", names[b], etcd_hosts_now_s() - ts, (long long)newest);
	await_metric(b, "shmsched_etcd_watch_events_total{event=\"relist\"}", relists + 1,
		     false, 15.0);
	await_metric(b, "shmsched_etcd_foreign_placements", LAG_N - 5, true, 10.0);
	assert_int_equal(metric_of(b, "shmsched_etcd_foreign_placements"), LAG_N - 5);
	char log[160], line[512];
	snprintf(log, sizeof(log), "%s/%s.log", dir, names[b]);
	FILE *lf = fopen(log, "r");
	assert_non_null(lf);
	bool compacted = false;
	while (fgets(line, sizeof(line), lf) != NULL)
		compacted |= strstr(line, "was compacted away") != NULL;
	fclose(lf);
	if (!compacted)
		fail_msg("%s listed again, but its log (%s) does not say its watch was "
			 "compacted away", names[b], log);
	printf("cross: %s's watch resumed at a compacted revision, listed again: %d "
	       "foreign placements, right\n", names[b], LAG_N - 5);

	/* 7. s1 from b to a, then one shard back to b. */
	int third = 3 - a - b;
	int st3 = stop_host(third);
	if (!WIFEXITED(st3) || WEXITSTATUS(st3) != 0)
		fail_msg("%s stopped with status 0x%x", names[third], st3);
	shmsched_disconnect(pb.c);
	etcd_host_kill(&hosts, b);
	ts = etcd_hosts_now_s();
	while (cross_owner(ec, 1) != a && etcd_hosts_now_s() - ts < 15.0)
		etcd_hosts_sleep_ms(20);
	if (cross_owner(ec, 1) != a)
		fail_msg("%s did not take s1 within 15 s of %s's kill", names[a], names[b]);
	await_metric(a, "shmsched_etcd_watch_ranges", 0, true, 10.0);
	long long a_relists = metric_of(a, "shmsched_etcd_watch_events_total{event=\"relist\"}");
	long long a_received = metric_of(a, "shmsched_etcd_watch_received_total");
	/* Owning every shard: a's own commits come back to no watch. */
	r = place_tid(&pa, other);
	if (r.status != SHMSCHED_PLACED)
		fail_msg("%s, owning s0 and s1: a pod on x2 not placed: %s", names[a], r.message);
	etcd_hosts_sleep_ms(200);
	assert_int_equal(metric_of(a, "shmsched_etcd_watch_ranges"), 0);
	assert_int_equal(metric_of(a, "shmsched_etcd_watch_received_total"), a_received);
	printf("cross: %s took s1 %.2f s after %s's kill; owning every shard, its watch "
	       "follows no range (%lld events received, none since)\n", names[a],
	       etcd_hosts_now_s() - ts, names[b], a_received);
	start_host(b);
	int x = -1;
	ts = etcd_hosts_now_s();
	while (etcd_hosts_now_s() - ts < 15.0) {
		int o0 = cross_owner(ec, 0), o1 = cross_owner(ec, 1);
		if (o0 == b || o1 == b) {
			x = o0 == b ? 0 : 1;
			break;
		}
		etcd_hosts_sleep_ms(5);
	}
	if (x < 0)
		fail_msg("restarted, %s was given no shard within 15 s", names[b]);
	/* At once: a's release and its list race this pod. */
	sock_of(b, sock, sizeof(sock));
	if (shmsched_connect(sock, &pb.c, err, sizeof(err)) != 0)
		fail_msg("connect %s: %s", sock, err);
	uint32_t on_x = cross_template(&pb, b, "back", x == 0 ? "x2" : "x3", "");
	double tb = etcd_hosts_now_s();
	do {
		r = place_tid(&pb, on_x);
		if (r.status != SHMSCHED_PLACED)
			etcd_hosts_sleep_ms(5); /* its take's read may not be done */
	} while (r.status != SHMSCHED_PLACED && etcd_hosts_now_s() - tb < 15.0);
	if (r.status != SHMSCHED_PLACED)
		fail_msg("%s, owning s%d: a pod on %s not placed: %s", names[b], x,
			 x == 0 ? "x2" : "x3", r.message);
	assert_int_equal(cross_pods(ec, x, &rev) >= 1, 1);
	await_metric(a, "shmsched_etcd_watch_ranges", 1, false, 10.0);
	await_metric(a, "shmsched_etcd_watch_revision", rev, false, 10.0);
	await_metric(a, "shmsched_etcd_foreign_placements", 2, false, 10.0);
	etcd_hosts_sleep_ms(200);
	assert_int_equal(metric_of(a, "shmsched_etcd_foreign_placements"), 2);
	assert_true(metric_of(a, "shmsched_etcd_watch_events_total{event=\"relist\"}") >
		    a_relists);
	printf("cross: %s restarted and given s%d, which %s released; %s's pod there, "
	       "placed %.3f s after it owned it, held by %s's watch (2 foreign "
	       "placements, right)\n", names[b], x, names[a], names[b], etcd_hosts_now_s() - tb,
	       names[a]);
	shmsched_disconnect(pa.c);
	shmsched_disconnect(pb.c);
	etcd_client_close(ec);
	for (int h = 0; h < HOSTS; h++) {
		if (h == third)
			continue; /* stopped in 7 */
		stop_host_clean(h);
	}
	hosts.cluster_file = "cluster.json";
	hosts.shard_by = NULL;
}

/* 5. Quota by escrow (docs/design/multi-host.md, "Quota by escrow"): a
 * ClusterQueue "cq" of nominal 4 cpu, two hosts owning two zones each:
 * the coordinator splits it 1 cpu a shard, so each host admits 2 cpu,
 * and both hosts' producers asking 4 pods of 1 cpu each get 4 placed in
 * all (on the old code, each host admitted against the whole nominal: 8).
 * Then host b is SIGKILLed: once host a owns every shard and has read
 * their slices, it admits the whole 4 cpu. */
static const char *const escrow_pod =
	"{\"kind\":\"Pod\",\"metadata\":{\"name\":\"w\",\"namespace\":\"default\","
	"\"labels\":{\"kueue.x-k8s.io/queue-name\":\"lq\"}},\"spec\":{\"containers\":"
	"[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}";
#define ESCROW_NOMINAL(cores)                                                          \
	"kueue_cluster_queue_nominal_quota{cohort=\"\",cluster_queue=\"cq\",flavor=\"default\"," \
	"resource=\"cpu\"} " cores

/* Submits n pods of template tid on p (no wait). */
static void submit_n(struct producer *p, uint32_t tid, int n)
{
	for (int i = 0; i < n; i++) {
		struct shmsched_pod pod = {.cookie = ++p->cookie, .template_id = tid};
		assert_int_equal(shmsched_submit(p->c, &pod, 1), 1);
	}
}

/* Polls p's answers for `ms`; adds the placed ones to *placed and prints
 * why each other one was not (a refusal is an answer: waiting longer for
 * that pod is vain). */
static void count_placed(struct producer *p, unsigned ms, int *placed)
{
	for (unsigned t = 0; t < ms; t += 10) {
		struct shmsched_result r;
		while (shmsched_poll(p->c, &r, 1) == 1) {
			*placed += r.status == SHMSCHED_PLACED;
			if (r.status != SHMSCHED_PLACED)
				printf("  pod %llu not placed (status %u): %s\n",
				       (unsigned long long)r.cookie, r.status, r.message);
		}
		etcd_hosts_sleep_ms(10);
	}
}

/* Waits (limit_s) until host h's metrics have `line`; whether they did. */
static bool await_metrics(int h, const char *line, double limit_s)
{
	double t0 = etcd_hosts_now_s();
	while (etcd_hosts_now_s() - t0 < limit_s) {
		if (metrics_have(h, line))
			return true;
		etcd_hosts_sleep_ms(50);
	}
	return false;
}

/* The quota tests' set-up: hosts a and b of cluster `name` on the quota
 * file, split 2/2 (own: each zone's owner); an etcd client of the test. */
static struct etcd_client *quota_hosts_up_on(const char *name, const char *file,
					     int own[ZONES])
{
	hosts.cluster_name = name;
	hosts.cluster_file = file;
	start_host(0);
	start_host(1);
	char err[256];
	struct etcd_client *ec;
	struct etcd_client_options o = {.timeout_ms = 5000};
	if (etcd_client_open(&ec, endpoints, &o, err, sizeof(err)) != 0)
		fail_msg("etcd: %s", err);
	await_balanced(ec, 3u, own, 20);
	return ec;
}

static struct etcd_client *quota_hosts_up(const char *name, int own[ZONES])
{
	return quota_hosts_up_on(name, "cluster-quota.json", own);
}

/* Host h's producer p, connected, with one template (json); its id. */
static uint32_t quota_producer(int h, struct producer *p, const char *json)
{
	char sock[128], err[256];
	sock_of(h, sock, sizeof(sock));
	memset(p, 0, sizeof(*p));
	if (shmsched_connect(sock, &p->c, err, sizeof(err)) != 0)
		fail_msg("connect %s: %s", sock, err);
	uint32_t tid;
	if (shmsched_register_template(p->c, json, strlen(json), &tid, err, sizeof(err)) != 0)
		fail_msg("template on %s: %s", names[h], err);
	return tid;
}

static void quota_by_escrow(void **state)
{
	(void)state;
	int own[ZONES];
	struct etcd_client *ec = quota_hosts_up("etcd-escrow", own);
	/* Each host's share in force: 2 cpu (1 a shard). Not waited for on
	 * the old code (no split): the count below says 8. */
	for (int h = 0; h < 2; h++)
		if (!await_metrics(h, ESCROW_NOMINAL("2"), 20))
			printf("%s: no nominal quota of 2 cpu in force within 20 s\n", names[h]);
	struct producer p[2];
	uint32_t tid[2];
	for (int h = 0; h < 2; h++) {
		tid[h] = quota_producer(h, &p[h], escrow_pod);
		submit_n(&p[h], tid[h], 4);
	}
	int placed[2] = {0, 0};
	for (int h = 0; h < 2; h++)
		count_placed(&p[h], 3000, &placed[h]);
	printf("quota by escrow: %d + %d pods of 1 cpu placed under a nominal quota of 4 "
	       "cpu\n", placed[0], placed[1]);
	if (placed[0] + placed[1] > 4)
		fail_msg("%d + %d cpu admitted across the hosts: over the nominal 4 cpu",
			 placed[0], placed[1]);
	assert_int_equal(placed[0], 2);
	assert_int_equal(placed[1], 2);
	/* `shmsched cluster status` shows each shard's slice, acknowledged. */
	char cmd[512], line[256];
	snprintf(cmd, sizeof(cmd), "%s cluster status --etcd %s --etcd-cluster %s", shmsched,
		 endpoints, hosts.cluster_name);
	FILE *status = popen(cmd, "r");
	assert_non_null(status);
	int slices = 0;
	while (fgets(line, sizeof(line), status) != NULL) {
		printf("  %s", line);
		int z;
		char tail[64];
		if (sscanf(line, "slice cq z%d default cpu 1000 %63s", &z, tail) == 2 &&
		    strcmp(tail, "acknowledged") == 0)
			slices++;
	}
	assert_int_equal(pclose(status), 0);
	assert_int_equal(slices, ZONES);

	/* Host b is killed: a owns all four shards once b's lease lapses,
	 * and counts b's 2 placements in cq as well as on their nodes (QV1
	 * in daemon/etcd_sync.c): its 2 + b's 2 use the whole 4 cpu. */
	double t0 = etcd_hosts_now_s();
	kill(pids[1], SIGKILL);
	waitpid(pids[1], NULL, 0);
	pids[1] = 0;
	shmsched_disconnect(p[1].c);
	await_balanced(ec, 1u, own, 20);
	if (!await_metrics(0, ESCROW_NOMINAL("4"), 20))
		fail_msg("%s: the whole 4 cpu not in force within 20 s of owning every shard",
			 names[0]);
	printf("quota by escrow: %s has the whole 4 cpu in force %.1f s after the kill\n",
	       names[0], etcd_hosts_now_s() - t0);
	submit_n(&p[0], tid[0], 2);
	count_placed(&p[0], 3000, &placed[0]);
	/* The old code (b's placements counted on their nodes only): 4. */
	if (placed[0] != 2)
		fail_msg("%s: %d pods of 1 cpu placed in all after the kill; expected its 2 "
			 "(b's 2 counted in cq: the nominal 4 cpu used)", names[0], placed[0]);
	shmsched_disconnect(p[0].c);
	etcd_client_close(ec);
	stop_host_clean(0); /* a clean stop: the sanitizers' builds check it */
}

/* Whether some placement value under shards/ of cluster `cluster` in etcd
 * is of version 3 and has `part`. */
static bool etcd_has_v3_value(struct etcd_client *ec, const char *cluster, const char *part)
{
	char pfx[128];
	int pl = snprintf(pfx, sizeof(pfx), "/shmsched/%s/shards/", cluster);
	uint8_t end[128];
	size_t el = etcd_prefix_end(pfx, (size_t)pl, end);
	struct etcd_range_result r;
	assert_int_equal(etcd_range(ec, pfx, (size_t)pl, end, el, 0, &r), 0);
	bool have = false;
	for (size_t i = 0; i < r.n_kvs && !have; i++) {
		char v[PLACEMENT_VALUE_MAX + 1];
		size_t n = r.kvs[i].value_len < PLACEMENT_VALUE_MAX ? r.kvs[i].value_len
								    : PLACEMENT_VALUE_MAX;
		memcpy(v, r.kvs[i].value, n);
		v[n] = '\0';
		have = memmem(r.kvs[i].key, r.kvs[i].key_len, "/pods/", 6) != NULL &&
		       strncmp(v, "3 ", 2) == 0 && strstr(v, part) != NULL;
	}
	etcd_range_result_free(&r);
	return have;
}

/* 7. Quota surviving a host's death (issue 40; QV1, QV2 in
 * daemon/etcd_sync.c): quota_by_escrow's queue of 4 cpu and two hosts
 * (2 cpu in force on each); host a admits 2 pods of 1 cpu, whose values
 * in etcd name cq and its flavor (version 3), and is SIGKILLed; b owns
 * every shard, the whole 4 cpu in force, and counts a's 2 placements in
 * cq as well as on their nodes: of 4 pods submitted (to a zone b owned
 * before) it admits 2. The old code (a's placements on their nodes only)
 * admits all 4. Then a's zones' nodes are drained (`shmsched node drain
 * --force`): the bound records of a's placements are freed, their charge
 * given back, and of 3 more pods b admits 2. */
static void quota_survives_failover(void **state)
{
	(void)state;
	int own[ZONES];
	struct etcd_client *ec = quota_hosts_up("etcd-queuevalue", own);
	/* b's pods go to a zone b owns now, away from the nodes drained
	 * below (a's zones). */
	int zb = -1;
	for (int z = 0; z < ZONES && zb < 0; z++)
		if (own[z] == 1)
			zb = z;
	assert_true(zb >= 0);
	int own_before[ZONES];
	memcpy(own_before, own, sizeof(own));
	char zoned[512];
	snprintf(zoned, sizeof(zoned),
		 "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"w\",\"namespace\":\"default\","
		 "\"labels\":{\"kueue.x-k8s.io/queue-name\":\"lq\"}},\"spec\":{\"nodeSelector\":"
		 "{\"topology.kubernetes.io/zone\":\"z%d\"},\"containers\":[{\"name\":\"c\","
		 "\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}", zb);
	struct producer p[2];
	uint32_t tid[2];
	for (int h = 0; h < 2; h++) {
		tid[h] = quota_producer(h, &p[h], h == 0 ? escrow_pod : zoned);
	}
	/* a admits 2 once its share (2 cpu) is in force: a pod that comes
	 * before the slices were read finds a nominal of 0 and, not asking
	 * to wait, is answered unschedulable (CI of stop 50, TSan: 0 of 2
	 * placed). */
	if (!await_metrics(0, ESCROW_NOMINAL("2"), 30))
		fail_msg("%s: no nominal quota of 2 cpu in force within 30 s", names[0]);
	int placed_a = 0;
	submit_n(&p[0], tid[0], 2);
	for (int i = 0; i < 200 && placed_a < 2; i++)
		count_placed(&p[0], 100, &placed_a);
	assert_int_equal(placed_a, 2);
	/* Its values name the queue and flavor: "<cpu> <memory> <gpus> <queue>
	 * <flavor> <namespace>". */
	if (!etcd_has_v3_value(ec, hosts.cluster_name, " 1000 0 0 cq default default"))
		fail_msg("no placement value in etcd names ClusterQueue cq and flavor default");
	/* a is killed: b owns every shard once a's lease lapses. */
	double t0 = etcd_hosts_now_s();
	kill(pids[0], SIGKILL);
	waitpid(pids[0], NULL, 0);
	pids[0] = 0;
	shmsched_disconnect(p[0].c);
	await_balanced(ec, 2u, own, 20);
	if (!await_metrics(1, ESCROW_NOMINAL("4"), 20))
		fail_msg("%s: the whole 4 cpu not in force within 20 s of owning every shard",
			 names[1]);
	printf("quota survives failover: %s owns every shard, 4 cpu in force, %.1f s after "
	       "the kill\n", names[1], etcd_hosts_now_s() - t0);
	int placed_b = 0;
	submit_n(&p[1], tid[1], 4);
	for (int i = 0; i < 100 && placed_b < 2; i++)
		count_placed(&p[1], 100, &placed_b);
	count_placed(&p[1], 3000, &placed_b);
	printf("quota survives failover: %s admits %d of 4 pods of 1 cpu (a's 2 cpu counted in "
	       "cq)\n", names[1], placed_b);
	if (placed_b != 2)
		fail_msg("%s admitted %d pods of 1 cpu after a's death; expected 2 (a's 2 cpu "
			 "charged to cq, nominal 4)", names[1], placed_b);
	assert_metrics(1, "shmsched_etcd_placements_total{result=\"queue_unknown\"} 0");
	/* a's zones drained on b: a's placements there (bound records on b)
	 * freed, their charge given back (qc_on_free): b's 2 waiting pods in. */
	char cmd[1024];
	int at = snprintf(cmd, sizeof(cmd), "%s node drain", shmsched);
	for (int z = 0; z < ZONES; z++)
		if (own_before[z] == 0)
			at += snprintf(cmd + at, sizeof(cmd) - (size_t)at, " n%d", z);
	snprintf(cmd + at, sizeof(cmd) - (size_t)at,
		 " --force --timeout 20s --admin-socket %s/%s.sock.admin >/dev/null", dir,
		 names[1]);
	int drc = system(cmd);
	if (drc != 0)
		fail_msg("\"%s\": status 0x%x", cmd, drc);
	/* The 2 refused above were answered (they did not ask to wait): 2
	 * more, both admitted now, and a fifth refused. */
	submit_n(&p[1], tid[1], 3);
	for (int i = 0; i < 100 && placed_b < 4; i++)
		count_placed(&p[1], 100, &placed_b);
	count_placed(&p[1], 1000, &placed_b);
	printf("quota survives failover: %s admits %d in all after a's zones were drained\n",
	       names[1], placed_b);
	if (placed_b != 4)
		fail_msg("%s admitted %d pods of 1 cpu in all after a's 2 placements were "
			 "drained; expected 4 (their charge given back, then the nominal 4)",
			 names[1], placed_b);
	shmsched_disconnect(p[1].c);
	etcd_client_close(ec);
	stop_host_clean(1);
}

/* 6. Quota by escrow moved by use (QE7, QE8): the same queue of 4 cpu,
 * two hosts owning two zones each (1 cpu a slice), pods of 1 cpu that
 * wait, submitted to host a only: a reports its use and what its
 * waiting pods ask, the coordinator moves b's unused 2 cpu to a (b's
 * slices shrunk to 0, acknowledged, a's grown), and a admits all 4.
 * Then b's 2 pods wait (nothing for them: a uses all 4) until a releases
 * 2 of its placements: the room goes back and b admits its 2. At every
 * read, what the hosts may admit against as etcd holds it (one range,
 * one revision; coord/quota_escrow.h's quota_escrow_hold) sums to at
 * most 4 cpu (QE1), and so do the nominals in force the two hosts'
 * metrics show (the receiving host read first). On the old code (no use
 * reports) a admits 2 and waits: the first wait fails. */
static const char *const escrow_use_cluster = "etcd-escrow-use";

/* QE1 as etcd holds it: the sum of the shards' holds of cq's cpu. */
static int64_t escrow_holds(struct etcd_client *ec)
{
	char pfx[128];
	int pl = snprintf(pfx, sizeof(pfx), "/shmsched/%s/", escrow_use_cluster);
	uint8_t end[128];
	size_t el = etcd_prefix_end(pfx, (size_t)pl, end);
	struct etcd_range_result r;
	assert_int_equal(etcd_range(ec, pfx, (size_t)pl, end, el, 0, &r), 0);
	struct quota_escrow_shard sh[ZONES];
	int64_t slice_mod[ZONES], ack_rev[ZONES];
	memset(sh, 0, sizeof(sh));
	memset(slice_mod, 0, sizeof(slice_mod));
	memset(ack_rev, 0, sizeof(ack_rev));
	static struct quota_escrow_value v;
	for (size_t i = 0; i < r.n_kvs; i++) {
		char k[256], msg[128];
		size_t kl = r.kvs[i].key_len - (size_t)pl;
		if (kl >= sizeof(k))
			continue;
		memcpy(k, (const char *)r.kvs[i].key + pl, kl);
		k[kl] = '\0';
		int z, n = -1;
		if (sscanf(k, "shards/z%d/owner%n", &z, &n) == 1 && n == (int)kl && z >= 0 &&
		    z < ZONES) {
			sh[z].owned = true;
			continue;
		}
		bool slice = sscanf(k, "quota/cq/z%d%n", &z, &n) == 1 && n == (int)kl;
		bool ack = !slice && sscanf(k, "quota/cq/z%d/ack%n", &z, &n) == 1 && n == (int)kl;
		if ((!slice && !ack) || z < 0 || z >= ZONES)
			continue;
		if (quota_escrow_value_decode(r.kvs[i].value, r.kvs[i].value_len, &v, msg,
					      sizeof(msg)) != 0)
			fail_msg("%s: %s", k, msg);
		int64_t cpu = v.n > 0 ? v.cells[0].amount : 0;
		if (slice) {
			sh[z].granted = cpu;
			slice_mod[z] = r.kvs[i].mod_revision;
		} else {
			sh[z].acked = true;
			sh[z].acked_value = cpu;
			ack_rev[z] = v.revision;
		}
	}
	etcd_range_result_free(&r);
	int64_t sum = 0;
	for (int z = 0; z < ZONES; z++) {
		sh[z].acked_current = sh[z].acked && ack_rev[z] == slice_mod[z];
		sum += quota_escrow_hold(&sh[z]);
	}
	return sum;
}

/* The nominal of cq's cpu in force on host h, in cpu (its metric). */
static long long nominal_of(int h)
{
	return metric_of(h, "kueue_cluster_queue_nominal_quota{cohort=\"\",cluster_queue=\"cq\","
			 "flavor=\"default\",resource=\"cpu\"}");
}

/* QE1 at this read: etcd's holds and the nominals in force (host `first`
 * read first: the one receiving room, so that a move between the two
 * reads cannot count twice). The most in force, through *peak. */
static void check_escrow_qe1(struct etcd_client *ec, int first, long long *peak)
{
	int64_t held = escrow_holds(ec);
	if (held > 4000)
		fail_msg("QE1: etcd's holds sum to %lld millicores, over the nominal 4 cpu",
			 (long long)held);
	long long a = nominal_of(first), b = nominal_of(1 - first);
	if (a + b > 4)
		fail_msg("QE1: %lld + %lld cpu in force on the two hosts, over the nominal 4",
			 a, b);
	if (a + b > *peak)
		*peak = a + b;
}

/* Polls p's answers until *placed reaches `want` (limit_s), checking QE1
 * at each poll; each placement's id into ids[]. Whether it did. */
static bool await_placed(struct etcd_client *ec, struct producer *p, int first, int want,
			 int *placed, uint64_t *ids, double limit_s, long long *peak)
{
	double t0 = etcd_hosts_now_s();
	while (*placed < want && etcd_hosts_now_s() - t0 < limit_s) {
		struct shmsched_result r;
		while (shmsched_poll(p->c, &r, 1) == 1) {
			if (r.status != SHMSCHED_PLACED)
				fail_msg("a waiting pod answered %u: %s", r.status, r.message);
			ids[(*placed)++] = r.placement_id;
		}
		check_escrow_qe1(ec, first, peak);
		etcd_hosts_sleep_ms(50);
	}
	return *placed >= want;
}

/* `shmsched cluster status`'s use lines of cq's cpu: their sums of use
 * and more (millicores), and how many lines. */
static int status_uses(long long *use, long long *more)
{
	char cmd[512], line[256];
	snprintf(cmd, sizeof(cmd), "%s cluster status --etcd %s --etcd-cluster %s", shmsched,
		 endpoints, escrow_use_cluster);
	FILE *status = popen(cmd, "r");
	assert_non_null(status);
	int lines = 0;
	*use = *more = 0;
	while (fgets(line, sizeof(line), status) != NULL) {
		int z;
		long long u, m;
		if (sscanf(line, "use cq z%d default cpu %lld %lld", &z, &u, &m) == 3) {
			*use += u;
			*more += m;
			lines++;
		}
	}
	assert_int_equal(pclose(status), 0);
	return lines;
}

static void submit_waiting(struct producer *p, uint32_t tid, int n)
{
	for (int i = 0; i < n; i++) {
		struct shmsched_pod pod = {.cookie = ++p->cookie, .template_id = tid,
					   .flags = SHMSCHED_WAIT};
		assert_int_equal(shmsched_submit(p->c, &pod, 1), 1);
	}
}

static void quota_escrow_by_use(void **state)
{
	(void)state;
	char err[256];
	int own[ZONES];
	struct etcd_client *ec = quota_hosts_up(escrow_use_cluster, own);
	for (int h = 0; h < 2; h++)
		if (!await_metrics(h, ESCROW_NOMINAL("2"), 30))
			fail_msg("%s: no nominal quota of 2 cpu in force within 30 s", names[h]);
	struct producer p[2];
	uint32_t tid[2];
	for (int h = 0; h < 2; h++) {
		tid[h] = quota_producer(h, &p[h], escrow_pod);
	}
	long long peak = 0;
	int placed[2] = {0, 0};
	uint64_t ids[2][8];
	/* a's 4 pods: 2 at once, 2 once b's room moved. */
	double t0 = etcd_hosts_now_s();
	submit_waiting(&p[0], tid[0], 4);
	if (!await_placed(ec, &p[0], 0, 4, &placed[0], ids[0], 60, &peak))
		fail_msg("%s placed %d of its 4 waiting pods of 1 cpu in 60 s: the room of %s's "
			 "unused 2 cpu did not move (nominals in force %lld and %lld)", names[0],
			 placed[0], names[1], nominal_of(0), nominal_of(1));
	printf("quota by escrow by use: %s admits 4 cpu %.1f s after its pods came\n", names[0],
	       etcd_hosts_now_s() - t0);
	assert_int_equal(nominal_of(1), 0); /* b's slices shrunk */
	assert_int_equal(nominal_of(0), 4);
	/* `shmsched cluster status` shows a's use reports: its 4 cpu over
	 * its two shards, nothing more asked (b has neither use nor waiting
	 * pods: no key). Within 10 s: a reports at its next tick. */
	long long use = 0, more = 0;
	int lines = 0;
	for (int i = 0; i < 200 && !(lines == 2 && use == 4000 && more == 0); i++) {
		lines = status_uses(&use, &more);
		etcd_hosts_sleep_ms(50);
	}
	if (lines != 2 || use != 4000 || more != 0)
		fail_msg("cluster status: %d use lines of cq, use %lld more %lld millicores; "
			 "expected 2 lines (host a's shards), 4000 and 0", lines, use, more);
	/* b's 2 pods wait: a uses all 4. */
	submit_waiting(&p[1], tid[1], 2);
	int none = 0;
	assert_false(await_placed(ec, &p[1], 1, 1, &none, ids[1], 2, &peak));
	/* a releases 2: its room above its use goes to b's waiting pods. */
	t0 = etcd_hosts_now_s();
	for (int i = 0; i < 2; i++)
		if (shmsched_release(p[0].c, ids[0][i], err, sizeof(err)) != 0)
			fail_msg("release on %s: %s", names[0], err);
	if (!await_placed(ec, &p[1], 1, 2, &placed[1], ids[1], 60, &peak))
		fail_msg("%s placed %d of its 2 waiting pods in 60 s after %s released 2 cpu "
			 "(nominals in force %lld and %lld)", names[1], placed[1], names[0],
			 nominal_of(0), nominal_of(1));
	printf("quota by escrow by use: %s admits its 2 cpu %.1f s after %s released 2; "
	       "at most %lld cpu in force on both at any read\n", names[1],
	       etcd_hosts_now_s() - t0, names[0], peak);
	check_escrow_qe1(ec, 1, &peak);
	for (int h = 0; h < 2; h++)
		shmsched_disconnect(p[h].c);
	etcd_client_close(ec);
	for (int h = 0; h < 2; h++)
		stop_host_clean(h);
}

/* 8. A dead host's borrowing pods, counted on the take, are reclaimed
 * (issue 40 item 5; QV3 in daemon/etcd_sync.c). Cohort "ml" of two
 * ClusterQueues of 4 cpu, team-a (reclaimWithinCohort Any) and team-b;
 * the coordinator splits each 1 cpu a shard, 2 a host. Host a admits 4
 * pods of team-b (its 2, and 2 borrowed from team-a's 2 there), host b 2
 * within its own 2. a is SIGKILLed: b owns every shard and counts a's 4
 * pods (each past b's nominal for team-b when counted: borrowed); once
 * the whole 4 + 4 cpu is in force team-b uses 6 of its 4. Three waiting
 * pods of 1 cpu of team-a on b: two fit the cohort's 8, the third needs
 * reclaim, and team-a stays within its nominal 4 with it, so Kueue
 * preempts a workload of team-b, which is borrowing (kueue
 * pkg/scheduler/preemption/classical/candidate_generator.go,
 * candidateIsValid; pkg/cache/scheduler/clusterqueue_snapshot.go,
 * BorrowingWith). Here reclaim takes another queue's pod only when its
 * own tag says borrowed (NCY1 in quota/reclaim.c): b's own 2 are not, so
 * only a counted one can go. Old code (counted charges never tagged
 * borrowed): nothing evicted, the third pod answered unschedulable at its
 * 20 s deadline, team-b still at 6. */
#define COHORT_USAGE(cq, cores)                                                         \
	"kueue_cluster_queue_resource_usage{cohort=\"ml\",cluster_queue=\"" cq "\","        \
	"flavor=\"default\",resource=\"cpu\"} " cores
#define COHORT_NOMINAL(cq, cores)                                                       \
	"kueue_cluster_queue_nominal_quota{cohort=\"ml\",cluster_queue=\"" cq "\","         \
	"flavor=\"default\",resource=\"cpu\"} " cores
#define COHORT_POD(lq)                                                                  \
	"{\"kind\":\"Pod\",\"metadata\":{\"name\":\"w\",\"namespace\":\"default\","        \
	"\"labels\":{\"kueue.x-k8s.io/queue-name\":\"" lq "\"}},\"spec\":{\"containers\":" \
	"[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}"

static void quota_borrowed_reclaimed_after_failover(void **state)
{
	(void)state;
	int own[ZONES];
	struct etcd_client *ec = quota_hosts_up_on("etcd-borrowed", "cluster-cohort.json", own);
	for (int h = 0; h < 2; h++)
		if (!await_metrics(h, COHORT_NOMINAL("team-a", "2"), 30) ||
		    !await_metrics(h, COHORT_NOMINAL("team-b", "2"), 30))
			fail_msg("%s: no nominal quota of 2 cpu for team-a and team-b in force "
				 "within 30 s", names[h]);
	struct producer p[2];
	uint32_t tid[2];
	int want[2] = {4, 2}, placed[2] = {0, 0};
	for (int h = 0; h < 2; h++) {
		tid[h] = quota_producer(h, &p[h], COHORT_POD("lqb"));
		submit_n(&p[h], tid[h], want[h]);
		for (int i = 0; i < 200 && placed[h] < want[h]; i++)
			count_placed(&p[h], 100, &placed[h]);
		if (placed[h] != want[h])
			fail_msg("%s placed %d pods of team-b; expected %d", names[h], placed[h],
				 want[h]);
	}
	assert_metrics(0, COHORT_USAGE("team-b", "4"));
	/* a is killed: b owns every shard once a's lease lapses, and counts
	 * a's 4 pods. */
	double t0 = etcd_hosts_now_s();
	etcd_host_kill(&hosts, 0);
	shmsched_disconnect(p[0].c);
	await_balanced(ec, 2u, own, 20);
	if (!await_metrics(1, COHORT_NOMINAL("team-a", "4"), 20) ||
	    !await_metrics(1, COHORT_NOMINAL("team-b", "4"), 20))
		fail_msg("%s: the whole 4 cpu of team-a and team-b not in force within 20 s "
			 "of owning every shard", names[1]);
	assert_metrics(1, COHORT_USAGE("team-b", "6"));
	printf("borrowed after failover: %s owns every shard, 4 + 4 cpu in force, team-b "
	       "uses 6, %.1f s after the kill\n", names[1], etcd_hosts_now_s() - t0);
	/* team-a's 3 waiting pods on b. */
	struct producer pa;
	uint32_t ta = quota_producer(1, &pa, COHORT_POD("lqa"));
	uint64_t deadline = (uint64_t)(etcd_hosts_now_s() * 1e9) + UINT64_C(20000000000);
	for (int i = 0; i < 3; i++) {
		struct shmsched_pod pod = {.cookie = ++pa.cookie, .template_id = ta,
					   .flags = SHMSCHED_WAIT, .deadline_ns = deadline};
		assert_int_equal(shmsched_submit(pa.c, &pod, 1), 1);
	}
	int placed_a = 0;
	double t1 = etcd_hosts_now_s();
	for (int i = 0; i < 250 && placed_a < 3; i++)
		count_placed(&pa, 100, &placed_a);
	printf("borrowed after failover: %s admits %d of team-a's 3 waiting pods (%.1f s)\n",
	       names[1], placed_a, etcd_hosts_now_s() - t1);
	if (placed_a != 3)
		fail_msg("%s admitted %d of team-a's 3 waiting pods; expected 3 (a counted "
			 "pod of team-b, borrowing, reclaimed for the third)", names[1],
			 placed_a);
	assert_metrics(1, COHORT_USAGE("team-a", "3"));
	assert_metrics(1, COHORT_USAGE("team-b", "5"));
	shmsched_disconnect(pa.c);
	shmsched_disconnect(p[1].c);
	etcd_client_close(ec);
	stop_host_clean(1);
}

/* What `shmsched cluster status` shows of each host's status
 * (hosts/<host>, coord/host_status.h): per zone, the host whose capacity
 * line lists it (-1: none), its free cpu (sum and largest, millicores)
 * and pods; per host, whether its status line was there, and its lag. */
struct status_view {
	int host[ZONES];
	long long sum_cpu[ZONES], largest_cpu[ZONES], sum_pods[ZONES];
	bool status[HOSTS];
	long long lag_records[HOSTS];
};

static void read_status_view(struct status_view *v, bool print)
{
	char cmd[512], line[512];
	snprintf(cmd, sizeof(cmd), "%s cluster status --etcd %s --etcd-cluster %s", shmsched,
		 endpoints, hosts.cluster_name);
	memset(v, 0, sizeof(*v));
	for (int z = 0; z < ZONES; z++)
		v->host[z] = -1;
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p) != NULL) {
		if (print)
			printf("  %s", line);
		char name[64];
		int z;
		unsigned nodes, n, more;
		long long lc, lm, lp, sc, sm, sp, rec, ms;
		if (sscanf(line, "status %63s lag %lld records %lld ms shards %u more %u", name,
			   &rec, &ms, &n, &more) == 5) {
			for (int h = 0; h < HOSTS; h++)
				if (strcmp(name, names[h]) == 0) {
					v->status[h] = true;
					v->lag_records[h] = rec;
				}
		} else if (sscanf(line, "capacity %63s z%d nodes %u largest cpu %lld memory %lld "
				  "pods %lld sum cpu %lld memory %lld pods %lld", name, &z, &nodes,
				  &lc, &lm, &lp, &sc, &sm, &sp) == 9 && z >= 0 && z < ZONES) {
			for (int h = 0; h < HOSTS; h++)
				if (strcmp(name, names[h]) == 0)
					v->host[z] = h;
			assert_int_equal(nodes, 1); /* one node a zone */
			assert_true(lc == sc && lm == sm && lp == sp);
			v->sum_cpu[z] = sc;
			v->largest_cpu[z] = lc;
			v->sum_pods[z] = sp;
		}
	}
	assert_int_equal(pclose(p), 0);
}

/* Polls cluster status (limit_s) until zone z is shown by its owner
 * own[z] with `cpu` millicores free (and `pods` free pods when >= 0) and
 * that host's lag 0 records; the seconds it took, or -1 (the last view
 * printed). */
static double await_zone_free(const int *own, int z, long long cpu, long long pods,
			      double limit_s)
{
	double t0 = etcd_hosts_now_s();
	struct status_view v;
	for (;;) {
		read_status_view(&v, false);
		int h = own[z];
		if (v.host[z] == h && v.sum_cpu[z] == cpu && (pods < 0 || v.sum_pods[z] == pods) &&
		    v.status[h] && v.lag_records[h] == 0)
			return etcd_hosts_now_s() - t0;
		if (etcd_hosts_now_s() - t0 > limit_s) {
			read_status_view(&v, true);
			return -1;
		}
		etcd_hosts_sleep_ms(100);
	}
}

/* Each host's status in etcd (issue 40 items 4 and 6): two hosts split
 * the four zones; `shmsched cluster status` shows each host's status
 * line (its lag) and a capacity line for each zone it owns, listed by
 * its owner (4 cpu free, the node's whole); each host places 3 pods of
 * 1 cpu on a zone of its own, and the status shows that zone's free cpu
 * down to 1 cpu and its free pods 3 fewer, with the lag back to 0 records
 * (sync: answered after their commits); released, back to 4 cpu; each
 * host's puts of its status at most one a second. Fails
 * on a host that puts its status once and never again (the free figures
 * never move), and on the old code (no status or capacity lines). */
static void status_shows_capacity(void **state)
{
	(void)state;
	hosts.cluster_name = "etcd-status";
	double started = etcd_hosts_now_s();
	start_host(0);
	start_host(1);
	struct etcd_client *ec;
	char err[256];
	struct etcd_client_options o = {.timeout_ms = 5000};
	if (etcd_client_open(&ec, endpoints, &o, err, sizeof(err)) != 0)
		fail_msg("etcd: %s", err);
	int own[ZONES];
	await_balanced(ec, 3u, own, 20);
	const long long pods = 1000000; /* the cluster file's */
	for (int z = 0; z < ZONES; z++)
		if (await_zone_free(own, z, 4000, pods, 10) < 0)
			fail_msg("cluster status: zone z%d not shown by its owner %s with 4 cpu "
				 "free within 10 s", z, names[own[z]]);
	struct status_view v;
	read_status_view(&v, true);
	struct producer p[2] = {{0}, {0}};
	uint64_t ids[2][3];
	for (int h = 0; h < 2; h++) {
		int z = 0;
		while (own[z] != h)
			z++;
		connect_to(h, &p[h]);
		uint32_t tid = template_of(&p[h], h, z, "1");
		for (int i = 0; i < 3; i++) {
			struct shmsched_result r = place_tid(&p[h], tid);
			if (r.status != SHMSCHED_PLACED)
				fail_msg("%s: a pod of 1 cpu on its zone z%d: %s", names[h], z,
					 r.message);
			ids[h][i] = r.placement_id;
		}
		double t = await_zone_free(own, z, 1000, pods - 3, 10);
		if (t < 0)
			fail_msg("cluster status: %s's zone z%d not shown with 1 cpu free after 3 "
				 "pods of 1 cpu within 10 s: its status not refreshed", names[h],
				 z);
		printf("%s: z%d's free cpu 4 -> 1 in cluster status %.2f s after the third "
		       "answer\n", names[h], z, t);
	}
	read_status_view(&v, true);
	for (int h = 0; h < 2; h++) {
		int z = 0;
		while (own[z] != h)
			z++;
		for (int i = 0; i < 3; i++)
			if (shmsched_release(p[h].c, ids[h][i], err, sizeof(err)) != 0)
				fail_msg("release on %s: %s", names[h], err);
		if (await_zone_free(own, z, 4000, pods, 10) < 0)
			fail_msg("cluster status: %s's zone z%d not back to 4 cpu free within 10 s "
				 "of the releases", names[h], z);
		assert_metrics(h, "# TYPE shmsched_etcd_replication_lag_seconds gauge");
		assert_metrics(h, "shmsched_etcd_replication_lag_records 0");
		shmsched_disconnect(p[h].c);
	}
	/* At most one put a second (and the first, at the join's tick); at
	 * least the three states seen above. */
	double secs = etcd_hosts_now_s() - started;
	for (int h = 0; h < 2; h++) {
		double puts = metric_value(h, "shmsched_etcd_status_puts_total");
		printf("%s: %.0f status puts in %.1f s\n", names[h], puts, secs);
		if (puts < 3 || puts > secs + 2)
			fail_msg("%s: %.0f status puts in %.1f s: expected 3 to one a second",
				 names[h], puts, secs);
	}
	etcd_client_close(ec);
}

static int teardown(void **state)
{
	(void)state;
	hosts.ttl_s = TTL_S;
	hosts.durability = NULL;
	hosts.no_etcd = false;
	hosts.cluster_file = NULL;
	hosts.shard_by = NULL;
	for (int h = 0; h < HOSTS; h++)
		(void)stop_host(h);
	return 0;
}

/* Batch keys (coord/batch_value.h, shards/<s>/sets/<name>: several
 * placements a key) read by a shard's new owner (issue 40, "Several
 * placements a key"): three placements of 1 cpu on n0, as another host
 * would have written them, put by hand in two batch keys of z0 (2 and 1
 * placements) before any host starts; host a, taking z0, counts them
 * (shmsched_etcd_placements_total{result="counted"} 3), then places one
 * pod of 1 cpu on n0 (3 of its 4 held) and not a second. On the rebuild
 * before batch keys (sets/ not read) none is counted and a second pod is
 * placed: checked. */
static void batch_keys_counted_on_take(void **state)
{
	(void)state;
	hosts.cluster_name = "etcd-batch";
	struct etcd_client *ec;
	char err[256];
	struct etcd_client_options o = {.timeout_ms = 3000};
	if (etcd_client_open(&ec, endpoints, &o, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	struct placement_value v = {.version = 1, .node_generation = 1, .cpu_milli = 1000};
	snprintf(v.node, sizeof(v.node), "n0");
	static struct batch_writer w;
	for (int k = 0; k < 2; k++) {
		batch_value_start(&w);
		for (int i = 0; i < 2 - k; i++) {
			char uid[40];
			snprintf(uid, sizeof(uid), "00000000000000aa%016x", 2 * k + i + 1);
			assert_int_equal(batch_value_add(&w, uid, &v), 0);
		}
		char key[160];
		snprintf(key, sizeof(key), "/shmsched/%s/shards/z0/" BATCH_KEY_DIR "aa-%d",
			 hosts.cluster_name, k);
		if (etcd_put(ec, key, strlen(key), w.text, w.len, 0, NULL) != 0)
			fail_msg("put %s: %s", key, etcd_client_error(ec));
	}
	int own[ZONES];
	start_host(0);
	await_balanced(ec, 0x1u, own, 15.0);
	struct producer pa = {0};
	connect_to(0, &pa);
	uint32_t one = template_of(&pa, 0, 0, "1");
	struct shmsched_result r;
	double t0 = etcd_hosts_now_s();
	do {
		r = place_tid(&pa, one);
		if (r.status != SHMSCHED_PLACED)
			etcd_hosts_sleep_ms(50);
	} while (r.status != SHMSCHED_PLACED && etcd_hosts_now_s() - t0 < 10.0);
	if (r.status != SHMSCHED_PLACED)
		fail_msg("a owns z0 but did not place 1 cpu on n0 (3 of 4 held): %s", r.message);
	long long counted = metric_of(0, "shmsched_etcd_placements_total{result=\"counted\"}");
	printf("batch keys: a counted %lld placements of 2 batch keys on its take of z0\n",
	       counted);
	assert_int_equal(counted, 3);
	r = place_tid(&pa, one);
	printf("a, a second pod of 1 cpu on n0 (4 of 4 held): status %u: %s\n", r.status,
	       r.message);
	if (r.status == SHMSCHED_PLACED)
		fail_msg("a placed a 5th cpu on n0 of 4: the batch keys' 3 placements not counted");
	shmsched_disconnect(pa.c);
	etcd_client_close(ec);
	stop_host_clean(0);
}

/* Batch keys followed by another host's watch (daemon/shard_watch.c,
 * daemon/batch_held.c; docs/design/multi-host.md, "Several placements a
 * key"). No host writes batch keys yet, so the test puts them as a
 * committer will. Host a alone owns every zone; a batch key of 3
 * placements of 1 cpu is put in each zone; host b joins and takes half the
 * zones: its watch lists a's zones and holds their keys' placements as
 * foreign (at least 3 a zone a kept). A key of a zone a owns is rewritten without
 * one placement (a release): b holds one fewer; then deleted (its last
 * two released): two fewer again. On the code before (the watch read
 * pods/ keys only), b held none. */
static void batch_keys_followed_by_watch(void **state)
{
	(void)state;
	hosts.cluster_name = "etcd-batchwatch";
	struct etcd_client *ec;
	char err[256];
	struct etcd_client_options o = {.timeout_ms = 3000};
	if (etcd_client_open(&ec, endpoints, &o, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	int own[ZONES];
	start_host(0);
	await_balanced(ec, 0x1u, own, 15.0);
	static struct batch_writer bw;
	char key[ZONES][160];
	struct placement_value v = {.version = 1, .node_generation = 1, .cpu_milli = 1000};
	for (int z = 0; z < ZONES; z++) {
		snprintf(v.node, sizeof(v.node), "n%d", z);
		batch_value_start(&bw);
		for (int i = 0; i < 3; i++) {
			char uid[40];
			snprintf(uid, sizeof(uid), "00000000000000bb%016x", 4 * z + i + 1);
			assert_int_equal(batch_value_add(&bw, uid, &v), 0);
		}
		snprintf(key[z], sizeof(key[z]), "/shmsched/%s/shards/z%d/" BATCH_KEY_DIR "bb-%d",
			 hosts.cluster_name, z, z);
		if (etcd_put(ec, key[z], strlen(key[z]), bw.text, bw.len, 0, NULL) != 0)
			fail_msg("put %s: %s", key[z], etcd_client_error(ec));
	}
	start_host(1);
	await_balanced(ec, 0x3u, own, 20.0);
	int za = -1, kept = 0;
	for (int z = 0; z < ZONES; z++)
		if (own[z] == 0) {
			kept++;
			za = za < 0 ? z : za;
		}
	assert_true(za >= 0);
	/* At least a's zones' 3 each; b's own zones' too when b listed them
	 * before it took them (the records stay, the take's: shard_watch.c). */
	double t = await_metric(1, "shmsched_etcd_foreign_placements", 3LL * kept, false, 15.0);
	etcd_hosts_sleep_ms(500);
	long long held = metric_of(1, "shmsched_etcd_foreign_placements");
	assert_true(held >= 3LL * kept);
	printf("batch keys: %s holds %lld placements of batch keys, %d zones' in %s's (%.2f "
	       "s)\n", names[1], held, kept, names[0], t);
	/* A release: z<za>'s key put again without its second placement. */
	snprintf(v.node, sizeof(v.node), "n%d", za);
	batch_value_start(&bw);
	for (int i = 0; i < 3; i += 2) {
		char uid[40];
		snprintf(uid, sizeof(uid), "00000000000000bb%016x", 4 * za + i + 1);
		assert_int_equal(batch_value_add(&bw, uid, &v), 0);
	}
	if (etcd_put(ec, key[za], strlen(key[za]), bw.text, bw.len, 0, NULL) != 0)
		fail_msg("put %s: %s", key[za], etcd_client_error(ec));
	t = await_metric(1, "shmsched_etcd_foreign_placements", held - 1, true, 10.0);
	etcd_hosts_sleep_ms(200);
	assert_int_equal(metric_of(1, "shmsched_etcd_foreign_placements"), held - 1);
	printf("batch keys: the key of z%d rewritten without one placement: %s holds %lld "
	       "(%.2f s)\n", za, names[1], held - 1, t);
	/* Its last two released: the key deleted. */
	if (etcd_delete(ec, key[za], strlen(key[za]), NULL, 0, NULL) != 0)
		fail_msg("delete %s: %s", key[za], etcd_client_error(ec));
	t = await_metric(1, "shmsched_etcd_foreign_placements", held - 3, true, 10.0);
	etcd_hosts_sleep_ms(200);
	assert_int_equal(metric_of(1, "shmsched_etcd_foreign_placements"), held - 3);
	printf("batch keys: the key of z%d deleted: %s holds %lld (%.2f s)\n", za, names[1],
	       held - 3, t);
	etcd_client_close(ec);
	stop_host_clean(1);
	stop_host_clean(0);
}

int main(int argc, char **argv)
{
	endpoints = getenv("SHMSCHED_ETCD_ENDPOINTS");
	if (endpoints == NULL || argc < 3) {
		printf("SKIP: run by tests/coord/etcd_cluster.sh with the paths of "
		       "shmschedd and shmsched\n");
		return 77;
	}
	hosts.shmschedd = argv[1];
	hosts.endpoints = endpoints;
	shmsched = argv[2];
	const char *tmp = getenv("SHMSCHED_ETCD_DIR");
	snprintf(dir, sizeof(dir), "%s", tmp != NULL ? tmp : "/tmp");
	char err[512];
	if (etcd_hosts_write_cluster(&hosts, "4", "8Gi", 1000000, err, sizeof(err)) != 0) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	/* quota_by_escrow's: the nodes and a ClusterQueue of 4 cpu. */
	if (etcd_hosts_write_cluster_file(
		    &hosts, "cluster-quota.json", "4", "8Gi", 110,
		    ",{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"ResourceFlavor\","
		    "\"metadata\":{\"name\":\"default\"}},"
		    "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"ClusterQueue\","
		    "\"metadata\":{\"name\":\"cq\"},\"spec\":{\"resourceGroups\":[{"
		    "\"coveredResources\":[\"cpu\"],\"flavors\":[{\"name\":\"default\","
		    "\"resources\":[{\"name\":\"cpu\",\"nominalQuota\":\"4\"}]}]}]}},"
		    "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"LocalQueue\","
		    "\"metadata\":{\"name\":\"lq\",\"namespace\":\"default\"},"
		    "\"spec\":{\"clusterQueue\":\"cq\"}}",
		    err, sizeof(err)) != 0) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	/* quota_borrowed_reclaimed_after_failover's: the nodes, cohort ml of
	 * team-a (reclaimWithinCohort Any) and team-b, 4 cpu each. */
#define COHORT_CQ(name, preemption)                                                     \
	"{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"ClusterQueue\","              \
	"\"metadata\":{\"name\":\"" name "\"},\"spec\":{\"cohortName\":\"ml\"," preemption  \
	"\"resourceGroups\":[{\"coveredResources\":[\"cpu\"],\"flavors\":[{\"name\":"        \
	"\"default\",\"resources\":[{\"name\":\"cpu\",\"nominalQuota\":\"4\"}]}]}]}}"
#define COHORT_LQ(name, cq)                                                             \
	"{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"LocalQueue\","                \
	"\"metadata\":{\"name\":\"" name "\",\"namespace\":\"default\"},"                   \
	"\"spec\":{\"clusterQueue\":\"" cq "\"}}"
	if (etcd_hosts_write_cluster_file(
		    &hosts, "cluster-cohort.json", "4", "8Gi", 110,
		    ",{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"ResourceFlavor\","
		    "\"metadata\":{\"name\":\"default\"}},"
		    COHORT_CQ("team-a", "\"preemption\":{\"reclaimWithinCohort\":\"Any\"},") ","
		    COHORT_CQ("team-b", "") "," COHORT_LQ("lqa", "team-a") ","
		    COHORT_LQ("lqb", "team-b"),
		    err, sizeof(err)) != 0) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	char cluster[128];
	FILE *f;
	/* rules_across_shards' nodes: two zones, each in both shards. */
	snprintf(cluster, sizeof(cluster), "%s/cross.json", dir);
	f = fopen(cluster, "w");
	if (f == NULL) {
		perror(cluster);
		return 1;
	}
	fputs("{\"kind\":\"List\",\"items\":[", f);
	for (int i = 0; i < 4; i++)
		fprintf(f, "%s{\"kind\":\"Node\",\"metadata\":{\"name\":\"x%d\",\"labels\":{"
			"\"kubernetes.io/hostname\":\"x%d\",\"topology.kubernetes.io/zone\":"
			"\"z%c\",\"" CROSS_LABEL "\":\"s%d\"}},\"status\":{\"allocatable\":"
			"{\"cpu\":\"4\",\"memory\":\"8Gi\",\"pods\":\"110\"}}}", i ? "," : "",
			i, i, i < 2 ? 'a' : 'b', i % 2);
	fputs("]}", f);
	fclose(f);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(hosts_join_split_fail_over, teardown),
		cmocka_unit_test_teardown(sync_commits_placements, teardown),
		cmocka_unit_test_teardown(sync_answers_after_commits, teardown),
		cmocka_unit_test_teardown(async_answers_then_commits, teardown),
		cmocka_unit_test_teardown(rules_across_shards, teardown),
		cmocka_unit_test_teardown(quota_by_escrow, teardown),
		cmocka_unit_test_teardown(quota_escrow_by_use, teardown),
		cmocka_unit_test_teardown(quota_survives_failover, teardown),
		cmocka_unit_test_teardown(quota_borrowed_reclaimed_after_failover, teardown),
		cmocka_unit_test_teardown(status_shows_capacity, teardown),
		cmocka_unit_test_teardown(batch_keys_counted_on_take, teardown),
		cmocka_unit_test_teardown(batch_keys_followed_by_watch, teardown),
	};
	if (getenv("SHMSCHED_TEST_FILTER"))
		cmocka_set_test_filter(getenv("SHMSCHED_TEST_FILTER"));
	return cmocka_run_group_tests(tests, NULL, NULL);
}
