/* unit.k8s_json: Node and Pod JSON into the model (ingest/k8s_json.h).
 * Each test names the Kubernetes source it checks against. JSON in this
 * file is written with ' for " (load() swaps them) to stay readable. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "ingest/k8s_json.h"
#include "workers/workers.h"
#include "shm/shm.h"

#define MAX_OBJECTS 16
#define MIB (INT64_C(1) << 20)
#define GIB (INT64_C(1) << 30)

struct sink {
	struct res_names res;
	struct k8s_ctx ctx;
	struct k8s_visitor v;
	struct node_spec nodes[MAX_OBJECTS];
	struct pod_spec pods[MAX_OBJECTS];
	struct k8s_pod_meta metas[MAX_OBJECTS];
	char unsupported[MAX_OBJECTS][768]; /* metas[].unsupported, copied */
	size_t n_nodes, n_pods;
	int refuse;             /* what the visitor returns */
	const char *refuse_msg; /* and writes, if not NULL */
	char err[512];
};

static int on_node(void *arg, const struct node_spec *n, char *err, size_t err_len)
{
	struct sink *s = arg;
	if (s->refuse < 0) {
		if (s->refuse_msg != NULL)
			snprintf(err, err_len, "%s", s->refuse_msg);
		return s->refuse;
	}
	assert_true(s->n_nodes < MAX_OBJECTS);
	s->nodes[s->n_nodes++] = *n;
	return 0;
}

static int on_pod(void *arg, const struct pod_spec *p, const struct k8s_pod_meta *m,
		  char *err, size_t err_len)
{
	struct sink *s = arg;
	if (s->refuse < 0) {
		if (s->refuse_msg != NULL)
			snprintf(err, err_len, "%s", s->refuse_msg);
		return s->refuse;
	}
	assert_true(s->n_pods < MAX_OBJECTS);
	s->pods[s->n_pods] = *p;
	s->metas[s->n_pods] = *m;
	/* The text lives as long as the visit: kept here. */
	if (m->unsupported != NULL) {
		snprintf(s->unsupported[s->n_pods], sizeof(s->unsupported[0]), "%s",
			 m->unsupported);
		s->metas[s->n_pods].unsupported = s->unsupported[s->n_pods];
	}
	s->n_pods++;
	return 0;
}

static int setup(void **state)
{
	struct sink *s = calloc(1, sizeof(*s));
	if (s == NULL)
		return -1;
	res_names_init(&s->res);
	s->ctx.strings = intern_create();
	s->ctx.res = &s->res;
	s->v = (struct k8s_visitor){.arg = s, .node = on_node, .pod = on_pod};
	*state = s;
	return s->ctx.strings == NULL ? -1 : 0;
}

static int teardown(void **state)
{
	struct sink *s = *state;
	k8s_objects_destroy(s->ctx.objects);
	intern_destroy(s->ctx.strings);
	free(s);
	return 0;
}

/* Loads `json` (with ' for ") as file `name`. */
static int load(struct sink *s, const char *name, const char *json)
{
	size_t len = strlen(json);
	char *buf = malloc(len + 1);
	assert_non_null(buf);
	for (size_t i = 0; i < len; i++)
		buf[i] = json[i] == '\'' ? '"' : json[i];
	s->n_nodes = s->n_pods = 0;
	int rc = k8s_load_buffer(name, buf, len, &s->ctx, &s->v, s->err,
				 sizeof(s->err));
	free(buf);
	return rc;
}

/* Loads and expects failure `rc` with exactly message `want`. */
#define assert_load_error(s, name, json, rc, want)                                \
	do {                                                                     \
		assert_int_equal(load((s), (name), (json)), (rc));              \
		assert_string_equal((s)->err, (want));                          \
	} while (0)

static uint32_t id(struct sink *s, const char *str)
{
	uint32_t v;
	if (!intern_find(s->ctx.strings, str, strlen(str), &v))
		fail_msg("\"%s\" was never interned", str);
	return v;
}

static const char *str(struct sink *s, uint32_t v)
{
	return intern_str(s->ctx.strings, v);
}

static int u32_order(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

static int res_index(struct sink *s, const char *name)
{
	return res_lookup(&s->res, name, strlen(name));
}

/* A pod around a spec fragment. */
static int load_pod(struct sink *s, const char *spec)
{
	char *json;
	assert_true(asprintf(&json, "{'kind':'Pod','metadata':{'name':'p'},"
			     "'spec':{%s}}", spec) > 0);
	int rc = load(s, "pods.json", json);
	free(json);
	return rc;
}

/* --- nodes ----------------------------------------------------------------- */

static const char node_json[] =
	"{'apiVersion':'v1','kind':'Node',"
	" 'metadata':{'name':'n1','labels':{'zone':'a','kubernetes.io/hostname':'n1',"
	"  'disk':''},'annotations':{'x':'y'}},"
	" 'spec':{'unschedulable':true,'podCIDR':'10.0.0.0/24','taints':["
	"  {'key':'gpu','value':'yes','effect':'NoSchedule'},"
	"  {'key':'spot','effect':'PreferNoSchedule'},"
	"  {'key':'node.kubernetes.io/not-ready','effect':'NoExecute','timeAdded':null}]},"
	" 'status':{'conditions':[{'type':'MemoryPressure','status':'False'},"
	"  {'type':'Ready','status':'True'}],"
	"  'capacity':{'cpu':'64','memory':'256Gi'},"
	"  'allocatable':{'cpu':'3900m','memory':'15Gi','ephemeral-storage':'100G',"
	"   'pods':'110','hugepages-2Mi':'1Gi','nvidia.com/gpu':'2',"
	"   'attachable-volumes-aws-ebs':'39','kubernetes.io/batch':'3'}}}";

/* Node fields: k8s.io/api/core/v1 types.go (NodeSpec, NodeStatus, Taint). */
static void test_node_fields(void **state)
{
	struct sink *s = *state;
	assert_int_equal(load(s, "nodes.json", node_json), 0);
	assert_int_equal(s->n_nodes, 1);
	const struct node_spec *n = &s->nodes[0];
	assert_string_equal(str(s, n->name), "n1");
	assert_true(n->unschedulable);
	assert_int_equal(n->ready, NODE_READY_TRUE);

	/* Labels sorted by key id, "" value is id 0. */
	assert_int_equal(n->n_labels, 3);
	for (int i = 1; i < n->n_labels; i++)
		assert_true(n->labels[i - 1].key < n->labels[i].key);
	for (int i = 0; i < n->n_labels; i++) {
		const char *k = str(s, n->labels[i].key);
		const char *v = str(s, n->labels[i].value);
		if (strcmp(k, "zone") == 0)
			assert_string_equal(v, "a");
		else if (strcmp(k, "kubernetes.io/hostname") == 0)
			assert_string_equal(v, "n1");
		else if (strcmp(k, "disk") == 0)
			assert_int_equal(n->labels[i].value, 0);
		else
			fail_msg("unexpected label %s", k);
	}

	/* Taints in the order given. */
	assert_int_equal(n->n_taints, 3);
	assert_int_equal(n->taints[0].key, id(s, "gpu"));
	assert_int_equal(n->taints[0].value, id(s, "yes"));
	assert_int_equal(n->taints[0].effect, TAINT_NO_SCHEDULE);
	assert_int_equal(n->taints[1].key, id(s, "spot"));
	assert_int_equal(n->taints[1].value, 0);
	assert_int_equal(n->taints[1].effect, TAINT_PREFER_NO_SCHEDULE);
	assert_int_equal(n->taints[2].effect, TAINT_NO_EXECUTE);

	/* Allocatable, not capacity; hugepages and extended resources
	 * registered; other names ignored. */
	assert_int_equal(n->allocatable.v[RES_CPU], 3900);
	assert_int_equal(n->allocatable.v[RES_MEMORY], 15 * GIB);
	assert_int_equal(n->allocatable.v[RES_EPHEMERAL], INT64_C(100000000000));
	assert_int_equal(n->allocatable.v[RES_PODS], 110);
	int hp = res_index(s, "hugepages-2Mi"), gpu = res_index(s, "nvidia.com/gpu");
	assert_true(hp >= RES_FIRST_NAMED && gpu >= RES_FIRST_NAMED);
	assert_int_equal(n->allocatable.v[hp], GIB);
	assert_int_equal(n->allocatable.v[gpu], 2);
	assert_int_equal(res_index(s, "attachable-volumes-aws-ebs"), -1);
	assert_int_equal(res_index(s, "kubernetes.io/batch"), -1);
	assert_int_equal(s->res.count, RES_FIRST_NAMED + 2);
}

/* SetDefaults_NodeStatus (pkg/apis/core/v1/defaults.go): no allocatable
 * means allocatable = capacity. */
static void test_node_capacity_when_no_allocatable(void **state)
{
	struct sink *s = *state;
	assert_int_equal(load(s, "nodes.json",
			      "{'kind':'Node','metadata':{'name':'n'},'status':{"
			      "'capacity':{'cpu':'4','memory':'8Gi','pods':'110'}}}"), 0);
	assert_int_equal(s->nodes[0].allocatable.v[RES_CPU], 4000);
	assert_int_equal(s->nodes[0].allocatable.v[RES_MEMORY], 8 * GIB);
	assert_int_equal(s->nodes[0].allocatable.v[RES_PODS], 110);
	assert_int_equal(s->nodes[0].ready, NODE_READY_UNKNOWN);
	assert_false(s->nodes[0].unschedulable);

	/* A null allocatable is an absent one. */
	assert_int_equal(load(s, "nodes.json",
			      "{'kind':'Node','metadata':{'name':'n'},'status':{"
			      "'allocatable':null,'capacity':{'cpu':'2'}}}"), 0);
	assert_int_equal(s->nodes[0].allocatable.v[RES_CPU], 2000);
}

/* NodeCondition Ready: True / False / Unknown (types.go ConditionStatus). */
static void test_node_ready(void **state)
{
	struct sink *s = *state;
	static const struct {
		const char *status;
		uint8_t want;
	} cases[] = {
		{"True", NODE_READY_TRUE},
		{"False", NODE_READY_FALSE},
		{"Unknown", NODE_READY_UNKNOWN},
	};
	for (size_t i = 0; i < 3; i++) {
		char json[256];
		snprintf(json, sizeof(json),
			 "{'kind':'Node','metadata':{'name':'n'},'status':{"
			 "'conditions':[{'type':'Ready','status':'%s'}]}}",
			 cases[i].status);
		assert_int_equal(load(s, "nodes.json", json), 0);
		assert_int_equal(s->nodes[0].ready, cases[i].want);
	}
	assert_load_error(s, "nodes.json",
			  "{'kind':'Node','metadata':{'name':'n'},'status':{"
			  "'conditions':[{'type':'Ready','status':'Yes'}]}}",
			  -EINVAL, "nodes.json: node n: status.conditions[0].status: "
			  "\"Yes\" is not True, False or Unknown");
}

static void test_node_errors(void **state)
{
	struct sink *s = *state;
	assert_load_error(s, "nodes.json",
			  "{'kind':'Node','metadata':{'name':'n1'},'spec':{'unschedulable':'yes'}}",
			  -EINVAL, "nodes.json: node n1: spec.unschedulable: "
			  "expected a boolean, got a string");
	assert_load_error(s, "nodes.json", "{'kind':'Node','metadata':{'labels':{}}}",
			  -EINVAL, "nodes.json: object #0: metadata.name: missing");
	assert_load_error(s, "nodes.json", "{'kind':'Node','metadata':{'name':7}}",
			  -EINVAL, "nodes.json: object #0: metadata.name: "
			  "expected a string, got a number");
	assert_load_error(s, "nodes.json",
			  "{'kind':'Node','metadata':{'name':'n1'},'spec':{'taints':["
			  "{'key':'a','effect':'NoSchedule'},{'key':'b','effect':'Sometimes'}]}}",
			  -EINVAL, "nodes.json: node n1: spec.taints[1].effect: "
			  "\"Sometimes\" is not NoSchedule, PreferNoSchedule or NoExecute");
	assert_load_error(s, "nodes.json",
			  "{'kind':'Node','metadata':{'name':'n1'},'spec':{'taints':["
			  "{'effect':'NoSchedule'}]}}",
			  -EINVAL, "nodes.json: node n1: spec.taints[0].key: missing");
	assert_load_error(s, "nodes.json",
			  "{'kind':'Node','metadata':{'name':'n1','labels':{'a':1}}}",
			  -EINVAL, "nodes.json: node n1: metadata.labels.a: "
			  "expected a string, got a number");
	assert_load_error(s, "nodes.json",
			  "{'kind':'Node','metadata':{'name':'n1'},'status':{"
			  "'allocatable':{'memory':'lots'}}}",
			  -EINVAL, "nodes.json: node n1: status.allocatable.memory: "
			  "\"lots\" is not a quantity");
	assert_load_error(s, "nodes.json",
			  "{'kind':'Node','metadata':{'name':'n1'},'status':{"
			  "'allocatable':{'cpu':'-1'}}}",
			  -EINVAL, "nodes.json: node n1: status.allocatable.cpu: "
			  "\"-1\" is negative");
	assert_load_error(s, "nodes.json",
			  "{'kind':'Node','metadata':{'name':'n1'},'status':{"
			  "'allocatable':{'memory':'12Ei'}}}",
			  -EINVAL, "nodes.json: node n1: status.allocatable.memory: "
			  "\"12Ei\" is too large (the value must fit in 64 bits)");
}

static void test_node_limits(void **state)
{
	struct sink *s = *state;
	static char json[65536];
	size_t used = (size_t)snprintf(json, sizeof(json),
				       "{'kind':'Node','metadata':{'name':'big','labels':{");
	for (int i = 0; i <= NODE_MAX_LABELS; i++)
		used += (size_t)snprintf(json + used, sizeof(json) - used,
					 "%s'k%d':'v'", i ? "," : "", i);
	snprintf(json + used, sizeof(json) - used, "}}}");
	assert_load_error(s, "nodes.json", json, -ENOSPC,
			  "nodes.json: node big: metadata.labels: 513 entries, at most 512");

	/* A GPU node as Node Feature Discovery and the GPU operator label it:
	 * 130 labels load. */
	used = (size_t)snprintf(json, sizeof(json),
				"{'kind':'Node','metadata':{'name':'gpu','labels':{");
	for (int i = 0; i < 130; i++)
		used += (size_t)snprintf(json + used, sizeof(json) - used,
					 "%s'feature.node.kubernetes.io/f%d':'true'",
					 i ? "," : "", i);
	snprintf(json + used, sizeof(json) - used, "}}}");
	assert_int_equal(load(s, "nodes.json", json), 0);
	assert_int_equal(s->nodes[0].n_labels, 130);

	used = (size_t)snprintf(json, sizeof(json),
				"{'kind':'Node','metadata':{'name':'t'},'spec':{'taints':[");
	for (int i = 0; i <= NODE_MAX_TAINTS; i++)
		used += (size_t)snprintf(json + used, sizeof(json) - used,
					 "%s{'key':'k%d','effect':'NoSchedule'}",
					 i ? "," : "", i);
	snprintf(json + used, sizeof(json) - used, "]}}");
	assert_load_error(s, "nodes.json", json, -ENOSPC,
			  "nodes.json: node t: spec.taints: 17 taints, at most 16");

	/* Named resources: RES_MAX - RES_FIRST_NAMED of them, then no room. */
	used = (size_t)snprintf(json, sizeof(json),
				"{'kind':'Node','metadata':{'name':'r'},'status':{'allocatable':{");
	for (int i = 0; i <= RES_MAX - RES_FIRST_NAMED; i++)
		used += (size_t)snprintf(json + used, sizeof(json) - used,
					 "%s'example.com/r%02d':'1'", i ? "," : "", i);
	snprintf(json + used, sizeof(json) - used, "}}}");
	assert_int_equal(load(s, "nodes.json", json), -ENOSPC);
	assert_non_null(strstr(s->err, "nodes.json: node r: status.allocatable."
				       "example.com/r12: resource \"example.com/r12\": "
				       "no room for another named resource"));
}

/* --- pods: identity ---------------------------------------------------------- */

static void test_pod_identity(void **state)
{
	struct sink *s = *state;
	assert_int_equal(load(s, "pods.json",
			      "{'kind':'Pod','metadata':{'name':'web-7','namespace':'shop'},"
			      "'spec':{'nodeName':'n3','containers':[{'name':'c'}]},"
			      "'status':{'phase':'Running'}}"
			      "{'kind':'Pod','metadata':{'name':'x'},'spec':{}}"), 0);
	assert_int_equal(s->n_pods, 2);
	assert_string_equal(str(s, s->pods[0].ns_name), "shop/web-7");
	assert_int_equal(s->metas[0].ns_name, s->pods[0].ns_name);
	assert_int_equal(s->metas[0].phase, POD_PHASE_RUNNING);
	assert_int_equal(s->metas[0].index, 0);
	assert_string_equal(str(s, s->pods[0].node_name), "n3");
	/* Namespace "default" when none; phase Pending when none. */
	assert_string_equal(str(s, s->pods[1].ns_name), "default/x");
	assert_int_equal(s->metas[1].phase, POD_PHASE_PENDING);
	assert_int_equal(s->metas[1].index, 1);
	assert_int_equal(s->pods[1].node_name, 0);

	static const char *const phases[] = {"Pending", "Running", "Succeeded",
					     "Failed", "Unknown"};
	for (uint8_t i = 0; i < 5; i++) {
		char json[256];
		snprintf(json, sizeof(json), "{'kind':'Pod','metadata':{'name':'p'},"
			 "'status':{'phase':'%s'}}", phases[i]);
		assert_int_equal(load(s, "pods.json", json), 0);
		assert_int_equal(s->metas[0].phase, i);
	}
	assert_load_error(s, "pods.json",
			  "{'kind':'Pod','metadata':{'name':'p'},'status':{'phase':'Done'}}",
			  -EINVAL, "pods.json: pod default/p: status.phase: \"Done\" is "
			  "not Pending, Running, Succeeded, Failed or Unknown");
}

/* model.h: pods equal in scheduling spec (their namespace and labels
 * included: the group) are equal bytes from node_name on, whatever their
 * names and unrelated fields. */
static void test_pod_equivalence_bytes(void **state)
{
	struct sink *s = *state;
	assert_int_equal(load(s, "pods.json",
			      "{'kind':'Pod','metadata':{'name':'a','labels':{'app':'x'}},"
			      "'spec':{'nodeSelector':{'zone':'a','disk':'ssd'},"
			      "'tolerations':[{'key':'k','operator':'Exists'}],"
			      "'containers':[{'name':'c1','image':'i1','resources':"
			      "{'requests':{'cpu':'1'}}}]}}\n"
			      "{'kind':'Pod','metadata':{'name':'b','labels':{'app':'x'},"
			      "'annotations':{'note':'n'}},"
			      "'spec':{'nodeSelector':{'disk':'ssd','zone':'a'},"
			      "'tolerations':[{'key':'k','operator':'Exists'}],"
			      "'containers':[{'name':'other','resources':"
			      "{'requests':{'cpu':'1000m'}}}]}}\n"
			      "{'kind':'Pod','metadata':{'name':'c','namespace':'other',"
			      "'labels':{'app':'x'}},"
			      "'spec':{'nodeSelector':{'disk':'ssd','zone':'a'},"
			      "'tolerations':[{'key':'k','operator':'Exists'}],"
			      "'containers':[{'name':'c1','resources':"
			      "{'requests':{'cpu':'1'}}}]}}\n"), 0);
	assert_int_equal(s->n_pods, 3);
	/* Another namespace is another group. */
	assert_int_not_equal(s->pods[0].group, s->pods[2].group);
	assert_int_not_equal(s->pods[0].group, 0);
	size_t from = offsetof(struct pod_spec, node_name);
	assert_memory_equal((const char *)&s->pods[0] + from,
			    (const char *)&s->pods[1] + from,
			    sizeof(struct pod_spec) - from);
	assert_int_not_equal(s->pods[0].ns_name, s->pods[1].ns_name);
}

/* --- pods: requests ------------------------------------------------------- */

/* Plain containers, summed; requests defaulted from limits
 * (SetDefaults_Pod in pkg/apis/core/v1/defaults.go); stand-ins for a
 * missing cpu / memory request in the nonzero variant
 * (pkg/scheduler/util/pod_resources.go: DefaultMilliCPURequest,
 * DefaultMemoryRequest). */
static void test_requests_containers(void **state)
{
	struct sink *s = *state;
	assert_int_equal(load_pod(s,
		"'containers':["
		" {'name':'a','resources':{'requests':{'cpu':'250m','memory':'64Mi'}}},"
		" {'name':'b','resources':{'limits':{'cpu':'1','memory':'1G',"
		"   'ephemeral-storage':'2Gi'}}},"
		" {'name':'c'},"
		" {'name':'d','resources':{'requests':{'cpu':'0','memory':0},"
		"   'limits':{'cpu':'4'}}}]"), 0);
	const struct pod_spec *p = &s->pods[0];
	assert_int_equal(p->request.v[RES_CPU], 250 + 1000);
	assert_int_equal(p->request.v[RES_MEMORY], 64 * MIB + 1000000000);
	assert_int_equal(p->request.v[RES_EPHEMERAL], 2 * GIB);
	assert_int_equal(p->request.v[RES_PODS], 0);
	/* c has neither request: stand-ins; d's explicit zeros stay zero. */
	assert_int_equal(p->nonzero_cpu_milli, 250 + 1000 + 100);
	assert_int_equal(p->nonzero_mem_bytes, 64 * MIB + 1000000000 + 200 * MIB);
}

/* An empty pod still counts the stand-ins for... nothing: no container,
 * no stand-in (helpers.go applies them per container). */
static void test_requests_no_containers(void **state)
{
	struct sink *s = *state;
	assert_int_equal(load_pod(s, "'containers':[]"), 0);
	assert_int_equal(s->pods[0].request.v[RES_CPU], 0);
	assert_int_equal(s->pods[0].nonzero_cpu_milli, 0);
	assert_int_equal(s->pods[0].nonzero_mem_bytes, 0);
}

/* k8s.io/component-helpers/resource/helpers_test.go TestPodResourceRequests:
 * "two container with overhead, massive init - should just be the largest
 * init" (overhead excluded there; here added: PodRequests' default). */
static void test_requests_massive_init_and_overhead(void **state)
{
	struct sink *s = *state;
	assert_int_equal(load_pod(s,
		"'overhead':{'cpu':'3','memory':'8'},"
		"'containers':["
		" {'name':'foobar','resources':{'requests':{'cpu':'1','memory':'5'}}},"
		" {'name':'foobar2','resources':{'requests':{'cpu':'4','memory':'12'}}}],"
		"'initContainers':["
		" {'name':'small-init','resources':{'requests':{'cpu':'1','memory':'5'}}},"
		" {'name':'big-init','resources':{'requests':{'cpu':'40','memory':'120'}}}]"),
		0);
	assert_int_equal(s->pods[0].request.v[RES_CPU], 40000 + 3000);
	assert_int_equal(s->pods[0].request.v[RES_MEMORY], 120 + 8);
	assert_int_equal(s->pods[0].nonzero_cpu_milli, 43000);
	assert_int_equal(s->pods[0].nonzero_mem_bytes, 128);
}

/* helpers_test.go TestPodResourceRequests: "multiple restartable init
 * containers": max(5, sidecars 3+2+1 + container 1) = 7. */
static void test_requests_sidecars(void **state)
{
	struct sink *s = *state;
	assert_int_equal(load_pod(s,
		"'initContainers':["
		" {'name':'init-1','resources':{'requests':{'cpu':'5'}}},"
		" {'name':'r1','restartPolicy':'Always','resources':{'requests':{'cpu':'1'}}},"
		" {'name':'r2','restartPolicy':'Always','resources':{'requests':{'cpu':'2'}}},"
		" {'name':'r3','restartPolicy':'Always','resources':{'requests':{'cpu':'3'}}}],"
		"'containers':[{'name':'c1','resources':{'requests':{'cpu':'1'}}}]"), 0);
	assert_int_equal(s->pods[0].request.v[RES_CPU], 7000);
}

/* helpers_test.go: "multiple restartable and regular init containers":
 * init-2 needs 5 + the sidecars started before it (1+2) = 8; the sidecar
 * after it does not count. */
static void test_requests_sidecars_and_init(void **state)
{
	struct sink *s = *state;
	assert_int_equal(load_pod(s,
		"'initContainers':["
		" {'name':'init-1','resources':{'requests':{'cpu':'5'}}},"
		" {'name':'r1','restartPolicy':'Always','resources':{'requests':{'cpu':'1'}}},"
		" {'name':'r2','restartPolicy':'Always','resources':{'requests':{'cpu':'2'}}},"
		" {'name':'init-2','resources':{'requests':{'cpu':'5'}}},"
		" {'name':'r3','restartPolicy':'Always','resources':{'requests':{'cpu':'3'}}}],"
		"'containers':[{'name':'c1','resources':{'requests':{'cpu':'1'}}}]"), 0);
	assert_int_equal(s->pods[0].request.v[RES_CPU], 8000);

	/* helpers_test.go: "restartable-init, init and regular": 210. */
	assert_int_equal(load_pod(s,
		"'initContainers':["
		" {'name':'r1','restartPolicy':'Always','resources':{'requests':{'cpu':'10'}}},"
		" {'name':'i1','resources':{'requests':{'cpu':'200'}}}],"
		"'containers':[{'name':'c1','resources':{'requests':{'cpu':'100'}}}]"), 0);
	assert_int_equal(s->pods[0].request.v[RES_CPU], 210000);
}

/* helpers_test.go TestPodResourceRequests: "non missing container requests
 * applied to init container": the stand-in applies to init containers too.
 * Sidecars count their stand-ins in the sum. */
static void test_requests_nonzero_init(void **state)
{
	struct sink *s = *state;
	assert_int_equal(load_pod(s,
		"'initContainers':[{'name':'i1','resources':{'requests':{'cpu':'1'}}}]"), 0);
	assert_int_equal(s->pods[0].request.v[RES_CPU], 1000);
	assert_int_equal(s->pods[0].request.v[RES_MEMORY], 0);
	assert_int_equal(s->pods[0].nonzero_cpu_milli, 1000);
	assert_int_equal(s->pods[0].nonzero_mem_bytes, 200 * MIB);

	assert_int_equal(load_pod(s,
		"'initContainers':[{'name':'r','restartPolicy':'Always'}],"
		"'containers':[{'name':'c','resources':{'requests':{'memory':'1Gi'}}}]"), 0);
	assert_int_equal(s->pods[0].request.v[RES_CPU], 0);
	assert_int_equal(s->pods[0].nonzero_cpu_milli, 200); /* 100m twice */
	assert_int_equal(s->pods[0].nonzero_mem_bytes, GIB + 200 * MIB);
}

/* Extended resources a pod asks for get an index even when no node has
 * them (so the pod can be found unschedulable); "pods" is never a request. */
static void test_requests_named_resources(void **state)
{
	struct sink *s = *state;
	assert_int_equal(load_pod(s,
		"'containers':[{'name':'c','resources':{'limits':{'nvidia.com/gpu':'2',"
		" 'hugepages-1Gi':'2Gi'},'requests':{'pods':'5','foo':'1'}}}],"
		"'overhead':{'nvidia.com/gpu':'1'}"), 0);
	int gpu = res_index(s, "nvidia.com/gpu"), hp = res_index(s, "hugepages-1Gi");
	assert_true(gpu >= RES_FIRST_NAMED && hp >= RES_FIRST_NAMED);
	assert_int_equal(s->pods[0].request.v[gpu], 3);
	assert_int_equal(s->pods[0].request.v[hp], 2 * GIB);
	assert_int_equal(s->pods[0].request.v[RES_PODS], 0);
	assert_int_equal(res_index(s, "foo"), -1);
}

/* Quantity.UnmarshalJSON: a bare JSON number, or a string with spaces
 * around it, is a quantity too. */
static void test_requests_json_numbers(void **state)
{
	struct sink *s = *state;
	assert_int_equal(load_pod(s,
		"'containers':[{'name':'c','resources':{'requests':{'cpu':0.1,"
		" 'memory':' 1Gi ','ephemeral-storage':1e3}}},"
		" {'name':'d','resources':{'requests':{'cpu':2}}}]"), 0);
	assert_int_equal(s->pods[0].request.v[RES_CPU], 100 + 2000);
	assert_int_equal(s->pods[0].request.v[RES_MEMORY], GIB);
	assert_int_equal(s->pods[0].request.v[RES_EPHEMERAL], 1000);
}

static void test_requests_errors(void **state)
{
	struct sink *s = *state;
	/* The house style's example message (k8s_json.h). */
	assert_load_error(s, "pods.json",
			  "{'kind':'Pod','metadata':{'name':'web-7'},'spec':{'containers':["
			  "{'name':'c','resources':{'requests':{'cpu':'12x'}}}]}}",
			  -EINVAL, "pods.json: pod default/web-7: spec.containers[0]."
			  "resources.requests.cpu: \"12x\" is not a quantity");
	assert_load_error(s, "pods.json",
			  "{'kind':'Pod','metadata':{'name':'p'},'spec':{'initContainers':["
			  "{'name':'c'},{'name':'d','resources':{'limits':{'memory':true}}}]}}",
			  -EINVAL, "pods.json: pod default/p: spec.initContainers[1]."
			  "resources.limits.memory: expected a quantity (a string), "
			  "got a boolean");
	assert_load_error(s, "pods.json",
			  "{'kind':'Pod','metadata':{'name':'p'},'spec':{'overhead':"
			  "{'cpu':'9223372036854775807'}}}",
			  -EINVAL, "pods.json: pod default/p: spec.overhead.cpu: "
			  "\"9223372036854775807\" is too large (millicores must fit "
			  "in 64 bits)");
	assert_load_error(s, "pods.json",
			  "{'kind':'Pod','metadata':{'name':'p'},'spec':{'containers':["
			  "{'resources':{'requests':{'memory':'7Ei'}}},"
			  "{'resources':{'requests':{'memory':'7Ei'}}}]}}",
			  -EINVAL, "pods.json: pod default/p: spec.containers[1]."
			  "resources.requests: the pod's total memory does not fit in "
			  "64 bits");
	assert_load_error(s, "pods.json",
			  "{'kind':'Pod','metadata':{'name':'p'},'spec':{'containers':"
			  "{'name':'c'}}}",
			  -EINVAL, "pods.json: pod default/p: spec.containers: "
			  "expected an array, got an object");
}

/* --- pods: pod-level resources ---------------------------------------------- */

/* A pod's effective requests as its pod-level resources make them. */
struct level_case {
	const char *spec;
	int64_t cpu, mem, nonzero_cpu, nonzero_mem;
	int64_t huge_2mi, huge_1gi; /* -1: not registered / not checked */
};

static void check_level_case(struct sink *s, size_t i, const struct level_case *c)
{
	if (load_pod(s, c->spec) != 0)
		fail_msg("case %zu: %s", i, s->err);
	const struct pod_spec *p = &s->pods[0];
	if (p->request.v[RES_CPU] != c->cpu || p->request.v[RES_MEMORY] != c->mem ||
	    p->nonzero_cpu_milli != c->nonzero_cpu ||
	    p->nonzero_mem_bytes != c->nonzero_mem)
		fail_msg("case %zu: cpu %lld mem %lld nonzero %lld %lld", i,
			 (long long)p->request.v[RES_CPU],
			 (long long)p->request.v[RES_MEMORY],
			 (long long)p->nonzero_cpu_milli,
			 (long long)p->nonzero_mem_bytes);
	if (c->huge_2mi >= 0)
		assert_int_equal(p->request.v[res_index(s, "hugepages-2Mi")], c->huge_2mi);
	if (c->huge_1gi >= 0)
		assert_int_equal(p->request.v[res_index(s, "hugepages-1Gi")], c->huge_1gi);
}

/* PodRequests with pod-level resources: the cases of TestPodLevelResourceRequests
 * (k8s.io/component-helpers/resource/helpers_test.go) that kube-apiserver
 * accepts, and the scoring stand-ins (NonMissingContainerRequests), which a
 * pod-level request replaces (noderesources/resource_allocation.go,
 * calculatePodResourceRequest). */
static void test_pod_level_requests(void **state)
{
	struct sink *s = *state;
	const int64_t mi = MIB, nz_mem = 200 * MIB;
	static const char sidecars[] =
		"'containers':[{'resources':{'requests':{'memory':'3Mi','cpu':'2m'}}}],"
		"'initContainers':[{'restartPolicy':'Always','resources':{'requests':"
		"{'memory':'5Mi','cpu':'4m'}}},{'resources':{'requests':{'memory':'6Mi',"
		"'cpu':'8m'}}}]";
	char with_level[1024];
	snprintf(with_level, sizeof(with_level), "'resources':{'requests':{'memory':"
		 "'15Mi','cpu':'18m'}},%s", sidecars);
	const struct level_case cases[] = {
		/* "pod level memory resource with SkipPodLevelResources false" */
		{"'resources':{'requests':{'memory':'2Mi'}}", 0, 2 * mi, 0, 2 * mi, -1, -1},
		/* "pod level memory and container level cpu resources": the memory
		 * stand-in (200Mi) is replaced by the pod's 2Mi. */
		{"'resources':{'requests':{'memory':'2Mi'}},'containers':[{'resources':"
		 "{'requests':{'cpu':'2m'}}}]", 2, 2 * mi, 2, 2 * mi, -1, -1},
		/* "both container-level and pod-level resources set" */
		{"'resources':{'requests':{'memory':'6Mi','cpu':'8m'}},'containers':[{"
		 "'resources':{'requests':{'memory':'3Mi','cpu':'2m'}}}]",
		 8, 6 * mi, 8, 6 * mi, -1, -1},
		/* "container-level resources, init and sidecar container set":
		 * 3+5 and max(8, 6+5) */
		{sidecars, 12, 11 * mi, 12, 11 * mi, -1, -1},
		/* "pod-level resources, container-level resources, init and
		 * sidecar container set" */
		{with_level, 18, 15 * mi, 18, 15 * mi, -1, -1},
		/* "pod-level resources, hugepage request/limit single page size" */
		{"'resources':{'limits':{'hugepages-2Mi':'2Mi'},'requests':{'memory':"
		 "'10Mi','hugepages-2Mi':'2Mi'}}", 0, 10 * mi, 0, 10 * mi, 2 * mi, -1},
		/* "... container-level resources, hugepage request/limit single
		 * page size" */
		{"'resources':{'limits':{'hugepages-2Mi':'10Mi'},'requests':{'cpu':'1',"
		 "'hugepages-2Mi':'10Mi'}},'containers':[{'resources':{'limits':"
		 "{'hugepages-2Mi':'6Mi'},'requests':{'hugepages-2Mi':'6Mi'}}}]",
		 1000, 0, 1000, nz_mem, 10 * mi, -1},
		/* "... multiple page sizes between pod-level and container-level":
		 * the container's 1Gi pages become the pod's limit and request
		 * (defaultHugePagePodLimits, defaultPodRequests), its memory the
		 * pod's request. */
		{"'resources':{'limits':{'hugepages-2Mi':'10Mi'},'requests':{'cpu':'1',"
		 "'hugepages-2Mi':'10Mi'}},'containers':[{'resources':{'limits':"
		 "{'hugepages-1Gi':'1Gi'},'requests':{'memory':'4Mi','hugepages-1Gi':"
		 "'1Gi'}}}]", 1000, 4 * mi, 1000, 4 * mi, 10 * mi, GIB},
		/* Overhead is added on top (PodRequests: after the pod level). */
		{"'resources':{'requests':{'cpu':'1'}},'overhead':{'cpu':'250m',"
		 "'memory':'1Mi'},'containers':[{}]", 1250, mi, 1250, nz_mem + mi, -1, -1},
		/* kube-apiserver's defaulting (pkg/apis/core/v1/defaults.go,
		 * defaultPodRequests): with pod limits and no container request,
		 * the requests are the limits ... */
		{"'resources':{'limits':{'cpu':'2','memory':'1Gi'}},'containers':[{}]",
		 2000, GIB, 2000, GIB, -1, -1},
		/* ... with a container requesting it, the containers' aggregate,
		 * even for a resource the pod does not limit (cpu here): no
		 * stand-in for the container that requests nothing. */
		{"'resources':{'limits':{'memory':'1Gi'}},'containers':[{'resources':"
		 "{'requests':{'cpu':'500m'}}},{}]", 500, GIB, 500, GIB, -1, -1},
		/* Requests only: nothing is defaulted; cpu keeps its stand-in. */
		{"'resources':{'requests':{'memory':'1Gi'}},'containers':[{}]",
		 0, GIB, 100, GIB, -1, -1},
		/* {} sets nothing (but makes QoS the pod's, below). */
		{"'resources':{},'containers':[{'resources':{'requests':{'cpu':'1'}}}]",
		 1000, 0, 1000, nz_mem, -1, -1},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		check_level_case(s, i, &cases[i]);

	/* The same in a cluster file: a bound pod counts what it requests. */
	s->ctx.cluster_file = true;
	assert_int_equal(load_pod(s, "'nodeName':'n1','resources':{'requests':{'cpu':"
				     "'3'}},'containers':[{}]"), 0);
	s->ctx.cluster_file = false;
	assert_int_equal(s->pods[0].request.v[RES_CPU], 3000);
}

/* QoS with pod-level resources (pkg/apis/core/helper/qos/qos.go,
 * ComputePodQOS: spec.resources set decides alone), seen through the
 * static CPU manager's exclusive cores, which only a Guaranteed pod gets. */
static void test_pod_level_qos(void **state)
{
	struct sink *s = *state;
	static const char guaranteed_containers[] =
		"'containers':[{'resources':{'limits':{'cpu':'2','memory':'1Gi'}}}]";
	static const struct {
		const char *spec;
		unsigned cores;
	} cases[] = {
		/* Guaranteed containers, no pod level: 2 cores. */
		{guaranteed_containers, 2},
		/* The same with spec.resources: {}: BestEffort by the pod. */
		{"'resources':{},'containers':[{'resources':{'limits':{'cpu':'2',"
		 "'memory':'1Gi'}}}]", 0},
		/* Pod limits only: requests default to them: Guaranteed. */
		{"'resources':{'limits':{'cpu':'2','memory':'1Gi'}},'containers':[{}]", 2},
		{"'resources':{'requests':{'cpu':'3','memory':'1Gi'},'limits':{'cpu':'3',"
		 "'memory':'1Gi'}},'containers':[{}]", 3},
		/* cpu request below its limit: Burstable. */
		{"'resources':{'requests':{'cpu':'1'},'limits':{'cpu':'2',"
		 "'memory':'1Gi'}},'containers':[{}]", 0},
		/* No memory limit: Burstable. */
		{"'resources':{'limits':{'cpu':'2'}},'containers':[{}]", 0},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (load_pod(s, cases[i].spec) != 0)
			fail_msg("case %zu: %s", i, s->err);
		if (s->pods[0].exclusive_cores != cases[i].cores)
			fail_msg("case %zu: %u exclusive cores, want %u", i,
				 s->pods[0].exclusive_cores, cases[i].cores);
	}
}

/* What kube-apiserver refuses in spec.resources (pkg/apis/core/validation/
 * validation.go: validatePodResources, validateResourceRequirements,
 * validatePodResourceConsistency), after its defaulting; named by path. */
static void test_pod_level_errors(void **state)
{
	struct sink *s = *state;
	static const struct {
		const char *spec;
		const char *want;
	} bad[] = {
		/* Only cpu, memory and hugepages-<size>
		 * (IsSupportedPodLevelResource). */
		{"'resources':{'requests':{'ephemeral-storage':'1Gi'}}",
		 "spec.resources.requests.ephemeral-storage: \"ephemeral-storage\" is not "
		 "a pod-level resource (cpu, memory and hugepages-<size> are)"},
		{"'resources':{'limits':{'nvidia.com/gpu':'1'}}",
		 "spec.resources.limits.nvidia.com/gpu: \"nvidia.com/gpu\" is not a "
		 "pod-level resource"},
		{"'resources':{'requests':{'cpu':'2'},'limits':{'cpu':'1'}}",
		 "spec.resources.requests.cpu: 2000m must be less than or equal to the cpu "
		 "limit of 1000m"},
		/* The containers' aggregate must fit in the pod's request (the
		 * message kube-apiserver gives: "must be greater than or equal to
		 * aggregate container requests of 2"). */
		{"'resources':{'requests':{'cpu':'1'}},'containers':[{'resources':"
		 "{'requests':{'cpu':'1500m'}}},{'resources':{'requests':{'cpu':'500m'}}}]",
		 "spec.resources.requests.cpu: 1000m must be greater than or equal to the "
		 "aggregate container requests of 2000m"},
		/* KEP-2837's example 2: container limits default their requests,
		 * which default the pod's request (120Gi) above its limit. */
		{"'resources':{'limits':{'memory':'100Gi'}},'containers':[{'resources':"
		 "{'limits':{'memory':'60Gi'}}},{'resources':{'limits':{'memory':"
		 "'60Gi'}}}]",
		 "spec.resources.requests.memory: 128849018880 must be less than or equal "
		 "to the memory limit of 107374182400"},
		/* No container limit above the pod's. */
		{"'resources':{'limits':{'memory':'1Gi'}},'containers':[{'resources':"
		 "{'limits':{'memory':'2Gi'}}}]",
		 "spec.containers[0].resources.limits.memory: 2147483648 must be less than "
		 "or equal to the pod's limit of 1073741824 (spec.resources.limits)"},
		/* Hugepages are not overcommitted, come in whole pages, and need
		 * cpu or memory beside them. */
		{"'resources':{'requests':{'memory':'1Gi','hugepages-2Mi':'4Mi'},"
		 "'limits':{'hugepages-2Mi':'6Mi'}}",
		 "spec.resources.requests.hugepages-2Mi: 4194304 must equal its limit of "
		 "6291456: hugepages are not overcommitted"},
		{"'resources':{'requests':{'memory':'1Gi','hugepages-2Mi':'4Mi'}}",
		 "spec.resources.requests.hugepages-2Mi: a hugepages request needs a "
		 "limit"},
		{"'resources':{'requests':{'memory':'1Gi'},'limits':{'hugepages-2Mi':"
		 "'3Mi'}}",
		 "spec.resources.limits.hugepages-2Mi: \"3Mi\" is not a whole multiple of "
		 "the page size of hugepages-2Mi"},
		{"'resources':{'limits':{'hugepages-x':'2Mi','cpu':'1'}}",
		 "spec.resources.limits.hugepages-x: \"2Mi\" is not a whole multiple of "
		 "the page size of hugepages-x"},
		{"'resources':{'limits':{'hugepages-2Mi':'2Mi'}}",
		 "spec.resources: hugepages need a cpu or memory request or limit"},
		{"'resources':{'requests':{'cpu':'1'},'limits':{'hugepages-2Mi':'2Mi'}},"
		 "'containers':[{'resources':{'limits':{'hugepages-2Mi':'4Mi'}}}]",
		 "spec.containers[0].resources.limits.hugepages-2Mi: 4194304 must be less "
		 "than or equal to the pod's limit of 2097152"},
		{"'os':{'name':'windows'},'resources':{'requests':{'cpu':'1'}}",
		 "spec.resources: may not be set for a windows pod"},
		{"'resources':'1'", "spec.resources: expected an object, got a string"},
		{"'resources':{'requests':{'cpu':'-1'}}",
		 "spec.resources.requests.cpu: \"-1\" is negative"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char want[512];
		assert_int_equal(load_pod(s, bad[i].spec), -EINVAL);
		snprintf(want, sizeof(want), "pods.json: pod default/p: %s", bad[i].want);
		if (strncmp(s->err, want, strlen(want)) != 0)
			fail_msg("case %zu: got \"%s\", want \"%s...\"", i, s->err, want);
	}
	/* A producer may not register a hugepages size by naming it. */
	s->ctx.no_new_resources = true;
	assert_int_equal(load_pod(s, "'resources':{'requests':{'cpu':'1',"
				     "'hugepages-1Mi':'1Mi'},'limits':{'hugepages-1Mi':"
				     "'1Mi'}}"), -EPERM);
	s->ctx.no_new_resources = false;
}

/* --- pods: node selection --------------------------------------------------- */

static void test_node_selector(void **state)
{
	struct sink *s = *state;
	assert_int_equal(load_pod(s, "'nodeSelector':{'zone':'a','disk':'ssd',"
				     "'kubernetes.io/os':'linux','empty':''}"), 0);
	const struct pod_spec *p = &s->pods[0];
	assert_int_equal(p->n_selector, 4);
	for (int i = 1; i < p->n_selector; i++)
		assert_true(p->selector[i - 1].key < p->selector[i].key);
	for (int i = 0; i < p->n_selector; i++)
		if (p->selector[i].key == id(s, "disk"))
			assert_int_equal(p->selector[i].value, id(s, "ssd"));

	char json[4096];
	size_t used = 0;
	for (int i = 0; i <= POD_MAX_SELECTOR; i++)
		used += (size_t)snprintf(json + used, sizeof(json) - used,
					 "%s'k%d':'v'", i ? "," : "", i);
	char spec[4200];
	snprintf(spec, sizeof(spec), "'nodeSelector':{%s}", json);
	assert_int_equal(load_pod(s, spec), -ENOSPC);
	assert_string_equal(s->err, "pods.json: pod default/p: spec.nodeSelector: "
				    "17 entries, at most 16");
}

/* Issue 41: Kubernetes' own limits on label keys and values, as
 * k8s.io/apimachinery checks them: pkg/util/validation/validation.go
 * (IsQualifiedName: an optional DNS-1123 subdomain prefix of at most 253
 * bytes, '/', a name of 1..63 of [A-Za-z0-9] '-' '_' '.' starting and
 * ending with an alphanumeric; IsValidLabelValue: empty or such a name)
 * and pkg/apis/meta/v1/validation/validation.go (ValidateLabels on
 * metadata.labels and nodeSelector; ValidateLabelSelectorRequirement on a
 * selector's key and In/NotIn values). Before, a 1,000-byte label value
 * went into the string table for good. */
static void test_label_limits(void **state)
{
	struct sink *s = *state;
	char big[1001], json[2048], name63[64], name64[65], prefix254[255];
	memset(big, 'v', 1000);
	big[1000] = '\0';
	memset(name63, 'a', 63);
	name63[63] = '\0';
	memset(name64, 'a', 64);
	name64[64] = '\0';
	memset(prefix254, 'p', 254);
	prefix254[254] = '\0';

	/* Valid at the limits. */
	snprintf(json, sizeof(json), "{'kind':'Node','metadata':{'name':'n1',"
		 "'labels':{'%s':'%s','example.com/%s':'','A_b.c-D':'x'}}}",
		 name63, name63, name63);
	assert_int_equal(load(s, "nodes.json", json), 0);

	/* A 1,000-byte value: refused, naming path, value (cut) and limit. */
	snprintf(json, sizeof(json), "{'kind':'Node','metadata':{'name':'n1',"
		 "'labels':{'zone':'%s'}}}", big);
	assert_int_equal(load(s, "nodes.json", json), -EINVAL);
	assert_non_null(strstr(s->err, "nodes.json: node n1: metadata.labels.zone: "
				       "\"vvvv"));
	assert_non_null(strstr(s->err, "...\" is not a valid label value (1000 bytes; "
				       "at most 63 characters"));
	assert_false(intern_find(s->ctx.strings, big, 1000, &(uint32_t){0}));
	/* 64 bytes: one too many. */
	snprintf(json, sizeof(json), "{'kind':'Node','metadata':{'name':'n1',"
		 "'labels':{'zone':'%s'}}}", name64);
	assert_int_equal(load(s, "nodes.json", json), -EINVAL);
	/* A key's name of 64 bytes, a prefix of 254, two slashes, bad chars. */
	snprintf(json, sizeof(json), "{'kind':'Node','metadata':{'name':'n1',"
		 "'labels':{'%s':'x'}}}", name64);
	assert_int_equal(load(s, "nodes.json", json), -EINVAL);
	assert_non_null(strstr(s->err, "its name (64 bytes) must be 1 to 63 characters"));
	snprintf(json, sizeof(json), "{'kind':'Node','metadata':{'name':'n1',"
		 "'labels':{'%s/a':'x'}}}", prefix254);
	assert_int_equal(load(s, "nodes.json", json), -EINVAL);
	assert_non_null(strstr(s->err, "its prefix (254 bytes) is not a DNS-1123 "
				       "subdomain (at most 253 bytes"));
	assert_load_error(s, "nodes.json", "{'kind':'Node','metadata':{'name':'n1',"
			  "'labels':{'a/b/c':'x'}}}", -EINVAL,
			  "nodes.json: node n1: metadata.labels.a/b/c: label key "
			  "\"a/b/c\" (5 bytes) is not a valid qualified name: at most "
			  "one '/'");
	assert_int_equal(load(s, "nodes.json", "{'kind':'Node','metadata':{'name':'n1',"
			      "'labels':{'Example.com/a':'x'}}}"), -EINVAL);
	assert_int_equal(load(s, "nodes.json", "{'kind':'Node','metadata':{'name':'n1',"
			      "'labels':{'-a':'x'}}}"), -EINVAL);
	assert_int_equal(load(s, "nodes.json", "{'kind':'Node','metadata':{'name':'n1',"
			      "'labels':{'a':'x y'}}}"), -EINVAL);
	assert_int_equal(load(s, "nodes.json", "{'kind':'Node','metadata':{'name':'n1',"
			      "'labels':{'/a':'x'}}}"), -EINVAL);

	/* A pod's labels, nodeSelector, a selector's matchLabels and its
	 * requirements' keys and In values; a node selector requirement's
	 * key. */
	snprintf(json, sizeof(json), "{'kind':'Pod','metadata':{'name':'p',"
		 "'labels':{'app':'%s'}},'spec':{}}", big);
	assert_int_equal(load(s, "pods.json", json), -EINVAL);
	assert_non_null(strstr(s->err, "metadata.labels.app: \"vvv"));
	snprintf(json, sizeof(json), "'nodeSelector':{'zone':'%s'}", big);
	assert_int_equal(load_pod(s, json), -EINVAL);
	assert_non_null(strstr(s->err, "spec.nodeSelector.zone: \"vvv"));
	snprintf(json, sizeof(json), "'nodeSelector':{'%s':'a'}", name64);
	assert_int_equal(load_pod(s, json), -EINVAL);
	snprintf(json, sizeof(json), "'affinity':{'podAffinity':{"
		 "'requiredDuringSchedulingIgnoredDuringExecution':[{'topologyKey':'zone',"
		 "'labelSelector':{'matchLabels':{'app':'%s'}}}]}}", big);
	assert_int_equal(load_pod(s, json), -EINVAL);
	assert_non_null(strstr(s->err, "labelSelector.matchLabels.app: \"vvv"));
	snprintf(json, sizeof(json), "'affinity':{'podAffinity':{"
		 "'requiredDuringSchedulingIgnoredDuringExecution':[{'topologyKey':'zone',"
		 "'labelSelector':{'matchExpressions':[{'key':'%s','operator':'Exists'}]}}]}}",
		 name64);
	assert_int_equal(load_pod(s, json), -EINVAL);
	assert_non_null(strstr(s->err, "matchExpressions[0].key: label key"));
	snprintf(json, sizeof(json), "'affinity':{'nodeAffinity':{"
		 "'requiredDuringSchedulingIgnoredDuringExecution':{'nodeSelectorTerms':[{"
		 "'matchExpressions':[{'key':'%s','operator':'Exists'}]}]}}}", name64);
	assert_int_equal(load_pod(s, json), -EINVAL);
	assert_non_null(strstr(s->err, "matchExpressions[0].key: label key"));
}

/* NodeAffinity (types.go NodeSelector, NodeSelectorTerm,
 * PreferredSchedulingTerm) into the shared pools. */
static void test_node_affinity(void **state)
{
	struct sink *s = *state;
	assert_int_equal(load_pod(s,
		"'affinity':{'nodeAffinity':{"
		" 'requiredDuringSchedulingIgnoredDuringExecution':{'nodeSelectorTerms':["
		"  {'matchExpressions':[{'key':'zone','operator':'In','values':['a','b']},"
		"                       {'key':'cores','operator':'Gt','values':['4']}]},"
		"  {'matchFields':[{'key':'metadata.name','operator':'NotIn','values':['n3']}],"
		"   'matchExpressions':[{'key':'gpu','operator':'DoesNotExist'}]},"
		"  {}]},"
		" 'preferredDuringSchedulingIgnoredDuringExecution':["
		"  {'weight':20,'preference':{'matchExpressions':["
		"   {'key':'ssd','operator':'Exists'},{'key':'mem','operator':'Lt',"
		"    'values':['12']}]}},"
		"  {'weight':100,'preference':{}}]}}"), 0);
	const struct pod_spec *p = &s->pods[0];
	assert_true(p->has_required);
	assert_int_equal(p->n_terms, 3);
	assert_int_equal(p->terms[0].first_expr, 0);
	assert_int_equal(p->terms[0].n_exprs, 2);
	assert_int_equal(p->terms[1].first_expr, 2);
	assert_int_equal(p->terms[1].n_exprs, 2);
	assert_int_equal(p->terms[2].n_exprs, 0);

	const struct sel_expr *e = p->exprs;
	assert_int_equal(e[0].key, id(s, "zone"));
	assert_int_equal(e[0].op, SEL_IN);
	assert_int_equal(e[0].field, 0);
	assert_int_equal(e[0].n_values, 2);
	assert_int_equal(p->values[e[0].first_value], id(s, "a"));
	assert_int_equal(p->values[e[0].first_value + 1], id(s, "b"));
	assert_int_equal(e[1].op, SEL_GT);
	assert_int_equal(e[1].number, 4);
	/* matchExpressions come before matchFields within a term. */
	assert_int_equal(e[2].key, id(s, "gpu"));
	assert_int_equal(e[2].op, SEL_DOES_NOT_EXIST);
	assert_int_equal(e[2].n_values, 0);
	assert_int_equal(e[3].key, id(s, "metadata.name"));
	assert_int_equal(e[3].field, 1);
	assert_int_equal(e[3].op, SEL_NOT_IN);
	assert_int_equal(p->values[e[3].first_value], id(s, "n3"));

	assert_int_equal(p->n_preferred, 2);
	assert_int_equal(p->preferred[0].weight, 20);
	assert_int_equal(p->preferred[0].term.first_expr, 4);
	assert_int_equal(p->preferred[0].term.n_exprs, 2);
	assert_int_equal(e[4].op, SEL_EXISTS);
	assert_int_equal(e[5].op, SEL_LT);
	assert_int_equal(e[5].number, 12);
	for (unsigned k = 0; k < p->n_exprs; k++)
		assert_int_equal(e[k].invalid, 0);
	assert_int_equal(p->preferred[1].weight, 100);
	assert_int_equal(p->preferred[1].term.n_exprs, 0);
	assert_int_equal(p->n_exprs, 6);
	assert_int_equal(p->n_values, 5);

	/* Required but no terms: present, matches nothing (model.h). */
	assert_int_equal(load_pod(s, "'affinity':{'nodeAffinity':{"
				     "'requiredDuringSchedulingIgnoredDuringExecution':"
				     "{'nodeSelectorTerms':[]}}}"), 0);
	assert_true(s->pods[0].has_required);
	assert_int_equal(s->pods[0].n_terms, 0);
	assert_int_equal(load_pod(s, "'affinity':{'nodeAffinity':{}}"), 0);
	assert_false(s->pods[0].has_required);
}

/* What kube-apiserver accepts in a node selector requirement but
 * labels.NewRequirement refuses (apimachinery/pkg/labels/selector.go: every
 * value must be a valid label value, and a Gt / Lt value an int64): in a
 * required term the requirement is read and marked invalid, its term then
 * matching no node (component-helpers nodeaffinity.go, LazyErrorNodeSelector;
 * workers/plugins.c); in a preferred term the pod is refused, as
 * NewPreferredSchedulingTerms fails NodeAffinity's PreScore. Before, a Gt /
 * Lt value that was no integer refused the pod, and an invalid In / NotIn
 * value was compared as it stood (NotIn then matched every node). */
static void test_node_affinity_invalid_values(void **state)
{
	struct sink *s = *state;
	static const struct {
		const char *expr;
		int invalid;
	} cases[] = {
		/* nodeaffinity/node_affinity_test.go TestNodeAffinity: "Pod with
		 * an invalid value in Affinity term won't be scheduled onto the
		 * node" */
		{"{'key':'foo','operator':'NotIn','values':['invalid value: ___@#$%^']}", 1},
		{"{'key':'foo','operator':'In','values':['ok','-bad']}", 1},
		{"{'key':'foo','operator':'In','values':['',"
		 "'a234567890123456789012345678901234567890123456789012345678901234']}", 1},
		{"{'key':'k','operator':'Gt','values':['1.5']}", 1},
		{"{'key':'k','operator':'Lt','values':['99999999999999999999']}", 1},
		/* an int64, but "-1" is not a valid label value */
		{"{'key':'k','operator':'Gt','values':['-1']}", 1},
		{"{'key':'k','operator':'Gt','values':['+1']}", 1},
		{"{'key':'k','operator':'Lt','values':['7']}", 0},
		{"{'key':'foo','operator':'In','values':['','a-b_c.d']}", 0},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char spec[1024];
		snprintf(spec, sizeof(spec), "'affinity':{'nodeAffinity':{"
			 "'requiredDuringSchedulingIgnoredDuringExecution':{"
			 "'nodeSelectorTerms':[{'matchExpressions':[%s]},"
			 "{'matchExpressions':[{'key':'zone','operator':'Exists'}]}]}}}",
			 cases[i].expr);
		assert_int_equal(load_pod(s, spec), 0);
		const struct pod_spec *p = &s->pods[0];
		assert_int_equal(p->n_terms, 2);
		assert_int_equal(p->exprs[0].invalid, cases[i].invalid);
		assert_int_equal(p->exprs[1].invalid, 0);
		if (cases[i].invalid && (p->exprs[0].op == SEL_GT || p->exprs[0].op == SEL_LT))
			assert_int_equal(p->exprs[0].number, 0);
	}

	/* A field selector's value is not a label value: fields.OneTermEqual-
	 * Selector takes any string. */
	assert_int_equal(load_pod(s, "'affinity':{'nodeAffinity':{"
		"'requiredDuringSchedulingIgnoredDuringExecution':{'nodeSelectorTerms':["
		"{'matchFields':[{'key':'metadata.name','operator':'In',"
		"'values':['Node 1!']}]}]}}}"), 0);
	assert_int_equal(s->pods[0].exprs[0].invalid, 0);

	/* In a preferred term: refused. */
	assert_int_equal(load_pod(s, "'affinity':{'nodeAffinity':{"
		"'preferredDuringSchedulingIgnoredDuringExecution':[{'weight':5,"
		"'preference':{'matchExpressions':[{'key':'mem','operator':'Lt',"
		"'values':['-12']}]}}]}}"), -EINVAL);
	assert_string_equal(s->err, "pods.json: pod default/p: spec.affinity."
		"nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]."
		"preference.matchExpressions[0].values[0]: \"-12\" does not parse as "
		"a requirement's value (an integer that is a valid label value); "
		"kube-scheduler's NodeAffinity PreScore fails on such a preferred term");
	assert_int_equal(load_pod(s, "'affinity':{'nodeAffinity':{"
		"'preferredDuringSchedulingIgnoredDuringExecution':[{'weight':5,"
		"'preference':{'matchExpressions':[{'key':'a','operator':'In',"
		"'values':['x y']}]}}]}}"), -EINVAL);
	assert_string_equal(s->err, "pods.json: pod default/p: spec.affinity."
		"nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]."
		"preference.matchExpressions[0].values[0]: \"x y\" does not parse as "
		"a requirement's value (a valid label value); kube-scheduler's "
		"NodeAffinity PreScore fails on such a preferred term");
}

/* pkg/apis/core/validation/validation.go: ValidateNodeSelectorRequirement,
 * ValidateNodeFieldSelectorRequirement, validatePreferredSchedulingTerms. */
static void test_node_affinity_validation(void **state)
{
	struct sink *s = *state;
	static const struct {
		const char *expr;
		const char *want;
	} cases[] = {
		{"{'key':'k','operator':'In'}",
		 "matchExpressions[0].values: must not be empty for operator In"},
		{"{'key':'k','operator':'NotIn','values':[]}",
		 "matchExpressions[0].values: must not be empty for operator NotIn"},
		{"{'key':'k','operator':'Exists','values':['x']}",
		 "matchExpressions[0].values: must be empty for operator Exists"},
		{"{'key':'k','operator':'DoesNotExist','values':['x']}",
		 "matchExpressions[0].values: must be empty for operator DoesNotExist"},
		{"{'key':'k','operator':'Gt','values':['1','2']}",
		 "matchExpressions[0].values: 2 values, operator Gt takes exactly one"},
		{"{'key':'k','operator':'Lt','values':[]}",
		 "matchExpressions[0].values: 0 values, operator Lt takes exactly one"},
		{"{'key':'k','operator':'Near','values':['x']}",
		 "matchExpressions[0].operator: \"Near\" is not In, NotIn, Exists, "
		 "DoesNotExist, Gt or Lt"},
		{"{'operator':'Exists'}", "matchExpressions[0].key: missing"},
		{"{'key':'k','operator':'In','values':[1]}",
		 "matchExpressions[0].values[0]: expected a string, got a number"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char spec[1024], want[512];
		snprintf(spec, sizeof(spec), "'affinity':{'nodeAffinity':{"
			 "'requiredDuringSchedulingIgnoredDuringExecution':{"
			 "'nodeSelectorTerms':[{'matchExpressions':[%s]}]}}}",
			 cases[i].expr);
		snprintf(want, sizeof(want), "pods.json: pod default/p: spec.affinity."
			 "nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
			 "nodeSelectorTerms[0].%s", cases[i].want);
		assert_int_equal(load_pod(s, spec), -EINVAL);
		assert_string_equal(s->err, want);
	}

	static const struct {
		const char *field;
		const char *want;
	} fields[] = {
		{"{'key':'metadata.labels','operator':'In','values':['x']}",
		 "key: \"metadata.labels\" is not a supported field (only metadata.name)"},
		{"{'key':'metadata.name','operator':'Exists'}",
		 "operator: \"Exists\" is not In or NotIn"},
		{"{'key':'metadata.name','operator':'In','values':['a','b']}",
		 "values: 2 values, a field selector takes exactly one"},
	};
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		char spec[1024], want[512];
		snprintf(spec, sizeof(spec), "'affinity':{'nodeAffinity':{"
			 "'preferredDuringSchedulingIgnoredDuringExecution':[{'weight':1,"
			 "'preference':{'matchFields':[%s]}}]}}", fields[i].field);
		snprintf(want, sizeof(want), "pods.json: pod default/p: spec.affinity."
			 "nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]."
			 "preference.matchFields[0].%s", fields[i].want);
		assert_int_equal(load_pod(s, spec), -EINVAL);
		assert_string_equal(s->err, want);
	}

	assert_load_error(s, "pods.json",
			  "{'kind':'Pod','metadata':{'name':'p'},'spec':{'affinity':{"
			  "'nodeAffinity':{'preferredDuringSchedulingIgnoredDuringExecution':"
			  "[{'weight':0,'preference':{}}]}}}}",
			  -EINVAL, "pods.json: pod default/p: spec.affinity.nodeAffinity."
			  "preferredDuringSchedulingIgnoredDuringExecution[0].weight: "
			  "0 is not in 1..100");
	assert_load_error(s, "pods.json",
			  "{'kind':'Pod','metadata':{'name':'p'},'spec':{'affinity':{"
			  "'nodeAffinity':{'preferredDuringSchedulingIgnoredDuringExecution':"
			  "[{'weight':101,'preference':{}}]}}}}",
			  -EINVAL, "pods.json: pod default/p: spec.affinity.nodeAffinity."
			  "preferredDuringSchedulingIgnoredDuringExecution[0].weight: "
			  "101 is not in 1..100");
}

/* Loads a pod whose spec is `before`, `arg`, `after`. */
static int load_affinity(struct sink *s, const char *before, const char *arg,
			 const char *after)
{
	char *spec;
	assert_true(asprintf(&spec, "%s%s%s", before, arg, after) > 0);
	int rc = load_pod(s, spec);
	free(spec);
	return rc;
}

#define REQUIRED_BEFORE                                                          \
	"'affinity':{'nodeAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':" \
	"{'nodeSelectorTerms':["
#define REQUIRED_AFTER "]}}}"

static void test_node_affinity_limits(void **state)
{
	struct sink *s = *state;
	char terms[8192];
	size_t used = 0;
	/* POD_MAX_TERMS + 1 terms. */
	for (int i = 0; i <= POD_MAX_TERMS; i++)
		used += (size_t)snprintf(terms + used, sizeof(terms) - used, "%s{}",
					 i ? "," : "");
	assert_int_equal(load_affinity(s, REQUIRED_BEFORE, terms, REQUIRED_AFTER), -ENOSPC);
	assert_non_null(strstr(s->err, "nodeSelectorTerms: 9 terms, at most 8 "
				       "(POD_MAX_TERMS)"));

	/* POD_MAX_EXPRS + 1 expressions, split over two terms at the 20th. */
	used = (size_t)snprintf(terms, sizeof(terms), "{'matchExpressions':[");
	for (int i = 0; i <= POD_MAX_EXPRS; i++)
		used += (size_t)snprintf(terms + used, sizeof(terms) - used,
					 "%s{'key':'k%d','operator':'Exists'}",
					 i == 0 ? "" : i == 20 ? "]},{'matchExpressions':[" :
					 ",", i);
	snprintf(terms + used, sizeof(terms) - used, "]}");
	assert_int_equal(load_affinity(s, REQUIRED_BEFORE, terms, REQUIRED_AFTER), -ENOSPC);
	assert_non_null(strstr(s->err, "nodeSelectorTerms[1].matchExpressions[12]: "
				       "more than 32 node selector requirements in "
				       "the pod (POD_MAX_EXPRS)"));

	/* POD_MAX_VALUES + 1 values. */
	used = (size_t)snprintf(terms, sizeof(terms), "{'matchExpressions':[{'key':'k',"
				"'operator':'In','values':[");
	for (int i = 0; i <= POD_MAX_VALUES; i++)
		used += (size_t)snprintf(terms + used, sizeof(terms) - used, "%s'v%d'",
					 i ? "," : "", i);
	snprintf(terms + used, sizeof(terms) - used, "]}]}");
	assert_int_equal(load_affinity(s, REQUIRED_BEFORE, terms, REQUIRED_AFTER), -ENOSPC);
	assert_non_null(strstr(s->err, "matchExpressions[0].values: more than 64 "
				       "node selector values in the pod (POD_MAX_VALUES)"));

	used = 0;
	for (int i = 0; i <= POD_MAX_PREFERRED; i++)
		used += (size_t)snprintf(terms + used, sizeof(terms) - used,
					 "%s{'weight':1,'preference':{}}", i ? "," : "");
	assert_int_equal(load_affinity(s, "'affinity':{'nodeAffinity':{"
				       "'preferredDuringSchedulingIgnoredDuringExecution':[",
				       terms, "]}}"), -ENOSPC);
	assert_non_null(strstr(s->err, "preferredDuringSchedulingIgnoredDuringExecution: "
				       "9 terms, at most 8 (POD_MAX_PREFERRED)"));
}

/* Toleration (types.go) and ValidateTolerations (validation.go). */
static void test_tolerations(void **state)
{
	struct sink *s = *state;
	assert_int_equal(load_pod(s, "'tolerations':["
		"{'key':'gpu','value':'yes','effect':'NoSchedule'},"
		"{'key':'spot','operator':'Exists','effect':'PreferNoSchedule'},"
		"{'operator':'Exists'},"
		"{'key':'node.kubernetes.io/unreachable','operator':'Exists',"
		" 'effect':'NoExecute','tolerationSeconds':300},"
		"{'key':'k','operator':'Equal','value':''}]"), 0);
	const struct pod_spec *p = &s->pods[0];
	assert_int_equal(p->n_tolerations, 5);
	assert_int_equal(p->tolerations[0].key, id(s, "gpu"));
	assert_int_equal(p->tolerations[0].value, id(s, "yes"));
	assert_int_equal(p->tolerations[0].op, TOL_EQUAL);
	assert_int_equal(p->tolerations[0].effect, TAINT_NO_SCHEDULE);
	assert_int_equal(p->tolerations[1].op, TOL_EXISTS);
	assert_int_equal(p->tolerations[1].effect, TAINT_PREFER_NO_SCHEDULE);
	assert_int_equal(p->tolerations[2].key, 0);
	assert_int_equal(p->tolerations[2].op, TOL_EXISTS);
	assert_int_equal(p->tolerations[2].effect, TAINT_EFFECT_ALL);
	assert_int_equal(p->tolerations[3].effect, TAINT_NO_EXECUTE);
	/* tolerationSeconds, for the taint manager (taint_eviction.go). */
	assert_int_equal(p->tolerations[3].has_seconds, 1);
	assert_int_equal(p->tolerations[3].seconds, 300);
	assert_int_equal(p->tolerations[0].has_seconds, 0);
	assert_int_equal(p->tolerations[4].op, TOL_EQUAL);
	assert_int_equal(p->tolerations[4].value, 0);

	static const struct {
		const char *tol;
		const char *want;
	} cases[] = {
		{"{'key':'k','operator':'Exists','value':'v'}",
		 ".value: \"v\" must be empty when operator is Exists"},
		{"{'value':'v'}", ".operator: an empty key needs operator Exists"},
		{"{'key':'k','operator':'Like'}", ".operator: \"Like\" is not Equal or Exists"},
		{"{'key':'k','effect':'NoRun'}",
		 ".effect: \"NoRun\" is not NoSchedule, PreferNoSchedule or NoExecute"},
		{"'k'", ": expected an object, got a string"},
		/* ValidateTolerations: "effect must be 'NoExecute' when
		 * `tolerationSeconds` is set". */
		{"{'key':'k','operator':'Exists','effect':'NoSchedule',"
		 "'tolerationSeconds':5}",
		 ".effect: \"NoSchedule\": effect must be NoExecute when "
		 "tolerationSeconds is set"},
		{"{'key':'k','operator':'Exists','tolerationSeconds':5}",
		 ".effect: \"\": effect must be NoExecute when tolerationSeconds "
		 "is set"},
		{"{'key':'k','operator':'Exists','effect':'NoExecute',"
		 "'tolerationSeconds':'5'}",
		 ".tolerationSeconds: expected an integer, got a string"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char spec[512], want[512];
		snprintf(spec, sizeof(spec), "'tolerations':[{'operator':'Exists'},%s]",
			 cases[i].tol);
		snprintf(want, sizeof(want), "pods.json: pod default/p: "
			 "spec.tolerations[1]%s", cases[i].want);
		assert_int_equal(load_pod(s, spec), -EINVAL);
		assert_string_equal(s->err, want);
	}
}

/* ContainerPort (types.go); SetDefaults_Pod's hostNetwork defaulting
 * (pkg/apis/core/v1/defaults.go, defaultHostNetworkPorts). Host ports come
 * from containers and sidecars (nodeports/node_ports.go reads
 * spec.containers); a plain init container has exited before they start. */
static void test_host_ports(void **state)
{
	struct sink *s = *state;
	assert_int_equal(load_pod(s,
		"'containers':[{'name':'a','ports':[{'containerPort':80},"
		"  {'containerPort':80,'hostPort':8080},"
		"  {'containerPort':53,'hostPort':53,'protocol':'UDP','hostIP':'10.0.0.1'}]}],"
		"'initContainers':[{'name':'i','ports':[{'containerPort':7,'hostPort':7}]},"
		"  {'name':'s','restartPolicy':'Always','ports':[{'containerPort':9,"
		"  'hostPort':9,'protocol':'SCTP'}]}]"), 0);
	const struct pod_spec *p = &s->pods[0];
	assert_int_equal(p->n_ports, 3);
	assert_int_equal(p->ports[0].port, 8080);
	assert_int_equal(p->ports[0].protocol, PROTO_TCP);
	assert_int_equal(p->ports[0].ip, 0);
	assert_int_equal(p->ports[1].port, 53);
	assert_int_equal(p->ports[1].protocol, PROTO_UDP);
	assert_int_equal(p->ports[1].ip, id(s, "10.0.0.1"));
	assert_int_equal(p->ports[2].port, 9);
	assert_int_equal(p->ports[2].protocol, PROTO_SCTP);

	assert_int_equal(load_pod(s, "'hostNetwork':true,'containers':[{'name':'a',"
				     "'ports':[{'containerPort':443}]}]"), 0);
	assert_int_equal(s->pods[0].n_ports, 1);
	assert_int_equal(s->pods[0].ports[0].port, 443);

	assert_int_equal(load_pod(s, "'containers':[{'name':'a','ports':["
				     "{'hostPort':70000}]}]"), -EINVAL);
	assert_string_equal(s->err, "pods.json: pod default/p: spec.containers[0]."
				    "ports[0].hostPort: 70000 is not a port (1..65535)");
	assert_int_equal(load_pod(s, "'containers':[{'name':'a','ports':["
				     "{'hostPort':1,'protocol':'QUIC'}]}]"), -EINVAL);
	assert_string_equal(s->err, "pods.json: pod default/p: spec.containers[0]."
				    "ports[0].protocol: \"QUIC\" is not TCP, UDP or SCTP");
	char spec[2048];
	size_t used = (size_t)snprintf(spec, sizeof(spec), "'containers':[{'ports':[");
	for (int i = 0; i <= POD_MAX_PORTS; i++)
		used += (size_t)snprintf(spec + used, sizeof(spec) - used,
					 "%s{'hostPort':%d}", i ? "," : "", 1000 + i);
	snprintf(spec + used, sizeof(spec) - used, "]}]");
	assert_int_equal(load_pod(s, spec), -ENOSPC);
	assert_string_equal(s->err, "pods.json: pod default/p: spec.containers[0]."
				    "ports[8]: more than 8 host ports in the pod");
}

/* The pod's group (shm/pod_group.h) as its interned encoding decodes. */
static struct pod_group group_of(struct sink *s, size_t pod)
{
	struct pod_group g;
	uint32_t id = s->pods[pod].group;
	assert_int_not_equal(id, 0);
	assert_int_equal(pod_group_decode(intern_str(s->ctx.strings, id),
					  intern_len(s->ctx.strings, id), &g), 0);
	return g;
}

/* Labels, pod (anti-)affinity in all four kinds, namespaces, matchLabelKeys
 * and spread constraints, as kubectl prints them. */
static void test_pod_groups(void **state)
{
	struct sink *s = *state;
	assert_int_equal(load(s, "pods.json",
		"{'kind':'Pod','metadata':{'name':'web-1','namespace':'shop',"
		"'labels':{'app':'web','pod-template-hash':'abc'}},'spec':{"
		"'affinity':{'podAntiAffinity':{"
		"'requiredDuringSchedulingIgnoredDuringExecution':[{"
		"'labelSelector':{'matchLabels':{'app':'web'}},"
		"'matchLabelKeys':['pod-template-hash','absent'],"
		"'topologyKey':'kubernetes.io/hostname'}],"
		"'preferredDuringSchedulingIgnoredDuringExecution':[{'weight':40,"
		"'podAffinityTerm':{'labelSelector':{'matchExpressions':[{'key':'tier',"
		"'operator':'NotIn','values':['db','cache']}]},'namespaces':['a','b'],"
		"'topologyKey':'topology.kubernetes.io/zone'}}]},"
		"'podAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':[{"
		"'labelSelector':{'matchExpressions':[{'key':'app','operator':'Exists'}]},"
		"'namespaceSelector':{},'topologyKey':'rack'}]}},"
		"'topologySpreadConstraints':[{'maxSkew':2,'topologyKey':"
		"'topology.kubernetes.io/zone','whenUnsatisfiable':'DoNotSchedule',"
		"'minDomains':3,'nodeTaintsPolicy':'Honor','labelSelector':"
		"{'matchLabels':{'app':'web'}}},{'maxSkew':1,'topologyKey':"
		"'kubernetes.io/hostname','whenUnsatisfiable':'ScheduleAnyway'}],"
		"'containers':[{'name':'c'}]}}"), 0);
	struct pod_group g = group_of(s, 0);
	assert_true(s->pods[0].group_terms);
	assert_int_equal(g.ns, id(s, "shop"));
	assert_int_equal(g.n_labels, 2);
	assert_int_equal(g.n_terms, 3);
	/* Sorted by kind: required affinity, required anti, preferred anti. */
	assert_int_equal(g.terms[0].kind, TERM_REQUIRED_AFFINITY);
	assert_true(g.terms[0].all_namespaces);
	assert_int_equal(g.terms[0].topology_key, id(s, "rack"));
	assert_int_equal(g.terms[1].kind, TERM_REQUIRED_ANTI_AFFINITY);
	/* app In (web) and the merged pod-template-hash In (abc); "absent" is
	 * not a label of the pod: no requirement. */
	assert_int_equal(g.terms[1].selector.n_reqs, 2);
	const struct group_req *r = &g.reqs[g.terms[1].selector.first_req + 1];
	assert_int_equal(r->key, id(s, "pod-template-hash"));
	assert_int_equal(g.values[r->first_value], id(s, "abc"));
	/* No namespaces and no selector: the pod's own. */
	assert_int_equal(g.terms[1].n_ns, 1);
	assert_int_equal(g.namespaces[g.terms[1].first_ns], id(s, "shop"));
	assert_int_equal(g.terms[2].kind, TERM_PREFERRED_ANTI_AFFINITY);
	assert_int_equal(g.terms[2].weight, 40);
	assert_int_equal(g.terms[2].n_ns, 2);
	assert_int_equal(g.n_spread, 2);
	assert_true(g.spread[0].hard);
	assert_int_equal(g.spread[0].min_domains, 3);
	assert_int_equal(g.spread[0].node_taints_policy, SPREAD_POLICY_HONOR);
	assert_int_equal(g.spread[0].node_affinity_policy, SPREAD_POLICY_HONOR);
	assert_false(g.spread[1].hard);
	assert_false(g.spread[1].selector.present); /* nil: matches nothing */
	assert_int_equal(g.spread[1].node_taints_policy, SPREAD_POLICY_IGNORE);
	/* The term matches its own pod (app=web in shop). */
	assert_true(group_term_matches(&g, &g.terms[1], &g));

	/* A pod with no labels and no terms still has a group: its namespace. */
	assert_int_equal(load_pod(s, "'containers':[{'name':'c'}]"), 0);
	g = group_of(s, 0);
	assert_false(s->pods[0].group_terms);
	assert_false(g.terminating);
	assert_int_equal(g.n_labels, 0);
	assert_int_equal(g.ns, id(s, "default"));
	uint32_t plain = s->pods[0].group;

	/* A terminating pod (metadata.deletionTimestamp, as kubectl prints a
	 * Terminating pod) is in a group of its own that spreading does not
	 * count (podtopologyspread/scoring_test.go "terminating Pods should be
	 * excluded"); null counts as absent. */
	assert_int_equal(load(s, "pods.json", "{'kind':'Pod','metadata':{'name':'p',"
		"'deletionTimestamp':'2024-05-01T10:00:00Z'},'spec':{}}"), 0);
	g = group_of(s, 0);
	assert_true(g.terminating);
	assert_int_not_equal(s->pods[0].group, plain);
	assert_int_equal(load(s, "pods.json", "{'kind':'Pod','metadata':{'name':'p',"
		"'deletionTimestamp':null},'spec':{}}"), 0);
	assert_int_equal(s->pods[0].group, plain);
	assert_int_equal(load(s, "pods.json", "{'kind':'Pod','metadata':{'name':'p',"
		"'deletionTimestamp':5},'spec':{}}"), -EINVAL);
	assert_string_equal(s->err, "pods.json: pod default/p: metadata.deletionTimestamp: "
			    "expected a string, got a number");

	/* Bad values, by path. */
	static const struct {
		const char *spec;
		const char *want;
	} bad[] = {
		{"'affinity':{'podAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':[{}]}}",
		 "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]."
		 "topologyKey: missing"},
		{"'affinity':{'podAntiAffinity':{'preferredDuringSchedulingIgnoredDuringExecution':"
		 "[{'weight':0,'podAffinityTerm':{'topologyKey':'k'}}]}}",
		 "spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]."
		 "weight: 0 is not 1..100"},
		{"'affinity':{'podAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':"
		 "[{'topologyKey':'k','labelSelector':{'matchExpressions':[{'key':'a',"
		 "'operator':'Gt','values':['1']}]}}]}}",
		 "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]."
		 "labelSelector.matchExpressions[0].operator: \"Gt\" is not In, NotIn"},
		{"'topologySpreadConstraints':[{'maxSkew':0,'topologyKey':'k',"
		 "'whenUnsatisfiable':'DoNotSchedule'}]",
		 "spec.topologySpreadConstraints[0].maxSkew: 0 is not greater than zero"},
		{"'topologySpreadConstraints':[{'maxSkew':1,'whenUnsatisfiable':'DoNotSchedule'}]",
		 "spec.topologySpreadConstraints[0].topologyKey: missing"},
		{"'topologySpreadConstraints':[{'maxSkew':1,'topologyKey':'k',"
		 "'whenUnsatisfiable':'Later'}]",
		 "spec.topologySpreadConstraints[0].whenUnsatisfiable: \"Later\" is not"},
		{"'topologySpreadConstraints':[{'maxSkew':1,'topologyKey':'k',"
		 "'whenUnsatisfiable':'ScheduleAnyway','minDomains':2}]",
		 "spec.topologySpreadConstraints[0].minDomains: only with"},
		{"'affinity':{'podAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':"
		 "[{'topologyKey':'k','namespaceSelector':{'matchLabels':{'team':'a'}}}]}}",
		 "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]."
		 "namespaceSelector: a selector with requirements needs the Namespace objects"},
		/* interpodaffinity/filtering_test.go: "PodAffinity fails PreFilter
		 * with an invalid affinity label syntax": kube's PreFilter refuses
		 * the value, as labels.NewRequirement does. */
		{"'affinity':{'podAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':"
		 "[{'topologyKey':'k','labelSelector':{'matchExpressions':[{'key':'service',"
		 "'operator':'In','values':['ok','{{.bad-value.}}']}]}}]}}",
		 "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]."
		 "labelSelector.matchExpressions[0].values[1]: \"{{.bad-value.}}\" is not a "
		 "valid label value"},
		{"'topologySpreadConstraints':[{'maxSkew':1,'topologyKey':'k',"
		 "'whenUnsatisfiable':'DoNotSchedule','labelSelector':{'matchLabels':"
		 "{'app':'-web'}}}]",
		 "spec.topologySpreadConstraints[0].labelSelector.matchLabels.app: \"-web\" is "
		 "not a valid label value"},
		{"'topologySpreadConstraints':[{'maxSkew':1,'topologyKey':'k',"
		 "'whenUnsatisfiable':'DoNotSchedule','labelSelector':{'matchLabels':"
		 "{'app':'a234567890123456789012345678901234567890123456789012345678901234'}}}]",
		 "spec.topologySpreadConstraints[0].labelSelector.matchLabels.app: "
		 "\"a234567890123456789012345678901234567890123456789012345678901234\" is "
		 "not a valid label value"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char want[512];
		assert_int_equal(load_pod(s, bad[i].spec), -EINVAL);
		snprintf(want, sizeof(want), "pods.json: pod default/p: %s", bad[i].want);
		if (strncmp(s->err, want, strlen(want)) != 0)
			fail_msg("case %zu: got \"%s\", want \"%s...\"", i, s->err, want);
	}
	/* The longest and shortest valid values, and "" (matches a label set
	 * to ""), are read. */
	assert_int_equal(load_pod(s, "'topologySpreadConstraints':[{'maxSkew':1,"
		"'topologyKey':'k','whenUnsatisfiable':'DoNotSchedule','labelSelector':"
		"{'matchLabels':{'a':'a23456789012345678901234567890123456789012345678901234"
		"567890123','b':'x','c':''},'matchExpressions':[{'key':'d','operator':'In',"
		"'values':['A-b_c.9','']}]}}]"), 0);
	/* A cluster file's pod keeps a value kube-apiserver took before it
	 * checked them (the pod is counted, not refused). */
	s->ctx.cluster_file = true;
	assert_int_equal(load_pod(s, "'nodeName':'n1','topologySpreadConstraints':"
		"[{'maxSkew':1,'topologyKey':'k','whenUnsatisfiable':'DoNotSchedule',"
		"'labelSelector':{'matchLabels':{'app':'{{.bad-value.}}'}}}]"), 0);
	s->ctx.cluster_file = false;
}

/* A cluster file's pods are counted (bound) or skipped (pending),
 * whatever they carry: none of the fields a pod to place is refused for
 * refuses them (ctx.cluster_file), and their groups still count. */
static void test_cluster_file_pods_count_whatever_they_carry(void **state)
{
	struct sink *s = *state;
	static const char *const carry[] = {
		"'schedulerName':'volcano'",
		"'volumes':[{'name':'d','persistentVolumeClaim':{'claimName':'c'}}]",
		"'volumes':[{'name':'e','ephemeral':{'volumeClaimTemplate':{}}}]",
		"'schedulingGates':[{'name':'g'}]",
		"'resourceClaims':[{'name':'gpu'}]",
		/* An unknown field (once 'someFutureField' here) is refused
		 * even in a cluster file under fieldValidation=Strict:
		 * tests/ingest/test_field_validation.c. */
	};
	for (size_t i = 0; i < sizeof(carry) / sizeof(carry[0]); i++) {
		char spec[512];
		snprintf(spec, sizeof(spec), "'nodeName':'n1',%s,'affinity':{"
			 "'podAntiAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':"
			 "[{'labelSelector':{'matchLabels':{'k8s-app':'kube-dns'}},"
			 "'topologyKey':'kubernetes.io/hostname'}]}},"
			 "'containers':[{'name':'c'}]", carry[i]);
		s->ctx.cluster_file = true;
		int rc = load_pod(s, spec);
		s->ctx.cluster_file = false;
		if (rc != 0)
			fail_msg("%s: %s", carry[i], s->err);
		assert_int_equal(s->n_pods, 1);
		assert_true(s->pods[0].group_terms);
		assert_null(s->metas[0].unsupported);
		/* The same pod to place: visited marked as not ours (another
		 * scheduler's) or as needing what shmsched does not do. */
		assert_int_equal(load_pod(s, spec), 0);
		if (i == 0)
			assert_true(s->metas[0].other_scheduler);
		else
			assert_non_null(s->metas[0].unsupported);
	}
}

/* spec.schedulerName picks the pod's profile (pod_spec.profile) among the
 * configuration's; a name no profile has is another scheduler's, and the
 * profile is part of the equivalence class. */
static void test_scheduler_name_picks_profile(void **state)
{
	struct sink *s = *state;
	static struct sched_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.n_profiles = 2;
	strcpy(cfg.profiles[0].scheduler_name, "default-scheduler");
	strcpy(cfg.profiles[1].scheduler_name, "packer");
	s->ctx.profiles = &cfg;
	static const struct {
		const char *spec;
		int profile; /* -1: another scheduler's */
	} cases[] = {
		{"", 0},
		{"'schedulerName':''", 0},
		{"'schedulerName':'default-scheduler'", 0},
		{"'schedulerName':'packer'", 1},
		{"'schedulerName':'Packer'", -1},
		{"'schedulerName':'volcano'", -1},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(load_pod(s, cases[i].spec), 0);
		assert_int_equal(s->n_pods, 1);
		assert_int_equal(s->metas[0].other_scheduler, cases[i].profile < 0);
		if (cases[i].profile >= 0)
			assert_int_equal(s->pods[0].profile, cases[i].profile);
	}
	/* Two pods alike but for their profile are in different classes. */
	assert_int_equal(load(s, "pods.json",
			      "[{'kind':'Pod','metadata':{'name':'a'},'spec':{}},"
			      "{'kind':'Pod','metadata':{'name':'b'},"
			      "'spec':{'schedulerName':'packer'}}]"), 0);
	assert_int_equal(s->n_pods, 2);
	assert_false(pod_class_equal(&s->pods[0], &s->pods[1]));
	assert_false(pod_static_equal(&s->pods[0], &s->pods[1]));
	assert_true(pod_class_hash(&s->pods[0]) != pod_class_hash(&s->pods[1]));
	/* Profiles without default-scheduler: a pod naming none is not ours. */
	strcpy(cfg.profiles[0].scheduler_name, "a");
	assert_int_equal(load_pod(s, ""), 0);
	assert_true(s->metas[0].other_scheduler);
	s->ctx.profiles = NULL;
	assert_int_equal(load_pod(s, ""), 0);
	assert_false(s->metas[0].other_scheduler);
	assert_int_equal(s->pods[0].profile, 0);
}

/* A pod to place that needs what shmsched does not do is visited whole,
 * with its own answer: kube-scheduler would hold a gated pod back
 * (schedulinggates/scheduling_gates.go, PreEnqueue) and bind claims
 * (volumebinding/volume_binding.go, dynamicresources/dynamicresources.go),
 * which shmsched does not. The first such field names the reason. */
static void test_unsupported_pods(void **state)
{
	struct sink *s = *state;
	static const struct {
		const char *spec;
		uint8_t kind;
		const char *want;
	} cases[] = {
		{"'schedulingGates':[{'name':'g'}]", K8S_UNSUPPORTED_SCHEDULING_GATES,
		 "spec.schedulingGates: the pod waits for its scheduling gates to be "
		 "removed, and shmsched keeps no pod waiting"},
		{"'resourceClaims':[{'name':'gpu'}]", K8S_UNSUPPORTED_RESOURCE_CLAIMS,
		 "spec.resourceClaims: dynamic resource allocation is not supported"},
		{"'volumes':[{'name':'a','emptyDir':{}},{'name':'d','persistentVolumeClaim':"
		 "{'claimName':'c'}}]", K8S_UNSUPPORTED_VOLUME_BINDING,
		 "spec.volumes[1].persistentVolumeClaim: volume binding is not supported"},
		{"'volumes':[{'name':'e','ephemeral':{'volumeClaimTemplate':{}}}]",
		 K8S_UNSUPPORTED_VOLUME_BINDING,
		 "spec.volumes[0].ephemeral: a generic ephemeral volume is a claim, and "
		 "volume binding is not supported"},
		/* The first field wins: gates before claims before volumes. */
		{"'volumes':[{'name':'d','persistentVolumeClaim':{'claimName':'c'}}],"
		 "'resourceClaims':[{'name':'x'}],'schedulingGates':[{'name':'g'}]",
		 K8S_UNSUPPORTED_SCHEDULING_GATES, "spec.schedulingGates: "},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char spec[512];
		snprintf(spec, sizeof(spec), "%s,'containers':[{'name':'c','resources':"
			 "{'requests':{'cpu':'250m'}}}]", cases[i].spec);
		if (load_pod(s, spec) != 0)
			fail_msg("case %zu: %s", i, s->err);
		assert_int_equal(s->n_pods, 1);
		assert_int_equal(s->metas[0].unsupported_kind, cases[i].kind);
		assert_non_null(s->metas[0].unsupported);
		if (strncmp(s->metas[0].unsupported, cases[i].want,
			    strlen(cases[i].want)) != 0)
			fail_msg("case %zu: got \"%s\"", i, s->metas[0].unsupported);
		/* The rest of the pod is decoded as any other's. */
		assert_int_equal(s->pods[0].request.v[RES_CPU], 250);
	}
	/* Still checked whole: a malformed pod is an error for the file. */
	assert_int_equal(load_pod(s, "'schedulingGates':[{'name':'g'}],'containers':"
				     "[{'resources':{'requests':{'cpu':'12x'}}}]"), -EINVAL);
	assert_non_null(strstr(s->err, "spec.containers[0].resources.requests.cpu: "
				       "\"12x\" is not a quantity"));
	assert_int_equal(load_pod(s, "'schedulingGates':{'name':'g'}"), -EINVAL);
	assert_string_equal(s->err, "pods.json: pod default/p: spec.schedulingGates: "
			    "expected an array, got an object");
	assert_int_equal(load_pod(s, "'volumes':[{'name':'d','persistentVolumeClaim':"
				     "'c'}]"), -EINVAL);
	assert_string_equal(s->err, "pods.json: pod default/p: spec.volumes[0]."
			    "persistentVolumeClaim: expected an object, got a string");

	/* A pod for another scheduler is not refused: it is visited marked as
	 * not ours (kube-scheduler ignores it), whatever else it carries. */
	assert_int_equal(load_pod(s, "'schedulerName':'my-scheduler',"
				     "'schedulingGates':[{'name':'g'}]"), 0);
	assert_int_equal(s->n_pods, 1);
	assert_true(s->metas[0].other_scheduler);
	assert_null(s->metas[0].unsupported);
	assert_int_equal(load_pod(s, "'schedulerName':'default-scheduler'"), 0);
	assert_false(s->metas[0].other_scheduler);
	/* A template must be ours, and placeable as given. */
	struct pod_spec tmpl;
	const char *json = "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"t\"},"
			   "\"spec\":{\"schedulerName\":\"volcano\"}}";
	assert_int_equal(k8s_load_one("t.json", json, strlen(json), &s->ctx, &tmpl,
				      NULL, s->err, sizeof(s->err)), -EINVAL);
	assert_non_null(strstr(s->err, "names a scheduler no profile"));
	json = "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"t\"},"
	       "\"spec\":{\"resourceClaims\":[{\"name\":\"gpu\"}]}}";
	assert_int_equal(k8s_load_one("t.json", json, strlen(json), &s->ctx, &tmpl,
				      NULL, s->err, sizeof(s->err)), -EINVAL);
	assert_string_equal(s->err, "spec.resourceClaims: dynamic resource allocation "
			    "is not supported: shmsched cannot place this pod");

	/* Empty forms of the same fields, and the default scheduler, are fine. */
	assert_int_equal(load_pod(s, "'schedulerName':'default-scheduler',"
				     "'affinity':{'podAffinity':{},'podAntiAffinity':null},"
				     "'topologySpreadConstraints':[],'schedulingGates':null,"
				     "'resourceClaims':[],'volumes':[{'name':'x','configMap':{}},"
				     "{'name':'y','persistentVolumeClaim':{}},{'name':'z',"
				     "'ephemeral':null}],"
				     "'priorityClassName':'high'"), 0);
	assert_null(s->metas[0].unsupported);
}

/* --- Namespaces, Services and controllers (k8s_objects) ------------------------ */

/* Reads the objects of `json` (with ' for ") into a fresh s->ctx.objects. */
static int read_objects(struct sink *s, const char *name, const char *json)
{
	size_t len = strlen(json);
	char *buf = malloc(len + 1);
	assert_non_null(buf);
	for (size_t i = 0; i < len; i++)
		buf[i] = json[i] == '\'' ? '"' : json[i];
	k8s_objects_destroy(s->ctx.objects);
	s->ctx.objects = k8s_objects_create();
	assert_non_null(s->ctx.objects);
	int rc = k8s_objects_read_buffer(name, buf, len, &s->ctx, s->err, sizeof(s->err));
	free(buf);
	return rc;
}

static void drop_objects(struct sink *s)
{
	k8s_objects_destroy(s->ctx.objects);
	s->ctx.objects = NULL;
}

/* The requirements of a selector, as "key op v1,v2;" text, in order. */
static const char *selector_text(struct sink *s, const struct pod_group *g,
				 const struct group_selector *sel, char *buf, size_t len)
{
	static const char *const ops[] = {[SEL_IN] = "In", [SEL_NOT_IN] = "NotIn",
					  [SEL_EXISTS] = "Exists",
					  [SEL_DOES_NOT_EXIST] = "DoesNotExist"};
	size_t used = 0;
	buf[0] = '\0';
	if (!sel->present)
		return "(none)";
	for (unsigned i = 0; i < sel->n_reqs; i++) {
		const struct group_req *r = &g->reqs[sel->first_req + i];
		used += (size_t)snprintf(buf + used, len - used, "%s %s", str(s, r->key),
					 ops[r->op]);
		for (unsigned v = 0; v < r->n_values; v++)
			used += (size_t)snprintf(buf + used, len - used, "%s%s",
						 v ? "," : " ", str(s, g->values[r->first_value + v]));
		used += (size_t)snprintf(buf + used, len - used, ";");
	}
	return buf;
}

/* The first pass reads Namespaces, Services, RCs, ReplicaSets and
 * StatefulSets as kubectl prints them, in lists of any kind; the second
 * passes over them, skips (cluster file) or refuses (pods file) the rest. */
static void test_objects_read(void **state)
{
	struct sink *s = *state;
	static const char file[] =
		"{'apiVersion':'v1','kind':'List','items':["
		"{'apiVersion':'v1','kind':'Namespace','metadata':{'name':'shop','labels':"
		" {'team':'a'}},'spec':{'finalizers':['kubernetes']},'status':{'phase':'Active'}},"
		"{'apiVersion':'v1','kind':'Service','metadata':{'name':'web','namespace':'shop'},"
		" 'spec':{'selector':{'app':'web'},'ports':[{'port':80}],'type':'ClusterIP'}},"
		"{'kind':'Service','metadata':{'name':'kubernetes'},'spec':{'ports':[{'port':443}]}},"
		"{'apiVersion':'apps/v1','kind':'ReplicaSet','metadata':{'name':'web-abc',"
		" 'namespace':'shop'},'spec':{'selector':{'matchLabels':{'app':'web',"
		" 'pod-template-hash':'abc'}}}},"
		"{'apiVersion':'apps/v1','kind':'StatefulSet','metadata':{'name':'db',"
		" 'namespace':'shop'},'spec':{'selector':{'matchExpressions':[{'key':'app',"
		" 'operator':'In','values':['db']}]}}},"
		"{'apiVersion':'v1','kind':'ReplicationController','metadata':{'name':'old'},"
		" 'spec':{'template':{'metadata':{'labels':{'run':'old'}}}}},"
		"{'kind':'ConfigMap','metadata':{'name':'c'}},"
		"{'kind':'Event','metadata':{'name':'e'}},{'kind':'ConfigMap','metadata':{'name':'d'}},"
		"{'kind':'Node','metadata':{'name':'n1'}},"
		"{'kind':'Pod','metadata':{'name':'p'},'spec':{'nodeName':'n1'}}]}\n"
		"{'kind':'NamespaceList','items':[{'metadata':{'name':'other'}}]}\n"
		"{'kind':'ConfigMapList','items':[{'metadata':{'name':'x'}}]}\n";
	assert_int_equal(read_objects(s, "all.json", file), 0);
	struct k8s_objects_counts c;
	k8s_objects_counts(s->ctx.objects, &c);
	assert_int_equal(c.namespaces, 2);
	assert_int_equal(c.services, 1); /* "kubernetes" selects no pod */
	assert_int_equal(c.controllers, 3);

	/* The second pass: nodes and pods visited, the objects passed over,
	 * other kinds skipped and counted in a cluster file ... */
	struct k8s_skipped sk = {0};
	s->ctx.skipped = &sk;
	s->ctx.cluster_file = true;
	assert_int_equal(load(s, "all.json", file), 0);
	s->ctx.cluster_file = false;
	s->ctx.skipped = NULL;
	assert_int_equal(s->n_nodes, 1);
	assert_int_equal(s->n_pods, 1);
	assert_int_equal(s->metas[0].index, 10); /* positions count every object */
	assert_int_equal(sk.total, 4);
	assert_int_equal(sk.n_kinds, 2);
	assert_string_equal(sk.kinds[0].kind, "ConfigMap");
	assert_int_equal(sk.kinds[0].count, 3);
	assert_string_equal(sk.kinds[1].kind, "Event");
	/* Another group's Workload (Kueue's) is one of those other kinds in
	 * a cluster file, though scheduling.k8s.io's is read. */
	s->ctx.skipped = &sk;
	s->ctx.cluster_file = true;
	assert_int_equal(load(s, "kueue.json", "{'apiVersion':'kueue.x-k8s.io/v1beta1',"
			      "'kind':'Workload','metadata':{'name':'job-a'},'spec':"
			      "{'podSets':[{'name':'main','count':3}]}}"), 0);
	s->ctx.cluster_file = false;
	s->ctx.skipped = NULL;
	assert_int_equal(sk.total, 5);
	assert_string_equal(sk.kinds[2].kind, "Workload");
	assert_int_equal(load(s, "kueue.json", "{'apiVersion':'kueue.x-k8s.io/v1beta1',"
			      "'kind':'Workload','metadata':{'name':'job-a'},'spec':{}}"),
			 -EINVAL);
	assert_non_null(strstr(s->err, "expected scheduling.k8s.io/v1alpha1 or v1alpha2"));
	/* ... and refused in a pods file, where only they are read. */
	assert_int_equal(load(s, "all.json", file), -EINVAL);
	assert_string_equal(s->err, "all.json: object #6: kind: \"ConfigMap\" is not Node, "
			    "Pod, PriorityClass, PodGroup, Workload, PodDisruptionBudget, "
			    "Namespace, Service, ReplicationController, ReplicaSet or "
			    "StatefulSet (a cluster file skips other kinds; a pods file "
			    "refuses them)");
	assert_int_equal(load(s, "pods.json", "{'kind':'Service','metadata':{'name':'s'}}"
				  "{'kind':'Pod','metadata':{'name':'p'}}"), 0);
	assert_int_equal(s->n_pods, 1);

	/* Past K8S_SKIPPED_KINDS distinct kinds, the rest in the total only. */
	char many[4096];
	size_t used = 0;
	for (int k = 0; k < K8S_SKIPPED_KINDS + 3; k++)
		used += (size_t)snprintf(many + used, sizeof(many) - used,
					 "{'kind':'Kind%d','metadata':{'name':'x'}}\n", k);
	memset(&sk, 0, sizeof(sk));
	s->ctx.skipped = &sk;
	s->ctx.cluster_file = true;
	assert_int_equal(load(s, "many.json", many), 0);
	s->ctx.cluster_file = false;
	s->ctx.skipped = NULL;
	assert_int_equal(sk.total, K8S_SKIPPED_KINDS + 3);
	assert_int_equal(sk.n_kinds, K8S_SKIPPED_KINDS);

	/* A kind spelled with an escape is still read; a buffer that cannot
	 * name one is not parsed at all (its syntax is the second pass's). */
	assert_int_equal(read_objects(s, "esc.json", "{'kind':'Nam\\u0065space',"
				      "'metadata':{'name':'e'}}"), 0);
	k8s_objects_counts(s->ctx.objects, &c);
	assert_int_equal(c.namespaces, 1);
	assert_int_equal(read_objects(s, "x.json", "{'kind':'Pod',,}"), 0);
	assert_int_equal(read_objects(s, "x.json", "{'kind':'Service',,}"), -EINVAL);
	assert_string_equal(s->err, "x.json:1:19: string or '}' expected near ','");
	drop_objects(s);
}

/* Refusals of the first pass, by path, and its limits. */
static void test_objects_errors(void **state)
{
	struct sink *s = *state;
	static const struct {
		const char *json;
		int rc;
		const char *want;
	} bad[] = {
		{"{'kind':'Namespace','metadata':{'name':'a'}}{'kind':'Namespace',"
		 "'metadata':{'name':'a'}}", -EEXIST,
		 "x.json: namespace a: a second Namespace of this name"},
		{"{'kind':'ReplicaSet','metadata':{'name':'a'}}{'kind':'ReplicaSet',"
		 "'metadata':{'name':'a','namespace':'default'}}", -EEXIST,
		 "x.json: replicaset default/a: a second ReplicaSet of this name"},
		{"{'kind':'Namespace','metadata':{'labels':{}}}", -EINVAL,
		 "x.json: object #0: metadata.name: missing"},
		{"{'kind':'Service','metadata':{'name':'s'},'spec':{'selector':{'app':1}}}",
		 -EINVAL, "x.json: service default/s: spec.selector.app: expected a string, "
		 "got a number"},
		{"{'kind':'Namespace','metadata':{'name':'a','labels':[]}}", -EINVAL,
		 "x.json: namespace a: metadata.labels: expected an object, got an array"},
		{"{'kind':'ReplicaSet','metadata':{'name':'r'},'spec':{'selector':"
		 "{'matchExpressions':[{'key':'a','operator':'Gt','values':['1']}]}}}", -EINVAL,
		 "x.json: replicaset default/r: spec.selector.matchExpressions[0].operator: "
		 "\"Gt\" is not In, NotIn, Exists or DoesNotExist"},
		{"{'kind':'StatefulSet','metadata':{'name':'r'},'spec':{'selector':"
		 "{'matchExpressions':[{'key':'a','operator':'In'}]}}}", -EINVAL,
		 "x.json: statefulset default/r: spec.selector.matchExpressions[0].values: "
		 "must not be empty for operator In"},
		{"{'kind':'ReplicationController','metadata':{'name':'r'},'spec':"
		 "{'template':{'metadata':{'labels':{'a':null}}}}}", -EINVAL,
		 "x.json: replicationcontroller default/r: spec.template.metadata.labels.a: "
		 "expected a string, got null"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc = read_objects(s, "x.json", bad[i].json);
		if (rc != bad[i].rc || strcmp(s->err, bad[i].want) != 0)
			fail_msg("case %zu: %d \"%s\"", i, rc, s->err);
	}

	/* Limits, named. */
	char *json = malloc(65536);
	assert_non_null(json);
	size_t used = (size_t)snprintf(json, 65536, "{'kind':'Namespace','metadata':"
				       "{'name':'n','labels':{");
	for (int k = 0; k <= OBJECT_MAX_LABELS; k++)
		used += (size_t)snprintf(json + used, 65536 - used, "%s'k%d':'v'",
					 k ? "," : "", k);
	snprintf(json + used, 65536 - used, "}}}");
	assert_int_equal(read_objects(s, "x.json", json), -ENOSPC);
	assert_string_equal(s->err, "x.json: namespace n: metadata.labels: 65 entries, "
			    "at most 64 (OBJECT_MAX_LABELS)");
	/* 64 is fine, and the Namespace still gets its name label. */
	used = (size_t)snprintf(json, 65536, "{'kind':'Namespace','metadata':"
				"{'name':'n','labels':{");
	for (int k = 0; k < OBJECT_MAX_LABELS; k++)
		used += (size_t)snprintf(json + used, 65536 - used, "%s'k%d':'v'",
					 k ? "," : "", k);
	snprintf(json + used, 65536 - used, "}}}");
	assert_int_equal(read_objects(s, "x.json", json), 0);

	used = (size_t)snprintf(json, 65536, "{'kind':'ReplicaSet','metadata':"
				"{'name':'r'},'spec':{'selector':{'matchExpressions':[");
	for (int k = 0; k <= OBJECT_MAX_REQS; k++)
		used += (size_t)snprintf(json + used, 65536 - used, "%s{'key':'k%d',"
					 "'operator':'Exists'}", k ? "," : "", k);
	snprintf(json + used, 65536 - used, "]}}}");
	assert_int_equal(read_objects(s, "x.json", json), -ENOSPC);
	assert_string_equal(s->err, "x.json: replicaset default/r: spec.selector."
			    "matchExpressions[64]: more than 64 label selector requirements "
			    "(OBJECT_MAX_REQS)");

	used = (size_t)snprintf(json, 65536, "{'kind':'StatefulSet','metadata':"
				"{'name':'r'},'spec':{'selector':{'matchExpressions':"
				"[{'key':'a','operator':'In','values':[");
	for (int k = 0; k <= OBJECT_MAX_VALUES; k++)
		used += (size_t)snprintf(json + used, 65536 - used, "%s'v%d'", k ? "," : "", k);
	snprintf(json + used, 65536 - used, "]}]}}}");
	assert_int_equal(read_objects(s, "x.json", json), -ENOSPC);
	assert_string_equal(s->err, "x.json: statefulset default/r: spec.selector."
			    "matchExpressions[0].values: 257 values, at most 256 "
			    "(OBJECT_MAX_VALUES)");
	free(json);
	drop_objects(s);
}

/* kube-scheduler's helper.DefaultSelector (framework/plugins/helper/
 * spread.go), into the group of a pod to place. */
static void test_default_selector(void **state)
{
	struct sink *s = *state;
	char text[512];
	struct pod_group g;
	/* TestGetPodServices (helper/spread_test.go): service-i selects
	 * app=test-i in namespace test. */
	assert_int_equal(read_objects(s, "cluster.json",
		"{'kind':'Service','metadata':{'name':'service-0','namespace':'test'},"
		" 'spec':{'selector':{'app':'test-0'}}}"
		"{'kind':'Service','metadata':{'name':'service-1','namespace':'test'},"
		" 'spec':{'selector':{'app':'test-1'}}}"
		"{'kind':'Service','metadata':{'name':'service-2','namespace':'test'},"
		" 'spec':{'selector':{'app':'test-2'}}}"
		"{'kind':'Service','metadata':{'name':'tier','namespace':'test'},"
		" 'spec':{'selector':{'tier':'front','app':'test-1'}}}"
		"{'kind':'Service','metadata':{'name':'elsewhere','namespace':'other'},"
		" 'spec':{'selector':{'app':'test-0'}}}"
		/* TestPreScoreStateEmptyNodes (podtopologyspread/scoring_test.go):
		 * rs1 selects Exists(foo). */
		"{'apiVersion':'apps/v1','kind':'ReplicaSet','metadata':{'name':'rs1',"
		" 'namespace':'default'},'spec':{'selector':{'matchExpressions':[{'key':"
		" 'foo','operator':'Exists'}]}}}"
		"{'apiVersion':'apps/v1','kind':'StatefulSet','metadata':{'name':'db',"
		" 'namespace':'test'},'spec':{'selector':{'matchLabels':{'app':'db'}}}}"
		"{'apiVersion':'v1','kind':'ReplicationController','metadata':{'name':'rc',"
		" 'namespace':'test'},'spec':{'selector':{'run':'x','app':'test-0'}}}"), 0);
	static const struct {
		const char *meta; /* inside metadata */
		const char *want;
	} cases[] = {
		/* "GetPodServices for pod-0": service-0 (not the one in namespace
		 * other). */
		{"'namespace':'test','labels':{'app':'test-0','label':'label-0'}",
		 "app In test-0;"},
		/* Two Services select it: their selectors merged, by key. */
		{"'namespace':'test','labels':{'app':'test-1','tier':'front'}",
		 "app In test-1;tier In front;"},
		/* "GetPodServices for pod-3": none selects it. */
		{"'namespace':'test','labels':{'app':'test-3','label':'label-3'}", "(none)"},
		/* "system default constraints and a replicaset" */
		{"'labels':{'foo':'tar','baz':'sup'},'ownerReferences':[{'apiVersion':"
		 "'apps/v1','kind':'ReplicaSet','name':'rs1','controller':true}]",
		 "foo Exists;"},
		/* "default constraints and a replicaset that doesn't match": rs2 is
		 * not known, so nothing selects the pod. */
		{"'labels':{'foo':'bar','baz':'sup'},'ownerReferences':[{'apiVersion':"
		 "'apps/v1','kind':'ReplicaSet','name':'rs2','controller':true}]", "(none)"},
		/* Services, then the controller's requirements. */
		{"'namespace':'test','labels':{'app':'db'},'ownerReferences':[{"
		 "'apiVersion':'apps/v1','kind':'StatefulSet','name':'db','controller':"
		 "true}]", "app In db;"},
		{"'namespace':'test','labels':{'app':'test-2'},'ownerReferences':[{"
		 "'apiVersion':'apps/v1','kind':'StatefulSet','name':'db','controller':"
		 "true}]", "app In test-2;app In db;"},
		/* An RC's selector is merged into the Services' set. */
		{"'namespace':'test','labels':{'app':'test-0','run':'x'},'ownerReferences':"
		 "[{'apiVersion':'v1','kind':'ReplicationController','name':'rc',"
		 "'controller':true}]", "app In test-0;run In x;"},
		/* Only the controller counts, only the first, and only with the
		 * group and version DefaultSelector names. */
		{"'labels':{'foo':'x'},'ownerReferences':[{'apiVersion':'apps/v1','kind':"
		 "'ReplicaSet','name':'rs1'}]", "(none)"},
		{"'labels':{'foo':'x'},'ownerReferences':[{'apiVersion':'apps/v1','kind':"
		 "'ReplicaSet','name':'rs1','controller':false}]", "(none)"},
		{"'labels':{'foo':'x'},'ownerReferences':[{'apiVersion':"
		 "'extensions/v1beta1','kind':'ReplicaSet','name':'rs1','controller':true}]",
		 "(none)"},
		{"'labels':{'foo':'x'},'ownerReferences':[{'apiVersion':'apps/v1','kind':"
		 "'Deployment','name':'d','controller':true},{'apiVersion':'apps/v1',"
		 "'kind':'ReplicaSet','name':'rs1','controller':true}]", "(none)"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char json[1024];
		snprintf(json, sizeof(json), "{'kind':'Pod','metadata':{'name':'p',%s},"
			 "'spec':{'containers':[{}]}}", cases[i].meta);
		if (load(s, "pods.json", json) != 0)
			fail_msg("case %zu: %s", i, s->err);
		g = group_of(s, 0);
		const char *got = selector_text(s, &g, &g.default_selector, text,
						sizeof(text));
		if (strcmp(got, cases[i].want) != 0)
			fail_msg("case %zu: default selector \"%s\", want \"%s\"", i, got,
				 cases[i].want);
	}
	/* "default constraints and a replicaset, but pod has constraints": the
	 * pod's own win, and no default selector is worked out. */
	assert_int_equal(load_pod(s, "'topologySpreadConstraints':[{'maxSkew':1,"
				     "'topologyKey':'zone','whenUnsatisfiable':'ScheduleAnyway'}]"),
			 0);
	assert_false(group_of(s, 0).default_selector.present);
	/* A bound pod of a cluster file never gets one. */
	s->ctx.cluster_file = true;
	assert_int_equal(load(s, "c.json", "{'kind':'Pod','metadata':{'name':'p',"
				  "'namespace':'test','labels':{'app':'test-0'}},'spec':"
				  "{'nodeName':'n'}}"), 0);
	s->ctx.cluster_file = false;
	assert_false(group_of(s, 0).default_selector.present);
	/* Malformed owner references are errors. */
	assert_int_equal(load(s, "pods.json", "{'kind':'Pod','metadata':{'name':'p',"
				  "'ownerReferences':[{'controller':'yes'}]}}"), -EINVAL);
	assert_string_equal(s->err, "pods.json: pod default/p: metadata.ownerReferences[0]."
			    "controller: expected a boolean, got a string");
	/* Without objects (a producer's template): no default selector. */
	drop_objects(s);
	assert_int_equal(load(s, "pods.json", "{'kind':'Pod','metadata':{'name':'p',"
				  "'namespace':'test','labels':{'app':'test-0'}}}"), 0);
	assert_false(group_of(s, 0).default_selector.present);
}

/* A term's namespaceSelector resolved against the Namespaces read
 * (interpodaffinity's mergeAffinityTermNamespacesIfNotEmpty, once, when the
 * pod is read), with the label the API server gives every Namespace. */
static void test_namespace_selector(void **state)
{
	struct sink *s = *state;
	assert_int_equal(read_objects(s, "cluster.json",
		"{'kind':'NamespaceList','items':["
		"{'metadata':{'name':'a','labels':{'team':'x'}}},"
		"{'metadata':{'name':'b','labels':{'team':'y'}}},"
		"{'metadata':{'name':'c'}}]}"), 0);
	static const struct {
		const char *term; /* inside the term */
		const char *want; /* namespaces, in order; "*": all */
	} cases[] = {
		{"'namespaceSelector':{'matchLabels':{'team':'x'}}", "a"},
		{"'namespaceSelector':{'matchExpressions':[{'key':'team','operator':'In',"
		 "'values':['x','y']}]}", "a,b"},
		{"'namespaceSelector':{'matchExpressions':[{'key':'team','operator':"
		 "'DoesNotExist'}]}", "c"},
		{"'namespaceSelector':{'matchLabels':{'kubernetes.io/metadata.name':'b'}}",
		 "b"},
		/* The union with namespaces, each once. */
		{"'namespaces':['b','z'],'namespaceSelector':{'matchExpressions':[{'key':"
		 "'team','operator':'Exists'}]}", "b,z,a"},
		/* Selecting nothing: no namespace (not the pod's own). */
		{"'namespaceSelector':{'matchLabels':{'team':'none'}}", ""},
		{"'namespaceSelector':{}", "*"},
		{"'namespaceSelector':{'matchLabels':{},'matchExpressions':[]}", "*"},
		{"", "default"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char spec[512], got[256] = "";
		snprintf(spec, sizeof(spec), "'affinity':{'podAntiAffinity':{"
			 "'requiredDuringSchedulingIgnoredDuringExecution':[{%s%s"
			 "'topologyKey':'zone','labelSelector':{}}]}}", cases[i].term,
			 cases[i].term[0] ? "," : "");
		if (load_pod(s, spec) != 0)
			fail_msg("case %zu: %s", i, s->err);
		struct pod_group g = group_of(s, 0);
		assert_int_equal(g.n_terms, 1);
		size_t used = 0;
		if (g.terms[0].all_namespaces)
			snprintf(got, sizeof(got), "*");
		for (unsigned k = 0; k < g.terms[0].n_ns; k++)
			used += (size_t)snprintf(got + used, sizeof(got) - used, "%s%s",
						 k ? "," : "",
						 str(s, g.namespaces[g.terms[0].first_ns + k]));
		if (strcmp(got, cases[i].want) != 0)
			fail_msg("case %zu: namespaces \"%s\", want \"%s\"", i, got,
				 cases[i].want);
		/* The selector itself is not kept: only the term's selector. */
		assert_int_equal(g.n_reqs, 0);
	}
	/* More namespaces than a group holds. */
	char *json = malloc(65536);
	assert_non_null(json);
	size_t used = 0;
	for (int k = 0; k <= GROUP_MAX_NAMESPACES; k++)
		used += (size_t)snprintf(json + used, 65536 - used, "{'kind':'Namespace',"
					 "'metadata':{'name':'ns%d','labels':{'t':'x'}}}\n", k);
	assert_int_equal(read_objects(s, "cluster.json", json), 0);
	free(json);
	assert_int_equal(load_pod(s, "'affinity':{'podAffinity':{"
				     "'requiredDuringSchedulingIgnoredDuringExecution':[{"
				     "'namespaceSelector':{'matchLabels':{'t':'x'}},"
				     "'topologyKey':'zone'}]}}"), -ENOSPC);
	assert_non_null(strstr(s->err, "namespaceSelector: selects more than 64 "
				       "namespaces with the pod's other terms "
				       "(GROUP_MAX_NAMESPACES)"));
	/* Without Namespace objects: a cluster file's pod selects none, a pod
	 * to place is refused (it could only be wrong). */
	drop_objects(s);
	s->ctx.cluster_file = true;
	assert_int_equal(load_pod(s, "'nodeName':'n','affinity':{'podAffinity':{"
				     "'requiredDuringSchedulingIgnoredDuringExecution':[{"
				     "'namespaceSelector':{'matchLabels':{'t':'x'}},"
				     "'topologyKey':'zone'}]}}"), 0);
	s->ctx.cluster_file = false;
	assert_int_equal(group_of(s, 0).terms[0].n_ns, 0);
}

/* --- file forms -------------------------------------------------------------- */

static void test_lists(void **state)
{
	struct sink *s = *state;
	/* kubectl get nodes -o json: a List whose items have kinds. */
	assert_int_equal(load(s, "all.json",
			      "{'apiVersion':'v1','kind':'List','items':["
			      "{'kind':'Node','metadata':{'name':'n1'}},"
			      "{'kind':'Pod','metadata':{'name':'p1'}},"
			      "{'metadata':{'name':'p2'},'spec':{'containers':[]}}],"
			      "'metadata':{'resourceVersion':''}}"), 0);
	assert_int_equal(s->n_nodes, 1);
	assert_int_equal(s->n_pods, 2);
	assert_int_equal(s->metas[0].index, 1);
	assert_int_equal(s->metas[1].index, 2);

	/* Items of a NodeList / PodList take the list's kind. */
	assert_int_equal(load(s, "nodes.json", "{'kind':'NodeList','items':["
				  "{'metadata':{'name':'a'}},{'metadata':{'name':'b'}}]}"), 0);
	assert_int_equal(s->n_nodes, 2);
	assert_string_equal(str(s, s->nodes[1].name), "b");
	assert_int_equal(load(s, "pods.json", "{'kind':'PodList','items':["
				  "{'metadata':{'name':'a'}}]}"), 0);
	assert_int_equal(s->n_pods, 1);
	assert_int_equal(load(s, "pods.json", "{'kind':'PodList','items':[]}"), 0);
	assert_int_equal(s->n_pods, 0);

	/* A top-level array, with a list inside. */
	assert_int_equal(load(s, "mixed.json",
			      "[{'kind':'Node','metadata':{'name':'n'}},"
			      " {'kind':'PodList','items':[{'metadata':{'name':'a'}}]},"
			      " {'metadata':{'name':'b'},'spec':{'containers':[{}]}}]"), 0);
	assert_int_equal(s->n_nodes, 1);
	assert_int_equal(s->n_pods, 2);
}

static void test_json_lines(void **state)
{
	struct sink *s = *state;
	assert_int_equal(load(s, "pods.jsonl",
			      "\n{'kind':'Pod','metadata':{'name':'a'}}\n"
			      "\n   \n"
			      "{'kind':'Pod','metadata':{'name':'b'}}\r\n"
			      "{'kind':'Node','metadata':{'name':'n'}}"), 0);
	assert_int_equal(s->n_pods, 2);
	assert_int_equal(s->n_nodes, 1);
	assert_int_equal(s->metas[1].index, 1);
	/* Empty input: no objects, not an error. */
	assert_int_equal(load(s, "empty.json", " \n"), 0);
	assert_int_equal(s->n_pods + s->n_nodes, 0);
}

static void test_kind_errors(void **state)
{
	struct sink *s = *state;
	assert_load_error(s, "x.json", "{'metadata':{'name':'n'}}", -EINVAL,
			  "x.json: object #0: kind missing (and no spec.containers "
			  "to tell a Pod)");
	assert_load_error(s, "x.json", "{'kind':'Node','metadata':{'name':'n'}}"
			  "{'kind':'ConfigMap','metadata':{'name':'s'}}", -EINVAL,
			  "x.json: object #1: kind: \"ConfigMap\" is not Node, Pod, "
			  "PriorityClass, PodGroup, Workload, PodDisruptionBudget, Namespace, Service, "
			  "ReplicationController, "
			  "ReplicaSet or "
			  "StatefulSet, nor a list of them (a cluster file skips other "
			  "kinds; a pods file refuses them)");
	assert_load_error(s, "x.json", "{'kind':'List','items':[{'kind':'List'}]}",
			  -EINVAL, "x.json: object #0: kind: \"List\" is not Node, Pod, "
			  "PriorityClass, PodGroup, Workload, PodDisruptionBudget, Namespace, Service, "
			  "ReplicationController, "
			  "ReplicaSet or "
			  "StatefulSet (a cluster file skips other kinds; a pods file "
			  "refuses them)");
	assert_load_error(s, "x.json", "[{'kind':'Node','metadata':{'name':'n'}},7]",
			  -EINVAL, "x.json: object #1: expected an object, got a number");
	assert_load_error(s, "x.json", "{'kind':5}", -EINVAL,
			  "x.json: object #0: kind: expected a string, got a number");
	assert_load_error(s, "x.json", "{'kind':'PodList','items':{}}", -EINVAL,
			  "x.json: object #0: items: expected an array, got an object");
}

/* "<file>:<line>:<column>: <jansson's text>", lines counted in the file. */
static void test_syntax_errors(void **state)
{
	struct sink *s = *state;
	assert_int_equal(load(s, "pods.jsonl",
			      "{'kind':'Pod','metadata':{'name':'a'}}\n"
			      "{'kind':'Pod','metadata':{'name':'b'}}\n"
			      "{'kind':'Pod',,}\n"), -EINVAL);
	assert_string_equal(s->err, "pods.jsonl:3:15: string or '}' expected near ','");
	assert_int_equal(s->n_pods, 2); /* visited before the error */

	assert_int_equal(load(s, "a.json", "{'kind':'Node','metadata':{'name':'n'}}  xyz"), -EINVAL);
	assert_string_equal(s->err, "a.json:1:44: '[' or '{' expected near 'xyz'");

	assert_int_equal(load(s, "b.json", "{\n  'kind': 'Pod',\n  'x': [1,\n}"), -EINVAL);
	assert_string_equal(s->err, "b.json:4:1: unexpected token near '}'");

	assert_int_equal(load(s, "c.json", "7"), -EINVAL);
	assert_string_equal(s->err, "c.json:1:1: '[' or '{' expected near '7'");
}

static void test_visitor(void **state)
{
	struct sink *s = *state;
	s->refuse = -ECANCELED;
	s->refuse_msg = "pods.json: pod default/a: duplicate pod";
	assert_load_error(s, "pods.json", "{'kind':'Pod','metadata':{'name':'a'}}",
			  -ECANCELED, "pods.json: pod default/a: duplicate pod");
	s->refuse_msg = NULL;
	assert_int_equal(load(s, "nodes.json", "{'kind':'Node','metadata':{'name':'a'}}"),
			 -ECANCELED);
	assert_non_null(strstr(s->err, "nodes.json: node a: refused by the loader ("));
	s->refuse = 0;

	/* A visitor without a callback for a kind does not expect it. */
	s->v.node = NULL;
	assert_load_error(s, "pods.json", "{'kind':'Node','metadata':{'name':'n'}}",
			  -EINVAL, "pods.json: node n: a Node in a file read for pods only");
	s->v.node = on_node;
	s->v.pod = NULL;
	assert_load_error(s, "nodes.json", "{'kind':'Pod','metadata':{'name':'p'}}",
			  -EINVAL, "nodes.json: pod default/p: a Pod in a file read for "
			  "nodes only");
	s->v.pod = on_pod;
}

static void test_load_file(void **state)
{
	struct sink *s = *state;
	char path[] = "/tmp/test_k8s_json_XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	static const char body[] = "{\"kind\":\"Node\",\"metadata\":{\"name\":\"f\"}}\n";
	assert_int_equal(write(fd, body, sizeof(body) - 1), (ssize_t)sizeof(body) - 1);
	close(fd);
	s->n_nodes = 0;
	assert_int_equal(k8s_load_file(path, &s->ctx, &s->v, s->err, sizeof(s->err)), 0);
	assert_int_equal(s->n_nodes, 1);
	unlink(path);
	assert_int_equal(k8s_load_file(path, &s->ctx, &s->v, s->err, sizeof(s->err)),
			 -ENOENT);
	char want[128];
	snprintf(want, sizeof(want), "%s: cannot read: No such file or directory", path);
	assert_string_equal(s->err, want);
}

/* --- devices (docs/reference/kubernetes-fields.md, "Devices") -------------------------------------------- */

/* A node with `meta` added to its metadata and `status` as its status. */
static int load_node(struct sink *s, const char *meta, const char *status)
{
	char *json;
	assert_true(asprintf(&json, "{'kind':'Node','metadata':{'name':'n1'%s%s},"
			     "'status':{%s}}", meta[0] != '\0' ? "," : "", meta,
			     status) > 0);
	int rc = load(s, "nodes.json", json);
	free(json);
	return rc;
}

/* A pod with annotations `ann` (the inside of the map) and spec `spec`. */
static int load_pod_ann(struct sink *s, const char *ann, const char *spec)
{
	char *json;
	assert_true(asprintf(&json, "{'kind':'Pod','metadata':{'name':'p',"
			     "'annotations':{%s}},'spec':{%s}}", ann, spec) > 0);
	int rc = load(s, "pods.json", json);
	free(json);
	return rc;
}

/* A container with cpu and memory limits only: Guaranteed (requests
 * default to limits). */
#define GUARANTEED(cpu) \
	"{'name':'c','resources':{'limits':{'cpu':'" cpu "','memory':'1Gi'}}}"

static void assert_no_devices(const struct node_devices *dev)
{
	assert_int_equal(dev->n_gpus, 0);
	assert_int_equal(dev->gpu_model, 0);
	assert_int_equal(dev->n_cores, 0);
	assert_int_equal(dev->n_numa, 0);
}

/* The count from the nvidia.com/gpu resource (allocatable, else capacity,
 * as the rest of the node); the node's GPU count annotation wins over it. */
static void test_node_gpu_count(void **state)
{
	struct sink *s = *state;
	assert_int_equal(load(s, "nodes.json", node_json), 0);
	assert_int_equal(s->nodes[0].devices.n_gpus, 2);
	assert_int_equal(s->nodes[0].devices.n_cores, 0);

	assert_int_equal(load_node(s, "", "'capacity':{'nvidia.com/gpu':4}"), 0);
	assert_int_equal(s->nodes[0].devices.n_gpus, 4);
	assert_int_equal(load_node(s, "", "'allocatable':{'nvidia.com/gpu':'16'},"
				   "'capacity':{'nvidia.com/gpu':'3'}"), 0);
	assert_int_equal(s->nodes[0].devices.n_gpus, 16);
	assert_int_equal(load_node(s, "", "'allocatable':{'cpu':'4'}"), 0);
	assert_no_devices(&s->nodes[0].devices);

	assert_int_equal(load_node(s, "'annotations':{'alibabacloud.com/gpu-count':'8'}",
				   "'allocatable':{'nvidia.com/gpu':'2'}"), 0);
	assert_int_equal(s->nodes[0].devices.n_gpus, 8);
	/* The extended resource keeps its own value for NodeResourcesFit. */
	assert_int_equal(s->nodes[0].allocatable.v[res_index(s, "nvidia.com/gpu")], 2);
	assert_int_equal(load_node(s, "'annotations':{'alibabacloud.com/gpu-count':'0'}",
				   "'allocatable':{'nvidia.com/gpu':'4'}"), 0);
	assert_int_equal(s->nodes[0].devices.n_gpus, 0);
	/* When the annotation gives the count the resource is not one. */
	assert_int_equal(load_node(s, "'annotations':{'alibabacloud.com/gpu-count':'016'}",
				   "'allocatable':{'nvidia.com/gpu':'100'}"), 0);
	assert_int_equal(s->nodes[0].devices.n_gpus, 16);
	assert_int_equal(load_node(s, "'annotations':{'alibabacloud.com/gpu-count':null,"
				   "'other':7}", "'allocatable':{'nvidia.com/gpu':'1'}"), 0);
	assert_int_equal(s->nodes[0].devices.n_gpus, 1);
}

/* The model: label alibabacloud.com/gpu-card-model, else NVIDIA GPU
 * feature discovery's nvidia.com/gpu.product; an empty value is unset. */
static void test_node_gpu_model(void **state)
{
	struct sink *s = *state;
	assert_int_equal(load_node(s, "'labels':{'nvidia.com/gpu.product':'Tesla-T4',"
				   "'alibabacloud.com/gpu-card-model':'T4'}",
				   "'allocatable':{'nvidia.com/gpu':'1'}"), 0);
	assert_int_equal(s->nodes[0].devices.gpu_model, id(s, "T4"));
	assert_int_equal(load_node(s, "'labels':{'nvidia.com/gpu.product':'Tesla-T4',"
				   "'alibabacloud.com/gpu-card-model':''}", ""), 0);
	assert_int_equal(s->nodes[0].devices.gpu_model, id(s, "Tesla-T4"));
	assert_int_equal(load_node(s, "'labels':{'zone':'a'}", ""), 0);
	assert_int_equal(s->nodes[0].devices.gpu_model, 0);
}

/* Exclusive cores: opted in by the static CPU manager policy; whole
 * allocatable cores, at most NODE_MAX_CORES, a multiple of the NUMA
 * nodes (cpu_manager/policy_static.go takes whole cpus only). */
static void test_node_cores(void **state)
{
	struct sink *s = *state;
	const struct node_devices *dev = &s->nodes[0].devices;
	assert_int_equal(load_node(s, "'annotations':{'shmsched.io/cpu-manager-policy':"
				   "'static'}", "'allocatable':{'cpu':'64'}"), 0);
	assert_int_equal(dev->n_cores, 64);
	assert_int_equal(dev->n_numa, 1);
	assert_int_equal(load_node(s, "'annotations':{'shmsched.io/cpu-manager-policy':"
				   "'static','shmsched.io/numa-nodes':'2'}",
				   "'allocatable':{'cpu':'63500m'}"), 0);
	assert_int_equal(dev->n_cores, 62);
	assert_int_equal(dev->n_numa, 2);
	assert_int_equal(load_node(s, "'annotations':{'shmsched.io/cpu-manager-policy':"
				   "'static','shmsched.io/numa-nodes':'3'}",
				   "'allocatable':{'cpu':'1000'}"), 0);
	assert_int_equal(dev->n_cores, 255); /* 256, down to a multiple of 3 */
	assert_int_equal(dev->n_numa, 3);
	assert_int_equal(load_node(s, "'annotations':{'shmsched.io/cpu-manager-policy':"
				   "'static','shmsched.io/numa-nodes':'8'}",
				   "'capacity':{'cpu':8}"), 0);
	assert_int_equal(dev->n_cores, 8);
	assert_int_equal(dev->n_numa, 8);

	/* none (and "", the kubelet's default) share every core; the NUMA
	 * count is checked but not kept. */
	assert_int_equal(load_node(s, "'annotations':{'shmsched.io/cpu-manager-policy':"
				   "'none','shmsched.io/numa-nodes':'2'}",
				   "'allocatable':{'cpu':'64'}"), 0);
	assert_no_devices(dev);
	assert_int_equal(load_node(s, "'annotations':{'shmsched.io/cpu-manager-policy':"
				   "''}", "'allocatable':{'cpu':'64'}"), 0);
	assert_no_devices(dev);
	assert_int_equal(load_node(s, "'annotations':{}", "'allocatable':{'cpu':'64'}"), 0);
	assert_no_devices(dev);
}

static void test_node_device_errors(void **state)
{
	struct sink *s = *state;
	assert_int_equal(load_node(s, "'annotations':{'alibabacloud.com/gpu-count':'17'}",
				   ""), -ENOSPC);
	assert_string_equal(s->err, "nodes.json: node n1: metadata.annotations."
			    "alibabacloud.com/gpu-count: \"17\" is not in 0..16 "
			    "(NODE_MAX_GPUS)");
	assert_int_equal(load_node(s, "'annotations':{'alibabacloud.com/gpu-count':"
				   "'99999999999999999999999'}", ""), -ENOSPC);
	assert_int_equal(load_node(s, "'annotations':{'alibabacloud.com/gpu-count':'-1'}",
				   ""), -EINVAL);
	assert_string_equal(s->err, "nodes.json: node n1: metadata.annotations."
			    "alibabacloud.com/gpu-count: \"-1\" is not an integer "
			    "(0..16)");
	assert_int_equal(load_node(s, "'annotations':{'alibabacloud.com/gpu-count':''}",
				   ""), -EINVAL);
	assert_int_equal(load_node(s, "'annotations':{'alibabacloud.com/gpu-count':2}",
				   ""), -EINVAL);
	assert_string_equal(s->err, "nodes.json: node n1: metadata.annotations."
			    "alibabacloud.com/gpu-count: expected a string, got a number");
	assert_int_equal(load_node(s, "'annotations':['x']", ""), -EINVAL);
	assert_string_equal(s->err, "nodes.json: node n1: metadata.annotations: "
			    "expected an object, got an array");

	assert_int_equal(load_node(s, "", "'allocatable':{'nvidia.com/gpu':'17'}"),
			 -ENOSPC);
	assert_string_equal(s->err, "nodes.json: node n1: status.allocatable."
			    "nvidia.com/gpu: 17 devices, at most 16 (NODE_MAX_GPUS)");
	assert_int_equal(load_node(s, "", "'capacity':{'nvidia.com/gpu':'1500m'}"),
			 -EINVAL);
	assert_string_equal(s->err, "nodes.json: node n1: status.capacity."
			    "nvidia.com/gpu: \"1500m\" is not a whole number of devices");

	assert_int_equal(load_node(s, "'annotations':{'shmsched.io/cpu-manager-policy':"
				   "'Static'}", "'allocatable':{'cpu':'64'}"), -EINVAL);
	assert_string_equal(s->err, "nodes.json: node n1: metadata.annotations."
			    "shmsched.io/cpu-manager-policy: \"Static\" is not static "
			    "or none");
	assert_int_equal(load_node(s, "'annotations':{'shmsched.io/numa-nodes':'0'}",
				   ""), -EINVAL);
	assert_string_equal(s->err, "nodes.json: node n1: metadata.annotations."
			    "shmsched.io/numa-nodes: \"0\" is not in 1..8");
	assert_int_equal(load_node(s, "'annotations':{'shmsched.io/numa-nodes':'9'}",
				   ""), -ENOSPC);
	assert_string_equal(s->err, "nodes.json: node n1: metadata.annotations."
			    "shmsched.io/numa-nodes: \"9\" is not in 1..8 (NODE_MAX_NUMA)");
	assert_int_equal(load_node(s, "'annotations':{'shmsched.io/cpu-manager-policy':"
				   "'static','shmsched.io/numa-nodes':'4'}",
				   "'allocatable':{'cpu':'3900m'}"), -EINVAL);
	assert_string_equal(s->err, "nodes.json: node n1: metadata.annotations."
			    "shmsched.io/cpu-manager-policy: static needs a whole core "
			    "per NUMA node: allocatable cpu 3900m over 4 NUMA nodes");
	assert_int_equal(load_node(s, "'annotations':{'shmsched.io/cpu-manager-policy':"
				   "'static'}", ""), -EINVAL);
	assert_string_equal(s->err, "nodes.json: node n1: metadata.annotations."
			    "shmsched.io/cpu-manager-policy: static needs a whole core "
			    "per NUMA node: allocatable cpu 0m over 1 NUMA node");
}

static void assert_gpu(const struct pod_spec *p, unsigned num, unsigned milli)
{
	assert_int_equal(p->num_gpu, num);
	assert_int_equal(p->gpu_milli, milli);
}

/* Alibaba's GPU-sharing annotations: a share of one device, or whole
 * devices; a missing count is 1, a missing share a whole device. */
static void test_pod_gpu_annotations(void **state)
{
	struct sink *s = *state;
	assert_int_equal(load_pod_ann(s, "'alibabacloud.com/gpu-milli':'500'", ""), 0);
	assert_gpu(&s->pods[0], 1, 500);
	assert_int_equal(load_pod_ann(s, "'alibabacloud.com/gpu-count':'4'", ""), 0);
	assert_gpu(&s->pods[0], 4, 1000);
	assert_int_equal(load_pod_ann(s, "'alibabacloud.com/gpu-count':'1',"
				      "'alibabacloud.com/gpu-milli':'1'", ""), 0);
	assert_gpu(&s->pods[0], 1, 1);
	assert_int_equal(load_pod_ann(s, "'alibabacloud.com/gpu-count':'16',"
				      "'alibabacloud.com/gpu-milli':'1000'", ""), 0);
	assert_gpu(&s->pods[0], 16, 1000);
	assert_int_equal(load_pod_ann(s, "", ""), 0);
	assert_gpu(&s->pods[0], 0, 0);

	/* Without the annotations: the device plugin's resource, in whole
	 * devices, from the effective requests (here 2 + overhead 1). */
	assert_int_equal(load_pod(s, "'containers':[{'name':'c','resources':{'limits':"
				  "{'nvidia.com/gpu':'2'}}}],'overhead':{'nvidia.com/gpu':1}"), 0);
	assert_gpu(&s->pods[0], 3, 1000);
	assert_int_equal(load_pod(s, "'containers':[{'name':'c','resources':{'requests':"
				  "{'nvidia.com/gpu':'0'}}}]"), 0);
	assert_gpu(&s->pods[0], 0, 0);
	/* With them, they decide; the resource stays a request for
	 * NodeResourcesFit. */
	assert_int_equal(load_pod_ann(s, "'alibabacloud.com/gpu-milli':'250'",
				      "'containers':[{'name':'c','resources':{'limits':"
				      "{'nvidia.com/gpu':'1'}}}]"), 0);
	assert_gpu(&s->pods[0], 1, 250);
	assert_int_equal(s->pods[0].request.v[res_index(s, "nvidia.com/gpu")], 1);
}

/* shmsched.io/wait: the pod's own default for waiting; anything but
 * "true" or "false" is refused, named by path. */
static void test_pod_wait_annotation(void **state)
{
	struct sink *s = *state;
	const uint8_t both = POD_WAIT | POD_NO_WAIT;
	assert_int_equal(load_pod_ann(s, "'shmsched.io/wait':'true'", ""), 0);
	assert_int_equal(s->pods[0].priority_flags & both, POD_WAIT);
	assert_int_equal(load_pod_ann(s, "'shmsched.io/wait':'false'", ""), 0);
	assert_int_equal(s->pods[0].priority_flags & both, POD_NO_WAIT);
	assert_int_equal(load_pod_ann(s, "'shmsched.io/wait':null", ""), 0);
	assert_int_equal(s->pods[0].priority_flags & both, 0);
	assert_int_equal(load_pod_ann(s, "", ""), 0);
	assert_int_equal(s->pods[0].priority_flags & both, 0);
	assert_int_equal(load_pod_ann(s, "'shmsched.io/wait':'yes'", ""), -EINVAL);
	assert_string_equal(s->err, "pods.json: pod default/p: metadata.annotations."
			    "shmsched.io/wait: \"yes\": expected \"true\" or \"false\"");
	assert_int_equal(load_pod_ann(s, "'shmsched.io/wait':true", ""), -EINVAL);
	assert_non_null(strstr(s->err, "shmsched.io/wait"));
}

/* The model set: split on '|', blanks trimmed, empty parts skipped,
 * duplicates dropped, sorted by id; ignored without a GPU. */
static void test_pod_gpu_models(void **state)
{
	struct sink *s = *state;
	const struct pod_spec *p = &s->pods[0];
	assert_int_equal(load_pod_ann(s, "'alibabacloud.com/gpu-milli':'500',"
				      "'alibabacloud.com/gpu-card-model':'V100|T4|| T4 |A10|'",
				      ""), 0);
	assert_int_equal(p->n_gpu_models, 3);
	uint32_t want[3] = {id(s, "V100"), id(s, "T4"), id(s, "A10")};
	qsort(want, 3, sizeof(want[0]), u32_order);
	for (int i = 0; i < 3; i++)
		assert_int_equal(p->gpu_models[i], want[i]);
	for (int i = 3; i < POD_MAX_GPU_MODELS; i++)
		assert_int_equal(p->gpu_models[i], 0);

	assert_int_equal(load_pod_ann(s, "'alibabacloud.com/gpu-count':'2',"
				      "'alibabacloud.com/gpu-card-model':'|'", ""), 0);
	assert_int_equal(p->n_gpu_models, 0);
	assert_int_equal(load_pod_ann(s, "'alibabacloud.com/gpu-count':'1',"
				      "'alibabacloud.com/gpu-card-model':'a|b|c|d|e|f|g|h|a'",
				      ""), 0);
	assert_int_equal(p->n_gpu_models, 8);
	/* No GPU: the set is ignored, even one too large. */
	assert_int_equal(load_pod_ann(s, "'alibabacloud.com/gpu-card-model':"
				      "'a|b|c|d|e|f|g|h|i'", ""), 0);
	assert_int_equal(p->n_gpu_models, 0);
	for (int i = 0; i < POD_MAX_GPU_MODELS; i++)
		assert_int_equal(p->gpu_models[i], 0);
}

static void test_pod_device_errors(void **state)
{
	struct sink *s = *state;
	assert_int_equal(load_pod_ann(s, "'alibabacloud.com/gpu-count':'2',"
				      "'alibabacloud.com/gpu-milli':'500'", ""), -EINVAL);
	assert_string_equal(s->err, "pods.json: pod default/p: metadata.annotations."
			    "alibabacloud.com/gpu-milli: a multi-GPU pod takes whole "
			    "devices: alibabacloud.com/gpu-count 2 needs 1000, not 500");
	assert_int_equal(load_pod_ann(s, "'alibabacloud.com/gpu-count':'0'", ""), -EINVAL);
	assert_string_equal(s->err, "pods.json: pod default/p: metadata.annotations."
			    "alibabacloud.com/gpu-count: \"0\" is not in 1..16");
	assert_int_equal(load_pod_ann(s, "'alibabacloud.com/gpu-count':'17'", ""),
			 -ENOSPC);
	assert_string_equal(s->err, "pods.json: pod default/p: metadata.annotations."
			    "alibabacloud.com/gpu-count: \"17\" is not in 1..16 "
			    "(NODE_MAX_GPUS)");
	assert_int_equal(load_pod_ann(s, "'alibabacloud.com/gpu-milli':'1001'", ""),
			 -EINVAL);
	assert_string_equal(s->err, "pods.json: pod default/p: metadata.annotations."
			    "alibabacloud.com/gpu-milli: \"1001\" is not in 1..1000 "
			    "(GPU_MILLI_PER_DEVICE)");
	assert_int_equal(load_pod_ann(s, "'alibabacloud.com/gpu-milli':'0'", ""), -EINVAL);
	assert_int_equal(load_pod_ann(s, "'alibabacloud.com/gpu-milli':'0.5'", ""),
			 -EINVAL);
	assert_string_equal(s->err, "pods.json: pod default/p: metadata.annotations."
			    "alibabacloud.com/gpu-milli: \"0.5\" is not an integer "
			    "(1..1000)");
	assert_int_equal(load_pod_ann(s, "'alibabacloud.com/gpu-milli':500", ""), -EINVAL);
	assert_int_equal(load_pod_ann(s, "'alibabacloud.com/gpu-count':'1',"
				      "'alibabacloud.com/gpu-card-model':'a|b|c|d|e|f|g|h|i'",
				      ""), -ENOSPC);
	assert_string_equal(s->err, "pods.json: pod default/p: metadata.annotations."
			    "alibabacloud.com/gpu-card-model: more than 8 GPU models "
			    "(POD_MAX_GPU_MODELS)");
	assert_int_equal(load_pod_ann(s, "'alibabacloud.com/gpu-count':'1',"
				      "'alibabacloud.com/gpu-card-model':7", ""), -EINVAL);
	assert_int_equal(load_pod(s, "'containers':[{'name':'c','resources':{'limits':"
				  "{'nvidia.com/gpu':'17'}}}]"), -ENOSPC);
	assert_string_equal(s->err, "pods.json: pod default/p: requests 17 "
			    "nvidia.com/gpu, at most 16 (NODE_MAX_GPUS)");
	assert_int_equal(load_pod(s, "'containers':[" GUARANTEED("257") "]"), -ENOSPC);
	assert_string_equal(s->err, "pods.json: pod default/p: a Guaranteed pod "
			    "requesting 257 whole cores takes them exclusively: at "
			    "most 256 (NODE_MAX_CORES)");
}

/* Exclusive cores: a Guaranteed pod (qos.go, ComputePodQOS: cpu and
 * memory limits in every container and init container, requests equal)
 * with a whole number of cores (policy_static.go). */
static void test_pod_exclusive_cores(void **state)
{
	struct sink *s = *state;
	const struct pod_spec *p = &s->pods[0];
	assert_int_equal(load_pod(s, "'containers':[" GUARANTEED("2") "]"), 0);
	assert_int_equal(p->exclusive_cores, 2);
	assert_int_equal(load_pod(s, "'containers':[" GUARANTEED("256") "]"), 0);
	assert_int_equal(p->exclusive_cores, 256);
	assert_int_equal(load_pod(s, "'containers':[{'name':'c','resources':{"
				  "'requests':{'cpu':'2000m','memory':'1Gi'},"
				  "'limits':{'cpu':'2','memory':'1Gi'}}}," GUARANTEED("1") "],"
				  "'initContainers':[" GUARANTEED("4") "]"), 0);
	assert_int_equal(p->exclusive_cores, 4); /* the effective request */

	/* Not whole cores, or not Guaranteed: shared. */
	assert_int_equal(load_pod(s, "'containers':[" GUARANTEED("1500m") "]"), 0);
	assert_int_equal(p->exclusive_cores, 0);
	assert_int_equal(load_pod(s, "'containers':[" GUARANTEED("1") "],"
				  "'overhead':{'cpu':'100m'}"), 0);
	assert_int_equal(p->exclusive_cores, 0);
	assert_int_equal(load_pod(s, "'containers':[{'name':'c','resources':{"
				  "'requests':{'cpu':'1','memory':'1Gi'},"
				  "'limits':{'cpu':'2','memory':'1Gi'}}}]"), 0);
	assert_int_equal(p->exclusive_cores, 0);
	assert_int_equal(load_pod(s, "'containers':[{'name':'c','resources':{"
				  "'limits':{'cpu':'2'}}}]"), 0);
	assert_int_equal(p->exclusive_cores, 0);
	assert_int_equal(load_pod(s, "'containers':[{'name':'c','resources':{"
				  "'limits':{'cpu':'2','memory':'0'}}}]"), 0);
	assert_int_equal(p->exclusive_cores, 0);
	assert_int_equal(load_pod(s, "'containers':[{'name':'c','resources':{"
				  "'requests':{'cpu':'0','memory':'1Gi'},"
				  "'limits':{'cpu':'2','memory':'1Gi'}}}," GUARANTEED("2") "]"), 0);
	assert_int_equal(p->exclusive_cores, 0);
	assert_int_equal(load_pod(s, "'containers':[" GUARANTEED("2") "],"
				  "'initContainers':[{'name':'i'}]"), 0);
	assert_int_equal(p->exclusive_cores, 0);
	assert_int_equal(load_pod(s, "'containers':[]"), 0);
	assert_int_equal(p->exclusive_cores, 0);
	assert_int_equal(load(s, "pods.json", "{'kind':'Pod','metadata':{'name':'p'}}"), 0);
	assert_int_equal(p->exclusive_cores, 0);
	/* Not rejected above NODE_MAX_CORES when not exclusive. */
	assert_int_equal(load_pod(s, "'containers':[{'name':'c','resources':{"
				  "'requests':{'cpu':'300'}}}]"), 0);
	assert_int_equal(p->exclusive_cores, 0);
}

/* Device fields keep the equivalence bytes: same set in any order, a
 * model set without a GPU, annotations naming the defaults. */
static void test_pod_devices_equivalence(void **state)
{
	struct sink *s = *state;
	size_t from = offsetof(struct pod_spec, node_name);
	assert_int_equal(load(s, "pods.json",
		"{'kind':'Pod','metadata':{'name':'a','annotations':{"
		" 'alibabacloud.com/gpu-milli':'300',"
		" 'alibabacloud.com/gpu-card-model':'T4|V100'}},"
		" 'spec':{'containers':[" GUARANTEED("2") "]}}\n"
		"{'kind':'Pod','metadata':{'name':'b','annotations':{"
		" 'alibabacloud.com/gpu-count':'1','alibabacloud.com/gpu-milli':'300',"
		" 'alibabacloud.com/gpu-card-model':'V100||T4|V100'}},"
		" 'spec':{'containers':[" GUARANTEED("2000m") "]}}\n"
		"{'kind':'Pod','metadata':{'name':'c','annotations':{"
		" 'alibabacloud.com/gpu-card-model':'T4'}},'spec':{}}\n"
		"{'kind':'Pod','metadata':{'name':'d'},'spec':{}}\n"), 0);
	assert_int_equal(s->n_pods, 4);
	assert_int_equal(s->pods[0].exclusive_cores, 2);
	assert_memory_equal((const char *)&s->pods[0] + from,
			    (const char *)&s->pods[1] + from,
			    sizeof(struct pod_spec) - from);
	assert_memory_equal((const char *)&s->pods[2] + from,
			    (const char *)&s->pods[3] + from,
			    sizeof(struct pod_spec) - from);
}

/* Every prefix of valid input is handled (accepted or refused with a
 * message), reading only the bytes given. */
static void test_prefixes_are_bounded(void **state)
{
	struct sink *s = *state;
	char json[sizeof(node_json)];
	for (size_t i = 0; i < sizeof(node_json); i++)
		json[i] = node_json[i] == '\'' ? '"' : node_json[i];
	size_t len = strlen(json);
	for (size_t k = 0; k < len; k++) {
		char *exact = malloc(k > 0 ? k : 1);
		assert_non_null(exact);
		memcpy(exact, json, k);
		s->err[0] = '\0';
		int rc = k8s_load_buffer("n.json", exact, k, &s->ctx, &s->v, s->err,
					 sizeof(s->err));
		if (rc < 0)
			assert_true(strncmp(s->err, "n.json", 6) == 0);
		else
			assert_true(k == 0); /* only the empty prefix is whole */
		free(exact);
	}
}

/* The same for the objects pass and a pod reading those objects: every
 * prefix of a List of Namespaces, Services, controllers and a Pod. */
static void test_objects_prefixes_are_bounded(void **state)
{
	struct sink *s = *state;
	static const char objects_json[] =
		"{'kind':'List','items':[{'kind':'Namespace','metadata':{'name':'a',"
		"'labels':{'t':'x'}}},{'kind':'Service','metadata':{'name':'s'},'spec':"
		"{'selector':{'app':'w'}}},{'apiVersion':'apps/v1','kind':'ReplicaSet',"
		"'metadata':{'name':'r'},'spec':{'selector':{'matchExpressions':[{'key':"
		"'app','operator':'In','values':['w']}]}}},{'kind':'Pod','metadata':{"
		"'name':'p','labels':{'app':'w'},'ownerReferences':[{'apiVersion':"
		"'apps/v1','kind':'ReplicaSet','name':'r','controller':true}]},'spec':{"
		"'resources':{'limits':{'cpu':'1','memory':'1Gi'}},'affinity':{"
		"'podAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':[{"
		"'topologyKey':'z','namespaceSelector':{'matchLabels':{'t':'x'}}}]}}}}]}";
	char json[sizeof(objects_json)];
	for (size_t i = 0; i < sizeof(objects_json); i++)
		json[i] = objects_json[i] == '\'' ? '"' : objects_json[i];
	size_t len = strlen(json);
	for (size_t k = 0; k <= len; k++) {
		char *exact = malloc(k > 0 ? k : 1);
		assert_non_null(exact);
		memcpy(exact, json, k);
		k8s_objects_destroy(s->ctx.objects);
		s->ctx.objects = k8s_objects_create();
		s->err[0] = '\0';
		int rc = k8s_objects_read_buffer("o.json", exact, k, &s->ctx, s->err,
						 sizeof(s->err));
		if (rc < 0)
			assert_true(strncmp(s->err, "o.json", 6) == 0);
		s->n_pods = s->n_nodes = 0;
		rc = k8s_load_buffer("o.json", exact, k, &s->ctx, &s->v, s->err,
				     sizeof(s->err));
		if (rc < 0)
			assert_true(strncmp(s->err, "o.json", 6) == 0);
		else
			assert_true(k == 0 || k == len);
		free(exact);
	}
	/* The whole: the pod got its default selector and its namespace. */
	assert_int_equal(s->n_pods, 1);
	struct pod_group g = group_of(s, 0);
	assert_true(g.default_selector.present);
	assert_int_equal(g.terms[0].n_ns, 1);
	assert_int_equal(s->pods[0].request.v[RES_CPU], 1000);
	drop_objects(s);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(test_node_fields),
		T(test_node_capacity_when_no_allocatable),
		T(test_node_ready),
		T(test_node_errors),
		T(test_node_limits),
		T(test_pod_identity),
		T(test_pod_equivalence_bytes),
		T(test_requests_containers),
		T(test_requests_no_containers),
		T(test_requests_massive_init_and_overhead),
		T(test_requests_sidecars),
		T(test_requests_sidecars_and_init),
		T(test_requests_nonzero_init),
		T(test_requests_named_resources),
		T(test_requests_json_numbers),
		T(test_requests_errors),
		T(test_pod_level_requests),
		T(test_pod_level_qos),
		T(test_pod_level_errors),
		T(test_node_selector),
	T(test_label_limits),
		T(test_node_affinity),
		T(test_node_affinity_validation),
		T(test_node_affinity_invalid_values),
		T(test_node_affinity_limits),
		T(test_tolerations),
		T(test_host_ports),
		T(test_pod_groups),
		T(test_cluster_file_pods_count_whatever_they_carry),
		T(test_unsupported_pods),
		T(test_objects_read),
		T(test_objects_errors),
		T(test_default_selector),
		T(test_namespace_selector),
		T(test_scheduler_name_picks_profile),
		T(test_lists),
		T(test_json_lines),
		T(test_kind_errors),
		T(test_syntax_errors),
		T(test_visitor),
		T(test_load_file),
		T(test_node_gpu_count),
		T(test_node_gpu_model),
		T(test_node_cores),
		T(test_node_device_errors),
		T(test_pod_gpu_annotations),
		T(test_pod_wait_annotation),
		T(test_pod_gpu_models),
		T(test_pod_device_errors),
		T(test_pod_exclusive_cores),
		T(test_pod_devices_equivalence),
		T(test_prefixes_are_bounded),
		T(test_objects_prefixes_are_bounded),
	};
#undef T
	return cmocka_run_group_tests(tests, NULL, NULL);
}
