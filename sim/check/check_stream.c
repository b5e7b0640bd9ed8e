/* check_stream.c - the checker over a history's events as they come:
 * sections and fault spans rebuilt as history_sections does (sections.c),
 * each handed to the sweeps (sweep.c) as it opens and closes.
 *
 * A process's open sections are a chain through the sweeps' links, newest
 * first: a client may hold several keys at once and re-enter one it holds.
 * The fault spans are kept whole: a scenario has a few, and the report
 * keeps them by design (each window's availability).
 */
#include "sim/check/check_stream.h"

#include <stdlib.h>
#include <string.h>

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
    struct fault_span *fs;
    size_t nf, cap_f;
    size_t *open_f; /* indices of fault spans still running */
    size_t n_open_f, cap_open_f;
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

/* Close the section *at points at and unlink it (history_sections'
 * rule: an exit before the entry is the entry; a section lacking either
 * step has no sequence). */
static void close_section(struct checker *c, uint32_t *at, uint64_t t, uint64_t seq_to,
                          uint8_t effect)
{
    uint32_t slot = *at;
    const struct section *s = sweep_section(c->w, slot);
    bool has_seq = s->seq_from != HISTORY_NO_SEQ && seq_to != HISTORY_NO_SEQ;
    uint64_t to = t > s->from_ns ? t : s->from_ns;
    uint32_t *link = sweep_link(c->w, slot);
    *at = *link;
    *link = SWEEP_NONE;
    sweep_close(c->w, slot, to, has_seq, has_seq ? seq_to : 0, effect);
}

static int open_section(struct checker *c, uint32_t *head, const struct history_event *e)
{
    /* The same holder taking a key it holds again is re-entry; another
     * life of the process (a new owner) must have left the earlier
     * section, though we never saw how. */
    uint32_t *at = find_open(c, head, e->key);
    if (at && sweep_section(c->w, *at)->owner != e->owner)
        close_section(c, at, e->t_ns, HISTORY_NO_SEQ, EFFECT_CRASHED);
    struct section s = {
        .key = e->key,
        .owner = e->owner,
        .client = e->client,
        .mode = e->mode,
        .permits = e->permits,
        .token = e->token,
        .from_ns = e->t_ns,
        .seq_from = e->seq,
    };
    uint32_t slot;
    if (sweep_open(c->w, c->next_id++, &s, e->seq != HISTORY_NO_SEQ, &slot) < 0)
        return -1;
    *sweep_link(c->w, slot) = *head;
    *head = slot;
    return 0;
}

static int fault_event(struct checker *c, const struct history_event *e)
{
    int32_t client = e->client == HISTORY_SERVERS ? -1 : (int32_t)e->client;
    if (e->arg2 == 0) {
        if (array_grow(&c->fs, &c->cap_f, c->nf + 1, sizeof(*c->fs)) < 0 ||
            array_grow(&c->open_f, &c->cap_open_f, c->n_open_f + 1, sizeof(*c->open_f)) < 0)
            return -1;
        c->fs[c->nf] = (struct fault_span){.type = e->arg,
                                           .client = client,
                                           .fault = e->key,
                                           .servers = e->owner,
                                           .from_ns = e->t_ns,
                                           .to_ns = UINT64_MAX};
        c->open_f[c->n_open_f++] = c->nf++;
        return 0;
    }
    /* The earliest running span of this fault; few run at once. */
    for (size_t i = 0; i < c->n_open_f; i++) {
        struct fault_span *f = &c->fs[c->open_f[i]];
        if (f->type == e->arg && f->client == client && f->fault == e->key) {
            f->to_ns = e->t_ns;
            memmove(&c->open_f[i], &c->open_f[i + 1], (c->n_open_f - i - 1) * sizeof(*c->open_f));
            c->n_open_f--;
            return 0;
        }
    }
    return 0;
}

int checker_event(struct checker *c, const struct history_event *e)
{
    if (e->t_ns < c->now)
        return -2;
    if (e->f == HF_FAULT)
        return sweep_time(c->w, c->now = e->t_ns) < 0 || fault_event(c, e) < 0 ? -1 : 0;
    bool opens = e->f == HF_ACQUIRE && e->type == HT_OK;
    bool releases = e->f == HF_RELEASE && e->type == HT_INVOKE;
    if (!opens && !releases && e->f != HF_CRASH)
        return 0;
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
    if (opens) {
        if (open_section(c, head, e) < 0)
            return -1;
        return sweep_poll(c->w, e->key);
    }
    uint32_t *at = find_open(c, head, e->key);
    if (at == NULL)
        return sweep_poll(c->w, e->key); /* a release of nothing it holds: a step all the same */
    close_section(c, at, e->t_ns, e->seq, releases ? e->arg : EFFECT_CRASHED);
    /* A holder that dies leaves every hold it had re-entered, too. */
    while (!releases && (at = find_open(c, head, e->key)) != NULL)
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
    int rc = sweep_finish(c->w, c->fs, c->nf, c->lookback_ns, 0);
    if (faults && rc == 0) {
        *faults = c->fs;
        *n_faults = c->nf;
        c->fs = NULL;
    }
    free(c->fs);
    free(c->open);
    free(c->open_f);
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
