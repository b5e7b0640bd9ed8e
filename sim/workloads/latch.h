/* latch.h - the latch workload's judgement of one waiter, pure, so its
 * cases are tested with exact times (tests/unit/test_latch_judge.c). */
#ifndef LOCKLAB_LATCH_H
#define LOCKLAB_LATCH_H

#include <stdint.h>

/* What a waiter's round came to. */
enum latch_verdict {
    LATCH_ON_TIME = 0, /* through within the bound (or before the zero was surely there) */
    LATCH_EARLY,       /* through while fewer than parties countDowns had been sent */
    LATCH_LATE,        /* through, more than the bound after it could pass */
    LATCH_MISSED,      /* not through at the run's end, more than the bound after */
    LATCH_UNJUDGED,    /* a countDown went unanswered: the zero's time is unknown */
};

/* One round as its waiter saw it. Times are CLOCK_MONOTONIC ns. */
struct latch_round_view {
    uint32_t parties, sent; /* countDowns due, and sent when the waiter looked */
    uint32_t unanswered;    /* countDowns whose answer never came */
    uint64_t zero_ns;       /* when the last countDown had been answered; 0: not yet */
    uint64_t from_ns;       /* its first await of the round, or the end of its last pause */
    uint64_t at_ns;         /* its pass (passed) or the run's end (not) */
    uint32_t bound_ms;
};

/* The verdict; *after_ns how long after it could pass it went through
 * (or had waited, not through), 0 when it could not pass yet. */
enum latch_verdict latch_judge(const struct latch_round_view *v, int passed, uint64_t *after_ns);

#endif
