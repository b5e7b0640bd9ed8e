/* client_hold.c - a holder's time inside its critical section: the
 * watchdog's renewals (and a kept lease's), and the faults the nemesis
 * aims at a holder: a pause that stops the whole client, a network fault
 * on its connections, a crash that ends its sections and starts a new
 * life.
 */
#include "sim/engine/client.h"

#include "sim/engine/client_log.h"
#include "sim/engine/resource.h"
#include "sim/engine/run_ctx.h"
#include "sim/faults/nemesis.h"
#include "sim/record/clock.h"
#include "sim/record/history.h"
#include "sim/workloads/workload.h"

#define NS_PER_MS 1000000ULL

/* One renewal (the watchdog's, or the kept lease's) of a lock this client
 * holds on key. */
void cl_renew_grant(struct client *cl, uint32_t key, struct lock_grant *g, uint64_t *next_renew_ns)
{
    uint64_t t = clock_mono_ns();
    enum lock_result r = cl->run->ops->renew(&cl->lc, g);
    uint64_t now = clock_mono_ns();
    if (r == LOCK_OK) {
        client_bump(cl, ST_RENEW_OK);
        cl_log_key(cl, key, now, HT_OK, HF_RENEW, HE_NONE, 0, 0, 0);
    } else {
        /* Like Redisson's watchdog, a failed renewal is not the business
         * code's news: the holder carries on, unaware. */
        client_bump(cl, r == LOCK_LOST ? ST_RENEW_LOST : ST_RENEW_ERR);
        if (r == LOCK_LOST) {
            cl_log_key(cl, key, now, HT_FAIL, HF_RENEW, HE_LOST, 0, 0, 0);
        } else {
            cl_note_error(cl);
            cl_log_error(cl, key, now, HF_RENEW, ST_RENEW_NO_EFFECT);
        }
    }
    *next_renew_ns = t + cl_renew_period_ns(cl->run->scn);
}

static void renew(struct client *cl)
{
    cl_renew_grant(cl, cl->key, &cl->grant, &cl->next_renew_ns);
}

static void pause_holder(struct client *cl, int idx)
{
    const struct fault_spec *f = nemesis_spec(cl->run->nem, idx);
    uint64_t t = clock_mono_ns();
    nemesis_fired(cl->run->nem, idx, cl->id, cl->key, t);
    cl_log_fault(cl, t, idx, 0);
    client_bump(cl, ST_PAUSES);
    /* The whole client stops: no renewals, no traffic. Its connections
     * carry nothing meanwhile (held at the proxy), as a stopped process's
     * would: a ZooKeeper session can expire under it. */
    nemesis_hold_client(cl->run->nem, idx, cl->id, true);
    /* A plain sleep, never the lock's idle: a stopped process drives no
     * session and sends no ping. */
    lock_sleep_until(&cl->lc, t + f->duration_ms * NS_PER_MS, &cl->run->interrupted);
    nemesis_hold_client(cl->run->nem, idx, cl->id, false);
    uint64_t end = clock_mono_ns();
    cl_log_fault(cl, end, idx, 1);
    nemesis_ended(cl->run->nem, idx, end);
}

/* A network fault aimed at the holder: in force on its connections from
 * now; the nemesis ends it. The holder goes on, unaware. */
static void strike_holder_traffic(struct client *cl, int idx)
{
    struct history_event e;
    if (nemesis_net_claimed(cl->run->nem, idx, cl->id, cl->key, &e))
        history_append(cl->hist, &e);
}

static void crash_holder(struct client *cl, int idx)
{
    struct run_ctx *run = cl->run;
    const struct fault_spec *f = nemesis_spec(run->nem, idx);
    uint64_t t = clock_mono_ns();
    nemesis_fired(run->nem, idx, cl->id, cl->key, t);
    cl_log_fault(cl, t, idx, 0);
    client_bump(cl, ST_CRASHES);
    /* Every section it was inside ends: one crash line a key closes the
     * re-entries of that key too, and the witness counted the holder once. */
    if (!cl->reentry)
        cl_log_full(cl, t, HT_INFO, HF_CRASH, HE_NONE, 0,
                    resource_leave(run->wl->res, cl->key, cl->grant.mode), 0);
    cl_record_us(cl, OP_HOLD, t, t - cl->from_ns);
    for (size_t i = cl->n_outer; i-- > 0;) {
        const struct outer_hold *o = &cl->outer[i];
        if (!o->reentry)
            cl_log_key(cl, o->key, t, HT_INFO, HF_CRASH, HE_NONE, 0,
                       resource_leave(run->wl->res, o->key, o->grant.mode), 0);
        cl_record_us(cl, OP_HOLD, t, t - o->from_ns);
    }
    cl->n_outer = 0;
    cl->reentry = false;
    /* The locks it kept die with it: their sections end here too. */
    for (size_t i = 0; i < cl->n_parked; i++) {
        const struct parked_lock *p = &cl->parked[i];
        cl_log_key(cl, p->key, t, HT_INFO, HF_CRASH, HE_NONE, 0,
                   resource_leave(run->wl->res, p->key, p->grant.mode), 0);
        cl_record_us(cl, OP_HOLD, t, t - p->from_ns);
    }
    cl->n_parked = 0;
    client_log_links(cl);
    run->ops->crash(&cl->lc); /* counts no drop of its own making (lock.h) */
    cl->connected = false;
    cl->holding = false;
    /* A new process takes the dead one's place after the restart delay,
     * with a new owner value. */
    cl_floor(cl, t);
    cl_sleep_until(cl, t + f->duration_ms * NS_PER_MS, true);
    cl->incarnation++;
    client_connect(cl); /* on failure the loop retries before the next step */
    uint64_t end = clock_mono_ns();
    cl_log_fault(cl, end, idx, 1);
    nemesis_ended(run->nem, idx, end);
}

/* Renew every held lock whose time has come, the sections it is nested
 * in too (their watchdogs run on); the next renewal's time. */
static uint64_t renew_due(struct client *cl, uint64_t now)
{
    if (now >= cl->next_renew_ns)
        renew(cl);
    uint64_t next = cl->next_renew_ns;
    for (size_t i = 0; i < cl->n_outer; i++) {
        struct outer_hold *o = &cl->outer[i];
        if (now >= o->next_renew_ns)
            cl_renew_grant(cl, o->key, &o->grant, &o->next_renew_ns);
        if (o->next_renew_ns < next)
            next = o->next_renew_ns;
    }
    return next;
}

bool client_hold(struct client *cl, uint32_t ms)
{
    int idx = cl->fault;
    if (idx >= 0) {
        cl->fault = -1;
        unsigned kind = nemesis_spec(cl->run->nem, idx)->kind;
        if (fault_kills_holder(kind)) {
            crash_holder(cl, idx);
            return false;
        }
        if (fault_on_network(kind))
            strike_holder_traffic(cl, idx);
        else
            pause_holder(cl, idx);
    }
    uint64_t now = clock_mono_ns(), end = now + (uint64_t)ms * NS_PER_MS;
    bool renews = cl->run->renews;
    for (;;) {
        cl_floor(cl, now); /* a long hold must not hold the history back */
        uint64_t next = UINT64_MAX;
        if (renews)
            next = renew_due(cl, now);
        uint64_t wake = next < end ? next : end;
        cl_sleep_until(cl, wake, true);
        now = clock_mono_ns();
        if (wake == end || now >= end ||
            atomic_load_explicit(&cl->run->interrupted, memory_order_relaxed))
            return true;
    }
}
