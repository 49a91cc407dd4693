/* The gateway's bearer tokens (gateway/auth.h): a static token file read
 * once at start, looked up per request.
 *
 * Parsing walks the text once, a record a line (a quoted field may hold a
 * newline, as RFC 4180 allows; CR before LF is dropped), each field copied
 * into a bounded buffer; a field past its bound refuses the file rather
 * than cut a token or a name. Lookup compares the presented token with
 * every record's, each comparison over the longer of the two lengths
 * without stopping at the first difference, so a token's prefix cannot be
 * found by timing (a few hundred records cost microseconds).
 */
#include "gateway/auth.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

struct gw_token_rec {
	char token[GW_TOKEN_MAX];
	size_t token_len;
	struct gw_identity id;
};

struct gw_tokens {
	struct gw_token_rec *recs;
	size_t n, cap;
};

/* One field at *p (end: text + len) into out[0..cap) (NUL-terminated);
 * *p moves past it and its comma, *eol says the record ended. Returns 0,
 * -EINVAL (a bad quote) or -ENAMETOOLONG. */
static int field(const char **p, const char *end, char *out, size_t cap,
		 size_t *out_len, bool *eol)
{
	const char *s = *p;
	size_t n = 0;
	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	*eol = false;
	if (s < end && *s == '"') {
		s++;
		for (;;) {
			if (s == end)
				return -EINVAL; /* unterminated quote */
			if (*s == '"') {
				if (s + 1 < end && s[1] == '"') {
					s++;
				} else {
					s++;
					break;
				}
			}
			if (n + 1 >= cap)
				return -ENAMETOOLONG;
			out[n++] = *s++;
		}
		if (s < end && *s == '\r')
			s++;
		if (s < end && *s != ',' && *s != '\n')
			return -EINVAL; /* text after the closing quote */
	} else {
		while (s < end && *s != ',' && *s != '\n') {
			if (*s == '"')
				return -EINVAL; /* a quote inside a bare field */
			if (n + 1 >= cap)
				return -ENAMETOOLONG;
			out[n++] = *s++;
		}
		if (n > 0 && out[n - 1] == '\r' && (s == end || *s == '\n'))
			n--;
	}
	out[n] = '\0';
	*out_len = n;
	if (s == end || *s == '\n')
		*eol = true;
	if (s < end)
		s++;
	*p = s;
	return 0;
}

/* The groups field "g1, g2,,g3" as "g1,g2,g3" (kube trims each and drops
 * empty ones). */
static void join_groups(const char *in, char *out, size_t cap)
{
	size_t n = 0;
	out[0] = '\0';
	while (*in != '\0') {
		while (*in == ' ' || *in == '\t')
			in++;
		const char *e = in;
		while (*e != '\0' && *e != ',')
			e++;
		const char *t = e;
		while (t > in && (t[-1] == ' ' || t[-1] == '\t'))
			t--;
		size_t len = (size_t)(t - in);
		if (len > 0 && n + len + 2 <= cap) {
			if (n > 0)
				out[n++] = ',';
			memcpy(out + n, in, len);
			n += len;
			out[n] = '\0';
		}
		in = *e == ',' ? e + 1 : e;
	}
}

static bool same_token(const char *a, size_t alen, const char *b, size_t blen)
{
	size_t n = alen > blen ? alen : blen;
	unsigned char diff = alen != blen;
	for (size_t i = 0; i < n; i++)
		diff |= (unsigned char)((i < alen ? a[i] : 0) ^ (i < blen ? b[i] : 0));
	return diff == 0;
}

int gw_tokens_parse(const char *text, size_t len, struct gw_tokens **out,
		    char *err, size_t err_len)
{
	*out = NULL;
	struct gw_tokens *t = calloc(1, sizeof(*t));
	if (t == NULL) {
		snprintf(err, err_len, "out of memory");
		return -ENOMEM;
	}
	const char *p = text, *end = text + len;
	unsigned line = 0;
	char groups[GW_GROUPS_MAX * 4]; /* the raw field: trimmed after */
	char junk[GW_GROUPS_MAX];       /* fields past the fourth */
	int rc = 0;
	while (p < end) {
		line++;
		/* A blank line is skipped, as Go's csv reader skips it. */
		const char *q = p;
		while (q < end && (*q == ' ' || *q == '\t' || *q == '\r'))
			q++;
		if (q == end)
			break;
		if (*q == '\n') {
			p = q + 1;
			continue;
		}
		if (t->n == GW_TOKENS_MAX) {
			snprintf(err, err_len, "line %u: more than %u tokens", line,
				 GW_TOKENS_MAX);
			rc = -E2BIG;
			goto fail;
		}
		if (t->n == t->cap) {
			size_t cap = t->cap ? t->cap * 2 : 16;
			struct gw_token_rec *r = realloc(t->recs, cap * sizeof(*r));
			if (r == NULL) {
				snprintf(err, err_len, "out of memory");
				rc = -ENOMEM;
				goto fail;
			}
			t->recs = r;
			t->cap = cap;
		}
		struct gw_token_rec *r = &t->recs[t->n];
		memset(r, 0, sizeof(*r));
		static const char *const names[] = {"the token", "the user name",
						    "the uid", "the groups"};
		const size_t caps[] = {GW_TOKEN_MAX, GW_USER_MAX, GW_USER_MAX,
				       sizeof(groups)};
		char *dst[] = {r->token, r->id.user, r->id.uid, groups};
		unsigned f = 0;
		bool eol = false;
		groups[0] = '\0';
		while (!eol) {
			size_t n;
			char *to = f < 4 ? dst[f] : junk;
			size_t cap = f < 4 ? caps[f] : sizeof(junk);
			rc = field(&p, end, to, cap, &n, &eol);
			if (rc == -ENAMETOOLONG) {
				snprintf(err, err_len, "line %u: %s: longer than %zu bytes",
					 line, f < 4 ? names[f] : "a field", cap - 1);
				rc = -EINVAL;
				goto fail;
			}
			if (rc < 0) {
				snprintf(err, err_len, "line %u, field %u: a double quote "
					 "out of place (RFC 4180: a quoted field is "
					 "\"...\", with \"\" for a quote inside)", line,
					 f + 1);
				goto fail;
			}
			if (f == 0)
				r->token_len = n;
			f++;
		}
		if (f < 3) {
			snprintf(err, err_len, "line %u: %u field%s; expected at least 3: "
				 "token,user,uid[,\"group1,group2\"]", line, f,
				 f == 1 ? "" : "s");
			rc = -EINVAL;
			goto fail;
		}
		if (r->token_len == 0 || r->id.user[0] == '\0') {
			snprintf(err, err_len, "line %u: %s is empty", line,
				 r->token_len == 0 ? "the token" : "the user name");
			rc = -EINVAL;
			goto fail;
		}
		for (size_t i = 0; i < r->token_len; i++)
			if ((unsigned char)r->token[i] <= 0x20 || r->token[i] == 0x7f) {
				snprintf(err, err_len, "line %u: the token holds a space "
					 "or a control character (a bearer token "
					 "cannot: RFC 6750)", line);
				rc = -EINVAL;
				goto fail;
			}
		join_groups(groups, r->id.groups, sizeof(r->id.groups));
		if (strlen(groups) > 0 && strlen(r->id.groups) + 1 >= sizeof(r->id.groups)) {
			snprintf(err, err_len, "line %u: the groups: longer than %d bytes",
				 line, GW_GROUPS_MAX - 1);
			rc = -EINVAL;
			goto fail;
		}
		for (size_t k = 0; k < t->n; k++)
			if (same_token(t->recs[k].token, t->recs[k].token_len, r->token,
				       r->token_len)) {
				snprintf(err, err_len, "line %u: the same token as line "
					 "%zu's record (user %s): each token names "
					 "one user", line, k + 1, t->recs[k].id.user);
				rc = -EINVAL;
				goto fail;
			}
		t->n++;
	}
	*out = t;
	return 0;
fail:
	gw_tokens_free(t);
	return rc;
}

int gw_tokens_load(const char *path, struct gw_tokens **out, char *warn,
		   size_t warn_len, char *err, size_t err_len)
{
	*out = NULL;
	warn[0] = '\0';
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		int e = errno;
		snprintf(err, err_len, "--token-file %s: %s", path, strerror(e));
		return -e;
	}
	struct stat st;
	int rc = 0;
	char *text = NULL;
	if (fstat(fd, &st) < 0) {
		rc = -errno;
		snprintf(err, err_len, "--token-file %s: %s", path, strerror(-rc));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, err_len, "--token-file %s: not a regular file", path);
		rc = -EINVAL;
		goto out;
	}
	if (st.st_mode & (S_IROTH | S_IWOTH | S_IWGRP)) {
		snprintf(err, err_len, "--token-file %s: mode %04o: other users may "
			 "%s it; the tokens are passwords: chmod 600 (or 640 for "
			 "the gateway's group)", path, (unsigned)(st.st_mode & 07777),
			 st.st_mode & S_IROTH ? "read" : "write");
		rc = -EPERM;
		goto out;
	}
	if (st.st_mode & S_IRGRP)
		snprintf(warn, warn_len, "--token-file %s: mode %04o: its group (gid "
			 "%u) may read the tokens", path, (unsigned)(st.st_mode & 07777),
			 (unsigned)st.st_gid);
	if (st.st_size > (off_t)GW_TOKEN_FILE_MAX) {
		snprintf(err, err_len, "--token-file %s: %lld bytes; at most %u",
			 path, (long long)st.st_size, GW_TOKEN_FILE_MAX);
		rc = -EFBIG;
		goto out;
	}
	size_t len = (size_t)st.st_size, got = 0;
	text = malloc(len + 1);
	if (text == NULL) {
		snprintf(err, err_len, "out of memory");
		rc = -ENOMEM;
		goto out;
	}
	while (got < len) {
		ssize_t n = read(fd, text + got, len - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			rc = n < 0 ? -errno : -EIO;
			snprintf(err, err_len, "--token-file %s: %s", path,
				 n < 0 ? strerror(-rc) : "shorter than its size");
			goto out;
		}
		got += (size_t)n;
	}
	char perr[512];
	rc = gw_tokens_parse(text, len, out, perr, sizeof(perr));
	if (rc < 0)
		snprintf(err, err_len, "--token-file %s: %s", path, perr);
	else if ((*out)->n == 0) {
		gw_tokens_free(*out);
		*out = NULL;
		snprintf(err, err_len, "--token-file %s: no tokens", path);
		rc = -EINVAL;
	}
out:
	if (text != NULL) {
		/* The tokens are secrets: not left in freed memory. */
		explicit_bzero(text, len);
		free(text);
	}
	close(fd);
	return rc;
}

void gw_tokens_free(struct gw_tokens *t)
{
	if (t == NULL)
		return;
	if (t->recs != NULL)
		explicit_bzero(t->recs, t->cap * sizeof(*t->recs));
	free(t->recs);
	free(t);
}

size_t gw_tokens_count(const struct gw_tokens *t)
{
	return t != NULL ? t->n : 0;
}

const struct gw_identity *gw_tokens_find(const struct gw_tokens *t,
					 const char *token, size_t len)
{
	if (t == NULL || len == 0 || len >= GW_TOKEN_MAX)
		return NULL;
	const struct gw_identity *found = NULL;
	for (size_t k = 0; k < t->n; k++)
		if (same_token(t->recs[k].token, t->recs[k].token_len, token, len))
			found = &t->recs[k].id;
	return found;
}

bool gw_groups_has(const char *groups, const char *group)
{
	size_t gl = strlen(group);
	if (gl == 0)
		return false;
	for (const char *p = groups; *p != '\0';) {
		const char *e = strchr(p, ',');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		if (n == gl && memcmp(p, group, gl) == 0)
			return true;
		if (e == NULL)
			break;
		p = e + 1;
	}
	return false;
}

const char *gw_bearer_token(const char *header, size_t *len)
{
	if (header == NULL || strncasecmp(header, "Bearer ", 7) != 0)
		return NULL;
	const char *p = header + 7;
	while (*p == ' ')
		p++;
	size_t n = strlen(p);
	while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t'))
		n--;
	if (n == 0)
		return NULL;
	*len = n;
	return p;
}
