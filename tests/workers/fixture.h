/* Test helpers for tests/workers/ (test_plugins.c and the rest): build
 * nodes and pods by hand, the way Kubernetes' tests use st.MakeNode() /
 * st.MakePod(). Every helper interns
 * its strings in the fixture's table and keeps the model's invariants
 * (labels and nodeSelector sorted by key id). Header-only, static: each
 * test program includes it once. */
#ifndef SHMSCHED_TESTS_PLUGINS_FIXTURE_H
#define SHMSCHED_TESTS_PLUGINS_FIXTURE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "shm/shm.h"
#include "workers/workers.h"

struct fx {
	struct intern *strings;
	struct res_names res;
	struct plugin_ctx ctx;
	int res_ext_a; /* "example.com/aaa" (fit_test.go extendedResourceA) */
	int res_ext_b; /* "example.com/bbb" (extendedResourceB) */
	int res_gpu;   /* "nvidia.com/gpu" (balanced_allocation_test.go) */
	int res_hugepages; /* "hugepages-2Mi" (hugePageResourceA) */
};

static inline int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	if (f == NULL)
		return -1;
	f->strings = intern_create();
	if (f->strings == NULL)
		return -1;
	res_names_init(&f->res);
	f->res_ext_a = res_register(&f->res, "example.com/aaa", 15);
	f->res_ext_b = res_register(&f->res, "example.com/bbb", 15);
	f->res_gpu = res_register(&f->res, "nvidia.com/gpu", 14);
	f->res_hugepages = res_register(&f->res, "hugepages-2Mi", 13);
	if (f->res_hugepages < 0 ||
	    plugin_ctx_init(&f->ctx, f->strings, &f->res) != 0)
		return -1;
	*state = f;
	return 0;
}

static inline int fx_teardown(void **state)
{
	struct fx *f = *state;
	intern_destroy(f->strings);
	free(f);
	return 0;
}

static inline uint32_t sid(struct fx *f, const char *s)
{
	uint32_t id = 0;
	assert_int_equal(intern_add_str(f->strings, s, &id), 0);
	return id;
}

static inline void node_init(struct fx *f, struct node_spec *n, const char *name)
{
	memset(n, 0, sizeof(*n));
	n->name = sid(f, name);
	n->allocatable.v[RES_PODS] = 110;
}

/* Inserts in key-id order, as ingest/ stores labels. */
static inline void node_label(struct fx *f, struct node_spec *n, const char *k,
			      const char *v)
{
	struct label l = {sid(f, k), sid(f, v)};
	unsigned i = n->n_labels;
	assert_true(i < NODE_MAX_LABELS);
	while (i > 0 && n->labels[i - 1].key > l.key) {
		n->labels[i] = n->labels[i - 1];
		i--;
	}
	n->labels[i] = l;
	n->n_labels++;
}

static inline void node_taint(struct fx *f, struct node_spec *n, const char *k,
			      const char *v, uint8_t effect)
{
	assert_true(n->n_taints < NODE_MAX_TAINTS);
	n->taints[n->n_taints++] = (struct taint){sid(f, k), sid(f, v), effect};
}

static inline void pod_init(struct pod_spec *p)
{
	memset(p, 0, sizeof(*p));
}

static inline void pod_selector(struct fx *f, struct pod_spec *p, const char *k,
				const char *v)
{
	struct label l = {sid(f, k), sid(f, v)};
	unsigned i = p->n_selector;
	assert_true(i < POD_MAX_SELECTOR);
	while (i > 0 && p->selector[i - 1].key > l.key) {
		p->selector[i] = p->selector[i - 1];
		i--;
	}
	p->selector[i] = l;
	p->n_selector++;
}

/* Opens a new required term (ORed with the others); later pod_expr calls
 * add to it. Marks the pod as having requiredDuringScheduling. */
static inline struct sel_term *pod_term(struct pod_spec *p)
{
	assert_true(p->n_terms < POD_MAX_TERMS);
	p->has_required = true;
	struct sel_term *t = &p->terms[p->n_terms++];
	t->first_expr = p->n_exprs;
	t->n_exprs = 0;
	return t;
}

static inline struct sel_term *pod_preferred(struct pod_spec *p, int32_t weight)
{
	assert_true(p->n_preferred < POD_MAX_PREFERRED);
	struct pref_term *t = &p->preferred[p->n_preferred++];
	t->weight = weight;
	t->term.first_expr = p->n_exprs;
	t->term.n_exprs = 0;
	return &t->term;
}

/* Adds one requirement to `t` (which must be the last term opened). The
 * values list ends with NULL; for Gt/Lt its single value is the number. */
static inline void pod_expr_v(struct fx *f, struct pod_spec *p, struct sel_term *t,
			      bool field, const char *key, uint8_t op, va_list ap)
{
	assert_true(p->n_exprs < POD_MAX_EXPRS);
	assert_int_equal(t->first_expr + t->n_exprs, p->n_exprs);
	struct sel_expr *e = &p->exprs[p->n_exprs++];
	memset(e, 0, sizeof(*e));
	e->key = sid(f, key);
	e->op = op;
	e->field = field;
	e->first_value = p->n_values;
	const char *v;
	while ((v = va_arg(ap, const char *)) != NULL) {
		assert_true(p->n_values < POD_MAX_VALUES);
		p->values[p->n_values++] = sid(f, v);
		e->n_values++;
		if (op == SEL_GT || op == SEL_LT)
			e->number = strtoll(v, NULL, 10);
	}
	t->n_exprs++;
}

static inline void pod_expr(struct fx *f, struct pod_spec *p, struct sel_term *t,
			    const char *key, int op, ...)
{
	va_list ap;
	va_start(ap, op);
	pod_expr_v(f, p, t, false, key, (uint8_t)op, ap);
	va_end(ap);
}

static inline void pod_field(struct fx *f, struct pod_spec *p, struct sel_term *t,
			     const char *key, int op, ...)
{
	va_list ap;
	va_start(ap, op);
	pod_expr_v(f, p, t, true, key, (uint8_t)op, ap);
	va_end(ap);
}

static inline void pod_tol(struct fx *f, struct pod_spec *p, const char *k, uint8_t op,
			   const char *v, uint8_t effect)
{
	assert_true(p->n_tolerations < POD_MAX_TOLERATIONS);
	p->tolerations[p->n_tolerations++] = (struct toleration){
		.key = sid(f, k), .value = sid(f, v), .op = op, .effect = effect,
	};
}

/* "TCP/127.0.0.1/8080", as node_ports_test.go's newPod writes ports. */
static inline struct host_port port(struct fx *f, const char *spec)
{
	char proto[8], ip[64];
	unsigned num;
	assert_int_equal(sscanf(spec, "%7[^/]/%63[^/]/%u", proto, ip, &num), 3);
	struct host_port hp = {.ip = sid(f, ip), .port = (uint16_t)num};
	hp.protocol = strcmp(proto, "UDP") == 0	   ? PROTO_UDP
		      : strcmp(proto, "SCTP") == 0 ? PROTO_SCTP
						   : PROTO_TCP;
	return hp;
}

/* A node_view over `spec` with its own used vector and no ports. */
struct view {
	struct node_view v;
	struct res_vec used;
	struct host_port ports[16];
};

static inline void view_init(struct view *w, const struct node_spec *spec)
{
	memset(w, 0, sizeof(*w));
	w->v.spec = spec;
	w->v.used = &w->used;
	w->v.ports = w->ports;
}

/* Adds an existing pod's actual requests; the non-zero totals follow
 * Kubernetes (a pod without a cpu / memory request counts 100m / 200Mi
 * for scoring). Pass -1 for "not requested". */
static inline void view_add_pod(struct view *w, int64_t cpu, int64_t mem)
{
	w->used.v[RES_PODS]++;
	w->used.v[RES_CPU] += cpu < 0 ? 0 : cpu;
	w->used.v[RES_MEMORY] += mem < 0 ? 0 : mem;
	w->v.used_nonzero_cpu_milli += cpu < 0 ? 100 : cpu;
	w->v.used_nonzero_mem_bytes += mem < 0 ? 200 * 1024 * 1024 : mem;
}

/* Sets a pod's requests the same way (-1: not requested). */
static inline void pod_request(struct pod_spec *p, int64_t cpu, int64_t mem)
{
	p->request.v[RES_CPU] = cpu < 0 ? 0 : cpu;
	p->request.v[RES_MEMORY] = mem < 0 ? 0 : mem;
	p->nonzero_cpu_milli = cpu < 0 ? 100 : cpu;
	p->nonzero_mem_bytes = mem < 0 ? 200 * 1024 * 1024 : mem;
}

#endif
