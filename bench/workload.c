/* The pod stream of a benchmark run: see workload.h.
 *
 * Default mix: the 40 templates below, ranked by popularity; pod k draws
 * rank r with probability (1/(r+1)) / H_40 (Zipf, s = 1: the top template
 * is about 23 % of pods, the top five about 53 %), from splitmix64 of
 * seed ^ k, so any producer can compute any pod without coordination.
 * The popular templates are small (50m..4 cpu, 64Mi..8Gi; on average
 * about 170m cpu and 560Mi per pod), since the default run (10,000
 * synthetic nodes of 8..128 cores and 110 pods each, 100,000 running,
 * 1,000,000 more) is bounded by the nodes' pod counts: with 2 % of nodes
 * cordoned it cannot take more than about 97 % of the pods, and small
 * nodes run out of cpu first (at the same density, 1,000 nodes, about 89 %
 * were placed). Shares by popularity: 12 % zone nodeSelector, 10 %
 * required node affinity (cores, zones, instance types), 13 % preferred
 * affinity, 13 % tolerating the dedicated pools (taint dedicated=<pool>),
 * of which 10 % are held to the pools (nodeSelector pool=<pool>, or
 * required affinity on the pool label) so the pools' nodes fill too.
 *
 * File workloads: each Pod in the file is canonicalised (jansson, sorted
 * keys) without metadata.name / generateName / uid; pods equal after that
 * share a template. Cost: O(pods * log templates) to load.
 */
#include "bench/workload.h"
#include "base/base.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum tkind {
	T_PLAIN,
	T_ZONE_SELECTOR,   /* nodeSelector zone */
	T_REQ_CORES_GT,    /* required: cores > arg */
	T_REQ_ZONE_IN,     /* required: zone in two zones */
	T_REQ_TYPE_IN,     /* required: instance type in the larger ones */
	T_PREF_TYPE,       /* preferred: an instance type */
	T_PREF_ZONE,       /* preferred: a zone */
	T_PREF_RACK,       /* preferred: a few racks */
	T_TOLERATE_ALL,    /* tolerates every dedicated pool, no selector */
	T_TOLERATE_POOL,   /* tolerates one pool, no selector */
	T_POOL,            /* pinned to a pool: selector and toleration */
	T_POOL_ANY,        /* required: some pool; tolerates every pool */
};

struct tspec {
	int32_t cpu_milli;
	int32_t mem_mib;
	uint8_t kind;  /* enum tkind */
	uint8_t arg;   /* zone / pool / type index, or the cores bound */
};

/* Ranked by popularity (rank 0 most popular). */
static const struct tspec default_templates[WORKLOAD_TEMPLATES] = {
	{50, 128, T_PLAIN, 0},           {50, 64, T_PLAIN, 0},
	{100, 256, T_PLAIN, 0},          {50, 256, T_ZONE_SELECTOR, 0},
	{50, 128, T_POOL_ANY, 0},        {100, 512, T_PREF_TYPE, 1},
	{50, 128, T_REQ_CORES_GT, 8},    {250, 512, T_PLAIN, 0},
	{50, 64, T_ZONE_SELECTOR, 1},    {150, 1024, T_PREF_ZONE, 2},
	{50, 64, T_POOL, 1},             {150, 256, T_REQ_ZONE_IN, 1},
	{100, 128, T_PREF_RACK, 0},      {200, 1024, T_ZONE_SELECTOR, 2},
	{200, 256, T_PREF_TYPE, 5},      {250, 2048, T_PLAIN, 0},
	{100, 128, T_TOLERATE_POOL, 2},  {250, 512, T_REQ_TYPE_IN, 0},
	{50, 128, T_PLAIN, 0},           {300, 384, T_PREF_TYPE, 7},
	{100, 256, T_TOLERATE_ALL, 0},   {200, 768, T_PLAIN, 0},
	{200, 256, T_ZONE_SELECTOR, 0},  {150, 192, T_REQ_CORES_GT, 16},
	{200, 1024, T_PREF_ZONE, 0},     {100, 512, T_PLAIN, 0},
	{200, 1024, T_ZONE_SELECTOR, 1}, {250, 256, T_POOL, 0},
	{250, 2048, T_PREF_TYPE, 6},     {50, 64, T_REQ_ZONE_IN, 0},
	{500, 4096, T_PLAIN, 0},         {1000, 3072, T_REQ_CORES_GT, 32},
	{2000, 8192, T_POOL, 0},         {500, 2048, T_POOL, 1},
	{250, 1024, T_POOL, 2},          {1000, 6144, T_REQ_CORES_GT, 32},
	{4000, 8192, T_REQ_TYPE_IN, 0},  {750, 2048, T_PREF_ZONE, 1},
	{2000, 4096, T_POOL, 1},         {500, 4096, T_TOLERATE_ALL, 0},
};

/* As ingest/synthetic.c names them. */
static const char *const zones[] = {"zone-a", "zone-b", "zone-c"};
static const char *const pools[] = {"gpu", "batch", "infra"};
static const char *const pool_effects[] = {"NoSchedule", "NoSchedule", "NoExecute"};
static const char *const types[] = {
	"m.2xlarge", "m.4xlarge", "m.8xlarge", "m.16xlarge",
	"r.4xlarge", "r.16xlarge", "r.32xlarge", "c.8xlarge",
};

static void constraint_json(const struct tspec *t, char *buf, size_t len)
{
	static const char req_head[] = ",\"affinity\":{\"nodeAffinity\":{"
		"\"requiredDuringSchedulingIgnoredDuringExecution\":{"
		"\"nodeSelectorTerms\":[{\"matchExpressions\":[";
	static const char pref_head[] = ",\"affinity\":{\"nodeAffinity\":{"
		"\"preferredDuringSchedulingIgnoredDuringExecution\":[{";
	buf[0] = '\0';
	switch ((enum tkind)t->kind) {
	case T_PLAIN:
		break;
	case T_ZONE_SELECTOR:
		snprintf(buf, len, ",\"nodeSelector\":{\"topology.kubernetes.io/zone\":"
			 "\"%s\"}", zones[t->arg % 3]);
		break;
	case T_REQ_CORES_GT:
		snprintf(buf, len, "%s{\"key\":\"cores\",\"operator\":\"Gt\","
			 "\"values\":[\"%u\"]}]}]}}}", req_head, t->arg);
		break;
	case T_REQ_ZONE_IN:
		snprintf(buf, len, "%s{\"key\":\"topology.kubernetes.io/zone\","
			 "\"operator\":\"In\",\"values\":[\"%s\",\"%s\"]}]}]}}}",
			 req_head, zones[t->arg % 3], zones[(t->arg + 1) % 3]);
		break;
	case T_REQ_TYPE_IN:
		snprintf(buf, len, "%s{\"key\":\"node.kubernetes.io/instance-type\","
			 "\"operator\":\"In\",\"values\":[\"%s\",\"%s\",\"%s\",\"%s\"]}"
			 "]}]}}}", req_head, types[2], types[3], types[5], types[6]);
		break;
	case T_PREF_TYPE:
		snprintf(buf, len, "%s\"weight\":%u,\"preference\":{\"matchExpressions\":"
			 "[{\"key\":\"node.kubernetes.io/instance-type\",\"operator\":"
			 "\"In\",\"values\":[\"%s\"]}]}}]}}", pref_head,
			 10u + 10u * t->arg, types[t->arg % 8]);
		break;
	case T_PREF_ZONE:
		snprintf(buf, len, "%s\"weight\":%u,\"preference\":{\"matchExpressions\":"
			 "[{\"key\":\"topology.kubernetes.io/zone\",\"operator\":\"In\","
			 "\"values\":[\"%s\"]}]}}]}}", pref_head, 20u + 30u * t->arg,
			 zones[t->arg % 3]);
		break;
	case T_PREF_RACK:
		snprintf(buf, len, "%s\"weight\":40,\"preference\":{\"matchExpressions\":"
			 "[{\"key\":\"topology.kubernetes.io/rack\",\"operator\":\"In\","
			 "\"values\":[\"zone-a-r1\",\"zone-b-r2\",\"zone-c-r3\"]}]}}]}}",
			 pref_head);
		break;
	case T_TOLERATE_ALL:
		snprintf(buf, len, ",\"tolerations\":[{\"key\":\"dedicated\","
			 "\"operator\":\"Exists\"}]");
		break;
	case T_TOLERATE_POOL:
		snprintf(buf, len, ",\"tolerations\":[{\"key\":\"dedicated\","
			 "\"operator\":\"Equal\",\"value\":\"%s\",\"effect\":\"%s\"}]",
			 pools[t->arg % 3], pool_effects[t->arg % 3]);
		break;
	case T_POOL_ANY:
		snprintf(buf, len, ",\"tolerations\":[{\"key\":\"dedicated\","
			 "\"operator\":\"Exists\"}]%s{\"key\":\"pool\",\"operator\":"
			 "\"Exists\"}]}]}}}", req_head);
		break;
	case T_POOL:
		snprintf(buf, len, ",\"tolerations\":[{\"key\":\"dedicated\","
			 "\"operator\":\"Equal\",\"value\":\"%s\",\"effect\":\"%s\"}],"
			 "\"nodeSelector\":{\"pool\":\"%s\"}", pools[t->arg % 3],
			 pool_effects[t->arg % 3], pools[t->arg % 3]);
		break;
	}
}

static void workload_zero(struct workload *w, uint64_t seed)
{
	memset(w, 0, sizeof(*w));
	w->seed = seed;
}

static int alloc_templates(struct workload *w, uint32_t n)
{
	w->template_json = calloc(n, sizeof(*w->template_json));
	w->template_len = calloc(n, sizeof(*w->template_len));
	w->template_name = calloc(n, sizeof(*w->template_name));
	return w->template_json && w->template_len && w->template_name ? 0 : -ENOMEM;
}

int workload_default(struct workload *w, uint64_t seed, char *err, size_t err_len)
{
	workload_zero(w, seed);
	w->unique_share = 0.03;
	w->source = strdup("the default mix");
	w->popularity_cdf = calloc(WORKLOAD_TEMPLATES, sizeof(*w->popularity_cdf));
	if (w->source == NULL || w->popularity_cdf == NULL ||
	    alloc_templates(w, WORKLOAD_TEMPLATES) < 0)
		goto fail_alloc;
	double harmonic = 0, sum = 0;
	for (unsigned r = 0; r < WORKLOAD_TEMPLATES; r++)
		harmonic += 1.0 / (r + 1);
	for (unsigned r = 0; r < WORKLOAD_TEMPLATES; r++) {
		sum += 1.0 / (r + 1) / harmonic;
		w->popularity_cdf[r] = (uint64_t)(sum * 9007199254740992.0);
	}
	/* Rounding must not leave a gap at the top. */
	w->popularity_cdf[WORKLOAD_TEMPLATES - 1] = UINT64_C(1) << 53;
	for (unsigned r = 0; r < WORKLOAD_TEMPLATES; r++) {
		const struct tspec *t = &default_templates[r];
		char constraint[640], json[1024], name[32];
		constraint_json(t, constraint, sizeof(constraint));
		snprintf(name, sizeof(name), "deploy-%u", r);
		int n = snprintf(json, sizeof(json),
				 "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\"},"
				 "\"spec\":{\"containers\":[{\"name\":\"app\",\"resources\":"
				 "{\"requests\":{\"cpu\":\"%dm\",\"memory\":\"%dMi\"}}}]%s}}",
				 name, t->cpu_milli, t->mem_mib, constraint);
		w->template_json[r] = strdup(json);
		w->template_name[r] = strdup(name);
		w->template_len[r] = (size_t)n;
		w->n_templates = r + 1; /* so workload_free frees both */
		if (w->template_json[r] == NULL || w->template_name[r] == NULL)
			goto fail_alloc;
	}
	return 0;

fail_alloc:
	workload_free(w);
	snprintf(err, err_len, "workload: out of memory");
	return -ENOMEM;
}

/* Pods differing only in these share a template. */
static json_t *template_key(const json_t *pod)
{
	json_t *copy = json_deep_copy(pod);
	json_t *meta = copy ? json_object_get(copy, "metadata") : NULL;
	if (json_is_object(meta)) {
		json_object_del(meta, "name");
		json_object_del(meta, "generateName");
		json_object_del(meta, "uid");
	}
	return copy;
}

static void pod_name(const json_t *pod, char *buf, size_t len)
{
	const json_t *meta = json_object_get(pod, "metadata");
	const char *ns = json_string_value(json_object_get(meta, "namespace"));
	const char *name = json_string_value(json_object_get(meta, "name"));
	snprintf(buf, len, "%s/%s", ns ? ns : "default", name ? name : "(no name)");
}

struct loader {
	struct workload *w;
	const char *path;
	char *err;
	size_t err_len;
	char **keys;       /* [n_templates]: canonical JSON, for the search */
	uint32_t *by_key;  /* template indices sorted by key */
	uint32_t cap_templates;
	uint64_t cap_order;
	uint64_t seen;     /* pods read, for messages */
};

static int find_key(const struct loader *l, const char *key, uint32_t *pos)
{
	uint32_t lo = 0, hi = l->w->n_templates;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		int c = strcmp(l->keys[l->by_key[mid]], key);
		if (c == 0) {
			*pos = mid;
			return 1;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*pos = lo;
	return 0;
}

static int add_pod(struct loader *l, const json_t *pod)
{
	struct workload *w = l->w;
	char name[512];
	l->seen++;
	pod_name(pod, name, sizeof(name));
	const char *kind = json_string_value(json_object_get(pod, "kind"));
	if (!json_is_object(pod) || (kind != NULL && strcmp(kind, "Pod") != 0) ||
	    (kind == NULL && json_object_get(json_object_get(pod, "spec"),
					     "containers") == NULL)) {
		snprintf(l->err, l->err_len, "%s: object %llu (%s): kind \"%s\": "
			 "expected a Pod", l->path, (unsigned long long)l->seen, name,
			 kind ? kind : "(none, and no spec.containers)");
		return -EINVAL;
	}
	json_t *k = template_key(pod);
	char *key = k ? json_dumps(k, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	json_decref(k);
	if (key == NULL)
		goto fail_alloc;
	uint32_t pos, t;
	if (find_key(l, key, &pos)) {
		free(key);
		t = l->by_key[pos];
	} else {
		if (w->n_templates == WORKLOAD_FILE_TEMPLATES_MAX) {
			free(key);
			snprintf(l->err, l->err_len, "%s: pod %s: more than %d distinct "
				 "pod specs (the daemon's templates per producer)",
				 l->path, name, WORKLOAD_FILE_TEMPLATES_MAX);
			return -E2BIG;
		}
		t = w->n_templates;
		char *json = json_dumps(pod, JSON_COMPACT);
		char *tname = strdup(name);
		if (json == NULL || tname == NULL) {
			free(json);
			free(tname);
			free(key);
			goto fail_alloc;
		}
		l->keys[t] = key;
		w->template_json[t] = json;
		w->template_len[t] = strlen(json);
		w->template_name[t] = tname;
		memmove(&l->by_key[pos + 1], &l->by_key[pos],
			(w->n_templates - pos) * sizeof(l->by_key[0]));
		l->by_key[pos] = t;
		w->n_templates++;
	}
	if (w->n_order == l->cap_order) {
		uint64_t cap = l->cap_order ? 2 * l->cap_order : 1024;
		uint32_t *o = realloc(w->order, cap * sizeof(*o));
		if (o == NULL)
			goto fail_alloc;
		w->order = o;
		l->cap_order = cap;
	}
	w->order[w->n_order++] = t;
	return 0;

fail_alloc:
	snprintf(l->err, l->err_len, "%s: out of memory", l->path);
	return -ENOMEM;
}

/* One top-level value: a Pod, a List / PodList, or an array of Pods. */
static int add_value(struct loader *l, const json_t *v)
{
	const char *kind = json_string_value(json_object_get(v, "kind"));
	const json_t *items = NULL;
	if (json_is_array(v))
		items = v;
	else if (kind != NULL && (strcmp(kind, "List") == 0 ||
				  strcmp(kind, "PodList") == 0))
		items = json_object_get(v, "items");
	if (items == NULL)
		return add_pod(l, v);
	if (!json_is_array(items)) {
		snprintf(l->err, l->err_len, "%s: %s: items: expected an array",
			 l->path, kind);
		return -EINVAL;
	}
	size_t i;
	const json_t *item;
	json_array_foreach(items, i, item) {
		int rc = add_pod(l, item);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static char *read_file(const char *path, size_t *len, int *rc, char *err,
		       size_t err_len)
{
	FILE *f = fopen(path, "rb");
	if (f == NULL) {
		*rc = -errno;
		snprintf(err, err_len, "%s: %s", path, strerror(errno));
		return NULL;
	}
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap);
	while (buf != NULL) {
		n += fread(buf + n, 1, cap - n, f);
		if (n < cap)
			break;
		char *bigger = realloc(buf, cap * 2);
		if (bigger == NULL) {
			free(buf);
			buf = NULL;
			break;
		}
		buf = bigger;
		cap *= 2;
	}
	int failed = ferror(f);
	fclose(f);
	if (buf == NULL || failed) {
		*rc = buf == NULL ? -ENOMEM : -EIO;
		snprintf(err, err_len, "%s: %s", path,
			 buf == NULL ? "out of memory" : "read error");
		free(buf);
		return NULL;
	}
	*len = n;
	return buf;
}

int workload_load(struct workload *w, const char *path, char *err, size_t err_len)
{
	workload_zero(w, 0);
	size_t len;
	int rc;
	char *text = read_file(path, &len, &rc, err, err_len);
	if (text == NULL)
		return rc;
	struct loader l = {.w = w, .path = path, .err = err, .err_len = err_len,
			   .cap_templates = WORKLOAD_FILE_TEMPLATES_MAX};
	rc = -ENOMEM;
	w->source = strdup(path);
	l.keys = calloc(l.cap_templates, sizeof(*l.keys));
	l.by_key = calloc(l.cap_templates, sizeof(*l.by_key));
	if (w->source == NULL || l.keys == NULL || l.by_key == NULL ||
	    alloc_templates(w, l.cap_templates) < 0) {
		snprintf(err, err_len, "%s: out of memory", path);
		goto done;
	}
	/* Values one after another: one document, or JSON Lines. */
	size_t off = 0;
	rc = 0;
	while (rc == 0) {
		while (off < len && text[off] != '\0' && strchr(" \t\r\n", text[off]) != NULL)
			off++;
		if (off >= len)
			break;
		json_error_t je;
		json_t *v = json_loadb(text + off, len - off,
				       JSON_DISABLE_EOF_CHECK | JSON_REJECT_DUPLICATES, &je);
		if (v == NULL) {
			snprintf(err, err_len, "%s: after %llu pods, byte %zu: %s", path,
				 (unsigned long long)l.seen, off + (size_t)je.position,
				 je.text);
			rc = -EINVAL;
			break;
		}
		off += (size_t)je.position;
		rc = add_value(&l, v);
		json_decref(v);
	}
	if (rc == 0 && w->n_order == 0) {
		snprintf(err, err_len, "%s: no pods", path);
		rc = -EINVAL;
	}
done:
	for (uint32_t i = 0; l.keys != NULL && i < w->n_templates; i++)
		free(l.keys[i]);
	free(l.keys);
	free(l.by_key);
	free(text);
	if (rc < 0)
		workload_free(w);
	return rc;
}

void workload_pod(const struct workload *w, uint64_t k, struct workload_pod *out)
{
	memset(out, 0, sizeof(*out));
	if (w->order != NULL) {
		out->template_idx = w->order[k % w->n_order];
		return;
	}
	uint64_t h = rng_hash(w->seed ^ k);
	uint64_t u = h >> 11; /* 53 bits */
	uint32_t lo = 0, hi = w->n_templates - 1;
	while (lo < hi) { /* the first rank whose cdf passes u */
		uint32_t mid = (lo + hi) / 2;
		if (u < w->popularity_cdf[mid])
			hi = mid;
		else
			lo = mid + 1;
	}
	out->template_idx = lo;
	uint64_t h2 = rng_hash(h);
	if ((double)(h2 >> 11) >= w->unique_share * 9007199254740992.0)
		return;
	/* Unique-ish: +1..200m cpu, +1..256Mi memory, or both. */
	uint64_t h3 = rng_hash(h2);
	unsigned which = (unsigned)(h3 % 3);
	if (which != 1)
		out->extra[out->n_extra++] = (struct workload_extra){
			.resource = WORKLOAD_CPU,
			.amount = 1 + (int64_t)((h3 >> 8) % 200)};
	if (which != 0)
		out->extra[out->n_extra++] = (struct workload_extra){
			.resource = WORKLOAD_MEMORY,
			.amount = (1 + (int64_t)((h3 >> 24) % 256)) << 20};
}

void workload_free(struct workload *w)
{
	for (uint32_t i = 0; i < w->n_templates; i++) {
		free(w->template_json[i]);
		free(w->template_name[i]);
	}
	free(w->template_json);
	free(w->template_len);
	free(w->template_name);
	free(w->order);
	free(w->popularity_cdf);
	free(w->source);
	memset(w, 0, sizeof(*w));
}
