/* base/: the clock, the random stream, string to number, error text,
 * single-writer counters, JSON text and the byte hash, each against what its header promises. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/base.h"

static void test_clock_is_monotonic_and_consistent(void **state)
{
	(void)state;
	uint64_t a = now_ns();
	int64_t ms = now_ms();
	double s = now_s();
	uint64_t b = now_ns();
	assert_true(b >= a);
	assert_true((uint64_t)ms * 1000000u <= b);
	assert_true(s * 1e9 >= (double)a - 1e3);
}

static void test_rng_stream_and_hash_agree(void **state)
{
	(void)state;
	/* splitmix64's published first output from seed 0. */
	uint64_t st = 0;
	assert_true(rng_next(&st) == UINT64_C(0xe220a8397b1dcdaf));
	assert_true(rng_hash(0) == UINT64_C(0xe220a8397b1dcdaf));
	/* rng_hash(x) is the value the stream gives from state x. */
	for (uint64_t x = 1; x < 1000; x += 37) {
		uint64_t s2 = x;
		assert_true(rng_hash(x) == rng_next(&s2));
	}
	uint64_t s3 = 42;
	for (int i = 0; i < 10000; i++)
		assert_true(rng_below(&s3, 7) < 7);
}

static void test_strconv_int64(void **state)
{
	(void)state;
	int64_t v = 0;
	assert_true(strconv_parse_int64("123", 3, &v));
	assert_int_equal(v, 123);
	assert_true(strconv_parse_int64("-9223372036854775808", 20, &v));
	assert_true(v == INT64_MIN);
	assert_false(strconv_parse_int64("9223372036854775808", 19, &v));
	assert_false(strconv_parse_int64("12x", 3, &v));
	assert_false(strconv_parse_int64("", 0, &v));
	/* FormatInt: what snprintf's %lld writes, the ends of int64 and of
	 * int32 (a priority's) included; each parses back. */
	const int64_t cases[] = {0, 1, -1, 9, 10, -10, 99, 100, 1000, -1000,
				 INT32_MAX, INT32_MIN, (int64_t)INT32_MAX + 1,
				 INT64_MAX, INT64_MIN, INT64_MIN + 1, 1000000000,
				 -999999999, 1234567890123456789};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char got[STRCONV_INT64_MAX_LEN + 1], want[32];
		memset(got, 'x', sizeof(got));
		size_t n = strconv_format_int64(got, cases[i]);
		int wn = snprintf(want, sizeof(want), "%lld", (long long)cases[i]);
		assert_string_equal(got, want);
		assert_int_equal(n, (size_t)wn);
		assert_true(n < STRCONV_INT64_MAX_LEN);
		assert_true(strconv_parse_int64(got, n, &v));
		assert_true(v == cases[i]);
	}
}

static void test_errmsg_rc_formats_and_returns(void **state)
{
	(void)state;
	char buf[32];
	assert_int_equal(errmsg_rc(-EINVAL, buf, sizeof(buf), "field %s: %d", "x", 7),
			 -EINVAL);
	assert_string_equal(buf, "field x: 7");
	/* Cut to the buffer, always terminated. */
	char small[4];
	errmsg(small, sizeof(small), "abcdef");
	assert_string_equal(small, "abc");
}

static void test_stats_single_writer(void **state)
{
	(void)state;
	uint64_t c = 0;
	stat_inc(&c);
	stat_add(&c, 41);
	assert_true(stat_read(&c) == 42);
}

/* JSON text: escapes, a buffer that grows past its first block, and the
 * answer line in each of its forms (the shape `shmsched place` prints). */
static void test_json_out(void **state)
{
	(void)state;
	struct json_buf b = {0};
	json_buf_string(&b, "a\"b\\c\n\x01\x1f\t\r/\xc3\xa9");
	assert_string_equal(b.data, "\"a\\\"b\\\\c\\n\\u0001\\u001f\\t\\r/\xc3\xa9\"");
	json_buf_reset(&b);
	assert_int_equal(b.len, 0);
	char big[5000];
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	json_buf_printf(&b, "%s%d", big, 7);
	assert_int_equal(b.len, sizeof(big));
	assert_int_equal(b.data[b.len - 1], '7');
	assert_false(b.failed);

	json_buf_reset(&b);
	json_answer_line(&b, &(struct json_answer){.pod = "default/web-1",
						   .node = "n1"});
	assert_string_equal(b.data, "{\"pod\":\"default/web-1\",\"node\":\"n1\"}\n");
	json_buf_reset(&b);
	json_answer_line(&b, &(struct json_answer){.pod = "p/t", .node = "n2",
						   .gpu_mask = 0x9, .gpu_milli = 500,
						   .cpuset = "0-3"});
	assert_string_equal(b.data, "{\"pod\":\"p/t\",\"node\":\"n2\",\"gpus\":[0,3],"
			    "\"gpu_milli\":500,\"cpuset\":\"0-3\"}\n");
	json_buf_reset(&b);
	json_answer_line(&b, &(struct json_answer){.pod = "d/h",
						   .message = "0/3 \"x\""});
	assert_string_equal(b.data, "{\"pod\":\"d/h\",\"node\":null,"
			    "\"message\":\"0/3 \\\"x\\\"\"}\n");
	json_buf_free(&b);
	assert_null(b.data);
}

/* The byte hash is stable (a stored value must find its key again after a
 * restart): FNV-1a's published value for "a", finalised by splitmix64. */
static void test_hash_is_stable(void **state)
{
	(void)state;
	assert_true(hash64_add(HASH64_SEED, "a", 1) == UINT64_C(0xaf63dc4c8601ec8c));
	assert_true(hash64("a", 1) == rng_hash(UINT64_C(0xaf63dc4c8601ec8c)));
	assert_true(hash64("default/a", 9) != hash64("default/b", 9));
	assert_true(hash64_add(hash64_add(HASH64_SEED, "ab", 2), "c", 1) ==
		    hash64_add(HASH64_SEED, "abc", 3));
}

static char *read_all(const char *path)
{
	FILE *f = fopen(path, "r");
	static char buf[8192];
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
	buf[n] = '\0';
	if (f)
		fclose(f);
	return buf;
}

/* Log lines: their time, JSON escaping, a file reopened by its path after
 * it was moved (SIGHUP under logrotate), the level honoured. */
static void test_log_file_json_reopen(void **state)
{
	(void)state;
	char dir[] = "/tmp/shmsched-log-XXXXXX", path[64], moved[64];
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/x.log", dir);
	snprintf(moved, sizeof(moved), "%s/x.log.1", dir);
	enum log_format fmt;
	assert_int_equal(log_format_parse("yaml", &fmt), -EINVAL);
	assert_int_equal(log_format_parse("json", &fmt), 0);
	assert_int_equal(log_open("tester", fmt, "/nonexistent/dir/x.log"), -ENOENT);
	assert_int_equal(log_open("tester", fmt, path), 0);
	log_set_level(LOG_LEVEL_INFO);
	log_msg(LOG_LEVEL_WARN, "a \"quoted\" word\tand a tab");
	log_msg(LOG_LEVEL_DEBUG, "not at this level");
	const char *text = read_all(path);
	assert_non_null(strstr(text, "\"level\":\"warn\",\"program\":\"tester\","
			       "\"msg\":\"a \\\"quoted\\\" word\\u0009and a tab\"}\n"));
	assert_memory_equal(text, "{\"time\":\"20", 11);
	assert_int_equal(text[32], 'Z'); /* {"time":"2026-11-24T06:29:00.123Z */
	assert_null(strstr(text, "not at this level"));
	assert_int_equal(rename(path, moved), 0);
	assert_int_equal(log_reopen(), 0);
	log_msg(LOG_LEVEL_ERROR, "after");
	assert_non_null(strstr(read_all(path), "\"msg\":\"after\""));
	assert_null(strstr(read_all(moved), "after"));
	assert_int_equal(log_open("tester", LOG_FORMAT_TEXT, NULL), 0);
	log_msg(LOG_LEVEL_ERROR, "text now");
	assert_non_null(strstr(read_all(path), "tester: error: text now\n"));
	unlink(path);
	unlink(moved);
	rmdir(dir);
}

/* kubectl's forms: "2" cores, "1500m"; Quantity's canonical suffixes;
 * durations scaled so no figure reads "2617245.7 us". */
static void test_units_for_people(void **state)
{
	(void)state;
	char b[32];
	assert_string_equal(units_cpu(2000, b, sizeof(b)), "2");
	assert_string_equal(units_cpu(1500, b, sizeof(b)), "1500m");
	assert_string_equal(units_cpu(100, b, sizeof(b)), "100m");
	assert_string_equal(units_cpu(0, b, sizeof(b)), "0");
	assert_string_equal(units_bytes(4LL << 30, b, sizeof(b)), "4Gi");
	assert_string_equal(units_bytes(128LL << 20, b, sizeof(b)), "128Mi");
	assert_string_equal(units_bytes(1536LL << 20, b, sizeof(b)), "1536Mi");
	assert_string_equal(units_bytes(1000000000, b, sizeof(b)), "1G");
	assert_string_equal(units_bytes(1500, b, sizeof(b)), "1500");
	assert_string_equal(units_bytes(1023, b, sizeof(b)), "1023");
	assert_string_equal(units_bytes(0, b, sizeof(b)), "0");
	assert_string_equal(units_bytes(1LL << 60, b, sizeof(b)), "1Ei");
	assert_string_equal(units_us(0.354, b, sizeof(b)), "0.35 us");
	assert_string_equal(units_us(840.24, b, sizeof(b)), "840.2 us");
	assert_string_equal(units_us(999.96, b, sizeof(b)), "1.00 ms");
	assert_string_equal(units_us(12500, b, sizeof(b)), "12.5 ms");
	assert_string_equal(units_us(2617245.7, b, sizeof(b)), "2.62 s");
	assert_string_equal(units_us(999999, b, sizeof(b)), "1.00 s");
	assert_string_equal(units_us(125e6, b, sizeof(b)), "125.0 s");
	/* Truncated, still terminated. */
	assert_string_equal(units_us(2617245.7, b, 3), "2.");
}

/* file_read_all: the whole file (past the first 64 KiB buffer, so it
 * grows), exactly `max` bytes allowed and one more refused (EFBIG), a
 * missing file's errno. */
static void test_file_read_all(void **state)
{
	(void)state;
	char path[] = "/tmp/shmsched-file-read-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	size_t n = 200000;
	char *data = malloc(n);
	for (size_t i = 0; i < n; i++)
		data[i] = (char)('a' + i % 26);
	assert_int_equal(write(fd, data, n), (ssize_t)n);
	close(fd);
	char *buf = NULL;
	size_t len = 0;
	assert_int_equal(file_read_all(path, 0, &buf, &len), 0);
	assert_int_equal(len, n);
	assert_memory_equal(buf, data, n);
	free(buf);
	assert_int_equal(file_read_all(path, n, &buf, &len), 0);
	assert_int_equal(len, n);
	free(buf);
	assert_int_equal(file_read_all(path, n - 1, &buf, &len), -EFBIG);
	unlink(path);
	assert_int_equal(file_read_all(path, 0, &buf, &len), -ENOENT);
	free(data);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_clock_is_monotonic_and_consistent),
		cmocka_unit_test(test_rng_stream_and_hash_agree),
		cmocka_unit_test(test_strconv_int64),
		cmocka_unit_test(test_errmsg_rc_formats_and_returns),
		cmocka_unit_test(test_stats_single_writer),
		cmocka_unit_test(test_json_out),
		cmocka_unit_test(test_hash_is_stable),
		cmocka_unit_test(test_log_file_json_reopen),
		cmocka_unit_test(test_units_for_people),
		cmocka_unit_test(test_file_read_all),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
