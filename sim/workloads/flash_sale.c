/* flash_sale.c - inventory under a flash sale: no overselling.
 *
 * A buyer picks an item (uniform, or most buyers on a few hot items), locks
 * lock:stock:<item>, reads the stock, spends critical_ms (the business
 * logic between read and write, where a GC pause would also land), and
 * writes stock-1 and records an order if there was stock. Two holders inside
 * at once both read the same stock and one decrement is lost: an order
 * without stock behind it.
 *
 * With nested, the write is a payment step that takes the item's lock
 * again while the purchase holds it, as code calling a locked method from
 * a locked method does: a re-entry, which only a reentrant lock grants
 * (Redisson's RLock counts it); its release must leave the lock held by
 * the purchase until the purchase's own release.
 *
 * With segments (the segment lock of the design notes, for hot items), an
 * item's stock is split into that many parts, each its own key
 * lock:stock:<item>:seg<s>, so buyers of one item queue on as many locks.
 * The invariants are the item's, over the sum of its segments.
 *
 * With breaker_failure_rate, a circuit breaker stands in front of the
 * lock, as the design notes' inventory service has one (Resilience4j's,
 * count-based over a fixed window): once at least breaker_min_requests
 * lock requests of a breaker_window_ms window were made and that share of
 * them failed (busy or an error; a request the token bucket refused is
 * not the lock's failure), it opens for breaker_open_ms. Meanwhile every
 * purchase degrades to a local stock check: the stock read with no lock
 * (the freshest a local cache of the count can be), the same critical_ms
 * of business logic, and stock-1 written if there was stock. Nothing
 * excludes two buyers there, so the last units can be sold twice: the
 * invariants say whether they were, and the counters how many purchases
 * took that path. Then it closes again with a fresh window (Resilience4j's
 * half-open state, every call let through).
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/workloads/workload.h"

enum skew_kind {
    SKEW_UNIFORM = 0,
    SKEW_HOT,        /* most buyers on the first hot_items items */
    SKEW_PER_CLIENT, /* client c always buys item c % items: uncontended when items >= clients */
};
_Static_assert(sizeof(enum skew_kind) == sizeof(int), "a SETTING_CHOICE is an int");

struct flash_sale_keys {
    uint32_t items;       /* distinct items, one lock key each */
    int64_t stock;        /* initial stock of every item */
    uint32_t critical_ms; /* hold between reading and writing the stock */
    enum skew_kind skew;
    double hot_fraction; /* SKEW_HOT: share of buyers that pick a hot item */
    uint32_t hot_items;  /* SKEW_HOT: items 0..hot_items-1 are hot */
    bool nested;         /* the purchase's payment takes the item's lock again inside: a re-entry */
    uint32_t segments;   /* each item's stock split into this many, one lock key each */
    double breaker_failure_rate; /* 0: no breaker */
    uint32_t breaker_min_requests, breaker_window_ms, breaker_open_ms;
};

static const char *const skew_names[] = {"uniform", "hot", "per_client"};

/* A store of at most a million keys, as items allows: a segment is a key. */
#define FLASH_MAX_KEYS 1000000u

/* items is read first (table order), so the bound is the file's */
static long long hot_items_max(const void *settings)
{
    return ((const struct flash_sale_keys *)settings)->items;
}

static int check_segments(const void *settings, char *why, size_t len)
{
    const struct flash_sale_keys *fs = settings;
    uint64_t keys = (uint64_t)fs->items * fs->segments;
    if (keys <= FLASH_MAX_KEYS)
        return 0;
    snprintf(why, len,
             "%" PRIu32 " items x %" PRIu32 " segments are %" PRIu64 " lock keys (at most %u)",
             fs->items, fs->segments, keys, FLASH_MAX_KEYS);
    return -1;
}

#define FS(m) offsetof(struct flash_sale_keys, m)
static const struct setting_key flash_keys[] = {
    {.key = "items", .type = SETTING_U32, .offset = FS(items), .min = 1, .max = 1000000},
    {.key = "stock", .type = SETTING_I64, .offset = FS(stock), .max = 1000000000000000LL},
    {.key = "critical_ms", .type = SETTING_U32, .offset = FS(critical_ms), .max = 600000},
    {.key = "skew",
     .type = SETTING_CHOICE,
     .offset = FS(skew),
     .names = skew_names,
     .n_names = 3,
     .noun = "skew"},
    {.key = "hot_fraction", .type = SETTING_NUMBER, .offset = FS(hot_fraction), .max = 1},
    {.key = "hot_items",
     .type = SETTING_U32,
     .offset = FS(hot_items),
     .min = 1,
     .max_of = hot_items_max},
    {.key = "nested", .type = SETTING_BOOL, .offset = FS(nested)},
    {.key = "segments",
     .type = SETTING_U32,
     .offset = FS(segments),
     .min = 1,
     .max = 1024,
     .check = check_segments},
    {.key = "breaker_failure_rate",
     .type = SETTING_NUMBER,
     .offset = FS(breaker_failure_rate),
     .max = 1},
    {.key = "breaker_min_requests",
     .type = SETTING_U32,
     .offset = FS(breaker_min_requests),
     .min = 1,
     .max = 1000000},
    {.key = "breaker_window_ms",
     .type = SETTING_U32,
     .offset = FS(breaker_window_ms),
     .min = 1,
     .max = 600000},
    {.key = "breaker_open_ms",
     .type = SETTING_U32,
     .offset = FS(breaker_open_ms),
     .min = 1,
     .max = 600000},
};

static const struct flash_sale_keys flash_defaults = {
    .items = 10,
    .stock = 1000,
    .critical_ms = 1,
    .skew = SKEW_UNIFORM,
    .hot_fraction = 0.9,
    .hot_items = 1,
    .segments = 1,
    .breaker_min_requests = 20,
    .breaker_window_ms = 1000,
    .breaker_open_ms = 2000,
};

static bool flash_reenters(const void *settings)
{
    return ((const struct flash_sale_keys *)settings)->nested;
}

/* The invariants add up every item's stock in 64 bits. */
static int flash_check(const void *settings, const struct workload_run *run, const char *blame[2],
                       char *why, size_t len)
{
    const struct flash_sale_keys *fs = settings;
    (void)run;
    if (fs->stock <= 0 || fs->items <= INT64_MAX / fs->stock)
        return 0;
    blame[0] = "workload", blame[1] = "stock";
    snprintf(why, len,
             "%" PRId64 " per item times %" PRIu32 " items is more stock than 64 bits can count",
             fs->stock, fs->items);
    return -1;
}

static void flash_describe(const void *settings, const struct workload_run *run, char *buf,
                           size_t len)
{
    const struct flash_sale_keys *fs = settings;
    char hot[64] = "";
    (void)run;
    if (fs->skew == SKEW_HOT)
        snprintf(hot, sizeof(hot), " hot_fraction=%g hot_items=%" PRIu32, fs->hot_fraction,
                 fs->hot_items);
    char seg[32] = ""; /* one segment is the unsegmented sale: said only when split */
    if (fs->segments > 1)
        snprintf(seg, sizeof(seg), " segments=%" PRIu32, fs->segments);
    char brk[96] = "";
    if (fs->breaker_failure_rate > 0)
        snprintf(brk, sizeof(brk),
                 " breaker=%g of >=%" PRIu32 " in %" PRIu32 "ms, open %" PRIu32 "ms",
                 fs->breaker_failure_rate, fs->breaker_min_requests, fs->breaker_window_ms,
                 fs->breaker_open_ms);
    snprintf(buf, len,
             "flash_sale items=%" PRIu32 "%s stock=%" PRId64 " critical=%" PRIu32
             "ms skew=%s%s%s%s",
             fs->items, seg, fs->stock, fs->critical_ms, skew_names[fs->skew], hot,
             fs->nested ? " nested" : "", brk);
}

/* The circuit breaker's state, one for the run (the service's). */
struct breaker {
    pthread_mutex_t mu;
    uint64_t window_from_ns, open_until_ns;
    uint32_t requests, failures;
};

struct flash_state {
    _Atomic uint64_t *orders; /* per key: per segment of each item */
    uint64_t hot_cut;         /* client_random below this picks a hot item */
    struct breaker breaker;
    _Atomic uint64_t degraded_orders; /* made by the degrade path, no lock held */
};

/* Item i's segments are keys i*segments .. i*segments+segments-1, so one
 * segment is today's one key per item, its id the item's. */
static uint32_t key_of(const struct flash_sale_keys *fs, uint32_t item, uint32_t seg)
{
    return item * fs->segments + seg;
}

/* An even split, the remainder one unit each to the first segments. */
static int64_t segment_stock(const struct flash_sale_keys *fs, uint32_t seg)
{
    int64_t n = fs->segments;
    return fs->stock / n + (seg < fs->stock % n ? 1 : 0);
}

#define HOT_SCALE (1ULL << 32)

static int flash_init(struct workload *w)
{
    const struct flash_sale_keys *fs = w->settings;
    struct flash_state *st = calloc(1, sizeof(*st));
    if (st == NULL)
        return -1;
    w->state = st;
    pthread_mutex_init(&st->breaker.mu, NULL);
    atomic_init(&st->degraded_orders, 0);
    size_t n = (size_t)fs->items * fs->segments; /* at most a million: the scenario's bound */
    st->orders = calloc(n, sizeof(*st->orders));
    w->res = w->calls->store_new(n, fs->stock, w->run.fencing);
    if (st->orders == NULL || w->res == NULL || workload_alloc_keys(w, n) < 0)
        return -1;
    for (uint32_t i = 0; i < fs->items; i++) {
        for (uint32_t g = 0; g < fs->segments; g++) {
            char name[48];
            uint32_t k = key_of(fs, i, g);
            if (fs->segments == 1)
                snprintf(name, sizeof(name), "lock:stock:%" PRIu32, i);
            else
                snprintf(name, sizeof(name), "lock:stock:%" PRIu32 ":seg%" PRIu32, i, g);
            if (workload_set_key(w, k, name) < 0)
                return -1;
            w->calls->store_preset(w->res, k, segment_stock(fs, g));
            atomic_init(&st->orders[k], 0);
        }
    }
    st->hot_cut = (uint64_t)(fs->hot_fraction * (double)HOT_SCALE);
    return 0;
}

static void flash_free(struct workload *w)
{
    struct flash_state *st = w->state;
    if (st) {
        free((void *)st->orders);
        pthread_mutex_destroy(&st->breaker.mu);
    }
    free(st);
}

static uint32_t pick_item(const struct workload *w, struct client *cl)
{
    const struct flash_sale_keys *fs = w->settings;
    const struct flash_state *st = w->state;
    if (fs->skew == SKEW_PER_CLIENT)
        return w->calls->id(cl) % fs->items;
    if (fs->skew == SKEW_UNIFORM || fs->hot_items >= fs->items)
        return (uint32_t)w->calls->random(cl, fs->items);
    if (w->calls->random(cl, HOT_SCALE) < st->hot_cut)
        return (uint32_t)w->calls->random(cl, fs->hot_items);
    return fs->hot_items + (uint32_t)w->calls->random(cl, fs->items - fs->hot_items);
}

/* The key a buyer of item locks: with segments, one that has stock left,
 * by a look at the store without the lock (as a shop reads a cached count
 * to skip sold-out parts): from a random segment, so buyers spread evenly
 * over an item's locks (what segmenting is for), then the next ones in
 * turn, so the look costs at most one read per segment and no second draw.
 * The look is a hint: the segment may sell out before the buyer holds its
 * lock, which then reads 0 and sells nothing, as when all are sold out
 * (the random one is then taken). One segment draws nothing, so a run
 * without segments makes the same draws as before they existed. */
static uint32_t pick_key(const struct workload *w, struct client *cl, uint32_t item)
{
    const struct flash_sale_keys *fs = w->settings;
    if (fs->segments == 1)
        return key_of(fs, item, 0);
    uint32_t start = (uint32_t)w->calls->random(cl, fs->segments);
    for (uint32_t i = 0; i < fs->segments; i++) {
        uint32_t k = key_of(fs, item, (start + i) % fs->segments);
        if (w->calls->store_value(w->res, k) > 0)
            return k;
    }
    return key_of(fs, item, start);
}

/* One purchase attempt. */
static enum attempt flash_try(struct workload *w, struct client *cl, uint32_t key)
{
    const struct flash_sale_keys *fs = w->settings;
    struct flash_state *st = w->state;
    if (!w->calls->lock(cl, key))
        return ATTEMPT_NO_LOCK;
    uint64_t token = w->calls->token(cl);
    int64_t stock;
    if (w->calls->store_read(w->res, key, token, &stock) == RES_FENCED) {
        w->calls->unlock(cl, EFFECT_FENCED);
        return ATTEMPT_REFUSED;
    }
    if (!w->calls->hold(cl, fs->critical_ms))
        return ATTEMPT_DONE; /* crashed inside: the section ended with it */
    if (fs->nested && !w->calls->lock(cl, key)) {
        /* the payment's re-entry failed: the lock was lost, or its
         * server did not answer; the purchase is given up */
        w->calls->unlock(cl, EFFECT_NONE);
        return ATTEMPT_DONE;
    }
    enum section_effect effect = EFFECT_NONE;
    if (stock > 0) {
        effect = EFFECT_FENCED;
        if (!w->calls->commit(cl)) {
            w->calls->unlock(cl, effect);
            return ATTEMPT_REFUSED;
        }
        if (w->calls->store_write(w->res, key, token, stock - 1) == RES_OK) {
            atomic_fetch_add_explicit(&st->orders[key], 1, memory_order_relaxed);
            effect = EFFECT_APPLIED;
        }
    }
    if (fs->nested) /* the payment's section ends first; the purchase's wrote nothing */
        w->calls->unlock(cl, effect), effect = EFFECT_NONE;
    w->calls->unlock(cl, effect);
    return ATTEMPT_DONE;
}

/* Is the breaker open at now? */
static bool breaker_open(struct breaker *b, uint64_t now)
{
    pthread_mutex_lock(&b->mu);
    bool open = now < b->open_until_ns;
    pthread_mutex_unlock(&b->mu);
    return open;
}

/* One lock request's outcome into the window; true when it opened the
 * breaker. */
static bool breaker_record(const struct flash_sale_keys *fs, struct breaker *b, bool failed,
                           uint64_t now)
{
    pthread_mutex_lock(&b->mu);
    if (now - b->window_from_ns >= (uint64_t)fs->breaker_window_ms * 1000000u) {
        b->window_from_ns = now;
        b->requests = b->failures = 0;
    }
    b->requests++;
    b->failures += failed;
    bool opens = now >= b->open_until_ns && b->requests >= fs->breaker_min_requests &&
                 (double)b->failures >= fs->breaker_failure_rate * b->requests;
    if (opens) { /* closed again after it with a fresh window */
        b->open_until_ns = now + (uint64_t)fs->breaker_open_ms * 1000000u;
        b->window_from_ns = b->open_until_ns;
        b->requests = b->failures = 0;
    }
    pthread_mutex_unlock(&b->mu);
    return opens;
}

/* The degrade path: the stock checked and written with no lock. */
static void degraded_purchase(struct workload *w, struct client *cl, uint32_t key)
{
    const struct flash_sale_keys *fs = w->settings;
    struct flash_state *st = w->state;
    w->calls->count(cl, ST_DEGRADED_STEPS);
    int64_t stock = w->calls->store_value(w->res, key);
    uint64_t until = w->calls->now_ns() + (uint64_t)fs->critical_ms * 1000000u;
    if (!w->calls->idle_until(cl, until) || stock <= 0)
        return;
    /* token 0: a fenced store refuses it, as it should a write under no lock */
    if (w->calls->store_write(w->res, key, 0, stock - 1) != RES_OK)
        return;
    atomic_fetch_add_explicit(&st->orders[key], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&st->degraded_orders, 1, memory_order_relaxed);
    w->calls->count(cl, ST_DEGRADED_ORDERS);
}

static bool flash_step(struct workload *w, struct client *cl)
{
    const struct flash_sale_keys *fs = w->settings;
    struct flash_state *st = w->state;
    uint32_t item = pick_item(w, cl);
    uint32_t key = pick_key(w, cl, item);
    if (fs->breaker_failure_rate > 0 && breaker_open(&st->breaker, w->calls->now_ns())) {
        degraded_purchase(w, cl, key);
        return false;
    }
    bool had = workload_attempts(w, cl, key, flash_try);
    if (fs->breaker_failure_rate > 0 && !w->calls->limited(cl) &&
        breaker_record(fs, &st->breaker, !had, w->calls->now_ns()))
        w->calls->count(cl, ST_BREAKER_OPENED);
    return had;
}

struct stock_totals {
    int64_t initial, final, negative_items;
    uint64_t orders, oversold_units, oversold_items, off_items;
    int64_t off_units; /* stock left that orders already took: lost decrements */
};

/* Per item, over its segments' sum. A lost decrement leaves a segment
 * with more stock than its orders justify, never less, so two segments'
 * errors cannot cancel out in the item's sum. */
static struct stock_totals sum_stock(const struct workload *w)
{
    const struct flash_sale_keys *fs = w->settings;
    const struct flash_state *st = w->state;
    int64_t initial = fs->stock;
    struct stock_totals t = {0};
    for (uint32_t i = 0; i < fs->items; i++) {
        int64_t fin = 0;
        uint64_t ord = 0;
        for (uint32_t g = 0; g < fs->segments; g++) {
            fin += w->calls->store_value(w->res, key_of(fs, i, g));
            ord += atomic_load(&st->orders[key_of(fs, i, g)]);
        }
        t.initial += initial;
        t.final += fin;
        t.orders += ord;
        if (fin < 0)
            t.negative_items++;
        if (ord > (uint64_t)initial) {
            t.oversold_items++;
            t.oversold_units += ord - (uint64_t)initial;
        }
        if (fin != initial - (int64_t)ord) {
            t.off_items++;
            t.off_units += fin - (initial - (int64_t)ord);
        }
    }
    return t;
}

static size_t flash_invariants(const struct workload *w, struct invariant *out, size_t max)
{
    struct stock_totals t = sum_stock(w);
    const struct flash_state *st = w->state;
    /* the degrade path's orders took no lock: they break these alone */
    uint64_t degraded = atomic_load(&st->degraded_orders);
    struct invariant inv[3] = {
        {.name = "no_oversell", .holds = t.oversold_items == 0, .by_overlaps = degraded == 0},
        {.name = "stock_accounting", .holds = t.off_items == 0, .by_overlaps = degraded == 0},
        {.name = "stock_never_negative", .holds = t.negative_items == 0, .by_overlaps = true},
    };
    snprintf(inv[0].detail, sizeof(inv[0].detail),
             "%" PRIu64 " orders for %" PRId64 " units; %" PRIu64 " items oversold by %" PRIu64
             " units",
             t.orders, t.initial, t.oversold_items, t.oversold_units);
    if (degraded)
        snprintf(inv[0].detail + strlen(inv[0].detail),
                 sizeof(inv[0].detail) - strlen(inv[0].detail),
                 " (%" PRIu64 " of the orders by the degrade path, with no lock)", degraded);
    snprintf(inv[1].detail, sizeof(inv[1].detail),
             "final stock %" PRId64 " vs initial - orders = %" PRId64 "; %" PRIu64
             " items off by %" PRId64 " (lost updates)",
             t.final, t.initial - (int64_t)t.orders, t.off_items, t.off_units);
    snprintf(inv[2].detail, sizeof(inv[2].detail), "%" PRId64 " items below zero",
             t.negative_items);
    if (max < 3)
        return 0;
    for (size_t i = 0; i < 3; i++)
        out[i] = inv[i];
    return 3;
}

const struct workload_ops flash_sale_ops = {
    .name = "flash_sale",
    .summary = "inventory under a flash sale: orders never exceed stock",
    WORKLOAD_KEYS(flash_keys, flash_defaults),
    .hold_key = "critical_ms",
    .lock_mode = LOCK_MODE_EXCLUSIVE,
    .reenters = flash_reenters,
    .reentry_key = "nested",
    .reentry_by = "the purchase",
    .check = flash_check,
    .describe = flash_describe,
    .init = flash_init,
    .free = flash_free,
    .step = flash_step,
    .invariants = flash_invariants,
};
