/* latency_timeline.c - per-second acquire latency, exact, from the history. */
#include "sim/record/latency_timeline.h"

#include <stdlib.h>
#include <string.h>

#include "sim/engine/client.h"
#include "sim/record/intervals.h"

static double ms(uint64_t ns)
{
    return (double)ns / 1e6;
}

int latency_timeline(const struct history *h, struct latency_second *out, size_t len)
{
    struct interval_sample *s;
    size_t n;
    if (intervals_of_history(h, OP_ACQUIRE, &s, &n) < 0)
        return -1;
    memset(out, 0, len * sizeof(*out));
    /* sorted by second, then latency */
    for (size_t lo = 0, hi; lo < n; lo = hi) {
        for (hi = lo + 1; hi < n && s[hi].second == s[lo].second; hi++)
            ;
        if (s[lo].second >= len)
            break;
        size_t c = hi - lo;
        /* nearest rank: the smallest value with at least p% at or below it */
        out[s[lo].second] = (struct latency_second){
            .count = c,
            .p50_ms = ms(s[lo + (c * 50 + 99) / 100 - 1].ns),
            .p99_ms = ms(s[lo + (c * 99 + 99) / 100 - 1].ns),
            .max_ms = ms(s[hi - 1].ns),
        };
    }
    free(s);
    return 0;
}
