/* Quota by escrow in a host's membership: see
 * coord/quota_escrow_member.h.
 *
 * Design: the owner keeps, for each owned shard and queue, the slice in
 * force (its cells' amounts, in the queue's nominal's cell order) and the
 * key revision it was read at and acknowledged at. A tick reads every
 * owned (shard, queue) slice (one range each: O(owned x queues) requests;
 * the sums and the callback only when one changed), then puts the
 * acknowledgements that are behind (one transaction each, only then).
 * The coordinator's rounds: at most QUOTA_ESCROW_MEMBER_ROUNDS queues a
 * tick, two transactions each. The use reports (QE7): one call of the
 * use function a tick (with shards held), O(held x queues x cells) to
 * attribute, and one transaction a (shard, queue) whose value changed.
 *
 * Invariants: QE5, a slice's acknowledgement is put only after in_force
 * returned with it in the sums; QE6, a released shard's slices leave the
 * sums (in_force returned) before its keys are deleted; QE7, the use
 * values put for the held shards sum, cell by cell, to the host's use
 * as told (and to its waiting pods' ask, or up to one unit a shard
 * more), and one is put only when it differs
 * from the last put there (zeros after a take: the key is absent, its
 * release or its lease's expiry deleted it). */
#include "coord/quota_escrow_member.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"

/* One queue's slice on one owned shard. */
struct held_slice {
	bool read;        /* read at least once since the take */
	bool ack_put;     /* acknowledged at `revision` */
	int64_t revision; /* the slice key's modification revision (0: absent) */
	int64_t amount[QUOTA_ESCROW_CELLS];
	/* QE7: the USE value last put (0s: none, the key absent). */
	int64_t use_put[QUOTA_ESCROW_CELLS], more_put[QUOTA_ESCROW_CELLS];
};

struct held_shard {
	char name[SHARD_NAME_MAX];
	struct held_slice *q; /* [n queues] */
};

struct quota_escrow_member {
	struct quota_escrow_queue *queues;
	size_t n;
	quota_escrow_in_force_fn in_force;
	quota_escrow_use_fn use; /* NULL: no use reports */
	void *arg;
	struct quota_escrow_round *round;
	struct quota_escrow_value *sums; /* [n] */
	struct quota_escrow_value *uses; /* [n]: the use function's */
	struct quota_escrow_value scratch;
	struct held_shard held[SHARD_MAX];
	size_t n_held;
	/* QE7's scratch: the use and ask attributed to held[i], one queue. */
	int64_t att_use[SHARD_MAX][QUOTA_ESCROW_CELLS];
	int64_t att_more[SHARD_MAX][QUOTA_ESCROW_CELLS];
	size_t next_round; /* the coordinator's next queue */
	bool untold;       /* the last tell was not put in force */
};

struct quota_escrow_member *quota_escrow_member_new(const struct quota_escrow_queue *queues,
						    size_t n, quota_escrow_in_force_fn in_force,
						    void *arg)
{
	if (n == 0 || n > QUOTA_ESCROW_MEMBER_QUEUES)
		return NULL;
	struct quota_escrow_member *e = calloc(1, sizeof(*e));
	if (e == NULL)
		return NULL;
	e->queues = malloc(n * sizeof(*queues));
	e->sums = calloc(n, sizeof(*e->sums));
	e->uses = calloc(n, sizeof(*e->uses));
	e->round = quota_escrow_round_new();
	if (e->queues == NULL || e->sums == NULL || e->uses == NULL || e->round == NULL) {
		quota_escrow_member_free(e);
		return NULL;
	}
	memcpy(e->queues, queues, n * sizeof(*queues));
	e->n = n;
	e->in_force = in_force;
	e->arg = arg;
	return e;
}

void quota_escrow_member_free(struct quota_escrow_member *e)
{
	if (e == NULL)
		return;
	for (size_t i = 0; i < e->n_held; i++)
		free(e->held[i].q);
	quota_escrow_round_free(e->round);
	free(e->sums);
	free(e->uses);
	free(e->queues);
	free(e);
}

void quota_escrow_member_set_use(struct quota_escrow_member *e, quota_escrow_use_fn use)
{
	e->use = use;
}

size_t quota_escrow_member_queues(const struct quota_escrow_member *e)
{
	return e->n;
}

const char *quota_escrow_member_queue(const struct quota_escrow_member *e, size_t i)
{
	return e->queues[i].name;
}

int quota_escrow_member_coordinate(struct quota_escrow_member *e, struct etcd_client *c,
				   const char *prefix, int64_t lease,
				   const char (*shards)[SHARD_NAME_MAX], size_t n, char *err,
				   size_t errlen)
{
	if (n == 0)
		return 0;
	if (n > QUOTA_ESCROW_ROUND_SHARDS) {
		snprintf(err, errlen, "quota by escrow: %zu shards; a round splits at most %u",
			 n, QUOTA_ESCROW_ROUND_SHARDS);
		return -E2BIG;
	}
	size_t rounds = e->n < QUOTA_ESCROW_MEMBER_ROUNDS ? e->n : QUOTA_ESCROW_MEMBER_ROUNDS;
	for (size_t k = 0; k < rounds; k++) {
		const struct quota_escrow_queue *q = &e->queues[e->next_round];
		e->next_round = (e->next_round + 1) % e->n;
		size_t writes = 0;
		int rc = quota_escrow_round_read(e->round, c, prefix, q->name, &q->nominal, shards,
						 n, &writes, err, errlen);
		bool committed = false;
		if (rc == 0 && writes > 0)
			rc = quota_escrow_round_write(e->round, c, lease, &committed, err, errlen);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static struct held_shard *held_find(struct quota_escrow_member *e, const char *name)
{
	for (size_t i = 0; i < e->n_held; i++)
		if (strcmp(e->held[i].name, name) == 0)
			return &e->held[i];
	return NULL;
}

static void held_drop(struct quota_escrow_member *e, struct held_shard *h)
{
	free(h->q);
	*h = e->held[--e->n_held];
}

/* The sums over the held shards, told: 0 once in force. */
static int tell(struct quota_escrow_member *e)
{
	for (size_t q = 0; q < e->n; q++) {
		struct quota_escrow_value *s = &e->sums[q];
		*s = e->queues[q].nominal;
		for (size_t j = 0; j < s->n; j++) {
			s->cells[j].amount = 0;
			for (size_t i = 0; i < e->n_held; i++)
				s->cells[j].amount += e->held[i].q[q].amount[j];
		}
	}
	return e->in_force != NULL ? e->in_force(e->arg, e->sums, e->n) : 0;
}

/* The value read into the held slice's amounts (the queue's cells; a
 * cell it lacks: 0). Whether they changed. */
static bool take_value(const struct quota_escrow_queue *q, const struct quota_escrow_value *v,
		       struct held_slice *h)
{
	bool changed = false;
	for (size_t j = 0; j < q->nominal.n; j++) {
		const struct quota_escrow_cell *want = &q->nominal.cells[j];
		int64_t a = 0;
		for (size_t i = 0; i < v->n; i++)
			if (strcmp(v->cells[i].flavor, want->flavor) == 0 &&
			    strcmp(v->cells[i].resource, want->resource) == 0)
				a = v->cells[i].amount;
		changed |= h->amount[j] != a;
		h->amount[j] = a;
	}
	return changed;
}

static int64_t quantity(int64_t v)
{
	return v < 0 ? 0 : v > QUOTA_ESCROW_QUANTITY_MAX ? QUOTA_ESCROW_QUANTITY_MAX : v;
}

/* The held shards' indices in name order, into at[0..n_held). */
static void held_order(const struct quota_escrow_member *e, size_t *at)
{
	for (size_t i = 0; i < e->n_held; i++) {
		size_t k = i;
		for (; k > 0 && strcmp(e->held[at[k - 1]].name, e->held[i].name) > 0; k--)
			at[k] = at[k - 1];
		at[k] = i;
	}
}

/* QE7: queue q's cell j, the host's `use` and `more`, attributed to the
 * held shards (at: their name order). The use fills each slice in force,
 * what is over them split evenly. The ask first fills each shard's room
 * above its use, so that a shard of a host that waits has nothing the
 * coordinator would take from it for another (it wants its slice), and
 * what is beyond the room is split evenly with at least 1 a shard (each
 * then wants more than it holds: none gives to a sibling, which would
 * move room inside this host for nothing, a unit a round). */
static void attribute(struct quota_escrow_member *e, const size_t *at, size_t q, size_t j,
		      int64_t use, int64_t more)
{
	int64_t split[SHARD_MAX], room = 0;
	size_t n = e->n_held;
	for (size_t k = 0; k < n; k++) {
		int64_t slice = e->held[at[k]].q[q].amount[j];
		int64_t give = use < slice ? use : slice;
		e->att_use[at[k]][j] = give;
		use -= give;
	}
	quota_escrow_split(use, n, split);
	for (size_t k = 0; k < n; k++) {
		size_t i = at[k];
		int64_t slice = e->held[i].q[q].amount[j];
		e->att_use[i][j] += split[k];
		int64_t above = slice > e->att_use[i][j] ? slice - e->att_use[i][j] : 0;
		e->att_more[i][j] = above < more - room ? above : more - room;
		room += e->att_more[i][j];
	}
	if (more <= room)
		return;
	quota_escrow_split(more - room, n, split);
	for (size_t k = 0; k < n; k++) {
		int64_t m = e->att_more[at[k]][j] + (split[k] > 0 ? split[k] : 1);
		e->att_more[at[k]][j] = quantity(m);
	}
}

/* QE7: the host's use read once, attributed, and each held (shard,
 * queue)'s value put where it changed. */
static int report_use(struct quota_escrow_member *e, struct etcd_client *c, const char *prefix,
		      int64_t lease, char *err, size_t errlen)
{
	if (e->use == NULL || e->n_held == 0)
		return 0;
	for (size_t q = 0; q < e->n; q++) {
		struct quota_escrow_value *u = &e->uses[q];
		*u = e->queues[q].nominal;
		u->kind = QUOTA_ESCROW_USE;
		for (size_t j = 0; j < u->n; j++)
			u->cells[j].amount = u->cells[j].more = 0;
	}
	int rc = e->use(e->arg, e->uses, e->n);
	if (rc < 0) {
		snprintf(err, errlen, "quota by escrow: this host's use could not be read: %s",
			 strerror(-rc));
		return rc;
	}
	size_t at[SHARD_MAX];
	held_order(e, at);
	for (size_t q = 0; rc == 0 && q < e->n; q++) {
		const struct quota_escrow_value *u = &e->uses[q];
		for (size_t j = 0; j < u->n; j++)
			attribute(e, at, q, j, quantity(u->cells[j].amount),
				  quantity(u->cells[j].more));
		for (size_t i = 0; rc == 0 && i < e->n_held; i++) {
			struct held_slice *s = &e->held[i].q[q];
			bool same = true;
			for (size_t j = 0; j < u->n && same; j++)
				same = s->use_put[j] == e->att_use[i][j] &&
				       s->more_put[j] == e->att_more[i][j];
			if (same)
				continue;
			struct quota_escrow_value *v = &e->scratch;
			*v = *u;
			for (size_t j = 0; j < v->n; j++) {
				v->cells[j].amount = e->att_use[i][j];
				v->cells[j].more = e->att_more[i][j];
			}
			bool mine = false;
			rc = quota_escrow_put_owned(c, prefix, e->queues[q].name, e->held[i].name,
						    lease, v, &mine, err, errlen);
			if (rc == 0 && mine) {
				memcpy(s->use_put, e->att_use[i], sizeof(s->use_put));
				memcpy(s->more_put, e->att_more[i], sizeof(s->more_put));
			}
		}
	}
	return rc;
}

int quota_escrow_member_owned(struct quota_escrow_member *e, struct etcd_client *c,
			      const char *prefix, int64_t lease,
			      const char (*owned)[SHARD_NAME_MAX], size_t n, char *err,
			      size_t errlen)
{
	bool changed = false;
	if (lease == 0)
		n = 0;
	/* Shards no longer owned (a lost lease) leave; new ones come in at 0. */
	for (size_t i = 0; i < e->n_held;) {
		bool still = false;
		for (size_t k = 0; k < n && !still; k++)
			still = strcmp(owned[k], e->held[i].name) == 0;
		if (still) {
			i++;
		} else {
			held_drop(e, &e->held[i]);
			changed = true;
		}
	}
	for (size_t k = 0; k < n; k++) {
		if (held_find(e, owned[k]) != NULL || e->n_held == SHARD_MAX)
			continue;
		struct held_shard *h = &e->held[e->n_held];
		h->q = calloc(e->n, sizeof(*h->q));
		if (h->q == NULL) {
			snprintf(err, errlen, "quota by escrow: out of memory");
			return -ENOMEM;
		}
		snprintf(h->name, sizeof(h->name), "%s", owned[k]);
		e->n_held++;
	}
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < e->n_held; i++) {
		struct held_shard *h = &e->held[i];
		for (size_t q = 0; rc == 0 && q < e->n; q++) {
			int64_t rev = 0;
			rc = quota_escrow_read_slice(c, prefix, e->queues[q].name, h->name,
						     &e->scratch, &rev, err, errlen);
			if (rc < 0)
				break;
			struct held_slice *s = &h->q[q];
			if (s->read && s->revision == rev)
				continue;
			changed |= take_value(&e->queues[q], &e->scratch, s);
			s->read = true;
			s->revision = rev;
			s->ack_put = false;
		}
	}
	/* QE5: in force before any acknowledgement below. Not in force:
	 * nothing acknowledged, everything read and told again next tick. */
	if ((changed || e->untold) && tell(e) != 0) {
		e->untold = true;
		for (size_t i = 0; i < e->n_held; i++)
			for (size_t q = 0; q < e->n; q++)
				e->held[i].q[q].read = false;
		if (rc == 0)
			snprintf(err, errlen, "quota by escrow: the slices could not be put in "
				 "force (nothing acknowledged)");
		return rc != 0 ? rc : -EAGAIN;
	}
	e->untold = false;
	for (size_t i = 0; rc == 0 && i < e->n_held; i++) {
		struct held_shard *h = &e->held[i];
		for (size_t q = 0; rc == 0 && q < e->n; q++) {
			struct held_slice *s = &h->q[q];
			if (!s->read || s->ack_put)
				continue;
			struct quota_escrow_value *a = &e->scratch;
			*a = e->queues[q].nominal;
			a->kind = QUOTA_ESCROW_ACK;
			a->revision = s->revision;
			for (size_t j = 0; j < a->n; j++)
				a->cells[j].amount = s->amount[j];
			bool mine = false;
			rc = quota_escrow_put_owned(c, prefix, e->queues[q].name, h->name, lease, a,
						    &mine, err, errlen);
			s->ack_put = rc == 0 && mine;
		}
	}
	if (rc == 0)
		rc = report_use(e, c, prefix, lease, err, errlen);
	return rc;
}

int quota_escrow_member_release(struct quota_escrow_member *e, struct etcd_client *c,
				const char *prefix, int64_t lease, const char *shard,
				bool *owned, char *err, size_t errlen)
{
	struct held_shard *h = held_find(e, shard);
	if (h != NULL)
		held_drop(e, h);
	/* QE6: out of force before the keys go (told even when nothing
	 * changed: a release tried again after a failed tell). */
	*owned = false;
	if (tell(e) != 0) {
		e->untold = true;
		snprintf(err, errlen, "quota by escrow: shard %s's slices could not be put out "
			 "of force (its keys kept)", shard);
		return -EAGAIN;
	}
	e->untold = false;
	const char *names[QUOTA_ESCROW_MEMBER_QUEUES];
	for (size_t q = 0; q < e->n; q++)
		names[q] = e->queues[q].name;
	return quota_escrow_release_keys(c, prefix, shard, lease, names, e->n, owned, err,
					 errlen);
}
