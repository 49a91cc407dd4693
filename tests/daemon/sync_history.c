/* etcd's history of the shards' keys: see sync_history.h.
 *
 * Design: a put of the sentinel fixes the end revision; a watch of the
 * shards/ prefix from revision 1 hands every event since in order, and
 * the callback stops the watch (returns 1) at the sentinel's put, so the
 * history read is exactly revisions 1..end. Pod values are decoded
 * strictly (coord/placement_value.h): a value that does not decode is
 * an error, not skipped. One range at the end revision counts the pod
 * keys for the caller's cross-check. */
#define _GNU_SOURCE 1

#include "sync_history.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coord/coord.h"

#define SENTINEL "~end"

struct reader {
	const char *shards; /* "<prefix>shards/" */
	size_t shards_len;
	struct sync_event *ev;
	size_t n, cap;
	int rc;
	char err[256];
};

/* One event of the shards' keys, or nothing for another key; 1 at the
 * sentinel. */
static int take(struct reader *r, const struct etcd_watch_event *we)
{
	const struct etcd_kv *kv = &we->kv;
	if (kv->key_len <= r->shards_len || memcmp(kv->key, r->shards, r->shards_len) != 0)
		return 0;
	const char *rest = (const char *)kv->key + r->shards_len;
	size_t rest_len = kv->key_len - r->shards_len;
	if (rest_len == strlen(SENTINEL) && memcmp(rest, SENTINEL, rest_len) == 0)
		return 1;
	const char *slash = memchr(rest, '/', rest_len);
	if (slash == NULL || (size_t)(slash - rest) >= SYNC_NAME_MAX)
		return 0;
	const char *tail = slash + 1;
	size_t tail_len = rest_len - (size_t)(tail - rest);
	struct sync_event e = {.revision = kv->mod_revision, .deleted = we->deleted,
			       .version = kv->version};
	memcpy(e.shard, rest, (size_t)(slash - rest));
	if (tail_len == 5 && memcmp(tail, "owner", 5) == 0) {
		e.kind = SYNC_EVENT_OWNER;
		if (!we->deleted) {
			if (kv->value_len >= SYNC_NAME_MAX) {
				snprintf(r->err, sizeof(r->err), "%.*s: an owner of %zu bytes",
					 (int)kv->key_len, kv->key, kv->value_len);
				return -EPROTO;
			}
			memcpy(e.name, kv->value, kv->value_len);
		}
	} else if (tail_len > 5 && memcmp(tail, "pods/", 5) == 0) {
		e.kind = SYNC_EVENT_POD;
		if (tail_len - 5 >= SYNC_NAME_MAX) {
			snprintf(r->err, sizeof(r->err), "%.*s: a uid of %zu bytes", (int)kv->key_len,
				 kv->key, tail_len - 5);
			return -EPROTO;
		}
		memcpy(e.name, tail + 5, tail_len - 5);
		if (!we->deleted) {
			struct placement_value v;
			char msg[200];
			if (placement_value_decode(kv->value, kv->value_len, &v, msg, sizeof(msg)) !=
			    0) {
				snprintf(r->err, sizeof(r->err), "%.*s: %s", (int)kv->key_len, kv->key,
					 msg);
				return -EPROTO;
			}
			size_t nl = strlen(v.node);
			if (nl >= SYNC_NAME_MAX) {
				snprintf(r->err, sizeof(r->err), "%.*s: a node name of %zu bytes",
					 (int)kv->key_len, kv->key, nl);
				return -EPROTO;
			}
			memcpy(e.node, v.node, nl + 1);
			e.cpu_milli = v.cpu_milli;
			e.mem_bytes = v.mem_bytes;
		}
	} else {
		return 0;
	}
	if (r->n == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 4096;
		struct sync_event *ev = realloc(r->ev, cap * sizeof(*ev));
		if (ev == NULL)
			return -ENOMEM;
		r->ev = ev;
		r->cap = cap;
	}
	r->ev[r->n++] = e;
	return 0;
}

static int on_message(void *ctx, const struct etcd_watch_message *m)
{
	struct reader *r = ctx;
	for (size_t i = 0; i < m->n_events; i++) {
		int rc = take(r, &m->events[i]);
		if (rc != 0) {
			r->rc = rc;
			return rc;
		}
	}
	return 0;
}

int sync_history_read(const char *endpoints, const char *prefix, struct sync_event **events,
		      size_t *n, int64_t *revision, size_t *pods_at_end, char *err,
		      size_t errlen)
{
	char shards[256], key[300], end[256];
	int sl = snprintf(shards, sizeof(shards), "%sshards/", prefix);
	if (sl <= 0 || (size_t)sl >= sizeof(shards)) {
		snprintf(err, errlen, "prefix %s: too long", prefix);
		return -EINVAL;
	}
	memcpy(end, shards, (size_t)sl);
	end[sl - 1] = '/' + 1;
	snprintf(key, sizeof(key), "%s%s", shards, SENTINEL);
	struct etcd_client *ec;
	struct etcd_client_options o = {.timeout_ms = 5000, .max_response_bytes = 256u << 20};
	int rc = etcd_client_open(&ec, endpoints, &o, err, errlen);
	if (rc != 0)
		return rc;
	rc = etcd_put(ec, key, strlen(key), "checker", 7, 0, revision);
	if (rc != 0) {
		snprintf(err, errlen, "put %s: %s", key, etcd_client_error(ec));
		etcd_client_close(ec);
		return rc;
	}
	/* The pod keys at the sentinel's revision, in pages. */
	size_t pods = 0;
	char from[300];
	size_t from_len = (size_t)sl;
	memcpy(from, shards, from_len);
	for (;;) {
		struct etcd_range_result res;
		rc = etcd_range_at(ec, from, from_len, end, (size_t)sl, 1000, *revision, &res);
		if (rc != 0) {
			snprintf(err, errlen, "range %s at %lld: %s", shards, (long long)*revision,
				 etcd_client_error(ec));
			etcd_client_close(ec);
			return rc;
		}
		for (size_t i = 0; i < res.n_kvs; i++)
			pods += memmem(res.kvs[i].key + sl, res.kvs[i].key_len - (size_t)sl, "/pods/",
				       6) != NULL;
		bool more = res.more && res.n_kvs > 0;
		if (more) {
			const struct etcd_kv *last = &res.kvs[res.n_kvs - 1];
			if (last->key_len + 1 > sizeof(from)) {
				etcd_range_result_free(&res);
				etcd_client_close(ec);
				snprintf(err, errlen, "a key of %zu bytes", last->key_len);
				return -EPROTO;
			}
			memcpy(from, last->key, last->key_len);
			from[last->key_len] = '\0'; /* the next key after it */
			from_len = last->key_len + 1;
		}
		etcd_range_result_free(&res);
		if (!more)
			break;
	}
	etcd_client_close(ec);
	*pods_at_end = pods;

	struct reader r = {.shards = shards, .shards_len = (size_t)sl};
	struct watch_options wo = {.endpoints = endpoints, .key = shards,
				   .key_len = (size_t)sl, .range_end = end,
				   .range_end_len = (size_t)sl, .start_revision = 1,
				   .max_line = 256u << 20, .max_events = 1u << 22};
	int64_t next = 0;
	rc = watch_run(&wo, on_message, &r, &next, err, errlen);
	if (rc == 1) {
		*events = r.ev;
		*n = r.n;
		return 0;
	}
	if (r.rc != 0 && r.err[0] != '\0')
		snprintf(err, errlen, "%s", r.err);
	free(r.ev);
	return rc > 0 ? -EPROTO : rc != 0 ? rc : -EIO;
}
