/* scorecard_fill.c - one seed of a scorecard's cell taken from its
 * finished run, before the result is freed: what happened (safety,
 * invariants), what the class's fault cost (its window's grants, the
 * longest no grant, the recovery) and what the fault really
 * did. The class's fault is its last one: a class that prepares the
 * ground first (the replication link cut before a failover) names the
 * blow last. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reports/report.h"
#include "reports/scorecard.h"
#include "reports/violation_groups.h"
#include "sim/record/histogram.h"

static void fill_broken(struct scorecard_run *out, const struct run_result *r)
{
    size_t at = 0;
    out->broken[0] = '\0';
    for (size_t i = 0; i < r->n_inv; i++) {
        if (r->inv[i].holds || r->inv[i].advisory || at >= sizeof(out->broken))
            continue;
        int n = snprintf(out->broken + at, sizeof(out->broken) - at, "%s%s", at ? ", " : "",
                         r->inv[i].name);
        at += n > 0 ? (size_t)n : 0;
    }
}

static void fill_latency(struct scorecard_run *out, const struct run_result *r)
{
    const struct histogram *h = r->ops[OP_ACQUIRE];
    bool any = h && h->total_count > 0;
    out->p50_ms = any ? (double)histogram_percentile(h, 50.0) / 1000.0 : -1;
    out->p99_ms = any ? (double)histogram_percentile(h, 99.0) / 1000.0 : -1;
    struct report_fairness fr;
    free(report_fairness(r, &fr));
    out->fairness = fr.min ? (double)fr.max / (double)fr.min : -1;
}

/* The class's fault: the last one that fired; -1 when none did. */
static int class_fault(const struct run_result *r)
{
    for (size_t i = r->n_faults; i-- > 0;)
        if (r->faults[i].fired)
            return (int)i;
    return -1;
}

/* The worst second's p99 of the acquires begun in [from_ns, to_ns]. */
static double window_p99(const struct run_result *r, uint64_t from_ns, uint64_t to_ns)
{
    const struct latency_second *by = r->tl_begun ? r->tl_begun : r->tl_latency;
    double worst = -1;
    if (by == NULL || to_ns < r->t0_mono_ns)
        return -1;
    size_t a = from_ns > r->t0_mono_ns ? (size_t)((from_ns - r->t0_mono_ns) / 1000000000u) : 0;
    size_t b = (size_t)((to_ns - r->t0_mono_ns) / 1000000000u);
    for (size_t s = a; s <= b && s < r->tl_len; s++)
        if (by[s].count && by[s].p99_ms > worst)
            worst = by[s].p99_ms;
    return worst;
}

static void fill_window(struct scorecard_run *out, const struct run_result *r)
{
    int i = class_fault(r);
    const struct fault_availability *a = i >= 0 ? result_fault_availability(r, (size_t)i) : NULL;
    out->recovery_ms = -1;
    if (i < 0)
        return;
    const struct fault_record *f = &r->faults[i];
    snprintf(out->fault_truth, sizeof(out->fault_truth), "%.120s%s%.70s", f->detail,
             f->error[0] ? "; " : "", f->error);
    if (a == NULL)
        return;
    out->has_window = true;
    out->window_granted = a->granted_within;
    out->window_failed = a->failed;
    out->window_ambiguous = a->ambiguous;
    out->longest_no_grant_ms = (double)a->longest_no_grant_ns / 1e6;
    out->recovery_ms = a->recovery_ns == AVAIL_NEVER ? -1 : (double)a->recovery_ns / 1e6;
    out->window_p99_ms = window_p99(r, f->start_ns, f->ended ? f->end_ns : r->end_mono_ns);
}

static void fill_why(struct scorecard_run *out, const struct run_result *r)
{
    out->why[0] = '\0';
    if (!r->complete)
        snprintf(out->why, sizeof(out->why), "%.319s", r->incomplete_reason);
    else if (r->check.groups.n_list > 0)
        report_group_cause(r, &r->check.groups.list[0], out->why, sizeof(out->why));
    else if (out->broken[0])
        snprintf(out->why, sizeof(out->why), "invariants broken: %s", out->broken);
}

void scorecard_run_fill(struct scorecard_run *out, const struct run_result *r)
{
    struct report_safety safety = report_safety_of(r);
    snprintf(out->run_dir, sizeof(out->run_dir), "%s", r->run_dir);
    out->ran = true;
    out->complete = r->complete;
    out->violations = r->check.violations;
    out->fenced_pairs = r->check.fenced_pairs;
    out->invariants_hold = r->invariants_hold;
    out->safe = safety.safe && safety.invariants_broken == 0;
    out->acquired = r->stat[ST_ACQUIRE_OK];
    /* an error whose request left and got no answer is ambiguous (info) */
    out->failed = r->stat[ST_ACQUIRE_BUSY] + r->stat[ST_ACQUIRE_NO_EFFECT];
    out->ambiguous = r->stat[ST_ACQUIRE_ERR] - r->stat[ST_ACQUIRE_NO_EFFECT];
    out->lost_at_release = r->stat[ST_RELEASE_LOST];
    out->qps = result_qps(r, out->acquired);
    out->stuck_ms = report_stuck_ms(r);
    fill_broken(out, r);
    fill_latency(out, r);
    fill_window(out, r);
    fill_why(out, r);
}
