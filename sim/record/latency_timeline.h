/* latency_timeline.h - acquire latency second by second, from the
 * threads' per-second histograms (intervals.h).
 *
 * Each successful acquire's latency (from its invoke, or in open loop
 * from its step's due time, to its grant) falls in the second of the run
 * its grant came in; per second: how many, the median and the 99th
 * percentile at the histograms' precision (three significant digits:
 * the highest value of the bucket holding the nearest-rank sample, never
 * above the largest), and the largest, exact to the microsecond; in
 * milliseconds. The very histograms acquire.hlog writes, so the two agree
 * second by second. */
#ifndef LOCKLAB_LATENCY_TIMELINE_H
#define LOCKLAB_LATENCY_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

struct interval_log;

struct latency_second {
    uint64_t count;
    double p50_ms, p99_ms, max_ms; /* 0 when count is 0 */
};

/* out[0..len) for the seconds from the start line, from the n threads'
 * logs. 0, or -1 out of memory (or a log out of order). */
int latency_timeline(const struct interval_log *logs, size_t n, struct latency_second *out,
                     size_t len);

#endif
