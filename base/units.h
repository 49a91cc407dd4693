/* Numbers for people: cpu as kubectl prints a quantity ("2", "500m"),
 * bytes in Kubernetes' canonical suffixes ("4Gi", "128Mi", "1G", "1500"),
 * durations scaled from microseconds ("840.2 us", "12.5 ms", "2.62 s").
 * Only for text a person reads: JSON keeps the raw numbers. Each writes
 * NUL-terminated text into buf (truncated to len) and returns buf. */
#ifndef SHMSCHED_BASE_UNITS_H
#define SHMSCHED_BASE_UNITS_H

#include <stddef.h>
#include <stdint.h>

/* Whole cores without a suffix ("2"), anything else in millicores
 * ("1500m"), as kubectl shows a cpu quantity. */
const char *units_cpu(int64_t milli, char *buf, size_t len);

/* The largest binary suffix (Ki .. Ei) that divides the value exactly,
 * else the largest decimal one (k .. E), else plain bytes: the form
 * Kubernetes' resource.Quantity prints, so a request of 128Mi reads
 * back as 128Mi. */
const char *units_bytes(int64_t bytes, char *buf, size_t len);

/* A duration given in microseconds, in us below 1 ms, ms below 1 s, s
 * above, with three or four significant digits ("0.35 us", "840.2 us",
 * "12.5 ms", "2.62 s"). Negative or NaN values print as given in us. */
const char *units_us(double us, char *buf, size_t len);

#endif
