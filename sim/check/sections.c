/* history_sections.c - critical sections and fault spans, rebuilt from a
 * history's events (a run's own, or one read back from a file).
 *
 * Sections are paired by pairing.h's rule: a process's acquire ok to its
 * release invoke (or crash) on the same key, several keys held at once,
 * re-entry nested. One nobody released stays open (checker.h). Fault
 * spans pair each start with the earliest running end of the same fault,
 * type and target (spans.h).
 */
#include <stdbool.h>
#include <stdlib.h>

#include "sim/check/asks.h"
#include "sim/check/pairing.h"
#include "sim/check/sections.h"
#include "sim/check/spans.h"
#include "sim/check/stalls.h"
#include "sim/record/history.h"

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* Distinct process numbers, sorted: a process's slot is found by binary
 * search, so a file with sparse or huge process numbers costs nothing. */
static uint32_t *process_table(const struct history *h, size_t *n)
{
    uint32_t *p = malloc((h->n ? h->n : 1) * sizeof(*p));
    if (p == NULL)
        return NULL;
    for (size_t i = 0; i < h->n; i++)
        p[i] = h->ev[i].client;
    qsort(p, h->n, sizeof(*p), cmp_u32);
    size_t m = 0;
    for (size_t i = 0; i < h->n; i++)
        if (m == 0 || p[m - 1] != p[i])
            p[m++] = p[i];
    *n = m;
    return p;
}

struct sec_state {
    const struct history *h;
    uint32_t *procs;
    size_t n_procs;
    /* Per process, its open sections as a chain through next_open: a
     * client may hold several locks at once (a scheduler keeping each task's
     * lock for its hold while it fires the next task). */
    size_t *open;      /* per process: the newest open section, or SIZE_MAX */
    size_t *next_open; /* per section: the next older open one of its process */
    struct section *s;
    size_t ns;
    struct span_track spans;
    struct asks asks;
};

static size_t *proc_slot(struct sec_state *st, uint32_t client)
{
    const uint32_t *p = bsearch(&client, st->procs, st->n_procs, sizeof(*p), cmp_u32);
    return &st->open[p - st->procs];
}

/* The link that points at the process's open section on key, or NULL. */
static size_t *find_open(struct sec_state *st, size_t *head, uint32_t key)
{
    for (size_t *at = head; *at != SIZE_MAX; at = &st->next_open[*at])
        if (st->s[*at].key == key)
            return at;
    return NULL;
}

/* Close the section *at points at (pairing.h's rule) and unlink it. */
static void close_section(struct sec_state *st, size_t *at, uint64_t t, uint64_t seq_to,
                          uint8_t effect)
{
    size_t i = *at;
    section_close(&st->s[i], t, seq_to, effect);
    *at = st->next_open[i];
    st->next_open[i] = SIZE_MAX;
}

static void open_section(struct sec_state *st, size_t *head, const struct history_event *e)
{
    /* re-entry nests; another owner on a key still held left it unseen (pairing.h) */
    size_t *at = find_open(st, head, e->key);
    if (at && st->s[*at].owner != e->owner)
        close_section(st, at, e->t_ns, HISTORY_NO_SEQ, EFFECT_CRASHED);
    st->s[st->ns] = section_of_acquire(e, asks_asked_ns(&st->asks, e));
    st->next_open[st->ns] = *head;
    *head = st->ns++;
}

static int section_event(struct sec_state *st, const struct history_event *e)
{
    if (e->f == HF_FAULT)
        return span_track_event(&st->spans, e) == SPAN_OOM ? -1 : 0;
    if (asks_event(&st->asks, e) < 0)
        return -1;
    enum section_step step = section_step_of(e);
    if (step == STEP_NONE)
        return 0;
    size_t *head = proc_slot(st, e->client);
    if (step == STEP_OPEN) {
        open_section(st, head, e);
        return 0;
    }
    size_t *at = find_open(st, head, e->key);
    if (at == NULL)
        return 0; /* a release of nothing this process holds on that key */
    close_section(st, at, e->t_ns, e->seq, section_step_effect(step, e));
    /* A holder that dies leaves every hold it had re-entered, too. */
    while (step == STEP_CRASH && (at = find_open(st, head, e->key)) != NULL)
        close_section(st, at, e->t_ns, e->seq, EFFECT_CRASHED);
    return 0;
}

static int sec_alloc(struct sec_state *st)
{
    size_t n_acq = 0;
    for (size_t i = 0; i < st->h->n; i++)
        n_acq += section_step_of(&st->h->ev[i]) == STEP_OPEN;
    st->procs = process_table(st->h, &st->n_procs);
    st->open = malloc((st->n_procs ? st->n_procs : 1) * sizeof(*st->open));
    st->next_open = malloc((n_acq ? n_acq : 1) * sizeof(*st->next_open));
    st->s = malloc((n_acq ? n_acq : 1) * sizeof(*st->s));
    if (!st->procs || !st->open || !st->next_open || !st->s)
        return -1;
    for (size_t i = 0; i < st->n_procs; i++)
        st->open[i] = SIZE_MAX;
    return 0;
}

/* Sections nobody released stay open: they end with the history (for the
 * reports) but overlap whatever enters after them (checker.h). */
static void leave_open(struct sec_state *st, uint64_t end_ns)
{
    for (size_t p = 0; p < st->n_procs; p++)
        while (st->open[p] != SIZE_MAX)
            close_section(st, &st->open[p], end_ns, HISTORY_NO_SEQ, EFFECT_OPEN);
}

int history_sections(const struct history *h, struct section **sections, size_t *n_sections,
                     struct fault_span **faults, size_t *n_faults)
{
    struct sec_state st = {.h = h};
    int rc = -1;
    if (sec_alloc(&st) < 0)
        goto out;
    for (size_t i = 0; i < h->n; i++)
        if (section_event(&st, &h->ev[i]) < 0)
            goto out;
    leave_open(&st, h->end_mono_ns);
    /* callers free what they got, even with no span */
    if (st.spans.fs == NULL && (st.spans.fs = malloc(sizeof(*st.spans.fs))) == NULL)
        goto out;
    *sections = st.s;
    *n_sections = st.ns;
    *faults = st.spans.fs;
    *n_faults = st.spans.n;
    st.s = NULL;
    st.spans.fs = NULL;
    rc = 0;
out:
    free(st.procs);
    free(st.open);
    free(st.next_open);
    free(st.s);
    span_track_free(&st.spans);
    asks_free(&st.asks);
    return rc;
}

int history_stalls(const struct history *h, uint64_t min_ns, struct host_stall **stalls, size_t *n)
{
    *stalls = NULL;
    *n = 0;
    struct stalls *s = stalls_begin(min_ns);
    if (s == NULL)
        return -1;
    for (size_t i = 0; i < h->n; i++)
        if (stalls_event(s, &h->ev[i]) < 0) {
            struct host_stall *none;
            size_t m;
            if (stalls_end(s, &none, &m) == 0)
                free(none);
            return -1;
        }
    return stalls_end(s, stalls, n);
}
