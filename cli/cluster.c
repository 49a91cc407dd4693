/* shmsched cluster status: see cluster.h. One range of the cluster's
 * prefix (coord/membership.h lays the keys out), then one time-to-live
 * request per host's lease; no daemon is asked. Lines:
 *
 *   cluster NAME (etcd revision R): H hosts, S shards, coordinator HOST
 *   host HOST lease ID ttl-left Ns/Gs shards N
 *   status HOST lag R records O ms shards N more M
 *                                         (its status value in hosts/HOST,
 *                                          coord/host_status.h: R records
 *                                          not yet answered by etcd, the
 *                                          oldest O ms old; N shards
 *                                          listed, M more owned; "status
 *                                          HOST none" before its first
 *                                          put, "status HOST unreadable:
 *                                          WHY" for a value that does
 *                                          not decode)
 *   capacity HOST S nodes N largest cpu C memory M pods P sum cpu C memory M pods P
 *                                         (each listed shard: free cpu in
 *                                          millicores, memory in bytes,
 *                                          pods, the largest of one node
 *                                          and the sums over its nodes)
 *   shard S assigned HOST owner HOST      ("-": none; "moving" when the
 *                                          two differ)
 *   slice QUEUE S FLAVOR RESOURCE AMOUNT ... acknowledged|unacknowledged
 *                                         (quota by escrow: each cell of
 *                                          the slice key of QUEUE and S;
 *                                          acknowledged: its owner's ack
 *                                          names the key's revision)
 *   use QUEUE S FLAVOR RESOURCE USE MORE ...
 *                                         (after its slice's line, when
 *                                          S's owner reported a use:
 *                                          each cell's use attributed to
 *                                          S and what waiting pods ask
 *                                          beyond it)
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cluster.h"
#include "coord/coord.h"

#define TRY "Try 'shmsched cluster --help' for more information.\n"

static void usage(FILE *to)
{
	fprintf(to,
		"usage: shmsched cluster status --etcd ENDPOINTS [--etcd-cluster NAME]\n"
		"\n"
		"A multi-host cluster's state (shmschedd --etcd), read from etcd: its\n"
		"hosts with their leases' seconds left, its coordinator, and each\n"
		"shard's assigned host and owner (\"moving\" while they differ), and\n"
		"each shard's slice of each ClusterQueue's quota (quota by escrow)\n"
		"with its owner's use report; each host's status as it last put it\n"
		"(at most once a second): its replication lag (records not yet\n"
		"answered by etcd, the oldest one's age) and each owned shard's\n"
		"nodes and free cpu, memory and pods (the largest of one node, the\n"
		"sums).\n"
		"--etcd: etcd's client URLs, comma separated (default\n"
		"$SHMSCHED_ETCD_ENDPOINTS); --etcd-cluster: as shmschedd's (default\n"
		"\"default\").\n");
}

struct shard_row {
	char name[SHARD_NAME_MAX];
	char assigned[MEMBERSHIP_HOST_MAX];
	char owner[MEMBERSHIP_HOST_MAX];
};

/* A slice key quota/<queue>/<s>: its text after "1 slice", and whether
 * an ack of its revision follows it (the range is in key order). */
#define SLICE_ROWS 1024
struct slice_row {
	char name[QUOTA_ESCROW_QUEUE_MAX + SHARD_NAME_MAX + 2]; /* "QUEUE S" */
	char cells[256];
	char use[256]; /* the use key's cells ("": none) */
	int64_t revision;
	bool acked;
};

struct host_row {
	char name[MEMBERSHIP_HOST_MAX];
	int64_t lease;
	int status_rc; /* 0: status decoded; -ENODATA: the name alone; else why */
	char why[160];
	struct host_status status;
};

/* hosts/<host>'s value: the host's name alone (the join's put, before its
 * first status) or its status (coord/host_status.h). */
static void host_value(struct host_row *h, const struct etcd_kv *kv)
{
	if (kv->value_len == strlen(h->name) && memcmp(kv->value, h->name, kv->value_len) == 0) {
		h->status_rc = -ENODATA;
		return;
	}
	h->status_rc = host_status_decode(kv->value, kv->value_len, &h->status, h->why,
					  sizeof(h->why));
}

static void print_status(const struct host_row *h)
{
	if (h->status_rc == -ENODATA) {
		printf("status %s none\n", h->name);
		return;
	}
	if (h->status_rc != 0) {
		printf("status %s unreadable: %s\n", h->name, h->why);
		return;
	}
	const struct host_status *st = &h->status;
	printf("status %s lag %" PRId64 " records %" PRId64 " ms shards %" PRIu32 " more %" PRIu32
	       "\n", h->name, st->lag_records, st->lag_oldest_ms, st->n, st->more);
	for (uint32_t i = 0; i < st->n; i++) {
		const struct host_status_shard *s = &st->shards[i];
		printf("capacity %s %s nodes %" PRIu32 " largest cpu %" PRId64 " memory %" PRId64
		       " pods %" PRId64 " sum cpu %" PRId64 " memory %" PRId64 " pods %" PRId64
		       "\n", h->name, s->name, s->nodes, s->largest_cpu_milli,
		       s->largest_mem_bytes, s->largest_pods, s->sum_cpu_milli, s->sum_mem_bytes,
		       s->sum_pods);
	}
}

static void copy(char *dst, size_t cap, const uint8_t *src, size_t len)
{
	size_t n = len < cap - 1 ? len : cap - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

static struct shard_row *shard_of(struct shard_row *rows, size_t *n, const char *name,
				  size_t len)
{
	for (size_t i = 0; i < *n; i++)
		if (strlen(rows[i].name) == len && memcmp(rows[i].name, name, len) == 0)
			return &rows[i];
	if (*n == SHARD_MAX || len >= SHARD_NAME_MAX)
		return NULL;
	struct shard_row *r = &rows[(*n)++];
	memset(r, 0, sizeof(*r));
	memcpy(r->name, name, len);
	return r;
}

/* quota/<rest>: a slice key "QUEUE/S" starts a row; "QUEUE/S/ack" marks
 * the last row acknowledged when its revision is that row's;
 * "QUEUE/S/use" gives the last row its use. A value that does not decode
 * is shown as such. */
/* The row's use: each cell's flavor, resource, use and more (NULL: a
 * value that does not decode as a use). */
static void use_text(struct slice_row *r, const struct quota_escrow_value *v)
{
	if (v == NULL || v->kind != QUOTA_ESCROW_USE) {
		snprintf(r->use, sizeof(r->use), " (a value that does not decode)");
		return;
	}
	size_t at = 0;
	for (size_t i = 0; i < v->n && at < sizeof(r->use); i++) {
		int w = snprintf(r->use + at, sizeof(r->use) - at, " %s %s %" PRId64 " %" PRId64,
				 v->cells[i].flavor, v->cells[i].resource, v->cells[i].amount,
				 v->cells[i].more);
		at += w > 0 ? (size_t)w : 0;
	}
}

static void slice_key(struct slice_row *rows, size_t *n, const char *k, size_t kl,
		      const struct etcd_kv *kv, struct quota_escrow_value *v)
{
	const char *a = memchr(k, '/', kl);
	const char *b = a != NULL ? memchr(a + 1, '/', kl - (size_t)(a + 1 - k)) : NULL;
	char msg[128];
	int rc = quota_escrow_value_decode(kv->value, kv->value_len, v, msg, sizeof(msg));
	if (a == NULL)
		return;
	if (b != NULL) {
		if (kl - (size_t)(b - k) == 4 && memcmp(b, "/ack", 4) == 0 && *n > 0 && rc == 0 &&
		    v->kind == QUOTA_ESCROW_ACK && rows[*n - 1].revision == v->revision &&
		    strlen(rows[*n - 1].name) == (size_t)(b - k))
			rows[*n - 1].acked = true;
		if (kl - (size_t)(b - k) == 4 && memcmp(b, "/use", 4) == 0 && *n > 0 &&
		    strlen(rows[*n - 1].name) == (size_t)(b - k))
			use_text(&rows[*n - 1], rc == 0 ? v : NULL);
		return;
	}
	if (*n == SLICE_ROWS)
		return;
	struct slice_row *r = &rows[(*n)++];
	memset(r, 0, sizeof(*r));
	snprintf(r->name, sizeof(r->name), "%.*s %.*s", (int)(a - k), k,
		 (int)(kl - (size_t)(a + 1 - k)), a + 1);
	r->revision = kv->mod_revision;
	if (rc != 0 || v->kind != QUOTA_ESCROW_SLICE) {
		snprintf(r->cells, sizeof(r->cells), " (a value that does not decode)");
		return;
	}
	size_t at = 0;
	for (size_t i = 0; i < v->n && at < sizeof(r->cells); i++) {
		int w = snprintf(r->cells + at, sizeof(r->cells) - at, " %s %s %" PRId64,
				 v->cells[i].flavor, v->cells[i].resource, v->cells[i].amount);
		at += w > 0 ? (size_t)w : 0;
	}
}

static int show(struct etcd_client *ec, const char *cluster)
{
	char prefix[160];
	int pl = membership_prefix(cluster, prefix, sizeof(prefix));
	if (pl < 0) {
		fprintf(stderr, "shmsched cluster: --etcd-cluster \"%s\": too long\n", cluster);
		return 2;
	}
	uint8_t end[sizeof(prefix)];
	size_t end_len = etcd_prefix_end(prefix, (size_t)pl, end);
	struct etcd_range_result r;
	if (etcd_range(ec, prefix, (size_t)pl, end, end_len, 0, &r) != 0) {
		fprintf(stderr, "shmsched cluster: %s\n", etcd_client_error(ec));
		return 1;
	}
	static struct shard_row shards[SHARD_MAX];
	static struct host_row hosts[MEMBERSHIP_HOSTS_MAX];
	static struct slice_row slices[SLICE_ROWS];
	static struct quota_escrow_value v;
	size_t n_shards = 0, n_hosts = 0, n_slices = 0;
	char coordinator[MEMBERSHIP_HOST_MAX] = "-";
	for (size_t i = 0; i < r.n_kvs; i++) {
		const struct etcd_kv *kv = &r.kvs[i];
		const char *k = (const char *)kv->key + pl;
		size_t kl = kv->key_len - (size_t)pl;
		if (kl > 6 && memcmp(k, "hosts/", 6) == 0 && n_hosts < MEMBERSHIP_HOSTS_MAX) {
			copy(hosts[n_hosts].name, MEMBERSHIP_HOST_MAX, (const uint8_t *)k + 6,
			     kl - 6);
			hosts[n_hosts].lease = kv->lease;
			host_value(&hosts[n_hosts++], kv);
		} else if (kl == 11 && memcmp(k, "coordinator", 11) == 0) {
			copy(coordinator, sizeof(coordinator), kv->value, kv->value_len);
		} else if (kl > 7 && memcmp(k, "shards/", 7) == 0) {
			const char *slash = memchr(k + 7, '/', kl - 7);
			if (slash == NULL)
				continue;
			struct shard_row *s = shard_of(shards, &n_shards, k + 7,
						       (size_t)(slash - (k + 7)));
			size_t rest = kl - (size_t)(slash - k);
			if (s != NULL && rest == 9 && memcmp(slash, "/assigned", 9) == 0)
				copy(s->assigned, MEMBERSHIP_HOST_MAX, kv->value, kv->value_len);
			else if (s != NULL && rest == 6 && memcmp(slash, "/owner", 6) == 0)
				copy(s->owner, MEMBERSHIP_HOST_MAX, kv->value, kv->value_len);
		} else if (kl > 6 && memcmp(k, "quota/", 6) == 0) {
			slice_key(slices, &n_slices, k + 6, kl - 6, kv, &v);
		}
	}
	int64_t revision = r.revision;
	etcd_range_result_free(&r);
	printf("cluster %s (etcd revision %" PRId64 "): %zu hosts, %zu shards, "
	       "coordinator %s\n", cluster, revision, n_hosts, n_shards, coordinator);
	for (size_t h = 0; h < n_hosts; h++) {
		size_t owned = 0;
		for (size_t s = 0; s < n_shards; s++)
			owned += strcmp(shards[s].owner, hosts[h].name) == 0;
		int64_t left = 0, granted = 0;
		int rc = etcd_lease_time_to_live(ec, hosts[h].lease, &left, &granted);
		if (rc == 0)
			printf("host %s lease %" PRIx64 " ttl-left %" PRId64 "s/%" PRId64
			       "s shards %zu\n", hosts[h].name, (uint64_t)hosts[h].lease, left,
			       granted, owned);
		else
			printf("host %s lease %" PRIx64 " ttl-left %s shards %zu\n",
			       hosts[h].name, (uint64_t)hosts[h].lease,
			       rc == -ENOENT ? "expired" : "unknown", owned);
		print_status(&hosts[h]);
	}
	for (size_t s = 0; s < n_shards; s++) {
		const struct shard_row *row = &shards[s];
		printf("shard %s assigned %s owner %s%s\n", row->name,
		       row->assigned[0] ? row->assigned : "-", row->owner[0] ? row->owner : "-",
		       strcmp(row->assigned, row->owner) != 0 ? " moving" : "");
	}
	for (size_t i = 0; i < n_slices; i++) {
		printf("slice %s%s %s\n", slices[i].name, slices[i].cells,
		       slices[i].acked ? "acknowledged" : "unacknowledged");
		if (slices[i].use[0] != '\0')
			printf("use %s%s\n", slices[i].name, slices[i].use);
	}
	return 0;
}

int cluster_main(int argc, char **argv)
{
	const char *endpoints = getenv("SHMSCHED_ETCD_ENDPOINTS");
	const char *cluster = "default";
	bool status = false;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			usage(stdout);
			return 0;
		} else if (strcmp(argv[i], "--etcd") == 0 && i + 1 < argc) {
			endpoints = argv[++i];
		} else if (strcmp(argv[i], "--etcd-cluster") == 0 && i + 1 < argc) {
			cluster = argv[++i];
		} else if (strcmp(argv[i], "status") == 0 && !status) {
			status = true;
		} else {
			fprintf(stderr, "shmsched cluster: unexpected \"%s\"\n" TRY, argv[i]);
			return 2;
		}
	}
	if (!status) {
		fprintf(stderr, "shmsched cluster: expected the command status\n" TRY);
		return 2;
	}
	if (endpoints == NULL || *endpoints == '\0') {
		fprintf(stderr, "shmsched cluster: no etcd: give --etcd ENDPOINTS (or set "
			"SHMSCHED_ETCD_ENDPOINTS)\n" TRY);
		return 2;
	}
	struct etcd_client *ec;
	char err[512];
	struct etcd_client_options o = {.timeout_ms = 5000};
	if (etcd_client_open(&ec, endpoints, &o, err, sizeof(err)) != 0) {
		fprintf(stderr, "shmsched cluster: --etcd %s: %s\n", endpoints, err);
		return 2;
	}
	int rc = show(ec, cluster);
	etcd_client_close(ec);
	return rc;
}
