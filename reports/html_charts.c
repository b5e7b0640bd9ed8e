/* html_charts.c - the charts of report.html: throughput and acquire latency
 * second by second, as steps, with every fault's window, every host stall,
 * every span where two holders were inside at once and the stale holders'
 * lease ends on them; the latency spectrum per operation, and acquisitions
 * per client.
 */
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

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

/* --- the intervals of a time chart --------------------------------------- */

/* One interval per second of the timeline, drawn across its whole width
 * (steps, never points joined by lines: a line from one second's middle to
 * the next would start a drop half a second before its fault). The last is
 * as long as the run went on in it: a run of 5.06 s has a last interval of
 * 0.06 s, whose count is a rate only once divided by 0.06. */
struct intervals {
    size_t n;
    double last; /* the last one's length, s: (0, 1] */
    double end;  /* where the x axis ends: n - 1 + last */
};

static struct intervals intervals_of(const struct run_result *r)
{
    struct intervals iv = {r->tl_len, 1, (double)r->tl_len};
    double part = r->elapsed_s - (double)(iv.n ? iv.n - 1 : 0);
    if (iv.n > 0 && part < 0.999) {
        iv.last =
            part > 0.001 ? part : 0.001; /* a rate over less than a millisecond means nothing */
        iv.end = (double)(iv.n - 1) + iv.last;
    }
    return iv;
}

static double iv_len(const struct intervals *iv, size_t s)
{
    return s + 1 == iv->n ? iv->last : 1;
}

static bool iv_partial(const struct intervals *iv)
{
    return iv->n > 0 && iv->last < 0.999;
}

/* Intervals [from, to) of v as steps, NaN breaking them. A run of
 * intervals at one height is one segment (a flat series of an hour is one
 * line, not 3600), so a long run's page stays small. */
static void step_path(struct svg_chart *c, const struct intervals *iv, const double *v, size_t from,
                      size_t to, const char *colour, bool dashed)
{
    fprintf(c->f, "<path fill=\"none\" stroke=\"%s\"%s d=\"", colour,
            dashed ? " stroke-dasharray=\"4 3\"" : "");
    bool pen = false;
    double y_at = 0, x_end = 0; /* the open segment's height and where it ends */
    for (size_t s = from; s < to; s++) {
        if (isnan(v[s])) {
            if (pen)
                fprintf(c->f, "L%.1f %.1f", x_end, y_at);
            pen = false;
            continue;
        }
        double y = svg_y(c, v[s]), x0 = svg_x(c, (double)s);
        if (!pen)
            fprintf(c->f, "M%.1f %.1f", x0, y);
        else if (fabs(y - y_at) >= 0.05)
            fprintf(c->f, "L%.1f %.1fL%.1f %.1f", x_end, y_at, x0, y);
        y_at = y;
        x_end = svg_x(c, (double)s + iv_len(iv, s));
        pen = true;
    }
    if (pen)
        fprintf(c->f, "L%.1f %.1f", x_end, y_at);
    fprintf(c->f, "\"/>");
}

/* A series: its full intervals solid (or dashed), the partial last one
 * dotted apart, so a reader sees it stands on less than a second. */
static void step_series(struct svg_chart *c, const struct intervals *iv, const double *v,
                        const char *colour, const char *name, bool dashed)
{
    size_t full = iv_partial(iv) ? iv->n - 1 : iv->n;
    fprintf(c->f, "<g class=\"series\"><title>");
    svg_text(c->f, name);
    fprintf(c->f, "</title>");
    step_path(c, iv, v, 0, full, colour, dashed);
    if (full < iv->n) {
        fprintf(c->f, "<g class=\"partial-step\">");
        step_path(c, iv, v, full, iv->n, colour, true);
        fprintf(c->f, "</g>");
    }
    fprintf(c->f, "</g>\n");
}

/* The partial last interval, hatched, with its length and its counts for
 * a reader and for tests. */
static void partial_mark(struct svg_chart *c, const struct intervals *iv, const char *figures,
                         const char *attrs)
{
    if (!iv_partial(iv))
        return;
    double a = svg_x(c, (double)(iv->n - 1)), b = svg_x(c, iv->end);
    fprintf(c->f,
            "<g class=\"partial\" data-from-s=\"%zu\" data-length-s=\"%.3f\"%s><title>the last "
            "interval is %.3f s long, the run ended in it: %s</title>"
            "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>"
            "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">last %.*f s</text></g>\n",
            iv->n - 1, iv->last, attrs, iv->last, figures, a, c->top, b - a,
            c->height - c->top - c->bottom, b - 2, c->height - c->bottom - 4,
            iv->last < 0.1 ? 3 : 2, iv->last);
}

/* --- what went wrong, on the time axis ---------------------------------- */

struct vspan {
    double a, b; /* seconds of the run */
    size_t pairs;
};

static int by_start(const void *x, const void *y)
{
    const struct vspan *p = x, *q = y;
    return p->a < q->a ? -1 : p->a > q->a;
}

/* The time ranges where two holders were inside at once: each listed
 * violation's overlap (the later one's entry to the first exit), merged
 * where they overlap or lie closer than 12 px (a gap a reader cannot tell
 * from none: 100 violations of one stale holder, each a short section of
 * another client, make one span, not 100 slivers). Each span's hover
 * gives its exact times and pair count; its label is drawn where it does
 * not run into the one before. Fenced pairs were safe and are left out. */
static void violation_spans(struct svg_chart *c, const struct run_result *r)
{
    const struct check_result *k = &r->check;
    struct vspan *v = calloc(k->n_list ? k->n_list : 1, sizeof(*v));
    size_t n = 0;
    if (v == NULL)
        return;
    for (size_t i = 0; i < k->n_list; i++) {
        const struct violation *x = &k->list[i];
        if (x->fenced)
            continue;
        uint64_t to = x->sa.to_ns < x->sb.to_ns ? x->sa.to_ns : x->sb.to_ns;
        v[n++] = (struct vspan){report_rel_s(r, x->sb.from_ns), report_rel_s(r, to), 1};
    }
    qsort(v, n, sizeof(*v), by_start);
    double px = 12 * (c->x.hi - c->x.lo) / (c->width - c->left - c->right), label_end = -1e9;
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (m > 0 && v[i].a <= v[m - 1].b + px) {
            v[m - 1].b = v[i].b > v[m - 1].b ? v[i].b : v[m - 1].b;
            v[m - 1].pairs++;
        } else {
            v[m++] = v[i];
        }
    }
    double bottom = c->height - c->bottom;
    for (size_t i = 0; i < m; i++) {
        double a = svg_x(c, v[i].a), b = svg_x(c, v[i].b);
        if (b - a < 2)
            b = a + 2;
        fprintf(c->f,
                "<g class=\"vspan\" data-from-s=\"%.6f\" data-to-s=\"%.6f\" data-pairs=\"%zu\">"
                "<title>%zu violation%s: two holders inside at once, %.3f s .. %.3f s%s</title>"
                "<rect class=\"vshade\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>"
                "<rect class=\"vbar\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"7\"/>",
                v[i].a, v[i].b, v[i].pairs, v[i].pairs, v[i].pairs == 1 ? "" : "s", v[i].a, v[i].b,
                k->violations > k->n_list ? " (of the pairs the checker listed)" : "", a, c->top,
                b - a, bottom - c->top, a, bottom - 7, b - a);
        char text[48];
        snprintf(text, sizeof(text), "%zu violation%s", v[i].pairs, v[i].pairs == 1 ? "" : "s");
        if (a > label_end) {
            fprintf(c->f, "<text x=\"%.1f\" y=\"%.1f\">%s</text>", a + 2, bottom - 10, text);
            label_end = a + 8 + 7.0 * (double)strlen(text);
        }
        fprintf(c->f, "</g>\n");
    }
    free(v);
}

#define LEASE_LINES 8 /* more stale holders than this: ticks, not lines */

/* Is listed pair i's earlier holder one an earlier unfenced pair named? */
static bool holder_seen(const struct check_result *k, size_t i)
{
    const struct section *a = &k->list[i].sa;
    for (size_t j = 0; j < i; j++)
        if (!k->list[j].fenced && k->list[j].sa.client == a->client &&
            k->list[j].sa.from_ns == a->from_ns)
            return true;
    return false;
}

/* Where the stale holders' leases ran out: each violation's earlier
 * holder, granted at its entry, held the lock for the ttl (or ZooKeeper's
 * session) at most, unless it renewed. One marker per holder: a dashed
 * line across the plot, labelled while the labels have room, for a few
 * holders; for more (a lock unsafe all along: 150 of them), a short tick
 * under the top edge each and one label, so the figures stay readable.
 * Every marker carries its figures on hover. */
static void lease_marks(struct svg_chart *c, const struct run_result *r)
{
    const struct check_result *k = &r->check;
    uint32_t ttl = r->hist.ttl_ms;
    size_t holders = 0, drawn = 0;
    double label_end = -1e9;
    if (ttl == 0)
        return;
    for (size_t i = 0; i < k->n_list; i++)
        holders += !k->list[i].fenced && !holder_seen(k, i);
    bool lines = holders <= LEASE_LINES;
    for (size_t i = 0; i < k->n_list; i++) {
        const struct section *a = &k->list[i].sa;
        if (k->list[i].fenced || holder_seen(k, i))
            continue;
        double granted = report_rel_s(r, a->from_ns), at = granted + ttl / 1e3;
        if (at > c->x.hi)
            continue;
        double x = svg_x(c, at);
        fprintf(c->f,
                "<g class=\"lease\" data-client=\"%" PRIu32
                "\" data-granted-s=\"%.6f\" data-ttl-ms=\"%" PRIu32
                "\" data-at-s=\"%.6f\"><title>client %" PRIu32
                "'s lease ran out: granted at %.3f s, + ttl %" PRIu32
                " ms = %.3f s (unless it renewed)</title>"
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>",
                a->client, granted, ttl, at, a->client, granted, ttl, at, x, c->top, x,
                lines ? c->height - c->bottom : c->top + 8);
        char text[96];
        if (lines)
            snprintf(text, sizeof(text),
                     "client %" PRIu32 "'s lease ends (%.2f s + %" PRIu32 " ms)", a->client,
                     granted, ttl);
        else
            snprintf(text, sizeof(text), "| lease ends of %zu stale holders (ttl %" PRIu32 " ms)",
                     holders, ttl);
        if (x > label_end && (lines || drawn == 0)) {
            fprintf(c->f, "<text x=\"%.1f\" y=\"%.1f\">%s</text>", x + 3,
                    lines ? c->height - c->bottom - 22 : c->top + 20, text);
            label_end = x + 10 + 6.2 * (double)strlen(text);
        }
        drawn++;
        fprintf(c->f, "</g>\n");
    }
}

/* Every fault's band, every host stall past the lock's slack, every span
 * where mutual exclusion broke and the leases whose end let it: what a
 * reader needs beside a time chart's figures. */
static void time_marks(struct svg_chart *c, const struct run_result *r)
{
    fault_bands(c, r);
    violation_spans(c, r);
    lease_marks(c, r);
}

static struct svg_chart time_chart(FILE *f, const struct intervals *iv, double height)
{
    return svg_time_chart(f, iv->end > 0 ? iv->end : 1, height);
}

/* Seconds grouped so a chart has at most MAX_HOVER_COLS hover columns. */
static size_t hover_group(const struct run_result *r)
{
    return (r->tl_len + MAX_HOVER_COLS - 1) / MAX_HOVER_COLS;
}

/* The y axis of a rate: linear, unless the smallest non-zero rate of an
 * interval at least half a second long is under a twentieth of the
 * largest (it would be under 5 % of the plot, ~10 px: ~30/s under a
 * latency fault beside 3000/s before it). Then log10 from the decade below
 * the smallest non-zero rate; an interval with none is a gap in its
 * series (a floor would read as a rate). A partial interval
 * shorter than that is left out of the choice: few events over a short
 * time make a wild rate. */
static struct svg_axis rate_axis(const struct intervals *iv, const double *ok, const double *fail)
{
    double top = 1, lo_ok = INFINITY, lo_any = INFINITY;
    for (size_t s = 0; s < iv->n; s++) {
        if (iv_len(iv, s) < 0.5)
            continue;
        top = ok[s] > top ? ok[s] : top;
        top = fail[s] > top ? fail[s] : top;
        lo_ok = ok[s] > 0 && ok[s] < lo_ok ? ok[s] : lo_ok;
        lo_any = ok[s] > 0 && ok[s] < lo_any ? ok[s] : lo_any;
        lo_any = fail[s] > 0 && fail[s] < lo_any ? fail[s] : lo_any;
    }
    if (!(lo_ok * 20 < top))
        return (struct svg_axis){0, top * 1.08, false};
    return svg_log_axis(lo_any, top * 1.08);
}

void html_throughput_chart(FILE *f, const struct run_result *r)
{
    struct intervals iv = intervals_of(r);
    struct svg_chart c = time_chart(f, &iv, 260);
    size_t n = r->tl_len;
    double *ok = malloc((n + 1) * sizeof(*ok)), *fail = malloc((n + 1) * sizeof(*fail));
    if (ok == NULL || fail == NULL)
        goto out;
    for (size_t s = 0; s < n; s++) { /* a rate: the partial interval's count over its length */
        ok[s] = r->tl_ok[s] / iv_len(&iv, s);
        fail[s] = r->tl_fail[s] / iv_len(&iv, s);
    }
    c.y = rate_axis(&iv, ok, fail);
    for (size_t s = 0; s < n && c.y.log; s++) { /* a log axis has no 0: a gap, not a floor */
        ok[s] = ok[s] > 0 ? ok[s] : NAN;
        fail[s] = fail[s] > 0 ? fail[s] : NAN;
    }
    svg_begin(&c, "chart throughput",
              c.y.log ? "business steps per second, ok and failed, on a log axis, with the faults"
                      : "business steps per second, ok and failed, with the faults");
    svg_axes(&c, "seconds since the start",
             c.y.log ? "steps per second (log scale; 0 left out)" : "steps per second",
             html_time_tick, NULL);
    time_marks(&c, r);
    if (n > 0) {
        char fig[160], attrs[160];
        double ro = r->tl_ok[n - 1] / iv.last, rf = r->tl_fail[n - 1] / iv.last;
        snprintf(fig, sizeof(fig),
                 "%" PRIu32 " got the lock, %" PRIu32 " missed: drawn as %.0f and %.0f per second",
                 r->tl_ok[n - 1], r->tl_fail[n - 1], ro, rf);
        snprintf(attrs, sizeof(attrs),
                 " data-ok=\"%" PRIu32 "\" data-failed=\"%" PRIu32
                 "\" data-ok-per-s=\"%.3f\" data-failed-per-s=\"%.3f\"",
                 r->tl_ok[n - 1], r->tl_fail[n - 1], ro, rf);
        partial_mark(&c, &iv, fig, attrs);
    }
    step_series(&c, &iv, ok, svg_series_colour(0), "got the lock (steps per second)", false);
    step_series(&c, &iv, fail, "#d32f2f", "missed the lock: busy or error (steps per second)",
                false);
    size_t g = hover_group(r);
    for (size_t s = 0; s < n; s += g) {
        uint64_t o = 0, x = 0;
        for (size_t k = s; k < s + g && k < n; k++) {
            o += r->tl_ok[k];
            x += r->tl_fail[k];
        }
        double to = s + g < n ? (double)(s + g) : iv.end;
        char hover[160];
        snprintf(hover, sizeof(hover),
                 "%zu s .. %.2f s: %" PRIu64 " got the lock, %" PRIu64 " missed", s, to, o, x);
        fprintf(f,
                "<g data-second=\"%zu\" data-seconds=\"%zu\" data-ok=\"%" PRIu64
                "\" data-failed=\"%" PRIu64 "\">",
                s, g, o, x);
        svg_hover_column(&c, (double)s, to, hover);
        fprintf(f, "</g>\n");
    }
    const char *names[] = {"got the lock", "missed it"};
    const char *colours[] = {svg_series_colour(0), "#d32f2f"};
    svg_legend(&c, names, colours, 2);
    svg_end(&c);
out:
    free(ok);
    free(fail);
}

static double nan_or(uint64_t count, double v)
{
    return count ? (v > 0.001 ? v : 0.001) : NAN;
}

void html_latency_chart(FILE *f, const struct run_result *r)
{
    struct intervals iv = intervals_of(r);
    struct svg_chart c = time_chart(f, &iv, 280);
    size_t n = r->tl_len;
    /* by the second each acquire began, when the history gave it: a wait
     * through a pause then stands inside the pause's band */
    const struct latency_second *tl = r->tl_begun ? r->tl_begun : r->tl_latency;
    double *p[3];
    for (int i = 0; i < 3; i++)
        p[i] = malloc((n + 1) * sizeof(double));
    double lo = INFINITY, hi = 0;
    if (p[0] == NULL || p[1] == NULL || p[2] == NULL)
        goto out;
    for (size_t s = 0; s < n; s++) {
        const struct latency_second *l = &tl[s];
        p[0][s] = nan_or(l->count, l->p50_ms);
        p[1][s] = nan_or(l->count, l->p99_ms);
        p[2][s] = nan_or(l->count, l->max_ms);
        if (l->count) {
            lo = p[0][s] < lo ? p[0][s] : lo;
            hi = p[2][s] > hi ? p[2][s] : hi;
        }
    }
    c.y = svg_log_axis(lo, hi);
    svg_begin(&c, "chart latency",
              r->tl_begun ? "acquire latency by the second each acquire began: p50, p99 and max "
                            "on a log axis, with the faults"
                          : "acquire latency by the second each acquire was granted: p50, p99 "
                            "and max on a log axis, with the faults");
    svg_axes(&c,
             r->tl_begun ? "second the acquire began (in open loop: was due)"
                         : "second the acquire was granted",
             "acquire latency (log scale)", html_time_tick, html_ms_tick);
    time_marks(&c, r);
    if (n > 0) {
        char fig[96], attrs[64];
        snprintf(fig, sizeof(fig), "%" PRIu64 " acquires began in it", tl[n - 1].count);
        snprintf(attrs, sizeof(attrs), " data-count=\"%" PRIu64 "\"", tl[n - 1].count);
        partial_mark(&c, &iv, fig, attrs);
    }
    static const char *const names[] = {"p50", "p99", "max"};
    const char *colours[] = {svg_series_colour(2), svg_series_colour(1), svg_series_colour(3)};
    for (int i = 0; i < 3; i++)
        step_series(&c, &iv, p[i], colours[i], names[i], i == 2);
    size_t g = hover_group(r);
    for (size_t s = 0; s < n; s += g) {
        /* a group shows its worst second: that is what a stall looks like */
        size_t w = s;
        for (size_t k = s; k < s + g && k < n; k++)
            if (tl[k].p99_ms > tl[w].p99_ms)
                w = k;
        const struct latency_second *l = &tl[w];
        char hover[192];
        snprintf(hover, sizeof(hover),
                 "second %zu: %" PRIu64 " acquires %s, p50 %.3f ms, p99 %.3f ms, max %.3f ms", w,
                 l->count, r->tl_begun ? "began" : "granted", l->p50_ms, l->p99_ms, l->max_ms);
        fprintf(f,
                "<g data-second=\"%zu\" data-count=\"%" PRIu64
                "\" data-p50-ms=\"%.6f\" data-p99-ms=\"%.6f\" data-max-ms=\"%.6f\">",
                w, l->count, l->p50_ms, l->p99_ms, l->max_ms);
        svg_hover_column(&c, (double)s, s + g < n ? (double)(s + g) : iv.end, hover);
        fprintf(f, "</g>\n");
    }
    svg_legend(&c, names, colours, 3);
    svg_end(&c);
out:
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
        /* a step is mostly its acquire: dashed over it, both show */
        curves[n].dashed = k == OP_STEP;
        list[n] = &curves[n];
        names[n++] = report_op_name(k);
    }
    html_spectrum_chart(f, list, names, NULL, n, "latency percentile spectrum per operation");
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
                          /* bar i centred on i: a tick names the client under it */
                          .x = {-0.5, (double)n - 0.5, false},
                          .y = {0, max ? (double)max * 1.08 : 1, false},
                          .x_integer = true};
    svg_begin(&c, "chart fairness", "acquisitions per client");
    svg_axes(&c, "client", "acquisitions", NULL, NULL);
    double w = svg_x(&c, 1) - svg_x(&c, 0);
    for (uint32_t i = 0; i < n; i++) {
        double y = svg_y(&c, (double)per[i]);
        fprintf(f,
                "<rect class=\"bar\" data-client=\"%" PRIu32 "\" data-acquired=\"%" PRIu64
                "\" x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\"><title>client %" PRIu32
                ": %" PRIu64 " acquisitions</title></rect>\n",
                i, per[i], svg_x(&c, i - 0.5) + (w > 3 ? 0.5 : 0), y, w > 3 ? w - 1 : w,
                c.height - c.bottom - y, i, per[i]);
    }
    svg_end(&c);
    free(per);
}
