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
	int i = res_lookup(n, name, len);
	if (i >= 0)
		return i;
	if (len >= RES_NAME_MAX)
		return -ENAMETOOLONG;
	if (n->count >= RES_MAX)
		return -ENOSPC;
	memcpy(n->name[n->count], name, len);
	n->name[n->count][len] = '\0';
	return (int)n->count++;
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
