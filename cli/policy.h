/* shmsched policy: show, reload or apply a running daemon's policy
 * (policy/policy.h) through its admin socket. */
#ifndef SHMSCHED_CLI_POLICY_H
#define SHMSCHED_CLI_POLICY_H

/* argv[0] is "policy". Returns the exit status: 0, 1 (the daemon refused,
 * or could not be reached), 2 (bad usage or an unreadable FILE). */
int policy_main(int argc, char **argv);

#endif
