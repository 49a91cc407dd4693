/* OP_APPROVAL (issue 38 item 3): managers that approve the voluntary
 * disruption of their pods, KEP-4563's interceptors (kubernetes/
 * enhancements keps/sig-apps/4563-eviction-request-api). The table and
 * its rules are ingest/approval.c's; here: the op's handler on the admin
 * socket, a connection's end, and the drain's one question.
 *
 * Why a poll model and not the daemon asking: a drain's wave runs on the
 * admin socket's one server thread under the producers' lock
 * (ingest/producers_drain.c), and the control server answers requests; it
 * never sends a request of its own nor waits on a peer (every other
 * connection would wait with it). So the daemon never waits on a manager:
 * a wave that meets a pod a registration selects posts an ask and keeps
 * the pod (counted as blocked, the line saying on whom it waits); the
 * manager, which keeps its connection, asks for its unanswered asks
 * (PENDING) and answers each (ANSWER); the drain's next wave (the CLI
 * repeats waves until nothing is left) reads the answer. A manager's
 * polling doubles as its heartbeat: its connection is never idle. The
 * connection closed, its registration and asks are dropped
 * (prod_approval_gone, from producers_on_disconnect).
 *
 * Every registration whose selector picks the pod is asked; the pod goes
 * only when each allows it. Selectors are parsed at each question, so a
 * label interned after the registration still matches.
 *
 * Quota reclaim and priority preemption (on the evictor thread, under the
 * same lock: producers_reclaim.c, producers_preempt.c) ask only the
 * registrations that opted in (OP_APPROVAL_RECLAIM_TOO, _PREEMPT_TOO), in
 * two steps, and keep the poll model:
 *   - the choice leaves out the pods a registration bars now
 *     (prod_approval_barred: denied within the hold, not before a time
 *     still ahead, fail-closed past the deadline): they are no
 *     candidates, so the chooser picks other victims or none;
 *   - the victims chosen are asked (prod_approval_holds, which posts the
 *     asks); when any is kept, none is evicted (a part of the victims
 *     frees room the preemptor cannot use) and the preemptor waits.
 * AQ1 The wake-up. A preemptor kept waiting has no event of its own: its
 *     victims stay. So every answer to a reclaim's or preemption's ask
 *     marks the ask (approval.c's `answered`), and so does the time at
 *     which its verdict changes (the deadline, a deny's hold, a
 *     not-before); the answer also kicks the evictor (approval_kick:
 *     evict_kick, daemon/evict.c's kick protocol), whose loop calls
 *     producers_approval_tick at each turn after it loaded its kick word:
 *     the marks are taken
 *     there under the lock (approval_due), a preemption's ask publishes
 *     room anywhere (queue_event_room for QUEUE_ANY_NODE: every pod
 *     refused for resources tries again, and asks to preempt again; the
 *     victim's node's own room event would wake only the pods that fit
 *     what it has left, which the victim still holds), a reclaim's has
 *     the evictor nudge the quota trees (qc_reclaim_nudge: the pods
 *     waiting for quota try again, and ask to reclaim again). An answer
 *     after the tick's look moves the kick word, so the evictor's wait
 *     returns at once: no answer is lost. A mark on a time is seen
 *     within one idle turn of the evictor (EVICT_IDLE_NS, 100 ms).
 *     approval_scoped (relaxed both: a count for a fast no) is written
 *     under the lock at REGISTER and at a connection's end; the tick
 *     skips the lock while it reads 0.
 */
#include "ingest/producers_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/approval.h"
#include "ingest/control_ops.h"
#include "ingest/control_proto.h"
#include "ingest/control_server.h"
#include "base/base.h"
#include "shm/shm.h"

static uint64_t clock_now(const struct producers *p)
{
	return p->approval_clock != NULL ? p->approval_clock(p->approval_clock_arg)
					 : now_ns();
}

void producers_set_approval_clock(struct producers *p, uint64_t (*clock)(void *arg),
				  void *arg)
{
	pthread_mutex_lock(&p->lock);
	p->approval_clock = clock;
	p->approval_clock_arg = arg;
	pthread_mutex_unlock(&p->lock);
}

void producers_approval_stats(struct producers *p, struct approval_stats *out)
{
	pthread_mutex_lock(&p->lock);
	approval_stats(p->approval, out);
	pthread_mutex_unlock(&p->lock);
}

/* AQ1: how many registrations reclaim or preemption asks. */
void prod_approval_count_scoped(struct producers *p)
{
	uint32_t n = 0;
	for (uint32_t i = 0; p->approval != NULL && i < APPROVAL_REGS_MAX; i++) {
		const struct approval_reg *g = approval_reg_at(p->approval, i);
		n += g->conn != 0 && (g->reclaim || g->preempt);
	}
	/* AQ1: relaxed, a count for a fast no. */
	__atomic_store_n(&p->approval_scoped, n, __ATOMIC_RELAXED);
}

void prod_approval_gone(struct producers *p, uint64_t conn)
{
	if (approval_drop(p->approval, conn))
		prod_approval_count_scoped(p);
}

void producers_set_approval_kick(struct producers *p, void (*kick)(void *arg),
				 void *arg)
{
	pthread_mutex_lock(&p->lock);
	p->approval_kick = kick;
	p->approval_kick_arg = arg;
	pthread_mutex_unlock(&p->lock);
}

/* AQ1: at most this many asks woken a tick (the rest at the next). */
#define TICK_MAX 64u

bool producers_approval_tick(struct producers *p)
{
	/* AQ1: relaxed, a count for a fast no. */
	if (__atomic_load_n(&p->approval_scoped, __ATOMIC_RELAXED) == 0)
		return false;
	uint64_t ids[TICK_MAX]; /* the placements: unread (one event for all) */
	uint32_t askers[TICK_MAX];
	pthread_mutex_lock(&p->lock);
	uint32_t n = p->approval != NULL
		? approval_due(p->approval, clock_now(p), ids, askers, TICK_MAX) : 0;
	bool preempt = false;
	for (uint32_t k = 0; k < n; k++)
		preempt = preempt || (askers[k] & (1u << OP_APPROVAL_PREEMPT));
	if (preempt) {
		/* Room "anywhere": the pods refused for resources wake (a room
		 * event of the victim's node would wake only those that fit
		 * what it has left, and the victim still holds it). */
		struct queue_event ev = queue_event_room(0);
		ev.slot = QUEUE_ANY_NODE;
		/* Not prod_publish: producers.c calls this file (a connection
		 * gone), and calls go one way only (check-call-loops). */
		if (p->events != NULL)
			queue_events_publish(p->events, &ev);
	}
	pthread_mutex_unlock(&p->lock);
	return n > 0;
}

static void handle_register(struct producers *p, struct control_server *s,
			    uint64_t conn, uint32_t rid, const void *body, uint32_t len)
{
	struct control_approval_register r;
	char err[512];
	if (control_approval_register_split(body, len, &r, err, sizeof(err)) < 0) {
		control_server_reply_error(s, conn, rid, EINVAL, "%s", err);
		return;
	}
	struct prod_selector sel;
	char what[128];
	snprintf(what, sizeof(what), "approval registration %s: selector", r.name);
	if (prod_selector_parse(p, what, r.selector, r.selector_len, &sel, err,
				sizeof(err)) < 0) {
		control_server_reply_error(s, conn, rid, EINVAL, "%s", err);
		return;
	}
	if (p->approval == NULL && (p->approval = approval_create()) == NULL) {
		control_server_reply_error(s, conn, rid, ENOMEM, "approval: out of memory");
		return;
	}
	struct op_approval_registered ans = {0};
	int rc = approval_register(p->approval, conn, &r, &ans.registration, err,
				   sizeof(err));
	if (rc < 0) {
		control_server_reply_error(s, conn, rid, -rc, "%s", err);
		return;
	}
	prod_approval_count_scoped(p);
	control_server_reply(s, conn, rid, &ans, sizeof(ans), -1);
}

static void handle_pending(struct producers *p, struct control_server *s,
			   uint64_t conn, uint32_t rid, uint32_t len)
{
	if (len != 0) {
		control_server_reply_error(s, conn, rid, EINVAL, "approval pending: a "
					   "body of %u bytes; expected none", len);
		return;
	}
	size_t size = sizeof(struct op_approval_pending) +
		      OP_APPROVAL_PAGE * sizeof(struct op_approval_ask);
	_Static_assert(sizeof(struct op_approval_pending) +
		       OP_APPROVAL_PAGE * sizeof(struct op_approval_ask) <=
		       CONTROL_MAX_PAYLOAD, "a page of asks fits one message");
	struct op_approval_pending *ans = calloc(1, size);
	if (ans == NULL) {
		control_server_reply_error(s, conn, rid, ENOMEM, "approval: out of memory");
		return;
	}
	if (p->approval != NULL)
		ans->n = approval_pending(p->approval, conn, ans->asks,
					  OP_APPROVAL_PAGE, &ans->more);
	control_server_reply(s, conn, rid, ans, (uint32_t)(sizeof(*ans) +
			     ans->n * sizeof(struct op_approval_ask)), -1);
	free(ans);
}

static void handle_answer(struct producers *p, struct control_server *s,
			  uint64_t conn, uint32_t rid, const void *body, uint32_t len)
{
	struct op_approval_answer a;
	char err[512];
	int rc = control_approval_answer_check(body, len, &a, err, sizeof(err));
	if (rc == 0 && p->approval == NULL)
		rc = errmsg_rc(-ENOENT, err, sizeof(err), "approval answer: no ask %llu "
			       "(no manager has registered)",
			       (unsigned long long)a.ask_id);
	if (rc == 0)
		rc = approval_answer(p->approval, conn, &a, clock_now(p), err,
				     sizeof(err));
	if (rc < 0) {
		control_server_reply_error(s, conn, rid, -rc, "%s", err);
		return;
	}
	/* AQ1: the askers woken at the evictor's next turn (relaxed: a
	 * count; a kick for a drain's ask only costs the evictor a turn). */
	if (p->approval_kick != NULL &&
	    __atomic_load_n(&p->approval_scoped, __ATOMIC_RELAXED) > 0)
		p->approval_kick(p->approval_kick_arg);
	control_server_reply(s, conn, rid, NULL, 0, -1);
}

void prod_handle_approval(struct producers *p, struct control_server *s,
			  uint64_t conn, uint32_t rid, uint32_t action,
			  const void *body, uint32_t len)
{
	switch (action) {
	case OP_APPROVAL_REGISTER:
		handle_register(p, s, conn, rid, body, len);
		break;
	case OP_APPROVAL_PENDING:
		handle_pending(p, s, conn, rid, len);
		break;
	case OP_APPROVAL_ANSWER:
		handle_answer(p, s, conn, rid, body, len);
		break;
	default:
		control_server_reply_error(s, conn, rid, EINVAL, "approval: action %u: "
					   "expected REGISTER (0), PENDING (1) or "
					   "ANSWER (2)", action);
		break;
	}
}

/* Whether registration `g` is asked by `reason`'s disruptions. */
static bool asked_by(const struct approval_reg *g, uint32_t reason)
{
	return g->conn != 0 && (reason == OP_APPROVAL_DRAIN ||
				(reason == OP_APPROVAL_RECLAIM && g->reclaim) ||
				(reason == OP_APPROVAL_PREEMPT && g->preempt));
}

/* Whether registration `g` selects the pod of group `group`. */
static bool selects(struct producers *p, const struct approval_reg *g,
		    uint32_t group)
{
	struct prod_selector sel;
	char err[8];
	return prod_selector_parse(p, "", g->selector, g->selector_len, &sel, err,
				   sizeof(err)) == 0 &&
	       prod_selector_matches(p, &sel, group);
}

bool prod_approval_asks(const struct producers *p, uint32_t reason)
{
	for (uint32_t i = 0; p->approval != NULL && i < APPROVAL_REGS_MAX; i++)
		if (asked_by(approval_reg_at(p->approval, i), reason))
			return true;
	return false;
}

static int id_cmp(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
	return a < b ? -1 : a > b;
}

void prod_approval_barred(struct producers *p, uint32_t reason,
			  struct prod_barred *out)
{
	out->n = 0;
	if (p->approval == NULL)
		return;
	uint64_t now = clock_now(p);
	for (uint32_t i = 0; i < APPROVAL_REGS_MAX; i++)
		if (asked_by(approval_reg_at(p->approval, i), reason))
			out->n += approval_barred(p->approval, i, now, out->ids + out->n,
						  APPROVAL_ASKS_MAX - out->n);
	qsort(out->ids, out->n, sizeof(out->ids[0]), id_cmp);
}

bool prod_barred_has(const struct prod_barred *b, uint64_t id)
{
	return b->n > 0 &&
	       bsearch(&id, b->ids, b->n, sizeof(b->ids[0]), id_cmp) != NULL;
}

bool prod_approval_holds(struct producers *p, uint64_t id,
			 const struct placement_record *r, const char *node,
			 uint32_t reason, char *why, size_t why_len)
{
	why[0] = '\0';
	if (p->approval == NULL)
		return false;
	char pod[280];
	const char *name = r->pod_name != 0 ? intern_str(p->strings, r->pod_name) : NULL;
	if (name != NULL)
		snprintf(pod, sizeof(pod), "pod %.250s", name);
	else
		snprintf(pod, sizeof(pod), "cookie %llu", (unsigned long long)r->cookie);
	uint64_t now = clock_now(p);
	bool keep = false;
	size_t w = 0;
	for (uint32_t i = 0; i < APPROVAL_REGS_MAX; i++) {
		const struct approval_reg *g = approval_reg_at(p->approval, i);
		if (!asked_by(g, reason) || !selects(p, g, r->group))
			continue;
		char line[600];
		if (approval_decide(p->approval, i, id, reason, pod, node, now, line,
				    sizeof(line)) != APPROVAL_KEEP)
			continue;
		keep = true;
		if (w + 2 < why_len) {
			int k = snprintf(why + w, why_len - w, "%s%s", w ? "; " : "", line);
			w += k > 0 ? (size_t)k : 0;
			if (w >= why_len)
				w = why_len - 1;
		}
	}
	return keep;
}

void prod_approval_evicted(struct producers *p, uint64_t id)
{
	if (p->approval != NULL)
		approval_disrupted(p->approval, id);
}

bool prod_approval_keeps(struct producers *p, uint64_t id,
			 const struct placement_record *r, const char *node,
			 uint32_t reason, char *why, size_t why_len)
{
	bool keep = prod_approval_holds(p, id, r, node, reason, why, why_len);
	if (!keep)
		prod_approval_evicted(p, id);
	return keep;
}
