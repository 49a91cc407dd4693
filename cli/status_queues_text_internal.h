/* cli/status_queues_text.c's count for tests (tests/cli): how many steps
 * its layout took. */
#ifndef SHMSCHED_CLI_STATUS_QUEUES_TEXT_INTERNAL_H
#define SHMSCHED_CLI_STATUS_QUEUES_TEXT_INTERNAL_H

/* Lines read, hash probes and (line, row) comparisons, added up over
 * every status_queues_print() (one thread's: the CLI's and the tests').
 * The layout is linear: at most STATUS_QUEUE_LINES + a few steps a line
 * of the text (a value's sample is compared with each printed row),
 * whatever the number of ClusterQueues. */
extern unsigned long long status_queues_steps;

#endif
