/* live.h - the acquire latency while a run goes: the last second's, for the
 * live progress line, and the run's so far, for the metrics endpoint.
 *
 * The per-thread HDR histograms may only be read once their thread is
 * joined, so the live p99 comes from this coarser copy instead: each client
 * owns one window and writes it with relaxed atomic stores, the watcher
 * reads every window once a second. Two slots alternate between even and
 * odd seconds, each tagged with the second it counts. Buckets are powers of
 * two split in four, so a value is known to within 25%: good enough for a
 * number on a terminal, never used in a report.
 */
#ifndef LOCKLAB_LIVE_H
#define LOCKLAB_LIVE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define LIVE_BUCKETS 128 /* 4 per power of two: 1 us to about 2^33 us */

/* The run so far, for the metrics endpoint (--metrics): granted acquires
 * counted by fixed upper bounds in whole microseconds (live_le_us[], as
 * the report's histograms count them), the last count past the largest,
 * and their sum. Never forgotten, so a reader that comes late misses
 * nothing: the endpoint's figures end equal to report.json's. */
#define LIVE_LE_COUNT 14
extern const uint64_t live_le_us[LIVE_LE_COUNT];

struct live_window {
    atomic_uint_least64_t second[2];
    atomic_uint_least32_t count[2][LIVE_BUCKETS];
    atomic_uint_least64_t le[LIVE_LE_COUNT + 1];
    atomic_uint_least64_t sum_us;
};

/* The owner records a latency of us microseconds in second `second`, and
 * in the run's totals. */
void live_record(struct live_window *w, uint64_t second, uint64_t us);
/* Add w's counts for `second` into sum (nothing if w holds another second). */
void live_collect(struct live_window *w, uint64_t second, uint64_t sum[LIVE_BUCKETS]);
/* The upper edge, in microseconds, of the bucket holding percentile p of
 * sum; 0 when sum is empty. */
uint64_t live_percentile(const uint64_t sum[LIVE_BUCKETS], double p);
/* us in milliseconds with the two significant digits a bucket's edge
 * holds (it is known to within 25%): 48 -> "0.048", 1279 -> "1.3",
 * 9960 -> "10", 327679 -> "330". */
const char *live_ms_text(uint64_t us, char *buf, size_t len);
/* Add w's totals so far into le (per bound, not cumulative) and sum_us;
 * from any thread. */
void live_totals(struct live_window *w, uint64_t le[LIVE_LE_COUNT + 1], uint64_t *sum_us);

#endif
