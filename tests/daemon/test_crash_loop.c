/* stress.crash_loop: the daemon killed (SIGKILL) and restarted again and
 * again while three producer processes place and release pods; nothing a
 * producer saw is lost and nothing is counted twice (docs/concepts.md, invariant
 * 8).
 *
 * Invariants, counted, each must read zero:
 *   lost     a placement a producer saw PLACED, and did not see released,
 *            that its listing after the restart does not hold (or that a
 *            later release says is not there)
 *   phantom  a placement in a producer's listing after a restart that it
 *            neither saw PLACED nor had in flight when the daemon died
 *   miscount a node whose counters (pods, cpu), read from the state region
 *            right after a restart with every producer stopped, differ from
 *            the sum of the live placement records on it
 * Placements whose answer never reached their producer (placed, recorded,
 * then the crash) show up in the listing with their cookie: "delivered on
 * reconnect", counted and reported, not an error. And the race is real:
 * the run fails unless pods were placed and released across the restarts.
 *
 * With --reboot MODE the daemon keeps a durable store (--state-dir,
 * --durability MODE) and each restart is a simulated reboot: the state
 * region is removed after the kill, so the daemon rebuilds it from the
 * store. In sync mode lost and phantom must still read zero (PLACED and a
 * release's answer come only once durable). In async and none they may
 * not: what the mode may lose (the ops queued since the last commit) shows
 * up as lost placements and released ones that came back ("phantom"),
 * counted and reported. The simulation kills the process, not the
 * machine: the kernel keeps what LMDB wrote, so fsync itself is not what
 * is tested (none and async lose the same here).
 *
 * usage: test_crash_loop SHMSCHEDD [RESTARTS] [--reboot none|async|sync]
 * (RESTARTS default 50; SHMSCHED_CRASH_RESTARTS overrides).
 */
#define _GNU_SOURCE 1

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <shmsched/client.h>

#include "shm/shm.h"

#define PRODUCERS 3
#define HELD_MAX 4096
#define NODES 4

static const char pod_json[] =
	"{\"kind\": \"Pod\", \"metadata\": {\"name\": \"crash\"},"
	" \"spec\": {\"containers\": [{\"name\": \"c\", \"resources\":"
	" {\"requests\": {\"cpu\": \"100m\", \"memory\": \"64Mi\"}}}]}}";

/* What a producer reports to the parent at the end. */
struct report {
	uint64_t placed, released, reconnects, delivered, lost, phantom;
	uint64_t unschedulable, cancelled;
};

static void sleep_ms(unsigned ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};
	nanosleep(&ts, NULL);
}

static uint64_t rng_step(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* A producer's view: placements it holds (saw PLACED, not released),
 * pods in flight when the daemon went (answered CANCELLED by the library,
 * maybe placed), releases whose answer never came. */
struct producer_state {
	uint64_t held_id[HELD_MAX], held_cookie[HELD_MAX];
	unsigned n_held;
	uint64_t *doubt_cookie; /* bitmap over cookies */
	uint64_t doubt_release[HELD_MAX];
	unsigned n_doubt_release;
	struct report rep;
};

static volatile sig_atomic_t stop_requested;

/* Reconnects of all producers, in memory shared across the fork: the
 * parent waits for one after each restart before the next kill, so a
 * loaded machine cannot kill the daemon again before any producer came
 * back (the reconnect path is what the loop tests). Relaxed: a count. */
static uint64_t *reconnects_seen;
static void on_usr1(int sig)
{
	(void)sig;
	stop_requested = 1;
}

#define COOKIES (1u << 22)

static bool doubt_has(const struct producer_state *p, uint64_t cookie)
{
	return cookie < COOKIES && (p->doubt_cookie[cookie / 64] >> (cookie % 64) & 1);
}

static int held_index(const struct producer_state *p, uint64_t id)
{
	for (unsigned i = 0; i < p->n_held; i++)
		if (p->held_id[i] == id)
			return (int)i;
	return -1;
}

static void held_remove(struct producer_state *p, unsigned i)
{
	p->held_id[i] = p->held_id[p->n_held - 1];
	p->held_cookie[i] = p->held_cookie[p->n_held - 1];
	p->n_held--;
}

/* After a (re)connect: the listing against what this producer knows. */
static int reconcile(struct producer_state *p, struct shmsched_client *c)
{
	static struct shmsched_placement list[HELD_MAX];
	unsigned n = 0;
	uint32_t cursor = 0;
	char err[256];
	while (cursor != UINT32_MAX && n < HELD_MAX) {
		int got = shmsched_placements(c, &cursor, list + n, HELD_MAX - n,
					      err, sizeof(err));
		if (got < 0)
			return got;
		n += (unsigned)got;
	}
	bool seen[HELD_MAX] = {0};
	for (unsigned k = 0; k < n; k++) {
		int i = held_index(p, list[k].placement_id);
		if (i >= 0) {
			seen[i] = true;
			continue;
		}
		bool doubted_release = false;
		for (unsigned d = 0; d < p->n_doubt_release; d++)
			doubted_release |= p->doubt_release[d] == list[k].placement_id;
		if (doubt_has(p, list[k].cookie))
			p->rep.delivered++;
		else if (!doubted_release)
			p->rep.phantom++;
	}
	for (unsigned i = 0; i < p->n_held; i++) {
		if (seen[i])
			continue;
		bool doubted_release = false;
		for (unsigned d = 0; d < p->n_doubt_release; d++)
			doubted_release |= p->doubt_release[d] == p->held_id[i];
		if (!doubted_release) {
			fprintf(stderr, "lost: placement %" PRIu64 " (cookie %" PRIu64
				") not listed after a restart\n", p->held_id[i],
				p->held_cookie[i]);
			p->rep.lost++;
		}
	}
	/* The listing is the truth from here on. */
	p->n_held = 0;
	for (unsigned k = 0; k < n && k < HELD_MAX; k++) {
		p->held_id[p->n_held] = list[k].placement_id;
		p->held_cookie[p->n_held++] = list[k].cookie;
	}
	memset(p->doubt_cookie, 0, COOKIES / 8);
	p->n_doubt_release = 0;
	return 0;
}

static void producer_main(const char *sock, unsigned k, int report_fd)
{
	struct producer_state *p = calloc(1, sizeof(*p));
	p->doubt_cookie = calloc(COOKIES / 64, sizeof(uint64_t));
	if (p == NULL || p->doubt_cookie == NULL)
		_exit(3);
	signal(SIGUSR1, on_usr1);
	char name[32], err[256];
	snprintf(name, sizeof(name), "crash-%u", k);
	uint64_t rng = 0x9e3779b97f4a7c15ull * (k + 1), cookie = 1;
	bool final_done = false;
	while (!final_done) {
		struct shmsched_client *c = NULL;
		unsigned tries = 0;
		while (shmsched_connect_named(sock, name, &c, err, sizeof(err)) < 0) {
			/* Told to stop and no daemon for 10 s: it is not coming
			 * back (the parent reports why). */
			if (stop_requested && ++tries > 2000) {
				p->rep.lost += 1000000;
				ssize_t w = write(report_fd, &p->rep, sizeof(p->rep));
				_exit(w == (ssize_t)sizeof(p->rep) ? 5 : 4);
			}
			sleep_ms(5);
		}
		uint32_t tpl;
		if (shmsched_register_template(c, pod_json, strlen(pod_json), &tpl,
					       err, sizeof(err)) < 0 ||
		    reconcile(p, c) < 0) {
			shmsched_disconnect(c);
			continue; /* gone again already */
		}
		p->rep.reconnects++;
		__atomic_fetch_add(reconnects_seen, 1, __ATOMIC_RELAXED);
		bool gone = false;
		while (!gone) {
			if (stop_requested) {
				/* Stop placing; one last look with the daemon up. */
				final_done = shmsched_in_flight(c) == 0;
				if (final_done)
					break;
			}
			struct shmsched_pod pods[8];
			unsigned want = stop_requested ? 0 : 1 + rng_step(&rng) % 8;
			for (unsigned i = 0; i < want; i++)
				pods[i] = (struct shmsched_pod){.cookie = cookie + i,
								.template_id = tpl};
			int taken = want ? shmsched_submit(c, pods, want) : 0;
			if (taken < 0) {
				gone = true;
				break;
			}
			cookie += (unsigned)taken;
			struct shmsched_result res[32];
			int got = shmsched_poll(c, res, 32);
			if (got < 0) {
				gone = true;
				break;
			}
			for (int i = 0; i < got; i++) {
				if (res[i].status == SHMSCHED_PLACED && p->n_held < HELD_MAX) {
					p->held_id[p->n_held] = res[i].placement_id;
					p->held_cookie[p->n_held++] = res[i].cookie;
					p->rep.placed++;
				} else if (res[i].status == SHMSCHED_CANCELLED) {
					/* In flight when the daemon went: maybe placed. */
					if (res[i].cookie < COOKIES)
						p->doubt_cookie[res[i].cookie / 64] |=
							UINT64_C(1) << (res[i].cookie % 64);
					p->rep.cancelled++;
				} else if (res[i].status == SHMSCHED_UNSCHEDULABLE) {
					p->rep.unschedulable++;
				}
			}
			/* Release about as often as placing, so nodes neither
			 * fill for good nor stay empty. */
			if (p->n_held > 0 && rng_step(&rng) % 3 != 0) {
				unsigned i = (unsigned)(rng_step(&rng) % p->n_held);
				uint64_t id = p->held_id[i];
				int rc = shmsched_release(c, id, err, sizeof(err));
				if (rc == 0) {
					held_remove(p, i);
					p->rep.released++;
				} else if (rc == -ECONNRESET) {
					if (p->n_doubt_release < HELD_MAX)
						p->doubt_release[p->n_doubt_release++] = id;
					gone = true;
				} else {
					fprintf(stderr, "lost: release of %" PRIu64 ": %s\n",
						id, err);
					held_remove(p, i);
					p->rep.lost++;
				}
			}
			if (taken == 0 && got == 0)
				sleep_ms(1);
		}
		if (gone) {
			/* The library's last answers: CANCELLED for what was in
			 * flight. */
			struct shmsched_result res[64];
			int got;
			while ((got = shmsched_poll(c, res, 64)) > 0)
				for (int i = 0; i < got; i++) {
					if (res[i].status == SHMSCHED_PLACED && p->n_held < HELD_MAX) {
						p->held_id[p->n_held] = res[i].placement_id;
						p->held_cookie[p->n_held++] = res[i].cookie;
						p->rep.placed++;
					} else if (res[i].status == SHMSCHED_CANCELLED &&
						   res[i].cookie < COOKIES) {
						p->doubt_cookie[res[i].cookie / 64] |=
							UINT64_C(1) << (res[i].cookie % 64);
						p->rep.cancelled++;
					}
				}
		} else if (final_done) {
			/* The last reconcile, against a live daemon. */
			if (reconcile(p, c) < 0)
				final_done = false;
		}
		shmsched_disconnect(c);
	}
	ssize_t w = write(report_fd, &p->rep, sizeof(p->rep));
	_exit(w == (ssize_t)sizeof(p->rep) ? 0 : 4);
}

static const char *store_args[4]; /* --state-dir DIR --durability MODE */

static pid_t start_daemon(const char *exe, const char *name, const char *cluster,
			  const char *sock, const char *log, const char *extra)
{
	pid_t pid = fork();
	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0600);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		const char *argv[16] = {exe, "--name", name, "--cluster", cluster,
					"--socket", sock, "--workers", "1", "--no-pin"};
		int n = 10;
		if (extra != NULL)
			argv[n++] = extra;
		for (int i = 0; i < 4 && store_args[0] != NULL; i++)
			argv[n++] = store_args[i];
		argv[n] = NULL;
		execv(exe, (char *const *)argv);
		_exit(127);
	}
	/* Ready when the admin socket accepts: poll for the ready line's
	 * effect, the socket file, then give it the time to listen. */
	char admin[512];
	snprintf(admin, sizeof(admin), "%s.admin", sock);
	for (int i = 0; i < 6000; i++) {
		struct shmsched_client *c;
		char err[128];
		if (shmsched_connect(sock, &c, err, sizeof(err)) == 0) {
			shmsched_disconnect(c);
			return pid;
		}
		int st;
		if (waitpid(pid, &st, WNOHANG) == pid) {
			fprintf(stderr, "daemon exited at start (log %s)\n", log);
			return -1;
		}
		sleep_ms(5);
	}
	return -1;
}

/* The restarted daemon's region, every producer stopped: each node's pod
 * and cpu counters against the live records on it. Returns the nodes
 * that differ (or 1000 when the region cannot be read). */
static unsigned check_region(const char *name, uint64_t *records_out)
{
	char err[256];
	struct state *st;
	if (state_observe(name, &st, err, sizeof(err)) < 0) {
		fprintf(stderr, "observe: %s\n", err);
		return 1000;
	}
	const struct state_meta *m = state_meta(st);
	struct ledger *l = ledger_create_in(state_section(st, SHM_SECTION_LEDGER),
					    m->max_nodes, false);
	uint32_t hw = 0;
	const struct placement_record *recs = placements_records_in(
		state_section(st, SHM_SECTION_PLACEMENTS), m->max_placements, &hw);
	unsigned bad = 0;
	if (l == NULL || recs == NULL) {
		state_close(st);
		ledger_destroy(l);
		return 1000;
	}
	int64_t pods[64] = {0}, cpu[64] = {0};
	uint64_t records = 0;
	for (uint32_t i = 0; i < hw; i++) {
		const struct placement_record *r = &recs[i];
		if (__atomic_load_n(&r->owner, __ATOMIC_ACQUIRE) == 0)
			continue;
		records++;
		if (r->slot < 64 && r->node_gen == ledger_node_generation(l, r->slot)) {
			pods[r->slot]++;
			cpu[r->slot] += r->request.v[RES_CPU];
		}
	}
	for (uint32_t s = 0; s < NODES; s++) {
		const struct node_alloc *a = ledger_node(l, s);
		if (a->used[RES_PODS] != pods[s] || a->used[RES_CPU] != cpu[s]) {
			fprintf(stderr, "miscount: node slot %u: %" PRId64 " pods, %"
				PRId64 "m cpu; its records: %" PRId64 ", %" PRId64 "m\n",
				s, a->used[RES_PODS], a->used[RES_CPU], pods[s], cpu[s]);
			bad++;
		}
	}
	*records_out = records;
	ledger_destroy(l);
	state_close(st);
	return bad;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s SHMSCHEDD [RESTARTS]\n", argv[0]);
		return 2;
	}
	const char *exe = argv[1];
	unsigned restarts = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 10) : 50;
	const char *reboot = argc > 4 && strcmp(argv[3], "--reboot") == 0 ? argv[4]
									: NULL;
	const char *env = getenv("SHMSCHED_CRASH_RESTARTS");
	if (env != NULL)
		restarts = (unsigned)strtoul(env, NULL, 10);
	/* A hang fails the test in bounded time, whatever hangs. */
	alarm(60 + restarts * 15);
	char dir[] = "/tmp/shmsched-crash-XXXXXX";
	if (mkdtemp(dir) == NULL)
		return 2;
	char cluster[600], sock[600], log[600], name[64];
	snprintf(cluster, sizeof(cluster), "%s/cluster.json", dir);
	snprintf(sock, sizeof(sock), "%s/s.sock", dir);
	snprintf(log, sizeof(log), "%s/daemon.log", dir);
	snprintf(name, sizeof(name), "crash-loop-%d", (int)getpid());
	char store_dir[600];
	snprintf(store_dir, sizeof(store_dir), "%s/store", dir);
	if (reboot != NULL) {
		store_args[0] = "--state-dir";
		store_args[1] = store_dir;
		store_args[2] = "--durability";
		store_args[3] = reboot;
	}
	FILE *f = fopen(cluster, "w");
	if (f == NULL)
		return 2;
	fprintf(f, "{\"kind\": \"List\", \"items\": [");
	for (int i = 0; i < NODES; i++)
		fprintf(f, "%s{\"kind\": \"Node\", \"metadata\": {\"name\": \"n%d\"},"
			" \"status\": {\"allocatable\": {\"cpu\": \"2\", \"memory\":"
			" \"8Gi\", \"pods\": \"110\"}}}", i ? "," : "", i);
	fprintf(f, "]}\n");
	fclose(f);

	reconnects_seen = mmap(NULL, sizeof(*reconnects_seen), PROT_READ | PROT_WRITE,
			       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (reconnects_seen == MAP_FAILED)
		return 2;
	*reconnects_seen = 0;
	pid_t daemon = start_daemon(exe, name, cluster, sock, log, "--fresh");
	if (daemon < 0)
		return 1;
	int pipes[PRODUCERS][2];
	pid_t prod[PRODUCERS];
	for (unsigned k = 0; k < PRODUCERS; k++) {
		if (pipe(pipes[k]) < 0)
			return 2;
		prod[k] = fork();
		if (prod[k] == 0) {
			close(pipes[k][0]);
			producer_main(sock, k, pipes[k][1]);
		}
		close(pipes[k][1]);
	}
	uint64_t rng = (uint64_t)getpid() * 0x9e3779b97f4a7c15ull | 1;
	unsigned miscount = 0, done = 0, died = 0;
	uint64_t records = 0;
	uint64_t seen = 0;
	for (unsigned i = 0; i < restarts; i++) {
		/* A producer back on the daemon (at most 5 s), then a while of
		 * placing and releasing before the kill. */
		for (unsigned w = 0; w < 5000 &&
		     __atomic_load_n(reconnects_seen, __ATOMIC_RELAXED) == seen; w++)
			sleep_ms(1);
		seen = __atomic_load_n(reconnects_seen, __ATOMIC_RELAXED);
		sleep_ms(20 + (unsigned)(rng_step(&rng) % 120));
		kill(daemon, SIGKILL);
		int status = 0;
		waitpid(daemon, &status, 0);
		if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL) {
			/* It ended before the kill: a crash, or a sanitizer's
			 * report (halt_on_error). */
			fprintf(stderr, "restart %u: the daemon had exited by itself "
				"(status 0x%x; log %s)\n", i + 1, status, log);
			died++;
		}
		for (unsigned k = 0; k < PRODUCERS; k++)
			kill(prod[k], SIGSTOP);
		char e[256];
		if (reboot != NULL && state_remove(name, e, sizeof(e)) < 0) {
			fprintf(stderr, "reboot: %s\n", e);
			miscount += 1000;
		}
		daemon = start_daemon(exe, name, cluster, sock, log, NULL);
		if (daemon < 0) {
			fprintf(stderr, "restart %u: the daemon did not come up (log "
				"%s)\n", i + 1, log);
			for (unsigned k = 0; k < PRODUCERS; k++)
				kill(prod[k], SIGCONT);
			break;
		}
		miscount += check_region(name, &records);
		for (unsigned k = 0; k < PRODUCERS; k++)
			kill(prod[k], SIGCONT);
		done++;
	}
	struct report sum = {0};
	for (unsigned k = 0; k < PRODUCERS; k++) {
		kill(prod[k], SIGUSR1);
		struct report r;
		ssize_t got = read(pipes[k][0], &r, sizeof(r));
		waitpid(prod[k], NULL, 0);
		if (got != (ssize_t)sizeof(r)) {
			fprintf(stderr, "producer %u did not report\n", k);
			miscount += 1000;
			continue;
		}
		sum.placed += r.placed;
		sum.released += r.released;
		sum.reconnects += r.reconnects;
		sum.delivered += r.delivered;
		sum.lost += r.lost;
		sum.phantom += r.phantom;
		sum.cancelled += r.cancelled;
		sum.unschedulable += r.unschedulable;
	}
	if (daemon > 0) {
		kill(daemon, SIGTERM);
		int status = 0;
		waitpid(daemon, &status, 0);
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			fprintf(stderr, "the daemon's clean stop failed (status 0x%x; "
				"log %s)\n", status, log);
			died++;
		}
	}
	printf("%s%s: %u of %u restarts (SIGKILL%s), %u producers: %" PRIu64
	       " placed, %" PRIu64 " released, %" PRIu64 " unschedulable, %" PRIu64
	       " answered cancelled by the library, %" PRIu64 " delivered on "
	       "reconnect, %" PRIu64 " reconnects, %" PRIu64 " live records at the "
	       "last restart; lost %" PRIu64 ", phantom %" PRIu64 ", miscounted "
	       "nodes %u, daemons that died by themselves %u\n",
	       reboot ? "reboot loop, durability " : "crash loop",
	       reboot ? reboot : "", done, restarts,
	       reboot ? ", region removed: rebuilt from the store" : "",
	       PRODUCERS, sum.placed, sum.released,
	       sum.unschedulable, sum.cancelled, sum.delivered, sum.reconnects,
	       records, sum.lost, sum.phantom, miscount, died);
	char err[128];
	state_remove(name, err, sizeof(err));
	/* async and none may lose their last milliseconds: reported above,
	 * not failed on. Everything else must hold in every mode. */
	bool may_lose = reboot != NULL && strcmp(reboot, "sync") != 0;
	if (done == restarts && (may_lose || (sum.lost == 0 && sum.phantom == 0)) &&
	    miscount == 0 && died == 0 && sum.placed > 0 && sum.released > 0 &&
	    sum.reconnects >= done) {
		char rm[700];
		snprintf(rm, sizeof(rm), "rm -rf %s", store_dir);
		if (reboot != NULL && system(rm) != 0)
			fprintf(stderr, "could not remove %s\n", store_dir);
		unlink(cluster);
		unlink(log);
		rmdir(dir);
		return 0;
	}
	fprintf(stderr, "FAILED (daemon log: %s)\n", log);
	return 1;
}
