/* unit.kueue_json: Kueue's quota objects (ingest/kueue_json.h) as kubectl
 * prints them, into a sealed quota tree. Field names, enums and rules are
 * Kueue's (kubernetes-sigs/kueue): apis/kueue/v1beta2/clusterqueue_types.go
 * (ClusterQueueSpec: cohortName, queueingStrategy Enum StrictFIFO;
 * BestEffortFIFO default BestEffortFIFO, stopPolicy default None,
 * FlavorFungibility defaults MayStopSearch / TryNextFlavor),
 * apis/kueue/v1beta1/clusterqueue_types.go (spec.cohort; Borrow and Preempt
 * as aliases), resourceflavor_types.go (nodeLabels MaxProperties=8),
 * cohort_types.go (parentName), localqueue_types.go, and
 * pkg/webhooks/clusterqueue_webhook.go (validateFlavorQuotas: "must match
 * the name in coveredResources"; validateLimit: limits "must be nil when
 * cohort is empty"; validateLendingLimit; validatePreemption).
 *
 * Before this decoder nothing read these objects: a cluster file skipped
 * and counted them, so every test here fails on the old tree (the header
 * does not exist there). JSON is written with ' for " and one field per
 * line where a test checks the line an error names. */
#define _LGPL_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "ingest/ingest.h"
#include "quota/quota.h"
#include "shm/shm.h"

static char err[2048];

/* ' -> " (a copy the caller frees). */
static char *dq(const char *s)
{
	char *c = strdup(s);
	assert_non_null(c);
	for (char *p = c; *p; p++)
		if (*p == '\'')
			*p = '"';
	return c;
}

static int load(const char *json, bool mixed, struct quota_tree **t)
{
	char *b = dq(json);
	int rc = kueue_load_buffer("t.json", b, strlen(b), mixed, t, err,
				   sizeof(err));
	free(b);
	return rc;
}

#define RF(name, labels)                                                     \
	"{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'ResourceFlavor',"  \
	"'metadata':{'name':'" name "','uid':'0b7c','resourceVersion':'7',"     \
	"'generation':1,'creationTimestamp':'2025-05-01T10:00:00Z',"            \
	"'finalizers':['kueue.x-k8s.io/resource-in-use']},"                     \
	"'spec':{'nodeLabels':" labels "}}"

/* Two teams in one cohort, as Kueue's docs set them up: kubectl's order
 * (flavors, queues, local queues, cohorts last). Line numbers matter. */
static const char *const two_teams =
	"{'apiVersion':'v1','kind':'List','items':[\n"
	RF("on-demand", "{'instance-type':'on-demand'}") ",\n"
	RF("spot", "{'instance-type':'spot','topology.kubernetes.io/zone':'eu-1a'}") ",\n"
	"{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'ClusterQueue',\n"
	" 'metadata':{'name':'team-a','generation':2,'managedFields':[{'manager':'kubectl'}]},\n"
	" 'spec':{'cohortName':'org','queueingStrategy':'BestEffortFIFO',\n"
	"  'stopPolicy':'None','namespaceSelector':{},\n"
	"  'flavorFungibility':{'whenCanBorrow':'MayStopSearch','whenCanPreempt':'TryNextFlavor'},\n"
	"  'preemption':{'reclaimWithinCohort':'Any','borrowWithinCohort':{'policy':'LowerPriority',\n"
	"   'maxPriorityThreshold':100},'withinClusterQueue':'LowerPriority'},\n"
	"  'fairSharing':{'weight':'2'},\n"
	"  'resourceGroups':[{'coveredResources':['cpu','memory'],'flavors':[\n"
	"   {'name':'on-demand','resources':[{'name':'cpu','nominalQuota':'9','borrowingLimit':'6'},\n"
	"     {'name':'memory','nominalQuota':'36Gi','lendingLimit':'16Gi'}]},\n"
	"   {'name':'spot','resources':[{'name':'cpu','nominalQuota':'500m'},\n"
	"     {'name':'memory','nominalQuota':'72Gi'}]}]}]},\n"
	" 'status':{'pendingWorkloads':0,'admittedWorkloads':3}},\n"
	"{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'ClusterQueue',\n"
	" 'metadata':{'name':'team-b'},\n"
	" 'spec':{'cohortName':'org','resourceGroups':[{'coveredResources':['cpu','memory'],\n"
	"  'flavors':[{'name':'on-demand','resources':[{'name':'cpu','nominalQuota':'12'},\n"
	"   {'name':'memory','nominalQuota':'48Gi'}]}]},\n"
	"  {'coveredResources':['nvidia.com/gpu'],'flavors':[{'name':'spot',\n"
	"   'resources':[{'name':'nvidia.com/gpu','nominalQuota':4}]}]}]}},\n"
	"{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'LocalQueue',\n"
	" 'metadata':{'name':'user-queue','namespace':'team-a'},'spec':{'clusterQueue':'team-a'}},\n"
	"{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'LocalQueue',\n"
	" 'metadata':{'name':'user-queue','namespace':'team-b','labels':{'a':'b'}},\n"
	" 'spec':{'clusterQueue':'team-b','stopPolicy':'None','fairSharing':{'weight':'1'}}},\n"
	"{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'Cohort',\n"
	" 'metadata':{'name':'org'},'spec':{'fairSharing':{'weight':'500m'},\n"
	"  'resourceGroups':[{'coveredResources':['cpu'],'flavors':[{'name':'on-demand',\n"
	"   'resources':[{'name':'cpu','nominalQuota':'4'}]}]}]}}\n"
	"],'metadata':{'resourceVersion':''}}\n";

static void check_two_teams(struct quota_tree *t)
{
	int od = quota_flavor_find(t, "on-demand"), spot = quota_flavor_find(t, "spot");
	int cpu = quota_resource_find(t, "cpu"), mem = quota_resource_find(t, "memory");
	int gpu = quota_resource_find(t, "nvidia.com/gpu");
	assert_true(od >= 0 && spot >= 0 && cpu >= 0 && mem >= 0 && gpu >= 0);
	const char *k, *v;
	assert_int_equal(quota_flavor_n_labels(t, od), 1);
	quota_flavor_label(t, od, 0, &k, &v);
	assert_string_equal(k, "instance-type");
	assert_string_equal(v, "on-demand");
	assert_int_equal(quota_flavor_n_labels(t, spot), 2);

	int a = quota_cluster_queue_find(t, "team-a");
	int b = quota_cluster_queue_find(t, "team-b");
	int org = quota_cohort_find(t, "org");
	assert_true(a >= 0 && b >= 0 && org >= 0);
	assert_int_equal(quota_node_parent(t, a), org);
	assert_int_equal(quota_node_parent(t, b), org);
	assert_int_equal(quota_node_parent(t, org), -1);
	assert_int_equal(quota_node_weight_milli(t, a), 2000);
	assert_int_equal(quota_node_weight_milli(t, b), 1000);
	assert_int_equal(quota_node_weight_milli(t, org), 500);

	int64_t nom, bl, ll;
	assert_true(quota_entry(t, a, od, cpu, &nom, &bl, &ll));
	assert_int_equal(nom, 9000); /* millicores */
	assert_int_equal(bl, 6000);
	assert_int_equal(ll, QUOTA_NO_LIMIT);
	assert_true(quota_entry(t, a, od, mem, &nom, &bl, &ll));
	assert_int_equal(nom, INT64_C(36) << 30);
	assert_int_equal(bl, QUOTA_NO_LIMIT);
	assert_int_equal(ll, INT64_C(16) << 30);
	assert_true(quota_entry(t, a, spot, cpu, &nom, &bl, &ll));
	assert_int_equal(nom, 500);
	assert_true(quota_entry(t, b, spot, gpu, &nom, &bl, &ll));
	assert_int_equal(nom, 4); /* a bare JSON integer is a quantity */
	assert_false(quota_entry(t, b, spot, cpu, &nom, &bl, &ll));
	assert_true(quota_entry(t, org, od, cpu, &nom, &bl, &ll));
	assert_int_equal(nom, 4000);

	/* team-a tries its flavors in the order its group lists them. */
	const int *order;
	assert_int_equal(quota_node_flavors(t, a, &order), 2);
	assert_int_equal(order[0], od);
	assert_int_equal(order[1], spot);

	const struct quota_preemption *p = quota_node_preemption(t, a);
	assert_int_equal(p->reclaim_within_cohort, QUOTA_PREEMPT_ANY);
	assert_int_equal(p->borrow_within_cohort, QUOTA_PREEMPT_LOWER_PRIORITY);
	assert_true(p->has_max_priority_threshold);
	assert_int_equal(p->max_priority_threshold, 100);
	assert_int_equal(p->within_cluster_queue, QUOTA_PREEMPT_LOWER_PRIORITY);
	assert_int_equal(quota_node_preemption(t, b)->reclaim_within_cohort,
			 QUOTA_PREEMPT_NEVER);

	assert_int_equal(quota_local_queue_find(t, "team-a", "user-queue"), a);
	assert_int_equal(quota_local_queue_find(t, "team-b", "user-queue"), b);

	/* The tree admits as Kueue would: team-a's 9 cpu of on-demand, plus
	 * up to 6 borrowed (team-b's 12 and the cohort's 4 lendable). */
	int64_t req[QUOTA_MAX_RESOURCES] = {0};
	req[cpu] = 15000;
	assert_int_equal(quota_try_charge(t, a, od, req), 0);
	req[cpu] = 1;
	assert_int_equal(quota_try_charge(t, a, od, req), -ENOSPC);
}

static void test_two_teams(void **state)
{
	(void)state;
	struct quota_tree *t = NULL;
	int rc = load(two_teams, false, &t);
	if (rc != 0)
		fail_msg("%s", err);
	check_two_teams(t);
	quota_tree_free(t);
}

/* The same cluster as kueue.x-k8s.io/v1beta1 objects: spec.cohort, and
 * whenCanBorrow's old name Borrow. */
static void test_v1beta1(void **state)
{
	(void)state;
	char *s = strdup(two_teams);
	assert_non_null(s);
	char *p;
	while ((p = strstr(s, "v1beta2")) != NULL)
		p[6] = '1';
	/* 'cohortName':'org' -> 'cohort':'org' (same length with padding
	 * spaces outside the string). */
	while ((p = strstr(s, "'cohortName'")) != NULL)
		memcpy(p, "'cohort'    ", 12);
	p = strstr(s, "'MayStopSearch'");
	assert_non_null(p);
	memcpy(p, "'Borrow'       ", 15);
	struct quota_tree *t = NULL;
	int rc = load(s, false, &t);
	if (rc != 0)
		fail_msg("%s", err);
	check_two_teams(t);
	quota_tree_free(t);
	/* v1beta2 has no Borrow. */
	while ((p = strstr(s, "v1beta1")) != NULL)
		p[6] = '2';
	while ((p = strstr(s, "'cohort'    ")) != NULL)
		memcpy(p, "'cohortName'", 12);
	assert_int_equal(load(s, false, &t), -EINVAL);
	assert_non_null(strstr(err, "t.json:8: ClusterQueue team-a: "
			       "spec.flavorFungibility.whenCanBorrow: \"Borrow\" is "
			       "not one of MayStopSearch, TryNextFlavor"));
	assert_null(t);
	free(s);
}

/* A ClusterQueue whose spec is on line 4 (after a flavor f on line 2),
 * in `version`. */
static int cq(const char *version, const char *spec, struct quota_tree **t)
{
	char buf[8192];
	snprintf(buf, sizeof(buf),
		 "{'apiVersion':'v1','kind':'List','items':[\n"
		 "{'apiVersion':'kueue.x-k8s.io/%s','kind':'ResourceFlavor','metadata':{'name':'f'}},\n"
		 "{'apiVersion':'kueue.x-k8s.io/%s','kind':'ClusterQueue','metadata':{'name':'q'},'spec':{\n"
		 "%s\n"
		 "}}]}\n", version, version, spec);
	return load(buf, false, t);
}

#define RG(res) "'resourceGroups':[{'coveredResources':['cpu'],'flavors':[{'name':'f'," \
	"'resources':[" res "]}]}]"

struct refusal {
	const char *version;
	const char *spec;
	const char *want; /* after "t.json:" */
};

/* Each field Kueue has that shmsched refuses, and each Kueue rule, with
 * the line and path it names. */
static const struct refusal cq_refusals[] = {
	{"v1beta2", "'queueingStrategy':'StrictFIFO'",
	 "4: ClusterQueue q: spec.queueingStrategy: StrictFIFO: not supported yet"},
	{"v1beta2", "'queueingStrategy':'Fifo'",
	 "4: ClusterQueue q: spec.queueingStrategy: \"Fifo\" is not one of BestEffortFIFO, StrictFIFO"},
	{"v1beta2", "'stopPolicy':'Hold'",
	 "4: ClusterQueue q: spec.stopPolicy: Hold: not supported yet"},
	{"v1beta1", "'stopPolicy':'HoldAndDrain'",
	 "4: ClusterQueue q: spec.stopPolicy: HoldAndDrain: not supported yet"},
	{"v1beta1", "'admissionChecks':['prov']",
	 "4: ClusterQueue q: spec.admissionChecks: not supported yet"},
	{"v1beta2", "'admissionChecksStrategy':{'admissionChecks':[{'name':'prov'}]}",
	 "4: ClusterQueue q: spec.admissionChecksStrategy: not supported yet"},
	/* kueue fairsharing_types.go, AdmissionScope: "+kubebuilder:validation:
	 * Enum=UsageBasedAdmissionFairSharing;NoAdmissionFairSharing",
	 * "+required". */
	{"v1beta2", "'admissionScope':{'admissionMode':'UsageBased'}",
	 "4: ClusterQueue q: spec.admissionScope.admissionMode: \"UsageBased\" is not one "
	 "of NoAdmissionFairSharing, UsageBasedAdmissionFairSharing"},
	{"v1beta2", "'admissionScope':{}",
	 "4: ClusterQueue q: spec.admissionScope: admissionMode: missing"},
	{"v1beta2", "'admissionScope':{'admissionMode':'NoAdmissionFairSharing','mode':1}",
	 "4: ClusterQueue q: spec.admissionScope.mode: unknown field"},
	{"v1beta2", "'admissionScope':'UsageBasedAdmissionFairSharing'",
	 "4: ClusterQueue q: spec.admissionScope: "},
	{"v1beta2", "'concurrentAdmissionPolicy':{'migration':{'mode':'TryPreferredFlavors'}}",
	 "4: ClusterQueue q: spec.concurrentAdmissionPolicy: not supported yet"},
	{"v1beta1", "'concurrentAdmissionPolicy':{}",
	 "4: ClusterQueue q: spec.concurrentAdmissionPolicy: unknown field"},
	{"v1beta2", "'flavorFungibility':{'whenCanBorrow':'TryNextFlavor'}",
	 "4: ClusterQueue q: spec.flavorFungibility.whenCanBorrow: TryNextFlavor: not supported yet"},
	{"v1beta2", "'flavorFungibility':{'whenCanPreempt':'MayStopSearch'}",
	 "4: ClusterQueue q: spec.flavorFungibility.whenCanPreempt: MayStopSearch: not supported yet"},
	{"v1beta1", "'flavorFungibility':{'whenCanPreempt':'Preempt'}",
	 "4: ClusterQueue q: spec.flavorFungibility.whenCanPreempt: Preempt: not supported yet"},
	{"v1beta2", "'flavorFungibility':{'preference':'PreemptionOverBorrowing'}",
	 "4: ClusterQueue q: spec.flavorFungibility.preference: not supported yet"},
	{"v1beta2", "'namespaceSelector':{'matchLabels':{'team':'a'}}",
	 "4: ClusterQueue q: spec.namespaceSelector.matchLabels: not supported yet"},
	{"v1beta2", "'namespaceSelector':{'matchExpressions':[{'key':'team','operator':'Exists'}]}",
	 "4: ClusterQueue q: spec.namespaceSelector.matchExpressions: not supported yet"},
	{"v1beta2", "'queueingStrategi':'BestEffortFIFO'",
	 "4: ClusterQueue q: spec.queueingStrategi: unknown field"},
	{"v1beta2", "'cohort':'org'",
	 "4: ClusterQueue q: spec.cohort: unknown field: kueue.x-k8s.io/v1beta2 spells it spec.cohortName"},
	{"v1beta1", "'cohortName':'org'",
	 "4: ClusterQueue q: spec.cohortName: unknown field: kueue.x-k8s.io/v1beta1 spells it spec.cohort"},
	{"v1beta2", "'cohortName':'Org'",
	 "4: ClusterQueue q: spec.cohortName: \"Org\" (3 bytes) is not a DNS-1123 subdomain"},
	{"v1beta2", RG("{'name':'cpu','nominalQuota':'1','borrowingLimit':'1'}"),
	 "4: ClusterQueue q: spec.resourceGroups[0].flavors[0].resources[0].borrowingLimit: "
	 "borrowingLimit must be nil when the cohort is empty"},
	{"v1beta2", "'cohortName':'o'," RG("{'name':'cpu','nominalQuota':'1','lendingLimit':'2'}"),
	 "4: ClusterQueue q: spec.resourceGroups[0].flavors[0].resources[0].lendingLimit: "
	 "\"2\" is more than nominalQuota"},
	{"v1beta2", RG("{'name':'memory','nominalQuota':'1'}"),
	 "4: ClusterQueue q: spec.resourceGroups[0].flavors[0].resources[0].name: \"memory\": "
	 "must match the name in coveredResources"},
	{"v1beta2", RG("{'name':'cpu','nominalQuota':'1'},{'name':'memory','nominalQuota':'1'}"),
	 "4: ClusterQueue q: spec.resourceGroups[0].flavors[0].resources: 2 resources: flavors "
	 "must have the same number of resources as the coveredResources (1)"},
	{"v1beta2", RG("{'name':'cpu'}"),
	 "4: ClusterQueue q: spec.resourceGroups[0].flavors[0].resources[0].nominalQuota: missing"},
	{"v1beta2", RG("{'name':'cpu','nominalQuota':'-1'}"),
	 "4: ClusterQueue q: spec.resourceGroups[0].flavors[0].resources[0].nominalQuota: \"-1\" is negative"},
	{"v1beta2", RG("{'name':'cpu','nominalQuota':'lots'}"),
	 "4: ClusterQueue q: spec.resourceGroups[0].flavors[0].resources[0].nominalQuota: \"lots\" is not a quantity"},
	{"v1beta2", RG("{'name':'cpu','nominalQuota':'1','limit':'2'}"),
	 "4: ClusterQueue q: spec.resourceGroups[0].flavors[0].resources[0].limit: unknown field"},
	{"v1beta2", "'resourceGroups':[{'coveredResources':['cpu'],'flavors':[{'name':'g',"
		    "'resources':[{'name':'cpu','nominalQuota':'1'}]}]}]",
	 "4: ClusterQueue q: spec.resourceGroups[0].flavors[0].name: \"g\": no ResourceFlavor of that name"},
	{"v1beta2", "'resourceGroups':[{'coveredResources':['cpu'],'flavors':[{'name':'f',"
		    "'resources':[{'name':'cpu','nominalQuota':'1'}]}]},{'coveredResources':['memory'],"
		    "'flavors':[{'name':'f','resources':[{'name':'memory','nominalQuota':'1'}]}]}]",
	 "4: ClusterQueue q: spec.resourceGroups[1].flavors[0].name: Duplicate value \"f\""},
	{"v1beta2", "'resourceGroups':[{'coveredResources':['cpu','cpu'],'flavors':[]}]",
	 "4: ClusterQueue q: spec.resourceGroups[0].coveredResources[1]: Duplicate value \"cpu\""},
	{"v1beta2", "'resourceGroups':[{'coveredResources':['cpu']}]",
	 "4: ClusterQueue q: spec.resourceGroups[0].flavors: missing: at least one flavor"},
	{"v1beta2", "'resourceGroups':[{'coveredResources':['bad name'],'flavors':[]}]",
	 "4: ClusterQueue q: spec.resourceGroups[0].coveredResources[0]: \"bad name\" is not a resource name"},
	{"v1beta2", "'preemption':{'reclaimWithinCohort':'Never','borrowWithinCohort':{'policy':'LowerPriority'}}",
	 "4: ClusterQueue q: spec.preemption.borrowWithinCohort.policy: reclaimWithinCohort=Never "
	 "and borrowWithinCohort.Policy!=Never"},
	{"v1beta2", "'preemption':{'withinClusterQueue':'Any'}",
	 "4: ClusterQueue q: spec.preemption.withinClusterQueue: \"Any\" is not one of Never, "
	 "LowerPriority, LowerOrNewerEqualPriority"},
	{"v1beta2", "'preemption':{'borrowWithinCohort':{'maxPriorityThreshold':4294967296}}",
	 "4: ClusterQueue q: spec.preemption.borrowWithinCohort.maxPriorityThreshold: 4294967296 "
	 "does not fit an int32"},
	{"v1beta2", "'fairSharing':{'weight':'-1'}",
	 "4: ClusterQueue q: spec.fairSharing.weight: \"-1\" is negative"},
	{"v1beta2", "'fairSharing':{'weight':'1','extra':1}",
	 "4: ClusterQueue q: spec.fairSharing.extra: unknown field"},
	/* Several lines: the line is the value's own. */
	{"v1beta2", "'cohortName':'o',\n'resourceGroups':[{'coveredResources':['cpu'],\n"
		    "'flavors':[{'name':'f','resources':[\n{'name':'cpu',\n"
		    "'nominalQuota':'1Gi',\n'lendingLimit':'2Gi'}]}]}]",
	 "9: ClusterQueue q: spec.resourceGroups[0].flavors[0].resources[0].lendingLimit"},
};

static void test_cluster_queue_refusals(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(cq_refusals) / sizeof(cq_refusals[0]); i++) {
		const struct refusal *c = &cq_refusals[i];
		struct quota_tree *t = (struct quota_tree *)1;
		int rc = cq(c->version, c->spec, &t);
		if (rc != -EINVAL || strncmp(err, "t.json:", 7) != 0 ||
		    strncmp(err + 7, c->want, strlen(c->want)) != 0)
			fail_msg("case %zu (%s): rc %d, got\n  %s\nwant\n  t.json:%s", i,
				 c->spec, rc, err, c->want);
		assert_null(t);
	}
	/* What is Kueue's default loads, in both versions. */
	struct quota_tree *t;
	const char *ok = "'queueingStrategy':'BestEffortFIFO','stopPolicy':'None',"
			 "'namespaceSelector':{'matchLabels':{},'matchExpressions':[]},"
			 "'flavorFungibility':{},'preemption':{},'admissionChecksStrategy':null,"
			 RG("{'name':'cpu','nominalQuota':'1'}");
	for (int v = 1; v <= 2; v++) {
		int rc = cq(v == 1 ? "v1beta1" : "v1beta2", ok, &t);
		if (rc != 0)
			fail_msg("%s", err);
		assert_int_equal(quota_node_weight_milli(t, quota_cluster_queue_find(t, "q")),
				 QUOTA_WEIGHT_DEFAULT_MILLI);
		quota_tree_free(t);
	}
}

/* Whole objects: ResourceFlavor, Cohort, LocalQueue, metadata, kinds. */
static const struct refusal obj_refusals[] = {
	{"{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'ResourceFlavor','metadata':{'name':'f'},\n"
	 "'spec':{'nodeTaints':[{'key':'spot','effect':'NoSchedule'}]}}", NULL,
	 "2: ResourceFlavor f: spec.nodeTaints: not supported yet"},
	{"{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'ResourceFlavor','metadata':{'name':'f'},\n"
	 "'spec':{\n'tolerations':[{'key':'spot','operator':'Exists'}]}}", NULL,
	 "3: ResourceFlavor f: spec.tolerations: not supported yet"},
	{"{'apiVersion':'kueue.x-k8s.io/v1beta1','kind':'ResourceFlavor','metadata':{'name':'f'},\n"
	 "'spec':{'nodeLabels':{'a':'b'},'topologyName':'default'}}", NULL,
	 "2: ResourceFlavor f: spec.topologyName: not supported yet"},
	{"{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'ResourceFlavor','metadata':{'name':'f'},\n"
	 "'spec':{'nodeLabels':{'-bad':'b'}}}", NULL,
	 "2: ResourceFlavor f: spec.nodeLabels.-bad: label key \"-bad\" is not a qualified name"},
	{"{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'ResourceFlavor','metadata':{'name':'f'},\n"
	 "'spec':{'nodeLabels':{'a':'b c'}}}", NULL,
	 "2: ResourceFlavor f: spec.nodeLabels.a: \"b c\" is not a valid label value"},
	{"{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'ResourceFlavor','metadata':{'name':'f'},\n"
	 "'spec':{'nodeLabels':{'a':'1','b':'1','c':'1','d':'1','e':'1','f':'1','g':'1','h':'1',\n"
	 "'i':'1'}}}", NULL, "3: ResourceFlavor f: spec.nodeLabels.i:"},
	{"{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'ResourceFlavor',\n"
	 "'metadata':{'name':'f','namespace':'default'}}", NULL,
	 "2: ResourceFlavor f: metadata.namespace: a ResourceFlavor is cluster-scoped"},
	{"{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'ResourceFlavor',\n"
	 "'metadata':{'name':'f','ownerReferences':[]}}", NULL,
	 "2: ResourceFlavor f: metadata.ownerReferences: unknown field"},
	{"{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'ResourceFlavor',\n"
	 "'metadata':{'name':'F'}}", NULL,
	 "2: ResourceFlavor: metadata.name: \"F\" (1 bytes) is not a DNS-1123 subdomain"},
	{"{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'ResourceFlavor'}", NULL,
	 "1: ResourceFlavor: metadata: missing"},
	{"{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'ResourceFlavor','metadata':{'name':'f'},\n"
	 "'specs':{}}", NULL, "2: ResourceFlavor f: specs: unknown field"},
	{"{'apiVersion':'kueue.x-k8s.io/v1alpha1','kind':'Cohort',\n'metadata':{'name':'c'}}", NULL,
	 "1: object #0: apiVersion: \"kueue.x-k8s.io/v1alpha1\": not supported"},
	{"{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'Cohort','metadata':{'name':'c'},\n"
	 "'spec':{'parent':'root'}}", NULL, "2: Cohort c: spec.parent: unknown field: "
	 "kueue.x-k8s.io/v1beta2 spells it spec.parentName (spec.parent was v1alpha1's)"},
	{"{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'ResourceFlavor','metadata':{'name':'f'}}\n"
	 "{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'Cohort','metadata':{'name':'c'},\n"
	 "'spec':{'resourceGroups':[{'coveredResources':['cpu'],'flavors':[{'name':'f',\n"
	 "'resources':[{'name':'cpu','nominalQuota':'1','lendingLimit':'1'}]}]}]}}", NULL,
	 "4: Cohort c: spec.resourceGroups[0].flavors[0].resources[0].lendingLimit: lendingLimit "
	 "must be nil when parentName is empty"},
	{"{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'LocalQueue','metadata':{'name':'l'},\n"
	 "'spec':{'clusterQueue':'nowhere'}}", NULL,
	 "2: LocalQueue default/l: spec.clusterQueue: \"nowhere\": no ClusterQueue of that name"},
	{"{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'LocalQueue','metadata':{'name':'l'},\n"
	 "'spec':{}}", NULL, "2: LocalQueue default/l: spec.clusterQueue: missing"},
	{"{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'ClusterQueue','metadata':{'name':'q'}}\n"
	 "{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'LocalQueue','metadata':{'name':'l',\n"
	 "'namespace':'ns'},'spec':{'clusterQueue':'q','fairSharing':{'weight':'-2'}}}", NULL,
	 "3: LocalQueue ns/l: spec.fairSharing.weight: "},
	{"{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'ClusterQueue','metadata':{'name':'q'}}\n"
	 "{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'LocalQueue','metadata':{'name':'l',\n"
	 "'namespace':'ns'},'spec':{'clusterQueue':'q','fairSharing':{'weight':'2','x':1}}}", NULL,
	 "3: LocalQueue ns/l: spec.fairSharing.x: unknown field"},
	{"{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'ClusterQueue','metadata':{'name':'q'}}\n"
	 "{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'LocalQueue','metadata':{'name':'l'},\n"
	 "'spec':{'clusterQueue':'q','stopPolicy':'Hold'}}", NULL,
	 "3: LocalQueue default/l: spec.stopPolicy: Hold: not supported yet"},
	{"{'apiVersion':'v1','kind':'List','items':[\n"
	 "{'apiVersion':'v1','kind':'Node','metadata':{'name':'n'}}]}", NULL,
	 "2: object #0: kind: \"Node\" (apiVersion v1) is not a Kueue ResourceFlavor"},
	{"{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'Cohort','metadata':{'name':'c'},\n"
	 "'spec':{'parentName':'c'}}", NULL, "Cohort \"c\""},
	{"{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'Cohort','metadata':{'name':'c'}}\n"
	 "{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'Cohort','metadata':\n{'name':'c'}}", NULL,
	 "3: Cohort c: "},
	{"{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'Cohort','metadata':{'name':'c','name':'d'}}",
	 NULL, "1:"},
	{"{'apiVersion':'kueue.x-k8s.io/v1beta2',\n'kind':'Cohort',", NULL, "2:"},
};

static void test_object_refusals(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(obj_refusals) / sizeof(obj_refusals[0]); i++) {
		const struct refusal *c = &obj_refusals[i];
		struct quota_tree *t = (struct quota_tree *)1;
		int rc = load(c->version, false, &t);
		bool anywhere = strncmp(c->want, "Cohort \"", 8) == 0;
		bool ok = rc < 0 && (anywhere ? strstr(err, c->want) != NULL :
				     strncmp(err, "t.json:", 7) == 0 &&
				     strncmp(err + 7, c->want, strlen(c->want)) == 0);
		if (!ok)
			fail_msg("case %zu: rc %d, got\n  %s\nwant\n  t.json:%s", i, rc, err,
				 c->want);
		assert_null(t);
	}
}

/* A cluster file: other kinds are another decoder's; none of Kueue's
 * gives no tree. */
static void test_mixed(void **state)
{
	(void)state;
	struct quota_tree *t = (struct quota_tree *)1;
	const char *nodes = "{'apiVersion':'v1','kind':'Node','metadata':{'name':'n'}}\n"
			    "[{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p'}}]\n";
	assert_int_equal(load(nodes, true, &t), 0);
	assert_null(t);
	char buf[16384];
	snprintf(buf, sizeof(buf), "%s%s", nodes, two_teams);
	assert_int_equal(load(buf, true, &t), 0);
	assert_non_null(t);
	check_two_teams(t);
	quota_tree_free(t);
	/* Another Kueue kind (Workload) is not this decoder's either. */
	assert_int_equal(load("{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'Workload',"
			      "'metadata':{'name':'w'}}", true, &t), 0);
	assert_null(t);
	/* Strict: refused. */
	assert_int_equal(load(nodes, false, &t), -EINVAL);
}

/* The cluster loader hands the file's Kueue objects here (stats.quota);
 * before, they were skipped and counted. */
static void test_cluster_load(void **state)
{
	(void)state;
	char path[] = "/tmp/shmsched-test-kueue-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	char *b = dq(two_teams);
	char node[] = "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"n1\"},"
		      "\"status\":{\"allocatable\":{\"cpu\":\"4\",\"memory\":\"8Gi\",\"pods\":\"10\"}}}\n";
	assert_int_equal(write(fd, node, strlen(node)), (ssize_t)strlen(node));
	assert_int_equal(write(fd, b, strlen(b)), (ssize_t)strlen(b));
	close(fd);
	free(b);

	struct intern *strings = intern_create();
	struct res_names res;
	res_names_init(&res);
	struct cluster *cl = NULL;
	struct cluster_load_stats st;
	int rc = cluster_load_file(path, strings, &res, 0, &cl, &st, err, sizeof(err));
	if (rc != 0)
		fail_msg("%s", err);
	assert_int_equal(st.nodes, 1);
	assert_int_equal(st.skipped.total, 0); /* the Kueue objects are read */
	assert_int_equal(st.skipped.kueue, 7);
	assert_non_null(st.quota);
	check_two_teams(st.quota);
	quota_tree_free(st.quota);
	cluster_destroy(cl);

	/* A refused Kueue field fails the cluster file, naming its line. */
	fd = open(path, O_WRONLY | O_APPEND);
	assert_true(fd >= 0);
	const char *bad = "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"Cohort\",\n"
			  "\"metadata\":{\"name\":\"x\"},\"spec\":{\"paren\":\"y\"}}\n";
	assert_int_equal(write(fd, bad, strlen(bad)), (ssize_t)strlen(bad));
	close(fd);
	rc = cluster_load_file(path, strings, &res, 0, &cl, &st, err, sizeof(err));
	assert_int_equal(rc, -EINVAL);
	assert_null(cl);
	assert_null(st.quota);
	int line = 3;
	for (const char *p = two_teams; *p; p++)
		line += *p == '\n';
	char want[256];
	snprintf(want, sizeof(want), "%s:%d: Cohort x: spec.paren: unknown field", path,
		 line);
	if (strncmp(err, want, strlen(want)) != 0)
		fail_msg("got %s\nwant %s", err, want);
	/* kueue_load_file on it reads the Node as not Kueue's. */
	struct quota_tree *t;
	assert_int_equal(kueue_load_file(path, &t, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, ":1: object #0: kind: \"Node\""));
	unlink(path);
	assert_int_equal(kueue_load_file(path, &t, err, sizeof(err)), -ENOENT);
	intern_destroy(strings);
}

/* Bounded input: refused at the caps, with a bounded message. */
static void test_bounds(void **state)
{
	(void)state;
	struct quota_tree *t = (struct quota_tree *)1;
	/* Too large: refused before it is read (calloc'd pages stay
	 * untouched). */
	char *big = calloc(1, (size_t)KUEUE_FILE_MAX + 1);
	assert_non_null(big);
	assert_int_equal(kueue_load_buffer("big.json", big, (size_t)KUEUE_FILE_MAX + 1,
					   false, &t, err, sizeof(err)), -EFBIG);
	assert_null(t);
	free(big);

	/* Deep nesting: jansson's depth limit, no recursion of ours. */
	size_t depth = 100000;
	char *deep = malloc(2 * depth + 1);
	assert_non_null(deep);
	memset(deep, '[', depth);
	memset(deep + depth, ']', depth);
	deep[2 * depth] = '\0';
	assert_int_equal(kueue_load_buffer("deep.json", deep, 2 * depth, false, &t, err,
					   sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "deep.json:1:"));
	free(deep);

	/* A long string: refused, its message cut. */
	size_t n = 1 << 20;
	char *s = malloc(n + 256);
	assert_non_null(s);
	int at = snprintf(s, 256, "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\","
			  "\"kind\":\"Cohort\",\"metadata\":{\"name\":\"");
	memset(s + at, 'a', n);
	strcpy(s + at + n, "\"}}");
	assert_int_equal(kueue_load_buffer("long.json", s, strlen(s), false, &t, err,
					   sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "is not a DNS-1123 subdomain"));
	assert_true(strlen(err) < 600);
	free(s);

	/* Huge arrays: 10000 covered resources, 17 groups. */
	size_t cap = 200000;
	char *a = malloc(cap);
	assert_non_null(a);
	size_t len = (size_t)snprintf(a, cap, "{'apiVersion':'kueue.x-k8s.io/v1beta2',"
				      "'kind':'ClusterQueue','metadata':{'name':'q'},'spec':"
				      "{'resourceGroups':[{'coveredResources':[");
	for (int i = 0; i < 10000; i++)
		len += (size_t)snprintf(a + len, cap - len, "%s'r%d'", i ? "," : "", i);
	snprintf(a + len, cap - len, "]}]}}");
	assert_int_equal(load(a, false, &t), -EINVAL);
	assert_non_null(strstr(err, "spec.resourceGroups[0].coveredResources: 10000 "
			       "resources: not supported yet: shmsched holds at most 16"));
	len = (size_t)snprintf(a, cap, "{'apiVersion':'kueue.x-k8s.io/v1beta2',"
			       "'kind':'ClusterQueue','metadata':{'name':'q'},'spec':"
			       "{'resourceGroups':[");
	for (int i = 0; i < 17; i++)
		len += (size_t)snprintf(a + len, cap - len, "%s{}", i ? "," : "");
	snprintf(a + len, cap - len, "]}}");
	assert_int_equal(load(a, false, &t), -EINVAL);
	assert_non_null(strstr(err, "spec.resourceGroups: 17 groups: at most 16"));

	/* Many objects: the 17th flavor, the 4097th ClusterQueue, each
	 * refused by the tree's bound with its line. */
	len = 0;
	for (int i = 0; i < 17; i++)
		len += (size_t)snprintf(a + len, cap - len, "{'apiVersion':'kueue.x-k8s.io/"
					"v1beta2','kind':'ResourceFlavor','metadata':{'name':"
					"'f%d'}}\n", i);
	assert_int_equal(load(a, false, &t), -ENOSPC);
	assert_non_null(strstr(err, "t.json:17: ResourceFlavor f16: "));
	free(a);
	cap = (QUOTA_MAX_CLUSTER_QUEUES + 1) * 128;
	a = malloc(cap);
	assert_non_null(a);
	len = 0;
	for (int i = 0; i <= QUOTA_MAX_CLUSTER_QUEUES; i++)
		len += (size_t)snprintf(a + len, cap - len, "{'apiVersion':'kueue.x-k8s.io/"
					"v1beta2','kind':'ClusterQueue','metadata':{'name':"
					"'q%d'}}\n", i);
	assert_int_equal(load(a, false, &t), -ENOSPC);
	char want[64];
	snprintf(want, sizeof(want), "t.json:%d: ClusterQueue q%d: ",
		 QUOTA_MAX_CLUSTER_QUEUES + 1, QUOTA_MAX_CLUSTER_QUEUES);
	if (strstr(err, want) == NULL)
		fail_msg("%s", err);
	assert_null(t);
	free(a);
}

/* kueue_objects_add: objects from elsewhere (no file, so no line). */
static void test_reader(void **state)
{
	(void)state;
	struct kueue_reader *r;
	assert_int_equal(kueue_reader_new("api", &r), 0);
	json_error_t je;
	json_t *f = json_loads("{\"apiVersion\":\"kueue.x-k8s.io/v1beta1\",\"kind\":"
			       "\"ResourceFlavor\",\"metadata\":{\"name\":\"f\"}}", 0, &je);
	json_t *n = json_loads("{\"apiVersion\":\"v1\",\"kind\":\"Node\"}", 0, &je);
	assert_int_equal(kueue_objects_add(r, f, err, sizeof(err)), 0);
	assert_int_equal(kueue_objects_add(r, n, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "api: object #1: kind: \"Node\""));
	json_decref(f);
	json_decref(n);
	struct quota_tree *t;
	assert_int_equal(kueue_reader_seal(r, &t, err, sizeof(err)), 0);
	assert_int_equal(quota_flavor_find(t, "f"), 0);
	quota_tree_free(t);
	kueue_reader_free(r);
}

/* Admission fair sharing read: a ClusterQueue's admissionScope and a
 * LocalQueue's fairSharing.weight (1 when absent: kueue
 * LQWeightAsFloat64) kept in the tree. */
static void test_admission_fair_sharing(void **state)
{
	(void)state;
	const char *json =
		"{'apiVersion':'v1','kind':'List','items':[\n"
		"{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'ClusterQueue','metadata':{'name':'afs'},\n"
		"'spec':{'admissionScope':{'admissionMode':'UsageBasedAdmissionFairSharing'}}},\n"
		"{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'ClusterQueue','metadata':{'name':'off'},\n"
		"'spec':{'admissionScope':{'admissionMode':'NoAdmissionFairSharing'}}},\n"
		"{'apiVersion':'kueue.x-k8s.io/v1beta1','kind':'ClusterQueue','metadata':{'name':'none'}},\n"
		"{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'LocalQueue','metadata':{'name':'a',\n"
		"'namespace':'ns'},'spec':{'clusterQueue':'afs','fairSharing':{'weight':'2500m'}}},\n"
		"{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'LocalQueue','metadata':{'name':'b',\n"
		"'namespace':'ns'},'spec':{'clusterQueue':'afs'}}]}\n";
	struct quota_tree *t = NULL;
	if (load(json, false, &t) != 0)
		fail_msg("%s", err);
	assert_true(quota_node_admission_fair_sharing(t, quota_cluster_queue_find(t, "afs")));
	assert_false(quota_node_admission_fair_sharing(t, quota_cluster_queue_find(t, "off")));
	assert_false(quota_node_admission_fair_sharing(t, quota_cluster_queue_find(t, "none")));
	assert_int_equal(quota_local_queue_weight_milli(t, quota_local_queue_index(t, "ns", "a")),
			 2500);
	assert_int_equal(quota_local_queue_weight_milli(t, quota_local_queue_index(t, "ns", "b")),
			 QUOTA_WEIGHT_DEFAULT_MILLI);
	quota_tree_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_two_teams),
		cmocka_unit_test(test_v1beta1),
		cmocka_unit_test(test_cluster_queue_refusals),
		cmocka_unit_test(test_object_refusals),
		cmocka_unit_test(test_mixed),
		cmocka_unit_test(test_cluster_load),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_reader),
		cmocka_unit_test(test_admission_fair_sharing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
