/* unit.field_validation: unknown Kubernetes fields through the decoder
 * every reader uses (ingest/k8s_json.h): files, templates (k8s_load_one),
 * `shmsched place`. kube-apiserver's levels (meta/v1 CreateOptions
 * .fieldValidation): Strict "will fail the request with a BadRequest error
 * if any unknown fields would be dropped from the object"; Warn "will send
 * a warning ... for each unknown field that is dropped from the object ...
 * The request will still succeed"; Ignore drops them silently. Before
 * issue 35 every level was Ignore: "nodeSelectr" placed a pod anywhere.
 * JSON here is written with ' for ". */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ingest/k8s_json.h"
#include "policy/policy.h"
#include "shm/shm.h"
#include "workers/workers.h"

struct fx {
	struct res_names res;
	struct k8s_ctx ctx;
	size_t n_pods, n_nodes;
	struct pod_spec pod;
	char err[1024];
	char warned[2048];
	unsigned n_warned;
};

static int on_pod(void *arg, const struct pod_spec *p, const struct k8s_pod_meta *m,
		  char *err, size_t err_len)
{
	(void)m, (void)err, (void)err_len;
	struct fx *f = arg;
	f->pod = *p;
	f->n_pods++;
	return 0;
}

static int on_node(void *arg, const struct node_spec *n, char *err, size_t err_len)
{
	(void)n, (void)err, (void)err_len;
	struct fx *f = arg;
	f->n_nodes++;
	return 0;
}

static void on_warn(void *arg, const char *line)
{
	struct fx *f = arg;
	f->n_warned++;
	snprintf(f->warned, sizeof(f->warned), "%s", line);
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	if (f == NULL)
		return -1;
	res_names_init(&f->res);
	f->ctx.strings = intern_create();
	f->ctx.res = &f->res;
	*state = f;
	k8s_set_field_validation(K8S_FIELDS_STRICT, on_warn, f);
	return f->ctx.strings == NULL ? -1 : 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	k8s_set_field_validation(K8S_FIELDS_STRICT, NULL, NULL);
	intern_destroy(f->ctx.strings);
	free(f);
	return 0;
}

static int load(struct fx *f, const char *json)
{
	char *buf = strdup(json);
	assert_non_null(buf);
	for (char *p = buf; *p != '\0'; p++)
		if (*p == '\'')
			*p = '"';
	struct k8s_visitor v = {.arg = f, .pod = on_pod, .node = on_node};
	f->n_pods = f->n_nodes = 0;
	f->n_warned = 0;
	f->warned[0] = '\0';
	int rc = k8s_load_buffer("pods.json", buf, strlen(buf), &f->ctx, &v, f->err,
				 sizeof(f->err));
	free(buf);
	return rc;
}

static const char typo_pod[] =
	"{'kind':'Pod','metadata':{'name':'big'},'spec':{'nodeSelectr':"
	"{'disk':'ssd'},'containers':[{'name':'c','resources':{'request':"
	"{'cpu':'64'}}}]}}";

static void test_strict_refuses_naming_each(void **state)
{
	struct fx *f = *state;
	assert_int_equal(load(f, typo_pod), -EINVAL);
	assert_int_equal(f->n_pods, 0);
	assert_string_equal(f->err, "pods.json: pod default/big: spec.nodeSelectr: "
			    "unknown field (did you mean spec.nodeSelector?); "
			    "spec.containers[0].resources.request: unknown field (did "
			    "you mean spec.containers[0].resources.requests?) "
			    "(fieldValidation=Strict; Warn or Ignore to load it anyway)");
	/* In a List's items, and the List's own members. */
	assert_int_equal(load(f, "{'kind':'PodList','items':[{'kind':'Pod','metadata':"
			      "{'name':'a'},'spec':{'containers':[]}},{'metadata':"
			      "{'name':'b','lables':{}},'spec':{'containers':[]}}]}"),
			 -EINVAL);
	assert_non_null(strstr(f->err, "pod default/b: metadata.lables: unknown field "
			       "(did you mean metadata.labels?)"));
	assert_int_equal(load(f, "{'kind':'List','itemz':[]}"), -EINVAL);
	assert_non_null(strstr(f->err, "itemz: unknown field"));
	/* A Node, and the first pass's kinds (checked in the second pass). */
	assert_int_equal(load(f, "{'kind':'Node','metadata':{'name':'n1'},'spec':"
			      "{'unschedulabel':true}}"), -EINVAL);
	assert_non_null(strstr(f->err, "node n1: spec.unschedulabel: unknown field "
			       "(did you mean spec.unschedulable?)"));
	assert_int_equal(load(f, "{'apiVersion':'v1','kind':'Namespace','metadata':"
			      "{'name':'x','lables':{}}}"), -EINVAL);
	assert_non_null(strstr(f->err, "Namespace x: metadata.lables"));
}

static void test_warn_places_and_warns(void **state)
{
	struct fx *f = *state;
	k8s_set_field_validation(K8S_FIELDS_WARN, on_warn, f);
	assert_int_equal(load(f, typo_pod), 0);
	assert_int_equal(f->n_pods, 1);
	assert_int_equal(f->n_warned, 1);
	assert_string_equal(f->warned, "pods.json: pod default/big: spec.nodeSelectr: "
			    "unknown field (did you mean spec.nodeSelector?); "
			    "spec.containers[0].resources.request: unknown field (did "
			    "you mean spec.containers[0].resources.requests?)");
	/* Dropped, as the API server drops it: no selector, no request. */
	assert_int_equal(f->pod.n_selector, 0);
}

static void test_ignore_is_silent(void **state)
{
	struct fx *f = *state;
	k8s_set_field_validation(K8S_FIELDS_IGNORE, on_warn, f);
	assert_int_equal(load(f, typo_pod), 0);
	assert_int_equal(f->n_pods, 1);
	assert_int_equal(f->n_warned, 0);
}

/* A template (the daemon's k8s_load_one) is held to the same. */
static void test_template_strict(void **state)
{
	struct fx *f = *state;
	char buf[] = "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"t\"},\"spec\":"
		     "{\"containers\":[{\"name\":\"c\"}],\"tolerations\":[{\"ky\":\"a\"}]}}";
	struct pod_spec pod;
	assert_int_equal(k8s_load_one("template", buf, strlen(buf), &f->ctx, &pod, NULL,
				      f->err, sizeof(f->err)), -EINVAL);
	assert_non_null(strstr(f->err, "spec.tolerations[0].ky: unknown field (did you "
			       "mean spec.tolerations[0].key?)"));
}

/* Real kubectl dumps (status, managedFields, ownerReferences and all)
 * load under Strict: every field they hold is a field of its type. */
static void test_kubectl_dumps_load(void **state)
{
	struct fx *f = *state;
	static const char *const files[] = {KUBECTL_CLUSTER, KUBECTL_PODS};
	for (size_t i = 0; i < 2; i++) {
		f->ctx.cluster_file = i == 0;
		struct k8s_objects *o = k8s_objects_create();
		assert_non_null(o);
		f->ctx.objects = o;
		struct k8s_visitor v = {.arg = f, .pod = on_pod, .node = on_node};
		int rc = k8s_objects_read_file(files[i], &f->ctx, f->err, sizeof(f->err));
		if (rc == 0)
			rc = k8s_load_file(files[i], &f->ctx, &v, f->err, sizeof(f->err));
		if (rc != 0)
			fail_msg("%s: %s", files[i], f->err);
		f->ctx.objects = NULL;
		f->ctx.cluster_file = false;
		k8s_objects_destroy(o);
	}
	assert_true(f->n_pods > 0);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(test_strict_refuses_naming_each),
		T(test_warn_places_and_warns),
		T(test_ignore_is_silent),
		T(test_template_strict),
		T(test_kubectl_dumps_load),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
