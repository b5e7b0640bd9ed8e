/* read_mostly.c - a cache entry many read and one now and then refreshes:
 * no reader ever sees a half-written value.
 *
 * Each key is one cache entry (lock:cache:<key>) stored in two halves that
 * must match. A reader takes the key shared where the lock grants it (a
 * read-write lock's read side) and exclusive elsewhere, reads both halves,
 * spends critical_ms, and reads them again. A writer (write_fraction of
 * the steps) takes the key exclusive and writes a new version into the
 * first half, spends critical_ms (a half-written value meanwhile), then
 * writes the second. A reader that finds the halves differ, or the value
 * changed between its two reads, read while a writer was inside: a torn
 * read, which only a writer and a reader inside at once can make. Readers
 * inside together are what a read-write lock is for, and no fault: they
 * are counted, as how much the lock let readers share.
 *
 * The halves are two slots of the resource (key and keys + key), so
 * fencing guards each write as it guards stock. A writer that crashes
 * between its halves leaves the entry half-written for good (until the
 * next write): the readers of that value are counted apart, as the crash's
 * doing, not the lock's.
 */
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "sim/workloads/workload.h"

struct read_mostly_keys {
    uint32_t keys;         /* cache entries, one lock key each */
    uint32_t critical_ms;  /* between a reader's two reads; between a writer's two halves */
    double write_fraction; /* share of steps that refresh the entry (0..1] */
};

#define RM(m) offsetof(struct read_mostly_keys, m)
static const struct setting_key read_keys[] = {
    {.key = "keys", .type = SETTING_U32, .offset = RM(keys), .min = 1, .max = 100000},
    {.key = "critical_ms", .type = SETTING_U32, .offset = RM(critical_ms), .max = 600000},
    {.key = "write_fraction", .type = SETTING_NUMBER, .offset = RM(write_fraction), .max = 1},
};

static const struct read_mostly_keys read_defaults = {
    .keys = 4, .critical_ms = 5, .write_fraction = 0.05};

static const struct read_mostly_keys *settings_of(const struct workload *w)
{
    return w->settings;
}

/* The readers' mode is locklab's choice, made by the lock: a mutex on a
 * read-mostly load is correct but serial, which is what a comparison with
 * a read-write lock shows. */
static bool read_resolve(const void *settings, const struct lock_ops *lock, char *note, size_t len)
{
    (void)settings;
    if (lock_grants_mode(lock, LOCK_MODE_SHARED))
        snprintf(note, len, "workload readers: shared (%s's read lock), writers exclusive",
                 lock->name);
    else
        snprintf(note, len,
                 "workload readers: exclusive, as writers are: %s grants no shared mode (readers "
                 "wait for each other)",
                 lock->name);
    return true;
}

static void read_describe(const void *settings, const struct workload_run *run, char *buf,
                          size_t len)
{
    const struct read_mostly_keys *rm = settings;
    (void)run;
    snprintf(buf, len, "read_mostly keys=%" PRIu32 " critical=%" PRIu32 "ms writes=%g", rm->keys,
             rm->critical_ms, rm->write_fraction);
}

#define WRITE_SCALE (1ULL << 32)

struct cache_entry {
    _Alignas(64) _Atomic uint32_t readers; /* inside, to count readers that shared */
    _Atomic int64_t abandoned;             /* the version a crashed writer left half-written */
};

struct read_state {
    struct cache_entry *entry; /* per key */
    uint64_t write_cut;        /* client_random below this makes a step a write */
    _Atomic int64_t version;   /* the last version handed to a writer: each write's own */
    _Atomic uint64_t reads, writes, torn, crashed_half, shared_reads, most_readers;
    _Atomic uint64_t writes_crashed;
};

static int read_init(struct workload *w)
{
    const struct read_mostly_keys *rm = settings_of(w);
    struct read_state *st = calloc(1, sizeof(*st));
    if (st == NULL)
        return -1;
    w->state = st;
    st->entry = aligned_alloc(64, sizeof(*st->entry) * rm->keys);
    /* version 0 in both halves: a whole value before any write */
    w->res = w->calls->store_new(2 * (size_t)rm->keys, 0, w->run.fencing);
    if (st->entry == NULL || w->res == NULL || workload_alloc_keys(w, rm->keys) < 0)
        return -1;
    for (uint32_t i = 0; i < rm->keys; i++) {
        char name[40];
        snprintf(name, sizeof(name), "lock:cache:%" PRIu32, i);
        if (workload_set_key(w, i, name) < 0)
            return -1;
        atomic_init(&st->entry[i].readers, 0);
        atomic_init(&st->entry[i].abandoned, -1);
    }
    st->write_cut = (uint64_t)(rm->write_fraction * (double)WRITE_SCALE);
    return 0;
}

static void read_free(struct workload *w)
{
    struct read_state *st = w->state;
    if (st)
        free(st->entry);
    free(st);
}

static void count(_Atomic uint64_t *c)
{
    atomic_fetch_add_explicit(c, 1, memory_order_relaxed);
}

/* Both halves of key's entry; false when fencing refused either. */
static bool read_halves(struct workload *w, uint32_t key, uint64_t token, int64_t half[2])
{
    uint32_t keys = settings_of(w)->keys;
    return w->calls->store_read(w->res, key, token, &half[0]) == RES_OK &&
           w->calls->store_read(w->res, keys + key, token, &half[1]) == RES_OK;
}

/* A read of two halves that differ: torn by a writer inside, or left so
 * by one that crashed between them. */
static void judge_halves(struct read_state *st, uint32_t key, const int64_t half[2])
{
    if (half[0] == half[1])
        return;
    if (half[0] == atomic_load_explicit(&st->entry[key].abandoned, memory_order_relaxed))
        count(&st->crashed_half);
    else
        count(&st->torn);
}

static void note_readers(struct read_state *st, uint32_t inside)
{
    if (inside > 1)
        count(&st->shared_reads);
    uint64_t most = atomic_load_explicit(&st->most_readers, memory_order_relaxed);
    while (inside > most &&
           !atomic_compare_exchange_weak_explicit(&st->most_readers, &most, inside,
                                                  memory_order_relaxed, memory_order_relaxed))
        ;
}

static bool reader(struct workload *w, struct client *cl, uint32_t key)
{
    struct read_state *st = w->state;
    enum lock_mode mode = lock_grants_mode(w->calls->lock_ops(cl), LOCK_MODE_SHARED)
                              ? LOCK_MODE_SHARED
                              : LOCK_MODE_EXCLUSIVE;
    if (!w->calls->lock_mode(cl, key, mode, w->run.wait_ms))
        return false;
    struct cache_entry *e = &st->entry[key];
    note_readers(st, atomic_fetch_add_explicit(&e->readers, 1, memory_order_relaxed) + 1);
    uint64_t token = w->calls->token(cl);
    int64_t first[2], second[2];
    enum section_effect effect = EFFECT_NONE;
    if (!read_halves(w, key, token, first)) {
        effect = EFFECT_FENCED;
    } else if (!w->calls->hold(cl, settings_of(w)->critical_ms)) {
        atomic_fetch_sub_explicit(&e->readers, 1, memory_order_relaxed);
        return true; /* crashed inside: what it read went with it */
    } else if (!read_halves(w, key, token, second)) {
        effect = EFFECT_FENCED;
    } else {
        count(&st->reads);
        /* one torn read however many ways it tore */
        if (first[0] != second[0] || first[1] != second[1])
            count(&st->torn);
        else
            judge_halves(st, key, first);
    }
    atomic_fetch_sub_explicit(&e->readers, 1, memory_order_relaxed);
    w->calls->unlock(cl, effect);
    return true;
}

static bool writer(struct workload *w, struct client *cl, uint32_t key)
{
    struct read_state *st = w->state;
    uint32_t keys = settings_of(w)->keys;
    if (!w->calls->lock(cl, key))
        return false;
    uint64_t token = w->calls->token(cl);
    int64_t v = atomic_fetch_add_explicit(&st->version, 1, memory_order_relaxed) + 1;
    if (w->calls->store_write(w->res, key, token, v) != RES_OK) {
        w->calls->unlock(cl, EFFECT_FENCED);
        return true;
    }
    if (!w->calls->hold(cl, settings_of(w)->critical_ms)) {
        atomic_store_explicit(&st->entry[key].abandoned, v, memory_order_relaxed);
        count(&st->writes_crashed);
        return true;
    }
    enum section_effect effect = EFFECT_FENCED;
    if (w->calls->store_write(w->res, keys + key, token, v) == RES_OK) {
        count(&st->writes);
        effect = EFFECT_APPLIED;
    }
    w->calls->unlock(cl, effect);
    return true;
}

static bool read_step(struct workload *w, struct client *cl)
{
    struct read_state *st = w->state;
    uint32_t key = (uint32_t)w->calls->random(cl, w->n_keys);
    if (w->calls->random(cl, WRITE_SCALE) < st->write_cut)
        return writer(w, cl, key);
    return reader(w, cl, key);
}

static size_t read_invariants(const struct workload *w, struct invariant *out, size_t max)
{
    struct read_state *st = w->state;
    uint32_t keys = settings_of(w)->keys;
    uint64_t torn = atomic_load(&st->torn), left_torn = 0;
    for (uint32_t k = 0; k < keys; k++)
        left_torn += w->calls->store_value(w->res, k) != w->calls->store_value(w->res, keys + k);
    if (max < 1)
        return 0;
    out[0] = (struct invariant){.name = "no_torn_read", .holds = torn == 0, .by_overlaps = true};
    snprintf(out[0].detail, sizeof(out[0].detail),
             "%" PRIu64 " reads, %" PRIu64 " writes; %" PRIu64
             " torn reads (a value being written); %" PRIu64
             " reads shared the entry with another reader, at most %" PRIu64 " at once; %" PRIu64
             " writers crashed between the halves, %" PRIu64 " reads of what they left, %" PRIu64
             " entries half-written at the end",
             atomic_load(&st->reads), atomic_load(&st->writes), torn,
             atomic_load(&st->shared_reads), atomic_load(&st->most_readers),
             atomic_load(&st->writes_crashed), atomic_load(&st->crashed_half), left_torn);
    return 1;
}

const struct workload_ops read_mostly_ops = {
    .name = "read_mostly",
    .summary = "a cache entry many read and few rewrite: no reader sees a half-written value",
    WORKLOAD_KEYS(read_keys, read_defaults),
    .hold_key = "critical_ms",
    /* a reader writes nothing a conflict could refuse: its torn read has
     * already happened */
    .needs_exclusion = "a torn read",
    /* its readers ask shared where the lock grants it and exclusive
     * elsewhere, its writers always exclusive: what it needs of every
     * lock is exclusive */
    .lock_mode = LOCK_MODE_EXCLUSIVE,
    .resolve = read_resolve,
    .describe = read_describe,
    .init = read_init,
    .free = read_free,
    .step = read_step,
    .invariants = read_invariants,
};
