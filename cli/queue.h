/* shmsched queue: apply, delete or list a running daemon's Kueue objects
 * (ingest/control_ops.h, OP_QUEUE) through its admin socket. */
#ifndef SHMSCHED_CLI_QUEUE_H
#define SHMSCHED_CLI_QUEUE_H

/* argv[0] is "queue". Returns the exit status: 0, 1 (the daemon refused,
 * or could not be reached), 2 (bad usage or an unreadable FILE). */
int queue_main(int argc, char **argv);

#endif
