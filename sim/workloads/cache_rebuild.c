/* cache_rebuild.c - hot cache keys that expire every period: no stampede.
 *
 * Every key expires at each multiple of period_ms (an epoch). A reader
 * picks a key and reads the cache without a lock; a hit costs nothing. A
 * miss takes lock:rebuild:<key>, reads the cache again under the lock
 * (another holder may just have filled it: then there is nothing to do),
 * else loads from the "database" (load_ms, where a pause would land) and
 * fills the cache for the epoch it read. Losers wait for the lock and
 * re-read. A correct lock gives exactly one database load per key and
 * epoch; two holders inside at once both see the miss and both load: the
 * extra loads are the stampede the lock is there to prevent.
 *
 * The cache entry is the resource's value (the epoch it was filled for),
 * so the witness and fencing guard it as they guard stock.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/record/clock.h"
#include "sim/record/figures.h"
#include "sim/workloads/workload.h"

struct cache_rebuild_keys {
    uint32_t keys;      /* hot cache keys, one rebuild lock each */
    uint32_t period_ms; /* every key expires at each multiple of this: one epoch */
    uint32_t load_ms;   /* the slow database load the lock protects */
    uint32_t read_ms;   /* a reader's think time between two reads */
};

#define CR(m) offsetof(struct cache_rebuild_keys, m)
static const struct setting_key cache_keys[] = {
    {.key = "keys", .type = SETTING_U32, .offset = CR(keys), .min = 1, .max = 100000},
    {.key = "period_ms",
     .type = SETTING_U32,
     .offset = CR(period_ms),
     .min = 10,
     .max = SCENARIO_MS_MAX},
    {.key = "load_ms", .type = SETTING_U32, .offset = CR(load_ms), .max = 600000},
    {.key = "read_ms", .type = SETTING_U32, .offset = CR(read_ms), .max = 600000},
};

static const struct cache_rebuild_keys cache_defaults = {
    .keys = 4, .period_ms = 1000, .load_ms = 50, .read_ms = 5};

static const struct cache_rebuild_keys *settings_of(const struct workload *w)
{
    return w->settings;
}

static void cache_describe(const void *settings, const struct workload_run *run, char *buf,
                           size_t len)
{
    const struct cache_rebuild_keys *c = settings;
    (void)run;
    snprintf(buf, len,
             "cache_rebuild keys=%" PRIu32 " period=%" PRIu32 "ms load=%" PRIu32 "ms read=%" PRIu32
             "ms",
             c->keys, c->period_ms, c->load_ms, c->read_ms);
}

#define NS_PER_MS 1000000ULL

/* A load in an epoch past the counters' end: rare (a step that outlived
 * the run by more than its wait, a pause, a load), kept exactly. */
struct late_load {
    uint32_t key;
    uint64_t epoch;
};

struct cache_state {
    _Atomic uint32_t *loads; /* per (key, epoch): database loads */
    size_t epochs;
    _Atomic uint64_t hits, misses, rechecked;
    pthread_mutex_t late_mu; /* guards late, n_late, cap_late */
    struct late_load *late;
    size_t n_late, cap_late;
    uint64_t late_lost; /* out of memory: counted, never merged into another epoch */
};

static int cache_init(struct workload *w)
{
    const struct cache_rebuild_keys *cs = settings_of(w);
    struct cache_state *st = calloc(1, sizeof(*st));
    if (st == NULL)
        return -1;
    w->state = st;
    pthread_mutex_init(&st->late_mu, NULL);
    /* Every epoch a step can reach: a reader that starts just before the end
     * may wait wait_ms for the lock, load for load_ms, and be stretched by a
     * fault. Loads past that are kept apart (late_load), never folded into
     * the last epoch: folding made several epochs of one load each look
     * like one epoch loaded several times. */
    uint64_t reach =
        w->run.duration_ms + w->run.wait_ms + cs->load_ms + w->run.longest_fault_ms + 1000;
    st->epochs = (size_t)(reach / cs->period_ms + 2);
    st->loads = calloc((size_t)cs->keys * st->epochs, sizeof(*st->loads));
    w->res = w->calls->store_new(cs->keys, -1, w->run.fencing); /* -1: never filled */
    if (st->loads == NULL || w->res == NULL || workload_alloc_keys(w, cs->keys) < 0)
        return -1;
    for (uint32_t i = 0; i < cs->keys; i++) {
        char name[40];
        snprintf(name, sizeof(name), "lock:rebuild:%" PRIu32, i);
        if (workload_set_key(w, i, name) < 0)
            return -1;
    }
    return 0;
}

static void cache_free(struct workload *w)
{
    struct cache_state *st = w->state;
    if (st) {
        free((void *)st->loads);
        free(st->late);
        pthread_mutex_destroy(&st->late_mu);
    }
    free(st);
}

static void count_late_load(struct cache_state *st, uint32_t key, uint64_t epoch)
{
    pthread_mutex_lock(&st->late_mu);
    if (st->n_late == st->cap_late) {
        size_t cap = st->cap_late ? 2 * st->cap_late : 64;
        struct late_load *l = realloc(st->late, cap * sizeof(*l));
        if (l == NULL) {
            st->late_lost++;
            pthread_mutex_unlock(&st->late_mu);
            return;
        }
        st->late = l;
        st->cap_late = cap;
    }
    st->late[st->n_late++] = (struct late_load){key, epoch};
    pthread_mutex_unlock(&st->late_mu);
}

static void count_load(struct cache_state *st, uint32_t key, int64_t epoch)
{
    if ((uint64_t)epoch < st->epochs)
        atomic_fetch_add_explicit(&st->loads[(size_t)key * st->epochs + (size_t)epoch], 1,
                                  memory_order_relaxed);
    else
        count_late_load(st, key, (uint64_t)epoch);
}

static int64_t epoch_now(const struct workload *w, const struct client *cl)
{
    return (int64_t)((clock_mono_ns() - w->calls->start_ns(cl)) /
                     (settings_of(w)->period_ms * NS_PER_MS));
}

static void think(const struct workload *w, struct client *cl)
{
    uint32_t ms = settings_of(w)->read_ms;
    if (ms)
        w->calls->idle_until(cl, clock_mono_ns() + ms * NS_PER_MS);
}

/* Under the lock: re-read, and load only if still missing. */
static void rebuild(struct workload *w, struct client *cl, uint32_t key)
{
    struct cache_state *st = w->state;
    uint64_t token = w->calls->token(cl);
    int64_t filled;
    if (w->calls->store_read(w->res, key, token, &filled) == RES_FENCED) {
        w->calls->unlock(cl, EFFECT_FENCED);
        return;
    }
    int64_t epoch = epoch_now(w, cl);
    if (filled >= epoch) {
        atomic_fetch_add_explicit(&st->rechecked, 1, memory_order_relaxed);
        w->calls->unlock(cl, EFFECT_NONE);
        return;
    }
    if (!w->calls->hold(cl, settings_of(w)->load_ms))
        return; /* crashed while loading: the section ended with it */
    count_load(st, key, epoch);
    enum resource_rc rc = w->calls->store_write(w->res, key, token, epoch);
    w->calls->unlock(cl, rc == RES_OK ? EFFECT_APPLIED : EFFECT_FENCED);
}

static bool cache_step(struct workload *w, struct client *cl)
{
    struct cache_state *st = w->state;
    uint32_t key = (uint32_t)w->calls->random(cl, w->n_keys);
    if (w->calls->store_value(w->res, key) >= epoch_now(w, cl)) {
        atomic_fetch_add_explicit(&st->hits, 1, memory_order_relaxed);
        think(w, cl);
        return true;
    }
    atomic_fetch_add_explicit(&st->misses, 1, memory_order_relaxed);
    if (!w->calls->lock(cl, key))
        return false;
    rebuild(w, cl, key);
    think(w, cl);
    return true;
}

struct load_tally {
    uint64_t loads, loaded, extra, worst;
};

static void tally(struct load_tally *t, uint64_t n)
{
    t->loads += n;
    t->loaded += n > 0;
    t->extra += n > 1 ? n - 1 : 0;
    t->worst = n > t->worst ? n : t->worst;
}

static int cmp_late(const void *pa, const void *pb)
{
    const struct late_load *a = pa, *b = pb;
    if (a->key != b->key)
        return a->key < b->key ? -1 : 1;
    return (a->epoch > b->epoch) - (a->epoch < b->epoch);
}

/* Late loads, sorted, counted per (key, epoch) run (after the run: no lock). */
static void tally_late(struct cache_state *st, struct load_tally *t)
{
    if (st->n_late > 1) /* qsort wants a non-null base even for nothing */
        qsort(st->late, st->n_late, sizeof(*st->late), cmp_late);
    for (size_t i = 0, j; i < st->n_late; i = j) {
        for (j = i + 1; j < st->n_late && cmp_late(&st->late[i], &st->late[j]) == 0; j++)
            ;
        tally(t, j - i);
    }
}

static size_t cache_invariants(const struct workload *w, struct invariant *out, size_t max)
{
    struct cache_state *st = w->state;
    struct load_tally t = {0};
    for (size_t i = 0; i < w->n_keys * st->epochs; i++)
        tally(&t, atomic_load(&st->loads[i]));
    tally_late(st, &t);
    uint64_t loads = t.loads + st->late_lost, loaded = t.loaded, extra = t.extra, worst = t.worst;
    if (max < 1)
        return 0;
    /* A load that could not be placed is a load nobody can vouch for. */
    out[0] =
        (struct invariant){.name = "one_load_per_epoch", .holds = extra == 0 && st->late_lost == 0};
    snprintf(out[0].detail, sizeof(out[0].detail),
             "%" PRIu64 " database loads for %" PRIu64 " (key, epoch) pairs; %" PRIu64
             " extra (stampede), at most %" PRIu64 " for one pair; %" PRIu64 " hits, %" PRIu64
             " misses, %" PRIu64 " found filled under the lock",
             loads, loaded, extra, worst, (uint64_t)atomic_load(&st->hits),
             (uint64_t)atomic_load(&st->misses), (uint64_t)atomic_load(&st->rechecked));
    return 1;
}

const struct workload_ops cache_rebuild_ops = {
    .name = "cache_rebuild",
    .summary = "expiring cache keys rebuilt once per expiry: no stampede",
    WORKLOAD_KEYS(cache_keys, cache_defaults),
    .hold_key = "load_ms",
    .needs_exclusion = "a database load",
    .lock_mode = LOCK_MODE_EXCLUSIVE,
    .describe = cache_describe,
    .init = cache_init,
    .free = cache_free,
    .step = cache_step,
    .invariants = cache_invariants,
};
