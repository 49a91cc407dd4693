/* Hosts killed under load, the sync guarantee checked from etcd (issue
 * 40: "0 placements lost in sync over 20 kills, 0 overcommits ever").
 *
 * Run by tests/coord/etcd_cluster.sh (SHMSCHED_ETCD_ENDPOINTS, _PIDS,
 * _DIR; without them it prints SKIP and exits 77):
 *   failover_load SHMSCHEDD [--kills N] [--ttl S] [--rate PODS/S]
 *                 [--node-cpu CORES] [--kill-etcd-leader] [--stop-host]
 *                 [--durability MODE] [--lost-ok]
 * Three shmschedd hosts (etcd_hosts_fixture.h) on six one-node zones
 * (the shards, 2/2/2), each node --node-cpu cores (2 by default) and
 * 4Gi; one producer a host (a
 * thread of this program, libshmsched-client) submits a stream of pods
 * of 250m and 64Mi (--rate a second, 4 in flight, answered at once when
 * nothing fits) and keeps its 6 newest placements, releasing the older
 * ones, logging every answer: the pod (host, cookie), PLACED's node and
 * placement id, and the instants of the answer and of the release.
 * A killed host's placements stay (its pods run on), and so do the keys
 * of pods released after their shard moved (the delete is dropped:
 * docs/design/multi-host.md), so each kill leaves about 15 pods' room
 * held for good: 2 cores a node fill after a few kills (the overcommit
 * check under pressure), 20 kills want about 16.
 * Meanwhile, in this order:
 *   --kills N         N times a host (a, b, c in turn) is SIGKILLed; one
 *                     sample is the time from the kill until each shard
 *                     it owned has a live owner (etcd's owner keys, every
 *                     20 ms); then it is restarted and the split awaited
 *   --kill-etcd-leader  etcd's leader is SIGKILLed, the load runs on
 *                     for 3 s, the member is restarted on its data
 *   --stop-host       host a is SIGSTOPped past its TTL (until the
 *                     others own its shards and TTL + 1 s passed), then
 *                     continued: it must write nothing after its lease
 *                     lapsed (the checker's fence check)
 * Then the producers drain, the hosts stop, and the checker
 * (sync_check.h) replays etcd's history (sync_history.h) against the
 * answers: lost, unanswered (allowed: a killed host's pods in flight,
 * which its producer got back CANCELLED), twice, unfenced, overcommit.
 * --durability MODE is the hosts' --etcd-durability (sync by default);
 * with --lost-ok (async mode) lost placements are counted, not failed.
 * Exit 0 when the checker finds nothing wrong and every failover and
 * re-split came within 60 s; 1 otherwise (the hosts' logs' ends are
 * printed when a restarted host does not re-join).
 *
 * Atomics: SL1 (a host's incarnation, moved by the main thread after a
 * restart's socket accepts; a producer reconnects when it moves), SL2
 * (stop) and SL3 (a count for the progress lines) below. */
#define _GNU_SOURCE 1

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
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
#include "sync_check.h"
#include "sync_history.h"

#define HOSTS 3
#define ZONES 6
#define NODE_MEM (4ll << 30)
#define POD_CPU_MILLI 250
#define POD_MEM (64ll << 20)
#define IN_FLIGHT 4
#define KEEP 6	       /* live placements a producer keeps */
#define LIMIT_S 60.0   /* a failover or a re-split */
#define CLUSTER "failover-load"

static const char *const names[HOSTS] = {"host-a", "host-b", "host-c"};
static struct etcd_hosts hosts;
/* SL1: release by the main thread once a (re)started host accepts,
 * partner of the producer's acquire before it connects. */
static atomic_uint incarnation[HOSTS];
/* SL2: release by the main thread at the end, partner of the producers'
 * acquire; they then drain what they have in flight. */
static atomic_bool stopping;
static double rate = 200.0;
static int node_cpu = 2;
/* SL3: relaxed, a figure for the progress lines only (no partner: the
 * producers' logs are read after their threads are joined). */
static atomic_size_t placed_total;

struct producer {
	int h;
	pthread_t thread;
	struct sync_answer *placed;
	size_t n_placed, cap_placed;
	size_t submitted, unschedulable, cancelled, other;
	size_t rolled_back; /* unschedulable: its etcd commit refused or unanswered */
	size_t release_errors;
	size_t died_in_flight;
	char error[256];
};

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Each host process started: its incarnation and etcd's revision
 * before it (sync_check.h). Main thread only. */
static struct sync_incarnation incs[256];
static size_t n_incs;

/* Starts host h as incarnation inc: 0, or -1 with the reason printed. */
static int start_counted(struct etcd_client *ec, int h, unsigned inc)
{
	char err[512], key[96];
	snprintf(key, sizeof(key), "/shmsched/%s/", CLUSTER);
	struct etcd_range_result r;
	if (etcd_range(ec, key, strlen(key), NULL, 0, 1, &r) != 0) {
		printf("failover_load: etcd's revision: %s\n", etcd_client_error(ec));
		return -1;
	}
	if (n_incs < sizeof(incs) / sizeof(incs[0]))
		incs[n_incs++] = (struct sync_incarnation){h, inc, r.revision};
	etcd_range_result_free(&r);
	if (etcd_host_start(&hosts, h, err, sizeof(err)) != 0) {
		printf("failover_load: start of %s: %s\n", names[h], err);
		return -1;
	}
	/* SL1: release, partner of the producer's acquire. */
	atomic_store_explicit(&incarnation[h], inc, memory_order_release);
	return 0;
}

static int log_placed(struct producer *p, unsigned inc, const struct shmsched_result *r,
		      const char *node)
{
	if (p->n_placed == p->cap_placed) {
		size_t cap = p->cap_placed ? 2 * p->cap_placed : 1024;
		struct sync_answer *a = realloc(p->placed, cap * sizeof(*a));
		if (a == NULL)
			return -ENOMEM;
		p->placed = a;
		p->cap_placed = cap;
	}
	struct sync_answer *a = &p->placed[p->n_placed++];
	*a = (struct sync_answer){.host = p->h, .incarnation = inc,
				  .placement_id = r->placement_id,
				  .cpu_milli = POD_CPU_MILLI, .mem_bytes = POD_MEM,
				  .placed_ns = r->complete_ns};
	snprintf(a->node, sizeof(a->node), "%s", node);
	return 0;
}

/* One connection's life: until the host goes away (0) or the end is
 * drained (1). The pods in flight when it goes away are counted died
 * (their answers are not read). */
static int produce_until(struct producer *p, unsigned inc, struct shmsched_client *c,
			 uint32_t tid, unsigned *in_flight);

static int produce(struct producer *p, unsigned inc, struct shmsched_client *c, uint32_t tid)
{
	unsigned in_flight = 0;
	int rc = produce_until(p, inc, c, tid, &in_flight);
	if (rc == 0)
		p->died_in_flight += in_flight;
	return rc;
}

static int produce_until(struct producer *p, unsigned inc, struct shmsched_client *c,
			 uint32_t tid, unsigned *in_flight)
{
	char names_of[64][SYNC_NAME_MAX] = {{0}};
	size_t live[KEEP + IN_FLIGHT + 1], n_live = 0; /* indexes in placed */
	uint64_t next_ns = now_ns(), gap_ns = (uint64_t)(1e9 / rate);
	uint64_t cookie = 0;
	for (;;) {
		bool stop = atomic_load_explicit(&stopping, memory_order_acquire); /* SL2 */
		if (stop && *in_flight == 0)
			return 1;
		bool idle = true;
		if (!stop && *in_flight < IN_FLIGHT && now_ns() >= next_ns) {
			struct shmsched_pod pod = {
				.cookie = ++cookie,
				.template_id = tid, .flags = SHMSCHED_NO_WAIT};
			int k = shmsched_submit(c, &pod, 1);
			if (k < 0)
				return 0;
			*in_flight += (unsigned)k;
			p->submitted += (size_t)k;
			next_ns += gap_ns;
			if (next_ns + 100 * gap_ns < now_ns())
				next_ns = now_ns(); /* no catching up after a stall */
			idle = false;
		}
		struct shmsched_result res[16];
		int k = shmsched_poll(c, res, 16);
		if (k < 0)
			return 0;
		for (int i = 0; i < k; i++) {
			(*in_flight)--;
			idle = false;
			const struct shmsched_result *r = &res[i];
			if (r->status == SHMSCHED_CANCELLED) {
				/* The host went away with it (or before answering). */
				p->cancelled++;
				p->died_in_flight++;
				continue;
			}
			if (r->status == SHMSCHED_UNSCHEDULABLE) {
				p->unschedulable++;
				/* Rolled back by etcd_sync (daemon/etcd_sync.c: fenced,
				 * refused, not queued, or unanswered within its wait,
				 * whose commit may land after all): "shard S ...
				 * commit...". */
				p->rolled_back += strncmp(r->message, "shard ", 6) == 0 &&
						  strstr(r->message, "commit") != NULL;
				continue;
			}
			if (r->status != SHMSCHED_PLACED) {
				p->other++;
				continue;
			}
			if (r->node_id >= 64) {
				snprintf(p->error, sizeof(p->error), "a node id %u", r->node_id);
				return -EPROTO;
			}
			char *node = names_of[r->node_id];
			if (node[0] == '\0') {
				char err[128];
				if (shmsched_node_name(c, r->node_id, node, SYNC_NAME_MAX, err,
						       sizeof(err)) != 0) {
					node[0] = '\0';
					/* Gone meanwhile: the name is still logged below. */
					snprintf(node, SYNC_NAME_MAX, "?");
				}
			}
			if (log_placed(p, inc, r, node) != 0)
				return -ENOMEM;
			atomic_fetch_add_explicit(&placed_total, 1, memory_order_relaxed); /* SL3 */
			live[n_live++] = p->n_placed - 1;
		}
		/* Keep the KEEP newest: the oldest released. */
		while (n_live > KEEP) {
			struct sync_answer *a = &p->placed[live[0]];
			memmove(live, live + 1, (n_live - 1) * sizeof(*live));
			n_live--;
			a->released_ns = now_ns();
			char err[160];
			int rc = shmsched_release(c, a->placement_id, err, sizeof(err));
			if (rc == -ECONNRESET)
				return 0; /* gone: the release's outcome unknown */
			/* Else (a stopped host's -ETIMEDOUT: the handle stays
			 * usable) its outcome is unknown too: the checker asks
			 * nothing of a released pod's key. */
			p->release_errors += rc != 0;
			idle = false;
		}
		if (idle) {
			struct timespec ts = {0, 500000};
			nanosleep(&ts, NULL);
		}
	}
}

static void *producer_main(void *arg)
{
	struct producer *p = arg;
	char sock[256], err[256];
	snprintf(sock, sizeof(sock), "%s/%s.sock", hosts.dir, names[p->h]);
	unsigned seen = 0;
	while (!atomic_load_explicit(&stopping, memory_order_acquire)) { /* SL2 */
		/* SL1: acquire, partner of the restart's release. */
		unsigned inc = atomic_load_explicit(&incarnation[p->h], memory_order_acquire);
		struct shmsched_client *c;
		if (inc == seen || shmsched_connect(sock, &c, err, sizeof(err)) != 0) {
			etcd_hosts_sleep_ms(10);
			continue;
		}
		seen = inc;
		char json[512];
		snprintf(json, sizeof(json),
			 "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"load-%s\"},\"spec\":{"
			 "\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{"
			 "\"cpu\":\"%dm\",\"memory\":\"%lld\"}}}]}}", names[p->h], POD_CPU_MILLI,
			 POD_MEM);
		uint32_t tid;
		int rc = shmsched_register_template(c, json, strlen(json), &tid, err,
						    sizeof(err));
		if (rc == 0)
			rc = produce(p, inc, c, tid);
		else
			rc = 0; /* the host died at once: wait for the next one */
		shmsched_disconnect(c);
		if (rc < 0)
			break;
		if (rc == 1)
			break;
	}
	return NULL;
}

/* The index of the etcd member that leads now (-1: none answered). */
static int etcd_leader(const char *endpoints)
{
	struct etcd_client *ec;
	char err[256];
	struct etcd_client_options o = {.timeout_ms = 1000};
	if (etcd_client_open(&ec, endpoints, &o, err, sizeof(err)) != 0)
		return -1;
	int leader = -1;
	for (size_t i = 0; i < etcd_client_endpoints(ec) && leader < 0; i++) {
		uint64_t me, lead;
		if (etcd_member_status(ec, i, &me, &lead) == 0 && me != 0 && me == lead)
			leader = (int)i;
	}
	etcd_client_close(ec);
	return leader;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Kills host h, samples its failover (ms), restarts it, awaits the split. */
static int kill_and_restart(struct etcd_client *ec, int h, int i, double *sample)
{
	char err[512];
	int own[ZONES];
	if (etcd_hosts_owners(&hosts, ec, own, err, sizeof(err)) != 0) {
		fprintf(stderr, "failover_load: %s\n", err);
		return -1;
	}
	double t0 = etcd_hosts_now_s();
	etcd_host_kill(&hosts, h);
	for (;;) {
		int now[ZONES];
		bool done = etcd_hosts_owners(&hosts, ec, now, err, sizeof(err)) == 0;
		for (int z = 0; z < ZONES && done; z++)
			if (own[z] == h)
				done = now[z] >= 0 && now[z] != h;
		if (done)
			break;
		if (etcd_hosts_now_s() - t0 > LIMIT_S) {
			printf("failover_load: kill %d: %s's shards not taken over in %.0f s\n", i,
			       names[h], LIMIT_S);
			etcd_hosts_print_logs(&hosts, HOSTS);
			return -1;
		}
		etcd_hosts_sleep_ms(20);
	}
	*sample = (etcd_hosts_now_s() - t0) * 1000.0;
	etcd_hosts_sleep_ms(300); /* load on the survivors alone */
	/* SL1: relaxed, the main thread reading its own store. */
	unsigned inc = atomic_load_explicit(&incarnation[h], memory_order_relaxed) + 1;
	if (start_counted(ec, h, inc) != 0)
		return -1;
	double took;
	if (etcd_hosts_await_balanced(&hosts, ec, 0x7u, own, LIMIT_S, &took, err, sizeof(err)) !=
	    0) {
		printf("failover_load: kill %d: %s restarted did not re-join: %s\n", i, names[h],
		       err);
		etcd_hosts_print_logs(&hosts, HOSTS);
		return -1;
	}
	size_t placed = atomic_load_explicit(&placed_total, memory_order_relaxed); /* SL3 */
	static size_t placed_before;
	printf("kill %d: %s taken over in %.0f ms; restarted, split again %.2f s later; %zu "
	       "pods placed since the last kill\n", i, names[h], *sample, took,
	       placed - placed_before);
	placed_before = placed;
	fflush(stdout);
	return 0;
}

/* etcd's leader SIGKILLed under load, restarted 3 s later. */
static pid_t kill_etcd_leader(struct etcd_client *ec)
{
	const char *pids = getenv("SHMSCHED_ETCD_PIDS");
	const char *edir = getenv("SHMSCHED_ETCD_DIR");
	int li = -1;
	for (int t = 0; t < 50 && li < 0; t++) {
		li = etcd_leader(hosts.endpoints);
		if (li < 0)
			etcd_hosts_sleep_ms(100);
	}
	if (li < 0 || pids == NULL || edir == NULL) {
		printf("failover_load: no etcd leader found\n");
		return -1;
	}
	pid_t victim = 0;
	const char *p = pids;
	for (int i = 0; i < li && p != NULL; i++) {
		p = strchr(p, ',');
		p = p != NULL ? p + 1 : NULL;
	}
	if (p != NULL)
		victim = (pid_t)strtol(p, NULL, 10);
	char path[64], cmdline[8192];
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)victim);
	FILE *f = victim > 0 ? fopen(path, "r") : NULL;
	size_t len = f != NULL ? fread(cmdline, 1, sizeof(cmdline) - 1, f) : 0;
	if (f != NULL)
		fclose(f);
	if (len == 0) {
		printf("failover_load: etcd member m%d (pid %d): no command line\n", li,
		       (int)victim);
		return -1;
	}
	cmdline[len] = '\0';
	char *argv[64];
	int argc = 0;
	for (char *a = cmdline; a < cmdline + len && argc < 63; a += strlen(a) + 1)
		argv[argc++] = a;
	argv[argc] = NULL;
	double t0 = etcd_hosts_now_s();
	kill(victim, SIGKILL);
	printf("etcd leader m%d (pid %d) SIGKILLed under load\n", li, (int)victim);
	fflush(stdout);
	etcd_hosts_sleep_ms(3000);
	char log[256];
	snprintf(log, sizeof(log), "%s/m%d.log", edir, li);
	pid_t np = fork();
	if (np == 0) {
		FILE *o = freopen(log, "a", stdout);
		(void)o;
		dup2(1, 2);
		execv(argv[0], argv);
		_exit(127);
	}
	int own[ZONES];
	char err[512];
	double took;
	if (etcd_hosts_await_balanced(&hosts, ec, 0x7u, own, LIMIT_S, &took, err, sizeof(err)) !=
	    0) {
		printf("failover_load: after the etcd leader's kill: %s\n", err);
		etcd_hosts_print_logs(&hosts, HOSTS);
		return np > 0 ? -np : -1;
	}
	printf("etcd leader's kill: member restarted, hosts split 2/2/2 %.2f s after the kill\n",
	       etcd_hosts_now_s() - t0);
	return np;
}

/* Host a SIGSTOPped past its TTL, then continued. */
static int stop_host_past_ttl(struct etcd_client *ec)
{
	int own[ZONES];
	char err[512];
	double t0 = etcd_hosts_now_s(), took;
	kill(hosts.pids[0], SIGSTOP);
	if (etcd_hosts_await_balanced(&hosts, ec, 0x6u, own, LIMIT_S, &took, err, sizeof(err)) !=
	    0) {
		kill(hosts.pids[0], SIGCONT);
		printf("failover_load: host-a stopped: %s\n", err);
		return -1;
	}
	while (etcd_hosts_now_s() - t0 < hosts.ttl_s + 1.0)
		etcd_hosts_sleep_ms(20);
	kill(hosts.pids[0], SIGCONT);
	printf("host-a SIGSTOPped %.2f s (its shards owned by the others %.2f s after the "
	       "stop), continued\n", etcd_hosts_now_s() - t0, took);
	if (etcd_hosts_await_balanced(&hosts, ec, 0x7u, own, LIMIT_S, &took, err, sizeof(err)) !=
	    0) {
		printf("failover_load: host-a continued did not re-join: %s\n", err);
		etcd_hosts_print_logs(&hosts, HOSTS);
		return -1;
	}
	printf("host-a re-joined: split 2/2/2 %.2f s after it continued\n", took);
	return 0;
}

static int usage(const char *why)
{
	fprintf(stderr, "failover_load: %s\nusage: failover_load SHMSCHEDD [--kills N] [--ttl S] "
		"[--rate PODS/S] [--node-cpu CORES] [--kill-etcd-leader] [--stop-host] "
		"[--durability MODE] [--lost-ok]\n", why);
	return 2;
}

int main(int argc, char **argv)
{
	const char *endpoints = getenv("SHMSCHED_ETCD_ENDPOINTS");
	const char *edir = getenv("SHMSCHED_ETCD_DIR");
	if (endpoints == NULL || edir == NULL) {
		printf("SKIP: run by tests/coord/etcd_cluster.sh (SHMSCHED_ETCD_ENDPOINTS)\n");
		return 77;
	}
	if (argc < 2)
		return usage("the path of shmschedd is missing");
	int kills = 3, ttl = 2;
	bool leader = false, stop_host = false, lost_ok = false;
	const char *durability = NULL;
	for (int i = 2; i < argc; i++) {
		char *end = NULL;
		if (strcmp(argv[i], "--kills") == 0 && i + 1 < argc) {
			long v = strtol(argv[++i], &end, 10);
			if (*end != '\0' || v < 0 || v > 1000)
				return usage("--kills: expected 0 to 1000");
			kills = (int)v;
		} else if (strcmp(argv[i], "--ttl") == 0 && i + 1 < argc) {
			long v = strtol(argv[++i], &end, 10);
			if (*end != '\0' || v < 2 || v > 60)
				return usage("--ttl: expected 2 to 60 seconds");
			ttl = (int)v;
		} else if (strcmp(argv[i], "--rate") == 0 && i + 1 < argc) {
			rate = strtod(argv[++i], &end);
			if (*end != '\0' || !(rate >= 1.0 && rate <= 100000.0))
				return usage("--rate: expected 1 to 100000 pods a second");
		} else if (strcmp(argv[i], "--node-cpu") == 0 && i + 1 < argc) {
			long v = strtol(argv[++i], &end, 10);
			if (*end != '\0' || v < 1 || v > 1000)
				return usage("--node-cpu: expected 1 to 1000 cores");
			node_cpu = (int)v;
		} else if (strcmp(argv[i], "--kill-etcd-leader") == 0) {
			leader = true;
		} else if (strcmp(argv[i], "--stop-host") == 0) {
			stop_host = true;
		} else if (strcmp(argv[i], "--durability") == 0 && i + 1 < argc) {
			durability = argv[++i];
		} else if (strcmp(argv[i], "--lost-ok") == 0) {
			lost_ok = true;
		} else {
			return usage(argv[i]);
		}
	}
	static char dir[256];
	snprintf(dir, sizeof(dir), "%s/load", edir);
	mkdir(dir, 0700);
	hosts = (struct etcd_hosts){.shmschedd = argv[1], .endpoints = endpoints,
				    .cluster_name = CLUSTER, .dir = dir, .names = names,
				    .n = HOSTS, .zones = ZONES, .ttl_s = ttl,
				    .durability = durability};
	char err[512];
	char cpu[16];
	snprintf(cpu, sizeof(cpu), "%d", node_cpu);
	if (etcd_hosts_write_cluster(&hosts, cpu, "4Gi", 110, err, sizeof(err)) != 0) {
		fprintf(stderr, "failover_load: %s\n", err);
		return 1;
	}
	struct etcd_client *ec;
	struct etcd_client_options o = {.timeout_ms = 3000};
	if (etcd_client_open(&ec, endpoints, &o, err, sizeof(err)) != 0) {
		fprintf(stderr, "failover_load: %s\n", err);
		return 1;
	}
	int rc = 1, own[ZONES];
	double took;
	pid_t etcd_restarted = 0;
	struct producer prod[HOSTS] = {{0}};
	bool producing = false;
	for (int h = 0; h < HOSTS; h++)
		if (start_counted(ec, h, 1) != 0)
			goto out;
	if (etcd_hosts_await_balanced(&hosts, ec, 0x7u, own, LIMIT_S, &took, err, sizeof(err)) !=
	    0) {
		printf("failover_load: at start: %s\n", err);
		etcd_hosts_print_logs(&hosts, HOSTS);
		goto out;
	}
	printf("failover_load: ttl %d s, %d kills%s%s, %d shards on %d hosts of %d cores, %.0f "
	       "pods/s a producer\n", ttl, kills, leader ? ", the etcd leader killed" : "",
	       stop_host ? ", host-a stopped past its TTL" : "", ZONES, HOSTS, node_cpu, rate);
	for (int h = 0; h < HOSTS; h++) {
		prod[h].h = h;
		if (pthread_create(&prod[h].thread, NULL, producer_main, &prod[h]) != 0) {
			fprintf(stderr, "failover_load: pthread_create\n");
			for (int k = 0; k < h; k++)
				pthread_join(prod[k].thread, NULL);
			goto out;
		}
	}
	producing = true;
	etcd_hosts_sleep_ms(1000);
	double *samples = calloc((size_t)kills + 1, sizeof(*samples));
	bool failed = samples == NULL;
	for (int i = 0; i < kills && !failed; i++)
		failed = kill_and_restart(ec, i % HOSTS, i + 1, &samples[i]) != 0;
	if (!failed && leader) {
		etcd_restarted = kill_etcd_leader(ec);
		if (etcd_restarted < 0) {
			etcd_restarted = -etcd_restarted;
			failed = true;
		}
	}
	if (!failed && stop_host)
		failed = stop_host_past_ttl(ec) != 0;
	etcd_hosts_sleep_ms(1000);
	atomic_store_explicit(&stopping, true, memory_order_release); /* SL2 */
	for (int h = 0; h < HOSTS; h++)
		pthread_join(prod[h].thread, NULL);
	producing = false;
	etcd_hosts_sleep_ms(500); /* the last releases' deletes (not waited for) */
	for (int h = 0; h < HOSTS; h++) {
		int st = etcd_host_stop(&hosts, h);
		if (st != -1 && (!WIFEXITED(st) || WEXITSTATUS(st) != 0)) {
			printf("failover_load: %s stopped with status 0x%x\n", names[h], st);
			failed = true;
		}
	}

	/* The producers' logs, merged, against etcd's history. */
	size_t n = 0, submitted = 0, unsched = 0, cancelled = 0, other = 0, rolled = 0;
	size_t release_errors = 0;
	size_t died[HOSTS];
	for (int h = 0; h < HOSTS; h++) {
		n += prod[h].n_placed;
		submitted += prod[h].submitted;
		unsched += prod[h].unschedulable;
		rolled += prod[h].rolled_back;
		release_errors += prod[h].release_errors;
		cancelled += prod[h].cancelled;
		other += prod[h].other;
		/* A key with no answer: a pod in flight when its host died, or
		 * one rolled back whose commit landed after all
		 * (daemon/etcd_sync_internal.h, ETCD_SYNC_WAIT_MS). */
		died[h] = prod[h].died_in_flight + prod[h].rolled_back;
		if (prod[h].error[0] != '\0') {
			printf("failover_load: producer of %s: %s\n", names[h], prod[h].error);
			failed = true;
		}
	}
	struct sync_answer *all = malloc((n + 1) * sizeof(*all));
	struct sync_event *events = NULL;
	size_t n_events = 0, pods_at_end = 0;
	int64_t revision = 0;
	if (all == NULL) {
		free(samples);
		goto out;
	}
	n = 0;
	for (int h = 0; h < HOSTS; h++) {
		memcpy(all + n, prod[h].placed, prod[h].n_placed * sizeof(*all));
		n += prod[h].n_placed;
	}
	int hr = sync_history_read(endpoints, "/shmsched/" CLUSTER "/", &events, &n_events,
				   &revision, &pods_at_end, err, sizeof(err));
	if (hr != 0) {
		printf("failover_load: etcd's history: %s\n", err);
		free(all);
		free(samples);
		goto out;
	}
	struct sync_node nodes[ZONES];
	for (int z = 0; z < ZONES; z++) {
		nodes[z] = (struct sync_node){.cpu_milli = 1000ll * node_cpu, .mem_bytes = NODE_MEM};
		snprintf(nodes[z].name, sizeof(nodes[z].name), "n%d", z);
	}
	struct sync_input in = {.hosts = names, .n_hosts = HOSTS, .died_in_flight = died,
				.answers = all, .n_answers = n, .events = events,
				.n_events = n_events, .nodes = nodes, .n_nodes = ZONES,
				.incarnations = incs, .n_incarnations = n_incs,
				.lost_ok = lost_ok};
	struct sync_report rep;
	int cr = sync_check(&in, &rep);
	char line[1024];
	sync_report_format(&rep, line, sizeof(line));
	printf("answers: %zu pods submitted: %zu placed, %zu unschedulable (%zu of them rolled "
	       "back: the etcd commit refused or unanswered), %zu cancelled (in flight at a kill), %zu "
	       "other; %zu releases refused or unanswered\n", submitted, n, unsched, rolled,
	       cancelled, other, release_errors);
	printf("etcd: %zu events of the shards' owners and pods up to revision %lld\n", n_events,
	       (long long)revision);
	printf("check: %s\n%s", line, rep.detail);
	if (cr != 0) {
		printf("failover_load: the checker: error %d\n", cr);
		failed = true;
	} else if (rep.keys_end != pods_at_end) {
		printf("failover_load: the history replayed leaves %zu pod keys, a range at its "
		       "revision %zu: the history is not whole\n", rep.keys_end, pods_at_end);
		failed = true;
	}
	if (kills > 0) {
		qsort(samples, (size_t)kills, sizeof(*samples), cmp_double);
		double med = kills % 2 ? samples[kills / 2]
				       : (samples[kills / 2 - 1] + samples[kills / 2]) / 2;
		printf("failover under load: %d samples: min %.0f ms, median %.0f ms, max %.0f ms "
		       "(ttl %d s)\n", kills, samples[0], med, samples[kills - 1], ttl);
	}
	free(samples);
	free(all);
	free(events);
	rc = failed || cr != 0 || !rep.ok ? 1 : 0;
out:
	if (producing) {
		atomic_store_explicit(&stopping, true, memory_order_release); /* SL2 */
		for (int h = 0; h < HOSTS; h++)
			pthread_join(prod[h].thread, NULL);
	}
	for (int h = 0; h < HOSTS; h++) {
		(void)etcd_host_stop(&hosts, h);
		free(prod[h].placed);
	}
	if (etcd_restarted > 0) {
		kill(etcd_restarted, SIGTERM);
		waitpid(etcd_restarted, NULL, 0);
	}
	etcd_client_close(ec);
	return rc;
}
