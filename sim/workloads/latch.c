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
 * A Redis restarted without its data has lost the count: Redisson's
 * getCount reads the missing key as 0, and its waiters pass while the
 * parties still work. That breaks the batch's promise, and this workload
 * says so (no_pass_before_zero), whoever is to blame.
 */
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "sim/record/clock.h"
#include "sim/workloads/latch.h"
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
    _Alignas(64) _Atomic uint64_t round;  /* the round set and open; 0: none yet */
    _Atomic uint32_t sent, acked, failed; /* its countDowns: sent, answered, no answer */
    _Atomic uint32_t done;                /* its waiters through (or gone at the run's end) */
    _Atomic uint64_t zero_at;             /* the last countDown's answer (0: not yet all) */
};

struct latch_state {
    struct latch_entry *latch; /* per key */
    uint64_t *seen;            /* per client: the last round it took part in */
    _Atomic uint64_t rounds, passes, early, late, missed, judged_out, set_failed;
    _Atomic uint64_t after_pause; /* passes of waiters paused through the zero */
    _Atomic uint32_t fewest_sent; /* the fewest countDowns sent under an early pass */
    _Atomic uint64_t slowest_ns;  /* the slowest pass after the waiter could pass */
};

static int latch_init(struct workload *w)
{
    const struct latch_keys *k = settings_of(w);
    struct latch_state *st = calloc(1, sizeof(*st));
    if (st == NULL)
        return -1;
    w->state = st;
    st->latch = aligned_alloc(64, sizeof(*st->latch) * k->latches);
    st->seen = calloc((size_t)k->latches * per_latch(k), sizeof(*st->seen));
    w->res = w->calls->store_new(k->latches, 0, w->run.fencing);
    if (st->latch == NULL || st->seen == NULL || w->res == NULL ||
        workload_alloc_keys(w, k->latches) < 0)
        return -1;
    atomic_init(&st->fewest_sent, UINT32_MAX);
    for (uint32_t i = 0; i < k->latches; i++) {
        struct latch_entry *e = &st->latch[i];
        atomic_init(&e->round, 0);
        atomic_init(&e->sent, 0);
        atomic_init(&e->acked, 0);
        atomic_init(&e->failed, 0);
        atomic_init(&e->done, 0);
        atomic_init(&e->zero_at, 0);
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
    }
    free(st);
}

static void atomic_max(_Atomic uint64_t *at, uint64_t v)
{
    uint64_t old = atomic_load(at);
    while (v > old && !atomic_compare_exchange_weak(at, &old, v))
        ;
}

static void atomic_min32(_Atomic uint32_t *at, uint32_t v)
{
    uint32_t old = atomic_load(at);
    while (v < old && !atomic_compare_exchange_weak(at, &old, v))
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
           (atomic_load(&e->acked) + atomic_load(&e->failed) == k->parties &&
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
        atomic_fetch_add_explicit(&st->set_failed, 1, memory_order_relaxed);
        w->calls->idle_until(cl, clock_mono_ns() + RETRY_NS);
        return false;
    }
    atomic_store(&e->sent, 0);
    atomic_store(&e->acked, 0);
    atomic_store(&e->failed, 0);
    atomic_store(&e->done, 0);
    atomic_store(&e->zero_at, 0);
    atomic_fetch_add(&e->round, 1);
    atomic_fetch_add_explicit(&st->rounds, 1, memory_order_relaxed);
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
    uint64_t sent, acked;
    atomic_fetch_add(&e->sent, 1); /* before it leaves: a pass it makes sees it */
    if (!w->calls->latch_down(cl, key, &sent, &acked)) {
        atomic_fetch_add(&e->failed, 1);
        return false;
    }
    (void)sent;
    (void)acked;
    /* the last to be counted: every answer came by now */
    if (atomic_fetch_add(&e->acked, 1) + 1 == settings_of(w)->parties)
        atomic_store(&e->zero_at, clock_mono_ns());
    return true;
}

enum latch_verdict latch_judge(const struct latch_round_view *v, int passed, uint64_t *after_ns)
{
    *after_ns = 0;
    if (v->unanswered > 0)
        return LATCH_UNJUDGED;
    if (passed && v->sent < v->parties)
        return LATCH_EARLY;
    if (v->zero_ns == 0)
        return LATCH_ON_TIME; /* before the last answer came: not yet due */
    uint64_t start = v->zero_ns > v->from_ns ? v->zero_ns : v->from_ns;
    *after_ns = v->at_ns > start ? v->at_ns - start : 0;
    if (*after_ns <= (uint64_t)v->bound_ms * 1000000ULL)
        return LATCH_ON_TIME;
    return passed ? LATCH_LATE : LATCH_MISSED;
}

/* The waiter's round, passed or not (at_ns: its pass, or now), counted
 * in the workload's figures. */
static void judge_round(struct latch_state *st, const struct latch_entry *e,
                        const struct latch_keys *k, uint64_t from, bool resumed, int passed)
{
    struct latch_round_view v = {
        .parties = k->parties,
        .sent = atomic_load(&e->sent),
        .unanswered = atomic_load(&e->failed),
        .zero_ns = atomic_load(&e->zero_at),
        .from_ns = from,
        .at_ns = clock_mono_ns(),
        .bound_ms = k->bound_ms,
    };
    uint64_t after;
    enum latch_verdict verdict = latch_judge(&v, passed, &after);
    if (passed)
        atomic_fetch_add_explicit(&st->passes, 1, memory_order_relaxed);
    if (passed && verdict != LATCH_UNJUDGED && after > 0)
        atomic_max(&st->slowest_ns, after);
    /* paused through the zero: judged from its resumption */
    if (passed && resumed && v.zero_ns != 0 && from > v.zero_ns)
        atomic_fetch_add_explicit(&st->after_pause, 1, memory_order_relaxed);
    _Atomic uint64_t *count[] = {
        [LATCH_ON_TIME] = NULL,
        [LATCH_EARLY] = &st->early,
        [LATCH_LATE] = &st->late,
        [LATCH_MISSED] = &st->missed,
        [LATCH_UNJUDGED] = passed ? &st->judged_out : NULL,
    };
    if (count[verdict])
        atomic_fetch_add_explicit(count[verdict], 1, memory_order_relaxed);
    if (verdict == LATCH_EARLY)
        atomic_min32(&st->fewest_sent, v.sent);
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
    uint64_t from = clock_mono_ns();
    bool paused = false;
    int rc;
    for (;;) {
        uint64_t resumed = 0;
        rc = w->calls->latch_await(cl, key, w->run.wait_ms, &resumed);
        if (resumed > from) {
            from = resumed;
            paused = true;
        }
        /* again while the run goes on (an idle of 0 asks it; a stopped
         * run's awaits return at once), after a slice when it failed */
        if (rc == 1 || !w->calls->idle_until(cl, clock_mono_ns() + (rc < 0 ? SLICE_NS : 0)))
            break;
    }
    judge_round(st, e, k, from, paused, rc == 1);
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

static size_t latch_invariants(const struct workload *w, struct invariant *out, size_t max)
{
    const struct latch_state *st = w->state;
    const struct latch_keys *k = settings_of(w);
    if (max < 2)
        return 0;
    uint64_t early = atomic_load(&st->early), late = atomic_load(&st->late);
    uint64_t missed = atomic_load(&st->missed), passes = atomic_load(&st->passes);
    uint32_t fewest = atomic_load(&st->fewest_sent);
    out[0] = (struct invariant){.name = "no_pass_before_zero", .holds = early == 0};
    snprintf(out[0].detail, sizeof(out[0].detail),
             "%" PRIu64 " rounds of %" PRIu32 " latch(es), %" PRIu64 " passes; %" PRIu64
             " passed before the count reached zero (the fewest countDowns sent then: %" PRIu32
             " of %" PRIu32 ")",
             atomic_load(&st->rounds), k->latches, passes, early, early ? fewest : k->parties,
             k->parties);
    out[1] =
        (struct invariant){.name = "every_waiter_within_bound", .holds = late == 0 && missed == 0};
    snprintf(out[1].detail, sizeof(out[1].detail),
             "the slowest pass came %.1f ms after its waiter could pass (bound %" PRIu32
             " ms; %" PRIu64
             " waiters paused through the zero, judged from their resumption); %" PRIu64
             " later than the bound, %" PRIu64 " never through by the end; %" PRIu64
             " passes not judged (a countDown unanswered); %" PRIu64
             " rounds not begun (trySetCount failed)",
             (double)atomic_load(&st->slowest_ns) / 1e6, k->bound_ms, atomic_load(&st->after_pause),
             late, missed, atomic_load(&st->judged_out), atomic_load(&st->set_failed));
    return 2;
}

const struct workload_ops latch_ops = {
    .name = "latch",
    .summary = "a batch start behind a countdown latch: no waiter before the zero, every waiter "
               "within bound_ms after it",
    WORKLOAD_KEYS(latch_table, latch_defaults),
    .hold_key = "work_ms",
    .latch = true,
    .lock_mode = LOCK_MODE_EXCLUSIVE,
    .refuses_rate = "a latch's rounds are paced by its parties and waiters",
    .check = latch_check,
    .describe = latch_describe,
    .init = latch_init,
    .free = latch_free,
    .step = latch_step,
    .invariants = latch_invariants,
};
