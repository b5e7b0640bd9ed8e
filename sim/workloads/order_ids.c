/* order_ids.c - unique order ids: no id issued twice, none skipped.
 *
 * An order service keeps the last id it issued (per sequence: a shard, a
 * region) and a client that needs one locks lock:order_id:<seq>, reads the
 * last id, spends critical_ms (building the order), writes id+1 and hands
 * that id out. Two holders inside at once read the same last id and both
 * hand out the next: a duplicate order id, the failure a primary key
 * catches late or a ledger never does. A stale holder whose write lands
 * after newer ones moves the counter back, so the ids after it repeat too.
 *
 * Each client keeps the ids it handed out in a list of its own (written
 * only by its thread, read after the run), so recording costs no shared
 * write; the judge sorts them once at the end.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/workloads/workload.h"

struct order_ids_keys {
    uint32_t sequences;   /* independent id sequences, one lock key each */
    uint32_t critical_ms; /* hold between reading the last id and writing the next */
};

static const struct setting_key order_keys[] = {
    {.key = "sequences",
     .type = SETTING_U32,
     .offset = offsetof(struct order_ids_keys, sequences),
     .min = 1,
     .max = 1000},
    {.key = "critical_ms",
     .type = SETTING_U32,
     .offset = offsetof(struct order_ids_keys, critical_ms),
     .max = 600000},
};

static const struct order_ids_keys order_defaults = {.sequences = 1, .critical_ms = 1};

static const struct order_ids_keys *settings_of(const struct workload *w)
{
    return w->settings;
}

static void order_describe(const void *settings, const struct workload_run *run, char *buf,
                           size_t len)
{
    const struct order_ids_keys *o = settings;
    (void)run;
    snprintf(buf, len, "order_ids sequences=%" PRIu32 " critical=%" PRIu32 "ms", o->sequences,
             o->critical_ms);
}

/* An issued id with its sequence in the top bits: sequences are at most
 * 1000 (the scenario's bound), ids stay far below 2^48. */
#define SEQ_SHIFT 48
#define ID_MASK   ((1ULL << SEQ_SHIFT) - 1)

struct id_list {
    uint64_t *v;
    size_t n, cap;
    bool lost; /* an id could not be kept (out of memory): the judge says so */
};

struct order_state {
    struct id_list *issued; /* per client id */
    uint32_t clients;
};

static int order_init(struct workload *w)
{
    const struct order_ids_keys *o = settings_of(w);
    struct order_state *st = calloc(1, sizeof(*st));
    if (st == NULL)
        return -1;
    w->state = st;
    st->clients = w->run.clients;
    st->issued = calloc(st->clients, sizeof(*st->issued));
    w->res = w->calls->store_new(o->sequences, 0, w->run.fencing);
    if (st->issued == NULL || w->res == NULL || workload_alloc_keys(w, o->sequences) < 0)
        return -1;
    for (uint32_t i = 0; i < o->sequences; i++) {
        char name[40];
        snprintf(name, sizeof(name), "lock:order_id:%" PRIu32, i);
        if (workload_set_key(w, i, name) < 0)
            return -1;
    }
    return 0;
}

static void order_free(struct workload *w)
{
    struct order_state *st = w->state;
    if (st && st->issued)
        for (uint32_t i = 0; i < st->clients; i++)
            free(st->issued[i].v);
    if (st)
        free(st->issued);
    free(st);
}

static void note_issued(struct id_list *l, uint32_t seq, int64_t id)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 256;
        uint64_t *v = realloc(l->v, cap * sizeof(*v));
        if (v == NULL) {
            l->lost = true;
            return;
        }
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = ((uint64_t)seq << SEQ_SHIFT) | ((uint64_t)id & ID_MASK);
}

/* One attempt at the next id of seq. */
static enum attempt order_try(struct workload *w, struct client *cl, uint32_t seq)
{
    struct order_state *st = w->state;
    if (!w->calls->lock(cl, seq))
        return ATTEMPT_NO_LOCK;
    uint64_t token = w->calls->token(cl);
    int64_t last;
    if (w->calls->store_read(w->res, seq, token, &last) == RES_FENCED) {
        w->calls->unlock(cl, EFFECT_FENCED);
        return ATTEMPT_REFUSED;
    }
    if (!w->calls->hold(cl, settings_of(w)->critical_ms))
        return ATTEMPT_DONE; /* crashed inside: no id handed out */
    enum section_effect effect = EFFECT_FENCED;
    if (!w->calls->commit(cl)) {
        w->calls->unlock(cl, effect);
        return ATTEMPT_REFUSED;
    }
    if (w->calls->store_write(w->res, seq, token, last + 1) == RES_OK) {
        note_issued(&st->issued[w->calls->id(cl) % st->clients], seq, last + 1);
        effect = EFFECT_APPLIED;
    }
    w->calls->unlock(cl, effect);
    return ATTEMPT_DONE;
}

static bool order_step(struct workload *w, struct client *cl)
{
    uint32_t seq = (uint32_t)w->calls->random(cl, settings_of(w)->sequences);
    return workload_attempts(w, cl, seq, order_try);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

struct id_totals {
    uint64_t issued, duplicates, missing, seq_off; /* seq_off: last id stored != highest issued */
    uint32_t dup_seqs, gap_seqs;
    int64_t first_dup, first_missing; /* the lowest of each, for the detail; -1: none */
    bool lost;
};

/* Every issued id, sorted by sequence then id; NULL with *n 0 when none
 * or out of memory (t->lost says which). */
static uint64_t *all_ids(const struct order_state *st, size_t *n, struct id_totals *t)
{
    size_t total = 0;
    for (uint32_t i = 0; i < st->clients; i++) {
        total += st->issued[i].n;
        t->lost |= st->issued[i].lost;
    }
    *n = 0;
    uint64_t *all = total ? malloc(total * sizeof(*all)) : NULL;
    if (all == NULL) {
        t->lost |= total > 0;
        return NULL;
    }
    for (uint32_t i = 0; i < st->clients; i++) {
        memcpy(all + *n, st->issued[i].v, st->issued[i].n * sizeof(*all));
        *n += st->issued[i].n;
    }
    qsort(all, *n, sizeof(*all), cmp_u64);
    return all;
}

/* One sequence's ids, sorted: duplicates, and ids below the highest that
 * nobody got (1 is the first id a sequence hands out). */
static void judge_sequence(const uint64_t *ids, size_t n, int64_t stored, struct id_totals *t)
{
    uint64_t dups = 0, missing = 0, expect = 1;
    for (size_t i = 0; i < n; i++) {
        uint64_t id = ids[i] & ID_MASK;
        if (i > 0 && id == (ids[i - 1] & ID_MASK)) {
            if (dups++ == 0 && (t->first_dup < 0 || (int64_t)id < t->first_dup))
                t->first_dup = (int64_t)id;
            continue;
        }
        if (id > expect) {
            if (missing == 0 && (t->first_missing < 0 || (int64_t)expect < t->first_missing))
                t->first_missing = (int64_t)expect;
            missing += id - expect;
        }
        expect = id + 1;
    }
    t->issued += n;
    t->duplicates += dups;
    t->missing += missing;
    t->dup_seqs += dups > 0;
    t->gap_seqs += missing > 0;
    if (stored != (int64_t)(expect - 1))
        t->seq_off++;
}

static struct id_totals sum_ids(const struct workload *w)
{
    const struct order_state *st = w->state;
    struct id_totals t = {.first_dup = -1, .first_missing = -1};
    size_t n;
    uint64_t *all = all_ids(st, &n, &t);
    size_t at = 0;
    for (uint32_t seq = 0; seq < (uint32_t)w->n_keys; seq++) {
        size_t from = at;
        while (at < n && (all[at] >> SEQ_SHIFT) == seq)
            at++;
        judge_sequence(all + from, at - from, w->calls->store_value(w->res, seq), &t);
    }
    free(all);
    return t;
}

static size_t order_invariants(const struct workload *w, struct invariant *out, size_t max)
{
    struct id_totals t = sum_ids(w);
    struct invariant inv[2] = {
        {.name = "no_duplicate_id", .holds = t.duplicates == 0 && !t.lost, .by_overlaps = true},
        {.name = "no_gap",
         .holds = t.missing == 0 && t.seq_off == 0 && !t.lost,
         .by_overlaps = true},
    };
    char lowest[48] = "";
    if (t.duplicates)
        snprintf(lowest, sizeof(lowest), " in %" PRIu32 " sequence(s), the lowest %" PRId64,
                 t.dup_seqs, t.first_dup);
    snprintf(inv[0].detail, sizeof(inv[0].detail),
             "%" PRIu64 " ids issued in %zu sequence(s); %" PRIu64 " issued again%s%s", t.issued,
             w->n_keys, t.duplicates, lowest,
             t.lost ? "; some issued ids could not be kept (out of memory): not judged" : "");
    lowest[0] = '\0';
    if (t.missing)
        snprintf(lowest, sizeof(lowest), " in %" PRIu32 " sequence(s), the lowest %" PRId64,
                 t.gap_seqs, t.first_missing);
    snprintf(inv[1].detail, sizeof(inv[1].detail),
             "%" PRIu64 " ids skipped%s; %" PRIu64
             " sequence(s) whose stored last id is not the highest issued",
             t.missing, lowest, t.seq_off);
    if (max < 2)
        return 0;
    out[0] = inv[0];
    out[1] = inv[1];
    return 2;
}

const struct workload_ops order_ids_ops = {
    .name = "order_ids",
    .summary = "order ids handed out from a last-id counter: none twice, none skipped",
    WORKLOAD_KEYS(order_keys, order_defaults),
    .hold_key = "critical_ms",
    .lock_mode = LOCK_MODE_EXCLUSIVE,
    .describe = order_describe,
    .init = order_init,
    .free = order_free,
    .step = order_step,
    .invariants = order_invariants,
};
