/* result.c - the verdict of a run, and freeing what it holds. */
#include "sim/check/result.h"
#include "sim/check/sections.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/check/stale_grants.h"
#include "sim/record/hiccup.h"
#include "sim/record/histogram.h"

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

/* A stall of a few scheduler ticks is everyday noise on a shared host: a
 * lease with no more margin than that, or under a tenth of the lease, is
 * the configuration's weakness, and its violations stay the lock's. */
static bool slack_worth_judging(const struct history *h)
{
    uint32_t least = 5 * HICCUP_FLOOR_MS;
    if (least < h->ttl_ms / 10)
        least = h->ttl_ms / 10;
    return h->metered && h->slack_ms >= least;
}

bool result_host_made_violations(const struct run_result *r, char *why, size_t len)
{
    const struct check_result *c = &r->check;
    uint64_t listed = 0;
    if (!slack_worth_judging(&r->hist) || r->hist.dropped || c->violations == 0)
        return false;
    const struct violation *worst = NULL;
    for (size_t i = 0; i < c->n_list; i++) {
        const struct violation *v = &c->list[i];
        if (v->fenced)
            continue;
        if (v->n_faults > 0 || !result_stall_past_slack(r, v->stall_ns))
            return false;
        if (worst == NULL || v->stall_ns > worst->stall_ns)
            worst = v;
        listed++;
    }
    if (listed != c->violations)
        return false; /* one not listed could be the lock's own */
    snprintf(
        why, len,
        "the host stalled the testbed %.0f ms at %.3f s (no thread of it ran), past the %" PRIu32
        " ms its lock rides out; every violation (%" PRIu64
        ") came of such a stall, no fault near it: this run cannot judge the lock",
        (double)worst->stall_ns / 1e6, (double)(worst->stall_from_ns - r->t0_mono_ns) / 1e9,
        r->hist.slack_ms, c->violations);
    return true;
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

void result_free(struct run_result *r)
{
    for (int k = 0; k < OP_COUNT; k++)
        histogram_free(r->ops[k]);
    for (size_t i = 0; i < r->n_intervals; i++)
        intervals_log_free(&r->intervals[i]);
    free(r->intervals);
    free(r->grants);
    free(r->tl_ok);
    free(r->tl_fail);
    history_free(&r->hist);
    journal_free(r->journal);
    free(r->sections);
    free(r->spans);
    free(r->stalls);
    free(r->tl_latency);
    free(r->tl_begun);
    free(r->avail);
    free(r->stuck);
    free(r->late_grants);
    checker_result_free(&r->check);
}

/* The late grants and those lost at release, from r->hist's events
 * (check_pass finds them as its events come). */
static int result_stale_grants(struct run_result *r, bool writes_only)
{
    struct stale_grants *t = stale_grants_begin(writes_only);
    if (t == NULL)
        return -1;
    for (size_t i = 0; i < r->hist.n; i++)
        if (stale_grants_event(t, &r->hist.ev[i]) < 0) {
            stale_grants_free(t);
            return -1;
        }
    stale_grants_end(t, &r->late_grants, &r->n_late_grants, &r->lost_at_release);
    return 0;
}

int result_check_history(struct run_result *r, uint64_t lookback_ns, bool writes_only)
{
    if (history_sections(&r->hist, &r->sections, &r->n_sections, &r->spans, &r->n_spans) < 0)
        return -1;
    r->avail = calloc(r->n_spans ? r->n_spans : 1, sizeof(*r->avail));
    if (r->avail == NULL)
        return -1;
    if (availability_compute(&r->hist, r->n_spans, r->avail) < 0 ||
        stuck_compute(&r->hist, &r->stuck, &r->n_stuck) < 0)
        return -1;
    if (history_stalls(&r->hist, HICCUP_FLOOR_MS * 1000000ULL, &r->stalls, &r->n_stalls) < 0 ||
        checker_run(r->sections, r->n_sections, r->spans, r->n_spans, lookback_ns, 1000,
                    writes_only, &r->check) < 0)
        return -1;
    checker_attach_stalls(&r->check, r->sections, r->stalls, r->n_stalls, lookback_ns);
    return result_stale_grants(r, writes_only);
}

const struct fault_availability *result_fault_availability(const struct run_result *r, size_t i)
{
    for (size_t k = 0; k < r->n_spans; k++)
        if (r->spans[k].fault == i)
            return &r->avail[k];
    return NULL;
}
