/* The control requests of the daemon's producers (ingest/control_ops.h):
 * the dispatch of each request, by its kind and the role of the socket it
 * came through, and the handlers of templates, node events, releases,
 * listings, node and resource names, resyncs and PriorityClasses.
 * Registration is producers.c's (the table), OP_EVALUATE
 * producers_evaluate.c's and OP_POLICY producers_policy.c's: the dispatch
 * calls them. Calls those files; none calls back.
 *
 * Every handler runs on a control server's thread under the producers'
 * lock (producers_on_request), one at a time: the one writer of the intern
 * table, the resource names, the cluster's snapshots (node events) and the
 * placement records a release frees. A refused request rolls back the
 * strings it interned (intern_rollback).
 * Publication: a template's n_templates is stored with release once the
 * template is written (partner: the acquire load in producers_templates(),
 * ingest/producers.c); the budgets' sums and the resync counters are
 * relaxed figures.
 * Cost: every request is the slow path; a node event costs a snapshot copy
 * and a grace period; a template compiles its static results over every
 * node; a listing looks at LIST_SCAN_MAX records at most.
 */
#include "ingest/producers_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ingest/control_ops.h"
#include "ingest/control_proto.h"
#include "ingest/control_server.h"
#include "ingest/k8s_json.h"
#include "ingest/priority.h"
#include "ingest/resync.h"
#include "base/base.h"
#include "policy/policy.h"
#include "shm/shm.h"
#include "workers/workers.h"

static int decode_one(struct producers *p, enum producer_role role,
		      const char *what, const void *body, uint32_t len,
		      struct pod_spec *pod, struct node_spec *node, char *err,
		      size_t err_len)
{
	struct k8s_ctx kc = {.strings = p->strings, .res = p->res,
			     .no_new_resources = role != ROLE_ADMIN,
			     .profiles = p->profiles};
	return k8s_load_one(what, body, len, &kc, pod, node, err, err_len);
}

_Static_assert(OP_TEMPLATE_SCOPE_MAX == POLICY_SCOPE_BYTES_MAX,
	       "a scope the wire carries is one the policy reads");

/* A scoped template's scope (OP_TEMPLATE_SCOPED), parsed into *out (NULL:
 * a plain template); the table for scopes made on the first. Returns 0,
 * or an error with its message in err. */
static int template_scope(struct producer *pr, const struct control_template *t,
			  struct policy_scope **out, char *err, size_t err_len)
{
	*out = NULL;
	if (!t->scoped)
		return 0;
	if (pr->templates_scope == NULL) {
		pr->templates_scope = calloc(PRODUCER_TEMPLATES_MAX,
					     sizeof(*pr->templates_scope));
		if (pr->templates_scope == NULL)
			return errmsg_rc(-ENOMEM, err, err_len, "template: out of memory");
	}
	int at = snprintf(err, err_len, "template: ");
	int rc = policy_scope_parse(t->scope, t->scope_len, out, err + at,
				    err_len - (size_t)at);
	return rc == -E2BIG ? -EINVAL : rc;
}

static void handle_template(struct producers *p, enum producer_role role,
			    struct control_server *s, uint64_t conn, uint32_t rid,
			    uint32_t arg, const void *body, uint32_t len)
{
	struct producer *pr = prod_registered(p, role, s, conn, rid, "sending templates");
	if (pr == NULL)
		return;
	if (pr->n_templates == PRODUCER_TEMPLATES_MAX) {
		control_server_reply_error(s, conn, rid, ENOSPC,
					   "%u templates: the most a producer has",
					   PRODUCER_TEMPLATES_MAX);
		return;
	}
	static struct pod_spec pod; /* the control thread's alone; too big for a stack */
	char err[1024];
	struct control_template t;
	struct policy_scope *scope = NULL;
	int rc = control_template_split(arg, body, len, &t, err, sizeof(err));
	if (rc == 0)
		rc = template_scope(pr, &t, &scope, err, sizeof(err));
	if (rc < 0) {
		control_server_reply_error(s, conn, rid, -rc, "%s", err);
		return;
	}
	struct intern_mark mark;
	uint64_t cost = 0;
	for (bool first = true;; first = false) {
		intern_mark(p->strings, &mark);
		rc = decode_one(p, role, "template", t.pod, t.pod_len, &pod, NULL,
				err, sizeof(err));
		if (rc == 0) /* its namespace and class: the identity's to name? */
			rc = prod_admit_template(p, role, pr, &pod, err, sizeof(err));
		if (rc == 0) {
			/* Its priority as the API server's admission would
			 * give it; with no table, a class name is refused and
			 * priority is 0. */
			static const struct priority_classes none;
			int n = snprintf(err, sizeof(err), "template: ");
			rc = priority_resolve(p->classes != NULL ? p->classes : &none,
					      p->strings, &pod, false, err + n,
					      sizeof(err) - (size_t)n);
			if (rc == 0)
				rc = gang_resolve(p->gangs, p->strings, &pod, err + n,
						  sizeof(err) - (size_t)n);
		}
		cost = 0;
		if (rc == 0)
			rc = prod_charge_strings(p, pr, role, &mark, &cost, err,
						 sizeof(err));
		/* Issue 41: over a budget while producers with strings went
		 * since the last reclaim: what nothing holds now is freed
		 * and every uid's charge rebuilt (prod_strings_reclaim),
		 * then the template is read once more. Once per gone
		 * producer at most, so not a cost a producer can repeat. */
		if (rc != -EDQUOT || !first || p->reclaim_pending == 0)
			break;
		intern_rollback(p->strings, &mark); /* no mark across a reclaim */
		if (prod_strings_reclaim(p, "a template over a budget") < 0)
			break;
	}
	if (rc < 0) {
		/* Nothing of a refused template stays: the strings it named
		 * were never published. */
		intern_rollback(p->strings, &mark);
		policy_scope_free(scope);
		control_server_reply_error(s, conn, rid, -rc, "%s", err);
		return;
	}
	struct identity_charge *charge = &p->charged[pr->owner - 1];
	if (role != ROLE_ADMIN && cost > 0) {
		/* Its new strings are its uid's (prod_charge_strings made the
		 * entry): tagged, so a restart charges them again, or frees
		 * them when nothing holds them. */
		uint32_t tag = intern_uid_tag(p->identities[pr->owner - 1].uid);
		intern_tag_since(p->strings, &mark, tag);
		prod_uid_charge_of(p, tag)->strings += cost;
	}
	charge->strings += cost;
	pr->strings_charged += cost;
	__atomic_fetch_add(&p->use_strings, cost, __ATOMIC_RELAXED); /* a figure */
	uint32_t n = pr->n_templates;
	pr->templates[n] = pod;
	if (pr->templates_scope != NULL)
		pr->templates_scope[n] = scope; /* NULL: its rule's alone */
	/* The template's class is compiled now, not on its first pods' path:
	 * its static filters and scores over every node here (the writer's
	 * thread: its snapshot cannot be freed under it), its index by the
	 * worker (engine_prepare). Without them (no memory) the worker reads
	 * them too. */
	/* Within its identity's budget for them (issue 41): past it, it is
	 * registered uncompiled, its worker reading them as above. */
	const struct snapshot *snap = cluster_snapshot(p->cluster);
	bool compile = p->profiles != NULL &&
		       charge->templates + engine_static_bytes_max(snap->n_slots) <=
		       p->template_budget;
	pr->templates_static[n] = compile ? engine_static_compile(snap, p->ctx,
								  p->profiles, &pod)
					  : NULL;
	uint64_t bytes = engine_static_bytes(pr->templates_static[n]);
	charge->templates += bytes;
	pr->static_charged += bytes;
	/* Relaxed: figures. */
	__atomic_fetch_add(&p->use_templates, bytes, __ATOMIC_RELAXED);
	if (!compile && p->profiles != NULL)
		__atomic_fetch_add(&p->uncompiled, 1, __ATOMIC_RELAXED);
	if (!compile && p->profiles != NULL && pr->n_templates_uncompiled++ == 0)
		log_msg(LOG_LEVEL_WARN, "producer %u (uid %u, name \"%s\"): its "
			"identity's compiled templates hold %llu bytes of the %llu "
			"it may (--template-bytes-per-identity); its templates from "
			"template %u on are compiled by its worker", pr->id,
			(unsigned)p->identities[pr->owner - 1].uid,
			p->identities[pr->owner - 1].name,
			(unsigned long long)charge->templates,
			(unsigned long long)p->template_budget, n + 1);
	/* Release, partner of the acquire in producers_templates(). */
	__atomic_store_n(&pr->n_templates, n + 1, __ATOMIC_RELEASE);
	prod_wake_workers(p); /* compiled now, not at a sleeping worker's next poll */
	struct op_template reply = {.template_id = n + 1};
	control_server_reply(s, conn, rid, &reply, sizeof(reply), -1);
}

static void handle_node_event(struct producers *p, struct control_server *s,
			      uint64_t conn, uint32_t rid, uint32_t kind,
			      const void *body, uint32_t len)
{
	static struct node_event ev; /* the control thread's alone */
	char err[1024];
	if (kind == NODE_EVENT_LEASE) {
		prod_handle_lease(p, s, conn, rid, body, len);
		return;
	}
	memset(&ev, 0, sizeof(ev));
	ev.kind = (uint8_t)kind;
	int rc = 0;
	struct intern_mark mark;
	intern_mark(p->strings, &mark);
	if (kind == NODE_EVENT_ADD || kind == NODE_EVENT_UPDATE) {
		rc = decode_one(p, ROLE_ADMIN, "node event", body, len, NULL,
				&ev.spec, err, sizeof(err));
		ev.name = ev.spec.name;
	} else if (kind == NODE_EVENT_REMOVE || kind == NODE_EVENT_CORDON ||
		   kind == NODE_EVENT_UNCORDON) {
		/* A lookup, never an add: a name the table does not hold
		 * names no node, and a refused request must not grow the
		 * table. */
		if (!intern_find(p->strings, body, len, &ev.name)) {
			rc = -ENOENT;
			snprintf(err, sizeof(err), "node %.*s: no such node",
				 (int)(len > 253 ? 253 : len), (const char *)body);
		}
	} else {
		rc = -EINVAL;
		snprintf(err, sizeof(err), "node event: kind %u: expected 1..6", kind);
	}
	if (rc == 0)
		rc = cluster_apply(p->cluster, &ev, 1, err, sizeof(err));
	if (rc < 0) {
		/* Refused: no snapshot shows the strings it interned. */
		intern_rollback(p->strings, &mark);
		control_server_reply_error(s, conn, rid, -rc, "%s", err);
	} else {
		if (p->persist.node_changed != NULL)
			p->persist.node_changed(p->persist.arg, &ev);
		/* A new node, new labels, taints or allocatable, an uncordon:
		 * pods that may use it now may fit (a cordon or a removal helps
		 * none). */
		int64_t slot = cluster_slot_of(p->cluster, ev.name);
		if (slot >= 0 && (ev.kind == NODE_EVENT_ADD || ev.kind == NODE_EVENT_UPDATE ||
				  ev.kind == NODE_EVENT_UNCORDON))
			prod_publish(p, queue_event_node((uint32_t)slot));
		control_server_reply(s, conn, rid, NULL, 0, -1);
	}
}

/* Gives back exactly what placement `id` recorded, once, for its owner
 * (or an admin): the release can name nothing else, so it cannot forge a
 * use, pass another producer's, or drive a counter below zero. */
static void handle_release(struct producers *p, enum producer_role role,
			   struct control_server *s, uint64_t conn, uint32_t rid,
			   const void *body, uint32_t len)
{
	struct producer *pr = prod_registered(p, role, s, conn, rid, "releasing");
	if (pr == NULL)
		return;
	struct op_release r;
	if (len != sizeof(r)) {
		control_server_reply_error(s, conn, rid, EINVAL,
					   "release: a body of %u bytes; expected %zu "
					   "(a placement id)", len, sizeof(r));
		return;
	}
	memcpy(&r, body, sizeof(r));
	const struct placement_record *rec = placements_get(p->placements,
							    r.placement_id);
	if (rec == NULL) {
		control_server_reply_error(s, conn, rid, ENOENT,
					   "placement %llu: no such placement (never "
					   "made, or released already)",
					   (unsigned long long)r.placement_id);
		return;
	}
	if (rec->owner != pr->owner && role != ROLE_ADMIN) {
		control_server_reply_error(s, conn, rid, EPERM,
					   "placement %llu belongs to another "
					   "producer", (unsigned long long)r.placement_id);
		return;
	}
	struct ledger *l = cluster_ledger(p->cluster);
	if (ledger_node_generation(l, rec->slot) != rec->node_gen) {
		/* The node was removed (its use went with it): nothing to give
		 * back, and nothing to remember. */
		prod_forget(p, r.placement_id);
		control_server_reply_error(s, conn, rid, ESTALE,
					   "placement %llu: its node was removed; "
					   "nothing was left to give back",
					   (unsigned long long)r.placement_id);
		return;
	}
	static struct pod_spec pod; /* the control thread's alone */
	placement_use(rec, &pod);
	uint32_t slot = rec->slot;
	struct device_assignment dev = rec->dev;
	ledger_account(l, slot, &pod, &dev, -1);
	prod_forget(p, r.placement_id);
	/* After the counters moved (A1): a waiting pod that reads this sees
	 * them. */
	prod_publish(p, queue_event_release(slot, &pod, &dev));
	control_server_reply(s, conn, rid, NULL, 0, -1);
}

/* Records looked at per OP_PLACEMENTS page at most: a page with few of
 * the caller's placements ends early, so one request never holds the
 * control thread for a scan of the whole table. */
#define LIST_SCAN_MAX (UINT32_C(1) << 16)

/* A page of live placements: the caller's own, or an admin's: all. */
static void handle_placements(struct producers *p, enum producer_role role,
			      struct control_server *s, uint64_t conn, uint32_t rid,
			      const void *body, uint32_t len)
{
	struct producer *pr = prod_registered(p, role, s, conn, rid, "listing");
	struct op_list q;
	if (pr == NULL)
		return;
	if (len != sizeof(q)) {
		control_server_reply_error(s, conn, rid, EINVAL, "placements: a body "
					   "of %u bytes; expected %zu", len, sizeof(q));
		return;
	}
	memcpy(&q, body, sizeof(q));
	static uint8_t page[CONTROL_MAX_PAYLOAD]; /* the control thread's alone */
	struct op_placements *out = (struct op_placements *)(void *)page;
	const uint32_t room = (uint32_t)((sizeof(page) - sizeof(*out)) /
					 sizeof(out->entries[0]));
	uint32_t cursor = q.cursor, n = 0, stop = q.cursor + LIST_SCAN_MAX;
	if (stop < q.cursor)
		stop = UINT32_MAX;
	uint64_t id;
	while (n < room && cursor < stop &&
	       (id = placements_next(p->placements, &cursor)) != 0) {
		const struct placement_record *r = placements_get(p->placements, id);
		if (r == NULL || (role != ROLE_ADMIN && r->owner != pr->owner))
			continue;
		struct op_placement *e = &out->entries[n++];
		memset(e, 0, sizeof(*e));
		e->placement_id = id;
		/* A removed node's placement shows the id it had. */
		e->node_id = r->slot;
		if (r->owner == PLACEMENT_OWNER_BOUND) {
			snprintf(e->owner_name, sizeof(e->owner_name), "(bound)");
		} else {
			const struct state_identity *who = &p->identities[r->owner - 1];
			e->owner_uid = who->uid;
			memcpy(e->owner_name, who->name, sizeof(e->owner_name));
		}
		e->cookie = r->cookie;
		e->cpu_milli = r->request.v[RES_CPU];
		e->mem_bytes = r->request.v[RES_MEMORY];
		e->devices.gpu_mask = r->dev.gpu_mask;
		e->devices.gpu_milli = r->dev.gpu_milli;
		e->devices.n_cores = r->dev.n_cores;
		memcpy(e->devices.cpuset, r->dev.cpuset, sizeof(e->devices.cpuset));
	}
	bool done = cursor >= placements_capacity(p->placements);
	out->cursor = done ? UINT32_MAX : cursor;
	out->n = n;
	control_server_reply(s, conn, rid, out,
			     (uint32_t)(sizeof(*out) + n * sizeof(out->entries[0])), -1);
}

static void handle_node_name(struct producers *p, struct control_server *s,
			     uint64_t conn, uint32_t rid, uint32_t node_id)
{
	/* The writer's thread: its own snapshot cannot be freed under it. */
	const struct snapshot *snap = cluster_snapshot(p->cluster);
	if (node_id >= snap->n_slots || !snap->present[node_id]) {
		control_server_reply_error(s, conn, rid, ENOENT,
					   "node %u: no such node", node_id);
		return;
	}
	const char *name = intern_str(p->strings, snap->nodes[node_id].name);
	control_server_reply(s, conn, rid, name, (uint32_t)strlen(name), -1);
}

/* A producer looks a resource name up; only an admin registers a new one. */
static void handle_resource(struct producers *p, enum producer_role role,
			    struct control_server *s, uint64_t conn, uint32_t rid,
			    const void *body, uint32_t len)
{
	int r = res_lookup(p->res, body, len);
	if (r < 0 && role != ROLE_ADMIN) {
		control_server_reply_error(s, conn, rid, EPERM,
					   "resource \"%.*s\" is not registered, and "
					   "only the admin socket%s registers "
					   "resource names", (int)(len > 64 ? 64 : len),
					   (const char *)body, p->admin_hint);
		return;
	}
	if (r < 0)
		r = res_register(p->res, body, len);
	if (r < 0 || r == RES_PODS) {
		control_server_reply_error(s, conn, rid, r < 0 ? -r : EINVAL,
					   "resource \"%.*s\": %s", (int)(len > 64 ? 64 : len),
					   (const char *)body,
					   r == RES_PODS ? "not requestable"
					   : r == -ENOSPC ? "no room for another resource name"
							  : "not a resource name");
		return;
	}
	struct op_resource out = {.resource = (uint32_t)r};
	control_server_reply(s, conn, rid, &out, sizeof(out), -1);
}

/* OP_RESYNC: the file's pods become what is bound (ingest/resync.h). The
 * fd must be a regular file no larger than OP_RESYNC_FILE_MAX: read into
 * memory (resync_read_fd: a file truncated meanwhile is a short read, not
 * the SIGBUS a mapping would give), never read from a pipe that could
 * hold the control thread. */
static void handle_resync(struct producers *p, struct control_server *s,
			  uint64_t conn, uint32_t rid, const void *body,
			  uint32_t len, int fd)
{
	struct op_resync q;
	struct stat st;
	if (len != sizeof(q)) {
		control_server_reply_error(s, conn, rid, EINVAL, "resync: a body "
					   "of %u bytes; expected %zu", len, sizeof(q));
		return;
	}
	memcpy(&q, body, sizeof(q));
	q.node[sizeof(q.node) - 1] = '\0';
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    (uint64_t)st.st_size > OP_RESYNC_FILE_MAX) {
		control_server_reply_error(s, conn, rid, EINVAL, "resync: the pods "
					   "must come as a regular file of at most "
					   "%llu bytes", (unsigned long long)
					   OP_RESYNC_FILE_MAX);
		return;
	}
	char err[1024];
	char *buf;
	size_t size;
	int rc = resync_read_fd(fd, OP_RESYNC_FILE_MAX, &buf, &size, err,
				sizeof(err));
	if (rc < 0) {
		control_server_reply_error(s, conn, rid, -rc, "%s", err);
		return;
	}
	struct resync_result r;
	rc = resync_apply(p->cluster, p->placements, p->strings, p->res,
			  "resync", buf, size, q.node, &p->resync_hooks, &r,
			  err, sizeof(err));
	free(buf);
	if (p->meta != NULL && (rc == 0 || r.added + r.removed + r.resized > 0)) {
		/* Relaxed: figures for observers. */
		__atomic_store_n(&p->meta->resyncs, p->meta->resyncs + 1,
				 __ATOMIC_RELAXED);
		__atomic_store_n(&p->meta->resync_added,
				 p->meta->resync_added + r.added, __ATOMIC_RELAXED);
		__atomic_store_n(&p->meta->resync_removed,
				 p->meta->resync_removed + r.removed, __ATOMIC_RELAXED);
		__atomic_store_n(&p->meta->resync_resized,
				 p->meta->resync_resized + r.resized, __ATOMIC_RELAXED);
	}
	if (r.removed + r.resized > 0) {
		/* Placements given back on any node: every waiting pod short
		 * of anything may fit now. */
		struct pod_spec all;
		memset(&all, 0, sizeof(all));
		for (unsigned k = 0; k < RES_MAX; k++)
			all.request.v[k] = k == RES_PODS ? 0 : 1;
		all.n_ports = 1;
		all.group = 1;
		struct device_assignment dev = {.gpu_mask = 1, .n_cores = 1};
		prod_publish(p, queue_event_release(QUEUE_ANY_NODE, &all, &dev));
	}
	if (rc < 0) {
		control_server_reply_error(s, conn, rid, -rc, "%s", err);
		return;
	}
	log_msg(LOG_LEVEL_INFO, "resync of %s: %llu added, %llu removed, %llu "
		"resized, %llu unchanged, %llu skipped", q.node[0] ? q.node
		: "every node", (unsigned long long)r.added,
		(unsigned long long)r.removed, (unsigned long long)r.resized,
		(unsigned long long)r.unchanged, (unsigned long long)r.skipped);
	struct op_resync_result out = {r.added, r.removed, r.resized, r.unchanged,
				       r.skipped};
	control_server_reply(s, conn, rid, &out, sizeof(out), -1);
}

/* OP_PRIORITY_CLASS: PriorityClasses declared by an admin. */
struct class_count {
	struct priority_loader l;
	unsigned seen;
};

static int count_class(void *arg, const struct k8s_priority_class *pc, char *err,
		       size_t err_len)
{
	struct class_count *c = arg;
	c->seen++;
	return priority_loader_visit(&c->l, pc, err, err_len);
}

static int count_group(void *arg, const struct k8s_pod_group *pg, char *err,
		       size_t err_len)
{
	struct class_count *c = arg;
	c->seen++;
	return priority_loader_visit_group(&c->l, pg, err, err_len);
}

static int count_pdb(void *arg, const struct k8s_pdb *b, char *err, size_t err_len)
{
	struct class_count *c = arg;
	c->seen++;
	return priority_loader_visit_pdb(&c->l, b, err, err_len);
}

static void handle_priority_class(struct producers *p, struct control_server *s,
				  uint64_t conn, uint32_t rid, const void *body,
				  uint32_t len)
{
	char err[1024];
	if (p->classes == NULL) {
		control_server_reply_error(s, conn, rid, ENOTSUP, "priority classes: "
					   "this daemon keeps none");
		return;
	}
	struct intern_mark mark;
	intern_mark(p->strings, &mark);
	struct class_count c = {{p->classes, p->strings, p->gangs, p->pdbs}, 0};
	struct k8s_ctx kc = {.strings = p->strings, .res = p->res,
			     .no_new_resources = true};
	struct k8s_visitor v = {.arg = &c, .priority_class = count_class,
				.pod_group = count_group, .pdb = count_pdb};
	/* Under the lock (dispatch's): the evictor reads the budgets. */
	int rc = k8s_load_buffer("priority class", body, len, &kc, &v, err,
				 sizeof(err));
	if (rc == 0 && c.seen == 0) {
		rc = -EINVAL;
		snprintf(err, sizeof(err), "priority class: no PriorityClass, "
			 "PodGroup, Workload or PodDisruptionBudget in the request");
	}
	if (rc < 0) {
		intern_rollback(p->strings, &mark);
		control_server_reply_error(s, conn, rid, -rc, "%s", err);
		return;
	}
	control_server_reply(s, conn, rid, NULL, 0, -1);
}

/* Refuses a request only the admin socket takes, naming that socket. */
static void refuse_not_admin(struct producers *p, struct control_server *s,
			     uint64_t conn, uint32_t rid, const char *what)
{
	control_server_reply_error(s, conn, rid, EPERM,
				   "%s need the admin socket%s: producers may "
				   "not change the cluster", what, p->admin_hint);
}

static void dispatch(struct producers *p, enum producer_role role,
		     struct control_server *s, uint64_t conn, uint32_t request_id,
		     const void *payload, uint32_t len, int fd)
{
	/* Only OP_RESYNC carries an fd; the server closes it after this. */
	struct op_request op;
	if (len < sizeof(op)) {
		control_server_reply_error(s, conn, request_id, EPROTO,
					   "request of %u bytes: shorter than its "
					   "%zu-byte header", len, sizeof(op));
		return;
	}
	memcpy(&op, payload, sizeof(op));
	const char *body = (const char *)payload + sizeof(op);
	uint32_t body_len = len - (uint32_t)sizeof(op);
	switch (op.kind) {
	case OP_REGISTER:
		prod_handle_register(p, role, s, conn, request_id, body, body_len);
		break;
	case OP_TEMPLATE:
		handle_template(p, role, s, conn, request_id, op.arg, body,
				body_len);
		break;
	case OP_NODE_EVENT:
		if (role != ROLE_ADMIN)
			refuse_not_admin(p, s, conn, request_id, "node events");
		else
			handle_node_event(p, s, conn, request_id, op.arg, body,
					  body_len);
		break;
	case OP_RELEASE:
		handle_release(p, role, s, conn, request_id, body, body_len);
		break;
	case OP_NODE_NAME:
		handle_node_name(p, s, conn, request_id, op.arg);
		break;
	case OP_RESOURCE:
		handle_resource(p, role, s, conn, request_id, body, body_len);
		break;
	case OP_PLACEMENTS:
		handle_placements(p, role, s, conn, request_id, body, body_len);
		break;
	case OP_RESYNC:
		if (role != ROLE_ADMIN)
			refuse_not_admin(p, s, conn, request_id, "resyncs");
		else
			handle_resync(p, s, conn, request_id, body, body_len, fd);
		break;
	case OP_EVALUATE:
		prod_handle_evaluate(p, role, s, conn, request_id, body, body_len);
		break;
	case OP_PRIORITY_CLASS:
		if (role != ROLE_ADMIN)
			refuse_not_admin(p, s, conn, request_id, "priority classes");
		else
			handle_priority_class(p, s, conn, request_id, body, body_len);
		break;
	case OP_POLICY:
		if (role != ROLE_ADMIN)
			refuse_not_admin(p, s, conn, request_id, "policies");
		else
			prod_handle_policy(p, s, conn, request_id, op.arg, body, body_len);
		break;
	case OP_DRAIN:
		if (role != ROLE_ADMIN)
			refuse_not_admin(p, s, conn, request_id, "drains");
		else
			prod_handle_drain(p, s, conn, request_id, op.arg, body, body_len);
		break;
	case OP_QUEUE:
		if (role != ROLE_ADMIN)
			refuse_not_admin(p, s, conn, request_id, "Kueue queues");
		else
			prod_handle_queue(p, s, conn, request_id, op.arg, body, body_len);
		break;
	case OP_APPROVAL:
		if (role != ROLE_ADMIN)
			refuse_not_admin(p, s, conn, request_id, "disruption approvals");
		else
			prod_handle_approval(p, s, conn, request_id, op.arg, body,
					     body_len);
		break;
	case OP_FAILURE:
		prod_handle_failure(p, role, s, conn, request_id, op.arg, body,
				    body_len);
		break;
	default:
		control_server_reply_error(s, conn, request_id, EPROTO,
					   "request kind %u: expected 1..15", op.kind);
		break;
	}
}

void producers_on_request(void *arg, struct control_server *s, uint64_t conn,
			  uint32_t request_id, const void *payload, uint32_t len,
			  int fd)
{
	const struct endpoint *ep = arg;
	pthread_mutex_lock(&ep->p->lock);
	dispatch(ep->p, ep->role, s, conn, request_id, payload, len, fd);
	pthread_mutex_unlock(&ep->p->lock);
}
