/* OP_FAILURE (issue 38 item 5): a placed pod's failure, reported by the
 * producer that owns the placement (ownership as OP_RELEASE checks it:
 * the record's owner is the connection's identity, or the caller is an
 * admin), resolved here to the numbers the daemon's quarantine counts
 * (struct producers_failure: the placement's owner and template, its
 * node, the node's pool: the value of the pool label, and how many
 * present nodes share it); and the admins' view of the quarantined pools
 * (LIST) and their release (RELEASE, `shmsched pool release`).
 *
 * Runs under the producers' lock on a control thread, as every request:
 * the snapshot read here is not freed under it. A report scans the
 * snapshot's nodes once (the pool's size): reports are rare, the slow
 * path's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "ingest/control_ops.h"
#include "ingest/control_proto.h"
#include "ingest/control_server.h"
#include "ingest/producers_internal.h"
#include "shm/shm.h"

void producers_set_quarantine(struct producers *p, const struct producers_quarantine *q)
{
	p->quarantine = *q;
}

/* The pool label's value on node `n` (0: none, or the label is no string
 * the table holds). */
static uint32_t pool_of(const struct node_spec *n, uint32_t key)
{
	uint32_t v;
	if (key != 0 && labels_get(n->labels, n->n_labels, key, &v) && v != 0)
		return v;
	return 0;
}

bool prod_unhealthy(const struct producers *p, uint64_t id)
{
	for (uint32_t i = 0; i < p->n_unhealthy; i++)
		if (p->unhealthy[i] == id)
			return true;
	return false;
}

/* Marks placement `id` unhealthy (see struct producers). Full: the dead
 * entries pruned; still full: the oldest report forgotten (logged), the
 * cautious side (a pod forgotten counts healthy, which its budget
 * guards). */
static void unhealthy_add(struct producers *p, uint64_t id)
{
	if (prod_unhealthy(p, id))
		return;
	if (p->unhealthy == NULL &&
	    (p->unhealthy = calloc(PROD_UNHEALTHY_MAX, sizeof(*p->unhealthy))) == NULL) {
		log_msg(LOG_LEVEL_WARN, "failure report: placement %llu not marked "
			"unhealthy for the drain: out of memory",
			(unsigned long long)id);
		return;
	}
	if (p->n_unhealthy == PROD_UNHEALTHY_MAX) {
		uint32_t k = 0;
		for (uint32_t i = 0; i < p->n_unhealthy; i++)
			if (placements_get(p->placements, p->unhealthy[i]) != NULL)
				p->unhealthy[k++] = p->unhealthy[i];
		p->n_unhealthy = k;
	}
	if (p->n_unhealthy == PROD_UNHEALTHY_MAX) {
		log_msg(LOG_LEVEL_WARN, "failure report: %u live placements marked "
			"unhealthy, the most kept: placement %llu's mark forgotten",
			PROD_UNHEALTHY_MAX, (unsigned long long)p->unhealthy[0]);
		memmove(p->unhealthy, p->unhealthy + 1,
			(PROD_UNHEALTHY_MAX - 1) * sizeof(*p->unhealthy));
		p->n_unhealthy--;
	}
	p->unhealthy[p->n_unhealthy++] = id;
}

static void report(struct producers *p, enum producer_role role,
		   struct control_server *s, uint64_t conn, uint32_t rid,
		   const void *body, uint32_t len)
{
	char err[256];
	struct producer *pr = prod_registered(p, role, s, conn, rid,
					      "reporting a failure");
	if (pr == NULL)
		return;
	struct control_failure f;
	if (control_failure_split(body, len, &f, err, sizeof(err)) < 0) {
		control_server_reply_error(s, conn, rid, EINVAL, "%s", err);
		return;
	}
	const struct placement_record *rec = placements_get(p->placements,
							    f.placement_id);
	if (rec == NULL) {
		control_server_reply_error(s, conn, rid, ENOENT, "failure report: "
					   "placement %llu: no such placement (never "
					   "made, or released already)",
					   (unsigned long long)f.placement_id);
		return;
	}
	if (rec->owner != pr->owner && role != ROLE_ADMIN) {
		control_server_reply_error(s, conn, rid, EPERM, "failure report: "
					   "placement %llu belongs to another producer: "
					   "a producer reports its own pods' failures",
					   (unsigned long long)f.placement_id);
		return;
	}
	struct ledger *l = cluster_ledger(p->cluster);
	if (ledger_node_generation(l, rec->slot) != rec->node_gen) {
		control_server_reply_error(s, conn, rid, ESTALE, "failure report: "
					   "placement %llu: its node was removed",
					   (unsigned long long)f.placement_id);
		return;
	}
	const char *label = p->quarantine.pool_label;
	uint32_t key;
	if (!intern_find(p->strings, label, strlen(label), &key))
		key = 0;
	const struct snapshot *snap = cluster_snapshot(p->cluster);
	struct producers_failure pf = {
		.placement_id = f.placement_id, .owner = rec->owner,
		.template = rec->pod_name, .node = rec->slot,
		.pool = rec->slot < snap->n_slots && snap->present[rec->slot]
			? pool_of(&snap->nodes[rec->slot], key) : 0,
		.reason = f.reason, .reason_len = f.reason_len,
	};
	for (uint32_t i = 0; i < snap->n_slots; i++) {
		if (!snap->present[i])
			continue;
		pf.total_nodes++;
		pf.pool_nodes += pf.pool != 0 && pool_of(&snap->nodes[i], key) == pf.pool;
	}
	unhealthy_add(p, f.placement_id);
	struct op_failure_result out = {OP_FAILURE_UNPOOLED, 0};
	if (pf.pool != 0)
		out.verdict = (uint32_t)p->quarantine.report(p->quarantine.arg, &pf);
	log_msg(LOG_LEVEL_INFO, "failure report: placement %llu on node %s "
		"(pool %s=%s): %.*s", (unsigned long long)f.placement_id,
		intern_str(p->strings, snap->nodes[rec->slot].name), label,
		pf.pool != 0 ? intern_str(p->strings, pf.pool) : "(none)",
		(int)f.reason_len, f.reason);
	control_server_reply(s, conn, rid, &out, sizeof(out), -1);
}

#define POOL_TEXT_MAX (64u * 1024u)

static void pools(struct producers *p, struct control_server *s, uint64_t conn,
		  uint32_t rid, uint32_t action, const void *body, uint32_t len)
{
	char err[256];
	struct op_pools_shown head = {0};
	if (action == OP_FAILURE_POOL_RELEASE) {
		struct control_pool_release r;
		if (control_pool_release_split(body, len, &r, err, sizeof(err)) < 0) {
			control_server_reply_error(s, conn, rid, EINVAL, "%s", err);
			return;
		}
		uint32_t pool, tpl = 0;
		/* A name the table does not hold is no pool's, no template's:
		 * nothing to lift. */
		bool known = intern_find(p->strings, r.pool, r.pool_len, &pool) &&
			     (r.template == NULL ||
			      intern_find(p->strings, r.template, r.template_len, &tpl));
		head.released = known ? p->quarantine.release(p->quarantine.arg,
							      pool, tpl) : 0;
		log_msg(LOG_LEVEL_INFO, "pool release: pool %.*s%s%.*s: %u "
			"quarantines lifted", (int)r.pool_len, r.pool,
			r.template != NULL ? ", template " : "",
			(int)r.template_len, r.template != NULL ? r.template : "",
			head.released);
	} else if (len != 0) {
		control_server_reply_error(s, conn, rid, EINVAL, "pool list: a body "
					   "of %u bytes; expected none", len);
		return;
	}
	char *ans = malloc(sizeof(head) + POOL_TEXT_MAX);
	if (ans == NULL) {
		control_server_reply_error(s, conn, rid, ENOMEM, "pools: out of memory");
		return;
	}
	char *text = ans + sizeof(head);
	text[0] = '\0';
	head.quarantined = p->quarantine.list(p->quarantine.arg, p->strings, text,
					      POOL_TEXT_MAX);
	size_t n = action == OP_FAILURE_POOL_LIST ? strnlen(text, POOL_TEXT_MAX - 1) : 0;
	memcpy(ans, &head, sizeof(head));
	control_server_reply(s, conn, rid, ans, (uint32_t)(sizeof(head) + n), -1);
	free(ans);
}

void prod_handle_failure(struct producers *p, enum producer_role role,
			 struct control_server *s, uint64_t conn, uint32_t rid,
			 uint32_t action, const void *body, uint32_t len)
{
	if (p->quarantine.report == NULL) {
		control_server_reply_error(s, conn, rid, ENOTSUP, "failure reports: "
					   "this daemon keeps no pool quarantine");
		return;
	}
	if (action == OP_FAILURE_REPORT) {
		report(p, role, s, conn, rid, body, len);
	} else if (action == OP_FAILURE_POOL_LIST || action == OP_FAILURE_POOL_RELEASE) {
		if (role != ROLE_ADMIN)
			control_server_reply_error(s, conn, rid, EPERM, "pool "
						   "quarantines need the admin socket%s: "
						   "producers may not change the cluster",
						   p->admin_hint);
		else
			pools(p, s, conn, rid, action, body, len);
	} else {
		control_server_reply_error(s, conn, rid, EPROTO, "failure request: "
					   "action %u: expected 0 (report), 1 (pool "
					   "list) or 2 (pool release)", action);
	}
}
