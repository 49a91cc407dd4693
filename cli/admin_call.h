/* One request of a shmsched command to the daemon's admin socket (policy,
 * queue): connect, HELLO, the request, its answer. */
#ifndef SHMSCHED_CLI_ADMIN_CALL_H
#define SHMSCHED_CLI_ADMIN_CALL_H

#include <stddef.h>
#include <stdint.h>

/* Sends op_request {kind, action} and body[0..len) to the admin socket
 * `sock` as "shmsched CMD" and waits up to timeout_ms for each answer.
 * Returns 0 with the RESPONSE's payload in msg (cap bytes: at least
 * CONTROL_MAX_PAYLOAD) and its length, at least `min`, in *got; otherwise
 * prints one line ("shmsched CMD: the admin socket SOCK: why", "shmsched
 * CMD: the daemon refused: TEXT (ERRNO)", or what it answered instead of
 * a RESPONSE of at least min bytes) and returns -1. */
int cli_admin_call(const char *cmd, const char *sock, uint32_t kind, uint32_t action,
		   const void *body, size_t len, int timeout_ms, size_t min,
		   char *msg, size_t cap, uint32_t *got);

/* As cli_admin_call, and the fd that came with the answer in *fd (-1:
 * none; the caller closes it). */
int cli_admin_call_fd(const char *cmd, const char *sock, uint32_t kind,
		      uint32_t action, const void *body, size_t len,
		      int timeout_ms, size_t min, char *msg, size_t cap,
		      uint32_t *got, int *fd);

#endif
