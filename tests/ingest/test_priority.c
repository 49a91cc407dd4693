/* unit.priority: spec.priority, priorityClassName and preemptionPolicy as
 * decoded (ingest/k8s_json.h), PriorityClass objects, and the Priority
 * admission rules (ingest/priority.c), in cases modelled on (not ported
 * from) kube-apiserver's plugin/pkg/admission/priority/admission_test.go
 * and PriorityClass validation (pkg/apis/scheduling/validation). JSON is
 * written with ' for " (load() swaps them). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ingest/ingest.h"
#include "shm/shm.h"

struct fx {
	struct intern *strings;
	struct res_names res;
	struct priority_classes classes;
	struct gang_table gangs;
	struct pod_spec pods[8];
	unsigned n_pods, n_classes;
	char err[512];
};

static int on_pod(void *arg, const struct pod_spec *p, const struct k8s_pod_meta *m,
		  char *err, size_t err_len)
{
	(void)m, (void)err, (void)err_len;
	struct fx *f = arg;
	assert_true(f->n_pods < 8);
	f->pods[f->n_pods++] = *p;
	return 0;
}

static int on_class(void *arg, const struct k8s_priority_class *pc, char *err,
		    size_t err_len)
{
	struct fx *f = arg;
	f->n_classes++;
	return priority_classes_put(&f->classes, f->strings, pc, err, err_len);
}

static int on_group(void *arg, const struct k8s_pod_group *pg, char *err,
		    size_t err_len)
{
	struct fx *f = arg;
	return gang_table_put(&f->gangs, f->strings, pg, err, err_len);
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	if (f == NULL || (f->strings = intern_create()) == NULL)
		return -1;
	res_names_init(&f->res);
	if (priority_classes_init(&f->classes, f->strings) != 0)
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	intern_destroy(f->strings);
	free(f);
	return 0;
}

/* Loads `json` (' for "); returns the loader's result. */
static int load(struct fx *f, const char *json)
{
	char buf[4096];
	size_t n = strlen(json);
	assert_true(n < sizeof(buf));
	for (size_t i = 0; i <= n; i++)
		buf[i] = json[i] == '\'' ? '"' : json[i];
	struct k8s_ctx kc = {.strings = f->strings, .res = &f->res};
	struct k8s_visitor v = {.arg = f, .pod = on_pod, .priority_class = on_class,
				.pod_group = on_group};
	f->n_pods = 0;
	f->err[0] = '\0';
	return k8s_load_buffer("p.json", buf, n, &kc, &v, f->err, sizeof(f->err));
}

static uint32_t sid(struct fx *f, const char *s)
{
	uint32_t id;
	assert_int_equal(intern_add_str(f->strings, s, &id), 0);
	return id;
}

#define POD_WITH(fields) "{'kind':'Pod','metadata':{'name':'p'},'spec':{" fields \
			 ",'containers':[{'name':'c'}]}}"
#define POD(spec) "{'kind':'Pod','metadata':{'name':'p'},'spec':{'containers':" \
		  "[{'name':'c'}]" spec "}}"

static void test_pod_fields(void **state)
{
	struct fx *f = *state;
	assert_int_equal(load(f, POD(",'priority':-7,'priorityClassName':'high',"
				     "'preemptionPolicy':'Never'")), 0);
	const struct pod_spec *p = &f->pods[0];
	assert_int_equal(p->priority, -7);
	assert_int_equal(p->priority_class, sid(f, "high"));
	assert_int_equal(p->priority_flags, POD_PRIORITY_GIVEN | POD_PREEMPT_NEVER |
					    POD_PREEMPTION_GIVEN);
	assert_int_equal(load(f, POD("")), 0);
	assert_int_equal(f->pods[0].priority, 0);
	assert_int_equal(f->pods[0].priority_class, 0);
	assert_int_equal(f->pods[0].priority_flags, 0);
	assert_int_equal(load(f, POD(",'priority':2147483648")), -EINVAL);
	assert_string_equal(f->err, "p.json: pod default/p: spec.priority: "
			    "2147483648 is not a 32-bit integer");
	assert_int_equal(load(f, POD(",'priority':'1'")), -EINVAL);
	assert_int_equal(load(f, POD(",'preemptionPolicy':'Sometimes'")), -EINVAL);
	assert_string_equal(f->err, "p.json: pod default/p: spec.preemptionPolicy: "
			    "\"Sometimes\": expected PreemptLowerPriority or Never");
	/* Priority is no constraint: two pods that differ only in it share
	 * an equivalence class. */
	assert_int_equal(load(f, POD(",'priority':5")), 0);
	struct pod_spec a = f->pods[0];
	assert_int_equal(load(f, POD(",'priority':6")), 0);
	assert_true(pod_class_equal(&a, &f->pods[0]));
}

static void test_priority_class_objects(void **state)
{
	struct fx *f = *state;
	assert_int_equal(load(f, "{'kind':'PriorityClassList','items':["
			      "{'metadata':{'name':'high'},'value':1000,"
			      "'description':'x','preemptionPolicy':'Never'},"
			      "{'apiVersion':'scheduling.k8s.io/v1','kind':"
			      "'PriorityClass','metadata':{'name':'low'},"
			      "'value':-10,'globalDefault':true}]}"), 0);
	assert_int_equal(f->n_classes, 2);
	const struct k8s_priority_class *h = priority_classes_find(&f->classes,
								   sid(f, "high"));
	assert_non_null(h);
	assert_int_equal(h->value, 1000);
	assert_true(h->preempt_never);
	assert_false(h->global_default);
	const struct k8s_priority_class *l = priority_classes_find(&f->classes,
								   sid(f, "low"));
	assert_non_null(l);
	assert_int_equal(l->value, -10);
	assert_true(l->global_default);
	/* Validation: each refusal names the class and why. */
	struct {
		const char *json, *err;
	} bad[] = {
		{"{'kind':'PriorityClass','metadata':{'name':'x'}}",
		 "p.json: priorityclass x: value: missing"},
		{"{'kind':'PriorityClass','metadata':{'name':'x'},'value':1000000001}",
		 "PriorityClass x: value 1000000001: at most 1000000000 "
		 "(HighestUserDefinablePriority)"},
		{"{'kind':'PriorityClass','metadata':{'name':'system-mine'},'value':1}",
		 "PriorityClass system-mine: the prefix \"system-\" is reserved"},
		{"{'kind':'PriorityClass','metadata':{'name':'system-node-critical'},"
		 "'value':2000001000}",
		 "PriorityClass system-node-critical: a system class, which cannot "
		 "be declared"},
		{"{'kind':'PriorityClass','metadata':{'name':'other'},'value':1,"
		 "'globalDefault':true}",
		 "PriorityClass other: globalDefault, but low is already the "
		 "default; only one can be"},
		{"{'kind':'PriorityClass','metadata':{'name':'high'},'value':1001}",
		 "PriorityClass high: value 1001: may not change (it is 1000)"},
		{"{'kind':'PriorityClass','metadata':{'name':'x'},'value':1,"
		 "'preemptionPolicy':'No'}",
		 "p.json: priorityclass x: preemptionPolicy: \"No\": expected "
		 "PreemptLowerPriority or Never"},
	};
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(load(f, bad[i].json), -EINVAL);
		if (strstr(f->err, bad[i].err) == NULL)
			fail_msg("case %u: got \"%s\", expected \"%s\"", i, f->err,
				 bad[i].err);
	}
	/* The same value again is no change; the policy may change. */
	assert_int_equal(load(f, "{'kind':'PriorityClass','metadata':{'name':"
			      "'high'},'value':1000}"), 0);
	assert_false(priority_classes_find(&f->classes, sid(f, "high"))->preempt_never);
	assert_int_equal(f->classes.n, 4);
}

/* Admission, case by case (after admission_test.go's TestPodAdmission). */
static void test_admission(void **state)
{
	struct fx *f = *state;
	assert_int_equal(load(f, "{'kind':'PriorityClass','metadata':{'name':"
			      "'high'},'value':1000}"), 0);
	assert_int_equal(load(f, "{'kind':'PriorityClass','metadata':{'name':"
			      "'nonpreempting'},'value':500,'preemptionPolicy':"
			      "'Never'}"), 0);
	struct {
		const char *spec;
		int rc;
		int32_t priority;
		bool never;
		const char *err;
	} cases[] = {
		/* no class and no default class: 0 */
		{"", 0, 0, false, NULL},
		/* a class that exists */
		{",'priorityClassName':'high'", 0, 1000, false, NULL},
		/* a class that does not */
		{",'priorityClassName':'nope'", -EINVAL, 0, false,
		 "spec.priorityClassName: no PriorityClass with name nope was found"},
		/* a system class */
		{",'priorityClassName':'system-node-critical'", 0, 2000001000, false,
		 NULL},
		/* spec.priority equal to the class's value */
		{",'priorityClassName':'high','priority':1000", 0, 1000, false, NULL},
		/* spec.priority without a class: refused */
		{",'priority':55", -EINVAL, 0, false,
		 "spec.priority: the integer value of priority (55) must not be "
		 "provided in pod spec; priority admission controller computed 0 "
		 "from the given PriorityClass name"},
		/* a non-preempting class */
		{",'priorityClassName':'nonpreempting'", 0, 500, true, NULL},
		/* the class's policy, explicitly: fine */
		{",'priorityClassName':'nonpreempting','preemptionPolicy':'Never'", 0,
		 500, true, NULL},
		/* a preemptionPolicy other than the class's */
		{",'priorityClassName':'high','preemptionPolicy':'Never'", -EINVAL, 0,
		 false, "spec.preemptionPolicy: the string value of PreemptionPolicy "
		 "(Never) must not be provided in pod spec; priority admission "
		 "controller computed PreemptLowerPriority from the given "
		 "PriorityClass name"},
	};
	char json[512];
	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(json, sizeof(json), POD("%s"), cases[i].spec);
		assert_int_equal(load(f, json), 0);
		struct pod_spec *p = &f->pods[0];
		char err[512] = "";
		int rc = priority_resolve(&f->classes, f->strings, p, false, err,
					  sizeof(err));
		if (rc != cases[i].rc)
			fail_msg("case %u: rc %d (%s)", i, rc, err);
		if (rc < 0) {
			assert_string_equal(err, cases[i].err);
			continue;
		}
		assert_int_equal(p->priority, cases[i].priority);
		assert_int_equal((p->priority_flags & POD_PREEMPT_NEVER) != 0,
				 cases[i].never);
	}
	/* A global default class applies to pods that name none. */
	assert_int_equal(load(f, "{'kind':'PriorityClass','metadata':{'name':"
			      "'dflt'},'value':-3,'globalDefault':true}"), 0);
	assert_int_equal(load(f, POD("")), 0);
	assert_int_equal(priority_resolve(&f->classes, f->strings, &f->pods[0],
					  false, f->err, sizeof(f->err)), 0);
	assert_int_equal(f->pods[0].priority, -3);
	assert_int_equal(f->pods[0].priority_class, sid(f, "dflt"));
	/* Lenient (a cluster file's pods, admitted already): spec.priority
	 * as given, an unknown class no refusal. */
	assert_int_equal(load(f, POD(",'priorityClassName':'gone','priority':77")), 0);
	assert_int_equal(priority_resolve(&f->classes, f->strings, &f->pods[0],
					  true, f->err, sizeof(f->err)), 0);
	assert_int_equal(f->pods[0].priority, 77);
	assert_int_equal(load(f, POD(",'priorityClassName':'gone'")), 0);
	assert_int_equal(priority_resolve(&f->classes, f->strings, &f->pods[0],
					  true, f->err, sizeof(f->err)), 0);
	assert_int_equal(f->pods[0].priority, 0);
}

/* PodGroups (coscheduling) and the label that names a pod's gang. */
static void test_pod_groups(void **state)
{
	struct fx *f = *state;
	assert_int_equal(load(f, "{'kind':'PodGroupList','items':[{'metadata':"
			      "{'name':'g','namespace':'ml'},'spec':{'minMember':4,"
			      "'scheduleTimeoutSeconds':30}},{'kind':'PodGroup','metadata':"
			      "{'name':'h'},'spec':{'minMember':2}}]}"), 0);
	assert_int_equal(f->gangs.n, 2);
	assert_int_equal(f->gangs.g[0].name, sid(f, "ml/g"));
	assert_int_equal(f->gangs.g[0].min_member, 4);
	assert_int_equal(f->gangs.g[0].timeout_s, 30);
	assert_int_equal(load(f, "{'kind':'Pod','metadata':{'name':'p','namespace':"
			      "'ml','labels':{'scheduling.x-k8s.io/pod-group':'g'}},"
			      "'spec':{'containers':[{'name':'c'}]}}"), 0);
	struct pod_spec p = f->pods[0];
	assert_int_equal(p.gang, sid(f, "ml/g"));
	assert_int_equal(gang_resolve(&f->gangs, f->strings, &p, f->err,
				      sizeof(f->err)), 0);
	assert_int_equal(p.gang_min, 4);
	assert_int_equal(p.gang_timeout_s, 30);
	assert_int_equal(load(f, "{'kind':'Pod','metadata':{'name':'p','labels':"
			      "{'scheduling.x-k8s.io/pod-group':'h'}},'spec':"
			      "{'containers':[{'name':'c'}]}}"), 0);
	p = f->pods[0];
	assert_int_equal(gang_resolve(&f->gangs, f->strings, &p, f->err,
				      sizeof(f->err)), 0);
	assert_int_equal(p.gang_timeout_s, GANG_TIMEOUT_DEFAULT_S);
	/* The gang is the PodGroup in the pod's own namespace. */
	assert_int_equal(load(f, "{'kind':'Pod','metadata':{'name':'p','labels':"
			      "{'scheduling.x-k8s.io/pod-group':'g'}},'spec':"
			      "{'containers':[{'name':'c'}]}}"), 0);
	p = f->pods[0];
	assert_int_equal(gang_resolve(&f->gangs, f->strings, &p, f->err,
				      sizeof(f->err)), -EINVAL);
	assert_string_equal(f->err, "no PodGroup default/g was declared (the pod's "
			    "gang: its label scheduling.x-k8s.io/pod-group or "
			    "spec.schedulingGroup)");
	struct {
		const char *json, *err;
	} bad[] = {
		{"{'kind':'PodGroup','metadata':{'name':'x'}}",
		 "p.json: podgroup default/x: spec: missing"},
		{"{'kind':'PodGroup','metadata':{'name':'x'},'spec':{}}",
		 "p.json: podgroup default/x: spec.minMember: missing: expected "
		 "1..100000"},
		{"{'kind':'PodGroup','metadata':{'name':'x'},'spec':{'minMember':0}}",
		 "p.json: podgroup default/x: spec.minMember: out of range: expected "
		 "1..100000"},
		{"{'kind':'PodGroup','metadata':{'name':'x'},'spec':{'minMember':2,"
		 "'scheduleTimeoutSeconds':0}}",
		 "p.json: podgroup default/x: spec.scheduleTimeoutSeconds: 0: expected "
		 "1..86400"},
		{"{'kind':'PodGroup','metadata':{'name':'x'},'spec':{'minMember':257}}",
		 "PodGroup default/x: minMember 257: at most 256"},
	};
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(load(f, bad[i].json), -EINVAL);
		if (strstr(f->err, bad[i].err) == NULL)
			fail_msg("case %u: got \"%s\", expected \"%s\"", i, f->err,
				 bad[i].err);
	}
}

/* Loads one pod and resolves its gang; returns gang_resolve's result. */
static int pod_gang_of(struct fx *f, const char *json, struct pod_spec *p)
{
	assert_int_equal(load(f, json), 0);
	*p = f->pods[0];
	return gang_resolve(&f->gangs, f->strings, p, f->err, sizeof(f->err));
}

/* Kubernetes' own gangs: a 1.35 Workload's podGroups (spec.workloadRef,
 * with replica keys) and a 1.36 PodGroup (spec.schedulingGroup); the
 * basic policy is no gang; the refusals, by path. */
static void test_kube_gangs(void **state)
{
	struct fx *f = *state;
	struct pod_spec p;
	assert_int_equal(load(f, "{'apiVersion':'scheduling.k8s.io/v1alpha1','kind':"
			      "'Workload','metadata':{'name':'train','namespace':'ml'},"
			      "'spec':{'controllerRef':{'kind':'Job','name':'j'},"
			      "'podGroups':[{'name':'workers','policy':{'gang':"
			      "{'minCount':4}}},{'name':'driver','policy':{'basic':{}}}]}}"),
			 0);
	assert_int_equal(f->gangs.n, 2);
	assert_int_equal(f->gangs.g[0].name, sid(f, "ml/train/workers"));
	assert_int_equal(f->gangs.g[0].min_member, 4);
	assert_int_equal(f->gangs.g[0].timeout_s, 300);
	assert_int_equal(f->gangs.g[1].min_member, 0);

	assert_int_equal(pod_gang_of(f, "{'kind':'Pod','metadata':{'name':'w0','namespace':"
				     "'ml'},'spec':{'workloadRef':{'name':'train',"
				     "'podGroup':'workers'},'containers':[{'name':'c'}]}}",
				     &p), 0);
	assert_int_equal(p.gang, sid(f, "ml/train/workers"));
	assert_int_equal(p.gang_min, 4);
	assert_int_equal(p.gang_timeout_s, 300);
	/* A replica is a gang of its own with the group's policy. */
	assert_int_equal(pod_gang_of(f, "{'kind':'Pod','metadata':{'name':'w0','namespace':"
				     "'ml'},'spec':{'workloadRef':{'name':'train',"
				     "'podGroup':'workers','podGroupReplicaKey':'1'},"
				     "'containers':[{'name':'c'}]}}", &p), 0);
	assert_int_equal(p.gang, sid(f, "ml/train/workers/1"));
	assert_int_equal(p.gang_min, 4);
	/* The basic policy: placed one by one. */
	assert_int_equal(pod_gang_of(f, "{'kind':'Pod','metadata':{'name':'d','namespace':"
				     "'ml'},'spec':{'workloadRef':{'name':'train',"
				     "'podGroup':'driver'},'containers':[{'name':'c'}]}}",
				     &p), 0);
	assert_int_equal(p.gang, 0);
	assert_int_equal(pod_gang_of(f, "{'kind':'Pod','metadata':{'name':'w','namespace':"
				     "'ml'},'spec':{'workloadRef':{'name':'train',"
				     "'podGroup':'ps','podGroupReplicaKey':'0'},'containers':"
				     "[{'name':'c'}]}}", &p), -EINVAL);
	assert_string_equal(f->err, "spec.workloadRef: no Workload ml/train with pod "
			    "group ps was declared");

	/* 1.36: PodGroup objects of scheduling.k8s.io, pods name them. */
	assert_int_equal(load(f, "{'apiVersion':'scheduling.k8s.io/v1alpha2','kind':"
			      "'PodGroup','metadata':{'name':'pg-0','namespace':'ml'},"
			      "'spec':{'schedulingPolicy':{'gang':{'minCount':3}}}}"), 0);
	assert_int_equal(pod_gang_of(f, "{'kind':'Pod','metadata':{'name':'x','namespace':"
				     "'ml'},'spec':{'schedulingGroup':{'podGroupName':"
				     "'pg-0'},'containers':[{'name':'c'}]}}", &p), 0);
	assert_int_equal(p.gang, sid(f, "ml/pg-0"));
	assert_int_equal(p.gang_min, 3);
	assert_int_equal(p.gang_timeout_s, 300);
	/* A 1.36 Workload is a template for PodGroups: nothing to read. */
	unsigned before = f->gangs.n;
	assert_int_equal(load(f, "{'apiVersion':'scheduling.k8s.io/v1alpha2','kind':"
			      "'Workload','metadata':{'name':'t'},'spec':"
			      "{'podGroupTemplates':[{'name':'a'}]}}"), 0);
	assert_int_equal(f->gangs.n, before);

	struct {
		const char *json, *err;
	} bad[] = {
		{"{'apiVersion':'scheduling.k8s.io/v1alpha1','kind':'Workload',"
		 "'metadata':{'name':'w'},'spec':{'podGroups':[]}}",
		 "p.json: workload default/w: spec.podGroups: missing: at least one"},
		{"{'kind':'Workload','metadata':{'name':'w'},'spec':{'podGroups':"
		 "[{'name':'a','policy':{}}]}}",
		 "p.json: workload default/w: spec.podGroups[0].policy: exactly one "
		 "of basic and gang"},
		{"{'kind':'Workload','metadata':{'name':'w'},'spec':{'podGroups':"
		 "[{'name':'a','policy':{'basic':{},'gang':{'minCount':2}}}]}}",
		 "exactly one of basic and gang"},
		{"{'kind':'Workload','metadata':{'name':'w'},'spec':{'podGroups':"
		 "[{'name':'a','policy':{'gang':{'minCount':0}}}]}}",
		 "spec.podGroups[0].policy.gang.minCount: out of range: expected "
		 "1..100000"},
		{"{'kind':'Workload','metadata':{'name':'w'},'spec':{'podGroups':"
		 "[{'name':'a/b','policy':{'basic':{}}}]}}",
		 "spec.podGroups[0].name: \"a/b\": a name has no '/'"},
		{"{'kind':'Workload','metadata':{'name':'w'},'spec':{'podGroups':[7]}}",
		 "spec.podGroups[0]: not an object"},
		{"{'apiVersion':'v1','kind':'Workload','metadata':{'name':'w'}}",
		 "apiVersion: \"v1\": expected scheduling.k8s.io/v1alpha1 or v1alpha2"},
		{"{'apiVersion':'scheduling.k8s.io/v1alpha2','kind':'PodGroup',"
		 "'metadata':{'name':'x'},'spec':{}}",
		 "p.json: podgroup default/x: spec.schedulingPolicy: missing: basic or "
		 "gang"},
		{POD_WITH("'workloadRef':{'name':'w'}"),
		 "spec.workloadRef.podGroup: missing"},
		{POD_WITH("'workloadRef':{'podGroup':'g'}"),
		 "spec.workloadRef.name: missing"},
		{POD_WITH("'workloadRef':7"), "spec.workloadRef: expected an object"},
		{POD_WITH("'schedulingGroup':{}"),
		 "spec.schedulingGroup.podGroupName: missing"},
		{POD_WITH("'schedulingGroup':{'podGroupName':'a'},'workloadRef':"
			  "{'name':'w','podGroup':'g'}"),
		 "spec.workloadRef: a pod names one gang at most"},
	};
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(load(f, bad[i].json), -EINVAL);
		if (strstr(f->err, bad[i].err) == NULL)
			fail_msg("case %u: got \"%s\", expected \"%s\"", i, f->err,
				 bad[i].err);
	}
}

/* The table fills up cleanly. */
static void test_table_is_bounded(void **state)
{
	struct fx *f = *state;
	char name[32], err[256];
	unsigned put = 0;
	int rc = 0;
	for (unsigned i = 0; rc == 0; i++) {
		snprintf(name, sizeof(name), "c%u", i);
		struct k8s_priority_class pc = {.name = sid(f, name), .value = (int32_t)i};
		rc = priority_classes_put(&f->classes, f->strings, &pc, err, sizeof(err));
		put += rc == 0;
	}
	assert_int_equal(rc, -ENOSPC);
	assert_int_equal(put, PRIORITY_CLASSES_MAX - 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_pod_fields, setup, teardown),
		cmocka_unit_test_setup_teardown(test_priority_class_objects, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_admission, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pod_groups, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kube_gangs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_table_is_bounded, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
