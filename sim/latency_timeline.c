/* latency_timeline.c - per-second acquire latency, exact, from the history. */
#include "latency_timeline.h"

#include <stdlib.h>
#include <string.h>

struct sample {
    uint64_t second;
    uint64_t ns;
};

static int by_second_then_ns(const void *a, const void *b)
{
    const struct sample *x = a, *y = b;
    if (x->second != y->second)
        return x->second < y->second ? -1 : 1;
    return x->ns < y->ns ? -1 : x->ns > y->ns;
}

/* The latencies of successful acquires, each in the second of its grant. */
static struct sample *collect(const struct history *h, size_t *n)
{
    uint64_t *asked = calloc(h->clients ? h->clients : 1, sizeof(*asked));
    struct sample *s = malloc((h->n ? h->n : 1) * sizeof(*s));
    if (asked == NULL || s == NULL) {
        free(asked);
        free(s);
        return NULL;
    }
    *n = 0;
    for (size_t k = 0; k < h->n; k++) {
        const struct history_event *e = &h->ev[k];
        if (e->f != HF_ACQUIRE || e->client >= h->clients || e->t_ns < h->start_mono_ns)
            continue;
        if (e->type == HT_INVOKE) /* open loop: from when its step was due */
            asked[e->client] = e->due_ns && e->due_ns <= e->t_ns ? e->due_ns : e->t_ns;
        else if (e->type == HT_OK && asked[e->client] && e->t_ns >= asked[e->client])
            s[(*n)++] = (struct sample){(e->t_ns - h->start_mono_ns) / 1000000000u,
                                        e->t_ns - asked[e->client]};
    }
    free(asked);
    return s;
}

static double ms(uint64_t ns)
{
    return (double)ns / 1e6;
}

int latency_timeline(const struct history *h, struct latency_second *out, size_t len)
{
    size_t n;
    struct sample *s = collect(h, &n);
    if (s == NULL)
        return -1;
    memset(out, 0, len * sizeof(*out));
    qsort(s, n, sizeof(*s), by_second_then_ns);
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
