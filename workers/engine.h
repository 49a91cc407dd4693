/* The placement engine: one pod in, a node (or the reasons none fits) out.
 *
 * Two paths over the same plugins (workers/plugins.h):
 * - engine_place_reference(): kube-scheduler's algorithm done literally:
 *   visit every node from the start offset, run every filter, stop after
 *   numFeasibleNodesToFind feasible nodes, score each, pick the best.
 * - engine_place(): the fast path. Pods with equal scheduling specs share an
 *   equivalence class whose static filters (NodeUnschedulable, NodeName,
 *   TaintToleration, NodeAffinity) and static raw scores (preferred
 *   affinity, PreferNoSchedule taints) are computed once per snapshot
 *   generation; a pod then visits only its class's statically feasible
 *   nodes, skips whole shards whose most free node cannot hold it, and runs
 *   only the dynamic filters (NodePorts, NodeResourcesFit).
 *   A class whose pods come often answers from an index kept exact through
 *   the cluster's change log instead of visiting nodes (engine.c).
 * Both visit nodes (or answer as if they did) in the same cyclic order
 * from the same start and draw the same random numbers, so for the same
 * seed and pod sequence number they choose the same node, at any
 * percentageOfNodesToScore (the property test, tests/workers/test_engine.c,
 * checks it).
 * A spec's first pod takes the reference scan (or scans the static results
 * of a class that differs only in requests); its class is compiled when a
 * second pod with the same spec comes, so unique pods never pay for a
 * compile over every node.
 *
 * Sampling: as kube-scheduler's numFeasibleNodesToFind (fewer than 100
 * nodes: all; else percentageOfNodesToScore, or its adaptive default
 * max(5, 50 - nodes/125) %, at least 100 nodes). The start offset is drawn
 * at random per pod from --seed (kube-scheduler rotates it instead).
 * Ties between best total scores are broken at random, uniformly as
 * selectHost's reservoir sampling does, with one draw: the k-th tied node
 * in visiting order.
 *
 * Concurrency: one engine per thread. The calling thread must be a
 * registered QSBR reader of the cluster (shm/cluster.h) and must not keep
 * results that point into a snapshot across a quiescent state. The engine
 * only places: a placement is committed by bind/commit.h on the ledger
 * (shm/ledger.h), lock-free and safe beside other engines' commits.
 */
#ifndef SHMSCHED_WORKERS_ENGINE_H
#define SHMSCHED_WORKERS_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shm/shm.h"
#include "workers/plugins.h"
#include "workers/score_config.h"

struct engine;
struct class_static;


/* struct placement's devices when the devices it chose were taken between
 * the filter and the choice (another engine's commit): the commit
 * (bind/commit.h) refuses it, as any lost race. */
#define DEVICES_STALE UINT16_MAX

struct placement {
	int64_t slot;       /* the chosen node's slot; -1 when unschedulable */
	int64_t score;      /* its weighted total, in thousandths (SCORE_FINE) */
	struct device_assignment devices; /* what the commit reserves */
	uint32_t feasible;  /* feasible nodes found and scored */
	uint32_t all_nodes; /* nodes in the snapshot */
};

/* Called by engine_place_reference() for --explain. */
struct engine_explain {
	void *arg;
	void (*filtered)(void *arg, uint32_t slot, const struct reason *reasons,
			 unsigned n);
	void (*scored)(void *arg, uint32_t slot,
		       const int64_t scores[SCORE_PLUGINS], int64_t total);
};

struct engine_stats {
	uint64_t pods;
	uint64_t class_hits, class_misses, class_flushes;
	uint64_t class_evictions; /* cold classes dropped over the memory budget */
	uint64_t first_sights;   /* pods placed without a class of their own:
				  * specs seen once (by the reference scan),
				  * and cold siblings */
	uint64_t static_reuses;  /* ... or by a scan over the static results of a
				  * class that differs only in requests */
	uint64_t nodes_checked;  /* dynamic filter runs in the fast path */
	uint64_t shards_skipped;
	uint64_t diagnosis_scans;
	uint64_t indexed_pods;   /* placed through a class index */
	uint64_t index_updates;  /* leaves re-read from the change log */
	uint64_t index_rebuilds; /* whole indexes re-read */
	/* The shared evaluations (engine_evals.c; once called "request
	 * shapes", the name these counters and daemon/daemon.c keep): */
	uint64_t shapes;         /* shared evaluations made */
	uint64_t shape_shares;   /* classes that joined one made before */
	uint64_t shape_evals;    /* nodes evaluated by them */
	uint64_t shape_rebuilds; /* whole evaluations re-read */
	uint64_t shape_resizes;  /* their table resized with some live */
	uint64_t prepared;       /* classes queued by engine_prepare() */
	uint64_t static_adopted; /* ... whose static results came with them */
	uint64_t node_changes;   /* changed nodes followed one by one (no flush) */
	uint64_t static_siblings; /* classes whose static results were copied
				   * from a class that differs only in requests */
	uint64_t pruned_scans;   /* scans of a pod that asks more than its
				  * class, over that class's index (scan_pruned) */
	uint64_t cold_siblings;  /* pods of a spec seen before that differs
				  * from a class only in requests, not hot enough
				  * for a class of its own: scanned over that
				  * class's static results (class_get) */
	uint64_t interpod_pods;  /* placed under inter-pod rules */
	uint64_t interpod_viewed; /* ... of them through a class's view */
	uint64_t interpod_uniform; /* ... of those, where the rules changed
				    * nothing (placed as under no rule) */
	uint64_t interpod_node_local; /* ... where the filter was node-local
				       * (the class index holds it) */
	uint64_t interpod_leaf_scans; /* ... scanned over the class index's
				       * leaves */
};

/* Creates an engine over `c` with the plugins' strings `ctx` and profiles
 * `cfg` (copied; 1..SCHED_MAX_PROFILES of them). `class_cache_bytes`
 * bounds the memory of cached classes (0: ENGINE_CLASS_BYTES_PER_SLOT per
 * slot of the cluster's capacity, at least 256 MiB). Returns NULL with
 * errno ENOMEM or EINVAL. */
/* A class's arrays are per slot (about 13 bytes a slot for an indexed
 * class in shmsched-bench): 4 KiB a slot keeps a few hundred classes at
 * any cluster size. 256 MiB alone held too few at 100,000 nodes, and each
 * eviction dropped hot classes whose compiles then ran on pods' paths. */
#define ENGINE_CLASS_BYTES_PER_SLOT 4096u

struct engine *engine_create(struct cluster *c, const struct plugin_ctx *ctx,
			     const struct sched_config *cfg, uint64_t seed,
			     size_t class_cache_bytes);
void engine_destroy(struct engine *e);

/* Places `pod`, the `seq`-th pod of the run (seeds its random draws), with
 * the fast path, by its profile's plugins (pod->profile, an index into the
 * configuration's profiles). Does not commit. Returns 0 (see out->slot),
 * -ENOMEM, or -EINVAL when pod->profile is not one of the configuration's
 * (ingest/ never makes such a pod). */
int engine_place(struct engine *e, const struct pod_spec *pod, uint64_t seq,
		 struct placement *out);

/* The same with the literal reference algorithm; `x` may be NULL. The
 * same errors. */
int engine_place_reference(struct engine *e, const struct pod_spec *pod,
			   uint64_t seq, const struct engine_explain *x,
			   struct placement *out);

/* The devices `pod` would take on `slot` as the node is now, chosen as
 * engine_place() chooses them for its own pick (a sharing pod: the device
 * GpuFragmentation's score assumed, when that score is on; else the best
 * fit); out->slot is set to `slot`. For a caller that picks the node by a
 * rule of its own (the trace replay's emulation of another scheduler's
 * tie-break); the commit still checks the node. Returns 0, or -EINVAL for
 * a slot with no node in the current snapshot, or -ENOMEM. */
int engine_assign_devices(struct engine *e, const struct pod_spec *pod,
			  uint32_t slot, struct placement *out);

/* Whether inter-pod rules (workers/interpod.h) can touch `pod` now: its
 * own terms or spread constraints, default constraints, or a placed pod
 * with terms. The resolver (bind/resolver.c) places such pods one at a
 * time. */
bool engine_interpod_applies(struct engine *e, const struct pod_spec *pod);

/* Whether `pod` passes the inter-pod filters on `slot` against the ledger
 * as it is now (a PreFilter walk, then the filter): 1 yes, 0 no, or
 * -ENOMEM. For the resolver's check after a commit. */
int engine_interpod_allows(struct engine *e, const struct pod_spec *pod,
			   uint32_t slot);

/* Compiling a class (its static filters and scores over every node, then
 * its index) is never done on a pod's path whole: a class waits in a
 * queue, and each call of engine_place() spends a bounded budget on the
 * queue after placing its pod (about 20,000 instructions; 0 spends none,
 * UINT64_MAX compiles at once), as does each call of engine_idle(); until
 * its class is compiled a pod is placed by a scan, with the same answer.
 *
 * engine_prepare() queues the class of `pod` (a registered template's:
 * ingest/producers_requests.c) to be compiled and indexed as soon as there is
 * time, so its pods find it ready; with `cs` (engine_static_compile, for
 * the engine's snapshot) its static results are taken from there. Returns 0, -EINVAL (pod->profile is not
 * the configuration's) or -ENOMEM. engine_idle() spends an idle worker's
 * budget (about 50,000 instructions) on the queue, after copying up to
 * 512 of the scans' node rows where a new snapshot or a fresh engine
 * left them to copy (a pod's scan copied them all before); returns
 * whether work is left. engine_set_compile_budget() sets the budget of each pod. */
int engine_prepare(struct engine *e, const struct pod_spec *pod,
		   const struct class_static *cs);

/* A class's static results (its static filters and scores over every node
 * of `s`, and the reasons of the nodes they refuse), read by any thread
 * that may read `s` (the control thread, when a template is registered:
 * ingest/producers_requests.c), so that engine_prepare() of the same pod, while
 * `s` is the engine's snapshot, takes them instead of reading them on the
 * worker. NULL with errno EINVAL (pod->profile is not one of cfg's) or
 * ENOMEM. Immutable once made: any thread may read it. */
struct class_static *engine_static_compile(const struct snapshot *s,
					   const struct plugin_ctx *ctx,
					   const struct sched_config *cfg,
					   const struct pod_spec *pod);
void engine_static_free(struct class_static *cs);

/* The bytes `cs` holds (its arrays and itself; 0 for NULL), and the most
 * that engine_static_compile() allocates for a snapshot of `n_slots`
 * slots: what a template's compiled results are charged (issue 41). */
size_t engine_static_bytes(const struct class_static *cs);

/* A class compiled ahead for a template (engine_prepare) that no pod has
 * used for this long is freed by engine_idle() (looking at most once per
 * ENGINE_SWEEP_NS): issue 41, a gone producer's templates. */
#define ENGINE_PREPARED_TTL_NS (UINT64_C(30) * 1000000000u)
#define ENGINE_SWEEP_NS UINT64_C(1000000000)
size_t engine_static_bytes_max(uint32_t n_slots);
bool engine_idle(struct engine *e);

/* The clock of the prepared classes' TTL above (engine_prepare's stamp,
 * engine_idle's sweep), in nanoseconds, never going back; NULL: now_ns
 * (base/clock.h), the default. Tests step one past the TTL instead of
 * waiting 30 s (tests/daemon/test_budgets.c). Set before the engine's
 * first use; read by the engine's own thread, once per prepare and per
 * idle call (no pod's path). */
void engine_set_clock(struct engine *e, uint64_t (*clock_ns)(void));
void engine_set_compile_budget(struct engine *e, uint64_t per_pod);

/* Whether pods pay for the compiles waiting (their budget each, as
 * above): by default yes. A worker that idles now and then says no
 * (busy false), and its compiles wait for engine_idle(): pods that
 * each paid 20,000 instructions (about 7 us) while a fresh daemon
 * compiled its templates came faster than they were served at half
 * load, and the first pods' latency reached 3-21 ms. A worker
 * that has not idled for a while says yes, so that compiles still get
 * done under a load that never lets up. */
void engine_set_busy(struct engine *e, bool busy);

/* A run of placements on `e` (bind/gang.c: a gang's pods, one after
 * another). GC2: from engine_run_begin to engine_run_end the caller keeps
 * every pod spec it passes alive and unchanged, so a fast-path pod at the
 * address of the run's last one is of that one's class while no class
 * has been freed since: found without the class memo's comparison of the
 * whole spec (about 170 instructions a pod). The same placements as
 * without the run. */
void engine_run_begin(struct engine *e);
void engine_run_end(struct engine *e);

/* The shared evaluations' table of results (once "request shapes": the
 * name stays in these two functions) is at least `cols` columns wide
 * (default EVAL_COLS_MIN, 64; at least 1): it doubles when full and
 * halves when three quarters are free. The tests set 1, so that it is
 * resized often with evaluations live (the property test's cases make a
 * few each). */
void engine_set_shape_cols_min(struct engine *e, uint32_t cols);

/* For tests: the evaluations' table's entries that break its invariant,
 * 0 expected. In a live evaluation's column a row holds a result exactly
 * where its member bit is set, and zeros elsewhere; a free column is
 * zeros throughout (what a new one takes as holding nothing). */
uint64_t engine_shape_table_violations(const struct engine *e);

/* kube-scheduler's message for the last unschedulable placement:
 * "0/N nodes are available: ...". Returns snprintf's result. */
int engine_message(const struct engine *e, char *buf, size_t len);

/* The last unschedulable placement's reasons as bits, for the queue's
 * hints (workers/queue.h): *codes bit c when some node gave reason code c
 * (enum reason_code), *res bit r when some node was short of resource r.
 * Both 0 when there were no nodes at all. */
void engine_failure(const struct engine *e, uint32_t *codes, uint32_t *res);

/* The cluster the engine places on, and its plugins' strings: what the
 * commit (bind/commit.h) needs beside a placement. */
struct cluster *engine_cluster(const struct engine *e);
const struct plugin_ctx *engine_plugin_ctx(const struct engine *e);

/* numFeasibleNodesToFind (pkg/scheduler/schedule_one.go). */
uint32_t engine_nodes_to_find(int32_t percentage, uint32_t all_nodes);

/* Counts `n` pods' shapes into the mix GpuFragmentation scores against and
 * rebuilds it now: a known workload primes the mix instead of the first
 * pods (the FGD paper's "target workload"). Pods placed later still count. */
void engine_learn_shapes(struct engine *e, const struct pod_spec *pods, size_t n);

void engine_get_stats(const struct engine *e, struct engine_stats *out);

#endif
