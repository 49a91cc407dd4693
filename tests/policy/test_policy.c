/* unit.policy: the policy file (policy/policy.c): strict reading (unknown
 * fields, wrong types, bounds, each refusal naming the file, JSON path,
 * value and what was expected), matching identities (uid and name; gateway
 * users), namespaces and PriorityClasses by exact name, prefix and "*", the
 * system- classes (granted by exact name only; without a policy only to
 * admin connections, as kube-apiserver's Priority admission kept them to
 * kube-system: kubernetes PR #65593, plugin/pkg/admission/priority/
 * admission.go), and disruptNamespaces with its default. JSON is written
 * with ' for " (parse() swaps them). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "policy/policy.h"

static char err[1024];

static int parse(const char *quoted, struct policy **out)
{
	char *s = strdup(quoted);
	assert_non_null(s);
	for (char *c = s; *c; c++)
		if (*c == '\'')
			*c = '"';
	err[0] = '\0';
	int rc = policy_parse(s, strlen(s), "p.json", out, err, sizeof(err));
	free(s);
	return rc;
}

#define HEAD "{'apiVersion':'shmsched.io/v1alpha1','kind':'Policy','rules':["
#define TAIL "]}"

static const char two_teams[] = HEAD
	"{'uids':[1001],'names':['team-a'],'users':['alice'],"
	" 'namespaces':['team-a','team-a-*'],'priorityClasses':['low','high']},"
	"{'uids':[1002],'names':['*'],'users':['bob'],"
	" 'namespaces':['team-b'],'priorityClasses':['*','system-cluster-critical'],"
	" 'disruptNamespaces':[]},"
	"{'uids':[0],'namespaces':['*'],'priorityClasses':['*'],"
	" 'disruptNamespaces':['*']}" TAIL;

static void test_match(void **state)
{
	(void)state;
	struct policy *p;
	assert_int_equal(parse(two_teams, &p), 0);
	assert_int_equal(policy_rules(p), 3);
	const struct policy_rule *a = policy_find_local(p, 1001, "team-a");
	assert_non_null(a);
	assert_int_equal(policy_rule_index(a), 0);
	/* uid right, name wrong; name right, uid wrong: no rule. */
	assert_null(policy_find_local(p, 1001, "team-b"));
	assert_null(policy_find_local(p, 1003, "team-a"));
	/* "*" names any name, "" too; a rule without names any name. */
	assert_int_equal(policy_rule_index(policy_find_local(p, 1002, "")), 1);
	assert_int_equal(policy_rule_index(policy_find_local(p, 0, "x")), 2);
	/* Gateway users: by name; a rule without users matches none. */
	assert_ptr_equal(policy_find_user(p, "alice"), a);
	assert_int_equal(policy_rule_index(policy_find_user(p, "bob")), 1);
	assert_null(policy_find_user(p, "carol"));
	assert_null(policy_find_user(p, ""));

	assert_true(policy_allows_namespace(a, "team-a", 6));
	assert_true(policy_allows_namespace(a, "team-a-dev", 10));
	assert_false(policy_allows_namespace(a, "team-ab", 7));
	assert_false(policy_allows_namespace(a, "team-b", 6));
	assert_false(policy_allows_namespace(NULL, "team-a", 6));
	assert_true(policy_allows_priority_class(a, "high"));
	assert_false(policy_allows_priority_class(a, "higher"));
	assert_false(policy_allows_priority_class(a, "system-node-critical"));
	/* disruptNamespaces absent: its own namespaces. */
	assert_true(policy_allows_disrupt(a, "team-a-x", 8));
	assert_false(policy_allows_disrupt(a, "team-b", 6));
	assert_false(policy_disrupts_any(a));

	const struct policy_rule *b = policy_find_local(p, 1002, "anything");
	/* "*": any class but a system- one, which only its exact name grants. */
	assert_true(policy_allows_priority_class(b, "whatever"));
	assert_true(policy_allows_priority_class(b, "system-cluster-critical"));
	assert_false(policy_allows_priority_class(b, "system-node-critical"));
	/* disruptNamespaces []: none, not even its own. */
	assert_false(policy_allows_disrupt(b, "team-b", 6));
	assert_true(policy_disrupts_any(policy_find_local(p, 0, "")));
	policy_free(p);
}

static void test_admit(void **state)
{
	(void)state;
	char why[512];
	/* No policy: any namespace and class but the system- ones, which
	 * only an admin connection may name. */
	assert_int_equal(policy_admit(NULL, NULL, false, "uid 65534", "any", "low",
				      why, sizeof(why)), 0);
	assert_int_equal(policy_admit(NULL, NULL, false, "uid 65534", "any", NULL,
				      why, sizeof(why)), 0);
	assert_int_equal(policy_admit(NULL, NULL, false, "uid 65534", "default",
				      "system-node-critical", why, sizeof(why)), -EPERM);
	assert_non_null(strstr(why, "uid 65534"));
	assert_non_null(strstr(why, "system-node-critical"));
	assert_non_null(strstr(why, "--policy"));
	assert_int_equal(policy_admit(NULL, NULL, false, "u", "default",
				      "system-cluster-critical", why, sizeof(why)), -EPERM);
	assert_int_equal(policy_admit(NULL, NULL, true, "admin", "default",
				      "system-node-critical", why, sizeof(why)), 0);

	struct policy *p;
	assert_int_equal(parse(two_teams, &p), 0);
	const struct policy_rule *a = policy_find_local(p, 1001, "team-a");
	assert_int_equal(policy_admit(p, a, false, "uid 1001, name \"team-a\"",
				      "team-a", "high", why, sizeof(why)), 0);
	assert_int_equal(policy_admit(p, a, false, "uid 1001, name \"team-a\"",
				      "team-b", NULL, why, sizeof(why)), -EPERM);
	assert_non_null(strstr(why, "uid 1001, name \"team-a\""));
	assert_non_null(strstr(why, "\"team-b\""));
	assert_non_null(strstr(why, "p.json"));
	assert_int_equal(policy_admit(p, a, false, "x", "team-a",
				      "system-node-critical", why, sizeof(why)), -EPERM);
	assert_non_null(strstr(why, "exact name"));
	/* No rule: nothing. */
	assert_int_equal(policy_admit(p, NULL, false, "uid 7, name \"\"", "team-a",
				      NULL, why, sizeof(why)), -EPERM);
	assert_non_null(strstr(why, "no rule of the policy p.json"));
	/* The gateway's call: by user name. */
	assert_int_equal(policy_admit_user(p, "alice", "team-a-x", "low", why,
					   sizeof(why)), 0);
	assert_int_equal(policy_admit_user(p, "alice", "team-b", NULL, why,
					   sizeof(why)), -EPERM);
	assert_non_null(strstr(why, "user \"alice\""));
	assert_int_equal(policy_admit_user(p, "mallory", "team-a", NULL, why,
					   sizeof(why)), -EPERM);
	assert_non_null(strstr(why, "user \"mallory\": no rule"));
	assert_int_equal(policy_admit_user(NULL, "anyone", "x", "system-node-critical",
					   why, sizeof(why)), -EPERM);
	/* An admin connection is not held to it. */
	assert_int_equal(policy_admit(p, NULL, true, "admin", "kube-system",
				      "system-node-critical", why, sizeof(why)), 0);
	policy_free(p);
}

/* Each refusal: rc, and the words the message must hold. */
static void refused(const char *quoted, int want, const char *const *words)
{
	struct policy *p = (struct policy *)1;
	int rc = parse(quoted, &p);
	if (rc != want)
		fail_msg("%s: rc %d, want %d (%s)", quoted, rc, want, err);
	assert_null(p);
	for (const char *const *w = words; *w != NULL; w++)
		if (strstr(err, *w) == NULL)
			fail_msg("%s: message \"%s\" lacks \"%s\"", quoted, err, *w);
}

static void test_strict(void **state)
{
	(void)state;
	refused("{'apiVersion':'shmsched.io/v1alpha1','kind':'Policy','rules':[],"
		"'rulez':[]}", -EINVAL,
		(const char *[]){"p.json", "$.rulez", "unknown field", "rules", NULL});
	refused(HEAD "{'uids':[1],'namespaces':['a'],'namespace':['b']}" TAIL, -EINVAL,
		(const char *[]){"$.rules[0].namespace", "unknown field",
				 "disruptNamespaces", NULL});
	refused("{'apiVersion':'v1','kind':'Policy','rules':[]}", -EINVAL,
		(const char *[]){"$.apiVersion", "\"v1\"", "shmsched.io/v1alpha1", NULL});
	refused("{'apiVersion':'shmsched.io/v1alpha1','rules':[]}", -EINVAL,
		(const char *[]){"$.kind", "missing", NULL});
	refused(HEAD "{'uids':[1],'namespaces':['Team_A']}" TAIL, -EINVAL,
		(const char *[]){"$.rules[0].namespaces[0]", "\"Team_A\"",
				 "DNS-1123", NULL});
	refused(HEAD "{'uids':[1],'namespaces':['a'],'priorityClasses':['system-*']}"
		TAIL, -EINVAL,
		(const char *[]){"$.rules[0].priorityClasses[0]", "exact name", NULL});
	refused(HEAD "{'uids':[-1],'namespaces':['a']}" TAIL, -EINVAL,
		(const char *[]){"$.rules[0].uids[0]", "-1", "0..4294967294", NULL});
	refused(HEAD "{'uids':['1001'],'namespaces':['a']}" TAIL, -EINVAL,
		(const char *[]){"$.rules[0].uids[0]", NULL});
	refused(HEAD "{'namespaces':['a']}" TAIL, -EINVAL,
		(const char *[]){"$.rules[0]", "neither uids nor users", NULL});
	refused(HEAD "{'users':['u'],'names':['n'],'namespaces':['a']}" TAIL, -EINVAL,
		(const char *[]){"$.rules[0].names", "without uids", NULL});
	refused(HEAD "{'users':[''],'namespaces':['a']}" TAIL, -EINVAL,
		(const char *[]){"$.rules[0].users[0]", NULL});
	refused(HEAD "{'uids':[1],'namespaces':'a'}" TAIL, -EINVAL,
		(const char *[]){"$.rules[0].namespaces", "\"a\"", "an array", NULL});
	refused(HEAD "7" TAIL, -EINVAL, (const char *[]){"$.rules[0]", "7", NULL});
	/* Duplicate keys: refused, not "last wins". */
	refused(HEAD "{'uids':[1],'namespaces':['a'],'namespaces':['*']}" TAIL,
		-EINVAL, (const char *[]){"p.json", "duplicate", NULL});
	refused("{'apiVersion':", -EINVAL, (const char *[]){"p.json:1:", NULL});
	refused("[]", -EINVAL, (const char *[]){"$", "an array", NULL});
	/* A JSON string holding NUL never names anything. */
	refused(HEAD "{'uids':[1],'names':['a\\u0000b'],'namespaces':['a']}" TAIL,
		-EINVAL, (const char *[]){"p.json", NULL});
}

static void test_bounds(void **state)
{
	(void)state;
	/* Names: 63 bytes fit, 64 do not; a namespace of 63, not 64. */
	char buf[POLICY_BYTES_MAX + 64];
	char name[80];
	memset(name, 'n', 64);
	name[63] = '\0';
	struct policy *p;
	snprintf(buf, sizeof(buf), HEAD "{'uids':[1],'names':['%s'],'namespaces'"
		 ":['%s']}" TAIL, name, name);
	assert_int_equal(parse(buf, &p), 0);
	assert_non_null(policy_find_local(p, 1, name));
	policy_free(p);
	name[63] = 'n';
	name[64] = '\0';
	snprintf(buf, sizeof(buf), HEAD "{'uids':[1],'names':['%s'],'namespaces'"
		 ":['a']}" TAIL, name);
	refused(buf, -EINVAL, (const char *[]){"$.rules[0].names[0]", "63", NULL});
	snprintf(buf, sizeof(buf), HEAD "{'uids':[1],'namespaces':['%s']}" TAIL, name);
	refused(buf, -EINVAL, (const char *[]){"$.rules[0].namespaces[0]", NULL});
	/* 65 entries in a list; 257 rules. */
	size_t at = (size_t)snprintf(buf, sizeof(buf), HEAD "{'uids':[1],'namespaces':[");
	for (int i = 0; i < 65; i++)
		at += (size_t)snprintf(buf + at, sizeof(buf) - at, "%s'n%d'", i ? "," : "", i);
	snprintf(buf + at, sizeof(buf) - at, "]}" TAIL);
	refused(buf, -EINVAL, (const char *[]){"$.rules[0].namespaces", "at most 64",
					       NULL});
	at = (size_t)snprintf(buf, sizeof(buf), HEAD);
	for (int i = 0; i < 257; i++)
		at += (size_t)snprintf(buf + at, sizeof(buf) - at,
				       "%s{'uids':[%d],'namespaces':['a']}", i ? "," : "", i);
	snprintf(buf + at, sizeof(buf) - at, TAIL);
	refused(buf, -EINVAL, (const char *[]){"$.rules", "at most 256", NULL});
	/* 256 rules fit; the last one is found. */
	at = (size_t)snprintf(buf, sizeof(buf), HEAD);
	for (int i = 0; i < 256; i++)
		at += (size_t)snprintf(buf + at, sizeof(buf) - at,
				       "%s{'uids':[%d],'namespaces':['a']}", i ? "," : "", i);
	snprintf(buf + at, sizeof(buf) - at, TAIL);
	assert_int_equal(parse(buf, &p), 0);
	assert_int_equal(policy_rule_index(policy_find_local(p, 255, "")), 255);
	policy_free(p);
	/* The text's size: one byte over refused before it is parsed. */
	char *big = malloc(POLICY_BYTES_MAX + 1);
	assert_non_null(big);
	memset(big, ' ', POLICY_BYTES_MAX + 1);
	assert_int_equal(policy_parse(big, POLICY_BYTES_MAX + 1, "big.json", &p, err,
				      sizeof(err)), -E2BIG);
	assert_non_null(strstr(err, "big.json"));
	free(big);
}

static void test_file(void **state)
{
	(void)state;
	char path[] = "/tmp/shmsched-policy-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	static const char text0[] = "{\"apiVersion\":\"shmsched.io/v1alpha1\","
				    "\"kind\":\"Policy\",\"rules\":[]}";
	assert_int_equal(write(fd, text0, strlen(text0)), (ssize_t)strlen(text0));
	close(fd);
	struct policy *p;
	assert_int_equal(policy_load_file(path, &p, err, sizeof(err)), 0);
	assert_string_equal(policy_source(p), path);
	size_t len;
	const char *text = policy_text(p, &len);
	assert_int_equal(len, strlen(text0));
	assert_memory_equal(text, "{\"apiVersion\"", 13);
	/* An empty list of rules: nobody may do anything. */
	assert_null(policy_find_local(p, 0, ""));
	policy_free(p);
	unlink(path);
	assert_int_equal(policy_load_file(path, &p, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, path));
}

/* Issue 41: a producer's narrowing disrupt scope (OP_TEMPLATE_SCOPED), as
 * the gateway sends a user's disruptNamespaces: parsed strictly and
 * bounded; and a rule's disruptNamespaces (absent: its namespaces) written
 * as scope text that parses back to the same matches. */
static void test_scope(void **state)
{
	(void)state;
	struct policy_scope *s;
	static const char text[] = "team-b,team-c-*";
	assert_int_equal(policy_scope_parse(text, strlen(text), &s, err, sizeof(err)), 0);
	assert_true(policy_scope_allows(s, "team-b", 6));
	assert_true(policy_scope_allows(s, "team-c-x", 8));
	assert_false(policy_scope_allows(s, "team-a", 6));
	assert_false(policy_scope_allows(s, "team-bb", 7));
	assert_string_equal(policy_scope_text(s), text);
	policy_scope_free(s);
	/* "": none; "*": any (the rule still bounds it). Not NUL-terminated:
	 * only len bytes are read. */
	assert_int_equal(policy_scope_parse("", 0, &s, err, sizeof(err)), 0);
	assert_false(policy_scope_allows(s, "team-a", 6));
	policy_scope_free(s);
	assert_int_equal(policy_scope_parse("*,garbage", 1, &s, err, sizeof(err)), 0);
	assert_true(policy_scope_allows(s, "anything", 8));
	policy_scope_free(s);
	assert_false(policy_scope_allows(NULL, "team-a", 6));
	/* Refused, naming the pattern: empty entries, bad characters, a
	 * name too long, a NUL inside. */
	static const char *const bad[] = {",", "a,", ",a", "a,,b", "Team-A", "a b",
					  "-a", "a-", "**", "a*b"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		s = (struct policy_scope *)1;
		err[0] = '\0';
		assert_int_equal(policy_scope_parse(bad[i], strlen(bad[i]), &s, err,
						    sizeof(err)), -EINVAL);
		assert_null(s);
		assert_non_null(strstr(err, "disrupt scope: pattern"));
	}
	assert_int_equal(policy_scope_parse("a\0b", 3, &s, err, sizeof(err)), -EINVAL);
	char big[POLICY_SCOPE_BYTES_MAX + 2];
	memset(big, 'a', sizeof(big));
	assert_int_equal(policy_scope_parse(big, 64, &s, err, sizeof(err)), -EINVAL);
	assert_int_equal(policy_scope_parse(big, 63, &s, err, sizeof(err)), 0);
	policy_scope_free(s);
	assert_int_equal(policy_scope_parse(big, sizeof(big) - 1, &s, err, sizeof(err)),
			 -E2BIG);
	assert_non_null(strstr(err, "4160"));
	/* 65 patterns: one too many; 64 fit. */
	for (size_t i = 0; i < 65; i++) {
		big[2 * i] = 'a';
		big[2 * i + 1] = ',';
	}
	assert_int_equal(policy_scope_parse(big, 2 * 65 - 1, &s, err, sizeof(err)), -E2BIG);
	assert_non_null(strstr(err, "more than 64 patterns"));
	assert_int_equal(policy_scope_parse(big, 2 * 64 - 1, &s, err, sizeof(err)), 0);
	policy_scope_free(s);

	struct policy *p;
	assert_int_equal(parse(two_teams, &p), 0);
	char buf[POLICY_SCOPE_BYTES_MAX + 1];
	/* alice: no disruptNamespaces, so its namespaces. */
	const struct policy_rule *a = policy_find_user(p, "alice");
	assert_int_equal(policy_rule_disrupt_text(a, buf, sizeof(buf)), 15);
	assert_string_equal(buf, "team-a,team-a-*");
	assert_int_equal(policy_rule_disrupt_text(a, buf, 15), -ENOSPC);
	assert_string_equal(buf, "");
	assert_int_equal(policy_scope_parse(buf, 0, &s, err, sizeof(err)), 0);
	policy_scope_free(s);
	assert_int_equal(policy_rule_disrupt_text(a, buf, sizeof(buf)), 15);
	assert_int_equal(policy_scope_parse(buf, strlen(buf), &s, err, sizeof(err)), 0);
	assert_true(policy_scope_allows(s, "team-a-1", 8));
	assert_false(policy_scope_allows(s, "team-b", 6));
	policy_scope_free(s);
	/* bob: disruptNamespaces [] is none; no rule is none. */
	assert_int_equal(policy_rule_disrupt_text(policy_find_user(p, "bob"), buf,
						  sizeof(buf)), 0);
	assert_string_equal(buf, "");
	assert_int_equal(policy_rule_disrupt_text(NULL, buf, sizeof(buf)), 0);
	policy_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_match),
		cmocka_unit_test(test_admit),
		cmocka_unit_test(test_strict),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_file),
		cmocka_unit_test(test_scope),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
