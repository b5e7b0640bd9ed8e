/* html.c - report.html: one run on one page.
 *
 * Charts first (what a person looks at): throughput and acquire latency
 * second by second with every fault's window shaded, the latency
 * spectrum, and for each violation the lock timeline around it; then the
 * tables a person checks (operations, faults and availability, invariants,
 * fairness, servers, the scenario). Elements carry data-* attributes with
 * the figures they show, so a test can hold the page to report.json.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reports/html.h"
#include "reports/report.h"
#include "sim/record/histogram.h"

#define MAX_TIMELINES  10  /* lock timelines drawn, as --show-violations' default */
#define MAX_VIOL_ROWS  100 /* violations listed in the table */
#define MAX_LANES      8   /* clients drawn around one violation */
#define MAX_BARS       400 /* critical sections drawn around one violation */
#define MAX_HOVER_COLS 600 /* hover columns per time chart: a 1-hour run groups seconds */

static double html_span_end_s(const struct run_result *r, const struct fault_span *s)
{
    return s->to_ns == UINT64_MAX ? r->elapsed_s : report_rel_s(r, s->to_ns);
}

/* Host stalls the lock is not built to ride out (longer than its slack),
 * as bands of their own: no fault of the scenario's, but a cause all the
 * same. Those between w0 and w1 only. */
static void html_stall_bands(struct svg_chart *c, const struct run_result *r, uint64_t w0,
                             uint64_t w1)
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

static void html_time_tick(char *buf, size_t len, double s)
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

static void html_throughput_chart(FILE *f, const struct run_result *r)
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

static void html_latency_chart(FILE *f, const struct run_result *r)
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

static void html_op_spectrum(FILE *f, const struct run_result *r)
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

/* --- the lock timeline around a violation ------------------------------ */

struct lanes {
    uint32_t client[MAX_LANES];
    size_t n;
    uint32_t dropped[64]; /* clients on the key in the window with no lane (the first 64) */
    size_t n_dropped;
};

static int lane_of(const struct lanes *l, uint32_t client)
{
    for (size_t i = 0; i < l->n; i++)
        if (l->client[i] == client)
            return (int)i;
    return -1;
}

static void add_lane(struct lanes *l, uint32_t client)
{
    if (lane_of(l, client) >= 0)
        return;
    if (l->n < MAX_LANES) {
        l->client[l->n++] = client;
        return;
    }
    for (size_t i = 0; i < l->n_dropped; i++)
        if (l->dropped[i] == client)
            return;
    if (l->n_dropped < sizeof(l->dropped) / sizeof(l->dropped[0]))
        l->dropped[l->n_dropped++] = client;
}

static bool in_window(const struct section *s, uint64_t w0, uint64_t w1)
{
    return s->from_ns <= w1 && s->to_ns >= w0;
}

/* The sections of key around index i (sections are sorted by key, then
 * entry), within [w0, w1]: [*lo, *hi). A section may begin up to a minute
 * before the window and still reach into it. */
static void key_range(const struct run_result *r, size_t i, uint64_t w0, size_t *lo, size_t *hi)
{
    uint32_t key = r->sections[i].key;
    size_t a = i, b = i + 1;
    uint64_t early = w0 > 60000000000ULL ? w0 - 60000000000ULL : 0;
    while (a > 0 && r->sections[a - 1].key == key && r->sections[a - 1].from_ns >= early)
        a--;
    while (b < r->n_sections && r->sections[b].key == key)
        b++;
    *lo = a;
    *hi = b;
}

static void section_bar(struct svg_chart *c, const struct run_result *r, const struct section *s,
                        double y, uint64_t w0, uint64_t w1)
{
    double a = report_rel_s(r, s->from_ns < w0 ? w0 : s->from_ns);
    double b = report_rel_s(r, s->to_ns > w1 ? w1 : s->to_ns);
    double x0 = svg_x(c, a), x1 = svg_x(c, b);
    char tok[24];
    report_token(s->token, tok, sizeof(tok));
    fprintf(c->f,
            "<g class=\"held\" data-client=\"%" PRIu32 "\" data-token=\"%s\"><title>client %" PRIu32
            " held it %.3f s .. %.3f s (%.3f ms), token %s, %s</title>"
            "<rect class=\"section\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"12\" "
            "fill=\"%s\"/>",
            s->client, tok, s->client, report_rel_s(r, s->from_ns), report_rel_s(r, s->to_ns),
            (double)(s->to_ns - s->from_ns) / 1e6, tok, report_effect_name(s->effect), x0, y,
            x1 - x0 > 1 ? x1 - x0 : 1, svg_client_colour(s->client));
    if (s->token && x1 - x0 > 7.0 * (double)strlen(tok) + 24)
        fprintf(c->f, "<text x=\"%.1f\" y=\"%.1f\" fill=\"#fff\" font-size=\"10\">token %s</text>",
                x0 + 3, y + 10, tok);
    fprintf(c->f, "</g>\n");
}

/* Faults behind the lanes: one aimed at a client shades that client's lane
 * (a paused holder), one on servers the whole height. */
static void timeline_faults(struct svg_chart *c, const struct run_result *r, const struct lanes *l,
                            uint64_t w0, uint64_t w1, double lane_h)
{
    int row = 0; /* labels staggered on three rows */
    html_stall_bands(c, r, w0, w1);
    for (size_t i = 0; i < r->n_spans; i++) {
        const struct fault_span *s = &r->spans[i];
        if (s->from_ns > w1 || s->to_ns < w0)
            continue;
        char name[160], hover[256];
        report_span_name(r, s, name, sizeof(name));
        double a = report_rel_s(r, s->from_ns), b = html_span_end_s(r, s);
        snprintf(hover, sizeof(hover), "%s: %.3f s .. %.3f s", name, a, b);
        int lane = s->client >= 0 ? lane_of(l, (uint32_t)s->client) : -1;
        if (s->client >= 0 && lane >= 0) {
            double x0 = svg_x(c, a), x1 = svg_x(c, b);
            fprintf(c->f, "<g class=\"band client\" data-fault=\"%" PRIu32 "\"><title>", s->fault);
            svg_text(c->f, hover);
            fprintf(c->f,
                    "</title><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>"
                    "<text x=\"%.1f\" y=\"%.1f\" font-size=\"9\">",
                    x0, c->top + lane * lane_h, x1 - x0 > 2 ? x1 - x0 : 2, lane_h, x0 + 2,
                    c->top + lane * lane_h + 8);
            svg_text(c->f, fault_type_name(s->type));
            fprintf(c->f, "</text></g>\n");
        } else {
            fprintf(c->f, "<g data-fault=\"%" PRIu32 "\">", s->fault);
            svg_band(c, a, b, fault_band(s->type), name, hover, row++ % 3);
            fprintf(c->f, "</g>\n");
        }
    }
}

struct near {
    size_t i;
    uint64_t dist;
};

static int by_dist(const void *a, const void *b)
{
    const struct near *x = a, *y = b;
    return x->dist < y->dist ? -1 : x->dist > y->dist;
}

/* The sections drawn: those of the lanes' clients in the window; on a hot
 * key at most MAX_BARS, the two of the violation and the ones that began
 * nearest the overlap, so a long run's page stays small. *n of them. */
static size_t *pick_bars(const struct run_result *r, const struct violation *v,
                         const struct lanes *l, size_t lo, size_t hi, uint64_t w0, uint64_t w1,
                         uint64_t at, size_t *n)
{
    struct near *c = malloc((hi - lo) * sizeof(*c));
    size_t *out = malloc((hi - lo) * sizeof(*out)), m = 0;
    *n = 0;
    if (c == NULL || out == NULL) {
        free(c);
        free(out);
        return NULL;
    }
    for (size_t i = lo; i < hi; i++) {
        const struct section *s = &r->sections[i];
        if (lane_of(l, s->client) < 0 || !in_window(s, w0, w1))
            continue;
        uint64_t d = s->from_ns > at ? s->from_ns - at : at - s->from_ns;
        c[m++] = (struct near){i, i == v->a || i == v->b ? 0 : d + 1};
    }
    if (m > MAX_BARS)
        qsort(c, m, sizeof(*c), by_dist);
    for (size_t k = 0; k < m && k < MAX_BARS; k++)
        out[(*n)++] = c[k].i;
    free(c);
    return out;
}

static void html_lock_timeline(FILE *f, const struct run_result *r, const struct violation *v,
                               size_t nth)
{
    const struct section *a = &r->sections[v->a], *b = &r->sections[v->b];
    uint64_t from = a->from_ns < b->from_ns ? a->from_ns : b->from_ns;
    uint64_t to = a->to_ns > b->to_ns ? a->to_ns : b->to_ns;
    uint64_t pad = (to - from) / 4 > 50000000ULL ? (to - from) / 4 : 50000000ULL;
    uint64_t w0 = from > pad ? from - pad : 0, w1 = to + pad;
    if (w0 < r->t0_mono_ns)
        w0 = r->t0_mono_ns;
    struct lanes l = {.n = 0};
    add_lane(&l, a->client);
    add_lane(&l, b->client);
    size_t lo, hi;
    key_range(r, v->a < v->b ? v->a : v->b, w0, &lo, &hi);
    for (size_t i = lo; i < hi; i++)
        if (in_window(&r->sections[i], w0, w1))
            add_lane(&l, r->sections[i].client);
    const double lane_h = 22;
    struct svg_chart c = {.f = f,
                          .width = 1000,
                          .height = 40 + lane_h * (double)l.n + 40,
                          .left = 90,
                          .right = 20,
                          .top = 40, /* room for three rows of fault labels */
                          .bottom = 40,
                          .x = {report_rel_s(r, w0), report_rel_s(r, w1), false},
                          .y = {0, (double)l.n, false},
                          .band_labels_above = true};
    const char *key = r->hist.keys[a->key];
    char label[256];
    snprintf(label, sizeof(label),
             "violation %zu: clients %" PRIu32 " and %" PRIu32 " both held %s", nth + 1, a->client,
             b->client, key);
    fprintf(f, "<h3>");
    svg_text(f, label);
    fprintf(f, "</h3>\n");
    fprintf(f, "<div class=\"lock-timeline\" data-key=\"");
    svg_text(f, key);
    fprintf(f, "\" data-a=\"%" PRIu32 "\" data-b=\"%" PRIu32 "\" data-overlap-ms=\"%.3f\">\n",
            a->client, b->client, (double)v->overlap_ns / 1e6);
    svg_begin(&c, "chart timeline", label);
    fprintf(f, "<rect class=\"frame\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>\n",
            c.left, c.top, c.width - c.left - c.right, lane_h * (double)l.n);
    svg_x_axis(&c, "seconds since the start", html_time_tick);
    timeline_faults(&c, r, &l, w0, w1, lane_h);
    for (size_t i = 0; i < l.n; i++) {
        fprintf(f,
                "<text class=\"lane\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">client %" PRIu32
                "</text>\n",
                c.left - 6, c.top + lane_h * (double)i + 15, l.client[i]);
    }
    /* the overlap, across the two holders' lanes */
    uint64_t o0 = a->from_ns > b->from_ns ? a->from_ns : b->from_ns;
    uint64_t o1 = a->to_ns < b->to_ns ? a->to_ns : b->to_ns;
    size_t n_bars = 0, *bars = pick_bars(r, v, &l, lo, hi, w0, w1, o0, &n_bars);
    for (size_t k = 0; k < n_bars; k++) {
        const struct section *s = &r->sections[bars[k]];
        section_bar(&c, r, s, c.top + lane_h * lane_of(&l, s->client) + 8, w0, w1);
    }
    free(bars);
    double x0 = svg_x(&c, report_rel_s(r, o0)), x1 = svg_x(&c, report_rel_s(r, o1));
    fprintf(f,
            "<g class=\"violation\"><title>overlap %.3f ms: clients %" PRIu32 " and %" PRIu32
            " both inside the critical section of ",
            (double)v->overlap_ns / 1e6, a->client, b->client);
    svg_text(f, key);
    fprintf(f,
            "</title><rect class=\"overlap\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>"
            "</g>\n",
            x0, c.top + 6, x1 - x0 > 2 ? x1 - x0 : 2, lane_h + 16);
    svg_end(&c);
    if (l.n_dropped)
        fprintf(f,
                "<p class=\"note\">%zu more client%s held this key in the window; not drawn.</p>\n",
                l.n_dropped, l.n_dropped == 1 ? "" : "s");
    fprintf(f, "</div>\n");
}

/* --- tables ------------------------------------------------------------ */

static void cell_text(FILE *f, const char *cls, const char *s)
{
    fprintf(f, "<td%s>", cls ? cls : "");
    svg_text(f, s);
    fprintf(f, "</td>");
}

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
    if (r->n_stuck) {
        snprintf(v, sizeof(v), "%.3f s", (double)r->stuck[0].longest_ns / 1e9);
        card(f, "stuck", v, "longest wait on a free lock", false);
    }
    fprintf(f, "</div>\n");
}

static void html_operations_table(FILE *f, const struct run_result *r)
{
    fprintf(f, "<table class=\"operations\"><tr><th class=\"l\">operation</th><th>count</th>"
               "<th>per second</th><th>p50 ms</th><th>p90 ms</th><th>p99 ms</th>"
               "<th>p99.9 ms</th><th>max ms</th></tr>\n");
    for (int k = 0; k < OP_COUNT; k++) {
        const struct histogram *h = r->ops[k];
        fprintf(f, "<tr data-op=\"%s\"><td class=\"l\">%s</td><td>%" PRId64 "</td><td>%.1f</td>",
                report_op_name(k), report_op_name(k), h->total_count,
                result_qps(r, (uint64_t)h->total_count));
        for (size_t i = 0; i < REPORT_N_PERCENTILES; i++) {
            if (h->total_count)
                fprintf(f, "<td>%.3f</td>",
                        (double)histogram_percentile(h, report_percentiles[i]) / 1000.0);
            else
                fprintf(f, "<td>-</td>");
        }
        fprintf(f, "</tr>\n");
    }
    fprintf(f, "</table>\n");
    char counts[400];
    fprintf(f, "<p class=\"note\">");
    svg_text(f, report_op_counts(r, counts, sizeof(counts)));
    fprintf(f, "</p>\n");
}

static void html_faults_table(FILE *f, const struct run_result *r)
{
    if (r->n_faults == 0) {
        fprintf(f, "<p class=\"note\">No faults in this scenario.</p>\n");
        return;
    }
    fprintf(f, "<table class=\"faults\"><tr><th>at</th><th class=\"l\">fault</th>"
               "<th class=\"l\">what it did</th><th>window</th><th class=\"l\">availability</th>"
               "</tr>\n");
    for (size_t i = 0; i < r->n_faults; i++) {
        const struct fault_record *x = &r->faults[i];
        char plan[160], done[512], win[64] = "-", av[400] = "-";
        if (x->fired && x->ended)
            snprintf(win, sizeof(win), "%.3f .. %.3f s", report_rel_s(r, x->start_ns),
                     report_rel_s(r, x->end_ns));
        else if (x->fired)
            snprintf(win, sizeof(win), "%.3f s .. the end", report_rel_s(r, x->start_ns));
        const struct fault_availability *a = result_fault_availability(r, i);
        if (a && x->fired)
            report_availability(a, x->spec.kind, av, sizeof(av));
        fprintf(f, "<tr data-fault=\"%zu\"><td>%.3f s</td>", i, (double)x->spec.at_ms / 1000.0);
        cell_text(f, " class=\"l\"", report_fault_plan(&x->spec, plan, sizeof(plan)));
        cell_text(f, " class=\"l\"", report_fault_done(r, x, done, sizeof(done)));
        cell_text(f, NULL, win);
        cell_text(f, " class=\"l\"", av);
        fprintf(f, "</tr>\n");
    }
    fprintf(f, "</table>\n");
}

static void html_violations_table(FILE *f, const struct run_result *r)
{
    const struct check_result *c = &r->check;
    fprintf(f, "<table class=\"violations\"><tr><th class=\"l\">key</th><th>client</th>"
               "<th>held</th><th>token</th><th>client</th><th>held</th><th>token</th>"
               "<th>overlap ms</th><th class=\"l\">faults on</th></tr>\n");
    size_t shown = 0;
    for (size_t i = 0; i < c->n_list && shown < MAX_VIOL_ROWS; i++) {
        const struct violation *v = &c->list[i];
        if (v->fenced)
            continue;
        const struct section *a = &r->sections[v->a], *b = &r->sections[v->b];
        char faults[160], ta[24], tb[24];
        report_violation_faults(r, v, faults, sizeof(faults));
        fprintf(f, "<tr class=\"bad\">");
        cell_text(f, " class=\"l\"", r->hist.keys[a->key]);
        fprintf(f,
                "<td>%" PRIu32 "</td><td>%.3f .. %.3f s</td><td>%s</td><td>%" PRIu32
                "</td><td>%.3f .. %.3f s</td><td>%s</td><td>%.3f</td>",
                a->client, report_rel_s(r, a->from_ns), report_rel_s(r, a->to_ns),
                report_token(a->token, ta, sizeof(ta)), b->client, report_rel_s(r, b->from_ns),
                report_rel_s(r, b->to_ns), report_token(b->token, tb, sizeof(tb)),
                (double)v->overlap_ns / 1e6);
        cell_text(f, " class=\"l\"", faults[0] ? faults : "none");
        fprintf(f, "</tr>\n");
        shown++;
    }
    fprintf(f, "</table>\n");
    if (c->violations > shown)
        fprintf(f, "<p class=\"note\">%" PRIu64 " violations in all; the first %zu listed.</p>\n",
                c->violations, shown);
}

static void html_invariants_table(FILE *f, const struct run_result *r)
{
    fprintf(f, "<table class=\"invariants\"><tr><th class=\"l\"></th><th class=\"l\">invariant</th>"
               "<th class=\"l\">figures</th></tr>\n");
    for (size_t i = 0; i < r->n_inv; i++) {
        const struct invariant *inv = &r->inv[i];
        fprintf(f, "<tr%s data-invariant=\"%s\" data-holds=\"%s\">",
                inv->holds || inv->advisory ? "" : " class=\"bad\"", inv->name,
                inv->holds ? "true" : "false");
        cell_text(f, " class=\"l\"", report_invariant_mark(inv));
        cell_text(f, " class=\"l\"", inv->name);
        cell_text(f, " class=\"l\"", inv->detail);
        fprintf(f, "</tr>\n");
    }
    fprintf(f, "</table>\n");
    char buf[256];
    fprintf(f,
            "<p class=\"note\">Checker: %" PRIu64 " critical sections, %" PRIu64
            " overlapping pairs, %" PRIu64 " of them made safe by fencing, %" PRIu64
            " violations. Witness: %" PRIu64 " concurrent entries (%s).",
            r->check.sections, r->check.overlaps, r->check.fenced_pairs, r->check.violations,
            r->witness_concurrent, r->witness_agrees ? "agrees" : "DISAGREES");
    if (r->scn->fencing)
        fprintf(f, " Fencing: %" PRIu64 " reads and writes rejected for a stale token.",
                r->rejected_accesses);
    if (report_stuck(r, buf, sizeof(buf))) {
        fprintf(f, " Stuck: ");
        svg_text(f, buf);
        fprintf(f, ".");
    }
    if (report_host(r, buf, sizeof(buf))) {
        fprintf(f, " Host: ");
        svg_text(f, buf);
        fprintf(f, ".");
    }
    fprintf(f, "</p>\n");
}

/* --- fairness (locktorture's Max/Min) ---------------------------------- */

static uint64_t *acquisitions_per_client(const struct run_result *r)
{
    uint32_t n = r->hist.clients;
    uint64_t *per = calloc(n ? n : 1, sizeof(*per));
    if (per == NULL)
        return NULL;
    for (size_t k = 0; k < r->hist.n; k++) {
        const struct history_event *e = &r->hist.ev[k];
        if (e->f == HF_ACQUIRE && e->type == HT_OK && e->client < n)
            per[e->client]++;
    }
    return per;
}

static void html_fairness(FILE *f, const struct run_result *r)
{
    uint32_t n = r->hist.clients;
    uint64_t *per = acquisitions_per_client(r);
    if (per == NULL || n == 0) {
        free(per);
        return;
    }
    uint64_t max = 0, min = UINT64_MAX, total = 0;
    uint32_t at_max = 0, at_min = 0;
    for (uint32_t i = 0; i < n; i++) {
        total += per[i];
        if (per[i] > max) {
            max = per[i];
            at_max = i;
        }
        if (per[i] < min) {
            min = per[i];
            at_min = i;
        }
    }
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

static void html_servers_table(FILE *f, const struct run_result *r)
{
    fprintf(f, "<table class=\"servers\"><tr><th class=\"l\">server</th><th>through the proxy"
               "</th></tr>\n");
    for (size_t i = 0; i < r->n_servers; i++) {
        fprintf(f, "<tr>");
        cell_text(f, " class=\"l\"", r->servers[i]);
        if (r->proxied[i])
            fprintf(f, "<td>yes (%zu listener%s)</td>", r->proxy_listeners,
                    r->proxy_listeners == 1 ? "" : "s");
        else
            fprintf(f, "<td>no</td>");
        fprintf(f, "</tr>\n");
    }
    fprintf(f, "</table>\n");
    if (r->has_proxy)
        fprintf(f,
                "<p class=\"note\">Proxy: %" PRIu64 " connections, %" PRIu64 " refused, %" PRIu64
                " bytes up, %" PRIu64 " down, %" PRIu64 " dropped.</p>\n",
                r->proxy.connections, r->proxy.refused, r->proxy.bytes_up, r->proxy.bytes_down,
                r->proxy.bytes_dropped);
}

static void html_scenario_block(FILE *f, const struct run_result *r)
{
    json_t *j = report_scenario_json(r->scn);
    char *text = j ? json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
    fprintf(f, "<pre class=\"scenario\">");
    if (text)
        svg_text(f, text);
    fprintf(f, "</pre>\n");
    free(text);
    json_decref(j);
}

static void files(FILE *f)
{
    fprintf(f, "<p class=\"note\">In this folder: <a href=\"report.json\">report.json</a>, "
               "<a href=\"report.md\">report.md</a>, <a href=\"history.jsonl\">history.jsonl</a> "
               "(every operation, for <code>locklab check</code>), and per operation an "
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
    size_t drawn = 0;
    for (size_t i = 0; i < c->n_list && drawn < MAX_TIMELINES; i++)
        if (!c->list[i].fenced)
            html_lock_timeline(f, r, &c->list[i], drawn++);
    if (c->violations > drawn)
        fprintf(f, "<p class=\"note\">The first %zu of %" PRIu64 " violations drawn.</p>\n", drawn,
                c->violations);
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
