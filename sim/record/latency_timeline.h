/* latency_timeline.h - acquire latency second by second, two ways.
 *
 * By grant (latency_timeline): from the threads' per-second histograms
 * (intervals.h). Each successful acquire's latency (from its invoke, or in
 * open loop from its step's due time, to its grant) falls in the second of
 * the run its grant came in; per second: how many, the median and the
 * 99th percentile at the histograms' precision (three significant digits:
 * the highest value of the bucket holding the nearest-rank sample, never
 * above the largest), and the largest, exact to the microsecond; in
 * milliseconds. The very histograms acquire.hlog writes, so the two agree
 * second by second.
 *
 * By begin (struct begun_timeline): the same latencies, each in the second
 * its acquire began (its invoke, or its step's due time in open loop), so
 * a 2 s server pause shows as 2 s waits inside the pause, where the
 * chart's fault band is, not after it. Filled from the history as it is
 * read back (the run's check already reads every event once), so the
 * clients' hot path does nothing more. Memory: one small log-bucket array
 * per second (BEGUN_BUCKETS counters, ~1 KiB: ~4 MiB for an hour) and one
 * word per client, whatever the number of acquires. Precision: eight
 * buckets per power of two (a percentile is at most 12.5 % above the
 * sample, never above the max); exact below 16 us; the max exact.
 */
#ifndef LOCKLAB_LATENCY_TIMELINE_H
#define LOCKLAB_LATENCY_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

struct interval_log;
struct history_event;

struct latency_second {
    uint64_t count;
    double p50_ms, p99_ms, max_ms; /* 0 when count is 0 */
};

/* out[0..len) for the seconds from the start line, from the n threads'
 * logs. 0, or -1 out of memory (or a log out of order). */
int latency_timeline(const struct interval_log *logs, size_t n, struct latency_second *out,
                     size_t len);

/* 16 exact values, then 8 per power of two up to 2^36 us (19 hours); a
 * longer wait counts in the last. */
#define BEGUN_BUCKETS (16 + 32 * 8)

/* The bucket of v microseconds, and the highest value it holds. */
size_t begun_bucket(uint64_t us);
uint64_t begun_bucket_top(size_t bucket);

struct begun_timeline;
/* For a run that started at t0_ns and lasted `seconds` seconds (the last
 * may be partial), with client numbers below `clients`. NULL: out of
 * memory. */
struct begun_timeline *begun_new(uint64_t t0_ns, size_t seconds, uint32_t clients);
void begun_free(struct begun_timeline *b); /* accepts NULL */
/* One event of the history, in time order: an acquire's invoke notes when
 * it began (due_ns when set), its ok adds the latency to that second. An
 * acquire that began before t0 counts in second 0, after the last second
 * in the last. Anything else is ignored. */
void begun_event(struct begun_timeline *b, const struct history_event *e);
/* A latency of us microseconds for an acquire that began at begin_ns. */
void begun_add(struct begun_timeline *b, uint64_t begin_ns, uint64_t us);
/* out[0..len) (len at most the seconds given to begun_new; more are
 * zeroed): count, p50, p99 (nearest rank, the bucket's top capped at the
 * max) and the max, in milliseconds. */
void begun_finish(const struct begun_timeline *b, struct latency_second *out, size_t len);

#endif
