/* The multi-host tests' harness: see etcd_hosts_fixture.h.
 *
 * Design: hosts are child processes of the caller (fork, exec), their
 * output appended to one log a host so a restart keeps the earlier
 * incarnations' lines; ownership is read from etcd alone (the owner keys'
 * values), never from a host's own view. Nothing here is timed but by
 * polling with limits the caller gives. */
#define _GNU_SOURCE 1

#include "etcd_hosts_fixture.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <shmsched/client.h>

double etcd_hosts_now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void etcd_hosts_sleep_ms(unsigned ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};
	nanosleep(&ts, NULL);
}

int etcd_hosts_write_cluster(const struct etcd_hosts *e, const char *cpu, const char *memory,
			     unsigned pods, char *err, size_t errlen)
{
	return etcd_hosts_write_cluster_file(e, "cluster.json", cpu, memory, pods, "", err,
					     errlen);
}

int etcd_hosts_write_cluster_file(const struct etcd_hosts *e, const char *file, const char *cpu,
				  const char *memory, unsigned pods, const char *extra, char *err,
				  size_t errlen)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/%s", e->dir, file);
	FILE *f = fopen(path, "w");
	if (f == NULL) {
		int rc = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return rc;
	}
	fputs("{\"kind\":\"List\",\"items\":[", f);
	for (int z = 0; z < e->zones; z++)
		fprintf(f, "%s{\"kind\":\"Node\",\"metadata\":{\"name\":\"n%d\",\"labels\":{"
			"\"topology.kubernetes.io/zone\":\"z%d\"}},\"status\":{\"allocatable\":"
			"{\"cpu\":\"%s\",\"memory\":\"%s\",\"pods\":\"%u\"}}}", z ? "," : "", z, z,
			cpu, memory, pods);
	fprintf(f, "%s]}\n", extra);
	if (fclose(f) != 0) {
		int rc = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return rc;
	}
	return 0;
}

int etcd_host_start(struct etcd_hosts *e, int h, char *err, size_t errlen)
{
	char sock[256], log[256], cluster[256], ttl[16];
	snprintf(sock, sizeof(sock), "%s/%s.sock", e->dir, e->names[h]);
	snprintf(log, sizeof(log), "%s/%s.log", e->dir, e->names[h]);
	snprintf(cluster, sizeof(cluster), "%s/%s", e->dir,
		 e->cluster_file != NULL ? e->cluster_file : "cluster.json");
	snprintf(ttl, sizeof(ttl), "%d", e->ttl_s);
	pid_t pid = fork();
	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0600);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		const char *argv[] = {e->shmschedd, "--ephemeral", "--cluster", cluster,
				      "--socket", sock, "--workers", "1", "--no-pin",
				      "--no-warm", "--etcd", e->endpoints, "--etcd-lease-ttl",
				      ttl, "--etcd-cluster", e->cluster_name, "--host-name",
				      e->names[h], NULL, NULL, NULL, NULL, NULL};
		int n = 18; /* the options above */
		if (e->shard_by != NULL) {
			argv[n++] = "--shard-by";
			argv[n++] = e->shard_by;
		}
		if (e->durability != NULL) {
			argv[n++] = "--etcd-durability";
			argv[n++] = e->durability;
		}
		if (e->no_etcd)
			argv[10] = NULL; /* before --etcd */
		execv(e->shmschedd, (char *const *)argv);
		_exit(127);
	}
	if (pid < 0) {
		int rc = -errno;
		snprintf(err, errlen, "fork for %s: %s", e->names[h], strerror(errno));
		return rc;
	}
	e->pids[h] = pid;
	for (int i = 0; i < 2000; i++) {
		struct shmsched_client *c;
		char cerr[128];
		if (shmsched_connect(sock, &c, cerr, sizeof(cerr)) == 0) {
			shmsched_disconnect(c);
			return 0;
		}
		int st;
		if (waitpid(pid, &st, WNOHANG) == pid) {
			e->pids[h] = 0;
			snprintf(err, errlen, "%s exited at start (status 0x%x, log %s)", e->names[h],
				 st, log);
			return -ECHILD;
		}
		etcd_hosts_sleep_ms(10);
	}
	snprintf(err, errlen, "%s: its socket %s never accepted in 20 s (log %s)", e->names[h],
		 sock, log);
	return -ETIMEDOUT;
}

int etcd_host_stop(struct etcd_hosts *e, int h)
{
	if (e->pids[h] <= 0)
		return -1;
	kill(e->pids[h], SIGCONT);
	kill(e->pids[h], SIGTERM);
	int st = 0;
	waitpid(e->pids[h], &st, 0);
	e->pids[h] = 0;
	return st;
}

void etcd_host_kill(struct etcd_hosts *e, int h)
{
	if (e->pids[h] <= 0)
		return;
	kill(e->pids[h], SIGKILL);
	waitpid(e->pids[h], NULL, 0);
	e->pids[h] = 0;
}

int etcd_hosts_owners(const struct etcd_hosts *e, struct etcd_client *ec, int *own,
		      char *err, size_t errlen)
{
	for (int z = 0; z < e->zones; z++) {
		char key[160];
		snprintf(key, sizeof(key), "/shmsched/%s/shards/z%d/owner", e->cluster_name, z);
		struct etcd_range_result r;
		int rc = etcd_range(ec, key, strlen(key), NULL, 0, 0, &r);
		if (rc != 0) {
			snprintf(err, errlen, "range %s: %s", key, etcd_client_error(ec));
			return rc;
		}
		own[z] = -1;
		for (int h = 0; r.n_kvs == 1 && h < e->n; h++)
			if (r.kvs[0].value_len == strlen(e->names[h]) &&
			    memcmp(r.kvs[0].value, e->names[h], r.kvs[0].value_len) == 0)
				own[z] = h;
		etcd_range_result_free(&r);
	}
	return 0;
}

int etcd_hosts_await_balanced(const struct etcd_hosts *e, struct etcd_client *ec,
			      unsigned live, int *own, double limit_s, double *took_s,
			      char *err, size_t errlen)
{
	double t0 = etcd_hosts_now_s();
	int n_live = __builtin_popcount(live);
	do {
		int rc = etcd_hosts_owners(e, ec, own, err, errlen);
		bool ok = rc == 0 && n_live > 0;
		for (int z = 0; z < e->zones && ok; z++)
			ok = own[z] >= 0 && (live >> own[z] & 1u);
		for (int h = 0; h < e->n && ok; h++)
			if (live >> h & 1u) {
				int n = 0;
				for (int z = 0; z < e->zones; z++)
					n += own[z] == h;
				ok = n >= e->zones / n_live && n <= (e->zones + n_live - 1) / n_live;
			}
		if (ok) {
			if (took_s != NULL)
				*took_s = etcd_hosts_now_s() - t0;
			return 0;
		}
		etcd_hosts_sleep_ms(20);
	} while (etcd_hosts_now_s() - t0 < limit_s);
	int n = snprintf(err, errlen, "the shards were not split among the live hosts (mask "
			 "%x) within %.1f s: owners", live, limit_s);
	for (int z = 0; z < e->zones && n > 0 && (size_t)n < errlen; z++)
		n += snprintf(err + n, errlen - (size_t)n, " z%d=%s", z,
			      own[z] >= 0 ? e->names[own[z]] : "none");
	return -ETIMEDOUT;
}

void etcd_hosts_print_logs(const struct etcd_hosts *e, int n)
{
	for (int h = 0; h < n; h++) {
		char cmd[512];
		printf("--- %s.log, its end:\n", e->names[h]);
		fflush(stdout);
		snprintf(cmd, sizeof(cmd), "tail -n 15 '%s/%s.log'", e->dir, e->names[h]);
		if (system(cmd) != 0)
			printf("(no log)\n");
	}
}
