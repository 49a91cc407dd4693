/* Node leases on the producers' node path (issue 38): a renewal
 * (NODE_EVENT_LEASE on the admin socket) and the unreachable taint.
 *
 * The timing is the daemon's (daemon/lease_internal.h: which node is
 * Unknown, from an injected clock); this file turns its answer into node
 * updates through the path every node event takes (cluster_apply, the
 * store's node_changed, a queue event for waiting pods), so the engine's
 * existing taint filter keeps new pods off an Unknown node unless they
 * tolerate node.kubernetes.io/unreachable:NoExecute (Kubernetes'
 * node lifecycle controller adds that taint, UnreachableTaintTemplate in
 * pkg/controller/nodelifecycle/node_lifecycle_controller.go).
 *
 * Invariant, under the producers' lock: after producers_sync_unreachable
 * or a renewal, a leased node carries the taint exactly when its lease is
 * Unknown. An admin's node update that drops or adds the taint meanwhile
 * is corrected at the next sync. The renewal and the sync read the lease
 * state under this lock, so a renewal that races the daemon's expiry
 * cannot leave a Ready node tainted: the sync after the expiry reads the
 * state the renewal left.
 */
#include "ingest/producers_internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ingest/control_server.h"
#include "base/base.h"
#include "shm/shm.h"
#include "workers/workers.h"

void producers_set_leases(struct producers *p, int (*renew)(void *, uint32_t),
			  int (*state)(void *, uint32_t), void *arg)
{
	p->lease_renew = renew;
	p->lease_state = state;
	p->lease_arg = arg;
}

static int taint_index(const struct node_spec *n, uint32_t key)
{
	for (int i = 0; i < n->n_taints; i++)
		if (n->taints[i].key == key && n->taints[i].effect == TAINT_NO_EXECUTE)
			return i;
	return -1;
}

/* Node at `slot` made to carry the taint (want) or not. 1: changed; 0:
 * already so (or no room: logged); negative errno. */
static int set_taint(struct producers *p, const struct snapshot *snap,
		     uint32_t slot, uint32_t key, bool want)
{
	static struct node_event ev; /* under the lock alone */
	const struct node_spec *n = &snap->nodes[slot];
	int at = taint_index(n, key);
	if ((at >= 0) == want)
		return 0;
	memset(&ev, 0, sizeof(ev));
	ev.kind = NODE_EVENT_UPDATE;
	ev.name = n->name;
	ev.spec = *n;
	if (want) {
		if (n->n_taints >= NODE_MAX_TAINTS) {
			log_msg(LOG_LEVEL_WARN, "node %s: its lease expired, but it "
				"has %u taints already, the most a node may: not "
				"tainted %s:NoExecute", intern_str(p->strings, n->name),
				(unsigned)n->n_taints, PRODUCERS_UNREACHABLE_TAINT);
			return 0;
		}
		ev.spec.taints[ev.spec.n_taints++] = (struct taint){
			.key = key, .value = 0, .effect = TAINT_NO_EXECUTE};
	} else {
		memmove(&ev.spec.taints[at], &ev.spec.taints[at + 1],
			(size_t)(n->n_taints - at - 1) * sizeof(ev.spec.taints[0]));
		ev.spec.n_taints--;
		memset(&ev.spec.taints[ev.spec.n_taints], 0, sizeof(ev.spec.taints[0]));
	}
	char err[512];
	int rc = cluster_apply(p->cluster, &ev, 1, err, sizeof(err));
	if (rc < 0) {
		log_msg(LOG_LEVEL_WARN, "node %s: the unreachable taint not %s: %s",
			intern_str(p->strings, n->name), want ? "given" : "lifted", err);
		return rc;
	}
	log_msg(LOG_LEVEL_INFO, "node %s: %s", intern_str(p->strings, ev.name),
		want ? "lease expired: Unknown, tainted " PRODUCERS_UNREACHABLE_TAINT
		       ":NoExecute"
		     : "lease renewed: Ready, the unreachable taint lifted");
	if (p->persist.node_changed != NULL)
		p->persist.node_changed(p->persist.arg, &ev);
	/* A lifted taint may let waiting pods fit (a new taint helps none). */
	if (!want)
		prod_publish(p, queue_event_node(slot));
	return 1;
}

static int taint_key(struct producers *p, uint32_t *key)
{
	return intern_add_str(p->strings, PRODUCERS_UNREACHABLE_TAINT, key);
}

int producers_sync_unreachable(struct producers *p)
{
	if (p->lease_state == NULL)
		return 0;
	pthread_mutex_lock(&p->lock);
	uint32_t key;
	int rc = taint_key(p, &key);
	int changed = 0;
	for (uint32_t i = 0; rc == 0 && i < cluster_snapshot(p->cluster)->n_slots; i++) {
		/* The current snapshot each turn: set_taint publishes a new
		 * one. This thread holds the writer's lock, so none is freed
		 * under it. */
		const struct snapshot *snap = cluster_snapshot(p->cluster);
		if (!snap->present[i])
			continue;
		int st = p->lease_state(p->lease_arg, snap->nodes[i].name);
		if (st < 0)
			continue;
		int k = set_taint(p, snap, i, key, st == 1);
		if (k < 0)
			rc = k;
		else
			changed += k;
	}
	pthread_mutex_unlock(&p->lock);
	return rc < 0 ? rc : changed;
}

void prod_handle_lease(struct producers *p, struct control_server *s,
		       uint64_t conn, uint32_t rid, const void *body, uint32_t len)
{
	const char *name = body;
	int shown = (int)(len > 253 ? 253 : len);
	if (p->lease_renew == NULL) {
		control_server_reply_error(s, conn, rid, ENOTSUP, "node %.*s: lease: "
					   "this daemon keeps no node leases", shown,
					   name);
		return;
	}
	/* A lookup, never an add: a refused request must not grow the
	 * table. */
	uint32_t id;
	int64_t slot = -1;
	if (intern_find(p->strings, name, len, &id))
		slot = cluster_slot_of(p->cluster, id);
	if (slot < 0) {
		control_server_reply_error(s, conn, rid, ENOENT, "node %.*s: lease: "
					   "no such node", shown, name);
		return;
	}
	int was = p->lease_renew(p->lease_arg, id);
	if (was < 0) {
		control_server_reply_error(s, conn, rid, -was, "node %.*s: lease: %s",
					   shown, name, strerror(-was));
		return;
	}
	uint32_t key;
	int rc = taint_key(p, &key);
	if (rc == 0)
		rc = set_taint(p, cluster_snapshot(p->cluster), (uint32_t)slot, key,
			       false);
	if (rc < 0) {
		control_server_reply_error(s, conn, rid, -rc, "node %.*s: lease "
					   "renewed, but its unreachable taint not "
					   "lifted: %s", shown, name, strerror(-rc));
		return;
	}
	control_server_reply(s, conn, rid, NULL, 0, -1);
}
