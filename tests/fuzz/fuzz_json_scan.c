/* Fuzz target: gateway/json_scan.c, the strict JSON scanner of the
 * gateway's fast path, against jansson on the same bytes. The scanner
 * takes a whole value (only whitespace after it) exactly when jansson
 * (JSON_DECODE_ANY) does, but for jansson's own bounds, which the scanner
 * leaves to it (json_scan.h): "\u0000", integers past int64, reals past
 * double, and jansson's own leniency of a NUL after a number or literal
 * (below); nesting past the scanner's bound is refused with E2BIG. What it
 * takes holds together: its end within the bytes, each recorded member's
 * key and value inside the value, each value scanned alone ending where
 * the member said, and as many members as jansson's object (when jansson
 * saw no key twice). What it refuses names a byte within the input. */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "gateway/gateway.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* jansson's refusals the scanner does not make (its load.c's texts). */
static bool jansson_only(const char *text)
{
	return strstr(text, "\\u0000") != NULL || strstr(text, "too big") != NULL ||
	       strstr(text, "overflow") != NULL || strstr(text, "depth") != NULL ||
	       strstr(text, "NUL") != NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* The scanner starts at the value (json_scan.h: its callers skip
	 * the whitespace before it); jansson reads the whole input. */
	size_t lead = 0;
	while (lead < size && (data[lead] == ' ' || data[lead] == '\t' ||
			       data[lead] == '\n' || data[lead] == '\r'))
		lead++;
	const char *s = (const char *)data + lead;
	size -= lead;
	struct json_scan sc;
	size_t bad = SIZE_MAX;
	int rc = json_scan_value(s, size, JSON_SCAN_MAX_DEPTH, &sc, &bad);
	if (rc != 0 && (bad > size || (rc != -EINVAL && rc != -E2BIG)))
		abort();
	if (rc == -E2BIG)
		return 0; /* past the scanner's bound: jansson's own (2048) differs */
	bool whole = false;
	if (rc == 0) {
		if (sc.end == 0 || sc.end > size)
			abort();
		whole = true;
		for (size_t i = sc.end; i < size; i++)
			if (s[i] != ' ' && s[i] != '\t' && s[i] != '\n' && s[i] != '\r')
				whole = false;
		size_t n = sc.n_members < JSON_SCAN_MAX_MEMBERS ? sc.n_members
							      : JSON_SCAN_MAX_MEMBERS;
		if (!sc.is_object && sc.n_members != 0)
			abort();
		for (size_t i = 0; i < n; i++) {
			const struct json_scan_member *m = &sc.m[i];
			struct json_scan one;
			size_t b2;
			if (m->key_off == 0 || m->key_off + m->key_len >= sc.end ||
			    m->value_off + m->value_len > sc.end || m->value_len == 0 ||
			    json_scan_value(s + m->value_off, m->value_len,
					    JSON_SCAN_MAX_DEPTH, &one, &b2) != 0 ||
			    one.end != m->value_len)
				abort();
		}
	}
	json_error_t je;
	json_t *v = json_loadb((const char *)data, lead + size,
			       JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &je);
	bool dup = v == NULL && strstr(je.text, "duplicate") != NULL;
	/* jansson 2.14 skips a NUL right after a number, true, false or null
	 * ("2\0", "6\0 ", "[true\0]"): its lexer reads that byte as the
	 * token's end. The scanner stops there, which costs nothing (a
	 * refusal takes jansson's path). So where the scanner stopped at
	 * such a NUL, jansson may take the input (what follows it is then
	 * not compared). */
	size_t at = rc == 0 ? sc.end : bad;
	bool nul_after_scalar = v != NULL && at > 0 && at < size &&
				s[at] == '\0' &&
				memchr("0123456789el", s[at - 1], 12) != NULL;
	if (v != NULL && !whole && !nul_after_scalar)
		abort(); /* jansson took what the scanner refused */
	if (v == NULL && whole && !dup && !jansson_only(je.text))
		abort(); /* the scanner took what jansson refused */
	if (v != NULL && whole && json_is_object(v) &&
	    json_object_size(v) != sc.n_members)
		abort();
	json_decref(v);
	return 0;
}
