/* See read_file.h. */
#include "cli/read_file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cli_read_file(const char *cmd, const char *path, unsigned max,
		  const char *too_long, char **out, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (f == NULL) {
		fprintf(stderr, "shmsched %s: %s: %s\n", cmd, path, strerror(errno));
		return -1;
	}
	char *buf = malloc((size_t)max + 1);
	size_t n = buf ? fread(buf, 1, (size_t)max + 1, f) : 0;
	int bad = buf == NULL || ferror(f);
	fclose(f);
	if (bad || n > max) {
		if (bad)
			fprintf(stderr, "shmsched %s: %s: cannot read it\n", cmd, path);
		else
			fprintf(stderr, "shmsched %s: %s: longer than %u bytes%s\n",
				cmd, path, max, too_long);
		free(buf);
		return -1;
	}
	*out = buf;
	*len = n;
	return 0;
}
