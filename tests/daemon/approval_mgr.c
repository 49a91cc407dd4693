/* See approval_mgr.h. */
#include "approval_mgr.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "shm/shm.h"

void mgr_open(struct mgr *m, const char *sock)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", sock);
	m->fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	m->rid = 1;
	assert_true(m->fd >= 0);
	assert_int_equal(connect(m->fd, (struct sockaddr *)&a, sizeof(a)), 0);
	struct control_hello hello = {.abi_version = SHM_ABI_VERSION};
	assert_int_equal(control_send(m->fd, CONTROL_MSG_HELLO, 0, &hello,
				      sizeof(hello), -1), 0);
	struct control_header h;
	char buf[CONTROL_MAX_PAYLOAD];
	assert_int_equal(control_recv(m->fd, &h, buf, sizeof(buf), NULL, 5000), 0);
	assert_int_equal(h.type, CONTROL_MSG_WELCOME);
}

void mgr_close(struct mgr *m)
{
	close(m->fd);
	m->fd = -1;
}

int mgr_call(struct mgr *m, uint32_t action, const void *body, uint32_t len,
	     void *out, uint32_t cap, uint32_t *got)
{
	static char msg[CONTROL_MAX_PAYLOAD];
	struct op_request op = {.kind = OP_APPROVAL, .arg = action};
	memcpy(msg, &op, sizeof(op));
	if (len > 0)
		memcpy(msg + sizeof(op), body, len);
	uint32_t rid = m->rid++;
	assert_int_equal(control_send(m->fd, CONTROL_MSG_REQUEST, rid, msg,
				      (uint32_t)sizeof(op) + len, -1), 0);
	struct control_header h;
	assert_int_equal(control_recv(m->fd, &h, msg, sizeof(msg), NULL, 5000), 0);
	assert_int_equal(h.request_id, rid);
	m->err[0] = '\0';
	if (h.type == CONTROL_MSG_ERROR) {
		int code;
		control_error_decode(msg, h.length, &code, m->err, sizeof(m->err));
		return -code;
	}
	assert_int_equal(h.type, CONTROL_MSG_RESPONSE);
	assert_true(h.length <= cap);
	if (h.length > 0)
		memcpy(out, msg, h.length);
	if (got != NULL)
		*got = h.length;
	return 0;
}

int mgr_register(struct mgr *m, const char *name, const char *selector,
		 uint32_t deadline_ms, uint32_t flags)
{
	/* Room for a selector past the bound: the daemon's refusal is tested. */
	char body[sizeof(struct op_approval_register) + 2 * OP_APPROVAL_SELECTOR_MAX];
	struct op_approval_register q = {.deadline_ms = deadline_ms, .flags = flags,
					 .selector_len = (uint32_t)strlen(selector)};
	snprintf(q.name, sizeof(q.name), "%s", name);
	assert_true(q.selector_len <= sizeof(body) - sizeof(q));
	memcpy(body, &q, sizeof(q));
	memcpy(body + sizeof(q), selector, q.selector_len);
	struct op_approval_registered ans;
	uint32_t got;
	return mgr_call(m, OP_APPROVAL_REGISTER, body,
			(uint32_t)sizeof(q) + q.selector_len, &ans, sizeof(ans), &got);
}

uint32_t mgr_pending(struct mgr *m, struct op_approval_ask *asks)
{
	static char buf[CONTROL_MAX_PAYLOAD];
	uint32_t got;
	assert_int_equal(mgr_call(m, OP_APPROVAL_PENDING, NULL, 0, buf, sizeof(buf),
				  &got), 0);
	struct op_approval_pending pg;
	memcpy(&pg, buf, sizeof(pg));
	assert_true(pg.n <= 8);
	assert_int_equal(got, sizeof(pg) + pg.n * sizeof(struct op_approval_ask));
	memcpy(asks, buf + sizeof(pg), pg.n * sizeof(struct op_approval_ask));
	return pg.n;
}

uint32_t mgr_await(struct mgr *m, struct op_approval_ask *asks, unsigned ms)
{
	for (unsigned waited = 0;; waited += 10) {
		uint32_t n = mgr_pending(m, asks);
		if (n > 0 || waited >= ms)
			return n;
		usleep(10000);
	}
}

int mgr_answer(struct mgr *m, uint64_t ask, uint32_t verdict, uint32_t ms)
{
	struct op_approval_answer a = {.ask_id = ask, .verdict = verdict,
				       .not_before_ms = ms};
	return mgr_call(m, OP_APPROVAL_ANSWER, &a, sizeof(a), NULL, 0, NULL);
}
