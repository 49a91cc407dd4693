/* Kubernetes quantities: see quantity.h.
 *
 * Grammar (k8s.io/apimachinery/pkg/api/resource, quantity.go and suffix.go):
 *   [+-] digits [. digits] suffix     (".5" and "5." too; one digit at least)
 *   suffix: "" n u m k M G T P E | Ki Mi Gi Ti Pi Ei | (e|E) [+-] digits
 * The exponent after e/E is read as strconv.ParseInt reads it (int64).
 *
 * The value is digits * 10^exp10 * 2^exp2, kept exact: the digits are never
 * turned into a float. Scaled by 10^3 for QUANTITY_MILLI, it splits into an
 * integer part P (at most 19 significant digits, or it cannot fit) and a
 * fraction F < 1; the result is P * 2^exp2 + ceil(F * 2^exp2), every step
 * checked against INT64_MAX. ceil(F * 2^exp2) is computed by one right-to-
 * left pass of long multiplication over the fraction's digits (a carry below
 * 2^60 keeps each step in a uint64). Cost: O(len), no allocation.
 *
 * Rounding: Kubernetes rounds a parsed value up to whole nanounits and
 * MilliValue / Value round up again; rounding up twice to nested grids is
 * rounding up once, so the result is ceil(value * 10^3) or ceil(value).
 */
#include "ingest/quantity.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "base/base.h"

/* Exponents beyond this are saturated: any nonzero digit then makes the
 * value too large (-ERANGE) or a positive value below one nanounit (which
 * rounds up to 1). Far above any input length, so digits never reach it. */
#define EXP10_CLAMP (INT64_C(1) << 40)

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* The suffix as quantitySuffixer.interpret reads it. */
static bool parse_suffix(const char *s, size_t len, int64_t *exp10, unsigned *exp2)
{
	static const struct {
		char text[3];
		int8_t exp10;
		uint8_t exp2;
	} table[] = {
		{"", 0, 0},    {"n", -9, 0},  {"u", -6, 0},  {"m", -3, 0},
		{"k", 3, 0},   {"M", 6, 0},   {"G", 9, 0},   {"T", 12, 0},
		{"P", 15, 0},  {"E", 18, 0},  {"Ki", 0, 10}, {"Mi", 0, 20},
		{"Gi", 0, 30}, {"Ti", 0, 40}, {"Pi", 0, 50}, {"Ei", 0, 60},
	};
	*exp10 = 0;
	*exp2 = 0;
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		if (strlen(table[i].text) == len &&
		    memcmp(table[i].text, s, len) == 0) {
			*exp10 = table[i].exp10;
			*exp2 = table[i].exp2;
			return true;
		}
	}
	if (len > 1 && (s[0] == 'e' || s[0] == 'E'))
		return strconv_parse_int64(s + 1, len - 1, exp10);
	return false;
}

/* The digits of "int.frac" as one sequence, without the point. */
struct digits {
	const char *int_part, *frac;
	size_t int_len, frac_len;
};

static unsigned digit_at(const struct digits *d, size_t k)
{
	char c = k < d->int_len ? d->int_part[k] : d->frac[k - d->int_len];
	return (unsigned)(c - '0');
}

int quantity_parse(const char *s, size_t len, enum quantity_unit unit,
		   int64_t *out)
{
	size_t i = 0;
	bool negative = false;
	if (s == NULL || len == 0)
		return -EINVAL;
	if (s[0] == '+' || s[0] == '-') {
		negative = s[0] == '-';
		i++;
	}
	struct digits d = {.int_part = s + i};
	while (i < len && is_digit(s[i]))
		i++;
	d.int_len = (size_t)(s + i - d.int_part);
	d.frac = s + i;
	if (i < len && s[i] == '.') {
		d.frac = s + ++i;
		while (i < len && is_digit(s[i]))
			i++;
		d.frac_len = (size_t)(s + i - d.frac);
	}
	/* Kubernetes' scanner reads "", "+", "." and "Mi" as 0; its grammar
	 * (and ours) wants a digit. */
	if (d.int_len + d.frac_len == 0)
		return -EINVAL;
	int64_t exp10;
	unsigned exp2;
	if (!parse_suffix(s + i, len - i, &exp10, &exp2))
		return -EINVAL;

	size_t total = d.int_len + d.frac_len, first = 0;
	while (first < total && digit_at(&d, first) == 0)
		first++;
	if (first == total) {
		*out = 0; /* "-0" too */
		return 0;
	}
	if (negative)
		return -EDOM;

	/* Power of ten of the last digit, after scaling for the unit. */
	if (exp10 > EXP10_CLAMP)
		exp10 = EXP10_CLAMP;
	if (exp10 < -EXP10_CLAMP)
		exp10 = -EXP10_CLAMP;
	int64_t e = exp10 - (int64_t)d.frac_len + (unit == QUANTITY_MILLI ? 3 : 0);

	size_t n_sig = total - first;
	uint64_t n_frac = e < 0 ? (uint64_t)-e : 0; /* digits right of the point */
	size_t n_int = n_sig > n_frac ? n_sig - (size_t)n_frac : 0;
	if (n_int > 19)
		return -ERANGE; /* >= 10^19 > INT64_MAX */

	uint64_t v = 0;
	for (size_t k = first; k < first + n_int; k++)
		v = v * 10 + digit_at(&d, k);
	if (v > (uint64_t)INT64_MAX)
		return -ERANGE;
	/* A positive e means n_frac is 0 and v >= 1, so this ends by the 19th
	 * step whatever e is. */
	for (int64_t k = 0; k < e; k++) {
		if (v > (uint64_t)INT64_MAX / 10)
			return -ERANGE;
		v *= 10;
	}
	if (v > ((uint64_t)INT64_MAX >> exp2))
		return -ERANGE;
	v <<= exp2;

	/* ceil(F * 2^exp2): long multiplication from the last digit. Every
	 * carry is below 2^exp2, so t < 10 * 2^60 < 2^64. */
	uint64_t carry = 0;
	bool inexact = false;
	for (size_t k = total; k > first + n_int; k--) {
		uint64_t t = ((uint64_t)digit_at(&d, k - 1) << exp2) + carry;
		inexact |= t % 10 != 0;
		carry = t / 10;
	}
	/* Zeros between the point and the first significant digit. */
	for (uint64_t z = n_frac - (n_sig - n_int); z > 0 && carry > 0; z--) {
		inexact |= carry % 10 != 0;
		carry /= 10;
	}
	uint64_t frac_up = carry + (inexact ? 1 : 0);
	if (v > (uint64_t)INT64_MAX - frac_up)
		return -ERANGE;
	*out = (int64_t)(v + frac_up);
	return 0;
}
