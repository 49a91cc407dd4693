/* A shard's rebuild from etcd (coord/rebuild.h): paged ranges of
 * shards/<s>/pods/, shards/<s>/sets/ (at most REBUILD_BATCH_PAGE keys a
 * page: their values are larger) then shards/<s>/nodes/, every page at
 * the revision the first one answered at, each page starting just past
 * the last key of the one before (that key and a zero byte). A compaction past that revision
 * between pages (-ERANGE) restarts the whole read at the newest revision,
 * after telling the caller to forget what it was handed.
 *
 * Invariants: every item is handed once per pass, in key order (a batch's
 * placements in its lines' order), pods before nodes; the revision
 * returned is the one every page was read at. Cost: one range round trip
 * a page and one decode a pod (two for a batch's: batch_value_decode
 * checks the whole value, then walks it). */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "coord/rebuild.h"

#define KEY_MAX 512

/* What a prefix holds. */
enum read_what {
	READ_PODS,
	READ_BATCH,
	READ_NODES,
};

/* A batch key's placements, one item each (batch_value_decode's
 * callback); the caller's non-zero return kept in rc. */
struct batch_walk {
	const struct rebuild_callbacks *cb;
	struct rebuild_item it;
	int rc;
};

static int batch_item(void *ctx, const char *uid, const struct placement_value *v)
{
	struct batch_walk *w = ctx;
	w->it.name = uid;
	w->it.name_len = strlen(uid);
	w->it.pod = v;
	w->rc = w->cb->item(w->cb->ctx, &w->it);
	return w->rc != 0 ? -ECANCELED : 0;
}

/* One prefix at *revision (0: the first page fixes it). */
static int read_prefix(struct etcd_client *c, const char *prefix, enum read_what what,
		       int64_t page, const struct rebuild_callbacks *cb, int64_t *revision,
		       char *err, size_t errlen)
{
	enum rebuild_kind kind = what == READ_NODES ? REBUILD_NODE : REBUILD_POD;
	if (what == READ_BATCH && page > REBUILD_BATCH_PAGE)
		page = REBUILD_BATCH_PAGE;
	size_t plen = strlen(prefix);
	uint8_t end[KEY_MAX], from[KEY_MAX + 1];
	size_t end_len = etcd_prefix_end(prefix, plen, end);
	memcpy(from, prefix, plen);
	size_t from_len = plen;
	for (;;) {
		struct etcd_range_result r;
		int rc = etcd_range_at(c, from, from_len, end, end_len, page, *revision, &r);
		if (rc != 0) {
			snprintf(err, errlen, "rebuild %s: %s", prefix, etcd_client_error(c));
			return rc;
		}
		if (*revision == 0)
			*revision = r.revision;
		for (size_t i = 0; rc == 0 && i < r.n_kvs; i++) {
			const struct etcd_kv *kv = &r.kvs[i];
			const char *name = (const char *)kv->key + plen;
			size_t name_len = kv->key_len - plen;
			bool ok = kv->key_len > plen && memcmp(kv->key, prefix, plen) == 0 &&
				  kv->key_len <= KEY_MAX && !memchr(name, '/', name_len) &&
				  !memchr(name, '\0', name_len);
			if (!ok) {
				snprintf(err, errlen,
					 "rebuild %s: key \"%.80s\": expected the prefix and a "
					 "name (no '/', no NUL), %d bytes at most in all",
					 prefix, (const char *)kv->key, KEY_MAX);
				rc = -EPROTO;
				break;
			}
			struct placement_value pod;
			struct rebuild_item it = {.kind = kind, .name = name, .name_len = name_len,
						  .mod_revision = kv->mod_revision};
			if (what == READ_BATCH) {
				char msg[300];
				struct batch_walk w = {.cb = cb, .it = it};
				w.it.batch = name;
				w.it.batch_len = name_len;
				int n = batch_value_decode(kv->value, kv->value_len, batch_item, &w,
							   msg, sizeof(msg));
				if (n == -EINVAL) {
					snprintf(err, errlen, "rebuild: key %.200s: %s",
						 (const char *)kv->key, msg);
					rc = -EPROTO;
				} else if (n < 0) {
					rc = w.rc;
					snprintf(err, errlen,
						 "rebuild: the caller stopped at %.200s, uid %s (%d)",
						 (const char *)kv->key, w.it.name, rc);
				}
				continue;
			}
			if (kind == REBUILD_POD) {
				char msg[200];
				if (placement_value_decode(kv->value, kv->value_len, &pod, msg,
							   sizeof(msg)) != 0) {
					snprintf(err, errlen, "rebuild: key %.200s: %s",
						 (const char *)kv->key, msg);
					rc = -EPROTO;
					break;
				}
				it.pod = &pod;
			} else {
				it.value = kv->value;
				it.value_len = kv->value_len;
			}
			rc = cb->item(cb->ctx, &it);
			if (rc != 0)
				snprintf(err, errlen, "rebuild: the caller stopped at %.200s (%d)",
					 (const char *)kv->key, rc);
		}
		bool more = rc == 0 && r.more && r.n_kvs > 0;
		if (more) {
			const struct etcd_kv *last = &r.kvs[r.n_kvs - 1];
			memcpy(from, last->key, last->key_len); /* checked above: <= KEY_MAX */
			from[last->key_len] = 0;
			from_len = last->key_len + 1;
		}
		etcd_range_result_free(&r);
		if (rc != 0 || !more)
			return rc;
	}
}

int coord_rebuild_shard(struct etcd_client *c, const char *prefix, uint32_t shard, int64_t page,
			const struct rebuild_callbacks *cb, int64_t *revision, char *err,
			size_t errlen)
{
	char name[16];
	snprintf(name, sizeof(name), "%" PRIu32, shard);
	return coord_rebuild_shard_named(c, prefix, name, page, cb, revision, err, errlen);
}

int coord_rebuild_shard_named(struct etcd_client *c, const char *prefix, const char *shard,
			      int64_t page, const struct rebuild_callbacks *cb,
			      int64_t *revision, char *err, size_t errlen)
{
	char pods[KEY_MAX / 2], batch[KEY_MAX / 2], nodes[KEY_MAX / 2];
	if (errlen)
		err[0] = '\0';
	int a = snprintf(pods, sizeof(pods), "%sshards/%s/pods/", prefix, shard);
	int b = snprintf(nodes, sizeof(nodes), "%sshards/%s/nodes/", prefix, shard);
	int d = snprintf(batch, sizeof(batch), "%sshards/%s/" BATCH_KEY_DIR, prefix, shard);
	if (a < 0 || b < 0 || d < 0 || (size_t)b >= sizeof(nodes) || (size_t)d >= sizeof(batch)) {
		snprintf(err, errlen, "rebuild: prefix \"%.60s\": expected at most %d bytes",
			 prefix, KEY_MAX / 2 - 32);
		return -EINVAL;
	}
	if (page <= 0)
		page = REBUILD_DEFAULT_PAGE;
	for (int pass = 0;; pass++) {
		int64_t rev = 0;
		int rc = read_prefix(c, pods, READ_PODS, page, cb, &rev, err, errlen);
		if (rc == 0)
			rc = read_prefix(c, batch, READ_BATCH, page, cb, &rev, err, errlen);
		if (rc == 0)
			rc = read_prefix(c, nodes, READ_NODES, page, cb, &rev, err, errlen);
		if (rc == 0) {
			*revision = rev;
			return 0;
		}
		if (rc != -ERANGE || pass == REBUILD_MAX_RESTARTS)
			return rc;
		if (cb->reset)
			cb->reset(cb->ctx);
	}
}
