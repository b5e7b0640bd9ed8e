/* result.c - the verdict of a run, and freeing what it holds. */
#include "result.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "histogram.h"

static void add_expect(struct run_result *r, const char *what, const struct expect_num *want,
                       uint64_t got)
{
    if (want->op == EXPECT_UNSET || r->n_expects >= RESULT_MAX_EXPECTS)
        return;
    struct expect_record *e = &r->expects[r->n_expects++];
    snprintf(e->what, sizeof(e->what), "%s", what);
    expect_format(want, e->want, sizeof(e->want));
    snprintf(e->got, sizeof(e->got), "%" PRIu64, got);
    e->met = expect_met(want, got);
}

static void add_fault_expect(struct run_result *r, size_t i, const char *what,
                             const struct expect_num *want, uint64_t got, bool known)
{
    if (want->op == EXPECT_UNSET || r->n_expects >= RESULT_MAX_EXPECTS)
        return;
    struct expect_record *e = &r->expects[r->n_expects++];
    snprintf(e->what, sizeof(e->what), "faults[%zu].%s", i, what);
    expect_format(want, e->want, sizeof(e->want));
    if (!known) {
        snprintf(e->got, sizeof(e->got), "%s",
                 got == AVAIL_NEVER ? "no acquisition after it" : "the fault never struck");
        e->met = false;
        return;
    }
    snprintf(e->got, sizeof(e->got), "%" PRIu64, got);
    e->met = expect_met(want, got);
}

/* A fault's own expectations, read from its window's availability. */
static void judge_faults(struct run_result *r)
{
    const struct scenario *s = r->scn;
    for (size_t i = 0; i < s->n_faults; i++) {
        const struct fault_expect *x = &s->faults[i].expect;
        const struct fault_availability *a = result_fault_availability(r, i);
        add_fault_expect(r, i, "acquired", &x->acquired, a ? a->granted_within : 0, a != NULL);
        add_fault_expect(r, i, "failed", &x->failed, a ? a->failed : 0, a != NULL);
        bool recovered = a && a->recovery_ns != AVAIL_NEVER;
        add_fault_expect(r, i, "recovery_ms", &x->recovery_ms,
                         recovered ? a->recovery_ns / 1000000
                         : a       ? AVAIL_NEVER
                                   : 0,
                         recovered);
    }
}

void result_judge(struct run_result *r)
{
    const struct scenario *s = r->scn;
    r->n_expects = 0;
    add_expect(r, "violations", &s->expect.violations, r->check.violations);
    add_expect(r, "rejected_accesses", &s->expect.rejected_accesses, r->rejected_accesses);
    if (s->expect.invariants != EXPECT_INV_UNSET) {
        struct expect_record *e = &r->expects[r->n_expects++];
        snprintf(e->what, sizeof(e->what), "invariants");
        snprintf(e->want, sizeof(e->want), "%s",
                 s->expect.invariants == EXPECT_INV_HOLD ? "hold" : "broken");
        snprintf(e->got, sizeof(e->got), "%s", r->invariants_hold ? "hold" : "broken");
        e->met = r->invariants_hold == (s->expect.invariants == EXPECT_INV_HOLD);
    }
    judge_faults(r);
    /* The witness and the checker disagreeing is a testbed bug: never a pass. */
    r->passed = r->witness_agrees && r->hist.dropped == 0;
    for (size_t i = 0; i < r->n_expects; i++)
        r->passed = r->passed && r->expects[i].met;
}

void result_free(struct run_result *r)
{
    for (int k = 0; k < OP_COUNT; k++)
        histogram_free(r->ops[k]);
    free(r->tl_ok);
    free(r->tl_fail);
    history_free(&r->hist);
    free(r->sections);
    free(r->spans);
    free(r->tl_latency);
    free(r->avail);
    free(r->stuck);
    checker_result_free(&r->check);
}

int result_check_history(struct run_result *r, uint64_t lookback_ns)
{
    if (history_sections(&r->hist, &r->sections, &r->n_sections, &r->spans, &r->n_spans) < 0)
        return -1;
    r->avail = calloc(r->n_spans ? r->n_spans : 1, sizeof(*r->avail));
    if (r->avail == NULL)
        return -1;
    availability_compute(&r->hist, r->spans, r->n_spans, r->avail);
    if (stuck_compute(&r->hist, r->sections, r->n_sections, &r->stuck, &r->n_stuck) < 0)
        return -1;
    return checker_run(r->sections, r->n_sections, r->spans, r->n_spans, lookback_ns, 1000,
                       &r->check);
}

const struct fault_availability *result_fault_availability(const struct run_result *r, size_t i)
{
    for (size_t k = 0; k < r->n_spans; k++)
        if (r->spans[k].fault == i)
            return &r->avail[k];
    return NULL;
}
