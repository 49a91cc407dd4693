/* Reasons counted over nodes, and kube-scheduler's FitError message.
 *
 * What: diagnosis_add counts a filter reason for one node; diagnosis_format
 * writes "0/N nodes are available: <count> <reason>, ... ." with the
 * entries sorted byte-wise, as FitError.Error does with sort.Strings.
 *
 * Invariants: a reason with no argument is counted in by_code, an
 * "Insufficient" one in insufficient[resource], a taint one in taints[]
 * (distinct by key and value, found through slot[], an open-addressing
 * table at most half full) or, past DIAGNOSIS_MAX_TAINTS, in taints_other.
 * Every counter is the number of nodes that gave that reason.
 *
 * Cost: diagnosis_add is O(1) expected (one hash probe sequence in a table
 * at most half full). diagnosis_format never builds the reason strings in
 * memory: an entry is a list of string pieces (the count, the fixed words,
 * interned names), compared piece by piece, so it needs no buffer beyond
 * the caller's and O(r) stack for r distinct reasons; it sorts by
 * insertion, O(r^2) comparisons, fine for the cold path of a failed pod.
 */
#include "workers/diagnosis_internal.h"

#include <limits.h>
#include <stdbool.h>
#include <string.h>

static const char insufficient_prefix[] = REASON_INSUFFICIENT_PREFIX;
static const char taint_prefix[] = REASON_TAINT_PREFIX;
static const char taints_other_text[] = REASON_TAINTS_OTHER_TEXT;

void diagnosis_reset(struct diagnosis *d)
{
	memset(d, 0, sizeof(*d));
}

static inline uint32_t taint_hash(uint32_t key, uint32_t value)
{
	uint32_t h = key * UINT32_C(2654435761) ^ value * UINT32_C(2246822519);
	return h ^ (h >> 15);
}

static void add_taint(struct diagnosis *d, uint32_t key, uint32_t value)
{
	uint32_t i = taint_hash(key, value) & (DIAGNOSIS_TAINT_SLOTS - 1);

	for (;; i = (i + 1) & (DIAGNOSIS_TAINT_SLOTS - 1)) {
		uint16_t s = d->slot[i];
		if (s == 0)
			break;
		struct diagnosis_taint *t = &d->taints[s - 1];
		if (t->key == key && t->value == value) {
			t->count++;
			return;
		}
	}
	/* Not seen yet, and slot i is free (the table is never more than
	 * half full, so the probe above always ends). */
	if (d->n_taints == DIAGNOSIS_MAX_TAINTS) {
		d->taints_other++;
		return;
	}
	d->taints[d->n_taints] = (struct diagnosis_taint){key, value, 1};
	d->slot[i] = (uint16_t)(++d->n_taints);
}

void diagnosis_add(struct diagnosis *d, const struct reason *r)
{
	switch ((enum reason_code)r->code) {
	case REASON_UNSCHEDULABLE:
	case REASON_NODE_NAME:
	case REASON_AFFINITY:
	case REASON_PORTS:
	case REASON_TOO_MANY_PODS:
	case REASON_GPU_MODEL:
	case REASON_GPU:
	case REASON_CORES:
	case REASON_SPREAD_LABEL:
	case REASON_SPREAD:
	case REASON_POD_AFFINITY:
	case REASON_POD_ANTI_AFFINITY:
	case REASON_EXISTING_ANTI_AFFINITY:
	case REASON_ENFORCED_AFFINITY:
		d->by_code[r->code]++;
		return;
	case REASON_INSUFFICIENT:
		if (r->resource < RES_MAX)
			d->insufficient[r->resource]++;
		return;
	case REASON_TAINT:
		add_taint(d, r->key, r->value);
		return;
	}
}

void diagnosis_sub(struct diagnosis *d, const struct reason *r)
{
	switch ((enum reason_code)r->code) {
	case REASON_UNSCHEDULABLE:
	case REASON_NODE_NAME:
	case REASON_AFFINITY:
	case REASON_PORTS:
	case REASON_TOO_MANY_PODS:
	case REASON_GPU_MODEL:
	case REASON_GPU:
	case REASON_CORES:
	case REASON_SPREAD_LABEL:
	case REASON_SPREAD:
	case REASON_POD_AFFINITY:
	case REASON_POD_ANTI_AFFINITY:
	case REASON_EXISTING_ANTI_AFFINITY:
	case REASON_ENFORCED_AFFINITY:
		if (d->by_code[r->code] > 0)
			d->by_code[r->code]--;
		return;
	case REASON_INSUFFICIENT:
		if (r->resource < RES_MAX && d->insufficient[r->resource] > 0)
			d->insufficient[r->resource]--;
		return;
	case REASON_TAINT:
		for (uint32_t i = taint_hash(r->key, r->value) & (DIAGNOSIS_TAINT_SLOTS - 1);
		     d->slot[i] != 0; i = (i + 1) & (DIAGNOSIS_TAINT_SLOTS - 1)) {
			struct diagnosis_taint *t = &d->taints[d->slot[i] - 1];
			if (t->key == r->key && t->value == r->value) {
				if (t->count > 0)
					t->count--;
				return;
			}
		}
		if (d->taints_other > 0)
			d->taints_other--;
		return;
	}
}

/* --- formatting --- */

/* One "<count> <reason>" entry as pieces: at most the count, " ", the
 * taint prefix, key, ": ", value and "}". */
#define LINE_MAX_PIECES 7

struct line {
	const char *piece[LINE_MAX_PIECES];
	size_t piece_len[LINE_MAX_PIECES];
	unsigned n;
	char num[12]; /* the count, decimal; piece[0] points here */
};

/* Entry ids: by_code first, then insufficient[], then taints[], then
 * taints_other; only those with a non-zero count are listed. */
enum {
	ID_INSUFFICIENT = REASON_INSUFFICIENT + 1,
	ID_TAINTS = ID_INSUFFICIENT + RES_MAX,
	ID_TAINTS_OTHER = ID_TAINTS + DIAGNOSIS_MAX_TAINTS,
	ID_COUNT = ID_TAINTS_OTHER + 1,
};

static void line_push(struct line *l, const char *s, size_t len)
{
	l->piece[l->n] = s;
	l->piece_len[l->n] = len;
	l->n++;
}

static void line_build(struct line *l, const struct diagnosis *d,
		       const struct plugin_ctx *ctx, unsigned id)
{
	const struct intern *strings = ctx->strings;
	uint32_t count;
	char digits[12];
	size_t nd = 0;

	if (id < ID_INSUFFICIENT)
		count = d->by_code[id];
	else if (id < ID_TAINTS)
		count = d->insufficient[id - ID_INSUFFICIENT];
	else if (id < ID_TAINTS_OTHER)
		count = d->taints[id - ID_TAINTS].count;
	else
		count = d->taints_other;

	do {
		digits[nd++] = (char)('0' + count % 10);
		count /= 10;
	} while (count);
	for (size_t i = 0; i < nd; i++)
		l->num[i] = digits[nd - 1 - i];

	l->n = 0;
	line_push(l, l->num, nd);
	line_push(l, " ", 1);
	if (id < ID_INSUFFICIENT) {
		line_push(l, reason_fixed_text[id], strlen(reason_fixed_text[id]));
	} else if (id < ID_TAINTS) {
		const char *name = ctx->res->name[id - ID_INSUFFICIENT];
		line_push(l, insufficient_prefix, sizeof(insufficient_prefix) - 1);
		line_push(l, name, strnlen(name, RES_NAME_MAX));
	} else if (id < ID_TAINTS_OTHER) {
		const struct diagnosis_taint *t = &d->taints[id - ID_TAINTS];
		line_push(l, taint_prefix, sizeof(taint_prefix) - 1);
		line_push(l, intern_str(strings, t->key), intern_len(strings, t->key));
		line_push(l, ": ", 2);
		line_push(l, intern_str(strings, t->value), intern_len(strings, t->value));
		line_push(l, "}", 1);
	} else {
		line_push(l, taints_other_text, sizeof(taints_other_text) - 1);
	}
}

/* Byte-wise comparison of the two concatenations, as Go compares strings:
 * the first differing byte decides (unsigned), else the shorter is less. */
static int line_cmp(const struct line *a, const struct line *b)
{
	unsigned pa = 0, pb = 0;
	size_t oa = 0, ob = 0;

	for (;;) {
		while (pa < a->n && oa == a->piece_len[pa]) {
			pa++;
			oa = 0;
		}
		while (pb < b->n && ob == b->piece_len[pb]) {
			pb++;
			ob = 0;
		}
		bool a_end = pa == a->n, b_end = pb == b->n;
		if (a_end || b_end)
			return (int)b_end - (int)a_end;
		unsigned char ca = (unsigned char)a->piece[pa][oa];
		unsigned char cb = (unsigned char)b->piece[pb][ob];
		if (ca != cb)
			return ca < cb ? -1 : 1;
		oa++;
		ob++;
	}
}

/* snprintf-style output: counts every byte, stores what fits. */
struct out {
	char *buf;
	size_t len;
	size_t pos;
};

static void out_put(struct out *o, const char *s, size_t n)
{
	if (o->pos < o->len) {
		size_t room = o->len - o->pos;
		memcpy(o->buf + o->pos, s, n < room ? n : room);
	}
	o->pos += n;
}

static void out_line(struct out *o, const struct line *l)
{
	for (unsigned i = 0; i < l->n; i++)
		out_put(o, l->piece[i], l->piece_len[i]);
}

static bool id_present(const struct diagnosis *d, unsigned id)
{
	if (id < ID_INSUFFICIENT)
		return id != REASON_TAINT && id != REASON_INSUFFICIENT && d->by_code[id];
	if (id < ID_TAINTS)
		return d->insufficient[id - ID_INSUFFICIENT] != 0;
	if (id < ID_TAINTS_OTHER)
		return id - ID_TAINTS < d->n_taints && d->taints[id - ID_TAINTS].count != 0;
	return d->taints_other != 0;
}

int diagnosis_format(const struct diagnosis *d, const struct plugin_ctx *ctx,
		     uint32_t num_all_nodes, char *buf, size_t len)
{
	uint16_t ids[ID_COUNT];
	unsigned n = 0;
	struct line a, b;

	for (unsigned id = 0; id < ID_COUNT; id++) {
		if (!id_present(d, id))
			continue;
		/* Insertion sort: shift the larger entries right. */
		line_build(&a, d, ctx, id);
		unsigned j = n;
		while (j > 0) {
			line_build(&b, d, ctx, ids[j - 1]);
			if (line_cmp(&b, &a) <= 0)
				break;
			ids[j] = ids[j - 1];
			j--;
		}
		ids[j] = (uint16_t)id;
		n++;
	}

	struct out o = {buf, len > 0 ? len - 1 : 0, 0};
	char head[40];
	size_t head_len = 0;
	/* "0/%u nodes are available:" without stdio's locale machinery. */
	{
		char digits[12];
		size_t nd = 0;
		uint32_t v = num_all_nodes;
		do {
			digits[nd++] = (char)('0' + v % 10);
			v /= 10;
		} while (v);
		head[head_len++] = '0';
		head[head_len++] = '/';
		while (nd)
			head[head_len++] = digits[--nd];
		static const char rest[] = " nodes are available:";
		memcpy(head + head_len, rest, sizeof(rest) - 1);
		head_len += sizeof(rest) - 1;
	}
	out_put(&o, head, head_len);

	if (n > 0) {
		out_put(&o, " ", 1);
		for (unsigned i = 0; i < n; i++) {
			if (i)
				out_put(&o, ", ", 2);
			line_build(&a, d, ctx, ids[i]);
			out_line(&o, &a);
		}
		out_put(&o, ".", 1);
	}
	if (len > 0)
		buf[o.pos < o.len ? o.pos : o.len] = '\0';
	return o.pos > INT_MAX ? INT_MAX : (int)o.pos;
}
