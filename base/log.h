/* Diagnostics for people: one line per message, with a time and a level.
 *
 * Slow path only: nothing on the path of a pod logs. The level comes from
 * the SHMSCHED_LOG environment variable (error, warn, info, debug; default
 * info) the first time a message is considered, or from log_set_level().
 *
 * Lines go to stderr, or to a file (log_open), as text:
 *   2026-11-24T06:29:00.123Z shmschedd: warn: <message>
 * or as JSON, one object a line:
 *   {"time":"2026-11-24T06:29:00.123Z","level":"warn","program":"shmschedd","msg":"<message>"}
 * The time is UTC (CLOCK_REALTIME), to the millisecond.
 *
 * Thread-safe: each message is one write(2) of a whole line, and
 * log_reopen() swaps the file under the same descriptor number (dup2), so
 * a line is never written to a closed or reused descriptor.
 */
#ifndef SHMSCHED_BASE_LOG_H
#define SHMSCHED_BASE_LOG_H

enum log_level {
	LOG_LEVEL_ERROR = 0,
	LOG_LEVEL_WARN = 1,
	LOG_LEVEL_INFO = 2,
	LOG_LEVEL_DEBUG = 3,
};

enum log_format {
	LOG_FORMAT_TEXT = 0,
	LOG_FORMAT_JSON = 1,
};

void log_set_level(enum log_level level);
enum log_level log_get_level(void);

/* Names the program in every line (default "shmsched"), picks the format
 * and where lines go: `path` NULL for stderr, else that file, appended to
 * (created 0640). Call once, before other threads log. Returns 0, or a
 * negative errno when the file cannot be opened (lines stay on stderr). */
int log_open(const char *program, enum log_format format, const char *path);

/* Opens the log file again by its path, for a log rotated away (SIGHUP).
 * Returns 0 (also when logging to stderr: nothing to do), or a negative
 * errno with the old file kept. Any thread, at any time. */
int log_reopen(void);

/* Parses "text" or "json". Returns 0 with *out, or -EINVAL. */
int log_format_parse(const char *s, enum log_format *out);

/* Formats and writes one line when level is at or below the current
 * level. */
void log_msg(enum log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
