/* Fuzz target: the observer (include/shmsched/observe.h) on region files
 * with arbitrary bytes in them.
 *
 * A state region is a few MiB (sections are page-aligned and the region
 * 2 MiB-aligned), far more than a fuzz input, so an input describes one:
 *   - an input starting with 'R': the rest is the whole file (header-sized
 *     files and smaller: the header checks);
 *   - otherwise a list of patches over a valid region built once (3 nodes
 *     and a cordon, a removed node, two producers, placements, worker
 *     counters), each: op (1 byte), offset (4, little-endian), length
 *     (1), then that many bytes. op 0xff truncates the file to offset
 *     (modulo its size); op % 8 == 0 writes at offset modulo the file's
 *     size; op % 8 == k, 1..7, writes inside section 9 + k (meta, strings,
 *     snapshots, ledger, placements, identities, worker stats) at offset
 *     modulo its size. An empty input is the region intact.
 * The file is /dev/shm/fuzz-observe-PID (the observer opens regions by
 * name); each input's patches are undone before the next.
 *
 * Every observer call runs on what opens. Traps: a refusal without a
 * message; an answer out of the region's bounds (more nodes than slots, a
 * name not terminated, more producers or workers than the sections hold).
 * A crash is a finding too.
 */
#define _GNU_SOURCE 1

#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <urcu/urcu-qsbr.h>

#include "shm/shm.h"
#include "shmsched/observe.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char name[64], raw_name[64], path[128], raw_path[128];
static uint8_t *template_bytes;
static size_t template_size;
static int fd = -1;
static struct {
	uint32_t id;
	uint64_t offset, size;
} sections[SHM_SECTION_MAX];
static unsigned n_sections;

static void remove_files(void)
{
	unlink(path);
	unlink(raw_path);
}

static void fail_setup(const char *what, const char *why)
{
	fprintf(stderr, "fuzz_observe: %s: %s\n", what, why);
	abort();
}

/* The valid region the patches apply to, as a daemon would leave it. */
static void build_template(void)
{
	snprintf(name, sizeof(name), "fuzz-observe-%d", (int)getpid());
	snprintf(raw_name, sizeof(raw_name), "fuzz-observe-raw-%d", (int)getpid());
	char err[256];
	state_remove(name, err, sizeof(err));
	struct state_config cfg = {
		.name = name, .max_nodes = 8, .max_placements = 16,
		.max_strings = 64, .arena_size = 4096, .workers = 2,
		.no_hugetlb = true,
	};
	struct state *st;
	bool fresh;
	if (state_open(&cfg, &st, &fresh, err, sizeof(err)) < 0)
		fail_setup("state_open", err);
	struct state_meta *m = state_meta(st);
	struct intern *strings = intern_create_in(
		state_section(st, SHM_SECTION_STRINGS), m->max_strings,
		m->arena_size, true, err, sizeof(err));
	struct cluster_memory mem = {
		.snapshots = state_section(st, SHM_SECTION_SNAPSHOTS),
		.ledger = state_section(st, SHM_SECTION_LEDGER),
		.current = &m->current_snapshot,
	};
	struct cluster *c = strings == NULL ? NULL
			    : cluster_create_in(strings, m->max_nodes, &mem, true,
						err, sizeof(err));
	struct placements *recs = placements_create_in(
		state_section(st, SHM_SECTION_PLACEMENTS), m->max_placements, true);
	if (c == NULL || recs == NULL)
		fail_setup("tables", err);
	urcu_qsbr_register_thread();
	const char *names[] = {"a", "b", "c", "gone"};
	uint32_t ids[4];
	for (unsigned i = 0; i < 4; i++) {
		struct node_event e = {.kind = NODE_EVENT_ADD};
		intern_add_str(strings, names[i], &ids[i]);
		e.name = e.spec.name = ids[i];
		e.spec.allocatable.v[RES_CPU] = 4000;
		e.spec.allocatable.v[RES_MEMORY] = INT64_C(1) << 33;
		e.spec.allocatable.v[RES_PODS] = 10;
		if (cluster_apply(c, &e, 1, err, sizeof(err)) < 0)
			fail_setup("add", err);
	}
	struct pod_spec pod;
	memset(&pod, 0, sizeof(pod));
	pod.request.v[RES_CPU] = pod.nonzero_cpu_milli = 100;
	for (uint32_t i = 0; i < 5; i++) {
		uint32_t slot = i % 4;
		const struct snapshot *snap = cluster_snapshot(c);
		struct ledger *l = cluster_ledger(c);
		int64_t ix = placements_take(recs);
		if (ix < 0 || ledger_reserve(l, slot, &snap->nodes[slot].allocatable,
					     &pod, NULL, NULL, NULL) < 0)
			fail_setup("place", "refused");
		placements_fill(recs, (uint32_t)ix,
				i == 4 ? PLACEMENT_OWNER_BOUND : 1 + i % 2, slot,
				ledger_node_generation(l, slot), &pod, NULL, i);
	}
	struct node_event change[2] = {
		{.kind = NODE_EVENT_CORDON, .name = ids[2]},
		{.kind = NODE_EVENT_REMOVE, .name = ids[3]},
	};
	if (cluster_apply(c, change, 2, err, sizeof(err)) < 0)
		fail_setup("cordon, remove", err);
	struct state_identity *who = state_section(st, SHM_SECTION_IDENTITIES).base;
	who[0] = (struct state_identity){.used = 1, .uid = 1000, .connections = 1,
					 .name = "alpha"};
	who[1] = (struct state_identity){.used = 1, .uid = 1001, .name = "beta"};
	struct state_worker_stats *ws = state_section(st, SHM_SECTION_WORKER_STATS).base;
	ws[0].pods = ws[0].placed = 4;
	ws[1].pods = 1;
	ws[1].unschedulable = 1;
	placements_destroy(recs);
	cluster_destroy(c);
	urcu_qsbr_unregister_thread();
	intern_destroy(strings);
	state_close(st);

	if (state_path(name, path, sizeof(path)) == NULL ||
	    state_path(raw_name, raw_path, sizeof(raw_path)) == NULL)
		fail_setup("state_path", name);
	atexit(remove_files);
	fd = open(path, O_RDWR | O_CLOEXEC);
	struct stat sb;
	if (fd < 0 || fstat(fd, &sb) < 0)
		fail_setup(path, "cannot open");
	template_size = (size_t)sb.st_size;
	template_bytes = malloc(template_size);
	if (template_bytes == NULL ||
	    pread(fd, template_bytes, template_size, 0) != (ssize_t)template_size)
		fail_setup(path, "cannot read");
	const struct shm_header *h = (const void *)template_bytes;
	for (unsigned i = 0; i < h->section_count && i < SHM_SECTION_MAX; i++) {
		sections[n_sections].id = h->sections[i].id;
		sections[n_sections].offset = h->sections[i].offset;
		sections[n_sections].size = h->sections[i].size;
		n_sections++;
	}
}

/* A failed check names its line (one __builtin_trap per check would be
 * merged into one by the optimiser). */
__attribute__((noinline, noreturn)) static void trap(int line)
{
	fprintf(stderr, "fuzz_observe.c:%d: check failed\n", line);
	abort();
}
#define TRAP_IF(cond) do { if (cond) trap(__LINE__); } while (0)

/* Every observer call on region `region`. */
static void observe(const char *region)
{
	char err[512] = "";
	struct shmsched_observer *obs;
	int rc = shmsched_observe_open(region, &obs, err, sizeof(err));
	if (rc < 0) {
		TRAP_IF(err[0] == '\0' || obs != NULL); /* every refusal says why */
		return;
	}
	struct shmsched_observe_summary sum;
	err[0] = '\0';
	rc = shmsched_observe_summary(obs, &sum, err, sizeof(err));
	TRAP_IF(rc < 0 && err[0] == '\0');
	TRAP_IF(rc == 0 && (sum.nodes > sum.max_nodes ||
			    sum.node_slots > sum.max_nodes ||
			    sum.placements > sum.max_placements ||
			    sum.workers > STATE_WORKERS_MAX ||
			    memchr(sum.name, '\0', sizeof(sum.name)) == NULL ||
			    memchr(sum.page_info, '\0', sizeof(sum.page_info)) == NULL));
	static struct shmsched_observe_node nodes[16];
	unsigned n = 0;
	uint64_t generation = 0;
	err[0] = '\0';
	rc = shmsched_observe_nodes(obs, nodes, 16, &n, &generation, err,
				    sizeof(err));
	TRAP_IF(rc < 0 && err[0] == '\0');
	if (rc == 0) {
		TRAP_IF(n > 8 || generation == 0);
		for (unsigned i = 0; i < n && i < 16; i++)
			TRAP_IF(nodes[i].node_id >= 8 ||
				memchr(nodes[i].name, '\0', sizeof(nodes[i].name)) == NULL);
	}
	char buf[64];
	for (uint32_t id = 0; id < 10; id++) {
		rc = shmsched_observe_node_name(obs, id, buf, sizeof(buf));
		TRAP_IF(rc == 0 && memchr(buf, '\0', sizeof(buf)) == NULL);
		rc = shmsched_observe_string(obs, id, buf, sizeof(buf));
		TRAP_IF(rc == 0 && memchr(buf, '\0', sizeof(buf)) == NULL);
	}
	shmsched_observe_string(obs, UINT32_MAX, buf, sizeof(buf));
	shmsched_observe_node_name(obs, UINT32_MAX, buf, sizeof(buf));
	static struct shmsched_observe_producer producers[8];
	err[0] = '\0';
	rc = shmsched_observe_producers(obs, producers, 8, &n, err, sizeof(err));
	TRAP_IF(rc < 0 && err[0] == '\0');
	TRAP_IF(rc == 0 && n > STATE_IDENTITIES);
	for (unsigned i = 0; rc == 0 && i < n && i < 8; i++)
		TRAP_IF(memchr(producers[i].name, '\0', sizeof(producers[i].name)) == NULL);
	static struct shmsched_observe_worker workers[4];
	rc = shmsched_observe_workers(obs, workers, 4, &n);
	TRAP_IF(rc == 0 && n > STATE_WORKERS_MAX);
	struct shmsched_observe_stats stats;
	shmsched_observe_stats(obs, &stats);
	shmsched_observe_close(obs);
}

/* An input starting with 'R': the whole file. */
static void observe_raw(const uint8_t *data, size_t size)
{
	int raw = open(raw_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (raw < 0)
		return;
	bool written = write(raw, data, size) == (ssize_t)size;
	close(raw);
	if (written)
		observe(raw_name);
	unlink(raw_path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (template_bytes == NULL)
		build_template();
	if (size > 0 && data[0] == 'R') {
		observe_raw(data + 1, size - 1);
		return 0;
	}
	/* Patches, remembered to be undone. */
	struct {
		uint64_t offset, len;
	} undo[64];
	unsigned n_undo = 0;
	uint64_t cut = template_size; /* restore from here when truncated */
	uint64_t file_size = template_size;
	size_t at = 0;
	while (at + 6 <= size && n_undo < 64) {
		uint8_t op = data[at];
		uint32_t off;
		memcpy(&off, data + at + 1, 4);
		size_t len = data[at + 5];
		at += 6;
		if (len > size - at)
			len = size - at;
		if (op == 0xff) {
			file_size = file_size ? off % file_size : 0;
			if (ftruncate(fd, (off_t)file_size) == 0 && file_size < cut)
				cut = file_size;
			continue;
		}
		uint64_t base = 0, span = file_size;
		unsigned k = op % 8;
		if (k != 0) {
			span = 0;
			for (unsigned i = 0; i < n_sections; i++)
				if (sections[i].id == 9 + k) {
					base = sections[i].offset;
					span = sections[i].size;
				}
			if (base >= file_size)
				span = 0;
			else if (span > file_size - base)
				span = file_size - base;
		}
		if (span == 0) {
			at += len;
			continue;
		}
		uint64_t pos = base + off % span;
		if (len > file_size - pos)
			len = (size_t)(file_size - pos);
		if (len > 0 && pwrite(fd, data + at, len, (off_t)pos) == (ssize_t)len) {
			undo[n_undo].offset = pos;
			undo[n_undo].len = len;
			n_undo++;
		}
		at += len;
	}
	observe(name);
	/* Undo, so the next input starts from the template. */
	for (unsigned i = 0; i < n_undo; i++)
		if (pwrite(fd, template_bytes + undo[i].offset, undo[i].len,
			   (off_t)undo[i].offset) != (ssize_t)undo[i].len)
			abort();
	if (cut < template_size &&
	    (ftruncate(fd, (off_t)template_size) < 0 ||
	     pwrite(fd, template_bytes + cut, template_size - cut, (off_t)cut) !=
		     (ssize_t)(template_size - cut)))
		abort();
	return 0;
}
