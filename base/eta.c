/* The time left from the rate so far (base/eta.h): left * elapsed / done,
 * in doubles so that no product of uint64_t inputs overflows (at most
 * 2^64 * 2^64 / 1e9, far below DBL_MAX). */
#include "base/eta.h"

struct eta eta_estimate(uint64_t done, uint64_t elapsed_ns, uint64_t left,
			bool blocked)
{
	struct eta e = {ETA_UNKNOWN, 0.0, 0.0};
	double secs = (double)elapsed_ns / 1e9;
	if (done > 0 && elapsed_ns > 0)
		e.per_second = (double)done / secs;
	if (left == 0) {
		e.kind = ETA_KNOWN;
		return e;
	}
	if (blocked) {
		e.kind = ETA_BLOCKED;
		return e;
	}
	if (e.per_second == 0.0)
		return e;
	e.kind = ETA_KNOWN;
	e.seconds = (double)left * secs / (double)done;
	return e;
}
