/* html.c - report.html: one run on one page.
 *
 * Charts first (what a person looks at): throughput and acquire latency
 * second by second with every fault's window shaded, the latency
 * spectrum, and for each violation the lock timeline around it; then the
 * tables a person checks (operations, faults and availability, invariants,
 * fairness, servers, the scenario). Elements carry data-* attributes with
 * the figures they show, so a test can hold the page to report.json.
 *
 * This file is the page's order; the charts are drawn in html_charts.c,
 * the lock timelines in html_timelines.c, the tables in html_tables.c.
 */
#include <inttypes.h>

#include "reports/html.h"
#include "reports/html_parts.h"
#include "reports/report.h"
#include "sim/check/context.h"
#include "sim/check/groups.h"
#include "sim/record/histogram.h"
#include "sim/scenario/scenario.h"

/* lock timelines drawn, one per group of violations; the context
 * (sim/check/context.h) rebuilds the sections of that many */
#define MAX_TIMELINES CONTEXT_WINDOWS

static void card(FILE *f, const char *figure, const char *value, const char *what, bool bad)
{
    fprintf(f, "<div class=\"card%s\"><b data-figure=\"%s\">", bad ? " bad" : "", figure);
    svg_text(f, value);
    fprintf(f, "</b><span>");
    svg_text(f, what);
    fprintf(f, "</span></div>\n");
}

static void header(FILE *f, const struct run_result *r)
{
    const struct scenario *s = r->scn;
    const char *verdict = report_verdict(r);
    fprintf(f, "<h1>");
    svg_text(f, s->name);
    fprintf(f, " &middot; ");
    svg_text(f, r->algorithm);
    fprintf(f, "<span class=\"verdict %s\" data-figure=\"verdict\">%s</span>", verdict, verdict);
    struct report_safety safety = report_safety_of(r);
    html_safety_badge(f, &safety);
    fprintf(f, "</h1>\n");
    if (s->description[0]) {
        fprintf(f, "<p class=\"meta\">");
        svg_text(f, s->description);
        fprintf(f, "</p>\n");
    }
    char why[320], secs[32], wl[256], load[400];
    const char *fail = report_failure(r, why, sizeof(why));
    if (!r->complete || fail) {
        fprintf(f, "<p class=\"why\">%s", r->complete ? "" : "INCOMPLETE: ");
        svg_text(f, r->complete ? fail : r->incomplete_reason); /* may quote a server */
        fprintf(f, "</p>\n");
    }
    fprintf(f, "<p class=\"meta\">Expected:");
    for (size_t i = 0; i < r->n_expects; i++) {
        const struct expect_record *x = &r->expects[i];
        fprintf(f, "%s <span data-expect=\"%s\" data-met=\"%s\">", i ? "," : "", x->what,
                x->met ? "true" : "false");
        svg_text(f, x->what);
        fputc(' ', f);
        svg_text(f, x->want); /* "<5" */
        fprintf(f, ", got ");
        svg_text(f, x->got);
        fprintf(f, " (%s)</span>", x->met ? "met" : "NOT MET");
    }
    fprintf(f, ".</p>\n");
    fprintf(f,
            "<p class=\"meta\">%" PRIu32 " clients, seed %" PRIu64 ", %s s planned, ran %.2f s; ",
            s->clients, s->seed, report_seconds(s->duration_ms, secs, sizeof(secs)), r->elapsed_s);
    svg_text(f, report_workload(s, wl, sizeof(wl)));
    fprintf(f, "</p>\n<p class=\"meta\" data-figure=\"load\" data-mode=\"%s\">",
            r->load.rate > 0 ? "open" : "closed");
    svg_text(f, report_load(r, load, sizeof(load)));
    fprintf(f, ".</p>\n");
    html_meta_line(f, r->meta, r->t0_wall_ns, r->versions, r->n_servers, r->has_proxy);
}

static void cards(FILE *f, const struct run_result *r)
{
    const struct histogram *acq = r->ops[OP_ACQUIRE];
    char v[64];
    fprintf(f, "<div class=\"cards\">\n");
    snprintf(v, sizeof(v), "%.1f", result_qps(r, (uint64_t)acq->total_count));
    card(f, "qps", v, "locks acquired per second", false);
    const char *names[] = {"p50", "p99", "max"};
    const double pct[] = {50, 99, 100};
    for (int i = 0; i < 3; i++) {
        char what[48], fig[24];
        if (acq->total_count)
            html_ms_label(v, sizeof(v), (double)histogram_percentile(acq, pct[i]) / 1000.0);
        else
            snprintf(v, sizeof(v), "-");
        snprintf(what, sizeof(what), "acquire %s", names[i]);
        snprintf(fig, sizeof(fig), "acquire_%s", names[i]);
        card(f, fig, v, what, false);
    }
    uint64_t failed = r->stat[ST_ACQUIRE_BUSY] + r->stat[ST_ACQUIRE_ERR];
    snprintf(v, sizeof(v), "%" PRIu64, failed);
    card(f, "acquire_failed", v, "acquires failed (busy or error)", false);
    snprintf(v, sizeof(v), "%" PRIu64, r->check.violations);
    card(f, "violations", v, "mutual-exclusion violations", r->check.violations > 0);
    card(f, "invariants", r->invariants_hold ? "hold" : "broken", "business invariants",
         !r->invariants_hold);
    if (report_stuck_ms(r) > 0) {
        snprintf(v, sizeof(v), "%.3f s", report_stuck_ms(r) / 1e3);
        card(f, "stuck", v, "longest stuck: a key with waiters and no holder", false);
    }
    fprintf(f, "</div>\n");
}

static void files(FILE *f)
{
    fprintf(f, "<p class=\"note\">In this folder: <a href=\"report.json\">report.json</a>, "
               "<a href=\"report.md\">report.md</a>, <a href=\"history.llh\">history.llh</a> "
               "(every operation, for <code>locklab check</code>; <code>locklab show --history"
               "</code> prints it as JSON lines), and per operation an "
               "HdrHistogram percentile file and interval log:");
    for (int k = 0; k < OP_COUNT; k++)
        fprintf(f, " <a href=\"%s.hgrm\">%s.hgrm</a> <a href=\"%s.hlog\">.hlog</a>%s",
                report_op_name(k), report_op_name(k), report_op_name(k),
                k + 1 < OP_COUNT ? "," : ".");
    fprintf(f, "</p>\n");
}

static void charts(FILE *f, const struct run_result *r)
{
    fprintf(f, "<h2 id=\"throughput\">Throughput</h2>\n");
    html_throughput_chart(f, r);
    fprintf(f, "<h2 id=\"latency\">Acquire latency over time</h2>\n");
    html_latency_chart(f, r);
    fprintf(f, "<p class=\"note\">");
    if (r->load.rate > 0)
        fprintf(f, "Open loop: each step's latency counts from when it was due, so a stall shows "
                   "as the wait every user behind it had.");
    else
        fprintf(f, "Closed loop: a client stuck in a stall records one slow acquire and starts "
                   "none meanwhile, so the percentiles understate what users behind a stall "
                   "would see (coordinated omission); <code>--rate</code> runs open loop.");
    fprintf(f, "</p>\n<h2 id=\"spectrum\">Latency percentile spectrum</h2>\n");
    html_op_spectrum(f, r);
}

static void violations(FILE *f, const struct run_result *r)
{
    const struct check_result *c = &r->check;
    fprintf(f, "<h2 id=\"violations\">Violations</h2>\n");
    if (c->violations == 0) {
        fprintf(f, "<p class=\"note\">No two holders of one lock were ever inside their critical "
                   "sections at once.</p>\n");
        return;
    }
    /* one timeline per cause, not per pair: a stale holder overlapped by a
     * hundred others is one story (sim/check/groups.h) */
    size_t drawn[CHECK_MAX_GROUPS];
    size_t n = groups_drawn(&c->groups, MAX_TIMELINES, drawn);
    for (size_t i = 0; i < n; i++)
        html_group_timeline(f, r, &c->groups.list[drawn[i]], drawn[i]);
    if (c->groups.groups > n)
        fprintf(f,
                "<p class=\"note\">The %zu groups with the most violations drawn, of %" PRIu64
                ".</p>\n",
                n, c->groups.groups);
    html_violations_table(f, r);
}

int report_html(const char *path, const struct run_result *r)
{
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return -1;
    char title[400], verdict[200];
    snprintf(title, sizeof(title), "locklab: %s with %s: %s", r->scn->name, r->algorithm,
             report_verdict_brief(r, verdict, sizeof(verdict)));
    html_begin(f, title);
    header(f, r);
    cards(f, r);
    charts(f, r);
    violations(f, r);
    fprintf(f, "<h2 id=\"faults\">Faults and availability</h2>\n");
    html_faults_table(f, r);
    fprintf(f, "<h2 id=\"operations\">Operations</h2>\n");
    html_operations_table(f, r);
    fprintf(f, "<h2 id=\"safety\">Safety and invariants</h2>\n");
    html_invariants_table(f, r);
    fprintf(f, "<h2 id=\"fairness\">Fairness</h2>\n");
    html_fairness(f, r);
    fprintf(f, "<h2 id=\"servers\">Servers</h2>\n");
    html_servers_table(f, r);
    fprintf(f, "<h2 id=\"scenario\">Scenario</h2>\n");
    html_scenario_block(f, r);
    files(f);
    html_end(f);
    return report_close(f);
}
