/* gateway/: shmsched's HTTP front, the one public header for the rest of
 * the tree. `shmsched-gateway` (cli/shmsched_gateway.c) runs one: an HTTP
 * server (libmicrohttpd) whose routes turn JSON into pods for the daemon
 * and answers back into JSON. It is a producer of the daemon like any
 * other (libshmsched-client, include/shmsched/client.h), reads nodes and
 * counters through the observer (include/shmsched/observe.h), and changes
 * nodes through the admin socket; it knows nothing of the engine. A bug in
 * HTTP parsing can take down this process, never the daemon.
 *
 * The API (docs/reference/http-api.md):
 *   POST   /v1/placements[?wait=SECONDS][&explain=true]
 *                                         Pods -> JSON Lines of answers
 *   GET    /v1/placements/{ns}/{name}     where a pod is
 *   DELETE /v1/placements/{ns}/{name}     release it
 *   GET    /v1/nodes, /v1/nodes/{name}    allocatable, used, cordoned
 *   GET    /healthz /readyz /livez /version /metrics
 *   POST   /extender/{filter,prioritize,bind,preempt}
 *   admin listener: POST /v1/nodes, DELETE /v1/nodes/{name},
 *                   POST /v1/nodes/{name}/cordon, .../uncordon
 *
 * Threads: gateway_start() and gateway_stop() from one thread; the
 * gateway runs its own (HTTP threads, one dispatcher).
 */
#ifndef SHMSCHED_GATEWAY_GATEWAY_H
#define SHMSCHED_GATEWAY_GATEWAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gateway/auth.h"
#include "gateway/decode.h"
#include "gateway/evict_decode.h"
#include "gateway/failure_decode.h"
#include "gateway/json_scan.h"
#include "gateway/owners_log.h"
#include "gateway/pool_decode.h"
#include "gateway/webhook_decode.h"

struct gateway_config {
	const char *socket_path;       /* the daemon's socket; NULL: as
					* shmsched_connect() finds it */
	const char *admin_socket_path; /* NULL: socket_path + ".admin" */
	const char *listen;            /* "HOST:PORT" (port 0: any free one) */
	const char *admin_listen;      /* NULL: no admin listener;
					* "unix:/PATH": a Unix socket whose
					* peers are let in by their uid
					* (SO_PEERCRED: the gateway's own and
					* admin_uids); "HOST:PORT": TCP, for
					* bearer tokens of admin_group only */
	/* Authentication (gateway/auth.h). At least one of token_file and
	 * allow_anonymous, or gateway_start() refuses. */
	const char *token_file;        /* kube's static token file, or NULL */
	bool allow_anonymous;          /* no credentials needed: every client
					* is "system:anonymous" */
	const char *tls_cert;          /* PEM files: the main listener speaks */
	const char *tls_key;           /* HTTPS (both, or neither) */
	const char *tls_client_ca;     /* PEM: client certificates signed by it
					* authenticate (user: the subject's CN,
					* groups: its O values, as kube reads
					* them); needs tls_cert */
	const char *admin_group;       /* NULL: "system:masters" */
	const char *policy_file;       /* policy/policy.h: the namespaces and
					* PriorityClasses each user ("users"
					* rules) may place pods with; NULL:
					* policy_admit_user()'s default (no
					* system- class but for admin_group) */
	unsigned admin_uids[16];       /* peers of a unix: admin listener let
					* in beside the gateway's own uid */
	unsigned n_admin_uids;
	/* Budgets: each refusal is 429 naming the budget and the user. */
	size_t max_slots_per_client;   /* pods one user may have in requests
					* not yet answered (waiting ones too);
					* 0: half the daemon slots of the
					* gateway's connection */
	size_t max_string_bytes_per_client; /* distinct strings the specs a
					* user brings first may add to the
					* daemon's string table, each costed
					* bytes + 1 + 64, for as long as the
					* daemon may hold them (until it is
					* lost and back); 0: no cap (issue 41) */
	size_t max_body_bytes_total;   /* request bodies buffered at once, all
					* connections together */
	unsigned header_timeout_s;     /* a request's headers must be complete
					* within this of the connection's start
					* (or of its last answer) */
	unsigned max_connections_per_ip; /* connections from one address at
					  * once (0: no limit) */
	const char *region_name;       /* the daemon's --name, for the
					* observer; NULL: "shmsched"; "":
					* none (no /v1/nodes, no daemon
					* counters in /metrics) */
	const char *producer_name;     /* the identity placements belong to;
					* NULL: "shmsched-gateway" */
	const char *owners_file;       /* the owners log (gateway/owners_log.h):
					* who placed each pod, kept across a
					* gateway restart; NULL: in memory only
					* (after a restart, only admin_group
					* reaches the pods found placed) */
	size_t max_body_bytes;         /* a request body, at most */
	size_t max_pods;               /* pods in one request
					* (--max-pods-per-request; more: 429) */
	unsigned max_templates;        /* templates on one connection before
					* a new one takes over and the old one
					* drains (its templates evicted) */
	unsigned threads;              /* HTTP threads */
	unsigned idle_timeout_s;       /* an idle connection is closed */
	unsigned request_timeout_s;    /* a body must arrive within this */
	unsigned max_connections;      /* HTTP connections at once */
	unsigned daemon_grace_ms;      /* pods wait this long for an absent
					* daemon to come back */
	unsigned extender_cache;       /* pods the extender remembers from
					* filter to bind */
	unsigned max_wait_s;           /* ?wait=SECONDS, at most */
	size_t explain_max_pods;       /* ?explain=true: pods in one request,
					* at most (0: ?explain=true refused) */
	size_t explain_max_bytes;      /* ?explain=true: bytes of explanations
					* in one answer, at most */
};

/* The defaults: 32 MiB bodies and 256 MiB of them at once, 1,024 pods a
 * request, half the daemon slots per user, 1 MiB of new strings per user
 * (GW_STRING_BYTES_DEFAULT), 4,096 templates a connection,
 * 2 HTTP threads, 60 s idle and request time-outs, 10 s for the headers,
 * 1,024 connections and 256 from one address, no authentication (the
 * caller sets token_file or allow_anonymous), 10 s of grace, 65,536
 * extender pods, ?wait up to 300 s
 * (GW_WAIT_MAX_DEFAULT_S), ?explain=true for up to 64 pods
 * (GW_EXPLAIN_MAX_PODS_DEFAULT) and 32 MiB of explanations
 * (GW_EXPLAIN_MAX_BYTES_DEFAULT). */
void gateway_config_default(struct gateway_config *cfg);

/* max_string_bytes_per_client's default: a twelfth of the daemon's
 * default budget of strings per uid (12 MiB), so a dozen users fill it
 * only together (issue 41). */
#define GW_STRING_BYTES_DEFAULT ((size_t)1 << 20)

struct gateway;

/* Starts the listeners and the dispatcher, which connects to the daemon
 * (and keeps trying, so the gateway may start first: /readyz says when it
 * is connected). Returns 0 with the gateway in *out, or a negative errno
 * with a message in err: -EINVAL a bad address or option, -EADDRINUSE,
 * -ENOMEM, or what the HTTP library or the system refused. */
int gateway_start(const struct gateway_config *cfg, struct gateway **out,
		  char *err, size_t err_len);

/* The port the main (or admin) listener is bound to: what port 0 became. */
unsigned gateway_port(const struct gateway *g);
unsigned gateway_admin_port(const struct gateway *g);

/* Whether the daemon is connected (what /readyz reports). */
bool gateway_ready(const struct gateway *g);

/* Stops listening, answers what is in flight (cancelling what the daemon
 * has not answered within a second), closes the daemon connections and
 * frees g. NULL: no-op. */
void gateway_stop(struct gateway *g);

#endif
