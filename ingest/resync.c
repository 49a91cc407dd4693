/* Resync: see resync.h. Three steps, and nothing changes before the third:
 * parse the declared pods (compactly: what a pod's use is, not its whole
 * spec), sort them by (node slot, name), then walk the live records once,
 * matching each against the sorted list by binary search. Cost:
 * O(pods log pods + records used).
 */
#include "ingest/resync.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/base.h"
#include "ingest/cluster_load.h"
#include "ingest/k8s_json.h"
#include "workers/workers.h"

/* A declared pod: its node, its name, and its use (the pod fields
 * ledger_account() and devices_assign() read). */
struct declared {
	uint32_t slot;
	uint32_t ns_name;
	bool matched;
	struct pod_spec use;
};

struct collect {
	struct cluster *cluster;
	int64_t scope;          /* a slot, or -1: every node */
	struct declared *pods;
	size_t n, cap, max;
	struct resync_result *out;
};

static int on_node(void *arg, const struct node_spec *node, char *err,
		   size_t err_len)
{
	(void)arg;
	(void)node;
	return errmsg_rc(-EINVAL, err, err_len, "a Node: a resync declares Pods "
			 "only (node changes: shmsched node)");
}

static int on_pod(void *arg, const struct pod_spec *pod,
		  const struct k8s_pod_meta *meta, char *err, size_t err_len)
{
	struct collect *c = arg;
	int64_t slot = pod->node_name ? cluster_slot_of(c->cluster, pod->node_name) : -1;
	if (pod->node_name == 0 || meta->phase == POD_PHASE_SUCCEEDED ||
	    meta->phase == POD_PHASE_FAILED || slot < 0 ||
	    (c->scope >= 0 && slot != c->scope)) {
		c->out->skipped++;
		return 0;
	}
	if (c->n == c->max)
		return errmsg_rc(-ENOSPC, err, err_len, "more bound pods than the "
				 "daemon's %zu placement records", c->max);
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 1024;
		struct declared *p = realloc(c->pods, cap * sizeof(*p));
		if (p == NULL)
			return errmsg_rc(-ENOMEM, err, err_len, "out of memory");
		c->pods = p;
		c->cap = cap;
	}
	struct declared *d = &c->pods[c->n++];
	memset(d, 0, sizeof(*d));
	d->slot = (uint32_t)slot;
	d->ns_name = meta->ns_name;
	/* Only what counts: requests, non-zero requests, ports, devices. */
	d->use.ns_name = meta->ns_name;
	d->use.node_name = pod->node_name;
	d->use.request = pod->request;
	d->use.nonzero_cpu_milli = pod->nonzero_cpu_milli;
	d->use.nonzero_mem_bytes = pod->nonzero_mem_bytes;
	d->use.num_gpu = pod->num_gpu;
	d->use.gpu_milli = pod->gpu_milli;
	d->use.n_gpu_models = pod->n_gpu_models;
	memcpy(d->use.gpu_models, pod->gpu_models, sizeof(pod->gpu_models));
	d->use.exclusive_cores = pod->exclusive_cores;
	d->use.n_ports = pod->n_ports;
	memcpy(d->use.ports, pod->ports, sizeof(pod->ports));
	return 0;
}

static int cmp_declared(const void *a, const void *b)
{
	const struct declared *x = a, *y = b;
	if (x->slot != y->slot)
		return x->slot < y->slot ? -1 : 1;
	return (x->ns_name > y->ns_name) - (x->ns_name < y->ns_name);
}

/* The first unmatched declared pod of (slot, name), or NULL. */
static struct declared *find(struct collect *c, uint32_t slot, uint32_t name)
{
	struct declared key = {.slot = slot, .ns_name = name};
	size_t lo = 0, hi = c->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (cmp_declared(&c->pods[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < c->n && cmp_declared(&c->pods[lo], &key) == 0; lo++)
		if (!c->pods[lo].matched)
			return &c->pods[lo];
	return NULL;
}

static bool same_use(const struct placement_record *r, const struct pod_spec *p)
{
	struct pod_spec had;
	placement_use(r, &had);
	return memcmp(&had.request, &p->request, sizeof(had.request)) == 0 &&
	       had.nonzero_cpu_milli == p->nonzero_cpu_milli &&
	       had.nonzero_mem_bytes == p->nonzero_mem_bytes &&
	       had.n_ports == p->n_ports &&
	       memcmp(had.ports, p->ports, p->n_ports * sizeof(p->ports[0])) == 0 &&
	       (r->dev.gpu_mask != 0 || r->dev.n_cores != 0) ==
		       (p->num_gpu != 0 || p->exclusive_cores != 0);
}

/* Gives back what record `id` holds and frees it. */
static void give_back(struct cluster *c, struct placements *records, uint64_t id,
		      const struct placement_record *r, const struct resync_hooks *h)
{
	struct pod_spec pod;
	placement_use(r, &pod);
	ledger_account(cluster_ledger(c), r->slot, &pod, &r->dev, -1);
	/* Told first: see struct resync_hooks. */
	if (h != NULL && h->freed != NULL)
		h->freed(h->arg, id);
	placements_free(records, id);
}

int resync_apply(struct cluster *c, struct placements *records,
		 struct intern *strings, struct res_names *res,
		 const char *name, const char *buf, size_t len, const char *node,
		 const struct resync_hooks *hooks, struct resync_result *out,
		 char *err, size_t err_len)
{
	memset(out, 0, sizeof(*out));
	struct collect col = {.cluster = c, .scope = -1, .out = out,
			      .max = placements_capacity(records)};
	if (node != NULL && node[0] != '\0') {
		uint32_t id;
		if (!intern_find(strings, node, strlen(node), &id) ||
		    (col.scope = cluster_slot_of(c, id)) < 0)
			return errmsg_rc(-ENOENT, err, err_len, "resync: node %s: no "
					 "such node", node);
	}
	struct k8s_ctx ctx = {.strings = strings, .res = res, .no_new_resources = true,
			      .cluster_file = true};
	struct k8s_visitor v = {.arg = &col, .node = on_node, .pod = on_pod};
	int rc = k8s_load_buffer(name, buf, len, &ctx, &v, err, err_len);
	if (rc < 0) {
		free(col.pods);
		return rc;
	}
	if (col.n > 1)
		qsort(col.pods, col.n, sizeof(*col.pods), cmp_declared);

	const struct snapshot *snap = cluster_snapshot(c);
	struct ledger *l = cluster_ledger(c);
	uint32_t hw = placements_high_water(records);
	for (uint32_t i = 0; i < hw; i++) {
		uint64_t id;
		const struct placement_record *r = placements_at(records, i, &id);
		if (r == NULL || !ledger_slot_current(l, snap, r->slot, r->node_gen) ||
		    (col.scope >= 0 && r->slot != (uint32_t)col.scope))
			continue; /* out of scope, or its node is gone */
		struct declared *d = r->pod_name ? find(&col, r->slot, r->pod_name)
						 : NULL;
		if (d != NULL && same_use(r, &d->use)) {
			d->matched = true;
			out->unchanged++;
			continue;
		}
		give_back(c, records, id, r, hooks);
		if (d != NULL) {
			/* Recorded again below with its declared use. */
			d->use.node_name = UINT32_MAX; /* mark: resized */
			out->resized++;
		} else {
			out->removed++;
		}
	}
	for (size_t k = 0; k < col.n; k++) {
		struct declared *d = &col.pods[k];
		if (d->matched)
			continue;
		bool resized = d->use.node_name == UINT32_MAX;
		d->use.node_name = snap->nodes[d->slot].name;
		struct device_assignment dev = {0};
		if (devices_wanted(&d->use)) {
			struct device_view free_now;
			const struct node_spec *n = &snap->nodes[d->slot];
			ledger_load_devices(ledger_node(l, d->slot), &n->devices, &free_now);
			devices_assign(&n->devices, &free_now, &d->use, -1, &dev);
		}
		uint64_t id;
		rc = cluster_record_bound(c, records, d->slot, &d->use, &dev, &id);
		if (rc < 0) {
			/* Records ran out between the count and here (workers
			 * placed meanwhile): what is done stays done. */
			errmsg_rc(rc, err, err_len, "resync: no placement record "
				  "left for pod %s after %llu added: the daemon "
				  "keeps %u (--max-placements)",
				  intern_str(strings, d->ns_name),
				  (unsigned long long)out->added,
				  placements_capacity(records));
			break;
		}
		if (!resized)
			out->added++;
		if (hooks != NULL && hooks->added != NULL)
			hooks->added(hooks->arg, id);
	}
	free(col.pods);
	return rc;
}

int resync_read_fd(int fd, uint64_t max, char **buf, size_t *len, char *err,
		   size_t err_len)
{
	*buf = NULL;
	*len = 0;
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return errmsg_rc(-EINVAL, err, err_len, "resync: the pods must "
				 "come as a regular file");
	if ((uint64_t)st.st_size > max)
		return errmsg_rc(-EFBIG, err, err_len, "resync: the file has %lld "
				 "bytes, at most %llu are read", (long long)st.st_size,
				 (unsigned long long)max);
	/* Its size now, plus one byte to see it grew; never past max + 1. */
	size_t cap = (size_t)st.st_size + 1;
	char *b = malloc(cap + 1);
	if (b == NULL)
		return errmsg_rc(-ENOMEM, err, err_len, "resync: out of memory for "
				 "%zu bytes", cap);
	size_t n = 0;
	for (;;) {
		if (n == cap) {
			if (cap > max) {
				free(b);
				return errmsg_rc(-EFBIG, err, err_len, "resync: the "
						 "file grew past %llu bytes while "
						 "it was read", (unsigned long long)max);
			}
			size_t next = cap * 2 > max + 1 ? (size_t)max + 1 : cap * 2;
			char *nb = realloc(b, next + 1);
			if (nb == NULL) {
				free(b);
				return errmsg_rc(-ENOMEM, err, err_len, "resync: out "
						 "of memory for %zu bytes", next);
			}
			b = nb;
			cap = next;
		}
		ssize_t r = pread(fd, b + n, cap - n, (off_t)n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;
			free(b);
			return errmsg_rc(-e, err, err_len, "resync: reading the "
					 "file: %s", strerror(e));
		}
		if (r == 0)
			break; /* the end, wherever a truncation put it */
		n += (size_t)r;
	}
	if (n > max) {
		free(b);
		return errmsg_rc(-EFBIG, err, err_len, "resync: the file grew past "
				 "%llu bytes while it was read",
				 (unsigned long long)max);
	}
	b[n] = '\0';
	*buf = b;
	*len = n;
	return 0;
}
