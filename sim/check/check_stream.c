/* check_stream.c - the checker over a history's events as they come:
 * sections and fault spans rebuilt by the rules history_sections follows
 * too (pairing.h, spans.h), each section handed to the sweeps (sweep.c)
 * as it opens and closes.
 *
 * A process's open sections are a chain through the sweeps' links, newest
 * first: a client may hold several keys at once and re-enter one it holds.
 * The fault spans are kept whole: a scenario has a few, and the report
 * keeps them by design (each window's availability).
 *
 * A re-entry the sweeps could pair with nothing stays out of them, a few
 * bytes on its key's stack (nest.h): one by the owner of every section
 * open on the key, with no sequence and not a permit, on top of the key's
 * newest section, which its process holds. Nobody else is inside, so as
 * an entrant it pairs with none; its owner's never pair with it; it has
 * no sequence to be judged on. Whatever else opens on the key first
 * brings the stack back into the sweeps, in its place at the key's end of
 * the entry order, as if it had never left; a re-entry that leaves before
 * that was one section that overlapped nobody.
 */
#include "sim/check/check_stream.h"

#include <stdlib.h>
#include <string.h>

#include "sim/check/asks.h"
#include "sim/check/nest.h"
#include "sim/check/pairing.h"
#include "sim/check/spans.h"
#include "sim/check/sweep.h"
#include "sim/record/grow.h"

/* Per key: who holds it, and its re-entries held apart. */
struct key_hold {
    uint32_t open;       /* its sections open in the sweeps */
    uint32_t sole;       /* of them, sole_owner's (open == sole: that owner's alone) */
    uint32_t sole_owner; /* the owner of the first of them to open */
    uint32_t newest;     /* the slot of the key's newest section, while it is open */
    bool newest_open;
    struct nest nest; /* re-entries on top of newest (nest.n > 0 only then) */
};

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
    struct key_hold *keys;
    size_t n_keys;
    uint64_t apart; /* sections that never entered the sweeps */
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

static struct key_hold *key_at(struct checker *c, uint32_t key)
{
    if (key >= c->n_keys && array_grow(&c->keys, &c->n_keys, (size_t)key + 1, sizeof(*c->keys)) < 0)
        return NULL;
    return &c->keys[key];
}

/* A section enters the sweeps on its key, or leaves them. */
static void hold_opened(struct key_hold *k, uint32_t slot, uint32_t owner)
{
    if (k->open++ == 0) {
        k->sole_owner = owner;
        k->sole = 0;
    }
    k->sole += owner == k->sole_owner;
    k->newest = slot;
    k->newest_open = true;
}

static void hold_closed(struct key_hold *k, uint32_t slot, uint32_t owner)
{
    k->open--;
    k->sole -= owner == k->sole_owner && k->sole > 0;
    if (k->newest_open && k->newest == slot)
        k->newest_open = false;
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
    const struct section *s = sweep_section(c->w, slot);
    hold_closed(&c->keys[s->key], slot, s->owner);
    struct section_exit x = section_exit_at(s, t, seq_to);
    uint32_t *link = sweep_link(c->w, slot);
    *at = *link;
    *link = SWEEP_NONE;
    sweep_close(c->w, slot, x.to_ns, x.has_seq, x.seq_to, effect);
}

/* s, named id, enters the sweeps as its process's newest section. */
static int enter_sweeps(struct checker *c, uint32_t *head, const struct section *s, uint64_t id,
                        bool may_seq)
{
    uint32_t slot;
    if (sweep_open(c->w, id, s, may_seq, &slot) < 0)
        return -1;
    *sweep_link(c->w, slot) = *head;
    *head = slot;
    hold_opened(&c->keys[s->key], slot, s->owner);
    return 0;
}

/* The key's re-entries held apart go into the sweeps, oldest first: they
 * were the key's newest entries, so they take the end of its entry order. */
static int bring_back(struct checker *c, struct key_hold *k)
{
    if (k->nest.n == 0)
        return 0;
    struct section *s;
    uint64_t *ids;
    size_t n;
    uint32_t *head = proc_head(c, k->nest.proc);
    if (head == NULL || nest_take(&k->nest, &s, &ids, &n) < 0)
        return -1;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        rc = enter_sweeps(c, head, &s[i], ids[i], false);
        c->apart--; /* counted by the sweeps now */
    }
    free(s);
    free(ids);
    return rc;
}

/* Whether re-entry s may stay out of the sweeps (see above). */
static bool may_hold_apart(const struct checker *c, const struct key_hold *k, const uint32_t *at,
                           const struct history_event *e)
{
    if (e->seq != HISTORY_NO_SEQ || e->mode == LOCK_MODE_PERMIT)
        return false;
    if (k->nest.n > 0)
        return k->nest.proc == e->client && k->nest.owner == e->owner;
    return at && k->newest_open && k->newest == *at &&
           sweep_section(c->w, *at)->owner == e->owner && k->open == k->sole &&
           k->sole_owner == e->owner;
}

static int open_section(struct checker *c, uint32_t *head, const struct history_event *e)
{
    struct key_hold *k = key_at(c, e->key);
    if (k == NULL)
        return -1;
    uint32_t *at = find_open(c, head, e->key);
    /* re-entry nests; another owner on a key still held left it unseen (pairing.h):
     * the newest it held, held apart or not */
    if (k->nest.n > 0 && k->nest.proc == e->client && k->nest.owner != e->owner)
        nest_pop(&k->nest);
    else if (at && sweep_section(c->w, *at)->owner != e->owner)
        close_section(c, at, e->t_ns, HISTORY_NO_SEQ, EFFECT_CRASHED);
    struct section s = section_of_acquire(e, asks_asked_ns(&c->asks, e));
    uint64_t id = c->next_id++;
    if (may_hold_apart(c, k, at, e)) {
        if (k->nest.n == 0)
            nest_start(&k->nest, sweep_section(c->w, *at), id - 1);
        if (nest_push(&k->nest, &s, id) == 0) {
            c->apart++;
            return 0;
        }
    }
    if (bring_back(c, k) < 0)
        return -1;
    return enter_sweeps(c, head, &s, id, e->seq != HISTORY_NO_SEQ);
}

/* A release or crash of a re-entry held apart: it leaves (a crash: all of
 * them). 1 when it was one; 0 when the process's newest on the key is in
 * the sweeps. */
static int leave_apart(struct checker *c, const struct history_event *e, enum section_step step)
{
    if (e->key >= c->n_keys)
        return 0;
    struct nest *t = &c->keys[e->key].nest;
    if (t->n == 0 || t->proc != e->client)
        return 0;
    if (step == STEP_CRASH) {
        nest_free(t);
        return 0; /* and the sections under them */
    }
    nest_pop(t);
    return 1;
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
    if (leave_apart(c, e, step))
        return sweep_poll(c->w, e->key);
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
    for (size_t k = 0; k < c->n_keys; k++)
        nest_free(&c->keys[k].nest); /* open to the end, overlapping nobody */
    for (size_t p = 0; p < c->n_procs; p++)
        while (c->open[p] != SWEEP_NONE)
            close_section(c, &c->open[p], end_ns, HISTORY_NO_SEQ, EFFECT_OPEN);
    int rc = sweep_finish(c->w, c->spans.fs, c->spans.n, c->lookback_ns, 0);
    if (rc == 0)
        c->out->sections += c->apart;
    if (faults && rc == 0) {
        *faults = c->spans.fs;
        *n_faults = c->spans.n;
        c->spans.fs = NULL;
    }
    span_track_free(&c->spans);
    asks_free(&c->asks);
    free(c->keys);
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
