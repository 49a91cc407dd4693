/* --plot DIR: see plot.h. The data files are plain whitespace columns with
 * "?" for a figure not measured (the script tells gnuplot so), so they can
 * be read by anything else too. gnuplot runs as a child in DIR; the script
 * picks the pngcairo terminal when this gnuplot has it, else png. */
#include "bench/plot.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static FILE *open_in(const char *dir, const char *name, char *err, size_t err_len)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	if (f == NULL)
		snprintf(err, err_len, "--plot: %s: %s", path, strerror(errno));
	return f;
}

static int close_checked(FILE *f, const char *dir, const char *name, char *err,
			 size_t err_len)
{
	bool bad = ferror(f) != 0;
	if (fclose(f) != 0 || bad) {
		snprintf(err, err_len, "--plot: %s/%s: write error", dir, name);
		return -EIO;
	}
	return 0;
}

static void rate_or_missing(FILE *f, bool have, double v)
{
	if (have && v > 0)
		fprintf(f, " %.1f", v);
	else
		fputs(" ?", f);
}

/* Rows: nodes engine reference ring_limit. */
static int write_nodes(const char *dir, const struct bench_report *r,
		       bool *single, char *err, size_t err_len)
{
	FILE *f = open_in(dir, "throughput_nodes.dat", err, err_len);
	if (f == NULL)
		return -errno;
	fputs("# nodes engine_pods_per_sec reference_pods_per_sec "
	      "ring_limit_per_sec\n", f);
	unsigned rows = 0;
	for (size_t i = 0; i < r->n_sweep; i++) {
		const struct sweep_point *p = &r->sweep[i];
		if (strcmp(p->vary, "nodes") != 0)
			continue;
		fprintf(f, "%u", p->engine.nodes);
		rate_or_missing(f, true, p->engine.pods_per_sec);
		rate_or_missing(f, p->have_reference, p->reference.pods_per_sec);
		rate_or_missing(f, true, p->ring_limit);
		fputc('\n', f);
		rows++;
	}
	*single = rows == 0;
	if (rows == 0) {
		fprintf(f, "%u", r->engine.nodes);
		rate_or_missing(f, true, r->engine.pods_per_sec);
		rate_or_missing(f, r->have_reference, r->reference.pods_per_sec);
		rate_or_missing(f, true, r->ring.median);
		fputc('\n', f);
	}
	return close_checked(f, dir, "throughput_nodes.dat", err, err_len);
}

/* Rows: workers engine reference ring_limit. */
static int write_workers(const char *dir, const struct bench_report *r,
			 unsigned *rows, char *err, size_t err_len)
{
	*rows = 0;
	for (size_t i = 0; i < r->n_sweep; i++)
		*rows += strcmp(r->sweep[i].vary, "workers") == 0;
	if (*rows == 0)
		return 0;
	FILE *f = open_in(dir, "throughput_workers.dat", err, err_len);
	if (f == NULL)
		return -errno;
	fputs("# workers engine_pods_per_sec reference_pods_per_sec "
	      "ring_limit_per_sec\n", f);
	for (size_t i = 0; i < r->n_sweep; i++) {
		const struct sweep_point *p = &r->sweep[i];
		if (strcmp(p->vary, "workers") != 0)
			continue;
		fprintf(f, "%u", p->engine.workers);
		rate_or_missing(f, true, p->engine.pods_per_sec);
		rate_or_missing(f, p->have_reference, p->reference.pods_per_sec);
		rate_or_missing(f, true, p->ring_limit);
		fputc('\n', f);
	}
	return close_checked(f, dir, "throughput_workers.dat", err, err_len);
}

/* Rows: latency_us share_answered_within (the bucket's upper bound). */
static int write_cdf(const char *dir, const struct engine_run_result *e,
		     char *err, size_t err_len)
{
	FILE *f = open_in(dir, "latency_cdf.dat", err, err_len);
	if (f == NULL)
		return -errno;
	uint64_t total = 0, seen = 0;
	for (unsigned b = 0; b < ENGINE_RUN_HIST_BUCKETS; b++)
		total += e->hist[b];
	fputs("# latency_us share_of_pods_answered_within\n", f);
	for (unsigned b = 0; b < ENGINE_RUN_HIST_BUCKETS && total > 0; b++) {
		if (e->hist[b] == 0)
			continue;
		seen += e->hist[b];
		fprintf(f, "%.3f %.6f\n", engine_run_bucket_upper_ns(b) / 1000.0,
			(double)seen / (double)total);
	}
	return close_checked(f, dir, "latency_cdf.dat", err, err_len);
}

static int write_script(const char *dir, const struct bench_report *r,
			bool single, unsigned worker_rows, const char *cdf_title,
			char *err, size_t err_len)
{
	FILE *f = open_in(dir, "plots.gp", err, err_len);
	if (f == NULL)
		return -errno;
	fprintf(f,
		"# Written by shmsched-bench --plot; run: gnuplot plots.gp\n"
		PLOT_GP_PREAMBLE
		"\n"
		"set output 'throughput_nodes.png'\n"
		"set title 'pods per second against cluster size (%s, %u cores)%s'\n"
		"set xlabel 'nodes'\n"
		"set ylabel 'pods (ring_limit: handles) per second'\n"
		"set logscale xy\n"
		"plot 'throughput_nodes.dat' using 1:2 with linespoints title 'engine', \\\n"
		"     '' using 1:3 with linespoints title 'reference', \\\n"
		"     '' using 1:4 with linespoints title 'ring_limit'\n",
		r->cpu_model, r->cores,
		single ? ": one point, no --sweep-nodes" : "");
	if (worker_rows > 0)
		fprintf(f,
			"\nset output 'throughput_workers.png'\n"
			"set title 'pods per second against workers (%u nodes)'\n"
			"set xlabel 'workers'\n"
			"unset logscale x\n"
			"set logscale y\n"
			"set xtics 1\n"
			"plot 'throughput_workers.dat' using 1:2 with linespoints "
			"title 'engine', \\\n"
			"     '' using 1:3 with linespoints title 'reference'\n"
			"set xtics autofreq\n", r->engine.nodes);
	fprintf(f,
		"\nset output 'latency_cdf.png'\n"
		"set title '%s'\n"
		"set xlabel 'latency (us)'\n"
		"set ylabel 'share of pods answered within'\n"
		"set logscale x\n"
		"unset logscale y\n"
		"set yrange [0:1]\n"
		"set key bottom right\n"
		"plot 'latency_cdf.dat' using 1:2 with steps title 'engine'\n",
		cdf_title);
	return close_checked(f, dir, "plots.gp", err, err_len);
}

int plot_run_gnuplot(const char *dir, const char *script, char *err, size_t err_len)
{
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		snprintf(err, err_len, "--plot: fork: %s", strerror(errno));
		return -errno;
	}
	if (pid == 0) {
		if (chdir(dir) != 0)
			_exit(126);
		execlp("gnuplot", "gnuplot", script, (char *)NULL);
		_exit(127);
	}
	int status;
	if (waitpid(pid, &status, 0) < 0) {
		snprintf(err, err_len, "--plot: waitpid: %s", strerror(errno));
		return -errno;
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127) {
		snprintf(err, err_len, "--plot: gnuplot not found (install the Debian "
			 "package gnuplot-nox; scripts/setup does); the data and "
			 "%s/%s are written", dir, script);
		return -ENOENT;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		snprintf(err, err_len, "--plot: gnuplot %s/%s failed (its "
			 "messages above)", dir, script);
		return -EIO;
	}
	return 0;
}

int plot_write(const char *dir, const struct bench_report *r, char *note,
	       size_t note_len, char *err, size_t err_len)
{
	if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
		snprintf(err, err_len, "--plot: %s: %s", dir, strerror(errno));
		return -errno;
	}
	if (!r->have_engine) {
		snprintf(err, err_len, "--plot: no engine run to plot "
			 "(--ring-limit-only)");
		return -EINVAL;
	}
	bool single = true;
	unsigned worker_rows = 0;
	const struct engine_run_result *cdf = r->have_latency ? &r->latency : &r->engine;
	char cdf_title[160];
	if (r->have_latency)
		snprintf(cdf_title, sizeof(cdf_title), "latency CDF: open loop at %.0f "
			 "pods/s, from the scheduled submit time", r->latency.rate);
	else
		snprintf(cdf_title, sizeof(cdf_title), "latency CDF: closed loop, "
			 "submit to answer (queueing included)");
	int rc = write_nodes(dir, r, &single, err, err_len);
	if (rc == 0)
		rc = write_workers(dir, r, &worker_rows, err, err_len);
	if (rc == 0)
		rc = write_cdf(dir, cdf, err, err_len);
	if (rc == 0)
		rc = write_script(dir, r, single, worker_rows, cdf_title, err, err_len);
	if (rc == 0)
		rc = plot_run_gnuplot(dir, "plots.gp", err, err_len);
	if (rc == 0)
		snprintf(note, note_len, "plots in %s: throughput_nodes.png%s%s, "
			 "latency_cdf.png (%s)", dir,
			 single ? " (one point: no --sweep-nodes)" : "",
			 worker_rows ? ", throughput_workers.png" : "",
			 r->have_latency ? "open loop" : "closed loop");
	return rc;
}
