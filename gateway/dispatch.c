/* The dispatcher: the one thread of the gateway that talks to the daemon.
 *
 * It owns everything the daemon connection needs and no HTTP thread
 * touches: the producer connections (libshmsched-client handles: one
 * thread at a time each), the templates registered on them, the table of
 * the gateway's pods by cookie, and the jobs being answered. HTTP threads
 * hand it jobs through an inbox (a mutex, a condition variable and a
 * doorbell word, AB7-AB9, once per request, never per pod) and read
 * answers under each job's lock (the handshake J1-J5, gateway_internal.h).
 *
 * One turn of the loop: take new jobs and give each its verdict (refused,
 * or accepted with every spec's template resolved); submit accepted pods
 * round-robin over jobs, as many as the connections have free slots; poll
 * every connection; write each answer as a line into its job; publish the
 * lines and wake the connections that wait. With pods in flight it polls
 * a few times, yields, then sleeps until the daemon answers or a job comes
 * (idle_on_bells: the connections' answer doorbells, shmsched_wait_prepare,
 * and the inbox's own, in one futex_waitv); from a daemon without answer
 * doorbells it yields, then naps 50 us. With none it sleeps on the inbox.
 *
 * Templates and their eviction. A pod is submitted by naming a template,
 * and templates belong to a connection, at most max_templates each. Specs
 * are found by their key (gateway/decode.h): equal keys share a template.
 * When the active connection is full, a new connection takes over (under
 * the same producer identity, so placements stay ours) and the old one
 * drains: specs used again are registered on the new one, and once no job
 * uses the old one's templates and none of its pods is in flight, it is
 * closed, and the daemon forgets its templates (evicted). A stream of
 * ever-new specs so costs one connection's worth of templates at a time,
 * plus the ones draining (at most GW_MAX_CONNS connections at once).
 *
 * The table of pods. Each pod the gateway submitted and each placement its
 * identity holds is an entry by cookie (hash64 of namespace/name): IN_FLIGHT
 * (submitted, not answered), PLACED (with its placement id, node, devices)
 * or LIMBO (the daemon went away with it). GET and DELETE find a pod by
 * its name's cookie. The daemon's listing of this identity's placements
 * carries the cookies, so after a restart of the gateway or the daemon the
 * table is rebuilt from it: the daemon is the truth.
 *
 * The daemon going away (a connection reports -ECONNRESET): every
 * connection is closed, every pod in flight goes to LIMBO, and new
 * requests get 503 while the dispatcher tries to connect again every
 * 100 ms. When it is back, the listing decides: a LIMBO pod with a
 * placement is answered PLACED (its answer was lost with the daemon); one
 * without is submitted again (the daemon's recount guarantees it holds
 * nothing: shm/recount.c). So each accepted pod gets exactly one answer.
 * If the daemon stays away past daemon_grace_ms, the pods still open are
 * answered with a line saying so (for a LIMBO pod: it may have been placed;
 * GET it once the daemon is back).
 *
 * Waiting pods (?wait): a job's pods carry its flags and deadline (also
 * when submitted again after a restart). While they wait, nothing comes
 * back, so after QUIET_NS without an answer the loop naps on the inbox
 * rather than spinning. Every WATCH_EVERY_NS the clients of listed jobs
 * are looked at (J4): one that hung up has its pods in flight cancelled
 * (shmsched_cancel; a CANCELLED answer to a pod we cancelled is final,
 * not the daemon leaving). EVICTED notices, which may come on any of the
 * identity's connections, delete the preempted placement's entry; a
 * REPLACED one (a surge drain) moves the entry to the replacement first.
 *
 * Explained requests (?explain=true): after its templates are resolved,
 * a job waits on the explaining list, where each turn of the loop makes
 * one daemon evaluation (shmsched_evaluate) of one of its templates; once
 * all are made it is accepted as any other, and each answer line carries
 * its template's explanation. So the evaluation precedes the pods'
 * placement, and another request waits for one evaluation at most.
 *
 * Users (issue 41). Each job carries who asked (the HTTP side's
 * authentication); the dispatcher numbers users (a table that only grows,
 * one entry per user seen) and records on each pod's entry the user that
 * placed it. GET and DELETE of another user's pod are answered 404, as
 * kube hides what one may not read, unless the asker is in the admin
 * group. The daemon's placement record has no room for an HTTP user, so
 * with --owners-file the gateway keeps them in a log of its own
 * (gateway/owners_log.h): each burst of pods is appended and synced
 * before it is submitted, a release leaves a tombstone, and a pod not
 * placed (unschedulable, refused, cancelled, evicted) is forgotten. Each
 * listing (at the start, and when the daemon is back) takes the owner of
 * each placement found only there from the log, then keeps in the log
 * only what the listing holds and compacts it: a crash between append and
 * placement, or between release and tombstone, leaves no stale owner.
 * Without the log, or for a placement the log does not name, the owner is
 * not known: only the admin group reaches it, and a log line at the
 * listing counts them.
 * Each user's pods in requests not yet answered (waiting ones included)
 * are counted, and a request that would take them past
 * --max-slots-per-client is refused 429, so one client's ?wait request
 * cannot hold every slot of the gateway's connection.
 *
 * Strings (issue 41): the daemon keeps every string a template added
 * (label keys and values, names, selectors) while held, charged to
 * the gateway's identity (--strings-per-identity, while the connections
 * that added them live) and uid (4 x that, while they stay), budgets
 * all users share; it frees them once nothing holds them (after the
 * connections go: shm/intern.h). So one user sending specs with
 * ever-new strings would have every user's new specs refused. The
 * dispatcher keeps the set of strings (hashes) the registered specs
 * carried, each charged to the user whose spec brought it first (bytes +
 * 1 + 64, the daemon's cost with its default table; a new spec also pays
 * for the two strings the daemon makes of it, its name and its group's
 * encoding), and refuses (429) a new spec whose cost would take its user
 * past --max-string-bytes-per-client: one user exhausts only its own
 * share. A string another user brought first costs nothing, as the
 * daemon charges it once. Set and charges are dropped when the daemon is
 * back after a loss (a restart frees the strings no placement holds).
 * Cost: one walk of a new spec's key.
 *
 * Cost per pod on the dispatcher: a table probe or two, a slot write
 * (libshmsched-client), an answer line of about 60 bytes; no system call
 * while pods flow, except the wakes of HTTP connections (one per job and
 * turn, not per pod, each made after the job's lock is released: GL1).
 */
#include "gateway/gateway_internal.h"
#include "gateway/owners_log.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <sched.h>
#include <sys/prctl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define GW_MAX_CONNS 8          /* connections at once: one active, the rest
				 * draining (the daemon allows 16 per uid) */
#define BURST 256u              /* pods per submit and answers per poll */
#define RECONNECT_EVERY_NS UINT64_C(100000000)
#define IDLE_WAIT_MS 100        /* a sleeping loop still turns this often */
#define LISTING_PAGE 1024u
/* Clients of jobs with pods in flight are looked at this often (J4): a
 * hang-up cancels the pods that wait for them. */
#define WATCH_EVERY_NS UINT64_C(200000000)
/* With pods in flight and no answer for this long, they are waiting in
 * the daemon's queue: the loop naps on the inbox instead of spinning,
 * 1 ms at a time, then 10 ms once nothing has come for a second. */
#define QUIET_NS UINT64_C(10000000)
#define LONG_QUIET_NS UINT64_C(1000000000)

const double gw_attempt_bounds[GW_ATTEMPT_BUCKETS] = {
	0.001, 0.002, 0.004, 0.008, 0.016, 0.032, 0.064, 0.128, 0.256, 0.512,
	1.024, 2.048, 4.096, 8.192, 16.384};
const double gw_sli_bounds[GW_SLI_BUCKETS] = {
	0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48,
	40.96, 81.92, 163.84, 327.68, 655.36, 1310.72, 2621.44, 5242.88};
const double gw_fine_bounds[GW_FINE_BUCKETS] = {
	0.00001, 0.00002, 0.00004, 0.00008, 0.00016, 0.00032, 0.00064, 0.00128,
	0.00256, 0.00512, 0.01024, 0.02048, 0.04096, 0.08192, 0.16384, 0.32768};

struct gw_conn {
	struct shmsched_client *c;
	unsigned index;       /* for logs */
	unsigned n_templates;
	unsigned in_flight;
	unsigned capacity;
	unsigned users;       /* accepted jobs' specs registered here */
	bool draining;
	struct gw_conn *next;
};

#define TMPL_SEEN 4u /* trees a template remembers (GL3): the gateway's
			* default 2 HTTP threads, each its own spec cache */

struct gw_template {
	uint64_t hash;        /* the spec's, and its disrupt scope's */
	json_t *canon;        /* a reference */
	struct gw_conn *conn;
	uint32_t id;
	char *disrupt;        /* the job's disrupt scope (owned); NULL: none */
	/* GL3: the spec subtrees last found equal to canon's
	 * (gw_spec_tree_hold), one per HTTP thread's spec cache as a rule,
	 * replaced in turn; NULL: none. */
	json_t *seen[TMPL_SEEN];
	unsigned seen_next;
};

/* A template's key: its spec and the disrupt scope its user's rule gives
 * (gw_job.disrupt): two users of one spec but other disruptNamespaces get
 * templates of their own, as the daemon holds a template's pods to its
 * scope. */
static uint64_t tmpl_hash(const struct gw_spec *spec, const char *disrupt)
{
	return disrupt == NULL ? spec->hash
			       : spec->hash ^ hash64(disrupt, strlen(disrupt) + 1);
}

static bool tmpl_same_scope(const char *a, const char *b)
{
	return a == NULL ? b == NULL : b != NULL && strcmp(a, b) == 0;
}

static void tmpl_free(struct gw_template *t)
{
	for (unsigned k = 0; k < TMPL_SEEN; k++)
		gw_spec_tree_release(t->seen[k]); /* GL3 */
	json_decref(t->canon);
	free(t->disrupt);
	free(t);
}

enum entry_state { E_FREE = 0, E_IN_FLIGHT, E_PLACED, E_LIMBO };

struct gw_entry {
	uint64_t cookie;      /* 0: a free bucket */
	uint64_t placement_id;
	struct gw_job *job;   /* IN_FLIGHT, LIMBO: whose pod it is (NULL:
			       * nobody waits for it) */
	struct gw_conn *conn; /* IN_FLIGHT */
	struct shmsched_devices devices;
	uint32_t node_id;
	uint32_t pod;         /* its index in the job's batch */
	uint32_t owner;       /* the user that placed it (users[]), 0: not
			       * known (found in the daemon's listing) */
	uint8_t state;
	uint8_t seen;         /* in the daemon's listing (rebuild) */
	uint8_t cancel_sent;  /* IN_FLIGHT: shmsched_cancel() was sent */
};

struct gw_dispatch {
	struct gateway_config cfg;
	const char *socket_path;    /* NULL: the client library's default */
	const char *producer_name;
	pthread_t thread;
	bool thread_started;

	/* The inbox: under inbox_lock. */
	pthread_mutex_t inbox_lock;
	pthread_cond_t inbox_cond;
	struct gw_job *inbox_head, *inbox_tail;
	/* The inbox's doorbell (AB7-AB9): 1 while the dispatcher sleeps on
	 * the answer doorbells with pods in flight (idle_on_bells); any
	 * submitter takes it back to 0 and wakes it. Atomic, no lock. */
	uint32_t inbox_bell;
	bool stopping;              /* gw_dispatch_stop() was called */
	bool stopped;               /* the loop has ended: submit refuses */

	/* The observer: swapped by the dispatcher under the write lock. */
	pthread_rwlock_t obs_lock;
	struct shmsched_observer *obs;
	char region_name[64];

	/* The dispatcher's own. */
	struct gw_conn *conns, *active;
	unsigned n_conns, conn_seq;
	struct gw_template **tmpl;  /* by hash, open addressing */
	size_t tmpl_mask, n_tmpl;
	/* The table of pods: entries in slabs that never move (a pointer to
	 * one stays good, and a walk may delete as it goes), found through an
	 * index of (entry + 1) << 32 | the cookie's low bits, linear probing
	 * at most half full. Growing rewrites only the index: 8 bytes a
	 * bucket, read in order, so a million placements cost milliseconds,
	 * not a copy of every entry. */
	struct gw_entry **slabs;
	size_t n_slabs;
	uint32_t entries_used;      /* entries below it were handed out */
	uint32_t free_entry;        /* a free list through .pod, + 1; 0: none */
	uint64_t *index;
	size_t index_mask, map_n;
	struct gw_job *jobs_head, *jobs_tail; /* accepted PLACE and BIND jobs */
	struct gw_job *explain_head, *explain_tail; /* ?explain=true jobs whose
				     * templates are resolved and not all
				     * evaluated yet: no verdict, no pod
				     * submitted (a reference each) */
	bool up;
	uint64_t down_since_ns, next_connect_ns;
	bool grace_expired;
	bool stop_cancelled;        /* stopping: waiting pods were cancelled */
	unsigned idle_spins;
	bool no_waitv;              /* futex_waitv missing (ENOSYS): no sleep
				     * on the answer doorbells */
	uint64_t last_activity_ns;  /* the last answer or submission */
	uint64_t next_watch_ns;     /* the next look at clients (J4) */
	char last_error[512];

	/* Users, numbered from 1 (0: nobody): the dispatcher's own. */
	struct gw_user {
		char name[GW_USER_MAX];
		size_t outstanding; /* pods of accepted jobs not complete */
		size_t strings;     /* bytes of strings its new specs
				     * brought first (strings_charge) */
	} *users;
	uint32_t n_users, cap_users;
	/* Issue 41: every string a registered spec carried, by hash (| 1;
	 * 0: empty), charged to the user whose spec brought it first. */
	uint64_t *str_set;
	size_t str_mask, n_str;
	/* --owners-file: the owners log; NULL without one. */
	struct gw_owners *owners;
	struct gw_owner_rec owner_recs[BURST];

	struct gw_dispatch_stats st;
	struct shmsched_result results[BURST];
	struct shmsched_pod pods[BURST];
	struct gw_job *pod_job[BURST];
	uint32_t pod_index[BURST];
};

/* --- jobs ------------------------------------------------------------- */

struct gw_job *gw_job_new(enum gw_job_kind kind)
{
	struct gw_job *j = calloc(1, sizeof(*j));
	if (j == NULL)
		return NULL;
	j->kind = kind;
	j->refs = 1;
	j->http_fd = -1;
	pthread_mutex_init(&j->lock, NULL);
	return j;
}

void gw_job_ref(struct gw_job *j)
{
	/* J5: relaxed, the caller already holds a reference. */
	__atomic_fetch_add(&j->refs, 1, __ATOMIC_RELAXED);
}

void gw_job_unref(struct gw_job *j)
{
	if (j == NULL)
		return;
	/* J5: acq_rel, so the last holder sees every other holder's writes
	 * before it frees. */
	if (__atomic_sub_fetch(&j->refs, 1, __ATOMIC_ACQ_REL) != 0)
		return;
	if (j->ext_free != NULL)
		j->ext_free(j->ext);
	/* Before the batch, whose free forgets n_specs. */
	for (size_t s = 0; j->explained != NULL && s < j->batch.n_specs; s++)
		free(j->explained[s]);
	free(j->explained);
	free(j->explained_len);
	gw_batch_free(&j->batch);
	free(j->disrupt);
	json_buf_free(&j->out);
	json_buf_free(&j->lines);
	free(j->tmpl);
	free(j->retry);
	pthread_mutex_destroy(&j->lock);
	free(j);
}

static bool job_abandoned(const struct gw_job *j)
{
	/* J4: acquire, partner of the HTTP side's release store. */
	return j->gone || __atomic_load_n(&j->abandoned, __ATOMIC_ACQUIRE);
}

/* J2, under the lock: whether a wake now would only have the HTTP side
 * suspend again (respond_job() in http.c): an accepted job that is
 * answered whole (`collect`: a small request, the extender's bind) waits
 * for every line. Not waking it saves the HTTP side a resume, a turn of
 * its thread and a suspend per request (a single pod's request was woken
 * twice: at its verdict and at its answer). */
static bool job_would_wait(const struct gw_job *j)
{
	return j->collect && j->code == 200 && !j->done;
}

/* J2: whether the HTTP side is to be woken, under the lock: it was
 * suspended (`suspended` cleared here, so exactly one caller wakes it)
 * and a wake now would not only have it suspend again. The caller calls
 * job_wake_after() once it has released the lock. */
static bool job_take_wake(struct gw_job *j)
{
	if (!j->suspended || job_would_wait(j))
		return false;
	j->suspended = false;
	return true;
}

/* GL1: the wake, after the lock is released. The woken HTTP thread's
 * first step is to take this job's lock (respond_job(), stream_read()):
 * woken under it, on a second core it blocked on the lock at once and
 * the dispatcher's unlock had to wake it again (a futex wait and wake
 * and a context switch a request, `strace -f`). Still never before its
 * suspend: `suspended` was set under the lock after the HTTP side
 * suspended, and the connection stays suspended (it cannot run, close
 * or suspend again) until this resume; the job stays alive, as the
 * caller holds its reference across the call. */
static void job_wake_after(struct gw_job *j, bool wake)
{
	if (wake)
		j->wake(j);
}

/* J2: the verdict and a whole body, under the lock; then the wake. */
static void job_finish(struct gw_job *j, unsigned code, const struct json_buf *body)
{
	pthread_mutex_lock(&j->lock);
	j->code = code;
	if (body != NULL && body->len > 0)
		json_buf_put(&j->out, body->data, body->len);
	j->done = true;
	bool wake = job_take_wake(j);
	pthread_mutex_unlock(&j->lock);
	job_wake_after(j, wake);
}

/* A Kubernetes Status object for an error. */
static void status_body(struct json_buf *b, unsigned code, const char *reason,
			const char *message)
{
	json_buf_reset(b);
	json_buf_puts(b, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},"
		      "\"status\":\"Failure\",\"message\":");
	json_buf_string(b, message);
	json_buf_puts(b, ",\"reason\":");
	json_buf_string(b, reason);
	json_buf_printf(b, ",\"code\":%u}\n", code);
}

static void job_refuse(struct gw_job *j, unsigned code, const char *reason,
		       const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void job_refuse(struct gw_job *j, unsigned code, const char *reason,
		       const char *fmt, ...)
{
	char msg[1536];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	struct json_buf b = {0};
	status_body(&b, code, reason, msg);
	job_finish(j, code, &b);
	json_buf_free(&b);
}

/* --- the table of pods ------------------------------------------------ */

#define SLAB_SHIFT 14 /* 16,384 entries (1.4 MiB) a slab */
#define SLAB_SIZE (1u << SLAB_SHIFT)

static struct gw_entry *entry_at(const struct gw_dispatch *d, uint32_t i)
{
	return &d->slabs[i >> SLAB_SHIFT][i & (SLAB_SIZE - 1)];
}

static uint32_t index_of(const struct gw_dispatch *d, const struct gw_entry *e)
{
	for (size_t k = 0; k < d->n_slabs; k++)
		if (e >= d->slabs[k] && e < d->slabs[k] + SLAB_SIZE)
			return (uint32_t)(k << SLAB_SHIFT) + (uint32_t)(e - d->slabs[k]);
	return UINT32_MAX;
}

/* Every entry in use, in slab order: `for (MAP_EACH(d, e))`. */
#define MAP_EACH(d, e) uint32_t e##_i = 0; e##_i < (d)->entries_used; e##_i++) \
	if ((e = entry_at((d), e##_i))->cookie != 0

static struct gw_entry *map_find(struct gw_dispatch *d, uint64_t cookie)
{
	for (size_t i = cookie & d->index_mask;; i = (i + 1) & d->index_mask) {
		uint64_t b = d->index[i];
		if (b == 0)
			return NULL;
		if ((uint32_t)b == (uint32_t)cookie) {
			struct gw_entry *e = entry_at(d, (uint32_t)(b >> 32) - 1);
			if (e->cookie == cookie)
				return e;
		}
	}
}

static void index_put(uint64_t *index, size_t mask, uint64_t b)
{
	size_t i = (uint32_t)b & mask;
	while (index[i] != 0)
		i = (i + 1) & mask;
	index[i] = b;
}

static int index_grow(struct gw_dispatch *d)
{
	size_t cap = d->index ? (d->index_mask + 1) * 2 : 4096;
	uint64_t *t = calloc(cap, sizeof(*t));
	if (t == NULL)
		return -ENOMEM;
	for (size_t k = 0; d->index != NULL && k <= d->index_mask; k++)
		if (d->index[k] != 0)
			index_put(t, cap - 1, d->index[k]);
	free(d->index);
	d->index = t;
	d->index_mask = cap - 1;
	return 0;
}

/* A new entry for `cookie` (not present), or NULL when out of memory. */
static struct gw_entry *map_add(struct gw_dispatch *d, uint64_t cookie)
{
	if ((d->map_n + 1) * 2 > d->index_mask + 1 && index_grow(d) < 0)
		return NULL;
	uint32_t i;
	if (d->free_entry != 0) {
		i = d->free_entry - 1;
		d->free_entry = entry_at(d, i)->pod;
	} else {
		if (d->entries_used == UINT32_MAX - 1)
			return NULL;
		if ((d->entries_used >> SLAB_SHIFT) == d->n_slabs) {
			struct gw_entry **slabs = realloc(d->slabs, (d->n_slabs + 1) *
							  sizeof(*slabs));
			if (slabs == NULL)
				return NULL;
			d->slabs = slabs;
			d->slabs[d->n_slabs] = calloc(SLAB_SIZE, sizeof(struct gw_entry));
			if (d->slabs[d->n_slabs] == NULL)
				return NULL;
			d->n_slabs++;
		}
		i = d->entries_used++;
	}
	struct gw_entry *e = entry_at(d, i);
	*e = (struct gw_entry){.cookie = cookie};
	index_put(d->index, d->index_mask, (uint64_t)(i + 1) << 32 | (uint32_t)cookie);
	d->map_n++;
	return e;
}

/* Removes an entry: its index bucket by backward-shift deletion (linear
 * probing stays exact without tombstones), the entry onto the free list. */
static void map_del(struct gw_dispatch *d, struct gw_entry *e)
{
	uint32_t n = index_of(d, e);
	uint64_t want = (uint64_t)(n + 1) << 32 | (uint32_t)e->cookie;
	size_t i = e->cookie & d->index_mask;
	while (d->index[i] != want)
		i = (i + 1) & d->index_mask;
	size_t j = i;
	for (;;) {
		j = (j + 1) & d->index_mask;
		if (d->index[j] == 0)
			break;
		size_t home = (uint32_t)d->index[j] & d->index_mask;
		/* Move j to i unless its home lies cyclically in (i, j]. */
		bool stays = i <= j ? (i < home && home <= j) : (i < home || home <= j);
		if (stays)
			continue;
		d->index[i] = d->index[j];
		i = j;
	}
	d->index[i] = 0;
	*e = (struct gw_entry){.pod = d->free_entry};
	d->free_entry = n + 1;
	d->map_n--;
}

static void map_free(struct gw_dispatch *d)
{
	for (size_t k = 0; k < d->n_slabs; k++)
		free(d->slabs[k]);
	free(d->slabs);
	free(d->index);
}

/* --- the owners log (--owners-file) --------------------------------- */

/* A pod submitted was not placed, or its placement is gone: no owner. */
static void owners_forget(struct gw_dispatch *d, uint64_t cookie)
{
	if (d->owners != NULL)
		gw_owners_forget(d->owners, cookie);
}

/* gw_owners_retain()'s test: a placement the table holds. */
static bool owners_keep(void *arg, uint64_t cookie)
{
	const struct gw_entry *e = map_find(arg, cookie);
	return e != NULL && e->state == E_PLACED;
}

/* Compacts the log when its dead lines outnumber the live ones. */
static void owners_tidy(struct gw_dispatch *d)
{
	char err[512];
	if (d->owners != NULL && gw_owners_tidy(d->owners, err, sizeof(err)) < 0)
		log_msg(LOG_LEVEL_WARN, "gateway: --owners-file: %s (the file keeps "
			"its dead lines until the next compaction)", err);
}

/* --- the observer ----------------------------------------------------- */

struct shmsched_observer *gw_observer_get(struct gw_dispatch *d)
{
	pthread_rwlock_rdlock(&d->obs_lock);
	return d->obs;
}

void gw_observer_put(struct gw_dispatch *d)
{
	pthread_rwlock_unlock(&d->obs_lock);
}

/* (Re)opens the observer: after a daemon restart its region may be a new
 * file (--fresh). A gateway without read access to the region works on,
 * without /v1/nodes and the daemon's counters. */
static void observer_reopen(struct gw_dispatch *d)
{
	if (d->region_name[0] == '\0')
		return;
	struct shmsched_observer *obs = NULL;
	char err[512];
	int rc = shmsched_observe_open(d->region_name, &obs, err, sizeof(err));
	if (rc < 0)
		log_msg(LOG_LEVEL_WARN, "gateway: the state region %s cannot be "
			"observed (%s): /v1/nodes and the daemon's counters are "
			"unavailable", d->region_name, err);
	pthread_rwlock_wrlock(&d->obs_lock);
	struct shmsched_observer *old = d->obs;
	d->obs = obs;
	pthread_rwlock_unlock(&d->obs_lock);
	shmsched_observe_close(old);
}

static void node_name(struct gw_dispatch *d, struct gw_conn *conn,
		      uint32_t node_id, char *buf, size_t len)
{
	/* The dispatcher is the observer's only writer: it reads it unlocked. */
	if (d->obs != NULL &&
	    shmsched_observe_node_name(d->obs, node_id, buf, len) == 0)
		return;
	if (conn != NULL &&
	    shmsched_node_name(conn->c, node_id, buf, len, NULL, 0) == 0)
		return;
	snprintf(buf, len, "(node %" PRIu32 ")", node_id);
}

/* --- answers ------------------------------------------------------------ */

static void count_histogram(uint64_t *buckets, const double *bounds, unsigned n,
			    uint64_t *count, uint64_t *sum, uint64_t ns)
{
	double s = (double)ns * 1e-9;
	for (unsigned b = 0; b < n; b++)
		if (s <= bounds[b]) {
			stat_inc(&buckets[b]);
			break;
		}
	stat_inc(count);
	stat_add(sum, ns);
}

/* One pod's line into its job's lines, and the job's accounting; with
 * ?explain=true, its template's explanation inside it. */
static void answer_pod(struct gw_job *j, uint32_t pod, const struct json_answer *a)
{
	j->answered++;
	if (job_abandoned(j))
		return;
	uint32_t s = j->batch.pods[pod].spec;
	const struct gw_pod *p = &j->batch.pods[pod];
	bool explained = j->explained != NULL && j->explained[s] != NULL;
	if (!explained && p->n_warnings == 0) {
		json_answer_line(&j->lines, a);
		return;
	}
	json_answer_open(&j->lines, a);
	if (explained)
		json_buf_put(&j->lines, j->explained[s], j->explained_len[s]);
	/* ?fieldValidation=Warn: the unknown fields dropped from this pod,
	 * as its Warning headers say them. */
	if (p->n_warnings > 0) {
		json_buf_puts(&j->lines, ",\"warnings\":[");
		for (unsigned w = 0; w < p->n_warnings; w++) {
			if (w > 0)
				json_buf_put(&j->lines, ",", 1);
			json_buf_string(&j->lines,
					j->batch.warnings[p->first_warning + w]);
		}
		json_buf_put(&j->lines, "]", 1);
	}
	json_buf_put(&j->lines, "}\n", 2);
}

static void answer_placed(struct gw_dispatch *d, struct gw_job *j, uint32_t pod,
			  struct gw_conn *conn, uint32_t node_id,
			  const struct shmsched_devices *dev)
{
	char node[SHMSCHED_OBSERVE_NODE_NAME_MAX], set[1024];
	node_name(d, conn, node_id, node, sizeof(node));
	struct json_answer a = {.pod = gw_pod_name(&j->batch, &j->batch.pods[pod]),
				.node = node, .gpu_mask = dev->gpu_mask,
				.gpu_milli = dev->gpu_milli};
	if (dev->n_cores > 0 && shmsched_format_cpuset(dev, set, sizeof(set)) > 0)
		a.cpuset = set;
	answer_pod(j, pod, &a);
}

static void answer_not_placed(struct gw_job *j,
			      uint32_t pod, const char *message)
{
	struct json_answer a = {.pod = gw_pod_name(&j->batch, &j->batch.pods[pod]),
				.message = message};
	answer_pod(j, pod, &a);
}

/* An EVICTED notice: the placement was preempted by a pod of higher
 * priority and the daemon has given back what it held. Its record goes,
 * as a release's does (GET then says 404); the notice carries the cookie,
 * not the name, so the log names the placement and its node. */
static void on_evicted(struct gw_dispatch *d, struct gw_conn *conn,
		       const struct shmsched_result *r)
{
	stat_inc(&d->st.evicted);
	struct gw_entry *e = map_find(d, r->cookie);
	bool ours = e != NULL && e->state == E_PLACED &&
		    e->placement_id == r->placement_id;
	char node[SHMSCHED_OBSERVE_NODE_NAME_MAX];
	node_name(d, conn, r->node_id, node, sizeof(node));
	log_msg(LOG_LEVEL_INFO, "gateway: placement %" PRIu64 " (pod cookie %016"
		PRIx64 ") on node %s evicted: %s%s", r->placement_id, r->cookie,
		node, r->message, ours ? "" : " (no record of it here)");
	if (ours) {
		owners_forget(d, e->cookie);
		map_del(d, e);
		stat_set(&d->st.placements, d->map_n);
	}
}

/* A REPLACED notice (a drain with "surge": true): placement
 * r->placement_id on node r->node_id now runs the pod of that cookie, in
 * place of the one its message names ("replaces placement OLD: ...",
 * client/client.c), whose EVICTED notice follows. The entry moves to the
 * replacement, so GET finds the pod on its new node, DELETE releases the
 * replacement, and the old one's EVICTED finds no entry of its id to
 * delete. Its devices are not in the notice: shown as none. */
static void on_replaced(struct gw_dispatch *d, struct gw_conn *conn,
			const struct shmsched_result *r)
{
	struct gw_entry *e = map_find(d, r->cookie);
	static const char pre[] = "replaces placement ";
	unsigned long long old = strncmp(r->message, pre, sizeof(pre) - 1) == 0
		? strtoull(r->message + sizeof(pre) - 1, NULL, 10) : 0;
	bool ours = e != NULL && e->state == E_PLACED && old != 0 &&
		    e->placement_id == old;
	char node[SHMSCHED_OBSERVE_NODE_NAME_MAX];
	node_name(d, conn, r->node_id, node, sizeof(node));
	log_msg(LOG_LEVEL_INFO, "gateway: placement %" PRIu64 " (pod cookie %016"
		PRIx64 ") on node %s: %s%s", r->placement_id, r->cookie, node,
		r->message, ours ? "" : " (no record of the old one here)");
	if (ours) {
		e->placement_id = r->placement_id;
		e->node_id = r->node_id;
		e->devices = (struct shmsched_devices){0};
	}
}

/* --- connections and templates ------------------------------------------ */

static void tmpl_table_rebuild(struct gw_dispatch *d, size_t cap)
{
	struct gw_template **t = calloc(cap, sizeof(*t));
	if (t == NULL)
		return; /* keep the old table: lookups still work */
	size_t n = 0;
	for (size_t k = 0; d->tmpl != NULL && k <= d->tmpl_mask; k++) {
		struct gw_template *e = d->tmpl[k];
		if (e == NULL)
			continue;
		if (e->conn == NULL) { /* its connection was closed: evicted */
			tmpl_free(e);
			continue;
		}
		size_t i = e->hash & (cap - 1);
		while (t[i] != NULL)
			i = (i + 1) & (cap - 1);
		t[i] = e;
		n++;
	}
	free(d->tmpl);
	d->tmpl = t;
	d->tmpl_mask = cap - 1;
	d->n_tmpl = n;
	stat_set(&d->st.templates, n);
}

static void conn_close(struct gw_dispatch *d, struct gw_conn *conn)
{
	for (size_t k = 0; d->tmpl != NULL && k <= d->tmpl_mask; k++)
		if (d->tmpl[k] != NULL && d->tmpl[k]->conn == conn)
			d->tmpl[k]->conn = NULL;
	struct gw_conn **p = &d->conns;
	while (*p != conn)
		p = &(*p)->next;
	*p = conn->next;
	if (d->active == conn)
		d->active = NULL;
	d->n_conns--;
	shmsched_disconnect(conn->c);
	free(conn);
	tmpl_table_rebuild(d, d->tmpl_mask + 1);
	stat_set(&d->st.connections, d->n_conns);
}

static int conn_open(struct gw_dispatch *d, char *err, size_t err_len)
{
	struct gw_conn *conn = calloc(1, sizeof(*conn));
	if (conn == NULL)
		return -ENOMEM;
	int rc = shmsched_connect_named(d->socket_path, d->producer_name,
					&conn->c, err, err_len);
	if (rc < 0) {
		free(conn);
		return rc;
	}
	conn->index = ++d->conn_seq;
	conn->capacity = shmsched_capacity(conn->c);
	conn->next = d->conns;
	d->conns = conn;
	d->n_conns++;
	if (d->active != NULL)
		d->active->draining = true;
	d->active = conn;
	stat_inc(&d->st.connections_opened);
	stat_set(&d->st.connections, d->n_conns);
	return 0;
}

/* Closes the connections that have drained: no job uses their templates
 * and none of their pods is in flight. */
static void conns_retire(struct gw_dispatch *d)
{
	for (struct gw_conn *c = d->conns, *next; c != NULL; c = next) {
		next = c->next;
		if (c->draining && c->users == 0 && c->in_flight == 0) {
			log_msg(LOG_LEVEL_DEBUG, "gateway: connection %u drained: "
				"%u templates evicted", c->index, c->n_templates);
			stat_inc(&d->st.connections_retired);
			conn_close(d, c);
		}
	}
}

static void daemon_lost(struct gw_dispatch *d, const char *why);
static uint32_t user_of(struct gw_dispatch *d, const char *name);

/* --- strings users bring (issue 41: see "Strings" above) ------------------ */

/* The daemon's cost of a string beyond its bytes: its NUL and the entry's
 * share of the arena (shm/intern.h's default table: 256 MiB / 4 Mi). */
#define GW_STRING_ENTRY_COST 65u
/* A user past its string budget: the gateway's refusal, not the daemon's
 * (EDQUOT). */
#define GW_E_STRINGS EXFULL

static uint64_t str_key(const char *s, size_t len)
{
	return hash64(s, len) | 1;
}

static bool str_known(const struct gw_dispatch *d, uint64_t k)
{
	if (d->str_set == NULL)
		return false;
	for (size_t i = k & d->str_mask; d->str_set[i] != 0; i = (i + 1) & d->str_mask)
		if (d->str_set[i] == k)
			return true;
	return false;
}

/* Adds k (not present); false when out of memory (then it is charged
 * again next time: an over-count, never an under-count). */
static bool str_add(struct gw_dispatch *d, uint64_t k)
{
	if (d->str_set == NULL || (d->n_str + 1) * 2 > d->str_mask + 1) {
		size_t n = d->str_set == NULL ? 1024 : (d->str_mask + 1) * 2;
		uint64_t *t = calloc(n, sizeof(*t));
		if (t == NULL)
			return false;
		for (size_t j = 0; d->str_set != NULL && j <= d->str_mask; j++) {
			uint64_t v = d->str_set[j];
			if (v == 0)
				continue;
			size_t i = v & (n - 1);
			while (t[i] != 0)
				i = (i + 1) & (n - 1);
			t[i] = v;
		}
		free(d->str_set);
		d->str_set = t;
		d->str_mask = n - 1;
	}
	size_t i = k & d->str_mask;
	while (d->str_set[i] != 0)
		i = (i + 1) & d->str_mask;
	d->str_set[i] = k;
	d->n_str++;
	return true;
}

/* The daemon lost and back: it freed what no placement holds. */
static void strings_reset(struct gw_dispatch *d)
{
	free(d->str_set);
	d->str_set = NULL;
	d->str_mask = 0;
	d->n_str = 0;
	for (uint32_t u = 0; u < d->n_users; u++)
		d->users[u].strings = 0;
}

/* Calls fn on every member name and string value of v. Depth: jansson's
 * parse limit (as gw_spec_hash). */
static void each_string(struct gw_dispatch *d, const json_t *v,
			void (*fn)(struct gw_dispatch *, const char *, size_t,
				   void *), void *arg)
{
	if (json_is_string(v)) {
		fn(d, json_string_value(v), json_string_length(v), arg);
	} else if (json_is_object(v)) {
		const char *key;
		json_t *m;
		json_object_foreach((json_t *)v, key, m) {
			fn(d, key, strlen(key), arg);
			each_string(d, m, fn, arg);
		}
	} else if (json_is_array(v)) {
		size_t i;
		json_t *m;
		json_array_foreach(v, i, m)
			each_string(d, m, fn, arg);
	}
}

/* Strings a new template adds whatever its key: its name ("gw-" and 16
 * hex digits) and its group's encoding (shm/pod_group.h: about 8 bytes
 * per id, here per string of the key, an over-count). */
#define GW_TEMPLATE_NAME_COST (19u + GW_STRING_ENTRY_COST)
#define GW_GROUP_COST_PER_STRING 8u

static size_t template_cost(size_t strings)
{
	return GW_TEMPLATE_NAME_COST + GW_STRING_ENTRY_COST +
	       strings * GW_GROUP_COST_PER_STRING;
}

struct str_cost {
	size_t bytes;   /* strings not yet brought: bytes + entry cost */
	size_t strings; /* every string of the key */
};

/* What a spec's strings not yet brought would cost (a string repeated in
 * the spec counts each time: an over-count, so a refusal may come a
 * little early, never late). */
static void cost_one(struct gw_dispatch *d, const char *s, size_t len, void *arg)
{
	struct str_cost *c = arg;
	c->strings++;
	if (!str_known(d, str_key(s, len)))
		c->bytes += len + GW_STRING_ENTRY_COST;
}

/* Charges a registered spec's new strings to its user (`arg`, struct
 * str_cost). */
static void charge_one(struct gw_dispatch *d, const char *s, size_t len,
		       void *arg)
{
	struct str_cost *c = arg;
	c->strings++;
	uint64_t k = str_key(s, len);
	if (!str_known(d, k) && str_add(d, k))
		c->bytes += len + GW_STRING_ENTRY_COST;
}

/* After a new template of `spec` was registered for user `owner` (0:
 * nobody): its strings are known, their cost the user's. */
static void strings_charge(struct gw_dispatch *d, uint32_t owner,
			   const struct gw_spec *spec)
{
	if (d->cfg.max_string_bytes_per_client == 0)
		return; /* no budget: no set to keep */
	struct str_cost c = {0, 0};
	each_string(d, spec->canon, charge_one, &c);
	if (owner != 0)
		d->users[owner - 1].strings += c.bytes + template_cost(c.strings);
}

/* Whether user `owner` (0: nobody, not checked) may register `spec` as a
 * new template: 0, or GW_E_STRINGS (negative) with the budget, what it
 * holds and what the spec asks in err. */
static int strings_check(struct gw_dispatch *d, uint32_t owner,
			 const struct gw_spec *spec, char *err, size_t err_len)
{
	size_t cap = d->cfg.max_string_bytes_per_client;
	if (owner == 0 || cap == 0)
		return 0;
	struct str_cost c = {0, 0};
	each_string(d, spec->canon, cost_one, &c);
	size_t cost = c.bytes + template_cost(c.strings);
	const struct gw_user *u = &d->users[owner - 1];
	if (u->strings + cost > cap) {
		snprintf(err, err_len, "its new strings (label keys and values, "
			 "names, selectors) would take %zu bytes of the daemon's "
			 "string table, and the user's specs already brought %zu "
			 "of the %zu bytes --max-string-bytes-per-client allows "
			 "(each string costs its bytes + %u, a new spec %zu more "
			 "for its name and group; the daemon keeps them until it "
			 "restarts): send specs already sent, or ask the operator",
			 cost, u->strings, cap, GW_STRING_ENTRY_COST,
			 template_cost(c.strings));
		return -GW_E_STRINGS;
	}
	return 0;
}

/* GL3: whether template t's key equals `canon`. A template keeps
 * references to the spec subtrees it was last found equal to (t->seen,
 * gw_spec_tree_hold(): while one is held no other tree has its address,
 * and it never changes), so the same pointer is the same spec without a
 * walk: a one-pod request whose spec an HTTP thread's spec cache holds
 * carries the entry's own tree, the same one each time (one per HTTP
 * thread). The key's other members (apiVersion, kind, metadata: a few
 * strings) are compared as before. Saves json_equal's walk of the spec,
 * about 3,300 instructions of the dispatcher's a one-pod request of the
 * benchmark's (callgrind, bench/gateway.sh PROFILE=gateway); costs a
 * reference (GP1, GP2) when a new tree is seen, and keeps at most
 * TMPL_SEEN spec trees alive per template. */
static bool tmpl_same_key(struct gw_dispatch *d, struct gw_template *t,
			  const json_t *canon)
{
	const json_t *tree = json_object_get(canon, "spec");
	bool seen = false;
	for (unsigned k = 0; tree != NULL && k < TMPL_SEEN && !seen; k++)
		seen = t->seen[k] == tree;
	if (seen) {
		if (json_object_size(t->canon) != json_object_size(canon))
			return false;
		const char *key;
		json_t *v;
		json_object_foreach(t->canon, key, v)
			if (strcmp(key, "spec") != 0 &&
			    !json_equal(v, json_object_get(canon, key)))
				return false;
		stat_inc(&d->st.templates_same_tree);
		return true;
	}
	if (!json_equal(t->canon, canon))
		return false;
	json_t *held = gw_spec_tree_hold(canon);
	if (held != NULL) {
		unsigned k = t->seen_next++ % TMPL_SEEN;
		gw_spec_tree_release(t->seen[k]);
		t->seen[k] = held;
	}
	return true;
}

/* The template for a spec key and a disrupt scope (gw_job.disrupt): one
 * registered on a live, non-draining connection, or a new registration on
 * the active one, whose new strings are charged to user `owner` (0:
 * nobody). Returns 0 with *out, or -ECONNRESET (the daemon is gone:
 * daemon_lost was called), -EAGAIN (every connection is busy draining),
 * -GW_E_STRINGS (the user's string budget), or the daemon's refusal with
 * its text in err. */
static int template_for(struct gw_dispatch *d, uint32_t owner,
			const struct gw_spec *spec, const char *disrupt,
			struct gw_tref *out, char *err, size_t err_len)
{
	uint64_t hash = tmpl_hash(spec, disrupt);
	size_t i = hash & d->tmpl_mask;
	struct gw_template *found = NULL;
	for (; d->tmpl[i] != NULL; i = (i + 1) & d->tmpl_mask)
		if (d->tmpl[i]->hash == hash &&
		    tmpl_same_scope(d->tmpl[i]->disrupt, disrupt) &&
		    tmpl_same_key(d, d->tmpl[i], spec->canon)) {
			found = d->tmpl[i];
			break;
		}
	if (found != NULL && found->conn != NULL && !found->conn->draining) {
		*out = (struct gw_tref){found->conn, found->id};
		return 0;
	}
	if (found == NULL) {
		/* A spec new to the gateway: its new strings are its user's. */
		int rc = strings_check(d, owner, spec, err, err_len);
		if (rc < 0)
			return rc;
	}
	if (d->active == NULL || d->active->n_templates >= d->cfg.max_templates) {
		if (d->n_conns >= GW_MAX_CONNS) {
			snprintf(err, err_len, "%u connections to the daemon hold "
				 "templates still in use: too many distinct pod "
				 "specs at once; try again", d->n_conns);
			return -EAGAIN;
		}
		int rc = conn_open(d, err, err_len);
		if (rc < 0) {
			daemon_lost(d, err);
			return -ECONNRESET;
		}
	}
	/* The template: the key with a name of its own (the daemon names
	 * placements after their template). */
	json_t *copy = json_copy(spec->canon);
	json_t *meta = copy ? json_copy(json_object_get(copy, "metadata")) : NULL;
	char name[32];
	snprintf(name, sizeof(name), "gw-%016" PRIx64, spec->hash);
	char *text = NULL;
	if (meta != NULL && json_object_set_new(meta, "name", json_string(name)) == 0 &&
	    json_object_set_new(copy, "metadata", meta) == 0) {
		meta = NULL;
		text = json_dumps(copy, JSON_COMPACT);
	}
	json_decref(meta);
	json_decref(copy);
	if (text == NULL) {
		snprintf(err, err_len, "out of memory");
		return -ENOMEM;
	}
	uint32_t id;
	struct gw_conn *conn = d->active;
	/* With the user's disruptNamespaces, which the daemon intersects with
	 * this identity's rule: its pods preempt only there. */
	int rc = shmsched_register_template_scoped(conn->c, text, strlen(text),
						   disrupt, &id, err, err_len);
	free(text);
	if (rc == -ECONNRESET || rc == -ETIMEDOUT || rc == -EPROTO) {
		daemon_lost(d, err);
		return -ECONNRESET;
	}
	if (rc == -ENOSPC && conn->n_templates > 0 &&
	    strstr(err, "the most a producer has") != NULL) {
		/* The daemon's own cap per connection came first: take a new
		 * connection. Any other ENOSPC (its string table full) is the
		 * daemon's budget, told as it is (handle_place: 429). */
		conn->n_templates = d->cfg.max_templates;
		return template_for(d, owner, spec, disrupt, out, err, err_len);
	}
	if (rc < 0) {
		stat_inc(&d->st.templates_refused);
		return rc;
	}
	conn->n_templates++;
	stat_inc(&d->st.templates_registered);
	if (found != NULL) {
		/* Moves to the new connection; the old one drains. */
		found->conn = conn;
		found->id = id;
	} else {
		/* A copy of its own: jansson's reference counts are not
		 * thread-safe to share (its inline decref reads the count
		 * plainly), and the job's objects die in whichever thread
		 * lets the job go. */
		struct gw_template *t = malloc(sizeof(*t));
		json_t *canon = json_deep_copy(spec->canon);
		char *scope = disrupt != NULL ? strdup(disrupt) : NULL;
		if (t == NULL || canon == NULL || (disrupt != NULL && scope == NULL)) {
			free(t);
			free(scope);
			json_decref(canon);
			snprintf(err, err_len, "out of memory");
			return -ENOMEM;
		}
		*t = (struct gw_template){hash, canon, conn, id, scope};
		strings_charge(d, owner, spec);
		d->tmpl[i] = t;
		d->n_tmpl++;
		if (d->n_tmpl * 2 > d->tmpl_mask + 1)
			tmpl_table_rebuild(d, (d->tmpl_mask + 1) * 2);
		stat_set(&d->st.templates, d->n_tmpl);
	}
	*out = (struct gw_tref){conn, id};
	return 0;
}

static void job_release_conns(struct gw_job *j)
{
	if (j->tmpl == NULL)
		return;
	for (size_t s = 0; s < j->batch.n_specs; s++)
		if (j->tmpl[s].conn != NULL) {
			j->tmpl[s].conn->users--;
			j->tmpl[s].conn = NULL;
		}
}

/* Resolves every spec of an accepted job to a template. Returns 0, or
 * the refusal as template_for() gives it, with the spec's index. */
static int job_resolve(struct gw_dispatch *d, struct gw_job *j, size_t *bad,
		       char *err, size_t err_len)
{
	job_release_conns(j);
	for (size_t s = 0; s < j->batch.n_specs; s++) {
		int rc = template_for(d, j->owner, &j->batch.specs[s], j->disrupt,
				      &j->tmpl[s], err, err_len);
		if (rc < 0) {
			*bad = s;
			if (rc != -ECONNRESET)
				job_release_conns(j);
			return rc;
		}
		j->tmpl[s].conn->users++;
	}
	return 0;
}

/* --- the daemon coming and going ---------------------------------------- */

struct listed {
	uint64_t cookie, placement_id;
	uint32_t node_id;
	struct shmsched_devices devices;
};

static void job_retry_push(struct gw_job *j, uint32_t pod)
{
	if (j->n_retry == j->cap_retry) {
		size_t cap = j->cap_retry ? j->cap_retry * 2 : 64;
		uint32_t *r = realloc(j->retry, cap * sizeof(*r));
		if (r == NULL) {
			/* Cannot queue it again: answer it, honestly. */
			j->answered++;
			return;
		}
		j->retry = r;
		j->cap_retry = cap;
	}
	j->retry[j->n_retry++] = pod;
}

static void explain_refuse_all(struct gw_dispatch *d, const char *why);

static void daemon_lost(struct gw_dispatch *d, const char *why)
{
	if (!d->up)
		return;
	log_msg(LOG_LEVEL_WARN, "gateway: lost the daemon: %s; %" PRIu64
		" pods in flight wait up to %u ms for it to come back", why,
		stat_read(&d->st.in_flight), d->cfg.daemon_grace_ms);
	/* Collect what the connections still hold: answers enqueued before
	 * the daemon went, then the library's CANCELLED for the rest. */
	for (struct gw_conn *c = d->conns; c != NULL; c = c->next) {
		int n;
		while ((n = shmsched_poll(c->c, d->results, BURST)) > 0) {
			for (int k = 0; k < n; k++) {
				if (d->results[k].status == SHMSCHED_EVICTED) {
					on_evicted(d, c, &d->results[k]);
					continue;
				}
				if (d->results[k].status == SHMSCHED_REPLACED) {
					on_replaced(d, c, &d->results[k]);
					continue;
				}
				struct gw_entry *e = map_find(d, d->results[k].cookie);
				if (e == NULL || e->state != E_IN_FLIGHT || e->conn != c)
					continue;
				/* Placed answers that arrived are kept; the rest
				 * wait for the listing. */
				if (d->results[k].status == SHMSCHED_PLACED) {
					e->state = E_PLACED;
					e->placement_id = d->results[k].placement_id;
					e->node_id = d->results[k].node_id;
					e->devices = d->results[k].devices;
					c->in_flight--;
					e->job->in_flight--;
					answer_placed(d, e->job, e->pod, c, e->node_id,
						      &e->devices);
					e->job = NULL;
				}
			}
		}
	}
	struct gw_entry *e;
	for (MAP_EACH(d, e))
		if (e->state == E_IN_FLIGHT) {
			e->state = E_LIMBO;
			e->conn = NULL;
			if (e->job != NULL)
				e->job->in_flight--;
		}
	for (struct gw_job *j = d->jobs_head; j != NULL; j = j->next)
		job_release_conns(j);
	/* Jobs still being explained hold templates of the connections that
	 * go: answered now (nothing of theirs was submitted). */
	char msg[600];
	snprintf(msg, sizeof(msg), "the shmsched daemon went away while the "
		 "request was being explained: %s", why);
	explain_refuse_all(d, msg);
	while (d->conns != NULL)
		conn_close(d, d->conns);
	d->up = false;
	d->grace_expired = false;
	d->down_since_ns = now_ns();
	d->next_connect_ns = d->down_since_ns;
	snprintf(d->last_error, sizeof(d->last_error), "%s", why);
	stat_set(&d->st.connected, 0);
	stat_set(&d->st.last_loss_ns, d->down_since_ns);
	stat_inc(&d->st.daemon_losses);
}

/* Reads this identity's placements from the daemon and makes the table
 * agree with them. Returns 0, or the connection's error. */
static int rebuild_from_listing(struct gw_dispatch *d, char *err, size_t err_len)
{
	struct shmsched_placement *page = malloc(LISTING_PAGE * sizeof(*page));
	if (page == NULL)
		return -ENOMEM;
	struct gw_entry *each;
	for (MAP_EACH(d, each))
		each->seen = 0;
	uint32_t cursor = 0;
	uint64_t unowned = 0;
	int rc = 0;
	while (cursor != UINT32_MAX) {
		rc = shmsched_placements(d->active->c, &cursor, page, LISTING_PAGE,
					 err, err_len);
		if (rc < 0)
			break;
		for (int i = 0; i < rc; i++) {
			const struct shmsched_placement *p = &page[i];
			if (p->cookie == 0)
				continue; /* a bound pod: not ours */
			struct gw_entry *e = map_find(d, p->cookie);
			if (e == NULL) {
				e = map_add(d, p->cookie);
				if (e == NULL) {
					rc = -ENOMEM;
					break;
				}
				e->state = E_PLACED;
				/* Its owner, if the owners log names one; else
				 * 0: see "Users" above. */
				const char *user = d->owners != NULL
					? gw_owners_find(d->owners, p->cookie, NULL)
					: NULL;
				e->owner = user != NULL ? user_of(d, user) : 0;
				if (e->owner == 0)
					unowned++;
			}
			if (e->state == E_LIMBO && e->job != NULL) {
				/* Its answer went with the daemon: this is it. */
				answer_placed(d, e->job, e->pod, d->active, p->node_id,
					      &p->devices);
				stat_inc(&d->st.recovered);
			}
			e->state = E_PLACED;
			e->job = NULL;
			e->placement_id = p->placement_id;
			e->node_id = p->node_id;
			e->devices = p->devices;
			e->seen = 1;
		}
		if (rc < 0)
			break;
	}
	free(page);
	if (rc < 0)
		return rc;
	/* What the daemon does not hold: LIMBO pods were never placed (go
	 * again), PLACED ones are gone (a fresh region). Entries never move:
	 * the walk may delete as it goes. */
	for (MAP_EACH(d, each)) {
		if (each->seen)
			continue;
		if (each->state == E_LIMBO && each->job != NULL) {
			job_retry_push(each->job, each->pod);
			stat_inc(&d->st.resubmitted);
		}
		map_del(d, each);
	}
	stat_set(&d->st.placements, d->map_n);
	if (unowned > 0)
		log_msg(LOG_LEVEL_WARN, "gateway: %" PRIu64 " placement(s) of this "
			"identity were made before this gateway started%s: who placed "
			"them is not known here, so only the admin group reaches "
			"them (GET and DELETE; another user's GET is 404)", unowned,
			d->owners != NULL ? " and have no entry in --owners-file" : "");
	if (d->owners != NULL) {
		/* The daemon is the truth: an entry it does not hold (a crash
		 * between append and placement, or between release and
		 * tombstone) goes, and the file is rewritten. */
		size_t had = gw_owners_count(d->owners);
		if (gw_owners_retain(d->owners, owners_keep, d, err, err_len) < 0)
			log_msg(LOG_LEVEL_WARN, "gateway: --owners-file: %s (the "
				"entries are kept in memory; the file is compacted "
				"later)", err);
		log_msg(LOG_LEVEL_INFO, "gateway: --owners-file: %zu owner(s) of "
			"placements the daemon holds, %zu entry(ies) it does not hold "
			"dropped", gw_owners_count(d->owners),
			had - gw_owners_count(d->owners));
	}
	return 0;
}

static void try_connect(struct gw_dispatch *d, uint64_t now)
{
	if (now < d->next_connect_ns)
		return;
	d->next_connect_ns = now + RECONNECT_EVERY_NS;
	char err[512];
	int rc = conn_open(d, err, sizeof(err));
	if (rc < 0) {
		if (strcmp(err, d->last_error) != 0)
			log_msg(LOG_LEVEL_WARN, "gateway: the daemon is not reachable: "
				"%s (trying every 100 ms)", err);
		snprintf(d->last_error, sizeof(d->last_error), "%s", err);
		return;
	}
	d->up = true;
	strings_reset(d);
	observer_reopen(d);
	rc = rebuild_from_listing(d, err, sizeof(err));
	if (rc < 0) {
		daemon_lost(d, err);
		return;
	}
	/* Jobs waiting since the loss register their specs again. */
	for (struct gw_job *j = d->jobs_head; j != NULL && d->up; j = j->next) {
		size_t bad;
		rc = job_resolve(d, j, &bad, err, sizeof(err));
		if (rc < 0 && rc != -ECONNRESET) {
			/* The daemon now refuses the spec: its pods are
			 * answered so (submit_round, an unresolved spec). */
			log_msg(LOG_LEVEL_WARN, "gateway: after the daemon came back "
				"it refused %s: %s", j->batch.specs[bad].where, err);
		}
	}
	if (!d->up)
		return;
	log_msg(LOG_LEVEL_INFO, "gateway: connected to the daemon (%" PRIu64
		" placements of ours)", (uint64_t)d->map_n);
	d->last_error[0] = '\0';
	stat_set(&d->st.connected, 1);
}

/* The daemon stayed away past the grace (or the gateway is stopping,
 * `why`): every open pod is answered. */
static void grace_expired(struct gw_dispatch *d, const char *why)
{
	char msg[512];
	snprintf(msg, sizeof(msg), "shmsched-gateway: %s: this pod may have been "
		 "placed before the daemon went; GET /v1/placements/{namespace}/"
		 "{name} once it is back", why);
	struct gw_entry *e;
	for (MAP_EACH(d, e)) {
		if (e->state != E_LIMBO)
			continue;
		if (e->job != NULL) {
			answer_not_placed(e->job, e->pod, msg);
			stat_inc(&d->st.cancelled);
		}
		map_del(d, e);
	}
	snprintf(msg, sizeof(msg), "shmsched-gateway: not placed: %s", why);
	for (struct gw_job *j = d->jobs_head; j != NULL; j = j->next) {
		for (size_t r = 0; r < j->n_retry; r++) {
			answer_not_placed(j, j->retry[r], msg);
			stat_inc(&d->st.cancelled);
		}
		j->n_retry = 0;
		for (; j->next_pod < j->batch.n_pods; j->next_pod++) {
			answer_not_placed(j, (uint32_t)j->next_pod, msg);
			stat_inc(&d->st.cancelled);
		}
	}
	d->grace_expired = true;
}

/* --- new jobs ----------------------------------------------------------- */

/* A template's refusal as the daemon words it, without what names the
 * template ("template: pod default/gw-...: "): the field and the value. */
static const char *refusal_text(const char *err)
{
	const char *gw = strstr(err, "/gw-");
	if (gw != NULL && (gw = strstr(gw, ": ")) != NULL)
		return gw + 2;
	return gw_daemon_says(err);
}

/* The number of user `name`, added when new; 0 when out of memory. A
 * linear walk: users are the token file's records (and anonymous). */
static uint32_t user_of(struct gw_dispatch *d, const char *name)
{
	for (uint32_t u = 1; u <= d->n_users; u++)
		if (strcmp(d->users[u - 1].name, name) == 0)
			return u;
	if (d->n_users == d->cap_users) {
		uint32_t cap = d->cap_users ? d->cap_users * 2 : 16;
		struct gw_user *n = realloc(d->users, cap * sizeof(*n));
		if (n == NULL)
			return 0;
		d->users = n;
		d->cap_users = cap;
	}
	struct gw_user *u = &d->users[d->n_users++];
	memset(u, 0, sizeof(*u));
	snprintf(u->name, sizeof(u->name), "%s", name);
	return d->n_users;
}

/* A user's share of the slots: --max-slots-per-client, or half the slots
 * of the active connection (one request more than half is refused: two
 * clients always find room). */
static size_t slots_share(const struct gw_dispatch *d)
{
	if (d->cfg.max_slots_per_client > 0)
		return d->cfg.max_slots_per_client;
	unsigned cap = d->active != NULL ? d->active->capacity : 0;
	return cap >= 2 ? cap / 2 : 1;
}

/* Whether the asker may see the pod of entry e. */
static bool may_see(const struct gw_job *j, const struct gw_entry *e)
{
	return j->admin || (e->owner != 0 && e->owner == j->owner);
}

static void job_list(struct gw_dispatch *d, struct gw_job *j)
{
	j->next = NULL;
	j->listed = true;
	if (d->jobs_tail != NULL)
		d->jobs_tail->next = j;
	else
		d->jobs_head = j;
	d->jobs_tail = j;
}

/* The verdict 200 for a PLACE job whose templates are resolved: it joins
 * the jobs whose pods are submitted, with the reference the caller took. */
static void job_accept(struct gw_dispatch *d, struct gw_job *j)
{
	if (j->owner != 0 && j->kind == GW_JOB_PLACE) {
		j->charged = j->batch.n_pods;
		d->users[j->owner - 1].outstanding += j->charged;
	}
	pthread_mutex_lock(&j->lock);
	j->code = 200;
	bool wake = job_take_wake(j);
	pthread_mutex_unlock(&j->lock);
	job_wake_after(j, wake); /* GL1 */
	job_list(d, j);
}

static void handle_place(struct gw_dispatch *d, struct gw_job *j)
{
	if (!d->up) {
		job_refuse(j, 503, "ServiceUnavailable", "the shmsched daemon is not "
			   "reachable: %s", d->last_error[0] ? d->last_error
							     : "connecting");
		return;
	}
	if (j->owner != 0) {
		size_t share = slots_share(d);
		size_t had = d->users[j->owner - 1].outstanding;
		if (had + j->batch.n_pods > share) {
			job_refuse(j, 429, "TooManyRequests", "user %s: %zu pods in this "
				   "request and %zu in requests not yet answered (waiting "
				   "ones too) are over the budget --max-slots-per-client "
				   "(%zu pods at once): wait for answers, or send fewer; "
				   "nothing was placed", j->who.user, j->batch.n_pods, had,
				   share);
			return;
		}
	}
	for (size_t p = 0; p < j->batch.n_pods; p++) {
		const struct gw_entry *e = map_find(d, j->batch.pods[p].cookie);
		if (e == NULL)
			continue;
		const char *name = gw_pod_name(&j->batch, &j->batch.pods[p]);
		if (!may_see(j, e)) {
			/* Another user's: its node is not said. */
			job_refuse(j, 409, "AlreadyExists", "pod %s: the name is taken "
				   "(by another user's pod)", name);
		} else if (e->state == E_PLACED) {
			char node[SHMSCHED_OBSERVE_NODE_NAME_MAX];
			node_name(d, d->active, e->node_id, node, sizeof(node));
			job_refuse(j, 409, "AlreadyExists", "pod %s is already placed "
				   "on node %s: DELETE /v1/placements/%s first", name,
				   node, name);
		} else {
			job_refuse(j, 409, "AlreadyExists", "pod %s is being placed "
				   "by another request", name);
		}
		return;
	}
	j->tmpl = calloc(j->batch.n_specs ? j->batch.n_specs : 1, sizeof(*j->tmpl));
	if (j->tmpl == NULL) {
		job_refuse(j, 500, "InternalError", "out of memory");
		return;
	}
	char err[1024];
	size_t bad = 0;
	int rc = job_resolve(d, j, &bad, err, sizeof(err));
	if (rc == -ECONNRESET) {
		job_refuse(j, 503, "ServiceUnavailable", "the shmsched daemon went "
			   "away: %s", err);
		return;
	}
	if (rc == -EAGAIN) {
		job_refuse(j, 429, "TooManyRequests", "user %s: %s (the gateway's "
			   "budget of daemon connections); nothing was placed",
			   j->who.user, err);
		return;
	}
	if (rc == -GW_E_STRINGS) {
		job_refuse(j, 429, "TooManyRequests", "user %s: %s: %s; nothing "
			   "was placed", j->who.user, j->batch.specs[bad].where, err);
		return;
	}
	if (rc == -ENOSPC || rc == -EDQUOT || rc == -EBUSY) {
		/* A budget of the daemon's (its string table, its templates, a
		 * per-identity quota): its own words, not "unavailable". */
		job_refuse(j, 429, "TooManyRequests", "user %s: %s: the daemon "
			   "refused the pod's template: %s; nothing was placed",
			   j->who.user, j->batch.specs[bad].where, gw_daemon_says(err));
		return;
	}
	if (rc < 0) {
		/* The daemon's decoder names the field; say which pod. */
		const struct gw_spec *s = &j->batch.specs[bad];
		const char *msg = refusal_text(err);
		unsigned code = rc == -EMSGSIZE ? 413 : 400;
		job_refuse(j, code, code == 413 ? "RequestEntityTooLarge" : "BadRequest",
			   "%s: the daemon refused the pod: %s", s->where, msg);
		return;
	}
	if (j->explain) {
		/* Its templates are evaluated first, one a turn
		 * (explain_round), then it is accepted. */
		j->explained = calloc(j->batch.n_specs, sizeof(*j->explained));
		j->explained_len = calloc(j->batch.n_specs, sizeof(*j->explained_len));
		if (j->explained == NULL || j->explained_len == NULL) {
			job_release_conns(j);
			job_refuse(j, 500, "InternalError", "out of memory");
			return;
		}
		gw_job_ref(j);
		j->next = NULL;
		if (d->explain_tail != NULL)
			d->explain_tail->next = j;
		else
			d->explain_head = j;
		d->explain_tail = j;
		return;
	}
	gw_job_ref(j);
	job_accept(d, j);
}

static void handle_lookup(struct gw_dispatch *d, struct gw_job *j)
{
	const struct gw_entry *e = map_find(d, j->cookie);
	if (e != NULL && !may_see(j, e))
		e = NULL; /* another user's: as if it were not there */
	if (e == NULL || e->state != E_PLACED) {
		job_refuse(j, 404, "NotFound", e == NULL
			   ? "pod %s: no placement made through this gateway"
			   : "pod %s: being placed, not placed yet", j->name);
		return;
	}
	char node[SHMSCHED_OBSERVE_NODE_NAME_MAX], set[1024];
	node_name(d, d->active, e->node_id, node, sizeof(node));
	struct json_answer a = {.pod = j->name, .node = node,
				.gpu_mask = e->devices.gpu_mask,
				.gpu_milli = e->devices.gpu_milli};
	if (e->devices.n_cores > 0 &&
	    shmsched_format_cpuset(&e->devices, set, sizeof(set)) > 0)
		a.cpuset = set;
	struct json_buf b = {0};
	json_answer_open(&b, &a);
	json_buf_printf(&b, ",\"placement_id\":%" PRIu64 "}\n", e->placement_id);
	job_finish(j, 200, &b);
	json_buf_free(&b);
}

/* POST .../pods/{name}/eviction: the placement and who may evict it. The
 * admin group evicts any pod; a user only its own (another user's: 403,
 * as an RBAC refusal; the HTTP side has checked its policy's
 * disruptNamespaces). The eviction itself is the HTTP side's
 * (gw_evict_run, on the admin socket): this thread only judges, so a
 * slow eviction never holds up placements. */
static void handle_evict(struct gw_dispatch *d, struct gw_job *j)
{
	const struct gw_entry *e = map_find(d, j->cookie);
	const char *slash = strchr(j->name, '/');
	const char *name = slash != NULL ? slash + 1 : j->name;
	if (e == NULL || e->state != E_PLACED) {
		/* kube: the pod's Get fails, pods "NAME" not found. */
		job_refuse(j, 404, "NotFound", "pods \"%s\" not found", name);
		return;
	}
	if (!may_see(j, e)) {
		job_refuse(j, 403, "Forbidden", "pods \"%s\" is forbidden: user "
			   "\"%s\" may evict only the pods it placed through "
			   "this gateway", name, j->who.user);
		return;
	}
	j->evict_id = e->placement_id;
	node_name(d, d->active, e->node_id, j->evict_node, sizeof(j->evict_node));
	job_finish(j, 200, NULL);
}

static void handle_release(struct gw_dispatch *d, struct gw_job *j)
{
	struct gw_entry *e = map_find(d, j->cookie);
	if (e != NULL && !may_see(j, e))
		e = NULL; /* another user's: as if it were not there */
	if (e == NULL) {
		job_refuse(j, 404, "NotFound", "pod %s: no placement made through "
			   "this gateway", j->name);
		return;
	}
	if (e->state != E_PLACED) {
		job_refuse(j, 409, "Conflict", "pod %s: being placed; release it "
			   "once it is answered", j->name);
		return;
	}
	if (!d->up) {
		job_refuse(j, 503, "ServiceUnavailable", "the shmsched daemon is not "
			   "reachable: %s", d->last_error);
		return;
	}
	char err[512];
	int rc = shmsched_release(d->active->c, e->placement_id, err, sizeof(err));
	if (rc == -ECONNRESET || rc == -ETIMEDOUT || rc == -EPROTO) {
		daemon_lost(d, err);
		job_refuse(j, 503, "ServiceUnavailable", "the shmsched daemon went "
			   "away: %s", err);
		return;
	}
	if (rc == 0 || rc == -ENOENT || rc == -ESTALE) {
		char oerr[512];
		if (d->owners != NULL &&
		    gw_owners_release(d->owners, e->cookie, oerr, sizeof(oerr)) < 0)
			log_msg(LOG_LEVEL_WARN, "gateway: --owners-file: %s (harmless: "
				"the next start drops owners of pods the daemon does "
				"not hold)", oerr);
		map_del(d, e);
	}
	stat_set(&d->st.placements, d->map_n);
	if (rc == -ENOENT) {
		job_refuse(j, 404, "NotFound", "pod %s: the daemon holds no such "
			   "placement any more", j->name);
		return;
	}
	if (rc < 0 && rc != -ESTALE) {
		job_refuse(j, rc == -EPERM ? 403 : 500,
			   rc == -EPERM ? "Forbidden" : "InternalError",
			   "pod %s: the daemon refused the release: %s", j->name, err);
		return;
	}
	stat_inc(&d->st.releases);
	struct json_buf b = {0};
	json_buf_puts(&b, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},"
		      "\"status\":\"Success\",\"message\":");
	char msg[512];
	snprintf(msg, sizeof(msg), "pod %s released%s", j->name,
		 rc == -ESTALE ? " (its node had been removed: nothing was "
				 "left to give back)" : "");
	json_buf_string(&b, msg);
	json_buf_puts(&b, ",\"code\":200}\n");
	job_finish(j, 200, &b);
	json_buf_free(&b);
}

/* The extender's filter and prioritize: one pod's template evaluated
 * against every node; the HTTP side builds the answer from the text. */
static void handle_evaluate(struct gw_dispatch *d, struct gw_job *j)
{
	if (!d->up) {
		job_refuse(j, 503, "ServiceUnavailable", "the shmsched daemon is not "
			   "reachable: %s", d->last_error);
		return;
	}
	j->tmpl = calloc(1, sizeof(*j->tmpl));
	if (j->tmpl == NULL || j->batch.n_specs != 1) {
		job_refuse(j, 500, "InternalError", "out of memory");
		return;
	}
	char err[1024];
	size_t bad;
	int rc = job_resolve(d, j, &bad, err, sizeof(err));
	if (rc == 0) {
		char *text = NULL;
		size_t len = 0;
		rc = shmsched_evaluate(j->tmpl[0].conn->c, j->tmpl[0].id, &text, &len,
				       err, sizeof(err));
		job_release_conns(j);
		if (rc == 0) {
			struct json_buf b = {.data = text, .len = len, .cap = len + 1};
			job_finish(j, 200, &b);
			free(text);
			return;
		}
		if (rc == -ECONNRESET || rc == -ETIMEDOUT || rc == -EPROTO)
			daemon_lost(d, err);
	}
	if (rc == -ECONNRESET || rc == -ETIMEDOUT || rc == -EPROTO || rc == -EAGAIN)
		job_refuse(j, 503, "ServiceUnavailable", "the shmsched daemon: %s",
			   gw_daemon_says(err));
	else if (rc == -ENOTSUP)
		job_refuse(j, 501, "NotImplemented", "%s", gw_daemon_says(err));
	else if (rc == -GW_E_STRINGS)
		job_refuse(j, 429, "TooManyRequests", "user %s: Pod: %s",
			   j->who.user, err);
	else if (rc == -EINVAL || rc == -EMSGSIZE)
		job_refuse(j, 400, "BadRequest", "Pod: the daemon refused the pod: %s",
			   refusal_text(err));
	else
		job_refuse(j, 500, "InternalError", "%s", gw_daemon_says(err));
}

/* --- ?explain=true ---------------------------------------------------------
 *
 * A job that asks for explanations gets, before any of its pods is
 * submitted, each of its templates evaluated by the daemon
 * (shmsched_evaluate(), as the extender's verbs do): every node's filter
 * reasons or its scores, against the cluster as it is then. Pods of one
 * template share that evaluation; a pod placed later (by this request or
 * another) is not in it. One evaluation a turn of the loop, so a request
 * of many templates delays the others' pods by one daemon round trip a
 * turn (milliseconds per thousand nodes), not by all of its own. */

/* The members an answer line of a template gets, from the daemon's
 * evaluation, in the shape `shmsched place --explain` prints: "profile",
 * "filtered" (each node that failed a filter: its reasons) and "scores"
 * (each feasible node: its plugins' scores and the weighted total, in
 * points), and "quota" when the daemon has quotas and the pod is under
 * one. Returns 0, -ENOMEM, or -EPROTO (an answer not as documented). */
static int explanation(const char *text, size_t len, struct json_buf *b)
{
	json_t *root = json_loadb(text, len, 0, NULL);
	const json_t *feasible = json_object_get(root, "feasible");
	const json_t *filtered = json_object_get(root, "filtered");
	const json_t *scores = json_object_get(root, "scores");
	const json_t *profile = json_object_get(root, "profile");
	const json_t *quota = json_object_get(root, "quota");
	if (!json_is_object(feasible) || !json_is_object(filtered)) {
		json_decref(root);
		return -EPROTO;
	}
	if (json_is_string(profile)) {
		json_buf_puts(b, ",\"profile\":");
		json_buf_string(b, json_string_value(profile));
	}
	json_buf_puts(b, ",\"filtered\":{");
	const char *name;
	json_t *v;
	bool first = true;
	json_object_foreach((json_t *)filtered, name, v) {
		json_buf_puts(b, first ? "" : ",");
		first = false;
		json_buf_string(b, name);
		json_buf_puts(b, ":[");
		size_t i;
		json_t *r;
		json_array_foreach(json_object_get(v, "reasons"), i, r) {
			json_buf_puts(b, i ? "," : "");
			json_buf_string(b, json_string_value(r) ? json_string_value(r) : "");
		}
		json_buf_puts(b, "]");
	}
	json_buf_puts(b, "},\"scores\":{");
	first = true;
	json_object_foreach((json_t *)feasible, name, v) {
		json_buf_puts(b, first ? "" : ",");
		first = false;
		json_buf_string(b, name);
		json_buf_puts(b, ":{");
		const json_t *mine = json_object_get(scores, name);
		if (json_is_object(mine)) {
			const char *plugin;
			json_t *sc;
			bool more = false;
			json_object_foreach((json_t *)mine, plugin, sc) {
				json_buf_puts(b, more ? "," : "");
				more = true;
				json_buf_string(b, plugin);
				if (json_is_integer(sc))
					json_buf_printf(b, ":%lld",
							(long long)json_integer_value(sc));
				else if (json_is_real(sc))
					json_buf_printf(b, ":%.3f", json_real_value(sc));
				else
					json_buf_puts(b, ":null");
			}
		} else {
			/* A daemon from before per-plugin scores: the total. */
			int64_t t = json_integer_value(v), a = t < 0 ? -t : t;
			json_buf_printf(b, "\"total\":%s%lld.%03lld", t < 0 ? "-" : "",
					(long long)(a / 1000), (long long)(a % 1000));
		}
		json_buf_puts(b, "}");
	}
	json_buf_puts(b, "}");
	if (json_is_string(quota)) {
		/* Issue 37: the pod's ClusterQueue and what it has left. */
		json_buf_puts(b, ",\"quota\":");
		json_buf_string(b, json_string_value(quota));
	}
	json_decref(root);
	return b->failed ? -ENOMEM : 0;
}

static struct gw_job *explain_pop(struct gw_dispatch *d)
{
	struct gw_job *j = d->explain_head;
	d->explain_head = j->next;
	if (d->explain_head == NULL)
		d->explain_tail = NULL;
	j->next = NULL;
	return j;
}

/* Every job still being explained answered 503 (the daemon gone, the
 * gateway stopping): none of its pods was submitted. */
static void explain_refuse_all(struct gw_dispatch *d, const char *why)
{
	while (d->explain_head != NULL) {
		struct gw_job *j = explain_pop(d);
		job_release_conns(j);
		job_refuse(j, 503, "ServiceUnavailable", "%s", why);
		gw_job_unref(j);
	}
}

/* One template of the first job being explained; the job accepted once
 * all are, or refused. */
static void explain_round(struct gw_dispatch *d)
{
	struct gw_job *j = d->explain_head;
	if (j == NULL || !d->up)
		return;
	if (job_abandoned(j)) {
		/* Nobody reads it: nothing submitted, nothing to answer. */
		explain_pop(d);
		job_release_conns(j);
		gw_job_unref(j);
		return;
	}
	size_t s = j->n_explained;
	char err[1024];
	char *text = NULL;
	size_t len = 0;
	int rc = shmsched_evaluate(j->tmpl[s].conn->c, j->tmpl[s].id, &text, &len,
				   err, sizeof(err));
	bool lost = rc == -ECONNRESET || rc == -ETIMEDOUT || rc == -EPROTO;
	if (rc == 0) {
		struct json_buf b = {0};
		rc = explanation(text, len, &b);
		if (rc == 0) {
			j->explained[s] = b.data; /* the buffer's, now the job's */
			j->explained_len[s] = b.len;
			j->n_explained++;
		} else {
			json_buf_free(&b);
			snprintf(err, sizeof(err), rc == -ENOMEM ? "out of memory"
				 : "the daemon's evaluation could not be read");
		}
		free(text);
	}
	if (rc < 0) {
		explain_pop(d);
		job_release_conns(j);
		if (lost)
			daemon_lost(d, err);
		const struct gw_spec *sp = &j->batch.specs[s];
		if (lost || rc == -EAGAIN)
			job_refuse(j, 503, "ServiceUnavailable", "%s: explaining: the "
				   "shmsched daemon: %s", sp->where, gw_daemon_says(err));
		else if (rc == -ENOTSUP)
			job_refuse(j, 501, "NotImplemented", "?explain=true: %s",
				   gw_daemon_says(err));
		else
			job_refuse(j, 500, "InternalError", "%s: explaining: %s",
				   sp->where, gw_daemon_says(err));
		gw_job_unref(j);
		return;
	}
	if (j->n_explained < j->batch.n_specs)
		return;
	explain_pop(d);
	size_t bytes = 0;
	for (size_t p = 0; p < j->batch.n_pods; p++)
		bytes += j->explained_len[j->batch.pods[p].spec];
	if (bytes > d->cfg.explain_max_bytes) {
		job_release_conns(j);
		job_refuse(j, 413, "RequestEntityTooLarge", "?explain=true: the "
			   "explanations of these %zu pods come to %zu bytes, over "
			   "the %zu the gateway answers (each pod carries its "
			   "template's filter reasons or scores for every node): "
			   "send fewer pods per request; nothing was placed",
			   j->batch.n_pods, bytes, d->cfg.explain_max_bytes);
		gw_job_unref(j);
		return;
	}
	job_accept(d, j); /* with the explaining list's reference */
}

static void handle_new(struct gw_dispatch *d, struct gw_job *j)
{
	j->received_ns = j->received_ns ? j->received_ns : now_ns();
	j->owner = j->who.user[0] != '\0' ? user_of(d, j->who.user) : 0;
	switch (j->kind) {
	case GW_JOB_PLACE:
		handle_place(d, j);
		break;
	case GW_JOB_LOOKUP:
		handle_lookup(d, j);
		break;
	case GW_JOB_RELEASE:
		handle_release(d, j);
		break;
	case GW_JOB_EVALUATE:
		handle_evaluate(d, j);
		break;
	case GW_JOB_EVICT:
		handle_evict(d, j);
		break;
	}
	gw_job_unref(j); /* the inbox's reference */
}

/* --- pods to the daemon and answers back -------------------------------- */

/* The next pod of j to submit, or -1. */
static int64_t job_next_pod(struct gw_job *j)
{
	if (j->n_retry > 0)
		return j->retry[--j->n_retry];
	if (j->next_pod < j->batch.n_pods)
		return (int64_t)j->next_pod++;
	return -1;
}

static void job_unnext(struct gw_job *j, uint32_t pod)
{
	if (j->next_pod > 0 && pod == j->next_pod - 1)
		j->next_pod--;
	else
		job_retry_push(j, pod);
}

/* Before staged pods[0..n) are submitted: their owners appended to the
 * owners log and synced ("Users" above). Returns whether they may go; if
 * not, each was answered as not placed (nothing was submitted, so no pod
 * is placed whose owner the file might lose). Pods with no user (0) are
 * not recorded: nobody but the admin group reaches them anyway. */
static bool owners_record(struct gw_dispatch *d, unsigned n)
{
	size_t m = 0;
	for (unsigned k = 0; k < n; k++) {
		const struct gw_job *j = d->pod_job[k];
		if (j->owner == 0)
			continue;
		d->owner_recs[m++] = (struct gw_owner_rec){
			.user = d->users[j->owner - 1].name,
			.name = gw_pod_name(&j->batch, &j->batch.pods[d->pod_index[k]])};
	}
	char err[512];
	int rc = m > 0 ? gw_owners_append(d->owners, d->owner_recs, m, err,
					  sizeof(err)) : 0;
	if (rc == 0)
		return true;
	log_msg(LOG_LEVEL_WARN, "gateway: --owners-file: %s: %u pod(s) answered "
		"not placed", err, n);
	char msg[700];
	snprintf(msg, sizeof(msg), "shmsched-gateway: not placed: its owner could "
		 "not be recorded (--owners-file: %s)", err);
	for (unsigned k = 0; k < n; k++)
		answer_not_placed(d->pod_job[k], d->pod_index[k], msg);
	return false;
}

/* Submits staged pods[0..n) on conn; those not taken go back. */
static int flush(struct gw_dispatch *d, struct gw_conn *conn, unsigned n)
{
	if (n == 0)
		return 0;
	if (d->owners != NULL && !owners_record(d, n))
		return 0;
	int taken = shmsched_submit(conn->c, d->pods, n);
	if (taken < 0) {
		for (unsigned k = n; k-- > 0;)
			job_unnext(d->pod_job[k], d->pod_index[k]);
		daemon_lost(d, "the connection reported it gone on submit");
		return -ECONNRESET;
	}
	if (taken > 0)
		d->last_activity_ns = now_ns();
	for (unsigned k = 0; k < n; k++) {
		struct gw_job *j = d->pod_job[k];
		if (k >= (unsigned)taken) {
			/* Not submitted: no owner until it is (its line in the
			 * file is dead; the start drops it if nothing of that
			 * name is placed). */
			owners_forget(d, d->pods[k].cookie);
			job_unnext(j, d->pod_index[k]);
			continue;
		}
		struct gw_entry *e = map_add(d, d->pods[k].cookie);
		if (e == NULL) {
			/* Out of memory for the table: the pod is in flight and
			 * its answer will be dropped as stray. */
			answer_not_placed(j, d->pod_index[k], "shmsched-gateway: "
					  "out of memory for the pod's record");
			owners_forget(d, d->pods[k].cookie);
			continue;
		}
		e->state = E_IN_FLIGHT;
		e->job = j;
		e->owner = j->owner;
		e->pod = d->pod_index[k];
		e->conn = conn;
		conn->in_flight++;
		j->in_flight++;
	}
	return taken;
}

/* One pass over the jobs: each gives pods while its connections have
 * room, a burst at a time, so a large batch does not hold back a small
 * request behind it for more than a burst. */
static void submit_round(struct gw_dispatch *d)
{
	for (struct gw_job *j = d->jobs_head; j != NULL && d->up; j = j->next) {
		if (job_abandoned(j)) {
			/* Nobody reads the rest: not submitted, counted done. */
			j->answered += j->n_retry + (j->batch.n_pods - j->next_pod);
			j->n_retry = 0;
			j->next_pod = j->batch.n_pods;
			continue;
		}
		struct gw_conn *conn = NULL;
		unsigned n = 0;
		int64_t p;
		while (n < BURST && (p = job_next_pod(j)) >= 0) {
			const struct gw_pod *pod = &j->batch.pods[p];
			struct gw_tref t = j->tmpl[pod->spec];
			if (t.conn == NULL) { /* unresolved after a restart */
				answer_not_placed(j, (uint32_t)p, "shmsched-gateway: "
						  "the daemon refused this pod's spec "
						  "after it came back");
				continue;
			}
			if (map_find(d, pod->cookie) != NULL) {
				/* Another request took the name meanwhile. */
				answer_not_placed(j, (uint32_t)p, "shmsched-gateway: "
						  "a pod of this name is already placed "
						  "or being placed by another request");
				continue;
			}
			if (conn != t.conn) {
				if (flush(d, conn, n) < 0)
					return;
				n = 0;
				conn = t.conn;
			}
			if (conn->in_flight + n >= conn->capacity) {
				job_unnext(j, (uint32_t)p);
				break;
			}
			/* The flags and deadline are the request's: a pod
			 * submitted again after a daemon restart keeps its
			 * deadline (one past already is answered
			 * UNSCHEDULABLE by the daemon at once). */
			d->pods[n] = (struct shmsched_pod){
				.cookie = pod->cookie, .template_id = t.id,
				.flags = j->pod_flags,
				.deadline_ns = (j->pod_flags & SHMSCHED_WAIT)
					? j->deadline_ns : 0};
			d->pod_job[n] = j;
			d->pod_index[n] = (uint32_t)p;
			n++;
		}
		if (conn != NULL && flush(d, conn, n) < 0)
			return;
	}
}

static unsigned poll_round(struct gw_dispatch *d)
{
	unsigned total = 0;
	uint64_t now = now_ns();
	bool saw_cancel = false;
	/* Every connection, also one with nothing in flight: EVICTED notices
	 * come to whichever connection of this identity the daemon finds
	 * first. An empty poll costs a system call at most once a
	 * millisecond per connection. */
	for (struct gw_conn *c = d->conns; c != NULL && d->up; c = c->next) {
		int n = shmsched_poll(c->c, d->results, BURST);
		if (n < 0) {
			daemon_lost(d, "the connection reported it gone on poll");
			break;
		}
		for (int k = 0; k < n; k++) {
			const struct shmsched_result *r = &d->results[k];
			if (r->status == SHMSCHED_EVICTED) {
				on_evicted(d, c, r);
				continue;
			}
			if (r->status == SHMSCHED_REPLACED) {
				on_replaced(d, c, r);
				continue;
			}
			struct gw_entry *e = map_find(d, r->cookie);
			if (e == NULL || e->state != E_IN_FLIGHT || e->conn != c) {
				stat_inc(&d->st.stray_answers);
				continue;
			}
			if (r->status == SHMSCHED_CANCELLED && e->cancel_sent) {
				/* Our own cancel: its client went away (its line
				 * is not written) or the gateway is stopping. */
				struct gw_job *j = e->job;
				c->in_flight--;
				j->in_flight--;
				answer_not_placed(j, e->pod, "shmsched-gateway: cancelled "
						  "while it waited for a node: the "
						  "gateway is stopping");
				owners_forget(d, e->cookie);
				map_del(d, e);
				stat_inc(&d->st.cancelled);
				continue;
			}
			if (r->status == SHMSCHED_CANCELLED) {
				/* The daemon is stopping (or the library says it
				 * went): the pod stays in flight for daemon_lost()
				 * below to put in LIMBO until the daemon is back. */
				saw_cancel = true;
				continue;
			}
			struct gw_job *j = e->job;
			c->in_flight--;
			j->in_flight--;
			uint64_t took = r->complete_ns > r->submit_ns
				? r->complete_ns - r->submit_ns : 0;
			enum gw_result res = GW_RESULTS;
			switch (r->status) {
			case SHMSCHED_PLACED:
				e->state = E_PLACED;
				e->placement_id = r->placement_id;
				e->node_id = r->node_id;
				e->devices = r->devices;
				e->job = NULL;
				e->conn = NULL;
				answer_placed(d, j, e->pod, c, r->node_id, &r->devices);
				res = GW_RESULT_SCHEDULED;
				break;
			case SHMSCHED_UNSCHEDULABLE:
				answer_not_placed(j, e->pod, r->message);
				owners_forget(d, e->cookie);
				map_del(d, e);
				res = GW_RESULT_UNSCHEDULABLE;
				break;
			default: /* REJECTED, or a status this gateway does not know */
				answer_not_placed(j, e->pod, r->message);
				owners_forget(d, e->cookie);
				map_del(d, e);
				res = GW_RESULT_ERROR;
				break;
			}
			if (res != GW_RESULTS) {
				stat_inc(&d->st.pods[res]);
				count_histogram(d->st.attempt_buckets[res], gw_attempt_bounds,
						GW_ATTEMPT_BUCKETS, &d->st.attempt_count[res],
						&d->st.attempt_sum_ns[res], took);
				count_histogram(d->st.fine_buckets, gw_fine_bounds,
						GW_FINE_BUCKETS, &d->st.fine_count,
						&d->st.fine_sum_ns, took);
				if (res == GW_RESULT_SCHEDULED)
					count_histogram(d->st.sli_buckets, gw_sli_bounds,
							GW_SLI_BUCKETS, &d->st.sli_count,
							&d->st.sli_sum_ns,
							now > j->received_ns
							? now - j->received_ns : 0);
			}
		}
		total += (unsigned)n;
		if (saw_cancel) {
			/* CANCELLED answers mean the daemon is leaving: treat
			 * it as gone now rather than submit more into it. */
			daemon_lost(d, "pods came back cancelled: the daemon is stopping or gone");
			break;
		}
	}
	return total;
}

/* Moves each job's new lines to its output, wakes its connection, and
 * retires the jobs that are complete. */
static void publish(struct gw_dispatch *d)
{
	struct gw_job **p = &d->jobs_head, *prev = NULL;
	uint64_t waiting = 0, in_flight = 0;
	size_t jobs = 0;
	while (*p != NULL) {
		struct gw_job *j = *p;
		bool complete = j->answered >= j->batch.n_pods && j->in_flight == 0;
		if (j->lines.len > 0 || complete) {
			pthread_mutex_lock(&j->lock);
			/* A reader that took everything lets the buffers swap
			 * (no copy): memory stays what the client has not read. */
			if (j->sent == j->out.len) {
				struct json_buf t = j->out;
				j->out = j->lines;
				j->lines = t;
				j->sent = 0;
			} else {
				json_buf_put(&j->out, j->lines.data, j->lines.len);
			}
			if (complete)
				j->done = true;
			bool wake = job_take_wake(j);
			pthread_mutex_unlock(&j->lock);
			job_wake_after(j, wake); /* GL1: the list's reference */
			json_buf_reset(&j->lines);
		}
		if (complete) {
			*p = j->next;
			if (d->jobs_tail == j)
				d->jobs_tail = prev;
			j->listed = false;
			if (j->charged > 0) {
				d->users[j->owner - 1].outstanding -= j->charged;
				j->charged = 0;
			}
			job_release_conns(j);
			gw_job_unref(j);
			continue;
		}
		waiting += j->n_retry + (j->batch.n_pods - j->next_pod);
		in_flight += j->in_flight;
		jobs++;
		prev = j;
		p = &j->next;
	}
	stat_set(&d->st.waiting, waiting);
	stat_set(&d->st.in_flight, in_flight);
	stat_set(&d->st.jobs, jobs);
	uint64_t cap = 0;
	for (struct gw_conn *c = d->conns; c != NULL; c = c->next)
		cap += c->capacity;
	stat_set(&d->st.capacity, cap);
	stat_set(&d->st.placements, d->map_n);
}

/* --- clients that leave while their pods wait ---------------------------- */

/* Whether the client of j has hung up (J4): only under the lock and while
 * the connection is suspended, when its socket is sure to be open. A
 * hang-up is POLLRDHUP (the peer closed or shut down its side), POLLHUP
 * or POLLERR: a client that half-closes after its request is taken as
 * gone (HTTP clients do not). */
static bool client_hung_up(struct gw_job *j)
{
	bool hung = false;
	pthread_mutex_lock(&j->lock);
	if (j->suspended && j->http_fd >= 0) {
		struct pollfd p = {.fd = j->http_fd, .events = POLLRDHUP};
		hung = poll(&p, 1, 0) == 1 &&
		       (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL));
	}
	pthread_mutex_unlock(&j->lock);
	return hung;
}

/* Looks, every WATCH_EVERY_NS, at the clients of jobs with pods in
 * flight: one that went away (seen here, or by the HTTP side) has its
 * pods cancelled, so none stays parked in the daemon's queue for nobody.
 * A pod the daemon places before it reads the cancel stays placed, as a
 * pod in flight of a client gone mid-stream does (GET, DELETE). */
static void watch_clients(struct gw_dispatch *d, uint64_t now)
{
	if (now < d->next_watch_ns)
		return;
	d->next_watch_ns = now + WATCH_EVERY_NS;
	for (struct gw_job *j = d->jobs_head; j != NULL; j = j->next) {
		if (j->gone)
			continue;
		bool left = __atomic_load_n(&j->abandoned, __ATOMIC_ACQUIRE);
		if (!left) {
			if (!client_hung_up(j))
				continue;
			/* J4: release, partner of completed()'s acquire load. */
			__atomic_store_n(&j->client_left, true, __ATOMIC_RELEASE);
		}
		log_msg(LOG_LEVEL_DEBUG, "gateway: a client went away with %zu pods "
			"in flight: cancelling them", j->in_flight);
		j->gone = true;
		j->cancelling = true;
	}
}

/* Sends shmsched_cancel() for every pod in flight of the jobs that ask
 * for it (a submit ring full: the rest next turn). */
static void send_cancels(struct gw_dispatch *d)
{
	for (struct gw_job *j = d->jobs_head; j != NULL && d->up; j = j->next) {
		if (!j->cancelling)
			continue;
		bool again = false;
		for (size_t p = 0; p < j->next_pod && j->in_flight > 0; p++) {
			struct gw_entry *e = map_find(d, j->batch.pods[p].cookie);
			if (e == NULL || e->job != j || e->state != E_IN_FLIGHT ||
			    e->cancel_sent)
				continue;
			int rc = shmsched_cancel(e->conn->c, e->cookie);
			if (rc == -EAGAIN) {
				again = true;
				break;
			}
			if (rc == -ECONNRESET) {
				daemon_lost(d, "the connection reported it gone on cancel");
				return;
			}
			/* -ENOENT: its answer is in the ring already. */
			e->cancel_sent = 1;
			if (rc == 0)
				stat_inc(&d->st.cancels);
		}
		j->cancelling = again;
	}
}

/* --- the loop ------------------------------------------------------------ */

static bool has_work(const struct gw_dispatch *d)
{
	for (const struct gw_job *j = d->jobs_head; j != NULL; j = j->next)
		if (j->in_flight > 0 || (d->up && (j->n_retry > 0 ||
						   j->next_pod < j->batch.n_pods)))
			return true;
	return false;
}

/* The instant `ms` (0..999) milliseconds from now on clock `clk`: the
 * absolute timeouts of the idle waits. */
static struct timespec clock_in_ms(clockid_t clk, long ms)
{
	struct timespec ts;
	clock_gettime(clk, &ts);
	ts.tv_nsec += ms * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	return ts;
}

/* AB8: the inbox's doorbell, the submitter's side, after the job went
 * on the inbox under inbox_lock: the mark taken back (an exchange), and a
 * FUTEX_WAKE when it was 1. No fence is needed, unlike the answer
 * doorbell's two processes: the dispatcher sets its mark (AB7) before it
 * takes inbox_lock to look. If its look came first, the mark's store
 * happens before this submitter's lock, so the exchange reads that 1 (or
 * a later 0 from another submitter, which woke it); else the look sees
 * the job. One locked instruction a request while the dispatcher is
 * awake. */
static void inbox_bell_ring(struct gw_dispatch *d)
{
	/* AB8: seq_cst, partner of AB7's store: one wake per sleep. */
	if (__atomic_exchange_n(&d->inbox_bell, 0, __ATOMIC_SEQ_CST) != 0)
		syscall(SYS_futex, &d->inbox_bell, FUTEX_WAKE_PRIVATE, 1, NULL,
			NULL, 0);
}

/* With pods in flight and no answer: sleeps until a connection with pods
 * in flight gets an answer (its answer doorbell, rung by the daemon's
 * worker), a job comes (the inbox's doorbell, rung by gw_dispatch_submit
 * and gw_dispatch_stop) or wait_ms pass, in one futex_waitv. Before this
 * the loop spun, yielded and napped 50 us on the cores the daemon's
 * worker and the HTTP threads need. Returns false when it cannot sleep so
 * (a daemon without answer doorbells, no futex_waitv): the caller polls
 * as before; true otherwise, slept or not (an answer or a job already
 * there, a daemon gone: the next turn sees it).
 *   AB7 the dispatcher: each connection's mark (shmsched_wait_prepare:
 *       AB4, AB5, its look at its ring), then the inbox's mark (seq_cst)
 *       and a look at the inbox under its lock (AB8 says why that lock
 *       orders them), then the wait on every word while it reads 1 (the
 *       kernel compares each);
 *   AB9 then every mark cleared (relaxed: a stale 1 costs one needless
 *       FUTEX_WAKE). */
static bool idle_on_bells(struct gw_dispatch *d, long wait_ms)
{
#ifdef __NR_futex_waitv
	if (d->no_waitv)
		return false;
	struct futex_waitv v[GW_MAX_CONNS + 1];
	struct gw_conn *marked[GW_MAX_CONNS];
	unsigned n = 0;
	int rc = 0;
	for (struct gw_conn *k = d->conns; k != NULL && rc == 0; k = k->next) {
		if (k->in_flight == 0)
			continue;
		uint32_t *word;
		if (n == GW_MAX_CONNS) {
			rc = -ENOSPC; /* cannot happen: GW_MAX_CONNS at most */
			break;
		}
		rc = shmsched_wait_prepare(k->c, &word);
		if (rc == 0) {
			marked[n] = k;
			v[n++] = (struct futex_waitv){
				.val = 1, .uaddr = (uintptr_t)word,
				.flags = FUTEX_32, /* shared: the daemon's too */
			};
		}
	}
	if (rc == 0 && n > 0) {
		/* AB7: seq_cst, partner of AB8's exchange; before the lock
		 * of the look. */
		__atomic_store_n(&d->inbox_bell, 1, __ATOMIC_SEQ_CST);
		pthread_mutex_lock(&d->inbox_lock);
		bool news = d->inbox_head != NULL || d->stopping;
		pthread_mutex_unlock(&d->inbox_lock);
		if (!news) {
			v[n] = (struct futex_waitv){
				.val = 1, .uaddr = (uintptr_t)&d->inbox_bell,
				.flags = FUTEX_32 | FUTEX_PRIVATE_FLAG,
			};
			/* futex_waitv's timeout is absolute. */
			struct timespec until = clock_in_ms(CLOCK_MONOTONIC, wait_ms);
			long r = syscall(__NR_futex_waitv, v, n + 1, 0, &until,
					 CLOCK_MONOTONIC);
			if (r < 0 && errno == ENOSYS)
				d->no_waitv = true;
			else
				stat_inc(&d->st.answer_sleeps);
		}
		/* AB9: relaxed, partner of AB8's exchange. */
		__atomic_store_n(&d->inbox_bell, 0, __ATOMIC_RELAXED);
	}
	for (unsigned i = 0; i < n; i++)
		shmsched_wait_done(marked[i]->c);
	if (rc == 1 || rc == -ECONNRESET)
		return true; /* an answer there, a daemon gone: the next turn */
	return rc == 0 && n > 0 && !d->no_waitv;
#else
	(void)d;
	(void)wait_ms;
	return false;
#endif
}

static void idle(struct gw_dispatch *d, unsigned answered)
{
	if (answered > 0) {
		d->idle_spins = 0;
		d->last_activity_ns = now_ns();
		return;
	}
	if (d->up && d->explain_head != NULL) {
		/* Templates to evaluate: the next turn does one. */
		d->idle_spins = 0;
		return;
	}
	long wait_ms = IDLE_WAIT_MS;
	if (has_work(d)) {
		/* Pods in flight: their answers come within microseconds on a
		 * busy daemon, milliseconds on an idle one (its workers nap). */
		if (++d->idle_spins < 64)
			return;
		if (d->idle_spins < 256) {
			sched_yield();
			return;
		}
		/* Then asleep until an answer or a job (AB7). A sleep right
		 * after the 64 turns, without the yields, cost the closed
		 * loop through nginx about a fifth of its requests a second
		 * (each answer a wake-up later; docs/perf/
		 * 2026-11-29-gateway-5.md); the 50 us naps the sleep
		 * replaces overslept on a busy machine. */
		uint64_t quiet = now_ns() - d->last_activity_ns;
		if (idle_on_bells(d, quiet < LONG_QUIET_NS ? 1 : 10))
			return;
		if (quiet < QUIET_NS) {
			struct timespec ts = {0, 50000};
			nanosleep(&ts, NULL);
			return;
		}
		/* Nothing for a while: the pods wait in the daemon's queue
		 * (?wait), perhaps for minutes. Nap on the inbox, so a new
		 * request still starts at once. */
		wait_ms = quiet < LONG_QUIET_NS ? 1 : 10;
	} else {
		d->idle_spins = 0;
	}
	pthread_mutex_lock(&d->inbox_lock);
	if (d->inbox_head == NULL && !d->stopping) {
		struct timespec ts = clock_in_ms(CLOCK_REALTIME, wait_ms);
		pthread_cond_timedwait(&d->inbox_cond, &d->inbox_lock, &ts);
	}
	pthread_mutex_unlock(&d->inbox_lock);
}

static void *loop(void *arg)
{
	struct gw_dispatch *d = arg;
	/* Its naps while pods are in flight are 50 us: without this the
	 * kernel's default 50 us of timer slack would double them. */
	prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
	uint64_t stop_deadline = 0;
	for (;;) {
		uint64_t now = now_ns();
		stat_set(&d->st.heartbeat_ns, now);
		pthread_mutex_lock(&d->inbox_lock);
		struct gw_job *in = d->inbox_head;
		d->inbox_head = d->inbox_tail = NULL;
		bool stopping = d->stopping;
		pthread_mutex_unlock(&d->inbox_lock);

		if (!d->up && !stopping)
			try_connect(d, now);
		for (struct gw_job *j = in, *next; j != NULL; j = next) {
			next = j->next;
			if (stopping) {
				job_refuse(j, 503, "ServiceUnavailable",
					   "shmsched-gateway is stopping");
				gw_job_unref(j);
				continue;
			}
			handle_new(d, j);
		}
		unsigned answered = 0;
		if (stopping && !d->stop_cancelled) {
			/* Pods waiting in the daemon's queue would hold the stop
			 * for its whole second and then be answered "may have
			 * been placed": cancel them, for an exact answer. */
			d->stop_cancelled = true;
			for (struct gw_job *j = d->jobs_head; j != NULL; j = j->next)
				j->cancelling = j->in_flight > 0;
			explain_refuse_all(d, "shmsched-gateway is stopping");
		}
		if (d->up) {
			watch_clients(d, now);
			send_cancels(d);
			explain_round(d);
			submit_round(d);
			answered = poll_round(d);
		} else if (!d->grace_expired &&
			   now_ns() - d->down_since_ns >
			   (uint64_t)d->cfg.daemon_grace_ms * 1000000u) {
			/* A fresh clock: the loss may have come after `now`,
			 * in this very turn. */
			char why[128];
			snprintf(why, sizeof(why), "the daemon has been away for over "
				 "%u ms", d->cfg.daemon_grace_ms);
			grace_expired(d, why);
		}
		if (stopping) {
			if (stop_deadline == 0)
				stop_deadline = now + UINT64_C(1000000000);
			if (!has_work(d) || now > stop_deadline) {
				/* What is left is answered as not placed: the
				 * pods in flight as possibly placed. */
				struct gw_entry *e;
				for (MAP_EACH(d, e))
					if (e->state == E_IN_FLIGHT) {
						e->state = E_LIMBO;
						if (e->job != NULL)
							e->job->in_flight--;
					}
				grace_expired(d, "shmsched-gateway stopped before "
					      "the daemon answered");
				publish(d);
				break;
			}
		}
		publish(d);
		conns_retire(d);
		owners_tidy(d);
		idle(d, answered);
	}
	pthread_mutex_lock(&d->inbox_lock);
	d->stopped = true;
	struct gw_job *in = d->inbox_head;
	d->inbox_head = d->inbox_tail = NULL;
	pthread_mutex_unlock(&d->inbox_lock);
	for (struct gw_job *j = in, *next; j != NULL; j = next) {
		next = j->next;
		job_refuse(j, 503, "ServiceUnavailable", "shmsched-gateway is stopping");
		gw_job_unref(j);
	}
	return NULL;
}

/* --- start, stop, submit ------------------------------------------------- */

void gw_dispatch_submit(struct gw_dispatch *d, struct gw_job *j)
{
	gw_job_ref(j); /* the inbox's */
	j->next = NULL;
	pthread_mutex_lock(&d->inbox_lock);
	if (d->stopped) {
		pthread_mutex_unlock(&d->inbox_lock);
		job_refuse(j, 503, "ServiceUnavailable", "shmsched-gateway is stopping");
		gw_job_unref(j);
		return;
	}
	if (d->inbox_tail != NULL)
		d->inbox_tail->next = j;
	else
		d->inbox_head = j;
	d->inbox_tail = j;
	pthread_mutex_unlock(&d->inbox_lock);
	/* GL2: signalled after the unlock. The dispatcher, woken, first takes
	 * inbox_lock: signalled under it, it found the lock held and slept
	 * on it again (a futex wait and wake and a context switch, about one
	 * request in two, `strace -f`). No wake is lost: the dispatcher looks
	 * at the inbox under the lock before it waits (idle()), and the job
	 * is there before the lock is released. Without a waiter the signal
	 * makes no system call. The dispatcher outlives every submitter
	 * (gw_dispatch_free() comes after the HTTP threads stop). */
	pthread_cond_signal(&d->inbox_cond);
	/* AB8: and a dispatcher asleep on the answer doorbells. */
	inbox_bell_ring(d);
}

const struct gw_dispatch_stats *gw_dispatch_stats(const struct gw_dispatch *d)
{
	return &d->st;
}

int gw_dispatch_start(const struct gateway_config *cfg, struct gw_dispatch **out,
		      char *err, size_t err_len)
{
	struct gw_dispatch *d = calloc(1, sizeof(*d));
	if (d == NULL) {
		snprintf(err, err_len, "out of memory");
		return -ENOMEM;
	}
	d->cfg = *cfg;
	d->socket_path = cfg->socket_path;
	d->producer_name = cfg->producer_name ? cfg->producer_name
					      : "shmsched-gateway";
	snprintf(d->region_name, sizeof(d->region_name), "%s",
		 cfg->region_name ? cfg->region_name : SHMSCHED_OBSERVE_DEFAULT_NAME);
	pthread_mutex_init(&d->inbox_lock, NULL);
	pthread_cond_init(&d->inbox_cond, NULL);
	pthread_rwlock_init(&d->obs_lock, NULL);
	d->tmpl_mask = 63;
	d->tmpl = calloc(d->tmpl_mask + 1, sizeof(*d->tmpl));
	if (d->tmpl == NULL || index_grow(d) < 0) {
		snprintf(err, err_len, "out of memory");
		free(d->tmpl);
		map_free(d);
		free(d);
		return -ENOMEM;
	}
	if (cfg->owners_file != NULL) {
		char warn[512], oerr[768];
		int orc = gw_owners_open(cfg->owners_file, NULL, &d->owners, warn,
					 sizeof(warn), oerr, sizeof(oerr));
		if (orc < 0) {
			snprintf(err, err_len, "--owners-file %s", oerr);
			free(d->tmpl);
			map_free(d);
			free(d);
			return orc;
		}
		if (warn[0] != '\0')
			log_msg(LOG_LEVEL_WARN, "gateway: --owners-file %s", warn);
		log_msg(LOG_LEVEL_INFO, "gateway: --owners-file %s: %zu owner(s) read; "
			"those of placements the daemon does not hold are dropped at "
			"the first listing", cfg->owners_file,
			gw_owners_count(d->owners));
	}
	snprintf(d->last_error, sizeof(d->last_error), "not connected yet");
	d->down_since_ns = now_ns();
	int rc = pthread_create(&d->thread, NULL, loop, d);
	if (rc != 0) {
		snprintf(err, err_len, "cannot start the dispatcher: %s", strerror(rc));
		gw_owners_close(d->owners);
		free(d->tmpl);
		map_free(d);
		free(d);
		return -rc;
	}
	d->thread_started = true;
	*out = d;
	return 0;
}

void gw_dispatch_stop(struct gw_dispatch *d)
{
	if (d == NULL)
		return;
	pthread_mutex_lock(&d->inbox_lock);
	d->stopping = true;
	pthread_cond_signal(&d->inbox_cond);
	pthread_mutex_unlock(&d->inbox_lock);
	/* AB8: a dispatcher asleep on the answer doorbells, too. */
	inbox_bell_ring(d);
	if (d->thread_started)
		pthread_join(d->thread, NULL);
	while (d->jobs_head != NULL) {
		struct gw_job *j = d->jobs_head;
		d->jobs_head = j->next;
		job_release_conns(j);
		gw_job_unref(j);
	}
	while (d->conns != NULL)
		conn_close(d, d->conns);
}

void gw_dispatch_free(struct gw_dispatch *d)
{
	if (d == NULL)
		return;
	for (size_t k = 0; k <= d->tmpl_mask; k++)
		if (d->tmpl[k] != NULL)
			tmpl_free(d->tmpl[k]);
	free(d->tmpl);
	map_free(d);
	free(d->users);
	free(d->str_set);
	gw_owners_close(d->owners);
	shmsched_observe_close(d->obs);
	pthread_rwlock_destroy(&d->obs_lock);
	pthread_cond_destroy(&d->inbox_cond);
	pthread_mutex_destroy(&d->inbox_lock);
	free(d);
}
