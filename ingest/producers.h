/* The daemon's producers: what each connected producer has (its region,
 * its templates) and the control requests that change it
 * (ingest/control_ops.h), for the control server's callbacks.
 *
 * Threads:
 * - the control servers' threads (the producer socket's and the admin
 *   socket's) run the callbacks here, one at a time (a mutex inside): the
 *   one writer of the producer table, the identities, the templates, the
 *   intern table, the resource names, the cluster's snapshots (node
 *   events) and the freeing of placements;
 * - worker threads (liburcu QSBR readers) read the table with
 *   producers_get(), between two quiescent states, and each producer's
 *   templates below producers_templates().
 * A producer leaves the table when its connection ends, however it ends;
 * its region is unmapped only after a grace period, when no worker can
 * still be reading it.
 */
#ifndef SHMSCHED_INGEST_PRODUCERS_H
#define SHMSCHED_INGEST_PRODUCERS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "shm/shm.h"
#include "ingest/resync.h"
#include "workers/workers.h"

struct control_server;

#define PRODUCERS_MAX 256
/* Producer identities (uid, name) the daemon keeps, and per uid: bounded,
 * so that made-up names cannot grow the table or lock others out. */
#define IDENTITIES_MAX STATE_IDENTITIES
#define IDENTITIES_PER_UID 64

/* Who is at the other end of a control connection, by the socket it came
 * through (DESIGN.md, "Processes and trust"). */
enum producer_role {
	ROLE_PRODUCER = 1, /* templates, pods, its own releases, node names */
	ROLE_ADMIN = 2,    /* all of that, plus node events and resource names */
};
#define PRODUCER_TEMPLATES_MAX 4096

struct producer {
	uint32_t id;   /* its index in the table */
	uint8_t role;  /* enum producer_role: the socket it registered through */
	uint32_t owner; /* its identity (uid, name): owner of its placements */
	uint64_t conn; /* the control connection that owns it (unique per role) */
	struct control_server *server; /* that connection's server */
	struct producer_region region;
	/* The daemon's ends of the region's rings: geometry and the daemon's
	 * own indices kept here, never read back from the region (shm/ring.h,
	 * struct ring_guard). Used by the one worker that serves this
	 * producer (and by the drain once the workers have stopped). */
	struct ring_guard submit;
	struct ring_guard completion;
	uint32_t faulted; /* __atomic: 1 once producers_fault() ran */
	/* Fair share (daemon/serve.c): the worker time this producer may
	 * still use, and what its pods have cost lately. Its worker's alone. */
	int64_t deficit_ns;
	uint64_t cost_ns;
	struct pod_spec *templates; /* [PRODUCER_TEMPLATES_MAX] */
	/* Each template's static results, read when it was registered
	 * (engine_static_compile; NULL when they could not be), published
	 * with it. */
	struct class_static **templates_static; /* [PRODUCER_TEMPLATES_MAX] */
	uint32_t n_templates;       /* release store by the writer; see producers_templates() */
	/* Templates its worker's engine was given to compile ahead of their
	 * pods (daemon/serve.c, engine_prepare). Its worker's alone. */
	uint32_t prepared;
};

struct producers;

/* Creates an empty table for `c`, with `slots` slots per producer region.
 * `strings` and `res` are the ones `ctx` reads: this side writes them
 * (templates intern their strings and may name new resources). Releases
 * free records of `placements` (the workers fill them). Identities live
 * in `identities` (IDENTITIES_MAX entries, the state region's: a restarted
 * daemon keeps them). Returns NULL with errno. */
struct producers *producers_create(struct cluster *c, struct intern *strings,
				   struct res_names *res,
				   const struct plugin_ctx *ctx, uint32_t slots,
				   struct placements *placements,
				   struct state_identity *identities);

/* What the control thread tells of the changes it makes, for the durable
 * store; each is called after the change, on the control thread, under
 * the producers' lock. Any may be NULL. */
struct producers_persist {
	void (*node_changed)(void *arg, const struct node_event *ev);
	void (*identity_added)(void *arg, uint32_t owner);
	/* release, resync: called just before the record is freed, so that
	 * its delete reaches the store before any later placement that
	 * reuses the record (same index) can */
	void (*placement_freed)(void *arg, uint64_t id);
	void (*placement_added)(void *arg, uint64_t id);  /* resync */
	void *arg;
};

/* The state region's meta, whose resync counters OP_RESYNC moves, and
 * what to tell of changes (NULL: nothing). Before the control sockets
 * start. */
void producers_set_state(struct producers *p, struct state_meta *meta,
			 const struct producers_persist *persist);

/* The profiles a template's spec.schedulerName chooses among (the
 * daemon's configuration, which outlives `p`); NULL, the default: one
 * profile, default-scheduler. A template for a scheduler no profile has is
 * refused. Before the control sockets start. */
void producers_set_profiles(struct producers *p, const struct sched_config *cfg);

/* Frees what is left. No worker may be running; the control server must
 * have stopped (its on_disconnect calls freed the producers). */
void producers_destroy(struct producers *p);

/* The control servers' callback argument for one role: one server per
 * role (the producer socket, the admin socket), each with its own. The
 * pointer lives as long as `p`. `admin_socket` (may be NULL) is named in
 * the refusal a producer gets for an admin request. */
void *producers_endpoint(struct producers *p, enum producer_role role);
void producers_set_admin_socket(struct producers *p, const char *admin_socket);

/* The control server's callbacks (arg: producers_endpoint()). */
int producers_on_connect(void *arg, uint64_t conn, const struct ucred *peer,
			 char *reason, size_t reason_len);
void producers_on_request(void *arg, struct control_server *s, uint64_t conn,
			  uint32_t request_id, const void *payload, uint32_t len,
			  int fd);
void producers_on_disconnect(void *arg, uint64_t conn);

/* New producers are refused from now on (shutdown). Any thread. */
void producers_stop_accepting(struct producers *p);

/* Worker side: the table indices that may hold a producer are below this
 * (it only grows; a producer registered a moment ago may lie past what a
 * worker read, for one poll). */
uint32_t producers_bound(const struct producers *p);

/* Worker side: the producer at table index `i` (< PRODUCERS_MAX), or NULL.
 * Valid until the caller's next quiescent state. */
struct producer *producers_get(struct producers *p, uint32_t i);

/* Worker side: templates of `pr` that are fully written. */
uint32_t producers_templates(const struct producer *pr);

/* Producers registered so far, those gone, and those disconnected for
 * breaking their region (producers_fault), for logs and the bench. */
void producers_counts(const struct producers *p, uint64_t *registered,
		      uint64_t *gone, uint64_t *faulted);

/* Worker side: `pr` broke its side of the region (an impossible ring
 * index): stop serving it and disconnect it, logging `why`. The first call
 * per producer acts; later ones do nothing. Not on the path of any other
 * producer: only the faulty one's worker calls it. Any thread, between two
 * of its quiescent states. */
void producers_fault(struct producers *p, struct producer *pr, const char *why);

/* Worker side: whether producers_fault() ran for `pr` (relaxed). */
static inline bool producers_faulted(const struct producer *pr)
{
	return __atomic_load_n(&pr->faulted, __ATOMIC_RELAXED) != 0;
}

#endif
