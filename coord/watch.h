/* etcd's watch stream (POST /v3/watch on the gRPC gateway, etcd 3.4): a
 * chunked HTTP answer of newline-delimited JSON messages, each
 * {"result":{...}} (coord/etcd_codec.h, etcd_decode_watch), read with a
 * strict incremental decoder: bytes in, whole messages out, a line over
 * its bound refused before it is buffered (outside input:
 * tests/fuzz/fuzz_watch.c).
 *
 * Resuming: the stream tracks the revision to resume from (the last
 * event's mod_revision + 1, or a progress message's revision + 1; never a
 * "created" message's, which comes before the events it announces). When
 * the start revision has been compacted away etcd cancels the watch with
 * compact_revision: watch_run returns -ERANGE and the caller re-lists
 * (coord/rebuild.h) and watches again from that list's revision + 1.
 *
 * Threads: a stream is one caller's; watch_run blocks on its thread. */
#ifndef SHMSCHED_COORD_WATCH_H
#define SHMSCHED_COORD_WATCH_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "coord/etcd_codec.h"

/* A line's bound (a message: its events' keys and values in base64) and a
 * message's events', when the options leave them 0. */
#define WATCH_DEFAULT_MAX_LINE (4u << 20)
#define WATCH_DEFAULT_MAX_EVENTS 10000

/* The incremental decoder. */
struct watch_stream {
	char *buf;
	size_t len, cap;
	size_t max_line, max_events;
	/* The revision to resume from (0 until something is seen). */
	int64_t next_revision;
	/* Set on -ERANGE: etcd's oldest kept revision. */
	int64_t compact_revision;
	int (*on_message)(void *ctx, const struct etcd_watch_message *m);
	void *ctx;
	int rc; /* the first error, kept */
	char error[256];
};

/* max_line, max_events 0: the defaults. */
void watch_stream_init(struct watch_stream *w, size_t max_line, size_t max_events,
		       int64_t start_revision,
		       int (*on_message)(void *ctx, const struct etcd_watch_message *m),
		       void *ctx);
void watch_stream_free(struct watch_stream *w);

/* Feeds len bytes of the answer's body (any split). Calls on_message once
 * a complete message, in order. 0; on_message's non-zero return; -ERANGE
 * the watch was canceled for compaction (compact_revision set); -ECANCELED
 * canceled otherwise; -EMSGSIZE a line over max_line or a message over
 * max_events; -EPROTO a line that is not a watch message; -EIO the
 * stream's error message. error says why; after an error the stream
 * takes nothing more (the same error again). */
int watch_stream_feed(struct watch_stream *w, const void *data, size_t len);

/* One key range of a stream's watches: [key, range_end), or the key
 * alone when range_end is NULL. */
struct watch_range {
	const void *key;
	size_t key_len;
	const void *range_end;
	size_t range_end_len;
};

struct watch_options {
	/* Comma-separated base URLs, tried in order until one connects. */
	const char *endpoints;
	const void *key;
	size_t key_len;
	const void *range_end; /* NULL: the key alone */
	size_t range_end_len;
	/* n_ranges > 0: one watch per range in this one stream (one
	 * create_request each, all from start_revision), instead of key and
	 * range_end. Each watch's events come in revision order, but etcd
	 * may interleave two watches' out of order (one catching up while
	 * another is current), so a stream of several broken off is resumed
	 * from *next_revision only by a caller that can afford to miss an
	 * event: re-list instead. */
	const struct watch_range *ranges;
	size_t n_ranges;
	int64_t start_revision; /* 0: from now */
	size_t max_line, max_events;
	/* 0: 1000 ms. */
	long connect_timeout_ms;
	/* Polled about every 100 ms: set, watch_run returns -ECANCELED. */
	const atomic_bool *stop;
};

/* One stream until it ends. Returns on_message's non-zero return; -ERANGE
 * compacted (*next_revision: the oldest kept); -ECANCELED stopped, or
 * etcd canceled the watch; -EIO the stream ended or broke, and
 * -ECONNREFUSED no endpoint connected (*next_revision: where to resume);
 * watch_stream_feed's errors. err (errlen bytes) says why. */
int watch_run(const struct watch_options *o,
	      int (*on_message)(void *ctx, const struct etcd_watch_message *m), void *ctx,
	      int64_t *next_revision, char *err, size_t errlen);

#endif
