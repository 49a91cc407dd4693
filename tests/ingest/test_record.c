/* unit.record: pod slots (ingest/record.c). Every check of record_decode
 * with its message, extras landing on the right resources, byte-equal specs
 * for equal slots, answer_slot's cut at the message boundary, and 100,000
 * pseudo-random slots (bounded input; tests/fuzz/fuzz_record.c explores
 * the rest). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ingest/ingest.h"
#include "bind/bind.h"
#include "shm/shm.h"

#define GIB (INT64_C(1) << 30)
#define MIB (INT64_C(1) << 20)
#define RES_GPU 4      /* nvidia.com/gpu, registered first */
#define RES_HUGE_2M 5  /* hugepages-2Mi */

struct fixture {
	struct pod_spec specs[3];
	struct record_templates t;
	struct res_names res;
};

/* Templates: 1 asks for cpu and memory, 2 for nothing (stand-ins only),
 * 3 for nearly all the cpu there is. Resources: the four fixed ones, gpu
 * and 2Mi huge pages, so 0..5. */
static void make_fixture(struct fixture *f)
{
	memset(f, 0, sizeof(*f));
	f->specs[0].ns_name = 11;
	f->specs[0].request.v[RES_CPU] = 500;
	f->specs[0].request.v[RES_MEMORY] = GIB;
	f->specs[0].nonzero_cpu_milli = 500;
	f->specs[0].nonzero_mem_bytes = GIB;
	f->specs[0].n_selector = 1;
	f->specs[0].selector[0] = (struct label){.key = 3, .value = 4};

	f->specs[1].ns_name = 12;
	f->specs[1].nonzero_cpu_milli = 100;
	f->specs[1].nonzero_mem_bytes = 200 * MIB;

	f->specs[2].ns_name = 13;
	f->specs[2].request.v[RES_CPU] = INT64_MAX - 100;
	f->specs[2].nonzero_cpu_milli = INT64_MAX - 100;
	f->specs[2].nonzero_mem_bytes = 200 * MIB;

	f->t = (struct record_templates){.specs = f->specs, .count = 3};
	res_names_init(&f->res);
	assert_int_equal(res_register(&f->res, "nvidia.com/gpu", 14), RES_GPU);
	assert_int_equal(res_register(&f->res, "hugepages-2Mi", 13), RES_HUGE_2M);
}

static void make_slot(struct shmsched_slot *s, uint32_t template_id)
{
	memset(s, 0, sizeof(*s));
	s->cookie = 0xc0ffee;
	s->template_id = template_id;
	s->submit_ns = 123456789;
}

static void set_extra(struct shmsched_slot *s, unsigned i, uint32_t resource,
		      int64_t quantity)
{
	s->extra[i] = (struct shmsched_extra){.resource = resource,
					      .quantity = quantity};
	if (s->n_extra < i + 1)
		s->n_extra = (uint16_t)(i + 1);
}

/* Decodes `s`, which must be rejected with exactly `want`; `out` must be
 * left as it was. */
static void expect_reject(const struct fixture *f, const struct shmsched_slot *s,
			  const char *want)
{
	struct record_pod out, before;
	memset(&out, 0x5a, sizeof(out));
	memcpy(&before, &out, sizeof(out));
	char why[256] = "";
	assert_int_equal(record_decode(s, &f->t, &f->res, &out, why, sizeof(why)),
			 -EINVAL);
	assert_string_equal(why, want);
	assert_memory_equal(&out, &before, sizeof(out));
}

static void test_no_extras_is_the_template(void **state)
{
	(void)state;
	struct fixture f;
	make_fixture(&f);
	struct shmsched_slot s;
	for (uint32_t id = 1; id <= 3; id++) {
		make_slot(&s, id);
		struct record_pod out;
		char why[128] = "";
		assert_int_equal(record_decode(&s, &f.t, &f.res, &out, why,
					       sizeof(why)), 0);
		assert_memory_equal(out.spec, &f.specs[id - 1], sizeof(*out.spec));
		assert_int_equal(out.cookie, 0xc0ffee);
		assert_int_equal(out.submit_ns, 123456789);
		assert_string_equal(why, ""); /* untouched on success */
	}
}

static void test_extras_land_on_their_resources(void **state)
{
	(void)state;
	struct fixture f;
	make_fixture(&f);
	struct shmsched_slot s;
	make_slot(&s, 1);
	set_extra(&s, 0, RES_CPU, 250);
	set_extra(&s, 1, RES_MEMORY, 512 * MIB);
	set_extra(&s, 2, RES_GPU, 2);
	set_extra(&s, 3, RES_EPHEMERAL, 10 * GIB);
	struct record_pod out;
	char why[128];
	assert_int_equal(record_decode(&s, &f.t, &f.res, &out, why, sizeof(why)), 0);

	struct pod_spec want = f.specs[0];
	want.request.v[RES_CPU] = 750;
	want.request.v[RES_MEMORY] = GIB + 512 * MIB;
	want.request.v[RES_GPU] = 2;
	want.request.v[RES_EPHEMERAL] = 10 * GIB;
	want.nonzero_cpu_milli = 750;
	want.nonzero_mem_bytes = GIB + 512 * MIB;
	assert_memory_equal(out.spec, &want, sizeof(want));
	assert_int_equal(out.spec->request.v[RES_PODS], 0);
	assert_int_equal(out.spec->request.v[RES_HUGE_2M], 0);
}

static void test_extras_on_one_resource_add_up(void **state)
{
	(void)state;
	struct fixture f;
	make_fixture(&f);
	struct shmsched_slot s;
	make_slot(&s, 1);
	set_extra(&s, 0, RES_HUGE_2M, 2 * MIB);
	set_extra(&s, 1, RES_HUGE_2M, 4 * MIB);
	set_extra(&s, 2, RES_CPU, 1);
	set_extra(&s, 3, RES_CPU, 0);
	struct record_pod out;
	char why[128];
	assert_int_equal(record_decode(&s, &f.t, &f.res, &out, why, sizeof(why)), 0);
	assert_int_equal(out.spec->request.v[RES_HUGE_2M], 6 * MIB);
	assert_int_equal(out.spec->request.v[RES_CPU], 501);
	assert_int_equal(out.spec->nonzero_cpu_milli, 501);
	assert_int_equal(out.spec->nonzero_mem_bytes, GIB);
}

/* A template without cpu / memory requests scores with the stand-ins; an
 * extra is an explicit request and counts as itself on top of them. */
static void test_extras_add_to_the_stand_ins(void **state)
{
	(void)state;
	struct fixture f;
	make_fixture(&f);
	struct shmsched_slot s;
	make_slot(&s, 2);
	set_extra(&s, 0, RES_CPU, 300);
	set_extra(&s, 1, RES_MEMORY, 100 * MIB);
	set_extra(&s, 2, RES_GPU, 1);
	struct record_pod out;
	char why[128];
	assert_int_equal(record_decode(&s, &f.t, &f.res, &out, why, sizeof(why)), 0);
	assert_int_equal(out.spec->request.v[RES_CPU], 300);
	assert_int_equal(out.spec->request.v[RES_MEMORY], 100 * MIB);
	assert_int_equal(out.spec->nonzero_cpu_milli, 400);
	assert_int_equal(out.spec->nonzero_mem_bytes, 300 * MIB);
	assert_int_equal(out.spec->request.v[RES_GPU], 1);
}

static void test_bad_template_id(void **state)
{
	(void)state;
	struct fixture f;
	make_fixture(&f);
	struct shmsched_slot s;
	make_slot(&s, 7);
	expect_reject(&f, &s, "slot: template_id 7: no such template (1..3 registered)");
	make_slot(&s, 0);
	expect_reject(&f, &s, "slot: template_id 0: no such template (1..3 registered)");
	make_slot(&s, 4);
	expect_reject(&f, &s, "slot: template_id 4: no such template (1..3 registered)");
	make_slot(&s, UINT32_MAX);
	expect_reject(&f, &s, "slot: template_id 4294967295: no such template "
			      "(1..3 registered)");
	f.t.count = 0;
	make_slot(&s, 1);
	expect_reject(&f, &s, "slot: template_id 1: no such template (none registered)");
}

static void test_too_many_extras(void **state)
{
	(void)state;
	struct fixture f;
	make_fixture(&f);
	struct shmsched_slot s;
	make_slot(&s, 1);
	s.n_extra = SHMSCHED_MAX_EXTRA + 1;
	expect_reject(&f, &s, "slot: n_extra 5: at most 4");
	s.n_extra = UINT16_MAX;
	expect_reject(&f, &s, "slot: n_extra 65535: at most 4");
	s.n_extra = SHMSCHED_MAX_EXTRA; /* all four used, all zero: cpu 0 */
	struct record_pod out;
	char why[128];
	assert_int_equal(record_decode(&s, &f.t, &f.res, &out, why, sizeof(why)), 0);
	assert_memory_equal(out.spec, &f.specs[0], sizeof(*out.spec));
}

static void test_flags_and_deadline(void **state)
{
	(void)state;
	struct fixture f;
	make_fixture(&f);
	struct shmsched_slot s;
	make_slot(&s, 1);
	s.flags = 0x4;
	expect_reject(&f, &s, "slot: flags 0x4: unknown bits 0x4 (known: WAIT 0x1, "
		      "NO_WAIT 0x2)");
	s.flags = 0x8001;
	expect_reject(&f, &s, "slot: flags 0x8001: unknown bits 0x8000 (known: "
		      "WAIT 0x1, NO_WAIT 0x2)");
	s.flags = SHMSCHED_SLOT_WAIT | SHMSCHED_SLOT_NO_WAIT;
	expect_reject(&f, &s, "slot: flags 0x3: WAIT and NO_WAIT together");
	s.flags = SHMSCHED_SLOT_NO_WAIT;
	s.deadline_ns = 5;
	expect_reject(&f, &s, "slot: deadline_ns 5 with NO_WAIT: a pod answered at "
		      "once has no deadline");
	/* Accepted, and returned as they were: WAIT with a deadline; a
	 * deadline alone (the daemon's default may be to wait); NO_WAIT. */
	uint16_t flags[] = {SHMSCHED_SLOT_WAIT, 0, SHMSCHED_SLOT_NO_WAIT};
	uint64_t deadline[] = {UINT64_MAX, 77, 0};
	for (unsigned i = 0; i < 3; i++) {
		s.flags = flags[i];
		s.deadline_ns = deadline[i];
		struct record_pod out;
		char why[128];
		assert_int_equal(record_decode(&s, &f.t, &f.res, &out, why,
					       sizeof(why)), 0);
		assert_int_equal(out.flags, flags[i]);
		assert_int_equal(out.deadline_ns, deadline[i]);
	}
}

static void test_reserved_must_be_zero(void **state)
{
	(void)state;
	struct fixture f;
	make_fixture(&f);
	struct shmsched_slot s;
	make_slot(&s, 1);
	set_extra(&s, 0, RES_CPU, 1);
	set_extra(&s, 1, RES_CPU, 1);
	s.extra[1].reserved = 0xdead;
	expect_reject(&f, &s, "slot: extra[1].reserved 0xdead: must be 0");
}

static void test_bad_resource(void **state)
{
	(void)state;
	struct fixture f;
	make_fixture(&f);
	struct shmsched_slot s;
	make_slot(&s, 1);
	set_extra(&s, 0, RES_CPU, 1);
	set_extra(&s, 1, 19, 1);
	expect_reject(&f, &s, "slot: extra[1].resource 19: no such resource (0..5)");
	set_extra(&s, 1, 6, 1); /* one past the registered ones */
	expect_reject(&f, &s, "slot: extra[1].resource 6: no such resource (0..5)");
	set_extra(&s, 1, RES_MAX, 1);
	expect_reject(&f, &s, "slot: extra[1].resource 16: no such resource (0..5)");
	set_extra(&s, 1, UINT32_MAX, 1);
	expect_reject(&f, &s, "slot: extra[1].resource 4294967295: no such "
			      "resource (0..5)");
	set_extra(&s, 1, RES_PODS, 1);
	expect_reject(&f, &s, "slot: extra[1].resource 3 (pods): not requestable, "
			      "every pod counts one");
	set_extra(&s, 1, RES_PODS, 0);
	expect_reject(&f, &s, "slot: extra[1].resource 3 (pods): not requestable, "
			      "every pod counts one");
}

static void test_negative_quantity(void **state)
{
	(void)state;
	struct fixture f;
	make_fixture(&f);
	struct shmsched_slot s;
	make_slot(&s, 1);
	set_extra(&s, 0, RES_MEMORY, -5);
	expect_reject(&f, &s, "slot: extra[0].quantity -5: negative");
	set_extra(&s, 0, RES_GPU, INT64_MIN);
	expect_reject(&f, &s, "slot: extra[0].quantity -9223372036854775808: negative");
}

static void test_overflow(void **state)
{
	(void)state;
	struct fixture f;
	make_fixture(&f);
	struct shmsched_slot s;
	struct record_pod out;
	char why[128];

	/* Template 3's cpu is INT64_MAX - 100: 100 more is the most. */
	make_slot(&s, 3);
	set_extra(&s, 0, RES_CPU, 60);
	set_extra(&s, 1, RES_CPU, 40);
	assert_int_equal(record_decode(&s, &f.t, &f.res, &out, why, sizeof(why)), 0);
	assert_int_equal(out.spec->request.v[RES_CPU], INT64_MAX);
	assert_int_equal(out.spec->nonzero_cpu_milli, INT64_MAX);
	set_extra(&s, 2, RES_CPU, 1);
	expect_reject(&f, &s, "slot: extra[2]: cpu request overflows");

	/* Extras alone. */
	make_slot(&s, 1);
	set_extra(&s, 0, RES_GPU, INT64_MAX);
	set_extra(&s, 1, RES_GPU, 1);
	expect_reject(&f, &s, "slot: extra[1]: nvidia.com/gpu request overflows");
	make_slot(&s, 1);
	set_extra(&s, 0, RES_MEMORY, INT64_MAX - GIB + 1);
	expect_reject(&f, &s, "slot: extra[0]: memory request overflows");

	/* Template 2 requests no cpu but scores with 100m: the request fits,
	 * the stand-in plus the extra does not. */
	make_slot(&s, 2);
	set_extra(&s, 0, RES_CPU, INT64_MAX - 100);
	assert_int_equal(record_decode(&s, &f.t, &f.res, &out, why, sizeof(why)), 0);
	assert_int_equal(out.spec->nonzero_cpu_milli, INT64_MAX);
	set_extra(&s, 0, RES_CPU, INT64_MAX - 99);
	expect_reject(&f, &s, "slot: extra[0]: cpu request overflows");
}

/* Unused extras and the daemon's half of the slot are not read. */
static void test_unused_bytes_are_ignored(void **state)
{
	(void)state;
	struct fixture f;
	make_fixture(&f);
	struct shmsched_slot clean, dirty;
	make_slot(&clean, 1);
	set_extra(&clean, 0, RES_GPU, 1);
	memcpy(&dirty, &clean, sizeof(dirty));
	for (unsigned i = 1; i < SHMSCHED_MAX_EXTRA; i++)
		dirty.extra[i] = (struct shmsched_extra){
			.resource = 999, .reserved = 7, .quantity = -1};
	dirty.status = 0xffffffff;
	dirty.node_id = 42;
	dirty.complete_ns = 1;
	memset(dirty.message, 'x', sizeof(dirty.message)); /* no NUL */

	struct record_pod a, b;
	char why[128];
	assert_int_equal(record_decode(&clean, &f.t, &f.res, &a, why, sizeof(why)), 0);
	assert_int_equal(record_decode(&dirty, &f.t, &f.res, &b, why, sizeof(why)), 0);
	assert_memory_equal(a.spec, b.spec, sizeof(*a.spec));
	assert_int_equal(a.cookie, b.cookie);
	assert_int_equal(a.submit_ns, b.submit_ns);
	assert_int_equal(a.template_id, b.template_id);
	assert_int_equal(a.flags, b.flags);
	assert_int_equal(a.deadline_ns, b.deadline_ns);
}

/* A pod without extras is its template's spec itself, not a copy; one
 * with extras is a copy, and its template is left as it was. */
static void test_spec_is_the_template_without_extras(void **state)
{
	(void)state;
	struct fixture f;
	make_fixture(&f);
	struct pod_spec before = f.specs[0];
	struct shmsched_slot s;
	make_slot(&s, 1);
	struct record_pod out;
	char why[128];
	assert_int_equal(record_decode(&s, &f.t, &f.res, &out, why, sizeof(why)), 0);
	assert_ptr_equal(out.spec, &f.specs[0]);
	set_extra(&s, 0, RES_CPU, 100);
	assert_int_equal(record_decode(&s, &f.t, &f.res, &out, why, sizeof(why)), 0);
	assert_ptr_equal(out.spec, &out.with_extras);
	assert_int_equal(out.spec->request.v[RES_CPU], before.request.v[RES_CPU] + 100);
	assert_memory_equal(&f.specs[0], &before, sizeof(before));
}

/* Equal slots give equal bytes from node_name on (the equivalence class),
 * whatever `out` held before and whatever the cookie and times are. */
static void test_equal_slots_give_equal_bytes(void **state)
{
	(void)state;
	struct fixture f;
	make_fixture(&f);
	struct shmsched_slot s1, s2;
	make_slot(&s1, 1);
	set_extra(&s1, 0, RES_CPU, 100);
	set_extra(&s1, 1, RES_GPU, 1);
	make_slot(&s2, 1);
	s2.cookie = 99;
	s2.submit_ns = 5;
	set_extra(&s2, 0, RES_CPU, 100);
	set_extra(&s2, 1, RES_GPU, 1);
	s2.extra[2].quantity = 77; /* unused */

	struct record_pod a, b;
	memset(&a, 0x00, sizeof(a));
	memset(&b, 0xff, sizeof(b));
	char why[128];
	assert_int_equal(record_decode(&s1, &f.t, &f.res, &a, why, sizeof(why)), 0);
	assert_int_equal(record_decode(&s2, &f.t, &f.res, &b, why, sizeof(why)), 0);
	const size_t from = offsetof(struct pod_spec, node_name);
	assert_memory_equal((const char *)a.spec + from, (const char *)b.spec + from,
			    sizeof(struct pod_spec) - from);
	assert_memory_equal(a.spec, b.spec, sizeof(*a.spec));
	assert_int_not_equal(a.cookie, b.cookie);

	/* A different extra is a different class. */
	s2.extra[1].quantity = 2;
	assert_int_equal(record_decode(&s2, &f.t, &f.res, &b, why, sizeof(why)), 0);
	assert_memory_not_equal((const char *)a.spec + from,
				(const char *)b.spec + from,
				sizeof(struct pod_spec) - from);
}

static void test_reason_buffer_is_bounded(void **state)
{
	(void)state;
	struct fixture f;
	make_fixture(&f);
	struct shmsched_slot s;
	struct record_pod out;
	make_slot(&s, 9);
	assert_int_equal(record_decode(&s, &f.t, &f.res, &out, NULL, 0), -EINVAL);
	char why[12];
	memset(why, '#', sizeof(why));
	assert_int_equal(record_decode(&s, &f.t, &f.res, &out, why, sizeof(why)),
			 -EINVAL);
	assert_string_equal(why, "slot: templ");
}

/* A message of `len` bytes ('a'..'z' repeated). */
static void fill_message(char *buf, size_t len)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = (char)('a' + i % 26);
	buf[len] = '\0';
}

static void test_answer_fields(void **state)
{
	(void)state;
	struct shmsched_slot s;
	make_slot(&s, 1);
	set_extra(&s, 0, RES_CPU, 5);
	struct shmsched_slot before = s;
	answer_slot(&s, SHMSCHED_PLACED, 4242, 987654321, NULL);
	assert_int_equal(s.status, SHMSCHED_PLACED);
	assert_int_equal(s.node_id, 4242);
	assert_int_equal(s.complete_ns, 987654321);
	assert_string_equal(s.message, "");
	/* The producer's half is not touched. */
	assert_memory_equal(&s, &before, offsetof(struct shmsched_slot, status));

	memset(s.message, 'x', sizeof(s.message));
	answer_slot(&s, SHMSCHED_UNSCHEDULABLE, 0, 1,
		      "0/3 nodes are available: 3 Insufficient cpu.");
	assert_int_equal(s.status, SHMSCHED_UNSCHEDULABLE);
	assert_string_equal(s.message, "0/3 nodes are available: 3 Insufficient cpu.");
	answer_slot(&s, SHMSCHED_REJECTED, 0, 2, "");
	assert_string_equal(s.message, "");
}

static void test_answer_cut_at_the_boundary(void **state)
{
	(void)state;
	static const long deltas[] = {-2, -1, 0, 1, 100};
	char msg[SHMSCHED_MESSAGE_MAX + 128];
	for (size_t d = 0; d < sizeof(deltas) / sizeof(deltas[0]); d++) {
		size_t len = (size_t)((long)SHMSCHED_MESSAGE_MAX + deltas[d]);
		fill_message(msg, len);
		struct shmsched_slot s;
		memset(&s, 'x', sizeof(s));
		answer_slot(&s, SHMSCHED_REJECTED, 0, 0, msg);
		size_t got = strnlen(s.message, sizeof(s.message));
		assert_true(got < sizeof(s.message)); /* NUL-terminated */
		if (len <= SHMSCHED_MESSAGE_MAX - 1) {
			/* Fits, with its NUL, as is. */
			assert_int_equal(got, len);
			assert_string_equal(s.message, msg);
		} else {
			/* Cut: 524 bytes of it, "...", NUL: exactly 528. */
			assert_int_equal(got, SHMSCHED_MESSAGE_MAX - 1);
			assert_memory_equal(s.message, msg, SHMSCHED_MESSAGE_MAX - 4);
			assert_string_equal(s.message + SHMSCHED_MESSAGE_MAX - 4, "...");
		}
	}
}

/* The cut never splits a UTF-8 sequence. */
static void test_answer_cut_keeps_utf8_whole(void **state)
{
	(void)state;
	static const char *chars[] = {"\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80"};
	const size_t keep = SHMSCHED_MESSAGE_MAX - 4; /* bytes kept if ASCII */
	char msg[SHMSCHED_MESSAGE_MAX + 64];
	for (size_t c = 0; c < 3; c++) {
		size_t clen = strlen(chars[c]);
		/* Every position where the character straddles the cut. */
		for (size_t off = 1; off < clen; off++) {
			size_t start = keep - off;
			fill_message(msg, SHMSCHED_MESSAGE_MAX + 20);
			memcpy(msg + start, chars[c], clen);
			struct shmsched_slot s;
			answer_slot(&s, SHMSCHED_REJECTED, 0, 0, msg);
			assert_int_equal(strlen(s.message), start + 3);
			assert_memory_equal(s.message, msg, start);
			assert_string_equal(s.message + start, "...");
		}
		/* Ending right at the cut, it is kept whole. */
		fill_message(msg, SHMSCHED_MESSAGE_MAX + 20);
		memcpy(msg + keep - clen, chars[c], clen);
		struct shmsched_slot s;
		answer_slot(&s, SHMSCHED_REJECTED, 0, 0, msg);
		assert_int_equal(strlen(s.message), SHMSCHED_MESSAGE_MAX - 1);
		assert_memory_equal(s.message, msg, keep);
	}
}

static uint64_t next_random(uint64_t *state)
{
	*state ^= *state << 13;
	*state ^= *state >> 7;
	*state ^= *state << 17;
	return *state;
}

/* 100,000 slots of random bytes; every other one nudged towards valid
 * (small template id and n_extra, zero flags and reserved, small resource)
 * so the deeper checks are reached too. Never a crash; every rejection is
 * -EINVAL with a reason; every acceptance is the template plus the extras. */
static void test_random_slots(void **state)
{
	(void)state;
	struct fixture f;
	make_fixture(&f);
	uint64_t rng = 0x9e3779b97f4a7c15ULL;
	unsigned accepted = 0, rejected = 0;
	for (int n = 0; n < 100000; n++) {
		struct shmsched_slot s;
		uint64_t words[sizeof(s) / 8];
		for (size_t i = 0; i < sizeof(words) / 8; i++)
			words[i] = next_random(&rng);
		memcpy(&s, words, sizeof(s));
		if (n % 2 == 1) {
			uint64_t r = next_random(&rng);
			s.template_id = (uint32_t)(r % 5);
			s.n_extra = (uint16_t)((r >> 8) % 6);
			if ((r >> 16) % 8 != 0)
				s.flags = (uint16_t)((r >> 40) % 3);
			if ((r >> 44) % 2 != 0)
				s.deadline_ns = 0;
			for (unsigned i = 0; i < SHMSCHED_MAX_EXTRA; i++) {
				if ((r >> (20 + i)) % 8 != 0)
					s.extra[i].reserved = 0;
				s.extra[i].resource %= 8;
				if ((r >> (24 + i)) & 1)
					s.extra[i].quantity &= INT64_C(0xfffffff);
			}
		}
		struct record_pod out;
		char why[256];
		why[0] = '\0';
		int rc = record_decode(&s, &f.t, &f.res, &out, why, sizeof(why));
		if (rc != 0) {
			assert_int_equal(rc, -EINVAL);
			assert_true(why[0] != '\0');
			assert_non_null(strstr(why, "slot: "));
			rejected++;
			continue;
		}
		accepted++;
		const struct pod_spec *tmpl = &f.specs[s.template_id - 1];
		__int128 want[RES_MAX];
		for (unsigned r = 0; r < RES_MAX; r++)
			want[r] = tmpl->request.v[r];
		for (unsigned i = 0; i < s.n_extra; i++)
			want[s.extra[i].resource] += s.extra[i].quantity;
		for (unsigned r = 0; r < RES_MAX; r++) {
			assert_true(out.spec->request.v[r] >= 0);
			assert_true(want[r] == out.spec->request.v[r]);
		}
		assert_int_equal(out.spec->request.v[RES_PODS], 0);
		assert_int_equal(out.cookie, s.cookie);
		assert_int_equal(out.flags, s.flags);
		assert_true(s.flags != SHMSCHED_SLOT_FLAGS &&
			    (s.flags & ~SHMSCHED_SLOT_FLAGS) == 0);
		assert_int_equal(out.deadline_ns, s.deadline_ns);
		assert_true(s.deadline_ns == 0 || !(s.flags & SHMSCHED_SLOT_NO_WAIT));
	}
	assert_true(accepted > 1000);
	assert_true(rejected > 1000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_extras_is_the_template),
		cmocka_unit_test(test_extras_land_on_their_resources),
		cmocka_unit_test(test_extras_on_one_resource_add_up),
		cmocka_unit_test(test_extras_add_to_the_stand_ins),
		cmocka_unit_test(test_bad_template_id),
		cmocka_unit_test(test_too_many_extras),
		cmocka_unit_test(test_flags_and_deadline),
		cmocka_unit_test(test_reserved_must_be_zero),
		cmocka_unit_test(test_bad_resource),
		cmocka_unit_test(test_negative_quantity),
		cmocka_unit_test(test_overflow),
		cmocka_unit_test(test_unused_bytes_are_ignored),
		cmocka_unit_test(test_spec_is_the_template_without_extras),
		cmocka_unit_test(test_equal_slots_give_equal_bytes),
		cmocka_unit_test(test_reason_buffer_is_bounded),
		cmocka_unit_test(test_answer_fields),
		cmocka_unit_test(test_answer_cut_at_the_boundary),
		cmocka_unit_test(test_answer_cut_keeps_utf8_whole),
		cmocka_unit_test(test_random_slots),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
