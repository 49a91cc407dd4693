/* Fuzz target: coord/forward.c, the decoders of a forwarded pod's request
 * and of its answer as hosts read them back from etcd (outside input). An
 * answer that decodes encodes back to the same bytes; a request that
 * decodes names a valid host and 1 to FORWARD_POD_MAX bytes of pod, the
 * rest of the value; a refusal is -EINVAL with a message and the outputs
 * zeroed. The first byte chooses the decoder. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "coord/coord.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	bool answer = data[0] & 1;
	data++;
	size--;
	char msg[256] = "";
	if (answer) {
		static struct forward_answer a;
		static const struct forward_answer zero;
		static char text[FORWARD_ANSWER_MAX];
		int rc = forward_answer_decode(data, size, &a, msg, sizeof(msg));
		if (rc != 0) {
			if (rc != -EINVAL || msg[0] == '\0' || memcmp(&a, &zero, sizeof(a)) != 0)
				abort();
			return 0;
		}
		int n = forward_answer_encode(&a, text);
		if (n < 0 || (size_t)n != size || memcmp(text, data, size) != 0)
			abort();
		return 0;
	}
	char host[MEMBERSHIP_HOST_MAX];
	const uint8_t *pod;
	size_t pod_len;
	int rc = forward_request_decode(data, size, host, &pod, &pod_len, msg, sizeof(msg));
	if (rc != 0) {
		if (rc != -EINVAL || msg[0] == '\0' || host[0] != '\0' || pod != NULL || pod_len)
			abort();
		return 0;
	}
	size_t hl = strnlen(host, sizeof(host));
	if (hl == sizeof(host) || !shard_name_valid(host, hl) || pod_len == 0 ||
	    pod_len > FORWARD_POD_MAX || pod != data + 3 + hl || 3 + hl + pod_len != size)
		abort();
	return 0;
}
