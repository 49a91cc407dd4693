/* etcd's watch stream (coord/watch.h): a line splitter over the chunked
 * body, each line decoded by etcd_decode_watch (coord/etcd_codec.c), and
 * a libcurl transfer that feeds it as bytes arrive.
 *
 * Invariants: the line buffer never holds more than max_line bytes (a
 * longer line is refused as it arrives); a message is handed to the
 * caller whole, once, in stream order; next_revision only grows, and only
 * past what was handed; the first error is kept and returned again.
 * Cost: one copy of each byte into the line buffer and one jansson parse
 * a message. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "coord/watch.h"

void watch_stream_init(struct watch_stream *w, size_t max_line, size_t max_events,
		       int64_t start_revision,
		       int (*on_message)(void *ctx, const struct etcd_watch_message *m),
		       void *ctx)
{
	memset(w, 0, sizeof(*w));
	w->max_line = max_line ? max_line : WATCH_DEFAULT_MAX_LINE;
	w->max_events = max_events ? max_events : WATCH_DEFAULT_MAX_EVENTS;
	w->next_revision = start_revision;
	w->on_message = on_message;
	w->ctx = ctx;
}

void watch_stream_free(struct watch_stream *w)
{
	free(w->buf);
	w->buf = NULL;
	w->len = w->cap = 0;
}

static int stream_fail(struct watch_stream *w, int rc)
{
	w->rc = rc;
	return rc;
}

static int handle_line(struct watch_stream *w, const char *line, size_t len)
{
	struct etcd_watch_message m;
	char msg[200];
	int rc = etcd_decode_watch(line, len, w->max_events, &m, msg, sizeof(msg));
	if (rc != 0) {
		snprintf(w->error, sizeof(w->error), "etcd watch: a message etcd does not send: %s",
			 msg);
		return stream_fail(w, rc);
	}
	if (m.canceled) {
		w->compact_revision = m.compact_revision;
		if (m.compact_revision > 0)
			snprintf(w->error, sizeof(w->error),
				 "etcd watch: revision %" PRId64
				 " has been compacted; the oldest kept is %" PRId64 ": re-list",
				 w->next_revision, m.compact_revision);
		else
			snprintf(w->error, sizeof(w->error), "etcd watch: canceled by etcd");
		int cancel = m.compact_revision > 0 ? -ERANGE : -ECANCELED;
		etcd_watch_message_free(&m);
		return stream_fail(w, cancel);
	}
	for (size_t i = 0; i < m.n_events; i++)
		if (m.events[i].kv.mod_revision >= w->next_revision)
			w->next_revision = m.events[i].kv.mod_revision + 1;
	/* A progress message: everything up to its revision was sent. */
	if (m.n_events == 0 && !m.created && m.revision >= w->next_revision)
		w->next_revision = m.revision + 1;
	rc = w->on_message ? w->on_message(w->ctx, &m) : 0;
	etcd_watch_message_free(&m);
	if (rc != 0) {
		snprintf(w->error, sizeof(w->error), "etcd watch: the caller stopped (%d)", rc);
		return stream_fail(w, rc);
	}
	return 0;
}

int watch_stream_feed(struct watch_stream *w, const void *data, size_t len)
{
	if (w->rc != 0)
		return w->rc;
	const char *p = data;
	while (len > 0) {
		const char *nl = memchr(p, '\n', len);
		size_t take = nl ? (size_t)(nl - p) : len;
		if (take > w->max_line - w->len) {
			snprintf(w->error, sizeof(w->error),
				 "etcd watch: a message over %zu bytes; refused", w->max_line);
			return stream_fail(w, -EMSGSIZE);
		}
		if (w->len + take > w->cap) {
			size_t cap = w->cap ? w->cap : 4096;
			while (cap < w->len + take)
				cap *= 2;
			if (cap > w->max_line)
				cap = w->max_line;
			char *b = realloc(w->buf, cap);
			if (!b) {
				snprintf(w->error, sizeof(w->error), "etcd watch: out of memory");
				return stream_fail(w, -ENOMEM);
			}
			w->buf = b;
			w->cap = cap;
		}
		if (take)
			memcpy(w->buf + w->len, p, take);
		w->len += take;
		if (!nl)
			break;
		size_t n = w->len;
		if (n > 0 && w->buf[n - 1] == '\r')
			n--;
		w->len = 0;
		if (n > 0) {
			int rc = handle_line(w, w->buf, n);
			if (rc != 0)
				return rc;
		}
		p = nl + 1;
		len -= take + 1;
	}
	return 0;
}

/* ---- the transfer ---------------------------------------------------------- */

struct transfer {
	struct watch_stream *w;
	CURL *curl;
	const atomic_bool *stop;
	bool status_read, ok;
	char error_body[1024];
	size_t error_len;
};

static size_t on_body(char *data, size_t size, size_t n, void *arg)
{
	struct transfer *t = arg;
	size_t len = size * n;
	if (!t->status_read) {
		long status = 0;
		curl_easy_getinfo(t->curl, CURLINFO_RESPONSE_CODE, &status);
		t->ok = status == 200;
		t->status_read = true;
	}
	if (!t->ok) {
		size_t room = sizeof(t->error_body) - 1 - t->error_len;
		size_t k = len < room ? len : room;
		memcpy(t->error_body + t->error_len, data, k);
		t->error_len += k;
		return len;
	}
	return watch_stream_feed(t->w, data, len) == 0 ? len : 0;
}

static int on_progress(void *arg, curl_off_t a, curl_off_t b, curl_off_t c, curl_off_t d)
{
	struct transfer *t = arg;
	(void)a, (void)b, (void)c, (void)d;
	/* EC5: acquire, partner of the caller's store (release, or any
	 * order: the flag carries no data, only "stop"). */
	return t->stop && atomic_load_explicit(t->stop, memory_order_acquire) ? 1 : 0;
}

static char *b64(const void *bytes, size_t n)
{
	char *s = malloc(etcd_b64_len(n) + 1);
	if (s)
		etcd_b64_encode(bytes, n, s);
	return s;
}

/* {"create_request":{"key":..,"range_end":..,"start_revision":".."}}, one
 * line a range: etcd's gateway reads the request body as a stream of
 * messages, each create_request a watch of the one stream. */
static char *create_body(const struct watch_options *o)
{
	struct watch_range one = {o->key, o->key_len, o->range_end, o->range_end_len};
	const struct watch_range *r = o->n_ranges > 0 ? o->ranges : &one;
	size_t n = o->n_ranges > 0 ? o->n_ranges : 1;
	size_t cap = 1, len = 0;
	for (size_t i = 0; i < n; i++)
		cap += etcd_b64_len(r[i].key_len) +
		       (r[i].range_end ? etcd_b64_len(r[i].range_end_len) : 0) + 128;
	char *body = malloc(cap);
	for (size_t i = 0; body != NULL && i < n; i++) {
		char *key = b64(r[i].key, r[i].key_len);
		char *end = r[i].range_end ? b64(r[i].range_end, r[i].range_end_len) : NULL;
		if (key == NULL || (r[i].range_end != NULL && end == NULL)) {
			free(body);
			body = NULL;
		} else {
			int k = snprintf(body + len, cap - len,
					 "%s{\"create_request\":{\"key\":\"%s\"%s%s%s,"
					 "\"start_revision\":\"%" PRId64 "\"}}",
					 i > 0 ? "\n" : "", key, end ? ",\"range_end\":\"" : "",
					 end ? end : "", end ? "\"" : "", o->start_revision);
			len += k > 0 ? (size_t)k : 0;
		}
		free(key);
		free(end);
	}
	return body;
}

int watch_run(const struct watch_options *o,
	      int (*on_message)(void *ctx, const struct etcd_watch_message *m), void *ctx,
	      int64_t *next_revision, char *err, size_t errlen)
{
	*next_revision = o->start_revision;
	if (errlen)
		err[0] = '\0';
	/* libcurl's global set-up is the client's (etcd_client_open runs it
	 * once); a watch without a client would race it, so it asks for it
	 * the same way: an unreachable client costs no connection. */
	struct etcd_client *init = NULL;
	if (etcd_client_open(&init, o->endpoints, NULL, err, errlen) != 0)
		return -EINVAL;
	etcd_client_close(init);
	struct watch_stream w;
	watch_stream_init(&w, o->max_line, o->max_events, o->start_revision, on_message, ctx);
	char *body = create_body(o);
	CURL *curl = curl_easy_init();
	struct curl_slist *headers = curl_slist_append(NULL, "Content-Type: application/json");
	if (!body || !curl || !headers) {
		snprintf(err, errlen, "etcd watch: out of memory");
		free(body);
		if (curl)
			curl_easy_cleanup(curl);
		curl_slist_free_all(headers);
		return -ENOMEM;
	}
	struct transfer t = {.w = &w, .curl = curl, .stop = o->stop};
	curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(curl, CURLOPT_WRITEDATA, &t);
	curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(curl, CURLOPT_XFERINFODATA, &t);
	curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS,
			 o->connect_timeout_ms ? o->connect_timeout_ms : 1000L);
	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(curl, CURLOPT_TCP_NODELAY, 1L);
	int rc = -ECONNREFUSED;
	const char *p = o->endpoints;
	while (*p) {
		const char *comma = strchr(p, ',');
		size_t n = comma ? (size_t)(comma - p) : strlen(p);
		while (n > 0 && p[n - 1] == '/')
			n--;
		char url[ETCD_MAX_ENDPOINT_LEN + 16];
		snprintf(url, sizeof(url), "%.*s/v3/watch", (int)(n < ETCD_MAX_ENDPOINT_LEN ? n : ETCD_MAX_ENDPOINT_LEN), p);
		curl_easy_setopt(curl, CURLOPT_URL, url);
		CURLcode cc = curl_easy_perform(curl);
		if (w.rc != 0) {
			rc = w.rc;
			snprintf(err, errlen, "%s", w.error);
			break;
		}
		if (t.status_read && !t.ok) {
			char msg[256];
			rc = etcd_decode_error(t.error_body, t.error_len, msg, sizeof(msg));
			snprintf(err, errlen, "etcd watch %s: %s", url, msg);
			break;
		}
		if (cc == CURLE_ABORTED_BY_CALLBACK) {
			rc = -ECANCELED;
			snprintf(err, errlen, "etcd watch %s: stopped", url);
			break;
		}
		if (cc == CURLE_COULDNT_CONNECT || cc == CURLE_COULDNT_RESOLVE_HOST) {
			snprintf(err, errlen, "etcd watch %s: %s", url, curl_easy_strerror(cc));
			p = comma ? comma + 1 : p + strlen(p);
			continue;
		}
		rc = -EIO;
		snprintf(err, errlen, "etcd watch %s: the stream ended (%s); resume from revision %" PRId64,
			 url, cc == CURLE_OK ? "closed by etcd" : curl_easy_strerror(cc),
			 w.next_revision);
		break;
	}
	*next_revision = rc == -ERANGE ? w.compact_revision : w.next_revision;
	watch_stream_free(&w);
	curl_easy_cleanup(curl);
	curl_slist_free_all(headers);
	free(body);
	return rc;
}
