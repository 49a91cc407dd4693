/* Resource name registry: see resources.h. Linear search: at most RES_MAX
 * names, consulted while decoding, never per node. */
#include "shm/resources.h"

#include <errno.h>
#include <string.h>

static const char *const fixed[RES_FIRST_NAMED] = {
	[RES_CPU] = "cpu",
	[RES_MEMORY] = "memory",
	[RES_EPHEMERAL] = "ephemeral-storage",
	[RES_PODS] = "pods",
};

void res_names_init(struct res_names *n)
{
	memset(n, 0, sizeof(*n));
	for (int i = 0; i < RES_FIRST_NAMED; i++)
		strcpy(n->name[i], fixed[i]);
	n->count = RES_FIRST_NAMED;
}

int res_lookup(const struct res_names *n, const char *name, size_t len)
{
	for (unsigned i = 0; i < n->count; i++)
		if (strlen(n->name[i]) == len && memcmp(n->name[i], name, len) == 0)
			return (int)i;
	return -1;
}

int res_register(struct res_names *n, const char *name, size_t len)
{
	int found = res_lookup(n, name, len);
	if (found >= 0)
		return found;
	if (len >= RES_NAME_MAX)
		return -ENAMETOOLONG;
	if (n->count >= RES_MAX)
		return -ENOSPC;
	unsigned i = n->count;
	memcpy(n->name[i], name, len);
	n->name[i][len] = '\0';
	/* Release, partner of the acquire loads of readers on other threads
	 * (res_count()): the name is written before the count that covers it. */
	__atomic_store_n(&n->count, i + 1, __ATOMIC_RELEASE);
	return (int)i;
}

unsigned res_count(const struct res_names *n)
{
	/* Acquire, partner of the release in res_register(). */
	return __atomic_load_n(&n->count, __ATOMIC_ACQUIRE);
}

bool res_name_is_scalar(const char *name, size_t len)
{
	static const char hp[] = "hugepages-";
	if (len > sizeof(hp) - 1 && memcmp(name, hp, sizeof(hp) - 1) == 0)
		return true;
	const char *slash = memchr(name, '/', len);
	if (slash == NULL)
		return false;
	/* kubernetes.io/ and *.kubernetes.io/ names are native, not extended. */
	size_t dlen = (size_t)(slash - name);
	static const char k8s[] = "kubernetes.io";
	if (dlen == sizeof(k8s) - 1 && memcmp(name, k8s, dlen) == 0)
		return false;
	if (dlen > sizeof(k8s) && memcmp(slash - (sizeof(k8s) - 1), k8s,
					 sizeof(k8s) - 1) == 0 &&
	    slash[-(int)sizeof(k8s)] == '.')
		return false;
	return true;
}
