/* shmsched approve: OP_APPROVAL's manager for tests, demos and scripts.
 * It keeps one admin connection (its registration lives as long as the
 * connection), registers, then polls for asks every --interval and
 * answers each: --grant, --deny, or --exec CMD's verdict (exit 0: grant;
 * any other: deny), CMD run by /bin/sh with the ask in its environment
 * (SHMSCHED_POD, SHMSCHED_NODE, SHMSCHED_REASON, SHMSCHED_PLACEMENT).
 * Each answer is one line on stdout. */
#include "cli/approve.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/node.h"
#include "ingest/ingest.h"
#include "shm/shm.h"

#define APPROVE_TIMEOUT_MS 10000

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void usage(FILE *to)
{
	fprintf(to,
		"usage: shmsched approve --name NAME --grant|--deny|--exec CMD\n"
		"           [--selector SEL] [--deadline S] [--fail-open|--fail-closed]\n"
		"           [--reclaim] [--preemption]\n"
		"           [--interval MS] [--count N] [--admin-socket PATH]\n"
		"\n"
		"A manager that approves the voluntary disruption (a drain's eviction)\n"
		"of the pods SEL selects (KEP-4563's interceptor). It registers with the\n"
		"daemon and keeps its connection: a drain that meets such a pod asks it\n"
		"first and keeps the pod until it answers; closing the connection drops\n"
		"the registration. Each answer is printed as a line.\n"
		"\n"
		"  --name NAME          the manager's name in the drain's progress and\n"
		"                       the daemon's log (at most 63 bytes, no spaces)\n"
		"  --selector SEL       the pods it manages: key=value, key!=value, key,\n"
		"                       !key, joined by ','; none: every pod\n"
		"  --grant              answer every ask: grant\n"
		"  --deny               answer every ask: deny (held for one deadline,\n"
		"                       then asked again)\n"
		"  --exec CMD           run CMD (/bin/sh -c) for each ask, with\n"
		"                       SHMSCHED_POD, SHMSCHED_NODE, SHMSCHED_REASON and\n"
		"                       SHMSCHED_PLACEMENT set: exit 0 grants, else denies\n"
		"  --deadline S         seconds the daemon waits for an answer (default\n"
		"                       30, at most 86400)\n"
		"  --fail-open          no answer by the deadline: the pod is evicted\n"
		"  --fail-closed        no answer by the deadline: kept (the default)\n"
		"  --reclaim            quota reclaim asks too before it evicts such a\n"
		"                       pod (a deny or a not-before: not a victim then)\n"
		"  --preemption         priority preemption asks too, likewise\n"
		"  --interval MS        how often to ask for asks (default 200)\n"
		"  --count N            exit 0 after N answers (default: run until\n"
		"                       SIGINT or SIGTERM)\n"
		"  --admin-socket PATH  the daemon's admin socket: else\n"
		"                       $SHMSCHED_ADMIN_SOCKET, else the daemon's\n"
		"                       socket with \".admin\" appended\n");
}

static int request(int fd, uint32_t *rid, uint32_t action, const void *body,
		   uint32_t len, char *msg, uint32_t cap, uint32_t *got)
{
	struct op_request op = {.kind = OP_APPROVAL, .arg = action};
	memcpy(msg, &op, sizeof(op));
	if (len > 0)
		memcpy(msg + sizeof(op), body, len);
	uint32_t id = (*rid)++;
	int rc = control_send(fd, CONTROL_MSG_REQUEST, id, msg,
			      (uint32_t)sizeof(op) + len, -1);
	struct control_header h;
	if (rc == 0)
		rc = control_recv(fd, &h, msg, cap, NULL, APPROVE_TIMEOUT_MS);
	if (rc < 0) {
		if (!(rc == -EINTR && stop))
			fprintf(stderr, "shmsched approve: the admin socket: %s\n",
				strerror(-rc));
		return -1;
	}
	if (h.type == CONTROL_MSG_ERROR) {
		int code;
		char text[CONTROL_ERROR_TEXT_MAX + 1];
		control_error_decode(msg, h.length, &code, text, sizeof(text));
		fprintf(stderr, "shmsched approve: the daemon refused: %s (%s)\n", text,
			strerror(code));
		return -1;
	}
	if (h.type != CONTROL_MSG_RESPONSE || h.request_id != id) {
		fprintf(stderr, "shmsched approve: the daemon answered a %s to request "
			"%u; expected a RESPONSE to %u\n",
			control_msg_type_name(h.type), h.request_id, id);
		return -1;
	}
	*got = h.length;
	return 0;
}

static int connect_admin(const char *sock)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	if (strlen(sock) >= sizeof(a.sun_path)) {
		fprintf(stderr, "shmsched approve: %s: too long for a socket path\n", sock);
		return -1;
	}
	memcpy(a.sun_path, sock, strlen(sock) + 1);
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		fprintf(stderr, "shmsched approve: the admin socket %s: %s\n", sock,
			strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	struct control_hello hello = {.abi_version = SHM_ABI_VERSION};
	struct control_header h;
	char buf[CONTROL_ERROR_TEXT_MAX + 64];
	int rc = control_send(fd, CONTROL_MSG_HELLO, 0, &hello, sizeof(hello), -1);
	if (rc == 0 || rc == -EPIPE)
		rc = control_recv(fd, &h, buf, sizeof(buf), NULL, APPROVE_TIMEOUT_MS);
	if (rc == 0 && h.type != CONTROL_MSG_WELCOME) {
		int code;
		char text[CONTROL_ERROR_TEXT_MAX + 1];
		control_error_decode(buf, h.length, &code, text, sizeof(text));
		fprintf(stderr, "shmsched approve: the daemon refused: %s\n", text);
		rc = -1;
	} else if (rc < 0) {
		fprintf(stderr, "shmsched approve: the admin socket %s: %s\n", sock,
			strerror(-rc));
	}
	if (rc != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* --exec's verdict for one ask: GRANT on exit 0, else DENY. */
static uint32_t run_exec(const char *cmd, const struct op_approval_ask *a)
{
	pid_t pid = fork();
	if (pid == 0) {
		char placement[32];
		snprintf(placement, sizeof(placement), "%" PRIu64, a->placement_id);
		setenv("SHMSCHED_POD", a->pod, 1);
		setenv("SHMSCHED_NODE", a->node, 1);
		setenv("SHMSCHED_REASON", a->reason == OP_APPROVAL_DRAIN ? "drain" :
		       a->reason == OP_APPROVAL_RECLAIM ? "reclaim" : "preempt", 1);
		setenv("SHMSCHED_PLACEMENT", placement, 1);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	int status = 0;
	if (pid < 0 || waitpid(pid, &status, 0) < 0)
		return OP_APPROVAL_DENY;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? OP_APPROVAL_GRANT
							      : OP_APPROVAL_DENY;
}

static bool parse_u32(const char *s, uint32_t lo, uint32_t hi, uint32_t *out)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || s[0] == '-' || v < lo || v > hi)
		return false;
	*out = (uint32_t)v;
	return true;
}

int approve_main(int argc, char **argv)
{
	const char *given = NULL, *name = NULL, *selector = "", *cmd = NULL;
	uint32_t verdict = 0, deadline_s = 30, interval_ms = 200, count = 0;
	bool fail_open = false, reclaim = false, preemption = false;
	unsigned verdicts = 0; /* --grant, --deny and --exec given */
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		bool more = i + 1 < argc;
		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			usage(stdout);
			return 0;
		} else if (strcmp(a, "--admin-socket") == 0 && more) {
			given = argv[++i];
		} else if (strcmp(a, "--name") == 0 && more) {
			name = argv[++i];
		} else if (strcmp(a, "--selector") == 0 && more) {
			selector = argv[++i];
		} else if (strcmp(a, "--grant") == 0) {
			verdict = OP_APPROVAL_GRANT;
			verdicts++;
		} else if (strcmp(a, "--deny") == 0) {
			verdict = OP_APPROVAL_DENY;
			verdicts++;
		} else if (strcmp(a, "--exec") == 0 && more) {
			cmd = argv[++i];
			verdicts++;
		} else if (strcmp(a, "--fail-open") == 0) {
			fail_open = true;
		} else if (strcmp(a, "--fail-closed") == 0) {
			fail_open = false;
		} else if (strcmp(a, "--reclaim") == 0) {
			reclaim = true;
		} else if (strcmp(a, "--preemption") == 0) {
			preemption = true;
		} else if (strcmp(a, "--deadline") == 0 && more) {
			if (!parse_u32(argv[++i], 1, OP_APPROVAL_DEADLINE_MAX_MS / 1000,
				       &deadline_s)) {
				fprintf(stderr, "shmsched approve: --deadline \"%s\": "
					"expected whole seconds, 1..%u\n", argv[i],
					OP_APPROVAL_DEADLINE_MAX_MS / 1000);
				return 2;
			}
		} else if (strcmp(a, "--interval") == 0 && more) {
			if (!parse_u32(argv[++i], 1, 60000, &interval_ms)) {
				fprintf(stderr, "shmsched approve: --interval \"%s\": "
					"expected ms, 1..60000\n", argv[i]);
				return 2;
			}
		} else if (strcmp(a, "--count") == 0 && more) {
			if (!parse_u32(argv[++i], 1, UINT32_MAX, &count)) {
				fprintf(stderr, "shmsched approve: --count \"%s\": "
					"expected a number from 1\n", argv[i]);
				return 2;
			}
		} else {
			fprintf(stderr, "shmsched approve: unknown option or missing "
				"value \"%s\"\n", a);
			usage(stderr);
			return 2;
		}
	}
	if (name == NULL || verdicts != 1) {
		fprintf(stderr, "shmsched approve: --name and exactly one of --grant, "
			"--deny and --exec are needed\n");
		usage(stderr);
		return 2;
	}
	size_t sel_len = strlen(selector);
	if (strlen(name) >= OP_APPROVAL_NAME_MAX || sel_len > OP_APPROVAL_SELECTOR_MAX) {
		fprintf(stderr, "shmsched approve: --name at most %u bytes, --selector "
			"at most %u\n", OP_APPROVAL_NAME_MAX - 1, OP_APPROVAL_SELECTOR_MAX);
		return 2;
	}
	char buf[PATH_MAX + 16];
	const char *sock = cli_admin_socket(given, buf, sizeof(buf));
	static char msg[CONTROL_MAX_PAYLOAD];
	char body[sizeof(struct op_approval_register) + OP_APPROVAL_SELECTOR_MAX];
	struct op_approval_register q = {.deadline_ms = deadline_s * 1000u,
					 .flags = (fail_open ? OP_APPROVAL_FAIL_OPEN : 0) |
						  (reclaim ? OP_APPROVAL_RECLAIM_TOO : 0) |
						  (preemption ? OP_APPROVAL_PREEMPT_TOO : 0),
					 .selector_len = (uint32_t)sel_len};
	memcpy(q.name, name, strlen(name));
	memcpy(body, &q, sizeof(q));
	memcpy(body + sizeof(q), selector, sel_len);
	int fd = connect_admin(sock);
	if (fd < 0)
		return 1;
	struct sigaction sa = {.sa_handler = on_signal};
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	uint32_t rid = 1, got, answered = 0;
	int status = 1;
	if (request(fd, &rid, OP_APPROVAL_REGISTER, body,
		    (uint32_t)(sizeof(q) + sel_len), msg, sizeof(msg), &got) < 0)
		goto cleanup;
	fprintf(stderr, "shmsched approve: %s registered for \"%s\" (deadline %u s, "
		"fail-%s%s%s)\n", name, selector, deadline_s,
		fail_open ? "open" : "closed", reclaim ? ", reclaim too" : "",
		preemption ? ", preemption too" : "");
	while (!stop) {
		if (request(fd, &rid, OP_APPROVAL_PENDING, NULL, 0, msg, sizeof(msg),
			    &got) < 0)
			goto cleanup;
		struct op_approval_pending pg;
		memcpy(&pg, msg, sizeof(pg));
		if (got != sizeof(pg) + (size_t)pg.n * sizeof(struct op_approval_ask)) {
			fprintf(stderr, "shmsched approve: the daemon's asks: %u bytes "
				"for %u asks\n", got, pg.n);
			goto cleanup;
		}
		struct op_approval_ask *asks = malloc((size_t)pg.n * sizeof(*asks) + 1);
		if (asks == NULL)
			goto cleanup;
		memcpy(asks, msg + sizeof(pg), (size_t)pg.n * sizeof(*asks));
		for (uint32_t i = 0; i < pg.n && !stop; i++) {
			struct op_approval_ask *k = &asks[i];
			k->pod[sizeof(k->pod) - 1] = k->node[sizeof(k->node) - 1] = '\0';
			uint32_t v = cmd != NULL ? run_exec(cmd, k) : verdict;
			struct op_approval_answer ans = {.ask_id = k->ask_id, .verdict = v};
			if (request(fd, &rid, OP_APPROVAL_ANSWER, &ans, sizeof(ans), msg,
				    sizeof(msg), &got) < 0) {
				free(asks);
				goto cleanup;
			}
			printf("ask %" PRIu64 ": %s on node %s: %s%s\n", k->ask_id, k->pod,
			       k->node, v == OP_APPROVAL_GRANT ? "granted" : "denied",
			       k->reason == OP_APPROVAL_RECLAIM ? " (quota reclaim)" :
			       k->reason == OP_APPROVAL_PREEMPT ? " (preemption)" : "");
			fflush(stdout);
			if (count != 0 && ++answered == count) {
				free(asks);
				status = 0;
				goto cleanup;
			}
		}
		free(asks);
		struct timespec ts = {(time_t)(interval_ms / 1000),
				      (long)(interval_ms % 1000) * 1000000L};
		nanosleep(&ts, NULL);
	}
	status = 0;
cleanup:
	/* A signal that cut a request short (EINTR) is a clean end too. */
	if (stop)
		status = 0;
	close(fd);
	return status;
}
