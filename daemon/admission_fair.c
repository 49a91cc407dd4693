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

#include "base/base.h"

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
