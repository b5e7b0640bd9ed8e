/* compare.c - the side-by-side table of a comparison, in three forms. */
#include "reports/compare.h"

#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reports/compare_parts.h"
#include "reports/text_table.h"
#include "sim/record/histogram.h"
#include "sim/scenario/scenario.h"
#include "sim/workloads/workload.h"

_Static_assert(COMPARE_MAX <= TEXT_TABLE_MAX_ROWS, "a table has room for every row");

static void fill_invariants(struct compare_row *row, const struct run_result *r)
{
    size_t used = 0;
    row->invariants[0] = '\0';
    for (size_t i = 0; i < r->n_inv; i++)
        report_append(row->invariants, sizeof(row->invariants), &used, "%s%s %s", i ? ", " : "",
                      report_invariant_mark(&r->inv[i]), r->inv[i].name);
}

void compare_row_fill(struct compare_row *row, const struct run_result *r)
{
    snprintf(row->algorithm, sizeof(row->algorithm), "%s", r->algorithm);
    row->ran = true;
    snprintf(row->run_dir, sizeof(row->run_dir), "%s", r->run_dir);
    const struct lock_ops *ops = lock_find(r->algorithm);
    row->ttl_ms = r->scn->ttl_ms;
    row->lease_ms = ops ? scenario_lease_ms(r->scn, ops) : r->scn->ttl_ms;
    row->n_seeds = 0;
    compare_seed_add(row, r);
    compare_row_judge(row); /* again as more seeds come */
    row->elapsed_s = r->elapsed_s;
    row->acquired = r->stat[ST_ACQUIRE_OK];
    row->busy = r->stat[ST_ACQUIRE_BUSY];
    row->errors = r->stat[ST_ACQUIRE_ERR];
    row->steps = r->stat[ST_STEPS];
    row->qps = result_qps(r, row->acquired);
    const struct histogram *h = r->ops[OP_ACQUIRE];
    row->has_latency = report_chosen_ms(r, h, row->acquire_pct_ms);
    for (size_t i = 0; i < REPORT_N_PERCENTILES && row->has_latency; i++)
        row->acquire_ms[i] = (double)histogram_percentile(h, report_percentiles[i]) / 1000.0;
    free(report_fairness(r, &row->fairness));
    row->violations = r->check.violations;
    row->fenced_pairs = r->check.fenced_pairs;
    row->rejected_accesses = r->rejected_accesses;
    row->invariants_hold = r->invariants_hold;
    row->safety = report_safety_of(r);
    fill_invariants(row, r);
    html_curve_of(&row->spectrum, h);
    compare_row_keep(row, r);
}

/* The table's latency columns: p50, p99, p99.9, max (p90 stays in the
 * per-run reports, to keep one line per algorithm readable). */
static const size_t shown[COMPARE_N_SHOWN] = {0, 2, 3, 4};
#define N_SHOWN COMPARE_N_SHOWN

static void count(const struct compare_row *row, uint64_t v, char *buf, size_t len)
{
    if (row->ran)
        snprintf(buf, len, "%" PRIu64, v);
    else
        snprintf(buf, len, "-");
}

void compare_row_cells(const struct compare_row *row, struct compare_cells *x)
{
    for (size_t i = 0; i < N_SHOWN; i++) {
        if (row->has_latency)
            snprintf(x->latency[i], sizeof(x->latency[i]), "%.3f", row->acquire_ms[shown[i]]);
        else
            snprintf(x->latency[i], sizeof(x->latency[i]), "-");
    }
    if (row->ran)
        snprintf(x->qps, sizeof(x->qps), "%.1f", row->qps);
    else
        snprintf(x->qps, sizeof(x->qps), "-");
    if (row->ran)
        report_fairness_ratio(&row->fairness, x->fair, sizeof(x->fair));
    else
        snprintf(x->fair, sizeof(x->fair), "-");
    count(row, row->busy + row->errors, x->failed, sizeof(x->failed));
    count(row, row->violations, x->violations, sizeof(x->violations));
    count(row, row->fenced_pairs, x->fenced_pairs, sizeof(x->fenced_pairs));
    count(row, row->rejected_accesses, x->rejected, sizeof(x->rejected));
    count(row, row->ttl_ms, x->ttl, sizeof(x->ttl));
    compare_lease(row, x->lease, sizeof(x->lease));
    if (row->ran)
        snprintf(x->stuck, sizeof(x->stuck), "%.3f", row->stuck_lock_ms / 1000.0);
    else
        snprintf(x->stuck, sizeof(x->stuck), "-");
}

size_t compare_not_run(const struct comparison *c)
{
    size_t n = 0;
    for (size_t i = 0; i < c->n; i++)
        n += !c->rows[i].ran;
    return n;
}

struct report_safety_sum compare_safety_sum(const struct comparison *c)
{
    struct report_safety_sum sum = {0};
    for (size_t i = 0; i < c->n; i++) {
        const struct compare_row *row = &c->rows[i];
        bool named = false;
        for (size_t k = 0; row->ran && k < row->n_seeds; k++) {
            if (!row->seeds[k].ran)
                continue;
            report_safety_add(&sum, &row->seeds[k].safety, named ? NULL : row->algorithm);
            named = named || !row->seeds[k].safety.safe;
        }
    }
    return sum;
}

/* The table's latency columns: p50, p99, p99.9, max, or the ones
 * --percentiles chose (each at least 9 wide, wider for "p99.999 ms"). */
static size_t latency_columns(const struct comparison *c, int *width, char (*head)[48])
{
    static const char *const fixed[N_SHOWN] = {"p50 ms", "p99 ms", "p99.9 ms", "max ms"};
    size_t n = c->n_percentiles;
    for (size_t i = 0; i < (n ? n : N_SHOWN); i++) {
        if (n) {
            char label[40];
            snprintf(head[i], 48, "%s ms",
                     report_percentile_label(c->percentiles[i], label, sizeof(label)));
        } else
            snprintf(head[i], 48, "%s", fixed[i]);
        width[i] = strlen(head[i]) > 9 ? (int)strlen(head[i]) : 9;
    }
    return n ? n : N_SHOWN;
}

static void latency_cells(FILE *f, const struct comparison *c, const struct compare_row *row,
                          const struct compare_cells *x, const int *width, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (!c->n_percentiles)
            fprintf(f, " %*s", width[i], x->latency[i]);
        else if (row->has_latency)
            fprintf(f, " %*.3f", width[i], row->acquire_pct_ms[i]);
        else
            fprintf(f, " %*s", width[i], "-");
    }
}

/* One line under a row: after indent + 3 spaces (--wide), or wrapped
 * within 120 columns after the table's indent (indent < 0). */
static void under_line(FILE *f, int indent, const char *text)
{
    if (indent < 0)
        text_wrap(f, text, TEXT_TABLE_INDENT, 2);
    else
        fprintf(f, "%-*s   %s\n", indent, "", text);
}

/* Under a row: each seed (with more than one) and the row's note. */
static void terminal_under(FILE *f, const struct compare_row *row, int indent)
{
    char seed[900];
    for (size_t k = 0; row->n_seeds > 1 && k < row->n_seeds; k++)
        under_line(f, indent, compare_seed_text(&row->seeds[k], true, seed, sizeof(seed)));
    if (row->note[0])
        under_line(f, indent, row->note);
}

/* The banner; within 120 columns unless wide, what the seeds mean on a
 * line of its own when it has no room. */
static void terminal_banner(FILE *f, const struct comparison *c, bool wide)
{
    const struct scenario *s = c->scn;
    char head[600], seeds[160] = "";
    int n =
        snprintf(head, sizeof(head),
                 "locklab compare  scenario=%s  workload=%s  clients=%" PRIu32 "  seed=%" PRIu64,
                 s->name, s->workload->name, s->clients, s->seed);
    if (c->seeds > 1)
        snprintf(seeds, sizeof(seeds),
                 "seeds=%zu (figures: seed %" PRIu64 "'s run; safety: every seed's)", c->seeds,
                 s->seed);
    bool apart = !wide && seeds[0] && n + 2 + (int)strlen(seeds) > TEXT_TABLE_WIDTH;
    fprintf(f, "\n%s%s%s\n", head, seeds[0] ? (apart ? "\n" : "  ") : "", seeds);
}

/* --wide: one line per algorithm, however wide, as before the table kept
 * within 120 columns. */
static void terminal_wide(FILE *f, const struct comparison *c)
{
    char safety[COMPARE_MAX][200];
    int width = (int)strlen("safety");
    int name_width = 12; /* the widest name, so longer ones keep the columns */
    for (size_t i = 0; i < c->n; i++) {
        int w = (int)strlen(compare_row_safety(&c->rows[i], safety[i], sizeof(safety[i])));
        width = w > width ? w : width;
        w = (int)strlen(c->rows[i].algorithm);
        name_width = w > name_width ? w : name_width;
    }
    int lat_width[RESULT_MAX_PERCENTILES];
    char lat_head[RESULT_MAX_PERCENTILES][48];
    size_t n_lat = latency_columns(c, lat_width, lat_head);
    fprintf(f, "%-*s %6s %8s %9s", name_width, "algorithm", "ttl ms", "lease ms", "qps");
    for (size_t i = 0; i < n_lat; i++)
        fprintf(f, " %*s", lat_width[i], lat_head[i]);
    fprintf(f, " %8s %9s %8s %10s  %-*s  %s\n", "max/min", "failed", "stuck s", "violations", width,
            "safety", "invariants");
    for (size_t i = 0; i < c->n; i++) {
        const struct compare_row *row = &c->rows[i];
        struct compare_cells x;
        compare_row_cells(row, &x);
        fprintf(f, "%-*s %6s %8s %9s", name_width, row->algorithm, x.ttl, x.lease, x.qps);
        latency_cells(f, c, row, &x, lat_width, n_lat);
        fprintf(f, " %8s %9s %8s %10s  %-*s  %s\n", x.fair, x.failed, x.stuck, x.violations, width,
                safety[i], row->invariants);
        terminal_under(f, row, name_width);
    }
}

static const char legend[] =
    "(lease: what the lock's grants really ran on, none for a lock without one; qps: "
    "locks acquired per second; latency: successful acquires; max/min: the most "
    "acquisitions of a client over the fewest, inf when one never got the lock; "
    "failed: busy + errors; stuck: the longest stretch of a key with waiters and no "
    "holder, what a crash costs; safety: violations and broken invariants, whatever "
    "the scenario expects)";

/* A row's cells, in the columns terminal_table makes. */
static void table_cells(struct text_table *t, const struct comparison *c, size_t i, size_t n_lat)
{
    const struct compare_row *row = &c->rows[i];
    struct compare_cells x;
    char safety[200];
    compare_row_cells(row, &x);
    size_t r = text_table_row(t), k = 0;
    text_table_cell(t, r, k++, "%s", row->algorithm);
    text_table_cell(t, r, k++, "%s", x.ttl);
    text_table_cell(t, r, k++, "%s", x.lease);
    text_table_cell(t, r, k++, "%s", x.qps);
    for (size_t j = 0; j < n_lat; j++) {
        if (!c->n_percentiles)
            text_table_cell(t, r, k++, "%s", x.latency[j]);
        else if (row->has_latency)
            text_table_cell(t, r, k++, "%.3f", row->acquire_pct_ms[j]);
        else
            text_table_cell(t, r, k++, "-");
    }
    text_table_cell(t, r, k++, "%s", x.fair);
    text_table_cell(t, r, k++, "%s", x.failed);
    text_table_cell(t, r, k++, "%s", x.stuck);
    text_table_cell(t, r, k++, "%s", x.violations);
    /* one cell: a second line holds both, whichever is long */
    text_table_cell(t, r, k, "%s%s%s", compare_row_safety(row, safety, sizeof(safety)),
                    row->invariants[0] ? "; " : "", row->invariants);
}

/* Within 120 columns: the figures on the row, each column as wide as its
 * widest cell; the safety and the invariants (and whatever else has no
 * room) on the line under it, its head under the head line. */
static void terminal_table(FILE *f, const struct comparison *c)
{
    struct text_table *t = calloc(1, sizeof(*t));
    if (t == NULL) {
        terminal_wide(f, c);
        return;
    }
    int lat_width[RESULT_MAX_PERCENTILES];
    char lat_head[RESULT_MAX_PERCENTILES][48];
    size_t n_lat = latency_columns(c, lat_width, lat_head);
    static const char *const figures[] = {"max/min", "failed", "stuck s", "violations"};
    text_table_column(t, "algorithm", true, 0);
    text_table_column(t, "ttl ms", false, 1);
    text_table_column(t, "lease ms", false, 1);
    text_table_column(t, "qps", false, 1);
    for (size_t i = 0; i < n_lat; i++)
        text_table_column(t, lat_head[i], false, 1);
    for (size_t i = 0; i < 4; i++)
        text_table_column(t, figures[i], false, 1);
    text_table_column(t, "safety; invariants", true, 2);
    for (size_t i = 0; i < c->n; i++)
        table_cells(t, c, i, n_lat);
    text_table_layout(t);
    text_table_print_head(f, t);
    for (size_t i = 0; i < c->n; i++) {
        text_table_print_row(f, t, i);
        terminal_under(f, &c->rows[i], -1);
    }
    text_table_free(t);
    free(t);
}

void compare_terminal(FILE *f, const struct comparison *c, bool wide)
{
    terminal_banner(f, c, wide);
    if (wide)
        terminal_wide(f, c);
    else
        terminal_table(f, c);
    char line[900];
    if (wide) {
        fprintf(f, "%s\n%s\n", compare_expectation_line(c, line, sizeof(line)), legend);
        fprintf(f,
                "reports: %s/compare.html, %s/compare.md, %s/compare.json; per algorithm: "
                "%s/<algorithm>/%s\n",
                c->out_dir, c->out_dir, c->out_dir, c->out_dir, c->seeds > 1 ? "seed-<N>/" : "");
    } else {
        char where[1200];
        text_wrap(f, compare_expectation_line(c, line, sizeof(line)), 0, TEXT_TABLE_INDENT);
        text_wrap(f, legend, 0, 1);
        snprintf(where, sizeof(where),
                 "reports in %s/: compare.html, compare.md, compare.json; per algorithm: "
                 "<algorithm>/%s",
                 c->out_dir, c->seeds > 1 ? "seed-<N>/" : "");
        text_wrap(f, where, 0, TEXT_TABLE_INDENT);
    }
    /* one line, however long: what a script greps for */
    fprintf(f, "End of compare: %s\n", compare_verdict(c, line, sizeof(line)));
}

/* What each fault window cost each algorithm, as compare.html's table. */
static void markdown_costs(FILE *f, const struct comparison *c)
{
    if (c->scn->n_faults == 0)
        return;
    fprintf(f, "\n## What each fault window cost\n\n| fault | algorithm | window s | granted "
               "(asked during it) | failed | ambiguous | longest no grant s | recovery s |\n"
               "|---|---|---|---:|---:|---:|---:|---:|\n");
    for (size_t i = 0; i < c->scn->n_faults; i++)
        for (size_t j = 0; j < c->n; j++) {
            const struct compare_row *row = &c->rows[j];
            if (!row->ran || i >= row->n_faults)
                continue;
            const struct compare_fault *k = &row->faults[i];
            const struct fault_availability *a = &k->avail;
            fprintf(f, "| %zu %s | %s | ", i, fault_type_name(k->kind), row->algorithm);
            if (!k->has_avail) {
                fprintf(f, "%s | - | - | - | - | - |\n", k->fired ? "no window" : "did not fire");
                continue;
            }
            char rec[24];
            if (a->recovery_ns == AVAIL_NEVER)
                snprintf(rec, sizeof(rec), "never");
            else
                snprintf(rec, sizeof(rec), "%.3f", (double)a->recovery_ns / 1e9);
            fprintf(f,
                    "%.3f .. %.3f | %" PRIu64 " (%" PRIu64 ") | %" PRIu64 " | %" PRIu64
                    " | %.3f | %s |\n",
                    k->start_s, k->end_s, a->granted, a->granted_within, a->failed, a->ambiguous,
                    (double)a->longest_no_grant_ns / 1e9, rec);
        }
}

const char *compare_below(const struct comparison *c, const char *run_dir)
{
    size_t n = strlen(c->out_dir);
    if (strncmp(run_dir, c->out_dir, n) == 0 && run_dir[n] == '/')
        return run_dir + n + 1;
    return run_dir;
}

static void markdown_row(FILE *f, const struct comparison *c, const struct compare_row *row)
{
    struct compare_cells x;
    char fenced[64] = "", name[700], safety[200];
    compare_row_cells(row, &x);
    if (c->scn->fencing)
        snprintf(fenced, sizeof(fenced), " %s | %s |", x.fenced_pairs, x.rejected);
    if (row->ran) /* only a run has a report to link to */
        snprintf(name, sizeof(name), "[%s](%s/report.md)", row->algorithm,
                 compare_below(c, row->run_dir));
    else
        snprintf(name, sizeof(name), "%s", row->algorithm);
    /* bold is Markdown's only alarm: a lock that broke, a run that did not end */
    bool calm = strcmp(row->verdict, "safe") == 0 || !row->ran;
    bool unsafe = row->ran && row->violations > 0;
    fprintf(f,
            "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s%s%s |%s %s | %s%s%s |\n",
            name, x.ttl, x.lease, x.qps, x.latency[0], x.latency[1], x.latency[2], x.latency[3],
            x.fair, x.failed, x.stuck, unsafe ? "**" : "", x.violations, unsafe ? "**" : "", fenced,
            row->invariants, calm ? "" : "**", compare_row_safety(row, safety, sizeof(safety)),
            calm ? "" : "**");
}

/* Under the table: each seed of a row (with more than one), the notes. */
static void markdown_under(FILE *f, const struct comparison *c)
{
    char seed[900];
    for (size_t i = 0; i < c->n; i++) {
        const struct compare_row *row = &c->rows[i];
        for (size_t k = 0; row->n_seeds > 1 && k < row->n_seeds; k++)
            fprintf(f, "- %s, %s\n", row->algorithm,
                    compare_seed_text(&row->seeds[k], true, seed, sizeof(seed)));
        if (row->note[0])
            fprintf(f, "- %s: %s\n", row->algorithm, row->note);
    }
}

int compare_markdown(const char *path, const struct comparison *c)
{
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return -1;
    const struct scenario *s = c->scn;
    char line[900];
    fprintf(f, "# locklab compare: %s\n\n**%s**\n\n", s->name,
            compare_verdict(c, line, sizeof(line)));
    if (s->description[0])
        fprintf(f, "%s\n\n", s->description);
    fprintf(f,
            "Workload `%s`, %" PRIu32 " clients, %.1f s per algorithm, seed %" PRIu64
            ", lock ttl %" PRIu32 " ms, wait %" PRIu32 " ms%s.\n\n",
            s->workload->name, s->clients, (double)s->duration_ms / 1000.0, s->seed, s->ttl_ms,
            s->wait_ms, c->complete ? "" : " — **INCOMPLETE**");
    if (c->seeds > 1)
        fprintf(f,
                "Each algorithm ran %zu seeds (%" PRIu64 " .. %" PRIu64 "): the figures are seed "
                "%" PRIu64 "'s run, the safety every seed's (each listed below the table).\n\n",
                c->seeds, s->seed, s->seed + c->seeds - 1, s->seed);
    fprintf(f, "%s\n\n", compare_expectation_line(c, line, sizeof(line)));
    /* With fencing on, what it stopped: overlapping pairs made safe, and
     * the accesses the store rejected (two different counts). */
    bool fencing = s->fencing;
    fprintf(f,
            "| algorithm | ttl ms | lease ms | QPS | acquire p50 ms | p99 ms | p99.9 ms | max ms | "
            "max/min per client | failed acquisitions | stuck s | violations |%s invariants | "
            "safety |\n",
            fencing ? " fenced pairs | rejected accesses |" : "");
    fprintf(f, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|%s---|---|\n",
            fencing ? "---:|---:|" : "");
    for (size_t i = 0; i < c->n; i++)
        markdown_row(f, c, &c->rows[i]);
    fprintf(f, "\nThe lease is what the lock's grants really ran on (none: a lock without one); "
               "QPS counts locks acquired per second; latencies are of successful acquires; "
               "max/min is the most acquisitions of one client over the fewest (inf: a client "
               "never got the lock); stuck is the longest stretch of a key with waiters and no "
               "holder (what a crash costs); safety is judged by violations and broken "
               "invariants, whatever the scenario expects.\n");
    markdown_under(f, c);
    markdown_costs(f, c);
    fprintf(f, "\nServers:\n\n");
    for (size_t i = 0; i < c->n_servers; i++)
        fprintf(f, "- %s\n", c->servers[i]);
    return fclose(f);
}

/* A figure, or null in a row that did not run: 0 violations would claim
 * a result nobody measured. */
static json_t *num(const struct compare_row *row, uint64_t v)
{
    return row->ran ? json_integer((json_int_t)v) : json_null();
}

static json_t *seed_json(const struct compare_seed *k)
{
    json_t *o = json_pack("{s:I, s:s, s:s, s:b}", "seed", (json_int_t)k->seed, "run_dir",
                          k->run_dir, "verdict", k->verdict, "complete", k->ran && k->complete);
    json_object_set_new(o, "unsafe", k->ran ? json_boolean(compare_seed_unsafe(k)) : json_null());
    json_object_set_new(o, "safety", k->ran ? report_safety_json(&k->safety) : json_null());
    json_object_set_new(o, "broken", json_string(k->broken));
    json_object_set_new(o, "stuck_lock_ms", k->ran ? json_real(k->stuck_lock_ms) : json_null());
    json_object_set_new(o, "note", k->note[0] ? json_string(k->note) : json_null());
    return o;
}

/* What a row's judgement rests on: its lease, whose expectation it
 * carries, and its seeds. */
static void row_judged_json(json_t *o, const struct compare_row *row)
{
    char text[200];
    json_object_set_new(o, "scenario_lock", json_boolean(row->scenario_lock));
    json_object_set_new(o, "ttl_ms", num(row, row->ttl_ms));
    json_object_set_new(o, "lease_ms", num(row, row->lease_ms));
    json_object_set_new(o, "safety_text", json_string(compare_row_safety(row, text, sizeof(text))));
    json_object_set_new(o, "unsafe_seeds", num(row, compare_unsafe_seeds(row)));
    json_t *seeds = json_array();
    for (size_t k = 0; row->ran && k < row->n_seeds; k++)
        json_array_append_new(seeds, seed_json(&row->seeds[k]));
    json_object_set_new(o, "seeds", row->ran ? seeds : json_null());
    if (!row->ran)
        json_decref(seeds);
}

static json_t *row_json(const struct comparison *c, const struct compare_row *row)
{
    json_t *lat = json_object();
    static const char *const names[REPORT_N_PERCENTILES] = {"p50", "p90", "p99", "p99.9", "max"};
    for (size_t i = 0; i < REPORT_N_PERCENTILES; i++)
        json_object_set_new(lat, names[i],
                            row->has_latency ? json_real(row->acquire_ms[i]) : json_null());
    json_t *o = json_pack(
        "{s:s, s:s, s:s, s:s?, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, "
        "s:o, s:s, s:o, s:o}",
        "algorithm", row->algorithm, "run_dir", row->run_dir, "verdict", row->verdict, "note",
        row->note[0] ? row->note : NULL, "elapsed_s",
        row->ran ? json_real(row->elapsed_s) : json_null(), "steps", num(row, row->steps),
        "acquired", num(row, row->acquired), "busy", num(row, row->busy), "errors",
        num(row, row->errors), "qps", row->ran ? json_real(row->qps) : json_null(), "acquire_ms",
        lat, "violations", num(row, row->violations), "fenced_pairs", num(row, row->fenced_pairs),
        "rejected_accesses", num(row, row->rejected_accesses), "invariants_hold",
        row->ran ? json_boolean(row->invariants_hold) : json_null(), "invariants", row->invariants,
        "safety", row->ran ? report_safety_json(&row->safety) : json_null(), "fairness",
        row->ran && row->fairness.clients
            ? json_pack("{s:I, s:I}", "max", (json_int_t)row->fairness.max, "min",
                        (json_int_t)row->fairness.min)
            : json_null());
    json_object_set_new(o, "acquire_percentiles",
                        report_percentiles_json(c->percentiles, c->n_percentiles,
                                                row->acquire_pct_ms, row->has_latency));
    if (o)
        compare_row_parts_json(o, row);
    if (o)
        row_judged_json(o, row);
    return o;
}

int compare_json(const char *path, const struct comparison *c)
{
    const struct scenario *s = c->scn;
    json_t *rows = json_array(), *servers = json_array();
    for (size_t i = 0; i < c->n; i++)
        json_array_append_new(rows, row_json(c, &c->rows[i]));
    for (size_t i = 0; i < c->n_servers; i++)
        json_array_append_new(servers, json_string(c->servers[i]));
    struct report_safety_sum sum = compare_safety_sum(c);
    char line[900];
    compare_verdict(c, line, sizeof(line));
    line[strcspn(line, " ;")] = '\0'; /* the word */
    json_t *root = json_pack(
        "{s:s, s:s, s:s, s:s, s:I, s:f, s:I, s:I, s:b, s:I, s:s, s:o, s:o, s:o, s:o}", "schema",
        "locklab.compare/3", "version", LOCKLAB_VERSION, "scenario", s->name, "workload",
        s->workload->name, "clients", (json_int_t)s->clients, "duration_s",
        (double)s->duration_ms / 1000.0, "seed", (json_int_t)s->seed, "seeds", (json_int_t)c->seeds,
        "complete", c->complete, "not_run", (json_int_t)compare_not_run(c), "verdict", line,
        "expectation", compare_expectation_json(c), "servers", servers, "algorithms", rows,
        "safety", report_safety_sum_json(&sum));
    if (root == NULL)
        return -1;
    json_object_set_new(root, "faults", compare_planned_faults_json(c));
    json_object_set_new(root, "meta",
                        report_meta_json(c->meta, c->meta ? c->meta->started_wall_ns : 0,
                                         c->versions, c->n_versions, c->has_proxy));
    int rc = json_dump_file(root, path, JSON_INDENT(2) | JSON_REAL_PRECISION(6));
    json_decref(root);
    return rc;
}
