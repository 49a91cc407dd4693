/* stress.producer_region: a producer region made by one process and
 * attached by a forked one carries slots and indices both ways; attach
 * refuses a region whose geometry is wrong. */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "shm/shm.h"

#define SLOTS 1000u
#define ROUNDS 200u

static void test_slots_and_rings_cross_processes(void **state)
{
	(void)state;
	struct producer_region d;
	char err[256];
	assert_int_equal(producer_region_create(SLOTS, &d, err, sizeof(err)), 0);
	assert_int_equal(d.n_slots, SLOTS);
	assert_int_equal(d.ring_slots, 1024);
	assert_true(ring_capacity(d.submit) >= SLOTS);
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		/* The producer: attach by fd, fill every slot, submit, wait for
		 * the answers, check them, ROUNDS times. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		struct producer_region p;
		if (producer_region_attach(shm_region_fd(d.region), &p, err,
					   sizeof(err)) < 0)
			_exit(10);
		if (p.n_slots != SLOTS)
			_exit(11);
		for (uint32_t round = 0; round < ROUNDS; round++) {
			for (uint64_t i = 0; i < SLOTS; i++) {
				p.slots[i].cookie = round * SLOTS + i;
				uint64_t h = i;
				while (ring_enqueue_burst(p.submit, &h, 1) == 0)
					;
			}
			for (uint32_t got = 0; got < SLOTS;) {
				uint64_t h[64];
				unsigned n = ring_dequeue_burst(p.completion, h, 64);
				for (unsigned k = 0; k < n; k++) {
					const struct shmsched_slot *s = &p.slots[h[k]];
					if (h[k] >= SLOTS || s->status != SHMSCHED_PLACED ||
					    s->node_id != (uint32_t)(s->cookie % 97))
						_exit(12);
				}
				got += n;
			}
		}
		producer_region_close(&p);
		_exit(0);
	}
	/* The daemon: answer each submitted slot. */
	for (uint64_t done = 0; done < (uint64_t)SLOTS * ROUNDS;) {
		uint64_t h[64];
		unsigned n = ring_dequeue_burst(d.submit, h, 64);
		for (unsigned k = 0; k < n; k++) {
			assert_true(h[k] < SLOTS);
			struct shmsched_slot *s = &d.slots[h[k]];
			s->status = SHMSCHED_PLACED;
			s->node_id = (uint32_t)(s->cookie % 97);
		}
		unsigned sent = 0;
		while (sent < n)
			sent += ring_enqueue_burst(d.completion, h + sent, n - sent);
		done += n;
	}
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	producer_region_close(&d);
}

static void test_bad_sizes_and_regions(void **state)
{
	(void)state;
	struct producer_region d;
	char err[256];
	assert_int_equal(producer_region_create(0, &d, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "0 slots"));
	assert_int_equal(producer_region_create(PRODUCER_SLOTS_MAX + 1, &d, err,
						sizeof(err)), -EINVAL);
	/* A producer-kind region without slots is not a producer region. */
	const struct shm_section_spec one[] = {{SHM_SECTION_SUBMIT_RING, 4096}};
	struct shm_region *r = shm_region_create("t", SHM_REGION_KIND_PRODUCER, one,
						 1, 0);
	assert_non_null(r);
	assert_int_equal(producer_region_attach(shm_region_fd(r), &d, err,
						sizeof(err)), -EPROTO);
	assert_non_null(strstr(err, "sections missing"));
	shm_region_close(r);
	/* A state region is refused by kind. */
	r = shm_region_create("t", SHM_REGION_KIND_STATE, one, 1, 0);
	assert_int_equal(producer_region_attach(shm_region_fd(r), &d, err,
						sizeof(err)), -EPROTO);
	assert_non_null(strstr(err, "kind mismatch"));
	shm_region_close(r);
}

int main(void)
{
	setenv("SHMSCHED_LOG", "warn", 0);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_slots_and_rings_cross_processes),
		cmocka_unit_test(test_bad_sizes_and_regions),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
