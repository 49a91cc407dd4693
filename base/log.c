/* Leveled one-line diagnostics on stderr. See log.h. */
#include "base/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* -1 until first use. Relaxed is enough: the value is a plain setting read
 * independently by each message; a racing first read parses the same
 * environment and stores the same value. */
static int current_level = -1;

static const char *const level_names[] = {"error", "warn", "info", "debug"};

static int level_from_env(void)
{
	const char *s = getenv("SHMSCHED_LOG");
	if (s == NULL || *s == '\0')
		return LOG_LEVEL_INFO;
	for (int i = 0; i <= LOG_LEVEL_DEBUG; i++)
		if (strcmp(s, level_names[i]) == 0)
			return i;
	return LOG_LEVEL_INFO;
}

void log_set_level(enum log_level level)
{
	__atomic_store_n(&current_level, (int)level, __ATOMIC_RELAXED);
}

enum log_level log_get_level(void)
{
	int level = __atomic_load_n(&current_level, __ATOMIC_RELAXED);
	if (level < 0) {
		level = level_from_env();
		__atomic_store_n(&current_level, level, __ATOMIC_RELAXED);
	}
	return (enum log_level)level;
}

void log_msg(enum log_level level, const char *fmt, ...)
{
	if (level > log_get_level())
		return;
	char line[1024];
	int n = snprintf(line, sizeof(line), "shmsched: %s: ", level_names[level]);
	va_list ap;
	va_start(ap, fmt);
	int m = vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	size_t len = (size_t)n + (m < 0 ? 0 : (size_t)m);
	if (len > sizeof(line) - 2)
		len = sizeof(line) - 2;
	line[len++] = '\n';
	/* One write so lines from concurrent threads or processes do not interleave. */
	ssize_t w = write(STDERR_FILENO, line, len);
	(void)w;
}
