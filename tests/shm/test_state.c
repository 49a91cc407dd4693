/* unit.state: the state region (shm/state.h) and the recount after a crash
 * (shm/recount.h), stepped by hand on one thread.
 *
 * - A region made, filled (strings, a node, placements) and closed without
 *   a clean stop is re-attached with everything in it.
 * - The recount: a commit whose record was never filled (the daemon died
 *   between the two) is rolled back; a release cut short (counters given
 *   back, record still live) is counted again; a record on a removed node
 *   is not counted; a damaged record refuses the region and changes
 *   nothing.
 * - Refusals, each with its message: a second daemon on a held region, a
 *   bad name, wrong magic, another ABI version (both named), a truncated
 *   file, a snapshot whose checksum fails, a damaged string.
 * - Not ours (issue 41), refused with owner, mode and the fix named: a
 *   region of another uid (as root), one group or others may write or
 *   read (with no group named), a link, a fifo (an observer too, without
 *   hanging); a mode that would let others write, asked for. --fresh over
 *   another uid's file makes a new one of ours.
 * - Damaged records refused naming field and value: an owner no identity
 *   has, a slot past the capacity, a node generation past the slot's; an
 *   intern offset moved by 2^40 (offset named); an identity's `used` 7.
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
#include <sys/stat.h>
#include <unistd.h>
#include <urcu/urcu-qsbr.h>

#include <cmocka.h>

#include "shm/shm.h"

/* The tables of one open region, as the daemon holds them. */
struct world {
	struct state *st;
	struct intern *strings;
	struct cluster *cluster;
	struct placements *records;
	char name[64];
};

static const struct state_config base_cfg = {
	.max_nodes = 64,
	.max_placements = 256,
	.max_strings = 1024,
	.arena_size = 1 << 16,
	.workers = 1,
	.no_hugetlb = true,
};

static int world_open(struct world *w, const char *name, bool *fresh, char *err,
		      size_t len)
{
	struct state_config cfg = base_cfg;
	cfg.name = name;
	snprintf(w->name, sizeof(w->name), "%s", name);
	int rc = state_open(&cfg, &w->st, fresh, err, len);
	if (rc < 0)
		return rc;
	struct state_meta *m = state_meta(w->st);
	w->strings = intern_create_in(state_section(w->st, SHM_SECTION_STRINGS),
				      m->max_strings, m->arena_size, *fresh, err, len);
	if (w->strings == NULL)
		return -errno;
	struct cluster_memory mem = {
		.snapshots = state_section(w->st, SHM_SECTION_SNAPSHOTS),
		.ledger = state_section(w->st, SHM_SECTION_LEDGER),
		.current = &m->current_snapshot,
	};
	w->cluster = cluster_create_in(w->strings, m->max_nodes, &mem, *fresh, err,
				       len);
	if (w->cluster == NULL)
		return -errno;
	w->records = placements_create_in(state_section(w->st, SHM_SECTION_PLACEMENTS),
					  m->max_placements, *fresh);
	return w->records ? 0 : -errno;
}

static void world_close(struct world *w)
{
	placements_destroy(w->records);
	cluster_destroy(w->cluster);
	intern_destroy(w->strings);
	state_close(w->st);
	memset(w, 0, sizeof(*w));
}

static void unique_name(char *buf, size_t len, const char *what)
{
	snprintf(buf, len, "test-state-%d-%s", (int)getpid(), what);
	char err[128];
	state_remove(buf, err, sizeof(err));
}

static struct pod_spec pod_of(int64_t cpu)
{
	struct pod_spec p;
	memset(&p, 0, sizeof(p));
	p.request.v[RES_CPU] = p.nonzero_cpu_milli = cpu;
	p.request.v[RES_MEMORY] = p.nonzero_mem_bytes = 1 << 20;
	return p;
}

static void add_node(struct world *w, const char *name, int64_t cpu)
{
	struct node_event e = {.kind = NODE_EVENT_ADD};
	assert_int_equal(intern_add_str(w->strings, name, &e.name), 0);
	e.spec.name = e.name;
	e.spec.allocatable.v[RES_CPU] = cpu;
	e.spec.allocatable.v[RES_MEMORY] = INT64_C(1) << 34;
	e.spec.allocatable.v[RES_PODS] = 110;
	char err[256];
	assert_int_equal(cluster_apply(w->cluster, &e, 1, err, sizeof(err)), 0);
}

/* A placement as a worker makes it: record taken, commit, record filled. */
static uint64_t place(struct world *w, uint32_t slot, int64_t cpu, uint32_t owner)
{
	struct pod_spec pod = pod_of(cpu);
	int64_t ix = placements_take(w->records);
	assert_true(ix >= 0);
	const struct snapshot *snap = cluster_snapshot(w->cluster);
	assert_int_equal(ledger_reserve(cluster_ledger(w->cluster), slot,
					&snap->nodes[slot].allocatable, &pod, NULL,
					NULL, NULL), 0);
	return placements_fill(w->records, (uint32_t)ix, owner, slot,
			       ledger_node_generation(cluster_ledger(w->cluster), slot),
			       &pod, NULL, 42);
}

static int64_t used_cpu(struct world *w, uint32_t slot)
{
	return ledger_node(cluster_ledger(w->cluster), slot)->used[RES_CPU];
}

static void test_reattach_and_recount(void **state)
{
	(void)state;
	char name[64], err[256];
	unique_name(name, sizeof(name), "recount");
	struct world w;
	bool fresh = false;
	assert_int_equal(world_open(&w, name, &fresh, err, sizeof(err)), 0);
	assert_true(fresh);
	add_node(&w, "n0", 4000);
	add_node(&w, "n1", 4000);
	uint64_t kept = place(&w, 0, 500, 1);
	uint64_t cut_short = place(&w, 0, 300, 2);
	/* A release cut short: the counters given back, then the crash before
	 * the record was freed. */
	struct pod_spec pod;
	placement_use(placements_get(w.records, cut_short), &pod);
	ledger_account(cluster_ledger(w.cluster), 0, &pod, NULL, -1);
	/* A commit whose record was never filled: the crash came between. */
	struct pod_spec lost = pod_of(1000);
	const struct snapshot *snap = cluster_snapshot(w.cluster);
	assert_true(placements_take(w.records) >= 0);
	assert_int_equal(ledger_reserve(cluster_ledger(w.cluster), 1,
					&snap->nodes[1].allocatable, &lost, NULL,
					NULL, NULL), 0);
	assert_int_equal(used_cpu(&w, 0), 500);
	assert_int_equal(used_cpu(&w, 1), 1000);
	world_close(&w); /* no clean stop: as a kill -9 leaves it */

	int rrc = world_open(&w, name, &fresh, err, sizeof(err));
	if (rrc) print_error("%s\n", err);
	assert_int_equal(rrc, 0);
	assert_false(fresh);
	assert_int_equal(cluster_nodes(w.cluster), 2);
	uint32_t id;
	assert_true(intern_find(w.strings, "n1", 2, &id));
	assert_int_equal(cluster_slot_of(w.cluster, id), 1);
	/* Before the recount the counters are what the crash left. */
	assert_int_equal(used_cpu(&w, 1), 1000);
	struct recount_stats rs;
	assert_int_equal(ledger_recount(w.cluster, w.records, 16, NULL, &rs, err,
					sizeof(err)), 0);
	assert_int_equal(rs.records, 2);
	assert_int_equal(rs.counted, 2);
	assert_int_equal(rs.nodes_fixed, 2);
	assert_int_equal(used_cpu(&w, 0), 800);  /* kept + cut_short counted again */
	assert_int_equal(used_cpu(&w, 1), 0);    /* the recordless commit rolled back */
	assert_int_equal(ledger_node(cluster_ledger(w.cluster), 0)->used[RES_PODS], 2);
	const struct placement_record *r = placements_get(w.records, kept);
	assert_non_null(r);
	assert_int_equal(r->cookie, 42);
	assert_int_equal(placements_live(w.records), 2);
	/* The record taken but never filled is free again. */
	assert_int_equal(placements_take(w.records) >= 0, 1);
	world_close(&w);
	assert_int_equal(state_remove(name, err, sizeof(err)), 0);
}

static void test_stale_and_damaged_records(void **state)
{
	(void)state;
	char name[64], err[256];
	unique_name(name, sizeof(name), "damaged");
	struct world w;
	bool fresh;
	assert_int_equal(world_open(&w, name, &fresh, err, sizeof(err)), 0);
	add_node(&w, "a", 4000);
	add_node(&w, "b", 4000);
	place(&w, 0, 100, 1);
	uint64_t on_b = place(&w, 1, 200, 1);
	/* b removed: its record stays live, counted nowhere. */
	struct node_event rm = {.kind = NODE_EVENT_REMOVE};
	assert_true(intern_find(w.strings, "b", 1, &rm.name));
	assert_int_equal(cluster_apply(w.cluster, &rm, 1, err, sizeof(err)), 0);
	struct recount_stats rs;
	assert_int_equal(ledger_recount(w.cluster, w.records, 16, NULL, &rs, err,
					sizeof(err)), 0);
	assert_int_equal(rs.records, 2);
	assert_int_equal(rs.stale, 1);
	assert_int_equal(used_cpu(&w, 0), 100);
	/* A record whose owner no identity can have: refused, nothing
	 * changed. */
	struct placement_record *r =
		(struct placement_record *)placements_get(w.records, on_b);
	r->owner = 5000;
	ledger_node(cluster_ledger(w.cluster), 0)->used[RES_CPU] = 777;
	assert_int_equal(ledger_recount(w.cluster, w.records, 16, NULL, &rs, err,
					sizeof(err)), -EBADMSG);
	assert_non_null(strstr(err, "owner out of range"));
	assert_int_equal(used_cpu(&w, 0), 777);
	world_close(&w);
	assert_int_equal(state_remove(name, err, sizeof(err)), 0);
}

static void test_held_region_and_names(void **state)
{
	(void)state;
	char name[64], err[256];
	unique_name(name, sizeof(name), "held");
	struct world w, w2;
	bool fresh;
	assert_int_equal(world_open(&w, name, &fresh, err, sizeof(err)), 0);
	assert_true(state_daemon_running(name));
	struct state_config cfg = base_cfg;
	cfg.name = name;
	assert_int_equal(state_open(&cfg, &w2.st, &fresh, err, sizeof(err)), -EBUSY);
	assert_non_null(strstr(err, "another daemon"));
	assert_int_equal(state_remove(name, err, sizeof(err)), -EBUSY);
	/* An observer may look meanwhile. */
	struct state *obs;
	assert_int_equal(state_observe(name, &obs, err, sizeof(err)), 0);
	assert_int_equal(state_meta(obs)->max_nodes, 64);
	state_close(obs);
	world_close(&w);
	assert_false(state_daemon_running(name));
	assert_int_equal(state_remove(name, err, sizeof(err)), 0);
	assert_int_equal(state_observe(name, &obs, err, sizeof(err)), -ENOENT);

	const char *bad[] = {"", ".hidden", "a/b", "sp ace", "x\n"};
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cfg.name = bad[i];
		assert_int_equal(state_open(&cfg, &w2.st, &fresh, err, sizeof(err)),
				 -EINVAL);
		assert_non_null(strstr(err, "region name"));
	}
	char longname[80];
	memset(longname, 'x', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	cfg.name = longname;
	assert_int_equal(state_open(&cfg, &w2.st, &fresh, err, sizeof(err)), -EINVAL);
}

/* Makes a region with one node, closes it, applies `damage` to its file,
 * and returns state_open's (and, when that passes, the tables') result. */
static int open_damaged(const char *what, void (*damage)(int fd, struct stat *st),
			char *err, size_t len)
{
	char name[64];
	unique_name(name, sizeof(name), what);
	struct world w;
	bool fresh;
	assert_int_equal(world_open(&w, name, &fresh, err, len), 0);
	add_node(&w, "n0", 1000);
	world_close(&w);
	char path[256];
	assert_non_null(state_path(name, path, sizeof(path)));
	int fd = open(path, O_RDWR);
	assert_true(fd >= 0);
	struct stat st;
	assert_int_equal(fstat(fd, &st), 0);
	damage(fd, &st);
	close(fd);
	int rc = world_open(&w, name, &fresh, err, len);
	world_close(&w);
	char e2[128];
	state_remove(name, e2, sizeof(e2));
	return rc;
}

static void put_u32(int fd, off_t off, uint32_t v)
{
	assert_int_equal(pwrite(fd, &v, sizeof(v), off), sizeof(v));
}

static void bad_magic(int fd, struct stat *st)
{
	(void)st;
	put_u32(fd, 0, 0x12345678);
}

static void other_version(int fd, struct stat *st)
{
	(void)st;
	put_u32(fd, 8, SHM_ABI_VERSION + 1);
}

static void truncated(int fd, struct stat *st)
{
	assert_int_equal(ftruncate(fd, st->st_size / 2), 0);
}

/* The offset of section `id`, from the header on file. */
static uint64_t section_offset(int fd, uint32_t id)
{
	struct shm_header h;
	assert_int_equal(pread(fd, &h, sizeof(h), 0), sizeof(h));
	for (unsigned i = 0; i < h.section_count && i < SHM_SECTION_MAX; i++)
		if (h.sections[i].id == id)
			return h.sections[i].offset;
	fail();
	return 0;
}

static void snapshot_flipped(int fd, struct stat *st)
{
	(void)st;
	/* The current buffer is the second (one apply since creation); flip a
	 * byte of its first node, past the buffer's header. */
	struct state_meta m;
	assert_int_equal(pread(fd, &m, sizeof(m), (off_t)section_offset(fd,
			 SHM_SECTION_META)), sizeof(m));
	uint64_t stride = cluster_snapshots_section_size(m.max_nodes) / 2;
	off_t at = (off_t)(section_offset(fd, SHM_SECTION_SNAPSHOTS) +
			   m.current_snapshot * stride);
	/* present[] starts 64 bytes in: slot 0 present -> 2 (damaged). */
	put_u32(fd, at + 64, 0x02);
}

static void string_damaged(int fd, struct stat *st)
{
	(void)st;
	/* intern_shared, then entries: entry 1's length past the arena. */
	off_t at = (off_t)(section_offset(fd, SHM_SECTION_STRINGS) + 64 +
			   sizeof(struct intern_entry) +
			   offsetof(struct intern_entry, len));
	put_u32(fd, at, 1u << 20);
}

static void string_moved(int fd, struct stat *st);

static void identity_damaged(int fd, struct stat *st)
{
	(void)st;
	/* Identity 0's `used` a value no daemon writes. */
	put_u32(fd, (off_t)section_offset(fd, SHM_SECTION_IDENTITIES), 7);
}

static void test_damaged_regions(void **state)
{
	(void)state;
	char err[512];
	assert_int_equal(open_damaged("magic", bad_magic, err, sizeof(err)), -EPROTO);
	assert_non_null(strstr(err, "magic"));
	assert_int_equal(open_damaged("version", other_version, err, sizeof(err)),
			 -EPROTONOSUPPORT);
	char want[64];
	snprintf(want, sizeof(want), "%u", SHM_ABI_VERSION + 1);
	assert_non_null(strstr(err, want));
	snprintf(want, sizeof(want), "%u", SHM_ABI_VERSION);
	assert_non_null(strstr(err, want));
	int rc = open_damaged("truncated", truncated, err, sizeof(err));
	assert_true(rc == -EPROTO || rc == -EBADMSG);
	assert_int_equal(open_damaged("snapshot", snapshot_flipped, err, sizeof(err)),
			 -EBADMSG);
	assert_non_null(strstr(err, "snapshot"));
	assert_int_equal(open_damaged("string", string_damaged, err, sizeof(err)),
			 -EBADMSG);
	assert_non_null(strstr(err, "string 1"));
	assert_int_equal(open_damaged("moved", string_moved, err, sizeof(err)),
			 -EBADMSG);
	assert_non_null(strstr(err, "string 1 is damaged: offset 1099511"));
	assert_int_equal(open_damaged("identity", identity_damaged, err,
				      sizeof(err)), -EBADMSG);
	assert_non_null(strstr(err, "identity 0 (owner 1) damaged: used 7"));
}

/* Issue 41: only a region the daemon owns is attached. */
static void test_not_ours(void **state)
{
	(void)state;
	char name[64], err[512], path[256];
	unique_name(name, sizeof(name), "ours");
	struct world w;
	bool fresh;
	assert_int_equal(world_open(&w, name, &fresh, err, sizeof(err)), 0);
	world_close(&w);
	assert_non_null(state_path(name, path, sizeof(path)));
	struct stat sb;
	assert_int_equal(stat(path, &sb), 0);
	assert_int_equal(sb.st_mode & 07777, 0600);
	struct state_config cfg = base_cfg;
	cfg.name = name;
	struct state *st;
	/* Others may write. */
	assert_int_equal(chmod(path, 0666), 0);
	assert_int_equal(state_open(&cfg, &st, &fresh, err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "mode 0666"));
	assert_non_null(strstr(err, path));
	/* Group may read, no group named; named: accepted. */
	assert_int_equal(chmod(path, 0640), 0);
	assert_int_equal(state_open(&cfg, &st, &fresh, err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "may read"));
	cfg.has_group = true;
	cfg.group = getegid() + 1;
	assert_int_equal(state_open(&cfg, &st, &fresh, err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "not --region-group's"));
	cfg.group = getegid();
	assert_int_equal(state_open(&cfg, &st, &fresh, err, sizeof(err)), 0);
	assert_false(fresh);
	state_close(st);
	cfg.has_group = false;
	assert_int_equal(chmod(path, 0600), 0);
	if (geteuid() == 0) {
		/* Another uid's: refused; --fresh: a new one of ours. */
		assert_int_equal(chown(path, 65534, (gid_t)-1), 0);
		assert_int_equal(state_open(&cfg, &st, &fresh, err, sizeof(err)),
				 -EPERM);
		assert_non_null(strstr(err, "owned by uid 65534"));
		assert_non_null(strstr(err, "remove it"));
		cfg.fresh = true;
		assert_int_equal(state_open(&cfg, &st, &fresh, err, sizeof(err)), 0);
		assert_true(fresh);
		assert_int_equal(stat(path, &sb), 0);
		assert_int_equal(sb.st_uid, 0);
		state_close(st);
		cfg.fresh = false;
	}
	/* A mode others could write, asked for. */
	char other[64];
	unique_name(other, sizeof(other), "mode");
	cfg.name = other;
	cfg.mode = 0662;
	assert_int_equal(state_open(&cfg, &st, &fresh, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "0662"));
	cfg.mode = 0;
	/* A link at the name, to a region of ours. */
	char lpath[256];
	assert_non_null(state_path(other, lpath, sizeof(lpath)));
	assert_int_equal(symlink(path, lpath), 0);
	assert_int_equal(state_open(&cfg, &st, &fresh, err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "symbolic link"));
	assert_int_equal(unlink(lpath), 0);
	/* A fifo: refused, and an observer does not hang on it. */
	assert_int_equal(mkfifo(lpath, 0600), 0);
	assert_int_equal(state_open(&cfg, &st, &fresh, err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "not a regular file"));
	assert_int_equal(state_observe(other, &st, err, sizeof(err)), -EPERM);
	assert_false(state_daemon_running(other));
	assert_int_equal(unlink(lpath), 0);
	assert_int_equal(state_remove(name, err, sizeof(err)), 0);
}

/* Issue 41: each field a damaged record could lie in, named. */
static void test_record_fields(void **state)
{
	(void)state;
	char name[64], err[256];
	unique_name(name, sizeof(name), "fields");
	struct world w;
	bool fresh;
	assert_int_equal(world_open(&w, name, &fresh, err, sizeof(err)), 0);
	add_node(&w, "a", 4000);
	uint64_t id = place(&w, 0, 100, 1);
	struct state_identity ids[16];
	memset(ids, 0, sizeof(ids));
	ids[0].used = 1;
	struct recount_stats rs;
	assert_int_equal(ledger_recount(w.cluster, w.records, 16, ids, &rs, err,
					sizeof(err)), 0);
	struct placement_record *r =
		(struct placement_record *)placements_get(w.records, id);
	/* An owner in range that no identity has. */
	r->owner = 2;
	assert_int_equal(ledger_recount(w.cluster, w.records, 16, ids, &rs, err,
					sizeof(err)), -EBADMSG);
	assert_non_null(strstr(err, "owner 2"));
	r->owner = 1;
	/* A slot past the capacity (64). */
	r->slot = 1u << 20;
	assert_int_equal(ledger_recount(w.cluster, w.records, 16, ids, &rs, err,
					sizeof(err)), -EBADMSG);
	assert_non_null(strstr(err, "node slot 1048576 out of range"));
	r->slot = 0;
	/* A node generation the slot never had. */
	r->node_gen += 5;
	assert_int_equal(ledger_recount(w.cluster, w.records, 16, ids, &rs, err,
					sizeof(err)), -EBADMSG);
	assert_non_null(strstr(err, "node generation"));
	r->node_gen -= 5;
	assert_int_equal(ledger_recount(w.cluster, w.records, 16, ids, &rs, err,
					sizeof(err)), 0);
	assert_int_equal(rs.counted, 1);
	world_close(&w);
	assert_int_equal(state_remove(name, err, sizeof(err)), 0);
}

static void string_moved(int fd, struct stat *st)
{
	(void)st;
	/* Entry 1's offset moved by 2^40: refused at attach, before any
	 * byte there is read. */
	off_t at = (off_t)(section_offset(fd, SHM_SECTION_STRINGS) + 64 +
			   sizeof(struct intern_entry) +
			   offsetof(struct intern_entry, offset));
	uint64_t off;
	assert_int_equal(pread(fd, &off, sizeof(off), at), sizeof(off));
	off += UINT64_C(1) << 40;
	assert_int_equal(pwrite(fd, &off, sizeof(off), at), sizeof(off));
}

int main(void)
{
	urcu_qsbr_register_thread();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reattach_and_recount),
		cmocka_unit_test(test_stale_and_damaged_records),
		cmocka_unit_test(test_held_region_and_names),
		cmocka_unit_test(test_damaged_regions),
		cmocka_unit_test(test_not_ours),
		cmocka_unit_test(test_record_fields),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	urcu_qsbr_unregister_thread();
	return rc;
}
