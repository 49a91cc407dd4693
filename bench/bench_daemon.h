/* Helpers of the benches that run the daemon in process with the client
 * library (shmsched-pending-bench, shmsched-drain-bench): a scratch
 * directory for the daemon's sockets and cluster file, the daemon
 * started, a producer or admin connected, a template registered, and the
 * name of a long option for a message about it.
 *
 * Each failure ends the process: "NAME: WHAT: WHY" on stderr (NAME as
 * given to bench_set_name) and exit status 1, as the benches did each on
 * their own. Single-threaded use: main sets the name once, first. */
#ifndef SHMSCHED_BENCH_BENCH_DAEMON_H
#define SHMSCHED_BENCH_BENCH_DAEMON_H

#include <getopt.h>
#include <stdint.h>

#include "daemon/daemon.h"
#include "shmsched/client.h"

/* A scratch directory /tmp/shmsched-TAG-XXXXXX: the daemon's socket
 * `sock` (DIR/s.sock), its admin socket `admin` (s.sock.admin) and the
 * cluster file's path `cluster` (DIR/cluster.json). */
struct bench_dir {
	char dir[64];
	char cluster[128];
	char sock[128];
	char admin[160];
};

/* The program's name that bench_die's messages begin with. */
void bench_set_name(const char *name);

/* Prints "NAME: `what`: `why`" on stderr and exits with status 1. */
_Noreturn void bench_die(const char *what, const char *why);

/* Makes the directory; dies ("temporary directory") if it cannot. */
void bench_dir_make(struct bench_dir *b, const char *tag);

/* Removes the cluster file, both sockets and the directory (what else
 * the bench wrote there it removes first). */
void bench_dir_remove(const struct bench_dir *b);

/* daemon_start(cfg); dies ("daemon") with its message if it cannot. */
struct daemon *bench_start(const struct daemon_config *cfg);

/* A client connected to the socket at `path`; dies ("connect"). */
struct shmsched_client *bench_connect(const char *path);

/* Registers template `json` on `c`; dies ("template"). Its id. */
uint32_t bench_template(struct shmsched_client *c, const char *json);

/* The name of the option in `longopts` (ended by a NULL name) whose val
 * is `val`; "" when none. */
const char *bench_option_name(const struct option *longopts, int val);

#endif
