/* Approval webhooks (issue 38): a manager that approves the voluntary
 * disruption of its pods given as a URL on loopback, on the admin
 * listener:
 *
 *   POST   /v1/approvals/webhooks         a registration
 *                                         (gateway/webhook_decode.h): 201
 *                                         with its record; 400 (the body,
 *                                         a URL not on loopback, the
 *                                         daemon's refusal of the
 *                                         selector), 409 (the name is
 *                                         taken), 429 (WEBHOOKS_MAX), 503
 *   GET    /v1/approvals/webhooks         every registration's record
 *   GET    /v1/approvals/webhooks/{name}  one's, or 404
 *   DELETE /v1/approvals/webhooks/{name}  drops it: 200 with its record
 *                                         (Deleting; the thread ends at
 *                                         once, its call to the webhook
 *                                         aborted), or 404
 *
 * Each registration is one admin connection of the gateway's to the
 * daemon, registered as the socket manager `shmsched approve` is
 * (shmsched_approval_register, include/shmsched/client.h), and one
 * thread of its own that owns that connection: it asks for the
 * unanswered asks (every POLL_NS), POSTs each to the URL as JSON
 * ({"kind":"DisruptionAsk","ask":ID,"placement":ID,"pod":"ns/name",
 * "node":N,"reason":"drain"|"reclaim"|"preempt","asker":NAME}), decodes
 * the answer strictly (gw_webhook_answer_decode: 200 and at most
 * GW_WEBHOOK_ANSWER_MAX bytes, read within the call's timeout) and relays
 * it (shmsched_approval_answer). So no request thread ever waits on a
 * webhook. A webhook that fails (down, slow, a bad answer) is not
 * answered for: the daemon applies the registration's deadline and
 * failure policy as for any manager (ingest/approval.c: fail-open
 * evicts, fail-closed keeps), and the thread waits FAIL_BACKOFF_NS
 * before it asks again. The daemon gone, the thread connects and
 * registers again (the registration died with the connection).
 *
 * The call: libcurl, plain HTTP only (CURLOPT_PROTOCOLS_STR), no
 * redirect, no proxy whatever the environment says (CURLOPT_NOPROXY
 * "*"), to the literal loopback address the registration's URL was
 * checked to hold; a timeout of the deadline, at most CALL_TIMEOUT_MS;
 * aborted by the progress callback once the registration is being
 * deleted or the gateway stops.
 *
 * Threads: the table, each record's state and counters, `stop` and
 * `stopping` are under `lock`; a registration's thread takes it to
 * publish counters and to read `stop`, and waits on `cond`
 * (CLOCK_MONOTONIC) between polls so that DELETE and gw_webhooks_stop()
 * wake it. The thread's connection and its curl handle are its own. A
 * thread that ended (DELETE) is joined by whoever reuses its slot, or by
 * gw_webhooks_stop().
 */
#include "gateway/gateway_internal.h"

#include <curl/curl.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gateway/webhook_decode.h"

#define WEBHOOKS_MAX 8u /* the daemon holds 8 registrations in all */
#define POLL_NS UINT64_C(200000000)
#define FAIL_BACKOFF_NS UINT64_C(1000000000)
#define CALL_TIMEOUT_MS 10000u
#define CONNECT_TIMEOUT_MS 2000u

_Static_assert(GW_WEBHOOK_NAME_MAX == SHMSCHED_APPROVAL_NAME_MAX &&
	       GW_WEBHOOK_SELECTOR_MAX == SHMSCHED_APPROVAL_SELECTOR_MAX &&
	       GW_WEBHOOK_DEADLINE_MAX_S * 1000u == SHMSCHED_APPROVAL_DEADLINE_MAX_MS &&
	       (unsigned)GW_WEBHOOK_GRANT == (unsigned)SHMSCHED_APPROVAL_GRANT &&
	       (unsigned)GW_WEBHOOK_DENY == (unsigned)SHMSCHED_APPROVAL_DENY &&
	       (unsigned)GW_WEBHOOK_NOT_BEFORE == (unsigned)SHMSCHED_APPROVAL_NOT_BEFORE,
	       "a webhook's registration and answer are the daemon's as they are");

enum hook_state { HS_FREE, HS_REGISTERING, HS_RUNNING, HS_DELETING, HS_ENDED };
static const char *const state_names[] = {"Free", "Registering", "Registered",
					  "Deleting", "Deleted"};

struct webhook {
	enum hook_state state;
	bool joinable;            /* a thread was started, not yet joined */
	struct gw_webhooks *m;
	pthread_t thread;
	struct gw_webhook_reg reg;
	struct shmsched_client *c; /* the thread's own once it runs */
	/* Under m->lock. */
	bool stop;
	bool connected;           /* registered on a live connection */
	int registration;         /* the daemon's number */
	uint64_t asks, granted, denied, not_before, failed, relay_errors;
	char last_error[600];
};

struct gw_webhooks {
	char admin_socket[4096];
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool stopping;
	struct webhook w[WEBHOOKS_MAX];
};

int gw_webhooks_create(const char *admin_socket, struct gw_webhooks **out)
{
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		return -ENOMEM;
	struct gw_webhooks *m = calloc(1, sizeof(*m));
	if (m == NULL) {
		curl_global_cleanup();
		return -ENOMEM;
	}
	snprintf(m->admin_socket, sizeof(m->admin_socket), "%s", admin_socket);
	pthread_mutex_init(&m->lock, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&m->cond, &ca);
	pthread_condattr_destroy(&ca);
	*out = m;
	return 0;
}

void gw_webhooks_stop(struct gw_webhooks *m)
{
	if (m == NULL)
		return;
	pthread_mutex_lock(&m->lock);
	m->stopping = true;
	for (unsigned i = 0; i < WEBHOOKS_MAX; i++)
		m->w[i].stop = true;
	pthread_cond_broadcast(&m->cond);
	pthread_mutex_unlock(&m->lock);
	for (unsigned i = 0; i < WEBHOOKS_MAX; i++) {
		/* Claimed under the lock: a POST reusing the slot joins its
		 * ended thread likewise. */
		struct webhook *h = &m->w[i];
		pthread_mutex_lock(&m->lock);
		bool join = h->joinable;
		pthread_t t = h->thread;
		h->joinable = false;
		pthread_mutex_unlock(&m->lock);
		if (join)
			pthread_join(t, NULL);
	}
}

void gw_webhooks_free(struct gw_webhooks *m)
{
	if (m == NULL)
		return;
	gw_webhooks_stop(m);
	pthread_mutex_destroy(&m->lock);
	pthread_cond_destroy(&m->cond);
	free(m);
	curl_global_cleanup();
}


/* One record as JSON (under m->lock). */
static void record(const struct webhook *h, struct json_buf *b)
{
	json_buf_puts(b, "{\"kind\":\"ApprovalWebhook\",\"apiVersion\":"
		      "\"shmsched.io/v1alpha1\",\"name\":");
	json_buf_string(b, h->reg.name);
	json_buf_puts(b, ",\"url\":");
	json_buf_string(b, h->reg.url.text);
	json_buf_puts(b, ",\"selector\":");
	json_buf_string(b, h->reg.selector);
	json_buf_printf(b, ",\"deadlineSeconds\":%" PRIu32 ",\"failurePolicy\":\"%s\","
			"\"disruptions\":[\"drain\"%s%s],\"state\":\"%s\","
			"\"connected\":%s,\"registration\":%d,"
			"\"asks\":%" PRIu64 ",\"granted\":%" PRIu64 ",\"denied\":%"
			PRIu64 ",\"notBefore\":%" PRIu64 ",\"failed\":%" PRIu64
			",\"relayErrors\":%" PRIu64 ",\"lastError\":",
			h->reg.deadline_s, h->reg.fail_open ? "Open" : "Closed",
			h->reg.reclaim ? ",\"reclaim\"" : "",
			h->reg.preempt ? ",\"preempt\"" : "", state_names[h->state],
			h->connected ? "true" : "false",
			h->registration, h->asks, h->granted, h->denied,
			h->not_before, h->failed, h->relay_errors);
	json_buf_string(b, h->last_error);
	json_buf_puts(b, "}");
}

/* The record of the registration named `name` (under m->lock), or NULL. */
static struct webhook *find(struct gw_webhooks *m, const char *name)
{
	for (unsigned i = 0; i < WEBHOOKS_MAX; i++) {
		struct webhook *h = &m->w[i];
		if (h->state != HS_FREE && h->state != HS_ENDED &&
		    strcmp(h->reg.name, name) == 0)
			return h;
	}
	return NULL;
}

/* Connects and registers h (its thread, or the POST before it starts):
 * 0, or a negative errno with why in err. */
static int enrol(struct webhook *h, char *err, size_t err_len)
{
	char who[96];
	snprintf(who, sizeof(who), "shmsched-gateway-webhook-%s", h->reg.name);
	struct shmsched_client *c;
	int rc = shmsched_connect_named(h->m->admin_socket, who, &c, err, err_len);
	if (rc < 0)
		return rc;
	rc = shmsched_approval_register(c, h->reg.name, h->reg.selector,
					h->reg.deadline_s * 1000u,
					(h->reg.fail_open ? SHMSCHED_APPROVAL_FAIL_OPEN
					 : 0) |
					(h->reg.reclaim ? SHMSCHED_APPROVAL_RECLAIM_TOO
					 : 0) |
					(h->reg.preempt ? SHMSCHED_APPROVAL_PREEMPT_TOO
					 : 0), err, err_len);
	if (rc < 0) {
		shmsched_disconnect(c);
		return rc;
	}
	h->c = c;
	pthread_mutex_lock(&h->m->lock);
	h->registration = rc;
	h->connected = true;
	pthread_mutex_unlock(&h->m->lock);
	return 0;
}

/* Drops h's connection (its thread's): the daemon is gone, and with it
 * the registration, which enrol() makes again. */
static void drop(struct webhook *h)
{
	shmsched_disconnect(h->c);
	h->c = NULL;
	pthread_mutex_lock(&h->m->lock);
	h->connected = false;
	pthread_mutex_unlock(&h->m->lock);
}

/* --- the call --------------------------------------------------------- */

struct answer_buf {
	char data[GW_WEBHOOK_ANSWER_MAX + 1];
	size_t len;
	bool over;      /* more than GW_WEBHOOK_ANSWER_MAX bytes came */
};

static size_t on_body(char *p, size_t size, size_t n, void *arg)
{
	struct answer_buf *a = arg;
	size_t k = size * n;
	if (k > GW_WEBHOOK_ANSWER_MAX - a->len) {
		a->over = true;
		return 0; /* aborts the transfer: CURLE_WRITE_ERROR */
	}
	memcpy(a->data + a->len, p, k);
	a->len += k;
	return k;
}

static int on_progress(void *arg, curl_off_t dt, curl_off_t dn, curl_off_t ut,
		       curl_off_t un)
{
	(void)dt, (void)dn, (void)ut, (void)un;
	struct webhook *h = arg;
	pthread_mutex_lock(&h->m->lock);
	bool stop = h->stop;
	pthread_mutex_unlock(&h->m->lock);
	return stop ? 1 : 0;
}

static const char *reason_name(unsigned reason)
{
	return reason == SHMSCHED_APPROVAL_DRAIN ? "drain" :
	       reason == SHMSCHED_APPROVAL_RECLAIM ? "reclaim" :
	       reason == SHMSCHED_APPROVAL_PREEMPT ? "preempt" : "unknown";
}

/* Asks the webhook about one ask: 0 with its answer, or -1 with why. */
static int call_webhook(struct webhook *h, CURL *curl,
			const struct shmsched_approval_ask *k,
			struct gw_webhook_answer *ans, char *err, size_t err_len)
{
	struct json_buf body = {0};
	json_buf_printf(&body, "{\"apiVersion\":\"shmsched.io/v1alpha1\",\"kind\":"
			"\"DisruptionAsk\",\"ask\":%" PRIu64 ",\"placement\":%" PRIu64
			",\"pod\":", k->ask_id, k->placement_id);
	json_buf_string(&body, k->pod);
	json_buf_puts(&body, ",\"node\":");
	json_buf_string(&body, k->node);
	json_buf_printf(&body, ",\"reason\":\"%s\",\"asker\":", reason_name(k->reason));
	json_buf_string(&body, h->reg.name);
	json_buf_puts(&body, "}\n");
	if (body.failed) {
		json_buf_free(&body);
		snprintf(err, err_len, "out of memory");
		return -1;
	}
	struct answer_buf *got = calloc(1, sizeof(*got));
	if (got == NULL) {
		json_buf_free(&body);
		snprintf(err, err_len, "out of memory");
		return -1;
	}
	uint32_t timeout = h->reg.deadline_s * 1000u;
	if (timeout > CALL_TIMEOUT_MS)
		timeout = CALL_TIMEOUT_MS;
	struct curl_slist *headers = curl_slist_append(NULL, "Content-Type: "
						       "application/json");
	curl_easy_reset(curl);
	curl_easy_setopt(curl, CURLOPT_URL, h->reg.url.text);
	curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http");
	curl_easy_setopt(curl, CURLOPT_REDIR_PROTOCOLS_STR, "http");
	curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(curl, CURLOPT_NOPROXY, "*");
	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, (long)timeout);
	curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS,
			 (long)(timeout < CONNECT_TIMEOUT_MS ? timeout
				: CONNECT_TIMEOUT_MS));
	curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.data);
	curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, (long)body.len);
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(curl, CURLOPT_WRITEDATA, got);
	curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(curl, CURLOPT_XFERINFODATA, h);
	curl_easy_setopt(curl, CURLOPT_USERAGENT, "shmsched-gateway");
	CURLcode cc = curl_easy_perform(curl);
	long status = 0;
	curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
	curl_slist_free_all(headers);
	json_buf_free(&body);
	int rc = -1;
	if (got->over)
		snprintf(err, err_len, "%s: an answer over %u bytes", h->reg.url.text,
			 GW_WEBHOOK_ANSWER_MAX);
	else if (cc != CURLE_OK)
		snprintf(err, err_len, "%s: %s%s", h->reg.url.text,
			 curl_easy_strerror(cc), cc == CURLE_OPERATION_TIMEDOUT ?
			 " (no answer within the call's timeout)" : "");
	else if (status != 200)
		snprintf(err, err_len, "%s: HTTP status %ld; expected 200 with a "
			 "decision", h->reg.url.text, status);
	else
		rc = gw_webhook_answer_decode(got->data, got->len,
					      (int64_t)time(NULL) * 1000, ans, err,
					      err_len) < 0 ? -1 : 0;
	free(got);
	return rc;
}

/* --- a registration's thread ------------------------------------------ */

/* Waits `ns` or until told to stop (under m->lock). */
static void pause_for(struct webhook *h, uint64_t ns)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	uint64_t t = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec + ns;
	ts.tv_sec = (time_t)(t / 1000000000u);
	ts.tv_nsec = (long)(t % 1000000000u);
	while (!h->stop &&
	       pthread_cond_timedwait(&h->m->cond, &h->m->lock, &ts) != ETIMEDOUT)
		;
}

static void set_error(struct webhook *h, const char *what)
{
	pthread_mutex_lock(&h->m->lock);
	snprintf(h->last_error, sizeof(h->last_error), "%.500s", what);
	pthread_mutex_unlock(&h->m->lock);
}

static void *hook_thread(void *arg)
{
	struct webhook *h = arg;
	struct gw_webhooks *m = h->m;
	CURL *curl = curl_easy_init();
	struct shmsched_approval_ask *asks = calloc(SHMSCHED_APPROVAL_PAGE,
						    sizeof(*asks));
	char err[1024];
	for (;;) {
		uint64_t wait = POLL_NS;
		pthread_mutex_lock(&m->lock);
		bool stop = h->stop;
		pthread_mutex_unlock(&m->lock);
		if (stop)
			break;
		if (curl == NULL || asks == NULL) {
			set_error(h, "out of memory");
			wait = FAIL_BACKOFF_NS;
		} else if (h->c == NULL) {
			int rc = enrol(h, err, sizeof(err));
			if (rc < 0) {
				char line[1100];
				snprintf(line, sizeof(line), "registering again with "
					 "the daemon: %s", gw_daemon_says(err));
				set_error(h, line);
				wait = FAIL_BACKOFF_NS;
			} else {
				log_msg(LOG_LEVEL_INFO, "gateway: webhook %s: "
					"registered again (registration %d)",
					h->reg.name, h->registration);
			}
		} else {
			int n = shmsched_approval_pending(h->c, asks, NULL, err,
							  sizeof(err));
			if (n < 0) {
				/* The daemon gone: its registration with it. */
				drop(h);
				char line[1100];
				snprintf(line, sizeof(line), "the daemon: %s",
					 gw_daemon_says(err));
				set_error(h, line);
				log_msg(LOG_LEVEL_WARN, "gateway: webhook %s: %s",
					h->reg.name, line);
				wait = FAIL_BACKOFF_NS;
				n = 0;
			}
			for (int i = 0; i < n; i++) {
				const struct shmsched_approval_ask *k = &asks[i];
				struct gw_webhook_answer ans;
				pthread_mutex_lock(&m->lock);
				h->asks++;
				stop = h->stop;
				pthread_mutex_unlock(&m->lock);
				if (stop)
					break;
				if (call_webhook(h, curl, k, &ans, err, sizeof(err)) < 0) {
					pthread_mutex_lock(&m->lock);
					h->failed++;
					snprintf(h->last_error, sizeof(h->last_error),
						 "ask %" PRIu64 ": %.500s", k->ask_id, err);
					pthread_mutex_unlock(&m->lock);
					log_msg(LOG_LEVEL_WARN, "gateway: webhook %s: ask %"
						PRIu64 " (pod %s on node %s): not answered: "
						"%s; the daemon's deadline and failure "
						"policy decide", h->reg.name, k->ask_id,
						k->pod, k->node, err);
					wait = FAIL_BACKOFF_NS;
					break;
				}
				int rc = shmsched_approval_answer(h->c, k->ask_id,
								  ans.decision,
								  ans.not_before_ms,
								  err, sizeof(err));
				pthread_mutex_lock(&m->lock);
				if (rc < 0) {
					h->relay_errors++;
					snprintf(h->last_error, sizeof(h->last_error),
						 "ask %" PRIu64 ": the daemon refused the "
						 "answer: %.500s", k->ask_id,
						 gw_daemon_says(err));
				} else if (ans.decision == GW_WEBHOOK_GRANT) {
					h->granted++;
				} else if (ans.decision == GW_WEBHOOK_DENY) {
					h->denied++;
				} else {
					h->not_before++;
				}
				pthread_mutex_unlock(&m->lock);
				char said[64];
				if (ans.decision == GW_WEBHOOK_NOT_BEFORE)
					snprintf(said, sizeof(said), "not before %" PRIu32
						 " ms from now", ans.not_before_ms);
				else
					snprintf(said, sizeof(said), "%s", ans.decision ==
						 GW_WEBHOOK_GRANT ? "granted" : "denied");
				log_msg(rc < 0 ? LOG_LEVEL_WARN : LOG_LEVEL_INFO,
					"gateway: webhook %s: ask %" PRIu64 " (pod %s on "
					"node %s, %s): %s%s%s%s%s", h->reg.name, k->ask_id,
					k->pod, k->node, reason_name(k->reason), said,
					ans.message[0] != '\0' ? " (its message: " : "",
					ans.message, ans.message[0] != '\0' ? ")" : "",
					rc < 0 ? "; the daemon refused the answer" : "");
				if (rc == -ECONNRESET) {
					drop(h);
					break;
				}
			}
		}
		pthread_mutex_lock(&m->lock);
		pause_for(h, wait);
		pthread_mutex_unlock(&m->lock);
	}
	/* Deleted, or the gateway stops: the connection closed drops the
	 * registration and its asks in the daemon. */
	if (h->c != NULL)
		shmsched_disconnect(h->c);
	h->c = NULL;
	free(asks);
	if (curl != NULL)
		curl_easy_cleanup(curl);
	log_msg(LOG_LEVEL_INFO, "gateway: webhook %s: unregistered", h->reg.name);
	/* The last touch: a POST may reuse the slot from here. */
	pthread_mutex_lock(&m->lock);
	h->connected = false;
	h->state = HS_ENDED;
	pthread_mutex_unlock(&m->lock);
	return NULL;
}

/* --- the routes ------------------------------------------------------- */

static void route_post(struct gw_webhooks *m, const char *body, size_t len,
		       struct gw_http_reply *rep)
{
	char err[1100];
	struct gw_webhook_reg reg;
	if (gw_webhook_reg_decode(body, len, &reg, err, sizeof(err)) < 0) {
		gw_reply_statusf(rep, 400, "BadRequest", "%s", err);
		return;
	}
	pthread_mutex_lock(&m->lock);
	if (m->stopping) {
		pthread_mutex_unlock(&m->lock);
		gw_reply_statusf(rep, 503, "ServiceUnavailable", "the gateway is stopping");
		return;
	}
	if (find(m, reg.name) != NULL) {
		pthread_mutex_unlock(&m->lock);
		gw_reply_statusf(rep, 409, "Conflict", "webhook %s is registered already "
			     "(DELETE /v1/approvals/webhooks/%s first)", reg.name,
			     reg.name);
		return;
	}
	struct webhook *h = NULL;
	for (unsigned i = 0; i < WEBHOOKS_MAX && h == NULL; i++)
		if (m->w[i].state == HS_FREE || m->w[i].state == HS_ENDED)
			h = &m->w[i];
	if (h == NULL) {
		pthread_mutex_unlock(&m->lock);
		gw_reply_statusf(rep, 429, "TooManyRequests", "%u webhooks are registered, "
			     "the most this gateway holds", WEBHOOKS_MAX);
		return;
	}
	bool join = h->joinable;
	pthread_t old = h->thread;
	/* Reserved (a second POST of the name: 409) while it registers. */
	*h = (struct webhook){.state = HS_REGISTERING, .m = m, .reg = reg};
	pthread_mutex_unlock(&m->lock);
	if (join)
		pthread_join(old, NULL); /* it has ended (HS_ENDED) */
	int rc = enrol(h, err, sizeof(err));
	const char *says = gw_daemon_says(err);
	if (rc < 0) {
		pthread_mutex_lock(&m->lock);
		h->state = HS_FREE;
		pthread_mutex_unlock(&m->lock);
		if (rc == -EINVAL)
			gw_reply_statusf(rep, 400, "BadRequest", "webhook %s: the daemon "
				     "refused it: %s", reg.name, says);
		else if (rc == -ENOSPC)
			gw_reply_statusf(rep, 429, "TooManyRequests", "webhook %s: %s",
				     reg.name, says);
		else
			gw_reply_statusf(rep, 503, "ServiceUnavailable", "webhook %s: the "
				     "daemon's admin socket: %s", reg.name, says);
		return;
	}
	pthread_mutex_lock(&m->lock);
	/* Not once stopping: gw_webhooks_stop() may have passed the slot. */
	rc = m->stopping ? EAGAIN : pthread_create(&h->thread, NULL, hook_thread, h);
	h->joinable = rc == 0;
	h->state = rc == 0 ? HS_RUNNING : HS_FREE;
	if (rc != 0) {
		pthread_mutex_unlock(&m->lock);
		shmsched_disconnect(h->c);
		h->c = NULL;
		if (rc == EAGAIN && m->stopping)
			gw_reply_statusf(rep, 503, "ServiceUnavailable", "the gateway is "
				     "stopping");
		else
			gw_reply_statusf(rep, 500, "InternalError", "webhook %s: no "
				     "thread: %s", reg.name, strerror(rc));
		return;
	}
	rep->code = 201;
	rep->content_type = "application/json";
	record(h, &rep->body);
	json_buf_puts(&rep->body, "\n");
	int number = h->registration;
	pthread_mutex_unlock(&m->lock);
	log_msg(LOG_LEVEL_INFO, "gateway: webhook %s registered (registration %d): "
		"%s for \"%s\", deadline %" PRIu32 " s, fail-%s, asked by the "
		"drain%s%s", reg.name, number, reg.url.text, reg.selector,
		reg.deadline_s, reg.fail_open ? "open" : "closed",
		reg.reclaim ? ", reclaim" : "", reg.preempt ? ", preemption" : "");
}

void gw_webhooks_route(struct gw_webhooks *m, const char *method, const char *rest,
		       const char *body, size_t len, struct gw_http_reply *rep)
{
	*rep = (struct gw_http_reply){0};
	bool get = strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;
	if (rest[0] == '\0') {
		if (strcmp(method, "POST") == 0) {
			route_post(m, body, len, rep);
			return;
		}
		if (!get) {
			gw_reply_statusf(rep, 405, "MethodNotAllowed", "%s "
				     "/v1/approvals/webhooks: GET lists, POST "
				     "registers", method);
			return;
		}
		rep->code = 200;
		rep->content_type = "application/json";
		json_buf_puts(&rep->body, "{\"kind\":\"ApprovalWebhookList\","
			      "\"apiVersion\":\"shmsched.io/v1alpha1\",\"items\":[");
		pthread_mutex_lock(&m->lock);
		bool first = true;
		for (unsigned i = 0; i < WEBHOOKS_MAX; i++) {
			const struct webhook *h = &m->w[i];
			if (h->state != HS_RUNNING && h->state != HS_DELETING)
				continue; /* free, ended, or not yet registered */
			if (!first)
				json_buf_puts(&rep->body, ",");
			first = false;
			record(h, &rep->body);
		}
		pthread_mutex_unlock(&m->lock);
		json_buf_puts(&rep->body, "]}\n");
		return;
	}
	const char *name = rest[0] == '/' ? rest + 1 : rest;
	if (!get && strcmp(method, "DELETE") != 0) {
		gw_reply_statusf(rep, 405, "MethodNotAllowed", "%s /v1/approvals/webhooks/"
			     "{name}: GET or DELETE", method);
		return;
	}
	pthread_mutex_lock(&m->lock);
	struct webhook *h = strlen(name) <= GW_WEBHOOK_NAME_MAX ? find(m, name) : NULL;
	if (h == NULL) {
		pthread_mutex_unlock(&m->lock);
		gw_reply_statusf(rep, 404, "NotFound", "webhooks \"%.64s\" not found", name);
		return;
	}
	if (!get && h->state == HS_REGISTERING) {
		pthread_mutex_unlock(&m->lock);
		gw_reply_statusf(rep, 409, "Conflict", "webhook %s is being registered; "
			     "DELETE it once its POST has been answered", name);
		return;
	}
	if (!get && h->state == HS_RUNNING) {
		h->stop = true;
		h->state = HS_DELETING;
		pthread_cond_broadcast(&m->cond);
		log_msg(LOG_LEVEL_INFO, "gateway: webhook %s: deleted", h->reg.name);
	}
	rep->code = 200;
	rep->content_type = "application/json";
	record(h, &rep->body);
	json_buf_puts(&rep->body, "\n");
	pthread_mutex_unlock(&m->lock);
}
