/* shmsched-bench --trace openb: the GPU trace replay (bench/replay.h) for
 * every policy and seed, beside the FGD paper's published numbers; a
 * table on stdout, or --json, and --plot DIR.
 *
 * Options (their own set; the rest of shmsched-bench's do not apply):
 *   --trace openb           the only trace there is
 *   --trace-dir DIR         ../shared/data/alibaba-openb
 *   --paper-file FILE       DIR/../fgd-atc23-results/analysis_allo_discrete.csv
 *   --pod-list NAME|all     openb_pod_list_default; all: every list in DIR
 *   --seeds K               10 (seeds 42 .. 42+K-1, as the paper's)
 *   --policies LIST         all: LeastAllocated,MostAllocated,BestFit,FGD,
 *                           FGD-online,FGD-cpu,RandomFit
 *   --choice ours|paper     ours; paper: the paper's simulator's node choice
 *   --top-up ours|paper     ours; paper: its top-up check (replay.h)
 *   --mix-shapes N          256 (FGD's maxShapes; this replay had 64 before)
 *   --model-reservation P   100 (FGD's modelReservation %; the paper's: 0)
 *   --json, --plot DIR, --progress, --no-progress
 */
#include "bench/trace_main.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench/openb.h"
#include "bench/plot.h"
#include "bench/progress.h"
#include "bench/replay.h"
#include "shmsched/version.h"

#define MAX_LISTS 64
#define FIRST_SEED 42 /* the paper's seeds are 42..51 */

struct trace_opts {
	const char *dir;
	const char *paper_file;
	const char *pod_list;
	unsigned seeds;
	bool policy_on[REPLAY_POLICIES];
	struct replay_opts replay;
	bool json;
	const char *plot_dir;
	int progress; /* -1: if stderr is a terminal */
};

/* One policy on one list over the seeds. */
struct policy_result {
	unsigned seeds;
	double mean[PAPER_LOADS], sd[PAPER_LOADS];
	uint64_t pods, placed;
	double seconds;
};

struct list_result {
	char name[64];
	size_t nodes, trace_pods;
	int64_t gpu_milli_total;
	struct policy_result policy[REPLAY_POLICIES];
	struct paper_results paper;
	bool have_paper;
};

#define TRY "Try 'shmsched-bench --trace openb --help' for more information.\n"

static void usage(FILE *to)
{
	fprintf(to,
		"usage: shmsched-bench --trace openb [--trace-dir DIR] [--pod-list NAME|all]\n"
		"                      [--seeds K] [--policies LIST] [--paper-file FILE]\n"
		"                      [--choice ours|paper] [--top-up ours|paper]\n"
		"                      [--mix-shapes N] [--model-reservation PERCENT]\n"
		"                      [--json] [--plot DIR] [--progress|--no-progress]\n"
		"Replays the Alibaba GPU trace with the FGD paper's protocol for each\n"
		"policy (LeastAllocated, MostAllocated, BestFit, FGD, FGD-online,\n"
		"FGD-cpu, RandomFit) and\n"
		"prints unallocated GPU %% at 100%% and 130%% arrived load beside the\n"
		"paper's. Defaults: --trace-dir ../shared/data/alibaba-openb,\n"
		"--pod-list openb_pod_list_default, --seeds 10. --choice paper,\n"
		"--top-up paper, --mix-shapes and --model-reservation 0 switch one\n"
		"difference from the paper's simulator each (docs/guides/gpu-trace.md)"
		"; defaults: ours (--mix-shapes 256 --model-reservation 100).\n");
}

static int parse_policies(const char *list, bool on[REPLAY_POLICIES])
{
	memset(on, 0, REPLAY_POLICIES * sizeof(bool));
	if (strcmp(list, "all") == 0) {
		for (int p = 0; p < REPLAY_POLICIES; p++)
			on[p] = true;
		return 0;
	}
	for (const char *s = list; *s != '\0';) {
		size_t len = strcspn(s, ",");
		int found = -1;
		for (int p = 0; p < REPLAY_POLICIES; p++)
			if (strlen(replay_policy_names[p]) == len &&
			    strncmp(replay_policy_names[p], s, len) == 0)
				found = p;
		if (found < 0) {
			fprintf(stderr, "shmsched-bench: --policies: unknown policy "
				"\"%.*s\" (LeastAllocated, MostAllocated, BestFit, FGD, "
				"FGD-online, FGD-cpu, RandomFit or all)\n", (int)len, s);
			return -1;
		}
		on[found] = true;
		s += len;
		if (*s == ',')
			s++;
	}
	return 0;
}

static int parse(int argc, char **argv, struct trace_opts *o)
{
	enum { O_TRACE = 256, O_DIR, O_PAPER, O_LIST, O_SEEDS, O_POLICIES, O_JSON,
	       O_PLOT, O_PROGRESS, O_NO_PROGRESS, O_HELP, O_CHOICE, O_TOP_UP,
	       O_MIX_SHAPES, O_RESERVATION, O_VERSION };
	static const struct option longopts[] = {
		{"trace", required_argument, NULL, O_TRACE},
		{"trace-dir", required_argument, NULL, O_DIR},
		{"paper-file", required_argument, NULL, O_PAPER},
		{"pod-list", required_argument, NULL, O_LIST},
		{"seeds", required_argument, NULL, O_SEEDS},
		{"policies", required_argument, NULL, O_POLICIES},
		{"json", no_argument, NULL, O_JSON},
		{"plot", required_argument, NULL, O_PLOT},
		{"progress", no_argument, NULL, O_PROGRESS},
		{"no-progress", no_argument, NULL, O_NO_PROGRESS},
		{"help", no_argument, NULL, O_HELP},
		{"choice", required_argument, NULL, O_CHOICE},
		{"top-up", required_argument, NULL, O_TOP_UP},
		{"mix-shapes", required_argument, NULL, O_MIX_SHAPES},
		{"model-reservation", required_argument, NULL, O_RESERVATION},
		{"version", no_argument, NULL, O_VERSION},
		{NULL, 0, NULL, 0},
	};
	*o = (struct trace_opts){
		.dir = "../shared/data/alibaba-openb",
		.pod_list = "openb_pod_list_default",
		.seeds = 10,
		.progress = -1,
		.replay = replay_opts_ours(),
	};
	parse_policies("all", o->policy_on);
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		char *end;
		unsigned long v;
		switch (c) {
		case O_TRACE:
			if (strcmp(optarg, "openb") != 0) {
				fprintf(stderr, "shmsched-bench: --trace: unknown trace "
					"\"%s\" (there is one: openb)\n", optarg);
				return 2;
			}
			break;
		case O_DIR:
			o->dir = optarg;
			break;
		case O_PAPER:
			o->paper_file = optarg;
			break;
		case O_LIST:
			o->pod_list = optarg;
			break;
		case O_SEEDS:
			errno = 0;
			v = strtoul(optarg, &end, 10);
			if (errno || *end || v < 1 || v > 1000) {
				fprintf(stderr, "shmsched-bench: --seeds: \"%s\": expected "
					"1..1000\n", optarg);
				return 2;
			}
			o->seeds = (unsigned)v;
			break;
		case O_POLICIES:
			if (parse_policies(optarg, o->policy_on) < 0)
				return 2;
			break;
		case O_CHOICE:
		case O_TOP_UP: {
			bool paper = strcmp(optarg, "paper") == 0;
			if (!paper && strcmp(optarg, "ours") != 0) {
				fprintf(stderr, "shmsched-bench: --%s: \"%s\": expected "
					"ours or paper\n", c == O_CHOICE ? "choice" : "top-up",
					optarg);
				return 2;
			}
			if (c == O_CHOICE)
				o->replay.paper_choice = paper;
			else
				o->replay.paper_top_up = paper;
			break;
		}
		case O_MIX_SHAPES:
		case O_RESERVATION: {
			bool shapes = c == O_MIX_SHAPES;
			unsigned long lo = shapes ? 1 : 0, hi = shapes ? 256 : 1000;
			errno = 0;
			v = strtoul(optarg, &end, 10);
			if (errno || *end || *optarg == '\0' || *optarg == '-' ||
			    v < lo || v > hi) {
				fprintf(stderr, "shmsched-bench: --%s: \"%s\": expected "
					"%lu..%lu\n", shapes ? "mix-shapes" : "model-reservation",
					optarg, lo, hi);
				return 2;
			}
			if (shapes)
				o->replay.mix_shapes = (uint32_t)v;
			else
				o->replay.model_reservation = (int32_t)v;
			break;
		}
		case O_JSON:
			o->json = true;
			break;
		case O_PLOT:
			o->plot_dir = optarg;
			break;
		case O_PROGRESS:
			o->progress = 1;
			break;
		case O_NO_PROGRESS:
			o->progress = 0;
			break;
		case O_HELP:
		case 'h':
			usage(stdout);
			return 1; /* trace_main: exit 0 */
		case O_VERSION:
			printf("shmsched-bench %s\n", SHMSCHED_VERSION_STRING);
			return 1;
		default: /* getopt_long has said what is wrong */
			fprintf(stderr, TRY);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "shmsched-bench: unexpected argument \"%s\"\n" TRY,
			argv[optind]);
		return 2;
	}
	return 0;
}

static void summarise(struct policy_result *r, const struct replay_run *runs,
		      unsigned n)
{
	r->seeds = n;
	for (int k = 0; k < PAPER_LOADS; k++) {
		double s = 0, q = 0;
		unsigned c = 0;
		for (unsigned i = 0; i < n; i++)
			if (!isnan(runs[i].unalloc[k])) {
				s += runs[i].unalloc[k];
				c++;
			}
		double mean = c ? s / c : (double)NAN;
		for (unsigned i = 0; i < n; i++)
			if (!isnan(runs[i].unalloc[k]))
				q += (runs[i].unalloc[k] - mean) * (runs[i].unalloc[k] - mean);
		r->mean[k] = mean;
		r->sd[k] = c > 1 ? sqrt(q / (c - 1)) : 0;
	}
	for (unsigned i = 0; i < n; i++) {
		r->pods += runs[i].pods;
		r->placed += runs[i].placed;
		r->seconds += runs[i].seconds;
	}
}

static int replay_list(const struct trace_opts *o, const char *list,
		       struct list_result *lr, bool progress)
{
	char err[512];
	struct openb_trace t;
	memset(lr, 0, sizeof(*lr));
	openb_list_name(list, lr->name, sizeof(lr->name));
	int rc = openb_load(o->dir, list, &t, err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr, "shmsched-bench: --trace openb: %s\n", err);
		return rc;
	}
	lr->nodes = t.n_nodes;
	lr->trace_pods = t.n_pods;
	lr->gpu_milli_total = t.gpu_milli_total;
	char paper_path[4096];
	if (o->paper_file != NULL)
		snprintf(paper_path, sizeof(paper_path), "%s", o->paper_file);
	else
		snprintf(paper_path, sizeof(paper_path),
			 "%s/../fgd-atc23-results/analysis_allo_discrete.csv", o->dir);
	if (paper_load(paper_path, lr->name, &lr->paper, err, sizeof(err)) == 0)
		lr->have_paper = true;
	else if (o->paper_file != NULL) {
		fprintf(stderr, "shmsched-bench: --paper-file: %s\n", err);
		openb_free(&t);
		return -EINVAL;
	}
	struct replay_run *runs = calloc(o->seeds, sizeof(*runs));
	if (runs == NULL) {
		openb_free(&t);
		return -ENOMEM;
	}
	unsigned n_on = 0;
	for (int p = 0; p < REPLAY_POLICIES; p++)
		n_on += o->policy_on[p];
	struct progress bar;
	char phase[96];
	snprintf(phase, sizeof(phase), "replay %s", lr->name + strlen("openb_pod_list_"));
	progress_begin(&bar, progress, phase, (uint64_t)n_on * o->seeds);
	uint64_t done = 0;
	for (int p = 0; p < REPLAY_POLICIES && rc == 0; p++) {
		if (!o->policy_on[p])
			continue;
		for (unsigned s = 0; s < o->seeds && rc == 0; s++) {
			rc = replay_run(&t, (enum replay_policy)p, &o->replay,
					FIRST_SEED + s, &runs[s], err, sizeof(err));
			if (rc < 0)
				fprintf(stderr, "shmsched-bench: replay %s, %s, seed %u: %s\n",
					lr->name, replay_policy_names[p], FIRST_SEED + s, err);
			progress_update(&bar, ++done);
		}
		if (rc == 0)
			summarise(&lr->policy[p], runs, o->seeds);
	}
	progress_end(&bar);
	free(runs);
	openb_free(&t);
	return rc;
}

static double pods_per_sec(const struct list_result *lr, size_t n)
{
	double pods = 0, secs = 0;
	for (size_t i = 0; i < n; i++)
		for (int p = 0; p < REPLAY_POLICIES; p++) {
			pods += (double)lr[i].policy[p].pods;
			secs += lr[i].policy[p].seconds;
		}
	return secs > 0 ? pods / secs : 0;
}

static void print_cell(double mean, double sd)
{
	if (isnan(mean))
		printf(" %15s", "-");
	else
		printf(" %7.2f ± %5.2f", mean, sd);
}

/* The switches as the command line spells them: what differs from ours. */
static void describe_switches(const struct replay_opts *r, char *buf, size_t len)
{
	snprintf(buf, len, "--choice %s --top-up %s --mix-shapes %u "
		 "--model-reservation %d", r->paper_choice ? "paper" : "ours",
		 r->paper_top_up ? "paper" : "ours", r->mix_shapes, r->model_reservation);
}

static void print_table(const struct trace_opts *o, const struct list_result *lr)
{
	char sw[128];
	describe_switches(&o->replay, sw, sizeof(sw));
	printf("%s: %zu GPU nodes, %.0f GPUs, %zu pods in the list, %u seeds "
	       "(%d..%u), topped up to %d%% of GPU capacity\n", lr->name, lr->nodes,
	       lr->gpu_milli_total / 1000.0, lr->trace_pods, o->seeds, FIRST_SEED,
	       FIRST_SEED + o->seeds - 1, REPLAY_TOP_UP_PERCENT);
	printf("  switches: %s\n", sw);
	printf("  %-22s %15s %15s %10s %12s\n", "policy", "unalloc%@100",
	       "unalloc%@130", "placed%", "pods/s");
	for (int p = 0; p < REPLAY_POLICIES; p++) {
		const struct policy_result *r = &lr->policy[p];
		if (!o->policy_on[p])
			continue;
		printf("  %-22s", replay_policy_names[p]);
		print_cell(r->mean[100], r->sd[100]);
		print_cell(r->mean[130], r->sd[130]);
		printf(" %9.2f%% %12.0f\n", r->pods ? 100.0 * r->placed / r->pods : 0,
		       r->seconds > 0 ? r->pods / r->seconds : 0);
	}
	if (!lr->have_paper) {
		printf("  (no paper results for this list)\n");
		return;
	}
	for (int p = 0; p < PAPER_POLICIES; p++) {
		const struct paper_policy *r = &lr->paper.policy[p];
		if (r->seeds == 0)
			continue;
		char name[48];
		snprintf(name, sizeof(name), "paper %s", paper_policy_names[p]);
		printf("  %-22s", name);
		print_cell(r->unalloc_mean[100], r->unalloc_sd[100]);
		print_cell(r->unalloc_mean[130], r->unalloc_sd[130]);
		printf(" %10s %12s\n", "", "");
	}
}

static void json_num(double v)
{
	if (isnan(v))
		printf("null");
	else
		printf("%.4f", v);
}

static void json_cell(const char *key, double mean, double sd, bool comma)
{
	printf("\"%s\": {\"mean\": ", key);
	json_num(mean);
	printf(", \"sd\": ");
	json_num(sd);
	printf("}%s", comma ? ", " : "");
}

static void print_json_list(const struct trace_opts *o, const struct list_result *lr)
{
	char sw[128];
	describe_switches(&o->replay, sw, sizeof(sw));
	printf("{\"trace\": \"%s\", \"nodes\": %zu, \"gpus\": %.0f, \"seeds\": %u, "
	       "\"switches\": \"%s\", \"policies\": {", lr->name, lr->nodes,
	       lr->gpu_milli_total / 1000.0, o->seeds, sw);
	bool first = true;
	for (int p = 0; p < REPLAY_POLICIES; p++) {
		const struct policy_result *r = &lr->policy[p];
		if (!o->policy_on[p])
			continue;
		printf("%s\"%s\": {", first ? "" : ", ", replay_policy_names[p]);
		first = false;
		json_cell("unalloc_gpu_pct_at_100", r->mean[100], r->sd[100], true);
		json_cell("unalloc_gpu_pct_at_130", r->mean[130], r->sd[130], true);
		printf("\"pods\": %" PRIu64 ", \"placed\": %" PRIu64 ", \"pods_per_sec\": ",
		       r->pods, r->placed);
		json_num(r->seconds > 0 ? (double)r->pods / r->seconds : (double)NAN);
		printf("}");
	}
	printf("}, \"paper\": ");
	if (!lr->have_paper) {
		printf("null");
	} else {
		printf("{");
		first = true;
		for (int p = 0; p < PAPER_POLICIES; p++) {
			const struct paper_policy *r = &lr->paper.policy[p];
			if (r->seeds == 0)
				continue;
			printf("%s\"%s\": {", first ? "" : ", ", paper_policy_names[p]);
			first = false;
			json_cell("unalloc_gpu_pct_at_100", r->unalloc_mean[100],
				  r->unalloc_sd[100], true);
			json_cell("unalloc_gpu_pct_at_130", r->unalloc_mean[130],
				  r->unalloc_sd[130], true);
			printf("\"seeds\": %u}", r->seeds);
		}
		printf("}");
	}
	printf(", \"pods_per_sec\": ");
	json_num(pods_per_sec(lr, 1));
	printf("}");
}

/* DIR/replay_<list>.dat and .gp, then gnuplot. */
static int plot_list(const struct trace_opts *o, const struct list_result *lr,
		     char *err, size_t err_len)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/replay_%s.dat", o->plot_dir, lr->name);
	FILE *f = fopen(path, "w");
	if (f == NULL) {
		snprintf(err, err_len, "--plot: %s: %s", path, strerror(errno));
		return -errno;
	}
	fprintf(f, "# load");
	for (int p = 0; p < REPLAY_POLICIES; p++)
		fprintf(f, " %s", replay_policy_names[p]);
	for (int p = 0; p < PAPER_POLICIES; p++)
		fprintf(f, " paper_%s", paper_policy_names[p]);
	fprintf(f, "\n");
	for (int k = 0; k < PAPER_LOADS; k++) {
		fprintf(f, "%d", k);
		for (int p = 0; p < REPLAY_POLICIES; p++) {
			double v = lr->policy[p].mean[k];
			if (!o->policy_on[p] || isnan(v))
				fprintf(f, " ?");
			else
				fprintf(f, " %.4f", v);
		}
		for (int p = 0; p < PAPER_POLICIES; p++) {
			double v = lr->paper.policy[p].unalloc_mean[k];
			if (!lr->have_paper || lr->paper.policy[p].seeds == 0 || isnan(v))
				fprintf(f, " ?");
			else
				fprintf(f, " %.4f", v);
		}
		fprintf(f, "\n");
	}
	bool bad = ferror(f) != 0;
	if (fclose(f) != 0 || bad) {
		snprintf(err, err_len, "--plot: %s: write error", path);
		return -EIO;
	}
	char script[256];
	snprintf(script, sizeof(script), "replay_%s.gp", lr->name);
	snprintf(path, sizeof(path), "%s/%s", o->plot_dir, script);
	f = fopen(path, "w");
	if (f == NULL) {
		snprintf(err, err_len, "--plot: %s: %s", path, strerror(errno));
		return -errno;
	}
	fprintf(f,
		"# Written by shmsched-bench --trace openb --plot\n"
		PLOT_GP_PREAMBLE
		"set output 'replay_%s.png'\n"
		"set title '%s: unallocated GPU against arrived load (mean of %u seeds; "
		"dashed: the FGD paper)'\n"
		"set xlabel 'arrived GPU request, %% of capacity'\n"
		"set ylabel 'unallocated GPU, %% of capacity'\n"
		"set xrange [60:130]\n"
		"set yrange [0:*]\n"
		"plot ", lr->name, lr->name, o->seeds);
	bool first = true;
	for (int p = 0; p < REPLAY_POLICIES; p++) {
		if (!o->policy_on[p])
			continue;
		fprintf(f, "%s'replay_%s.dat' using 1:%d with lines lw 2 lc %d title '%s'",
			first ? "" : ", \\\n     ", lr->name, 2 + p, p + 1,
			replay_policy_names[p]);
		first = false;
	}
	for (int p = 0; lr->have_paper && p < PAPER_POLICIES; p++) {
		if (lr->paper.policy[p].seeds == 0)
			continue;
		fprintf(f, "%s'replay_%s.dat' using 1:%d with lines dt 2 lc %d "
			"title 'paper %s'", first ? "" : ", \\\n     ", lr->name,
			2 + REPLAY_POLICIES + p, REPLAY_POLICIES + p + 1,
			paper_policy_names[p]);
		first = false;
	}
	fprintf(f, "\n");
	bad = ferror(f) != 0;
	if (fclose(f) != 0 || bad) {
		snprintf(err, err_len, "--plot: %s: write error", path);
		return -EIO;
	}
	return plot_run_gnuplot(o->plot_dir, script, err, err_len);
}

int trace_main(int argc, char **argv)
{
	struct trace_opts o;
	int rc = parse(argc, argv, &o);
	if (rc != 0)
		return rc == 1 ? 0 : rc;
	bool progress = o.progress < 0 ? isatty(STDERR_FILENO) : o.progress == 1;
	static char names[MAX_LISTS][64];
	int n_lists = 1;
	if (strcmp(o.pod_list, "all") == 0) {
		char err[512];
		n_lists = openb_lists(o.dir, names, MAX_LISTS, err, sizeof(err));
		if (n_lists < 0) {
			fprintf(stderr, "shmsched-bench: --trace-dir: %s\n", err);
			return 1;
		}
		if (n_lists == 0) {
			fprintf(stderr, "shmsched-bench: --trace-dir %s: no "
				"openb_pod_list_*.csv\n", o.dir);
			return 1;
		}
	} else {
		snprintf(names[0], sizeof(names[0]), "%s", o.pod_list);
	}
	if (o.plot_dir != NULL && mkdir(o.plot_dir, 0777) != 0 && errno != EEXIST) {
		fprintf(stderr, "shmsched-bench: --plot: %s: %s\n", o.plot_dir,
			strerror(errno));
		return 1;
	}
	struct list_result *lr = calloc((size_t)n_lists, sizeof(*lr));
	if (lr == NULL) {
		fprintf(stderr, "shmsched-bench: out of memory\n");
		return 1;
	}
	for (int i = 0; i < n_lists; i++) {
		if (replay_list(&o, names[i], &lr[i], progress) < 0) {
			free(lr);
			return 1;
		}
		if (!o.json) {
			print_table(&o, &lr[i]);
			fflush(stdout);
		}
	}
	double pps = pods_per_sec(lr, (size_t)n_lists);
	if (o.json) {
		if (n_lists == 1) {
			print_json_list(&o, &lr[0]);
		} else {
			printf("{\"traces\": {");
			for (int i = 0; i < n_lists; i++) {
				printf("%s\"%s\": ", i ? ", " : "", lr[i].name);
				print_json_list(&o, &lr[i]);
			}
			printf("}, \"pods_per_sec\": ");
			json_num(pps);
			printf("}");
		}
		printf("\n");
	} else {
		printf("replay: %.0f pods/s over every policy, seed and list (engine "
		       "placement and commit, one thread)\n", pps);
	}
	for (int i = 0; o.plot_dir != NULL && i < n_lists; i++) {
		char err[4608];
		if (plot_list(&o, &lr[i], err, sizeof(err)) < 0) {
			fprintf(stderr, "shmsched-bench: %s\n", err);
			free(lr);
			return 1;
		}
	}
	if (o.plot_dir != NULL)
		fprintf(stderr, "plots in %s: replay_<list>.png\n", o.plot_dir);
	free(lr);
	return 0;
}
