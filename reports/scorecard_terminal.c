/* scorecard_terminal.c - the scorecard on the terminal: a header line, the
 * grid within 120 columns, a legend, the details a grid cell has no room
 * for (why each unsafe cell broke, why n/a, each seed where seeds differ,
 * the leases and layouts), the answer, and the end line.
 *
 * A cell is its grid word and one figure (scorecard.c says which). The
 * grid keeps both on one line when that fits in 120 columns; else the
 * figures go on a second line under the words, which fits 11 classes of
 * 7-character heads beside a 32-character label. --wide keeps the one
 * line, however long. */
#include "reports/scorecard.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "reports/report.h"
#include "reports/text_table.h"

#define GRID_COLUMNS TEXT_TABLE_WIDTH
#define LABEL_MIN    12

struct grid {
    char figure[SCORECARD_MAX_ROWS][SCORECARD_MAX_CLASSES][16];
    const char *word[SCORECARD_MAX_ROWS][SCORECARD_MAX_CLASSES];
    int width[SCORECARD_MAX_CLASSES];
    int label_width;
    bool one_line;
};

static int max_i(int a, int b)
{
    return a > b ? a : b;
}

/* A cell's text on one line: "safe 2.1ms". */
static int one_line_len(const struct grid *g, size_t r, size_t c)
{
    int n = (int)strlen(g->word[r][c]);
    return g->figure[r][c][0] ? n + 1 + (int)strlen(g->figure[r][c]) : n;
}

/* The widths of both forms, then the one that fits (wide: the one line,
 * however long). */
static void grid_layout(const struct scorecard *sc, struct grid *g, bool wide)
{
    int one[SCORECARD_MAX_CLASSES] = {0}, two[SCORECARD_MAX_CLASSES] = {0};
    int labels = (int)strlen("lock"), sum1 = 0, sum2 = 0;
    for (size_t r = 0; r < sc->n_rows; r++)
        labels = max_i(labels, (int)strlen(sc->rows[r].label));
    for (size_t c = 0; c < sc->n_classes; c++) {
        one[c] = two[c] = (int)strlen(sc->classes[c].short_);
        for (size_t r = 0; r < sc->n_rows; r++) {
            if (sc->rows[r].not_run[0])
                continue; /* a row that does not run says so in one line */
            one[c] = max_i(one[c], one_line_len(g, r, c));
            two[c] = max_i(two[c], max_i((int)strlen(g->word[r][c]), (int)strlen(g->figure[r][c])));
        }
        sum1 += 2 + one[c];
        sum2 += 1 + two[c];
    }
    g->one_line = wide || labels + sum1 <= GRID_COLUMNS;
    for (size_t c = 0; c < sc->n_classes; c++)
        g->width[c] = g->one_line ? one[c] : two[c];
    int room = GRID_COLUMNS - (g->one_line ? sum1 : sum2);
    /* a longer label goes on a line of its own above its cells */
    g->label_width = wide || labels <= room ? labels : max_i(room, LABEL_MIN);
}

static void grid_fill(const struct scorecard *sc, struct grid *g, bool wide)
{
    for (size_t r = 0; r < sc->n_rows; r++)
        for (size_t c = 0; c < sc->n_classes; c++) {
            const struct scorecard_cell *cell = &sc->rows[r].cells[c];
            g->word[r][c] = scorecard_grid_word(sc, cell, c);
            scorecard_grid_figure(sc, cell, c, g->figure[r][c], sizeof(g->figure[r][c]));
        }
    grid_layout(sc, g, wide);
}

static void grid_row(FILE *f, const struct scorecard *sc, const struct grid *g, size_t r)
{
    const struct scorecard_row *row = &sc->rows[r];
    const char *sep = g->one_line ? "  " : " ";
    bool own_line = (int)strlen(row->label) > g->label_width;
    if (own_line)
        fprintf(f, "%s\n", row->label);
    fprintf(f, "%-*s", g->label_width, own_line ? "" : row->label);
    if (row->not_run[0]) {
        fprintf(f, "%sNOT RUN (below)\n", sep);
        return;
    }
    for (size_t c = 0; c < sc->n_classes; c++) {
        char text[40];
        if (g->one_line && g->figure[r][c][0])
            snprintf(text, sizeof(text), "%s %s", g->word[r][c], g->figure[r][c]);
        else
            snprintf(text, sizeof(text), "%s", g->word[r][c]);
        fprintf(f, "%s%-*s", sep, g->width[c], text);
    }
    fputc('\n', f);
    if (g->one_line)
        return;
    fprintf(f, "%-*s", g->label_width, "");
    for (size_t c = 0; c < sc->n_classes; c++)
        fprintf(f, "%s%-*s", sep, g->width[c], g->figure[r][c]);
    fputc('\n', f);
}

static void grid_lines(FILE *f, const struct scorecard *sc, const struct grid *g)
{
    const char *sep = g->one_line ? "  " : " ";
    fprintf(f, "%-*s", g->label_width, "lock");
    for (size_t c = 0; c < sc->n_classes; c++)
        fprintf(f, "%s%-*s", sep, g->width[c], sc->classes[c].short_);
    fputc('\n', f);
    for (size_t r = 0; r < sc->n_rows; r++)
        grid_row(f, sc, g, r);
}

/* The grid, each line without the padding of its last cells. */
static void grid_print(FILE *f, const struct scorecard *sc, const struct grid *g)
{
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    if (m == NULL) {
        grid_lines(f, sc, g);
        return;
    }
    grid_lines(m, sc, g);
    fclose(m);
    for (char *p = text, *nl; p && *p; p = nl + 1) {
        nl = strchr(p, '\n');
        char *end = nl;
        while (end > p && end[-1] == ' ')
            end--;
        fprintf(f, "%.*s\n", (int)(end - p), p);
    }
    free(text);
}

static void legend(FILE *f, const struct scorecard *sc)
{
    char text[4096];
    size_t used = 0;
    report_append(text, sizeof(text), &used, "Columns:");
    for (size_t c = 0; c < sc->n_classes; c++) {
        const struct scorecard_class *k = &sc->classes[c];
        report_append(text, sizeof(text), &used, " %s = %s", k->short_, k->title);
        if (k->layout[0] && strcmp(k->layout, "default") != 0)
            report_append(text, sizeof(text), &used, " (%s layout)", k->layout);
        report_append(text, sizeof(text), &used, "%s", c + 1 < sc->n_classes ? ";" : ".");
    }
    text_wrap(f, text, 0, 4);
    text_wrap(
        f,
        "Cells: safe + P99 of the acquires begun in the fault window (the whole run's in the "
        "no-fault column); stuck + the longest stretch with waiters and no grant, where that "
        "was longer than the lease (never: no grant again after the fault); UNSAFE + its "
        "violations (v; inv: only an invariant broke), or \"k of n\" seeds where the seeds "
        "differ; INCOMP: could not be judged; n/a: the class cannot apply. Each figure is the "
        "worst seed's; the details below say why.",
        0, 4);
}

static void seed_line(FILE *f, const struct scorecard_run *x)
{
    char text[1024];
    size_t used = 0;
    report_append(text, sizeof(text), &used, "seed %" PRIu64 ": %s", x->seed,
                  scorecard_run_word(x));
    if (x->ran && x->violations)
        report_append(text, sizeof(text), &used, ", %" PRIu64 " violation%s", x->violations,
                      x->violations == 1 ? "" : "s");
    if (x->why[0] && (!x->safe || !x->complete || !x->ran))
        report_append(text, sizeof(text), &used, " - %s", x->why);
    if (x->run_dir[0])
        report_append(text, sizeof(text), &used, "  %s/", x->run_dir);
    text_wrap(f, text, 4, 4);
}

/* The first seed that is not safe: its why speaks for the cell. */
static const struct scorecard_run *first_bad(const struct scorecard_cell *c)
{
    for (size_t i = 0; i < c->n_runs; i++)
        if (!c->runs[i].ran || !c->runs[i].safe)
            return &c->runs[i];
    for (size_t i = 0; i < c->n_runs; i++)
        if (!c->runs[i].complete)
            return &c->runs[i];
    return c->n_runs ? &c->runs[0] : NULL;
}

static void cell_summary(char *text, size_t len, size_t *used, const struct scorecard_cell *c,
                         enum scorecard_verdict v)
{
    uint64_t viol = 0;
    for (size_t i = 0; i < c->n_runs; i++)
        viol += c->runs[i].violations;
    const struct scorecard_run *bad = first_bad(c);
    if (v == SCV_UNSAFE)
        report_append(text, len, used, "UNSAFE%s, %" PRIu64 " violation%s",
                      c->n_runs > 1 ? " in every seed" : "", viol, viol == 1 ? "" : "s");
    else if (v == SCV_MIXED)
        report_append(text, len, used, "UNSAFE in %zu of %zu seeds", c->n_unsafe, c->n_runs);
    else
        report_append(text, len, used, "INCOMPLETE in %zu of %zu seed%s", c->n_incomplete,
                      c->n_runs, c->n_runs == 1 ? "" : "s");
    if (bad && bad->why[0])
        report_append(text, len, used, " - %s", bad->why);
}

/* A cell that is not safe, within the tables' width: its words wrapped
 * under it, but the command to reproduce it kept whole, to paste. */
static void cell_details(FILE *f, const struct scorecard *sc, size_t r, size_t k)
{
    const struct scorecard_row *row = &sc->rows[r];
    const struct scorecard_cell *c = &row->cells[k];
    enum scorecard_verdict v = scorecard_cell_verdict(c);
    if (v == SCV_SAFE || (v == SCV_NOT_RUN && row->not_run[0]))
        return;
    char text[2048];
    size_t used = 0;
    report_append(text, sizeof(text), &used, "%s / %s: ", row->label, sc->classes[k].title);
    if (v == SCV_NA)
        report_append(text, sizeof(text), &used, "n/a - %s", c->na_why);
    else if (v == SCV_NOT_RUN)
        report_append(text, sizeof(text), &used, "NOT RUN - %s",
                      sc->cut_short ? "the scorecard was cut short" : "no seed ran");
    else
        cell_summary(text, sizeof(text), &used, c, v);
    text_wrap(f, text, 2, 4);
    if (v == SCV_NA || v == SCV_NOT_RUN)
        return;
    if (c->known[0] && (v == SCV_UNSAFE || v == SCV_MIXED)) {
        used = 0;
        report_append(text, sizeof(text), &used, "known result: %s - %s", c->known,
                      c->known_source);
        text_wrap(f, text, 4, 4);
    }
    bool differ = false;
    for (size_t i = 1; i < c->n_runs; i++)
        differ = differ || strcmp(scorecard_run_word(&c->runs[i]), scorecard_run_word(&c->runs[0]));
    if (differ)
        for (size_t i = 0; i < c->n_runs; i++)
            seed_line(f, &c->runs[i]);
    else if (c->n_runs && c->runs[0].run_dir[0])
        fprintf(f, "    run: %s/\n", first_bad(c)->run_dir);
    if (c->command[0])
        fprintf(f, "    reproduce: %s\n", c->command);
}

/* The safe cells a published finding calls unsafe, each with why. */
struct unmet_out {
    FILE *f;
    const struct scorecard *sc;
};

static void unmet_line(void *arg, size_t r, size_t k, const char *text)
{
    const struct unmet_out *o = arg;
    char line[2048];
    snprintf(line, sizeof(line), "%s / %s: %s", o->sc->rows[r].label, o->sc->classes[k].title,
             text);
    text_wrap(o->f, line, 2, 4);
}

static void unmet_known(FILE *f, const struct scorecard *sc)
{
    struct unmet_out o = {f, sc};
    if (scorecard_each_unmet(sc, NULL, NULL) == 0)
        return;
    fputs("\nPublished results this suite did not reproduce:\n", f);
    scorecard_each_unmet(sc, unmet_line, &o);
}

static void details(FILE *f, const struct scorecard *sc)
{
    bool any = false;
    size_t cut = 0; /* cells a cut-short scorecard never reached: one line for all */
    for (size_t r = 0; r < sc->n_rows; r++) {
        const struct scorecard_row *row = &sc->rows[r];
        for (size_t k = 0; k < sc->n_classes && !row->not_run[0]; k++) {
            enum scorecard_verdict v = scorecard_cell_verdict(&row->cells[k]);
            if (v == SCV_SAFE || (v == SCV_NOT_RUN && sc->cut_short && ++cut))
                continue;
            fprintf(f, "%s", any ? "" : "\nCells other than safe, and why:\n");
            any = true;
            cell_details(f, sc, r, k);
        }
        if (row->not_run[0]) {
            fprintf(f, "%s  %s: NOT RUN - %s\n", any ? "" : "\nCells other than safe, and why:\n",
                    row->label, row->not_run);
            any = true;
        }
    }
    if (cut)
        fprintf(f, "%s  %zu cell%s NOT RUN: the scorecard was cut short before %s\n",
                any ? "" : "\nCells other than safe, and why:\n", cut, cut == 1 ? "" : "s",
                cut == 1 ? "it" : "them");
}

/* Whether some cell of the row that ran had a lease other than the ttl. */
static bool other_lease(const struct scorecard *sc, const struct scorecard_row *row)
{
    for (size_t c = 0; c < sc->n_classes; c++)
        if (row->cells[c].state == CELL_RAN && row->cells[c].lease_ms != (double)sc->ttl_ms)
            return true;
    return false;
}

static void leases(FILE *f, const struct scorecard *sc)
{
    char text[4096], ms[32], one[1024];
    size_t used = 0;
    for (size_t r = 0; r < sc->n_rows; r++)
        if (other_lease(sc, &sc->rows[r])) {
            scorecard_row_grouped(sc, &sc->rows[r], true, one, sizeof(one));
            report_append(text, sizeof(text), &used, "%s%s: %s", used ? "; " : "",
                          sc->rows[r].label, one);
        }
    char head[160];
    snprintf(head, sizeof(head), "Leases: %s asked of every lock",
             scorecard_ms(sc->ttl_ms, false, ms, sizeof(ms)));
    fprintf(f, "\n");
    if (used == 0) {
        fprintf(f, "%s; every lock had it.\n", head);
        return;
    }
    char all[4400];
    snprintf(all, sizeof(all), "%s; these had another: %s.", head, text);
    text_wrap(f, all, 0, 4);
}

/* The rows whose cells ran on more than one layout. */
static void layouts(FILE *f, const struct scorecard *sc)
{
    bool any = false;
    for (size_t r = 0; r < sc->n_rows; r++) {
        char text[2048];
        if (scorecard_row_grouped(sc, &sc->rows[r], false, text, sizeof(text)) < 2)
            continue;
        char line[2200];
        snprintf(line, sizeof(line), "%s: %s", sc->rows[r].label, text);
        fputs(any ? "" : "Layouts:\n", f);
        text_wrap(f, line, 2, 4);
        any = true;
    }
}

void scorecard_terminal(FILE *f, const struct scorecard *sc, bool wide)
{
    char ms[32];
    fprintf(f,
            "\nlocklab scorecard  suite=%s  scenario=%s  ttl=%s  seeds=%zu (from %" PRIu64
            ")  locks=%zu  classes=%zu\n\n",
            sc->suite, sc->scenario, scorecard_ms(sc->ttl_ms, true, ms, sizeof(ms)), sc->seeds,
            sc->first_seed, sc->n_rows, sc->n_classes);
    struct grid g;
    grid_fill(sc, &g, wide);
    grid_print(f, sc, &g);
    fputc('\n', f);
    legend(f, sc);
    details(f, sc);
    unmet_known(f, sc);
    leases(f, sc);
    layouts(f, sc);
    char answer[4096], end[800];
    fprintf(f, "\nAnswer: %s\n", scorecard_answer(sc, answer, sizeof(answer)));
    fprintf(f,
            "reports: %s/scorecard.html, %s/scorecard.md, %s/scorecard.json; per cell: "
            "%s/<lock>/<class>/\n",
            sc->out_dir, sc->out_dir, sc->out_dir, sc->out_dir);
    fprintf(f, "End of scorecard: %s  %s/\n", scorecard_end_text(sc, end, sizeof(end)),
            sc->out_dir);
}
