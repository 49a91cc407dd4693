/* A node requirement added to a pod's copy: see node_require_internal.h.
 * Cost: one copy of the spec (struct pod_spec) and of its terms'
 * expressions, only for the pods the callers rewrite. */
#include "daemon/node_require_internal.h"

#include <string.h>

bool node_require(const struct pod_spec *pod, uint32_t key, uint8_t op,
		  const uint32_t *values, uint32_t n, struct pod_spec *out)
{
	if (n == 0 || (pod->has_required && pod->n_terms == 0))
		return false;
	unsigned terms = pod->has_required ? pod->n_terms : 1;
	unsigned exprs = pod->n_exprs + terms; /* the originals stay */
	for (unsigned t = 0; pod->has_required && t < pod->n_terms; t++)
		exprs += pod->terms[t].n_exprs;
	if (exprs > POD_MAX_EXPRS || pod->n_values + n > POD_MAX_VALUES)
		return false;
	*out = *pod;
	struct sel_expr ex = {.key = key, .op = op, .n_values = (uint16_t)n,
			      .first_value = out->n_values};
	memcpy(&out->values[out->n_values], values, n * sizeof(*values));
	out->n_values = (uint8_t)(out->n_values + n);
	/* The originals keep their places (the preferred terms name them);
	 * each required term's copy, then the requirement, follow. */
	unsigned at = out->n_exprs;
	if (!pod->has_required) {
		out->has_required = true;
		out->n_terms = 1;
		out->terms[0] = (struct sel_term){.first_expr = (uint16_t)at, .n_exprs = 1};
		out->exprs[at++] = ex;
	}
	for (unsigned t = 0; pod->has_required && t < pod->n_terms; t++) {
		const struct sel_term *in = &pod->terms[t];
		out->terms[t].first_expr = (uint16_t)at;
		out->terms[t].n_exprs = (uint16_t)(in->n_exprs + 1);
		memcpy(&out->exprs[at], &pod->exprs[in->first_expr],
		       in->n_exprs * sizeof(pod->exprs[0]));
		at += in->n_exprs;
		out->exprs[at++] = ex;
	}
	out->n_exprs = (uint8_t)at;
	return true;
}
