/* Diagnostics for people: one line per message on stderr, with a level.
 *
 * Slow path only: nothing on the path of a pod logs. The level comes from
 * the SHMSCHED_LOG environment variable (error, warn, info, debug; default
 * info) the first time a message is considered, or from log_set_level().
 * Thread-safe: each message is one write(2) of a fully formatted line.
 */
#ifndef SHMSCHED_BASE_LOG_H
#define SHMSCHED_BASE_LOG_H

enum log_level {
	LOG_LEVEL_ERROR = 0,
	LOG_LEVEL_WARN = 1,
	LOG_LEVEL_INFO = 2,
	LOG_LEVEL_DEBUG = 3,
};

void log_set_level(enum log_level level);
enum log_level log_get_level(void);

/* Formats and writes "shmsched: <level>: <message>\n" to stderr when
 * level is at or below the current level. */
void log_msg(enum log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
