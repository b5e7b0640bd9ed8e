/* client_faults.c - the fault kinds a client suffers: client_pause, a
 * stop (a GC pause: its watchdog stalls with it and its connections are
 * held at the proxy), and client_crash, a death while holding the lock, a
 * new process coming back after duration_ms.
 *
 * A holder's fault is carried out in the holder's own thread
 * (sim/engine/client.c) once it has taken a lock. A pause of a waiter
 * (target "waiter") is played here, by the nemesis's thread: at at_ms it
 * picks the client that has waited longest inside acquire, holds its
 * traffic at the proxy and sets its slot's paused_until, which the
 * engine's seam (sim/engine/seam.c) obeys wherever the lock waits or
 * sleeps, so the waiter stops inside acquire with its keep-alives.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/faults/nemesis_state.h"
#include "sim/record/clock.h"

static int check_client(struct fault_check *fc)
{
    if (fault_check_no_toxic_keys(fc) < 0 || fault_check_no_data(fc) < 0 ||
        fault_check_no_restart(fc) < 0 || fault_check_no_clock_keys(fc) < 0 ||
        fault_check_no_mode(fc) < 0 || fault_check_no_side_clients(fc) < 0)
        return -1;
    return fault_check_holder_majority(fc);
}

static int check_pause(struct fault_check *fc)
{
    if (check_client(fc) < 0)
        return -1;
    return fault_check_needs_duration(fc);
}

static int check_crash(struct fault_check *fc)
{
    /* a crash inside acquire would have to unwind the lock's own call:
     * the engine only gets a waiter back at its seam */
    if (fault_checked(fc)->target == FAULT_TARGET_WAITER)
        return fault_blame(fc, "target",
                           "a client_crash strikes a holder (\"holder\", \"client:N\"); "
                           "\"waiter\" is client_pause's");
    return check_client(fc);
}

static void plan_with(const struct fault_spec *f, const char *how, char *buf, size_t len)
{
    char who[40] = "the next holder", a[32];
    if (f->target == FAULT_TARGET_WAITER)
        snprintf(who, sizeof(who), "the longest waiter inside acquire");
    else if (f->target != FAULT_TARGET_HOLDER)
        snprintf(who, sizeof(who), "client %d", (int)f->target);
    snprintf(buf, len, "%s %s, %s %s s", fault_type_name(f->kind), who, how,
             figure_seconds(f->duration_ms, a, sizeof(a)));
}

static void plan_pause(const struct fault_spec *f, char *buf, size_t len)
{
    plan_with(f, "for", buf, len);
}

static void plan_crash(const struct fault_spec *f, char *buf, size_t len)
{
    plan_with(f, "restarts after", buf, len);
}

/* The target as the scenario wrote it ("holder", "waiter", "client:3"),
 * and for one version beside it the number report.json/3 gave it first
 * (-1 the holder, -2 the waiter, else the client). */
static void settings(const struct fault_spec *f, json_t *o)
{
    json_object_set_new(o, "target", json_string(f->target_text));
    json_object_set_new(o, "target_client", json_integer(f->target));
}

const struct fault_kind fault_client_pause = {
    .name = "client_pause",
    .number = 0,
    .summary = "the target stalls for duration_ms, as in a long GC pause: a holder "
               "inside its critical section (its lease can lapse while it still "
               "believes it holds the lock; its watchdog stalls with it), or a waiter "
               "inside acquire (its keep-alives stall with it)",
    .family = FAULT_FAMILY_CLIENT,
    .window = WINDOW_DURATION,
    .band = "client",
    .check = check_pause,
    .holds_connections = true, /* a stopped process sends nothing, and nothing reaches it */
    .holder_act = HOLDER_STALLS,
    .plan = plan_pause,
    .settings = settings,
};

const struct fault_kind fault_client_crash = {
    .name = "client_crash",
    .number = 1,
    .summary = "the target dies holding its lock without releasing it, and comes "
               "back as a new client after duration_ms; the lock must expire",
    .family = FAULT_FAMILY_CLIENT,
    .window = WINDOW_DURATION,
    .band = "client",
    .check = check_crash,
    .holder_act = HOLDER_DIES,
    .plan = plan_crash,
    .settings = settings,
};

#define WAITER_POLL_NS 1000000ull /* how soon a waiter is looked for again when none waits */

bool nemesis_has_waiter_faults(const struct nemesis *n)
{
    for (size_t i = 0; i < n->n; i++)
        if (fault_on_waiter(&n->rec[i].spec))
            return true;
    return false;
}

int nemesis_waiters_new(struct nemesis *n, uint32_t clients)
{
    if (!nemesis_has_waiter_faults(n) || clients == 0)
        return 0;
    size_t size = clients * sizeof(struct nemesis_waiter);
    n->waiters = aligned_alloc(_Alignof(struct nemesis_waiter), size);
    if (n->waiters == NULL)
        return -1;
    n->n_waiters = clients;
    for (uint32_t c = 0; c < clients; c++) {
        atomic_init(&n->waiters[c].key, 0);
        atomic_init(&n->waiters[c].waiting_since, 0);
        atomic_init(&n->waiters[c].paused_until, 0);
        atomic_init(&n->waiters[c].pause_ns, 0);
    }
    return 0;
}

struct nemesis_waiter *nemesis_waiter_slot(struct nemesis *n, uint32_t client)
{
    return client < n->n_waiters ? &n->waiters[client] : NULL;
}

static void log_waiter(struct nemesis *n, size_t i, uint64_t t, int end)
{
    struct history_event e;
    nemesis_fault_event(n, i, t, end, n->rec[i].client, &e);
    history_append(n->hist, &e);
}

void nemesis_waiter_start(struct nemesis *n, size_t i)
{
    struct fault_record *r = &n->rec[i];
    uint64_t now = clock_mono_ns(), since = UINT64_MAX;
    uint32_t who = UINT32_MAX;
    for (uint32_t c = 0; c < n->n_waiters; c++) {
        const struct nemesis_waiter *w = &n->waiters[c];
        uint64_t t = atomic_load_explicit(&w->waiting_since, memory_order_acquire);
        if (t != 0 && t < since && atomic_load(&w->paused_until) == 0)
            since = t, who = c;
    }
    if (who == UINT32_MAX) {
        n->due_ns[i] = now + WAITER_POLL_NS; /* nobody waits yet: look again soon */
        return;
    }
    struct nemesis_waiter *w = &n->waiters[who];
    uint64_t ns = r->spec.duration_ms * 1000000u;
    r->fired = true;
    r->client = who;
    r->key = atomic_load_explicit(&w->key, memory_order_relaxed);
    r->start_ns = now;
    snprintf(r->detail, sizeof(r->detail),
             "paused client %" PRIu32 ", waiting inside acquire for %.3f s", who,
             (double)(now - since) / 1e9);
    nemesis_hold_client(n, (int)i, who, true); /* no traffic from the moment it stops */
    atomic_store_explicit(&w->pause_ns, ns, memory_order_relaxed);
    atomic_store_explicit(&w->paused_until, now + ns, memory_order_release);
    n->end_due_ns[i] = now + ns;
    log_waiter(n, i, now, 0);
}

void nemesis_waiter_end(struct nemesis *n, size_t i, bool healed)
{
    struct fault_record *r = &n->rec[i];
    atomic_store_explicit(&n->waiters[r->client].paused_until, 0, memory_order_release);
    nemesis_hold_client(n, (int)i, r->client, false);
    r->end_ns = clock_mono_ns();
    r->ended = true;
    r->healed = healed;
    snprintf(r->end_detail, sizeof(r->end_detail), "client %" PRIu32 " went on%s", r->client,
             healed ? " as the run ended" : "");
    log_waiter(n, i, r->end_ns, 1);
}
