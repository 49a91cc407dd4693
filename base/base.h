/* base/: small utilities with no dependencies, the one public header for
 * the rest of the tree: logging, error text, the one random stream, string
 * to number, the clock, single-writer statistics counters, a byte hash,
 * log-linear histograms of durations, JSON text and the answer line, the
 * strict JSON decoders' core (path, typed access, one error line), the
 * run-time switch between SIMD loops and their scalar twins, numbers in
 * units for people, the time a job has left at its rate so far. Each
 * part's own header says its contract. */
#ifndef SHMSCHED_BASE_BASE_H
#define SHMSCHED_BASE_BASE_H

#include "base/clock.h"
#include "base/errmsg.h"
#include "base/eta.h"
#include "base/file_read.h"
#include "base/hash.h"
#include "base/hist.h"
#include "base/json_in.h"
#include "base/json_out.h"
#include "base/log.h"
#include "base/rng.h"
#include "base/simd.h"
#include "base/stats.h"
#include "base/strconv.h"
#include "base/units.h"

#endif
