/* tests/coord: the watch stream's incremental decoder (coord/watch.c,
 * etcd_decode_watch in coord/etcd_codec.c) with no etcd. The stream below
 * is etcd 3.4.23's own (Debian's etcd-server, one member, curl -N POST
 * /v3/watch from revision 1, then two puts and a delete; and a watch from
 * a compacted revision), cut to its fields; the shapes are etcd's
 * api/etcdserverpb/rpc.proto WatchResponse and mvccpb Event (type PUT is
 * the zero value, left out). Checks: every split of the bytes gives the
 * same messages; the resume revision follows events and progress, never a
 * "created" message; compaction is -ERANGE with etcd's oldest revision;
 * a line over its bound is refused before it is buffered, a message over
 * its events' bound too; damaged messages are refused naming the field;
 * the first error sticks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coord/coord.h"

#define HDR(rev) "\"header\":{\"cluster_id\":\"5743665100470862766\",\"revision\":\"" rev "\"}"

static const char stream[] =
	"{\"result\":{" HDR("1") ",\"created\":true}}\n"
	"{\"result\":{" HDR("2") ",\"events\":[{\"kv\":{\"key\":\"L3cvYTE=\",\"create_revision\":"
	"\"2\",\"mod_revision\":\"2\",\"version\":\"1\",\"value\":\"djE=\"}}]}}\n"
	"{\"result\":{" HDR("3") ",\"events\":[{\"kv\":{\"key\":\"L3cvYTI=\",\"create_revision\":"
	"\"3\",\"mod_revision\":\"3\",\"version\":\"1\",\"value\":\"djI=\"}}]}}\n"
	"{\"result\":{" HDR("4") ",\"events\":[{\"type\":\"DELETE\",\"kv\":{\"key\":\"L3cvYTE=\","
	"\"mod_revision\":\"4\"}}]}}\n";

static const char compacted[] =
	"{\"result\":{" HDR("4") ",\"created\":true}}\n"
	"{\"result\":{\"header\":{\"cluster_id\":\"5743665100470862766\"},\"canceled\":true,"
	"\"compact_revision\":\"3\"}}\n";

struct seen {
	int messages, created, events, deletes;
	char log[512];
};

static int on_message(void *ctx, const struct etcd_watch_message *m)
{
	struct seen *s = ctx;
	s->messages++;
	s->created += m->created;
	for (size_t i = 0; i < m->n_events; i++) {
		const struct etcd_watch_event *e = &m->events[i];
		s->events++;
		s->deletes += e->deleted;
		size_t n = strlen(s->log);
		snprintf(s->log + n, sizeof(s->log) - n, "%c%s=%s@%lld ", e->deleted ? 'D' : 'P',
			 (const char *)e->kv.key, (const char *)e->kv.value,
			 (long long)e->kv.mod_revision);
	}
	return 0;
}

static void every_split_same(void **state)
{
	(void)state;
	size_t len = strlen(stream);
	for (size_t chunk = 1; chunk <= len; chunk = chunk < 16 ? chunk + 1 : chunk * 2) {
		struct seen s = {0};
		struct watch_stream w;
		watch_stream_init(&w, 0, 0, 1, on_message, &s);
		for (size_t off = 0; off < len; off += chunk)
			assert_int_equal(watch_stream_feed(&w, stream + off,
							   len - off < chunk ? len - off : chunk),
					 0);
		assert_int_equal(s.messages, 4);
		assert_int_equal(s.created, 1);
		assert_int_equal(s.events, 3);
		assert_int_equal(s.deletes, 1);
		assert_string_equal(s.log, "P/w/a1=v1@2 P/w/a2=v2@3 D/w/a1=@4 ");
		assert_int_equal(w.next_revision, 5);
		watch_stream_free(&w);
	}
}

static void resume_revision(void **state)
{
	(void)state;
	struct seen s = {0};
	struct watch_stream w;
	watch_stream_init(&w, 0, 0, 7, on_message, &s);
	/* created at the store's revision 40: the events from 7 are still
	 * to come, so the resume point stays 7. */
	const char created[] = "{\"result\":{" HDR("40") ",\"created\":true}}\r\n";
	assert_int_equal(watch_stream_feed(&w, created, strlen(created)), 0);
	assert_int_equal(w.next_revision, 7);
	/* A progress message: everything to 41 was sent. */
	const char progress[] = "{\"result\":{" HDR("41") "}}\n\n";
	assert_int_equal(watch_stream_feed(&w, progress, strlen(progress)), 0);
	assert_int_equal(w.next_revision, 42);
	assert_int_equal(s.messages, 2);
	watch_stream_free(&w);
}

static void compaction_is_erange(void **state)
{
	(void)state;
	struct seen s = {0};
	struct watch_stream w;
	watch_stream_init(&w, 0, 0, 2, on_message, &s);
	assert_int_equal(watch_stream_feed(&w, compacted, strlen(compacted)), -ERANGE);
	assert_int_equal(w.compact_revision, 3);
	assert_non_null(strstr(w.error, "revision 2 has been compacted; the oldest kept is 3"));
	/* Sticky: nothing more is taken. */
	assert_int_equal(watch_stream_feed(&w, stream, strlen(stream)), -ERANGE);
	assert_int_equal(s.messages, 1);
	watch_stream_free(&w);
	/* Canceled for another reason. */
	watch_stream_init(&w, 0, 0, 2, on_message, &s);
	const char cancel[] = "{\"result\":{" HDR("9") ",\"canceled\":true}}\n";
	assert_int_equal(watch_stream_feed(&w, cancel, strlen(cancel)), -ECANCELED);
	watch_stream_free(&w);
}

static void bounds(void **state)
{
	(void)state;
	struct seen s = {0};
	struct watch_stream w;
	/* A line of 300 bytes under a bound of 256: refused as it arrives,
	 * never buffered past the bound, whatever the split. */
	char line[301];
	memset(line, ' ', 300);
	line[300] = '\0';
	watch_stream_init(&w, 256, 0, 1, on_message, &s);
	int rc = 0;
	for (size_t off = 0; off < 300 && rc == 0; off += 100)
		rc = watch_stream_feed(&w, line + off, 100);
	assert_int_equal(rc, -EMSGSIZE);
	assert_true(w.len <= 256 && w.cap <= 256);
	assert_non_null(strstr(w.error, "over 256 bytes"));
	watch_stream_free(&w);
	/* Exactly the bound passes (a line of spaces is not JSON: -EPROTO,
	 * read whole). */
	watch_stream_init(&w, 256, 0, 1, on_message, &s);
	assert_int_equal(watch_stream_feed(&w, line, 256), 0);
	assert_int_equal(watch_stream_feed(&w, "\n", 1), -EPROTO);
	watch_stream_free(&w);
	/* Events over the bound. */
	char many[2048] = "{\"result\":{\"events\":[";
	for (int i = 0; i < 3; i++)
		strcat(many, i ? ",{\"kv\":{\"key\":\"YQ==\"}}" : "{\"kv\":{\"key\":\"YQ==\"}}");
	strcat(many, "]}}\n");
	watch_stream_init(&w, 0, 2, 1, on_message, &s);
	assert_int_equal(watch_stream_feed(&w, many, strlen(many)), -EMSGSIZE);
	assert_non_null(strstr(w.error, "3 events in one message; at most 2"));
	watch_stream_free(&w);
	watch_stream_init(&w, 0, 3, 1, on_message, &s);
	assert_int_equal(watch_stream_feed(&w, many, strlen(many)), 0);
	watch_stream_free(&w);
}

static void refuses_damaged(void **state)
{
	(void)state;
	static const struct {
		const char *line;
		int rc;
		const char *says;
	} bad[] = {
		{"[]", -EPROTO, "expected a JSON object"},
		{"{\"x\":1}", -EPROTO, "field result: missing"},
		{"{\"result\":[]}", -EPROTO, "field result: expected an object"},
		{"{\"result\":{\"events\":{}}}", -EPROTO, "field events: expected an array"},
		{"{\"result\":{\"events\":[1]}}", -EPROTO, "field events[]: expected an object"},
		{"{\"result\":{\"events\":[{\"type\":\"FOO\",\"kv\":{\"key\":\"YQ==\"}}]}}", -EPROTO,
		 "field events[].type: \"FOO\" is not PUT or DELETE"},
		{"{\"result\":{\"events\":[{\"type\":1}]}}", -EPROTO, "events[].type"},
		{"{\"result\":{\"events\":[{}]}}", -EPROTO, "field events[].kv: missing"},
		{"{\"result\":{\"events\":[{\"kv\":{}}]}}", -EPROTO, "field events[].kv.key: missing"},
		{"{\"result\":{\"events\":[{\"kv\":{\"key\":\"YQ\"}}]}}", -EPROTO, "not padded base64"},
		{"{\"result\":{\"events\":[{\"kv\":{\"key\":\"YQ==\",\"mod_revision\":\"x\"}}]}}",
		 -EPROTO, "mod_revision"},
		{"{\"result\":{\"canceled\":\"yes\"}}", -EPROTO, "field canceled"},
		{"{\"result\":{},\"result\":{}}", -EPROTO, "not JSON"},
		{"{\"error\":{\"grpc_code\":14,\"message\":\"etcdserver: no leader\"}}", -EIO,
		 "etcdserver: no leader"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct seen s = {0};
		struct watch_stream w;
		watch_stream_init(&w, 0, 0, 1, on_message, &s);
		char text[512];
		snprintf(text, sizeof(text), "%s\n", bad[i].line);
		int rc = watch_stream_feed(&w, text, strlen(text));
		if (rc != bad[i].rc || !strstr(w.error, bad[i].says))
			fail_msg("case %zu (%s): rc %d, \"%s\"; expected %d naming \"%s\"", i,
				 bad[i].line, rc, w.error, bad[i].rc, bad[i].says);
		assert_int_equal(s.messages, 0);
		watch_stream_free(&w);
	}
}

static int stop_at_two(void *ctx, const struct etcd_watch_message *m)
{
	(void)m;
	int *n = ctx;
	return ++*n == 2 ? 42 : 0;
}

static void caller_stops(void **state)
{
	(void)state;
	int n = 0;
	struct watch_stream w;
	watch_stream_init(&w, 0, 0, 1, stop_at_two, &n);
	assert_int_equal(watch_stream_feed(&w, stream, strlen(stream)), 42);
	assert_int_equal(n, 2);
	/* The message it stopped at was handed: resume after it. */
	assert_int_equal(w.next_revision, 3);
	watch_stream_free(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_split_same),
		cmocka_unit_test(resume_revision),
		cmocka_unit_test(compaction_is_erange),
		cmocka_unit_test(bounds),
		cmocka_unit_test(refuses_damaged),
		cmocka_unit_test(caller_stops),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
