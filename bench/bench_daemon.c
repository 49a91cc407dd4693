/* Helpers of the benches that run the daemon in process: see
 * bench_daemon.h. */
#include "bench_daemon.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *bench_name = "shmsched-bench";

void bench_set_name(const char *name)
{
	bench_name = name;
}

_Noreturn void bench_die(const char *what, const char *why)
{
	fprintf(stderr, "%s: %s: %s\n", bench_name, what, why);
	exit(1);
}

void bench_dir_make(struct bench_dir *b, const char *tag)
{
	snprintf(b->dir, sizeof(b->dir), "/tmp/shmsched-%s-XXXXXX", tag);
	if (mkdtemp(b->dir) == NULL)
		bench_die("temporary directory", strerror(errno));
	snprintf(b->cluster, sizeof(b->cluster), "%s/cluster.json", b->dir);
	snprintf(b->sock, sizeof(b->sock), "%s/s.sock", b->dir);
	snprintf(b->admin, sizeof(b->admin), "%s.admin", b->sock);
}

void bench_dir_remove(const struct bench_dir *b)
{
	unlink(b->cluster);
	unlink(b->admin);
	unlink(b->sock);
	rmdir(b->dir);
}

struct daemon *bench_start(const struct daemon_config *cfg)
{
	char err[512];
	struct daemon *d = daemon_start(cfg, err, sizeof(err));
	if (d == NULL)
		bench_die("daemon", err);
	return d;
}

struct shmsched_client *bench_connect(const char *path)
{
	struct shmsched_client *c;
	char err[512];
	if (shmsched_connect(path, &c, err, sizeof(err)) < 0)
		bench_die("connect", err);
	return c;
}

uint32_t bench_template(struct shmsched_client *c, const char *json)
{
	uint32_t tid;
	char err[512];
	if (shmsched_register_template(c, json, strlen(json), &tid, err,
				       sizeof(err)) < 0)
		bench_die("template", err);
	return tid;
}

const char *bench_option_name(const struct option *longopts, int val)
{
	for (int k = 0; longopts[k].name != NULL; k++)
		if (longopts[k].val == val)
			return longopts[k].name;
	return "";
}
