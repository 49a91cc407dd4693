/* Fuzz target: the daemon's OP_QUEUE_METRICS text as shmsched status
 * --queues lays it out (status_queues_print, cli/status_queues_text.c) on
 * arbitrary bytes, cut at the first NUL as the text is. Inputs past 64 KiB
 * are passed over: the layout is linear (see its note), but the fuzzer's
 * time is better spent on variety than on size.
 * Checks (ASan and UBSan do the rest): the output opens with its heading,
 * and holds "... and K more" when K, the count returned, is not 0. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/status_queues_text.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char heading[] =
		"ClusterQueues (the daemon's admin socket; cpu in cores):\n";
	if (size > 65536)
		return 0;
	char *text = malloc(size + 1);
	if (text == NULL)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	if (f == NULL) {
		free(text);
		return 0;
	}
	unsigned left = status_queues_print(text, f);
	if (fclose(f) != 0)
		abort();
	if (strncmp(out, heading, sizeof(heading) - 1) != 0)
		abort();
	char more[64];
	snprintf(more, sizeof(more), "\n  ... and %u more\n", left);
	if (left > 0 && strstr(out, more) == NULL)
		abort();
	free(out);
	free(text);
	return 0;
}
