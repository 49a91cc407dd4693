/* OP_DRAIN (issue 38): one wave of a drain, kubectl drain's semantics
 * (kubernetes/kubectl pkg/drain/drain.go: GetPodsForDeletion, then
 * evictPods' loop over the Eviction API). On the admin socket's control
 * thread, under the producers' lock, so no release, preemption or node
 * event runs meanwhile.
 *
 * The plan covers every named node at once: the live placements on them
 * (current node generation) whose labels the pod selector (if any)
 * selects, in the placement table's order. Before any
 * eviction the whole wave is checked for pods kubectl refuses to delete:
 * a bound pod (no producer manages it: kubectl's unmanaged pod, "use
 * --force") stops the wave unless OP_DRAIN_FORCE. Then each pod in turn:
 *   - selected by no PodDisruptionBudget: evicted;
 *   - by one: evicted while the budget allows a disruption (counted down
 *     here as ingest/pdb.h's table counts it, so one wave never takes
 *     more than the budget allows), else blocked, the budget named (the
 *     Eviction API's 429, on which kubectl waits and asks again);
 *   - by more than one: an error (the Eviction API's 500, "This pod has
 *     more than one PodDisruptionBudget").
 * The timeout ladder (issue 38 item 1), each step named on the pod's line:
 *   1. report: a pod its budget blocks is "blocked", the budget named,
 *      and the CLI's loop asks again until its timeout;
 *   2. AlwaysAllow: an unhealthy pod whose one budget's
 *      spec.unhealthyPodEvictionPolicy is AlwaysAllow is evicted even
 *      when the budget allows no disruption, and the budget is not
 *      counted down (kubernetes pkg/registry/core/pod/storage/eviction.go:
 *      a pod not Ready under AlwaysAllow is deleted, "it doesn't count
 *      towards currentHealthy ... we should not decrement
 *      disruptionsAllowed"). "Unhealthy" here: a placement with a failure
 *      report (OP_FAILURE: shmsched_report_failure, the gateway's POST
 *      /v1/placements/{id}/failure), the daemon's only readiness signal;
 *      the mark lasts as long as the placement (no report says it is
 *      Ready again). IfHealthyBudget (the default) blocks an unhealthy pod
 *      as a healthy one: Kubernetes lets one go when the budget's
 *      currentHealthy >= desiredHealthy, figures the daemon does not keep,
 *      so it takes the cautious side; the line says the pod is unhealthy.
 *      The managers (below) are still asked;
 *   3. force: only unmanaged (bound) pods, and only with OP_DRAIN_FORCE
 *      (above); no flag evicts past a budget.
 * The budgets of a pod are a set of table entries (all PDB_TABLE_MAX told
 * apart, unlike the preemption matcher's 32 bits), found once per group
 * per wave; the wave's nodes are a table by slot, and a line of the
 * report is formatted only while the report has room: a plan of 1,000
 * nodes of 100 pods is two walks of the placement table
 * (bench/drain_bench.c measures it).
 * An eviction is what a preemption does to a victim
 * (producers_preempt.c): the budgets counted down, the owner told by an
 * EVICTED notice through `notice` (the evictor's rings, which take it
 * under this same lock), the record freed (the store told) and its room
 * given back to the node's counters and published to waiting pods. The
 * record is gone after that, so a later wave cannot find it: each
 * producer hears of its placement once.
 * The caller (the CLI) cordons the nodes first and repeats the request
 * until nothing is left, or its timeout.
 *
 * A pod that PDBs allow to go is then put to the managers that approve
 * their pods' disruption (issue 38 item 3, one call:
 * prod_approval_keeps): one that keeps it makes it blocked too, its line
 * saying on whom it waits ("waiting on manager M for pod P: denied").
 *
 * OP_DRAIN_PLACEMENT narrows the wave to one placement, its id in place
 * of the selector: the Eviction API of one pod (the gateway's POST
 * .../pods/{name}/eviction), with the same budget checks, so evicted,
 * blocked or an error of that one pod is the API's 200, 429 or 500.
 *
 * OP_DRAIN_SURGE (issue 38 item 1; no anchor does this: kubectl drain
 * evicts first and leaves the replacement to the pod's controller): a pod
 * that would be evicted is first given a replacement, and is evicted only
 * once the replacement is committed; otherwise it is left, counted
 * blocked (so the caller's loop asks again, and times out if room never
 * comes), its line saying why ("left placement ...: no room for the
 * replacement of pod ns/name: 0/3 nodes are available: ..."). The
 * replacement (surge_place):
 *   - is made from the pod's template: a template of the same
 *     "namespace/name" and pod group held by a connected producer of the
 *     placement's owner (a record keeps no template id; the templates of
 *     a producer gone are gone), with the record's requests (the slot's
 *     extras included), so it takes what the pod took;
 *   - is placed here, on the control thread, by the evaluator's engine
 *     (producers_set_evaluator: this thread's alone, under the lock) and
 *     committed by ledger_reserve, as a worker's commit_pod does
 *     (bind/commit.c: the ledger's same compare-and-swaps, so no overcommit
 *     beside the workers' commits), under the inter-pod lock held the
 *     whole time (T5 in shm/ledger.c: a pod under inter-pod rules is
 *     placed alone, as the resolver's guarded path does), a few attempts
 *     when a worker's commit took the room first;
 *   - never goes to a pool quarantined for its template: the daemon's
 *     exclusion (producers_quarantine.exclude: the pools' NotIn added to
 *     its node affinity, as a worker's place_quarantined does in
 *     daemon/attempt.c), so with room only there the pod is left, its line
 *     naming the quarantine before the engine's reasons; the quarantine's
 *     placements and refusals count workers' attempts only;
 *   - never goes to a node of the wave: the caller cordons them first, so
 *     the NodeUnschedulable filter keeps the replacement off them; a pod
 *     that tolerates the cordon and would land on one is left ("the node
 *     it would go to is being drained");
 *   - is recorded for the same owner with the old pod's cookie
 *     (placements_fill), the store told (persist.placement_added, as a
 *     resync's), and its owner hears SHMSCHED_NOTICE_REPLACED (its id and
 *     node, the old id in replaced_id) before the EVICTED of the old: both
 *     go through `notice` in that order, to the same worker's box.
 * Not replaced (left, the line says which): bound pods (no template), a
 * pod holding a ClusterQueue charge (the replacement would have to be
 * charged on another node's flavor: not done here), a template with
 * NoExecute tolerations (the taint manager learns a placement's
 * tolerations from its worker, daemon/taint_evict.c, which this path does
 * not reach), and no evaluator engine.
 * PodDisruptionBudgets: counted as without --surge. Kubernetes counts a
 * pod toward a budget only once it is Ready, and the daemon has no
 * readiness signal: a replacement placed a moment ago runs nothing yet.
 * So a surge guarantees capacity (the pod's room exists elsewhere before
 * it goes), not availability, and a budget that allows no disruption
 * still blocks a surge drain. A dry run with OP_DRAIN_SURGE places
 * nothing and says "would evict (replacement first)".
 */
#include "ingest/producers_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/control_ops.h"
#include "ingest/control_proto.h"
#include "ingest/control_server.h"
#include "ingest/pdb.h"
#include "base/base.h"
#include "shm/shm.h"
#include "workers/workers.h"

/* The answer's text, at most: one control message less the header. */
#define DRAIN_TEXT_MAX (CONTROL_MAX_PAYLOAD - sizeof(struct op_drained) - 64u)

struct drain_text {
	char *buf;
	size_t len, cap;
	uint32_t cut; /* lines left out */
};

static void text_add(struct drain_text *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void text_add(struct drain_text *t, const char *fmt, ...)
{
	char line[768];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	size_t len = (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1;
	/* Room kept for the last line, which counts what was left out. */
	if (t->cut > 0 || t->len + len + 1 + 64 > t->cap) {
		t->cut++;
		return;
	}
	memcpy(t->buf + t->len, line, len);
	t->len += len;
	t->buf[t->len++] = '\n';
}

static const char *str_or(const struct producers *p, uint32_t id, const char *dflt)
{
	const char *s = id != 0 ? intern_str(p->strings, id) : NULL;
	return s != NULL ? s : dflt;
}

/* The pod's "namespace/name", else its producer's cookie. */
static void pod_of(const struct producers *p, const struct placement_record *r,
		   char *out, size_t len)
{
	const char *name = r->pod_name != 0 ? intern_str(p->strings, r->pod_name) : NULL;
	if (name != NULL)
		snprintf(out, len, "pod %.250s", name);
	else
		snprintf(out, len, "cookie %llu", (unsigned long long)r->cookie);
}

/* "uid U, producer \"NAME\"" of a placement's owner, or "bound" for a bound pod. */
static void owner_of(const struct producers *p, const struct placement_record *r,
		     char *out, size_t len)
{
	if (r->owner == PLACEMENT_OWNER_BOUND || r->owner == 0 ||
	    r->owner > IDENTITIES_MAX) {
		snprintf(out, len, "bound");
		return;
	}
	const struct state_identity *id = &p->identities[r->owner - 1];
	snprintf(out, len, "uid %u, producer \"%.64s\"", (unsigned)id->uid, id->name);
}

/* The budgets (table entries) selecting one group, as a set, remembered
 * for the wave in a direct-mapped cache: a drain looks at many pods of a
 * few groups (a Deployment's replicas share one), and the table holds up
 * to PDB_TABLE_MAX budgets, every one of which a plan must tell apart
 * (the preemption matcher's PDB_CHOICE_MAX bits would block the pods of
 * the 32nd budget on as "one of many"). */
#define DRAIN_GROUP_CACHE 1024u
#define DRAIN_WORDS (PDB_TABLE_MAX / 64u)
struct drain_budgets {
	uint32_t group;
	bool known;
	uint32_t n;                /* budgets in the set */
	uint64_t e[DRAIN_WORDS];
};
struct drain_plan {
	struct pdb_matcher pm;     /* live counts of MIN mode budgets */
	int32_t allowed[PDB_TABLE_MAX];
	struct drain_budgets cache[DRAIN_GROUP_CACHE];
	struct pod_group scratch;
};

static const struct drain_budgets *budgets_of(const struct producers *p,
					       struct drain_plan *pl, uint32_t group)
{
	struct drain_budgets *c = &pl->cache[(group * 2654435761u) >> 22];
	if (c->known && c->group == group)
		return c;
	memset(c, 0, sizeof(*c));
	c->group = group;
	c->known = true;
	const char *s = group != 0 ? intern_str(p->strings, group) : NULL;
	if (p->pdbs == NULL || p->pdbs->n == 0 || s == NULL ||
	    pod_group_decode(s, intern_len(p->strings, group), &pl->scratch) < 0)
		return c;
	for (uint32_t i = 0; i < p->pdbs->n; i++)
		if (pdb_selects(&p->pdbs->e[i], &pl->scratch)) {
			c->e[i / 64] |= UINT64_C(1) << (i % 64);
			c->n++;
		}
	return c;
}

/* No budget: what evict_one counts down for the ladder's AlwaysAllow
 * step, which leaves the budget as it was. */
static const struct drain_budgets no_budgets;

/* The first budget of a set (one with n 1: its only one). */
static uint32_t budgets_first(const struct drain_budgets *b)
{
	for (uint32_t w = 0; w < DRAIN_WORDS; w++)
		if (b->e[w] != 0)
			return w * 64 + (uint32_t)__builtin_ctzll(b->e[w]);
	return 0;
}

/* Evicts placement `id` (record `r`, live on its node, selected by the
 * budgets `b`). The budgets that count down (ALLOWED and MAX_UNAVAILABLE)
 * allow one disruption fewer, as pdb_table_evicted counts them. */
static void evict_one(struct producers *p, const struct drain_budgets *b,
		      uint64_t id, const struct placement_record *r, const char *node,
		      bool one)
{
	static struct pod_spec pod; /* the control thread's alone */
	struct ledger *l = cluster_ledger(p->cluster);
	placement_use(r, &pod);
	uint32_t slot = r->slot;
	struct device_assignment dev = r->dev;
	for (uint32_t w = 0; b->n > 0 && w < DRAIN_WORDS; w++)
		for (uint64_t bits = b->e[w]; bits; bits &= bits - 1) {
			struct pdb_entry *e = &p->pdbs->e[w * 64 +
						(uint32_t)__builtin_ctzll(bits)];
			if (e->mode != K8S_PDB_MIN_AVAILABLE && e->evicted < INT32_MAX)
				e->evicted++;
		}
	char why[SHMSCHED_MESSAGE_MAX];
	snprintf(why, sizeof(why), "evicted by %s node %.150s: what it held is "
		 "given back", one ? "the Eviction API, from" : "a drain of", node);
	prod_tell_evicted(p, r, id, p->notice, p->notice_arg, why);
	ledger_account(l, slot, &pod, &dev, -1);
	prod_forget(p, id);
	prod_publish(p, queue_event_release(slot, &pod, &dev));
}

/* --- OP_DRAIN_SURGE: the replacement placed first (see the top) --- */

/* Commits refused because a worker took the room first, before the pod
 * is left for this wave (the resolver's RESOLVER_MAX_ATTEMPTS). */
#define SURGE_ATTEMPTS 8u

/* The ledger's port rule (C3), as bind/commit.c's ports_free. */
static bool surge_ports_free(const void *arg, const struct pod_spec *pod,
			     const struct host_port *in_use, unsigned n)
{
	struct node_view v = {.ports = in_use, .n_ports = n};
	return filter_ports(arg, pod, &v);
}

/* The template of placement record `r`'s pod: one of the same name and
 * group held by a connected producer of its owner; NULL: none. */
static const struct pod_spec *template_of(struct producers *p,
					  const struct placement_record *r)
{
	for (uint32_t i = 0; i < PRODUCERS_MAX; i++) {
		const struct producer *pr = p->table[i];
		if (pr == NULL || pr->owner != r->owner || producers_faulted(pr))
			continue;
		/* Acquire, partner of the template writer's release store
		 * (producers_templates); that writer holds this same lock. */
		uint32_t n = __atomic_load_n(&pr->n_templates, __ATOMIC_ACQUIRE);
		for (uint32_t k = 0; k < n; k++)
			if (pr->templates[k].ns_name == r->pod_name &&
			    pr->templates[k].group == r->group)
				return &pr->templates[k];
	}
	return NULL;
}

/* Places and commits a replacement of the live placement `r` on a node
 * not in the wave (in_wave[slot] 0), recorded for its owner with its
 * cookie. Returns 0 with its id in *made and its node in *where, or a
 * negative errno with why (for a person) in why[]: -ENOENT (no template),
 * -ENOTSUP (a pod a surge does not replace), -ENOSPC (no room, or no
 * placement record), -EXDEV (only a node of the wave), -ENOMEM. */
static int surge_place(struct producers *p, const struct placement_record *r,
		       const uint8_t *in_wave, const struct snapshot *snap,
		       uint64_t *made, uint32_t *where, char *why, size_t why_len)
{
	static struct pod_spec pod; /* the control thread's, under the lock */
	static uint64_t seq;        /* likewise: the engine's random streams */
	if (r->owner == PLACEMENT_OWNER_BOUND)
		return errmsg_rc(-ENOENT, why, why_len, "a bound pod has no "
				 "template to place a replacement from");
	if (r->quota != 0)
		return errmsg_rc(-ENOTSUP, why, why_len, "it holds a ClusterQueue "
				 "charge, which a surge does not place again");
	if (p->evaluator == NULL)
		return errmsg_rc(-ENOTSUP, why, why_len, "this daemon has no engine "
				 "on its control thread to place replacements");
	const struct pod_spec *tmpl = template_of(p, r);
	if (tmpl == NULL)
		return errmsg_rc(-ENOENT, why, why_len, "no connected producer of "
				 "its owner holds its template");
	for (unsigned i = 0; i < tmpl->n_tolerations; i++)
		if (tmpl->tolerations[i].effect == TAINT_NO_EXECUTE ||
		    tmpl->tolerations[i].effect == TAINT_EFFECT_ALL)
			return errmsg_rc(-ENOTSUP, why, why_len, "its template "
					 "tolerates NoExecute taints, which a "
					 "surge's replacement would not be "
					 "timed by");
	pod = *tmpl;
	pod.request = r->request;
	pod.nonzero_cpu_milli = r->nonzero_cpu_milli;
	pod.nonzero_mem_bytes = r->nonzero_mem_bytes;
	/* The pools quarantined for its template kept out, as a worker's
	 * placement keeps them (the top's note); `pod` stays what is
	 * recorded. */
	static struct pod_spec narrowed; /* likewise the control thread's */
	const struct pod_spec *sp = &pod;
	char held[SHMSCHED_MESSAGE_MAX] = "";
	if (p->quarantine.exclude != NULL &&
	    p->quarantine.exclude(p->quarantine.arg, r->owner, pod.ns_name, &pod,
				  &narrowed, held, sizeof(held)))
		sp = &narrowed;
	struct ledger *l = cluster_ledger(p->cluster);
	int64_t ix = placements_take(p->placements);
	if (ix < 0)
		return errmsg_rc(-ENOSPC, why, why_len, "the daemon holds %u "
				 "placements, the most it keeps (--max-placements)",
				 placements_capacity(p->placements));
	struct placement pl = {0};
	int rc = -ENOSPC;
	/* T5 (shm/ledger.c): placed alone among pods under inter-pod rules,
	 * one with terms announced while it reads others' groups. */
	ledger_interpod_lock(l);
	if (pod.group_terms)
		ledger_interpod_announce(l, +1);
	for (uint32_t a = 0; a < SURGE_ATTEMPTS; a++) {
		rc = engine_place(p->evaluator, sp, seq++, &pl);
		if (rc < 0)
			break;
		if (pl.slot < 0 || (uint64_t)pl.slot >= snap->n_slots) {
			rc = -ENOSPC;
			break;
		}
		if (in_wave[pl.slot]) {
			rc = -EXDEV;
			break;
		}
		rc = pl.devices.gpu_milli == DEVICES_STALE ? -EAGAIN
			: ledger_reserve(l, (uint32_t)pl.slot,
					 &snap->nodes[pl.slot].allocatable, sp,
					 &pl.devices, surge_ports_free, p->ctx);
		if (rc == 0)
			break;
	}
	if (pod.group_terms)
		ledger_interpod_announce(l, -1);
	ledger_interpod_unlock(l);
	if (rc != 0) {
		placements_untake(p->placements, (uint32_t)ix);
		if (rc == -EXDEV)
			return errmsg_rc(rc, why, why_len, "the node it would go to, "
					 "%s, is being drained (cordon the wave's "
					 "nodes first)",
					 str_or(p, snap->nodes[pl.slot].name, "?"));
		if (rc == -ENOMEM)
			return errmsg_rc(rc, why, why_len, "out of memory");
		char msg[SHMSCHED_MESSAGE_MAX] = "";
		if (pl.slot < 0)
			engine_message(p->evaluator, msg, sizeof(msg));
		return errmsg_rc(-ENOSPC, why, why_len, "%s%s%s", held,
				 held[0] ? "; " : "", msg[0] ? msg : "other "
				 "placements took the room first, every attempt");
	}
	*where = (uint32_t)pl.slot;
	*made = placements_fill(p->placements, (uint32_t)ix, r->owner, *where,
				ledger_node_generation(l, *where), &pod,
				&pl.devices, r->cookie);
	/* A placement of its template in that pool, as a worker's counts
	 * (daemon/attempt.c): else a replacement's failure would weigh as
	 * if it had never been placed. */
	if (p->quarantine.placed != NULL)
		p->quarantine.placed(p->quarantine.arg, r->owner, pod.ns_name,
				     &snap->nodes[*where]);
	/* Under the lock: no release of it can run before the store hears it. */
	if (p->persist.placement_added != NULL)
		p->persist.placement_added(p->persist.arg, *made);
	return 0;
}

/* Tells the owner of `old` (id old_id) that placement `made` on node
 * `where` replaces it: before its EVICTED, through the same `notice`. */
static void tell_replaced(struct producers *p, const struct placement_record *old,
			  uint64_t old_id, uint64_t made, uint32_t where,
			  const char *node, const char *to)
{
	if (p->notice == NULL)
		return;
	for (uint32_t i = 0; i < PRODUCERS_MAX; i++) {
		const struct producer *pr = p->table[i];
		if (pr == NULL || pr->owner != old->owner)
			continue;
		struct evict_notice n = {.producer = i, .key = producers_key(pr)};
		n.notice = (struct shmsched_notice){
			.kind = SHMSCHED_NOTICE_REPLACED,
			.version = SHMSCHED_NOTICE_VERSION,
			.placement_id = made,
			.cookie = old->cookie,
			.node_id = where,
			.complete_ns = now_ns(),
			.replaced_id = old_id,
		};
		snprintf(n.notice.message, sizeof(n.notice.message), "placed on "
			 "node %.80s to replace its pod on node %.80s, which a "
			 "drain evicts next", to, node);
		p->notice(p->notice_arg, &n);
		return;
	}
}

/* Whether the report has room for one more line; counts it as left out
 * when not, so a wave of 100,000 pods formats only the lines it keeps. */
static bool text_room(struct drain_text *t)
{
	if (t->cut == 0 && t->len + 1 + 64 < t->cap)
		return true;
	t->cut++;
	return false;
}

/* OP_DRAIN_PLACEMENT's selector: a placement id, decimal, from 1, with
 * nothing else. 0 or -EINVAL. */
static int placement_id_parse(const char *s, size_t len, uint64_t *out)
{
	uint64_t v = 0;
	if (len == 0 || len > 20)
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
		uint64_t d = (uint64_t)(s[i] - '0');
		if (v > (UINT64_MAX - d) / 10)
			return -EINVAL;
		v = v * 10 + d;
	}
	if (v == 0)
		return -EINVAL;
	*out = v;
	return 0;
}

void prod_handle_drain(struct producers *p, struct control_server *s,
		       uint64_t conn, uint32_t rid, uint32_t flags,
		       const void *body, uint32_t len)
{
	struct control_drain q;
	int64_t slots[OP_DRAIN_NODES_MAX];
	struct drain_plan *pl = NULL;
	struct op_drained *ans = NULL;
	uint8_t *in_wave = NULL; /* [snapshot slots]: 1 for the wave's nodes */
	if (flags & ~(uint32_t)(OP_DRAIN_DRY_RUN | OP_DRAIN_FORCE |
				OP_DRAIN_PLACEMENT | OP_DRAIN_SURGE)) {
		control_server_reply_error(s, conn, rid, EINVAL, "drain: flags %#x: "
					   "expected DRY_RUN (1), FORCE (2), "
					   "PLACEMENT (4) and SURGE (8) only", flags);
		return;
	}
	char err[512];
	if (control_drain_split(body, len, &q, err, sizeof(err)) < 0) {
		control_server_reply_error(s, conn, rid, EINVAL, "%s", err);
		return;
	}
	for (uint32_t i = 0; i < q.n; i++) {
		uint32_t name;
		if (!intern_find(p->strings, q.name[i], q.len[i], &name) ||
		    (slots[i] = cluster_slot_of(p->cluster, name)) < 0) {
			control_server_reply_error(s, conn, rid, ENOENT, "drain: node "
						   "%.*s: no such node",
						   (int)(q.len[i] > 253 ? 253 : q.len[i]),
						   q.name[i]);
			return;
		}
	}
	struct prod_selector sel = {0};
	uint64_t only = 0; /* OP_DRAIN_PLACEMENT: the one placement */
	if ((flags & OP_DRAIN_PLACEMENT) &&
	    placement_id_parse(q.selector, q.selector_len, &only) < 0) {
		control_server_reply_error(s, conn, rid, EINVAL, "drain: placement "
					   "\"%.*s\": expected a placement id (a "
					   "decimal number from 1)",
					   (int)(q.selector_len > 64 ? 64 : q.selector_len),
					   q.selector);
		return;
	}
	if (!(flags & OP_DRAIN_PLACEMENT) &&
	    prod_selector_parse(p, "drain: pod selector", q.selector,
				q.selector_len, &sel, err, sizeof(err)) < 0) {
		control_server_reply_error(s, conn, rid, EINVAL, "%s", err);
		return;
	}
	pl = calloc(1, sizeof(*pl));
	ans = malloc(sizeof(*ans) + DRAIN_TEXT_MAX);
	const struct snapshot *snap = cluster_snapshot(p->cluster);
	in_wave = pl != NULL ? calloc(snap->n_slots + 1u, 1) : NULL;
	if (pl == NULL || ans == NULL || in_wave == NULL) {
		control_server_reply_error(s, conn, rid, ENOMEM, "drain: out of memory");
		goto cleanup;
	}
	for (uint32_t i = 0; i < q.n; i++)
		if ((uint64_t)slots[i] < snap->n_slots)
			in_wave[slots[i]] = 1;
	*ans = (struct op_drained){0};
	struct drain_text t = {.buf = (char *)(ans + 1), .cap = DRAIN_TEXT_MAX};
	bool dry = flags & OP_DRAIN_DRY_RUN, force = flags & OP_DRAIN_FORCE;
	bool surge = flags & OP_DRAIN_SURGE;
	struct ledger *l = cluster_ledger(p->cluster);
	struct pdb_matcher *pm = &pl->pm;
	pdb_matcher_init(pm, p->pdbs, p->strings);
	bool counting = pdb_matcher_counts(pm);
	/* First walk: the budgets' view (minAvailable counts every live pod
	 * it selects, on any node) and the wave's unmanaged pods. Skipped
	 * when neither can matter: no MIN mode budget, and FORCE. */
	uint32_t cursor = 0;
	uint64_t id;
	while ((counting || !force) &&
	       (id = placements_next(p->placements, &cursor)) != 0) {
		const struct placement_record *r = placements_get(p->placements, id);
		if (r == NULL || !ledger_slot_current(l, snap, r->slot, r->node_gen))
			continue;
		if (counting)
			pdb_matcher_count(pm, r->group);
		if (r->owner != PLACEMENT_OWNER_BOUND || force ||
		    r->slot >= snap->n_slots || !in_wave[r->slot] ||
		    (only != 0 && id != only) || !prod_selector_matches(p, &sel, r->group))
			continue;
		ans->unmanaged++;
		if (text_room(&t)) {
			char pod[280];
			pod_of(p, r, pod, sizeof(pod));
			text_add(&t, "refused placement %llu (%s, node %s): a bound "
				 "pod that no producer manages; --force evicts it",
				 (unsigned long long)id, pod,
				 str_or(p, snap->nodes[r->slot].name, "?"));
		}
	}
	if (ans->unmanaged > 0)
		goto answer; /* kubectl deletes nothing then */
	/* Each budget's disruptions allowed now (pdb.h). */
	for (uint32_t i = 0; p->pdbs != NULL && i < p->pdbs->n; i++) {
		const struct pdb_entry *e = &p->pdbs->e[i];
		int32_t a = e->mode == K8S_PDB_MIN_AVAILABLE ? pm->live[i] - e->value
			: e->value - e->evicted;
		pl->allowed[i] = a > 0 ? a : 0;
	}
	/* Second walk: the wave, in order. Records freed by it are behind the
	 * cursor. */
	cursor = 0;
	while ((id = placements_next(p->placements, &cursor)) != 0) {
		const struct placement_record *r = placements_get(p->placements, id);
		if (r == NULL || r->slot >= snap->n_slots || !in_wave[r->slot] ||
		    (only != 0 && id != only) ||
		    !ledger_slot_current(l, snap, r->slot, r->node_gen) ||
		    !prod_selector_matches(p, &sel, r->group))
			continue;
		const char *node = str_or(p, snap->nodes[r->slot].name, "?");
		char pod[280], owner[96];
		const struct drain_budgets *b = budgets_of(p, pl, r->group);
		if (b->n > 1) {
			ans->errors++;
			if (!text_room(&t))
				continue;
			char which[512] = "";
			size_t w = 0;
			for (uint32_t i = 0; i < p->pdbs->n && w < sizeof(which) - 1; i++) {
				if (!(b->e[i / 64] & (UINT64_C(1) << (i % 64))))
					continue;
				int k = snprintf(which + w, sizeof(which) - w, "%s%s",
						 w ? ", " : "",
						 str_or(p, p->pdbs->e[i].name, "?"));
				w += k > 0 ? (size_t)k : 0;
			}
			pod_of(p, r, pod, sizeof(pod));
			owner_of(p, r, owner, sizeof(owner));
			text_add(&t, "error placement %llu (%s, node %s, owner %s): "
				 "selected by %u PodDisruptionBudgets (%s); the Eviction "
				 "API refuses a pod with more than one (500)",
				 (unsigned long long)id, pod, node, owner, b->n, which);
			continue;
		}
		/* The ladder's AlwaysAllow step (see the top): an unhealthy pod
		 * past its spent budget, when the budget says so. */
		uint32_t bi = b->n == 1 ? budgets_first(b) : 0;
		bool unhealthy_step = b->n == 1 && pl->allowed[bi] <= 0 &&
				      p->pdbs->e[bi].unhealthy == K8S_PDB_ALWAYS_ALLOW &&
				      prod_unhealthy(p, id);
		/* KEP-4563's interceptors: the managers that registered for the
		 * pod decide first (ingest/producers_approval.c). */
		char wait[640];
		if (!dry && (b->n == 0 || pl->allowed[bi] > 0 || unhealthy_step) &&
		    prod_approval_keeps(p, id, r, node, OP_APPROVAL_DRAIN, wait,
					sizeof(wait))) {
			ans->blocked++;
			if (!text_room(&t))
				continue;
			pod_of(p, r, pod, sizeof(pod));
			owner_of(p, r, owner, sizeof(owner));
			text_add(&t, "waiting placement %llu (%s, node %s, owner %s): "
				 "%s", (unsigned long long)id, pod, node, owner, wait);
			continue;
		}
		if (b->n == 1 && !unhealthy_step) {
			uint32_t i = bi;
			if (pl->allowed[i] <= 0) {
				const struct pdb_entry *e = &p->pdbs->e[i];
				ans->blocked++;
				if (!text_room(&t))
					continue;
				pod_of(p, r, pod, sizeof(pod));
				owner_of(p, r, owner, sizeof(owner));
				text_add(&t, "blocked placement %llu (%s, node %s, owner "
					 "%s): PodDisruptionBudget %s allows no more "
					 "disruptions now (declared %d, evicted %d since; "
					 "declare it again, or place its pods elsewhere)%s",
					 (unsigned long long)id, pod, node, owner,
					 str_or(p, e->name, "?"), e->value, e->evicted,
					 prod_unhealthy(p, id) ? "; unhealthy (a failure "
					 "reported), but the budget's unhealthyPodEviction"
					 "Policy is IfHealthyBudget" : "");
				continue;
			}
		}
		/* --surge: the replacement first; none, and the pod stays. */
		uint64_t made = 0;
		uint32_t where = 0;
		char why[SHMSCHED_MESSAGE_MAX];
		int src = surge && !dry ? surge_place(p, r, in_wave, snap, &made,
						      &where, why, sizeof(why)) : 0;
		if (src < 0) {
			ans->blocked++;
			if (!text_room(&t))
				continue;
			pod_of(p, r, pod, sizeof(pod));
			owner_of(p, r, owner, sizeof(owner));
			text_add(&t, "left placement %llu (%s, node %s, owner %s): %s "
				 "%s: %s", (unsigned long long)id, pod, node, owner,
				 src == -ENOSPC || src == -EXDEV ? "no room for the "
				 "replacement of" : "no replacement (--surge) for",
				 pod, why);
			continue;
		}
		/* eviction.go: an unhealthy pod's eviction "should not
		 * decrement disruptionsAllowed". */
		if (b->n == 1 && !unhealthy_step)
			pl->allowed[bi]--;
		ans->evicted++;
		const char *to = made != 0 ? str_or(p, snap->nodes[where].name, "?") : "";
		if (text_room(&t)) {
			pod_of(p, r, pod, sizeof(pod));
			owner_of(p, r, owner, sizeof(owner));
			char rep[640] = "";
			if (made != 0)
				snprintf(rep, sizeof(rep), ", replaced by placement "
					 "%llu on node %.250s", (unsigned long long)made, to);
			if (unhealthy_step) {
				size_t k = strlen(rep);
				snprintf(rep + k, sizeof(rep) - k, ": unhealthy (a "
					 "failure reported), past PodDisruptionBudget "
					 "%.250s, which allows no more disruptions: its "
					 "unhealthyPodEvictionPolicy is AlwaysAllow",
					 str_or(p, p->pdbs->e[bi].name, "?"));
			}
			text_add(&t, "%s placement %llu (%s, node %s, owner %s)%s",
				 dry ? (surge ? "would evict (replacement first)"
					: "would evict") : "evicted",
				 (unsigned long long)id, pod, node, owner, rep);
		}
		if (made != 0)
			tell_replaced(p, r, id, made, where, node, to);
		if (!dry)
			evict_one(p, unhealthy_step ? &no_budgets : b, id, r, node,
				  only != 0);
	}
answer:
	if (t.cut > 0) {
		char more[64];
		int n = snprintf(more, sizeof(more), "... and %u more\n", t.cut);
		memcpy(t.buf + t.len, more, (size_t)n);
		t.len += (size_t)n;
	}
	ans->text_bytes = (uint32_t)t.len;
	control_server_reply(s, conn, rid, ans, (uint32_t)(sizeof(*ans) + t.len), -1);
cleanup:
	free(in_wave);
	free(ans);
	free(pl);
}
