/* A small etcd v3 client over etcd's gRPC-gateway JSON API (HTTP/1.1,
 * libcurl): leases (grant, one-shot keep-alive, revoke), put, range,
 * delete and transactions with compares. The foundation of issue 40's
 * multi-host mode; nothing in the daemon uses it yet.
 *
 * One client is one connection (reused across requests) and is used by one
 * thread at a time; clients on different threads are independent. Calls return 0 or a negative errno; on an error,
 * etcd_client_error() names the endpoint and what etcd said (or what the
 * transport did). Keys and values are byte strings (any bytes).
 *
 * Errors: -ECONNREFUSED every endpoint refused the connection (each is
 * tried once, in order from the last one that answered, only when the
 * request was never sent: a request that may have reached etcd is not
 * sent again); -ETIMEDOUT no answer in time, -EIO the connection broke
 * after the request was sent (outcome unknown: the caller reads back, or
 * makes its transactions idempotent by a compare); -E2BIG a transaction
 * over ETCD_MAX_TXN_OPS in one list, or a request over
 * ETCD_MAX_REQUEST_BYTES (refused before sending); -EMSGSIZE a response
 * over the client's limit (refused while it arrives, not buffered);
 * -EPROTO a response that is not what etcd sends. etcd's own errors by
 * their gRPC code: -EINVAL (3), -ENOENT (5, e.g. a lease not found),
 * -ETIMEDOUT (4), -EACCES (7, 16), -ENOSPC (8), -EBUSY (9), -ERANGE (11,
 * compacted), -EAGAIN (14, e.g. no leader or leader changed), else
 * -EPROTO. */
#ifndef SHMSCHED_COORD_ETCD_CLIENT_H
#define SHMSCHED_COORD_ETCD_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* etcd's --max-txn-ops default: at most this many compares, and this many
 * operations in each of success and failure (etcd 3.4,
 * etcdserver/api/v3rpc/key.go, checkTxnRequest). */
#define ETCD_MAX_TXN_OPS 128
/* etcd's --max-request-bytes default (1.5 MiB). Held against the JSON body,
 * which is larger than the protobuf etcd measures, so a request refused
 * here might have fitted; none passed here is refused by etcd for size. */
#define ETCD_MAX_REQUEST_BYTES (3u * 1024u * 1024u / 2u)
/* Endpoints a client may list, and the length of each. */
#define ETCD_MAX_ENDPOINTS 16
#define ETCD_MAX_ENDPOINT_LEN 256
/* A response's default bound (etcd_client_options.max_response_bytes). */
#define ETCD_DEFAULT_MAX_RESPONSE (4u * 1024u * 1024u)

struct etcd_client;

struct etcd_client_options {
	/* Whole request, connect included; 0: 5000 ms. */
	long timeout_ms;
	/* Connect alone; 0: 1000 ms. */
	long connect_timeout_ms;
	/* A response larger is refused (-EMSGSIZE); 0: ETCD_DEFAULT_MAX_RESPONSE. */
	size_t max_response_bytes;
};

/* One key-value pair as etcd returns it. key and value are malloc'd, each
 * with a NUL after its bytes (not counted in its length). */
struct etcd_kv {
	uint8_t *key;
	size_t key_len;
	uint8_t *value;
	size_t value_len;
	int64_t create_revision;
	int64_t mod_revision;
	int64_t version;
	int64_t lease;
};

/* A range's answer: the pairs (count of them, n_kvs), how many matched in
 * all (count, above a limit), and the store's revision. */
struct etcd_range_result {
	struct etcd_kv *kvs;
	size_t n_kvs;
	int64_t count;
	bool more;
	int64_t revision;
};

enum etcd_cmp_target {
	ETCD_CMP_VERSION,
	ETCD_CMP_CREATE,
	ETCD_CMP_MOD,
	ETCD_CMP_VALUE,
	ETCD_CMP_LEASE,
};

enum etcd_cmp_result {
	ETCD_CMP_EQUAL,
	ETCD_CMP_GREATER,
	ETCD_CMP_LESS,
	ETCD_CMP_NOT_EQUAL,
};

/* A compare: the key's target against number (VERSION, CREATE, MOD:
 * revisions; LEASE: a lease id, 0 for none) or value (VALUE). A key that
 * does not exist has version, create and mod revision 0 and lease 0. */
struct etcd_compare {
	enum etcd_cmp_target target;
	enum etcd_cmp_result result;
	const void *key;
	size_t key_len;
	int64_t number;
	const void *value;
	size_t value_len;
};

enum etcd_op_kind {
	ETCD_OP_PUT,
	ETCD_OP_RANGE,
	ETCD_OP_DELETE,
};

/* An operation of a transaction. range_end (RANGE, DELETE): NULL for the
 * key alone. lease (PUT): 0 for none. */
struct etcd_op {
	enum etcd_op_kind kind;
	const void *key;
	size_t key_len;
	const void *value;
	size_t value_len;
	const void *range_end;
	size_t range_end_len;
	int64_t lease;
};

struct etcd_txn {
	const struct etcd_compare *compare;
	size_t n_compare;
	const struct etcd_op *success;
	size_t n_success;
	const struct etcd_op *failure;
	size_t n_failure;
};

/* A transaction's answer: whether the compares held (the success list ran)
 * or not (the failure list ran), the revision after it, and the range
 * answers of its RANGE operations in order (n_ranges of them). */
struct etcd_txn_result {
	bool succeeded;
	int64_t revision;
	struct etcd_range_result *ranges;
	size_t n_ranges;
};

/* endpoints: comma-separated base URLs (http://127.0.0.1:2379), 1 to
 * ETCD_MAX_ENDPOINTS. opts may be NULL. On an error *out is NULL and err
 * (errlen bytes) says why. */
int etcd_client_open(struct etcd_client **out, const char *endpoints,
		     const struct etcd_client_options *opts, char *err, size_t errlen);
void etcd_client_close(struct etcd_client *c);
/* The last error's text ("" after a success). */
const char *etcd_client_error(const struct etcd_client *c);
/* The endpoint the next request goes to first, and the count. */
size_t etcd_client_current(const struct etcd_client *c);
size_t etcd_client_endpoints(const struct etcd_client *c);
/* The whole-request timeout from the next request on (ms, > 0): a caller
 * with a deadline per call (a lease's renewal: what is left of the lease)
 * sets it before each. */
void etcd_client_set_timeout(struct etcd_client *c, long timeout_ms);

int etcd_lease_grant(struct etcd_client *c, int64_t ttl_s, int64_t *id, int64_t *granted_ttl);
/* One keep-alive: *ttl is the lease's TTL again; -ENOENT: the lease has
 * expired or was revoked. */
int etcd_lease_keepalive(struct etcd_client *c, int64_t id, int64_t *ttl);
int etcd_lease_revoke(struct etcd_client *c, int64_t id);
/* A lease's seconds left and its granted TTL (/v3/lease/timetolive);
 * -ENOENT: the lease has expired or was revoked. */
int etcd_lease_time_to_live(struct etcd_client *c, int64_t id, int64_t *ttl_left,
			    int64_t *granted_ttl);

int etcd_put(struct etcd_client *c, const void *key, size_t key_len, const void *value,
	     size_t value_len, int64_t lease, int64_t *revision);
/* range_end NULL: the key alone. limit 0: no limit. Free with
 * etcd_range_result_free. */
int etcd_range(struct etcd_client *c, const void *key, size_t key_len, const void *range_end,
	       size_t range_end_len, int64_t limit, struct etcd_range_result *out);
/* The same, as the store was at revision (0: the newest): a paged read of
 * one snapshot. -ERANGE: revision has been compacted away. */
int etcd_range_at(struct etcd_client *c, const void *key, size_t key_len, const void *range_end,
		  size_t range_end_len, int64_t limit, int64_t revision,
		  struct etcd_range_result *out);
/* Compacts the store's history up to revision (/v3/kv/compaction):
 * ranges and watches at older revisions then fail -ERANGE. */
int etcd_compact(struct etcd_client *c, int64_t revision);
int etcd_delete(struct etcd_client *c, const void *key, size_t key_len, const void *range_end,
		size_t range_end_len, int64_t *deleted);
/* Free with etcd_txn_result_free. */
int etcd_txn(struct etcd_client *c, const struct etcd_txn *txn, struct etcd_txn_result *out);

/* Endpoint i's member status: its member id and its leader's (0: none).
 * Asks endpoint i alone (no failover). */
int etcd_member_status(struct etcd_client *c, size_t i, uint64_t *member_id,
		       uint64_t *leader_id);

void etcd_range_result_free(struct etcd_range_result *r);
void etcd_txn_result_free(struct etcd_txn_result *r);

/* The range_end that covers every key starting with prefix: the prefix
 * with its last byte below 0xff incremented and what follows dropped;
 * "\0" (one zero byte: every key) when every byte is 0xff or len is 0.
 * out holds len bytes (1 when len is 0); returns the end's length. */
size_t etcd_prefix_end(const void *prefix, size_t len, uint8_t *out);

#endif
