/* The producer's end of the control socket. See control_client.h.
 *
 * Invariants: every wait is bounded by the caller's deadline; every fd the
 * daemon sends is either handed to the caller or closed; request ids are
 * never 0 (0 marks the daemon's connection-level ERRORs) and differ between
 * consecutive calls in a process, so an answer that arrives after its call
 * timed out is recognised and dropped by the next call.
 *
 * Threads: no state but the request id counter (atomic, see next_request).
 */
#include "client/control_client.h"
#include "base/base.h"


#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "ingest/control_proto.h"
#include "shm/shm.h"

/* Room for an ERROR: its code and its longest text. */
#define ERROR_BUF_SIZE (sizeof(struct control_error) + CONTROL_ERROR_TEXT_MAX)
/* While the daemon's listen backlog is full, connect(2) on a non-blocking
 * socket fails with EAGAIN; retry at this interval until the deadline. */
#define CONNECT_RETRY_MS 10

static int64_t deadline_of(int timeout_ms)
{
	return timeout_ms < 0 ? -1 : now_ms() + timeout_ms;
}

/* Milliseconds left before deadline, for poll-style calls: -1 for none. */
static int left_ms(int64_t deadline)
{
	if (deadline < 0)
		return -1;
	int64_t left = deadline - now_ms();
	if (left <= 0)
		return 0;
	return left > 1000000 ? 1000000 : (int)left;
}

static uint32_t next_request(void)
{
	/* Relaxed: ids only need to differ, not to order anything; the
	 * atomic RMW alone makes each value handed out once. */
	static atomic_uint counter = 1;
	uint32_t id;
	do
		id = atomic_fetch_add_explicit(&counter, 1, memory_order_relaxed);
	while (id == 0);
	return id;
}

static int connect_socket(int fd, const char *path, int64_t deadline,
			  char *err, size_t err_len)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	memcpy(addr.sun_path, path, strlen(path) + 1);
	for (;;) {
		if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) == 0)
			return 0;
		int e = errno;
		if (e == EINTR)
			continue;
		if (e == EAGAIN) {
			if (left_ms(deadline) == 0) {
				errmsg(err, err_len, "shmsched daemon at %s: its "
					"connection backlog stayed full until "
					"the timeout", path);
				return -ETIMEDOUT;
			}
			poll(NULL, 0, CONNECT_RETRY_MS);
			continue;
		}
		if (e == ENOENT)
			errmsg(err, err_len, "no shmsched daemon at %s (no such "
				"socket file)", path);
		else if (e == ECONNREFUSED)
			errmsg(err, err_len, "no shmsched daemon listening at %s "
				"(the socket file is there, nothing accepts on "
				"it: a daemon that exited?)", path);
		else if (e == EACCES || e == EPERM)
			errmsg(err, err_len, "shmsched daemon at %s: permission "
				"denied by the socket file or its directory for "
				"uid %u", path, (unsigned)geteuid());
		else
			errmsg(err, err_len, "shmsched daemon at %s: connect: %s",
				path, strerror(e));
		return -e;
	}
}

/* Reads the daemon's answer to HELLO. */
static int read_welcome(int fd, const char *path, int64_t deadline, char *err,
			size_t err_len)
{
	_Alignas(8) unsigned char buf[ERROR_BUF_SIZE];
	struct control_header h;
	int got_fd;
	int rc = control_recv(fd, &h, buf, sizeof(buf), &got_fd,
			      left_ms(deadline));
	if (rc == -ECONNRESET) {
		/* A daemon that refuses us may close before reading our
		 * HELLO; the kernel then reports the reset once before the
		 * ERROR still queued for us. Look again, without waiting. */
		rc = control_recv(fd, &h, buf, sizeof(buf), &got_fd, 0);
		if (rc == -ETIMEDOUT)
			rc = -ECONNRESET;
	}
	if (got_fd >= 0)
		close(got_fd); /* no fd belongs with a handshake */
	if (rc == -ECONNRESET) {
		errmsg(err, err_len, "shmsched daemon at %s closed the "
			"connection during the handshake", path);
		return rc;
	}
	if (rc == -ETIMEDOUT) {
		errmsg(err, err_len, "shmsched daemon at %s: no answer to "
			"HELLO before the timeout", path);
		return rc;
	}
	if (rc < 0) {
		errmsg(err, err_len, "shmsched daemon at %s: reading its answer "
			"to HELLO: %s", path, strerror(-rc));
		return rc == -EMSGSIZE ? -EPROTO : rc;
	}
	if (h.type == CONTROL_MSG_ERROR) {
		char text[CONTROL_ERROR_TEXT_MAX + 1];
		int code;
		control_error_decode(buf, h.length, &code, text, sizeof(text));
		errmsg(err, err_len, "shmsched daemon at %s refused the "
			"connection: %s", path, text);
		return -code;
	}
	struct control_hello welcome;
	if (h.type != CONTROL_MSG_WELCOME || h.length != sizeof(welcome)) {
		errmsg(err, err_len, "shmsched daemon at %s: expected WELCOME "
			"with %zu payload bytes, got %s with %u", path,
			sizeof(welcome), control_msg_type_name(h.type), h.length);
		return -EPROTO;
	}
	memcpy(&welcome, buf, sizeof(welcome));
	if (welcome.abi_version != SHM_ABI_VERSION) {
		errmsg(err, err_len, "shmsched daemon at %s: client ABI version "
			"%u, daemon ABI version %u", path, SHM_ABI_VERSION,
			welcome.abi_version);
		return -EPROTONOSUPPORT;
	}
	return 0;
}

int control_client_connect(const char *path, int timeout_ms, char *err,
			   size_t err_len)
{
	int64_t deadline = deadline_of(timeout_ms);
	errmsg(err, err_len, "no error");
	if (path == NULL) {
		errmsg(err, err_len, "shmsched daemon: no socket path given");
		return -EINVAL;
	}
	struct sockaddr_un addr;
	if (strlen(path) >= sizeof(addr.sun_path)) {
		errmsg(err, err_len, "shmsched daemon at %s: path is %zu bytes, "
			"a Unix socket path holds at most %zu", path,
			strlen(path), sizeof(addr.sun_path) - 1);
		return -ENAMETOOLONG;
	}
	/* Non-blocking for connect only: a full backlog must not hang us. */
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		int e = errno;
		errmsg(err, err_len, "shmsched daemon at %s: socket: %s", path,
			strerror(e));
		return -e;
	}
	int rc = connect_socket(fd, path, deadline, err, err_len);
	if (rc < 0)
		goto fail_connect;
	int flags = fcntl(fd, F_GETFL);
	if (flags >= 0)
		fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);

	struct control_hello hello = {.abi_version = SHM_ABI_VERSION};
	rc = control_send(fd, CONTROL_MSG_HELLO, 0, &hello, sizeof(hello), -1);
	/* A refused peer may find the daemon already gone from the socket;
	 * its reason still waits in our queue, so read on. */
	if (rc < 0 && rc != -EPIPE && rc != -ECONNRESET) {
		errmsg(err, err_len, "shmsched daemon at %s: sending HELLO: %s",
			path, strerror(-rc));
		goto fail_handshake;
	}
	rc = read_welcome(fd, path, deadline, err, err_len);
	if (rc < 0)
		goto fail_handshake;
	return fd;

fail_handshake:
fail_connect:
	close(fd);
	return rc;
}

/* Sends one REQUEST, waiting for room in the daemon's queue until the
 * deadline if it is full. */
static int send_request(int fd, uint32_t id, const void *req, uint32_t len,
			int pass_fd, int64_t deadline, char *err, size_t err_len)
{
	for (;;) {
		int rc = control_send(fd, CONTROL_MSG_REQUEST, id, req, len, pass_fd);
		if (rc != -EAGAIN) {
			if (rc == -EPIPE || rc == -ECONNRESET || rc == -ENOTCONN)
				errmsg(err, err_len, "shmsched daemon (fd %d) has "
					"closed the connection", fd);
			else if (rc < 0)
				errmsg(err, err_len, "shmsched daemon (fd %d): "
					"sending REQUEST: %s", fd, strerror(-rc));
			return rc;
		}
		struct pollfd p = {.fd = fd, .events = POLLOUT};
		int n = poll(&p, 1, left_ms(deadline));
		if (n == 0) {
			errmsg(err, err_len, "shmsched daemon (fd %d) did not "
				"read requests before the timeout", fd);
			return -ETIMEDOUT;
		}
		if (n < 0 && errno != EINTR) {
			int e = errno;
			errmsg(err, err_len, "shmsched daemon (fd %d): poll: %s",
				fd, strerror(e));
			return -e;
		}
	}
}

int control_client_call(int fd, const void *req, uint32_t len, void *resp,
			uint32_t cap, uint32_t *resp_len, int *resp_fd,
			int timeout_ms, char *err, size_t err_len)
{
	return control_client_call_fd(fd, req, len, -1, resp, cap, resp_len,
				      resp_fd, timeout_ms, err, err_len);
}

int control_client_call_fd(int fd, const void *req, uint32_t len, int pass_fd,
			   void *resp, uint32_t cap, uint32_t *resp_len,
			   int *resp_fd, int timeout_ms, char *err, size_t err_len)
{
	int64_t deadline = deadline_of(timeout_ms);
	errmsg(err, err_len, "no error");
	if (resp_fd != NULL)
		*resp_fd = -1;
	if (resp_len != NULL)
		*resp_len = 0;
	if (len > CONTROL_MAX_PAYLOAD || (req == NULL && len > 0) ||
	    (resp == NULL && cap > 0)) {
		errmsg(err, err_len, "control call: request of %u bytes (at "
			"most %u) or NULL buffer", len, CONTROL_MAX_PAYLOAD);
		return -EINVAL;
	}
	uint32_t id = next_request();
	int rc = send_request(fd, id, req, len, pass_fd, deadline, err, err_len);
	if (rc < 0)
		return rc;

	/* An ERROR may be longer than the caller's buffer: small buffers
	 * receive into scratch, and a RESPONSE is copied out if it fits. */
	_Alignas(8) unsigned char scratch[ERROR_BUF_SIZE];
	bool use_scratch = cap < sizeof(scratch);
	unsigned char *buf = use_scratch ? scratch : resp;
	uint32_t buf_cap = use_scratch ? (uint32_t)sizeof(scratch) : cap;
	for (;;) {
		struct control_header h;
		int got_fd;
		rc = control_recv(fd, &h, buf, buf_cap, &got_fd, left_ms(deadline));
		if (rc == -EMSGSIZE && h.request_id != id)
			continue; /* an outsized answer to an earlier call */
		if (rc == -EMSGSIZE) {
			errmsg(err, err_len, "shmsched daemon (fd %d): answer of "
				"%u bytes does not fit the %u-byte buffer", fd,
				h.length, cap);
			return rc;
		}
		if (rc == -ETIMEDOUT) {
			errmsg(err, err_len, "shmsched daemon (fd %d): no answer "
				"to request %u before the timeout", fd, id);
			return rc;
		}
		if (rc == -ECONNRESET) {
			errmsg(err, err_len, "shmsched daemon (fd %d) has closed "
				"the connection", fd);
			return rc;
		}
		if (rc < 0) {
			errmsg(err, err_len, "shmsched daemon (fd %d): reading "
				"the answer: %s", fd, strerror(-rc));
			return rc;
		}
		if (h.request_id != id && h.request_id != 0) {
			if (got_fd >= 0)
				close(got_fd); /* answer to a call that gave up */
			continue;
		}
		if (h.type == CONTROL_MSG_ERROR) {
			if (got_fd >= 0)
				close(got_fd);
			char text[CONTROL_ERROR_TEXT_MAX + 1];
			int code;
			control_error_decode(buf, h.length, &code, text,
					     sizeof(text));
			errmsg(err, err_len, "shmsched daemon (fd %d)%s: %s", fd,
				h.request_id == 0 ? " closed the connection" : "",
				text);
			return -code;
		}
		if (h.type != CONTROL_MSG_RESPONSE || h.request_id == 0) {
			if (got_fd >= 0)
				close(got_fd);
			errmsg(err, err_len, "shmsched daemon (fd %d): expected "
				"RESPONSE to request %u, got %s", fd, id,
				control_msg_type_name(h.type));
			return -EPROTO;
		}
		if (h.length > cap) {
			if (got_fd >= 0)
				close(got_fd);
			errmsg(err, err_len, "shmsched daemon (fd %d): answer of "
				"%u bytes does not fit the %u-byte buffer", fd,
				h.length, cap);
			return -EMSGSIZE;
		}
		if (use_scratch && h.length > 0)
			memcpy(resp, scratch, h.length);
		if (resp_len != NULL)
			*resp_len = h.length;
		if (resp_fd != NULL)
			*resp_fd = got_fd;
		else if (got_fd >= 0)
			close(got_fd);
		return 0;
	}
}
