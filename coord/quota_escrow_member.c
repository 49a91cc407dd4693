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
 * tick, two transactions each.
 *
 * Invariants: QE5, a slice's acknowledgement is put only after in_force
 * returned with it in the sums; QE6, a released shard's slices leave the
 * sums (in_force returned) before its keys are deleted. */
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
};

struct held_shard {
	char name[SHARD_NAME_MAX];
	struct held_slice *q; /* [n queues] */
};

struct quota_escrow_member {
	struct quota_escrow_queue *queues;
	size_t n;
	quota_escrow_in_force_fn in_force;
	void *arg;
	struct quota_escrow_round *round;
	struct quota_escrow_value *sums; /* [n] */
	struct quota_escrow_value scratch;
	struct held_shard held[SHARD_MAX];
	size_t n_held;
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
	e->round = quota_escrow_round_new();
	if (e->queues == NULL || e->sums == NULL || e->round == NULL) {
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
	free(e->queues);
	free(e);
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
