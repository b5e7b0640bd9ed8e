/* measures.h - what a run times and counts, by index: the operations that
 * each get a latency histogram, and the counters every client keeps. Plain
 * numbers, shared by the clients that record them and the result and
 * reports that read them. */
#ifndef LOCKLAB_MEASURES_H
#define LOCKLAB_MEASURES_H

enum op_kind {
    OP_ACQUIRE = 0,    /* successful acquire: invoke to grant */
    OP_ACQUIRE_FAILED, /* busy (wait elapsed) or error */
    OP_RELEASE,
    OP_HOLD, /* grant to release: how long the lock was held */
    OP_STEP, /* one whole business step */
    OP_COUNT
};

enum stat_kind {
    ST_STEPS = 0,
    ST_ACQUIRE_OK,
    ST_ACQUIRE_BUSY,
    ST_ACQUIRE_ERR,
    ST_RELEASE_OK,
    ST_RELEASE_LOST,
    ST_RELEASE_ERR,
    ST_RENEW_OK,
    ST_RENEW_LOST,
    ST_RENEW_ERR,
    ST_CRASHES,
    ST_PAUSES,
    ST_CONNECT_ERR, /* (re)connecting failed */
    /* of the *_ERR above: the ones surely not in effect (no effect: the
     * request never left, LOCK_ERR_UNSENT, or was refused or undone,
     * LOCK_ERR_REFUSED); the rest are ambiguous (sent, no answer) */
    ST_ACQUIRE_NO_EFFECT,
    ST_RELEASE_NO_EFFECT,
    ST_RENEW_NO_EFFECT,
    /* a waiter's wake-ups inside acquire (lock_client.woken_by_*): by the
     * service's notice, by its own timer */
    ST_WOKEN_NOTICE,
    ST_WOKEN_TIMER,
    /* acquires the run's token bucket refused before they were sent
     * (lock.rate_limit: sim/engine/limiter.h) */
    ST_ACQUIRE_LIMITED,
    /* a workload's circuit breaker (flash_sale's breaker_*): the times it
     * opened, the steps it served by its degrade path meanwhile, and the
     * orders those made */
    ST_BREAKER_OPENED,
    ST_DEGRADED_STEPS,
    ST_DEGRADED_ORDERS,
    ST_COUNT
};

#endif
