/* The durable store on LMDB: see store.h.
 *
 * The queue is a bounded array of cells, each with a sequence number
 * (Vyukov's bounded MPMC queue, used here with one consumer):
 *   Q1  An enqueuer loads the tail (relaxed), and the cell at tail & mask
 *       with acquire (partner Q4). Its sequence equal to the tail: the
 *       cell is free; take the tail with a compare-and-swap (relaxed: the
 *       cell's own sequence orders the data). Less: the queue is full.
 *   Q2  It writes the op into the cell, then stores the cell's sequence
 *       tail + 1 with release: the op before the mark that shows it.
 *   Q3  The writer loads the cell at head & mask with acquire (partner
 *       Q2): sequence head + 1 means an op is there; it reads it.
 *   Q4  Then it stores the sequence head + SLOTS with release (partner
 *       Q1's acquire): the cell is free for the next lap, its old op read.
 * The op's sequence number for callers is its tail position + 1. Ops are
 * drained in tail order, so a durable mark covers every op below it.
 *   SD1  After a batch is committed and synced, the writer stores durable
 *       with release; store_wait and store_durable_seq load it with
 *       acquire (the commit happened before).
 *
 * Guarantees: enqueues are lock-free (a compare-and-swap fails only when
 * another enqueuer took the cell) and make no system call; they wait only
 * when the queue is full. The writer never waits for an enqueuer that has
 * not finished Q2: it stops its batch at the first cell not yet marked.
 */
#define _GNU_SOURCE 1

#include "bind/store.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <lmdb.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/base.h"

#define NAME_MAX_BYTES 4096u
#define NODE_BLOB_MAX (1u << 20)
#define MAP_START (UINT64_C(1) << 30)
#define CHECKSUM_BYTES 8u

enum op_kind { OP_PUT = 1, OP_DEL = 2 };

struct cell {
	uint64_t seq; /* Q1-Q4 */
	uint64_t id;
	uint32_t kind;
	uint32_t len;
	uint8_t blob[STORE_BLOB_MAX];
};

struct store {
	MDB_env *env;
	MDB_dbi meta, nodes, placements, identities;
	MDB_dbi afs; /* admission fair sharing's records (made at open) */
	enum store_durability mode;
	char dir[512];
	uint64_t map_size;
	pthread_mutex_t txn_lock; /* one write transaction at a time, and map growth */
	struct cell *cells;       /* [STORE_QUEUE_SLOTS] */
	_Alignas(64) uint64_t tail;     /* Q1 */
	_Alignas(64) uint64_t head;     /* the writer's */
	_Alignas(64) uint64_t durable;  /* SD1 */
	uint32_t waiters;               /* a store_wait is waiting: relaxed */
	uint32_t stopping;              /* store_close: relaxed */
	uint32_t failed;                /* relaxed; error[] written before */
	char error[640];
	pthread_t writer;
	pthread_mutex_t wake_lock;
	pthread_cond_t wake;
	struct store_stats stats; /* the writer's; read relaxed */
};

/* FNV-1a, 64-bit, over the key and then the value. */
static uint64_t checksum(const void *key, size_t klen, const void *val, size_t vlen)
{
	uint64_t h = UINT64_C(0xcbf29ce484222325);
	const uint8_t *p = key;
	for (size_t i = 0; i < klen; i++)
		h = (h ^ p[i]) * UINT64_C(0x100000001b3);
	p = val;
	for (size_t i = 0; i < vlen; i++)
		h = (h ^ p[i]) * UINT64_C(0x100000001b3);
	return h;
}

static int lmdb_errno(int rc)
{
	switch (rc) {
	case MDB_INVALID:
	case MDB_CORRUPTED:
	case MDB_PAGE_NOTFOUND:
	case MDB_VERSION_MISMATCH:
	case MDB_BAD_TXN:
	case MDB_BAD_VALSIZE:
		return -EBADMSG;
	case MDB_MAP_FULL:
		return -ENOSPC;
	default:
		return rc > 0 && rc < 4096 ? -rc : -EIO;
	}
}

/* Puts key -> (checksum, bytes) in `dbi` within `txn`. */
static int put_value(MDB_txn *txn, MDB_dbi dbi, const void *key, size_t klen,
		     const void *val, size_t vlen)
{
	MDB_val k = {klen, (void *)key}, v = {vlen + CHECKSUM_BYTES, NULL};
	int rc = mdb_put(txn, dbi, &k, &v, MDB_RESERVE);
	if (rc != 0)
		return rc;
	uint64_t sum = checksum(key, klen, val, vlen);
	memcpy(v.mv_data, &sum, CHECKSUM_BYTES);
	if (vlen > 0)
		memcpy((uint8_t *)v.mv_data + CHECKSUM_BYTES, val, vlen);
	return 0;
}

/* Grows the map after MDB_MAP_FULL: under txn_lock, with no transaction
 * of this process open (LMDB's rule for mdb_env_set_mapsize). */
static int grow_map(struct store *s)
{
	uint64_t size = s->map_size * 2;
	int rc = mdb_env_set_mapsize(s->env, size);
	if (rc == 0) {
		log_msg(LOG_LEVEL_INFO, "store %s: map grown to %" PRIu64 " KiB",
			s->dir, size >> 10);
		s->map_size = size;
	}
	return rc;
}

static int sync_env(struct store *s)
{
	if (s->mode == STORE_DURABILITY_NONE)
		return 0;
	int rc = mdb_env_sync(s->env, 1);
	if (rc == 0)
		stat_inc(&s->stats.syncs);
	return rc;
}

/* --- the writer ---------------------------------------------------------- */

/* Applies up to `max` queued ops from head on in one transaction; returns
 * how many, or a negative LMDB error (nothing applied). */
static int drain_batch(struct store *s, unsigned max)
{
	unsigned n = 0;
	uint64_t pos = s->head;
	for (; n < max; n++) {
		struct cell *c = &s->cells[(pos + n) & (STORE_QUEUE_SLOTS - 1)];
		/* Q3: acquire, partner of Q2. */
		if (__atomic_load_n(&c->seq, __ATOMIC_ACQUIRE) != pos + n + 1)
			break;
	}
	if (n == 0)
		return 0;
	for (;;) {
		MDB_txn *txn;
		int rc = mdb_txn_begin(s->env, NULL, 0, &txn);
		for (unsigned i = 0; rc == 0 && i < n; i++) {
			struct cell *c = &s->cells[(pos + i) & (STORE_QUEUE_SLOTS - 1)];
			if (c->kind == OP_PUT) {
				rc = put_value(txn, s->placements, &c->id, sizeof(c->id),
					       c->blob, c->len);
			} else {
				MDB_val k = {sizeof(c->id), &c->id};
				rc = mdb_del(txn, s->placements, &k, NULL);
				if (rc == MDB_NOTFOUND)
					rc = 0;
			}
		}
		if (rc == 0)
			rc = mdb_txn_commit(txn);
		else
			mdb_txn_abort(txn);
		if (rc == MDB_MAP_FULL && grow_map(s) == 0)
			continue;
		if (rc != 0)
			return -rc;
		break;
	}
	for (unsigned i = 0; i < n; i++) {
		struct cell *c = &s->cells[(pos + i) & (STORE_QUEUE_SLOTS - 1)];
		/* Q4: release, partner of Q1. */
		__atomic_store_n(&c->seq, pos + i + STORE_QUEUE_SLOTS, __ATOMIC_RELEASE);
	}
	s->head = pos + n;
	return (int)n;
}

static void writer_fail(struct store *s, const char *what, int rc)
{
	snprintf(s->error, sizeof(s->error), "store %s: %s: %s", s->dir, what,
		 mdb_strerror(rc));
	log_msg(LOG_LEVEL_ERROR, "%s; placements are no longer made durable",
		s->error);
	__atomic_store_n(&s->failed, 1, __ATOMIC_RELEASE);
}

/* One round: everything queued now, in batches, one fsync at the end. */
static int writer_round(struct store *s)
{
	pthread_mutex_lock(&s->txn_lock);
	uint64_t ops = 0;
	int n;
	while ((n = drain_batch(s, STORE_QUEUE_SLOTS)) > 0) {
		ops += (uint64_t)n;
		stat_inc(&s->stats.txns);
		if ((uint64_t)n > s->stats.max_batch)
			__atomic_store_n(&s->stats.max_batch, (uint64_t)n,
					 __ATOMIC_RELAXED);
	}
	int rc = n < 0 ? -n : ops > 0 ? sync_env(s) : 0;
	pthread_mutex_unlock(&s->txn_lock);
	if (rc != 0) {
		writer_fail(s, n < 0 ? "committing placements" : "fsync", rc);
		return -1;
	}
	if (ops > 0) {
		stat_add(&s->stats.ops, ops);
		/* SD1: release; the commit and fsync came before. */
		__atomic_store_n(&s->durable, s->head, __ATOMIC_RELEASE);
	}
	return 0;
}

static void *writer_main(void *arg)
{
	struct store *s = arg;
	for (;;) {
		bool stopping = __atomic_load_n(&s->stopping, __ATOMIC_ACQUIRE);
		if (writer_round(s) < 0)
			return NULL;
		if (stopping)
			return NULL;
		/* Sleep out the interval unless a waiter or a half-full queue
		 * wakes us (store_wait signals; enqueuers never do). */
		pthread_mutex_lock(&s->wake_lock);
		if (!__atomic_load_n(&s->waiters, __ATOMIC_RELAXED) &&
		    !__atomic_load_n(&s->stopping, __ATOMIC_RELAXED)) {
			struct timespec until;
			clock_gettime(CLOCK_REALTIME, &until);
			until.tv_nsec += STORE_INTERVAL_MS * 1000000L;
			if (until.tv_nsec >= 1000000000L) {
				until.tv_sec++;
				until.tv_nsec -= 1000000000L;
			}
			pthread_cond_timedwait(&s->wake, &s->wake_lock, &until);
		}
		pthread_mutex_unlock(&s->wake_lock);
	}
}

static void wake_writer(struct store *s)
{
	pthread_mutex_lock(&s->wake_lock);
	pthread_cond_signal(&s->wake);
	pthread_mutex_unlock(&s->wake_lock);
}

/* --- hot path ------------------------------------------------------------ */

static uint64_t enqueue(struct store *s, uint32_t kind, uint64_t id,
			const void *blob, uint32_t len)
{
	bool waited = false;
	unsigned spins = 0;
	uint64_t pos = __atomic_load_n(&s->tail, __ATOMIC_RELAXED);
	for (;;) {
		struct cell *c = &s->cells[pos & (STORE_QUEUE_SLOTS - 1)];
		/* Q1: acquire, partner of Q4. */
		uint64_t seq = __atomic_load_n(&c->seq, __ATOMIC_ACQUIRE);
		if (seq == pos) {
			/* Q1: relaxed; the cell's sequence orders the op. */
			if (__atomic_compare_exchange_n(&s->tail, &pos, pos + 1, true,
							__ATOMIC_RELAXED,
							__ATOMIC_RELAXED)) {
				c->id = id;
				c->kind = kind;
				c->len = len;
				if (len > 0)
					memcpy(c->blob, blob, len);
				/* Q2: release, partner of Q3. */
				__atomic_store_n(&c->seq, pos + 1, __ATOMIC_RELEASE);
				return pos + 1;
			}
		} else if (seq < pos) {
			/* Full: back-pressure. The writer drains every
			 * interval; yield to it meanwhile. */
			if (!waited) {
				/* Relaxed: a figure, from many threads. */
				__atomic_fetch_add(&s->stats.full_waits, 1,
						   __ATOMIC_RELAXED);
				waited = true;
			}
			if (++spins > 64)
				sched_yield();
			pos = __atomic_load_n(&s->tail, __ATOMIC_RELAXED);
		} else {
			pos = __atomic_load_n(&s->tail, __ATOMIC_RELAXED);
		}
	}
}

uint64_t store_put_placement(struct store *s, uint64_t id, const void *blob,
			     uint32_t len)
{
	if (len > STORE_BLOB_MAX) {
		/* Relaxed: a figure, from many threads. */
		__atomic_fetch_add(&s->stats.dropped, 1, __ATOMIC_RELAXED);
		return 0;
	}
	return enqueue(s, OP_PUT, id, blob, len);
}

uint64_t store_del_placement(struct store *s, uint64_t id)
{
	return enqueue(s, OP_DEL, id, NULL, 0);
}

uint64_t store_durable_seq(const struct store *s)
{
	/* SD1: acquire. */
	return __atomic_load_n(&s->durable, __ATOMIC_ACQUIRE);
}

int store_wait(struct store *s, uint64_t seq)
{
	if (store_durable_seq(s) >= seq)
		return 0;
	__atomic_fetch_add(&s->waiters, 1, __ATOMIC_RELAXED);
	wake_writer(s);
	int rc = 0;
	for (unsigned i = 0; store_durable_seq(s) < seq; i++) {
		if (__atomic_load_n(&s->failed, __ATOMIC_ACQUIRE)) {
			rc = -EIO;
			break;
		}
		if (i < 100) {
			sched_yield();
		} else {
			struct timespec ts = {0, 50000};
			nanosleep(&ts, NULL);
			if (i % 64 == 0)
				wake_writer(s);
		}
	}
	__atomic_fetch_sub(&s->waiters, 1, __ATOMIC_RELAXED);
	return rc;
}

const char *store_error(const struct store *s)
{
	return __atomic_load_n(&s->failed, __ATOMIC_ACQUIRE) ? s->error : "";
}

/* --- opening ------------------------------------------------------------- */

/* LMDB maps the data file and would fault (SIGBUS) reading pages past its
 * end, so a truncated file is found here first: both meta pages read with
 * read(2). The meta layout is LMDB 0.9's (lmdb.h's MDB_meta, format
 * version 1): magic at byte 16 of the page, the page size in the free
 * DB's md_pad at byte 40, the free and main DBs' md_root at 80 and 128,
 * mm_last_pg at byte 136, mm_txnid at 144.
 *
 * The newer meta's roots must lie inside the file. Its last page need
 * not: LMDB counts pages it allocated and then freed in the same
 * transaction (loose pages) in mm_last_pg but never writes them
 * (mdb_page_flush: "Don't flush this page yet"), so a file that ends
 * before its last page is what any transaction may leave (stress.reboot_none
 * met one after a SIGKILL, and this check refused the store). Opened for
 * writing (`may_extend`), such a file is extended with zeros to its last
 * page: the pages past the old end are unreachable, or, if the file was
 * cut, LMDB finds a zero page where the tree needs one (MDB_CORRUPTED)
 * and the start's check of every record refuses the store. Opened to be
 * read only, it is refused, saying so. */
#define LMDB_MAGIC 0xBEEFC0DEu
#define LMDB_P_INVALID UINT64_MAX
_Static_assert(sizeof(void *) == 8 && sizeof(size_t) == 8,
	       "the meta-page offsets below are a 64-bit build's");
static int precheck(const char *path, bool may_extend, char *err, size_t err_len)
{
	int fd = open(path, (may_extend ? O_RDWR : O_RDONLY) | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : errmsg_rc(-errno, err, err_len,
						      "store %s: %s", path,
						      strerror(errno));
	struct stat st;
	uint8_t page0[152], page1[152];
	int rc = 0;
	if (fstat(fd, &st) < 0) {
		rc = errmsg_rc(-errno, err, err_len, "store %s: %s", path,
			       strerror(errno));
		goto done;
	}
	if (st.st_size == 0)
		goto done; /* LMDB writes a new file's meta pages itself */
	uint32_t magic = 0, psize = 0;
	if (pread(fd, page0, sizeof(page0), 0) != (ssize_t)sizeof(page0) ||
	    (memcpy(&magic, page0 + 16, 4), magic != LMDB_MAGIC) ||
	    (memcpy(&psize, page0 + 40, 4), psize < 512 || psize > 65536 ||
	     (psize & (psize - 1)) != 0) ||
	    pread(fd, page1, sizeof(page1), psize) != (ssize_t)sizeof(page1) ||
	    (memcpy(&magic, page1 + 16, 4), magic != LMDB_MAGIC)) {
		rc = errmsg_rc(-EBADMSG, err, err_len, "store %s: not an LMDB data "
			       "file (its meta pages are missing or damaged)", path);
		goto done;
	}
	uint64_t last0, last1, txn0, txn1, roots[2];
	memcpy(&last0, page0 + 136, 8);
	memcpy(&txn0, page0 + 144, 8);
	memcpy(&last1, page1 + 136, 8);
	memcpy(&txn1, page1 + 144, 8);
	const uint8_t *meta = txn1 > txn0 ? page1 : page0;
	uint64_t last = txn1 > txn0 ? last1 : last0;
	memcpy(&roots[0], meta + 80, 8);
	memcpy(&roots[1], meta + 128, 8);
	uint64_t pages = (uint64_t)st.st_size / psize;
	if ((uint64_t)st.st_size % psize != 0 || (uint64_t)st.st_size < 2 * psize) {
		rc = errmsg_rc(-EBADMSG, err, err_len, "store %s: truncated: %lld "
			       "bytes is not a whole number (>= 2) of %u-byte pages",
			       path, (long long)st.st_size, psize);
		goto done;
	}
	for (int i = 0; i < 2; i++)
		if (roots[i] != LMDB_P_INVALID && roots[i] >= pages) {
			rc = errmsg_rc(-EBADMSG, err, err_len, "store %s: truncated: "
				       "its meta page's %s root is page %" PRIu64
				       " of %u bytes, the file holds %lld bytes",
				       path, i ? "main" : "free", roots[i], psize,
				       (long long)st.st_size);
			goto done;
		}
	if (last > UINT64_MAX / psize - 1) {
		rc = errmsg_rc(-EBADMSG, err, err_len, "store %s: its meta page "
			       "names page %" PRIu64 ": expected a page number a "
			       "file can hold", path, last);
		goto done;
	}
	if (last < pages)
		goto done;
	if (!may_extend) {
		rc = errmsg_rc(-EBADMSG, err, err_len, "store %s: its meta page "
			       "names page %" PRIu64 " of %u bytes, the file holds "
			       "%lld bytes: pages LMDB allocated and never wrote "
			       "(a crash leaves these), or a cut file; the "
			       "daemon's next start extends it and checks every "
			       "record", path, last, psize, (long long)st.st_size);
		goto done;
	}
	if (ftruncate(fd, (off_t)((last + 1) * psize)) < 0) {
		rc = errmsg_rc(-errno, err, err_len, "store %s: extending it to "
			       "its last page %" PRIu64 ": %s", path, last,
			       strerror(errno));
		goto done;
	}
	log_msg(LOG_LEVEL_WARN, "store %s: its last page %" PRIu64 " lay past "
		"its end (%lld bytes): extended with zeros (pages LMDB "
		"allocated and never wrote, as a crash leaves them; every "
		"record is checked next)", path, last, (long long)st.st_size);
done:
	close(fd);
	return rc;
}

/* Issue 41: the store is the daemon's alone. A directory another user
 * made, or could write, or swap (through a directory above it), would let
 * that user hand the daemon a store to rebuild from. Checked on what was
 * opened (O_NOFOLLOW, fstat / fstatat with AT_SYMLINK_NOFOLLOW); LMDB then
 * opens the files by path, which nobody else can change once the
 * directory and every one above it is safe. */
#define STORE_FIX "remove it (it is not ours) or start with --state-dir OTHER"

static int check_owned(const char *path, const struct stat *sb, bool dir,
		       char *err, size_t err_len)
{
	unsigned mode = (unsigned)sb->st_mode & 07777;
	uid_t me = geteuid();
	if (dir ? !S_ISDIR(sb->st_mode) : !S_ISREG(sb->st_mode))
		return errmsg_rc(-EPERM, err, err_len, "store %s: not a %s (owner "
				 "uid %u, mode 0%o, type 0%o): refused; " STORE_FIX,
				 path, dir ? "directory" : "regular file",
				 (unsigned)sb->st_uid, mode,
				 (unsigned)(sb->st_mode & S_IFMT));
	if (sb->st_uid != me)
		return errmsg_rc(-EPERM, err, err_len, "store %s: owned by uid %u, "
				 "mode 0%o, not by this daemon's uid %u (its owner "
				 "could swap the store the daemon rebuilds from): "
				 "refused; " STORE_FIX, path, (unsigned)sb->st_uid,
				 mode, (unsigned)me);
	if (mode & 0022)
		return errmsg_rc(-EPERM, err, err_len, "store %s: owner uid %u, "
				 "mode 0%o: group or others may write it: refused; "
				 "chmod go-w it, or " STORE_FIX, path,
				 (unsigned)sb->st_uid, mode);
	return 0;
}

/* The directories above `dir` (resolved): each owned by root or by us,
 * and none that others may write unless sticky (/tmp). */
static int check_above(const char *dir, char *err, size_t err_len)
{
	char *real = realpath(dir, NULL);
	if (real == NULL)
		return errmsg_rc(-errno, err, err_len, "store %s: %s", dir,
				 strerror(errno));
	int rc = 0;
	for (char *slash = strrchr(real, '/'); slash != NULL && rc == 0;
	     slash = strrchr(real, '/')) {
		if (slash == real)
			slash[1] = '\0';
		else
			slash[0] = '\0';
		struct stat sb;
		if (lstat(real, &sb) < 0) {
			rc = errmsg_rc(-errno, err, err_len, "store %s: %s: %s", dir,
				       real, strerror(errno));
			break;
		}
		bool writable = (sb.st_mode & 0002) && !(sb.st_mode & S_ISVTX);
		if ((sb.st_uid != 0 && sb.st_uid != geteuid()) || writable)
			rc = errmsg_rc(-EPERM, err, err_len, "store %s: the directory "
				       "%s above it (owner uid %u, mode 0%o) lets "
				       "another user swap the store: refused; use "
				       "a --state-dir whose every parent is owned "
				       "by root or uid %u", dir, real,
				       (unsigned)sb.st_uid,
				       (unsigned)sb.st_mode & 07777,
				       (unsigned)geteuid());
		if (real[1] == '\0')
			break;
	}
	free(real);
	return rc;
}

static int check_store_dir(const char *dir, char *err, size_t err_len)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		struct stat lb;
		if ((e == ELOOP || e == ENOTDIR) && lstat(dir, &lb) == 0)
			return errmsg_rc(-EPERM, err, err_len, "store %s: %s (owner "
					 "uid %u, mode 0%o): refused (the store is "
					 "never reached through a link); " STORE_FIX,
					 dir, S_ISLNK(lb.st_mode) ? "a symbolic link"
					 : "not a directory", (unsigned)lb.st_uid,
					 (unsigned)lb.st_mode & 07777);
		return errmsg_rc(-e, err, err_len, "store %s: %s", dir, strerror(e));
	}
	struct stat sb;
	int rc = fstat(fd, &sb) < 0 ? errmsg_rc(-errno, err, err_len, "store %s: "
						"%s", dir, strerror(errno))
				     : check_owned(dir, &sb, true, err, err_len);
	static const char *const files[] = {"data.mdb", "lock.mdb"};
	for (unsigned i = 0; i < 2 && rc == 0; i++) {
		char path[600];
		snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
		if (fstatat(fd, files[i], &sb, AT_SYMLINK_NOFOLLOW) < 0)
			rc = errno == ENOENT ? 0 : errmsg_rc(-errno, err, err_len,
							    "store %s: %s", path,
							    strerror(errno));
		else
			rc = check_owned(path, &sb, false, err, err_len);
	}
	close(fd);
	return rc == 0 ? check_above(dir, err, err_len) : rc;
}

/* The map LMDB starts with; SHMSCHED_STORE_MAP_BYTES overrides it, so
 * tests can see it grow. */
static uint64_t map_start(void)
{
	const char *e = getenv("SHMSCHED_STORE_MAP_BYTES");
	unsigned long long v = e != NULL ? strtoull(e, NULL, 10) : 0;
	return v >= (1u << 16) ? (uint64_t)v : MAP_START;
}

static int open_env(const char *dir, unsigned flags, MDB_env **env,
		    MDB_dbi dbis[4], char *err, size_t err_len)
{
	char data[600];
	snprintf(data, sizeof(data), "%s/data.mdb", dir);
	int rc = precheck(data, !(flags & MDB_RDONLY), err, err_len);
	if (rc < 0)
		return rc;
	if ((rc = mdb_env_create(env)) != 0 ||
	    (rc = mdb_env_set_maxdbs(*env, 8)) != 0 ||
	    (rc = mdb_env_set_mapsize(*env, map_start())) != 0)
		goto fail;
	rc = mdb_env_open(*env, dir, flags | MDB_NOTLS, 0600);
	if (rc != 0)
		goto fail;
	MDB_txn *txn;
	bool readonly = flags & MDB_RDONLY;
	rc = mdb_txn_begin(*env, NULL, readonly ? MDB_RDONLY : 0, &txn);
	if (rc != 0)
		goto fail;
	static const char *const names[4] = {"meta", "nodes", "placements",
					     "identities"};
	for (int i = 0; i < 4 && rc == 0; i++)
		rc = mdb_dbi_open(txn, names[i], readonly ? 0 : MDB_CREATE, &dbis[i]);
	if (rc == MDB_NOTFOUND && readonly) {
		mdb_txn_abort(txn);
		mdb_env_close(*env);
		*env = NULL;
		return errmsg_rc(-ENOENT, err, err_len, "store %s: empty (no "
				 "tables yet)", dir);
	}
	/* Committed even when read-only: an aborted transaction would close
	 * the table handles it opened. */
	if (rc == 0)
		rc = mdb_txn_commit(txn);
	else
		mdb_txn_abort(txn);
	if (rc != 0)
		goto fail;
	return 0;
fail:
	mdb_env_close(*env);
	*env = NULL;
	return errmsg_rc(lmdb_errno(rc), err, err_len, "store %s: %s", dir,
			 mdb_strerror(rc));
}

/* The format version in meta: written into a new store, checked in an
 * existing one. */
static int check_format(struct store *s, char *err, size_t err_len)
{
	MDB_txn *txn;
	int rc = mdb_txn_begin(s->env, NULL, 0, &txn);
	if (rc != 0)
		return errmsg_rc(lmdb_errno(rc), err, err_len, "store %s: %s",
				 s->dir, mdb_strerror(rc));
	static const char key[] = "format";
	MDB_val k = {sizeof(key) - 1, (void *)key}, v;
	rc = mdb_get(txn, s->meta, &k, &v);
	uint32_t version = STORE_FORMAT_VERSION;
	if (rc == MDB_NOTFOUND) {
		rc = put_value(txn, s->meta, key, sizeof(key) - 1, &version,
			       sizeof(version));
		rc = rc == 0 ? mdb_txn_commit(txn) : (mdb_txn_abort(txn), rc);
		return rc == 0 ? 0 : errmsg_rc(lmdb_errno(rc), err, err_len,
					       "store %s: %s", s->dir,
					       mdb_strerror(rc));
	}
	uint64_t sum = 0;
	if (rc == 0 && v.mv_size == CHECKSUM_BYTES + sizeof(version)) {
		memcpy(&sum, v.mv_data, CHECKSUM_BYTES);
		memcpy(&version, (uint8_t *)v.mv_data + CHECKSUM_BYTES, sizeof(version));
	}
	mdb_txn_abort(txn);
	if (rc != 0 || v.mv_size != CHECKSUM_BYTES + sizeof(version) ||
	    sum != checksum(key, sizeof(key) - 1, &version, sizeof(version)))
		return errmsg_rc(-EBADMSG, err, err_len, "store %s: its format "
				 "record is damaged", s->dir);
	if (version != STORE_FORMAT_VERSION)
		return errmsg_rc(-EPROTO, err, err_len, "store %s: format version "
				 "%u, this program reads version %u", s->dir,
				 version, STORE_FORMAT_VERSION);
	return 0;
}

int store_open(const char *dir, enum store_durability mode, struct store **out,
	       char *err, size_t err_len)
{
	*out = NULL;
	if (dir == NULL || dir[0] == '\0' || strlen(dir) >= 500 ||
	    mode > STORE_DURABILITY_SYNC)
		return errmsg_rc(-EINVAL, err, err_len, "store: a directory of 1 to "
				 "499 bytes and a durability mode are needed");
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return errmsg_rc(-errno, err, err_len, "store %s: %s", dir,
				 strerror(errno));
	int rc = check_store_dir(dir, err, err_len);
	if (rc < 0)
		return rc;
	struct store *s = calloc(1, sizeof(*s));
	struct cell *cells = aligned_alloc(64, STORE_QUEUE_SLOTS * sizeof(*cells));
	if (s == NULL || cells == NULL) {
		free(s);
		free(cells);
		return errmsg_rc(-ENOMEM, err, err_len, "out of memory");
	}
	s->cells = cells;
	for (uint64_t i = 0; i < STORE_QUEUE_SLOTS; i++)
		cells[i].seq = i;
	s->mode = mode;
	s->map_size = map_start();
	snprintf(s->dir, sizeof(s->dir), "%s", dir);
	pthread_mutex_init(&s->txn_lock, NULL);
	pthread_mutex_init(&s->wake_lock, NULL);
	pthread_cond_init(&s->wake, NULL);
	MDB_dbi dbis[4];
	/* async and sync: MDB_NOMETASYNC, so a commit flushes its data pages
	 * before it writes the meta page that points at them, and the
	 * writer's mdb_env_sync() then flushes the meta page: a machine crash
	 * can lose the last batches but never leave a meta page naming pages
	 * that are not on disk. MDB_NOSYNC would save one flush per batch and
	 * allow exactly that corruption on a file system that does not keep
	 * write order (ext4 does not promise it): lmdb.h says so. none:
	 * MDB_NOSYNC, never flushed, and a machine crash may damage the file
	 * (the daemon then refuses it). */
	rc = open_env(dir, mode == STORE_DURABILITY_NONE ? MDB_NOSYNC
							     : MDB_NOMETASYNC,
			  &s->env, dbis, err, err_len);
	if (rc == 0) {
		s->meta = dbis[0];
		s->nodes = dbis[1];
		s->placements = dbis[2];
		s->identities = dbis[3];
		/* The afs table, made here: a store of an older daemon has
		 * none, and read-only opens (check, peek) do not need it. */
		MDB_txn *txn;
		int lrc = mdb_txn_begin(s->env, NULL, 0, &txn);
		if (lrc == 0) {
			lrc = mdb_dbi_open(txn, "afs", MDB_CREATE, &s->afs);
			if (lrc == 0)
				lrc = mdb_txn_commit(txn);
			else
				mdb_txn_abort(txn);
		}
		/* An existing store may have grown past the start size. */
		MDB_envinfo info;
		if (mdb_env_info(s->env, &info) == 0 && info.me_mapsize > s->map_size)
			s->map_size = info.me_mapsize;
		rc = check_format(s, err, err_len);
		if (rc == 0 && lrc != 0)
			rc = errmsg_rc(lmdb_errno(lrc), err, err_len, "store %s: "
				       "table afs: %s", dir, mdb_strerror(lrc));
	}
	if (rc == 0 && (rc = -pthread_create(&s->writer, NULL, writer_main, s)) < 0)
		errmsg_rc(rc, err, err_len, "store %s: writer thread: %s", dir,
			  strerror(-rc));
	if (rc < 0) {
		if (s->env != NULL)
			mdb_env_close(s->env);
		free(s->cells);
		free(s);
		return rc;
	}
	*out = s;
	return 0;
}

void store_close(struct store *s)
{
	if (s == NULL)
		return;
	__atomic_store_n(&s->stopping, 1, __ATOMIC_RELEASE);
	wake_writer(s);
	pthread_join(s->writer, NULL);
	mdb_env_sync(s->env, 1);
	mdb_env_close(s->env);
	pthread_mutex_destroy(&s->txn_lock);
	pthread_mutex_destroy(&s->wake_lock);
	pthread_cond_destroy(&s->wake);
	free(s->cells);
	free(s);
}

enum store_durability store_mode(const struct store *s)
{
	return s->mode;
}

const char *store_durability_name(enum store_durability m)
{
	return m == STORE_DURABILITY_NONE ? "none"
	       : m == STORE_DURABILITY_SYNC ? "sync" : "async";
}

int store_durability_parse(const char *text, enum store_durability *out)
{
	static const enum store_durability modes[] = {
		STORE_DURABILITY_NONE, STORE_DURABILITY_ASYNC, STORE_DURABILITY_SYNC};
	for (unsigned i = 0; i < 3; i++)
		if (text != NULL && strcmp(text, store_durability_name(modes[i])) == 0) {
			*out = modes[i];
			return 0;
		}
	return -EINVAL;
}

/* --- slow path ----------------------------------------------------------- */

/* One write transaction: `apply` within it, committed and synced; the map
 * grown and the transaction retried on MDB_MAP_FULL. */
static int write_txn(struct store *s, int (*apply)(struct store *s, MDB_txn *txn,
						    void *arg),
		     void *arg, const char *what, char *err, size_t err_len)
{
	pthread_mutex_lock(&s->txn_lock);
	int rc;
	for (;;) {
		MDB_txn *txn;
		rc = mdb_txn_begin(s->env, NULL, 0, &txn);
		if (rc == 0) {
			rc = apply(s, txn, arg);
			rc = rc == 0 ? mdb_txn_commit(txn) : (mdb_txn_abort(txn), rc);
		}
		if (rc == MDB_MAP_FULL && grow_map(s) == 0)
			continue;
		break;
	}
	if (rc == 0)
		rc = sync_env(s);
	pthread_mutex_unlock(&s->txn_lock);
	if (rc < 0) /* an errno of our own, from `apply` */
		return errmsg_rc(rc, err, err_len, "store %s: %s: %s", s->dir, what,
				 strerror(-rc));
	if (rc > 0)
		return errmsg_rc(lmdb_errno(rc), err, err_len, "store %s: %s: %s",
				 s->dir, what, mdb_strerror(rc));
	return 0;
}

struct kv {
	MDB_dbi dbi;
	const void *key;
	size_t klen;
	const void *val;
	size_t vlen;
	bool del;
};

static int apply_kv(struct store *s, MDB_txn *txn, void *arg)
{
	(void)s;
	struct kv *kv = arg;
	if (!kv->del)
		return put_value(txn, kv->dbi, kv->key, kv->klen, kv->val, kv->vlen);
	MDB_val k = {kv->klen, (void *)kv->key};
	return mdb_del(txn, kv->dbi, &k, NULL);
}

int store_put_node(struct store *s, const char *name, size_t name_len,
		   const void *blob, size_t len, char *err, size_t err_len)
{
	if (name_len == 0 || name_len > NAME_MAX_BYTES || len > NODE_BLOB_MAX)
		return errmsg_rc(-E2BIG, err, err_len, "store: node %.*s: name or "
				 "record too long", (int)(name_len > 64 ? 64 : name_len),
				 name);
	struct kv kv = {s->nodes, name, name_len, blob, len, false};
	return write_txn(s, apply_kv, &kv, "writing a node", err, err_len);
}

int store_del_node(struct store *s, const char *name, size_t name_len,
		   char *err, size_t err_len)
{
	if (name_len == 0 || name_len > NAME_MAX_BYTES)
		return errmsg_rc(-E2BIG, err, err_len, "store: node name too long");
	struct kv kv = {s->nodes, name, name_len, NULL, 0, true};
	int rc = write_txn(s, apply_kv, &kv, "removing a node", err, err_len);
	return rc;
}

int store_put_identity(struct store *s, uint32_t owner, const void *blob,
		       uint32_t len, char *err, size_t err_len)
{
	if (len > STORE_BLOB_MAX)
		return errmsg_rc(-E2BIG, err, err_len, "store: identity too long");
	struct kv kv = {s->identities, &owner, sizeof(owner), blob, len, false};
	return write_txn(s, apply_kv, &kv, "writing an identity", err, err_len);
}

struct store_replace {
	struct store *s;
	MDB_txn *txn;
	int (*fill)(struct store_replace *w, void *arg);
	void *arg;
};

static int apply_replace(struct store *s, MDB_txn *txn, void *arg)
{
	struct store_replace *w = arg;
	int rc = mdb_drop(txn, s->nodes, 0);
	if (rc == 0)
		rc = mdb_drop(txn, s->placements, 0);
	if (rc == 0)
		rc = mdb_drop(txn, s->identities, 0);
	w->txn = txn;
	return rc != 0 ? rc : w->fill(w, w->arg);
}

int store_replace_all(struct store *s,
		      int (*fill)(struct store_replace *w, void *arg), void *arg,
		      char *err, size_t err_len)
{
	/* Everything queued first: the replacement is newer than all of it. */
	uint64_t tail = __atomic_load_n(&s->tail, __ATOMIC_RELAXED);
	int rc = store_wait(s, tail);
	if (rc < 0)
		return errmsg_rc(rc, err, err_len, "%s", store_error(s));
	struct store_replace w = {.s = s, .fill = fill, .arg = arg};
	return write_txn(s, apply_replace, &w, "replacing its contents", err,
			 err_len);
}

int store_replace_node(struct store_replace *w, const char *name,
		       size_t name_len, const void *blob, size_t len)
{
	return put_value(w->txn, w->s->nodes, name, name_len, blob, len);
}

int store_replace_placement(struct store_replace *w, uint64_t id,
			    const void *blob, uint32_t len)
{
	return put_value(w->txn, w->s->placements, &id, sizeof(id), blob, len);
}

int store_replace_identity(struct store_replace *w, uint32_t owner,
			   const void *blob, uint32_t len)
{
	return put_value(w->txn, w->s->identities, &owner, sizeof(owner), blob, len);
}

struct afs_put {
	const struct store_blob *b;
	size_t n;
	bool replace; /* the table emptied first */
};

static int apply_afs(struct store *s, MDB_txn *txn, void *arg)
{
	const struct afs_put *a = arg;
	int rc = a->replace ? mdb_drop(txn, s->afs, 0) : 0;
	for (size_t i = 0; rc == 0 && i < a->n; i++)
		rc = put_value(txn, s->afs, a->b[i].key, a->b[i].klen, a->b[i].val,
			       a->b[i].len);
	return rc;
}

int store_replace_afs(struct store *s, const struct store_blob *b, size_t n,
		      char *err, size_t err_len)
{
	struct afs_put a = {b, n, true};
	return write_txn(s, apply_afs, &a, "writing admission usage", err, err_len);
}

int store_put_afs(struct store *s, const struct store_blob *b, size_t n,
		  char *err, size_t err_len)
{
	struct afs_put a = {b, n, false};
	return write_txn(s, apply_afs, &a, "writing admission usage", err, err_len);
}

/* --- reading back -------------------------------------------------------- */

/* Walks one table, checking every value; `visit` gets each (NULL: count). */
static int walk(MDB_txn *txn, MDB_dbi dbi, const char *table, size_t key_size,
		int (*visit)(void *ctx, const MDB_val *k, const void *val,
			     size_t len),
		void *ctx, uint64_t *count, char *err, size_t err_len)
{
	MDB_cursor *cur;
	int rc = mdb_cursor_open(txn, dbi, &cur);
	if (rc != 0)
		return errmsg_rc(lmdb_errno(rc), err, err_len, "store: table %s: %s",
				 table, mdb_strerror(rc));
	MDB_val k, v;
	uint64_t n = 0;
	int out = 0;
	for (rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); rc == 0;
	     rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
		uint64_t sum;
		if (v.mv_size < CHECKSUM_BYTES ||
		    (key_size != 0 && k.mv_size != key_size) ||
		    (memcpy(&sum, v.mv_data, CHECKSUM_BYTES),
		     sum != checksum(k.mv_data, k.mv_size,
				     (uint8_t *)v.mv_data + CHECKSUM_BYTES,
				     v.mv_size - CHECKSUM_BYTES))) {
			uint64_t key = 0;
			if (k.mv_size == 8 || k.mv_size == 4)
				memcpy(&key, k.mv_data, k.mv_size);
			out = errmsg_rc(-EBADMSG, err, err_len, "store: table %s: "
					"entry %" PRIu64 " (key %" PRIu64 "): checksum "
					"or size wrong: the file is damaged", table, n,
					key);
			break;
		}
		n++;
		if (visit != NULL &&
		    (out = visit(ctx, &k, (uint8_t *)v.mv_data + CHECKSUM_BYTES,
				 v.mv_size - CHECKSUM_BYTES)) != 0)
			break;
	}
	mdb_cursor_close(cur);
	if (out == 0 && rc != MDB_NOTFOUND)
		out = errmsg_rc(lmdb_errno(rc), err, err_len, "store: table %s: %s",
				table, mdb_strerror(rc));
	if (count != NULL)
		*count = n;
	return out;
}

static int visit_node(void *ctx, const MDB_val *k, const void *val, size_t len)
{
	const struct store_visitor *v = ctx;
	return v->node(v->arg, k->mv_data, k->mv_size, val, len);
}

static int visit_identity(void *ctx, const MDB_val *k, const void *val, size_t len)
{
	const struct store_visitor *v = ctx;
	uint32_t owner;
	memcpy(&owner, k->mv_data, sizeof(owner));
	return v->identity(v->arg, owner, val, (uint32_t)len);
}

static int visit_placement(void *ctx, const MDB_val *k, const void *val, size_t len)
{
	const struct store_visitor *v = ctx;
	uint64_t id;
	memcpy(&id, k->mv_data, sizeof(id));
	return v->placement(v->arg, id, val, (uint32_t)len);
}

struct afs_visit {
	int (*visit)(void *arg, const void *blob, size_t len);
	void *arg;
};

static int visit_afs(void *ctx, const MDB_val *k, const void *val, size_t len)
{
	(void)k;
	const struct afs_visit *a = ctx;
	return a->visit(a->arg, val, len);
}

int store_load_afs(struct store *s, int (*visit)(void *arg, const void *blob,
						 size_t len),
		   void *arg, char *err, size_t err_len)
{
	MDB_txn *txn;
	int rc = mdb_txn_begin(s->env, NULL, MDB_RDONLY, &txn);
	if (rc != 0)
		return errmsg_rc(lmdb_errno(rc), err, err_len, "store: %s",
				 mdb_strerror(rc));
	struct afs_visit a = {visit, arg};
	rc = walk(txn, s->afs, "afs", 0, visit_afs, &a, NULL, err, err_len);
	mdb_txn_abort(txn);
	return rc;
}

static int load_all(MDB_env *env, MDB_dbi nodes, MDB_dbi identities,
		    MDB_dbi placements, const struct store_visitor *v,
		    uint64_t counts[3], char *err, size_t err_len)
{
	MDB_txn *txn;
	int rc = mdb_txn_begin(env, NULL, MDB_RDONLY, &txn);
	if (rc != 0)
		return errmsg_rc(lmdb_errno(rc), err, err_len, "store: %s",
				 mdb_strerror(rc));
	rc = walk(txn, nodes, "nodes", 0, v && v->node ? visit_node : NULL,
		  (void *)v, &counts[0], err, err_len);
	if (rc == 0)
		rc = walk(txn, identities, "identities", sizeof(uint32_t),
			  v && v->identity ? visit_identity : NULL, (void *)v,
			  &counts[2], err, err_len);
	if (rc == 0)
		rc = walk(txn, placements, "placements", sizeof(uint64_t),
			  v && v->placement ? visit_placement : NULL, (void *)v,
			  &counts[1], err, err_len);
	mdb_txn_abort(txn);
	return rc;
}

int store_counts(struct store *s, uint64_t *nodes, uint64_t *placements,
		 uint64_t *identities, char *err, size_t err_len)
{
	MDB_txn *txn;
	int rc = mdb_txn_begin(s->env, NULL, MDB_RDONLY, &txn);
	MDB_stat st[3];
	const MDB_dbi dbis[3] = {s->nodes, s->placements, s->identities};
	if (rc == 0) {
		for (int i = 0; rc == 0 && i < 3; i++)
			rc = mdb_stat(txn, dbis[i], &st[i]);
		mdb_txn_abort(txn);
	}
	if (rc != 0)
		return errmsg_rc(lmdb_errno(rc), err, err_len, "store %s: %s", s->dir,
				 mdb_strerror(rc));
	*nodes = st[0].ms_entries;
	*placements = st[1].ms_entries;
	*identities = st[2].ms_entries;
	return 0;
}

int store_load(struct store *s, const struct store_visitor *v, char *err,
	       size_t err_len)
{
	uint64_t counts[3];
	return load_all(s->env, s->nodes, s->identities, s->placements, v, counts,
			err, err_len);
}

int store_check(const char *dir, uint64_t *nodes, uint64_t *placements,
		uint64_t *identities, char *err, size_t err_len)
{
	MDB_env *env;
	MDB_dbi dbis[4];
	int rc = open_env(dir, MDB_RDONLY, &env, dbis, err, err_len);
	if (rc < 0)
		return rc;
	uint64_t counts[3] = {0};
	rc = load_all(env, dbis[1], dbis[3], dbis[2], NULL, counts, err, err_len);
	mdb_env_close(env);
	if (nodes != NULL)
		*nodes = counts[0];
	if (placements != NULL)
		*placements = counts[1];
	if (identities != NULL)
		*identities = counts[2];
	return rc;
}

int store_put_origin(struct store *s, const char *origin, char *err,
		     size_t err_len)
{
	static const char key[] = "origin";
	size_t len = strlen(origin);
	if (len >= STORE_ORIGIN_MAX)
		return errmsg_rc(-E2BIG, err, err_len, "store %s: origin record "
				 "of %zu bytes, at most %u", s->dir, len,
				 STORE_ORIGIN_MAX - 1);
	struct kv kv = {s->meta, key, sizeof(key) - 1, origin, len, false};
	return write_txn(s, apply_kv, &kv, "writing its origin", err, err_len);
}

int store_peek(const char *dir, bool *has_state, char *origin,
	       size_t origin_len, char *err, size_t err_len)
{
	*has_state = false;
	if (origin_len > 0)
		origin[0] = '\0';
	char data[600];
	struct stat st;
	if (dir == NULL || strlen(dir) >= 500)
		return errmsg_rc(-EINVAL, err, err_len, "store: a directory of 1 to "
				 "499 bytes is needed");
	snprintf(data, sizeof(data), "%s/data.mdb", dir);
	if (stat(dir, &st) < 0 && errno == ENOENT)
		return 0;
	if (stat(data, &st) < 0 && errno == ENOENT)
		return 0;
	int rc = check_store_dir(dir, err, err_len);
	if (rc < 0)
		return rc;
	/* The daemon peeks just before it opens the store for writing: a file
	 * ending before its last page is extended here as store_open would,
	 * not refused as store_check refuses it (stress.reboot_none met a
	 * start that peek refused after f80509f). */
	if ((rc = precheck(data, true, err, err_len)) < 0)
		return rc;
	MDB_env *env;
	MDB_dbi dbis[4];
	rc = open_env(dir, MDB_RDONLY, &env, dbis, err, err_len);
	if (rc == -ENOENT)
		return 0; /* no tables yet */
	if (rc < 0)
		return rc;
	MDB_txn *txn;
	rc = mdb_txn_begin(env, NULL, MDB_RDONLY, &txn);
	if (rc == 0) {
		MDB_stat ms;
		static const char key[] = "origin";
		MDB_val k = {sizeof(key) - 1, (void *)key}, v;
		rc = mdb_stat(txn, dbis[1], &ms);
		if (rc == 0)
			*has_state = ms.ms_entries > 0;
		int grc = rc == 0 ? mdb_get(txn, dbis[0], &k, &v) : rc;
		if (grc == 0) {
			uint64_t sum = 0;
			size_t n = v.mv_size >= CHECKSUM_BYTES ? v.mv_size - CHECKSUM_BYTES
							       : 0;
			if (v.mv_size >= CHECKSUM_BYTES)
				memcpy(&sum, v.mv_data, CHECKSUM_BYTES);
			const char *text = (const char *)v.mv_data + CHECKSUM_BYTES;
			if (v.mv_size < CHECKSUM_BYTES || n >= origin_len ||
			    sum != checksum(key, sizeof(key) - 1, text, n) ||
			    memchr(text, '\0', n) != NULL) {
				mdb_txn_abort(txn);
				mdb_env_close(env);
				return errmsg_rc(-EBADMSG, err, err_len, "store %s: its "
						 "origin record is damaged", dir);
			}
			memcpy(origin, text, n);
			origin[n] = '\0';
		} else if (grc != MDB_NOTFOUND) {
			rc = grc;
		}
		mdb_txn_abort(txn);
	}
	mdb_env_close(env);
	if (rc != 0)
		return errmsg_rc(lmdb_errno(rc), err, err_len, "store %s: %s", dir,
				 mdb_strerror(rc));
	return 0;
}

void store_get_stats(const struct store *s, struct store_stats *out)
{
	out->ops = stat_read(&s->stats.ops);
	out->txns = stat_read(&s->stats.txns);
	out->syncs = stat_read(&s->stats.syncs);
	out->max_batch = stat_read(&s->stats.max_batch);
	out->full_waits = __atomic_load_n(&s->stats.full_waits, __ATOMIC_RELAXED);
	out->dropped = __atomic_load_n(&s->stats.dropped, __ATOMIC_RELAXED);
}
