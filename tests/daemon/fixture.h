/* Test helpers for tests/daemon/ (the real daemon in process, producers
 * connecting from the test): a scratch directory for the daemon's sockets,
 * a producer connected under a name, one leaving (and the daemon seeing it
 * go), a template of strings unique to a tag, one pod placed, answers
 * awaited. Each takes what it needs (the socket's path, the daemon) as a
 * parameter; a failure fails the running cmocka test with a message naming
 * what was asked. Linked as the library daemon_fixture
 * (tests/daemon/meson.build). */
#ifndef SHMSCHED_TESTS_DAEMON_FIXTURE_H
#define SHMSCHED_TESTS_DAEMON_FIXTURE_H

#include <stddef.h>
#include <stdint.h>

#include "daemon/daemon.h"
#include "shmsched/client.h"

/* A scratch directory /tmp/shmsched-TAG-XXXXXX holding the daemon's
 * socket `sock` (DIR/s.sock) and its admin socket `admin` (s.sock.admin). */
struct fixture_dir {
	char dir[64];
	char sock[128];
	char admin[160];
};

/* Makes the directory (mode 0755 when `open_to_all`, so that another uid
 * reaches the socket; else mkdtemp's 0700). Fails the test if it cannot. */
void fixture_dir_make(struct fixture_dir *f, const char *tag, int open_to_all);

/* Removes the directory with its files and those of its directories (two
 * levels: a store's directory). */
void fixture_dir_remove(const struct fixture_dir *f);

/* A producer connected to the socket at `path` under `name`. */
struct shmsched_client *fixture_connect_as(const char *path, const char *name);

/* Disconnects `c` and waits (at most 10 s) until daemon `d` has seen it go
 * (its producers_gone figure moves). */
void fixture_leave(struct daemon *d, struct shmsched_client *c);

/* Registers a template whose one label value (60 bytes) is unique to
 * (`tag`, `i`): its new strings are about 60 bytes and an entry's share
 * each. Returns shmsched_register_template's rc; the template in *tid (may
 * be NULL). */
int fixture_template_n(struct shmsched_client *c, const char *tag, int i,
		       uint32_t *tid, char *err, size_t err_len);

/* Polls `c` (at most 10 s) until one answer arrives, in *out. */
void fixture_poll_one(struct shmsched_client *c, struct shmsched_result *out);

/* Submits one pod of template `tid` with `cookie` and waits (at most 10 s)
 * for its answer, in *out. */
void fixture_place_one(struct shmsched_client *c, uint32_t tid, uint64_t cookie,
		       struct shmsched_result *out);

/* Polls `c` until `want` answers arrived (appended to out) or `ms`
 * milliseconds passed. Returns how many arrived. */
unsigned fixture_await(struct shmsched_client *c, struct shmsched_result *out,
		       unsigned want, unsigned ms);

#endif
