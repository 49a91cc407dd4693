/* Who a request is: the gateway's bearer tokens, in kube-apiserver's static
 * token file format (--token-auth-file; kubernetes.io, "Authenticating",
 * "Static Token File"): a CSV file, one record a line, at least three
 * fields: token, user name, user uid, then optionally the user's groups
 * in one field (quoted when there are several: token,user,uid,"g1,g2").
 * Fields follow RFC 4180 (double quotes, "" inside them); spaces before a
 * field are dropped (Go's encoding/csv with TrimLeadingSpace, as kube reads
 * it); blank lines are skipped. Stricter than kube, which warns and goes
 * on: an empty token, a duplicate token, a record of fewer than three
 * fields, or a field past its bound refuses the whole file, naming the line.
 *
 * The parser takes only text (no I/O) so the fuzz target and the unit
 * tests drive it; gw_tokens_load() reads a file, checks its mode, and
 * parses it.
 *
 * Threads: a table is read-only once loaded; any thread may look up.
 */
#ifndef SHMSCHED_GATEWAY_AUTH_H
#define SHMSCHED_GATEWAY_AUTH_H

#include <stdbool.h>
#include <stddef.h>

#define GW_TOKEN_MAX 512      /* bytes of a token */
#define GW_USER_MAX 256       /* bytes of a user name (and a uid), + NUL */
#define GW_GROUPS_MAX 1024    /* bytes of a user's groups, comma-joined, + NUL */
#define GW_TOKENS_MAX 65536   /* records in one file */
#define GW_TOKEN_FILE_MAX (4u << 20) /* bytes of a token file */

/* The user every client is under --allow-anonymous, and its group, as
 * kube-apiserver names them. */
#define GW_ANONYMOUS_USER "system:anonymous"
#define GW_ANONYMOUS_GROUP "system:unauthenticated"
/* The group whose tokens may use the admin routes over TCP, unless
 * --admin-group says another: kube's cluster-admin group. */
#define GW_ADMIN_GROUP_DEFAULT "system:masters"

struct gw_identity {
	char user[GW_USER_MAX];
	char uid[GW_USER_MAX];
	char groups[GW_GROUPS_MAX]; /* comma-joined, no spaces; "" none */
};

struct gw_tokens;

/* Parses text[0..len) into a new table. Returns 0 with *out, or -EINVAL
 * with err naming the line and what is wrong (never the token itself),
 * -E2BIG (too many records), -ENOMEM. */
int gw_tokens_parse(const char *text, size_t len, struct gw_tokens **out,
		    char *err, size_t err_len);

/* Reads and parses the file at path. Refuses (-EPERM) a file that others
 * may read or that group or others may write (chmod 600 or 640); warns
 * (warn set, else warn[0] == '\0') when its group may read it. -ENOENT,
 * -EACCES and the like as open() says, -EFBIG past GW_TOKEN_FILE_MAX. */
int gw_tokens_load(const char *path, struct gw_tokens **out, char *warn,
		   size_t warn_len, char *err, size_t err_len);

void gw_tokens_free(struct gw_tokens *t);

/* Records in the table. */
size_t gw_tokens_count(const struct gw_tokens *t);

/* The identity of a token, or NULL. Every record is compared, each in
 * time that does not depend on where the bytes differ. */
const struct gw_identity *gw_tokens_find(const struct gw_tokens *t,
					 const char *token, size_t len);

/* Whether the comma-joined `groups` holds `group` exactly. */
bool gw_groups_has(const char *groups, const char *group);

/* The token of an Authorization header value "Bearer TOKEN" (the scheme
 * in any case, RFC 7235; spaces after it skipped): its start and length,
 * or NULL for another scheme or an empty token. */
const char *gw_bearer_token(const char *header, size_t *len);

#endif
