/* stress.client: libshmsched-client against a fake daemon in this process.
 *
 * The fake daemon is the real control server (ingest/control_server.c) with
 * a handler for the producer ops (ingest/control_ops.h), and one thread that
 * drains every registered producer's submit ring and answers each slot:
 * PLACED on node cookie % 7 when the slot holds what the test submitted
 * (template 1, one extra of resource 0, quantity cookie % 1000), REJECTED
 * with a message otherwise (template 99 on purpose). So "every pod placed"
 * also checks the producer half of each slot.
 *
 * Invariants that must read zero: cookies answered other than exactly once,
 * answers with a wrong node or status, fds left open after a test. Times
 * appear only as upper bounds (seconds); nothing asserts a speed.
 *
 * argv[1], when given, is the example producer, run against the fake.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "ingest/control_ops.h"
#include "base/base.h"
#include "ingest/control_proto.h"
#include "ingest/ingest.h"
#include "shm/shm.h"
#include "shmsched/client.h"

#define MAX_PRODUCERS 8
#define WAIT_S 10 /* upper bound for anything we wait for */
#define REJECT_TEMPLATE 99u
#define REJECT_MESSAGE "template 99: not registered by this producer"

static const char *example_path; /* argv[1] */

static const char pod_json[] =
	"{\"kind\": \"Pod\", \"metadata\": {\"name\": \"t\"}, \"spec\": "
	"{\"containers\": [{\"name\": \"c\"}]}}";

struct fake_producer {
	bool used;
	uint64_t conn;
	uint32_t next_template;
	struct producer_region region;
};

struct fake {
	char dir[64];
	char path[100];
	struct control_server *srv;
	pthread_t drainer;
	bool drainer_running;
	atomic_bool stop;   /* relaxed: a flag polled in a loop, orders nothing */
	uint32_t n_slots;   /* for regions made from now on */

	pthread_mutex_t lock; /* guards everything below */
	struct fake_producer prod[MAX_PRODUCERS];
	bool paused; /* under the lock, so that pausing waits out a drain */
	bool refuse_register;
	unsigned name_requests;
	unsigned node_events;
	int last_event_kind;
	char last_event_body[64];
	unsigned releases;
	struct op_release last_release;
	uint64_t answered;

	int free_fd_at_setup;
};

/* ---- the fake daemon ------------------------------------------------- */

/* The devices the fake names for a placed cookie: a different GPU, share
 * and core per cookie, so a copy from the wrong slot shows. */
static void fake_devices(uint64_t cookie, struct shmsched_devices *d)
{
	memset(d, 0, sizeof(*d));
	d->gpu_mask = (uint16_t)(1u << (cookie % SHMSCHED_MAX_GPUS));
	d->gpu_milli = (uint16_t)(1 + cookie % 999);
	d->n_cores = 1;
	d->cpuset[cookie / 64 % SHMSCHED_CPUSET_WORDS] = UINT64_C(1) << (cookie % 64);
}

static void answer_slot(struct shmsched_slot *s)
{
	if (s->template_id == REJECT_TEMPLATE) {
		s->status = SHMSCHED_REJECTED;
		snprintf(s->message, sizeof(s->message), "%s", REJECT_MESSAGE);
	} else if (s->template_id != 1 || s->n_extra != 1 || s->flags != 0 ||
		   s->extra[0].resource != 0 ||
		   s->extra[0].quantity != (int64_t)(s->cookie % 1000) ||
		   s->submit_ns == 0) {
		s->status = SHMSCHED_REJECTED;
		snprintf(s->message, sizeof(s->message), "fake: slot of cookie "
			 "%llu not as submitted (template %u, n_extra %u)",
			 (unsigned long long)s->cookie, s->template_id, s->n_extra);
	} else {
		s->status = SHMSCHED_PLACED;
		s->node_id = (uint32_t)(s->cookie % 7);
		fake_devices(s->cookie, &s->devices);
		s->placement_id = s->cookie * 3 + 1;
	}
	s->complete_ns = now_ns();
}

static void *drain_main(void *arg)
{
	struct fake *f = arg;
	while (!atomic_load_explicit(&f->stop, memory_order_relaxed)) {
		unsigned moved = 0;
		pthread_mutex_lock(&f->lock);
		for (unsigned p = 0; p < MAX_PRODUCERS && !f->paused; p++) {
			if (!f->prod[p].used)
				continue;
			struct producer_region *r = &f->prod[p].region;
			uint64_t h[128];
			unsigned n = ring_dequeue_burst(r->submit, h, 128);
			for (unsigned i = 0; i < n; i++) {
				if (h[i] < r->n_slots)
					answer_slot(&r->slots[h[i]]);
			}
			/* The completion ring holds every slot. */
			for (unsigned sent = 0; sent < n;)
				sent += ring_enqueue_burst(r->completion,
							   h + sent, n - sent);
			moved += n;
			f->answered += n;
		}
		pthread_mutex_unlock(&f->lock);
		if (moved == 0)
			poll(NULL, 0, 0); /* give the producers the CPU */
	}
	return NULL;
}

static struct fake_producer *find_producer(struct fake *f, uint64_t conn)
{
	for (unsigned p = 0; p < MAX_PRODUCERS; p++)
		if (f->prod[p].used && f->prod[p].conn == conn)
			return &f->prod[p];
	return NULL;
}

static void op_register(struct fake *f, struct control_server *s, uint64_t conn,
			uint32_t id)
{
	char err[256];
	if (f->refuse_register) {
		control_server_reply_error(s, conn, id, EPERM, "the fake daemon "
					   "takes no producers today");
		return;
	}
	struct fake_producer *slot = NULL;
	for (unsigned p = 0; p < MAX_PRODUCERS && slot == NULL; p++)
		if (!f->prod[p].used)
			slot = &f->prod[p];
	if (slot == NULL || find_producer(f, conn) != NULL) {
		control_server_reply_error(s, conn, id, EBUSY, "no room");
		return;
	}
	int rc = producer_region_create(f->n_slots, &slot->region, err,
					sizeof(err));
	if (rc < 0) {
		control_server_reply_error(s, conn, id, -rc, "%s", err);
		return;
	}
	slot->used = true;
	slot->conn = conn;
	slot->next_template = 1;
	struct op_registered reg = {.n_slots = f->n_slots,
				    .producer_id = (uint32_t)conn};
	control_server_reply(s, conn, id, &reg, sizeof(reg),
			     shm_region_fd(slot->region.region));
}

/* OP_EVALUATE's answer as the template asks: EVAL_SEALED, the daemon's
 * own (a sealed memfd of the size the header says); EVAL_UNSEALED, a
 * memfd that can still be written; EVAL_SIZE, a header one byte past the
 * memfd; EVAL_NO_FD, no fd. */
enum { EVAL_SEALED = 1, EVAL_UNSEALED, EVAL_SIZE, EVAL_NO_FD };
#define EVAL_TEXT "{\"nodes\":0,\"feasible\":{},\"filtered\":{}}\n"

static void fake_evaluate(struct control_server *s, uint64_t conn, uint32_t id,
			  uint32_t how)
{
	size_t len = strlen(EVAL_TEXT);
	struct op_evaluated done = {.bytes = len + (how == EVAL_SIZE)};
	int fd = -1;
	if (how == EVAL_UNSEALED) {
		fd = memfd_create("fake-evaluation", MFD_CLOEXEC);
		assert_true(fd >= 0);
		assert_int_equal(write(fd, EVAL_TEXT, len), (ssize_t)len);
	} else if (how != EVAL_NO_FD) {
		fd = sealed_text_create("fake-evaluation", EVAL_TEXT, len);
		assert_true(fd >= 0);
	}
	control_server_reply(s, conn, id, &done, sizeof(done), fd);
	if (fd >= 0)
		close(fd);
}

static void on_request(void *arg, struct control_server *s, uint64_t conn,
		       uint32_t id, const void *payload, uint32_t len, int fd)
{
	(void)fd;
	struct fake *f = arg;
	struct op_request h;
	if (len < sizeof(h)) {
		control_server_reply_error(s, conn, id, EPROTO, "short request");
		return;
	}
	memcpy(&h, payload, sizeof(h));
	const char *body = (const char *)payload + sizeof(h);
	uint32_t body_len = len - (uint32_t)sizeof(h);
	pthread_mutex_lock(&f->lock);
	struct fake_producer *p = find_producer(f, conn);
	switch (h.kind) {
	case OP_REGISTER:
		op_register(f, s, conn, id);
		break;
	case OP_TEMPLATE:
		if (p == NULL) {
			control_server_reply_error(s, conn, id, EPROTO,
						   "not registered");
		} else if (body_len == 0 || body[0] != '{') {
			control_server_reply_error(s, conn, id, EINVAL, "pod "
						   "JSON: expected an object");
		} else {
			struct op_template t = {.template_id = p->next_template++};
			control_server_reply(s, conn, id, &t, sizeof(t), -1);
		}
		break;
	case OP_NODE_NAME:
		f->name_requests++;
		if (h.arg >= 1000) {
			control_server_reply_error(s, conn, id, ENOENT, "node id "
						   "%u: no such node", h.arg);
		} else {
			char name[32];
			int n = snprintf(name, sizeof(name), "node-%u", h.arg);
			control_server_reply(s, conn, id, name, (uint32_t)n, -1);
		}
		break;
	case OP_RESOURCE: {
		struct op_resource r = {0};
		if (body_len == 3 && memcmp(body, "cpu", 3) == 0)
			r.resource = 0;
		else if (body_len == 15 && memcmp(body, "example.com/gpu", 15) == 0)
			r.resource = 7;
		else {
			control_server_reply_error(s, conn, id, ENOENT,
						   "resource \"%.*s\": unknown",
						   (int)body_len, body);
			break;
		}
		control_server_reply(s, conn, id, &r, sizeof(r), -1);
		break;
	}
	case OP_NODE_EVENT:
		f->node_events++;
		f->last_event_kind = (int)h.arg;
		snprintf(f->last_event_body, sizeof(f->last_event_body), "%.*s",
			 (int)body_len, body);
		control_server_reply(s, conn, id, NULL, 0, -1);
		break;
	case OP_RELEASE:
		if (body_len != sizeof(f->last_release)) {
			control_server_reply_error(s, conn, id, EPROTO, "release "
						   "of %u bytes", body_len);
			break;
		}
		f->releases++;
		memcpy(&f->last_release, body, sizeof(f->last_release));
		control_server_reply(s, conn, id, NULL, 0, -1);
		break;
	case OP_EVALUATE: {
		struct op_evaluate q;
		if (body_len != sizeof(q)) {
			control_server_reply_error(s, conn, id, EPROTO, "evaluate "
						   "of %u bytes", body_len);
			break;
		}
		memcpy(&q, body, sizeof(q));
		fake_evaluate(s, conn, id, q.template_id);
		break;
	}
	default:
		control_server_reply_error(s, conn, id, EINVAL, "op %u", h.kind);
	}
	pthread_mutex_unlock(&f->lock);
}

static void on_disconnect(void *arg, uint64_t conn)
{
	/* As the daemon does: stop reading the region and free it. */
	struct fake *f = arg;
	pthread_mutex_lock(&f->lock);
	struct fake_producer *p = find_producer(f, conn);
	if (p != NULL) {
		producer_region_close(&p->region);
		p->used = false;
	}
	pthread_mutex_unlock(&f->lock);
}

static void fake_start(struct fake *f, uint32_t n_slots)
{
	char err[256];
	f->n_slots = n_slots;
	struct control_server_config cfg = {
		.arg = f,
		.on_request = on_request,
		.on_disconnect = on_disconnect,
	};
	f->srv = control_server_start(f->path, &cfg, err, sizeof(err));
	if (f->srv == NULL)
		fail_msg("control_server_start(%s): %s", f->path, err);
	atomic_store(&f->stop, false);
	assert_int_equal(pthread_create(&f->drainer, NULL, drain_main, f), 0);
	f->drainer_running = true;
}

/* The daemon's death: answering stops, then every connection closes. */
static void fake_stop(struct fake *f)
{
	if (f->drainer_running) {
		atomic_store(&f->stop, true);
		pthread_join(f->drainer, NULL);
		f->drainer_running = false;
	}
	if (f->srv != NULL) {
		control_server_stop(f->srv);
		f->srv = NULL;
	}
}

static void set_paused(struct fake *f, bool paused)
{
	pthread_mutex_lock(&f->lock);
	f->paused = paused;
	pthread_mutex_unlock(&f->lock);
}

static int lowest_free_fd(void)
{
	int fd = dup(2);
	assert_true(fd >= 0);
	close(fd);
	return fd;
}

static int setup(void **state)
{
	struct fake *f = calloc(1, sizeof(*f));
	assert_non_null(f);
	snprintf(f->dir, sizeof(f->dir), "/tmp/shmsched-client-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->path, sizeof(f->path), "%s/shmsched.sock", f->dir);
	pthread_mutex_init(&f->lock, NULL);
	f->free_fd_at_setup = lowest_free_fd();
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fake *f = *state;
	fake_stop(f);
	for (unsigned p = 0; p < MAX_PRODUCERS; p++)
		assert_false(f->prod[p].used);
	/* Client and fake daemon together leave no fd behind. */
	assert_int_equal(lowest_free_fd(), f->free_fd_at_setup);
	unlink(f->path);
	rmdir(f->dir);
	pthread_mutex_destroy(&f->lock);
	free(f);
	return 0;
}

/* ---- helpers --------------------------------------------------------- */

static struct shmsched_client *connect_ok(struct fake *f)
{
	char err[512];
	struct shmsched_client *c;
	if (shmsched_connect(f->path, &c, err, sizeof(err)) < 0)
		fail_msg("shmsched_connect(%s): %s", f->path, err);
	return c;
}

static void make_pod(struct shmsched_pod *p, uint64_t cookie, uint32_t template_id)
{
	memset(p, 0, sizeof(*p));
	p->cookie = cookie;
	p->template_id = template_id;
	p->n_extra = 1;
	p->extra[0].resource = 0;
	p->extra[0].quantity = (int64_t)(cookie % 1000);
}

/* Checks one answer of the fake and counts it in seen[cookie]. Returns the
 * number of invariant violations it shows. */
static unsigned check_answer(const struct shmsched_result *r, uint8_t *seen,
			     uint64_t n_cookies)
{
	unsigned bad = 0;
	if (r->cookie >= n_cookies)
		return 1;
	if (seen[r->cookie]++ != 0)
		bad++; /* answered twice */
	if (r->status != SHMSCHED_PLACED || r->node_id != r->cookie % 7 ||
	    r->message[0] != '\0' || r->complete_ns < r->submit_ns ||
	    r->submit_ns == 0)
		bad++;
	struct shmsched_devices want;
	fake_devices(r->cookie, &want);
	if (memcmp(&want, &r->devices, sizeof(want)) != 0)
		bad++; /* not the devices of its own slot */
	if (r->placement_id != r->cookie * 3 + 1)
		bad++; /* not its own placement */
	return bad;
}

struct stream {
	struct shmsched_client *c;
	uint64_t n_pods;
	unsigned submit_burst;
	uint8_t *seen;
	unsigned bad;     /* invariant violations */
	unsigned partial; /* submits that took fewer than offered */
	int error;        /* a negative return of submit or poll */
};

/* Submits n_pods (template 1) in bursts as room allows and polls every
 * answer; fails with a deadline of WAIT_S. */
static void *run_stream(void *arg)
{
	struct stream *s = arg;
	struct shmsched_result out[200];
	struct shmsched_pod pods[512];
	uint64_t submitted = 0, answered = 0;
	uint64_t deadline = now_ns() + (uint64_t)WAIT_S * 4 * 1000000000u;
	while (answered < s->n_pods) {
		if (now_ns() > deadline) {
			s->error = -ETIMEDOUT;
			return NULL;
		}
		unsigned want = s->submit_burst;
		if (want > s->n_pods - submitted)
			want = (unsigned)(s->n_pods - submitted);
		for (unsigned i = 0; i < want; i++)
			make_pod(&pods[i], submitted + i, 1);
		int took = shmsched_submit(s->c, pods, want);
		if (took < 0) {
			s->error = took;
			return NULL;
		}
		if ((unsigned)took < want)
			s->partial++;
		submitted += (unsigned)took;
		int got = shmsched_poll(s->c, out, 200);
		if (got < 0) {
			s->error = got;
			return NULL;
		}
		for (int i = 0; i < got; i++)
			s->bad += check_answer(&out[i], s->seen, s->n_pods);
		answered += (unsigned)got;
		if (shmsched_in_flight(s->c) != submitted - answered)
			s->bad++;
	}
	return NULL;
}

static unsigned count_not_once(const uint8_t *seen, uint64_t n)
{
	unsigned bad = 0;
	for (uint64_t i = 0; i < n; i++)
		bad += seen[i] != 1;
	return bad;
}

/* ---- tests ----------------------------------------------------------- */

static void test_connect_errors(void **state)
{
	struct fake *f = *state;
	char err[512];

	/* No daemon: -ENOENT, and the message names the path. */
	struct shmsched_client *c = (struct shmsched_client *)&c;
	assert_int_equal(shmsched_connect(f->path, &c, err, sizeof(err)), -ENOENT);
	assert_null(c);
	assert_non_null(strstr(err, f->path));

	/* NULL path: $SHMSCHED_SOCKET first, then $XDG_RUNTIME_DIR. */
	setenv("SHMSCHED_SOCKET", f->path, 1);
	setenv("XDG_RUNTIME_DIR", "/nonexistent-xdg", 1);
	assert_int_equal(shmsched_connect(NULL, &c, err, sizeof(err)), -ENOENT);
	assert_null(c);
	assert_non_null(strstr(err, f->path));
	assert_non_null(strstr(err, "$SHMSCHED_SOCKET"));
	setenv("SHMSCHED_SOCKET", "", 1); /* empty: as unset */
	assert_int_equal(shmsched_connect(NULL, &c, err, sizeof(err)), -ENOENT);
	assert_null(c);
	assert_non_null(strstr(err, "/nonexistent-xdg/shmsched.sock"));
	unsetenv("SHMSCHED_SOCKET");
	unsetenv("XDG_RUNTIME_DIR");

	/* A path longer than sun_path. */
	char long_path[300];
	memset(long_path, 'a', sizeof(long_path) - 1);
	long_path[0] = '/';
	long_path[sizeof(long_path) - 1] = '\0';
	assert_int_equal(shmsched_connect(long_path, &c, err, sizeof(err)), -ENAMETOOLONG);
	assert_null(c);
	/* A NULL err is allowed. */
	assert_int_equal(shmsched_connect(long_path, &c, NULL, 0), -ENAMETOOLONG);
	/* No out-parameter: -EINVAL, nothing else tried. */
	assert_int_equal(shmsched_connect(f->path, NULL, err, sizeof(err)), -EINVAL);
	assert_null(c);

	/* The daemon refuses the registration: its code and its text. */
	fake_start(f, 64);
	f->refuse_register = true;
	assert_int_equal(shmsched_connect(f->path, &c, err, sizeof(err)), -EPERM);
	assert_null(c);
	assert_non_null(strstr(err, "takes no producers today"));
	f->refuse_register = false;

	/* And then it accepts: the region has the daemon's slot count. */
	c = connect_ok(f);
	assert_int_equal(shmsched_capacity(c), 64);
	assert_int_equal(shmsched_in_flight(c), 0);
	shmsched_disconnect(c);
	shmsched_disconnect(NULL);
}

static void test_round_trip_100k(void **state)
{
	struct fake *f = *state;
	fake_start(f, 1024);
	struct shmsched_client *c = connect_ok(f);
	char err[512];
	uint32_t tid;
	assert_int_equal(shmsched_register_template(c, pod_json, strlen(pod_json),
						    &tid, err, sizeof(err)), 0);
	assert_int_equal(tid, 1);

	struct stream s = {.c = c, .n_pods = 100000, .submit_burst = 100};
	s.seen = calloc(s.n_pods, 1);
	assert_non_null(s.seen);
	run_stream(&s);
	assert_int_equal(s.error, 0);
	assert_int_equal(s.bad, 0);
	assert_int_equal(count_not_once(s.seen, s.n_pods), 0);
	assert_int_equal(shmsched_in_flight(c), 0);
	/* Nothing more comes: an empty poll is 0, not an error. */
	struct shmsched_result r;
	assert_int_equal(shmsched_poll(c, &r, 1), 0);
	assert_int_equal(shmsched_poll(c, &r, 0), 0);
	assert_int_equal(shmsched_submit(c, NULL, 0), 0);
	free(s.seen);
	shmsched_disconnect(c);
}

/* Several handles, each on its own thread, at once. */
static void test_two_handles_two_threads(void **state)
{
	struct fake *f = *state;
	fake_start(f, 256);
	struct stream s[2];
	pthread_t t[2];
	char err[512];
	for (int i = 0; i < 2; i++) {
		s[i] = (struct stream){.c = connect_ok(f), .n_pods = 50000,
				       .submit_burst = 300};
		uint32_t tid;
		assert_int_equal(shmsched_register_template(s[i].c, pod_json,
			strlen(pod_json), &tid, err, sizeof(err)), 0);
		assert_int_equal(tid, 1); /* templates are per connection */
		s[i].seen = calloc(s[i].n_pods, 1);
		assert_non_null(s[i].seen);
	}
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&t[i], NULL, run_stream, &s[i]), 0);
	for (int i = 0; i < 2; i++) {
		pthread_join(t[i], NULL);
		assert_int_equal(s[i].error, 0);
		assert_int_equal(s[i].bad, 0);
		assert_int_equal(count_not_once(s[i].seen, s[i].n_pods), 0);
		/* 300 per burst into 256 slots: back-pressure happened. */
		assert_true(s[i].partial > 0);
		free(s[i].seen);
		shmsched_disconnect(s[i].c);
	}
}

static int poll_all(struct shmsched_client *c, uint8_t *seen, uint64_t n_cookies,
		    unsigned want, unsigned *bad)
{
	struct shmsched_result out[64];
	unsigned got = 0;
	uint64_t deadline = now_ns() + (uint64_t)WAIT_S * 1000000000u;
	while (got < want && now_ns() < deadline) {
		int n = shmsched_poll(c, out, 64);
		if (n < 0)
			return n;
		for (int i = 0; i < n; i++)
			*bad += check_answer(&out[i], seen, n_cookies);
		got += (unsigned)n;
	}
	return (int)got;
}

static void test_back_pressure(void **state)
{
	struct fake *f = *state;
	enum { SLOTS = 1000, PODS = 1500 };
	fake_start(f, SLOTS);
	struct shmsched_client *c = connect_ok(f);
	static struct shmsched_pod pods[PODS];
	uint8_t seen[PODS] = {0};
	unsigned bad = 0;
	for (unsigned i = 0; i < PODS; i++)
		make_pod(&pods[i], i, 1);

	/* The daemon reads nothing: the region fills, then takes no more. */
	set_paused(f, true);
	assert_int_equal(shmsched_submit(c, pods, PODS), SLOTS);
	assert_int_equal(shmsched_in_flight(c), SLOTS);
	assert_int_equal(shmsched_submit(c, pods + SLOTS, PODS - SLOTS), 0);
	assert_int_equal(shmsched_submit(c, pods + SLOTS, 1), 0);
	struct shmsched_result r;
	assert_int_equal(shmsched_poll(c, &r, 1), 0);

	/* It resumes: every one of the first SLOTS pods comes back once. */
	set_paused(f, false);
	assert_int_equal(poll_all(c, seen, PODS, SLOTS, &bad), SLOTS);
	assert_int_equal(shmsched_in_flight(c), 0);
	/* The rest, as they were refused, are accepted now. */
	assert_int_equal(shmsched_submit(c, pods + SLOTS, PODS - SLOTS),
			 PODS - SLOTS);
	assert_int_equal(poll_all(c, seen, PODS, PODS - SLOTS, &bad),
			 PODS - SLOTS);
	assert_int_equal(bad, 0);
	assert_int_equal(count_not_once(seen, PODS), 0);
	assert_int_equal(shmsched_in_flight(c), 0);
	shmsched_disconnect(c);
}

static void test_rejected_message(void **state)
{
	struct fake *f = *state;
	fake_start(f, 64);
	struct shmsched_client *c = connect_ok(f);
	struct shmsched_pod pods[3];
	make_pod(&pods[0], 0, 1);
	make_pod(&pods[1], 1, REJECT_TEMPLATE);
	make_pod(&pods[2], 2, 1);
	pods[2].n_extra = 0; /* not as the fake expects: rejected too */
	assert_int_equal(shmsched_submit(c, pods, 3), 3);

	struct shmsched_result out[3];
	unsigned got = 0;
	uint64_t deadline = now_ns() + (uint64_t)WAIT_S * 1000000000u;
	while (got < 3 && now_ns() < deadline) {
		int n = shmsched_poll(c, out + got, 3 - got);
		assert_true(n >= 0);
		got += (unsigned)n;
	}
	assert_int_equal(got, 3);
	unsigned seen = 0;
	for (unsigned i = 0; i < 3; i++) {
		const struct shmsched_result *r = &out[i];
		seen |= 1u << r->cookie;
		struct shmsched_devices none;
		memset(&none, 0, sizeof(none));
		if (r->cookie == 0) {
			assert_int_equal(r->status, SHMSCHED_PLACED);
			assert_int_equal(r->node_id, 0);
			assert_string_equal(r->message, "");
			assert_int_equal(r->devices.gpu_mask, 1);
			assert_int_equal(r->devices.gpu_milli, 1);
			assert_int_equal(r->devices.cpuset[0], 1);
		} else if (r->cookie == 1) {
			assert_int_equal(r->status, SHMSCHED_REJECTED);
			assert_string_equal(r->message, REJECT_MESSAGE);
			/* The message's bytes are not read as devices. */
			assert_memory_equal(&r->devices, &none, sizeof(none));
		} else {
			assert_int_equal(r->status, SHMSCHED_REJECTED);
			assert_non_null(strstr(r->message, "cookie 2 not as submitted"));
		}
	}
	assert_int_equal(seen, 7);
	shmsched_disconnect(c);
}

static void test_slow_path_calls(void **state)
{
	struct fake *f = *state;
	fake_start(f, 64);
	struct shmsched_client *c = connect_ok(f);
	char err[512], name[64];
	/* The fake's counters are read here without its lock: the daemon
	 * thread wrote them before it sent the answer this thread received,
	 * and the socket orders the two (TSan models it so too). */

	/* Node names: asked once, then from the cache. */
	assert_int_equal(shmsched_node_name(c, 3, name, sizeof(name), err,
					    sizeof(err)), 0);
	assert_string_equal(name, "node-3");
	assert_int_equal(f->name_requests, 1);
	assert_int_equal(shmsched_node_name(c, 3, name, sizeof(name), err,
					    sizeof(err)), 0);
	assert_string_equal(name, "node-3");
	assert_int_equal(f->name_requests, 1);
	for (uint32_t id = 0; id < 200; id++) /* grow the cache */
		assert_int_equal(shmsched_node_name(c, id, name, sizeof(name),
						    err, sizeof(err)), 0);
	assert_int_equal(f->name_requests, 200);
	assert_int_equal(shmsched_node_name(c, 150, name, sizeof(name), err,
					    sizeof(err)), 0);
	assert_string_equal(name, "node-150");
	assert_int_equal(f->name_requests, 200);
	/* Too small a buffer; an unknown id, with the daemon's text. */
	assert_int_equal(shmsched_node_name(c, 150, name, 8, err, sizeof(err)),
			 -ENOBUFS);
	assert_string_equal(name, "");
	assert_int_equal(shmsched_node_name(c, 150, name, 9, err, sizeof(err)), 0);
	assert_int_equal(shmsched_node_name(c, 5000, name, sizeof(name), err,
					    sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "node id 5000: no such node"));

	/* Node events: passed through; ADD and REMOVE forget names. */
	assert_int_equal(shmsched_node_event(c, SHMSCHED_NODE_CORDON, "n1", 2,
					     err, sizeof(err)), 0);
	assert_int_equal(f->last_event_kind, SHMSCHED_NODE_CORDON);
	assert_string_equal(f->last_event_body, "n1");
	assert_int_equal(shmsched_node_name(c, 3, name, sizeof(name), err,
					    sizeof(err)), 0);
	assert_int_equal(f->name_requests, 201);
	assert_int_equal(shmsched_node_event(c, SHMSCHED_NODE_REMOVE, "n1", 2,
					     err, sizeof(err)), 0);
	assert_int_equal(shmsched_node_name(c, 3, name, sizeof(name), err,
					    sizeof(err)), 0);
	assert_int_equal(f->name_requests, 202);
	assert_int_equal(shmsched_node_event(c, 9, "n1", 2, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "kind 9"));
	assert_int_equal(shmsched_node_event(c, SHMSCHED_NODE_ADD, "", 0, err,
					     sizeof(err)), -EINVAL);
	assert_int_equal(f->node_events, 2);

	/* Resources. */
	uint32_t idx = 99;
	assert_int_equal(shmsched_resource(c, "example.com/gpu", &idx, err,
					   sizeof(err)), 0);
	assert_int_equal(idx, 7);
	assert_int_equal(shmsched_resource(c, "cpu", &idx, err, sizeof(err)), 0);
	assert_int_equal(idx, 0);
	assert_int_equal(shmsched_resource(c, "bogus", &idx, err, sizeof(err)),
			 -ENOENT);
	assert_non_null(strstr(err, "\"bogus\""));
	assert_int_equal(shmsched_resource(c, "", &idx, err, sizeof(err)), -EINVAL);

	/* Templates: ids 1, 2; a refusal keeps the daemon's text. */
	uint32_t tid;
	assert_int_equal(shmsched_register_template(c, pod_json, strlen(pod_json),
						    &tid, err, sizeof(err)), 0);
	assert_int_equal(tid, 1);
	assert_int_equal(shmsched_register_template(c, pod_json, strlen(pod_json),
						    &tid, err, sizeof(err)), 0);
	assert_int_equal(tid, 2);
	assert_int_equal(shmsched_register_template(c, "[]", 2, &tid, err,
						    sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "expected an object"));
	static char huge[CONTROL_MAX_PAYLOAD];
	memset(huge, ' ', sizeof(huge));
	assert_int_equal(shmsched_register_template(c, huge, sizeof(huge), &tid,
						    err, sizeof(err)), -EMSGSIZE);

	/* Release: the placement's id, and nothing else, on the wire. */
	assert_int_equal(shmsched_release(c, UINT64_C(0x0000000700000005), err,
					  sizeof(err)), 0);
	assert_int_equal(f->releases, 1);
	assert_true(f->last_release.placement_id == UINT64_C(0x0000000700000005));
	assert_int_equal(shmsched_release(NULL, 1, err, sizeof(err)), -EINVAL);
	assert_int_equal(f->releases, 1);
	shmsched_disconnect(c);
}

/* shmsched_evaluate reads the daemon's memfd only when it is sealed and
 * of the size the answer says (sealed_text_read): an fd that can still
 * change under the reader, or another size, is refused before anything is
 * allocated, and no fd is left open. */
static void test_evaluate_checks_memfd(void **state)
{
	struct fake *f = *state;
	fake_start(f, 64);
	struct shmsched_client *c = connect_ok(f);
	char err[512], *json = NULL;
	size_t len = 0;
	assert_int_equal(shmsched_evaluate(c, EVAL_SEALED, &json, &len, err,
					   sizeof(err)), 0);
	assert_int_equal(len, strlen(EVAL_TEXT));
	assert_string_equal(json, EVAL_TEXT);
	free(json);
	json = NULL;
	assert_int_equal(shmsched_evaluate(c, EVAL_UNSEALED, &json, &len, err,
					   sizeof(err)), -EPROTO);
	assert_null(json);
	assert_int_equal(len, 0);
	assert_non_null(strstr(err, "the evaluation's memfd: a memfd missing seals"));
	assert_int_equal(shmsched_evaluate(c, EVAL_SIZE, &json, &len, err,
					   sizeof(err)), -EPROTO);
	assert_null(json);
	assert_non_null(strstr(err, "the answer says 41"));
	assert_int_equal(shmsched_evaluate(c, EVAL_NO_FD, &json, &len, err,
					   sizeof(err)), -EPROTO);
	assert_null(json);
	assert_non_null(strstr(err, "no fd came with the answer"));
	shmsched_disconnect(c);
}

/* The formatters: GPU indices as CUDA_VISIBLE_DEVICES takes them, cores in
 * Linux's list format, both cut as snprintf cuts. */
static void test_format_devices(void **state)
{
	(void)state;
	struct shmsched_devices d;
	memset(&d, 0, sizeof(d));
	char buf[64];
	assert_int_equal(shmsched_format_gpus(&d, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "");
	assert_int_equal(shmsched_format_cpuset(&d, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "");

	d.gpu_mask = 0x8009; /* 0, 3, 15 */
	d.cpuset[0] = 0xf | UINT64_C(1) << 8 | UINT64_C(1) << 63;
	d.cpuset[1] = 0x3; /* 63-65 run across the word */
	d.cpuset[3] = UINT64_C(1) << 63; /* 255 */
	assert_int_equal(shmsched_format_gpus(&d, buf, sizeof(buf)), 6);
	assert_string_equal(buf, "0,3,15");
	assert_int_equal(shmsched_format_cpuset(&d, buf, sizeof(buf)), 15);
	assert_string_equal(buf, "0-3,8,63-65,255");

	/* Cut: the whole length, as snprintf; the buffer NUL-terminated. */
	assert_int_equal(shmsched_format_gpus(&d, buf, 4), 6);
	assert_string_equal(buf, "0,3");
	assert_int_equal(shmsched_format_cpuset(&d, buf, 5), 15);
	assert_string_equal(buf, "0-3,");
	assert_int_equal(shmsched_format_gpus(&d, NULL, 0), 6);
	assert_int_equal(shmsched_format_cpuset(&d, NULL, 0), 15);
	assert_int_equal(shmsched_format_gpus(NULL, buf, sizeof(buf)), -EINVAL);
	assert_int_equal(shmsched_format_cpuset(&d, NULL, 8), -EINVAL);
}

/* The daemon dies with pods in flight: poll returns -ECONNRESET promptly,
 * no pod is answered twice, and every later call says so too. */
static void test_daemon_stopped(void **state)
{
	struct fake *f = *state;
	enum { SLOTS = 512, PODS = 2000 };
	fake_start(f, SLOTS);
	struct shmsched_client *c = connect_ok(f);
	static uint8_t seen[PODS];
	memset(seen, 0, sizeof(seen));
	struct shmsched_pod pods[64];
	struct shmsched_result out[64];
	unsigned bad = 0, answered = 0;
	uint64_t submitted = 0;
	/* Stream until about half are answered. */
	while (answered < PODS / 2) {
		unsigned want = 64;
		for (unsigned i = 0; i < want; i++)
			make_pod(&pods[i], submitted + i, 1);
		int took = shmsched_submit(c, pods, want);
		assert_true(took >= 0);
		submitted += (unsigned)took;
		int n = shmsched_poll(c, out, 64);
		assert_true(n >= 0);
		for (int i = 0; i < n; i++)
			bad += check_answer(&out[i], seen, PODS);
		answered += (unsigned)n;
	}
	/* Pods stay in flight: the daemon will not read them. */
	set_paused(f, true);
	for (unsigned i = 0; i < 64; i++)
		make_pod(&pods[i], submitted + i, 1);
	int took = shmsched_submit(c, pods, 64);
	assert_true(took > 0);
	submitted += (unsigned)took;

	uint64_t stopped_at = now_ns();
	fake_stop(f);
	int rc;
	unsigned cancelled = 0;
	for (;;) {
		rc = shmsched_poll(c, out, 64);
		if (rc < 0)
			break;
		for (int i = 0; i < rc; i++) {
			/* What the daemon never answered comes back CANCELLED
			 * from the library, once, naming the daemon. */
			if (out[i].status == SHMSCHED_CANCELLED) {
				cancelled++;
				if (out[i].cookie >= PODS || seen[out[i].cookie]++ ||
				    strstr(out[i].message, "went away") == NULL ||
				    strstr(out[i].message, f->path) == NULL)
					bad++;
				continue;
			}
			bad += check_answer(&out[i], seen, PODS);
		}
		answered += (unsigned)rc;
		if (now_ns() - stopped_at > 2000000000u)
			fail_msg("poll still returns %d 2 s after the daemon "
				 "stopped", rc);
	}
	assert_int_equal(rc, -ECONNRESET);
	assert_int_equal(bad, 0);
	/* Every pod submitted was answered exactly once. */
	assert_int_equal(answered, submitted);
	assert_true(cancelled >= (unsigned)took);
	assert_int_equal(shmsched_in_flight(c), 0);
	/* Sticky, on every path. */
	char err[512];
	assert_int_equal(shmsched_poll(c, out, 64), -ECONNRESET);
	assert_int_equal(shmsched_submit(c, pods, 1), -ECONNRESET);
	uint32_t tid;
	assert_int_equal(shmsched_register_template(c, pod_json, strlen(pod_json),
						    &tid, err, sizeof(err)),
			 -ECONNRESET);
	assert_non_null(strstr(err, f->path));
	shmsched_disconnect(c);
}

/* A producer that only submits, with its region full, learns that the
 * daemon has gone from submit. */
static void test_daemon_stopped_submit_only(void **state)
{
	struct fake *f = *state;
	fake_start(f, 16);
	struct shmsched_client *c = connect_ok(f);
	set_paused(f, true);
	struct shmsched_pod pods[16];
	for (unsigned i = 0; i < 16; i++)
		make_pod(&pods[i], i, 1);
	assert_int_equal(shmsched_submit(c, pods, 16), 16);
	fake_stop(f);
	uint64_t stopped_at = now_ns();
	int rc;
	while ((rc = shmsched_submit(c, pods, 1)) == 0)
		if (now_ns() - stopped_at > 2000000000u)
			fail_msg("submit still returns 0 2 s after the daemon "
				 "stopped");
	assert_int_equal(rc, -ECONNRESET);
	assert_int_equal(shmsched_in_flight(c), 16);
	shmsched_disconnect(c);
}

/* The example producer, as a user would run it. */
static void test_example_producer(void **state)
{
	struct fake *f = *state;
	if (example_path == NULL)
		skip();
	fake_start(f, 256);
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		setenv("SHMSCHED_SOCKET", f->path, 1);
		int devnull = open("/dev/null", O_WRONLY);
		if (devnull >= 0)
			dup2(devnull, 1); /* its summary: not test output */
		alarm(WAIT_S * 3);
		execl(example_path, example_path, "5000", (char *)NULL);
		_exit(127);
	}
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	pthread_mutex_lock(&f->lock);
	uint64_t answered = f->answered;
	pthread_mutex_unlock(&f->lock);
	assert_int_equal(answered, 5000);
}

/* Issue 41: the example producer when the daemon dies under it: the pods
 * in flight come back CANCELLED from the library, and the example reports
 * them (counted, each printed by status name) and exits 1. It used to
 * stop at the first -ECONNRESET and drop them. */
static void test_example_producer_daemon_gone(void **state)
{
	struct fake *f = *state;
	if (example_path == NULL)
		skip();
	fake_start(f, 256);
	set_paused(f, true); /* takes the pods, answers none */
	char out_path[128];
	snprintf(out_path, sizeof(out_path), "%s/example.out", f->dir);
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		setenv("SHMSCHED_SOCKET", f->path, 1);
		int out = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (out >= 0)
			dup2(out, 1);
		alarm(WAIT_S * 3);
		execl(example_path, example_path, "1000", (char *)NULL);
		_exit(127);
	}
	/* Give it time to register and fill its 256 slots (the other 744
	 * pods wait for room), then die: its next submit fails. */
	usleep(500 * 1000);
	fake_stop(f);
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 1);
	char text[65536];
	FILE *in = fopen(out_path, "r");
	assert_non_null(in);
	size_t n = fread(text, 1, sizeof(text) - 1, in);
	fclose(in);
	unlink(out_path);
	text[n] = '\0';
	assert_non_null(strstr(text, "1000 pods: 256 submitted, 256 answered: "
				     "0 placed, 0 unschedulable, 0 rejected, "
				     "256 cancelled"));
	assert_non_null(strstr(text, "pod 0: CANCELLED: "));
	assert_non_null(strstr(text, "pod 255: CANCELLED: "));
}

int main(int argc, char **argv)
{
	signal(SIGPIPE, SIG_DFL); /* the library must not need it ignored */
	if (argc > 1)
		example_path = argv[1];
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_connect_errors, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_round_trip_100k, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_two_handles_two_threads,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_back_pressure, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_rejected_message, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_slow_path_calls, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_evaluate_checks_memfd, setup,
						teardown),
		cmocka_unit_test(test_format_devices),
		cmocka_unit_test_setup_teardown(test_daemon_stopped, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_daemon_stopped_submit_only,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_example_producer_daemon_gone,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_example_producer, setup,
						teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
