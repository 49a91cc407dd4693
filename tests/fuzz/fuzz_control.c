/* Fuzz target: control_recv's validation (ingest/control_proto.c) on
 * arbitrary messages. Input: one option byte, then the message's bytes,
 * sent as one SEQPACKET message through a socketpair. The option byte:
 *   bits 0-1  fds to attach (0..3, each a fresh memfd)
 *   bit  2    pass got_fd as NULL (an fd then must be refused)
 *   bits 3-7  receive buffer size: one of caps[] below
 * Checks: what is accepted has the right magic, version, a known type and a
 * length within the buffer; at most one fd comes back, and only when asked
 * for; nothing is ever leaked (the next free fd number never moves); every
 * refusal is one of the documented errors. */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ingest/ingest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const uint32_t caps[] = {0, 4, 8, 16, 64, 512, 4096, CONTROL_MAX_PAYLOAD};

static int pair[2] = {-1, -1};
static int fd_baseline = -1;
static uint8_t payload[CONTROL_MAX_PAYLOAD];

static int next_free_fd(void)
{
	int fd = dup(0 <= pair[0] ? pair[0] : 0);
	if (fd >= 0)
		close(fd);
	return fd;
}

static void send_message(const uint8_t *msg, size_t len, int n_fds)
{
	struct iovec iov = {.iov_base = (void *)(uintptr_t)msg, .iov_len = len};
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(3 * sizeof(int))];
	} ctl;
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
	int fds[3];
	for (int i = 0; i < n_fds; i++)
		fds[i] = memfd_create("fuzz", MFD_CLOEXEC);
	if (n_fds > 0) {
		memset(&ctl, 0, sizeof(ctl));
		m.msg_control = ctl.buf;
		m.msg_controllen = CMSG_SPACE((size_t)n_fds * sizeof(int));
		struct cmsghdr *c = CMSG_FIRSTHDR(&m);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN((size_t)n_fds * sizeof(int));
		memcpy(CMSG_DATA(c), fds, (size_t)n_fds * sizeof(int));
	}
	if (sendmsg(pair[1], &m, MSG_NOSIGNAL) != (ssize_t)len)
		__builtin_trap(); /* the harness, not the code under test */
	for (int i = 0; i < n_fds; i++)
		close(fds[i]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (pair[0] < 0) {
		if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) < 0)
			__builtin_trap();
		fd_baseline = next_free_fd();
	}
	if (size == 0)
		return 0;
	uint8_t opt = data[0];
	int n_fds = opt & 3;
	int want_fd = !(opt & 4);
	uint32_t cap = caps[(opt >> 3) % (sizeof(caps) / sizeof(caps[0]))];
	size_t len = size - 1;
	if (len > sizeof(struct control_header) + CONTROL_MAX_PAYLOAD + 64)
		len = sizeof(struct control_header) + CONTROL_MAX_PAYLOAD + 64;
	send_message(data + 1, len, n_fds);

	struct control_header h;
	int got_fd = 12345;
	int rc = control_recv(pair[0], &h, cap ? payload : NULL, cap,
			      want_fd ? &got_fd : NULL, 0);
	if (rc == 0) {
		if (h.magic != CONTROL_MAGIC || h.version != CONTROL_VERSION ||
		    h.type < CONTROL_MSG_HELLO || h.type >= CONTROL_MSG_TYPE_END ||
		    h.length > cap || h.length != len - sizeof(h))
			__builtin_trap();
		if (n_fds > 1 || (n_fds == 1 && !want_fd))
			__builtin_trap();
		if (want_fd) {
			if ((n_fds == 1) != (got_fd >= 0))
				__builtin_trap();
			if (got_fd >= 0) {
				if (fcntl(got_fd, F_GETFD) < 0)
					__builtin_trap();
				close(got_fd);
			}
		}
	} else {
		if (rc != -EPROTO && rc != -EMSGSIZE && rc != -ECONNRESET)
			__builtin_trap();
		if (rc == -ECONNRESET && len != 0)
			__builtin_trap(); /* only an empty message reads as closed */
		if (want_fd && got_fd != -1)
			__builtin_trap();
	}
	if (next_free_fd() != fd_baseline)
		__builtin_trap(); /* an fd leaked */
	return 0;
}
