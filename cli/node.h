/* shmsched node and shmsched placements: requests through the daemon's
 * admin socket. */
#ifndef SHMSCHED_CLI_NODE_H
#define SHMSCHED_CLI_NODE_H

#include <stddef.h>

/* argv[0] is "node". Returns the exit status: 0, 1 (the daemon refused, or
 * could not be reached), 2 (bad usage). */
int node_main(int argc, char **argv);

/* argv[0] is "placements": every live placement, a line each (or JSON
 * lines with --json). Exit status as node_main. */
int placements_main(int argc, char **argv);

/* argv[0] is "pool": `pool list`, `pool release POOL [TEMPLATE]` (cli/pool.c).
 * Exit status as node_main. */
int pool_main(int argc, char **argv);

/* argv[0] is "resync": the pods of a file become what is bound. Exit
 * status as node_main. */
int resync_main(int argc, char **argv);

/* argv[0] is "store": `store check DIR`. Exit status 0 (sound), 1
 * (damaged, with the problem), 2 (bad usage). */
int store_main(int argc, char **argv);

/* The admin socket: `given`, else $SHMSCHED_ADMIN_SOCKET, else the
 * daemon's socket ($SHMSCHED_SOCKET, $XDG_RUNTIME_DIR/shmsched.sock or
 * SHMSCHED_DEFAULT_SOCKET) with ".admin" appended, written into buf. */
const char *cli_admin_socket(const char *given, char *buf, size_t len);

#endif
