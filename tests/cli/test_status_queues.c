/* unit.status_queues: shmsched status --queues' layout of the daemon's
 * metrics text (status_queues_print, cli/status_queues_text.c): the rows,
 * at most STATUS_QUEUE_LINES then "... and K more", the values looked up
 * by labels ("-" when absent), what the daemon left out, the lifecycle's,
 * quarantine's and approval's lines; and memory that does not grow with
 * the text: a text of 200,000 lines is laid out with nothing left
 * allocated beyond the output's buffer (the per-line array this replaced
 * took a kilobyte a line: 200 MB here, and the check fails on it); and
 * time linear in the text: the steps taken (lines read, probes,
 * comparisons: cli/status_queues_text_internal.h) stay under
 * STATUS_QUEUE_LINES + 16 a line at 4,000 ClusterQueues, where the layout
 * that read the usage samples again for each queue took 32 million. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cli/status_queues_text.h"
#include "cli/status_queues_text_internal.h"

/* The layout of `text`, malloc'ed. */
static char *layout(const char *text, unsigned *left)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	assert_non_null(out);
	*left = status_queues_print(text, out);
	assert_int_equal(fclose(out), 0);
	return buf;
}

static void test_rows_and_values(void **state)
{
	(void)state;
	const char *text =
		"# HELP kueue_admitted_workloads_total x\n"
		"kueue_admitted_workloads_total{cluster_queue=\"a\"} 3\n"
		"kueue_admitted_workloads_total{cluster_queue=\"b\\\"q\"} 0\n"
		"kueue_cluster_queue_weighted_share{cluster_queue=\"a\"} 250\n"
		"kueue_pending_workloads{cluster_queue=\"a\",status=\"active\"} 2\n"
		"kueue_pending_workloads{cluster_queue=\"a\",status=\"inadmissible\"} 1\n"
		"kueue_cluster_queue_resource_usage{cluster_queue=\"a\",flavor=\"f\",resource=\"cpu\"} 4\n"
		"kueue_cluster_queue_resource_usage{cluster_queue=\"b\\\"q\",flavor=\"g\",resource=\"memory\"} 9\n"
		"kueue_cluster_queue_resource_usage{cluster_queue=\"orphan\",flavor=\"f\",resource=\"cpu\"} 1\n"
		"kueue_cluster_queue_nominal_quota{cluster_queue=\"a\",flavor=\"f\",resource=\"cpu\"} 8\n"
		"kueue_cluster_queue_borrowing_limit{cluster_queue=\"a\",flavor=\"f\",resource=\"cpu\"} 2\n"
		"garbage line\n"
		"# 7 ClusterQueues not shown: past --metrics-queues\n"
		"shmsched_node_zones{state=\"Normal\"} 1\n"
		"shmsched_node_tainted 0\n"
		"shmsched_node_tainted 5\n"
		"shmsched_pool_quarantined 2\n"
		"shmsched_pool_quarantine_events_total{event=\"lift\"} 6\n"
		"shmsched_approval_registrations 1\n"
		"shmsched_approval_decisions_total{decision=\"deny\"} 4\n"
		"shmsched_approval_by_asker_total{asker=\"drain\",event=\"asked\"} 9\n"
		"shmsched_approval_by_asker_total{asker=\"reclaim\",event=\"asked\"} 3\n"
		"shmsched_approval_by_asker_total{asker=\"reclaim\",event=\"deny\"} 1\n"
		"shmsched_approval_by_asker_total{asker=\"preemption\",event=\"asked\"} 0";
	unsigned left;
	char *got = layout(text, &left);
	assert_int_equal(left, 0);
	assert_string_equal(got,
		"ClusterQueues (the daemon's admin socket; cpu in cores):\n"
		"  a: weighted share 250; pending 2 active, 1 inadmissible; admitted 3\n"
		"    f cpu: usage 4 of nominal 8, borrowing limit 2\n"
		"  b\"q: weighted share -; pending - active, - inadmissible; admitted 0\n"
		"    g memory: usage 9 of nominal -, borrowing limit -\n"
		"  (the daemon: 7 ClusterQueues not shown: past --metrics-queues)\n"
		"Node lifecycle: zones - initial, 1 normal, - partial disruption, - "
		"full disruption; 5 node(s) tainted unreachable (- queued for their "
		"zone's rate, - ever); taint evictions - scheduled, - done; - "
		"placement(s) with tolerations kept\n"
		"Pool quarantine: 2 (pool, template) pair(s) quarantined on - "
		"node(s); - failure(s) reported; - tripped, 6 lifted, - released, - "
		"capped, - untracked; - placement attempt(s) refused by it\n"
		"Approving managers: 1 registered; - ask(s); - granted, 4 denied, - "
		"not before a time; deadlines passed unanswered: - evicted "
		"(fail-open), - kept (fail-closed)\n"
		"  asked by reclaim: 3 ask(s); - granted, 1 denied, - not before a "
		"time; deadlines passed unanswered: - evicted (fail-open), - kept "
		"(fail-closed)\n");
	free(got);

	got = layout("", &left);
	assert_string_equal(got, "ClusterQueues (the daemon's admin socket; cpu "
			    "in cores):\n  none (the daemon has no Kueue quotas)\n");
	free(got);
}

/* `nq` queues of `nu` usage rows each, the families in the daemon's
 * order, and `other` lines of another metric after them. */
static char *queues_text(unsigned nq, unsigned nu, unsigned other)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	for (unsigned q = 0; q < nq; q++)
		fprintf(f, "kueue_admitted_workloads_total{cluster_queue=\"cq-%u\"} %u\n",
			q, q);
	for (unsigned q = 0; q < nq; q++)
		for (unsigned u = 0; u < nu; u++)
			fprintf(f, "kueue_cluster_queue_resource_usage{cluster_queue="
				"\"cq-%u\",flavor=\"f\",resource=\"r%u\"} %u\n", q, u, u);
	for (unsigned k = 0; k < other; k++)
		fprintf(f, "shmsched_other_series{n=\"%u\"} 0\n", k);
	assert_int_equal(fclose(f), 0);
	return buf;
}

/* STATUS_QUEUE_LINES rows, in the text's order, then how many more. */
static void test_bound(void **state)
{
	(void)state;
	char *text = queues_text(45, 1, 0);
	unsigned left;
	char *got = layout(text, &left);
	assert_int_equal(left, 45 * 2 - STATUS_QUEUE_LINES);
	unsigned rows = 0;
	for (const char *p = strstr(got, "\n") + 1; *p == ' ' && p[2] != '.';
	     p = strchr(p, '\n') + 1)
		rows++;
	assert_int_equal(rows, STATUS_QUEUE_LINES);
	assert_non_null(strstr(got, "  cq-19: weighted share -; pending - active, "
			       "- inadmissible; admitted 19\n    f r0: usage 0 "
			       "of nominal -, borrowing limit -\n  ... and 50 more\n"));
	assert_null(strstr(got, "cq-20"));
	free(got);
	free(text);
}

/* Rows left out counted as before: a queue's name given twice counts its
 * usage rows twice, a usage sample of no queue not at all. */
static void test_left_counted(void **state)
{
	(void)state;
	char *base = queues_text(45, 1, 0);
	size_t n = strlen(base);
	const char *extra =
		"kueue_admitted_workloads_total{cluster_queue=\"cq-44\"} 1\n"
		"kueue_cluster_queue_resource_usage{cluster_queue=\"nobody\","
		"flavor=\"f\",resource=\"r0\"} 1\n";
	char *text = malloc(n + strlen(extra) + 1);
	assert_non_null(text);
	memcpy(text, base, n);
	strcpy(text + n, extra);
	unsigned left;
	char *got = layout(text, &left);
	/* 44 queues of 2 rows, cq-44 twice (its line and its usage row
	 * each time), "nobody" none. */
	assert_int_equal(left, 44 * 2 + 2 * 2 - STATUS_QUEUE_LINES);
	assert_non_null(strstr(got, "  ... and 52 more\n"));
	free(got);
	free(text);
	free(base);
}

/* Linear: 4,000 queues of 2 usage rows and values (24,000 lines) laid
 * out in at most STATUS_QUEUE_LINES + 16 steps a line (a pass a family,
 * a value's sample compared with each printed row): 27 a line here. The
 * layout this replaced read every usage sample again for each queue:
 * 4,000 x 8,000 steps, 32 million, 1,333 a line and growing with the
 * queues. */
static void test_linear(void **state)
{
	(void)state;
	enum { NQ = 4000 };
	char *base = queues_text(NQ, 2, 0);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	fputs(base, f);
	for (unsigned q = 0; q < NQ; q++)
		for (unsigned u = 0; u < 2; u++)
			fprintf(f, "kueue_cluster_queue_nominal_quota{cluster_queue="
				"\"cq-%u\",flavor=\"f\",resource=\"r%u\"} 8\n", q, u);
	for (unsigned q = 0; q < NQ; q++)
		fprintf(f, "kueue_pending_workloads{cluster_queue=\"cq-%u\","
			"status=\"active\"} 1\n", q);
	assert_int_equal(fclose(f), 0);
	size_t lines = 0;
	for (const char *p = buf; *p != '\0'; p++)
		lines += *p == '\n';
	unsigned left;
	status_queues_steps = 0;
	char *got = layout(buf, &left);
	unsigned long long steps = status_queues_steps;
	assert_int_equal(left, NQ * 3 - STATUS_QUEUE_LINES);
	assert_non_null(strstr(got, "  cq-0: weighted share -; pending 1 active, "
			       "- inadmissible; admitted 0\n    f r0: usage 0 of "
			       "nominal 8, borrowing limit -\n"));
	print_message("%zu lines, %llu steps\n", lines, steps);
	assert_true(steps <= (STATUS_QUEUE_LINES + 16) * lines);
	free(got);
	free(buf);
	free(base);
}

/* What the layout asks of malloc, calloc and realloc: this test links
 * cli/status_queues_text.c itself with -Wl,--wrap (tests/cli/meson.build),
 * so its calls, and only those and this file's, come here. */
static size_t asked;
void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);

void *__wrap_malloc(size_t n)
{
	asked += n;
	return __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t size)
{
	asked += n * size;
	return __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t n)
{
	asked += n;
	return __real_realloc(p, n);
}

/* A text of 200,000 lines (7 MB) laid out with no memory asked for: the
 * per-line array this replaced asked a kilobyte a line, 200 MB here. */
static void test_memory_bounded(void **state)
{
	(void)state;
	char *text = queues_text(50, 2, 200000 - 150);
	FILE *out = fopen("/dev/null", "w");
	assert_non_null(out);
	asked = 0;
	unsigned left = status_queues_print(text, out);
	assert_int_equal(left, 50 * 3 - STATUS_QUEUE_LINES);
	assert_true(asked < 64 * 1024);
	fclose(out);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows_and_values),
		cmocka_unit_test(test_bound),
		cmocka_unit_test(test_memory_bounded),
		cmocka_unit_test(test_left_counted),
		cmocka_unit_test(test_linear),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
