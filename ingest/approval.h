/* Applications that approve their disruption (issue 38 item 3; KEP-4563's
 * interceptors): the daemon's table of managers' registrations and of the
 * asks posted to them (ingest/approval.c). Pure data: no locks (the
 * producers' lock covers it), no clock (every call that needs the time is
 * given it, so tests run it on an injected clock), no selector (the
 * caller, ingest/producers_approval.c, says which registrations select a
 * pod).
 */
#ifndef SHMSCHED_INGEST_APPROVAL_H
#define SHMSCHED_INGEST_APPROVAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ingest/control_ops.h"
#include "ingest/control_proto.h"

#define APPROVAL_REGS_MAX 8u   /* registrations at once; one more is refused */
#define APPROVAL_ASKS_MAX 512u /* asks outstanding at once */
/* An ask no drain has looked at for this long is forgotten (its pod gone,
 * its drain given up): 10 minutes. */
#define APPROVAL_ASK_STALE_NS (UINT64_C(600) * 1000000000u)

struct approval;

/* One registration, as the caller reads it to match a pod. */
struct approval_reg {
	uint64_t conn; /* the admin connection that made it; 0: a free entry */
	uint32_t id;   /* 1.., never reused while the daemon runs */
	char name[OP_APPROVAL_NAME_MAX + 1];
	char selector[OP_APPROVAL_SELECTOR_MAX + 1]; /* NUL-terminated */
	uint32_t selector_len;
	uint64_t deadline_ns;
	bool fail_open;
	/* Asked by quota reclaim, by priority preemption too
	 * (OP_APPROVAL_RECLAIM_TOO, OP_APPROVAL_PREEMPT_TOO); the drain
	 * asks every registration. */
	bool reclaim, preempt;
};

/* The askers, by_asker[]'s index: enum op_approval_reason - 1. */
#define APPROVAL_ASKERS 3u

/* One asker's decisions (an ask is counted under the asker that posted
 * it: a pod the drain and reclaim both want shares one ask). */
struct approval_counts {
	uint64_t asked, granted, denied, not_before, timed_out_open,
		timed_out_closed;
};

/* Decisions counted since the daemon started (read under the lock). */
struct approval_stats {
	uint64_t asked;            /* asks posted (a deny asked again counts again) */
	uint64_t granted, denied, not_before; /* answers */
	uint64_t timed_out_open;   /* no answer by the deadline: evicted */
	uint64_t timed_out_closed; /* no answer by the deadline: kept */
	uint32_t registrations;    /* now */
	/* The same by asker: [0] drain, [1] reclaim, [2] preemption; their
	 * sums are the totals above. */
	struct approval_counts by_asker[APPROVAL_ASKERS];
};

enum approval_outcome {
	APPROVAL_EVICT = 0,
	APPROVAL_KEEP = 1,
};

struct approval *approval_create(void);
void approval_free(struct approval *a);

/* Adds connection `conn`'s registration. 0 with *id, or -EEXIST (the
 * connection has one), -ENOSPC (APPROVAL_REGS_MAX registrations), each
 * with a message in err. */
int approval_register(struct approval *a, uint64_t conn,
		      const struct control_approval_register *r, uint32_t *id,
		      char *err, size_t err_len);

/* Drops connection `conn`'s registration and its asks (the connection
 * closed). Whether it had one. */
bool approval_drop(struct approval *a, uint64_t conn);

/* Entry i (0..APPROVAL_REGS_MAX-1) of the table; conn 0 when free. */
const struct approval_reg *approval_reg_at(const struct approval *a, uint32_t i);

/* Registration i's verdict on disrupting `placement` (pod and node for
 * the ask and the log) now:
 * - no ask yet: one is posted (PENDING): KEEP;
 * - PENDING within the deadline: KEEP; past it: fail-open EVICT,
 *   fail-closed KEEP (a late answer still counts);
 * - GRANTED: EVICT; DENIED: KEEP for one deadline after the answer, then
 *   asked again; NOT_BEFORE t: KEEP before t, EVICT from t;
 * - no room for an ask: as if the deadline had passed.
 * `why` gets a line for the drain's progress ("waiting on manager ...")
 * on KEEP, or what allowed it on EVICT. */
enum approval_outcome approval_decide(struct approval *a, uint32_t i,
				      uint64_t placement, uint32_t reason,
				      const char *pod, const char *node,
				      uint64_t now_ns, char *why, size_t why_len);

/* Whether registration i's answer on `placement` bars its disruption now
 * without asking (quota reclaim's and preemption's "not a candidate"): a
 * deny within its hold, a not-before still ahead, or no answer past the
 * deadline of a fail-closed registration. No ask posted, nothing
 * counted. */
bool approval_bars(const struct approval *a, uint32_t i, uint64_t placement,
		   uint64_t now_ns);

/* approval_bars for every ask of registration i at once: the placements
 * it bars now into out[] (at most max, APPROVAL_ASKS_MAX holds all);
 * how many. One pass over the asks, for a choice that tests many
 * candidates. */
uint32_t approval_barred(const struct approval *a, uint32_t i, uint64_t now_ns,
			 uint64_t *out, uint32_t max);

/* Asks that quota reclaim or preemption asked (too: an ask is shared by
 * every asker of its pod) answered since, or whose verdict changed with
 * time by `now_ns` (a deadline passed, a not-before or a deny's hold
 * over), each told once: their placements into out[] (at most max) and
 * their askers into askers[] (1 << each enum op_approval_reason); how
 * many. A deadline passed unanswered is counted here if no one asked
 * since. The evictor's tick, which wakes the askers. */
uint32_t approval_due(struct approval *a, uint64_t now_ns, uint64_t *out,
		      uint32_t *askers, uint32_t max);

/* `placement` was disrupted: its asks are done. */
void approval_disrupted(struct approval *a, uint64_t placement);

/* Connection `conn`'s answer. 0, or -ENOENT (no such ask: answered and
 * done, or its pod gone) or -EPERM (another registration's ask), with a
 * message in err. An ask answered already takes the new answer. */
int approval_answer(struct approval *a, uint64_t conn,
		    const struct op_approval_answer *ans, uint64_t now_ns,
		    char *err, size_t err_len);

/* Connection `conn`'s unanswered asks, at most `max` into out[]; *more
 * gets how many were left out. Returns how many were written. */
uint32_t approval_pending(const struct approval *a, uint64_t conn,
			  struct op_approval_ask *out, uint32_t max,
			  uint32_t *more);

void approval_stats(const struct approval *a, struct approval_stats *out);

#endif
