/* The shard gate: see shard_gate_internal.h for what it does.
 *
 * Design: the writer (the membership thread) turns owned shard names into
 * the ids of the label values the current snapshot's nodes carry (a walk
 * of the snapshot, O(nodes), on its tick, never on a pod's path): a value
 * no node carries has no node to place on, and it is found on a later
 * tick once a node brings it (the membership thread tells the owned set
 * every tick). It publishes the ids by a seqlock; workers copy them and
 * add the requirement to their pod's copy. Reading the snapshot, the
 * writer is a QSBR reader for the length of one walk (rcu_register ..
 * rcu_unregister: it holds nothing across).
 */
#include "daemon/shard_gate_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/node_require_internal.h"

struct shard_gate {
	struct cluster *cluster;
	const struct intern *strings;
	uint32_t key;
	/* EM2/EM3: the seqlock over n and ids: odd while the writer writes. */
	uint32_t seq;
	uint32_t n;
	uint32_t ids[SHARD_GATE_IDS];
	uint64_t alive_until; /* EM4 */
	uint32_t owned, unexpressed; /* the writer's; read relaxed */
	char label[256];
};

struct shard_gate *shard_gate_create(struct cluster *c, const struct intern *strings,
				     uint32_t key, const char *label)
{
	struct shard_gate *g = calloc(1, sizeof(*g));
	if (g == NULL)
		return NULL;
	g->cluster = c;
	g->strings = strings;
	g->key = key;
	snprintf(g->label, sizeof(g->label), "%s", label);
	return g;
}

void shard_gate_destroy(struct shard_gate *g)
{
	free(g);
}

/* The distinct shard label values of the snapshot's nodes (ids), up to
 * cap. */
static size_t values_of_nodes(struct shard_gate *g, uint32_t *ids, size_t cap)
{
	size_t n = 0;
	rcu_register();
	const struct snapshot *s = cluster_snapshot(g->cluster);
	for (uint32_t i = 0; i < s->n_slots && n < cap; i++) {
		uint32_t v;
		if (!s->present[i] ||
		    !labels_get(s->nodes[i].labels, s->nodes[i].n_labels, g->key, &v) || v == 0)
			continue;
		bool seen = false;
		for (size_t k = 0; k < n && !seen; k++)
			seen = ids[k] == v;
		if (!seen)
			ids[n++] = v;
	}
	rcu_unregister();
	return n;
}

size_t shard_gate_shards(void *arg, shard_name_t *out, size_t cap)
{
	struct shard_gate *g = arg;
	uint32_t ids[SHARD_MAX];
	size_t n = values_of_nodes(g, ids, SHARD_MAX < cap ? SHARD_MAX : cap);
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		const char *v = intern_str(g->strings, ids[i]);
		if (shard_name_valid(v, strlen(v)))
			snprintf(out[k++], SHARD_NAME_MAX, "%s", v);
	}
	return k;
}

void shard_gate_owned(void *arg, const shard_name_t *names, size_t n)
{
	struct shard_gate *g = arg;
	uint32_t values[SHARD_MAX], ids[SHARD_GATE_IDS];
	size_t nv = values_of_nodes(g, values, SHARD_MAX);
	uint32_t k = 0, over = 0;
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < nv; j++)
			if (strcmp(intern_str(g->strings, values[j]), names[i]) == 0) {
				if (k < SHARD_GATE_IDS)
					ids[k++] = values[j];
				else
					over++;
				break;
			}
	uint32_t cur = __atomic_load_n(&g->n, __ATOMIC_RELAXED);
	bool same = cur == k;
	for (uint32_t i = 0; same && i < k; i++)
		same = __atomic_load_n(&g->ids[i], __ATOMIC_RELAXED) == ids[i];
	__atomic_store_n(&g->owned, (uint32_t)n, __ATOMIC_RELAXED);
	__atomic_store_n(&g->unexpressed, over, __ATOMIC_RELAXED);
	if (same)
		return;
	/* EM2: the seqlock's writer, partner of EM3: odd, then the ids and
	 * the count each stored with release (so a reader that reads any of
	 * them also sees the odd count, and retries), then even with release.
	 * No fence: ThreadSanitizer models these, not fences. */
	uint32_t s = __atomic_load_n(&g->seq, __ATOMIC_RELAXED); /* its own */
	__atomic_store_n(&g->seq, s + 1, __ATOMIC_RELAXED);
	for (uint32_t i = 0; i < k; i++)
		__atomic_store_n(&g->ids[i], ids[i], __ATOMIC_RELEASE);
	__atomic_store_n(&g->n, k, __ATOMIC_RELEASE);
	__atomic_store_n(&g->seq, s + 2, __ATOMIC_RELEASE);
}

void shard_gate_alive_until(void *arg, uint64_t until_ns)
{
	struct shard_gate *g = arg;
	/* EM4: relaxed, partner of shard_gate_spec's load: a stale instant
	 * is an earlier one (renewals move it on) or one already past (the
	 * lease lost after its expiry, which comes after the instant). */
	__atomic_store_n(&g->alive_until, until_ns, __ATOMIC_RELAXED);
}

/* EM3: the seqlock's reader, partner of EM2: the ids of one publish.
 * The count and ids loaded with acquire, so the second load of seq comes
 * after them: it sees the odd count of any write whose ids were read. */
static uint32_t read_ids(struct shard_gate *g, uint32_t *ids)
{
	for (;;) {
		uint32_t s1 = __atomic_load_n(&g->seq, __ATOMIC_ACQUIRE);
		if (s1 & 1u)
			continue;
		uint32_t n = __atomic_load_n(&g->n, __ATOMIC_ACQUIRE);
		if (n > SHARD_GATE_IDS)
			n = SHARD_GATE_IDS;
		for (uint32_t i = 0; i < n; i++)
			ids[i] = __atomic_load_n(&g->ids[i], __ATOMIC_ACQUIRE);
		if (__atomic_load_n(&g->seq, __ATOMIC_RELAXED) == s1)
			return n;
	}
}

enum shard_gate_verdict shard_gate_spec(struct shard_gate *g, const struct pod_spec *pod,
					uint64_t now, struct pod_spec *out, char *why,
					size_t len)
{
	uint64_t until = __atomic_load_n(&g->alive_until, __ATOMIC_RELAXED); /* EM4 */
	if (until == 0 || now >= until) {
		snprintf(why, len, "this host's etcd lease is not known to be alive "
			 "(no renewal answered within the lease's TTL less a quarter): "
			 "it places no pod until it renews and owns shards again");
		return SHARD_GATE_NO_LEASE;
	}
	uint32_t ids[SHARD_GATE_IDS];
	uint32_t n = read_ids(g, ids);
	if (n == 0) {
		snprintf(why, len, "this host owns no shard (node label %s) with "
			 "nodes yet: the coordinator assigns shards to the live hosts",
			 g->label);
		return SHARD_GATE_NONE_OWNED;
	}
	if (pod->has_required && pod->n_terms == 0) {
		*out = *pod; /* required but empty: it matches no node anyway */
		return SHARD_GATE_PLACE;
	}
	if (!node_require(pod, g->key, SEL_IN, ids, n, out)) {
		snprintf(why, len, "the pod's node affinity has no room for this "
			 "host's shard requirement (%s In its %u shards): at most "
			 "%u expressions and %u values in all", g->label, n,
			 POD_MAX_EXPRS, POD_MAX_VALUES);
		return SHARD_GATE_NO_ROOM;
	}
	return SHARD_GATE_PLACE;
}

bool shard_gate_note(const struct shard_gate *g, const struct snapshot *s, uint32_t slot,
		     char *buf, size_t len)
{
	uint32_t v;
	if (slot >= s->n_slots || !s->present[slot] ||
	    !labels_get(s->nodes[slot].labels, s->nodes[slot].n_labels, g->key, &v))
		return false;
	snprintf(buf, len, "node %s belongs to shard %s owned by another host",
		 intern_str(g->strings, s->nodes[slot].name), intern_str(g->strings, v));
	return true;
}

void shard_gate_get_counts(struct shard_gate *g, struct shard_gate_counts *out)
{
	*out = (struct shard_gate_counts){
		.owned = __atomic_load_n(&g->owned, __ATOMIC_RELAXED),
		.unexpressed = __atomic_load_n(&g->unexpressed, __ATOMIC_RELAXED),
		.alive_until = __atomic_load_n(&g->alive_until, __ATOMIC_RELAXED),
	};
}
