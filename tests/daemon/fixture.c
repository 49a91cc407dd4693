/* Test helpers for tests/daemon/: see fixture.h. */
#include "fixture.h"

#include <dirent.h>
#include <errno.h>
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
