/* KubeSchedulerConfiguration reader: `pluginConfig`, each plugin's args
 * (sched_config_internal.h; the design note is sched_config_load.c's). Every
 * args type is read strictly, as the rest of the file: an unknown field
 * is an error, a field shmsched cannot honour is refused, one that means
 * nothing here is accepted with one warning. Which plugin takes which
 * fields, read how and kept where, is one table at the end
 * (scfg_args_table); above it are the decoders of the structured fields
 * (resources, shapes, the scoring strategy, spread constraints, the added
 * affinity). */
#include "ingest/sched_config_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/k8s_json.h"

/* Field by field, never by struct assignment, here and below: a struct
 * copy need not copy padding, and configs must compare equal by bytes. */
static void set_res_weight(struct res_weight *rw, int resource, int64_t weight)
{
	memset(rw, 0, sizeof(*rw));
	rw->resource = (uint8_t)resource;
	rw->weight = weight;
}

void scfg_default_resources(struct res_weight *out, uint8_t *n)
{
	set_res_weight(&out[0], RES_CPU, 1);
	set_res_weight(&out[1], RES_MEMORY, 1);
	*n = 2;
}

/* A list of {name, weight}: scoringStrategy.resources (weight 1..100) or
 * the balanced allocation's resources (weight 1; validation_pluginargs.go).
 * In both a weight of 0 or none means 1 (defaults.go); an empty list means
 * cpu and memory. */
static int decode_resources(struct dec *d, json_t *list, bool balanced,
			    struct res_weight *out, uint8_t *n_out)
{
	static const char *const keys[] = {"name", "weight", NULL};
	char vb[SHOW_LEN];
	struct res_weight got[RES_MAX];
	unsigned n = 0;
	size_t i;
	json_t *e;
	if (!scfg_present(list) || (json_is_array(list) && json_array_size(list) == 0)) {
		scfg_default_resources(out, n_out);
		return 0;
	}
	int rc = scfg_need_array(d, list);
	if (rc != 0)
		return rc;
	int walk = 0;
	json_array_foreach(list, i, e) {
		const char *name;
		size_t len, m = scfg_push_index(d, e, i);
		rc = scfg_need_object(d, e);
		if (rc != 0)
			goto fail_entry;
		rc = scfg_only_known(d, e, keys);
		int name_rc = scfg_get_name(d, e, "a resource name", &name, &len);
		if (name_rc != 0) {
			scfg_failed(&rc, name_rc);
			goto fail_entry;
		}
		int64_t weight = 0;
		json_t *w = json_object_get(e, "weight");
		size_t mw = scfg_push_key(d, scfg_key_anchor(e, "weight"), "weight");
		if (scfg_present(w) && !json_is_integer(w)) {
			scfg_failed(&rc, scfg_fail(d, -EINVAL, "%s is not an integer",
					 scfg_show(w, vb, sizeof(vb))));
		} else {
			weight = scfg_present(w) ? (int64_t)json_integer_value(w) : 0;
			if (weight == 0)
				weight = 1;
			if (balanced && weight != 1)
				scfg_failed(&rc, scfg_fail(d, -EINVAL, "%s is not 1 (the only weight "
						 "NodeResourcesBalancedAllocation takes)",
						 scfg_show(w, vb, sizeof(vb))));
			else if (weight < 1 || weight > WEIGHT_MAX)
				scfg_failed(&rc, scfg_fail(d, -ERANGE, "%s is not in 1..%d",
						 scfg_show(w, vb, sizeof(vb)), WEIGHT_MAX));
		}
		scfg_pop(d, mw);

		size_t mn = scfg_push_key(d, scfg_key_anchor(e, "name"), "name");
		json_t *nv = json_object_get(e, "name");
		int idx = res_register(d->res, name, len);
		int reg_rc = 0;
		if (idx == -ENOSPC)
			reg_rc = scfg_fail(d, -ENOSPC, "%s: too many resource names (shmsched "
				      "knows at most %d)", scfg_show(nv, vb, sizeof(vb)),
				      RES_MAX);
		else if (idx == -ENAMETOOLONG)
			reg_rc = scfg_fail(d, -ENAMETOOLONG, "%s is longer than %d bytes",
				      scfg_show(nv, vb, sizeof(vb)), RES_NAME_MAX - 1);
		else if (idx < 0 || idx >= RES_MAX)
			reg_rc = scfg_fail(d, idx < 0 ? idx : -EINVAL, "%s cannot be registered",
				      scfg_show(nv, vb, sizeof(vb)));
		for (unsigned j = 0; reg_rc == 0 && j < n; j++)
			if (got[j].resource == idx)
				reg_rc = scfg_fail(d, -EINVAL, "%s is listed twice",
					      scfg_show(nv, vb, sizeof(vb)));
		scfg_failed(&rc, reg_rc);
		/* Distinct indices below RES_MAX: n never passes RES_MAX. */
		if (rc == 0 && n < RES_MAX)
			set_res_weight(&got[n++], idx, weight);
		scfg_pop(d, mn);
fail_entry:
		scfg_pop(d, m);
		if (scfg_failed(&walk, rc))
			break;
	}
	if (walk != 0)
		return walk;
	memcpy(out, got, n * sizeof(got[0]));
	*n_out = (uint8_t)n;
	return 0;
}

/* A function shape (validation_pluginargs.go validateFunctionShape): at
 * least one point; utilizations strictly increasing (the first that is
 * not is reported), each in 0..100; scores in 0..SHAPE_MAX_SCORE. */
static int decode_shape(struct dec *d, json_t *list, struct shape_point *out,
			uint8_t *n_out)
{
	static const char *const keys[] = {"utilization", "score", NULL};
	char vb[SHOW_LEN];
	int64_t util[SHAPE_MAX_POINTS], score[SHAPE_MAX_POINTS];
	int rc = scfg_need_array(d, list);
	if (rc != 0)
		return rc;
	size_t n = json_array_size(list);
	if (n == 0)
		return scfg_fail(d, -EINVAL, "empty: at least one point must be specified");
	if (n > SHAPE_MAX_POINTS)
		return scfg_fail(d, -EINVAL, "%zu points: utilizations strictly increasing "
			    "in 0..100 are at most %d", n, SHAPE_MAX_POINTS);
	int walk = 0;
	size_t i;
	json_t *e;
	json_array_foreach(list, i, e) {
		size_t m = scfg_push_index(d, e, i);
		util[i] = score[i] = 0; /* Go's zero values when absent */
		rc = scfg_need_object(d, e);
		if (rc == 0) {
			rc = scfg_only_known(d, e, keys);
			static const char *const f[] = {"utilization", "score"};
			int64_t *dst[] = {&util[i], &score[i]};
			for (int k = 0; k < 2; k++) {
				json_t *v = json_object_get(e, f[k]);
				if (!scfg_present(v))
					continue;
				size_t mk = scfg_push_key(d, scfg_key_anchor(e, f[k]), f[k]);
				scfg_failed(&rc, scfg_get_int(d, v, INT32_MIN, INT32_MAX, dst[k]));
				scfg_pop(d, mk);
			}
		}
		scfg_pop(d, m);
		if (scfg_failed(&walk, rc))
			return walk;
	}
	if (walk != 0)
		return walk;
	for (i = 1; i < n; i++)
		if (util[i - 1] >= util[i]) {
			json_t *pt = json_array_get(list, i);
			size_t m = scfg_push_index(d, pt, i);
			size_t mu = scfg_push_key(d, scfg_key_anchor(pt, "utilization"), "utilization");
			scfg_failed(&walk, scfg_fail(d, -EINVAL, "%lld is not more than the point "
					   "before's %lld: values must be sorted in "
					   "increasing order", (long long)util[i],
					   (long long)util[i - 1]));
			scfg_pop(d, mu);
			scfg_pop(d, m);
			break;
		}
	for (i = 0; i < n; i++) {
		json_t *pt = json_array_get(list, i);
		size_t m = scfg_push_index(d, pt, i);
		if (util[i] < 0 || util[i] > 100) {
			size_t mu = scfg_push_key(d, scfg_key_anchor(pt, "utilization"), "utilization");
			scfg_failed(&walk, scfg_fail(d, -ERANGE, "%s is not in 0..100",
					   scfg_show(json_object_get(pt, "utilization"), vb,
						sizeof(vb))));
			scfg_pop(d, mu);
		}
		if (score[i] < 0 || score[i] > SHAPE_MAX_SCORE) {
			size_t ms = scfg_push_key(d, scfg_key_anchor(pt, "score"), "score");
			scfg_failed(&walk, scfg_fail(d, -ERANGE, "%s is not in 0..%d",
					   scfg_show(json_object_get(pt, "score"), vb, sizeof(vb)),
					   SHAPE_MAX_SCORE));
			scfg_pop(d, ms);
		}
		scfg_pop(d, m);
	}
	if (walk != 0)
		return walk;
	memset(out, 0, SHAPE_MAX_POINTS * sizeof(*out));
	for (i = 0; i < n; i++) {
		out[i].utilization = (uint8_t)util[i];
		out[i].score = (uint8_t)score[i];
	}
	*n_out = (uint8_t)n;
	return 0;
}

static int decode_strategy(struct dec *d, json_t *s, struct score_config *sc)
{
	static const char *const keys[] = {"type", "resources",
					   "requestedToCapacityRatio", NULL};
	static const char *const rtcr_keys[] = {"shape", NULL};
	char vb[SHOW_LEN];
	int rc = scfg_need_object(d, s);
	if (rc != 0)
		return rc;
	int walk = scfg_only_known(d, s, keys);
	/* kube defaults a missing scoringStrategy, not a missing type: an
	 * empty type fails its validation, so it fails here too. */
	json_t *t = json_object_get(s, "type");
	size_t m = scfg_push_key(d, scfg_key_anchor(s, "type"), "type");
	bool rtcr = false;
	if (!scfg_present(t))
		rc = scfg_fail(d, -EINVAL, "missing; expected LeastAllocated, "
			  "MostAllocated or RequestedToCapacityRatio");
	else if (scfg_str_is(t, "LeastAllocated"))
		sc->fit_strategy = FIT_LEAST_ALLOCATED;
	else if (scfg_str_is(t, "MostAllocated"))
		sc->fit_strategy = FIT_MOST_ALLOCATED;
	else if ((rtcr = scfg_str_is(t, "RequestedToCapacityRatio")))
		sc->fit_strategy = FIT_REQUESTED_TO_CAPACITY_RATIO;
	else
		rc = scfg_fail(d, -EINVAL, "%s is not LeastAllocated, MostAllocated or "
			  "RequestedToCapacityRatio", scfg_show(t, vb, sizeof(vb)));
	scfg_pop(d, m);
	scfg_failed(&walk, rc);

	json_t *r = json_object_get(s, "resources");
	m = scfg_push_key(d, scfg_key_anchor(s, "resources"), "resources");
	scfg_failed(&walk, decode_resources(d, r, false, sc->fit_resources,
				       &sc->n_fit_resources));
	scfg_pop(d, m);

	json_t *ratio = json_object_get(s, "requestedToCapacityRatio");
	m = scfg_push_key(d, scfg_key_anchor(s, "requestedToCapacityRatio"),
		     "requestedToCapacityRatio");
	if (rtcr && !scfg_present(ratio)) {
		scfg_failed(&walk, scfg_fail(d, -EINVAL, "missing: required when type is "
				   "RequestedToCapacityRatio"));
	} else if (!rtcr && scfg_present(ratio) && scfg_present(t) && walk == 0) {
		scfg_failed(&walk, scfg_fail(d, -EINVAL, "given, but type is %s: kube-scheduler "
				   "takes it only with RequestedToCapacityRatio",
				   scfg_show(t, vb, sizeof(vb))));
	} else if (rtcr) {
		rc = scfg_need_object(d, ratio);
		if (rc == 0) {
			rc = scfg_only_known(d, ratio, rtcr_keys);
			json_t *shape = json_object_get(ratio, "shape");
			size_t ms = scfg_push_key(d, scfg_key_anchor(ratio, "shape"), "shape");
			if (scfg_present(shape))
				scfg_failed(&rc, decode_shape(d, shape, sc->shape,
							 &sc->n_shape));
			else
				scfg_failed(&rc, scfg_fail(d, -EINVAL, "empty: at least one "
						 "point must be specified"));
			scfg_pop(d, ms);
		}
		scfg_failed(&walk, rc);
	}
	scfg_pop(d, m);
	return walk;
}

/* One of PodTopologySpreadArgs.defaultConstraints: a
 * TopologySpreadConstraint validated as ValidatePodTopologySpreadArgs
 * does (maxSkew > 0, a topologyKey that is a label name,
 * whenUnsatisfiable given, no labelSelector: each pod's default selector
 * is used), and minDomains (>= 1) and the node inclusion policies as a
 * pod's. */
static int decode_default_constraint(struct dec *d, json_t *c,
				     struct spread_default *out)
{
	static const char *const keys[] = {"maxSkew", "topologyKey",
					   "whenUnsatisfiable", "labelSelector",
					   "minDomains", "nodeAffinityPolicy",
					   "nodeTaintsPolicy", "matchLabelKeys", NULL};
	char vb[SHOW_LEN];
	int rc = scfg_need_object(d, c);
	if (rc != 0)
		return rc;
	int walk = scfg_only_known(d, c, keys);
	memset(out, 0, sizeof(*out));
	out->min_domains = 1;
	out->node_affinity_policy = SPREAD_POLICY_HONOR;
	out->node_taints_policy = SPREAD_POLICY_IGNORE;
	int64_t v;
	json_t *x = json_object_get(c, "maxSkew");
	size_t m = scfg_push_key(d, scfg_key_anchor(c, "maxSkew"), "maxSkew");
	if (!scfg_present(x))
		rc = scfg_fail(d, -EINVAL, "missing: not in valid range (0, inf)");
	else if ((rc = scfg_get_int(d, x, 1, INT32_MAX, &v)) == 0)
		out->max_skew = (int32_t)v;
	scfg_pop(d, m);
	scfg_failed(&walk, rc);

	x = json_object_get(c, "topologyKey");
	m = scfg_push_key(d, scfg_key_anchor(c, "topologyKey"), "topologyKey");
	if (!scfg_present(x) || (json_is_string(x) && json_string_length(x) == 0))
		rc = scfg_fail(d, -EINVAL, "missing: can not be empty");
	else if ((rc = scfg_need_string(d, x)) == 0 &&
		 !scfg_is_qualified_name(json_string_value(x), json_string_length(x)))
		rc = scfg_fail(d, -EINVAL, "%s is not a label name", scfg_show(x, vb, sizeof(vb)));
	else if (rc == 0)
		rc = scfg_intern_value(d, x, &out->topology_key);
	scfg_pop(d, m);
	scfg_failed(&walk, rc);

	x = json_object_get(c, "whenUnsatisfiable");
	m = scfg_push_key(d, scfg_key_anchor(c, "whenUnsatisfiable"), "whenUnsatisfiable");
	rc = 0;
	if (!scfg_present(x) || scfg_str_is(x, ""))
		rc = scfg_fail(d, -EINVAL, "missing: can not be empty (DoNotSchedule or "
			  "ScheduleAnyway)");
	else if (scfg_str_is(x, "DoNotSchedule"))
		out->hard = true;
	else if (!scfg_str_is(x, "ScheduleAnyway"))
		rc = scfg_fail(d, -EINVAL, "%s is not DoNotSchedule or ScheduleAnyway",
			  scfg_show(x, vb, sizeof(vb)));
	scfg_pop(d, m);
	scfg_failed(&walk, rc);

	x = json_object_get(c, "labelSelector");
	if (scfg_present(x)) {
		m = scfg_push_key(d, scfg_key_anchor(c, "labelSelector"), "labelSelector");
		scfg_failed(&walk, scfg_fail(d, -EINVAL, "forbidden: a default constraint must "
				   "not define a selector, as it is deduced for each "
				   "pod"));
		scfg_pop(d, m);
	}
	x = json_object_get(c, "minDomains");
	if (scfg_present(x)) {
		m = scfg_push_key(d, scfg_key_anchor(c, "minDomains"), "minDomains");
		if ((rc = scfg_get_int(d, x, 1, INT32_MAX, &v)) == 0)
			out->min_domains = (int32_t)v;
		scfg_pop(d, m);
		scfg_failed(&walk, rc);
	}
	static const char *const policies[] = {"nodeAffinityPolicy",
					       "nodeTaintsPolicy"};
	uint8_t *pol[] = {&out->node_affinity_policy, &out->node_taints_policy};
	for (int k = 0; k < 2; k++) {
		x = json_object_get(c, policies[k]);
		if (!scfg_present(x))
			continue;
		m = scfg_push_key(d, scfg_key_anchor(c, policies[k]), policies[k]);
		rc = 0;
		if (scfg_str_is(x, "Honor"))
			*pol[k] = SPREAD_POLICY_HONOR;
		else if (scfg_str_is(x, "Ignore"))
			*pol[k] = SPREAD_POLICY_IGNORE;
		else
			rc = scfg_fail(d, -EINVAL, "%s is not Honor or Ignore",
				  scfg_show(x, vb, sizeof(vb)));
		scfg_pop(d, m);
		scfg_failed(&walk, rc);
	}
	x = json_object_get(c, "matchLabelKeys");
	if (scfg_present(x)) {
		m = scfg_push_key(d, scfg_key_anchor(c, "matchLabelKeys"), "matchLabelKeys");
		rc = scfg_need_array(d, x);
		if (rc == 0 && json_array_size(x) > 0)
			scfg_warn_at(d, "accepted, no effect: kube-scheduler sets a default "
				"constraint's selector to the pod's default selector, "
				"whatever these keys would add");
		scfg_pop(d, m);
		scfg_failed(&walk, rc);
	}
	return walk;
}

/* PodTopologySpreadArgs: defaultingType System (kube's defaults: it takes
 * no defaultConstraints) or List with the profile's own constraints
 * (none: no default spreading). */
static int decode_spread_args(struct dec *d, json_t *args, struct score_config *sc)
{
	static const char *const keys[] = {"apiVersion", "kind", "defaultConstraints",
					   "defaultingType", NULL};
	char vb[SHOW_LEN];
	int rc = scfg_check_args(d, args, "PodTopologySpreadArgs");
	if (rc != 0)
		return rc;
	int walk = scfg_only_known(d, args, keys);
	/* defaults.go: none or "" is System. */
	json_t *dt = json_object_get(args, "defaultingType");
	bool list = false;
	size_t m = scfg_push_key(d, scfg_key_anchor(args, "defaultingType"), "defaultingType");
	if (scfg_present(dt) && scfg_str_is(dt, "List"))
		list = true;
	else if (scfg_present(dt) && !scfg_str_is(dt, "System") && !scfg_str_is(dt, ""))
		scfg_failed(&walk, scfg_fail(d, -EINVAL, "%s is not System or List",
				   scfg_show(dt, vb, sizeof(vb))));
	scfg_pop(d, m);
	sc->spread_defaulting = list ? SPREAD_DEFAULTING_LIST : SPREAD_DEFAULTING_SYSTEM;
	sc->n_default_spread = 0;
	memset(sc->default_spread, 0, sizeof(sc->default_spread));

	json_t *dc = json_object_get(args, "defaultConstraints");
	if (!scfg_present(dc))
		return walk;
	m = scfg_push_key(d, scfg_key_anchor(args, "defaultConstraints"), "defaultConstraints");
	rc = scfg_need_array(d, dc);
	if (rc == 0 && json_array_size(dc) > 0 && !list && walk == 0)
		rc = scfg_fail(d, -EINVAL, "given, but defaultingType is System: "
			  "kube-scheduler takes defaultConstraints only with "
			  "defaultingType List");
	else if (rc == 0 && json_array_size(dc) > SPREAD_MAX_DEFAULTS)
		rc = scfg_fail(d, -ENOSPC, "%zu constraints, at most %d "
			  "(SPREAD_MAX_DEFAULTS)", json_array_size(dc),
			  SPREAD_MAX_DEFAULTS);
	if (rc != 0 || !list) {
		scfg_pop(d, m);
		scfg_failed(&walk, rc);
		return walk;
	}
	size_t i;
	json_t *c;
	unsigned n = 0;
	json_array_foreach(dc, i, c) {
		size_t mi = scfg_push_index(d, c, i);
		struct spread_default got;
		rc = decode_default_constraint(d, c, &got);
		/* validateConstraintNotRepeat: one per key and action. */
		for (unsigned j = 0; rc == 0 && j < n; j++)
			if (sc->default_spread[j].topology_key == got.topology_key &&
			    sc->default_spread[j].hard == got.hard)
				rc = scfg_fail(d, -EINVAL, "the same topologyKey and "
					  "whenUnsatisfiable as defaultConstraints[%u] "
					  "(kube-scheduler: Duplicate value)", j);
		if (rc == 0)
			sc->default_spread[n++] = got;
		scfg_pop(d, mi);
		if (scfg_failed(&walk, rc))
			break;
	}
	sc->n_default_spread = (uint8_t)n;
	scfg_pop(d, m);
	return walk;
}

/* NodeAffinityArgs.addedAffinity: the keys of a core/v1 NodeAffinity,
 * checked strictly here (the pod decoder ignores unknown fields), then
 * read by the pod decoder (ingest/k8s_json.h) as a pod's node affinity, so
 * both mean the same. */
static int check_node_affinity_keys(struct dec *d, json_t *na)
{
	static const char *const aff[] = {
		"requiredDuringSchedulingIgnoredDuringExecution",
		"preferredDuringSchedulingIgnoredDuringExecution", NULL};
	static const char *const selector[] = {"nodeSelectorTerms", NULL};
	static const char *const term[] = {"matchExpressions", "matchFields", NULL};
	static const char *const req[] = {"key", "operator", "values", NULL};
	static const char *const pref[] = {"weight", "preference", NULL};
	if (!json_is_object(na))
		return 0; /* the pod decoder names the type */
	int walk = scfg_only_known(d, na, aff);
	json_t *r = json_object_get(na, aff[0]);
	json_t *terms = json_is_object(r) ? json_object_get(r, selector[0]) : NULL;
	json_t *prefs = json_object_get(na, aff[1]);
	if (json_is_object(r)) {
		size_t m = scfg_push_key(d, scfg_key_anchor(na, aff[0]), aff[0]);
		scfg_failed(&walk, scfg_only_known(d, r, selector));
		scfg_pop(d, m);
	}
	/* Every term, required or preferred, with its path. */
	for (int kind = 0; kind < 2; kind++) {
		json_t *list = kind == 0 ? terms : prefs;
		if (!json_is_array(list))
			continue;
		size_t m0 = scfg_push_key(d, scfg_key_anchor(na, aff[kind]), aff[kind]);
		size_t m1 = kind == 0 ? scfg_push_key(d, scfg_key_anchor(r, selector[0]),
						 selector[0]) : 0;
		size_t i;
		json_t *t;
		json_array_foreach(list, i, t) {
			size_t mi = scfg_push_index(d, t, i);
			json_t *tt = t;
			size_t mp = 0;
			if (kind == 1 && json_is_object(t)) {
				scfg_failed(&walk, scfg_only_known(d, t, pref));
				tt = json_object_get(t, "preference");
				mp = scfg_push_key(d, scfg_key_anchor(t, "preference"), "preference");
			}
			if (json_is_object(tt)) {
				scfg_failed(&walk, scfg_only_known(d, tt, term));
				for (int l = 0; term[l] != NULL; l++) {
					json_t *reqs = json_object_get(tt, term[l]);
					if (!json_is_array(reqs))
						continue;
					size_t ml = scfg_push_key(d, scfg_key_anchor(tt, term[l]),
							     term[l]);
					size_t k;
					json_t *rq;
					json_array_foreach(reqs, k, rq) {
						size_t mk = scfg_push_index(d, rq, k);
						if (json_is_object(rq))
							scfg_failed(&walk, scfg_only_known(d, rq, req));
						scfg_pop(d, mk);
					}
					scfg_pop(d, ml);
				}
			}
			if (kind == 1 && json_is_object(t))
				scfg_pop(d, mp);
			scfg_pop(d, mi);
		}
		if (kind == 0)
			scfg_pop(d, m1);
		scfg_pop(d, m0);
	}
	return walk;
}

static int decode_added_affinity(struct dec *d, json_t *na, struct score_config *sc)
{
	int rc = check_node_affinity_keys(d, na);
	if (rc != 0)
		return rc;
	if (d->strings == NULL)
		return scfg_fail(d, -EINVAL, "cannot be read here (no string table given)");
	/* As a pod: {"kind": "Pod", "metadata": ..., "spec": {"affinity":
	 * {"nodeAffinity": <addedAffinity>}}}. */
	json_t *pod = json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:{s:O}}}",
				"apiVersion", "v1", "kind", "Pod", "metadata",
				"name", "added-affinity", "namespace", "default",
				"spec", "affinity", "nodeAffinity", na);
	char *text = pod != NULL ? json_dumps(pod, JSON_COMPACT) : NULL;
	json_decref(pod);
	if (text == NULL)
		return scfg_fail(d, -ENOMEM, "out of memory");
	struct pod_spec got;
	char why[512];
	struct k8s_ctx kc = {.strings = d->strings, .res = d->res,
			     .no_new_resources = true};
	rc = k8s_load_one("", text, strlen(text), &kc, &got, NULL, why, sizeof(why));
	free(text);
	if (rc < 0) {
		/* "<name>: pod default/added-affinity: spec.affinity.nodeAffinity.X:
		 * msg" -> "X: msg", under this path. */
		static const char lead[] = "spec.affinity.nodeAffinity";
		const char *at = strstr(why, lead);
		at = at != NULL ? at + sizeof(lead) - 1 : why;
		if (*at == '.')
			at++;
		return scfg_fail(d, rc, "%s (read as a pod's node affinity)", at);
	}
	/* NewNodeSelector (component-helpers nodeaffinity.go) reports every
	 * requirement labels.NewRequirement refuses, and the plugin's New
	 * fails on it: the pod decoder only marks those in required terms. */
	for (unsigned i = 0; i < got.n_exprs; i++)
		if (got.exprs[i].invalid)
			return scfg_fail(d, -EINVAL, "requiredDuringSchedulingIgnoredDuring"
				    "Execution: a requirement's value is not a valid "
				    "label value (or, for Gt / Lt, not an integer); "
				    "kube-scheduler's NewNodeSelector refuses it "
				    "(read as a pod's node affinity)");
	struct pod_spec *a = &sc->added_affinity;
	memset(a, 0, sizeof(*a));
	a->has_required = got.has_required;
	a->n_terms = got.n_terms;
	a->n_preferred = got.n_preferred;
	a->n_exprs = got.n_exprs;
	a->n_values = got.n_values;
	memcpy(a->terms, got.terms, sizeof(a->terms));
	memcpy(a->preferred, got.preferred, sizeof(a->preferred));
	memcpy(a->exprs, got.exprs, sizeof(a->exprs));
	memcpy(a->values, got.values, sizeof(a->values));
	sc->has_added_affinity = a->has_required || a->n_preferred > 0;
	return 0;
}

/* ---- the args table --------------------------------------------------------
 *
 * Each plugin's args as data, in the manner of nginx's ngx_command_t: a
 * field's name, the function that reads it (typed setters for the plain
 * ones, a decoder above for a structured one), and where its value goes
 * in the profile (an offset into struct score_config). scfg_decode_args()
 * checks apiVersion and kind, refuses every key the table does not name,
 * then reads the fields in the table's order (the order of their
 * messages). PodTopologySpreadArgs keeps a decoder of its own: its two
 * fields depend on each other. */

#define ARGS_FIELDS_MAX 8

static void *arg_at(struct score_config *sc, const struct arg_field *f)
{
	return (char *)sc + f->offset;
}

/* An integer in lo..hi, kept as an int32_t (when kept). */
static int arg_int(struct dec *d, json_t *v, const struct arg_field *f,
		     struct score_config *sc)
{
	int64_t x;
	int rc = scfg_get_int(d, v, f->lo, f->hi, &x);
	if (rc == 0 && f->offset != ARG_NO_STORE) {
		int32_t x32 = (int32_t)x;
		memcpy(arg_at(sc, f), &x32, sizeof(x32));
	}
	return rc;
}

static int arg_bool(struct dec *d, json_t *v, const struct arg_field *f,
		    struct score_config *sc)
{
	bool b;
	int rc = scfg_get_bool(d, v, &b);
	if (rc == 0 && f->offset != ARG_NO_STORE)
		memcpy(arg_at(sc, f), &b, sizeof(b));
	return rc;
}

static int arg_string(struct dec *d, json_t *v, const struct arg_field *f,
		      struct score_config *sc)
{
	(void)f;
	(void)sc;
	return scfg_need_string(d, v);
}

/* A list that must stay empty: an empty list is the default, harmless;
 * an entry (NodeResourcesFit's ignoredResources, ignoredResourceGroups)
 * would let the fit filter ignore a resource shmsched checks. */
static int arg_empty_list(struct dec *d, json_t *v, const struct arg_field *f,
			  struct score_config *sc)
{
	(void)f;
	(void)sc;
	int rc = scfg_need_array(d, v);
	if (rc == 0 && json_array_size(v) > 0)
		rc = scfg_not_supported(d);
	return rc;
}

static int arg_strategy(struct dec *d, json_t *v, const struct arg_field *f,
			struct score_config *sc)
{
	(void)f;
	return decode_strategy(d, v, sc);
}

static int arg_balanced_resources(struct dec *d, json_t *v,
				  const struct arg_field *f,
				  struct score_config *sc)
{
	(void)f;
	return decode_resources(d, v, true, sc->balanced_resources,
				&sc->n_balanced_resources);
}

/* VolumeBindingArgs.shape: validated as RequestedToCapacityRatio's. */
static int arg_shape_checked(struct dec *d, json_t *v, const struct arg_field *f,
			     struct score_config *sc)
{
	(void)f;
	(void)sc;
	struct shape_point pts[SHAPE_MAX_POINTS];
	uint8_t n;
	return decode_shape(d, v, pts, &n);
}

static int arg_added_affinity(struct dec *d, json_t *v, const struct arg_field *f,
			      struct score_config *sc)
{
	(void)f;
	return decode_added_affinity(d, v, sc);
}

#define SC(field) offsetof(struct score_config, field)

static const struct arg_field fit_fields[] = {
	{"ignoredResources", arg_empty_list, ARG_NO_STORE, 0, 0, false},
	{"ignoredResourceGroups", arg_empty_list, ARG_NO_STORE, 0, 0, false},
	{"scoringStrategy", arg_strategy, ARG_NO_STORE, 0, 0, false},
	{NULL, NULL, 0, 0, 0, false},
};

/* Absent resources are the default, cpu and memory. */
static const struct arg_field balanced_fields[] = {
	{"resources", arg_balanced_resources, ARG_NO_STORE, 0, 0, true},
	{NULL, NULL, 0, 0, 0, false},
};

static const struct arg_field interpod_fields[] = {
	{"hardPodAffinityWeight", arg_int, SC(hard_pod_affinity_weight), 0, 100,
	 false},
	{"ignorePreferredTermsOfExistingPods", arg_bool,
	 SC(ignore_preferred_terms_of_existing), 0, 0, false},
	{NULL, NULL, 0, 0, 0, false},
};

static const struct arg_field node_affinity_fields[] = {
	{"addedAffinity", arg_added_affinity, ARG_NO_STORE, 0, 0, false},
	{NULL, NULL, 0, 0, 0, false},
};

/* GpuFragmentationArgs (ours): maxShapes, modelReservation, cpuLimited. */
static const struct arg_field gpu_frag_fields[] = {
	{"maxShapes", arg_int, SC(gpu_frag_max_shapes), 1,
	 SCORE_GPU_FRAG_MAX_SHAPES, false},
	{"modelReservation", arg_int, SC(gpu_frag_model_reservation), 0, 1000,
	 false},
	{"cpuLimited", arg_bool, SC(gpu_frag_cpu_limited), 0, 0, false},
	{NULL, NULL, 0, 0, 0, false},
};

/* The args of plugins shmsched does not run (DefaultPreemption:
 * shmschedd's preemption keeps kube's defaults; volumes, claims: not
 * run): their fields checked as kube checks them, then one warning.
 * DefaultPreemptionArgs: defaults.go 10 and 100; validation: 0..100,
 * >= 0, not both 0. */
static const struct arg_field preemption_fields[] = {
	{"minCandidateNodesPercentage", arg_int, ARG_NO_STORE, 0, 100, false},
	{"minCandidateNodesAbsolute", arg_int, ARG_NO_STORE, 0, INT32_MAX, false},
	{NULL, NULL, 0, 0, 0, false},
};

static int preemption_post(struct dec *d, json_t *args, int walk)
{
	if (walk != 0)
		return walk;
	/* Both read (or absent: their defaults) once the fields passed. */
	json_t *p = json_object_get(args, "minCandidateNodesPercentage");
	json_t *a = json_object_get(args, "minCandidateNodesAbsolute");
	int64_t pct = scfg_present(p) ? json_integer_value(p) : 10;
	int64_t abs = scfg_present(a) ? json_integer_value(a) : 100;
	if (pct == 0 && abs == 0)
		scfg_failed(&walk, scfg_fail(d, -EINVAL, "minCandidateNodesPercentage "
					     "and minCandidateNodesAbsolute cannot "
					     "both be 0"));
	return walk;
}

static const struct arg_field volume_binding_fields[] = {
	{"bindTimeoutSeconds", arg_int, ARG_NO_STORE, 0, INT64_MAX, false},
	{"shape", arg_shape_checked, ARG_NO_STORE, 0, 0, false},
	{NULL, NULL, 0, 0, 0, false},
};

static const struct arg_field dra_fields[] = {
	{"filterTimeout", arg_string, ARG_NO_STORE, 0, 0, false},
	{"bindingTimeout", arg_string, ARG_NO_STORE, 0, 0, false},
	{NULL, NULL, 0, 0, 0, false},
};

/* Every plugin whose args shmsched reads; unit.plugin_table checks that
 * each names a row of plugin_table. */
const struct args_kind scfg_args_table[] = {
	{"NodeResourcesFit", "NodeResourcesFitArgs", fit_fields, NULL, NULL, NULL},
	{"NodeResourcesBalancedAllocation", "NodeResourcesBalancedAllocationArgs",
	 balanced_fields, NULL, NULL, NULL},
	{"InterPodAffinity", "InterPodAffinityArgs", interpod_fields, NULL, NULL,
	 NULL},
	{"PodTopologySpread", "PodTopologySpreadArgs", NULL, decode_spread_args,
	 NULL, NULL},
	{"NodeAffinity", "NodeAffinityArgs", node_affinity_fields, NULL, NULL, NULL},
	{"GpuFragmentation", "GpuFragmentationArgs", gpu_frag_fields, NULL, NULL,
	 NULL},
	{"DefaultPreemption", "DefaultPreemptionArgs", preemption_fields, NULL,
	 preemption_post, "shmschedd's preemption uses kube's defaults (10%, at "
	 "least 100 candidate nodes)"},
	{"VolumeBinding", "VolumeBindingArgs", volume_binding_fields, NULL, NULL,
	 "shmsched places no pod with volumes to bind"},
	{"DynamicResources", "DynamicResourcesArgs", dra_fields, NULL, NULL,
	 "shmsched places no pod with resource claims"},
	{NULL, NULL, NULL, NULL, NULL, NULL},
};

const struct args_kind *scfg_args_of(const char *name, size_t len)
{
	for (const struct args_kind *k = scfg_args_table; k->plugin != NULL; k++)
		if (strlen(k->plugin) == len && memcmp(k->plugin, name, len) == 0)
			return k;
	return NULL;
}

int scfg_decode_args(struct dec *d, json_t *args, const struct args_kind *k,
		     struct score_config *sc)
{
	if (k->decode != NULL)
		return k->decode(d, args, sc);
	int rc = scfg_check_args(d, args, k->kind);
	if (rc != 0)
		return rc;
	const char *known[ARGS_FIELDS_MAX + 3] = {"apiVersion", "kind"};
	size_t n = 2;
	for (const struct arg_field *f = k->fields;
	     f->name != NULL && n < ARGS_FIELDS_MAX + 2; f++)
		known[n++] = f->name;
	known[n] = NULL;
	int walk = scfg_only_known(d, args, known);
	for (const struct arg_field *f = k->fields; f->name != NULL; f++) {
		json_t *v = json_object_get(args, f->name);
		if (!f->always && !scfg_present(v))
			continue;
		size_t m = scfg_push_key(d, scfg_key_anchor(args, f->name), f->name);
		scfg_failed(&walk, f->set(d, v, f, sc));
		scfg_pop(d, m);
	}
	if (k->post != NULL)
		walk = k->post(d, args, walk);
	if (walk == 0 && k->no_effect != NULL)
		scfg_warn_at(d, "accepted, no effect: %s", k->no_effect);
	return walk;
}

int scfg_decode_plugin_config(struct dec *d, json_t *list,
				struct score_config *sc)
{
	static const char *const keys[] = {"name", "args", NULL};
	char vb[SHOW_LEN];
	if (!scfg_present(list))
		return 0;
	int rc = scfg_need_array(d, list);
	if (rc != 0)
		return rc;
	int walk = 0;
	size_t i;
	json_t *e;
	json_array_foreach(list, i, e) {
		const char *name;
		size_t len, m = scfg_push_index(d, e, i);
		rc = scfg_need_object(d, e);
		if (rc != 0)
			goto next;
		rc = scfg_only_known(d, e, keys);
		int name_rc = scfg_get_name(d, e, "a plugin name", &name, &len);
		if (name_rc != 0) {
			scfg_failed(&rc, name_rc);
			goto next;
		}
		json_t *nv = json_object_get(e, "name");
		/* validatePluginConfig: one config per name. */
		for (size_t j = 0; j < i; j++) {
			json_t *other = json_object_get(json_array_get(list, j), "name");
			if (json_is_string(other) && json_equal(other, nv)) {
				size_t mn = scfg_push_key(d, scfg_key_anchor(e, "name"), "name");
				scfg_failed(&rc, scfg_fail(d, -EINVAL, "%s is configured twice "
						 "(pluginConfig[%zu]; kube-scheduler: "
						 "Duplicate value)",
						 scfg_show(nv, vb, sizeof(vb)), j));
				scfg_pop(d, mn);
				goto next;
			}
		}
		json_t *args = json_object_get(e, "args");
		size_t ma = scfg_push_key(d, scfg_key_anchor(e, "args"), "args");
		int p = scfg_plugin_entry_lookup(name, len);
		const struct args_kind *kind;
		if (scfg_is_one_of(name, len, scfg_plugins_removed)) {
			size_t mn = scfg_push_key(d, scfg_key_anchor(e, "name"), "name");
			scfg_failed(&rc, scfg_fail(d, -EINVAL, "%s was invalid in version \"%s\"",
					 scfg_show(nv, vb, sizeof(vb)), CONFIG_API_VERSION));
			scfg_pop(d, mn);
		} else if (!scfg_present(args)) {
			/* None: the plugin's defaults. */
		} else if ((kind = scfg_args_of(name, len)) != NULL) {
			scfg_failed(&rc, scfg_decode_args(d, args, kind, sc));
		} else if (p >= 0) {
			scfg_warn_at(d, "accepted, no effect: %s takes no args",
				scfg_show(nv, vb, sizeof(vb)));
		} else {
			scfg_warn_at(d, "accepted, no effect: %s is no plugin of shmsched's "
				"or kube-scheduler's", scfg_show(nv, vb, sizeof(vb)));
		}
		scfg_pop(d, ma);
next:
		scfg_pop(d, m);
		if (scfg_failed(&walk, rc))
			break;
	}
	return walk;
}
