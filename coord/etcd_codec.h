/* etcd's gRPC-gateway JSON, both ways (coord/etcd_codec.c): request bodies
 * built from the client's structs, and responses decoded strictly (they
 * are outside input: tests/fuzz/fuzz_etcd_codec.c). Reached through
 * coord/coord.h; only the client and the tests call it. */
#ifndef SHMSCHED_COORD_ETCD_CODEC_H
#define SHMSCHED_COORD_ETCD_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "coord/etcd_client.h"

/* Base64 (RFC 4648, with padding), as protobuf's JSON writes bytes.
 * encode writes etcd_b64_len(n) characters and a NUL. decode takes exactly
 * the padded form (length a multiple of 4, '=' only at the end) and writes
 * at most n / 4 * 3 bytes; -EINVAL otherwise. */
size_t etcd_b64_len(size_t n);
void etcd_b64_encode(const uint8_t *in, size_t n, char *out);
int etcd_b64_decode(const char *in, size_t n, uint8_t *out, size_t *out_len);

/* Request bodies: malloc'd JSON text, NULL when out of memory. */
char *etcd_encode_put(const void *key, size_t key_len, const void *value, size_t value_len,
		      int64_t lease);
char *etcd_encode_range(const void *key, size_t key_len, const void *range_end,
			size_t range_end_len, int64_t limit);
/* revision 0: the newest. */
char *etcd_encode_range_at(const void *key, size_t key_len, const void *range_end,
			   size_t range_end_len, int64_t limit, int64_t revision);
char *etcd_encode_delete(const void *key, size_t key_len, const void *range_end,
			 size_t range_end_len);
char *etcd_encode_txn(const struct etcd_txn *txn);
char *etcd_encode_lease_grant(int64_t ttl_s);
/* {"ID":"<id>"}: keep-alive, revoke and time-to-live. */
char *etcd_encode_lease_id(int64_t id);

enum etcd_resp_kind {
	ETCD_RESP_PUT,
	ETCD_RESP_RANGE,
	ETCD_RESP_DELETE,
	ETCD_RESP_TXN,
	ETCD_RESP_LEASE_GRANT,
	ETCD_RESP_LEASE_KEEPALIVE,
	ETCD_RESP_LEASE_REVOKE,
	ETCD_RESP_STATUS,
	ETCD_RESP_LEASE_TTL, /* /v3/lease/timetolive: TTL -1 when gone */
	ETCD_RESP_KINDS,
};

/* A decoded answer; which fields are set depends on the kind. ranges
 * (RANGE: range; TXN: txn) own their memory: etcd_response_free. */
struct etcd_response {
	int64_t revision;
	int64_t lease_id;
	int64_t ttl;
	int64_t granted_ttl; /* LEASE_TTL */
	int64_t deleted;
	uint64_t member_id;
	uint64_t leader_id;
	struct etcd_range_result range;
	struct etcd_txn_result txn;
};

/* A 200 answer's body. 0, or -EPROTO (-ENOMEM) with msg saying which field
 * was wrong and how; out is zeroed first and holds nothing on an error. */
int etcd_decode_response(enum etcd_resp_kind kind, const char *body, size_t len,
			 struct etcd_response *out, char *msg, size_t msglen);
/* An error answer's body ({"error":..,"code":N,"message":..}): the negative
 * errno for its gRPC code (etcd_client.h), with etcd's message in msg; a
 * body that is not one: -EPROTO, msg saying so. */
int etcd_decode_error(const char *body, size_t len, char *msg, size_t msglen);
void etcd_response_free(struct etcd_response *r);

/* One message of the /v3/watch stream (etcd's WatchResponse, one JSON
 * object a line: {"result":{...}}). An event is a put, or a delete (the kv
 * then holds the key and its mod_revision alone). */
struct etcd_watch_event {
	bool deleted;
	struct etcd_kv kv;
};

struct etcd_watch_message {
	int64_t revision; /* the header's */
	int64_t watch_id;
	bool created;
	bool canceled;
	/* Set with canceled when the start revision was compacted: the
	 * oldest revision still kept. */
	int64_t compact_revision;
	struct etcd_watch_event *events;
	size_t n_events;
};

/* One line (without its newline). 0; -EPROTO (not a message etcd sends),
 * -EMSGSIZE (more than max_events events), -EIO (the stream's own error
 * message: {"error":{...}}), -ENOMEM; msg says which field and why. out
 * is zeroed first and holds nothing on an error; free with
 * etcd_watch_message_free. */
int etcd_decode_watch(const char *line, size_t len, size_t max_events,
		      struct etcd_watch_message *out, char *msg, size_t msglen);
void etcd_watch_message_free(struct etcd_watch_message *m);

#endif
