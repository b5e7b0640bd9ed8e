/* hgrm.c - HdrHistogram's percentile-distribution text (.hgrm).
 *
 * Tick placement follows HdrHistogram's percentile iterator: ticks are
 * spaced evenly within each "half distance" to 100% (0-50, 50-75, 75-87.5,
 * ...), so the tail gets as many lines as the body. A tick is reported at
 * the first non-empty slot whose cumulative percentile reaches it, with the
 * slot's highest equivalent value, and a last line at 100% closes the table.
 */
#include "reports/hgrm.h"

#include "sim/record/histogram.h"

#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>

struct hgrm_out {
    FILE *f;
    const struct histogram *h;
    double scale;
    bool failed;
};

static void put_tick(struct hgrm_out *o, int32_t index, double level, int64_t cumulative)
{
    const struct histogram *h = o->h;
    double value = (double)histogram_highest_equivalent(h, histogram_value_at_index(h, index));
    double fraction = level / 100.0;
    int rc;

    value /= o->scale;
    /* HdrHistogram drops the 1/(1-p) column where it would be infinite. */
    if (level == 100.0)
        rc = fprintf(o->f, "%12.*f %12.12f %10" PRId64 "\n", (int)h->sig_digits, value, fraction,
                     cumulative);
    else
        rc = fprintf(o->f, "%12.*f %12.12f %10" PRId64 " %14.2f\n", (int)h->sig_digits, value,
                     fraction, cumulative, 1.0 / (1.0 - fraction));
    if (rc < 0)
        o->failed = true;
}

/* Same expression as HdrHistogram (log ratio, not log2) so that every tick
 * level matches its own bit for bit. The printed percentile can still
 * differ in its 12th decimal where the level is a tie there (99.97802734375):
 * printf rounds the binary value, Java's Formatter its shortest decimal
 * half up (tests/runs/test_hlog.sh compares the two files and knows this). */
static double next_level(double level, int ticks_per_half_distance)
{
    int64_t halvings = (int64_t)(log(100.0 / (100.0 - level)) / log(2)) + 1;

    return level + 100.0 / ldexp((double)ticks_per_half_distance, (int)halvings);
}

void hgrm_ticks(const struct histogram *h, int ticks_per_half_distance, hgrm_tick_fn fn, void *arg)
{
    int64_t total = h->total_count, cumulative = 0;
    double level = 0.0;
    int32_t last = 0;

    if (total == 0)
        return;
    for (int32_t i = 0; i < h->counts_len && cumulative < total; i++) {
        if (h->counts[i] == 0)
            continue;
        cumulative += h->counts[i];
        last = i;
        while (level <= (100.0 * (double)cumulative) / (double)total) {
            fn(arg, i, level, cumulative);
            level = next_level(level, ticks_per_half_distance);
            /* Once everything is counted only the 100% line remains. */
            if (cumulative == total)
                break;
        }
    }
    fn(arg, last, 100.0, total);
}

static void put_tick_cb(void *arg, int32_t index, double level, int64_t cumulative)
{
    put_tick(arg, index, level, cumulative);
}

static void put_footer(struct hgrm_out *o)
{
    const struct histogram *h = o->h;
    int digits = h->sig_digits;

    /* Unlike HdrHistogram's, mean, deviation and max are exact: locklab
     * tracks them beside the buckets. */
    if (fprintf(o->f,
                "#[Mean    = %12.*f, StdDeviation   = %12.*f]\n"
                "#[Max     = %12.*f, Total count    = %12" PRId64 "]\n"
                "#[Buckets = %12d, SubBuckets     = %12d]\n",
                digits, histogram_mean(h) / o->scale, digits, histogram_stddev(h) / o->scale,
                digits, (double)h->max / o->scale, h->total_count, (int)h->bucket_count,
                (int)h->sub_bucket_count) < 0)
        o->failed = true;
}

int hgrm_write(FILE *f, const struct histogram *h, double value_scale, int ticks_per_half_distance)
{
    struct hgrm_out o = {.f = f, .h = h, .scale = value_scale, .failed = false};

    if (f == NULL || h == NULL || !(value_scale > 0.0) || ticks_per_half_distance < 1)
        return -1;
    if (fputs("       Value     Percentile TotalCount 1/(1-Percentile)\n\n", f) == EOF)
        o.failed = true;
    hgrm_ticks(h, ticks_per_half_distance, put_tick_cb, &o);
    put_footer(&o);
    /* Buffered writes fail only when flushed (a full disk shows up here). */
    if (fflush(f) != 0 || ferror(f))
        o.failed = true;
    return o.failed ? -1 : 0;
}
