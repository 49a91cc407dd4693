/* Fuzz target: quantity_parse (ingest/quantity.c) on arbitrary bytes, in
 * both units. Checks what the callers rely on: only the documented errors,
 * a non-negative result, and milli >= units (rounding up cannot make the
 * value in thousandths smaller than the value in units). */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include "ingest/ingest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data;
	int64_t milli = -1, units = -1;
	int rm = quantity_parse(s, size, QUANTITY_MILLI, &milli);
	int ru = quantity_parse(s, size, QUANTITY_UNITS, &units);
	if (rm != 0 && rm != -EINVAL && rm != -ERANGE && rm != -EDOM)
		__builtin_trap();
	if (ru != 0 && ru != -EINVAL && ru != -ERANGE && ru != -EDOM)
		__builtin_trap();
	/* Grammar and sign do not depend on the unit. */
	if ((rm == -EINVAL) != (ru == -EINVAL) || (rm == -EDOM) != (ru == -EDOM))
		__builtin_trap();
	if (ru == 0 && units < 0)
		__builtin_trap();
	if (rm == 0) {
		/* A value in milli fits, so the value in units does too, and
		 * ceil(x) = ceil(ceil(1000x) / 1000). */
		if (milli < 0 || ru != 0)
			__builtin_trap();
		if (units != milli / 1000 + (milli % 1000 != 0))
			__builtin_trap();
	}
	return 0;
}
