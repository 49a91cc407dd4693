/* Fuzz target: the approval webhooks' outside input
 * (gateway/webhook_decode.h) on arbitrary bytes. The first byte picks
 * which (modulo 4: a registration's body, its URL alone, a webhook's
 * answer, an RFC 3339 time), the rest is the input.
 * Checks: a refusal is -EINVAL with a message and the output zeroed; an
 * accepted URL is on loopback (http://127.0.0.1: or http://[::1]:), its
 * port 1..65535, its text the input, at most GW_WEBHOOK_URL_MAX bytes,
 * without '#', space or control bytes; an accepted registration's name
 * is 1..GW_WEBHOOK_NAME_MAX bytes, its deadline 1..a day, its URL as
 * above, its reclaim and preempt scopes off unless "disruptions" set
 * them; an accepted answer's decision is one of three and its time
 * within a day, set only with notBefore; nothing past its bound is ever
 * accepted. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gateway/gateway.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_url(const struct gw_webhook_url *u)
{
	size_t n = strlen(u->text);
	if (n == 0 || n > GW_WEBHOOK_URL_MAX || u->port == 0 || u->port > 65535 ||
	    (strncmp(u->text, "http://127.0.0.1:", 17) != 0 &&
	     strncmp(u->text, "http://[::1]:", 13) != 0) ||
	    (u->v6 != (u->text[7] == '[')))
		abort();
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)u->text[i] <= 0x20 || (unsigned char)u->text[i] >= 0x7f ||
		    u->text[i] == '#' || u->text[i] == '\\')
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0 || size > 2 * GW_WEBHOOK_BODY_MAX)
		return 0;
	const char *in = (const char *)data + 1;
	size_t len = size - 1;
	char err[1200];
	err[0] = '\0';
	switch (data[0] % 4) {
	case 0: {
		struct gw_webhook_reg r;
		int rc = gw_webhook_reg_decode(in, len, &r, err, sizeof(err));
		if (rc < 0) {
			if (rc != -EINVAL || err[0] == '\0' || r.name[0] != '\0')
				abort();
			return 0;
		}
		size_t nl = strlen(r.name);
		if (rc != 0 || len > GW_WEBHOOK_BODY_MAX || nl == 0 ||
		    nl > GW_WEBHOOK_NAME_MAX || r.deadline_s < 1 ||
		    r.deadline_s > GW_WEBHOOK_DEADLINE_MAX_S ||
		    strlen(r.selector) > GW_WEBHOOK_SELECTOR_MAX)
			abort();
		check_url(&r.url);
		/* reclaim and preempt come from "disruptions" only: without
		 * that key (spelled out, or through an escape) both are off. */
		if ((r.reclaim || r.preempt) &&
		    memmem(in, len, "disruptions", 11) == NULL &&
		    memmem(in, len, "\\", 1) == NULL)
			abort();
		return 0;
	}
	case 1: {
		struct gw_webhook_url u;
		int rc = gw_webhook_url_parse(in, len, &u, err, sizeof(err));
		if (rc < 0) {
			if (rc != -EINVAL || err[0] == '\0' || u.text[0] != '\0')
				abort();
			return 0;
		}
		check_url(&u);
		if (strlen(u.text) != len || memcmp(u.text, in, len) != 0)
			abort();
		return 0;
	}
	case 2: {
		struct gw_webhook_answer a;
		int rc = gw_webhook_answer_decode(in, len, INT64_C(1795000000000), &a,
						  err, sizeof(err));
		if (rc < 0) {
			if (rc != -EINVAL || err[0] == '\0' || a.decision != 0)
				abort();
			return 0;
		}
		if (len > GW_WEBHOOK_ANSWER_MAX || a.decision < GW_WEBHOOK_GRANT ||
		    a.decision > GW_WEBHOOK_NOT_BEFORE ||
		    (a.decision == GW_WEBHOOK_NOT_BEFORE) != (a.not_before_ms > 0) ||
		    a.not_before_ms > GW_WEBHOOK_NOT_BEFORE_MAX_S * 1000u ||
		    strlen(a.message) > GW_WEBHOOK_MESSAGE_MAX)
			abort();
		return 0;
	}
	default: {
		int64_t ms;
		if (gw_rfc3339_ms(in, len, &ms)) {
			/* 1970-01-01 (less a day of offset) .. 9999-12-31. */
			if (ms < -INT64_C(86400000) || ms > INT64_C(253402387200000))
				abort();
		} else if (ms != 0) {
			abort();
		}
		return 0;
	}
	}
}
