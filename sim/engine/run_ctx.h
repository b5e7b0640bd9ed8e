/* run_ctx.h - what every client of a run shares, read-only except the flags.
 * The call that makes a run (fleet, proxy, runner, nemesis, result) is
 * engine.h's, kept apart so that clients and workloads never see it. */
#ifndef LOCKLAB_RUN_CTX_H
#define LOCKLAB_RUN_CTX_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "algorithms/lock.h"
#include "sim/scenario/scenario.h"

struct workload;
struct nemesis;

struct run_ctx {
    const struct scenario *scn;
    const struct lock_ops *ops;
    const struct lock_config *cfg;
    struct workload *wl;
    struct nemesis *nem;
    bool renews; /* holders renew every renew_ms: a watchdog, or a kept lease (scenario_renews) */
    struct limiter *limiter; /* lock.rate_limit's token bucket; NULL: none */
    atomic_int stop;         /* set: finish the step at hand, then leave */
    _Atomic int interrupted; /* set: stop cutting sleeps short too (Ctrl-C) */
    uint64_t t0_ns;          /* CLOCK_MONOTONIC at the start line */
    uint64_t deadline_ns;
    char run_id[17]; /* random hex, in every owner value of this run */
};

static inline int run_stopping(struct run_ctx *r)
{
    return atomic_load_explicit(&r->stop, memory_order_relaxed);
}

#endif
