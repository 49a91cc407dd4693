/* Test helpers for tests/daemon/: see fixture.h. */
#include "fixture.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/base.h"

void fixture_dir_make(struct fixture_dir *f, const char *tag, int open_to_all)
{
	snprintf(f->dir, sizeof(f->dir), "/tmp/shmsched-%s-XXXXXX", tag);
	if (mkdtemp(f->dir) == NULL)
		fail_msg("mkdtemp %s: %s", f->dir, strerror(errno));
	if (open_to_all && chmod(f->dir, 0755) < 0)
		fail_msg("chmod 0755 %s: %s", f->dir, strerror(errno));
	snprintf(f->sock, sizeof(f->sock), "%s/s.sock", f->dir);
	snprintf(f->admin, sizeof(f->admin), "%s.admin", f->sock);
	snprintf(f->cluster, sizeof(f->cluster), "%s/cluster.json", f->dir);
}

/* Removes `path`'s files and, `depth` levels down, its directories'. */
static void remove_tree(const char *path, int depth)
{
	DIR *d = opendir(path);
	if (d != NULL) {
		struct dirent *e;
		char sub[512];
		while ((e = readdir(d)) != NULL) {
			if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
				continue;
			snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name);
			if (unlink(sub) < 0 && errno == EISDIR && depth > 0)
				remove_tree(sub, depth - 1);
		}
		closedir(d);
	}
	rmdir(path);
}

void fixture_dir_remove(const struct fixture_dir *f)
{
	remove_tree(f->dir, 2);
}

void fixture_write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	if (f == NULL)
		fail_msg("write %s: %s", path, strerror(errno));
	fputs(text, f);
	if (fclose(f) != 0)
		fail_msg("write %s: %s", path, strerror(errno));
}

void fixture_write_cluster(const struct fixture_dir *f,
			   const struct fixture_nodes *nodes, const char *extra)
{
	FILE *out = fopen(f->cluster, "w");
	if (out == NULL)
		fail_msg("write %s: %s", f->cluster, strerror(errno));
	fputs("{\"kind\":\"List\",\"items\":[", out);
	for (int i = 0; i < nodes->count; i++) {
		char labels[160] = "";
		if (nodes->pool != NULL)
			snprintf(labels, sizeof(labels), ",\"labels\":{\"node."
				 "kubernetes.io/instance-type\":\"%s\"}",
				 nodes->pool[i]);
		fprintf(out, "%s{\"kind\":\"Node\",\"metadata\":{\"name\":\"n%d\"%s},"
			"\"status\":{\"allocatable\":{\"cpu\":\"%s\",\"memory\":"
			"\"%s\",\"pods\":\"%s\"}}}", i ? "," : "", nodes->first + i,
			labels, nodes->cpu, nodes->memory,
			nodes->pods != NULL ? nodes->pods : "110");
	}
	if (extra != NULL)
		fprintf(out, "%s%s", nodes->count > 0 ? "," : "", extra);
	fputs("]}", out);
	if (fclose(out) != 0)
		fail_msg("write %s: %s", f->cluster, strerror(errno));
}

struct daemon_config fixture_config(const struct fixture_dir *f)
{
	return (struct daemon_config){.socket_path = f->sock,
				      .cluster_path = f->cluster, .seed = 1,
				      .workers = 1, .slots = 64};
}

struct daemon *fixture_start(const struct daemon_config *cfg)
{
	char err[512];
	struct daemon *d = daemon_start(cfg, err, sizeof(err));
	if (d == NULL)
		fail_msg("daemon_start: %s", err);
	return d;
}

int fixture_run(int argc, char **argv, const struct CMUnitTest *tests, size_t n,
		const struct CMUnitTest *race, size_t n_race,
		int (*setup)(void **), int (*teardown)(void **))
{
	if (argc > 1 && strcmp(argv[1], "race") == 0)
		return _cmocka_run_group_tests("race_tests", race, n_race, setup,
					       teardown);
	return _cmocka_run_group_tests("tests", tests, n, setup, teardown);
}

struct shmsched_client *fixture_connect(const char *path)
{
	struct shmsched_client *c;
	char err[512];
	if (shmsched_connect(path, &c, err, sizeof(err)) < 0)
		fail_msg("connect %s: %s", path, err);
	return c;
}

uint32_t fixture_template(struct shmsched_client *c, const char *json)
{
	char err[512];
	uint32_t tid;
	if (shmsched_register_template(c, json, strlen(json), &tid, err,
				       sizeof(err)) < 0)
		fail_msg("template %s: %s", json, err);
	return tid;
}

void fixture_cpu_json(char *json, size_t len, const char *queue,
		      const char *cpu)
{
	if (queue != NULL)
		snprintf(json, len, "{\"kind\":\"Pod\",\"metadata\":{"
			 "\"name\":\"t\",\"namespace\":\"default\",\"labels\":{"
			 "\"kueue.x-k8s.io/queue-name\":\"%s\"}},\"spec\":{"
			 "\"containers\":[{\"name\":\"c\",\"resources\":{"
			 "\"requests\":{\"cpu\":\"%s\"}}}]}}", queue, cpu);
	else
		snprintf(json, len, "{\"kind\":\"Pod\",\"metadata\":{"
			 "\"name\":\"t\"},\"spec\":{\"containers\":[{\"name\":"
			 "\"c\",\"resources\":{\"requests\":{\"cpu\":\"%s\"}}}]}}",
			 cpu);
}

uint32_t fixture_cpu_template(struct shmsched_client *c, const char *queue,
			      const char *cpu)
{
	char json[512];
	fixture_cpu_json(json, sizeof(json), queue, cpu);
	return fixture_template(c, json);
}

uint32_t fixture_app_on(struct shmsched_client *c, const char *app,
			const char *node)
{
	char json[512];
	snprintf(json, sizeof(json), "{\"kind\":\"Pod\",\"metadata\":{\"name\":"
		 "\"%s\",\"labels\":{\"app\":\"%s\"}},\"spec\":{\"nodeName\":"
		 "\"%s\",\"containers\":[{\"name\":\"c\",\"resources\":{"
		 "\"requests\":{\"cpu\":\"1\"}}}]}}", app, app, node);
	return fixture_template(c, json);
}

struct shmsched_client *fixture_connect_as(const char *path, const char *name)
{
	struct shmsched_client *c;
	char err[512];
	if (shmsched_connect_named(path, name, &c, err, sizeof(err)) < 0)
		fail_msg("connect %s as \"%s\": %s", path, name, err);
	return c;
}

void fixture_leave(struct daemon *d, struct shmsched_client *c)
{
	struct daemon_stats ds;
	daemon_get_stats(d, &ds);
	uint64_t gone = ds.producers_gone;
	shmsched_disconnect(c);
	time_t deadline = time(NULL) + 10;
	do {
		usleep(1000);
		daemon_get_stats(d, &ds);
	} while (ds.producers_gone == gone && time(NULL) <= deadline);
	assert_true(ds.producers_gone > gone);
}

int fixture_template_n(struct shmsched_client *c, const char *tag, int i,
		       uint32_t *tid, char *err, size_t err_len)
{
	char json[512], value[61];
	uint32_t ignored;
	snprintf(value, sizeof(value), "%s-%d-%0*d", tag, i, 40, i);
	value[60] = '\0';
	snprintf(json, sizeof(json), "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"t\","
		 "\"labels\":{\"app\":\"%sz\"}},\"spec\":{\"containers\":[{\"name\":"
		 "\"c\",\"resources\":{\"requests\":{\"cpu\":\"10m\"}}}]}}", value);
	return shmsched_register_template(c, json, strlen(json),
					  tid != NULL ? tid : &ignored, err, err_len);
}

void fixture_poll_one(struct shmsched_client *c, struct shmsched_result *out)
{
	time_t deadline = time(NULL) + 10;
	int got = 0;
	while (got == 0 && time(NULL) <= deadline) {
		got = shmsched_poll(c, out, 1);
		assert_true(got >= 0);
		if (got == 0)
			usleep(100);
	}
	assert_int_equal(got, 1);
}

void fixture_place_one(struct shmsched_client *c, uint32_t tid, uint64_t cookie,
		       struct shmsched_result *out)
{
	struct shmsched_pod pod = {.cookie = cookie, .template_id = tid};
	assert_int_equal(shmsched_submit(c, &pod, 1), 1);
	fixture_poll_one(c, out);
	assert_int_equal(out->cookie, cookie);
}

uint64_t fixture_place(struct shmsched_client *c, uint32_t tid, uint64_t cookie,
		       uint32_t want)
{
	struct shmsched_result r;
	fixture_place_one(c, tid, cookie, &r);
	if (r.status != want)
		fail_msg("pod %" PRIu64 ": status %u, expected %u (%s)", cookie,
			 r.status, want, r.message);
	return r.placement_id;
}

void fixture_park_one(struct daemon *d, struct shmsched_client *c, uint32_t tid,
		      uint64_t cookie, uint64_t n)
{
	struct shmsched_pod p = {.cookie = cookie, .template_id = tid,
				 .flags = SHMSCHED_WAIT,
				 .deadline_ns = now_ns() + UINT64_C(20000000000)};
	assert_int_equal(shmsched_submit(c, &p, 1), 1);
	struct daemon_stats ds;
	for (int i = 0; i < 1000; i++) {
		daemon_get_stats(d, &ds);
		if (ds.pending_unschedulable >= n)
			break;
		usleep(10000);
	}
	assert_int_equal(ds.pending_unschedulable, n);
	struct shmsched_result r;
	assert_int_equal(fixture_await(c, &r, 1, 100), 0);
}

void fixture_lease(struct shmsched_client *admin, const char *node)
{
	char err[512];
	int rc = shmsched_node_event(admin, SHMSCHED_NODE_LEASE, node, strlen(node),
				     err, sizeof(err));
	if (rc != 0)
		fail_msg("lease %s: %d %s", node, rc, err);
}

unsigned fixture_observe_nodes(const char *region,
			       struct shmsched_observe_node *nodes, unsigned max)
{
	struct shmsched_observer *obs;
	unsigned n = 0;
	char err[512];
	if (shmsched_observe_open(region, &obs, err, sizeof(err)) < 0)
		fail_msg("observe %s: %s", region, err);
	if (shmsched_observe_nodes(obs, nodes, max, &n, NULL, err, sizeof(err)) < 0)
		fail_msg("observe nodes: %s", err);
	shmsched_observe_close(obs);
	return n;
}

static uint64_t xorshift64(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

int fixture_churn_step(struct fixture_churn *ch)
{
	if (ch->n == ch->live_max || (ch->n > 0 && xorshift64(&ch->seed) % 3 == 0)) {
		unsigned k = (unsigned)(xorshift64(&ch->seed) % ch->n);
		char err[256];
		if (shmsched_release(ch->c, ch->id[k], err, sizeof(err)) < 0) {
			ch->failed = "release";
			return -1;
		}
		ch->released++;
		ch->id[k] = ch->id[ch->n - 1];
		ch->which[k] = ch->which[ch->n - 1];
		ch->n--;
		return 0;
	}
	int w = (int)(xorshift64(&ch->seed) % ch->n_tid);
	struct shmsched_pod p = {.cookie = ++ch->cookie, .template_id = ch->tid[w]};
	if (shmsched_submit(ch->c, &p, 1) != 1) {
		ch->failed = "submit";
		return -1;
	}
	struct shmsched_result r;
	if (fixture_await(ch->c, &r, 1, 10000) != 1) {
		ch->failed = "no answer";
		return -1;
	}
	if (r.status == SHMSCHED_PLACED) {
		ch->id[ch->n] = r.placement_id;
		ch->which[ch->n++] = w;
		ch->placed++;
	} else {
		ch->refused++;
	}
	return 0;
}

uint64_t fixture_clock_ns(void *arg)
{
	/* Relaxed: the partner is the test's own stepping (fixture.h). */
	return __atomic_load_n((const uint64_t *)arg, __ATOMIC_RELAXED);
}

unsigned fixture_await(struct shmsched_client *c, struct shmsched_result *out,
		       unsigned want, unsigned ms)
{
	unsigned got = 0;
	uint64_t end = now_ns() + (uint64_t)ms * 1000000u;
	while (got < want && now_ns() < end) {
		int n = shmsched_poll(c, out + got, want - got);
		assert_true(n >= 0);
		got += (unsigned)n;
		if (n == 0)
			usleep(200);
	}
	return got;
}
