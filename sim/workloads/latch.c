/* latch.c - a batch start behind a countdown latch: no waiter starts
 * before every party's part is done, and every waiter starts soon after.
 *
 * Each key is a latch (lock:latch:<key>) with parties + waiters clients
 * of its own. A round: the first party (the coordinator) trySetCounts
 * the latch to parties; each party does its part (up to work_ms) and
 * counts down once; each waiter awaits the zero, again after every wait
 * that ran out, until it passes. The next round begins once every party
 * was answered and every waiter passed: the countDown that reaches zero
 * deletes the key, so the name is set afresh. A latch found set already
 * (an earlier run's, cut mid-round) is deleted and set again.
 *
 * The zero is known from the parties' side only, as a window: it cannot
 * exist before the last countDown was sent, and surely exists once the
 * last one was answered (Redisson's countDown answers nothing, so which
 * one reached zero is not told). A pass answered while fewer than parties
 * countDowns had been sent went through a count above zero
 * (no_pass_before_zero). A pass is due within bound_ms of the waiter
 * being able to pass: the latest of the last answer, the waiter's first
 * await of the round, and the end of the last pause it sat out (a waiter
 * paused through the zero is judged from its resumption);
 * every_waiter_within_bound counts the later ones, and those still not
 * through when the run ended that long after.
 *
 * Every call is in the history (docs/history.md, "latches"), each await's
 * result with what the waiter saw of its round, and a waiter is judged
 * from exactly what its line says (sim/check/latch_check.h), so `locklab
 * check` judges the run from its history alone and comes to the same
 * figures.
 *
 * A Redis restarted without its data has lost the count: Redisson's
 * getCount reads the missing key as 0, and its waiters pass while the
 * parties still work. That breaks the batch's promise, and this workload
 * says so (no_pass_before_zero), whoever is to blame.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "sim/check/latch_check.h"
#include "sim/record/clock.h"
#include "sim/workloads/workload.h"

struct latch_keys {
    uint32_t latches;  /* independent latches, one key and parties + waiters clients each */
    uint32_t parties;  /* the count: each party counts down once a round */
    uint32_t waiters;  /* clients awaiting the zero */
    uint32_t work_ms;  /* a party's part lasts 0..work_ms */
    uint32_t bound_ms; /* every waiter passes within this of being able to */
};

static const struct setting_key latch_table[] = {
    {.key = "latches",
     .type = SETTING_U32,
     .offset = offsetof(struct latch_keys, latches),
     .min = 1,
     .max = 100},
    {.key = "parties",
     .type = SETTING_U32,
     .offset = offsetof(struct latch_keys, parties),
     .min = 1,
     .max = 1000},
    {.key = "waiters",
     .type = SETTING_U32,
     .offset = offsetof(struct latch_keys, waiters),
     .min = 1,
     .max = 1000},
    {.key = "work_ms",
     .type = SETTING_U32,
     .offset = offsetof(struct latch_keys, work_ms),
     .max = 600000},
    {.key = "bound_ms",
     .type = SETTING_U32,
     .offset = offsetof(struct latch_keys, bound_ms),
     .min = 1,
     .max = 600000},
};

static const struct latch_keys latch_defaults = {
    .latches = 1, .parties = 3, .waiters = 4, .work_ms = 200, .bound_ms = 1000};

#define SLICE_NS (1000000ULL)  /* how often a client looks for the next round */
#define RETRY_NS (50000000ULL) /* a coordinator's next try after a failed trySetCount */

static const struct latch_keys *settings_of(const struct workload *w)
{
    return w->settings;
}

static uint32_t per_latch(const struct latch_keys *k)
{
    return k->parties + k->waiters;
}

static int latch_check(const void *settings, const struct workload_run *run, const char *blame[2],
                       char *why, size_t len)
{
    const struct latch_keys *k = settings;
    uint64_t want = (uint64_t)k->latches * per_latch(k);
    if (run->clients == want)
        return 0;
    blame[0] = "clients";
    snprintf(why, len,
             "%" PRIu32 " clients, but %" PRIu32 " latch(es) of %" PRIu32 " parties and %" PRIu32
             " waiters need %" PRIu64,
             run->clients, k->latches, k->parties, k->waiters, want);
    return -1;
}

static void latch_describe(const void *settings, const struct workload_run *run, char *buf,
                           size_t len)
{
    const struct latch_keys *k = settings;
    (void)run;
    snprintf(buf, len,
             "latch latches=%" PRIu32 " parties=%" PRIu32 " waiters=%" PRIu32 " work=%" PRIu32
             "ms bound=%" PRIu32 "ms",
             k->latches, k->parties, k->waiters, k->work_ms, k->bound_ms);
}

/* One latch's round, shared by its clients. */
struct latch_entry {
    _Alignas(64) _Atomic uint64_t round; /* the round set and open; 0: none yet */
    struct latch_count count;            /* its countDowns sent, unanswered; its zero */
    _Atomic uint32_t acked;              /* its countDowns answered */
    _Atomic uint32_t done;               /* its waiters through (or gone at the run's end) */
    _Atomic uint64_t last_ack;           /* the latest answer so far */
};

struct latch_state {
    struct latch_entry *latch; /* per key */
    uint64_t *seen;            /* per client: the last round it took part in */
    pthread_mutex_t mu;        /* over tally: once a waiter's round */
    struct latch_tally tally;
};

static int latch_init(struct workload *w)
{
    const struct latch_keys *k = settings_of(w);
    struct latch_state *st = calloc(1, sizeof(*st));
    if (st == NULL)
        return -1;
    w->state = st;
    pthread_mutex_init(&st->mu, NULL);
    latch_tally_init(&st->tally);
    st->latch = aligned_alloc(64, sizeof(*st->latch) * k->latches);
    st->seen = calloc((size_t)k->latches * per_latch(k), sizeof(*st->seen));
    w->res = w->calls->store_new(k->latches, 0, w->run.fencing);
    if (st->latch == NULL || st->seen == NULL || w->res == NULL ||
        workload_alloc_keys(w, k->latches) < 0)
        return -1;
    for (uint32_t i = 0; i < k->latches; i++) {
        struct latch_entry *e = &st->latch[i];
        atomic_init(&e->round, 0);
        atomic_init(&e->count.sent, 0);
        atomic_init(&e->count.failed, 0);
        atomic_init(&e->count.zero_at, 0);
        atomic_init(&e->acked, 0);
        atomic_init(&e->done, 0);
        atomic_init(&e->last_ack, 0);
        char name[40];
        snprintf(name, sizeof(name), "lock:latch:%" PRIu32, i);
        if (workload_set_key(w, i, name) < 0)
            return -1;
    }
    return 0;
}

static void latch_free(struct workload *w)
{
    struct latch_state *st = w->state;
    if (st) {
        free(st->latch);
        free(st->seen);
        pthread_mutex_destroy(&st->mu);
    }
    free(st);
}

static void atomic_max(_Atomic uint64_t *at, uint64_t v)
{
    uint64_t old = atomic_load(at);
    while (v > old && !atomic_compare_exchange_weak(at, &old, v))
        ;
}

/* Wait (outside any lock) until done() holds; false when the run ends
 * first. In memory, a slice at a time: the round's start is the
 * workload's own bookkeeping, not the latch's. */
static bool idle_while(struct workload *w, struct client *cl, const struct latch_entry *e,
                       bool (*done)(const struct latch_entry *, const struct workload *, uint64_t),
                       uint64_t arg)
{
    while (!done(e, w, arg))
        if (!w->calls->idle_until(cl, clock_mono_ns() + SLICE_NS))
            return false;
    return true;
}

static bool round_over(const struct latch_entry *e, const struct workload *w, uint64_t unused)
{
    const struct latch_keys *k = settings_of(w);
    (void)unused;
    return atomic_load(&e->round) == 0 ||
           (atomic_load(&e->acked) + atomic_load(&e->count.failed) == k->parties &&
            atomic_load(&e->done) == k->waiters);
}

static bool round_after(const struct latch_entry *e, const struct workload *w, uint64_t seen)
{
    (void)w;
    return atomic_load(&e->round) > seen;
}

/* The coordinator: a fresh count once the last round is over. */
static bool open_round(struct workload *w, struct client *cl, uint32_t key)
{
    struct latch_state *st = w->state;
    struct latch_entry *e = &st->latch[key];
    if (!idle_while(w, cl, e, round_over, 0))
        return false;
    uint32_t parties = settings_of(w)->parties;
    int set = w->calls->latch_set(cl, key, parties);
    /* Set already: left by an earlier run cut mid-round (on servers it
     * did not start), or by a round whose count never reached zero. The
     * coordinator starts over, as an application's does: delete, set. */
    if (set == 0 && w->calls->latch_delete(cl, key))
        set = w->calls->latch_set(cl, key, parties);
    if (set != 1) {
        pthread_mutex_lock(&st->mu);
        st->tally.set_failed++;
        pthread_mutex_unlock(&st->mu);
        w->calls->idle_until(cl, clock_mono_ns() + RETRY_NS);
        return false;
    }
    atomic_store(&e->count.sent, 0);
    atomic_store(&e->count.failed, 0);
    atomic_store(&e->count.zero_at, 0);
    atomic_store(&e->acked, 0);
    atomic_store(&e->done, 0);
    atomic_store(&e->last_ack, 0);
    atomic_fetch_add(&e->round, 1);
    pthread_mutex_lock(&st->mu);
    st->tally.rounds++;
    pthread_mutex_unlock(&st->mu);
    return true;
}

/* A party: its part, then one countDown. */
static bool party_step(struct workload *w, struct client *cl, uint32_t key, uint32_t party)
{
    struct latch_state *st = w->state;
    struct latch_entry *e = &st->latch[key];
    uint64_t *seen = &st->seen[w->calls->id(cl)];
    if (party == 0 && !open_round(w, cl, key))
        return false;
    if (!idle_while(w, cl, e, round_after, *seen))
        return false;
    *seen = atomic_load(&e->round);
    uint64_t work = w->calls->random(cl, (uint64_t)settings_of(w)->work_ms + 1);
    if (!w->calls->idle_until(cl, clock_mono_ns() + work * 1000000ULL))
        return false;
    uint64_t acked;
    if (!w->calls->latch_down(cl, key, &e->count, &acked)) {
        atomic_fetch_add(&e->count.failed, 1);
        return false;
    }
    atomic_max(&e->last_ack, acked);
    /* the last to be counted: every answer came by now, the latest of
     * them (its count_down line's time) is the zero */
    if (atomic_fetch_add(&e->acked, 1) + 1 == settings_of(w)->parties)
        atomic_store(&e->count.zero_at, atomic_load(&e->last_ack));
    return true;
}

/* The waiter's round, passed or not, judged from what its last await's
 * line says it saw, and counted in the workload's figures. */
static void judge_round(struct latch_state *st, const struct latch_keys *k,
                        const struct latch_seen *seen, uint64_t from, bool paused, int passed)
{
    struct latch_round_view v = {
        .parties = k->parties,
        .sent = seen->sent,
        .unanswered = seen->unanswered,
        .zero_ns = seen->zero_ns,
        .from_ns = from,
        .at_ns = seen->at_ns,
        .bound_ms = k->bound_ms,
    };
    pthread_mutex_lock(&st->mu);
    latch_tally_round(&st->tally, &v, passed, paused);
    pthread_mutex_unlock(&st->mu);
}

/* A waiter: await the zero, again after every wait that ran out. */
static bool waiter_step(struct workload *w, struct client *cl, uint32_t key)
{
    struct latch_state *st = w->state;
    struct latch_entry *e = &st->latch[key];
    const struct latch_keys *k = settings_of(w);
    uint64_t *seen = &st->seen[w->calls->id(cl)];
    if (!idle_while(w, cl, e, round_after, *seen))
        return false;
    *seen = atomic_load(&e->round);
    uint64_t from = 0; /* its round's first await */
    bool paused = false;
    struct latch_seen saw;
    int rc;
    for (;;) {
        rc = w->calls->latch_await(cl, key, w->run.wait_ms, &e->count, &saw);
        if (from == 0)
            from = saw.invoked_ns;
        if (saw.resumed_ns > from) {
            from = saw.resumed_ns;
            paused = true;
        }
        /* again while the run goes on (an idle of 0 asks it; a stopped
         * run's awaits return at once), after a slice when it failed */
        if (rc == 1 || !w->calls->idle_until(cl, clock_mono_ns() + (rc < 0 ? SLICE_NS : 0)))
            break;
    }
    judge_round(st, k, &saw, from, paused, rc == 1);
    atomic_fetch_add(&e->done, 1);
    return rc == 1;
}

static bool latch_step(struct workload *w, struct client *cl)
{
    const struct latch_keys *k = settings_of(w);
    uint32_t id = w->calls->id(cl), key = id / per_latch(k), role = id % per_latch(k);
    if (role < k->parties)
        return party_step(w, cl, key, role);
    return waiter_step(w, cl, key);
}

static void latch_settings(const void *settings, struct history_latch *out)
{
    const struct latch_keys *k = settings;
    *out = (struct history_latch){
        .latches = k->latches, .parties = k->parties, .bound_ms = k->bound_ms};
}

static size_t latch_invariants(const struct workload *w, struct invariant *out, size_t max)
{
    struct latch_state *st = w->state;
    struct history_latch s;
    latch_settings(w->settings, &s);
    pthread_mutex_lock(&st->mu);
    struct latch_tally t = st->tally;
    pthread_mutex_unlock(&st->mu);
    return latch_tally_invariants(&t, &s, out, max);
}

const struct workload_ops latch_ops = {
    .name = "latch",
    .summary = "a batch start behind a countdown latch: no waiter before the zero, every waiter "
               "within bound_ms after it",
    WORKLOAD_KEYS(latch_table, latch_defaults),
    .hold_key = "work_ms",
    .latch = true,
    .latch_settings = latch_settings,
    .lock_mode = LOCK_MODE_EXCLUSIVE,
    .refuses_rate = "a latch's rounds are paced by its parties and waiters",
    .check = latch_check,
    .describe = latch_describe,
    .init = latch_init,
    .free = latch_free,
    .step = latch_step,
    .invariants = latch_invariants,
};
