/* The policy (policy/policy.h): a strict JSON reader, and matching.
 *
 * Reading: jansson parses the whole text (duplicate keys refused), then
 * one walk checks every field against its table of known names and its
 * bounds, building plain arrays; the JSON tree is dropped. A message names
 * the source, the JSON path ($.rules[2].namespaces[0]), the value (cut
 * and escaped) and what was expected.
 *
 * Matching: a rule is found by a scan of at most POLICY_RULES_MAX rules;
 * each list is at most POLICY_LIST_MAX patterns, each compared with one
 * memcmp. Nothing here allocates after policy_parse.
 */
#include "policy/policy.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "base/base.h"

struct plist {
	uint32_t n;
	char **v;
};

struct policy_rule {
	uint32_t index;
	bool has_uids, has_names, has_users, has_disrupt;
	uint32_t n_uids;
	uint32_t uids[POLICY_LIST_MAX];
	struct plist names, users, namespaces, classes, disrupt;
	bool disrupt_any; /* "*" among disruptNamespaces (or namespaces) */
};

struct policy {
	char *source;
	char *text;
	size_t len;
	uint32_t n;
	struct policy_rule *rules;
};

/* --- reading ---------------------------------------------------------------- */

struct reader {
	const char *source;
	char path[128];
	char *err;
	size_t err_len;
};

/* A value for a message: a string quoted with bytes outside printable
 * ASCII as '?', cut at 64 characters; another value by its type. */
static const char *show(const json_t *v, char *buf, size_t len)
{
	if (json_is_string(v)) {
		const char *s = json_string_value(v);
		size_t n = json_string_length(v), at = 0;
		buf[at++] = '"';
		for (size_t i = 0; i < n && at + 5 < len && i < 64; i++)
			buf[at++] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
		if (n > 64 && at + 5 < len) {
			memcpy(buf + at, "...", 3);
			at += 3;
		}
		buf[at++] = '"';
		buf[at] = '\0';
		return buf;
	}
	switch (json_typeof(v)) {
	case JSON_OBJECT: return "an object";
	case JSON_ARRAY: return "an array";
	case JSON_INTEGER:
		snprintf(buf, len, "%lld", (long long)json_integer_value(v));
		return buf;
	case JSON_REAL: return "a number with a fraction";
	case JSON_TRUE: return "true";
	case JSON_FALSE: return "false";
	case JSON_NULL: return "null";
	case JSON_STRING: break;
	}
	return "a value";
}

static int bad(struct reader *rd, const json_t *v, const char *expected)
{
	char q[80];
	if (v == NULL)
		return errmsg_rc(-EINVAL, rd->err, rd->err_len, "%s: %s: missing; "
				 "expected %s", rd->source, rd->path, expected);
	return errmsg_rc(-EINVAL, rd->err, rd->err_len, "%s: %s: %s; expected %s",
			 rd->source, rd->path, show(v, q, sizeof(q)), expected);
}

/* Appends ".key" or "[i]" to the path; returns the length to restore. */
static size_t path_key(struct reader *rd, const char *key)
{
	size_t at = strlen(rd->path);
	snprintf(rd->path + at, sizeof(rd->path) - at, ".%s", key);
	return at;
}

static size_t path_index(struct reader *rd, size_t i)
{
	size_t at = strlen(rd->path);
	snprintf(rd->path + at, sizeof(rd->path) - at, "[%zu]", i);
	return at;
}

static void path_pop(struct reader *rd, size_t at)
{
	rd->path[at] = '\0';
}

static bool alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

/* [a-z0-9-] (and '.' when `dots`), first alphanumeric; `whole`: the last
 * too. */
static bool dns_chars(const char *s, size_t len, bool dots, bool whole)
{
	if (len == 0 || !alnum(s[0]) || (whole && !alnum(s[len - 1])))
		return false;
	for (size_t i = 0; i < len; i++)
		if (!alnum(s[i]) && s[i] != '-' && !(dots && s[i] == '.'))
			return false;
	return true;
}

/* "*", a name of at most `max` characters, or a prefix of one ending '*'. */
static bool pattern_ok(const char *s, size_t len, size_t max, bool dots)
{
	if (len == 1 && s[0] == '*')
		return true;
	if (len > 1 && s[len - 1] == '*')
		return len - 1 < max && dns_chars(s, len - 1, dots, false);
	return len <= max && dns_chars(s, len, dots, true);
}

enum list_kind { L_NAMES, L_USERS, L_NAMESPACES, L_CLASSES };

static const char *const list_expected[] = {
	[L_NAMES] = "a registered producer name of at most 63 bytes, or \"*\" "
		    "(any name)",
	[L_USERS] = "a user name of 1 to 255 bytes, or \"*\" (any authenticated "
		    "user)",
	[L_NAMESPACES] = "a namespace (a DNS-1123 label of at most 63 characters: "
			 "a-z, 0-9 and '-', starting and ending alphanumeric), a "
			 "prefix of one ending in '*', or \"*\"",
	[L_CLASSES] = "a PriorityClass name (a DNS-1123 subdomain of at most 253 "
		      "characters), a prefix of one ending in '*', or \"*\"",
};

static int read_entry(struct reader *rd, enum list_kind k, const json_t *v)
{
	if (!json_is_string(v))
		return bad(rd, v, list_expected[k]);
	const char *s = json_string_value(v);
	size_t len = json_string_length(v);
	bool ok = false;
	switch (k) {
	case L_NAMES: ok = len <= POLICY_NAME_MAX; break;
	case L_USERS: ok = len >= 1 && len <= POLICY_USER_MAX; break;
	case L_NAMESPACES: ok = pattern_ok(s, len, POLICY_NAMESPACE_MAX, false); break;
	case L_CLASSES:
		ok = pattern_ok(s, len, POLICY_CLASS_MAX, true);
		if (ok && len > 1 && s[len - 1] == '*' &&
		    strncmp(s, POLICY_SYSTEM_PREFIX, strlen(POLICY_SYSTEM_PREFIX)) == 0)
			return bad(rd, v, "a system- class by its exact name (a "
				   "pattern never grants one)");
		break;
	}
	return ok ? 0 : bad(rd, v, list_expected[k]);
}

static int read_list(struct reader *rd, enum list_kind k, const json_t *arr,
		     struct plist *out)
{
	if (!json_is_array(arr) || json_array_size(arr) > POLICY_LIST_MAX) {
		char what[320];
		snprintf(what, sizeof(what), "an array of at most %u entries, each %s",
			 POLICY_LIST_MAX, list_expected[k]);
		return bad(rd, arr, what);
	}
	size_t n = json_array_size(arr);
	out->v = calloc(n ? n : 1, sizeof(*out->v));
	if (out->v == NULL)
		return errmsg_rc(-ENOMEM, rd->err, rd->err_len, "%s: out of memory",
				 rd->source);
	for (size_t i = 0; i < n; i++) {
		const json_t *v = json_array_get(arr, i);
		size_t mark = path_index(rd, i);
		int rc = read_entry(rd, k, v);
		path_pop(rd, mark);
		if (rc < 0)
			return rc;
		out->v[i] = strdup(json_string_value(v));
		if (out->v[i] == NULL)
			return errmsg_rc(-ENOMEM, rd->err, rd->err_len,
					 "%s: out of memory", rd->source);
		out->n++;
	}
	return 0;
}

static int read_uids(struct reader *rd, const json_t *arr, struct policy_rule *r)
{
	static const char expected[] = "an array of at most 64 uids, each an "
				       "integer 0..4294967294";
	if (!json_is_array(arr) || json_array_size(arr) > POLICY_LIST_MAX)
		return bad(rd, arr, expected);
	for (size_t i = 0; i < json_array_size(arr); i++) {
		const json_t *v = json_array_get(arr, i);
		size_t mark = path_index(rd, i);
		if (!json_is_integer(v) || json_integer_value(v) < 0 ||
		    json_integer_value(v) >= (json_int_t)UINT32_MAX) {
			int rc = bad(rd, v, "a uid: an integer 0..4294967294");
			path_pop(rd, mark);
			return rc;
		}
		path_pop(rd, mark);
		r->uids[r->n_uids++] = (uint32_t)json_integer_value(v);
	}
	return 0;
}

static bool has_any(const struct plist *l)
{
	for (uint32_t i = 0; i < l->n; i++)
		if (strcmp(l->v[i], "*") == 0)
			return true;
	return false;
}

static const char rule_fields[] = "uids, names, users, namespaces, "
				  "priorityClasses or disruptNamespaces";

static int read_rule(struct reader *rd, const json_t *obj, uint32_t index,
		     struct policy_rule *r)
{
	r->index = index;
	if (!json_is_object(obj))
		return bad(rd, obj, "a rule: an object with namespaces, "
			   "priorityClasses and uids or users");
	const char *key;
	json_t *v;
	json_object_foreach((json_t *)obj, key, v) {
		size_t mark = path_key(rd, key);
		int rc;
		if (strcmp(key, "uids") == 0) {
			r->has_uids = true;
			rc = read_uids(rd, v, r);
		} else if (strcmp(key, "names") == 0) {
			r->has_names = true;
			rc = read_list(rd, L_NAMES, v, &r->names);
		} else if (strcmp(key, "users") == 0) {
			r->has_users = true;
			rc = read_list(rd, L_USERS, v, &r->users);
		} else if (strcmp(key, "namespaces") == 0) {
			rc = read_list(rd, L_NAMESPACES, v, &r->namespaces);
		} else if (strcmp(key, "priorityClasses") == 0) {
			rc = read_list(rd, L_CLASSES, v, &r->classes);
		} else if (strcmp(key, "disruptNamespaces") == 0) {
			r->has_disrupt = true;
			rc = read_list(rd, L_NAMESPACES, v, &r->disrupt);
		} else {
			rc = errmsg_rc(-EINVAL, rd->err, rd->err_len, "%s: %s: unknown "
				       "field; expected %s", rd->source, rd->path,
				       rule_fields);
		}
		path_pop(rd, mark);
		if (rc < 0)
			return rc;
	}
	if (!r->has_uids && !r->has_users)
		return errmsg_rc(-EINVAL, rd->err, rd->err_len, "%s: %s: neither "
				 "uids nor users: the rule would match nobody; "
				 "expected one of them", rd->source, rd->path);
	if (r->has_names && !r->has_uids)
		return errmsg_rc(-EINVAL, rd->err, rd->err_len, "%s: %s.names: "
				 "without uids; expected uids with names (a local "
				 "producer is its uid and its name)", rd->source,
				 rd->path);
	r->disrupt_any = has_any(r->has_disrupt ? &r->disrupt : &r->namespaces);
	return 0;
}

static int read_policy(struct reader *rd, const json_t *root, struct policy *pol)
{
	if (!json_is_object(root))
		return bad(rd, root, "an object with apiVersion, kind and rules");
	const char *key;
	json_t *v;
	json_object_foreach((json_t *)root, key, v) {
		if (strcmp(key, "apiVersion") != 0 && strcmp(key, "kind") != 0 &&
		    strcmp(key, "rules") != 0) {
			size_t mark = path_key(rd, key);
			int rc = errmsg_rc(-EINVAL, rd->err, rd->err_len, "%s: %s: "
					   "unknown field; expected apiVersion, kind "
					   "or rules", rd->source, rd->path);
			path_pop(rd, mark);
			return rc;
		}
	}
	int rc = 0;
	size_t mark = path_key(rd, "apiVersion");
	v = json_object_get(root, "apiVersion");
	if (!json_is_string(v) || strcmp(json_string_value(v), POLICY_API_VERSION) != 0)
		rc = bad(rd, v, "\"" POLICY_API_VERSION "\"");
	path_pop(rd, mark);
	if (rc < 0)
		return rc;
	mark = path_key(rd, "kind");
	v = json_object_get(root, "kind");
	if (!json_is_string(v) || strcmp(json_string_value(v), POLICY_KIND) != 0)
		rc = bad(rd, v, "\"" POLICY_KIND "\"");
	path_pop(rd, mark);
	if (rc < 0)
		return rc;
	mark = path_key(rd, "rules");
	v = json_object_get(root, "rules");
	if (!json_is_array(v) || json_array_size(v) > POLICY_RULES_MAX) {
		rc = bad(rd, v, "an array of at most 256 rules");
		path_pop(rd, mark);
		return rc;
	}
	size_t n = json_array_size(v);
	pol->rules = calloc(n ? n : 1, sizeof(*pol->rules));
	if (pol->rules == NULL) {
		path_pop(rd, mark);
		return errmsg_rc(-ENOMEM, rd->err, rd->err_len, "%s: out of memory",
				 rd->source);
	}
	for (size_t i = 0; i < n && rc == 0; i++) {
		size_t at = path_index(rd, i);
		pol->n++; /* counted before it is filled: policy_free frees its parts */
		rc = read_rule(rd, json_array_get(v, i), (uint32_t)i, &pol->rules[i]);
		path_pop(rd, at);
	}
	path_pop(rd, mark);
	return rc;
}

int policy_parse(const char *text, size_t len, const char *source,
		 struct policy **out, char *err, size_t err_len)
{
	*out = NULL;
	if (source == NULL)
		source = "policy";
	if (len > POLICY_BYTES_MAX)
		return errmsg_rc(-E2BIG, err, err_len, "%s: %zu bytes; a policy is "
				 "at most %u bytes", source, len, POLICY_BYTES_MAX);
	struct policy *pol = calloc(1, sizeof(*pol));
	if (pol != NULL) {
		pol->source = strdup(source);
		pol->text = malloc(len ? len : 1);
	}
	if (pol == NULL || pol->source == NULL || pol->text == NULL) {
		policy_free(pol);
		return errmsg_rc(-ENOMEM, err, err_len, "%s: out of memory", source);
	}
	memcpy(pol->text, text, len);
	pol->len = len;
	json_error_t jerr;
	json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	if (root == NULL) {
		policy_free(pol);
		return errmsg_rc(-EINVAL, err, err_len, "%s:%d:%d: %s; expected a "
				 "policy as JSON", source, jerr.line, jerr.column,
				 jerr.text);
	}
	struct reader rd = {.source = source, .path = "$", .err = err,
			    .err_len = err_len};
	int rc = read_policy(&rd, root, pol);
	json_decref(root);
	if (rc < 0) {
		policy_free(pol);
		return rc;
	}
	*out = pol;
	return 0;
}

int policy_load_file(const char *path, struct policy **out, char *err,
		     size_t err_len)
{
	*out = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errmsg_rc(-errno, err, err_len, "policy %s: %s", path,
				 strerror(errno));
	char *buf = malloc(POLICY_BYTES_MAX + 1);
	size_t n = 0;
	int rc = buf == NULL ? -ENOMEM : 0;
	while (rc == 0 && n < POLICY_BYTES_MAX + 1) {
		ssize_t got = read(fd, buf + n, POLICY_BYTES_MAX + 1 - n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			rc = -errno;
		else if (got == 0)
			break;
		else
			n += (size_t)got;
	}
	close(fd);
	if (rc < 0) {
		free(buf);
		return errmsg_rc(rc, err, err_len, "policy %s: %s", path,
				 strerror(-rc));
	}
	if (n > POLICY_BYTES_MAX) {
		free(buf);
		return errmsg_rc(-E2BIG, err, err_len, "policy %s: longer than %u "
				 "bytes, the most a policy has", path,
				 POLICY_BYTES_MAX);
	}
	rc = policy_parse(buf, n, path, out, err, err_len);
	free(buf);
	return rc;
}

static void plist_free(struct plist *l)
{
	for (uint32_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
}

void policy_free(struct policy *pol)
{
	if (pol == NULL)
		return;
	for (uint32_t i = 0; i < pol->n; i++) {
		struct policy_rule *r = &pol->rules[i];
		plist_free(&r->names);
		plist_free(&r->users);
		plist_free(&r->namespaces);
		plist_free(&r->classes);
		plist_free(&r->disrupt);
	}
	free(pol->rules);
	free(pol->text);
	free(pol->source);
	free(pol);
}

const char *policy_source(const struct policy *pol)
{
	return pol->source;
}

const char *policy_text(const struct policy *pol, size_t *len)
{
	*len = pol->len;
	return pol->text;
}

uint32_t policy_rules(const struct policy *pol)
{
	return pol->n;
}

/* --- matching --------------------------------------------------------------- */

static bool pattern_match(const char *pat, const char *s, size_t len)
{
	size_t plen = strlen(pat);
	if (plen > 0 && pat[plen - 1] == '*')
		return len >= plen - 1 && memcmp(s, pat, plen - 1) == 0;
	return plen == len && memcmp(s, pat, len) == 0;
}

static bool list_match(const struct plist *l, const char *s, size_t len)
{
	for (uint32_t i = 0; i < l->n; i++)
		if (pattern_match(l->v[i], s, len))
			return true;
	return false;
}

/* Names: "*" is any name; otherwise exact (a name may hold '*'). */
static bool name_match(const struct plist *l, const char *s)
{
	for (uint32_t i = 0; i < l->n; i++)
		if (strcmp(l->v[i], "*") == 0 || strcmp(l->v[i], s) == 0)
			return true;
	return false;
}

const struct policy_rule *policy_find_local(const struct policy *pol, uid_t uid,
					    const char *name)
{
	for (uint32_t i = 0; pol != NULL && i < pol->n; i++) {
		const struct policy_rule *r = &pol->rules[i];
		bool uid_in = false;
		for (uint32_t k = 0; k < r->n_uids && !uid_in; k++)
			uid_in = r->uids[k] == (uint32_t)uid;
		if (uid_in && (!r->has_names || name_match(&r->names, name)))
			return r;
	}
	return NULL;
}

const struct policy_rule *policy_find_user(const struct policy *pol,
					   const char *user)
{
	if (user == NULL || *user == '\0')
		return NULL;
	for (uint32_t i = 0; pol != NULL && i < pol->n; i++)
		if (name_match(&pol->rules[i].users, user))
			return &pol->rules[i];
	return NULL;
}

uint32_t policy_rule_index(const struct policy_rule *r)
{
	return r->index;
}

bool policy_allows_namespace(const struct policy_rule *r, const char *ns, size_t len)
{
	return r != NULL && list_match(&r->namespaces, ns, len);
}

bool policy_class_is_system(const char *cls)
{
	return strncmp(cls, POLICY_SYSTEM_PREFIX, strlen(POLICY_SYSTEM_PREFIX)) == 0;
}

bool policy_allows_priority_class(const struct policy_rule *r, const char *cls)
{
	if (r == NULL)
		return false;
	if (!policy_class_is_system(cls))
		return list_match(&r->classes, cls, strlen(cls));
	for (uint32_t i = 0; i < r->classes.n; i++)
		if (strcmp(r->classes.v[i], cls) == 0)
			return true;
	return false;
}

bool policy_allows_disrupt(const struct policy_rule *r, const char *ns, size_t len)
{
	if (r == NULL)
		return false;
	return list_match(r->has_disrupt ? &r->disrupt : &r->namespaces, ns, len);
}

bool policy_disrupts_any(const struct policy_rule *r)
{
	return r != NULL && r->disrupt_any;
}

/* --- narrowing scopes ------------------------------------------------------- */

struct policy_scope {
	struct plist list;
	char *text; /* the patterns joined by ',', NUL-terminated */
};

void policy_scope_free(struct policy_scope *s)
{
	if (s == NULL)
		return;
	plist_free(&s->list);
	free(s->text);
	free(s);
}

int policy_scope_parse(const char *text, size_t len, struct policy_scope **out,
		       char *err, size_t err_len)
{
	*out = NULL;
	if (text == NULL && len > 0)
		return errmsg_rc(-EINVAL, err, err_len, "disrupt scope: NULL text");
	if (len > POLICY_SCOPE_BYTES_MAX)
		return errmsg_rc(-E2BIG, err, err_len, "disrupt scope of %zu bytes: "
				 "expected at most %u", len, POLICY_SCOPE_BYTES_MAX);
	struct policy_scope *s = calloc(1, sizeof(*s));
	int rc = -ENOMEM;
	if (s == NULL || (s->text = malloc(len + 1)) == NULL ||
	    (s->list.v = calloc(POLICY_LIST_MAX, sizeof(*s->list.v))) == NULL)
		goto fail_nomem;
	if (len > 0)
		memcpy(s->text, text, len);
	s->text[len] = '\0';
	for (size_t at = 0; len > 0 && at <= len;) {
		const char *p = s->text + at;
		const char *comma = memchr(p, ',', len - at);
		size_t n = comma != NULL ? (size_t)(comma - p) : len - at;
		if (s->list.n == POLICY_LIST_MAX) {
			rc = errmsg_rc(-E2BIG, err, err_len, "disrupt scope: more than "
				       "%u patterns", POLICY_LIST_MAX);
			goto fail;
		}
		if (!pattern_ok(p, n, POLICY_NAMESPACE_MAX, false)) {
			char shown[80];
			size_t k = n < 64 ? n : 64;
			for (size_t i = 0; i < k; i++)
				shown[i] = p[i] >= 0x20 && p[i] < 0x7f ? p[i] : '?';
			shown[k] = '\0';
			rc = errmsg_rc(-EINVAL, err, err_len, "disrupt scope: pattern %u "
				       "\"%s%s\": expected %s", s->list.n, shown,
				       n > k ? "..." : "", list_expected[L_NAMESPACES]);
			goto fail;
		}
		if ((s->list.v[s->list.n] = strndup(p, n)) == NULL)
			goto fail_nomem;
		s->list.n++;
		at += n + 1;
	}
	*out = s;
	return 0;

fail_nomem:
	rc = errmsg_rc(-ENOMEM, err, err_len, "disrupt scope: out of memory");
fail:
	policy_scope_free(s);
	return rc;
}

bool policy_scope_allows(const struct policy_scope *s, const char *ns, size_t len)
{
	return s != NULL && list_match(&s->list, ns, len);
}

const char *policy_scope_text(const struct policy_scope *s)
{
	return s != NULL ? s->text : "";
}

int policy_rule_disrupt_text(const struct policy_rule *r, char *buf, size_t len)
{
	if (len == 0)
		return -ENOSPC;
	buf[0] = '\0';
	if (r == NULL)
		return 0;
	const struct plist *l = r->has_disrupt ? &r->disrupt : &r->namespaces;
	size_t at = 0;
	for (uint32_t i = 0; i < l->n; i++) {
		size_t n = strlen(l->v[i]);
		if (at + (i > 0) + n + 1 > len) {
			buf[0] = '\0';
			return -ENOSPC;
		}
		if (i > 0)
			buf[at++] = ',';
		memcpy(buf + at, l->v[i], n);
		at += n;
		buf[at] = '\0';
	}
	return (int)at;
}

int policy_admit(const struct policy *pol, const struct policy_rule *r,
		 bool admin, const char *who, const char *ns, const char *cls,
		 char *why, size_t why_len)
{
	if (admin)
		return 0;
	bool named = cls != NULL && *cls != '\0';
	if (pol == NULL) {
		if (named && policy_class_is_system(cls))
			return errmsg_rc(-EPERM, why, why_len, "%s: spec.priorityClassName "
					 "\"%s\": a system- PriorityClass; without a "
					 "policy (shmschedd --policy) only an admin "
					 "connection may name one", who, cls);
		return 0;
	}
	if (r == NULL)
		return errmsg_rc(-EPERM, why, why_len, "%s: no rule of the policy %s "
				 "matches it: it may place no pod", who, pol->source);
	if (!policy_allows_namespace(r, ns, strlen(ns)))
		return errmsg_rc(-EPERM, why, why_len, "%s: metadata.namespace \"%s\": "
				 "not among its namespaces (policy %s, rule %u)", who,
				 ns, pol->source, r->index);
	if (named && !policy_allows_priority_class(r, cls))
		return errmsg_rc(-EPERM, why, why_len, "%s: spec.priorityClassName "
				 "\"%s\": not among its priorityClasses%s (policy %s, "
				 "rule %u)", who, cls, policy_class_is_system(cls)
				 ? " (a system- class is granted by its exact name only)"
				 : "", pol->source, r->index);
	return 0;
}

int policy_admit_user(const struct policy *pol, const char *user, const char *ns,
		      const char *cls, char *why, size_t why_len)
{
	char who[POLICY_USER_MAX + 16];
	snprintf(who, sizeof(who), "user \"%s\"", user != NULL ? user : "");
	return policy_admit(pol, policy_find_user(pol, user), false, who, ns, cls,
			    why, why_len);
}
