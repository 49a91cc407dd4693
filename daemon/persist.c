/* The daemon and its durable store: see persist_internal.h. */
#include "daemon/persist_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/base.h"

struct persist {
	struct store *store;
	struct persist_tables t;
	bool sync;
	uint64_t failures; /* hook writes that failed: relaxed, a figure */
};

/* store_check() in a child process: LMDB trusts its interior pages, and a
 * damaged one can crash the process that walks it (measured: 8 of 300
 * random 4-byte overwrites of a store's pages crashed a check; the other
 * 292 were refused). A child that dies of it tells the daemon, which then
 * refuses the store instead of dying. Called before any other thread of
 * the daemon exists, so the child may do what it likes. */
static int check_in_child(const char *dir, char *err, size_t err_len)
{
	char data[600];
	snprintf(data, sizeof(data), "%s/data.mdb", dir);
	if (access(data, F_OK) != 0)
		return 0; /* a new store */
	int fds[2];
	if (pipe(fds) < 0)
		return errmsg_rc(-errno, err, err_len, "store %s: pipe: %s", dir,
				 strerror(errno));
	pid_t pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return errmsg_rc(-errno, err, err_len, "store %s: fork: %s", dir,
				 strerror(errno));
	}
	if (pid == 0) {
		close(fds[0]);
		char why[512] = "";
		int rc = store_check(dir, NULL, NULL, NULL, why, sizeof(why));
		if (rc < 0 && write(fds[1], why, strlen(why)) < 0)
			_exit(2);
		_exit(rc == 0 ? 0 : rc == -EPROTO ? 3 : 1);
	}
	close(fds[1]);
	char why[512];
	ssize_t n = read(fds[0], why, sizeof(why) - 1);
	why[n > 0 ? n : 0] = '\0';
	close(fds[0]);
	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (WIFSIGNALED(status))
		return errmsg_rc(-EBADMSG, err, err_len, "store %s: damaged: reading "
				 "it crashed a check process (signal %d); move the "
				 "directory aside and start with a new store", dir,
				 WTERMSIG(status));
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return errmsg_rc(WIFEXITED(status) && WEXITSTATUS(status) == 3
				 ? -EPROTO : -EBADMSG, err, err_len, "%s%s", why,
				 why[0] ? "" : "store check failed");
	return 0;
}

int persist_open(const char *dir, enum store_durability mode,
		 const struct persist_tables *tables, struct persist **out,
		 char *err, size_t err_len)
{
	int rc = check_in_child(dir, err, err_len);
	if (rc < 0)
		return rc;
	struct persist *p = calloc(1, sizeof(*p));
	if (p == NULL)
		return errmsg_rc(-ENOMEM, err, err_len, "out of memory");
	rc = store_open(dir, mode, &p->store, err, err_len);
	if (rc < 0) {
		free(p);
		return rc;
	}
	p->t = *tables;
	p->sync = mode == STORE_DURABILITY_SYNC;
	*out = p;
	return 0;
}

void persist_close(struct persist *p)
{
	if (p == NULL)
		return;
	store_close(p->store);
	free(p);
}

bool persist_sync(const struct persist *p)
{
	return p->sync;
}

struct store *persist_store(struct persist *p)
{
	return p->store;
}

int persist_has_state(struct persist *p, bool *has, char *err, size_t err_len)
{
	/* LMDB's counts: the store's values were checked by the child
	 * process at open, and a restore checks them again as it reads. */
	uint64_t nodes, placements, identities;
	int rc = store_counts(p->store, &nodes, &placements, &identities, err,
			      err_len);
	*has = rc == 0 && nodes + placements > 0;
	return rc;
}

/* --- restore ------------------------------------------------------------- */

struct restore {
	struct persist *p;
	struct node_event *events;
	size_t n, cap;
	bool applied;            /* the nodes published (apply_nodes) */
	uint64_t placements, skipped;
	char *err;
	size_t err_len;
};

static int restore_node(void *arg, const char *name, size_t nl, const void *b,
			size_t len)
{
	struct restore *r = arg;
	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 256;
		struct node_event *e = realloc(r->events, cap * sizeof(*e));
		if (e == NULL)
			return errmsg_rc(-ENOMEM, r->err, r->err_len, "out of memory");
		r->events = e;
		r->cap = cap;
	}
	struct node_event *e = &r->events[r->n];
	memset(e, 0, sizeof(*e));
	e->kind = NODE_EVENT_ADD;
	char why[256];
	int rc = store_decode_node(b, len, r->p->t.strings, &e->spec, why, sizeof(why));
	if (rc < 0)
		return errmsg_rc(rc, r->err, r->err_len, "store: node %.*s: %s",
				 (int)(nl > 64 ? 64 : nl), name, why);
	if (intern_len(r->p->t.strings, e->spec.name) != nl ||
	    memcmp(intern_str(r->p->t.strings, e->spec.name), name, nl) != 0)
		return errmsg_rc(-EBADMSG, r->err, r->err_len, "store: node %.*s: "
				 "its record names another node",
				 (int)(nl > 64 ? 64 : nl), name);
	e->name = e->spec.name;
	r->n++;
	return 0;
}

static int restore_identity(void *arg, uint32_t owner, const void *b, uint32_t len)
{
	struct restore *r = arg;
	char why[256];
	struct state_identity id;
	int rc = store_decode_identity(b, len, &id, why, sizeof(why));
	if (rc == 0 && (owner == 0 || owner > STATE_IDENTITIES))
		rc = errmsg_rc(-EBADMSG, why, sizeof(why), "owner %u out of range",
			       owner);
	if (rc < 0)
		return errmsg_rc(rc, r->err, r->err_len, "store: identity %u: %s",
				 owner, why);
	r->p->t.identities[owner - 1] = id;
	return 0;
}

/* Publishes the nodes collected so far, once. */
static int apply_nodes(struct restore *r)
{
	if (r->applied)
		return 0;
	r->applied = true;
	char why[512];
	int rc = r->n == 0 ? 0 : cluster_apply(r->p->t.cluster, r->events, r->n,
					       why, sizeof(why));
	return rc < 0 ? errmsg_rc(rc, r->err, r->err_len, "store: its nodes: %s",
				  why) : 0;
}

static int restore_placement(void *arg, uint64_t id, const void *b, uint32_t len)
{
	struct restore *r = arg;
	struct persist *p = r->p;
	int rc = apply_nodes(r);
	if (rc < 0)
		return rc;
	struct placement_record rec;
	uint32_t node;
	char why[256];
	rc = store_decode_placement(b, len, p->t.strings, &rec, &node, why,
				    sizeof(why));
	if (rc < 0)
		return errmsg_rc(rc, r->err, r->err_len, "store: placement %llu: %s",
				 (unsigned long long)id, why);
	int64_t slot = cluster_slot_of(p->t.cluster, node);
	if (slot < 0) {
		r->skipped++; /* its node was removed before the store saw it */
		return 0;
	}
	rec.slot = (uint32_t)slot;
	rec.node_gen = ledger_node_generation(cluster_ledger(p->t.cluster),
					      (uint32_t)slot);
	rc = placements_restore(p->t.records, id, &rec);
	if (rc < 0)
		return errmsg_rc(-EBADMSG, r->err, r->err_len, "store: placement "
				 "%llu: %s", (unsigned long long)id, rc == -EEXIST
				 ? "its record is taken twice"
				 : "an id this daemon's --max-placements cannot hold");
	r->placements++;
	return 0;
}

int persist_restore(struct persist *p, uint64_t *nodes, uint64_t *placements,
		    uint64_t *skipped, char *err, size_t err_len)
{
	/* One walk: the store gives nodes, then identities, then placements;
	 * the nodes are published before the first placement needs them. */
	struct restore r = {.p = p, .err = err, .err_len = err_len};
	struct store_visitor v = {restore_node, restore_identity, restore_placement,
				  &r};
	int rc = store_load(p->store, &v, err, err_len);
	if (rc == 0)
		rc = apply_nodes(&r);
	free(r.events);
	if (rc < 0)
		return rc;
	char why[512];
	placements_reindex(p->t.records);
	struct recount_stats rs;
	rc = ledger_recount(p->t.cluster, p->t.records, STATE_IDENTITIES,
			    p->t.identities, &rs, why, sizeof(why));
	if (rc < 0)
		return errmsg_rc(rc, err, err_len, "store: %s", why);
	*nodes = r.n;
	*placements = r.placements;
	*skipped = r.skipped;
	return 0;
}

/* --- the region into the store ------------------------------------------- */

static int fill_store(struct store_replace *w, void *arg)
{
	struct persist *p = arg;
	const struct snapshot *snap = cluster_snapshot(p->t.cluster);
	struct ledger *l = cluster_ledger(p->t.cluster);
	static uint8_t buf[1 << 20];
	for (uint32_t s = 0; s < snap->n_slots; s++) {
		if (!snap->present[s])
			continue;
		const struct node_spec *n = &snap->nodes[s];
		int len = store_encode_node(n, p->t.strings, buf, sizeof(buf));
		int rc = len < 0 ? len
			 : store_replace_node(w, intern_str(p->t.strings, n->name),
					      intern_len(p->t.strings, n->name), buf,
					      (size_t)len);
		if (rc != 0)
			return rc;
	}
	for (uint32_t i = 0; i < STATE_IDENTITIES; i++) {
		if (!p->t.identities[i].used)
			continue;
		int len = store_encode_identity(&p->t.identities[i], buf, sizeof(buf));
		int rc = len < 0 ? len : store_replace_identity(w, i + 1, buf,
								 (uint32_t)len);
		if (rc != 0)
			return rc;
	}
	uint32_t hw = placements_high_water(p->t.records);
	for (uint32_t i = 0; i < hw; i++) {
		uint64_t id;
		const struct placement_record *r = placements_at(p->t.records, i, &id);
		/* A record on a removed node counts nowhere: not kept. */
		if (r == NULL || !ledger_slot_current(l, snap, r->slot, r->node_gen))
			continue;
		int len = store_encode_placement(r, snap->nodes[r->slot].name,
						 p->t.strings, buf, STORE_BLOB_MAX);
		int rc = len < 0 ? len : store_replace_placement(w, id, buf,
								  (uint32_t)len);
		if (rc != 0)
			return rc;
	}
	return 0;
}

int persist_replace_all(struct persist *p, char *err, size_t err_len)
{
	return store_replace_all(p->store, fill_store, p, err, err_len);
}

/* --- as things happen ---------------------------------------------------- */

uint64_t persist_placement(struct persist *p, uint64_t id,
			   const struct placement_record *r, uint32_t owner)
{
	/* The worker's own snapshot read: the node the record names. A
	 * record whose node left meanwhile is stale; it is kept by name and
	 * skipped at a restore that does not find the node. */
	const struct snapshot *snap = cluster_snapshot(p->t.cluster);
	uint32_t node = r->slot < snap->n_slots ? snap->nodes[r->slot].name : 0;
	uint8_t buf[STORE_BLOB_MAX];
	struct placement_record rec = *r;
	rec.owner = owner; /* not published yet: the record's reads 0 */
	int len = store_encode_placement(&rec, node, p->t.strings, buf, sizeof(buf));
	if (len < 0) {
		__atomic_fetch_add(&p->failures, 1, __ATOMIC_RELAXED);
		return 0;
	}
	return store_put_placement(p->store, id, buf, (uint32_t)len);
}

void persist_wait(struct persist *p, uint64_t seq)
{
	if (seq != 0 && store_wait(p->store, seq) < 0)
		__atomic_fetch_add(&p->failures, 1, __ATOMIC_RELAXED);
}

static void on_node_changed(void *arg, const struct node_event *ev)
{
	struct persist *p = arg;
	char err[512];
	const char *name = intern_str(p->t.strings, ev->name);
	size_t nl = intern_len(p->t.strings, ev->name);
	int rc;
	if (ev->kind == NODE_EVENT_REMOVE) {
		rc = store_del_node(p->store, name, nl, err, sizeof(err));
	} else {
		/* The node as the new snapshot holds it (cordon changes a
		 * field of the stored spec). */
		int64_t slot = cluster_slot_of(p->t.cluster, ev->name);
		static uint8_t buf[1 << 20];
		int len = slot < 0 ? -ENOENT
			  : store_encode_node(&cluster_snapshot(p->t.cluster)->nodes[slot],
					      p->t.strings, buf, sizeof(buf));
		rc = len < 0 ? len : store_put_node(p->store, name, nl, buf,
						    (size_t)len, err, sizeof(err));
	}
	if (rc < 0) {
		__atomic_fetch_add(&p->failures, 1, __ATOMIC_RELAXED);
		log_msg(LOG_LEVEL_ERROR, "store: node %s not saved: %s", name, err);
	}
}

static void on_identity_added(void *arg, uint32_t owner)
{
	struct persist *p = arg;
	uint8_t buf[256];
	char err[512];
	int len = store_encode_identity(&p->t.identities[owner - 1], buf, sizeof(buf));
	int rc = len < 0 ? len : store_put_identity(p->store, owner, buf,
						    (uint32_t)len, err, sizeof(err));
	if (rc < 0) {
		__atomic_fetch_add(&p->failures, 1, __ATOMIC_RELAXED);
		log_msg(LOG_LEVEL_ERROR, "store: identity %u not saved: %s", owner,
			err);
	}
}

static void on_placement_freed(void *arg, uint64_t id)
{
	struct persist *p = arg;
	uint64_t seq = store_del_placement(p->store, id);
	if (p->sync)
		persist_wait(p, seq);
}

static void on_placement_added(void *arg, uint64_t id)
{
	struct persist *p = arg;
	const struct placement_record *r = placements_get(p->t.records, id);
	if (r == NULL)
		return;
	uint64_t seq = persist_placement(p, id, r, r->owner);
	if (p->sync)
		persist_wait(p, seq);
}

void persist_hooks(struct persist *p, struct producers_persist *out)
{
	*out = (struct producers_persist){
		.node_changed = on_node_changed,
		.identity_added = on_identity_added,
		.placement_freed = on_placement_freed,
		.placement_added = on_placement_added,
		.arg = p,
	};
}
