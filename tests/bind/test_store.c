/* unit.store: the durable store (bind/store.h) on LMDB.
 *
 * - Round trip of every table across close and reopen; a put and a delete
 *   of one placement in one batch ends deleted; sequence numbers and the
 *   durable mark; the map grown past a small start.
 * - Four threads queueing puts and deletes at once: the store ends holding
 *   exactly the placements each thread left (violations counted, must be
 *   zero).
 * - Damage refused, never used: a data file of garbage, one truncated to
 *   half, a value whose bytes were flipped on disk, a format version from
 *   the future.
 * - Not ours, refused (issue 41): a directory group or others may write,
 *   one owned by another uid (as root), a link for the directory, a
 *   data.mdb that is a link or owned by another uid; each message names
 *   the path, the owner and the mode.
 */
#define _GNU_SOURCE 1

#include <errno.h>
#include <fcntl.h>
#include <lmdb.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "bind/bind.h"

static char *make_dir(void)
{
	static char dir[64];
	snprintf(dir, sizeof(dir), "/tmp/shmsched-store-XXXXXX");
	assert_non_null(mkdtemp(dir));
	return dir;
}

static void remove_dir(const char *dir)
{
	char p[128];
	snprintf(p, sizeof(p), "%s/data.mdb", dir);
	unlink(p);
	snprintf(p, sizeof(p), "%s/lock.mdb", dir);
	unlink(p);
	rmdir(dir);
}

struct seen {
	uint64_t nodes, identities, placements;
	uint64_t sum_ids;
	char last_node[64];
	uint8_t *present; /* [ids] for the threaded test */
	uint64_t ids;
};

static int on_node(void *arg, const char *name, size_t len, const void *b, size_t bl)
{
	struct seen *s = arg;
	(void)b;
	(void)bl;
	s->nodes++;
	snprintf(s->last_node, sizeof(s->last_node), "%.*s", (int)len, name);
	return 0;
}

static int on_identity(void *arg, uint32_t owner, const void *b, uint32_t len)
{
	struct seen *s = arg;
	(void)owner;
	(void)b;
	(void)len;
	s->identities++;
	return 0;
}

static int on_placement(void *arg, uint64_t id, const void *b, uint32_t len)
{
	struct seen *s = arg;
	s->placements++;
	s->sum_ids += id;
	if (s->present != NULL && id < s->ids)
		s->present[id]++;
	assert_int_equal(len, 16);
	uint64_t v;
	memcpy(&v, b, 8);
	assert_int_equal(v, id * 3);
	return 0;
}

static struct seen load(struct store *st, uint8_t *present, uint64_t ids)
{
	struct seen s = {.present = present, .ids = ids};
	struct store_visitor v = {on_node, on_identity, on_placement, &s};
	char err[256];
	int rc = store_load(st, &v, err, sizeof(err));
	if (rc != 0)
		print_error("%s\n", err);
	assert_int_equal(rc, 0);
	return s;
}

static uint64_t put(struct store *st, uint64_t id)
{
	uint64_t blob[2] = {id * 3, 0};
	return store_put_placement(st, id, blob, sizeof(blob));
}

static void test_round_trip(void **state)
{
	(void)state;
	char *dir = make_dir();
	struct store *st;
	char err[256];
	assert_int_equal(store_open(dir, STORE_DURABILITY_ASYNC, &st, err, sizeof(err)), 0);
	assert_int_equal(store_put_node(st, "n1", 2, "abc", 3, err, sizeof(err)), 0);
	assert_int_equal(store_put_node(st, "n2", 2, "def", 3, err, sizeof(err)), 0);
	assert_int_equal(store_del_node(st, "n1", 2, err, sizeof(err)), 0);
	assert_int_equal(store_put_identity(st, 7, "x", 1, err, sizeof(err)), 0);
	uint64_t a = put(st, 10), b = put(st, 11), c = store_del_placement(st, 11);
	assert_true(a >= 1 && b == a + 1 && c == b + 1);
	assert_int_equal(store_wait(st, c), 0);
	assert_true(store_durable_seq(st) >= c);
	struct store_stats stats;
	store_get_stats(st, &stats);
	assert_int_equal(stats.ops, 3);
	assert_true(stats.syncs >= 1);
	store_close(st);

	assert_int_equal(store_open(dir, STORE_DURABILITY_SYNC, &st, err, sizeof(err)), 0);
	uint64_t n_nodes, n_placements, n_identities;
	assert_int_equal(store_counts(st, &n_nodes, &n_placements, &n_identities,
				      err, sizeof(err)), 0);
	assert_int_equal(n_nodes, 1);
	assert_int_equal(n_placements, 1);
	assert_int_equal(n_identities, 1);
	struct seen s = load(st, NULL, 0);
	assert_int_equal(s.nodes, 1);
	assert_string_equal(s.last_node, "n2");
	assert_int_equal(s.identities, 1);
	assert_int_equal(s.placements, 1);
	assert_int_equal(s.sum_ids, 10);
	store_close(st);
	uint64_t nodes, placements, identities;
	int rc = store_check(dir, &nodes, &placements, &identities, err, sizeof(err));
	if (rc != 0)
		print_error("%s\n", err);
	assert_int_equal(rc, 0);
	assert_int_equal(nodes + placements + identities, 3);
	remove_dir(dir);
}

static int on_afs(void *arg, const void *blob, size_t len)
{
	char *seen = arg;
	strncat(seen, blob, len);
	strcat(seen, ";");
	return 0;
}

/* The afs table (admission fair sharing's records): a replace makes it
 * exactly what is given, it survives a reopen, and a visitor's non-zero
 * return stops the walk and is returned. */
static void test_afs_table(void **state)
{
	(void)state;
	char *dir = make_dir();
	struct store *st;
	char err[256], seen[64] = "";
	assert_int_equal(store_open(dir, STORE_DURABILITY_SYNC, &st, err, sizeof(err)), 0);
	struct store_blob two[2] = {{"ns/a", 4, "aa", 2}, {"ns/b", 4, "bb", 2}};
	assert_int_equal(store_replace_afs(st, two, 2, err, sizeof(err)), 0);
	assert_int_equal(store_replace_afs(st, two + 1, 1, err, sizeof(err)), 0);
	store_close(st);
	assert_int_equal(store_open(dir, STORE_DURABILITY_SYNC, &st, err, sizeof(err)), 0);
	assert_int_equal(store_load_afs(st, on_afs, seen, err, sizeof(err)), 0);
	assert_string_equal(seen, "bb;");
	assert_int_equal(store_replace_afs(st, two, 2, err, sizeof(err)), 0);
	seen[0] = '\0';
	assert_int_equal(store_load_afs(st, on_afs, seen, err, sizeof(err)), 0);
	assert_string_equal(seen, "aa;bb;");
	store_close(st);
	remove_dir(dir);
}

/* store_put_afs (the daemon's save at each sampling interval) writes
 * only what it is given: a record overwritten, one added, the others
 * kept, in one transaction that survives a reopen. */
static void test_afs_put(void **state)
{
	(void)state;
	char *dir = make_dir();
	struct store *st;
	char err[256], seen[64] = "";
	assert_int_equal(store_open(dir, STORE_DURABILITY_SYNC, &st, err, sizeof(err)), 0);
	struct store_blob two[2] = {{"ns/a", 4, "aa", 2}, {"ns/b", 4, "bb", 2}};
	assert_int_equal(store_replace_afs(st, two, 2, err, sizeof(err)), 0);
	struct store_blob more[2] = {{"ns/b", 4, "BB", 2}, {"ns/c", 4, "cc", 2}};
	assert_int_equal(store_put_afs(st, more, 2, err, sizeof(err)), 0);
	store_close(st);
	assert_int_equal(store_open(dir, STORE_DURABILITY_SYNC, &st, err, sizeof(err)), 0);
	assert_int_equal(store_load_afs(st, on_afs, seen, err, sizeof(err)), 0);
	assert_string_equal(seen, "aa;BB;cc;");
	assert_int_equal(store_put_afs(st, NULL, 0, err, sizeof(err)), 0);
	store_close(st);
	remove_dir(dir);
}

static void test_map_grows(void **state)
{
	(void)state;
	char *dir = make_dir();
	setenv("SHMSCHED_STORE_MAP_BYTES", "262144", 1);
	struct store *st;
	char err[256];
	assert_int_equal(store_open(dir, STORE_DURABILITY_NONE, &st, err, sizeof(err)), 0);
	uint64_t last = 0;
	for (uint64_t id = 1; id <= 20000; id++)
		last = put(st, id);
	assert_int_equal(store_wait(st, last), 0);
	assert_string_equal(store_error(st), "");
	struct seen s = load(st, NULL, 0);
	assert_int_equal(s.placements, 20000);
	store_close(st);
	unsetenv("SHMSCHED_STORE_MAP_BYTES");
	remove_dir(dir);
}

#define THREADS 4
#define PER_THREAD 20000u

struct worker_arg {
	struct store *st;
	unsigned k;
};

/* Thread k puts ids k, k+4, ...; deletes every third one it put. */
static void *worker(void *arg)
{
	struct worker_arg *w = arg;
	for (uint64_t i = 0; i < PER_THREAD; i++) {
		uint64_t id = i * THREADS + w->k;
		put(w->st, id);
		if (i % 3 == 2)
			store_del_placement(w->st, id);
	}
	return NULL;
}

static void test_threads(void **state)
{
	(void)state;
	char *dir = make_dir();
	struct store *st;
	char err[256];
	assert_int_equal(store_open(dir, STORE_DURABILITY_ASYNC, &st, err, sizeof(err)), 0);
	pthread_t t[THREADS];
	struct worker_arg args[THREADS];
	for (unsigned k = 0; k < THREADS; k++) {
		args[k] = (struct worker_arg){st, k};
		assert_int_equal(pthread_create(&t[k], NULL, worker, &args[k]), 0);
	}
	for (unsigned k = 0; k < THREADS; k++)
		pthread_join(t[k], NULL);
	store_close(st); /* commits what is queued */
	assert_int_equal(store_open(dir, STORE_DURABILITY_ASYNC, &st, err, sizeof(err)), 0);
	uint64_t ids = (uint64_t)PER_THREAD * THREADS;
	uint8_t *present = calloc(ids, 1);
	struct seen s = load(st, present, ids);
	uint64_t violations = 0;
	for (uint64_t id = 0; id < ids; id++) {
		bool want = (id / THREADS) % 3 != 2;
		violations += present[id] != (want ? 1 : 0);
	}
	assert_int_equal(violations, 0);
	assert_int_equal(s.placements, (uint64_t)THREADS * (PER_THREAD - PER_THREAD / 3));
	free(present);
	store_close(st);
	remove_dir(dir);
}

/* A store with one placement, closed, then `damage` applied to it. */
static int open_damaged(void (*damage)(const char *data), char *err, size_t len)
{
	char *dir = make_dir();
	struct store *st;
	assert_int_equal(store_open(dir, STORE_DURABILITY_SYNC, &st, err, len), 0);
	for (uint64_t id = 1; id <= 300; id++)
		put(st, id);
	assert_int_equal(store_wait(st, put(st, 301)), 0);
	store_close(st);
	char data[128];
	snprintf(data, sizeof(data), "%s/data.mdb", dir);
	damage(data);
	int rc = store_open(dir, STORE_DURABILITY_SYNC, &st, err, len);
	if (rc == 0) {
		struct store_visitor v = {NULL, NULL, NULL, NULL};
		rc = store_load(st, &v, err, len);
		store_close(st);
	}
	remove_dir(dir);
	return rc;
}

static void garbage(const char *data)
{
	int fd = open(data, O_WRONLY | O_TRUNC);
	char junk[16384];
	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = (char)(i * 7 + 3);
	assert_int_equal(write(fd, junk, sizeof(junk)), sizeof(junk));
	close(fd);
}

static void halved(const char *data)
{
	struct stat st;
	assert_int_equal(stat(data, &st), 0);
	assert_int_equal(truncate(data, st.st_size / 2), 0);
}

/* Flips a byte of placement 150's value (its blob: 450, then 0), found
 * in the file by its bytes. Every copy is flipped: LMDB writes pages copy
 * on write, so the file may hold stale copies of the leaf beside the live
 * one, and how many depends on how the committer grouped the 301 puts. */
static void flipped(const char *data)
{
	int fd = open(data, O_RDWR);
	struct stat st;
	assert_int_equal(fstat(fd, &st), 0);
	char *buf = malloc((size_t)st.st_size);
	assert_int_equal(pread(fd, buf, (size_t)st.st_size, 0), st.st_size);
	uint64_t pattern[2] = {150 * 3, 0};
	unsigned copies = 0;
	for (char *at = buf; (at = memmem(at, (size_t)(buf + st.st_size - at), pattern,
					  sizeof(pattern))) != NULL;
	     at += sizeof(pattern)) {
		char byte = (char)(at[0] ^ 0x5a);
		assert_int_equal(pwrite(fd, &byte, 1, at - buf), 1);
		copies++;
	}
	assert_true(copies > 0);
	free(buf);
	close(fd);
}

static void test_damage_refused(void **state)
{
	(void)state;
	char err[512];
	assert_int_equal(open_damaged(garbage, err, sizeof(err)), -EBADMSG);
	assert_non_null(strstr(err, "not an LMDB data file"));
	assert_int_equal(open_damaged(halved, err, sizeof(err)), -EBADMSG);
	assert_non_null(strstr(err, "truncated"));
	assert_int_equal(open_damaged(flipped, err, sizeof(err)), -EBADMSG);
	assert_non_null(strstr(err, "table placements"));
}

/* A file that ends before the page its meta calls last, with its roots
 * inside: what LMDB leaves when a transaction's last allocated pages were
 * freed again in it (loose pages are counted in mm_last_pg, never
 * written). Made here by raising both metas' mm_last_pg (byte 136 of each
 * meta page, LMDB 0.9's MDB_meta) 3 pages past the end. Old: refused as
 * truncated, so a daemon killed at the wrong moment could not start
 * (stress.reboot_none). Now the daemon's open extends it and loads every
 * record; store_check, which writes nothing, refuses it saying why. */
static void test_last_page_past_end(void **state)
{
	(void)state;
	char *dir = make_dir(), data[128], err[512];
	struct store *st;
	assert_int_equal(store_open(dir, STORE_DURABILITY_SYNC, &st, err,
				    sizeof(err)), 0);
	for (uint64_t id = 1; id <= 40; id++)
		put(st, id);
	assert_int_equal(store_wait(st, put(st, 41)), 0);
	store_close(st);
	snprintf(data, sizeof(data), "%s/data.mdb", dir);
	int fd = open(data, O_RDWR);
	assert_true(fd >= 0);
	struct stat sb;
	assert_int_equal(fstat(fd, &sb), 0);
	uint32_t psize;
	assert_int_equal(pread(fd, &psize, 4, 40), 4);
	uint64_t last = (uint64_t)sb.st_size / psize + 2;
	for (int m = 0; m < 2; m++)
		assert_int_equal(pwrite(fd, &last, 8, (off_t)m * psize + 136), 8);
	close(fd);

	assert_int_equal(store_check(dir, NULL, NULL, NULL, err, sizeof(err)),
			 -EBADMSG);
	assert_non_null(strstr(err, "pages LMDB allocated and never wrote"));
	/* The daemon peeks before it opens (daemon.c): old, the peek refused
	 * what the open would extend ("daemon exited at start" in
	 * stress.reboot_none). */
	bool has_state;
	char origin[STORE_ORIGIN_MAX];
	assert_int_equal(store_peek(dir, &has_state, origin, sizeof(origin), err,
				    sizeof(err)), 0);
	assert_false(has_state); /* placements only, no nodes */
	/* old: -EBADMSG, "truncated". */
	assert_int_equal(store_open(dir, STORE_DURABILITY_SYNC, &st, err,
				    sizeof(err)), 0);
	struct seen seen = {0};
	struct store_visitor v = {on_node, on_identity, on_placement, &seen};
	assert_int_equal(store_load(st, &v, err, sizeof(err)), 0);
	assert_int_equal(seen.placements, 41);
	store_close(st);
	assert_int_equal(stat(data, &sb), 0);
	assert_true((uint64_t)sb.st_size >= (last + 1) * psize);
	remove_dir(dir);
}

static void test_future_format(void **state)
{
	(void)state;
	char *dir = make_dir();
	struct store *st;
	char err[256];
	assert_int_equal(store_open(dir, STORE_DURABILITY_SYNC, &st, err, sizeof(err)), 0);
	store_close(st);
	/* Rewrite meta's format as version 99, checksum and all (the same
	 * FNV-1a the store uses). */
	MDB_env *env;
	MDB_txn *txn;
	MDB_dbi dbi;
	assert_int_equal(mdb_env_create(&env), 0);
	mdb_env_set_maxdbs(env, 8);
	assert_int_equal(mdb_env_open(env, dir, 0, 0600), 0);
	assert_int_equal(mdb_txn_begin(env, NULL, 0, &txn), 0);
	assert_int_equal(mdb_dbi_open(txn, "meta", 0, &dbi), 0);
	uint32_t version = 99;
	uint64_t h = UINT64_C(0xcbf29ce484222325);
	const char key[] = "format";
	for (size_t i = 0; i < 6; i++)
		h = (h ^ (uint8_t)key[i]) * UINT64_C(0x100000001b3);
	for (size_t i = 0; i < 4; i++)
		h = (h ^ ((uint8_t *)&version)[i]) * UINT64_C(0x100000001b3);
	uint8_t val[12];
	memcpy(val, &h, 8);
	memcpy(val + 8, &version, 4);
	MDB_val k = {6, (void *)key}, v = {sizeof(val), val};
	assert_int_equal(mdb_put(txn, dbi, &k, &v, 0), 0);
	assert_int_equal(mdb_txn_commit(txn), 0);
	mdb_env_close(env);
	assert_int_equal(store_open(dir, STORE_DURABILITY_SYNC, &st, err, sizeof(err)),
			 -EPROTO);
	assert_non_null(strstr(err, "99"));
	remove_dir(dir);
}

/* Issue 35: the store's record of what it was built from. store_peek
 * makes nothing (an absent directory stays absent), reads "" from a store
 * that predates the record, the record once written, and whether the
 * nodes table holds anything; a record altered on disk is refused. */
static void test_origin(void **state)
{
	(void)state;
	char *dir = make_dir();
	char missing[128], origin[STORE_ORIGIN_MAX], err[256];
	bool has;
	snprintf(missing, sizeof(missing), "%s/none", dir);
	assert_int_equal(store_peek(missing, &has, origin, sizeof(origin), err,
				    sizeof(err)), 0);
	assert_false(has);
	assert_string_equal(origin, "");
	struct stat sb;
	assert_int_equal(stat(missing, &sb), -1);

	struct store *st;
	assert_int_equal(store_open(dir, STORE_DURABILITY_SYNC, &st, err, sizeof(err)), 0);
	assert_int_equal(store_put_node(st, "n1", 2, "x", 1, err, sizeof(err)), 0);
	store_close(st);
	assert_int_equal(store_peek(dir, &has, origin, sizeof(origin), err,
				    sizeof(err)), 0);
	assert_true(has);
	assert_string_equal(origin, "");

	assert_int_equal(store_open(dir, STORE_DURABILITY_SYNC, &st, err, sizeof(err)), 0);
	assert_int_equal(store_put_origin(st, "cluster /a.json (hash 1); config defaults",
					  err, sizeof(err)), 0);
	store_close(st);
	assert_int_equal(store_peek(dir, &has, origin, sizeof(origin), err,
				    sizeof(err)), 0);
	assert_true(has);
	assert_string_equal(origin, "cluster /a.json (hash 1); config defaults");

	/* The record's bytes changed behind the store's back: damaged. */
	MDB_env *env;
	MDB_txn *txn;
	MDB_dbi dbi;
	assert_int_equal(mdb_env_create(&env), 0);
	mdb_env_set_maxdbs(env, 8);
	assert_int_equal(mdb_env_open(env, dir, 0, 0600), 0);
	assert_int_equal(mdb_txn_begin(env, NULL, 0, &txn), 0);
	assert_int_equal(mdb_dbi_open(txn, "meta", 0, &dbi), 0);
	uint8_t val[16] = {0};
	memcpy(val + 8, "cluster!", 8);
	MDB_val k = {6, (void *)"origin"}, v = {sizeof(val), val};
	assert_int_equal(mdb_put(txn, dbi, &k, &v, 0), 0);
	assert_int_equal(mdb_txn_commit(txn), 0);
	mdb_env_close(env);
	assert_int_equal(store_peek(dir, &has, origin, sizeof(origin), err,
				    sizeof(err)), -EBADMSG);
	assert_non_null(strstr(err, "origin"));
	remove_dir(dir);
}

/* Issue 41: a store the daemon does not own is never opened. */
static void test_not_ours(void **state)
{
	(void)state;
	char *dir = make_dir();
	struct store *st;
	char err[512], path[128], link_to[128];
	assert_int_equal(store_open(dir, STORE_DURABILITY_SYNC, &st, err, sizeof(err)), 0);
	store_close(st);
	/* Group-writable. */
	assert_int_equal(chmod(dir, 0770), 0);
	assert_int_equal(store_open(dir, STORE_DURABILITY_SYNC, &st, err, sizeof(err)),
			 -EPERM);
	assert_non_null(strstr(err, "mode 0770"));
	assert_non_null(strstr(err, dir));
	assert_int_equal(chmod(dir, 0700), 0);
	/* A link for the directory. */
	snprintf(link_to, sizeof(link_to), "%s.link", dir);
	assert_int_equal(symlink(dir, link_to), 0);
	assert_int_equal(store_open(link_to, STORE_DURABILITY_SYNC, &st, err,
				    sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "symbolic link"));
	unlink(link_to);
	/* data.mdb a link to a file elsewhere. */
	snprintf(path, sizeof(path), "%s/data.mdb", dir);
	snprintf(link_to, sizeof(link_to), "%s.data", dir);
	assert_int_equal(rename(path, link_to), 0);
	assert_int_equal(symlink(link_to, path), 0);
	assert_int_equal(store_open(dir, STORE_DURABILITY_SYNC, &st, err, sizeof(err)),
			 -EPERM);
	assert_non_null(strstr(err, "not a regular file"));
	assert_int_equal(unlink(path), 0);
	assert_int_equal(rename(link_to, path), 0);
	if (geteuid() == 0) {
		/* Another uid's data.mdb, then directory. */
		assert_int_equal(chown(path, 65534, (gid_t)-1), 0);
		assert_int_equal(store_open(dir, STORE_DURABILITY_SYNC, &st, err,
					    sizeof(err)), -EPERM);
		assert_non_null(strstr(err, "owned by uid 65534"));
		assert_int_equal(chown(path, 0, (gid_t)-1), 0);
		assert_int_equal(chown(dir, 65534, (gid_t)-1), 0);
		assert_int_equal(store_open(dir, STORE_DURABILITY_SYNC, &st, err,
					    sizeof(err)), -EPERM);
		assert_non_null(strstr(err, "owned by uid 65534"));
		assert_non_null(strstr(err, "remove it"));
		assert_int_equal(chown(dir, 0, (gid_t)-1), 0);
	}
	/* Ours again: opens. */
	assert_int_equal(store_open(dir, STORE_DURABILITY_SYNC, &st, err, sizeof(err)), 0);
	store_close(st);
	remove_dir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_afs_table),
		cmocka_unit_test(test_afs_put),
		cmocka_unit_test(test_map_grows),
		cmocka_unit_test(test_threads),
		cmocka_unit_test(test_damage_refused),
		cmocka_unit_test(test_last_page_past_end),
		cmocka_unit_test(test_future_format),
		cmocka_unit_test(test_not_ours),
		cmocka_unit_test(test_origin),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
