/* Fuzz target: the bodies of the gateway's Eviction and drain routes
 * (gateway/evict_decode.h) on arbitrary bytes. The first byte picks the
 * decoder (even: the Eviction of pod "ns/web-0", odd: a drain's flags),
 * the rest is the body. Checks: a refusal is -EINVAL with a message; an
 * accepted drain's selector is NUL-ended within its bound and its
 * timeout within GW_DRAIN_TIMEOUT_MAX; a body past GW_EVICT_BODY_MAX is
 * never accepted. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gateway/gateway.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0 || size > 2 * GW_EVICT_BODY_MAX)
		return 0;
	const char *body = (const char *)data + 1;
	size_t len = size - 1;
	char err[512];
	err[0] = '\0';
	int rc;
	if (data[0] % 2 == 0) {
		struct gw_eviction ev;
		rc = gw_eviction_decode(body, len, "ns", "web-0", &ev, err, sizeof(err));
	} else {
		struct gw_drain_req q;
		rc = gw_drain_decode(body, len, &q, err, sizeof(err));
		if (rc == 0 && (q.timeout_s > GW_DRAIN_TIMEOUT_MAX ||
				memchr(q.selector, '\0', sizeof(q.selector)) == NULL))
			abort();
	}
	if (rc < 0 && (rc != -EINVAL || err[0] == '\0'))
		abort();
	if (rc == 0 && len > GW_EVICT_BODY_MAX)
		abort();
	return 0;
}
