/* Fuzz target: the lease and pool-release bodies and the release URL's
 * {pool} (gateway/pool_decode.h) on arbitrary bytes. The first byte picks
 * which (0: a lease body, 1: a release body, 2: a pool), the rest is the
 * input. Checks: a refusal is -EINVAL with a message (and, for a
 * release, no template); an accepted body is at most GW_POOL_BODY_MAX
 * bytes; an accepted template is "namespace/name", NUL-ended within
 * GW_POOL_NAME_MAX bytes, free of control characters; an accepted pool
 * has no '/' and no control character. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gateway/gateway.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0 || size > 2 * GW_POOL_BODY_MAX)
		return 0;
	const char *in = (const char *)data + 1;
	size_t len = size - 1;
	char err[512];
	err[0] = '\0';
	switch (data[0] % 3) {
	case 0: {
		int rc = gw_lease_decode(in, len, err, sizeof(err));
		if ((rc < 0 && (rc != -EINVAL || err[0] == '\0')) ||
		    (rc == 0 && len > GW_POOL_BODY_MAX) || rc > 0)
			abort();
		return 0;
	}
	case 1: {
		struct gw_pool_release_req q;
		int rc = gw_pool_release_decode(in, len, &q, err, sizeof(err));
		if (rc < 0) {
			if (rc != -EINVAL || err[0] == '\0' || q.template_[0] != '\0')
				abort();
			return 0;
		}
		if (rc != 0 || len > GW_POOL_BODY_MAX)
			abort();
		size_t tl = strnlen(q.template_, sizeof(q.template_));
		if (tl > GW_POOL_NAME_MAX)
			abort();
		if (tl == 0)
			return 0;
		const char *slash = memchr(q.template_, '/', tl);
		if (slash == NULL || slash == q.template_ ||
		    slash == q.template_ + tl - 1)
			abort();
		for (size_t i = 0; i < tl; i++)
			if ((unsigned char)q.template_[i] < 0x20 ||
			    q.template_[i] == 0x7f)
				abort();
		return 0;
	}
	default:
		if (!gw_pool_name_ok(in, len))
			return 0;
		if (len == 0 || len > GW_POOL_NAME_MAX || memchr(in, '/', len))
			abort();
		for (size_t i = 0; i < len; i++)
			if ((unsigned char)in[i] < 0x20 || in[i] == 0x7f)
				abort();
		return 0;
	}
}
