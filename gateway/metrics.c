/* GET /metrics: the Prometheus text format (version 0.0.4).
 *
 * Names: kube-scheduler's where the meaning is the same (its
 * pkg/scheduler/metrics/metrics.go: names, labels, buckets), shmsched_* for
 * the rest. Sources:
 *   - the daemon's own counters, read through the observer (O4 figures of
 *     the moment: each counter loaded on its own), when the gateway may
 *     read the state region: scheduler_schedule_attempts_total over every
 *     producer, the workers' shmsched_worker_* counters, nodes and
 *     placements; the scheduling queue's pending pods and preemptions,
 *     summed over the workers (one series each: bounded whatever the
 *     number of workers);
 *   - the dispatcher's single-writer counters (gateway_internal.h): the
 *     latency histograms, measured on this gateway's pods only, the
 *     connections, templates and the daemon's comings and goings;
 *   - the HTTP side's tallies: requests by route and code.
 * Rendering takes no lock the dispatcher waits on (only the observer's
 * read lock) and allocates only the output.
 */
#include "gateway/gateway_internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define PROFILE "default-scheduler"

/* The requests counter's routes and codes (gateway_internal.h): tallied
 * by the HTTP side (gw_http_count), rendered here. */
const char *const gw_route_names[GW_ROUTES] = {
	"placements", "placement", "nodes", "node", "health", "version", "metrics",
	"extender", "admin", "other", "eviction"};
const unsigned gw_codes[GW_CODES] = {200, 201, 202, 400, 401, 403, 404, 405, 408,
				     409, 413, 415, 429, 500, 501, 503, 0};

void gw_http_count(struct gw_http_stats *s, enum gw_route route, unsigned code)
{
	unsigned k = 0;
	while (k < GW_CODES - 1 && gw_codes[k] != code)
		k++;
	/* Relaxed: a tally, read as a figure of the moment. */
	__atomic_fetch_add(&s->requests[route][k], 1, __ATOMIC_RELAXED);
}

static const char *const result_names[GW_RESULTS] = {"scheduled", "unschedulable",
						     "error"};

static void head(struct json_buf *b, const char *name, const char *type,
		 const char *help)
{
	json_buf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* One histogram's series: cumulative buckets, +Inf, sum, count. `labels`
 * is "" or `a="b",` (with the trailing comma). */
static void histogram(struct json_buf *b, const char *name, const char *labels,
		      const uint64_t *buckets, const double *bounds, unsigned n,
		      const uint64_t *count, const uint64_t *sum_ns)
{
	uint64_t cum = 0;
	for (unsigned k = 0; k < n; k++) {
		cum += stat_read(&buckets[k]);
		json_buf_printf(b, "%s_bucket{%sle=\"%g\"} %" PRIu64 "\n", name, labels,
				bounds[k], cum);
	}
	/* The count is read after the buckets: the dispatcher bumps a bucket
	 * before the count, so +Inf is never below the last bucket. */
	uint64_t c = stat_read(count);
	if (c < cum)
		c = cum;
	json_buf_printf(b, "%s_bucket{%sle=\"+Inf\"} %" PRIu64 "\n", name, labels, c);
	size_t ll = strlen(labels);
	if (ll > 0) {
		json_buf_printf(b, "%s_sum{%.*s} %.9f\n", name, (int)(ll - 1), labels,
				(double)stat_read(sum_ns) * 1e-9);
		json_buf_printf(b, "%s_count{%.*s} %" PRIu64 "\n", name, (int)(ll - 1),
				labels, c);
	} else {
		json_buf_printf(b, "%s_sum %.9f\n", name, (double)stat_read(sum_ns) * 1e-9);
		json_buf_printf(b, "%s_count %" PRIu64 "\n", name, c);
	}
}

static void gauge(struct json_buf *b, const char *name, const char *help,
		  uint64_t v)
{
	head(b, name, "gauge", help);
	json_buf_printf(b, "%s %" PRIu64 "\n", name, v);
}

static void counter(struct json_buf *b, const char *name, const char *help,
		    uint64_t v)
{
	head(b, name, "counter", help);
	json_buf_printf(b, "%s %" PRIu64 "\n", name, v);
}

/* The daemon's queue, summed over its workers. */
struct daemon_queue {
	uint64_t active, backoff, unschedulable, gated;
	uint64_t preemption_attempts, preemption_victims;
};

/* The daemon's side, through the observer. Returns whether it was read. */
static bool daemon_metrics(struct gw_dispatch *d, struct json_buf *b,
			   uint64_t attempts[GW_RESULTS], struct daemon_queue *q)
{
	struct shmsched_observer *obs = gw_observer_get(d);
	bool ok = false;
	struct shmsched_observe_summary sum;
	struct shmsched_observe_worker *w = NULL;
	unsigned nw = 0;
	if (obs != NULL && shmsched_observe_summary(obs, &sum, NULL, 0) == 0 &&
	    shmsched_observe_workers(obs, NULL, 0, &nw) == 0) {
		w = calloc(nw ? nw : 1, sizeof(*w));
		ok = w != NULL && shmsched_observe_workers(obs, w, nw, &nw) == 0;
	}
	gw_observer_put(d);
	if (!ok) {
		free(w);
		return false;
	}
	for (unsigned k = 0; k < nw; k++) {
		attempts[GW_RESULT_SCHEDULED] += w[k].placed;
		attempts[GW_RESULT_UNSCHEDULABLE] += w[k].unschedulable;
		attempts[GW_RESULT_ERROR] += w[k].rejected;
		q->active += w[k].pending_active;
		q->backoff += w[k].pending_backoff;
		q->unschedulable += w[k].pending_unschedulable;
		q->gated += w[k].pending_gated;
		q->preemption_attempts += w[k].preemption_attempts;
		q->preemption_victims += w[k].preemption_victims;
	}
	static const struct {
		const char *name, *help;
		size_t off;
	} per_worker[] = {
#define W(f, h) {"shmsched_worker_" #f "_total", h, \
		 __builtin_offsetof(struct shmsched_observe_worker, f)}
		W(pods, "Pods a daemon worker took from producers' rings."),
		W(placed, "Pods a daemon worker placed."),
		W(unschedulable, "Pods a daemon worker answered unschedulable."),
		W(rejected, "Pods a daemon worker refused before placing (a bad slot)."),
		W(cancelled, "Pods a daemon worker answered cancelled (shutdown)."),
		W(conflicts, "Commits that lost a race to another worker and were placed again."),
		W(gave_up, "Pods that lost the commit race too often and were answered unschedulable."),
		W(bad_handles, "Ring entries that named no slot."),
		W(completion_overflows, "Answers that found a completion ring full."),
#undef W
	};
	for (size_t m = 0; m < sizeof(per_worker) / sizeof(per_worker[0]); m++) {
		head(b, per_worker[m].name, "counter", per_worker[m].help);
		for (unsigned k = 0; k < nw; k++) {
			uint64_t v;
			memcpy(&v, (const char *)&w[k] + per_worker[m].off, sizeof(v));
			json_buf_printf(b, "%s{worker=\"%u\"} %" PRIu64 "\n",
					per_worker[m].name, w[k].index, v);
		}
	}
	free(w);
	gauge(b, "shmsched_daemon_running", "1 when a daemon holds the state region.",
	      sum.daemon_running ? 1 : 0);
	counter(b, "shmsched_daemon_starts_total",
		"Daemons that have attached the state region, the first included.",
		sum.starts);
	gauge(b, "shmsched_nodes", "Nodes in the current cluster snapshot.", sum.nodes);
	gauge(b, "shmsched_snapshot_generation",
	      "The current snapshot's generation (one per batch of node events).",
	      sum.generation);
	gauge(b, "shmsched_placements", "Live placements the daemon records, bound "
	      "pods included.", sum.placements);
	gauge(b, "shmsched_placements_capacity",
	      "Live placements the daemon can record (--max-placements).",
	      sum.max_placements);
	gauge(b, "shmsched_producers", "Producer identities the daemon knows.",
	      sum.producers);
	return true;
}

void gw_metrics_render(struct gw_dispatch *d, const struct gw_http_stats *h,
		       struct json_buf *b)
{
	const struct gw_dispatch_stats *st = gw_dispatch_stats(d);
	uint64_t attempts[GW_RESULTS] = {0};
	struct daemon_queue q = {0};
	struct json_buf daemon = {0};
	bool have_daemon = daemon_metrics(d, &daemon, attempts, &q);
	if (!have_daemon)
		for (int r = 0; r < GW_RESULTS; r++)
			attempts[r] = stat_read(&st->pods[r]);

	head(b, "scheduler_schedule_attempts_total", "counter",
	     have_daemon
	     ? "Number of attempts to schedule pods, by the result: the daemon's, "
	       "over every producer."
	     : "Number of attempts to schedule pods, by the result: this gateway's "
	       "pods only (the daemon's state region cannot be read).");
	for (int r = 0; r < GW_RESULTS; r++)
		json_buf_printf(b, "scheduler_schedule_attempts_total{profile=\""
				PROFILE "\",result=\"%s\"} %" PRIu64 "\n",
				result_names[r], attempts[r]);

	head(b, "scheduler_scheduling_attempt_duration_seconds", "histogram",
	     "Scheduling attempt latency in seconds (scheduling algorithm + "
	     "binding): this gateway's pods, from submission on the ring to the "
	     "daemon's answer.");
	for (int r = 0; r < GW_RESULTS; r++) {
		char labels[96];
		snprintf(labels, sizeof(labels), "profile=\"" PROFILE "\",result=\"%s\",",
			 result_names[r]);
		histogram(b, "scheduler_scheduling_attempt_duration_seconds", labels,
			  st->attempt_buckets[r], gw_attempt_bounds, GW_ATTEMPT_BUCKETS,
			  &st->attempt_count[r], &st->attempt_sum_ns[r]);
	}
	head(b, "scheduler_pod_scheduling_sli_duration_seconds", "histogram",
	     "E2e latency for a pod being scheduled, from the time the pod enters "
	     "the scheduling queue: this gateway's placed pods, from their request's "
	     "arrival to their answer.");
	histogram(b, "scheduler_pod_scheduling_sli_duration_seconds", "attempts=\"1\",",
		  st->sli_buckets, gw_sli_bounds, GW_SLI_BUCKETS, &st->sli_count,
		  &st->sli_sum_ns);
	head(b, "scheduler_pending_pods", "gauge",
	     have_daemon
	     ? "Number of pending pods, by the queue type: the daemon's queues "
	       "over every producer; 'active' also counts this gateway's pods "
	       "accepted and not yet handed to the daemon."
	     : "Number of pending pods, by the queue type: 'active' is this "
	       "gateway's pods accepted and not yet answered (the daemon's "
	       "state region cannot be read: its queues are not known).");
	uint64_t pending[4] = {
		have_daemon ? q.active + stat_read(&st->waiting)
			    : stat_read(&st->in_flight) + stat_read(&st->waiting),
		q.backoff, q.gated, q.unschedulable};
	static const char *const queues[] = {"active", "backoff", "gated",
					     "unschedulable"};
	for (int k = 0; k < 4; k++)
		json_buf_printf(b, "scheduler_pending_pods{queue=\"%s\"} %" PRIu64 "\n",
				queues[k], pending[k]);
	if (have_daemon) {
		counter(b, "scheduler_preemption_attempts_total",
			"Total preemption attempts in the cluster till now: the "
			"daemon's, over every producer.", q.preemption_attempts);
		counter(b, "shmsched_preemption_victims_total",
			"Pods evicted by preemption, summed (kube-scheduler's "
			"scheduler_preemption_victims is a histogram per attempt).",
			q.preemption_victims);
	}

	if (have_daemon)
		json_buf_put(b, daemon.data, daemon.len);
	json_buf_free(&daemon);

	head(b, "shmsched_gateway_requests_total", "counter",
	     "HTTP requests answered, by route and code (code 0: the client went "
	     "away first).");
	for (int r = 0; r < GW_ROUTES; r++)
		for (int c = 0; c < GW_CODES; c++) {
			uint64_t v = __atomic_load_n(&h->requests[r][c], __ATOMIC_RELAXED);
			if (v > 0)
				json_buf_printf(b, "shmsched_gateway_requests_total{route=\"%s\","
						"code=\"%u\"} %" PRIu64 "\n", gw_route_names[r],
						gw_codes[c], v);
		}
	counter(b, "shmsched_gateway_request_body_bytes_total",
		"Bytes of request bodies received.",
		__atomic_load_n(&h->bytes_in, __ATOMIC_RELAXED));
	head(b, "shmsched_gateway_requests_refused_total", "counter",
	     "Requests cut or refused for their size or pace.");
	json_buf_printf(b, "shmsched_gateway_requests_refused_total{reason=\"too_large\"} %"
			PRIu64 "\n", __atomic_load_n(&h->too_large, __ATOMIC_RELAXED));
	json_buf_printf(b, "shmsched_gateway_requests_refused_total{reason=\"timed_out\"} %"
			PRIu64 "\n", __atomic_load_n(&h->timed_out, __ATOMIC_RELAXED));
	json_buf_printf(b, "shmsched_gateway_requests_refused_total{reason=\"unauthorized\"} %"
			PRIu64 "\n", __atomic_load_n(&h->unauthorized, __ATOMIC_RELAXED));
	json_buf_printf(b, "shmsched_gateway_requests_refused_total{reason=\"over_budget\"} %"
			PRIu64 "\n", __atomic_load_n(&h->over_budget, __ATOMIC_RELAXED));
	json_buf_printf(b, "shmsched_gateway_requests_refused_total{reason=\"forbidden\"} %"
			PRIu64 "\n", __atomic_load_n(&h->forbidden, __ATOMIC_RELAXED));
	json_buf_printf(b, "shmsched_gateway_requests_refused_total{reason=\"header_timeout\"} %"
			PRIu64 "\n", __atomic_load_n(&h->header_timeouts, __ATOMIC_RELAXED));
	counter(b, "shmsched_gateway_http_resumes_total",
		"HTTP connections resumed by the dispatcher (each a turn of an "
		"HTTP thread; a request of a few pods takes one).",
		__atomic_load_n(&h->resumes, __ATOMIC_RELAXED));
	counter(b, "shmsched_gateway_clients_gone_total",
		"Requests whose client went away before the answer ended.",
		__atomic_load_n(&h->abandoned, __ATOMIC_RELAXED));

	head(b, "shmsched_gateway_pods_total", "counter",
	     "This gateway's pods answered, by result (cancelled: not answered by "
	     "the daemon, which was away or the gateway stopping, or cancelled "
	     "while they waited).");
	for (int r = 0; r < GW_RESULTS; r++)
		json_buf_printf(b, "shmsched_gateway_pods_total{result=\"%s\"} %" PRIu64
				"\n", result_names[r], stat_read(&st->pods[r]));
	json_buf_printf(b, "shmsched_gateway_pods_total{result=\"cancelled\"} %" PRIu64
			"\n", stat_read(&st->cancelled));
	head(b, "shmsched_gateway_pod_latency_seconds", "histogram",
	     "This gateway's pods, from submission on the ring to the daemon's "
	     "answer, in finer buckets than kube-scheduler's.");
	histogram(b, "shmsched_gateway_pod_latency_seconds", "", st->fine_buckets,
		  gw_fine_bounds, GW_FINE_BUCKETS, &st->fine_count, &st->fine_sum_ns);

	gauge(b, "shmsched_gateway_daemon_connected",
	      "1 while the gateway is connected to the daemon.",
	      stat_read(&st->connected));
	counter(b, "shmsched_gateway_daemon_losses_total",
		"Times the gateway lost the daemon.", stat_read(&st->daemon_losses));
	counter(b, "shmsched_gateway_pods_resubmitted_total",
		"Pods submitted again after the daemon came back without them.",
		stat_read(&st->resubmitted));
	counter(b, "shmsched_gateway_pods_recovered_total",
		"Pods whose answer was lost with the daemon, found placed in its "
		"listing when it came back.", stat_read(&st->recovered));
	counter(b, "shmsched_gateway_pods_evicted_total",
		"This gateway's placements preempted by pods of higher priority "
		"(EVICTED notices): their records are gone.",
		stat_read(&st->evicted));
	counter(b, "shmsched_gateway_cancels_total",
		"Waiting pods this gateway asked the daemon to cancel: their client "
		"went away, or the gateway was stopping.", stat_read(&st->cancels));
	counter(b, "shmsched_gateway_stray_answers_total",
		"Answers from the daemon for no pod in flight.",
		stat_read(&st->stray_answers));
	gauge(b, "shmsched_ring_in_flight",
	      "Pods in flight on the gateway's producer rings.",
	      stat_read(&st->in_flight));
	gauge(b, "shmsched_ring_slots",
	      "Slots of the gateway's producer regions (the most in flight).",
	      stat_read(&st->capacity));
	gauge(b, "shmsched_gateway_pods_waiting",
	      "Pods accepted and not yet submitted (the rings were full).",
	      stat_read(&st->waiting));
	gauge(b, "shmsched_gateway_requests_in_progress",
	      "Placement requests being answered.", stat_read(&st->jobs));
	gauge(b, "shmsched_gateway_connections",
	      "Producer connections to the daemon (one active, the rest draining).",
	      stat_read(&st->connections));
	counter(b, "shmsched_gateway_connections_opened_total",
		"Producer connections opened.", stat_read(&st->connections_opened));
	counter(b, "shmsched_gateway_connections_retired_total",
		"Connections drained and closed, their templates evicted.",
		stat_read(&st->connections_retired));
	gauge(b, "shmsched_gateway_templates", "Pod templates registered now.",
	      stat_read(&st->templates));
	counter(b, "shmsched_gateway_templates_registered_total",
		"Pod templates registered with the daemon.",
		stat_read(&st->templates_registered));
	counter(b, "shmsched_gateway_templates_refused_total",
		"Pod specs the daemon refused.", stat_read(&st->templates_refused));
	gauge(b, "shmsched_gateway_placements",
	      "Placements this gateway's identity holds, as it knows them.",
	      stat_read(&st->placements));
	counter(b, "shmsched_gateway_releases_total", "Placements released.",
		stat_read(&st->releases));
}
