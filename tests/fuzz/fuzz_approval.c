/* Fuzz target: an OP_APPROVAL request's body as the daemon reads it
 * (ingest/control_proto.c): the first byte picks the decoder, the rest is
 * the body: even, REGISTER's (control_approval_register_split); odd,
 * ANSWER's (control_approval_answer_check). Checks: what REGISTER accepts
 * has a non-empty printable name with no space, a deadline of
 * 1..OP_APPROVAL_DEADLINE_MAX_MS, flags among OP_APPROVAL_FLAGS_ALL
 * read back as its fail_open, reclaim and preempt, and a selector of at most
 * OP_APPROVAL_SELECTOR_MAX bytes free of NULs that is exactly the rest of
 * the body; what ANSWER accepts is exactly its struct, an ask id from 1, a
 * known verdict and a not-before only with NOT_BEFORE; a refusal is
 * -EINVAL with a message. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/ingest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_register(const char *body, uint32_t len)
{
	struct control_approval_register r;
	char err[512];
	err[0] = '\0';
	int rc = control_approval_register_split(body, len, &r, err, sizeof(err));
	if (rc < 0) {
		if (rc != -EINVAL || err[0] == '\0' || r.selector != NULL)
			abort();
		return;
	}
	size_t n = strnlen(r.name, sizeof(r.name));
	if (n == 0 || n > OP_APPROVAL_NAME_MAX - 1)
		abort();
	for (size_t i = 0; i < n; i++)
		if (r.name[i] < 0x21 || r.name[i] > 0x7e)
			abort();
	if (r.deadline_ms == 0 || r.deadline_ms > OP_APPROVAL_DEADLINE_MAX_MS)
		abort();
	uint32_t flags;
	memcpy(&flags, body + offsetof(struct op_approval_register, flags),
	       sizeof(flags));
	if ((flags & ~OP_APPROVAL_FLAGS_ALL) != 0 ||
	    r.fail_open != ((flags & OP_APPROVAL_FAIL_OPEN) != 0) ||
	    r.reclaim != ((flags & OP_APPROVAL_RECLAIM_TOO) != 0) ||
	    r.preempt != ((flags & OP_APPROVAL_PREEMPT_TOO) != 0))
		abort();
	if (r.selector != body + sizeof(struct op_approval_register) ||
	    r.selector_len > OP_APPROVAL_SELECTOR_MAX ||
	    sizeof(struct op_approval_register) + r.selector_len != len ||
	    memchr(r.selector, '\0', r.selector_len) != NULL)
		abort();
}

static void check_answer(const char *body, uint32_t len)
{
	struct op_approval_answer a;
	char err[512];
	err[0] = '\0';
	int rc = control_approval_answer_check(body, len, &a, err, sizeof(err));
	if (rc < 0) {
		if (rc != -EINVAL || err[0] == '\0' || a.ask_id != 0)
			abort();
		return;
	}
	if (len != sizeof(a) || a.ask_id == 0 || a.verdict < OP_APPROVAL_GRANT ||
	    a.verdict > OP_APPROVAL_NOT_BEFORE ||
	    (a.verdict == OP_APPROVAL_NOT_BEFORE) != (a.not_before_ms != 0) ||
	    a.not_before_ms > OP_APPROVAL_NOT_BEFORE_MAX_MS)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0 || size - 1 > CONTROL_MAX_PAYLOAD)
		return 0;
	/* A copy of the exact size, so that a read past the body is seen. */
	char *body = malloc(size - 1 > 0 ? size - 1 : 1);
	if (body == NULL)
		return 0;
	memcpy(body, data + 1, size - 1);
	if (data[0] & 1)
		check_answer(body, (uint32_t)(size - 1));
	else
		check_register(body, (uint32_t)(size - 1));
	free(body);
	return 0;
}
