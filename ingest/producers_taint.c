/* What the daemon's node lifecycle (daemon/taint_evict_internal.h) reads
 * of the nodes, under the producers' lock: each present node's zone.
 *
 * The zone, as Kubernetes' nodetopology.GetZoneKey
 * (pkg/controller/nodelifecycle/node_lifecycle_controller.go groups nodes
 * by it): failure-domain.beta.kubernetes.io/zone when the node has that
 * label, else topology.kubernetes.io/zone; the region likewise
 * (failure-domain.beta.kubernetes.io/region, else
 * topology.kubernetes.io/region); a node with neither is in the zone ""
 * with every other such node. Values are intern ids, an empty value 0.
 */
#include "ingest/producers_internal.h"

#include <errno.h>
#include <string.h>

#include "base/base.h"
#include "shm/shm.h"

static const char *const zone_keys[2] = {"failure-domain.beta.kubernetes.io/zone",
					 "topology.kubernetes.io/zone"};
static const char *const region_keys[2] = {"failure-domain.beta.kubernetes.io/region",
					   "topology.kubernetes.io/region"};

/* Ids of the two keys (0: no string has that name, no node the label). */
static void key_ids(const struct producers *p, const char *const names[2],
		    uint32_t ids[2])
{
	for (int i = 0; i < 2; i++)
		if (!intern_find(p->strings, names[i], strlen(names[i]), &ids[i]))
			ids[i] = 0;
}

/* The first of the two labels the node has (beta before GA), 0 none. */
static uint32_t label_of(const struct producers *p, const struct node_spec *n,
			 const uint32_t ids[2])
{
	for (int i = 0; i < 2; i++) {
		uint32_t v;
		if (ids[i] != 0 && labels_get(n->labels, n->n_labels, ids[i], &v))
			return v != 0 && intern_len(p->strings, v) > 0 ? v : 0;
	}
	return 0;
}

int producers_node_zones(struct producers *p,
			 void (*fn)(void *arg, uint32_t name, uint32_t region,
				    uint32_t zone),
			 void *arg)
{
	pthread_mutex_lock(&p->lock);
	uint32_t zk[2], rk[2];
	key_ids(p, zone_keys, zk);
	key_ids(p, region_keys, rk);
	/* The writer's lock is held: this snapshot is not freed under it. */
	const struct snapshot *snap = cluster_snapshot(p->cluster);
	int k = 0;
	for (uint32_t i = 0; i < snap->n_slots; i++) {
		if (!snap->present[i])
			continue;
		const struct node_spec *n = &snap->nodes[i];
		fn(arg, n->name, label_of(p, n, rk), label_of(p, n, zk));
		k++;
	}
	pthread_mutex_unlock(&p->lock);
	return k;
}
