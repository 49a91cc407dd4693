/* Node leases: see lease_internal.h.
 *
 * The table: open addressing on the interned name (linear probing, a
 * power-of-two capacity at most half full, doubled when it would be
 * more), one entry per node that ever renewed. Entries are never removed:
 * a removed node's entry stays (its name may come back; its next renewal
 * makes it Ready), bounded by the names the intern table holds.
 *
 * The rule, as Kubernetes' node lifecycle controller has it
 * (pkg/controller/nodelifecycle/node_lifecycle_controller.go,
 * tryUpdateNodeHealth: Unknown when nc.now().After(nodeHealth.probeTimestamp
 * .Add(gracePeriod)), a renewed lease setting probeTimestamp to now):
 * Unknown strictly after the grace period, never at it.
 *
 * Cost: a renewal O(1) expected; lease_expire O(capacity), run once per
 * tick (a second) by the daemon.
 */
#include "daemon/lease_internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "base/base.h"

struct lease_entry {
	uint32_t name;       /* 0: empty */
	int32_t state;       /* LEASE_READY or LEASE_UNKNOWN */
	uint64_t renewed_ns; /* the clock at the last renewal */
	uint64_t unknown_ns; /* the clock when it went Unknown */
	bool tainted;        /* Unknown, and its zone let the taint through */
};

struct lease_table {
	pthread_mutex_t mu;
	uint64_t grace_ns;
	uint64_t (*clock_ns)(void *);
	void *clock_arg;
	struct lease_entry *e; /* [cap] */
	uint32_t cap, n, unknown, tainted;
};

#define LEASE_CAP0 64u

struct lease_table *lease_create(uint64_t grace_ns, uint64_t (*clock_ns)(void *),
				 void *clock_arg)
{
	if (grace_ns == 0 || clock_ns == NULL) {
		errno = EINVAL;
		return NULL;
	}
	struct lease_table *t = calloc(1, sizeof(*t));
	if (t == NULL)
		return NULL;
	t->e = calloc(LEASE_CAP0, sizeof(*t->e));
	if (t->e == NULL) {
		free(t);
		errno = ENOMEM;
		return NULL;
	}
	t->cap = LEASE_CAP0;
	t->grace_ns = grace_ns;
	t->clock_ns = clock_ns;
	t->clock_arg = clock_arg;
	pthread_mutex_init(&t->mu, NULL);
	return t;
}

void lease_destroy(struct lease_table *t)
{
	if (t == NULL)
		return;
	pthread_mutex_destroy(&t->mu);
	free(t->e);
	free(t);
}

static uint32_t slot_of(uint32_t name, uint32_t cap)
{
	return (uint32_t)rng_hash(name) & (cap - 1);
}

/* Name's entry, or the empty one where it would go. */
static struct lease_entry *find(struct lease_entry *e, uint32_t cap, uint32_t name)
{
	uint32_t i = slot_of(name, cap);
	while (e[i].name != 0 && e[i].name != name)
		i = (i + 1) & (cap - 1);
	return &e[i];
}

static int grow(struct lease_table *t)
{
	if (t->cap > UINT32_MAX / 4)
		return -ENOMEM;
	uint32_t cap = t->cap * 2;
	struct lease_entry *e = calloc(cap, sizeof(*e));
	if (e == NULL)
		return -ENOMEM;
	for (uint32_t i = 0; i < t->cap; i++)
		if (t->e[i].name != 0)
			*find(e, cap, t->e[i].name) = t->e[i];
	free(t->e);
	t->e = e;
	t->cap = cap;
	return 0;
}

int lease_renew(struct lease_table *t, uint32_t name)
{
	if (name == 0)
		return -EINVAL;
	pthread_mutex_lock(&t->mu);
	uint64_t now = t->clock_ns(t->clock_arg);
	struct lease_entry *x = find(t->e, t->cap, name);
	int was = LEASE_UNMANAGED;
	int rc = 0;
	if (x->name == 0) {
		if ((t->n + 1) * 2 > t->cap) {
			rc = grow(t);
			if (rc < 0)
				goto unlock;
			x = find(t->e, t->cap, name);
		}
		x->name = name;
		t->n++;
	} else {
		was = x->state;
		if (was == LEASE_UNKNOWN)
			t->unknown--;
		if (x->tainted)
			t->tainted--;
	}
	x->state = LEASE_READY;
	x->tainted = false;
	x->renewed_ns = now;
	rc = was;
unlock:
	pthread_mutex_unlock(&t->mu);
	return rc;
}

unsigned lease_expire(struct lease_table *t)
{
	pthread_mutex_lock(&t->mu);
	uint64_t now = t->clock_ns(t->clock_arg);
	unsigned k = 0;
	for (uint32_t i = 0; i < t->cap; i++) {
		struct lease_entry *x = &t->e[i];
		/* renewed + grace before now; a clock behind a renewal (none
		 * is, monotonic) counts as fresh. */
		if (x->name != 0 && x->state == LEASE_READY && now > x->renewed_ns &&
		    now - x->renewed_ns > t->grace_ns) {
			x->state = LEASE_UNKNOWN;
			x->unknown_ns = now;
			t->unknown++;
			k++;
		}
	}
	pthread_mutex_unlock(&t->mu);
	return k;
}

int lease_state(struct lease_table *t, uint32_t name)
{
	if (name == 0)
		return LEASE_UNMANAGED;
	pthread_mutex_lock(&t->mu);
	const struct lease_entry *x = find(t->e, t->cap, name);
	int s = x->name == 0 ? LEASE_UNMANAGED : x->state;
	pthread_mutex_unlock(&t->mu);
	return s;
}

int lease_renew_cb(void *t, uint32_t name)
{
	int rc = lease_renew(t, name);
	return rc < LEASE_UNMANAGED ? rc : 0; /* -EINVAL, -ENOMEM: below -1 */
}

int lease_state_cb(void *arg, uint32_t name)
{
	struct lease_table *t = arg;
	if (name == 0)
		return LEASE_UNMANAGED;
	pthread_mutex_lock(&t->mu);
	const struct lease_entry *x = find(t->e, t->cap, name);
	int s = x->name == 0 ? LEASE_UNMANAGED
	      : x->tainted ? LEASE_UNKNOWN : LEASE_READY;
	pthread_mutex_unlock(&t->mu);
	return s;
}

void lease_counts(struct lease_table *t, uint32_t *leased, uint32_t *unknown)
{
	pthread_mutex_lock(&t->mu);
	*leased = t->n;
	*unknown = t->unknown;
	pthread_mutex_unlock(&t->mu);
}

uint32_t lease_tainted_count(struct lease_table *t)
{
	pthread_mutex_lock(&t->mu);
	uint32_t k = t->tainted;
	pthread_mutex_unlock(&t->mu);
	return k;
}

uint64_t lease_now(struct lease_table *t)
{
	return t->clock_ns(t->clock_arg);
}

int lease_node(struct lease_table *t, uint32_t name, bool *tainted,
	       uint64_t *unknown_ns)
{
	if (name == 0)
		return LEASE_UNMANAGED;
	pthread_mutex_lock(&t->mu);
	const struct lease_entry *x = find(t->e, t->cap, name);
	int s = LEASE_UNMANAGED;
	if (x->name != 0) {
		s = x->state;
		*tainted = x->tainted;
		*unknown_ns = x->unknown_ns;
	}
	pthread_mutex_unlock(&t->mu);
	return s;
}

int lease_set_tainted(struct lease_table *t, uint32_t name, bool tainted)
{
	if (name == 0)
		return -ENOENT;
	pthread_mutex_lock(&t->mu);
	struct lease_entry *x = find(t->e, t->cap, name);
	int rc = -ENOENT;
	if (x->name != 0 && x->state == LEASE_UNKNOWN) {
		if (x->tainted != tainted)
			t->tainted += tainted ? 1u : (uint32_t)-1;
		x->tainted = tainted;
		rc = 0;
	}
	pthread_mutex_unlock(&t->mu);
	return rc;
}

unsigned lease_untaint_all(struct lease_table *t)
{
	pthread_mutex_lock(&t->mu);
	unsigned k = 0;
	for (uint32_t i = 0; i < t->cap; i++)
		if (t->e[i].name != 0 && t->e[i].tainted) {
			t->e[i].tainted = false;
			k++;
		}
	t->tainted = 0;
	pthread_mutex_unlock(&t->mu);
	return k;
}

void lease_touch_all(struct lease_table *t)
{
	pthread_mutex_lock(&t->mu);
	uint64_t now = t->clock_ns(t->clock_arg);
	for (uint32_t i = 0; i < t->cap; i++)
		if (t->e[i].name != 0)
			t->e[i].renewed_ns = now;
	pthread_mutex_unlock(&t->mu);
}

/* The ticker: a thread that calls fn(arg) every period until stopped,
 * sleeping on a condition variable (CLOCK_MONOTONIC) so the stop wakes it
 * at once. `stop` and the wait are under `mu`. */
struct lease_ticker {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool stop;
	uint64_t period_ns;
	void (*fn)(void *);
	void *arg;
	pthread_t thread;
};

static void *ticker_main(void *p)
{
	struct lease_ticker *k = p;
	pthread_mutex_lock(&k->mu);
	while (!k->stop) {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		uint64_t ns = (uint64_t)ts.tv_nsec + k->period_ns;
		ts.tv_sec += (time_t)(ns / 1000000000u);
		ts.tv_nsec = (long)(ns % 1000000000u);
		while (!k->stop &&
		       pthread_cond_timedwait(&k->cv, &k->mu, &ts) != ETIMEDOUT)
			;
		if (k->stop)
			break;
		pthread_mutex_unlock(&k->mu);
		k->fn(k->arg);
		pthread_mutex_lock(&k->mu);
	}
	pthread_mutex_unlock(&k->mu);
	return NULL;
}

struct lease_ticker *lease_ticker_start(void (*fn)(void *), void *arg,
					uint64_t period_ns)
{
	struct lease_ticker *k = calloc(1, sizeof(*k));
	if (k == NULL)
		return NULL;
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&k->cv, &ca);
	pthread_condattr_destroy(&ca);
	pthread_mutex_init(&k->mu, NULL);
	k->fn = fn;
	k->arg = arg;
	k->period_ns = period_ns;
	int rc = pthread_create(&k->thread, NULL, ticker_main, k);
	if (rc != 0) {
		pthread_cond_destroy(&k->cv);
		pthread_mutex_destroy(&k->mu);
		free(k);
		errno = rc;
		return NULL;
	}
	return k;
}

void lease_ticker_stop(struct lease_ticker *k)
{
	if (k == NULL)
		return;
	pthread_mutex_lock(&k->mu);
	k->stop = true;
	pthread_cond_signal(&k->cv);
	pthread_mutex_unlock(&k->mu);
	pthread_join(k->thread, NULL);
	pthread_cond_destroy(&k->cv);
	pthread_mutex_destroy(&k->mu);
	free(k);
}
