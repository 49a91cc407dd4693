/* Forwarding a pod through etcd: see coord/forward.h (FW1, FW2).
 *
 * Each call is one etcd request (a transaction or a range); nothing is
 * kept between calls. The request's token is its create revision, read
 * by forward_list and compared by forward_answer; forward_withdraw
 * compares the key's existence (a forwarder withdraws what it sent, under
 * the uid only it uses). The codecs make one pass over at most their
 * bound, with no allocation. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coord/forward.h"
#include "coord/shard_map.h"
#include "coord/value_text.h"

/* A key's room: the prefix, "forwarded/", a host, "/", a uid. */
#define FWD_KEY_MAX (16 + MEMBERSHIP_HOST_MAX + 16 + MEMBERSHIP_HOST_MAX + FORWARD_UID_MAX)
#define REQUEST_HEAD_MAX (2 + MEMBERSHIP_HOST_MAX + 1)

/* A refusal (coord/value_text.h): msg says why. */
#define REFUSE(msg, msglen, ...) value_text_refuse(NULL, 0, (msg), (msglen), __VA_ARGS__)

bool forward_uid_valid(const char *uid, size_t len)
{
	if (len == 0 || len > FORWARD_UID_MAX)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!((uid[i] >= '0' && uid[i] <= '9') || (uid[i] >= 'a' && uid[i] <= 'f')))
			return false;
	return true;
}

static bool host_ok(const char *s, size_t n)
{
	return n < MEMBERSHIP_HOST_MAX && shard_name_valid(s, n);
}

/* A node's name: a DNS subdomain (placement_value.h's node). */
static bool node_ok(const char *s, size_t n)
{
	if (n == 0 || n > PLACEMENT_NODE_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-' ||
		      s[i] == '.'))
			return false;
	return true;
}

static bool reason_ok(const char *s, size_t n)
{
	if (n == 0 || n > FORWARD_REASON_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (s[i] < 0x20 || s[i] > 0x7e)
			return false;
	return true;
}

int forward_request_decode(const uint8_t *v, size_t len, char forwarder[MEMBERSHIP_HOST_MAX],
			   const uint8_t **pod, size_t *pod_len, char *msg, size_t msglen)
{
	memset(forwarder, 0, MEMBERSHIP_HOST_MAX);
	*pod = NULL;
	*pod_len = 0;
	if (len < 2 || v[0] != '1' || v[1] != ' ')
		return REFUSE(msg, msglen, "forward request: version: expected \"1 \" first");
	const uint8_t *nl = memchr(v + 2, '\n', len - 2 < REQUEST_HEAD_MAX ? len - 2
								     : REQUEST_HEAD_MAX);
	if (nl == NULL)
		return REFUSE(msg, msglen, "forward request: no newline after the forwarder's "
			      "name within %d bytes", REQUEST_HEAD_MAX);
	size_t hn = (size_t)(nl - (v + 2));
	if (!host_ok((const char *)v + 2, hn))
		return REFUSE(msg, msglen, "forward request: forwarder: expected a host name of "
			      "1 to %d bytes of [A-Za-z0-9._-]", MEMBERSHIP_HOST_MAX - 1);
	size_t pl = len - 2 - hn - 1;
	if (pl == 0 || pl > FORWARD_POD_MAX)
		return REFUSE(msg, msglen, "forward request: pod: %zu bytes, expected 1 to %u",
			      pl, FORWARD_POD_MAX);
	memcpy(forwarder, v + 2, hn);
	*pod = nl + 1;
	*pod_len = pl;
	return 0;
}

int forward_answer_decode(const uint8_t *v, size_t len, struct forward_answer *out,
			  char *msg, size_t msglen)
{
	memset(out, 0, sizeof(*out));
	const char *t = (const char *)v;
	if (len > 9 && memcmp(t, "1 placed ", 9) == 0) {
		if (!node_ok(t + 9, len - 9))
			return REFUSE(msg, msglen, "forward answer: node: expected a DNS subdomain "
				      "of 1 to %d bytes", PLACEMENT_NODE_MAX);
		out->placed = true;
		memcpy(out->node, t + 9, len - 9);
		return 0;
	}
	if (len > 10 && memcmp(t, "1 refused ", 10) == 0) {
		if (!reason_ok(t + 10, len - 10))
			return REFUSE(msg, msglen, "forward answer: reason: expected 1 to %d bytes "
				      "of printable ASCII", FORWARD_REASON_MAX);
		memcpy(out->reason, t + 10, len - 10);
		return 0;
	}
	return REFUSE(msg, msglen, "forward answer: expected \"1 placed <node>\" or "
		      "\"1 refused <reason>\"");
}

int forward_answer_encode(const struct forward_answer *a, char out[FORWARD_ANSWER_MAX])
{
	const char *s = a->placed ? a->node : a->reason;
	size_t n = strnlen(s, a->placed ? sizeof(a->node) : sizeof(a->reason));
	if (a->placed ? !node_ok(s, n) : !reason_ok(s, n))
		return -EINVAL;
	const char *head = a->placed ? "1 placed " : "1 refused ";
	size_t hl = strlen(head);
	memcpy(out, head, hl);
	memcpy(out + hl, s, n);
	return (int)(hl + n);
}

/* /shmsched/<cluster>/<dir>/<host>/<uid> into buf; its length, or 0 when
 * a part is not valid. */
static size_t key_of(char buf[FWD_KEY_MAX], const char *cluster, const char *dir,
		     const char *host, const char *uid)
{
	char prefix[FWD_KEY_MAX];
	int pl = membership_prefix(cluster, prefix, sizeof(prefix));
	if (pl < 0 || !host_ok(host, strlen(host)) ||
	    (uid != NULL && !forward_uid_valid(uid, strlen(uid))))
		return 0;
	int n = snprintf(buf, FWD_KEY_MAX, "%s%s/%s/%s", prefix, dir, host,
			 uid != NULL ? uid : "");
	return n < 0 || n >= FWD_KEY_MAX ? 0 : (size_t)n;
}

int forward_send(struct etcd_client *ec, const char *cluster, const char *forwarder,
		 int64_t lease, const char *target, const char *uid, const void *pod,
		 size_t pod_len)
{
	char key[FWD_KEY_MAX];
	size_t kl = key_of(key, cluster, "forward", target, uid);
	size_t fl = strlen(forwarder);
	if (kl == 0 || !host_ok(forwarder, fl) || pod_len == 0 || pod_len > FORWARD_POD_MAX ||
	    lease == 0)
		return -EINVAL;
	size_t vl = 2 + fl + 1 + pod_len;
	char *v = malloc(vl);
	if (v == NULL)
		return -ENOMEM;
	memcpy(v, "1 ", 2);
	memcpy(v + 2, forwarder, fl);
	v[2 + fl] = '\n';
	memcpy(v + 3 + fl, pod, pod_len);
	struct etcd_compare absent = {.target = ETCD_CMP_CREATE, .result = ETCD_CMP_EQUAL,
				      .key = key, .key_len = kl, .number = 0};
	struct etcd_op put = {.kind = ETCD_OP_PUT, .key = key, .key_len = kl, .value = v,
			      .value_len = vl, .lease = lease};
	struct etcd_txn txn = {.compare = &absent, .n_compare = 1, .success = &put,
			       .n_success = 1};
	struct etcd_txn_result r;
	int rc = etcd_txn(ec, &txn, &r);
	free(v);
	if (rc != 0)
		return rc;
	bool ok = r.succeeded;
	etcd_txn_result_free(&r);
	return ok ? 0 : -EEXIST;
}

int forward_withdraw(struct etcd_client *ec, const char *cluster, const char *target,
		     const char *uid)
{
	char key[FWD_KEY_MAX];
	size_t kl = key_of(key, cluster, "forward", target, uid);
	if (kl == 0)
		return -EINVAL;
	/* FW1: the delete only while the request is there. */
	struct etcd_compare there = {.target = ETCD_CMP_CREATE, .result = ETCD_CMP_GREATER,
				     .key = key, .key_len = kl, .number = 0};
	struct etcd_op del = {.kind = ETCD_OP_DELETE, .key = key, .key_len = kl};
	struct etcd_txn txn = {.compare = &there, .n_compare = 1, .success = &del,
			       .n_success = 1};
	struct etcd_txn_result r;
	int rc = etcd_txn(ec, &txn, &r);
	if (rc != 0)
		return rc;
	bool ok = r.succeeded;
	etcd_txn_result_free(&r);
	return ok ? 1 : 0;
}

int forward_list(struct etcd_client *ec, const char *cluster, const char *me,
		 struct forward_request *out, size_t cap, struct etcd_range_result *kvs,
		 size_t *bad)
{
	memset(kvs, 0, sizeof(*kvs));
	char pfx[FWD_KEY_MAX];
	size_t pl = key_of(pfx, cluster, "forward", me, NULL);
	if (pl == 0)
		return -EINVAL;
	uint8_t end[FWD_KEY_MAX];
	size_t el = etcd_prefix_end(pfx, pl, end);
	int rc = etcd_range(ec, pfx, pl, end, el, (int64_t)cap, kvs);
	if (rc != 0)
		return rc;
	size_t n = 0;
	for (size_t i = 0; i < kvs->n_kvs && n < cap; i++) {
		const struct etcd_kv *kv = &kvs->kvs[i];
		struct forward_request *r = &out[n];
		memset(r, 0, sizeof(*r));
		size_t ul = kv->key_len - pl;
		char msg[128];
		if (kv->key_len <= pl || !forward_uid_valid((const char *)kv->key + pl, ul) ||
		    forward_request_decode(kv->value, kv->value_len, r->forwarder, &r->pod,
					   &r->pod_len, msg, sizeof(msg)) != 0) {
			if (bad != NULL)
				(*bad)++;
			continue;
		}
		memcpy(r->uid, kv->key + pl, ul);
		r->create_revision = kv->create_revision;
		r->lease = kv->lease;
		n++;
	}
	return (int)n;
}

int forward_answer(struct etcd_client *ec, const char *cluster, const char *me,
		   const struct forward_request *r, const struct forward_answer *a,
		   const struct etcd_compare *cmp, size_t n_cmp, const struct etcd_op *ops,
		   size_t n_ops, bool *request_gone)
{
	*request_gone = false;
	if (n_cmp > FORWARD_EXTRA_MAX || n_ops > FORWARD_EXTRA_MAX || r->lease == 0)
		return -EINVAL;
	char req[FWD_KEY_MAX], ans[FWD_KEY_MAX], text[FORWARD_ANSWER_MAX];
	size_t rl = key_of(req, cluster, "forward", me, r->uid);
	size_t al = key_of(ans, cluster, "forwarded", r->forwarder, r->uid);
	int tl = forward_answer_encode(a, text);
	if (rl == 0 || al == 0 || tl < 0)
		return -EINVAL;
	struct etcd_compare c[FORWARD_EXTRA_MAX + 1];
	struct etcd_op o[FORWARD_EXTRA_MAX + 2];
	/* FW1: this request, as read (its create revision), still there. */
	c[0] = (struct etcd_compare){.target = ETCD_CMP_CREATE, .result = ETCD_CMP_EQUAL,
				     .key = req, .key_len = rl, .number = r->create_revision};
	memcpy(c + 1, cmp, n_cmp * sizeof(*cmp));
	/* FW2: the answer with the forwarder's lease. */
	o[0] = (struct etcd_op){.kind = ETCD_OP_DELETE, .key = req, .key_len = rl};
	o[1] = (struct etcd_op){.kind = ETCD_OP_PUT, .key = ans, .key_len = al, .value = text,
				.value_len = (size_t)tl, .lease = r->lease};
	memcpy(o + 2, ops, n_ops * sizeof(*ops));
	/* On failure, read the request back: which compare failed. */
	struct etcd_op again = {.kind = ETCD_OP_RANGE, .key = req, .key_len = rl};
	struct etcd_txn txn = {.compare = c, .n_compare = 1 + n_cmp, .success = o,
			       .n_success = 2 + n_ops, .failure = &again, .n_failure = 1};
	struct etcd_txn_result res;
	int rc = etcd_txn(ec, &txn, &res);
	if (rc != 0)
		return rc;
	bool ok = res.succeeded;
	if (!ok)
		*request_gone = res.n_ranges == 0 || res.ranges[0].n_kvs == 0 ||
				res.ranges[0].kvs[0].create_revision != r->create_revision;
	etcd_txn_result_free(&res);
	return ok ? 1 : 0;
}

int forward_read_answer(struct etcd_client *ec, const char *cluster, const char *forwarder,
			const char *uid, struct forward_answer *a, char *msg, size_t msglen)
{
	memset(a, 0, sizeof(*a));
	char key[FWD_KEY_MAX];
	size_t kl = key_of(key, cluster, "forwarded", forwarder, uid);
	if (kl == 0)
		return -EINVAL;
	/* Read and delete in one request: the answer is taken once. */
	struct etcd_op ops[2] = {
		{.kind = ETCD_OP_RANGE, .key = key, .key_len = kl},
		{.kind = ETCD_OP_DELETE, .key = key, .key_len = kl},
	};
	struct etcd_txn txn = {.success = ops, .n_success = 2};
	struct etcd_txn_result r;
	int rc = etcd_txn(ec, &txn, &r);
	if (rc != 0)
		return rc;
	if (r.n_ranges == 0 || r.ranges[0].n_kvs == 0) {
		etcd_txn_result_free(&r);
		return 0;
	}
	const struct etcd_kv *kv = &r.ranges[0].kvs[0];
	rc = forward_answer_decode(kv->value, kv->value_len, a, msg, msglen);
	etcd_txn_result_free(&r);
	return rc == 0 ? 1 : rc;
}
