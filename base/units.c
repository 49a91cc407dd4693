/* Numbers for people (base/units.h): pure formatting, no state. */
#include <inttypes.h>
#include <stdio.h>

#include "base/units.h"

const char *units_cpu(int64_t milli, char *buf, size_t len)
{
	if (milli % 1000 == 0)
		snprintf(buf, len, "%" PRId64, milli / 1000);
	else
		snprintf(buf, len, "%" PRId64 "m", milli);
	return buf;
}

const char *units_bytes(int64_t bytes, char *buf, size_t len)
{
	static const char *const bin[] = {"Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
	static const char *const dec[] = {"k", "M", "G", "T", "P", "E"};
	if (bytes != 0) {
		/* 2^60 and 10^18 both fit int64; test from the largest. */
		for (int i = 5; i >= 0; i--) {
			int64_t unit = (int64_t)1 << (10 * (i + 1));
			if (bytes % unit == 0) {
				snprintf(buf, len, "%" PRId64 "%s", bytes / unit, bin[i]);
				return buf;
			}
		}
		int64_t unit = 1000000000000000000;
		for (int i = 5; i >= 0; i--, unit /= 1000) {
			if (bytes % unit == 0) {
				snprintf(buf, len, "%" PRId64 "%s", bytes / unit, dec[i]);
				return buf;
			}
		}
	}
	snprintf(buf, len, "%" PRId64, bytes);
	return buf;
}

/* %.*f with enough decimals for three significant digits (at most 2). */
static int decimals(double v)
{
	return v < 10.0 ? 2 : v < 1000.0 ? 1 : 0;
}

const char *units_us(double us, char *buf, size_t len)
{
	/* The bounds sit where rounding would print "1000.0": that is the
	 * next unit's "1.00". */
	if (!(us >= 999.95)) { /* also negative and NaN */
		snprintf(buf, len, "%.*f us", us >= 0 && us < 10.0 ? 2 : 1, us);
	} else if (us < 999995.0) {
		double ms = us / 1e3;
		snprintf(buf, len, "%.*f ms", decimals(ms), ms);
	} else {
		double s = us / 1e6;
		snprintf(buf, len, "%.*f s", decimals(s), s);
	}
	return buf;
}
