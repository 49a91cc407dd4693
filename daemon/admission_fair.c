/* Admission fair sharing in the daemon: see admission_fair_internal.h.
 *
 * Design: an array of struct afs_lq by the tree's LocalQueue index, and
 * each LocalQueue's weight copied beside it at bind time (the tree is not
 * read after), under one mutex. Kueue samples each LocalQueue on its own
 * timer (localqueue_controller.go: RequeueAfter usageSamplingInterval);
 * here one deadline samples them all at once, so that a poll that is not
 * due costs one relaxed load and a compare.
 *
 * The saver (with a store): a thread asleep on a condition that each
 * sample signals. Under the mutex it compares each LocalQueue's consumed
 * usage with what it last wrote (n x resources doubles) and encodes those
 * that changed (buffers for those only); it writes them after releasing
 * the mutex, in one LMDB write transaction. So per sampling interval: one
 * signal on a worker, one transaction, and the mutex held O(n) on the
 * saver for the compare plus O(changed) encodings. Invariant: `saved`
 * is what the store holds for index i of the tree in force, unless
 * saved_valid is false, when the next write replaces the whole table.
 */
#include "daemon/admission_fair_internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/base.h"
#include "bind/bind.h"

struct afs_ledger {
	pthread_mutex_t m;
	struct afs_settings s;
	const struct quota_tree *t; /* in force (its LocalQueues' names) */
	struct afs_config c;    /* resolved against it */
	int n;                  /* LocalQueues of the tree in force */
	struct afs_lq *lq;      /* [n] */
	int64_t *weight_milli;  /* [n] */
	/* When the next sample is due (0: none taken yet). Written under m,
	 * read without: __atomic relaxed (a hint; afsl_tick checks again
	 * under m). */
	uint64_t next_ns;
	uint64_t (*clock_ns)(void *);
	void *clock_arg;
	/* The saver (afsl_saver_start), all under m: afsl_tick counts each
	 * sample in `samples` and signals `sampled`; the saver writes when
	 * `samples_seen` lags, the LocalQueues whose consumed usage differs
	 * from `saved` (what it last wrote, [n]), or every one (the table
	 * replaced) while `saved_valid` is false: none written yet, a
	 * rebind (indices and names changed), a failed write. */
	pthread_cond_t sampled;
	uint64_t samples, samples_seen;
	double (*saved)[QUOTA_MAX_RESOURCES];
	bool saved_valid;
	bool saver_on, saver_stop;
	pthread_t saver;
	struct store *st;
	uint64_t saves; /* write transactions the saver made */
};

static uint64_t own_clock(void *arg)
{
	(void)arg;
	return now_ns();
}

/* Arrays for `t`, zeroed, weights filled. 0 or -ENOMEM. */
static int make(const struct quota_tree *t, int *n, struct afs_lq **lq,
		int64_t **w, double (**saved)[QUOTA_MAX_RESOURCES])
{
	*n = quota_n_local_queues(t);
	size_t k = *n > 0 ? (size_t)*n : 1;
	*lq = calloc(k, sizeof(**lq));
	*w = calloc(k, sizeof(**w));
	*saved = calloc(k, sizeof(**saved));
	if (*lq == NULL || *w == NULL || *saved == NULL) {
		free(*lq);
		free(*w);
		free(*saved);
		return -ENOMEM;
	}
	for (int i = 0; i < *n; i++)
		(*w)[i] = quota_local_queue_weight_milli(t, i);
	return 0;
}

struct afs_ledger *afsl_create(const struct afs_settings *s,
			       const struct quota_tree *t,
			       uint64_t (*clock_ns)(void *), void *clock_arg)
{
	struct afs_ledger *l = calloc(1, sizeof(*l));
	if (l == NULL)
		return NULL;
	if (make(t, &l->n, &l->lq, &l->weight_milli, &l->saved) < 0) {
		free(l);
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_init(&l->m, NULL);
	pthread_cond_init(&l->sampled, NULL);
	l->s = *s;
	l->t = t;
	afs_config_resolve(&l->c, s, t);
	l->clock_ns = clock_ns != NULL ? clock_ns : own_clock;
	l->clock_arg = clock_ns != NULL ? clock_arg : NULL;
	return l;
}

void afsl_destroy(struct afs_ledger *l)
{
	if (l == NULL)
		return;
	afsl_saver_stop(l);
	pthread_cond_destroy(&l->sampled);
	pthread_mutex_destroy(&l->m);
	free(l->lq);
	free(l->weight_milli);
	free(l->saved);
	free(l);
}

void afsl_admit(struct afs_ledger *l, int lq, const int64_t *charge)
{
	pthread_mutex_lock(&l->m);
	if (lq >= 0 && lq < l->n)
		afs_admit(&l->c, &l->lq[lq], charge);
	pthread_mutex_unlock(&l->m);
}

void afsl_live(struct afs_ledger *l, int lq, const int64_t *charge)
{
	pthread_mutex_lock(&l->m);
	if (lq >= 0 && lq < l->n) {
		struct afs_config nopen = l->c;
		nopen.half_life_ns = 0; /* alpha 0: no entry penalty */
		afs_admit(&nopen, &l->lq[lq], charge);
	}
	pthread_mutex_unlock(&l->m);
}

void afsl_release(struct afs_ledger *l, int lq, const int64_t *charge)
{
	pthread_mutex_lock(&l->m);
	if (lq >= 0 && lq < l->n)
		afs_release(&l->c, &l->lq[lq], charge);
	pthread_mutex_unlock(&l->m);
}

void afsl_tick(struct afs_ledger *l)
{
	uint64_t now = l->clock_ns(l->clock_arg);
	/* Relaxed: a hint, partner of the store below; checked under m. */
	uint64_t next = __atomic_load_n(&l->next_ns, __ATOMIC_RELAXED);
	if (next != 0 && now < next)
		return;
	pthread_mutex_lock(&l->m);
	if (l->next_ns == 0 || now >= l->next_ns) {
		for (int i = 0; i < l->n; i++)
			afs_sample(&l->c, &l->lq[i], now);
		uint64_t due = now + l->c.sampling_ns;
		/* Relaxed: partner of the load above. */
		__atomic_store_n(&l->next_ns, due != 0 ? due : 1, __ATOMIC_RELAXED);
		l->samples++;
		if (l->saver_on)
			pthread_cond_signal(&l->sampled); /* the write is the saver's */
	}
	pthread_mutex_unlock(&l->m);
}

double afsl_usage(struct afs_ledger *l, int lq)
{
	double u = 0.0;
	pthread_mutex_lock(&l->m);
	if (lq >= 0 && lq < l->n)
		u = afs_usage(&l->c, &l->lq[lq], l->weight_milli[lq]);
	pthread_mutex_unlock(&l->m);
	return u;
}

int afsl_rebind(struct afs_ledger *l, const struct quota_tree *t)
{
	int n;
	struct afs_lq *lq;
	int64_t *w;
	double (*saved)[QUOTA_MAX_RESOURCES];
	int rc = make(t, &n, &lq, &w, &saved);
	pthread_mutex_lock(&l->m);
	if (rc == 0) {
		/* The old tree (l->t) is the caller's until it returns. */
		int res[QUOTA_MAX_RESOURCES];
		for (int r = 0; r < l->c.n_resources; r++)
			res[r] = quota_resource_find(t, quota_resource_name(l->t, r));
		for (int i = 0; i < l->n; i++) {
			const char *ns, *name;
			quota_local_queue_name(l->t, i, &ns, &name);
			int now = quota_local_queue_index(t, ns, name);
			if (now < 0)
				continue; /* deleted: its usage goes with it */
			lq[now].last_ns = l->lq[i].last_ns;
			for (int r = 0; r < l->c.n_resources; r++)
				if (res[r] >= 0) {
					lq[now].consumed[res[r]] = l->lq[i].consumed[r];
					lq[now].live[res[r]] = l->lq[i].live[r];
				}
		}
	} else {
		/* Nothing to index the new tree by: an empty table. */
		n = 0;
		lq = NULL;
		w = NULL;
		saved = NULL;
	}
	free(l->lq);
	free(l->weight_milli);
	free(l->saved);
	l->lq = lq;
	l->weight_milli = w;
	l->saved = saved;
	l->n = n;
	l->t = t;
	l->saved_valid = false; /* the saver's next write: the whole table */
	afs_config_resolve(&l->c, &l->s, t);
	pthread_mutex_unlock(&l->m);
	return rc;
}

/* The wall clock, ns: what a record keeps across a reboot (the monotonic
 * clock starts again). */
static uint64_t wall_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Records of a save, encoded under m and written after it. */
struct afs_batch {
	struct store_blob *b; /* [n] */
	size_t n;
	uint8_t *buf;
	char *keys;
	struct store_afs *a; /* scratch */
};

/* A record is at most 12 + 2 x (2 + 253) + 16 x (2 + 253 + 8). */
enum { AFS_REC_MAX = 12 + 2 * 255 + STORE_AFS_RESOURCES * 263,
       AFS_KEY_MAX = STORE_AFS_NAMESPACE_MAX + 1 + STORE_AFS_NAME_MAX };

static void batch_free(struct afs_batch *bt)
{
	free(bt->a);
	free(bt->keys);
	free(bt->buf);
	free(bt->b);
	memset(bt, 0, sizeof(*bt));
}

/* Under m: the records of every LocalQueue (`all`), or of those whose
 * consumed usage differs from what was last saved, encoded and stamped
 * with the wall clock; `saved` updated to them. 0, or -ENOMEM or -E2BIG
 * with a message (bt freed). */
static int batch_make(struct afs_ledger *l, bool all, struct afs_batch *bt,
		      char *err, size_t err_len)
{
	memset(bt, 0, sizeof(*bt));
	size_t bytes = (size_t)l->c.n_resources * sizeof(double);
	size_t n = 0; /* the records to write: buffers for those only */
	for (int i = 0; i < l->n; i++)
		n += all || memcmp(l->saved[i], l->lq[i].consumed, bytes) != 0;
	if (n == 0)
		n = 1;
	bt->b = calloc(n, sizeof(*bt->b));
	bt->buf = malloc(n * AFS_REC_MAX);
	bt->keys = malloc(n * AFS_KEY_MAX);
	bt->a = malloc(sizeof(*bt->a));
	if (bt->b == NULL || bt->buf == NULL || bt->keys == NULL || bt->a == NULL) {
		batch_free(bt);
		return errmsg_rc(-ENOMEM, err, err_len, "admission usage: out of memory");
	}
	uint64_t now = wall_ns();
	for (int i = 0; i < l->n; i++) {
		if (!all && memcmp(l->saved[i], l->lq[i].consumed, bytes) == 0)
			continue;
		const char *ns, *name;
		quota_local_queue_name(l->t, i, &ns, &name);
		struct store_afs *a = bt->a;
		memset(a, 0, sizeof(*a));
		snprintf(a->ns, sizeof(a->ns), "%s", ns);
		snprintf(a->name, sizeof(a->name), "%s", name);
		a->last_ns = now;
		for (int r = 0; r < l->c.n_resources && r < STORE_AFS_RESOURCES; r++) {
			snprintf(a->resource[a->n], sizeof(a->resource[a->n]), "%s",
				 quota_resource_name(l->t, r));
			a->consumed[a->n++] = l->lq[i].consumed[r];
		}
		uint8_t *rec = bt->buf + bt->n * AFS_REC_MAX;
		char *key = bt->keys + bt->n * AFS_KEY_MAX;
		int len = store_encode_afs(a, rec, AFS_REC_MAX);
		int klen = snprintf(key, AFS_KEY_MAX, "%s/%s", ns, name);
		if (len < 0 || klen <= 0 || klen >= AFS_KEY_MAX) {
			batch_free(bt);
			return errmsg_rc(-E2BIG, err, err_len, "admission usage of "
					 "LocalQueue %s/%s: does not fit", ns, name);
		}
		bt->b[bt->n++] = (struct store_blob){key, (size_t)klen, rec, (size_t)len};
		memcpy(l->saved[i], l->lq[i].consumed, bytes);
	}
	return 0;
}

int afsl_save(struct afs_ledger *l, struct store *st, char *err, size_t err_len)
{
	struct afs_batch bt;
	pthread_mutex_lock(&l->m);
	int rc = batch_make(l, true, &bt, err, err_len);
	pthread_mutex_unlock(&l->m);
	if (rc == 0)
		rc = store_replace_afs(st, bt.b, bt.n, err, err_len);
	batch_free(&bt);
	return rc;
}

static void *saver_main(void *arg)
{
	struct afs_ledger *l = arg;
	char err[512];
	bool warned = false;
	pthread_mutex_lock(&l->m);
	for (;;) {
		while (!l->saver_stop && l->samples_seen == l->samples)
			pthread_cond_wait(&l->sampled, &l->m);
		if (l->saver_stop)
			break;
		l->samples_seen = l->samples;
		bool all = !l->saved_valid;
		struct afs_batch bt;
		int rc = batch_make(l, all, &bt, err, sizeof(err));
		l->saved_valid = rc == 0;
		pthread_mutex_unlock(&l->m);
		/* One write transaction, off the workers: only what changed,
		 * or the whole table (stale LocalQueues' records dropped). */
		bool wrote = false;
		if (rc == 0 && (all || bt.n > 0)) {
			rc = all ? store_replace_afs(l->st, bt.b, bt.n, err, sizeof(err))
				 : store_put_afs(l->st, bt.b, bt.n, err, sizeof(err));
			wrote = rc == 0;
		}
		batch_free(&bt);
		if (rc < 0 && !warned)
			log_msg(LOG_LEVEL_WARN, "admission fair sharing: its usage "
				"not saved at this sample (tried again at the next; "
				"a restart now would begin from an older record): %s",
				err);
		else if (rc == 0 && warned)
			log_msg(LOG_LEVEL_INFO, "admission fair sharing: its usage "
				"saved again");
		warned = rc < 0;
		pthread_mutex_lock(&l->m);
		if (rc < 0)
			l->saved_valid = false; /* the next write: everything */
		if (wrote)
			l->saves++;
	}
	pthread_mutex_unlock(&l->m);
	return NULL;
}

int afsl_saver_start(struct afs_ledger *l, struct store *st, char *err,
		     size_t err_len)
{
	pthread_mutex_lock(&l->m);
	l->st = st;
	l->saver_stop = false;
	l->saved_valid = false;
	l->samples_seen = l->samples;
	int rc = pthread_create(&l->saver, NULL, saver_main, l);
	l->saver_on = rc == 0;
	pthread_mutex_unlock(&l->m);
	if (rc != 0)
		return errmsg_rc(-rc, err, err_len, "admission fair sharing: "
				 "cannot start the thread that saves its usage: %s",
				 strerror(rc));
	return 0;
}

void afsl_saver_stop(struct afs_ledger *l)
{
	if (l == NULL)
		return;
	pthread_mutex_lock(&l->m);
	bool on = l->saver_on;
	l->saver_stop = true;
	l->saver_on = false;
	pthread_cond_signal(&l->sampled);
	pthread_mutex_unlock(&l->m);
	if (on)
		pthread_join(l->saver, NULL);
}

uint64_t afsl_saves(struct afs_ledger *l)
{
	pthread_mutex_lock(&l->m);
	uint64_t n = l->saves;
	pthread_mutex_unlock(&l->m);
	return n;
}

struct afs_load {
	struct afs_ledger *l;
	struct store_afs a;
	uint64_t now;
	uint64_t loaded, skipped;
	char *err;
	size_t err_len;
};

static int load_one(void *arg, const void *blob, size_t len)
{
	struct afs_load *ld = arg;
	struct afs_ledger *l = ld->l;
	int rc = store_decode_afs(blob, len, &ld->a, ld->err, ld->err_len);
	if (rc < 0)
		return rc;
	int lq = quota_local_queue_index(l->t, ld->a.ns, ld->a.name);
	if (lq < 0 || lq >= l->n) {
		ld->skipped++; /* a LocalQueue no longer in the file */
		return 0;
	}
	struct afs_lq *q = &l->lq[lq];
	for (unsigned k = 0; k < ld->a.n; k++) {
		int r = quota_resource_find(l->t, ld->a.resource[k]);
		if (r >= 0 && r < l->c.n_resources)
			q->consumed[r] = ld->a.consumed[k];
	}
	/* The time the daemon was down decays it toward what its resumed
	 * placements hold, as Kueue's first reconcile decays by the time
	 * since its status' lastUpdate. */
	uint64_t down = ld->now > ld->a.last_ns ? ld->now - ld->a.last_ns : 0;
	if (l->c.half_life_ns == 0) {
		memset(q->consumed, 0, sizeof(q->consumed));
	} else {
		double alpha = afs_alpha(down, l->c.half_life_ns);
		for (int r = 0; r < l->c.n_resources; r++)
			q->consumed[r] = q->consumed[r] * (1.0 - alpha) +
					 (double)q->live[r] * alpha;
	}
	ld->loaded++;
	return 0;
}

int afsl_load(struct afs_ledger *l, struct store *st, uint64_t *loaded,
	      uint64_t *skipped, char *err, size_t err_len)
{
	struct afs_load *ld = calloc(1, sizeof(*ld));
	if (ld == NULL)
		return errmsg_rc(-ENOMEM, err, err_len, "admission usage: out of memory");
	ld->l = l;
	ld->now = wall_ns();
	ld->err = err;
	ld->err_len = err_len;
	pthread_mutex_lock(&l->m);
	int rc = store_load_afs(st, load_one, ld, err, err_len);
	pthread_mutex_unlock(&l->m);
	*loaded = ld->loaded;
	*skipped = ld->skipped;
	free(ld);
	return rc;
}
