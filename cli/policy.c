/* shmsched policy show | reload | apply FILE: OP_POLICY through the
 * daemon's admin socket (ingest/control_ops.h), one request through
 * cli/admin_call.c. APPLY sends the file's
 * bytes, never its path: the daemon reads no file an admin names. Every
 * answer is the policy then in force, printed as its source and text. */
#include "cli/admin_call.h"
#include "cli/read_file.h"
#include "cli/policy.h"

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/node.h"
#include "ingest/ingest.h"
#include "policy/policy.h"

#define POLICY_TIMEOUT_MS 10000

static void usage(FILE *to)
{
	fprintf(to,
		"usage: shmsched policy show         [--admin-socket PATH]\n"
		"       shmsched policy reload       [--admin-socket PATH]\n"
		"       shmsched policy apply FILE   [--admin-socket PATH]\n"
		"       shmsched policy check FILE\n"
		"\n"
		"The daemon's policy (shmschedd --policy FILE): which namespaces and\n"
		"PriorityClasses each producer identity may use, and whose pods its\n"
		"preemptions may evict. show prints the policy in force; reload reads\n"
		"the daemon's --policy file again; apply puts FILE in force (until a\n"
		"reload or restart); check reads FILE here and says whether the daemon\n"
		"would take it. A refused policy leaves the one in force.\n"
		"\n"
		"FILE is JSON:\n"
		"  {\"apiVersion\": \"" POLICY_API_VERSION "\", \"kind\": \"Policy\", \"rules\": [\n"
		"    {\"uids\": [1001], \"names\": [\"team-a\"], \"users\": [\"alice\"],\n"
		"     \"namespaces\": [\"team-a\", \"team-a-*\"],\n"
		"     \"priorityClasses\": [\"low\", \"high\"],\n"
		"     \"disruptNamespaces\": [\"team-a\"]}]}\n"
		"A producer gets the first rule whose uids hold its uid and whose names\n"
		"its registered name (\"*\": any); none: it may place no pod. \"*\" in\n"
		"priorityClasses is any class but system- ones, which only their exact\n"
		"names grant. disruptNamespaces defaults to namespaces. At most %u\n"
		"bytes, %u rules, %u entries a list.\n"
		"\n"
		"The admin socket: --admin-socket, else $SHMSCHED_ADMIN_SOCKET, else\n"
		"the daemon's socket with \".admin\" appended, as shmschedd makes it.\n",
		POLICY_BYTES_MAX, POLICY_RULES_MAX, POLICY_LIST_MAX);
}

/* One OP_POLICY request; prints the answer. Returns the exit status. */
static int call(const char *sock, uint32_t action, const char *body, size_t len)
{
	static char msg[CONTROL_MAX_PAYLOAD];
	struct op_policy_shown shown;
	uint32_t got;
	if (cli_admin_call("policy", sock, OP_POLICY, action, body, len, POLICY_TIMEOUT_MS,
			   sizeof(shown), msg, sizeof(msg), &got) < 0)
		return 1;
	memcpy(&shown, msg, sizeof(shown));
	shown.source[sizeof(shown.source) - 1] = '\0';
	if (shown.text_bytes != got - sizeof(shown)) {
		fprintf(stderr, "shmsched policy: the daemon's answer holds %zu bytes "
			"of text; it says %u\n", got - sizeof(shown),
			shown.text_bytes);
		return 1;
	}
	if (!shown.loaded) {
		printf("# no policy: the default (any namespace; any PriorityClass but "
		       "system- ones, which only admin connections may name; any "
		       "victim)\n");
		return 0;
	}
	printf("# policy in force: %u rule(s) from %s\n", shown.rules, shown.source);
	fwrite(msg + sizeof(shown), 1, shown.text_bytes, stdout);
	if (shown.text_bytes > 0 && msg[sizeof(shown) + shown.text_bytes - 1] != '\n')
		putchar('\n');
	return 0;
}

int policy_main(int argc, char **argv)
{
	const char *given = NULL, *verb = NULL, *file = NULL;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			usage(stdout);
			return 0;
		}
		if (strcmp(argv[i], "--admin-socket") == 0 && i + 1 < argc) {
			given = argv[++i];
		} else if (argv[i][0] == '-') {
			fprintf(stderr, "shmsched policy: unknown option \"%s\"\n", argv[i]);
			usage(stderr);
			return 2;
		} else if (verb == NULL) {
			verb = argv[i];
		} else if (file == NULL) {
			file = argv[i];
		} else {
			fprintf(stderr, "shmsched policy: one FILE at most\n");
			return 2;
		}
	}
	bool with_file = verb != NULL && (strcmp(verb, "apply") == 0 ||
					  strcmp(verb, "check") == 0);
	if (verb == NULL || (with_file != (file != NULL)) ||
	    (!with_file && strcmp(verb, "show") != 0 && strcmp(verb, "reload") != 0)) {
		usage(stderr);
		return 2;
	}
	char buf[PATH_MAX + 16];
	const char *sock = cli_admin_socket(given, buf, sizeof(buf));
	if (strcmp(verb, "show") == 0)
		return call(sock, OP_POLICY_SHOW, NULL, 0);
	if (strcmp(verb, "reload") == 0)
		return call(sock, OP_POLICY_RELOAD, NULL, 0);
	char *text;
	size_t len;
	if (cli_read_file("policy", file, POLICY_BYTES_MAX,
			  ", the most a policy has", &text, &len) < 0)
		return 2;
	/* Checked here first: the message names FILE, not the socket. */
	struct policy *pol;
	char err[1024];
	if (policy_parse(text, len, file, &pol, err, sizeof(err)) < 0) {
		fprintf(stderr, "shmsched policy: %s\n", err);
		free(text);
		return strcmp(verb, "check") == 0 ? 1 : 2;
	}
	if (strcmp(verb, "check") == 0) {
		printf("%s: %u rule(s); the daemon would take it\n", file,
		       policy_rules(pol));
		policy_free(pol);
		free(text);
		return 0;
	}
	policy_free(pol);
	int rc = call(sock, OP_POLICY_APPLY, text, len);
	free(text);
	return rc;
}
