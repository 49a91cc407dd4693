/* The daemon, assembled: see daemon.h.
 *
 * Start: every input checked first (the configuration, the cluster file
 * and the policy read into a scratch anonymous region, thrown away), so a
 * start that fails on an input creates nothing: no region, no store, no
 * socket. Then the state: an existing region, or a store that holds
 * nodes, is compared with the given inputs by the record it keeps of
 * what it was built from (state_meta.origin, the store's "origin"): the
 * same inputs resume it; other ones (or none recorded) refuse the start,
 * naming both, unless --resume (keep it) or --fresh (rebuild from the
 * inputs, the store cleared). Then tables, configuration, cluster (file or
 * synthetic), one engine per worker, the producers table, the worker
 * pool, then the admin socket and the producers' control socket last, so
 * nothing reaches a producer before the daemon can serve it.
 * Stop: the reverse, with the drain in between (see daemon_stop()).
 */
#include "daemon/daemon.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ingest/ingest.h"
#include "base/base.h"
#include "policy/policy.h"
#include "shm/shm.h"
#include "workers/workers.h"
#include "daemon/persist_internal.h"
#include "daemon/serve_internal.h"
#include "daemon/wait_internal.h"
#include "daemon/evict_internal.h"
#include "daemon/warm_internal.h"
#include "daemon/quota_charge_internal.h"
#include "daemon/quota_escrow_host_internal.h"
#include "daemon/admission_fair_internal.h"
#include "daemon/lease_internal.h"
#include "daemon/quarantine_internal.h"
#include "daemon/etcd_sync_internal.h"
#include "daemon/shard_watch_internal.h"
#include "daemon/shard_gate_internal.h"
#include "daemon/capacity_summary_internal.h"
#include "daemon/taint_evict_internal.h"

struct daemon {
	struct state *state;     /* the state region: everything below that
				  * lives in shared memory is in it */
	struct state_meta *meta;
	struct intern *strings;
	struct res_names *res;   /* in the meta section */
	struct sched_config cfg;
	struct plugin_ctx ctx;
	struct cluster *cluster;
	unsigned workers;
	struct engine **engines;
	struct engine *evaluator; /* OP_EVALUATE's, on the control thread */
	struct serve_stats *stats; /* the worker stats section */
	struct producers *producers;
	struct placements *placements;
	struct serve *serve;
	struct queue_events *events; /* what wakes waiting pods */
	struct evictor *evictor;     /* preemption's thread */
	struct warmer *warmer;       /* the placement table's pages, ahead of use */
	struct lease_table *leases;  /* node leases (issue 38) */
	struct lease_ticker *lease_ticker; /* NULL: a test's clock, ticked by hand */
	struct taint_evict *lifecycle; /* the zone tainter (issue 38) */
	struct quarantine *quarantine; /* pools failing together (issue 38) */
	char *pool_label;
	uint32_t pool_key;             /* its intern id */
	struct shard_gate *shard_gate; /* with --etcd (issue 40); NULL: one host */
	uint32_t shard_key;            /* the shard label's id (--shard-by) */
	struct membership *membership; /* its thread; NULL: one host */
	struct etcd_sync *etcd_sync;   /* sync commits; NULL: none */
	struct shard_watch *shard_watch; /* other shards' placements; NULL: none */
	/* The durable store's hooks (zero: none), which etcd sync's chain. */
	struct producers_persist store_hooks;
	struct priority_classes classes; /* the cluster file's and admins' */
	struct gang_table gangs;         /* PodGroups, likewise */
	struct pdb_table pdbs;           /* PodDisruptionBudgets, likewise */
	struct pool *pool;
	struct control_server *server;
	struct control_server *admin;
	struct persist *persist;  /* the durable store; NULL: none */
	struct quota_charge *quota; /* the quotas' charges; NULL: none */
	struct qe_host *escrow; /* quota by escrow (--etcd with quotas); NULL: none */
	struct afs_ledger *afs;     /* admission fair sharing; NULL: off */
	/* Kueue's objects of the cluster file (ingest/kueue_json.h), owned;
	 * NULL: none (or cfg->quota, the caller's, is used). */
	struct quota_tree *file_quota;
	bool file_quota_read;
	const char *start_kind;   /* "created", "resumed", "rebuilt from the store" */
	char admin_path[108];
	char given[STATE_ORIGIN_MAX];  /* the inputs' record; "": none given */
	char store_origin[STATE_ORIGIN_MAX]; /* the store's record (peeked) */
	bool store_has_state;
};

/* The worker stats section is struct serve_stats, field for field, as
 * shm/layout.h's struct state_worker_stats tells observers. */
#define SAME_FIELD(a, b) \
	(__builtin_offsetof(struct serve_stats, a) == \
	 __builtin_offsetof(struct state_worker_stats, b))
_Static_assert(sizeof(struct serve_stats) == sizeof(struct state_worker_stats) &&
	       SAME_FIELD(pods, pods) && SAME_FIELD(rejected, rejected) &&
	       SAME_FIELD(cancelled, cancelled) &&
	       SAME_FIELD(bad_handles, bad_handles) &&
	       SAME_FIELD(completion_overflows, completion_overflows) &&
	       SAME_FIELD(resolver.placed, placed) &&
	       SAME_FIELD(resolver.unschedulable, unschedulable) &&
	       SAME_FIELD(resolver.conflicts, conflicts) &&
	       SAME_FIELD(resolver.gave_up, gave_up) && SAME_FIELD(seq, seq) &&
	       SAME_FIELD(pending_active, pending_active) &&
	       SAME_FIELD(pending_gated, pending_gated) &&
	       SAME_FIELD(preemption_attempts, preemption_attempts) &&
	       SAME_FIELD(preemption_victims, preemption_victims) &&
	       SAME_FIELD(attempts, attempts) && SAME_FIELD(waited, waited) &&
	       SAME_FIELD(queue_woken, queue_woken),
	       "worker stats as shm/layout.h says");

static void teardown(struct daemon *d)
{
	membership_stop(d->membership); /* first: it reads the cluster */
	shard_watch_stop(d->shard_watch); /* before the producers and tables it writes */
	afsl_saver_stop(d->afs); /* before the store it writes to */
	lease_ticker_stop(d->lease_ticker); /* before the producers it syncs */
	warm_stop(d->warmer); /* before the table it reads */
	persist_close(d->persist); /* everything queued committed first */
	evict_destroy(d->evictor);
	if (d->serve != NULL)
		serve_destroy(d->serve);
	queue_events_destroy(d->events);
	producers_destroy(d->producers);
	taint_evict_destroy(d->lifecycle);
	quarantine_destroy(d->quarantine); /* after the producers that report */
	etcd_sync_destroy(d->etcd_sync, 0); /* after the workers that wait on it */
	shard_gate_destroy(d->shard_gate); /* after the workers and membership */
	free(d->pool_label);
	lease_destroy(d->leases);
	placements_destroy(d->placements);
	qc_destroy(d->quota); /* after the table whose free hook it is */
	afsl_destroy(d->afs);  /* after the hook and workers that feed it */
	quota_tree_free(d->file_quota); /* after the charges made against it */
	qe_host_destroy(d->escrow);     /* its tree in force, as the file's */
	for (unsigned i = 0; d->engines != NULL && i < d->workers; i++)
		engine_destroy(d->engines[i]);
	free(d->engines);
	engine_destroy(d->evaluator);
	cluster_destroy(d->cluster);
	intern_destroy(d->strings);
	state_close(d->state);
	free(d);
}

/* A new region: the cluster from its file, or synthetic. */
static int load_cluster(struct daemon *d, const struct daemon_config *cfg,
			bool quiet, char *err, size_t err_len)
{
	if (cfg->cluster_path != NULL) {
		struct cluster_load_stats st;
		int rc = cluster_load_file_into(cfg->cluster_path, d->strings, d->res,
						d->cluster, d->placements, &st, err,
						err_len);
		if (rc == 0 && !quiet)
			log_msg(LOG_LEVEL_INFO, "cluster %s: %u nodes, %u running pods "
				"counted, %u objects of other kinds skipped",
				cfg->cluster_path, st.nodes, st.running_pods,
				st.skipped.total);
		if (rc == 0) {
			/* Its Kueue objects, read with it: kept for start_quota. */
			d->file_quota = st.quota;
			d->file_quota_read = true;
		}
		return rc;
	}
	struct synthetic_stats st;
	int rc = synthetic_cluster_into(cfg->synthetic_nodes, cfg->synthetic_running,
					cfg->seed, d->strings, d->cluster,
					d->placements, &st, err, err_len);
	if (rc == 0 && !quiet)
		log_msg(LOG_LEVEL_INFO, "synthetic cluster: %u nodes, %u running pods",
			st.nodes, st.running);
	return rc;
}

/* A region a previous daemon left: every placement record checked, and
 * every node's use recounted from them (shm/recount.h). */
static int resume_cluster(struct daemon *d, const struct daemon_config *cfg,
			  char *err, size_t err_len)
{
	struct recount_stats rs;
	char why[256];
	int rc = ledger_recount(d->cluster, d->placements, IDENTITIES_MAX,
				state_section(d->state, SHM_SECTION_IDENTITIES).base,
				&rs, why, sizeof(why));
	if (rc < 0)
		return errmsg_rc(rc, err, err_len, "state region %s: %s (start "
				 "with --fresh to discard the region, after "
				 "`shmsched store check` if a --state-dir holds "
				 "its state)", cfg->state_name, why);
	/* Issue 41: the strings producers' templates added that no record
	 * holds are freed (shm/recount.h). */
	struct intern_reclaim_stats ir;
	if (strings_reclaim(d->strings, d->cluster, d->placements, &ir) < 0)
		return errmsg_rc(-ENOMEM, err, err_len, "out of memory");
	d->meta->recovered_placements = rs.records;
	d->meta->rolled_back = rs.nodes_fixed;
	log_msg(LOG_LEVEL_INFO, "state region %s resumed (%s stop): %u nodes, "
		"%llu placements (%llu on removed nodes), %llu node(s) recounted "
		"to their records; %u unheld string(s) freed", cfg->state_name,
		d->meta->clean_stop ? "after a clean" : "after an unclean",
		cluster_nodes(d->cluster), (unsigned long long)rs.records,
		(unsigned long long)rs.stale, (unsigned long long)rs.nodes_fixed,
		ir.freed);
	return 0;
}

/* Kueue's quotas (daemon/quota_charge_internal.h): the live placements'
 * charges counted again from their records (a resumed region's), every
 * record's free hook set, the workers told. Before the pool starts. */
static int start_quota(struct daemon *d, const struct daemon_config *cfg,
		       struct quota_tree *tree, char *err, size_t err_len)
{
	d->quota = qc_create(tree, d->strings, d->res, d->workers);
	if (d->quota == NULL)
		return errmsg_rc(-errno, err, err_len, "quota: %s (the flavors' "
				 "nodeLabels, interned)", strerror(errno));
	if (cfg->admission_fair_sharing != NULL) {
		int rc = afs_settings_check(cfg->admission_fair_sharing, err, err_len);
		if (rc < 0)
			return rc;
		d->afs = afsl_create(cfg->admission_fair_sharing, tree,
				     cfg->afs_clock_ns, cfg->afs_clock_arg);
		if (d->afs == NULL)
			return errmsg_rc(-ENOMEM, err, err_len, "admission fair "
					 "sharing: out of memory");
		qc_set_admission_fair(d->quota, d->afs); /* before the recount */
	}
	uint64_t charged, dropped;
	qc_recount(d->quota, d->placements, &charged, &dropped);
	if (charged > 0 || dropped > 0)
		log_msg(dropped > 0 ? LOG_LEVEL_WARN : LOG_LEVEL_INFO,
			"quota: %llu placement(s) charged again to their "
			"ClusterQueues; %llu no longer fit the quotas given "
			"and are counted in none", (unsigned long long)charged,
			(unsigned long long)dropped);
	if (d->afs != NULL && d->persist != NULL) {
		/* After the recount: what the resumed placements hold. */
		uint64_t loaded, skipped;
		int rc = afsl_load(d->afs, persist_store(d->persist), &loaded,
				   &skipped, err, err_len);
		if (rc < 0)
			return rc;
		if (loaded > 0 || skipped > 0)
			log_msg(LOG_LEVEL_INFO, "admission fair sharing: the usage "
				"of %llu LocalQueue(s) read back from the store; "
				"%llu of LocalQueues no longer given dropped",
				(unsigned long long)loaded,
				(unsigned long long)skipped);
		/* Saved again at each sample, not only at a clean stop. */
		rc = afsl_saver_start(d->afs, persist_store(d->persist), err,
				      err_len);
		if (rc < 0)
			return rc;
	}
	placements_set_free_hook(d->placements, qc_on_free, d->quota);
	serve_set_quota(d->serve, d->quota);
	return 0;
}

/* OP_QUEUE's (ingest/producers_queue.c), on the control thread under the
 * producers' lock: the new tree in force (QA4 in daemon/quota_charge.c),
 * the old one freed: no thread reaches it once qc_replace returns. */
static int queue_replace(void *arg, struct quota_tree *t,
			 struct producers_queue_carried *out)
{
	struct daemon *d = arg;
	struct quota_tree *old = d->file_quota;
	struct qc_carried c;
	/* Quota by escrow: t is the base, a copy of it with the slices in
	 * force (daemon/quota_escrow_host_internal.h). */
	int rc = d->escrow != NULL ? qe_host_replace(d->escrow, t, &c)
				   : qc_replace(d->quota, t, d->placements, &old, &c);
	if (rc < 0)
		return rc;
	out->carried = c.carried;
	out->dropped = c.dropped;
	memcpy(out->first_dropped, c.first_dropped, sizeof(out->first_dropped));
	if (old == d->file_quota)
		d->file_quota = t;
	quota_tree_free(old);
	return 0;
}

/* The pool quarantine's counts (quarantine_counts), as shmsched_pool_*
 * (issue 38), through the shared Prometheus writer. */
static void quarantine_metrics_text(struct daemon *d, struct quota_text *o)
{
	struct daemon_quarantine c;
	daemon_quarantine_counts(d, &c);
	quota_text_put(o, "# HELP shmsched_pool_quarantined (pool, template) pairs "
		       "quarantined now: the template's pods are not placed in the "
		       "pool.\n# TYPE shmsched_pool_quarantined gauge\n"
		       "shmsched_pool_quarantined %" PRIu32 "\n", c.quarantined);
	quota_text_put(o, "# HELP shmsched_pool_quarantined_nodes Nodes of the "
		       "pools quarantined now (at most 20 %% of the nodes).\n"
		       "# TYPE shmsched_pool_quarantined_nodes gauge\n"
		       "shmsched_pool_quarantined_nodes %" PRIu32 "\n",
		       c.nodes_quarantined);
	quota_text_put(o, "# HELP shmsched_pool_failures_total Pod failures "
		       "reported (OP_FAILURE), counted or not.\n"
		       "# TYPE shmsched_pool_failures_total counter\n"
		       "shmsched_pool_failures_total %" PRIu64 "\n", c.failures);
	quota_text_put(o, "# HELP shmsched_pool_quarantine_events_total Quarantines "
		       "tripped, lifted (a window without failures), released (an "
		       "admin's shmsched pool release), capped (not tripped: over "
		       "20 %% of the nodes), and failures untracked (the table "
		       "full).\n# TYPE shmsched_pool_quarantine_events_total "
		       "counter\n");
	const char *const ev[] = {"trip", "lift", "release", "capped", "untracked"};
	const uint64_t v[] = {c.trips, c.lifts, c.released, c.capped, c.untracked};
	for (unsigned i = 0; i < 5; i++) {
		quota_text_put(o, "shmsched_pool_quarantine_events_total{");
		quota_text_label(o, "event", ev[i], false);
		quota_text_put(o, "} %" PRIu64 "\n", v[i]);
	}
	quota_text_put(o, "# HELP shmsched_pool_refused_total Placement attempts "
		       "left unschedulable with their template's quarantined pools "
		       "excluded.\n# TYPE shmsched_pool_refused_total counter\n"
		       "shmsched_pool_refused_total %" PRIu64 "\n", c.refused);
}

_Static_assert(DAEMON_RENEW_BUCKETS == LEASE_RENEWER_BUCKETS, "one histogram");

/* The lease's keep-alives: their latency (a histogram) and the longest
 * gap between two renewals. */
static void renew_metrics_text(const struct daemon_shards *c, struct quota_text *o)
{
	quota_text_put(o, "# HELP shmsched_etcd_lease_renew_seconds The lease's keep-alives "
		       "answered, by latency (sent to answered; on their own thread and "
		       "etcd connection).\n"
		       "# TYPE shmsched_etcd_lease_renew_seconds histogram\n");
	uint64_t cum = 0;
	for (size_t i = 0; i < DAEMON_RENEW_BUCKETS; i++) {
		cum += c->renew_buckets[i];
		quota_text_put(o, "shmsched_etcd_lease_renew_seconds_bucket{le=\"%g\"} %" PRIu64
			       "\n", lease_renewer_bucket_s[i], cum);
	}
	quota_text_put(o, "shmsched_etcd_lease_renew_seconds_bucket{le=\"+Inf\"} %" PRIu64 "\n"
		       "shmsched_etcd_lease_renew_seconds_sum %.6f\n"
		       "shmsched_etcd_lease_renew_seconds_count %" PRIu64 "\n"
		       "# HELP shmsched_etcd_lease_renew_gap_max_seconds The longest time "
		       "between two renewals' sends of one lease (TTL/3 when on time; the "
		       "lease lapses past TTL).\n"
		       "# TYPE shmsched_etcd_lease_renew_gap_max_seconds gauge\n"
		       "shmsched_etcd_lease_renew_gap_max_seconds %.6f\n",
		       c->renewals, (double)c->renew_sum_ns / 1e9, c->renewals,
		       (double)c->renew_gap_max_ns / 1e9);
}

/* With --etcd, the host's membership (daemon_shard_status) as
 * shmsched_etcd_* (issue 40 item 6). */
static void shard_metrics_text(const struct daemon_shards *c, struct quota_text *o)
{
	uint64_t now = now_ns();
	quota_text_put(o, "# HELP shmsched_etcd_lease_alive 1 while this host's etcd "
		       "lease is surely alive (it places only then).\n"
		       "# TYPE shmsched_etcd_lease_alive gauge\n"
		       "shmsched_etcd_lease_alive %d\n"
		       "# HELP shmsched_etcd_coordinator 1 while this host is the "
		       "cluster's coordinator.\n# TYPE shmsched_etcd_coordinator gauge\n"
		       "shmsched_etcd_coordinator %d\n"
		       "# HELP shmsched_etcd_shards_owned Shards this host owns now.\n"
		       "# TYPE shmsched_etcd_shards_owned gauge\n"
		       "shmsched_etcd_shards_owned %zu\n",
		       c->alive_until_ns > now ? 1 : 0, c->coordinator ? 1 : 0, c->owned);
	quota_text_put(o, "# HELP shmsched_etcd_events_total The membership's events: "
		       "leases granted (join), renewals answered (renewal), renewals "
		       "refused for an expired lease (loss), requests failed (error), "
		       "shards taken (take) and released (release), assignments "
		       "written as coordinator (assign).\n"
		       "# TYPE shmsched_etcd_events_total counter\n"
		       "shmsched_etcd_events_total{event=\"join\"} %" PRIu64 "\n"
		       "shmsched_etcd_events_total{event=\"renewal\"} %" PRIu64 "\n"
		       "shmsched_etcd_events_total{event=\"loss\"} %" PRIu64 "\n"
		       "shmsched_etcd_events_total{event=\"error\"} %" PRIu64 "\n"
		       "shmsched_etcd_events_total{event=\"take\"} %" PRIu64 "\n"
		       "shmsched_etcd_events_total{event=\"release\"} %" PRIu64 "\n"
		       "shmsched_etcd_events_total{event=\"assign\"} %" PRIu64 "\n",
		       c->joins, c->renewals, c->losses, c->errors, c->takes, c->releases,
		       c->assigned);
	quota_text_put(o, "# HELP shmsched_etcd_placements_total With sync or async "
		       "commits: placements committed to etcd (committed), "
		       "rolled back because etcd did not commit them before their answers "
		       "(refused), other "
		       "hosts' placements counted on taking their shards (counted), "
		       "deletes of freed placements' keys not queued (delete_dropped), "
		       "placements committed without their labels (labels_dropped), "
		       "placements committed without their quota queue (queue_dropped), "
		       "other hosts' placements counted on their nodes but charged to no "
		       "ClusterQueue, theirs unknown here (queue_unknown), "
		       "answered placed (async) and then not committed: rolled back and "
		       "logged (lost).\n"
		       "# TYPE shmsched_etcd_placements_total counter\n"
		       "shmsched_etcd_placements_total{result=\"committed\"} %" PRIu64 "\n"
		       "shmsched_etcd_placements_total{result=\"refused\"} %" PRIu64 "\n"
		       "shmsched_etcd_placements_total{result=\"counted\"} %" PRIu64 "\n"
		       "shmsched_etcd_placements_total{result=\"delete_dropped\"} %" PRIu64
		       "\n"
		       "shmsched_etcd_placements_total{result=\"labels_dropped\"} %" PRIu64
		       "\n"
		       "shmsched_etcd_placements_total{result=\"queue_dropped\"} %" PRIu64
		       "\n"
		       "shmsched_etcd_placements_total{result=\"queue_unknown\"} %" PRIu64
		       "\n"
		       "shmsched_etcd_placements_total{result=\"lost\"} %" PRIu64 "\n",
		       c->committed, c->refused, c->counted, c->deletes_dropped,
		       c->labels_dropped, c->queue_dropped, c->queue_unknown, c->lost);
	quota_text_put(o, "# HELP shmsched_etcd_replication_lag_seconds The age of the "
		       "oldest placement record this host has pushed to etcd and etcd has "
		       "not answered yet, queued or in flight, sync and async alike (0: "
		       "none).\n"
		       "# TYPE shmsched_etcd_replication_lag_seconds gauge\n"
		       "shmsched_etcd_replication_lag_seconds %.3f\n"
		       "# HELP shmsched_etcd_replication_lag_records Placement records "
		       "this host has pushed to etcd and etcd has not answered yet.\n"
		       "# TYPE shmsched_etcd_replication_lag_records gauge\n"
		       "shmsched_etcd_replication_lag_records %" PRId64 "\n"
		       "# HELP shmsched_etcd_status_puts_total This host's status (its "
		       "shards' free capacity, its replication lag) put in hosts/<host>: at "
		       "most one a second, when it changed.\n"
		       "# TYPE shmsched_etcd_status_puts_total counter\n"
		       "shmsched_etcd_status_puts_total %" PRIu64 "\n",
		       (double)c->lag_oldest_ms / 1000.0, c->lag_records, c->status_puts);
	if (!c->watching)
		return;
	quota_text_put(o, "# HELP shmsched_etcd_foreign_placements Other shards' "
		       "placements this host holds as bound records (for inter-pod "
		       "rules and room), from its watch of etcd.\n"
		       "# TYPE shmsched_etcd_foreign_placements gauge\n"
		       "shmsched_etcd_foreign_placements %" PRIu64 "\n"
		       "# HELP shmsched_etcd_watch_revision The etcd revision this host's "
		       "shard watch has applied through (0: none yet).\n"
		       "# TYPE shmsched_etcd_watch_revision gauge\n"
		       "shmsched_etcd_watch_revision %" PRId64 "\n"
		       "# HELP shmsched_etcd_watch_events_total The shard watch's events: "
		       "other hosts' placements put (put) and deleted (delete), lists "
		       "(relist: the start, a compacted watch, a shard given up), "
		       "placements not held (refused: the bound reached or a table full), "
		       "on nodes this host lacks (unknown_node), errors (error).\n"
		       "# TYPE shmsched_etcd_watch_events_total counter\n"
		       "shmsched_etcd_watch_events_total{event=\"put\"} %" PRIu64 "\n"
		       "shmsched_etcd_watch_events_total{event=\"delete\"} %" PRIu64 "\n"
		       "shmsched_etcd_watch_events_total{event=\"relist\"} %" PRIu64 "\n"
		       "shmsched_etcd_watch_events_total{event=\"refused\"} %" PRIu64 "\n"
		       "shmsched_etcd_watch_events_total{event=\"unknown_node\"} %" PRIu64 "\n"
		       "shmsched_etcd_watch_events_total{event=\"error\"} %" PRIu64 "\n",
		       c->foreign_records, c->watch_revision, c->watch_puts, c->watch_deletes,
		       c->watch_relists, c->watch_refused, c->watch_unknown_node,
		       c->watch_errors);
	quota_text_put(o, "# HELP shmsched_etcd_watch_ranges Key ranges the shard watch "
		       "follows now: runs of the shards this host does not own (0: it owns "
		       "every shard it knows, and watches nothing).\n"
		       "# TYPE shmsched_etcd_watch_ranges gauge\n"
		       "shmsched_etcd_watch_ranges %" PRIu64 "\n"
		       "# HELP shmsched_etcd_watch_streams_total Watch streams the shard "
		       "watch opened (one per list, and one per resume).\n"
		       "# TYPE shmsched_etcd_watch_streams_total counter\n"
		       "shmsched_etcd_watch_streams_total %" PRIu64 "\n"
		       "# HELP shmsched_etcd_watch_received_total Events etcd sent the shard "
		       "watch, of any key in its ranges (other hosts' placements, this "
		       "host's own, lane and owner keys).\n"
		       "# TYPE shmsched_etcd_watch_received_total counter\n"
		       "shmsched_etcd_watch_received_total %" PRIu64 "\n",
		       c->watch_ranges, c->watch_streams, c->watch_received);
}

/* OP_QUEUE_METRICS's text (ingest/producers.h), on the control thread
 * under the producers' lock: the node lifecycle's counts
 * (daemon_lifecycle_counts, as shmsched_node_*: issue 38), the pool
 * quarantine's (shmsched_pool_*), then Kueue's quota gauges and workload
 * counts (qc_metrics_text; every ClusterQueue: a text past one answer
 * goes whole in a memfd, ingest/producers_queue.c). */
#define DAEMON_METRICS_QUEUES QUOTA_MAX_CLUSTER_QUEUES
static size_t daemon_metrics_text(void *arg, char *buf, size_t len)
{
	struct daemon *d = arg;
	size_t used = 0;
	if (len > 0)
		buf[0] = '\0';
	if (d->lifecycle != NULL) {
		struct daemon_lifecycle c;
		daemon_lifecycle_counts(d, &c);
		int n = snprintf(buf, len,
			"# HELP shmsched_node_zones Zones of the node lifecycle "
			"controller by state (Kubernetes' ZoneState).\n"
			"# TYPE shmsched_node_zones gauge\n"
			"shmsched_node_zones{state=\"Initial\"} %u\n"
			"shmsched_node_zones{state=\"Normal\"} %u\n"
			"shmsched_node_zones{state=\"PartialDisruption\"} %u\n"
			"shmsched_node_zones{state=\"FullDisruption\"} %u\n"
			"# HELP shmsched_node_tainted Nodes tainted unreachable now.\n"
			"# TYPE shmsched_node_tainted gauge\nshmsched_node_tainted %u\n"
			"# HELP shmsched_node_taints_queued Unknown nodes waiting for "
			"their zone's eviction rate to taint them.\n"
			"# TYPE shmsched_node_taints_queued gauge\n"
			"shmsched_node_taints_queued %u\n"
			"# HELP shmsched_node_taints_total Unreachable taints let through "
			"by the zones' rates.\n"
			"# TYPE shmsched_node_taints_total counter\n"
			"shmsched_node_taints_total %llu\n"
			"# HELP shmsched_node_evictions_pending Placements whose taint "
			"eviction is scheduled (tolerationSeconds running).\n"
			"# TYPE shmsched_node_evictions_pending gauge\n"
			"shmsched_node_evictions_pending %u\n"
			"# HELP shmsched_node_evictions_total Placements the taint manager "
			"evicted.\n"
			"# TYPE shmsched_node_evictions_total counter\n"
			"shmsched_node_evictions_total %llu\n"
			"# HELP shmsched_node_tolerations_kept Placements whose "
			"tolerations the taint manager keeps.\n"
			"# TYPE shmsched_node_tolerations_kept gauge\n"
			"shmsched_node_tolerations_kept %u\n",
			c.zones - c.zones_normal - c.zones_partial - c.zones_full,
			c.zones_normal, c.zones_partial, c.zones_full, c.tainted,
			c.taints_queued, (unsigned long long)c.taints_total,
			c.evictions_pending, (unsigned long long)c.evicted,
			c.tolerations_kept);
		used = n > 0 ? (size_t)n : 0;
	}
	if (d->quarantine != NULL) {
		size_t left = used < len ? len - used : 0;
		struct quota_text o = {.buf = left ? buf + used : NULL, .len = left};
		quarantine_metrics_text(d, &o);
		used += o.used;
	}
	struct daemon_shards sh;
	if (daemon_shard_status(d, &sh)) {
		size_t left = used < len ? len - used : 0;
		struct quota_text o = {.buf = left ? buf + used : NULL, .len = left};
		shard_metrics_text(&sh, &o);
		renew_metrics_text(&sh, &o);
		used += o.used;
	}
	/* The quota's last: its gauges are what a cut answer loses. */
	size_t room = used < len ? len - used : 0;
	if (d->quota != NULL)
		used += qc_metrics_text(d->quota, DAEMON_METRICS_QUEUES,
					room ? buf + used : NULL, room);
	return used;
}

/* "PATH (hash H)" for an input file: its absolute path and the hash of
 * its bytes (base/hash.h: a change of content, not an attack, is what it
 * finds). Reading it is the first check that it is there. */
static int file_record(const char *opt, const char *path, char *out,
		       size_t len, char *err, size_t err_len)
{
	char abs[PATH_MAX];
	if (realpath(path, abs) == NULL)
		return errmsg_rc(-errno, err, err_len, "%s %s: %s", opt, path,
				 strerror(errno));
	FILE *f = fopen(abs, "rb");
	if (f == NULL)
		return errmsg_rc(-errno, err, err_len, "%s %s: %s", opt, path,
				 strerror(errno));
	uint64_t h = HASH64_SEED;
	char buf[16384];
	size_t n;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		h = hash64_add(h, buf, n);
	bool bad = ferror(f) != 0;
	fclose(f);
	if (bad)
		return errmsg_rc(-EIO, err, err_len, "%s %s: a read error", opt, path);
	int w = snprintf(out, len, "%s (hash %016llx)", abs,
			 (unsigned long long)rng_hash(h));
	if (w < 0 || (size_t)w >= len)
		return errmsg_rc(-ENAMETOOLONG, err, err_len, "%s %s: its path is "
				 "too long to record (at most about %zu bytes)", opt,
				 path, len / 2 - 30);
	return 0;
}

/* The record of the given inputs, d->given: "cluster PATH (hash H)" or
 * "synthetic N:R seed S", then "; config PATH (hash H)" or "; config
 * defaults". "" when no cluster input is given (a resume). */
static int given_record(struct daemon *d, const struct daemon_config *cfg,
			char *err, size_t err_len)
{
	char cluster[STATE_ORIGIN_MAX / 2], config[STATE_ORIGIN_MAX / 2] = "defaults";
	int rc = 0;
	if (cfg->config_path != NULL)
		rc = file_record("--config", cfg->config_path, config,
				 sizeof(config), err, err_len);
	if (rc < 0)
		return rc;
	d->given[0] = '\0';
	if (cfg->cluster_path != NULL) {
		rc = file_record("--cluster", cfg->cluster_path, cluster,
				 sizeof(cluster), err, err_len);
		if (rc < 0)
			return rc;
		snprintf(d->given, sizeof(d->given), "cluster %s; config %s", cluster,
			 config);
	} else if (cfg->synthetic_nodes > 0) {
		snprintf(d->given, sizeof(d->given), "synthetic %u:%u seed %llu; "
			 "config %s", cfg->synthetic_nodes, cfg->synthetic_running,
			 (unsigned long long)cfg->seed, config);
	}
	return 0;
}

/* Whether two records name the same cluster input (configs aside). */
static bool same_cluster(const char *a, const char *b)
{
	const char *ea = strstr(a, "; config "), *eb = strstr(b, "; config ");
	size_t la = ea ? (size_t)(ea - a) : strlen(a);
	size_t lb = eb ? (size_t)(eb - b) : strlen(b);
	return la == lb && memcmp(a, b, la) == 0;
}

/* An existing state (`what`: the region, or the store) built from
 * `recorded`, started with inputs `given`: the same, none given, or
 * --resume: on; else refused, naming both and the ways on. */
static int check_origin(const struct daemon_config *cfg, const char *what,
			const char *recorded, const char *given, char *err,
			size_t err_len)
{
	if (given[0] == '\0' || cfg->resume || strcmp(recorded, given) == 0)
		return 0;
	return errmsg_rc(-EEXIST, err, err_len, "%s was built from %s; given: %s. "
			 "Start with --resume to keep it (the given cluster input "
			 "not read), or with --fresh to rebuild it from the given "
			 "inputs%s", what, recorded[0] ? recorded :
			 "an unknown input (a version that kept no record made it)",
			 given, cfg->state_dir ? " (the store cleared too)" : "");
}

/* The store, if any, and what the state region starts from: a resumed
 * region as it is (the store is rewritten from it: it can only be older);
 * a new one from the store when that holds anything, else from the
 * cluster input (then written to the store). */
static int fill_state(struct daemon *d, const struct daemon_config *cfg,
		      bool fresh, char *err, size_t err_len)
{
	if (cfg->state_dir != NULL) {
		struct persist_tables t = {
			.strings = d->strings,
			.cluster = d->cluster,
			.records = d->placements,
			.identities = state_section(d->state, SHM_SECTION_IDENTITIES).base,
		};
		int rc = persist_open(cfg->state_dir, cfg->durability, &t, &d->persist,
				      err, err_len);
		if (rc < 0)
			return rc;
		d->meta->durability = (uint8_t)cfg->durability;
	}
	/* --fresh: from the inputs, the store cleared (replaced below). */
	bool from_store = false;
	if (fresh && !cfg->fresh && d->persist != NULL) {
		int rc = persist_has_state(d->persist, &from_store, err, err_len);
		if (rc < 0)
			return rc;
	}
	int rc;
	if (from_store) {
		uint64_t nodes, placements, skipped;
		rc = persist_restore(d->persist, &nodes, &placements, &skipped, err,
				     err_len);
		if (rc < 0) {
			char why[768];
			snprintf(why, sizeof(why), "%s", err);
			errmsg_rc(rc, err, err_len, "%s (refused: `shmsched store "
				  "check %s` names what is damaged; move the store "
				  "away, or start with another --state-dir)", why,
				  cfg->state_dir);
		}
		if (rc == 0)
			log_msg(LOG_LEVEL_INFO, "state region rebuilt from the store "
				"%s: %llu nodes, %llu placements (%llu on nodes it does "
				"not hold, skipped), built from %s", cfg->state_dir,
				(unsigned long long)nodes,
				(unsigned long long)placements,
				(unsigned long long)skipped,
				d->store_origin[0] ? d->store_origin : "(not recorded)");
		if (rc == 0) {
			snprintf(d->meta->origin, sizeof(d->meta->origin), "%s",
				 d->store_origin);
			d->start_kind = "rebuilt from the store";
		}
	} else {
		rc = fresh ? load_cluster(d, cfg, false, err, err_len)
			   : resume_cluster(d, cfg, err, err_len);
		if (rc == 0 && fresh)
			snprintf(d->meta->origin, sizeof(d->meta->origin), "%s",
				 d->given);
		d->start_kind = fresh ? "created" : "resumed";
		if (rc == 0 && d->persist != NULL)
			rc = persist_replace_all(d->persist, err, err_len);
	}
	/* The store keeps the region's record: what it now holds. */
	if (rc == 0 && d->persist != NULL)
		rc = store_put_origin(persist_store(d->persist), d->meta->origin, err,
				      err_len);
	if (rc == 0 && d->persist != NULL)
		log_msg(LOG_LEVEL_INFO, "durable store %s: durability %s",
			cfg->state_dir, store_durability_name(cfg->durability));
	return rc;
}

/* Opens the state region and the tables in it. */
static int open_state(struct daemon *d, const struct daemon_config *cfg,
		      bool *fresh, char *err, size_t err_len)
{
	char why[256];
	/* --fresh: state_open removes the region and creates it exclusively
	 * (a file planted between the two is refused, never adopted). */
	struct state_config sc = {
		.name = cfg->state_name,
		.max_nodes = cfg->max_nodes ? cfg->max_nodes : DAEMON_MAX_NODES,
		.max_placements = cfg->max_placements ? cfg->max_placements
						      : DAEMON_MAX_PLACEMENTS,
		.max_strings = DAEMON_MAX_STRINGS,
		.arena_size = DAEMON_STRING_BYTES,
		.workers = d->workers,
		.mode = cfg->region_mode,
		.group = cfg->region_group,
		.has_group = cfg->has_region_group,
		.fresh = cfg->fresh,
	};
	int rc = state_open(&sc, &d->state, fresh, err, err_len);
	if (rc < 0)
		return rc;
	struct state_meta *m = d->meta = state_meta(d->state);
	if (!*fresh) {
		char what[STATE_NAME_MAX + 16];
		snprintf(what, sizeof(what), "state region %s", cfg->state_name);
		char recorded[STATE_ORIGIN_MAX];
		snprintf(recorded, sizeof(recorded), "%.*s", (int)sizeof(m->origin) - 1,
			 m->origin);
		rc = check_origin(cfg, what, recorded, d->given, err, err_len);
		if (rc < 0)
			return rc;
	}
	d->res = &m->res;
	d->strings = intern_create_in(state_section(d->state, SHM_SECTION_STRINGS),
				      m->max_strings, m->arena_size, *fresh, why,
				      sizeof(why));
	if (d->strings == NULL)
		return errmsg_rc(-errno, err, err_len, "state region %s: %s",
				 cfg->state_name ? cfg->state_name : "(anonymous)", why);
	struct cluster_memory mem = {
		.snapshots = state_section(d->state, SHM_SECTION_SNAPSHOTS),
		.ledger = state_section(d->state, SHM_SECTION_LEDGER),
		.current = &m->current_snapshot,
	};
	d->cluster = cluster_create_in(d->strings, m->max_nodes, &mem, *fresh, why,
				       sizeof(why));
	if (d->cluster == NULL)
		return errmsg_rc(-errno, err, err_len, "state region %s: %s",
				 cfg->state_name ? cfg->state_name : "(anonymous)", why);
	d->placements = placements_create_in(state_section(d->state,
							   SHM_SECTION_PLACEMENTS),
					     m->max_placements, *fresh);
	if (d->placements == NULL)
		return errmsg_rc(-errno, err, err_len, "state region %s: placement "
				 "records: %s", cfg->state_name, strerror(errno));
	/* A cache of free records per worker (shm/placements.h): no head
	 * every placement moves. */
	if (d->workers > 0 && placements_set_workers(d->placements, d->workers) < 0)
		return errmsg_rc(-ENOMEM, err, err_len, "placement records: "
				 "caches for %u workers: out of memory", d->workers);
	d->stats = state_section(d->state, SHM_SECTION_WORKER_STATS).base;
	m->workers = d->workers;
	m->daemon_pid = (int32_t)getpid();
	m->started_s = (uint64_t)time(NULL);
	m->starts++;
	return 0;
}

const char *daemon_admin_socket(const struct daemon_config *cfg, char *buf,
				size_t len)
{
	int n = cfg->admin_socket_path != NULL
		? snprintf(buf, len, "%s", cfg->admin_socket_path)
		: snprintf(buf, len, "%s.admin", cfg->socket_path);
	return n > 0 && (size_t)n < len ? buf : NULL;
}

void daemon_admin_mode(const struct daemon_config *cfg, mode_t *mode,
		       gid_t *group, bool *has_group)
{
	bool other_uid = false;
	for (size_t i = 0; i < cfg->n_admin_uids; i++)
		other_uid |= cfg->admin_uids[i] != geteuid();
	*group = 0;
	*has_group = false;
	if (other_uid || cfg->n_admin_gids > 1) {
		*mode = 0666;
	} else if (cfg->n_admin_gids == 1) {
		*mode = 0660;
		*group = cfg->admin_gids[0];
		*has_group = true;
	} else {
		*mode = 0600;
	}
}

/* A socket others may use is useless in a directory they cannot enter:
 * said once at start, naming the directory's mode. */
static void check_socket_dir(const char *path, mode_t mode, bool has_group,
			     gid_t group)
{
	char dir[sizeof(((struct daemon *)0)->admin_path)];
	snprintf(dir, sizeof(dir), "%s", path);
	char *slash = strrchr(dir, '/');
	if (slash == NULL)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == dir)
		slash[1] = '\0';
	else
		*slash = '\0';
	struct stat st;
	if ((mode & 0066) == 0 || stat(dir, &st) < 0)
		return;
	bool reach = (mode & 0006) ? (st.st_mode & 0001) != 0
		     : (st.st_mode & 0001) != 0 ||
		       ((st.st_mode & 0010) != 0 && has_group && st.st_gid == group);
	if (!reach)
		log_msg(LOG_LEVEL_WARN, "socket %s: mode %04o admits other users, "
			"but its directory %s (mode %04o, gid %u) does not let them "
			"in: give the directory o+x (or g+x and the group)", path,
			(unsigned)mode, dir, (unsigned)(st.st_mode & 07777),
			(unsigned)st.st_gid);
}

static void wake_pool(void *arg)
{
	pool_wake(arg);
}

unsigned daemon_default_workers(void)
{
	/* The CPUs this process may run on, not the machine's: the workers
	 * pin inside them (workers/pool.c). */
	cpu_set_t allowed;
	long cores = sched_getaffinity(0, sizeof(allowed), &allowed) == 0
		     ? CPU_COUNT(&allowed) : sysconf(_SC_NPROCESSORS_ONLN);
	return cores > 1 ? (unsigned)cores - 1 : 1;
}

/* Every input read once into a scratch anonymous region, thrown away: a
 * bad one stops the start before anything is made. */
static int check_inputs(const struct daemon_config *cfg, char *err,
			size_t err_len)
{
	struct daemon *s = calloc(1, sizeof(*s));
	if (s == NULL)
		return errmsg_rc(-ENOMEM, err, err_len, "out of memory");
	s->workers = 1;
	struct daemon_config sc = *cfg;
	sc.state_name = NULL;
	sc.fresh = false;
	sc.resume = false;
	sc.has_region_group = false;
	sc.region_mode = 0;
	bool fresh;
	/* Its info lines (the scratch region made) would only confuse: a
	 * warning or an error still shows. One thread runs here. */
	enum log_level level = log_get_level();
	if (level > LOG_LEVEL_WARN)
		log_set_level(LOG_LEVEL_WARN);
	int rc = open_state(s, &sc, &fresh, err, err_len);
	sched_config_default(&s->cfg);
	if (rc == 0 && cfg->config_path != NULL)
		rc = sched_config_load(cfg->config_path, &s->cfg, s->res, s->strings,
				       err, err_len);
	if (rc == 0 && (cfg->cluster_path != NULL || cfg->synthetic_nodes > 0))
		rc = load_cluster(s, cfg, true, err, err_len);
	if (rc == 0 && cfg->cluster_path != NULL) {
		rc = priority_classes_init(&s->classes, s->strings) < 0
		     ? errmsg_rc(-ENOMEM, err, err_len, "priority classes: out of "
				 "memory")
		     : priority_load_file(cfg->cluster_path, &s->classes, &s->gangs,
					  &s->pdbs, s->strings, err, err_len);
	}
	if (rc == 0 && cfg->policy_path != NULL) {
		struct policy *pol;
		rc = policy_load_file(cfg->policy_path, &pol, err, err_len);
		if (rc == 0)
			policy_free(pol);
	}
	teardown(s);
	log_set_level(level);
	return rc < 0 ? rc : 0;
}

bool daemon_state_exists(const struct daemon_config *cfg)
{
	char path[PATH_MAX];
	if (cfg->fresh)
		return false;
	if (cfg->state_name != NULL &&
	    state_path(cfg->state_name, path, sizeof(path)) != NULL &&
	    access(path, F_OK) == 0)
		return true;
	return cfg->state_dir != NULL &&
	       snprintf(path, sizeof(path), "%s/data.mdb", cfg->state_dir) > 0 &&
	       access(path, F_OK) == 0;
}

const char *daemon_start_kind(const struct daemon *d)
{
	return d->start_kind ? d->start_kind : "created";
}

const char *daemon_origin(const struct daemon *d)
{
	return d->meta->origin;
}

int daemon_reload_policy(struct daemon *d, char *err, size_t err_len)
{
	return producers_reload_policy(d->producers, err, err_len);
}

static uint64_t lease_clock(void *arg)
{
	(void)arg;
	return now_ns();
}

static void lease_tick_cb(void *arg)
{
	int rc = daemon_lease_tick(arg);
	if (rc < 0)
		log_msg(LOG_LEVEL_WARN, "node leases: %s", strerror(-rc));
}

/* The lease table, its hooks in the producers, and the ticker when the
 * clock is the daemon's. Before the control sockets start. */
static int start_leases(struct daemon *d, const struct daemon_config *cfg,
			char *err, size_t err_len)
{
	bool own = cfg->lease_clock_ns == NULL;
	d->leases = lease_create(cfg->node_monitor_grace_ns ? cfg->node_monitor_grace_ns
							    : LEASE_GRACE_NS_DEFAULT,
				 own ? lease_clock : cfg->lease_clock_ns,
				 own ? NULL : cfg->lease_clock_arg);
	if (d->leases == NULL)
		return errmsg_rc(-ENOMEM, err, err_len, "node leases: out of memory");
	struct taint_evict_config tc = {
		.rate = cfg->node_eviction_rate > 0 ? cfg->node_eviction_rate
		      : cfg->node_eviction_rate < 0 ? 0 : TAINT_EVICT_RATE_DEFAULT,
		.secondary_rate = cfg->secondary_node_eviction_rate > 0
			? cfg->secondary_node_eviction_rate
			: cfg->secondary_node_eviction_rate < 0 ? 0
			: TAINT_EVICT_SECONDARY_RATE_DEFAULT,
		.unhealthy = cfg->unhealthy_zone_threshold != 0
			? cfg->unhealthy_zone_threshold : TAINT_EVICT_UNHEALTHY_DEFAULT,
		.large = cfg->large_cluster_size_threshold > UINT32_MAX ? UINT32_MAX
		       : cfg->large_cluster_size_threshold > 0
			? (uint32_t)cfg->large_cluster_size_threshold
		       : cfg->large_cluster_size_threshold < 0 ? 0
		       : TAINT_EVICT_LARGE_DEFAULT,
	};
	d->lifecycle = taint_evict_create(&tc, d->leases);
	if (d->lifecycle == NULL)
		return errmsg_rc(-errno, err, err_len, "node lifecycle: "
				 "--unhealthy-zone-threshold %g: expected a fraction "
				 "in (0, 1], and rates >= 0 (%s)", tc.unhealthy,
				 strerror(errno));
	serve_set_lifecycle(d->serve, d->lifecycle);
	producers_set_string_holder(d->producers, taint_evict_mark_strings,
				    d->lifecycle);
	producers_set_leases(d->producers, lease_renew_cb,
			     lease_state_cb, d->leases);
	if (!own)
		return 0;
	d->lease_ticker = lease_ticker_start(lease_tick_cb, d, DAEMON_LEASE_TICK_NS);
	if (d->lease_ticker == NULL)
		return errmsg_rc(-errno, err, err_len, "node leases: cannot start "
				 "their thread: %s", strerror(errno));
	return 0;
}

/* Under the producers' lock: the strings are not changing. */
static int quarantine_report_cb(void *arg, const struct producers_failure *f)
{
	struct daemon *d = arg;
	struct quarantine_key k = {.pool = f->pool, .owner = f->owner,
				   .template = f->template};
	enum quarantine_verdict v = quarantine_failure(d->quarantine,
						       quarantine_now(d->quarantine), &k,
						       f->node, f->pool_nodes,
						       f->total_nodes);
	if (v == QUARANTINE_TRIPPED || v == QUARANTINE_CAPPED)
		log_msg(LOG_LEVEL_WARN, "quarantine: pool %s=%s %s for template %s "
			"(identity %u)", d->pool_label, intern_str(d->strings, f->pool),
			v == QUARANTINE_TRIPPED ? "quarantined" : "not quarantined "
			"(over the 20 % cap)", f->template != 0
			? intern_str(d->strings, f->template) : "(unknown)", f->owner);
	return (int)v;
}

static unsigned quarantine_release_cb(void *arg, uint32_t pool, uint32_t template)
{
	struct daemon *d = arg;
	return quarantine_release(d->quarantine, pool, template);
}

/* Under the producers' lock, on a control thread: the workers'
 * place_quarantined (daemon/attempt.c) exclusion, for a surge's
 * replacement. */
static bool quarantine_exclude_cb(void *arg, uint32_t owner, uint32_t template,
				  const struct pod_spec *pod, struct pod_spec *out,
				  char *why, size_t why_len)
{
	struct daemon *d = arg;
	uint32_t pools[QUARANTINE_EXCLUDED_MAX];
	struct quarantine_info first;
	uint32_t n = quarantine_pools(d->quarantine, quarantine_now(d->quarantine),
				      owner, template, pools, QUARANTINE_EXCLUDED_MAX,
				      &first);
	if (n > QUARANTINE_EXCLUDED_MAX)
		n = QUARANTINE_EXCLUDED_MAX;
	if (n == 0 || !quarantine_exclude(pod, d->pool_key, pools, n, out))
		return false;
	quarantine_message(d->quarantine, &first, intern_str(d->strings, first.key.pool),
			   intern_str(d->strings, template), why, why_len);
	return true;
}

/* A surge's replacement placed on `node`: the count attempt.c keeps for a
 * worker's placement. */
static void quarantine_placed_cb(void *arg, uint32_t owner, uint32_t template,
				 const struct node_spec *node)
{
	struct daemon *d = arg;
	struct quarantine_key k = {.owner = owner, .template = template};
	if (labels_get(node->labels, node->n_labels, d->pool_key, &k.pool))
		quarantine_placed(d->quarantine, quarantine_now(d->quarantine), &k);
}

/* One line per pair: quarantined ones first. */
static uint32_t quarantine_list_cb(void *arg, const struct intern *strings,
				   char *buf, size_t len)
{
	struct quarantine *q = ((struct daemon *)arg)->quarantine;
	struct quarantine_info info[64];
	uint32_t n = quarantine_list(q, quarantine_now(q), info, 64), held = 0;
	size_t at = 0;
	for (uint32_t i = 0; i < n && i < 64; i++) {
		held += info[i].quarantined;
		int k = snprintf(buf + at, len - at, "%s pool %s template %s "
				 "identity %u: %u failures of %u placements on %u "
				 "nodes (pool of %u nodes)\n",
				 info[i].quarantined ? "quarantined" : "open",
				 intern_str(strings, info[i].key.pool),
				 info[i].key.template != 0
				 ? intern_str(strings, info[i].key.template) : "(unknown)",
				 info[i].key.owner, info[i].failures,
				 info[i].placements, info[i].nodes,
				 info[i].pool_nodes);
		if (k < 0 || (size_t)k >= len - at)
			break;
		at += (size_t)k;
	}
	if (n > 64)
		snprintf(buf + at, len - at, "... and %u more\n", n - 64);
	return held;
}

/* The quarantine of pools that fail together, its hooks in the producers
 * and in the workers' attempts. Before the control sockets start. */
static int start_quarantine(struct daemon *d, const struct daemon_config *cfg,
			    char *err, size_t err_len)
{
	struct quarantine_config qc = {
		.threshold = cfg->quarantine_threshold != 0 ? cfg->quarantine_threshold
			     : QUARANTINE_THRESHOLD_DEFAULT,
		.min_nodes = cfg->quarantine_min_nodes != 0 ? cfg->quarantine_min_nodes
			     : QUARANTINE_MIN_NODES_DEFAULT,
		.window_ns = cfg->quarantine_window_ns != 0 ? cfg->quarantine_window_ns
			     : QUARANTINE_WINDOW_DEFAULT_NS,
		.entries = QUARANTINE_ENTRIES_DEFAULT,
	};
	d->quarantine = quarantine_create(&qc);
	if (d->quarantine == NULL)
		return errmsg_rc(-errno, err, err_len, "--quarantine-threshold %g, "
				 "--quarantine-min-nodes %u, --quarantine-window "
				 "%.3f s: expected a rate in (0, 1], 1..%u nodes and "
				 "a window of at least 1 s (%s)", qc.threshold,
				 qc.min_nodes, (double)qc.window_ns * 1e-9,
				 QUARANTINE_NODES, strerror(errno));
	quarantine_set_clock(d->quarantine, cfg->quarantine_clock_ns,
			     cfg->quarantine_clock_arg);
	d->pool_label = strdup(cfg->pool_label != NULL ? cfg->pool_label
			       : QUARANTINE_LABEL_DEFAULT);
	uint32_t key;
	if (d->pool_label == NULL || intern_add_str(d->strings, d->pool_label, &key) < 0)
		return errmsg_rc(-ENOMEM, err, err_len, "--pool-label: out of memory");
	d->pool_key = key;
	if (serve_set_quarantine(d->serve, d->quarantine, key, d->strings) < 0)
		return errmsg_rc(-ENOMEM, err, err_len, "quarantine: out of memory");
	struct producers_quarantine pq = {
		.pool_label = d->pool_label, .report = quarantine_report_cb,
		.release = quarantine_release_cb, .list = quarantine_list_cb,
		.exclude = quarantine_exclude_cb, .placed = quarantine_placed_cb,
		.arg = d,
	};
	producers_set_quarantine(d->producers, &pq);
	return 0;
}

/* The membership's callbacks (coord/membership.h), on its thread
 * (member_alive_until also on the lease renewer's: the gate's one store,
 * the calls ordered by LR1): the gate's, and with sync commits the owned
 * set is opened to placements only where a committer is open: closed
 * first to what is no longer ready (a released shard: before its
 * committer drains and its owner key goes), then the committers opened
 * and closed, then opened to the newly ready (a taken shard: after its
 * committer exists). */
static size_t member_shards(void *arg, shard_name_t *out, size_t cap)
{
	struct daemon *d = arg;
	return shard_gate_shards(d->shard_gate, out, cap);
}

static void member_alive_until(void *arg, uint64_t until_ns)
{
	struct daemon *d = arg;
	shard_gate_alive_until(d->shard_gate, until_ns);
}

/* Async: each placement answered placed whose record etcd then did not
 * commit (the lease lost, the shard released: etcd_sync_take_lost) rolled
 * back (evicted: its owner told, its room given back) and logged with its
 * id, pod, node and shard; counted by etcd_sync (lost). Every tick of the
 * membership thread (member_owned), after a shard released has had its
 * committer closed (its unsent records answered then). */
static void report_lost(struct daemon *d)
{
	struct etcd_lost lost[64];
	size_t n;
	while ((n = etcd_sync_take_lost(d->etcd_sync, lost, 64)) > 0)
		for (size_t i = 0; i < n; i++) {
			char why[SHMSCHED_MESSAGE_MAX], pod[256], node[256];
			snprintf(why, sizeof(why), "answered placed, lost when shard %s's lease "
				 "lapsed before its commit to etcd (%s): rolled back",
				 lost[i].shard, strerror(-lost[i].rc));
			int rc = producers_evict_one(d->producers, lost[i].id, why, pod,
						     sizeof(pod), node, sizeof(node));
			log_msg(LOG_LEVEL_WARN, "placement %" PRIu64 " (pod %s) on node %s, %s%s",
				lost[i].id, rc == 0 && pod[0] ? pod : "unknown",
				rc == 0 && node[0] ? node : "(its node)", why,
				rc == 0 ? "" : " (released meanwhile: nothing to roll back)");
		}
}

static int member_escrow(void *arg, const struct quota_escrow_value *sums, size_t n)
{
	struct daemon *d = arg;
	return qe_host_in_force(d->escrow, sums, n);
}

static int member_escrow_use(void *arg, struct quota_escrow_value *use, size_t n)
{
	struct daemon *d = arg;
	return qe_host_use(d->escrow, use, n);
}

/* The host's status put in hosts/<host> (coord/host_status.h): its
 * owned shards' free capacity and its replication lag; at most once a
 * second (the membership's MEMBERSHIP_STATUS_EVERY_NS). */
static void member_status(void *arg, const shard_name_t *owned, size_t n,
			  struct host_status *out)
{
	struct daemon *d = arg;
	capacity_summary(d->cluster, d->strings, d->shard_key, owned, n, out);
	if (d->etcd_sync != NULL)
		etcd_sync_lag(d->etcd_sync, &out->lag_records, &out->lag_oldest_ms);
}

static void member_owned(void *arg, const shard_name_t *names, size_t n)
{
	struct daemon *d = arg;
	if (d->etcd_sync == NULL) {
		shard_gate_owned(d->shard_gate, names, n);
		return;
	}
	shard_name_t ready[SHARD_MAX]; /* 16 KiB of the membership thread's stack */
	/* The watch's claims first: a shard taken now is the take's to count
	 * (daemon/shard_watch_internal.h); it follows the others it knows. */
	if (d->shard_watch != NULL) {
		shard_name_t known[SHARD_MAX]; /* 16 KiB more */
		size_t nk = shard_gate_shards(d->shard_gate, known, SHARD_MAX);
		shard_watch_owned(d->shard_watch, known, nk, names, n);
	}
	shard_gate_owned(d->shard_gate, ready, etcd_sync_ready(d->etcd_sync, names, n, ready));
	shard_gate_owned(d->shard_gate, ready, etcd_sync_owned(d->etcd_sync, names, n, ready));
	report_lost(d);
}

/* The producers' hooks with sync commits: the durable store's (if any),
 * and a freed placement's key deleted from etcd after the store's
 * delete is queued. */
static void chain_node_changed(void *arg, const struct node_event *ev)
{
	struct daemon *d = arg;
	if (d->store_hooks.node_changed != NULL)
		d->store_hooks.node_changed(d->store_hooks.arg, ev);
}

static void chain_identity_added(void *arg, uint32_t owner)
{
	struct daemon *d = arg;
	if (d->store_hooks.identity_added != NULL)
		d->store_hooks.identity_added(d->store_hooks.arg, owner);
}

static void chain_placement_added(void *arg, uint64_t id)
{
	struct daemon *d = arg;
	if (d->store_hooks.placement_added != NULL)
		d->store_hooks.placement_added(d->store_hooks.arg, id);
}

static void chain_placement_freed(void *arg, uint64_t id)
{
	struct daemon *d = arg;
	if (d->store_hooks.placement_freed != NULL)
		d->store_hooks.placement_freed(d->store_hooks.arg, id);
	etcd_sync_delete(d->etcd_sync, id);
}

/* A number for this start's uids (etcd_sync_create): from the kernel's
 * random source, else the clock and the pid; never 0. */
static uint64_t random_incarnation(void)
{
	uint64_t v = 0;
	if (getrandom(&v, sizeof(v), GRND_NONBLOCK) != (ssize_t)sizeof(v)) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		v = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
		v ^= (uint64_t)getpid() << 40;
	}
	return v != 0 ? v : 1;
}

/* With --etcd: the shard gate in the workers' attempts and the
 * membership thread that feeds it (issue 40). Before the control sockets
 * start, so that no pod is placed ungated. */
static int start_shards(struct daemon *d, const struct daemon_config *cfg, char *err,
			size_t err_len)
{
	if (cfg->etcd_endpoints == NULL)
		return 0;
	const char *label = cfg->shard_label != NULL ? cfg->shard_label : SHARD_LABEL_DEFAULT;
	uint32_t key;
	if (intern_add_str(d->strings, label, &key) < 0)
		return errmsg_rc(-ENOMEM, err, err_len, "--shard-by: out of memory");
	d->shard_key = key;
	d->shard_gate = shard_gate_create(d->cluster, d->strings, key, label);
	if (d->shard_gate == NULL || serve_set_shard_gate(d->serve, d->shard_gate) < 0)
		return errmsg_rc(-ENOMEM, err, err_len, "--etcd: out of memory");
	char host[MEMBERSHIP_HOST_MAX];
	if (cfg->host_name != NULL) {
		snprintf(host, sizeof(host), "%s", cfg->host_name);
	} else if (gethostname(host, sizeof(host)) != 0) {
		return errmsg_rc(-errno, err, err_len, "--host-name not given and "
				 "gethostname failed: %s", strerror(errno));
	}
	host[sizeof(host) - 1] = '\0';
	struct membership_config mc = {
		.endpoints = cfg->etcd_endpoints,
		.cluster = cfg->etcd_cluster != NULL ? cfg->etcd_cluster : "default",
		.host = host,
		.ttl_s = cfg->etcd_lease_ttl_s != 0 ? cfg->etcd_lease_ttl_s
			 : MEMBERSHIP_TTL_DEFAULT_S,
		.shards = member_shards,
		.owned = member_owned,
		.alive_until = member_alive_until,
		.status = member_status,
		.arg = d,
	};
	if (d->escrow != NULL) {
		mc.escrow_queues = qe_host_queues(d->escrow, &mc.n_escrow_queues);
		mc.escrow_in_force = member_escrow;
		mc.escrow_use = member_escrow_use;
	}
	if (cfg->etcd_durability == ETCD_DURABILITY_SYNC ||
	    cfg->etcd_durability == ETCD_DURABILITY_ASYNC) {
		char prefix[COMMIT_PREFIX_MAX + 1];
		if (membership_prefix(mc.cluster, prefix, sizeof(prefix)) < 0)
			return errmsg_rc(-ENAMETOOLONG, err, err_len,
					 "--etcd-cluster \"%s\": too long for the commit keys' "
					 "prefix (%d bytes)", mc.cluster, COMMIT_PREFIX_MAX);
		/* An anonymous region and no store: this start's placement ids
		 * are the last start's again, so its uids get a number of
		 * their own (etcd_sync_create). */
		uint64_t incarnation = 0;
		if (cfg->state_name == NULL && cfg->state_dir == NULL)
			incarnation = random_incarnation();
		d->etcd_sync = etcd_sync_create(cfg->etcd_endpoints, prefix, host, incarnation,
						d->cluster, d->placements, d->strings, key,
						d->workers,
						cfg->etcd_durability == ETCD_DURABILITY_ASYNC);
		if (d->etcd_sync == NULL)
			return errmsg_rc(-ENOMEM, err, err_len, "--etcd: out of memory");
		serve_set_etcd_sync(d->serve, d->etcd_sync);
		struct producers_persist chained = {
			.node_changed = chain_node_changed,
			.identity_added = chain_identity_added,
			.placement_freed = chain_placement_freed,
			.placement_added = chain_placement_added,
			.arg = d,
		};
		producers_set_state(d->producers, d->meta, &chained);
		/* A take's count of a shard walks the placement table under
		 * the producers' lock, as the watch below adds to it. */
		etcd_sync_set_producers(d->etcd_sync, d->producers);
		/* QV1, QV2: the queues' names in values, and a take's charges
		 * (start_quota ran before). */
		if (d->quota != NULL)
			etcd_sync_set_quota(d->etcd_sync, d->quota);
		/* Other shards' placements, for inter-pod rules across shards:
		 * before the membership thread that claims shards starts. */
		struct shard_watch_config wc = {
			.endpoints = cfg->etcd_endpoints,
			.prefix = prefix,
			.host = host,
			.host_hash = etcd_sync_host_hash(d->etcd_sync),
			.cluster = d->cluster,
			.placements = d->placements,
			.producers = d->producers,
			.events = d->events,
		};
		char werr[512];
		int wrc = shard_watch_start(&d->shard_watch, &wc, werr, sizeof(werr));
		if (wrc < 0)
			return errmsg_rc(wrc, err, err_len, "--etcd %s: %s", cfg->etcd_endpoints,
					 werr);
	}
	char why[512];
	int rc = membership_start(&d->membership, &mc, why, sizeof(why));
	if (rc < 0)
		return errmsg_rc(rc, err, err_len, "--etcd %s: %s", cfg->etcd_endpoints, why);
	if (d->etcd_sync != NULL)
		etcd_sync_set_membership(d->etcd_sync, d->membership);
	log_msg(LOG_LEVEL_INFO, "host %s of cluster %s through etcd %s: lease TTL %lld s, "
		"shards by node label %s, placements %s", host, mc.cluster, cfg->etcd_endpoints,
		(long long)mc.ttl_s, label,
		d->etcd_sync == NULL ? "kept on this host only"
		: etcd_sync_async(d->etcd_sync) ? "answered at once and committed to etcd "
						  "within 1 s (async)"
						: "committed to etcd before their answers (sync)");
	return 0;
}

bool daemon_shard_status(struct daemon *d, struct daemon_shards *out)
{
	if (d->membership == NULL)
		return false;
	struct membership_status ms;
	membership_get_status(d->membership, &ms);
	struct shard_gate_counts gc;
	shard_gate_get_counts(d->shard_gate, &gc);
	*out = (struct daemon_shards){.coordinator = ms.coordinator, .lease = ms.lease,
		.owned = ms.owned, .joins = ms.joins, .renewals = ms.renewals,
		.losses = ms.losses, .errors = ms.errors, .takes = ms.takes,
		.releases = ms.releases, .assigned = ms.assigned, .status_puts = ms.status_puts,
		.alive_until_ns = gc.alive_until, .renew_sum_ns = ms.renew.rtt_sum_ns,
		.renew_gap_max_ns = ms.renew.gap_max_ns};
	memcpy(out->renew_buckets, ms.renew.buckets, sizeof(out->renew_buckets));
	if (d->etcd_sync != NULL) {
		struct etcd_sync_counts ec;
		etcd_sync_get_counts(d->etcd_sync, &ec);
		out->committed = ec.committed;
		out->refused = ec.refused;
		out->counted = ec.counted;
		out->deletes_dropped = ec.deletes_dropped;
		out->lost = ec.lost;
		out->labels_dropped = ec.labels_dropped;
		out->queue_dropped = ec.queue_dropped;
		out->queue_unknown = ec.queue_unknown;
		etcd_sync_lag(d->etcd_sync, &out->lag_records, &out->lag_oldest_ms);
	}
	if (d->shard_watch != NULL) {
		struct shard_watch_counts wc;
		shard_watch_get_counts(d->shard_watch, &wc);
		out->watching = true;
		out->foreign_records = wc.records;
		out->watch_revision = wc.revision;
		out->watch_puts = wc.puts;
		out->watch_deletes = wc.deletes;
		out->watch_relists = wc.relists;
		out->watch_refused = wc.refused;
		out->watch_unknown_node = wc.unknown_node;
		out->watch_errors = wc.errors;
		out->watch_ranges = wc.ranges;
		out->watch_streams = wc.streams;
		out->watch_received = wc.received;
	}
	return true;
}

void daemon_quarantine_counts(struct daemon *d, struct daemon_quarantine *out)
{
	struct quarantine_counts c;
	quarantine_counts(d->quarantine, &c);
	*out = (struct daemon_quarantine){.quarantined = c.quarantined,
		.nodes_quarantined = c.nodes_quarantined, .trips = c.trips,
		.lifts = c.lifts, .released = c.released, .capped = c.capped,
		.failures = c.failures, .untracked = c.untracked,
		.refused = c.refused};
}

int daemon_lease_tick(struct daemon *d)
{
	quarantine_tick(d->quarantine, quarantine_now(d->quarantine));
	lease_expire(d->leases);
	uint32_t leased, unknown;
	lease_counts(d->leases, &leased, &unknown);
	/* Nothing leased, no taint to keep; the taint manager still reads
	 * the NoExecute taints admins gave. */
	int rc = 0;
	if (leased > 0) {
		rc = taint_evict_tick(d->lifecycle, d->producers);
		if (rc >= 0)
			rc = producers_sync_unreachable(d->producers);
	}
	int ev = taint_evict_pods(d->lifecycle, d->producers);
	return rc < 0 ? rc : ev < 0 ? ev : rc;
}

void daemon_lifecycle_counts(struct daemon *d, struct daemon_lifecycle *out)
{
	struct taint_evict_counts c;
	taint_evict_counts(d->lifecycle, &c);
	*out = (struct daemon_lifecycle){
		.zones = c.zones, .zones_normal = c.zones_normal,
		.zones_partial = c.zones_partial, .zones_full = c.zones_full,
		.taints_queued = c.queued, .taints_total = c.tainted,
		.evictions_pending = c.pending, .evicted = c.evicted,
		.tolerations_kept = c.kept,
		.tainted = lease_tainted_count(d->leases)};
}

void daemon_lease_counts(struct daemon *d, uint32_t *leased, uint32_t *unknown)
{
	lease_counts(d->leases, leased, unknown);
}

struct daemon *daemon_start(const struct daemon_config *cfg, char *err,
			    size_t err_len)
{
	struct daemon *d = calloc(1, sizeof(*d));
	if (d == NULL) {
		snprintf(err, err_len, "out of memory");
		return NULL;
	}
	d->workers = cfg->workers ? cfg->workers : daemon_default_workers();
	if (d->workers > STATE_WORKERS_MAX) {
		snprintf(err, err_len, "%u workers: at most %u", d->workers,
			 STATE_WORKERS_MAX);
		goto fail;
	}
	if (cfg->fresh && cfg->resume) {
		snprintf(err, err_len, "--fresh and --resume: one or the other");
		goto fail;
	}
	/* Nothing is made before every input is read and checked, and the
	 * existing state (if any) is known to match them. */
	if (given_record(d, cfg, err, err_len) < 0 ||
	    check_inputs(cfg, err, err_len) < 0)
		goto fail;
	if (cfg->state_dir != NULL && !cfg->fresh &&
	    store_peek(cfg->state_dir, &d->store_has_state, d->store_origin,
		       sizeof(d->store_origin), err, err_len) < 0)
		goto fail;
	char region_path[PATH_MAX];
	bool region_exists = !cfg->fresh && cfg->state_name != NULL &&
			     state_path(cfg->state_name, region_path,
					sizeof(region_path)) != NULL &&
			     access(region_path, F_OK) == 0;
	if (!region_exists && d->store_has_state) {
		char what[600];
		snprintf(what, sizeof(what), "the store %s", cfg->state_dir);
		if (check_origin(cfg, what, d->store_origin, d->given, err,
				 err_len) < 0)
			goto fail;
	}
	if (!region_exists && !d->store_has_state && d->given[0] == '\0') {
		snprintf(err, err_len, "no state to resume (%s%s%s%s%s): give "
			 "--cluster FILE or --synthetic NODES[:RUNNING] to create it",
			 cfg->state_name ? "no state region " : "an anonymous region",
			 cfg->state_name ? cfg->state_name : "",
			 cfg->state_dir ? ", and the store " : "",
			 cfg->state_dir ? cfg->state_dir : "",
			 cfg->state_dir ? " holds no nodes" : "");
		goto fail;
	}
	bool fresh = false;
	if (open_state(d, cfg, &fresh, err, err_len) < 0)
		goto fail;
	sched_config_default(&d->cfg);
	if (cfg->config_path != NULL &&
	    sched_config_load(cfg->config_path, &d->cfg, d->res, d->strings, err,
			      err_len) < 0)
		goto fail;
	if (plugin_ctx_init(&d->ctx, d->strings, d->res) < 0 ||
	    fill_state(d, cfg, fresh, err, err_len) < 0)
		goto fail;
	/* PriorityClasses are configuration: read from the cluster file at
	 * every start, a resumed region's too. */
	if (priority_classes_init(&d->classes, d->strings) < 0) {
		snprintf(err, err_len, "priority classes: out of memory");
		goto fail;
	}
	if (cfg->cluster_path != NULL && same_cluster(d->meta->origin, d->given) &&
	    priority_load_file(cfg->cluster_path, &d->classes, &d->gangs, &d->pdbs,
			       d->strings, err, err_len) < 0)
		goto fail;
	d->meta->clean_stop = 0;

	d->engines = calloc(d->workers, sizeof(*d->engines));
	if (d->engines == NULL) {
		snprintf(err, err_len, "out of memory");
		goto fail;
	}
	for (unsigned i = 0; i < d->workers; i++) {
		d->engines[i] = engine_create(d->cluster, &d->ctx, &d->cfg,
					      cfg->seed + i, 0);
		if (d->engines[i] == NULL) {
			snprintf(err, err_len, "cannot create engine %u: %s", i,
				 strerror(errno));
			goto fail;
		}
		engine_set_clock(d->engines[i], cfg->engine_clock_ns);
	}
	d->producers = producers_create(d->cluster, d->strings, d->res, &d->ctx,
					cfg->slots ? cfg->slots : 4096, d->placements,
					state_section(d->state,
						      SHM_SECTION_IDENTITIES).base);
	d->events = queue_events_create();
	d->evictor = d->producers ? evict_start(d->producers, d->workers) : NULL;
	struct serve_wait_config wc = {
		.evictor = d->evictor,
		.events = d->events,
		.ctx = &d->ctx,
		.ledger = cluster_ledger(d->cluster),
		.slots = cfg->slots ? cfg->slots : 4096,
		.initial_backoff_ns = (uint64_t)d->cfg.pod_initial_backoff_seconds *
				      1000000000u,
		.max_backoff_ns = (uint64_t)d->cfg.pod_max_backoff_seconds * 1000000000u,
		.wait_default = cfg->wait_default,
	};
	d->serve = d->producers && d->events && d->evictor
		   ? serve_create(d->producers, d->placements, d->res, d->engines,
				  d->stats, d->workers, &wc)
		   : NULL;
	if (d->producers != NULL && d->events != NULL)
		producers_set_events(d->producers, d->events);
	if (d->producers != NULL)
		producers_set_priority_classes(d->producers, &d->classes, &d->gangs,
					       &d->pdbs);
	if (d->serve == NULL ||
	    (d->persist != NULL && serve_set_persist(d->serve, d->persist) < 0)) {
		snprintf(err, err_len, "out of memory");
		goto fail;
	}
	/* Kueue's objects in the cluster file are configuration, as the
	 * PriorityClasses are: read at every start, a resumed region's too
	 * (load_cluster read them already for a new one). */
	if (cfg->cluster_path != NULL && !d->file_quota_read &&
	    same_cluster(d->meta->origin, d->given) &&
	    kueue_load_file_mixed(cfg->cluster_path, &d->file_quota, err,
				  err_len) < 0)
		goto fail;
	if (d->file_quota != NULL && cfg->quota != NULL) {
		snprintf(err, err_len, "%s: Kueue objects (ResourceFlavor, "
			 "ClusterQueue, ...), and daemon_config.quota given too: "
			 "expected one source of quotas", cfg->cluster_path);
		goto fail;
	}
	struct quota_tree *quota = cfg->quota ? cfg->quota : d->file_quota;
	if (quota != NULL && start_quota(d, cfg, quota, err, err_len) < 0)
		goto fail;
	/* With --etcd: the slices of the shards owned, 0 until read. */
	if (quota != NULL && cfg->etcd_endpoints != NULL &&
	    qe_host_create(&d->escrow, quota, d->producers, d->quota, d->placements, err,
			   err_len) < 0)
		goto fail;
	if (d->quota != NULL && d->evictor != NULL) {
		/* Reclaim by quota (QA6 in daemon/quota_charge.c). */
		struct reclaim_budget rb = {
			.min_run_ns = (uint64_t)cfg->reclaim_min_run_s * 1000000000u,
			.evict_cap_milli = cfg->reclaim_evict_cap_milli
				? cfg->reclaim_evict_cap_milli
				: RECLAIM_EVICT_CAP_DEFAULT_MILLI};
		qc_set_reclaim(d->quota, d->evictor, d->placements, &rb);
		evict_set_reclaim(d->evictor, qc_reclaim_choose, qc_reclaim_nudge,
				  d->quota);
	}
	if (d->file_quota != NULL && cfg->quota == NULL) {
		/* `shmsched queue apply|delete`: the file's objects changed. */
		struct producers_queue_ops qops = {queue_replace, d};
		if (producers_set_queues(d->producers, &qops, d->file_quota,
					 cfg->cluster_path, err, err_len) < 0)
			goto fail;
	}
	if (d->file_quota != NULL)
		log_msg(LOG_LEVEL_INFO, "cluster %s: %d ClusterQueue(s) and "
			"Cohort(s), %d flavor(s): pods labelled "
			"kueue.x-k8s.io/queue-name are placed under their quotas",
			cfg->cluster_path, quota_n_nodes(d->file_quota),
			quota_n_flavors(d->file_quota));
	/* OP_EVALUATE (the gateway's extender verbs) reports every node: the
	 * same profile, every node filtered and scored. */
	struct sched_config every = d->cfg;
	every.percentage_of_nodes_to_score = 100;
	d->evaluator = engine_create(d->cluster, &d->ctx, &every, cfg->seed, 0);
	if (d->evaluator == NULL) {
		snprintf(err, err_len, "cannot create the evaluation engine: %s",
			 strerror(errno));
		goto fail;
	}
	producers_set_evaluator(d->producers, d->evaluator);
	if (d->quota != NULL)
		producers_set_quota_explainer(d->producers, qc_explain, d->quota);
	if (d->persist != NULL)
		persist_hooks(d->persist, &d->store_hooks);
	producers_set_state(d->producers, d->meta, d->persist ? &d->store_hooks : NULL);
	producers_set_profiles(d->producers, &d->cfg);
	if (cfg->policy_path != NULL) {
		struct policy *pol;
		if (policy_load_file(cfg->policy_path, &pol, err, err_len) < 0)
			goto fail;
		if (producers_set_policy(d->producers, pol, cfg->policy_path) < 0) {
			policy_free(pol);
			snprintf(err, err_len, "out of memory");
			goto fail;
		}
		log_msg(LOG_LEVEL_INFO, "policy: %u rule(s) from %s", policy_rules(pol),
			cfg->policy_path);
	}
	d->warmer = cfg->no_warm ? NULL : warm_start(d->placements);
	if (d->warmer == NULL && !cfg->no_warm)
		log_msg(LOG_LEVEL_WARN, "the placement table's warmer did not start (%s): "
			"workers fault its pages in themselves", strerror(errno));
	struct pool_config pc = {.workers = d->workers, .pin = cfg->pin,
				 .sleep_max_us = cfg->idle_sleep_us,
				 .doorbells = cfg->no_doorbells ? NULL : &serve_doorbells};
	d->pool = pool_start(&pc, serve_poll, d->serve, err, err_len);
	if (d->pool == NULL)
		goto fail;
	evict_set_waker(d->evictor, wake_pool, d->pool);
	producers_set_waker(d->producers, wake_pool, d->pool);
	producers_set_notifier(d->producers, evict_notify, d->evictor); /* OP_DRAIN */
	producers_set_metrics(d->producers, daemon_metrics_text, d); /* OP_QUEUE */
	producers_set_approval_clock(d->producers, cfg->approval_clock,
				     cfg->approval_clock_arg);
	if (d->evictor != NULL) /* AQ1: an answer wakes reclaim's, preemption's askers */
		producers_set_approval_kick(d->producers, evict_kick, d->evictor);
	if (daemon_admin_socket(cfg, d->admin_path, sizeof(d->admin_path)) == NULL) {
		snprintf(err, err_len, "admin socket path: %s%s: does not fit a "
			 "Unix socket address", cfg->admin_socket_path ?
			 cfg->admin_socket_path : cfg->socket_path,
			 cfg->admin_socket_path ? "" : ".admin");
		goto fail_server;
	}
	producers_set_admin_socket(d->producers, d->admin_path);
	/* The quarantine before the leases: the lease ticker's thread reads
	 * d->quarantine each tick (daemon_lease_tick), so it must be set
	 * before that thread starts (TSan saw the tick read it unset). */
	if (start_quarantine(d, cfg, err, err_len) < 0 ||
	    start_leases(d, cfg, err, err_len) < 0 ||
	    start_shards(d, cfg, err, err_len) < 0)
		goto fail_server;
	producers_set_budgets(d->producers, cfg->strings_per_identity,
			      cfg->template_bytes_per_identity);
	/* The admin socket first: a producer that connects can be told where
	 * node events go. Its own table: producers cannot take its slots. */
	unsigned idle_ms = cfg->no_idle_timeout ? 0
			   : (cfg->idle_timeout_s ? cfg->idle_timeout_s
						  : DAEMON_IDLE_TIMEOUT_S) * 1000u;
	struct control_server_config ac = {
		.allowed_uids = cfg->admin_uids,
		.n_allowed_uids = cfg->n_admin_uids,
		.allowed_gids = cfg->admin_gids,
		.n_allowed_gids = cfg->n_admin_gids,
		.max_connections = DAEMON_ADMIN_CONNECTIONS,
		.idle_timeout_ms = idle_ms,
		.arg = producers_endpoint(d->producers, ROLE_ADMIN),
		.on_connect = producers_on_connect,
		.on_request = producers_on_request,
		.on_disconnect = producers_on_disconnect,
		.is_busy = producers_is_busy,
	};
	bool admin_group;
	daemon_admin_mode(cfg, &ac.socket_mode, &ac.socket_group, &admin_group);
	ac.has_socket_group = admin_group;
	d->admin = control_server_start(d->admin_path, &ac, err, err_len);
	if (d->admin == NULL)
		goto fail_server;
	check_socket_dir(d->admin_path, ac.socket_mode, admin_group,
			 ac.socket_group);
	struct control_server_config sc = {
		.allowed_uids = cfg->allowed_uids,
		.n_allowed_uids = cfg->n_allowed_uids,
		.allowed_gids = cfg->allowed_gids,
		.n_allowed_gids = cfg->n_allowed_gids,
		.socket_mode = cfg->socket_mode,
		.socket_group = cfg->socket_group,
		.has_socket_group = cfg->has_socket_group,
		/* A quarter of the 64 slots per uid, and a reserve for uids
		 * with none: one user's (or a few users') idle or slow
		 * connections cannot lock the others out (daemon.h). */
		.max_connections = DAEMON_CONNECTIONS,
		.max_per_uid = DAEMON_PER_UID,
		.reserve_connections = DAEMON_RESERVE,
		.idle_timeout_ms = idle_ms,
		.arg = producers_endpoint(d->producers, ROLE_PRODUCER),
		.on_connect = producers_on_connect,
		.on_request = producers_on_request,
		.on_disconnect = producers_on_disconnect,
		.is_busy = producers_is_busy,
	};
	d->server = control_server_start(cfg->socket_path, &sc, err, err_len);
	if (d->server == NULL)
		goto fail_admin;
	return d;

fail_admin:
	control_server_stop(d->admin);

fail_server:
	pool_stop(d->pool);
fail:
	teardown(d);
	return NULL;
}

/* Submitted pods not yet taken by a worker, over every producer. Called on
 * a registered reader thread, inside its critical section. */
static unsigned pending(struct daemon *d)
{
	unsigned n = 0;
	for (uint32_t i = 0; i < PRODUCERS_MAX; i++) {
		struct producer *pr = producers_get(d->producers, i);
		/* A producer whose index is impossible has nothing to drain:
		 * it is being disconnected. */
		int k = pr != NULL && !producers_faulted(pr) ?
			ring_guard_pending(&pr->submit) : 0;
		n += k > 0 ? (unsigned)k : 0;
	}
	return n;
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000};
	nanosleep(&ts, NULL);
}

void daemon_stop(struct daemon *d, unsigned drain_ms, struct daemon_stats *out)
{
	/* No node update from the leases while the rest stops. */
	lease_ticker_stop(d->lease_ticker);
	d->lease_ticker = NULL;
	producers_stop_accepting(d->producers);
	/* The drain: this thread reads the producers table as a reader; it is
	 * offline while it sleeps, so a producer may leave meanwhile. */
	rcu_register();
	for (unsigned waited = 0; waited < drain_ms && pending(d) > 0; waited++) {
		rcu_offline();
		sleep_ms(1);
		rcu_online();
	}
	if (pending(d) > 0) {
		log_msg(LOG_LEVEL_WARN, "stopping: %u submitted pod(s) not placed "
			"within %u ms: answering them cancelled", pending(d), drain_ms);
		serve_cancel_all(d->serve);
	}
	rcu_offline();
	/* The control thread still serves requests until the end, and a
	 * registration or a template woke the pool: no more, before the pool
	 * goes (TSan saw a template's wake-up reach a freed pool). */
	producers_set_waker(d->producers, NULL, NULL);
	producers_set_notifier(d->producers, NULL, NULL); /* its wakes too */
	producers_set_metrics(d->producers, NULL, NULL);
	producers_set_approval_kick(d->producers, NULL, NULL);
	/* The evictor first: it finishes what it has (its replies are taken
	 * by the drain below) and never wakes the pool once that is gone; a
	 * request made after it stopped is never served, and its pod is
	 * cancelled with the others. */
	evict_stop(d->evictor);
	warm_stop(d->warmer);
	d->warmer = NULL;
	pool_stop(d->pool);
	d->pool = NULL;
	rcu_online();
	/* Whatever arrived after the workers stopped: answered here. */
	serve_drain(d->serve);
	rcu_unregister();
	if (out != NULL) {
		daemon_get_stats(d, out);
		/* The workers have stopped: their engines' counters are
		 * still. */
		struct daemon_cache_stats *c = &out->caches;
		for (unsigned i = 0; i < d->workers; i++) {
			struct engine_stats st;
			engine_get_stats(d->engines[i], &st);
			c->classes += st.class_misses + st.prepared;
			c->sibling_copies += st.static_siblings;
			c->class_evictions += st.class_evictions;
			c->class_flushes += st.class_flushes;
			c->classless_pods += st.first_sights;
			c->nodes_checked += st.nodes_checked;
			c->pruned_scans += st.pruned_scans;
			c->index_rebuilds += st.index_rebuilds;
			c->shape_rebuilds += st.shape_rebuilds;
			c->shapes += st.shapes;
			c->shape_evals += st.shape_evals;
			c->index_updates += st.index_updates;
		}
	}
	control_server_stop(d->server); /* frees every producer ... */
	d->server = NULL;
	control_server_stop(d->admin);  /* ... and every admin connection's */
	d->admin = NULL;
	if (d->afs != NULL && d->persist != NULL) {
		/* Admission fair sharing's usage, for the next start: the
		 * saver stopped first (its writes are each sample's), then
		 * the whole table as it is now. */
		afsl_saver_stop(d->afs);
		char err[512];
		if (afsl_save(d->afs, persist_store(d->persist), err,
			      sizeof(err)) < 0)
			log_msg(LOG_LEVEL_WARN, "admission fair sharing: its usage "
				"not saved (the next start begins it from the "
				"placements): %s", err);
	}
	/* Everything answered and nothing in flight: a restart finds the
	 * counters exactly as the records say. */
	d->meta->clean_stop = 1;
	teardown(d);
}

void daemon_service_hist(struct daemon *d, uint64_t *out)
{
	serve_service_hist(d->serve, out);
}

unsigned daemon_identity_times(struct daemon *d, struct daemon_identity_time *out,
			       unsigned max)
{
	const struct state_identity *ids =
		state_section(d->state, SHM_SECTION_IDENTITIES).base;
	unsigned n = 0;
	for (uint32_t i = 0; i < STATE_IDENTITIES; i++) {
		uint32_t uid = 0;
		char name[64];
		/* The seqlock's reader (shm/identity.h): a slot being
		 * rewritten is tried again, a few times. */
		int got = -EAGAIN;
		for (unsigned t = 0; got == -EAGAIN && t < 64; t++)
			got = state_identity_read(&ids[i], &uid, name, NULL, NULL);
		if (got != 1)
			continue;
		if (n < max) {
			out[n] = (struct daemon_identity_time){
				.owner = i + 1, .uid = uid,
				.worker_ns = producers_identity_time(d->producers, i + 1)};
			memcpy(out[n].name, name, sizeof(out[n].name));
		}
		n++;
	}
	return n;
}

bool daemon_workers_asleep(struct daemon *d)
{
	return d->pool != NULL && pool_sleeping(d->pool) == pool_size(d->pool);
}

void daemon_get_stats(struct daemon *d, struct daemon_stats *out)
{
	memset(out, 0, sizeof(*out));
	out->nodes = cluster_nodes(d->cluster);
	uint64_t string_bytes;
	intern_use(d->strings, &out->interned_strings, &string_bytes);
	producers_strings_reclaimed(d->producers, &out->strings_reclaims,
				    &out->strings_reclaimed);

	producers_budget_use(d->producers, &out->strings_charged,
			     &out->template_bytes, &out->templates_uncompiled);
	struct approval_stats as;
	producers_approval_stats(d->producers, &as);
	out->approval_registrations = as.registrations;
	out->approvals_asked = as.asked;
	out->approvals_granted = as.granted;
	out->approvals_denied = as.denied;
	out->approvals_not_before = as.not_before;
	out->approvals_timed_out_open = as.timed_out_open;
	out->approvals_timed_out_closed = as.timed_out_closed;
	_Static_assert(APPROVAL_ASKERS == 3, "daemon_stats' approvals_by[]");
	for (unsigned k = 0; k < APPROVAL_ASKERS; k++) {
		const struct approval_counts *c = &as.by_asker[k];
		out->approvals_by[k].asked = c->asked;
		out->approvals_by[k].granted = c->granted;
		out->approvals_by[k].denied = c->denied;
		out->approvals_by[k].not_before = c->not_before;
		out->approvals_by[k].timed_out_open = c->timed_out_open;
		out->approvals_by[k].timed_out_closed = c->timed_out_closed;
	}
	out->placements = placements_live(d->placements);
	out->workers = d->workers;
	producers_counts(d->producers, &out->producers_registered,
			 &out->producers_gone, &out->producer_faults);
	for (unsigned i = 0; i < d->workers; i++) {
		/* Relaxed reads of counters each worker writes alone: figures
		 * for people, exact once the workers have stopped. */
		const struct serve_stats *s = &d->stats[i];
		out->pods += __atomic_load_n(&s->pods, __ATOMIC_RELAXED);
		out->rejected += __atomic_load_n(&s->rejected, __ATOMIC_RELAXED);
		out->cancelled += __atomic_load_n(&s->cancelled, __ATOMIC_RELAXED);
		out->bad_handles += __atomic_load_n(&s->bad_handles, __ATOMIC_RELAXED);
		out->completion_overflows +=
			__atomic_load_n(&s->completion_overflows, __ATOMIC_RELAXED);
		out->placed += __atomic_load_n(&s->resolver.placed, __ATOMIC_RELAXED);
		out->unschedulable +=
			__atomic_load_n(&s->resolver.unschedulable, __ATOMIC_RELAXED) +
			__atomic_load_n(&s->resolver.gave_up, __ATOMIC_RELAXED);
		out->conflicts += __atomic_load_n(&s->resolver.conflicts, __ATOMIC_RELAXED);
		out->gave_up += __atomic_load_n(&s->resolver.gave_up, __ATOMIC_RELAXED);
	}
	struct wait_stats ws;
	serve_wait_stats(d->serve, &ws);
	out->waited = ws.waited;
	out->waited_placed = ws.placed;
	out->timed_out = ws.timed_out;
	out->cancelled_by_producer = ws.cancelled;
	out->cancelled_waiting_at_shutdown = ws.shutdown;
	out->forgotten_with_producer = ws.forgotten;
	out->queue_retries = ws.retries;
	out->quota_woken = ws.quota_woken;
	out->quota_skipped = ws.quota_skipped;
	out->queue_woken = ws.queue.woken;
	out->queue_hints_skipped = ws.queue.hints_skipped;
	out->queue_events = ws.queue.events;
	out->queue_events_unwalked = ws.queue.events_unwalked;
	uint64_t ev_victims, ev_dropped;
	evict_counts(d->evictor, &out->evictor_requests, &out->evictor_held,
		     &ev_victims, &ev_dropped);
	if (d->evictor != NULL) {
		evict_bell_figures(d->evictor, &out->evictor_wakes,
				   &out->evictor_wakes_avoided);
		evict_reclaim_counts(d->evictor, &out->reclaim_requests,
				     &out->reclaim_victims, &out->reclaim_no_node);
	}
	if (d->quota != NULL)
		out->reclaim_asked = qc_reclaim_asked(d->quota);
	out->gangs_placed = ws.gangs_placed;
	out->gang_failures = ws.gang_failures;
	out->gang_rollbacks = ws.gang_rollbacks;
	out->gang_timeouts = ws.gang_timeouts;
	out->preemptions = ws.preemptions;
	out->preempted = ws.preempted;
	out->victims = ws.victims;
	out->notices = ws.notices;
	out->notices_dropped = ws.notices_dropped;
	out->pending_active = ws.queue.active;
	out->pending_backoff = ws.queue.backoff;
	out->pending_unschedulable = ws.queue.unschedulable;
}

/* The invariant checkers are the ledger's (shm/ledger.h). The writer of
 * snapshots is the control thread; these read the current one only while
 * no node event can be in flight (tests and the bench call them with their
 * producers idle). */
uint64_t daemon_admission_usage_saves(struct daemon *d)
{
	return d->afs != NULL ? afsl_saves(d->afs) : 0;
}

uint64_t daemon_overcommits(struct daemon *d)
{
	return ledger_overcommits(cluster_ledger(d->cluster),
				  cluster_snapshot(d->cluster));
}

void daemon_devices_in_use(struct daemon *d, uint64_t *gpu_milli,
			   uint64_t *cores)
{
	ledger_devices_in_use(cluster_ledger(d->cluster),
			      cluster_snapshot(d->cluster), gpu_milli, cores);
}

uint64_t daemon_pods_on_nodes(struct daemon *d)
{
	return ledger_pods(cluster_ledger(d->cluster), cluster_snapshot(d->cluster));
}
