/* A strict JSON scanner with no tree: see json_scan.h.
 *
 * One loop over the bytes with an explicit stack of open containers ('{'
 * or '['), so depth costs a byte of stack frame, never a C frame: the
 * bound is max_depth. Three states, as labels: `value` (a value starts at
 * i), `key` (an object's member starts at i: its key, ':' and value) and
 * `after` (a value ended at i: ',' or the container's close, or the end
 * at depth 0). Top-level members are recorded when `key` runs at depth 1
 * and closed when `after` returns to depth 1.
 *
 * UTF-8 is RFC 3629's: no overlong forms, no surrogates (U+D800..DFFF),
 * nothing past U+10FFFF; jansson checks the same (its utf.c). Escapes:
 * RFC 8259's eight and \uXXXX, a high surrogate only with its low one,
 * a low one never alone (jansson's "invalid Unicode" cases).
 */
#include "gateway/json_scan.h"

#include <errno.h>
#include <stdint.h>

static size_t skip_ws(const unsigned char *s, size_t len, size_t i)
{
	while (i < len && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' ||
			   s[i] == '\r'))
		i++;
	return i;
}

/* The length of the UTF-8 sequence of a non-ASCII byte at s[0], or 0. */
static size_t utf8_seq(const unsigned char *s, size_t avail)
{
	unsigned c = s[0];
	size_t n;
	unsigned lo = 0x80, hi = 0xbf; /* the second byte's range */
	if (c >= 0xc2 && c <= 0xdf) {
		n = 2;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		if (c == 0xe0)
			lo = 0xa0; /* overlong */
		else if (c == 0xed)
			hi = 0x9f; /* surrogates */
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		if (c == 0xf0)
			lo = 0x90; /* overlong */
		else if (c == 0xf4)
			hi = 0x8f; /* past U+10FFFF */
	} else {
		return 0; /* a continuation byte, 0xc0, 0xc1, 0xf5.. */
	}
	if (avail < n || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t k = 2; k < n; k++)
		if (s[k] < 0x80 || s[k] > 0xbf)
			return 0;
	return n;
}

static int hex4(const unsigned char *s, size_t len, size_t i, unsigned *out)
{
	unsigned v = 0;
	if (len < 4 || i > len - 4)
		return -1;
	for (size_t k = 0; k < 4; k++) {
		unsigned c = s[i + k], d;
		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			d = c - 'A' + 10;
		else
			return -1;
		v = v * 16 + d;
	}
	*out = v;
	return 0;
}

/* A string whose opening quote is at *pi: *pi moves past its closing
 * quote (0), or to the bad byte (-1). */
static int scan_string(const unsigned char *s, size_t len, size_t *pi,
		       bool *escaped)
{
	size_t i = *pi + 1;
	*escaped = false;
	while (i < len) {
		unsigned c = s[i];
		if (c == '"') {
			*pi = i + 1;
			return 0;
		}
		if (c >= 0x20 && c < 0x80 && c != '\\') {
			i++;
			continue;
		}
		if (c < 0x20)
			break;
		if (c >= 0x80) {
			size_t n = utf8_seq(s + i, len - i);
			if (n == 0)
				break;
			i += n;
			continue;
		}
		/* A backslash. */
		*escaped = true;
		if (++i == len)
			break;
		c = s[i];
		if (c == '"' || c == '\\' || c == '/' || c == 'b' || c == 'f' ||
		    c == 'n' || c == 'r' || c == 't') {
			i++;
			continue;
		}
		unsigned u, low;
		if (c != 'u' || hex4(s, len, i + 1, &u) < 0)
			break;
		i += 5;
		if (u >= 0xdc00 && u <= 0xdfff)
			break; /* a low surrogate alone */
		if (u >= 0xd800 && u <= 0xdbff) {
			if (i + 1 < len && s[i] == '\\' && s[i + 1] == 'u' &&
			    hex4(s, len, i + 2, &low) == 0 && low >= 0xdc00 &&
			    low <= 0xdfff)
				i += 6;
			else
				break;
		}
	}
	*pi = i;
	return -1;
}

/* A number at *pi (RFC 8259's grammar): *pi moves past it (0), or to the
 * bad byte (-1). */
static int scan_number(const unsigned char *s, size_t len, size_t *pi)
{
	size_t i = *pi;
	if (i < len && s[i] == '-')
		i++;
	if (i < len && s[i] == '0') {
		i++;
	} else if (i < len && s[i] >= '1' && s[i] <= '9') {
		while (i < len && s[i] >= '0' && s[i] <= '9')
			i++;
	} else {
		*pi = i;
		return -1;
	}
	if (i < len && s[i] == '.') {
		size_t d = ++i;
		while (i < len && s[i] >= '0' && s[i] <= '9')
			i++;
		if (i == d) {
			*pi = i;
			return -1;
		}
	}
	if (i < len && (s[i] == 'e' || s[i] == 'E')) {
		i++;
		if (i < len && (s[i] == '+' || s[i] == '-'))
			i++;
		size_t d = i;
		while (i < len && s[i] >= '0' && s[i] <= '9')
			i++;
		if (i == d) {
			*pi = i;
			return -1;
		}
	}
	/* "01", "1x": a digit or a letter right after is not a number's. */
	if (i < len && ((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'z') ||
			(s[i] >= 'A' && s[i] <= 'Z'))) {
		*pi = i;
		return -1;
	}
	*pi = i;
	return 0;
}

static bool literal(const unsigned char *s, size_t len, size_t i, const char *word,
		    size_t n)
{
	if (len < n || i > len - n)
		return false;
	for (size_t k = 0; k < n; k++)
		if (s[i + k] != (unsigned char)word[k])
			return false;
	/* "truex": a letter right after is not the literal's. */
	size_t e = i + n;
	return !(e < len && ((s[e] >= 'a' && s[e] <= 'z') || (s[e] >= 'A' && s[e] <= 'Z') ||
			     (s[e] >= '0' && s[e] <= '9')));
}

int json_scan_value(const char *text, size_t len, unsigned max_depth,
		    struct json_scan *out, size_t *err_off)
{
	const unsigned char *s = (const unsigned char *)text;
	unsigned char stack[JSON_SCAN_MAX_DEPTH];
	unsigned depth = 0;
	size_t i = 0;
	bool esc;
	struct json_scan_member *cur = NULL; /* the top-level member open */
	out->end = 0;
	out->is_object = false;
	out->n_members = 0;
	if (max_depth > JSON_SCAN_MAX_DEPTH)
		max_depth = JSON_SCAN_MAX_DEPTH;

value:
	if (i >= len)
		goto bad;
	switch (s[i]) {
	case '{':
	case '[':
		if (depth == max_depth) {
			*err_off = i;
			return -E2BIG;
		}
		if (depth == 0)
			out->is_object = s[i] == '{';
		stack[depth++] = s[i++];
		i = skip_ws(s, len, i);
		if (i < len && s[i] == (stack[depth - 1] == '{' ? '}' : ']')) {
			depth--;
			i++;
			goto after;
		}
		if (stack[depth - 1] == '{')
			goto key;
		goto value;
	case '"':
		if (scan_string(s, len, &i, &esc) < 0)
			goto bad;
		if (depth == 1 && cur != NULL)
			cur->value_escaped = esc;
		goto after;
	case 't':
		if (!literal(s, len, i, "true", 4))
			goto bad;
		i += 4;
		goto after;
	case 'f':
		if (!literal(s, len, i, "false", 5))
			goto bad;
		i += 5;
		goto after;
	case 'n':
		if (!literal(s, len, i, "null", 4))
			goto bad;
		i += 4;
		goto after;
	default:
		if (scan_number(s, len, &i) < 0)
			goto bad;
		goto after;
	}

after:
	if (depth == 0) {
		out->end = i;
		return 0;
	}
	if (depth == 1 && cur != NULL) {
		cur->value_len = i - cur->value_off;
		cur = NULL;
	}
	i = skip_ws(s, len, i);
	if (i >= len)
		goto bad;
	if (s[i] == ',') {
		i = skip_ws(s, len, i + 1);
		if (stack[depth - 1] == '{')
			goto key;
		goto value;
	}
	if (s[i] == (stack[depth - 1] == '{' ? '}' : ']')) {
		depth--;
		i++;
		goto after;
	}
	goto bad;

key:
	if (i >= len || s[i] != '"')
		goto bad;
	{
		size_t k0 = i + 1;
		if (scan_string(s, len, &i, &esc) < 0)
			goto bad;
		if (depth == 1) {
			if (out->n_members < JSON_SCAN_MAX_MEMBERS) {
				cur = &out->m[out->n_members];
				*cur = (struct json_scan_member){
					.key_off = k0, .key_len = i - 1 - k0,
					.key_escaped = esc};
			}
			out->n_members++;
		}
	}
	i = skip_ws(s, len, i);
	if (i >= len || s[i] != ':')
		goto bad;
	i = skip_ws(s, len, i + 1);
	if (depth == 1 && cur != NULL)
		cur->value_off = i;
	goto value;

bad:
	*err_off = i;
	return -EINVAL;
}
