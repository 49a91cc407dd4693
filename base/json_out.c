/* JSON text: see json_out.h. The buffer doubles as it grows, so appending n
 * bytes costs O(n) amortised. */
#include "base/json_out.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void json_out_string(FILE *f, const char *s)
{
	putc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"':
			fputs("\\\"", f);
			break;
		case '\\':
			fputs("\\\\", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '\r':
			fputs("\\r", f);
			break;
		case '\t':
			fputs("\\t", f);
			break;
		default:
			if (*p < 0x20)
				fprintf(f, "\\u%04x", *p);
			else
				putc(*p, f);
		}
	}
	putc('"', f);
}

void json_buf_free(struct json_buf *b)
{
	free(b->data);
	*b = (struct json_buf){0};
}

void json_buf_reset(struct json_buf *b)
{
	b->len = 0;
	if (b->data != NULL)
		b->data[0] = '\0';
}

int json_buf_reserve(struct json_buf *b, size_t more)
{
	if (b->failed)
		return -ENOMEM;
	if (more > SIZE_MAX / 2 - b->len - 1) {
		b->failed = true;
		return -ENOMEM;
	}
	size_t need = b->len + more + 1;
	if (need <= b->cap)
		return 0;
	size_t cap = b->cap ? b->cap : 256;
	while (cap < need)
		cap *= 2;
	char *d = realloc(b->data, cap);
	if (d == NULL) {
		b->failed = true;
		return -ENOMEM;
	}
	b->data = d;
	b->cap = cap;
	return 0;
}

void json_buf_put(struct json_buf *b, const char *s, size_t len)
{
	if (json_buf_reserve(b, len) < 0)
		return;
	memcpy(b->data + b->len, s, len);
	b->len += len;
	b->data[b->len] = '\0';
}

void json_buf_puts(struct json_buf *b, const char *s)
{
	json_buf_put(b, s, strlen(s));
}

void json_buf_printf(struct json_buf *b, const char *fmt, ...)
{
	char small[256];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n < sizeof(small)) {
		json_buf_put(b, small, (size_t)n);
		return;
	}
	if (json_buf_reserve(b, (size_t)n) < 0)
		return;
	va_start(ap, fmt);
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

void json_buf_string_n(struct json_buf *b, const char *s, size_t len)
{
	/* Worst case: every byte becomes \u00XX. */
	if (len > SIZE_MAX / 8 || json_buf_reserve(b, len * 6 + 2) < 0) {
		b->failed = true;
		return;
	}
	char *o = b->data + b->len;
	*o++ = '"';
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		switch (c) {
		case '"':
			*o++ = '\\';
			*o++ = '"';
			break;
		case '\\':
			*o++ = '\\';
			*o++ = '\\';
			break;
		case '\n':
			*o++ = '\\';
			*o++ = 'n';
			break;
		case '\r':
			*o++ = '\\';
			*o++ = 'r';
			break;
		case '\t':
			*o++ = '\\';
			*o++ = 't';
			break;
		default:
			if (c < 0x20) {
				static const char hex[] = "0123456789abcdef";
				memcpy(o, "\\u00", 4);
				o[4] = hex[c >> 4];
				o[5] = hex[c & 15];
				o += 6;
			} else {
				*o++ = (char)c;
			}
		}
	}
	*o++ = '"';
	b->len = (size_t)(o - b->data);
	b->data[b->len] = '\0';
}

void json_buf_string(struct json_buf *b, const char *s)
{
	json_buf_string_n(b, s, strlen(s));
}

void json_answer_open(struct json_buf *b, const struct json_answer *a)
{
	json_buf_puts(b, "{\"pod\":");
	json_buf_string(b, a->pod);
	json_buf_puts(b, ",\"node\":");
	if (a->node == NULL) {
		json_buf_puts(b, "null");
	} else {
		json_buf_string(b, a->node);
		if (a->gpu_mask != 0) {
			json_buf_puts(b, ",\"gpus\":[");
			for (unsigned g = 0, n = 0; g < 32; g++)
				if (a->gpu_mask >> g & 1)
					json_buf_printf(b, "%s%u", n++ ? "," : "", g);
			json_buf_printf(b, "],\"gpu_milli\":%u", a->gpu_milli);
		}
		if (a->cpuset != NULL && a->cpuset[0] != '\0') {
			json_buf_puts(b, ",\"cpuset\":");
			json_buf_string(b, a->cpuset);
		}
	}
	if (a->message != NULL) {
		json_buf_puts(b, ",\"message\":");
		json_buf_string(b, a->message);
	}
}

void json_answer_line(struct json_buf *b, const struct json_answer *a)
{
	json_answer_open(b, a);
	json_buf_put(b, "}\n", 2);
}
