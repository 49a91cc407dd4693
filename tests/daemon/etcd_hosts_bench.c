/* Pods/s per host through etcd with 1, 2 or 3 hosts (issue 40's
 * benchmark item; bench/etcd_hosts.sh runs it, figures in
 * docs/perf/2026-11-29-etcd-hosts.md).
 *
 * Run by tests/coord/etcd_cluster.sh (SHMSCHED_ETCD_ENDPOINTS, _DIR;
 * without them it prints SKIP and exits 77):
 *   etcd_hosts_bench SHMSCHEDD [--hosts N] [--durability sync|async|none]
 *                    [--pods P] [--burst B]
 * N shmschedd hosts (etcd_hosts_fixture.h, --workers 1 each, lease TTL
 * 5 s or SHMSCHED_ETCD_TTL) on one cluster file of six one-node zones
 * (the shards: 6, 3/3 or 2/2/2), each node with room for every pod sent
 * to it. One producer a
 * host (a thread of this program) streams P pods of 1m cpu to the zones
 * its host owns (round robin, as etcd's owner keys say after the split),
 * as fast as they are answered (up to the client ring's room in flight);
 * the producers start together behind a barrier.
 *
 * Printed: each host's pods/s (first submit to last answer), the rate of
 * its first B answers and of the rest (async: the window's first
 * records are answered at once, the rest at etcd's rate), its
 * transactions (the sum of its shards' lane keys' versions,
 * coord/commit_queue.h: a lane key's version counts its committed
 * batches) a second and records a transaction; the total, and the
 * etcd-bound figures: txn/s x records/txn (what etcd took) and txn/s x
 * COMMIT_MAX_BATCH (the ceiling at that transaction rate were every
 * transaction full). --durability none: one host without --etcd, the
 * same stream (the figure the async target, 1.2x, is measured against;
 * no etcd check). The machine's pauses are measured (bench/pauses.h)
 * before the streams, and a warning printed when they make the figures
 * unreliable (bench/report.c's thresholds).
 *
 * Checked (exit 1 when not): every pod answered PLACED (no other status,
 * no EVICTED notice); async: every placement committed (the hosts'
 * committed metric) within 60 s of the last answer; the hosts stop with
 * status 0; the checker (sync_check.h) over etcd's whole history: 0
 * lost, 0 unanswered keys, 0 twice, 0 unfenced, 0 overcommits (each node
 * sized to its pods plus 100: an overcommit would show). Exit 2 on bad
 * usage.
 *
 * No atomics: the producers start behind a pthread barrier, and their
 * figures are read after they are joined. */
#define _GNU_SOURCE 1

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <shmsched/client.h>

#include "bench/pauses.h"
#include "coord/coord.h"
#include "etcd_hosts_fixture.h"
#include "sync_check.h"
#include "sync_history.h"

#define HOSTS_MAX 3
#define ZONES 6
#define POD_CPU_MILLI 1
#define NODE_MEM (4ll << 30)
#define BATCH 256
#define LIMIT_S 60.0
#define CLUSTER "etcd-hosts-bench"
/* bench/report.c's report_warnings thresholds (gateway_load.c's too). */
#define PAUSES_MS 300u
#define WARN_LOST_SHARE 0.05
#define WARN_OVER_1MS_S 10.0
#define WARN_LONGEST_US 20000.0

static const char *const names[HOSTS_MAX] = {"host-a", "host-b", "host-c"};
static struct etcd_hosts hosts;
static pthread_barrier_t start_line;

struct producer {
	int h;
	pthread_t thread;
	unsigned total, burst;
	int zones[ZONES], n_zones; /* the zones its host owns */
	struct sync_answer *placed; /* [total] */
	size_t n_placed;
	unsigned answered, other;
	double t0, t_burst, t_end;  /* first submit, B-th answer, last answer */
	char error[768];
};

/* Host h's metric `name` (a line "name value"); -1 when absent or the
 * admin socket did not answer. */
static long long metric_of(int h, const char *name)
{
	char sock[300], err[256], *text = NULL;
	snprintf(sock, sizeof(sock), "%s/%s.sock.admin", hosts.dir, names[h]);
	struct shmsched_client *c;
	if (shmsched_connect(sock, &c, err, sizeof(err)) != 0)
		return -1;
	int rc = shmsched_queue(c, SHMSCHED_QUEUE_METRICS, NULL, NULL, 0, &text, err, sizeof(err));
	shmsched_disconnect(c);
	if (rc != 0)
		return -1;
	char want[160];
	snprintf(want, sizeof(want), "\n%s ", name);
	const char *at = strstr(text, want);
	long long v = at != NULL ? atoll(at + strlen(want)) : -1;
	free(text);
	return v;
}

/* The transactions committed in zone z's shard: its lane keys' versions
 * summed (coord/commit_queue.h); -1 when etcd did not answer. */
static int64_t txns_in_etcd(struct etcd_client *ec, int z)
{
	char key[128], end[128];
	int kl = snprintf(key, sizeof(key), "/shmsched/%s/shards/z%d/commit/", CLUSTER, z);
	memcpy(end, key, (size_t)kl);
	end[kl - 1] = '/' + 1;
	struct etcd_range_result r;
	if (etcd_range(ec, key, (size_t)kl, end, (size_t)kl, 0, &r) != 0)
		return -1;
	int64_t n = 0;
	for (size_t i = 0; i < r.n_kvs; i++)
		n += r.kvs[i].version;
	etcd_range_result_free(&r);
	return n;
}

static int64_t txns_of(struct etcd_client *ec, const struct producer *p)
{
	int64_t n = 0;
	for (int i = 0; i < p->n_zones; i++) {
		int64_t t = txns_in_etcd(ec, p->zones[i]);
		if (t < 0)
			return -1;
		n += t;
	}
	return n;
}

/* The stream of host p->h: 0, or -1 with p->error set. */
static int stream(struct producer *p, struct shmsched_client *c)
{
	uint32_t tid[ZONES];
	char err[256];
	for (int i = 0; i < p->n_zones; i++) {
		char json[512];
		snprintf(json, sizeof(json),
			 "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"b%d\"},\"spec\":{"
			 "\"nodeSelector\":{\"topology.kubernetes.io/zone\":\"z%d\"},"
			 "\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":"
			 "{\"cpu\":\"%dm\"}}}]}}", p->zones[i], p->zones[i], POD_CPU_MILLI);
		if (shmsched_register_template(c, json, strlen(json), &tid[i], err,
					       sizeof(err)) != 0) {
			snprintf(p->error, sizeof(p->error), "template of zone z%d: %s",
				 p->zones[i], err);
			pthread_barrier_wait(&start_line); /* the others start */
			return -1;
		}
	}
	char node_names[64][SYNC_NAME_MAX] = {{0}};
	struct shmsched_pod batch[BATCH];
	struct shmsched_result res[BATCH];
	uint64_t cookie = 0;
	unsigned sent = 0;
	pthread_barrier_wait(&start_line); /* the producers start together */
	p->t0 = etcd_hosts_now_s();
	while (p->answered < p->total) {
		if (etcd_hosts_now_s() - p->t0 > 600.0) {
			snprintf(p->error, sizeof(p->error), "%u of %u pods answered in 600 s",
				 p->answered, p->total);
			return -1;
		}
		if (sent < p->total) {
			unsigned want = p->total - sent < BATCH ? p->total - sent : BATCH;
			for (unsigned i = 0; i < want; i++)
				batch[i] = (struct shmsched_pod){
					.cookie = cookie + i + 1,
					.template_id = tid[(sent + i) % (unsigned)p->n_zones],
					.flags = SHMSCHED_NO_WAIT};
			int k = shmsched_submit(c, batch, want);
			if (k < 0) {
				snprintf(p->error, sizeof(p->error), "submit: %d", k);
				return -1;
			}
			cookie += (unsigned)k;
			sent += (unsigned)k;
		}
		int k = shmsched_poll(c, res, BATCH);
		if (k < 0) {
			snprintf(p->error, sizeof(p->error), "poll: %d", k);
			return -1;
		}
		for (int i = 0; i < k; i++) {
			const struct shmsched_result *r = &res[i];
			if (r->status != SHMSCHED_PLACED) {
				if (p->other++ == 0)
					snprintf(p->error, sizeof(p->error),
						 "pod %" PRIu64 ": status %u: %s", r->cookie,
						 r->status, r->message);
				if (r->status == SHMSCHED_EVICTED)
					continue; /* a notice, not an answer */
				p->answered++;
				continue;
			}
			if (r->node_id >= 64 || p->n_placed >= p->total) {
				snprintf(p->error, sizeof(p->error), "node id %u, %zu placed of %u",
					 r->node_id, p->n_placed, p->total);
				return -1;
			}
			char *node = node_names[r->node_id];
			if (node[0] == '\0' && shmsched_node_name(c, r->node_id, node,
								  SYNC_NAME_MAX, err,
								  sizeof(err)) != 0) {
				snprintf(p->error, sizeof(p->error), "node %u's name: %s",
					 r->node_id, err);
				return -1;
			}
			p->placed[p->n_placed++] = (struct sync_answer){
				.host = p->h, .incarnation = 1, .placement_id = r->placement_id,
				.cpu_milli = POD_CPU_MILLI, .placed_ns = r->complete_ns};
			snprintf(p->placed[p->n_placed - 1].node, SYNC_NAME_MAX, "%s", node);
			p->answered++;
		}
		if (p->t_burst == 0 && p->answered >= p->burst)
			p->t_burst = etcd_hosts_now_s();
		if (k == 0) {
			struct timespec ts = {0, 200000};
			nanosleep(&ts, NULL);
		}
	}
	p->t_end = etcd_hosts_now_s();
	return p->other > 0 ? -1 : 0;
}

static void *producer_main(void *arg)
{
	struct producer *p = arg;
	char sock[300], err[256];
	snprintf(sock, sizeof(sock), "%s/%s.sock", hosts.dir, names[p->h]);
	struct shmsched_client *c;
	if (shmsched_connect(sock, &c, err, sizeof(err)) != 0) {
		snprintf(p->error, sizeof(p->error), "connect %s: %s", sock, err);
		pthread_barrier_wait(&start_line);
		return NULL;
	}
	stream(p, c);
	shmsched_disconnect(c);
	return NULL;
}

static int usage(const char *why)
{
	fprintf(stderr, "etcd_hosts_bench: %s\nusage: etcd_hosts_bench SHMSCHEDD [--hosts 1-3] "
		"[--durability sync|async|none] [--pods PER_HOST] [--burst B]\n", why);
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
	int n = 1;
	unsigned pods = 20000, burst = 8192;
	const char *durability = "sync";
	for (int i = 2; i < argc; i++) {
		char *end = NULL;
		if (strcmp(argv[i], "--hosts") == 0 && i + 1 < argc) {
			long v = strtol(argv[++i], &end, 10);
			if (*end != '\0' || v < 1 || v > HOSTS_MAX)
				return usage("--hosts: expected 1 to 3");
			n = (int)v;
		} else if (strcmp(argv[i], "--pods") == 0 && i + 1 < argc) {
			long v = strtol(argv[++i], &end, 10);
			if (*end != '\0' || v < 1 || v > 1000000)
				return usage("--pods: expected 1 to 1000000 pods a host");
			pods = (unsigned)v;
		} else if (strcmp(argv[i], "--burst") == 0 && i + 1 < argc) {
			long v = strtol(argv[++i], &end, 10);
			if (*end != '\0' || v < 1 || v > 1000000)
				return usage("--burst: expected 1 to 1000000 answers");
			burst = (unsigned)v;
		} else if (strcmp(argv[i], "--durability") == 0 && i + 1 < argc) {
			durability = argv[++i];
			if (strcmp(durability, "sync") != 0 && strcmp(durability, "async") != 0 &&
			    strcmp(durability, "none") != 0)
				return usage("--durability: expected sync, async or none");
		} else {
			return usage(argv[i]);
		}
	}
	if (burst > pods)
		burst = pods;
	bool async = strcmp(durability, "async") == 0;
	bool none = strcmp(durability, "none") == 0;
	if (none && n != 1)
		return usage("--durability none: one host (--hosts 1)");
	static char dir[256];
	snprintf(dir, sizeof(dir), "%s/bench", edir);
	mkdir(dir, 0700);
	const char *ttl = getenv("SHMSCHED_ETCD_TTL");
	hosts = (struct etcd_hosts){.shmschedd = argv[1], .endpoints = endpoints,
				    .cluster_name = CLUSTER, .dir = dir, .names = names,
				    .n = n, .zones = ZONES, .ttl_s = ttl != NULL ? atoi(ttl) : 5,
				    .durability = none ? NULL : durability, .no_etcd = none};
	/* A zone takes a host's pods / its zones: each node sized to that
	 * plus 100 pods (cpu and room), so an overcommit would show. */
	unsigned long long sent_to_zone = ((unsigned long long)pods * (unsigned)n + ZONES - 1) / ZONES;
	unsigned per_zone = (unsigned)sent_to_zone + 100;
	char cpu[32], err[512];
	snprintf(cpu, sizeof(cpu), "%um", per_zone * POD_CPU_MILLI);
	if (etcd_hosts_write_cluster(&hosts, cpu, "4Gi", per_zone, err, sizeof(err)) != 0) {
		fprintf(stderr, "etcd_hosts_bench: %s\n", err);
		return 1;
	}
	struct etcd_client *ec;
	struct etcd_client_options o = {.timeout_ms = 20000};
	if (etcd_client_open(&ec, endpoints, &o, err, sizeof(err)) != 0) {
		fprintf(stderr, "etcd_hosts_bench: %s\n", err);
		return 1;
	}
	int rc = 1, own[ZONES];
	double took;
	struct producer prod[HOSTS_MAX] = {{0}};
	struct sync_incarnation incs[HOSTS_MAX];
	int started = 0;
	for (int h = 0; h < n; h++) {
		char key[96];
		snprintf(key, sizeof(key), "/shmsched/%s/", CLUSTER);
		struct etcd_range_result r;
		if (etcd_range(ec, key, strlen(key), NULL, 0, 1, &r) != 0) {
			printf("etcd_hosts_bench: etcd's revision: %s\n", etcd_client_error(ec));
			goto out;
		}
		incs[h] = (struct sync_incarnation){h, 1, r.revision};
		etcd_range_result_free(&r);
		if (etcd_host_start(&hosts, h, err, sizeof(err)) != 0) {
			printf("etcd_hosts_bench: start of %s: %s\n", names[h], err);
			goto out;
		}
		started = h + 1;
	}
	for (int z = 0; z < ZONES && none; z++)
		own[z] = 0; /* without etcd the host places on every node */
	if (!none && etcd_hosts_await_balanced(&hosts, ec, (1u << n) - 1, own, LIMIT_S, &took,
					       err, sizeof(err)) != 0) {
		printf("etcd_hosts_bench: at start: %s\n", err);
		etcd_hosts_print_logs(&hosts, n);
		goto out;
	}
	/* The gate opens a shard once its committer is open and its count
	 * read (daemon/etcd_sync.c): every owned shard's committed metric
	 * exists by then; wait for the shards_owned metric to agree. */
	for (int h = 0; h < n; h++) {
		prod[h] = (struct producer){.h = h, .total = pods, .burst = burst};
		for (int z = 0; z < ZONES; z++)
			if (own[z] == h)
				prod[h].zones[prod[h].n_zones++] = z;
		double t0 = etcd_hosts_now_s();
		while (!none && metric_of(h, "shmsched_etcd_shards_owned") != prod[h].n_zones &&
		       etcd_hosts_now_s() - t0 < LIMIT_S)
			etcd_hosts_sleep_ms(20);
		prod[h].placed = calloc(pods, sizeof(*prod[h].placed));
		if (prod[h].placed == NULL)
			goto out;
	}
	struct pauses pz;
	bool have_pauses = pauses_measure(PAUSES_MS, &pz) == 0;
	int64_t txn0[HOSTS_MAX];
	for (int h = 0; h < n; h++)
		txn0[h] = txns_of(ec, &prod[h]);
	printf("etcd_hosts_bench: %d host%s, --etcd-durability %s, %u pods a host (1m cpu each, "
	       "--workers 1), %d shards (%d a host)\n", n, n > 1 ? "s" : "", durability, pods, ZONES,
	       ZONES / n);
	fflush(stdout);
	pthread_barrier_init(&start_line, NULL, (unsigned)n);
	for (int h = 0; h < n; h++) {
		if (pthread_create(&prod[h].thread, NULL, producer_main, &prod[h]) != 0) {
			fprintf(stderr, "etcd_hosts_bench: pthread_create\n");
			/* The others wait at the barrier for good: the hosts
			 * stopped, then out with them. */
			for (int k = 0; k < started; k++)
				etcd_host_stop(&hosts, k);
			exit(1);
		}
	}
	for (int h = 0; h < n; h++)
		pthread_join(prod[h].thread, NULL);
	pthread_barrier_destroy(&start_line);
	bool failed = false;
	for (int h = 0; h < n; h++)
		if (prod[h].error[0] != '\0') {
			printf("etcd_hosts_bench: %s's producer: %s (%u answers not placed)\n",
			       names[h], prod[h].error, prod[h].other);
			if (strstr(prod[h].error, "lease") != NULL)
				printf("etcd_hosts_bench: %s's lease lapsed mid-stream (TTL %d s; its "
				       "log below says how): under a stream that saturates etcd on "
				       "a loaded machine its keep-alive can come later than that; a "
				       "longer TTL (SHMSCHED_ETCD_TTL, bench/etcd_hosts.sh --ttl) "
				       "rides it out\n", names[h], hosts.ttl_s);
			failed = true;
		}
	if (failed) {
		etcd_hosts_print_logs(&hosts, n);
		goto out;
	}
	/* Async: every placement committed (the hosts' counts). */
	double lag = 0, t_last = 0;
	for (int h = 0; h < n; h++)
		if (prod[h].t_end > t_last)
			t_last = prod[h].t_end;
	for (int h = 0; h < n && !none; h++) {
		while (metric_of(h, "shmsched_etcd_placements_total{result=\"committed\"}") <
			       (long long)pods && etcd_hosts_now_s() - t_last < LIMIT_S)
			etcd_hosts_sleep_ms(10);
		long long c = metric_of(h, "shmsched_etcd_placements_total{result=\"committed\"}");
		if (c < (long long)pods) {
			printf("etcd_hosts_bench: %s: %lld of %u placements committed %.0f s after "
			       "the last answer\n", names[h], c, pods, LIMIT_S);
			failed = true;
		}
	}
	lag = etcd_hosts_now_s() - t_last;
	/* The figures. */
	double first = 1e300, last = 0, sum_rate = 0, txn_total = 0;
	for (int h = 0; h < n; h++) {
		struct producer *p = &prod[h];
		int64_t t1 = txns_of(ec, p);
		double span = p->t_end - p->t0, b = p->t_burst - p->t0;
		double txns = t1 >= 0 && txn0[h] >= 0 ? (double)(t1 - txn0[h]) : -1;
		char zl[64] = "";
		for (int i = 0, at = 0; i < p->n_zones; i++)
			at += snprintf(zl + at, sizeof(zl) - (size_t)at, "%sz%d", i ? "," : "",
				       p->zones[i]);
		char etcd[160] = "";
		if (!none)
			snprintf(etcd, sizeof(etcd), "; etcd: %.0f transactions, %.0f a second, "
				 "%.1f records a transaction", txns, txns / span,
				 txns > 0 ? pods / txns : 0.0);
		printf("%s (shards %s): %u pods in %.2f s: %.0f pods/s; the first %u at %.0f "
		       "pods/s, the rest at %.0f pods/s%s\n", names[h], zl, pods, span,
		       pods / span, p->burst, p->burst / b,
		       pods > p->burst ? (pods - p->burst) / (p->t_end - p->t_burst) : 0.0, etcd);
		if (p->t0 < first)
			first = p->t0;
		if (p->t_end > last)
			last = p->t_end;
		sum_rate += pods / span;
		txn_total += txns;
	}
	double span = last - first;
	printf("total: %d host%s, %s: %u pods in %.2f s: %.0f pods/s (%.0f a host; the hosts' "
	       "own rates summed %.0f)\n", n, n > 1 ? "s" : "", durability, pods * (unsigned)n,
	       span, pods * n / span, pods / span, sum_rate);
	if (!none)
		printf("etcd-bound: %.0f transactions/s x %.1f records a transaction = %.0f pods/s "
		       "taken by etcd%s; at %d records a transaction (every one full) %.0f pods/s\n",
		       txn_total / span, txn_total > 0 ? pods * n / txn_total : 0.0,
		       txn_total > 0 ? pods * n / span : 0.0,
		       async ? " (over the answers' span: commits go on after it)"
			     : " (sync: every answer waits for its commit)",
		       COMMIT_MAX_BATCH, txn_total / span * COMMIT_MAX_BATCH);
	if (async)
		printf("async: every placement committed %.2f s after the last answer\n", lag);
	if (have_pauses) {
		printf("pauses before the streams (%u ms, %u cores): over 1 ms %.1f/s per core, "
		       "longest %.1f ms, %.2f %% of the time lost\n", PAUSES_MS, pz.cores,
		       pz.over_1ms_s, pz.longest_us / 1000, 100 * pz.lost_share);
		if (pz.lost_share > WARN_LOST_SHARE || pz.over_1ms_s > WARN_OVER_1MS_S ||
		    pz.longest_us > WARN_LONGEST_US)
			printf("WARNING: the machine paused this process beyond bench/report.c's "
			       "thresholds (5 %% of the time, 10/s over 1 ms, 20 ms): these figures "
			       "are unreliable\n");
	}
	fflush(stdout);
	for (int h = 0; h < started; h++) {
		int st = etcd_host_stop(&hosts, h);
		if (st != -1 && (!WIFEXITED(st) || WEXITSTATUS(st) != 0)) {
			printf("etcd_hosts_bench: %s stopped with status 0x%x\n", names[h], st);
			failed = true;
		}
	}
	started = 0;
	if (none) {
		rc = failed ? 1 : 0;
		goto out;
	}
	/* The answers against etcd's history (sync_check.h). */
	size_t total = 0;
	for (int h = 0; h < n; h++)
		total += prod[h].n_placed;
	struct sync_answer *all = malloc((total + 1) * sizeof(*all));
	if (all == NULL)
		goto out;
	total = 0;
	for (int h = 0; h < n; h++) {
		memcpy(all + total, prod[h].placed, prod[h].n_placed * sizeof(*all));
		total += prod[h].n_placed;
	}
	struct sync_event *events = NULL;
	size_t n_events = 0, pods_at_end = 0;
	int64_t revision = 0;
	if (sync_history_read(endpoints, "/shmsched/" CLUSTER "/", &events, &n_events, &revision,
			      &pods_at_end, err, sizeof(err)) != 0) {
		printf("etcd_hosts_bench: etcd's history: %s\n", err);
		free(all);
		goto out;
	}
	struct sync_node nodes[ZONES];
	for (int z = 0; z < ZONES; z++) {
		nodes[z] = (struct sync_node){.cpu_milli = (int64_t)per_zone * POD_CPU_MILLI,
					      .mem_bytes = NODE_MEM};
		snprintf(nodes[z].name, sizeof(nodes[z].name), "n%d", z);
	}
	size_t died[HOSTS_MAX] = {0};
	struct sync_input in = {.hosts = names, .n_hosts = n, .died_in_flight = died,
				.answers = all, .n_answers = total, .events = events,
				.n_events = n_events, .nodes = nodes, .n_nodes = ZONES,
				.incarnations = incs, .n_incarnations = (size_t)n};
	struct sync_report rep;
	int cr = sync_check(&in, &rep);
	char line[1024];
	sync_report_format(&rep, line, sizeof(line));
	printf("check (etcd's history, %zu events to revision %lld): %s\n%s", n_events,
	       (long long)revision, line, rep.detail);
	if (cr != 0 || !rep.ok || rep.keys_end != pods_at_end ||
	    rep.keys_end != (size_t)pods * (size_t)n || rep.placed != (size_t)pods * (size_t)n) {
		printf("etcd_hosts_bench: the check failed (error %d; %zu keys at the end, a range "
		       "says %zu, %u pods answered placed)\n", cr, rep.keys_end, pods_at_end,
		       pods * (unsigned)n);
		failed = true;
	}
	free(all);
	free(events);
	rc = failed ? 1 : 0;
out:
	for (int h = 0; h < started; h++)
		etcd_host_stop(&hosts, h);
	for (int h = 0; h < HOSTS_MAX; h++)
		free(prod[h].placed);
	etcd_client_close(ec);
	return rc;
}
