/* The refusal of coord/'s value decoders (coord/value_text.h). */
#include "coord/value_text.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int value_text_refuse(void *out, size_t out_size, char *msg, size_t msglen, const char *fmt,
		      ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (msglen)
		vsnprintf(msg, msglen, fmt, ap);
	va_end(ap);
	if (out != NULL)
		memset(out, 0, out_size);
	return -EINVAL;
}
