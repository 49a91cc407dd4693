/* shmsched status --queues' layout (cli/status_queues_text.c): the
 * daemon's OP_QUEUE_METRICS text (Prometheus, Kueue's names and
 * shmsched_*) laid out for a person. */
#ifndef SHMSCHED_CLI_STATUS_QUEUES_TEXT_H
#define SHMSCHED_CLI_STATUS_QUEUES_TEXT_H

#include <stdio.h>

/* At most this many ClusterQueue rows, then "... and K more". */
#define STATUS_QUEUE_LINES 40u

/* Writes the layout of `text` (NUL-terminated) to `out`: each
 * ClusterQueue's line and its flavors' and resources' rows (at most
 * STATUS_QUEUE_LINES, then how many more), what the daemon said it left
 * out, the node lifecycle's counts, the pool quarantine's and the
 * approving managers'. Time: linear in the text's size. Memory: an index
 * of the ClusterQueues' names and the rows printed, whatever else `text`
 * holds. Returns how many rows were left out. */
unsigned status_queues_print(const char *text, FILE *out);

#endif
