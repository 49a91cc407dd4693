/* Sealed text (declared in ingest/control_proto.h): one write loop (the
 * writer) and one pread loop (the reader) of the whole text, O(bytes), no
 * mapping kept. The reader's checks (fstat, F_GET_SEALS) come before it
 * allocates anything, so a size past `max` costs nothing. */
#include "ingest/control_proto.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int sealed_text_create(const char *name, const void *buf, size_t len)
{
	int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	size_t off = 0;
	while (off < len) {
		ssize_t w = write(fd, (const char *)buf + off, len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			int rc = w < 0 ? -errno : -EIO;
			close(fd);
			return rc;
		}
		off += (size_t)w;
	}
	if (fcntl(fd, F_ADD_SEALS, SEALED_TEXT_SEALS) < 0) {
		int rc = -errno;
		close(fd);
		return rc;
	}
	return fd;
}

int sealed_text_read(int fd, uint64_t bytes, uint64_t max, const char *what,
		     char **out, char *err, size_t err_len)
{
	*out = NULL;
	struct stat st;
	int seals = fd >= 0 ? fcntl(fd, F_GET_SEALS) : -1;
	if (fd < 0 || fstat(fd, &st) < 0 || seals < 0 ||
	    (seals & SEALED_TEXT_SEALS) != SEALED_TEXT_SEALS ||
	    (uint64_t)st.st_size != bytes || bytes > max) {
		snprintf(err, err_len, "%s: %s; expected a memfd of %llu bytes "
			 "(at most %llu) sealed against shrink, grow, write and "
			 "more seals", what, fd < 0 ? "no fd came with the answer"
			 : seals < 0 ? "an fd that is not a sealable memfd"
			 : (seals & SEALED_TEXT_SEALS) != SEALED_TEXT_SEALS
			 ? "a memfd missing seals" : "a memfd of another size",
			 (unsigned long long)bytes, (unsigned long long)max);
		if (fd >= 0 && seals >= 0 &&
		    (seals & SEALED_TEXT_SEALS) == SEALED_TEXT_SEALS)
			snprintf(err, err_len, "%s: a memfd of %lld bytes; the answer "
				 "says %llu (at most %llu)", what,
				 (long long)st.st_size, (unsigned long long)bytes,
				 (unsigned long long)max);
		return -EPROTO;
	}
	char *text = malloc((size_t)bytes + 1);
	if (text == NULL) {
		snprintf(err, err_len, "%s: out of memory for %llu bytes", what,
			 (unsigned long long)bytes);
		return -ENOMEM;
	}
	size_t off = 0;
	while (off < bytes) {
		ssize_t r = pread(fd, text + off, (size_t)bytes - off, (off_t)off);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		off += (size_t)r;
	}
	if (off != bytes) {
		free(text);
		snprintf(err, err_len, "%s: %zu of %llu bytes read", what, off,
			 (unsigned long long)bytes);
		return -EPROTO;
	}
	text[off] = '\0';
	*out = text;
	return 0;
}
