/* unit.quantity: Kubernetes quantities (ingest/quantity.c). Expected values
 * come from k8s.io/apimachinery/pkg/api/resource/quantity_test.go
 * (TestQuantityParse) and from Quantity.MilliValue / Value, which round up;
 * bounded-input tests here, tests/fuzz/fuzz_quantity.c explores the rest. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ingest/quantity.h"

#define ERR INT64_MIN /* in the table: this unit fails with `err` */

struct valid_case {
	const char *text;
	int64_t milli; /* or ERR: -ERANGE in milli */
	int64_t units;
};

static const struct valid_case valid[] = {
	{"0", 0, 0},
	{"-0", 0, 0},
	{"+0", 0, 0},
	{"0.0", 0, 0},
	{"-0.000", 0, 0},
	{"0Mi", 0, 0},
	{"0e99999", 0, 0},
	{"500m", 500, 1},
	{"100m", 100, 1},
	{"1m", 1, 1},
	{"1", 1000, 1},
	{"0.5", 500, 1},
	{".5", 500, 1},
	{"5.", 5000, 5},
	{"1.5", 1500, 2},
	{"0.0001", 1, 1},     /* below a millicore: rounds up to one */
	{"1n", 1, 1},         /* a nanocore is still some cpu */
	{"3.001n", 1, 1},
	{"1u", 1, 1},
	{"1500u", 2, 1},
	{"1k", 1000000, 1000},
	{"1.5k", 1500000, 1500},
	{"100.035k", 100035000, 100035},
	{"0.0005k", 500, 1},
	{"1Ki", 1024000, 1024},
	{"1Gi", INT64_C(1073741824000), INT64_C(1073741824)},
	{"100M", INT64_C(100000000000), 100000000},
	{"4G", INT64_C(4000000000000), INT64_C(4000000000)},
	{"4Gi", INT64_C(4294967296000), INT64_C(4294967296)},
	{"1e3", 1000000, 1000},
	{"1E3", 1000000, 1000},
	{"1e+3", 1000000, 1000},
	{"1e03", 1000000, 1000},
	{"1E-3", 1, 1},
	{"1.2e3", 1200000, 1200},
	{"1.3E+6", INT64_C(1300000000), 1300000},
	{"0.5e-2", 5, 1},
	{"1.1E-9", 1, 1},
	{"7.123456M", INT64_C(7123456000), 7123456},
	{"6.987654321G", INT64_C(6987654321000), INT64_C(6987654321)},
	{"1.01E", ERR, INT64_C(1010000000000000000)},
	{"1E", ERR, INT64_C(1000000000000000000)},
	{"1.G", INT64_C(1000000000000), 1000000000},
	{"0.5Mi", 524288000, 524288},
	{"100.035Ki", 102435840, 102436}, /* 102435.84 */
	{"0.05Gi", INT64_C(53687091200), 53687092}, /* 53687091.2 */
	{"0.000000000001Ki", 1, 1},
	{"7Ei", ERR, INT64_C(8070450532247928832)},
	{"9223372036854775807", ERR, INT64_MAX},
	{"9223372036854775807m", INT64_MAX, INT64_C(9223372036854776)},
	{"9223372036854775.807", INT64_MAX, INT64_C(9223372036854776)},
	{"0000000000000000000000000001", 1000, 1},
	{"1.000000000000000000000000000", 1000, 1},
	{"0.00000000000000000000000001", 1, 1},
	{"12345678901234567890123e-20", 123457, 124},
	{"1e-99999999999", 1, 1}, /* tiny but positive: rounds up */
};

static void test_valid_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(valid) / sizeof(valid[0]); i++) {
		const struct valid_case *c = &valid[i];
		int64_t out = -7;
		int rc = quantity_parse(c->text, strlen(c->text), QUANTITY_MILLI, &out);
		if (c->milli == ERR) {
			if (rc != -ERANGE)
				fail_msg("%s milli: rc %d, want -ERANGE", c->text, rc);
		} else if (rc != 0 || out != c->milli) {
			fail_msg("%s milli: rc %d value %lld, want %lld", c->text, rc,
				 (long long)out, (long long)c->milli);
		}
		rc = quantity_parse(c->text, strlen(c->text), QUANTITY_UNITS, &out);
		if (rc != 0 || out != c->units)
			fail_msg("%s units: rc %d value %lld, want %lld", c->text, rc,
				 (long long)out, (long long)c->units);
	}
}

static int parse_units(const char *s, int64_t *out)
{
	return quantity_parse(s, strlen(s), QUANTITY_UNITS, out);
}

static void test_decimal_is_smaller_than_binary(void **state)
{
	(void)state;
	int64_t g, gi;
	assert_int_equal(parse_units("4G", &g), 0);
	assert_int_equal(parse_units("4Gi", &gi), 0);
	assert_true(g < gi);
}

static void test_overflow_is_erange(void **state)
{
	(void)state;
	/* Kubernetes caps binary quantities at 2^63-1 and lets Value()
	 * overflow for decimal ones; we refuse both (quantity.h). */
	static const char *const cases[] = {
		"12Ei", "8Ei", "9Ei", "9223372036854775808", "9223372036854775807Ki",
		"10E", "12E", "1e19", "99999999999999999999", "1e99999999999",
		"100000000000000000000000000000000000000", "8192Pi",
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int64_t out;
		int rc = parse_units(cases[i], &out);
		if (rc != -ERANGE)
			fail_msg("%s: rc %d, want -ERANGE", cases[i], rc);
	}
	int64_t out;
	assert_int_equal(quantity_parse("9223372036854776", 16, QUANTITY_MILLI, &out),
			 -ERANGE);
	assert_int_equal(quantity_parse("9223372036854775", 16, QUANTITY_MILLI, &out), 0);
	assert_int_equal(out, INT64_C(9223372036854775000));
}

static void test_negative_is_edom(void **state)
{
	(void)state;
	static const char *const cases[] = {
		"-1", "-0.0001", "-1n", "-1Gi", "-12Ei", "-1e-30", "-.5",
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int64_t out;
		int rc = parse_units(cases[i], &out);
		if (rc != -EDOM)
			fail_msg("%s: rc %d, want -EDOM", cases[i], rc);
		rc = quantity_parse(cases[i], strlen(cases[i]), QUANTITY_MILLI, &out);
		if (rc != -EDOM)
			fail_msg("%s milli: rc %d, want -EDOM", cases[i], rc);
	}
}

static void test_invalid_is_einval(void **state)
{
	(void)state;
	/* TestQuantityParse's invalid list, and more. */
	static const char *const cases[] = {
		"", " ", " 1", "1 ", "1 Gi", "12x", "1.2.3", "1.1.M", "1+1.0M",
		"0.1mi", "0.1am", "aoeu", ".5i", "1i", "-3.01i", "-3.01e-", "Mi",
		"m", "1ki", "1K", "1KI", "1mi", "1e", "1e+", "1e-", "1E+", "1ee3",
		"1e3e", "1e3.5", "1eM3", "1Ee3", "1EE", "1Mi3", "1e+-3", "1e 3",
		".", "+", "-", "+-1", "--1", "1..", "..1", "1.e", "e3", "0x10",
		"1e99999999999999999999", "1,5", "1_000", "١", "1\n", "Gi1",
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int64_t out = 42;
		int rc = parse_units(cases[i], &out);
		if (rc != -EINVAL)
			fail_msg("\"%s\": rc %d, want -EINVAL", cases[i], rc);
		assert_int_equal(out, 42); /* untouched on error */
	}
	int64_t out;
	assert_int_equal(quantity_parse("1\0", 2, QUANTITY_UNITS, &out), -EINVAL);
	assert_int_equal(quantity_parse(NULL, 0, QUANTITY_UNITS, &out), -EINVAL);
}

/* Only `len` bytes are read: every prefix, from a buffer with no NUL after
 * it, parses as the same string would on its own. */
static void test_prefixes_are_bounded(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(valid) / sizeof(valid[0]); i++) {
		const char *text = valid[i].text;
		size_t len = strlen(text);
		for (size_t k = 0; k <= len; k++) {
			char *exact = malloc(k > 0 ? k : 1); /* ASan sees overreads */
			assert_non_null(exact);
			memcpy(exact, text, k);
			char copy[128];
			memcpy(copy, text, k);
			copy[k] = '\0';
			for (int unit = QUANTITY_MILLI; unit <= QUANTITY_UNITS; unit++) {
				int64_t a = -1, b = -1;
				int ra = quantity_parse(exact, k, (enum quantity_unit)unit, &a);
				int rb = quantity_parse(copy, strlen(copy),
							(enum quantity_unit)unit, &b);
				assert_int_equal(ra, rb);
				if (ra == 0)
					assert_int_equal(a, b);
			}
			free(exact);
		}
	}
}

static void test_random_bytes_never_crash(void **state)
{
	(void)state;
	static const char alphabet[] = "0123456789.+-eEinumkKMGTP \x01\xff";
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	for (int round = 0; round < 200000; round++) {
		char buf[24];
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		size_t len = (size_t)(x % sizeof(buf));
		for (size_t k = 0; k < len; k++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			buf[k] = (round & 1) ? (char)(x & 0xff) :
					       alphabet[x % (sizeof(alphabet) - 1)];
		}
		int64_t m = 0, u = 0;
		int rm = quantity_parse(buf, len, QUANTITY_MILLI, &m);
		int ru = quantity_parse(buf, len, QUANTITY_UNITS, &u);
		assert_true(rm == 0 || rm == -EINVAL || rm == -ERANGE || rm == -EDOM);
		assert_true(ru == 0 || ru == -EINVAL || ru == -ERANGE || ru == -EDOM);
		if (rm == 0) {
			assert_int_equal(ru, 0);
			assert_int_equal(u, m / 1000 + (m % 1000 != 0));
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid_table),
		cmocka_unit_test(test_decimal_is_smaller_than_binary),
		cmocka_unit_test(test_overflow_is_erange),
		cmocka_unit_test(test_negative_is_edom),
		cmocka_unit_test(test_invalid_is_einval),
		cmocka_unit_test(test_prefixes_are_bounded),
		cmocka_unit_test(test_random_bytes_never_crash),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
