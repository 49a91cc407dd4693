/* The derived table of Kubernetes field names (policy/k8s_fields_table.c,
 * made by scripts/derive-k8s-fields), read by policy/k8s_fields.c. */
#ifndef SHMSCHED_POLICY_K8S_FIELDS_INTERNAL_H
#define SHMSCHED_POLICY_K8S_FIELDS_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

enum k8s_field_shape {
	K8S_FIELD_SCALAR = 0, /* or an opaque type: not walked */
	K8S_FIELD_OBJECT = 1, /* an object of type `type` */
	K8S_FIELD_ARRAY = 2,  /* an array of them */
	K8S_FIELD_MAP = 3,    /* a map of them (any key) */
};

struct k8s_ffield {
	const char *name;
	uint8_t shape;  /* enum k8s_field_shape */
	uint16_t type;  /* index in k8s_ftypes, unless K8S_FIELD_SCALAR */
};

struct k8s_ftype {
	const char *name;     /* "core.v1.PodSpec" */
	uint16_t first, n;    /* its fields: k8s_ffields[first..first+n), by name */
};

struct k8s_froot {
	const char *api_version;
	const char *kind;
	uint16_t type;
};

extern const struct k8s_ffield k8s_ffields[];
extern const struct k8s_ftype k8s_ftypes[];
extern const size_t k8s_n_ftypes;
extern const struct k8s_froot k8s_froots[];
extern const size_t k8s_n_froots;

#endif
