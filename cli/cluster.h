/* shmsched cluster status: a multi-host cluster's state read from etcd
 * directly (issue 40 item 6; docs/design/multi-host.md): its hosts with
 * their leases' seconds left, its coordinator, and each shard's assigned
 * host and owner. */
#ifndef SHMSCHED_CLI_CLUSTER_H
#define SHMSCHED_CLI_CLUSTER_H

/* argv[0] is "cluster". Returns the exit status: 0, 1 (etcd could not be
 * read), 2 (bad usage). */
int cluster_main(int argc, char **argv);

#endif
