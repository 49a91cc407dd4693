/* Preemption's choice of node and victims: see preempt.h. Each node is
 * worked on a private copy of its use; nothing shared is read or written.
 * Pods as important as each other (same priority and start) are ordered
 * by their index in the caller's array, where kube's sort.Slice leaves
 * them in no particular order (insertion sorts: nodes hold tens of pods). */
#include "workers/preempt.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int preempt_scratch_init(struct preempt_scratch *s, uint32_t max_pods_per_node)
{
	uint32_t cap = max_pods_per_node ? max_pods_per_node : 1;
	s->cap = cap;
	s->order = malloc(cap * sizeof(uint32_t));
	s->victims = malloc(cap * sizeof(uint32_t));
	s->best = malloc(cap * sizeof(uint32_t));
	if (s->order == NULL || s->victims == NULL || s->best == NULL) {
		preempt_scratch_free(s);
		return -ENOMEM;
	}
	return 0;
}

int preempt_scratch_reserve(struct preempt_scratch *s, uint32_t pods)
{
	if (pods <= s->cap)
		return 0;
	struct preempt_scratch grown;
	if (preempt_scratch_init(&grown, pods > 2 * s->cap ? pods : 2 * s->cap) < 0)
		return -ENOMEM;
	preempt_scratch_free(s);
	*s = grown;
	return 0;
}

void preempt_scratch_free(struct preempt_scratch *s)
{
	free(s->order);
	free(s->victims);
	free(s->best);
	memset(s, 0, sizeof(*s));
}

/* util.MoreImportantPod: higher priority, then the earlier start. */
static bool more_important(const struct preempt_pod *a, const struct preempt_pod *b)
{
	if (a->priority != b->priority)
		return a->priority > b->priority;
	return a->start_ns < b->start_ns;
}

/* more_important, and pods as important as each other by their index:
 * one order whatever the order they come in. */
static bool before(const struct preempt_input *in, uint32_t a, uint32_t b)
{
	const struct preempt_pod *x = &in->pods[a], *y = &in->pods[b];
	if (more_important(x, y))
		return true;
	return !more_important(y, x) && a < b;
}

/* The resources the preemptor asks for (more than 0, pods aside): the only
 * ones fits() reads, so the only ones take() keeps up to date. */
struct wanted {
	unsigned n;
	uint8_t r[RES_MAX];
};

static void wanted_of(const struct res_vec *req, struct wanted *w)
{
	w->n = 0;
	for (unsigned r = 0; r < RES_MAX; r++)
		if (r != RES_PODS && req->v[r] > 0)
			w->r[w->n++] = (uint8_t)r;
}

/* NodeResourcesFit's fitsRequest for the preemptor against `used`: one
 * more pod, and every resource it asks for. */
static bool fits(const struct wanted *w, const struct res_vec *req,
		 const struct res_vec *alloc, const struct res_vec *used)
{
	if (used->v[RES_PODS] + 1 > alloc->v[RES_PODS])
		return false;
	for (unsigned i = 0; i < w->n; i++) {
		unsigned r = w->r[i];
		if (req->v[r] > alloc->v[r] - used->v[r])
			return false;
	}
	return true;
}

/* `used` with p's use taken out (sign -1) or put back (+1), for the
 * resources fits() reads. */
static void take(const struct wanted *w, struct res_vec *used,
		 const struct preempt_pod *p, int sign)
{
	for (unsigned i = 0; i < w->n; i++)
		used->v[w->r[i]] += sign * p->request.v[w->r[i]];
	used->v[RES_PODS] += sign;
}

struct node_choice {
	uint32_t n_victims;
	uint32_t violations;
};

/* SelectVictimsOnNode. Returns 1 with the victims in s->victims (most
 * important first), 0 when the node is no candidate, -E2BIG. */
static int victims_on_node(const struct preempt_input *in, const struct wanted *w,
			   const struct preempt_node *nd, struct preempt_scratch *s,
			   struct node_choice *out)
{
	if (nd->n > s->cap)
		return -E2BIG;
	struct res_vec used = nd->used;
	uint32_t k = 0;
	for (uint32_t i = 0; i < nd->n; i++) {
		const struct preempt_pod *p = &in->pods[nd->first + i];
		if (p->priority < in->priority) {
			s->order[k++] = nd->first + i;
			take(w, &used, p, -1);
		}
	}
	if (k == 0 || !fits(w, in->request, &nd->allocatable, &used))
		return 0;
	/* Most important first. */
	for (uint32_t i = 1; i < k; i++) {
		uint32_t x = s->order[i], j = i;
		while (j > 0 && before(in, x, s->order[j - 1])) {
			s->order[j] = s->order[j - 1];
			j--;
		}
		s->order[j] = x;
	}
	/* filterPodsWithPDBViolation, in that order: each matching budget
	 * counted down; below 0, the pod's eviction violates it. */
	int32_t allowed[PREEMPT_MAX_PDBS];
	for (uint32_t b = 0; b < in->n_pdbs && b < PREEMPT_MAX_PDBS; b++)
		allowed[b] = in->pdb_allowed[b];
	uint32_t *violating = s->best; /* [k]: 1 when evicting it violates */
	for (uint32_t i = 0; i < k; i++) {
		uint32_t m = in->pods[s->order[i]].pdbs;
		violating[i] = false;
		for (uint32_t b = 0; b < in->n_pdbs && b < PREEMPT_MAX_PDBS; b++)
			if (m >> b & 1 && --allowed[b] < 0)
				violating[i] = 1;
	}
	/* Reprieve: violating ones first, then the others, each most
	 * important first. */
	uint32_t n_victims = 0, violations = 0;
	for (int pass = 1; pass >= 0; pass--) {
		for (uint32_t i = 0; i < k; i++) {
			if (violating[i] != (uint32_t)(pass == 1))
				continue;
			const struct preempt_pod *p = &in->pods[s->order[i]];
			take(w, &used, p, +1);
			if (fits(w, in->request, &nd->allocatable, &used))
				continue; /* reprieved */
			take(w, &used, p, -1);
			s->victims[n_victims++] = s->order[i];
			violations += pass == 1;
		}
	}
	/* Victims in importance order again when both kinds are there. */
	for (uint32_t i = 1; i < n_victims; i++) {
		uint32_t x = s->victims[i], j = i;
		while (j > 0 && before(in, x, s->victims[j - 1])) {
			s->victims[j] = s->victims[j - 1];
			j--;
		}
		s->victims[j] = x;
	}
	if (n_victims > PREEMPT_MAX_VICTIMS)
		return -E2BIG;
	out->n_victims = n_victims;
	out->violations = violations;
	return 1;
}

/* The scores of pickOneNodeForPreemption, higher better, for a node's
 * victims (most important first). */
static int64_t score(const struct preempt_input *in, const uint32_t *victims,
		     uint32_t n, uint32_t violations, unsigned which)
{
	switch (which) {
	case 0:
		return -(int64_t)violations;
	case 1:
		return -(int64_t)in->pods[victims[0]].priority;
	case 2: {
		int64_t sum = 0;
		for (uint32_t i = 0; i < n; i++)
			sum += (int64_t)in->pods[victims[i]].priority + INT64_C(2147483648);
		return -sum;
	}
	case 3:
		return -(int64_t)n;
	default: {
		/* GetEarliestPodStartTime: the earliest start among the
		 * highest-priority victims; the latest of those wins. */
		int32_t top = in->pods[victims[0]].priority;
		uint64_t earliest = in->pods[victims[0]].start_ns;
		for (uint32_t i = 0; i < n; i++) {
			const struct preempt_pod *p = &in->pods[victims[i]];
			if (p->priority == top && p->start_ns < earliest)
				earliest = p->start_ns;
			else if (p->priority > top) {
				top = p->priority;
				earliest = p->start_ns;
			}
		}
		return earliest > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)earliest;
	}
	}
}

#define SCORES 5

enum { PROBE_NONE, PROBE_PASSED, PROBE_EXACT };

/* The shortcut (see preempt.h): the node's summary from the probe.
 * Returns PROBE_NONE when it is no candidate, PROBE_PASSED when it is one
 * whose scores cannot rise above `best` (NULL: no candidate yet), and
 * PROBE_EXACT when it must be worked out pod by pod (it might win, or it
 * might hold more victims than PREEMPT_MAX_VICTIMS: -E2BIG then). */
static int probe_node(const struct preempt_input *in, const struct wanted *w,
		      struct preempt_node *nd, const int64_t *best)
{
	struct preempt_summary sm;
	if (!in->probe(in->probe_arg, nd, &sm) || sm.n == 0)
		return PROBE_NONE;
	/* victims_on_node's fit with every possible victim gone (the same
	 * sums, taken at once), and whether it fits with every pod there:
	 * then each is reprieved (requests are not negative, so every state
	 * on the way fits too), no victim. */
	const struct res_vec *alloc = &nd->allocatable, *used = &nd->used;
	const struct res_vec *req = in->request;
	bool fits_now = used->v[RES_PODS] + 1 <= alloc->v[RES_PODS];
	if (used->v[RES_PODS] - (int64_t)sm.n + 1 > alloc->v[RES_PODS])
		return PROBE_NONE;
	for (unsigned i = 0; i < w->n; i++) {
		unsigned r = w->r[i];
		int64_t room = alloc->v[r] - used->v[r];
		if (req->v[r] > room + sm.freed.v[r])
			return PROBE_NONE;
		fits_now = fits_now && req->v[r] <= room;
	}
	if (fits_now)
		return PROBE_NONE;
	if (best == NULL || sm.n > PREEMPT_MAX_VICTIMS)
		return PROBE_EXACT;
	/* Each score's upper bound, in score()'s order. */
	int64_t top[SCORES] = {
		0,
		-(int64_t)sm.low_priority,
		-((int64_t)sm.low_priority + INT64_C(2147483648)),
		-1,
		sm.late_start > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)sm.late_start,
	};
	for (unsigned f = 0; f < SCORES; f++)
		if (top[f] != best[f])
			return top[f] > best[f] ? PROBE_EXACT : PROBE_PASSED;
	return PROBE_PASSED; /* a tie at best: the first visited keeps it */
}

/* The rows' run (preempt_input.rows): nodes j, j + 1, ... below `end`
 * (their rows refreshed) and at most `steps` of them, each decided from
 * the rows as probe_node decides from a probe's summary (the same sums
 * and bounds) where they hold its possible victims' summary (every pod
 * on it below the preemptor, or every pod below its top band, and its
 * static filters passed at once: bare). A node without a possible victim
 * (no pod: low is INT32_MAX, never below the preemptor), or decided no
 * candidate, is passed; one decided a candidate that cannot beat `best`
 * (NULL: none yet) is counted. The run stops before a node it cannot
 * pass (*stop PREEMPT_RUN_EXACT: the rows say it must be worked out pod
 * by pod; PREEMPT_RUN_PROBE: the rows do not hold its summary), once
 * enough candidates are counted, or at the end (PREEMPT_RUN_BOUNDARY).
 * Returns the nodes passed. Locals and dense arrays only: ~60
 * instructions a node (callgrind). Where the rows come with their scan
 * index (preempt_scan.h), preempt_scan_run makes the same run by blocks
 * of 64 nodes instead. */
static uint32_t rows_run(const struct preempt_input *in, const struct wanted *w,
			 const struct preempt_rows *rw, uint32_t j, uint32_t end,
			 uint32_t steps, const int64_t *best, uint32_t *candidates,
			 uint32_t *clean, enum preempt_run_stop *stop)
{
	const uint32_t *restrict nn = rw->n, *restrict nn2 = rw->n2;
	const int32_t *restrict low = rw->low, *restrict fh = rw->fast_high;
	const int32_t *restrict fh2 = rw->fast_high2;
	const uint64_t *restrict late = rw->late, *restrict late2 = rw->late2;
	const int64_t *restrict tp2 = rw->then2[RES_PODS];
	const int64_t *restrict rp = rw->room[RES_PODS], *restrict tp = rw->then[RES_PODS];
	/* Two columns of the resources asked for; where fewer are asked
	 * for, the pods' column again with the pods' test (one more pod),
	 * which the loop makes anyway. More than two: the rest in a loop. */
	const int64_t *restrict r0 = rp, *restrict t0 = tp, *restrict r1 = rp, *restrict t1 = tp;
	const int64_t *restrict u0 = tp2, *restrict u1 = tp2; /* then2's */
	int64_t q0 = 1, q1 = 1;
	if (w->n > 0) {
		r0 = rw->room[w->r[0]];
		t0 = rw->then[w->r[0]];
		u0 = rw->then2[w->r[0]];
		q0 = in->request->v[w->r[0]];
	}
	if (w->n > 1) {
		r1 = rw->room[w->r[1]];
		t1 = rw->then[w->r[1]];
		u1 = rw->then2[w->r[1]];
		q1 = in->request->v[w->r[1]];
	}
	int32_t prio = in->priority;
	uint32_t want = in->want, cands = *candidates, cl = *clean;
	/* probe_node's bounds against best's scores (the first is 0: no
	 * budgets), each breaking the previous one's tie: -low against
	 * best's, so a node's lowest priority against best's highest
	 * victim's (top); where they are equal, the next two bounds are
	 * this run's constants (tie: 1 worked out, 0 passed, -1 the last
	 * bound decides: the latest start against best's). */
	int64_t top = 0, b4 = 0;
	int tie = 0;
	if (best != NULL) {
		top = -best[1];
		int64_t s2 = -(top + INT64_C(2147483648));
		tie = s2 != best[2] ? s2 > best[2] : -1 != best[3] ? -1 > best[3] : -1;
		b4 = best[4];
	}
	uint32_t first = j;
	if (end - j > steps)
		end = j + steps;
	*stop = PREEMPT_RUN_BOUNDARY;
	if (want != 0 && cl > 0 && cands >= want)
		return 0;
	for (; j < end; j++) {
		if (low[j] >= prio)
			continue; /* no possible victim */
		/* The possible victims: every pod (the first summary), or
		 * those below the top band (the second), or the probe. */
		bool sub = fh[j] >= prio;
		if (sub && fh2[j] >= prio) {
			*stop = PREEMPT_RUN_PROBE;
			break;
		}
		/* victims_on_node's fit with every possible victim gone, and
		 * now. */
		bool then = sub ? (tp2[j] >= 1) & (q0 <= u0[j]) & (q1 <= u1[j])
				: (tp[j] >= 1) & (q0 <= t0[j]) & (q1 <= t1[j]);
		bool now = (rp[j] >= 1) & (q0 <= r0[j]) & (q1 <= r1[j]);
		for (unsigned i = 2; i < w->n; i++) {
			unsigned r = w->r[i];
			int64_t q = in->request->v[r];
			then = then && q <= (sub ? rw->then2 : rw->then)[r][j];
			now = now && q <= rw->room[r][j];
		}
		if (!then || now)
			continue;
		if (best == NULL || (sub ? nn2 : nn)[j] > PREEMPT_MAX_VICTIMS) {
			*stop = PREEMPT_RUN_EXACT;
			break;
		}
		/* Above best's, worked out; below, passed; all tied, passed. */
		bool exact;
		if (low[j] != top)
			exact = low[j] < top;
		else if (tie >= 0)
			exact = tie;
		else {
			uint64_t lt = (sub ? late2 : late)[j];
			exact = (lt > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)lt) > b4;
		}
		if (exact) {
			*stop = PREEMPT_RUN_EXACT;
			break;
		}
		cands++;
		cl++; /* passed over: best has no violation, cl > 0 (PB1) */
		if (want != 0 && cands >= want) {
			j++; /* this one counted; the next is not looked at */
			break;
		}
	}
	*candidates = cands;
	*clean = cl;
	return j - first;
}

/* preempt_select refreshes the index's block of 64 at once. */
_Static_assert(PREEMPT_ROWS_CHUNK == 64, "a refresh covers one scan block");

/* The best's scores, as a node's bound (its lowest possible victim's
 * priority, the latest start among its possible victims: probe_node's
 * bounds in score()'s order, the first 0) is compared with them: a
 * bound of low `top` ties the next two scores with constants (tie: 1
 * above, -1 below, 0 the latest start decides). */
struct best_bound {
	int32_t top;
	int tie;
	int64_t late;
};

static struct best_bound best_bound_of(const int64_t *best)
{
	struct best_bound a = {.top = (int32_t)-best[1], .late = best[4]};
	int64_t s2 = -((int64_t)a.top + INT64_C(2147483648));
	a.tie = s2 != best[2] ? (s2 > best[2] ? 1 : -1) : -1 != best[3] ? (-1 > best[3] ? 1 : -1) : 0;
	return a;
}

/* A bound against the best's scores: 1 above, 0 equal, -1 below. */
static int bound_against(const struct best_bound *a, int32_t low, int64_t late)
{
	if (low != a->top)
		return low < a->top ? 1 : -1;
	if (a->tie != 0)
		return a->tie;
	return (late > a->late) - (late < a->late);
}

/* Node j (its victims in s->victims, its scores sc) the best so far. */
static void keep_best(struct preempt_result *out, int64_t best[SCORES], uint32_t j,
		      const struct node_choice *c, const struct preempt_scratch *s,
		      const int64_t sc[SCORES])
{
	out->node = j;
	out->n_victims = c->n_victims;
	out->pdb_violations = c->violations;
	memcpy(out->victims, s->victims, c->n_victims * sizeof(uint32_t));
	memcpy(best, sc, SCORES * sizeof(int64_t));
}

/* sc against best, in score()'s order: 1 above, 0 equal, -1 below. */
static int scores_cmp(const int64_t sc[SCORES], const int64_t best[SCORES])
{
	for (unsigned f = 0; f < SCORES; f++)
		if (sc[f] != best[f])
			return sc[f] > best[f] ? 1 : -1;
	return 0;
}

/* Node j worked out pod by pod (its visit, SelectVictimsOnNode, the
 * scores): 1 with its scores in sc[] (victims in s->victims), 0 when it
 * is no candidate (DryRunPreemption: a node where every potential victim
 * was reprieved is none, "expected at least one victim pod"), -E2BIG. */
static int worked_out(const struct preempt_input *in, const struct wanted *w,
		      uint32_t j, struct preempt_scratch *s, struct node_choice *c,
		      int64_t sc[SCORES])
{
	if (in->visit != NULL && !in->visit(in->visit_arg, &in->nodes[j]))
		return 0;
	int rc = victims_on_node(in, w, &in->nodes[j], s, c);
	if (rc <= 0 || c->n_victims == 0)
		return rc < 0 ? rc : 0;
	for (unsigned f = 0; f < SCORES; f++)
		sc[f] = score(in, s->victims, c->n_victims, c->violations, f);
	return 1;
}

/* The best-first choice over the scan index, without budgets:
 *   BF1  The window is DryRunPreemption's: from the start, cyclically,
 *        up to the want-th candidate (every candidate is one without a
 *        violation), counted from the index's bitmaps before any node is
 *        worked out (preempt_scan_window). Where a node the probe must
 *        look at, or one with too many possible victims, lies in it, the
 *        bitmaps do not decide it: nothing is worked out, the run node
 *        by node makes the choice.
 *   BF2  A candidate's bound (its entry's low and late, probe_node's
 *        bounds) is at or above its scores. First the candidate of the
 *        highest bound is worked out (in the window's part of the block
 *        of the highest block bound); then, in window order, only a
 *        candidate whose bound is above the best's scores, or equal and
 *        before the best in the window: any other cannot be chosen (a
 *        block whose bound rules out all of its part is passed whole).
 *   BF3  The winner is the offset order's: the highest scores, and of
 *        those the first in the window (a candidate of equal scores
 *        before the best takes its place; one after never does).
 * A node the bitmaps call a candidate that its visit or SelectVictimsOnNode
 * does not (rows not current), or one too big for the scratch, ends it:
 * the run decides instead (and fails only where it reaches that node).
 * Returns 1 with `out` made, 0 where it does not apply (the caller's run
 * node by node makes the choice then; out->node -1). Cost: the
 * window's blocks (refresh, entries made, a popcount each), one or two
 * nodes worked out in the steady state, the best's block's part walked
 * (up to 64 entries) and a compare per other block. */
static int best_first(const struct preempt_input *in, const struct wanted *w,
		      const struct preempt_rows *rw, struct preempt_scan *scan,
		      struct preempt_scratch *s, struct preempt_result *out)
{
	uint32_t cands;
	int n = preempt_scan_window(scan, rw, in->start, in->want, &cands);
	if (n < 0)
		return 0;
	out->candidates = cands;
	if (n == 0) {
		scan->best_first++;
		return 1;
	}
	const uint32_t *sb = scan->seg_b;
	const uint64_t *sm = scan->seg_m;
	/* BF2: first the window's part of the block of the highest bound
	 * (the earliest of a tie), and there its candidate of the highest. */
	int a = 0;
	for (int i = 1; i < n; i++) {
		int32_t lo = scan->top_low[sb[i]], la = scan->top_low[sb[a]];
		if (lo < la || (lo == la && scan->top_late[sb[i]] > scan->top_late[sb[a]]))
			a = i;
	}
	uint32_t base = sb[a] * 64, p = (uint32_t)__builtin_ctzll(sm[a]);
	for (uint64_t m = sm[a] & (sm[a] - 1); m != 0; m &= m - 1) {
		uint32_t q = (uint32_t)__builtin_ctzll(m);
		int32_t lo = scan->low[base + q], lp = scan->low[base + p];
		if (lo < lp || (lo == lp && scan->late[base + q] > scan->late[base + p]))
			p = q;
	}
	int64_t best[SCORES], sc[SCORES];
	struct node_choice c;
	if (worked_out(in, w, base + p, s, &c, sc) <= 0)
		return 0; /* the rows said a candidate: the run decides */
	uint32_t at = (uint32_t)a << 6 | p; /* the best's place in the window */
	keep_best(out, best, base + p, &c, s, sc);
	struct best_bound bb = best_bound_of(best);
	/* BF2, BF3: every other candidate in window order, worked out only
	 * where its bound is above the best's scores, or equal and it comes
	 * before the best (the offset order's first visited wins a tie). */
	for (int i = 0; i < n; i++) {
		uint32_t b = sb[i];
		int v = bound_against(&bb, scan->top_low[b], scan->top_late[b]);
		if (v < 0 || (v == 0 && (uint32_t)i > at >> 6)) {
			scan->whole++;
			continue;
		}
		base = b * 64;
		for (uint64_t m = sm[i]; m != 0; m &= m - 1) {
			uint32_t q = (uint32_t)__builtin_ctzll(m), here = (uint32_t)i << 6 | q;
			if (here == at)
				continue;
			v = bound_against(&bb, scan->low[base + q], scan->late[base + q]);
			if (v < 0 || (v == 0 && here > at))
				continue;
			if (worked_out(in, w, base + q, s, &c, sc) <= 0) {
				out->node = -1;
				out->n_victims = 0;
				out->pdb_violations = 0;
				return 0;
			}
			int better = scores_cmp(sc, best);
			if (better < 0 || (better == 0 && here > at))
				continue;
			at = here;
			keep_best(out, best, base + q, &c, s, sc);
			bb = best_bound_of(best);
		}
	}
	scan->best_first++;
	return 1;
}

uint32_t preempt_candidates_wanted(uint32_t nodes)
{
	/* calculateNumCandidates: minCandidateNodesPercentage 10,
	 * minCandidateNodesAbsolute 100. */
	uint64_t n = (uint64_t)nodes * 10 / 100;
	if (n < 100)
		n = 100;
	return n > nodes ? nodes : (uint32_t)n;
}

int preempt_select(const struct preempt_input *in, struct preempt_scratch *s,
		   struct preempt_result *out)
{
	out->node = -1;
	out->n_victims = 0;
	out->pdb_violations = 0;
	out->candidates = 0;
	int64_t best_score[SCORES];
	uint32_t clean = 0; /* candidates without a violation */
	struct wanted w;
	wanted_of(in->request, &w);
	/* With budgets too (PB1): the summaries bound a node's scores from
	 * above whatever its violations (none is the best a node can do; its
	 * victims are some of its possible victims, at least one), and a
	 * node is passed over only when it cannot beat the best's scores, so
	 * only when the best has no violation: `clean` is above 0 then, and
	 * counting the node passed as clean changes no stop. The rows' run
	 * compares the other scores only: it is given the best only when
	 * the best has no violation (else it works out each candidate). */
	bool probing = in->probe != NULL;
	const struct preempt_rows *rw = probing ? in->rows : NULL;
	/* The rows' scan index where it has room (PI2: for this class). */
	struct preempt_scan *scan = rw != NULL && rw->scan != NULL &&
		preempt_scan_begin(rw->scan, in->n_nodes, in->priority, in->request)
		? rw->scan : NULL;
	/* BF1-BF3: without budgets, best-first over the index's window. */
	if (scan != NULL && in->n_pdbs == 0) {
		if (best_first(in, &w, rw, scan, s, out))
			return 0;
		out->candidates = 0;
	}
	uint32_t fresh_lo = 0, fresh_end = 0; /* rows refreshed: [lo, end) */
	/* The node visited: start, start + 1, ... cyclically (no division
	 * a node: the shortcut leaves little else per node). */
	uint32_t j = in->n_nodes ? in->start % in->n_nodes : 0;
	uint32_t step = 0;
	while (step < in->n_nodes) {
		if (in->want != 0 && clean > 0 && out->candidates >= in->want)
			break;
		if (probing) {
			int p = -1;
			if (rw != NULL) {
				if (j < fresh_lo || j >= fresh_end) {
					/* With the index, its block of 64 (a run
					 * then covers one block, not parts of two). */
					uint32_t lo = scan != NULL ? j / 64 * 64 : j;
					uint32_t n = in->n_nodes - lo;
					n = n < PREEMPT_ROWS_CHUNK ? n : PREEMPT_ROWS_CHUNK;
					if (rw->refresh != NULL)
						rw->refresh(rw->refresh_arg, lo, n);
					fresh_lo = lo;
					fresh_end = lo + n;
				}
				enum preempt_run_stop stop;
				const int64_t *best = out->node >= 0 && best_score[0] == 0
						      ? best_score : NULL;
				uint32_t ran = scan != NULL
					? preempt_scan_run(scan, rw, j, fresh_end,
							   in->n_nodes - step, best, in->want,
							   &out->candidates, &clean, &stop)
					: rows_run(in, &w, rw, j, fresh_end,
						   in->n_nodes - step, best,
						   &out->candidates, &clean, &stop);
				step += ran;
				j += ran;
				if (j == in->n_nodes)
					j = 0;
				if (stop == PREEMPT_RUN_BOUNDARY)
					continue;
				if (stop == PREEMPT_RUN_EXACT)
					p = PROBE_EXACT;
			}
			if (p < 0)
				p = probe_node(in, &w, &in->nodes[j], out->node >= 0
					       ? best_score : NULL);
			if (p == PROBE_NONE)
				goto next;
			if (p == PROBE_PASSED) {
				out->candidates++;
				clean++; /* passed over: as rows_run's (PB1) */
				goto next;
			}
		}
		struct node_choice c;
		int64_t sc[SCORES];
		int rc = worked_out(in, &w, j, s, &c, sc);
		if (rc < 0)
			return rc;
		if (rc == 0)
			goto next;
		out->candidates++;
		clean += c.violations == 0;
		if (out->node < 0 || scores_cmp(sc, best_score) > 0)
			keep_best(out, best_score, j, &c, s, sc);
next:
		step++;
		j = j + 1 == in->n_nodes ? 0 : j + 1;
	}
	return 0;
}
