/* A label selector over the placements' pod groups (kubectl drain's
 * --pod-selector): equality-based terms joined by ',': key=value,
 * key==value, key!=value (also true without the key), key, !key; all
 * must hold. Names the string table does not hold select nothing (an
 * equality) or everything (an inequality): no pod has them. Used by the
 * drain (ingest/producers_drain.c) and by the managers' registrations
 * (ingest/producers_approval.c). A parse resolves names against the
 * table as it is then: parse again for names interned later. On the
 * control thread, under the producers' lock.
 */
#include "ingest/producers_internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/base.h"
#include "shm/shm.h"

enum prod_sel_op { DSEL_EQ, DSEL_NE, DSEL_EXISTS, DSEL_ABSENT };

static void trim(const char **s, size_t *len)
{
	while (*len > 0 && (**s == ' ' || **s == '\t')) {
		(*s)++;
		(*len)--;
	}
	while (*len > 0 && ((*s)[*len - 1] == ' ' || (*s)[*len - 1] == '\t'))
		(*len)--;
}

int prod_selector_parse(const struct producers *p, const char *what,
			const char *s, size_t len, struct prod_selector *out,
			char *err, size_t err_len)
{
	out->n = 0;
	if (len == 0)
		return 0;
	const char *end = s + len;
	for (const char *at = s; at <= end;) {
		const char *comma = memchr(at, ',', (size_t)(end - at));
		const char *stop = comma ? comma : end;
		const char *term = at, *key = at, *val = NULL;
		size_t tlen = (size_t)(stop - at), klen = tlen, vlen = 0;
		struct prod_selector_term t = {.op = DSEL_EXISTS};
		const char *eq = memchr(term, '=', tlen);
		if (eq != NULL) {
			klen = (size_t)(eq - term);
			val = eq + 1;
			t.op = DSEL_EQ;
			if (klen > 0 && term[klen - 1] == '!') {
				klen--;
				t.op = DSEL_NE;
			} else if (val < stop && *val == '=') {
				val++;
			}
			vlen = (size_t)(stop - val);
			trim(&val, &vlen);
		}
		trim(&key, &klen);
		if (t.op == DSEL_EXISTS && klen > 0 && *key == '!') {
			key++;
			klen--;
			t.op = DSEL_ABSENT;
			trim(&key, &klen);
		}
		if (klen == 0 || out->n == PROD_SELECTOR_TERMS_MAX ||
		    memchr(key, '!', klen) != NULL ||
		    (val != NULL && memchr(val, '=', vlen) != NULL)) {
			snprintf(err, err_len, "%s \"%.*s\": term %u \"%.*s\": %s",
				 what, (int)(len > 200 ? 200 : len), s,
				 out->n + 1, (int)(tlen > 100 ? 100 : tlen), term,
				 out->n == PROD_SELECTOR_TERMS_MAX ? "more terms than 16" :
				 "expected key=value, key==value, key!=value, key or !key");
			return -EINVAL;
		}
		t.key_known = intern_find(p->strings, key, klen, &t.key);
		if (val != NULL)
			t.value_known = intern_find(p->strings, val, vlen, &t.value);
		out->t[out->n++] = t;
		if (comma == NULL)
			break;
		at = comma + 1;
	}
	return 0;
}

bool prod_selector_matches(const struct producers *p, const struct prod_selector *sel,
			   uint32_t group)
{
	if (sel->n == 0)
		return true;
	static struct pod_group g; /* the control thread's alone */
	const char *s = group != 0 ? intern_str(p->strings, group) : NULL;
	unsigned n_labels = 0;
	if (s != NULL && pod_group_decode(s, intern_len(p->strings, group), &g) == 0)
		n_labels = g.n_labels;
	for (unsigned i = 0; i < sel->n; i++) {
		const struct prod_selector_term *t = &sel->t[i];
		uint32_t v = 0;
		bool has = t->key_known && labels_get(g.labels, n_labels, t->key, &v);
		bool same = has && t->value_known && v == t->value;
		bool ok = t->op == DSEL_EQ ? same : t->op == DSEL_NE ? !same :
			  t->op == DSEL_EXISTS ? has : !has;
		if (!ok)
			return false;
	}
	return true;
}
