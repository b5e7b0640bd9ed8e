/* metrics.c - a running run's figures for the metrics endpoint (see
 * metrics.h), read off the endpoint's thread while the clients write them. */
#include "sim/engine/metrics.h"

#include <pthread.h>
#include <stdio.h>

#include "sim/engine/client.h"
#include "sim/engine/resource.h"
#include "sim/engine/runner_state.h"
#include "sim/engine/tally.h"
#include "sim/faults/nemesis.h"
#include "sim/record/clock.h"
#include "sim/workloads/workload.h"

/* One operation's outcomes summed over the clients. The errors are loaded
 * before their no-effect part, with acquire ordering: a client counts an
 * error's no-effect part first (client_bump_release), so every error
 * loaded has its part in no_effect, and errors - no_effect is never more
 * than the ambiguous ones (a later no-effect one may make it less). */
static void outcomes(const struct runner *r, enum stat_kind ok, enum stat_kind refused,
                     enum stat_kind errors, enum stat_kind no_effect, uint64_t out[MO_COUNT])
{
    uint64_t err = 0, lost = 0, done = 0, sure = 0;
    for (uint32_t i = 0; i < r->n; i++) {
        const struct client *cl = &r->clients[i];
        err += atomic_load_explicit(&cl->stat[errors], memory_order_acquire);
        sure += client_stat(cl, no_effect);
        done += client_stat(cl, ok);
        lost += client_stat(cl, refused);
    }
    out[MO_OK] = done;
    out[MO_REFUSED] = lost;
    out[MO_NO_EFFECT] = sure;
    /* a lower bound: kept from going down while a no-effect one catches up */
    if (err > sure && err - sure > out[MO_AMBIGUOUS])
        out[MO_AMBIGUOUS] = err - sure;
}

static void faults(const struct runner *r, struct metrics *m)
{
    const struct scenario *s = r->run.scn;
    uint64_t on = nemesis_active(r->run.nem);
    m->n_faults = s->n_faults;
    for (size_t i = 0; i < s->n_faults && i < SCENARIO_MAX_FAULTS; i++) {
        m->faults[i].kind = fault_type_name(s->faults[i].kind);
        snprintf(m->faults[i].target, sizeof(m->faults[i].target), "%s", s->faults[i].target_text);
        m->faults[i].active = (on >> i) & 1u;
    }
}

/* The time the run has lasted: to now, or once every client has left, to
 * the last one's leaving (report.json's elapsed_s). Their left_ns are
 * theirs to write until they say they are gone, under r->mu. */
static void elapsed(struct runner *r, struct metrics *m)
{
    pthread_mutex_lock(&r->mu);
    int go = r->go;
    m->clients_running = go > 0 ? r->running : 0;
    pthread_mutex_unlock(&r->mu);
    m->started = go > 0;
    if (!m->started) /* the start line's time is not set yet */
        return;
    uint64_t end = clock_mono_ns();
    if (m->clients_running == 0) {
        end = r->run.t0_ns;
        for (uint32_t i = 0; i < r->n; i++)
            if (r->clients[i].left_ns > end)
                end = r->clients[i].left_ns;
    }
    m->elapsed_s = (double)(end - r->run.t0_ns) / 1e9;
}

void metrics_read(struct runner *r, struct metrics *m)
{
    const struct scenario *s = r->run.scn;
    snprintf(m->scenario, sizeof(m->scenario), "%s", s->name);
    snprintf(m->algorithm, sizeof(m->algorithm), "%s", r->run.ops->name);
    m->clients = r->n;
    elapsed(r, m);
    outcomes(r, ST_ACQUIRE_OK, ST_ACQUIRE_BUSY, ST_ACQUIRE_ERR, ST_ACQUIRE_NO_EFFECT, m->acquire);
    outcomes(r, ST_RELEASE_OK, ST_RELEASE_LOST, ST_RELEASE_ERR, ST_RELEASE_NO_EFFECT, m->release);
    m->steps = 0;
    for (uint32_t i = 0; i < r->n; i++)
        m->steps += client_stat(&r->clients[i], ST_STEPS);
    m->concurrent_entries = resource_concurrent_entries(r->run.wl->res);
    for (unsigned b = 0; b <= LIVE_LE_COUNT; b++)
        m->latency[b] = 0;
    m->latency_sum_us = 0;
    for (uint32_t t = 0; t < r->n_threads; t++)
        live_totals(&r->tallies[t].live, m->latency, &m->latency_sum_us);
    faults(r, m);
}
