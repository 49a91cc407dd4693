/* unit.pod_labels: a pod's namespace and labels between its pod group
 * and a version 2 placement value (daemon/pod_labels.c), through a real
 * intern table: the value's labels sorted by their keys' bytes (the
 * decoder's order, not the group's order of key ids) and decodable; back
 * from the value, the very same group (the same intern id: one encoding);
 * no group, no labels; labels past PLACEMENT_LABELS_MAX bytes written as
 * version 1 (-E2BIG); a version 1 value makes no group. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "daemon/pod_labels_internal.h"

static int by_key(const void *a, const void *b)
{
	const struct label *x = a, *y = b;
	return (x->key > y->key) - (x->key < y->key);
}

/* The group of namespace ns and the n labels kv[2i]=kv[2i+1], interned. */
static uint32_t group_of(struct intern *t, const char *ns, const char *const *kv, unsigned n)
{
	struct pod_group g;
	memset(&g, 0, sizeof(g));
	assert_int_equal(intern_add_str(t, ns, &g.ns), 0);
	for (unsigned i = 0; i < n; i++) {
		assert_int_equal(intern_add_str(t, kv[2 * i], &g.labels[i].key), 0);
		assert_int_equal(intern_add_str(t, kv[2 * i + 1], &g.labels[i].value), 0);
	}
	g.n_labels = (uint16_t)n;
	qsort(g.labels, n, sizeof(g.labels[0]), by_key);
	char enc[GROUP_ENCODED_MAX];
	int len = pod_group_encode(&g, enc, sizeof(enc));
	assert_true(len > 0);
	uint32_t id;
	assert_int_equal(intern_add(t, enc, (size_t)len, &id), 0);
	return id;
}

static void both_ways(void **state)
{
	(void)state;
	struct intern *t = intern_create();
	assert_non_null(t);
	/* Interned in this order, "version" gets the smallest key id. */
	uint32_t k;
	assert_int_equal(intern_add_str(t, "version", &k), 0);
	static const char *const kv[] = {"version", "", "example.com/tier", "Web_1.b", "app", "x"};
	uint32_t g = group_of(t, "team-a", kv, 3);
	struct placement_value v = {.node_generation = 1, .cpu_milli = 100};
	strcpy(v.node, "n0");
	assert_int_equal(pod_labels_to_value(t, g, &v), 0);
	assert_int_equal(v.version, 2);
	assert_string_equal(v.ns, "team-a");
	assert_string_equal(v.labels, "app=x example.com/tier=Web_1.b version=");
	assert_int_equal(v.n_labels, 3);
	char text[PLACEMENT_VALUE_MAX + 1], msg[256];
	int n = placement_value_encode(&v, text);
	assert_true(n > 0);
	struct placement_value back;
	assert_int_equal(placement_value_decode(text, (size_t)n, &back, msg, sizeof(msg)), 0);
	uint32_t again;
	assert_int_equal(pod_labels_group(t, &back, &again), 0);
	assert_int_equal(again, g);

	/* No group: version 2, no namespace, no labels; no group back. */
	assert_int_equal(pod_labels_to_value(t, 0, &v), 0);
	assert_true(v.version == 2 && v.ns[0] == '\0' && v.n_labels == 0 && v.labels[0] == '\0');
	assert_int_equal(pod_labels_group(t, &v, &again), 0);
	assert_int_equal(again, 0);

	/* A namespace alone is a group (terms match namespaces). */
	uint32_t ns_only = group_of(t, "team-b", NULL, 0);
	assert_int_equal(pod_labels_to_value(t, ns_only, &v), 0);
	assert_int_equal(pod_labels_group(t, &v, &again), 0);
	assert_int_equal(again, ns_only);

	/* Version 1: no group. */
	v.version = 1;
	assert_int_equal(pod_labels_group(t, &v, &again), 0);
	assert_int_equal(again, 0);
	intern_destroy(t);
}

static void past_the_bytes(void **state)
{
	(void)state;
	struct intern *t = intern_create();
	assert_non_null(t);
	/* 40 labels of 5 + 1 + 63 bytes and a space: 2,799 bytes. */
	char keys[40][8], value[64];
	const char *kv[80];
	memset(value, 'v', 63);
	value[63] = '\0';
	for (int i = 0; i < 40; i++) {
		snprintf(keys[i], sizeof(keys[i]), "k%04d", i);
		kv[2 * i] = keys[i];
		kv[2 * i + 1] = value;
	}
	uint32_t g = group_of(t, "default", kv, 40);
	struct placement_value v = {.cpu_milli = 1};
	strcpy(v.node, "n0");
	assert_int_equal(pod_labels_to_value(t, g, &v), -E2BIG);
	assert_true(v.version == 1 && v.ns[0] == '\0' && v.n_labels == 0);
	char text[PLACEMENT_VALUE_MAX + 1];
	assert_true(placement_value_encode(&v, text) > 0);
	/* 29 of them fit (29 * 70 - 1 = 2,029 bytes). */
	g = group_of(t, "default", kv, 29);
	assert_int_equal(pod_labels_to_value(t, g, &v), 0);
	assert_int_equal(v.n_labels, 29);
	assert_true(placement_value_encode(&v, text) > 0);
	intern_destroy(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(both_ways),
		cmocka_unit_test(past_the_bytes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
