/* shmsched status: a daemon's state region, read in place
 * (include/shmsched/observe.h). */
#ifndef SHMSCHED_CLI_STATUS_H
#define SHMSCHED_CLI_STATUS_H

/* argv[0] is "status". Returns the exit status: 0, 1 (no such region, or
 * it could not be read: the message says why and names its file), 2 (bad
 * usage). */
int status_main(int argc, char **argv);

/* --queues (cli/status_queues.c): the daemon's quotas and node lifecycle
 * counts, asked of its admin socket (`admin_socket` NULL: the default as
 * cli_admin_socket finds it), printed. Returns 0 or 1 (printed why). */
int status_queues(const char *admin_socket);

#endif
