/* shmsched-producer-example: the smallest complete shmsched producer.
 *
 *   shmsched-producer-example [PODS]     (default 1000)
 *
 * Connects to the daemon (socket: $SHMSCHED_SOCKET, else
 * $XDG_RUNTIME_DIR/shmsched.sock, else /run/shmsched/shmsched.sock),
 * registers one pod template, submits PODS replicas of it, waits for every
 * answer, and prints the answers that are not placements and a summary with
 * the submit-to-answer latency. Copy it as the start of your own producer;
 * build against the library with `pkg-config --cflags --libs shmsched-client`.
 */
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
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

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	char err[512];
	unsigned long n_pods = 1000;
	if (argc > 1) {
		char *end;
		errno = 0;
		n_pods = strtoul(argv[1], &end, 10);
		if (errno != 0 || *end != '\0' || n_pods == 0 ||
		    n_pods > 100000000ul) {
			fprintf(stderr, "usage: %s [PODS]: PODS \"%s\" is not a "
				"number in 1..100000000\n", argv[0], argv[1]);
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

	/* One latency per pod, in submission order (the cookie is the index). */
	uint64_t *latency_ns = calloc(n_pods, sizeof(*latency_ns));
	static struct shmsched_result results[POLL_BURST];
	if (latency_ns == NULL) {
		fprintf(stderr, "out of memory for %lu latencies\n", n_pods);
		shmsched_disconnect(c);
		return 1;
	}
	unsigned long submitted = 0, answered = 0;
	unsigned long count[SHMSCHED_CANCELLED + 1] = {0};

	while (answered < n_pods) {
		/* Submit what the region has room for: when it is full, submit
		 * takes fewer (back-pressure) and we poll to free slots. */
		struct shmsched_pod burst[SUBMIT_BURST];
		unsigned want = 0;
		while (want < SUBMIT_BURST && submitted + want < n_pods) {
			burst[want] = (struct shmsched_pod){
				.cookie = submitted + want,
				.template_id = template_id,
			};
			want++;
		}
		int taken = want > 0 ? shmsched_submit(c, burst, want) : 0;
		if (taken < 0)
			goto daemon_gone;
		submitted += (unsigned)taken;

		int got = shmsched_poll(c, results, POLL_BURST);
		if (got < 0)
			goto daemon_gone;
		for (int i = 0; i < got; i++) {
			const struct shmsched_result *r = &results[i];
			if (r->status <= SHMSCHED_CANCELLED)
				count[r->status]++;
			if (r->cookie < n_pods)
				latency_ns[r->cookie] = r->complete_ns - r->submit_ns;
			if (r->status != SHMSCHED_PLACED)
				printf("pod %" PRIu64 ": status %" PRIu32 ": %s\n",
				       r->cookie, r->status, r->message);
		}
		answered += (unsigned)got;
		/* Nothing moved: let the daemon's threads have this CPU. A
		 * latency-critical producer would spin instead. */
		if (taken == 0 && got == 0)
			sched_yield();
	}

	qsort(latency_ns, n_pods, sizeof(*latency_ns), cmp_u64);
	printf("%lu pods: %lu placed, %lu unschedulable, %lu rejected, "
	       "%lu cancelled; submit-to-answer median %.1f us, p99 %.1f us\n",
	       n_pods, count[SHMSCHED_PLACED], count[SHMSCHED_UNSCHEDULABLE],
	       count[SHMSCHED_REJECTED], count[SHMSCHED_CANCELLED],
	       (double)latency_ns[n_pods / 2] / 1e3,
	       (double)latency_ns[(n_pods - 1) * 99 / 100] / 1e3);
	free(latency_ns);
	shmsched_disconnect(c);
	return 0;

daemon_gone:
	fprintf(stderr, "the shmsched daemon has gone: %lu of %lu pods "
		"answered, %u in flight will never be\n", answered, n_pods,
		shmsched_in_flight(c));
	free(latency_ns);
	shmsched_disconnect(c);
	return 1;
}
