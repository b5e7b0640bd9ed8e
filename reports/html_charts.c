/* html_charts.c - the charts of report.html: throughput and acquire latency
 * second by second with every fault's window and every host stall shaded,
 * the latency spectrum per operation, and acquisitions per client.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

#include "reports/html.h"
#include "reports/html_parts.h"
#include "sim/record/histogram.h"

#define MAX_HOVER_COLS 600 /* hover columns per time chart: a 1-hour run groups seconds */

double html_span_end_s(const struct run_result *r, const struct fault_span *s)
{
    return s->to_ns == UINT64_MAX ? r->elapsed_s : report_rel_s(r, s->to_ns);
}

/* Host stalls the lock is not built to ride out (longer than its slack),
 * as bands of their own: no fault of the scenario's, but a cause all the
 * same. Those between w0 and w1 only. */
void html_stall_bands(struct svg_chart *c, const struct run_result *r, uint64_t w0, uint64_t w1)
{
    for (size_t i = 0; i < r->n_stalls; i++) {
        const struct host_stall *s = &r->stalls[i];
        if (!result_stall_past_slack(r, s->to_ns - s->from_ns) || s->from_ns > w1 || s->to_ns < w0)
            continue;
        double a = report_rel_s(r, s->from_ns), b = report_rel_s(r, s->to_ns);
        char hover[160];
        snprintf(hover, sizeof(hover),
                 "host stall: %.3f s .. %.3f s (%.0f ms; the lock rides out %" PRIu32 " ms)", a, b,
                 (b - a) * 1e3, r->hist.slack_ms);
        fprintf(c->f, "<g data-stall-from-s=\"%.3f\" data-stall-to-s=\"%.3f\">", a, b);
        svg_band(c, a, b, "host", "host stall", hover, 2);
        fprintf(c->f, "</g>\n");
    }
}

/* Every fault span as a band on a chart whose x is seconds of the run. */
static void fault_bands(struct svg_chart *c, const struct run_result *r)
{
    html_stall_bands(c, r, 0, UINT64_MAX);
    for (size_t i = 0; i < r->n_spans; i++) {
        const struct fault_span *s = &r->spans[i];
        char name[160], hover[256];
        report_span_name(r, s, name, sizeof(name));
        snprintf(hover, sizeof(hover), "%s: %.3f s .. %.3f s", name, report_rel_s(r, s->from_ns),
                 html_span_end_s(r, s));
        fprintf(c->f, "<g data-fault=\"%" PRIu32 "\" data-from-s=\"%.3f\" data-to-s=\"%.3f\">",
                s->fault, report_rel_s(r, s->from_ns), html_span_end_s(r, s));
        svg_band(c, report_rel_s(r, s->from_ns), html_span_end_s(r, s), fault_band(s->type), name,
                 hover, (int)(i % 3));
        fprintf(c->f, "</g>\n");
    }
}

void html_time_tick(char *buf, size_t len, double s)
{
    snprintf(buf, len, "%g s", s);
}

static struct svg_chart time_chart(FILE *f, const struct run_result *r, double height)
{
    struct svg_chart c = {.f = f,
                          .width = 1000,
                          .height = height,
                          .left = 70,
                          .right = 20,
                          .top = 24,
                          .bottom = 40,
                          .x = {0, r->tl_len > 0 ? (double)r->tl_len : 1, false}};
    return c;
}

/* Seconds grouped so a chart has at most MAX_HOVER_COLS hover columns. */
static size_t hover_group(const struct run_result *r)
{
    return (r->tl_len + MAX_HOVER_COLS - 1) / MAX_HOVER_COLS;
}

void html_throughput_chart(FILE *f, const struct run_result *r)
{
    struct svg_chart c = time_chart(f, r, 260);
    size_t n = r->tl_len;
    double *xs = malloc((n + 1) * sizeof(*xs)), *ok = malloc((n + 1) * sizeof(*ok));
    double *fail = malloc((n + 1) * sizeof(*fail)), top = 1;
    if (xs == NULL || ok == NULL || fail == NULL)
        goto out;
    for (size_t s = 0; s < n; s++) {
        xs[s] = (double)s + 0.5;
        ok[s] = r->tl_ok[s];
        fail[s] = r->tl_fail[s];
        top = ok[s] > top ? ok[s] : top;
        top = fail[s] > top ? fail[s] : top;
    }
    c.y = (struct svg_axis){0, top * 1.08, false};
    svg_begin(&c, "chart throughput", "business steps per second, ok and failed, with the faults");
    svg_axes(&c, "seconds since the start", "steps per second", html_time_tick, NULL);
    fault_bands(&c, r);
    svg_line(&c, xs, ok, n, svg_series_colour(0), "got the lock (steps per second)", false);
    svg_line(&c, xs, fail, n, "#d32f2f", "missed the lock: busy or error (steps per second)",
             false);
    size_t g = hover_group(r);
    for (size_t s = 0; s < n; s += g) {
        uint64_t o = 0, x = 0;
        for (size_t k = s; k < s + g && k < n; k++) {
            o += r->tl_ok[k];
            x += r->tl_fail[k];
        }
        char hover[128];
        snprintf(hover, sizeof(hover),
                 "%zu s .. %zu s: %" PRIu64 " got the lock, %" PRIu64 " missed", s,
                 s + g < n ? s + g : n, o, x);
        fprintf(f,
                "<g data-second=\"%zu\" data-seconds=\"%zu\" data-ok=\"%" PRIu64
                "\" data-failed=\"%" PRIu64 "\">",
                s, g, o, x);
        svg_hover_column(&c, (double)s, (double)(s + g < n ? s + g : n), hover);
        fprintf(f, "</g>\n");
    }
    const char *names[] = {"got the lock", "missed it"};
    const char *colours[] = {svg_series_colour(0), "#d32f2f"};
    svg_legend(&c, names, colours, 2);
    svg_end(&c);
out:
    free(xs);
    free(ok);
    free(fail);
}

static double nan_or(uint64_t count, double v)
{
    return count ? (v > 0.001 ? v : 0.001) : NAN;
}

void html_latency_chart(FILE *f, const struct run_result *r)
{
    struct svg_chart c = time_chart(f, r, 280);
    size_t n = r->tl_len;
    double *xs = malloc((n + 1) * sizeof(*xs)), *p[3];
    for (int i = 0; i < 3; i++)
        p[i] = malloc((n + 1) * sizeof(double));
    double lo = INFINITY, hi = 0;
    if (xs == NULL || p[0] == NULL || p[1] == NULL || p[2] == NULL)
        goto out;
    for (size_t s = 0; s < n; s++) {
        const struct latency_second *l = &r->tl_latency[s];
        xs[s] = (double)s + 0.5;
        p[0][s] = nan_or(l->count, l->p50_ms);
        p[1][s] = nan_or(l->count, l->p99_ms);
        p[2][s] = nan_or(l->count, l->max_ms);
        if (l->count) {
            lo = p[0][s] < lo ? p[0][s] : lo;
            hi = p[2][s] > hi ? p[2][s] : hi;
        }
    }
    if (!(hi > 0)) {
        lo = 0.1;
        hi = 1;
    }
    c.y = (struct svg_axis){pow(10, floor(log10(lo))), pow(10, ceil(log10(hi))), true};
    if (c.y.hi <= c.y.lo)
        c.y.hi = c.y.lo * 10;
    svg_begin(&c, "chart latency",
              "acquire latency per second: p50, p99 and max on a log axis, with the faults");
    svg_axes(&c, "seconds since the start", "acquire latency", html_time_tick, html_ms_tick);
    fault_bands(&c, r);
    static const char *const names[] = {"p50", "p99", "max"};
    const char *colours[] = {svg_series_colour(2), svg_series_colour(1), svg_series_colour(3)};
    for (int i = 0; i < 3; i++)
        svg_line(&c, xs, p[i], n, colours[i], names[i], i == 2);
    size_t g = hover_group(r);
    for (size_t s = 0; s < n; s += g) {
        /* a group shows its worst second: that is what a stall looks like */
        size_t w = s;
        for (size_t k = s; k < s + g && k < n; k++)
            if (r->tl_latency[k].p99_ms > r->tl_latency[w].p99_ms)
                w = k;
        const struct latency_second *l = &r->tl_latency[w];
        char hover[160];
        snprintf(hover, sizeof(hover),
                 "second %zu: %" PRIu64 " acquires, p50 %.3f ms, p99 %.3f ms, max %.3f ms", w,
                 l->count, l->p50_ms, l->p99_ms, l->max_ms);
        fprintf(f,
                "<g data-second=\"%zu\" data-count=\"%" PRIu64
                "\" data-p50-ms=\"%.6f\" data-p99-ms=\"%.6f\" data-max-ms=\"%.6f\">",
                w, l->count, l->p50_ms, l->p99_ms, l->max_ms);
        svg_hover_column(&c, (double)s, (double)(s + g < n ? s + g : n), hover);
        fprintf(f, "</g>\n");
    }
    svg_legend(&c, names, colours, 3);
    svg_end(&c);
out:
    free(xs);
    for (int i = 0; i < 3; i++)
        free(p[i]);
}

void html_op_spectrum(FILE *f, const struct run_result *r)
{
    struct html_curve *curves = calloc(OP_COUNT, sizeof(*curves));
    const struct html_curve *list[OP_COUNT];
    const char *names[OP_COUNT];
    size_t n = 0;
    if (curves == NULL)
        return;
    for (int k = 0; k < OP_COUNT; k++) {
        if (r->ops[k]->total_count == 0)
            continue;
        html_curve_of(&curves[n], r->ops[k]);
        list[n] = &curves[n];
        names[n++] = report_op_name(k);
    }
    html_spectrum_chart(f, list, names, n, "latency percentile spectrum per operation");
    free(curves);
}

/* --- fairness (locktorture's Max/Min) ---------------------------------- */

void html_fairness(FILE *f, const struct run_result *r)
{
    struct report_fairness fr;
    uint64_t *per = report_fairness(r, &fr);
    uint32_t n = fr.clients;
    if (per == NULL)
        return;
    uint64_t max = fr.max, min = fr.min, total = fr.total;
    uint32_t at_max = fr.at_max, at_min = fr.at_min;
    fprintf(f,
            "<p class=\"note\" data-figure=\"fairness\" data-total=\"%" PRIu64
            "\" data-max=\"%" PRIu64 "\" data-min=\"%" PRIu64 "\">Acquisitions: %" PRIu64
            " in all; most %" PRIu64 " (client %" PRIu32 "), fewest %" PRIu64 " (client %" PRIu32
            "); max/min ",
            total, max, min, total, max, at_max, min, at_min);
    if (min > 0)
        fprintf(f, "%.2f", (double)max / (double)min);
    else
        fprintf(f, "&infin; (a client never got the lock)");
    fprintf(f, ". A retry-with-backoff lock lets some clients starve; a queue serves them in "
               "turn.</p>\n");
    struct svg_chart c = {.f = f,
                          .width = 1000,
                          .height = 180,
                          .left = 70,
                          .right = 20,
                          .top = 14,
                          .bottom = 36,
                          .x = {0, (double)n, false},
                          .y = {0, max ? (double)max * 1.08 : 1, false}};
    svg_begin(&c, "chart fairness", "acquisitions per client");
    svg_axes(&c, "client", "acquisitions", NULL, NULL);
    double w = svg_x(&c, 1) - svg_x(&c, 0);
    for (uint32_t i = 0; i < n; i++) {
        double y = svg_y(&c, (double)per[i]);
        fprintf(f,
                "<rect class=\"bar\" data-client=\"%" PRIu32 "\" data-acquired=\"%" PRIu64
                "\" x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\"><title>client %" PRIu32
                ": %" PRIu64 " acquisitions</title></rect>\n",
                i, per[i], svg_x(&c, i) + (w > 3 ? 0.5 : 0), y, w > 3 ? w - 1 : w,
                c.height - c.bottom - y, i, per[i]);
    }
    svg_end(&c);
    free(per);
}
