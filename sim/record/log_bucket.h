/* log_bucket.h - log-linear buckets, the one rule of the coarse latency
 * counters: 2^k exact values (0 .. 2^k - 1), then 2^k buckets per power of
 * two, so a value is known to within 1/2^k. The live window uses k = 2
 * (live.c), the begun timeline k = 3 (latency_timeline.c); each clamps to
 * its own array. Inline, with k a constant at the call: the live window's
 * is on the clients' hot path. */
#ifndef LOCKLAB_LOG_BUCKET_H
#define LOCKLAB_LOG_BUCKET_H

#include <stddef.h>
#include <stdint.h>

/* The bucket of v. */
static inline size_t log_bucket(uint64_t v, unsigned k)
{
    if (v < (UINT64_C(1) << k))
        return (size_t)v;
    unsigned e = 63u - (unsigned)__builtin_clzll(v); /* floor(log2(v)) >= k */
    return ((size_t)(e - k) << k) + (size_t)(v >> (e - k));
}

/* The highest value bucket b holds. */
static inline uint64_t log_bucket_top(size_t b, unsigned k)
{
    size_t s = (size_t)1 << k;
    if (b < s)
        return b;
    return ((uint64_t)(b % s + s + 1) << (b / s - 1)) - 1;
}

#endif
