/* A pod's namespace and labels between its pod group and a placement's
 * value in etcd: see pod_labels_internal.h.
 *
 * Design: to the value, the group's labels (sorted by key id) are sorted
 * again by their keys' bytes, the order the value's decoder requires, and
 * written "k=v" with single spaces; from the value, the text is split and
 * each key and value interned, then sorted by key id as pod_group_encode
 * requires. Cost: a pod group decode and a sort of at most 64 labels per
 * placement written; the same and up to 129 intern lookups per foreign
 * placement read (not on a worker's pod path but the watch's).
 */
#include "daemon/pod_labels_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct text_label {
	const char *key, *value;
	size_t key_len, value_len;
};

static int by_key_bytes(const void *a, const void *b)
{
	const struct text_label *x = a, *y = b;
	size_t n = x->key_len < y->key_len ? x->key_len : y->key_len;
	int c = memcmp(x->key, y->key, n);
	return c != 0 ? c : (x->key_len > y->key_len) - (x->key_len < y->key_len);
}

int pod_labels_to_value(const struct intern *strings, uint32_t group, struct placement_value *pv)
{
	pv->version = 2;
	pv->ns[0] = pv->labels[0] = '\0';
	pv->n_labels = 0;
	if (group == 0)
		return 0;
	struct pod_group g;
	if (pod_group_decode(intern_str(strings, group), intern_len(strings, group), &g) != 0)
		goto v1;
	size_t ns_len = intern_len(strings, g.ns);
	if (ns_len > PLACEMENT_NS_MAX)
		goto v1;
	memcpy(pv->ns, intern_str(strings, g.ns), ns_len);
	pv->ns[ns_len] = '\0';
	struct text_label t[GROUP_MAX_LABELS];
	unsigned n = g.n_labels < GROUP_MAX_LABELS ? g.n_labels : GROUP_MAX_LABELS;
	for (unsigned i = 0; i < n; i++) {
		t[i] = (struct text_label){intern_str(strings, g.labels[i].key),
					   intern_str(strings, g.labels[i].value),
					   intern_len(strings, g.labels[i].key),
					   intern_len(strings, g.labels[i].value)};
		if (!placement_label_ok(t[i].key, t[i].key_len, t[i].value, t[i].value_len))
			goto v1;
	}
	qsort(t, n, sizeof(t[0]), by_key_bytes);
	size_t at = 0;
	for (unsigned i = 0; i < n; i++) {
		size_t need = (i > 0) + t[i].key_len + 1 + t[i].value_len;
		if (at + need > PLACEMENT_LABELS_MAX)
			goto v1;
		if (i > 0)
			pv->labels[at++] = ' ';
		memcpy(pv->labels + at, t[i].key, t[i].key_len);
		at += t[i].key_len;
		pv->labels[at++] = '=';
		memcpy(pv->labels + at, t[i].value, t[i].value_len);
		at += t[i].value_len;
	}
	pv->labels[at] = '\0';
	pv->n_labels = (uint8_t)n;
	return 0;
v1:
	pv->version = 1;
	pv->ns[0] = pv->labels[0] = '\0';
	pv->n_labels = 0;
	return -E2BIG;
}

static int by_key_id(const void *a, const void *b)
{
	const struct label *x = a, *y = b;
	return (x->key > y->key) - (x->key < y->key);
}

int pod_labels_group(struct intern *strings, const struct placement_value *pv, uint32_t *group)
{
	*group = 0;
	if (pv->version < 2 || (pv->ns[0] == '\0' && pv->n_labels == 0))
		return 0;
	struct pod_group g;
	memset(&g, 0, sizeof(g));
	int rc = pv->ns[0] ? intern_add_str(strings, pv->ns, &g.ns) : 0;
	const char *s = pv->labels;
	while (rc == 0 && *s != '\0' && g.n_labels < GROUP_MAX_LABELS) {
		const char *end = strchr(s, ' ');
		size_t len = end != NULL ? (size_t)(end - s) : strlen(s);
		const char *eq = memchr(s, '=', len);
		if (eq == NULL)
			return -EINVAL; /* not a decoded value */
		struct label *l = &g.labels[g.n_labels++];
		rc = intern_add(strings, s, (size_t)(eq - s), &l->key);
		if (rc == 0)
			rc = intern_add(strings, eq + 1, len - (size_t)(eq - s) - 1, &l->value);
		s += len + (end != NULL);
	}
	if (rc != 0)
		return rc;
	qsort(g.labels, g.n_labels, sizeof(g.labels[0]), by_key_id);
	char enc[GROUP_ENCODED_MAX];
	int n = pod_group_encode(&g, enc, sizeof(enc));
	if (n < 0)
		return n;
	return intern_add(strings, enc, (size_t)n, group);
}
