/* kube-scheduler's extender protocol (k8s.io/kube-scheduler/extender/v1),
 * so that a stock kube-scheduler can delegate to shmsched:
 *
 *   POST /extender/filter      ExtenderArgs -> ExtenderFilterResult
 *   POST /extender/prioritize  ExtenderArgs -> HostPriorityList
 *   POST /extender/bind        ExtenderBindingArgs -> ExtenderBindingResult
 *   POST /extender/preempt     ExtenderPreemptionArgs -> ExtenderPreemptionResult
 *
 * Filter and prioritize evaluate the pod against every node the daemon
 * knows (shmsched_evaluate(): its profile's filters and scores, every node
 * visited) and answer for the candidates kube-scheduler sent: Nodes (a
 * NodeList, when the extender is not nodeCacheCapable: the passing Node
 * objects are sent back) or NodeNames (nodeCacheCapable). shmsched judges
 * nodes as its own cluster state holds them, not from the Node objects
 * sent: keep it in step (the admin routes, `shmsched resync`). A candidate
 * it does not know fails as unresolvable. Scores are the weighted totals
 * scaled to 0..MaxExtenderPriority (10) against the best candidate.
 *
 * Bind records the placement in shmsched (the pod pinned to the chosen
 * node with spec.nodeName, placed through the gateway's identity: GET and
 * DELETE /v1/placements find it), so shmsched's accounting follows
 * kube-scheduler's choice. It does not create the Kubernetes Binding:
 * kube-scheduler expects a binder extender to do that, so leave bindVerb
 * out unless something else binds. The pod's spec comes from the filter
 * or prioritize call that saw it (a cache of `cache_pods` pods by UID).
 *
 * Preempt passes kube-scheduler's candidates back unchanged (the daemon
 * preempts only for its own waiting pods), as MetaVictims (pod UIDs).
 *
 * The types have no json tags: members are the Go field names, and are
 * read in any case as Go's decoder does.
 */
#include "gateway/gateway_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

struct cached_pod {
	char key[GW_POD_NAME_MAX + 128]; /* the UID, or namespace/name */
	char name[GW_POD_NAME_MAX];      /* namespace/name */
	json_t *spec_key;                /* NULL: a free slot */
};

struct gw_extender {
	pthread_mutex_t lock;
	struct cached_pod *ring; /* [cap], oldest at head once full */
	size_t cap, head, n;
	uint32_t *table;         /* ring index + 1, by hash of key */
	size_t mask;
};

enum verb { V_FILTER, V_PRIORITIZE, V_BIND, V_PREEMPT };

/* What a job carries for the answer. */
struct ext_job {
	enum verb verb;
	struct gw_extender_args args; /* filter, prioritize */
	char node[GW_NAME_MAX + 1];   /* bind: the node chosen */
};

struct gw_extender *gw_extender_create(size_t cache_pods)
{
	struct gw_extender *x = calloc(1, sizeof(*x));
	if (x == NULL)
		return NULL;
	x->cap = cache_pods ? cache_pods : 1;
	size_t t = 2;
	while (t < 2 * x->cap)
		t *= 2;
	x->mask = t - 1;
	x->ring = calloc(x->cap, sizeof(*x->ring));
	x->table = calloc(t, sizeof(*x->table));
	if (x->ring == NULL || x->table == NULL) {
		free(x->ring);
		free(x->table);
		free(x);
		return NULL;
	}
	pthread_mutex_init(&x->lock, NULL);
	return x;
}

void gw_extender_destroy(struct gw_extender *x)
{
	if (x == NULL)
		return;
	for (size_t i = 0; i < x->cap; i++)
		json_decref(x->ring[i].spec_key);
	free(x->ring);
	free(x->table);
	pthread_mutex_destroy(&x->lock);
	free(x);
}

/* --- the cache of pods from filter to bind (under x->lock) ----------------- */

static size_t home_of(const struct gw_extender *x, const char *key)
{
	return hash64(key, strlen(key)) & x->mask;
}

static size_t *find_bucket(struct gw_extender *x, const char *key, size_t *bucket)
{
	for (size_t i = home_of(x, key);; i = (i + 1) & x->mask) {
		if (x->table[i] == 0) {
			*bucket = i;
			return NULL;
		}
		if (strcmp(x->ring[x->table[i] - 1].key, key) == 0) {
			*bucket = i;
			return bucket;
		}
	}
}

static void table_remove(struct gw_extender *x, size_t i)
{
	size_t j = i;
	for (;;) {
		j = (j + 1) & x->mask;
		if (x->table[j] == 0)
			break;
		size_t home = home_of(x, x->ring[x->table[j] - 1].key);
		bool stays = i <= j ? (i < home && home <= j) : (i < home || home <= j);
		if (stays)
			continue;
		x->table[i] = x->table[j];
		i = j;
	}
	x->table[i] = 0;
}

/* The cache keeps deep copies, and hands out deep copies: a jansson value
 * must not be shared between threads (its reference count is not
 * thread-safe), and the spec a bind takes lives in a job that may die in
 * the dispatcher's thread. */
static void cache_put(struct gw_extender *x, const char *key, const char *name,
		      const json_t *spec_key)
{
	if (key[0] == '\0' || strlen(key) >= sizeof(x->ring[0].key))
		return;
	json_t *copy = json_deep_copy(spec_key);
	if (copy == NULL)
		return;
	pthread_mutex_lock(&x->lock);
	size_t b;
	if (find_bucket(x, key, &b) != NULL) {
		struct cached_pod *c = &x->ring[x->table[b] - 1];
		json_decref(c->spec_key);
		c->spec_key = copy;
		pthread_mutex_unlock(&x->lock);
		return;
	}
	size_t slot;
	if (x->n < x->cap) {
		slot = x->n++;
	} else {
		/* Full: the oldest goes. */
		slot = x->head;
		x->head = (x->head + 1) % x->cap;
		size_t old;
		if (find_bucket(x, x->ring[slot].key, &old) != NULL)
			table_remove(x, old);
		json_decref(x->ring[slot].spec_key);
		find_bucket(x, key, &b); /* the removal may have moved the gap */
	}
	struct cached_pod *c = &x->ring[slot];
	snprintf(c->key, sizeof(c->key), "%s", key);
	snprintf(c->name, sizeof(c->name), "%s", name);
	c->spec_key = copy;
	x->table[b] = (uint32_t)slot + 1;
	pthread_mutex_unlock(&x->lock);
}

/* A copy of the cached spec key of `key` (the caller's own), or NULL. */
static json_t *cache_get(struct gw_extender *x, const char *key)
{
	pthread_mutex_lock(&x->lock);
	size_t b;
	json_t *k = NULL;
	if (key[0] != '\0' && strlen(key) < sizeof(x->ring[0].key) &&
	    find_bucket(x, key, &b) != NULL)
		k = json_deep_copy(x->ring[x->table[b] - 1].spec_key);
	pthread_mutex_unlock(&x->lock);
	return k;
}

/* --- answers -------------------------------------------------------------- */

static void reply_json(struct gw_http_reply *r, unsigned code, json_t *v)
{
	char *text = v ? json_dumps(v, JSON_COMPACT) : NULL;
	json_decref(v);
	r->code = text ? code : 500;
	r->content_type = "application/json";
	json_buf_puts(&r->body, text ? text : "{\"Error\":\"out of memory\"}");
	json_buf_puts(&r->body, "\n");
	free(text);
}

static void reply_status(struct gw_http_reply *r, unsigned code, const char *reason,
			 const char *msg)
{
	r->code = code;
	r->content_type = "application/json";
	json_buf_puts(&r->body, "{\"kind\":\"Status\",\"apiVersion\":\"v1\","
		      "\"metadata\":{},\"status\":\"Failure\",\"message\":");
	json_buf_string(&r->body, msg);
	json_buf_puts(&r->body, ",\"reason\":");
	json_buf_string(&r->body, reason);
	json_buf_printf(&r->body, ",\"code\":%u}\n", code);
}

static void ext_free(void *p)
{
	struct ext_job *e = p;
	if (e == NULL)
		return;
	gw_extender_args_free(&e->args);
	free(e);
}

/* ExtenderPreemptionArgs -> ExtenderPreemptionResult: every candidate
 * node back, with its victims as UIDs. */
static void preempt(const char *body, size_t len, struct gw_http_reply *r)
{
	json_error_t je;
	json_t *args = json_loadb(body, len, JSON_REJECT_DUPLICATES, &je);
	char msg[512];
	if (args == NULL || !json_is_object(args)) {
		snprintf(msg, sizeof(msg), args ? "ExtenderPreemptionArgs: expected "
			 "an object" : "line %d, column %d: JSON: %s", je.line,
			 je.column, je.text);
		json_decref(args);
		reply_status(r, 400, "BadRequest", msg);
		return;
	}
	json_t *out = json_object();
	const json_t *victims = gw_member_ci(args, "NodeNameToVictims");
	const json_t *meta = gw_member_ci(args, "NodeNameToMetaVictims");
	const bool full = json_is_object(victims) && json_object_size(victims) > 0;
	const json_t *from = full ? victims : meta;
	const char *node;
	json_t *v;
	bool bad = false;
	if (from != NULL && !json_is_null(from) && !json_is_object(from)) {
		bad = true;
		snprintf(msg, sizeof(msg), "%s: expected an object of nodes",
			 full ? "NodeNameToVictims" : "NodeNameToMetaVictims");
	}
	if (!bad && json_is_object(from))
		json_object_foreach((json_t *)from, node, v) {
			json_t *pods = json_array();
			const json_t *in = gw_member_ci(v, "Pods");
			size_t i;
			json_t *p;
			if (in != NULL && !json_is_null(in) && !json_is_array(in)) {
				bad = true;
				snprintf(msg, sizeof(msg), "%s.%s.Pods: expected an array",
					 full ? "NodeNameToVictims"
					      : "NodeNameToMetaVictims", node);
				json_decref(pods);
				break;
			}
			json_array_foreach(in, i, p) {
				const json_t *uid = full
					? json_object_get(json_object_get(p, "metadata"), "uid")
					: gw_member_ci(p, "UID");
				json_array_append_new(pods, json_pack(
					"{s:s}", "UID", json_is_string(uid)
					? json_string_value(uid) : ""));
			}
			const json_t *pdb = gw_member_ci(v, "NumPDBViolations");
			json_object_set_new(out, node, json_pack(
				"{s:o,s:I}", "Pods", pods, "NumPDBViolations",
				(json_int_t)(json_is_integer(pdb) ? json_integer_value(pdb) : 0)));
		}
	json_decref(args);
	if (bad) {
		json_decref(out);
		reply_status(r, 400, "BadRequest", msg);
		return;
	}
	reply_json(r, 200, json_pack("{s:o}", "NodeNameToMetaVictims", out));
}

void gw_extender_start(struct gw_extender *x, const char *verb, const char *body,
		       size_t len, size_t max_nodes, struct gw_http_reply *r)
{
	*r = (struct gw_http_reply){0};
	char err[1024];
	enum verb v;
	if (strcmp(verb, "filter") == 0)
		v = V_FILTER;
	else if (strcmp(verb, "prioritize") == 0)
		v = V_PRIORITIZE;
	else if (strcmp(verb, "bind") == 0)
		v = V_BIND;
	else if (strcmp(verb, "preempt") == 0)
		v = V_PREEMPT;
	else {
		snprintf(err, sizeof(err), "/extender/%s: no such verb (filter, "
			 "prioritize, bind, preempt)", verb);
		reply_status(r, 404, "NotFound", err);
		return;
	}
	if (v == V_PREEMPT) {
		preempt(body, len, r);
		return;
	}
	struct ext_job *e = calloc(1, sizeof(*e));
	struct gw_job *j = NULL;
	if (e == NULL)
		goto oom;
	e->verb = v;
	if (v == V_FILTER || v == V_PRIORITIZE) {
		int rc = gw_decode_extender_args(body, len, max_nodes, &e->args, err,
						 sizeof(err));
		if (rc < 0) {
			ext_free(e);
			reply_status(r, rc == -E2BIG ? 413 : rc == -ENOMEM ? 500 : 400,
				     rc == -E2BIG ? "RequestEntityTooLarge"
				     : rc == -ENOMEM ? "InternalError" : "BadRequest",
				     err);
			return;
		}
		cache_put(x, e->args.pod_uid[0] ? e->args.pod_uid : e->args.pod_name,
			  e->args.pod_name, e->args.pod_key);
		j = gw_job_new(GW_JOB_EVALUATE);
		if (j == NULL || gw_batch_one(&j->batch, json_incref(e->args.pod_key),
					      e->args.pod_name, "Pod") < 0)
			goto oom;
	} else {
		/* ExtenderBindingArgs. */
		json_error_t je;
		json_t *a = json_loadb(body, len, JSON_REJECT_DUPLICATES, &je);
		const char *name = json_string_value(gw_member_ci(a, "PodName"));
		const char *ns = json_string_value(gw_member_ci(a, "PodNamespace"));
		const char *uid = json_string_value(gw_member_ci(a, "PodUID"));
		const char *node = json_string_value(gw_member_ci(a, "Node"));
		char pod[GW_POD_NAME_MAX];
		if (a == NULL)
			snprintf(err, sizeof(err), "line %d, column %d: JSON: %s",
				 je.line, je.column, je.text);
		else if (name == NULL || name[0] == '\0' || strlen(name) > GW_NAME_MAX)
			snprintf(err, sizeof(err), "PodName: required");
		else if (node == NULL || node[0] == '\0' || strlen(node) > GW_NAME_MAX)
			snprintf(err, sizeof(err), "Node: required");
		else
			err[0] = '\0';
		if (err[0] != '\0') {
			json_decref(a);
			ext_free(e);
			reply_status(r, 400, "BadRequest", err);
			return;
		}
		snprintf(pod, sizeof(pod), "%s/%s", ns && ns[0] ? ns : "default", name);
		snprintf(e->node, sizeof(e->node), "%s", node);
		json_t *key = cache_get(x, uid ? uid : "");
		if (key == NULL)
			key = cache_get(x, pod);
		json_decref(a); /* name, ns, uid and node point into it: gone */
		if (key == NULL) {
			ext_free(e);
			snprintf(err, sizeof(err), "pod %s: not seen by this extender's "
				 "filter or prioritize (or forgotten since): its spec "
				 "is unknown", pod);
			reply_json(r, 200, json_pack("{s:s}", "Error", err));
			return;
		}
		/* The spec pinned to kube-scheduler's choice. */
		json_t *pinned = json_copy(key);
		json_t *spec = pinned ? json_copy(json_object_get(pinned, "spec")) : NULL;
		json_decref(key);
		if (spec == NULL ||
		    json_object_set_new(spec, "nodeName", json_string(e->node)) < 0 ||
		    json_object_set_new(pinned, "spec", spec) < 0) {
			json_decref(spec);
			json_decref(pinned);
			goto oom;
		}
		j = gw_job_new(GW_JOB_PLACE);
		if (j == NULL || gw_batch_one(&j->batch, pinned, pod, "ExtenderBindingArgs") < 0)
			goto oom;
		j->collect = true;
	}
	j->ext = e;
	j->ext_free = ext_free;
	r->job = j;
	return;
oom:
	if (j != NULL) {
		j->ext = e;
		j->ext_free = ext_free;
		gw_job_unref(j);
	} else {
		ext_free(e);
	}
	reply_status(r, 500, "InternalError", "out of memory");
}

/* The daemon's evaluation, by node name. */
struct evaluation {
	json_t *root;
	const json_t *feasible, *filtered;
	int64_t best;
};

static const char *failure_text(const json_t *f, char *buf, size_t len)
{
	const json_t *reasons = json_object_get(f, "reasons");
	size_t i, used = 0;
	json_t *t;
	buf[0] = '\0';
	json_array_foreach(reasons, i, t) {
		int n = snprintf(buf + used, len - used, "%s%s", i ? ", " : "",
				 json_string_value(t) ? json_string_value(t) : "");
		if (n < 0 || (size_t)n >= len - used)
			break;
		used += (size_t)n;
	}
	return buf;
}

static void filter_answer(const struct ext_job *e, const struct evaluation *ev,
			  struct gw_http_reply *r)
{
	json_t *names = json_array(), *items = json_array();
	json_t *failed = json_object(), *unresolvable = json_object();
	for (size_t i = 0; i < e->args.n_names; i++) {
		const char *n = e->args.names[i];
		if (json_object_get(ev->feasible, n) != NULL) {
			if (e->args.node_names)
				json_array_append_new(names, json_string(n));
			else
				json_array_append(items, json_array_get(e->args.nodes, i));
			continue;
		}
		const json_t *f = json_object_get(ev->filtered, n);
		char text[2048];
		if (f == NULL)
			json_object_set_new(unresolvable, n, json_string(
				"node(s) unknown to shmsched: add it through the "
				"gateway's admin listener or shmsched node add"));
		else
			json_object_set_new(json_is_true(json_object_get(f, "unresolvable"))
					    ? unresolvable : failed, n,
					    json_string(failure_text(f, text, sizeof(text))));
	}
	json_t *out = json_object();
	if (e->args.node_names) {
		json_object_set_new(out, "Nodes", json_null());
		json_object_set_new(out, "NodeNames", names);
		json_decref(items);
	} else {
		json_object_set_new(out, "Nodes", json_pack("{s:s,s:s,s:{},s:o}",
							     "kind", "NodeList",
							     "apiVersion", "v1",
							     "metadata", "items", items));
		json_object_set_new(out, "NodeNames", json_null());
		json_decref(names);
	}
	json_object_set_new(out, "FailedNodes", failed);
	json_object_set_new(out, "FailedAndUnresolvableNodes", unresolvable);
	json_object_set_new(out, "Error", json_string(""));
	reply_json(r, 200, out);
}

static void prioritize_answer(const struct ext_job *e, const struct evaluation *ev,
			      struct gw_http_reply *r)
{
	/* The best candidate's weighted total is 10 (MaxExtenderPriority). */
	int64_t best = 0;
	for (size_t i = 0; i < e->args.n_names; i++) {
		const json_t *t = json_object_get(ev->feasible, e->args.names[i]);
		if (json_is_integer(t) && json_integer_value(t) > best)
			best = json_integer_value(t);
	}
	json_t *list = json_array();
	for (size_t i = 0; i < e->args.n_names; i++) {
		const json_t *t = json_object_get(ev->feasible, e->args.names[i]);
		int64_t score = 0;
		if (json_is_integer(t) && best > 0 && json_integer_value(t) > 0)
			score = json_integer_value(t) * 10 / best;
		json_array_append_new(list, json_pack("{s:s,s:I}", "Host",
						      e->args.names[i], "Score",
						      (json_int_t)score));
	}
	reply_json(r, 200, list);
}

void gw_extender_finish(struct gw_extender *x, struct gw_job *j,
			struct gw_http_reply *r)
{
	(void)x;
	*r = (struct gw_http_reply){0};
	const struct ext_job *e = j->ext;
	const char *text = j->out.data ? j->out.data : "";
	if (e->verb == V_BIND) {
		/* ExtenderBindingResult: the pod's line, or why not. */
		json_t *line = j->code == 200 ? json_loads(text, JSON_DISABLE_EOF_CHECK,
							   NULL) : NULL;
		const json_t *node = json_object_get(line, "node");
		const char *msg = json_string_value(json_object_get(line, "message"));
		char err[1024] = "";
		if (j->code != 200) {
			json_t *st = json_loads(text, JSON_DISABLE_EOF_CHECK, NULL);
			snprintf(err, sizeof(err), "shmsched: %s",
				 json_string_value(json_object_get(st, "message"))
				 ? json_string_value(json_object_get(st, "message"))
				 : "the placement failed");
			json_decref(st);
		} else if (!json_is_string(node)) {
			snprintf(err, sizeof(err), "shmsched: %s", msg ? msg : "not placed");
		} else if (strcmp(json_string_value(node), e->node) != 0) {
			snprintf(err, sizeof(err), "shmsched placed the pod on %s, not %s",
				 json_string_value(node), e->node);
		}
		json_decref(line);
		reply_json(r, 200, json_pack("{s:s}", "Error", err));
		return;
	}
	if (j->code != 200) {
		/* The Status the dispatcher wrote, with its code. */
		r->code = j->code;
		r->content_type = "application/json";
		json_buf_puts(&r->body, text);
		return;
	}
	struct evaluation ev = {0};
	ev.root = json_loads(text, 0, NULL);
	ev.feasible = json_object_get(ev.root, "feasible");
	ev.filtered = json_object_get(ev.root, "filtered");
	if (!json_is_object(ev.feasible) || !json_is_object(ev.filtered)) {
		json_decref(ev.root);
		reply_status(r, 500, "InternalError", "the daemon's evaluation could "
			     "not be read");
		return;
	}
	if (e->verb == V_FILTER)
		filter_answer(e, &ev, r);
	else
		prioritize_answer(e, &ev, r);
	json_decref(ev.root);
}
