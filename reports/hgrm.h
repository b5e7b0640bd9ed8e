/* hgrm.h - HdrHistogram's percentile-distribution text format (.hgrm).
 *
 * The same text HdrHistogram's outputPercentileDistribution() prints, so the
 * files load in HdrHistogram's plotter and in any tool that reads them:
 * a header line, one line per percentile tick (Value, Percentile,
 * TotalCount, 1/(1-Percentile)), then the #[Mean ...], #[Max ...] and
 * #[Buckets ...] footer.
 */
#ifndef LOCKLAB_HGRM_H
#define LOCKLAB_HGRM_H

#include <stdint.h>
#include <stdio.h>

struct histogram;

/* HdrHistogram's percentile ticks of h, in order: fn gets the counter
 * index whose highest equivalent value is reported, the level (0..100)
 * and the count at or below it; the last call is at 100. Nothing when h is
 * empty. The .hgrm lines and the reports' percentile spectrum. */
typedef void (*hgrm_tick_fn)(void *arg, int32_t index, double level, int64_t cumulative);
void hgrm_ticks(const struct histogram *h, int ticks_per_half_distance, hgrm_tick_fn fn, void *arg);

/* Write h to f. Values are divided by value_scale (1000.0 turns locklab's
 * microseconds into milliseconds); ticks_per_half_distance is
 * HdrHistogram's reporting resolution (5 is its default).
 * Returns 0, or -1 when writing failed. */
int hgrm_write(FILE *f, const struct histogram *h, double value_scale, int ticks_per_half_distance);

#endif
