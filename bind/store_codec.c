/* The durable store's records: see store_codec.h. A writer and a reader
 * over a bounded buffer; the reader fails closed (any short read, length
 * or range error makes the whole record -EBADMSG). */
#include "bind/store_codec.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"

struct out {
	uint8_t *p;
	size_t len, cap;
	bool full;
};

static void put(struct out *o, const void *v, size_t n)
{
	if (o->full || n > o->cap - o->len) {
		o->full = true;
		return;
	}
	memcpy(o->p + o->len, v, n);
	o->len += n;
}

static void put_u8(struct out *o, uint8_t v) { put(o, &v, 1); }
static void put_u16(struct out *o, uint16_t v) { put(o, &v, 2); }
static void put_u32(struct out *o, uint32_t v) { put(o, &v, 4); }
static void put_u64(struct out *o, uint64_t v) { put(o, &v, 8); }

static void put_str(struct out *o, const struct intern *t, uint32_t id)
{
	size_t n = intern_len(t, id);
	put_u16(o, (uint16_t)n);
	put(o, intern_str(t, id), n);
}

static int finish(const struct out *o)
{
	return o->full ? -E2BIG : (int)o->len;
}

struct in {
	const uint8_t *p;
	size_t len, at;
	bool bad;
};

static void get(struct in *i, void *v, size_t n)
{
	if (i->bad || n > i->len - i->at) {
		i->bad = true;
		memset(v, 0, n);
		return;
	}
	memcpy(v, i->p + i->at, n);
	i->at += n;
}

static uint8_t get_u8(struct in *i) { uint8_t v; get(i, &v, 1); return v; }
static uint16_t get_u16(struct in *i) { uint16_t v; get(i, &v, 2); return v; }
static uint32_t get_u32(struct in *i) { uint32_t v; get(i, &v, 4); return v; }
static uint64_t get_u64(struct in *i) { uint64_t v; get(i, &v, 8); return v; }

/* A string, interned. Returns 0, or the intern table's error. */
static int get_str(struct in *i, struct intern *t, uint32_t *id)
{
	uint16_t n = get_u16(i);
	if (i->bad || n > INTERN_MAX_LEN || n > i->len - i->at) {
		i->bad = true;
		*id = 0;
		return 0;
	}
	int rc = intern_add(t, (const char *)i->p + i->at, n, id);
	i->at += n;
	if (rc == -EINVAL) { /* a NUL inside: not ours */
		i->bad = true;
		rc = 0;
	}
	return rc;
}

int store_encode_node(const struct node_spec *n, const struct intern *t,
		      uint8_t *buf, size_t cap)
{
	struct out o = {.p = buf, .cap = cap};
	put_u8(&o, STORE_CODEC_VERSION);
	put_u8(&o, n->unschedulable);
	put_u8(&o, n->ready);
	put_u8(&o, n->devices.n_gpus);
	put_u8(&o, n->devices.n_numa);
	put_u8(&o, 0);
	put_u16(&o, n->devices.n_cores);
	put_u16(&o, n->n_labels);
	put_u16(&o, n->n_taints);
	for (int r = 0; r < RES_MAX; r++)
		put_u64(&o, (uint64_t)n->allocatable.v[r]);
	put_str(&o, t, n->name);
	put_str(&o, t, n->devices.gpu_model);
	for (unsigned k = 0; k < n->n_labels && k < NODE_MAX_LABELS; k++) {
		put_str(&o, t, n->labels[k].key);
		put_str(&o, t, n->labels[k].value);
	}
	for (unsigned k = 0; k < n->n_taints && k < NODE_MAX_TAINTS; k++) {
		put_str(&o, t, n->taints[k].key);
		put_str(&o, t, n->taints[k].value);
		put_u8(&o, n->taints[k].effect);
	}
	return finish(&o);
}

static int label_cmp(const void *a, const void *b)
{
	const struct label *x = a, *y = b;
	return (x->key > y->key) - (x->key < y->key);
}

static int bad(char *err, size_t err_len, const char *what, const char *why)
{
	return errmsg_rc(-EBADMSG, err, err_len, "%s record: %s", what, why);
}

int store_decode_node(const uint8_t *buf, size_t len, struct intern *t,
		      struct node_spec *out, char *err, size_t err_len)
{
	struct in i = {.p = buf, .len = len};
	memset(out, 0, sizeof(*out));
	uint8_t version = get_u8(&i);
	if (!i.bad && version != STORE_CODEC_VERSION)
		return errmsg_rc(-EBADMSG, err, err_len, "node record: format "
				 "version %u, this daemon reads %u", version,
				 STORE_CODEC_VERSION);
	out->unschedulable = get_u8(&i) != 0;
	out->ready = get_u8(&i);
	out->devices.n_gpus = get_u8(&i);
	out->devices.n_numa = get_u8(&i);
	(void)get_u8(&i);
	out->devices.n_cores = get_u16(&i);
	out->n_labels = get_u16(&i);
	out->n_taints = get_u16(&i);
	if (i.bad)
		return bad(err, err_len, "node", "shorter than its header");
	if (out->ready > NODE_READY_FALSE || out->devices.n_gpus > NODE_MAX_GPUS ||
	    out->devices.n_numa > NODE_MAX_NUMA ||
	    out->devices.n_cores > NODE_MAX_CORES ||
	    (out->devices.n_cores > 0 && (out->devices.n_numa == 0 ||
					  out->devices.n_cores % out->devices.n_numa)) ||
	    out->n_labels > NODE_MAX_LABELS || out->n_taints > NODE_MAX_TAINTS)
		return bad(err, err_len, "node", "a count or enum out of range");
	for (int r = 0; r < RES_MAX; r++) {
		out->allocatable.v[r] = (int64_t)get_u64(&i);
		if (out->allocatable.v[r] < 0)
			return bad(err, err_len, "node", "a negative allocatable");
	}
	int rc = get_str(&i, t, &out->name);
	if (rc == 0)
		rc = get_str(&i, t, &out->devices.gpu_model);
	for (unsigned k = 0; rc == 0 && k < out->n_labels; k++) {
		rc = get_str(&i, t, &out->labels[k].key);
		if (rc == 0)
			rc = get_str(&i, t, &out->labels[k].value);
	}
	/* Sorted by key id, as the model keeps them (ids are this run's). */
	if (rc == 0 && !i.bad && out->n_labels > 1) {
		qsort(out->labels, out->n_labels, sizeof(out->labels[0]), label_cmp);
		for (unsigned k = 1; k < out->n_labels; k++)
			if (out->labels[k].key == out->labels[k - 1].key)
				i.bad = true; /* a key twice */
	}
	for (unsigned k = 0; rc == 0 && k < out->n_taints; k++) {
		rc = get_str(&i, t, &out->taints[k].key);
		if (rc == 0)
			rc = get_str(&i, t, &out->taints[k].value);
		out->taints[k].effect = get_u8(&i);
		if (out->taints[k].effect < TAINT_NO_SCHEDULE ||
		    out->taints[k].effect > TAINT_NO_EXECUTE)
			i.bad = true;
	}
	if (rc < 0)
		return errmsg_rc(rc, err, err_len, "node record: interning its "
				 "strings: %s", strerror(-rc));
	if (i.bad || i.at != len || out->name == 0)
		return bad(err, err_len, "node", "truncated, damaged, or with "
			   "bytes after its end");
	return 0;
}

/* A group by value: its encoding (whose ids only hold places), then each
 * id's string in pod_group_map_ids()'s order. */
struct group_out {
	struct out *o;
	const struct intern *t;
};

static int put_group_id(void *arg, uint32_t *id)
{
	struct group_out *g = arg;
	put_str(g->o, g->t, *id);
	return 0;
}

static void put_group(struct out *o, const struct intern *t, uint32_t group)
{
	struct pod_group g;
	size_t n = intern_len(t, group);
	if (group == 0 || pod_group_decode(intern_str(t, group), n, &g) < 0) {
		put_u16(o, 0); /* none, or not one we can read: none */
		return;
	}
	put_u16(o, (uint16_t)n);
	put(o, intern_str(t, group), n);
	struct group_out go = {o, t};
	pod_group_map_ids(&g, put_group_id, &go);
}

struct group_in {
	struct in *i;
	struct intern *t;
};

static int get_group_id(void *arg, uint32_t *id)
{
	struct group_in *g = arg;
	int rc = get_str(g->i, g->t, id);
	return rc < 0 ? rc : g->i->bad ? -EBADMSG : 0;
}

/* Reads put_group()'s bytes back, interning the strings anew. */
static int get_group(struct in *i, struct intern *t, uint32_t *group)
{
	*group = 0;
	uint16_t n = get_u16(i);
	if (i->bad || n == 0)
		return 0;
	if (n > GROUP_ENCODED_MAX || n > i->len - i->at) {
		i->bad = true;
		return 0;
	}
	struct pod_group *g = malloc(sizeof(*g));
	char *enc = malloc(GROUP_ENCODED_MAX + 1);
	if (g == NULL || enc == NULL) {
		free(g);
		free(enc);
		return -ENOMEM;
	}
	int rc = pod_group_decode((const char *)i->p + i->at, n, g);
	i->at += n;
	if (rc < 0) {
		i->bad = true;
		rc = 0;
	} else {
		struct group_in gi = {i, t};
		rc = pod_group_map_ids(g, get_group_id, &gi);
		if (rc == -EBADMSG) {
			i->bad = true;
			rc = 0;
		} else if (rc == 0) {
			int len = pod_group_encode(g, enc, GROUP_ENCODED_MAX + 1);
			if (len < 0)
				i->bad = true;
			else
				rc = intern_add(t, enc, (size_t)len, group);
		}
	}
	free(g);
	free(enc);
	return rc;
}

int store_encode_placement(const struct placement_record *r, uint32_t node,
			   const struct intern *t, uint8_t *buf, size_t cap)
{
	struct out o = {.p = buf, .cap = cap};
	put_u8(&o, STORE_CODEC_VERSION);
	put_u8(&o, r->n_ports);
	put_u16(&o, 0);
	put_u32(&o, r->owner);
	put_u64(&o, r->cookie);
	for (int k = 0; k < RES_MAX; k++)
		put_u64(&o, (uint64_t)r->request.v[k]);
	put_u64(&o, (uint64_t)r->nonzero_cpu_milli);
	put_u64(&o, (uint64_t)r->nonzero_mem_bytes);
	put_u16(&o, r->dev.gpu_mask);
	put_u16(&o, r->dev.gpu_milli);
	put_u16(&o, r->dev.n_cores);
	put_u16(&o, 0);
	for (int w = 0; w < CORE_WORDS; w++)
		put_u64(&o, r->dev.cpuset[w]);
	for (unsigned k = 0; k < r->n_ports && k < POD_MAX_PORTS; k++) {
		put_str(&o, t, r->ports[k].ip);
		put_u16(&o, r->ports[k].port);
		put_u8(&o, r->ports[k].protocol);
	}
	put_str(&o, t, node);
	put_str(&o, t, r->pod_name);
	put_u8(&o, r->group_terms);
	put_group(&o, t, r->group);
	put_u32(&o, (uint32_t)r->priority);
	return finish(&o);
}

int store_decode_placement(const uint8_t *buf, size_t len, struct intern *t,
			   struct placement_record *out, uint32_t *node,
			   char *err, size_t err_len)
{
	struct in i = {.p = buf, .len = len};
	memset(out, 0, sizeof(*out));
	*node = 0;
	uint8_t version = get_u8(&i);
	if (!i.bad && version != STORE_CODEC_VERSION)
		return errmsg_rc(-EBADMSG, err, err_len, "placement record: format "
				 "version %u, this daemon reads %u", version,
				 STORE_CODEC_VERSION);
	out->n_ports = get_u8(&i);
	(void)get_u16(&i);
	out->owner = get_u32(&i);
	out->cookie = get_u64(&i);
	for (int k = 0; k < RES_MAX; k++)
		out->request.v[k] = (int64_t)get_u64(&i);
	out->nonzero_cpu_milli = (int64_t)get_u64(&i);
	out->nonzero_mem_bytes = (int64_t)get_u64(&i);
	out->dev.gpu_mask = get_u16(&i);
	out->dev.gpu_milli = get_u16(&i);
	out->dev.n_cores = get_u16(&i);
	(void)get_u16(&i);
	for (int w = 0; w < CORE_WORDS; w++)
		out->dev.cpuset[w] = get_u64(&i);
	if (i.bad)
		return bad(err, err_len, "placement", "shorter than its header");
	if (out->n_ports > POD_MAX_PORTS || out->owner == 0 ||
	    out->dev.gpu_milli > GPU_MILLI_PER_DEVICE)
		return bad(err, err_len, "placement", "a count or owner out of range");
	int rc = 0;
	for (unsigned k = 0; rc == 0 && k < out->n_ports; k++) {
		rc = get_str(&i, t, &out->ports[k].ip);
		out->ports[k].port = get_u16(&i);
		out->ports[k].protocol = get_u8(&i);
		if (out->ports[k].port == 0 || out->ports[k].protocol > PROTO_SCTP)
			i.bad = true;
	}
	if (rc == 0)
		rc = get_str(&i, t, node);
	if (rc == 0)
		rc = get_str(&i, t, &out->pod_name);
	out->group_terms = get_u8(&i) != 0;
	if (rc == 0)
		rc = get_group(&i, t, &out->group);
	out->priority = (int32_t)get_u32(&i);
	if (rc < 0)
		return errmsg_rc(rc, err, err_len, "placement record: interning its "
				 "strings: %s", strerror(-rc));
	if (i.bad || i.at != len || *node == 0)
		return bad(err, err_len, "placement", "truncated, damaged, or with "
			   "bytes after its end");
	return 0;
}

int store_encode_identity(const struct state_identity *id, uint8_t *buf,
			  size_t cap)
{
	struct out o = {.p = buf, .cap = cap};
	put_u8(&o, STORE_CODEC_VERSION);
	put_u8(&o, 0);
	put_u16(&o, 0);
	put_u32(&o, id->uid);
	size_t n = strnlen(id->name, sizeof(id->name) - 1);
	put_u16(&o, (uint16_t)n);
	put(&o, id->name, n);
	return finish(&o);
}

int store_decode_identity(const uint8_t *buf, size_t len,
			  struct state_identity *out, char *err, size_t err_len)
{
	struct in i = {.p = buf, .len = len};
	memset(out, 0, sizeof(*out));
	uint8_t version = get_u8(&i);
	(void)get_u8(&i);
	(void)get_u16(&i);
	out->uid = get_u32(&i);
	uint16_t n = get_u16(&i);
	if (i.bad || version != STORE_CODEC_VERSION || n >= sizeof(out->name))
		return bad(err, err_len, "identity", "damaged, or another version");
	get(&i, out->name, n);
	if (i.bad || i.at != len || memchr(out->name, '\0', n) != NULL)
		return bad(err, err_len, "identity", "truncated or damaged");
	out->used = 1;
	return 0;
}

int store_encode_afs(const struct store_afs *a, uint8_t *buf, size_t cap)
{
	struct out o = {.p = buf, .cap = cap};
	unsigned n = a->n < STORE_AFS_RESOURCES ? a->n : STORE_AFS_RESOURCES;
	put_u8(&o, STORE_CODEC_VERSION);
	put_u8(&o, 0);
	put_u16(&o, (uint16_t)n);
	put_u64(&o, a->last_ns);
	size_t k = strnlen(a->ns, sizeof(a->ns) - 1);
	put_u16(&o, (uint16_t)k);
	put(&o, a->ns, k);
	k = strnlen(a->name, sizeof(a->name) - 1);
	put_u16(&o, (uint16_t)k);
	put(&o, a->name, k);
	for (unsigned r = 0; r < n; r++) {
		k = strnlen(a->resource[r], sizeof(a->resource[r]) - 1);
		put_u16(&o, (uint16_t)k);
		put(&o, a->resource[r], k);
		uint64_t bits;
		memcpy(&bits, &a->consumed[r], sizeof(bits));
		put_u64(&o, bits);
	}
	return finish(&o);
}

/* A name of 1 to `max` bytes, no NUL, into to[0..max] NUL-terminated.
 * false when it is not one. */
static bool get_name(struct in *i, char *to, size_t max)
{
	uint16_t n = get_u16(i);
	if (i->bad || n == 0 || n > max || n > i->len - i->at) {
		i->bad = true;
		return false;
	}
	get(i, to, n);
	to[n] = '\0';
	return memchr(to, '\0', n) == NULL;
}

int store_decode_afs(const uint8_t *buf, size_t len, struct store_afs *out,
		     char *err, size_t err_len)
{
	struct in i = {.p = buf, .len = len};
	memset(out, 0, sizeof(*out));
	uint8_t version = get_u8(&i);
	(void)get_u8(&i);
	uint16_t n = get_u16(&i);
	out->last_ns = get_u64(&i);
	if (i.bad)
		return bad(err, err_len, "admission usage", "truncated");
	if (version != STORE_CODEC_VERSION)
		return errmsg_rc(-EBADMSG, err, err_len, "admission usage record: "
				 "format version %u, this daemon reads %u",
				 version, STORE_CODEC_VERSION);
	if (n > STORE_AFS_RESOURCES)
		return errmsg_rc(-EBADMSG, err, err_len, "admission usage record: "
				 "%u resources, expected at most %u", n,
				 STORE_AFS_RESOURCES);
	if (!get_name(&i, out->ns, STORE_AFS_NAMESPACE_MAX) ||
	    !get_name(&i, out->name, STORE_AFS_NAME_MAX))
		return bad(err, err_len, "admission usage", "its LocalQueue's "
			   "namespace or name truncated, empty, too long or with "
			   "a NUL");
	out->n = n;
	for (unsigned r = 0; r < n; r++) {
		if (!get_name(&i, out->resource[r], STORE_AFS_NAME_MAX))
			return bad(err, err_len, "admission usage", "a resource "
				   "name truncated, empty, too long or with a NUL");
		uint64_t bits = get_u64(&i);
		memcpy(&out->consumed[r], &bits, sizeof(bits));
		if (i.bad)
			return bad(err, err_len, "admission usage", "truncated");
		if (!isfinite(out->consumed[r]) || !(out->consumed[r] >= 0.0))
			return errmsg_rc(-EBADMSG, err, err_len, "admission usage "
					 "record: resource \"%s\": consumed %g, "
					 "expected a finite number >= 0",
					 out->resource[r], out->consumed[r]);
		for (unsigned q = 0; q < r; q++)
			if (strcmp(out->resource[q], out->resource[r]) == 0)
				return errmsg_rc(-EBADMSG, err, err_len,
						 "admission usage record: resource "
						 "\"%s\" twice", out->resource[r]);
	}
	if (i.at != len)
		return bad(err, err_len, "admission usage", "bytes after its end");
	return 0;
}
