/* The fast leaf: NodeResourcesFit's filter and scores and
 * BalancedAllocation's score for the common pod (no host ports, no
 * devices, requests of cpu and memory only, LeastAllocated or
 * MostAllocated over cpu and memory with the stand-ins, BalancedAllocation
 * over cpu and memory: kube's defaults, any weights) on one node, from five
 * counters and three allocatables. Three forms that give the same
 * answers: leaf_fast(), one node, inline for workers/engine.c's
 * leaf_eval(); leaf_scan(), a sampled scan's visit of many nodes, four at
 * a time with AVX2 (eight with AVX-512) when the CPU has it; and
 * leaf_fast_plans(), four plans on one node, for the request shapes that
 * follow a changed node (workers/leaf_scan.c).
 *
 * Exactness of the AVX2 forms: they compute in doubles what leaf_fast()
 * computes in 64-bit integers (and the same doubles where leaf_fast() uses
 * them). A lane is left to leaf_fast() unless every figure it converts is
 * in [0, 2^52) and both allocatables are in (0, 2^46): then every product
 * is an exact double, and a truncated quotient q = (a * 100) / b is exact
 * too, since a / b is at most q + 1 - 1/b and 1/b is more than half a
 * unit in the last place of q + 1 (at most 2^-47 here). leaf_scan()
 * tests a narrower range, every figure in [0, 2^46) and neither
 * allocatable 0, by one test of their bits together. The plan's weights
 * must be in [0, 2^20] (leaf_scan() goes scalar otherwise).
 *
 * Concurrency: the counters are a view, read without ordering, as
 * relaxed loads would read them; the commit decides. The AVX2 gathers are
 * plain loads of aligned 8-byte elements, which the compiler neither
 * splits nor merges, and which ThreadSanitizer does not see.
 */
#ifndef SHMSCHED_WORKERS_LEAF_FAST_INTERNAL_H
#define SHMSCHED_WORKERS_LEAF_FAST_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "shm/shm.h"
#include "workers/node_rows_internal.h"
#include "workers/plugins.h"

/* Dynamic filter reasons of a node, as bits (leaf_fast(), and
 * workers/engine.c's leaf_eval()). */
#define MASK_PODS 1u          /* Too many pods */
#define MASK_PORTS 2u         /* NodePorts */
#define MASK_RES(r) (4u << (r)) /* Insufficient r */
#define MASK_GPU (1u << 20)     /* DeviceFit: GPU */
#define MASK_CORES (1u << 21)   /* DeviceFit: exclusive cores */
#define MASK_ANTI (1u << 22)    /* InterPodAffinity: the pod's anti-affinity */
#define MASK_EXISTING_ANTI (1u << 23) /* ... placed pods' anti-affinity */

/* What the fast leaf reads of a pod and its profile. */
struct leaf_fast_plan {
	bool most;                 /* MostAllocated */
	bool check_cpu, check_mem; /* requested, so NodeResourcesFit checks them */
	int64_t w_fit, w_balanced; /* profile weights; 0: not scored */
	int64_t w_cpu, w_mem, w_sum; /* NodeResourcesFit's resource weights */
	int64_t req_cpu, req_mem, nz_cpu, nz_mem;
};

/* What a scan reads of the nodes: the worker's rows, by slot
 * (workers/node_rows_internal.h); and what it only prefetches: a class's
 * raw static scores by slot (NULL when none), which the choice among the
 * candidates reads next by gathers (workers/candidates.c). Cold, they
 * cost that choice more than the scan costs (one miss per 16 slots,
 * which a gather cannot hide); the scan waits on its divisions, so their
 * misses overlap it. */
struct leaf_nodes {
	const struct node_row *rows;
	const int32_t *raw_taint, *raw_affinity;
};

/* The fast leaf on a node whose used pods, cpu and memory are `pods`, `uc`
 * and `um`, whose counters with stand-ins are at nz_cpu and nz_mem, with
 * allocatable cpu `ac`, memory `am` and pods `ap`: 0 when it passes (its weighted score in *d),
 * else MASK_* reasons. Sets *general instead when the node has no cpu or
 * no memory allocatable (those scores then leave a resource out): the
 * caller's general rules decide it. The same filters and scores as
 * filter_resources, least_allocated.go or most_allocated.go over cpu and
 * memory with the stand-ins, then balanced_allocation.go over the actual
 * requests: the same integer and floating-point operations as
 * score_plan_fit and score_plan_balanced. */
static inline uint32_t leaf_fast_of(const struct leaf_fast_plan *k, int64_t pods,
				    int64_t uc, int64_t um, const int64_t *nz_cpu,
				    const int64_t *nz_mem, int64_t ac, int64_t am,
				    int64_t ap, int64_t *d, bool *general)
{
	uint32_t m = 0;
	if (pods + 1 > ap)
		m |= MASK_PODS;
	if (k->check_cpu && k->req_cpu > ac - uc)
		m |= MASK_RES(RES_CPU);
	if (k->check_mem && k->req_mem > am - um)
		m |= MASK_RES(RES_MEMORY);
	if (m != 0)
		return m;
	if (ac == 0 || am == 0) {
		*general = true;
		return 0;
	}
	int64_t fit = 0, balanced = 0;
	if (k->w_fit != 0) {
		/* Read only for a node that passes: the filter's refusals,
		 * most nodes on a full cluster, never load them. */
		int64_t rc = __atomic_load_n(nz_cpu, __ATOMIC_RELAXED) + k->nz_cpu;
		int64_t rm = __atomic_load_n(nz_mem, __ATOMIC_RELAXED) + k->nz_mem;
		int64_t sc, sm;
		if (k->most) {
			sc = (rc > ac ? ac : rc) * MAX_NODE_SCORE / ac;
			sm = (rm > am ? am : rm) * MAX_NODE_SCORE / am;
		} else {
			sc = rc > ac ? 0 : (ac - rc) * MAX_NODE_SCORE / ac;
			sm = rm > am ? 0 : (am - rm) * MAX_NODE_SCORE / am;
		}
		fit = k->w_sum == 0 ? 0 : (sc * k->w_cpu + sm * k->w_mem) / k->w_sum;
	}
	if (k->w_balanced != 0) {
		double fc = (double)(uc + k->req_cpu) / (double)ac;
		double fm = (double)(um + k->req_mem) / (double)am;
		if (fc > 1)
			fc = 1;
		if (fm > 1)
			fm = 1;
		double std = (fc - fm) / 2;
		if (std < 0)
			std = -std;
		balanced = (int64_t)((1 - std) * (double)MAX_NODE_SCORE);
	}
	*d = SCORE_FINE * (k->w_fit * fit + k->w_balanced * balanced);
	return 0;
}

/* leaf_fast_of() on a ledger record `a`. */
static inline uint32_t leaf_fast(const struct leaf_fast_plan *k,
				 const struct node_alloc *a, int64_t ac, int64_t am,
				 int64_t ap, int64_t *d, bool *general)
{
	/* Relaxed loads, as ledger_load_used(): a view, the commit decides. */
	return leaf_fast_of(k, __atomic_load_n(&a->used[RES_PODS], __ATOMIC_RELAXED),
			    __atomic_load_n(&a->used[RES_CPU], __ATOMIC_RELAXED),
			    __atomic_load_n(&a->used[RES_MEMORY], __ATOMIC_RELAXED),
			    &a->used_nonzero_cpu_milli, &a->used_nonzero_mem_bytes,
			    ac, am, ap, d, general);
}

/* A node the fast leaf leaves to the general rules (*general above, or a
 * lane the AVX2 form cannot compute exactly): returns 0 when it passes,
 * with its score in *d. */
typedef uint32_t (*leaf_general_fn)(void *arg, uint32_t slot, int64_t *d);

/* Visits the slots feasible[from..end) in order while *n < want: each
 * that passes goes to out_slot[*n] and out_d[*n], and *n grows. The out
 * arrays have room for `want`: entries from *n up to it may be written
 * over (eight at a time). Returns the slots visited. */
uint32_t leaf_scan(const struct leaf_fast_plan *k, const struct leaf_nodes *nodes,
		   const uint32_t *feasible, uint32_t from, uint32_t end,
		   uint32_t want, uint32_t *n, uint32_t *out_slot, int64_t *out_d,
		   leaf_general_fn general, void *arg);

/* The fast leaf's reasons over feasible[0..n), counted: into
 * counts[LEAF_REASON_*] how many of those nodes it refuses for too many
 * pods, for cpu and for memory (a node may count under several; a node
 * that passes counts under none, whatever the general rules then make of
 * it, as they refuse none the fast leaf passes). With AVX2 where the CPU
 * has it. A diagnosis, not a choice: no scores. */
enum { LEAF_REASON_PODS, LEAF_REASON_CPU, LEAF_REASON_MEMORY, LEAF_REASONS };
void leaf_reasons(const struct leaf_fast_plan *k, const struct leaf_nodes *nodes,
		  const uint32_t *feasible, uint32_t n, uint32_t counts[LEAF_REASONS]);

/* One node's figures as leaf_fast_of() reads them. */
struct leaf_node {
	int64_t pods, uc, um, nz_cpu, nz_mem; /* used, and with stand-ins */
	int64_t ac, am, ap;                   /* allocatable */
};

/* Up to four fast plans laid out by lane, for leaf_fast_plans(): the
 * request shapes that follow a changed node together (workers/engine.c).
 * Made once per set of plans, read per node. */
struct leaf_plans {
	int64_t req_cpu[4];
	int64_t req_mem[4], nz_cpu[4], nz_mem[4];
	int64_t check_cpu[4], check_mem[4], most[4]; /* -1 true, 0 false */
	double w_cpu[4], w_mem[4], w_sum[4], w_fit[4], w_bal[4];
	unsigned lanes;                              /* bits: the lanes it computes */
};

/* Plans k[0..n) (n 1..4) into lanes 0..n-1; a plan whose weights are past
 * 2^20 gets no lane bit (its shape is evaluated one by one). */
void leaf_plans_init(struct leaf_plans *p, const struct leaf_fast_plan *const *k,
		     unsigned n);

/* leaf_fast_of() of every plan of p on one node, the four at once with
 * AVX2. Returns the lanes it answered, as bits: for each, its reasons in
 * m[i] and when 0 its score in d[i], as leaf_fast_of() gives them. A lane
 * it leaves out (the general rules' case, a figure outside the exact
 * ranges, or no AVX2: then it returns 0) is the caller's to evaluate one
 * by one. */
unsigned leaf_fast_plans(const struct leaf_plans *p, const struct leaf_node *v,
			 uint32_t m[4], int64_t d[4]);

/* Whether leaf_scan() uses AVX2 (the CPU has it), and for tests, a switch
 * to the scalar form and back: returns the previous setting. Not to be
 * called while another thread scans. */
bool leaf_scan_simd(void);
bool leaf_scan_set_simd(bool on);

/* Whether leaf_scan() takes eight nodes a step with AVX-512 (the CPU has
 * AVX-512 F, DQ, VL and BW, and AVX2 is on), and for tests, a switch to
 * the AVX2 form and back: returns the previous setting. Not to be called
 * while another thread scans. */
bool leaf_scan_simd512(void);
bool leaf_scan_set_simd512(bool on);

#endif
