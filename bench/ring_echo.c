/* Echo round trip over two SP/SC rings: see ring_echo.h.
 *
 * Both loops poll in bursts. An empty or full ring is polled again at once
 * for a while (the other side is usually on another core), then with
 * sched_yield() so that a test running more threads than cores still makes
 * progress. Cost per handle: one slot write and one slot read on each ring.
 */
#include "bench/ring_echo.h"
#include "base/base.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define MAX_BURST 256u
#define SPINS_BEFORE_YIELD 256u

static void idle(unsigned *spins)
{
	if (++*spins >= SPINS_BEFORE_YIELD) {
		*spins = 0;
		sched_yield();
	}
}

uint64_t ring_echo_handle(uint64_t i)
{
	/* A bijection, so distinct i give distinct handles. */
	return rng_hash(i);
}

static unsigned clamp_burst(unsigned burst)
{
	return burst == 0 ? 1 : burst > MAX_BURST ? MAX_BURST : burst;
}

/* Handles to ask for next: a burst, or what is left of `count` after `done`. */
static unsigned next_burst(uint64_t count, uint64_t done, unsigned burst)
{
	uint64_t left = count - done;
	return left < burst ? (unsigned)left : burst;
}

uint64_t ring_echo_serve(struct ring *in, struct ring *out, uint64_t count,
			 unsigned burst)
{
	uint64_t buf[MAX_BURST];
	uint64_t moved = 0, sum = 0;
	unsigned spins = 0;
	burst = clamp_burst(burst);
	while (moved < count) {
		unsigned n = ring_dequeue_burst(in, buf, next_burst(count, moved, burst));
		if (n == 0) {
			idle(&spins);
			continue;
		}
		for (unsigned i = 0; i < n; i++)
			sum = ring_echo_mix(sum, buf[i]);
		unsigned done = 0;
		while (done < n) {
			unsigned m = ring_enqueue_burst(out, buf + done, n - done);
			if (m == 0)
				idle(&spins);
			done += m;
		}
		moved += n;
	}
	while (ring_enqueue_burst(out, &sum, 1) == 0)
		idle(&spins);
	return sum;
}

void ring_echo_drive(struct ring *out, struct ring *in, uint64_t count,
		     unsigned burst, struct ring_echo_result *res)
{
	uint64_t buf[MAX_BURST];
	uint64_t sent = 0, received = 0, sum = 0;
	unsigned spins = 0;
	burst = clamp_burst(burst);
	*res = (struct ring_echo_result){0};

	uint64_t t0 = now_ns();
	while (received < count) {
		if (sent < count) {
			unsigned want = next_burst(count, sent, burst);
			for (unsigned i = 0; i < want; i++)
				buf[i] = ring_echo_handle(sent + i);
			unsigned n = ring_enqueue_burst(out, buf, want);
			for (unsigned i = 0; i < n; i++)
				sum = ring_echo_mix(sum, buf[i]);
			sent += n;
		}
		unsigned n = ring_dequeue_burst(in, buf,
						next_burst(count, received, burst));
		if (n == 0) {
			idle(&spins);
			continue;
		}
		for (unsigned i = 0; i < n; i++) {
			if (buf[i] != ring_echo_handle(received + i)) {
				if (res->mismatches == 0)
					res->first_mismatch = received + i;
				res->mismatches++;
			}
		}
		received += n;
	}
	uint64_t peer = 0;
	while (ring_dequeue_burst(in, &peer, 1) == 0)
		idle(&spins);
	res->elapsed_ns = now_ns() - t0;
	res->sent = sent;
	res->received = received;
	res->checksum = sum;
	res->peer_checksum = peer;
	res->ok = res->mismatches == 0 && peer == sum && received == count;
}

int ring_echo_pair_create(unsigned slots, unsigned region_flags,
			  struct ring_echo_pair *out)
{
	size_t bytes = ring_memsize(slots);
	if (bytes == 0)
		return -EINVAL;
	const struct shm_section_spec specs[] = {
		{SHM_SECTION_SUBMIT_RING, bytes},
		{SHM_SECTION_COMPLETION_RING, bytes},
	};
	out->region = shm_region_create("shmsched-echo", SHM_REGION_KIND_PRODUCER,
					specs, 2, region_flags);
	if (out->region == NULL)
		return -errno;
	struct shm_span s = shm_region_section(out->region, SHM_SECTION_SUBMIT_RING);
	struct shm_span c = shm_region_section(out->region,
					       SHM_SECTION_COMPLETION_RING);
	out->to_server = ring_init(s.base, s.size, slots, "submit");
	out->to_driver = ring_init(c.base, c.size, slots, "completion");
	if (out->to_server == NULL || out->to_driver == NULL) {
		int rc = -errno;
		shm_region_close(out->region);
		out->region = NULL;
		return rc;
	}
	return 0;
}

int ring_echo_pair_attach(int fd, unsigned slots, struct ring_echo_pair *out,
			  char *err, size_t err_len)
{
	out->region = shm_region_attach(fd, SHM_REGION_KIND_PRODUCER, 0, err,
					err_len);
	if (out->region == NULL)
		return -errno;
	struct shm_span s = shm_region_section(out->region, SHM_SECTION_SUBMIT_RING);
	struct shm_span c = shm_region_section(out->region,
					       SHM_SECTION_COMPLETION_RING);
	out->to_server = ring_attach(s.base, s.size, slots);
	out->to_driver = ring_attach(c.base, c.size, slots);
	if (out->to_server == NULL || out->to_driver == NULL) {
		if (err != NULL)
			snprintf(err, err_len, "region fd %d: a ring section does "
				 "not hold a ring of %u slots", fd, slots);
		shm_region_close(out->region);
		out->region = NULL;
		return -EPROTO;
	}
	return 0;
}

void ring_echo_pair_close(struct ring_echo_pair *p)
{
	shm_region_close(p->region);
	p->region = NULL;
}
