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
 * 5. quota_by_escrow: a ClusterQueue of 4 cpu split over the four
 *    shards; two hosts admit 2 cpu each, `shmsched cluster status`
 *    shows the four slices acknowledged (below).
 * The whole run takes about 20 s on an idle machine. */
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

#define TTL_S 2
#define ZONES 4
#define HOSTS 3
#define BURST 100 /* n1 holds 110 pods */

static const char *shmschedd, *shmsched;
static const char *endpoints;
static char dir[64];
static pid_t pids[HOSTS];
static const char *const names[HOSTS] = {"host-a", "host-b", "host-c"};
/* The cluster's name of the test running (each its own keys). */
static const char *cluster_name = "etcd-hosts";
/* The cluster file the hosts start with (quota_by_escrow's has quotas). */
static const char *cluster_file = "cluster.json";

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};
	nanosleep(&ts, NULL);
}

static void sock_of(int h, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s.sock", dir, names[h]);
}

/* Starts host h; returns when its socket accepts a producer. */
static void start_host(int h)
{
	char sock[128], log[128], cluster[128];
	sock_of(h, sock, sizeof(sock));
	snprintf(log, sizeof(log), "%s/%s.log", dir, names[h]);
	snprintf(cluster, sizeof(cluster), "%s/%s", dir, cluster_file);
	pid_t pid = fork();
	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0600);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		const char *argv[] = {shmschedd, "--ephemeral", "--cluster", cluster,
				      "--socket", sock, "--workers", "1", "--no-pin",
				      "--no-warm", "--etcd", endpoints, "--etcd-lease-ttl",
				      "2", "--etcd-cluster", cluster_name, "--host-name",
				      names[h], NULL};
		execv(shmschedd, (char *const *)argv);
		_exit(127);
	}
	assert_true(pid > 0);
	pids[h] = pid;
	for (int i = 0; i < 2000; i++) {
		struct shmsched_client *c;
		char err[128];
		if (shmsched_connect(sock, &c, err, sizeof(err)) == 0) {
			shmsched_disconnect(c);
			return;
		}
		int st;
		if (waitpid(pid, &st, WNOHANG) == pid)
			fail_msg("%s exited at start (log %s)", names[h], log);
		sleep_ms(10);
	}
	fail_msg("%s: its socket %s never accepted (log %s)", names[h], sock, log);
}

/* Stops host h (SIGTERM); its exit status (-1: none running). */
static int stop_host(int h)
{
	if (pids[h] <= 0)
		return -1;
	kill(pids[h], SIGCONT);
	kill(pids[h], SIGTERM);
	int st = 0;
	waitpid(pids[h], &st, 0);
	pids[h] = 0;
	return st;
}

/* Each zone's owner (a host index, -1: none) as etcd holds it now. */
static void owners(struct etcd_client *ec, int *own)
{
	for (int z = 0; z < ZONES; z++) {
		char key[96];
		snprintf(key, sizeof(key), "/shmsched/%s/shards/z%d/owner", cluster_name, z);
		struct etcd_range_result r;
		if (etcd_range(ec, key, strlen(key), NULL, 0, 0, &r) != 0)
			fail_msg("range %s: %s", key, etcd_client_error(ec));
		own[z] = -1;
		for (int h = 0; r.n_kvs == 1 && h < HOSTS; h++)
			if (r.kvs[0].value_len == strlen(names[h]) &&
			    memcmp(r.kvs[0].value, names[h], r.kvs[0].value_len) == 0)
				own[z] = h;
		etcd_range_result_free(&r);
	}
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
	double t0 = now_s();
	int n_live = __builtin_popcount(live);
	while (now_s() - t0 < limit_s) {
		owners(ec, own);
		bool ok = true;
		for (int z = 0; z < ZONES && ok; z++)
			ok = own[z] >= 0 && (live >> own[z] & 1u);
		for (int h = 0; h < HOSTS && ok; h++)
			if (live >> h & 1u) {
				int n = owned_by(own, h);
				ok = n >= ZONES / n_live && n <= (ZONES + n_live - 1) / n_live;
			}
		if (ok)
			return now_s() - t0;
		sleep_ms(20);
	}
	fail_msg("the shards were not split among the live hosts (mask %x) within "
		 "%.1f s: owners z0..z3 = %d %d %d %d", live, limit_s, own[0], own[1],
		 own[2], own[3]);
	return -1;
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
		sleep_ms(10);
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
		sleep_ms(10);
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

/* Whether host h's metrics text (OP_QUEUE_METRICS on its admin socket)
 * holds `line` (a whole line). */
static bool metrics_have(int h, const char *line)
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
	char want[160];
	snprintf(want, sizeof(want), "\n%s\n", line);
	bool have = strstr(text, want) != NULL;
	free(text);
	return have;
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
	int hosts = 0, shards = 0, header = 0;
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
			hosts++;
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
	assert_int_equal(hosts, n_hosts);
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
	double t0 = now_s();
	kill(pids[2], SIGKILL);
	waitpid(pids[2], NULL, 0);
	pids[2] = 0;
	t = await_balanced(ec, 0x3u, own, TTL_S + 2.0);
	printf("third host SIGKILLed: its shard z%d owned by %s %.2f s later (TTL %d s)\n",
	       orphan, names[own[orphan]], now_s() - t0, TTL_S);

	/* 4. Host a stopped past its TTL: host b takes every shard; a,
	 * continued, places nothing at once. */
	int a_zone = -1;
	for (int z = 0; z < ZONES; z++)
		if (own[z] == 0)
			a_zone = z;
	assert_true(a_zone >= 0);
	kill(pids[0], SIGSTOP);
	t0 = now_s();
	t = await_balanced(ec, 0x2u, own, TTL_S + 3.0);
	printf("host a SIGSTOPped: b owns all four shards %.2f s later\n", now_s() - t0);
	while (now_s() - t0 < TTL_S + 1.0)
		sleep_ms(20);
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
	       now_s() - t0 - (TTL_S + 1.0));
	assert_metrics(0, "shmsched_etcd_events_total{event=\"loss\"} 1");
	shmsched_disconnect(pa.c);
	shmsched_disconnect(pb.c);
	etcd_client_close(ec);
	/* Both stop cleanly (a sanitizer's report at exit would fail them). */
	for (int h = 0; h < 2; h++) {
		int st = stop_host(h);
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
			fail_msg("%s stopped with status 0x%x (log %s/%s.log)", names[h], st, dir,
				 names[h]);
	}
}

/* The placements etcd holds under shards/z<z>/pods/ of this test's
 * cluster: how many, each checked to decode as a placement on n<z>; the
 * sum of their cpu and the newest mod revision. */
static size_t pods_in_etcd(struct etcd_client *ec, int z, int64_t *cpu_milli,
			   int64_t *newest)
{
	char key[128], end[128];
	int kl = snprintf(key, sizeof(key), "/shmsched/%s/shards/z%d/pods/", cluster_name, z);
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
	cluster_name = "etcd-sync";
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
	double t0 = now_s();
	uint64_t first = 0;
	for (int i = 0; i < 50; i++) {
		struct shmsched_result r = place_tid(&pa, small);
		if (r.status != SHMSCHED_PLACED)
			fail_msg("pod %d of z0 not placed: %s", i, r.message);
		if (i == 0)
			first = r.placement_id;
	}
	double took = now_s() - t0;
	int64_t newest, cpu;
	assert_int_equal(pods_in_etcd(ec, 0, &cpu, &newest), 50);
	assert_int_equal(cpu, 50 * 50);
	printf("sync: 50 pods placed one at a time, each committed first, in %.2f s "
	       "(%.1f ms a pod, the test polling every 10 ms); 50 keys in etcd\n", took,
	       took * 1000.0 / 50);
	/* A release deletes its key (not waited for: within 5 s here). */
	if (shmsched_release(pa.c, first, err, sizeof(err)) != 0)
		fail_msg("release: %s", err);
	double tr = now_s();
	while (pods_in_etcd(ec, 0, &cpu, &newest) != 49 && now_s() - tr < 5.0)
		sleep_ms(10);
	assert_int_equal(pods_in_etcd(ec, 0, &cpu, &newest), 49);
	printf("a release: its key deleted from etcd %.3f s later\n", now_s() - tr);

	/* A burst (the figure of docs/perf/2026-11-29-etcd-sync.md): 100
	 * pods of 1m on n1 submitted at once to the one worker, each
	 * answered after its commit. */
	uint32_t tiny = template_of(&pa, 0, 1, "1m");
	struct shmsched_pod burst[BURST];
	for (int i = 0; i < BURST; i++)
		burst[i] = (struct shmsched_pod){.cookie = 1000000 + (uint64_t)i,
						 .template_id = tiny};
	int sent = 0, answered = 0;
	double tb = now_s();
	while (answered < BURST && now_s() - tb < 60.0) {
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
			sleep_ms(1);
	}
	double tbs = now_s() - tb;
	assert_int_equal(answered, BURST);
	assert_int_equal(pods_in_etcd(ec, 1, &cpu, &newest), BURST);
	printf("sync burst: %d pods, 1 worker, answered in %.2f s: %.0f pods/s, %d keys "
	       "on n1\n", BURST, tbs, BURST / tbs, BURST);

	/* The lease revoked: hosts/host-a carries it. */
	char key[96];
	snprintf(key, sizeof(key), "/shmsched/%s/hosts/%s", cluster_name, names[0]);
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
	double t1 = now_s();
	do {
		r = place_tid(&pa, big);
		if (r.status != SHMSCHED_PLACED)
			sleep_ms(100);
	} while (r.status != SHMSCHED_PLACED && now_s() - t1 < 10.0);
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
	double tk = now_s();
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
			sleep_ms(50);
	} while (r.status != SHMSCHED_PLACED && now_s() - tk < TTL_S + 10.0);
	if (r.status != SHMSCHED_PLACED)
		fail_msg("b owns z0 but did not place 400m there (3.45 of 4 cpu held): %s",
			 r.message);
	printf("a SIGKILLed: b placed on z0 %.2f s later, a's placements counted\n",
	       now_s() - tk);
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
	/* b's own count: a's 50 on n0 and BURST on n1; its 2 committed,
	 * its 1 refused (by the scheduler: no etcd refusal). */
	assert_metrics(1, "shmsched_etcd_placements_total{result=\"counted\"} 150");
	assert_metrics(1, "shmsched_etcd_placements_total{result=\"committed\"} 1");
	assert_metrics(1, "shmsched_etcd_placements_total{result=\"refused\"} 0");
	shmsched_disconnect(pb.c);
	etcd_client_close(ec);
	int st = stop_host(1);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		fail_msg("%s stopped with status 0x%x (log %s/%s.log)", names[1], st, dir,
			 names[1]);
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

/* Polls p's answers for `ms`; adds the placed ones to *placed. */
static void count_placed(struct producer *p, unsigned ms, int *placed)
{
	for (unsigned t = 0; t < ms; t += 10) {
		struct shmsched_result r;
		while (shmsched_poll(p->c, &r, 1) == 1)
			*placed += r.status == SHMSCHED_PLACED;
		sleep_ms(10);
	}
}

/* Waits (limit_s) until host h's metrics have `line`; whether they did. */
static bool await_metrics(int h, const char *line, double limit_s)
{
	double t0 = now_s();
	while (now_s() - t0 < limit_s) {
		if (metrics_have(h, line))
			return true;
		sleep_ms(50);
	}
	return false;
}

static void quota_by_escrow(void **state)
{
	(void)state;
	cluster_name = "etcd-escrow";
	cluster_file = "cluster-quota.json";
	start_host(0);
	start_host(1);
	char err[256];
	struct etcd_client *ec;
	struct etcd_client_options o = {.timeout_ms = 5000};
	if (etcd_client_open(&ec, endpoints, &o, err, sizeof(err)) != 0)
		fail_msg("etcd: %s", err);
	int own[ZONES];
	await_balanced(ec, 3u, own, 20);
	/* Each host's share in force: 2 cpu (1 a shard). Not waited for on
	 * the old code (no split): the count below says 8. */
	for (int h = 0; h < 2; h++)
		if (!await_metrics(h, ESCROW_NOMINAL("2"), 20))
			printf("%s: no nominal quota of 2 cpu in force within 20 s\n", names[h]);
	struct producer p[2];
	uint32_t tid[2];
	for (int h = 0; h < 2; h++) {
		char sock[128];
		sock_of(h, sock, sizeof(sock));
		memset(&p[h], 0, sizeof(p[h]));
		if (shmsched_connect(sock, &p[h].c, err, sizeof(err)) != 0)
			fail_msg("connect %s: %s", sock, err);
		if (shmsched_register_template(p[h].c, escrow_pod, strlen(escrow_pod), &tid[h],
					       err, sizeof(err)) != 0)
			fail_msg("template on %s: %s", names[h], err);
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
		 endpoints, cluster_name);
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

	/* Host b is killed: a owns all four shards once b's lease lapses. */
	double t0 = now_s();
	kill(pids[1], SIGKILL);
	waitpid(pids[1], NULL, 0);
	pids[1] = 0;
	shmsched_disconnect(p[1].c);
	await_balanced(ec, 1u, own, 20);
	if (!await_metrics(0, ESCROW_NOMINAL("4"), 20))
		fail_msg("%s: the whole 4 cpu not in force within 20 s of owning every shard",
			 names[0]);
	printf("quota by escrow: %s admits the whole 4 cpu %.1f s after the kill\n",
	       names[0], now_s() - t0);
	submit_n(&p[0], tid[0], 2);
	for (int i = 0; i < 150 && placed[0] < 4; i++)
		count_placed(&p[0], 100, &placed[0]);
	count_placed(&p[0], 500, &placed[0]);
	assert_int_equal(placed[0], 4);
	shmsched_disconnect(p[0].c);
	etcd_client_close(ec);
	int st = stop_host(0); /* a clean stop: the sanitizers' builds check it */
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		fail_msg("%s stopped with status 0x%x (log %s/%s.log)", names[0], st, dir,
			 names[0]);
}

static int teardown(void **state)
{
	(void)state;
	for (int h = 0; h < HOSTS; h++)
		(void)stop_host(h);
	return 0;
}

/* dir/name: the four nodes n0..n3 (4 cpu, zones z0..z3), then `extra`
 * (more items, each after a comma). 0, or -1 (printed). */
static int write_cluster(const char *name, const char *extra)
{
	char path[128];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	if (f == NULL) {
		perror(path);
		return -1;
	}
	fputs("{\"kind\":\"List\",\"items\":[", f);
	for (int z = 0; z < ZONES; z++)
		fprintf(f, "%s{\"kind\":\"Node\",\"metadata\":{\"name\":\"n%d\",\"labels\":{"
			"\"topology.kubernetes.io/zone\":\"z%d\"}},\"status\":{\"allocatable\":"
			"{\"cpu\":\"4\",\"memory\":\"8Gi\",\"pods\":\"110\"}}}", z ? "," : "", z, z);
	fprintf(f, "%s]}", extra);
	return fclose(f) == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
	endpoints = getenv("SHMSCHED_ETCD_ENDPOINTS");
	if (endpoints == NULL || argc < 3) {
		printf("SKIP: run by tests/coord/etcd_cluster.sh with the paths of "
		       "shmschedd and shmsched\n");
		return 77;
	}
	shmschedd = argv[1];
	shmsched = argv[2];
	const char *tmp = getenv("SHMSCHED_ETCD_DIR");
	snprintf(dir, sizeof(dir), "%s", tmp != NULL ? tmp : "/tmp");
	/* The hosts' cluster files: the nodes, and the nodes with a ClusterQueue
	 * of 4 cpu (quota_by_escrow's). */
	if (write_cluster("cluster.json", "") < 0 ||
	    write_cluster("cluster-quota.json",
			  ",{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"ResourceFlavor\","
			  "\"metadata\":{\"name\":\"default\"}},"
			  "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"ClusterQueue\","
			  "\"metadata\":{\"name\":\"cq\"},\"spec\":{\"resourceGroups\":[{"
			  "\"coveredResources\":[\"cpu\"],\"flavors\":[{\"name\":\"default\","
			  "\"resources\":[{\"name\":\"cpu\",\"nominalQuota\":\"4\"}]}]}]}},"
			  "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"LocalQueue\","
			  "\"metadata\":{\"name\":\"lq\",\"namespace\":\"default\"},"
			  "\"spec\":{\"clusterQueue\":\"cq\"}}") < 0)
		return 1;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(hosts_join_split_fail_over, teardown),
		cmocka_unit_test_teardown(sync_commits_placements, teardown),
		cmocka_unit_test_teardown(quota_by_escrow, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
