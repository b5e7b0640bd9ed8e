/* live.c - the live progress line's latency window and the run's totals
 * (see live.h). */
#include "sim/engine/live.h"

#include <math.h>
#include <stdio.h>

#include "sim/record/log_bucket.h"

/* Prometheus's default bounds (0.005 s to 10 s) and three below them: a
 * lock on loopback answers in well under a millisecond. */
const uint64_t live_le_us[LIVE_LE_COUNT] = {500,     1000,    2500,    5000,    10000,
                                            25000,   50000,   100000,  250000,  500000,
                                            1000000, 2500000, 5000000, 10000000};

/* Single writer: a plain load and store, no locked instruction. */
static inline void bump(atomic_uint_least64_t *c, uint64_t by)
{
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + by,
                          memory_order_relaxed);
}

/* 4 per power of two (see live.h); a longer wait counts in the last. */
static unsigned bucket_of(uint64_t us)
{
    size_t idx = log_bucket(us, 2);
    return idx < LIVE_BUCKETS ? (unsigned)idx : LIVE_BUCKETS - 1;
}

static uint64_t upper_edge(unsigned idx)
{
    return log_bucket_top(idx, 2);
}

void live_record(struct live_window *w, uint64_t second, uint64_t us)
{
    unsigned slot = (unsigned)(second & 1u);
    if (atomic_load_explicit(&w->second[slot], memory_order_relaxed) != second + 1) {
        /* A new second for this slot: forget the one it counted before.
         * The tag is second + 1 so that a zeroed window counts no second. */
        for (unsigned i = 0; i < LIVE_BUCKETS; i++)
            atomic_store_explicit(&w->count[slot][i], 0, memory_order_relaxed);
        atomic_store_explicit(&w->second[slot], second + 1, memory_order_release);
    }
    atomic_uint_least32_t *c = &w->count[slot][bucket_of(us)];
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1,
                          memory_order_relaxed);
    unsigned le = 0; /* most acquires end under the first bound or two */
    while (le < LIVE_LE_COUNT && us > live_le_us[le])
        le++;
    bump(&w->le[le], 1);
    bump(&w->sum_us, us);
}

void live_totals(struct live_window *w, uint64_t le[LIVE_LE_COUNT + 1], uint64_t *sum_us)
{
    for (unsigned i = 0; i <= LIVE_LE_COUNT; i++)
        le[i] += atomic_load_explicit(&w->le[i], memory_order_relaxed);
    *sum_us += atomic_load_explicit(&w->sum_us, memory_order_relaxed);
}

void live_collect(struct live_window *w, uint64_t second, uint64_t sum[LIVE_BUCKETS])
{
    unsigned slot = (unsigned)(second & 1u);
    if (atomic_load_explicit(&w->second[slot], memory_order_acquire) != second + 1)
        return;
    for (unsigned i = 0; i < LIVE_BUCKETS; i++)
        sum[i] += atomic_load_explicit(&w->count[slot][i], memory_order_relaxed);
}

uint64_t live_percentile(const uint64_t sum[LIVE_BUCKETS], double p)
{
    uint64_t total = 0;
    for (unsigned i = 0; i < LIVE_BUCKETS; i++)
        total += sum[i];
    if (total == 0)
        return 0;
    uint64_t rank = (uint64_t)ceil(p / 100.0 * (double)total);
    if (rank < 1)
        rank = 1;
    uint64_t seen = 0;
    for (unsigned i = 0; i < LIVE_BUCKETS; i++) {
        seen += sum[i];
        if (seen >= rank)
            return upper_edge(i);
    }
    return upper_edge(LIVE_BUCKETS - 1);
}

const char *live_ms_text(uint64_t us, char *buf, size_t len)
{
    uint64_t unit = 1; /* the place of the second significant digit, in us */
    while (us / unit >= 100)
        unit *= 10;
    uint64_t r = (us + unit / 2) / unit * unit;
    if (r / unit >= 100) /* 995 rounds to 1000: one digit more, one place less */
        unit *= 10;
    int decimals = 3;
    for (uint64_t u = unit; u > 1 && decimals > 0; u /= 10)
        decimals--;
    snprintf(buf, len, "%.*f", decimals, (double)r / 1000.0);
    return buf;
}
