/* result.c - what a history makes of a run's result, the host's part in
 * its violations, and freeing what it holds. The verdict against the
 * scenario's expectations is the engine's (sim/engine/verdict.c). */
#include "sim/check/result.h"

#include "sim/check/latch_check.h"
#include "sim/check/sections.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/check/stale_grants.h"
#include "sim/record/hiccup.h"
#include "sim/record/histogram.h"

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

/* A latch's rounds judged from the whole history, as check_pass_latch
 * judges them from the stream. */
static int result_latch(struct run_result *r)
{
    struct latch_check *c = latch_check_begin(&r->hist.latch);
    if (c == NULL)
        return -1;
    for (size_t i = 0; i < r->hist.n; i++)
        if (latch_check_event(c, &r->hist.ev[i]) < 0) {
            latch_check_free(c);
            return -1;
        }
    struct latch_tally t;
    latch_check_end(c, &t);
    r->n_inv = latch_tally_invariants(&t, &r->hist.latch, r->inv, WORKLOAD_MAX_INVARIANTS);
    r->invariants_hold = r->inv[0].holds && r->inv[1].holds;
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
    if (r->hist.latch.latches && result_latch(r) < 0)
        return -1;
    return result_stale_grants(r, writes_only);
}

const struct fault_availability *result_fault_availability(const struct run_result *r, size_t i)
{
    for (size_t k = 0; k < r->n_spans; k++)
        if (r->spans[k].fault == i)
            return &r->avail[k];
    return NULL;
}
