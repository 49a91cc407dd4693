/* Quota by escrow, the coordinator's arithmetic: see coord/quota_escrow.h.
 *
 * Design: every step is a sum, a cut or a fill over at most
 * QUOTA_ESCROW_MAX shards. A cut (take `amount` from the largest first)
 * and a fill (give `amount` to the smallest first) find the level with a
 * binary search over the quantity's range (at most 55 rounds of n), then
 * hand out the remainder, one unit each, in shard order: the same answer
 * as moving one unit at a time, in O(55 n) whatever the amount (memory is
 * counted in bytes). Quantities are at most 2^54 so that a sum of 256 of
 * them fits an int64 with room: no sum here overflows.
 */
#include "coord/quota_escrow.h"

#include <errno.h>

static int64_t max64(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

static int64_t min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

static int64_t sum_of(const int64_t *x, size_t n)
{
	int64_t s = 0;
	for (size_t i = 0; i < n; i++)
		s += x[i];
	return s;
}

void quota_escrow_split(int64_t nominal, size_t n, int64_t *out)
{
	int64_t base = nominal / (int64_t)n, extra = nominal % (int64_t)n;
	for (size_t i = 0; i < n; i++)
		out[i] = base + ((int64_t)i < extra);
}

/* sum of max(0, x - level) */
static int64_t above(const int64_t *x, size_t n, int64_t level)
{
	int64_t s = 0;
	for (size_t i = 0; i < n; i++)
		s += x[i] > level ? x[i] - level : 0;
	return s;
}

void quota_escrow_cut(const int64_t *x, size_t n, int64_t amount, int64_t *cut)
{
	int64_t hi = 0;
	for (size_t i = 0; i < n; i++)
		hi = max64(hi, x[i]);
	/* The lowest level whose excess is within the amount. */
	int64_t lo = 0;
	while (lo < hi) {
		int64_t mid = lo + (hi - lo) / 2;
		if (above(x, n, mid) <= amount)
			hi = mid;
		else
			lo = mid + 1;
	}
	int64_t rem = amount - above(x, n, lo);
	/* One level lower takes more than the amount: more shards reach
	 * level lo than units remain (rem > 0 only when lo > 0). */
	for (size_t i = 0; i < n; i++) {
		cut[i] = x[i] > lo ? x[i] - lo : 0;
		if (rem > 0 && x[i] >= lo && lo > 0) {
			cut[i]++;
			rem--;
		}
	}
}

/* sum of min(need, level) */
static int64_t below(const int64_t *need, size_t n, int64_t level)
{
	int64_t s = 0;
	for (size_t i = 0; i < n; i++)
		s += min64(need[i], level);
	return s;
}

void quota_escrow_fill(const int64_t *need, size_t n, int64_t amount, int64_t *give)
{
	int64_t hi = 0;
	for (size_t i = 0; i < n; i++)
		hi = max64(hi, need[i]);
	/* The highest level whose fill is within the amount. */
	int64_t lo = 0;
	while (lo < hi) {
		int64_t mid = lo + (hi - lo + 1) / 2;
		if (below(need, n, mid) <= amount)
			lo = mid;
		else
			hi = mid - 1;
	}
	int64_t rem = amount - below(need, n, lo);
	/* One level higher gives more than the amount: more shards need
	 * more than lo than units remain. */
	for (size_t i = 0; i < n; i++) {
		give[i] = min64(need[i], lo);
		if (rem > 0 && need[i] > lo) {
			give[i]++;
			rem--;
		}
	}
}

static bool in_range(int64_t v)
{
	return v >= 0 && v <= QUOTA_ESCROW_QUANTITY_MAX;
}

static bool valid(int64_t nominal, size_t n, const struct quota_escrow_shard *in)
{
	if (n == 0 || n > QUOTA_ESCROW_MAX || !in_range(nominal))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!in_range(in[i].granted) || !in_range(in[i].use) || !in_range(in[i].want) ||
		    (in[i].acked && !in_range(in[i].acked_value)))
			return false;
	return true;
}

int quota_escrow_target(int64_t nominal, size_t n, const struct quota_escrow_shard *in,
			int64_t *out)
{
	if (!valid(nominal, n, in))
		return -EINVAL;
	int64_t slack[QUOTA_ESCROW_MAX] = {0}, cut[QUOTA_ESCROW_MAX] = {0};
	int64_t need[QUOTA_ESCROW_MAX] = {0};
	/* 1. What each holds: its slice, or its use when over. */
	for (size_t i = 0; i < n; i++)
		out[i] = max64(in[i].granted, in[i].use);
	/* 2. Over the nominal: the room above use first, then the slices. */
	int64_t over = sum_of(out, n) - nominal;
	if (over > 0) {
		for (size_t i = 0; i < n; i++)
			slack[i] = out[i] - in[i].use;
		int64_t take = min64(over, sum_of(slack, n));
		quota_escrow_cut(slack, n, take, cut);
		for (size_t i = 0; i < n; i++)
			out[i] -= cut[i];
		over -= take;
		if (over > 0) {
			quota_escrow_cut(out, n, over, cut);
			for (size_t i = 0; i < n; i++)
				out[i] -= cut[i];
		}
	}
	int64_t pool = nominal - sum_of(out, n);
	/* 3. To the shards that want more: the room no slice holds, then
	 * the room above use of those that want nothing more. */
	for (size_t i = 0; i < n; i++)
		need[i] = in[i].want > out[i] ? in[i].want - out[i] : 0;
	int64_t needed = sum_of(need, n);
	if (needed > 0) {
		int64_t given = min64(pool, needed);
		pool -= given;
		if (given < needed) {
			for (size_t i = 0; i < n; i++)
				slack[i] = need[i] == 0 && out[i] > in[i].use ? out[i] - in[i].use : 0;
			int64_t take = min64(needed - given, sum_of(slack, n));
			quota_escrow_cut(slack, n, take, cut);
			for (size_t i = 0; i < n; i++)
				out[i] -= cut[i];
			given += take;
		}
		quota_escrow_fill(need, n, given, cut);
		for (size_t i = 0; i < n; i++)
			out[i] += cut[i];
	}
	/* 4. Room nobody holds or wants: first up to the even split (so a
	 * round written in parts aims at the same slices), then evenly. */
	if (pool > 0) {
		quota_escrow_split(nominal, n, slack);
		for (size_t i = 0; i < n; i++)
			need[i] = slack[i] > out[i] ? slack[i] - out[i] : 0;
		int64_t given = min64(pool, sum_of(need, n));
		quota_escrow_fill(need, n, given, cut);
		for (size_t i = 0; i < n; i++)
			out[i] += cut[i];
		pool -= given;
	}
	if (pool > 0) {
		quota_escrow_split(pool, n, cut);
		for (size_t i = 0; i < n; i++)
			out[i] += cut[i];
	}
	return 0;
}

int64_t quota_escrow_hold(const struct quota_escrow_shard *s)
{
	if (!s->owned || !s->acked || s->acked_current)
		return s->granted;
	return max64(s->granted, s->acked_value);
}

bool quota_escrow_settled(const struct quota_escrow_shard *s)
{
	return !s->owned || (s->acked && s->acked_current);
}

int quota_escrow_plan(int64_t nominal, size_t n, const struct quota_escrow_shard *in,
		      const int64_t *target, int64_t *write)
{
	if (!valid(nominal, n, in))
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (!in_range(target[i]))
			return -EINVAL;
	int64_t total = 0;
	int writes = 0;
	/* Phase one: shrinks; an owned shard's room is freed only by its
	 * acknowledgement, an unowned one's at once. */
	for (size_t i = 0; i < n; i++) {
		write[i] = QUOTA_ESCROW_KEEP;
		int64_t hold = quota_escrow_hold(&in[i]);
		if (quota_escrow_settled(&in[i]) && target[i] < in[i].granted) {
			write[i] = target[i];
			writes++;
			if (!in[i].owned)
				hold = target[i];
		}
		total += hold;
	}
	/* Phase two: growths into the room the holds leave (QE1). */
	for (size_t i = 0; i < n; i++) {
		if (!quota_escrow_settled(&in[i]) || target[i] <= in[i].granted)
			continue;
		int64_t delta = target[i] - in[i].granted; /* settled: hold == granted */
		if (total + delta > nominal)
			continue;
		write[i] = target[i];
		total += delta;
		writes++;
	}
	return writes;
}
