/* The pods of a benchmark run, reproducible from a seed: a set of templates
 * (Pod JSON, registered once per producer) and, for pod k of the stream, a
 * template and extra requests. Both the producers (through the daemon) and
 * the in-process baselines (bench/quality.h) place the same stream.
 *
 * The default mix is modelled on fleets where most pods come from a few
 * dozen deployments: WORKLOAD_TEMPLATES templates drawn with a skewed
 * (Zipf-like) popularity, requests from small to large, a share with a
 * nodeSelector or required node affinity, a share with tolerations for the
 * dedicated pools, a share with preferred affinity; and a share of pods
 * made unique by an extra cpu/memory request on top of their template.
 *
 * A file workload (--workload FILE: Kubernetes JSON, a Pod, a List of Pods
 * or one Pod per line) makes each distinct pod a template; the stream
 * cycles over the file's pods in order, with no extras.
 */
#ifndef SHMSCHED_BENCH_WORKLOAD_H
#define SHMSCHED_BENCH_WORKLOAD_H

#include <stddef.h>
#include <stdint.h>

#define WORKLOAD_TEMPLATES 40
#define WORKLOAD_MAX_EXTRA 2

enum workload_resource {
	WORKLOAD_CPU = 0,    /* milli-cpu */
	WORKLOAD_MEMORY = 1, /* bytes */
};

struct workload_extra {
	uint8_t resource; /* enum workload_resource */
	int64_t amount;
};

struct workload_pod {
	uint32_t template_idx; /* index into workload.template_json */
	uint16_t n_extra;
	struct workload_extra extra[WORKLOAD_MAX_EXTRA];
};

struct workload {
	uint64_t seed;
	uint32_t n_templates;
	char **template_json;   /* [n_templates], NUL-terminated Pod JSON */
	size_t *template_len;   /* [n_templates] */
	/* File workloads: the stream's template indices in order. */
	uint32_t *order;
	uint64_t n_order;
	double unique_share;    /* default mix: share of pods with extras */
	/* Default mix: template i is drawn for u < popularity_cdf[i] (u
	 * uniform in [0, 2^53)); NULL for file workloads. */
	uint64_t *popularity_cdf;
	/* [n_templates]: "namespace/name" of the pod a template came from,
	 * for messages about it. */
	char **template_name;
	char *source;           /* the file, or "the default mix" */
};

/* The default mix for `seed`. Returns 0, or -ENOMEM with a message. */
int workload_default(struct workload *w, uint64_t seed, char *err, size_t err_len);

/* Loads a file workload. Returns 0, or a negative errno with a message
 * naming the file (and the object and field for bad pods). Pods whose JSON
 * differs only in metadata.name / generateName / uid share a template;
 * at most WORKLOAD_FILE_TEMPLATES_MAX distinct ones (the daemon's
 * templates per producer). The daemon checks the pods themselves when
 * producers register them (engine_run reports its refusal by pod). */
#define WORKLOAD_FILE_TEMPLATES_MAX 4096
int workload_load(struct workload *w, const char *path, char *err, size_t err_len);

/* Pod k of the stream: a pure function of (w, k), so producers can each
 * compute their share without coordination. */
void workload_pod(const struct workload *w, uint64_t k, struct workload_pod *out);

void workload_free(struct workload *w);

#endif
