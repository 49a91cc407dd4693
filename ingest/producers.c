/* The daemon's producers: the table and its life (ingest/producers.h; the
 * module's other files, and the structs they share, are listed in
 * ingest/producers_internal.h). Here: create, settings and destroy;
 * registration, where a producer joins the table, and its disconnection,
 * where it leaves; producer identities (uid, name) and their reclaim;
 * issue 41's budgets per identity and per uid; the workers' accessors;
 * and what the store (prod_forget) and waiting pods (prod_publish) are
 * told of a change, for the request handlers and preemption. Calls no
 * other file of the module: they call in.
 *
 * Publication (the only atomics here):
 * - table[i]: the writer stores a new producer with release after filling
 *   it (partner: the acquire load in producers_get()); it stores NULL, then
 *   waits rcu_synchronize() before unmapping, so no worker that
 *   loaded the old pointer is still using it.
 * - n_templates: release after the template is written (handle_template,
 *   ingest/producers_requests.c; partner: the acquire load in
 *   producers_templates()).
 * - accepting, counts: relaxed; they are flags and tallies for people
 *   (use_strings, use_templates, uncompiled: issue 41's budgets, too).
 * - worker_ns[i]: each identity's worker time, added by the workers
 *   (relaxed fetch_add, producers_charge_time) and read by anyone
 *   (relaxed): a figure for the fair share's report, publishing nothing.
 * - identities[i].used: stored last with release when an identity is made
 *   and stored 0 with release when an idle one is freed
 *   (identities_reclaim); partner: observers' acquire (client/observe.c).
 *   identities[i].generation: the seqlock over uid and name of a slot
 *   taken again (shm/identity.h, IW1-IW4).
 * Cost: a registration maps a region; a disconnection waits a grace
 * period; a registration that finds no identity free walks the placement
 * table once (identities_reclaim).
 */
#include "ingest/producers_internal.h"

#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/approval.h"
#include "ingest/control_ops.h"
#include "ingest/control_server.h"
#include "ingest/priority.h"
#include "base/base.h"
#include "policy/policy.h"
#include "shm/shm.h"

/* The arena's share of one entry, charged per string (strings_cost). */
static uint64_t entry_share(const struct intern *strings)
{
	uint32_t max_strings;
	uint64_t arena;
	intern_limits(strings, &max_strings, &arena);
	return arena / max_strings ? arena / max_strings : 1;
}

/* The charge of the uid whose strings carry `tag`, made if new; NULL: no
 * memory (the caller refuses). */
struct uid_charge *prod_uid_charge_of(struct producers *p, uint32_t tag)
{
	for (uint32_t i = 0; i < p->n_uid_charged; i++)
		if (p->uid_charged[i].tag == tag)
			return &p->uid_charged[i];
	if (p->n_uid_charged == p->uid_charged_cap) {
		uint32_t cap = p->uid_charged_cap ? p->uid_charged_cap * 2 : 16;
		struct uid_charge *n = realloc(p->uid_charged, cap * sizeof(*n));
		if (n == NULL)
			return NULL;
		p->uid_charged = n;
		p->uid_charged_cap = cap;
	}
	p->uid_charged[p->n_uid_charged] = (struct uid_charge){tag, 0};
	return &p->uid_charged[p->n_uid_charged++];
}

struct uid_rebuild {
	struct producers *p;
	uint64_t share;
	int rc;
};

static void uid_rebuild_one(void *arg, uint32_t tag, uint32_t len)
{
	struct uid_rebuild *r = arg;
	struct uid_charge *c = r->rc == 0 ? prod_uid_charge_of(r->p, tag) : NULL;
	if (c == NULL) {
		r->rc = -ENOMEM;
		return;
	}
	c->strings += len + 1u + r->share;
}

struct producers *producers_create(struct cluster *c, struct intern *strings,
				   struct res_names *res,
				   const struct plugin_ctx *ctx, uint32_t slots,
				   struct placements *placements,
				   struct state_identity *identities)
{
	struct producers *p = calloc(1, sizeof(*p));
	if (p == NULL)
		return NULL;
	p->charged = calloc(IDENTITIES_MAX, sizeof(*p->charged));
	p->worker_ns = calloc(IDENTITIES_MAX, sizeof(*p->worker_ns));
	if (p->charged == NULL || p->worker_ns == NULL) {
		free(p->charged);
		free(p->worker_ns);
		free(p);
		return NULL;
	}
	p->identities = identities;
	/* Nobody is connected yet, whatever a previous daemon left; one
	 * killed between IW1 and IW3 (shm/identity.h) left a generation odd:
	 * made even (release, partner of observers' IR1), so no observer
	 * waits on that slot for ever. */
	for (unsigned i = 0; i < IDENTITIES_MAX; i++) {
		identities[i].connections = 0;
		uint32_t g = identities[i].generation;
		if (g & 1)
			__atomic_store_n(&identities[i].generation, g + 1,
					 __ATOMIC_RELEASE);
	}
	p->placements = placements;
	p->cluster = c;
	p->strings = strings;
	p->res = res;
	p->ctx = ctx;
	p->slots = slots;
	p->accepting = 1;
	/* What each uid holds of the table, from its tags (a restart keeps
	 * the charge of every string the reclaim kept). */
	struct uid_rebuild r = {p, entry_share(strings), 0};
	intern_tagged(strings, uid_rebuild_one, &r);
	if (r.rc < 0) {
		free(p->uid_charged);
		free(p->charged);
		free(p->worker_ns);
		free(p);
		return NULL;
	}
	producers_set_budgets(p, 0, 0);
	pthread_mutex_init(&p->lock, NULL);
	p->endpoints[0] = (struct endpoint){p, ROLE_PRODUCER};
	p->endpoints[1] = (struct endpoint){p, ROLE_ADMIN};
	return p;
}

void *producers_endpoint(struct producers *p, enum producer_role role)
{
	return &p->endpoints[role == ROLE_ADMIN ? 1 : 0];
}

void producers_set_admin_socket(struct producers *p, const char *admin_socket)
{
	if (admin_socket != NULL && *admin_socket != '\0')
		snprintf(p->admin_hint, sizeof(p->admin_hint), " (%s)", admin_socket);
	else
		p->admin_hint[0] = '\0';
}

void producers_set_budgets(struct producers *p, uint64_t strings_per_identity,
			   uint64_t template_bytes_per_identity)
{
	uint32_t max_strings;
	uint64_t arena;
	intern_limits(p->strings, &max_strings, &arena);
	p->strings_budget = strings_per_identity != 0 ? strings_per_identity
		: arena / PRODUCERS_STRINGS_OPEN_DEN * PRODUCERS_STRINGS_OPEN_NUM /
		  IDENTITIES_PER_UID;
	p->template_budget = template_bytes_per_identity != 0
		? template_bytes_per_identity : PRODUCERS_TEMPLATE_BYTES_DEFAULT;
	p->uid_strings_budget = p->strings_budget > UINT64_MAX /
					PRODUCERS_STRINGS_UID_IDENTITIES
		? UINT64_MAX : p->strings_budget * PRODUCERS_STRINGS_UID_IDENTITIES;
}

void producers_budget_use(const struct producers *p, uint64_t *strings,
			  uint64_t *template_bytes, uint64_t *uncompiled)
{
	/* Relaxed: figures. */
	*strings = __atomic_load_n(&p->use_strings, __ATOMIC_RELAXED);
	*template_bytes = __atomic_load_n(&p->use_templates, __ATOMIC_RELAXED);
	*uncompiled = __atomic_load_n(&p->uncompiled, __ATOMIC_RELAXED);
}

/* What the strings added since mark `a` take of the table: their bytes
 * with NULs, and per string the arena's share of one entry, so that a
 * budget in bytes bounds the entries too. Freed entries reused count as
 * new ones. */
static uint64_t strings_cost(const struct producers *p, const struct intern_mark *a)
{
	uint32_t strings;
	uint64_t bytes;
	intern_added_since(p->strings, a, &strings, &bytes);
	return bytes + (uint64_t)strings * entry_share(p->strings);
}

/* Issue 41: charges the strings a producer's template added since `mark`
 * to its identity. Returns 0, or -EDQUOT with a message in err (the
 * caller rolls the strings back): the identity's budget would be passed,
 * or the table is past the part producers may fill. An admin's template
 * is charged but never refused. */
int prod_charge_strings(struct producers *p, const struct producer *pr,
			enum producer_role role, const struct intern_mark *mark,
			uint64_t *cost, char *err, size_t err_len)
{
	uint32_t max_strings, live;
	uint64_t arena, live_bytes;
	intern_use(p->strings, &live, &live_bytes);
	intern_limits(p->strings, &max_strings, &arena);
	*cost = strings_cost(p, mark);
	const struct state_identity *who = &p->identities[pr->owner - 1];
	const struct identity_charge *c = &p->charged[pr->owner - 1];
	if (role == ROLE_ADMIN || *cost == 0)
		return 0;
	struct uid_charge *u = prod_uid_charge_of(p, intern_uid_tag(who->uid));
	if (u == NULL) {
		snprintf(err, err_len, "template: out of memory");
		return -ENOMEM;
	}
	if (u->strings + *cost > p->uid_strings_budget) {
		snprintf(err, err_len, "template: its new strings take %llu bytes of "
			 "the string table; uid %u (producer identity \"%s\" and "
			 "every other name of it) holds %llu of the uid's budget of "
			 "%llu (%u x --strings-per-identity), kept while the strings "
			 "are in the table: those nothing holds are freed after "
			 "their producers leave, or at a restart", (unsigned long long)*cost,
			 (unsigned)who->uid, who->name,
			 (unsigned long long)u->strings,
			 (unsigned long long)p->uid_strings_budget,
			 PRODUCERS_STRINGS_UID_IDENTITIES);
		return -EDQUOT;
	}
	if (c->strings + *cost > p->strings_budget) {
		snprintf(err, err_len, "template: its new strings take %llu bytes of "
			 "the string table; producer identity (uid %u, name \"%s\") "
			 "holds %llu of its budget of %llu (--strings-per-identity)",
			 (unsigned long long)*cost, (unsigned)who->uid, who->name,
			 (unsigned long long)c->strings,
			 (unsigned long long)p->strings_budget);
		return -EDQUOT;
	}
	if (live_bytes > arena / PRODUCERS_STRINGS_OPEN_DEN * PRODUCERS_STRINGS_OPEN_NUM ||
	    live > max_strings / PRODUCERS_STRINGS_OPEN_DEN * PRODUCERS_STRINGS_OPEN_NUM) {
		snprintf(err, err_len, "template: the string table is past the %u/%u "
			 "of it producers may fill (%llu of %llu bytes, %u of %u "
			 "strings; the rest is kept for the admin's nodes); producer "
			 "identity (uid %u, name \"%s\") asked for %llu bytes",
			 PRODUCERS_STRINGS_OPEN_NUM, PRODUCERS_STRINGS_OPEN_DEN,
			 (unsigned long long)live_bytes, (unsigned long long)arena,
			 live, max_strings, (unsigned)who->uid, who->name,
			 (unsigned long long)*cost);
		return -EDQUOT;
	}
	return 0;
}

/* Gives back what a producer's templates were charged to its identity (it
 * is going). The strings stay in the table, charged to its uid, until a
 * restart frees those no record holds (shm/intern.h). */
static void uncharge(struct producers *p, struct producer *pr)
{
	struct identity_charge *c = &p->charged[pr->owner - 1];
	c->strings -= pr->strings_charged;
	c->templates -= pr->static_charged;
	/* Relaxed: figures (producers_budget_use). */
	__atomic_fetch_sub(&p->use_strings, pr->strings_charged, __ATOMIC_RELAXED);
	__atomic_fetch_sub(&p->use_templates, pr->static_charged, __ATOMIC_RELAXED);
	pr->strings_charged = pr->static_charged = 0;
}

static void producer_free(struct producer *pr)
{
	producer_region_close(&pr->region);
	for (uint32_t i = 0; pr->templates_static != NULL && i < pr->n_templates; i++)
		engine_static_free(pr->templates_static[i]);
	free(pr->templates_static);
	for (uint32_t i = 0; pr->templates_scope != NULL && i < pr->n_templates; i++)
		policy_scope_free(pr->templates_scope[i]);
	free(pr->templates_scope);
	free(pr->templates);
	free(pr);
}

void producers_destroy(struct producers *p)
{
	if (p == NULL)
		return;
	free(p->pre_ok);
	free(p->pre_found);
	free(p->pre_nodes);
	free(p->pre_pods);
	free(p->pre_inodes);
	free(p->pre_ipods);
	prows_free(&p->pre_rows);
	free(p->pre_res);
	preempt_scratch_free(&p->pre_scratch);
	free(p->pre_vspec);
	free(p->pre_vdev);
	free(p->pdb_m);
	approval_free(p->approval);
	free(p->unhealthy);
	prod_queues_free(p->queues);
	policy_free(p->policy);
	free(p->policy_path);
	free(p->charged);
	free(p->worker_ns);
	free(p->uid_charged);
	for (uint32_t i = 0; i < PRODUCERS_MAX; i++)
		if (p->table[i] != NULL)
			producer_free(p->table[i]);
	pthread_mutex_destroy(&p->lock);
	free(p);
}

void producers_stop_accepting(struct producers *p)
{
	/* Relaxed: a flag read at the next connection. */
	__atomic_store_n(&p->accepting, 0, __ATOMIC_RELAXED);
}

uint32_t producers_bound(const struct producers *p)
{
	/* Relaxed: see prod_handle_register(). */
	return __atomic_load_n(&p->bound, __ATOMIC_RELAXED);
}

struct producer *producers_get(struct producers *p, uint32_t i)
{
	/* Acquire, partner of the release in prod_handle_register(). */
	return __atomic_load_n(&p->table[i], __ATOMIC_ACQUIRE);
}

void producers_charge_time(struct producers *p, const struct producer *pr,
			   uint64_t ns)
{
	/* Relaxed, partner of producers_identity_time()'s load: a figure. */
	if (ns != 0 && pr->owner >= 1 && pr->owner <= IDENTITIES_MAX)
		__atomic_fetch_add(&p->worker_ns[pr->owner - 1], ns,
				   __ATOMIC_RELAXED);
}

uint64_t producers_identity_time(const struct producers *p, uint32_t owner)
{
	if (owner < 1 || owner > IDENTITIES_MAX)
		return 0;
	/* Relaxed, partner of producers_charge_time()'s add: a figure. */
	return __atomic_load_n(&p->worker_ns[owner - 1], __ATOMIC_RELAXED);
}

uint32_t producers_templates(const struct producer *pr)
{
	/* Acquire, partner of the release in handle_template(). */
	return __atomic_load_n(&pr->n_templates, __ATOMIC_ACQUIRE);
}

void producers_counts(const struct producers *p, uint64_t *registered,
		      uint64_t *gone, uint64_t *faulted)
{
	*registered = __atomic_load_n(&p->registered, __ATOMIC_RELAXED);
	*gone = __atomic_load_n(&p->gone, __ATOMIC_RELAXED);
	*faulted = __atomic_load_n(&p->faulted, __ATOMIC_RELAXED);
}

void producers_fault(struct producers *p, struct producer *pr, const char *why)
{
	uint32_t expected = 0;
	/* Relaxed: the flag only stops this producer's own worker, which set
	 * it; the disconnect orders the rest through the control server. */
	if (!__atomic_compare_exchange_n(&pr->faulted, &expected, 1, false,
					 __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		return;
	__atomic_fetch_add(&p->faulted, 1, __ATOMIC_RELAXED);
	log_msg(LOG_LEVEL_WARN, "producer %u (connection %llu): %s; disconnecting it",
		pr->id, (unsigned long long)pr->conn, why);
	control_server_disconnect(pr->server, pr->conn);
}

int producers_on_connect(void *arg, uint64_t conn, const struct ucred *peer,
			 char *reason, size_t reason_len)
{
	struct producers *p = ((struct endpoint *)arg)->p;
	(void)conn;
	(void)peer;
	if (!__atomic_load_n(&p->accepting, __ATOMIC_RELAXED)) {
		snprintf(reason, reason_len, "the daemon is shutting down");
		return -ESHUTDOWN;
	}
	return 0;
}

/* The writer's own view of the table: plain reads are fine on its thread.
 * Connection ids are unique within one server, so with the role (one
 * server per role) they name one connection. */
static struct producer *by_conn(struct producers *p, enum producer_role role,
				uint64_t conn)
{
	for (uint32_t i = 0; i < PRODUCERS_MAX; i++)
		if (p->table[i] != NULL && p->table[i]->conn == conn &&
		    p->table[i]->role == role)
			return p->table[i];
	return NULL;
}

/* Issue 41: frees the identities of `uid` (of every uid when `all`) that
 * no connection uses and no live placement names, so that their slots
 * may be taken again: a uid that registered under many names one after
 * another is not locked out. An identity with a placement keeps it (its
 * owner id is in the record, the durable store's too). Placements are
 * made by workers only for a connected producer, and a disconnect waits a
 * grace period before its identity's count of connections drops (under
 * the lock, as here), so none can appear for an identity found idle. The
 * store keeps the freed identity until its slot is taken again
 * (identity_added then replaces it). Cost: one walk of the placement
 * table, only when a registration finds no room. Returns how many. */
static unsigned identities_reclaim(struct producers *p, uid_t uid, bool all)
{
	uint8_t *owned = calloc(IDENTITIES_MAX, 1);
	if (owned == NULL)
		return 0;
	uint32_t cursor = 0;
	uint64_t pid;
	while ((pid = placements_next(p->placements, &cursor)) != 0) {
		const struct placement_record *r = placements_get(p->placements, pid);
		if (r != NULL && r->owner >= 1 && r->owner <= IDENTITIES_MAX)
			owned[r->owner - 1] = 1;
	}
	unsigned freed = 0;
	for (unsigned i = 0; i < IDENTITIES_MAX; i++) {
		struct state_identity *id = &p->identities[i];
		if (!id->used || (!all && id->uid != uid) || id->connections != 0 ||
		    owned[i])
			continue;
		/* Release, partner of the acquire an observer loads `used`
		 * with (client/observe.c): it skips the slot from now on. Its
		 * uid and name stay until the slot is taken again, which
		 * takes a never-used slot first. */
		__atomic_store_n(&id->used, 0, __ATOMIC_RELEASE);
		p->charged[i] = (struct identity_charge){0};
		/* Relaxed, partner of producers_identity_time()'s load: no
		 * connection, so no worker adds to it now. */
		__atomic_store_n(&p->worker_ns[i], 0, __ATOMIC_RELAXED);
		freed++;
	}
	free(owned);
	if (freed > 0)
		log_msg(LOG_LEVEL_INFO, "%u producer identit%s without connection or "
			"placement freed (%s)", freed, freed == 1 ? "y" : "ies",
			all ? "the table was full" : "a uid had the most names");
	return freed;
}

/* The identity (uid, name) for a registration: the one it had, or a new
 * one. Returns its owner id (index + 1), or a negative errno with `why`. */
static int identity_of(struct producers *p, uid_t uid, const char *name,
		       char *why, size_t why_len)
{
	unsigned free_at, of_uid;
	for (int pass = 0;; pass++) {
		unsigned fresh_at = IDENTITIES_MAX;
		free_at = IDENTITIES_MAX;
		of_uid = 0;
		for (unsigned i = 0; i < IDENTITIES_MAX; i++) {
			struct state_identity *id = &p->identities[i];
			if (!id->used) {
				if (free_at == IDENTITIES_MAX)
					free_at = i;
				if (fresh_at == IDENTITIES_MAX && id->uid == 0 &&
				    id->name[0] == '\0')
					fresh_at = i;
				continue;
			}
			if (id->uid != uid)
				continue;
			of_uid++;
			if (strcmp(id->name, name) == 0)
				return (int)i + 1;
		}
		if (fresh_at != IDENTITIES_MAX)
			free_at = fresh_at;
		if ((of_uid < IDENTITIES_PER_UID && free_at != IDENTITIES_MAX) ||
		    pass == 1 ||
		    identities_reclaim(p, uid, free_at == IDENTITIES_MAX) == 0)
			break;
	}
	if (of_uid >= IDENTITIES_PER_UID || free_at == IDENTITIES_MAX) {
		snprintf(why, why_len, "%s: no new producer identity for uid %u "
			 "(name \"%s\"); an identity is freed once no connection "
			 "uses it and no placement names it", of_uid >= IDENTITIES_PER_UID
			 ? "that uid has the most names the daemon keeps for one uid"
			 : "the daemon keeps as many identities as it may",
			 (unsigned)uid, name);
		return -EBUSY;
	}
	/* The seqlock's writer (shm/identity.h): `used` stored last with
	 * release; an observer copying a reused slot's name sees the
	 * generation change rather than a torn name. */
	state_identity_write(&p->identities[free_at], uid, name);
	if (p->persist.identity_added != NULL)
		p->persist.identity_added(p->persist.arg, free_at + 1);
	return (int)free_at + 1;
}

void producers_set_notifier(struct producers *p, producers_notice_fn notice,
			    void *arg)
{
	pthread_mutex_lock(&p->lock);
	p->notice = notice;
	p->notice_arg = arg;
	pthread_mutex_unlock(&p->lock);
}

void producers_set_waker(struct producers *p, void (*wake)(void *), void *arg)
{
	/* Under the lock every request is handled under: once this
	 * returns, no call of the old waker is under way. */
	pthread_mutex_lock(&p->lock);
	p->wake = wake;
	p->wake_arg = arg;
	pthread_mutex_unlock(&p->lock);
}

/* With p->lock held (a request's dispatch). */
void prod_wake_workers(struct producers *p)
{
	if (p->wake != NULL)
		p->wake(p->wake_arg);
}

void prod_handle_register(struct producers *p, enum producer_role role,
			  struct control_server *s, uint64_t conn, uint32_t rid,
			  const void *body, uint32_t len)
{
	if (by_conn(p, role, conn) != NULL) {
		control_server_reply_error(s, conn, rid, EALREADY,
					   "this connection has registered already");
		return;
	}
	struct op_register named = {{0}};
	if (len != 0 && len != sizeof(named)) {
		control_server_reply_error(s, conn, rid, EINVAL,
					   "register: a body of %u bytes; expected 0 or "
					   "%zu (a name)", len, sizeof(named));
		return;
	}
	memcpy(&named, body, len);
	if (len != 0 && memchr(named.name, '\0', sizeof(named.name)) == NULL) {
		control_server_reply_error(s, conn, rid, EINVAL,
					   "register: the name is not NUL-terminated "
					   "within %zu bytes", sizeof(named.name));
		return;
	}
	struct ucred peer;
	char why[256];
	if (control_server_peer(s, conn, &peer) < 0) {
		control_server_reply_error(s, conn, rid, ENOTCONN,
					   "register: the connection has gone");
		return;
	}
	int owner = identity_of(p, peer.uid, named.name, why, sizeof(why));
	if (owner < 0) {
		control_server_reply_error(s, conn, rid, -owner, "%s", why);
		return;
	}
	uint32_t i = 0;
	while (i < PRODUCERS_MAX && p->table[i] != NULL)
		i++;
	if (i == PRODUCERS_MAX) {
		control_server_reply_error(s, conn, rid, ENOSPC,
					   "%u producers registered: the most the "
					   "daemon serves", PRODUCERS_MAX);
		return;
	}
	struct producer *pr = calloc(1, sizeof(*pr));
	char err[256];
	int rc = pr == NULL ? -ENOMEM : 0;
	if (rc == 0) {
		pr->templates = calloc(PRODUCER_TEMPLATES_MAX, sizeof(*pr->templates));
		pr->templates_static = calloc(PRODUCER_TEMPLATES_MAX,
					      sizeof(*pr->templates_static));
	}
	if (rc == 0 && (pr->templates == NULL || pr->templates_static == NULL))
		rc = -ENOMEM;
	if (rc == 0)
		rc = producer_region_create(p->slots, &pr->region, err, sizeof(err));
	else
		snprintf(err, sizeof(err), "out of memory");
	if (rc < 0) {
		if (pr != NULL) {
			free(pr->templates_static);
			free(pr->templates);
			free(pr);
		}
		control_server_reply_error(s, conn, rid, -rc, "%s", err);
		return;
	}
	/* The answer doorbell (include/shmsched/wire.h): attempt_complete
	 * (daemon/attempt.c) rings answer_wait after every answer burst.
	 * Written before the region's fd goes out, so plain. */
	pr->region.notices->answer_bell = 1;
	pr->id = i;
	pr->role = (uint8_t)role;
	pr->owner = (uint32_t)owner;
	/* Relaxed: a figure for observers. */
	__atomic_store_n(&p->identities[owner - 1].connections,
			 p->identities[owner - 1].connections + 1, __ATOMIC_RELAXED);
	pr->conn = conn;
	pr->server = s;
	/* Before the producer has the fd: the indices are the initial ones. */
	ring_guard_init(&pr->submit, pr->region.submit, pr->region.ring_slots,
			RING_GUARD_CONSUMER);
	ring_guard_init(&pr->completion, pr->region.completion,
			pr->region.ring_slots, RING_GUARD_PRODUCER);
	struct op_registered reg = {.n_slots = p->slots, .producer_id = i};
	/* Release, partner of the acquire in producers_get(): workers see a
	 * filled producer. */
	__atomic_store_n(&p->table[i], pr, __ATOMIC_RELEASE);
	/* Relaxed: a bound on the indices workers look at, never below one in
	 * use; the entry itself is published by the release above. A worker
	 * that reads an old bound misses the new producer for one poll. */
	if (i + 1 > p->bound)
		__atomic_store_n(&p->bound, i + 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&p->registered, 1, __ATOMIC_RELAXED);
	prod_wake_workers(p); /* its doorbell, before it can ring */
	log_msg(LOG_LEVEL_INFO, "producer %u registered (%s connection %llu, uid %u, "
		"name \"%s\", %u slots)", i, role == ROLE_ADMIN ? "admin" : "producer",
		(unsigned long long)conn, (unsigned)peer.uid, named.name, p->slots);
	control_server_reply(s, conn, rid, &reg, sizeof(reg),
			     shm_region_fd(pr->region.region));
}

/* The connection's producer, or NULL after refusing the request: a
 * connection registers before anything that needs a producer. */
struct producer *prod_registered(struct producers *p, enum producer_role role,
				 struct control_server *s, uint64_t conn,
				 uint32_t rid, const char *before)
{
	struct producer *pr = by_conn(p, role, conn);
	if (pr == NULL)
		control_server_reply_error(s, conn, rid, EPERM,
					   "register before %s", before);
	return pr;
}

/* Tells waiting pods of a change, once it is visible (workers/queue.h). */
void prod_publish(struct producers *p, struct queue_event ev)
{
	if (p->events != NULL)
		queue_events_publish(p->events, &ev);
}

/* Frees placement `id`'s record, telling the store first (struct
 * producers_persist: its delete must be queued before a worker can reuse
 * the record). */
void prod_forget(struct producers *p, uint64_t id)
{
	if (p->persist.placement_freed != NULL)
		p->persist.placement_freed(p->persist.arg, id);
	placements_free(p->placements, id);
}

/* Tells the owner of the evicted placement `rec` (id), with `message`,
 * through one of its identity's connected producers, if any: a
 * preemption's victims and a drain's evictions alike. */
void prod_tell_evicted(struct producers *p, const struct placement_record *rec,
		       uint64_t id, producers_notice_fn notice, void *arg,
		       const char *message)
{
	if (notice == NULL || rec->owner == PLACEMENT_OWNER_BOUND)
		return;
	for (uint32_t i = 0; i < PRODUCERS_MAX; i++) {
		struct producer *pr = p->table[i];
		if (pr == NULL || pr->owner != rec->owner)
			continue;
		struct evict_notice n = {.producer = i, .key = producers_key(pr)};
		n.notice = (struct shmsched_notice){
			.kind = SHMSCHED_NOTICE_EVICTED,
			.version = SHMSCHED_NOTICE_VERSION,
			.placement_id = id,
			.cookie = rec->cookie,
			.node_id = rec->slot,
			.complete_ns = now_ns(),
		};
		/* EW3: copied, not formatted ("%s" was snprintf's whole
		 * machinery a victim); cut as snprintf would cut it. */
		size_t len = strnlen(message, sizeof(n.notice.message) - 1);
		memcpy(n.notice.message, message, len);
		n.notice.message[len] = '\0';
		notice(arg, &n);
		return;
	}
}

void producers_set_profiles(struct producers *p, const struct sched_config *cfg)
{
	p->profiles = cfg;
}

void producers_set_priority_classes(struct producers *p,
				    struct priority_classes *classes,
				    struct gang_table *gangs, struct pdb_table *pdbs)
{
	p->classes = classes;
	p->gangs = gangs;
	p->pdbs = pdbs;
}

void producers_set_events(struct producers *p, struct queue_events *events)
{
	p->events = events;
}

void producers_set_state(struct producers *p, struct state_meta *meta,
			 const struct producers_persist *persist)
{
	p->meta = meta;
	if (persist != NULL) {
		p->persist = *persist;
		p->resync_hooks = (struct resync_hooks){persist->placement_freed,
							persist->placement_added,
							persist->arg};
	}
}

/* --- Issue 41: the string table's reclaim while the daemon runs ----------
 *
 * A string a producer's template added is tagged with its uid and charged
 * to it (prod_charge_strings); at a start the strings nothing holds are
 * freed (shm/recount.h). While the daemon runs the same is done here,
 * batched: once the strings charged to producers gone since the last
 * reclaim reach a threshold (disconnect_locked), or before a template is
 * refused EDQUOT while any such producer went since (handle_template, one
 * retry). Never per pod, and at most once per gone producer with strings.
 *
 * The writer holds the lock: no other thread interns a string, declares
 * a class, a PodGroup or a PDB, moves a node or preempts. Held, then, is
 * what the start marks (every slot's node, the placement records and
 * their groups, the ledger's term groups), plus what only a running
 * daemon has: the connected producers' templates (every id a pod_spec
 * holds, and its group's), the nodes' groups in the ledger (a use the
 * evictor reserved has no record yet), the PriorityClasses, PodGroups and
 * PDBs declared. A string found by a later lookup of another kind (a
 * node's label equal to a template's) is held by that holder, so marked.
 * The workers' private caches cannot be walked: intern_announce() moves
 * the epoch, the grace period waits until each worker passed a quiescent
 * point, and each engine drops its caches at its next call, before it
 * reads one (workers/engine_sync.c). A pod in flight is a connected
 * producer's (its template is marked): a gone producer's pods were let go
 * by the grace period its disconnection waited, and its waiting pods and
 * preemption requests are dropped unread (the producer's key). Then the
 * unmarked tagged strings are freed (intern_reclaim) and every uid's
 * charge is rebuilt from the tags, as at a start.
 * Cost: O(strings + records + nodes x (labels + groups) + templates x
 * their ids + distinct groups x their size), max_strings / 4 bytes for
 * the while, one grace period; counted and logged. */

struct rmarks {
	const struct intern *strings;
	uint64_t *held, *decoded;
	struct pod_group *g;
	uint32_t count, bad;
};

static void rm_id(struct rmarks *m, uint32_t id)
{
	if (id >= m->count) {
		m->bad++;
		return;
	}
	m->held[id / 64] |= UINT64_C(1) << (id % 64);
}

static void rm_id_void(void *arg, uint32_t id)
{
	rm_id(arg, id);
}

void producers_set_string_holder(struct producers *p, producers_holder_fn fn, void *arg)
{
	pthread_mutex_lock(&p->lock);
	p->string_holder = fn;
	p->string_holder_arg = arg;
	pthread_mutex_unlock(&p->lock);
}

static int rm_id_fn(void *arg, uint32_t *id)
{
	rm_id(arg, *id);
	return 0;
}

static void rm_group(struct rmarks *m, uint32_t id)
{
	m->bad += strings_held_group(m->strings, m->held, m->decoded, id, m->g);
}

/* Every id a template holds (shm/model.h's struct pod_spec). */
static void rm_spec(struct rmarks *m, const struct pod_spec *sp)
{
	rm_id(m, sp->ns_name);
	rm_id(m, sp->priority_class);
	rm_id(m, sp->gang);
	rm_id(m, sp->node_name);
	for (unsigned i = 0; i < sp->n_gpu_models && i < POD_MAX_GPU_MODELS; i++)
		rm_id(m, sp->gpu_models[i]);
	rm_group(m, sp->group);
	for (unsigned i = 0; i < sp->n_selector && i < POD_MAX_SELECTOR; i++) {
		rm_id(m, sp->selector[i].key);
		rm_id(m, sp->selector[i].value);
	}
	for (unsigned i = 0; i < sp->n_exprs && i < POD_MAX_EXPRS; i++)
		rm_id(m, sp->exprs[i].key);
	for (unsigned i = 0; i < sp->n_values && i < POD_MAX_VALUES; i++)
		rm_id(m, sp->values[i]);
	for (unsigned i = 0; i < sp->n_tolerations && i < POD_MAX_TOLERATIONS; i++) {
		rm_id(m, sp->tolerations[i].key);
		rm_id(m, sp->tolerations[i].value);
	}
	for (unsigned i = 0; i < sp->n_ports && i < POD_MAX_PORTS; i++)
		rm_id(m, sp->ports[i].ip);
}

/* The holders only a running daemon has (the note above). */
static void rm_running(struct producers *p, struct rmarks *m)
{
	const struct snapshot *snap = cluster_snapshot(p->cluster);
	struct ledger *l = cluster_ledger(p->cluster);
	struct group_count gc[NODE_MAX_GROUPS];
	for (uint32_t s = 0; s < snap->n_slots; s++) {
		if (!snap->present[s])
			continue;
		unsigned n = ledger_load_groups(ledger_node(l, s), gc);
		for (unsigned i = 0; i < n; i++)
			rm_group(m, gc[i].group);
	}
	for (uint32_t i = 0; i < PRODUCERS_MAX; i++) {
		const struct producer *pr = p->table[i];
		for (uint32_t t = 0; pr != NULL && t < pr->n_templates; t++)
			rm_spec(m, &pr->templates[t]);
	}
	for (uint32_t i = 0; p->classes != NULL && i < p->classes->n &&
			     i < PRIORITY_CLASSES_MAX; i++)
		rm_id(m, p->classes->c[i].name);
	for (uint32_t i = 0; p->gangs != NULL && i < p->gangs->n &&
			     i < GANG_TABLE_MAX; i++)
		rm_id(m, p->gangs->g[i].name);
	for (uint32_t i = 0; p->pdbs != NULL && i < p->pdbs->n &&
			     i < PDB_TABLE_MAX; i++) {
		struct pdb_entry *e = &p->pdbs->e[i];
		rm_id(m, e->name);
		rm_id(m, e->ns);
		(void)pod_group_map_ids(&e->sel, rm_id_fn, m);
	}
	if (p->string_holder != NULL)
		p->string_holder(p->string_holder_arg, rm_id_void, m);
}

/* Every uid's charge, from the tags (as producers_create does). */
static void uid_recharge(struct producers *p)
{
	for (uint32_t i = 0; i < p->n_uid_charged; i++)
		p->uid_charged[i].strings = 0;
	struct uid_rebuild r = {p, entry_share(p->strings), 0};
	intern_tagged(p->strings, uid_rebuild_one, &r);
	/* Every tag is a uid's that is in the list: nothing is allocated. */
}

/* Under the lock, on the control thread, holding no intern mark and not
 * an online RCU reader. Returns 0 or -ENOMEM (nothing freed). */
int prod_strings_reclaim(struct producers *p, const char *why)
{
	uint64_t t0 = now_ns();
	uint32_t max_strings;
	uint64_t arena;
	intern_limits(p->strings, &max_strings, &arena);
	uint32_t count = intern_count(p->strings);
	struct rmarks m = {
		.strings = p->strings,
		.held = calloc((size_t)max_strings / 64 + 1, sizeof(uint64_t)),
		.decoded = calloc((size_t)count / 64 + 1, sizeof(uint64_t)),
		.g = malloc(sizeof(struct pod_group)),
		.count = count,
	};
	int rc = -ENOMEM;
	if (m.held == NULL || m.decoded == NULL || m.g == NULL)
		goto done;
	m.bad = strings_held(p->strings, p->cluster, p->placements, m.held);
	rm_running(p, &m);
	/* Then no thread may keep an unmarked id past its next quiescent
	 * point: the engines drop their caches when they see the epoch. */
	intern_announce(p->strings);
	rcu_synchronize();
	struct intern_reclaim_stats st;
	rc = intern_reclaim(p->strings, m.held, &st);
	if (rc < 0)
		goto done;
	uid_recharge(p);
	p->reclaim_pending = 0;
	/* Relaxed: figures (producers_strings_reclaimed). */
	__atomic_fetch_add(&p->reclaims, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&p->reclaimed, st.freed, __ATOMIC_RELAXED);
	log_msg(LOG_LEVEL_INFO, "string table reclaimed (%s): %u string(s), "
		"%llu bytes freed of %u; %u free entries to reuse; %u damaged "
		"holder(s) skipped; %.3f ms", why, st.freed,
		(unsigned long long)st.freed_bytes, count, st.free, m.bad,
		(double)(now_ns() - t0) / 1e6);
done:
	if (rc < 0)
		log_msg(LOG_LEVEL_WARN, "string table reclaim (%s): out of memory: "
			"nothing freed", why);
	free(m.held);
	free(m.decoded);
	free(m.g);
	return rc;
}

void producers_strings_reclaimed(const struct producers *p, uint64_t *runs,
				 uint64_t *strings)
{
	/* Relaxed: figures. */
	*runs = __atomic_load_n(&p->reclaims, __ATOMIC_RELAXED);
	*strings = __atomic_load_n(&p->reclaimed, __ATOMIC_RELAXED);
}

static void disconnect_locked(struct producers *p, enum producer_role role,
			      uint64_t conn)
{
	struct producer *pr = by_conn(p, role, conn);
	if (pr == NULL)
		return; /* connected, never registered */
	/* Release: pairs with producers_get()'s acquire; a worker that still
	 * sees the old pointer is inside its critical section, which the
	 * grace period below waits out. */
	__atomic_store_n(&p->table[pr->id], NULL, __ATOMIC_RELEASE);
	/* Its placements stay, counted and owned by its identity: its pods
	 * still run. */
	rcu_synchronize();
	int left = ring_guard_pending(&pr->submit);
	if (left < 0)
		log_msg(LOG_LEVEL_INFO, "producer %u gone (connection %llu); its "
			"submit ring's index was impossible",
			pr->id, (unsigned long long)conn);
	else
		log_msg(LOG_LEVEL_INFO, "producer %u gone (connection %llu); %d "
			"submitted pod(s) left unanswered: nobody is there to "
			"read them", pr->id, (unsigned long long)conn, left);
	struct state_identity *who = &p->identities[pr->owner - 1];
	/* Relaxed: a figure for observers. */
	__atomic_store_n(&who->connections, who->connections - 1, __ATOMIC_RELAXED);
	/* Issue 41: what its templates added is its uid's until a reclaim
	 * frees what nothing holds (prod_strings_reclaim). */
	p->reclaim_pending += pr->strings_charged;
	uncharge(p, pr);
	bool had_templates = pr->n_templates > 0;
	producer_free(pr);
	uint64_t after = p->strings_budget < PRODUCERS_RECLAIM_AFTER
			 ? p->strings_budget : PRODUCERS_RECLAIM_AFTER;
	if (p->reclaim_pending > 0 && p->reclaim_pending >= after)
		(void)prod_strings_reclaim(p, "producers gone");
	/* Its templates' compiled results were many arrays of a few tens of
	 * KiB each, from the heap: without a trim, malloc keeps their pages
	 * (issue 41 measured most of a producer's memory staying after it
	 * left). Cost: one walk of the heap's free chunks, per producer
	 * that goes. */
	if (had_templates)
		malloc_trim(0);
	__atomic_fetch_add(&p->gone, 1, __ATOMIC_RELAXED);
}

void producers_on_disconnect(void *arg, uint64_t conn)
{
	const struct endpoint *ep = arg;
	pthread_mutex_lock(&ep->p->lock);
	if (ep->role == ROLE_ADMIN) /* its manager's registration, if any */
		prod_approval_gone(ep->p, conn);
	disconnect_locked(ep->p, ep->role, conn);
	pthread_mutex_unlock(&ep->p->lock);
}

bool producers_is_busy(void *arg, uint64_t conn)
{
	const struct endpoint *ep = arg;
	pthread_mutex_lock(&ep->p->lock);
	struct producer *pr = by_conn(ep->p, ep->role, conn);
	bool busy = false;
	if (pr != NULL) {
		/* Acquire, partners of its worker's release stores in
		 * daemon/serve.c (taken) and daemon/attempt.c (answered):
		 * answered first, so taken >= answered. The
		 * tail is the producer's own (untrusted): moving it only buys
		 * what a request every idle timeout would. */
		uint64_t answered = __atomic_load_n(&pr->answered, __ATOMIC_ACQUIRE);
		uint64_t taken = __atomic_load_n(&pr->taken, __ATOMIC_ACQUIRE);
		uint32_t tail = __atomic_load_n(pr->submit.peer, __ATOMIC_RELAXED);
		busy = taken != answered || ring_guard_pending(&pr->submit) != 0 ||
		       tail != pr->seen_tail || answered != pr->seen_answered;
		pr->seen_tail = tail;
		pr->seen_answered = answered;
	}
	pthread_mutex_unlock(&ep->p->lock);
	return busy;
}
