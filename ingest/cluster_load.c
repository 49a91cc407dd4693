/* Cluster file loading: see cluster_load.h. Two passes over memory, one
 * over the file: objects may come in any order, so nodes and bound pods are
 * collected first, then the nodes are published as one snapshot and the
 * pods counted on them. */
#include "ingest/cluster_load.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/k8s_json.h"
#include "workers/workers.h"

/* What a bound pod contributes to its node. */
struct bound_pod {
	uint32_t node;
	struct pod_spec spec;
};

struct collect {
	struct node_event *nodes;
	size_t n_nodes, cap_nodes;
	struct bound_pod *pods;
	size_t n_pods, cap_pods;
	struct cluster_load_stats *stats;
};

static int grow(void **p, size_t *cap, size_t n, size_t size)
{
	if (n < *cap)
		return 0;
	size_t c = *cap ? *cap * 2 : 256;
	void *q = realloc(*p, c * size);
	if (q == NULL)
		return -ENOMEM;
	*p = q;
	*cap = c;
	return 0;
}

static int on_node(void *arg, const struct node_spec *node, char *err,
		   size_t err_len)
{
	struct collect *c = arg;
	if (grow((void **)&c->nodes, &c->cap_nodes, c->n_nodes, sizeof(*c->nodes)) < 0) {
		snprintf(err, err_len, "out of memory");
		return -ENOMEM;
	}
	struct node_event *e = &c->nodes[c->n_nodes++];
	e->kind = NODE_EVENT_ADD;
	e->name = node->name;
	e->spec = *node;
	return 0;
}

static int on_pod(void *arg, const struct pod_spec *pod,
		  const struct k8s_pod_meta *meta, char *err, size_t err_len)
{
	struct collect *c = arg;
	if (pod->node_name == 0) {
		c->stats->pending_pods++;
		return 0;
	}
	if (meta->phase == POD_PHASE_SUCCEEDED || meta->phase == POD_PHASE_FAILED) {
		c->stats->finished_pods++;
		return 0;
	}
	if (grow((void **)&c->pods, &c->cap_pods, c->n_pods, sizeof(*c->pods)) < 0) {
		snprintf(err, err_len, "out of memory");
		return -ENOMEM;
	}
	c->pods[c->n_pods].node = pod->node_name;
	c->pods[c->n_pods].spec = *pod;
	c->n_pods++;
	return 0;
}

int cluster_load_file(const char *path, struct intern *strings,
		      struct res_names *res, uint32_t extra_slots,
		      struct cluster **out, struct cluster_load_stats *stats,
		      char *err, size_t err_len)
{
	memset(stats, 0, sizeof(*stats));
	struct collect c = {.stats = stats};
	struct k8s_ctx ctx = {.strings = strings, .res = res};
	struct k8s_visitor v = {.arg = &c, .node = on_node, .pod = on_pod};
	struct cluster *cl = NULL;
	int rc = k8s_load_file(path, &ctx, &v, err, err_len);
	if (rc < 0)
		goto done;

	uint64_t capacity = (uint64_t)c.n_nodes + extra_slots;
	if (capacity == 0)
		capacity = 1;
	if (capacity > (1u << 28)) {
		snprintf(err, err_len, "%s: %zu nodes: more than shmsched holds", path,
			 c.n_nodes);
		rc = -ENOSPC;
		goto done;
	}
	cl = cluster_create(strings, (uint32_t)capacity);
	if (cl == NULL) {
		rc = -errno;
		snprintf(err, err_len, "%s: cannot create the cluster: %s", path,
			 strerror(errno));
		goto done;
	}
	char why[256];
	rc = cluster_apply(cl, c.nodes, c.n_nodes, why, sizeof(why));
	if (rc < 0) {
		snprintf(err, err_len, "%s: %s", path, why);
		goto done;
	}
	stats->nodes = (uint32_t)c.n_nodes;
	for (size_t i = 0; i < c.n_pods; i++) {
		int64_t slot = cluster_slot_of(cl, c.pods[i].node);
		if (slot < 0) {
			stats->orphan_pods++;
			continue;
		}
		/* A bound pod that wants devices takes the ones devices_assign()
		 * picks from what is free; if none are (the input overbooks
		 * them), it is counted without devices. */
		struct device_assignment dev = {0};
		if (devices_wanted(&c.pods[i].spec)) {
			const struct node_spec *n = &cluster_snapshot(cl)->nodes[slot];
			struct device_view free_now;
			ledger_load_devices(ledger_node(cluster_ledger(cl), (uint32_t)slot), &n->devices, &free_now);
			if (devices_assign(&n->devices, &free_now, &c.pods[i].spec, -1, &dev) !=
			    DEVICE_FITS)
				stats->pods_without_devices++;
		}
		rc = ledger_account(cluster_ledger(cl), (uint32_t)slot, &c.pods[i].spec, &dev, +1);
		if (rc < 0) {
			snprintf(err, err_len, "%s: out of memory", path);
			goto done;
		}
		stats->running_pods++;
	}
done:
	free(c.nodes);
	free(c.pods);
	if (rc < 0) {
		cluster_destroy(cl);
		cl = NULL;
	}
	*out = cl;
	return rc;
}
