/* Admission fair sharing in the daemon: see admission_fair_internal.h.
 *
 * Design: an array of struct afs_lq by the tree's LocalQueue index, and
 * each LocalQueue's weight copied beside it at bind time (the tree is not
 * read after), under one mutex. Kueue samples each LocalQueue on its own
 * timer (localqueue_controller.go: RequeueAfter usageSamplingInterval);
 * here one deadline samples them all at once, so that a poll that is not
 * due costs one relaxed load and a compare.
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
};

static uint64_t own_clock(void *arg)
{
	(void)arg;
	return now_ns();
}

/* Arrays for `t`, zeroed, weights filled. 0 or -ENOMEM. */
static int make(const struct quota_tree *t, int *n, struct afs_lq **lq,
		int64_t **w)
{
	*n = quota_n_local_queues(t);
	size_t k = *n > 0 ? (size_t)*n : 1;
	*lq = calloc(k, sizeof(**lq));
	*w = calloc(k, sizeof(**w));
	if (*lq == NULL || *w == NULL) {
		free(*lq);
		free(*w);
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
	if (make(t, &l->n, &l->lq, &l->weight_milli) < 0) {
		free(l);
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_init(&l->m, NULL);
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
	pthread_mutex_destroy(&l->m);
	free(l->lq);
	free(l->weight_milli);
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
	int rc = make(t, &n, &lq, &w);
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
	}
	free(l->lq);
	free(l->weight_milli);
	l->lq = lq;
	l->weight_milli = w;
	l->n = n;
	l->t = t;
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

int afsl_save(struct afs_ledger *l, struct store *st, char *err, size_t err_len)
{
	int rc = 0;
	pthread_mutex_lock(&l->m);
	size_t n = l->n > 0 ? (size_t)l->n : 1;
	struct store_blob *b = calloc(n, sizeof(*b));
	/* A record is at most 12 + 2 x (2 + 253) + 16 x (2 + 253 + 8). */
	enum { REC_MAX = 12 + 2 * 255 + STORE_AFS_RESOURCES * 263,
	       KEY_MAX = STORE_AFS_NAMESPACE_MAX + 1 + STORE_AFS_NAME_MAX };
	uint8_t *buf = malloc(n * REC_MAX);
	char *keys = malloc(n * KEY_MAX);
	struct store_afs *a = malloc(sizeof(*a));
	if (b == NULL || buf == NULL || keys == NULL || a == NULL) {
		rc = errmsg_rc(-ENOMEM, err, err_len, "admission usage: out of memory");
		goto out;
	}
	uint64_t now = wall_ns();
	for (int i = 0; i < l->n; i++) {
		const char *ns, *name;
		quota_local_queue_name(l->t, i, &ns, &name);
		memset(a, 0, sizeof(*a));
		snprintf(a->ns, sizeof(a->ns), "%s", ns);
		snprintf(a->name, sizeof(a->name), "%s", name);
		a->last_ns = now;
		for (int r = 0; r < l->c.n_resources && r < STORE_AFS_RESOURCES; r++) {
			snprintf(a->resource[a->n], sizeof(a->resource[a->n]), "%s",
				 quota_resource_name(l->t, r));
			a->consumed[a->n++] = l->lq[i].consumed[r];
		}
		int len = store_encode_afs(a, buf + (size_t)i * REC_MAX, REC_MAX);
		int klen = snprintf(keys + (size_t)i * KEY_MAX, KEY_MAX, "%s/%s", ns, name);
		if (len < 0 || klen <= 0 || klen >= KEY_MAX) {
			rc = errmsg_rc(-E2BIG, err, err_len, "admission usage of "
				       "LocalQueue %s/%s: does not fit", ns, name);
			goto out;
		}
		b[i] = (struct store_blob){keys + (size_t)i * KEY_MAX, (size_t)klen,
					   buf + (size_t)i * REC_MAX, (size_t)len};
	}
	pthread_mutex_unlock(&l->m);
	rc = store_replace_afs(st, b, (size_t)l->n, err, err_len);
	pthread_mutex_lock(&l->m);
out:
	pthread_mutex_unlock(&l->m);
	free(a);
	free(keys);
	free(buf);
	free(b);
	return rc;
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
