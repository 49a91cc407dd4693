/* Resource names to indices (shm/model.h's enum res_index), for the
 * resources a cluster knows: the four fixed ones and up to
 * RES_MAX - RES_FIRST_NAMED named ones, registered as they are met.
 * Concurrency: one thread registers and looks up; others read names below
 * res_count(), which never move. */
#ifndef SHMSCHED_SHM_RESOURCES_H
#define SHMSCHED_SHM_RESOURCES_H

#include <stdbool.h>
#include <stddef.h>

#include "shm/model.h"

/* Fills the four fixed names; no named resource yet. */
void res_names_init(struct res_names *n);

/* Returns the index of `name` (`len` bytes), or -1 when unknown. */
int res_lookup(const struct res_names *n, const char *name, size_t len);

/* Returns the index of `name`, registering it if new: -ENOSPC when all
 * RES_MAX slots are taken, -ENAMETOOLONG past RES_NAME_MAX - 1 bytes. */
int res_register(struct res_names *n, const char *name, size_t len);

/* The number of names, for threads other than the one that registers:
 * every name below it is fully written. (Registration itself, and the
 * lookups, are the one writer's.) */
unsigned res_count(const struct res_names *n);

/* Kubernetes' reading of a resource name: true for hugepages-* and for
 * extended resources (a domain-qualified name outside kubernetes.io/,
 * e.g. nvidia.com/gpu), the ones a cluster may register. */
bool res_name_is_scalar(const char *name, size_t len);

#endif
