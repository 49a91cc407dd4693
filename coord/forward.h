/* Forwarding a pod to another host through etcd (issue 40, item 4: "a
 * pod that fits none of its host's shards is forwarded to a host whose
 * capacity summary says it may fit, with bounded fan-out, and is
 * answered exactly once"; docs/design/multi-host.md, "Pods that do not
 * fit at home"). This is the protocol alone: its keys, its values and
 * the transactions that make the answer exactly once. The daemon does
 * not call it yet (planned: the forwarder's hold of the pod's slot and
 * the target's placement of the request).
 *
 * Keys, under /shmsched/<cluster>/:
 *
 *   forward/<target>/<uid>     a request: the forwarder's name and the
 *                              pod (opaque bytes), with the forwarder's
 *                              lease, created only if absent
 *   forwarded/<forwarder>/<uid> its answer: placed on a node, or refused
 *                              with a reason; with the forwarder's lease
 *                              (read from the request key's)
 *
 * Exactly once (FW1): the request key is the token. The target answers
 * (forward_answer: placed, with the caller's own fenced compares and
 * operations in the same transaction, or refused) only by a transaction
 * that compares the request's create revision, as it read it, and
 * deletes it; the forwarder withdraws (forward_withdraw) only by a
 * transaction that compares that a request of that uid is there (only
 * the forwarder sends under its uids) and deletes it. etcd's transactions
 * are serializable, so exactly one of the two deletes the request: a
 * withdrawn request is never placed, and a request a target answered
 * cannot be withdrawn (the forwarder then reads the answer:
 * forward_read_answer). A request sent again under the same uid after a
 * withdrawal has another create revision, so a target's answer read from
 * the first cannot take the second.
 *
 * Liveness (FW2): both keys carry the forwarder's lease. A forwarder that
 * dies takes its requests with it (no target places for a producer that
 * is gone, once the lease lapses), and an answer for a dead forwarder
 * cannot be written: a put with a lapsed lease fails the transaction, so
 * the target's placement in it is not committed either.
 *
 * Values (outside input: decoded strictly, tests/fuzz/fuzz_forward.c):
 *   request "1 <forwarder>\n<pod bytes>"   forwarder a host name
 *           (shard_name_valid, < MEMBERSHIP_HOST_MAX bytes); the pod 1 to
 *           FORWARD_POD_MAX bytes, any
 *   answer  "1 placed <node>"              node a DNS subdomain
 *           "1 refused <reason>"           reason 1 to FORWARD_REASON_MAX
 *           bytes of printable ASCII
 * A uid is 1 to FORWARD_UID_MAX bytes of [0-9a-f]. */
#ifndef SHMSCHED_COORD_FORWARD_H
#define SHMSCHED_COORD_FORWARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "coord/etcd_client.h"
#include "coord/membership.h"
#include "coord/placement_value.h"

#define FORWARD_UID_MAX 64
/* A forwarded pod's bytes: etcd refuses a request over 1.5 MiB; a
 * template of the control socket is far below this. */
#define FORWARD_POD_MAX (256u * 1024u)
#define FORWARD_REASON_MAX 256
/* The longest answer value: "1 refused " + the reason. */
#define FORWARD_ANSWER_MAX (10 + FORWARD_REASON_MAX)
/* The extra compares and operations a target's own commit may carry in
 * forward_answer's transaction (its fence and its placement). */
#define FORWARD_EXTRA_MAX 8

/* A request as a target read it. `pod` points into the kv it was decoded
 * from (not owned). */
struct forward_request {
	char uid[FORWARD_UID_MAX + 1];
	char forwarder[MEMBERSHIP_HOST_MAX];
	const uint8_t *pod;
	size_t pod_len;
	int64_t create_revision; /* the token (FW1) */
	int64_t lease;           /* the forwarder's (FW2) */
};

struct forward_answer {
	bool placed;
	char node[PLACEMENT_NODE_MAX + 1];      /* placed */
	char reason[FORWARD_REASON_MAX + 1];    /* refused */
};

/* The values' codecs. Decoders: 0, or -EINVAL with a message (field,
 * value, what was expected) and the output zeroed. Encoders: the length
 * written to out (at most its bound, no NUL), or -EINVAL for a field out
 * of its bounds. */
int forward_request_decode(const uint8_t *v, size_t len, char forwarder[MEMBERSHIP_HOST_MAX],
			   const uint8_t **pod, size_t *pod_len, char *msg, size_t msglen);
int forward_answer_decode(const uint8_t *v, size_t len, struct forward_answer *out,
			  char *msg, size_t msglen);
int forward_answer_encode(const struct forward_answer *a, char out[FORWARD_ANSWER_MAX]);
/* Whether uid is 1 to FORWARD_UID_MAX bytes of [0-9a-f]. */
bool forward_uid_valid(const char *uid, size_t len);

/* The forwarder: puts the request for `target` with `lease`, if no
 * request of that uid is there (CREATE == 0). 0; -EEXIST when one is;
 * -EINVAL for a bad name, uid or pod size; an etcd error otherwise. */
int forward_send(struct etcd_client *ec, const char *cluster, const char *forwarder,
		 int64_t lease, const char *target, const char *uid, const void *pod,
		 size_t pod_len);

/* The forwarder: withdraws its request from `target` (FW1). 1: withdrawn,
 * the target will never answer it; 0: the target answered it first (read
 * the answer: forward_read_answer), or it lapsed with the forwarder's
 * lease (then no answer comes); an etcd error otherwise (not known:
 * withdraw again). */
int forward_withdraw(struct etcd_client *ec, const char *cluster, const char *target,
		     const char *uid);

/* The target: the requests for `me`, at most `cap`, decoded into out
 * (their pods point into *kvs, which the caller frees with
 * etcd_range_result_free). A request whose key or value does not decode
 * is skipped and counted in *bad (NULL: not counted); it stays until its
 * forwarder withdraws it or its lease lapses. Returns how many, or an
 * etcd error. */
int forward_list(struct etcd_client *ec, const char *cluster, const char *me,
		 struct forward_request *out, size_t cap, struct etcd_range_result *kvs,
		 size_t *bad);

/* The target answers request r (FW1), in one transaction with its own
 * compares and operations (at most FORWARD_EXTRA_MAX of each: its fence
 * and its placement's put, for a placement; none for a refusal). 1: the
 * answer and the extra operations are committed; 0: not (the request was
 * withdrawn, or lapsed, or an extra compare failed: *request_gone says
 * which); an etcd error otherwise (nothing committed, or unknown after a
 * timeout: the request's absence then says it was). */
int forward_answer(struct etcd_client *ec, const char *cluster, const char *me,
		   const struct forward_request *r, const struct forward_answer *a,
		   const struct etcd_compare *cmp, size_t n_cmp, const struct etcd_op *ops,
		   size_t n_ops, bool *request_gone);

/* The forwarder: the answer to its request `uid`, deleted once read. 1:
 * read into *a; 0: none yet; -EINVAL: one that does not decode (deleted,
 * msg says why); an etcd error otherwise. */
int forward_read_answer(struct etcd_client *ec, const char *cluster, const char *forwarder,
			const char *uid, struct forward_answer *a, char *msg, size_t msglen);

#endif
