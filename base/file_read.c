/* See base/file_read.h. */
#include "base/file_read.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

int file_read_all(const char *path, size_t max, char **out, size_t *out_len)
{
	char *buf = NULL;
	size_t len = 0, cap = 0;
	int rc = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (;;) {
		if (max != 0 && len > max) {
			rc = -EFBIG;
			goto fail;
		}
		if (len == cap) {
			size_t c = cap ? cap * 2 : 65536;
			char *nb = realloc(buf, c);
			if (nb == NULL) {
				rc = -ENOMEM;
				goto fail;
			}
			buf = nb;
			cap = c;
		}
		ssize_t n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = -errno;
			goto fail;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	*out = buf;
	*out_len = len;
	return 0;
fail:
	close(fd);
	free(buf);
	return rc;
}
