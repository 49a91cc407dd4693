/* Progress bars: see progress.h. */
#include "bench/progress.h"
#include "base/base.h"

#include <stdio.h>
#include <time.h>

#define BAR_WIDTH 24
#define SHOW_AFTER_NS 1000000000u  /* phases shorter than this draw nothing */
#define REDRAW_NS 100000000u

void progress_begin(struct progress *p, bool enabled, const char *phase,
		    uint64_t total)
{
	*p = (struct progress){.phase = phase, .total = total, .enabled = enabled,
			       .start_ns = now_ns()};
}

static void human_rate(double r, char *buf, size_t len)
{
	if (r >= 1e6)
		snprintf(buf, len, "%.2fM/s", r / 1e6);
	else if (r >= 1e3)
		snprintf(buf, len, "%.1fk/s", r / 1e3);
	else
		snprintf(buf, len, "%.0f/s", r);
}

void progress_update(struct progress *p, uint64_t done)
{
	if (!p->enabled)
		return;
	uint64_t now = now_ns();
	if (now - p->start_ns < SHOW_AFTER_NS || now - p->last_draw_ns < REDRAW_NS)
		return;
	p->last_draw_ns = now;
	double secs = (double)(now - p->start_ns) / 1e9;
	double rate = (double)done / secs;
	char rate_s[32], eta[32] = "";
	human_rate(rate, rate_s, sizeof(rate_s));
	char bar[BAR_WIDTH + 1];
	unsigned full = 0;
	if (p->total > 0) {
		uint64_t d = done < p->total ? done : p->total;
		full = (unsigned)(d * BAR_WIDTH / p->total);
		if (rate > 0) {
			unsigned left = (unsigned)((double)(p->total - d) / rate + 0.5);
			snprintf(eta, sizeof(eta), "  ETA %u:%02u", left / 60, left % 60);
		}
	}
	for (unsigned i = 0; i < BAR_WIDTH; i++)
		bar[i] = i < full ? '#' : '.';
	bar[BAR_WIDTH] = '\0';
	/* \033[K: clear what a longer earlier line left. */
	if (p->total > 0)
		fprintf(stderr, "\r%-11s [%s] %9llu/%llu  %s%s\033[K", p->phase, bar,
			(unsigned long long)done, (unsigned long long)p->total,
			rate_s, eta);
	else
		fprintf(stderr, "\r%-11s %9llu  %s\033[K", p->phase,
			(unsigned long long)done, rate_s);
	fflush(stderr);
	p->drawn = true;
}

void progress_end(struct progress *p)
{
	if (p->drawn)
		fprintf(stderr, "\r\033[K");
	p->drawn = false;
}
