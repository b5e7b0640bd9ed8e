/* scorecard_html.c - scorecard.html: the grid on one self-contained page
 * in the frame of compare.html and matrix.html. Each cell is coloured by
 * safety (safe green, UNSAFE red, seeds that differ striped, INCOMPLETE
 * amber, n/a grey), shows the cost (P99 and the longest stretch with no
 * grant) and links to its first seed's report.html; the details follow,
 * and the page ends with the answer. data-verdict, data-row and
 * data-class on each cell let a test read the grid. */
#include "reports/scorecard.h"

#include <inttypes.h>
#include <string.h>

#include "reports/html.h"
#include "reports/report.h"

static const char css[] =
    "body{max-width:1500px}"
    /* eleven columns of "no grant 120 ms" need ~1400 px: a narrower
     * window scrolls the grid, never overlaps its cells */
    "div.grid{overflow-x:auto}"
    "table.scorecard{table-layout:fixed;width:100%;min-width:1400px;font-size:12px}"
    "table.scorecard th.l{width:150px}"
    "table.scorecard th{font-weight:600;vertical-align:bottom;text-align:center}"
    "table.scorecard th small,table.scorecard td.l small{display:block;color:#666;"
    "font-weight:400}"
    "table.scorecard td.cell{padding:0;text-align:center;vertical-align:middle;"
    "white-space:normal;min-width:84px}"
    "td.cell a,td.cell div{display:block;padding:4px 3px;color:inherit;text-decoration:none}"
    "td.cell a:hover{outline:2px solid #333;outline-offset:-2px}"
    "td.cell b{display:block;font-size:13px}td.cell span{display:block;white-space:nowrap}"
    "td.cell span.lost{font-weight:700}td.cell span.na{white-space:normal;font-size:10.5px}"
    ".v-safe{background:#dff0d8;color:#1e5e1e}"
    ".v-unsafe{background:#c62828;color:#fff}"
    ".v-mixed{background:repeating-linear-gradient(135deg,#f4b4ae 0 6px,#fde4e1 6px 12px);"
    "color:#8e1b1b}"
    ".v-incomplete{background:#ffe0a3;color:#6d4200}"
    ".v-na{background:#ececec;color:#666}"
    ".v-not_run{background:#fff;color:#888;border:1px dashed #bbb}"
    ".swatch{display:inline-block;padding:1px 8px;margin:0 4px 0 10px;border-radius:3px}"
    "p.answer{font-size:15px;font-weight:600;margin:22px 0 4px;max-width:none}"
    "ul.details li{margin:4px 0}ul.details ul{margin:2px 0}td.other{font-weight:700}";

/* The attribute's value, escaped. */
static void attr(FILE *f, const char *name, const char *value)
{
    fprintf(f, " %s=\"", name);
    svg_text(f, value);
    fputc('"', f);
}

/* The cell's hover text: what it ran on, its lease, its seeds, the command. */
static void cell_title(FILE *f, const struct scorecard *sc, const struct scorecard_cell *c,
                       size_t k)
{
    char t[2400];
    size_t used = 0;
    report_append(t, sizeof(t), &used, "%s", sc->classes[k].title);
    if (c->state == CELL_NA)
        report_append(t, sizeof(t), &used, "\nn/a: %s", c->na_why);
    if (c->state == CELL_RAN) {
        char ms[32];
        report_append(t, sizeof(t), &used, "\non %s; lease %s", c->layout,
                      c->lease_ms > 0 ? scorecard_ms(c->lease_ms, false, ms, sizeof(ms)) : "none");
        for (size_t i = 0; i < c->n_runs; i++) {
            const struct scorecard_run *x = &c->runs[i];
            report_append(t, sizeof(t), &used,
                          "\nseed %" PRIu64 ": %s, %" PRIu64 " violations; %" PRIu64
                          " acquires failed, %" PRIu64 " ambiguous, %" PRIu64
                          " grants lost at release",
                          x->seed, scorecard_run_word(x), x->violations, x->failed, x->ambiguous,
                          x->lost_at_release);
        }
        report_append(t, sizeof(t), &used, "\n%s", c->command);
    }
    attr(f, "title", t);
}

/* "UNSAFE" over "in 1 of 3 seeds" or "41 violations", "safe", "n/a". */
static void cell_word(FILE *f, const struct scorecard_cell *c, enum scorecard_verdict v)
{
    char word[32];
    uint64_t n = 0;
    for (size_t i = 0; i < c->n_runs; i++)
        n += c->runs[i].violations;
    if (v == SCV_MIXED)
        fprintf(f, "<b>UNSAFE</b><span>in %zu of %zu seeds</span>", c->n_unsafe, c->n_runs);
    else if (v == SCV_INCOMPLETE && c->n_incomplete < c->n_runs)
        fprintf(f, "<b>INCOMPLETE</b><span>in %zu of %zu seeds</span>", c->n_incomplete, c->n_runs);
    else if (v == SCV_UNSAFE && n)
        fprintf(f, "<b>UNSAFE</b><span>%" PRIu64 " violation%s</span>", n, n == 1 ? "" : "s");
    else if (v == SCV_UNSAFE)
        fprintf(f, "<b>UNSAFE</b><span>an invariant broke</span>");
    else
        fprintf(f, "<b>%s</b>", scorecard_cell_word(c, word, sizeof(word)));
}

static void cell_figures(FILE *f, const struct scorecard *sc, const struct scorecard_cell *c,
                         size_t k)
{
    struct scorecard_cost cost = scorecard_cell_cost(sc, c, k);
    char ms[32];
    fprintf(f, "<span class=\"p99\">P99 %s</span>",
            scorecard_ms(cost.p99_ms, false, ms, sizeof(ms)));
    if (cost.kind == COST_NEVER)
        fprintf(f, "<span class=\"gap lost\">never recovered</span>");
    else
        fprintf(f, "<span class=\"gap%s\">no grant %s</span>",
                cost.kind == COST_STRETCH ? " lost" : "",
                scorecard_ms(cost.gap_ms, false, ms, sizeof(ms)));
}

static void grid_cell(FILE *f, const struct scorecard *sc, const struct scorecard_row *row,
                      size_t k)
{
    const struct scorecard_cell *c = &row->cells[k];
    enum scorecard_verdict v = scorecard_cell_verdict(c);
    struct scorecard_cost cost = scorecard_cell_cost(sc, c, k);
    const char *name = scorecard_verdict_name(v);
    fprintf(f, "<td class=\"cell v-%s\" data-verdict=\"%s\"", name, name);
    attr(f, "data-row", row->label);
    attr(f, "data-class", sc->classes[k].name);
    if (c->state == CELL_RAN && c->n_runs)
        fprintf(f,
                " data-p99-ms=\"%.3f\" data-gap-ms=\"%.3f\" data-seeds=\"%zu\" "
                "data-unsafe-seeds=\"%zu\"",
                cost.p99_ms, cost.gap_ms, c->n_runs, c->n_unsafe);
    cell_title(f, sc, c, k);
    bool link = c->n_runs && c->runs[0].run_dir[0];
    if (link) {
        fprintf(f, "><a href=\"");
        svg_text(f, scorecard_rel(sc, c->runs[0].run_dir));
        fprintf(f, "/report.html\">");
    } else {
        fprintf(f, "><div>");
    }
    cell_word(f, c, v);
    if (c->state == CELL_RAN && c->n_runs)
        cell_figures(f, sc, c, k);
    if (v == SCV_NA) { /* n/a says why, in the cell itself */
        fprintf(f, "<span class=\"na\">");
        svg_text(f, c->na_why);
        fprintf(f, "</span>");
    }
    fprintf(f, "%s</td>", link ? "</a>" : "</div>");
}

static void grid(FILE *f, const struct scorecard *sc)
{
    fprintf(f, "<div class=\"grid\"><table class=\"scorecard\"><tr><th class=\"l\">lock</th>");
    for (size_t k = 0; k < sc->n_classes; k++) {
        const struct scorecard_class *c = &sc->classes[k];
        char t[300];
        snprintf(t, sizeof(t), "strikes %s; %s; %s layout", c->strikes, c->size, c->layout);
        fprintf(f, "<th");
        attr(f, "data-class", c->name);
        attr(f, "title", t);
        fprintf(f, ">");
        svg_text(f, c->title);
        fprintf(f, "<small>");
        svg_text(f, c->short_);
        fprintf(f, "</small></th>");
    }
    fprintf(f, "</tr>\n");
    for (size_t r = 0; r < sc->n_rows; r++) {
        const struct scorecard_row *row = &sc->rows[r];
        fprintf(f, "<tr");
        attr(f, "data-row", row->label);
        fprintf(f, " data-safe-everywhere=\"%s\"><td class=\"l words\">",
                scorecard_row_safe(row) ? "true" : "false");
        svg_text(f, row->label);
        if (row->mode[0] || row->not_run[0]) {
            fprintf(f, "<small>");
            svg_text(f, row->not_run[0] ? row->not_run : row->mode);
            fprintf(f, "</small>");
        }
        fprintf(f, "</td>");
        for (size_t k = 0; k < sc->n_classes; k++)
            grid_cell(f, sc, row, k);
        fprintf(f, "</tr>\n");
    }
    fprintf(f, "</table></div>\n");
}

static void seed_item(FILE *f, const struct scorecard *sc, const struct scorecard_run *x)
{
    fprintf(f, "<li>seed %" PRIu64 ": <a href=\"", x->seed);
    svg_text(f, scorecard_rel(sc, x->run_dir));
    fprintf(f, "/report.html\">%s</a>, %" PRIu64 " violations", scorecard_run_word(x),
            x->violations);
    if (x->why[0] && (!x->safe || !x->complete || !x->ran)) {
        fprintf(f, " &mdash; ");
        svg_text(f, x->why);
    }
    fprintf(f, "</li>");
}

static void detail_item(FILE *f, const struct scorecard *sc, const struct scorecard_row *row,
                        size_t k)
{
    const struct scorecard_cell *c = &row->cells[k];
    enum scorecard_verdict v = scorecard_cell_verdict(c);
    fprintf(f, "<li data-verdict=\"%s\"><b>", scorecard_verdict_name(v));
    svg_text(f, row->label);
    fprintf(f, " / ");
    svg_text(f, sc->classes[k].title);
    fprintf(f, "</b>: ");
    if (v == SCV_MIXED)
        fprintf(f, "UNSAFE in %zu of %zu seeds", c->n_unsafe, c->n_runs);
    else {
        char word[32];
        svg_text(f, scorecard_cell_word(c, word, sizeof(word)));
    }
    if (v == SCV_NA || v == SCV_NOT_RUN) {
        fprintf(f, " &mdash; ");
        svg_text(f, v == SCV_NA     ? c->na_why
                    : sc->cut_short ? "the scorecard was cut short"
                                    : "no seed ran");
        fprintf(f, "</li>\n");
        return;
    }
    fprintf(f, "<ul>");
    if (c->known[0] && (v == SCV_UNSAFE || v == SCV_MIXED)) {
        fprintf(f, "<li>known result: ");
        svg_text(f, c->known);
        fprintf(f, " &mdash; ");
        svg_text(f, c->known_source);
        fprintf(f, "</li>");
    }
    for (size_t i = 0; i < c->n_runs; i++)
        seed_item(f, sc, &c->runs[i]);
    if (c->command[0]) {
        fprintf(f, "<li>reproduce: <code>");
        svg_text(f, c->command);
        fprintf(f, "</code></li>");
    }
    fprintf(f, "</ul></li>\n");
}

static void details(FILE *f, const struct scorecard *sc)
{
    size_t n = 0;
    fprintf(f, "<h2>Cells other than safe, and why</h2>\n<ul class=\"details\">\n");
    for (size_t r = 0; r < sc->n_rows; r++) {
        const struct scorecard_row *row = &sc->rows[r];
        if (row->not_run[0]) {
            fprintf(f, "<li data-verdict=\"not_run\"><b>");
            svg_text(f, row->label);
            fprintf(f, "</b>: NOT RUN &mdash; ");
            svg_text(f, row->not_run);
            fprintf(f, "</li>\n");
            n++;
            continue;
        }
        for (size_t k = 0; k < sc->n_classes; k++)
            if (scorecard_cell_verdict(&row->cells[k]) != SCV_SAFE) {
                detail_item(f, sc, row, k);
                n++;
            }
    }
    fprintf(f, "%s</ul>\n", n ? "" : "<li>None: every cell was safe in every seed.</li>");
}

/* Per lock: the leases it really had and the layouts it ran on. */
struct html_out {
    FILE *f;
    const struct scorecard *sc;
};

static void unmet_item(void *arg, size_t r, size_t k, const char *text)
{
    const struct html_out *o = arg;
    fprintf(o->f, "<li data-verdict=\"safe\"><b>");
    svg_text(o->f, o->sc->rows[r].label);
    fprintf(o->f, " / ");
    svg_text(o->f, o->sc->classes[k].title);
    fprintf(o->f, "</b>: ");
    svg_text(o->f, text);
    fprintf(o->f, "</li>\n");
}

/* The safe cells a published finding calls unsafe (scorecard_known_unmet). */
static void unmet(FILE *f, const struct scorecard *sc)
{
    struct html_out o = {f, sc};
    if (scorecard_each_unmet(sc, NULL, NULL) == 0)
        return;
    fprintf(f, "<h2>Published results this suite did not reproduce</h2>\n<ul class=\"unmet\">\n");
    scorecard_each_unmet(sc, unmet_item, &o);
    fprintf(f, "</ul>\n");
}

static void leases(FILE *f, const struct scorecard *sc)
{
    char ms[32];
    fprintf(f,
            "<h2>Leases and layouts</h2>\n<p class=\"note\">%s asked of every lock; a lock "
            "that cannot honour it runs at the nearest it can.</p>\n<table class=\"leases\">"
            "<tr><th class=\"l\">lock</th><th class=\"l\">lease</th><th class=\"l\">layout"
            "</th></tr>\n",
            scorecard_ms(sc->ttl_ms, false, ms, sizeof(ms)));
    for (size_t r = 0; r < sc->n_rows; r++) {
        const struct scorecard_row *row = &sc->rows[r];
        char lease[1024], layout[2048];
        if (scorecard_row_grouped(sc, row, true, lease, sizeof(lease)) == 0)
            continue;
        scorecard_row_grouped(sc, row, false, layout, sizeof(layout));
        bool other = false;
        for (size_t k = 0; k < sc->n_classes; k++)
            other = other || (row->cells[k].state == CELL_RAN &&
                              row->cells[k].lease_ms != (double)sc->ttl_ms);
        fprintf(f, "<tr><td class=\"l\">");
        svg_text(f, row->label);
        fprintf(f, "</td><td class=\"l%s\">", other ? " other" : "");
        svg_text(f, lease);
        fprintf(f, "</td><td class=\"l\">");
        svg_text(f, layout);
        fprintf(f, "</td></tr>\n");
    }
    fprintf(f, "</table>\n");
}

static void head(FILE *f, const struct scorecard *sc)
{
    const char *verdict = scorecard_verdict(sc);
    char end[800], ms[32];
    fprintf(f, "<h1>Scorecard: ");
    svg_text(f, sc->scenario);
    fprintf(f, " through the ");
    svg_text(f, sc->suite);
    fprintf(f, " suite<span class=\"verdict %s\" data-figure=\"verdict\">%s</span></h1>\n", verdict,
            verdict);
    fprintf(f, "<p class=\"meta\" data-figure=\"end\">");
    svg_text(f, scorecard_end_text(sc, end, sizeof(end)));
    fprintf(f, ".</p>\n<p class=\"meta\">Suite <code>");
    svg_text(f, sc->suite_path);
    fprintf(f, "</code>");
    if (sc->description[0]) {
        fprintf(f, ": ");
        svg_text(f, sc->description);
    }
    fprintf(f, ". Scenario <code>");
    svg_text(f, sc->scenario_path);
    fprintf(f,
            "</code>; a lease of %s asked of every lock; each cell in %zu seed%s from %" PRIu64
            ".</p>\n",
            scorecard_ms(sc->ttl_ms, false, ms, sizeof(ms)), sc->seeds, sc->seeds == 1 ? "" : "s",
            sc->first_seed);
    html_meta_line(f, sc->meta, sc->meta ? sc->meta->started_wall_ns : 0, NULL, 0, false);
}

int scorecard_html(const char *path, const struct scorecard *sc)
{
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return -1;
    char title[200], answer[4096];
    snprintf(title, sizeof(title), "locklab scorecard: %s, %s suite", sc->scenario, sc->suite);
    html_begin_css(f, title, css);
    head(f, sc);
    fprintf(f, "<p class=\"note\">A cell is judged by what happened in it, never by an "
               "expectation. Each shows the worst seed's P99 (of the acquires begun in the fault "
               "window; the whole run's without faults) and its longest stretch with waiters and "
               "no grant, in bold where that was longer than the lease. Each links to its first "
               "seed's report; hover it for its layout, lease, seeds and command."
               "<span class=\"swatch v-safe\">safe</span><span class=\"swatch v-unsafe\">UNSAFE"
               "</span><span class=\"swatch v-mixed\">seeds differ</span><span class=\"swatch "
               "v-incomplete\">INCOMPLETE</span><span class=\"swatch v-na\">n/a</span>"
               "<span class=\"swatch v-not_run\">NOT RUN</span></p>\n");
    grid(f, sc);
    details(f, sc);
    unmet(f, sc);
    leases(f, sc);
    fprintf(f, "<p class=\"answer\" data-figure=\"answer\">Answer: ");
    svg_text(f, scorecard_answer(sc, answer, sizeof(answer)));
    fprintf(f, "</p>\n");
    html_end_hover(f, "hover a cell for its layout, lease, seeds and command");
    return report_close(f);
}
