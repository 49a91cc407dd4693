/* bind/: committing, the one public header for the rest of the tree: the
 * optimistic resolver (place, commit, retry), a gang's all-or-nothing
 * commit (gang.h), the commit of one pod on the
 * ledger, and the answer written to the producer's slot and completion
 * ring; the durable store's records (store_codec.h). Knows nothing of how
 * records arrive. */
#ifndef SHMSCHED_BIND_BIND_H
#define SHMSCHED_BIND_BIND_H

#include "bind/commit.h"
#include "bind/resolver.h"
#include "bind/gang.h"
#include "bind/answer.h"
#include "bind/store_codec.h"
#include "bind/store.h"

#endif
