/* Messages for a person, written into a caller's buffer: every module's
 * functions that can fail for a reason a person must read take
 * (char *err, size_t err_len). */
#ifndef SHMSCHED_BASE_ERRMSG_H
#define SHMSCHED_BASE_ERRMSG_H

#include <stddef.h>

/* Formats into err[0..err_len); does nothing when err is NULL or err_len 0. */
void errmsg(char *err, size_t err_len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* The same, returning rc: `return errmsg_rc(-EINVAL, err, len, "...")`. */
int errmsg_rc(int rc, char *err, size_t err_len, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#endif
