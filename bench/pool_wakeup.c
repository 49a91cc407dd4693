/* pool-wakeup: how long from pool_wake() to the poll that sees the work,
 * when every worker is asleep on the futex.
 *
 * Each trial waits until all workers have announced sleep, lets them reach
 * the kernel (1-2 ms), stamps the time, publishes a trial number and calls
 * pool_wake(); the first poll that sees the number stamps the time again.
 * Both stamps are CLOCK_MONOTONIC. The sleep timeout is 1 s, so a wake-up
 * that came from the timeout rather than pool_wake() would show as ~1 s.
 * It also times pool_wake() when nobody sleeps (workers kept busy).
 *
 * Usage: pool-wakeup [workers [trials]]   (defaults: 1 worker, 1000 trials)
 */
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "workers/workers.h"
#include "base/base.h"
#include "shmsched/version.h"

#define TRY "Try 'pool-wakeup --help' for more information.\n"

/* A positional argument: a whole number in 1..max, or a message. */
static int parse_count(const char *what, const char *s, unsigned long max,
		       unsigned *out)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || s[0] == '-' || v < 1 ||
	    v > max) {
		fprintf(stderr, "pool-wakeup: %s: \"%s\": expected a whole number "
			"in 1..%lu\n", what, s, max);
		return -1;
	}
	*out = (unsigned)v;
	return 0;
}

static void sleep_us(unsigned us)
{
	struct timespec ts = {us / 1000000u, (long)(us % 1000000u) * 1000};
	nanosleep(&ts, NULL);
}

struct trial_state {
	uint64_t posted;  /* trial number published by the main thread */
	uint64_t handled; /* last trial a worker saw */
	uint64_t t_wake;  /* stamp before pool_wake(), written before posted */
	uint64_t *latency_ns;
};

static unsigned wake_poll(void *arg, unsigned index, void *scratch)
{
	(void)index;
	(void)scratch;
	struct trial_state *s = arg;
	/* Acquire — partner the release store of posted: t_wake is visible. */
	uint64_t posted = __atomic_load_n(&s->posted, __ATOMIC_ACQUIRE);
	uint64_t handled = __atomic_load_n(&s->handled, __ATOMIC_RELAXED);
	if (posted == handled)
		return 0;
	uint64_t t = now_ns();
	/* Relaxed CAS: only one worker records a trial; the release store
	 * of handled below is what the main thread waits on. */
	if (!__atomic_compare_exchange_n(&s->handled, &handled, posted, false,
					 __ATOMIC_RELEASE, __ATOMIC_RELAXED))
		return 0;
	s->latency_ns[posted - 1] = t - s->t_wake;
	/* Release — partner the main thread's acquire load of done. */
	__atomic_store_n(&s->t_wake, 0, __ATOMIC_RELEASE);
	return 1;
}

static unsigned busy_poll(void *arg, unsigned index, void *scratch)
{
	(void)arg;
	(void)index;
	(void)scratch;
	return 1;
}

/* Moves the calling thread off the workers' cpus, when there is a cpu
 * left, so that it does not compete with the worker it wakes. */
static void pin_main_apart(const struct pool *p)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	for (long c = ncpu - 1; c >= 0; c--) {
		bool used = false;
		for (unsigned i = 0; i < pool_size(p); i++) {
			struct pool_worker_stats st;
			pool_worker_stats(p, i, &st);
			used |= st.cpu == c;
		}
		if (used)
			continue;
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET((int)c, &set);
		if (sched_setaffinity(0, sizeof(set), &set) == 0)
			printf("main thread on cpu %ld, apart from the workers\n", c);
		return;
	}
	printf("main thread shares the workers' cpus\n");
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static void print_machine(void)
{
	char model[256] = "unknown";
	FILE *f = fopen("/proc/cpuinfo", "r");
	if (f != NULL) {
		char line[512];
		while (fgets(line, sizeof(line), f) != NULL) {
			if (strncmp(line, "model name", 10) == 0) {
				char *c = strchr(line, ':');
				if (c != NULL) {
					snprintf(model, sizeof(model), "%s", c + 2);
					model[strcspn(model, "\n")] = '\0';
				}
				break;
			}
		}
		fclose(f);
	}
	struct utsname u;
	uname(&u);
	printf("machine: %s, %ld cpus online, Linux %s\n", model,
	       sysconf(_SC_NPROCESSORS_ONLN), u.release);
}

int main(int argc, char **argv)
{
	unsigned workers = 1, trials = 1000;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
			printf("usage: pool-wakeup [WORKERS [TRIALS]]\n"
			       "How long from pool_wake() to the poll that sees the "
			       "work, every\nworker asleep on the futex (defaults: 1 "
			       "worker, 1000 trials).\n");
			return 0;
		}
		if (strcmp(argv[i], "--version") == 0) {
			printf("pool-wakeup %s\n", SHMSCHED_VERSION_STRING);
			return 0;
		}
		if (argv[i][0] == '-') {
			fprintf(stderr, "pool-wakeup: unrecognized option '%s'\n" TRY,
				argv[i]);
			return 2;
		}
	}
	if (argc > 3) {
		fprintf(stderr, "pool-wakeup: unexpected argument \"%s\"\n" TRY,
			argv[3]);
		return 2;
	}
	if ((argc > 1 && parse_count("WORKERS", argv[1], 256, &workers) < 0) ||
	    (argc > 2 && parse_count("TRIALS", argv[2], 10000000, &trials) < 0))
		return 2;
	print_machine();

	struct trial_state s = {0};
	s.latency_ns = calloc(trials, sizeof(uint64_t));
	if (s.latency_ns == NULL)
		return 1;
	char err[256];
	struct pool_config cfg = {
		.workers = workers,
		.pin = true,
		.spin_polls = 1,
		.yield_polls = 1,
		.sleep_max_us = 1000000,
	};
	struct pool *p = pool_start(&cfg, wake_poll, &s, err, sizeof(err));
	if (p == NULL) {
		fprintf(stderr, "pool-wakeup: %s\n", err);
		return 1;
	}
	pin_main_apart(p);
	unsigned seed = 1;
	for (unsigned i = 1; i <= trials; i++) {
		while (pool_sleeping(p) < workers)
			sleep_us(50);
		sleep_us(1000 + (unsigned)(rand_r(&seed) % 1000));
		s.t_wake = now_ns();
		/* Release — partner the acquire in wake_poll(). */
		__atomic_store_n(&s.posted, i, __ATOMIC_RELEASE);
		pool_wake(p);
		/* Acquire — partner the CAS in wake_poll(): latency_ns[i-1]
		 * is written before t_wake is cleared, so wait for that. */
		while (__atomic_load_n(&s.handled, __ATOMIC_ACQUIRE) != i ||
		       __atomic_load_n(&s.t_wake, __ATOMIC_ACQUIRE) != 0)
			;
	}
	pool_stop(p);

	qsort(s.latency_ns, trials, sizeof(uint64_t), cmp_u64);
	printf("wake-up from sleep, %u worker(s) pinned, %u trials: "
	       "median %.1f us, p99 %.1f us, max %.1f us\n",
	       workers, trials, (double)s.latency_ns[trials / 2] / 1e3,
	       (double)s.latency_ns[(size_t)trials * 99 / 100] / 1e3,
	       (double)s.latency_ns[trials - 1] / 1e3);

	/* pool_wake() with nobody asleep: busy workers, no system call. */
	cfg.spin_polls = 0;
	p = pool_start(&cfg, busy_poll, NULL, err, sizeof(err));
	if (p == NULL) {
		fprintf(stderr, "pool-wakeup: %s\n", err);
		return 1;
	}
	enum { CALLS = 1000000 };
	uint64_t t0 = now_ns();
	for (unsigned i = 0; i < CALLS; i++)
		pool_wake(p);
	uint64_t t1 = now_ns();
	pool_stop(p);
	printf("pool_wake() with no sleeper, workers busy: %.1f ns per call\n",
	       (double)(t1 - t0) / CALLS);
	free(s.latency_ns);
	return 0;
}
