/* shmsched node add|update FILE, shmsched node remove|cordon|uncordon|lease NAME:
 * one node event through the daemon's admin socket (only the admin socket
 * takes node events; a producer's are refused). Thin: the client library
 * connects and sends; the daemon checks the Node and answers.
 * shmsched node drain NAME...: cordons them, then asks for OP_DRAIN's
 * waves until nothing is left (drain_main). */
#include "cli/read_file.h"
#include "cli/node.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/base.h"
#include "shmsched/client.h"

/* A Node's JSON must fit one control message; the daemon says the same. */
#define NODE_FILE_MAX (60u << 10)

#define TRY "Try 'shmsched node --help' for more information.\n"

static void usage(FILE *to)
{
	fprintf(to,
		"usage: shmsched node add FILE      [--admin-socket PATH]\n"
		"       shmsched node update FILE   [--admin-socket PATH]\n"
		"       shmsched node remove NAME   [--admin-socket PATH]\n"
		"       shmsched node cordon NAME   [--admin-socket PATH]\n"
		"       shmsched node uncordon NAME [--admin-socket PATH]\n"
		"       shmsched node drain NAME... [--timeout DUR] [--dry-run]\n"
		"                   [--force] [--surge] [--pod-selector SEL]\n"
		"                   [--admin-socket PATH]\n"
		"       shmsched node lease NAME    [--admin-socket PATH]\n"
		"\n"
		"Sends one node event to the daemon through its admin socket. FILE is\n"
		"one Node as Kubernetes JSON (as `kubectl get node NAME -o json`\n"
		"prints it). The admin socket: --admin-socket, else\n"
		"$SHMSCHED_ADMIN_SOCKET, else the daemon's socket ($SHMSCHED_SOCKET,\n"
		"$XDG_RUNTIME_DIR/shmsched.sock, or " SHMSCHED_DEFAULT_SOCKET ")\n"
		"with \".admin\" appended, as shmschedd makes it.\n"
		"\n"
		"drain cordons each NAME, then evicts the placements on them in waves\n"
		"as their PodDisruptionBudgets allow (kubectl drain), each owner told\n"
		"once, and says which budget blocks which pod. --timeout DUR (e.g.\n"
		"90s, 5m, 1h30m; 0, the default: forever): stop then, list what is\n"
		"left, exit 1. --dry-run: print the first wave's plan, cordon and\n"
		"evict nothing. --force: evict bound pods too (no producer manages\n"
		"them; without it a drain with one evicts nothing and exits 1).\n"
		"--surge: place each pod's replacement on a node not drained first,\n"
		"its owner told (REPLACED), then evict the pod; a pod whose\n"
		"replacement has no room stays, and its line says why.\n"
		"--pod-selector SEL: only the pods whose labels SEL selects (key=value,\n"
		"key!=value, key, !key, joined by ','); the others stay.\n"
		"lease renews the node's lease, as a kubelet renews its Lease: a node\n"
		"that renewed once and then not for shmschedd's\n"
		"--node-monitor-grace-period (default 50s) is Unknown, tainted\n"
		"node.kubernetes.io/unreachable:NoExecute, until it renews again.\n");
}

const char *cli_admin_socket(const char *given, char *buf, size_t len)
{
	if (given != NULL)
		return given;
	const char *env = getenv("SHMSCHED_ADMIN_SOCKET");
	if (env != NULL && *env != '\0')
		return env;
	const char *sock = getenv("SHMSCHED_SOCKET");
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	if (sock != NULL && *sock != '\0')
		snprintf(buf, len, "%s.admin", sock);
	else if (xdg != NULL && *xdg != '\0')
		snprintf(buf, len, "%s/shmsched.sock.admin", xdg);
	else
		snprintf(buf, len, "%s.admin", SHMSCHED_DEFAULT_SOCKET);
	return buf;
}

/* A duration: digits and a unit (ms, s, m, h), repeated ("1m30s"); bare
 * digits are seconds. Returns 0 with *ns, or -EINVAL. */
static int parse_duration(const char *s, uint64_t *ns)
{
	uint64_t total = 0;
	if (*s == '\0')
		return -EINVAL;
	while (*s != '\0') {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		uint64_t v = 0;
		while (*s >= '0' && *s <= '9') {
			if (v > UINT64_C(1000000000))
				return -EINVAL;
			v = v * 10 + (uint64_t)(*s++ - '0');
		}
		uint64_t unit;
		if (strncmp(s, "ms", 2) == 0) {
			unit = UINT64_C(1000000);
			s += 2;
		} else if (*s == 's' || *s == '\0') {
			unit = UINT64_C(1000000000);
			s += *s == 's';
		} else if (*s == 'm') {
			unit = UINT64_C(60000000000);
			s++;
		} else if (*s == 'h') {
			unit = UINT64_C(3600000000000);
			s++;
		} else {
			return -EINVAL;
		}
		total += v * unit;
	}
	*ns = total;
	return 0;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * UINT64_C(1000000000) + (uint64_t)ts.tv_nsec;
}

/* How long a blocked drain waits before it asks again, at most (kubectl
 * waits 5 s after a 429). */
#define DRAIN_RETRY_NS UINT64_C(1000000000)

/* The line after a wave's "drain: evicted E of T" while pods are left
 * (issue 38): the time to go at the evictions per second seen so far in
 * this run, or that the wave evicted nothing (a budget or an approval
 * holds every pod left: no number). A line of its own, so that scripts
 * matching the wave's line as a whole still do. */
static void print_eta(uint64_t evicted, uint64_t elapsed_ns, unsigned left,
		      bool blocked)
{
	struct eta e = eta_estimate(evicted, elapsed_ns, left, blocked);
	if (e.kind == ETA_BLOCKED)
		printf("drain: %u left, blocked (listed above), no ETA\n", left);
	else if (e.kind == ETA_UNKNOWN)
		printf("drain: %u left, no ETA yet (nothing evicted)\n", left);
	else
		printf("drain: %u left, about %.*f s to go at %.1f evictions/s\n",
		       left, e.seconds < 10 ? 1 : 0, e.seconds, e.per_second);
	fflush(stdout);
}

/* shmsched node drain NAME... (issue 38): cordon, then waves of OP_DRAIN
 * until nothing is left (kubectl drain's loop: evictPods asks again while
 * a budget refuses, until its global timeout). */
static int drain_main(int argc, char **argv)
{
	const char *given = NULL, *names[1024]; /* OP_DRAIN_NODES_MAX */
	unsigned n = 0, flags = 0;
	uint64_t timeout_ns = 0;
	const char *timeout_text = "0", *selector = NULL;
	for (int i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--admin-socket") == 0 ||
		    strcmp(argv[i], "--timeout") == 0 ||
		    strcmp(argv[i], "--pod-selector") == 0) {
			if (i + 1 == argc) {
				fprintf(stderr, "shmsched node drain: %s needs a %s\n"
					TRY, argv[i], argv[i][2] == 'a' ? "path" :
					argv[i][2] == 'p' ? "selector" : "duration");
				return 2;
			}
			if (argv[i][2] == 'a') {
				given = argv[++i];
			} else if (argv[i][2] == 'p') {
				selector = argv[++i];
			} else if (parse_duration(argv[++i], &timeout_ns) < 0) {
				fprintf(stderr, "shmsched node drain: --timeout \"%s\": "
					"expected a duration such as 0, 90s, 5m or "
					"1h30m\n" TRY, argv[i]);
				return 2;
			} else {
				timeout_text = argv[i];
			}
		} else if (strcmp(argv[i], "--dry-run") == 0) {
			flags |= SHMSCHED_DRAIN_DRY_RUN;
		} else if (strcmp(argv[i], "--force") == 0) {
			flags |= SHMSCHED_DRAIN_FORCE;
		} else if (strcmp(argv[i], "--surge") == 0) {
			flags |= SHMSCHED_DRAIN_SURGE;
		} else if (argv[i][0] == '-') {
			fprintf(stderr, "shmsched node drain: unrecognized option "
				"'%s'\n" TRY, argv[i]);
			return 2;
		} else if (n == sizeof(names) / sizeof(names[0])) {
			fprintf(stderr, "shmsched node drain: more than %zu nodes\n"
				TRY, sizeof(names) / sizeof(names[0]));
			return 2;
		} else {
			names[n++] = argv[i];
		}
	}
	if (n == 0) {
		fprintf(stderr, "shmsched node drain: needs a NAME\n" TRY);
		return 2;
	}
	bool dry = flags & SHMSCHED_DRAIN_DRY_RUN;
	char path[4096], err[1024];
	const char *sock = cli_admin_socket(given, path, sizeof(path));
	struct shmsched_client *c;
	if (shmsched_connect(sock, &c, err, sizeof(err)) < 0) {
		fprintf(stderr, "shmsched node drain: %s\n", err);
		return 1;
	}
	int status = 1;
	char *text = NULL, *last_blocked = NULL;
	/* Cordon every node first: nothing new lands there meanwhile. */
	for (unsigned i = 0; i < n; i++) {
		if (!dry && shmsched_node_event(c, SHMSCHED_NODE_CORDON, names[i],
						strlen(names[i]), err, sizeof(err)) < 0) {
			fprintf(stderr, "shmsched node drain: cordon %s: %s\n",
				names[i], err);
			goto done;
		}
		printf("node/%s cordoned%s\n", names[i], dry ? " (dry run)" : "");
	}
	uint64_t start = mono_ns(), evicted = 0, waves = 0;
	unsigned last_left = 0;
	for (;;) {
		struct shmsched_drain_result r;
		free(text);
		text = NULL;
		if (shmsched_drain(c, names, n, selector, flags, &r, &text, err,
				   sizeof(err)) < 0) {
			fprintf(stderr, "shmsched node drain: %s\n", err);
			/* The daemon went away (stopped, killed) or refused a
			 * later wave: what this run did, and how to go on. An
			 * eviction is final in the daemon's state, which a
			 * restart resumes: a second run evicts the rest only. */
			if (waves > 0)
				fprintf(stderr, "shmsched node drain: stopped after "
					"%llu evicted (listed above), %u left at the "
					"last wave; the nodes stay cordoned and what was "
					"evicted stays evicted: run the same drain again "
					"to go on\n", (unsigned long long)evicted,
					last_left);
			goto done;
		}
		waves++;
		evicted += r.evicted;
		unsigned left = r.blocked + r.errors + r.unmanaged;
		last_left = left;
		/* Each wave's evictions; what blocks, when it changed. */
		bool changed = last_blocked == NULL || strcmp(last_blocked, text) != 0;
		if (r.evicted > 0 || changed)
			fputs(text, stdout);
		free(last_blocked);
		last_blocked = r.evicted > 0 ? NULL : strdup(text);
		if (dry) {
			printf("drain (dry run): %u would be evicted now, %u left\n",
			       r.evicted, left);
			status = r.errors + r.unmanaged > 0 ? 1 : 0;
			goto done;
		}
		printf("drain: evicted %llu of %llu\n", (unsigned long long)evicted,
		       (unsigned long long)(evicted + left));
		fflush(stdout);
		if (r.unmanaged > 0) {
			fprintf(stderr, "shmsched node drain: %u bound pods no producer "
				"manages; nothing evicted (--force evicts them)\n",
				r.unmanaged);
			goto done;
		}
		if (r.blocked == 0) {
			if (r.errors > 0) {
				fprintf(stderr, "shmsched node drain: %u pods cannot be "
					"evicted (see above)\n", r.errors);
				goto done;
			}
			break;
		}
		print_eta(evicted, mono_ns() - start, left, r.evicted == 0);
		if (r.evicted > 0)
			continue; /* a wave moved: ask again now */
		uint64_t now = mono_ns(), wait = DRAIN_RETRY_NS;
		if (timeout_ns > 0) {
			if (now - start >= timeout_ns) {
				fprintf(stderr, "shmsched node drain: timed out after %s: "
					"%llu of %llu evicted, %u left (listed above)\n",
					timeout_text, (unsigned long long)evicted,
					(unsigned long long)(evicted + left), left);
				goto done;
			}
			if (timeout_ns - (now - start) < wait)
				wait = timeout_ns - (now - start);
		}
		struct timespec ts = {(time_t)(wait / 1000000000u),
				      (long)(wait % 1000000000u)};
		nanosleep(&ts, NULL);
	}
	for (unsigned i = 0; i < n; i++)
		printf("node/%s drained\n", names[i]);
	status = 0;
done:
	free(text);
	free(last_blocked);
	shmsched_disconnect(c);
	return status;
}

int node_main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "drain") == 0)
		return drain_main(argc, argv);
	static const struct {
		const char *verb;
		int kind;
		int takes_file;
	} verbs[] = {
		{"add", SHMSCHED_NODE_ADD, 1},
		{"update", SHMSCHED_NODE_UPDATE, 1},
		{"remove", SHMSCHED_NODE_REMOVE, 0},
		{"cordon", SHMSCHED_NODE_CORDON, 0},
		{"uncordon", SHMSCHED_NODE_UNCORDON, 0},
		{"lease", SHMSCHED_NODE_LEASE, 0},
	};
	const char *given = NULL, *verb = NULL, *arg = NULL;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			usage(stdout);
			return 0;
		}
		if (strcmp(argv[i], "--admin-socket") == 0) {
			if (++i == argc) {
				fprintf(stderr, "shmsched node: --admin-socket needs a "
					"path\n" TRY);
				return 2;
			}
			given = argv[i];
		} else if (argv[i][0] == '-') {
			fprintf(stderr, "shmsched node: unrecognized option '%s'\n"
				TRY, argv[i]);
			return 2;
		} else if (verb == NULL) {
			verb = argv[i];
		} else if (arg == NULL) {
			arg = argv[i];
		} else {
			fprintf(stderr, "shmsched node: unexpected argument \"%s\"\n"
				TRY, argv[i]);
			return 2;
		}
	}
	int v = -1;
	for (int k = 0; verb != NULL && k < (int)(sizeof(verbs) / sizeof(verbs[0])); k++)
		if (strcmp(verb, verbs[k].verb) == 0)
			v = k;
	if (v < 0 || arg == NULL || *arg == '\0') {
		if (verb != NULL && v < 0)
			fprintf(stderr, "shmsched node: unknown event \"%s\"\n", verb);
		else
			fprintf(stderr, "shmsched node: %s needs a %s\n",
				verb ? verb : "an event",
				v >= 0 && verbs[v].takes_file ? "FILE" : "NAME");
		fprintf(stderr, TRY);
		return 2;
	}
	char *body = NULL;
	size_t len = strlen(arg);
	if (verbs[v].takes_file &&
	    cli_read_file("node", arg, NODE_FILE_MAX, "; one Node is expected",
			  &body, &len) < 0)
		return 1;

	char path[4096], err[1024];
	const char *sock = cli_admin_socket(given, path, sizeof(path));
	struct shmsched_client *c;
	int rc = shmsched_connect(sock, &c, err, sizeof(err));
	if (rc == 0) {
		rc = shmsched_node_event(c, verbs[v].kind, body ? body : arg, len,
					 err, sizeof(err));
		shmsched_disconnect(c);
	}
	free(body);
	if (rc < 0) {
		fprintf(stderr, "shmsched node %s %s: %s\n", verb, arg, err);
		return 1;
	}
	printf("shmsched node %s %s: done\n", verb, arg);
	return 0;
}
