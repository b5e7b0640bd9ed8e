/* csv.c - --csv: a run, a comparison or a matrix as CSV on stdout (csv.h).
 * Figures as the terminal prints them (milliseconds to the microsecond),
 * so a script reads the same numbers a person sees. */
#include "reports/csv.h"

#include <inttypes.h>
#include <stdbool.h>
#include <string.h>

#include "reports/compare_parts.h"
#include "reports/report.h"
#include "sim/record/histogram.h"
#include "sim/scenario/scenario.h"

void csv_field(FILE *f, bool first, const char *s)
{
    if (!first)
        fputc(',', f);
    if (s[strcspn(s, ",\"\r\n")] == '\0') {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static void field_u64(FILE *f, uint64_t v)
{
    fprintf(f, ",%" PRIu64, v);
}

static void field_ms(FILE *f, double ms)
{
    fprintf(f, ",%.3f", ms);
}

static void field_bool(FILE *f, bool v)
{
    fputs(v ? ",true" : ",false", f);
}

/* ",p50_ms,p99.9_ms,p100_ms": the percentile as typed, never "max" (the
 * exact max_ms of report.json is another figure). */
static void percentile_heads(FILE *f, const double *set, size_t n)
{
    const double *pct;
    size_t k = report_percentiles_or_default(set, n, &pct);
    for (size_t i = 0; i < k; i++) {
        char key[40];
        /* "p99.90" less its padding zeros: "p99.9" (keys keep two decimals) */
        report_percentile_key(pct[i], key, sizeof(key));
        char *dot = strchr(key, '.');
        if (dot) {
            char *end = key + strlen(key);
            while (end > dot + 1 && end[-1] == '0')
                *--end = '\0';
            if (end == dot + 1)
                *dot = '\0';
        }
        fprintf(f, ",%s_ms", key);
    }
}

/* The figures at those percentiles, or empty fields with no sample. */
static void percentile_cells(FILE *f, const double *set, size_t n, const double *ms, bool has)
{
    const double *pct;
    size_t k = report_percentiles_or_default(set, n, &pct);
    for (size_t i = 0; i < k; i++) {
        if (has)
            field_ms(f, ms[i]);
        else
            fputc(',', f);
    }
}

/* What the run came to, the same on every line so that each line stands
 * alone (a script that keeps the acquire line keeps the verdict): its
 * report.json's verdict, safety.safe, checker.violations, invariants_hold,
 * scenario.name and algorithm. */
static void run_verdict_cells(FILE *f, const struct run_result *r)
{
    struct report_safety safety = report_safety_of(r);
    csv_field(f, false, report_verdict(r));
    field_bool(f, safety.safe);
    field_u64(f, r->check.violations);
    field_bool(f, r->invariants_hold);
    csv_field(f, false, r->scn ? r->scn->name : "");
    csv_field(f, false, r->algorithm ? r->algorithm : "");
}

void report_csv(FILE *f, const struct run_result *r)
{
    /* errors and ambiguous: for the operations a server answers */
    static const int errs[OP_COUNT][2] = {[OP_ACQUIRE] = {ST_ACQUIRE_ERR, ST_ACQUIRE_NO_EFFECT},
                                          [OP_ACQUIRE_FAILED] = {-1, -1},
                                          [OP_RELEASE] = {ST_RELEASE_ERR, ST_RELEASE_NO_EFFECT},
                                          [OP_HOLD] = {-1, -1},
                                          [OP_STEP] = {-1, -1}};
    fputs("operation,count,per_second,mean_ms", f);
    percentile_heads(f, r->percentiles, r->n_percentiles);
    fputs(",errors,ambiguous,verdict,safe,violations,invariants_hold,scenario,algorithm\n", f);
    for (int k = 0; k < OP_COUNT; k++) {
        const struct histogram *h = r->ops[k];
        uint64_t n = (uint64_t)h->total_count;
        double ms[RESULT_MAX_PERCENTILES];
        report_chosen_ms(r, h, ms);
        csv_field(f, true, report_op_name(k));
        field_u64(f, n);
        fprintf(f, ",%.3f", result_qps(r, n));
        if (n)
            field_ms(f, histogram_mean(h) / 1000.0);
        else
            fputc(',', f);
        percentile_cells(f, r->percentiles, r->n_percentiles, ms, n > 0);
        if (errs[k][0] >= 0) {
            field_u64(f, r->stat[errs[k][0]]);
            field_u64(f, report_ambiguous(r, errs[k][0], errs[k][1]));
        } else {
            fputs(",,", f);
        }
        run_verdict_cells(f, r);
        fputc('\n', f);
    }
}

/* The fault windows' cost (compare_fault_cost) and the stuck locks of the
 * row's run, after its note: empty for a row that did not run, and the
 * window figures empty with no window on. */
static void compare_cost_cells(FILE *f, const struct comparison *c, const struct compare_row *row)
{
    csv_field(f, false, c->scn ? c->scn->name : "");
    if (!row->ran) {
        fputs(",,,,,,,,,", f);
        return;
    }
    struct fault_cost x = compare_fault_cost(row);
    fprintf(f, ",%zu", x.windows);
    if (x.windows) {
        field_u64(f, x.granted);
        field_u64(f, x.granted_within);
        field_u64(f, x.failed);
        field_u64(f, x.ambiguous);
        field_ms(f, x.longest_no_grant_ms);
        field_bool(f, x.recovered);
        if (x.recovered)
            field_ms(f, x.recovery_ms);
        else
            fputc(',', f);
    } else {
        fputs(",,,,,,,", f);
    }
    field_ms(f, row->stuck_lock_ms);
}

void compare_csv(FILE *f, const struct comparison *c)
{
    fputs("algorithm,verdict,safe,violations,elapsed_s,steps,acquired,busy,errors,per_second", f);
    percentile_heads(f, c->percentiles, c->n_percentiles);
    fputs(",fenced_pairs,rejected_accesses,invariants_hold,run_dir,note,scenario,fault_windows,"
          "fault_granted,fault_granted_within,fault_failed,fault_ambiguous,"
          "fault_longest_no_grant_ms,fault_recovered,fault_recovery_ms,stuck_ms\n",
          f);
    for (size_t i = 0; i < c->n; i++) {
        const struct compare_row *row = &c->rows[i];
        csv_field(f, true, row->algorithm);
        csv_field(f, false, row->verdict);
        if (row->ran) {
            field_bool(f, row->safety.safe);
            field_u64(f, row->violations);
            fprintf(f, ",%.3f", row->elapsed_s);
            field_u64(f, row->steps);
            field_u64(f, row->acquired);
            field_u64(f, row->busy);
            field_u64(f, row->errors);
            fprintf(f, ",%.3f", row->qps);
        } else {
            fputs(",,,,,,,,", f);
        }
        percentile_cells(f, c->percentiles, c->n_percentiles, row->acquire_pct_ms,
                         row->ran && row->has_latency);
        if (row->ran) {
            field_u64(f, row->fenced_pairs);
            field_u64(f, row->rejected_accesses);
            field_bool(f, row->invariants_hold);
        } else {
            fputs(",,,", f);
        }
        csv_field(f, false, row->run_dir);
        csv_field(f, false, row->note);
        compare_cost_cells(f, c, row);
        fputc('\n', f);
    }
}

static void matrix_run_csv(FILE *f, const struct matrix *m, const struct matrix_row *row,
                           const struct matrix_run *x)
{
    csv_field(f, true, row->name);
    csv_field(f, false, row->algorithm);
    field_u64(f, x->seed);
    csv_field(f, false, x->verdict);
    field_bool(f, x->matched);
    if (x->ran) {
        field_bool(f, x->safety.safe);
        field_u64(f, x->violations);
        field_u64(f, x->acquired);
        field_u64(f, x->failed);
        field_u64(f, x->ambiguous);
        if (x->fault_runs) {
            field_bool(f, x->recovered);
            if (x->recovered)
                field_ms(f, x->recovery_ms);
            else
                fputc(',', f);
        } else {
            fputs(",,", f);
        }
        field_ms(f, x->stuck_ms);
    } else {
        fputs(",,,,,,,,", f);
    }
    percentile_cells(f, m->percentiles, m->n_percentiles, x->acquire_pct_ms,
                     x->ran && x->has_latency);
    csv_field(f, false, x->run_dir);
    csv_field(f, false, x->failure);
    fputc('\n', f);
}

void matrix_csv(FILE *f, const struct matrix *m)
{
    fputs("row,algorithm,seed,verdict,matched,safe,violations,acquired,failed,ambiguous,"
          "recovered,recovery_ms,stuck_ms",
          f);
    percentile_heads(f, m->percentiles, m->n_percentiles);
    fputs(",run_dir,failure\n", f);
    for (size_t i = 0; i < m->n; i++)
        for (size_t k = 0; k < m->rows[i].n_runs; k++)
            matrix_run_csv(f, m, &m->rows[i], &m->rows[i].runs[k]);
}
