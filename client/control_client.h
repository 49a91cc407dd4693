/* A producer's end of the control socket: connect to the daemon, say HELLO,
 * then make calls (REQUEST -> RESPONSE or ERROR), possibly receiving an fd
 * with the answer. Slow path only. libshmsched-client (client.c) builds
 * its calls on these, and tests use them to speak the protocol raw; the
 * framing is ingest/control_proto.h.
 *
 * Nothing here ever hangs or raises SIGPIPE: every wait has a deadline, a
 * daemon that has gone is reported as -ECONNRESET or -EPIPE as soon as the
 * kernel knows it, and sends use MSG_NOSIGNAL.
 *
 * Threads: the fd is the caller's; one call at a time per fd (a call reads
 * until it finds its own answer, so two concurrent calls on one fd could
 * take each other's answers). Different fds are independent.
 */
#ifndef SHMSCHED_CLIENT_CONTROL_CLIENT_H
#define SHMSCHED_CLIENT_CONTROL_CLIENT_H

#include <stddef.h>
#include <stdint.h>

/* Connects to the daemon's control socket at `path` and completes the
 * HELLO/WELCOME handshake within timeout_ms (< 0: no limit). Returns the
 * connected fd (close-on-exec; close it to disconnect), or a negative errno
 * with a message naming the path in err:
 *   -ENOENT           no shmsched daemon at path (no socket file there)
 *   -ECONNREFUSED     a socket file but no daemon listening on it
 *   -EACCES           the socket file's permissions, or the daemon refused
 *                     this process's credentials (err gives its reason)
 *   -EPROTONOSUPPORT  the daemon's ABI version is not ours (err names both)
 *   -EBUSY            the daemon is at its connection limit
 *   -ETIMEDOUT        no WELCOME in time
 *   -ECONNRESET       the daemon closed the connection during the handshake
 *   -EPROTO           the daemon answered something malformed
 *   -ENAMETOOLONG     path does not fit a Unix socket address
 *   other negative errnos: the code in the daemon's ERROR (its on_connect
 *   refusal), or from socket(2) and connect(2) */
int control_client_connect(const char *path, int timeout_ms, char *err,
			   size_t err_len);

/* Sends req[0..len) as a REQUEST and waits at most timeout_ms (< 0: no
 * limit) for its answer. Answers to earlier calls that timed out are read
 * and dropped (with their fds). On RESPONSE copies its payload to resp,
 * stores its length in *resp_len (if not NULL) and its fd, or -1, in
 * *resp_fd (if not NULL; otherwise a received fd is closed). On any error
 * *resp_fd is -1.
 * Returns 0, or:
 *   -ETIMEDOUT   no answer in time (the fd stays usable)
 *   -ECONNRESET, -EPIPE  the daemon has gone or closed this connection
 *   -EMSGSIZE    the answer's payload is longer than cap (it is dropped)
 *   -EINVAL      len > CONTROL_MAX_PAYLOAD, or a NULL buffer with a size
 *   -EPROTO      the daemon sent something malformed
 *   a negative errno from the daemon's ERROR answer, its text in err */
int control_client_call(int fd, const void *req, uint32_t len, void *resp,
			uint32_t cap, uint32_t *resp_len, int *resp_fd,
			int timeout_ms, char *err, size_t err_len);

/* The same, passing a duplicate of `pass_fd` with the request (SCM_RIGHTS;
 * -1: none). The caller keeps pass_fd. */
int control_client_call_fd(int fd, const void *req, uint32_t len, int pass_fd,
			   void *resp, uint32_t cap, uint32_t *resp_len,
			   int *resp_fd, int timeout_ms, char *err, size_t err_len);

#endif
