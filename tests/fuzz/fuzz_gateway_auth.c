/* Fuzz target: the gateway's authentication input (gateway/auth.c) on
 * arbitrary bytes. As a token file (gw_tokens_parse): accepted, every
 * record counts within GW_TOKENS_MAX and nothing is found by an empty
 * token; refused, with a message and nothing returned (unit.gateway_auth
 * checks the records themselves). As an Authorization header
 * (gw_bearer_token): a token is returned exactly when the value starts
 * with "Bearer " in any case and holds more than spaces after it, and it
 * lies inside the value. */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gateway/gateway.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void header(const uint8_t *data, size_t size)
{
	if (size > 4096)
		return;
	char *h = malloc(size + 1);
	if (h == NULL)
		return;
	memcpy(h, data, size);
	h[size] = '\0';
	size_t len = 0;
	const char *t = gw_bearer_token(h, &len);
	bool bearer = strncasecmp(h, "Bearer ", 7) == 0;
	if (t != NULL && (!bearer || len == 0 || t < h + 7 || t + len > h + strlen(h)))
		abort();
	const char *rest = h + (bearer ? 7 : 0);
	rest += strspn(rest, " ");
	bool more = rest[strspn(rest, " \t")] != '\0';
	if (t == NULL && bearer && more)
		abort();
	free(h);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	header(data, size);
	struct gw_tokens *t = NULL;
	char err[512];
	err[0] = '\0';
	int rc = gw_tokens_parse((const char *)data, size, &t, err, sizeof(err));
	if (rc < 0) {
		if (t != NULL || err[0] == '\0' ||
		    (rc != -EINVAL && rc != -E2BIG && rc != -ENOMEM))
			abort();
		return 0;
	}
	/* Nothing is found by an empty or an over-long token. */
	if (gw_tokens_find(t, "", 0) != NULL || gw_tokens_count(t) > GW_TOKENS_MAX)
		abort();
	gw_tokens_free(t);
	return 0;
}
