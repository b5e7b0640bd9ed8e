/* runner_state.h - the runner's insides, shared by runner.c (the client
 * threads: start line, loop, stop), collect.c (after the join: the
 * merged measurements, the history, the checker) and metrics.c (the
 * counters read while the clients run). Nothing else includes it;
 * everyone else holds a struct runner through runner.h. */
#ifndef LOCKLAB_RUNNER_STATE_H
#define LOCKLAB_RUNNER_STATE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "algorithms/lock.h"
#include "sim/engine/client.h"
#include "sim/engine/run_ctx.h"
#include "sim/engine/runner.h"
#include "sim/scenario/scenario.h"

struct history_buf;
struct hiccup;
struct journal;
struct run_record;
struct tally;
struct tally_sealer;
struct worker;

struct runner {
    struct run_ctx run;
    struct client *clients;
    uint32_t n;
    size_t tl_len;
    /* The OS threads: one per worker, each running its clients as
     * coroutines. */
    struct worker **workers;     /* n_threads of them */
    struct tally *tallies;       /* one per thread */
    struct tally_sealer *sealer; /* seals the workers' seconds off their threads; NULL: none */
    pthread_t *threads;
    uint32_t n_threads;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    uint32_t ready, failed, running;
    uint32_t reported; /* threads that have said how their clients connected */
    int go;            /* 1 = start, -1 = abandon */
    uint32_t started;  /* threads */
    uint64_t t0_wall_ns;
    char first_error[LOCK_ERRSTR_MAX + 32];
    bool nemesis_failed;           /* its thread could not start: the faults were not played */
    struct history_buf *stall_log; /* the host stall meter's history */
    struct hiccup *meter;          /* NULL: not running */
    bool meter_ran;                /* its thread started */
    struct lock_config *cfgs;      /* per proxy group: the endpoints its listeners give */
    struct journal *journal;       /* the history's file (record.h); NULL: an unnamed one */
    struct run_record *rec;        /* the history on its way there; NULL: not started */
    char record_error[256];        /* why it could not start ("": it did) */
};

/* Client id's part of the scenario's request quota (requests > 0). */
static inline uint64_t request_share(const struct scenario *s, uint32_t id)
{
    return s->requests / s->clients + (id < s->requests % s->clients);
}

/* Open loop: when step k of this client is due. Client i of n starts at
 * i/rate and then every n/rate seconds, so together they keep the rate. */
static inline uint64_t step_due(const struct client *cl, uint64_t k)
{
    const struct scenario *s = cl->run->scn;
    double at_s = ((double)cl->id + (double)k * (double)s->clients) / s->rate;
    /* past the end: never converted, a double that large has no uint64 */
    if (at_s * 1e9 >= (double)(cl->run->deadline_ns - cl->run->t0_ns))
        return UINT64_MAX;
    return cl->run->t0_ns + (uint64_t)(at_s * 1e9);
}

/* Join every thread started (runner.c); collect.c calls it first. */
void runner_join(struct runner *r);

#endif
