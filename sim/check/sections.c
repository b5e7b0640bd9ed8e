/* history_sections.c - critical sections and fault spans, rebuilt from a
 * history's events (a run's own, or one read back from a file).
 *
 * A section runs from a process's acquire ok to its release invoke (or
 * crash) on the same key; a process may hold several keys at once, and
 * re-enter one it holds (each release closes the newest). One nobody
 * released stays open (checker.h). Fault spans pair each start with
 * the earliest running end of the same (type, target).
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

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
    struct fault_span *fs;
    size_t nf;
    size_t *open_f; /* indices of fault spans still running */
    size_t n_open_f;
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

/* Close the section *at points at and unlink it. seq_to == HISTORY_NO_SEQ:
 * the exit is known only in time. */
static void close_section(struct sec_state *st, size_t *at, uint64_t t, uint64_t seq_to,
                          uint8_t effect)
{
    size_t i = *at;
    struct section *s = &st->s[i];
    s->to_ns = t > s->from_ns ? t : s->from_ns;
    s->effect = effect;
    s->has_seq = s->seq_from != HISTORY_NO_SEQ && seq_to != HISTORY_NO_SEQ;
    s->seq_to = s->has_seq ? seq_to : 0;
    if (!s->has_seq)
        s->seq_from = 0;
    *at = st->next_open[i];
    st->next_open[i] = SIZE_MAX;
}

static void open_section(struct sec_state *st, size_t *head, const struct history_event *e)
{
    /* The same holder taking a key it holds again is re-entry: a section
     * nested in the first, and each release closes the newest. Another
     * life of the process (a new owner) must have left the earlier
     * section, though we never saw how. */
    size_t *at = find_open(st, head, e->key);
    if (at && st->s[*at].owner != e->owner)
        close_section(st, at, e->t_ns, HISTORY_NO_SEQ, EFFECT_CRASHED);
    st->s[st->ns] = (struct section){
        .key = e->key,
        .owner = e->owner,
        .client = e->client,
        .mode = e->mode,
        .permits = e->permits,
        .token = e->token,
        .from_ns = e->t_ns,
        .seq_from = e->seq,
    };
    st->next_open[st->ns] = *head;
    *head = st->ns++;
}

static void fault_event(struct sec_state *st, const struct history_event *e)
{
    if (e->arg2 == 0) {
        st->fs[st->nf] =
            (struct fault_span){.type = e->arg,
                                .client = e->client == HISTORY_SERVERS ? -1 : (int32_t)e->client,
                                .fault = e->key,
                                .servers = e->owner,
                                .from_ns = e->t_ns,
                                .to_ns = UINT64_MAX};
        st->open_f[st->n_open_f++] = st->nf++;
        return;
    }
    /* The earliest running span of this fault (of this type and target
     * when the file does not number faults); few run at once. */
    int32_t client = e->client == HISTORY_SERVERS ? -1 : (int32_t)e->client;
    for (size_t i = 0; i < st->n_open_f; i++) {
        struct fault_span *f = &st->fs[st->open_f[i]];
        if (f->type == e->arg && f->client == client && f->fault == e->key) {
            f->to_ns = e->t_ns;
            memmove(&st->open_f[i], &st->open_f[i + 1],
                    (st->n_open_f - i - 1) * sizeof(*st->open_f));
            st->n_open_f--;
            return;
        }
    }
}

static void section_event(struct sec_state *st, const struct history_event *e)
{
    if (e->f == HF_FAULT) {
        fault_event(st, e);
        return;
    }
    bool opens = e->f == HF_ACQUIRE && e->type == HT_OK;
    bool releases = e->f == HF_RELEASE && e->type == HT_INVOKE;
    if (!opens && !releases && e->f != HF_CRASH)
        return;
    size_t *head = proc_slot(st, e->client);
    if (opens) {
        open_section(st, head, e);
        return;
    }
    size_t *at = find_open(st, head, e->key);
    if (at == NULL)
        return; /* a release of nothing this process holds on that key */
    close_section(st, at, e->t_ns, e->seq, releases ? e->arg : EFFECT_CRASHED);
    /* A holder that dies leaves every hold it had re-entered, too. */
    while (!releases && (at = find_open(st, head, e->key)) != NULL)
        close_section(st, at, e->t_ns, e->seq, EFFECT_CRASHED);
}

static int sec_alloc(struct sec_state *st)
{
    size_t n_acq = 0, n_start = 0;
    for (size_t i = 0; i < st->h->n; i++) {
        const struct history_event *e = &st->h->ev[i];
        n_acq += e->f == HF_ACQUIRE && e->type == HT_OK;
        n_start += e->f == HF_FAULT && e->arg2 == 0;
    }
    st->procs = process_table(st->h, &st->n_procs);
    st->open = malloc((st->n_procs ? st->n_procs : 1) * sizeof(*st->open));
    st->next_open = malloc((n_acq ? n_acq : 1) * sizeof(*st->next_open));
    st->s = malloc((n_acq ? n_acq : 1) * sizeof(*st->s));
    st->fs = malloc((n_start ? n_start : 1) * sizeof(*st->fs));
    st->open_f = malloc((n_start ? n_start : 1) * sizeof(*st->open_f));
    if (!st->procs || !st->open || !st->next_open || !st->s || !st->fs || !st->open_f)
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
        section_event(&st, &h->ev[i]);
    leave_open(&st, h->end_mono_ns);
    *sections = st.s;
    *n_sections = st.ns;
    *faults = st.fs;
    *n_faults = st.nf;
    st.s = NULL;
    st.fs = NULL;
    rc = 0;
out:
    free(st.procs);
    free(st.open);
    free(st.next_open);
    free(st.s);
    free(st.fs);
    free(st.open_f);
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
