/* Tells systemd how a service is doing (sd_notify(3), Type=notify units):
 * READY=1 once it serves, STOPPING=1 when it begins to stop, RELOADING=1
 * around a log reopen. A no-op outside systemd ($NOTIFY_SOCKET unset) and
 * in builds without libsystemd. */
#ifndef SHMSCHED_CLI_NOTIFY_H
#define SHMSCHED_CLI_NOTIFY_H

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

#endif
