/* See admin_call.h. A daemon that refuses this connection (its
 * credentials, its limit) says why in an ERROR before it closes: that is
 * read even when the HELLO could not be sent. */
#include "cli/admin_call.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "ingest/ingest.h"
#include "shm/shm.h"

int cli_admin_call(const char *cmd, const char *sock, uint32_t kind, uint32_t action,
		   const void *body, size_t len, int timeout_ms, size_t min,
		   char *msg, size_t cap, uint32_t *got)
{
	return cli_admin_call_fd(cmd, sock, kind, action, body, len, timeout_ms,
				 min, msg, cap, got, NULL);
}

int cli_admin_call_fd(const char *cmd, const char *sock, uint32_t kind,
		      uint32_t action, const void *body, size_t len,
		      int timeout_ms, size_t min, char *msg, size_t cap,
		      uint32_t *got, int *fd_out)
{
	int got_fd = -1;
	if (fd_out != NULL)
		*fd_out = -1;
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	if (strlen(sock) >= sizeof(a.sun_path)) {
		fprintf(stderr, "shmsched %s: %s: too long for a socket path\n", cmd, sock);
		return -1;
	}
	memcpy(a.sun_path, sock, strlen(sock) + 1);
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		fprintf(stderr, "shmsched %s: the admin socket %s: %s\n", cmd, sock,
			strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	struct control_hello hello = {.abi_version = SHM_ABI_VERSION};
	struct control_header h;
	int rc = control_send(fd, CONTROL_MSG_HELLO, 0, &hello, sizeof(hello), -1);
	if (rc == 0 || rc == -EPIPE || rc == -ECONNRESET) {
		int sent = rc;
		rc = control_recv(fd, &h, msg, cap, NULL, timeout_ms);
		if (rc < 0 && sent < 0)
			rc = sent;
	}
	if (rc == 0 && h.type == CONTROL_MSG_WELCOME) {
		struct op_request op = {.kind = kind, .arg = action};
		memcpy(msg, &op, sizeof(op));
		if (len > 0)
			memcpy(msg + sizeof(op), body, len);
		rc = control_send(fd, CONTROL_MSG_REQUEST, 1, msg,
				  (uint32_t)(sizeof(op) + len), -1);
		if (rc == 0)
			rc = control_recv(fd, &h, msg, cap,
					  fd_out != NULL ? &got_fd : NULL, timeout_ms);
	}
	close(fd);
	if (rc < 0) {
		fprintf(stderr, "shmsched %s: the admin socket %s: %s\n", cmd, sock,
			strerror(-rc));
		return -1;
	}
	if (h.type == CONTROL_MSG_ERROR) {
		int code;
		char text[CONTROL_ERROR_TEXT_MAX + 1];
		control_error_decode(msg, h.length, &code, text, sizeof(text));
		fprintf(stderr, "shmsched %s: the daemon refused: %s (%s)\n", cmd, text,
			strerror(code));
		if (got_fd >= 0)
			close(got_fd);
		return -1;
	}
	if (h.type != CONTROL_MSG_RESPONSE || h.length < min) {
		fprintf(stderr, "shmsched %s: the daemon's answer: a %s of %u bytes; "
			"expected a RESPONSE of at least %zu\n", cmd,
			control_msg_type_name(h.type), h.length, min);
		if (got_fd >= 0)
			close(got_fd);
		return -1;
	}
	*got = h.length;
	if (fd_out != NULL)
		*fd_out = got_fd;
	return 0;
}
