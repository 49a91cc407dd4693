/* The etcd client (coord/etcd_client.h): one libcurl easy handle, whose
 * connection is kept and reused, POSTing JSON bodies to etcd 3.4's
 * gRPC-gateway (/v3/kv/..., /v3/lease/..., /v3/maintenance/status).
 *
 * Invariants: a request over ETCD_MAX_REQUEST_BYTES or with a list over
 * ETCD_MAX_TXN_OPS is refused before anything is sent; a response is
 * collected into a buffer that never grows past max_response_bytes (the
 * write callback stops the transfer instead); a request is sent to the
 * next endpoint only when the previous one refused the connection or could
 * not be reached (curl's COULDNT_CONNECT), never after it may have
 * arrived, so no request is applied twice by the client's own retry
 * (libcurl itself sends a request again, once, on a fresh connection when
 * a kept one turns out closed before any byte of an answer came: a
 * transaction that must not apply twice carries a compare that makes it
 * idempotent, as tests/coord/test_etcd_fence.c's batches do).
 * Cost: one HTTP round trip a call on a kept connection, plus the JSON
 * codec (coord/etcd_codec.c). Not thread-safe: one thread a client. */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "coord/etcd_codec.h"

struct etcd_client {
	CURL *curl;
	struct curl_slist *headers;
	char *endpoints[ETCD_MAX_ENDPOINTS];
	size_t n_endpoints;
	size_t current;
	size_t max_response;
	/* The response being received. */
	char *buf;
	size_t len;
	size_t cap;
	bool over;
	char error[512];
};

static void set_error(struct etcd_client *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void set_error(struct etcd_client *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->error, sizeof(c->error), fmt, ap);
	va_end(ap);
}

static size_t on_data(char *data, size_t size, size_t n, void *arg)
{
	struct etcd_client *c = arg;
	size_t add = size * n;
	if (add > c->max_response - c->len) {
		c->over = true;
		return 0; /* curl stops: CURLE_WRITE_ERROR */
	}
	if (c->len + add + 1 > c->cap) {
		size_t cap = c->cap ? c->cap : 4096;
		while (cap < c->len + add + 1)
			cap *= 2;
		char *b = realloc(c->buf, cap);
		if (!b)
			return 0;
		c->buf = b;
		c->cap = cap;
	}
	memcpy(c->buf + c->len, data, add);
	c->len += add;
	c->buf[c->len] = '\0';
	return add;
}

/* libcurl's global set-up, once per process, whichever thread opens the
 * first client. */
static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_rc;

static void curl_init_once(void)
{
	curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

static int curl_ready(char *err, size_t errlen)
{
	pthread_once(&curl_once, curl_init_once);
	if (curl_init_rc != CURLE_OK) {
		snprintf(err, errlen, "etcd: libcurl did not initialise: %s",
			 curl_easy_strerror(curl_init_rc));
		return -ENOMEM;
	}
	return 0;
}

int etcd_client_open(struct etcd_client **out, const char *endpoints,
		     const struct etcd_client_options *opts, char *err, size_t errlen)
{
	*out = NULL;
	if (errlen)
		err[0] = '\0';
	if (!endpoints || !*endpoints) {
		snprintf(err, errlen, "etcd endpoints: empty; expected URLs, comma separated");
		return -EINVAL;
	}
	int rc = curl_ready(err, errlen);
	if (rc != 0)
		return rc;
	struct etcd_client *c = calloc(1, sizeof(*c));
	if (!c) {
		snprintf(err, errlen, "etcd: out of memory");
		return -ENOMEM;
	}
	const char *p = endpoints;
	while (*p) {
		const char *comma = strchr(p, ',');
		size_t n = comma ? (size_t)(comma - p) : strlen(p);
		if (n == 0 || n > ETCD_MAX_ENDPOINT_LEN || c->n_endpoints == ETCD_MAX_ENDPOINTS ||
		    (strncmp(p, "http://", 7) != 0 && strncmp(p, "https://", 8) != 0)) {
			snprintf(err, errlen,
				 "etcd endpoints \"%.200s\": expected 1 to %d http:// or https:// "
				 "URLs of at most %d bytes, comma separated",
				 endpoints, ETCD_MAX_ENDPOINTS, ETCD_MAX_ENDPOINT_LEN);
			etcd_client_close(c);
			return -EINVAL;
		}
		while (n > 0 && p[n - 1] == '/')
			n--; /* the paths below start with '/' */
		c->endpoints[c->n_endpoints] = strndup(p, n);
		if (!c->endpoints[c->n_endpoints++]) {
			snprintf(err, errlen, "etcd: out of memory");
			etcd_client_close(c);
			return -ENOMEM;
		}
		p = comma ? comma + 1 : p + strlen(p);
	}
	long timeout = opts && opts->timeout_ms ? opts->timeout_ms : 5000;
	long connect = opts && opts->connect_timeout_ms ? opts->connect_timeout_ms : 1000;
	c->max_response = opts && opts->max_response_bytes ? opts->max_response_bytes
							   : ETCD_DEFAULT_MAX_RESPONSE;
	c->curl = curl_easy_init();
	c->headers = curl_slist_append(NULL, "Content-Type: application/json");
	if (!c->curl || !c->headers) {
		snprintf(err, errlen, "etcd: libcurl could not make a handle");
		etcd_client_close(c);
		return -ENOMEM;
	}
	curl_easy_setopt(c->curl, CURLOPT_HTTPHEADER, c->headers);
	curl_easy_setopt(c->curl, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(c->curl, CURLOPT_WRITEDATA, c);
	curl_easy_setopt(c->curl, CURLOPT_TIMEOUT_MS, timeout);
	curl_easy_setopt(c->curl, CURLOPT_CONNECTTIMEOUT_MS, connect);
	curl_easy_setopt(c->curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c->curl, CURLOPT_TCP_NODELAY, 1L);
	*out = c;
	return 0;
}

void etcd_client_close(struct etcd_client *c)
{
	if (!c)
		return;
	if (c->curl)
		curl_easy_cleanup(c->curl);
	curl_slist_free_all(c->headers);
	for (size_t i = 0; i < c->n_endpoints; i++)
		free(c->endpoints[i]);
	free(c->buf);
	free(c);
}

const char *etcd_client_error(const struct etcd_client *c)
{
	return c->error;
}

size_t etcd_client_current(const struct etcd_client *c)
{
	return c->current;
}

size_t etcd_client_endpoints(const struct etcd_client *c)
{
	return c->n_endpoints;
}

void etcd_client_set_timeout(struct etcd_client *c, long timeout_ms)
{
	curl_easy_setopt(c->curl, CURLOPT_TIMEOUT_MS, timeout_ms > 0 ? timeout_ms : 1L);
}

/* One POST to endpoint i. 0 with the answer decoded into out; a negative
 * errno otherwise. *unreached is set when the request surely never got
 * there (the connection was not made), which alone allows the next
 * endpoint. */
static int post_one(struct etcd_client *c, size_t i, const char *path, const char *body,
		    enum etcd_resp_kind kind, struct etcd_response *out, bool *unreached)
{
	char url[512];
	*unreached = false;
	snprintf(url, sizeof(url), "%s%s", c->endpoints[i], path);
	c->len = 0;
	c->over = false;
	if (c->buf)
		c->buf[0] = '\0';
	curl_easy_setopt(c->curl, CURLOPT_URL, url);
	curl_easy_setopt(c->curl, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(c->curl, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
	CURLcode cc = curl_easy_perform(c->curl);
	if (cc != CURLE_OK) {
		if (c->over) {
			set_error(c, "etcd %s%s: the response exceeds %zu bytes; refused", c->endpoints[i],
				  path, c->max_response);
			return -EMSGSIZE;
		}
		set_error(c, "etcd %s%s: %s", c->endpoints[i], path, curl_easy_strerror(cc));
		if (cc == CURLE_COULDNT_CONNECT || cc == CURLE_COULDNT_RESOLVE_HOST) {
			*unreached = true;
			return -ECONNREFUSED;
		}
		if (cc == CURLE_OPERATION_TIMEDOUT)
			return -ETIMEDOUT;
		if (cc == CURLE_OUT_OF_MEMORY)
			return -ENOMEM;
		return -EIO;
	}
	long status = 0;
	curl_easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, &status);
	char msg[256];
	const char *text = c->buf ? c->buf : "";
	if (status != 200) {
		int rc = etcd_decode_error(text, c->len, msg, sizeof(msg));
		set_error(c, "etcd %s%s: HTTP %ld: %s", c->endpoints[i], path, status, msg);
		return rc;
	}
	int rc = etcd_decode_response(kind, text, c->len, out, msg, sizeof(msg));
	if (rc != 0)
		set_error(c, "etcd %s%s: a response etcd does not send: %s", c->endpoints[i], path,
			  msg);
	return rc;
}

/* body is freed here. Tries the endpoints from the current one on, each
 * once, moving on only past one that could not be reached. */
static int post(struct etcd_client *c, const char *path, char *body, enum etcd_resp_kind kind,
		struct etcd_response *out)
{
	memset(out, 0, sizeof(*out));
	c->error[0] = '\0';
	if (!body) {
		set_error(c, "etcd %s: out of memory building the request", path);
		return -ENOMEM;
	}
	size_t n = strlen(body);
	if (n > ETCD_MAX_REQUEST_BYTES) {
		set_error(c, "etcd %s: the request is %zu bytes, over etcd's %u-byte limit "
			     "(--max-request-bytes); refused before sending",
			  path, n, ETCD_MAX_REQUEST_BYTES);
		free(body);
		return -E2BIG;
	}
	int rc = -ECONNREFUSED;
	for (size_t k = 0; k < c->n_endpoints; k++) {
		size_t i = (c->current + k) % c->n_endpoints;
		bool unreached;
		rc = post_one(c, i, path, body, kind, out, &unreached);
		if (!unreached) {
			c->current = i;
			break;
		}
	}
	if (rc == -ECONNREFUSED && c->n_endpoints > 1) {
		char last[sizeof(c->error)];
		memcpy(last, c->error, sizeof(last));
		set_error(c, "etcd: none of %zu endpoints could be reached (last: %s)",
			  c->n_endpoints, last);
	}
	free(body);
	return rc;
}

int etcd_lease_grant(struct etcd_client *c, int64_t ttl_s, int64_t *id, int64_t *granted_ttl)
{
	struct etcd_response r;
	int rc = post(c, "/v3/lease/grant", etcd_encode_lease_grant(ttl_s), ETCD_RESP_LEASE_GRANT,
		      &r);
	if (rc == 0 && r.lease_id == 0) {
		set_error(c, "etcd /v3/lease/grant: the answer has no lease ID");
		rc = -EPROTO;
	}
	if (rc == 0) {
		*id = r.lease_id;
		if (granted_ttl)
			*granted_ttl = r.ttl;
	}
	return rc;
}

int etcd_lease_keepalive(struct etcd_client *c, int64_t id, int64_t *ttl)
{
	struct etcd_response r;
	int rc = post(c, "/v3/lease/keepalive", etcd_encode_lease_id(id), ETCD_RESP_LEASE_KEEPALIVE,
		      &r);
	/* An expired or revoked lease: the answer carries no TTL (0). */
	if (rc == 0 && r.ttl <= 0) {
		set_error(c, "etcd /v3/lease/keepalive: lease %lld has expired or was revoked",
			  (long long)id);
		rc = -ENOENT;
	}
	if (rc == 0 && ttl)
		*ttl = r.ttl;
	return rc;
}

int etcd_lease_revoke(struct etcd_client *c, int64_t id)
{
	struct etcd_response r;
	return post(c, "/v3/lease/revoke", etcd_encode_lease_id(id), ETCD_RESP_LEASE_REVOKE, &r);
}

int etcd_lease_time_to_live(struct etcd_client *c, int64_t id, int64_t *ttl_left,
			    int64_t *granted_ttl)
{
	struct etcd_response r;
	int rc = post(c, "/v3/lease/timetolive", etcd_encode_lease_id(id), ETCD_RESP_LEASE_TTL,
		      &r);
	if (rc == 0 && r.ttl < 0) {
		set_error(c, "etcd /v3/lease/timetolive: lease %lld has expired or was revoked",
			  (long long)id);
		rc = -ENOENT;
	}
	if (rc == 0 && ttl_left)
		*ttl_left = r.ttl;
	if (rc == 0 && granted_ttl)
		*granted_ttl = r.granted_ttl;
	return rc;
}

int etcd_put(struct etcd_client *c, const void *key, size_t key_len, const void *value,
	     size_t value_len, int64_t lease, int64_t *revision)
{
	struct etcd_response r;
	int rc = post(c, "/v3/kv/put", etcd_encode_put(key, key_len, value, value_len, lease),
		      ETCD_RESP_PUT, &r);
	if (rc == 0 && revision)
		*revision = r.revision;
	return rc;
}

int etcd_range(struct etcd_client *c, const void *key, size_t key_len, const void *range_end,
	       size_t range_end_len, int64_t limit, struct etcd_range_result *out)
{
	struct etcd_response r;
	int rc = post(c, "/v3/kv/range",
		      etcd_encode_range(key, key_len, range_end, range_end_len, limit),
		      ETCD_RESP_RANGE, &r);
	*out = r.range;
	return rc;
}

int etcd_range_at(struct etcd_client *c, const void *key, size_t key_len, const void *range_end,
		  size_t range_end_len, int64_t limit, int64_t revision,
		  struct etcd_range_result *out)
{
	struct etcd_response r;
	int rc = post(c, "/v3/kv/range",
		      etcd_encode_range_at(key, key_len, range_end, range_end_len, limit, revision),
		      ETCD_RESP_RANGE, &r);
	*out = r.range;
	return rc;
}

int etcd_compact(struct etcd_client *c, int64_t revision)
{
	struct etcd_response r;
	char body[64];
	snprintf(body, sizeof(body), "{\"revision\":\"%lld\"}", (long long)revision);
	/* The answer is a header alone, as a put's. */
	return post(c, "/v3/kv/compaction", strdup(body), ETCD_RESP_PUT, &r);
}

int etcd_delete(struct etcd_client *c, const void *key, size_t key_len, const void *range_end,
		size_t range_end_len, int64_t *deleted)
{
	struct etcd_response r;
	int rc = post(c, "/v3/kv/deleterange",
		      etcd_encode_delete(key, key_len, range_end, range_end_len), ETCD_RESP_DELETE,
		      &r);
	if (rc == 0 && deleted)
		*deleted = r.deleted;
	return rc;
}

int etcd_txn(struct etcd_client *c, const struct etcd_txn *txn, struct etcd_txn_result *out)
{
	memset(out, 0, sizeof(*out));
	if (txn->n_compare > ETCD_MAX_TXN_OPS || txn->n_success > ETCD_MAX_TXN_OPS ||
	    txn->n_failure > ETCD_MAX_TXN_OPS) {
		set_error(c,
			  "etcd /v3/kv/txn: %zu compares, %zu success and %zu failure operations; "
			  "etcd takes at most %d in each (--max-txn-ops); refused before sending",
			  txn->n_compare, txn->n_success, txn->n_failure, ETCD_MAX_TXN_OPS);
		return -E2BIG;
	}
	struct etcd_response r;
	char *body = etcd_encode_txn(txn);
	if (!body) {
		/* Out of memory, or a compare or operation of no known kind. */
		set_error(c, "etcd /v3/kv/txn: the transaction could not be encoded "
			     "(a compare target or result, or an operation kind, out of range)");
		return -EINVAL;
	}
	int rc = post(c, "/v3/kv/txn", body, ETCD_RESP_TXN, &r);
	*out = r.txn;
	return rc;
}

int etcd_member_status(struct etcd_client *c, size_t i, uint64_t *member_id,
		       uint64_t *leader_id)
{
	c->error[0] = '\0';
	if (i >= c->n_endpoints) {
		set_error(c, "etcd: endpoint %zu: the client has %zu", i, c->n_endpoints);
		return -EINVAL;
	}
	char *body = strdup("{}");
	if (!body)
		return -ENOMEM;
	struct etcd_response r;
	bool unreached;
	int rc = post_one(c, i, "/v3/maintenance/status", body, ETCD_RESP_STATUS, &r, &unreached);
	free(body);
	if (rc == 0) {
		*member_id = r.member_id;
		*leader_id = r.leader_id;
	}
	return rc;
}

size_t etcd_prefix_end(const void *prefix, size_t len, uint8_t *out)
{
	const uint8_t *p = prefix;
	for (size_t i = len; i-- > 0;) {
		if (p[i] != 0xff) {
			memcpy(out, p, i);
			out[i] = (uint8_t)(p[i] + 1);
			return i + 1;
		}
	}
	out[0] = 0;
	return 1;
}
