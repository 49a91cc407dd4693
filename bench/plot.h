/* --plot DIR: the run's figures as gnuplot data files, a gnuplot script
 * (plots.gp) and the PNGs it draws:
 *   throughput_nodes.png  pods/s against nodes for the engine, the
 *                         reference and ring_limit (log-log), from
 *                         --sweep-nodes, else the run's single point
 *   throughput_workers.png  engine pods/s against workers (--sweep-workers)
 *   latency_cdf.png       the share of pods answered within x µs (log x),
 *                         from the open-loop latency run, else the
 *                         closed-loop one
 */
#ifndef SHMSCHED_BENCH_PLOT_H
#define SHMSCHED_BENCH_PLOT_H

#include <stddef.h>

#include "bench/report.h"

/* The lines after a gnuplot script's first comment, in both scripts the
 * benches write (plots.gp, the trace's replay script): PNG output
 * (pngcairo where gnuplot has it), '?' for a missing value, a grid, the
 * key top left. */
#define PLOT_GP_PREAMBLE                                                      \
	"if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n"                  \
	"    set terminal pngcairo size 960,600 noenhanced\n"                \
	"} else {\n"                                                          \
	"    set terminal png size 960,600 noenhanced\n"                     \
	"}\n"                                                                 \
	"set datafile missing '?'\n"                                          \
	"set grid\n"                                                          \
	"set key top left\n"

/* Writes the files into `dir` (made if missing) and runs gnuplot there.
 * Returns 0, or a negative errno with a message in `err` (-ENOENT naming
 * the Debian package when gnuplot is not installed). `note` receives a
 * line for a person about what was plotted. */
int plot_write(const char *dir, const struct bench_report *r, char *note,
	       size_t note_len, char *err, size_t err_len);

/* Runs gnuplot on DIR/script in DIR. Returns 0, or a negative errno with a
 * message (gnuplot missing: -ENOENT). */
int plot_run_gnuplot(const char *dir, const char *script, char *err, size_t err_len);

#endif
