/* terminal.c - the summary at the end of `locklab run`.
 *
 * Fixed-form like locktorture's statistics: parameters first, then one row
 * per operation, the checker, the invariants, the faults, each violation
 * behind a greppable "!!!" marker, and one verdict line at the end.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "reports/report.h"
#include "reports/violation_groups.h"
#include "sim/check/context.h"
#include "sim/record/histogram.h"
#include "sim/scenario/scenario.h"

void report_header(FILE *f, const struct scenario *s, const char (*servers)[RESULT_SERVER_LEN],
                   size_t n_servers)
{
    char req[40] = "", rate[48] = "", secs[32];
    if (s->requests)
        snprintf(req, sizeof(req), "  requests=%" PRIu64, s->requests);
    if (s->rate > 0)
        snprintf(rate, sizeof(rate), "  rate=%g/s (open loop)", s->rate);
    fprintf(f,
            "locklab %s  scenario=%s  algorithm=%s  clients=%" PRIu32 "  seed=%" PRIu64
            "  duration=%ss%s%s\n",
            LOCKLAB_VERSION, s->name, s->algorithm, s->clients, s->seed,
            report_seconds(s->duration_ms, secs, sizeof(secs)), req, rate);
    report_settings(f, s);
    for (size_t i = 0; i < n_servers; i++)
        fprintf(f, "  server: %s\n", servers[i]);
}

static void print_ran(FILE *f, const struct run_result *r)
{
    fprintf(f, "ran %.2f s%s%s\n\n", r->elapsed_s,
            r->complete ? "" : "  INCOMPLETE: ", r->complete ? "" : r->incomplete_reason);
}

static void print_ops(FILE *f, const struct run_result *r)
{
    const double *pct;
    size_t n_pct = report_chosen_percentiles(r, &pct);
    int width[RESULT_MAX_PERCENTILES]; /* 9, or more for "p99.999 ms" */
    fprintf(f, "%-15s %10s %10s", "operation", "count", "qps");
    for (size_t i = 0; i < n_pct; i++) {
        char label[40], head[48];
        snprintf(head, sizeof(head), "%s ms",
                 report_percentile_label(pct[i], label, sizeof(label)));
        width[i] = strlen(head) > 9 ? (int)strlen(head) : 9;
        fprintf(f, " %*s", width[i], head);
    }
    fputc('\n', f);
    for (int k = 0; k < OP_COUNT; k++) {
        const struct histogram *h = r->ops[k];
        uint64_t n = (uint64_t)h->total_count;
        fprintf(f, "%-15s %10" PRIu64 " %10.1f", report_op_name(k), n, result_qps(r, n));
        for (size_t i = 0; i < n_pct; i++) {
            if (n == 0)
                fprintf(f, " %*s", width[i], "-");
            else
                fprintf(f, " %*.3f", width[i], (double)histogram_percentile(h, pct[i]) / 1000.0);
        }
        fputc('\n', f);
    }
    char counts[640];
    fprintf(f, "\n%s\n", report_op_counts(r, counts, sizeof(counts)));
    if (r->load.rate > 0)
        fprintf(f, "load: %s\n", report_load(r, counts, sizeof(counts)));
    if (r->stat[ST_WOKEN_NOTICE] + r->stat[ST_WOKEN_TIMER])
        fprintf(f,
                "waits: %" PRIu64 " woken by the service's notice, %" PRIu64
                " by the waiter's timer\n",
                r->stat[ST_WOKEN_NOTICE], r->stat[ST_WOKEN_TIMER]);
    if (r->stat[ST_CONNECT_ERR])
        fprintf(f, "connect errors: %" PRIu64 "\n", r->stat[ST_CONNECT_ERR]);
    if (r->sample_error[0])
        fprintf(f, "last error: %s\n", r->sample_error);
}

static void print_safety(FILE *f, const struct run_result *r)
{
    const struct check_result *c = &r->check;
    char line[160];
    fprintf(f, "checker: %s\n", report_checker(c, line, sizeof(line)));
    fprintf(f, "witness: %" PRIu64 " concurrent entries, checker %" PRIu64 ": %s\n",
            r->witness_concurrent, c->concurrent_entries,
            r->witness_agrees ? "agree" : "!!! DISAGREE");
    report_lost_at_release(f, r);
    if (r->scn->fencing)
        fprintf(f, "fencing: %" PRIu64 " rejected accesses (reads and writes with a stale token)\n",
                r->rejected_accesses);
    report_invariants(f, r);
}

void report_invariants(FILE *f, const struct run_result *r)
{
    fprintf(f, "invariants:\n");
    for (size_t i = 0; i < r->n_inv; i++)
        fprintf(f, "  %-4s %-22s %s\n", report_invariant_mark(&r->inv[i]), r->inv[i].name,
                r->inv[i].detail);
}

void report_lost_at_release(FILE *f, const struct run_result *r)
{
    if (r->lost_at_release)
        fprintf(f,
                "lost at release: %" PRIu64 " grant%s lost while held, the holder told only by its "
                "release's not-owner answer\n",
                r->lost_at_release, r->lost_at_release == 1 ? "" : "s");
}

/* "1.000 s .. 3.000 s", or "(still on at the end)" for to_ns UINT64_MAX. */
static void print_window(FILE *f, const struct run_result *r, uint64_t from_ns, uint64_t to_ns)
{
    fprintf(f, "%.3f s .. ", report_rel_s(r, from_ns));
    if (to_ns == UINT64_MAX)
        fprintf(f, "(still on at the end)");
    else
        fprintf(f, "%.3f s", report_rel_s(r, to_ns));
}

static void print_faults(FILE *f, const struct run_result *r)
{
    if (r->n_faults == 0)
        return;
    fprintf(f, "faults:\n");
    for (size_t i = 0; i < r->n_faults; i++) {
        const struct fault_record *x = &r->faults[i];
        char plan[160], done[512];
        fprintf(f, "  %6.3f s  %s\n", (double)x->spec.at_ms / 1000.0,
                report_fault_plan(&x->spec, plan, sizeof(plan)));
        fprintf(f, "            %s", report_fault_done(r, x, done, sizeof(done)));
        if (x->fired) {
            fprintf(f, ", ");
            print_window(f, r, x->start_ns, x->ended ? x->end_ns : UINT64_MAX);
        }
        fputc('\n', f);
        const struct fault_availability *a = result_fault_availability(r, i);
        if (a && x->fired)
            fprintf(f, "            %s\n",
                    report_availability(a, x->spec.kind, done, sizeof(done)));
    }
}

void report_spans(FILE *f, const struct run_result *r)
{
    if (r->n_spans == 0)
        return;
    fprintf(f, "faults:\n");
    for (size_t i = 0; i < r->n_spans; i++) {
        const struct fault_span *s = &r->spans[i];
        char name[96], what[256];
        fprintf(f, "  %-28s ", report_span_name(r, s, name, sizeof(name)));
        print_window(f, r, s->from_ns, s->to_ns);
        fputc('\n', f);
        fprintf(f, "  %-28s %s\n", "",
                report_availability(&r->avail[i], s->type, what, sizeof(what)));
    }
}

void report_violations(FILE *f, const struct run_result *r, int max)
{
    const struct check_result *c = &r->check;
    int shown = 0;
    /* the causes first: a pause that stranded one holder is one line, not a page of pairs */
    report_group_lines(f, r, max > 0 ? (size_t)max : 0);
    for (size_t i = 0; i < c->n_list && shown < max; i++) {
        const struct violation *v = &c->list[i];
        if (v->fenced)
            continue;
        const struct section *a = violation_first(r, v), *b = violation_second(r, v);
        char faults[160];
        report_violation_faults(r, v, faults, sizeof(faults));
        char ta[24], tb[24];
        fprintf(f,
                "!!! violation on %s: client %" PRIu32
                " [%.3f, %.3f] s token %s %s  and  client %" PRIu32
                " [%.3f, %.3f] s token %s %s  overlap %.3f ms%s%s\n",
                r->hist.keys[a->key], a->client, report_rel_s(r, a->from_ns),
                report_rel_s(r, a->to_ns), report_token(a->token, ta, sizeof(ta)),
                report_effect_name(a->effect), b->client, report_rel_s(r, b->from_ns),
                report_rel_s(r, b->to_ns), report_token(b->token, tb, sizeof(tb)),
                report_effect_name(b->effect), (double)v->overlap_ns / 1e6,
                faults[0] ? "  during " : "", faults);
        shown++;
    }
    if (c->violations > (uint64_t)shown)
        fprintf(f, "!!! ... %" PRIu64 " violations in all, %d shown\n", c->violations, shown);
}

static void print_verdict(FILE *f, const struct run_result *r)
{
    fprintf(f, "expect:");
    for (size_t i = 0; i < r->n_expects; i++)
        fprintf(f, "  %s %s -> %s %s", r->expects[i].what, r->expects[i].want, r->expects[i].got,
                r->expects[i].met ? "(met)" : "(NOT MET)");
    fprintf(f, "\n");
    if (r->run_dir[0])
        fprintf(f, "report: %s/\n", r->run_dir);
    char line[900];
    fprintf(f, "End of run: %s\n", report_verdict_line(r, line, sizeof(line)));
}

void report_terminal(FILE *f, const struct run_result *r, int max_violations)
{
    print_ran(f, r);
    print_ops(f, r);
    fputc('\n', f);
    print_safety(f, r);
    print_faults(f, r);
    char stuck[256];
    if (report_stuck(r, stuck, sizeof(stuck)))
        fprintf(f, "stuck: %s\n", stuck);
    char host[256];
    if (report_host(r, host, sizeof(host)))
        fprintf(f, "host: %s\n", host);
    report_violations(f, r, max_violations);
    print_verdict(f, r);
}

void report_brief(FILE *f, const struct run_result *r)
{
    char line[256];
    fprintf(f, "End of run: %s  %s/\n", report_verdict_brief(r, line, sizeof(line)), r->run_dir);
}
