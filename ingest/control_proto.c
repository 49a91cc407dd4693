/* Control socket framing: one message per sendmsg/recvmsg on a SEQPACKET
 * socket. See control_proto.h for the wire format.
 *
 * Invariants: control_recv trusts nothing it receives. Every field is checked
 * before a caller sees it, and every fd the kernel installed for us is
 * either handed to the caller (exactly one, when asked for) or closed before
 * returning, whatever the outcome. Neither function ever blocks past its
 * bound: sends use MSG_DONTWAIT, receives poll with a deadline first and
 * then read with MSG_DONTWAIT (another reader may win the race for a
 * message; the wait then resumes with the time left).
 *
 * Threads: no state; see the header.
 */
#include "ingest/control_proto.h"
#include "ingest/control_ops.h"
#include "base/base.h"

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* Room for this many fds in one receive: more than one is an error, but
 * making room for a few lets us see (and close) them rather than have the
 * kernel cut the control data short. The kernel closes any beyond this. */
#define CONTROL_FDS_SEEN 8

const char *control_msg_type_name(uint16_t type)
{
	switch (type) {
	case CONTROL_MSG_HELLO:
		return "HELLO";
	case CONTROL_MSG_WELCOME:
		return "WELCOME";
	case CONTROL_MSG_ERROR:
		return "ERROR";
	case CONTROL_MSG_REQUEST:
		return "REQUEST";
	case CONTROL_MSG_RESPONSE:
		return "RESPONSE";
	default:
		return "unknown";
	}
}

static bool type_known(uint32_t type)
{
	return type >= CONTROL_MSG_HELLO && type < CONTROL_MSG_TYPE_END;
}

int control_send(int fd, uint16_t type, uint32_t request_id,
		 const void *payload, uint32_t len, int pass_fd)
{
	if (!type_known(type) || len > CONTROL_MAX_PAYLOAD ||
	    (payload == NULL && len > 0))
		return -EINVAL;

	struct control_header h = {
		.magic = CONTROL_MAGIC,
		.version = CONTROL_VERSION,
		.type = type,
		.length = len,
		.request_id = request_id,
	};
	struct iovec iov[2] = {
		{.iov_base = &h, .iov_len = sizeof(h)},
		{.iov_base = (void *)(uintptr_t)payload, .iov_len = len},
	};
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(int))];
	} ctl;
	struct msghdr msg = {
		.msg_iov = iov,
		.msg_iovlen = len > 0 ? 2 : 1,
	};
	if (pass_fd >= 0) {
		memset(&ctl, 0, sizeof(ctl));
		msg.msg_control = ctl.buf;
		msg.msg_controllen = sizeof(ctl.buf);
		struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &pass_fd, sizeof(int));
	}

	/* MSG_NOSIGNAL: a closed peer is -EPIPE here, never SIGPIPE in a
	 * producer that did not ask for it. MSG_DONTWAIT: see the file note. */
	ssize_t n;
	do
		n = sendmsg(fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	/* SEQPACKET sends whole messages or nothing; anything else is a
	 * socket of another type passed by mistake. */
	if ((size_t)n != sizeof(h) + len)
		return -EPROTO;
	return 0;
}

int control_send_error(int fd, uint32_t request_id, int code,
		       const char *fmt, ...)
{
	char buf[sizeof(struct control_error) + CONTROL_ERROR_TEXT_MAX + 1];
	struct control_error e = {.code = (uint32_t)code};
	memcpy(buf, &e, sizeof(e));
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf + sizeof(e), CONTROL_ERROR_TEXT_MAX + 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	if ((unsigned)n > CONTROL_ERROR_TEXT_MAX)
		n = CONTROL_ERROR_TEXT_MAX;
	return control_send(fd, CONTROL_MSG_ERROR, request_id, buf,
			    (uint32_t)(sizeof(e) + (unsigned)n), -1);
}

void control_error_decode(const void *payload, uint32_t len, int *code,
			  char *text, size_t text_len)
{
	struct control_error e;
	if (payload == NULL || len < sizeof(e)) {
		*code = EPROTO;
		if (text_len > 0)
			snprintf(text, text_len,
				 "malformed ERROR message: %u payload bytes, "
				 "expected at least %zu", len, sizeof(e));
		return;
	}
	memcpy(&e, payload, sizeof(e));
	*code = e.code >= 1 && e.code <= 4095 ? (int)e.code : EPROTO;
	if (text_len == 0)
		return;
	const unsigned char *src = (const unsigned char *)payload + sizeof(e);
	size_t n = len - sizeof(e);
	if (n > text_len - 1)
		n = text_len - 1;
	/* The text is a peer's: keep it to one printable line in our logs. */
	for (size_t i = 0; i < n; i++)
		text[i] = src[i] >= 0x20 && src[i] < 0x7f ? (char)src[i] : '?';
	text[n] = '\0';
}

/* Waits until fd is readable (or hung up, or in error: the read that
 * follows reports which) or the deadline passes. deadline < 0: none. */
static int wait_readable(int fd, int64_t deadline)
{
	for (;;) {
		int wait_ms = -1;
		if (deadline >= 0) {
			int64_t left = deadline - now_ms();
			wait_ms = left > 0 ? (left > 1000000 ? 1000000 : (int)left) : 0;
		}
		struct pollfd p = {.fd = fd, .events = POLLIN};
		int rc = poll(&p, 1, wait_ms);
		if (rc < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (rc > 0) {
			if (p.revents & POLLNVAL)
				return -EBADF;
			return 0;
		}
		if (deadline >= 0 && now_ms() >= deadline)
			return -ETIMEDOUT;
	}
}

static void close_fds(const int *fds, int n)
{
	for (int i = 0; i < n; i++)
		close(fds[i]);
}

int control_recv(int fd, struct control_header *h, void *payload,
		 uint32_t cap, int *got_fd, int timeout_ms)
{
	if (got_fd != NULL)
		*got_fd = -1;
	if (h == NULL || (payload == NULL && cap > 0))
		return -EINVAL;

	int64_t deadline = timeout_ms < 0 ? -1 : now_ms() + timeout_ms;
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(int) * CONTROL_FDS_SEEN)];
	} ctl;
	struct iovec iov[2];
	struct msghdr msg;
	ssize_t n;
	for (;;) {
		int rc = wait_readable(fd, deadline);
		if (rc < 0)
			return rc;
		memset(h, 0, sizeof(*h));
		iov[0] = (struct iovec){.iov_base = h, .iov_len = sizeof(*h)};
		iov[1] = (struct iovec){.iov_base = payload, .iov_len = cap};
		msg = (struct msghdr){
			.msg_iov = iov,
			.msg_iovlen = cap > 0 ? 2 : 1,
			.msg_control = ctl.buf,
			.msg_controllen = sizeof(ctl.buf),
		};
		/* MSG_TRUNC as an input flag makes the kernel return the
		 * message's real length even when it did not fit, so an
		 * oversized but well-formed message is told apart from a lie
		 * about its length. */
		n = recvmsg(fd, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC | MSG_TRUNC);
		if (n >= 0)
			break;
		if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)
			continue; /* another reader took it, or a spurious wake */
		return -errno;
	}

	/* Collect every fd first, so each error path below can close them. */
	int fds[CONTROL_FDS_SEEN];
	int n_fds = 0;
	bool bad_control = false;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c != NULL;
	     c = CMSG_NXTHDR(&msg, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS ||
		    c->cmsg_len < CMSG_LEN(0)) {
			bad_control = true;
			continue;
		}
		size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < k && n_fds < CONTROL_FDS_SEEN; i++)
			memcpy(&fds[n_fds++], CMSG_DATA(c) + i * sizeof(int),
			       sizeof(int));
	}

	int rc = -EPROTO;
	if (n == 0) {
		rc = -ECONNRESET; /* orderly close (see the header on empty) */
		goto fail;
	}
	if ((msg.msg_flags & MSG_CTRUNC) || bad_control)
		goto fail;
	if ((size_t)n < sizeof(*h))
		goto fail;
	if (h->magic != CONTROL_MAGIC || h->version != CONTROL_VERSION ||
	    !type_known(h->type) || h->length > CONTROL_MAX_PAYLOAD)
		goto fail;
	if ((size_t)n - sizeof(*h) != h->length)
		goto fail;
	if (h->length > cap) {
		rc = -EMSGSIZE; /* well-formed, but not for this buffer */
		goto fail;
	}
	if (n_fds > 1 || (n_fds == 1 && got_fd == NULL))
		goto fail;
	if (n_fds == 1)
		*got_fd = fds[0];
	return 0;

fail:
	close_fds(fds, n_fds);
	return rc;
}

int control_drain_split(const void *body, uint32_t len, struct control_drain *out,
			char *err, size_t err_len)
{
	struct op_drain q;
	out->n = 0;
	if (len < sizeof(q)) {
		snprintf(err, err_len, "drain: a body of %u bytes; expected at least "
			 "%zu", len, sizeof(q));
		return -EINVAL;
	}
	memcpy(&q, body, sizeof(q));
	if (q.n_nodes == 0 || q.n_nodes > OP_DRAIN_NODES_MAX ||
	    q.selector_len > OP_DRAIN_SELECTOR_MAX ||
	    q.selector_len > len - sizeof(q)) {
		snprintf(err, err_len, "drain: %u nodes, a selector of %u bytes in a "
			 "body of %u: expected 1..%u nodes, a selector of at most %u "
			 "bytes within the body", q.n_nodes, q.selector_len, len,
			 OP_DRAIN_NODES_MAX, OP_DRAIN_SELECTOR_MAX);
		return -EINVAL;
	}
	out->selector = (const char *)body + sizeof(q);
	out->selector_len = q.selector_len;
	const char *at = out->selector + q.selector_len;
	const char *end = (const char *)body + len;
	for (uint32_t i = 0; i < q.n_nodes; i++) {
		const char *nul = at < end ? memchr(at, '\0', (size_t)(end - at)) : NULL;
		if (nul == NULL || nul == at) {
			snprintf(err, err_len, "drain: node name %u of %u: %s", i + 1,
				 q.n_nodes, nul == NULL ? "not NUL-ended within the "
				 "body" : "empty");
			return -EINVAL;
		}
		out->name[i] = at;
		out->len[i] = (uint32_t)(nul - at);
		at = nul + 1;
	}
	if (at != end) {
		snprintf(err, err_len, "drain: %zu bytes after the %u node names: "
			 "expected none", (size_t)(end - at), q.n_nodes);
		return -EINVAL;
	}
	out->n = q.n_nodes;
	return 0;
}

int control_approval_register_split(const void *body, uint32_t len,
				    struct control_approval_register *out,
				    char *err, size_t err_len)
{
	struct op_approval_register q;
	*out = (struct control_approval_register){0};
	if (body == NULL || len < sizeof(q))
		return errmsg_rc(-EINVAL, err, err_len, "approval registration: a "
				 "body of %u bytes; expected at least %zu", len,
				 sizeof(q));
	memcpy(&q, body, sizeof(q));
	size_t name_len = strnlen(q.name, sizeof(q.name));
	if (name_len == 0 || name_len == sizeof(q.name))
		return errmsg_rc(-EINVAL, err, err_len, "approval registration: "
				 "name: %s", name_len == 0 ? "empty; expected a name" :
				 "not NUL-ended within its 64 bytes");
	for (size_t i = 0; i < sizeof(q.name); i++) {
		unsigned char c = (unsigned char)q.name[i];
		if (i < name_len ? (c < 0x21 || c > 0x7e) : c != 0)
			return errmsg_rc(-EINVAL, err, err_len, "approval registration: "
					 "name: byte %zu is %#x; expected printable "
					 "ASCII without spaces, then NULs", i, c);
	}
	if (q.deadline_ms == 0 || q.deadline_ms > OP_APPROVAL_DEADLINE_MAX_MS ||
	    (q.flags & ~OP_APPROVAL_FLAGS_ALL) || q.reserved != 0)
		return errmsg_rc(-EINVAL, err, err_len, "approval registration %s: "
				 "deadline %u ms, flags %#x, reserved %u: expected a "
				 "deadline of 1..%u ms, flags of FAIL_OPEN (1), "
				 "RECLAIM_TOO (2) and PREEMPT_TOO (4) only, "
				 "reserved 0", q.name, q.deadline_ms, q.flags,
				 q.reserved, OP_APPROVAL_DEADLINE_MAX_MS);
	if (q.selector_len > OP_APPROVAL_SELECTOR_MAX ||
	    q.selector_len != len - sizeof(q))
		return errmsg_rc(-EINVAL, err, err_len, "approval registration %s: a "
				 "selector of %u bytes in a body of %u: expected at "
				 "most %u bytes, the rest of the body", q.name,
				 q.selector_len, len, OP_APPROVAL_SELECTOR_MAX);
	const char *sel = (const char *)body + sizeof(q);
	if (memchr(sel, '\0', q.selector_len) != NULL)
		return errmsg_rc(-EINVAL, err, err_len, "approval registration %s: "
				 "the selector holds a NUL", q.name);
	memcpy(out->name, q.name, name_len);
	out->deadline_ms = q.deadline_ms;
	out->fail_open = q.flags & OP_APPROVAL_FAIL_OPEN;
	out->reclaim = q.flags & OP_APPROVAL_RECLAIM_TOO;
	out->preempt = q.flags & OP_APPROVAL_PREEMPT_TOO;
	out->selector = sel;
	out->selector_len = q.selector_len;
	return 0;
}

int control_approval_answer_check(const void *body, uint32_t len,
				  struct op_approval_answer *out,
				  char *err, size_t err_len)
{
	*out = (struct op_approval_answer){0};
	if (body == NULL || len != sizeof(*out))
		return errmsg_rc(-EINVAL, err, err_len, "approval answer: a body of "
				 "%u bytes; expected %zu", len, sizeof(*out));
	struct op_approval_answer a;
	memcpy(&a, body, sizeof(a));
	bool nb = a.verdict == OP_APPROVAL_NOT_BEFORE;
	if (a.ask_id == 0 || a.verdict < OP_APPROVAL_GRANT ||
	    a.verdict > OP_APPROVAL_NOT_BEFORE ||
	    (nb ? a.not_before_ms == 0 || a.not_before_ms > OP_APPROVAL_NOT_BEFORE_MAX_MS
		: a.not_before_ms != 0))
		return errmsg_rc(-EINVAL, err, err_len, "approval answer: ask %llu, "
				 "verdict %u, not_before %u ms: expected an ask id "
				 "from 1, GRANT (1), DENY (2) or NOT_BEFORE (3), and "
				 "1..%u ms with NOT_BEFORE only",
				 (unsigned long long)a.ask_id, a.verdict,
				 a.not_before_ms, OP_APPROVAL_NOT_BEFORE_MAX_MS);
	*out = a;
	return 0;
}

int control_failure_split(const void *body, uint32_t len,
			  struct control_failure *out, char *err, size_t err_len)
{
	struct op_failure f;
	*out = (struct control_failure){0};
	if (len < sizeof(f))
		return errmsg_rc(-EINVAL, err, err_len, "failure report: a body of "
				 "%u bytes; expected at least %zu", len, sizeof(f));
	memcpy(&f, body, sizeof(f));
	if (f.reserved != 0 || f.reason_len > OP_FAILURE_REASON_MAX ||
	    f.reason_len != len - sizeof(f))
		return errmsg_rc(-EINVAL, err, err_len, "failure report: reserved %u, "
				 "a reason of %u bytes in a body of %u: expected 0, "
				 "and a reason of at most %u bytes ending the body",
				 f.reserved, f.reason_len, len, OP_FAILURE_REASON_MAX);
	const char *reason = (const char *)body + sizeof(f);
	if (f.reason_len > 0 && memchr(reason, '\0', f.reason_len) != NULL)
		return errmsg_rc(-EINVAL, err, err_len, "failure report: a NUL in "
				 "its reason: expected text");
	if (f.placement_id == 0)
		return errmsg_rc(-EINVAL, err, err_len, "failure report: placement id "
				 "0: expected an id from a PLACED answer");
	out->placement_id = f.placement_id;
	out->reason = reason;
	out->reason_len = f.reason_len;
	return 0;
}

int control_pool_release_split(const void *body, uint32_t len,
			       struct control_pool_release *out, char *err,
			       size_t err_len)
{
	struct op_pool_release r;
	*out = (struct control_pool_release){0};
	if (len < sizeof(r))
		return errmsg_rc(-EINVAL, err, err_len, "pool release: a body of %u "
				 "bytes; expected at least %zu", len, sizeof(r));
	memcpy(&r, body, sizeof(r));
	if (r.pool_len == 0 || r.pool_len > OP_POOL_NAME_MAX ||
	    r.template_len > OP_POOL_NAME_MAX ||
	    (uint64_t)r.pool_len + r.template_len != len - sizeof(r))
		return errmsg_rc(-EINVAL, err, err_len, "pool release: a pool of %u "
				 "bytes and a template of %u in a body of %u: expected "
				 "1..%u and 0..%u bytes ending the body", r.pool_len,
				 r.template_len, len, OP_POOL_NAME_MAX, OP_POOL_NAME_MAX);
	const char *pool = (const char *)body + sizeof(r);
	const char *tpl = pool + r.pool_len;
	if (memchr(pool, '\0', r.pool_len) != NULL ||
	    (r.template_len > 0 && memchr(tpl, '\0', r.template_len) != NULL))
		return errmsg_rc(-EINVAL, err, err_len, "pool release: a NUL in the "
				 "pool or the template: expected text");
	out->pool = pool;
	out->pool_len = r.pool_len;
	out->template = r.template_len > 0 ? tpl : NULL;
	out->template_len = r.template_len;
	return 0;
}

int control_template_split(uint32_t arg, const void *body, uint32_t len,
			   struct control_template *out, char *err, size_t err_len)
{
	*out = (struct control_template){0};
	if (body == NULL && len > 0)
		return errmsg_rc(-EPROTO, err, err_len, "template: NULL body");
	if (arg == OP_TEMPLATE_PLAIN) {
		out->pod = body;
		out->pod_len = len;
		return 0;
	}
	if (arg != OP_TEMPLATE_SCOPED)
		return errmsg_rc(-EPROTO, err, err_len, "template request: arg %u; "
				 "expected %u (plain) or %u (scoped)", arg,
				 OP_TEMPLATE_PLAIN, OP_TEMPLATE_SCOPED);
	struct op_template_scope h;
	if (len < sizeof(h))
		return errmsg_rc(-EPROTO, err, err_len, "scoped template of %u bytes: "
				 "shorter than its %zu-byte header", len, sizeof(h));
	memcpy(&h, body, sizeof(h));
	if (h.reserved != 0)
		return errmsg_rc(-EPROTO, err, err_len, "scoped template: reserved "
				 "field %u; expected 0", h.reserved);
	if (h.scope_len > OP_TEMPLATE_SCOPE_MAX || h.scope_len > len - sizeof(h))
		return errmsg_rc(-EPROTO, err, err_len, "scoped template: scope_len "
				 "%u; expected at most %u and at most the %zu bytes "
				 "after the header", h.scope_len, OP_TEMPLATE_SCOPE_MAX,
				 len - sizeof(h));
	const char *b = body;
	out->scoped = true;
	out->scope = b + sizeof(h);
	out->scope_len = h.scope_len;
	out->pod = out->scope + h.scope_len;
	out->pod_len = len - (uint32_t)sizeof(h) - h.scope_len;
	return 0;
}

int control_template_join(const char *scope, size_t scope_len, const char *pod,
			  size_t pod_len, void **out, uint32_t *out_len)
{
	*out = NULL;
	*out_len = 0;
	struct op_template_scope h = {.scope_len = (uint32_t)scope_len};
	if (scope_len > OP_TEMPLATE_SCOPE_MAX ||
	    pod_len > CONTROL_MAX_PAYLOAD - sizeof(struct op_request) - sizeof(h) -
		      scope_len)
		return -EMSGSIZE;
	size_t n = sizeof(h) + scope_len + pod_len;
	char *b = malloc(n ? n : 1);
	if (b == NULL)
		return -ENOMEM;
	memcpy(b, &h, sizeof(h));
	if (scope_len > 0)
		memcpy(b + sizeof(h), scope, scope_len);
	if (pod_len > 0)
		memcpy(b + sizeof(h) + scope_len, pod, pod_len);
	*out = b;
	*out_len = (uint32_t)n;
	return 0;
}
