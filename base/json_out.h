/* Writing JSON text: strings escaped as RFC 8259 requires, a growable
 * buffer to build it in, and the one shape of a pod's answer line that
 * `shmsched place` prints and `shmsched-gateway` streams:
 *
 *   {"pod":"default/web-7","node":"n12"}
 *   {"pod":"default/gpu-1","node":"n2","gpus":[0,3],"gpu_milli":1000,"cpuset":"0-3"}
 *   {"pod":"default/huge","node":null,"message":"0/3 nodes are available: ..."}
 *
 * Threads: a buffer belongs to one thread at a time; the functions keep no
 * state of their own.
 */
#ifndef SHMSCHED_BASE_JSON_OUT_H
#define SHMSCHED_BASE_JSON_OUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Writes `s` as a JSON string, quotes included. */
void json_out_string(FILE *f, const char *s);

/* A growable byte buffer. All zero is an empty buffer. Appends never fail
 * loudly: when memory runs out the buffer keeps what it had and `failed`
 * is set, for the caller to check once at the end. */
struct json_buf {
	char *data;  /* NUL-terminated when len > 0 */
	size_t len;
	size_t cap;
	bool failed; /* an append ran out of memory */
};

void json_buf_free(struct json_buf *b);
/* Empties the buffer, keeping its memory. */
void json_buf_reset(struct json_buf *b);
/* Makes room for `more` bytes (and a NUL) past len. 0 or -ENOMEM. */
int json_buf_reserve(struct json_buf *b, size_t more);
void json_buf_put(struct json_buf *b, const char *s, size_t len);
void json_buf_puts(struct json_buf *b, const char *s);
void json_buf_printf(struct json_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* `s` as a JSON string, quotes included. */
void json_buf_string(struct json_buf *b, const char *s);
/* The first `len` bytes of `s` as a JSON string (no NUL needed). */
void json_buf_string_n(struct json_buf *b, const char *s, size_t len);

/* A pod's answer. */
struct json_answer {
	const char *pod;     /* namespace/name */
	const char *node;    /* the node's name; NULL: not placed */
	uint32_t gpu_mask;   /* placed: bit i is GPU device i; 0: none */
	unsigned gpu_milli;  /* milli taken from each GPU in gpu_mask */
	const char *cpuset;  /* exclusive cores, Linux list format; NULL or
			      * "": none */
	const char *message; /* not placed: why (NULL: no message member) */
};

/* Writes the answer's object without its closing brace, so that a caller
 * may add members (`shmsched place --explain`): {"pod":...,"node":...
 * then "gpus"/"gpu_milli" and "cpuset" when placed with devices, or
 * "message" when not placed. */
void json_answer_open(struct json_buf *b, const struct json_answer *a);
/* The whole line: json_answer_open(), "}" and a newline. */
void json_answer_line(struct json_buf *b, const struct json_answer *a);

#endif
