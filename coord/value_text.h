/* coord/value_text.h: what coord/'s strict decoders of etcd values
 * (coord/host_status.c, coord/quota_escrow_value.c,
 * coord/placement_value.c, coord/forward.c, coord/batch_value.c) share: a canonical decimal
 * (one text, one number), a name's alphabet and a refusal that names why and zeroes what
 * was decoded. Internal to coord/ (not in coord/coord.h). */
#ifndef SHMSCHED_COORD_VALUE_TEXT_H
#define SHMSCHED_COORD_VALUE_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Whether the n bytes at s are a decimal without sign or leading zero
 * ("0" itself is one) of at most max; sets *out when they are. Inline:
 * one pass over at most 20 digits, on each number field decoded. */
static inline bool value_text_decimal(const char *s, size_t n, uint64_t max, uint64_t *out)
{
	if (n == 0 || n > 20 || (n > 1 && s[0] == '0'))
		return false;
	uint64_t v = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		unsigned d = (unsigned)(s[i] - '0');
		if (d > max || v > (max - d) / 10) /* v * 10 + d > max */
			return false;
		v = v * 10 + d;
	}
	*out = v;
	return true;
}

/* Whether the n bytes at s are min to max bytes of [A-Za-z0-9._-]: a
 * label's name or value, a uid, a shard's or a host's name. */
static inline bool value_text_name(const char *s, size_t n, size_t min, size_t max)
{
	if (n < min || n > max)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '-' || c == '.' || c == '_'))
			return false;
	}
	return true;
}

/* value_text_decimal into an int64_t; max is 0 to INT64_MAX. */
static inline bool value_text_decimal_i64(const char *s, size_t n, int64_t max, int64_t *out)
{
	uint64_t v;
	if (max < 0 || !value_text_decimal(s, n, (uint64_t)max, &v))
		return false;
	*out = (int64_t)v;
	return true;
}

/* A refusal: fmt's message into msg (cut to msglen; nothing when msglen
 * is 0), then the out_size bytes at out zeroed (none when out is NULL);
 * returns -EINVAL. The message is made first, so its arguments may point
 * into out (a shard's or a cell's name read so far). */
__attribute__((format(printf, 5, 6)))
int value_text_refuse(void *out, size_t out_size, char *msg, size_t msglen, const char *fmt,
		      ...);

#endif
