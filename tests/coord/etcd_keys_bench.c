/* etcd's cost per placement against placements per key (issue 40: sync
 * at 30,000 pods/s and async within 1.2x of one host are bound by etcd's
 * pace with one key a placement). Run inside a throwaway etcd:
 *
 *     tests/coord/etcd_cluster.sh build/tests/coord/shmsched-etcd-keys-bench [--seconds S]
 *         [--clients C] [--per-key K,K,...] [--rounds R]
 *
 * C clients on threads (4 by default, as a host's lanes), each with its
 * own connection, commit transactions of 127 puts (a committer's largest:
 * ETCD_MAX_TXN_OPS less the fence's) as fast as etcd answers, for S
 * seconds (4) at each K of the list (1,4,16,64): each put's value is K
 * placements of 60 bytes (about a version 3 placement value's size
 * without labels), so a transaction carries 127 x K placements. Keys are
 * deleted every 50 transactions so the store stays small. Printed for
 * each K: placements/s, keys/s, etcd's CPU a placement and a key (its
 * members' utime + stime over the window, from /proc: SHMSCHED_ETCD_PIDS),
 * and the load average; R rounds (2) of the list, alternated, so a
 * change of the machine's load shows as a change between rounds.
 *
 * This measures etcd alone, with values of the right size; it does not
 * run shmschedd, and what K a key a host could write is a design question
 * (docs/design/multi-host.md, "Several placements a key"). */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "coord/coord.h"

#define TXN_PUTS 127
#define PLACEMENT_BYTES 60
#define PER_KEY_MAX 16
#define CLIENTS_MAX 16

static const char *endpoints;
static int per_key;
static atomic_bool stop;     /* relaxed: a flag polled between requests */
static atomic_long placed;   /* relaxed: a tally read after the joins */
static atomic_long failures; /* relaxed: the same */

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void die(const char *what, const char *why)
{
	fprintf(stderr, "shmsched-etcd-keys-bench: %s: %s\n", what, why);
	exit(1);
}

static void *client(void *arg)
{
	long id = (long)arg;
	struct etcd_client *c;
	char err[256];
	if (etcd_client_open(&c, endpoints, NULL, err, sizeof(err)) != 0)
		die("etcd", err);
	size_t vl = (size_t)per_key * PLACEMENT_BYTES;
	char *value = malloc(vl);
	static _Thread_local char keys[TXN_PUTS][64];
	if (value == NULL)
		die("memory", strerror(ENOMEM));
	memset(value, 'x', vl);
	char pfx[32], end[32];
	int pl = snprintf(pfx, sizeof(pfx), "/keys-bench/%ld/", id);
	int el = snprintf(end, sizeof(end), "/keys-bench/%ld0", id);
	struct etcd_op ops[TXN_PUTS];
	for (long b = 0; !atomic_load_explicit(&stop, memory_order_relaxed); b++) {
		for (int i = 0; i < TXN_PUTS; i++) {
			int n = snprintf(keys[i], sizeof(keys[i]), "%s%ld/%d", pfx, b, i);
			ops[i] = (struct etcd_op){.kind = ETCD_OP_PUT, .key = keys[i],
						  .key_len = (size_t)n, .value = value,
						  .value_len = vl};
		}
		struct etcd_txn t = {.success = ops, .n_success = TXN_PUTS};
		struct etcd_txn_result r;
		if (etcd_txn(c, &t, &r) == 0) {
			etcd_txn_result_free(&r);
			atomic_fetch_add_explicit(&placed, (long)TXN_PUTS * per_key,
						  memory_order_relaxed);
		} else {
			atomic_fetch_add_explicit(&failures, 1, memory_order_relaxed);
		}
		if (b % 50 == 49)
			(void)etcd_delete(c, pfx, (size_t)pl, end, (size_t)el, NULL);
	}
	(void)etcd_delete(c, pfx, (size_t)pl, end, (size_t)el, NULL);
	free(value);
	etcd_client_close(c);
	return NULL;
}

/* The members' utime + stime in seconds (SHMSCHED_ETCD_PIDS). */
static double etcd_cpu_s(const char *pids)
{
	double s = 0;
	char list[512];
	snprintf(list, sizeof(list), "%s", pids);
	char *save = NULL;
	for (char *p = strtok_r(list, ",", &save); p != NULL; p = strtok_r(NULL, ",", &save)) {
		char path[64], line[1024];
		snprintf(path, sizeof(path), "/proc/%s/stat", p);
		FILE *f = fopen(path, "r");
		if (f == NULL)
			continue;
		const char *q = fgets(line, sizeof(line), f) != NULL ? strrchr(line, ')') : NULL;
		unsigned long ut = 0, st = 0;
		if (q != NULL &&
		    sscanf(q + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut,
			   &st) == 2)
			s += (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
		fclose(f);
	}
	return s;
}

static int usage(const char *why)
{
	fprintf(stderr, "shmsched-etcd-keys-bench: %s\nusage: tests/coord/etcd_cluster.sh "
		"shmsched-etcd-keys-bench [--seconds S] [--clients C] [--per-key K,K,...] "
		"[--rounds R]\n", why);
	return 2;
}

static bool number(const char *s, long lo, long hi, long *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi)
		return false;
	*out = v;
	return true;
}

int main(int argc, char **argv)
{
	endpoints = getenv("SHMSCHED_ETCD_ENDPOINTS");
	const char *pids = getenv("SHMSCHED_ETCD_PIDS");
	if (endpoints == NULL || pids == NULL) {
		printf("SKIP: run by tests/coord/etcd_cluster.sh (SHMSCHED_ETCD_ENDPOINTS)\n");
		return 77;
	}
	long seconds = 4, clients = 4, rounds = 2;
	long ks[PER_KEY_MAX] = {1, 4, 16, 64};
	size_t nk = 4;
	for (int i = 1; i < argc; i++) {
		if (i + 1 >= argc)
			return usage(argv[i]);
		const char *v = argv[++i];
		if (strcmp(argv[i - 1], "--seconds") == 0) {
			if (!number(v, 1, 600, &seconds))
				return usage("--seconds: expected 1 to 600");
		} else if (strcmp(argv[i - 1], "--clients") == 0) {
			if (!number(v, 1, CLIENTS_MAX, &clients))
				return usage("--clients: expected 1 to 16");
		} else if (strcmp(argv[i - 1], "--rounds") == 0) {
			if (!number(v, 1, 100, &rounds))
				return usage("--rounds: expected 1 to 100");
		} else if (strcmp(argv[i - 1], "--per-key") == 0) {
			char list[256];
			snprintf(list, sizeof(list), "%s", v);
			nk = 0;
			char *save = NULL;
			for (char *p = strtok_r(list, ",", &save); p != NULL;
			     p = strtok_r(NULL, ",", &save)) {
				/* 127 x K x 60 bytes, base64: under etcd's 1.5 MiB. */
				if (nk == PER_KEY_MAX || !number(p, 1, 128, &ks[nk]))
					return usage("--per-key: expected up to 16 numbers of 1 "
						     "to 128, comma separated");
				nk++;
			}
			if (nk == 0)
				return usage("--per-key: expected a number");
		} else {
			return usage(argv[i - 1]);
		}
	}
	printf("%ld clients, transactions of %d puts, values of K x %d bytes, %ld s each\n",
	       clients, TXN_PUTS, PLACEMENT_BYTES, seconds);
	for (long r = 0; r < rounds; r++) {
		for (size_t k = 0; k < nk; k++) {
			per_key = (int)ks[k];
			atomic_store(&stop, false);
			atomic_store(&placed, 0);
			atomic_store(&failures, 0);
			pthread_t th[CLIENTS_MAX];
			double c0 = etcd_cpu_s(pids), t0 = now_s();
			for (long i = 0; i < clients; i++)
				if (pthread_create(&th[i], NULL, client, (void *)i) != 0)
					die("thread", strerror(errno));
			sleep((unsigned)seconds);
			atomic_store(&stop, true);
			for (long i = 0; i < clients; i++)
				pthread_join(th[i], NULL);
			double t = now_s() - t0, cpu = etcd_cpu_s(pids) - c0;
			double n = (double)atomic_load(&placed), keys = n / per_key;
			double load[1] = {0};
			(void)getloadavg(load, 1);
			printf("K=%3d: %9.0f placements/s %7.0f keys/s; etcd CPU %6.2f us a "
			       "placement, %6.1f us a key; %ld failed; load %.1f\n",
			       per_key, n / t, keys / t, n > 0 ? cpu * 1e6 / n : 0.0,
			       keys > 0 ? cpu * 1e6 / keys : 0.0, atomic_load(&failures),
			       load[0]);
			fflush(stdout);
		}
	}
	return 0;
}
