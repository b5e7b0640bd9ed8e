/* pool.c - a connection pool behind a semaphore: never more connections in
 * use than the pool has.
 *
 * Each key is a pool (lock:pool:<key>) of lock.permits connections, and
 * the lock is a semaphore of as many permits. A client takes a permit,
 * takes a free connection (marks one of the pool's slots busy), uses it
 * for critical_ms, frees it and gives the permit back. The store counts
 * the connections in use with one atomic and keeps the most it saw: more
 * than the pool holds is a permit handed out twice, which only the
 * semaphore can do (never_over_capacity). A client that finds every slot
 * busy is counted too: the same breach, seen from the pool.
 *
 * A holder that crashes with a permit never gives it back: Redisson's
 * RSemaphore keeps no owner and no lease, so the permit is gone for good
 * (as is the connection it guarded, here). The pool then runs with one
 * permit fewer for the rest of the run; every_permit_returned measures
 * that, advisory, as lost availability and never a failure.
 */
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "sim/workloads/workload.h"

struct pool_keys {
    uint32_t pools;       /* connection pools of lock.permits connections, one key each */
    uint32_t critical_ms; /* how long a client uses the connection it took */
};

static const struct setting_key pool_table[] = {
    {.key = "pools",
     .type = SETTING_U32,
     .offset = offsetof(struct pool_keys, pools),
     .min = 1,
     .max = 1000},
    {.key = "critical_ms",
     .type = SETTING_U32,
     .offset = offsetof(struct pool_keys, critical_ms),
     .max = 600000},
};

static const struct pool_keys pool_defaults = {.pools = 1, .critical_ms = 10};

static const struct pool_keys *settings_of(const struct workload *w)
{
    return w->settings;
}

static void pool_describe(const void *settings, const struct workload_run *run, char *buf,
                          size_t len)
{
    const struct pool_keys *p = settings;
    snprintf(buf, len, "pool pools=%" PRIu32 " connections=%" PRIu32 " critical=%" PRIu32 "ms",
             p->pools, run->permits, p->critical_ms);
}

struct pool_entry {
    _Alignas(64) _Atomic uint32_t in_use;
    _Atomic uint32_t most;  /* the most in use at once */
    _Atomic uint32_t *slot; /* per connection: 0 free, else its user's client id + 1 */
};

struct pool_state {
    struct pool_entry *pool; /* per key */
    uint32_t size;           /* connections per pool: lock.permits */
    _Atomic uint64_t uses, none_free, lost;
};

static int pool_init(struct workload *w)
{
    const struct pool_keys *ps = settings_of(w);
    struct pool_state *st = calloc(1, sizeof(*st));
    if (st == NULL)
        return -1;
    w->state = st;
    st->size = w->run.permits;
    st->pool = aligned_alloc(64, sizeof(*st->pool) * ps->pools);
    w->res = w->calls->store_new(ps->pools, 0, w->run.fencing);
    if (st->pool == NULL || w->res == NULL || workload_alloc_keys(w, ps->pools) < 0) {
        free(st->pool);
        st->pool = NULL;
        return -1;
    }
    for (uint32_t i = 0; i < ps->pools; i++) {
        atomic_init(&st->pool[i].in_use, 0);
        atomic_init(&st->pool[i].most, 0);
        st->pool[i].slot = NULL;
    }
    for (uint32_t i = 0; i < ps->pools; i++) {
        char name[40];
        snprintf(name, sizeof(name), "lock:pool:%" PRIu32, i);
        st->pool[i].slot = calloc(st->size, sizeof(*st->pool[i].slot));
        if (st->pool[i].slot == NULL || workload_set_key(w, i, name) < 0)
            return -1;
    }
    return 0;
}

static void pool_free(struct workload *w)
{
    struct pool_state *st = w->state;
    if (st && st->pool)
        for (uint32_t i = 0; i < settings_of(w)->pools; i++)
            free((void *)st->pool[i].slot);
    if (st)
        free(st->pool);
    free(st);
}

/* Take a connection of p: its slot, or size when every one was busy. */
static uint32_t take_connection(struct pool_state *st, struct pool_entry *p, uint32_t user)
{
    uint32_t n = atomic_fetch_add(&p->in_use, 1) + 1;
    uint32_t most = atomic_load_explicit(&p->most, memory_order_relaxed);
    while (n > most && !atomic_compare_exchange_weak_explicit(
                           &p->most, &most, n, memory_order_relaxed, memory_order_relaxed))
        ;
    for (uint32_t i = 0; i < st->size; i++) {
        uint32_t free_slot = 0;
        if (atomic_compare_exchange_strong(&p->slot[i], &free_slot, user))
            return i;
    }
    atomic_fetch_add_explicit(&st->none_free, 1, memory_order_relaxed);
    return st->size;
}

static void give_connection(struct pool_state *st, struct pool_entry *p, uint32_t slot)
{
    if (slot < st->size)
        atomic_store(&p->slot[slot], 0);
    atomic_fetch_sub(&p->in_use, 1);
}

static bool pool_step(struct workload *w, struct client *cl)
{
    struct pool_state *st = w->state;
    uint32_t key = (uint32_t)w->calls->random(cl, w->n_keys);
    if (!w->calls->lock_mode(cl, key, LOCK_MODE_PERMIT, w->run.wait_ms))
        return false;
    struct pool_entry *p = &st->pool[key];
    uint32_t slot = take_connection(st, p, w->calls->id(cl) + 1);
    if (!w->calls->hold(cl, settings_of(w)->critical_ms)) {
        /* crashed using it: the permit and the connection stay taken */
        atomic_fetch_add_explicit(&st->lost, 1, memory_order_relaxed);
        return true;
    }
    atomic_fetch_add_explicit(&st->uses, 1, memory_order_relaxed);
    give_connection(st, p, slot);
    w->calls->unlock(cl, EFFECT_APPLIED);
    return true;
}

static size_t pool_invariants(const struct workload *w, struct invariant *out, size_t max)
{
    const struct pool_state *st = w->state;
    uint32_t most = 0, worst = 0, pools = settings_of(w)->pools;
    uint64_t in_use = 0, short_pools = 0;
    for (uint32_t i = 0; i < pools; i++) {
        uint32_t m = atomic_load(&st->pool[i].most), u = atomic_load(&st->pool[i].in_use);
        if (m > most) {
            most = m;
            worst = i;
        }
        in_use += u;
        short_pools += u > 0;
    }
    uint64_t none_free = atomic_load(&st->none_free), lost = atomic_load(&st->lost);
    if (max < 2)
        return 0;
    out[0] = (struct invariant){.name = "never_over_capacity",
                                .holds = most <= st->size && none_free == 0,
                                .by_overlaps = true};
    snprintf(out[0].detail, sizeof(out[0].detail),
             "%" PRIu64 " uses of %" PRIu32 " pool(s) of %" PRIu32 " connections; at most %" PRIu32
             " in use at once (pool %" PRIu32 "); %" PRIu64 " takes found every connection busy",
             atomic_load(&st->uses), pools, st->size, most, worst, none_free);
    out[1] =
        (struct invariant){.name = "every_permit_returned", .holds = lost == 0, .advisory = true};
    snprintf(out[1].detail, sizeof(out[1].detail),
             "%" PRIu64 " permits lost: their holders crashed with them and a semaphore keeps no "
             "owner or lease to free them (lost availability); %" PRIu64 " of %" PRIu64
             " connections still in use at the end, in %" PRIu64 " pool(s)",
             lost, in_use, (uint64_t)st->size * pools, short_pools);
    return 2;
}

const struct workload_ops pool_ops = {
    .name = "pool",
    .summary = "a connection pool behind a semaphore: never more in use than it holds",
    WORKLOAD_KEYS(pool_table, pool_defaults),
    .hold_key = "critical_ms",
    /* a semaphore's alone: a lock that grants no permits cannot run it */
    .lock_mode = LOCK_MODE_PERMIT,
    .describe = pool_describe,
    .init = pool_init,
    .free = pool_free,
    .step = pool_step,
    .invariants = pool_invariants,
};
