/* shmsched-gateway-load: pods per second and latency through the HTTP
 * gateway (directly or behind nginx), and through the shared-memory path
 * beside it, for bench/gateway.sh.
 *
 *   shmsched-gateway-load --url HOST:PORT|unix:/PATH --mode single|batch
 *                         [--connections C] [--max-connections M]
 *                         [--batch B] [--seconds S] [--rate R] [--prefix P]
 *   shmsched-gateway-load --direct SOCKET [--pods N] [--prefix P]
 *
 * HTTP: C threads, each with one keep-alive connection. Closed loop (no
 * --rate): each sends its next request when the last is answered, for S
 * seconds: the most the path takes. Open loop (--rate R, requests per
 * second over all connections): request k is due at start + k/R, and
 * the connections share that one schedule: each, when free, takes the
 * next request and waits for its due time. Latency runs from the due
 * time, so a server that falls behind shows as latency, not as a slower
 * client. A request taken after its due time found all C connections
 * busy: it queued behind the load generator's own connections. Those are
 * counted ("queued"), and each one opens one more connection (a thread
 * of its own, which takes the schedule's next request), up to
 * --max-connections M in all (default 256): so the load generator has
 * enough connections for the latency it meets, and what still queued is
 * only the requests that found them all busy before the new one was up.
 * Past 1 % of requests queued a warning says the latency is partly ours.
 * single: one Pod per request; batch: B pods as JSON Lines per request.
 * Every pod has its own name ("P-<thread>-<n>": the gateway refuses a name
 * placed already); every answer line is counted (placed or not).
 *
 * Direct: one producer through libshmsched-client, the same pod spec
 * registered once, N pods submitted and polled in bursts (as the example
 * producer): the shared-memory path the gateway itself sits on.
 *
 * Before an HTTP run, PAUSES_MS of the machine's own pauses
 * (bench/pauses.h): past the thresholds bench/report.c uses, a warning
 * says the run's latencies are the machine's, not the gateway's.
 *
 * Prints one line, and with --json one JSON object; the JSON also has the
 * load generator's own CPU time over the run (getrusage: every thread,
 * user and system), so that bench/gateway.sh PROFILE=cpu can count its
 * share of a request.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "base/base.h"
#include "bench/http_client.h"
#include "bench/pauses.h"
#include "shmsched/client.h"
#include "shmsched/version.h"

#define POD_FMT "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s-%u-%" PRIu64 "\"," \
	"\"namespace\":\"bench\"},\"spec\":{\"containers\":[{\"name\":\"c\"," \
	"\"resources\":{\"requests\":{\"cpu\":\"10m\",\"memory\":\"16Mi\"}}}]}}\n"
/* The machine's pauses, measured before an HTTP run, and when they make it
 * unreliable (the thresholds of bench/report.c's report_warnings). */
#define PAUSES_MS 300u
#define WARN_LOST_SHARE 0.05
#define WARN_OVER_1MS_S 10.0
#define WARN_LONGEST_US 20000.0
/* Open loop: warn when more than this share of requests queued. */
#define WARN_QUEUED_SHARE 0.01
#define TEMPLATE "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"direct\"," \
	"\"namespace\":\"bench\"},\"spec\":{\"containers\":[{\"name\":\"c\"," \
	"\"resources\":{\"requests\":{\"cpu\":\"10m\",\"memory\":\"16Mi\"}}}]}}"

struct options {
	const char *url;
	const char *direct;
	unsigned port;
	const char *unix_path; /* --url unix:/PATH; NULL: the port */
	bool batch;
	unsigned connections;
	unsigned batch_pods;
	double seconds;
	double rate;
	uint64_t pods;
	unsigned window;
	const char *prefix;
	bool json;
	uint64_t start_ns, end_ns;  /* HTTP: the run's window */
	uint64_t next_due;          /* open loop: the next request to take
				     * (atomic, relaxed: a counter) */
	/* Open loop: the workers (room for max_connections), and how many
	 * have been started (under grow_lock: a worker that queued starts
	 * one more; run_http joins them all). */
	unsigned max_connections;
	struct worker *workers;
	unsigned started;
	pthread_mutex_t grow_lock;
};

struct worker {
	struct options *o;
	unsigned index;
	pthread_t thread;
	uint64_t *lat_ns;
	size_t n_lat, cap_lat;
	uint64_t requests, pods, placed, errors, late, reconnects, queued;
	char first_error[256];
};

static void add_latency(struct worker *w, uint64_t ns)
{
	if (w->n_lat == w->cap_lat) {
		size_t cap = w->cap_lat ? w->cap_lat * 2 : 4096;
		uint64_t *p = realloc(w->lat_ns, cap * sizeof(*p));
		if (p == NULL)
			return;
		w->lat_ns = p;
		w->cap_lat = cap;
	}
	w->lat_ns[w->n_lat++] = ns;
}

static void sleep_until(uint64_t t_ns)
{
	struct timespec ts = {(time_t)(t_ns / 1000000000u), (long)(t_ns % 1000000000u)};
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

static void *http_worker(void *arg);

/* One more connection and its thread, if there is room: a request queued
 * because every connection was busy. */
static void grow(struct options *o)
{
	pthread_mutex_lock(&o->grow_lock);
	if (o->started < o->max_connections) {
		struct worker *w = &o->workers[o->started];
		*w = (struct worker){.o = o, .index = o->started};
		if (pthread_create(&w->thread, NULL, http_worker, w) == 0)
			o->started++;
		else
			o->max_connections = o->started; /* no more threads */
	}
	pthread_mutex_unlock(&o->grow_lock);
}

static int connect_to(const struct options *o)
{
	return o->unix_path != NULL ? http_connect_unix(o->unix_path)
				    : http_connect(o->port);
}

static void *http_worker(void *arg)
{
	struct worker *w = arg;
	struct options *o = w->o;
	int fd = connect_to(o);
	if (fd < 0) {
		snprintf(w->first_error, sizeof(w->first_error), "connect: %s",
			 strerror(-fd));
		w->errors++;
		return NULL;
	}
	unsigned per = o->batch ? o->batch_pods : 1;
	struct json_buf body = {0};
	uint64_t seq = 0, used = 0, start = o->start_ns, end = o->end_ns;
	/* Open loop: one schedule for all connections, k/R after the start. */
	double gap_ns = o->rate > 0 ? 1e9 / o->rate : 0;
	for (;;) {
		uint64_t due = now_ns();
		if (o->rate > 0) {
			uint64_t k = __atomic_fetch_add(&o->next_due, 1, __ATOMIC_RELAXED);
			uint64_t at = start + (uint64_t)(gap_ns * (double)k);
			if (at < end && at < due) {
				w->queued++; /* no connection was free at its time */
				grow(o);
			}
			due = at;
		}
		if (due >= end)
			break;
		if (o->rate > 0)
			sleep_until(due);
		json_buf_reset(&body);
		for (unsigned p = 0; p < per; p++)
			json_buf_printf(&body, POD_FMT, o->prefix, w->index, seq++);
		struct http_answer a;
		int rc = http_exchange(fd, "POST", "/v1/placements",
				       "Content-Type: application/x-ndjson\r\n",
				       body.data, body.len, &a, 30000);
		if ((rc == -ECONNRESET || rc == -EPIPE) && used > 0 && a.status == 0) {
			/* The server closed a kept-alive connection before this
			 * request (nginx's keepalive_requests): as HTTP clients
			 * do, once more on a new one. Counted, not hidden. */
			http_answer_free(&a);
			close(fd);
			fd = connect_to(o);
			used = 0;
			w->reconnects++;
			if (fd < 0)
				break;
			rc = http_exchange(fd, "POST", "/v1/placements",
					   "Content-Type: application/x-ndjson\r\n",
					   body.data, body.len, &a, 30000);
		}
		used++;
		uint64_t done = now_ns();
		if (rc < 0 || a.status != 200) {
			if (w->errors++ == 0)
				snprintf(w->first_error, sizeof(w->first_error),
					 "%s: %d %.160s", rc < 0 ? strerror(-rc) : "status",
					 a.status, a.body.data ? a.body.data : "");
			http_answer_free(&a);
			if (rc < 0) {
				close(fd);
				fd = connect_to(o);
				used = 0;
				if (fd < 0)
					break;
			}
			continue;
		}
		w->requests++;
		w->pods += http_count_lines(&a);
		for (const char *p = a.body.data; (p = strstr(p, "\"node\":\"")) != NULL; p++)
			w->placed++;
		if (o->rate > 0 && done - due > 1000000)
			w->late++;
		add_latency(w, done - due);
		http_answer_free(&a);
	}
	json_buf_free(&body);
	if (fd >= 0)
		close(fd);
	return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

static double pct(const uint64_t *v, size_t n, double q)
{
	if (n == 0)
		return 0;
	size_t i = (size_t)(q * (double)(n - 1) + 0.5);
	return (double)v[i] / 1e3; /* microseconds */
}

/* This process's CPU seconds so far, user and system (every thread). */
static void cpu_seconds(double *user, double *sys)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	*user = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6;
	*sys = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
}

static int run_http(struct options *o)
{
	if (o->rate <= 0 || o->max_connections < o->connections)
		o->max_connections = o->connections; /* closed loop: no growth */
	struct worker *w = calloc(o->max_connections, sizeof(*w));
	if (w == NULL)
		return 1;
	o->workers = w;
	pthread_mutex_init(&o->grow_lock, NULL);
	/* The machine's own pauses first, while nothing else of ours runs. */
	struct pauses pz;
	bool have_pauses = pauses_measure(PAUSES_MS, &pz) == 0;
	double user0, sys0, user1, sys1;
	cpu_seconds(&user0, &sys0);
	uint64_t t0 = now_ns();
	o->start_ns = t0;
	o->end_ns = t0 + (uint64_t)(o->seconds * 1e9);
	o->next_due = 0;
	pthread_mutex_lock(&o->grow_lock);
	for (unsigned i = 0; i < o->connections; i++) {
		w[i] = (struct worker){.o = o, .index = i};
		if (pthread_create(&w[i].thread, NULL, http_worker, &w[i]) != 0) {
			fprintf(stderr, "shmsched-gateway-load: cannot start thread %u "
				"of %u\n", i + 1, o->connections);
			exit(1);
		}
		o->started = i + 1;
	}
	pthread_mutex_unlock(&o->grow_lock);
	struct worker sum = {0};
	size_t n = 0;
	/* Every worker started, those that grow() added too: once all below
	 * `started` are joined, none is left to add one. */
	unsigned started;
	for (unsigned i = 0;; i++) {
		pthread_mutex_lock(&o->grow_lock);
		started = o->started;
		pthread_mutex_unlock(&o->grow_lock);
		if (i >= started)
			break;
		pthread_join(w[i].thread, NULL);
		n += w[i].n_lat;
	}
	pthread_mutex_destroy(&o->grow_lock);
	double wall = (double)(now_ns() - t0) * 1e-9;
	cpu_seconds(&user1, &sys1);
	uint64_t *all = malloc((n ? n : 1) * sizeof(*all));
	size_t k = 0;
	for (unsigned i = 0; i < started; i++) {
		memcpy(all + k, w[i].lat_ns, w[i].n_lat * sizeof(*all));
		k += w[i].n_lat;
		sum.requests += w[i].requests;
		sum.pods += w[i].pods;
		sum.placed += w[i].placed;
		sum.errors += w[i].errors;
		sum.late += w[i].late;
		sum.reconnects += w[i].reconnects;
		sum.queued += w[i].queued;
		if (sum.first_error[0] == '\0' && w[i].first_error[0] != '\0')
			memcpy(sum.first_error, w[i].first_error, sizeof(sum.first_error));
		free(w[i].lat_ns);
	}
	qsort(all, n, sizeof(*all), cmp_u64);
	const char *mode = o->batch ? "batch" : "single";
	double rps = (double)sum.requests / wall, pps = (double)sum.pods / wall;
	if (o->json)
		printf("{\"mode\":\"%s\",\"url\":\"%s\",\"connections\":%u,"
		       "\"connections_at_end\":%u,\"batch\":%u,"
		       "\"rate\":%.0f,\"seconds\":%.3f,\"requests\":%" PRIu64
		       ",\"pods\":%" PRIu64 ",\"placed\":%" PRIu64 ",\"errors\":%" PRIu64
		       ",\"requests_per_sec\":%.1f,\"pods_per_sec\":%.1f,\"p50_us\":%.1f,"
		       "\"p90_us\":%.1f,\"p99_us\":%.1f,\"p999_us\":%.1f,\"late\":%" PRIu64
		       ",\"reconnects\":%" PRIu64 ",\"queued\":%" PRIu64 ",\"cpu_user_s\":"
		       "%.3f,\"cpu_system_s\":%.3f,\"pauses\":"
		       "{\"measured\":%s,\"over_1ms_s\":%.2f,\"longest_us\":%.0f,"
		       "\"lost_share\":%.4f}}\n", mode, o->url, o->connections, started,
		       o->batch ? o->batch_pods : 1,
		       o->rate, wall, sum.requests, sum.pods, sum.placed, sum.errors, rps,
		       pps, pct(all, n, 0.5), pct(all, n, 0.9), pct(all, n, 0.99),
		       pct(all, n, 0.999), sum.late, sum.reconnects, sum.queued,
		       user1 - user0, sys1 - sys0, have_pauses ? "true" : "false", have_pauses ? pz.over_1ms_s : 0,
		       have_pauses ? pz.longest_us : 0, have_pauses ? pz.lost_share : 0);
	else
		printf("%-6s %s: %u connections, %.1f s: %" PRIu64 " requests "
		       "(%.0f/s), %" PRIu64 " pods (%.0f pods/s, %" PRIu64 " placed), "
		       "%" PRIu64 " errors, %" PRIu64 " reconnects; latency per request%s: "
		       "p50 %.1f us, p90 %.1f us, p99 %.1f us, p99.9 %.1f us\n", mode,
		       o->url, o->connections, wall,
		       sum.requests, rps, sum.pods, pps, sum.placed, sum.errors,
		       sum.reconnects,
		       o->rate > 0 ? " (open loop, from the due time)" : "",
		       pct(all, n, 0.5), pct(all, n, 0.9), pct(all, n, 0.99),
		       pct(all, n, 0.999));
	if (o->batch && !o->json)
		printf("       (batches of %u pods)\n", o->batch_pods);
	if (o->rate > 0 && !o->json)
		printf("       open loop at %.0f requests/s: %" PRIu64 " answered over "
		       "1 ms after their due time, %" PRIu64 " queued for a free "
		       "connection; %u connections at the end (at most %u)\n", o->rate,
		       sum.late, sum.queued, started, o->max_connections);
	uint64_t tried = sum.requests + sum.errors;
	if (o->rate > 0 && tried > 0 &&
	    (double)sum.queued > WARN_QUEUED_SHARE * (double)tried)
		fprintf(stderr, "WARNING: %" PRIu64 " of %" PRIu64 " requests (%.1f %%) "
			"queued: every one of the connections (%u at the start, %u at "
			"the end, at most %u) was busy at their due time, so their "
			"latency is partly the load generator's (threshold 1 %%): use "
			"more --connections (or --max-connections)\n", sum.queued, tried,
			100.0 * (double)sum.queued / (double)tried, o->connections,
			started, o->max_connections);
	if (have_pauses && (pz.lost_share > WARN_LOST_SHARE ||
			    pz.over_1ms_s > WARN_OVER_1MS_S || pz.longest_us > WARN_LONGEST_US))
		fprintf(stderr, "WARNING: this machine paused a spinning thread before "
			"the run (%u ms, %u cores): %.2f %% of the time lost, %.1f pauses "
			"over 1 ms a second per core, the longest %.0f us (thresholds: "
			"5 %%, 10/s, 20000 us): the latencies of this run are the "
			"machine's, not the gateway's (rerun on a quiet machine)\n",
			PAUSES_MS, pz.cores, 100 * pz.lost_share, pz.over_1ms_s, pz.longest_us);
	if (sum.errors > 0)
		fprintf(stderr, "shmsched-gateway-load: %" PRIu64 " errors; the first: "
			"%s\n", sum.errors, sum.first_error);
	free(all);
	free(w);
	return sum.errors > 0 ? 1 : 0;
}

static int run_direct(const struct options *o)
{
	char err[512];
	struct shmsched_client *c;
	if (shmsched_connect_named(o->direct, o->prefix, &c, err, sizeof(err)) < 0) {
		fprintf(stderr, "shmsched-gateway-load: %s\n", err);
		return 1;
	}
	uint32_t tid;
	if (shmsched_register_template(c, TEMPLATE, strlen(TEMPLATE), &tid, err,
				       sizeof(err)) < 0) {
		fprintf(stderr, "shmsched-gateway-load: %s\n", err);
		shmsched_disconnect(c);
		return 1;
	}
	uint64_t *lat = malloc(o->pods * sizeof(*lat));
	static struct shmsched_result res[256];
	struct shmsched_pod burst[64];
	uint64_t submitted = 0, answered = 0, placed = 0, t0 = now_ns();
	int rc = 0;
	while (lat != NULL && answered < o->pods) {
		unsigned want = 0;
		/* --window: at most that many pods in flight (default: the
		 * region's capacity). */
		while (want < 64 && submitted + want < o->pods &&
		       (o->window == 0 || submitted + want - answered < o->window)) {
			burst[want] = (struct shmsched_pod){.cookie = submitted + want,
							    .template_id = tid};
			want++;
		}
		int taken = want ? shmsched_submit(c, burst, want) : 0;
		int got = shmsched_poll(c, res, 256);
		if (taken < 0 || got < 0) {
			rc = 1;
			break;
		}
		submitted += (unsigned)taken;
		for (int i = 0; i < got; i++) {
			lat[answered + (uint64_t)i] = res[i].complete_ns - res[i].submit_ns;
			placed += res[i].status == SHMSCHED_PLACED;
		}
		answered += (unsigned)got;
		if (taken == 0 && got == 0)
			sched_yield();
	}
	double wall = (double)(now_ns() - t0) * 1e-9;
	qsort(lat, answered, sizeof(*lat), cmp_u64);
	if (o->json)
		printf("{\"mode\":\"direct\",\"socket\":\"%s\",\"pods\":%" PRIu64
		       ",\"placed\":%" PRIu64 ",\"seconds\":%.3f,\"pods_per_sec\":%.1f,"
		       "\"p50_us\":%.1f,\"p99_us\":%.1f}\n", o->direct, answered, placed,
		       wall, (double)answered / wall, pct(lat, answered, 0.5),
		       pct(lat, answered, 0.99));
	else
		printf("direct %s: %" PRIu64 " pods in %.2f s (%.0f pods/s, %" PRIu64
		       " placed); submit to answer: p50 %.1f us, p99 %.1f us\n",
		       o->direct, answered, wall, (double)answered / wall, placed,
		       pct(lat, answered, 0.5), pct(lat, answered, 0.99));
	free(lat);
	shmsched_disconnect(c);
	return rc;
}

#define TRY "Try 'shmsched-gateway-load --help' for more information.\n"

/* A whole number in lo..hi, or a message naming the option. */
static int parse_whole(const char *opt, const char *s, unsigned long long lo,
		       unsigned long long hi, unsigned long long *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || s[0] == '-' || v < lo ||
	    v > hi) {
		fprintf(stderr, "shmsched-gateway-load: %s: \"%s\": expected a whole "
			"number in %llu..%llu\n", opt, s, lo, hi);
		return -1;
	}
	*out = v;
	return 0;
}

/* A number above 0 and at most hi, or a message naming the option. */
static int parse_positive(const char *opt, const char *s, double hi, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno != 0 || end == s || *end != '\0' || !(v > 0) || !(v <= hi)) {
		fprintf(stderr, "shmsched-gateway-load: %s: \"%s\": expected a number "
			"above 0, at most %g\n", opt, s, hi);
		return -1;
	}
	*out = v;
	return 0;
}

static void usage(FILE *to)
{
	fprintf(to,
		"usage: shmsched-gateway-load --url HOST:PORT|unix:/PATH --mode single|batch\n"
		"                             [--connections C] [--max-connections M]\n"
		"                             [--batch B] [--seconds S] [--rate R]\n"
		"                             [--prefix P] [--json]\n"
		"       shmsched-gateway-load --direct SOCKET [--pods N] [--window W]\n"
		"                             [--prefix P] [--json]\n"
		"\n"
		"Pods per second and latency through shmsched-gateway (HOST must be\n"
		"127.0.0.1: loopback only; or unix:/PATH, the gateway's Unix socket)\n"
		"or through the shared-memory path. See\n"
		"bench/gateway.sh, which runs both behind a real nginx.\n"
		"  --mode single    one Pod per request; batch: B pods (JSON Lines)\n"
		"  --connections C  keep-alive connections, one thread each (default 8)\n"
		"  --max-connections M  open loop: a request that found every\n"
		"                   connection busy opens one more, up to M in all\n"
		"                   (default 256, at least C)\n"
		"  --batch B        pods per batch request (default 1000)\n"
		"  --seconds S      how long (default 5)\n"
		"  --rate R         requests/s over all connections, open loop\n"
		"                   (default: closed loop, as fast as answered); a\n"
		"                   request that found every connection busy at its\n"
		"                   due time is counted as queued (warned past 1 %%)\n"
		"  --prefix P       pod names P-<thread>-<n> (default load); also the\n"
		"                   producer name with --direct\n"
		"  --pods N         --direct: pods (default 200000)\n"
		"  --window W       --direct: at most W pods in flight (default: as many\n"
		"                   as the region holds)\n"
		"  -h, --help, --version\n");
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"url", required_argument, NULL, 'u'},
		{"direct", required_argument, NULL, 'd'},
		{"mode", required_argument, NULL, 'm'},
		{"connections", required_argument, NULL, 'c'},
		{"max-connections", required_argument, NULL, 'M'},
		{"batch", required_argument, NULL, 'b'},
		{"seconds", required_argument, NULL, 's'},
		{"rate", required_argument, NULL, 'r'},
		{"pods", required_argument, NULL, 'n'},
		{"window", required_argument, NULL, 'w'},
		{"prefix", required_argument, NULL, 'p'},
		{"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0},
	};
	struct options o = {.connections = 8, .max_connections = 256,
			    .batch_pods = 1000, .seconds = 5, .pods = 200000,
			    .prefix = "load"};
	unsigned long long v;
	int c;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'u':
			o.url = optarg;
			break;
		case 'd':
			o.direct = optarg;
			break;
		case 'm':
			if (strcmp(optarg, "single") != 0 && strcmp(optarg, "batch") != 0) {
				fprintf(stderr, "shmsched-gateway-load: --mode: \"%s\": "
					"expected single or batch\n", optarg);
				return 2;
			}
			o.batch = strcmp(optarg, "batch") == 0;
			break;
		case 'c':
			if (parse_whole("--connections", optarg, 1, 1024, &v) < 0)
				return 2;
			o.connections = (unsigned)v;
			break;
		case 'M':
			if (parse_whole("--max-connections", optarg, 1, 1024, &v) < 0)
				return 2;
			o.max_connections = (unsigned)v;
			break;
		case 'b':
			if (parse_whole("--batch", optarg, 1, 1000000, &v) < 0)
				return 2;
			o.batch_pods = (unsigned)v;
			break;
		case 's':
			if (parse_positive("--seconds", optarg, 86400, &o.seconds) < 0)
				return 2;
			break;
		case 'r':
			if (parse_positive("--rate", optarg, 1e9, &o.rate) < 0)
				return 2;
			break;
		case 'n':
			if (parse_whole("--pods", optarg, 1, UINT64_C(1) << 40, &v) < 0)
				return 2;
			o.pods = v;
			break;
		case 'w':
			if (parse_whole("--window", optarg, 1, UINT32_MAX, &v) < 0)
				return 2;
			o.window = (unsigned)v;
			break;
		case 'p':
			o.prefix = optarg;
			break;
		case 'j':
			o.json = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("shmsched-gateway-load %s\n", SHMSCHED_VERSION_STRING);
			return 0;
		default: /* getopt_long has said what is wrong */
			fprintf(stderr, TRY);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "shmsched-gateway-load: unexpected argument \"%s\"\n"
			TRY, argv[optind]);
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	if (o.direct != NULL)
		return run_direct(&o);
	if (o.url != NULL && strncmp(o.url, "unix:/", 6) == 0) {
		o.unix_path = o.url + 5;
		return run_http(&o);
	}
	const char *colon = o.url ? strrchr(o.url, ':') : NULL;
	if (colon == NULL || strncmp(o.url, "127.0.0.1:", 10) != 0) {
		fprintf(stderr, "shmsched-gateway-load: %s%s%s\n" TRY,
			o.url ? "--url: \"" : "--url HOST:PORT or --direct SOCKET is "
			"needed", o.url ? o.url : "", o.url ? "\": expected "
			"127.0.0.1:PORT (loopback only) or unix:/PATH" : "");
		return 2;
	}
	o.port = (unsigned)strtoul(colon + 1, NULL, 10);
	return run_http(&o);
}
