/* Quota by escrow through etcd: see coord/quota_escrow_round.h.
 *
 * Design: the read is one transaction without compares whose success list
 * ranges the queue's keys (quota/<queue>/, one range) and each shard's
 * owner key, so everything is seen at one revision; each value is decoded
 * strictly (a value that does not decode stops the round: a hold cannot be
 * known without it). The plan is per cell (flavor, resource) of the
 * queue's nominal quota, shards in the order given. The write is one
 * transaction; its compares name only the written shards' keys, which is
 * enough (coord/quota_escrow.h: between two coordinator writes a hold
 * only falls or stays).
 *
 * Memory: the round's arrays (cells x shards, about 140 KiB) on the heap;
 * the write's keys and values allocated for its transaction and freed.
 */
#include "coord/quota_escrow_round.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KEY_MAX 640
#define PREFIX_MAX 256

struct quota_escrow_round {
	char prefix[PREFIX_MAX];
	char queue[QUOTA_ESCROW_QUEUE_MAX + 1];
	size_t n, n_cells, n_writes;
	struct quota_escrow_value nominal;
	struct quota_escrow_value scratch; /* one decoded value */
	char shards[QUOTA_ESCROW_ROUND_SHARDS][SHARD_NAME_MAX];
	int64_t owner_mod[QUOTA_ESCROW_ROUND_SHARDS];
	int64_t slice_mod[QUOTA_ESCROW_ROUND_SHARDS];
	int64_t ack_mod[QUOTA_ESCROW_ROUND_SHARDS];
	int64_t ack_revision[QUOTA_ESCROW_ROUND_SHARDS];
	bool has_ack[QUOTA_ESCROW_ROUND_SHARDS];
	bool write[QUOTA_ESCROW_ROUND_SHARDS];
	/* [shard][cell] */
	int64_t granted[QUOTA_ESCROW_ROUND_SHARDS][QUOTA_ESCROW_CELLS];
	int64_t acked[QUOTA_ESCROW_ROUND_SHARDS][QUOTA_ESCROW_CELLS];
	int64_t use[QUOTA_ESCROW_ROUND_SHARDS][QUOTA_ESCROW_CELLS];
	int64_t more[QUOTA_ESCROW_ROUND_SHARDS][QUOTA_ESCROW_CELLS];
	int64_t planned[QUOTA_ESCROW_ROUND_SHARDS][QUOTA_ESCROW_CELLS];
};

struct quota_escrow_round *quota_escrow_round_new(void)
{
	return calloc(1, sizeof(struct quota_escrow_round));
}

void quota_escrow_round_free(struct quota_escrow_round *r)
{
	free(r);
}

static bool queue_ok(const char *q)
{
	size_t n = q != NULL ? strlen(q) : 0;
	if (n == 0 || n > QUOTA_ESCROW_QUEUE_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((q[i] >= 'a' && q[i] <= 'z') || (q[i] >= '0' && q[i] <= '9') || q[i] == '-' ||
		      q[i] == '.'))
			return false;
	return true;
}

/* prefix + a + b + c into buf (KEY_MAX); its length. */
static size_t key3(char *buf, const char *prefix, const char *a, const char *b, const char *c)
{
	int n = snprintf(buf, KEY_MAX, "%s%s%s%s", prefix, a, b, c);
	return n < 0 ? 0 : (size_t)n < KEY_MAX ? (size_t)n : KEY_MAX - 1;
}

static size_t quota_key(char *buf, const char *prefix, const char *queue, const char *shard,
			const char *suffix)
{
	int n = snprintf(buf, KEY_MAX, "%squota/%s/%s%s", prefix, queue, shard, suffix);
	return n < 0 ? 0 : (size_t)n < KEY_MAX ? (size_t)n : KEY_MAX - 1;
}

static int cell_of(const struct quota_escrow_value *nominal, const struct quota_escrow_cell *c)
{
	for (size_t j = 0; j < nominal->n; j++)
		if (strcmp(nominal->cells[j].flavor, c->flavor) == 0 &&
		    strcmp(nominal->cells[j].resource, c->resource) == 0)
			return (int)j;
	return -1;
}

static int shard_of(const struct quota_escrow_round *r, const char *s, size_t len)
{
	for (size_t i = 0; i < r->n; i++)
		if (strlen(r->shards[i]) == len && memcmp(r->shards[i], s, len) == 0)
			return (int)i;
	return -1;
}

/* One key of quota/<queue>/: its values into the round. */
static int take_kv(struct quota_escrow_round *r, const struct etcd_kv *kv, size_t skip,
		   char *err, size_t errlen)
{
	const char *k = (const char *)kv->key + skip;
	size_t kl = kv->key_len - skip;
	const char *slash = memchr(k, '/', kl);
	size_t sl = slash != NULL ? (size_t)(slash - k) : kl;
	int s = shard_of(r, k, sl);
	if (s < 0)
		return 0; /* a shard not in this round */
	enum quota_escrow_kind want;
	if (slash == NULL)
		want = QUOTA_ESCROW_SLICE;
	else if (kl - sl == 4 && memcmp(slash, "/ack", 4) == 0)
		want = QUOTA_ESCROW_ACK;
	else if (kl - sl == 4 && memcmp(slash, "/use", 4) == 0)
		want = QUOTA_ESCROW_USE;
	else
		return 0; /* not ours */
	char msg[256];
	struct quota_escrow_value *v = &r->scratch;
	if (quota_escrow_value_decode(kv->value, kv->value_len, v, msg, sizeof(msg)) < 0 ||
	    v->kind != want) {
		snprintf(err, errlen, "%.*s: %s", (int)(kv->key_len > 300 ? 300 : kv->key_len),
			 (const char *)kv->key, v->kind != want && msg[0] == '\0'
			 ? "a value of another kind than its key's" : msg);
		return -EPROTO;
	}
	if (want == QUOTA_ESCROW_SLICE)
		r->slice_mod[s] = kv->mod_revision;
	if (want == QUOTA_ESCROW_ACK) {
		r->ack_mod[s] = kv->mod_revision;
		r->ack_revision[s] = v->revision;
		r->has_ack[s] = true;
	}
	for (size_t i = 0; i < v->n; i++) {
		int j = cell_of(&r->nominal, &v->cells[i]);
		if (j < 0)
			continue; /* a cell the queue no longer has */
		if (want == QUOTA_ESCROW_SLICE)
			r->granted[s][j] = v->cells[i].amount;
		else if (want == QUOTA_ESCROW_ACK)
			r->acked[s][j] = v->cells[i].amount;
		else {
			r->use[s][j] = v->cells[i].amount;
			r->more[s][j] = v->cells[i].more;
		}
	}
	return 0;
}

/* Whether any planned cell of shard s differs from its slice. */
static bool shard_changed(const struct quota_escrow_round *r, size_t s)
{
	for (size_t j = 0; j < r->n_cells; j++)
		if (r->planned[s][j] != r->granted[s][j])
			return true;
	return false;
}

static int plan(struct quota_escrow_round *r, char *err, size_t errlen)
{
	struct quota_escrow_shard in[QUOTA_ESCROW_ROUND_SHARDS];
	int64_t target[QUOTA_ESCROW_ROUND_SHARDS], write[QUOTA_ESCROW_ROUND_SHARDS];
	for (size_t j = 0; j < r->n_cells; j++) {
		for (size_t s = 0; s < r->n; s++) {
			in[s] = (struct quota_escrow_shard){
				.granted = r->granted[s][j],
				.owned = r->owner_mod[s] != 0,
				.acked = r->has_ack[s],
				.acked_current = r->has_ack[s] && r->ack_revision[s] == r->slice_mod[s],
				.acked_value = r->acked[s][j],
				.use = r->use[s][j],
				.want = r->more[s][j] > 0 ? r->use[s][j] + r->more[s][j] : 0,
			};
			if (in[s].want > QUOTA_ESCROW_QUANTITY_MAX)
				in[s].want = QUOTA_ESCROW_QUANTITY_MAX;
		}
		const struct quota_escrow_cell *c = &r->nominal.cells[j];
		if (quota_escrow_target(c->amount, r->n, in, target) < 0 ||
		    quota_escrow_plan(c->amount, r->n, in, target, write) < 0) {
			snprintf(err, errlen, "queue %s: flavor %s resource %s: the plan refused "
				 "its inputs", r->queue, c->flavor, c->resource);
			return -EINVAL;
		}
		for (size_t s = 0; s < r->n; s++)
			r->planned[s][j] = write[s] != QUOTA_ESCROW_KEEP ? write[s] : r->granted[s][j];
	}
	size_t writes = 0;
	for (size_t s = 0; s < r->n; s++)
		writes += shard_changed(r, s);
	if (writes > QUOTA_ESCROW_ROUND_WRITES) {
		/* Too many for one transaction. With any shrink: the shrinks
		 * alone (each safe on its own; a growth may count on an
		 * unowned shard's shrink), the first of them. Without: the
		 * first growths (fewer growths than planned never pass the
		 * nominal). The rest next round. */
		bool shrinks = false;
		for (size_t s = 0; s < r->n; s++)
			for (size_t j = 0; j < r->n_cells; j++)
				shrinks |= r->planned[s][j] < r->granted[s][j];
		writes = 0;
		for (size_t s = 0; s < r->n; s++) {
			for (size_t j = 0; shrinks && j < r->n_cells; j++)
				if (r->planned[s][j] > r->granted[s][j])
					r->planned[s][j] = r->granted[s][j];
			if (shard_changed(r, s) && writes < QUOTA_ESCROW_ROUND_WRITES)
				writes++;
			else
				memcpy(r->planned[s], r->granted[s], sizeof(r->planned[s]));
		}
	}
	r->n_writes = 0;
	for (size_t s = 0; s < r->n; s++) {
		r->write[s] = shard_changed(r, s);
		r->n_writes += r->write[s];
	}
	return 0;
}

int quota_escrow_round_read(struct quota_escrow_round *r, struct etcd_client *c,
			    const char *prefix, const char *queue,
			    const struct quota_escrow_value *nominal,
			    const char (*shards)[SHARD_NAME_MAX], size_t n, size_t *writes, char *err,
			    size_t errlen)
{
	*writes = 0;
	r->n = r->n_writes = 0;
	char *probe = malloc(QUOTA_ESCROW_VALUE_MAX + 1);
	if (probe == NULL) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	bool nominal_ok = nominal->kind == QUOTA_ESCROW_SLICE &&
			  quota_escrow_value_encode(nominal, probe) >= 0;
	free(probe);
	if (prefix == NULL || strlen(prefix) >= PREFIX_MAX - 1 || !queue_ok(queue) || !nominal_ok ||
	    n == 0 || n > QUOTA_ESCROW_ROUND_SHARDS) {
		snprintf(err, errlen, "a round of queue \"%s\" over %zu shards: expected a queue "
			 "name of 1 to %u bytes of a-z, 0-9, '.', '-', a nominal slice value, "
			 "and 1 to %u shards", queue != NULL ? queue : "", n,
			 QUOTA_ESCROW_QUEUE_MAX, QUOTA_ESCROW_ROUND_SHARDS);
		return -EINVAL;
	}
	memset(r, 0, sizeof(*r));
	snprintf(r->prefix, sizeof(r->prefix), "%s", prefix);
	snprintf(r->queue, sizeof(r->queue), "%s", queue);
	r->nominal = *nominal;
	r->n_cells = nominal->n;
	for (size_t i = 0; i < n; i++) {
		size_t len = strnlen(shards[i], SHARD_NAME_MAX);
		if (!shard_name_valid(shards[i], len) || shard_of(r, shards[i], len) >= 0) {
			snprintf(err, errlen, "shard %zu \"%.*s\": expected a distinct shard name",
				 i, (int)len, shards[i]);
			return -EINVAL;
		}
		memcpy(r->shards[i], shards[i], len);
		r->n = i + 1;
	}
	/* One transaction: the queue's keys and every owner key. */
	static const size_t keys = 1 + QUOTA_ESCROW_ROUND_SHARDS;
	char(*key)[KEY_MAX] = calloc(keys, KEY_MAX);
	uint8_t end[KEY_MAX];
	struct etcd_op ops[1 + QUOTA_ESCROW_ROUND_SHARDS];
	if (key == NULL) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	size_t ql = quota_key(key[0], prefix, queue, "", "");
	size_t el = etcd_prefix_end(key[0], ql, end);
	ops[0] = (struct etcd_op){.kind = ETCD_OP_RANGE, .key = key[0], .key_len = ql,
				  .range_end = end, .range_end_len = el};
	for (size_t i = 0; i < r->n; i++) {
		size_t kl = key3(key[1 + i], prefix, "shards/", r->shards[i], "/owner");
		ops[1 + i] = (struct etcd_op){.kind = ETCD_OP_RANGE, .key = key[1 + i],
					      .key_len = kl};
	}
	struct etcd_txn t = {NULL, 0, ops, 1 + r->n, NULL, 0};
	struct etcd_txn_result res;
	int rc = etcd_txn(c, &t, &res);
	free(key);
	if (rc < 0) {
		snprintf(err, errlen, "reading queue %s's slices: %s", queue, etcd_client_error(c));
		return rc;
	}
	if (res.n_ranges != 1 + r->n) {
		etcd_txn_result_free(&res);
		snprintf(err, errlen, "reading queue %s's slices: %zu ranges answered; "
			 "expected %zu", queue, res.n_ranges, 1 + r->n);
		return -EPROTO;
	}
	for (size_t i = 0; i < r->n; i++)
		if (res.ranges[1 + i].n_kvs > 0)
			r->owner_mod[i] = res.ranges[1 + i].kvs[0].mod_revision;
	for (size_t i = 0; rc == 0 && i < res.ranges[0].n_kvs; i++)
		rc = take_kv(r, &res.ranges[0].kvs[i], ql, err, errlen);
	etcd_txn_result_free(&res);
	if (rc == 0)
		rc = plan(r, err, errlen);
	if (rc < 0) {
		r->n_writes = 0;
		return rc;
	}
	*writes = r->n_writes;
	return 0;
}

void quota_escrow_round_slice(const struct quota_escrow_round *r, size_t i,
			      struct quota_escrow_value *out)
{
	memset(out, 0, sizeof(*out));
	out->kind = QUOTA_ESCROW_SLICE;
	if (i >= r->n)
		return;
	out->n = r->n_cells;
	for (size_t j = 0; j < r->n_cells; j++) {
		memcpy(out->cells[j].flavor, r->nominal.cells[j].flavor,
		       sizeof(out->cells[j].flavor));
		memcpy(out->cells[j].resource, r->nominal.cells[j].resource,
		       sizeof(out->cells[j].resource));
		out->cells[j].amount = r->planned[i][j];
	}
}

struct write_buf {
	char key[1 + 4 * QUOTA_ESCROW_ROUND_WRITES][KEY_MAX];
	char value[QUOTA_ESCROW_ROUND_WRITES][QUOTA_ESCROW_VALUE_MAX + 1];
	struct etcd_compare cmp[1 + 3 * QUOTA_ESCROW_ROUND_WRITES];
	struct etcd_op put[QUOTA_ESCROW_ROUND_WRITES];
	struct quota_escrow_value v;
};

int quota_escrow_round_write(struct quota_escrow_round *r, struct etcd_client *c,
			     int64_t coordinator_lease, bool *committed, char *err,
			     size_t errlen)
{
	*committed = false;
	if (r->n_writes == 0)
		return 0;
	struct write_buf *b = malloc(sizeof(*b));
	if (b == NULL) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	size_t nk = 0, nc = 0, np = 0;
	size_t kl = key3(b->key[nk], r->prefix, "coordinator", "", "");
	b->cmp[nc++] = (struct etcd_compare){.target = ETCD_CMP_LEASE, .result = ETCD_CMP_EQUAL,
					     .key = b->key[nk++], .key_len = kl,
					     .number = coordinator_lease};
	for (size_t s = 0; s < r->n; s++) {
		if (!r->write[s])
			continue;
		const struct {
			int64_t mod;
			const char *a, *suffix;
		} seen[] = {
			{r->owner_mod[s], "shards/", "/owner"},
			{r->slice_mod[s], NULL, ""},
			{r->ack_mod[s], NULL, "/ack"},
		};
		for (size_t i = 0; i < 3; i++) {
			kl = seen[i].a != NULL
				     ? key3(b->key[nk], r->prefix, seen[i].a, r->shards[s], seen[i].suffix)
				     : quota_key(b->key[nk], r->prefix, r->queue, r->shards[s],
						 seen[i].suffix);
			b->cmp[nc++] = (struct etcd_compare){
				.target = ETCD_CMP_MOD, .result = ETCD_CMP_EQUAL,
				.key = b->key[nk++], .key_len = kl, .number = seen[i].mod};
		}
		quota_escrow_round_slice(r, s, &b->v);
		int vl = quota_escrow_value_encode(&b->v, b->value[np]);
		if (vl < 0) {
			free(b);
			snprintf(err, errlen, "queue %s shard %s: the planned slice does not encode",
				 r->queue, r->shards[s]);
			return -EINVAL;
		}
		/* The slice key: the compare's second key of this shard. */
		b->put[np] = (struct etcd_op){.kind = ETCD_OP_PUT, .key = b->key[nk - 2],
					      .key_len = strlen(b->key[nk - 2]),
					      .value = b->value[np], .value_len = (size_t)vl};
		np++;
	}
	struct etcd_txn t = {b->cmp, nc, b->put, np, NULL, 0};
	struct etcd_txn_result res;
	int rc = etcd_txn(c, &t, &res);
	if (rc < 0) {
		snprintf(err, errlen, "writing queue %s's slices: %s", r->queue,
			 etcd_client_error(c));
	} else {
		*committed = res.succeeded;
		etcd_txn_result_free(&res);
	}
	free(b);
	r->n_writes = 0; /* a plan is written once: the next round reads again */
	return rc < 0 ? rc : 0;
}

int quota_escrow_read_slice(struct etcd_client *c, const char *prefix, const char *queue,
			    const char *shard, struct quota_escrow_value *out,
			    int64_t *revision, char *err, size_t errlen)
{
	char key[KEY_MAX], msg[256];
	memset(out, 0, sizeof(*out));
	out->kind = QUOTA_ESCROW_SLICE;
	*revision = 0;
	size_t kl = quota_key(key, prefix, queue, shard, "");
	struct etcd_range_result res;
	int rc = etcd_range(c, key, kl, NULL, 0, 0, &res);
	if (rc < 0) {
		snprintf(err, errlen, "reading %s: %s", key, etcd_client_error(c));
		return rc;
	}
	if (res.n_kvs > 0) {
		rc = quota_escrow_value_decode(res.kvs[0].value, res.kvs[0].value_len, out, msg,
					       sizeof(msg));
		if (rc == 0 && out->kind != QUOTA_ESCROW_SLICE) {
			snprintf(msg, sizeof(msg), "a value of another kind than a slice");
			rc = -EINVAL;
		}
		if (rc < 0) {
			snprintf(err, errlen, "%s: %s", key, msg);
			memset(out, 0, sizeof(*out));
			rc = -EPROTO;
		} else {
			*revision = res.kvs[0].mod_revision;
		}
	}
	etcd_range_result_free(&res);
	return rc;
}

int quota_escrow_put_owned(struct etcd_client *c, const char *prefix, const char *queue,
			   const char *shard, int64_t lease, const struct quota_escrow_value *v,
			   bool *owned, char *err, size_t errlen)
{
	*owned = false;
	char okey[KEY_MAX], key[KEY_MAX];
	char *text = malloc(QUOTA_ESCROW_VALUE_MAX + 1);
	if (text == NULL) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	int vl = v->kind == QUOTA_ESCROW_SLICE ? -EINVAL : quota_escrow_value_encode(v, text);
	if (vl < 0 || !queue_ok(queue)) {
		free(text);
		snprintf(err, errlen, "queue \"%s\" shard %s: expected an ack or use value and a "
			 "queue name", queue != NULL ? queue : "", shard);
		return -EINVAL;
	}
	size_t ol = key3(okey, prefix, "shards/", shard, "/owner");
	size_t kl = quota_key(key, prefix, queue, shard,
			      v->kind == QUOTA_ESCROW_ACK ? "/ack" : "/use");
	struct etcd_compare cmp = {.target = ETCD_CMP_LEASE, .result = ETCD_CMP_EQUAL,
				   .key = okey, .key_len = ol, .number = lease};
	struct etcd_op put = {.kind = ETCD_OP_PUT, .key = key, .key_len = kl, .value = text,
			      .value_len = (size_t)vl, .lease = lease};
	struct etcd_txn t = {&cmp, 1, &put, 1, NULL, 0};
	struct etcd_txn_result res;
	int rc = etcd_txn(c, &t, &res);
	free(text);
	if (rc < 0) {
		snprintf(err, errlen, "putting %s: %s", key, etcd_client_error(c));
		return rc;
	}
	*owned = res.succeeded;
	etcd_txn_result_free(&res);
	return 0;
}

int quota_escrow_release_keys(struct etcd_client *c, const char *prefix, const char *shard,
			      int64_t lease, const char *const *queues, size_t n, bool *owned,
			      char *err, size_t errlen)
{
	*owned = false;
	if (n > (ETCD_MAX_TXN_OPS - 1) / 2) {
		snprintf(err, errlen, "releasing shard %s: %zu queues; expected at most %d", shard,
			 n, (ETCD_MAX_TXN_OPS - 1) / 2);
		return -E2BIG;
	}
	char(*key)[KEY_MAX] = calloc(1 + 2 * n, KEY_MAX);
	struct etcd_op ops[ETCD_MAX_TXN_OPS];
	if (key == NULL) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	size_t ol = key3(key[0], prefix, "shards/", shard, "/owner");
	struct etcd_compare cmp = {.target = ETCD_CMP_LEASE, .result = ETCD_CMP_EQUAL,
				   .key = key[0], .key_len = ol, .number = lease};
	ops[0] = (struct etcd_op){.kind = ETCD_OP_DELETE, .key = key[0], .key_len = ol};
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < 2; k++) {
			size_t at = 1 + 2 * i + k;
			size_t kl = quota_key(key[at], prefix, queues[i], shard, k ? "/use" : "/ack");
			ops[at] = (struct etcd_op){.kind = ETCD_OP_DELETE, .key = key[at],
						   .key_len = kl};
		}
	struct etcd_txn t = {&cmp, 1, ops, 1 + 2 * n, NULL, 0};
	struct etcd_txn_result res;
	int rc = etcd_txn(c, &t, &res);
	free(key);
	if (rc < 0) {
		snprintf(err, errlen, "releasing shard %s: %s", shard, etcd_client_error(c));
		return rc;
	}
	*owned = res.succeeded;
	etcd_txn_result_free(&res);
	return 0;
}
