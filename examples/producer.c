/* shmsched-producer-example: the smallest complete shmsched producer.
 *
 *   shmsched-producer-example [--keep] [PODS]     (default 1000)
 *
 * Connects to the daemon (socket: $SHMSCHED_SOCKET, else
 * $XDG_RUNTIME_DIR/shmsched.sock, else /run/shmsched/shmsched.sock),
 * registers one pod template, submits PODS replicas of it, waits for every
 * answer, prints the answers that are not placements (by status name) and
 * a summary with the submit-to-answer latency, then releases its
 * placements (unless --keep: a real producer releases each when its pod
 * ends). If the daemon goes away meanwhile, every pod still in flight is
 * answered CANCELLED by the library: those are read, counted and printed
 * too, so each pod submitted is accounted for. Copy it as the start of
 * your own producer; build against the library with
 * `pkg-config --cflags --libs shmsched-client`.
 *
 * Exit status: 0 when every pod was answered and every placement released
 * (or kept), 1 when a pod was cancelled (the daemon shut down or went
 * away) or a release failed, 2 for bad arguments.
 */
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <shmsched/client.h>

/* A Pod as Kubernetes JSON: the template every pod below is a replica of. */
static const char pod_json[] =
	"{\"kind\": \"Pod\", \"metadata\": {\"name\": \"web\"},"
	" \"spec\": {\"containers\": [{\"name\": \"web\", \"resources\":"
	" {\"requests\": {\"cpu\": \"100m\", \"memory\": \"128Mi\"}}}]}}";

/* Pods handed over per submit: large enough that the ring operation's cost
 * is shared, small enough that answers start coming back at once. */
#define SUBMIT_BURST 64u
#define POLL_BURST 256u

static void usage(FILE *to, const char *prog)
{
	fprintf(to,
		"usage: %s [--keep] [PODS]\n"
		"\n"
		"Submits PODS (default 1000, at most 100000000) replicas of one pod\n"
		"template to the shmsched daemon, waits for every answer, prints the\n"
		"ones that are not placements and a summary, then releases the\n"
		"placements. The daemon's socket: $SHMSCHED_SOCKET, else\n"
		"$XDG_RUNTIME_DIR/shmsched.sock, else /run/shmsched/shmsched.sock.\n"
		"\n"
		"  --keep   leave the placements in place (release them later with\n"
		"           shmsched release, as this producer's identity)\n"
		"  --help   this text\n"
		"\n"
		"Exit status: 0 every pod answered (and released, unless --keep);\n"
		"1 a pod was cancelled (the daemon shut down, or went away: the\n"
		"pods it never answered are reported CANCELLED) or a release\n"
		"failed; 2 bad arguments.\n", prog);
}

static const char *status_name(uint32_t status)
{
	switch (status) {
	case SHMSCHED_PLACED:
		return "PLACED";
	case SHMSCHED_UNSCHEDULABLE:
		return "UNSCHEDULABLE";
	case SHMSCHED_REJECTED:
		return "REJECTED";
	case SHMSCHED_CANCELLED:
		return "CANCELLED";
	default:
		return "UNKNOWN";
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	char err[512];
	unsigned long n_pods = 1000;
	bool keep = false;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			usage(stdout, argv[0]);
			return 0;
		}
		if (strcmp(argv[i], "--keep") == 0) {
			keep = true;
			continue;
		}
		char *end;
		errno = 0;
		n_pods = strtoul(argv[i], &end, 10);
		if (argv[i][0] == '-' || errno != 0 || *end != '\0' ||
		    n_pods == 0 || n_pods > 100000000ul) {
			fprintf(stderr, "%s: PODS \"%s\" is not a number in "
				"1..100000000 (--help for usage)\n", argv[0], argv[i]);
			return 2;
		}
	}

	/* NULL: the socket path from the environment, or the default. */
	struct shmsched_client *c;
	if (shmsched_connect(NULL, &c, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}

	uint32_t template_id;
	int rc = shmsched_register_template(c, pod_json, strlen(pod_json),
					    &template_id, err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr, "registering the template: %s\n", err);
		shmsched_disconnect(c);
		return 1;
	}

	/* One latency per pod, in submission order (the cookie is the index),
	 * and the placements to release at the end. */
	uint64_t *latency_ns = calloc(n_pods, sizeof(*latency_ns));
	uint64_t *placements = calloc(n_pods, sizeof(*placements));
	static struct shmsched_result results[POLL_BURST];
	if (latency_ns == NULL || placements == NULL) {
		fprintf(stderr, "out of memory for %lu pods\n", n_pods);
		free(latency_ns);
		free(placements);
		shmsched_disconnect(c);
		return 1;
	}
	unsigned long submitted = 0, answered = 0, n_placements = 0;
	unsigned long count[SHMSCHED_CANCELLED + 1] = {0};
	bool gone = false; /* the daemon went away: submit no more */

	while (answered < submitted || (!gone && submitted < n_pods)) {
		/* Submit what the region has room for: when it is full, submit
		 * takes fewer (back-pressure) and we poll to free slots. */
		struct shmsched_pod burst[SUBMIT_BURST];
		unsigned want = 0;
		while (!gone && want < SUBMIT_BURST && submitted + want < n_pods) {
			burst[want] = (struct shmsched_pod){
				.cookie = submitted + want,
				.template_id = template_id,
			};
			want++;
		}
		int taken = want > 0 ? shmsched_submit(c, burst, want) : 0;
		if (taken < 0) {
			/* -ECONNRESET: none of this burst was taken; the pods
			 * in flight still get their answers below. */
			gone = true;
			taken = 0;
		}
		submitted += (unsigned)taken;

		/* After the daemon went away, poll still returns its last
		 * answers, then every pod in flight as CANCELLED, then
		 * -ECONNRESET: read until then, so no answer is dropped. */
		int got = shmsched_poll(c, results, POLL_BURST);
		if (got < 0) {
			gone = true;
			break;
		}
		for (int i = 0; i < got; i++) {
			const struct shmsched_result *r = &results[i];
			if (r->status <= SHMSCHED_CANCELLED)
				count[r->status]++;
			if (r->cookie < n_pods)
				latency_ns[r->cookie] = r->complete_ns - r->submit_ns;
			if (r->status == SHMSCHED_PLACED)
				placements[n_placements++] = r->placement_id;
			else
				printf("pod %" PRIu64 ": %s: %s\n", r->cookie,
				       status_name(r->status), r->message);
		}
		answered += (unsigned)got;
		/* Nothing moved: let the daemon's threads have this CPU. A
		 * latency-critical producer would spin instead. */
		if (taken == 0 && got == 0)
			sched_yield();
	}

	qsort(latency_ns, n_pods, sizeof(*latency_ns), cmp_u64);
	printf("%lu pods: %lu submitted, %lu answered: %lu placed, %lu "
	       "unschedulable, %lu rejected, %lu cancelled", n_pods, submitted,
	       answered, count[SHMSCHED_PLACED], count[SHMSCHED_UNSCHEDULABLE],
	       count[SHMSCHED_REJECTED], count[SHMSCHED_CANCELLED]);
	/* Every pod answered by the daemon, none cancelled (by its
	 * shutdown, or by the library for a daemon that went away): the
	 * latencies mean something. */
	unsigned long cancelled = count[SHMSCHED_CANCELLED];
	if (!gone && cancelled == 0)
		printf("; submit-to-answer median %.1f us, p99 %.1f us",
		       (double)latency_ns[n_pods / 2] / 1e3,
		       (double)latency_ns[(n_pods - 1) * 99 / 100] / 1e3);
	printf("\n");

	int status = 0;
	if (cancelled > 0) {
		fprintf(stderr, "%lu pod(s) cancelled: the shmsched daemon shut "
			"down or went away before placing them\n", cancelled);
		status = 1;
	}
	if (gone) {
		fprintf(stderr, "the shmsched daemon has gone: %lu of %lu pods "
			"submitted; %lu placement(s) left to it\n", submitted,
			n_pods, n_placements);
		status = 1;
	} else if (!keep) {
		/* Give the capacity back: a placement lasts until released. */
		unsigned long released = 0;
		for (unsigned long i = 0; i < n_placements; i++) {
			rc = shmsched_release(c, placements[i], err, sizeof(err));
			if (rc < 0) {
				fprintf(stderr, "releasing placement %" PRIu64
					": %s\n", placements[i], err);
				status = 1;
				if (rc == -ECONNRESET) {
					fprintf(stderr, "the shmsched daemon has "
						"gone: %lu placement(s) left to "
						"it\n", n_placements - released);
					break;
				}
				continue;
			}
			released++;
		}
		if (n_placements > 0)
			printf("%lu placement(s) released\n", released);
	} else {
		printf("%lu placement(s) kept (--keep)\n", n_placements);
	}
	free(latency_ns);
	free(placements);
	shmsched_disconnect(c);
	return status;
}
