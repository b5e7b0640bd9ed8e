/* history_html.c - history.html (history.h): the regressions first, then
 * per scenario x algorithm its acquire p99 and QPS over its runs (each
 * run a mark in its verdict's colour, a flagged one ringed in red, the
 * line a run must cross to be flagged dashed) and the runs' table. One
 * self-contained page in the style of the other reports (html_page.c). */
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "reports/history.h"
#include "reports/history_key.h"
#include "reports/html.h"
#include "reports/report.h"

static const char style[] =
    "tr.regressed td{background:#fdecea}td.flag,li .flag{color:#c62828;font-weight:700}"
    ".REGRESSED{background:#c62828}.STEADY{background:#2a7d2a}"
    ".charts{display:flex;flex-wrap:wrap;gap:16px}.charts svg{margin:0}"
    "svg .run{stroke:#fff;stroke-width:1}svg .ring{fill:none;stroke:#c62828;stroke-width:2.5}"
    "svg .limit path{stroke:#c62828;stroke-opacity:.55}";

static const char *verdict_colour(const char *verdict)
{
    if (strcmp(verdict, "PASS") == 0)
        return "#2a7d2a";
    if (strcmp(verdict, "FAIL") == 0)
        return "#c62828";
    return "#b26a00";
}

static const char *safety_class(const struct history_run *r)
{
    if (!r->safe)
        return "UNSAFE";
    return strcmp(r->safety, "safe") == 0 ? "SAFE" : "CAUTION";
}

/* The path from folder from to folder to ("../runs/x"), both as they are
 * on disk; to itself when either cannot be resolved. */
static void relative(const char *from, const char *to, char *out, size_t len)
{
    char a[PATH_MAX], b[PATH_MAX];
    if (realpath(from, a) == NULL || realpath(to, b) == NULL) {
        snprintf(out, len, "%s", to);
        return;
    }
    size_t i = 0, last = 0;
    while (a[i] && a[i] == b[i]) {
        if (a[i] == '/')
            last = i;
        i++;
    }
    if ((a[i] == '\0' && (b[i] == '/' || b[i] == '\0')) || (b[i] == '\0' && a[i] == '/'))
        last = i;
    size_t used = 0;
    out[0] = '\0';
    for (const char *p = a + last; *p && used < len; p++)
        if (*p == '/' && p[1])
            used += (size_t)snprintf(out + used, len - used, "../");
    if (used < len)
        snprintf(out + used, len - used, "%s", b[last] ? b + last + 1 : ".");
    if (out[0] == '\0')
        snprintf(out, len, ".");
}

enum figure { FIG_P99, FIG_QPS };

static double value_of(const struct history_run *r, enum figure fig)
{
    return fig == FIG_P99 ? r->p99_ms : r->qps;
}

/* The line a run must cross to be flagged: 1.5x the median p99 of the
 * earlier runs, 2/3 of their median QPS; NAN where no earlier run counts. */
static double limit_of(const struct history_run *r, enum figure fig)
{
    if (r->earlier == 0)
        return NAN;
    return fig == FIG_P99 ? HISTORY_P99_FACTOR * r->base_p99_ms : HISTORY_QPS_FACTOR * r->base_qps;
}

static void qps_tick(char *buf, size_t len, double v)
{
    snprintf(buf, len, "%g", v);
}

static void run_tick(char *buf, size_t len, double v)
{
    snprintf(buf, len, "%.0f", v);
}

/* The y axis over the values and limits: from 0, or log10 decades when
 * they span more than 50 times (a slow run beside fast ones). */
static void y_range(struct svg_chart *c, const double *v, size_t n)
{
    double lo = INFINITY, hi = 0;
    for (size_t i = 0; i < n; i++)
        if (!isnan(v[i]) && v[i] > 0) {
            lo = v[i] < lo ? v[i] : lo;
            hi = v[i] > hi ? v[i] : hi;
        }
    if (!(hi > 0)) {
        c->y = (struct svg_axis){0, 1, false};
        return;
    }
    if (hi / lo > 50) {
        c->y = svg_log_axis(lo, hi);
        return;
    }
    c->y = (struct svg_axis){0, hi * 1.15, false};
}

static void run_hover(FILE *f, const struct history_run *r, size_t k, enum figure fig)
{
    char v[40], base[40];
    if (fig == FIG_P99) {
        html_ms_label(v, sizeof(v), r->p99_ms);
        html_ms_label(base, sizeof(base), r->base_p99_ms);
    } else {
        snprintf(v, sizeof(v), "%.1f locks/s", r->qps);
        snprintf(base, sizeof(base), "%.1f locks/s", r->base_qps);
    }
    fprintf(f, "run %zu, ", k + 1);
    svg_text(f, r->started_at);
    fprintf(f, ": %s %s", fig == FIG_P99 ? "acquire p99" : "QPS",
            isnan(value_of(r, fig)) ? "-" : v);
    if (r->earlier)
        fprintf(f, " (median of %zu earlier: %s)", r->earlier, base);
    fprintf(f, "; %s, ", r->verdict);
    svg_text(f, r->safety);
    if (r->flags) {
        char flag[96];
        fprintf(f, "; REGRESSION %s", history_flag_text(r, flag, sizeof(flag)));
    }
}

static void series_chart(FILE *f, const struct history_run *runs, size_t n, enum figure fig)
{
    double *xs = malloc(n * sizeof(double)), *ys = malloc(n * sizeof(double));
    double *lim = malloc(n * sizeof(double)), *all = malloc(2 * n * sizeof(double));
    if (xs == NULL || ys == NULL || lim == NULL || all == NULL)
        goto out;
    for (size_t k = 0; k < n; k++) {
        xs[k] = (double)(k + 1);
        ys[k] = value_of(&runs[k], fig);
        lim[k] = limit_of(&runs[k], fig);
        all[k] = ys[k];
        all[n + k] = lim[k];
    }
    struct svg_chart c = {.f = f,
                          .width = 520,
                          .height = 230,
                          .left = 64,
                          .right = 16,
                          .top = 26,
                          .bottom = 40,
                          .x = {0.5, (double)n + 0.5, false}};
    y_range(&c, all, 2 * n);
    const char *what = fig == FIG_P99 ? "acquire p99" : "QPS (locks acquired per second)";
    char label[160];
    snprintf(label, sizeof(label), "%s over %zu runs", what, n);
    svg_begin(&c, fig == FIG_P99 ? "chart history-p99" : "chart history-qps", label);
    /* the frame and the y ticks; the x ticks are the runs' numbers, below */
    struct svg_chart frame = c;
    frame.x.log = true;
    svg_axes(&frame, "run (oldest first)", fig == FIG_P99 ? "acquire p99" : "locks/s", NULL,
             fig == FIG_P99 ? html_ms_tick : qps_tick);
    size_t every = n > 12 ? (n + 11) / 12 : 1;
    for (size_t k = 0; k < n; k += every) {
        char t[16];
        double x = svg_x(&c, xs[k]);
        run_tick(t, sizeof(t), xs[k]);
        fprintf(f, "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
                x, c.height - c.bottom + 14, t);
    }
    /* each run's own limit, a dash across its mark: the limit moves as
     * the earlier runs do */
    fprintf(f,
            "<g class=\"limit\"><title>%s</title><path fill=\"none\" stroke=\"#c62828\" "
            "stroke-dasharray=\"4 3\" stroke-width=\"1.8\" d=\"",
            fig == FIG_P99 ? "flagged above 1.5x the median p99 of the earlier runs"
                           : "flagged under 2/3 of the median QPS of the earlier runs");
    for (size_t k = 0; k < n; k++)
        if (!isnan(lim[k]))
            fprintf(f, "M%.1f %.1fH%.1f", svg_x(&c, xs[k] - 0.35), svg_y(&c, lim[k]),
                    svg_x(&c, xs[k] + 0.35));
    fprintf(f, "\"/></g>\n");
    svg_line(&c, xs, ys, n, svg_series_colour(0), what, false);
    for (size_t k = 0; k < n; k++) {
        const struct history_run *r = &runs[k];
        if (isnan(ys[k]))
            continue;
        double x = svg_x(&c, xs[k]), y = svg_y(&c, ys[k]);
        fprintf(f, "<g class=\"mark%s\" data-run=\"%zu\"><title>", r->flags ? " regressed" : "", k);
        run_hover(f, r, k, fig);
        fprintf(f, "</title><circle class=\"run %s\" cx=\"%.1f\" cy=\"%.1f\" r=\"5\" fill=\"%s\"/>",
                r->verdict, x, y, verdict_colour(r->verdict));
        if (r->flags)
            fprintf(f, "<circle class=\"ring\" cx=\"%.1f\" cy=\"%.1f\" r=\"9\"/>", x, y);
        fprintf(f, "</g>\n");
    }
    const char *names[] = {what, fig == FIG_P99 ? "flagged above" : "flagged under"};
    const char *colours[] = {svg_series_colour(0), "#c62828"};
    svg_legend(&c, names, colours, 2);
    svg_end(&c);
out:
    free(xs);
    free(ys);
    free(lim);
    free(all);
}

static void ms_cell(FILE *f, double ms)
{
    if (isnan(ms))
        fprintf(f, "<td>-</td>");
    else
        fprintf(f, "<td>%.3f</td>", ms);
}

/* The run folder as found under DIR, without DIR: its name in a table. */
static const char *shown_folder(const struct history_index *idx, const struct history_run *r)
{
    size_t n = strlen(idx->dir);
    if (strncmp(r->folder, idx->dir, n) == 0 && r->folder[n] == '/')
        return r->folder + n + 1;
    if (n && idx->dir[n - 1] == '/' && strncmp(r->folder, idx->dir, n) == 0)
        return r->folder + n;
    return r->folder;
}

static void table_head(FILE *f, bool names)
{
    fprintf(f,
            "<table class=\"history\"><tr>%s<th class=\"l\">started (UTC)</th>"
            "<th class=\"l\">verdict</th><th>QPS</th><th>acquire p50 ms</th><th>p99 ms</th>"
            "%s<th>violations</th>%s<th class=\"l\">run folder</th></tr>\n",
            names ? "<th class=\"l\">scenario</th><th class=\"l\">algorithm</th><th "
                    "class=\"l\">series</th>"
                  : "<th>#</th>",
            names ? "" : "<th>median p99 before</th>", names ? "" : "<th class=\"l\">flag</th>");
}

/* Run k of series s: a row of its series's table, or, names, of the
 * table of series with one run. */
static void run_row(FILE *f, const char *out_dir, const struct history_index *idx, size_t s,
                    size_t k, bool names)
{
    const struct history_run *r = &idx->runs[idx->series[s].first + k];
    char flag[96], link[PATH_MAX], when[24];
    history_flag_text(r, flag, sizeof(flag));
    snprintf(when, sizeof(when), "%.19s", r->started_at);
    if (strchr(when, 'T'))
        *strchr(when, 'T') = ' ';
    fprintf(
        f, "<tr%s data-series=\"%zu\" data-run=\"%zu\" data-key=\"%016" PRIx64 "\" data-started=\"",
        r->flags ? " class=\"regressed\"" : "", s, k, r->key);
    svg_text(f, r->started_at);
    fprintf(f, "\" data-flags=\"%s%s%s\">", r->flags & HISTORY_P99 ? "p99 " : "",
            r->flags & HISTORY_QPS ? "qps " : "", r->flags & HISTORY_SAFETY ? "safety" : "");
    if (names) {
        fprintf(f, "<td class=\"l\">");
        svg_text(f, r->scenario);
        fprintf(f, "</td><td class=\"l\">");
        svg_text(f, r->algorithm);
        char begins[320];
        fprintf(f, "</td><td class=\"l\">%0*" PRIx64 " ", HISTORY_KEY_SHORT,
                r->key >> (64 - 4 * HISTORY_KEY_SHORT));
        svg_text(f, history_series_text(idx, s, k, begins, sizeof(begins)));
        fprintf(f, "</td>");
    } else {
        fprintf(f, "<td>%zu</td>", k + 1);
    }
    fprintf(f,
            "<td class=\"l\" style=\"white-space:nowrap\">%s</td><td class=\"l verdicts\">"
            "<span class=\"verdict %s\" data-verdict=\"%s\">%s</span><span class=\"verdict %s\" "
            "data-safety=\"%s\">",
            when, r->verdict, r->verdict, r->verdict, safety_class(r), r->safe ? "safe" : "unsafe");
    svg_text(f, r->safety);
    fprintf(f, "</span></td><td>%.1f</td>", r->qps);
    ms_cell(f, r->p50_ms);
    ms_cell(f, r->p99_ms);
    if (!names)
        ms_cell(f, r->earlier ? r->base_p99_ms : NAN);
    fprintf(f, "<td%s>%llu</td>", r->safe ? "" : " class=\"unsafe\"",
            (unsigned long long)r->violations);
    if (!names)
        fprintf(f, "<td class=\"l%s\">%s%s</td>", r->flags ? " flag" : "",
                r->flags ? "REGRESSION " : "", flag);
    relative(out_dir, r->folder, link, sizeof(link));
    fprintf(f, "<td class=\"l\"><a href=\"");
    svg_text(f, link);
    fprintf(f, "/report.html\">");
    svg_text(f, shown_folder(idx, r));
    fprintf(f, "</a></td></tr>\n");
}

/* A series of two runs or more: its charts and its table. */
static void series_section(FILE *f, const char *out_dir, const struct history_index *idx, size_t s)
{
    const struct history_run *runs = idx->runs + idx->series[s].first;
    size_t n = idx->series[s].n;
    fprintf(f, "<section class=\"series\" id=\"series-%zu\" data-scenario=\"", s);
    svg_text(f, runs[0].scenario);
    fprintf(f, "\" data-algorithm=\"");
    svg_text(f, runs[0].algorithm);
    fprintf(f, "\">\n<h2>");
    svg_text(f, runs[0].scenario);
    fprintf(f, " &middot; ");
    svg_text(f, runs[0].algorithm);
    char begins[320];
    fprintf(f, " <small>(series %0*" PRIx64 ", %zu runs)</small></h2>\n<p class=\"note\">",
            HISTORY_KEY_SHORT, runs[0].key >> (64 - 4 * HISTORY_KEY_SHORT), n);
    svg_text(f, history_series_text(idx, s, 0, begins, sizeof(begins)));
    fprintf(f, "</p>\n<div class=\"charts\">\n");
    series_chart(f, runs, n, FIG_P99);
    series_chart(f, runs, n, FIG_QPS);
    fprintf(f, "</div>\n");
    table_head(f, false);
    for (size_t k = 0; k < n; k++)
        run_row(f, out_dir, idx, s, k, false);
    fprintf(f, "</table>\n</section>\n");
}

/* The series of one run, in one table: nothing to hold them to yet. */
static void single_runs(FILE *f, const char *out_dir, const struct history_index *idx)
{
    size_t singles = 0;
    for (size_t s = 0; s < idx->n_series; s++)
        singles += idx->series[s].n == 1;
    if (singles == 0)
        return;
    fprintf(f,
            "<h2 id=\"single\">Series of one run</h2>\n<p class=\"note\">%zu series (scenario "
            "&times; algorithm &times; settings) run once: no earlier run to hold %s to yet.</p>\n",
            singles, singles == 1 ? "it" : "them");
    fprintf(f, "<section class=\"singles\">\n");
    table_head(f, true);
    for (size_t s = 0; s < idx->n_series; s++)
        if (idx->series[s].n == 1)
            run_row(f, out_dir, idx, s, 0, true);
    fprintf(f, "</table>\n</section>\n");
}

static void regressions_list(FILE *f, const char *out_dir, const struct history_index *idx)
{
    fprintf(f, "<h2 id=\"regressions\">Regressions</h2>\n");
    if (idx->regressions == 0) {
        fprintf(f, "<p class=\"note\" data-figure=\"no-regression\">No run stands out against "
                   "the earlier runs of its series.</p>\n");
        return;
    }
    fprintf(f, "<ul class=\"regressions\">\n");
    for (size_t s = 0; s < idx->n_series; s++)
        for (size_t k = 0; k < idx->series[s].n; k++) {
            const struct history_run *r = &idx->runs[idx->series[s].first + k];
            char flag[96], link[PATH_MAX];
            if (!r->flags)
                continue;
            relative(out_dir, r->folder, link, sizeof(link));
            fprintf(f, "<li data-series=\"%zu\" data-run=\"%zu\"><a href=\"#series-%zu\">", s, k,
                    s);
            svg_text(f, r->scenario);
            fprintf(f, " &middot; ");
            svg_text(f, r->algorithm);
            fprintf(f, "</a>, run %zu of ", k + 1);
            svg_text(f, r->started_at);
            fprintf(f, ": <span class=\"flag\">");
            svg_text(f, history_flag_text(r, flag, sizeof(flag)));
            fprintf(f, "</span> against %zu earlier run%s (<a href=\"", r->earlier,
                    r->earlier == 1 ? "" : "s");
            svg_text(f, link);
            fprintf(f, "/report.html\">its report</a>)</li>\n");
        }
    fprintf(f, "</ul>\n");
}

int history_html(const char *path, const char *out_dir, const struct history_index *idx)
{
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return -1;
    char title[HISTORY_PATH + 96];
    snprintf(title, sizeof(title), "locklab history: %s: %zu runs, %zu regressions", idx->dir,
             idx->n_runs, idx->regressions);
    html_begin(f, title);
    fprintf(f, "<style>%s</style>\n<h1>history &middot; ", style);
    svg_text(f, idx->dir);
    fprintf(f,
            "<span class=\"verdict %s\" data-figure=\"regressions\">%zu regression%s</span></h1>\n",
            idx->regressions ? "REGRESSED" : "STEADY", idx->regressions,
            idx->regressions == 1 ? "" : "s");
    fprintf(f,
            "<p class=\"meta\"><span data-figure=\"runs\">%zu</span> runs in <span "
            "data-figure=\"series\">%zu</span> series (scenario &times; algorithm &times; "
            "settings: the scenario as run and the servers' kinds, layouts and versions), found "
            "under ",
            idx->n_runs, idx->n_series);
    svg_text(f, idx->dir);
    fprintf(f, "; <span data-figure=\"skipped\">%zu</span> report.json skipped.</p>\n",
            idx->n_skipped);
    fprintf(f, "<p class=\"note\">A complete run is flagged when its acquire p99 is more than "
               "1.5&times; the median p99 of the earlier complete runs of its series, or its QPS "
               "(locks acquired per second) under 2/3 of their median QPS; any run is flagged when "
               "it is UNSAFE and the run before it in its series was safe. On the charts each run "
               "is a mark in its verdict's colour (green PASS, red FAIL, amber INCOMPLETE), a "
               "flagged one ringed in red; the short dashed red line at each run is where it "
               "would have been flagged.</p>\n");
    regressions_list(f, out_dir, idx);
    for (size_t s = 0; s < idx->n_series; s++)
        if (idx->series[s].n > 1)
            series_section(f, out_dir, idx, s);
    single_runs(f, out_dir, idx);
    if (idx->n_skipped) {
        fprintf(f, "<h2 id=\"skipped\">Skipped</h2>\n<ul class=\"skipped\">\n");
        for (size_t i = 0; i < idx->n_skipped; i++) {
            fprintf(f, "<li>");
            svg_text(f, idx->skipped[i].path);
            fprintf(f, ": ");
            svg_text(f, idx->skipped[i].why);
            fprintf(f, "</li>\n");
        }
        fprintf(f, "</ul>\n");
    }
    html_end(f);
    return report_close(f);
}
