/* A pod's resource requests and host ports: the one walk over its
 * containers (init, sidecar, regular), limits defaulting requests,
 * pod-level resources, the QoS class. Part of the Kubernetes decoder: see
 * k8s_json_load.c's note and k8s_json_internal.h. */
#include "ingest/k8s_json_internal.h"

/* --- pods: requests -------------------------------------------------------- */

/* PodRequests, accumulated one container at a time (helpers.go,
 * aggregateContainerResourcesByFn). */
struct req_acc {
	int64_t sum[RES_MAX];      /* containers and restartable init containers */
	int64_t sidecars[RES_MAX]; /* restartable init containers so far */
	int64_t init_max[RES_MAX]; /* max over init containers of their need */
};

/* spec.resources, pod-level resources (KEP-2837, beta and on by default
 * since v1.34): cpu, memory and hugepages-<size> only. */
struct pod_level {
	bool present; /* an object, even {}: QoS is then the pod's (qos.go) */
	int64_t req[RES_MAX], lim[RES_MAX];
	bool has_req[RES_MAX], has_lim[RES_MAX];
};

/* What a pod's containers add up to, beside its pod-level resources. */
struct pod_acc {
	struct req_acc actual;  /* requests, defaulted from limits */
	struct req_acc nonzero; /* the same with the scoring stand-ins */
	struct req_acc limits;  /* limits (saturating: only compared) */
	bool req_named[RES_MAX]; /* some container requests it (after defaulting) */
	bool lim_named[RES_MAX]; /* some container limits it */
	struct pod_level level;
};

static bool add_ok(int64_t *a, int64_t b)
{
	return !__builtin_add_overflow(*a, b, a);
}

static int64_t max64(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

/* The aggregate of an accumulator: max(sum, init containers). */
static int64_t acc_total(const struct req_acc *acc, int r)
{
	return max64(acc->sum[r], acc->init_max[r]);
}

enum container_kind { CONTAINER, INIT_CONTAINER, SIDECAR };

/* Adds one container. An overflow is an error, or (`saturate`, for limits,
 * which are only compared) the largest value. */
static int acc_add(struct decoder *d, struct req_acc *acc, enum container_kind kind,
		   const int64_t req[RES_MAX], bool saturate)
{
	for (int r = 0; r < RES_MAX; r++) {
		bool ok = true;
		int64_t need = req[r];
		switch (kind) {
		case CONTAINER:
			ok = add_ok(&acc->sum[r], req[r]);
			break;
		case SIDECAR:
			/* Added to the pod's total, and needed (with the earlier
			 * sidecars) while it starts. */
			ok = add_ok(&acc->sum[r], req[r]) &&
			     add_ok(&acc->sidecars[r], req[r]);
			need = acc->sidecars[r];
			break;
		case INIT_CONTAINER:
			ok = add_ok(&need, acc->sidecars[r]);
			break;
		}
		if (!ok && saturate) {
			acc->sum[r] = acc->sidecars[r] = need = INT64_MAX;
		} else if (!ok) {
			return json_in_fail_at(&d->in, "resources.requests", -EINVAL, "the pod's total "
				       "%s does not fit in 64 bits",
				       d->ctx->res->name[r]);
		}
		if (kind != CONTAINER)
			acc->init_max[r] = max64(acc->init_max[r], need);
	}
	return 0;
}

/* A resource's amount for a message: millicores for cpu, else units. */
static const char *show_amount(int r, int64_t v, char *buf, size_t len)
{
	snprintf(buf, len, "%" PRId64 "%s", v, r == RES_CPU ? "m" : "");
	return buf;
}

static bool is_hugepages(const char *name)
{
	return strncmp(name, "hugepages-", 10) == 0;
}

/* One container's requests (requests defaulted from limits, as the API
 * server does) into the accumulators; a regular container's limits are
 * checked against the pod's (validatePodResourceConsistency). */
static int container_requests(struct decoder *d, const json_t *c,
			      enum container_kind kind, struct pod_acc *acc)
{
	int64_t req[RES_MAX] = {0}, lim[RES_MAX] = {0};
	bool has_req[RES_MAX] = {false}, has_lim[RES_MAX] = {false};
	const struct pod_level *pl = &acc->level;
	char a[32], b[32];
	json_t *res;
	int rc = json_in_get(&d->in, c, "resources", JSON_IN_OBJECT, &res);
	if (rc < 0)
		return rc;
	if (res != NULL) {
		size_t mark = json_in_field(&d->in, "resources");
		rc = kj_resource_list(d, res, "requests", req, has_req, NULL);
		if (rc == 0)
			rc = kj_resource_list(d, res, "limits", lim, has_lim, NULL);
		for (int r = 0; r < RES_MAX && rc == 0 && kind == CONTAINER; r++) {
			if (!has_lim[r] || !pl->has_lim[r] || lim[r] <= pl->lim[r])
				continue;
			const char *name = d->ctx->res->name[r];
			size_t m = json_in_field(&d->in, "limits");
			json_in_key(&d->in, name, strlen(name));
			rc = json_in_fail(&d->in, -EINVAL, "%s must be less than or equal to the pod's "
				  "limit of %s (spec.resources.limits)",
				  show_amount(r, lim[r], a, sizeof(a)),
				  show_amount(r, pl->lim[r], b, sizeof(b)));
			json_in_pop(&d->in, m);
		}
		json_in_pop(&d->in, mark);
		if (rc < 0)
			return rc;
	}
	for (int r = 0; r < RES_MAX; r++) {
		if (!has_req[r] && has_lim[r]) {
			req[r] = lim[r];
			has_req[r] = true;
		}
		acc->req_named[r] |= has_req[r];
		acc->lim_named[r] |= has_lim[r];
	}
	/* qos.go (ComputePodQOS): Guaranteed needs positive cpu and memory
	 * limits in every container, and requests equal to them. The API
	 * server rejects a request above its limit, so equal sums (what
	 * qos.go compares) are equal per container. */
	d->n_containers++;
	if (!has_lim[RES_CPU] || lim[RES_CPU] <= 0 || req[RES_CPU] != lim[RES_CPU] ||
	    !has_lim[RES_MEMORY] || lim[RES_MEMORY] <= 0 ||
	    req[RES_MEMORY] != lim[RES_MEMORY])
		d->guaranteed = false;
	req[RES_PODS] = 0; /* every pod counts one; a request for it is not one */
	lim[RES_PODS] = 0;
	int64_t nz[RES_MAX];
	memcpy(nz, req, sizeof(nz));
	if (!has_req[RES_CPU])
		nz[RES_CPU] = NONZERO_CPU_MILLI;
	if (!has_req[RES_MEMORY])
		nz[RES_MEMORY] = NONZERO_MEM_BYTES;
	rc = acc_add(d, &acc->actual, kind, req, false);
	if (rc == 0)
		rc = acc_add(d, &acc->nonzero, kind, nz, false);
	if (rc == 0)
		rc = acc_add(d, &acc->limits, kind, lim, true);
	return rc;
}

/* hugepages-<size>: `v` is a whole multiple of the page size
 * (validation.go, validateResourceQuantityHugePageValue). Call with the
 * path at the entry. */
static int hugepage_multiple(struct decoder *d, const char *name, const json_t *raw,
			     int64_t v)
{
	const char *size = name + strlen("hugepages-");
	int64_t page = 0, page_milli = 0;
	char q[JSON_IN_SHOW_MAX + 16];
	int rc = quantity_parse(size, strlen(size), QUANTITY_UNITS, &page);
	if (rc == 0)
		rc = quantity_parse(size, strlen(size), QUANTITY_MILLI, &page_milli);
	if (rc < 0 || page <= 0 || page_milli % 1000 != 0 || v % page != 0)
		return json_in_fail(&d->in, -EINVAL, "%s is not a whole multiple of the page size "
			    "of %s", json_in_show(raw, q, sizeof(q)), name);
	return 0;
}

/* spec.resources.requests or .limits at member `key`: only the resources
 * pod-level resources support (IsSupportedPodLevelResource), as
 * kube-apiserver's validatePodResourceName allows. */
static int pod_level_list(struct decoder *d, const json_t *res, const char *key,
			  int64_t v[RES_MAX], bool has[RES_MAX])
{
	json_t *list, *q;
	const char *name;
	char s[JSON_IN_SHOW_MAX + 16];
	int rc = json_in_get(&d->in, res, key, JSON_IN_OBJECT, &list);
	if (rc < 0 || list == NULL)
		return rc;
	size_t outer = json_in_field(&d->in, key);
	json_object_foreach(list, name, q) {
		size_t len = strlen(name);
		size_t mark = json_in_key(&d->in, name, len);
		int idx = -1;
		int64_t value = 0;
		if (!json_in_str_is(name, len, "cpu") && !json_in_str_is(name, len, "memory") &&
		    !is_hugepages(name))
			rc = json_in_fail(&d->in, -EINVAL, "%s is not a pod-level resource (cpu, "
				  "memory and hugepages-<size> are)",
				  json_in_show_str(name, len, s, sizeof(s)));
		else
			rc = kj_resource_here(d, name, len, &idx);
		if (rc == 0)
			rc = kj_quantity_here(d, q, idx == RES_CPU ? QUANTITY_MILLI :
							      QUANTITY_UNITS, &value);
		if (rc == 0 && is_hugepages(name))
			rc = hugepage_multiple(d, name, q, value);
		json_in_pop(&d->in, mark);
		if (rc < 0)
			break;
		v[idx] = value;
		has[idx] = true;
	}
	json_in_pop(&d->in, outer);
	return rc;
}

/* spec.resources as written, before the containers are read. */
static int pod_level_read(struct decoder *d, const json_t *spec, struct pod_level *pl)
{
	json_t *res, *os;
	const char *os_name = "";
	size_t os_len = 0;
	memset(pl, 0, sizeof(*pl));
	int rc = json_in_get(&d->in, spec, "resources", JSON_IN_OBJECT, &res);
	if (rc < 0 || res == NULL)
		return rc;
	pl->present = true;
	size_t mark = json_in_field(&d->in, "resources");
	rc = pod_level_list(d, res, "requests", pl->req, pl->has_req);
	if (rc == 0)
		rc = pod_level_list(d, res, "limits", pl->lim, pl->has_lim);
	json_in_pop(&d->in, mark);
	if (rc == 0)
		rc = json_in_get(&d->in, spec, "os", JSON_IN_OBJECT, &os);
	if (rc == 0 && os != NULL) {
		mark = json_in_field(&d->in, "os");
		rc = json_in_get_str(&d->in, os, "name", &os_name, &os_len);
		json_in_pop(&d->in, mark);
	}
	if (rc < 0)
		return rc;
	bool any = false, cpu_mem = false, huge = false;
	for (int r = 0; r < RES_MAX; r++) {
		bool set = pl->has_req[r] || pl->has_lim[r];
		any |= set;
		cpu_mem |= set && (r == RES_CPU || r == RES_MEMORY);
		huge |= set && r >= RES_FIRST_NAMED;
	}
	mark = json_in_field(&d->in, "resources");
	if (any && json_in_str_is(os_name, os_len, "windows"))
		rc = json_in_fail(&d->in, -EINVAL, "may not be set for a windows pod (spec.os.name)");
	else if (huge && !cpu_mem)
		rc = json_in_fail(&d->in, -EINVAL, "hugepages need a cpu or memory request or limit "
			  "beside them");
	json_in_pop(&d->in, mark);
	return rc;
}

/* kube-apiserver's defaulting of pod-level requests (defaults.go,
 * defaultHugePagePodLimits then defaultPodRequests), then its checks of
 * them (validateResourceRequirements, validatePodResourceConsistency),
 * then the pod's QoS class (qos.go ComputePodQOS: with spec.resources set,
 * the pod's own resources decide it). Call with the path at spec. */
static int pod_level_apply(struct decoder *d, struct pod_acc *acc)
{
	struct pod_level *pl = &acc->level;
	const struct res_names *names = d->ctx->res;
	char a[32], b[32];
	int rc = 0;
	if (!pl->present)
		return 0;
	bool any_req = false, any_lim = false;
	for (int r = 0; r < RES_MAX; r++) {
		any_req |= pl->has_req[r];
		any_lim |= pl->has_lim[r];
	}
	/* A hugepages limit of the containers becomes the pod's, unless the
	 * pod requests that size. */
	for (int r = RES_FIRST_NAMED; r < RES_MAX && (any_req || any_lim); r++) {
		if (!is_hugepages(names->name[r]) || !acc->lim_named[r] ||
		    pl->has_req[r] || pl->has_lim[r])
			continue;
		pl->lim[r] = acc_total(&acc->limits, r);
		pl->has_lim[r] = any_lim = true;
	}
	/* With a pod limit, an unset pod request is the containers' aggregate
	 * (cpu and memory, when some container requests them), else the
	 * limit. */
	for (int r = 0; r < RES_MAX && any_lim; r++) {
		if (pl->has_req[r])
			continue;
		if ((r == RES_CPU || r == RES_MEMORY) && acc->req_named[r]) {
			pl->req[r] = acc_total(&acc->actual, r);
			pl->has_req[r] = true;
		} else if (pl->has_lim[r]) {
			pl->req[r] = pl->lim[r];
			pl->has_req[r] = true;
		}
	}
	size_t outer = json_in_field(&d->in, "resources");
	for (int r = 0; r < RES_MAX && rc == 0; r++) {
		bool huge = r >= RES_FIRST_NAMED;
		const char *name = names->name[r];
		int64_t agg = acc_total(&acc->actual, r);
		size_t mark = json_in_field(&d->in, "requests");
		json_in_key(&d->in, name, strlen(name));
		if (pl->has_req[r] && huge && !pl->has_lim[r])
			rc = json_in_fail(&d->in, -EINVAL, "a hugepages request needs a limit "
				  "(spec.resources.limits): hugepages are not "
				  "overcommitted");
		else if (pl->has_req[r] && pl->has_lim[r] && huge &&
			 pl->req[r] != pl->lim[r])
			rc = json_in_fail(&d->in, -EINVAL, "%s must equal its limit of %s: hugepages "
				  "are not overcommitted",
				  show_amount(r, pl->req[r], a, sizeof(a)),
				  show_amount(r, pl->lim[r], b, sizeof(b)));
		else if (pl->has_req[r] && pl->has_lim[r] && pl->req[r] > pl->lim[r])
			rc = json_in_fail(&d->in, -EINVAL, "%s must be less than or equal to the %s "
				  "limit of %s", show_amount(r, pl->req[r], a, sizeof(a)),
				  name, show_amount(r, pl->lim[r], b, sizeof(b)));
		else if (pl->has_req[r] && agg > pl->req[r])
			rc = json_in_fail(&d->in, -EINVAL, "%s must be greater than or equal to the "
				  "aggregate container requests of %s",
				  show_amount(r, pl->req[r], a, sizeof(a)),
				  show_amount(r, agg, b, sizeof(b)));
		json_in_pop(&d->in, mark);
		if (rc == 0 && huge && pl->has_lim[r] &&
		    acc_total(&acc->limits, r) > pl->lim[r]) {
			mark = json_in_field(&d->in, "limits");
			json_in_key(&d->in, name, strlen(name));
			rc = json_in_fail(&d->in, -EINVAL, "%s must be greater than or equal to the "
				  "aggregate container limits of %s",
				  show_amount(r, pl->lim[r], a, sizeof(a)),
				  show_amount(r, acc_total(&acc->limits, r), b, sizeof(b)));
			json_in_pop(&d->in, mark);
		}
	}
	json_in_pop(&d->in, outer);
	if (rc < 0)
		return rc;
	/* Guaranteed: positive cpu and memory limits, and every positive cpu
	 * and memory request equal to its limit; nothing at all: BestEffort. */
	unsigned n_req = 0, n_lim = 0;
	bool equal = true;
	for (int r = RES_CPU; r <= RES_MEMORY; r++) {
		bool req = pl->has_req[r] && pl->req[r] > 0;
		bool lim = pl->has_lim[r] && pl->lim[r] > 0;
		n_req += req;
		n_lim += lim;
		equal &= !req || (lim && pl->req[r] == pl->lim[r]);
	}
	d->guaranteed = n_lim == 2 && n_req == n_lim && equal;
	return 0;
}

/* --- pods: host ports --------------------------------------------------- */

static int container_ports(struct decoder *d, const json_t *c, bool host_network)
{
	struct pod_spec *p = &d->pod;
	json_t *ports, *port;
	size_t i;
	int rc = json_in_get(&d->in, c, "ports", JSON_IN_ARRAY, &ports);
	if (rc < 0 || ports == NULL)
		return rc;
	size_t outer = json_in_field(&d->in, "ports");
	json_array_foreach(ports, i, port) {
		size_t mark = json_in_index(&d->in, i);
		json_t *hp, *cp;
		json_int_t host = 0;
		const char *s;
		size_t len;
		char q[JSON_IN_SHOW_MAX + 16];
		rc = json_in_check(&d->in, port, JSON_IN_OBJECT);
		if (rc == 0)
			rc = json_in_get(&d->in, port, "hostPort", JSON_IN_INT, &hp);
		if (rc == 0)
			rc = json_in_get(&d->in, port, "containerPort", JSON_IN_INT, &cp);
		if (rc < 0)
			goto next;
		host = hp != NULL ? json_integer_value(hp) : 0;
		/* SetDefaults_Pod: under hostNetwork the container's port is
		 * the host's. */
		if (host == 0 && host_network && cp != NULL)
			host = json_integer_value(cp);
		if (host == 0)
			goto next;
		if (host < 0 || host > 65535) {
			rc = json_in_fail_at(&d->in, "hostPort", -EINVAL, "%" JSON_INTEGER_FORMAT
				     " is not a port (1..65535)", host);
			goto next;
		}
		if (p->n_ports >= POD_MAX_PORTS) {
			rc = json_in_fail(&d->in, -ENOSPC, "more than %d host ports in the pod",
				  POD_MAX_PORTS);
			goto next;
		}
		struct host_port *h = &p->ports[p->n_ports];
		h->port = (uint16_t)host;
		if ((rc = json_in_get_str(&d->in, port, "protocol", &s, &len)) < 0)
			goto next;
		if (len == 0 || json_in_str_is(s, len, "TCP")) {
			h->protocol = PROTO_TCP;
		} else if (json_in_str_is(s, len, "UDP")) {
			h->protocol = PROTO_UDP;
		} else if (json_in_str_is(s, len, "SCTP")) {
			h->protocol = PROTO_SCTP;
		} else {
			rc = json_in_fail_at(&d->in, "protocol", -EINVAL, "%s is not TCP, UDP or SCTP",
				     json_in_show_str(s, len, q, sizeof(q)));
			goto next;
		}
		if ((rc = kj_get_id(d, port, "hostIP", &h->ip)) < 0)
			goto next;
		p->n_ports++;
next:
		json_in_pop(&d->in, mark);
		if (rc < 0)
			break;
	}
	json_in_pop(&d->in, outer);
	return rc;
}

/* Containers (kind CONTAINER) or init containers: requests and ports. */
static int containers(struct decoder *d, const json_t *spec, const char *key,
		      bool host_network, struct pod_acc *acc)
{
	json_t *list, *c;
	size_t i;
	int rc = json_in_get(&d->in, spec, key, JSON_IN_ARRAY, &list);
	if (rc < 0 || list == NULL)
		return rc;
	bool init = strcmp(key, "initContainers") == 0;
	size_t outer = json_in_field(&d->in, key);
	json_array_foreach(list, i, c) {
		size_t mark = json_in_index(&d->in, i);
		enum container_kind kind = init ? INIT_CONTAINER : CONTAINER;
		const char *policy;
		size_t policy_len;
		rc = json_in_check(&d->in, c, JSON_IN_OBJECT);
		if (rc == 0 && init) {
			rc = json_in_get_str(&d->in, c, "restartPolicy", &policy, &policy_len);
			if (json_in_str_is(policy, policy_len, "Always"))
				kind = SIDECAR;
		}
		if (rc == 0)
			rc = container_requests(d, c, kind, acc);
		/* nodeports/node_ports.go takes host ports from spec.containers;
		 * sidecars count too (they keep running). A plain init container
		 * has exited before the containers start: its ports hold nothing. */
		if (rc == 0 && kind != INIT_CONTAINER)
			rc = container_ports(d, c, host_network);
		json_in_pop(&d->in, mark);
		if (rc < 0)
			break;
	}
	json_in_pop(&d->in, outer);
	return rc;
}

/* Effective requests: PodRequests, with pod-level resources: max(sum,
 * init containers), each resource spec.resources.requests names (after
 * kube-apiserver's defaulting) taken from there instead, then overhead.
 * The scoring stand-ins are per container, so a pod-level request
 * replaces them too (NonMissingContainerRequests). */
int kj_pod_requests(struct decoder *d, const json_t *spec, bool host_network)
{
	struct pod_spec *p = &d->pod;
	struct pod_acc acc;
	int64_t overhead[RES_MAX] = {0};
	bool has[RES_MAX] = {false};
	memset(&acc, 0, sizeof(acc));
	d->guaranteed = true;
	d->n_containers = 0;
	int rc = pod_level_read(d, spec, &acc.level);
	if (rc == 0)
		rc = containers(d, spec, "containers", host_network, &acc);
	if (rc == 0)
		rc = containers(d, spec, "initContainers", host_network, &acc);
	if (d->n_containers == 0)
		d->guaranteed = false; /* BestEffort */
	if (rc == 0)
		rc = pod_level_apply(d, &acc);
	if (rc == 0)
		rc = kj_resource_list(d, spec, "overhead", overhead, has, NULL);
	if (rc < 0)
		return rc;
	overhead[RES_PODS] = 0;
	size_t mark = json_in_field(&d->in, "overhead");
	for (int r = 0; r < RES_MAX; r++) {
		int64_t a = acc_total(&acc.actual, r);
		int64_t z = acc_total(&acc.nonzero, r);
		if (acc.level.has_req[r])
			a = z = acc.level.req[r];
		if (!add_ok(&a, overhead[r]) || !add_ok(&z, overhead[r])) {
			rc = json_in_fail(&d->in, -EINVAL, "the pod's total %s does not fit in "
				  "64 bits", d->ctx->res->name[r]);
			break;
		}
		p->request.v[r] = a;
		if (r == RES_CPU)
			p->nonzero_cpu_milli = z;
		if (r == RES_MEMORY)
			p->nonzero_mem_bytes = z;
	}
	json_in_pop(&d->in, mark);
	return rc;
}
