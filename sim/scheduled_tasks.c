/* scheduled_tasks.c - K instances of an application fire every task each
 * period; a tryLock (wait 0) on lock:schedule:<task>:<period> lets exactly
 * one of them run it.
 *
 * Every client is one instance, a single scheduler thread that walks its
 * firings in time order: task t of period p fires at
 *     p * period_ms + t * (period_ms / tasks) + jitter,
 * jitter uniform in [0, jitter_ms] per instance and firing (clock skew,
 * scheduling delay). The winner runs the task (run_ms), then keeps the
 * lock until hold_min_ms after the nominal firing time, as ShedLock's
 * lockAtLeastFor does: an instance firing late by less than that finds the
 * lock still taken. One firing later than that would be a genuine
 * duplicate: the lock was free again and the key is still this period's.
 * Losers move on to their next firing.
 *
 * Each run reads and writes the (task, period)'s record in the resource
 * under the lock (so fencing can reject a stale runner), and is counted
 * apart, atomically: two runners inside at once would both write "ran
 * once" into the record, but both did run. Duplicates break safety,
 * periods that never ran are lost availability (advisory).
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

struct tasks_state {
    uint64_t *next;         /* per client: its next firing, task-major within a period */
    _Atomic uint32_t *runs; /* per (task, period) key: runs that took effect */
    uint32_t periods;
    uint32_t slot_ms; /* period_ms / tasks */
    uint32_t hold_min_ms;
};

static int tasks_init(struct workload *w)
{
    const struct scheduled_tasks_spec *ts = &w->scn->scheduled_tasks;
    struct tasks_state *st = calloc(1, sizeof(*st));
    if (st == NULL)
        return -1;
    w->state = st;
    st->periods = (uint32_t)(w->scn->duration_ms / ts->period_ms) + 1;
    st->slot_ms = ts->period_ms / ts->tasks;
    st->hold_min_ms = ts->hold_min_ms ? ts->hold_min_ms : st->slot_ms / 2;
    size_t n = (size_t)st->periods * ts->tasks;
    st->next = calloc(w->scn->clients, sizeof(*st->next));
    w->res = resource_new(n, 0, w->scn->fencing);
    st->runs = calloc(n, sizeof(*st->runs));
    if (st->next == NULL || st->runs == NULL || w->res == NULL || workload_alloc_keys(w, n) < 0)
        return -1;
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
        free(st->next);
        free((void *)st->runs);
    }
    free(st);
}

/* Run the task the lock was won for, then hold until hold_min after the
 * nominal firing. */
static void run_task(struct workload *w, struct client *cl, uint32_t key, uint64_t nominal_ns)
{
    const struct tasks_state *st = w->state;
    uint64_t token = client_token(cl);
    int64_t runs;
    if (resource_read(w->res, key, token, &runs) == RES_FENCED) {
        client_unlock(cl, EFFECT_FENCED);
        return;
    }
    if (!client_hold(cl, w->scn->scheduled_tasks.run_ms))
        return; /* crashed while running */
    enum resource_rc rc = resource_write(w->res, key, token, runs + 1);
    if (rc == RES_OK)
        atomic_fetch_add_explicit(&st->runs[key], 1, memory_order_relaxed);
    uint64_t until = nominal_ns + st->hold_min_ms * NS_PER_MS, now = clock_mono_ns();
    if (until > now && !client_hold(cl, (uint32_t)((until - now + NS_PER_MS - 1) / NS_PER_MS)))
        return;
    client_unlock(cl, rc == RES_OK ? EFFECT_APPLIED : EFFECT_FENCED);
}

static bool tasks_step(struct workload *w, struct client *cl)
{
    struct tasks_state *st = w->state;
    const struct scheduled_tasks_spec *ts = &w->scn->scheduled_tasks;
    uint64_t f = st->next[cl->id]++;
    uint32_t key = (uint32_t)f, period = (uint32_t)(f / ts->tasks),
             task = (uint32_t)(f % ts->tasks);
    if (period >= st->periods) {
        client_idle_until(cl, cl->run->deadline_ns);
        return true;
    }
    uint64_t nominal =
        cl->run->t0_ns +
        ((uint64_t)period * ts->period_ms + (uint64_t)task * st->slot_ms) * NS_PER_MS;
    uint64_t fire = nominal + client_random(cl, (uint64_t)ts->jitter_ms * NS_PER_MS + 1);
    if (!client_idle_until(cl, fire))
        return true; /* the run ended before this firing */
    if (!client_lock_wait(cl, key, 0))
        return false;
    run_task(w, cl, key, nominal);
    return true;
}

static size_t tasks_invariants(const struct workload *w, struct invariant *out, size_t max)
{
    const struct tasks_state *st = w->state;
    const struct scheduled_tasks_spec *ts = &w->scn->scheduled_tasks;
    uint64_t due = 0, ran = 0, twice = 0, extra = 0, missed = 0;
    for (size_t k = 0; k < w->n_keys; k++) {
        int64_t n = atomic_load(&st->runs[k]);
        uint64_t start_ms = (k / ts->tasks) * ts->period_ms + (k % ts->tasks) * st->slot_ms;
        /* only firings whose whole slot lies inside the run were due */
        bool was_due = start_ms + st->slot_ms <= w->scn->duration_ms;
        due += was_due;
        ran += n > 0;
        twice += n > 1;
        extra += n > 1 ? (uint64_t)(n - 1) : 0;
        missed += was_due && n == 0;
    }
    if (max < 2)
        return 0;
    out[0] = (struct invariant){.name = "no_duplicate_runs", .holds = twice == 0};
    snprintf(out[0].detail, sizeof(out[0].detail),
             "%" PRIu64 " (task, period) pairs ran; %" PRIu64 " ran more than once (%" PRIu64
             " extra runs)",
             ran, twice, extra);
    out[1] = (struct invariant){.name = "every_period_ran", .holds = missed == 0, .advisory = true};
    snprintf(out[1].detail, sizeof(out[1].detail),
             "%" PRIu64 " of %" PRIu64 " due (task, period) pairs never ran (lost availability)",
             missed, due);
    return 2;
}

const struct workload_ops scheduled_tasks_ops = {
    .name = "scheduled_tasks",
    .init = tasks_init,
    .free = tasks_free,
    .step = tasks_step,
    .invariants = tasks_invariants,
};
