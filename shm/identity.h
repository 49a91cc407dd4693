/* A producer identity slot of the state region (struct state_identity,
 * shm/layout.h) written by the daemon alone and read by observers in other
 * processes: the one writer and the one reader, side by side, so that the
 * seqlock below is seen whole.
 *
 * A slot is made (used 0 -> 1), freed when idle (used 1 -> 0, its uid and
 * name left in place) and may be taken again for another uid and name. An
 * observer that loaded `used` == 1 and is copying the name when the slot
 * is freed and taken again would copy half of each name, and `used`, 1
 * again, would not tell it. So `generation` is a seqlock over uid and
 * name:
 *   IW1  generation + 1 (odd: being written), relaxed, then a release
 *       fence: the rewrites below cannot be seen before it;
 *   IW2  uid and name written (plain stores: the reader may race them);
 *   IW3  generation + 1 (even), release; partner of IR1;
 *   IW4  used = 1, release; partner of IR2 (as before: uid and name are
 *       complete for one who sees it).
 *   IR1  generation, acquire; odd: being written, try again;
 *   IR2  used, acquire; 0: a free slot;
 *   IR3  copy uid and name;
 *   IR4  an acquire fence, then generation and used again, relaxed: a copy
 *       that read any byte of a later IW2 sees IW1's increment here (the
 *       fence pairs with IW1's), so it is thrown away; a slot freed since
 *       (used 0) is reported free.
 * The writer is the daemon's control thread under the producers' lock;
 * the free (used = 0, release) needs no generation: uid and name stay.
 * Cost: two loads and a fence more per slot read. */
#ifndef SHMSCHED_SHM_IDENTITY_H
#define SHMSCHED_SHM_IDENTITY_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "shm/layout.h"

/* IW1-IW4: the slot takes `uid` and `name` (truncated to the field, NUL-
 * terminated) and is published used. The only writer of the slot. */
static inline void state_identity_write(struct state_identity *id, uint32_t uid,
					const char *name)
{
	uint32_t g = __atomic_load_n(&id->generation, __ATOMIC_RELAXED);
	/* IW1: relaxed, ordered before IW2 by the release fence. */
	__atomic_store_n(&id->generation, g + 1, __ATOMIC_RELAXED);
	state_fence_release(); /* shm/layout.h: silenced under TSan */
	/* IW2. */
	id->uid = uid;
	snprintf(id->name, sizeof(id->name), "%s", name);
	/* IW3: release, partner of IR1. */
	__atomic_store_n(&id->generation, g + 2, __ATOMIC_RELEASE);
	/* IW4: release, partner of IR2. */
	__atomic_store_n(&id->used, 1, __ATOMIC_RELEASE);
}

/* IR1-IR4: one try at copying slot `id`. `between` (NULL in use; a test's
 * hook) runs after the copy and before the check, where a writer may
 * strike. Returns 1 with *uid and name[64] a consistent copy, 0 for a
 * free slot, -EAGAIN when the slot was being written or changed under the
 * copy (try again). */
static inline int state_identity_read(const struct state_identity *id,
				      uint32_t *uid, char name[64],
				      void (*between)(void *), void *arg)
{
	/* IR1: acquire, partner of IW3. */
	uint32_t g = __atomic_load_n(&id->generation, __ATOMIC_ACQUIRE);
	if (g & 1)
		return -EAGAIN;
	/* IR2: acquire, partner of IW4 and of the free's release. */
	if (__atomic_load_n(&id->used, __ATOMIC_ACQUIRE) == 0)
		return 0;
	/* IR3. */
	*uid = id->uid;
	memcpy(name, id->name, 64);
	name[63] = '\0';
	if (between != NULL)
		between(arg);
	/* IR4: the fence pairs with IW1's release fence. */
	state_fence_acquire();
	if (__atomic_load_n(&id->generation, __ATOMIC_RELAXED) != g)
		return -EAGAIN;
	if (__atomic_load_n(&id->used, __ATOMIC_RELAXED) == 0)
		return 0;
	return 1;
}

#endif
