/* shmsched node add|update FILE, shmsched node remove|cordon|uncordon|lease NAME:
 * one node event through the daemon's admin socket (only the admin socket
 * takes node events; a producer's are refused). Thin: the client library
 * connects and sends; the daemon checks the Node and answers. */
#include "cli/read_file.h"
#include "cli/node.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
		"       shmsched node lease NAME    [--admin-socket PATH]\n"
		"\n"
		"Sends one node event to the daemon through its admin socket. FILE is\n"
		"one Node as Kubernetes JSON (as `kubectl get node NAME -o json`\n"
		"prints it). The admin socket: --admin-socket, else\n"
		"$SHMSCHED_ADMIN_SOCKET, else the daemon's socket ($SHMSCHED_SOCKET,\n"
		"$XDG_RUNTIME_DIR/shmsched.sock, or " SHMSCHED_DEFAULT_SOCKET ")\n"
		"with \".admin\" appended, as shmschedd makes it.\n"
		"\n"
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

int node_main(int argc, char **argv)
{
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
