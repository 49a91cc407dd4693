/* Kubernetes resource quantities ("500m", "0.5", "1Gi", "100M", "1e3"), read
 * exactly as k8s.io/apimachinery/pkg/api/resource.ParseQuantity reads them,
 * then rounded up as the scheduler uses them: cpu to whole millicores
 * (Quantity.MilliValue), every other resource to whole units (Value).
 * Pure functions: any thread.
 */
#ifndef SHMSCHED_INGEST_QUANTITY_H
#define SHMSCHED_INGEST_QUANTITY_H

#include <stddef.h>
#include <stdint.h>

enum quantity_unit {
	QUANTITY_MILLI = 0, /* result in thousandths, rounded up (cpu) */
	QUANTITY_UNITS = 1, /* result in units, rounded up (memory, storage, ...) */
};

/* Parses the `len` bytes at `s`. Returns 0 and sets *out, or:
 *   -EINVAL  not a quantity (the message for a person is the caller's:
 *            `"12x" is not a quantity`)
 *   -ERANGE  a quantity, but its value does not fit in an int64
 *   -EDOM    a negative quantity (no request or allocatable may be) */
int quantity_parse(const char *s, size_t len, enum quantity_unit unit,
		   int64_t *out);

#endif
