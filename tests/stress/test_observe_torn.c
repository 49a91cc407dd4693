/* stress.observe_torn: an observer in another process reads a state
 * region's nodes without pause while this process rewrites them without
 * pause, and never returns a torn copy.
 *
 * The writer (this process's main thread, a registered QSBR thread as
 * cluster_apply() needs) applies batches of node events to a named region:
 * every batch updates every node, and adds, removes, cordons or uncordons
 * one more. Each batch stamps every node it leaves present with the
 * generation the batch will publish (cpu = generation, memory = 3 x
 * generation) and with the node count it leaves (allocatable pods), so a
 * copy of one snapshot is recognisable by itself: all its nodes carry its
 * generation and its count. The observer (a child by fork(), using only
 * include/shmsched/observe.h on its own read-only mapping) reads the nodes
 * in a loop for SHMSCHED_STRESS_SECONDS (3 by default).
 *
 * Invariants, each a count that must read zero:
 * - torn: a read the observer accepted (0 returned) holding a node whose
 *   stamps are not its snapshot's generation and count: a copy mixed from
 *   two snapshots, or part of one being written;
 * - damaged: a read refused as damaged (-EBADMSG): a stable copy whose
 *   checksum failed, which a correct writer never leaves;
 * - other errors.
 * And the race must have happened: the observer retried (the writer
 * rewrote the buffer under its copy) and still got reads through.
 */
#define _GNU_SOURCE 1

#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <urcu/urcu-qsbr.h>

#include <cmocka.h>

#include "shm/shm.h"
#include "shmsched/observe.h"

#define NAMES 320     /* node names the writer uses, present or not */
#define MIN_NODES 200
#define MAX_NODES 280

/* What the observer reports through its pipe. */
struct observer_counts {
	uint64_t reads;
	uint64_t torn;
	uint64_t eagain;
	uint64_t damaged;
	uint64_t other;
	uint64_t retries;      /* from shmsched_observe_stats */
	uint64_t generations;  /* distinct generations seen (changes) */
	char first_error[512];
};

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static unsigned seconds(void)
{
	const char *s = getenv("SHMSCHED_STRESS_SECONDS");
	unsigned v = s != NULL ? (unsigned)strtoul(s, NULL, 10) : 0;
	return v ? v : 3;
}

/* The child: reads until the deadline, reports, exits. */
static void observe_loop(const char *name, int out_fd, uint64_t deadline_ns)
{
	struct observer_counts c;
	memset(&c, 0, sizeof(c));
	static struct shmsched_observe_node nodes[NAMES];
	struct shmsched_observer *obs;
	char err[512];
	int rc = shmsched_observe_open(name, &obs, err, sizeof(err));
	if (rc < 0) {
		c.other++;
		snprintf(c.first_error, sizeof(c.first_error), "%s", err);
		goto report;
	}
	uint64_t last = 0;
	while (now_ns() < deadline_ns) {
		unsigned n = 0;
		uint64_t gen = 0;
		rc = shmsched_observe_nodes(obs, nodes, NAMES, &n, &gen, err,
					    sizeof(err));
		if (rc == -EAGAIN) {
			c.eagain++;
			continue;
		}
		if (rc < 0) {
			if (rc == -EBADMSG)
				c.damaged++;
			else
				c.other++;
			if (c.first_error[0] == '\0')
				snprintf(c.first_error, sizeof(c.first_error), "%s", err);
			continue;
		}
		c.reads++;
		c.generations += gen != last;
		last = gen;
		bool torn = n > NAMES || n < MIN_NODES - 1 || n > MAX_NODES + 1;
		for (unsigned i = 0; i < n && i < NAMES && !torn; i++)
			torn = nodes[i].cpu_milli != (int64_t)gen ||
			       nodes[i].mem_bytes != 3 * (int64_t)gen ||
			       nodes[i].pods != (int64_t)n ||
			       strncmp(nodes[i].name, "node-", 5) != 0;
		c.torn += torn;
	}
	struct shmsched_observe_stats st;
	shmsched_observe_stats(obs, &st);
	c.retries = st.retries;
	shmsched_observe_close(obs);
report:
	if (write(out_fd, &c, sizeof(c)) != (ssize_t)sizeof(c))
		_exit(3);
	_exit(0);
}

struct writer {
	struct state *st;
	struct intern *strings;
	struct cluster *cluster;
	uint32_t ids[NAMES];
	bool present[NAMES];
	unsigned n_present;
	uint64_t batches;
};

static void writer_open(struct writer *w, const char *name)
{
	char err[256];
	state_remove(name, err, sizeof(err));
	struct state_config cfg = {
		.name = name,
		.max_nodes = 512,
		.max_placements = 64,
		.max_strings = 4096,
		.arena_size = 1 << 16,
		.workers = 1,
		.no_hugetlb = true,
	};
	bool fresh;
	assert_int_equal(state_open(&cfg, &w->st, &fresh, err, sizeof(err)), 0);
	struct state_meta *m = state_meta(w->st);
	w->strings = intern_create_in(state_section(w->st, SHM_SECTION_STRINGS),
				      m->max_strings, m->arena_size, true, err,
				      sizeof(err));
	assert_non_null(w->strings);
	struct cluster_memory mem = {
		.snapshots = state_section(w->st, SHM_SECTION_SNAPSHOTS),
		.ledger = state_section(w->st, SHM_SECTION_LEDGER),
		.current = &m->current_snapshot,
	};
	w->cluster = cluster_create_in(w->strings, m->max_nodes, &mem, true, err,
				       sizeof(err));
	assert_non_null(w->cluster);
	struct placements *p = placements_create_in(
		state_section(w->st, SHM_SECTION_PLACEMENTS), m->max_placements, true);
	assert_non_null(p);
	placements_destroy(p); /* set up for the observer; not written here */
	for (unsigned i = 0; i < NAMES; i++) {
		char s[32];
		snprintf(s, sizeof(s), "node-%u", i);
		assert_int_equal(intern_add_str(w->strings, s, &w->ids[i]), 0);
	}
}

/* Stamps event `e` for the batch that publishes `gen` leaving `count`
 * nodes. Only the stamps change from batch to batch: the events are built
 * once, so the writer spends as little as it can between publishing one
 * buffer and starting on the other (the time an observer's copy must
 * outlast to meet a rewrite). */
static void stamp(struct node_event *e, uint8_t kind, uint32_t name,
		  uint64_t gen, unsigned count)
{
	e->kind = kind;
	e->name = name;
	e->spec.name = name;
	e->spec.allocatable.v[RES_CPU] = (int64_t)gen;
	e->spec.allocatable.v[RES_MEMORY] = 3 * (int64_t)gen;
	e->spec.allocatable.v[RES_PODS] = count;
}

/* One batch: the change (k cycles through add, cordon, remove, uncordon),
 * then every node left present stamped. */
static void writer_batch(struct writer *w, uint64_t k, uint64_t *rng)
{
	static struct node_event events[NAMES + 2]; /* zero but for stamps */
	size_t n = 0;
	const struct snapshot *snap = cluster_snapshot(w->cluster);
	uint64_t gen = snap->generation + 1;
	*rng ^= *rng << 13;
	*rng ^= *rng >> 7;
	*rng ^= *rng << 17;
	unsigned pick = (unsigned)(*rng % NAMES);
	unsigned kind = (unsigned)(k % 4);
	/* The named node: the next absent one for an add, the next present
	 * one otherwise. */
	bool want_present = kind != 0;
	while (w->present[pick] != want_present)
		pick = (pick + 1) % NAMES;
	unsigned count = w->n_present;
	bool add = kind == 0 && count < MAX_NODES;
	bool remove = kind == 2 && count > MIN_NODES;
	count += add;
	count -= remove;
	if (add) {
		stamp(&events[n++], NODE_EVENT_ADD, w->ids[pick], gen, count);
		w->present[pick] = true;
	} else if (remove) {
		stamp(&events[n++], NODE_EVENT_REMOVE, w->ids[pick], 0, 0);
		w->present[pick] = false;
	}
	for (unsigned i = 0; i < NAMES; i++)
		if (w->present[i] && !(add && i == pick))
			stamp(&events[n++], NODE_EVENT_UPDATE, w->ids[i], gen, count);
	if ((kind == 1 || kind == 3) && w->present[pick])
		stamp(&events[n++], kind == 1 ? NODE_EVENT_CORDON
					      : NODE_EVENT_UNCORDON,
		      w->ids[pick], 0, 0);
	w->n_present = count;
	char err[256];
	int rc = cluster_apply(w->cluster, events, n, err, sizeof(err));
	if (rc < 0)
		print_error("batch %" PRIu64 ": %s\n", k, err);
	assert_int_equal(rc, 0);
	w->batches++;
}

static char name[64];

/* The region goes whatever the test's outcome. */
static int remove_region(void **state)
{
	(void)state;
	char err[256];
	state_remove(name, err, sizeof(err));
	return 0;
}

static void test_no_torn_reads(void **state)
{
	(void)state;
	snprintf(name, sizeof(name), "test-observe-torn-%d", (int)getpid());
	struct writer w;
	memset(&w, 0, sizeof(w));
	writer_open(&w, name);
	uint64_t rng = 0x9e3779b97f4a7c15u;
	/* The first nodes, before the observer starts. */
	while (w.n_present < (MIN_NODES + MAX_NODES) / 2)
		writer_batch(&w, 0, &rng);

	int fds[2];
	assert_int_equal(pipe(fds), 0);
	uint64_t deadline = now_ns() + (uint64_t)seconds() * 1000000000u;
	pid_t child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		close(fds[0]);
		observe_loop(name, fds[1], deadline);
	}
	close(fds[1]);
	/* Write until the observer is done, a little past its deadline. */
	for (uint64_t k = 0; now_ns() < deadline + 100000000u; k++)
		writer_batch(&w, k, &rng);
	struct observer_counts c;
	ssize_t got = read(fds[0], &c, sizeof(c));
	close(fds[0]);
	int status;
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(got, (ssize_t)sizeof(c));

	printf("observe_torn: %" PRIu64 " batches written; observer: %" PRIu64
	       " reads (%" PRIu64 " generations), %" PRIu64 " retries, %" PRIu64
	       " gave up (-EAGAIN); torn %" PRIu64 ", damaged %" PRIu64
	       ", other errors %" PRIu64 "\n", w.batches, c.reads, c.generations,
	       c.retries, c.eagain, c.torn, c.damaged, c.other);
	if (c.first_error[0] != '\0')
		printf("observe_torn: first error: %s\n", c.first_error);
	assert_int_equal(c.torn, 0);
	assert_int_equal(c.damaged, 0);
	assert_int_equal(c.other, 0);
	/* The race happened, and reads got through it. */
	assert_true(c.retries > 0);
	assert_true(c.reads > 0);
	assert_true(c.generations > 1);

	cluster_destroy(w.cluster);
	intern_destroy(w.strings);
	state_close(w.st);
}

int main(void)
{
	urcu_qsbr_register_thread();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_no_torn_reads, remove_region),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	urcu_qsbr_unregister_thread();
	return rc;
}
