/* What one shmsched-bench run measured, and its two renderings: the table
 * for a person (stdout) and one JSON object (--json). A figure that was not
 * measured is absent from the table and null in the JSON, never a number.
 */
#ifndef SHMSCHED_BENCH_REPORT_H
#define SHMSCHED_BENCH_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "bench/engine_run.h"
#include "bench/pauses.h"
#include "bench/quality.h"

struct ring_limit_result {
	double median, min, max;   /* round trips (handles) per second */
	unsigned runs, burst, ring_slots;
	uint64_t handles;          /* per run */
	const char *ring;          /* implementation */
	size_t page_size;
	char backing[256];         /* the region's memory, for a person */
};

/* The most engine runs per node point (--sweep-runs). */
#define SWEEP_MAX_RUNS 25

/* One point of --sweep-nodes or --sweep-workers. */
struct sweep_point {
	const char *vary;          /* "nodes" or "workers" */
	uint32_t nodes, running;
	uint64_t pods;
	struct engine_run_result engine; /* the median run's, of `runs` */
	unsigned runs;
	double engine_min, engine_max;   /* pods/s over the runs */
	bool have_reference;
	struct reference_result reference;
	double ring_limit;         /* median handles/s */
};

struct bench_report {
	/* The run's inputs. */
	uint32_t nodes, running;
	uint64_t pods, seed;
	unsigned producers, workers;
	const char *cluster_path;  /* NULL: synthetic */
	const char *workload;      /* the file, or NULL: the default mix */
	uint32_t templates;

	struct ring_limit_result ring;
	bool have_engine;
	struct engine_run_result engine;
	bool have_latency;
	const char *latency_rate_from; /* "half of the engine's" or "--rate" */
	bool have_noisy;               /* --noisy: the fair-share check */
	struct engine_run_result noisy_alone, noisy_beside;
	bool have_noisy_rate;          /* --noisy-rate: the same at a rate */
	double noisy_rate;             /* pods/s it ran at */
	bool noisy_rate_half;          /* half of noisy_alone's pods/s */
	struct engine_run_result noisy_rate_alone, noisy_rate_beside;
	bool have_churn;               /* --churn: engine again, node events beside */
	double churn_rate;             /* node events/s asked for */
	struct engine_run_result churn;
	struct engine_run_result latency;
	bool have_pauses;              /* the machine's own, beside latency */
	struct pauses pauses;
	bool have_reference;
	struct reference_result reference;
	double reference_seconds;  /* its time bound */
	char reference_note[1100];  /* why there is none, when there is none */
	bool have_quality;
	struct quality_result quality;
	char quality_note[1100];
	double syscalls_per_pod;   /* < 0: not measured */
	struct sweep_point *sweep;
	size_t n_sweep;
	/* With --sweep-runs over two node points or more: each round's
	 * pods/s of the first node point over the last's. */
	double sweep_round_ratio[SWEEP_MAX_RUNS];
	unsigned n_sweep_rounds;
	double sweep_round_median; /* their median, when there are any */

	unsigned cores;
	char cpu_model[256];
};

void report_table(FILE *to, const struct bench_report *r);
/* The table's last lines: one "WARNING: ..." for each way this machine
 * made the figures unreliable (its pauses, other threads, a missed open
 * loop rate, a reference from too few pods). Returns how many. */
int report_warnings(FILE *to, const struct bench_report *r);
void report_json(FILE *to, const struct bench_report *r);

#endif
