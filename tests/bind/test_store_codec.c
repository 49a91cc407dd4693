/* unit.store_codec: the durable store's records (bind/store_codec.h): a
 * node, a placement and an identity written and read back into another
 * intern table (strings by value, labels re-sorted by the new ids); every
 * truncation, a byte past the end, another format version, and values out
 * of range refused with -EBADMSG and a message; an encode that does not
 * fit refused with -E2BIG. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "bind/bind.h"

static uint32_t id_of(struct intern *t, const char *s)
{
	uint32_t id;
	assert_int_equal(intern_add_str(t, s, &id), 0);
	return id;
}

static void test_node_round_trip(void **state)
{
	(void)state;
	struct intern *a = intern_create(), *b = intern_create();
	/* b interns other strings first: the ids differ between the two. */
	id_of(b, "unrelated");
	id_of(b, "zone");
	struct node_spec n;
	memset(&n, 0, sizeof(n));
	n.name = id_of(a, "node-1");
	n.allocatable.v[RES_CPU] = 4000;
	n.allocatable.v[RES_PODS] = 110;
	n.devices = (struct node_devices){.gpu_model = id_of(a, "A100"), .n_gpus = 2,
					  .n_numa = 1, .n_cores = 4};
	n.n_labels = 2;
	n.labels[0] = (struct label){id_of(a, "kubernetes.io/hostname"), id_of(a, "node-1")};
	n.labels[1] = (struct label){id_of(a, "zone"), id_of(a, "a")};
	n.n_taints = 1;
	n.taints[0] = (struct taint){id_of(a, "dedicated"), id_of(a, "gpu"),
				     TAINT_NO_SCHEDULE};
	uint8_t buf[4096];
	int len = store_encode_node(&n, a, buf, sizeof(buf));
	assert_true(len > 0);
	assert_int_equal(store_encode_node(&n, a, buf, 20), -E2BIG);
	struct node_spec m;
	char err[256];
	assert_int_equal(store_decode_node(buf, (size_t)len, b, &m, err, sizeof(err)), 0);
	assert_string_equal(intern_str(b, m.name), "node-1");
	assert_string_equal(intern_str(b, m.devices.gpu_model), "A100");
	assert_int_equal(m.allocatable.v[RES_CPU], 4000);
	assert_int_equal(m.devices.n_gpus, 2);
	assert_int_equal(m.n_labels, 2);
	assert_true(m.labels[0].key < m.labels[1].key); /* sorted by b's ids */
	assert_string_equal(intern_str(b, m.taints[0].value), "gpu");
	/* Every truncation, and a byte past the end: refused. */
	for (int cut = 0; cut < len; cut++)
		assert_int_equal(store_decode_node(buf, (size_t)cut, b, &m, err,
						   sizeof(err)), -EBADMSG);
	buf[len] = 0;
	assert_int_equal(store_decode_node(buf, (size_t)len + 1, b, &m, err,
					   sizeof(err)), -EBADMSG);
	buf[0] = STORE_CODEC_VERSION + 1;
	assert_int_equal(store_decode_node(buf, (size_t)len, b, &m, err, sizeof(err)),
			 -EBADMSG);
	assert_non_null(strstr(err, "version"));
	buf[0] = STORE_CODEC_VERSION;
	buf[3] = NODE_MAX_GPUS + 1; /* n_gpus */
	assert_int_equal(store_decode_node(buf, (size_t)len, b, &m, err, sizeof(err)),
			 -EBADMSG);
	intern_destroy(a);
	intern_destroy(b);
}

static void test_placement_and_identity(void **state)
{
	(void)state;
	struct intern *a = intern_create(), *b = intern_create();
	struct placement_record r;
	memset(&r, 0, sizeof(r));
	r.owner = 3;
	r.cookie = 42;
	r.request.v[RES_CPU] = 500;
	r.nonzero_cpu_milli = 500;
	r.dev.gpu_mask = 1;
	r.dev.gpu_milli = 300;
	r.n_ports = 1;
	r.ports[0] = (struct host_port){.ip = id_of(a, "10.0.0.1"), .port = 8080};
	r.pod_name = id_of(a, "default/web");
	/* Its group: ids of table a, carried by value into table b, where
	 * the same strings have other ids ("zzz" takes b's first ones). */
	(void)id_of(b, "zzz");
	struct pod_group g = {.ns = id_of(a, "default"), .n_labels = 1,
			      .n_terms = 1, .n_reqs = 1, .n_values = 1,
			      .n_namespaces = 1};
	g.labels[0] = (struct label){id_of(a, "app"), id_of(a, "web")};
	g.terms[0] = (struct group_term){
		.kind = TERM_REQUIRED_ANTI_AFFINITY,
		.topology_key = id_of(a, "kubernetes.io/hostname"),
		.selector = {.present = true, .n_reqs = 1}, .n_ns = 1};
	g.reqs[0] = (struct group_req){.key = id_of(a, "app"), .op = SEL_IN,
				       .n_values = 1};
	g.values[0] = id_of(a, "web");
	g.namespaces[0] = id_of(a, "default");
	char enc[GROUP_ENCODED_MAX + 1];
	int enc_len = pod_group_encode(&g, enc, sizeof(enc));
	assert_true(enc_len > 0);
	assert_int_equal(intern_add(a, enc, (size_t)enc_len, &r.group), 0);
	r.group_terms = 1;
	uint8_t buf[STORE_CODEC_PLACEMENT_MAX];
	int len = store_encode_placement(&r, id_of(a, "node-7"), a, buf, sizeof(buf));
	assert_true(len > 0);
	struct placement_record s;
	uint32_t node;
	char err[256];
	assert_int_equal(store_decode_placement(buf, (size_t)len, b, &s, &node, err,
						sizeof(err)), 0);
	assert_string_equal(intern_str(b, node), "node-7");
	assert_string_equal(intern_str(b, s.pod_name), "default/web");
	assert_string_equal(intern_str(b, s.ports[0].ip), "10.0.0.1");
	assert_int_equal(s.owner, 3);
	assert_int_equal(s.cookie, 42);
	assert_int_equal(s.dev.gpu_milli, 300);
	assert_int_equal(s.group_terms, 1);
	struct pod_group h;
	assert_int_equal(pod_group_decode(intern_str(b, s.group), intern_len(b, s.group),
					  &h), 0);
	assert_int_equal(h.n_labels, 1);
	assert_string_equal(intern_str(b, h.ns), "default");
	assert_string_equal(intern_str(b, h.labels[0].key), "app");
	assert_string_equal(intern_str(b, h.labels[0].value), "web");
	assert_string_equal(intern_str(b, h.terms[0].topology_key),
			    "kubernetes.io/hostname");
	assert_string_equal(intern_str(b, h.values[0]), "web");
	assert_true(group_term_matches(&h, &h.terms[0], &h));
	assert_int_not_equal(h.labels[0].key, g.labels[0].key);
	for (int cut = 0; cut < len; cut++)
		assert_int_equal(store_decode_placement(buf, (size_t)cut, b, &s, &node,
							err, sizeof(err)), -EBADMSG);
	struct state_identity id = {.used = 1, .uid = 1000}, back;
	strcpy(id.name, "batch");
	len = store_encode_identity(&id, buf, sizeof(buf));
	assert_true(len > 0);
	assert_int_equal(store_decode_identity(buf, (size_t)len, &back, err,
					       sizeof(err)), 0);
	assert_int_equal(back.uid, 1000);
	assert_string_equal(back.name, "batch");
	assert_int_equal(store_decode_identity(buf, (size_t)len - 1, &back, err,
					       sizeof(err)), -EBADMSG);
	intern_destroy(a);
	intern_destroy(b);
}

/* An admission usage record (a LocalQueue's decayed usage): read back
 * bit for bit; every truncation, a byte past the end, another version,
 * more than 16 resources, an empty name, a NUL in one, a resource twice
 * and a consumed value negative, NaN or infinite refused with -EBADMSG
 * and a message; -E2BIG when it does not fit. */
static void test_afs(void **state)
{
	(void)state;
	struct store_afs a = {.last_ns = UINT64_C(1234567890123), .n = 2}, b;
	strcpy(a.ns, "team");
	strcpy(a.name, "lq-a");
	strcpy(a.resource[0], "cpu");
	a.consumed[0] = 1000.0 * 0.29289321881345254;
	strcpy(a.resource[1], "memory");
	a.consumed[1] = 0.0;
	uint8_t buf[8192]; /* 16 resources of 253 bytes: 4220 */
	char err[256];
	int len = store_encode_afs(&a, buf, sizeof(buf));
	/* 1+1+2+8, 2+4, 2+4, (2+3+8), (2+6+8) */
	assert_int_equal(len, 12 + 6 + 6 + 13 + 16);
	assert_int_equal(store_decode_afs(buf, (size_t)len, &b, err, sizeof(err)), 0);
	assert_string_equal(b.ns, "team");
	assert_string_equal(b.name, "lq-a");
	assert_int_equal(b.n, 2);
	assert_true(b.last_ns == a.last_ns);
	assert_memory_equal(&b.consumed[0], &a.consumed[0], sizeof(double));
	assert_string_equal(b.resource[1], "memory");
	for (int cut = 0; cut < len; cut++) {
		err[0] = '\0';
		assert_int_equal(store_decode_afs(buf, (size_t)cut, &b, err,
						  sizeof(err)), -EBADMSG);
		assert_true(err[0] != '\0');
	}
	buf[len] = 0;
	assert_int_equal(store_decode_afs(buf, (size_t)len + 1, &b, err,
					  sizeof(err)), -EBADMSG);
	assert_non_null(strstr(err, "bytes after its end"));
	assert_int_equal(store_encode_afs(&a, buf, (size_t)len - 1), -E2BIG);

	uint8_t c[8192];
	memcpy(c, buf, (size_t)len);
	c[0] = 2; /* another version */
	assert_int_equal(store_decode_afs(c, (size_t)len, &b, err, sizeof(err)),
			 -EBADMSG);
	assert_non_null(strstr(err, "format version 2"));
	memcpy(c, buf, (size_t)len);
	c[2] = 17; /* n */
	assert_int_equal(store_decode_afs(c, (size_t)len, &b, err, sizeof(err)),
			 -EBADMSG);
	assert_non_null(strstr(err, "17 resources, expected at most 16"));
	memcpy(c, buf, (size_t)len);
	c[12 + 2 + 1] = '\0'; /* a NUL inside the namespace */
	assert_int_equal(store_decode_afs(c, (size_t)len, &b, err, sizeof(err)),
			 -EBADMSG);
	memcpy(c, buf, (size_t)len);
	c[12] = 0; /* an empty namespace (and what follows misread) */
	c[13] = 0;
	assert_int_equal(store_decode_afs(c, (size_t)len, &b, err, sizeof(err)),
			 -EBADMSG);

	double bad_values[] = {-1.0, (double)NAN, (double)INFINITY};
	for (size_t k = 0; k < sizeof(bad_values) / sizeof(bad_values[0]); k++) {
		struct store_afs d = a;
		d.consumed[1] = bad_values[k];
		len = store_encode_afs(&d, buf, sizeof(buf));
		assert_true(len > 0);
		assert_int_equal(store_decode_afs(buf, (size_t)len, &b, err,
						  sizeof(err)), -EBADMSG);
		assert_non_null(strstr(err, "resource \"memory\": consumed"));
	}
	struct store_afs d = a;
	strcpy(d.resource[1], "cpu");
	len = store_encode_afs(&d, buf, sizeof(buf));
	assert_int_equal(store_decode_afs(buf, (size_t)len, &b, err, sizeof(err)),
			 -EBADMSG);
	assert_non_null(strstr(err, "resource \"cpu\" twice"));
	/* The bounds: 16 resources of 253 bytes decode. */
	d = a;
	d.n = STORE_AFS_RESOURCES;
	for (int r = 0; r < STORE_AFS_RESOURCES; r++) {
		memset(d.resource[r], 'a' + r, STORE_AFS_NAME_MAX);
		d.resource[r][STORE_AFS_NAME_MAX] = '\0';
		d.consumed[r] = r;
	}
	len = store_encode_afs(&d, buf, sizeof(buf));
	assert_true(len > 0);
	assert_int_equal(store_decode_afs(buf, (size_t)len, &b, err, sizeof(err)), 0);
	assert_int_equal(b.n, STORE_AFS_RESOURCES);
	for (int r = 0; r < STORE_AFS_RESOURCES; r++) {
		assert_string_equal(b.resource[r], d.resource[r]);
		assert_true(b.consumed[r] == (double)r);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_node_round_trip),
		cmocka_unit_test(test_placement_and_identity),
		cmocka_unit_test(test_afs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
