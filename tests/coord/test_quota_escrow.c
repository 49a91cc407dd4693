/* tests/coord: quota by escrow (coord/quota_escrow.h), the coordinator's
 * arithmetic and its two-phase protocol.
 *
 * cut_and_fill_match_units: the level cut and fill against moving one
 * unit at a time (every small case).
 * target_matches_unit_model: quota_escrow_target against a model that
 * moves one unit at a time (random small cases), and its bounds (QE3).
 * target_large_and_stable: quantities near the bound, and a target fed
 * back as the slices with nothing wanted is unchanged.
 * protocol_keeps_qe1: a model of etcd's keys (slices, owners,
 * acknowledgements with revisions and versions), a coordinator that
 * reads, plans and writes in a transaction compared against the keys it
 * read of the shards it writes (and may crash between its read and its
 * write, or between the two phases), hosts that take, read (possibly stale), apply, acknowledge,
 * release, crash and have their leases expire, in random order: QE1
 * (what live hosts admit against sums to at most the nominal) and the
 * soundness of quota_escrow_hold checked after every step; then, with
 * every host alive and nothing crashing, the slices reach the target and
 * the hosts admit against all of the nominal.
 * invalid_inputs: -EINVAL. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "coord/coord.h"

static uint64_t rng_state;

static uint64_t rnd(void)
{
	uint64_t x = rng_state;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return rng_state = x;
}

static int64_t rnd_to(int64_t n) /* [0, n] */
{
	return (int64_t)(rnd() % (uint64_t)(n + 1));
}

static int64_t sum(const int64_t *x, size_t n)
{
	int64_t s = 0;
	for (size_t i = 0; i < n; i++)
		s += x[i];
	return s;
}

/* One unit at a time from the largest (ties: the lower index). */
static void unit_cut(const int64_t *x, size_t n, int64_t amount, int64_t *cut)
{
	int64_t left[16];
	memcpy(left, x, n * sizeof(*x));
	memset(cut, 0, n * sizeof(*cut));
	for (; amount > 0; amount--) {
		size_t b = 0;
		for (size_t i = 1; i < n; i++)
			if (left[i] > left[b])
				b = i;
		left[b]--;
		cut[b]++;
	}
}

/* One unit at a time to the smallest given of those needing more. */
static void unit_fill(const int64_t *need, size_t n, int64_t amount, int64_t *give)
{
	memset(give, 0, n * sizeof(*give));
	for (; amount > 0; amount--) {
		size_t b = n;
		for (size_t i = 0; i < n; i++)
			if (give[i] < need[i] && (b == n || give[i] < give[b]))
				b = i;
		give[b]++;
	}
}

static void cut_and_fill_match_units(void **state)
{
	(void)state;
	size_t cases = 0;
	for (size_t n = 1; n <= 4; n++) {
		for (int code = 0; code < 6 * 6 * 6 * 6; code++) {
			int64_t x[4], a[4], b[4];
			int c = code;
			bool beyond = false; /* a digit past n: a case of a larger n */
			for (size_t i = 0; i < 4; i++, c /= 6) {
				x[i] = c % 6;
				beyond |= i >= n && x[i] != 0;
			}
			if (beyond)
				continue;
			for (int64_t amount = 0; amount <= sum(x, n); amount++) {
				quota_escrow_cut(x, n, amount, a);
				unit_cut(x, n, amount, b);
				assert_memory_equal(a, b, n * sizeof(*a));
				quota_escrow_fill(x, n, amount, a);
				unit_fill(x, n, amount, b);
				assert_memory_equal(a, b, n * sizeof(*a));
				cases++;
			}
		}
	}
	assert_true(cases > 10000);
	int64_t out[5];
	quota_escrow_split(7, 3, out);
	assert_int_equal(out[0], 3);
	assert_int_equal(out[1], 2);
	assert_int_equal(out[2], 2);
	quota_escrow_split(0, 5, out);
	assert_int_equal(sum(out, 5), 0);
}

/* quota_escrow_target, one unit at a time. */
static void unit_target(int64_t nominal, size_t n, const struct quota_escrow_shard *in,
			int64_t *out)
{
	int64_t use[16], need[16], give[16];
	for (size_t i = 0; i < n; i++) {
		use[i] = in[i].use;
		out[i] = in[i].granted > use[i] ? in[i].granted : use[i];
	}
	while (sum(out, n) > nominal) {
		size_t b = n;
		for (size_t i = 0; i < n; i++)
			if (out[i] > use[i] && (b == n || out[i] - use[i] > out[b] - use[b]))
				b = i;
		if (b == n) /* no room above use: the largest slice */
			for (size_t i = 0; i < n; i++)
				if (b == n || out[i] > out[b])
					b = i;
		out[b]--;
	}
	int64_t pool = nominal - sum(out, n);
	for (size_t i = 0; i < n; i++) {
		need[i] = in[i].want > out[i] ? in[i].want - out[i] : 0;
		give[i] = 0;
	}
	for (;;) {
		size_t to = n;
		for (size_t i = 0; i < n; i++)
			if (give[i] < need[i] && (to == n || give[i] < give[to]))
				to = i;
		if (to == n)
			break;
		if (pool > 0) {
			pool--;
		} else {
			size_t from = n;
			for (size_t i = 0; i < n; i++)
				if (need[i] == 0 && out[i] > use[i] &&
				    (from == n || out[i] - use[i] > out[from] - use[from]))
					from = i;
			if (from == n)
				break;
			out[from]--;
		}
		give[to]++;
	}
	for (size_t i = 0; i < n; i++)
		out[i] += give[i];
	/* Up to the even share, smallest given first, then round robin. */
	int64_t even[16];
	quota_escrow_split(nominal, n, even);
	for (size_t i = 0; i < n; i++)
		give[i] = 0;
	for (; pool > 0; pool--) {
		size_t to = n;
		for (size_t i = 0; i < n; i++)
			if (out[i] + give[i] < even[i] && (to == n || give[i] < give[to]))
				to = i;
		if (to == n)
			break;
		give[to]++;
	}
	for (size_t i = 0; i < n; i++)
		out[i] += give[i];
	for (size_t i = 0; pool > 0; i = (i + 1) % n, pool--)
		out[i]++;
}

static void random_shards(size_t n, int64_t top, struct quota_escrow_shard *in)
{
	for (size_t i = 0; i < n; i++) {
		in[i] = (struct quota_escrow_shard){
			.granted = rnd_to(top),
			.use = rnd() % 3 == 0 ? 0 : rnd_to(top),
		};
		in[i].want = rnd() % 2 == 0 ? 0 : in[i].use + rnd_to(top - in[i].use);
	}
}

static void target_matches_unit_model(void **state)
{
	(void)state;
	rng_state = 0x9e3779b97f4a7c15ull;
	for (int round = 0; round < 40000; round++) {
		size_t n = 1 + (size_t)rnd_to(5);
		int64_t nominal = rnd_to(24);
		struct quota_escrow_shard in[6];
		random_shards(n, 10, in);
		int64_t out[6], model[6];
		assert_int_equal(quota_escrow_target(nominal, n, in, out), 0);
		unit_target(nominal, n, in, model);
		assert_memory_equal(out, model, n * sizeof(*out));
		/* QE3 */
		int64_t use = 0, s = sum(out, n);
		for (size_t i = 0; i < n; i++)
			use += in[i].use;
		assert_true(s <= nominal);
		if (use <= nominal) {
			assert_int_equal(s, nominal);
			for (size_t i = 0; i < n; i++)
				assert_true(out[i] >= in[i].use);
		}
	}
}

static void target_large_and_stable(void **state)
{
	(void)state;
	rng_state = 12345;
	for (int round = 0; round < 20000; round++) {
		size_t n = 1 + (size_t)rnd_to(QUOTA_ESCROW_MAX - 1);
		if (round % 2)
			n = 1 + (size_t)rnd_to(7);
		int64_t top = round % 3 == 0 ? QUOTA_ESCROW_QUANTITY_MAX : rnd_to(1000000);
		int64_t nominal = rnd_to(top);
		struct quota_escrow_shard in[QUOTA_ESCROW_MAX];
		random_shards(n, top / (int64_t)n, in);
		int64_t out[QUOTA_ESCROW_MAX], again[QUOTA_ESCROW_MAX];
		assert_int_equal(quota_escrow_target(nominal, n, in, out), 0);
		int64_t use = 0;
		for (size_t i = 0; i < n; i++)
			use += in[i].use;
		assert_true(sum(out, n) <= nominal);
		if (use > nominal)
			continue;
		assert_int_equal(sum(out, n), nominal);
		/* Fed back with nothing wanted: unchanged. */
		for (size_t i = 0; i < n; i++) {
			assert_true(out[i] >= in[i].use);
			in[i].granted = out[i];
			in[i].want = 0;
		}
		assert_int_equal(quota_escrow_target(nominal, n, in, again), 0);
		assert_memory_equal(out, again, n * sizeof(*out));
	}
	/* The first split: nothing granted, nothing used: even. */
	struct quota_escrow_shard none[3] = {{0}};
	int64_t out[3];
	assert_int_equal(quota_escrow_target(4000, 3, none, out), 0);
	assert_int_equal(out[0], 1334);
	assert_int_equal(out[1], 1333);
	assert_int_equal(out[2], 1333);
	/* One wants 3000 more: the others' room above use goes to it, never
	 * below their use. */
	none[0].use = 1334;
	none[0].want = 4334;
	none[1].use = 1000;
	none[1].granted = 1333;
	none[2].granted = 1333;
	none[0].granted = 1334;
	assert_int_equal(quota_escrow_target(4000, 3, none, out), 0);
	assert_int_equal(out[0], 3000);
	assert_int_equal(out[1], 1000);
	assert_int_equal(out[2], 0);
}

/* The protocol's model. Keys: a slice (value, revision), an owner (host
 * or -1, version), an acknowledgement (value, the slice revision it
 * acknowledges, version). */
#define PS 6
#define PH 3

struct key_state {
	int64_t grant, grant_rev;
	int owner;
	int64_t owner_ver;
	bool acked;
	int64_t ack_value, ack_rev, ack_ver;
};

struct host_state {
	bool alive, expired; /* a crashed host's keys stay until expired */
	int64_t applied[PS], applied_rev[PS]; /* -1: not admitting there */
	bool pending[PS];
	int64_t pending_value[PS], pending_rev[PS];
	bool to_ack[PS];
};

struct world {
	int64_t nominal, rev;
	size_t n;
	struct key_state k[PS];
	struct host_state h[PH];
	int64_t use[PS], want[PS];
	/* The coordinator's read, and what it will write. */
	bool planned;
	struct key_state seen[PS];
	int64_t write[PS];
	uint64_t writes, refused, acks;
};

static void shard_view(const struct world *w, const struct key_state *k, size_t s,
		       struct quota_escrow_shard *out)
{
	*out = (struct quota_escrow_shard){
		.granted = k->grant,
		.owned = k->owner >= 0,
		.acked = k->acked,
		.acked_current = k->acked && k->ack_rev == k->grant_rev,
		.acked_value = k->ack_value,
		.use = w->use[s],
		.want = w->want[s],
	};
}

static void check_qe1(const struct world *w)
{
	int64_t admitted = 0, held = 0;
	for (size_t s = 0; s < w->n; s++) {
		struct quota_escrow_shard v;
		shard_view(w, &w->k[s], s, &v);
		int64_t hold = quota_escrow_hold(&v);
		held += hold;
		for (int h = 0; h < PH; h++) {
			if (!w->h[h].alive || w->h[h].applied[s] < 0)
				continue;
			assert_int_equal(w->k[s].owner, h);
			assert_true(w->h[h].applied[s] <= hold); /* the hold is sound */
			admitted += w->h[h].applied[s];
		}
	}
	assert_true(admitted <= w->nominal); /* QE1 */
	assert_true(held <= w->nominal);
}

static void coord_read(struct world *w)
{
	struct quota_escrow_shard in[PS];
	int64_t target[PS];
	for (size_t s = 0; s < w->n; s++)
		shard_view(w, &w->k[s], s, &in[s]);
	assert_int_equal(quota_escrow_target(w->nominal, w->n, in, target), 0);
	assert_true(quota_escrow_plan(w->nominal, w->n, in, target, w->write) >= 0);
	memcpy(w->seen, w->k, sizeof(w->seen));
	w->planned = true;
}

/* One transaction, compared against the keys of the shards it writes
 * only (besides the coordinator's lease): between two coordinator writes
 * a hold can only fall (an acknowledgement of a newer revision, a
 * release, an expiry; a take keeps it), so the others' need no compare. */
static void coord_write(struct world *w)
{
	if (!w->planned)
		return;
	w->planned = false;
	for (size_t s = 0; s < w->n; s++)
		if (w->write[s] != QUOTA_ESCROW_KEEP &&
		    (w->seen[s].grant_rev != w->k[s].grant_rev ||
		    w->seen[s].owner_ver != w->k[s].owner_ver ||
		     w->seen[s].ack_ver != w->k[s].ack_ver)) {
			w->refused++;
			return;
		}
	w->rev++;
	for (size_t s = 0; s < w->n; s++)
		if (w->write[s] != QUOTA_ESCROW_KEEP) {
			w->k[s].grant = w->write[s];
			w->k[s].grant_rev = w->rev;
			w->writes++;
		}
}

static void host_stop_on(struct host_state *h, size_t s)
{
	h->applied[s] = -1;
	h->applied_rev[s] = -1;
	h->pending[s] = false;
	h->to_ack[s] = false;
}

static void drop_keys(struct world *w, size_t s)
{
	w->k[s].owner = -1;
	w->k[s].owner_ver++;
	if (w->k[s].acked) {
		w->k[s].acked = false;
		w->k[s].ack_ver++;
	}
}

static void step(struct world *w)
{
	size_t s = (size_t)rnd_to((int64_t)w->n - 1);
	struct key_state *k = &w->k[s];
	/* Mostly the shard's owner: its reads, applies and acks. */
	int h = k->owner >= 0 && rnd() % 4 != 0 ? k->owner : (int)rnd_to(PH - 1);
	struct host_state *hs = &w->h[h];
	/* Weights out of 100: the hosts' own steps most, crashes rarely. */
	static const int64_t upto[] = {12, 24, 34, 50, 66, 82, 88, 91, 95, 97, 99, 100};
	int64_t r = rnd_to(99);
	int action = 0;
	while (r >= upto[action])
		action++;
	switch (action) {
	case 0:
		coord_read(w);
		break;
	case 1:
		coord_write(w);
		break;
	case 2: /* take */
		if (hs->alive && k->owner < 0) {
			k->owner = h;
			k->owner_ver++;
			host_stop_on(hs, s);
		}
		break;
	case 3: /* read the slice (applied later: the read may be stale) */
		if (hs->alive && k->owner == h) {
			hs->pending[s] = true;
			hs->pending_value[s] = k->grant;
			hs->pending_rev[s] = k->grant_rev;
		}
		break;
	case 4: /* apply what was read, never an older revision (QE4) */
		if (hs->alive && k->owner == h && hs->pending[s] &&
		    hs->pending_rev[s] > hs->applied_rev[s]) {
			hs->applied[s] = hs->pending_value[s];
			hs->applied_rev[s] = hs->pending_rev[s];
			hs->pending[s] = false;
			hs->to_ack[s] = true;
		}
		break;
	case 5: /* acknowledge what is applied, fenced by LEASE(owner) */
		if (hs->alive && k->owner == h && hs->to_ack[s]) {
			k->acked = true;
			k->ack_value = hs->applied[s];
			k->ack_rev = hs->applied_rev[s];
			k->ack_ver++;
			hs->to_ack[s] = false;
			w->acks++;
		}
		break;
	case 6: /* use and wants change (reported by the owners) */
		w->use[s] = rnd_to(w->nominal / 2);
		w->want[s] = rnd() % 2 ? 0 : w->use[s] + rnd_to(w->nominal);
		break;
	case 7: /* the coordinator crashes: its read is lost */
		w->planned = false;
		break;
	case 8: /* release: stop admitting, then delete owner and ack */
		if (hs->alive && k->owner == h) {
			host_stop_on(hs, s);
			drop_keys(w, s);
		}
		break;
	case 9: /* crash (or stop): admits nothing from now (the gate) */
		if (hs->alive) {
			hs->alive = false;
			hs->expired = false;
			for (size_t i = 0; i < w->n; i++)
				host_stop_on(hs, i);
		}
		break;
	case 10: /* a crashed host's lease expires: its keys go */
		if (!hs->alive && !hs->expired) {
			hs->expired = true;
			for (size_t i = 0; i < w->n; i++)
				if (w->k[i].owner == h)
					drop_keys(w, i);
		}
		break;
	case 11: /* an expired host joins again */
		if (!hs->alive && hs->expired)
			hs->alive = true;
		break;
	}
	check_qe1(w);
}

static void protocol_keeps_qe1(void **state)
{
	(void)state;
	rng_state = 0xdeadbeefcafef00dull;
	uint64_t writes = 0, refused = 0, acks = 0;
	for (int run = 0; run < 3000; run++) {
		struct world w = {.nominal = rnd_to(40), .n = 1 + (size_t)rnd_to(PS - 1)};
		for (size_t s = 0; s < PS; s++)
			w.k[s].owner = -1;
		for (int h = 0; h < PH; h++) {
			w.h[h].alive = true;
			for (size_t s = 0; s < PS; s++)
				host_stop_on(&w.h[h], s);
		}
		for (int i = 0; i < 400; i++)
			step(&w);
		/* Calm: every host alive, every shard owned, the use fixed. */
		for (int h = 0; h < PH; h++)
			if (!w.h[h].alive) {
				w.h[h].alive = true;
				for (size_t s = 0; s < w.n; s++)
					if (w.k[s].owner == h)
						drop_keys(&w, s);
			}
		for (size_t s = 0; s < w.n; s++) {
			if (w.k[s].owner < 0) {
				w.k[s].owner = (int)(s % PH);
				w.k[s].owner_ver++;
			}
			w.want[s] = 0;
			if (sum(w.use, w.n) > w.nominal)
				w.use[s] = 0;
		}
		for (int round = 0; round < 8; round++) {
			coord_read(&w);
			coord_write(&w);
			check_qe1(&w);
			for (size_t s = 0; s < w.n; s++) {
				struct host_state *hs = &w.h[w.k[s].owner];
				hs->pending[s] = true;
				hs->pending_value[s] = w.k[s].grant;
				hs->pending_rev[s] = w.k[s].grant_rev;
				if (hs->pending_rev[s] > hs->applied_rev[s]) {
					hs->applied[s] = w.k[s].grant;
					hs->applied_rev[s] = w.k[s].grant_rev;
				}
				hs->pending[s] = false;
				w.k[s].acked = true;
				w.k[s].ack_value = hs->applied[s];
				w.k[s].ack_rev = hs->applied_rev[s];
				w.k[s].ack_ver++;
				check_qe1(&w);
			}
		}
		/* Reached: the target, all of the nominal, admitted against. */
		struct quota_escrow_shard in[PS];
		int64_t target[PS], admitted = 0;
		for (size_t s = 0; s < w.n; s++)
			shard_view(&w, &w.k[s], s, &in[s]);
		assert_int_equal(quota_escrow_target(w.nominal, w.n, in, target), 0);
		for (size_t s = 0; s < w.n; s++) {
			assert_int_equal(w.k[s].grant, target[s]);
			admitted += w.h[w.k[s].owner].applied[s];
		}
		assert_int_equal(admitted, w.nominal);
		writes += w.writes;
		refused += w.refused;
		acks += w.acks;
	}
	/* The model did move slices, and lost races. */
	print_message("writes %llu, refused %llu, acks %llu\n", (unsigned long long)writes,
		      (unsigned long long)refused, (unsigned long long)acks);
	assert_true(writes > 10000);
	assert_true(refused > 1000);
	assert_true(acks > 3000);
}

static void invalid_inputs(void **state)
{
	(void)state;
	struct quota_escrow_shard in[2] = {{.granted = 1}, {.use = 2}};
	int64_t out[2], target[2] = {0, 0};
	assert_int_equal(quota_escrow_target(4, 0, in, out), -EINVAL);
	assert_int_equal(quota_escrow_target(-1, 2, in, out), -EINVAL);
	assert_int_equal(quota_escrow_target(QUOTA_ESCROW_QUANTITY_MAX + 1, 2, in, out), -EINVAL);
	assert_int_equal(quota_escrow_target(4, QUOTA_ESCROW_MAX + 1, in, out), -EINVAL);
	in[1].use = -1;
	assert_int_equal(quota_escrow_target(4, 2, in, out), -EINVAL);
	assert_int_equal(quota_escrow_plan(4, 2, in, target, out), -EINVAL);
	in[1].use = 0;
	target[1] = -5;
	assert_int_equal(quota_escrow_plan(4, 2, in, target, out), -EINVAL);
	target[1] = 3;
	/* Unowned: the shrink and the growth in one transaction. */
	assert_int_equal(quota_escrow_plan(3, 2, in, target, out), 2);
	/* Owned and acknowledged: the growth waits for the shrink's ack. */
	in[0].owned = in[0].acked = in[0].acked_current = true;
	in[0].acked_value = 1;
	assert_int_equal(quota_escrow_plan(3, 2, in, target, out), 1);
	assert_int_equal(out[0], 0);
	assert_int_equal(out[1], QUOTA_ESCROW_KEEP);
	/* Owned, acknowledged at an older slice: nothing written there. */
	in[0].acked_current = false;
	in[0].acked_value = 3;
	assert_int_equal(quota_escrow_hold(&in[0]), 3);
	assert_false(quota_escrow_settled(&in[0]));
	assert_int_equal(quota_escrow_plan(3, 2, in, target, out), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(cut_and_fill_match_units),
		cmocka_unit_test(target_matches_unit_model),
		cmocka_unit_test(target_large_and_stable),
		cmocka_unit_test(protocol_keeps_qe1),
		cmocka_unit_test(invalid_inputs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
