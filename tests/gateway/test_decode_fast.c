/* gateway/decode.c's fast path (its spec cache) and gateway/json_scan.c.
 *
 * The oracle is the full path itself: gw_decode_pods with no_spec_cache
 * (jansson on every value, as before the cache). Every body, the fuzz
 * corpus's (the folder named on the command line) and the made-up ones
 * below, is decoded by the oracle and twice through the cache (the first
 * may fill it, the second hits it) under Strict, Warn and Ignore: the
 * results must be equal, the error text byte for byte and the batch down
 * to each key's JSON text. The made-up bodies share one spec, primed
 * first, so that each bad metadata or shape really meets a cache hit;
 * test_hits checks that the good ones were taken by the fast path.
 * Then: a cache that ignored a difference (one spec byte, apiVersion)
 * would give the wrong key or accept an unknown field; the bounds (slots,
 * bytes, an entry's size, depth); a thread's cache its own and freed
 * with it; a hit's batch holding the entry's own tree (GP1), which
 * outlives the cache and may be read and freed in another thread while
 * the cache's thread goes on decoding; and the scanner against jansson
 * on valid and invalid JSON. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <dirent.h>
#include <pthread.h>

#include <cmocka.h>

#include "base/base.h"
#include "gateway/decode.h"
#include "gateway/json_scan.h"
#include "policy/policy.h"

static const char *corpus_dir;

#define SPEC "{\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":" \
	"{\"cpu\":\"10m\",\"memory\":\"16Mi\"}}}]}"

/* Fails the test naming `what` unless two decodes gave the same result. */
static void expect_same(const char *what, size_t len, int rc1, const char *e1,
			const struct gw_batch *a, int rc2, const char *e2,
			const struct gw_batch *b)
{
	if (rc1 != rc2 || (rc1 < 0 && strcmp(e1, e2) != 0))
		fail_msg("%.*s: oracle rc %d \"%s\", fast path rc %d \"%s\"",
			 (int)(len < 120 ? len : 120), what, rc1, e1, rc2, e2);
	if (rc1 < 0)
		return;
	assert_int_equal(a->n_pods, b->n_pods);
	assert_int_equal(a->n_specs, b->n_specs);
	assert_int_equal(a->n_warnings, b->n_warnings);
	assert_int_equal(a->n_warnings_total, b->n_warnings_total);
	for (size_t i = 0; i < a->n_warnings; i++)
		assert_string_equal(a->warnings[i], b->warnings[i]);
	for (size_t i = 0; i < a->n_pods; i++) {
		assert_string_equal(gw_pod_name(a, &a->pods[i]), gw_pod_name(b, &b->pods[i]));
		assert_true(a->pods[i].cookie == b->pods[i].cookie);
		assert_int_equal(a->pods[i].spec, b->pods[i].spec);
		assert_int_equal(a->pods[i].first_warning, b->pods[i].first_warning);
		assert_int_equal(a->pods[i].n_warnings, b->pods[i].n_warnings);
	}
	for (size_t s = 0; s < a->n_specs; s++) {
		assert_true(a->specs[s].hash == b->specs[s].hash);
		assert_string_equal(a->specs[s].where, b->specs[s].where);
		/* The template's text: what the daemon would be sent. */
		char *ta = json_dumps(a->specs[s].canon, JSON_COMPACT);
		char *tb = json_dumps(b->specs[s].canon, JSON_COMPACT);
		assert_non_null(ta);
		assert_non_null(tb);
		if (strcmp(ta, tb) != 0)
			fail_msg("%.*s: key %s, fast path %s", (int)(len < 120 ? len : 120),
				 what, ta, tb);
		free(ta);
		free(tb);
	}
}

/* The oracle, then the cached path twice, under every field validation. */
static void compare(const char *body, size_t len)
{
	for (int fv = 0; fv < 3; fv++) {
		struct gw_limits full = {.max_pods = 100, .max_specs = 8,
					 .field_validation = fv, .no_spec_cache = true};
		struct gw_limits fast = full;
		fast.no_spec_cache = false;
		for (int round = 0; round < 2; round++) {
			struct gw_batch a, b;
			char e1[1024] = "", e2[1024] = "";
			int rc1 = gw_decode_pods(body, len, &full, &a, e1, sizeof(e1));
			int rc2 = gw_decode_pods(body, len, &fast, &b, e2, sizeof(e2));
			expect_same(body, len, rc1, e1, &a, rc2, e2, &b);
			gw_batch_free(&a);
			gw_batch_free(&b);
		}
	}
}

static void compare_str(const char *body)
{
	compare(body, strlen(body));
}

/* Bodies whose spec is SPEC, primed first: each meets a cache hit. */
static const char *const same_spec[] = {
	/* good */
	"{\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\"},\"spec\":" SPEC "}",
	"{\"metadata\":{\"name\":\"a\",\"namespace\":\"ns\"},\"spec\":" SPEC "}\n",
	"{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"b\","
	"\"labels\":{\"app\":\"web\",\"tier\":\"1\"}},\"spec\":" SPEC "}",
	"{\"spec\":" SPEC ",\"metadata\":{\"annotations\":{\"x\":\"y\"},\"name\":\"c\"}}",
	"  {\"kind\":\"Pod\",\"metadata\":{\"name\":\"d\"},\"spec\":" SPEC "}\n"
	"{\"kind\":\"Pod\",\"metadata\":{\"name\":\"e\"},\"spec\":" SPEC "}\n",
	"{\"kind\":\"Pod\",\"metadata\":{\"name\":\"caf\xc3\xa9\"},\"spec\":" SPEC "}",
	"{\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\",\"uid\":\"u-1\"},\"spec\":" SPEC "}",
	"{\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\",\"labels\":null},\"spec\":" SPEC "}",
	/* metadata: unknown field, wrong types, names refused */
	"{\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\",\"nmae\":\"x\"},\"spec\":" SPEC "}",
	"{\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\",\"labels\":{\"k\":{\"deep\":\"x\"}}},"
	"\"spec\":" SPEC "}",
	"{\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\",\"labels\":[]},\"spec\":" SPEC "}",
	"{\"kind\":\"Pod\",\"metadata\":{\"name\":5},\"spec\":" SPEC "}",
	"{\"kind\":\"Pod\",\"metadata\":{},\"spec\":" SPEC "}",
	"{\"kind\":\"Pod\",\"metadata\":{\"name\":\"\"},\"spec\":" SPEC "}",
	"{\"kind\":\"Pod\",\"metadata\":{\"name\":\"a/b\"},\"spec\":" SPEC "}",
	"{\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\\u0001\"},\"spec\":" SPEC "}",
	"{\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\\u0000\"},\"spec\":" SPEC "}",
	"{\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\",\"namespace\":\"n/s\"},\"spec\":" SPEC "}",
	"{\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\",\"generation\":99999999999999999999999},"
	"\"spec\":" SPEC "}",
	"{\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\",\"generation\":1e999},\"spec\":" SPEC "}",
	/* duplicate keys: in metadata, in labels, at the top */
	"{\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\",\"name\":\"b\"},\"spec\":" SPEC "}",
	"{\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\",\"labels\":{\"k\":\"1\",\"k\":\"2\"}},"
	"\"spec\":" SPEC "}",
	"{\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\"},\"spec\":" SPEC ",\"spec\":" SPEC "}",
	"{\"kind\":\"Pod\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\"},\"spec\":" SPEC "}",
	/* bad UTF-8: overlong, a surrogate, a lone continuation byte, past U+10FFFF */
	"{\"kind\":\"Pod\",\"metadata\":{\"name\":\"\xc0\xaf\"},\"spec\":" SPEC "}",
	"{\"kind\":\"Pod\",\"metadata\":{\"name\":\"\xed\xa0\x80\"},\"spec\":" SPEC "}",
	"{\"kind\":\"Pod\",\"metadata\":{\"name\":\"\x80\"},\"spec\":" SPEC "}",
	"{\"kind\":\"Pod\",\"metadata\":{\"name\":\"\xf4\x90\x80\x80\"},\"spec\":" SPEC "}",
	"{\"kind\":\"Pod\",\"metadata\":{\"name\":\"\\ud800\"},\"spec\":" SPEC "}",
	"{\"apiVersion\":\"v\xff\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\"},\"spec\":" SPEC "}",
	/* deep nesting in metadata */
	"{\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\",\"annotations\":{\"x\":[[[[[[[[[[[[[["
	"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["
	"]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]"
	"]]]]]]]]]]]]]]}},\"spec\":" SPEC "}",
	/* shapes: kind, an extra member, not an object, trailing bytes, cut */
	"{\"kind\":\"List\",\"metadata\":{\"name\":\"a\"},\"spec\":" SPEC "}",
	"{\"kind\":\"PodList\",\"items\":[],\"spec\":" SPEC "}",
	"{\"kind\":\"Pdo\",\"metadata\":{\"name\":\"a\"},\"spec\":" SPEC "}",
	"{\"kind\":null,\"metadata\":{\"name\":\"a\"},\"spec\":" SPEC "}",
	"{\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\"},\"spec\":" SPEC ",\"status\":{}}",
	"{\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\"},\"spec\":" SPEC ",\"bogus\":1}",
	"{\"kind\":\"Pod\",\"metadata\":null,\"spec\":" SPEC "}",
	"{\"kind\":\"Pod\",\"metadata\":\"x\",\"spec\":" SPEC "}",
	"{\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\"},\"spec\":" SPEC "}x",
	"{\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\"},\"spec\":" SPEC "}\n{",
	"{\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\"},\"spec\":" SPEC,
	"{\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\"},\"spec\":" SPEC "}\n"
	"{\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\"},\"spec\":" SPEC "}",
	"{\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\"},\"sp\\u0065c\":" SPEC "}",
	"{\"apiVersion\":\"v1\\u0000\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\"},"
	"\"spec\":" SPEC "}",
	"{\"apiVersion\":7,\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\"},\"spec\":" SPEC "}",
};

/* Bodies of other specs: unknown fields, duplicates, numbers. */
static const char *const other[] = {
	"{\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\"},\"spec\":{\"nodeSelectr\":{}}}",
	"{\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\"},\"spec\":{\"containers\":[],"
	"\"containers\":[]}}",
	"{\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\"},\"spec\":{\"priority\":"
	"123456789012345678901234567890}}",
	"{\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\"},\"spec\":{\"priority\":1.5e3}}",
	"{\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\"},\"spec\":{\"nodeName\":\"\\u00e9\\ud83d\\ude00\"}}",
	"{\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\"},\"spec\":{\"nodeName\":\"\xc3\"}}",
	"{\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\"},\"spec\":[]}",
	"{\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\"},\"spec\":null}",
	"{\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\"}}",
	"{\"apiVersion\":\"v2\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\"},\"spec\":"
	"{\"nodeSelectr\":{}}}",
	"{\"apiVersion\":\"\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\"},\"spec\":"
	"{\"nodeSelectr\":{}}}",
	"{\"kind\":\"List\",\"items\":[{\"metadata\":{\"name\":\"a\"},\"spec\":" SPEC "}]}",
	"",
	"   \n",
	"[]",
	"7",
};

static void test_equal_to_full_path(void **state)
{
	(void)state;
	gw_spec_cache_clear();
	for (size_t i = 0; i < sizeof(same_spec) / sizeof(same_spec[0]); i++)
		compare_str(same_spec[i]);
	for (size_t i = 0; i < sizeof(other) / sizeof(other[0]); i++)
		compare_str(other[i]);
	/* And again, now that every cacheable spec is in. */
	for (size_t i = 0; i < sizeof(same_spec) / sizeof(same_spec[0]); i++)
		compare_str(same_spec[i]);
	for (size_t i = 0; i < sizeof(other) / sizeof(other[0]); i++)
		compare_str(other[i]);
}

/* The fuzz corpus of the decoder, every file, and each file's every
 * prefix (a cut body after a hit). */
static void test_corpus(void **state)
{
	(void)state;
	assert_non_null(corpus_dir);
	DIR *dir = opendir(corpus_dir);
	assert_non_null(dir);
	struct dirent *de;
	int files = 0;
	while ((de = readdir(dir)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		char path[4096];
		snprintf(path, sizeof(path), "%s/%s", corpus_dir, de->d_name);
		FILE *f = fopen(path, "rb");
		assert_non_null(f);
		static char buf[1 << 16];
		size_t n = fread(buf, 1, sizeof(buf), f);
		fclose(f);
		compare(buf, n);
		for (size_t k = 0; k < n && n < 2048; k += 7)
			compare(buf, k);
		files++;
	}
	closedir(dir);
	assert_true(files >= 10);
}

/* The good bodies were taken by the fast path: hits counted. */
static void test_hits(void **state)
{
	(void)state;
	gw_spec_cache_clear();
	const struct gw_limits lim = {.max_pods = 100, .max_specs = 8};
	char err[512];
	struct gw_batch b;
	struct gw_spec_cache_stats st;
	/* A spec is cached the second time it is missed. */
	for (int round = 0; round < 2; round++) {
		assert_int_equal(gw_decode_pods(same_spec[0], strlen(same_spec[0]), &lim,
						&b, err, sizeof(err)), 0);
		gw_batch_free(&b);
		gw_spec_cache_stats(&st);
		assert_int_equal(st.entries, (size_t)round);
	}
	assert_int_equal(st.hits, 0);
	for (size_t i = 0; i < 8; i++) {
		const char *body = same_spec[i];
		assert_int_equal(gw_decode_pods(body, strlen(body), &lim, &b, err,
						sizeof(err)), 0);
		gw_batch_free(&b);
	}
	gw_spec_cache_stats(&st);
	/* same_spec[4] holds two pods; same_spec[2]'s apiVersion makes a key
	 * of its own (a miss, remembered), as the first two decodes were. */
	assert_int_equal(st.hits, 8);
	assert_int_equal(st.misses, 3);
	assert_int_equal(st.entries, 1);
	/* The oracle leaves the cache alone. */
	const struct gw_limits full = {.max_pods = 100, .max_specs = 8,
				       .no_spec_cache = true};
	assert_int_equal(gw_decode_pods(same_spec[0], strlen(same_spec[0]), &full, &b,
					err, sizeof(err)), 0);
	gw_batch_free(&b);
	struct gw_spec_cache_stats st2;
	gw_spec_cache_stats(&st2);
	assert_true(st2.hits == st.hits && st2.misses == st.misses);
}

/* A cache that ignored a difference would be caught: one byte of the
 * spec, or the apiVersion (which decides whether fields are checked). */
static void test_differences(void **state)
{
	(void)state;
	gw_spec_cache_clear();
	const struct gw_limits lim = {.max_pods = 100, .max_specs = 8};
	char err[512] = "";
	struct gw_batch b;
	const char *a = "{\"metadata\":{\"name\":\"a\"},\"spec\":{\"nodeName\":\"n1\"}}";
	const char *c = "{\"metadata\":{\"name\":\"a\"},\"spec\":{\"nodeName\":\"n2\"}}";
	for (int round = 0; round < 3; round++) {
		assert_int_equal(gw_decode_pods(a, strlen(a), &lim, &b, err, sizeof(err)), 0);
		assert_string_equal(json_string_value(json_object_get(json_object_get(
			b.specs[0].canon, "spec"), "nodeName")), "n1");
		uint64_t ha = b.specs[0].hash;
		gw_batch_free(&b);
		assert_int_equal(gw_decode_pods(c, strlen(c), &lim, &b, err, sizeof(err)), 0);
		assert_string_equal(json_string_value(json_object_get(json_object_get(
			b.specs[0].canon, "spec"), "nodeName")), "n2");
		assert_true(b.specs[0].hash != ha);
		gw_batch_free(&b);
	}
	/* apiVersion v2: no type in the table, fields not checked (cached);
	 * v1, the same spec bytes: the unknown field refused. */
	const char *v2 = "{\"apiVersion\":\"v2\",\"metadata\":{\"name\":\"a\"},"
		"\"spec\":{\"nodeSelectr\":{}}}";
	const char *v1 = "{\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"a\"},"
		"\"spec\":{\"nodeSelectr\":{}}}";
	const char *none = "{\"metadata\":{\"name\":\"a\"},\"spec\":{\"nodeSelectr\":{}}}";
	for (int round = 0; round < 3; round++) {
		assert_int_equal(gw_decode_pods(v2, strlen(v2), &lim, &b, err, sizeof(err)), 0);
		gw_batch_free(&b);
		assert_int_equal(gw_decode_pods(v1, strlen(v1), &lim, &b, err, sizeof(err)),
				 -EINVAL);
		assert_non_null(strstr(err, "spec.nodeSelectr: unknown field"));
		gw_batch_free(&b);
		assert_int_equal(gw_decode_pods(none, strlen(none), &lim, &b, err,
						sizeof(err)), -EINVAL);
		gw_batch_free(&b);
	}
	struct gw_spec_cache_stats st;
	gw_spec_cache_stats(&st);
	assert_true(st.hits >= 3); /* a, c and v2 the third time */
}

/* Bounds: at most GW_SPEC_CACHE_SLOTS entries, none over
 * GW_SPEC_CACHE_ENTRY_MAX bytes (such a spec is decoded, never cached);
 * values nested past the scanner's bound take the full path. */
static void test_bounds(void **state)
{
	(void)state;
	gw_spec_cache_clear();
	const struct gw_limits lim = {.max_pods = 100, .max_specs = 8};
	char err[512];
	struct gw_batch b;
	char body[256];
	for (unsigned i = 0; i < 4 * GW_SPEC_CACHE_SLOTS; i++) {
		int n = snprintf(body, sizeof(body), "{\"metadata\":{\"name\":\"p\"},"
				 "\"spec\":{\"nodeName\":\"n%u\"}}", i);
		for (int round = 0; round < 2; round++) {
			assert_int_equal(gw_decode_pods(body, (size_t)n, &lim, &b, err,
							sizeof(err)), 0);
			gw_batch_free(&b);
		}
	}
	struct gw_spec_cache_stats st;
	gw_spec_cache_stats(&st);
	assert_true(st.entries <= GW_SPEC_CACHE_SLOTS);
	assert_true(st.entries > GW_SPEC_CACHE_SLOTS / 2);
	assert_true(st.bytes <= (size_t)GW_SPEC_CACHE_SLOTS * GW_SPEC_CACHE_ENTRY_MAX);
	assert_int_equal(st.inserts, 4 * GW_SPEC_CACHE_SLOTS);

	/* A spec one byte over the entry bound: decoded, not cached. */
	gw_spec_cache_clear();
	size_t big_len = GW_SPEC_CACHE_ENTRY_MAX + 200;
	char *big = malloc(big_len);
	assert_non_null(big);
	const char *head = "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"nodeName\":\"";
	size_t spec_len = GW_SPEC_CACHE_ENTRY_MAX + 1; /* {"nodeName":"x..."} */
	size_t fill = spec_len - strlen("{\"nodeName\":\"\"}");
	size_t n = (size_t)snprintf(big, big_len, "%s", head);
	memset(big + n, 'x', fill);
	n += fill;
	n += (size_t)snprintf(big + n, big_len - n, "\"}}");
	for (int round = 0; round < 2; round++) {
		assert_int_equal(gw_decode_pods(big, n, &lim, &b, err, sizeof(err)), 0);
		gw_batch_free(&b);
	}
	gw_spec_cache_stats(&st);
	assert_int_equal(st.entries, 0);
	assert_int_equal(st.inserts, 0);
	/* One byte less: cached (the second time), then found. */
	memmove(big + n - 4, big + n - 3, 3);
	n--;
	for (int round = 0; round < 3; round++) {
		assert_int_equal(gw_decode_pods(big, n, &lim, &b, err, sizeof(err)), 0);
		gw_batch_free(&b);
	}
	gw_spec_cache_stats(&st);
	assert_int_equal(st.entries, 1);
	assert_int_equal(st.bytes, GW_SPEC_CACHE_ENTRY_MAX);
	assert_int_equal(st.hits, 1);
	free(big);

	/* Nested 100 deep inside spec: jansson takes it, the scanner's bound
	 * (64) sends it to the full path every time. */
	gw_spec_cache_clear();
	char deep[512];
	n = (size_t)snprintf(deep, sizeof(deep), "{\"metadata\":{\"name\":\"p\"},"
			     "\"spec\":{\"overhead\":{\"x\":");
	for (int k = 0; k < 100; k++)
		deep[n++] = '[';
	for (int k = 0; k < 100; k++)
		deep[n++] = ']';
	n += (size_t)snprintf(deep + n, sizeof(deep) - n, "}}}");
	compare(deep, n);
	gw_spec_cache_stats(&st);
	assert_int_equal(st.entries, 0);
}

static void *in_thread(void *arg)
{
	const char *body = arg;
	const struct gw_limits lim = {.max_pods = 100, .max_specs = 8};
	char err[512];
	struct gw_batch b;
	struct gw_spec_cache_stats st;
	gw_spec_cache_stats(&st);
	if (st.entries != 0)
		return (void *)1; /* another thread's cache seen */
	for (int i = 0; i < 3; i++) {
		if (gw_decode_pods(body, strlen(body), &lim, &b, err, sizeof(err)) != 0)
			return (void *)2;
		gw_batch_free(&b);
	}
	gw_spec_cache_stats(&st);
	return st.entries == 1 && st.hits == 1 ? NULL : (void *)3;
}

/* Each thread its own cache, freed when it ends (ASan's leak check). */
static void test_threads(void **state)
{
	(void)state;
	gw_spec_cache_clear();
	const struct gw_limits lim = {.max_pods = 100, .max_specs = 8};
	char err[512];
	struct gw_batch b;
	for (int round = 0; round < 2; round++) {
		assert_int_equal(gw_decode_pods(same_spec[0], strlen(same_spec[0]), &lim,
						&b, err, sizeof(err)), 0);
		gw_batch_free(&b);
	}
	for (int t = 0; t < 4; t++) {
		pthread_t th;
		void *res = (void *)9;
		assert_int_equal(pthread_create(&th, NULL, in_thread,
						(void *)same_spec[t % 3]), 0);
		assert_int_equal(pthread_join(th, &res), 0);
		assert_null(res);
	}
	struct gw_spec_cache_stats st;
	gw_spec_cache_stats(&st);
	assert_int_equal(st.entries, 1);
	assert_int_equal(st.hits, 0);
}

/* The spec of a batch's only pod. */
static const json_t *batch_spec(const struct gw_batch *b)
{
	return json_object_get(b->specs[0].canon, "spec");
}

/* GP1: hits share the entry's tree (no copy per pod); a batch keeps it
 * after the cache forgets it, equal to the full path's. */
static void test_shared_spec(void **state)
{
	(void)state;
	gw_spec_cache_clear();
	const struct gw_limits lim = {.max_pods = 100, .max_specs = 8};
	char err[512];
	struct gw_batch b[4];
	/* Missed, missed and cached, hit, hit. */
	for (int i = 0; i < 4; i++)
		assert_int_equal(gw_decode_pods(same_spec[0], strlen(same_spec[0]), &lim,
						&b[i], err, sizeof(err)), 0);
	struct gw_spec_cache_stats st;
	gw_spec_cache_stats(&st);
	assert_int_equal(st.hits, 2);
	assert_ptr_equal(batch_spec(&b[2]), batch_spec(&b[3]));
	assert_ptr_not_equal(batch_spec(&b[1]), batch_spec(&b[2]));
	gw_spec_cache_clear(); /* the entry's reference gone: the batches' stay */
	char *full = json_dumps(b[0].specs[0].canon, JSON_COMPACT);
	for (int i = 2; i < 4; i++) {
		char *hit = json_dumps(b[i].specs[0].canon, JSON_COMPACT);
		assert_non_null(hit);
		assert_string_equal(hit, full);
		free(hit);
	}
	free(full);
	for (int i = 0; i < 4; i++)
		gw_batch_free(&b[i]);
}

/* A decoding thread hands hits' batches to the test's thread, which reads
 * and frees them while the decoder goes on taking references to the same
 * tree, and at its end frees its cache with batches still out (ASan: no
 * use after free, no leak; TSan: no race on the tree or its count). */
#define HANDED 200
struct handoff {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct gw_batch b[HANDED];
	unsigned made, failed;
};

static void *decoder(void *arg)
{
	struct handoff *h = arg;
	const struct gw_limits lim = {.max_pods = 100, .max_specs = 8};
	char err[512];
	for (unsigned i = 0; i < HANDED; i++) {
		struct gw_batch b;
		bool ok = gw_decode_pods(same_spec[1], strlen(same_spec[1]), &lim, &b,
					 err, sizeof(err)) == 0;
		pthread_mutex_lock(&h->lock);
		if (ok)
			h->b[i] = b;
		else
			h->failed++;
		h->made = i + 1;
		pthread_cond_signal(&h->cond);
		pthread_mutex_unlock(&h->lock);
	}
	struct gw_spec_cache_stats st;
	gw_spec_cache_stats(&st);
	return st.hits >= HANDED - 2 ? NULL : (void *)1;
}

static void test_shared_spec_threads(void **state)
{
	(void)state;
	static struct handoff h;
	h = (struct handoff){.made = 0};
	pthread_mutex_init(&h.lock, NULL);
	pthread_cond_init(&h.cond, NULL);
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, decoder, &h), 0);
	char *first = NULL;
	for (unsigned i = 0; i < HANDED; i++) {
		pthread_mutex_lock(&h.lock);
		while (h.made <= i)
			pthread_cond_wait(&h.cond, &h.lock);
		struct gw_batch b = h.b[i];
		unsigned failed = h.failed;
		pthread_mutex_unlock(&h.lock);
		assert_int_equal(failed, 0);
		char *text = json_dumps(b.specs[0].canon, JSON_COMPACT);
		assert_non_null(text);
		if (first == NULL)
			first = text;
		else {
			assert_string_equal(text, first);
			free(text);
		}
		gw_batch_free(&b);
	}
	void *res = (void *)9;
	assert_int_equal(pthread_join(th, &res), 0);
	assert_null(res);
	free(first);
	pthread_mutex_destroy(&h.lock);
	pthread_cond_destroy(&h.cond);
}

/* --- the scanner ---------------------------------------------------------- */

static int scan(const char *s, struct json_scan *out)
{
	size_t bad = 0;
	return json_scan_value(s, strlen(s), JSON_SCAN_MAX_DEPTH, out, &bad);
}

/* Valid and invalid JSON, each also given to jansson: the scanner takes
 * exactly what jansson takes (JSON_DECODE_ANY), but for jansson's own
 * bounds (\u0000, integers past int64, reals past double). */
static void test_scan_against_jansson(void **state)
{
	(void)state;
	static const char *const cases[] = {
		"{}", "[]", "\"\"", "0", "-0", "1.5", "-1.5e+3", "1E9", "true", "false",
		"null", "{\"a\":[1,2,{\"b\":null}],\"c\":\"d\"}", "[ 1 , 2 ] ",
		"\"\\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\"", "\"\\ud83d\\ude00\"",
		"\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"", "\"\xef\xbf\xbf\"",
		"\"\xf4\x8f\xbf\xbf\"", "\"\xe0\xa0\x80\"", "\"\xed\x9f\xbf\"",
		/* invalid */
		"", " ", "{", "}", "[", "[1,]", "[,1]", "{\"a\"}", "{\"a\":}",
		"{\"a\":1,}", "{a:1}", "{'a':1}", "01", "-", "1.", ".5", "1e", "1e+",
		"+1", "0x10", "tru", "nul", "truex", "[1 2]", "{\"a\":1 \"b\":2}",
		"\"abc", "\"\\x\"", "\"\\u12\"", "\"\\u12G4\"", "\"\\ud800\"",
		"\"\\udc00\"", "\"\\ud800\\u0041\"", "\"a\x01\"", "\"\t\"",
		"\"\xc0\xaf\"", "\"\xc1\xbf\"", "\"\xe0\x80\x80\"", "\"\xed\xa0\x80\"",
		"\"\xf0\x80\x80\x80\"", "\"\xf4\x90\x80\x80\"", "\"\xf5\x80\x80\x80\"",
		"\"\x80\"", "\"\xc3\"", "\"\xe2\x82\"", "\"\xff\"", "[1]]", "{}{}",
		"NaN", "Infinity", "-Infinity", "[\"a\"\"b\"]",
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *s = cases[i];
		struct json_scan sc;
		int rc = scan(s, &sc);
		/* Whole: only whitespace after the value. */
		bool whole = rc == 0 && strspn(s + sc.end, " \t\r\n") == strlen(s + sc.end);
		json_error_t je;
		json_t *v = json_loads(s, JSON_DECODE_ANY, &je);
		if (whole != (v != NULL))
			fail_msg("%s: scanner %s (rc %d), jansson %s (%s)", s,
				 whole ? "takes it" : "refuses it", rc,
				 v ? "takes it" : "refuses it", v ? "" : je.text);
		json_decref(v);
	}
	/* jansson's own bounds, which the scanner leaves to it. */
	struct json_scan sc;
	assert_int_equal(scan("\"\\u0000\"", &sc), 0);
	assert_int_equal(scan("123456789012345678901234567890", &sc), 0);
	assert_int_equal(scan("1e999", &sc), 0);
}

static void test_scan_members(void **state)
{
	(void)state;
	const char *s = "{ \"a\" : [1, {\"x\":\"}\"}] ,\"b\\n\":\"s\\\"t\", \"c\":{\"d\":{}}}  ";
	struct json_scan sc;
	assert_int_equal(scan(s, &sc), 0);
	assert_true(sc.is_object);
	assert_int_equal(sc.n_members, 3);
	assert_int_equal(sc.end, strlen(s) - 2);
	assert_int_equal(sc.m[0].key_len, 1);
	assert_memory_equal(s + sc.m[0].key_off, "a", 1);
	assert_false(sc.m[0].key_escaped);
	assert_int_equal(sc.m[0].value_len, strlen("[1, {\"x\":\"}\"}]"));
	assert_memory_equal(s + sc.m[0].value_off, "[1, {\"x\":\"}\"}]", sc.m[0].value_len);
	assert_true(sc.m[1].key_escaped);
	assert_true(sc.m[1].value_escaped);
	assert_memory_equal(s + sc.m[1].value_off, "\"s\\\"t\"", sc.m[1].value_len);
	assert_memory_equal(s + sc.m[2].value_off, "{\"d\":{}}", sc.m[2].value_len);
	/* More members than recorded: counted. */
	assert_int_equal(scan("{\"1\":1,\"2\":2,\"3\":3,\"4\":4,\"5\":5,\"6\":6,\"7\":7,"
			      "\"8\":8,\"9\":9,\"10\":10}", &sc), 0);
	assert_int_equal(sc.n_members, 10);
	/* Only the value's bytes are read: what follows is not looked at. */
	assert_int_equal(scan("{\"a\":1}garbage", &sc), 0);
	assert_int_equal(sc.end, 7);
}

/* Depth: at most max_depth open containers, E2BIG past it, never more
 * than JSON_SCAN_MAX_DEPTH whatever is asked; length: every prefix of a
 * valid value is refused, never read past. */
static void test_scan_bounds(void **state)
{
	(void)state;
	char buf[2 * (JSON_SCAN_MAX_DEPTH + 2) + 1];
	struct json_scan sc;
	size_t bad;
	for (unsigned d = 1; d <= JSON_SCAN_MAX_DEPTH + 1; d++) {
		memset(buf, '[', d);
		memset(buf + d, ']', d);
		int rc = json_scan_value(buf, 2 * d, 1000, &sc, &bad);
		assert_int_equal(rc, d <= JSON_SCAN_MAX_DEPTH ? 0 : -E2BIG);
		rc = json_scan_value(buf, 2 * d, 3, &sc, &bad);
		assert_int_equal(rc, d <= 3 ? 0 : -E2BIG);
		if (rc == -E2BIG)
			assert_int_equal(bad, 3);
	}
	const char *v = "{\"a\":[1,-2.5e3,true,null,\"\\u00e9\xc3\xa9\"],\"b\":{}}";
	size_t len = strlen(v);
	for (size_t n = 0; n < len; n++) {
		/* A copy of exactly n bytes: ASan sees any read past it. */
		char *cut = malloc(n ? n : 1);
		assert_non_null(cut);
		memcpy(cut, v, n);
		assert_int_equal(json_scan_value(cut, n, 64, &sc, &bad), -EINVAL);
		assert_true(bad <= n);
		free(cut);
	}
	assert_int_equal(json_scan_value(v, len, 64, &sc, &bad), 0);
	assert_int_equal(sc.end, len);
}

int main(int argc, char **argv)
{
	corpus_dir = argc > 1 ? argv[1] : NULL;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_equal_to_full_path),
		cmocka_unit_test(test_corpus),
		cmocka_unit_test(test_hits),
		cmocka_unit_test(test_differences),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_threads),
		cmocka_unit_test(test_shared_spec),
		cmocka_unit_test(test_shared_spec_threads),
		cmocka_unit_test(test_scan_against_jansson),
		cmocka_unit_test(test_scan_members),
		cmocka_unit_test(test_scan_bounds),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
