/* The approval webhooks' outside input (issue 38), read as text only (no
 * I/O, no daemon) so the fuzz target (tests/fuzz/fuzz_webhook_decode.c)
 * and the unit tests drive it: the registration an admin POSTs to
 * /v1/approvals/webhooks, its URL, and what a webhook answers an ask
 * with (gateway/webhooks.c).
 *
 * A registration, one JSON object, no other member:
 *   {"name":N, "url":U, "selector":S, "deadlineSeconds":D,
 *    "failurePolicy":"Open"|"Closed", "disruptions":[...]}
 * name: 1..GW_WEBHOOK_NAME_MAX bytes of [A-Za-z0-9._-] (the URL's
 * {name} for DELETE, the manager's name in the daemon's log and the
 * drain's progress); url: required, see below; selector: the drain's pod
 * selector syntax, at most GW_WEBHOOK_SELECTOR_MAX printable bytes
 * (absent or "": every pod; the daemon checks its terms); deadlineSeconds:
 * 1..GW_WEBHOOK_DEADLINE_MAX_S, default 30; failurePolicy: what an ask
 * unanswered by its deadline does, Open (the pod is evicted) or Closed
 * (kept, the default); disruptions: which evictions ask the webhook, an
 * array of distinct "drain", "reclaim" (quota reclaim) and "preempt"
 * (priority preemption), the values of an ask's "reason". The drain
 * always asks, listed or not: absent, null or [] is ["drain"], and
 * ["reclaim"] is the drain and reclaim (SHMSCHED_APPROVAL_RECLAIM_TOO,
 * _PREEMPT_TOO).
 *
 * The URL is a trust boundary: the gateway calls it with each ask, so a
 * registration could otherwise make the gateway call out anywhere (SSRF).
 * Only loopback, only plain HTTP, only literal addresses (no name is
 * resolved): "http://127.0.0.1:PORT" or "http://[::1]:PORT", PORT
 * 1..65535 in decimal without a leading zero, then nothing or a path
 * ("/...", at most GW_WEBHOOK_URL_MAX bytes in all) of RFC 3986's
 * unreserved, sub-delims, ':', '@', '/', '?' and %XX escapes (no '#', no
 * space, no byte past ASCII). Anything else is refused with why.
 *
 * A webhook's answer (at most GW_WEBHOOK_ANSWER_MAX bytes; the caller
 * stops reading past that), one JSON object, no other member:
 *   {"decision":"grant"|"deny"|"notBefore", "notBefore":T, "message":M}
 * notBefore: required with that decision only, an RFC 3339 time
 * ("2026-11-29T05:00:00Z", fractions and offsets allowed) at most
 * GW_WEBHOOK_NOT_BEFORE_MAX_S ahead; a time passed is 1 ms from now.
 * message: optional, at most 256 printable bytes, for the gateway's log.
 *
 * Errors are -EINVAL with a message naming the field, what it holds and
 * what was expected (a 400's Status, or the gateway's log line).
 */
#ifndef SHMSCHED_GATEWAY_WEBHOOK_DECODE_H
#define SHMSCHED_GATEWAY_WEBHOOK_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GW_WEBHOOK_BODY_MAX (16u << 10)   /* a registration's body */
#define GW_WEBHOOK_NAME_MAX 63u           /* SHMSCHED_APPROVAL_NAME_MAX */
#define GW_WEBHOOK_SELECTOR_MAX 1024u     /* SHMSCHED_APPROVAL_SELECTOR_MAX */
#define GW_WEBHOOK_URL_MAX 512u
#define GW_WEBHOOK_DEADLINE_MAX_S 86400u  /* a day: the daemon's bound */
#define GW_WEBHOOK_DEADLINE_DEFAULT_S 30u
#define GW_WEBHOOK_ANSWER_MAX 4096u       /* bytes of an answer read */
#define GW_WEBHOOK_NOT_BEFORE_MAX_S 86400 /* a day: the daemon's bound */
#define GW_WEBHOOK_MESSAGE_MAX 256u

struct gw_webhook_url {
	char text[GW_WEBHOOK_URL_MAX + 1]; /* as given (checked) */
	unsigned port;
	bool v6;                           /* [::1], else 127.0.0.1 */
};

struct gw_webhook_reg {
	char name[GW_WEBHOOK_NAME_MAX + 1];
	char selector[GW_WEBHOOK_SELECTOR_MAX + 1];
	struct gw_webhook_url url;
	uint32_t deadline_s;
	bool fail_open;
	bool reclaim, preempt;             /* asked by quota reclaim, by
					    * preemption too (the drain always) */
};

enum gw_webhook_decision {
	GW_WEBHOOK_GRANT = 1,      /* the values of enum shmsched_approval_verdict */
	GW_WEBHOOK_DENY = 2,
	GW_WEBHOOK_NOT_BEFORE = 3,
};

struct gw_webhook_answer {
	unsigned decision;           /* enum gw_webhook_decision */
	uint32_t not_before_ms;      /* NOT_BEFORE: 1..GW_WEBHOOK_NOT_BEFORE_MAX_S
				      * * 1000 from now; else 0 */
	char message[GW_WEBHOOK_MESSAGE_MAX + 1];
};

/* Checks url[0..len) as above into *out. 0, or -EINVAL with why. */
int gw_webhook_url_parse(const char *url, size_t len, struct gw_webhook_url *out,
			 char *err, size_t err_len);

/* Decodes a registration's body. 0, or -EINVAL with why. */
int gw_webhook_reg_decode(const char *body, size_t len, struct gw_webhook_reg *out,
			  char *err, size_t err_len);

/* Decodes a webhook's answer, received when the wall clock read now_ms
 * (Unix milliseconds, for notBefore). 0, or -EINVAL with why. */
int gw_webhook_answer_decode(const char *body, size_t len, int64_t now_ms,
			     struct gw_webhook_answer *out, char *err,
			     size_t err_len);

/* An RFC 3339 date-time (RFC 3339 section 5.6: full-date "T" full-time,
 * "t" and "z" too; a fraction of any length, cut at milliseconds) as Unix
 * milliseconds. false for anything else, or a year out of 1970..9999. */
bool gw_rfc3339_ms(const char *s, size_t len, int64_t *ms);

#endif
