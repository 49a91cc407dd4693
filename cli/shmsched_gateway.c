/* shmsched-gateway: shmsched's HTTP front. Thin: it reads options, starts
 * the gateway (gateway/gateway.h), prints one ready line, and stops it on
 * SIGINT or SIGTERM. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/base.h"
#include "cli/service.h"
#include "gateway/gateway.h"
#include "shmsched/client.h"
#include "shmsched/version.h"

static void usage(FILE *to)
{
	fprintf(to,
		"usage: shmsched-gateway [--socket PATH] [--listen HOST:PORT|unix:PATH]\n"
		"                        (--token-file FILE | --tls-client-ca FILE |\n"
		"                         --allow-anonymous)\n"
		"                        [--tls-cert FILE --tls-key FILE]\n"
		"                        [--admin-listen HOST:PORT|unix:PATH]\n"
		"                        [--admin-uid UID]... [--admin-group GROUP]\n"
		"                        [--admin-socket PATH] [--policy FILE]\n"
		"                        [--owners-file PATH]\n"
		"                        [--name NAME | --no-observer] [--producer-name NAME]\n"
		"                        [--threads N] [--max-body BYTES]\n"
		"                        [--max-body-bytes-total BYTES]\n"
		"                        [--max-pods-per-request N]\n"
		"                        [--max-slots-per-client N] [--header-timeout S]\n"
		"                        [--max-string-bytes-per-client BYTES]\n"
		"                        [--max-connections-per-ip N]\n"
		"                        [--max-templates N] [--idle-timeout S]\n"
		"                        [--request-timeout S] [--max-connections N]\n"
		"                        [--daemon-grace MS] [--max-wait S]\n"
		"                        [--explain-max-pods N]\n"
		"                        [--log-format text|json]\n"
		"                        [--log-file PATH]\n"
		"\n"
		"Serves shmsched over HTTP/JSON: a producer of the daemon at --socket\n"
		"(libshmsched-client), that reads its nodes and counters from its state\n"
		"region (--name) and changes nodes through its admin socket.\n"
		"\n"
		"  POST   /v1/placements             a Pod, a List of Pods, or JSON Lines\n"
		"                                    of Pods; answers: JSON Lines, one per\n"
		"                                    pod, as `shmsched place` prints them\n"
		"  GET    /v1/placements/NS/NAME     where a pod is\n"
		"  DELETE /v1/placements/NS/NAME     release it\n"
		"  GET    /v1/nodes, /v1/nodes/NAME  allocatable, used, cordoned\n"
		"  GET    /healthz /readyz /livez /version /metrics\n"
		"  POST   /api/v1/namespaces/NS/pods/NAME/eviction\n"
		"                                    a policy/v1 Eviction: 201, 429 (a\n"
		"                                    PodDisruptionBudget), 500, as kube\n"
		"  admin listener only: POST /v1/nodes (a Node: add or update),\n"
		"  DELETE /v1/nodes/NAME, POST /v1/nodes/NAME/cordon and /uncordon,\n"
		"  POST /v1/nodes/NAME/drain (202; GET it for its progress),\n"
		"  PUT /v1/nodes/NAME/lease (renews the node's lease; body empty),\n"
		"  GET /v1/pools (the pool quarantines), POST /v1/pools/POOL/release\n"
		"  ({\"template\":\"NS/NAME\"} optional: lifts them; 200 with how many),\n"
		"  POST /v1/placements/ID/failure ({\"reason\":..,\"exitCode\":N}: a\n"
		"  placed pod failed, for the pool quarantine; 202 with the verdict),\n"
		"  POST /v1/approvals/webhooks ({\"name\":..,\"url\":\"http://127.0.0.1:\n"
		"  PORT/..\",\"selector\":..,\"deadlineSeconds\":N,\"failurePolicy\":\n"
		"  \"Open\"|\"Closed\"}: a manager that approves a drain's evictions,\n"
		"  called on loopback only; 201), GET it (and /NAME), DELETE .../NAME\n"
		"\n"
		"  --socket PATH          the daemon's socket (default: $SHMSCHED_SOCKET,\n"
		"                         else $XDG_RUNTIME_DIR/shmsched.sock, else\n"
		"                         " SHMSCHED_DEFAULT_SOCKET ")\n"
		"  --listen ADDR          the HTTP address: HOST:PORT (default\n"
		"                         127.0.0.1:8080; port 0: any free port, printed\n"
		"                         when ready), or unix:/PATH, a Unix socket for\n"
		"                         nginx on this host (cheaper than loopback TCP;\n"
		"                         requests authenticated as on a port)\n"
		"  --token-file FILE      bearer tokens, kube-apiserver's static token file\n"
		"                         format: CSV lines token,user,uid[,\"g1,g2\"]; a\n"
		"                         request needs \"Authorization: Bearer TOKEN\" (else\n"
		"                         401); each user sees and releases only its own\n"
		"                         pods. Refused if others may read it (chmod 600)\n"
		"  --allow-anonymous      serve requests without credentials as\n"
		"                         \"system:anonymous\": any local user may then use\n"
		"                         every anonymous pod. Without --token-file or this,\n"
		"                         the gateway does not start\n"
		"  --tls-cert FILE, --tls-key FILE  PEM files: the main listener speaks\n"
		"                         HTTPS (GnuTLS)\n"
		"  --tls-client-ca FILE   PEM: a client certificate it signed authenticates\n"
		"                         (user: the subject's CN, groups: its O values);\n"
		"                         needs --tls-cert\n"
		"  --admin-listen ADDR    the admin routes (default: none): unix:/PATH, a\n"
		"                         Unix socket whose peers are let in by uid (the\n"
		"                         gateway's own and --admin-uid), or HOST:PORT,\n"
		"                         for tokens of --admin-group only (needs\n"
		"                         --token-file)\n"
		"  --admin-uid UID        another uid let in on a unix: admin listener\n"
		"                         (repeatable, at most 16)\n"
		"  --admin-group GROUP    tokens of this group use the admin routes over\n"
		"                         TCP and see every user's pods (default\n"
		"                         system:masters)\n"
		"  --admin-socket PATH    the daemon's admin socket (default: the socket's\n"
		"                         path + \".admin\")\n"
		"  --policy FILE          the namespaces and PriorityClasses each user may\n"
		"                         place pods with (shmschedd's policy format, its\n"
		"                         \"users\" rules); else 403. Default: none (any\n"
		"                         namespace, no system- class but for\n"
		"                         --admin-group). A bad file: the gateway does\n"
		"                         not start\n"
		"  --owners-file PATH     keep which user placed each pod in PATH (created\n"
		"                         0600; appended and synced before each pod is\n"
		"                         submitted), so after a restart each user\n"
		"                         reaches its own pods again. Refused: a symlink,\n"
		"                         not a regular file, another uid's, or a mode\n"
		"                         other than 0600, or a bad line (PATH:LINE).\n"
		"                         Default: none (owners in memory only: after a\n"
		"                         restart only --admin-group reaches older pods)\n"
		"  --name NAME            the daemon's state region, for /v1/nodes and its\n"
		"                         counters in /metrics (default shmsched)\n"
		"  --no-observer          do not read the state region\n"
		"  --producer-name NAME   the identity placements belong to (default\n"
		"                         shmsched-gateway)\n"
		"  --threads N            HTTP threads (default 2)\n"
		"  --max-body BYTES       a request body, at most (default 33554432)\n"
		"  --max-pods-per-request N  pods in one request, more: 429 (default 1024;\n"
		"                         --max-pods is the same)\n"
		"  --max-slots-per-client N  pods one user may have in requests not yet\n"
		"                         answered, waiting ones too; more: 429 (default\n"
		"                         0: half the daemon slots of the connection)\n"
		"  --max-string-bytes-per-client BYTES  strings (label keys and values,\n"
		"                         names) one user's new pod specs may add to the\n"
		"                         daemon's string table, kept until the daemon\n"
		"                         restarts; more: 429 (default 1048576; 0: no cap)\n"
		"  --max-body-bytes-total BYTES  request bodies buffered at once, every\n"
		"                         connection together; more: 429 (default\n"
		"                         268435456)\n"
		"  --header-timeout S     a request's headers must be in within S of the\n"
		"                         connection's start or its last answer, else it\n"
		"                         is closed (default 10)\n"
		"  --max-connections-per-ip N  connections from one address at once\n"
		"                         (default 256; 0: no limit; nginx's keep-alive\n"
		"                         pool comes from one address)\n"
		"  --max-templates N      templates per daemon connection before a new one\n"
		"                         takes over and the old one's are evicted\n"
		"                         (default 4096, the daemon's limit)\n"
		"  --idle-timeout S       close a connection idle this long (default 60)\n"
		"  --request-timeout S    a request body must arrive within S (default 60)\n"
		"  --max-connections N    HTTP connections at once (default 1024)\n"
		"  --daemon-grace MS      pods wait this long for a daemon that went away\n"
		"                         (default 10000)\n"
		"  --max-wait S           the most POST /v1/placements?wait=S may ask\n"
		"                         (default 300; 0: ?wait=0 only)\n"
		"  --explain-max-pods N   the most pods POST /v1/placements?explain=true\n"
		"                         may hold (default 64; 0: ?explain=true refused)\n"
		"  --log-format FORMAT    text (the default) or json: one object a line;\n"
		"                         every line has its UTC time\n"
		"  --log-file PATH        log there instead of stderr; SIGHUP reopens it\n"
		"  --version, --help\n"
		"\n"
		"Errors are Kubernetes Status objects. POST /v1/placements?wait=SECONDS\n"
		"lets unschedulable pods wait for a node; ?explain=true adds to each line\n"
		"its pod's filter reasons and scores for every node (\"profile\",\n"
		"\"filtered\", \"scores\"), evaluated just before its pods are placed.\n");
}

static int parse_u64(const char *opt, const char *s, uint64_t min, uint64_t max,
		     uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || s[0] == '-' || v < min ||
	    v > max) {
		fprintf(stderr, "shmsched-gateway: %s: \"%s\": expected a whole number "
			"in %" PRIu64 "..%" PRIu64 "\n", opt, s, min, max);
		return -1;
	}
	*out = v;
	return 0;
}

int main(int argc, char **argv)
{
	enum { O_SOCKET = 256, O_LISTEN, O_ADMIN_LISTEN, O_ADMIN_SOCKET, O_NAME,
	       O_NO_OBSERVER, O_PRODUCER, O_THREADS, O_MAX_BODY, O_MAX_PODS,
	       O_MAX_TEMPLATES, O_IDLE, O_REQUEST, O_MAX_CONN, O_GRACE, O_MAX_WAIT, O_VERSION,
	       O_EXPLAIN_MAX_PODS, O_TOKEN_FILE, O_ANONYMOUS, O_ADMIN_UID,
	       O_ADMIN_GROUP, O_TLS_CERT, O_TLS_KEY, O_TLS_CA, O_MAX_SLOTS, O_MAX_STRINGS, O_BODY_TOTAL, O_HEADER_TIMEOUT, O_PER_IP,
	       O_LOG_FORMAT, O_LOG_FILE, O_POLICY, O_OWNERS_FILE };
	static const struct option longopts[] = {
		{"socket", required_argument, NULL, O_SOCKET},
		{"listen", required_argument, NULL, O_LISTEN},
		{"admin-listen", required_argument, NULL, O_ADMIN_LISTEN},
		{"admin-socket", required_argument, NULL, O_ADMIN_SOCKET},
		{"name", required_argument, NULL, O_NAME},
		{"no-observer", no_argument, NULL, O_NO_OBSERVER},
		{"producer-name", required_argument, NULL, O_PRODUCER},
		{"threads", required_argument, NULL, O_THREADS},
		{"max-body", required_argument, NULL, O_MAX_BODY},
		{"max-pods", required_argument, NULL, O_MAX_PODS},
		{"max-pods-per-request", required_argument, NULL, O_MAX_PODS},
		{"token-file", required_argument, NULL, O_TOKEN_FILE},
		{"allow-anonymous", no_argument, NULL, O_ANONYMOUS},
		{"tls-cert", required_argument, NULL, O_TLS_CERT},
		{"tls-key", required_argument, NULL, O_TLS_KEY},
		{"tls-client-ca", required_argument, NULL, O_TLS_CA},
		{"admin-uid", required_argument, NULL, O_ADMIN_UID},
		{"admin-group", required_argument, NULL, O_ADMIN_GROUP},
		{"policy", required_argument, NULL, O_POLICY},
		{"owners-file", required_argument, NULL, O_OWNERS_FILE},
		{"max-slots-per-client", required_argument, NULL, O_MAX_SLOTS},
		{"max-string-bytes-per-client", required_argument, NULL, O_MAX_STRINGS},
		{"max-body-bytes-total", required_argument, NULL, O_BODY_TOTAL},
		{"header-timeout", required_argument, NULL, O_HEADER_TIMEOUT},
		{"max-connections-per-ip", required_argument, NULL, O_PER_IP},
		{"max-templates", required_argument, NULL, O_MAX_TEMPLATES},
		{"idle-timeout", required_argument, NULL, O_IDLE},
		{"request-timeout", required_argument, NULL, O_REQUEST},
		{"max-connections", required_argument, NULL, O_MAX_CONN},
		{"daemon-grace", required_argument, NULL, O_GRACE},
		{"max-wait", required_argument, NULL, O_MAX_WAIT},
		{"explain-max-pods", required_argument, NULL, O_EXPLAIN_MAX_PODS},
		{"log-format", required_argument, NULL, O_LOG_FORMAT},
		{"log-file", required_argument, NULL, O_LOG_FILE},
		{"version", no_argument, NULL, O_VERSION},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct gateway_config cfg;
	gateway_config_default(&cfg);
	enum log_format log_format = LOG_FORMAT_TEXT;
	const char *log_file = NULL;
	uint64_t v;
	int c;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case O_SOCKET:
			cfg.socket_path = optarg;
			break;
		case O_LISTEN:
			cfg.listen = optarg;
			break;
		case O_ADMIN_LISTEN:
			cfg.admin_listen = optarg;
			break;
		case O_ADMIN_SOCKET:
			cfg.admin_socket_path = optarg;
			break;
		case O_NAME:
			cfg.region_name = optarg;
			break;
		case O_NO_OBSERVER:
			cfg.region_name = "";
			break;
		case O_PRODUCER:
			cfg.producer_name = optarg;
			break;
		case O_THREADS:
			if (parse_u64("--threads", optarg, 1, 64, &v) < 0)
				return 2;
			cfg.threads = (unsigned)v;
			break;
		case O_MAX_BODY:
			if (parse_u64("--max-body", optarg, 1024, UINT64_C(1) << 31, &v) < 0)
				return 2;
			cfg.max_body_bytes = (size_t)v;
			break;
		case O_MAX_PODS:
			if (parse_u64("--max-pods-per-request", optarg, 1, 10000000, &v) < 0)
				return 2;
			cfg.max_pods = (size_t)v;
			break;
		case O_TOKEN_FILE:
			cfg.token_file = optarg;
			break;
		case O_ANONYMOUS:
			cfg.allow_anonymous = true;
			break;
		case O_POLICY:
			cfg.policy_file = optarg;
			break;
		case O_OWNERS_FILE:
			cfg.owners_file = optarg;
			break;
		case O_TLS_CERT:
			cfg.tls_cert = optarg;
			break;
		case O_TLS_KEY:
			cfg.tls_key = optarg;
			break;
		case O_TLS_CA:
			cfg.tls_client_ca = optarg;
			break;
		case O_ADMIN_UID:
			if (parse_u64("--admin-uid", optarg, 0, UINT32_MAX - 1, &v) < 0)
				return 2;
			if (cfg.n_admin_uids == sizeof(cfg.admin_uids) /
					       sizeof(cfg.admin_uids[0])) {
				fprintf(stderr, "shmsched-gateway: --admin-uid: at most "
					"16\n");
				return 2;
			}
			cfg.admin_uids[cfg.n_admin_uids++] = (unsigned)v;
			break;
		case O_ADMIN_GROUP:
			cfg.admin_group = optarg;
			break;
		case O_MAX_SLOTS:
			if (parse_u64("--max-slots-per-client", optarg, 0, 100000000, &v) < 0)
				return 2;
			cfg.max_slots_per_client = (size_t)v;
			break;
		case O_MAX_STRINGS:
			if (parse_u64("--max-string-bytes-per-client", optarg, 0,
				      UINT64_C(1) << 40, &v) < 0)
				return 2;
			cfg.max_string_bytes_per_client = (size_t)v;
			break;
		case O_BODY_TOTAL:
			if (parse_u64("--max-body-bytes-total", optarg, 1024,
				      UINT64_C(1) << 40, &v) < 0)
				return 2;
			cfg.max_body_bytes_total = (size_t)v;
			break;
		case O_HEADER_TIMEOUT:
			if (parse_u64("--header-timeout", optarg, 1, 3600, &v) < 0)
				return 2;
			cfg.header_timeout_s = (unsigned)v;
			break;
		case O_PER_IP:
			if (parse_u64("--max-connections-per-ip", optarg, 0, 65536, &v) < 0)
				return 2;
			cfg.max_connections_per_ip = (unsigned)v;
			break;
		case O_MAX_TEMPLATES:
			if (parse_u64("--max-templates", optarg, 1, 4096, &v) < 0)
				return 2;
			cfg.max_templates = (unsigned)v;
			break;
		case O_IDLE:
			if (parse_u64("--idle-timeout", optarg, 1, 86400, &v) < 0)
				return 2;
			cfg.idle_timeout_s = (unsigned)v;
			break;
		case O_REQUEST:
			if (parse_u64("--request-timeout", optarg, 1, 86400, &v) < 0)
				return 2;
			cfg.request_timeout_s = (unsigned)v;
			break;
		case O_MAX_CONN:
			if (parse_u64("--max-connections", optarg, 1, 65536, &v) < 0)
				return 2;
			cfg.max_connections = (unsigned)v;
			break;
		case O_GRACE:
			if (parse_u64("--daemon-grace", optarg, 0, 3600000, &v) < 0)
				return 2;
			cfg.daemon_grace_ms = (unsigned)v;
			break;
		case O_MAX_WAIT:
			/* A day: a deadline far past any request a proxy keeps. */
			if (parse_u64("--max-wait", optarg, 0, 86400, &v) < 0)
				return 2;
			cfg.max_wait_s = (unsigned)v;
			break;
		case O_EXPLAIN_MAX_PODS:
			if (parse_u64("--explain-max-pods", optarg, 0, 1000000, &v) < 0)
				return 2;
			cfg.explain_max_pods = (size_t)v;
			break;
		case O_LOG_FORMAT:
			if (log_format_parse(optarg, &log_format) < 0) {
				fprintf(stderr, "shmsched-gateway: --log-format: \"%s\": "
					"expected text or json\n", optarg);
				return 2;
			}
			break;
		case O_LOG_FILE:
			log_file = optarg;
			break;
		case O_VERSION:
			printf("shmsched-gateway %s\n", SHMSCHED_VERSION_STRING);
			return 0;
		case 'h':
			usage(stdout);
			return 0;
		default: /* getopt_long has said what is wrong */
			fprintf(stderr, "Try 'shmsched-gateway --help' for more "
				"information.\n");
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "shmsched-gateway: unexpected argument \"%s\"\n",
			argv[optind]);
		fprintf(stderr, "Try 'shmsched-gateway --help' for more "
			"information.\n");
		return 2;
	}

	int lrc = log_open("shmsched-gateway", log_format, log_file);
	if (lrc < 0) {
		fprintf(stderr, "shmsched-gateway: --log-file: %s: %s\n", log_file,
			strerror(-lrc));
		return 1;
	}

	/* Before any thread starts: all of them inherit the mask. */
	sigset_t stop;
	cli_service_signals(&stop);

	char err[1024];
	struct gateway *g;
	if (gateway_start(&cfg, &g, err, sizeof(err)) < 0) {
		fprintf(stderr, "shmsched-gateway: %s\n", err);
		return 1;
	}
	if (strncmp(cfg.listen, "unix:", 5) == 0)
		printf("shmsched-gateway: ready: listening on socket %s", cfg.listen + 5);
	else
		printf("shmsched-gateway: ready: listening on port %u", gateway_port(g));
	if (cfg.admin_listen != NULL && strncmp(cfg.admin_listen, "unix:", 5) == 0)
		printf(", admin socket %s", cfg.admin_listen + 5);
	else if (cfg.admin_listen != NULL)
		printf(", admin port %u", gateway_admin_port(g));
	printf(", daemon %s, pid %d\n", gateway_ready(g) ? "connected" : "connecting",
	       (int)getpid());
	fflush(stdout);
	/* Ready once listening: /readyz tells whether the daemon is there. */
	cli_notify("READY=1\nSTATUS=listening");

	cli_service_wait(&stop, log_file);
	gateway_stop(g);
	return 0;
}
