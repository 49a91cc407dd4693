/* What shmschedd and shmsched-gateway share as services: the signals they
 * take (SIGINT and SIGTERM stop, SIGHUP reopens the log and calls the
 * service's own reload, if it has one) and what they tell
 * systemd (sd_notify(3), Type=notify units): READY=1 once serving,
 * RELOADING=1 around a log reopen, STOPPING=1 when stopping. Notifying is
 * a no-op outside systemd ($NOTIFY_SOCKET unset) and in builds without
 * libsystemd. */
#ifndef SHMSCHED_CLI_SERVICE_H
#define SHMSCHED_CLI_SERVICE_H

#include <signal.h>
#include <string.h>
#include <pthread.h>

#include "base/base.h"

#if defined(SHMSCHED_HAVE_SYSTEMD) && SHMSCHED_HAVE_SYSTEMD
#include <systemd/sd-daemon.h>
#endif

static inline void cli_notify(const char *state)
{
#if defined(SHMSCHED_HAVE_SYSTEMD) && SHMSCHED_HAVE_SYSTEMD
	sd_notify(0, state);
#else
	(void)state;
#endif
}

/* Blocks SIGINT, SIGTERM and SIGHUP in the calling thread, and so in every
 * thread it starts from now on: only cli_service_wait() takes them. A
 * closed peer's SIGPIPE is ignored (writes report EPIPE). */
static inline void cli_service_signals(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, set, NULL);
	signal(SIGPIPE, SIG_IGN);
}

/* Serves signals until a stop: SIGHUP reopens the log (logrotate moved
 * it: `log_file` names it in the error), then calls `on_hup(arg)` (NULL:
 * none; it logs its own outcome); SIGINT or SIGTERM returns, after
 * STOPPING=1 and a log line naming the signal. */
static inline void cli_service_wait_hup(const sigset_t *set, const char *log_file,
					void (*on_hup)(void *), void *arg)
{
	int sig;
	while (sigwait(set, &sig) == 0 && sig == SIGHUP) {
		cli_notify("RELOADING=1");
		int rc = log_reopen();
		if (rc < 0)
			log_msg(LOG_LEVEL_ERROR, "SIGHUP: reopening %s: %s", log_file,
				strerror(-rc));
		else
			log_msg(LOG_LEVEL_INFO, "SIGHUP: log reopened");
		if (on_hup != NULL)
			on_hup(arg);
		cli_notify("READY=1");
	}
	cli_notify("STOPPING=1");
	log_msg(LOG_LEVEL_INFO, "%s: stopping", strsignal(sig));
}

static inline void cli_service_wait(const sigset_t *set, const char *log_file)
{
	cli_service_wait_hup(set, log_file, NULL, NULL);
}

#endif
