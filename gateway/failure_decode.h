/* The body of the gateway's failure route (issue 38), read as text only
 * (no I/O, no daemon) so the fuzz target (tests/fuzz/fuzz_failure_decode.c)
 * and the unit tests drive it.
 *
 * POST /v1/placements/{id}/failure (the admin listener) reports that the
 * pod of placement {id} failed, as shmsched_report_failure() does
 * (include/shmsched/client.h): OP_FAILURE carries the placement id and a
 * reason of at most GW_FAILURE_REASON_MAX bytes for the daemon's log. The
 * body, every member optional, no other member:
 *   {"reason":TEXT, "exitCode":N}
 * exitCode: the container's exit code, an int32 as Kubernetes'
 * ContainerStateTerminated.exitCode; the reason sent is then
 * "exit code N: TEXT" (or "exit code N" alone). The reason sent is at
 * most GW_FAILURE_REASON_MAX bytes of printable text (no control
 * character: it is written to the daemon's log). An empty body is no
 * reason.
 *
 * The URL's id: decimal digits only, 1..UINT64_MAX (gw_failure_id).
 *
 * At most GW_FAILURE_BODY_MAX bytes, one JSON object, nothing after.
 * Errors are -EINVAL with a message naming the field, what it holds and
 * what was expected (the Status's message of a 400).
 */
#ifndef SHMSCHED_GATEWAY_FAILURE_DECODE_H
#define SHMSCHED_GATEWAY_FAILURE_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GW_FAILURE_BODY_MAX (16u << 10) /* bytes: GW_EVICT_BODY_MAX */
#define GW_FAILURE_REASON_MAX 256u      /* OP_FAILURE_REASON_MAX */

struct gw_failure_req {
	char reason[GW_FAILURE_REASON_MAX + 1]; /* "": none */
};

/* Decodes a failure body (len 0, or only white space: no reason). 0, or
 * -EINVAL with why. */
int gw_failure_decode(const char *body, size_t len, struct gw_failure_req *out,
		      char *err, size_t err_len);

/* The placement id of the URL's {id}: `len` bytes of decimal digits, no
 * sign, no leading zero, 1..UINT64_MAX. false for anything else. */
bool gw_failure_id(const char *s, size_t len, uint64_t *id);

#endif
