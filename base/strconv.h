/* Go's strconv.ParseInt(s, 10, 64), which Kubernetes uses for node label
 * values under Gt/Lt and for quantity exponents: an optional sign, then
 * decimal digits only, within int64; and FormatInt(v, 10), snprintf's
 * "%lld" without its machinery, for messages made on a hot path (EW3 in
 * ingest/producers_preempt.c). Inline: pure and tiny. */
#ifndef SHMSCHED_BASE_STRCONV_H
#define SHMSCHED_BASE_STRCONV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Returns true and sets *out when the `len` bytes at `s` are such a number. */
static inline bool strconv_parse_int64(const char *s, size_t len, int64_t *out)
{
	size_t i = 0;
	bool neg = false;
	if (len > 0 && (s[0] == '+' || s[0] == '-')) {
		neg = s[0] == '-';
		i = 1;
	}
	if (i == len)
		return false;
	uint64_t limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
	uint64_t v = 0;
	for (; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		unsigned d = (unsigned)(s[i] - '0');
		if (v > (limit - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*out = neg ? (int64_t)(0 - v) : (int64_t)v;
	return true;
}

/* The most strconv_format_int64 writes: "-9223372036854775808" and NUL. */
#define STRCONV_INT64_MAX_LEN 21

/* Writes v in decimal (a '-' when negative) and a NUL at `out`, which has
 * room for STRCONV_INT64_MAX_LEN; returns the characters written, the NUL
 * aside. */
static inline size_t strconv_format_int64(char *out, int64_t v)
{
	char digits[20];
	uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
	size_t n = 0, len = 0;
	do {
		digits[n++] = (char)('0' + u % 10);
		u /= 10;
	} while (u != 0);
	if (v < 0)
		out[len++] = '-';
	while (n > 0)
		out[len++] = digits[--n];
	out[len] = '\0';
	return len;
}

#endif
