/* matrix.c - the known-results matrix as a table: terminal, Markdown, JSON. */
#include "reports/matrix.h"

#include "reports/html.h"
#include "reports/text_table.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(MATRIX_MAX_ROWS <= TEXT_TABLE_MAX_ROWS, "a table has room for every row");

#include "reports/report.h"
#include "sim/scenario/scenario.h"

#define SCHEMA "locklab.matrix/1"

static void append_expect(char *buf, size_t len, size_t *used, const char *what,
                          const struct expect_num *e)
{
    if (e->op == EXPECT_UNSET)
        return;
    char w[24];
    report_append(buf, len, used, "%s%s %s", *used ? "; " : "", what,
                  expect_format(e, w, sizeof(w)));
}

void matrix_expected(const struct scenario *s, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    append_expect(buf, len, &used, "violations", &s->expect.violations);
    append_expect(buf, len, &used, "rejected_accesses", &s->expect.rejected_accesses);
    if (s->expect.invariants != EXPECT_INV_UNSET)
        report_append(buf, len, &used, "; invariants %s",
                      s->expect.invariants == EXPECT_INV_HOLD ? "hold" : "broken");
    for (size_t i = 0; i < s->n_faults; i++) {
        for (size_t k = 0; k < FAULT_EXPECTS; k++) {
            char what[48];
            snprintf(what, sizeof(what), "faults[%zu].%s", i, fault_expect_names[k]);
            append_expect(buf, len, &used, what, fault_expect_at(&s->faults[i].expect, k));
        }
    }
}

const char *matrix_incomplete_note(const struct matrix *m)
{
    return m->cut_short ? " (cut short)" : m->complete ? "" : " (some runs could not be judged)";
}

void matrix_run_fill(struct matrix_run *m, const struct run_result *r)
{
    m->ran = true;
    m->matched = r->complete && r->passed;
    snprintf(m->verdict, sizeof(m->verdict), "%s", report_verdict(r));
    char why[256];
    const char *fail = report_failure(r, why, sizeof(why));
    if (!r->complete)
        snprintf(m->failure, sizeof(m->failure), "%s", r->incomplete_reason);
    else
        snprintf(m->failure, sizeof(m->failure), "%s", fail ? fail : "");
    snprintf(m->run_dir, sizeof(m->run_dir), "%s", r->run_dir);
    m->violations = r->check.violations;
    m->safety = report_safety_of(r);
    m->acquired = r->stat[ST_ACQUIRE_OK];
    struct fault_cost x = FAULT_COST_NONE;
    for (size_t i = 0; i < r->n_spans; i++)
        report_fault_cost_add(&x, &r->avail[i]);
    m->fault_runs = r->n_spans;
    m->failed = x.failed;
    m->ambiguous = x.ambiguous;
    m->recovered = x.recovered;
    m->recovery_ms = x.recovery_ms;
    m->stuck_ms = report_stuck_ms(r);
    m->has_latency = report_chosen_ms(r, r->ops[OP_ACQUIRE], m->acquire_pct_ms);
}

size_t matrix_rows_matched(const struct matrix *m)
{
    size_t n = 0;
    for (size_t i = 0; i < m->n; i++)
        n += m->rows[i].n_runs > 0 && m->rows[i].matched == m->rows[i].n_runs;
    return n;
}

/* "0, 0, 0" or "12, 9, 14": one figure per seed. */
static const char *per_seed(const struct matrix_row *row, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t k = 0; k < row->n_runs; k++) {
        const struct matrix_run *r = &row->runs[k];
        if (r->ran)
            report_append(buf, len, &used, "%s%" PRIu64, k ? ", " : "", r->violations);
        else
            report_append(buf, len, &used, "%s-", k ? ", " : "");
    }
    return buf;
}

struct row_sums {
    uint64_t failed, ambiguous;
    double recovery_ms, stuck_ms; /* the worst seed's */
    bool any_fault, never;        /* some window never recovered in some seed */
};

static struct row_sums sums(const struct matrix_row *row)
{
    struct row_sums s = {0};
    for (size_t k = 0; k < row->n_runs; k++) {
        const struct matrix_run *r = &row->runs[k];
        if (!r->ran)
            continue;
        s.failed += r->failed;
        s.ambiguous += r->ambiguous;
        s.any_fault = s.any_fault || r->fault_runs > 0;
        s.never = s.never || (r->fault_runs > 0 && !r->recovered);
        if (r->recovery_ms > s.recovery_ms)
            s.recovery_ms = r->recovery_ms;
        if (r->stuck_ms > s.stuck_ms)
            s.stuck_ms = r->stuck_ms;
    }
    return s;
}

static const char *recovery_text(const struct row_sums *s, char *buf, size_t len)
{
    if (!s->any_fault)
        snprintf(buf, len, "-");
    else if (s->never)
        snprintf(buf, len, "never");
    else
        snprintf(buf, len, "%.0f ms", s->recovery_ms);
    return buf;
}

/* The safety of a row's seeds that ran, added to sum. Unnamed: the
 * table's safety column names the rows. */
static void add_row_safety(struct report_safety_sum *sum, const struct matrix_row *row)
{
    for (size_t k = 0; k < row->n_runs; k++)
        if (row->runs[k].ran)
            report_safety_add(sum, &row->runs[k].safety, NULL);
}

static struct report_safety_sum row_safety(const struct matrix_row *row)
{
    struct report_safety_sum sum = {0};
    add_row_safety(&sum, row);
    return sum;
}

static struct report_safety_sum matrix_safety(const struct matrix *m)
{
    struct report_safety_sum sum = {0};
    for (size_t i = 0; i < m->n; i++)
        add_row_safety(&sum, &m->rows[i]);
    return sum;
}

/* A row whose every miss is a run that could not be judged (a fault not
 * carried out, a server that died, a host stall) neither matched nor
 * failed: it asked nothing, and says so rather than "yes" or "NO". */
static bool row_judged(const struct matrix_row *row)
{
    for (size_t k = 0; k < row->n_runs; k++)
        if (row->runs[k].ran && !row->runs[k].matched && strcmp(row->runs[k].verdict, "INCOMPLETE"))
            return true; /* a run that did not match, judged */
    return row->matched == row->n_runs;
}

static const char *row_state(const struct matrix_row *row)
{
    return row->n_runs == 0              ? "NOT RUN"
           : row->matched == row->n_runs ? "yes"
           : row_judged(row)             ? "NO"
                                         : "not judged";
}

/* The seeds of a row that missed: each one's verdict, safety and why;
 * wrapped within 120 columns unless wide. */
static void terminal_misses(FILE *f, const struct matrix_row *row, bool wide)
{
    for (size_t k = 0; k < row->n_runs; k++) {
        const struct matrix_run *r = &row->runs[k];
        if (!r->ran || r->matched)
            continue;
        char verdict[200], line[1600];
        snprintf(line, sizeof(line), "seed %" PRIu64 ": %s - %s  %s/", r->seed,
                 report_verdict_safety(r->verdict, &r->safety, verdict, sizeof(verdict)),
                 r->failure, r->run_dir);
        if (wide)
            fprintf(f, "    %s\n", line);
        else
            text_wrap(f, line, TEXT_TABLE_INDENT, 2);
    }
}

static const char *matrix_verdict(const struct matrix *m)
{
    size_t ok = matrix_rows_matched(m);
    return ok == m->n && m->complete ? "PASS" : !m->complete ? "INCOMPLETE" : "FAIL";
}

/* --wide: one line per row, however wide, as before the table kept within
 * 120 columns. */
static void terminal_wide(FILE *f, const struct matrix *m)
{
    int name_w = 34, algo_w = 11; /* at least these; wider when a name is longer */
    for (size_t i = 0; i < m->n; i++) {
        int w = (int)strlen(m->rows[i].name);
        name_w = w > name_w ? w : name_w;
        w = (int)strlen(m->rows[i].algorithm);
        algo_w = w > algo_w ? w : algo_w;
    }
    fprintf(f, "\n%-*s %-*s %-10s %-11s %-6s %-20s %-9s %-10s %-9s %s\n", name_w, "row", algo_w,
            "algorithm", "match", "safety", "seeds", "violations", "failed", "recovery", "stuck",
            "expected");
    for (size_t i = 0; i < m->n; i++) {
        const struct matrix_row *row = &m->rows[i];
        struct row_sums s = sums(row);
        struct report_safety_sum safety = row_safety(row);
        char seeds[16], viol[64], rec[32], stuck[32], safe[32];
        snprintf(seeds, sizeof(seeds), "%zu/%zu", row->matched, row->n_runs);
        snprintf(stuck, sizeof(stuck), "%.0f ms", s.stuck_ms);
        fprintf(f, "%-*s %-*s %-10s %-11s %-6s %-20s %-9" PRIu64 " %-10s %-9s %s\n", name_w,
                row->name, algo_w, row->algorithm, row_state(row),
                report_safety_sum_word(&safety, safe, sizeof(safe)), seeds,
                per_seed(row, viol, sizeof(viol)), s.failed, recovery_text(&s, rec, sizeof(rec)),
                stuck, row->expected);
        terminal_misses(f, row, true);
    }
}

/* A row's cells, in the columns terminal_table makes. */
static void table_cells(struct text_table *t, const struct matrix_row *row)
{
    struct row_sums s = sums(row);
    struct report_safety_sum safety = row_safety(row);
    char viol[MATRIX_MAX_SEEDS * 8], rec[32], safe[32];
    size_t r = text_table_row(t), k = 0;
    text_table_cell(t, r, k++, "%s", row->name);
    text_table_cell(t, r, k++, "%s", row->algorithm);
    text_table_cell(t, r, k++, "%s", row_state(row));
    text_table_cell(t, r, k++, "%s", report_safety_sum_word(&safety, safe, sizeof(safe)));
    text_table_cell(t, r, k++, "%zu/%zu", row->matched, row->n_runs);
    text_table_cell(t, r, k++, "%s", per_seed(row, viol, sizeof(viol)));
    text_table_cell(t, r, k++, "%" PRIu64, s.failed);
    text_table_cell(t, r, k++, "%s", recovery_text(&s, rec, sizeof(rec)));
    text_table_cell(t, r, k++, "%.0f ms", s.stuck_ms);
    text_table_cell(t, r, k, "%s", row->expected);
}

/* Within 120 columns: each column as wide as its widest cell, and what
 * has no room beside the others (the expectation) on the line under its
 * row, its head under the head line. */
static void terminal_table(FILE *f, const struct matrix *m)
{
    struct text_table *t = calloc(1, sizeof(*t));
    if (t == NULL) {
        terminal_wide(f, m);
        return;
    }
    static const struct {
        const char *head;
        bool left;
    } cols[] = {{"row", true},    {"algorithm", true},  {"match", true},   {"safety", true},
                {"seeds", true},  {"violations", true}, {"failed", false}, {"recovery", false},
                {"stuck", false}, {"expected", true}};
    for (size_t c = 0; c < sizeof(cols) / sizeof(cols[0]); c++)
        text_table_column(t, cols[c].head, cols[c].left, c == 0 ? 0 : c == 9 ? 2 : 1);
    for (size_t i = 0; i < m->n; i++)
        table_cells(t, &m->rows[i]);
    text_table_layout(t);
    fputc('\n', f);
    text_table_print_head(f, t);
    for (size_t i = 0; i < m->n; i++) {
        text_table_print_row(f, t, i);
        terminal_misses(f, &m->rows[i], false);
    }
    text_table_free(t);
    free(t);
}

void matrix_terminal(FILE *f, const struct matrix *m, bool wide)
{
    if (wide)
        terminal_wide(f, m);
    else
        terminal_table(f, m);
    struct report_safety_sum all = matrix_safety(m);
    char safety[400];
    /* one line, however long: what a script greps for */
    fprintf(f,
            "\nEnd of matrix: %s - %zu of %zu rows matched in every seed (%zu seed%s each), "
            "%.0f s%s; %s  %s/\n",
            matrix_verdict(m), matrix_rows_matched(m), m->n, m->seeds, m->seeds == 1 ? "" : "s",
            m->elapsed_s, matrix_incomplete_note(m),
            report_safety_sum_text(&all, safety, sizeof(safety)), m->out_dir);
}

/* A Markdown cell: no bar or line break may end the cell early. */
static void md_cell(FILE *f, const char *text)
{
    for (const char *p = text; *p; p++)
        fputs(*p == '|' ? "\\|" : *p == '\n' ? " " : (char[]){*p, 0}, f);
}

int matrix_markdown(const char *path, const struct matrix *m)
{
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return -1;
    size_t ok = matrix_rows_matched(m);
    struct report_safety_sum all = matrix_safety(m);
    char safety[400];
    fprintf(f, "# locklab: the known-results matrix — %zu of %zu rows matched\n\n**%s**; %s\n\n",
            ok, m->n, matrix_verdict(m), report_safety_sum_text(&all, safety, sizeof(safety)));
    fprintf(f,
            "Scenarios from `%s`, each run with %zu seed%s (the file's seed, then the next ones)."
            " A row matches when every seed met every expectation of its scenario. Failed"
            " acquisitions are summed over the seeds' fault windows; the recovery and the longest"
            " stuck are the worst seed's.%s\n\n",
            m->dir, m->seeds, m->seeds == 1 ? "" : "s",
            m->cut_short  ? " **The matrix was cut short: some runs are missing.**"
            : m->complete ? ""
                          : " **Some runs could not be judged (INCOMPLETE): their rows say why.**");
    fprintf(f, "| row | algorithm | fault | expected | matched | safety | violations per seed | "
               "failed acquisitions | recovery | stuck |\n"
               "|---|---|---|---|---|---|---|---:|---|---:|\n");
    for (size_t i = 0; i < m->n; i++) {
        const struct matrix_row *row = &m->rows[i];
        struct row_sums s = sums(row);
        struct report_safety_sum rs = row_safety(row);
        char viol[64], rec[32], word[32];
        fprintf(f, "| %s | %s | ", row->name, row->algorithm);
        md_cell(f, row->fault);
        /* bold is Markdown's only alarm: a lock that broke */
        fprintf(f, " | %s | %s %zu/%zu | %s%s%s | %s | %" PRIu64 " | %s | %.0f ms |\n",
                row->expected, row_state(row), row->matched, row->n_runs, rs.unsafe ? "**" : "",
                report_safety_sum_word(&rs, word, sizeof(word)), rs.unsafe ? "**" : "",
                per_seed(row, viol, sizeof(viol)), s.failed, recovery_text(&s, rec, sizeof(rec)),
                s.stuck_ms);
    }
    fprintf(f, "\n## Runs that did not match\n\n");
    size_t misses = 0;
    for (size_t i = 0; i < m->n; i++)
        for (size_t k = 0; k < m->rows[i].n_runs; k++) {
            const struct matrix_run *r = &m->rows[i].runs[k];
            if (r->matched)
                continue;
            misses++;
            char verdict[200];
            fprintf(f, "- %s, seed %" PRIu64 ": %s — ", m->rows[i].name, r->seed,
                    r->ran ? report_verdict_safety(r->verdict, &r->safety, verdict, sizeof(verdict))
                           : r->verdict);
            md_cell(f, r->failure);
            fprintf(f, " (`%s/`)\n", r->run_dir);
        }
    if (misses == 0)
        fprintf(f, "None.\n");
    return report_close(f);
}

static json_t *run_json(const struct matrix *m, const struct matrix_run *r)
{
    json_t *o = json_pack(
        "{s:I, s:b, s:b, s:s, s:o, s:s, s:I, s:o, s:I, s:I, s:I, s:o, s:f}", "seed",
        (json_int_t)r->seed, "ran", r->ran, "matched", r->matched, "verdict", r->verdict, "failure",
        r->failure[0] ? json_string(r->failure) : json_null(), "run_dir", r->run_dir, "violations",
        (json_int_t)r->violations, "safety", r->ran ? report_safety_json(&r->safety) : json_null(),
        "acquired", (json_int_t)r->acquired, "failed_acquisitions", (json_int_t)r->failed,
        "ambiguous_acquisitions", (json_int_t)r->ambiguous, "recovery_ms",
        r->fault_runs == 0 || !r->recovered ? json_null() : json_real(r->recovery_ms), "stuck_ms",
        r->stuck_ms);
    json_object_set_new(o, "acquire_percentiles",
                        report_percentiles_json(m->percentiles, m->n_percentiles, r->acquire_pct_ms,
                                                r->ran && r->has_latency));
    return o;
}

int matrix_json(const char *path, const struct matrix *m)
{
    json_t *rows = json_array();
    for (size_t i = 0; i < m->n; i++) {
        const struct matrix_row *row = &m->rows[i];
        json_t *runs = json_array();
        for (size_t k = 0; k < row->n_runs; k++)
            json_array_append_new(runs, run_json(m, &row->runs[k]));
        json_array_append_new(
            rows, json_pack("{s:s, s:s, s:s, s:s, s:s, s:b, s:s, s:I, s:I, s:o}", "name", row->name,
                            "file", row->file, "algorithm", row->algorithm, "fault", row->fault,
                            "expected", row->expected, "matched",
                            row->n_runs > 0 && row->matched == row->n_runs, "state", row_state(row),
                            "seeds", (json_int_t)row->n_runs, "seeds_matched",
                            (json_int_t)row->matched, "runs", runs));
    }
    size_t ok = matrix_rows_matched(m);
    struct report_safety_sum all = matrix_safety(m);
    json_t *root =
        json_pack("{s:s, s:s, s:s, s:I, s:b, s:b, s:I, s:o, s:f, s:o}", "schema", SCHEMA, "locklab",
                  LOCKLAB_VERSION, "dir", m->dir, "seeds", (json_int_t)m->seeds, "complete",
                  m->complete, "matched", m->complete && ok == m->n, "rows_matched", (json_int_t)ok,
                  "safety", report_safety_sum_json(&all), "elapsed_s", m->elapsed_s, "rows", rows);
    if (root == NULL) {
        errno = ENOMEM;
        return -1;
    }
    json_object_set_new(root, "meta",
                        report_meta_json(m->meta, m->meta ? m->meta->started_wall_ns : 0,
                                         m->versions, m->n_versions, m->has_proxy));
    int rc = json_dump_file(root, path, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(root);
    return rc == 0 ? 0 : -1;
}

/* --- matrix.html -------------------------------------------------------- */

/* A run's folder as a link from out_dir: the part below it. */
static const char *below(const struct matrix *m, const char *run_dir)
{
    size_t n = strlen(m->out_dir);
    if (strncmp(run_dir, m->out_dir, n) == 0 && run_dir[n] == '/')
        return run_dir + n + 1;
    return run_dir;
}

static void html_seeds(FILE *f, const struct matrix *m, const struct matrix_row *row)
{
    for (size_t k = 0; k < row->n_runs; k++) {
        const struct matrix_run *r = &row->runs[k];
        fprintf(f, "%s", k ? ", " : "");
        if (!r->ran) {
            fprintf(f, "<span title=\"seed %" PRIu64 ": not run\">-</span>", r->seed);
            continue;
        }
        fprintf(f, "<a href=\"");
        svg_text(f, below(m, r->run_dir));
        char verdict[200];
        fprintf(f, "/report.html\" title=\"seed %" PRIu64 ": ", r->seed);
        svg_text(f, report_verdict_safety(r->verdict, &r->safety, verdict, sizeof(verdict)));
        if (r->failure[0]) {
            fprintf(f, ": ");
            svg_text(f, r->failure);
        }
        fprintf(f, "\"%s>%" PRIu64 "</a>", r->matched ? "" : " class=\"why\"", r->violations);
    }
}

static void html_row(FILE *f, const struct matrix *m, const struct matrix_row *row)
{
    struct row_sums s = sums(row);
    char rec[32];
    const char *state = row_state(row);
    fprintf(
        f, "<tr%s data-row=\"%s\" data-matched=\"%zu\" data-runs=\"%zu\"><td class=\"l words\">",
        strcmp(state, "yes") == 0 ? "" : " class=\"bad\"", row->name, row->matched, row->n_runs);
    svg_text(f, row->name);
    fprintf(f, "</td><td class=\"l\">");
    html_algorithm_name(f, row->algorithm);
    fprintf(f, "</td><td class=\"l\">");
    svg_text(f, row->fault);
    fprintf(f, "</td><td class=\"l\">");
    svg_text(f, row->expected);
    fprintf(f, "</td><td><span class=\"verdict %s\">%s</span> %zu/%zu</td><td>",
            strcmp(state, "yes") == 0  ? "PASS"
            : strcmp(state, "NO") == 0 ? "FAIL"
            : row->n_runs              ? "INCOMPLETE"
                                       : "NOTRUN",
            state, row->matched, row->n_runs);
    struct report_safety_sum safety = row_safety(row);
    html_safety_sum_badge(f, &safety);
    fprintf(f, "</td><td>");
    html_seeds(f, m, row);
    fprintf(f, "</td><td>%" PRIu64 "</td><td>%s</td><td>%.0f ms</td></tr>\n", s.failed,
            recovery_text(&s, rec, sizeof(rec)), s.stuck_ms);
}

int matrix_html(const char *path, const struct matrix *m)
{
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return -1;
    size_t ok = matrix_rows_matched(m);
    const char *verdict = matrix_verdict(m);
    struct report_safety_sum all = matrix_safety(m);
    char title[96], safety[400];
    snprintf(title, sizeof(title), "locklab matrix: %zu of %zu rows matched", ok, m->n);
    html_begin(f, title);
    fprintf(f,
            "<h1>The known-results matrix<span class=\"verdict %s\" data-figure=\"verdict\">%s"
            "</span>",
            verdict, verdict);
    html_safety_sum_badge(f, &all);
    fprintf(f,
            "</h1>\n<p class=\"meta\" data-figure=\"matched\" data-rows=\"%zu\" "
            "data-matched=\"%zu\">%zu of %zu rows matched in every seed (%zu seed%s each), "
            "%.0f s%s; %s. Scenarios from <code>",
            m->n, ok, ok, m->n, m->seeds, m->seeds == 1 ? "" : "s", m->elapsed_s,
            m->cut_short  ? ", cut short: some runs are missing"
            : m->complete ? ""
                          : ", some runs could not be judged (INCOMPLETE): their rows say why",
            report_safety_sum_text(&all, safety, sizeof(safety)));
    svg_text(f, m->dir);
    fprintf(f, "</code>.</p>\n");
    html_meta_line(f, m->meta, m->meta ? m->meta->started_wall_ns : 0, m->versions, m->n_versions,
                   m->has_proxy);
    fprintf(f, "<p class=\"note\">A row matches when every seed met every "
               "expectation of its scenario: a correct lock must never show a violation, an unsafe "
               "one must. Each figure under <i>violations per seed</i> links to that run's page; "
               "failed acquisitions are summed over the seeds' fault windows, the recovery and the "
               "longest stuck are the worst seed's.</p>\n");
    fprintf(f, "<table class=\"matrix\"><tr><th class=\"l\">row</th><th class=\"l\">algorithm"
               "</th><th class=\"l\">fault</th><th class=\"l\">expected</th><th>matched</th>"
               "<th>safety</th><th>violations per "
               "seed</th><th>failed</th><th>recovery</th><th>stuck</th></tr>\n");
    for (size_t i = 0; i < m->n; i++)
        html_row(f, m, &m->rows[i]);
    fprintf(f, "</table>\n");
    html_end_hover(f, "hover a seed's figure for its verdict"); /* the page has no chart */
    return report_close(f);
}
