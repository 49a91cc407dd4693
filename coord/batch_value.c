/* A batch key's value (coord/batch_value.h): the writer that packs
 * placements into one text, and the strict decoder of what etcd gives
 * back. Invariants: a text that decodes is "4", then 1 to
 * BATCH_PLACEMENTS_MAX lines of a uid, one space and a placement value
 * that placement_value_decode takes, uids strictly ascending, at most
 * BATCH_VALUE_MAX bytes; the writer makes only such texts, and
 * decode(text) then add() of each placement gives back the same bytes.
 * Cost: one memchr a line and one placement decode a line (twice in the
 * decoder: check, then walk), one placement encode a line in the writer;
 * no allocation. */
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "coord/batch_value.h"
#include "coord/value_text.h"
#include "coord/commit_queue.h"
#include "coord/etcd_client.h"
#include "coord/shard_map.h"

static_assert(BATCH_UID_MAX == COMMIT_UID_MAX, "a batch holds the committer's uids");

/* The size check of batch_value.h: COMMIT_MAX_BATCH puts of a value of
 * BATCH_VALUE_MAX bytes under the longest key, both base64 (4 bytes each
 * 3), with 128 bytes a put for its JSON ({"request_put":{"key":"","value":
 * "","lease":"<int64>"}}) and 4 KiB for the compares, the lane key's put
 * and the envelope. */
#define B64(n) (4u * (((size_t)(n) + 2u) / 3u))
#define BATCH_KEY_MAX                                                       \
	(COMMIT_PREFIX_MAX + sizeof("shards/") - 1 + SHARD_NAME_MAX + sizeof("/" BATCH_KEY_DIR) - 1 + \
	 BATCH_KEY_NAME_MAX)
static_assert(COMMIT_MAX_BATCH * (B64(BATCH_VALUE_MAX) + B64(BATCH_KEY_MAX) + 128u) + 4096u <=
		      ETCD_MAX_REQUEST_BYTES,
	      "a transaction of batch keys at BATCH_VALUE_MAX passes etcd's request bound");

static bool uid_ok(const char *s, size_t n)
{
	return value_text_name(s, n, 1, BATCH_UID_MAX);
}

/* a (an bytes) strictly before b (bn bytes), bytewise, a prefix first. */
static bool uid_before(const char *a, size_t an, const char *b, size_t bn)
{
	int c = memcmp(a, b, an < bn ? an : bn);
	return c < 0 || (c == 0 && an < bn);
}

void batch_value_start(struct batch_writer *w)
{
	w->text[0] = '4';
	w->text[1] = '\0';
	w->len = 1;
	w->count = 0;
	w->last_uid[0] = '\0';
}

int batch_value_add(struct batch_writer *w, const char *uid, const struct placement_value *v)
{
	size_t uid_len = strnlen(uid, BATCH_UID_MAX + 1);
	if (!uid_ok(uid, uid_len) ||
	    (w->count > 0 && !uid_before(w->last_uid, strlen(w->last_uid), uid, uid_len)))
		return -EINVAL;
	char value[PLACEMENT_VALUE_MAX + 1];
	int n = placement_value_encode(v, value);
	if (n < 0)
		return -EINVAL;
	size_t line = 1 + uid_len + 1 + (size_t)n;
	if (w->count >= BATCH_PLACEMENTS_MAX || w->len + line > BATCH_VALUE_MAX)
		return -E2BIG;
	char *p = w->text + w->len;
	*p++ = '\n';
	memcpy(p, uid, uid_len);
	p += uid_len;
	*p++ = ' ';
	memcpy(p, value, (size_t)n);
	p += n;
	*p = '\0';
	w->len += line;
	w->count++;
	memcpy(w->last_uid, uid, uid_len + 1);
	return 0;
}

bool batch_value_is(const void *text, size_t len)
{
	const char *s = text;
	return len >= 2 && s[0] == '4' && s[1] == '\n';
}

/* A refusal: nothing decoded is kept (callbacks run only on a whole
 * value), so nothing is zeroed. */
#define refuse(msg, msglen, ...) value_text_refuse(NULL, 0, msg, msglen, __VA_ARGS__)

/* One pass over the lines: checks each, and calls fn when it is not NULL
 * (the second pass, over a text the first found whole). */
static int walk(const char *s, size_t len, batch_value_fn fn, void *ctx, char *msg, size_t msglen)
{
	struct placement_value v;
	char uid[BATCH_UID_MAX + 1];
	const char *prev = NULL;
	size_t prev_len = 0;
	unsigned count = 0;
	for (size_t start = 2; start <= len;) {
		const char *line = s + start;
		const char *nl = memchr(line, '\n', len - start);
		size_t line_len = nl != NULL ? (size_t)(nl - line) : len - start;
		if (++count > BATCH_PLACEMENTS_MAX)
			return refuse(msg, msglen,
				      "batch value: more than %d placements; expected at most %d",
				      BATCH_PLACEMENTS_MAX, BATCH_PLACEMENTS_MAX);
		const char *sp = memchr(line, ' ', line_len);
		size_t uid_len = sp != NULL ? (size_t)(sp - line) : line_len;
		if (!uid_ok(line, uid_len))
			return refuse(msg, msglen,
				      "batch value: line %u: uid \"%.*s\" is not 1 to %d bytes of "
				      "A-Z, a-z, 0-9, '.', '_', '-' followed by a space",
				      count + 1, (int)(uid_len > 70 ? 70 : uid_len), line,
				      BATCH_UID_MAX);
		if (sp == NULL)
			return refuse(msg, msglen,
				      "batch value: line %u: uid \"%.*s\" has no placement value "
				      "after it",
				      count + 1, (int)uid_len, line);
		if (prev != NULL && !uid_before(prev, prev_len, line, uid_len))
			return refuse(msg, msglen,
				      "batch value: line %u: uid \"%.*s\" is not above the line "
				      "before's \"%.*s\"; expected uids strictly ascending",
				      count + 1, (int)uid_len, line, (int)prev_len, prev);
		char why[256];
		if (placement_value_decode(sp + 1, line_len - uid_len - 1, &v, why, sizeof(why)) != 0)
			return refuse(msg, msglen, "batch value: line %u (uid \"%.*s\"): %s",
				      count + 1, (int)uid_len, line, why);
		if (fn != NULL) {
			memcpy(uid, line, uid_len);
			uid[uid_len] = '\0';
			int rc = fn(ctx, uid, &v);
			if (rc < 0)
				return rc;
		}
		prev = line;
		prev_len = uid_len;
		if (nl == NULL)
			break;
		start += line_len + 1;
	}
	return (int)count;
}

int batch_value_decode(const void *text, size_t len, batch_value_fn fn, void *ctx, char *msg,
		       size_t msglen)
{
	const char *s = text;
	if (msglen)
		msg[0] = '\0';
	if (len > BATCH_VALUE_MAX)
		return refuse(msg, msglen, "batch value: %zu bytes; expected at most %d", len,
			      BATCH_VALUE_MAX);
	if (!batch_value_is(s, len) || len == 2)
		return refuse(msg, msglen,
			      "batch value: starts \"%.*s\"; expected the version line \"4\" "
			      "and at least one placement line",
			      (int)(len > 8 ? 8 : len), s);
	int count = walk(s, len, NULL, NULL, msg, msglen);
	if (count < 0 || fn == NULL)
		return count;
	return walk(s, len, fn, ctx, msg, msglen);
}
