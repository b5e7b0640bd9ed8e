/* intervals.c - per-second samples of each operation, from the history. */
#include "sim/record/intervals.h"

#include <stdlib.h>
#include <string.h>

#include "sim/check/result.h"
#include "sim/engine/client.h"

#define NS_PER_S 1000000000ULL

struct collector {
    const struct history *h;
    struct interval_sample *s;
    size_t n, cap;
    int failed;
};

static void add(struct collector *c, uint64_t end_ns, uint64_t ns)
{
    if (c->failed || end_ns < c->h->start_mono_ns)
        return;
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 4096;
        struct interval_sample *p = realloc(c->s, cap * sizeof(*p));
        if (p == NULL) {
            c->failed = 1;
            return;
        }
        c->s = p;
        c->cap = cap;
    }
    c->s[c->n++] = (struct interval_sample){
        .ns = ns, .second = (uint32_t)((end_ns - c->h->start_mono_ns) / NS_PER_S)};
}

/* An acquire's latency counts from its invoke, or in open loop from when
 * its step was due (client.c records it so); a release's from its invoke. */
static void from_history(struct collector *c, int op)
{
    const struct history *h = c->h;
    uint64_t *began = calloc(h->clients ? h->clients : 1, sizeof(*began));
    if (began == NULL) {
        c->failed = 1;
        return;
    }
    int f = op == OP_RELEASE ? HF_RELEASE : HF_ACQUIRE;
    for (size_t k = 0; k < h->n; k++) {
        const struct history_event *e = &h->ev[k];
        if (e->f != f || e->client >= h->clients)
            continue;
        if (e->type == HT_INVOKE) {
            bool due = f == HF_ACQUIRE && e->due_ns && e->due_ns <= e->t_ns;
            began[e->client] = due ? e->due_ns : e->t_ns;
            continue;
        }
        if (began[e->client] == 0 || e->t_ns < began[e->client])
            continue;
        bool ok = e->type == HT_OK;
        if (op == OP_RELEASE || (op == OP_ACQUIRE) == ok)
            add(c, e->t_ns, e->t_ns - began[e->client]);
        began[e->client] = 0;
    }
    free(began);
}

/* A hold is a critical section that ended: grant to release (or crash). */
static void from_sections(struct collector *c, const struct run_result *r)
{
    for (size_t i = 0; i < r->n_sections; i++) {
        const struct section *x = &r->sections[i];
        if (x->effect != EFFECT_OPEN)
            add(c, x->to_ns, x->to_ns - x->from_ns);
    }
}

static int by_second(const void *a, const void *b)
{
    const struct interval_sample *x = a, *y = b;
    if (x->second != y->second)
        return x->second < y->second ? -1 : 1;
    return x->ns < y->ns ? -1 : x->ns > y->ns;
}

/* Sorted by second, the collector's samples handed over. */
static int hand_over(struct collector *c, struct interval_sample **out, size_t *n)
{
    if (c->failed) {
        free(c->s);
        return -1;
    }
    if (c->n > 1) /* qsort wants a non-null base even for nothing */
        qsort(c->s, c->n, sizeof(*c->s), by_second);
    *out = c->s;
    *n = c->n;
    return 0;
}

int intervals_of_history(const struct history *h, int op, struct interval_sample **out, size_t *n)
{
    struct collector c = {.h = h};
    from_history(&c, op);
    return hand_over(&c, out, n);
}

int intervals_collect(const struct run_result *r, int op, struct interval_sample **out, size_t *n)
{
    struct collector c = {.h = &r->hist};
    if (op == OP_STEP) {
        c.s = malloc((r->n_steps ? r->n_steps : 1) * sizeof(*c.s));
        if (c.s == NULL)
            return -1;
        if (r->n_steps)
            memcpy(c.s, r->steps, r->n_steps * sizeof(*c.s));
        c.n = r->n_steps;
    } else if (op == OP_HOLD) {
        from_sections(&c, r);
    } else {
        from_history(&c, op);
    }
    return hand_over(&c, out, n);
}
