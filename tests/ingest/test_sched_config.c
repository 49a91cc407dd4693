/* unit.sched_config: the KubeSchedulerConfiguration reader
 * (ingest/sched_config*.c): defaults, YAML and JSON alike, the plugin merge,
 * scoring strategies, every refusal with its message, and bounded input
 * (truncations; tests/fuzz/fuzz_config.c explores the rest). */
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

/* Where args' strings go (topology keys, added affinity). */
static struct intern *strings;

static int load(const char *text, struct sched_config *cfg,
		struct res_names *res, char *err, size_t err_len)
{
	return sched_config_load_buffer("sched.yaml", text, strlen(text), cfg,
					res, strings, err, err_len);
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
	assert_int_equal(cfg.profiles[0].score.weight_taint, 3);
	assert_int_equal(cfg.profiles[0].score.weight_affinity, 2);
	assert_int_equal(cfg.profiles[0].score.weight_fit, 1);
	assert_int_equal(cfg.profiles[0].score.weight_balanced, 1);
	assert_int_equal(cfg.profiles[0].score.weight_gpu_best_fit, 0); /* ours: off */
	assert_int_equal(cfg.profiles[0].score.weight_gpu_frag, 0);
	assert_int_equal(cfg.profiles[0].score.fit_strategy, FIT_LEAST_ALLOCATED);
	assert_int_equal(cfg.profiles[0].score.n_fit_resources, 2);
	assert_int_equal(cfg.profiles[0].score.fit_resources[0].resource, RES_CPU);
	assert_int_equal(cfg.profiles[0].score.fit_resources[0].weight, 1);
	assert_int_equal(cfg.profiles[0].score.fit_resources[1].resource, RES_MEMORY);
	assert_int_equal(cfg.profiles[0].score.fit_resources[1].weight, 1);
	assert_int_equal(cfg.profiles[0].score.n_balanced_resources, 2);
	assert_int_equal(cfg.profiles[0].score.balanced_resources[0].resource, RES_CPU);
	assert_int_equal(cfg.profiles[0].score.balanced_resources[1].resource, RES_MEMORY);
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

	const struct score_config *sc = &from_yaml.profiles[0].score;
	assert_int_equal(from_yaml.n_profiles, 1);
	assert_string_equal(from_yaml.profiles[0].scheduler_name, "packer");
	assert_int_equal(from_yaml.percentage_of_nodes_to_score, 40);
	assert_int_equal(from_yaml.profiles[0].percentage_of_nodes_to_score, 25);
	assert_int_equal(sched_profile_percentage(&from_yaml, 0), 25);
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
	assert_int_equal(sched_config_load(path, &cfg, &res, strings, err, sizeof(err)), 0);
	load_ok(full_yaml, &want, &res_want);
	assert_memory_equal(&cfg, &want, sizeof(cfg));
	unlink(path);

	assert_int_equal(sched_config_load(path, &cfg, &res, strings, err, sizeof(err)),
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
	assert_int_equal(cfg.profiles[0].score.weight_taint, 9);
	assert_int_equal(cfg.profiles[0].score.weight_affinity, 1);
	assert_int_equal(cfg.profiles[0].score.weight_fit, 1);
	assert_int_equal(cfg.profiles[0].score.weight_balanced, 1);

	/* "*" drops every default; only what is enabled again runs. */
	load_ok(HEAD "profiles:\n- plugins:\n    score:\n"
		"      disabled: [{name: \"*\"}]\n"
		"      enabled: [{name: NodeResourcesFit, weight: 0},"
		" {name: NodeAffinity, weight: 100}]\n", &cfg, &res);
	assert_int_equal(cfg.profiles[0].score.weight_taint, 0);
	assert_int_equal(cfg.profiles[0].score.weight_affinity, 100);
	assert_int_equal(cfg.profiles[0].score.weight_fit, 1);
	assert_int_equal(cfg.profiles[0].score.weight_balanced, 0);

	/* Disabled and enabled by name: the enabled entry is appended. */
	load_ok(HEAD "profiles:\n- plugins:\n    score:\n"
		"      enabled: [{name: TaintToleration, weight: 4}]\n"
		"      disabled: [{name: TaintToleration}, {name: NodeAffinity}]\n",
		&cfg, &res);
	assert_int_equal(cfg.profiles[0].score.weight_taint, 4);
	assert_int_equal(cfg.profiles[0].score.weight_affinity, 0);
	assert_int_equal(cfg.profiles[0].score.weight_fit, 1);

	/* Disabling the inter-pod scores sets their weights to 0; kube's
	 * other score plugins may be disabled: a no-op here. */
	load_ok(HEAD "profiles:\n- plugins:\n    score:\n      disabled:\n"
		"      - name: PodTopologySpread\n      - name: InterPodAffinity\n"
		"      - name: ImageLocality\n      - name: VolumeBinding\n",
		&cfg, &res);
	struct sched_config want;
	sched_config_default(&want);
	want.profiles[0].score.weight_spread = 0;
	want.profiles[0].score.weight_inter_pod = 0;
	assert_memory_equal(&cfg, &want, sizeof(cfg));
}

/* Our device scores (docs/reference/kubernetes-fields.md, "Devices"): off by default, enabled and
 * disabled by name like kube's, with the same weights (0 or none is 1). */
static void test_gpu_score_plugins(void **state)
{
	(void)state;
	struct sched_config cfg, want;
	struct res_names res;

	load_ok(HEAD "profiles:\n- plugins:\n    score:\n      enabled:\n"
		"      - name: GpuBestFit\n        weight: 5\n"
		"      - name: GpuFragmentation\n", &cfg, &res);
	assert_int_equal(cfg.profiles[0].score.weight_gpu_best_fit, 5);
	assert_int_equal(cfg.profiles[0].score.weight_gpu_frag, 1);
	/* Appended: the defaults keep their weights. */
	assert_int_equal(cfg.profiles[0].score.weight_taint, 3);
	assert_int_equal(cfg.profiles[0].score.weight_affinity, 2);
	assert_int_equal(cfg.profiles[0].score.weight_fit, 1);
	assert_int_equal(cfg.profiles[0].score.weight_balanced, 1);

	load_ok(HEAD "profiles:\n- plugins:\n    score:\n"
		"      disabled: [{name: \"*\"}]\n"
		"      enabled: [{name: GpuFragmentation, weight: 100},"
		" {name: GpuBestFit, weight: 0}]\n", &cfg, &res);
	assert_int_equal(cfg.profiles[0].score.weight_gpu_best_fit, 1);
	assert_int_equal(cfg.profiles[0].score.weight_gpu_frag, 100);
	assert_int_equal(cfg.profiles[0].score.weight_taint, 0);
	assert_int_equal(cfg.profiles[0].score.weight_affinity, 0);
	assert_int_equal(cfg.profiles[0].score.weight_fit, 0);
	assert_int_equal(cfg.profiles[0].score.weight_balanced, 0);

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
	assert_int_equal(cfg.profiles[0].score.weight_gpu_best_fit, 7);
	assert_int_equal(cfg.profiles[0].score.weight_gpu_frag, 0);

	/* JSON alike. */
	const char *json = "{\"apiVersion\": \"kubescheduler.config.k8s.io/v1\","
			   " \"kind\": \"KubeSchedulerConfiguration\","
			   " \"profiles\": [{\"plugins\": {\"score\": {\"enabled\":"
			   " [{\"name\": \"GpuFragmentation\", \"weight\": 3}]}}}]}";
	load_ok(json, &cfg, &res);
	assert_int_equal(cfg.profiles[0].score.weight_gpu_best_fit, 0);
	assert_int_equal(cfg.profiles[0].score.weight_gpu_frag, 3);
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
	assert_int_equal(cfg.profiles[0].score.fit_strategy, FIT_MOST_ALLOCATED);
	assert_int_equal(cfg.profiles[0].score.n_fit_resources, 3);
	assert_int_equal(cfg.profiles[0].score.fit_resources[0].resource, RES_FIRST_NAMED);
	assert_string_equal(res.name[RES_FIRST_NAMED], "nvidia.com/gpu");
	assert_int_equal(cfg.profiles[0].score.fit_resources[0].weight, 100);
	assert_int_equal(cfg.profiles[0].score.fit_resources[1].resource, RES_EPHEMERAL);
	assert_int_equal(cfg.profiles[0].score.fit_resources[2].resource, RES_FIRST_NAMED + 1);
	assert_string_equal(res.name[RES_FIRST_NAMED + 1], "hugepages-2Mi");
	assert_int_equal(cfg.profiles[0].score.fit_resources[2].weight, 1); /* 0 means 1 */
	/* The balanced allocation keeps its defaults. */
	assert_int_equal(cfg.profiles[0].score.n_balanced_resources, 2);

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
	assert_int_equal(cfg.profiles[0].score.fit_resources[0].resource, RES_FIRST_NAMED + 1);
	assert_int_equal(cfg.profiles[0].score.fit_resources[1].resource, RES_FIRST_NAMED);
	assert_int_equal(cfg.profiles[0].score.fit_strategy, FIT_LEAST_ALLOCATED);
}

/* defaults.go: a scoringStrategy without resources scores cpu and memory. */
static void test_strategy_without_resources_defaults_them(void **state)
{
	(void)state;
	struct sched_config cfg;
	struct res_names res;
	load_ok(HEAD "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n"
		"    args: {scoringStrategy: {type: MostAllocated}}\n", &cfg, &res);
	assert_int_equal(cfg.profiles[0].score.fit_strategy, FIT_MOST_ALLOCATED);
	assert_int_equal(cfg.profiles[0].score.n_fit_resources, 2);
	assert_int_equal(cfg.profiles[0].score.fit_resources[0].resource, RES_CPU);
	assert_int_equal(cfg.profiles[0].score.fit_resources[1].resource, RES_MEMORY);
	assert_int_equal(cfg.profiles[0].score.fit_resources[1].weight, 1);
}

static void test_percentage_profile_wins(void **state)
{
	(void)state;
	struct sched_config cfg;
	struct res_names res;
	load_ok(HEAD "percentageOfNodesToScore: 50\n", &cfg, &res);
	assert_int_equal(cfg.percentage_of_nodes_to_score, 50);
	assert_int_equal(cfg.profiles[0].percentage_of_nodes_to_score, -1);
	assert_int_equal(sched_profile_percentage(&cfg, 0), 50);
	/* Either order of the keys. */
	load_ok(HEAD "profiles:\n- percentageOfNodesToScore: 30\n"
		"percentageOfNodesToScore: 50\n", &cfg, &res);
	assert_int_equal(sched_profile_percentage(&cfg, 0), 30);
	/* An explicit 0 in the profile is the adaptive default again. */
	load_ok(HEAD "percentageOfNodesToScore: 50\n"
		"profiles:\n- percentageOfNodesToScore: 0\n", &cfg, &res);
	assert_int_equal(sched_profile_percentage(&cfg, 0), 0);
	load_ok(HEAD "percentageOfNodesToScore: 100\n", &cfg, &res);
	assert_int_equal(sched_profile_percentage(&cfg, 0), 100);
	/* Per profile: one has its own, the other the scheduler's. */
	load_ok(HEAD "percentageOfNodesToScore: 70\nprofiles:\n"
		"- schedulerName: a\n  percentageOfNodesToScore: 10\n"
		"- schedulerName: b\n", &cfg, &res);
	assert_int_equal(sched_profile_percentage(&cfg, 0), 10);
	assert_int_equal(sched_profile_percentage(&cfg, 1), 70);
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
			    ".scoringStrategy.type: \"Foo\" is not LeastAllocated, "
			    "MostAllocated or RequestedToCapacityRatio");

	/* JSON: no line table, the path alone. */
	const char *json = "{\"apiVersion\": \"kubescheduler.config.k8s.io/v1\","
			   " \"kind\": \"KubeSchedulerConfiguration\","
			   " \"profiles\": [{\"pluginConfig\": [{\"name\": "
			   "\"NodeResourcesFit\", \"args\": {\"scoringStrategy\":"
			   " {\"type\": \"Foo\"}}}]}]}";
	assert_int_equal(sched_config_load_buffer("sched.json", json, strlen(json),
						  &cfg, &res, strings, err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "sched.json: profiles[0].pluginConfig[0].args"
			    ".scoringStrategy.type: \"Foo\" is not LeastAllocated, "
			    "MostAllocated or RequestedToCapacityRatio");

	/* A short buffer gets a truncated, terminated message. */
	char tiny[12];
	assert_int_equal(sched_config_load_buffer("sched.json", json, strlen(json),
						  &cfg, &res, strings, tiny, sizeof(tiny)),
			 -EINVAL);
	assert_string_equal(tiny, "sched.json:");
	/* No buffer at all is allowed. */
	assert_int_equal(sched_config_load_buffer("sched.json", json, strlen(json),
						  &cfg, &res, strings, NULL, 0), -EINVAL);
}

/* A file's errors come together, one line each with file, line, path and
 * value, in file order; past SCHED_CONFIG_ERRORS_MAX they are counted. */
static void test_errors_reported_together(void **state)
{
	(void)state;
	struct sched_config cfg;
	struct res_names res;
	char err[4096];
	res_names_init(&res);
	assert_int_equal(load(HEAD "paralelism: 16\n"
			      "percentageOfNodesToScore: 101\n"
			      "profiles:\n- pluginConfig:\n"
			      "  - name: NodeResourcesFit\n    args:\n"
			      "      scoringStrategy:\n        type: Foo\n"
			      "        resources: [{name: cpu, weight: 0}, {name: cpu}]\n"
			      "  - name: InterPodAffinity\n    args:\n"
			      "      hardPodAffinityWeight: -1\n",
			      &cfg, &res, err, sizeof(err)), -EINVAL);
	assert_string_equal(err,
		"sched.yaml:3: paralelism: unknown field \"paralelism\"\n"
		"sched.yaml:4: percentageOfNodesToScore: 101 is not in 0..100\n"
		"sched.yaml:10: profiles[0].pluginConfig[0].args.scoringStrategy.type: "
		"\"Foo\" is not LeastAllocated, MostAllocated or "
		"RequestedToCapacityRatio\n"
		"sched.yaml:11: profiles[0].pluginConfig[0].args.scoringStrategy."
		"resources[1].name: \"cpu\" is listed twice\n"
		"sched.yaml:14: profiles[0].pluginConfig[1].args.hardPodAffinityWeight: "
		"-1 is not in 0..100");

	/* 25 unknown fields: 20 messages, then the count of the rest. */
	char text[2048];
	size_t n = (size_t)snprintf(text, sizeof(text), "%s", HEAD);
	for (int i = 0; i < 25; i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n, "typo%d: 1\n", i);
	assert_int_equal(load(text, &cfg, &res, err, sizeof(err)), -EINVAL);
	unsigned lines = 1;
	for (const char *c = err; *c; c++)
		lines += *c == '\n';
	assert_int_equal(lines, SCHED_CONFIG_ERRORS_MAX + 1);
	assert_non_null(strstr(err, "sched.yaml:3: typo0: unknown field \"typo0\"\n"));
	assert_non_null(strstr(err, "sched.yaml:22: typo19: unknown field"));
	assert_null(strstr(err, "typo20"));
	assert_non_null(strstr(err, "\n(and 5 more errors)"));
	assert_int_equal(res.count, RES_FIRST_NAMED);
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
#define SPREAD PROFILE "pluginConfig:\n  - name: PodTopologySpread\n    args:\n      "
#define AFFINITY PROFILE "pluginConfig:\n  - name: NodeAffinity\n    args:\n      "

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
	/* profiles (validation.go). */
	{HEAD "profiles: {}\n", -EINVAL, "profiles: {} is not a list"},
	{HEAD "profiles: [3]\n", -EINVAL, "profiles[0]: 3 is not a mapping"},
	{PROFILE "schedulerName: 3\n", -EINVAL,
	 "profiles[0].schedulerName: 3 is not a string"},
	{PROFILE "schedulerName: \"\"\n", -EINVAL,
	 "profiles[0].schedulerName: empty: a profile needs a schedulerName"},
	{PROFILE "frameworkName: x\n", -EINVAL,
	 "profiles[0].frameworkName: unknown field \"frameworkName\""},
	{HEAD "profiles:\n- schedulerName: a\n- percentageOfNodesToScore: 5\n",
	 -EINVAL, "sched.yaml:5: profiles[1].schedulerName: missing: every profile "
	 "of several needs its schedulerName"},
	{HEAD "profiles:\n- schedulerName: a\n- schedulerName: b\n"
	 "- schedulerName: a\n", -EINVAL,
	 "sched.yaml:6: profiles[2].schedulerName: \"a\" is profiles[0]'s "
	 "schedulerName too (kube-scheduler: Duplicate value)"},
	{HEAD "profiles:\n- schedulerName: a\n- schedulerName: b\n  plugins:\n"
	 "    queueSort:\n      enabled: [{name: PrioritySort}]\n", -EINVAL,
	 "profiles[1].plugins.queueSort: not profiles[0]'s: the queue sort must "
	 "be the same for all profiles"},
	{HEAD "profiles:\n"
	 "- {schedulerName: p0}\n- {schedulerName: p1}\n- {schedulerName: p2}\n"
	 "- {schedulerName: p3}\n- {schedulerName: p4}\n- {schedulerName: p5}\n"
	 "- {schedulerName: p6}\n- {schedulerName: p7}\n- {schedulerName: p8}\n"
	 "- {schedulerName: p9}\n- {schedulerName: pa}\n- {schedulerName: pb}\n"
	 "- {schedulerName: pc}\n- {schedulerName: pd}\n- {schedulerName: pe}\n"
	 "- {schedulerName: pf}\n- {schedulerName: pg}\n", -ENOSPC,
	 "profiles[16]: 17 profiles, at most 16 (SCHED_MAX_PROFILES)"},
	/* plugins: kube's merge and expansion, and what shmsched cannot
	 * turn off. */
	{PROFILE "plugins:\n    filter:\n      disabled: [{name: NodePorts}]\n",
	 -EINVAL, "sched.yaml:6: profiles[0].plugins.filter.disabled[0].name: "
	 "disables NodePorts at filter: shmsched always runs it there (turning it "
	 "off is not supported)"},
	{PROFILE "plugins:\n    multiPoint:\n      disabled: [{name: \"*\"}]\n"
	 "      enabled: [{name: PrioritySort}, {name: DefaultBinder},"
	 " {name: NodeName}]\n", -EINVAL,
	 "profiles[0].plugins.multiPoint.disabled[0].name: disables "
	 "SchedulingGates at preEnqueue"},
	{PROFILE "plugins:\n    multiPoint:\n      disabled: [{name: TaintToleration}]\n",
	 -EINVAL, "profiles[0].plugins.multiPoint.disabled[0].name: disables "
	 "TaintToleration at filter"},
	{PROFILE "plugins:\n    preScore:\n      disabled: [{name: TaintToleration}]\n",
	 -EINVAL, "profiles[0].plugins.preScore.disabled[0].name: disables "
	 "TaintToleration at preScore while its score runs: not supported by "
	 "shmsched"},
	{PROFILE "plugins:\n    bind:\n      disabled: [{name: DefaultBinder}]\n",
	 -EINVAL, "plugins.bind.disabled[0].name: disables DefaultBinder at bind"},
	{PROFILE "plugins:\n    queueSort:\n      disabled: [{name: \"*\"}]\n",
	 -EINVAL, "plugins.queueSort.disabled[0].name: disables PrioritySort"},
	{PROFILE "plugins:\n    filter:\n      enabled: [{name: NodeResourcesBalancedAllocation}]\n",
	 -EINVAL, "plugins.filter.enabled[0].name: plugin "
	 "\"NodeResourcesBalancedAllocation\" does not extend FilterPlugin"},
	{PROFILE "plugins:\n    multiPoint:\n      enabled: [{name: GpuBestFit},"
	 " {name: GpuBestFit}]\n", -EINVAL, "plugins.multiPoint.enabled[1].name: "
	 "plugin \"GpuBestFit\" already registered in multiPoint"},
	{PROFILE "plugins:\n    multiPoint:\n      enabled: [{name: EBSLimits}]\n",
	 -EINVAL, "multiPoint.enabled[0].name: \"EBSLimits\" was invalid in "
	 "version \"kubescheduler.config.k8s.io/v1\""},
	{PROFILE "plugins:\n    multiPoint:\n      enabled: [{name: Coscheduling}]\n",
	 -EINVAL, "\"Coscheduling\": no such plugin"},
	{PROFILE "plugins:\n    multiPoint:\n      enabled: [{name: \"*\"}]\n",
	 -EINVAL, "enabled[0].name: \"*\" may only be disabled"},
	{PROFILE "plugins:\n    multiPoint:\n      enabled: [{name: ImageLocality,"
	 " weight: 3}]\n", -EINVAL, "plugins.multiPoint.enabled[0].name: "
	 "ImageLocality with weight 3: shmsched does not compute this score"},
	{PROFILE "plugins:\n    fliter: {}\n", -EINVAL,
	 "profiles[0].plugins.fliter: unknown field \"fliter\""},
	{PROFILE "plugins: []\n", -EINVAL, "profiles[0].plugins: [] is not a mapping"},
	{SCORE "enable: []\n", -EINVAL,
	 "profiles[0].plugins.score.enable: unknown field \"enable\""},
	{SCORE "enabled: {}\n", -EINVAL, "score.enabled: {} is not a list"},
	{SCORE "enabled:\n      - name: ImageLocality\n        weight: 2\n",
	 -EINVAL, "sched.yaml:7: profiles[0].plugins.score.enabled[0].name: "
	 "ImageLocality with weight 2: shmsched does not compute this score (only "
	 "its default weight 1, or disabling it, is accepted)"},
	{SCORE "enabled:\n      - name: MyPlugin\n", -EINVAL,
	 "sched.yaml:7: profiles[0].plugins.score.enabled[0].name: \"MyPlugin\": "
	 "no such plugin (shmsched has kube-scheduler's in-tree plugins and "
	 "GpuBestFit, GpuFragmentation; out-of-tree plugins are not supported)"},
	{SCORE "enabled:\n      - name: gpuBestFit\n", -EINVAL,
	 "\"gpuBestFit\": no such plugin"},
	{SCORE "enabled:\n      - name: GpuBestFit\n        weight: 101\n", -ERANGE,
	 "score.enabled[0].weight: 101 is not in 0..100"},
	{SCORE "enabled: [{name: GpuFragmentation}, {name: GpuFragmentation,"
	 " weight: 2}]\n", -EINVAL,
	 "score.enabled[1].name: plugin \"GpuFragmentation\" already registered "
	 "as \"ScorePlugin\""},
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
	 "score.enabled[1].name: plugin \"NodeAffinity\" already registered as "
	 "\"ScorePlugin\""},
	{SCORE "enabled: [{weight: 2}]\n", -EINVAL,
	 "score.enabled[0].name: missing; expected a plugin name"},
	{SCORE "enabled: [{name: NodeAffinity, args: {}}]\n", -EINVAL,
	 "score.enabled[0].args: unknown field \"args\""},
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
	{PROFILE "pluginConfig:\n  - name: NodeResourcesFit\n"
	 "  - name: NodeResourcesFit\n", -EINVAL,
	 "pluginConfig[1].name: \"NodeResourcesFit\" is configured twice "
	 "(pluginConfig[0]; kube-scheduler: Duplicate value)"},
	{PROFILE "pluginConfig:\n  - args: {}\n", -EINVAL,
	 "pluginConfig[0].name: missing; expected a plugin name"},
	{PROFILE "pluginConfig:\n  - name: NodeResourcesFit\n    argz: {}\n", -EINVAL,
	 "pluginConfig[0].argz: unknown field \"argz\""},
	{PROFILE "pluginConfig:\n  - name: GCEPDLimits\n    args: {}\n", -EINVAL,
	 "pluginConfig[0].args.name: \"GCEPDLimits\" was invalid in version"},
	{PROFILE "pluginConfig:\n  - name: DefaultPreemption\n    args:\n"
	 "      minCandidateNodesPercentage: 0\n      minCandidateNodesAbsolute: 0\n",
	 -EINVAL, "pluginConfig[0].args: minCandidateNodesPercentage and "
	 "minCandidateNodesAbsolute cannot both be 0"},
	{PROFILE "pluginConfig:\n  - name: DefaultPreemption\n    args:\n"
	 "      minCandidateNodesPercentage: 101\n", -ERANGE,
	 "args.minCandidateNodesPercentage: 101 is not in 0..100"},
	{PROFILE "pluginConfig:\n  - name: VolumeBinding\n    args:\n"
	 "      bindTimeoutSeconds: -1\n", -ERANGE,
	 "args.bindTimeoutSeconds: -1 is not in 0.."},
	/* PodTopologySpreadArgs (ValidatePodTopologySpreadArgs). */
	{SPREAD "defaultingType: Sometimes\n", -EINVAL,
	 "args.defaultingType: \"Sometimes\" is not System or List"},
	{SPREAD "defaultConstraints:\n"
	 "      - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: ScheduleAnyway}\n",
	 -EINVAL, "args.defaultConstraints: given, but defaultingType is System: "
	 "kube-scheduler takes defaultConstraints only with defaultingType List"},
	{SPREAD "defaultingType: System\n      defaultConstraints:\n"
	 "      - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: ScheduleAnyway}\n",
	 -EINVAL, "args.defaultConstraints: given, but defaultingType is System"},
	{SPREAD "defaultingType: List\n      defaultConstraints:\n"
	 "      - {maxSkew: 0, topologyKey: zone, whenUnsatisfiable: ScheduleAnyway}\n",
	 -ERANGE, "defaultConstraints[0].maxSkew: 0 is not in 1..2147483647"},
	{SPREAD "defaultingType: List\n      defaultConstraints:\n"
	 "      - {maxSkew: 1, whenUnsatisfiable: ScheduleAnyway}\n",
	 -EINVAL, "defaultConstraints[0].topologyKey: missing: can not be empty"},
	{SPREAD "defaultingType: List\n      defaultConstraints:\n"
	 "      - {maxSkew: 1, topologyKey: \"-zone\", whenUnsatisfiable: DoNotSchedule}\n",
	 -EINVAL, "defaultConstraints[0].topologyKey: \"-zone\" is not a label name"},
	{SPREAD "defaultingType: List\n      defaultConstraints:\n"
	 "      - {maxSkew: 1, topologyKey: zone}\n",
	 -EINVAL, "defaultConstraints[0].whenUnsatisfiable: missing: can not be empty"},
	{SPREAD "defaultingType: List\n      defaultConstraints:\n"
	 "      - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: Never}\n",
	 -EINVAL, "\"Never\" is not DoNotSchedule or ScheduleAnyway"},
	{SPREAD "defaultingType: List\n      defaultConstraints:\n"
	 "      - maxSkew: 1\n        topologyKey: zone\n"
	 "        whenUnsatisfiable: DoNotSchedule\n"
	 "        labelSelector: {matchLabels: {app: x}}\n", -EINVAL,
	 "sched.yaml:12: profiles[0].pluginConfig[0].args.defaultConstraints[0]."
	 "labelSelector: forbidden: a default constraint must not define a "
	 "selector, as it is deduced for each pod"},
	{SPREAD "defaultingType: List\n      defaultConstraints:\n"
	 "      - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}\n"
	 "      - {maxSkew: 2, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}\n",
	 -EINVAL, "defaultConstraints[1]: the same topologyKey and "
	 "whenUnsatisfiable as defaultConstraints[0] (kube-scheduler: Duplicate "
	 "value)"},
	{SPREAD "defaultingType: List\n      defaultConstraints:\n"
	 "      - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule,"
	 " minDomains: 0}\n", -ERANGE, "defaultConstraints[0].minDomains: 0 is not "
	 "in 1.."},
	{SPREAD "defaultingType: List\n      defaultConstraints:\n"
	 "      - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule,"
	 " nodeTaintsPolicy: Always}\n", -EINVAL,
	 "defaultConstraints[0].nodeTaintsPolicy: \"Always\" is not Honor or Ignore"},
	{SPREAD "defaultingType: List\n      defaultConstraints:\n"
	 "      - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule,"
	 " maxSkw: 1}\n", -EINVAL,
	 "defaultConstraints[0].maxSkw: unknown field \"maxSkw\""},
	/* NodeAffinityArgs: addedAffinity read as a pod's node affinity. */
	{AFFINITY "addedAffinity:\n        requiredDuringSchedulingIgnoredDuringExecution:\n"
	 "          nodeSelectorTerms:\n          - matchExpressions:\n"
	 "            - {key: zone, operator: Near, values: [a]}\n", -EINVAL,
	 "profiles[0].pluginConfig[0].args.addedAffinity: "
	 "requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]."
	 "matchExpressions[0].operator: \"Near\""},
	{AFFINITY "addedAffinity:\n        requiredDuringSchedulingIgnoredDuringExecution:\n"
	 "          nodeSelectorTerms:\n          - matchExpressions:\n"
	 "            - {key: zone, operator: In, value: [a]}\n", -EINVAL,
	 "sched.yaml:11: profiles[0].pluginConfig[0].args.addedAffinity."
	 "requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]."
	 "matchExpressions[0].value: unknown field \"value\""},
	/* NewNodeSelector / NewPreferredSchedulingTerms (component-helpers
	 * nodeaffinity.go) refuse what labels.NewRequirement refuses, and
	 * NodeAffinity's New fails: a value that is not a valid label value. */
	{AFFINITY "addedAffinity:\n        requiredDuringSchedulingIgnoredDuringExecution:\n"
	 "          nodeSelectorTerms:\n          - matchExpressions:\n"
	 "            - {key: cores, operator: Gt, values: [\"-1\"]}\n", -EINVAL,
	 "args.addedAffinity: requiredDuringSchedulingIgnoredDuringExecution: a "
	 "requirement's value is not a valid label value (or, for Gt / Lt, not an "
	 "integer); kube-scheduler's NewNodeSelector refuses it"},
	{AFFINITY "addedAffinity:\n        preferredDuringSchedulingIgnoredDuringExecution:\n"
	 "        - weight: 1\n          preference:\n            matchExpressions:\n"
	 "            - {key: zone, operator: In, values: [\"a b\"]}\n", -EINVAL,
	 "matchExpressions[0].values[0]: \"a b\" does not parse as a requirement's "
	 "value (a valid label value)"},
	{AFFINITY "addedAffinity:\n        requiredDuringSchedulingRequiredDuringExecution: {}\n",
	 -EINVAL, "args.addedAffinity.requiredDuringSchedulingRequiredDuringExecution: "
	 "unknown field"},
	{AFFINITY "addedAffinity:\n        preferredDuringSchedulingIgnoredDuringExecution:\n"
	 "        - weight: 1\n          preferences: {}\n", -EINVAL,
	 "preferredDuringSchedulingIgnoredDuringExecution[0].preferences: unknown field"},
	{AFFINITY "addedAffinity: {}\n      addedAfinity: {}\n", -EINVAL,
	 "args.addedAfinity: unknown field \"addedAfinity\""},
	{AFFINITY "kind: NodeResourcesFitArgs\n", -EINVAL,
	 "args.kind: \"NodeResourcesFitArgs\" is not NodeAffinityArgs"},
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
	/* NodeResourcesFitArgs: the scoring strategy
	 * (ValidateNodeResourcesFitArgs, validateFunctionShape). */
	{STRATEGY "type: RequestedToCapacityRatio\n", -EINVAL,
	 "scoringStrategy.requestedToCapacityRatio: missing: required when type "
	 "is RequestedToCapacityRatio"},
	{STRATEGY "type: LeastAllocated\n        requestedToCapacityRatio: {}\n",
	 -EINVAL, "scoringStrategy.requestedToCapacityRatio: given, but type is "
	 "\"LeastAllocated\": kube-scheduler takes it only with "
	 "RequestedToCapacityRatio"},
	{STRATEGY "type: RequestedToCapacityRatio\n        requestedToCapacityRatio: {}\n",
	 -EINVAL, "requestedToCapacityRatio.shape: empty: at least one point must "
	 "be specified"},
	{STRATEGY "type: RequestedToCapacityRatio\n        requestedToCapacityRatio:\n"
	 "          shape: [{utilization: 0, score: 0}, {utilization: 80, score: 10},"
	 " {utilization: 80, score: 5}]\n", -EINVAL,
	 "requestedToCapacityRatio.shape[2].utilization: 80 is not more than the "
	 "point before's 80: values must be sorted in increasing order"},
	{STRATEGY "type: RequestedToCapacityRatio\n        requestedToCapacityRatio:\n"
	 "          shape: [{utilization: 0, score: 11}, {utilization: 101, score: 0}]\n",
	 -ERANGE, "shape[0].score: 11 is not in 0..10"},
	{STRATEGY "type: RequestedToCapacityRatio\n        requestedToCapacityRatio:\n"
	 "          shape: [{utilization: -1, score: 1}]\n",
	 -ERANGE, "shape[0].utilization: -1 is not in 0..100"},
	{STRATEGY "type: RequestedToCapacityRatio\n        requestedToCapacityRatio:\n"
	 "          shape: [{utilization: 10, score: 1.5}]\n",
	 -EINVAL, "shape[0].score: 1.5 is not an integer"},
	{STRATEGY "type: RequestedToCapacityRatio\n        requestedToCapacityRatio:\n"
	 "          shape: [{utilization: 10, scroe: 1}]\n",
	 -EINVAL, "shape[0].scroe: unknown field \"scroe\""},
	{STRATEGY "resources: [{name: cpu}]\n", -EINVAL,
	 "scoringStrategy.type: missing; expected LeastAllocated, MostAllocated or "
	 "RequestedToCapacityRatio"},
	{STRATEGY "type: leastallocated\n", -EINVAL,
	 "\"leastallocated\" is not LeastAllocated, MostAllocated or "
	 "RequestedToCapacityRatio"},
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
	 -EINVAL, "resources[0].unit: unknown field \"unit\""},
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
	 "args.shape: unknown field \"shape\""},
	{PROFILE "pluginConfig:\n  - name: NodeResourcesBalancedAllocation\n"
	 "    args:\n      resources: [{name: memory}, {name: memory}]\n", -EINVAL,
	 "args.resources[1].name: \"memory\" is listed twice"},
	/* The rest of the v1 type. */
	{HEAD "clientConnection:\n  kubeconfg: /x\n", -EINVAL,
	 "clientConnection.kubeconfg: unknown field \"kubeconfg\""},
	{HEAD "clientConnection:\n  burst: -1\n", -ERANGE,
	 "clientConnection.burst: -1 is not in 0.."},
	{HEAD "leaderElection:\n  leaderElect: true\n  resourceLock: endpoints\n",
	 -EINVAL, "leaderElection.resourceLock: \"endpoints\": resourceLock value "
	 "must be \"leases\""},
	{HEAD "leaderElection:\n  leaderElect: maybe\n", -EINVAL,
	 "leaderElection.leaderElect: \"maybe\" is not true or false"},
	{HEAD "healthzBindAddress: 10251\n", -EINVAL,
	 "healthzBindAddress: 10251 is not a string"},
};

/* Several profiles: each its name, percentage, plugins and args; a pod's
 * schedulerName picks one (sched_profile_of, "" is default-scheduler). */
static void test_profiles(void **state)
{
	(void)state;
	static struct sched_config cfg;
	struct res_names res;
	load_ok(HEAD "profiles:\n"
		"- schedulerName: default-scheduler\n"
		"- schedulerName: packer\n"
		"  percentageOfNodesToScore: 100\n"
		"  plugins:\n"
		"    score:\n"
		"      disabled: [{name: NodeResourcesBalancedAllocation}]\n"
		"      enabled: [{name: NodeResourcesFit, weight: 5}]\n"
		"  pluginConfig:\n"
		"  - name: NodeResourcesFit\n"
		"    args: {scoringStrategy: {type: MostAllocated}}\n"
		"- schedulerName: no-scores\n"
		"  plugins:\n"
		"    multiPoint:\n"
		"      disabled: [{name: TaintToleration}]\n"
		"      enabled: [{name: TaintToleration, weight: 0}]\n"
		"    score:\n"
		"      disabled: [{name: \"*\"}]\n", &cfg, &res);
	assert_int_equal(cfg.n_profiles, 3);
	struct sched_config want;
	sched_config_default(&want);
	/* The first is the default profile, byte for byte. */
	assert_memory_equal(&cfg.profiles[0], &want.profiles[0],
			    sizeof(cfg.profiles[0]));
	const struct score_config *packer = &cfg.profiles[1].score;
	assert_string_equal(cfg.profiles[1].scheduler_name, "packer");
	assert_int_equal(sched_profile_percentage(&cfg, 1), 100);
	assert_int_equal(packer->weight_fit, 5);
	assert_int_equal(packer->weight_balanced, 0);
	assert_int_equal(packer->weight_taint, 3);
	assert_int_equal(packer->fit_strategy, FIT_MOST_ALLOCATED);
	const struct score_config *none = &cfg.profiles[2].score;
	assert_int_equal(none->weight_taint + none->weight_affinity + none->weight_fit +
			 none->weight_balanced + none->weight_spread +
			 none->weight_inter_pod, 0);
	assert_int_equal(none->fit_strategy, FIT_LEAST_ALLOCATED);

	assert_int_equal(sched_profile_of(&cfg, "", 0), 0);
	assert_int_equal(sched_profile_of(&cfg, "default-scheduler", 17), 0);
	assert_int_equal(sched_profile_of(&cfg, "packer", 6), 1);
	assert_int_equal(sched_profile_of(&cfg, "no-scores", 9), 2);
	assert_int_equal(sched_profile_of(&cfg, "pack", 4), -1);
	assert_int_equal(sched_profile_of(&cfg, "volcano", 7), -1);
	assert_int_equal(sched_profile_of(NULL, "", 0), 0);
	assert_int_equal(sched_profile_of(NULL, "default-scheduler", 17), 0);
	assert_int_equal(sched_profile_of(NULL, "packer", 6), -1);

	/* Without default-scheduler among them, a pod that names none is
	 * another scheduler's. */
	load_ok(HEAD "profiles:\n- schedulerName: a\n- schedulerName: b\n", &cfg, &res);
	assert_int_equal(sched_profile_of(&cfg, "", 0), -1);
	assert_int_equal(sched_profile_of(&cfg, "b", 1), 1);
	/* One profile without a name is default-scheduler (defaults.go). */
	load_ok(HEAD "profiles:\n- percentageOfNodesToScore: 7\n", &cfg, &res);
	assert_string_equal(cfg.profiles[0].scheduler_name, "default-scheduler");
	/* The same queue sort in every profile, written the same: fine. */
	load_ok(HEAD "profiles:\n- schedulerName: a\n  plugins:\n    queueSort:\n"
		"      enabled: [{name: PrioritySort}]\n- schedulerName: b\n"
		"  plugins:\n    queueSort:\n      enabled: [{name: PrioritySort}]\n",
		&cfg, &res);
	assert_int_equal(cfg.n_profiles, 2);
}

/* multiPoint and the other extension points, merged as mergePluginSet
 * (apis/config/v1/default_plugins.go) and expanded as
 * expandMultiPointPlugins and getScoreWeights (framework/runtime/
 * framework.go) do; cases after TestMergePlugins (default_plugins_test.go)
 * and TestNewFrameworkMultiPointExpansion (framework_test.go). */
static void test_multi_point_and_extension_points(void **state)
{
	(void)state;
	static struct sched_config cfg, want;
	struct res_names res;
	sched_config_default(&want);

	/* "plugin expansion": a plugin enabled in multiPoint runs at every
	 * point it implements, with multiPoint's weight. */
	load_ok(PROFILE "plugins:\n    multiPoint:\n      enabled:\n"
		"      - {name: GpuBestFit, weight: 5}\n", &cfg, &res);
	assert_int_equal(cfg.profiles[0].score.weight_gpu_best_fit, 5);
	assert_int_equal(cfg.profiles[0].score.weight_taint, 3);

	/* A default re-enabled in multiPoint is replaced in place: its
	 * weight is the new one (0 or none is 1). */
	load_ok(PROFILE "plugins:\n    multiPoint:\n      enabled:\n"
		"      - {name: TaintToleration, weight: 7}\n"
		"      - {name: NodeAffinity}\n", &cfg, &res);
	assert_int_equal(cfg.profiles[0].score.weight_taint, 7);
	assert_int_equal(cfg.profiles[0].score.weight_affinity, 1);

	/* "Override MultiPoint plugins weights": a score entry wins over the
	 * multiPoint one, whichever comes first. */
	load_ok(PROFILE "plugins:\n    score:\n      enabled:\n"
		"      - {name: TaintToleration, weight: 9}\n"
		"    multiPoint:\n      enabled:\n"
		"      - {name: TaintToleration, weight: 7}\n", &cfg, &res);
	assert_int_equal(cfg.profiles[0].score.weight_taint, 9);

	/* A plugin disabled at one point keeps its others: score off, filter
	 * on (shmsched runs the filter regardless, so this loads). */
	load_ok(PROFILE "plugins:\n    score:\n      disabled: [{name: NodeAffinity}]\n",
		&cfg, &res);
	assert_int_equal(cfg.profiles[0].score.weight_affinity, 0);
	/* Disabled in multiPoint: every point. A score-only plugin may go. */
	load_ok(PROFILE "plugins:\n    multiPoint:\n"
		"      disabled: [{name: NodeResourcesBalancedAllocation},"
		" {name: InterPodAffinity}]\n"
		"      enabled: [{name: InterPodAffinity}]\n", &cfg, &res);
	assert_int_equal(cfg.profiles[0].score.weight_balanced, 0);
	/* ... unless enabled again, which appends it with its own weight. */
	assert_int_equal(cfg.profiles[0].score.weight_inter_pod, 1);

	/* The documentation's own pattern: every default listed again under
	 * multiPoint after disabling "*", with kube's weights. */
	load_ok(PROFILE "plugins:\n    multiPoint:\n      disabled: [{name: \"*\"}]\n"
		"      enabled:\n"
		"      - {name: SchedulingGates}\n      - {name: PrioritySort}\n"
		"      - {name: NodeUnschedulable}\n      - {name: NodeName}\n"
		"      - {name: TaintToleration, weight: 3}\n"
		"      - {name: NodeAffinity, weight: 2}\n      - {name: NodePorts}\n"
		"      - {name: NodeResourcesFit, weight: 1}\n"
		"      - {name: VolumeRestrictions}\n      - {name: NodeVolumeLimits}\n"
		"      - {name: VolumeBinding}\n      - {name: VolumeZone}\n"
		"      - {name: PodTopologySpread, weight: 2}\n"
		"      - {name: InterPodAffinity, weight: 2}\n"
		"      - {name: DefaultPreemption}\n"
		"      - {name: NodeResourcesBalancedAllocation, weight: 1}\n"
		"      - {name: ImageLocality, weight: 1}\n      - {name: DefaultBinder}\n",
		&cfg, &res);
	assert_memory_equal(&cfg, &want, sizeof(cfg));
	/* Re-stating defaults at the specific points changes nothing. */
	load_ok(PROFILE "plugins:\n"
		"    queueSort: {enabled: [{name: PrioritySort}]}\n"
		"    preEnqueue: {enabled: [{name: SchedulingGates}]}\n"
		"    filter: {enabled: [{name: NodePorts}, {name: NodeName}]}\n"
		"    bind: {enabled: [{name: DefaultBinder}]}\n"
		"    preScore: {enabled: [{name: TaintToleration}]}\n", &cfg, &res);
	assert_memory_equal(&cfg, &want, sizeof(cfg));
	/* Plugins shmsched does not run may be turned off anywhere: for the
	 * pods it places that changes nothing. */
	load_ok(PROFILE "plugins:\n"
		"    multiPoint:\n      disabled: [{name: VolumeBinding},"
		" {name: DefaultPreemption}, {name: DynamicResources},"
		" {name: ImageLocality}]\n"
		"    filter:\n      disabled: [{name: VolumeZone}, {name: EBSLimits}]\n"
		"    postFilter:\n      disabled: [{name: \"*\"}]\n", &cfg, &res);
	assert_memory_equal(&cfg, &want, sizeof(cfg));
	/* PreScore may go with its score. */
	load_ok(PROFILE "plugins:\n    multiPoint:\n      disabled:"
		" [{name: NodeResourcesBalancedAllocation}]\n"
		"    preScore:\n      disabled: [{name: NodeResourcesFit}]\n"
		"    score:\n      disabled: [{name: NodeResourcesFit}]\n", &cfg, &res);
	assert_int_equal(cfg.profiles[0].score.weight_fit, 0);
	assert_int_equal(cfg.profiles[0].score.weight_balanced, 0);
	/* score "*" skips the expansion at Score only. */
	load_ok(PROFILE "plugins:\n    score:\n      disabled: [{name: \"*\"}]\n"
		"      enabled: [{name: GpuFragmentation, weight: 4}]\n", &cfg, &res);
	const struct score_config *sc = &cfg.profiles[0].score;
	assert_int_equal(sc->weight_taint + sc->weight_affinity + sc->weight_fit +
			 sc->weight_balanced + sc->weight_spread +
			 sc->weight_inter_pod + sc->weight_gpu_best_fit, 0);
	assert_int_equal(sc->weight_gpu_frag, 4);
}

/* NodeResourcesFit with RequestedToCapacityRatio: its shape and resources
 * (the docs' bin-packing example, resource-bin-packing.md). */
static void test_requested_to_capacity_ratio(void **state)
{
	(void)state;
	struct sched_config cfg;
	struct res_names res;
	load_ok(PROFILE "pluginConfig:\n  - name: NodeResourcesFit\n    args:\n"
		"      scoringStrategy:\n        resources:\n"
		"        - {name: intel.com/foo, weight: 3}\n"
		"        - {name: intel.com/bar, weight: 3}\n"
		"        requestedToCapacityRatio:\n          shape:\n"
		"          - {utilization: 0, score: 0}\n"
		"          - {utilization: 100, score: 10}\n"
		"        type: RequestedToCapacityRatio\n", &cfg, &res);
	const struct score_config *sc = &cfg.profiles[0].score;
	assert_int_equal(sc->fit_strategy, FIT_REQUESTED_TO_CAPACITY_RATIO);
	assert_int_equal(sc->n_fit_resources, 2);
	assert_string_equal(res.name[sc->fit_resources[0].resource], "intel.com/foo");
	assert_int_equal(sc->fit_resources[1].weight, 3);
	assert_int_equal(sc->n_shape, 2);
	assert_int_equal(sc->shape[1].utilization, 100);
	assert_int_equal(sc->shape[1].score, 10);
	/* Absent resources: cpu and memory; one point is a shape. */
	load_ok(STRATEGY "type: RequestedToCapacityRatio\n"
		"        requestedToCapacityRatio: {shape: [{utilization: 50, score: 7}]}\n",
		&cfg, &res);
	assert_int_equal(cfg.profiles[0].score.n_fit_resources, 2);
	assert_int_equal(cfg.profiles[0].score.n_shape, 1);
	assert_int_equal(cfg.profiles[0].score.shape[0].score, 7);
}

/* PodTopologySpreadArgs with defaultingType List: the profile's own
 * constraints, each key interned. */
static void test_spread_default_constraints(void **state)
{
	(void)state;
	struct sched_config cfg;
	struct res_names res;
	load_ok(SPREAD "defaultingType: List\n      defaultConstraints:\n"
		"      - maxSkew: 1\n        topologyKey: topology.kubernetes.io/zone\n"
		"        whenUnsatisfiable: DoNotSchedule\n        minDomains: 3\n"
		"      - maxSkew: 4\n        topologyKey: kubernetes.io/hostname\n"
		"        whenUnsatisfiable: ScheduleAnyway\n"
		"        nodeAffinityPolicy: Ignore\n        nodeTaintsPolicy: Honor\n",
		&cfg, &res);
	const struct score_config *sc = &cfg.profiles[0].score;
	assert_int_equal(sc->spread_defaulting, SPREAD_DEFAULTING_LIST);
	assert_int_equal(sc->n_default_spread, 2);
	assert_string_equal(intern_str(strings, sc->default_spread[0].topology_key),
			    "topology.kubernetes.io/zone");
	assert_true(sc->default_spread[0].hard);
	assert_int_equal(sc->default_spread[0].max_skew, 1);
	assert_int_equal(sc->default_spread[0].min_domains, 3);
	assert_int_equal(sc->default_spread[0].node_affinity_policy, SPREAD_POLICY_HONOR);
	assert_int_equal(sc->default_spread[0].node_taints_policy, SPREAD_POLICY_IGNORE);
	assert_false(sc->default_spread[1].hard);
	assert_int_equal(sc->default_spread[1].max_skew, 4);
	assert_int_equal(sc->default_spread[1].min_domains, 1);
	assert_int_equal(sc->default_spread[1].node_affinity_policy, SPREAD_POLICY_IGNORE);
	assert_int_equal(sc->default_spread[1].node_taints_policy, SPREAD_POLICY_HONOR);
	/* List with none: no default spreading. */
	load_ok(SPREAD "defaultingType: List\n", &cfg, &res);
	assert_int_equal(cfg.profiles[0].score.n_default_spread, 0);
	assert_int_equal(cfg.profiles[0].score.spread_defaulting,
			 SPREAD_DEFAULTING_LIST);
}

/* NodeAffinityArgs.addedAffinity, read as a pod's node affinity. */
static void test_added_affinity(void **state)
{
	(void)state;
	struct sched_config cfg;
	struct res_names res;
	load_ok(AFFINITY "addedAffinity:\n"
		"        requiredDuringSchedulingIgnoredDuringExecution:\n"
		"          nodeSelectorTerms:\n          - matchExpressions:\n"
		"            - key: scheduler-profile\n              operator: In\n"
		"              values: [foo]\n"
		"        preferredDuringSchedulingIgnoredDuringExecution:\n"
		"        - weight: 7\n          preference:\n            matchExpressions:\n"
		"            - {key: zone, operator: NotIn, values: [a, b]}\n",
		&cfg, &res);
	const struct score_config *sc = &cfg.profiles[0].score;
	const struct pod_spec *a = &sc->added_affinity;
	assert_true(sc->has_added_affinity);
	assert_true(a->has_required);
	assert_int_equal(a->n_terms, 1);
	assert_int_equal(a->terms[0].n_exprs, 1);
	const struct sel_expr *e = &a->exprs[a->terms[0].first_expr];
	assert_string_equal(intern_str(strings, e->key), "scheduler-profile");
	assert_int_equal(e->op, SEL_IN);
	assert_int_equal(e->n_values, 1);
	assert_string_equal(intern_str(strings, a->values[e->first_value]), "foo");
	assert_int_equal(a->n_preferred, 1);
	assert_int_equal(a->preferred[0].weight, 7);
	e = &a->exprs[a->preferred[0].term.first_expr];
	assert_int_equal(e->op, SEL_NOT_IN);
	assert_int_equal(e->n_values, 2);
	/* Nothing but the affinity: no requests, group or selector. */
	assert_int_equal(a->n_selector + a->n_tolerations + a->n_ports, 0);
	assert_int_equal(a->group, 0);
	assert_int_equal(a->request.v[RES_CPU] + a->nonzero_cpu_milli, 0);
	/* An empty addedAffinity adds nothing. */
	load_ok(AFFINITY "addedAffinity: {}\n", &cfg, &res);
	assert_false(cfg.profiles[0].score.has_added_affinity);
}

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
	assert_int_equal(cfg.profiles[0].score.hard_pod_affinity_weight, 5);
	assert_true(cfg.profiles[0].score.ignore_preferred_terms_of_existing);
	assert_int_equal(cfg.profiles[0].score.spread_defaulting, SPREAD_DEFAULTING_LIST);
	load_ok(PROFILE "pluginConfig:\n  - name: PodTopologySpread\n    args:\n"
		"      defaultingType: System\n", &cfg, &res);
	assert_int_equal(cfg.profiles[0].score.spread_defaulting, SPREAD_DEFAULTING_SYSTEM);
	assert_int_equal(cfg.profiles[0].score.hard_pod_affinity_weight, 1);
	/* GpuFragmentationArgs: the defaults, then both set. */
	assert_int_equal(cfg.profiles[0].score.gpu_frag_max_shapes, SCORE_GPU_FRAG_MAX_SHAPES);
	assert_int_equal(cfg.profiles[0].score.gpu_frag_model_reservation, 0);
	assert_false(cfg.profiles[0].score.gpu_frag_cpu_limited);
	load_ok(PROFILE "pluginConfig:\n  - name: GpuFragmentation\n    args:\n"
		"      kind: GpuFragmentationArgs\n"
		"      maxShapes: 64\n      modelReservation: 150\n"
		"      cpuLimited: true\n", &cfg, &res);
	assert_int_equal(cfg.profiles[0].score.gpu_frag_max_shapes, 64);
	assert_int_equal(cfg.profiles[0].score.gpu_frag_model_reservation, 150);
	assert_true(cfg.profiles[0].score.gpu_frag_cpu_limited);
}

/* Every refusal says what and where, and changes neither the config nor
 * the registry (registrations made before the error are undone). */
static void test_refusals(void **state)
{
	(void)state;
	unsigned bad = 0;
	for (size_t i = 0; i < sizeof(refusals) / sizeof(refusals[0]); i++) {
		const struct refusal *r = &refusals[i];
		static struct sched_config cfg, before;
		struct res_names res, res_before;
		char err[2048];
		memset(&cfg, 0x77, sizeof(cfg));
		memcpy(&before, &cfg, sizeof(cfg));
		res_names_init(&res);
		memcpy(&res_before, &res, sizeof(res));
		uint32_t strings_before = intern_count(strings);
		int rc = load(r->text, &cfg, &res, err, sizeof(err));
		if (rc != r->rc || strstr(err, r->message) == NULL) {
			print_message("refusal %zu: rc %d (want %d), message\n  %s\n"
				      "want it to contain\n  %s\n", i, rc, r->rc, err,
				      r->message);
			bad++;
			continue;
		}
		assert_int_equal(intern_count(strings), strings_before);
		assert_memory_equal(&cfg, &before, sizeof(cfg));
		assert_memory_equal(&res, &res_before, sizeof(res));
	}
	assert_int_equal(bad, 0);
}

static void test_bad_arguments(void **state)
{
	(void)state;
	struct sched_config cfg;
	struct res_names res;
	char err[128];
	res_names_init(&res);
	assert_int_equal(sched_config_load_buffer("x", NULL, 3, &cfg, &res, strings, err,
						  sizeof(err)), -EINVAL);
	assert_int_equal(sched_config_load_buffer("x", HEAD, strlen(HEAD), NULL,
						  &res, strings, err, sizeof(err)), -EINVAL);
	assert_int_equal(sched_config_load_buffer("x", HEAD, strlen(HEAD), &cfg,
						  NULL, strings, err, sizeof(err)), -EINVAL);
	assert_int_equal(sched_config_load(NULL, &cfg, &res, strings, err, sizeof(err)),
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
							  strings,
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
							  strings,
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
		cmocka_unit_test(test_errors_reported_together),
		cmocka_unit_test(test_profiles),
		cmocka_unit_test(test_multi_point_and_extension_points),
		cmocka_unit_test(test_requested_to_capacity_ratio),
		cmocka_unit_test(test_spread_default_constraints),
		cmocka_unit_test(test_added_affinity),
		cmocka_unit_test(test_production_files_load),
		cmocka_unit_test(test_bad_arguments),
		cmocka_unit_test(test_truncations_and_overwrites),
		cmocka_unit_test(test_deep_nesting),
	};
	strings = intern_create();
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	intern_destroy(strings);
	return rc;
}
