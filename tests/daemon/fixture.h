/* Test helpers for tests/daemon/ (the real daemon in process, producers
 * connecting from the test): a scratch directory for the daemon's sockets
 * and its cluster file, that file written, the daemon started on a
 * config, a producer connected (under a name), one leaving (and the
 * daemon seeing it go), templates (of JSON, of a cpu request under a
 * LocalQueue, of an app on a node, of strings unique to a tag), one pod
 * placed or parked, answers awaited, node leases and the observer's view
 * of the nodes, and a producer churning for race tests. Each takes what
 * it needs (the socket's path, the daemon) as a parameter; a failure
 * fails the running cmocka test with a message naming what was asked;
 * and main() of a test whose race case runs alone. Quota trees and
 * templates under a LocalQueue: quota_fixture.h.
 * Linked as the library daemon_fixture (tests/daemon/meson.build). */
#ifndef SHMSCHED_TESTS_DAEMON_FIXTURE_H
#define SHMSCHED_TESTS_DAEMON_FIXTURE_H

#include <stddef.h>
#include <stdint.h>

#include "daemon/daemon.h"
#include "shmsched/client.h"
#include "shmsched/observe.h"

/* A scratch directory /tmp/shmsched-TAG-XXXXXX holding the daemon's
 * socket `sock` (DIR/s.sock), its admin socket `admin` (s.sock.admin) and
 * the cluster file's path `cluster` (DIR/cluster.json, written by
 * fixture_write_cluster or fixture_write_file). */
struct fixture_dir {
	char dir[64];
	char sock[128];
	char admin[160];
	char cluster[128];
};

/* Makes the directory (mode 0755 when `open_to_all`, so that another uid
 * reaches the socket; else mkdtemp's 0700). Fails the test if it cannot. */
void fixture_dir_make(struct fixture_dir *f, const char *tag, int open_to_all);

/* Removes the directory with its files and those of its directories (two
 * levels: a store's directory). */
void fixture_dir_remove(const struct fixture_dir *f);

/* Writes `text` to the file at `path` (created or truncated). Fails the
 * test, naming the path, if it cannot. */
void fixture_write_file(const char *path, const char *text);

/* Nodes of a cluster file, all alike: n<first> .. n<first + count - 1>,
 * each with allocatable `cpu`, `memory` and `pods` (NULL: "110"); with
 * `pool` not NULL, node n<first + i> labelled
 * node.kubernetes.io/instance-type=pool[i] (its pool: quarantine's). */
struct fixture_nodes {
	int first, count;
	const char *cpu, *memory, *pods;
	const char *const *pool;
};

/* Writes f->cluster: a List of the nodes, then `extra` (objects joined by
 * commas, without a leading one; NULL: none). Fails as
 * fixture_write_file. */
void fixture_write_cluster(const struct fixture_dir *f,
			   const struct fixture_nodes *nodes, const char *extra);

/* The config the tests start from: f's socket and cluster file, seed 1,
 * one worker, 64 slots; the test sets what else it needs. */
struct daemon_config fixture_config(const struct fixture_dir *f);

/* daemon_start(cfg); fails the test with daemon_start's message if it
 * cannot start. */
struct daemon *fixture_start(const struct daemon_config *cfg);

/* main() of a test program whose race case runs alone (meson's stress
 * test of the same program passes "race"): with argv[1] "race" the group
 * race[0..n_race), else tests[0..n), each with setup and teardown.
 * Returns cmocka's result. FIXTURE_RUN takes the two arrays themselves. */
struct CMUnitTest;
int fixture_run(int argc, char **argv, const struct CMUnitTest *tests, size_t n,
		const struct CMUnitTest *race, size_t n_race,
		int (*setup)(void **), int (*teardown)(void **));
#define FIXTURE_RUN(argc, argv, tests, race, setup, teardown)                   \
	fixture_run(argc, argv, tests, sizeof(tests) / sizeof((tests)[0]), race, \
		    sizeof(race) / sizeof((race)[0]), setup, teardown)

/* A producer (or an admin, on f->admin) connected to the socket at
 * `path`; fails the test naming the path and the error. */
struct shmsched_client *fixture_connect(const char *path);

/* Registers the template `json`; fails the test naming the JSON and the
 * daemon's error. Returns the template's id. */
uint32_t fixture_template(struct shmsched_client *c, const char *json);

/* A pod "t" of one container requesting `cpu`: under LocalQueue `queue`
 * of namespace default (the label kueue.x-k8s.io/queue-name), or, with
 * `queue` NULL, in no namespace and no queue. Fails as fixture_template. */
uint32_t fixture_cpu_template(struct shmsched_client *c, const char *queue,
			      const char *cpu);

/* fixture_cpu_template's JSON, into json[0..len) (512 bytes hold it):
 * for a forked child, where cmocka's failures cannot run. */
void fixture_cpu_json(char *json, size_t len, const char *queue,
		      const char *cpu);

/* A pod named `app` labelled app=`app` requesting 1 cpu, bound to node
 * `node` (spec.nodeName). Fails as fixture_template. */
uint32_t fixture_app_on(struct shmsched_client *c, const char *app,
			const char *node);

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

/* As fixture_place_one, and the answer's status must be `want` (an enum
 * shmsched_status; the failure names the pod, both statuses and the
 * answer's message). Returns the answer's placement id. */
uint64_t fixture_place(struct shmsched_client *c, uint32_t tid, uint64_t cookie,
		       uint32_t want);

/* Submits a pod of `tid` that waits (SHMSCHED_WAIT, up to 20 s): it must
 * park, unanswered, as the `n`-th pod waiting in daemon `d`
 * (pending_unschedulable reads `n`, polled for up to 10 s: a loaded
 * machine), and `c` must hear nothing of it within 100 ms. */
void fixture_park_one(struct daemon *d, struct shmsched_client *c, uint32_t tid,
		      uint64_t cookie, uint64_t n);

/* Renews node `node`'s lease on the admin connection `admin`
 * (SHMSCHED_NODE_LEASE); fails the test naming the node, the rc and the
 * daemon's message. */
void fixture_lease(struct shmsched_client *admin, const char *node);

/* The nodes of state region `region` as `shmsched status` reads them (the
 * observer), at most `max` into `nodes`; fails the test naming the region
 * if it cannot read them. Returns how many. */
unsigned fixture_observe_nodes(const char *region,
			       struct shmsched_observe_node *nodes, unsigned max);

/* A producer churning for a race test (one thread each, on its own
 * connection): it places pods of its templates, one in flight at a time,
 * and gives placements back, at random (xorshift64 from `seed`). */
#define FIXTURE_CHURN_LIVE_MAX 32
struct fixture_churn {
	struct shmsched_client *c;
	uint32_t tid[4];   /* the templates it picks among: tid[0..n_tid) */
	unsigned n_tid;
	unsigned live_max; /* placements held at most, <= FIXTURE_CHURN_LIVE_MAX */
	uint64_t seed;     /* xorshift64's state: not 0 */
	uint64_t cookie;   /* the last pod's cookie */
	/* The live placements and the template index of each. */
	uint64_t id[FIXTURE_CHURN_LIVE_MAX];
	int which[FIXTURE_CHURN_LIVE_MAX];
	unsigned n;
	uint64_t placed, refused, released;
	const char *failed; /* set by the step that failed */
};

/* One step of `ch`: when it holds live_max placements, or holds some and
 * draws 1 in 3, it releases one drawn at random; else it submits a pod of
 * a template drawn at random (cookie + 1) and waits (at most 10 s) for
 * the answer, keeping a placement. Returns 0, or -1 with ch->failed
 * naming what failed ("release", "submit", "no answer"). */
int fixture_churn_step(struct fixture_churn *ch);

/* An injected clock (the daemon_config's *_clock_ns with its *_arg, or
 * afsl_create's): the nanoseconds in the uint64_t `arg` points to, which
 * the test steps by hand with __atomic relaxed stores or adds (read
 * relaxed: a test's steps are ordered by its own requests' round trips;
 * the readers are the workers and the daemon's threads). */
uint64_t fixture_clock_ns(void *arg);

/* Polls `c` until `want` answers arrived (appended to out) or `ms`
 * milliseconds passed. Returns how many arrived. */
unsigned fixture_await(struct shmsched_client *c, struct shmsched_result *out,
		       unsigned want, unsigned ms);

#endif
