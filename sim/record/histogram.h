/* histogram.h - HDR-style log-linear latency histogram.
 *
 * The layout is HdrHistogram's: values are integers (locklab records
 * microseconds), bucket b holds sub_bucket_count counters of width 2^b
 * times the unit, so every value is kept to `sig_digits` significant decimal
 * digits. Two histograms with the same (lowest, highest, sig_digits) have
 * the same layout and merge exactly by adding counters.
 *
 * One histogram per thread and operation; nothing here is thread-safe.
 * Recording does no allocation and no division.
 */
#ifndef LOCKLAB_HISTOGRAM_H
#define LOCKLAB_HISTOGRAM_H

#include <stdbool.h>
#include <stdint.h>

struct histogram {
    int64_t lowest;  /* lowest discernible value, >= 1 */
    int64_t highest; /* highest trackable value; larger values land in the top bucket */
    int32_t sig_digits;
    int32_t unit_magnitude;
    int32_t sub_bucket_half_count_magnitude;
    int32_t sub_bucket_count;
    int32_t sub_bucket_half_count;
    int64_t sub_bucket_mask;
    int32_t bucket_count;
    int32_t counts_len;
    int64_t total_count;
    int64_t min;       /* exact smallest recorded value (INT64_MAX when empty) */
    int64_t max;       /* exact largest recorded value, even above `highest` (0 when empty) */
    int64_t saturated; /* how many values were above `highest` */
    double sum;        /* of recorded values, for the mean */
    double sum_sq;     /* for the standard deviation */
    int64_t *counts;
};

/* locklab's layout: 1 us to one hour, 3 significant digits. */
#define HIST_LOWEST_US  1
#define HIST_HIGHEST_US 3600000000LL
#define HIST_SIG_DIGITS 3

/* New zeroed histogram, or NULL (bad arguments or out of memory).
 * lowest >= 1, highest >= 2 * lowest, 1 <= sig_digits <= 5. */
struct histogram *histogram_new(int64_t lowest, int64_t highest, int sig_digits);
void histogram_free(struct histogram *h); /* accepts NULL */
void histogram_reset(struct histogram *h);

/* Record one value (negative values count as 0). */
void histogram_record(struct histogram *h, int64_t value);
/* Record a value `count` times. */
void histogram_record_n(struct histogram *h, int64_t value, int64_t count);
/* dst += src, touching only src's counters from its min's to its max's. Returns
 * 0, or -1 (nothing changed) when the layouts differ. */
int histogram_merge(struct histogram *dst, const struct histogram *src);
/* dst += src, and src emptied, touching only src's counters from its min's
 * to its max's (a second's histogram seldom spans more than a few hundred
 * of the 23,552): what sealing one second of a run costs. Returns 0, or -1
 * (nothing changed) when the layouts differ. */
int histogram_move(struct histogram *dst, struct histogram *src);

/* The value at percentile p (0..100): the highest value equivalent to the
 * recorded value of rank ceil(p/100 * total) (rank 1 for p = 0), as
 * HdrHistogram reports it; p = 100 and anything at or above the top gives
 * the exact max. 0 when empty. */
int64_t histogram_percentile(const struct histogram *h, double p);
double histogram_mean(const struct histogram *h);
double histogram_stddev(const struct histogram *h);

/* Bucket arithmetic, exposed for tests and the .hgrm writer. */
int32_t histogram_index(const struct histogram *h, int64_t value);
int64_t histogram_value_at_index(const struct histogram *h, int32_t index);
int64_t histogram_lowest_equivalent(const struct histogram *h, int64_t value);
int64_t histogram_highest_equivalent(const struct histogram *h, int64_t value);
int64_t histogram_bucket_width(const struct histogram *h, int64_t value);

#endif
