/* The bodies and URL segment of the gateway's node-lease and pool routes
 * (issue 38), read as text only (no I/O, no daemon) so the fuzz target
 * (tests/fuzz/fuzz_pool_decode.c) and the unit tests drive them.
 *
 * PUT /v1/nodes/{name}/lease renews a node's lease as
 * shmsched_node_event(SHMSCHED_NODE_LEASE) does: it carries nothing but
 * the name, so its body is empty (or white space) or the empty object
 * `{}`; anything else is refused, as a strict route refuses an unknown
 * member.
 *
 * POST /v1/pools/{pool}/release lifts pool {pool}'s quarantines as
 * shmsched_pools(c, pool, template, ...) does: body empty (every
 * template's) or {"template":"namespace/name"} (that template's; null:
 * every template's), no other member.
 *
 * Bounds: a body of at most GW_POOL_BODY_MAX bytes (GW_EVICT_BODY_MAX,
 * http.c's small body), one JSON object, nothing after; a pool and a
 * template of at most GW_POOL_NAME_MAX bytes (the client library's 256),
 * printable (no control character: the daemon logs them). Errors are
 * -EINVAL with a message naming the field, what it holds and what was
 * expected (the Status's message of a 400).
 */
#ifndef SHMSCHED_GATEWAY_POOL_DECODE_H
#define SHMSCHED_GATEWAY_POOL_DECODE_H

#include <stdbool.h>
#include <stddef.h>

#define GW_POOL_BODY_MAX (16u << 10) /* bytes: GW_EVICT_BODY_MAX */
#define GW_POOL_NAME_MAX 256u        /* shmsched_pools' pool and template */

/* A lease body: 0 (empty, white space, or `{}`), or -EINVAL with why. */
int gw_lease_decode(const char *body, size_t len, char *err, size_t err_len);

struct gw_pool_release_req {
	char template_[GW_POOL_NAME_MAX + 1]; /* "": every template's */
};

/* A release body (len 0, or only white space: every template's). 0, or
 * -EINVAL with why. */
int gw_pool_release_decode(const char *body, size_t len,
			   struct gw_pool_release_req *out, char *err,
			   size_t err_len);

/* Whether the URL's {pool} segment, `len` bytes, is one: 1..GW_POOL_NAME_MAX
 * bytes, no '/', no control character. */
bool gw_pool_name_ok(const char *s, size_t len);

#endif
