/* A pod under Kueue's quota: see "a pod under quota" in quota/quota.h.
 *
 * The pieces the daemon (daemon/quota_charge.c, daemon/attempt.c) and
 * `shmsched place` (cli/place_quota.c) both read of a pod, once, so that
 * the two apply the same rules in the same words: its LocalQueue (the
 * namespace and the label QUOTA_QUEUE_LABEL of its decoded group), its
 * charge (quota_pod_charge), and a flavor's nodeLabels merged into its
 * nodeSelector (quota_pod_flavor_spec). Each caller keeps its own
 * caches and scratch; nothing here holds state or takes a lock.
 *
 * Cost: quota_pod_queue decodes a group once (pod_group_decode) and
 * looks the LocalQueue up by name (the daemon caches its answer per
 * group); quota_pod_charge, on the daemon's path of every pod under
 * quota, is one OR over the RES_MAX request slots and one write per
 * resource of the tree, no branch per slot, its name map made again only
 * for a new tree or when a resource name was added; quota_pod_flavor_spec
 * is one merge of two sorted lists of at most POD_MAX_SELECTOR and
 * QUOTA_MAX_FLAVOR_LABELS labels.
 */
#include "quota/quota.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shm/shm.h"

_Static_assert(QUOTA_POD_RES_SLOTS == RES_MAX,
	       "struct quota_pod_map holds one slot per resource index");

static int cmp_label(const void *a, const void *b)
{
	const struct label *x = a, *y = b;
	return x->key < y->key ? -1 : x->key > y->key;
}

int quota_pod_names_intern(struct quota_pod_names *n, const struct quota_tree *t,
			   struct intern *strings)
{
	memset(n, 0, sizeof(*n));
	int rc = intern_add_str(strings, QUOTA_QUEUE_LABEL, &n->queue_key);
	for (int f = 0; rc == 0 && f < quota_n_flavors(t); f++) {
		struct quota_pod_flavor *fl = &n->flavors[f];
		struct label sorted[QUOTA_MAX_FLAVOR_LABELS];
		unsigned count = (unsigned)quota_flavor_n_labels(t, f);
		for (unsigned i = 0; rc == 0 && i < count; i++) {
			const char *key, *value;
			quota_flavor_label(t, f, (int)i, &key, &value);
			rc = intern_add_str(strings, key, &sorted[i].key);
			if (rc == 0)
				rc = intern_add_str(strings, value, &sorted[i].value);
		}
		if (rc < 0)
			break;
		qsort(sorted, count, sizeof(sorted[0]), cmp_label);
		fl->n = count;
		for (unsigned i = 0; i < count; i++) {
			fl->labels[i].key = sorted[i].key;
			fl->labels[i].value = sorted[i].value;
		}
	}
	return rc;
}

int quota_pod_queue(const struct quota_tree *t, const struct quota_pod_names *n,
		    const struct intern *strings, uint32_t group,
		    struct pod_group *scratch, int *lq, char *why, size_t why_len)
{
	if (lq != NULL)
		*lq = -1;
	if (group == 0)
		return QUOTA_POD_NONE; /* no labels, no namespace: no queue */
	uint32_t value;
	if (pod_group_decode(intern_str(strings, group), intern_len(strings, group),
			     scratch) < 0 ||
	    !labels_get(scratch->labels, scratch->n_labels, n->queue_key, &value))
		return QUOTA_POD_NONE; /* (a damaged group: the tree's own encoding) */
	const char *ns = intern_str(strings, scratch->ns);
	const char *name = intern_str(strings, value);
	int cq = quota_local_queue_find(t, ns, name);
	if (cq >= 0) {
		if (lq != NULL)
			*lq = quota_local_queue_index(t, ns, name);
		return cq;
	}
	/* Kueue keeps such a workload pending: "LocalQueue ns/name doesn't
	 * exist" (pkg/controller/core/workload_controller.go). */
	snprintf(why, why_len, "metadata.labels[\"" QUOTA_QUEUE_LABEL "\"]: "
		 "LocalQueue %s/%s doesn't exist (expected a LocalQueue of the "
		 "pod's namespace)", ns, name);
	return QUOTA_POD_REFUSED;
}

bool quota_pod_flavor_spec(const struct quota_pod_names *n, int flavor,
			   const struct pod_spec *pod, struct pod_spec *out)
{
	const struct quota_pod_flavor *fl = &n->flavors[flavor];
	struct label merged[POD_MAX_SELECTOR + QUOTA_MAX_FLAVOR_LABELS];
	unsigned k = 0, i = 0, j = 0;
	/* Both sorted by key: a merge; a key in both must agree. */
	while (i < pod->n_selector || j < fl->n) {
		if (j == fl->n || (i < pod->n_selector &&
				   pod->selector[i].key < fl->labels[j].key)) {
			merged[k++] = pod->selector[i++];
		} else if (i == pod->n_selector ||
			   fl->labels[j].key < pod->selector[i].key) {
			merged[k++] = (struct label){.key = fl->labels[j].key,
						     .value = fl->labels[j].value};
			j++;
		} else {
			if (pod->selector[i].value != fl->labels[j].value)
				return false;
			merged[k++] = pod->selector[i++];
			j++;
		}
	}
	if (k > POD_MAX_SELECTOR)
		return false;
	*out = *pod;
	memset(out->selector, 0, sizeof(out->selector));
	memcpy(out->selector, merged, k * sizeof(merged[0]));
	out->n_selector = (uint8_t)k;
	return true;
}

bool quota_pod_node_has_flavor(const struct quota_pod_names *n, int flavor,
			       const struct label *labels, unsigned count)
{
	const struct quota_pod_flavor *fl = &n->flavors[flavor];
	for (unsigned i = 0; i < fl->n; i++) {
		uint32_t v;
		if (!labels_get(labels, count, fl->labels[i].key, &v) ||
		    v != fl->labels[i].value)
			return false;
	}
	return true;
}

/* quota_pod_map's of_res and what is made with it, for `count` names. */
__attribute__((noinline)) /* once per tree and name added */
static void map_make(const struct quota_tree *t, const struct res_names *res,
		     struct quota_pod_map *map, unsigned count)
{
	int n = quota_n_resources(t);
	map->n_resources = (uint8_t)n;
	for (int r = 0; r < QUOTA_MAX_RESOURCES; r++) {
		map->slot_of[r] = 0;
		map->keep[r] = map->one[r] = 0;
	}
	for (unsigned i = 0; i < RES_MAX; i++) {
		int r = i < count ? quota_resource_find(t, res->name[i]) : -1;
		map->of_res[i] = (int8_t)(r < 0 ? -1 : r);
		map->refused[i] = i != RES_PODS && r < 0 ? -1 : 0;
		if (r < 0 || r >= n)
			continue;
		if (i == RES_PODS) {
			map->one[r] = 1; /* Kueue counts a pod as 1 "pods" */
		} else {
			map->slot_of[r] = (uint8_t)i;
			map->keep[r] = -1;
		}
	}
	map->count = count;
}

/* The first slot of `request` the map refuses (some is). */
__attribute__((noinline, cold))
static unsigned first_refused(const struct quota_pod_map *map,
			      const struct res_vec *request)
{
	unsigned i = 0;
	while (i < RES_MAX - 1 && (request->v[i] & map->refused[i]) == 0)
		i++;
	return i;
}

typedef int64_t qp_lanes __attribute__((vector_size(16)));

/* Slots i and i + 1 of the request, and-ed with the map's refusal mask. */
static inline qp_lanes refused_pair(const struct quota_pod_map *map,
				    const struct res_vec *request, unsigned i)
{
	qp_lanes v, m;
	memcpy(&v, &request->v[i], sizeof(v));
	memcpy(&m, &map->refused[i], sizeof(m));
	return v & m;
}

int quota_pod_charge(const struct quota_tree *t, const struct res_names *res,
		     struct quota_pod_map *map, const struct res_vec *request,
		     int64_t *out, unsigned *missing)
{
	/* Relaxed: a name is written before the count that covers it is
	 * published by the control thread, and a pod requests a named
	 * resource only after it was named (its template was checked then). */
	unsigned count = __atomic_load_n(&res->count, __ATOMIC_RELAXED);
	if (map->count != count)
		map_make(t, res, map, count);
	/* One OR over the request, two slots at a time (GCC's and clang's
	 * vector extension), unrolled: no branch per slot. */
	_Static_assert(RES_MAX == 16, "eight pairs below");
	qp_lanes refused = refused_pair(map, request, 0) |
			   refused_pair(map, request, 2) |
			   refused_pair(map, request, 4) |
			   refused_pair(map, request, 6) |
			   refused_pair(map, request, 8) |
			   refused_pair(map, request, 10) |
			   refused_pair(map, request, 12) |
			   refused_pair(map, request, 14);
	if ((refused[0] | refused[1]) != 0) {
		*missing = first_refused(map, request);
		return -ENOENT;
	}
	for (unsigned r = 0; r < map->n_resources; r++)
		out[r] = (request->v[map->slot_of[r]] & map->keep[r]) | map->one[r];
	return 0;
}
