/* histogram.c - HDR-style log-linear histogram (HdrHistogram's layout). */
#include "sim/record/histogram.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Bits needed to hold v (v > 0); clz is what keeps the record path free of
 * loops and divisions. */
static int32_t bit_length(uint64_t v)
{
    return 64 - __builtin_clzll(v);
}

static int32_t ceil_log2(int64_t v)
{
    return v <= 1 ? 0 : bit_length((uint64_t)(v - 1));
}

static int32_t buckets_needed(int64_t highest, int32_t sub_bucket_count, int32_t unit_magnitude)
{
    int64_t smallest_untrackable = (int64_t)sub_bucket_count << unit_magnitude;
    int32_t buckets = 1;

    while (smallest_untrackable <= highest) {
        /* One more doubling would overflow; one more bucket reaches INT64_MAX. */
        if (smallest_untrackable > INT64_MAX / 2)
            return buckets + 1;
        smallest_untrackable <<= 1;
        buckets++;
    }
    return buckets;
}

static bool layout_init(struct histogram *h, int64_t lowest, int64_t highest, int sig_digits)
{
    int64_t single_unit_range = 2;

    for (int i = 0; i < sig_digits; i++)
        single_unit_range *= 10;
    h->lowest = lowest;
    h->highest = highest;
    h->sig_digits = sig_digits;
    h->unit_magnitude = bit_length((uint64_t)lowest) - 1;
    h->sub_bucket_half_count_magnitude = ceil_log2(single_unit_range) - 1;
    /* sub_bucket_count << unit_magnitude must stay below 2^63 (HdrHistogram's limit). */
    if (h->unit_magnitude + h->sub_bucket_half_count_magnitude > 61)
        return false;
    h->sub_bucket_count = 1 << (h->sub_bucket_half_count_magnitude + 1);
    h->sub_bucket_half_count = h->sub_bucket_count / 2;
    h->sub_bucket_mask = (int64_t)(h->sub_bucket_count - 1) << h->unit_magnitude;
    h->bucket_count = buckets_needed(highest, h->sub_bucket_count, h->unit_magnitude);
    h->counts_len = (h->bucket_count + 1) * h->sub_bucket_half_count;
    return true;
}

static void stats_clear(struct histogram *h)
{
    h->total_count = 0;
    h->min = INT64_MAX;
    h->max = 0;
    h->saturated = 0;
    h->sum = 0.0;
    h->sum_sq = 0.0;
}

struct histogram *histogram_new(int64_t lowest, int64_t highest, int sig_digits)
{
    struct histogram *h;

    if (lowest < 1 || sig_digits < 1 || sig_digits > 5 || highest / 2 < lowest)
        return NULL;
    h = calloc(1, sizeof(*h));
    if (h == NULL)
        return NULL;
    if (!layout_init(h, lowest, highest, sig_digits))
        goto fail;
    /* calloc, not malloc+memset: the upper buckets are rarely touched, so
     * their pages are never faulted in. */
    h->counts = calloc((size_t)h->counts_len, sizeof(*h->counts));
    if (h->counts == NULL)
        goto fail;
    stats_clear(h);
    return h;
fail:
    free(h);
    return NULL;
}

void histogram_free(struct histogram *h)
{
    if (h == NULL)
        return;
    free(h->counts);
    free(h);
}

void histogram_reset(struct histogram *h)
{
    memset(h->counts, 0, (size_t)h->counts_len * sizeof(*h->counts));
    stats_clear(h);
}

/* Bucket of a non-negative value: OR-ing in the mask makes everything
 * below the first bucket's top land in bucket 0. */
static int32_t bucket_of(const struct histogram *h, int64_t value)
{
    return bit_length((uint64_t)(value | h->sub_bucket_mask)) - h->unit_magnitude -
           (h->sub_bucket_half_count_magnitude + 1);
}

static int32_t sub_bucket_of(const struct histogram *h, int64_t value, int32_t bucket)
{
    return (int32_t)(value >> (bucket + h->unit_magnitude));
}

int32_t histogram_index(const struct histogram *h, int64_t value)
{
    int32_t bucket, sub;

    if (value < 0)
        value = 0;
    else if (value > h->highest)
        value = h->highest;
    bucket = bucket_of(h, value);
    sub = sub_bucket_of(h, value, bucket);
    /* Bucket 0 uses all its sub-buckets, later ones only their upper half
     * (the lower half would repeat the previous bucket at coarser width). */
    return ((bucket + 1) << h->sub_bucket_half_count_magnitude) + (sub - h->sub_bucket_half_count);
}

int64_t histogram_value_at_index(const struct histogram *h, int32_t index)
{
    int32_t bucket = (index >> h->sub_bucket_half_count_magnitude) - 1;
    int32_t sub = (index & (h->sub_bucket_half_count - 1)) + h->sub_bucket_half_count;

    if (bucket < 0) {
        sub -= h->sub_bucket_half_count;
        bucket = 0;
    }
    return (int64_t)sub << (bucket + h->unit_magnitude);
}

int64_t histogram_bucket_width(const struct histogram *h, int64_t value)
{
    return (int64_t)1 << (h->unit_magnitude + bucket_of(h, value < 0 ? 0 : value));
}

int64_t histogram_lowest_equivalent(const struct histogram *h, int64_t value)
{
    int32_t bucket;

    if (value < 0)
        value = 0;
    bucket = bucket_of(h, value);
    return (int64_t)sub_bucket_of(h, value, bucket) << (bucket + h->unit_magnitude);
}

int64_t histogram_highest_equivalent(const struct histogram *h, int64_t value)
{
    /* width - 1 first: lowest + width overflows for the slot holding INT64_MAX. */
    return histogram_lowest_equivalent(h, value) + (histogram_bucket_width(h, value) - 1);
}

void histogram_record_n(struct histogram *h, int64_t value, int64_t count)
{
    double v;

    if (count <= 0)
        return;
    if (value < 0)
        value = 0;
    if (value > h->highest)
        h->saturated += count;
    h->counts[histogram_index(h, value)] += count;
    h->total_count += count;
    if (value < h->min)
        h->min = value;
    if (value > h->max)
        h->max = value;
    v = (double)value;
    h->sum += v * (double)count;
    h->sum_sq += v * v * (double)count;
}

void histogram_record(struct histogram *h, int64_t value)
{
    histogram_record_n(h, value, 1);
}

static bool same_layout(const struct histogram *a, const struct histogram *b)
{
    return a->lowest == b->lowest && a->highest == b->highest && a->sig_digits == b->sig_digits;
}

/* src added to dst (the same layout, src not empty): its counters from
 * min's slot to max's, as nothing lives outside them, then its count, sums
 * and extremes. Those slots in *lo..*hi, for a move to empty. */
static void add_into(struct histogram *dst, const struct histogram *src, int32_t *lo, int32_t *hi)
{
    *lo = histogram_index(src, src->min);
    *hi = histogram_index(src, src->max);
    for (int32_t i = *lo; i <= *hi; i++)
        dst->counts[i] += src->counts[i];
    dst->total_count += src->total_count;
    dst->saturated += src->saturated;
    dst->sum += src->sum;
    dst->sum_sq += src->sum_sq;
    if (src->min < dst->min)
        dst->min = src->min;
    if (src->max > dst->max)
        dst->max = src->max;
}

int histogram_merge(struct histogram *dst, const struct histogram *src)
{
    int32_t lo, hi;

    if (!same_layout(dst, src))
        return -1;
    if (src->total_count > 0)
        add_into(dst, src, &lo, &hi);
    return 0;
}

int histogram_move(struct histogram *dst, struct histogram *src)
{
    int32_t lo, hi;

    if (!same_layout(dst, src))
        return -1;
    if (src->total_count == 0)
        return 0;
    add_into(dst, src, &lo, &hi);
    memset(src->counts + lo, 0, (size_t)(hi - lo + 1) * sizeof(*src->counts));
    stats_clear(src);
    return 0;
}

/* ceil(p/100 * total), at least 1. Percentiles come in as decimals
 * (99.9) that binary doubles only approximate, a few ulps above or below;
 * the slack keeps an exact rank such as 9990 of 10000 from becoming 9991. */
static int64_t rank_of(double p, int64_t total)
{
    double x;
    int64_t rank;

    if (!(p > 0.0))
        return 1;
    x = p * (double)total / 100.0;
    rank = (int64_t)ceil(x - x * 8 * DBL_EPSILON);
    if (rank < 1)
        return 1;
    return rank < total ? rank : total;
}

int64_t histogram_percentile(const struct histogram *h, double p)
{
    int64_t rank, seen = 0, value;
    int32_t i;

    if (h->total_count == 0)
        return 0;
    if (p >= 100.0)
        return h->max;
    rank = rank_of(p, h->total_count);
    /* Nothing lives below min's slot, so the walk can start there. */
    for (i = histogram_index(h, h->min); i < h->counts_len - 1; i++) {
        seen += h->counts[i];
        if (seen >= rank)
            break;
    }
    value = histogram_highest_equivalent(h, histogram_value_at_index(h, i));
    return value < h->max ? value : h->max;
}

double histogram_mean(const struct histogram *h)
{
    return h->total_count ? h->sum / (double)h->total_count : 0.0;
}

double histogram_stddev(const struct histogram *h)
{
    double mean, var;

    if (h->total_count == 0)
        return 0.0;
    mean = histogram_mean(h);
    var = h->sum_sq / (double)h->total_count - mean * mean;
    /* Rounding can leave a tiny negative variance for a constant series. */
    return var > 0.0 ? sqrt(var) : 0.0;
}
