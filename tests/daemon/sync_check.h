/* The sync guarantee checked from the outside (issue 40): what producers
 * were answered against what etcd holds, and held at every revision. It
 * knows nothing of a host's internals, only the key layout of
 * docs/design/multi-host.md:
 *   <prefix>shards/<s>/owner       value: the owning host's name
 *   <prefix>shards/<s>/pods/<uid>  value: coord/placement_value.h
 *   <prefix>shards/<s>/sets/<name> value: coord/batch_value.h, several
 *                                  placements (sync_history.h replays
 *                                  each as its own key's put and delete)
 * where uid is 32 hex digits: a half naming the host (and maybe its
 * incarnation), then the placement id the host answered (16 each;
 * daemon/etcd_sync.c). The first half's writer is learned (sync_check.c:
 * from the shard's owner at each put and the revision each incarnation
 * started at), FNV-1a 64 of the host's name the fallback, so an answer
 * names its key however a host makes that half.
 *
 * Inputs: every PLACED answer as its producer logged it; etcd's history
 * of those keys in revision order (sync_history.h reads it with a watch
 * from revision 1); each host's pods that were in flight when it died
 * (its producer got them back CANCELLED); the nodes' capacities.
 *
 * What is counted (struct sync_report), and what fails the check:
 *   lost        a PLACED answer, never released, whose key is absent at
 *               the end or was overwritten by another placement: fails,
 *               unless lost_ok (async mode: counted, not failed)
 *   unanswered  keys at the end whose uid no PLACED answer names: only
 *               a pod in flight when its host died may leave one (its
 *               commit landed, its answer died), so a host's count
 *               above its died_in_flight fails (excess: phantom)
 *   twice       one uid under two shards; a put on a pod key that is
 *               there (one key for two placements); two PLACED answers
 *               of one uid, the first not released before the second:
 *               fails
 *   unfenced    a pod key written or deleted at a revision where its
 *               host (the uid's first half) did not own the key's shard
 *               (a host past its lease wrote): fails
 *   overcommit  a node whose live answered placements (from the PLACED
 *               answer's time to the release call's) ever held more cpu
 *               or memory than it has; or whose keys at the end, but
 *               those of released placements, hold more: fails
 * Released placements may keep their key (deletes are not waited for,
 * and dropped when the shard moved or lost with a killed host): counted
 * in released_kept. Such a key's room may have been placed on again by
 * its host before it died, so the keys at the end may sum over a node
 * with no pod over it: counted in etcd_over_end_kept (info; the shard's
 * new owner counts the key and places nothing more there).
 * Cost: O(events + answers log answers), one hash table of uids. */
#ifndef SHMSCHED_TESTS_SYNC_CHECK_H
#define SHMSCHED_TESTS_SYNC_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SYNC_NAME_MAX 64

struct sync_answer {
	int host;		/* index in sync_input.hosts */
	uint32_t incarnation;	/* the host's process (restarts move it) */
	uint64_t placement_id;	/* as answered */
	char node[SYNC_NAME_MAX];
	int64_t cpu_milli, mem_bytes; /* what the pod asked */
	uint64_t placed_ns;	/* the answer's complete_ns */
	uint64_t released_ns;	/* when its release was called; 0: never */
};

enum sync_event_kind { SYNC_EVENT_OWNER, SYNC_EVENT_POD };

struct sync_event {
	int64_t revision;
	enum sync_event_kind kind;
	bool deleted;
	char shard[SYNC_NAME_MAX];
	/* OWNER put: the host's name (the key's value). POD: the uid. */
	char name[SYNC_NAME_MAX];
	/* POD put: the placement (node, cpu, memory); version: the key's
	 * after this put (1: it was created). */
	char node[SYNC_NAME_MAX];
	int64_t cpu_milli, mem_bytes;
	int64_t version;
};

/* A host's process: its incarnation as answers carry it, and etcd's
 * revision before it started (it writes nothing at or before it). */
struct sync_incarnation {
	int host;
	uint32_t incarnation;
	int64_t from_revision;
};

struct sync_node {
	char name[SYNC_NAME_MAX];
	int64_t cpu_milli, mem_bytes;
};

struct sync_input {
	const char *const *hosts;
	int n_hosts;
	const size_t *died_in_flight; /* [n_hosts] */
	const struct sync_answer *answers;
	size_t n_answers;
	const struct sync_event *events; /* revision order */
	size_t n_events;
	const struct sync_node *nodes;
	size_t n_nodes;
	/* May be empty: the writers of uids are then guessed from the
	 * answers alone (sync_check.c). */
	const struct sync_incarnation *incarnations;
	size_t n_incarnations;
	bool lost_ok;
};

struct sync_report {
	size_t placed, released, released_kept;
	size_t keys_end;	  /* pod keys at the end */
	size_t lost;
	size_t unanswered, unanswered_allowed, phantom;
	size_t twice;
	size_t unfenced;
	size_t overcommit;	  /* nodes over, by the answers or the end's keys */
	int64_t peak_cpu_milli;	  /* the fullest node's answered cpu, ever */
	int64_t peak_etcd_cpu_milli; /* the fullest node's keys' cpu, any revision
				      * (info: a delete may land after a later put) */
	/* Times a node's keys held more cpu than it has (info, not failed):
	 * all but the unexplained ones ended by the delete of a placement its
	 * producer had released (the host gave the room back before the
	 * delete landed: deletes are not waited for). */
	size_t etcd_over, etcd_over_unexplained;
	/* Nodes whose keys at the end hold more than they have only with
	 * released placements' kept keys (info, not failed). */
	size_t etcd_over_end_kept;
	bool ok;
	/* The first problems found, one a line, for a person. */
	char detail[2048];
};

/* Fills out. 0; -ENOMEM; -EINVAL an event whose uid is not 32 hex
 * digits or an answer's host or node out of range (detail says which). */
int sync_check(const struct sync_input *in, struct sync_report *out);

/* The first half of a host's uids (FNV-1a 64 of its name, never 0). */
uint64_t sync_host_hash(const char *name);

/* One line of out's counts (into buf), e.g. for a log. */
void sync_report_format(const struct sync_report *r, char *buf, size_t len);

#endif
