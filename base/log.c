/* Leveled one-line diagnostics. See log.h.
 *
 * The settings are written once by log_open() before other threads log,
 * and read relaxed: each is a plain value read on its own. The descriptor
 * lines go to never changes number once set: log_reopen() puts the new
 * file behind it with dup2(2), which the kernel makes atomic against
 * concurrent write(2)s.
 */
#include "base/log.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* -1 until first use. Relaxed is enough: the value is a plain setting read
 * independently by each message; a racing first read parses the same
 * environment and stores the same value. */
static int current_level = -1;
static int log_fd = STDERR_FILENO;
static int log_fmt = LOG_FORMAT_TEXT;
static char log_program[64] = "shmsched";
static char log_path[4096];
static pthread_mutex_t reopen_lock = PTHREAD_MUTEX_INITIALIZER;

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

int log_format_parse(const char *s, enum log_format *out)
{
	if (strcmp(s, "text") == 0)
		*out = LOG_FORMAT_TEXT;
	else if (strcmp(s, "json") == 0)
		*out = LOG_FORMAT_JSON;
	else
		return -EINVAL;
	return 0;
}

static int open_path(const char *path)
{
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);
	return fd < 0 ? -errno : fd;
}

int log_open(const char *program, enum log_format format, const char *path)
{
	if (program != NULL)
		snprintf(log_program, sizeof(log_program), "%s", program);
	__atomic_store_n(&log_fmt, (int)format, __ATOMIC_RELAXED);
	if (path == NULL)
		return 0;
	int fd = open_path(path);
	if (fd < 0)
		return fd;
	snprintf(log_path, sizeof(log_path), "%s", path);
	__atomic_store_n(&log_fd, fd, __ATOMIC_RELAXED);
	return 0;
}

int log_reopen(void)
{
	if (log_path[0] == '\0')
		return 0;
	pthread_mutex_lock(&reopen_lock);
	int rc = 0;
	int fd = open_path(log_path);
	if (fd < 0)
		rc = fd;
	else if (dup2(fd, __atomic_load_n(&log_fd, __ATOMIC_RELAXED)) < 0)
		rc = -errno;
	if (fd >= 0)
		close(fd);
	pthread_mutex_unlock(&reopen_lock);
	return rc;
}

/* "2026-11-24T06:29:00.123Z" */
static size_t timestamp(char *buf, size_t len)
{
	struct timespec ts;
	struct tm tm;
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	size_t n = strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm);
	int m = snprintf(buf + n, len - n, ".%03ldZ", ts.tv_nsec / 1000000);
	return n + (m > 0 ? (size_t)m : 0);
}

/* Appends `s` JSON-escaped to line[*n..cap), leaving room for the end. */
static void put_escaped(char *line, size_t *n, size_t cap, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*n + 8 >= cap)
			return;
		if (*p == '"' || *p == '\\') {
			line[(*n)++] = '\\';
			line[(*n)++] = (char)*p;
		} else if (*p < 0x20) {
			*n += (size_t)snprintf(line + *n, cap - *n, "\\u%04x", *p);
		} else {
			line[(*n)++] = (char)*p;
		}
	}
}

void log_msg(enum log_level level, const char *fmt, ...)
{
	if (level > log_get_level())
		return;
	char msg[1024], when[40], line[2400];
	va_list ap;
	va_start(ap, fmt);
	int m = vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (m < 0)
		msg[0] = '\0';
	timestamp(when, sizeof(when));
	size_t len;
	if (__atomic_load_n(&log_fmt, __ATOMIC_RELAXED) == LOG_FORMAT_JSON) {
		int h = snprintf(line, sizeof(line), "{\"time\":\"%s\",\"level\":\"%s\","
				 "\"program\":\"%s\",\"msg\":\"", when,
				 level_names[level], log_program);
		len = (size_t)h;
		put_escaped(line, &len, sizeof(line) - 3, msg);
		line[len++] = '"';
		line[len++] = '}';
	} else {
		int h = snprintf(line, sizeof(line), "%s %s: %s: %s", when, log_program,
				 level_names[level], msg);
		len = h < 0 ? 0 : (size_t)h;
		if (len > sizeof(line) - 2)
			len = sizeof(line) - 2;
	}
	line[len++] = '\n';
	/* One write so lines from concurrent threads or processes do not interleave. */
	ssize_t w = write(__atomic_load_n(&log_fd, __ATOMIC_RELAXED), line, len);
	(void)w;
}
