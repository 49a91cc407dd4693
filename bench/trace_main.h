/* shmsched-bench --trace: the GPU trace replay's command line (trace_main.c). */
#ifndef SHMSCHED_BENCH_TRACE_MAIN_H
#define SHMSCHED_BENCH_TRACE_MAIN_H

/* Runs the replay for argv (shmsched-bench's, with --trace among them).
 * Returns the process's exit status. */
int trace_main(int argc, char **argv);

#endif
