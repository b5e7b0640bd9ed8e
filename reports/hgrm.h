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

#include <stdio.h>

struct histogram;

/* Write h to f. Values are divided by value_scale (1000.0 turns locklab's
 * microseconds into milliseconds); ticks_per_half_distance is
 * HdrHistogram's reporting resolution (5 is its default).
 * Returns 0, or -1 when writing failed. */
int hgrm_write(FILE *f, const struct histogram *h, double value_scale, int ticks_per_half_distance);

#endif
