/* libshmsched-client's observer: see include/shmsched/observe.h; the
 * region's layout and read protocol (O1-O4, and the writer's S1-S3) are
 * the "state region" part of shm/layout.h.
 *
 * The handle holds a read-only mapping (shm/state.h's state_observe), a
 * copy of the meta section taken and checked once at open, and pointers
 * into the mapping found from that copy's capacities only: whatever the
 * shared meta says later, every index stays inside its section. After
 * open nothing in the handle changes but three counters (relaxed atomics),
 * so calls may run concurrently on one handle; each allocates what it
 * copies.
 *
 * Snapshot reads (O3), labelled as the atomics below cite them:
 *   R1  Load meta.current_snapshot with acquire (partner S3): the buffer
 *       it names was complete when published.
 *   R2  Load that buffer's seq with acquire (partner S2); odd: the writer
 *       is rewriting it (S1), try again.
 *   R3  Copy the header's fields and, for a whole read, present[] and
 *       nodes[] below n_slots. A generation of 0 is a buffer never
 *       published (a write that failed leaves one), so try again.
 *   R4  An acquire fence, then seq again (relaxed): if the copy saw any
 *       write made after S1's release fence, this load sees seq moved.
 *       Moved: the copy is thrown away (a retry). Unmoved: the copy is
 *       the buffer as S2 left it.
 *   R5  A whole copy is checked against the header's checksum: a stable
 *       copy that fails it is damage, refused (-EBADMSG), never returned.
 * The copy in R3 reads memory another process may be writing, with plain
 * loads: the seqlock pattern. What it read is used only after R4 has shown
 * nothing was written meanwhile, and no byte of it is trusted before
 * R5 and the bound checks.
 *
 * Producer identities are read by the same pattern, one slot at a time,
 * with the slot's own generation as its seq (shm/identity.h, IR1-IR4 there):
 * a slot freed and taken again under the copy is copied again.
 *
 * Cost: a whole read copies n_slots node specs (4,440 bytes each) per
 * try and hashes the stable copy once (R5: the whole checksum, which the
 * writer keeps per changed slot, shm/snapshots.c); tries are bounded
 * (OBSERVE_TRIES, yielding the CPU after the first few), so a reader
 * facing node events faster than its copy gives up with -EAGAIN rather
 * than spin. Counting placements walks the records below
 * the high-water mark once per call.
 */
#define _GNU_SOURCE 1

#include "shmsched/observe.h"

#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "shm/shm.h"

/* Snapshot tries before -EAGAIN; the CPU is yielded between tries after
 * the first OBSERVE_SPINS, so the writer can finish. */
#define OBSERVE_TRIES 20000u
#define OBSERVE_SPINS 4u
/* Tries at one identity slot (shm/identity.h): its writer rewrites 70
 * bytes under IW1-IW3, and only when the slot is taken again; a generation
 * odd for this long is a damaged region, refused rather than spun on. */
#define IDENTITY_TRIES 256u

_Static_assert(STATE_ATTEMPT_BUCKETS ==
	       sizeof(((struct shmsched_observe_worker *)0)->attempts) / sizeof(uint64_t),
	       "observe.h's attempts[] are the region's buckets");

struct shmsched_observer {
	struct state *st;
	char name[STATE_NAME_MAX];
	char path[512];
	/* The meta as it was at open, checked (state_meta_copy): capacities
	 * and the name come from here, never from the shared meta. */
	struct state_meta caps;
	const struct state_meta *meta;      /* shared: live figures (O4) */
	struct shm_span strings;
	struct shm_span placements;
	const struct state_identity *identities;   /* [STATE_IDENTITIES] */
	const struct state_worker_stats *workers;  /* [STATE_WORKERS_MAX] */
	struct state_snapshot *headers[2];
	struct snapshot views[2];
	struct ledger *ledger;
	/* Relaxed: figures for shmsched_observe_stats(), nothing is ordered
	 * by them. */
	uint64_t reads;
	uint64_t retries;
	uint64_t refused;
};

/* One snapshot as R1-R5 copied it. */
struct snap_copy {
	uint32_t index;       /* the buffer it came from */
	uint64_t generation;
	uint32_t n_slots;
	uint32_t n_nodes;
	uint8_t *present;     /* whole reads: [n_slots] */
	struct node_spec *nodes;
	uint32_t room;        /* slots present[] and nodes[] have room for */
};

static void snap_free(struct snap_copy *c)
{
	free(c->present);
	free(c->nodes);
}

static void count(uint64_t *counter)
{
	/* Relaxed: a figure (see struct shmsched_observer). */
	__atomic_fetch_add(counter, 1, __ATOMIC_RELAXED);
}

/* Whether waiting for the writer may help: a daemon holds the region.
 * Without one nothing in it moves, and a current buffer that is odd or
 * never published stays so: a live daemon leaves neither (S1 rewrites only
 * the buffer that is not current), so it is damage. Asked once, when the
 * tries pass OBSERVE_SPINS (a lock test is two system calls). */
static int still_waiting(const struct shmsched_observer *obs, unsigned attempt,
			 uint32_t index, bool odd, char *err, size_t err_len)
{
	if (attempt != OBSERVE_SPINS || state_held(obs->st))
		return 0;
	return errmsg_rc(-EBADMSG, err, err_len, "state region %s: the current "
			 "snapshot (%" PRIu32 ") is %s, and no daemon holds the "
			 "region to finish it: damaged", obs->path, index,
			 odd ? "being rewritten (odd sequence)"
			     : "one never published (generation 0)");
}

/* Reads the current snapshot (R1-R5): its header only, or `whole` with its
 * present[] and nodes[] into c's buffers (grown as needed; the caller frees
 * them with snap_free). */
static int snap_read(struct shmsched_observer *obs, bool whole,
		     struct snap_copy *c, char *err, size_t err_len)
{
	/* Why the last try failed, when it was the buffer's state (not a
	 * rewrite under the copy): for still_waiting(). */
	int stuck = 0; /* 0 none, 1 odd, 2 generation 0 */
	uint32_t stuck_index = 0;
	for (unsigned attempt = 0; attempt < OBSERVE_TRIES; attempt++) {
		if (attempt > 0) {
			count(&obs->retries);
			int rc = stuck ? still_waiting(obs, attempt, stuck_index,
						       stuck == 1, err, err_len)
				       : 0;
			if (rc < 0) {
				count(&obs->refused);
				return rc;
			}
			if (attempt > OBSERVE_SPINS)
				sched_yield();
		}
		stuck = 0;
		/* R1: acquire, partner of S3. */
		uint32_t index = __atomic_load_n(&obs->meta->current_snapshot,
						 __ATOMIC_ACQUIRE);
		if (index > 1) {
			count(&obs->refused);
			return errmsg_rc(-EBADMSG, err, err_len, "state region %s: "
					 "current snapshot index %" PRIu32 " (expected "
					 "0 or 1)", obs->path, index);
		}
		struct state_snapshot *h = obs->headers[index];
		const struct snapshot *v = &obs->views[index];
		/* R2: acquire, partner of S2. */
		uint64_t seq = __atomic_load_n(&h->seq, __ATOMIC_ACQUIRE);
		if (seq & 1) {
			stuck = 1;
			stuck_index = index;
			continue;
		}
		/* R3. Relaxed loads: each field read once; whether they belong
		 * together is R4's to say. */
		c->index = index;
		c->generation = __atomic_load_n(&h->generation, __ATOMIC_RELAXED);
		c->n_slots = __atomic_load_n(&h->n_slots, __ATOMIC_RELAXED);
		c->n_nodes = __atomic_load_n(&h->n_nodes, __ATOMIC_RELAXED);
		uint64_t checksum = __atomic_load_n(&h->checksum, __ATOMIC_RELAXED);
		bool fits = c->n_slots <= obs->caps.max_nodes &&
			    c->n_nodes <= c->n_slots;
		if (whole && fits && c->n_slots > c->room) {
			uint8_t *p = realloc(c->present, c->n_slots);
			if (p != NULL)
				c->present = p;
			struct node_spec *n = realloc(c->nodes, (size_t)c->n_slots *
						      sizeof(*n));
			if (n != NULL)
				c->nodes = n;
			if (p == NULL || n == NULL)
				return errmsg_rc(-ENOMEM, err, err_len, "out of memory "
						 "for a copy of %" PRIu32 " nodes",
						 c->n_slots);
			c->room = c->n_slots;
		}
		if (whole && fits && c->n_slots > 0) {
			memcpy(c->present, v->present, c->n_slots);
			memcpy(c->nodes, v->nodes, (size_t)c->n_slots * sizeof(*c->nodes));
		}
		/* R4: the fence orders the copy's loads before the seq load
		 * below (partner: S1's release fence). */
		state_fence_acquire();
		if (__atomic_load_n(&h->seq, __ATOMIC_RELAXED) != seq)
			continue;
		/* A stable buffer never published: a failed write's, or none
		 * yet (a daemon still filling a new region). */
		if (c->generation == 0) {
			stuck = 2;
			stuck_index = index;
			continue;
		}
		if (!fits) {
			count(&obs->refused);
			return errmsg_rc(-EBADMSG, err, err_len, "state region %s: "
					 "snapshot %" PRIu32 " damaged: %" PRIu32
					 " nodes in %" PRIu32 " slots, the region holds %"
					 PRIu32, obs->path, index, c->n_nodes, c->n_slots,
					 obs->caps.max_nodes);
		}
		if (whole) {
			/* R5. */
			struct snapshot copy = {
				.generation = c->generation,
				.n_slots = c->n_slots,
				.n_nodes = c->n_nodes,
				.present = c->present,
				.nodes = c->nodes,
			};
			if (cluster_snapshot_checksum(&copy) != checksum) {
				count(&obs->refused);
				return errmsg_rc(-EBADMSG, err, err_len, "state region "
						 "%s: snapshot %" PRIu32 " (generation %"
						 PRIu64 "): checksum mismatch: its contents "
						 "are not what the daemon published",
						 obs->path, index, c->generation);
			}
		}
		count(&obs->reads);
		return 0;
	}
	count(&obs->refused);
	return errmsg_rc(-EAGAIN, err, err_len, "state region %s: no stable "
			 "snapshot in %u tries (node events faster than the copy, "
			 "or a daemon still starting): try again", obs->path,
			 OBSERVE_TRIES);
}

/* The live placement records, with a bound on the scan (H1, clamped). */
static const struct placement_record *records(const struct shmsched_observer *obs,
					      uint32_t *high_water)
{
	return placements_records_in(obs->placements, obs->caps.max_placements,
				     high_water);
}

/* A record's owner: acquire, partner of P1 (the record's fields are
 * complete for a non-zero owner). */
static uint32_t owner_of(const struct placement_record *r)
{
	return __atomic_load_n(&r->owner, __ATOMIC_ACQUIRE);
}

/* The strings' epoch (I2 in shm/layout.h): a string id copied from a
 * record is read with the epoch loaded before the copy; moved after the
 * string's copy, the id may name another string (a restarted daemon freed
 * and reused it): the read is made again. UINT32_MAX: no such section. */
static uint32_t strings_epoch(const struct shmsched_observer *obs)
{
	uint32_t epoch;
	return intern_observe_epoch(obs->strings, obs->caps.max_strings,
				    obs->caps.arena_size, &epoch) == 0
	       ? epoch : UINT32_MAX;
}

/* Copies string `id` into buf (O2). */
static int string_copy(const struct shmsched_observer *obs, uint32_t id,
		       char *buf, size_t len, bool cut);

/* Whether the node carries node.kubernetes.io/unreachable:NoExecute, the
 * taint the daemon gives a node whose lease expired. */
static int unreachable(const struct shmsched_observer *obs,
		       const struct node_spec *spec)
{
	static const char key[] = "node.kubernetes.io/unreachable";
	for (unsigned i = 0; i < spec->n_taints && i < NODE_MAX_TAINTS; i++) {
		char buf[sizeof(key)];
		if (spec->taints[i].effect == TAINT_NO_EXECUTE &&
		    string_copy(obs, spec->taints[i].key, buf, sizeof(buf), false) == 0 &&
		    strcmp(buf, key) == 0)
			return 1;
	}
	return 0;
}

static int string_copy(const struct shmsched_observer *obs, uint32_t id,
		       char *buf, size_t len, bool cut)
{
	const char *s;
	uint32_t n;
	int rc = intern_observe_str(obs->strings, obs->caps.max_strings,
				    obs->caps.arena_size, id, &s, &n);
	if (rc < 0)
		return rc;
	if (len == 0)
		return -ENOBUFS;
	if ((size_t)n >= len) {
		if (!cut) {
			buf[0] = '\0';
			return -ENOBUFS;
		}
		n = (uint32_t)(len - 1);
	}
	/* Exactly n bytes, inside the arena: shared memory, so its NUL is not
	 * counted on. */
	memcpy(buf, s, n);
	buf[n] = '\0';
	return 0;
}

int shmsched_observe_open(const char *name, struct shmsched_observer **out,
			  char *err, size_t err_len)
{
	if (out == NULL)
		return errmsg_rc(-EINVAL, err, err_len, "out is NULL");
	*out = NULL;
	if (name == NULL)
		name = SHMSCHED_OBSERVE_DEFAULT_NAME;
	int rc = state_name_check(name, err, err_len);
	if (rc < 0)
		return rc;
	struct shmsched_observer *obs = calloc(1, sizeof(*obs));
	if (obs == NULL)
		return errmsg_rc(-ENOMEM, err, err_len, "out of memory");
	snprintf(obs->name, sizeof(obs->name), "%s", name);
	if (state_path(name, obs->path, sizeof(obs->path)) == NULL)
		snprintf(obs->path, sizeof(obs->path), "%s", name);
	/* O1: header, version, kind, ready, then the sections' sizes. */
	rc = state_observe(name, &obs->st, err, err_len);
	if (rc == -EINVAL) /* the name passed: an empty file */
		rc = errmsg_rc(-EPROTO, err, err_len, "state region %s: an empty "
			       "file, not a region", obs->path);
	if (rc < 0)
		goto fail_observe;
	char why[256];
	rc = state_meta_copy(obs->st, &obs->caps, why, sizeof(why));
	if (rc < 0) {
		rc = errmsg_rc(rc, err, err_len, "state region %s: %s", obs->path,
			       why);
		goto fail_tables;
	}
	obs->caps.name[sizeof(obs->caps.name) - 1] = '\0';
	obs->caps.page_info[sizeof(obs->caps.page_info) - 1] = '\0';
	obs->meta = state_meta(obs->st);
	obs->strings = state_section(obs->st, SHM_SECTION_STRINGS);
	obs->placements = state_section(obs->st, SHM_SECTION_PLACEMENTS);
	obs->identities = state_section(obs->st, SHM_SECTION_IDENTITIES).base;
	obs->workers = state_section(obs->st, SHM_SECTION_WORKER_STATS).base;
	if (cluster_snapshots_in(state_section(obs->st, SHM_SECTION_SNAPSHOTS),
				 obs->caps.max_nodes, obs->headers, obs->views) < 0) {
		rc = errmsg_rc(-EBADMSG, err, err_len, "state region %s: the "
			       "snapshots section does not hold %" PRIu32 " nodes",
			       obs->path, obs->caps.max_nodes);
		goto fail_tables;
	}
	/* Reads only, when it re-attaches (fresh false). */
	obs->ledger = ledger_create_in(state_section(obs->st, SHM_SECTION_LEDGER),
				       obs->caps.max_nodes, false);
	if (obs->ledger == NULL && errno == ENOMEM) {
		rc = errmsg_rc(-ENOMEM, err, err_len, "out of memory");
		goto fail_tables;
	}
	uint32_t high_water;
	if (obs->ledger == NULL || records(obs, &high_water) == NULL) {
		/* Sections whose own header names another capacity. A new
		 * region is linked under its name before the daemon sets its
		 * sections up (shm/state.c), so with the daemon holding it
		 * this is a moment to wait out; with none, damage. */
		rc = state_held(obs->st)
		     ? errmsg_rc(-EAGAIN, err, err_len, "state region %s: its "
				 "daemon is still setting it up: try again",
				 obs->path)
		     : errmsg_rc(-EBADMSG, err, err_len, "state region %s: the "
				 "ledger or placements section was not made for "
				 "the capacities in its meta (%" PRIu32 " nodes, %"
				 PRIu32 " placements)", obs->path,
				 obs->caps.max_nodes, obs->caps.max_placements);
		goto fail_tables;
	}
	*out = obs;
	return 0;

fail_tables:
	ledger_destroy(obs->ledger);
	state_close(obs->st);
fail_observe:
	free(obs);
	return rc;
}

void shmsched_observe_close(struct shmsched_observer *obs)
{
	if (obs == NULL)
		return;
	ledger_destroy(obs->ledger);
	state_close(obs->st);
	free(obs);
}

/* A shared counter of the meta: relaxed, a figure (O4). */
#define META(obs, field) __atomic_load_n(&(obs)->meta->field, __ATOMIC_RELAXED)

int shmsched_observe_summary(struct shmsched_observer *obs,
			     struct shmsched_observe_summary *out, char *err,
			     size_t err_len)
{
	if (obs == NULL || out == NULL)
		return errmsg_rc(-EINVAL, err, err_len, "NULL argument");
	memset(out, 0, sizeof(*out));
	struct snap_copy snap = {0};
	int rc = snap_read(obs, false, &snap, err, err_len);
	if (rc < 0)
		return rc;
	snprintf(out->name, sizeof(out->name), "%s", obs->caps.name);
	snprintf(out->path, sizeof(out->path), "%s", obs->path);
	snprintf(out->page_info, sizeof(out->page_info), "%s", obs->caps.page_info);
	out->total_bytes = state_size(obs->st);
	out->page_bytes = state_page_size(obs->st);
	out->daemon_running = state_held(obs->st);
	out->daemon_pid = META(obs, daemon_pid);
	out->clean_stop = !out->daemon_running && META(obs, clean_stop) != 0;
	out->starts = META(obs, starts);
	out->created_s = META(obs, created_s);
	out->started_s = META(obs, started_s);
	out->generation = snap.generation;
	out->nodes = snap.n_nodes;
	out->node_slots = snap.n_slots;
	out->max_nodes = obs->caps.max_nodes;
	out->max_placements = obs->caps.max_placements;
	out->max_strings = obs->caps.max_strings;
	out->arena_bytes = obs->caps.arena_size;
	/* O2: acquire, partner of I1 (as every reader of the count). */
	const struct intern_shared *strings = obs->strings.base;
	out->strings = __atomic_load_n(&strings->count, __ATOMIC_ACQUIRE);
	uint32_t workers = META(obs, workers);
	out->workers = workers < STATE_WORKERS_MAX ? workers : STATE_WORKERS_MAX;
	for (uint32_t i = 0; i < STATE_IDENTITIES; i++)
		out->producers += __atomic_load_n(&obs->identities[i].used,
						  __ATOMIC_ACQUIRE) != 0;
	uint32_t high_water = 0;
	const struct placement_record *recs = records(obs, &high_water);
	for (uint32_t i = 0; recs != NULL && i < high_water; i++) {
		uint32_t owner = owner_of(&recs[i]);
		out->placements += owner != 0;
		out->bound_placements += owner == PLACEMENT_OWNER_BOUND;
	}
	out->recovered_placements = META(obs, recovered_placements);
	out->rolled_back = META(obs, rolled_back);
	out->resyncs = META(obs, resyncs);
	out->resync_added = META(obs, resync_added);
	out->resync_removed = META(obs, resync_removed);
	out->resync_resized = META(obs, resync_resized);
	out->durability = META(obs, durability);
	return 0;
}

int shmsched_observe_nodes(struct shmsched_observer *obs,
			   struct shmsched_observe_node *out, unsigned max,
			   unsigned *n_out, uint64_t *generation, char *err,
			   size_t err_len)
{
	if (obs == NULL || n_out == NULL || (out == NULL && max > 0))
		return errmsg_rc(-EINVAL, err, err_len, "NULL argument");
	*n_out = 0;
	struct snap_copy snap = {0};
	uint32_t epoch = strings_epoch(obs);
	int rc = snap_read(obs, true, &snap, err, err_len);
	if (rc < 0)
		goto done;
	/* Placements per slot: records on a slot whose node is the one there
	 * now (its generation, R1 of shm/ledger.c), as the recount counts. */
	uint64_t *on_slot = calloc(snap.n_slots ? snap.n_slots : 1, sizeof(*on_slot));
	if (on_slot == NULL) {
		rc = errmsg_rc(-ENOMEM, err, err_len, "out of memory");
		goto done;
	}
	uint32_t high_water = 0;
	const struct placement_record *recs = records(obs, &high_water);
	for (uint32_t i = 0; recs != NULL && i < high_water; i++) {
		if (owner_of(&recs[i]) == 0)
			continue;
		/* Relaxed: the owner's acquire ordered the fill; a record freed
		 * and filled again meanwhile is a figure of either moment. */
		uint32_t slot = __atomic_load_n(&recs[i].slot, __ATOMIC_RELAXED);
		uint32_t gen = __atomic_load_n(&recs[i].node_gen, __ATOMIC_RELAXED);
		if (slot < snap.n_slots && snap.present[slot] &&
		    gen == ledger_node_generation(obs->ledger, slot))
			on_slot[slot]++;
	}
	unsigned n = 0;
	for (uint32_t slot = 0; slot < snap.n_slots; slot++) {
		if (!snap.present[slot])
			continue;
		const struct node_spec *spec = &snap.nodes[slot];
		if (n < max) {
			struct shmsched_observe_node *o = &out[n];
			memset(o, 0, sizeof(*o));
			o->node_id = slot;
			o->name_id = spec->name;
			rc = string_copy(obs, spec->name, o->name, sizeof(o->name), true);
			if (rc < 0) {
				rc = errmsg_rc(-EBADMSG, err, err_len, "state region %s: "
					       "node %" PRIu32 ": name id %" PRIu32
					       " is not in the string table", obs->path,
					       slot, spec->name);
				break;
			}
			o->cpu_milli = spec->allocatable.v[RES_CPU];
			o->mem_bytes = spec->allocatable.v[RES_MEMORY];
			o->pods = spec->allocatable.v[RES_PODS];
			struct res_vec used;
			int64_t nz_cpu, nz_mem;
			/* O4: each counter on its own (V1 of shm/ledger.c). */
			ledger_load_used(ledger_node(obs->ledger, slot), &used, &nz_cpu,
					 &nz_mem);
			o->used_cpu_milli = used.v[RES_CPU];
			o->used_mem_bytes = used.v[RES_MEMORY];
			o->used_pods = used.v[RES_PODS];
			o->placements = on_slot[slot];
			o->labels = spec->n_labels;
			o->taints = spec->n_taints;
			o->gpus = spec->devices.n_gpus;
			o->cores = spec->devices.n_cores;
			o->cordoned = spec->unschedulable != 0;
			o->unreachable = unreachable(obs, spec);
		}
		n++;
	}
	free(on_slot);
	if (rc == 0 && strings_epoch(obs) != epoch)
		rc = errmsg_rc(-EAGAIN, err, err_len, "state region %s: a restarted "
			       "daemon freed strings while the nodes were read; "
			       "read them again", obs->path);
	if (rc == 0) {
		*n_out = n;
		if (generation != NULL)
			*generation = snap.generation;
	}
done:
	snap_free(&snap);
	return rc;
}

int shmsched_observe_producers(struct shmsched_observer *obs,
			       struct shmsched_observe_producer *out,
			       unsigned max, unsigned *n_out, char *err,
			       size_t err_len)
{
	if (obs == NULL || n_out == NULL || (out == NULL && max > 0))
		return errmsg_rc(-EINVAL, err, err_len, "NULL argument");
	*n_out = 0;
	uint64_t *owned = calloc(STATE_IDENTITIES, sizeof(*owned));
	if (owned == NULL)
		return errmsg_rc(-ENOMEM, err, err_len, "out of memory");
	uint32_t high_water = 0;
	const struct placement_record *recs = records(obs, &high_water);
	for (uint32_t i = 0; recs != NULL && i < high_water; i++) {
		uint32_t owner = owner_of(&recs[i]);
		if (owner >= 1 && owner <= STATE_IDENTITIES)
			owned[owner - 1]++;
	}
	unsigned n = 0;
	for (uint32_t i = 0; i < STATE_IDENTITIES; i++) {
		const struct state_identity *id = &obs->identities[i];
		/* The seqlock's reader (shm/identity.h, R1-R4): a slot freed
		 * and taken again under the copy is copied again, never
		 * returned with half of each name. */
		uint32_t uid = 0;
		char name[64];
		int got = -EAGAIN;
		for (unsigned attempt = 0; got == -EAGAIN && attempt < IDENTITY_TRIES;
		     attempt++) {
			if (attempt > 0) {
				count(&obs->retries);
				if (attempt > OBSERVE_SPINS)
					sched_yield();
			}
			got = state_identity_read(id, &uid, name, NULL, NULL);
		}
		if (got == 0)
			continue;
		if (got < 0) {
			count(&obs->refused);
			free(owned);
			return errmsg_rc(-EAGAIN, err, err_len, "producer identity %u "
					 "was rewritten under every one of %u reads",
					 i + 1, IDENTITY_TRIES);
		}
		if (n < max) {
			struct shmsched_observe_producer *o = &out[n];
			memset(o, 0, sizeof(*o));
			o->owner = i + 1;
			o->uid = uid;
			_Static_assert(sizeof(o->name) == sizeof(name), "name: 64 bytes");
			memcpy(o->name, name, sizeof(o->name));
			/* O4: relaxed, a figure. */
			o->connections = __atomic_load_n(&id->connections,
							 __ATOMIC_RELAXED);
			o->placements = owned[i];
		}
		n++;
	}
	free(owned);
	*n_out = n;
	return 0;
}

int shmsched_observe_workers(struct shmsched_observer *obs,
			     struct shmsched_observe_worker *out, unsigned max,
			     unsigned *n_out)
{
	if (obs == NULL || n_out == NULL || (out == NULL && max > 0))
		return -EINVAL;
	/* The live count (a later daemon may run with another), clamped to
	 * the blocks the section holds. */
	uint32_t workers = META(obs, workers);
	if (workers > STATE_WORKERS_MAX)
		workers = STATE_WORKERS_MAX;
	for (uint32_t i = 0; i < workers && i < max; i++) {
		const struct state_worker_stats *w = &obs->workers[i];
		struct shmsched_observe_worker *o = &out[i];
		/* O4: relaxed, each its own figure (the worker's stores are
		 * relaxed too). */
#define STAT(field) __atomic_load_n(&w->field, __ATOMIC_RELAXED)
		*o = (struct shmsched_observe_worker){
			.index = i,
			.pods = STAT(pods),
			.placed = STAT(placed),
			.unschedulable = STAT(unschedulable),
			.rejected = STAT(rejected),
			.cancelled = STAT(cancelled),
			.conflicts = STAT(conflicts),
			.gave_up = STAT(gave_up),
			.bad_handles = STAT(bad_handles),
			.completion_overflows = STAT(completion_overflows),
			.pending_active = STAT(pending_active),
			.pending_backoff = STAT(pending_backoff),
			.pending_unschedulable = STAT(pending_unschedulable),
			.pending_gated = STAT(pending_gated),
			.preemption_attempts = STAT(preemption_attempts),
			.preemption_victims = STAT(preemption_victims),
			.waited = STAT(waited),
			.waited_placed = STAT(waited_placed),
			.timed_out = STAT(timed_out),
			.waiting_cancelled = STAT(waiting_cancelled),
			.forgotten = STAT(forgotten),
			.queue_woken = STAT(queue_woken),
		};
		for (unsigned b = 0; b < STATE_ATTEMPT_BUCKETS; b++)
			o->attempts[b] = STAT(attempts[b]);
#undef STAT
	}
	*n_out = workers;
	return 0;
}

int shmsched_observe_node_name(struct shmsched_observer *obs, uint32_t node_id,
			       char *buf, size_t len)
{
	if (obs == NULL || (buf == NULL && len > 0))
		return -EINVAL;
	if (len > 0)
		buf[0] = '\0';
	/* R1-R4 over one slot: its present byte and its name id, no
	 * checksum (the copy is a few bytes; the id is checked against the
	 * string table below). */
	bool stuck = false;
	for (unsigned attempt = 0; attempt < OBSERVE_TRIES; attempt++) {
		if (attempt > 0) {
			count(&obs->retries);
			if (stuck && still_waiting(obs, attempt, 0, true, NULL, 0) < 0) {
				count(&obs->refused);
				return -EBADMSG;
			}
			if (attempt > OBSERVE_SPINS)
				sched_yield();
		}
		stuck = false;
		uint32_t epoch = strings_epoch(obs); /* I2: before the copy */
		/* R1, R2: acquire, partners of S3, S2. */
		uint32_t index = __atomic_load_n(&obs->meta->current_snapshot,
						 __ATOMIC_ACQUIRE);
		if (index > 1)
			return -EBADMSG;
		struct state_snapshot *h = obs->headers[index];
		const struct snapshot *v = &obs->views[index];
		uint64_t seq = __atomic_load_n(&h->seq, __ATOMIC_ACQUIRE);
		stuck = seq & 1;
		if (stuck)
			continue;
		/* R3. */
		uint64_t generation = __atomic_load_n(&h->generation, __ATOMIC_RELAXED);
		uint32_t n_slots = __atomic_load_n(&h->n_slots, __ATOMIC_RELAXED);
		bool in = node_id < n_slots && node_id < obs->caps.max_nodes;
		uint8_t present = in ? v->present[node_id] : 0;
		uint32_t name = in ? v->nodes[node_id].name : 0;
		/* R4. */
		state_fence_acquire();
		if (__atomic_load_n(&h->seq, __ATOMIC_RELAXED) != seq)
			continue;
		stuck = generation == 0;
		if (stuck)
			continue;
		count(&obs->reads);
		if (!present)
			return -ENOENT;
		int rc = string_copy(obs, name, buf, len, false);
		if (strings_epoch(obs) != epoch)
			continue; /* I2: the id may have been reused: again */
		return rc == -ENOENT ? -EBADMSG : rc;
	}
	count(&obs->refused);
	return -EAGAIN;
}

int shmsched_observe_string(struct shmsched_observer *obs, uint32_t id,
			    char *buf, size_t len)
{
	if (obs == NULL || (buf == NULL && len > 0))
		return -EINVAL;
	if (len > 0)
		buf[0] = '\0';
	return string_copy(obs, id, buf, len, false);
}

int shmsched_observe_stats(const struct shmsched_observer *obs,
			   struct shmsched_observe_stats *out)
{
	if (obs == NULL || out == NULL)
		return -EINVAL;
	/* Relaxed: figures. */
	out->reads = __atomic_load_n(&obs->reads, __ATOMIC_RELAXED);
	out->retries = __atomic_load_n(&obs->retries, __ATOMIC_RELAXED);
	out->refused = __atomic_load_n(&obs->refused, __ATOMIC_RELAXED);
	return 0;
}
