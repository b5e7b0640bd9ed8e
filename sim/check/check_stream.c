/* check_stream.c - the checker over a history's events as they come:
 * sections and fault spans rebuilt by the rules history_sections follows
 * too (pairing.h, spans.h), each section handed to the sweeps (sweep.c)
 * as it opens and closes.
 *
 * A process's open sections are a chain through the sweeps' links, newest
 * first: a client may hold several keys at once and re-enter one it holds.
 * The fault spans are kept whole: a scenario has a few, and the report
 * keeps them by design (each window's availability).
 */
#include "sim/check/check_stream.h"

#include <stdlib.h>
#include <string.h>

#include "sim/check/asks.h"
#include "sim/check/pairing.h"
#include "sim/check/spans.h"
#include "sim/check/sweep.h"
#include "sim/record/grow.h"

struct checker {
    struct sweep *w;
    struct check_result *out;
    uint64_t lookback_ns;
    uint64_t now;
    uint64_t next_id; /* sections entered so far: history_sections' index */
    uint32_t *open;   /* per process: its newest open section, or SWEEP_NONE */
    size_t n_procs;
    struct span_track spans;
    struct asks asks;
};

_Static_assert(SWEEP_NO_SEQ == HISTORY_NO_SEQ, "one value says no sequence");

struct checker *checker_begin(uint64_t lookback_ns, size_t max_listed, bool writes_only,
                              struct check_result *out)
{
    struct checker *c = calloc(1, sizeof(*c));
    if (c == NULL) {
        memset(out, 0, sizeof(*out));
        return NULL;
    }
    c->w = sweep_new(max_listed, writes_only, out);
    if (c->w == NULL) {
        free(c);
        return NULL;
    }
    c->out = out;
    c->lookback_ns = lookback_ns;
    return c;
}

/* The process's chain head, the table grown to hold it; NULL out of memory. */
static uint32_t *proc_head(struct checker *c, uint32_t client)
{
    if (client >= c->n_procs) {
        size_t cap = c->n_procs;
        if (array_grow(&c->open, &cap, (size_t)client + 1, sizeof(*c->open)) < 0)
            return NULL;
        for (size_t i = c->n_procs; i < cap; i++)
            c->open[i] = SWEEP_NONE;
        c->n_procs = cap;
    }
    return &c->open[client];
}

/* The link that points at the process's open section on key, or NULL. */
static uint32_t *find_open(struct checker *c, uint32_t *head, uint32_t key)
{
    for (uint32_t *at = head; *at != SWEEP_NONE; at = sweep_link(c->w, *at))
        if (sweep_section(c->w, *at)->key == key)
            return at;
    return NULL;
}

/* Close the section *at points at (pairing.h's rule) and unlink it. */
static void close_section(struct checker *c, uint32_t *at, uint64_t t, uint64_t seq_to,
                          uint8_t effect)
{
    uint32_t slot = *at;
    struct section_exit x = section_exit_at(sweep_section(c->w, slot), t, seq_to);
    uint32_t *link = sweep_link(c->w, slot);
    *at = *link;
    *link = SWEEP_NONE;
    sweep_close(c->w, slot, x.to_ns, x.has_seq, x.seq_to, effect);
}

static int open_section(struct checker *c, uint32_t *head, const struct history_event *e)
{
    /* re-entry nests; another owner on a key still held left it unseen (pairing.h) */
    uint32_t *at = find_open(c, head, e->key);
    if (at && sweep_section(c->w, *at)->owner != e->owner)
        close_section(c, at, e->t_ns, HISTORY_NO_SEQ, EFFECT_CRASHED);
    struct section s = section_of_acquire(e, asks_asked_ns(&c->asks, e));
    uint32_t slot;
    if (sweep_open(c->w, c->next_id++, &s, e->seq != HISTORY_NO_SEQ, &slot) < 0)
        return -1;
    *sweep_link(c->w, slot) = *head;
    *head = slot;
    return 0;
}

int checker_event(struct checker *c, const struct history_event *e)
{
    if (e->t_ns < c->now)
        return -2;
    if (e->f == HF_FAULT)
        return sweep_time(c->w, c->now = e->t_ns) < 0 || span_track_event(&c->spans, e) == SPAN_OOM
                   ? -1
                   : 0;
    enum section_step step = section_step_of(e);
    if (step == STEP_NONE)
        return asks_event(&c->asks, e);
    if (e->client >= HISTORY_MAX_CLIENTS)
        return -2;
    if (sweep_time(c->w, e->t_ns) < 0)
        return -1;
    c->now = e->t_ns;
    uint32_t *head = proc_head(c, e->client);
    if (head == NULL)
        return -1;
    if (e->seq != HISTORY_NO_SEQ && sweep_seq(c->w, e->key, e->seq) < 0)
        return -1;
    if (step == STEP_OPEN) {
        if (open_section(c, head, e) < 0)
            return -1;
        return sweep_poll(c->w, e->key);
    }
    uint32_t *at = find_open(c, head, e->key);
    if (at == NULL)
        return sweep_poll(c->w, e->key); /* a release of nothing it holds: a step all the same */
    close_section(c, at, e->t_ns, e->seq, section_step_effect(step, e));
    /* A holder that dies leaves every hold it had re-entered, too. */
    while (step == STEP_CRASH && (at = find_open(c, head, e->key)) != NULL)
        close_section(c, at, e->t_ns, e->seq, EFFECT_CRASHED);
    return sweep_poll(c->w, e->key);
}

int checker_end(struct checker *c, uint64_t end_ns, struct fault_span **faults, size_t *n_faults)
{
    /* Sections nobody released stay open: they end with the history (for
     * the reports) but overlap whatever enters after them (checker.h). */
    for (size_t p = 0; p < c->n_procs; p++)
        while (c->open[p] != SWEEP_NONE)
            close_section(c, &c->open[p], end_ns, HISTORY_NO_SEQ, EFFECT_OPEN);
    int rc = sweep_finish(c->w, c->spans.fs, c->spans.n, c->lookback_ns, 0);
    if (faults && rc == 0) {
        *faults = c->spans.fs;
        *n_faults = c->spans.n;
        c->spans.fs = NULL;
    }
    span_track_free(&c->spans);
    asks_free(&c->asks);
    free(c->open);
    free(c);
    return rc;
}

size_t checker_held(const struct checker *c)
{
    return sweep_held(c->w);
}

size_t checker_held_peak(const struct checker *c)
{
    return sweep_held_peak(c->w);
}
