/* The policy the daemon's producers are held to (policy/policy.h): the
 * rule of a producer's identity, a template's admission (its namespace and
 * PriorityClass), the policy put in force by producers_set_policy(), by
 * OP_POLICY (admins: show, reload, apply) and by the daemon's SIGHUP
 * (producers_reload_policy), which closes the connections whose templates
 * it refuses. Preemption reads an identity's rule here too. Calls no other
 * file of the module.
 * Always under the producers' lock: a template or a preemption sees one
 * policy whole. Cost: a change admits every connected producer's templates
 * again, once.
 */
#include "ingest/producers_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/control_ops.h"
#include "ingest/control_server.h"
#include "ingest/priority.h"
#include "base/base.h"
#include "policy/policy.h"
#include "shm/shm.h"

/* The identity of `pr` as refusals name it. */
static void identity_text(const struct producers *p, const struct producer *pr,
			  char *buf, size_t len)
{
	const struct state_identity *id = &p->identities[pr->owner - 1];
	snprintf(buf, len, "uid %u, name \"%s\"", (unsigned)id->uid, id->name);
}

/* The rule of the policy for `pr`'s identity; NULL: none (or no policy). */
const struct policy_rule *prod_rule_of(const struct producers *p,
				       const struct producer *pr)
{
	const struct state_identity *id = &p->identities[pr->owner - 1];
	return policy_find_local(p->policy, id->uid, id->name);
}

/* The namespace (interned; 0: unknown) of pods of group `group`, read from
 * the group's encoding (shm/pod_group.h), which holds it. Under the lock
 * (one scratch). */
uint32_t prod_group_namespace(const struct producers *p, uint32_t group)
{
	static struct pod_group g;
	const char *s = group != 0 ? intern_str(p->strings, group) : NULL;
	if (s == NULL || pod_group_decode(s, intern_len(p->strings, group), &g) < 0)
		return 0;
	return g.ns;
}

/* Whether `pr` may register `pod`: its namespace and its PriorityClass
 * (as named, before the globalDefault class is filled in) against the
 * policy (policy_admit: with none, system- classes are for admin
 * connections only). A gang is in the pod's own namespace, so joining one
 * needs that namespace too. Returns 0 or -EPERM with a message. */
int prod_admit_template(struct producers *p, enum producer_role role,
			const struct producer *pr, const struct pod_spec *pod,
			char *err, size_t err_len)
{
	uint32_t ns_id = prod_group_namespace(p, pod->group);
	const char *ns = ns_id != 0 ? intern_str(p->strings, ns_id) : "";
	const char *cls = pod->priority_class ? intern_str(p->strings,
							   pod->priority_class) : NULL;
	char who[128];
	identity_text(p, pr, who, sizeof(who));
	int at = snprintf(err, err_len, "template: ");
	return policy_admit(p->policy, prod_rule_of(p, pr), role == ROLE_ADMIN, who, ns,
			    cls, err + at, err_len - (size_t)at);
}

int producers_set_policy(struct producers *p, struct policy *pol, const char *path)
{
	char *copy = path != NULL ? strdup(path) : NULL;
	if (path != NULL && copy == NULL)
		return -ENOMEM;
	pthread_mutex_lock(&p->lock);
	policy_free(p->policy);
	p->policy = pol;
	free(p->policy_path);
	p->policy_path = copy;
	pthread_mutex_unlock(&p->lock);
	return 0;
}

/* After a policy change (under the lock): every producer connection
 * holding a template the policy in force refuses is disconnected (its
 * placements stay with its identity), so a narrower policy takes effect
 * now rather than at its next registration. A template's class as
 * resolved may be the globalDefault one, which it need not have named:
 * that class is not checked again. Returns how many were disconnected. */
static unsigned revoke_templates(struct producers *p)
{
	static struct pod_spec pod; /* under the lock; too big for a stack */
	uint32_t dflt = 0;
	for (uint32_t i = 0; p->classes != NULL && i < p->classes->n; i++)
		if (p->classes->c[i].global_default)
			dflt = p->classes->c[i].name;
	unsigned gone = 0;
	for (uint32_t i = 0; i < PRODUCERS_MAX; i++) {
		struct producer *pr = p->table[i];
		if (pr == NULL || pr->role == ROLE_ADMIN)
			continue;
		for (uint32_t t = 0; t < pr->n_templates; t++) {
			char why[512];
			pod = pr->templates[t];
			if (pod.priority_class == dflt)
				pod.priority_class = 0;
			if (prod_admit_template(p, (enum producer_role)pr->role, pr, &pod, why,
					   sizeof(why)) == 0)
				continue;
			log_msg(LOG_LEVEL_WARN, "policy: producer %u (connection %llu): its "
				"%s (template %u); disconnecting it", pr->id,
				(unsigned long long)pr->conn, why, t + 1);
			control_server_disconnect(pr->server, pr->conn);
			gone++;
			break;
		}
	}
	return gone;
}

/* Puts `pol` in force (under the lock), closing the connections whose
 * templates it refuses, and logs it. */
static void install_policy(struct producers *p, struct policy *pol)
{
	policy_free(p->policy);
	p->policy = pol;
	unsigned gone = revoke_templates(p);
	log_msg(LOG_LEVEL_INFO, "policy: %u rule(s) from %s in force; %u "
		"producer connection(s) closed for templates it refuses",
		policy_rules(pol), policy_source(pol), gone);
}

int producers_reload_policy(struct producers *p, char *err, size_t err_len)
{
	struct policy *pol = NULL;
	int rc;
	pthread_mutex_lock(&p->lock);
	if (p->policy_path == NULL)
		rc = errmsg_rc(-ENOENT, err, err_len, "policy reload: the daemon "
			       "was started without --policy, so there is no file "
			       "to read again");
	else
		rc = policy_load_file(p->policy_path, &pol, err, err_len);
	if (rc == 0)
		install_policy(p, pol);
	pthread_mutex_unlock(&p->lock);
	return rc;
}

/* OP_POLICY (admins; under the lock): show, reload from --policy, or apply
 * the body. A refused policy leaves the one in force; either way the
 * answer shows the one in force. Templates registered before a change
 * keep their admission; preemptions read the policy in force. */
void prod_handle_policy(struct producers *p, struct control_server *s,
			uint64_t conn, uint32_t rid, uint32_t action,
			const void *body, uint32_t len)
{
	struct policy *pol = NULL;
	char err[1024];
	int rc = 0;
	if (action == OP_POLICY_RELOAD) {
		if (p->policy_path == NULL)
			rc = errmsg_rc(-ENOENT, err, sizeof(err), "policy reload: the "
				       "daemon was started without --policy, so there "
				       "is no file to read again; `shmsched policy "
				       "apply FILE` applies one");
		else
			rc = policy_load_file(p->policy_path, &pol, err, sizeof(err));
	} else if (action == OP_POLICY_APPLY) {
		struct ucred peer = {0};
		char source[96];
		control_server_peer(s, conn, &peer);
		snprintf(source, sizeof(source), "(applied through the admin socket "
			 "by uid %u)", (unsigned)peer.uid);
		rc = policy_parse(body, len, source, &pol, err, sizeof(err));
	} else if (action != OP_POLICY_SHOW) {
		rc = errmsg_rc(-EINVAL, err, sizeof(err), "policy: action %u; "
			       "expected 0 (show), 1 (reload) or 2 (apply)", action);
	}
	if (rc < 0) {
		control_server_reply_error(s, conn, rid, -rc, "%s", err);
		return;
	}
	if (pol != NULL)
		install_policy(p, pol);
	static char out[sizeof(struct op_policy_shown) + POLICY_BYTES_MAX];
	struct op_policy_shown h = {0};
	size_t text_len = 0;
	if (p->policy != NULL) {
		const char *text = policy_text(p->policy, &text_len);
		h.loaded = 1;
		h.rules = policy_rules(p->policy);
		snprintf(h.source, sizeof(h.source), "%s", policy_source(p->policy));
		memcpy(out + sizeof(h), text, text_len);
	}
	h.text_bytes = (uint32_t)text_len;
	memcpy(out, &h, sizeof(h));
	control_server_reply(s, conn, rid, out, (uint32_t)(sizeof(h) + text_len), -1);
}
