/* unit.gateway_auth: the gateway's bearer tokens (gateway/auth.c) in
 * kube-apiserver's static token file format
 * (https://kubernetes.io/docs/reference/access-authn-authz/authentication/
 * #static-token-file: "a csv file with a minimum of 3 columns: token, user
 * name, user uid, followed by optional group names"; "If you have more
 * than one group, the column must be double quoted"), the Authorization
 * header, and the file's mode. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gateway/auth.h"

static struct gw_tokens *parse_ok(const char *text)
{
	struct gw_tokens *t = NULL;
	char err[512] = "";
	int rc = gw_tokens_parse(text, strlen(text), &t, err, sizeof(err));
	if (rc != 0)
		fprintf(stderr, "parse: %s\n", err);
	assert_int_equal(rc, 0);
	return t;
}

static void parse_bad(const char *text, int want, const char *says)
{
	struct gw_tokens *t = NULL;
	char err[512] = "";
	assert_int_equal(gw_tokens_parse(text, strlen(text), &t, err, sizeof(err)), want);
	assert_null(t);
	if (strstr(err, says) == NULL)
		fprintf(stderr, "err: %s (wanted %s)\n", err, says);
	assert_non_null(strstr(err, says));
}

/* kube's own example lines: token,user,uid,"group1,group2,group3". */
static void test_kube_format(void **state)
{
	(void)state;
	struct gw_tokens *t = parse_ok(
		"31ada4fd-adec-460c-809a-9e56ceb75269,alice,1001,\"group1,group2,group3\"\n"
		"tok2, bob ,1002\r\n"
		"\n"
		"tok3,carol,1003,system:masters\n"
		"tok4,\"dave, \"\"the admin\"\"\",1004,\" a , b ,,c \"");
	assert_int_equal(gw_tokens_count(t), 4);
	const struct gw_identity *id = gw_tokens_find(
		t, "31ada4fd-adec-460c-809a-9e56ceb75269", 36);
	assert_non_null(id);
	assert_string_equal(id->user, "alice");
	assert_string_equal(id->uid, "1001");
	assert_string_equal(id->groups, "group1,group2,group3");
	assert_true(gw_groups_has(id->groups, "group2"));
	assert_false(gw_groups_has(id->groups, "group"));
	id = gw_tokens_find(t, "tok2", 4);
	assert_non_null(id);
	/* Go's csv TrimLeadingSpace: leading spaces go, trailing ones stay. */
	assert_string_equal(id->user, "bob ");
	assert_string_equal(id->groups, "");
	assert_true(gw_groups_has(gw_tokens_find(t, "tok3", 4)->groups, "system:masters"));
	id = gw_tokens_find(t, "tok4", 4);
	assert_string_equal(id->user, "dave, \"the admin\"");
	assert_string_equal(id->groups, "a,b,c");
	assert_null(gw_tokens_find(t, "tok", 3));
	assert_null(gw_tokens_find(t, "tok22", 5));
	assert_null(gw_tokens_find(t, "", 0));
	gw_tokens_free(t);
}

static void test_refused(void **state)
{
	(void)state;
	parse_bad("tok,user\n", -EINVAL, "line 1: 2 fields; expected at least 3");
	parse_bad("a,b,c\n\nx,y,z\na,d,e\n", -EINVAL, "line 4: the same token as line 1");
	parse_bad(",user,1\n", -EINVAL, "line 1: the token is empty");
	parse_bad("tok,,1\n", -EINVAL, "the user name is empty");
	parse_bad("tok,\"user,1\n", -EINVAL, "a double quote out of place");
	parse_bad("to\"k,user,1\n", -EINVAL, "a double quote out of place");
	parse_bad("to k,user,1\n", -EINVAL, "a space or a control character");
	char big[GW_TOKEN_MAX + 32];
	memset(big, 'x', GW_TOKEN_MAX + 8);
	memcpy(big + GW_TOKEN_MAX + 8, ",u,1\n", 6);
	parse_bad(big, -EINVAL, "the token: longer than 511 bytes");
}

static void test_bearer(void **state)
{
	(void)state;
	size_t len = 0;
	const char *t = gw_bearer_token("Bearer abc", &len);
	assert_non_null(t);
	assert_int_equal(len, 3);
	assert_memory_equal(t, "abc", 3);
	t = gw_bearer_token("bearer   abc  ", &len);
	assert_non_null(t);
	assert_int_equal(len, 3);
	assert_null(gw_bearer_token("Basic YTpi", &len));
	assert_null(gw_bearer_token("Bearer ", &len));
	assert_null(gw_bearer_token("Bearer    ", &len));
	assert_null(gw_bearer_token("Bearerabc", &len));
	assert_null(gw_bearer_token(NULL, &len));
}

/* The file's mode: others may not read it, group or others may not write
 * it; a group that may read it is warned of. */
static void test_file_mode(void **state)
{
	(void)state;
	char path[] = "/tmp/gw-auth-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	const char text[] = "tok,alice,1\n";
	assert_int_equal(write(fd, text, sizeof(text) - 1), (ssize_t)sizeof(text) - 1);
	close(fd);
	struct gw_tokens *t = NULL;
	char warn[512], err[512];
	assert_int_equal(chmod(path, 0644), 0);
	assert_int_equal(gw_tokens_load(path, &t, warn, sizeof(warn), err, sizeof(err)),
			 -EPERM);
	assert_non_null(strstr(err, "mode 0644: other users may read it"));
	assert_int_equal(chmod(path, 0620), 0);
	assert_int_equal(gw_tokens_load(path, &t, warn, sizeof(warn), err, sizeof(err)),
			 -EPERM);
	assert_int_equal(chmod(path, 0640), 0);
	assert_int_equal(gw_tokens_load(path, &t, warn, sizeof(warn), err, sizeof(err)), 0);
	assert_non_null(strstr(warn, "its group"));
	gw_tokens_free(t);
	assert_int_equal(chmod(path, 0600), 0);
	assert_int_equal(gw_tokens_load(path, &t, warn, sizeof(warn), err, sizeof(err)), 0);
	assert_string_equal(warn, "");
	assert_string_equal(gw_tokens_find(t, "tok", 3)->user, "alice");
	gw_tokens_free(t);
	unlink(path);
	assert_int_equal(gw_tokens_load(path, &t, warn, sizeof(warn), err, sizeof(err)),
			 -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kube_format),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_bearer),
		cmocka_unit_test(test_file_mode),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
