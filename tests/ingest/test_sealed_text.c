/* unit.sealed_text: the sealed memfd that carries a text past one control
 * answer (OP_QUEUE_METRICS' metrics; sealed_text_create and
 * sealed_text_read, ingest/sealed_text.c). What sealed_text_create writes
 * reads back whole; the reader refuses, before it allocates, an fd whose
 * size disagrees with the answer's header, one missing any of the four
 * seals (none, or shrink and grow only), a size past its bound even when
 * it agrees, no fd at all and an fd that is no memfd (a pipe). */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "ingest/control_ops.h"
#include "ingest/control_proto.h"

static char err[512];

/* A memfd of `len` bytes of 'x', sealed with `seals` (0: none). */
static int memfd_with(size_t len, int seals)
{
	int fd = memfd_create("test-sealed-text", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	assert_true(fd >= 0);
	char *b = malloc(len + 1);
	assert_non_null(b);
	memset(b, 'x', len);
	assert_int_equal(write(fd, b, len), (ssize_t)len);
	free(b);
	if (seals != 0)
		assert_int_equal(fcntl(fd, F_ADD_SEALS, seals), 0);
	return fd;
}

static void test_round_trip(void **state)
{
	(void)state;
	/* Past one answer, as the daemon's metrics of 1,000 queues are. */
	size_t len = (size_t)CONTROL_MAX_PAYLOAD * 3 + 17;
	char *t = malloc(len);
	assert_non_null(t);
	for (size_t i = 0; i < len; i++)
		t[i] = (char)('a' + i % 26);
	int fd = sealed_text_create("test", t, len);
	assert_true(fd >= 0);
	assert_int_equal(fcntl(fd, F_GET_SEALS), SEALED_TEXT_SEALS);
	assert_int_equal(write(fd, "y", 1), -1); /* F_SEAL_WRITE holds */
	char *got = NULL;
	assert_int_equal(sealed_text_read(fd, len, OP_QUEUE_METRICS_MAX_BYTES,
					  "metrics", &got, err, sizeof(err)), 0);
	assert_non_null(got);
	assert_memory_equal(got, t, len);
	assert_int_equal(got[len], '\0');
	free(got);
	close(fd);
	free(t);
	/* Empty text. */
	fd = sealed_text_create("test", "", 0);
	assert_true(fd >= 0);
	assert_int_equal(sealed_text_read(fd, 0, 16, "metrics", &got, err,
					  sizeof(err)), 0);
	assert_string_equal(got, "");
	free(got);
	close(fd);
}

static void test_size_disagrees(void **state)
{
	(void)state;
	int fd = memfd_with(100, SEALED_TEXT_SEALS);
	char *got = (char *)1;
	assert_int_equal(sealed_text_read(fd, 99, 1000, "metrics", &got, err,
					  sizeof(err)), -EPROTO);
	assert_null(got);
	assert_non_null(strstr(err, "metrics: a memfd of 100 bytes; the answer "
			       "says 99"));
	assert_int_equal(sealed_text_read(fd, 101, 1000, "metrics", &got, err,
					  sizeof(err)), -EPROTO);
	/* Agreeing, but past the bound. */
	assert_int_equal(sealed_text_read(fd, 100, 99, "metrics", &got, err,
					  sizeof(err)), -EPROTO);
	assert_non_null(strstr(err, "(at most 99)"));
	assert_null(got);
	assert_int_equal(sealed_text_read(fd, 100, 100, "metrics", &got, err,
					  sizeof(err)), 0);
	free(got);
	close(fd);
}

static void test_seals_missing(void **state)
{
	(void)state;
	char *got = (char *)1;
	int fd = memfd_with(100, 0);
	assert_int_equal(sealed_text_read(fd, 100, 1000, "metrics", &got, err,
					  sizeof(err)), -EPROTO);
	assert_null(got);
	assert_non_null(strstr(err, "a memfd missing seals"));
	close(fd);
	fd = memfd_with(100, F_SEAL_SHRINK | F_SEAL_GROW);
	assert_int_equal(sealed_text_read(fd, 100, 1000, "metrics", &got, err,
					  sizeof(err)), -EPROTO);
	assert_non_null(strstr(err, "missing seals"));
	close(fd);
	/* All but F_SEAL_SEAL: another could still be added... or not. */
	fd = memfd_with(100, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE);
	assert_int_equal(sealed_text_read(fd, 100, 1000, "metrics", &got, err,
					  sizeof(err)), -EPROTO);
	close(fd);
}

static void test_not_a_memfd(void **state)
{
	(void)state;
	char *got = (char *)1;
	assert_int_equal(sealed_text_read(-1, 100, 1000, "metrics", &got, err,
					  sizeof(err)), -EPROTO);
	assert_non_null(strstr(err, "no fd came with the answer"));
	int p[2];
	assert_int_equal(pipe(p), 0);
	assert_int_equal(sealed_text_read(p[0], 0, 1000, "metrics", &got, err,
					  sizeof(err)), -EPROTO);
	assert_non_null(strstr(err, "not a sealable memfd"));
	assert_null(got);
	close(p[0]);
	close(p[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_size_disagrees),
		cmocka_unit_test(test_seals_missing),
		cmocka_unit_test(test_not_a_memfd),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
