/* The control socket's framing, shared by the daemon (ingest/control_server)
 * and producers (client/control_client). Slow path only: registration and
 * the passing of region fds, never the path of a pod.
 *
 * Transport: a Unix SOCK_SEQPACKET socket, so the kernel keeps message
 * boundaries and one sendmsg(2) is one recvmsg(2). Each message is
 *
 *   offset  size  field       meaning
 *   ------  ----  ----------  ----------------------------------------------
 *        0     4  magic       CONTROL_MAGIC
 *        4     2  version     CONTROL_VERSION (the framing, not the shm ABI)
 *        6     2  type        enum control_msg_type
 *        8     4  length      payload bytes that follow, <= CONTROL_MAX_PAYLOAD
 *       12     4  request_id  chosen by the client; echoed in the answer
 *       16     -  payload
 *
 * in host byte order (both ends share a machine), with zero or one fd
 * attached as SCM_RIGHTS. A message is valid only if all of it arrived in
 * one piece (no MSG_TRUNC or MSG_CTRUNC), the header's fields hold the values
 * above, `length` equals the bytes that arrived after the header, and at
 * most one fd came with it.
 *
 * Conversation: the client sends HELLO (struct control_hello, its
 * SHM_ABI_VERSION); the daemon answers WELCOME (struct control_hello, its own
 * version) or ERROR and closes. Then the client sends REQUESTs and gets for
 * each one RESPONSE or ERROR with the same request_id. An ERROR whose
 * request_id is 0 concerns the connection; the daemon closes it after.
 *
 * Threads: control_send and control_recv keep no state; any thread may call
 * them on any fd, one sender and one receiver per fd at a time (concurrent
 * senders on one fd are safe, since each message is one sendmsg).
 */
#ifndef SHMSCHED_INGEST_CONTROL_PROTO_H
#define SHMSCHED_INGEST_CONTROL_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ingest/control_ops.h"

#define CONTROL_MAGIC UINT32_C(0x4c43534d) /* "MSCL" in memory order */
#define CONTROL_VERSION 1u
#define CONTROL_HEADER_SIZE 16u
/* One message must fit the sender's socket buffer (a SEQPACKET message is
 * never split; net.core.wmem_default is 212992 on stock kernels and only
 * CAP_NET_ADMIN may exceed wmem_max). 64 KiB leaves room on any stock
 * kernel; bulk data travels in a memfd passed alongside instead. */
#define CONTROL_MAX_PAYLOAD (UINT32_C(64) << 10)
/* Longest text an ERROR carries, after its code. */
#define CONTROL_ERROR_TEXT_MAX 512u

enum control_msg_type {
	CONTROL_MSG_HELLO = 1,    /* client -> daemon: struct control_hello */
	CONTROL_MSG_WELCOME = 2,  /* daemon -> client: struct control_hello */
	CONTROL_MSG_ERROR = 3,    /* either way: struct control_error + text */
	CONTROL_MSG_REQUEST = 4,  /* client -> daemon: opaque to the transport */
	CONTROL_MSG_RESPONSE = 5, /* daemon -> client: opaque to the transport */
	/* New types go here; a peer that sends one an older side does not
	 * know is refused as malformed (-EPROTO). */
	CONTROL_MSG_TYPE_END,
};

struct control_header {
	uint32_t magic;
	uint16_t version;
	uint16_t type;
	uint32_t length;
	uint32_t request_id;
};
_Static_assert(sizeof(struct control_header) == CONTROL_HEADER_SIZE,
	       "control_header is 16 bytes on the wire");

/* Payload of HELLO and WELCOME. */
struct control_hello {
	uint32_t abi_version; /* SHM_ABI_VERSION of the sender */
	uint32_t reserved;    /* zero */
};

/* Payload of ERROR: a positive errno the receiver returns negated (1..4095),
 * then text for a person, not NUL-terminated, at most
 * CONTROL_ERROR_TEXT_MAX bytes. */
struct control_error {
	uint32_t code;
};

/* Sends one message without blocking and without SIGPIPE: the header,
 * `len` bytes of `payload` (NULL only if len is 0) and, if pass_fd >= 0, a
 * duplicate of pass_fd (the caller still owns pass_fd).
 * Returns 0, or:
 *   -EINVAL    type not a known type, len > CONTROL_MAX_PAYLOAD, or a NULL
 *              payload with len > 0
 *   -EAGAIN    the peer's receive queue is full (it is not reading); nothing
 *              was sent: wait for POLLOUT and retry, or give up on the peer
 *   -EPIPE     the peer has closed (also -ECONNRESET, -ENOTCONN)
 *   other negative errnos from sendmsg(2) (-EBADF, -ENOTSOCK, -ENOBUFS)
 */
int control_send(int fd, uint16_t type, uint32_t request_id,
		 const void *payload, uint32_t len, int pass_fd);

/* Sends ERROR with code `code` (a positive errno) and text formatted from
 * fmt, cut at CONTROL_ERROR_TEXT_MAX bytes. Errors as control_send. */
int control_send_error(int fd, uint32_t request_id, int code,
		       const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Receives one message, waiting at most timeout_ms (< 0: no limit; 0: only
 * what is already queued). Stores its header in *h and its payload in
 * payload[0 .. h->length); if got_fd is not NULL, stores the fd that came
 * with it (close-on-exec; the caller owns it) or -1 there. On any error no
 * fd is left open and *got_fd is -1. The fd's O_NONBLOCK flag is not used
 * or changed.
 * Returns 0, or:
 *   -ETIMEDOUT   nothing arrived in time
 *   -ECONNRESET  the peer closed (or sent an empty message, which no valid
 *                peer does)
 *   -EPROTO      malformed: short header, bad magic, version or type,
 *                length above CONTROL_MAX_PAYLOAD or different from what
 *                arrived, ancillary data cut short, more than one fd, an fd
 *                when got_fd is NULL, or control data other than SCM_RIGHTS
 *   -EMSGSIZE    a well-formed message whose payload is longer than cap;
 *                it is consumed (and its fd closed); *h holds its header
 *   -EINVAL      h is NULL, or payload is NULL with cap > 0
 *   other negative errnos from poll(2) or recvmsg(2) (-EBADF, -ENOTSOCK)
 */
int control_recv(int fd, struct control_header *h, void *payload,
		 uint32_t cap, int *got_fd, int timeout_ms);

/* Decodes an ERROR payload: *code gets its code (any value outside
 * 1..4095 becomes EPROTO) and text gets its text, NUL-terminated, with
 * bytes outside printable ASCII replaced by '?'. Never fails: a payload too
 * short for a code gives EPROTO and a text that says so. */
void control_error_decode(const void *payload, uint32_t len, int *code,
			  char *text, size_t text_len);

/* An OP_TEMPLATE request's body (ingest/control_ops.h), split: with arg
 * OP_TEMPLATE_SCOPED, the scope text and the Pod; with OP_TEMPLATE_PLAIN,
 * the Pod alone (scoped false). Pointers into the body. */
struct control_template {
	bool scoped;
	const char *scope; /* scope_len bytes, not NUL-terminated */
	uint32_t scope_len;
	const char *pod;   /* pod_len bytes of Kubernetes JSON */
	uint32_t pod_len;
};

/* Splits body[0..len) of an OP_TEMPLATE request whose arg is `arg`.
 * Trusts nothing: returns 0 with *out, or -EPROTO with a message in err
 * (an arg not in enum op_template_arg, a body shorter than its header, a
 * reserved field not 0, a scope_len over OP_TEMPLATE_SCOPE_MAX or past
 * the body). The scope's patterns are the policy's to check. */
int control_template_split(uint32_t arg, const void *body, uint32_t len,
			   struct control_template *out, char *err, size_t err_len);

/* The body of a scoped OP_TEMPLATE: header, scope, pod, in a buffer
 * malloc'd into *out (*out_len bytes). Returns 0, -EMSGSIZE (scope_len over
 * OP_TEMPLATE_SCOPE_MAX, or the whole over what a request carries) or
 * -ENOMEM. */
int control_template_join(const char *scope, size_t scope_len, const char *pod,
			  size_t pod_len, void **out, uint32_t *out_len);

/* OP_DRAIN's body (ingest/control_ops.h) split: its node names, each
 * name[i][0..len[i]) (not NUL-terminated here; the body holds the NUL
 * after each). */
struct control_drain {
	const char *selector; /* selector_len bytes, not NUL-terminated */
	uint32_t selector_len;
	uint32_t n;
	const char *name[OP_DRAIN_NODES_MAX];
	uint32_t len[OP_DRAIN_NODES_MAX];
};

/* Splits body[0..len) of an OP_DRAIN request. Trusts nothing: returns 0
 * with *out, or -EINVAL with a message in err (a body shorter than its
 * header, a selector over OP_DRAIN_SELECTOR_MAX or past the body, n_nodes not 1..OP_DRAIN_NODES_MAX, a name empty
 * or not NUL-ended within the body, bytes after the last name). */
int control_drain_split(const void *body, uint32_t len, struct control_drain *out,
			char *err, size_t err_len);

/* OP_APPROVAL REGISTER's body (ingest/control_ops.h), checked: its name
 * (NUL-terminated copy), deadline, flags and selector (a pointer into the
 * body). */
struct control_approval_register {
	char name[OP_APPROVAL_NAME_MAX + 1];
	uint32_t deadline_ms;
	bool fail_open;
	bool reclaim, preempt; /* OP_APPROVAL_RECLAIM_TOO, OP_APPROVAL_PREEMPT_TOO */
	const char *selector; /* selector_len bytes, not NUL-terminated */
	uint32_t selector_len;
};

/* Checks body[0..len) of an OP_APPROVAL REGISTER. Trusts nothing: returns
 * 0 with *out, or -EINVAL with a message in err (a body shorter than its
 * header; a name empty, not NUL-padded or not printable ASCII; a deadline
 * not 1..OP_APPROVAL_DEADLINE_MAX_MS; an unknown flag; reserved not 0; a
 * selector over OP_APPROVAL_SELECTOR_MAX, holding a NUL, or other than
 * the rest of the body). The selector's terms are the daemon's to read. */
int control_approval_register_split(const void *body, uint32_t len,
				    struct control_approval_register *out,
				    char *err, size_t err_len);

/* Checks body[0..len) of an OP_APPROVAL ANSWER into *out: 0, or -EINVAL
 * with a message (not exactly sizeof(struct op_approval_answer) bytes, an
 * ask id 0, a verdict not in enum op_approval_verdict, not_before_ms not
 * 1..OP_APPROVAL_NOT_BEFORE_MAX_MS for NOT_BEFORE or not 0 otherwise). */
int control_approval_answer_check(const void *body, uint32_t len,
				  struct op_approval_answer *out,
				  char *err, size_t err_len);

/* OP_FAILURE's bodies (ingest/control_ops.h) split. Not NUL-terminated
 * here: each string is its bytes and length. */
struct control_failure {
	uint64_t placement_id;
	const char *reason; /* reason_len bytes */
	uint32_t reason_len;
};
struct control_pool_release {
	const char *pool; /* pool_len bytes, 1.. */
	uint32_t pool_len;
	const char *template; /* template_len bytes, 0: every template */
	uint32_t template_len;
};

/* Splits body[0..len) of an OP_FAILURE REPORT. Trusts nothing: returns 0
 * with *out, or -EINVAL with a message in err (a body shorter than its
 * header, a reserved field not 0, a reason over OP_FAILURE_REASON_MAX or
 * not exactly the rest of the body, a NUL in it, placement id 0). */
int control_failure_split(const void *body, uint32_t len,
			  struct control_failure *out, char *err, size_t err_len);

/* Splits body[0..len) of an OP_FAILURE RELEASE: the same rules (a pool
 * of 1..OP_POOL_NAME_MAX bytes, a template of 0..OP_POOL_NAME_MAX, both
 * exactly the rest of the body, no NUL in either). */
int control_pool_release_split(const void *body, uint32_t len,
			       struct control_pool_release *out, char *err,
			       size_t err_len);

/* A short name for a message type ("HELLO"), or "unknown". */
const char *control_msg_type_name(uint16_t type);

/* Sealed text (ingest/sealed_text.c): text too large for one control
 * answer (CONTROL_MAX_PAYLOAD), passed whole in a sealed memfd beside the
 * answer (SCM_RIGHTS), the answer's header saying its size:
 * OP_QUEUE_METRICS' (ingest/control_ops.h). The writer seals it (no
 * shrink, grow or write, and no more seals), so what the reader checked
 * stays what it reads. SEALED_TEXT_SEALS: the seals a reader requires
 * (F_SEAL_*: <fcntl.h>). */
#define SEALED_TEXT_SEALS (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL)

/* A new memfd (close-on-exec) named `name` holding buf[0..len), sealed.
 * Returns the fd (the caller closes it), or -errno of memfd_create,
 * write or fcntl. */
int sealed_text_create(const char *name, const void *buf, size_t len);

/* Reads the text of memfd `fd` (not closed here), which the answer says
 * holds `bytes` bytes: refused (-EPROTO, a message naming `what`, the
 * size and the seals) unless it is sealed as sealed_text_create seals,
 * its size is `bytes` and `bytes` <= `max`. On success *out is a
 * malloc'ed copy, NUL-terminated, of `bytes` bytes; -ENOMEM without
 * memory. */
int sealed_text_read(int fd, uint64_t bytes, uint64_t max, const char *what,
		     char **out, char *err, size_t err_len);

#endif
