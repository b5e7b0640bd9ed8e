/* verdict.c - a run's result held against its scenario's expectations
 * (its own and each fault's), whether every fault was carried out, and
 * whether the host rather than the lock made its violations. */
#include "sim/engine/verdict.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "sim/scenario/scenario.h"

/* The record of one expectation, or NULL when it states none (or no room
 * is left). */
static struct expect_record *add_expect(struct run_result *r, const char *what,
                                        const struct expect_num *want, uint64_t got)
{
    if (want->op == EXPECT_UNSET || r->n_expects >= RESULT_MAX_EXPECTS)
        return NULL;
    struct expect_record *e = &r->expects[r->n_expects++];
    snprintf(e->what, sizeof(e->what), "%s", what);
    expect_format(want, e->want, sizeof(e->want));
    snprintf(e->got, sizeof(e->got), "%" PRIu64, got);
    e->met = expect_met(want, got);
    return e;
}

/* A fault's own expectations, read from its window's availability; one
 * with no figure to compare (missing says why) is not met. */
static void judge_faults(struct run_result *r)
{
    const struct scenario *s = r->scn;
    for (size_t i = 0; i < s->n_faults; i++) {
        const struct fault_availability *a = result_fault_availability(r, i);
        bool recovered = a && a->recovery_ns != AVAIL_NEVER;
        const uint64_t got[FAULT_EXPECTS] = {a ? a->granted_within : 0, a ? a->failed : 0,
                                             recovered ? a->recovery_ns / 1000000 : 0};
        const char *missing[FAULT_EXPECTS] = {NULL, NULL,
                                              recovered ? NULL : "no acquisition after it"};
        for (size_t k = 0; k < FAULT_EXPECTS; k++) {
            char what[48];
            snprintf(what, sizeof(what), "faults[%zu].%s", i, fault_expect_names[k]);
            struct expect_record *e =
                add_expect(r, what, fault_expect_at(&s->faults[i].expect, k), got[k]);
            const char *why = a == NULL ? "the fault never struck" : missing[k];
            if (e && why) {
                snprintf(e->got, sizeof(e->got), "%s", why);
                e->met = false;
            }
        }
    }
}

/* Every broken invariant took two holders inside at once to break: the
 * violations the host made explain it. */
static bool breaches_from_overlaps(const struct run_result *r)
{
    for (size_t i = 0; i < r->n_inv; i++)
        if (!r->inv[i].holds && !r->inv[i].advisory && !r->inv[i].by_overlaps)
            return false;
    return true;
}

/* Expectations on violations (or on invariants only overlaps break)
 * cannot be judged from violations the host made. A run failed (or
 * passed) only on those is INCOMPLETE instead, and says why; one that
 * failed on anything else stays a FAIL. */
static void judge_host(struct run_result *r)
{
    char why[sizeof(r->incomplete_reason)];
    if (!r->complete || !r->witness_agrees || !result_host_made_violations(r, why, sizeof(why)))
        return;
    bool judged_on_violations = false;
    for (size_t i = 0; i < r->n_expects; i++) {
        const struct expect_record *e = &r->expects[i];
        bool on_violations = strcmp(e->what, "violations") == 0;
        bool on_invariants = strcmp(e->what, "invariants") == 0;
        judged_on_violations = judged_on_violations || on_violations || on_invariants;
        if (!e->met && !on_violations && !(on_invariants && breaches_from_overlaps(r)))
            return;
    }
    if (!judged_on_violations)
        return;
    r->complete = false;
    snprintf(r->incomplete_reason, sizeof(r->incomplete_reason), "%s", why);
}

/* A fault that did not happen as written (a restart that failed, a clock
 * that did not move, a toxic refused, never struck at all) leaves the
 * scenario's question unasked: whatever the clients saw answers another
 * question, so the run cannot be judged. The first such fault says why. */
static void judge_carried_out(struct run_result *r)
{
    for (size_t i = 0; i < r->n_faults && r->complete; i++) {
        const struct fault_record *x = &r->faults[i];
        const char *type = fault_type_name(x->spec.kind);
        if (x->error[0])
            snprintf(r->incomplete_reason, sizeof(r->incomplete_reason),
                     "faults[%zu] (%s %s) was not carried out: %s", i, type, x->spec.target_text,
                     x->error);
        else if (!x->fired)
            snprintf(r->incomplete_reason, sizeof(r->incomplete_reason),
                     "faults[%zu] (%s %s) never struck: %s", i, type, x->spec.target_text,
                     fault_on_holder(&x->spec)   ? "no client held a lock after its time"
                     : fault_on_waiter(&x->spec) ? "no client waited inside acquire after its time"
                                                 : "the run ended first");
        else
            continue;
        r->complete = false;
    }
}

void result_judge(struct run_result *r)
{
    judge_carried_out(r);
    /* The history's end line says whether the run could be judged, and
     * why not, so that `check` never passes what the run did not; a stall
     * the host made is left for `check` to find again (judge_host). */
    r->hist.complete = r->complete;
    snprintf(r->hist.incomplete_reason, sizeof(r->hist.incomplete_reason), "%s",
             r->complete ? "" : r->incomplete_reason);
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
    judge_host(r);
}
