/* The placement engine's shared types: what its files share, as
 * SQLite's whereInt.h is where.c's, wherecode.c's and whereexpr.c's.
 * Included by workers/engine*.c (directly or through the files' own
 * headers) and by nothing else.
 *
 * Calls run down: engine.c -> engine_scan.c -> engine_sync.c ->
 * engine_classes.c -> engine_evals.c -> engine_leaf.c -> engine_score.c;
 * no file calls one above it, so the files read bottom-up. Each file
 * but engine.c declares what the files above it call in a header of its
 * own (engine_scan_internal.h, ...), which they include; this header,
 * the types, constants and inline helpers that call no engine file, is
 * under them all. The files, one mechanism each, top down:
 * - engine.c: the engine's life (create, destroy), its entries (each
 *   follows the snapshot's generation first: engine_place, engine_idle,
 *   engine_prepare, engine_assign_devices), the pass both paths fix per
 *   pod (begin), the reference path (kube-scheduler's scan, literally),
 *   the choice of path per pod (engine_place: reference, sibling scan,
 *   class scan, index; under inter-pod rules or not), and what a caller
 *   reads back (messages, statistics).
 * - engine_scan.c: the visits of the fast path: the indexed pick, the
 *   scans of a class's static results (pruned by the index, by shard, or
 *   AVX2/AVX-512 over the node rows) and their diagnoses.
 * - engine_sync.c: following the cluster: a snapshot generation (a flush,
 *   or node events followed node by node) and the change log into each
 *   class's index.
 * - engine_classes.c: the class cache: finding, compiling a budget at a
 *   time, evicting, and the prepared classes of engine_prepare().
 * - engine_evals.c: the shared evaluations (struct eval), their table of
 *   results and the warm ones' pass over the change log.
 * - engine_leaf.c: one node judged for one pod: the static filters of a
 *   class's compile, a leaf's plan (struct leaf_plan) and the general
 *   rules of leaf_eval() (the fast rules are inline, in
 *   engine_leaf_internal.h).
 * - engine_score.c: a node read as the plugins see it (read_node), and
 *   scoring and selection, shared by both paths: the dynamic and static
 *   raw scores, the fragmentation memo, the normalising and the tie draw,
 *   and a placed pod's devices.
 *
 * The hot path's inlining is the one file's: a function inlined into
 * another of a different file before the split is static inline here or
 * in its file's header (leaf_eval(), the class word's accessors,
 * eval_store(), eval_add_word(), ...); the per-node loops (a scan, an
 * eval's sync, a class's replay) each stay in one file with their
 * callees.
 *
 * Every cache, what it holds, how it follows the cluster and what throws
 * it away. "The log" is the ledger's change log of slots whose counters
 * moved (ledger_changes_head(); a reader a whole ring behind rebuilds);
 * "a generation" is a new cluster snapshot (a node event).
 *
 * cache (field)            | cursor or epoch            | invalidated by
 * -------------------------+----------------------------+---------------------------------
 * class cache (table,      | e->generation              | a generation it cannot follow
 *   eclass)                |                            | node by node: flushed (sync_flush);
 *                          |                            | else class_node_changed() per slot;
 *                          |                            | the byte budget evicts cold ones
 *                          |                            | (evict_cold), sweep_prepared the
 *                          |                            | prepared ones not asked for again
 * seen (specs by hash)     | seen.head: the log's head  | a flush (zeroed); a hash collision
 *                          | at the last sight          | only compiles a class early
 * by_static (classes by    | none: direct mapped; read  | a flush, evict_cold() or
 *   static spec)           | only when pod_static_equal | sweep_prepared(): zeroed, the kept
 *                          | holds                      | classes entered again; a later
 *                          |                            | class of the same slot overwrites
 * by_address (spec address | spec_memo.epoch against    | any class freed: class_epoch++
 *   to class)              | e->class_epoch             | (class_free); a memo entry is also
 *                          |                            | compared with the spec before use
 * run_pod, run_k (a run's  | run_epoch against          | any class freed (as by_address);
 *   last pod, GC2)         | e->class_epoch             | engine_run_end and _begin: NULL;
 *                          |                            | no comparison: the run's caller
 *                          |                            | keeps its specs unchanged
 * shards (most free per    | e->shard_log_pos; dirty    | a log entry in the shard or a
 *   SNAP_SHARD_SLOTS)      | mark per shard             | node event: dirty, recomputed when
 *                          |                            | read (shard_refresh); the log
 *                          |                            | overrun: all dirty
 * shared evaluations (eval)| eval.log_pos; eval.epoch   | the log overrun: eval_rebuild()
 *                          | moves on each rebuild      | (epoch++); a node event it holds:
 *                          |                            | eval_follow(); its last class gone:
 *                          |                            | freed (eval_release); a flush
 * eval ring (eval.ring,    | eval.head against each     | a class EVAL_RING or more behind,
 *   slots whose result     | class's eclass.eval_pos    | or at another eval.epoch: that
 *   changed)               |                            | class's index_rebuild()
 * eval table (e->eval_leaf,| none: a column per eval    | an eval freed: its column zeroed
 *   a row per slot)        |                            | (EVAL_UNHELD) and reused; resized
 *                          |                            | by doubling/halving
 *                          |                            | (eval_table_resize)
 * warm evals (warm[],      | e->warm_pos, warm_from     | an eval no class read for
 *   groups, warm_slow)     | (no warm eval behind it),  | EVALS_WARM_CHANGES changes: cold
 *                          | warm_checked; eval.used_pos| (checked every 64); warm[] moved:
 *                          |                            | warm_changed, regrouped
 * class index (eclass.ix,  | eclass.log_pos (or via its | the log overrun, another mix
 *   word, dyn)             | eval: eval_pos, eval_epoch)| epoch, another eval epoch, a leaf
 *                          | eclass.mix_epoch;          | that holds the inter-pod filter
 *                          | ix_ip, ix_builds           | with a view built again, a node
 *                          |                            | event it cannot follow in place
 *                          |                            | (index_drop): index_rebuild()
 * node rows (e->rows)      | rows.log_pos; rows.n_slots | the log (node_rows_sync); a
 *                          | (built, build_pos while    | generation: the slot's row copied;
 *                          | warming)                   | a flush: node_rows_forget()
 * per-class positions:     | eclass.last_use (the log's | a class is hot while its pods come
 *   last_use, prepared_ns  | head at its last pod);     | within numFeasibleNodesToFind
 *                          | prepared_ns (e->clock_ns)  | changes; prepared and unused for
 *                          |                            | ENGINE_PREPARED_TTL_NS: freed
 *                          |                            | (sweep_prepared)
 * fragmentation memo       | frag_before.epoch against  | a new mix (mix.epoch moves at the
 *   (e->before per slot,   | mix.epoch + 1, and the     | counter's refresh points); a node
 *   e->memo growth)        | node's cpu and GPU free;   | event: the slot's entry reset, its
 *                          | growth_memo.stamp against  | stamp kept moving (no old growth
 *                          | frag_before.stamp          | matches); a flush: zeroed
 * device score scale       | e->generation; per slot    | a generation where the cpu maximum
 *   (cpu_max, gpu_max,     | e->gpu_counted             | or a changed slot's GPUs moved:
 *   models)                |                            | flushed with every cache
 * inter-pod views          | interpod_view_log_pos(ipv),| kept by workers/interpod.c from
 *   (eclass.ipv)           | interpod_view_builds(ipv)  | the log; freed with its class
 *
 * None is shared between threads: one engine per worker.
 */
#ifndef SHMSCHED_WORKERS_ENGINE_TYPES_INTERNAL_H
#define SHMSCHED_WORKERS_ENGINE_TYPES_INTERNAL_H

#include "workers/engine.h"

#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "workers/candidates_internal.h"
#include "workers/class_index_internal.h"
#include "workers/device_choice.h"
#include "workers/diagnosis_internal.h"
#include "workers/frag_internal.h"
#include "workers/interpod.h"
#include "workers/leaf_fast_internal.h"
#include "workers/pod_class.h"

/* What leaf_eval() reads of a pod, fixed once per class or eval: the
 * resources NodeResourcesFit checks, the counters the plugins read (pods,
 * the requested resources and the scored ones: they read no other), and
 * the plugins' per-pod switches. */
struct leaf_plan {
	const struct pod_spec *pod;
	uint8_t n_requested;   /* resources the pod requests (> 0), pods excluded */
	uint8_t requested[RES_MAX];
	uint8_t n_load;
	uint8_t load[RES_MAX];
	bool skip_balanced;    /* BalancedAllocation's PreScore skip */
	bool devices;          /* leaves read devices (the pod wants some, or
				* a device score is on) */
	struct score_plan score;
	/* The common case, evaluated by leaf_fast() and leaf_scan()
	 * (workers/leaf_fast_internal.h) with `f`. */
	bool fast;
	struct leaf_fast_plan f;
};

/* A shared evaluation: everything leaf_eval() reads of a pod but the
 * inter-pod filter (its profile, requests, stand-ins and host ports).
 * The classes whose pods share one (and whose leaves read no devices and
 * hold no inter-pod filter) share its evaluation of every node they
 * contain: the eval re-reads each node the change log names once, for
 * all of them, and keeps a ring of the slots whose result changed, which
 * each class replays into its index at its next pod. A class only reads
 * results; the eval evaluates the union of its classes' feasible
 * slots. */
#define EVAL_RING 4096u /* a power of two */

/* Re-measured by the engine's pods/s at 10,000 and 100,000 nodes on the
 * default workload (40 templates, ~25 evals, ~15 following a change):
 *   shmsched-bench --sweep-nodes 10000,100000 --sweep-runs 3 --no-reference --no-quality */
#define EVALS_WARM_CHANGES 256 /* an eval read by a class within this many
				 * changes is warm */
#define EVALS_WARM_MAX 32      /* warm evals synced together, at most */
/* The eval table's columns, at least. 64, the default workload's
 * evals: each doubling copies every row, and at 100,000 nodes the one
 * from 32 to 64 columns (51 MB, faulted in as it was copied) stopped a
 * pod for 153 ms; the table is calloc'd, so columns no eval uses cost
 * address space only (a row's page is backed once any eval holds it). */
/* Re-measured by the worker's service time (its p99.9, "pods over 1 ms")
 * and the statistics' shape_resizes at 100,000 nodes:
 *   shmsched-bench --nodes 100000 --running 1000000 --no-reference --no-quality */
#define EVAL_COLS_MIN 64

/* An eval's result on one slot: both in one 8-byte entry, in the
 * engine's eval table (a row per slot, a column per eval), so a change
 * that ~20 warm evals follow reads one row, a few adjacent cache lines,
 * not a line in each eval's own array (and not three per eval: the
 * member bit, the reasons and the score once lived apart). */
struct eval_leaf {
	/* The dynamic reasons' complement (leaf_mask()): an entry of zeros,
	 * as calloc() leaves the table and a freed eval leaves its column
	 * (eval_release), is EVAL_UNHELD, so a new eval's column needs no
	 * pass over every row (at 100,000 nodes that pass took a pod's
	 * compile step 1-2 ms). */
	uint32_t nmask;
	int32_t d;     /* the weighted dynamic score if it passes */
};
#define EVAL_UNHELD UINT32_MAX /* no MASK_* set has every bit */

struct eval {
	uint64_t hash;
	struct pod_spec spec;  /* the fields of the key only; the rest 0 */
	struct leaf_plan plan;
	uint32_t refs;         /* classes using it */
	uint32_t n_slots;      /* of the generation it was made in */
	uint64_t *member;      /* [words]: slots evaluated (a class holds them);
				* its leaves say it per slot (EVAL_UNHELD: not) */
	uint32_t col;          /* its column of the engine's eval table */
	uint64_t log_pos;      /* the cluster's change log, read up to here */
	uint64_t used_pos;     /* the log's head when a class last read it */
	bool warm;             /* in the engine's warm[] (evals_sync_warm) */
	uint64_t epoch;        /* moves on each rebuild: its classes rebuild */
	uint64_t head;         /* slots ever appended to the ring */
	uint32_t ring[EVAL_RING];
	size_t bytes;
	struct eval *next;    /* in the engine's list */
};

/* Four warm evals whose plans are fast, evaluated together
 * (evals_sync_warm()). */
struct warm_group {
	struct eval *sh[4];
	unsigned n;
	struct leaf_plans plans; /* theirs, by lane */
};

/* Nodes per dynamic reason (the leaves' MASK_* bits), counted: a class's
 * over its feasible slots as its index follows them, or one scan's. */
struct reason_counts {
	uint32_t pods, ports, gpu, cores, anti, existing_anti;
	uint32_t insufficient[RES_MAX];
};

struct eclass {
	uint64_t hash;
	struct pod_spec spec;  /* ns_name zeroed: the key is the rest */
	uint32_t n_feasible;   /* statically feasible slots */
	uint32_t *feasible;    /* [n_feasible] in slot order */
	int32_t *affinity_raw; /* [n_slots] or NULL when not scored */
	int32_t *taint_raw;    /* [n_slots] or NULL when not scored */
	uint32_t raw_set;      /* slots with a raw score not 0 (at least):
				* 0 lets select_plain() skip both arrays */
	size_t bytes;
	struct leaf_plan plan; /* of spec */
	/* Its eval, once indexed (NULL when its leaves read devices): while
	 * its leaves hold no inter-pod filter they come from the eval's
	 * results, replayed from its ring up to eval_pos. */
	struct eval *eval;
	uint64_t eval_pos, eval_epoch;

	/* The index (class_index.h), when the class has at most
	 * CLASS_INDEX_MAX_GROUPS distinct pairs of static raw scores; else
	 * the class scans its feasible slots. */
	bool indexed;
	struct class_index ix;
	unsigned n_groups;
	int32_t group_taint[CLASS_INDEX_MAX_GROUPS]; /* static raw scores */
	int32_t group_aff[CLASS_INDEX_MAX_GROUPS];
	/* The index's positions are slots (n_pos, the snapshot's slots when
	 * it was made). Per slot one word (CW_*): whether the slot is a
	 * member (statically feasible), its group, and its leaf's dynamic
	 * reasons (MASK_*; 0 passes). One word, so that a change replayed
	 * into the index reads one line of the class's own before the
	 * index's: as three arrays (a member bitmap, the groups, the
	 * reasons) they were three misses, the second waiting on the first,
	 * at 100,000 nodes. */
	uint32_t n_pos;
	uint32_t *word;        /* [n_pos] by slot */
	/* Nodes per dynamic reason, over the feasible slots; with static_diag
	 * (the statically infeasible nodes' reasons) the whole diagnosis. */
	struct reason_counts dyn;
	struct diagnosis *static_diag;
	/* [n_pos] the static reason of each present slot that is not
	 * feasible (code 0 otherwise), so a node event takes back its old
	 * reason (class_node_changed). */
	struct reason *why;
	uint64_t log_pos;      /* the cluster's change log, read up to here */
	uint64_t last_use;     /* the change log's head at the class's last pod */
	uint64_t mix_epoch;    /* the fragmentation mix its leaves were scored with */
	/* Its leaves hold the inter-pod filter too (interpod_node_local), read
	 * from the class's view as of that view's build number ix_builds. */
	bool ix_ip;
	uint64_t ix_builds;
	/* Compiling, a bounded amount at a time (class_work): the phase it
	 * is in and how far it got; whether it is to be indexed once its
	 * static results are in (a registered template's class, or a hot
	 * one), and its place in the queue of classes being compiled. */
	uint8_t phase;         /* enum class_phase */
	uint32_t cursor;
	bool want_index;
	bool queued;
	struct eclass *next_pending;
	/* For a class under inter-pod rules: its counts, kept from the
	 * change log (workers/interpod.h); NULL until its first such pod. */
	struct interpod_view *ipv;
	uint8_t ip_keys;       /* 1: every feasible slot has the hard spread
				* constraints' keys; 2: not; 0: not known */
	uint64_t prepared_ns;  /* e->clock_ns() at engine_prepare's last ask; 0: none */
};

/* A class's word per slot (eclass.word). */
#define CW_REASONS 0x00ffffffu /* the leaf's MASK_* bits */
#define CW_GROUP_SHIFT 24      /* 3 bits: its group in the index */
#define CW_MEMBER (1u << 31)   /* statically feasible: the index holds it */
_Static_assert((MASK_RES(RES_MAX - 1) | MASK_GPU | MASK_CORES | MASK_ANTI |
		MASK_EXISTING_ANTI) <= CW_REASONS, "the reasons fit a class word");
_Static_assert(CLASS_INDEX_MAX_GROUPS <= 8, "a group fits 3 bits");

/* A class's compile, a bounded amount of work at a time (class_work). */
enum class_phase {
	PHASE_STATIC = 0, /* static filters and scores, slot by slot */
	PHASE_SCAN,       /* compiled: its pods scan its static results */
	PHASE_GROUPS,     /* its index: members and groups, feasible slot by slot */
	PHASE_EVAL,      /* its eval evaluates its slots, 64 at a time */
	PHASE_FILL,       /* the leaves, from the eval's results or its own */
	PHASE_DONE,       /* indexed, or refused an index (k->indexed false) */
};

/* What each step costs, in about instructions, against a budget: a pod
 * gives ENGINE_POD_BUDGET to the classes being compiled, an idle worker
 * ENGINE_IDLE_BUDGET per call. */
#define COST_STATIC 200 /* a slot's static filters and scores */
#define COST_GROUP 10   /* a feasible slot's member bit and group */
#define COST_EVAL 100   /* a leaf evaluated */
#define COST_FILL 25    /* a leaf copied from an eval */
#define ENGINE_POD_BUDGET 20000
/* An idle call's: a pod that arrives meanwhile waits for it. At 200,000
 * (and 2,048 rows) calls took 0.1-0.9 ms on cold memory, where the costs
 * above count instructions. Both re-measured by the open-loop latency
 * (p99, p99.9: a pod that waits for an idle call) at 100,000 nodes:
 *   shmsched-bench --nodes 100000 --running 1000000 --no-reference --no-quality
 * and ENGINE_POD_BUDGET by the same run's closed-loop service time. */
#define ENGINE_IDLE_BUDGET 50000
#define ENGINE_IDLE_ROWS 512u /* node rows an idle call copies */

#define SEEN_SLOTS 65536u /* a power of two */
#define SIBLING_STREAK 2u /* hot sights in a row before a sibling's class */
#define LAST_USE_NEVER UINT64_MAX /* eclass.last_use of a class with no pod yet */
#define STATIC_SLOTS 4096u /* a power of two */
#define SPEC_MEMO 64u       /* a power of two */

/* A spec's address and the class found for it (engine.by_address): a pod
 * without extras is its template's spec itself (ingest/record.h), so the
 * same address comes again and again. */
struct spec_memo {
	const struct pod_spec *spec;
	struct eclass *k;
	uint64_t epoch; /* engine.class_epoch then */
};

/* A spec's last sight (engine.seen). */
struct seen {
	uint64_t hash;
	uint64_t head;    /* ledger_changes_head() then */
	uint32_t streak;  /* sights in a row each within `want` changes of
			   * the one before */
};

struct candidate {
	uint32_t slot;
	int64_t raw[SCORE_PLUGINS];
	int64_t dyn; /* dynamic_total() of raw: score_dynamic's, or a leaf's */
};

struct shard_free {
	int64_t max_free[RES_MAX];
	uint16_t live;  /* resources some node of the shard has (a bit each) */
	bool dirty;
};

/* A node's fragmentation for the state it was computed in: every class
 * that re-scores a node after a change asks for the same one. */
struct frag_before {
	uint64_t epoch; /* of the mix; 0: never computed */
	int64_t cpu_left;
	uint16_t gpu_free[NODE_MAX_GPUS];
	int64_t value;
	uint32_t stamp; /* +1 per recompute: names this state in growth_memo */
};

/* Growth of fragmentation per (node state, pod shape): classes whose pods
 * differ in what GpuFragmentation does not read (memory, selectors, ...)
 * re-score a changed node with the same growth; the first computes it.
 * Direct mapped; an entry is good while its slot's stamp is unchanged. */
#define GROWTH_MEMO_SLOTS 16384u /* a power of two */
struct growth_memo {
	uint32_t slot, stamp;  /* stamp 0: empty */
	int64_t cpu;           /* the pod's cpu request */
	uint16_t milli;
	uint8_t num_gpu;
	int8_t gpu;            /* frag_growth's device */
	int64_t growth;
};

struct engine {
	struct cluster *cluster;
	struct ledger *ledger;  /* the cluster's: live use, the change log */
	struct plugin_ctx ctx;
	struct sched_config cfg;
	uint64_t seed;

	uint64_t generation;   /* of the snapshot the caches were built for */
	uint32_t strings_epoch; /* the intern table's epoch they were built at:
				 * moved by a run-time reclaim, which may free
				 * and reuse ids they hold (sync_generation) */

	uint32_t n_slots;      /* its slots (classes' positions) */
	uint32_t *changed;     /* [CLUSTER_SPEC_LOG] scratch: slots a node event changed */
	struct eclass **table; /* open addressing, NULL = empty */
	uint32_t table_mask;
	uint32_t n_classes;
	size_t class_bytes, class_bytes_max;
	uint64_t next_sweep_ns; /* sweep_prepared's next look */
	uint64_t (*clock_ns)(void); /* prepared_ns and the sweep's (engine_set_clock) */

	/* Specs seen, by hash, with the change-log head at their last sight:
	 * a class is compiled on its second pod, so a unique pod pays a
	 * sampled reference scan, not a full compile. A collision only
	 * compiles a class early. */
	struct seen *seen;

	/* Classes by the static part of their spec (pod_class.h), direct
	 * mapped: a first-sight pod that differs from a compiled class only
	 * in its requests scans that class's static results. */
	struct eclass *by_static[STATIC_SLOTS];

	/* Compiled classes by spec address, direct mapped (class_get); an
	 * entry holds while no class has been freed since (class_epoch). */
	struct spec_memo by_address[SPEC_MEMO];
	uint64_t class_epoch;  /* classes freed, ever */

	/* Scratch: the class key of a pod on the fast path whose inter-pod
	 * group is not 0 (fast_key(), engine.c). */
	struct pod_spec key_spec;

	/* GC2 (engine_run_begin): inside a run, the last fast-path pod's
	 * spec address, its class and class_epoch then; run_pod NULL
	 * outside a run or before its first such pod. */
	bool in_run;
	const struct pod_spec *run_pod;
	struct eclass *run_k;
	uint64_t run_epoch;

	struct shard_free *shards;
	uint32_t n_shards;
	uint64_t shard_log_pos; /* the change log, applied to shards up to here */

	struct candidate *cand; /* [capacity] */
	int64_t *tmp;           /* [capacity] scratch for normalising */
	struct diagnosis diag;
	uint32_t diag_all_nodes;
	bool diag_no_nodes;
	bool diag_conflict; /* NodeAffinity PreFilter's rejection: its message */

	/* Device scores: the largest node's cpu and GPU milli (GpuBestFit's
	 * scale), per snapshot generation; the pod shapes seen and the mix
	 * GpuFragmentation scores against. */
	int64_t cpu_max, gpu_max;
	struct frag_counter *frag_count;
	struct frag_mix mix;
	struct frag_before *before; /* [capacity] per slot */
	struct growth_memo *memo;   /* [GROWTH_MEMO_SLOTS] */
	struct frag_models models;  /* GPU models: capacity, pressure */
	/* [capacity] per slot: what the slot's node added to `models` and
	 * gpu_max at the last flush (gpu_counted()), so a new generation
	 * compares only its changed slots with it. */
	uint64_t *gpu_counted;

	/* Inter-pod rules (workers/interpod.h): the plugins' state, each
	 * profile's arguments, and whether they apply to the pod in hand. */
	struct interpod *ip;
	struct interpod_args ip_args[SCHED_MAX_PROFILES];
	bool ip_on;
	uint32_t *slots; /* [capacity] the candidates' slots, for PreScore */

	/* Shared evaluations of indexed classes (struct eval), in a list, and
	 * their results in one table: row `slot`, column sh->col (leaf_of()).
	 * Its rows are the cluster's capacity, allocated untouched, so only
	 * the rows of slots in use are backed. Its columns double when none
	 * is free and halve when three quarters are (eval_table_resize());
	 * a freed eval's column is taken again. The class cache's budget
	 * counts the table whole, free columns too (eval_table_size()). */
	struct eval *evals;
	struct eval_leaf *eval_leaf; /* [capacity][eval_cols] */
	uint32_t eval_cols;
	uint32_t eval_rows;           /* rows any eval has held: copied, counted */
	uint32_t *eval_free;          /* [eval_cols] free columns, a stack */
	uint32_t n_eval_free;
	uint32_t eval_cols_min;       /* EVAL_COLS_MIN, or a test's */
	/* The evals read by a class lately (evals_sync_warm), apart from
	 * the list: walking 64 evals of 12 KiB each cost a miss each. */
	struct eval *warm[EVALS_WARM_MAX];
	unsigned n_warm;
	bool warm_changed;      /* warm[] moved since warm_regroup() */
	uint32_t warm_col_end;  /* past the last warm eval's column: the part
				 * of a row the warm pass prefetches */
	struct warm_group groups[EVALS_WARM_MAX / 4]; /* the fast ones, by four */
	unsigned n_groups;
	struct eval *warm_slow[EVALS_WARM_MAX]; /* the others */
	unsigned n_slow;
	uint64_t warm_pos;      /* the log's head at the last evals_sync_warm() */
	uint64_t warm_from;     /* no warm eval has read less of the log */
	uint64_t warm_checked;  /* the head when cold evals were last let go */

	/* What scans read of each node, a row per slot, following the change
	 * log and the snapshots. */
	struct node_rows rows;

	/* Classes being compiled, in a queue, and the budget a pod gives
	 * them (engine_set_compile_budget), while pods pay at all
	 * (engine_set_busy). */
	struct eclass *pending, *pending_tail;
	uint64_t pod_budget;
	bool pods_pay;

	struct engine_stats stats;
};

/* A node as the plugins see it: its spec, and its counters (and, for a pod
 * with host ports, its ports) read atomically into `r` by read_node(). */
struct node_read {
	struct res_vec used;
	struct host_port ports[NODE_MAX_HOST_PORTS];
	struct device_view dev;
	struct node_view v;
};

/* What both paths fix before visiting nodes, the same way for the same pod. */
struct pass {
	uint64_t rng;        /* this pod's random stream */
	uint32_t start;      /* the slot the visit starts at */
	uint32_t want;       /* numFeasibleNodesToFind */
	bool skip_balanced;  /* BalancedAllocation's PreScore skip */
	bool affinity;       /* NodeAffinity scores (wants_affinity_score) */
	const struct score_config *sc; /* the pod's profile's */
	struct score_plan plan; /* the pod's fit and balance scores: the literal
				 * path's only (the fast paths score from their
				 * leaf plans), so made there */
};

/* Changes read and prefetched ahead of their evaluation. Re-measured by
 * the engine's pods/s at 100,000 nodes (misses dominate there):
 *   shmsched-bench --sweep-nodes 100000 --sweep-runs 3 --no-reference --no-quality */
#define EVAL_SYNC_BATCH 16

/* Inline across the files: each was inlined into its callers when the
 * engine was one file. None calls a function of an engine file (those
 * that do are in that file's header: leaf_eval(), eval_add_word()). */

/* The reasons of an eval's leaf: 0 passes, EVAL_UNHELD not a member. */
static inline uint32_t leaf_mask(const struct eval_leaf *l)
{
	return ~l->nmask;
}

static inline uint32_t cw_reasons(uint32_t w)
{
	return w & CW_REASONS;
}

static inline unsigned cw_group(uint32_t w)
{
	return (w >> CW_GROUP_SHIFT) & 7u;
}

/* The pod's profile: its plugins' weights and args, and the inter-pod
 * plugins' args. Every pod reaching them has a profile below n_profiles
 * (engine_place and engine_place_reference check it). Classes key on the
 * profile (pod_class.h), so a class's results are its profile's. */
static inline const struct score_config *sc_of(const struct engine *e,
						const struct pod_spec *pod)
{
	return &e->cfg.profiles[pod->profile].score;
}

static inline const struct interpod_args *args_of(const struct engine *e,
						   const struct pod_spec *pod)
{
	return &e->ip_args[pod->profile];
}

static inline bool profile_ok(const struct engine *e, const struct pod_spec *pod)
{
	return pod->profile < e->cfg.n_profiles;
}

/* Whether a filter or score reads the devices of a node for `pod`. */
static inline bool reads_devices(const struct engine *e, const struct pod_spec *pod)
{
	const struct score_config *sc = sc_of(e, pod);
	return devices_wanted(pod) || sc->weight_gpu_best_fit || sc->weight_gpu_frag;
}

/* NodeAffinity's score runs when it has terms to score: the pod's
 * preferred terms or its profile's added ones (PreScore's Skip). */
static inline bool affinity_scored(const struct score_config *sc, const struct pod_spec *pod)
{
	return sc->weight_affinity > 0 &&
	       (pod->n_preferred > 0 ||
		(sc->has_added_affinity && sc->added_affinity.n_preferred > 0));
}

static inline bool wants_affinity_score(const struct engine *e, const struct pod_spec *pod)
{
	return affinity_scored(sc_of(e, pod), pod);
}

/* The resources a pod requests (> 0), the pod count excluded: the only
 * ones NodeResourcesFit checks. Returns how many. */
static inline uint8_t requested_of(const struct pod_spec *pod, uint8_t out[RES_MAX])
{
	uint8_t n = 0;
	for (int r = 0; r < RES_MAX; r++)
		if (r != RES_PODS && pod->request.v[r] > 0)
			out[n++] = (uint8_t)r;
	return n;
}

/* Whether the slot is one of the class's statically feasible ones (a
 * position of its index). */
static inline bool class_member(const struct eclass *k, uint32_t slot)
{
	return slot < k->n_pos && (k->word[slot] & CW_MEMBER) != 0;
}

/* How far the index may read the change log: to its head, or for leaves
 * that hold the inter-pod filter, to where the class's view has counted
 * (a later change is read again once the view has it). */
static inline uint64_t index_head(const struct engine *e, const struct eclass *k)
{
	uint64_t head = ledger_changes_head(e->ledger);
	if (k->ix_ip) {
		uint64_t v = interpod_view_log_pos(k->ipv);
		head = v < head ? v : head;
	}
	return head;
}

/* Eval sh's result on `slot` (slot < sh->n_slots). */
static inline struct eval_leaf *leaf_of(const struct engine *e, const struct eval *sh,
					 uint32_t slot)
{
	return &e->eval_leaf[(size_t)slot * e->eval_cols + sh->col];
}

/* d fits an int32: index_begin() takes only profiles whose weights
 * keep it so. */
static inline void eval_store(const struct engine *e, const struct eval *sh, uint32_t slot,
			      uint32_t m, int64_t d)
{
	*leaf_of(e, sh, slot) = (struct eval_leaf){~m, m == 0 ? (int32_t)d : 0};
}

/* Whether eval sh holds `slot`. */
static inline bool eval_holds(const struct engine *e, const struct eval *sh,
			       uint32_t slot)
{
	return slot < sh->n_slots && leaf_mask(leaf_of(e, sh, slot)) != EVAL_UNHELD;
}

/* The node's allocatable: a line in each of three arrays. */
static inline void prefetch_allocatable(const struct snapshot *s, uint32_t slot)
{
	__builtin_prefetch(&s->allocatable[RES_CPU][slot]);
	__builtin_prefetch(&s->allocatable[RES_MEMORY][slot]);
	__builtin_prefetch(&s->allocatable[RES_PODS][slot]);
}

/* The slot's row of eval results, as far as the last warm eval's
 * column (the table is 64 columns or more; the free ones at the end are
 * not read) and within the row (warm_col_end is made again by the warm
 * pass after a resize, so between the two it may name columns a halved
 * table lacks). Always inlined: a helper that only prefetches, in a loop,
 * GCC may find "looping pure" and delete (class_index.c's
 * prefetch_block()). */
static inline __attribute__((always_inline)) void
prefetch_eval_row(const struct engine *e, uint32_t slot)
{
	if (slot >= e->eval_rows)
		return;
	uint32_t cols = e->warm_col_end < e->eval_cols ? e->warm_col_end : e->eval_cols;
	const char *row = (const char *)(e->eval_leaf + (size_t)slot * e->eval_cols);
	size_t len = cols * sizeof(*e->eval_leaf);
	for (size_t at = 0; at < len; at += 64)
		__builtin_prefetch(row + at);
}

/* A class reads the eval now: it is warm (evals_sync_warm()). */
static inline void eval_used(struct engine *e, struct eval *sh)
{
	sh->used_pos = ledger_changes_head(e->ledger);
	if (!sh->warm && e->n_warm < EVALS_WARM_MAX) {
		sh->warm = true;
		/* It joins after its own sync, so at or past warm_from; the
		 * minimum keeps the invariant from resting on that. */
		if (e->n_warm == 0 || sh->log_pos < e->warm_from)
			e->warm_from = sh->log_pos;
		e->warm[e->n_warm++] = sh;
		e->warm_changed = true;
	}
}

/* Whether the class's leaves come from its eval (no inter-pod filter in
 * them, and it has one). */
static inline bool from_eval(const struct eclass *k)
{
	return k->eval != NULL && !k->ix_ip;
}

static inline void index_counts_reset(struct eclass *k)
{
	memset(&k->dyn, 0, sizeof(k->dyn));
}

static inline void pending_push(struct engine *e, struct eclass *k)
{
	if (k->queued)
		return;
	k->queued = true;
	k->next_pending = NULL;
	if (e->pending_tail != NULL)
		e->pending_tail->next_pending = k;
	else
		e->pending = k;
	e->pending_tail = k;
}

/* Whether class k has nothing left to compile. */
static inline bool class_settled(const struct eclass *k)
{
	return k->phase == PHASE_DONE || (k->phase == PHASE_SCAN && !k->want_index);
}

/* Whether slot's raw static scores are not both 0 (k->raw_set). */
static inline bool raw_of(const struct eclass *k, uint32_t slot)
{
	return (k->affinity_raw != NULL && k->affinity_raw[slot] != 0) ||
	       (k->taint_raw != NULL && k->taint_raw[slot] != 0);
}

/* Adds `bytes` to the class and to the cache. */
static inline void class_grew(struct engine *e, struct eclass *k, size_t bytes)
{
	k->bytes += bytes;
	e->class_bytes += bytes;
}

/* The snapshot's allocatables, as the rows copy them. */
static inline struct node_allocatable allocatable_of(const struct snapshot *s)
{
	return (struct node_allocatable){
		.cpu = s->allocatable[RES_CPU],
		.mem = s->allocatable[RES_MEMORY],
		.pods = s->allocatable[RES_PODS],
	};
}

#endif
