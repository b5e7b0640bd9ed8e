/* stuck.c - per key, the stretches with waiters and no holder.
 *
 * Every wait (an acquire's invoke to its completion) and every section
 * (grant to release or crash) becomes two steps on its key's count of
 * waiters or holders; sorted by key and time, one sweep finds the
 * stretches. A section still open at the end holds to the end.
 */
#include "sim/check/stuck.h"

#include <stdbool.h>
#include <stdlib.h>

struct step {
    uint32_t key;
    int8_t waiters, holders; /* +1 / -1 */
    uint64_t t_ns;
};

static int by_key_time(const void *a, const void *b)
{
    const struct step *x = a, *y = b;
    if (x->key != y->key)
        return (x->key > y->key) - (x->key < y->key);
    if (x->t_ns != y->t_ns)
        return (x->t_ns > y->t_ns) - (x->t_ns < y->t_ns);
    /* a grant and its wait's end at one instant: the holder first, so no
     * stretch of zero length opens between them */
    return (y->holders > x->holders) - (y->holders < x->holders);
}

/* The waits: each acquire's invoke paired with its process's next
 * completion. Returns the number of steps written, or -1. */
static long wait_steps(const struct history *h, struct step *st)
{
    uint32_t procs = 0;
    for (size_t k = 0; k < h->n; k++)
        if (h->ev[k].f == HF_ACQUIRE && h->ev[k].client >= procs)
            procs = h->ev[k].client + 1;
    uint64_t *since = calloc(procs ? procs : 1, sizeof(*since));
    if (since == NULL)
        return -1;
    long n = 0;
    for (size_t k = 0; k < h->n; k++) {
        const struct history_event *e = &h->ev[k];
        if (e->f != HF_ACQUIRE)
            continue;
        if (e->type == HT_INVOKE) {
            since[e->client] = e->t_ns + 1; /* 0: none pending */
            continue;
        }
        if (since[e->client] == 0)
            continue; /* a history cut before its invoke */
        st[n++] = (struct step){.key = e->key, .waiters = 1, .t_ns = since[e->client] - 1};
        st[n++] = (struct step){.key = e->key, .waiters = -1, .t_ns = e->t_ns};
        since[e->client] = 0;
    }
    /* a wait still open at the end of the history lasts to its end */
    for (size_t k = 0; k < h->n; k++) {
        const struct history_event *e = &h->ev[k];
        if (e->f == HF_ACQUIRE && e->type == HT_INVOKE && since[e->client] == e->t_ns + 1) {
            st[n++] = (struct step){.key = e->key, .waiters = 1, .t_ns = e->t_ns};
            st[n++] = (struct step){.key = e->key, .waiters = -1, .t_ns = h->end_mono_ns};
            since[e->client] = 0;
        }
    }
    free(since);
    return n;
}

static void close_stretch(struct stuck_key *k, uint64_t from, uint64_t to)
{
    if (to <= from)
        return;
    uint64_t len = to - from;
    k->total_ns += len;
    k->stretches++;
    if (len > k->longest_ns) {
        k->longest_ns = len;
        k->longest_from_ns = from;
    }
}

static int by_longest(const void *a, const void *b)
{
    const struct stuck_key *x = a, *y = b;
    if (x->longest_ns != y->longest_ns)
        return (x->longest_ns < y->longest_ns) - (x->longest_ns > y->longest_ns);
    return (x->key > y->key) - (x->key < y->key);
}

/* One sweep over the sorted steps; keys with stuck time go to out. */
static size_t sweep(const struct step *st, size_t n, struct stuck_key *out)
{
    size_t n_out = 0;
    for (size_t i = 0; i < n;) {
        struct stuck_key k = {.key = st[i].key};
        long waiters = 0, holders = 0;
        uint64_t from = 0;
        for (; i < n && st[i].key == k.key; i++) {
            bool was = waiters > 0 && holders == 0;
            waiters += st[i].waiters;
            holders += st[i].holders;
            bool is = waiters > 0 && holders == 0;
            if (is && !was)
                from = st[i].t_ns;
            else if (was && !is)
                close_stretch(&k, from, st[i].t_ns);
        }
        if (k.stretches)
            out[n_out++] = k;
    }
    return n_out;
}

int stuck_compute(const struct history *h, const struct section *sections, size_t n_sections,
                  struct stuck_key **out, size_t *n_out)
{
    *out = NULL;
    *n_out = 0;
    size_t cap = 2 * (h->n + n_sections) + 1;
    struct step *st = malloc(cap * sizeof(*st));
    if (st == NULL)
        return -1;
    long nw = wait_steps(h, st);
    if (nw < 0) {
        free(st);
        return -1;
    }
    size_t n = (size_t)nw;
    for (size_t i = 0; i < n_sections; i++) {
        const struct section *s = &sections[i];
        uint64_t to = s->effect == EFFECT_OPEN ? h->end_mono_ns : s->to_ns;
        st[n++] = (struct step){.key = s->key, .holders = 1, .t_ns = s->from_ns};
        st[n++] = (struct step){.key = s->key, .holders = -1, .t_ns = to};
    }
    qsort(st, n, sizeof(*st), by_key_time);
    struct stuck_key *keys = malloc((n / 2 + 1) * sizeof(*keys));
    if (keys == NULL) {
        free(st);
        return -1;
    }
    *n_out = sweep(st, n, keys);
    free(st);
    qsort(keys, *n_out, sizeof(*keys), by_longest);
    *out = keys;
    return 0;
}
