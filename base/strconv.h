/* Go's strconv.ParseInt(s, 10, 64), which Kubernetes uses for node label
 * values under Gt/Lt and for quantity exponents: an optional sign, then
 * decimal digits only, within int64. Inline: pure and tiny. */
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

#endif
