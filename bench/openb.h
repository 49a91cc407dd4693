/* The Alibaba GPU trace "openb" (cluster-trace-gpu-v2023) and the FGD
 * paper's published results for it: CSV readers. See
 * docs/guides/gpu-trace.md for the files and the replay protocol.
 *
 * Columns are found by header name, so the multigpu* pod lists (five
 * columns) read like the others. Every field is checked: a bad line is
 * rejected with the file, line and field named, never guessed at.
 */
#ifndef SHMSCHED_BENCH_OPENB_H
#define SHMSCHED_BENCH_OPENB_H

#include <stddef.h>
#include <stdint.h>

#include "shm/shm.h"

#define OPENB_NAME_MAX 48
#define OPENB_MODEL_MAX 24
#define OPENB_SPEC_MAX 128

struct openb_node {
	char name[OPENB_NAME_MAX];
	int64_t cpu_milli;
	int64_t memory_mib;
	uint8_t gpus;                  /* devices, 0..NODE_MAX_GPUS */
	char model[OPENB_MODEL_MAX];   /* "" for none */
};

struct openb_pod {
	int64_t cpu_milli;
	int64_t memory_mib;
	uint8_t num_gpu;
	uint16_t gpu_milli;            /* per device; 0 when num_gpu is 0 */
	char gpu_spec[OPENB_SPEC_MAX]; /* "A|B" models, "" for any */
};

struct openb_trace {
	struct openb_node *nodes;
	size_t n_nodes;
	struct openb_pod *pods;        /* in file order (sorted by name there) */
	size_t n_pods;
	int64_t gpu_milli_total;       /* over nodes */
};

/* Reads DIR/openb_node_list_gpu_node.csv and DIR/<pod_list>.csv (pod_list
 * with or without the "openb_pod_list_" prefix and ".csv"). Returns 0 or a
 * negative errno with a message in err. */
int openb_load(const char *dir, const char *pod_list, struct openb_trace *t,
	       char *err, size_t err_len);
void openb_free(struct openb_trace *t);

/* The pod list's canonical name ("openb_pod_list_default") into out. */
void openb_list_name(const char *pod_list, char *out, size_t len);

/* The pod lists present in DIR, canonical names, sorted, default first.
 * Returns how many (at most max), or a negative errno. */
int openb_lists(const char *dir, char names[][64], int max, char *err,
		size_t err_len);

/* The paper's policies, in its order. */
#define PAPER_POLICIES 6
extern const char *const paper_policy_names[PAPER_POLICIES];

#define PAPER_LOADS 131 /* arrived load 0..130 % */

/* One policy's results on one trace over its seeds. */
struct paper_policy {
	unsigned seeds;
	double unalloc_mean[PAPER_LOADS]; /* 100 - GPU allocation %, mean */
	double unalloc_sd[PAPER_LOADS];   /* sample standard deviation */
};

struct paper_results {
	struct paper_policy policy[PAPER_POLICIES];
};

/* Reads FILE (analysis_allo_discrete.csv) for the rows of `list` (canonical
 * name). Returns 0 (policies without rows have seeds 0), or a negative
 * errno with a message. */
int paper_load(const char *file, const char *list, struct paper_results *out,
	       char *err, size_t err_len);

#endif
