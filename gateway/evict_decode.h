/* The bodies of the gateway's eviction and drain routes (issue 38), read
 * as text only (no I/O, no daemon) so the fuzz target
 * (tests/fuzz/fuzz_evict_decode.c) and the unit tests drive them.
 *
 * POST /api/v1/namespaces/{ns}/pods/{name}/eviction takes a policy/v1
 * Eviction, as kube-apiserver's eviction subresource does
 * (kubernetes/kubernetes pkg/registry/core/pod/storage/eviction.go,
 * EvictionREST.Create):
 *   {"apiVersion":"policy/v1","kind":"Eviction",
 *    "metadata":{"name":NAME,"namespace":NS},
 *    "deleteOptions":{"dryRun":["All"], ...}}
 * apiVersion policy/v1 or policy/v1beta1 (AcceptsGroupVersion), or none;
 * kind Eviction, or none; metadata.name must be the URL's name ("name in
 * URL does not match name in Eviction object", 400); metadata.namespace,
 * when given, the URL's namespace; deleteOptions.dryRun a list of "All"
 * (a dry run) or empty. Other deleteOptions (gracePeriodSeconds,
 * preconditions, propagationPolicy) are accepted and not used: a
 * placement has no grace period here.
 *
 * POST /v1/nodes/{name}/drain takes the flags of `shmsched node drain`
 * (and kubectl drain's), every member optional, no other member:
 *   {"timeoutSeconds":N, "dryRun":BOOL, "force":BOOL, "podSelector":SEL}
 * timeoutSeconds 0..GW_DRAIN_TIMEOUT_MAX (0, the default: until done, as
 * kubectl's --timeout=0); podSelector at most GW_DRAIN_SELECTOR_MAX bytes
 * (its syntax is the daemon's to judge). An empty body is every default.
 *
 * Both: at most GW_EVICT_BODY_MAX bytes, one JSON object, nothing after.
 * Errors are -EINVAL with a message naming the field, what it holds and
 * what was expected (the Status's message of a 400).
 */
#ifndef SHMSCHED_GATEWAY_EVICT_DECODE_H
#define SHMSCHED_GATEWAY_EVICT_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GW_EVICT_BODY_MAX (16u << 10)  /* bytes of either body */
#define GW_DRAIN_SELECTOR_MAX 1024u    /* OP_DRAIN_SELECTOR_MAX */
#define GW_DRAIN_TIMEOUT_MAX 604800u   /* seconds: a week */

struct gw_eviction {
	bool dry_run; /* deleteOptions.dryRun: ["All"] */
};

/* Decodes an Eviction body for the pod ns/name of the URL. 0, or -EINVAL
 * with why (a 400). */
int gw_eviction_decode(const char *body, size_t len, const char *ns,
		       const char *name, struct gw_eviction *out, char *err,
		       size_t err_len);

struct gw_drain_req {
	uint32_t timeout_s;   /* 0: until done */
	bool dry_run;
	bool force;
	bool surge;           /* each pod's replacement placed first */
	char selector[GW_DRAIN_SELECTOR_MAX + 1]; /* "": every pod */
};

/* Decodes a drain body (len 0: the defaults). 0, or -EINVAL with why. */
int gw_drain_decode(const char *body, size_t len, struct gw_drain_req *out,
		    char *err, size_t err_len);

#endif
