/* Fuzz target: pod_group_decode (shm/pod_group.c) on arbitrary bytes: a
 * group string comes back from a state region a crashed daemon left, and
 * through the durable store. Checks what its users rely on: only -EBADMSG
 * as an error, a decoded group whose every index lies in its arrays (the
 * matching functions run on it, against itself, without reading out of
 * bounds under ASan), and that the encoding is canonical: encoding the
 * decoded group gives back the same bytes. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "shm/shm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct pod_group g;
	static char again[GROUP_ENCODED_MAX + 1];
	int rc = pod_group_decode((const char *)data, size, &g);
	if (rc != 0 && rc != -EBADMSG)
		__builtin_trap();
	if (rc != 0)
		return 0;
	for (unsigned i = 0; i < g.n_terms; i++)
		(void)group_term_matches(&g, &g.terms[i], &g);
	for (unsigned i = 0; i < g.n_spread; i++)
		(void)group_spread_matches(&g, &g.spread[i].selector, &g);
	(void)group_selector_matches(&g, &g.default_selector, g.labels, g.n_labels);
	int len = pod_group_encode(&g, again, sizeof(again));
	if (len < 0 || (size_t)len != size || memcmp(again, data, size) != 0)
		__builtin_trap();
	return 0;
}
