/* Preemption's choice: which node, and which of its pods to evict, so that
 * a pod that fits nowhere fits: kube-scheduler's DefaultPreemption
 * (pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go,
 * SelectVictimsOnNode) and the generic part
 * (pkg/scheduler/framework/preemption/preemption.go, pickOneNodeForPreemption,
 * filterPodsWithPDBViolation), literally:
 *
 * On each candidate node (the caller gives those where evicting pods can
 * help: the static filters pass):
 *   1. every pod of lower priority than the preemptor is a potential
 *      victim and is removed; none: not a candidate; the preemptor still
 *      does not fit: not a candidate;
 *   2. the potential victims, most important first (higher priority,
 *      then earlier start), are split into those whose eviction would
 *      violate a PodDisruptionBudget (each matching budget's allowed
 *      disruptions counted down in that order) and the others;
 *   3. each is added back in that order (violating ones first) and kept
 *      (reprieved) if the preemptor still fits; otherwise it is a victim,
 *      and a violating victim counts one violation.
 * Nodes are visited from a start, cyclically, until enough candidates are
 * found (DryRunPreemption: numCandidates, 10 % of the nodes and at least
 * 100, of which one violates no budget), as kube-scheduler does.
 * A node where every potential victim is reprieved is no candidate (kube:
 * "expected at least one victim pod"). Then the node, by these criteria
 * in order, each breaking the previous one's ties: fewest PDB violations;
 * lowest highest victim priority; lowest sum of victim priorities (each
 * offset by 2^31); fewest victims; latest earliest start among the
 * highest-priority victims; the first visited (kube's order here is a
 * map's, so random).
 *
 * "Fits" is NodeResourcesFit here (every resource the preemptor requests,
 * and one more pod): a preemptor that asks for devices, host ports or
 * falls under inter-pod rules is not given to preempt_select (see the
 * deviations in docs/reference/kubernetes-fields.md).
 *
 * Concurrency: pure; the caller owns every array. Cost: O(sum over
 * candidate nodes of k log k + k * R) for k pods on a node, R the
 * resources the preemptor asks for.
 */
#ifndef SHMSCHED_WORKERS_PREEMPT_H
#define SHMSCHED_WORKERS_PREEMPT_H

#include <stdbool.h>
#include <stdint.h>

#include "shm/shm.h"
#include "workers/preempt_scan.h"

/* A pod running on a candidate node. */
struct preempt_pod {
	uint64_t id;          /* the caller's (a placement id) */
	int32_t priority;
	uint64_t start_ns;    /* when it started (placed): ties go to the earlier */
	struct res_vec request; /* its use; v[RES_PODS] ignored (one pod) */
	uint32_t pdbs;        /* bit i: PodDisruptionBudget i selects it */
};

/* A node's possible victims (its pods of lower priority than the
 * preemptor's), summed up (preempt_input.probe). */
struct preempt_summary {
	uint32_t n;           /* how many */
	int32_t low_priority; /* the lowest priority among them */
	uint64_t late_start;  /* the latest start_ns among them */
	struct res_vec freed; /* their requests summed: at least each resource
			       * the preemptor requests (the only ones read;
			       * v[RES_PODS] is not one) */
};

/* A candidate node: its allocatable, its use now, and pods[first ..
 * first + n) of the caller's array are the pods on it (all of them, any
 * priority). */
struct preempt_node {
	uint32_t slot;
	struct res_vec allocatable;
	struct res_vec used; /* v[RES_PODS]: pods on it */
	uint32_t first, n;
};

#define PREEMPT_MAX_PDBS 32

struct preempt_input {
	const struct res_vec *request; /* the preemptor's; v[RES_PODS] ignored */
	int32_t priority;
	struct preempt_node *nodes;
	uint32_t n_nodes;
	/* DryRunPreemption's sampling: nodes are visited from `start`
	 * (cyclically), and the visit stops once `want` candidates are found,
	 * one of them without a budget violation (0: visit every node). */
	uint32_t start;
	uint32_t want;
	/* Called on a node before it is looked at (NULL: nodes are complete):
	 * fills its `used` and may fill pods[first .. first + n) (the
	 * caller's array: only visited nodes' pods are read), and returns
	 * false when the preemptor's static filters refuse it (no candidate
	 * then). */
	bool (*visit)(void *arg, struct preempt_node *node);
	void *visit_arg;
	const struct preempt_pod *pods;
	const int32_t *pdb_allowed; /* [n_pdbs]: disruptionsAllowed */
	uint32_t n_pdbs;
	/* The shortcut (NULL: none; with budgets too, PB1):
	 * called on a node before `visit`, it fills the node's allocatable
	 * and `used` (pods and the resources the preemptor requests at
	 * least: the only ones read before `visit`) and sums up its
	 * possible victims (its pods of lower priority than the
	 * preemptor's) without filling pods[]; it returns
	 * false where `visit` would (the static filters refuse it, or it has
	 * no possible victim). See preempt_select for what it saves. */
	bool (*probe)(void *arg, struct preempt_node *node,
		      struct preempt_summary *out);
	void *probe_arg;
	/* The rows (NULL: none; read only with a probe): a node's summary
	 * read from dense arrays in the loop itself, no call, where they
	 * say all of it (see struct
	 * preempt_rows); elsewhere the probe as above. */
	const struct preempt_rows *rows;
};

/* kube's defaults for `want` (DefaultPreemptionArgs): 10 % of the nodes,
 * at least 100, at most all. */
uint32_t preempt_candidates_wanted(uint32_t nodes);

struct preempt_result {
	int64_t node;           /* index into nodes[], -1: none fits */
	uint32_t n_victims;     /* most important first */
	uint32_t victims[PREEMPT_MAX_VICTIMS]; /* indices into pods[] */
	uint32_t pdb_violations;
	uint32_t candidates;    /* nodes where eviction makes the pod fit */
};

/* Scratch for preempt_select: room for the largest node's pods. */
struct preempt_scratch {
	uint32_t cap;
	uint32_t *order, *victims, *best; /* [cap] each */
};

/* Returns 0, or -ENOMEM. */
int preempt_scratch_init(struct preempt_scratch *s, uint32_t max_pods_per_node);

/* Makes room for a node of `pods` pods, keeping the scratch as it is when
 * it has room already (a visit may call it for the node it fills: the
 * scratch is not in use then). Returns 0, or -ENOMEM (the scratch as it
 * was). */
int preempt_scratch_reserve(struct preempt_scratch *s, uint32_t pods);
void preempt_scratch_free(struct preempt_scratch *s);

/* Chooses as above. With a probe (budgets or not), a node is worked out
 * pod by pod (`visit`, then SelectVictimsOnNode) only where its summary
 * says it could beat the best candidate so far; elsewhere the summary
 * alone says whether it is a candidate (it fits once every possible
 * victim is gone and does not fit now: then at least one pod is a
 * victim), and the node is counted and passed over. What it passes over
 * could not have been chosen: its scores are bounded by the summary (no
 * violation, the best a node can do with budgets; the highest victim priority at least low_priority, their
 * offset sum at least low_priority + 2^31, at least one victim, the
 * earliest start of the highest-priority victims at most late_start),
 * and a node wins only with scores above the best's (ties go to the
 * first visited). So the choice, victims and candidate count are the
 * ones without the probe (unit.preempt compares both on random cases).
 * With rows, a node they decide costs no call and a few loads from
 * dense arrays: the same decision (unit.preempt compares that too); with
 * their scan index (workers/preempt_scan.h, PI1-PI3), a block of 64 nodes
 * whose candidates cannot beat the best costs a few word operations.
 * Without budgets, where the window holds no node for the probe and none
 * with too many possible victims, the index's choice is best-first
 * (BF1-BF3, workers/preempt.c): the window counted from its bitmaps
 * first, then the nodes worked out highest bound first, so that in the
 * steady state one or two are, not the ~ln(window) new bests that the
 * offset order meets; the same node, victims and candidate count
 * (unit.preempt compares it with the literal reference on clusters of
 * up to 1,024 nodes full of ties).
 * Returns 0 (out->node -1 when no node fits even with
 * every lower-priority pod gone), or -E2BIG when a node holds more pods
 * than the scratch has room for, or more victims than
 * PREEMPT_MAX_VICTIMS. */
int preempt_select(const struct preempt_input *in, struct preempt_scratch *s,
		   struct preempt_result *out);

#endif
