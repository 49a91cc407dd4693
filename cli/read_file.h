/* One small file read whole for a command of shmsched (a Node, a policy). */
#ifndef SHMSCHED_CLI_READ_FILE_H
#define SHMSCHED_CLI_READ_FILE_H

#include <stddef.h>

/* Reads `path` whole into *out (malloc'd; *len bytes), at most `max`
 * bytes. On failure prints one line, "shmsched CMD: PATH: why" (a file
 * longer than max: "longer than MAX bytes" and `too_long`), and returns
 * -1. */
int cli_read_file(const char *cmd, const char *path, unsigned max,
		  const char *too_long, char **out, size_t *len);

#endif
