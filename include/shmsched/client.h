/* libshmsched-client: the producer's side of shmsched.
 *
 * A producer connects to the daemon, registers pod templates (Kubernetes Pod
 * JSON), then submits pods that name a template and reads their answers.
 * Pods travel through shared memory: a region of slots and two rings that
 * the daemon makes for this connection (include/shmsched/wire.h). Submitting
 * and polling make no system call, take no lock and allocate nothing; the
 * other calls are the slow path (the control socket, each bounded by a
 * deadline of a few seconds).
 *
 * Life of a pod: shmsched_submit() takes a free slot, fills it and hands it
 * to the daemon; the daemon answers exactly once (placed, unschedulable,
 * rejected, or cancelled at its shutdown); shmsched_poll() returns the
 * answer and frees the slot. A pod that asks to wait (SHMSCHED_WAIT, or
 * the daemon's default) and fits no node yet is answered later: placed
 * when a node comes free for it, unschedulable when its deadline passes,
 * cancelled by shmsched_cancel() or at the daemon's shutdown; meanwhile it
 * keeps its slot. A region holds shmsched_capacity() pods in
 * flight: when it is full, submit accepts fewer pods than asked
 * (back-pressure), never drops one.
 *
 * When the daemon goes away, answers already in the completion ring are
 * still returned; then every pod still in flight is returned CANCELLED by
 * this library ("... went away before answering this pod"), so each
 * accepted pod gets exactly one answer even if the daemon crashed or never
 * saw it; after them shmsched_poll() returns -ECONNRESET, and so do the
 * other calls.
 * Nothing here raises SIGPIPE or waits without a deadline.
 *
 * Threads: a handle is used by one thread at a time; the caller serialises
 * calls on one handle (a handle may move between threads if the caller's
 * own synchronisation orders the calls, e.g. a mutex). Different handles
 * are independent: a process may hold several, from several threads. A
 * handle is not inherited by fork(): the child must not use it (it may
 * only call shmsched_disconnect() on it, to free its memory).
 *
 * Errors: functions that return int return 0 (or a count) on success and a
 * negative errno on failure; those that take `err` also write a message
 * for a person there (NUL-terminated, cut to err_len; err may be NULL when
 * err_len is 0). The connection's errors, common to every call that talks
 * to the daemon:
 *   -ECONNRESET  the daemon has gone or closed this connection (also -EPIPE
 *                from the kernel is reported as -ECONNRESET); every later
 *                call on the handle returns it too; disconnect and connect
 *                again
 *   -ETIMEDOUT   the daemon did not answer in time (the handle stays usable)
 *   -EPROTO      the daemon answered something malformed
 */
#ifndef SHMSCHED_CLIENT_H
#define SHMSCHED_CLIENT_H

#include <stddef.h>
#include <stdint.h>

/* wire.h checks its layout with C11's _Static_assert, which C++ spells
 * static_assert. */
#if defined(__cplusplus) && !defined(_Static_assert)
#define _Static_assert static_assert
#define SHMSCHED_CLIENT_H_STATIC_ASSERT
#endif
#include "shmsched/wire.h"
#ifdef SHMSCHED_CLIENT_H_STATIC_ASSERT
#undef _Static_assert
#undef SHMSCHED_CLIENT_H_STATIC_ASSERT
#endif

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) || defined(__clang__)
#define SHMSCHED_EXPORT __attribute__((visibility("default")))
#else
#define SHMSCHED_EXPORT
#endif

/* The daemon's socket when neither the caller nor the environment names
 * one (see shmsched_connect). */
#define SHMSCHED_DEFAULT_SOCKET "/run/shmsched/shmsched.sock"

/* Node events for shmsched_node_event(). */
enum shmsched_node_event {
	SHMSCHED_NODE_ADD = 1,       /* body: a Node, Kubernetes JSON; new name */
	SHMSCHED_NODE_UPDATE = 2,    /* body: a Node; replaces the node of that name */
	SHMSCHED_NODE_REMOVE = 3,    /* body: the node's name */
	SHMSCHED_NODE_CORDON = 4,    /* body: the node's name */
	SHMSCHED_NODE_UNCORDON = 5,  /* body: the node's name */
	SHMSCHED_NODE_LEASE = 6,     /* body: the node's name; renews its lease
				      * (shmschedd --node-monitor-grace-period) */
};

/* A connection to the daemon and the region it gave this producer. Opaque. */
struct shmsched_client;

/* struct shmsched_pod.flags: wait in the daemon's queue while no node
 * fits (rather than an UNSCHEDULABLE answer at once), or answer at once
 * whatever the daemon's default (shmschedd --wait); 0: that default. */
#define SHMSCHED_WAIT SHMSCHED_SLOT_WAIT
#define SHMSCHED_NO_WAIT SHMSCHED_SLOT_NO_WAIT

/* A pod to submit: its template, the requests it adds to the template's
 * (resources named by shmsched_resource()), and the caller's own id for it,
 * returned as is in its answer. */
struct shmsched_pod {
	uint64_t cookie;
	uint32_t template_id; /* from shmsched_register_template() */
	uint16_t n_extra;     /* 0..SHMSCHED_MAX_EXTRA entries of extra used */
	uint16_t flags;       /* SHMSCHED_WAIT, SHMSCHED_NO_WAIT or 0 */
	struct shmsched_extra extra[SHMSCHED_MAX_EXTRA];
	/* A waiting pod: CLOCK_MONOTONIC nanoseconds (as the answers'
	 * timestamps) by which it must be placed, else it is answered
	 * UNSCHEDULABLE; 0: it waits as long as it takes. Not with
	 * SHMSCHED_NO_WAIT (the daemon rejects that). */
	uint64_t deadline_ns;
};

/* The answer to one pod. */
struct shmsched_result {
	uint64_t cookie;      /* the pod's, as submitted */
	uint32_t status;      /* enum shmsched_status: PLACED, UNSCHEDULABLE
			       * (a waiting pod: its deadline passed),
			       * REJECTED or CANCELLED */
	uint32_t node_id;     /* SHMSCHED_PLACED: the node (shmsched_node_name) */
	uint64_t submit_ns;   /* CLOCK_MONOTONIC when submitted */
	uint64_t complete_ns; /* CLOCK_MONOTONIC when the daemon answered */
	/* SHMSCHED_PLACED: the daemon's id for this placement, for
	 * shmsched_release() when the pod ends; 0 otherwise. */
	uint64_t placement_id;
	/* SHMSCHED_PLACED: the GPU devices and exclusive cores the pod takes
	 * on its node (all zero: none), as the daemon reserved them. See
	 * shmsched_format_gpus() and shmsched_format_cpuset(). Not placed:
	 * all zero. */
	struct shmsched_devices devices;
	/* Not placed: why, for a person (kube-scheduler's "0/N nodes are
	 * available: ..." when unschedulable). Placed: empty. Always
	 * NUL-terminated. */
	char message[SHMSCHED_MESSAGE_MAX];
};

/* Connects to the daemon at socket_path, registers this process as a
 * producer and maps the region it is given. socket_path NULL: the value of
 * $SHMSCHED_SOCKET if set and not empty, else $XDG_RUNTIME_DIR/shmsched.sock
 * if XDG_RUNTIME_DIR is set and not empty, else SHMSCHED_DEFAULT_SOCKET.
 * Waits at most about ten seconds (5 s to connect, 5 s to register).
 * Returns 0 with the handle in *out, or a negative errno with *out NULL
 * and a message naming the path in err (as every call of this library:
 * 0 or a negative errno):
 *   -ENOENT           no daemon at the path (no socket file)
 *   -ECONNREFUSED     a socket file, but no daemon listening on it
 *   -EACCES           the socket file's permissions, or the daemon refused
 *                     this process's credentials (err gives its reason)
 *   -EPROTONOSUPPORT  the daemon's ABI version differs (err names both)
 *   -EBUSY            the daemon is at its connection limit
 *   -ENAMETOOLONG     the path does not fit a Unix socket address
 *   -ETIMEDOUT, -ECONNRESET, -EPROTO  as above
 *   -ENOMEM           out of memory
 *   -EINVAL           out is NULL
 *   other negative errnos: the daemon's refusal of the registration (its
 *   text in err), or from socket(2), connect(2) or mmap(2)
 * It registers under the name "" (see shmsched_connect_named).
 * Changed in libshmsched-client.so.1: it returned the handle, or NULL with
 * a positive errno. Changed in libshmsched-client.so.3: struct
 * shmsched_pod gained flags and deadline_ns, and SHMSCHED_MESSAGE_MAX (the
 * size of struct shmsched_result's message) went from 536 to 528 bytes.
 * Thread-safety: any thread; handles are independent. */
SHMSCHED_EXPORT int shmsched_connect(const char *socket_path,
				     struct shmsched_client **out,
				     char *err, size_t err_len);

/* shmsched_connect() under a producer name (up to 63 bytes; NULL or ""
 * is the name ""). The daemon knows a producer by its uid and this name:
 * placements belong to that identity, not to the connection, so every
 * connection of that uid under that name (several at once, or a
 * reconnect) may release them, and no other producer may.
 * Returns as shmsched_connect(), and also:
 *   -ENAMETOOLONG  the name is 64 bytes or longer
 *   -EBUSY         the daemon keeps as many identities as it may, for this
 *                  uid or in all (err says which)
 * Thread-safety: any thread; handles are independent. */
SHMSCHED_EXPORT int shmsched_connect_named(const char *socket_path,
					   const char *name,
					   struct shmsched_client **out,
					   char *err, size_t err_len);

/* Closes the connection (the daemon then frees the region and forgets this
 * producer's templates; answers to pods still in flight are lost), unmaps
 * the region and frees c. NULL: no-op. Never blocks.
 * Thread-safety: no other call on c may be running or follow. */
SHMSCHED_EXPORT void shmsched_disconnect(struct shmsched_client *c);

/* Registers a pod template: pod_json[0..len) is a Pod as Kubernetes JSON
 * (need not be NUL-terminated). Stores its id in *template_id; pods then
 * name it. Templates belong to this connection.
 * Returns 0, or:
 *   -EINVAL    NULL arguments
 *   -EMSGSIZE  len exceeds what one control message carries (64 KiB less an
 *              8-byte header)
 *   the daemon's refusal (e.g. -EINVAL: err names the field and why), and
 *   the connection's errors (above)
 * Thread-safety: one thread at a time per handle. */
SHMSCHED_EXPORT int shmsched_register_template(struct shmsched_client *c,
					       const char *pod_json, size_t len,
					       uint32_t *template_id,
					       char *err, size_t err_len);

/* As shmsched_register_template, and narrows whose pods the template's
 * pods may preempt: only pods in a namespace that both this connection's
 * rule of the daemon's policy (its disruptNamespaces) and `disrupt`
 * allow. `disrupt` is NUL-terminated namespace patterns, as a policy's
 * disruptNamespaces holds them, separated by ',' ("team-b,team-c-*"; "":
 * none; "*": whatever the rule allows; NULL: not narrowed, as
 * shmsched_register_template). It can only narrow: a namespace the rule
 * does not grant stays out. At most 64 patterns, 4160 bytes. Returns as
 * shmsched_register_template, and -EINVAL for a bad pattern (err names
 * it). Thread-safety: one thread at a time per handle. */
SHMSCHED_EXPORT int shmsched_register_template_scoped(struct shmsched_client *c,
						      const char *pod_json, size_t len,
						      const char *disrupt,
						      uint32_t *template_id,
						      char *err, size_t err_len);

/* Stores in *index the daemon's index for the resource called `name`
 * (a NUL-terminated Kubernetes resource name such as "cpu" or
 * "example.com/gpu"), for struct shmsched_extra.
 * Returns 0, or:
 *   -EINVAL    NULL arguments, an empty name
 *   -EMSGSIZE  the name is too long for a control message
 *   the daemon's refusal (e.g. -ENOENT: no resource of that name; its
 *   text in err), and the connection's errors (above)
 * Thread-safety: one thread at a time per handle. */
SHMSCHED_EXPORT int shmsched_resource(struct shmsched_client *c, const char *name,
				      uint32_t *index, char *err, size_t err_len);

/* Submits pods[0..n) (pods may be NULL only when n is 0): takes a free slot for each, in order, fills it and
 * hands them to the daemon in bursts of ring operations. Returns how many were
 * accepted, 0..n: pods[0..k) were taken, pods[k..n) were not (no free slot:
 * shmsched_capacity() pods are in flight) and may be submitted again, for
 * instance after shmsched_poll() has freed slots. Each accepted pod gets
 * exactly one answer from shmsched_poll(). Pods are not validated here; the
 * daemon answers a bad one SHMSCHED_REJECTED.
 * A pod that waits keeps its slot until it is answered: waiting pods count
 * in shmsched_in_flight() and hold back later submits when the region is
 * full (back-pressure, as for any pod in flight).
 * Returns -ECONNRESET, accepting nothing, once the handle knows the daemon
 * has gone: it checks, without blocking and at most once a millisecond, when
 * it cannot accept every pod. n == 0 returns 0. No system call, lock or
 * allocation, except that check.
 * Thread-safety: one thread at a time per handle. */
SHMSCHED_EXPORT int shmsched_submit(struct shmsched_client *c,
				    const struct shmsched_pod *pods, unsigned n);

/* Asks the daemon to cancel the pod in flight whose cookie is `cookie`
 * (the first such, if several share it): a pod waiting in the daemon's
 * queue is then answered CANCELLED ("cancelled by its producer"). The
 * request travels behind the pods already submitted, and a pod that is
 * placed (or otherwise answered) before the daemon reads it keeps that
 * answer: each pod still gets exactly one, from shmsched_poll(). A placed
 * pod is released with shmsched_release() as any other.
 * Returns 0 when the request was handed over, or:
 *   -ENOENT       no pod in flight has that cookie
 *   -EAGAIN       the submit ring is full (the daemon has not yet read
 *                 every pod submitted): poll, then try again
 *   -EINVAL       NULL c
 *   -ECONNRESET   the daemon has gone (its pods come back CANCELLED)
 * Cost: a scan of the pods in flight (at most shmsched_capacity()), one
 * ring operation; no system call, lock or allocation.
 * Thread-safety: one thread at a time per handle. */
SHMSCHED_EXPORT int shmsched_cancel(struct shmsched_client *c, uint64_t cookie);

/* Writes up to max answers to out[0..), frees their slots and returns how
 * many. Besides answers, it returns notices: status SHMSCHED_EVICTED says
 * that the placement placement_id (of the pod with that cookie, on node
 * node_id) was preempted by a pod of higher priority: what it held is
 * given back already, and its pod must stop; the placement id names
 * nothing afterwards (a release of it is -ENOENT); status SHMSCHED_REPLACED
 * (a drain with SHMSCHED_DRAIN_SURGE) says that the placement placement_id
 * on node node_id was made for the pod with that cookie, to replace the
 * placement its message names ("replaces placement OLD: ..."), whose
 * EVICTED notice comes after it. A notice frees no slot
 * and is not counted in shmsched_in_flight(); one that found no room is
 * counted by shmsched_notices_lost() instead.
 * The rest as follows: 0..max; never waits. When there is no answer, checks without
 * blocking (at most once a millisecond, so a caller that spins on an empty
 * poll makes few system calls) whether the daemon has gone. Once it has:
 * its last answers, then a CANCELLED answer for every pod still in flight
 * (see above), then -ECONNRESET, then and on every later call.
 * max == 0 returns 0. Answers are in the
 * daemon's order, not necessarily the order of submission.
 * No system call, lock or allocation while answers are there.
 * Thread-safety: one thread at a time per handle. */
SHMSCHED_EXPORT int shmsched_poll(struct shmsched_client *c,
				  struct shmsched_result *out, unsigned max);

/* Sleeps until the daemon puts an answer (or a notice) on this handle's
 * completion ring, or timeout_ns (> 0) passes: a producer waiting for
 * answers need not spin, the daemon wakes it (the answer doorbell,
 * include/shmsched/wire.h). Returns 1 when an answer may be there (call
 * shmsched_poll(); also after a signal or a spurious wake-up), 0 when
 * the time passed without one, or:
 *   -EOPNOTSUPP  the daemon is older and rings no answer doorbell
 *                (returns at once: poll as before)
 *   -ECONNRESET  the daemon has gone (shmsched_poll() still returns its
 *                last answers and the rest, as above)
 *   -EINVAL      c NULL or timeout_ns <= 0
 * A daemon that dies during the sleep does not end it: the timeout bounds
 * how late that is seen. Thread-safety: one thread at a time per handle. */
SHMSCHED_EXPORT int shmsched_wait(struct shmsched_client *c, int64_t timeout_ns);

/* shmsched_wait() in two halves, for a caller that sleeps on several
 * handles, or on words of its own too, at once (futex_waitv(2)). Returns
 * 0 and stores in *word the 32-bit futex word to sleep on while it reads 1
 * (a shared futex: FUTEX_32 without FUTEX_PRIVATE_FLAG), after which the
 * caller calls shmsched_wait_done(); 1 when an answer is there already
 * (no sleep, nothing to undo); or shmsched_wait()'s errors (-EINVAL for
 * NULL). Another thread may not wake the sleep through *word: it is the
 * daemon's to ring. Thread-safety: one thread at a time per handle. */
SHMSCHED_EXPORT int shmsched_wait_prepare(struct shmsched_client *c,
					  uint32_t **word);
SHMSCHED_EXPORT void shmsched_wait_done(struct shmsched_client *c);

/* Pods submitted and not yet returned by shmsched_poll(). Never fails.
 * Thread-safety: one thread at a time per handle. */
SHMSCHED_EXPORT unsigned shmsched_in_flight(const struct shmsched_client *c);

/* Notices the daemon could not deliver to this producer, counted since it
 * registered (it wraps at 2^32): one with no room, because this producer
 * had 64 notices unread (poll more often) or the daemon's own box was
 * full (a drain of many nodes at once). The placements they were about
 * are gone all the same. When the count grows, list the placements
 * (shmsched_placements()) to learn which of yours are gone. 0 from a
 * daemon older than the count. Never fails.
 * Thread-safety: any thread. */
SHMSCHED_EXPORT uint32_t shmsched_notices_lost(const struct shmsched_client *c);

/* Pods that can be in flight at once: the slots of this handle's region.
 * Never fails. Thread-safety: any thread (constant for the handle's life). */
SHMSCHED_EXPORT unsigned shmsched_capacity(const struct shmsched_client *c);

/* Writes the name of node `node_id` (from a placed pod's result) to buf,
 * NUL-terminated. Asks the daemon the first time and remembers the answer
 * for the handle's life: a later call for the same id asks nothing. The
 * daemon may reuse the id of a removed node for a new one; this handle
 * forgets every name it remembers when it sends an ADD or REMOVE node event
 * itself, not when another producer does.
 * Returns 0, or:
 *   -EINVAL    NULL arguments
 *   -ENOENT    (from the daemon) no node has that id
 *   -ENOBUFS   the name and its NUL do not fit len bytes (nothing written
 *              but an empty string when len > 0)
 *   -ENOMEM    out of memory for the cache
 *   the connection's errors (above)
 * Thread-safety: one thread at a time per handle. */
SHMSCHED_EXPORT int shmsched_node_name(struct shmsched_client *c, uint32_t node_id,
				       char *buf, size_t len, char *err,
				       size_t err_len);

/* Sends a node event (enum shmsched_node_event) with its body, body[0..len):
 * a Node as Kubernetes JSON for ADD and UPDATE, the node's name for the
 * others. Returns once the daemon has answered.
 * Returns 0, or:
 *   -EINVAL    NULL arguments, an empty body, kind not an enum
 *              shmsched_node_event value
 *   -EMSGSIZE  len exceeds what one control message carries
 *   the daemon's refusal, its text in err (e.g. -EINVAL: a bad Node;
 *   -ENOENT: UPDATE, REMOVE, (UN)CORDON or LEASE of an unknown name;
 *   -ENOTSUP: LEASE to a daemon that keeps no leases), and the
 *   connection's errors (above)
 * Thread-safety: one thread at a time per handle. */
SHMSCHED_EXPORT int shmsched_node_event(struct shmsched_client *c, int kind,
					const char *body, size_t len, char *err,
					size_t err_len);

/* Declares PriorityClasses (scheduling.k8s.io/v1) and gangs: PodGroups
 * (coscheduling's scheduling.x-k8s.io/v1alpha1: spec.minMember,
 * spec.scheduleTimeoutSeconds; or scheduling.k8s.io/v1alpha2:
 * spec.schedulingPolicy) and Workloads (scheduling.k8s.io/v1alpha1:
 * spec.podGroups): body[0..len) is one, or a list of them, as Kubernetes
 * JSON. Templates registered afterwards may name a gang (the label
 * scheduling.x-k8s.io/pod-group, spec.schedulingGroup or
 * spec.workloadRef: placed all or nothing, see docs/guides/waiting-pods.md). Templates registered
 * afterwards may name them in spec.priorityClassName (as the API server's
 * Priority admission resolves them: the class's value and
 * preemptionPolicy; a name no class has refuses the template). A class
 * may be declared again with the same value. The daemon keeps them until
 * it stops (its cluster file's are read at every start). Admin socket only.
 * Returns 0, or:
 *   -EINVAL    NULL arguments, an empty body; the daemon's refusal: not a
 *              PriorityClass, a reserved "system-" name, a value above
 *              1000000000 or changed, a second globalDefault (err says)
 *   -EPERM     not the admin socket
 *   -ENOSPC    the daemon keeps no more classes
 *   -EMSGSIZE  len exceeds what one control message carries
 *   the connection's errors (above)
 * Thread-safety: one thread at a time per handle. */
SHMSCHED_EXPORT int shmsched_priority_class(struct shmsched_client *c,
					    const char *body, size_t len,
					    char *err, size_t err_len);

/* Gives back what the placement `placement_id` (from its SHMSCHED_PLACED
 * result) took on its node, when the pod has ended: exactly what the
 * daemon recorded for it, once. Only the producer identity that made the
 * placement may release it (the same uid and name, also after a
 * reconnect: shmsched_connect_named), or an admin.
 * Returns 0, or:
 *   -EINVAL    NULL c
 *   -ENOENT    no such placement: never made, or released already
 *   -EPERM     the placement belongs to another producer identity
 *   -ESTALE    its node was removed meanwhile: nothing was left to give
 *              back (the placement is forgotten)
 *   the connection's errors (above); nothing is given back on an error
 * Changed in libshmsched-client.so.1: it took the pod, its node and its
 * devices, which a producer could forge.
 * Thread-safety: one thread at a time per handle. */
SHMSCHED_EXPORT int shmsched_release(struct shmsched_client *c,
				     uint64_t placement_id, char *err,
				     size_t err_len);

/* A live placement, as shmsched_placements() lists it. */
struct shmsched_placement {
	uint64_t placement_id;
	uint32_t node_id;      /* the node's id (shmsched_node_name); a
				* removed node's placement keeps the old id */
	uint32_t owner_uid;    /* the identity that made it: uid ... */
	char owner_name[64];   /* ... and name, NUL-terminated */
	int64_t cpu_milli;     /* its requests */
	int64_t mem_bytes;
	struct shmsched_devices devices;
	uint64_t cookie;       /* the pod's cookie as submitted: after a
				* reconnect, how a producer tells which of its
				* pods a placement is (also one whose PLACED
				* answer it never read); 0 for a bound pod
				* (owner_uid 0, owner_name "(bound)") */
};

/* Lists live placements, a page at a time: this producer identity's own,
 * or, through the admin socket, every producer's. Start with *cursor 0;
 * each call fills up to `max` entries of `out` and moves *cursor on; the
 * listing is complete when *cursor is UINT32_MAX. A page may hold fewer
 * than `max` entries (even none) before the end: call again.
 * Returns the number of entries, or:
 *   -EINVAL    NULL arguments, max 0
 *   -EPROTO    a page that does not hold what it says
 *   -ENOMEM    out of memory for a page
 *   the daemon's refusal and the connection's errors (above)
 * Thread-safety: one thread at a time per handle. */
SHMSCHED_EXPORT int shmsched_placements(struct shmsched_client *c,
					uint32_t *cursor,
					struct shmsched_placement *out,
					unsigned max, char *err, size_t err_len);

/* What a resync changed (shmsched_resync). */
struct shmsched_resync_result {
	uint64_t added;     /* declared pods that had no placement: now bound */
	uint64_t removed;   /* placements no declared pod names: given back */
	uint64_t resized;   /* named by a declared pod of another size: replaced */
	uint64_t unchanged;
	uint64_t skipped;   /* pods not bound, finished, out of scope, or on
			     * a node the daemon does not have */
};

/* Declares the pods bound on node `node` (NULL or "": every node): after
 * it, the placements counted there are exactly the pods in the file open
 * on `pods_fd` (Kubernetes JSON: a Pod, a List, or `kubectl get pods -o
 * json`'s output; a regular file of at most 1 GiB, which the daemon maps).
 * Matching is by namespace/name; a producer's placement there that no
 * declared pod names is given back and its id names nothing afterwards.
 * Admin socket only. Returns 0 with the counts in *out, or:
 *   -EINVAL    NULL arguments, no file, a node name too long, not a
 *              regular file, a file too large, bad JSON or a Node in it
 *   -ENOENT    no such node
 *   -ENOSPC    more pods than the daemon keeps placement records for
 *   -EPERM     not the admin socket
 *   the connection's errors (above)
 * Thread-safety: one thread at a time per handle. */
SHMSCHED_EXPORT int shmsched_resync(struct shmsched_client *c, int pods_fd,
				    const char *node,
				    struct shmsched_resync_result *out, char *err,
				    size_t err_len);

/* One wave of a drain (shmsched_drain). */
enum shmsched_drain_flags {
	SHMSCHED_DRAIN_DRY_RUN = 1, /* plan the wave, evict nothing */
	SHMSCHED_DRAIN_FORCE = 2,   /* evict bound pods too (no producer
				     * manages them: kubectl's unmanaged pods) */
	SHMSCHED_DRAIN_PLACEMENT = 4, /* `selector` is one placement's id in
				       * decimal: only it is considered (the
				       * Eviction API of one pod) */
	SHMSCHED_DRAIN_SURGE = 8,     /* place each pod's replacement first,
				       * on a node not drained, then evict it;
				       * a pod whose replacement has no room
				       * is left (counted blocked) */
};
struct shmsched_drain_result {
	unsigned evicted;   /* this wave (dry run: would be) */
	unsigned blocked;   /* a PodDisruptionBudget allows no disruption now */
	unsigned errors;    /* selected by more than one budget */
	unsigned unmanaged; /* bound pods refused without SHMSCHED_DRAIN_FORCE:
			     * nothing was evicted then */
};

/* Evicts, in one wave, what the PodDisruptionBudgets allow of the live
 * placements on the `n` nodes named (1..1024) whose pods `selector` selects
 * (NULL or "": all; else kubectl drain's --pod-selector, equality-based:
 * key=value, key==value, key!=value, key, !key, joined by ','; at most
 * 1024 bytes, 16 terms), as kubectl drain does; each
 * evicted placement's owner gets an EVICTED notice. Cordon the nodes
 * first (shmsched_node_event) and repeat until blocked, errors and
 * unmanaged are all 0, or your timeout. Stores the report (one line per
 * pod evicted, blocked, in error or refused, naming the budget that
 * blocks it) as a malloc'd NUL-terminated text in *text (free it; may be
 * NULL). Admin socket only. Returns 0, or:
 *   -EINVAL    NULL arguments, n out of range, an empty name, a bad
 *              selector
 *   -ENOENT    no such node
 *   -EPERM     not the admin socket
 *   -EPROTO    an answer that does not hold what it says
 *   -EMSGSIZE  the names do not fit a control message
 *   the connection's errors (above)
 * Thread-safety: one thread at a time per handle. */
SHMSCHED_EXPORT int shmsched_drain(struct shmsched_client *c,
				   const char *const *nodes, unsigned n,
				   const char *selector, unsigned flags,
				   struct shmsched_drain_result *out,
				   char **text, char *err, size_t err_len);

/* Kueue's objects of a running daemon (ResourceFlavor, Cohort,
 * ClusterQueue, LocalQueue), as `shmsched queue` changes them, and the
 * daemon's own figures (shmsched_queue). */
enum shmsched_queue_action {
	SHMSCHED_QUEUE_LIST = 0,    /* each ClusterQueue's quota and usage */
	SHMSCHED_QUEUE_APPLY = 1,   /* `name` names the objects' source (for
				     * messages), `body`: Kueue JSON */
	SHMSCHED_QUEUE_DELETE = 2,  /* `name`: the kind, `body`: the object's
				     * name (a LocalQueue's namespace/name) */
	SHMSCHED_QUEUE_METRICS = 3, /* the daemon's figures no reader of its
				     * state region sees, as Prometheus text
				     * (version 0.0.4): Kueue's quota gauges
				     * and workload counts, and the node
				     * lifecycle's shmsched_node_* counts */
};

/* One OP_QUEUE request: `action` with `name` and body[0..len) as above
 * (NULL and 0 for LIST and METRICS). A change is decoded with the
 * daemon's other objects into new quotas put in force at once, or refused
 * whole (the message names the applied text's line). Stores the daemon's
 * answer (after a change, what changed, then the ClusterQueues in force)
 * as a malloc'd NUL-terminated text in *text (free it). Admin socket only.
 * Returns 0, or:
 *   -EINVAL    NULL arguments, an unknown action, or the objects refused
 *   -ENOENT    DELETE: no such object
 *   -ENOTSUP   the daemon has no Kueue objects to change (not METRICS)
 *   -EPERM     not the admin socket
 *   -EPROTO    an answer that does not hold what it says
 *   -EMSGSIZE  the body does not fit a control message
 *   the connection's errors (above)
 * Thread-safety: one thread at a time per handle. */
SHMSCHED_EXPORT int shmsched_queue(struct shmsched_client *c, int action,
				   const char *name, const char *body,
				   size_t len, char **text, char *err,
				   size_t err_len);

/* What a failure report did (shmsched_report_failure's return). */
enum shmsched_failure_verdict {
	SHMSCHED_FAILURE_COUNTED = 0,   /* counted; nothing changed */
	SHMSCHED_FAILURE_TRIPPED = 1,   /* it quarantined the pod's pool for its
					 * template */
	SHMSCHED_FAILURE_HELD = 2,      /* counted; the pool was quarantined */
	SHMSCHED_FAILURE_CAPPED = 3,    /* would have quarantined the pool, but
					 * over 20 % of nodes would be */
	SHMSCHED_FAILURE_UNTRACKED = 4, /* the daemon's table of pools is full
					 * of quarantined ones: not counted */
	SHMSCHED_FAILURE_UNPOOLED = 5,  /* the node has no pool label: not
					 * counted */
};

/* Reports that the pod of placement `placement_id` (from its PLACED
 * answer) failed, for `reason` (NULL or text of at most 256 bytes, for
 * the daemon's log). The daemon counts failures per pool (the value of
 * its --pool-label on the pod's node) and template, and quarantines a
 * pool for a template whose pods fail there together: no new pod of that
 * template is placed there until it lifts (shmschedd(8)). The placement
 * stays: release it as always. Only the placement's owner may report it
 * (the same identity, as for shmsched_release), or an admin.
 * Returns a verdict (enum shmsched_failure_verdict, >= 0), or:
 *   -EINVAL    NULL c, placement id 0, a reason over 256 bytes
 *   -ENOENT    no such placement: never made, or released already
 *   -EPERM     the placement belongs to another producer identity
 *   -ESTALE    its node was removed meanwhile
 *   -ENOTSUP   the daemon keeps no quarantine
 *   the connection's errors (above)
 * Thread-safety: one thread at a time per handle. */
SHMSCHED_EXPORT int shmsched_report_failure(struct shmsched_client *c,
					    uint64_t placement_id,
					    const char *reason, char *err,
					    size_t err_len);

/* A manager that approves the voluntary disruption of the pods a
 * selector picks (KEP-4563's interceptor, polled: the daemon never waits
 * on a manager). Register on an admin connection, which the registration
 * lives as long as; then ask for the unanswered asks
 * (shmsched_approval_pending) and answer each (shmsched_approval_answer)
 * before its deadline. What `shmsched approve` and the gateway's webhook
 * registrations do. */
#define SHMSCHED_APPROVAL_NAME_MAX 63u      /* bytes of a name, printable */
#define SHMSCHED_APPROVAL_SELECTOR_MAX 1024u
#define SHMSCHED_APPROVAL_DEADLINE_MAX_MS 86400000u /* a day */
#define SHMSCHED_APPROVAL_PAGE 64u /* asks in one answer of the daemon, at most */
enum shmsched_approval_flags {
	SHMSCHED_APPROVAL_FAIL_OPEN = 1, /* no answer by the deadline: evict */
	SHMSCHED_APPROVAL_RECLAIM_TOO = 2, /* asked by quota reclaim too */
	SHMSCHED_APPROVAL_PREEMPT_TOO = 4, /* asked by priority preemption too */
};
enum shmsched_approval_reason {
	SHMSCHED_APPROVAL_DRAIN = 1,
	SHMSCHED_APPROVAL_RECLAIM = 2,
	SHMSCHED_APPROVAL_PREEMPT = 3,
};
enum shmsched_approval_verdict {
	SHMSCHED_APPROVAL_GRANT = 1,
	SHMSCHED_APPROVAL_DENY = 2,
	SHMSCHED_APPROVAL_NOT_BEFORE = 3, /* evict no sooner than not_before_ms
					   * from now */
};
struct shmsched_approval_ask {
	uint64_t ask_id;       /* for shmsched_approval_answer */
	uint64_t placement_id;
	unsigned reason;       /* enum shmsched_approval_reason */
	char pod[256];         /* "namespace/name", or "cookie N" */
	char node[256];
};

/* Registers the connection as manager `name` (1..63 printable bytes, no
 * space) of the pods `selector` picks (NULL or "": every pod; the drain's
 * --pod-selector syntax, at most 1024 bytes): each ask must be answered
 * within deadline_ms (1..86400000), else the pod is evicted (flags
 * SHMSCHED_APPROVAL_FAIL_OPEN) or kept (0). A node drain always asks;
 * quota reclaim asks too with flags SHMSCHED_APPROVAL_RECLAIM_TOO, and
 * priority preemption with SHMSCHED_APPROVAL_PREEMPT_TOO. One
 * registration a connection. Admin socket only. Returns the
 * registration's number (>= 1, for logs), or:
 *   -EINVAL    NULL c, a bad name, selector, deadline or flags (a bit
 *              other than the three above)
 *   -EEXIST    the connection has registered already
 *   -ENOSPC    the daemon's table of registrations is full
 *   -EPERM     not the admin socket
 *   the connection's errors (above)
 * Thread-safety: one thread at a time per handle. */
SHMSCHED_EXPORT int shmsched_approval_register(struct shmsched_client *c,
					       const char *name,
					       const char *selector,
					       unsigned deadline_ms, unsigned flags,
					       char *err, size_t err_len);

/* Stores the registration's unanswered asks (at most
 * SHMSCHED_APPROVAL_PAGE: `asks` holds that many) and, in *more (may be
 * NULL), how many more there are. Returns how many were stored, or:
 *   -EINVAL    NULL c or asks
 *   -EPROTO    an answer that does not hold what it says
 *   the connection's errors (above)
 * Thread-safety: one thread at a time per handle. */
SHMSCHED_EXPORT int shmsched_approval_pending(struct shmsched_client *c,
					      struct shmsched_approval_ask *asks,
					      unsigned *more, char *err,
					      size_t err_len);

/* Answers ask `ask_id` (enum shmsched_approval_verdict; not_before_ms:
 * 1..86400000 with SHMSCHED_APPROVAL_NOT_BEFORE, else 0). Returns 0, or:
 *   -EINVAL    a bad verdict or time
 *   -ENOENT    no such ask of this registration (answered, or gone)
 *   the connection's errors (above)
 * Thread-safety: one thread at a time per handle. */
SHMSCHED_EXPORT int shmsched_approval_answer(struct shmsched_client *c,
					     uint64_t ask_id, unsigned verdict,
					     unsigned not_before_ms, char *err,
					     size_t err_len);

/* The pools quarantined for templates whose pods failed there together:
 * with `pool` NULL, lists them; else first lifts pool `pool`'s
 * quarantines (`template`: one template's, "namespace/name"; NULL:
 * every template's) and stores how many in *released (may be NULL).
 * *quarantined (may be NULL): the pairs quarantined now. *text (may be
 * NULL): a listing, one line per pair tracked, malloc'd and
 * NUL-terminated (free it). Admin socket only. Returns 0, or:
 *   -EINVAL    NULL c, an empty pool, a pool or template over 256 bytes
 *   -EPERM     not the admin socket
 *   -ENOTSUP   the daemon keeps no quarantine
 *   -EPROTO    an answer that does not hold what it says
 *   the connection's errors (above)
 * Thread-safety: one thread at a time per handle. */
SHMSCHED_EXPORT int shmsched_pools(struct shmsched_client *c, const char *pool,
				   const char *template, unsigned *quarantined,
				   unsigned *released, char **text, char *err,
				   size_t err_len);

/* Evaluates template `template_id` against every node of the daemon's
 * current snapshot without placing anything: each node's filter result
 * and, for the nodes that pass, their weighted score, as the daemon's
 * profile computes them with percentageOfNodesToScore 100 (kube-scheduler's
 * algorithm, literally). What the HTTP gateway's extender verbs answer
 * from. Stores in *json a malloc'd, NUL-terminated text (free it) and its
 * length in *len, one JSON object:
 *   {"nodes":N,
 *    "feasible":{"NAME":TOTAL,...},      the weighted total in thousandths
 *                                        of a point (436000 is 436)
 *    "filtered":{"NAME":{"reasons":["node(s) were unschedulable",...],
 *                        "unresolvable":true},...},
 *    "profile":"default-scheduler",      the template's profile
 *    "scores":{"NAME":{"NodeResourcesFit":69,...,"total":436.000},...}}
 * "scores": each feasible node's scores from the profile's enabled score
 * plugins and the weighted total, as `shmsched place --explain` prints
 * them (points; GpuBestFit, GpuFragmentation and the total with three
 * decimals). "profile" and "scores" are absent from daemons before them.
 * "unresolvable": kube-scheduler's UnschedulableAndUnresolvable (no
 * preemption would make the node fit). Cost: the daemon filters and scores
 * every node once, on its control thread (milliseconds per thousand nodes),
 * and passes the answer in a sealed memfd.
 * Returns 0, or:
 *   -EINVAL    NULL arguments
 *   -ENOENT    no such template on this connection
 *   -ENOTSUP   the daemon does not evaluate
 *   -EPROTO    an answer that does not hold what it says: among them a
 *              memfd not sealed against shrink, grow, write and more
 *              seals, or of another size than the answer says, or past
 *              1 GiB (checked before anything is allocated)
 *   -ENOMEM    out of memory (here or in the daemon)
 *   the connection's errors (above)
 * Thread-safety: one thread at a time per handle. */
SHMSCHED_EXPORT int shmsched_evaluate(struct shmsched_client *c,
				      uint32_t template_id, char **json,
				      size_t *len, char *err, size_t err_len);

/* Writes the GPU devices of `d` as their indices, comma-separated and
 * ascending ("0,3"; "" for none): the form of NVIDIA_VISIBLE_DEVICES and
 * CUDA_VISIBLE_DEVICES. NUL-terminated, cut to len (buf may be NULL when
 * len is 0). Returns the length of the whole text, as snprintf does (len
 * or more: it was cut), or -EINVAL for a NULL d (or buf with len > 0).
 * Thread-safety: any thread; it reads only `d`. */
SHMSCHED_EXPORT int shmsched_format_gpus(const struct shmsched_devices *d,
					 char *buf, size_t len);

/* Writes the exclusive cores of `d` in Linux's list format ("0-3,8"; ""
 * for none), as cpuset.cpus and taskset -c take it. Otherwise as
 * shmsched_format_gpus(). */
SHMSCHED_EXPORT int shmsched_format_cpuset(const struct shmsched_devices *d,
					   char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif
