/* Values at the decoder's path, for every kind of object: strings
 * interned, quantities, resource names and ResourceLists, each refused
 * with the path and the value (base/json_in.h). The floor of the
 * Kubernetes decoder: it calls no other file of it (see k8s_json_load.c's
 * note and k8s_json_internal.h). */
#include "ingest/k8s_json_internal.h"

/* --- strings ------------------------------------------------------------- */

/* Interns `s` found at the current path. */
int kj_intern_here(struct decoder *d, const char *s, size_t len, uint32_t *id)
{
	int rc = intern_add(d->ctx->strings, s, len, id);
	char q[JSON_IN_SHOW_MAX + 16];
	switch (rc) {
	case 0:
		return 0;
	case -E2BIG:
		return json_in_fail(&d->in, -EINVAL, "%s is too long (%zu bytes, at most %u)",
			    json_in_show_str(s, len, q, sizeof(q)), len, INTERN_MAX_LEN);
	case -EINVAL:
		return json_in_fail(&d->in, -EINVAL, "%s holds a NUL byte",
			    json_in_show_str(s, len, q, sizeof(q)));
	case -ENOMEM:
		return json_in_fail(&d->in, rc, "out of memory");
	default:
		return json_in_fail(&d->in, rc, "cannot add %s to the string table (%d)",
			    json_in_show_str(s, len, q, sizeof(q)), rc);
	}
}

/* `v`, which must be a string, interned. */
int kj_string_here(struct decoder *d, const json_t *v, uint32_t *id)
{
	int rc = json_in_check(&d->in, v, JSON_IN_STRING);
	return rc < 0 ? rc : kj_intern_here(d, json_string_value(v),
					 json_string_length(v), id);
}

/* Member `key`, a string, interned; id 0 when absent. */
int kj_get_id(struct decoder *d, const json_t *obj, const char *key, uint32_t *id)
{
	const char *s;
	size_t len;
	*id = 0;
	int rc = json_in_get_str(&d->in, obj, key, &s, &len);
	if (rc < 0 || len == 0)
		return rc;
	size_t mark = json_in_field(&d->in, key);
	rc = kj_intern_here(d, s, len, id);
	json_in_pop(&d->in, mark);
	return rc;
}

/* --- quantities and resources ------------------------------------------ */

/* The value at the current path as a quantity. Quantity.UnmarshalJSON
 * takes a string (trimmed of spaces) or a bare JSON number. */
int kj_quantity_here(struct decoder *d, const json_t *v, enum quantity_unit unit,
			 int64_t *out)
{
	char num[48], q[JSON_IN_SHOW_MAX + 16];
	const char *s;
	size_t len;
	if (json_is_string(v)) {
		s = json_string_value(v);
		len = json_string_length(v);
		while (len > 0 && (s[0] == ' ' || (s[0] >= '\t' && s[0] <= '\r'))) {
			s++;
			len--;
		}
		while (len > 0 && (s[len - 1] == ' ' ||
				   (s[len - 1] >= '\t' && s[len - 1] <= '\r')))
			len--;
	} else if (json_is_integer(v)) {
		snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT,
			 json_integer_value(v));
		s = num;
		len = strlen(num);
	} else if (json_is_real(v)) {
		/* The shortest text that reads back as the same double: what
		 * the file most likely said ("0.1", not 0.1000000000000000055). */
		double x = json_real_value(v);
		for (int prec = 1; prec <= 17; prec++) {
			snprintf(num, sizeof(num), "%.*g", prec, x);
			if (strtod(num, NULL) == x)
				break;
		}
		s = num;
		len = strlen(num);
	} else {
		return json_in_fail(&d->in, -EINVAL, "expected a quantity (a string), got %s",
			    json_in_kind(v));
	}
	int rc = quantity_parse(s, len, unit, out);
	switch (rc) {
	case 0:
		return 0;
	case -ERANGE:
		return json_in_fail(&d->in, -EINVAL, "%s is too large (%s must fit in 64 bits)",
			    json_in_show(v, q, sizeof(q)),
			    unit == QUANTITY_MILLI ? "millicores" : "the value");
	case -EDOM:
		return json_in_fail(&d->in, -EINVAL, "%s is negative", json_in_show(v, q, sizeof(q)));
	default:
		return json_in_fail(&d->in, -EINVAL, "%s is not a quantity", json_in_show(v, q, sizeof(q)));
	}
}

/* The model's index for resource `name` (found at the current path), or -1
 * for a name the model does not keep. hugepages-* and extended resources
 * are registered. */
int kj_resource_here(struct decoder *d, const char *name, size_t len, int *idx)
{
	*idx = res_lookup(d->ctx->res, name, len);
	if (*idx >= 0 || !res_name_is_scalar(name, len))
		return 0;
	char q[JSON_IN_SHOW_MAX + 16];
	if (d->ctx->no_new_resources)
		return json_in_fail(&d->in, -EPERM, "resource %s is not registered: only the "
			    "admin socket registers resource names",
			    json_in_show_str(name, len, q, sizeof(q)));
	int rc = res_register(d->ctx->res, name, len);
	if (rc >= 0) {
		*idx = rc;
		return 0;
	}
	if (rc == -ENOSPC)
		return json_in_fail(&d->in, -ENOSPC, "resource %s: no room for another named "
			    "resource (at most %d besides cpu, memory, "
			    "ephemeral-storage and pods)",
			    json_in_show_str(name, len, q, sizeof(q)),
			    RES_MAX - RES_FIRST_NAMED);
	if (rc == -ENAMETOOLONG)
		return json_in_fail(&d->in, -EINVAL, "resource name %s is longer than %d bytes",
			    json_in_show_str(name, len, q, sizeof(q)), RES_NAME_MAX - 1);
	return json_in_fail(&d->in, rc, "resource %s cannot be registered (%d)",
		    json_in_show_str(name, len, q, sizeof(q)), rc);
}

/* A ResourceList (name -> quantity) at member `key`. For each entry with an
 * index, v[idx] is set and has[idx] marked. Entries the model does not keep
 * are still checked as quantities, as the API server would. */
int kj_resource_list(struct decoder *d, const json_t *obj, const char *key,
			 int64_t v[RES_MAX], bool has[RES_MAX], bool *present)
{
	json_t *list;
	int rc = json_in_get(&d->in, obj, key, JSON_IN_OBJECT, &list);
	if (present != NULL)
		*present = list != NULL;
	if (rc < 0 || list == NULL)
		return rc;
	size_t outer = json_in_field(&d->in, key);
	const char *name;
	json_t *q;
	json_object_foreach(list, name, q) {
		size_t len = strlen(name);
		size_t mark = json_in_key(&d->in, name, len);
		int idx;
		rc = kj_resource_here(d, name, len, &idx);
		int64_t value = 0;
		if (rc == 0)
			rc = kj_quantity_here(d, q, idx == RES_CPU ? QUANTITY_MILLI :
							      QUANTITY_UNITS, &value);
		json_in_pop(&d->in, mark);
		if (rc < 0)
			break;
		if (idx >= 0) {
			v[idx] = value;
			has[idx] = true;
		}
	}
	json_in_pop(&d->in, outer);
	return rc;
}
