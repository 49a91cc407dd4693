/* Fuzz target: an OP_TEMPLATE request's body as the daemon reads it
 * (control_template_split, ingest/control_proto.c) and a scoped body's
 * scope (policy_scope_parse, policy/policy.c), on arbitrary bytes. Input:
 * one byte for the arg (0 plain, 1 scoped, else as is), then the body.
 * What is split must lie within the body and add up to it; a scope is
 * accepted only within its bounds, each of its patterns valid, its text
 * kept byte for byte; a refusal says why. */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/ingest.h"
#include "policy/policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size - 1 > CONTROL_MAX_PAYLOAD)
		return 0;
	uint32_t arg = data[0];
	const char *body = (const char *)data + 1;
	uint32_t len = (uint32_t)(size - 1);
	struct control_template t;
	char err[512];
	err[0] = '\0';
	int rc = control_template_split(arg, body, len, &t, err, sizeof(err));
	if (rc < 0) {
		if (rc != -EPROTO || err[0] == '\0' || arg == OP_TEMPLATE_PLAIN)
			abort();
		return 0;
	}
	if (t.pod < body || t.pod + t.pod_len != body + len)
		abort();
	if (!t.scoped) {
		if (arg != OP_TEMPLATE_PLAIN || t.pod != body || t.pod_len != len)
			abort();
		return 0;
	}
	if (arg != OP_TEMPLATE_SCOPED || t.scope_len > OP_TEMPLATE_SCOPE_MAX ||
	    t.scope != body + sizeof(struct op_template_scope) ||
	    t.scope + t.scope_len != t.pod)
		abort();
	struct policy_scope *s = NULL;
	rc = policy_scope_parse(t.scope, t.scope_len, &s, err, sizeof(err));
	if (rc < 0) {
		if (s != NULL || strstr(err, "disrupt scope") == NULL ||
		    (rc != -EINVAL && rc != -E2BIG && rc != -ENOMEM))
			abort();
		return 0;
	}
	const char *text = policy_scope_text(s);
	if (strlen(text) != t.scope_len || memcmp(text, t.scope, t.scope_len) != 0)
		abort();
	/* Every pattern it holds matches itself, less a trailing '*'. */
	for (const char *p = text; *p != '\0';) {
		size_t n = strcspn(p, ",");
		size_t m = n > 0 && p[n - 1] == '*' ? n - 1 : n;
		if (m > 0 && !policy_scope_allows(s, p, m))
			abort();
		p += n + (p[n] == ',');
	}
	(void)policy_scope_allows(s, "team-a", 6);
	policy_scope_free(s);
	return 0;
}
