/* latch_check.h - a countdown latch's judgement (the latch workload's
 * invariants, sim/workloads/latch.c): one waiter's round, pure, so its
 * cases are tested with exact times (tests/unit/test_latch_judge.c); the
 * figures over a run's rounds and the two invariants they make, worded
 * once for the run and for `locklab check`; and the same figures made from
 * a history's latch lines (docs/history.md, "latches"), one event at a
 * time, as check_pass.h feeds its other consumers. */
#ifndef LOCKLAB_LATCH_CHECK_H
#define LOCKLAB_LATCH_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/check/invariant.h"
#include "sim/record/history.h"

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
    uint64_t at_ns;         /* its pass (passed) or its last await's return (not) */
    uint32_t bound_ms;
};

/* The verdict; *after_ns how long after it could pass it went through
 * (or had waited, not through), 0 when it could not pass yet. */
enum latch_verdict latch_judge(const struct latch_round_view *v, int passed, uint64_t *after_ns);

/* The figures of a run's rounds, what the invariants say. */
struct latch_tally {
    uint64_t rounds;      /* trySetCounts that set the count */
    uint64_t set_failed;  /* a coordinator's tries that began no round */
    uint64_t passes;      /* waiters through */
    uint64_t early, late; /* through before the zero; through past the bound */
    uint64_t missed;      /* not through by the end, past the bound */
    uint64_t judged_out;  /* through, a countDown of the round unanswered */
    uint64_t after_pause; /* through, paused through the zero: judged from the resumption */
    uint64_t slowest_ns;  /* the slowest pass after its waiter could pass */
    uint32_t fewest_sent; /* the fewest countDowns sent under an early pass (UINT32_MAX: none) */
};

void latch_tally_init(struct latch_tally *t);
/* One waiter's round, judged and counted: passed or not, paused when a
 * pause inside one of its awaits moved from_ns. */
enum latch_verdict latch_tally_round(struct latch_tally *t, const struct latch_round_view *v,
                                     bool passed, bool paused);
/* no_pass_before_zero and every_waiter_within_bound into out; how many (2,
 * or 0 when max is smaller). */
size_t latch_tally_invariants(const struct latch_tally *t, const struct history_latch *s,
                              struct invariant *out, size_t max);

/* The figures from a history's latch lines: each waiter's rounds rebuilt
 * from its await lines (its first invoke of a round, the resumptions its
 * results name, its pass; a round not passed is judged at its last
 * result), each round judged from what its result line says the waiter
 * saw, the rounds counted from the trySetCounts that set. State: a few
 * words per client. */
struct latch_check;
struct latch_check *latch_check_begin(const struct history_latch *s); /* NULL: out of memory */
/* 0; -1 out of memory. Events of no latch are ignored. */
int latch_check_event(struct latch_check *c, const struct history_event *e);
/* The history ended: the rounds still open judged, the figures into *out;
 * c freed. */
void latch_check_end(struct latch_check *c, struct latch_tally *out);
void latch_check_free(struct latch_check *c); /* accepts NULL */

#endif
