/* Fuzz target: Kueue's quota objects (ingest/kueue_json.h) on arbitrary
 * bytes, as a file of Kueue objects and as a cluster file (other kinds
 * passed over). Every refusal must say why, at a line the input has, and
 * give no tree; what is accepted must be a sealed tree within the quota
 * tree's bounds, its flavors, parents and entries in range, so a consumer
 * may index without checks. */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/ingest.h"
#include "quota/quota.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_tree(struct quota_tree *t)
{
	int nf = quota_n_flavors(t), nr = quota_n_resources(t), nn = quota_n_nodes(t);
	if (nf < 0 || nf > QUOTA_MAX_FLAVORS || nr < 0 || nr > QUOTA_MAX_RESOURCES ||
	    nn < 0)
		__builtin_trap();
	for (int f = 0; f < nf; f++)
		if (quota_flavor_n_labels(t, f) > QUOTA_MAX_FLAVOR_LABELS ||
		    quota_flavor_find(t, quota_flavor_name(t, f)) != f)
			__builtin_trap();
	for (int n = 0; n < nn; n++) {
		int p = quota_node_parent(t, n);
		if (p < -1 || p >= nn || (p >= 0 && !quota_node_is_cohort(t, p)))
			__builtin_trap();
		const int *order;
		int k = quota_node_flavors(t, n, &order);
		if (k < 0 || k > nf)
			__builtin_trap();
		for (int i = 0; i < k; i++)
			if (order[i] < 0 || order[i] >= nf)
				__builtin_trap();
		for (int f = 0; f < nf; f++)
			for (int r = 0; r < nr; r++) {
				int64_t nom, bl, ll;
				if (!quota_entry(t, n, f, r, &nom, &bl, &ll))
					continue;
				if (nom < 0 || nom > QUOTA_QUANTITY_MAX ||
				    bl < QUOTA_NO_LIMIT || ll < QUOTA_NO_LIMIT)
					__builtin_trap();
			}
	}
}

static void one(const char *buf, size_t size, bool mixed)
{
	char err[1024];
	struct quota_tree *t = (struct quota_tree *)&err;
	int rc = kueue_load_buffer("f.json", buf, size, mixed, &t, err, sizeof(err));
	if (rc < 0) {
		if (t != NULL || strncmp(err, "f.json", 6) != 0)
			__builtin_trap();
		switch (rc) {
		case -EINVAL: case -ENOSPC: case -EEXIST: case -ENAMETOOLONG:
		case -E2BIG: case -ELOOP: case -ENOENT: case -ENOMEM: case -EFBIG:
			break;
		default:
			__builtin_trap();
		}
		/* A line the input has. */
		if (err[6] == ':') {
			unsigned long line = strtoul(err + 7, NULL, 10), lines = 1;
			for (size_t i = 0; i < size; i++)
				lines += buf[i] == '\n';
			if (line > lines)
				__builtin_trap();
		}
		return;
	}
	if (rc != 0 || (t == NULL && !mixed))
		__builtin_trap();
	if (t != NULL) {
		check_tree(t);
		quota_tree_free(t);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	one((const char *)data, size, false);
	one((const char *)data, size, true);
	return 0;
}
