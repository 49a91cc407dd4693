/* The opening the gateway's strict body decoders share (evict_decode.c,
 * pool_decode.c, failure_decode.c, webhook_decode.c): a body bounded
 * before it is parsed, parsed by jansson with duplicate keys refused, and
 * required to be one JSON object; and the two byte checks they make of
 * bodies and strings. What each member means stays in its decoder.
 * Cost: one jansson parse of at most the caller's bound. Threads: none
 * shared. */
#ifndef SHMSCHED_GATEWAY_JSON_BODY_H
#define SHMSCHED_GATEWAY_JSON_BODY_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

/* body[0..len) as one JSON object into *out (the caller's to
 * json_decref), or -EINVAL with *out NULL and err saying, after "WHAT: ",
 * why: more than max bytes ("a body of N bytes; at most MAX"), not JSON
 * (jansson's words, line and column), or not an object ("expected a JSON
 * object", then `shape` when not NULL, e.g. " ({\"reason\":TEXT})"). */
int gw_json_body_object(const char *body, size_t len, size_t max,
			const char *what, const char *shape, json_t **out,
			char *err, size_t err_len);

/* Whether body[0..len) is empty or JSON white space only (RFC 8259's
 * ws: space, tab, CR, LF): the bodies that say nothing. */
bool gw_json_body_blank(const char *body, size_t len);

/* Whether text[0..len) is free of control characters (C0, DEL) and NUL. */
bool gw_text_printable(const char *text, size_t len);

#endif
