/* shmsched approve: a minimal manager that approves (or not) the
 * voluntary disruption of the pods a selector picks (issue 38 item 3;
 * ingest/control_ops.h, OP_APPROVAL), through the daemon's admin socket. */
#ifndef SHMSCHED_CLI_APPROVE_H
#define SHMSCHED_CLI_APPROVE_H

/* argv[0] is "approve". Runs until SIGINT or SIGTERM, or --count answers.
 * Returns the exit status: 0, 1 (the daemon refused, could not be reached
 * or went), 2 (bad usage). */
int approve_main(int argc, char **argv);

#endif
