/* stress.ring_procs: a DPDK ring pair shared between two processes moves
 * SHMSCHED_STRESS_HANDLES handles (default 10 million) each way with no
 * loss, duplicate or reordering: every handle is checked on return and the
 * two sides' checksums must agree.
 *   - a forked child (same address, inherited mapping);
 *   - a separately executed program that attaches by fd, at another address.
 * argv[1] is the path of ring_peer. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <setjmp.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "bench/ring_echo.h"

#define SLOTS 1024u
#define BURST 32u

extern char **environ;
static const char *peer_path;
static uint64_t handles = 10000000;

static void check_result(const struct ring_echo_result *res)
{
	print_message("moved %" PRIu64 " handles each way in %.3f s, checksum "
		      "%016" PRIx64 " (peer %016" PRIx64 ")\n", res->received,
		      (double)res->elapsed_ns / 1e9, res->checksum,
		      res->peer_checksum);
	assert_int_equal(res->sent, handles);
	assert_int_equal(res->received, handles);
	assert_int_equal(res->mismatches, 0);
	assert_int_equal(res->checksum, res->peer_checksum);
	assert_true(res->ok);
}

static void expect_exit(pid_t pid, int code)
{
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), code);
}

/* Starts ring_peer on `pair` (told it has `slots` slots, to echo `count`
 * handles) and returns its pid. */
static pid_t spawn_peer(const struct ring_echo_pair *pair, unsigned slots,
			uint64_t count)
{
	assert_non_null(peer_path);
	/* The region's fd is close-on-exec; hand the peer a dup that is not. */
	int fd = fcntl(shm_region_fd(pair->region), F_DUPFD, 3);
	assert_true(fd >= 0);
	struct shm_span span = shm_region_span(pair->region);
	char a_fd[16], a_slots[16], a_count[24], a_burst[16], a_base[24], a_size[24];
	snprintf(a_fd, sizeof(a_fd), "%d", fd);
	snprintf(a_slots, sizeof(a_slots), "%u", slots);
	snprintf(a_count, sizeof(a_count), "%" PRIu64, count);
	snprintf(a_burst, sizeof(a_burst), "%u", BURST);
	snprintf(a_base, sizeof(a_base), "%" PRIxPTR, (uintptr_t)span.base);
	snprintf(a_size, sizeof(a_size), "%" PRIu64, span.size);
	char *argv[] = {(char *)peer_path, a_fd, a_slots, a_count, a_burst,
			a_base, a_size, NULL};
	fflush(NULL);
	pid_t pid;
	assert_int_equal(posix_spawn(&pid, peer_path, NULL, NULL, argv, environ), 0);
	close(fd);
	return pid;
}

static void test_forked_child(void **state)
{
	(void)state;
	struct ring_echo_pair pair;
	assert_int_equal(ring_echo_pair_create(SLOTS, 0, &pair), 0);
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		ring_echo_serve(pair.to_server, pair.to_driver, handles, BURST);
		_exit(0);
	}
	struct ring_echo_result res;
	ring_echo_drive(pair.to_server, pair.to_driver, handles, BURST, &res);
	expect_exit(pid, 0);
	check_result(&res);
	/* Both rings are empty at the end: nothing left behind. */
	assert_int_equal(ring_count(pair.to_server), 0);
	assert_int_equal(ring_count(pair.to_driver), 0);
	ring_echo_pair_close(&pair);
}

static void test_exec_peer_at_another_address(void **state)
{
	(void)state;
	struct ring_echo_pair pair;
	assert_int_equal(ring_echo_pair_create(SLOTS, 0, &pair), 0);
	pid_t pid = spawn_peer(&pair, SLOTS, handles);

	struct ring_echo_result res;
	ring_echo_drive(pair.to_server, pair.to_driver, handles, BURST, &res);
	expect_exit(pid, 0);
	check_result(&res);
	ring_echo_pair_close(&pair);
}

/* The peer refuses a region that is not what it expects, and says why. */
static void test_exec_peer_refuses_wrong_geometry(void **state)
{
	(void)state;
	struct ring_echo_pair pair;
	assert_int_equal(ring_echo_pair_create(SLOTS, 0, &pair), 0);
	pid_t pid = spawn_peer(&pair, SLOTS * 2, 10);
	expect_exit(pid, 4);
	ring_echo_pair_close(&pair);
}

int main(int argc, char **argv)
{
	setenv("SHMSCHED_LOG", "warn", 0);
	peer_path = argc > 1 ? argv[1] : NULL;
	const char *n = getenv("SHMSCHED_STRESS_HANDLES");
	if (n != NULL && *n != '\0')
		handles = strtoull(n, NULL, 10);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_forked_child),
		cmocka_unit_test(test_exec_peer_at_another_address),
		cmocka_unit_test(test_exec_peer_refuses_wrong_geometry),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
