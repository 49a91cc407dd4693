/* `shmsched place`: place the pods of a file on the cluster of another, in
 * order, and print one JSON line per pod. */
#ifndef SHMSCHED_CLI_PLACE_H
#define SHMSCHED_CLI_PLACE_H

/* Returns the process exit status: 0 every pod answered, 1 an internal
 * failure, 2 bad input or usage (message on stderr, nothing on stdout). */
int place_main(int argc, char **argv);

#endif
