/* Why quota refuses a request, for a person: see quota_refusal_message in
 * quota/quota.h. Moved here from daemon/quota_charge.c so that the daemon
 * and `shmsched place` (cli/place.c) say the same words; it reads only the
 * tree (relaxed reads of usage: a view of the moment, as every read-out).
 * Cost: one pass over the flavors tried and their resources, snprintf
 * into the caller's buffer; no allocation.
 */
#include "quota/quota.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* One flavor's part of a refusal, at most (a longer one is counted). */
#define QUOTA_MESSAGE_PART 1024

/* "12000m" for cpu, "12" for others (memory in bytes). */
static const char *unit_of(const struct quota_tree *t, int resource)
{
	return strcmp(quota_resource_name(t, resource), "cpu") == 0 ? "m" : "";
}

/* Appends to buf[*k..len) (snprintf's rules; *k moves, at most to len). */
static void put(char *buf, size_t len, size_t *k, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void put(char *buf, size_t len, size_t *k, const char *fmt, ...)
{
	if (*k >= len)
		return;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf + *k, len - *k, fmt, ap);
	va_end(ap);
	*k = n < 0 ? len : *k + (size_t)n > len ? len : *k + (size_t)n;
}

/* Why `charge` does not fit flavor f of ClusterQueue cq (-ENOSPC), into
 * buf[*k..len): the resource past what the queue may use, its usage of
 * its nominal quota, and the limit or the cohort that stops it. `first`:
 * the flavor is named inside the sentence, else in front of it. */
static void full_one(const struct quota_tree *t, int cq, int flavor,
		     const int64_t *charge, bool first, char *buf, size_t len,
		     size_t *k)
{
	int n_res = quota_n_resources(t);
	int r = -1;
	/* The first resource past what the queue has of its own; else the
	 * first requested (the cohort's limits refused it). */
	for (int i = 0; i < n_res && r < 0; i++)
		if (charge[i] > 0 && quota_usage(t, cq, flavor, i) + charge[i] >
					     quota_subtree_quota(t, cq, flavor, i))
			r = i;
	for (int i = 0; i < n_res && r < 0; i++)
		if (charge[i] > 0)
			r = i;
	const char *fname = quota_flavor_name(t, flavor);
	if (r < 0) {
		put(buf, len, k, "no room in flavor \"%s\"", fname);
		return;
	}
	const char *u = unit_of(t, r);
	int64_t nominal, borrowing, lending;
	quota_entry(t, cq, flavor, r, &nominal, &borrowing, &lending);
	int64_t used = quota_usage(t, cq, flavor, r);
	if (first)
		put(buf, len, k, "%s %" PRId64 "%s/%" PRId64 "%s of its nominal "
		    "quota in flavor \"%s\" (asks %" PRId64 "%s)",
		    quota_resource_name(t, r), used, u, nominal, u, fname,
		    charge[r], u);
	else
		put(buf, len, k, "Flavor \"%s\": %s %" PRId64 "%s/%" PRId64 "%s of "
		    "its nominal quota (asks %" PRId64 "%s)", fname,
		    quota_resource_name(t, r), used, u, nominal, u, charge[r], u);
	int parent = quota_node_parent(t, cq);
	if (parent < 0) {
		put(buf, len, k, "; in no cohort: nothing to borrow");
		return;
	}
	const char *pname = quota_node_name(t, parent);
	if (borrowing != QUOTA_NO_LIMIT && used + charge[r] > nominal + borrowing) {
		put(buf, len, k, "; its borrowingLimit %" PRId64 "%s from cohort "
		    "\"%s\" is reached", borrowing, u, pname);
		return;
	}
	int64_t sub = quota_subtree_quota(t, parent, flavor, r);
	int64_t left = sub - quota_usage(t, parent, flavor, r);
	if (left < 0)
		left = 0;
	if (left == 0)
		put(buf, len, k, "; cohort \"%s\": nothing left to borrow (%" PRId64
		    "%s/%" PRId64 "%s in use)", pname,
		    quota_usage(t, parent, flavor, r), u, sub, u);
	else
		put(buf, len, k, "; cohort \"%s\": %" PRId64 "%s of %" PRId64
		    "%s left to borrow", pname, left, u, sub, u);
}

/* Room kept at the end of a refusal for ". N more flavor(s) refused". */
#define QC_MORE_ROOM 40

void quota_refusal_message(const struct quota_tree *t, int cq, const int *flavors,
			   const int *rcs, int n, const int64_t *charge, char *buf,
			   size_t len)
{
	size_t k = 0;
	if (len == 0)
		return;
	buf[0] = '\0';
	put(buf, len, &k, "ClusterQueue \"%s\": ", quota_node_name(t, cq));
	/* The flavors that quota refused first (the first of them names the
	 * flavor inside its sentence, as a queue of one flavor reads), then
	 * the others, each in the order tried. */
	bool any = false;
	int written = 0;
	for (int pass = 0; pass < 2; pass++) {
		for (int i = 0; i < n; i++) {
			if ((rcs[i] == -ENOSPC) != (pass == 0))
				continue;
			char one[QUOTA_MESSAGE_PART];
			size_t m = 0;
			if (any)
				put(one, sizeof(one), &m, ". ");
			int f = flavors[i];
			if (rcs[i] == -ENOSPC) {
				full_one(t, cq, f, charge, !any, one, sizeof(one), &m);
			} else if (rcs[i] == -ENOENT) {
				int r = -1;
				int64_t nom, bl, ll;
				for (int j = 0; j < quota_n_resources(t) && r < 0; j++)
					if (charge[j] > 0 &&
					    !quota_entry(t, cq, f, j, &nom, &bl, &ll))
						r = j;
				put(one, sizeof(one), &m, "%s \"%s\": no quota "
				    "for \"%s\"", any ? "Flavor" : "flavor",
				    quota_flavor_name(t, f),
				    r >= 0 ? quota_resource_name(t, r) : "?");
			} else if (rcs[i] == -EXDEV) {
				put(one, sizeof(one), &m, "%s \"%s\": its "
				    "nodeLabels conflict with the pod's nodeSelector",
				    any ? "Flavor" : "flavor", quota_flavor_name(t, f));
			} else {
				put(one, sizeof(one), &m, "%s \"%s\": refused (%s)",
				    any ? "Flavor" : "flavor", quota_flavor_name(t, f),
				    strerror(-rcs[i]));
			}
			/* Bounded: a flavor whose part does not fit whole,
			 * with room to say what is left, is told as a count. */
			bool last = written + 1 == n;
			if (k + m + (last ? 0 : QC_MORE_ROOM) >= len) {
				put(buf, len, &k, ". %d more flavor(s) refused",
				    n - written);
				return;
			}
			put(buf, len, &k, "%s", one);
			any = true;
			written++;
		}
	}
}

void quota_unfit_message(const struct quota_tree *t, int cq, const int *flavors,
			 int n, const int64_t *charge, const char *who, char *buf,
			 size_t len)
{
	int bad = -1;
	int64_t nom, bl, ll;
	for (int i = 0; i < quota_n_resources(t) && bad < 0; i++) {
		bool covered = false;
		for (int k = 0; k < n && !covered && charge[i] > 0; k++)
			covered = quota_entry(t, cq, flavors[k], i, &nom, &bl, &ll);
		if (charge[i] > 0 && !covered)
			bad = i;
	}
	if (bad >= 0)
		snprintf(buf, len, "ClusterQueue \"%s\" covers \"%s\" in none of "
			 "its flavors, and %s requests it", quota_node_name(t, cq),
			 quota_resource_name(t, bad), who);
	else
		snprintf(buf, len, "ClusterQueue \"%s\": no flavor of it can take "
			 "%s (its nodeLabels conflict with the pod's nodeSelector)",
			 quota_node_name(t, cq), who);
}

void quota_uncovered_message(const struct quota_tree *t, int cq,
			     const char *resource, const char *who, char *buf,
			     size_t len)
{
	snprintf(buf, len, "ClusterQueue \"%s\" covers no resource \"%s\", which "
		 "%s requests (no ClusterQueue names it)", quota_node_name(t, cq),
		 resource, who);
}
