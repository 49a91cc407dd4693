/* Scheduling objects and a pod's scheduling fields: priority and
 * PriorityClasses, the wait annotation, gangs (a pod's pod-group label,
 * Workloads, PodGroups) and PodDisruptionBudgets. Part of the Kubernetes
 * decoder: see k8s_json_load.c's note and k8s_json_internal.h. */
#include "ingest/k8s_json_internal.h"

/* spec.priority, priorityClassName and preemptionPolicy, as given (the
 * class is resolved by ingest/priority.h). */
int kj_pod_priority(struct decoder *d, const json_t *spec)
{
	struct pod_spec *p = &d->pod;
	json_t *v;
	const char *s;
	size_t len;
	char q[JSON_IN_SHOW_MAX + 16];
	int rc = json_in_get(&d->in, spec, "priority", JSON_IN_INT, &v);
	if (rc < 0)
		return rc;
	if (v != NULL) {
		json_int_t n = json_integer_value(v);
		if (n < INT32_MIN || n > INT32_MAX)
			return json_in_fail_at(&d->in, "priority", -EINVAL, "%" JSON_INTEGER_FORMAT
				       " is not a 32-bit integer", n);
		p->priority = (int32_t)n;
		p->priority_flags |= POD_PRIORITY_GIVEN;
	}
	if ((rc = kj_get_id(d, spec, "priorityClassName", &p->priority_class)) < 0 ||
	    (rc = json_in_get_str(&d->in, spec, "preemptionPolicy", &s, &len)) < 0)
		return rc;
	if (len == 0)
		return 0;
	p->priority_flags |= POD_PREEMPTION_GIVEN;
	if (json_in_str_is(s, len, "Never"))
		p->priority_flags |= POD_PREEMPT_NEVER;
	else if (!json_in_str_is(s, len, "PreemptLowerPriority"))
		return json_in_fail_at(&d->in, "preemptionPolicy", -EINVAL, "%s: expected "
			       "PreemptLowerPriority or Never",
			       json_in_show_str(s, len, q, sizeof(q)));
	return 0;
}

/* The pod's own default for waiting in the queue (shm/model.h,
 * POD_WAIT): annotation shmsched.io/wait, "true" or "false". */
int kj_pod_wait(struct decoder *d, const json_t *obj)
{
	json_t *ann;
	const char *s;
	size_t len;
	char q[JSON_IN_SHOW_MAX + 16];
	int rc = kj_get_annotations(d, obj, &ann);
	if (rc < 0 || ann == NULL)
		return rc;
	size_t mark = json_in_field(&d->in, "metadata.annotations");
	json_t *v = json_object_get(ann, ANN_WAIT);
	rc = v != NULL && !json_is_null(v) ? json_in_get_str(&d->in, ann, ANN_WAIT, &s, &len) : 0;
	if (rc == 0 && v != NULL && !json_is_null(v)) {
		json_in_key(&d->in, ANN_WAIT, strlen(ANN_WAIT));
		if (json_in_str_is(s, len, "true"))
			d->pod.priority_flags |= POD_WAIT;
		else if (json_in_str_is(s, len, "false"))
			d->pod.priority_flags |= POD_NO_WAIT;
		else
			rc = json_in_fail(&d->in, -EINVAL, "%s: expected \"true\" or \"false\"",
				  json_in_show_str(s, len, q, sizeof(q)));
	}
	json_in_pop(&d->in, mark);
	return rc;
}

/* The pod's gang, named one of three ways (at most one), interned as the
 * gang table's key (ingest/priority.h):
 *   - coscheduling's label scheduling.x-k8s.io/pod-group: NAME, the
 *     PodGroup NAME of the pod's namespace: "namespace/NAME";
 *   - Kubernetes 1.36's spec.schedulingGroup.podGroupName (a
 *     scheduling.k8s.io/v1alpha2 PodGroup): "namespace/NAME" too;
 *   - Kubernetes 1.35's spec.workloadRef {name, podGroup,
 *     podGroupReplicaKey}: "namespace/WORKLOAD/GROUP", and
 *     "namespace/WORKLOAD/GROUP/KEY" for a replica (its own gang, with
 *     the group's policy). Names carry no '/', so the forms cannot meet. */
#define GANG_LABEL "scheduling.x-k8s.io/pod-group"

/* spec.KEY.FIELD as a non-empty name without '/' (or absent when
 * optional), appended to buf[*at..) after a '/'. */
static int gang_part(struct decoder *d, const json_t *ref, const char *field,
		     bool optional, char *buf, size_t *at)
{
	const char *s;
	size_t len;
	char q[JSON_IN_SHOW_MAX + 16];
	int rc = json_in_get_str(&d->in, ref, field, &s, &len);
	if (rc < 0)
		return rc;
	if (len == 0)
		return optional ? 0 : json_in_fail_at(&d->in, field, -EINVAL, "missing");
	if (memchr(s, '/', len) != NULL)
		return json_in_fail_at(&d->in, field, -EINVAL, "%s: a name has no '/'",
			       json_in_show_str(s, len, q, sizeof(q)));
	if (*at + 1 + len > INTERN_MAX_LEN)
		return json_in_fail_at(&d->in, field, -EINVAL, "too long: the gang's name is at "
			       "most %u bytes", INTERN_MAX_LEN);
	buf[(*at)++] = '/';
	memcpy(buf + *at, s, len);
	*at += len;
	return 0;
}

int kj_pod_gang(struct decoder *d, const json_t *obj, const json_t *spec,
		    const char *ns, size_t ns_len)
{
	json_t *meta = json_object_get(obj, "metadata");
	json_t *labels = json_is_object(meta) ? json_object_get(meta, "labels") : NULL;
	json_t *v = json_is_object(labels) ? json_object_get(labels, GANG_LABEL) : NULL;
	bool label = v != NULL && json_is_string(v) && json_string_length(v) > 0;
	json_t *wref = NULL, *sgroup = NULL;
	int rc = 0;
	if (spec != NULL) {
		size_t mark = json_in_field(&d->in, "spec");
		rc = json_in_get(&d->in, spec, "workloadRef", JSON_IN_OBJECT, &wref);
		if (rc == 0)
			rc = json_in_get(&d->in, spec, "schedulingGroup", JSON_IN_OBJECT, &sgroup);
		json_in_pop(&d->in, mark);
		if (rc < 0)
			return rc;
	}
	if (label + (wref != NULL) + (sgroup != NULL) > 1)
		return json_in_fail_at(&d->in, wref != NULL ? "spec.workloadRef" : "spec.schedulingGroup",
			       -EINVAL, "a pod names one gang at most (the label "
			       GANG_LABEL ", spec.workloadRef or spec.schedulingGroup)");
	char full[INTERN_MAX_LEN + 1];
	size_t at = ns_len;
	memcpy(full, ns, ns_len);
	const char *where;
	if (label) {
		/* The labels' own checks reported any other type. */
		where = "metadata.labels";
		size_t len = json_string_length(v);
		if (ns_len + 1 + len > INTERN_MAX_LEN)
			return json_in_fail_at(&d->in, where, -EINVAL, GANG_LABEL ": too long");
		full[at++] = '/';
		memcpy(full + at, json_string_value(v), len);
		at += len;
	} else if (wref != NULL) {
		where = "spec.workloadRef";
		size_t mark = json_in_field(&d->in, where);
		rc = gang_part(d, wref, "name", false, full, &at);
		if (rc == 0)
			rc = gang_part(d, wref, "podGroup", false, full, &at);
		if (rc == 0)
			rc = gang_part(d, wref, "podGroupReplicaKey", true, full, &at);
		json_in_pop(&d->in, mark);
	} else if (sgroup != NULL) {
		where = "spec.schedulingGroup";
		size_t mark = json_in_field(&d->in, where);
		rc = gang_part(d, sgroup, "podGroupName", false, full, &at);
		json_in_pop(&d->in, mark);
	} else {
		return 0;
	}
	if (rc < 0)
		return rc;
	size_t mark = json_in_field(&d->in, where);
	rc = kj_intern_here(d, full, at, &d->pod.gang);
	json_in_pop(&d->in, mark);
	return rc;
}

/* A gang's policy, scheduling.k8s.io's PodGroupPolicy (v1alpha1, a
 * Workload's podGroups[].policy) or PodGroupSchedulingPolicy (v1alpha2,
 * a PodGroup's spec.schedulingPolicy): exactly one of basic (pods placed
 * one by one: min_member 0) and gang.minCount. */
static int gang_policy(struct decoder *d, const json_t *parent, const char *key,
		       uint32_t *min_member)
{
	json_t *pol, *basic, *gang, *v;
	int rc = json_in_get(&d->in, parent, key, JSON_IN_OBJECT, &pol);
	if (rc < 0)
		return rc;
	if (pol == NULL)
		return json_in_fail_at(&d->in, key, -EINVAL, "missing: basic or gang");
	size_t mark = json_in_field(&d->in, key);
	rc = json_in_get(&d->in, pol, "basic", JSON_IN_OBJECT, &basic);
	if (rc == 0)
		rc = json_in_get(&d->in, pol, "gang", JSON_IN_OBJECT, &gang);
	if (rc == 0 && (basic != NULL) == (gang != NULL))
		rc = json_in_fail(&d->in, -EINVAL, "exactly one of basic and gang");
	if (rc == 0 && gang != NULL) {
		json_in_field(&d->in, "gang");
		rc = json_in_get(&d->in, gang, "minCount", JSON_IN_INT, &v);
		if (rc == 0 && (v == NULL || json_integer_value(v) < 1 ||
				json_integer_value(v) > 100000))
			rc = json_in_fail_at(&d->in, "minCount", -EINVAL, "%s: expected 1..100000",
				     v == NULL ? "missing" : "out of range");
		if (rc == 0)
			*min_member = (uint32_t)json_integer_value(v);
	} else if (rc == 0) {
		*min_member = 0;
	}
	json_in_pop(&d->in, mark);
	return rc;
}

/* kube-scheduler's GangScheduling waits a fixed 5 minutes for a gang. */
#define KUBE_GANG_TIMEOUT_S 300u

/* A Workload: scheduling.k8s.io/v1alpha1 (Kubernetes 1.35): each of its
 * spec.podGroups is a gang table entry "namespace/WORKLOAD/GROUP"; or
 * v1alpha2 (1.36), whose podGroupTemplates are templates for the PodGroup
 * objects a controller creates, which carry the policy: nothing to read.
 * To the visitor's pod_group, or skipped when it takes none. */
/* An object's "namespace/name", interned: how pods, PodGroups and budgets
 * are named. */
int kj_intern_ns_name(struct decoder *d, const char *ns, size_t ns_len,
			  const char *name, size_t name_len, uint32_t *id)
{
	if (ns_len + 1 + name_len > INTERN_MAX_LEN)
		return json_in_fail_at(&d->in, "metadata.name", -EINVAL, "namespace and name are "
			       "longer than %u bytes", INTERN_MAX_LEN);
	char full[INTERN_MAX_LEN + 1];
	memcpy(full, ns, ns_len);
	full[ns_len] = '/';
	memcpy(full + ns_len + 1, name, name_len);
	size_t mark = json_in_field(&d->in, "metadata.name");
	int rc = kj_intern_here(d, full, ns_len + 1 + name_len, id);
	json_in_pop(&d->in, mark);
	return rc;
}

int kj_decode_workload(struct decoder *d, const json_t *obj)
{
	const char *ns, *name, *api = "";
	size_t ns_len, name_len, api_len = 0;
	json_t *spec, *groups, *g;
	char q[JSON_IN_SHOW_MAX + 16];
	int rc = kj_object_name(d, obj, "workload", true, &ns, &ns_len, &name, &name_len);
	if (rc == 0)
		rc = json_in_get_str(&d->in, obj, "apiVersion", &api, &api_len);
	if (rc < 0)
		return rc;
	if (json_in_str_is(api, api_len, "scheduling.k8s.io/v1alpha2"))
		return 0;
	if (api_len > 0 && !json_in_str_is(api, api_len, "scheduling.k8s.io/v1alpha1")) {
		/* Another group's Workload (Kueue's kueue.x-k8s.io, say), or a
		 * version this reader does not know: a cluster file skips and
		 * counts it like any other kind. */
		if (d->ctx->cluster_file) {
			kj_count_skipped(d, "Workload", 8);
			return 0;
		}
		return json_in_fail_at(&d->in, "apiVersion", -EINVAL, "%s: expected "
			       "scheduling.k8s.io/v1alpha1 or v1alpha2",
			       json_in_show_str(api, api_len, q, sizeof(q)));
	}
	rc = json_in_get(&d->in, obj, "spec", JSON_IN_OBJECT, &spec);
	if (rc < 0)
		return rc;
	if (spec == NULL)
		return json_in_fail_at(&d->in, "spec", -EINVAL, "missing");
	size_t mark = json_in_field(&d->in, "spec");
	rc = json_in_get(&d->in, spec, "podGroups", JSON_IN_ARRAY, &groups);
	if (rc == 0 && (groups == NULL || json_array_size(groups) == 0))
		rc = json_in_fail_at(&d->in, "podGroups", -EINVAL, "missing: at least one pod group");
	size_t i, list = json_in_field(&d->in, "podGroups");
	json_array_foreach(rc == 0 ? groups : NULL, i, g) {
		size_t item = json_in_index(&d->in, i);
		struct k8s_pod_group pg = {.timeout_s = KUBE_GANG_TIMEOUT_S};
		char full[INTERN_MAX_LEN + 1];
		size_t at = ns_len;
		memcpy(full, ns, ns_len);
		if (!json_is_object(g))
			rc = json_in_fail(&d->in, -EINVAL, "not an object");
		if (rc == 0 && name_len + 1 + ns_len > INTERN_MAX_LEN)
			rc = json_in_fail(&d->in, -EINVAL, "the workload's name is too long");
		if (rc == 0) {
			full[at++] = '/';
			memcpy(full + at, name, name_len);
			at += name_len;
			rc = gang_part(d, g, "name", false, full, &at);
		}
		if (rc == 0)
			rc = gang_policy(d, g, "policy", &pg.min_member);
		if (rc == 0)
			rc = kj_intern_here(d, full, at, &pg.name);
		json_in_pop(&d->in, item);
		if (rc == 0 && d->v->pod_group != NULL) {
			if (d->in.err != NULL && d->in.err_len > 0)
				d->in.err[0] = '\0';
			rc = kj_visited(d, d->v->pod_group(d->v->arg, &pg, d->in.err,
							d->in.err_len));
		}
		if (rc < 0)
			break;
	}
	json_in_pop(&d->in, list);
	json_in_pop(&d->in, mark);
	return rc;
}

/* A PodGroup: to the visitor, or skipped when it takes none. */
int kj_decode_pod_group(struct decoder *d, const json_t *obj)
{
	struct k8s_pod_group pg = {0};
	const char *ns, *name;
	size_t ns_len, name_len;
	json_t *spec, *v;
	int rc = kj_object_name(d, obj, "podgroup", true, &ns, &ns_len, &name, &name_len);
	if (rc < 0)
		return rc;
	rc = kj_intern_ns_name(d, ns, ns_len, name, name_len, &pg.name);
	if (rc < 0)
		return rc;
	if (rc == 0)
		rc = json_in_get(&d->in, obj, "spec", JSON_IN_OBJECT, &spec);
	if (rc < 0)
		return rc;
	if (spec == NULL)
		return json_in_fail_at(&d->in, "spec", -EINVAL, "missing");
	size_t mark = json_in_field(&d->in, "spec");
	const char *api;
	size_t api_len;
	rc = json_in_get_str(&d->in, obj, "apiVersion", &api, &api_len);
	if (rc == 0 && api_len > 18 && memcmp(api, "scheduling.k8s.io/", 18) == 0) {
		/* Kubernetes' own (v1alpha2, 1.36): spec.schedulingPolicy. */
		pg.timeout_s = KUBE_GANG_TIMEOUT_S;
		rc = gang_policy(d, spec, "schedulingPolicy", &pg.min_member);
		json_in_pop(&d->in, mark);
		goto visit;
	}
	if (rc == 0)
		rc = json_in_get(&d->in, spec, "minMember", JSON_IN_INT, &v);
	if (rc == 0 && (v == NULL || json_integer_value(v) < 1 ||
			json_integer_value(v) > 100000))
		rc = json_in_fail_at(&d->in, "minMember", -EINVAL, "%s: expected 1..100000",
			     v == NULL ? "missing" : "out of range");
	if (rc == 0)
		pg.min_member = (uint32_t)json_integer_value(v);
	if (rc == 0)
		rc = json_in_get(&d->in, spec, "scheduleTimeoutSeconds", JSON_IN_INT, &v);
	if (rc == 0 && v != NULL && (json_integer_value(v) < 1 ||
				     json_integer_value(v) > 86400))
		rc = json_in_fail_at(&d->in, "scheduleTimeoutSeconds", -EINVAL, "%" JSON_INTEGER_FORMAT
			     ": expected 1..86400", json_integer_value(v));
	if (rc == 0 && v != NULL)
		pg.timeout_s = (uint32_t)json_integer_value(v);
	json_in_pop(&d->in, mark);
visit:
	if (rc < 0 || d->v->pod_group == NULL)
		return rc;
	if (d->in.err != NULL && d->in.err_len > 0)
		d->in.err[0] = '\0';
	return kj_visited(d, d->v->pod_group(d->v->arg, &pg, d->in.err, d->in.err_len));
}

/* spec.KEY of a PodDisruptionBudget, an IntOrString: an integer
 * 0..2^31-1 into *out, or a percentage "0%".."100%" (*percent true), or
 * absent (*present false). */
static int pdb_count(struct decoder *d, const json_t *spec, const char *key,
		     int32_t *out, bool *present, bool *percent)
{
	char q[JSON_IN_SHOW_MAX + 16];
	json_t *v = json_object_get(spec, key);
	*present = *percent = false;
	if (v == NULL || json_is_null(v))
		return 0;
	if (json_is_string(v)) {
		const char *s = json_string_value(v);
		size_t len = json_string_length(v);
		long n = 0;
		bool ok = len >= 2 && len <= 4 && s[len - 1] == '%';
		for (size_t i = 0; ok && i + 1 < len; i++) {
			ok = s[i] >= '0' && s[i] <= '9';
			n = n * 10 + (s[i] - '0');
		}
		if (!ok || n > 100)
			return json_in_fail_at(&d->in, key, -EINVAL, "%s: expected an integer or a "
				       "percentage 0%%..100%%", json_in_show(v, q, sizeof(q)));
		*out = (int32_t)n;
		*present = *percent = true;
		return 0;
	}
	if (!json_is_integer(v) || json_integer_value(v) < 0 ||
	    json_integer_value(v) > INT32_MAX)
		return json_in_fail_at(&d->in, key, -EINVAL, "%s: expected an integer 0..%d",
			       json_in_show(v, q, sizeof(q)), INT32_MAX);
	*out = (int32_t)json_integer_value(v);
	*present = true;
	return 0;
}

/* spec.unhealthyPodEvictionPolicy: absent or null IfHealthyBudget (the
 * API's default), else exactly "IfHealthyBudget" or "AlwaysAllow"
 * (k8s.io/api policy/v1 types.go, UnhealthyPodEvictionPolicyType). */
static int pdb_unhealthy_policy(struct decoder *d, const json_t *spec, uint8_t *out)
{
	*out = K8S_PDB_IF_HEALTHY_BUDGET;
	const json_t *v = json_object_get(spec, "unhealthyPodEvictionPolicy");
	if (v == NULL || json_is_null(v))
		return 0;
	if (json_is_string(v) && strcmp(json_string_value(v), "AlwaysAllow") == 0 &&
	    json_string_length(v) == strlen("AlwaysAllow")) {
		*out = K8S_PDB_ALWAYS_ALLOW;
		return 0;
	}
	if (json_is_string(v) && strcmp(json_string_value(v), "IfHealthyBudget") == 0 &&
	    json_string_length(v) == strlen("IfHealthyBudget"))
		return 0;
	char q[JSON_IN_SHOW_MAX + 16];
	return json_in_fail_at(&d->in, "unhealthyPodEvictionPolicy", -EINVAL,
			       "%s: expected \"IfHealthyBudget\" or \"AlwaysAllow\"",
			       json_in_show(v, q, sizeof(q)));
}

/* A PodDisruptionBudget (policy/v1): to the visitor, or skipped when it
 * takes none. */
int kj_decode_pdb(struct decoder *d, const json_t *obj)
{
	struct k8s_pdb b = {0};
	const char *ns, *name;
	size_t ns_len, name_len;
	json_t *spec, *status, *v;
	int rc = kj_object_name(d, obj, "poddisruptionbudget", true, &ns, &ns_len, &name,
			     &name_len);
	if (rc < 0)
		return rc;
	rc = kj_intern_ns_name(d, ns, ns_len, name, name_len, &b.name);
	if (rc < 0)
		return rc;
	struct pod_group *g = &d->group;
	memset(g, 0, sizeof(*g));
	if (rc == 0)
		rc = kj_intern_here(d, ns, ns_len, &b.ns);
	g->ns = b.ns;
	if (rc == 0)
		rc = json_in_get(&d->in, obj, "spec", JSON_IN_OBJECT, &spec);
	if (rc == 0)
		rc = json_in_get(&d->in, obj, "status", JSON_IN_OBJECT, &status);
	if (rc < 0)
		return rc;
	if (spec == NULL)
		return json_in_fail_at(&d->in, "spec", -EINVAL, "missing");
	size_t mark = json_in_field(&d->in, "spec");
	int32_t min = 0, max = 0;
	bool has_min = false, has_max = false, min_pct = false, max_pct = false;
	rc = kj_label_selector(d, spec, "selector", &g->default_selector);
	if (rc == 0)
		rc = pdb_count(d, spec, "minAvailable", &min, &has_min, &min_pct);
	if (rc == 0)
		rc = pdb_count(d, spec, "maxUnavailable", &max, &has_max, &max_pct);
	if (rc == 0 && has_min && has_max)
		rc = json_in_fail(&d->in, -EINVAL, "minAvailable and maxUnavailable cannot both "
			  "be set");
	/* The drain's ladder reads it (ingest/producers_drain.c). */
	if (rc == 0)
		rc = pdb_unhealthy_policy(d, spec, &b.unhealthy);
	json_in_pop(&d->in, mark);
	if (rc < 0)
		return rc;
	b.selector = g->default_selector.present ? g : NULL;
	v = status != NULL ? json_object_get(status, "disruptionsAllowed") : NULL;
	if (v != NULL && !json_is_null(v)) {
		if (!json_is_integer(v) || json_integer_value(v) < 0 ||
		    json_integer_value(v) > INT32_MAX)
			return json_in_fail_at(&d->in, "status.disruptionsAllowed", -EINVAL,
				       "expected an integer 0..%d", INT32_MAX);
		b.mode = K8S_PDB_ALLOWED;
		b.value = (int32_t)json_integer_value(v);
	} else if (min_pct || max_pct) {
		return json_in_fail_at(&d->in, min_pct ? "spec.minAvailable" : "spec.maxUnavailable",
			       -EINVAL, "a percentage needs the pods the controller "
			       "expects: give status.disruptionsAllowed (kubectl get "
			       "-o json carries it) or an integer");
	} else if (has_max) {
		b.mode = K8S_PDB_MAX_UNAVAILABLE;
		b.value = max;
	} else if (has_min) {
		b.mode = K8S_PDB_MIN_AVAILABLE;
		b.value = min;
	} else {
		return json_in_fail_at(&d->in, "spec", -EINVAL, "minAvailable or maxUnavailable "
			       "(or status.disruptionsAllowed) is needed");
	}
	if (d->v->pdb == NULL)
		return 0;
	if (d->in.err != NULL && d->in.err_len > 0)
		d->in.err[0] = '\0';
	return kj_visited(d, d->v->pdb(d->v->arg, &b, d->in.err, d->in.err_len));
}

/* A PriorityClass: to the visitor, or skipped when it takes none. */
int kj_decode_priority_class(struct decoder *d, const json_t *obj)
{
	struct k8s_priority_class pc = {0};
	const char *ns, *name, *s;
	size_t ns_len, name_len, len;
	json_t *v;
	char q[JSON_IN_SHOW_MAX + 16];
	int rc = kj_object_name(d, obj, "priorityclass", false, &ns, &ns_len, &name,
			     &name_len);
	if (rc < 0)
		return rc;
	size_t mark = json_in_field(&d->in, "metadata.name");
	rc = kj_intern_here(d, name, name_len, &pc.name);
	json_in_pop(&d->in, mark);
	if (rc == 0)
		rc = json_in_get(&d->in, obj, "value", JSON_IN_INT, &v);
	if (rc < 0)
		return rc;
	if (v == NULL)
		return json_in_fail_at(&d->in, "value", -EINVAL, "missing");
	json_int_t n = json_integer_value(v);
	if (n < INT32_MIN || n > INT32_MAX)
		return json_in_fail_at(&d->in, "value", -EINVAL, "%" JSON_INTEGER_FORMAT
			       " is not a 32-bit integer", n);
	pc.value = (int32_t)n;
	if ((rc = json_in_get(&d->in, obj, "globalDefault", JSON_IN_BOOL, &v)) < 0)
		return rc;
	pc.global_default = v != NULL && json_is_true(v);
	if ((rc = json_in_get_str(&d->in, obj, "preemptionPolicy", &s, &len)) < 0)
		return rc;
	if (json_in_str_is(s, len, "Never"))
		pc.preempt_never = true;
	else if (len > 0 && !json_in_str_is(s, len, "PreemptLowerPriority"))
		return json_in_fail_at(&d->in, "preemptionPolicy", -EINVAL, "%s: expected "
			       "PreemptLowerPriority or Never",
			       json_in_show_str(s, len, q, sizeof(q)));
	if (d->v->priority_class == NULL)
		return 0;
	if (d->in.err != NULL && d->in.err_len > 0)
		d->in.err[0] = '\0';
	return kj_visited(d, d->v->priority_class(d->v->arg, &pc, d->in.err, d->in.err_len));
}
