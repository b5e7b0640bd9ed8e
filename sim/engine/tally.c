/* tally.c - a thread's measurements (tally.h). */
#include "sim/engine/tally.h"

#include <stdlib.h>
#include <string.h>

#include "sim/record/histogram.h"

int tally_init(struct tally *t, size_t timeline_len)
{
    memset(t, 0, sizeof(*t));
    for (int i = 0; i < OP_COUNT; i++)
        if ((t->h[i] = histogram_new(HIST_LOWEST_US, HIST_HIGHEST_US, HIST_SIG_DIGITS)) == NULL)
            return -1;
    t->tl_len = timeline_len;
    t->tl_ok = calloc(timeline_len, sizeof(*t->tl_ok));
    t->tl_fail = calloc(timeline_len, sizeof(*t->tl_fail));
    return t->tl_ok && t->tl_fail ? 0 : -1;
}

void tally_destroy(struct tally *t)
{
    for (int i = 0; i < OP_COUNT; i++)
        histogram_free(t->h[i]);
    free(t->tl_ok);
    free(t->tl_fail);
    tally_free_steps(t);
    memset(t, 0, sizeof(*t));
}

static void note_sample(struct tally *t, uint32_t second, uint64_t ns)
{
    struct step_chunk *c = t->steps_tail;
    if (c == NULL || c->n == STEP_CHUNK) {
        c = malloc(sizeof(*c));
        if (c == NULL)
            return; /* the whole-run histogram still has it; its second's interval will not */
        c->next = NULL;
        c->n = 0;
        if (t->steps_tail)
            t->steps_tail->next = c;
        else
            t->steps = c;
        t->steps_tail = c;
    }
    c->s[c->n++] = (struct interval_sample){.ns = ns, .second = second};
    t->n_steps++;
}

void tally_step(struct tally *t, uint64_t t0_ns, uint64_t end_ns, uint64_t ns, int ok)
{
    histogram_record(t->h[OP_STEP], (int64_t)(ns / 1000));
    uint64_t sec = (end_ns - t0_ns) / 1000000000ULL;
    note_sample(t, (uint32_t)sec, ns);
    size_t at = sec < t->tl_len ? (size_t)sec : t->tl_len - 1;
    if (ok)
        t->tl_ok[at]++;
    else
        t->tl_fail[at]++;
}

void tally_free_steps(struct tally *t)
{
    while (t->steps) {
        struct step_chunk *next = t->steps->next;
        free(t->steps);
        t->steps = next;
    }
    t->steps_tail = NULL;
    t->n_steps = 0;
}
