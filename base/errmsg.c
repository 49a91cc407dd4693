/* Messages for a person: see errmsg.h. */
#include "base/errmsg.h"

#include <stdarg.h>
#include <stdio.h>

void errmsg(char *err, size_t err_len, const char *fmt, ...)
{
	if (err == NULL || err_len == 0)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, err_len, fmt, ap);
	va_end(ap);
}

int errmsg_rc(int rc, char *err, size_t err_len, const char *fmt, ...)
{
	if (err != NULL && err_len > 0) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, err_len, fmt, ap);
		va_end(ap);
	}
	return rc;
}
