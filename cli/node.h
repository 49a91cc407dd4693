/* shmsched node: node events through the daemon's admin socket. */
#ifndef SHMSCHED_CLI_NODE_H
#define SHMSCHED_CLI_NODE_H

/* argv[0] is "node". Returns the exit status: 0, 1 (the daemon refused, or
 * could not be reached), 2 (bad usage). */
int node_main(int argc, char **argv);

#endif
