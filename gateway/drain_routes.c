/* The drain and eviction routes' daemon side (issue 38): POST and GET
 * /v1/nodes/{name}/drain on the admin listener, and the admission part of
 * POST /api/v1/namespaces/{ns}/pods/{name}/eviction.
 *
 * A drain runs in a thread of its own, as `shmsched node drain` does in
 * its process (cli/node.c, kubectl drain's loop: kubernetes/kubectl
 * pkg/drain): its own admin connection to the daemon, the node cordoned
 * (not in a dry run), then waves of OP_DRAIN until nothing is left, a
 * bound pod stops it (without force), a pod in more than one budget
 * stops it, its timeout passes, or the gateway stops. While a budget
 * blocks, it asks again every DRAIN_RETRY_NS (kubectl waits after each
 * 429 likewise). The HTTP side answers POST at once (202, the drain's
 * record) and GET with the record as it stands: its phase, counts, ETA
 * (base/eta.h, at the evictions per second so far) and report (each
 * wave's lines when it evicted or what blocks changed).
 * DELETE cancels a running drain: the thread ends at its next look (at
 * once when it waits on a budget, else after its wave), Cancelled, the
 * node left cordoned as kubectl leaves it when interrupted; DELETE waits
 * up to CANCEL_WAIT_NS for that and answers 200 with the record. A POST
 * for a node the daemon does not know is 404 at once (one dry wave of a
 * placement id no daemon hands out, which checks the name).
 *
 * Bounds: one drain per node at a time (a second POST: 409), at most
 * DRAINS_RUNNING running at once (429), DRAINS_KEPT records (a finished
 * one is replaced, oldest first), a report of at most REPORT_MAX bytes
 * (then a line saying how much was left out).
 *
 * Threads: the table and every record are under `lock`; a drain thread
 * takes it to publish progress and to read `stopping`, and waits on
 * `cond` (CLOCK_MONOTONIC) between waves so that gw_drains_stop() wakes
 * it. A finished thread is joined by whoever replaces its record, or by
 * gw_drains_stop().
 *
 * The Eviction API's daemon call (gw_evict_run) is one OP_DRAIN wave with
 * OP_DRAIN_PLACEMENT | OP_DRAIN_FORCE for the one placement, on a
 * connection of its own (`evict`, a gw_admin_conn: admin_conn.c): evicted,
 * blocked by a budget, or in more than one are the API's 201, 429 and 500
 * (kubernetes/kubernetes pkg/registry/core/pod/storage/eviction.go).
 * FORCE: the Eviction API evicts any pod, managed or not; kubectl's
 * unmanaged-pod refusal is drain's.
 */
#include "gateway/gateway_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gateway/evict_decode.h"

#define DRAINS_RUNNING 8u
#define DRAINS_KEPT 64u
#define REPORT_MAX (64u << 10)
#define DRAIN_RETRY_NS UINT64_C(1000000000)

enum drain_phase { PH_RUNNING, PH_SUCCEEDED, PH_FAILED, PH_TIMED_OUT,
		   PH_CANCELLED };
static const char *const phase_names[] = {"Running", "Succeeded", "Failed",
					  "TimedOut", "Cancelled"};

struct drain {
	bool used;
	bool joinable;            /* a thread was started, not yet joined */
	struct gw_drains *m;
	pthread_t thread;
	uint64_t id;
	char node[GW_NAME_MAX + 1];
	struct gw_drain_req req;
	/* Progress, under m->lock. */
	enum drain_phase phase;
	bool cancel;              /* DELETE asked it to stop */
	uint64_t waves, evicted;
	struct shmsched_drain_result last;
	uint64_t started_ns, finished_ns;
	char message[768];
	char *report;             /* REPORT_MAX + 1 bytes */
	size_t report_len;
	uint64_t report_cut;      /* bytes left out */
};

struct gw_drains {
	char admin_socket[4096];
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool stopping;
	uint64_t next_id;
	unsigned running;
	struct drain d[DRAINS_KEPT];
	struct gw_admin_conn evict; /* the Eviction API's */
};

int gw_drains_create(const char *admin_socket, struct gw_drains **out)
{
	struct gw_drains *m = calloc(1, sizeof(*m));
	if (m == NULL)
		return -ENOMEM;
	snprintf(m->admin_socket, sizeof(m->admin_socket), "%s", admin_socket);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&m->cond, &ca);
	pthread_condattr_destroy(&ca);
	pthread_mutex_init(&m->lock, NULL);
	gw_admin_conn_init(&m->evict, admin_socket, "shmsched-gateway-evict");
	m->next_id = 1;
	*out = m;
	return 0;
}

void gw_drains_stop(struct gw_drains *m)
{
	if (m == NULL)
		return;
	pthread_mutex_lock(&m->lock);
	m->stopping = true;
	pthread_cond_broadcast(&m->cond);
	pthread_mutex_unlock(&m->lock);
	/* No new thread starts once stopping is set (gw_drain_start), so
	 * the joinable flags read here are final. */
	for (unsigned i = 0; i < DRAINS_KEPT; i++) {
		if (m->d[i].joinable) {
			pthread_join(m->d[i].thread, NULL);
			m->d[i].joinable = false;
		}
	}
}

void gw_drains_free(struct gw_drains *m)
{
	if (m == NULL)
		return;
	gw_drains_stop(m);
	for (unsigned i = 0; i < DRAINS_KEPT; i++)
		free(m->d[i].report);
	gw_admin_conn_fini(&m->evict);
	pthread_mutex_destroy(&m->lock);
	pthread_cond_destroy(&m->cond);
	free(m);
}

/* Appends to the report, under m->lock; past REPORT_MAX, counts what is
 * left out. */
static void report_add(struct drain *d, const char *s, size_t len)
{
	if (d->report_cut > 0 || d->report_len + len > REPORT_MAX) {
		d->report_cut += len;
		return;
	}
	memcpy(d->report + d->report_len, s, len);
	d->report_len += len;
	d->report[d->report_len] = '\0';
}

static void finish(struct drain *d, enum drain_phase ph, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void finish(struct drain *d, enum drain_phase ph, const char *fmt, ...)
{
	struct gw_drains *m = d->m;
	pthread_mutex_lock(&m->lock);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(d->message, sizeof(d->message), fmt, ap);
	va_end(ap);
	d->phase = ph;
	d->finished_ns = now_ns();
	m->running--;
	pthread_cond_broadcast(&m->cond); /* a DELETE waits for the end */
	pthread_mutex_unlock(&m->lock);
}

/* Sleeps `ns` or until the gateway stops or a DELETE cancels the drain;
 * whether either did. */
static bool nap(struct drain *d, uint64_t ns)
{
	struct gw_drains *m = d->m;
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	uint64_t at = (uint64_t)ts.tv_sec * UINT64_C(1000000000) +
		      (uint64_t)ts.tv_nsec + ns;
	ts.tv_sec = (time_t)(at / UINT64_C(1000000000));
	ts.tv_nsec = (long)(at % UINT64_C(1000000000));
	pthread_mutex_lock(&m->lock);
	while (!m->stopping && !d->cancel &&
	       pthread_cond_timedwait(&m->cond, &m->lock, &ts) != ETIMEDOUT)
		;
	bool stop = m->stopping || d->cancel;
	pthread_mutex_unlock(&m->lock);
	return stop;
}

static void *drain_thread(void *arg)
{
	struct drain *d = arg;
	struct gw_drains *m = d->m;
	struct shmsched_client *c = NULL;
	char err[1024], *text = NULL, *last = NULL;
	const char *nodes[1] = {d->node};
	unsigned flags = (d->req.dry_run ? SHMSCHED_DRAIN_DRY_RUN : 0) |
			 (d->req.force ? SHMSCHED_DRAIN_FORCE : 0) |
			 (d->req.surge ? SHMSCHED_DRAIN_SURGE : 0);
	if (shmsched_connect_named(m->admin_socket, "shmsched-gateway-drain", &c,
				   err, sizeof(err)) < 0) {
		finish(d, PH_FAILED, "the daemon's admin socket: %s", err);
		return NULL;
	}
	if (!d->req.dry_run &&
	    shmsched_node_event(c, SHMSCHED_NODE_CORDON, d->node, strlen(d->node),
				err, sizeof(err)) < 0) {
		finish(d, PH_FAILED, "cordon %s: %s", d->node, gw_daemon_says(err));
		goto cleanup;
	}
	uint64_t deadline = d->req.timeout_s == 0 ? 0 : d->started_ns +
		(uint64_t)d->req.timeout_s * UINT64_C(1000000000);
	for (;;) {
		struct shmsched_drain_result r;
		free(text);
		text = NULL;
		if (shmsched_drain(c, nodes, 1, d->req.selector, flags, &r, &text, err,
				   sizeof(err)) < 0) {
			finish(d, PH_FAILED, "%s", gw_daemon_says(err));
			goto cleanup;
		}
		unsigned left = r.blocked + r.errors + r.unmanaged;
		bool changed = last == NULL || strcmp(last, text) != 0;
		pthread_mutex_lock(&m->lock);
		d->waves++;
		d->evicted += r.evicted;
		d->last = r;
		if (r.evicted > 0 || changed)
			report_add(d, text, strlen(text));
		bool cancel = d->cancel;
		pthread_mutex_unlock(&m->lock);
		free(last);
		last = r.evicted > 0 ? NULL : strdup(text);
		if (cancel && left > 0) {
			finish(d, PH_CANCELLED, "cancelled (DELETE): %" PRIu64
			       " evicted, %u left; the node stays cordoned",
			       d->evicted, left);
			goto cleanup;
		}
		if (d->req.dry_run) {
			finish(d, r.errors + r.unmanaged > 0 ? PH_FAILED : PH_SUCCEEDED,
			       "dry run: %u would be evicted now, %u left", r.evicted,
			       left);
			goto cleanup;
		}
		if (r.unmanaged > 0) {
			finish(d, PH_FAILED, "%u bound pods no producer manages; "
			       "nothing evicted (force evicts them)", r.unmanaged);
			goto cleanup;
		}
		if (r.blocked == 0) {
			if (r.errors > 0)
				finish(d, PH_FAILED, "%u pods cannot be evicted (see the "
				       "report)", r.errors);
			else
				finish(d, PH_SUCCEEDED, "node/%s drained: %" PRIu64
				       " evicted", d->node, d->evicted);
			goto cleanup;
		}
		if (r.evicted > 0)
			continue; /* a wave moved: ask again now */
		uint64_t now = now_ns(), wait = DRAIN_RETRY_NS;
		if (deadline != 0) {
			if (now >= deadline) {
				finish(d, PH_TIMED_OUT, "timed out after %" PRIu32 "s: "
				       "%" PRIu64 " evicted, %u left (see the report)",
				       d->req.timeout_s, d->evicted, left);
				goto cleanup;
			}
			if (deadline - now < wait)
				wait = deadline - now;
		}
		if (nap(d, wait)) {
			pthread_mutex_lock(&m->lock);
			bool by_delete = d->cancel && !m->stopping;
			pthread_mutex_unlock(&m->lock);
			finish(d, PH_CANCELLED, "%s: %" PRIu64 " evicted, %u left%s",
			       by_delete ? "cancelled (DELETE)" : "the gateway stopped",
			       d->evicted, left, d->req.dry_run ? "" :
			       "; the node stays cordoned");
			goto cleanup;
		}
	}
cleanup:
	free(text);
	free(last);
	shmsched_disconnect(c);
	return NULL;
}

/* The record's JSON, under m->lock. */
static void drain_json(const struct drain *d, struct json_buf *b)
{
	uint64_t end = d->phase == PH_RUNNING ? now_ns() : d->finished_ns;
	json_buf_puts(b, "{\"kind\":\"NodeDrain\",\"apiVersion\":\"shmsched.io/v1alpha1\","
		      "\"node\":");
	json_buf_string(b, d->node);
	json_buf_printf(b, ",\"id\":%" PRIu64 ",\"phase\":\"%s\",\"dryRun\":%s,"
			"\"force\":%s,\"surge\":%s,\"timeoutSeconds\":%" PRIu32
			",\"podSelector\":",
			d->id, phase_names[d->phase], d->req.dry_run ? "true" : "false",
			d->req.force ? "true" : "false", d->req.surge ? "true" : "false",
			d->req.timeout_s);
	json_buf_string(b, d->req.selector);
	json_buf_printf(b, ",\"waves\":%" PRIu64 ",\"evicted\":%" PRIu64
			",\"blocked\":%u,\"errors\":%u,\"unmanaged\":%u,"
			"\"elapsedSeconds\":%.3f,\"message\":", d->waves, d->evicted,
			d->last.blocked, d->last.errors, d->last.unmanaged,
			(double)(end - d->started_ns) / 1e9);
	json_buf_string(b, d->message);
	/* The ETA (issue 38): at the evictions per second seen so far, while
	 * running; 0 once drained; null before the first wave, in a dry run
	 * (nothing is evicted), while stalled (the last wave evicted nothing
	 * and a budget or an approval holds every pod left), or when the
	 * drain ended with pods left. */
	unsigned left = d->last.blocked + d->last.errors + d->last.unmanaged;
	bool stalled = d->waves > 0 && d->last.evicted == 0 && d->last.blocked > 0;
	struct eta e = eta_estimate(d->evicted, end - d->started_ns, left, stalled);
	if (d->waves == 0 || d->req.dry_run || e.kind != ETA_KNOWN ||
	    (d->phase != PH_RUNNING && left > 0))
		json_buf_puts(b, ",\"etaSeconds\":null");
	else
		json_buf_printf(b, ",\"etaSeconds\":%.3f", e.seconds);
	json_buf_printf(b, ",\"stalled\":%s", stalled ? "true" : "false");
	json_buf_puts(b, ",\"report\":");
	json_buf_string_n(b, d->report, d->report_len);
	json_buf_printf(b, ",\"reportBytesLeftOut\":%" PRIu64 "}\n", d->report_cut);
}


static struct drain *find_node(struct gw_drains *m, const char *node)
{
	struct drain *best = NULL;
	for (unsigned i = 0; i < DRAINS_KEPT; i++)
		if (m->d[i].used && strcmp(m->d[i].node, node) == 0 &&
		    (best == NULL || m->d[i].id > best->id))
			best = &m->d[i];
	return best;
}

void gw_drain_start(struct gw_drains *m, const char *node, const char *body,
		    size_t len, struct gw_http_reply *rep)
{
	*rep = (struct gw_http_reply){0};
	struct gw_drain_req req;
	char err[512];
	if (gw_drain_decode(body, len, &req, err, sizeof(err)) < 0) {
		gw_reply_statusf(rep, 400, "BadRequest", "%s", err);
		return;
	}
	/* An unknown node: 404 now, as kube-apiserver answers for it, not a
	 * drain that fails in its thread. */
	if (gw_drain_node_known(m, node) == -ENOENT) {
		gw_reply_statusf(rep, 404, "NotFound", "nodes \"%s\" not found", node);
		return;
	}
	pthread_mutex_lock(&m->lock);
	struct drain *d = find_node(m, node), *slot = NULL;
	if (m->stopping) {
		gw_reply_statusf(rep, 503, "ServiceUnavailable", "the gateway is stopping");
		goto unlock;
	}
	if (d != NULL && d->phase == PH_RUNNING) {
		gw_reply_statusf(rep, 409, "Conflict", "node %s: drain %" PRIu64 " is "
			     "running; GET /v1/nodes/%s/drain for its progress", node,
			     d->id, node);
		goto unlock;
	}
	if (m->running >= DRAINS_RUNNING) {
		gw_reply_statusf(rep, 429, "TooManyRequests", "%u drains are running, the "
			     "most at once; ask again once one is done", m->running);
		goto unlock;
	}
	/* A free record, else the finished one that finished first (one is
	 * finished: at most DRAINS_RUNNING of DRAINS_KEPT run). */
	for (unsigned i = 0; i < DRAINS_KEPT && slot == NULL; i++)
		if (!m->d[i].used)
			slot = &m->d[i];
	for (unsigned i = 0; i < DRAINS_KEPT && (slot == NULL || slot->used); i++)
		if (m->d[i].phase != PH_RUNNING &&
		    (slot == NULL || m->d[i].finished_ns < slot->finished_ns))
			slot = &m->d[i];
	if (slot == NULL) {
		gw_reply_statusf(rep, 429, "TooManyRequests", "no room for one more drain");
		goto unlock;
	}
	if (slot->joinable) {
		/* Finished: its thread has returned or is about to. */
		pthread_join(slot->thread, NULL);
		slot->joinable = false;
	}
	char *report = slot->report;
	if (report == NULL && (report = malloc(REPORT_MAX + 1)) == NULL) {
		gw_reply_statusf(rep, 500, "InternalError", "out of memory");
		goto unlock;
	}
	*slot = (struct drain){.used = true, .m = m, .id = m->next_id++,
		.req = req, .phase = PH_RUNNING, .started_ns = now_ns(),
		.report = report};
	report[0] = '\0';
	snprintf(slot->node, sizeof(slot->node), "%s", node);
	snprintf(slot->message, sizeof(slot->message), "draining");
	if (pthread_create(&slot->thread, NULL, drain_thread, slot) != 0) {
		slot->phase = PH_FAILED;
		slot->finished_ns = now_ns();
		snprintf(slot->message, sizeof(slot->message), "no thread to run it");
		gw_reply_statusf(rep, 500, "InternalError", "node %s: no thread for the "
			     "drain", node);
		goto unlock;
	}
	slot->joinable = true;
	m->running++;
	rep->code = 202;
	rep->content_type = "application/json";
	drain_json(slot, &rep->body);
unlock:
	pthread_mutex_unlock(&m->lock);
}

void gw_drain_get(struct gw_drains *m, const char *node, struct gw_http_reply *rep)
{
	*rep = (struct gw_http_reply){0};
	pthread_mutex_lock(&m->lock);
	const struct drain *d = find_node(m, node);
	if (d == NULL) {
		gw_reply_statusf(rep, 404, "NotFound", "node %s: no drain through this "
			     "gateway (POST /v1/nodes/%s/drain starts one)", node, node);
	} else {
		rep->code = 200;
		rep->content_type = "application/json";
		drain_json(d, &rep->body);
	}
	pthread_mutex_unlock(&m->lock);
}

/* How long a DELETE waits for the drain's thread to end its wave. */
#define CANCEL_WAIT_NS UINT64_C(5000000000)

void gw_drain_cancel(struct gw_drains *m, const char *node, struct gw_http_reply *rep)
{
	*rep = (struct gw_http_reply){0};
	pthread_mutex_lock(&m->lock);
	struct drain *d = find_node(m, node);
	if (d == NULL) {
		gw_reply_statusf(rep, 404, "NotFound", "node %s: no drain through this "
			     "gateway to cancel", node);
		goto unlock;
	}
	if (d->phase != PH_RUNNING) {
		gw_reply_statusf(rep, 409, "Conflict", "node %s: drain %" PRIu64 " is "
			     "%s already; nothing to cancel", node, d->id,
			     phase_names[d->phase]);
		goto unlock;
	}
	d->cancel = true;
	pthread_cond_broadcast(&m->cond);
	/* The thread ends at its next look: now, if it naps; after its
	 * wave, if one is in flight. finish() broadcasts. */
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	uint64_t at = (uint64_t)ts.tv_sec * UINT64_C(1000000000) +
		      (uint64_t)ts.tv_nsec + CANCEL_WAIT_NS;
	ts.tv_sec = (time_t)(at / UINT64_C(1000000000));
	ts.tv_nsec = (long)(at % UINT64_C(1000000000));
	while (d->phase == PH_RUNNING &&
	       pthread_cond_timedwait(&m->cond, &m->lock, &ts) != ETIMEDOUT)
		;
	/* 200 with the record: Cancelled (or how it ended meanwhile), else
	 * still Running with cancel asked, when its wave outlasts the wait. */
	rep->code = 200;
	rep->content_type = "application/json";
	drain_json(d, &rep->body);
unlock:
	pthread_mutex_unlock(&m->lock);
}

/* shmsched_drain of one placement, through gw_admin_conn_call: the
 * answer's text (the caller's to free) replaced at each try. */
struct drain_call {
	const char *node, *placement;
	unsigned flags;
	struct shmsched_drain_result *r;
	char **text;
};

static int drain_call(struct shmsched_client *c, void *arg, char *err,
		      size_t err_len)
{
	struct drain_call *a = arg;
	const char *nodes[1] = {a->node};
	free(*a->text);
	*a->text = NULL;
	return shmsched_drain(c, nodes, 1, a->placement, a->flags, a->r, a->text,
			      err, err_len);
}

int gw_drain_node_known(struct gw_drains *m, const char *node)
{
	/* A wave of one placement no daemon hands out (ids start at 1 and
	 * count up), dry: the daemon checks the node's name first. */
	struct shmsched_drain_result r;
	char err[1024], *text = NULL;
	struct drain_call a = {node, "18446744073709551615",
			       SHMSCHED_DRAIN_PLACEMENT | SHMSCHED_DRAIN_DRY_RUN |
			       SHMSCHED_DRAIN_FORCE, &r, &text};
	int rc = gw_admin_conn_call(&m->evict, drain_call, &a, NULL, err,
				    sizeof(err));
	free(text);
	return rc == -ENOENT ? -ENOENT : 0;
}

void gw_evict_run(struct gw_drains *m, const char *pod, uint64_t placement_id,
		  const char *node, bool dry_run, struct gw_http_reply *rep)
{
	*rep = (struct gw_http_reply){0};
	const char *slash = strchr(pod, '/');
	const char *name = slash != NULL ? slash + 1 : pod;
	char id[24], err[1024];
	snprintf(id, sizeof(id), "%" PRIu64, placement_id);
	struct shmsched_drain_result r = {0};
	char *text = NULL;
	struct drain_call a = {node, id, SHMSCHED_DRAIN_PLACEMENT |
			       SHMSCHED_DRAIN_FORCE |
			       (dry_run ? SHMSCHED_DRAIN_DRY_RUN : 0), &r, &text};
	int rc = gw_admin_conn_call(&m->evict, drain_call, &a, NULL, err,
				    sizeof(err));
	if (rc == -ENOENT || (rc == 0 && r.evicted + r.blocked + r.errors == 0)) {
		/* Its node or its placement went meanwhile. */
		gw_reply_statusf(rep, 404, "NotFound", "pods \"%s\" not found", name);
	} else if (rc < 0) {
		bool away = rc == -ECONNRESET || rc == -ECONNREFUSED || rc == -ENOENT ||
			    rc == -ETIMEDOUT || rc == -EPROTO;
		gw_reply_statusf(rep, away ? 503 : 500, away ? "ServiceUnavailable"
			     : "InternalError", "pod %s: the daemon's eviction: %s",
			     pod, gw_daemon_says(err));
	} else if (r.errors > 0) {
		/* eviction.go: a Status of code 500, no reason. */
		gw_reply_statusf(rep, 500, NULL, "This pod has more than one "
			     "PodDisruptionBudget, which the eviction subresource "
			     "does not support.");
	} else if (r.blocked > 0) {
		/* eviction.go checkAndDecrement: NewTooManyRequests(..., 0)
		 * with a DisruptionBudget cause; retryAfterSeconds 0, so no
		 * Retry-After. The cause's message is the daemon's line. */
		size_t tl = text != NULL ? strcspn(text, "\n") : 0;
		rep->code = 429;
		rep->content_type = "application/json";
		json_buf_puts(&rep->body, "{\"kind\":\"Status\",\"apiVersion\":\"v1\","
			      "\"metadata\":{},\"status\":\"Failure\",\"message\":"
			      "\"Cannot evict pod as it would violate the pod's "
			      "disruption budget.\",\"reason\":\"TooManyRequests\","
			      "\"details\":{\"causes\":[{\"reason\":\"DisruptionBudget\","
			      "\"message\":");
		json_buf_string_n(&rep->body, text != NULL ? text : "", tl);
		json_buf_puts(&rep->body, "}]},\"code\":429}\n");
	} else {
		/* eviction.go: &metav1.Status{Status: StatusSuccess}, which the
		 * create handler answers 201 with its code set to 201. */
		rep->code = 201;
		rep->content_type = "application/json";
		json_buf_puts(&rep->body, "{\"kind\":\"Status\",\"apiVersion\":\"v1\","
			      "\"metadata\":{},\"status\":\"Success\",\"code\":201}\n");
	}
	free(text);
}
