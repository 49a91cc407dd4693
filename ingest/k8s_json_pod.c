/* Pods: devices asked for, tolerations, inter-pod affinity and spread
 * terms into the pod's group, default spreading from the objects, the
 * fields shmsched refuses, and decode_pod() itself. Part of the Kubernetes
 * decoder: see k8s_json_load.c's note and k8s_json_internal.h. */
#include "ingest/k8s_json_internal.h"

static int u32_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* The pod's model set from "A|B|C": parts trimmed of blanks, empty ones
 * skipped, duplicates dropped, sorted by id. Call with the path at the
 * annotation. */
static int pod_gpu_models(struct decoder *d, const char *s, size_t len)
{
	struct pod_spec *p = &d->pod;
	size_t start = 0;
	for (size_t i = 0; i <= len; i++) {
		if (i < len && s[i] != '|')
			continue;
		size_t a = start, b = i;
		start = i + 1;
		while (a < b && is_blank(s[a]))
			a++;
		while (b > a && is_blank(s[b - 1]))
			b--;
		if (a == b)
			continue;
		uint32_t id;
		int rc = kj_intern_here(d, s + a, b - a, &id);
		if (rc < 0)
			return rc;
		bool seen = false;
		for (unsigned k = 0; k < p->n_gpu_models && !seen; k++)
			seen = p->gpu_models[k] == id;
		if (seen)
			continue;
		if (p->n_gpu_models == POD_MAX_GPU_MODELS)
			return json_in_fail(&d->in, -ENOSPC, "more than %d GPU models "
				    "(POD_MAX_GPU_MODELS)", POD_MAX_GPU_MODELS);
		p->gpu_models[p->n_gpu_models++] = id;
	}
	qsort(p->gpu_models, p->n_gpu_models, sizeof(p->gpu_models[0]), u32_cmp);
	return 0;
}

/* The pod's GPUs (annotations, else the nvidia.com/gpu request), its model
 * set, and its exclusive cores. After kj_pod_requests(): it reads the
 * effective requests and the QoS class. */
static int pod_devices(struct decoder *d, const json_t *obj)
{
	struct pod_spec *p = &d->pod;
	json_t *ann;
	long count, milli;
	bool has_count, has_milli;
	const char *models = "";
	size_t models_len = 0;
	int rc = kj_get_annotations(d, obj, &ann);
	if (rc < 0)
		return rc;
	size_t mark = json_in_field(&d->in, "metadata.annotations");
	rc = kj_annotation_int(d, ann, ANN_GPU_COUNT, 1, NODE_MAX_GPUS, -ENOSPC,
			    "NODE_MAX_GPUS", &count, &has_count);
	if (rc == 0)
		rc = kj_annotation_int(d, ann, ANN_GPU_MILLI, 1, GPU_MILLI_PER_DEVICE,
				    -EINVAL, "GPU_MILLI_PER_DEVICE", &milli, &has_milli);
	if (rc == 0 && ann != NULL)
		rc = json_in_get_str(&d->in, ann, GPU_MODEL_KEY, &models, &models_len);
	if (rc < 0)
		goto out;
	if (has_count || has_milli) {
		if (!has_count)
			count = 1;
		if (!has_milli)
			milli = GPU_MILLI_PER_DEVICE;
		if (count > 1 && milli < GPU_MILLI_PER_DEVICE) {
			size_t m = json_in_key(&d->in, ANN_GPU_MILLI, strlen(ANN_GPU_MILLI));
			rc = json_in_fail(&d->in, -EINVAL, "a multi-GPU pod takes whole devices: "
				  "%s %ld needs %ld, not %ld", ANN_GPU_COUNT, count,
				  (long)GPU_MILLI_PER_DEVICE, milli);
			json_in_pop(&d->in, m);
			goto out;
		}
	} else {
		int idx = res_lookup(d->ctx->res, GPU_RESOURCE, strlen(GPU_RESOURCE));
		int64_t n = idx >= 0 ? p->request.v[idx] : 0;
		if (n > NODE_MAX_GPUS) {
			json_in_pop(&d->in, mark);
			rc = json_in_fail(&d->in, -ENOSPC, "requests %" PRId64 " %s, at most %d "
				  "(NODE_MAX_GPUS)", n, GPU_RESOURCE, NODE_MAX_GPUS);
			goto out;
		}
		count = (long)n;
		milli = n > 0 ? GPU_MILLI_PER_DEVICE : 0;
	}
	p->num_gpu = (uint8_t)count;
	p->gpu_milli = (uint16_t)milli;
	/* A model set without a GPU decides nothing: ignored. */
	if (p->num_gpu > 0 && models_len > 0) {
		size_t m = json_in_key(&d->in, GPU_MODEL_KEY, strlen(GPU_MODEL_KEY));
		rc = pod_gpu_models(d, models, models_len);
		json_in_pop(&d->in, m);
		if (rc < 0)
			goto out;
	}

	/* The static CPU manager's rule, for the pod as a whole. */
	int64_t cpu = p->request.v[RES_CPU];
	if (d->guaranteed && cpu > 0 && cpu % 1000 == 0) {
		if (cpu / 1000 > NODE_MAX_CORES) {
			json_in_pop(&d->in, mark);
			rc = json_in_fail(&d->in, -ENOSPC, "a Guaranteed pod requesting %" PRId64
				  " whole cores takes them exclusively: at most %d "
				  "(NODE_MAX_CORES)", cpu / 1000, NODE_MAX_CORES);
			goto out;
		}
		p->exclusive_cores = (uint16_t)(cpu / 1000);
	}
out:
	json_in_pop(&d->in, mark);
	return rc;
}

/* --- pods: tolerations --------------------------------------------------- */

static int toleration(struct decoder *d, const json_t *t, struct toleration *out)
{
	const char *key = "", *op = "", *value = "", *effect = "";
	size_t key_len = 0, op_len = 0, value_len = 0, effect_len = 0;
	char q[JSON_IN_SHOW_MAX + 16];
	int rc = json_in_check(&d->in, t, JSON_IN_OBJECT);
	if (rc == 0)
		rc = json_in_get_str(&d->in, t, "key", &key, &key_len);
	if (rc == 0)
		rc = json_in_get_str(&d->in, t, "operator", &op, &op_len);
	if (rc == 0)
		rc = json_in_get_str(&d->in, t, "value", &value, &value_len);
	if (rc == 0)
		rc = json_in_get_str(&d->in, t, "effect", &effect, &effect_len);
	if (rc < 0)
		return rc;
	if (op_len == 0 || json_in_str_is(op, op_len, "Equal"))
		out->op = TOL_EQUAL;
	else if (json_in_str_is(op, op_len, "Exists"))
		out->op = TOL_EXISTS;
	else
		return json_in_fail_at(&d->in, "operator", -EINVAL, "%s is not Equal or Exists",
			       json_in_show_str(op, op_len, q, sizeof(q)));
	if (out->op == TOL_EXISTS && value_len > 0)
		return json_in_fail_at(&d->in, "value", -EINVAL, "%s must be empty when operator "
			       "is Exists", json_in_show_str(value, value_len, q, sizeof(q)));
	if (key_len == 0 && out->op != TOL_EXISTS)
		return json_in_fail_at(&d->in, "operator", -EINVAL, "an empty key needs operator "
			       "Exists");
	if (kj_taint_effect(effect, effect_len, true, &out->effect) < 0)
		return json_in_fail_at(&d->in, "effect", -EINVAL, "%s is not NoSchedule, "
			       "PreferNoSchedule or NoExecute",
			       json_in_show_str(effect, effect_len, q, sizeof(q)));
	/* ValidateTolerations: "effect must be 'NoExecute' when
	 * `tolerationSeconds` is set". */
	json_t *secs;
	if ((rc = json_in_get(&d->in, t, "tolerationSeconds", JSON_IN_INT, &secs)) < 0)
		return rc;
	if (secs != NULL) {
		if (out->effect != TAINT_NO_EXECUTE)
			return json_in_fail_at(&d->in, "effect", -EINVAL, "%s: effect "
				       "must be NoExecute when tolerationSeconds is set",
				       effect_len ? json_in_show_str(effect, effect_len, q,
								     sizeof(q)) : "\"\"");
		json_int_t n = json_integer_value(secs);
		out->has_seconds = 1;
		out->seconds = n > INT32_MAX ? INT32_MAX : n < INT32_MIN ? INT32_MIN
			     : (int32_t)n;
	}
	if ((rc = kj_get_id(d, t, "key", &out->key)) < 0)
		return rc;
	return kj_get_id(d, t, "value", &out->value);
}

/* Whether namespace `ns` is already among term `t`'s. */
static bool term_has_ns(const struct pod_group *g, const struct group_term *t,
			uint32_t ns)
{
	for (unsigned i = t->first_ns; i < g->n_namespaces; i++)
		if (g->namespaces[i] == ns)
			return true;
	return false;
}

/* A term's namespaceSelector (present): {} is every namespace; one with
 * requirements adds the namespaces it selects among the Namespace objects
 * read (k8s_ctx.objects) to the term's, as kube-scheduler's
 * mergeAffinityTermNamespacesIfNotEmpty does, but once, when the pod is
 * read. The selector is parsed into the group's pool and taken back out:
 * only the namespaces stay. */
static int namespace_selector(struct decoder *d, const json_t *t,
			      struct group_term *term)
{
	struct pod_group *g = &d->group;
	struct k8s_objects *o = d->ctx->objects;
	struct group_selector sel;
	uint16_t n_reqs = g->n_reqs, n_values = g->n_values;
	int rc = kj_label_selector(d, t, "namespaceSelector", &sel);
	if (rc < 0)
		return rc;
	g->n_reqs = n_reqs;
	g->n_values = n_values;
	if (sel.n_reqs == 0) {
		term->all_namespaces = true; /* labels.Everything() */
		return 0;
	}
	if (o == NULL && !d->ctx->cluster_file)
		return json_in_fail_at(&d->in, "namespaceSelector", -EINVAL, "a selector with "
			       "requirements needs the Namespace objects of a cluster "
			       "file (shmsched place reads them; a template cannot use "
			       "one)");
	for (size_t i = 0; o != NULL && i < o->n_objs; i++) {
		const struct obj *x = &o->objs[i];
		if (x->kind != OBJ_NAMESPACE ||
		    !group_selector_matches(g, &sel, &o->labels[x->first], x->n) ||
		    term_has_ns(g, term, x->name))
			continue;
		if (g->n_namespaces >= GROUP_MAX_NAMESPACES)
			return json_in_fail_at(&d->in, "namespaceSelector", -ENOSPC, "selects more "
				       "than %d namespaces with the pod's other terms "
				       "(GROUP_MAX_NAMESPACES)", GROUP_MAX_NAMESPACES);
		g->namespaces[g->n_namespaces++] = x->name;
	}
	return 0;
}

/* A PodAffinityTerm of `kind`, with `weight` for a preferred one. */
static int pod_affinity_term(struct decoder *d, const json_t *t, uint8_t kind,
			     int32_t weight)
{
	struct pod_group *g = &d->group;
	json_t *nss = NULL, *nsel = NULL, *ns;
	size_t i;
	int rc = json_in_check(&d->in, t, JSON_IN_OBJECT);
	if (rc < 0)
		return rc;
	if (g->n_terms >= GROUP_MAX_TERMS)
		return json_in_fail(&d->in, -ENOSPC, "more than %d pod affinity terms "
			    "(GROUP_MAX_TERMS)", GROUP_MAX_TERMS);
	struct group_term term = {.kind = kind, .weight = weight,
				  .first_ns = g->n_namespaces};
	const char *tk = "";
	size_t tk_len = 0;
	if ((rc = json_in_get_str(&d->in, t, "topologyKey", &tk, &tk_len)) < 0)
		return rc;
	if (tk_len == 0)
		return json_in_fail_at(&d->in, "topologyKey", -EINVAL, "missing (it must not be "
			       "empty)");
	size_t mark = json_in_field(&d->in, "topologyKey");
	rc = kj_intern_here(d, tk, tk_len, &term.topology_key);
	json_in_pop(&d->in, mark);
	if (rc == 0)
		rc = kj_label_selector(d, t, "labelSelector", &term.selector);
	if (rc == 0)
		rc = kj_merge_label_keys(d, t, "matchLabelKeys", SEL_IN, &term.selector);
	if (rc == 0)
		rc = kj_merge_label_keys(d, t, "mismatchLabelKeys", SEL_NOT_IN,
				      &term.selector);
	if (rc == 0)
		rc = json_in_get(&d->in, t, "namespaces", JSON_IN_ARRAY, &nss);
	if (rc == 0)
		rc = json_in_get(&d->in, t, "namespaceSelector", JSON_IN_OBJECT, &nsel);
	if (rc < 0)
		return rc;
	size_t outer = json_in_field(&d->in, "namespaces");
	json_array_foreach(nss, i, ns) {
		size_t m = json_in_index(&d->in, i);
		uint32_t id;
		rc = json_in_check(&d->in, ns, JSON_IN_STRING);
		if (rc == 0 && g->n_namespaces >= GROUP_MAX_NAMESPACES)
			rc = json_in_fail(&d->in, -ENOSPC, "more than %d namespaces in the pod's "
				  "terms (GROUP_MAX_NAMESPACES)", GROUP_MAX_NAMESPACES);
		if (rc == 0)
			rc = kj_intern_here(d, json_string_value(ns), json_string_length(ns),
					 &id);
		if (rc == 0)
			g->namespaces[g->n_namespaces++] = id;
		json_in_pop(&d->in, m);
		if (rc < 0)
			break;
	}
	json_in_pop(&d->in, outer);
	if (rc == 0 && nsel != NULL)
		rc = namespace_selector(d, t, &term);
	if (rc < 0)
		return rc;
	/* getNamespacesFromPodAffinityTerm: no namespaces and no selector
	 * (nil, not one selecting nothing) means the pod's own. */
	if (g->n_namespaces == term.first_ns && !term.all_namespaces && nsel == NULL) {
		/* No namespaces, no selector: the pod's own. */
		if (g->n_namespaces >= GROUP_MAX_NAMESPACES)
			return json_in_fail(&d->in, -ENOSPC, "more than %d namespaces in the pod's "
				    "terms (GROUP_MAX_NAMESPACES)", GROUP_MAX_NAMESPACES);
		g->namespaces[g->n_namespaces++] = g->ns;
	}
	term.n_ns = (uint16_t)(g->n_namespaces - term.first_ns);
	g->terms[g->n_terms++] = term;
	return 0;
}

/* podAffinity or podAntiAffinity at member `key` of `aff`: required terms
 * of `required`, preferred ones of required + 2 (enum group_term_kind),
 * appended in that order by the caller's calls. */
static int pod_affinity_list(struct decoder *d, const json_t *aff, const char *key,
			     bool preferred, uint8_t kind)
{
	json_t *pa, *list, *t;
	size_t i;
	int rc = json_in_get(&d->in, aff, key, JSON_IN_OBJECT, &pa);
	if (rc < 0 || pa == NULL)
		return rc;
	size_t outer = json_in_field(&d->in, key);
	const char *lkey = preferred ? "preferredDuringSchedulingIgnoredDuringExecution"
				     : "requiredDuringSchedulingIgnoredDuringExecution";
	rc = json_in_get(&d->in, pa, lkey, JSON_IN_ARRAY, &list);
	if (rc == 0 && list != NULL) {
		size_t mark = json_in_field(&d->in, lkey);
		json_array_foreach(list, i, t) {
			size_t m = json_in_index(&d->in, i);
			if (!preferred) {
				rc = pod_affinity_term(d, t, kind, 0);
			} else {
				json_t *w = NULL, *term = NULL;
				rc = json_in_check(&d->in, t, JSON_IN_OBJECT);
				if (rc == 0)
					rc = json_in_get(&d->in, t, "weight", JSON_IN_INT, &w);
				if (rc == 0)
					rc = json_in_get(&d->in, t, "podAffinityTerm", JSON_IN_OBJECT, &term);
				json_int_t weight = w != NULL ? json_integer_value(w) : 0;
				if (rc == 0 && (weight < 1 || weight > 100))
					rc = json_in_fail_at(&d->in, "weight", -EINVAL, "%" JSON_INTEGER_FORMAT
						     " is not 1..100", weight);
				if (rc == 0 && term == NULL)
					rc = json_in_fail_at(&d->in, "podAffinityTerm", -EINVAL, "missing");
				if (rc == 0) {
					size_t pm = json_in_field(&d->in, "podAffinityTerm");
					rc = pod_affinity_term(d, term, kind, (int32_t)weight);
					json_in_pop(&d->in, pm);
				}
			}
			json_in_pop(&d->in, m);
			if (rc < 0)
				break;
		}
		json_in_pop(&d->in, mark);
	}
	json_in_pop(&d->in, outer);
	return rc;
}

/* One topologySpreadConstraint, validated as kube-apiserver's
 * validateTopologySpreadConstraints does. */
static int spread_constraint(struct decoder *d, const json_t *c)
{
	struct pod_group *g = &d->group;
	json_t *skew = NULL, *mind = NULL;
	const char *tk = "", *when = "", *nap = "", *ntp = "";
	size_t tk_len = 0, when_len = 0, nap_len = 0, ntp_len = 0;
	char q[JSON_IN_SHOW_MAX + 16];
	int rc = json_in_check(&d->in, c, JSON_IN_OBJECT);
	if (rc == 0)
		rc = json_in_get(&d->in, c, "maxSkew", JSON_IN_INT, &skew);
	if (rc == 0)
		rc = json_in_get(&d->in, c, "minDomains", JSON_IN_INT, &mind);
	if (rc == 0)
		rc = json_in_get_str(&d->in, c, "topologyKey", &tk, &tk_len);
	if (rc == 0)
		rc = json_in_get_str(&d->in, c, "whenUnsatisfiable", &when, &when_len);
	if (rc == 0)
		rc = json_in_get_str(&d->in, c, "nodeAffinityPolicy", &nap, &nap_len);
	if (rc == 0)
		rc = json_in_get_str(&d->in, c, "nodeTaintsPolicy", &ntp, &ntp_len);
	if (rc < 0)
		return rc;
	if (g->n_spread >= GROUP_MAX_SPREAD)
		return json_in_fail(&d->in, -ENOSPC, "more than %d topologySpreadConstraints "
			    "(GROUP_MAX_SPREAD)", GROUP_MAX_SPREAD);
	struct group_spread sc = {.min_domains = 1,
				  .node_affinity_policy = SPREAD_POLICY_HONOR,
				  .node_taints_policy = SPREAD_POLICY_IGNORE};
	json_int_t max_skew = skew != NULL ? json_integer_value(skew) : 0;
	if (max_skew < 1 || max_skew > INT32_MAX)
		return json_in_fail_at(&d->in, "maxSkew", -EINVAL, "%" JSON_INTEGER_FORMAT " is not "
			       "greater than zero", max_skew);
	sc.max_skew = (int32_t)max_skew;
	if (tk_len == 0)
		return json_in_fail_at(&d->in, "topologyKey", -EINVAL, "missing (it must not be "
			       "empty)");
	if (json_in_str_is(when, when_len, "DoNotSchedule"))
		sc.hard = true;
	else if (!json_in_str_is(when, when_len, "ScheduleAnyway"))
		return json_in_fail_at(&d->in, "whenUnsatisfiable", -EINVAL, "%s is not "
			       "DoNotSchedule or ScheduleAnyway",
			       json_in_show_str(when, when_len, q, sizeof(q)));
	if (mind != NULL) {
		json_int_t m = json_integer_value(mind);
		if (m < 1 || m > INT32_MAX)
			return json_in_fail_at(&d->in, "minDomains", -EINVAL, "%" JSON_INTEGER_FORMAT
				       " is not greater than zero", m);
		if (!sc.hard)
			return json_in_fail_at(&d->in, "minDomains", -EINVAL, "only with "
				       "whenUnsatisfiable DoNotSchedule");
		sc.min_domains = (int32_t)m;
	}
	static const char *const policy_field[2] = {"nodeAffinityPolicy",
						    "nodeTaintsPolicy"};
	const char *ps[2] = {nap, ntp};
	size_t pl[2] = {nap_len, ntp_len};
	uint8_t *pv[2] = {&sc.node_affinity_policy, &sc.node_taints_policy};
	for (int k = 0; k < 2; k++) {
		if (pl[k] == 0)
			continue;
		if (json_in_str_is(ps[k], pl[k], "Honor"))
			*pv[k] = SPREAD_POLICY_HONOR;
		else if (json_in_str_is(ps[k], pl[k], "Ignore"))
			*pv[k] = SPREAD_POLICY_IGNORE;
		else
			return json_in_fail_at(&d->in, policy_field[k], -EINVAL, "%s is not Honor or "
				       "Ignore", json_in_show_str(ps[k], pl[k], q, sizeof(q)));
	}
	size_t mark = json_in_field(&d->in, "topologyKey");
	rc = kj_intern_here(d, tk, tk_len, &sc.topology_key);
	json_in_pop(&d->in, mark);
	if (rc == 0)
		rc = kj_label_selector(d, c, "labelSelector", &sc.selector);
	if (rc == 0)
		rc = kj_merge_label_keys(d, c, "matchLabelKeys", SEL_IN, &sc.selector);
	if (rc == 0)
		g->spread[g->n_spread++] = sc;
	return rc;
}

/* The controller of a pod: the first metadata.ownerReferences entry with
 * controller: true (metav1.GetControllerOfNoCopy); *kind OBJ_KINDS when
 * none, or one default spreading does not read. */
static int pod_controller(struct decoder *d, const json_t *obj, uint8_t *kind,
			  uint32_t *name)
{
	json_t *meta, *refs, *ref;
	size_t i;
	*kind = OBJ_KINDS;
	*name = 0;
	int rc = json_in_get(&d->in, obj, "metadata", JSON_IN_OBJECT, &meta);
	if (rc < 0 || meta == NULL)
		return rc;
	size_t outer = json_in_field(&d->in, "metadata");
	rc = json_in_get(&d->in, meta, "ownerReferences", JSON_IN_ARRAY, &refs);
	size_t mark = json_in_field(&d->in, "ownerReferences");
	json_array_foreach(refs, i, ref) {
		json_t *ctl = NULL;
		const char *api = "", *k = "";
		size_t api_len = 0, k_len = 0;
		if (rc < 0)
			break;
		size_t m = json_in_index(&d->in, i);
		rc = json_in_check(&d->in, ref, JSON_IN_OBJECT);
		if (rc == 0)
			rc = json_in_get(&d->in, ref, "controller", JSON_IN_BOOL, &ctl);
		if (rc == 0)
			rc = json_in_get_str(&d->in, ref, "apiVersion", &api, &api_len);
		if (rc == 0)
			rc = json_in_get_str(&d->in, ref, "kind", &k, &k_len);
		if (rc == 0 && ctl != NULL && json_is_true(ctl)) {
			/* helper.DefaultSelector's rcKind, rsKind, ssKind: the
			 * group and version must be these. */
			if (json_in_str_is(api, api_len, "v1") && json_in_str_is(k, k_len,
								 "ReplicationController"))
				*kind = OBJ_RC;
			else if (json_in_str_is(api, api_len, "apps/v1") &&
				 json_in_str_is(k, k_len, "ReplicaSet"))
				*kind = OBJ_RS;
			else if (json_in_str_is(api, api_len, "apps/v1") &&
				 json_in_str_is(k, k_len, "StatefulSet"))
				*kind = OBJ_SS;
			if (*kind != OBJ_KINDS) {
				const char *n;
				size_t n_len;
				rc = json_in_get_str(&d->in, ref, "name", &n, &n_len);
				/* A name never interned names no object read. */
				if (rc == 0 && !intern_find(d->ctx->strings, n, n_len, name))
					*kind = OBJ_KINDS;
			}
			json_in_pop(&d->in, m);
			break; /* only the first controller counts */
		}
		json_in_pop(&d->in, m);
	}
	json_in_pop(&d->in, mark);
	json_in_pop(&d->in, outer);
	return rc;
}

/* kube-scheduler's helper.DefaultSelector (framework/plugins/helper/
 * spread.go) for a pod to place: the selectors of the Services of its
 * namespace that select it, merged, then its controller's (a
 * ReplicationController's merged in; a ReplicaSet's or StatefulSet's
 * requirements added), found by name in its namespace. Nothing selects
 * it: no default selector, and so no default constraint
 * (buildDefaultConstraints). */
static int pod_default_selector(struct decoder *d, const json_t *obj)
{
	struct pod_group *g = &d->group;
	struct k8s_objects *o = d->ctx->objects;
	struct label set[GROUP_MAX_LABELS + OBJECT_MAX_LABELS];
	size_t n_set = 0, first;
	uint8_t kind;
	uint32_t owner;
	int rc = pod_controller(d, obj, &kind, &owner);
	if (rc < 0)
		return rc;
	size_t n = kj_services_of(o, g->ns, &first);
	for (size_t i = 0; i < n; i++) {
		const struct obj *svc = &o->objs[o->services[first + i]];
		if (!kj_labels_subset(&o->labels[svc->first], svc->n, g->labels, g->n_labels))
			continue;
		/* It selects the pod: its pairs are the pod's own labels. */
		for (uint32_t k = 0; k < svc->n; k++)
			kj_label_set_merge(set, &n_set, &o->labels[svc->first + k]);
	}
	const struct obj *ctl = kind != OBJ_KINDS ? kj_obj_find(o, kind, g->ns, owner) : NULL;
	if (ctl != NULL && ctl->kind == OBJ_RC)
		for (uint32_t k = 0; k < ctl->n && n_set < GROUP_MAX_LABELS + OBJECT_MAX_LABELS; k++)
			kj_label_set_merge(set, &n_set, &o->labels[ctl->first + k]);
	g->default_selector = (struct group_selector){.present = true,
						      .first_req = g->n_reqs};
	for (size_t k = 0; k < n_set && rc == 0; k++)
		rc = kj_group_req_add(d, set[k].key, SEL_IN, &set[k].value, 1,
				   &g->default_selector);
	if (ctl != NULL && ctl->kind != OBJ_RC) {
		for (uint32_t k = 0; k < ctl->n && rc == 0; k++) {
			const struct obj_req *r = &o->reqs[ctl->first + k];
			/* An Exists requirement has no values, and the pool
			 * may be empty (NULL): no pointer into it then. */
			const uint32_t *vals = r->n_values ? &o->values[r->first_value] : NULL;
			rc = kj_group_req_add(d, r->key, r->op, vals, r->n_values,
					   &g->default_selector);
		}
	}
	/* selector.Empty(): no default constraint. */
	if (rc == 0 && g->default_selector.n_reqs == 0)
		g->default_selector = (struct group_selector){0};
	return rc;
}

/* The pod's group: namespace `ns`, metadata.labels, spec.affinity's
 * podAffinity and podAntiAffinity, spec.topologySpreadConstraints;
 * encoded and interned into pod.group. */
static int pod_group_fields(struct decoder *d, const json_t *obj, const json_t *spec,
			    const char *ns, size_t ns_len)
{
	struct pod_group *g = &d->group;
	json_t *meta, *aff = NULL, *tsc, *c;
	size_t n, i;
	memset(g, 0, sizeof(*g));
	int rc = kj_intern_here(d, ns, ns_len, &g->ns);
	if (rc == 0)
		rc = json_in_get(&d->in, obj, "metadata", JSON_IN_OBJECT, &meta);
	if (rc == 0 && meta != NULL) {
		size_t mark = json_in_field(&d->in, "metadata");
		rc = kj_label_map(d, meta, "labels", g->labels, GROUP_MAX_LABELS, &n,
			       false);
		g->n_labels = (uint16_t)n;
		/* A terminating pod (kubectl shows it Terminating) still counts
		 * toward inter-pod affinity, but not toward spreading. */
		json_t *deleted = NULL;
		if (rc == 0)
			rc = json_in_get(&d->in, meta, "deletionTimestamp", JSON_IN_STRING, &deleted);
		g->terminating = deleted != NULL;
		json_in_pop(&d->in, mark);
	}
	if (rc < 0)
		return rc;
	if (spec != NULL) {
		size_t mark = json_in_field(&d->in, "spec");
		rc = json_in_get(&d->in, spec, "affinity", JSON_IN_OBJECT, &aff);
		if (rc == 0 && aff != NULL) {
			size_t am = json_in_field(&d->in, "affinity");
			rc = pod_affinity_list(d, aff, "podAffinity", false,
					       TERM_REQUIRED_AFFINITY);
			if (rc == 0)
				rc = pod_affinity_list(d, aff, "podAntiAffinity", false,
						       TERM_REQUIRED_ANTI_AFFINITY);
			if (rc == 0)
				rc = pod_affinity_list(d, aff, "podAffinity", true,
						       TERM_PREFERRED_AFFINITY);
			if (rc == 0)
				rc = pod_affinity_list(d, aff, "podAntiAffinity", true,
						       TERM_PREFERRED_ANTI_AFFINITY);
			json_in_pop(&d->in, am);
		}
		if (rc == 0)
			rc = json_in_get(&d->in, spec, "topologySpreadConstraints", JSON_IN_ARRAY, &tsc);
		if (rc == 0 && tsc != NULL) {
			size_t tm = json_in_field(&d->in, "topologySpreadConstraints");
			json_array_foreach(tsc, i, c) {
				size_t m = json_in_index(&d->in, i);
				rc = spread_constraint(d, c);
				json_in_pop(&d->in, m);
				if (rc < 0)
					break;
			}
			json_in_pop(&d->in, tm);
		}
		json_in_pop(&d->in, mark);
		if (rc < 0)
			return rc;
	}
	/* Only a pod to place with no constraints of its own is ever the
	 * incoming pod whose default constraints run; another pod's default
	 * selector would only split its group. */
	if (!d->ctx->cluster_file && d->ctx->objects != NULL && g->n_spread == 0 &&
	    (rc = pod_default_selector(d, obj)) < 0)
		return rc;
	char enc[GROUP_ENCODED_MAX + 1];
	int len = pod_group_encode(g, enc, sizeof(enc));
	if (len < 0)
		return json_in_fail(&d->in, len == -E2BIG ? -ENOSPC : -EINVAL, "its labels, pod "
			    "affinity terms and spread constraints take more than %u "
			    "bytes encoded (GROUP_ENCODED_MAX)", GROUP_ENCODED_MAX);
	rc = kj_intern_here(d, enc, (size_t)len, &d->pod.group);
	d->pod.group_terms = g->n_terms > 0;
	return rc;
}

/* --- pods ---------------------------------------------------------------- */

/* The first field of a pod to place that needs what shmsched does not do:
 * remembered as the pod's own answer (k8s_pod_meta.unsupported), "<path
 * of `field`>: <why>". The rest of the pod is still decoded and checked,
 * so a malformed file is still refused whole. */
static void mark_unsupported(struct decoder *d, uint8_t kind, const char *field,
			     const char *why)
{
	if (d->unsupported_kind != K8S_UNSUPPORTED_NONE)
		return;
	d->unsupported_kind = kind;
	snprintf(d->unsupported, sizeof(d->unsupported), "%s%s%s: %s", d->in.path,
		 d->in.path_len > 0 ? "." : "", field, why);
}

/* Member `key`, an array (`w` JSON_IN_ARRAY) or object: whether it holds
 * anything. Absent, null, [] and {} hold nothing. */
static int get_nonempty(struct decoder *d, const json_t *obj, const char *key,
			enum json_in_want w, bool *nonempty)
{
	json_t *v;
	int rc = json_in_get(&d->in, obj, key, w, &v);
	*nonempty = v != NULL && (w == JSON_IN_ARRAY ? json_array_size(v) > 0 :
						  json_object_size(v) > 0);
	return rc;
}

/* Fields of a pod to place that would change where it may go and that
 * shmsched does not model: the pod is answered on its own, never placed
 * by a spec that leaves them out (mark_unsupported). */
static int pod_unsupported(struct decoder *d, const json_t *spec)
{
	json_t *vols, *vol;
	const char *s;
	size_t len, i;
	char q[JSON_IN_SHOW_MAX + 16];
	int rc = json_in_get_str(&d->in, spec, "schedulerName", &s, &len);
	if (rc < 0)
		return rc;
	int profile = sched_profile_of(d->ctx->profiles, s, len);
	if (profile < 0) {
		/* Not ours to place: kube-scheduler ignores such a pod, and so
		 * does whoever visits it (meta.other_scheduler); nothing else it
		 * carries is checked. */
		d->other_scheduler = true;
		(void)q;
		return 0;
	}
	d->pod.profile = (uint8_t)profile;
	bool gates, claims;
	if ((rc = get_nonempty(d, spec, "schedulingGates", JSON_IN_ARRAY, &gates)) < 0 ||
	    (rc = get_nonempty(d, spec, "resourceClaims", JSON_IN_ARRAY, &claims)) < 0)
		return rc;
	/* kube-scheduler's SchedulingGates PreEnqueue keeps a gated pod out
	 * of the queue until its gates are removed. */
	if (gates)
		mark_unsupported(d, K8S_UNSUPPORTED_SCHEDULING_GATES, "schedulingGates",
				 "the pod waits for its scheduling gates to be removed, "
				 "and shmsched keeps no pod waiting");
	if (claims)
		mark_unsupported(d, K8S_UNSUPPORTED_RESOURCE_CLAIMS, "resourceClaims",
				 "dynamic resource allocation is not supported");
	if ((rc = json_in_get(&d->in, spec, "volumes", JSON_IN_ARRAY, &vols)) < 0 || vols == NULL)
		return rc;
	size_t outer = json_in_field(&d->in, "volumes");
	json_array_foreach(vols, i, vol) {
		size_t mark = json_in_index(&d->in, i);
		bool pvc = false, eph = false;
		rc = json_in_check(&d->in, vol, JSON_IN_OBJECT);
		if (rc == 0)
			rc = get_nonempty(d, vol, "persistentVolumeClaim", JSON_IN_OBJECT, &pvc);
		if (rc == 0)
			rc = get_nonempty(d, vol, "ephemeral", JSON_IN_OBJECT, &eph);
		/* VolumeBinding, VolumeZone, VolumeRestrictions and
		 * NodeVolumeLimits act on claims. */
		if (pvc)
			mark_unsupported(d, K8S_UNSUPPORTED_VOLUME_BINDING,
					 "persistentVolumeClaim",
					 "volume binding is not supported");
		if (eph)
			mark_unsupported(d, K8S_UNSUPPORTED_VOLUME_BINDING, "ephemeral",
					 "a generic ephemeral volume is a claim, and volume "
					 "binding is not supported");
		json_in_pop(&d->in, mark);
		if (rc < 0)
			break;
	}
	json_in_pop(&d->in, outer);
	return rc;
}

static int pod_phase(struct decoder *d, const json_t *obj, uint8_t *phase)
{
	static const char *const names[] = {
		[POD_PHASE_PENDING] = "Pending",     [POD_PHASE_RUNNING] = "Running",
		[POD_PHASE_SUCCEEDED] = "Succeeded", [POD_PHASE_FAILED] = "Failed",
		[POD_PHASE_UNKNOWN] = "Unknown",
	};
	json_t *status;
	const char *s = "";
	size_t len = 0;
	char q[JSON_IN_SHOW_MAX + 16];
	*phase = POD_PHASE_PENDING;
	int rc = json_in_get(&d->in, obj, "status", JSON_IN_OBJECT, &status);
	if (rc < 0 || status == NULL)
		return rc;
	size_t mark = json_in_field(&d->in, "status");
	rc = json_in_get_str(&d->in, status, "phase", &s, &len);
	if (rc == 0 && len > 0) {
		size_t i = 0;
		while (i < sizeof(names) / sizeof(names[0]) && !json_in_str_is(s, len, names[i]))
			i++;
		if (i < sizeof(names) / sizeof(names[0]))
			*phase = (uint8_t)i;
		else
			rc = json_in_fail_at(&d->in, "phase", -EINVAL, "%s is not Pending, Running, "
				     "Succeeded, Failed or Unknown",
				     json_in_show_str(s, len, q, sizeof(q)));
	}
	json_in_pop(&d->in, mark);
	return rc;
}

static int pod_spec_fields(struct decoder *d, const json_t *spec)
{
	struct pod_spec *p = &d->pod;
	json_t *hn, *aff, *na, *tols, *t;
	size_t i, n_sel;
	int rc;
	/* In a cluster file a pod is counted (bound) or skipped (pending),
	 * whatever it carries, as kube-scheduler counts it: only a pod to
	 * place is refused for what shmsched cannot do for it. */
	if ((rc = kj_get_id(d, spec, "nodeName", &p->node_name)) < 0 ||
	    (!d->ctx->cluster_file && (rc = pod_unsupported(d, spec)) < 0) ||
	    (rc = json_in_get(&d->in, spec, "hostNetwork", JSON_IN_BOOL, &hn)) < 0 ||
	    (rc = kj_pod_requests(d, spec, hn != NULL && json_is_true(hn))) < 0 ||
	    (rc = kj_label_map(d, spec, "nodeSelector", p->selector,
			    POD_MAX_SELECTOR, &n_sel, true)) < 0)
		return rc;
	p->n_selector = (uint8_t)n_sel;

	if ((rc = json_in_get(&d->in, spec, "affinity", JSON_IN_OBJECT, &aff)) < 0)
		return rc;
	if (aff != NULL) {
		size_t mark = json_in_field(&d->in, "affinity");
		rc = json_in_get(&d->in, aff, "nodeAffinity", JSON_IN_OBJECT, &na);
		if (rc == 0 && na != NULL) {
			size_t m = json_in_field(&d->in, "nodeAffinity");
			rc = kj_node_affinity(d, na);
			json_in_pop(&d->in, m);
		}
		json_in_pop(&d->in, mark);
		if (rc < 0)
			return rc;
	}

	if ((rc = json_in_get(&d->in, spec, "tolerations", JSON_IN_ARRAY, &tols)) < 0 || tols == NULL)
		return rc;
	size_t outer = json_in_field(&d->in, "tolerations");
	if (json_array_size(tols) > POD_MAX_TOLERATIONS)
		rc = json_in_fail(&d->in, -ENOSPC, "%zu tolerations, at most %d "
			  "(POD_MAX_TOLERATIONS)", json_array_size(tols),
			  POD_MAX_TOLERATIONS);
	json_array_foreach(tols, i, t) {
		if (rc < 0)
			break;
		size_t mark = json_in_index(&d->in, i);
		rc = toleration(d, t, &p->tolerations[i]);
		json_in_pop(&d->in, mark);
		if (rc == 0)
			p->n_tolerations++;
	}
	json_in_pop(&d->in, outer);
	return rc;
}

int kj_decode_pod(struct decoder *d, const json_t *obj, size_t index)
{
	struct pod_spec *p = &d->pod;
	struct k8s_pod_meta meta = {.index = index};
	const char *ns, *name;
	size_t ns_len, name_len;
	json_t *spec;
	memset(p, 0, sizeof(*p));

	int rc = kj_object_name(d, obj, "pod", true, &ns, &ns_len, &name, &name_len);
	if (rc < 0)
		return rc;
	rc = kj_intern_ns_name(d, ns, ns_len, name, name_len, &p->ns_name);
	if (rc < 0)
		return rc;
	meta.ns_name = p->ns_name;
	if (rc == 0)
		rc = pod_phase(d, obj, &meta.phase);
	if (rc == 0)
		rc = json_in_get(&d->in, obj, "spec", JSON_IN_OBJECT, &spec);
	d->guaranteed = false;
	d->other_scheduler = false;
	d->unsupported_kind = K8S_UNSUPPORTED_NONE;
	d->unsupported[0] = '\0';
	if (rc == 0 && spec != NULL) {
		size_t mark = json_in_field(&d->in, "spec");
		rc = pod_spec_fields(d, spec);
		if (rc == 0)
			rc = kj_pod_priority(d, spec);
		json_in_pop(&d->in, mark);
	}
	if (rc == 0)
		rc = kj_pod_wait(d, obj);
	if (rc == 0)
		rc = pod_devices(d, obj);
	if (rc == 0)
		rc = pod_group_fields(d, obj, spec, ns, ns_len);
	if (rc == 0)
		rc = kj_pod_gang(d, obj, spec, ns, ns_len);
	if (rc < 0)
		return rc;

	meta.other_scheduler = d->other_scheduler;
	if (d->unsupported_kind != K8S_UNSUPPORTED_NONE) {
		meta.unsupported_kind = d->unsupported_kind;
		meta.unsupported = d->unsupported;
	}
	if (d->v->pod == NULL)
		return json_in_fail(&d->in, -EINVAL, "a Pod in a file read for nodes only");
	if (d->in.err != NULL && d->in.err_len > 0)
		d->in.err[0] = '\0';
	return kj_visited(d, d->v->pod(d->v->arg, p, &meta, d->in.err, d->in.err_len));
}
