/* nemesis.c - claims of client faults on the timeline. */
#include "nemesis.h"

#include <stdatomic.h>
#include <stdlib.h>

struct nemesis {
    struct fault_record rec[SCENARIO_MAX_FAULTS];
    uint64_t due_ns[SCENARIO_MAX_FAULTS];
    size_t n;
    _Atomic uint64_t pending; /* bit i: fault i not yet claimed */
};

struct nemesis *nemesis_new(const struct scenario *s)
{
    struct nemesis *n = calloc(1, sizeof(*n));
    if (n == NULL)
        return NULL;
    n->n = s->n_faults;
    for (size_t i = 0; i < n->n; i++)
        n->rec[i].spec = s->faults[i];
    atomic_init(&n->pending, 0);
    return n;
}

void nemesis_free(struct nemesis *n)
{
    free(n);
}

void nemesis_start(struct nemesis *n, uint64_t t0_ns)
{
    uint64_t all = 0;
    for (size_t i = 0; i < n->n; i++) {
        n->due_ns[i] = t0_ns + n->rec[i].spec.at_ms * 1000000u;
        all |= 1ULL << i;
    }
    atomic_store(&n->pending, all);
}

int nemesis_claim(struct nemesis *n, uint32_t client, uint64_t now_ns)
{
    uint64_t p = atomic_load_explicit(&n->pending, memory_order_relaxed);
    while (p) {
        int i = __builtin_ctzll(p);
        p &= p - 1;
        const struct fault_spec *f = &n->rec[i].spec;
        if (now_ns < n->due_ns[i])
            continue;
        if (f->target != FAULT_TARGET_HOLDER && (uint32_t)f->target != client)
            continue;
        uint64_t bit = 1ULL << i;
        if (atomic_fetch_and(&n->pending, ~bit) & bit)
            return i;
    }
    return -1;
}

void nemesis_unclaim(struct nemesis *n, int idx)
{
    atomic_fetch_or(&n->pending, 1ULL << idx);
}

const struct fault_spec *nemesis_spec(const struct nemesis *n, int idx)
{
    return &n->rec[idx].spec;
}

void nemesis_fired(struct nemesis *n, int idx, uint32_t client, uint32_t key, uint64_t start_ns)
{
    struct fault_record *r = &n->rec[idx];
    r->fired = true;
    r->client = client;
    r->key = key;
    r->start_ns = start_ns;
}

void nemesis_ended(struct nemesis *n, int idx, uint64_t end_ns)
{
    n->rec[idx].ended = true;
    n->rec[idx].end_ns = end_ns;
}

size_t nemesis_report(const struct nemesis *n, struct fault_record *out, size_t max)
{
    size_t k = n->n < max ? n->n : max;
    for (size_t i = 0; i < k; i++)
        out[i] = n->rec[i];
    return k;
}
