/* compare_html.c - compare.html: the table with each row's judgement and
 * the scenario's expectation apart, throughput and p99 side by side, one
 * spectrum curve per algorithm, links to each run's report.html; the
 * story over time comes from compare_parts.c. */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "reports/compare.h"
#include "reports/compare_parts.h"
#include "sim/scenario/scenario.h"

/* One bar per algorithm that ran: v[i] for row i, its label fmt'd. */
static void bars(FILE *f, const struct comparison *c, const double *v, const char *what,
                 const char *unit)
{
    double top = 0;
    for (size_t i = 0; i < c->n; i++)
        top = v[i] > top ? v[i] : top;
    struct svg_chart ch = {.f = f,
                           .width = 510,
                           .height = 60 + 28.0 * (double)c->n,
                           .left = 130,
                           .right = 20,
                           .top = 10,
                           .bottom = 40,
                           .x = {0, top > 0 ? top * 1.05 : 1, false},
                           .y = {0, (double)c->n, false}};
    svg_begin(&ch, "chart bars", what);
    svg_x_axis(&ch, what, NULL);
    for (size_t i = 0; i < c->n; i++) {
        const struct compare_row *row = &c->rows[i];
        double y = ch.top + 28.0 * (double)i + 6;
        fprintf(f, "<text class=\"lane\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">", ch.left - 6,
                y + 12);
        svg_text(f, row->algorithm);
        fprintf(f, "</text>\n");
        if (!row->ran || isnan(v[i]))
            continue;
        double w = svg_x(&ch, v[i]) - ch.left;
        fprintf(f,
                "<rect data-algorithm=\"%s\" data-value=\"%.3f\" x=\"%.1f\" y=\"%.1f\" "
                "width=\"%.1f\" height=\"16\" fill=\"%s\"><title>%s: %.3f %s</title></rect>",
                row->algorithm, v[i], ch.left, y, w > 1 ? w : 1,
                report_algorithm_colour(row->algorithm), row->algorithm, v[i], unit);
        char label[48];
        snprintf(label, sizeof(label), "%.1f %s", v[i], unit);
        compare_bar_label(f, ch.left, ch.left + (w > 1 ? w : 1), ch.width - ch.right, y + 12,
                          label);
        fputc('\n', f);
    }
    svg_end(&ch);
}

/* The row's judgement as one badge: its class by the verdict word
 * (data-verdict), its text the row's safety in words; for the scenario's
 * lock, its expectation beside it in a badge of its own. */
static void verdict_cell(FILE *f, const struct comparison *c, const struct compare_row *row)
{
    static const char *const word[][2] = {{"safe", "SAFE"},
                                          {"UNSAFE", "UNSAFE"},
                                          {"INCOMPLETE", "INCOMPLETE"},
                                          {"NOT RUN", "NOTRUN"}};
    const char *cls = "NOTRUN";
    for (size_t k = 0; k < 4; k++)
        if (strcmp(row->verdict, word[k][0]) == 0)
            cls = word[k][1];
    char text[200];
    fprintf(f,
            "<td class=\"l verdicts\"><span class=\"verdict %s\" data-verdict=\"%s\" "
            "data-unsafe-seeds=\"%zu\" data-seeds=\"%zu\">",
            cls, row->verdict, compare_unsafe_seeds(row), row->n_seeds);
    svg_text(f, compare_row_safety(row, text, sizeof(text)));
    fprintf(f, "</span>");
    if (row->scenario_lock && row->ran) {
        enum compare_expect e = compare_expectation(c);
        fprintf(f, " <span class=\"verdict %s\" data-expectation=\"%s\">expectation %s</span>",
                e == EXPECT_MET      ? "PASS"
                : e == EXPECT_MISSED ? "FAIL"
                                     : "NOTRUN",
                e == EXPECT_MET      ? "met"
                : e == EXPECT_MISSED ? "missed"
                                     : "not judged",
                e == EXPECT_MET      ? "met"
                : e == EXPECT_MISSED ? "missed"
                                     : "not judged");
    }
    fprintf(f, "</td>");
}

/* Under a row, across the table: each seed (with more than one), linked
 * to its page. */
static void seeds_row(FILE *f, const struct comparison *c, const struct compare_row *row)
{
    char text[900];
    if (row->n_seeds < 2)
        return;
    fprintf(f, "<tr class=\"seeds\" data-seeds-of=\"%s\"><td></td><td class=\"l\" colspan=\"13\">",
            row->algorithm);
    for (size_t k = 0; k < row->n_seeds; k++) {
        const struct compare_seed *sd = &row->seeds[k];
        fprintf(f, "%s<small data-seed=\"%" PRIu64 "\" data-seed-unsafe=\"%d\">", k ? "<br>" : "",
                sd->seed, compare_seed_unsafe(sd));
        if (sd->ran)
            fprintf(f, "<a href=\"%s/report.html\">", compare_below(c, sd->run_dir));
        svg_text(f, compare_seed_text(sd, false, text, sizeof(text)));
        fprintf(f, "%s</small>", sd->ran ? "</a>" : "");
    }
    fprintf(f, "</td></tr>\n");
}

static void compare_table(FILE *f, const struct comparison *c)
{
    fprintf(f,
            "<table class=\"compare\"><tr><th class=\"l\">algorithm</th><th class=\"l\">safety</th>"
            "<th>QPS</th><th>acquire p50 ms</th><th>p99 ms</th><th>p99.9 ms</th><th>max ms</th>"
            "<th>max/min per client</th><th>failed</th><th>violations</th><th>stuck s</th>"
            "<th>ttl ms</th><th>lease ms</th><th class=\"l\">invariants</th></tr>\n");
    for (size_t i = 0; i < c->n; i++) {
        const struct compare_row *row = &c->rows[i];
        struct compare_cells x;
        compare_row_cells(row, &x);
        bool calm = strcmp(row->verdict, "safe") == 0;
        fprintf(f, "<tr%s data-algorithm=\"%s\"%s><td class=\"l\">", calm ? "" : " class=\"bad\"",
                row->algorithm, row->scenario_lock ? " data-scenario-lock=\"1\"" : "");
        if (row->ran) /* only a run has a page to link to */
            fprintf(f, "<a href=\"%s/report.html\">%s</a>", compare_below(c, row->run_dir),
                    row->algorithm);
        else
            svg_text(f, row->algorithm);
        html_algorithm_swatch(f, row->algorithm);
        fprintf(f, "</td>");
        verdict_cell(f, c, row);
        bool unsafe = row->ran && row->violations > 0;
        fprintf(f,
                "<td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td>"
                "<td>%s</td><td%s>%s</td><td data-stuck-ms=\"%.3f\">%s</td><td>%s</td>"
                "<td data-lease-ms=\"%" PRIu32 "\">%s</td><td class=\"l words\">",
                x.qps, x.latency[0], x.latency[1], x.latency[2], x.latency[3], x.fair, x.failed,
                unsafe ? " class=\"unsafe\"" : "", x.violations, row->stuck_lock_ms, x.stuck, x.ttl,
                row->lease_ms, x.lease);
        svg_text(f, row->invariants);
        if (row->note[0]) {
            fprintf(f, "<br><small>");
            svg_text(f, row->note);
            fprintf(f, "</small>");
        }
        fprintf(f, "</td></tr>\n");
        seeds_row(f, c, row);
    }
    fprintf(f, "</table>\n");
}

static void compare_charts(FILE *f, const struct comparison *c)
{
    double qps[COMPARE_MAX], p99[COMPARE_MAX];
    const struct html_curve *curves[COMPARE_MAX];
    const char *names[COMPARE_MAX], *colours[COMPARE_MAX];
    size_t n = 0;
    for (size_t i = 0; i < c->n; i++) {
        const struct compare_row *row = &c->rows[i];
        qps[i] = row->ran ? row->qps : NAN;
        p99[i] = row->has_latency ? row->acquire_ms[2] : NAN;
        if (row->has_latency) {
            curves[n] = &row->spectrum;
            colours[n] = report_algorithm_colour(row->algorithm);
            names[n++] = row->algorithm;
        }
    }
    fprintf(f, "<div style=\"display:flex;flex-wrap:wrap;gap:16px\"><div><h3>Throughput</h3>\n");
    bars(f, c, qps, "locks acquired per second", "/s");
    fprintf(f, "</div><div><h3>Acquire p99</h3>\n");
    bars(f, c, p99, "acquire p99 (ms)", "ms");
    fprintf(f, "</div></div>\n<h2 id=\"spectrum\">Acquire latency spectrum</h2>\n");
    html_spectrum_chart(f, curves, names, colours, n,
                        "acquire latency percentile spectrum per algorithm");
}

int compare_html(const char *path, const struct comparison *c)
{
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return -1;
    const struct scenario *s = c->scn;
    char verdict[600], title[740], wl[256];
    compare_verdict(c, verdict, sizeof(verdict));
    snprintf(title, sizeof(title), "locklab compare: %s: %s", s->name, verdict);
    html_begin(f, title);
    fprintf(f, "<h1>compare &middot; ");
    svg_text(f, s->name);
    /* the verdict word before any list of names */
    char word[16];
    snprintf(word, sizeof(word), "%.*s", (int)strcspn(verdict, " ,;"), verdict);
    fprintf(f, "<span class=\"verdict %s\" data-figure=\"verdict\">%s</span>", word, word);
    struct report_safety_sum sum = compare_safety_sum(c);
    html_safety_sum_badge(f, &sum);
    fprintf(f, "</h1>\n<p class=\"meta\">");
    svg_text(f, verdict);
    fprintf(f, "</p>\n");
    if (s->description[0]) {
        fprintf(f, "<p class=\"meta\">");
        svg_text(f, s->description);
        fprintf(f, "</p>\n");
    }
    fprintf(f,
            "<p class=\"meta\">%" PRIu32 " clients, %.1f s per algorithm, seed %" PRIu64
            ", lock ttl %" PRIu32 " ms, wait %" PRIu32 " ms; ",
            s->clients, (double)s->duration_ms / 1000.0, s->seed, s->ttl_ms, s->wait_ms);
    svg_text(f, report_workload(s, wl, sizeof(wl)));
    if (s->rate > 0)
        fprintf(f, "; open loop at %g steps/s, latency from each step's due time", s->rate);
    else
        fprintf(f, "; closed loop");
    fprintf(f, "%s.</p>\n", c->complete ? "" : " &mdash; INCOMPLETE");
    html_meta_line(f, c->meta, c->meta ? c->meta->started_wall_ns : 0, c->versions, c->n_versions,
                   c->has_proxy);
    char line[900];
    fprintf(f, "<p class=\"expectation\" data-written-for=\"%s\" data-state=\"%s\">",
            c->written_for,
            compare_expectation(c) == EXPECT_MET      ? "met"
            : compare_expectation(c) == EXPECT_MISSED ? "missed"
                                                      : "not judged");
    svg_text(f, compare_expectation_line(c, line, sizeof(line)));
    fprintf(f, " <small>(the scenario's expect is a claim about the lock it names; every row "
               "is judged by what happened in it: violations and broken invariants)</small></p>\n");
    if (c->seeds > 1)
        fprintf(f,
                "<p class=\"note\" data-seeds=\"%zu\">Each algorithm ran %zu seeds (%" PRIu64
                " .. %" PRIu64 "): the figures are seed %" PRIu64 "'s run, the safety every "
                "seed's, each seed listed under its row with a link to its page.</p>\n",
                c->seeds, c->seeds, s->seed, s->seed + c->seeds - 1, s->seed);
    compare_table(f, c);
    fprintf(f, "<p class=\"note\">The lease is what the lock's grants really ran on beside the "
               "ttl asked (none: a lock without one, whose grant lasts until it is released or "
               "its session ends); stuck is the run's longest stretch of a key with waiters and "
               "no holder, what a crash costs; QPS counts locks acquired per second; latencies "
               "are of successful acquires; each algorithm's name links to its run's page and "
               "keeps its colour on every page.</p>\n");
    compare_time_charts(f, c);
    compare_cost_table(f, c);
    compare_charts(f, c);
    compare_settings_block(f, c);
    fprintf(f, "<h2 id=\"servers\">Servers</h2>\n<ul>\n");
    for (size_t i = 0; i < c->n_servers; i++) {
        fprintf(f, "<li>");
        svg_text(f, c->servers[i]);
        fprintf(f, "</li>\n");
    }
    fprintf(f, "</ul>\n");
    html_end(f);
    return report_close(f);
}
