/* latency_timeline.c - per-second acquire latency, by grant from the
 * per-second histograms, and by begin from the history
 * (latency_timeline.h). */
#include "sim/record/latency_timeline.h"

#include <stdlib.h>
#include <string.h>

#include "sim/record/histogram.h"
#include "sim/record/history.h"
#include "sim/record/intervals.h"
#include "sim/record/log_bucket.h"
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

/* --- by begin ------------------------------------------------------------ */

#define BEGUN_TOP ((UINT64_C(1) << 36) - 1)

struct begun_timeline {
    uint64_t t0_ns;
    size_t seconds;
    uint32_t (*counts)[BEGUN_BUCKETS]; /* per second */
    uint64_t *max_us;                  /* per second */
    uint32_t clients;
    uint64_t *begin_ns; /* per client: when its open acquire began */
};

size_t begun_bucket(uint64_t us)
{
    return log_bucket(us < BEGUN_TOP ? us : BEGUN_TOP, 3);
}

uint64_t begun_bucket_top(size_t bucket)
{
    return log_bucket_top(bucket, 3);
}

struct begun_timeline *begun_new(uint64_t t0_ns, size_t seconds, uint32_t clients)
{
    struct begun_timeline *b = calloc(1, sizeof(*b));
    if (b == NULL)
        return NULL;
    b->t0_ns = t0_ns;
    b->seconds = seconds ? seconds : 1;
    b->clients = clients;
    b->counts = calloc(b->seconds, sizeof(*b->counts));
    b->max_us = calloc(b->seconds, sizeof(*b->max_us));
    b->begin_ns = calloc(clients ? clients : 1, sizeof(*b->begin_ns));
    if (b->counts == NULL || b->max_us == NULL || b->begin_ns == NULL) {
        begun_free(b);
        return NULL;
    }
    return b;
}

void begun_free(struct begun_timeline *b)
{
    if (b == NULL)
        return;
    free(b->counts);
    free(b->max_us);
    free(b->begin_ns);
    free(b);
}

void begun_add(struct begun_timeline *b, uint64_t begin_ns, uint64_t us)
{
    uint64_t s = begin_ns > b->t0_ns ? (begin_ns - b->t0_ns) / 1000000000u : 0;
    if (s >= b->seconds)
        s = b->seconds - 1;
    uint32_t *c = &b->counts[s][begun_bucket(us)];
    if (*c < UINT32_MAX)
        (*c)++;
    if (us > b->max_us[s])
        b->max_us[s] = us;
}

void begun_event(struct begun_timeline *b, const struct history_event *e)
{
    if (e->f != HF_ACQUIRE || e->client >= b->clients)
        return;
    if (e->type == HT_INVOKE) {
        b->begin_ns[e->client] = e->due_ns ? e->due_ns : e->t_ns;
        return;
    }
    uint64_t from = b->begin_ns[e->client];
    b->begin_ns[e->client] = 0;
    /* as the run's histograms count it: the grant less its start, in us */
    if (e->type == HT_OK && from != 0 && e->t_ns >= from)
        begun_add(b, from, (e->t_ns - from) / 1000u);
}

/* The bucket top of the sample of rank `rank` (1-based), capped at max. */
static double rank_ms(const uint32_t *c, uint64_t rank, uint64_t max_us)
{
    uint64_t seen = 0;
    for (size_t k = 0; k < BEGUN_BUCKETS; k++) {
        seen += c[k];
        if (seen >= rank) {
            uint64_t top = begun_bucket_top(k);
            return (double)(top < max_us ? top : max_us) / 1e3;
        }
    }
    return (double)max_us / 1e3;
}

static uint64_t nearest_rank(uint64_t n, double p)
{
    uint64_t r = (uint64_t)((double)n * p / 100.0);
    if ((double)r < (double)n * p / 100.0)
        r++;
    return r ? r : 1;
}

void begun_finish(const struct begun_timeline *b, struct latency_second *out, size_t len)
{
    memset(out, 0, len * sizeof(*out));
    for (size_t s = 0; s < len && s < b->seconds; s++) {
        uint64_t n = 0;
        for (size_t k = 0; k < BEGUN_BUCKETS; k++)
            n += b->counts[s][k];
        if (n == 0)
            continue;
        out[s] = (struct latency_second){
            .count = n,
            .p50_ms = rank_ms(b->counts[s], nearest_rank(n, 50.0), b->max_us[s]),
            .p99_ms = rank_ms(b->counts[s], nearest_rank(n, 99.0), b->max_us[s]),
            .max_ms = (double)b->max_us[s] / 1e3,
        };
    }
}
