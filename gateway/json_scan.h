/* A strict JSON scanner with no tree: it checks that bytes hold one JSON
 * value (RFC 8259: its grammar, strings of UTF-8 as RFC 3629 defines it,
 * escapes with their surrogate pairs) and says where the value ends and,
 * for an object, where each top-level member's key and value lie.
 *
 * What it is for: gateway/decode.c's fast path, which reuses a pod spec
 * decoded before when a body's `spec` bytes equal it, and must find those
 * bytes without building a tree (see decode.c's design note).
 *
 * It refuses what jansson refuses, but for these, which jansson alone
 * refuses (the fast path leaves them to jansson: it decodes only spans
 * whose bytes jansson accepted before, or hands the value to jansson):
 * "\u0000" in a string, integers beyond int64, reals beyond double, and
 * nesting deeper than jansson's 2048 (this scanner's bound is its
 * caller's, at most JSON_SCAN_MAX_DEPTH).
 *
 * Cost: one pass over the value's bytes, no allocation, no recursion
 * (an explicit stack of max_depth bytes on the caller's stack frame).
 * Threads: none shared.
 */
#ifndef SHMSCHED_GATEWAY_JSON_SCAN_H
#define SHMSCHED_GATEWAY_JSON_SCAN_H

#include <stdbool.h>
#include <stddef.h>

/* The deepest nesting json_scan_value() takes (objects and arrays). */
#define JSON_SCAN_MAX_DEPTH 256u
/* Top-level members recorded (more are counted, not recorded). */
#define JSON_SCAN_MAX_MEMBERS 8u

/* One member of the top-level object: offsets into the scanned text. */
struct json_scan_member {
	size_t key_off, key_len; /* the key's bytes, without its quotes */
	bool key_escaped;        /* the key holds a backslash escape */
	size_t value_off, value_len; /* the value's bytes, quotes included */
	bool value_escaped;      /* a string value holding an escape */
};

struct json_scan {
	size_t end;        /* offset just past the value */
	bool is_object;    /* the value is an object: members below */
	size_t n_members;  /* top-level members (all of them) */
	struct json_scan_member m[JSON_SCAN_MAX_MEMBERS]; /* the first ones */
};

/* Scans one JSON value at the start of text[0..len) (no whitespace
 * before it; bytes after it are not read). max_depth: the deepest nesting
 * taken, at most JSON_SCAN_MAX_DEPTH (more is treated as that).
 * Returns 0 with *out, or
 *   -EINVAL  not one whole JSON value (err_off: the first bad byte)
 *   -E2BIG   nested deeper than max_depth (err_off: where) */
int json_scan_value(const char *text, size_t len, unsigned max_depth,
		    struct json_scan *out, size_t *err_off);

#endif
