/* shmsched-bench's output: see report.h. Ratios are printed only when both
 * sides were measured; JSON numbers that are not finite print as null.
 * The table scales durations for a person (base/units.h: us, ms or s) and
 * ends with a WARNING line for each way this machine made the run's
 * figures unreliable (report_warnings: thresholds below, documented in
 * docs/guides/benchmarking.md); JSON keeps raw microseconds, no warnings. */
#include "bench/report.h"

#include "base/base.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

/* --- table --------------------------------------------------------------- */

/* The fair share's figures of a --noisy pair (engine_run_result's
 * worker-time fields): the part of the run alone its worker spent on the
 * producer's pods; beside the flood, its part of the worker time spent on
 * pods, and its time over an equal share (half of that), each from the
 * flood's figure as read and (_upper) less the time that figure spans
 * beyond the run (worker_ns_lag_ns); and the part of the run beside the
 * worker spent on the two producers' pods (near 1 plus the lag: the flood
 * was there all along). False when a run lacks them. */
struct fair_figures {
	double alone_busy, share, to_equal, share_upper, to_equal_upper;
	double beside_busy;
};

static bool fair_figures(const struct engine_run_result *alone,
			 const struct engine_run_result *beside,
			 struct fair_figures *f)
{
	double c = (double)beside->counted_worker_ns;
	double sum = c + (double)beside->noisy_worker_ns;
	if (!alone->have_worker_ns || !beside->have_worker_ns || !(sum > 0) ||
	    !(alone->wall_s > 0) || !(beside->wall_s > 0))
		return false;
	f->beside_busy = sum / (beside->wall_s * 1e9);
	f->alone_busy = (double)alone->counted_worker_ns / (alone->wall_s * 1e9);
	f->share = c / sum;
	f->to_equal = c / (sum / 2);
	double lag = (double)beside->worker_ns_lag_ns;
	double in_run = sum - (lag < (double)beside->noisy_worker_ns ? lag
			       : (double)beside->noisy_worker_ns);
	f->share_upper = c / in_run;
	f->to_equal_upper = c / (in_run / 2);
	return true;
}

/* The worker time of a --noisy pair as JSON (the value only): the counted
 * producer's alone and beside the flood, the flood's, and the span its
 * figure overruns the run; null when the figures were not read. */
static void worker_ns_json(FILE *to, const struct engine_run_result *alone,
			   const struct engine_run_result *beside, bool have)
{
	if (have)
		fprintf(to, "{\"alone\":%" PRIu64 ",\"beside\":%" PRIu64
			",\"flood\":%" PRIu64 ",\"flood_lag\":%" PRIu64 "}",
			alone->counted_worker_ns, beside->counted_worker_ns,
			beside->noisy_worker_ns, beside->worker_ns_lag_ns);
	else
		fputs("null", to);
}

/* Mean service time: the histogram's sum (bucket middles, within 1/32)
 * over the pods it counted. */
static double service_mean_us(const struct engine_run_result *e)
{
	uint64_t n = 0;
	for (unsigned b = 0; b < ENGINE_RUN_HIST_BUCKETS; b++)
		n += e->service_hist[b];
	return n ? e->service_ns / (double)n / 1e3 : 0;
}

/* A duration in microseconds, scaled for the table (base/units.h). */
#define US(v, buf) units_us((v), (buf), sizeof(buf))

static void rate_str(double r, char *buf, size_t len)
{
	if (r >= 1e6)
		snprintf(buf, len, "%.2f M", r / 1e6);
	else if (r >= 1e4)
		snprintf(buf, len, "%.1f k", r / 1e3);
	else
		snprintf(buf, len, "%.0f", r);
}

static void table_quality_side(FILE *to, const char *who,
			       const struct quality_side *s)
{
	fprintf(to, "              %-26s %8" PRIu64 " placed  cpu %5.1f %%  "
		"mem %5.1f %%  best score %5.1f %% of %" PRIu64 "\n", who, s->placed,
		100 * s->cpu_alloc_ratio, 100 * s->mem_alloc_ratio, s->same_score_pct,
		s->compared);
}

/* With --sweep-runs: the node points' spread and each round's ratio. */
static void table_sweep_rounds(FILE *to, const struct bench_report *r)
{
	size_t first = r->n_sweep, last = 0;
	for (size_t i = 0; i < r->n_sweep; i++)
		if (r->sweep[i].runs > 1) {
			const struct sweep_point *p = &r->sweep[i];
			char lo[32], hi[32];
			rate_str(p->engine_min, lo, sizeof(lo));
			rate_str(p->engine_max, hi, sizeof(hi));
			fprintf(to, "              nodes %u: engine/s the median of %u runs "
				"(least %s, greatest %s)\n", p->engine.nodes, p->runs, lo, hi);
			first = first < i ? first : i;
			last = i;
		}
	if (r->n_sweep_rounds == 0 || first >= last)
		return;
	fprintf(to, "              nodes %u over nodes %u, engine/s per round:",
		r->sweep[first].engine.nodes, r->sweep[last].engine.nodes);
	for (unsigned k = 0; k < r->n_sweep_rounds; k++)
		fprintf(to, " %.2fx", r->sweep_round_ratio[k]);
	fprintf(to, "; median %.2fx\n", r->sweep_round_median);
}

static void table_sweep(FILE *to, const struct bench_report *r)
{
	fprintf(to, "  sweep       %-7s %8s %9s %9s %7s %12s %12s %12s %9s %9s\n",
		"vary", "nodes", "running", "pods", "workers", "engine/s",
		"reference/s", "ring_limit/s", "e/ref", "e/ring");
	for (size_t i = 0; i < r->n_sweep; i++) {
		const struct sweep_point *p = &r->sweep[i];
		char e[32], ref[32] = "-", ring[32], ratio[32] = "-";
		rate_str(p->engine.pods_per_sec, e, sizeof(e));
		rate_str(p->ring_limit, ring, sizeof(ring));
		if (p->have_reference) {
			rate_str(p->reference.pods_per_sec, ref, sizeof(ref));
			if (p->reference.pods_per_sec > 0)
				snprintf(ratio, sizeof(ratio), "%.2f",
					 p->engine.pods_per_sec / p->reference.pods_per_sec);
		}
		fprintf(to, "              %-7s %8u %9u %9" PRIu64 " %7u %12s %12s "
			"%12s %9s %9.6f\n", p->vary, p->engine.nodes, p->running,
			p->pods, p->engine.workers, e, ref, ring, ratio,
			p->ring_limit > 0 ? p->engine.pods_per_sec / p->ring_limit : 0);
	}
	table_sweep_rounds(to, r);
}

/* When this machine, not the engine, set the figures. Thresholds (also in
 * docs/guides/benchmarking.md, "When the figures are not a baseline"): */
#define WARN_LOST_SHARE 0.05      /* pauses took over 5 % of spinning time */
#define WARN_OVER_1MS_S 10.0      /* over ten 1 ms pauses a second per core */
#define WARN_LONGEST_US 20000.0   /* one pause over 20 ms */
#define WARN_OTHERS_SHARE 0.10    /* others used over 10 % of all cores */
#define WARN_RATE_MISSED 0.95     /* open loop achieved under 95 % of asked */
#define WARN_LATE_SHARE 0.01      /* over 1 % of pods submitted 1 ms late */
#define WARN_REFERENCE_PODS 1000  /* a reference rate from fewer pods */

int report_warnings(FILE *to, const struct bench_report *r)
{
	int n = 0;
	char u[32];
	const char *why = "the latencies and ratios of this run are this machine's, "
			  "not the engine's: not a baseline (rerun on a quiet machine)";
	if (r->have_pauses && (r->pauses.lost_share > WARN_LOST_SHARE ||
			       r->pauses.over_1ms_s > WARN_OVER_1MS_S ||
			       r->pauses.longest_us > WARN_LONGEST_US)) {
		fprintf(to, "WARNING: this machine paused the bench's own threads: "
			"%.2f %% of the time lost, %.1f pauses over 1 ms a second per "
			"core, the longest %s (thresholds: 5 %%, 10/s, 20 ms): %s\n",
			100 * r->pauses.lost_share, r->pauses.over_1ms_s,
			US(r->pauses.longest_us, u), why);
		n++;
	}
	if (r->have_latency && r->latency.have_others && r->cores > 0 &&
	    r->latency.others.window_s > 0) {
		const struct others *o = &r->latency.others;
		double share = o->total_ms / (o->window_s * 1e3 * r->cores);
		if (share > WARN_OTHERS_SHARE) {
			fprintf(to, "WARNING: other threads on this machine used %.0f %% "
				"of its %u cores during the latency run (%.0f ms in %.2f "
				"s%s%s; threshold 10 %%): %s\n", 100 * share, r->cores,
				o->total_ms, o->window_s, o->n_top ? ", most: " : "",
				o->n_top ? o->top[0].comm : "", why);
			n++;
		}
	}
	if (r->have_latency) {
		const struct engine_run_result *l = &r->latency;
		if (l->rate > 0 && l->achieved_rate < WARN_RATE_MISSED * l->rate) {
			fprintf(to, "WARNING: the open loop asked %.0f pods/s and achieved "
				"%.0f/s (under 95 %%): the producer could not keep its "
				"schedule, so the latency figures measure the backlog\n",
				l->rate, l->achieved_rate);
			n++;
		} else if (l->pods > 0 &&
			   (double)l->late_submits > WARN_LATE_SHARE * (double)l->pods) {
			fprintf(to, "WARNING: %" PRIu64 " of %" PRIu64 " open-loop pods were "
				"submitted over 1 ms late (over 1 %%): the producer was "
				"held up, the latency tail is this machine's\n",
				l->late_submits, l->pods);
			n++;
		}
	}
	if (r->have_reference && r->reference.pods < WARN_REFERENCE_PODS) {
		fprintf(to, "WARNING: the reference placed %" PRIu64 " pods in %.2f s "
			"(%.0f pods/s; under %d pods): a reference at %.0f pods/s is not "
			"a baseline, and neither is the \"x reference\" ratio\n",
			r->reference.pods, r->reference.wall_s,
			r->reference.pods_per_sec, WARN_REFERENCE_PODS,
			r->reference.pods_per_sec);
		n++;
	}
	return n;
}

void report_table(FILE *to, const struct bench_report *r)
{
	const struct ring_limit_result *rl = &r->ring;
	fprintf(to, "shmsched-bench: %u cores (%s)\n", r->cores, r->cpu_model);
	fprintf(to, "  ring_limit  %.2f M handles/s: round trips through two SP/SC "
		"%s rings, %u slots, bursts of %u, median of %u (min %.2f, max %.2f)\n",
		rl->median / 1e6, rl->ring, rl->ring_slots, rl->burst, rl->runs,
		rl->min / 1e6, rl->max / 1e6);
	fprintf(to, "  memory      %s\n", rl->backing);
	if (!r->have_engine)
		return;
	const struct engine_run_result *e = &r->engine;
	fprintf(to, "  cluster     %s: %u nodes", r->cluster_path ? r->cluster_path
		: "synthetic", e->nodes);
	if (r->cluster_path == NULL)
		fprintf(to, ", %u running pods", r->running);
	fprintf(to, "\n  workload    %" PRIu64 " pods from %s (%u templates), "
		"producer processes %u%s, workers %u\n", r->pods,
		r->workload ? r->workload : "the default mix", r->templates,
		r->producers, e->producers_pinned ? " (each pinned to a core past "
		"the workers')" : " (not pinned)", e->workers);
	fprintf(to, "  engine      %.0f pods/s (%.3f s)", e->pods_per_sec, e->wall_s);
	if (rl->median > 0)
		fprintf(to, ", %.4f of ring_limit", e->pods_per_sec / rl->median);
	if (r->have_reference && r->reference.pods_per_sec > 0)
		fprintf(to, ", %.2f x reference",
			e->pods_per_sec / r->reference.pods_per_sec);
	fprintf(to, "\n              %" PRIu64 " placed, %" PRIu64 " unschedulable, %"
		PRIu64 " rejected, %" PRIu64 " cancelled, %" PRIu64 " conflicts, %"
		PRIu64 " overcommits\n", e->placed, e->unschedulable, e->rejected,
		e->cancelled, e->conflicts, e->overcommits);
	char u1[32], u2[32], u3[32], u4[32];
	fprintf(to, "              closed loop, submit to answer: p50 %s, p99 "
		"%s (queueing included)\n", US(e->p50_us, u1), US(e->p99_us, u2));
	if (e->service_p50_us > 0)
		fprintf(to, "              service time in the worker: p50 %s, p99 "
			"%s, p99.9 %s, mean %s, %" PRIu64 " pods over 1 ms\n",
			US(e->service_p50_us, u1), US(e->service_p99_us, u2),
			US(e->service_p999_us, u3), US(service_mean_us(e), u4),
			e->service_over_1ms);
	const struct daemon_cache_stats *cs = &e->caches;
	if (cs->classes > 0)
		fprintf(to, "              classes: %" PRIu64 " compiled (%" PRIu64
			" copied a sibling's static results), %" PRIu64 " evictions, %"
			PRIu64 " flushes; %" PRIu64 " pods without a class of their "
			"own; %" PRIu64 " nodes checked by scans (%" PRIu64 " scans "
			"pruned by a sibling's index); %" PRIu64 " index and %" PRIu64
			" shape rebuilds\n", cs->classes, cs->sibling_copies,
			cs->class_evictions, cs->class_flushes, cs->classless_pods,
			cs->nodes_checked, cs->pruned_scans, cs->index_rebuilds,
			cs->shape_rebuilds);
	if (cs->shapes > 0)
		fprintf(to, "              shapes: %" PRIu64 " made, %" PRIu64 " nodes "
			"evaluated by them; %" PRIu64 " index leaves updated one by "
			"one\n", cs->shapes, cs->shape_evals, cs->index_updates);
	if (r->have_latency) {
		const struct engine_run_result *l = &r->latency;
		fprintf(to, "  latency     open loop at %.0f pods/s (%s), achieved %.0f/s "
			"over %" PRIu64 " pods; from the scheduled submit time:\n"
			"              p50 %s, p90 %s, p99 %s, p99.9 %s"
			" (%" PRIu64 " pods submitted over 1 ms late)\n", l->rate,
			r->latency_rate_from, l->achieved_rate, l->pods,
			US(l->p50_us, u1), US(l->p90_us, u2), US(l->p99_us, u3),
			US(l->p999_us, u4), l->late_submits);
		fprintf(to, "              to the producer's poll finding it (handed "
			"back): p50 %s, p90 %s, p99 %s, p99.9 %s\n",
			US(l->seen_p50_us, u1), US(l->seen_p90_us, u2),
			US(l->seen_p99_us, u3), US(l->seen_p999_us, u4));
		if (l->service_p50_us > 0)
			fprintf(to, "              service time in the worker: p50 %s, "
				"p99 %s, p99.9 %s\n", US(l->service_p50_us, u1),
				US(l->service_p99_us, u2), US(l->service_p999_us, u3));
		if (r->have_pauses)
			fprintf(to, "              this machine's own pauses (a thread spinning "
				"on each of %u cores for %.1f s, no daemon): over 100 us "
				"%.1f/s, over 1 ms %.1f/s per core, longest %s, %.2f %% "
				"of the time lost\n", r->pauses.cores, r->pauses.seconds,
				r->pauses.over_100us_s, r->pauses.over_1ms_s,
				US(r->pauses.longest_us, u1), 100 * r->pauses.lost_share);
		if (l->have_others) {
			const struct others *o = &l->others;
			fprintf(to, "              other threads on this machine during it "
				"(%.2f s): %.1f ms of CPU time in %u threads",
				o->window_s, o->total_ms, o->threads);
			for (unsigned i = 0; i < o->n_top; i++)
				fprintf(to, "%s %s %.2f ms in %" PRIu64 " run%s", i ? "," : ";",
					o->top[i].comm, o->top[i].ms, o->top[i].slices,
					o->top[i].slices == 1 ? "" : "s");
			fputs("\n", to);
		}
	} else {
		fprintf(to, "  latency     not measured (--no-latency)\n");
	}
	if (r->have_noisy) {
		const struct engine_run_result *a = &r->noisy_alone, *b = &r->noisy_beside;
		fprintf(to, "  noisy       %" PRIu64 " pods of one producer on one worker: "
			"%.3f s alone, %.3f s beside a producer flooding unique "
			"unschedulable pods (%" PRIu64 " of them answered meanwhile): "
			"%.2f x\n", a->pods, a->wall_s, b->wall_s, b->noisy_answered,
			a->wall_s > 0 ? b->wall_s / a->wall_s : 0);
		struct fair_figures f;
		if (fair_figures(a, b, &f))
			fprintf(to, "              its worker's time: alone, %.1f %% of "
				"the run on its pods (an equal share's floor: %.2f x); "
				"beside, of the time on pods, %.1f-%.1f %% its: its "
				"time %.3f-%.3f x an equal share (the flood's figure "
				"spans %.1f ms beyond the run; the two took %.1f %% "
				"of the run)\n",
				100 * f.alone_busy, 2 * f.alone_busy, 100 * f.share,
				100 * f.share_upper, f.to_equal, f.to_equal_upper,
				(double)b->worker_ns_lag_ns / 1e6, 100 * f.beside_busy);
		else
			fprintf(to, "              its worker's time: not measured "
				"(the daemon ran as a child, or a run failed)\n");
	}
	if (r->have_noisy_rate) {
		const struct engine_run_result *a = &r->noisy_rate_alone,
			*b = &r->noisy_rate_beside;
		struct fair_figures f;
		bool have = fair_figures(a, b, &f);
		fprintf(to, "  noisy rate  the same producer at %.0f pods/s%s "
			"(%.0f/s delivered alone, %.0f/s beside): latency p50 %.1f "
			"us, p99 %.1f us alone; p50 %.1f us, p99 %.1f us beside the "
			"flood (%" PRIu64 " of its pods answered meanwhile) (%.2f x, "
			"%.2f x)",
			r->noisy_rate, r->noisy_rate_half ? " (half of alone's)" : "",
			a->achieved_rate, b->achieved_rate, a->p50_us, a->p99_us,
			b->p50_us, b->p99_us, b->noisy_answered,
			a->p50_us > 0 ? b->p50_us / a->p50_us : 0,
			a->p99_us > 0 ? b->p99_us / a->p99_us : 0);
		if (have)
			fprintf(to, "; its worker's time: alone %.1f %% of the run, "
				"beside %.1f-%.1f %% of the time on pods (the flood's "
				"figure spans %.1f ms beyond the run; the two took "
				"%.1f %% of the run)\n",
				100 * f.alone_busy, 100 * f.share, 100 * f.share_upper,
				(double)b->worker_ns_lag_ns / 1e6, 100 * f.beside_busy);
		else
			fputs("\n", to);
	}
	if (r->have_churn) {
		const struct engine_run_result *c = &r->churn;
		double base = r->have_engine ? r->engine.pods_per_sec : 0;
		fprintf(to, "  churn       %.0f pods/s beside %" PRIu64 " node events "
			"(cordon/uncordon, asked %g/s, %.0f/s sent) vs %.0f pods/s "
			"without: %.3f x\n", c->pods_per_sec, c->churn_events,
			r->churn_rate, c->wall_s > 0 ? (double)c->churn_events / c->wall_s : 0,
			base, base > 0 ? c->pods_per_sec / base : 0);
	}
	if (r->have_reference) {
		const struct reference_result *f = &r->reference;
		fprintf(to, "  reference   %.0f pods/s: %" PRIu64 " pods (%" PRIu64
			" placed) in %.2f s (bound %g s), kube-scheduler's algorithm "
			"literally: every node filtered and scored, one thread\n",
			f->pods_per_sec, f->pods, f->placed, f->wall_s,
			r->reference_seconds);
	} else {
		fprintf(to, "  reference   not measured: %s\n", r->reference_note);
	}
	if (r->have_quality) {
		const struct quality_result *q = &r->quality;
		fprintf(to, "  quality     %u synthetic nodes, filled until a pod fails;"
			" best score: the chosen node scored the reference's best\n",
			q->nodes);
		table_quality_side(to, "engine (default sampling)", &q->engine_default);
		table_quality_side(to, "engine (100 % of nodes)", &q->engine_100);
		table_quality_side(to, "reference", &q->reference);
	} else {
		fprintf(to, "  quality     not measured: %s\n", r->quality_note);
	}
	if (r->syscalls_per_pod >= 0)
		fprintf(to, "  syscalls    %.4f per pod (the daemon under strace, runs "
			"of %" PRIu64 " and %" PRIu64 " pods)\n", r->syscalls_per_pod,
			r->pods / 2, r->pods);
	if (r->n_sweep > 0)
		table_sweep(to, r);
	report_warnings(to, r);
}

/* --- JSON ---------------------------------------------------------------- */

static void jstr(FILE *to, const char *s)
{
	if (s == NULL) {
		fputs("null", to);
		return;
	}
	fputc('"', to);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(to, "\\%c", c);
		else if (c < 0x20)
			fprintf(to, "\\u%04x", c);
		else
			fputc(c, to);
	}
	fputc('"', to);
}

static void jnum(FILE *to, double v, int decimals)
{
	if (isfinite(v))
		fprintf(to, "%.*f", decimals, v);
	else
		fputs("null", to);
}

static void jratio(FILE *to, double a, double b)
{
	if (b > 0)
		jnum(to, a / b, 6);
	else
		fputs("null", to);
}

static void json_engine(FILE *to, const struct engine_run_result *e)
{
	fprintf(to, "{\"pods_per_sec\":");
	jnum(to, e->pods_per_sec, 0);
	fprintf(to, ",\"wall_s\":%.3f,\"pods\":%" PRIu64 ",\"answered\":%" PRIu64
		",\"placed\":%" PRIu64 ",\"unschedulable\":%" PRIu64 ",\"rejected\":%"
		PRIu64 ",\"cancelled\":%" PRIu64 ",\"conflicts\":%" PRIu64
		",\"overcommits\":%" PRIu64 ",\"workers\":%u,\"nodes\":%u,"
		"\"p50_us\":%.1f,\"p90_us\":%.1f,\"p99_us\":%.1f,\"p999_us\":%.1f,"
		"\"latency\":\"closed loop: includes queueing\","
		"\"service_p50_us\":%.2f,\"service_p99_us\":%.2f,"
		"\"service_p999_us\":%.2f,\"service_mean_us\":%.2f,"
		"\"service_over_1ms\":%" PRIu64 "}",
		e->wall_s, e->pods,
		e->answered, e->placed, e->unschedulable, e->rejected, e->cancelled,
		e->conflicts, e->overcommits, e->workers, e->nodes, e->p50_us,
		e->p90_us, e->p99_us, e->p999_us, e->service_p50_us, e->service_p99_us,
		e->service_p999_us, service_mean_us(e), e->service_over_1ms);
}

static void json_reference(FILE *to, const struct reference_result *f)
{
	fprintf(to, "{\"pods_per_sec\":");
	jnum(to, f->pods_per_sec, 0);
	fprintf(to, ",\"pods\":%" PRIu64 ",\"placed\":%" PRIu64 ",\"unschedulable\":%"
		PRIu64 ",\"wall_s\":%.3f}", f->pods, f->placed, f->unschedulable,
		f->wall_s);
}

static void json_quality_side(FILE *to, const struct quality_side *s)
{
	fprintf(to, "{\"percentage_of_nodes_to_score\":%d,\"placed\":%" PRIu64
		",\"cpu_alloc_ratio\":", s->percentage, s->placed);
	jnum(to, s->cpu_alloc_ratio, 4);
	fputs(",\"mem_alloc_ratio\":", to);
	jnum(to, s->mem_alloc_ratio, 4);
	fprintf(to, ",\"compared\":%" PRIu64 ",\"same_score\":%" PRIu64
		",\"same_score_pct\":", s->compared, s->same_score);
	jnum(to, s->same_score_pct, 2);
	fputc('}', to);
}

static void json_sweep(FILE *to, const struct bench_report *r)
{
	fputs(",\"sweep\":[", to);
	for (size_t i = 0; i < r->n_sweep; i++) {
		const struct sweep_point *p = &r->sweep[i];
		fprintf(to, "%s{\"vary\":", i ? "," : "");
		jstr(to, p->vary);
		fprintf(to, ",\"nodes\":%u,\"running\":%u,\"pods\":%" PRIu64
			",\"workers\":%u,\"engine\":", p->engine.nodes, p->running,
			p->pods, p->engine.workers);
		json_engine(to, &p->engine);
		fputs(",\"reference\":", to);
		if (p->have_reference)
			json_reference(to, &p->reference);
		else
			fputs("null", to);
		fputs(",\"ring_limit\":{\"pods_per_sec\":", to);
		jnum(to, p->ring_limit, 0);
		fputs("},\"engine_over_reference\":", to);
		jratio(to, p->engine.pods_per_sec,
		       p->have_reference ? p->reference.pods_per_sec : 0);
		fputs(",\"engine_over_ring_limit\":", to);
		jratio(to, p->engine.pods_per_sec, p->ring_limit);
		fprintf(to, ",\"engine_runs\":%u,\"engine_min_pods_per_sec\":", p->runs);
		jnum(to, p->engine_min, 0);
		fputs(",\"engine_max_pods_per_sec\":", to);
		jnum(to, p->engine_max, 0);
		fputc('}', to);
	}
	fputs("],\"sweep_round_ratios\":[", to);
	for (unsigned k = 0; k < r->n_sweep_rounds; k++) {
		if (k)
			fputc(',', to);
		jnum(to, r->sweep_round_ratio[k], 4);
	}
	fputc(']', to);
}

void report_json(FILE *to, const struct bench_report *r)
{
	const struct ring_limit_result *rl = &r->ring;
	fprintf(to, "{\"pods\":%" PRIu64 ",\"nodes\":%u,\"running\":%u,"
		"\"workers\":%u,\"producers\":%u,\"seed\":%" PRIu64 ",\"cluster\":",
		r->have_engine ? r->pods : 0,
		r->have_engine ? r->engine.nodes : r->nodes, r->running,
		r->have_engine ? r->engine.workers : r->workers, r->producers, r->seed);
	jstr(to, r->cluster_path);
	fputs(",\"workload\":", to);
	jstr(to, r->workload ? r->workload : "default");
	fprintf(to, ",\"templates\":%u,\"engine\":", r->templates);
	if (r->have_engine)
		json_engine(to, &r->engine);
	else
		fputs("null", to);
	fputs(",\"noisy\":", to);
	if (r->have_noisy) {
		const struct engine_run_result *a = &r->noisy_alone, *b = &r->noisy_beside;
		fprintf(to, "{\"pods\":%" PRIu64 ",\"alone_s\":%.3f,\"beside_s\":%.3f,"
			"\"flood_answered\":%" PRIu64 ",\"ratio\":", a->pods, a->wall_s,
			b->wall_s, b->noisy_answered);
		jnum(to, a->wall_s > 0 ? b->wall_s / a->wall_s : 0, 3);
		struct fair_figures f;
		bool have = fair_figures(a, b, &f);
		fputs(",\"worker_ns\":", to);
		worker_ns_json(to, a, b, have);
		fputs(",\"alone_busy\":", to);
		jnum(to, have ? f.alone_busy : (double)NAN, 4);
		fputs(",\"share\":", to);
		jnum(to, have ? f.share : (double)NAN, 4);
		fputs(",\"to_equal_share\":", to);
		jnum(to, have ? f.to_equal : (double)NAN, 4);
		fputs(",\"share_upper\":", to);
		jnum(to, have ? f.share_upper : (double)NAN, 4);
		fputs(",\"to_equal_share_upper\":", to);
		jnum(to, have ? f.to_equal_upper : (double)NAN, 4);
		fputs(",\"beside_busy\":", to);
		jnum(to, have ? f.beside_busy : (double)NAN, 4);
		fputs(",\"at_rate\":", to);
		if (r->have_noisy_rate) {
			const struct engine_run_result *ra = &r->noisy_rate_alone,
				*rb = &r->noisy_rate_beside;
			have = fair_figures(ra, rb, &f);
			fprintf(to, "{\"rate\":%.1f,\"half\":%s,\"alone\":{\"p50_us\":",
				r->noisy_rate, r->noisy_rate_half ? "true" : "false");
			jnum(to, ra->p50_us, 1);
			fputs(",\"p99_us\":", to);
			jnum(to, ra->p99_us, 1);
			fputs(",\"achieved_rate\":", to);
			jnum(to, ra->achieved_rate, 1);
			fputs(",\"busy\":", to);
			jnum(to, have ? f.alone_busy : (double)NAN, 4);
			fputs("},\"beside\":{\"p50_us\":", to);
			jnum(to, rb->p50_us, 1);
			fputs(",\"p99_us\":", to);
			jnum(to, rb->p99_us, 1);
			fputs(",\"achieved_rate\":", to);
			jnum(to, rb->achieved_rate, 1);
			fprintf(to, ",\"flood_answered\":%" PRIu64, rb->noisy_answered);
			fputs(",\"worker_ns\":", to);
			worker_ns_json(to, ra, rb, have);
			fputs(",\"share\":", to);
			jnum(to, have ? f.share : (double)NAN, 4);
			fputs(",\"share_upper\":", to);
			jnum(to, have ? f.share_upper : (double)NAN, 4);
			fputs(",\"busy\":", to);
			jnum(to, have ? f.beside_busy : (double)NAN, 4);
			fputs("}}", to);
		} else {
			fputs("null", to);
		}
		fputs("}", to);
	} else {
		fputs("null", to);
	}
	fputs(",\"churn\":", to);
	if (r->have_churn) {
		const struct engine_run_result *c = &r->churn;
		fputs("{\"rate\":", to);
		jnum(to, r->churn_rate, 3);
		fprintf(to, ",\"node_events\":%" PRIu64 ",\"pods_per_sec\":",
			c->churn_events);
		jnum(to, c->pods_per_sec, 0);
		fputs(",\"ratio\":", to);
		jnum(to, r->have_engine && r->engine.pods_per_sec > 0
			 ? c->pods_per_sec / r->engine.pods_per_sec : 0, 3);
		fputs("}", to);
	} else {
		fputs("null", to);
	}
	fputs(",\"latency\":", to);
	if (r->have_latency) {
		const struct engine_run_result *l = &r->latency;
		fputs("{\"rate\":", to);
		jnum(to, l->rate, 0);
		fputs(",\"rate_from\":", to);
		jstr(to, r->latency_rate_from);
		fputs(",\"achieved_rate\":", to);
		jnum(to, l->achieved_rate, 0);
		fprintf(to, ",\"pods\":%" PRIu64 ",\"placed\":%" PRIu64
			",\"unschedulable\":%" PRIu64 ",\"late_submits\":%" PRIu64
			",\"wall_s\":%.3f,\"p50_us\":%.1f,\"p90_us\":%.1f,"
			"\"p99_us\":%.1f,\"p999_us\":%.1f,\"latency\":"
			"\"open loop: from the scheduled submit time\","
			"\"seen_p50_us\":%.1f,\"seen_p90_us\":%.1f,"
			"\"seen_p99_us\":%.1f,\"seen_p999_us\":%.1f", l->pods,
			l->placed, l->unschedulable, l->late_submits, l->wall_s,
			l->p50_us, l->p90_us, l->p99_us, l->p999_us, l->seen_p50_us,
			l->seen_p90_us, l->seen_p99_us, l->seen_p999_us);
		if (r->have_pauses)
			fprintf(to, ",\"machine_pauses\":{\"cores\":%u,\"seconds\":%.1f,"
				"\"over_100us_per_s\":%.2f,\"over_1ms_per_s\":%.2f,"
				"\"longest_us\":%.0f,\"lost_share\":%.5f}",
				r->pauses.cores, r->pauses.seconds, r->pauses.over_100us_s,
				r->pauses.over_1ms_s, r->pauses.longest_us,
				r->pauses.lost_share);
		if (l->have_others) {
			const struct others *o = &l->others;
			fprintf(to, ",\"other_threads\":{\"window_s\":%.3f,\"cpu_ms\":%.3f,"
				"\"threads\":%u,\"top\":[", o->window_s, o->total_ms,
				o->threads);
			for (unsigned i = 0; i < o->n_top; i++) {
				fprintf(to, "%s{\"comm\":", i ? "," : "");
				jstr(to, o->top[i].comm);
				fprintf(to, ",\"pid\":%u,\"ppid\":%u,\"cpu_ms\":%.3f,"
					"\"runs\":%" PRIu64 "}", o->top[i].pid,
					o->top[i].ppid, o->top[i].ms, o->top[i].slices);
			}
			fputs("]}", to);
		}
		fputs("}", to);
	} else {
		fputs("null", to);
	}
	fputs(",\"reference\":", to);
	if (r->have_reference) {
		json_reference(to, &r->reference);
	} else {
		fputs("null,\"reference_note\":", to);
		jstr(to, r->reference_note);
	}
	fprintf(to, ",\"ring_limit\":{\"pods_per_sec\":%.0f,"
		"\"round_trips_per_sec\":%.0f,\"ns_per_round_trip\":%.2f,"
		"\"min_per_sec\":%.0f,\"max_per_sec\":%.0f,\"runs\":%u,"
		"\"handles_per_run\":%" PRIu64 ",\"burst\":%u,\"ring_slots\":%u,"
		"\"ring\":", rl->median, rl->median, 1e9 / rl->median, rl->min,
		rl->max, rl->runs, rl->handles, rl->burst, rl->ring_slots);
	jstr(to, rl->ring);
	fprintf(to, ",\"page_size\":%zu,\"memory\":", rl->page_size);
	jstr(to, rl->backing);
	fputs("},\"engine_over_reference\":", to);
	jratio(to, r->have_engine ? r->engine.pods_per_sec : 0,
	       r->have_reference ? r->reference.pods_per_sec : 0);
	fputs(",\"engine_over_ring_limit\":", to);
	jratio(to, r->have_engine ? r->engine.pods_per_sec : 0, rl->median);
	fputs(",\"quality\":", to);
	if (r->have_quality) {
		const struct quality_result *q = &r->quality;
		fprintf(to, "{\"nodes\":%u,\"engine_default\":", q->nodes);
		json_quality_side(to, &q->engine_default);
		fputs(",\"engine_100\":", to);
		json_quality_side(to, &q->engine_100);
		fputs(",\"reference\":", to);
		json_quality_side(to, &q->reference);
		fputc('}', to);
	} else {
		fputs("null,\"quality_note\":", to);
		jstr(to, r->quality_note);
	}
	if (r->n_sweep > 0)
		json_sweep(to, r);
	fputs(",\"syscalls_per_pod\":", to);
	if (r->syscalls_per_pod >= 0)
		jnum(to, r->syscalls_per_pod, 4);
	else
		fputs("null", to);
	fprintf(to, ",\"machine\":{\"cores\":%u,\"cpu\":", r->cores);
	jstr(to, r->cpu_model);
	fputs("}}\n", to);
}
