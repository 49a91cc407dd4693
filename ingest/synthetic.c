/* Synthetic clusters: see synthetic.h. One pass over the nodes builds one
 * batch of node events (one snapshot); running pods are then counted with
 * ledger_account() on nodes where they fit. Cost: O(nodes + running). */
#include "ingest/synthetic.h"
#include "base/base.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct shape {
	int64_t cores;
	int64_t gib;
	const char *type;
};

static const struct shape shapes[] = {
	{8, 32, "m.2xlarge"},   {16, 64, "m.4xlarge"},   {32, 128, "m.8xlarge"},
	{64, 256, "m.16xlarge"}, {16, 128, "r.4xlarge"},  {64, 512, "r.16xlarge"},
	{128, 1024, "r.32xlarge"}, {32, 64, "c.8xlarge"},
};

static const char *const zones[] = {"zone-a", "zone-b", "zone-c"};

struct pool_taint {
	const char *name;
	uint8_t effect;
};

static const struct pool_taint pools[] = {
	{"gpu", TAINT_NO_SCHEDULE}, {"batch", TAINT_NO_SCHEDULE},
	{"infra", TAINT_NO_EXECUTE},
};

static uint32_t below(uint64_t *s, uint32_t n)
{
	return (uint32_t)(rng_next(s) % n);
}

static int label_cmp(const void *a, const void *b)
{
	const struct label *x = a, *y = b;
	return (x->key > y->key) - (x->key < y->key);
}

/* Interns and appends a label; the caller sorts. */
static int add_label(struct intern *t, struct node_spec *n, const char *k,
		     const char *v)
{
	struct label *l = &n->labels[n->n_labels++];
	int rc = intern_add_str(t, k, &l->key);
	return rc < 0 ? rc : intern_add_str(t, v, &l->value);
}

static int make_node(struct intern *t, uint32_t i, uint64_t *rng,
		     struct node_event *e)
{
	char name[32], rack[32], cores[16];
	const struct shape *sh = &shapes[below(rng, sizeof(shapes) / sizeof(shapes[0]))];
	const char *zone = zones[i % 3];
	memset(e, 0, sizeof(*e));
	snprintf(name, sizeof(name), "node-%u", i);
	snprintf(rack, sizeof(rack), "%s-r%u", zone, below(rng, 20));
	snprintf(cores, sizeof(cores), "%lld", (long long)sh->cores);
	int rc = intern_add_str(t, name, &e->name);
	struct node_spec *n = &e->spec;
	n->name = e->name;
	e->kind = NODE_EVENT_ADD;
	n->allocatable.v[RES_CPU] = sh->cores * 1000 - 100;
	n->allocatable.v[RES_MEMORY] = (sh->gib - 1) << 30;
	n->allocatable.v[RES_EPHEMERAL] = INT64_C(100) << 30;
	n->allocatable.v[RES_PODS] = 110;
	n->ready = NODE_READY_TRUE;
	if (rc == 0)
		rc = add_label(t, n, "kubernetes.io/hostname", name);
	if (rc == 0)
		rc = add_label(t, n, "topology.kubernetes.io/zone", zone);
	if (rc == 0)
		rc = add_label(t, n, "topology.kubernetes.io/rack", rack);
	if (rc == 0)
		rc = add_label(t, n, "node.kubernetes.io/instance-type", sh->type);
	if (rc == 0)
		rc = add_label(t, n, "cores", cores);
	if (rc == 0 && below(rng, 100) < 10) {
		const struct pool_taint *p = &pools[below(rng, 3)];
		struct taint *tt = &n->taints[n->n_taints++];
		tt->effect = p->effect;
		rc = add_label(t, n, "pool", p->name);
		if (rc == 0)
			rc = intern_add_str(t, "dedicated", &tt->key);
		if (rc == 0)
			rc = intern_add_str(t, p->name, &tt->value);
	}
	if (rc == 0 && below(rng, 100) < 5) {
		struct taint *tt = &n->taints[n->n_taints++];
		tt->effect = TAINT_PREFER_NO_SCHEDULE;
		rc = intern_add_str(t, "spot", &tt->key);
		if (rc == 0)
			rc = intern_add_str(t, "true", &tt->value);
	}
	n->unschedulable = below(rng, 100) < 2;
	qsort(n->labels, n->n_labels, sizeof(n->labels[0]), label_cmp);
	return rc;
}

/* A running pod's use: small requests, counted only where it fits, so the
 * synthetic cluster starts within its allocatable. */
static void running_pod(uint64_t *rng, struct pod_spec *p)
{
	static const int64_t cpu[] = {100, 250, 500, 1000};
	static const int64_t mib[] = {128, 256, 512, 1024};
	memset(p, 0, sizeof(*p));
	p->request.v[RES_CPU] = p->nonzero_cpu_milli = cpu[below(rng, 4)];
	p->request.v[RES_MEMORY] = p->nonzero_mem_bytes = mib[below(rng, 4)] << 20;
}

int synthetic_cluster(uint32_t nodes, uint32_t running, uint64_t seed,
		      uint32_t extra_slots, struct intern *strings,
		      struct cluster **out,
		      struct synthetic_stats *stats, char *err, size_t err_len)
{
	*out = NULL;
	memset(stats, 0, sizeof(*stats));
	if (nodes == 0 || nodes > (1u << 24) || extra_slots > (1u << 24)) {
		snprintf(err, err_len, "synthetic cluster: %u nodes: expected 1..%u",
			 nodes, 1u << 24);
		return -EINVAL;
	}
	struct cluster *c = cluster_create(strings, nodes + extra_slots);
	if (c == NULL) {
		snprintf(err, err_len, "synthetic cluster: %s", strerror(errno));
		return -ENOMEM;
	}
	int rc = synthetic_cluster_into(nodes, running, seed, strings, c, NULL,
					stats, err, err_len);
	if (rc < 0) {
		cluster_destroy(c);
		return rc;
	}
	*out = c;
	return 0;
}

int synthetic_cluster_into(uint32_t nodes, uint32_t running, uint64_t seed,
			   struct intern *strings, struct cluster *c,
			   struct placements *records,
			   struct synthetic_stats *stats, char *err, size_t err_len)
{
	memset(stats, 0, sizeof(*stats));
	if (nodes == 0 || nodes > cluster_capacity(c)) {
		snprintf(err, err_len, "synthetic cluster: %u nodes: expected 1..%u "
			 "(--max-nodes)", nodes, cluster_capacity(c));
		return -EINVAL;
	}
	struct node_event *ev = calloc(nodes, sizeof(*ev));
	uint64_t rng = seed ^ UINT64_C(0x5eed5eed5eed5eed);
	int rc = ev == NULL ? -ENOMEM : 0;
	for (uint32_t i = 0; i < nodes && rc == 0; i++)
		rc = make_node(strings, i, &rng, &ev[i]);
	if (rc < 0) {
		snprintf(err, err_len, "synthetic cluster: %s", strerror(-rc));
		goto fail;
	}
	char why[256];
	rc = cluster_apply(c, ev, nodes, why, sizeof(why));
	if (rc < 0) {
		snprintf(err, err_len, "synthetic cluster: %s", why);
		goto fail;
	}
	const struct snapshot *s = cluster_snapshot(c);
	struct pod_spec pod;
	for (uint32_t k = 0; k < running; k++) {
		running_pod(&rng, &pod);
		bool placed = false;
		/* A few random tries on untainted, schedulable nodes that fit. */
		for (int t = 0; t < 8 && !placed; t++) {
			uint32_t slot = below(&rng, nodes);
			const struct node_spec *n = &s->nodes[slot];
			if (n->unschedulable || n->n_taints > 0)
				continue;
			placed = ledger_reserve(cluster_ledger(c), slot, &n->allocatable, &pod, NULL, NULL,
						 NULL) == 0;
			if (placed && records != NULL) {
				/* Counted: now recorded, as a bound pod. */
				int64_t ix = placements_take(records);
				if (ix < 0) {
					snprintf(err, err_len, "synthetic cluster: more "
						 "running pods than placement records");
					free(ev);
					return -ENOSPC;
				}
				placements_fill(records, (uint32_t)ix,
						PLACEMENT_OWNER_BOUND, slot,
						ledger_node_generation(cluster_ledger(c), slot),
						&pod, NULL, 0);
			}
		}
		if (placed)
			stats->running++;
		else
			stats->running_lost++;
	}
	stats->nodes = nodes;
	free(ev);
	return 0;

fail:
	free(ev);
	return rc;
}
