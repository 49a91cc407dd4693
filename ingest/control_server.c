/* The daemon's control socket: accept, admit, read, dispatch, detect
 * hang-ups, all on one thread running a level-triggered epoll loop. See
 * control_server.h for the contract and control_proto.h for the framing.
 *
 * Connections live in a fixed table of max_connections slots. A connection's
 * id is (sequence << 16) | slot with a sequence that only grows, so an id
 * names one connection for the server's lifetime; it is also the epoll tag,
 * so an event still queued for a slot that was closed and reused in the same
 * epoll_wait batch is recognised as stale and dropped. Tags 0 and 1 are the
 * listener and the wake eventfd (sequences start at 1, so ids are >= 2^16).
 *
 * Invariants:
 * - A slot's fd, id and state change only on the server thread and only
 *   under `lock`; other threads (control_server_reply, _disconnect) read them
 *   and send on the fd only under `lock`, so an fd is never closed (and its
 *   number reused) under a sender.
 * - on_disconnect runs exactly once per slot that reached CONN_ADMITTED: the
 *   only way out of a slot is close_conn, which runs once per slot use.
 * - No callback runs with `lock` held, so callbacks may reply.
 * - No socket operation blocks: accepted sockets are non-blocking and
 *   control_send/control_recv never wait here (timeout 0). A peer that does
 *   not read its answers is disconnected rather than waited for.
 *
 * Threads: the server thread runs every callback; any thread may reply or
 * disconnect; control_server_stop joins the server thread.
 *
 * Limits: max_connections in all, max_per_uid per uid, the last
 * reserve_connections free slots only for uids with none open, and
 * deadlines for the HELLO, then the first request (a registration), then
 * each next request (idle_timeout_ms, unless is_busy vouches for the
 * connection): the loop's epoll_wait sleeps at most until the first
 * deadline and closes connections past it, so idle peers cannot hold
 * slots. With per-uid cap M and reserve R of N slots, uids that already
 * hold a connection share N - R slots; R more uids get one each.
 *
 * Cost: one epoll_wait per batch of events, one recvmsg per message, a
 * scan of the connection table per batch for deadlines; the stale-socket
 * probe and the accept path are a few syscalls each.
 */
#include "ingest/control_server.h"

#include "base/base.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "ingest/control_proto.h"
#include "shm/shm.h"

#define TAG_LISTENER UINT64_C(0)
#define TAG_WAKE UINT64_C(1)
#define SLOT_BITS 16
#define MAX_CONNECTIONS_LIMIT 4096u
#define DEFAULT_MAX_CONNECTIONS 64u
#define EVENTS_PER_WAIT 64
/* Messages a refused peer may have queued that we read and drop before
 * closing: a Unix socket closed with unread input makes the peer's next
 * read fail with ECONNRESET before it sees our ERROR. */
#define DRAIN_MAX 64

enum conn_state {
	CONN_FREE = 0,
	CONN_HELLO,    /* credentials passed; waiting for HELLO */
	CONN_ADMITTED, /* WELCOMEd; on_disconnect owed */
};

struct conn {
	int fd;
	uint64_t id;
	enum conn_state state;
	bool closing; /* asked to close by another thread; under lock */
	struct ucred peer;
	/* Closed at this time (now_ms) unless the awaited message comes: the
	 * HELLO (CONN_HELLO), then the first REQUEST (a registration), then
	 * the next request (idle_timeout_ms; none, INT64_MAX, when 0). */
	int64_t deadline_ms;
	bool spoke; /* a request has come: the deadline is the idle one */
};

struct control_server {
	struct control_server_config cfg; /* callbacks and limits; lists below */
	uid_t *uids;
	size_t n_uids;
	gid_t *gids;
	size_t n_gids;
	unsigned max_conns;
	unsigned hello_timeout_ms;
	unsigned request_timeout_ms;
	unsigned idle_timeout_ms; /* 0: none */
	unsigned reserve;         /* slots kept for uids with none open */

	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	dev_t sock_dev; /* identity of the socket file we made, to unlink */
	ino_t sock_ino; /* only that one at stop */
	int listen_fd;
	int epoll_fd;
	int wake_fd;
	int reserve_fd; /* kept open to accept-and-refuse when out of fds */
	pthread_t thread;

	pthread_mutex_t lock; /* guards conns[] fd/id/state/closing, n_open */
	struct conn *conns;
	unsigned n_open;
	uint64_t next_seq; /* server thread only */
	/* CS1: stored with release by control_server_stop before it wakes the
	 * loop; loaded with acquire by the loop after the wake (pairs with
	 * CS1), so the loop sees the request whatever order the wake and the
	 * other events are reported in. */
	atomic_bool stopping;

	unsigned char *buf; /* one message's payload; server thread only */
};

static void wake_loop(struct control_server *s)
{
	uint64_t one = 1;
	/* A full counter (never, at 2^64 - 1) still leaves the fd readable. */
	ssize_t n = write(s->wake_fd, &one, sizeof(one));
	(void)n;
}

/* Formats the admitted credentials for a refusal message. */
static void format_allowed(const struct control_server *s, char *out,
			   size_t out_len)
{
	size_t used = 0;
	int n = snprintf(out, out_len, "allowed uids {");
	for (size_t i = 0; n >= 0 && i < s->n_uids; i++) {
		used = (size_t)n < out_len ? (size_t)n : out_len;
		n += snprintf(out + used, out_len - used, "%s%u", i ? ", " : "",
			      (unsigned)s->uids[i]);
	}
	used = n >= 0 && (size_t)n < out_len ? (size_t)n : out_len;
	n += snprintf(out + used, out_len - used, "}, gids {");
	for (size_t i = 0; n >= 0 && i < s->n_gids; i++) {
		used = (size_t)n < out_len ? (size_t)n : out_len;
		n += snprintf(out + used, out_len - used, "%s%u", i ? ", " : "",
			      (unsigned)s->gids[i]);
	}
	used = n >= 0 && (size_t)n < out_len ? (size_t)n : out_len;
	snprintf(out + used, out_len - used, "}");
}

static bool peer_allowed(const struct control_server *s,
			 const struct ucred *peer)
{
	for (size_t i = 0; i < s->n_uids; i++)
		if (s->uids[i] == peer->uid)
			return true;
	for (size_t i = 0; i < s->n_gids; i++)
		if (s->gids[i] == peer->gid)
			return true;
	return false;
}

/* Reads and drops whatever the peer has queued (closing any fds in it). */
static void drain_input(int fd)
{
	struct control_header h;
	for (int i = 0; i < DRAIN_MAX; i++) {
		int got_fd;
		int rc = control_recv(fd, &h, NULL, 0, &got_fd, 0);
		if (got_fd >= 0)
			close(got_fd);
		if (rc == -ETIMEDOUT || rc == -ECONNRESET || rc == -EBADF ||
		    rc == -ENOTSOCK)
			return;
	}
}

/* Sends a connection-level ERROR to a peer we are about to close. Best
 * effort: a peer whose queue is full or who has gone gets nothing. */
static void refuse(int fd, int code, const char *text)
{
	control_send_error(fd, 0, code, "%s", text);
	drain_input(fd);
}

static struct conn *slot_of(struct control_server *s, uint64_t id)
{
	uint64_t slot = id & ((UINT64_C(1) << SLOT_BITS) - 1);
	if (id >> SLOT_BITS == 0 || slot >= s->max_conns)
		return NULL;
	struct conn *c = &s->conns[slot];
	return c->id == id && c->state != CONN_FREE ? c : NULL;
}

/* Marks c for closing and wakes the loop; the server thread closes it.
 * shutdown(2) also makes the peer's pending and next reads see the end at
 * once. Called with lock held. */
static void kick_locked(struct control_server *s, struct conn *c)
{
	if (c->closing)
		return;
	c->closing = true;
	shutdown(c->fd, SHUT_RDWR);
	wake_loop(s);
}

/* Server thread: the one way a connection ends. */
static void close_conn(struct control_server *s, struct conn *c)
{
	uint64_t id = c->id;
	bool admitted = c->state == CONN_ADMITTED;
	pthread_mutex_lock(&s->lock);
	epoll_ctl(s->epoll_fd, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	c->fd = -1;
	c->id = 0;
	c->state = CONN_FREE;
	c->closing = false;
	s->n_open--;
	pthread_mutex_unlock(&s->lock);
	log_msg(LOG_LEVEL_DEBUG, "control %s: connection %#llx closed",
		s->path, (unsigned long long)id);
	if (admitted && s->cfg.on_disconnect != NULL)
		s->cfg.on_disconnect(s->cfg.arg, id);
}

/* Sends a connection-level ERROR on an open connection, then closes it. */
static void fail_conn(struct control_server *s, struct conn *c, int code,
		      const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void fail_conn(struct control_server *s, struct conn *c, int code,
		      const char *fmt, ...)
{
	char text[CONTROL_ERROR_TEXT_MAX + 1];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	log_msg(LOG_LEVEL_WARN, "control %s: uid %u pid %d: %s; disconnecting",
		s->path, (unsigned)c->peer.uid, (int)c->peer.pid, text);
	refuse(c->fd, code, text);
	close_conn(s, c);
}

static void accept_one(struct control_server *s, int fd)
{
	struct ucred peer;
	socklen_t len = sizeof(peer);
	char text[CONTROL_ERROR_TEXT_MAX + 1];
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &len) < 0 ||
	    len != sizeof(peer)) {
		log_msg(LOG_LEVEL_WARN, "control %s: SO_PEERCRED failed: %s; "
			"dropping the connection", s->path, strerror(errno));
		close(fd);
		return;
	}
	if (!peer_allowed(s, &peer)) {
		char allowed[256];
		format_allowed(s, allowed, sizeof(allowed));
		snprintf(text, sizeof(text),
			 "uid %u (gid %u, pid %d) may not use the shmsched daemon "
			 "at %s: %s", (unsigned)peer.uid, (unsigned)peer.gid,
			 (int)peer.pid, s->path, allowed);
		log_msg(LOG_LEVEL_WARN, "control: refused: %s", text);
		refuse(fd, EACCES, text);
		close(fd);
		return;
	}

	pthread_mutex_lock(&s->lock);
	unsigned open_now = s->n_open;
	pthread_mutex_unlock(&s->lock);
	/* The server thread is the only writer of states: no lock to read. */
	unsigned same_uid = 0;
	for (unsigned i = 0; i < s->max_conns; i++)
		same_uid += s->conns[i].state != CONN_FREE &&
			    s->conns[i].peer.uid == peer.uid;
	if (s->cfg.max_per_uid != 0 && same_uid >= s->cfg.max_per_uid) {
		snprintf(text, sizeof(text),
			 "uid %u already has %u connections to the shmsched daemon "
			 "at %s, the most one uid may have (max_per_uid); retry "
			 "after one closes", (unsigned)peer.uid, same_uid, s->path);
		log_msg(LOG_LEVEL_WARN, "control: refused uid %u pid %d: %s",
			(unsigned)peer.uid, (int)peer.pid, text);
		refuse(fd, EBUSY, text);
		close(fd);
		return;
	}
	/* The reserve: a uid that holds a connection already may not take
	 * one of the last free slots, which wait for uids with none. */
	if (same_uid > 0 && open_now < s->max_conns &&
	    s->max_conns - open_now <= s->reserve) {
		snprintf(text, sizeof(text),
			 "the shmsched daemon at %s has %u of its %u connections "
			 "free, and keeps its last %u for uids with none open; "
			 "uid %u already has %u; retry after one closes",
			 s->path, s->max_conns - open_now, s->max_conns,
			 s->reserve, (unsigned)peer.uid, same_uid);
		log_msg(LOG_LEVEL_WARN, "control: refused uid %u pid %d: %s",
			(unsigned)peer.uid, (int)peer.pid, text);
		refuse(fd, EBUSY, text);
		close(fd);
		return;
	}
	struct conn *c = NULL;
	for (unsigned i = 0; i < s->max_conns && open_now < s->max_conns; i++) {
		if (s->conns[i].state == CONN_FREE) {
			c = &s->conns[i];
			break;
		}
	}
	if (c == NULL) {
		snprintf(text, sizeof(text),
			 "the shmsched daemon at %s already has %u connections, "
			 "its limit (max_connections); retry after one closes",
			 s->path, s->max_conns);
		log_msg(LOG_LEVEL_WARN, "control: refused uid %u pid %d: %s",
			(unsigned)peer.uid, (int)peer.pid, text);
		refuse(fd, EBUSY, text);
		close(fd);
		return;
	}

	uint64_t id = (s->next_seq++ << SLOT_BITS) | (uint64_t)(c - s->conns);
	struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP, .data.u64 = id};
	if (epoll_ctl(s->epoll_fd, EPOLL_CTL_ADD, fd, &ev) < 0) {
		log_msg(LOG_LEVEL_WARN, "control %s: epoll_ctl: %s; dropping the "
			"connection of uid %u", s->path, strerror(errno),
			(unsigned)peer.uid);
		close(fd);
		return;
	}
	pthread_mutex_lock(&s->lock);
	c->fd = fd;
	c->id = id;
	c->peer = peer;
	c->state = CONN_HELLO;
	c->closing = false;
	c->spoke = false;
	c->deadline_ms = now_ms() + (int64_t)s->hello_timeout_ms;
	s->n_open++;
	pthread_mutex_unlock(&s->lock);
}

static void accept_ready(struct control_server *s)
{
	for (;;) {
		int fd = accept4(s->listen_fd, NULL, NULL,
				 SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd >= 0) {
			accept_one(s, fd);
			continue;
		}
		if (errno == EINTR || errno == ECONNABORTED)
			continue;
		if ((errno == EMFILE || errno == ENFILE) && s->reserve_fd >= 0) {
			/* Level-triggered: leaving the connection queued would
			 * spin. Free the reserve fd to take it and say why. */
			close(s->reserve_fd);
			s->reserve_fd = -1;
			fd = accept4(s->listen_fd, NULL, NULL,
				     SOCK_CLOEXEC | SOCK_NONBLOCK);
			if (fd >= 0) {
				log_msg(LOG_LEVEL_WARN, "control %s: out of file "
					"descriptors; refusing a connection",
					s->path);
				refuse(fd, EMFILE, "the shmsched daemon is out of "
				       "file descriptors; retry later");
				close(fd);
			}
			s->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
			continue;
		}
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			log_msg(LOG_LEVEL_WARN, "control %s: accept: %s", s->path,
				strerror(errno));
		return;
	}
}

static void handle_hello(struct control_server *s, struct conn *c,
			 const struct control_header *h, int got_fd)
{
	struct control_hello hello;
	if (h->type != CONTROL_MSG_HELLO || h->length != sizeof(hello) ||
	    got_fd >= 0) {
		fail_conn(s, c, EPROTO, "expected HELLO with %zu payload bytes "
			  "and no fd, got %s with %u bytes%s", sizeof(hello),
			  control_msg_type_name(h->type), h->length,
			  got_fd >= 0 ? " and an fd" : "");
		return;
	}
	memcpy(&hello, s->buf, sizeof(hello));
	if (hello.abi_version != SHM_ABI_VERSION) {
		fail_conn(s, c, EPROTONOSUPPORT,
			  "client ABI version %u, daemon ABI version %u",
			  hello.abi_version, SHM_ABI_VERSION);
		return;
	}
	if (s->cfg.on_connect != NULL) {
		char reason[CONTROL_ERROR_TEXT_MAX - 64];
		reason[0] = '\0';
		int rc = s->cfg.on_connect(s->cfg.arg, c->id, &c->peer, reason,
					   sizeof(reason));
		if (rc < 0) {
			int code = -rc <= 4095 ? -rc : EPERM;
			fail_conn(s, c, code, "refused: %s",
				  reason[0] != '\0' ? reason : strerror(code));
			return;
		}
	}
	pthread_mutex_lock(&s->lock);
	c->state = CONN_ADMITTED;
	pthread_mutex_unlock(&s->lock);
	c->deadline_ms = now_ms() + (int64_t)s->request_timeout_ms;
	struct control_hello welcome = {.abi_version = SHM_ABI_VERSION};
	int rc = control_send(c->fd, CONTROL_MSG_WELCOME, h->request_id,
			      &welcome, sizeof(welcome), -1);
	if (rc < 0) {
		log_msg(LOG_LEVEL_DEBUG, "control %s: WELCOME to uid %u: %s",
			s->path, (unsigned)c->peer.uid, strerror(-rc));
		close_conn(s, c);
	}
}

/* One queued message on c, or its hang-up. */
static void handle_input(struct control_server *s, struct conn *c)
{
	struct control_header h;
	int got_fd;
	int rc = control_recv(c->fd, &h, s->buf, CONTROL_MAX_PAYLOAD, &got_fd, 0);
	if (rc == -ETIMEDOUT)
		return; /* woken for nothing */
	if (rc == -EPROTO || rc == -EMSGSIZE) {
		fail_conn(s, c, EPROTO, "malformed message (%s, header says %s "
			  "with %u payload bytes)", strerror(-rc),
			  control_msg_type_name(h.type), h.length);
		return;
	}
	if (rc < 0) {
		close_conn(s, c); /* closed, reset, or gone: nothing to say */
		return;
	}
	if (c->state == CONN_HELLO) {
		handle_hello(s, c, &h, got_fd);
		if (got_fd >= 0)
			close(got_fd);
		return;
	}
	if (h.type != CONTROL_MSG_REQUEST || h.request_id == 0) {
		if (got_fd >= 0)
			close(got_fd);
		fail_conn(s, c, EPROTO, "expected REQUEST with a nonzero "
			  "request_id, got %s with request_id %u",
			  control_msg_type_name(h.type), h.request_id);
		return;
	}
	/* It speaks: from now on the idle deadline, moved by each request. */
	c->spoke = true;
	c->deadline_ms = s->idle_timeout_ms == 0 ? INT64_MAX
			 : now_ms() + (int64_t)s->idle_timeout_ms;
	if (s->cfg.on_request != NULL)
		s->cfg.on_request(s->cfg.arg, s, c->id, h.request_id, s->buf,
				  h.length, got_fd);
	if (got_fd >= 0)
		close(got_fd);
}

/* Closes every connection another thread asked to close. */
static void close_kicked(struct control_server *s)
{
	for (unsigned i = 0; i < s->max_conns; i++) {
		pthread_mutex_lock(&s->lock);
		bool kicked = s->conns[i].state != CONN_FREE &&
			      s->conns[i].closing;
		pthread_mutex_unlock(&s->lock);
		if (kicked)
			close_conn(s, &s->conns[i]);
	}
}

/* Milliseconds until the first deadline, or -1 when no connection waits
 * for its HELLO or its first request. Server thread only (it alone writes
 * states and deadlines). */
static int deadline_wait_ms(const struct control_server *s)
{
	int64_t first = INT64_MAX;
	for (unsigned i = 0; i < s->max_conns; i++)
		if (s->conns[i].state != CONN_FREE &&
		    s->conns[i].deadline_ms < first)
			first = s->conns[i].deadline_ms;
	if (first == INT64_MAX)
		return -1;
	int64_t left = first - now_ms();
	return left <= 0 ? 0 : left > INT32_MAX ? INT32_MAX : (int)left;
}

/* Closes every connection past its deadline, with an ERROR saying why:
 * idle connections cannot hold slots that others need. */
static void expire_deadlines(struct control_server *s)
{
	int64_t now = now_ms();
	for (unsigned i = 0; i < s->max_conns; i++) {
		struct conn *c = &s->conns[i];
		if (c->state == CONN_FREE || c->deadline_ms > now)
			continue;
		if (c->state == CONN_HELLO) {
			fail_conn(s, c, ETIMEDOUT, "no HELLO within %u ms of "
				  "connecting", s->hello_timeout_ms);
		} else if (c->spoke) {
			/* Its pods travel in shared memory: the owner of the
			 * connection may know it is busy. */
			if (s->cfg.is_busy != NULL && s->cfg.is_busy(s->cfg.arg, c->id)) {
				c->deadline_ms = now + (int64_t)s->idle_timeout_ms;
				continue;
			}
			fail_conn(s, c, ETIMEDOUT, "idle: no request and no pod "
				  "submitted, waiting or answered for %u ms "
				  "(the daemon's idle timeout); reconnect to go on",
				  s->idle_timeout_ms);
		} else {
			fail_conn(s, c, ETIMEDOUT, "no request (a registration) "
				  "within %u ms of the HELLO", s->request_timeout_ms);
		}
	}
}

static void *server_main(void *arg)
{
	struct control_server *s = arg;
	struct epoll_event events[EVENTS_PER_WAIT];
	for (;;) {
		int n = epoll_wait(s->epoll_fd, events, EVENTS_PER_WAIT,
				   deadline_wait_ms(s));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			log_msg(LOG_LEVEL_ERROR, "control %s: epoll_wait: %s; "
				"the control socket stops serving", s->path,
				strerror(errno));
			break;
		}
		bool woken = false;
		for (int i = 0; i < n; i++) {
			uint64_t tag = events[i].data.u64;
			if (tag == TAG_LISTENER) {
				accept_ready(s);
				continue;
			}
			if (tag == TAG_WAKE) {
				uint64_t count;
				ssize_t r = read(s->wake_fd, &count, sizeof(count));
				(void)r;
				woken = true;
				continue;
			}
			/* Stale if the slot was closed (and maybe reused)
			 * earlier in this batch: see the file note. */
			struct conn *c = slot_of(s, tag);
			if (c == NULL)
				continue;
			pthread_mutex_lock(&s->lock);
			bool kicked = c->closing;
			pthread_mutex_unlock(&s->lock);
			if (kicked)
				close_conn(s, c);
			else if (events[i].events & EPOLLIN)
				handle_input(s, c); /* reads the hang-up too */
			else
				close_conn(s, c); /* HUP or ERR, nothing queued */
		}
		expire_deadlines(s);
		if (woken) {
			/* CS1 (acquire), see struct control_server. */
			if (atomic_load_explicit(&s->stopping, memory_order_acquire))
				break;
			close_kicked(s);
		}
	}

	/* Stop: no new peers, then every connection, admitted ones told. */
	epoll_ctl(s->epoll_fd, EPOLL_CTL_DEL, s->listen_fd, NULL);
	close(s->listen_fd);
	s->listen_fd = -1;
	for (unsigned i = 0; i < s->max_conns; i++)
		if (s->conns[i].state != CONN_FREE)
			close_conn(s, &s->conns[i]);
	return NULL;
}

int control_server_reply(struct control_server *s, uint64_t conn,
			 uint32_t request_id, const void *payload, uint32_t len,
			 int pass_fd)
{
	if (len > CONTROL_MAX_PAYLOAD || (payload == NULL && len > 0))
		return -EINVAL;
	pthread_mutex_lock(&s->lock);
	struct conn *c = slot_of(s, conn);
	int rc = -ENOTCONN;
	if (c != NULL && c->state == CONN_ADMITTED && !c->closing) {
		rc = control_send(c->fd, CONTROL_MSG_RESPONSE, request_id,
				  payload, len, pass_fd);
		if (rc < 0)
			kick_locked(s, c);
	}
	pthread_mutex_unlock(&s->lock);
	return rc;
}

int control_server_reply_error(struct control_server *s, uint64_t conn,
			       uint32_t request_id, int code, const char *fmt,
			       ...)
{
	char text[CONTROL_ERROR_TEXT_MAX + 1];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&s->lock);
	struct conn *c = slot_of(s, conn);
	int rc = -ENOTCONN;
	if (c != NULL && c->state == CONN_ADMITTED && !c->closing) {
		rc = control_send_error(c->fd, request_id, code, "%s", text);
		if (rc < 0)
			kick_locked(s, c);
	}
	pthread_mutex_unlock(&s->lock);
	return rc;
}

int control_server_peer(struct control_server *s, uint64_t conn,
			struct ucred *out)
{
	int rc = -ENOTCONN;
	pthread_mutex_lock(&s->lock);
	struct conn *c = slot_of(s, conn);
	if (c != NULL) {
		*out = c->peer;
		rc = 0;
	}
	pthread_mutex_unlock(&s->lock);
	return rc;
}

int control_server_disconnect(struct control_server *s, uint64_t conn)
{
	pthread_mutex_lock(&s->lock);
	struct conn *c = slot_of(s, conn);
	int rc = -ENOTCONN;
	if (c != NULL && !c->closing) {
		kick_locked(s, c);
		rc = 0;
	}
	pthread_mutex_unlock(&s->lock);
	return rc;
}

unsigned control_server_connections(struct control_server *s)
{
	pthread_mutex_lock(&s->lock);
	unsigned n = s->n_open;
	pthread_mutex_unlock(&s->lock);
	return n;
}

/* Removes a socket file left by a daemon that died, and only that: refuses
 * if anything accepts connections on it or if it is not a socket. */
static int clear_stale(const char *path, char *err, size_t err_len)
{
	struct stat st;
	if (lstat(path, &st) < 0) {
		if (errno == ENOENT)
			return 0;
		int e = errno;
		errmsg(err, err_len, "control socket %s: lstat: %s", path,
			strerror(e));
		return -e;
	}
	if (!S_ISSOCK(st.st_mode)) {
		errmsg(err, err_len, "control socket %s: exists and is not a "
			"socket; refusing to replace it", path);
		return -EEXIST;
	}
	int probe = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (probe < 0) {
		int e = errno;
		errmsg(err, err_len, "control socket %s: socket: %s", path,
			strerror(e));
		return -e;
	}
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	memcpy(addr.sun_path, path, strlen(path) + 1);
	int rc = connect(probe, (struct sockaddr *)&addr, sizeof(addr));
	int e = rc < 0 ? errno : 0;
	close(probe);
	if (e == ECONNREFUSED) {
		if (unlink(path) < 0 && errno != ENOENT) {
			e = errno;
			errmsg(err, err_len, "control socket %s: removing the "
				"stale socket file: %s", path, strerror(e));
			return -e;
		}
		log_msg(LOG_LEVEL_INFO, "control socket %s: replaced a stale "
			"socket file (nothing was listening)", path);
		return 0;
	}
	if (e == ENOENT)
		return 0; /* removed under us meanwhile */
	if (e == 0 || e == EAGAIN) {
		errmsg(err, err_len, "control socket %s: a daemon is already "
			"listening there; stop it first", path);
		return -EADDRINUSE;
	}
	errmsg(err, err_len, "control socket %s: cannot tell whether a daemon "
		"listens there (connect: %s); not replacing it", path,
		strerror(e));
	return -EADDRINUSE;
}

static int copy_config(struct control_server *s,
		       const struct control_server_config *cfg, char *err,
		       size_t err_len)
{
	static const struct control_server_config defaults = {0};
	if (cfg == NULL)
		cfg = &defaults;
	s->cfg = *cfg;
	s->max_conns = cfg->max_connections ? cfg->max_connections
					    : DEFAULT_MAX_CONNECTIONS;
	s->hello_timeout_ms = cfg->hello_timeout_ms ? cfg->hello_timeout_ms : 5000;
	s->request_timeout_ms = cfg->request_timeout_ms ? cfg->request_timeout_ms
							: 5000;
	s->idle_timeout_ms = cfg->idle_timeout_ms;
	s->reserve = cfg->reserve_connections;
	if (s->max_conns > MAX_CONNECTIONS_LIMIT) {
		errmsg(err, err_len, "control socket: max_connections %u is "
			"above the limit %u", cfg->max_connections,
			MAX_CONNECTIONS_LIMIT);
		return -EINVAL;
	}
	if (s->reserve > s->max_conns) {
		errmsg(err, err_len, "control socket: reserve_connections %u is "
			"above max_connections %u", s->reserve, s->max_conns);
		return -EINVAL;
	}
	if ((cfg->n_allowed_uids > 0 && cfg->allowed_uids == NULL) ||
	    (cfg->n_allowed_gids > 0 && cfg->allowed_gids == NULL)) {
		errmsg(err, err_len, "control socket: allowed uid or gid list "
			"is NULL with a nonzero count");
		return -EINVAL;
	}
	size_t n_uids = cfg->n_allowed_uids + cfg->n_allowed_gids == 0
				? 1 : cfg->n_allowed_uids;
	s->uids = calloc(n_uids ? n_uids : 1, sizeof(uid_t));
	s->gids = calloc(cfg->n_allowed_gids ? cfg->n_allowed_gids : 1,
			 sizeof(gid_t));
	s->conns = calloc(s->max_conns, sizeof(struct conn));
	s->buf = malloc(CONTROL_MAX_PAYLOAD);
	if (s->uids == NULL || s->gids == NULL || s->conns == NULL ||
	    s->buf == NULL) {
		errmsg(err, err_len, "control socket: out of memory");
		return -ENOMEM;
	}
	if (cfg->n_allowed_uids + cfg->n_allowed_gids == 0)
		s->uids[0] = geteuid();
	else
		memcpy(s->uids, cfg->allowed_uids, n_uids * sizeof(uid_t));
	s->n_uids = n_uids;
	if (cfg->n_allowed_gids > 0)
		memcpy(s->gids, cfg->allowed_gids,
		       cfg->n_allowed_gids * sizeof(gid_t));
	s->n_gids = cfg->n_allowed_gids;
	s->cfg.allowed_uids = NULL; /* the caller's arrays are not kept */
	s->cfg.allowed_gids = NULL;
	for (unsigned i = 0; i < s->max_conns; i++)
		s->conns[i].fd = -1;
	return 0;
}

static void free_server(struct control_server *s)
{
	free(s->buf);
	free(s->conns);
	free(s->gids);
	free(s->uids);
	free(s);
}

static int add_watch(int epoll_fd, int fd, uint64_t tag)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.u64 = tag};
	return epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &ev) < 0 ? -errno : 0;
}

struct control_server *control_server_start(const char *path,
					    const struct control_server_config *cfg,
					    char *err, size_t err_len)
{
	int rc;
	errmsg(err, err_len, "no error");
	if (path == NULL || path[0] == '\0') {
		errmsg(err, err_len, "control socket: empty path");
		errno = EINVAL;
		return NULL;
	}
	struct control_server *s = calloc(1, sizeof(*s));
	if (s == NULL) {
		errmsg(err, err_len, "control socket %s: out of memory", path);
		return NULL;
	}
	s->listen_fd = s->epoll_fd = s->wake_fd = s->reserve_fd = -1;
	s->next_seq = 1;
	if (strlen(path) >= sizeof(s->path)) {
		errmsg(err, err_len, "control socket %s: path is %zu bytes, a "
			"Unix socket path holds at most %zu", path, strlen(path),
			sizeof(s->path) - 1);
		rc = -ENAMETOOLONG;
		goto fail_config;
	}
	memcpy(s->path, path, strlen(path) + 1);
	rc = copy_config(s, cfg, err, err_len);
	if (rc < 0)
		goto fail_config;
	rc = clear_stale(path, err, err_len);
	if (rc < 0)
		goto fail_config;

	s->listen_fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC |
			      SOCK_NONBLOCK, 0);
	if (s->listen_fd < 0) {
		rc = -errno;
		errmsg(err, err_len, "control socket %s: socket: %s", path,
			strerror(-rc));
		goto fail_socket;
	}
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	memcpy(addr.sun_path, path, strlen(path) + 1);
	if (bind(s->listen_fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
		rc = -errno;
		if (rc == -ENOENT)
			errmsg(err, err_len, "control socket %s: its directory "
				"does not exist (create it, mode 0700 or 0750, "
				"first)", path);
		else
			errmsg(err, err_len, "control socket %s: bind: %s",
				path, strerror(-rc));
		goto fail_bind;
	}
	struct stat st;
	mode_t mode = cfg != NULL && cfg->socket_mode ? cfg->socket_mode : 0600;
	/* chmod before listen: until listen, connecting is refused anyway,
	 * so the umask's mode is never usable by anyone. */
	if (cfg != NULL && cfg->has_socket_group &&
	    chown(path, (uid_t)-1, cfg->socket_group) < 0) {
		rc = -errno;
		errmsg(err, err_len, "control socket %s: setting group %u: %s",
			path, (unsigned)cfg->socket_group, strerror(-rc));
		goto fail_listen;
	}
	if (stat(path, &st) < 0 || chmod(path, mode) < 0) {
		rc = -errno;
		errmsg(err, err_len, "control socket %s: setting mode %04o: %s",
			path, (unsigned)mode, strerror(-rc));
		goto fail_listen;
	}
	s->sock_dev = st.st_dev;
	s->sock_ino = st.st_ino;
	if (listen(s->listen_fd, SOMAXCONN) < 0) {
		rc = -errno;
		errmsg(err, err_len, "control socket %s: listen: %s", path,
			strerror(-rc));
		goto fail_listen;
	}

	s->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	s->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (s->epoll_fd < 0 || s->wake_fd < 0) {
		rc = -errno;
		errmsg(err, err_len, "control socket %s: epoll or eventfd: %s",
			path, strerror(-rc));
		goto fail_epoll;
	}
	rc = add_watch(s->epoll_fd, s->listen_fd, TAG_LISTENER);
	if (rc == 0)
		rc = add_watch(s->epoll_fd, s->wake_fd, TAG_WAKE);
	if (rc < 0) {
		errmsg(err, err_len, "control socket %s: epoll_ctl: %s", path,
			strerror(-rc));
		goto fail_epoll;
	}
	s->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

	rc = pthread_mutex_init(&s->lock, NULL);
	if (rc != 0) {
		rc = -rc;
		errmsg(err, err_len, "control socket %s: mutex: %s", path,
			strerror(-rc));
		goto fail_epoll;
	}
	atomic_init(&s->stopping, false);
	rc = pthread_create(&s->thread, NULL, server_main, s);
	if (rc != 0) {
		rc = -rc;
		errmsg(err, err_len, "control socket %s: pthread_create: %s",
			path, strerror(-rc));
		goto fail_thread;
	}
	pthread_setname_np(s->thread, "shmsched-ctl");
	log_msg(LOG_LEVEL_INFO, "control socket %s: listening (mode %04o, up "
		"to %u connections)", path, (unsigned)mode, s->max_conns);
	return s;

fail_thread:
	pthread_mutex_destroy(&s->lock);
fail_epoll:
	if (s->reserve_fd >= 0)
		close(s->reserve_fd);
	if (s->wake_fd >= 0)
		close(s->wake_fd);
	if (s->epoll_fd >= 0)
		close(s->epoll_fd);
fail_listen:
	unlink(path);
fail_bind:
	close(s->listen_fd);
fail_socket:
fail_config:
	free_server(s);
	errno = -rc;
	return NULL;
}

void control_server_stop(struct control_server *s)
{
	if (s == NULL)
		return;
	/* CS1 (release), see struct control_server. */
	atomic_store_explicit(&s->stopping, true, memory_order_release);
	wake_loop(s);
	pthread_join(s->thread, NULL);

	/* Only our own socket file: a newer daemon may have taken the path
	 * after this one stopped listening (it cannot while we listen). */
	struct stat st;
	if (lstat(s->path, &st) == 0 && st.st_dev == s->sock_dev &&
	    st.st_ino == s->sock_ino)
		unlink(s->path);
	if (s->reserve_fd >= 0)
		close(s->reserve_fd);
	close(s->wake_fd);
	close(s->epoll_fd);
	pthread_mutex_destroy(&s->lock);
	log_msg(LOG_LEVEL_INFO, "control socket %s: stopped", s->path);
	free_server(s);
}
