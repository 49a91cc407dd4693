/* Fuzz target: the policy file (policy/policy.c) on arbitrary bytes, as
 * shmschedd --policy and `shmsched policy apply` read it. What it accepts
 * must hold together: at most POLICY_RULES_MAX rules, its text kept byte
 * for byte, the same text parsed again the same; every lookup and check on
 * it answers without reading past a bound, and a system- class is never
 * granted by a pattern. What it refuses must say why, naming the source,
 * with -EINVAL or -E2BIG (or -ENOMEM). */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct policy *p = NULL;
	char err[512];
	err[0] = '\0';
	int rc = policy_parse((const char *)data, size, "fuzz.json", &p, err, sizeof(err));
	if (rc < 0) {
		if (p != NULL || strstr(err, "fuzz.json") == NULL ||
		    (rc != -EINVAL && rc != -E2BIG && rc != -ENOMEM))
			abort();
		return 0;
	}
	if (p == NULL || policy_rules(p) > POLICY_RULES_MAX)
		abort();
	size_t len;
	const char *text = policy_text(p, &len);
	if (len != size || memcmp(text, data, size) != 0)
		abort();
	struct policy *again = NULL;
	if (policy_parse(text, len, "again", &again, err, sizeof(err)) < 0 ||
	    policy_rules(again) != policy_rules(p))
		abort();
	policy_free(again);
	/* Lookups with names taken from the input itself. */
	char name[POLICY_USER_MAX + 1];
	size_t n = size < sizeof(name) - 1 ? size : sizeof(name) - 1;
	memcpy(name, data, n);
	name[n] = '\0';
	const char *names[] = {"", "*", "team-a", "alice", name};
	for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		for (uid_t uid = 0; uid < 3; uid++) {
			const struct policy_rule *r = policy_find_local(p, uid, names[i]);
			if (r != NULL && policy_rule_index(r) >= policy_rules(p))
				abort();
		}
		const struct policy_rule *r = policy_find_user(p, names[i]);
		if (r == NULL)
			r = policy_find_local(p, 0, names[i]);
		if (r == NULL)
			continue;
		(void)policy_allows_namespace(r, names[i], strlen(names[i]));
		(void)policy_allows_disrupt(r, names[i], strlen(names[i]));
		(void)policy_allows_priority_class(r, names[i]);
		/* "system-node-critical" only by its exact name: a rule that
		 * grants it lists it, which the text then holds. */
		if (policy_allows_priority_class(r, "system-node-critical") &&
		    memmem(data, size, "system-node-critical", 20) == NULL)
			abort();
		char why[512];
		if (policy_admit(p, r, false, "fuzz", "team-a", names[i], why,
				 sizeof(why)) == -EPERM && why[0] == '\0')
			abort();
	}
	policy_free(p);
	return 0;
}
