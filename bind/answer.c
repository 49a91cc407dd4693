/* Answers: see answer.h. Cost: one copy of at most SHMSCHED_MESSAGE_MAX
 * bytes per slot; one burst enqueue per batch, retried only on a full ring. */
#include "bind/answer.h"

#include <string.h>

/* The wire's devices are the model's, field for field. */
_Static_assert(NODE_MAX_GPUS <= SHMSCHED_MAX_GPUS, "gpu_mask holds every GPU");
_Static_assert(CORE_WORDS == SHMSCHED_CPUSET_WORDS, "cpuset holds every core");
_Static_assert(sizeof(struct device_assignment) == sizeof(struct shmsched_devices),
	       "an assignment is the wire's devices");

void answer_slot(struct shmsched_slot *shared, uint32_t status,
		 uint32_t node_id, uint64_t complete_ns, const char *message)
{
	static const char ellipsis[] = "...";
	shared->status = status;
	shared->node_id = node_id;
	shared->complete_ns = complete_ns;

	if (message == NULL)
		message = "";
	/* strnlen: never scan further than what could fit. */
	size_t len = strnlen(message, SHMSCHED_MESSAGE_MAX);
	if (len < SHMSCHED_MESSAGE_MAX) {
		memcpy(shared->message, message, len + 1);
		return;
	}
	/* Cut so that the kept bytes, "..." and the NUL fill the field
	 * exactly, backing off to the start of a UTF-8 sequence so that the
	 * producer never sees half a character. */
	size_t keep = SHMSCHED_MESSAGE_MAX - sizeof(ellipsis);
	for (size_t back = 0; back < 3 && keep > 0 &&
	     ((unsigned char)message[keep] & 0xc0) == 0x80; back++)
		keep--;
	memcpy(shared->message, message, keep);
	memcpy(shared->message + keep, ellipsis, sizeof(ellipsis));
}

void answer_placed(struct shmsched_slot *shared, uint32_t node_id,
		   uint64_t complete_ns, const struct device_assignment *dev,
		   uint64_t placement_id)
{
	answer_slot(shared, SHMSCHED_PLACED, node_id, complete_ns, NULL);
	/* After answer_slot(): the devices share the message's bytes, where it
	 * wrote an empty message. */
	struct shmsched_devices *out = &shared->devices;
	out->gpu_mask = dev->gpu_mask;
	out->gpu_milli = dev->gpu_milli;
	out->n_cores = dev->n_cores;
	out->reserved = 0;
	for (unsigned w = 0; w < CORE_WORDS; w++)
		out->cpuset[w] = dev->cpuset[w];
	shared->placement_id = placement_id;
}

int answer_complete(struct ring_guard *completion, const uint64_t *handles,
		    unsigned n)
{
	unsigned sent = 0;
	for (unsigned tries = 0; sent < n && tries < ANSWER_COMPLETION_RETRIES; tries++) {
		int k = ring_guard_enqueue(completion, handles + sent, n - sent);
		if (k < 0)
			return k;
		sent += (unsigned)k;
	}
	return (int)sent;
}
