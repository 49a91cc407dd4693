/* The managers' registrations and the asks posted to them (issue 38
 * item 3). KEP-4563 (kubernetes/enhancements
 * keps/sig-apps/4563-eviction-request-api, "Pod and Interceptor" and
 * "Eviction Request Controller") lets an application's controller, the
 * pod's interceptor, act before a pod is evicted, and has the controller
 * fall back to the Eviction API when the interceptor stops reporting
 * progress (.spec.heartbeatDeadlineSeconds): here a registration's
 * deadline with fail-open is that fall-back; fail-closed (LinkedIn's
 * managers: the application's word is final) keeps the pod and reports.
 *
 * Design: two fixed tables, APPROVAL_REGS_MAX registrations and
 * APPROVAL_ASKS_MAX asks, scanned linearly (a drain asks about each pod
 * of its wave once a wave; a few hundred entries at most). An ask is
 * keyed by (the registration's connection, the placement) and lives until
 * the pod is disrupted (approval_disrupted), its registration goes
 * (approval_drop), or no drain has looked at it for APPROVAL_ASK_STALE_NS
 * (pruned by the scan that looks for it). Ask ids only grow, so a late
 * answer can never reach a newer ask. Every decision is logged (INFO) and
 * counted.
 *
 * Threads: none of its own; every call is under the producers' lock.
 */
#include "ingest/approval.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"

enum ask_state {
	ASK_FREE = 0,
	ASK_PENDING,
	ASK_GRANTED,
	ASK_DENIED,
	ASK_NOT_BEFORE,
};

struct ask {
	uint64_t id;        /* 0: free */
	uint64_t conn;      /* its registration's connection */
	uint32_t reg;       /* index in regs[] */
	uint32_t reason;
	uint64_t placement;
	uint8_t state;      /* enum ask_state */
	bool timeout_told;  /* the deadline's passing logged and counted */
	uint64_t asked_ns, until_ns, seen_ns;
	/* When its verdict next changes with time (a deadline, a hold's or
	 * a not-before's end), for approval_due; 0: told, or never. */
	uint64_t wake_ns;
	bool answered;      /* answered since approval_due last told it */
	uint8_t askers;     /* 1 << each enum op_approval_reason that asked */
	char pod[256], node[256];
};

struct approval {
	struct approval_reg regs[APPROVAL_REGS_MAX];
	struct ask asks[APPROVAL_ASKS_MAX];
	uint32_t next_reg;
	uint64_t next_ask;
	struct approval_stats st;
};

/* by_asker[]'s entry for `reason` (an unknown one: the drain's). */
static struct approval_counts *asker(struct approval *a, uint32_t reason)
{
	uint32_t k = reason >= 1 && reason <= APPROVAL_ASKERS ? reason - 1 : 0;
	return &a->st.by_asker[k];
}

static const char *reason_name(uint32_t reason)
{
	return reason == OP_APPROVAL_DRAIN ? "drain" :
	       reason == OP_APPROVAL_RECLAIM ? "reclaim" :
	       reason == OP_APPROVAL_PREEMPT ? "preempt" : "?";
}

struct approval *approval_create(void)
{
	struct approval *a = calloc(1, sizeof(*a));
	if (a != NULL) {
		a->next_reg = 1;
		a->next_ask = 1;
	}
	return a;
}

void approval_free(struct approval *a)
{
	free(a);
}

int approval_register(struct approval *a, uint64_t conn,
		      const struct control_approval_register *r, uint32_t *id,
		      char *err, size_t err_len)
{
	struct approval_reg *free_one = NULL;
	for (uint32_t i = 0; i < APPROVAL_REGS_MAX; i++) {
		struct approval_reg *g = &a->regs[i];
		if (g->conn == conn)
			return errmsg_rc(-EEXIST, err, err_len, "approval: this "
					 "connection holds registration %u (%s) "
					 "already; one a connection", g->id, g->name);
		if (g->conn == 0 && free_one == NULL)
			free_one = g;
	}
	if (free_one == NULL)
		return errmsg_rc(-ENOSPC, err, err_len, "approval: registration %s "
				 "refused: %u registrations already, the most the "
				 "daemon holds (APPROVAL_REGS_MAX)", r->name,
				 APPROVAL_REGS_MAX);
	struct approval_reg *g = free_one;
	*g = (struct approval_reg){.conn = conn, .id = a->next_reg++,
				   .selector_len = r->selector_len,
				   .deadline_ns = (uint64_t)r->deadline_ms * 1000000u,
				   .fail_open = r->fail_open, .reclaim = r->reclaim,
				   .preempt = r->preempt};
	snprintf(g->name, sizeof(g->name), "%s", r->name);
	memcpy(g->selector, r->selector, r->selector_len);
	g->selector[r->selector_len] = '\0';
	a->st.registrations++;
	*id = g->id;
	log_msg(LOG_LEVEL_INFO, "approval: manager %s registered (registration %u, "
		"selector \"%s\", deadline %u ms, fail-%s, asked by the drain%s%s)",
		g->name, g->id, g->selector, r->deadline_ms,
		g->fail_open ? "open" : "closed", g->reclaim ? ", quota reclaim" : "",
		g->preempt ? ", preemption" : "");
	return 0;
}

bool approval_drop(struct approval *a, uint64_t conn)
{
	if (a == NULL || conn == 0)
		return false;
	for (uint32_t i = 0; i < APPROVAL_REGS_MAX; i++) {
		struct approval_reg *g = &a->regs[i];
		if (g->conn != conn)
			continue;
		uint32_t dropped = 0;
		for (uint32_t k = 0; k < APPROVAL_ASKS_MAX; k++)
			if (a->asks[k].id != 0 && a->asks[k].conn == conn) {
				a->asks[k] = (struct ask){0};
				dropped++;
			}
		log_msg(LOG_LEVEL_INFO, "approval: manager %s gone (registration %u): "
			"its registration dropped with %u asks", g->name, g->id,
			dropped);
		*g = (struct approval_reg){0};
		a->st.registrations--;
		return true;
	}
	return false;
}

const struct approval_reg *approval_reg_at(const struct approval *a, uint32_t i)
{
	return i < APPROVAL_REGS_MAX ? &a->regs[i] : NULL;
}

/* The ask of (conn, placement), or NULL; forgets stale asks on the way
 * and leaves a free entry (or NULL) in *room. */
static struct ask *find(struct approval *a, uint64_t conn, uint64_t placement,
			uint64_t now, struct ask **room)
{
	struct ask *found = NULL;
	*room = NULL;
	for (uint32_t k = 0; k < APPROVAL_ASKS_MAX; k++) {
		struct ask *q = &a->asks[k];
		if (q->id != 0 && now > q->seen_ns &&
		    now - q->seen_ns > APPROVAL_ASK_STALE_NS) {
			log_msg(LOG_LEVEL_INFO, "approval: ask %" PRIu64 " (%s) "
				"forgotten: no drain asked after it for %" PRIu64
				" s", q->id, q->pod, APPROVAL_ASK_STALE_NS / 1000000000u);
			*q = (struct ask){0};
		}
		if (q->id == 0) {
			if (*room == NULL)
				*room = q;
			continue;
		}
		if (q->conn == conn && q->placement == placement)
			found = q;
	}
	return found;
}

static void post(struct approval *a, struct ask *q, const struct approval_reg *g,
		 uint64_t now, bool again)
{
	q->id = a->next_ask++;
	q->state = ASK_PENDING;
	q->timeout_told = false;
	q->asked_ns = now;
	q->until_ns = 0;
	q->wake_ns = now + g->deadline_ns;
	a->st.asked++;
	asker(a, q->reason)->asked++;
	log_msg(LOG_LEVEL_INFO, "approval: %s manager %s (registration %u) for "
		"%s on node %s (%s): ask %" PRIu64, again ? "asked again" : "asked",
		g->name, g->id, q->pod, q->node, reason_name(q->reason), q->id);
}

/* Ask q's deadline passed unanswered: logged and counted, once. */
static void tell_timeout(struct approval *a, struct ask *q,
			 const struct approval_reg *g)
{
	if (q->timeout_told)
		return;
	q->timeout_told = true;
	if (g->fail_open) {
		a->st.timed_out_open++;
		asker(a, q->reason)->timed_out_open++;
	} else {
		a->st.timed_out_closed++;
		asker(a, q->reason)->timed_out_closed++;
	}
	log_msg(LOG_LEVEL_WARN, "approval: manager %s (registration %u) gave "
		"no answer to ask %" PRIu64 " (%s, %s) in %" PRIu64 " ms: fail-%s, %s",
		g->name, g->id, q->id, q->pod, reason_name(q->reason),
		g->deadline_ns / 1000000u, g->fail_open ? "open" : "closed",
		g->fail_open ? "disrupted" : "kept");
}

static uint64_t secs_up(uint64_t ns)
{
	return (ns + 999999999u) / 1000000000u;
}

enum approval_outcome approval_decide(struct approval *a, uint32_t i,
				      uint64_t placement, uint32_t reason,
				      const char *pod, const char *node,
				      uint64_t now, char *why, size_t why_len)
{
	const struct approval_reg *g = &a->regs[i];
	struct ask *room;
	struct ask *q = find(a, g->conn, placement, now, &room);
	if (q == NULL && room == NULL) {
		/* No room to ask: what the deadline would do. */
		if (g->fail_open) {
			a->st.timed_out_open++;
			asker(a, reason)->timed_out_open++;
			log_msg(LOG_LEVEL_WARN, "approval: no room to ask manager %s "
				"for %s (%u asks outstanding): fail-open, disrupted",
				g->name, pod, APPROVAL_ASKS_MAX);
			snprintf(why, why_len, "manager %s not asked (%u asks "
				 "outstanding): fail-open", g->name, APPROVAL_ASKS_MAX);
			return APPROVAL_EVICT;
		}
		/* Not counted: the next wave would count it again. */
		snprintf(why, why_len, "waiting on manager %s for %s: not asked (%u "
			 "asks outstanding), fail-closed: kept", g->name, pod,
			 APPROVAL_ASKS_MAX);
		return APPROVAL_KEEP;
	}
	if (q == NULL) {
		q = room;
		*q = (struct ask){.conn = g->conn, .reg = i, .reason = reason,
				  .placement = placement};
		snprintf(q->pod, sizeof(q->pod), "%s", pod);
		snprintf(q->node, sizeof(q->node), "%s", node);
		post(a, q, g, now, false);
	}
	q->askers |= (uint8_t)(1u << (reason & 7u));
	q->seen_ns = now;
	switch (q->state) {
	case ASK_GRANTED:
		snprintf(why, why_len, "granted by manager %s", g->name);
		return APPROVAL_EVICT;
	case ASK_NOT_BEFORE:
		if (now >= q->until_ns) {
			snprintf(why, why_len, "manager %s's not-before passed", g->name);
			return APPROVAL_EVICT;
		}
		snprintf(why, why_len, "waiting on manager %s for %s: until %" PRIu64
			 " s from now", g->name, q->pod, secs_up(q->until_ns - now));
		return APPROVAL_KEEP;
	case ASK_DENIED:
		if (now < q->until_ns) {
			snprintf(why, why_len, "waiting on manager %s for %s: denied",
				 g->name, q->pod);
			return APPROVAL_KEEP;
		}
		post(a, q, g, now, true);
		break;
	default:
		break;
	}
	/* PENDING */
	uint64_t waited = now - q->asked_ns;
	if (waited < g->deadline_ns) {
		snprintf(why, why_len, "waiting on manager %s for %s: asked (ask %"
			 PRIu64 "), no answer yet, %" PRIu64 " s to its deadline",
			 g->name, q->pod, q->id, secs_up(g->deadline_ns - waited));
		return APPROVAL_KEEP;
	}
	tell_timeout(a, q, g);
	if (g->fail_open) {
		snprintf(why, why_len, "manager %s gave no answer by its deadline: "
			 "fail-open", g->name);
		return APPROVAL_EVICT;
	}
	snprintf(why, why_len, "waiting on manager %s for %s: no answer by its "
		 "deadline (%" PRIu64 " ms), fail-closed: kept", g->name, q->pod,
		 g->deadline_ns / 1000000u);
	return APPROVAL_KEEP;
}

/* Whether ask q of registration g bars its pod at `now`. */
static bool bars(const struct approval_reg *g, const struct ask *q, uint64_t now)
{
	switch (q->state) {
	case ASK_DENIED:
	case ASK_NOT_BEFORE:
		return now < q->until_ns;
	case ASK_PENDING:
		return !g->fail_open && now - q->asked_ns >= g->deadline_ns;
	default:
		return false;
	}
}

bool approval_bars(const struct approval *a, uint32_t i, uint64_t placement,
		   uint64_t now)
{
	const struct approval_reg *g = &a->regs[i];
	for (uint32_t k = 0; k < APPROVAL_ASKS_MAX; k++) {
		const struct ask *q = &a->asks[k];
		if (q->id != 0 && q->conn == g->conn && q->placement == placement)
			return bars(g, q, now);
	}
	return false;
}

uint32_t approval_barred(const struct approval *a, uint32_t i, uint64_t now,
			 uint64_t *out, uint32_t max)
{
	const struct approval_reg *g = &a->regs[i];
	uint32_t n = 0;
	for (uint32_t k = 0; k < APPROVAL_ASKS_MAX && n < max; k++) {
		const struct ask *q = &a->asks[k];
		if (q->id != 0 && q->conn == g->conn && bars(g, q, now))
			out[n++] = q->placement;
	}
	return n;
}

uint32_t approval_due(struct approval *a, uint64_t now, uint64_t *out,
		      uint32_t *askers, uint32_t max)
{
	uint32_t n = 0;
	for (uint32_t k = 0; k < APPROVAL_ASKS_MAX && n < max; k++) {
		struct ask *q = &a->asks[k];
		if (q->id == 0 || (q->askers & ~(1u << OP_APPROVAL_DRAIN)) == 0)
			continue; /* the drain's alone: its waves read it */
		bool timed = q->wake_ns != 0 && now >= q->wake_ns;
		if (!timed && !q->answered)
			continue;
		if (timed)
			q->wake_ns = 0;
		/* A deadline passed: told now, whether or not the choice
		 * comes back to this pod (fail-closed: it will not). */
		if (timed && q->state == ASK_PENDING)
			tell_timeout(a, q, &a->regs[q->reg]);
		q->answered = false;
		out[n] = q->placement;
		askers[n] = q->askers;
		n++;
	}
	return n;
}

void approval_disrupted(struct approval *a, uint64_t placement)
{
	for (uint32_t k = 0; k < APPROVAL_ASKS_MAX; k++)
		if (a->asks[k].id != 0 && a->asks[k].placement == placement)
			a->asks[k] = (struct ask){0};
}

int approval_answer(struct approval *a, uint64_t conn,
		    const struct op_approval_answer *ans, uint64_t now,
		    char *err, size_t err_len)
{
	struct ask *q = NULL;
	for (uint32_t k = 0; k < APPROVAL_ASKS_MAX && q == NULL; k++)
		if (a->asks[k].id == ans->ask_id)
			q = &a->asks[k];
	if (q == NULL)
		return errmsg_rc(-ENOENT, err, err_len, "approval answer: no ask %"
				 PRIu64 " (its pod disrupted or gone, or its "
				 "registration dropped)", ans->ask_id);
	if (q->conn != conn)
		return errmsg_rc(-EPERM, err, err_len, "approval answer: ask %" PRIu64
				 " is another registration's", ans->ask_id);
	const struct approval_reg *g = &a->regs[q->reg];
	const char *what;
	switch (ans->verdict) {
	case OP_APPROVAL_GRANT:
		q->state = ASK_GRANTED;
		q->wake_ns = 0;
		a->st.granted++;
		asker(a, q->reason)->granted++;
		what = "granted";
		break;
	case OP_APPROVAL_DENY:
		/* A deny holds one deadline; then the next wave asks again. */
		q->state = ASK_DENIED;
		q->until_ns = now + g->deadline_ns;
		q->wake_ns = q->until_ns;
		a->st.denied++;
		asker(a, q->reason)->denied++;
		what = "denied";
		break;
	default:
		q->state = ASK_NOT_BEFORE;
		q->until_ns = now + (uint64_t)ans->not_before_ms * 1000000u;
		q->wake_ns = q->until_ns;
		a->st.not_before++;
		asker(a, q->reason)->not_before++;
		what = "not before";
		break;
	}
	q->answered = true; /* approval_due wakes its asker */
	char extra[48] = "";
	if (ans->verdict == OP_APPROVAL_NOT_BEFORE)
		snprintf(extra, sizeof(extra), " %u ms from now", ans->not_before_ms);
	log_msg(LOG_LEVEL_INFO, "approval: manager %s (registration %u) %s%s ask %"
		PRIu64 " (%s on node %s)", g->name, g->id, what, extra, q->id,
		q->pod, q->node);
	return 0;
}

uint32_t approval_pending(const struct approval *a, uint64_t conn,
			  struct op_approval_ask *out, uint32_t max,
			  uint32_t *more)
{
	uint32_t n = 0;
	*more = 0;
	for (uint32_t k = 0; k < APPROVAL_ASKS_MAX; k++) {
		const struct ask *q = &a->asks[k];
		if (q->id == 0 || q->conn != conn || q->state != ASK_PENDING)
			continue;
		if (n == max) {
			(*more)++;
			continue;
		}
		struct op_approval_ask *o = &out[n++];
		*o = (struct op_approval_ask){.ask_id = q->id,
					      .placement_id = q->placement,
					      .reason = q->reason};
		snprintf(o->pod, sizeof(o->pod), "%s", q->pod);
		snprintf(o->node, sizeof(o->node), "%s", q->node);
	}
	return n;
}

void approval_stats(const struct approval *a, struct approval_stats *out)
{
	if (a == NULL)
		*out = (struct approval_stats){0};
	else
		*out = a->st;
}
