/* An approving manager's side of OP_APPROVAL for the daemon's tests
 * (ingest/control_ops.h): one admin connection kept open, REGISTER,
 * PENDING and ANSWER, each failing the test on a broken exchange and
 * returning the daemon's ERROR as -code with its text in m->err. */
#ifndef SHMSCHED_TESTS_APPROVAL_MGR_H
#define SHMSCHED_TESTS_APPROVAL_MGR_H

#include <stdbool.h>
#include <stdint.h>

#include "ingest/ingest.h"

struct mgr {
	int fd;
	uint32_t rid;
	char err[CONTROL_ERROR_TEXT_MAX + 1];
};

/* Connects to admin socket `sock` (HELLO, WELCOME). */
void mgr_open(struct mgr *m, const char *sock);
void mgr_close(struct mgr *m);

/* One OP_APPROVAL request of `action`: 0 with the answer in out (*got
 * bytes, at most cap), or the ERROR's -code with its text in m->err. */
int mgr_call(struct mgr *m, uint32_t action, const void *body, uint32_t len,
	     void *out, uint32_t cap, uint32_t *got);

/* REGISTER with `flags` (enum op_approval_flags); a selector of up to
 * twice OP_APPROVAL_SELECTOR_MAX is sent as given. */
int mgr_register(struct mgr *m, const char *name, const char *selector,
		 uint32_t deadline_ms, uint32_t flags);

/* The manager's unanswered asks into asks[] (at most 8); how many. */
uint32_t mgr_pending(struct mgr *m, struct op_approval_ask *asks);

/* As mgr_pending, polled every 10 ms until some ask is there or `ms`
 * passed. */
uint32_t mgr_await(struct mgr *m, struct op_approval_ask *asks, unsigned ms);

int mgr_answer(struct mgr *m, uint64_t ask, uint32_t verdict, uint32_t ms);

#endif
