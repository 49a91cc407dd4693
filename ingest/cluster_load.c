/* Cluster file loading: see cluster_load.h. The file is read twice (its
 * Namespaces, Services and controllers first, k8s_objects_read_file, so
 * that a pod may come before the Namespace its terms select), then twice
 * over memory: objects may come in any order, so nodes and bound pods are
 * collected first, then the nodes are published as one snapshot and the
 * pods counted on them. */
#include "ingest/cluster_load.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/k8s_json.h"
#include "ingest/kueue_json.h"
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

/* A pod declared bound, counted on its node: a placement record owned by
 * PLACEMENT_OWNER_BOUND when the daemon keeps records, so that its use can
 * be recounted after a crash and resynced by name. */
int cluster_record_bound(struct cluster *cl, struct placements *records,
			 uint32_t slot, const struct pod_spec *pod,
			 const struct device_assignment *dev, uint64_t *id)
{
	if (id != NULL)
		*id = 0;
	int64_t ix = records != NULL ? placements_take(records) : 0;
	if (ix < 0)
		return -ENOSPC;
	int rc = ledger_account(cluster_ledger(cl), slot, pod, dev, +1);
	if (records == NULL)
		return rc;
	if (rc < 0) {
		placements_untake(records, (uint32_t)ix);
		return rc;
	}
	uint64_t made = placements_fill(records, (uint32_t)ix, PLACEMENT_OWNER_BOUND,
					slot, ledger_node_generation(cluster_ledger(cl), slot),
					pod, dev, 0);
	if (id != NULL)
		*id = made;
	return 0;
}

/* Publishes the collected nodes in `cl` and counts the bound pods. */
static int commit_collected(const char *path, struct collect *c,
			    struct cluster *cl, struct placements *records,
			    char *err, size_t err_len)
{
	struct cluster_load_stats *stats = c->stats;
	if (c->n_nodes > cluster_capacity(cl)) {
		snprintf(err, err_len, "%s: %zu nodes: more than the %u this daemon "
			 "holds (--max-nodes)", path, c->n_nodes, cluster_capacity(cl));
		return -ENOSPC;
	}
	char why[256];
	int rc = cluster_apply(cl, c->nodes, c->n_nodes, why, sizeof(why));
	if (rc < 0) {
		snprintf(err, err_len, "%s: %s", path, why);
		return rc;
	}
	stats->nodes = (uint32_t)c->n_nodes;
	for (size_t i = 0; i < c->n_pods; i++) {
		int64_t slot = cluster_slot_of(cl, c->pods[i].node);
		if (slot < 0) {
			stats->orphan_pods++;
			continue;
		}
		/* A bound pod that wants devices takes the ones devices_assign()
		 * picks from what is free; if none are (the input overbooks
		 * them), it is counted without devices. */
		struct device_assignment dev = {0};
		if (devices_wanted(&c->pods[i].spec)) {
			const struct node_spec *n = &cluster_snapshot(cl)->nodes[slot];
			struct device_view free_now;
			ledger_load_devices(ledger_node(cluster_ledger(cl), (uint32_t)slot),
					    &n->devices, &free_now);
			if (devices_assign(&n->devices, &free_now, &c->pods[i].spec, -1,
					   &dev) != DEVICE_FITS)
				stats->pods_without_devices++;
		}
		rc = cluster_record_bound(cl, records, (uint32_t)slot, &c->pods[i].spec,
					  &dev, NULL);
		if (rc < 0) {
			snprintf(err, err_len, "%s: %s", path, rc == -ENOSPC
				 ? "more bound pods than placement records "
				   "(--max-placements), or a node's host-port table "
				   "is full" : "out of memory");
			return rc;
		}
		stats->running_pods++;
	}
	return 0;
}

/* The file's objects into a k8s_objects of its own, for a caller that
 * reads no other file: *objects NULL on error, with the message. */
static int own_objects(const char *path, struct intern *strings,
		       struct res_names *res, struct k8s_objects **objects,
		       char *err, size_t err_len)
{
	*objects = k8s_objects_create();
	if (*objects == NULL) {
		snprintf(err, err_len, "%s: out of memory", path);
		return -ENOMEM;
	}
	struct k8s_ctx ctx = {.strings = strings, .res = res, .cluster_file = true,
			      .objects = *objects};
	int rc = k8s_objects_read_file(path, &ctx, err, err_len);
	if (rc < 0) {
		k8s_objects_destroy(*objects);
		*objects = NULL;
	}
	return rc;
}

/* The second pass: nodes and bound pods into `c`. */
static int collect_file(const char *path, struct intern *strings,
			struct res_names *res, struct k8s_objects *objects,
			struct collect *c, char *err, size_t err_len)
{
	struct k8s_ctx ctx = {.strings = strings, .res = res, .cluster_file = true,
			      .objects = objects, .skipped = &c->stats->skipped};
	struct k8s_visitor v = {.arg = c, .node = on_node, .pod = on_pod};
	int rc = k8s_load_file(path, &ctx, &v, err, err_len);
	/* The Kueue objects the pass above left to their decoder (the file
	 * is parsed again only when it has some). */
	if (rc == 0 && c->stats->skipped.kueue > 0)
		rc = kueue_load_file_mixed(path, &c->stats->quota, err, err_len);
	return rc;
}

/* A failed load returns no tree. */
static int drop_quota(struct cluster_load_stats *stats, int rc)
{
	if (rc < 0) {
		quota_tree_free(stats->quota);
		stats->quota = NULL;
	}
	return rc;
}

int cluster_load_file_into(const char *path, struct intern *strings,
			   struct res_names *res, struct cluster *cl,
			   struct placements *records,
			   struct cluster_load_stats *stats, char *err,
			   size_t err_len)
{
	memset(stats, 0, sizeof(*stats));
	struct collect c = {.stats = stats};
	struct k8s_objects *objects;
	int rc = own_objects(path, strings, res, &objects, err, err_len);
	if (rc == 0)
		rc = collect_file(path, strings, res, objects, &c, err, err_len);
	if (rc == 0)
		rc = commit_collected(path, &c, cl, records, err, err_len);
	k8s_objects_destroy(objects);
	free(c.nodes);
	free(c.pods);
	return drop_quota(stats, rc);
}

int cluster_load_file_objects(const char *path, struct intern *strings,
			      struct res_names *res, struct k8s_objects *objects,
			      uint32_t extra_slots, struct cluster **out,
			      struct cluster_load_stats *stats, char *err,
			      size_t err_len)
{
	memset(stats, 0, sizeof(*stats));
	*out = NULL;
	struct collect c = {.stats = stats};
	struct cluster *cl = NULL;
	int rc = collect_file(path, strings, res, objects, &c, err, err_len);
	if (rc < 0)
		goto done;
	/* Sized for the file's nodes. */
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
	rc = commit_collected(path, &c, cl, NULL, err, err_len);
done:
	free(c.nodes);
	free(c.pods);
	if (rc < 0) {
		cluster_destroy(cl);
		cl = NULL;
	}
	*out = cl;
	return drop_quota(stats, rc);
}

int cluster_load_file(const char *path, struct intern *strings,
		      struct res_names *res, uint32_t extra_slots,
		      struct cluster **out, struct cluster_load_stats *stats,
		      char *err, size_t err_len)
{
	struct k8s_objects *objects;
	memset(stats, 0, sizeof(*stats));
	*out = NULL;
	int rc = own_objects(path, strings, res, &objects, err, err_len);
	if (rc == 0)
		rc = cluster_load_file_objects(path, strings, res, objects, extra_slots,
					       out, stats, err, err_len);
	k8s_objects_destroy(objects);
	return rc;
}
