/* unit.store_codec: the durable store's records (bind/store_codec.h): a
 * node, a placement and an identity written and read back into another
 * intern table (strings by value, labels re-sorted by the new ids); every
 * truncation, a byte past the end, another format version, and values out
 * of range refused with -EBADMSG and a message; an encode that does not
 * fit refused with -E2BIG. */
#include <errno.h>
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_node_round_trip),
		cmocka_unit_test(test_placement_and_identity),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
