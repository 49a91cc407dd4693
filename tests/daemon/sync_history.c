/* etcd's history of the shards' keys: see sync_history.h.
 *
 * Design: a put of the sentinel fixes the end revision; a watch of the
 * shards/ prefix from revision 1 hands every event since in order, and
 * the callback stops the watch (returns 1) at the sentinel's put, so the
 * history read is exactly revisions 1..end. Pod values are decoded
 * strictly (coord/placement_value.h): a value that does not decode is
 * an error, not skipped. A batch key (shards/<s>/sets/<name>,
 * coord/batch_value.h) is replayed as its placements' events: the
 * reader holds, a batch key, the uids its last put held (ascending, as
 * the value has them) and diffs each put against them by a merge (a uid
 * gone: its delete; a uid new: its put; a uid kept with another
 * placement: an error), a delete deleting every one. One range at the
 * end revision counts the placements (pod keys, and each batch key's
 * lines) for the caller's cross-check. Cost: a batch key's event, a
 * search of the held keys (linear, by hash) and a merge of at most
 * 2 * BATCH_PLACEMENTS_MAX uids. */
#define _GNU_SOURCE 1

#include "sync_history.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coord/coord.h"

#define SENTINEL "~end"

static uint64_t fnv1a(const void *p, size_t n)
{
	const uint8_t *s = p;
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ s[i]) * 0x100000001b3ull;
	return h;
}

static int push(struct sync_history_reader *r, const struct sync_event *e)
{
	if (r->n == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 4096;
		struct sync_event *ev = realloc(r->ev, cap * sizeof(*ev));
		if (ev == NULL)
			return -ENOMEM;
		r->ev = ev;
		r->cap = cap;
	}
	r->ev[r->n++] = *e;
	return 0;
}

/* A placement as an event holds it: the uid, node, cpu and memory. */
static int to_event(struct sync_event *e, const char *uid, const struct placement_value *v)
{
	size_t ul = strlen(uid), nl = strlen(v->node);
	if (ul >= SYNC_NAME_MAX || nl >= SYNC_NAME_MAX)
		return -EPROTO;
	memcpy(e->name, uid, ul + 1);
	memcpy(e->node, v->node, nl + 1);
	e->cpu_milli = v->cpu_milli;
	e->mem_bytes = v->mem_bytes;
	return 0;
}

/* A batch value's placements, as events (batch_value_decode's callback). */
struct batch_read {
	struct sync_event *ev;
	size_t n;
	const struct sync_event *tmpl;
};

static int batch_line(void *ctx, const char *uid, const struct placement_value *v)
{
	struct batch_read *b = ctx;
	struct sync_event *e = &b->ev[b->n];
	*e = *b->tmpl;
	if (to_event(e, uid, v) != 0)
		return -EPROTO;
	b->n++;
	return 0;
}

/* A put or delete of the batch key kv: its placements' events, diffed
 * against what the key held. */
static int take_batch(struct sync_history_reader *r, const struct etcd_watch_event *we,
		      const struct sync_event *tmpl)
{
	const struct etcd_kv *kv = &we->kv;
	uint64_t h = fnv1a(kv->key, kv->key_len);
	struct sync_held_batch *held = NULL;
	for (size_t i = 0; i < r->n_batches && held == NULL; i++)
		if (r->batches[i].hash == h && r->batches[i].key_len == kv->key_len &&
		    memcmp(r->batches[i].key, kv->key, kv->key_len) == 0)
			held = &r->batches[i];
	struct sync_event *now = NULL;
	size_t n_now = 0;
	if (!we->deleted) {
		now = malloc(BATCH_PLACEMENTS_MAX * sizeof(*now));
		if (now == NULL)
			return -ENOMEM;
		struct batch_read b = {.ev = now, .tmpl = tmpl};
		char msg[300];
		int rc = batch_value_decode(kv->value, kv->value_len, batch_line, &b, msg,
					    sizeof(msg));
		if (rc < 0) {
			snprintf(r->err, sizeof(r->err), "%.*s: %.200s",
				 (int)(kv->key_len > 200 ? 200 : kv->key_len), kv->key,
				 rc == -EINVAL ? msg : "a uid or node name over 63 bytes");
			free(now);
			return -EPROTO;
		}
		n_now = b.n;
	}
	const struct sync_event *was = held != NULL ? held->uids : NULL;
	size_t n_was = held != NULL ? held->n : 0;
	int rc = 0;
	for (size_t i = 0, j = 0; rc == 0 && (i < n_was || j < n_now);) {
		int c = i == n_was ? 1 : j == n_now ? -1 : strcmp(was[i].name, now[j].name);
		if (c < 0) { /* gone */
			struct sync_event e = *tmpl;
			e.deleted = true;
			memcpy(e.name, was[i].name, sizeof(e.name));
			rc = push(r, &e);
			i++;
		} else if (c > 0) { /* new */
			now[j].version = 1;
			rc = push(r, &now[j]);
			j++;
		} else {
			if (strcmp(was[i].node, now[j].node) != 0 ||
			    was[i].cpu_milli != now[j].cpu_milli ||
			    was[i].mem_bytes != now[j].mem_bytes) {
				snprintf(r->err, sizeof(r->err),
					 "%.*s at revision %lld: uid %s changed its placement in "
					 "place; expected a batch key's rewrite to keep or drop it",
					 (int)(kv->key_len > 200 ? 200 : kv->key_len), kv->key,
					 (long long)kv->mod_revision,
					 now[j].name);
				rc = -EPROTO;
			}
			i++;
			j++;
		}
	}
	if (rc != 0) {
		free(now);
		return rc;
	}
	if (held == NULL && n_now > 0) {
		if (r->n_batches == r->cap_batches) {
			size_t cap = r->cap_batches ? 2 * r->cap_batches : 256;
			struct sync_held_batch *b = realloc(r->batches, cap * sizeof(*b));
			if (b == NULL) {
				free(now);
				return -ENOMEM;
			}
			r->batches = b;
			r->cap_batches = cap;
		}
		held = &r->batches[r->n_batches++];
		*held = (struct sync_held_batch){.hash = h, .key_len = kv->key_len};
		held->key = malloc(kv->key_len);
		if (held->key == NULL) {
			r->n_batches--;
			free(now);
			return -ENOMEM;
		}
		memcpy(held->key, kv->key, kv->key_len);
	}
	if (held == NULL)
		return 0; /* a delete of a key not held: nothing to replay */
	free(held->uids);
	held->uids = now;
	held->n = n_now;
	if (n_now == 0) { /* deleted: forget the key */
		free(held->key);
		*held = r->batches[--r->n_batches];
	}
	return 0;
}

void sync_history_reader_init(struct sync_history_reader *r, const char *shards)
{
	*r = (struct sync_history_reader){.shards = shards, .shards_len = strlen(shards)};
}

void sync_history_reader_free(struct sync_history_reader *r)
{
	for (size_t i = 0; i < r->n_batches; i++) {
		free(r->batches[i].key);
		free(r->batches[i].uids);
	}
	free(r->batches);
	free(r->ev);
	r->batches = NULL;
	r->ev = NULL;
	r->n = r->n_batches = 0;
}

int sync_history_take(struct sync_history_reader *r, const struct etcd_watch_event *we)
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
	} else if (tail_len > strlen(BATCH_KEY_DIR) &&
		   memcmp(tail, BATCH_KEY_DIR, strlen(BATCH_KEY_DIR)) == 0) {
		e.kind = SYNC_EVENT_POD;
		return take_batch(r, we, &e);
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
	return push(r, &e);
}

static int on_message(void *ctx, const struct etcd_watch_message *m)
{
	struct sync_history_reader *r = ctx;
	for (size_t i = 0; i < m->n_events; i++) {
		int rc = sync_history_take(r, &m->events[i]);
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
		for (size_t i = 0; i < res.n_kvs && rc == 0; i++) {
			const struct etcd_kv *kv = &res.kvs[i];
			const char *k = (const char *)kv->key + sl;
			size_t kl = kv->key_len - (size_t)sl;
			pods += memmem(k, kl, "/pods/", 6) != NULL;
			if (memmem(k, kl, "/" BATCH_KEY_DIR, strlen("/" BATCH_KEY_DIR)) != NULL) {
				char msg[300];
				int count = batch_value_decode(kv->value, kv->value_len, NULL, NULL,
							       msg, sizeof(msg));
				if (count < 0) {
					snprintf(err, errlen, "%.*s: %s", (int)kv->key_len,
						 (const char *)kv->key, msg);
					rc = -EPROTO;
				} else {
					pods += (size_t)count;
				}
			}
		}
		if (rc != 0) {
			etcd_range_result_free(&res);
			etcd_client_close(ec);
			return rc;
		}
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

	struct sync_history_reader r;
	sync_history_reader_init(&r, shards);
	struct watch_options wo = {.endpoints = endpoints, .key = shards,
				   .key_len = (size_t)sl, .range_end = end,
				   .range_end_len = (size_t)sl, .start_revision = 1,
				   .max_line = 256u << 20, .max_events = 1u << 22};
	int64_t next = 0;
	rc = watch_run(&wo, on_message, &r, &next, err, errlen);
	if (rc == 1) {
		*events = r.ev;
		*n = r.n;
		r.ev = NULL;
		sync_history_reader_free(&r);
		return 0;
	}
	if (r.rc != 0 && r.err[0] != '\0')
		snprintf(err, errlen, "%s", r.err);
	sync_history_reader_free(&r);
	return rc > 0 ? -EPROTO : rc != 0 ? rc : -EIO;
}
