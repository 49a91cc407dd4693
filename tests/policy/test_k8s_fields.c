/* unit.k8s_fields: the walker of Kubernetes field validation
 * (policy/k8s_fields.c) against the table derived from Kubernetes' OpenAPI
 * document (policy/k8s_fields_table.c). What "unknown" means is what the
 * API server's server-side field validation means (fieldValidation=Strict:
 * "This will fail the request with a BadRequest error if any unknown fields
 * would be dropped from the object ... The error returned from the server
 * will contain all unknown and duplicate fields encountered", meta/v1
 * CreateOptions.fieldValidation): a name that is not a field of the type,
 * at any depth. JSON here is written with ' for ". */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "policy/policy.h"

static json_t *parse(const char *text)
{
	char *buf = strdup(text);
	assert_non_null(buf);
	for (char *p = buf; *p != '\0'; p++)
		if (*p == '\'')
			*p = '"';
	json_error_t je;
	json_t *v = json_loads(buf, 0, &je);
	if (v == NULL)
		fail_msg("bad test JSON: %s: %s", je.text, buf);
	free(buf);
	return v;
}

static size_t check(const char *json, const char *api, const char *kind,
		    struct k8s_fields_report *r)
{
	json_t *v = parse(json);
	size_t n = k8s_fields_check(v, api, kind, "", r);
	json_decref(v);
	return n;
}

/* The three: a misspelt nodeSelector, requests, labels. */
static void test_typos_named_with_the_field_meant(void **state)
{
	(void)state;
	struct k8s_fields_report r;
	assert_int_equal(check("{'kind':'Pod','metadata':{'name':'p'},'spec':"
			       "{'nodeSelectr':{'disk':'ssd'},'containers':[{'name':'c'}]}}",
			       "v1", "Pod", &r), 1);
	assert_string_equal(r.msg[0], "spec.nodeSelectr: unknown field (did you mean "
			    "spec.nodeSelector?)");
	/* In an array of containers, at depth. */
	assert_int_equal(check("{'kind':'Pod','metadata':{'name':'p'},'spec':"
			       "{'containers':[{'name':'a'},{'name':'b','resources':"
			       "{'request':{'cpu':'64'}}}]}}", "v1", "Pod", &r), 1);
	assert_string_equal(r.msg[0], "spec.containers[1].resources.request: unknown "
			    "field (did you mean spec.containers[1].resources.requests?)");
	assert_int_equal(check("{'kind':'Pod','metadata':{'name':'p','lables':{'a':'b'}},"
			       "'spec':{'containers':[]}}", "", "Pod", &r), 1);
	assert_string_equal(r.msg[0], "metadata.lables: unknown field (did you mean "
			    "metadata.labels?)");
	/* A case-insensitive match, whatever the distance. */
	assert_int_equal(check("{'spec':{'NODESELECTOR':{}}}", NULL, "Pod", &r), 1);
	assert_string_equal(r.msg[0], "spec.NODESELECTOR: unknown field (did you mean "
			    "spec.nodeSelector?)");
	/* Nothing near: no guess. */
	assert_int_equal(check("{'spec':{'someFutureField':{'a':1}}}", NULL, "Pod", &r), 1);
	assert_string_equal(r.msg[0], "spec.someFutureField: unknown field");
}

/* Every unknown field is counted; the first K8S_FIELDS_MAX_REPORT named. */
static void test_all_counted_some_named(void **state)
{
	(void)state;
	struct k8s_fields_report r;
	char json[2048] = "{'spec':{";
	for (int i = 0; i < 20; i++)
		snprintf(json + strlen(json), sizeof(json) - strlen(json), "%s'zz%d':1",
			 i > 0 ? "," : "", i);
	strcat(json, "}}");
	assert_int_equal(check(json, "v1", "Pod", &r), 20);
	assert_int_equal(r.n, K8S_FIELDS_MAX_REPORT);
	char line[4096];
	k8s_fields_report_line(&r, line, sizeof(line));
	assert_non_null(strstr(line, "; and 12 more unknown fields"));
	assert_non_null(strstr(line, "spec.zz0: unknown field; spec.zz1: unknown field"));
}

/* Maps take any key (labels, nodeSelector, resource lists); opaque types
 * (Quantity, FieldsV1 of managedFields) are not looked into; status and
 * managedFields are fields of the type (a kubectl dump loads). */
static void test_maps_opaque_and_status_are_known(void **state)
{
	(void)state;
	struct k8s_fields_report r;
	assert_int_equal(check("{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p',"
			       "'labels':{'anything':'x'},'annotations':{'a/b':'c'},"
			       "'managedFields':[{'manager':'kubectl','operation':'Update',"
			       "'fieldsType':'FieldsV1','fieldsV1':{'f:spec':{'f:x':{}}}}],"
			       "'ownerReferences':[{'kind':'ReplicaSet','name':'r','uid':'u',"
			       "'apiVersion':'apps/v1','controller':true}]},"
			       "'spec':{'nodeSelector':{'whatever':'y'},'containers':[{'name':"
			       "'c','resources':{'requests':{'cpu':'1','example.com/foo':'2'}}}],"
			       "'affinity':{'nodeAffinity':{'requiredDuringSchedulingIgnoredDuring"
			       "Execution':{'nodeSelectorTerms':[{'matchFields':[{'key':"
			       "'metadata.name','operator':'In','values':['n']}]}]}}}},"
			       "'status':{'phase':'Running','conditions':[{'type':'Ready',"
			       "'status':'True'}],'qosClass':'Burstable'}}", "v1", "Pod", &r),
			 0);
	/* Deep in a node selector term. */
	assert_int_equal(check("{'spec':{'affinity':{'nodeAffinity':{'requiredDuring"
			       "SchedulingIgnoredDuringExecution':{'nodeSelectorTerms':"
			       "[{'matchExpresions':[]}]}}}}}", "v1", "Pod", &r), 1);
	assert_string_equal(r.msg[0], "spec.affinity.nodeAffinity.requiredDuring"
			    "SchedulingIgnoredDuringExecution.nodeSelectorTerms[0]."
			    "matchExpresions: unknown field (did you mean spec.affinity."
			    "nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
			    "nodeSelectorTerms[0].matchExpressions?)");
}

/* A list's own members are checked; its items are not followed (the
 * decoder checks each as an object of its own, with its own kind). */
static void test_lists_and_kinds(void **state)
{
	(void)state;
	struct k8s_fields_report r;
	assert_int_equal(check("{'apiVersion':'v1','kind':'List','metadata':"
			       "{'resourceVersion':''},'items':[{'kind':'Pod','bogus':1}],"
			       "'itmes':[]}", "v1", "List", &r), 1);
	assert_string_equal(r.msg[0], "itmes: unknown field (did you mean items?)");
	/* Nodes, the first pass's kinds, PriorityClass and PDB are checked. */
	assert_int_equal(check("{'spec':{'taint':[]}}", "v1", "Node", &r), 1);
	assert_string_equal(r.msg[0], "spec.taint: unknown field (did you mean spec.taints?)");
	assert_int_equal(check("{'spec':{'selectr':{}}}", "apps/v1", "ReplicaSet", &r), 1);
	assert_int_equal(check("{'spec':{'selector':{'matchLabel':{}}}}", "policy/v1",
			       "PodDisruptionBudget", &r), 1);
	assert_string_equal(r.msg[0], "spec.selector.matchLabel: unknown field (did you "
			    "mean spec.selector.matchLabels?)");
	assert_int_equal(check("{'value':1,'globaldefault':true}", "scheduling.k8s.io/v1",
			       "PriorityClass", &r), 1);
	assert_int_equal(check("{'metadata':{'labls':{}}}", "v1", "Namespace", &r), 1);
	assert_int_equal(check("{'spec':{'selectr':{}}}", "v1", "Service", &r), 1);
	/* A kind or version the table lacks is not checked: scheduler-plugins'
	 * PodGroup (no apiVersion, or scheduling.x-k8s.io), another version. */
	assert_int_equal(check("{'spec':{'minMember':2}}", NULL, "PodGroup", &r), 0);
	assert_int_equal(check("{'spec':{'minMember':2}}", "scheduling.x-k8s.io/v1alpha1",
			       "PodGroup", &r), 0);
	assert_int_equal(check("{'spec':{'bogus':2}}", "apps/v1beta2", "ReplicaSet", &r), 0);
	assert_false(k8s_fields_known_kind("v1", "ConfigMap"));
	assert_true(k8s_fields_known_kind(NULL, "Pod"));
	/* Both 1.35's spec.workloadRef and 1.36's spec.schedulingGroup are
	 * known (the table is the union of the releases). */
	assert_int_equal(check("{'spec':{'workloadRef':{'name':'w','podGroup':'g'},"
			       "'schedulingGroup':{'podGroupName':'x'}}}", "v1", "Pod", &r), 0);
}

static void test_levels_parse(void **state)
{
	(void)state;
	enum k8s_field_validation v;
	assert_int_equal(k8s_field_validation_parse("Strict", &v), 0);
	assert_int_equal(v, K8S_FIELDS_STRICT);
	assert_int_equal(k8s_field_validation_parse("warn", &v), 0);
	assert_int_equal(v, K8S_FIELDS_WARN);
	assert_int_equal(k8s_field_validation_parse("Ignore", &v), 0);
	assert_int_equal(v, K8S_FIELDS_IGNORE);
	assert_int_equal(k8s_field_validation_parse("lenient", &v), -EINVAL);
	assert_int_equal(k8s_field_validation_parse("", &v), -EINVAL);
	assert_string_equal(k8s_field_validation_name(K8S_FIELDS_WARN), "Warn");
}

/* Bounded: a path deeper than the message buffer is cut, never overrun. */
static void test_long_paths_bounded(void **state)
{
	(void)state;
	struct k8s_fields_report r;
	char key[300];
	memset(key, 'k', sizeof(key) - 1);
	key[sizeof(key) - 1] = '\0';
	json_t *pod = json_object();
	json_t *meta = json_object();
	json_t *owners = json_array();
	for (int i = 0; i < 3; i++) {
		json_t *o = json_object();
		json_object_set_new(o, key, json_true());
		json_array_append_new(owners, o);
	}
	json_object_set_new(meta, "ownerReferences", owners);
	json_object_set_new(pod, "metadata", meta);
	assert_int_equal(k8s_fields_check(pod, "v1", "Pod", key, &r), 3);
	assert_true(strlen(r.msg[0]) < K8S_FIELDS_MSG_MAX);
	json_decref(pod);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_typos_named_with_the_field_meant),
		cmocka_unit_test(test_all_counted_some_named),
		cmocka_unit_test(test_maps_opaque_and_status_are_known),
		cmocka_unit_test(test_lists_and_kinds),
		cmocka_unit_test(test_levels_parse),
		cmocka_unit_test(test_long_paths_bounded),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
