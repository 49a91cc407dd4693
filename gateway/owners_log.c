/* The gateway's owners log (gateway/owners_log.h: the format, the bounds
 * and why the order append, sync, submit makes a lost line fail closed).
 *
 * In memory: a table of the live entries by cookie (open addressing,
 * linear probing at most half full, backward-shift deletion), each entry
 * one allocation holding its user and its name. The file is only
 * appended to, and rewritten whole by compaction; `bytes` and `lines`
 * follow it, so dead lines (lines - live entries) are known without
 * reading it again. Reading walks the text once, each line checked
 * against GW_OWNERS_LINE_MAX before it is decoded into bounded buffers.
 *
 * Cost: an append is one write() and one fdatasync() for a burst of pods
 * (the dispatcher's, up to 256), plus a table insert each; compaction
 * writes the live entries once, and runs when the dead lines outnumber
 * them, so it costs O(1) amortised per line appended.
 */
#include "gateway/owners_log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gateway/decode.h"

struct gw_owner {
	uint64_t cookie;
	uint16_t user_len, name_len;
	char text[];        /* user, NUL, name, NUL */
};

struct gw_owners {
	struct gw_owners_limits lim;
	char *path;         /* NULL: parsed text only, no file */
	int fd;             /* -1: no file */
	bool broken;        /* a failed write could not be undone */
	size_t bytes;       /* the file's */
	size_t lines;       /* lines after the header */
	struct gw_owner **tab;
	size_t mask, n;
};

static const struct gw_owners_limits limits_default = {
	.max_bytes = GW_OWNERS_FILE_MAX_DEFAULT,
	.max_entries = GW_OWNERS_ENTRIES_DEFAULT,
	.compact_min = GW_OWNERS_COMPACT_MIN_DEFAULT,
};

/* --- the table ------------------------------------------------------------ */

static size_t tab_find(const struct gw_owners *o, uint64_t cookie)
{
	if (o->tab == NULL)
		return SIZE_MAX;
	for (size_t i = cookie & o->mask; o->tab[i] != NULL; i = (i + 1) & o->mask)
		if (o->tab[i]->cookie == cookie)
			return i;
	return SIZE_MAX;
}

static void tab_insert(struct gw_owner **tab, size_t mask, struct gw_owner *e)
{
	size_t i = e->cookie & mask;
	while (tab[i] != NULL)
		i = (i + 1) & mask;
	tab[i] = e;
}

/* Puts e (owned from here), replacing an entry of its cookie. -ENOMEM. */
static int tab_put(struct gw_owners *o, struct gw_owner *e)
{
	size_t i = tab_find(o, e->cookie);
	if (i != SIZE_MAX) {
		free(o->tab[i]);
		o->tab[i] = e;
		return 0;
	}
	if (o->tab == NULL || (o->n + 1) * 2 > o->mask + 1) {
		size_t cap = o->tab == NULL ? 64 : (o->mask + 1) * 2;
		struct gw_owner **t = calloc(cap, sizeof(*t));
		if (t == NULL)
			return -ENOMEM;
		for (size_t k = 0; o->tab != NULL && k <= o->mask; k++)
			if (o->tab[k] != NULL)
				tab_insert(t, cap - 1, o->tab[k]);
		free(o->tab);
		o->tab = t;
		o->mask = cap - 1;
	}
	tab_insert(o->tab, o->mask, e);
	o->n++;
	return 0;
}

/* Removes the entry at bucket i: backward-shift deletion keeps linear
 * probing exact without tombstones. */
static void tab_del(struct gw_owners *o, size_t i)
{
	free(o->tab[i]);
	size_t j = i;
	for (;;) {
		j = (j + 1) & o->mask;
		if (o->tab[j] == NULL)
			break;
		size_t home = o->tab[j]->cookie & o->mask;
		bool stays = i <= j ? (i < home && home <= j) : (i < home || home <= j);
		if (stays)
			continue;
		o->tab[i] = o->tab[j];
		i = j;
	}
	o->tab[i] = NULL;
	o->n--;
}

static struct gw_owner *entry_new(const char *user, size_t user_len,
				  const char *name, size_t name_len)
{
	struct gw_owner *e = malloc(sizeof(*e) + user_len + name_len + 2);
	if (e == NULL)
		return NULL;
	e->cookie = gw_cookie(name, name_len);
	e->user_len = (uint16_t)user_len;
	e->name_len = (uint16_t)name_len;
	memcpy(e->text, user, user_len);
	e->text[user_len] = '\0';
	memcpy(e->text + user_len + 1, name, name_len);
	e->text[user_len + 1 + name_len] = '\0';
	return e;
}

static const char *entry_name(const struct gw_owner *e)
{
	return e->text + e->user_len + 1;
}

/* --- the line format ------------------------------------------------------- */

static bool plain(unsigned char c)
{
	return c >= 0x21 && c <= 0x7e && c != '%';
}

static const char hex_digits[] = "0123456789ABCDEF";

/* s[0..len) escaped into out (room for 3 * len); returns the bytes. */
static size_t escape(char *out, const char *s, size_t len)
{
	size_t k = 0;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		if (plain(c)) {
			out[k++] = (char)c;
		} else {
			out[k++] = '%';
			out[k++] = hex_digits[c >> 4];
			out[k++] = hex_digits[c & 15];
		}
	}
	return k;
}

static int hex_value(char c)
{
	const char *p = c != '\0' ? strchr(hex_digits, c) : NULL;
	return p != NULL ? (int)(p - hex_digits) : -1;
}

/* Decodes the field p[0..n) into out[0..cap). Returns NULL with *out_len,
 * or what is wrong (at column *col, 1-based within the field). */
static const char *unescape(const char *p, size_t n, char *out, size_t cap,
			    size_t *out_len, size_t *col)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)p[i];
		*col = i + 1;
		if (k == cap)
			return "longer than its bound";
		if (c == '%') {
			int hi = i + 2 < n ? hex_value(p[i + 1]) : -1;
			int lo = i + 2 < n ? hex_value(p[i + 2]) : -1;
			if (hi < 0 || lo < 0)
				return "'%' not followed by two upper-case hex digits";
			unsigned char b = (unsigned char)(hi << 4 | lo);
			if (plain(b))
				return "an escape of a byte that is written as itself "
				       "(one spelling only)";
			out[k++] = (char)b;
			i += 2;
		} else if (plain(c)) {
			out[k++] = (char)c;
		} else {
			return "a byte that must be written %XX (a space, a control "
			       "byte, '%' or a byte over 0x7e)";
		}
	}
	*out_len = k;
	return NULL;
}

/* Whether name[0..len) is a NAMESPACE/NAME the gateway's decoder takes. */
static const char *check_pod_name(const char *name, size_t len)
{
	const char *slash = memchr(name, '/', len);
	if (slash == NULL)
		return "no '/' between namespace and name";
	size_t ns_len = (size_t)(slash - name), n_len = len - ns_len - 1;
	if (ns_len == 0 || ns_len > GW_NAMESPACE_MAX)
		return "the namespace is empty or longer than 63 bytes";
	if (n_len == 0 || n_len > GW_NAME_MAX)
		return "the name is empty or longer than 253 bytes";
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)name[i];
		if (c < 0x20 || c == 0x7f)
			return "a control byte in the namespace or the name";
		if (c == '/' && name + i != slash)
			return "a second '/' (a namespace and a name hold none)";
	}
	return NULL;
}

/* --- reading --------------------------------------------------------------- */

#define FAIL(code, ...) do { \
		snprintf(err, err_len, __VA_ARGS__); \
		rc = (code); \
		goto fail; \
	} while (0)

int gw_owners_parse(const char *text, size_t len, const char *source,
		    const struct gw_owners_limits *lim, struct gw_owners **out,
		    size_t *cut, char *err, size_t err_len)
{
	if (lim == NULL)
		lim = &limits_default;
	*out = NULL;
	*cut = 0;
	int rc = 0;
	struct gw_owners *o = calloc(1, sizeof(*o));
	if (o == NULL) {
		snprintf(err, err_len, "%s: out of memory", source);
		return -ENOMEM;
	}
	o->lim = *lim;
	o->fd = -1;
	if (len > lim->max_bytes)
		FAIL(-EFBIG, "%s: %zu bytes, over the %zu an owners file may hold",
		     source, len, lim->max_bytes);
	/* A last line without its '\n' was not finished: cut off. */
	size_t end = len;
	while (end > 0 && text[end - 1] != '\n')
		end--;
	*cut = len - end;
	size_t line = 0;
	char user[GW_OWNERS_USER_MAX], name[GW_NAMESPACE_MAX + 1 + GW_NAME_MAX];
	for (size_t at = 0; at < end;) {
		const char *s = text + at;
		const char *nl = memchr(s, '\n', end - at);
		size_t n = (size_t)(nl - s);
		at += n + 1;
		line++;
		if (n > GW_OWNERS_LINE_MAX)
			FAIL(-EINVAL, "%s:%zu: longer than %u bytes (expected \"+ USER "
			     "NAMESPACE/NAME\" or \"- USER NAMESPACE/NAME\")", source,
			     line, GW_OWNERS_LINE_MAX);
		const char *nul = memchr(s, '\0', n);
		if (nul != NULL)
			FAIL(-EINVAL, "%s:%zu: a NUL byte at column %zu (expected text)",
			     source, line, (size_t)(nul - s) + 1);
		if (line == 1) {
			if (n != strlen(GW_OWNERS_HEADER) ||
			    memcmp(s, GW_OWNERS_HEADER, n) != 0)
				FAIL(-EINVAL, "%s:1: expected the header \"%s\" (is this "
				     "a gateway's owners file?)", source, GW_OWNERS_HEADER);
			continue;
		}
		const char *sp = n > 2 ? memchr(s + 2, ' ', n - 2) : NULL;
		if (n < 6 || (s[0] != '+' && s[0] != '-') || s[1] != ' ' || sp == NULL)
			FAIL(-EINVAL, "%s:%zu: expected \"+ USER NAMESPACE/NAME\" or "
			     "\"- USER NAMESPACE/NAME\"", source, line);
		size_t user_len, name_len, col;
		const char *why = unescape(s + 2, (size_t)(sp - s) - 2, user,
					   sizeof(user), &user_len, &col);
		if (why != NULL)
			FAIL(-EINVAL, "%s:%zu: the user, column %zu: %s", source, line,
			     col + 2, why);
		if (user_len == 0)
			FAIL(-EINVAL, "%s:%zu: the user is empty", source, line);
		if (memchr(user, '\0', user_len) != NULL)
			FAIL(-EINVAL, "%s:%zu: the user holds a NUL (%%00)", source, line);
		size_t name_at = (size_t)(sp - s) + 1;
		why = unescape(sp + 1, n - name_at, name, sizeof(name), &name_len,
			       &col);
		if (why != NULL)
			FAIL(-EINVAL, "%s:%zu: the pod, column %zu: %s", source, line,
			     col + name_at, why);
		why = check_pod_name(name, name_len);
		if (why != NULL)
			FAIL(-EINVAL, "%s:%zu: the pod: %s", source, line, why);
		uint64_t cookie = gw_cookie(name, name_len);
		size_t i = tab_find(o, cookie);
		if (s[0] == '-') {
			const struct gw_owner *e = i != SIZE_MAX ? o->tab[i] : NULL;
			if (e == NULL || e->user_len != user_len ||
			    memcmp(e->text, user, user_len) != 0)
				FAIL(-EINVAL, "%s:%zu: a release of a pod %s (expected "
				     "its owner's, as a '+' line above gave it)", source,
				     line, e == NULL ? "that has no owner here"
						     : "by another user than its owner");
			tab_del(o, i);
			o->lines++;
			continue;
		}
		if (i == SIZE_MAX && o->n == lim->max_entries)
			FAIL(-E2BIG, "%s:%zu: more than %zu live entries (pods with an "
			     "owner), the bound of an owners file", source, line,
			     lim->max_entries);
		struct gw_owner *e = entry_new(user, user_len, name, name_len);
		if (e == NULL || tab_put(o, e) < 0) {
			free(e);
			FAIL(-ENOMEM, "%s:%zu: out of memory", source, line);
		}
		o->lines++;
	}
	o->bytes = end;
	*out = o;
	return 0;
fail:
	gw_owners_close(o);
	return rc;
}

static int read_all(int fd, size_t max, char **out, size_t *out_len)
{
	size_t cap = 4096, len = 0;
	char *buf = malloc(cap);
	if (buf == NULL)
		return -ENOMEM;
	for (;;) {
		if (len == cap) {
			if (cap > max) /* read max + 1 at most: enough to refuse */
				break;
			cap *= 2;
			char *b = realloc(buf, cap);
			if (b == NULL) {
				free(buf);
				return -ENOMEM;
			}
			buf = b;
		}
		ssize_t r = read(fd, buf + len, cap - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;
			free(buf);
			return -e;
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	*out = buf;
	*out_len = len;
	return 0;
}

int gw_owners_open(const char *path, const struct gw_owners_limits *lim,
		   struct gw_owners **out, char *warn, size_t warn_len,
		   char *err, size_t err_len)
{
	if (lim == NULL)
		lim = &limits_default;
	warn[0] = '\0';
	*out = NULL;
	int rc = 0;
	char *text = NULL;
	size_t len = 0;
	struct gw_owners *o = NULL;
	/* O_NONBLOCK: a fifo put there must not hang the start; cleared
	 * below once it is known to be a regular file. */
	int fd = open(path, O_RDWR | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY |
		      O_NONBLOCK);
	if (fd < 0 && errno == ENOENT)
		fd = open(path, O_RDWR | O_APPEND | O_CREAT | O_EXCL | O_CLOEXEC |
			  O_NOFOLLOW | O_NOCTTY, 0600);
	if (fd < 0) {
		int e = errno;
		if (e == ELOOP)
			FAIL(-EPERM, "%s: a symbolic link; expected a regular file "
			     "(opened with O_NOFOLLOW: a link could send the gateway's "
			     "writes elsewhere)", path);
		if (e == EISDIR)
			FAIL(-EPERM, "%s: a directory; expected a regular file", path);
		FAIL(-e, "%s: %s", path, strerror(e));
	}
	struct stat st;
	int e = fstat(fd, &st) < 0 ? errno : 0;
	if (e != 0)
		FAIL(-e, "%s: %s", path, strerror(e));
	if (!S_ISREG(st.st_mode))
		FAIL(-EPERM, "%s: not a regular file (mode %06o); expected a regular "
		     "file", path, (unsigned)st.st_mode);
	if (st.st_uid != geteuid())
		FAIL(-EPERM, "%s: owned by uid %u; expected the gateway's uid %u (its "
		     "owner could give pods to other users)", path,
		     (unsigned)st.st_uid, (unsigned)geteuid());
	if (st.st_mode & (S_IRWXG | S_IRWXO))
		FAIL(-EPERM, "%s: mode %04o; expected 0600 (group and others may not "
		     "read or write the owners of pods): chmod 600 %s", path,
		     (unsigned)(st.st_mode & 07777), path);
	if ((size_t)st.st_size > lim->max_bytes)
		FAIL(-EFBIG, "%s: %zu bytes, over the %zu an owners file may hold",
		     path, (size_t)st.st_size, lim->max_bytes);
	e = fcntl(fd, F_SETFL, O_RDWR | O_APPEND) < 0 ? errno : 0;
	if (e != 0)
		FAIL(-e, "%s: %s", path, strerror(e));
	rc = read_all(fd, lim->max_bytes, &text, &len);
	if (rc < 0)
		FAIL(rc, "%s: %s", path, strerror(-rc));
	size_t cut = 0;
	rc = gw_owners_parse(text, len, path, lim, &o, &cut, err, err_len);
	if (rc < 0)
		goto fail;
	if (cut > 0) {
		e = ftruncate(fd, (off_t)(len - cut)) < 0 || fdatasync(fd) < 0
			? errno : 0;
		if (e != 0)
			FAIL(-e, "%s: cutting an unfinished last line: %s", path,
			     strerror(e));
		snprintf(warn, warn_len, "%s: its last line (%zu bytes) had no end: a "
			 "write the gateway did not finish, cut off (its pods were "
			 "not submitted)", path, cut);
	}
	o->path = strdup(path);
	if (o->path == NULL)
		FAIL(-ENOMEM, "%s: out of memory", path);
	o->fd = fd;
	free(text);
	*out = o;
	return 0;
fail:
	gw_owners_close(o);
	free(text);
	if (fd >= 0)
		close(fd);
	return rc;
}

#undef FAIL

void gw_owners_close(struct gw_owners *o)
{
	if (o == NULL)
		return;
	for (size_t k = 0; o->tab != NULL && k <= o->mask; k++)
		free(o->tab[k]);
	free(o->tab);
	if (o->fd >= 0)
		close(o->fd);
	free(o->path);
	free(o);
}

size_t gw_owners_count(const struct gw_owners *o)
{
	return o->n;
}

size_t gw_owners_lines(const struct gw_owners *o)
{
	return o->lines;
}

const char *gw_owners_find(const struct gw_owners *o, uint64_t cookie,
			   const char **name)
{
	size_t i = tab_find(o, cookie);
	if (i == SIZE_MAX)
		return NULL;
	if (name != NULL)
		*name = entry_name(o->tab[i]);
	return o->tab[i]->text;
}

/* --- writing --------------------------------------------------------------- */

static int write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* After a failed write: the file back to its last good size, or the log
 * refuses every write from here (a half line in the middle would refuse
 * the file at the next start). */
static void undo_write(struct gw_owners *o)
{
	if (ftruncate(o->fd, (off_t)o->bytes) < 0)
		o->broken = true;
}

/* One '+' or '-' line of user and name into out (room for
 * GW_OWNERS_LINE_MAX + 1); returns its bytes, 0 when it cannot be
 * written. */
static size_t line_of(char *out, char kind, const char *user, size_t user_len,
		      const char *name, size_t name_len)
{
	if (user_len == 0 || user_len > GW_OWNERS_USER_MAX ||
	    check_pod_name(name, name_len) != NULL)
		return 0;
	size_t k = 0;
	out[k++] = kind;
	out[k++] = ' ';
	k += escape(out + k, user, user_len);
	out[k++] = ' ';
	k += escape(out + k, name, name_len);
	out[k++] = '\n';
	return k;
}

static int compact(struct gw_owners *o, char *err, size_t err_len);

int gw_owners_append(struct gw_owners *o, const struct gw_owner_rec *recs,
		     size_t n, char *err, size_t err_len)
{
	if (o->broken) {
		snprintf(err, err_len, "%s: an earlier write failed and could not be "
			 "undone: no owner is recorded until the gateway restarts",
			 o->path);
		return -EIO;
	}
	size_t fresh = 0;
	for (size_t k = 0; k < n; k++)
		if (tab_find(o, gw_cookie(recs[k].name, strlen(recs[k].name))) ==
		    SIZE_MAX)
			fresh++;
	if (o->n + fresh > o->lim.max_entries) {
		snprintf(err, err_len, "the owners file holds %zu live entries, and "
			 "%zu more would pass its bound of %zu", o->n, fresh,
			 o->lim.max_entries);
		return -E2BIG;
	}
	size_t hdr = o->bytes == 0 ? strlen(GW_OWNERS_HEADER) + 1 : 0;
	size_t cap = hdr + n * (GW_OWNERS_LINE_MAX + 1);
	char *buf = malloc(cap);
	struct gw_owner **made = calloc(n ? n : 1, sizeof(*made));
	int rc = 0;
	if (buf == NULL || made == NULL) {
		snprintf(err, err_len, "out of memory");
		rc = -ENOMEM;
		goto done;
	}
	size_t len = 0;
	if (hdr > 0) {
		memcpy(buf, GW_OWNERS_HEADER "\n", hdr);
		len = hdr;
	}
	for (size_t k = 0; k < n; k++) {
		size_t ul = strlen(recs[k].user), nl = strlen(recs[k].name);
		size_t w = line_of(buf + len, '+', recs[k].user, ul, recs[k].name, nl);
		made[k] = entry_new(recs[k].user, ul, recs[k].name, nl);
		if (w == 0) {
			snprintf(err, err_len, "user \"%.64s\", pod \"%.64s\": not a user "
				 "(1..%u bytes) and a namespace/name the owners file "
				 "can hold", recs[k].user, recs[k].name,
				 GW_OWNERS_USER_MAX);
			rc = -EINVAL;
			goto done;
		}
		if (made[k] == NULL) {
			snprintf(err, err_len, "out of memory");
			rc = -ENOMEM;
			goto done;
		}
		len += w;
	}
	if (o->bytes + len > o->lim.max_bytes && o->lines > o->n && o->fd >= 0 &&
	    (rc = compact(o, err, err_len)) < 0)
		goto done;
	if (o->bytes + len > o->lim.max_bytes) {
		snprintf(err, err_len, "the owners file would hold %zu bytes, over "
			 "its bound of %zu (%zu live entries)", o->bytes + len,
			 o->lim.max_bytes, o->n);
		rc = -EFBIG;
		goto done;
	}
	if (o->fd >= 0) {
		rc = write_all(o->fd, buf, len);
		/* Before the pods are submitted: see the header's
		 * "Durability". */
		if (rc == 0 && fdatasync(o->fd) < 0)
			rc = -errno;
		if (rc < 0) {
			undo_write(o);
			snprintf(err, err_len, "%s: writing owners: %s", o->path,
				 strerror(-rc));
			goto done;
		}
	}
	for (size_t k = 0; k < n; k++) {
		if (tab_put(o, made[k]) < 0) {
			/* The line is in the file: an entry lost here costs an
			 * owner in memory until the next start reads it. */
			free(made[k]);
		}
		made[k] = NULL;
	}
	o->lines += n;
	o->bytes += len;
done:
	for (size_t k = 0; made != NULL && k < n; k++)
		free(made[k]);
	free(made);
	free(buf);
	return rc;
}

int gw_owners_release(struct gw_owners *o, uint64_t cookie, char *err,
		      size_t err_len)
{
	size_t i = tab_find(o, cookie);
	if (i == SIZE_MAX)
		return 0;
	const struct gw_owner *e = o->tab[i];
	char line[GW_OWNERS_LINE_MAX + 1];
	size_t len = line_of(line, '-', e->text, e->user_len, entry_name(e),
			     e->name_len);
	int rc = 0;
	/* Not synced, and skipped past the bound: a tombstone only tidies
	 * (the start drops what the daemon does not hold). */
	if (len > 0 && o->fd >= 0 && !o->broken &&
	    o->bytes + len <= o->lim.max_bytes) {
		rc = write_all(o->fd, line, len);
		if (rc < 0) {
			undo_write(o);
			snprintf(err, err_len, "%s: writing a release: %s", o->path,
				 strerror(-rc));
		} else {
			o->bytes += len;
			o->lines++;
		}
	} else if (len > 0 && o->fd < 0) {
		o->lines++;
	}
	tab_del(o, i);
	return rc;
}

void gw_owners_forget(struct gw_owners *o, uint64_t cookie)
{
	size_t i = tab_find(o, cookie);
	if (i != SIZE_MAX)
		tab_del(o, i);
}

static int fsync_dir(const char *path)
{
	char *copy = strdup(path);
	if (copy == NULL)
		return -ENOMEM;
	char *slash = strrchr(copy, '/');
	const char *dir = slash == NULL ? "." : slash == copy ? "/" : copy;
	if (slash != NULL && slash != copy)
		*slash = '\0';
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int rc = fd < 0 || fsync(fd) < 0 ? -errno : 0;
	if (fd >= 0)
		close(fd);
	free(copy);
	return rc;
}

/* The live entries into PATH.tmp, synced, renamed over PATH, the
 * directory synced; the new file is then the one appended to. */
static int compact(struct gw_owners *o, char *err, size_t err_len)
{
	if (o->fd < 0) {
		o->lines = o->n;
		return 0;
	}
	size_t plen = strlen(o->path);
	char *tmp = malloc(plen + 5);
	char *buf = malloc(64u << 10);
	int fd = -1, rc = 0;
	const char *step = "out of memory";
	if (tmp == NULL || buf == NULL) {
		rc = -ENOMEM;
		goto fail;
	}
	memcpy(tmp, o->path, plen);
	memcpy(tmp + plen, ".tmp", 5);
	step = "removing an old PATH.tmp";
	if (unlink(tmp) < 0 && errno != ENOENT) {
		rc = -errno;
		goto fail;
	}
	step = "creating PATH.tmp";
	fd = open(tmp, O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_CLOEXEC |
		  O_NOFOLLOW | O_NOCTTY, 0600);
	if (fd < 0 || fchmod(fd, 0600) < 0) {
		rc = -errno;
		goto fail;
	}
	step = "writing PATH.tmp";
	size_t len = 0, total = 0;
	len = strlen(GW_OWNERS_HEADER);
	memcpy(buf, GW_OWNERS_HEADER "\n", len + 1);
	len++;
	for (size_t k = 0; k <= o->mask && o->tab != NULL; k++) {
		const struct gw_owner *e = o->tab[k];
		if (e == NULL)
			continue;
		if (len + GW_OWNERS_LINE_MAX + 1 > (64u << 10)) {
			if ((rc = write_all(fd, buf, len)) < 0)
				goto fail;
			total += len;
			len = 0;
		}
		len += line_of(buf + len, '+', e->text, e->user_len, entry_name(e),
			       e->name_len);
	}
	if ((rc = write_all(fd, buf, len)) < 0)
		goto fail;
	total += len;
	step = "syncing PATH.tmp";
	if (fsync(fd) < 0) {
		rc = -errno;
		goto fail;
	}
	step = "renaming PATH.tmp over PATH";
	if (rename(tmp, o->path) < 0) {
		rc = -errno;
		goto fail;
	}
	close(o->fd);
	o->fd = fd;
	o->bytes = total;
	o->lines = o->n;
	o->broken = false; /* a new file: the failed write is gone with it */
	free(tmp);
	free(buf);
	step = "syncing PATH's directory";
	if ((rc = fsync_dir(o->path)) < 0) {
		snprintf(err, err_len, "%s: compacting: %s: %s", o->path, step,
			 strerror(-rc));
		return rc;
	}
	return 0;
fail:
	snprintf(err, err_len, "%s: compacting: %s: %s", o->path, step,
		 strerror(-rc));
	if (fd >= 0) {
		close(fd);
		unlink(tmp);
	}
	free(tmp);
	free(buf);
	return rc;
}

int gw_owners_retain(struct gw_owners *o, bool (*keep)(void *arg, uint64_t cookie),
		     void *arg, char *err, size_t err_len)
{
	/* Deleting shifts later entries back: look at a bucket again after
	 * a deletion there. */
	for (size_t k = 0; o->tab != NULL && k <= o->mask;) {
		if (o->tab[k] != NULL && !keep(arg, o->tab[k]->cookie))
			tab_del(o, k);
		else
			k++;
	}
	return compact(o, err, err_len);
}

int gw_owners_tidy(struct gw_owners *o, char *err, size_t err_len)
{
	size_t dead = o->lines - o->n;
	if (dead < o->lim.compact_min || dead <= o->n)
		return 0;
	int rc = compact(o, err, err_len);
	return rc < 0 ? rc : 1;
}
