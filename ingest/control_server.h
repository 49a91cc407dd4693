/* The daemon's end of the control socket: producers connect here to
 * register and to receive their regions' fds. Slow path only.
 *
 * One thread per server runs an epoll loop over the listening socket and
 * every connection. A peer is admitted only if its uid (SO_PEERCRED, taken
 * by the kernel at connect time, so a peer cannot lie about it) is in
 * cfg->allowed_uids or its gid in cfg->allowed_gids, then only after a HELLO
 * with the daemon's own SHM_ABI_VERSION, then only if cfg->on_connect agrees.
 * Refusals are sent to the peer as an ERROR naming the reason before the
 * connection is closed. A peer that sends anything malformed is sent an
 * ERROR and disconnected; others are not affected.
 *
 * Connections are named by a uint64_t id, never reused within one server,
 * so a late reply to a connection that has gone cannot reach a newer one.
 *
 * Callbacks: all run on the server thread, one at a time, so they need no
 * locks among themselves; they must not block for long (every other
 * connection waits) and must not call control_server_stop.
 * - on_connect: once per peer that passed the uid check and the HELLO.
 *   Return 0 to admit it, or a negative errno with a reason in `reason` to
 *   refuse it (the client sees both).
 * - on_request: once per REQUEST from an admitted peer. The handler answers
 *   with control_server_reply now or later, from any thread, or never (the
 *   client then times out). `fd` is the fd that came with the request or -1;
 *   the server closes it when on_request returns (dup it to keep it).
 * - on_disconnect: exactly once for every connection on_connect admitted,
 *   whatever ended it (the client closed, exited, crashed or was killed; it
 *   sent garbage; control_server_stop), and never for any other.
 */
#ifndef SHMSCHED_INGEST_CONTROL_SERVER_H
#define SHMSCHED_INGEST_CONTROL_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

struct control_server;
/* Defined by <sys/socket.h> under _GNU_SOURCE (as the tree builds); declared
 * here so this header also compiles on its own without it. */
struct ucred;

struct control_server_config {
	/* Peers admitted by credentials: uid in allowed_uids or gid in
	 * allowed_gids. Both empty (the default): the daemon's own uid only. */
	const uid_t *allowed_uids;
	size_t n_allowed_uids;
	const gid_t *allowed_gids;
	size_t n_allowed_gids;
	/* Mode of the socket file; 0: 0600. Connecting needs write access to
	 * it, so this is a first gate and the credential check the second. */
	mode_t socket_mode;
	/* Group of the socket file, when has_socket_group (with socket_mode's
	 * group bits, so that admitted gids can reach it); else left as the
	 * process's. */
	gid_t socket_group;
	int has_socket_group;
	/* Connections open at once, 1..4096; 0: 64. One more is refused with an
	 * ERROR (EBUSY) and closed. */
	unsigned max_connections;
	/* Connections one uid may have open at once, so that one user's idle
	 * or slow connections cannot lock the others out; 0: no limit besides
	 * max_connections. One more is refused with EBUSY, naming the uid. */
	unsigned max_per_uid;
	/* A connection that has not sent its HELLO this long after it was
	 * accepted is sent ERROR (ETIMEDOUT) and closed; 0: 5000 ms. */
	unsigned hello_timeout_ms;
	/* The same for its first REQUEST (a producer registers first) after
	 * the HELLO. 0: 5000 ms. */
	unsigned request_timeout_ms;
	/* After a request: a connection that sends no request for this long,
	 * and that is_busy (below) does not vouch for, is sent ERROR
	 * (ETIMEDOUT) and closed, so idle connections cannot hold slots
	 * forever. 0: no idle deadline. */
	unsigned idle_timeout_ms;
	/* The last `reserve_connections` free slots go only to uids that have
	 * no connection open: uids that already hold one cannot take them, so
	 * a few uids each at max_per_uid cannot fill the table and a uid with
	 * none still gets in (until that many uids hold the reserve, one
	 * each). 0: no reserve; above max_connections: refused. */
	unsigned reserve_connections;

	void *arg; /* passed to every callback */
	int (*on_connect)(void *arg, uint64_t conn,
			  const struct ucred *peer, char *reason,
			  size_t reason_len);
	/* `s` is the server to reply through: passed here because a request
	 * may arrive before control_server_start has returned it. */
	void (*on_request)(void *arg, struct control_server *s, uint64_t conn,
			   uint32_t request_id, const void *payload,
			   uint32_t len, int fd);
	void (*on_disconnect)(void *arg, uint64_t conn);
	/* Asked when an admitted connection reaches its idle deadline: return
	 * true to keep it (its producer has pods submitted, waiting or just
	 * answered: work that travels in shared memory, not on the socket),
	 * and it is asked again idle_timeout_ms later. NULL: every connection
	 * silent that long is closed. */
	bool (*is_busy)(void *arg, uint64_t conn);
};

/* Starts a server listening on `path`. The directory of `path` must exist
 * (it is never created: its permissions are the operator's call). A socket
 * file already at `path` is replaced only if nothing accepts connections on
 * it (a daemon that died without cleaning up); any other file is left alone.
 * On failure returns NULL with errno set and a message in err:
 *   EINVAL        bad config (max_connections out of range, NULL path)
 *   ENAMETOOLONG  path does not fit a Unix socket address
 *   ENOENT        the directory of path does not exist
 *   EADDRINUSE    a daemon is already listening on path
 *   EEXIST        path exists and is not a socket
 *   other errnos from socket(2), bind(2), chmod(2), listen(2), epoll,
 *   pthread_create (EAGAIN), malloc (ENOMEM)
 * Any thread may start servers; each is independent. */
struct control_server *control_server_start(const char *path,
					    const struct control_server_config *cfg,
					    char *err, size_t err_len);

/* Answers request `request_id` on connection `conn` with RESPONSE carrying
 * payload[0..len) and, if pass_fd >= 0, a duplicate of pass_fd (the caller
 * keeps pass_fd). Safe from any thread, including inside a callback, until
 * control_server_stop has begun. Never blocks: a client that does not read
 * its answers (its queue full) is disconnected.
 * Returns 0, or:
 *   -ENOTCONN  conn is not open (closed, or never was)
 *   -EINVAL    len > CONTROL_MAX_PAYLOAD, or NULL payload with len > 0
 *   -EAGAIN    the client's queue was full; it is being disconnected
 *   other errors of control_send (the client is being disconnected) */
int control_server_reply(struct control_server *s, uint64_t conn,
			 uint32_t request_id, const void *payload, uint32_t len,
			 int pass_fd);

/* As control_server_reply, but answers ERROR with `code` (a positive errno)
 * and a text for a person. */
int control_server_reply_error(struct control_server *s, uint64_t conn,
			       uint32_t request_id, int code, const char *fmt,
			       ...)
	__attribute__((format(printf, 5, 6)));

/* The credentials of connection `conn` (SO_PEERCRED, taken when it
 * connected). Any thread. Returns 0, or -ENOTCONN. */
int control_server_peer(struct control_server *s, uint64_t conn,
			struct ucred *out);

/* Asks for connection `conn` to be closed (on_disconnect follows on the
 * server thread). Safe from any thread. Returns 0 or -ENOTCONN. */
int control_server_disconnect(struct control_server *s, uint64_t conn);

/* Connections open now (admitted or still in their HELLO). Any thread. */
unsigned control_server_connections(struct control_server *s);

/* Stops the server: closes the listener and every connection (calling
 * on_disconnect for each admitted one, on the server thread), joins the
 * thread, removes the socket file if it is still the one this server made,
 * and frees s. Call once, from a thread other than the server's, after
 * every other thread has stopped calling control_server_reply. NULL: no-op. */
void control_server_stop(struct control_server *s);

#endif
