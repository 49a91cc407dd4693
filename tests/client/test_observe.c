/* unit.observe: the observer API (include/shmsched/observe.h) on state
 * regions this test builds with the shm library in process, as a daemon
 * would (shm/state.h), and then damages on file.
 *
 * - What the observer reads is what was put there: nodes with their
 *   allocatable, cordon, use (the ledger) and placements (records on the
 *   node's current generation only: one left on a removed node counts in
 *   the summary, on no node), producers with the placements they own,
 *   workers' counters, node names by id, strings by id.
 * - A region whose writer has gone (closed without a clean stop, as a
 *   kill -9 leaves it) reads the same, and says no daemon holds it.
 * - Refusals, each with its errno and a message that names the file: no
 *   such region, a bad name, wrong magic, another ABI version (both named),
 *   a truncated file, an empty file, capacities out of range, a snapshot
 *   whose checksum fails (the open passes: the snapshot is read per call,
 *   and each read refuses it), and a current snapshot left odd with no
 *   daemon to finish it (refused at once, not waited on). Records out of
 *   range are skipped. None crashes.
 */
#define _GNU_SOURCE 1

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <urcu/urcu-qsbr.h>

#include <cmocka.h>

#include "shm/shm.h"
#include "shmsched/observe.h"

/* The tables of one open region, as a daemon holds them. */
struct world {
	struct state *st;
	struct intern *strings;
	struct cluster *cluster;
	struct placements *records;
	char name[64];
};

static void world_open(struct world *w, const char *what)
{
	snprintf(w->name, sizeof(w->name), "test-observe-%d-%s", (int)getpid(), what);
	char err[256];
	state_remove(w->name, err, sizeof(err));
	struct state_config cfg = {
		.name = w->name,
		.max_nodes = 64,
		.max_placements = 256,
		.max_strings = 1024,
		.arena_size = 1 << 16,
		.workers = 2,
		.no_hugetlb = true,
	};
	bool fresh;
	assert_int_equal(state_open(&cfg, &w->st, &fresh, err, sizeof(err)), 0);
	assert_true(fresh);
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
	w->records = placements_create_in(state_section(w->st,
							SHM_SECTION_PLACEMENTS),
					  m->max_placements, true);
	assert_non_null(w->records);
	m->daemon_pid = (int32_t)getpid();
	m->starts = 1;
}

/* Closes without a clean stop: what a kill -9 leaves. */
static void world_close(struct world *w)
{
	placements_destroy(w->records);
	cluster_destroy(w->cluster);
	intern_destroy(w->strings);
	state_close(w->st);
	w->st = NULL;
}

static void world_remove(struct world *w)
{
	char err[256];
	assert_int_equal(state_remove(w->name, err, sizeof(err)), 0);
}

static uint32_t intern(struct world *w, const char *s)
{
	uint32_t id;
	assert_int_equal(intern_add_str(w->strings, s, &id), 0);
	return id;
}

static void node_event(struct world *w, uint8_t kind, const char *name,
		       int64_t cpu)
{
	struct node_event e = {.kind = kind, .name = intern(w, name)};
	e.spec.name = e.name;
	e.spec.allocatable.v[RES_CPU] = cpu;
	e.spec.allocatable.v[RES_MEMORY] = INT64_C(8) << 30;
	e.spec.allocatable.v[RES_PODS] = 110;
	e.spec.n_labels = 1;
	e.spec.labels[0] = (struct label){intern(w, "zone"), intern(w, "a")};
	char err[256];
	assert_int_equal(cluster_apply(w->cluster, &e, 1, err, sizeof(err)), 0);
}

/* A placement as a worker makes it: record taken, commit, record filled. */
static void place(struct world *w, uint32_t slot, int64_t cpu, uint32_t owner)
{
	struct pod_spec pod;
	memset(&pod, 0, sizeof(pod));
	pod.request.v[RES_CPU] = pod.nonzero_cpu_milli = cpu;
	pod.request.v[RES_MEMORY] = pod.nonzero_mem_bytes = 1 << 20;
	int64_t ix = placements_take(w->records);
	assert_true(ix >= 0);
	const struct snapshot *snap = cluster_snapshot(w->cluster);
	struct ledger *l = cluster_ledger(w->cluster);
	assert_int_equal(ledger_reserve(l, slot, &snap->nodes[slot].allocatable,
					&pod, NULL, NULL, NULL), 0);
	placements_fill(w->records, (uint32_t)ix, owner, slot,
			ledger_node_generation(l, slot), &pod, NULL, 7);
}

static void identity(struct world *w, uint32_t index, uint32_t uid,
		     const char *name, uint32_t connections)
{
	struct state_identity *ids = state_section(w->st, SHM_SECTION_IDENTITIES).base;
	ids[index].uid = uid;
	snprintf(ids[index].name, sizeof(ids[index].name), "%s", name);
	ids[index].connections = connections;
	ids[index].used = 1;
}

/* a (slot 0, 4000m), b (slot 1, removed after one placement), c (slot 2,
 * cordoned); placements: two on a by producer 1, one bound on a, one on b
 * by producer 2 (stale once b goes). */
static void populate(struct world *w)
{
	node_event(w, NODE_EVENT_ADD, "node-a", 4000);
	node_event(w, NODE_EVENT_ADD, "node-b", 2000);
	node_event(w, NODE_EVENT_ADD, "node-c", 8000);
	node_event(w, NODE_EVENT_CORDON, "node-c", 0);
	identity(w, 0, 1000, "alpha", 2);
	identity(w, 1, 1001, "beta", 0);
	place(w, 0, 500, 1);
	place(w, 0, 250, 1);
	place(w, 0, 100, PLACEMENT_OWNER_BOUND);
	place(w, 1, 300, 2);
	node_event(w, NODE_EVENT_REMOVE, "node-b", 0);
	struct state_worker_stats *ws = state_section(w->st,
						      SHM_SECTION_WORKER_STATS).base;
	ws[0].pods = 3;
	ws[0].placed = 3;
	ws[1].pods = 2;
	ws[1].placed = 1;
	ws[1].unschedulable = 1;
	ws[1].conflicts = 4;
	/* The queue's figures, each a value of its own. */
	ws[1].pending_active = 11;
	ws[1].pending_backoff = 12;
	ws[1].pending_unschedulable = 13;
	ws[1].preemption_attempts = 14;
	ws[1].preemption_victims = 15;
	for (unsigned b = 0; b < STATE_ATTEMPT_BUCKETS; b++)
		ws[1].attempts[b] = 20 + b;
	ws[1].waited = 30;
	ws[1].waited_placed = 31;
	ws[1].timed_out = 32;
	ws[1].waiting_cancelled = 33;
	ws[1].forgotten = 34;
	ws[1].queue_woken = 35;
}

static void check_contents(const char *name, bool running)
{
	char err[512];
	struct shmsched_observer *obs;
	int rc = shmsched_observe_open(name, &obs, err, sizeof(err));
	if (rc < 0)
		print_error("%s\n", err);
	assert_int_equal(rc, 0);

	struct shmsched_observe_summary sum;
	assert_int_equal(shmsched_observe_summary(obs, &sum, err, sizeof(err)), 0);
	assert_string_equal(sum.name, name);
	assert_non_null(strstr(sum.path, name));
	assert_int_equal(sum.daemon_running, running);
	assert_int_equal(sum.daemon_pid, getpid());
	assert_int_equal(sum.clean_stop, 0);
	assert_int_equal(sum.starts, 1);
	assert_int_equal(sum.nodes, 2);
	assert_int_equal(sum.node_slots, 3);
	/* Five node events, each a new snapshot after the first (1). */
	assert_int_equal(sum.generation, 6);
	assert_int_equal(sum.max_nodes, 64);
	assert_int_equal(sum.max_placements, 256);
	assert_int_equal(sum.workers, 2);
	assert_int_equal(sum.producers, 2);
	assert_int_equal(sum.placements, 4); /* the stale one too */
	assert_int_equal(sum.bound_placements, 1);
	assert_true(sum.page_bytes >= 4096);
	assert_true(sum.total_bytes > 0);

	struct shmsched_observe_node nodes[8];
	unsigned n = 0;
	uint64_t gen = 0;
	assert_int_equal(shmsched_observe_nodes(obs, nodes, 8, &n, &gen, err,
						sizeof(err)), 0);
	assert_int_equal(n, 2);
	assert_int_equal(gen, 6);
	assert_int_equal(nodes[0].node_id, 0);
	assert_string_equal(nodes[0].name, "node-a");
	assert_int_equal(nodes[0].cpu_milli, 4000);
	assert_int_equal(nodes[0].mem_bytes, INT64_C(8) << 30);
	assert_int_equal(nodes[0].pods, 110);
	assert_int_equal(nodes[0].used_cpu_milli, 850);
	assert_int_equal(nodes[0].used_mem_bytes, 3 << 20);
	assert_int_equal(nodes[0].used_pods, 3);
	assert_int_equal(nodes[0].placements, 3);
	assert_int_equal(nodes[0].labels, 1);
	assert_int_equal(nodes[0].cordoned, 0);
	assert_int_equal(nodes[1].node_id, 2);
	assert_string_equal(nodes[1].name, "node-c");
	assert_int_equal(nodes[1].cordoned, 1);
	assert_int_equal(nodes[1].used_pods, 0);
	assert_int_equal(nodes[1].placements, 0);

	/* Too little room: the count still says how many. */
	assert_int_equal(shmsched_observe_nodes(obs, nodes, 1, &n, NULL, err,
						sizeof(err)), 0);
	assert_int_equal(n, 2);
	assert_int_equal(shmsched_observe_nodes(obs, NULL, 0, &n, NULL, err,
						sizeof(err)), 0);
	assert_int_equal(n, 2);
	assert_int_equal(shmsched_observe_nodes(obs, NULL, 1, &n, NULL, err,
						sizeof(err)), -EINVAL);

	char buf[64];
	assert_int_equal(shmsched_observe_node_name(obs, 2, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "node-c");
	assert_int_equal(shmsched_observe_node_name(obs, 1, buf, sizeof(buf)), -ENOENT);
	assert_int_equal(shmsched_observe_node_name(obs, 63, buf, sizeof(buf)), -ENOENT);
	assert_int_equal(shmsched_observe_node_name(obs, UINT32_MAX, buf,
						    sizeof(buf)), -ENOENT);
	assert_int_equal(shmsched_observe_node_name(obs, 0, buf, 4), -ENOBUFS);
	assert_string_equal(buf, "");
	assert_int_equal(shmsched_observe_string(obs, nodes[0].name_id, buf,
						 sizeof(buf)), 0);
	assert_string_equal(buf, "node-a");
	assert_int_equal(shmsched_observe_string(obs, 0, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "");
	assert_int_equal(shmsched_observe_string(obs, 1000, buf, sizeof(buf)), -ENOENT);
	assert_int_equal(shmsched_observe_string(obs, UINT32_MAX, buf, sizeof(buf)),
			 -ENOENT);

	struct shmsched_observe_producer prods[4];
	assert_int_equal(shmsched_observe_producers(obs, prods, 4, &n, err,
						    sizeof(err)), 0);
	assert_int_equal(n, 2);
	assert_int_equal(prods[0].owner, 1);
	assert_int_equal(prods[0].uid, 1000);
	assert_string_equal(prods[0].name, "alpha");
	assert_int_equal(prods[0].connections, 2);
	assert_int_equal(prods[0].placements, 2);
	assert_string_equal(prods[1].name, "beta");
	assert_int_equal(prods[1].placements, 1); /* on the removed node: still its */

	struct shmsched_observe_worker workers[4];
	assert_int_equal(shmsched_observe_workers(obs, workers, 4, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(workers[0].placed, 3);
	assert_int_equal(workers[1].index, 1);
	assert_int_equal(workers[1].unschedulable, 1);
	assert_int_equal(workers[1].conflicts, 4);
	assert_int_equal(workers[1].pending_active, 11);
	assert_int_equal(workers[1].pending_backoff, 12);
	assert_int_equal(workers[1].pending_unschedulable, 13);
	assert_int_equal(workers[1].pending_gated, 0);
	assert_int_equal(workers[1].preemption_attempts, 14);
	assert_int_equal(workers[1].preemption_victims, 15);
	for (unsigned b = 0; b < 6; b++)
		assert_int_equal(workers[1].attempts[b], 20 + b);
	assert_int_equal(workers[1].waited, 30);
	assert_int_equal(workers[1].waited_placed, 31);
	assert_int_equal(workers[1].timed_out, 32);
	assert_int_equal(workers[1].waiting_cancelled, 33);
	assert_int_equal(workers[1].forgotten, 34);
	assert_int_equal(workers[1].queue_woken, 35);
	assert_int_equal(workers[0].pending_unschedulable, 0);

	struct shmsched_observe_stats stats;
	assert_int_equal(shmsched_observe_stats(obs, &stats), 0);
	assert_true(stats.reads >= 4);
	assert_int_equal(stats.refused, 0);
	shmsched_observe_close(obs);
}

static void test_contents(void **state)
{
	(void)state;
	struct world w;
	world_open(&w, "contents");
	populate(&w);
	check_contents(w.name, true);
	world_close(&w); /* no clean stop */
	check_contents(w.name, false);
	world_remove(&w);
}

static void test_missing_and_bad_names(void **state)
{
	(void)state;
	char err[512], name[64];
	struct shmsched_observer *obs = (struct shmsched_observer *)&err;
	snprintf(name, sizeof(name), "test-observe-%d-none", (int)getpid());
	assert_int_equal(shmsched_observe_open(name, &obs, err, sizeof(err)), -ENOENT);
	assert_null(obs);
	assert_non_null(strstr(err, "/dev/shm/"));
	assert_non_null(strstr(err, name));
	assert_int_equal(shmsched_observe_open(".x", &obs, err, sizeof(err)), -EINVAL);
	assert_int_equal(shmsched_observe_open("a/b", &obs, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "region name"));
	assert_int_equal(shmsched_observe_open(name, NULL, err, sizeof(err)), -EINVAL);
	shmsched_observe_close(NULL);
	struct shmsched_observe_stats st;
	assert_int_equal(shmsched_observe_stats(NULL, &st), -EINVAL);
}

/* Makes a populated region, closes it, applies `damage` to its file, and
 * opens it with the observer: returns the open's result, and when the
 * open passed, the first failure of the reads (0 if none). */
static int observe_damaged(const char *what, void (*damage)(int fd, off_t size),
			   char *err, size_t len)
{
	struct world w;
	world_open(&w, what);
	populate(&w);
	world_close(&w);
	char path[256];
	assert_non_null(state_path(w.name, path, sizeof(path)));
	int fd = open(path, O_RDWR);
	assert_true(fd >= 0);
	struct stat st;
	assert_int_equal(fstat(fd, &st), 0);
	damage(fd, st.st_size);
	close(fd);
	struct shmsched_observer *obs;
	err[0] = '\0';
	int rc = shmsched_observe_open(w.name, &obs, err, len);
	if (rc == 0) {
		struct shmsched_observe_summary sum;
		struct shmsched_observe_node nodes[8];
		unsigned n;
		char buf[64];
		rc = shmsched_observe_summary(obs, &sum, err, len);
		if (rc == 0)
			rc = shmsched_observe_nodes(obs, nodes, 8, &n, NULL, err, len);
		/* Every call answers, whatever the damage. */
		shmsched_observe_node_name(obs, 0, buf, sizeof(buf));
		struct shmsched_observe_producer prods[4];
		shmsched_observe_producers(obs, prods, 4, &n, NULL, 0);
		struct shmsched_observe_worker workers[4];
		shmsched_observe_workers(obs, workers, 4, &n);
		shmsched_observe_close(obs);
	}
	world_remove(&w);
	return rc;
}

static void put(int fd, off_t off, const void *v, size_t n)
{
	assert_int_equal(pwrite(fd, v, n, off), (ssize_t)n);
}

static void put_u32(int fd, off_t off, uint32_t v)
{
	put(fd, off, &v, sizeof(v));
}

/* The offset of section `id`, from the header on file. */
static off_t section_offset(int fd, uint32_t id)
{
	struct shm_header h;
	assert_int_equal(pread(fd, &h, sizeof(h), 0), sizeof(h));
	for (unsigned i = 0; i < h.section_count && i < SHM_SECTION_MAX; i++)
		if (h.sections[i].id == id)
			return (off_t)h.sections[i].offset;
	fail();
	return 0;
}

static void bad_magic(int fd, off_t size)
{
	(void)size;
	put_u32(fd, 0, 0x12345678);
}

static void other_version(int fd, off_t size)
{
	(void)size;
	put_u32(fd, offsetof(struct shm_header, abi_version), SHM_ABI_VERSION + 1);
}

static void truncated(int fd, off_t size)
{
	assert_int_equal(ftruncate(fd, size / 2), 0);
}

static void emptied(int fd, off_t size)
{
	(void)size;
	assert_int_equal(ftruncate(fd, 0), 0);
}

static void nodes_out_of_range(int fd, off_t size)
{
	(void)size;
	put_u32(fd, section_offset(fd, SHM_SECTION_META) +
		(off_t)offsetof(struct state_meta, max_nodes), UINT32_MAX);
}

/* The current snapshot's node-a changed behind its checksum: its cpu. */
static void snapshot_flipped(int fd, off_t size)
{
	char *map = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE, MAP_SHARED,
			 fd, 0);
	assert_true(map != MAP_FAILED);
	const struct state_meta *m = (void *)(map + section_offset(fd,
								SHM_SECTION_META));
	struct shm_span span = {map + section_offset(fd, SHM_SECTION_SNAPSHOTS),
				cluster_snapshots_section_size(m->max_nodes)};
	struct state_snapshot *hdr[2];
	struct snapshot views[2];
	assert_int_equal(cluster_snapshots_in(span, m->max_nodes, hdr, views), 0);
	views[m->current_snapshot].nodes[0].allocatable.v[RES_CPU] = 4001;
	munmap(map, (size_t)size);
}

/* The current snapshot index out of range: refused at open (the
 * reads check it again, for one that goes bad later). */
static void index_damaged(int fd, off_t size)
{
	(void)size;
	put_u32(fd, section_offset(fd, SHM_SECTION_META) +
		(off_t)offsetof(struct state_meta, current_snapshot), 7);
}

/* The current snapshot left odd (being rewritten), which no daemon does:
 * with none holding the region, refused at once rather than waited on. */
static void snapshot_odd(int fd, off_t size)
{
	char *map = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE, MAP_SHARED,
			 fd, 0);
	assert_true(map != MAP_FAILED);
	const struct state_meta *m = (void *)(map + section_offset(fd,
								SHM_SECTION_META));
	struct shm_span span = {map + section_offset(fd, SHM_SECTION_SNAPSHOTS),
				cluster_snapshots_section_size(m->max_nodes)};
	struct state_snapshot *hdr[2];
	struct snapshot views[2];
	assert_int_equal(cluster_snapshots_in(span, m->max_nodes, hdr, views), 0);
	hdr[m->current_snapshot]->seq++;
	munmap(map, (size_t)size);
}

/* A record's slot past every node, and the high-water mark past the
 * records. */
static void records_damaged(int fd, off_t size)
{
	(void)size;
	off_t at = section_offset(fd, SHM_SECTION_PLACEMENTS);
	/* struct placements_shared: capacity, reserved, (64) live, high_water. */
	put_u32(fd, at + 72, UINT32_MAX);
	/* Records start at 128: the first one's slot. */
	put_u32(fd, at + 128 + (off_t)offsetof(struct placement_record, slot),
		UINT32_MAX);
}

static void test_damaged_regions(void **state)
{
	(void)state;
	char err[512], want[64];
	assert_int_equal(observe_damaged("magic", bad_magic, err, sizeof(err)),
			 -EPROTO);
	assert_non_null(strstr(err, "magic"));
	assert_non_null(strstr(err, "/dev/shm/"));

	assert_int_equal(observe_damaged("version", other_version, err, sizeof(err)),
			 -EPROTONOSUPPORT);
	snprintf(want, sizeof(want), "%u", SHM_ABI_VERSION + 1);
	assert_non_null(strstr(err, want));
	snprintf(want, sizeof(want), "%u", SHM_ABI_VERSION);
	assert_non_null(strstr(err, want));

	int rc = observe_damaged("truncated", truncated, err, sizeof(err));
	assert_true(rc == -EPROTO || rc == -EBADMSG);
	assert_true(err[0] != '\0');

	assert_int_equal(observe_damaged("empty", emptied, err, sizeof(err)), -EPROTO);
	assert_non_null(strstr(err, "empty"));

	assert_int_equal(observe_damaged("caps", nodes_out_of_range, err,
					 sizeof(err)), -EBADMSG);
	assert_non_null(strstr(err, "capacities"));

	assert_int_equal(observe_damaged("checksum", snapshot_flipped, err,
					 sizeof(err)), -EBADMSG);
	assert_non_null(strstr(err, "checksum"));

	assert_int_equal(observe_damaged("index", index_damaged, err, sizeof(err)),
			 -EBADMSG);
	assert_non_null(strstr(err, "meta section damaged"));

	assert_int_equal(observe_damaged("odd", snapshot_odd, err, sizeof(err)),
			 -EBADMSG);
	assert_non_null(strstr(err, "no daemon holds the region"));

	/* Records out of range are skipped, not followed: the reads pass. */
	assert_int_equal(observe_damaged("records", records_damaged, err,
					 sizeof(err)), 0);
}

int main(void)
{
	urcu_qsbr_register_thread();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_contents),
		cmocka_unit_test(test_missing_and_bad_names),
		cmocka_unit_test(test_damaged_regions),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	urcu_qsbr_unregister_thread();
	return rc;
}
