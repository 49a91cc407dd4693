/* libshmsched-client: see include/shmsched/client.h.
 *
 * A handle is a control-socket fd (client/control_client.c) and the producer
 * region the daemon passed over it at registration (shm/producer_region.h).
 *
 * Slot ownership (include/shmsched/wire.h): a slot index is in exactly one
 * of three places at any time:
 *   - this handle's free list (free_slots[0..n_free)): the producer's;
 *   - the submit ring, the daemon, or the completion ring: the daemon's
 *     (in_flight[i] == 1 marks these);
 * submit moves indices from the first to the second, poll back. The rings
 * order the hand-overs (ring_enqueue_burst releases the slot's contents,
 * ring_dequeue_burst acquires them), so slots need no atomics of their own.
 * Both rings hold every slot at once, so an enqueue of indices we own never
 * finds a ring full unless the daemon corrupted it; we still handle a short
 * enqueue by putting the indices back.
 *
 * The daemon is trusted to answer, not to be right: a completion whose index
 * is out of range or names a slot not in flight is dropped (counted in
 * bad_completions), so a daemon bug can never make us hand out a slot twice.
 *
 * Cost: submit and poll are bounded by their burst (at most BURST indices
 * per ring call, one clock read per submit), with no system call, lock or
 * allocation while pods flow. The only system call on those paths is the
 * hang-up check (poll(2) with a zero timeout), made when submit finds no
 * room or poll finds no answer, at most once per HUP_CHECK_NS.
 *
 * Daemon death: the kernel reports the control socket's hang-up the moment
 * the daemon's end closes (exit, crash or kill all close it). `dead` is then
 * set and stays set; every call returns -ECONNRESET, except that poll first
 * returns the answers the daemon had already enqueued.
 */
#include "shmsched/client.h"
#include "base/base.h"


#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "client/control_client.h"
#include "ingest/control_ops.h"
#include "ingest/control_proto.h"
#include "shm/shm.h"

_Static_assert((int)SHMSCHED_NODE_ADD == (int)NODE_EVENT_ADD &&
	       (int)SHMSCHED_NODE_UPDATE == (int)NODE_EVENT_UPDATE &&
	       (int)SHMSCHED_NODE_REMOVE == (int)NODE_EVENT_REMOVE &&
	       (int)SHMSCHED_NODE_CORDON == (int)NODE_EVENT_CORDON &&
	       (int)SHMSCHED_NODE_UNCORDON == (int)NODE_EVENT_UNCORDON,
	       "enum shmsched_node_event has shm/cluster.h's values");

/* Every control call's deadline: registration and template compilation are
 * the slowest requests, and take milliseconds in a healthy daemon. */
#define CONTROL_TIMEOUT_MS 5000
/* Indices per ring call: 2 KiB of stack; larger bursts gain nothing once
 * the ring's head/tail traffic is amortised over this many. */
#define BURST 256u
/* Hang-up checks at most this often (1 ms): a producer that spins on an
 * empty poll must not make a system call per spin, and a millisecond is
 * prompt for noticing a dead daemon. */
#define HUP_CHECK_NS UINT64_C(1000000)
/* Longest request body: one control message, less our header. */
#define BODY_MAX (CONTROL_MAX_PAYLOAD - sizeof(struct op_request))
/* Node names are interned strings (shm/intern.h). */
#define NODE_NAME_MAX INTERN_MAX_LEN

/* One remembered node name; name NULL marks an empty bucket. */
struct name_entry {
	uint32_t node_id;
	char *name;
};

struct shmsched_client {
	int fd;             /* control socket */
	bool dead;          /* the daemon has gone: sticky */
	bool drained_after_death; /* the completion ring read after `dead` was seen */
	uint32_t producer_id;
	uint64_t next_hup_check_ns;
	uint64_t bad_completions;

	struct producer_region region;
	uint32_t *free_slots; /* [n_slots], a stack: [0..n_free) are free */
	uint32_t n_free;
	uint8_t *in_flight;   /* [n_slots]: 1 while the daemon owns the slot */

	/* node id -> name, open addressing, linear probing; names_cap is a
	 * power of two (or 0) and at most half full. */
	struct name_entry *names;
	uint32_t names_cap;
	uint32_t names_used;

	/* Request scratch: struct op_request then the body. Allocated once,
	 * so slow-path calls with large bodies do not allocate either. */
	unsigned char *req;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
};

/* Has the daemon's end of the control socket closed? Never blocks. A
 * queued message (a late answer) does not hide a hang-up: POLLRDHUP and
 * POLLHUP are reported beside POLLIN, which a MSG_PEEK read would not. */
static bool peer_hung_up(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLIN | POLLRDHUP};
	int n;
	do
		n = poll(&p, 1, 0);
	while (n < 0 && errno == EINTR);
	return n > 0 && (p.revents & (POLLHUP | POLLRDHUP | POLLERR | POLLNVAL));
}

/* Rate-limited hang-up check for the hot paths; sets c->dead. */
static bool check_dead(struct shmsched_client *c)
{
	if (c->dead)
		return true;
	uint64_t now = now_ns();
	if (now < c->next_hup_check_ns)
		return false;
	c->next_hup_check_ns = now + HUP_CHECK_NS;
	if (peer_hung_up(c->fd))
		c->dead = true;
	return c->dead;
}

/* Chooses the socket path as shmsched_connect documents; `from` names the
 * source for messages. Returns 0, or -ENAMETOOLONG. */
static int resolve_path(const char *given, char *path, size_t cap,
			const char **from, char *err, size_t err_len)
{
	const char *env;
	int n;
	if (given != NULL) {
		*from = "given";
		n = snprintf(path, cap, "%s", given);
	} else if ((env = getenv("SHMSCHED_SOCKET")) != NULL && env[0] != '\0') {
		*from = "from $SHMSCHED_SOCKET";
		n = snprintf(path, cap, "%s", env);
	} else if ((env = getenv("XDG_RUNTIME_DIR")) != NULL && env[0] != '\0') {
		*from = "from $XDG_RUNTIME_DIR; set $SHMSCHED_SOCKET to choose";
		n = snprintf(path, cap, "%s/shmsched.sock", env);
	} else {
		*from = "the default; set $SHMSCHED_SOCKET to choose";
		n = snprintf(path, cap, "%s", SHMSCHED_DEFAULT_SOCKET);
	}
	if (n < 0 || (size_t)n >= cap) {
		errmsg(err, err_len, "shmsched daemon socket path (%s) is %d "
			"bytes, a Unix socket path holds at most %zu", *from, n,
			cap - 1);
		return -ENAMETOOLONG;
	}
	return 0;
}

/* One control call: `kind`/`arg` and body[0..len) (already in c->req after
 * the header when body is NULL and len > 0). Marks the handle dead when the
 * daemon has gone, and reports that as -ECONNRESET whatever the kernel
 * said. */
static int call_with_fd(struct shmsched_client *c, uint32_t kind, uint32_t arg,
			const void *body, size_t len, int pass_fd, int timeout_ms,
			void *resp, uint32_t cap, uint32_t *resp_len,
			int *resp_fd, char *err, size_t err_len)
{
	if (resp_fd != NULL)
		*resp_fd = -1;
	if (c->dead) {
		errmsg(err, err_len, "shmsched daemon at %s has closed this "
			"connection; disconnect and connect again", c->path);
		return -ECONNRESET;
	}
	if (len > BODY_MAX) {
		errmsg(err, err_len, "shmsched request of %zu bytes: at most %zu "
			"fit a control message", len, (size_t)BODY_MAX);
		return -EMSGSIZE;
	}
	struct op_request h = {.kind = kind, .arg = arg};
	memcpy(c->req, &h, sizeof(h));
	if (body != NULL && len > 0)
		memcpy(c->req + sizeof(h), body, len);
	int rc = control_client_call_fd(c->fd, c->req, (uint32_t)(sizeof(h) + len),
					pass_fd, resp, cap, resp_len, resp_fd,
					timeout_ms, err, err_len);
	if (rc == -ECONNRESET || rc == -EPIPE || rc == -ENOTCONN) {
		c->dead = true;
		return -ECONNRESET;
	}
	/* A connection-level ERROR (the daemon closing us with a reason)
	 * comes back as its own code; the hang-up follows it. */
	if (rc < 0 && peer_hung_up(c->fd))
		c->dead = true;
	return rc;
}

static int call(struct shmsched_client *c, uint32_t kind, uint32_t arg,
		const void *body, size_t len, void *resp, uint32_t cap,
		uint32_t *resp_len, int *resp_fd, char *err, size_t err_len)
{
	return call_with_fd(c, kind, arg, body, len, -1, CONTROL_TIMEOUT_MS, resp,
			    cap, resp_len, resp_fd, err, err_len);
}

static void names_forget(struct shmsched_client *c)
{
	for (uint32_t i = 0; i < c->names_cap; i++)
		free(c->names[i].name);
	free(c->names);
	c->names = NULL;
	c->names_cap = 0;
	c->names_used = 0;
}

static struct name_entry *names_find(struct name_entry *t, uint32_t cap,
				     uint32_t node_id)
{
	/* Fibonacci hashing: node ids are dense small integers. */
	uint32_t i = (uint32_t)((node_id * UINT64_C(0x9e3779b97f4a7c15)) >> 32);
	for (;; i++) {
		struct name_entry *e = &t[i & (cap - 1)];
		if (e->name == NULL || e->node_id == node_id)
			return e;
	}
}

/* Remembers `name` (taken over) for node_id. Returns 0 or -ENOMEM (name
 * then freed). */
static int names_add(struct shmsched_client *c, uint32_t node_id, char *name)
{
	if ((c->names_used + 1) * 2 > c->names_cap) {
		uint32_t cap = c->names_cap ? c->names_cap * 2 : 64;
		struct name_entry *t = calloc(cap, sizeof(*t));
		if (t == NULL) {
			free(name);
			return -ENOMEM;
		}
		for (uint32_t i = 0; i < c->names_cap; i++)
			if (c->names[i].name != NULL)
				*names_find(t, cap, c->names[i].node_id) = c->names[i];
		free(c->names);
		c->names = t;
		c->names_cap = cap;
	}
	struct name_entry *e = names_find(c->names, c->names_cap, node_id);
	if (e->name == NULL)
		c->names_used++;
	free(e->name);
	e->node_id = node_id;
	e->name = name;
	return 0;
}

int shmsched_connect(const char *socket_path, struct shmsched_client **out,
		     char *err, size_t err_len)
{
	return shmsched_connect_named(socket_path, NULL, out, err, err_len);
}

int shmsched_connect_named(const char *socket_path, const char *name,
			   struct shmsched_client **out, char *err,
			   size_t err_len)
{
	errmsg(err, err_len, "no error");
	if (out == NULL) {
		errmsg(err, err_len, "shmsched_connect: out is NULL");
		return -EINVAL;
	}
	*out = NULL;
	struct op_register named = {{0}};
	if (name != NULL && strlen(name) >= sizeof(named.name)) {
		errmsg(err, err_len, "shmsched_connect: producer name of %zu "
			"bytes; at most %zu", strlen(name), sizeof(named.name) - 1);
		return -ENAMETOOLONG;
	}
	if (name != NULL)
		memcpy(named.name, name, strlen(name));
	int rc;
	struct shmsched_client *c = calloc(1, sizeof(*c));
	if (c == NULL) {
		errmsg(err, err_len, "shmsched client: out of memory");
		return -ENOMEM;
	}
	c->fd = -1;
	const char *from;
	rc = resolve_path(socket_path, c->path, sizeof(c->path), &from, err,
			  err_len);
	if (rc < 0)
		goto fail_path;

	c->fd = control_client_connect(c->path, CONTROL_TIMEOUT_MS, err, err_len);
	if (c->fd < 0) {
		rc = c->fd;
		if (socket_path == NULL && err != NULL && err_len > 0) {
			/* Say where the path came from: the usual mistake is
			 * a daemon on another path than the one we chose. */
			size_t used = strlen(err);
			errmsg(err + used, err_len - used, " (socket path %s)",
				from);
		}
		goto fail_connect;
	}

	c->req = malloc(CONTROL_MAX_PAYLOAD);
	if (c->req == NULL) {
		rc = -ENOMEM;
		errmsg(err, err_len, "shmsched client: out of memory");
		goto fail_req;
	}

	struct op_registered reg;
	uint32_t reg_len;
	int region_fd;
	rc = call(c, OP_REGISTER, 0, &named, sizeof(named), &reg, sizeof(reg),
		  &reg_len, &region_fd, err, err_len);
	if (rc < 0)
		goto fail_register;
	if (reg_len != sizeof(reg) || region_fd < 0) {
		errmsg(err, err_len, "shmsched daemon at %s: registration answer "
			"of %u bytes %s an fd; expected %zu bytes and the "
			"region's fd", c->path, reg_len,
			region_fd < 0 ? "without" : "with", sizeof(reg));
		if (region_fd >= 0)
			close(region_fd);
		rc = -EPROTO;
		goto fail_register;
	}
	c->producer_id = reg.producer_id;
	/* attach dups the fd: the mapping and its own fd outlive ours. */
	rc = producer_region_attach(region_fd, &c->region, err, err_len);
	close(region_fd);
	if (rc < 0)
		goto fail_attach;
	if (c->region.n_slots != reg.n_slots) {
		errmsg(err, err_len, "shmsched daemon at %s: region has %u slots, "
			"registration said %u", c->path, c->region.n_slots,
			reg.n_slots);
		rc = -EPROTO;
		goto fail_slots;
	}

	uint32_t n = c->region.n_slots;
	c->free_slots = malloc(n * sizeof(*c->free_slots));
	c->in_flight = calloc(n, 1);
	if (c->free_slots == NULL || c->in_flight == NULL) {
		rc = -ENOMEM;
		errmsg(err, err_len, "shmsched client: out of memory for %u "
			"slots", n);
		goto fail_slots;
	}
	/* Slot 0 on top: the first pods use the lowest slots. */
	for (uint32_t i = 0; i < n; i++)
		c->free_slots[i] = n - 1 - i;
	c->n_free = n;
	*out = c;
	return 0;

fail_slots:
	free(c->in_flight);
	free(c->free_slots);
	producer_region_close(&c->region);
fail_attach:
fail_register:
	free(c->req);
fail_req:
	close(c->fd);
fail_connect:
fail_path:
	free(c);
	return rc;
}

void shmsched_disconnect(struct shmsched_client *c)
{
	if (c == NULL)
		return;
	/* Close the socket first: the daemon stops reading the region when it
	 * sees the hang-up, before we unmap our view of it. */
	close(c->fd);
	names_forget(c);
	free(c->in_flight);
	free(c->free_slots);
	producer_region_close(&c->region);
	free(c->req);
	free(c);
}

int shmsched_register_template(struct shmsched_client *c, const char *pod_json,
			       size_t len, uint32_t *template_id, char *err,
			       size_t err_len)
{
	return shmsched_register_template_scoped(c, pod_json, len, NULL,
						 template_id, err, err_len);
}

int shmsched_register_template_scoped(struct shmsched_client *c,
				      const char *pod_json, size_t len,
				      const char *disrupt, uint32_t *template_id,
				      char *err, size_t err_len)
{
	errmsg(err, err_len, "no error");
	if (c == NULL || pod_json == NULL || template_id == NULL) {
		errmsg(err, err_len, "shmsched_register_template: NULL argument");
		return -EINVAL;
	}
	struct op_template t;
	uint32_t got;
	void *scoped = NULL;
	uint32_t scoped_len = 0;
	if (disrupt != NULL) {
		int jrc = control_template_join(disrupt, strlen(disrupt), pod_json,
						len, &scoped, &scoped_len);
		if (jrc < 0) {
			errmsg(err, err_len, "shmsched_register_template_scoped: %s",
			       jrc == -ENOMEM ? "out of memory"
					      : "the scope (at most "
						"4160 bytes) and the pod are "
						"more than one request carries");
			return jrc;
		}
	}
	int rc = scoped != NULL
		? call(c, OP_TEMPLATE, OP_TEMPLATE_SCOPED, scoped, scoped_len, &t,
		       sizeof(t), &got, NULL, err, err_len)
		: call(c, OP_TEMPLATE, OP_TEMPLATE_PLAIN, pod_json, len, &t,
		       sizeof(t), &got, NULL, err, err_len);
	free(scoped);
	if (rc < 0)
		return rc;
	if (got != sizeof(t) || t.template_id == 0) {
		errmsg(err, err_len, "shmsched daemon at %s: template answer of "
			"%u bytes with id %u; expected %zu bytes and an id >= 1",
			c->path, got, got == sizeof(t) ? t.template_id : 0,
			sizeof(t));
		return -EPROTO;
	}
	*template_id = t.template_id;
	return 0;
}

int shmsched_resource(struct shmsched_client *c, const char *name,
		      uint32_t *index, char *err, size_t err_len)
{
	errmsg(err, err_len, "no error");
	if (c == NULL || name == NULL || index == NULL || name[0] == '\0') {
		errmsg(err, err_len, "shmsched_resource: %s",
			name != NULL && name[0] == '\0' ? "empty resource name"
							 : "NULL argument");
		return -EINVAL;
	}
	struct op_resource r;
	uint32_t got;
	int rc = call(c, OP_RESOURCE, 0, name, strlen(name), &r, sizeof(r),
		      &got, NULL, err, err_len);
	if (rc < 0)
		return rc;
	if (got != sizeof(r)) {
		errmsg(err, err_len, "shmsched daemon at %s: resource answer of "
			"%u bytes, expected %zu", c->path, got, sizeof(r));
		return -EPROTO;
	}
	*index = r.resource;
	return 0;
}

/* D2 of the doorbell (include/shmsched/wire.h; D1 is the worker's, in
 * workers/pool.c): after handles went on the submit ring, a full fence,
 * then the mark; where a worker is marked asleep, the doorbell moved and
 * woken. One fence and one load when the worker is awake; a shared futex
 * (no FUTEX_PRIVATE_FLAG): the daemon's worker waits on the word in its
 * own mapping of the region. */
static void ring_doorbell(struct shmsched_client *c)
{
	struct shmsched_notices *ns = c->region.notices;
	state_fence_full();
	/* Relaxed: ordered by the fence; the daemon's mark is a hint. */
	if (__atomic_load_n(&ns->asleep, __ATOMIC_RELAXED) == 0)
		return;
	/* Release, partner the worker's acquire read in D1: the handles
	 * come before the word's new value. */
	__atomic_fetch_add(&ns->doorbell, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &ns->doorbell, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

int shmsched_submit(struct shmsched_client *c, const struct shmsched_pod *pods,
		    unsigned n)
{
	if (c->dead)
		return -ECONNRESET;
	/* Back-pressure is when a dead daemon shows: its slots never come
	 * back. Check before taking any, so -ECONNRESET means none taken. */
	if (n > c->n_free && check_dead(c))
		return -ECONNRESET;
	if (n > c->n_free)
		n = c->n_free;
	struct shmsched_slot *slots = c->region.slots;
	uint64_t submit_ns = now_ns();
	unsigned done = 0;
	while (done < n) {
		uint64_t h[BURST];
		unsigned k = n - done < BURST ? n - done : BURST;
		for (unsigned i = 0; i < k; i++) {
			const struct shmsched_pod *p = &pods[done + i];
			uint32_t idx = c->free_slots[--c->n_free];
			struct shmsched_slot *s = &slots[idx];
			/* Only the producer's half; the daemon validates it
			 * (n_extra included), so copy all extras as they are. */
			s->cookie = p->cookie;
			s->template_id = p->template_id;
			s->n_extra = p->n_extra;
			s->flags = p->flags;
			s->submit_ns = submit_ns;
			memcpy(s->extra, p->extra, sizeof(s->extra));
			s->deadline_ns = p->deadline_ns;
			c->in_flight[idx] = 1;
			h[i] = idx;
		}
		unsigned sent = ring_enqueue_burst(c->region.submit, h, k);
		if (sent < k) {
			/* Only a corrupted ring is full (it holds every
			 * slot): give the rest back, top of the stack in
			 * their original order, and report what went. */
			for (unsigned i = k; i-- > sent;) {
				c->in_flight[h[i]] = 0;
				c->free_slots[c->n_free++] = (uint32_t)h[i];
			}
			done += sent;
			break;
		}
		done += k;
	}
	if (done > 0)
		ring_doorbell(c);
	return (int)done;
}

int shmsched_cancel(struct shmsched_client *c, uint64_t cookie)
{
	if (c == NULL)
		return -EINVAL;
	if (c->dead)
		return -ECONNRESET;
	/* The slot's cookie is the producer's half, written by submit and
	 * never by the daemon: reading it while the daemon owns the slot
	 * races with nothing. */
	for (uint32_t i = 0; i < c->region.n_slots; i++) {
		if (!c->in_flight[i] || c->region.slots[i].cookie != cookie)
			continue;
		uint64_t h = i | SHMSCHED_HANDLE_CANCEL;
		if (ring_enqueue_burst(c->region.submit, &h, 1) == 1) {
			ring_doorbell(c);
			return 0;
		}
		return check_dead(c) ? -ECONNRESET : -EAGAIN;
	}
	return -ENOENT;
}

/* Copies the answer in slot s to *r: what the daemon wrote, as it is. */
static void copy_result(const struct shmsched_slot *s, struct shmsched_result *r)
{
	r->cookie = s->cookie;
	r->status = s->status;
	r->node_id = s->node_id;
	r->submit_ns = s->submit_ns;
	r->complete_ns = s->complete_ns;
	if (r->status == SHMSCHED_PLACED) {
		/* Placed pods carry devices, not a message: skip 528 bytes
		 * per pod. */
		r->devices = s->devices;
		r->placement_id = s->placement_id;
		r->message[0] = '\0';
		return;
	}
	memset(&r->devices, 0, sizeof(r->devices));
	r->placement_id = 0;
	/* Bounded: the daemon's NUL may be missing. */
	size_t len = strnlen(s->message, SHMSCHED_MESSAGE_MAX - 1);
	memcpy(r->message, s->message, len);
	r->message[len] = '\0';
}

/* A notice (include/shmsched/wire.h) as an answer: EVICTED, its
 * placement, cookie and node, why; REPLACED, the replacement's placement
 * and node, the old pod's cookie, and a message opening with "replaces
 * placement OLD" (the result has no field for the old id). Then counts it
 * read, so the daemon may write its record again. Returns 0, or -EPROTO
 * for a record index out of range or a kind or version this library does
 * not know (skipped). */
static int copy_notice(struct shmsched_client *c, uint64_t k,
		       struct shmsched_result *r)
{
	struct shmsched_notices *ns = c->region.notices;
	if (k >= SHMSCHED_NOTICES || ns == NULL)
		return -EPROTO;
	const struct shmsched_notice *n = &ns->notice[k];
	int rc = 0;
	if ((n->kind == SHMSCHED_NOTICE_EVICTED || n->kind == SHMSCHED_NOTICE_REPLACED) &&
	    n->version == SHMSCHED_NOTICE_VERSION) {
		memset(r, 0, sizeof(*r));
		r->status = n->kind == SHMSCHED_NOTICE_EVICTED ? SHMSCHED_EVICTED
			: SHMSCHED_REPLACED;
		r->cookie = n->cookie;
		r->placement_id = n->placement_id;
		r->node_id = n->node_id;
		r->complete_ns = n->complete_ns;
		/* Bounded: the daemon's NUL may be missing. */
		size_t len = strnlen(n->message, sizeof(n->message) - 1);
		int pre = 0;
		if (n->kind == SHMSCHED_NOTICE_REPLACED)
			pre = snprintf(r->message, sizeof(r->message),
				       "replaces placement %llu: ",
				       (unsigned long long)n->replaced_id);
		if (pre < 0)
			pre = 0;
		memcpy(r->message + pre, n->message, len);
		r->message[(size_t)pre + len] = '\0';
	} else {
		rc = -EPROTO;
	}
	/* Release: the copy above is done before the daemon may reuse the
	 * record (it loads this with acquire). */
	__atomic_store_n(&ns->consumed, ns->consumed + 1, __ATOMIC_RELEASE);
	return rc;
}

/* True once the completion ring has been read after the hang-up was seen
 * (in this call, or an earlier one). */
static bool checked_all_answers(struct shmsched_client *c, bool checked_now)
{
	if (checked_now)
		c->drained_after_death = true;
	return c->drained_after_death;
}

/* Writes a CANCELLED answer for up to `max` slots still in flight and
 * frees them. Returns how many. */
static unsigned cancel_in_flight(struct shmsched_client *c,
				 struct shmsched_result *out, unsigned max)
{
	unsigned n = 0;
	uint64_t now = now_ns();
	for (uint32_t i = 0; i < c->region.n_slots && n < max; i++) {
		if (!c->in_flight[i])
			continue;
		const struct shmsched_slot *s = &c->region.slots[i];
		struct shmsched_result *r = &out[n++];
		r->cookie = s->cookie; /* the producer's half: written here */
		r->status = SHMSCHED_CANCELLED;
		r->node_id = 0;
		memset(&r->devices, 0, sizeof(r->devices));
		r->placement_id = 0;
		r->submit_ns = s->submit_ns;
		r->complete_ns = now;
		snprintf(r->message, sizeof(r->message),
			 "the shmsched daemon at %s went away before answering "
			 "this pod", c->path);
		c->in_flight[i] = 0;
		c->free_slots[c->n_free++] = i;
	}
	return n;
}

int shmsched_poll(struct shmsched_client *c, struct shmsched_result *out,
		  unsigned max)
{
	unsigned got = 0;
	bool checked = false;
	while (got < max) {
		uint64_t h[BURST];
		unsigned want = max - got < BURST ? max - got : BURST;
		unsigned k = ring_dequeue_burst(c->region.completion, h, want);
		for (unsigned i = 0; i < k; i++) {
			uint64_t idx = h[i];
			if (idx & SHMSCHED_HANDLE_NOTICE) {
				if (copy_notice(c, idx & ~SHMSCHED_HANDLE_NOTICE,
						&out[got]) == 0)
					got++;
				else
					c->bad_completions++;
				continue;
			}
			if (idx >= c->region.n_slots || !c->in_flight[idx]) {
				c->bad_completions++;
				continue;
			}
			copy_result(&c->region.slots[idx], &out[got++]);
			c->in_flight[idx] = 0;
			c->free_slots[c->n_free++] = (uint32_t)idx;
		}
		if (k == want)
			continue;
		if (got > 0 || max == 0)
			break;
		/* Nothing to return: has the daemon gone? If it just has,
		 * look once more, for the answers it enqueued before its
		 * socket closed (the hang-up orders after them). */
		if (checked || !check_dead(c))
			break;
		checked = true;
	}
	/* The daemon has gone and its last answers are read: what is still in
	 * flight will never be answered by it (it may not even have seen it:
	 * a pod submitted after its final drain). Answer it here, cancelled,
	 * so every accepted pod gets exactly one answer. */
	if (c->dead && checked_all_answers(c, checked))
		got += cancel_in_flight(c, out + got, max - got);
	if (got == 0 && max > 0 && c->dead)
		return -ECONNRESET;
	return (int)got;
}

/* The answer doorbell's sleeper (include/shmsched/wire.h; the protocol,
 * AB1-AB6, in shm/answer_bell.c): mark, fence, one more look at the
 * completion ring. The daemon's answer_bell is read relaxed: it wrote it
 * before it passed the region's fd, and it only chooses between sleeping
 * and the caller's polling. */
int shmsched_wait_prepare(struct shmsched_client *c, uint32_t **word)
{
	if (c == NULL || word == NULL)
		return -EINVAL;
	if (c->dead)
		return -ECONNRESET;
	struct shmsched_notices *ns = c->region.notices;
	if (ns == NULL || __atomic_load_n(&ns->answer_bell, __ATOMIC_RELAXED) != 1)
		return -EOPNOTSUPP;
	/* AB4, AB5. */
	answer_bell_prepare(&ns->answer_wait);
	if (ring_count(c->region.completion) > 0) {
		answer_bell_awake(&ns->answer_wait);
		return 1;
	}
	/* A daemon that died rings no more: not asleep on its word. */
	if (check_dead(c)) {
		answer_bell_awake(&ns->answer_wait);
		return -ECONNRESET;
	}
	*word = &ns->answer_wait;
	return 0;
}

void shmsched_wait_done(struct shmsched_client *c)
{
	if (c != NULL && c->region.notices != NULL)
		/* AB6. */
		answer_bell_awake(&c->region.notices->answer_wait);
}

int shmsched_wait(struct shmsched_client *c, int64_t timeout_ns)
{
	if (c == NULL || timeout_ns <= 0)
		return -EINVAL;
	uint32_t *word;
	int rc = shmsched_wait_prepare(c, &word);
	if (rc != 0)
		return rc;
	rc = answer_bell_wait(word, timeout_ns);
	shmsched_wait_done(c);
	if (rc == -ETIMEDOUT)
		return ring_count(c->region.completion) > 0 ? 1 : 0;
	return 1;
}

unsigned shmsched_in_flight(const struct shmsched_client *c)
{
	return c->region.n_slots - c->n_free;
}

uint32_t shmsched_notices_lost(const struct shmsched_client *c)
{
	/* Acquire, partner of the daemon's release add
	 * (ingest/producers.h producers_notice_lost): a grown count is
	 * seen after the notices delivered before it. */
	return __atomic_load_n(&c->region.notices->lost, __ATOMIC_ACQUIRE);
}

unsigned shmsched_capacity(const struct shmsched_client *c)
{
	return c->region.n_slots;
}

int shmsched_node_name(struct shmsched_client *c, uint32_t node_id, char *buf,
		       size_t len, char *err, size_t err_len)
{
	errmsg(err, err_len, "no error");
	if (c == NULL || buf == NULL) {
		errmsg(err, err_len, "shmsched_node_name: NULL argument");
		return -EINVAL;
	}
	if (len > 0)
		buf[0] = '\0';
	const char *name = NULL;
	if (c->names_cap > 0) {
		struct name_entry *e = names_find(c->names, c->names_cap, node_id);
		name = e->name;
	}
	if (name == NULL) {
		char got_name[NODE_NAME_MAX];
		uint32_t got;
		int rc = call(c, OP_NODE_NAME, node_id, NULL, 0, got_name,
			      sizeof(got_name), &got, NULL, err, err_len);
		if (rc == -EMSGSIZE)
			rc = -EPROTO; /* longer than any name the daemon keeps */
		if (rc < 0)
			return rc;
		if (got == 0 || memchr(got_name, '\0', got) != NULL) {
			errmsg(err, err_len, "shmsched daemon at %s: node %u's "
				"name is %s; expected 1..%u bytes without NUL",
				c->path, node_id, got == 0 ? "empty" : "has a NUL",
				NODE_NAME_MAX);
			return -EPROTO;
		}
		char *copy = strndup(got_name, got);
		if (copy == NULL) {
			errmsg(err, err_len, "shmsched client: out of memory");
			return -ENOMEM;
		}
		rc = names_add(c, node_id, copy);
		if (rc < 0) {
			errmsg(err, err_len, "shmsched client: out of memory");
			return rc;
		}
		name = copy;
	}
	size_t n = strlen(name);
	if (n >= len) {
		errmsg(err, err_len, "node %u's name is %zu bytes; the buffer "
			"holds %zu with its NUL", node_id, n, len);
		return -ENOBUFS;
	}
	memcpy(buf, name, n + 1);
	return 0;
}

int shmsched_node_event(struct shmsched_client *c, int kind, const char *body,
			size_t len, char *err, size_t err_len)
{
	errmsg(err, err_len, "no error");
	if (c == NULL || body == NULL || len == 0) {
		errmsg(err, err_len, "shmsched_node_event: %s",
			c == NULL || body == NULL ? "NULL argument" : "empty body");
		return -EINVAL;
	}
	if (kind < SHMSCHED_NODE_ADD || kind > SHMSCHED_NODE_LEASE) {
		errmsg(err, err_len, "shmsched_node_event: kind %d; expected %d "
			"(ADD) .. %d (LEASE)", kind, SHMSCHED_NODE_ADD,
			SHMSCHED_NODE_LEASE);
		return -EINVAL;
	}
	/* An id freed by REMOVE may come back with an ADD under another
	 * name: what we remember may be stale either way. */
	if (kind == SHMSCHED_NODE_ADD || kind == SHMSCHED_NODE_REMOVE)
		names_forget(c);
	return call(c, OP_NODE_EVENT, (uint32_t)kind, body, len, NULL, 0, NULL,
		    NULL, err, err_len);
}

_Static_assert((unsigned)SHMSCHED_DRAIN_DRY_RUN == (unsigned)OP_DRAIN_DRY_RUN &&
	       (unsigned)SHMSCHED_DRAIN_FORCE == (unsigned)OP_DRAIN_FORCE &&
	       (unsigned)SHMSCHED_DRAIN_PLACEMENT == (unsigned)OP_DRAIN_PLACEMENT &&
	       (unsigned)SHMSCHED_DRAIN_SURGE == (unsigned)OP_DRAIN_SURGE,
	       "shmsched_drain passes its flags to OP_DRAIN as they are");

int shmsched_drain(struct shmsched_client *c, const char *const *nodes, unsigned n,
		   const char *selector, unsigned flags,
		   struct shmsched_drain_result *out, char **text, char *err,
		   size_t err_len)
{
	errmsg(err, err_len, "no error");
	if (text != NULL)
		*text = NULL;
	if (c == NULL || nodes == NULL || out == NULL || n == 0 ||
	    n > OP_DRAIN_NODES_MAX) {
		errmsg(err, err_len, "shmsched_drain: NULL argument, or %u nodes "
			"(expected 1..%u)", n, OP_DRAIN_NODES_MAX);
		return -EINVAL;
	}
	size_t sel_len = selector != NULL ? strlen(selector) : 0;
	if (sel_len > OP_DRAIN_SELECTOR_MAX) {
		errmsg(err, err_len, "shmsched_drain: a selector of %zu bytes; at "
			"most %u", sel_len, OP_DRAIN_SELECTOR_MAX);
		return -EINVAL;
	}
	size_t len = sizeof(struct op_drain) + sel_len;
	for (unsigned i = 0; i < n; i++) {
		if (nodes[i] == NULL || nodes[i][0] == '\0') {
			errmsg(err, err_len, "shmsched_drain: node name %u is %s", i + 1,
				nodes[i] == NULL ? "NULL" : "empty");
			return -EINVAL;
		}
		len += strlen(nodes[i]) + 1;
		if (len > BODY_MAX) {
			errmsg(err, err_len, "shmsched_drain: the node names take more "
				"than the %zu bytes of a control message",
				(size_t)BODY_MAX);
			return -EMSGSIZE;
		}
	}
	uint8_t *buf = malloc(len > CONTROL_MAX_PAYLOAD ? len : CONTROL_MAX_PAYLOAD);
	if (buf == NULL) {
		errmsg(err, err_len, "shmsched_drain: out of memory");
		return -ENOMEM;
	}
	struct op_drain q = {.n_nodes = n, .selector_len = (uint32_t)sel_len};
	memcpy(buf, &q, sizeof(q));
	if (sel_len > 0)
		memcpy(buf + sizeof(q), selector, sel_len);
	size_t at = sizeof(q) + sel_len;
	for (unsigned i = 0; i < n; i++) {
		size_t k = strlen(nodes[i]) + 1;
		memcpy(buf + at, nodes[i], k);
		at += k;
	}
	uint32_t got;
	int rc = call(c, OP_DRAIN, flags, buf, len, buf, CONTROL_MAX_PAYLOAD, &got,
		      NULL, err, err_len);
	if (rc < 0)
		goto done;
	struct op_drained a;
	if (got < sizeof(a)) {
		rc = -EPROTO;
	} else {
		memcpy(&a, buf, sizeof(a));
		if (a.text_bytes != got - sizeof(a))
			rc = -EPROTO;
	}
	if (rc < 0) {
		errmsg(err, err_len, "shmsched daemon at %s: a drain answer of %u "
			"bytes that does not hold what it says", c->path, got);
		goto done;
	}
	*out = (struct shmsched_drain_result){.evicted = a.evicted,
		.blocked = a.blocked, .errors = a.errors, .unmanaged = a.unmanaged};
	if (text != NULL) {
		*text = malloc((size_t)a.text_bytes + 1);
		if (*text == NULL) {
			errmsg(err, err_len, "shmsched_drain: out of memory");
			rc = -ENOMEM;
			goto done;
		}
		memcpy(*text, buf + sizeof(a), a.text_bytes);
		(*text)[a.text_bytes] = '\0';
	}
done:
	free(buf);
	return rc;
}

int shmsched_queue(struct shmsched_client *c, int action, const char *name,
		   const char *body, size_t len, char **text, char *err,
		   size_t err_len)
{
	errmsg(err, err_len, "no error");
	if (text != NULL)
		*text = NULL;
	bool change = action == SHMSCHED_QUEUE_APPLY || action == SHMSCHED_QUEUE_DELETE;
	if (c == NULL || text == NULL || action < SHMSCHED_QUEUE_LIST ||
	    action > SHMSCHED_QUEUE_METRICS || (change && (name == NULL || body == NULL))) {
		errmsg(err, err_len, "shmsched_queue: NULL argument, or action %d "
			"(expected 0..3; apply and delete take a name and a body)",
			action);
		return -EINVAL;
	}
	uint8_t *buf = malloc(CONTROL_MAX_PAYLOAD);
	if (buf == NULL) {
		errmsg(err, err_len, "shmsched_queue: out of memory");
		return -ENOMEM;
	}
	size_t at = 0;
	int rc = 0, fd = -1;
	if (action == SHMSCHED_QUEUE_APPLY) {
		size_t nl = strlen(name);
		if (nl > OP_QUEUE_SOURCE_MAX)
			nl = OP_QUEUE_SOURCE_MAX;
		struct op_queue_apply h = {.source_len = (uint32_t)nl};
		if (sizeof(h) + nl + len > BODY_MAX) {
			errmsg(err, err_len, "shmsched_queue: %zu bytes of objects; at "
				"most %zu fit one request", len,
				(size_t)BODY_MAX - sizeof(h) - nl);
			rc = -EMSGSIZE;
			goto done;
		}
		memcpy(buf, &h, sizeof(h));
		memcpy(buf + sizeof(h), name, nl);
		memcpy(buf + sizeof(h) + nl, body, len);
		at = sizeof(h) + nl + len;
	} else if (action == SHMSCHED_QUEUE_DELETE) {
		struct op_queue_delete d = {0};
		if (strlen(name) >= sizeof(d.kind) || strlen(body) >= sizeof(d.name)) {
			errmsg(err, err_len, "shmsched_queue: a kind of at most %zu "
				"bytes and a name of at most %zu", sizeof(d.kind) - 1,
				sizeof(d.name) - 1);
			rc = -EINVAL;
			goto done;
		}
		memcpy(d.kind, name, strlen(name));
		memcpy(d.name, body, strlen(body));
		memcpy(buf, &d, sizeof(d));
		at = sizeof(d);
	}
	uint32_t got;
	/* A change decodes every object again: the CLI's 30 s. METRICS' text
	 * past one answer comes in a sealed memfd (control_ops.h). */
	rc = call_with_fd(c, OP_QUEUE, (uint32_t)action, buf, at, -1,
			  change ? 30000 : CONTROL_TIMEOUT_MS, buf,
			  CONTROL_MAX_PAYLOAD, &got,
			  action == SHMSCHED_QUEUE_METRICS ? &fd : NULL, err, err_len);
	if (rc < 0)
		goto done;
	struct op_queue_shown a;
	if (got < sizeof(a) || (memcpy(&a, buf, sizeof(a)),
				a.text_bytes != got - sizeof(a)) ||
	    (a.fd_bytes > 0) != (fd >= 0) || (a.fd_bytes > 0 && a.text_bytes > 0)) {
		errmsg(err, err_len, "shmsched daemon at %s: a queue answer of %u "
			"bytes%s that does not hold what it says", c->path, got,
			fd >= 0 ? " and an fd" : "");
		rc = -EPROTO;
		goto done;
	}
	if (fd >= 0) {
		char what[4200];
		snprintf(what, sizeof(what), "shmsched daemon at %s: the queue "
			 "metrics' memfd", c->path);
		rc = sealed_text_read(fd, a.fd_bytes, OP_QUEUE_METRICS_MAX_BYTES,
				      what, text, err, err_len);
		goto done;
	}
	*text = malloc((size_t)a.text_bytes + 1);
	if (*text == NULL) {
		errmsg(err, err_len, "shmsched_queue: out of memory");
		rc = -ENOMEM;
		goto done;
	}
	memcpy(*text, buf + sizeof(a), a.text_bytes);
	(*text)[a.text_bytes] = '\0';
done:
	if (fd >= 0)
		close(fd);
	free(buf);
	return rc;
}

int shmsched_priority_class(struct shmsched_client *c, const char *body,
			    size_t len, char *err, size_t err_len)
{
	errmsg(err, err_len, "no error");
	if (c == NULL || body == NULL || len == 0) {
		errmsg(err, err_len, "shmsched_priority_class: %s",
			c == NULL || body == NULL ? "NULL argument" : "empty body");
		return -EINVAL;
	}
	return call(c, OP_PRIORITY_CLASS, 0, body, len, NULL, 0, NULL, NULL, err,
		    err_len);
}

int shmsched_release(struct shmsched_client *c, uint64_t placement_id,
		     char *err, size_t err_len)
{
	errmsg(err, err_len, "no error");
	if (c == NULL) {
		errmsg(err, err_len, "shmsched_release: NULL argument");
		return -EINVAL;
	}
	struct op_release r = {.placement_id = placement_id};
	return call(c, OP_RELEASE, 0, &r, sizeof(r), NULL, 0, NULL, NULL, err,
		    err_len);
}

_Static_assert((unsigned)SHMSCHED_FAILURE_UNPOOLED == OP_FAILURE_UNPOOLED,
	       "a failure's verdict is the wire's");

int shmsched_report_failure(struct shmsched_client *c, uint64_t placement_id,
			    const char *reason, char *err, size_t err_len)
{
	errmsg(err, err_len, "no error");
	size_t rlen = reason != NULL ? strlen(reason) : 0;
	if (c == NULL || placement_id == 0 || rlen > OP_FAILURE_REASON_MAX) {
		errmsg(err, err_len, "shmsched_report_failure: NULL handle, "
			"placement id 0, or a reason of %zu bytes (at most %u)",
			rlen, OP_FAILURE_REASON_MAX);
		return -EINVAL;
	}
	uint8_t buf[sizeof(struct op_failure) + OP_FAILURE_REASON_MAX];
	struct op_failure f = {.placement_id = placement_id,
			       .reason_len = (uint32_t)rlen};
	memcpy(buf, &f, sizeof(f));
	if (rlen > 0)
		memcpy(buf + sizeof(f), reason, rlen);
	struct op_failure_result r;
	uint32_t got = 0;
	int rc = call(c, OP_FAILURE, OP_FAILURE_REPORT, buf, sizeof(f) + rlen, &r,
		      sizeof(r), &got, NULL, err, err_len);
	if (rc < 0)
		return rc;
	if (got != sizeof(r) || r.verdict > OP_FAILURE_UNPOOLED) {
		errmsg(err, err_len, "shmsched daemon at %s: a failure report's "
			"answer of %u bytes that does not hold what it says",
			c->path, got);
		return -EPROTO;
	}
	return (int)r.verdict;
}

_Static_assert(SHMSCHED_APPROVAL_NAME_MAX + 1 == OP_APPROVAL_NAME_MAX &&
	       SHMSCHED_APPROVAL_SELECTOR_MAX == OP_APPROVAL_SELECTOR_MAX &&
	       SHMSCHED_APPROVAL_DEADLINE_MAX_MS == OP_APPROVAL_DEADLINE_MAX_MS &&
	       SHMSCHED_APPROVAL_PAGE == OP_APPROVAL_PAGE &&
	       (unsigned)SHMSCHED_APPROVAL_FAIL_OPEN == OP_APPROVAL_FAIL_OPEN &&
	       (unsigned)SHMSCHED_APPROVAL_RECLAIM_TOO == OP_APPROVAL_RECLAIM_TOO &&
	       (unsigned)SHMSCHED_APPROVAL_PREEMPT_TOO == OP_APPROVAL_PREEMPT_TOO &&
	       (unsigned)SHMSCHED_APPROVAL_DRAIN == OP_APPROVAL_DRAIN &&
	       (unsigned)SHMSCHED_APPROVAL_RECLAIM == OP_APPROVAL_RECLAIM &&
	       (unsigned)SHMSCHED_APPROVAL_PREEMPT == OP_APPROVAL_PREEMPT &&
	       (unsigned)SHMSCHED_APPROVAL_GRANT == OP_APPROVAL_GRANT &&
	       (unsigned)SHMSCHED_APPROVAL_NOT_BEFORE == OP_APPROVAL_NOT_BEFORE &&
	       sizeof(((struct shmsched_approval_ask *)0)->pod) ==
	       sizeof(((struct op_approval_ask *)0)->pod) &&
	       sizeof(((struct shmsched_approval_ask *)0)->node) ==
	       sizeof(((struct op_approval_ask *)0)->node),
	       "the approval API passes the wire's values as they are");

int shmsched_approval_register(struct shmsched_client *c, const char *name,
			       const char *selector, unsigned deadline_ms,
			       unsigned flags, char *err, size_t err_len)
{
	errmsg(err, err_len, "no error");
	size_t nl = name != NULL ? strlen(name) : 0;
	size_t sl = selector != NULL ? strlen(selector) : 0;
	if (c == NULL || nl == 0 || nl > SHMSCHED_APPROVAL_NAME_MAX ||
	    sl > SHMSCHED_APPROVAL_SELECTOR_MAX ||
	    (flags & ~(unsigned)(SHMSCHED_APPROVAL_FAIL_OPEN |
				 SHMSCHED_APPROVAL_RECLAIM_TOO |
				 SHMSCHED_APPROVAL_PREEMPT_TOO)) != 0) {
		errmsg(err, err_len, "shmsched_approval_register: NULL handle, a "
			"name of %zu bytes (expected 1..%u), a selector of %zu "
			"(at most %u), or flags %#x", nl, SHMSCHED_APPROVAL_NAME_MAX,
			sl, SHMSCHED_APPROVAL_SELECTOR_MAX, flags);
		return -EINVAL;
	}
	uint8_t buf[sizeof(struct op_approval_register) + OP_APPROVAL_SELECTOR_MAX];
	struct op_approval_register q = {.deadline_ms = deadline_ms,
					 .flags = flags,
					 .selector_len = (uint32_t)sl};
	memcpy(q.name, name, nl);
	memcpy(buf, &q, sizeof(q));
	if (sl > 0)
		memcpy(buf + sizeof(q), selector, sl);
	struct op_approval_registered a;
	uint32_t got = 0;
	int rc = call(c, OP_APPROVAL, OP_APPROVAL_REGISTER, buf, sizeof(q) + sl, &a,
		      sizeof(a), &got, NULL, err, err_len);
	if (rc < 0)
		return rc;
	if (got != sizeof(a) || a.registration == 0 || a.registration > INT32_MAX) {
		errmsg(err, err_len, "shmsched daemon at %s: a registration's "
			"answer of %u bytes that does not hold what it says",
			c->path, got);
		return -EPROTO;
	}
	return (int)a.registration;
}

int shmsched_approval_pending(struct shmsched_client *c,
			      struct shmsched_approval_ask *asks, unsigned *more,
			      char *err, size_t err_len)
{
	errmsg(err, err_len, "no error");
	if (more != NULL)
		*more = 0;
	if (c == NULL || asks == NULL) {
		errmsg(err, err_len, "shmsched_approval_pending: NULL argument");
		return -EINVAL;
	}
	uint8_t *buf = malloc(CONTROL_MAX_PAYLOAD);
	if (buf == NULL) {
		errmsg(err, err_len, "shmsched_approval_pending: out of memory");
		return -ENOMEM;
	}
	uint32_t got = 0;
	int rc = call(c, OP_APPROVAL, OP_APPROVAL_PENDING, NULL, 0, buf,
		      CONTROL_MAX_PAYLOAD, &got, NULL, err, err_len);
	struct op_approval_pending p = {0};
	if (rc == 0 && (got < sizeof(p) || (memcpy(&p, buf, sizeof(p)),
					    p.n > OP_APPROVAL_PAGE ||
					    got != sizeof(p) + (size_t)p.n *
					    sizeof(struct op_approval_ask)))) {
		errmsg(err, err_len, "shmsched daemon at %s: a page of asks of %u "
			"bytes that does not hold what it says", c->path, got);
		rc = -EPROTO;
	}
	if (rc < 0) {
		free(buf);
		return rc;
	}
	for (uint32_t i = 0; i < p.n; i++) {
		struct op_approval_ask k;
		memcpy(&k, buf + sizeof(p) + i * sizeof(k), sizeof(k));
		struct shmsched_approval_ask *o = &asks[i];
		*o = (struct shmsched_approval_ask){.ask_id = k.ask_id,
			.placement_id = k.placement_id, .reason = k.reason};
		/* The daemon's text says "pod ns/name" (or "cookie N"): the
		 * name alone, as documented. */
		k.pod[sizeof(k.pod) - 1] = k.node[sizeof(k.node) - 1] = '\0';
		const char *pod = strncmp(k.pod, "pod ", 4) == 0 ? k.pod + 4 : k.pod;
		memcpy(o->pod, pod, strlen(pod) + 1);
		memcpy(o->node, k.node, sizeof(o->node));
	}
	if (more != NULL)
		*more = p.more;
	free(buf);
	return (int)p.n;
}

int shmsched_approval_answer(struct shmsched_client *c, uint64_t ask_id,
			     unsigned verdict, unsigned not_before_ms, char *err,
			     size_t err_len)
{
	errmsg(err, err_len, "no error");
	if (c == NULL) {
		errmsg(err, err_len, "shmsched_approval_answer: NULL handle");
		return -EINVAL;
	}
	struct op_approval_answer a = {.ask_id = ask_id, .verdict = verdict,
				       .not_before_ms = not_before_ms};
	return call(c, OP_APPROVAL, OP_APPROVAL_ANSWER, &a, sizeof(a), NULL, 0,
		    NULL, NULL, err, err_len);
}

int shmsched_pools(struct shmsched_client *c, const char *pool,
		   const char *template, unsigned *quarantined, unsigned *released,
		   char **text, char *err, size_t err_len)
{
	errmsg(err, err_len, "no error");
	if (text != NULL)
		*text = NULL;
	size_t pl = pool != NULL ? strlen(pool) : 0;
	size_t tl = pool != NULL && template != NULL ? strlen(template) : 0;
	if (c == NULL || (pool != NULL && pl == 0) || pl > OP_POOL_NAME_MAX ||
	    tl > OP_POOL_NAME_MAX) {
		errmsg(err, err_len, "shmsched_pools: NULL handle, or a pool of %zu "
			"bytes and a template of %zu (expected 1..%u and 0..%u)",
			pl, tl, OP_POOL_NAME_MAX, OP_POOL_NAME_MAX);
		return -EINVAL;
	}
	uint8_t *buf = malloc(CONTROL_MAX_PAYLOAD);
	if (buf == NULL) {
		errmsg(err, err_len, "shmsched_pools: out of memory");
		return -ENOMEM;
	}
	size_t len = 0;
	if (pool != NULL) {
		struct op_pool_release r = {(uint32_t)pl, (uint32_t)tl};
		memcpy(buf, &r, sizeof(r));
		memcpy(buf + sizeof(r), pool, pl);
		if (tl > 0)
			memcpy(buf + sizeof(r) + pl, template, tl);
		len = sizeof(r) + pl + tl;
	}
	uint32_t got = 0;
	int rc = call(c, OP_FAILURE, pool != NULL ? OP_FAILURE_POOL_RELEASE
		      : OP_FAILURE_POOL_LIST, buf, len, buf, CONTROL_MAX_PAYLOAD,
		      &got, NULL, err, err_len);
	if (rc < 0)
		goto done;
	struct op_pools_shown a;
	if (got < sizeof(a) || memchr(buf + sizeof(a), '\0', got - sizeof(a)) != NULL) {
		errmsg(err, err_len, "shmsched daemon at %s: a pools answer of %u "
			"bytes that does not hold what it says", c->path, got);
		rc = -EPROTO;
		goto done;
	}
	memcpy(&a, buf, sizeof(a));
	if (quarantined != NULL)
		*quarantined = a.quarantined;
	if (released != NULL)
		*released = a.released;
	if (text != NULL) {
		size_t n = got - sizeof(a);
		*text = malloc(n + 1);
		if (*text == NULL) {
			errmsg(err, err_len, "shmsched_pools: out of memory");
			rc = -ENOMEM;
			goto done;
		}
		memcpy(*text, buf + sizeof(a), n);
		(*text)[n] = '\0';
	}
done:
	free(buf);
	return rc;
}

/* A resync reads and applies a whole file of pods: minutes for a large
 * cluster on a slow machine, never a hang (the daemon maps a regular file
 * only). */
#define RESYNC_TIMEOUT_MS (10 * 60 * 1000)

_Static_assert(sizeof(struct shmsched_resync_result) ==
	       sizeof(struct op_resync_result), "a resync's counts are the wire's");

int shmsched_resync(struct shmsched_client *c, int pods_fd, const char *node,
		    struct shmsched_resync_result *out, char *err, size_t err_len)
{
	errmsg(err, err_len, "no error");
	if (c == NULL || out == NULL || pods_fd < 0) {
		errmsg(err, err_len, "shmsched_resync: NULL argument or no file");
		return -EINVAL;
	}
	struct op_resync q;
	memset(&q, 0, sizeof(q));
	if (node != NULL && strlen(node) >= sizeof(q.node)) {
		errmsg(err, err_len, "shmsched_resync: node name of %zu bytes: at "
			"most %zu", strlen(node), sizeof(q.node) - 1);
		return -EINVAL;
	}
	if (node != NULL)
		memcpy(q.node, node, strlen(node));
	struct op_resync_result r;
	uint32_t got = 0;
	int rc = call_with_fd(c, OP_RESYNC, 0, &q, sizeof(q), pods_fd,
			      RESYNC_TIMEOUT_MS, &r, sizeof(r), &got, NULL, err,
			      err_len);
	if (rc < 0)
		return rc;
	if (got != sizeof(r)) {
		errmsg(err, err_len, "shmsched daemon at %s: a resync answer of %u "
			"bytes; expected %zu", c->path, got, sizeof(r));
		return -EPROTO;
	}
	memcpy(out, &r, sizeof(r));
	return 0;
}

_Static_assert(sizeof(struct shmsched_placement) == sizeof(struct op_placement),
	       "a listed placement is the wire's");
_Static_assert(__builtin_offsetof(struct shmsched_placement, devices) ==
	       __builtin_offsetof(struct op_placement, devices),
	       "devices where the wire has them");

int shmsched_placements(struct shmsched_client *c, uint32_t *cursor,
			struct shmsched_placement *out, unsigned max, char *err,
			size_t err_len)
{
	errmsg(err, err_len, "no error");
	if (c == NULL || cursor == NULL || out == NULL || max == 0) {
		errmsg(err, err_len, "shmsched_placements: NULL argument or max 0");
		return -EINVAL;
	}
	if (*cursor == UINT32_MAX)
		return 0;
	uint8_t *page = malloc(CONTROL_MAX_PAYLOAD); /* the slow path */
	if (page == NULL) {
		errmsg(err, err_len, "shmsched_placements: out of memory");
		return -ENOMEM;
	}
	struct op_list q = {.cursor = *cursor};
	uint32_t got;
	int rc = call(c, OP_PLACEMENTS, 0, &q, sizeof(q), page, CONTROL_MAX_PAYLOAD,
		      &got, NULL, err, err_len);
	if (rc < 0) {
		free(page);
		return rc;
	}
	const struct op_placements *p = (const struct op_placements *)(void *)page;
	if (got < sizeof(*p) ||
	    (got - sizeof(*p)) / sizeof(p->entries[0]) < p->n ||
	    (p->cursor <= *cursor && p->cursor != UINT32_MAX)) {
		errmsg(err, err_len, "shmsched daemon at %s: a placements page of "
			"%u bytes that does not hold what it says", c->path, got);
		free(page);
		return -EPROTO;
	}
	/* The caller gets at most `max`: the page resumes after the last one
	 * it takes. */
	unsigned n = p->n < max ? p->n : max;
	memcpy(out, p->entries, n * sizeof(out[0]));
	if (n < p->n)
		*cursor = (uint32_t)out[n - 1].placement_id + 1;
	else
		*cursor = p->cursor;
	free(page);
	return (int)n;
}

int shmsched_evaluate(struct shmsched_client *c, uint32_t template_id,
		      char **json, size_t *len, char *err, size_t err_len)
{
	if (c == NULL || json == NULL || len == NULL) {
		errmsg(err, err_len, "shmsched_evaluate: NULL argument");
		return -EINVAL;
	}
	*json = NULL;
	*len = 0;
	struct op_evaluate q = {.template_id = template_id};
	struct op_evaluated done;
	uint32_t got = 0;
	int fd = -1;
	int rc = call(c, OP_EVALUATE, 0, &q, sizeof(q), &done, sizeof(done), &got,
		      &fd, err, err_len);
	if (rc < 0)
		return rc;
	if (got != sizeof(done)) {
		errmsg(err, err_len, "shmsched daemon at %s: an evaluation answer "
			"of %u bytes; expected %zu", c->path, got, sizeof(done));
		if (fd >= 0)
			close(fd);
		return -EPROTO;
	}
	/* The daemon is trusted, its fd is not taken on trust: sealed, and
	 * of the size the answer says, before anything is allocated. */
	char what[4200], *text;
	snprintf(what, sizeof(what), "shmsched daemon at %s: the evaluation's "
		 "memfd", c->path);
	rc = sealed_text_read(fd, done.bytes, OP_EVALUATE_MAX_BYTES, what, &text,
			      err, err_len);
	if (fd >= 0)
		close(fd);
	if (rc < 0)
		return rc;
	*json = text;
	*len = (size_t)done.bytes;
	return 0;
}

int shmsched_format_gpus(const struct shmsched_devices *d, char *buf, size_t len)
{
	if (d == NULL || (buf == NULL && len > 0))
		return -EINVAL;
	if (len > 0)
		buf[0] = '\0';
	size_t n = 0;
	for (unsigned g = 0; g < SHMSCHED_MAX_GPUS; g++) {
		if (!(d->gpu_mask >> g & 1))
			continue;
		size_t at = n < len ? n : len;
		n += (size_t)snprintf(buf == NULL ? NULL : buf + at, len - at,
				      "%s%u", n ? "," : "", g);
	}
	return (int)n;
}

_Static_assert(CORE_WORDS == SHMSCHED_CPUSET_WORDS,
	       "a wire cpuset is shm/devices.h's");

int shmsched_format_cpuset(const struct shmsched_devices *d, char *buf,
			   size_t len)
{
	char none[1];
	if (d == NULL || (buf == NULL && len > 0))
		return -EINVAL;
	/* It offsets buf even when len is 0: never a NULL one. */
	return devices_format_cpuset(d->cpuset, buf == NULL ? none : buf, len);
}
