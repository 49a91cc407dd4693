/* OP_QUEUE (admins; ingest/control_ops.h): Kueue's objects changed while
 * the daemon runs (`shmsched queue apply|delete|list`).
 *
 * The daemon keeps the Kueue objects its quota tree was built from (the
 * cluster file's, read again by producers_set_queues) as text, one
 * compact JSON object each, keyed by kind and name (a LocalQueue's by
 * namespace and name). An APPLY's objects replace those of the same key
 * in their place and add the others after them; a DELETE removes one.
 * Either way the whole set, one object a line in that stable order (it
 * numbers the ClusterQueues: a replaced one keeps its number, as a
 * restart's file does, see qc_recount), is decoded again by the one
 * strict decoder (ingest/kueue_json.h) into a new sealed tree. A refusal
 * is decoded once more for its message: the applied text first, as sent,
 * so that the message names the applied file's own lines, then the kept
 * objects (a line past the applied text's names "the daemon's objects
 * kept" and the line among them); a syntax error or a value of another
 * kind, the applied text alone. A tree that decodes is handed to the daemon
 * (producers_queue_ops.replace: daemon/quota_charge.c's qc_replace, which
 * carries the live placements' charges over by name); only then is the
 * set changed. A refusal changes nothing.
 *
 * Kueue's rules kept (docs/guides/quotas.md):
 * - a quota cut below what is in use is accepted and usage stays above
 *   it; new admissions wait until it is below again (Kueue keeps
 *   admitted workloads: kubernetes-sigs/kueue issue #5176, "the already
 *   admitted job/pod will stay admitted" after a quota cut);
 * - a ClusterQueue still named by a LocalQueue cannot be deleted: the
 *   decoder refuses a LocalQueue naming no ClusterQueue, so the refusal
 *   names it (Kueue instead keeps the LocalQueue, inactive; shmsched's
 *   tree has no inactive queues: delete the LocalQueues first);
 * - a deleted ClusterQueue's placements stay placed and are charged to
 *   nothing; the answer counts them (Kueue's finalizer
 *   kueue.x-k8s.io/resource-in-use holds the deletion until its admitted
 *   workloads finish: Kueue's "Troubleshooting delete ClusterQueue" task
 *   page; here it takes effect at once).
 *
 * Under the producers' lock (the control thread), as every request.
 */
#include "ingest/producers_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "base/base.h"
#include "ingest/control_ops.h"
#include "ingest/control_proto.h"
#include "ingest/control_server.h"
#include "ingest/approval.h"
#include "ingest/kueue_json.h"
#include "quota/quota.h"

/* One object kept: its key and its compact JSON text. */
struct kq_kept {
	char kind[32];
	char key[QUOTA_NAMESPACE_MAX + 1 + QUOTA_NAME_MAX + 1]; /* ns/name or name */
	char *text;
	size_t len;
};

struct prod_queues {
	struct producers_queue_ops ops;
	struct quota_tree *tree; /* in force; the daemon's */
	struct kq_kept *objs;
	size_t n, cap;
};

static void kept_clear(struct kq_kept *objs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(objs[i].text);
}

void prod_queues_free(struct prod_queues *q)
{
	if (q == NULL)
		return;
	kept_clear(q->objs, q->n);
	free(q->objs);
	free(q);
}

/* The objects found while walking a JSON value. */
struct kq_list {
	struct kq_kept *v;
	size_t n, cap;
	unsigned others; /* values not a Kueue object, or not parsed */
};

static int list_push(struct kq_list *l, const struct kq_kept *k)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 16;
		if (cap > KUEUE_MAX_OBJECTS + 1)
			return -E2BIG;
		struct kq_kept *v = realloc(l->v, cap * sizeof(*v));
		if (v == NULL)
			return -ENOMEM;
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = *k;
	return 0;
}

/* The key of a Kueue object, or false when it is none (or has no name:
 * the decoder refuses it then). */
static bool object_key(const json_t *obj, struct kq_kept *k)
{
	const char *api = json_string_value(json_object_get(obj, "apiVersion"));
	const char *kind = json_string_value(json_object_get(obj, "kind"));
	if (kind == NULL || !kueue_is_object(api, kind, strlen(kind)))
		return false;
	const json_t *meta = json_object_get(obj, "metadata");
	const char *name = json_string_value(json_object_get(meta, "name"));
	const char *ns = json_string_value(json_object_get(meta, "namespace"));
	if (name == NULL)
		return false;
	memset(k, 0, sizeof(*k));
	snprintf(k->kind, sizeof(k->kind), "%s", kind);
	if (strcmp(kind, "LocalQueue") == 0)
		snprintf(k->key, sizeof(k->key), "%s/%s", ns ? ns : "", name);
	else
		snprintf(k->key, sizeof(k->key), "%s", name);
	return true;
}

/* Every Kueue object of `v` (an object, a List or an array of those),
 * with its compact text when `with_text`. Other values are passed over
 * (the decoder refuses them where they count). */
static int walk(const json_t *v, bool with_text, struct kq_list *out, unsigned depth)
{
	if (depth > 2)
		return 0;
	if (json_is_array(v)) {
		size_t i;
		json_t *e;
		json_array_foreach(v, i, e) {
			int rc = walk(e, with_text, out, depth + 1);
			if (rc < 0)
				return rc;
		}
		return 0;
	}
	const char *kind = json_string_value(json_object_get(v, "kind"));
	const json_t *items = json_object_get(v, "items");
	if (kind != NULL && json_is_array(items) && strlen(kind) >= 4 &&
	    strcmp(kind + strlen(kind) - 4, "List") == 0)
		return walk(items, with_text, out, depth + 1);
	struct kq_kept k;
	if (!json_is_object(v) || !object_key(v, &k)) {
		out->others++;
		return 0;
	}
	if (with_text) {
		k.text = json_dumps(v, JSON_COMPACT | JSON_PRESERVE_ORDER);
		if (k.text == NULL)
			return -ENOMEM;
		k.len = strlen(k.text);
	}
	int rc = list_push(out, &k);
	if (rc < 0)
		free(k.text);
	return rc;
}

/* Every Kueue object of the JSON stream buf[0..len) (a value that does not
 * parse ends the walk: the decoder says where). */
static int walk_buffer(const char *buf, size_t len, bool with_text, struct kq_list *out)
{
	size_t off = 0;
	while (off < len) {
		while (off < len && (buf[off] == ' ' || buf[off] == '\n' ||
				     buf[off] == '\t' || buf[off] == '\r'))
			off++;
		if (off == len)
			break;
		json_error_t je;
		json_t *root = json_loadb(buf + off, len - off, JSON_DISABLE_EOF_CHECK, &je);
		if (root == NULL) {
			out->others++;
			return 0;
		}
		int rc = walk(root, with_text, out, 0);
		json_decref(root);
		if (rc < 0)
			return rc;
		if (je.position <= 0)
			return 0;
		off += (size_t)je.position;
	}
	return 0;
}

static bool same_key(const struct kq_kept *a, const struct kq_kept *b)
{
	return strcmp(a->kind, b->kind) == 0 && strcmp(a->key, b->key) == 0;
}

int producers_set_queues(struct producers *p, const struct producers_queue_ops *ops,
			 struct quota_tree *tree, const char *path, char *err,
			 size_t err_len)
{
	char *buf = NULL;
	size_t len = 0;
	struct kq_list l = {0};
	struct prod_queues *q = calloc(1, sizeof(*q));
	int rc = q == NULL ? -ENOMEM : 0;
	if (rc == 0)
		rc = file_read_all(path, (size_t)INT_MAX, &buf, &len);
	if (rc == 0)
		rc = walk_buffer(buf, len, true, &l);
	free(buf);
	if (rc < 0) {
		kept_clear(l.v, l.n);
		free(l.v);
		free(q);
		return errmsg_rc(rc, err, err_len, "%s: its Kueue objects, read "
				 "again for `shmsched queue`: %s", path, strerror(-rc));
	}
	q->ops = *ops;
	q->tree = tree;
	q->objs = l.v;
	q->n = l.n;
	q->cap = l.cap;
	pthread_mutex_lock(&p->lock);
	prod_queues_free(p->queues);
	p->queues = q;
	pthread_mutex_unlock(&p->lock);
	return 0;
}

/* The answer's text, bounded: lines past it are counted in `cut`. */
struct report {
	char *buf;
	size_t len, cap;
	unsigned cut;
};

__attribute__((format(printf, 2, 3)))
static void say(struct report *r, const char *fmt, ...)
{
	if (r->cut > 0) {
		r->cut++;
		return;
	}
	va_list ap;
	va_start(ap, fmt);
	int k = vsnprintf(r->buf + r->len, r->cap - r->len, fmt, ap);
	va_end(ap);
	if (k < 0 || r->len + (size_t)k + 80 > r->cap) {
		r->buf[r->len] = '\0';
		r->cut = 1;
		return;
	}
	r->len += (size_t)k;
}

static const char *unit_of(const struct quota_tree *t, int resource)
{
	return strcmp(quota_resource_name(t, resource), "cpu") == 0 ? "m" : "";
}

/* Each ClusterQueue: its cohort, then per flavor and resource it covers:
 * usage of nominal, what it borrows, its borrowingLimit. */
static unsigned list_queues(const struct quota_tree *t, struct report *r)
{
	unsigned n = 0;
	for (int node = 0; node < quota_n_nodes(t); node++) {
		if (quota_node_is_cohort(t, node))
			continue;
		n++;
		int parent = quota_node_parent(t, node);
		say(r, "ClusterQueue %s%s%s%s\n", quota_node_name(t, node),
		    parent >= 0 ? " (cohort " : "",
		    parent >= 0 ? quota_node_name(t, parent) : "",
		    parent >= 0 ? ")" : "");
		const int *order;
		int nf = quota_node_flavors(t, node, &order);
		for (int k = 0; k < nf; k++) {
			for (int res = 0; res < quota_n_resources(t); res++) {
				int64_t nom, bl, ll;
				if (!quota_entry(t, node, order[k], res, &nom, &bl, &ll))
					continue;
				int64_t used = quota_usage(t, node, order[k], res);
				int64_t sub = quota_subtree_quota(t, node, order[k], res);
				/* Without a cohort nothing is borrowed: a
				 * usage past the quota is a cut's. */
				int64_t borrowed = parent >= 0 && used > sub ? used - sub : 0;
				const char *u = unit_of(t, res);
				char limit[64] = "none";
				if (bl != QUOTA_NO_LIMIT)
					snprintf(limit, sizeof(limit), "%" PRId64 "%s", bl, u);
				say(r, "  %s %s: usage %" PRId64 "%s of nominal %" PRId64
				    "%s; borrowed %" PRId64 "%s (borrowingLimit %s)%s\n",
				    quota_flavor_name(t, order[k]),
				    quota_resource_name(t, res), used, u, nom, u,
				    borrowed, u, limit,
				    /* Past what it may hold at all: only after
				     * a cut. */
				    (parent < 0 ? used > nom :
				     bl != QUOTA_NO_LIMIT && used > nom + bl) ?
				    "; over its quota (cut while in use): new pods "
				    "wait" : "");
			}
		}
	}
	return n;
}

/* Puts `pre` in place of err[0..drop), the rest kept (cut to fit). */
static void replace_head(char *err, size_t err_len, size_t drop, const char *pre)
{
	size_t pl = strlen(pre), rl = strlen(err + drop);
	if (pl + 1 > err_len)
		return;
	if (pl + rl + 1 > err_len)
		rl = err_len - pl - 1;
	memmove(err + pl, err + drop, rl);
	memcpy(err, pre, pl);
	err[pl + rl] = '\0';
}

/* The error line's "<source>:<line>" when <line> is past the applied
 * text's `lines`: the kept objects', renamed so. */
static void rename_kept_line(char *err, size_t err_len, const char *source,
			     unsigned lines)
{
	size_t sl = strlen(source);
	if (strncmp(err, source, sl) != 0 || err[sl] != ':')
		return;
	char *end;
	unsigned long line = strtoul(err + sl + 1, &end, 10);
	if (end == err + sl + 1 || line <= lines)
		return;
	char pre[96];
	snprintf(pre, sizeof(pre), "the daemon's objects kept (one a line):%lu",
		 line - lines);
	replace_head(err, err_len, (size_t)(end - err), pre);
}

/* The new set, in a stable order: each kept object in its place (or the
 * added object that replaces it there: repl[i] >= 0), those deleted
 * (repl[i] == REPL_GONE) left out, then the added objects that replace
 * none. The order is what numbers the ClusterQueues (the decoder adds
 * them in object order), so an object replaced keeps its number, as the
 * cluster file's numbering does after a restart (qc_recount). Returns
 * the count in *n; NULL without memory. The texts are borrowed. */
#define REPL_KEEP (-1)
#define REPL_GONE (-2)
static const struct kq_kept **new_set(const struct prod_queues *q, const int *repl,
				      const struct kq_list *added, size_t *n)
{
	const struct kq_kept **v = malloc((q->n + added->n + 1) * sizeof(*v));
	bool *used = calloc(added->n + 1, sizeof(*used));
	if (v == NULL || used == NULL) {
		free(v);
		free(used);
		return NULL;
	}
	size_t k = 0;
	for (size_t i = 0; i < q->n; i++) {
		if (repl[i] == REPL_GONE)
			continue;
		if (repl[i] >= 0) {
			v[k++] = &added->v[repl[i]];
			used[repl[i]] = true;
		} else {
			v[k++] = &q->objs[i];
		}
	}
	for (size_t j = 0; j < added->n; j++)
		if (!used[j])
			v[k++] = &added->v[j];
	free(used);
	*n = k;
	return v;
}

/* The line's "<source>:<line>" of a decoder's message. */
static int decode(const char *source, const char *buf, size_t len,
		  struct quota_tree **out, char *err, size_t err_len)
{
	int rc = kueue_load_buffer(source, buf, len, false, out, err, err_len);
	if (rc == 0 && *out == NULL)
		rc = errmsg_rc(-EINVAL, err, err_len, "%s: no Kueue object left: "
			       "expected at least one (the daemon's quotas cannot "
			       "all be removed while it runs)", source);
	return rc;
}

/* The set v[0..n) decoded into a new tree. On a refusal, the message is
 * the decoder's for `applied` (NULL: none) first, then the kept objects
 * (those of v not in `added`), one a line, so that it names the applied
 * text's own lines. */
static int build(const struct kq_kept *const *v, size_t n,
		 const struct kq_list *added, const char *source,
		 const char *applied, size_t applied_len, struct quota_tree **out,
		 char *err, size_t err_len)
{
	size_t total = applied_len + 2;
	for (size_t i = 0; i < n; i++)
		total += v[i]->len + 1;
	char *buf = malloc(total);
	if (buf == NULL)
		return errmsg_rc(-ENOMEM, err, err_len, "queue: out of memory");
	size_t at = 0;
	for (size_t i = 0; i < n; i++) {
		memcpy(buf + at, v[i]->text, v[i]->len);
		at += v[i]->len;
		buf[at++] = '\n';
	}
	/* A value of the applied text that is no Kueue object (or no JSON)
	 * is the decoder's to refuse, with its line: straight to that. */
	int rc = added->others > 0 ? -EINVAL : decode(source, buf, at, out, err,
						      err_len);
	if (rc == 0 || applied == NULL) {
		free(buf);
		return rc;
	}
	/* Again for the message: the applied text as sent, then the rest. */
	memcpy(buf, applied, applied_len);
	at = applied_len;
	unsigned lines = 0;
	for (size_t i = 0; i < applied_len; i++)
		lines += applied[i] == '\n';
	if (applied_len > 0 && applied[applied_len - 1] != '\n' &&
	    added->others == 0) {
		buf[at++] = '\n';
		lines++;
	}
	/* A syntax error or another kind is the applied text's alone (the
	 * decoder reads every value before it seals): decoded alone, no kept
	 * object after it can continue an unfinished value. */
	for (size_t i = 0; i < n && added->others == 0; i++) {
		if (v[i] >= added->v && v[i] < added->v + added->n)
			continue;
		memcpy(buf + at, v[i]->text, v[i]->len);
		at += v[i]->len;
		buf[at++] = '\n';
	}
	struct quota_tree *t = NULL;
	int rc2 = decode(source, buf, at, &t, err, err_len);
	quota_tree_free(t);
	free(buf);
	if (rc2 < 0 && added->others == 0)
		rename_kept_line(err, err_len, source, lines);
	else if (rc2 == 0 && added->others > 0) /* not expected: the decoder refuses them */
		errmsg_rc(rc, err, err_len, "%s: a value that is not a Kueue object "
			  "(ResourceFlavor, Cohort, ClusterQueue, LocalQueue)", source);
	return rc2 < 0 ? rc2 : rc;
}

/* The tree `t` in force through the daemon; then the set is v[0..n)
 * (texts taken: from q->objs those kept, from `added` all). */
static int install(struct prod_queues *q, struct quota_tree *t,
		   const struct kq_kept *const *v, size_t n, const int *repl,
		   struct kq_list *added, struct producers_queue_carried *c,
		   char *err, size_t err_len)
{
	struct kq_kept *objs = malloc((n + 1) * sizeof(*objs));
	if (objs == NULL) {
		quota_tree_free(t);
		return errmsg_rc(-ENOMEM, err, err_len, "queue: out of memory");
	}
	int rc = q->ops.replace(q->ops.arg, t, c);
	if (rc < 0) {
		free(objs);
		quota_tree_free(t);
		return errmsg_rc(rc, err, err_len, "queue: the new quotas could not "
				 "be put in force: %s (nothing changed)", strerror(-rc));
	}
	q->tree = t;
	for (size_t i = 0; i < n; i++)
		objs[i] = *v[i];
	for (size_t i = 0; i < q->n; i++)
		if (repl[i] != REPL_KEEP)
			free(q->objs[i].text);
	added->n = 0; /* taken */
	free(q->objs);
	q->objs = objs;
	q->n = q->cap = n;
	return 0;
}

/* Builds the set (q->objs changed by repl and added) and puts it in force. */
static int change(struct prod_queues *q, const int *repl, struct kq_list *added,
		  const char *source, const char *applied, size_t applied_len,
		  struct producers_queue_carried *c, char *err, size_t err_len)
{
	size_t n;
	const struct kq_kept **v = new_set(q, repl, added, &n);
	if (v == NULL)
		return errmsg_rc(-ENOMEM, err, err_len, "queue: out of memory");
	struct quota_tree *t = NULL;
	int rc = build(v, n, added, source, applied, applied_len, &t, err, err_len);
	if (rc == 0)
		rc = install(q, t, v, n, repl, added, c, err, err_len);
	free(v);
	return rc;
}

static int do_apply(struct prod_queues *q, const void *body, uint32_t len,
		    struct producers_queue_carried *c, char *err, size_t err_len)
{
	struct op_queue_apply h;
	if (len < sizeof(h))
		return errmsg_rc(-EPROTO, err, err_len, "queue apply: a body of %u "
				 "bytes; expected at least %zu", len, sizeof(h));
	memcpy(&h, body, sizeof(h));
	if (h.reserved != 0 || h.source_len > OP_QUEUE_SOURCE_MAX ||
	    h.source_len > len - sizeof(h))
		return errmsg_rc(-EPROTO, err, err_len, "queue apply: source_len %u, "
				 "reserved %u; expected at most %u bytes and 0",
				 h.source_len, h.reserved, OP_QUEUE_SOURCE_MAX);
	char source[OP_QUEUE_SOURCE_MAX + 1];
	const char *p = (const char *)body + sizeof(h);
	memcpy(source, p, h.source_len);
	source[h.source_len] = '\0';
	for (uint32_t i = 0; i < h.source_len; i++)
		if ((unsigned char)source[i] < 0x20) /* NUL and controls */
			source[i] = '?';
	if (source[0] == '\0')
		snprintf(source, sizeof(source), "(applied objects)");
	const char *text = p + h.source_len;
	size_t text_len = len - sizeof(h) - h.source_len;
	struct kq_list added = {0};
	int *repl = malloc((q->n + 1) * sizeof(*repl));
	int rc = repl == NULL ? errmsg_rc(-ENOMEM, err, err_len, "queue: out of memory") : 0;
	if (rc == 0 && text_len == 0)
		rc = errmsg_rc(-EINVAL, err, err_len, "%s: empty: expected Kueue "
			       "objects (JSON, as kubectl get -o json prints them)",
			       source);
	if (rc == 0)
		rc = walk_buffer(text, text_len, true, &added);
	if (rc < 0 && err[0] == '\0')
		errmsg_rc(rc, err, err_len, "%s: %s", source, strerror(-rc));
	for (size_t i = 0; rc == 0 && i < q->n; i++) {
		repl[i] = REPL_KEEP;
		for (size_t j = 0; j < added.n && repl[i] == REPL_KEEP; j++)
			if (same_key(&q->objs[i], &added.v[j]))
				repl[i] = (int)j;
	}
	if (rc == 0)
		rc = change(q, repl, &added, source, text, text_len, c, err, err_len);
	kept_clear(added.v, added.n);
	free(added.v);
	free(repl);
	return rc;
}

static int do_delete(struct prod_queues *q, const void *body, uint32_t len,
		     struct producers_queue_carried *c, char *err, size_t err_len)
{
	struct op_queue_delete d;
	if (len != sizeof(d))
		return errmsg_rc(-EPROTO, err, err_len, "queue delete: a body of %u "
				 "bytes; expected %zu", len, sizeof(d));
	memcpy(&d, body, sizeof(d));
	if (memchr(d.kind, 0, sizeof(d.kind)) == NULL ||
	    memchr(d.name, 0, sizeof(d.name)) == NULL)
		return errmsg_rc(-EPROTO, err, err_len, "queue delete: kind or name "
				 "not NUL-terminated");
	static const char *const kinds[] = {"ResourceFlavor", "Cohort",
					    "ClusterQueue", "LocalQueue"};
	bool known = false;
	for (size_t i = 0; i < 4; i++)
		known |= strcmp(d.kind, kinds[i]) == 0;
	if (!known)
		return errmsg_rc(-EINVAL, err, err_len, "queue delete: kind \"%.32s\": "
				 "expected ResourceFlavor, Cohort, ClusterQueue or "
				 "LocalQueue", d.kind);
	int *repl = malloc((q->n + 1) * sizeof(*repl));
	if (repl == NULL)
		return errmsg_rc(-ENOMEM, err, err_len, "queue: out of memory");
	bool found = false;
	for (size_t i = 0; i < q->n; i++) {
		repl[i] = REPL_KEEP;
		if (strcmp(q->objs[i].kind, d.kind) == 0 &&
		    strcmp(q->objs[i].key, d.name) == 0) {
			repl[i] = REPL_GONE;
			found = true;
		}
	}
	int rc = 0;
	struct kq_list none = {0};
	if (!found)
		rc = errmsg_rc(-ENOENT, err, err_len, "queue delete: %s \"%s\": the "
			       "daemon has no such object%s", d.kind, d.name,
			       strcmp(d.kind, "LocalQueue") == 0 ?
			       " (a LocalQueue is named namespace/name)" : "");
	if (rc == 0)
		rc = change(q, repl, &none, "the daemon's objects kept (one a line)",
			    NULL, 0, c, err, err_len);
	if (rc < 0 && found) {
		/* Say what the delete was refused for. */
		char pre[sizeof(d.kind) + sizeof(d.name) + 48];
		snprintf(pre, sizeof(pre), "queue delete: %s \"%s\" refused: ",
			 d.kind, d.name);
		replace_head(err, err_len, 0, pre);
	}
	free(repl);
	return rc;
}

void producers_set_metrics(struct producers *p, producers_metrics_fn fn, void *arg)
{
	pthread_mutex_lock(&p->lock);
	p->metrics = fn;
	p->metrics_arg = arg;
	pthread_mutex_unlock(&p->lock);
}

/* The approving managers' counts (ingest/approval.h's approval_stats,
 * under the producers' lock), as shmsched_approval_* (issue 38): asks
 * posted, and each decision: a manager's grant, deny or not-before, or a
 * deadline passed unanswered (fail-open: evicted; fail-closed: kept). */
static size_t approval_metrics_text(const struct producers *p, char *buf,
				    size_t len)
{
	struct approval_stats st;
	approval_stats(p->approval, &st);
	struct quota_text o = {.buf = buf, .len = len};
	quota_text_put(&o, "# HELP shmsched_approval_registrations Managers "
		       "registered to approve disruptions (OP_APPROVAL) now.\n"
		       "# TYPE shmsched_approval_registrations gauge\n"
		       "shmsched_approval_registrations %" PRIu32 "\n",
		       st.registrations);
	quota_text_put(&o, "# HELP shmsched_approval_asks_total Asks posted to "
		       "approving managers (a denied pod asked again counts "
		       "again).\n# TYPE shmsched_approval_asks_total counter\n"
		       "shmsched_approval_asks_total %" PRIu64 "\n", st.asked);
	quota_text_put(&o, "# HELP shmsched_approval_decisions_total Approving "
		       "managers' answers (grant, deny, not_before), and deadlines "
		       "passed unanswered (deadline_open: evicted, fail-open; "
		       "deadline_closed: kept, fail-closed).\n"
		       "# TYPE shmsched_approval_decisions_total counter\n");
	const char *const dec[] = {"grant", "deny", "not_before", "deadline_open",
				   "deadline_closed"};
	const uint64_t v[] = {st.granted, st.denied, st.not_before,
			      st.timed_out_open, st.timed_out_closed};
	for (unsigned i = 0; i < 5; i++) {
		quota_text_put(&o, "shmsched_approval_decisions_total{");
		quota_text_label(&o, "decision", dec[i], false);
		quota_text_put(&o, "} %" PRIu64 "\n", v[i]);
	}
	quota_text_put(&o, "# HELP shmsched_approval_by_asker_total The same by "
		       "asker (drain, reclaim: quota reclaim, preemption): asks "
		       "posted (asked) and each decision.\n"
		       "# TYPE shmsched_approval_by_asker_total counter\n");
	const char *const who[APPROVAL_ASKERS] = {"drain", "reclaim", "preemption"};
	for (unsigned k = 0; k < APPROVAL_ASKERS; k++) {
		const struct approval_counts *c = &st.by_asker[k];
		const uint64_t e[] = {c->asked, c->granted, c->denied, c->not_before,
				      c->timed_out_open, c->timed_out_closed};
		for (unsigned i = 0; i < 6; i++) {
			quota_text_put(&o, "shmsched_approval_by_asker_total{");
			quota_text_label(&o, "asker", who[k], false);
			quota_text_label(&o, "event", i == 0 ? "asked" : dec[i - 1],
					 true);
			quota_text_put(&o, "} %" PRIu64 "\n", e[i]);
		}
	}
	return o.used;
}

/* The approvals' counts, then the daemon's text, into buf[0..len) as
 * snprintf writes: returns the bytes the whole text needs. */
static size_t metrics_build(const struct producers *p, char *buf, size_t len)
{
	size_t used = approval_metrics_text(p, buf, len);
	if (p->metrics != NULL) {
		size_t left = used < len ? len - used : 0;
		used += p->metrics(p->metrics_arg, left ? buf + used : NULL, left);
	}
	return used;
}

/* A text of `used` bytes written into buf[0..room) (room + CUT_LINE_MAX
 * there), cut after its last whole line within room, and a comment line
 * saying how much more there was (`why`). Returns the bytes kept. */
#define CUT_LINE_MAX 96
static size_t metrics_cut(char *buf, size_t room, size_t used, const char *why)
{
	size_t keep = room - 1;
	while (keep > 0 && buf[keep - 1] != '\n')
		keep--;
	return keep + (size_t)snprintf(buf + keep, CUT_LINE_MAX, "# %zu more bytes "
				       "not shown (%s)\n", used - keep, why);
}

/* The whole text into a malloc'ed *out, sized by `need` (the bytes a
 * pass needed) plus an eighth for counters grown meanwhile (under the
 * producers' lock nothing else changes); built again when it did not fit
 * after all, at most once; cut at OP_QUEUE_METRICS_MAX_BYTES. Returns its
 * length, *out NULL without memory. */
static size_t metrics_whole(const struct producers *p, size_t need, char **out)
{
	size_t used = 0;
	*out = NULL;
	for (int pass = 0; pass < 2; pass++) {
		size_t size = need + need / 8 + 4096;
		if (size > OP_QUEUE_METRICS_MAX_BYTES)
			size = OP_QUEUE_METRICS_MAX_BYTES;
		free(*out);
		*out = malloc(size);
		if (*out == NULL)
			return 0;
		size_t room = size - CUT_LINE_MAX;
		used = metrics_build(p, *out, room);
		if (used < room)
			break;
		if (pass == 1 || size == OP_QUEUE_METRICS_MAX_BYTES) {
			used = metrics_cut(*out, room, used, "past the answer's bound "
					   "of 64 MiB");
			break;
		}
		need = used;
	}
	return used;
}

/* OP_QUEUE_METRICS: the approvals' counts, then the daemon's text; inline
 * when it fits one answer (as before the memfd existed: an older reader
 * sees the same answer), otherwise whole in a sealed memfd, or cut at a
 * line's end (the cut counted in a comment line) when no memfd can be
 * had. Cost on the control thread: one pass writing the text; a text past
 * one answer is written once into a buffer sized by the last request's
 * (`last_need`; its first time, or past an eighth more, once more), then
 * into the memfd. 1,000 ClusterQueues: ~1.4 MB, ~225 M instructions a
 * pass (docs/perf/2026-11-29-metrics-memfd.md). */
static void queue_metrics(struct producers *p, struct control_server *s,
			  uint64_t conn, uint32_t rid, uint32_t len)
{
	static char out[CONTROL_MAX_PAYLOAD];
	static size_t last_need; /* the control thread's only */
	if (len != 0) {
		control_server_reply_error(s, conn, rid, EPROTO, "queue metrics: a "
					   "body of %u bytes; expected none", len);
		return;
	}
	struct op_queue_shown h = {0};
	if (p->queues != NULL) {
		h.objects = (uint32_t)p->queues->n;
		for (int n = 0; n < quota_n_nodes(p->queues->tree); n++)
			h.cluster_queues += !quota_node_is_cohort(p->queues->tree, n);
	}
	char *text = out + sizeof(h);
	size_t room = sizeof(out) - sizeof(h) - CUT_LINE_MAX;
	size_t used = 0;
	int fd = -1;
	if (last_need < room)
		used = metrics_build(p, text, room);
	if (last_need >= room || used >= room) {
		char *whole;
		size_t n = metrics_whole(p, used > last_need ? used : last_need,
					 &whole);
		if (whole != NULL && n >= room)
			fd = sealed_text_create("shmsched-metrics", whole, n);
		if (fd >= 0) {
			h.fd_bytes = (uint32_t)n;
			used = 0;
		} else if (whole != NULL) {
			/* Fits after all (a smaller tree), or no memfd. */
			memcpy(text, whole, n < room ? n : room);
			used = n < room ? n : metrics_cut(text, room, n,
							  "one answer's room");
		} else {
			n = metrics_build(p, text, room);
			used = n < room ? n : metrics_cut(text, room, n,
							  "one answer's room");
		}
		free(whole);
		last_need = n;
	} else {
		last_need = used;
	}
	h.text_bytes = (uint32_t)used;
	memcpy(out, &h, sizeof(h));
	control_server_reply(s, conn, rid, out, (uint32_t)(sizeof(h) + used), fd);
	if (fd >= 0)
		close(fd);
}

void prod_handle_queue(struct producers *p, struct control_server *s,
		       uint64_t conn, uint32_t rid, uint32_t action,
		       const void *body, uint32_t len)
{
	static char err[1024];
	struct prod_queues *q = p->queues;
	struct producers_queue_carried c = {0};
	int rc = 0;
	err[0] = '\0';
	if (action == OP_QUEUE_METRICS) {
		queue_metrics(p, s, conn, rid, len);
		return;
	}
	if (q == NULL) {
		control_server_reply_error(s, conn, rid, ENOTSUP, "queue: the daemon "
					   "was started without Kueue objects in its "
					   "cluster file (shmschedd --cluster), or with "
					   "quotas its embedding program gave: there are "
					   "none to change (start it with at least one "
					   "ResourceFlavor in the cluster file)");
		return;
	}
	if (action == OP_QUEUE_APPLY)
		rc = do_apply(q, body, len, &c, err, sizeof(err));
	else if (action == OP_QUEUE_DELETE)
		rc = do_delete(q, body, len, &c, err, sizeof(err));
	else if (action != OP_QUEUE_LIST)
		rc = errmsg_rc(-EINVAL, err, sizeof(err), "queue: action %u; expected "
			       "0 (list), 1 (apply), 2 (delete) or 3 (metrics)",
			       action);
	else if (len != 0)
		rc = errmsg_rc(-EPROTO, err, sizeof(err), "queue list: a body of %u "
			       "bytes; expected none", len);
	if (rc < 0) {
		control_server_reply_error(s, conn, rid, -rc, "%s", err);
		return;
	}
	static char out[CONTROL_MAX_PAYLOAD];
	struct op_queue_shown h = {.objects = (uint32_t)q->n,
				   .carried = c.carried, .dropped = c.dropped};
	struct report r = {.buf = out + sizeof(h), .cap = sizeof(out) - sizeof(h) - 64};
	if (action != OP_QUEUE_LIST) {
		say(&r, "%s: %u Kueue object(s) in force; %" PRIu64 " live "
		    "placement(s) charged again to their ClusterQueues", action ==
		    OP_QUEUE_APPLY ? "applied" : "deleted", h.objects, c.carried);
		if (c.dropped > 0)
			say(&r, "; %" PRIu64 " stay placed charged to nothing (their "
			    "ClusterQueue, e.g. \"%s\", or its flavor is gone or no "
			    "longer covers what they hold)", c.dropped, c.first_dropped);
		say(&r, "\n");
		log_msg(LOG_LEVEL_INFO, "queue: %s", r.buf);
	}
	h.cluster_queues = list_queues(q->tree, &r);
	if (r.cut > 0) {
		r.cut--;
		r.len += (size_t)snprintf(r.buf + r.len, 64, "... %u more line(s)\n", r.cut);
	}
	h.text_bytes = (uint32_t)r.len;
	memcpy(out, &h, sizeof(h));
	control_server_reply(s, conn, rid, out, (uint32_t)(sizeof(h) + r.len), -1);
}

int producers_with_lock(struct producers *p, int (*fn)(void *arg), void *arg)
{
	pthread_mutex_lock(&p->lock);
	int rc = fn(arg);
	pthread_mutex_unlock(&p->lock);
	return rc;
}
