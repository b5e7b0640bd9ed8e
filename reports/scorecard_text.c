/* scorecard_text.c - the scorecard for other tools and for reading in a
 * review: --csv (one line per cell and seed), --junit FILE (a testsuite
 * per lock, a testcase per cell, so a CI system shows each cell), and
 * scorecard.md (the grid as a Markdown table, each cell linked to its
 * run, then the details and the answer). */
#include "reports/scorecard.h"

#include <inttypes.h>
#include <string.h>

#include "reports/csv.h"
#include "reports/report.h"

/* --- CSV ------------------------------------------------------------------ */

/* A figure in ms to the microsecond; empty when it does not apply. */
static void field_ms(FILE *f, bool has, double ms)
{
    if (has && ms >= 0)
        fprintf(f, ",%.3f", ms);
    else
        fputc(',', f);
}

static void csv_head(FILE *f, const struct scorecard_row *row, const struct scorecard_class *k)
{
    csv_field(f, true, row->label);
    csv_field(f, false, row->algorithm);
    fputs(row->fencing ? ",true" : ",false", f);
    csv_field(f, false, k->name);
}

static void csv_run(FILE *f, const struct scorecard_row *row, const struct scorecard_class *k,
                    const struct scorecard_cell *c, const struct scorecard_run *x)
{
    csv_head(f, row, k);
    fprintf(f, ",%" PRIu64, x->seed);
    csv_field(f, false, scorecard_run_word(x));
    if (x->ran)
        fprintf(f, ",%" PRIu64, x->violations);
    else
        fputc(',', f);
    field_ms(f, x->ran, x->p99_ms);
    field_ms(f, x->ran && x->has_window, x->window_p99_ms);
    if (x->ran)
        fprintf(f, ",%" PRIu64, x->failed);
    else
        fputc(',', f);
    field_ms(f, x->ran && x->has_window, x->longest_no_grant_ms);
    if (x->ran && x->has_window && x->recovery_ms < 0)
        fputs(",never", f);
    else
        field_ms(f, x->ran && x->has_window, x->recovery_ms);
    field_ms(f, x->ran, x->stuck_ms);
    fprintf(f, ",%.3f", c->lease_ms);
    csv_field(f, false, x->run_dir);
    csv_field(f, false, x->why);
    fputc('\n', f);
}

void scorecard_csv(FILE *f, const struct scorecard *sc)
{
    fputs("row,algorithm,fencing,class,seed,verdict,violations,p99_ms,window_p99_ms,failed,"
          "longest_no_grant_ms,recovery_ms,stuck_ms,lease_ms,run_dir,why\n",
          f);
    for (size_t r = 0; r < sc->n_rows; r++)
        for (size_t k = 0; k < sc->n_classes; k++) {
            const struct scorecard_row *row = &sc->rows[r];
            const struct scorecard_cell *c = &row->cells[k];
            for (size_t i = 0; i < c->n_runs; i++)
                csv_run(f, row, &sc->classes[k], c, &c->runs[i]);
            if (c->n_runs)
                continue;
            /* a cell with no seed: one line, its word and its why */
            char word[32];
            csv_head(f, row, &sc->classes[k]);
            fputs(",", f);
            csv_field(f, false, scorecard_cell_word(c, word, sizeof(word)));
            fputs(",,,,,,,", f); /* violations .. stuck_ms */
            if (c->state == CELL_RAN)
                fprintf(f, ",%.3f", c->lease_ms);
            else
                fputc(',', f);
            fputc(',', f);
            csv_field(f, false,
                      c->state == CELL_NA ? c->na_why
                      : row->not_run[0]   ? row->not_run
                                          : (sc->cut_short ? "the scorecard was cut short" : ""));
            fputc('\n', f);
        }
}

/* --- JUnit XML --------------------------------------------------------- */

/* Text or an attribute's value: markup escaped, and the control
 * characters XML 1.0 forbids left out. */
static void xml_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '&')
            fputs("&amp;", f);
        else if (ch == '<')
            fputs("&lt;", f);
        else if (ch == '>')
            fputs("&gt;", f);
        else if (ch == '"')
            fputs("&quot;", f);
        else if (ch == '\'')
            fputs("&apos;", f);
        else if (ch >= 0x20 || ch == '\t' || ch == '\n')
            fputc(ch, f);
    }
}

struct suite_counts {
    size_t tests, failures, errors, skipped;
};

static struct suite_counts row_counts(const struct scorecard *sc, const struct scorecard_row *row)
{
    struct suite_counts n = {.tests = sc->n_classes};
    for (size_t k = 0; k < sc->n_classes; k++) {
        enum scorecard_verdict v = scorecard_cell_verdict(&row->cells[k]);
        n.failures += v == SCV_UNSAFE || v == SCV_MIXED;
        n.errors += v == SCV_INCOMPLETE;
        n.skipped += v == SCV_NA || v == SCV_NOT_RUN;
    }
    return n;
}

static const struct scorecard_run *first_not_safe(const struct scorecard_cell *c, bool unsafe)
{
    for (size_t i = 0; i < c->n_runs; i++)
        if (unsafe ? c->runs[i].ran && !c->runs[i].safe : !c->runs[i].ran || !c->runs[i].complete)
            return &c->runs[i];
    return NULL;
}

/* Each seed, the known result and the command, as the testcase's output. */
static void junit_out(FILE *f, const struct scorecard_cell *c)
{
    fputs("      <system-out>", f);
    for (size_t i = 0; i < c->n_runs; i++) {
        const struct scorecard_run *x = &c->runs[i];
        char line[1200];
        snprintf(line, sizeof(line), "seed %" PRIu64 ": %s, %" PRIu64 " violations%s%s  %s/\n",
                 x->seed, scorecard_run_word(x), x->violations, x->why[0] ? " - " : "", x->why,
                 x->run_dir);
        xml_text(f, line);
    }
    if (c->known[0]) {
        fputs("known result: ", f);
        xml_text(f, c->known);
        fputs(" - ", f);
        xml_text(f, c->known_source);
        fputc('\n', f);
    }
    fputs("layout: ", f);
    xml_text(f, c->layout);
    fprintf(f, "; lease %.0f ms\nreproduce: ", c->lease_ms);
    xml_text(f, c->command);
    fputs("</system-out>\n", f);
}

/* <failure>, <error> or <skipped> with its message, or nothing (safe). */
static void junit_outcome(FILE *f, const struct scorecard *sc, const struct scorecard_row *row,
                          const struct scorecard_cell *c)
{
    enum scorecard_verdict v = scorecard_cell_verdict(c);
    char msg[600], word[32];
    const struct scorecard_run *x = first_not_safe(c, v == SCV_UNSAFE || v == SCV_MIXED);
    const char *tag = v == SCV_UNSAFE || v == SCV_MIXED ? "failure"
                      : v == SCV_INCOMPLETE             ? "error"
                      : v == SCV_SAFE                   ? NULL
                                                        : "skipped";
    if (tag == NULL)
        return;
    if (v == SCV_NA)
        snprintf(msg, sizeof(msg), "n/a: %s", c->na_why);
    else if (v == SCV_NOT_RUN)
        snprintf(msg, sizeof(msg), "NOT RUN: %s",
                 row->not_run[0] ? row->not_run
                 : sc->cut_short ? "the scorecard was cut short"
                                 : "no seed ran");
    else if (v == SCV_MIXED)
        snprintf(msg, sizeof(msg), "UNSAFE in %zu of %zu seeds: %s", c->n_unsafe, c->n_runs,
                 x ? x->why : "");
    else
        snprintf(msg, sizeof(msg), "%s: %s", scorecard_cell_word(c, word, sizeof(word)),
                 x ? x->why : "");
    fprintf(f, "      <%s message=\"", tag);
    xml_text(f, msg);
    fprintf(f, "\"%s/>\n", v == SCV_UNSAFE || v == SCV_MIXED ? " type=\"UNSAFE\"" : "");
}

static void junit_row(FILE *f, const struct scorecard *sc, const struct scorecard_row *row)
{
    struct suite_counts n = row_counts(sc, row);
    fputs("  <testsuite name=\"", f);
    xml_text(f, row->label);
    fprintf(f, "\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" skipped=\"%zu\">\n", n.tests,
            n.failures, n.errors, n.skipped);
    fputs("    <properties><property name=\"algorithm\" value=\"", f);
    xml_text(f, row->algorithm);
    fprintf(f, "\"/><property name=\"fencing\" value=\"%s\"/></properties>\n",
            row->fencing ? "true" : "false");
    for (size_t k = 0; k < sc->n_classes; k++) {
        const struct scorecard_cell *c = &row->cells[k];
        /* a class name with dots would read as a package to a CI system */
        char cls[160];
        snprintf(cls, sizeof(cls), "scorecard.%s", row->label);
        for (char *p = cls + strlen("scorecard."); *p; p++)
            *p = *p == '.' ? '_' : *p;
        fputs("    <testcase classname=\"", f);
        xml_text(f, cls);
        fputs("\" name=\"", f);
        xml_text(f, sc->classes[k].name);
        fputs("\">\n", f);
        junit_outcome(f, sc, row, c);
        if (c->state == CELL_RAN)
            junit_out(f, c);
        fputs("    </testcase>\n", f);
    }
    fputs("  </testsuite>\n", f);
}

int scorecard_junit(const char *path, const struct scorecard *sc)
{
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return -1;
    struct suite_counts all = {0};
    for (size_t r = 0; r < sc->n_rows; r++) {
        struct suite_counts n = row_counts(sc, &sc->rows[r]);
        all.tests += n.tests;
        all.failures += n.failures;
        all.errors += n.errors;
        all.skipped += n.skipped;
    }
    char name[200];
    snprintf(name, sizeof(name), "locklab scorecard %s on %s", sc->suite, sc->scenario);
    fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"", f);
    xml_text(f, name);
    fprintf(f, "\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" skipped=\"%zu\" time=\"%.3f\">\n",
            all.tests, all.failures, all.errors, all.skipped, sc->elapsed_s);
    for (size_t r = 0; r < sc->n_rows; r++)
        junit_row(f, sc, &sc->rows[r]);
    fputs("</testsuites>\n", f);
    return report_close(f);
}

/* --- scorecard.md --------------------------------------------------------- */

/* Text in a Markdown cell or list: no bar or line break may end the cell
 * early, and no <...> may read as a tag or an autolink. */
static void md_cell(FILE *f, const char *text)
{
    for (const char *p = text; *p; p++)
        if (*p == '|' || *p == '<' || *p == '>')
            fprintf(f, "\\%c", *p);
        else
            fputc(*p == '\n' ? ' ' : *p, f);
}

static void md_grid_cell(FILE *f, const struct scorecard *sc, const struct scorecard_cell *c,
                         size_t k)
{
    enum scorecard_verdict v = scorecard_cell_verdict(c);
    char fig[32];
    /* the terminal's words, with room for the long forms */
    const char *word = v == SCV_INCOMPLETE ? "INCOMPLETE" : scorecard_grid_word(sc, c, k);
    scorecard_grid_figure(sc, c, k, fig, sizeof(fig));
    if (strcmp(fig, "never") == 0)
        snprintf(fig, sizeof(fig), "never recovered");
    bool bad = v == SCV_UNSAFE || v == SCV_MIXED;
    bool of = strstr(fig, " of ") != NULL; /* "1 of 3": seeds */
    /* bold is Markdown's only alarm: a lock that broke */
    char text[80];
    snprintf(text, sizeof(text), "%s%s%s%s%s%s", bad ? "**" : "", word, bad ? "**" : "",
             fig[0] ? " " : "", of ? "in " : "", fig);
    if (c->n_runs && c->runs[0].run_dir[0]) {
        fprintf(f, " [%s](", text);
        md_cell(f, scorecard_rel(sc, c->runs[0].run_dir));
        fputs("/report.html) |", f);
    } else {
        fprintf(f, " %s |", text);
    }
}

static void md_grid(FILE *f, const struct scorecard *sc)
{
    fputs("| lock |", f);
    for (size_t k = 0; k < sc->n_classes; k++) {
        fputc(' ', f);
        md_cell(f, sc->classes[k].title);
        fputs(" |", f);
    }
    fputs("\n|---|", f);
    for (size_t k = 0; k < sc->n_classes; k++)
        fputs("---|", f);
    fputc('\n', f);
    for (size_t r = 0; r < sc->n_rows; r++) {
        const struct scorecard_row *row = &sc->rows[r];
        fputs("| ", f);
        md_cell(f, row->label);
        fputs(" |", f);
        for (size_t k = 0; k < sc->n_classes; k++)
            md_grid_cell(f, sc, &row->cells[k], k);
        fputc('\n', f);
    }
}

static void md_seeds(FILE *f, const struct scorecard *sc, const struct scorecard_cell *c)
{
    for (size_t i = 0; i < c->n_runs; i++) {
        const struct scorecard_run *x = &c->runs[i];
        fprintf(f, "  - [seed %" PRIu64 "](", x->seed);
        md_cell(f, scorecard_rel(sc, x->run_dir));
        fprintf(f, "/report.html): %s, %" PRIu64 " violations", scorecard_run_word(x),
                x->violations);
        if (x->why[0] && (!x->safe || !x->complete || !x->ran)) {
            fputs(" — ", f);
            md_cell(f, x->why);
        }
        fputc('\n', f);
    }
}

static void md_details(FILE *f, const struct scorecard *sc)
{
    size_t n = 0;
    fputs("\n## Cells other than safe, and why\n\n", f);
    for (size_t r = 0; r < sc->n_rows; r++) {
        const struct scorecard_row *row = &sc->rows[r];
        if (row->not_run[0]) {
            fprintf(f, "- **%s**: NOT RUN — ", row->label);
            md_cell(f, row->not_run);
            fputc('\n', f);
            n++;
            continue;
        }
        for (size_t k = 0; k < sc->n_classes; k++) {
            const struct scorecard_cell *c = &row->cells[k];
            enum scorecard_verdict v = scorecard_cell_verdict(c);
            if (v == SCV_SAFE)
                continue;
            n++;
            char word[32];
            fprintf(f, "- **%s / %s**: %s", row->label, sc->classes[k].title,
                    v == SCV_MIXED ? "UNSAFE in" : scorecard_cell_word(c, word, sizeof(word)));
            if (v == SCV_MIXED)
                fprintf(f, " %zu of %zu seeds", c->n_unsafe, c->n_runs);
            if (v == SCV_NA) {
                fputs(" — ", f);
                md_cell(f, c->na_why);
            }
            fputc('\n', f);
            if (c->known[0] && (v == SCV_UNSAFE || v == SCV_MIXED)) {
                fputs("  - known result: ", f);
                md_cell(f, c->known);
                fputs(" — ", f);
                md_cell(f, c->known_source);
                fputc('\n', f);
            }
            md_seeds(f, sc, c);
            if (c->command[0])
                fprintf(f, "  - reproduce: `%s`\n", c->command);
        }
    }
    if (n == 0)
        fputs("None: every cell was safe in every seed.\n", f);
}

struct md_out {
    FILE *f;
    const struct scorecard *sc;
};

static void md_unmet_item(void *arg, size_t r, size_t k, const char *text)
{
    const struct md_out *o = arg;
    fprintf(o->f, "- **%s / %s**: ", o->sc->rows[r].label, o->sc->classes[k].title);
    md_cell(o->f, text);
    fputc('\n', o->f);
}

/* The safe cells a published finding calls unsafe (scorecard_known_unmet). */
static void md_unmet(FILE *f, const struct scorecard *sc)
{
    struct md_out o = {f, sc};
    if (scorecard_each_unmet(sc, NULL, NULL) == 0)
        return;
    fputs("\n## Published results this suite did not reproduce\n\n", f);
    scorecard_each_unmet(sc, md_unmet_item, &o);
}

static void md_cells(FILE *f, const struct scorecard *sc)
{
    fputs("\n## Every cell\n\nFigures are the worst seed's; the window is the class's fault "
          "from its start to its end.\n\n| lock | class | verdict | layout | lease | P99 | "
          "window P99 | longest no grant | stuck | reproduce |\n"
          "|---|---|---|---|---:|---:|---:|---:|---:|---|\n",
          f);
    for (size_t r = 0; r < sc->n_rows; r++)
        for (size_t k = 0; k < sc->n_classes; k++) {
            const struct scorecard_cell *c = &sc->rows[r].cells[k];
            if (c->state != CELL_RAN)
                continue;
            double p99 = -1, wp99 = -1, gap = -1, stuck = -1;
            for (size_t i = 0; i < c->n_runs; i++) {
                const struct scorecard_run *x = &c->runs[i];
                if (!x->ran)
                    continue;
                p99 = x->p99_ms > p99 ? x->p99_ms : p99;
                stuck = x->stuck_ms > stuck ? x->stuck_ms : stuck;
                if (x->has_window) {
                    wp99 = x->window_p99_ms > wp99 ? x->window_p99_ms : wp99;
                    gap = x->longest_no_grant_ms > gap ? x->longest_no_grant_ms : gap;
                }
            }
            char word[32], a[32], b[32], g[32], s[32], l[32];
            fputs("| ", f);
            md_cell(f, sc->rows[r].label);
            fprintf(f, " | %s | %s | ", sc->classes[k].title,
                    scorecard_cell_word(c, word, sizeof(word)));
            md_cell(f, c->layout);
            fprintf(f, " | %s | %s | %s | %s | %s | `",
                    c->lease_ms > 0 ? scorecard_ms(c->lease_ms, false, l, sizeof(l)) : "none",
                    scorecard_ms(p99, false, a, sizeof(a)), scorecard_ms(wp99, false, b, sizeof(b)),
                    scorecard_ms(gap, false, g, sizeof(g)),
                    scorecard_ms(stuck, false, s, sizeof(s)));
            md_cell(f, c->command);
            fputs("` |\n", f);
        }
}

int scorecard_markdown(const char *path, const struct scorecard *sc)
{
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return -1;
    char end[800], answer[4096], ms[32];
    fprintf(f, "# locklab scorecard: %s through the %s suite\n\n**%s**\n\n", sc->scenario,
            sc->suite, scorecard_end_text(sc, end, sizeof(end)));
    fprintf(f, "Suite `%s`", sc->suite_path);
    if (sc->description[0]) {
        fputs(": ", f);
        md_cell(f, sc->description);
    }
    fprintf(f,
            ". Scenario `%s`; a lease of %s asked of every lock; each cell in %zu seed%s "
            "from %" PRIu64 ". A cell is judged by what happened in it, never by an "
            "expectation.\n\n",
            sc->scenario_path, scorecard_ms(sc->ttl_ms, false, ms, sizeof(ms)), sc->seeds,
            sc->seeds == 1 ? "" : "s", sc->first_seed);
    report_meta_line(f, sc->meta, sc->meta ? sc->meta->started_wall_ns : 0, NULL, 0, false);
    fputc('\n', f);
    md_grid(f, sc);
    fputs("\nsafe + the P99 of the acquires begun in the fault window (the whole run's without "
          "faults); stuck + the longest stretch with waiters and no grant, where that was longer "
          "than the lease; **UNSAFE** + its violations (v; inv: only an invariant broke), or "
          "*in k of n* seeds where they differ; INCOMP: could not be judged; n/a: the class "
          "cannot apply. Each figure is the worst seed's; each cell links to its first seed's "
          "report.\n",
          f);
    md_details(f, sc);
    md_unmet(f, sc);
    md_cells(f, sc);
    fprintf(f, "\n**Answer:** %s\n", scorecard_answer(sc, answer, sizeof(answer)));
    return report_close(f);
}
