/* latency_timeline.h - acquire latency second by second, from the history.
 *
 * Each successful acquire's latency (intervals.h: from its invoke, or in
 * open loop from its step's due time, to its grant) falls in the second of
 * the run its grant came in; per second: how many,
 * the median, the 99th percentile and the largest, exact (sorted), in
 * milliseconds. Computed once the run is over, so the hot path pays
 * nothing; a fault's effect on latency shows second by second. */
#ifndef LOCKLAB_LATENCY_TIMELINE_H
#define LOCKLAB_LATENCY_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

#include "sim/record/history.h"

struct latency_second {
    uint64_t count;
    double p50_ms, p99_ms, max_ms; /* 0 when count is 0 */
};

/* out[0..len) for the seconds from h->start_mono_ns. 0, or -1 out of memory. */
int latency_timeline(const struct history *h, struct latency_second *out, size_t len);

#endif
