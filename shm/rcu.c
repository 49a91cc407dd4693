/* liburcu QSBR wrappers: see rcu.h. Out of line: each is called per poll or
 * per writer batch, never per pod. */
#if defined(__SANITIZE_THREAD__)
#define RCU_UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define RCU_UNDER_TSAN 1
#endif
#endif
/* liburcu's inline fast paths except under TSan, where their plain volatile
 * accesses to a shared futex word would be reported (see workers/pool.c). */
#ifndef RCU_UNDER_TSAN
#define _LGPL_SOURCE 1
#endif

#include "shm/rcu.h"

#include <urcu/urcu-qsbr.h>

#ifdef RCU_UNDER_TSAN
#include <sanitizer/tsan_interface.h>
static char grace_token;
#define QUIESCENT_POINT() __tsan_release(&grace_token)
#define GRACE_PERIOD_END() __tsan_acquire(&grace_token)
#else
#define QUIESCENT_POINT() ((void)0)
#define GRACE_PERIOD_END() ((void)0)
#endif

void rcu_register(void)
{
	urcu_qsbr_register_thread();
}

void rcu_unregister(void)
{
	QUIESCENT_POINT();
	urcu_qsbr_unregister_thread();
}

void rcu_quiescent(void)
{
	QUIESCENT_POINT();
	urcu_qsbr_quiescent_state();
}

void rcu_offline(void)
{
	QUIESCENT_POINT();
	urcu_qsbr_thread_offline();
}

void rcu_online(void)
{
	urcu_qsbr_thread_online();
}

void rcu_synchronize(void)
{
	urcu_qsbr_synchronize_rcu();
	GRACE_PERIOD_END();
}
