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
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "clock.h"
#include "resource.h"
#include "run.h"
#include "workload.h"

#define NS_PER_MS 1000000ULL

struct cache_state {
    _Atomic uint32_t *loads; /* per (key, epoch): database loads */
    size_t epochs;
    _Atomic uint64_t hits, misses, rechecked;
};

static int cache_init(struct workload *w)
{
    const struct cache_rebuild_spec *cs = &w->scn->cache_rebuild;
    struct cache_state *st = calloc(1, sizeof(*st));
    if (st == NULL)
        return -1;
    w->state = st;
    /* an epoch per period of the run, one more for a step that ends past it */
    st->epochs = w->scn->duration_ms / cs->period_ms + 2;
    st->loads = calloc((size_t)cs->keys * st->epochs, sizeof(*st->loads));
    w->res = resource_new(cs->keys, -1, w->scn->fencing); /* -1: never filled */
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
    if (st)
        free((void *)st->loads);
    free(st);
}

static int64_t epoch_now(const struct workload *w, const struct client *cl)
{
    return (int64_t)((clock_mono_ns() - cl->run->t0_ns) /
                     (w->scn->cache_rebuild.period_ms * NS_PER_MS));
}

static void think(const struct workload *w, struct client *cl)
{
    uint32_t ms = w->scn->cache_rebuild.read_ms;
    if (ms)
        client_idle_until(cl, clock_mono_ns() + ms * NS_PER_MS);
}

/* Under the lock: re-read, and load only if still missing. */
static void rebuild(struct workload *w, struct client *cl, uint32_t key)
{
    struct cache_state *st = w->state;
    uint64_t token = client_token(cl);
    int64_t filled;
    if (resource_read(w->res, key, token, &filled) == RES_FENCED) {
        client_unlock(cl, EFFECT_FENCED);
        return;
    }
    int64_t epoch = epoch_now(w, cl);
    if (filled >= epoch) {
        atomic_fetch_add_explicit(&st->rechecked, 1, memory_order_relaxed);
        client_unlock(cl, EFFECT_NONE);
        return;
    }
    if (!client_hold(cl, w->scn->cache_rebuild.load_ms))
        return; /* crashed while loading: the section ended with it */
    size_t slot =
        (size_t)key * st->epochs + ((size_t)epoch < st->epochs ? (size_t)epoch : st->epochs - 1);
    atomic_fetch_add_explicit(&st->loads[slot], 1, memory_order_relaxed);
    enum resource_rc rc = resource_write(w->res, key, token, epoch);
    client_unlock(cl, rc == RES_OK ? EFFECT_APPLIED : EFFECT_FENCED);
}

static bool cache_step(struct workload *w, struct client *cl)
{
    struct cache_state *st = w->state;
    uint32_t key = (uint32_t)client_random(cl, w->n_keys);
    if (resource_value(w->res, key) >= epoch_now(w, cl)) {
        atomic_fetch_add_explicit(&st->hits, 1, memory_order_relaxed);
        think(w, cl);
        return true;
    }
    atomic_fetch_add_explicit(&st->misses, 1, memory_order_relaxed);
    if (!client_lock(cl, key))
        return false;
    rebuild(w, cl, key);
    think(w, cl);
    return true;
}

static size_t cache_invariants(const struct workload *w, struct invariant *out, size_t max)
{
    const struct cache_state *st = w->state;
    uint64_t loads = 0, loaded = 0, extra = 0, worst = 0;
    for (size_t i = 0; i < w->n_keys * st->epochs; i++) {
        uint32_t n = atomic_load(&st->loads[i]);
        loads += n;
        loaded += n > 0;
        extra += n > 1 ? n - 1 : 0;
        worst = n > worst ? n : worst;
    }
    if (max < 1)
        return 0;
    out[0] = (struct invariant){.name = "one_load_per_epoch", .holds = extra == 0};
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
    .init = cache_init,
    .free = cache_free,
    .step = cache_step,
    .invariants = cache_invariants,
};
