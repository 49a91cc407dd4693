/* A whole file read into memory, bounded. */
#ifndef SHMSCHED_BASE_FILE_READ_H
#define SHMSCHED_BASE_FILE_READ_H

#include <stddef.h>

/* Reads the file at `path` to its end (a pipe too: read() tells the size)
 * into a malloc'd buffer: 0 and *out (the caller's to free) and *out_len,
 * or -errno (open, read, -ENOMEM), or -EFBIG once more than `max` bytes
 * were read (0: no bound). The buffer grows by doubling from 64 KiB, so it
 * holds at most twice what was read. */
int file_read_all(const char *path, size_t max, char **out, size_t *out_len);

#endif
