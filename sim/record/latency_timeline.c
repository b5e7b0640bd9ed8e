/* latency_timeline.c - per-second acquire latency, from the per-second
 * histograms (latency_timeline.h). */
#include "sim/record/latency_timeline.h"

#include <string.h>

#include "sim/record/histogram.h"
#include "sim/record/intervals.h"
#include "sim/record/measures.h"

struct timeline {
    struct latency_second *out;
    size_t len;
};

static double ms(int64_t us)
{
    return (double)us / 1e3;
}

static int one_second(void *arg, uint32_t second, const struct histogram *h)
{
    struct timeline *t = arg;
    if (second >= t->len || h->total_count == 0)
        return 0;
    t->out[second] = (struct latency_second){
        .count = (uint64_t)h->total_count,
        .p50_ms = ms(histogram_percentile(h, 50.0)),
        .p99_ms = ms(histogram_percentile(h, 99.0)),
        .max_ms = ms(h->max),
    };
    return 0;
}

int latency_timeline(const struct interval_log *logs, size_t n, struct latency_second *out,
                     size_t len)
{
    memset(out, 0, len * sizeof(*out));
    struct timeline t = {out, len};
    return intervals_each(logs, n, OP_ACQUIRE, (uint32_t)len, one_second, &t) == 0 ? 0 : -1;
}
