/* unit.sched_config: the KubeSchedulerConfiguration reader
 * (ingest/sched_config.c): defaults, YAML and JSON alike, the plugin merge,
 * scoring strategies, every refusal with its message, and bounded input
 * (truncations; tests/config/fuzz_config.c explores the rest). */
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

#include "ingest/ingest.h"
#include "shm/shm.h"

#define HEAD "apiVersion: kubescheduler.config.k8s.io/v1\n" \
	     "kind: KubeSchedulerConfiguration\n"

static int load(const char *text, struct sched_config *cfg,
		struct res_names *res, char *err, size_t err_len)
{
	return sched_config_load_buffer("sched.yaml", text, strlen(text), cfg,
					res, err, err_len);
}

/* Loads `text` expecting success into a fresh config and registry. */
static void load_ok(const char *text, struct sched_config *cfg,
		    struct res_names *res)
{
	char err[512] = "";
	res_names_init(res);
	int rc = load(text, cfg, res, err, sizeof(err));
	if (rc != 0)
		fail_msg("rc %d: %s", rc, err);
	assert_string_equal(err, "");
}

static void test_defaults(void **state)
{
	(void)state;
	struct sched_config cfg;
	sched_config_default(&cfg);
	assert_int_equal(cfg.percentage_of_nodes_to_score, 0);
	assert_int_equal(cfg.score.weight_taint, 3);
	assert_int_equal(cfg.score.weight_affinity, 2);
	assert_int_equal(cfg.score.weight_fit, 1);
	assert_int_equal(cfg.score.weight_balanced, 1);
	assert_int_equal(cfg.score.weight_gpu_best_fit, 0); /* ours: off */
	assert_int_equal(cfg.score.weight_gpu_frag, 0);
	assert_int_equal(cfg.score.fit_strategy, FIT_LEAST_ALLOCATED);
	assert_int_equal(cfg.score.n_fit_resources, 2);
	assert_int_equal(cfg.score.fit_resources[0].resource, RES_CPU);
	assert_int_equal(cfg.score.fit_resources[0].weight, 1);
	assert_int_equal(cfg.score.fit_resources[1].resource, RES_MEMORY);
	assert_int_equal(cfg.score.fit_resources[1].weight, 1);
	assert_int_equal(cfg.score.n_balanced_resources, 2);
	assert_int_equal(cfg.score.balanced_resources[0].resource, RES_CPU);
	assert_int_equal(cfg.score.balanced_resources[1].resource, RES_MEMORY);
}

/* A file that sets nothing, or sets things to what they already are,
 * gives the defaults byte for byte. */
static void test_minimal_files_give_defaults(void **state)
{
	(void)state;
	static const char *const texts[] = {
		HEAD,
		HEAD "profiles: []\n",
		HEAD "profiles:\n- schedulerName: default-scheduler\n",
		HEAD "percentageOfNodesToScore: 0\nprofiles:\n- plugins: {}\n"
		     "  pluginConfig: []\n",
		HEAD "profiles:\n- plugins:\n    score:\n      enabled: []\n"
		     "      disabled: []\n",
		HEAD "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n"
		     "    args:\n      ignoredResources: []\n",
		"---\n" HEAD "...\n",
		"{\"apiVersion\": \"kubescheduler.config.k8s.io/v1\", "
		"\"kind\": \"KubeSchedulerConfiguration\"}",
		"{apiVersion: kubescheduler.config.k8s.io/v1, "
		"kind: KubeSchedulerConfiguration}", /* YAML flow, not JSON */
	};
	struct sched_config want;
	sched_config_default(&want);
	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		struct sched_config cfg;
		struct res_names res;
		memset(&cfg, 0x5a, sizeof(cfg));
		load_ok(texts[i], &cfg, &res);
		assert_memory_equal(&cfg, &want, sizeof(cfg));
		assert_int_equal(res.count, RES_FIRST_NAMED);
	}
}

static const char full_yaml[] =
	"# a bin-packing profile\n"
	HEAD
	"percentageOfNodesToScore: 40\n"
	"profiles:\n"
	"- schedulerName: packer\n"
	"  percentageOfNodesToScore: 25\n"
	"  plugins:\n"
	"    score:\n"
	"      disabled:\n"
	"      - name: NodeResourcesBalancedAllocation\n"
	"      - name: ImageLocality\n"
	"      enabled:\n"
	"      - name: NodeResourcesFit\n"
	"        weight: 10\n"
	"  pluginConfig:\n"
	"  - name: NodeResourcesFit\n"
	"    args:\n"
	"      apiVersion: kubescheduler.config.k8s.io/v1\n"
	"      kind: NodeResourcesFitArgs\n"
	"      scoringStrategy:\n"
	"        type: MostAllocated\n"
	"        resources:\n"
	"        - name: cpu\n"
	"          weight: 2\n"
	"        - name: \"example.com/fpga\"\n"
	"          weight: 3\n"
	"        - name: memory\n"
	"  - name: NodeResourcesBalancedAllocation\n"
	"    args:\n"
	"      resources:\n"
	"      - {name: memory, weight: 1}\n"
	"      - {name: example.com/fpga}\n";

static const char full_json[] =
	"{\n"
	"  \"apiVersion\": \"kubescheduler.config.k8s.io/v1\",\n"
	"  \"kind\": \"KubeSchedulerConfiguration\",\n"
	"  \"percentageOfNodesToScore\": 40,\n"
	"  \"profiles\": [{\n"
	"    \"schedulerName\": \"packer\",\n"
	"    \"percentageOfNodesToScore\": 25,\n"
	"    \"plugins\": {\"score\": {\n"
	"      \"disabled\": [{\"name\": \"NodeResourcesBalancedAllocation\"},\n"
	"                   {\"name\": \"ImageLocality\"}],\n"
	"      \"enabled\": [{\"name\": \"NodeResourcesFit\", \"weight\": 10}]}},\n"
	"    \"pluginConfig\": [\n"
	"      {\"name\": \"NodeResourcesFit\", \"args\": {\n"
	"        \"apiVersion\": \"kubescheduler.config.k8s.io/v1\",\n"
	"        \"kind\": \"NodeResourcesFitArgs\",\n"
	"        \"scoringStrategy\": {\"type\": \"MostAllocated\", \"resources\": [\n"
	"          {\"name\": \"cpu\", \"weight\": 2},\n"
	"          {\"name\": \"example.com/fpga\", \"weight\": 3},\n"
	"          {\"name\": \"memory\"}]}}},\n"
	"      {\"name\": \"NodeResourcesBalancedAllocation\", \"args\": {\n"
	"        \"resources\": [{\"name\": \"memory\", \"weight\": 1},\n"
	"                      {\"name\": \"example.com/fpga\"}]}}]\n"
	"  }]\n"
	"}\n";

static void test_yaml_and_json_give_the_same_config(void **state)
{
	(void)state;
	struct sched_config from_yaml, from_json;
	struct res_names res_yaml, res_json;
	load_ok(full_yaml, &from_yaml, &res_yaml);
	load_ok(full_json, &from_json, &res_json);
	assert_memory_equal(&from_yaml, &from_json, sizeof(from_yaml));
	assert_memory_equal(&res_yaml, &res_json, sizeof(res_yaml));

	const struct score_config *sc = &from_yaml.score;
	assert_int_equal(from_yaml.percentage_of_nodes_to_score, 25);
	assert_int_equal(sc->weight_taint, 3);
	assert_int_equal(sc->weight_affinity, 2);
	assert_int_equal(sc->weight_fit, 10);
	assert_int_equal(sc->weight_balanced, 0);
	assert_int_equal(sc->fit_strategy, FIT_MOST_ALLOCATED);
	int fpga = res_lookup(&res_yaml, "example.com/fpga", 16);
	assert_int_equal(fpga, RES_FIRST_NAMED);
	assert_int_equal(sc->n_fit_resources, 3);
	assert_int_equal(sc->fit_resources[0].resource, RES_CPU);
	assert_int_equal(sc->fit_resources[0].weight, 2);
	assert_int_equal(sc->fit_resources[1].resource, fpga);
	assert_int_equal(sc->fit_resources[1].weight, 3);
	assert_int_equal(sc->fit_resources[2].resource, RES_MEMORY);
	assert_int_equal(sc->fit_resources[2].weight, 1); /* none means 1 */
	assert_int_equal(sc->n_balanced_resources, 2);
	assert_int_equal(sc->balanced_resources[0].resource, RES_MEMORY);
	assert_int_equal(sc->balanced_resources[1].resource, fpga);
	assert_int_equal(sc->balanced_resources[1].weight, 1);
}

static void test_file_on_disk(void **state)
{
	(void)state;
	char path[] = "/tmp/sched_config_testXXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, full_yaml, sizeof(full_yaml) - 1),
			 (ssize_t)(sizeof(full_yaml) - 1));
	close(fd);

	struct sched_config cfg, want;
	struct res_names res, res_want;
	char err[256];
	res_names_init(&res);
	assert_int_equal(sched_config_load(path, &cfg, &res, err, sizeof(err)), 0);
	load_ok(full_yaml, &want, &res_want);
	assert_memory_equal(&cfg, &want, sizeof(cfg));
	unlink(path);

	assert_int_equal(sched_config_load(path, &cfg, &res, err, sizeof(err)),
			 -ENOENT);
	assert_non_null(strstr(err, path));
	assert_non_null(strstr(err, "cannot open"));
}

/* The merge follows mergePluginSet in kube's
 * pkg/scheduler/apis/config/v1/default_plugins.go: "disabled" removes
 * defaults by name ("*" all of them); an "enabled" entry naming a default
 * replaces it, weight included; a weight of 0 or none is 1 (framework.go). */
static void test_disable_and_reenable_with_weights(void **state)
{
	(void)state;
	struct sched_config cfg;
	struct res_names res;

	/* Re-enabling a default without a weight gives it 1, not its default. */
	load_ok(HEAD "profiles:\n- plugins:\n    score:\n      enabled:\n"
		"      - name: NodeAffinity\n      - name: TaintToleration\n"
		"        weight: 9\n", &cfg, &res);
	assert_int_equal(cfg.score.weight_taint, 9);
	assert_int_equal(cfg.score.weight_affinity, 1);
	assert_int_equal(cfg.score.weight_fit, 1);
	assert_int_equal(cfg.score.weight_balanced, 1);

	/* "*" drops every default; only what is enabled again runs. */
	load_ok(HEAD "profiles:\n- plugins:\n    score:\n"
		"      disabled: [{name: \"*\"}]\n"
		"      enabled: [{name: NodeResourcesFit, weight: 0},"
		" {name: NodeAffinity, weight: 100}]\n", &cfg, &res);
	assert_int_equal(cfg.score.weight_taint, 0);
	assert_int_equal(cfg.score.weight_affinity, 100);
	assert_int_equal(cfg.score.weight_fit, 1);
	assert_int_equal(cfg.score.weight_balanced, 0);

	/* Disabled and enabled by name: the enabled entry is appended. */
	load_ok(HEAD "profiles:\n- plugins:\n    score:\n"
		"      enabled: [{name: TaintToleration, weight: 4}]\n"
		"      disabled: [{name: TaintToleration}, {name: NodeAffinity}]\n",
		&cfg, &res);
	assert_int_equal(cfg.score.weight_taint, 4);
	assert_int_equal(cfg.score.weight_affinity, 0);
	assert_int_equal(cfg.score.weight_fit, 1);

	/* Disabling the inter-pod scores sets their weights to 0; kube's
	 * other score plugins may be disabled: a no-op here. */
	load_ok(HEAD "profiles:\n- plugins:\n    score:\n      disabled:\n"
		"      - name: PodTopologySpread\n      - name: InterPodAffinity\n"
		"      - name: ImageLocality\n      - name: VolumeBinding\n",
		&cfg, &res);
	struct sched_config want;
	sched_config_default(&want);
	want.score.weight_spread = 0;
	want.score.weight_inter_pod = 0;
	assert_memory_equal(&cfg, &want, sizeof(cfg));
}

/* Our device scores (README, "Devices"): off by default, enabled and
 * disabled by name like kube's, with the same weights (0 or none is 1). */
static void test_gpu_score_plugins(void **state)
{
	(void)state;
	struct sched_config cfg, want;
	struct res_names res;

	load_ok(HEAD "profiles:\n- plugins:\n    score:\n      enabled:\n"
		"      - name: GpuBestFit\n        weight: 5\n"
		"      - name: GpuFragmentation\n", &cfg, &res);
	assert_int_equal(cfg.score.weight_gpu_best_fit, 5);
	assert_int_equal(cfg.score.weight_gpu_frag, 1);
	/* Appended: the defaults keep their weights. */
	assert_int_equal(cfg.score.weight_taint, 3);
	assert_int_equal(cfg.score.weight_affinity, 2);
	assert_int_equal(cfg.score.weight_fit, 1);
	assert_int_equal(cfg.score.weight_balanced, 1);

	load_ok(HEAD "profiles:\n- plugins:\n    score:\n"
		"      disabled: [{name: \"*\"}]\n"
		"      enabled: [{name: GpuFragmentation, weight: 100},"
		" {name: GpuBestFit, weight: 0}]\n", &cfg, &res);
	assert_int_equal(cfg.score.weight_gpu_best_fit, 1);
	assert_int_equal(cfg.score.weight_gpu_frag, 100);
	assert_int_equal(cfg.score.weight_taint, 0);
	assert_int_equal(cfg.score.weight_affinity, 0);
	assert_int_equal(cfg.score.weight_fit, 0);
	assert_int_equal(cfg.score.weight_balanced, 0);

	/* Disabled, or disabled and enabled by name (the enabled entry
	 * wins, as for kube's plugins). */
	load_ok(HEAD "profiles:\n- plugins:\n    score:\n"
		"      disabled: [{name: GpuBestFit}, {name: GpuFragmentation}]\n",
		&cfg, &res);
	sched_config_default(&want);
	assert_memory_equal(&cfg, &want, sizeof(cfg));
	load_ok(HEAD "profiles:\n- plugins:\n    score:\n"
		"      enabled: [{name: GpuBestFit, weight: 7}]\n"
		"      disabled: [{name: GpuBestFit}]\n", &cfg, &res);
	assert_int_equal(cfg.score.weight_gpu_best_fit, 7);
	assert_int_equal(cfg.score.weight_gpu_frag, 0);

	/* JSON alike. */
	const char *json = "{\"apiVersion\": \"kubescheduler.config.k8s.io/v1\","
			   " \"kind\": \"KubeSchedulerConfiguration\","
			   " \"profiles\": [{\"plugins\": {\"score\": {\"enabled\":"
			   " [{\"name\": \"GpuFragmentation\", \"weight\": 3}]}}}]}";
	load_ok(json, &cfg, &res);
	assert_int_equal(cfg.score.weight_gpu_best_fit, 0);
	assert_int_equal(cfg.score.weight_gpu_frag, 3);
}

static void test_most_allocated_with_an_extended_resource(void **state)
{
	(void)state;
	struct sched_config cfg;
	struct res_names res;
	load_ok(HEAD "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n"
		"    args:\n      scoringStrategy:\n        type: MostAllocated\n"
		"        resources:\n        - {name: nvidia.com/gpu, weight: 100}\n"
		"        - {name: ephemeral-storage, weight: 1}\n"
		"        - {name: hugepages-2Mi, weight: 0}\n", &cfg, &res);
	assert_int_equal(cfg.score.fit_strategy, FIT_MOST_ALLOCATED);
	assert_int_equal(cfg.score.n_fit_resources, 3);
	assert_int_equal(cfg.score.fit_resources[0].resource, RES_FIRST_NAMED);
	assert_string_equal(res.name[RES_FIRST_NAMED], "nvidia.com/gpu");
	assert_int_equal(cfg.score.fit_resources[0].weight, 100);
	assert_int_equal(cfg.score.fit_resources[1].resource, RES_EPHEMERAL);
	assert_int_equal(cfg.score.fit_resources[2].resource, RES_FIRST_NAMED + 1);
	assert_string_equal(res.name[RES_FIRST_NAMED + 1], "hugepages-2Mi");
	assert_int_equal(cfg.score.fit_resources[2].weight, 1); /* 0 means 1 */
	/* The balanced allocation keeps its defaults. */
	assert_int_equal(cfg.score.n_balanced_resources, 2);

	/* A resource the registry already knows keeps its index. */
	char err[256];
	res_names_init(&res);
	assert_int_equal(res_register(&res, "example.com/a", 13), RES_FIRST_NAMED);
	assert_int_equal(load(HEAD "profiles:\n- pluginConfig:\n"
			      "  - name: NodeResourcesFit\n    args:\n"
			      "      scoringStrategy:\n        type: LeastAllocated\n"
			      "        resources: [{name: example.com/b},"
			      " {name: example.com/a}]\n",
			      &cfg, &res, err, sizeof(err)), 0);
	assert_int_equal(cfg.score.fit_resources[0].resource, RES_FIRST_NAMED + 1);
	assert_int_equal(cfg.score.fit_resources[1].resource, RES_FIRST_NAMED);
	assert_int_equal(cfg.score.fit_strategy, FIT_LEAST_ALLOCATED);
}

/* defaults.go: a scoringStrategy without resources scores cpu and memory. */
static void test_strategy_without_resources_defaults_them(void **state)
{
	(void)state;
	struct sched_config cfg;
	struct res_names res;
	load_ok(HEAD "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n"
		"    args: {scoringStrategy: {type: MostAllocated}}\n", &cfg, &res);
	assert_int_equal(cfg.score.fit_strategy, FIT_MOST_ALLOCATED);
	assert_int_equal(cfg.score.n_fit_resources, 2);
	assert_int_equal(cfg.score.fit_resources[0].resource, RES_CPU);
	assert_int_equal(cfg.score.fit_resources[1].resource, RES_MEMORY);
	assert_int_equal(cfg.score.fit_resources[1].weight, 1);
}

static void test_percentage_profile_wins(void **state)
{
	(void)state;
	struct sched_config cfg;
	struct res_names res;
	load_ok(HEAD "percentageOfNodesToScore: 50\n", &cfg, &res);
	assert_int_equal(cfg.percentage_of_nodes_to_score, 50);
	/* Either order of the keys. */
	load_ok(HEAD "profiles:\n- percentageOfNodesToScore: 30\n"
		"percentageOfNodesToScore: 50\n", &cfg, &res);
	assert_int_equal(cfg.percentage_of_nodes_to_score, 30);
	/* An explicit 0 in the profile is the adaptive default again. */
	load_ok(HEAD "percentageOfNodesToScore: 50\n"
		"profiles:\n- percentageOfNodesToScore: 0\n", &cfg, &res);
	assert_int_equal(cfg.percentage_of_nodes_to_score, 0);
	load_ok(HEAD "percentageOfNodesToScore: 100\n", &cfg, &res);
	assert_int_equal(cfg.percentage_of_nodes_to_score, 100);
}

/* The reference message: file, line, field path, value, expectation. */
static void test_message_names_file_line_path_and_value(void **state)
{
	(void)state;
	struct sched_config cfg;
	struct res_names res;
	char err[256];
	res_names_init(&res);
	assert_int_equal(load(HEAD "profiles:\n- pluginConfig:\n"
			      "  - name: NodeResourcesBalancedAllocation\n"
			      "  - name: NodeResourcesFit\n    args:\n"
			      "      scoringStrategy:\n        type: Foo\n",
			      &cfg, &res, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "sched.yaml:9: profiles[0].pluginConfig[1].args"
			    ".scoringStrategy.type: \"Foo\" is not LeastAllocated "
			    "or MostAllocated");

	/* JSON: no line table, the path alone. */
	const char *json = "{\"apiVersion\": \"kubescheduler.config.k8s.io/v1\","
			   " \"kind\": \"KubeSchedulerConfiguration\","
			   " \"profiles\": [{\"pluginConfig\": [{\"name\": "
			   "\"NodeResourcesFit\", \"args\": {\"scoringStrategy\":"
			   " {\"type\": \"Foo\"}}}]}]}";
	assert_int_equal(sched_config_load_buffer("sched.json", json, strlen(json),
						  &cfg, &res, err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "sched.json: profiles[0].pluginConfig[0].args"
			    ".scoringStrategy.type: \"Foo\" is not LeastAllocated "
			    "or MostAllocated");

	/* A short buffer gets a truncated, terminated message. */
	char tiny[12];
	assert_int_equal(sched_config_load_buffer("sched.json", json, strlen(json),
						  &cfg, &res, tiny, sizeof(tiny)),
			 -EINVAL);
	assert_string_equal(tiny, "sched.json:");
	/* No buffer at all is allowed. */
	assert_int_equal(sched_config_load_buffer("sched.json", json, strlen(json),
						  &cfg, &res, NULL, 0), -EINVAL);
}

struct refusal {
	const char *text;
	int rc;
	const char *message; /* a substring of the message */
};

#define PROFILE HEAD "profiles:\n- "
#define SCORE PROFILE "plugins:\n    score:\n      "
#define FIT_ARGS PROFILE "pluginConfig:\n  - name: NodeResourcesFit\n    args:\n      "
#define STRATEGY FIT_ARGS "scoringStrategy:\n        "

static const struct refusal refusals[] = {
	/* The document. */
	{"", -EINVAL, "sched.yaml: empty; expected a KubeSchedulerConfiguration"},
	{"# nothing\n", -EINVAL, "empty; expected a KubeSchedulerConfiguration"},
	{"- a\n- b\n", -EINVAL, "[\"a\",\"b\"] is not a mapping"},
	{"hello\n", -EINVAL, "\"hello\" is not a mapping"},
	{HEAD "---\n" HEAD, -EINVAL, "sched.yaml:3: a second YAML document"},
	{HEAD "profiles: &p []\n", -EINVAL,
	 "sched.yaml:3: YAML anchors (&p) are not supported"},
	{HEAD "x: &p [1]\nprofiles: *p\n", -EINVAL, "YAML anchors (&p)"},
	{"a: &x 1\n", -EINVAL, "YAML anchors (&x) are not supported"},
	{HEAD "profiles: *p\n", -EINVAL, "sched.yaml:3:"},
	{HEAD "profiles: !!set {}\n", -EINVAL, "YAML tag tag:yaml.org,2002:set"},
	{HEAD "kind: again\n", -EINVAL, "sched.yaml:3: duplicate key \"kind\""},
	{HEAD "profiles:\n- plugins:\n  score: {}\n  - bad\n", -EINVAL,
	 "sched.yaml:"},
	{HEAD "profiles: [\n", -EINVAL, "sched.yaml:"},
	{HEAD "? [a]\n: 1\n", -EINVAL, "a mapping key must be a plain string"},
	{"{\"apiVersion\": 1,, }", -EINVAL, "sched.yaml:1: "},
	{"{\"apiVersion\": \"kubescheduler.config.k8s.io/v1\", \"kind\": "
	 "\"KubeSchedulerConfiguration\", \"kind\": \"x\"}", -EINVAL,
	 "duplicate object key"},
	/* apiVersion and kind. */
	{"kind: KubeSchedulerConfiguration\n", -EINVAL,
	 "sched.yaml: apiVersion: missing; expected kubescheduler.config.k8s.io/v1"},
	{"apiVersion: kubescheduler.config.k8s.io/v1beta3\n"
	 "kind: KubeSchedulerConfiguration\n", -EINVAL,
	 "sched.yaml:1: apiVersion: \"kubescheduler.config.k8s.io/v1beta3\" is not "
	 "kubescheduler.config.k8s.io/v1"},
	{"apiVersion: kubescheduler.config.k8s.io/v1\nkind: Pod\n", -EINVAL,
	 "sched.yaml:2: kind: \"Pod\" is not KubeSchedulerConfiguration"},
	{"apiVersion: kubescheduler.config.k8s.io/v1\n", -EINVAL,
	 "kind: missing; expected KubeSchedulerConfiguration"},
	/* Top-level fields: bad values, extenders, unknown fields. */
	{HEAD "parallelism: 0\n", -ERANGE,
	 "sched.yaml:3: parallelism: 0 is not in 1..2147483647"},
	{HEAD "leaderElection: true\n", -EINVAL,
	 "leaderElection: true is not a mapping"},
	{HEAD "podInitialBackoffSeconds: 20\npodMaxBackoffSeconds: 10\n", -EINVAL,
	 "podInitialBackoffSeconds: 20 is more than podMaxBackoffSeconds (10)"},
	{HEAD "extenders: [{urlPrefix: http://x}]\n", -EINVAL,
	 "extenders: scheduler extenders are not supported by shmsched"},
	{HEAD "enableProfiling: yes please\n", -EINVAL,
	 "enableProfiling: \"yes please\" is not true or false"},
	{HEAD "paralelism: 16\n", -EINVAL,
	 "sched.yaml:3: paralelism: unknown field \"paralelism\""},
	/* percentageOfNodesToScore. */
	{HEAD "percentageOfNodesToScore: 101\n", -ERANGE,
	 "percentageOfNodesToScore: 101 is not in 0..100"},
	{HEAD "percentageOfNodesToScore: -1\n", -ERANGE, "-1 is not in 0..100"},
	{HEAD "percentageOfNodesToScore: \"50\"\n", -EINVAL,
	 "percentageOfNodesToScore: \"50\" is not an integer"},
	{HEAD "percentageOfNodesToScore: 50.5\n", -EINVAL,
	 "50.5 is not an integer"},
	{HEAD "percentageOfNodesToScore: 99999999999999999999999\n", -EINVAL,
	 "\"99999999999999999999999\" is not an integer"},
	{PROFILE "percentageOfNodesToScore: 200\n", -ERANGE,
	 "profiles[0].percentageOfNodesToScore: 200 is not in 0..100"},
	/* profiles. */
	{HEAD "profiles: {}\n", -EINVAL, "profiles: {} is not a list"},
	{HEAD "profiles:\n- schedulerName: a\n- schedulerName: b\n", -EINVAL,
	 "sched.yaml:5: profiles[1]: a second profile is not supported by shmsched"},
	{HEAD "profiles: [3]\n", -EINVAL, "profiles[0]: 3 is not a mapping"},
	{PROFILE "schedulerName: 3\n", -EINVAL,
	 "profiles[0].schedulerName: 3 is not a string"},
	{PROFILE "frameworkName: x\n", -EINVAL,
	 "profiles[0].frameworkName: unknown field \"frameworkName\""},
	/* plugins: only score. */
	{PROFILE "plugins:\n    filter:\n      disabled: [{name: NodePorts}]\n",
	 -EINVAL, "profiles[0].plugins.filter: not supported by shmsched"},
	{PROFILE "plugins:\n    multiPoint: {}\n", -EINVAL,
	 "profiles[0].plugins.multiPoint: not supported by shmsched"},
	{PROFILE "plugins:\n    preFilter: {}\n", -EINVAL,
	 "plugins.preFilter: not supported by shmsched"},
	{PROFILE "plugins: []\n", -EINVAL, "profiles[0].plugins: [] is not a mapping"},
	{SCORE "enable: []\n", -EINVAL,
	 "profiles[0].plugins.score.enable: not supported by shmsched"},
	{SCORE "enabled: {}\n", -EINVAL, "score.enabled: {} is not a list"},
	{SCORE "enabled:\n      - name: ImageLocality\n", -EINVAL,
	 "sched.yaml:7: profiles[0].plugins.score.enabled[0].name: "
	 "\"ImageLocality\" is not supported by shmsched"},
	{SCORE "enabled:\n      - name: MyPlugin\n", -EINVAL,
	 "\"MyPlugin\" is not supported by shmsched (it scores with "
	 "TaintToleration, NodeAffinity, NodeResourcesFit, "
	 "NodeResourcesBalancedAllocation, GpuBestFit, GpuFragmentation)"},
	{SCORE "enabled:\n      - name: gpuBestFit\n", -EINVAL,
	 "\"gpuBestFit\" is not supported by shmsched"},
	{SCORE "enabled:\n      - name: GpuBestFit\n        weight: 101\n", -ERANGE,
	 "score.enabled[0].weight: 101 is not in 0..100"},
	{SCORE "enabled: [{name: GpuFragmentation}, {name: GpuFragmentation,"
	 " weight: 2}]\n", -EINVAL,
	 "score.enabled[1].name: \"GpuFragmentation\" is enabled twice"},
	{SCORE "disabled: [{name: GpuFrag}]\n", -EINVAL,
	 "score.disabled[0].name: \"GpuFrag\" is not a kube-scheduler score plugin"},
	{PROFILE "pluginConfig:\n  - name: GpuBestFit\n    args: {}\n", -EINVAL,
	 "pluginConfig[0].name: args of \"GpuBestFit\" are not supported by "
	 "shmsched (only NodeResourcesFit, NodeResourcesBalancedAllocation, "
	 "InterPodAffinity, PodTopologySpread and GpuFragmentation take args)"},
	{PROFILE "pluginConfig:\n  - name: GpuFragmentation\n    args:\n"
	 "      maxShapes: 0\n", -ERANGE,
	 "pluginConfig[0].args.maxShapes: 0 is not in 1..256"},
	{PROFILE "pluginConfig:\n  - name: GpuFragmentation\n    args:\n"
	 "      maxShapes: 257\n", -ERANGE,
	 "pluginConfig[0].args.maxShapes: 257 is not in 1..256"},
	{PROFILE "pluginConfig:\n  - name: GpuFragmentation\n    args:\n"
	 "      modelReservation: -1\n", -ERANGE,
	 "pluginConfig[0].args.modelReservation: -1 is not in 0..1000"},
	{PROFILE "pluginConfig:\n  - name: GpuFragmentation\n    args:\n"
	 "      modelReservation: lots\n", -EINVAL, "\"lots\" is not an integer"},
	{PROFILE "pluginConfig:\n  - name: GpuFragmentation\n    args:\n"
	 "      kind: InterPodAffinityArgs\n", -EINVAL, "GpuFragmentationArgs"},
	{PROFILE "pluginConfig:\n  - name: GpuFragmentation\n    args:\n"
	 "      cpuLimited: 1\n", -EINVAL, "1 is not true or false"},
	{PROFILE "pluginConfig:\n  - name: GpuFragmentation\n    args:\n"
	 "      maxShape: 3\n", -EINVAL,
	 "args.maxShape: unknown field \"maxShape\""},
	{SCORE "enabled:\n      - name: NodeAffinity\n        weight: 101\n", -ERANGE,
	 "score.enabled[0].weight: 101 is not in 0..100"},
	{SCORE "enabled:\n      - name: NodeAffinity\n        weight: -1\n", -ERANGE,
	 "score.enabled[0].weight: -1 is not in 0..100"},
	{SCORE "enabled:\n      - name: NodeAffinity\n        weight: two\n",
	 -EINVAL, "\"two\" is not an integer"},
	{SCORE "enabled: [{name: NodeAffinity}, {name: NodeAffinity}]\n", -EINVAL,
	 "score.enabled[1].name: \"NodeAffinity\" is enabled twice"},
	{SCORE "enabled: [{weight: 2}]\n", -EINVAL,
	 "score.enabled[0].name: missing; expected a plugin name"},
	{SCORE "enabled: [{name: NodeAffinity, args: {}}]\n", -EINVAL,
	 "score.enabled[0].args: not supported by shmsched"},
	{SCORE "disabled: [{name: Foo}]\n", -EINVAL,
	 "score.disabled[0].name: \"Foo\" is not a kube-scheduler score plugin"},
	{SCORE "disabled: [{name: \"\"}]\n", -EINVAL,
	 "score.disabled[0].name: \"\" is not a plugin name"},
	/* pluginConfig. */
	{PROFILE "pluginConfig: {}\n", -EINVAL, "pluginConfig: {} is not a list"},
	{PROFILE "pluginConfig:\n  - name: InterPodAffinity\n    args:\n"
	 "      hardPodAffinityWeight: 101\n", -ERANGE,
	 "pluginConfig[0].args.hardPodAffinityWeight: 101 is not in 0..100"},
	{PROFILE "pluginConfig:\n  - name: InterPodAffinity\n    args:\n"
	 "      hardPodAffinityWieght: 1\n", -EINVAL,
	 "args.hardPodAffinityWieght: unknown field \"hardPodAffinityWieght\""},
	{PROFILE "pluginConfig:\n  - name: PodTopologySpread\n    args:\n"
	 "      defaultingType: Sometimes\n", -EINVAL,
	 "args.defaultingType: \"Sometimes\" is not System or List"},
	{PROFILE "pluginConfig:\n  - name: PodTopologySpread\n    args:\n"
	 "      defaultingType: List\n      defaultConstraints:\n"
	 "      - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: ScheduleAnyway}\n",
	 -EINVAL, "args.defaultConstraints: default constraints of a profile's own "
	 "are not supported by shmsched yet"},
	{PROFILE "pluginConfig:\n  - name: NodeAffinity\n    args: {}\n", -EINVAL,
	 "args of \"NodeAffinity\" are not supported by shmsched"},
	{PROFILE "pluginConfig:\n  - name: NodeResourcesFit\n"
	 "  - name: NodeResourcesFit\n", -EINVAL,
	 "pluginConfig[1].name: \"NodeResourcesFit\" is configured twice"},
	{PROFILE "pluginConfig:\n  - args: {}\n", -EINVAL,
	 "pluginConfig[0].name: missing; expected a plugin name"},
	{PROFILE "pluginConfig:\n  - name: NodeResourcesFit\n    argz: {}\n", -EINVAL,
	 "pluginConfig[0].argz: not supported by shmsched"},
	{FIT_ARGS "kind: NodeResourcesBalancedAllocationArgs\n", -EINVAL,
	 "args.kind: \"NodeResourcesBalancedAllocationArgs\" is not "
	 "NodeResourcesFitArgs"},
	{FIT_ARGS "apiVersion: kubescheduler.config.k8s.io/v1beta3\n", -EINVAL,
	 "args.apiVersion: \"kubescheduler.config.k8s.io/v1beta3\" is not "
	 "kubescheduler.config.k8s.io/v1"},
	{FIT_ARGS "ignoredResources: [example.com/foo]\n", -EINVAL,
	 "pluginConfig[0].args.ignoredResources: not supported by shmsched"},
	{FIT_ARGS "ignoredResourceGroups: [example.com]\n", -EINVAL,
	 "pluginConfig[0].args.ignoredResourceGroups: not supported by shmsched"},
	{FIT_ARGS "scoringStrategy: LeastAllocated\n", -EINVAL,
	 "args.scoringStrategy: \"LeastAllocated\" is not a mapping"},
	{STRATEGY "type: RequestedToCapacityRatio\n", -EINVAL,
	 "scoringStrategy.type: \"RequestedToCapacityRatio\" is not supported by "
	 "shmsched"},
	{STRATEGY "type: LeastAllocated\n        requestedToCapacityRatio: {}\n",
	 -EINVAL, "scoringStrategy.requestedToCapacityRatio: not supported by "
	 "shmsched"},
	{STRATEGY "resources: [{name: cpu}]\n", -EINVAL,
	 "scoringStrategy.type: missing; expected LeastAllocated or MostAllocated"},
	{STRATEGY "type: leastallocated\n", -EINVAL,
	 "\"leastallocated\" is not LeastAllocated or MostAllocated"},
	{STRATEGY "type: MostAllocated\n        resources: [{name: cpu, weight: 101}]\n",
	 -ERANGE, "scoringStrategy.resources[0].weight: 101 is not in 1..100"},
	{STRATEGY "type: MostAllocated\n        resources: [{name: cpu, weight: -3}]\n",
	 -ERANGE, "resources[0].weight: -3 is not in 1..100"},
	{STRATEGY "type: MostAllocated\n        resources: [{name: cpu, weight: 1.5}]\n",
	 -EINVAL, "resources[0].weight: 1.5 is not an integer"},
	{STRATEGY "type: MostAllocated\n        resources: [{name: cpu}, {name: cpu}]\n",
	 -EINVAL, "scoringStrategy.resources[1].name: \"cpu\" is listed twice"},
	{STRATEGY "type: MostAllocated\n        resources: [{weight: 1}]\n",
	 -EINVAL, "resources[0].name: missing; expected a resource name"},
	{STRATEGY "type: MostAllocated\n        resources: [{name: 7}]\n",
	 -EINVAL, "resources[0].name: 7 is not a resource name"},
	{STRATEGY "type: MostAllocated\n        resources: [{name: \"a\\0b\"}]\n",
	 -EINVAL, "resources[0].name: \"a\\u0000b\" is not a resource name"},
	{STRATEGY "type: MostAllocated\n        resources: [{name: x, unit: m}]\n",
	 -EINVAL, "resources[0].unit: not supported by shmsched"},
	{STRATEGY "type: MostAllocated\n        resources:\n"
	 "        - name: example.com/a-name-that-is-far-too-long-for-a-resource-"
	 "name-slot\n", -ENAMETOOLONG, "is longer than 63 bytes"},
	{STRATEGY "type: MostAllocated\n        resources:\n"
	 "        - {name: x.io/r1}\n        - {name: x.io/r2}\n"
	 "        - {name: x.io/r3}\n        - {name: x.io/r4}\n"
	 "        - {name: x.io/r5}\n        - {name: x.io/r6}\n"
	 "        - {name: x.io/r7}\n        - {name: x.io/r8}\n"
	 "        - {name: x.io/r9}\n        - {name: x.io/r10}\n"
	 "        - {name: x.io/r11}\n        - {name: x.io/r12}\n"
	 "        - {name: x.io/r13}\n", -ENOSPC,
	 "scoringStrategy.resources[12].name: \"x.io/r13\": too many resource names "
	 "(shmsched knows at most 16)"},
	{PROFILE "pluginConfig:\n  - name: NodeResourcesBalancedAllocation\n"
	 "    args:\n      resources: [{name: cpu, weight: 2}]\n", -EINVAL,
	 "args.resources[0].weight: 2 is not 1"},
	{PROFILE "pluginConfig:\n  - name: NodeResourcesBalancedAllocation\n"
	 "    args:\n      shape: []\n", -EINVAL,
	 "args.shape: not supported by shmsched"},
	{PROFILE "pluginConfig:\n  - name: NodeResourcesBalancedAllocation\n"
	 "    args:\n      resources: [{name: memory}, {name: memory}]\n", -EINVAL,
	 "args.resources[1].name: \"memory\" is listed twice"},
};

/* Production files load: the docs' first example (clientConnection), the
 * fields of the v1 type shmsched keeps or only warns about, and the
 * inter-pod plugins' args. */
static void test_production_files_load(void **state)
{
	(void)state;
	struct sched_config cfg, want;
	struct res_names res;
	res_names_init(&res);
	load_ok("apiVersion: kubescheduler.config.k8s.io/v1\n"
		"kind: KubeSchedulerConfiguration\n"
		"clientConnection:\n"
		"  kubeconfig: /etc/srv/kubernetes/kube-scheduler/kubeconfig\n", &cfg, &res);
	sched_config_default(&want);
	assert_memory_equal(&cfg, &want, sizeof(cfg));
	load_ok(HEAD "parallelism: 32\n"
		"podInitialBackoffSeconds: 2\npodMaxBackoffSeconds: 20\n"
		"leaderElection:\n  leaderElect: true\n  resourceNamespace: kube-system\n"
		"healthzBindAddress: 0.0.0.0:10251\nmetricsBindAddress: 0.0.0.0:10251\n"
		"enableProfiling: false\nenableContentionProfiling: false\n"
		"delayCacheUntilActive: true\nextenders: []\n"
		"profiles:\n- schedulerName: default-scheduler\n  pluginConfig:\n"
		"  - name: InterPodAffinity\n    args:\n"
		"      kind: InterPodAffinityArgs\n"
		"      hardPodAffinityWeight: 5\n"
		"      ignorePreferredTermsOfExistingPods: true\n"
		"  - name: PodTopologySpread\n    args:\n"
		"      defaultingType: List\n", &cfg, &res);
	assert_int_equal(cfg.parallelism, 32);
	assert_int_equal(cfg.pod_initial_backoff_seconds, 2);
	assert_int_equal(cfg.pod_max_backoff_seconds, 20);
	assert_int_equal(cfg.score.hard_pod_affinity_weight, 5);
	assert_true(cfg.score.ignore_preferred_terms_of_existing);
	assert_int_equal(cfg.score.spread_defaulting, SPREAD_DEFAULTING_NONE);
	load_ok(PROFILE "pluginConfig:\n  - name: PodTopologySpread\n    args:\n"
		"      defaultingType: System\n", &cfg, &res);
	assert_int_equal(cfg.score.spread_defaulting, SPREAD_DEFAULTING_SYSTEM);
	assert_int_equal(cfg.score.hard_pod_affinity_weight, 1);
	/* GpuFragmentationArgs: the defaults, then both set. */
	assert_int_equal(cfg.score.gpu_frag_max_shapes, SCORE_GPU_FRAG_MAX_SHAPES);
	assert_int_equal(cfg.score.gpu_frag_model_reservation, 0);
	assert_false(cfg.score.gpu_frag_cpu_limited);
	load_ok(PROFILE "pluginConfig:\n  - name: GpuFragmentation\n    args:\n"
		"      kind: GpuFragmentationArgs\n"
		"      maxShapes: 64\n      modelReservation: 150\n"
		"      cpuLimited: true\n", &cfg, &res);
	assert_int_equal(cfg.score.gpu_frag_max_shapes, 64);
	assert_int_equal(cfg.score.gpu_frag_model_reservation, 150);
	assert_true(cfg.score.gpu_frag_cpu_limited);
}

/* Every refusal says what and where, and changes neither the config nor
 * the registry (registrations made before the error are undone). */
static void test_refusals(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(refusals) / sizeof(refusals[0]); i++) {
		const struct refusal *r = &refusals[i];
		struct sched_config cfg, before;
		struct res_names res, res_before;
		char err[512];
		memset(&cfg, 0x77, sizeof(cfg));
		memcpy(&before, &cfg, sizeof(cfg));
		res_names_init(&res);
		memcpy(&res_before, &res, sizeof(res));
		int rc = load(r->text, &cfg, &res, err, sizeof(err));
		if (rc != r->rc || strstr(err, r->message) == NULL)
			fail_msg("refusal %zu: rc %d (want %d), message\n  %s\n"
				 "want it to contain\n  %s", i, rc, r->rc, err,
				 r->message);
		assert_memory_equal(&cfg, &before, sizeof(cfg));
		assert_memory_equal(&res, &res_before, sizeof(res));
	}
}

static void test_bad_arguments(void **state)
{
	(void)state;
	struct sched_config cfg;
	struct res_names res;
	char err[128];
	res_names_init(&res);
	assert_int_equal(sched_config_load_buffer("x", NULL, 3, &cfg, &res, err,
						  sizeof(err)), -EINVAL);
	assert_int_equal(sched_config_load_buffer("x", HEAD, strlen(HEAD), NULL,
						  &res, err, sizeof(err)), -EINVAL);
	assert_int_equal(sched_config_load_buffer("x", HEAD, strlen(HEAD), &cfg,
						  NULL, err, sizeof(err)), -EINVAL);
	assert_int_equal(sched_config_load(NULL, &cfg, &res, err, sizeof(err)),
			 -EINVAL);
}

/* Every prefix of valid files, and the file with each byte overwritten,
 * is read or refused with a message; never a crash or a leak (ASan). */
static void test_truncations_and_overwrites(void **state)
{
	(void)state;
	const char *texts[] = {full_yaml, full_json};
	for (size_t t = 0; t < 2; t++) {
		size_t len = strlen(texts[t]);
		char *buf = malloc(len);
		assert_non_null(buf);
		for (size_t n = 0; n <= len; n++) {
			struct sched_config cfg;
			struct res_names res;
			char err[256];
			res_names_init(&res);
			/* An exact-size heap copy: ASan sees any read past it. */
			memcpy(buf, texts[t], n);
			int rc = sched_config_load_buffer("cut", buf, n, &cfg, &res,
							  err, sizeof(err));
			assert_true(rc <= 0);
			if (rc < 0)
				assert_true(err[0] != '\0');
		}
		static const char junk[] = {'\0', '&', '*', '[', '{', '"', '\n', ':'};
		for (size_t n = 0; n < len; n++) {
			struct sched_config cfg;
			struct res_names res;
			char err[256];
			memcpy(buf, texts[t], len);
			buf[n] = junk[n % sizeof(junk)];
			res_names_init(&res);
			int rc = sched_config_load_buffer("bent", buf, len, &cfg, &res,
							  err, sizeof(err));
			assert_true(rc <= 0);
			if (rc < 0)
				assert_true(err[0] != '\0');
		}
		free(buf);
	}
}

/* Deep nesting is refused, not recursed into without bound. */
static void test_deep_nesting(void **state)
{
	(void)state;
	enum { DEPTH = 5000 };
	static const char head[] = HEAD "x: ";
	static char text[sizeof(head) + 2 * DEPTH];
	size_t n = sizeof(head) - 1;
	memcpy(text, head, n);
	memset(text + n, '[', DEPTH);
	memset(text + n + DEPTH, ']', DEPTH);
	text[n + 2 * DEPTH] = '\0';
	struct sched_config cfg;
	struct res_names res;
	char err[256];
	res_names_init(&res);
	assert_int_equal(load(text, &cfg, &res, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "nested deeper than"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_minimal_files_give_defaults),
		cmocka_unit_test(test_yaml_and_json_give_the_same_config),
		cmocka_unit_test(test_file_on_disk),
		cmocka_unit_test(test_disable_and_reenable_with_weights),
		cmocka_unit_test(test_gpu_score_plugins),
		cmocka_unit_test(test_most_allocated_with_an_extended_resource),
		cmocka_unit_test(test_strategy_without_resources_defaults_them),
		cmocka_unit_test(test_percentage_profile_wins),
		cmocka_unit_test(test_message_names_file_line_path_and_value),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_production_files_load),
		cmocka_unit_test(test_bad_arguments),
		cmocka_unit_test(test_truncations_and_overwrites),
		cmocka_unit_test(test_deep_nesting),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
