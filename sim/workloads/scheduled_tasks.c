/* scheduled_tasks.c - K instances of an application fire every task each
 * period; a tryLock (wait 0) on lock:schedule:<task>:<period> lets exactly
 * one of them run it, as ShedLock does.
 *
 * Every client is one instance, a single scheduler thread that walks its
 * firings in time order: task t of period p is due at
 *     nominal = p * period_ms + t * (period_ms / tasks)
 * and fires up to jitter_ms later (clock skew, scheduling delay), or later
 * still when the instance is behind (its try-locks take long under load).
 * The task's period ends when its next firing is due, nominal + period_ms:
 * a scheduler that is that late does not run the stale firing any more
 * (Quartz's and Spring's misfire handling), and neither does an instance
 * whose lock came only after that moment. Both are counted as skipped.
 *
 * The winner runs the task (run_ms) and keeps the lock for the hold,
 * ShedLock's lockAtLeastFor, counted from the moment the lock was taken:
 * hold_min_ms, or by default to the end of the task's period. Keeping it
 * does not stop the instance: the lock is released when the hold ends
 * (client_unlock_at), while the instance goes on firing. So with a
 * correct lock and the default hold, a task runs at most once per period
 * however late an instance fires within it.
 *
 * Each run reads and writes the (task, period)'s record in the resource
 * under the lock (so fencing can reject a stale runner), and is counted
 * apart, atomically. A second run of one (task, period) is classified:
 *   - during the previous runner's hold: two holders at once, the lock's
 *     failure (the checker sees the overlap as a violation);
 *   - after the previous hold had ended: a late instance beyond the hold,
 *     the configuration's failure (a hold too short for the lateness); the
 *     report gives the hold that would have covered it.
 * Both break the business invariant. Periods that never ran are lost
 * availability (advisory).
 */
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/record/clock.h"
#include "sim/record/figures.h"
#include "sim/record/histogram.h"
#include "sim/workloads/workload.h"

struct scheduled_tasks_keys {
    uint32_t tasks;     /* distinct tasks; every client is one instance running all */
    uint32_t period_ms; /* each task fires once per period on every instance */
    uint32_t run_ms;    /* how long one run of a task takes */
    uint32_t jitter_ms; /* an instance fires up to this late (skew, scheduling) */
    /* ShedLock's lockAtLeastFor: the winner keeps the lock this long from
     * when it took it, so a late instance cannot run the period again;
     * 0 = to the end of the task's period (its next firing), the default. */
    uint32_t hold_min_ms;
};

#define ST(m) offsetof(struct scheduled_tasks_keys, m)
static const struct setting_key tasks_keys[] = {
    {.key = "tasks", .type = SETTING_U32, .offset = ST(tasks), .min = 1, .max = 1000},
    {.key = "period_ms",
     .type = SETTING_U32,
     .offset = ST(period_ms),
     .min = 10,
     .max = SCENARIO_MS_MAX},
    {.key = "run_ms", .type = SETTING_U32, .offset = ST(run_ms), .max = SCENARIO_MS_MAX},
    {.key = "jitter_ms", .type = SETTING_U32, .offset = ST(jitter_ms), .max = SCENARIO_MS_MAX},
    {.key = "hold_min_ms", .type = SETTING_U32, .offset = ST(hold_min_ms), .max = SCENARIO_MS_MAX},
};

static const struct scheduled_tasks_keys tasks_defaults = {
    .tasks = 4, .period_ms = 1000, .run_ms = 50, .jitter_ms = 20, .hold_min_ms = 0};

static const struct scheduled_tasks_keys *settings_of(const struct workload *w)
{
    return w->settings;
}

/* The shortest hold: to the period's end from a firing jitter_ms late. */
static uint32_t tasks_hold_ms(const void *settings)
{
    const struct scheduled_tasks_keys *t = settings;
    uint32_t to_end = t->period_ms > t->jitter_ms ? t->period_ms - t->jitter_ms : 0;
    uint32_t hold = t->hold_min_ms ? t->hold_min_ms : to_end;
    return hold > t->run_ms ? hold : t->run_ms;
}

/* A task's run must fit in its slot of the period (tasks fire one after
 * another, period/tasks apart), and the run must see a whole period. */
static int tasks_check(const void *settings, const struct workload_run *run, const char *blame[2],
                       char *why, size_t len)
{
    const struct scheduled_tasks_keys *t = settings;
    uint32_t slot = t->period_ms / t->tasks;
    blame[0] = "workload";
    if (slot == 0) {
        blame[1] = "tasks";
        snprintf(why, len, "%" PRIu32 " tasks do not fit in a %" PRIu32 " ms period", t->tasks,
                 t->period_ms);
        return -1;
    }
    if (t->run_ms >= slot) {
        blame[1] = "run_ms";
        snprintf(why, len, "%" PRIu32 " must be less than period_ms / tasks (%" PRIu32 " ms)",
                 t->run_ms, slot);
        return -1;
    }
    /* The hold is counted from the acquisition and the next period has a
     * key of its own: a hold past the period protects nothing more. */
    if (t->hold_min_ms > t->period_ms) {
        blame[1] = "hold_min_ms";
        snprintf(why, len, "%" PRIu32 " must be at most period_ms (%" PRIu32 " ms)", t->hold_min_ms,
                 t->period_ms);
        return -1;
    }
    if (run->duration_ms >= 2ULL * t->period_ms)
        return 0;
    blame[0] = "duration_s";
    snprintf(why, len,
             "%" PRIu64 " ms holds no whole period of %" PRIu32
             " ms after the first (at least twice the period)",
             run->duration_ms, t->period_ms);
    return -1;
}

static bool tasks_resolve(const void *settings, const struct lock_ops *lock, char *note, size_t len)
{
    const struct scheduled_tasks_keys *t = settings;
    (void)lock;
    if (t->hold_min_ms != 0)
        return false;
    snprintf(note, len,
             "workload.hold_min_ms: 0 = the winner keeps the lock to the end of the task's period "
             "(up to %" PRIu32 " ms from acquisition)",
             t->period_ms);
    return true;
}

static void tasks_describe(const void *settings, const struct workload_run *run, char *buf,
                           size_t len)
{
    const struct scheduled_tasks_keys *t = settings;
    char hold[40] = "to period end";
    (void)run;
    if (t->hold_min_ms)
        snprintf(hold, sizeof(hold), "%" PRIu32 "ms", t->hold_min_ms);
    snprintf(buf, len,
             "scheduled_tasks tasks=%" PRIu32 " period=%" PRIu32 "ms run=%" PRIu32
             "ms jitter=%" PRIu32 "ms hold=%s from acquisition",
             t->tasks, t->period_ms, t->run_ms, t->jitter_ms, hold);
}

#define NS_PER_MS 1000000ULL
#define NS_PER_US 1000ULL

/* Per (task, period) key, written by whoever holds its lock. */
struct task_record {
    _Atomic uint32_t runs;        /* runs that took effect */
    _Atomic uint64_t first_ns;    /* when the first runner took the lock, 0 = none yet */
    _Atomic uint64_t hold_end_ns; /* the latest hold end of any runner so far */
};

struct tasks_state {
    uint64_t *next; /* per client: its next firing, task-major within a period */
    struct task_record *rec;
    uint32_t periods;
    uint32_t slot_ms; /* period_ms / tasks */
    /* per client: how late each firing fired, how long each try-lock took */
    struct histogram **lateness, **trylock;
    _Atomic uint64_t skipped_late;   /* fired when the task's next period had begun */
    _Atomic uint64_t stale_grants;   /* the lock came only after the period ended */
    _Atomic uint64_t dup_during;     /* extra runs while another held the lock */
    _Atomic uint64_t dup_late;       /* extra runs after the previous hold ended */
    _Atomic uint64_t needed_hold_ns; /* the longest hold that would have covered dup_late */
};

/* Lateness up to an hour, 2 significant digits: small per client. */
#define LATE_HIGHEST_US 3600000000LL

static int tasks_init(struct workload *w)
{
    const struct scheduled_tasks_keys *ts = settings_of(w);
    struct tasks_state *st = calloc(1, sizeof(*st));
    if (st == NULL)
        return -1;
    w->state = st;
    st->periods = (uint32_t)(w->run.duration_ms / ts->period_ms) + 1;
    st->slot_ms = ts->period_ms / ts->tasks;
    size_t n = (size_t)st->periods * ts->tasks, nc = w->run.clients;
    st->next = calloc(nc, sizeof(*st->next));
    st->lateness = calloc(nc, sizeof(*st->lateness));
    st->trylock = calloc(nc, sizeof(*st->trylock));
    w->res = w->calls->store_new(n, 0, w->run.fencing);
    st->rec = calloc(n, sizeof(*st->rec));
    if (st->next == NULL || st->rec == NULL || st->lateness == NULL || st->trylock == NULL ||
        w->res == NULL || workload_alloc_keys(w, n) < 0)
        return -1;
    for (size_t c = 0; c < nc; c++) {
        st->lateness[c] = histogram_new(1, LATE_HIGHEST_US, 2);
        st->trylock[c] = histogram_new(1, LATE_HIGHEST_US, 2);
        if (st->lateness[c] == NULL || st->trylock[c] == NULL)
            return -1;
    }
    for (size_t k = 0; k < n; k++) {
        char name[48];
        snprintf(name, sizeof(name), "lock:schedule:%zu:%zu", k % ts->tasks, k / ts->tasks);
        if (workload_set_key(w, k, name) < 0)
            return -1;
    }
    return 0;
}

static void tasks_free(struct workload *w)
{
    struct tasks_state *st = w->state;
    if (st) {
        for (size_t c = 0; st->lateness && c < w->run.clients; c++)
            histogram_free(st->lateness[c]);
        for (size_t c = 0; st->trylock && c < w->run.clients; c++)
            histogram_free(st->trylock[c]);
        free(st->lateness);
        free(st->trylock);
        free(st->next);
        free(st->rec);
    }
    free(st);
}

static void atomic_max(_Atomic uint64_t *a, uint64_t v)
{
    uint64_t cur = atomic_load(a);
    while (cur < v && !atomic_compare_exchange_weak(a, &cur, v))
        ;
}

/* This runner took the lock at acquired_ns and holds it to hold_end_ns:
 * note it, and classify the run if an earlier one took effect. */
static void note_run(struct tasks_state *st, struct task_record *r, uint64_t acquired_ns,
                     uint64_t hold_end_ns)
{
    uint64_t zero = 0;
    atomic_compare_exchange_strong(&r->first_ns, &zero, acquired_ns);
    uint64_t prev_end = atomic_load(&r->hold_end_ns);
    atomic_max(&r->hold_end_ns, hold_end_ns);
    if (atomic_fetch_add(&r->runs, 1) == 0)
        return;
    if (acquired_ns < prev_end) {
        atomic_fetch_add_explicit(&st->dup_during, 1, memory_order_relaxed);
        return;
    }
    atomic_fetch_add_explicit(&st->dup_late, 1, memory_order_relaxed);
    uint64_t first = atomic_load(&r->first_ns);
    if (acquired_ns > first)
        atomic_max(&st->needed_hold_ns, acquired_ns - first);
}

/* Run the task the lock was won for, then keep the lock for the hold. */
static void run_task(struct workload *w, struct client *cl, uint32_t key, uint64_t period_end)
{
    struct tasks_state *st = w->state;
    const struct scheduled_tasks_keys *ts = settings_of(w);
    uint64_t acquired = w->calls->section_from_ns(cl), token = w->calls->token(cl);
    if (acquired >= period_end || acquired >= w->calls->deadline_ns(cl)) {
        /* The previous holder kept it to the end of the period: this
         * firing is stale now, as one fired that late would be. Past the
         * run's end the schedulers are shutting down: holds were cut short
         * there, so a run now would be a duplicate of the run's making. */
        atomic_fetch_add_explicit(&st->stale_grants, 1, memory_order_relaxed);
        w->calls->unlock(cl, EFFECT_NONE);
        return;
    }
    int64_t runs;
    if (w->calls->store_read(w->res, key, token, &runs) == RES_FENCED) {
        w->calls->unlock(cl, EFFECT_FENCED);
        return;
    }
    uint64_t hold_end = ts->hold_min_ms ? acquired + ts->hold_min_ms * NS_PER_MS : period_end;
    if (!w->calls->hold(cl, ts->run_ms))
        return; /* crashed while running */
    enum resource_rc rc = w->calls->store_write(w->res, key, token, runs + 1);
    uint64_t now = clock_mono_ns();
    if (rc == RES_OK) /* a run longer than the hold keeps the lock to its end */
        note_run(st, &st->rec[key], acquired, hold_end > now ? hold_end : now);
    w->calls->unlock_at(cl, rc == RES_OK ? EFFECT_APPLIED : EFFECT_FENCED, hold_end);
}

static bool tasks_step(struct workload *w, struct client *cl)
{
    struct tasks_state *st = w->state;
    const struct scheduled_tasks_keys *ts = settings_of(w);
    uint64_t f = st->next[w->calls->id(cl)]++;
    uint32_t key = (uint32_t)f, period = (uint32_t)(f / ts->tasks),
             task = (uint32_t)(f % ts->tasks);
    if (period >= st->periods) {
        w->calls->idle_until(cl, w->calls->deadline_ns(cl));
        return true;
    }
    uint64_t nominal =
        w->calls->start_ns(cl) +
        ((uint64_t)period * ts->period_ms + (uint64_t)task * st->slot_ms) * NS_PER_MS;
    uint64_t period_end = nominal + (uint64_t)ts->period_ms * NS_PER_MS;
    uint64_t fire = nominal + w->calls->random(cl, (uint64_t)ts->jitter_ms * NS_PER_MS + 1);
    if (!w->calls->idle_until(cl, fire))
        return true; /* the run ended before this firing */
    uint64_t now = clock_mono_ns();
    histogram_record(st->lateness[w->calls->id(cl)], (int64_t)((now - nominal) / NS_PER_US));
    if (now >= period_end) {
        atomic_fetch_add_explicit(&st->skipped_late, 1, memory_order_relaxed);
        return true;
    }
    bool got = w->calls->lock_wait(cl, key, 0);
    histogram_record(st->trylock[w->calls->id(cl)], (int64_t)((clock_mono_ns() - now) / NS_PER_US));
    if (!got)
        return false;
    run_task(w, cl, key, period_end);
    return true;
}

static double merged_p99_ms(struct histogram *const *per_client, size_t n)
{
    struct histogram *all = histogram_new(1, LATE_HIGHEST_US, 2);
    if (all == NULL)
        return -1;
    for (size_t c = 0; c < n; c++)
        histogram_merge(all, per_client[c]);
    double ms = (double)histogram_percentile(all, 99.0) / 1000.0;
    histogram_free(all);
    return ms;
}

/* The no_duplicate_runs detail: how many, and whose fault. */
static void describe_duplicates(const struct workload *w, const struct tasks_state *st,
                                uint64_t ran, uint64_t twice, uint64_t extra, char *buf, size_t len)
{
    uint64_t during = atomic_load(&st->dup_during), late = atomic_load(&st->dup_late);
    int n = snprintf(buf, len,
                     "%" PRIu64 " (task, period) pairs ran; %" PRIu64
                     " ran more than once (%" PRIu64 " extra runs)",
                     ran, twice, extra);
    if (extra == 0 || n < 0 || (size_t)n >= len)
        return;
    buf += n, len -= (size_t)n;
    uint32_t hold =
        settings_of(w)->hold_min_ms ? settings_of(w)->hold_min_ms : settings_of(w)->period_ms;
    /* The likeliest cause, when the hold outlasts the lease with nothing to
     * renew it: what ShedLock refuses as lockAtMostFor < lockAtLeastFor. */
    bool lapsed = during && !w->run.watchdog && hold > w->run.ttl_ms;
    n = snprintf(buf, len,
                 ": %" PRIu64 " while another instance held the lock (the lock's failure%s)",
                 during,
                 lapsed ? "; the hold outlasts ttl_ms with no watchdog: a ttl lease lapses while "
                          "held, lockAtMostFor < lockAtLeastFor"
                        : "");
    if (late == 0 || n < 0 || (size_t)n >= len)
        return;
    buf += n, len -= (size_t)n;
    snprintf(buf, len,
             ", %" PRIu64 " by a late instance beyond hold (the configuration's: firing lateness "
             "p99 %.1f ms, try-lock p99 %.1f ms; a hold of %" PRIu64 " ms would have covered them)",
             late, merged_p99_ms(st->lateness, w->run.clients),
             merged_p99_ms(st->trylock, w->run.clients),
             (uint64_t)(atomic_load(&st->needed_hold_ns) / NS_PER_MS + 1));
}

static size_t tasks_invariants(const struct workload *w, struct invariant *out, size_t max)
{
    const struct tasks_state *st = w->state;
    const struct scheduled_tasks_keys *ts = settings_of(w);
    uint64_t due = 0, ran = 0, twice = 0, extra = 0, missed = 0;
    for (size_t k = 0; k < w->n_keys; k++) {
        uint64_t n = atomic_load(&st->rec[k].runs);
        uint64_t start_ms = (k / ts->tasks) * ts->period_ms + (k % ts->tasks) * st->slot_ms;
        /* only firings that every instance reaches inside the run, jitter
         * and run included, were due */
        bool was_due = start_ms + ts->jitter_ms + ts->run_ms + st->slot_ms <= w->run.duration_ms;
        due += was_due;
        ran += n > 0;
        twice += n > 1;
        extra += n > 1 ? n - 1 : 0;
        missed += was_due && n == 0;
    }
    if (max < 2)
        return 0;
    /* a late instance beyond the hold runs twice with no overlap at all */
    out[0] = (struct invariant){.name = "no_duplicate_runs",
                                .holds = twice == 0,
                                .by_overlaps = atomic_load(&st->dup_late) == 0};
    describe_duplicates(w, st, ran, twice, extra, out[0].detail, sizeof(out[0].detail));
    out[1] = (struct invariant){.name = "every_period_ran", .holds = missed == 0, .advisory = true};
    snprintf(out[1].detail, sizeof(out[1].detail),
             "%" PRIu64 " of %" PRIu64 " due (task, period) pairs never ran (lost availability); "
             "%" PRIu64 " firings skipped as stale (fired or granted after the period)",
             missed, due, atomic_load(&st->skipped_late) + atomic_load(&st->stale_grants));
    return 2;
}

const struct workload_ops scheduled_tasks_ops = {
    .name = "scheduled_tasks",
    .summary = "instances firing tasks each period: each runs exactly once",
    WORKLOAD_KEYS(tasks_keys, tasks_defaults),
    .hold_ms = tasks_hold_ms,
    .needs_exclusion = "a task's run",
    .lock_mode = LOCK_MODE_EXCLUSIVE,
    .refuses_rate = "scheduled_tasks fires on its own timetable",
    .check = tasks_check,
    .resolve = tasks_resolve,
    .describe = tasks_describe,
    .init = tasks_init,
    .free = tasks_free,
    .step = tasks_step,
    .invariants = tasks_invariants,
};
