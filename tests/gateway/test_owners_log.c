/* unit.gateway_owners_log: the gateway's owners log (gateway/owners_log.c,
 * shmsched-gateway --owners-file): the line format read strictly and on
 * bounded inputs (a huge line, NUL bytes, too many entries, too many
 * bytes, an unfinished last line), what an append, a release, a forget
 * and a compaction leave in the file, and the file checks at open. */
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

#include "gateway/decode.h"
#include "gateway/owners_log.h"

#define HDR GW_OWNERS_HEADER "\n"

static uint64_t cookie(const char *name)
{
	return gw_cookie(name, strlen(name));
}

static struct gw_owners *parse_ok(const char *text, size_t len,
				  const struct gw_owners_limits *lim, size_t *cut)
{
	struct gw_owners *o = NULL;
	char err[512] = "";
	size_t c = 0;
	int rc = gw_owners_parse(text, len, "owners", lim, &o, &c, err, sizeof(err));
	if (rc != 0)
		fprintf(stderr, "parse: %s\n", err);
	assert_int_equal(rc, 0);
	if (cut != NULL)
		*cut = c;
	return o;
}

static void parse_bad(const char *text, size_t len,
		      const struct gw_owners_limits *lim, int want, const char *says)
{
	struct gw_owners *o = NULL;
	char err[512] = "";
	size_t cut;
	int rc = gw_owners_parse(text, len, "owners", lim, &o, &cut, err, sizeof(err));
	if (rc != want || strstr(err, says) == NULL)
		fprintf(stderr, "want %d \"%s\", got %d \"%s\"\n", want, says, rc, err);
	assert_int_equal(rc, want);
	assert_null(o);
	assert_non_null(strstr(err, says));
}

static void test_format(void **state)
{
	(void)state;
	/* Last '+' wins; a '-' by the owner ends it; escapes decode. */
	const char *t = HDR
		"+ alice ns/a\n"
		"+ bob ns/a\n"
		"+ carol%20smith%0A ns/b%C3%A9\n"
		"+ dave ns/c\n"
		"- dave ns/c\n";
	struct gw_owners *o = parse_ok(t, strlen(t), NULL, NULL);
	assert_int_equal(gw_owners_count(o), 2);
	assert_int_equal(gw_owners_lines(o), 5);
	const char *name = NULL;
	assert_string_equal(gw_owners_find(o, cookie("ns/a"), &name), "bob");
	assert_string_equal(name, "ns/a");
	assert_string_equal(gw_owners_find(o, cookie("ns/b\xc3\xa9"), NULL),
			    "carol smith\n");
	assert_null(gw_owners_find(o, cookie("ns/c"), NULL));
	gw_owners_close(o);
	/* Empty: a new file. */
	o = parse_ok("", 0, NULL, NULL);
	assert_int_equal(gw_owners_count(o), 0);
	gw_owners_close(o);
}

static void test_refused(void **state)
{
	(void)state;
	parse_bad("+ alice ns/a\n", 13, NULL, -EINVAL, "owners:1: expected the header");
	const char *cases[][2] = {
		{HDR "+ alice ns/a\n\n", "owners:3: expected \"+ USER"},
		{HDR "* alice ns/a\n", "owners:2: expected \"+ USER"},
		{HDR "+ alice\n", "owners:2: expected \"+ USER"},
		{HDR "+  ns/a\n", "owners:2: the user is empty"},
		{HDR "+ alice ns/a extra\n", "owners:2: the pod, column 13: a byte that must"},
		{HDR "+ alice ns/a\r\n", "owners:2: the pod, column 13: a byte that must"},
		{HDR "+ alice ns/%41\n", "owners:2: the pod, column 12: an escape of a byte"},
		{HDR "+ alice ns/%c3\n", "owners:2: the pod, column 12: '%' not followed"},
		{HDR "+ alice ns/%4\n", "owners:2: the pod, column 12: '%' not followed"},
		{HDR "+ al%00ice ns/a\n", "owners:2: the user holds a NUL"},
		{HDR "+ alice nsa\n", "owners:2: the pod: no '/'"},
		{HDR "+ alice ns/a/b\n", "owners:2: the pod: a second '/'"},
		{HDR "+ alice /a\n", "owners:2: the pod: the namespace is empty"},
		{HDR "+ alice ns/\n", "owners:2: the pod: the name is empty"},
		{HDR "+ alice ns/%01\n", "owners:2: the pod: a control byte"},
		{HDR "- alice ns/a\n", "owners:2: a release of a pod that has no owner"},
		{HDR "+ alice ns/a\n- bob ns/a\n", "owners:3: a release of a pod by another user"},
	};
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++)
		parse_bad(cases[k][0], strlen(cases[k][0]), NULL, -EINVAL, cases[k][1]);
	/* A user of 256 bytes, a namespace of 64. */
	char buf[1024];
	snprintf(buf, sizeof(buf), HDR "+ %0256d ns/a\n", 0);
	parse_bad(buf, strlen(buf), NULL, -EINVAL, "owners:2: the user, column 258: longer");
	snprintf(buf, sizeof(buf), HDR "+ alice %064d/a\n", 0);
	parse_bad(buf, strlen(buf), NULL, -EINVAL, "the namespace is empty or longer than 63");
}

/* Bounded inputs: a huge line is refused by its length before anything
 * is decoded; a NUL anywhere names its column; entries and bytes past
 * their bounds are refused, not grown into. */
static void test_bounded(void **state)
{
	(void)state;
	size_t huge = 1u << 20;
	char *t = malloc(huge);
	assert_non_null(t);
	memcpy(t, HDR "+ alice ns/", strlen(HDR) + 11);
	memset(t + strlen(HDR) + 11, 'a', huge - strlen(HDR) - 12);
	t[huge - 1] = '\n';
	parse_bad(t, huge, NULL, -EINVAL, "owners:2: longer than 2048 bytes");
	/* The same without its '\n': an unfinished line, cut off. */
	size_t cut = 0;
	struct gw_owners *o = parse_ok(t, huge - 1, NULL, &cut);
	assert_int_equal(cut, huge - 1 - strlen(HDR));
	assert_int_equal(gw_owners_count(o), 0);
	gw_owners_close(o);
	free(t);

	static const char nul[] = HDR "+ alice ns/a\n+ bob ns/\0b\n";
	parse_bad(nul, sizeof(nul) - 1, NULL, -EINVAL, "owners:3: a NUL byte at column 10");
	static const char nul_hdr[] = "shmsched\0gateway owners v1\n";
	parse_bad(nul_hdr, sizeof(nul_hdr) - 1, NULL, -EINVAL, "owners:1: a NUL byte at column 9");

	struct gw_owners_limits lim = {.max_bytes = 1u << 20, .max_entries = 3,
				       .compact_min = 1};
	const char *four = HDR "+ a ns/1\n+ a ns/2\n+ a ns/3\n+ a ns/4\n";
	parse_bad(four, strlen(four), &lim, -E2BIG, "owners:5: more than 3 live entries");
	/* A name replaced or released frees its place. */
	const char *churn = HDR "+ a ns/1\n+ b ns/1\n+ a ns/2\n- a ns/2\n+ a ns/3\n"
		"+ a ns/4\n";
	o = parse_ok(churn, strlen(churn), &lim, NULL);
	assert_int_equal(gw_owners_count(o), 3);
	/* Appends past the bound: -E2BIG, nothing recorded. */
	char err[512];
	struct gw_owner_rec r[2] = {{"a", "ns/5"}, {"a", "ns/1"}};
	assert_int_equal(gw_owners_append(o, r, 2, err, sizeof(err)), -E2BIG);
	assert_null(gw_owners_find(o, cookie("ns/5"), NULL));
	assert_string_equal(gw_owners_find(o, cookie("ns/1"), NULL), "b");
	gw_owners_close(o);

	lim = (struct gw_owners_limits){.max_bytes = 40, .max_entries = 100,
					.compact_min = 1};
	parse_bad(four, strlen(four), &lim, -EFBIG, "over the 40 an owners file");
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	static char buf[1 << 16];
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return buf;
}

/* The file: created 0600, what each call leaves in it, compaction. */
static void test_file(void **state)
{
	(void)state;
	char dir[] = "/tmp/test-owners-XXXXXX", path[64], warn[256], err[512];
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/owners", dir);
	struct gw_owners_limits lim = {.max_bytes = 1u << 20, .max_entries = 100,
				       .compact_min = 2};
	struct gw_owners *o = NULL;
	assert_int_equal(gw_owners_open(path, &lim, &o, warn, sizeof(warn), err,
					sizeof(err)), 0);
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	struct gw_owner_rec r[3] = {{"alice", "ns/a"}, {"bob smith", "ns/b"},
				    {"alice", "ns/c"}};
	assert_int_equal(gw_owners_append(o, r, 3, err, sizeof(err)), 0);
	assert_int_equal(gw_owners_release(o, cookie("ns/c"), err, sizeof(err)), 0);
	assert_string_equal(slurp(path), HDR "+ alice ns/a\n+ bob%20smith ns/b\n"
			    "+ alice ns/c\n- alice ns/c\n");
	/* A user or a name the format cannot hold: nothing written. */
	struct gw_owner_rec bad = {"", "ns/d"};
	assert_int_equal(gw_owners_append(o, &bad, 1, err, sizeof(err)), -EINVAL);
	bad = (struct gw_owner_rec){"x", "nsd"};
	assert_int_equal(gw_owners_append(o, &bad, 1, err, sizeof(err)), -EINVAL);
	/* Dead lines 2 (c's two), live 2: not yet. */
	assert_int_equal(gw_owners_tidy(o, err, sizeof(err)), 0);
	gw_owners_forget(o, cookie("ns/b"));
	/* Dead 3 > live 1: compacted. */
	assert_int_equal(gw_owners_tidy(o, err, sizeof(err)), 1);
	assert_string_equal(slurp(path), HDR "+ alice ns/a\n");
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	/* Appends go to the new file. */
	struct gw_owner_rec e = {"erin", "ns/e"};
	assert_int_equal(gw_owners_append(o, &e, 1, err, sizeof(err)), 0);
	assert_string_equal(slurp(path), HDR "+ alice ns/a\n+ erin ns/e\n");
	gw_owners_close(o);

	/* Read back: as left; retain keeps what keep() says. */
	assert_int_equal(gw_owners_open(path, &lim, &o, warn, sizeof(warn), err,
					sizeof(err)), 0);
	assert_string_equal(warn, "");
	assert_int_equal(gw_owners_count(o), 2);
	assert_string_equal(gw_owners_find(o, cookie("ns/e"), NULL), "erin");
	gw_owners_close(o);

	/* An unfinished last line: cut from the file, with a warning. */
	FILE *f = fopen(path, "ab");
	fputs("+ frank ns/", f);
	fclose(f);
	assert_int_equal(gw_owners_open(path, &lim, &o, warn, sizeof(warn), err,
					sizeof(err)), 0);
	assert_non_null(strstr(warn, "its last line (11 bytes) had no end"));
	assert_string_equal(slurp(path), HDR "+ alice ns/a\n+ erin ns/e\n");
	gw_owners_close(o);

	/* Refused at open, naming the path. */
	assert_int_equal(chmod(path, 0640), 0);
	assert_int_equal(gw_owners_open(path, &lim, &o, warn, sizeof(warn), err,
					sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "mode 0640; expected 0600"));
	assert_non_null(strstr(err, path));
	assert_int_equal(chmod(path, 0600), 0);
	char link[80];
	snprintf(link, sizeof(link), "%s/link", dir);
	assert_int_equal(symlink(path, link), 0);
	assert_int_equal(gw_owners_open(link, &lim, &o, warn, sizeof(warn), err,
					sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "a symbolic link; expected a regular file"));
	f = fopen(path, "ab");
	fputs("+ x yz\n", f);
	fclose(f);
	assert_int_equal(gw_owners_open(path, &lim, &o, warn, sizeof(warn), err,
					sizeof(err)), -EINVAL);
	char want[128];
	snprintf(want, sizeof(want), "%s:4: the pod: no '/'", path);
	assert_non_null(strstr(err, want));
	assert_null(o);
	unlink(link);
	unlink(path);
	rmdir(dir);
}

static bool keep_a(void *arg, uint64_t c)
{
	(void)arg;
	return c == cookie("ns/a");
}

static void test_retain(void **state)
{
	(void)state;
	char dir[] = "/tmp/test-owners-XXXXXX", path[64], warn[256], err[512];
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/owners", dir);
	FILE *f = fopen(path, "wb");
	fputs(HDR "+ alice ns/a\n+ bob ns/ghost\n+ carol ns/gone\n- carol ns/gone\n", f);
	fclose(f);
	chmod(path, 0600);
	struct gw_owners *o = NULL;
	assert_int_equal(gw_owners_open(path, NULL, &o, warn, sizeof(warn), err,
					sizeof(err)), 0);
	assert_int_equal(gw_owners_count(o), 2);
	assert_int_equal(gw_owners_retain(o, keep_a, NULL, err, sizeof(err)), 0);
	assert_int_equal(gw_owners_count(o), 1);
	assert_null(gw_owners_find(o, cookie("ns/ghost"), NULL));
	assert_string_equal(slurp(path), HDR "+ alice ns/a\n");
	/* No PATH.tmp left behind. */
	char tmp[80];
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	assert_int_equal(access(tmp, F_OK), -1);
	gw_owners_close(o);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_format),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_bounded),
		cmocka_unit_test(test_file),
		cmocka_unit_test(test_retain),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
