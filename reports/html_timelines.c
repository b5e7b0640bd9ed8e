/* html_timelines.c - the lock timeline around a violation in report.html:
 * one lane per client that held the key in the window, its critical
 * sections as bars with their tokens, the faults behind them, and the
 * overlap marked across the two holders' lanes.
 *
 * The sections come from r->sections, sorted by key then entry: all of
 * the run's, or those a context rebuilt around the drawn violations
 * (sim/check/context.h), which draw alike; the window and which sections
 * it shows are the context's (context_window_of, context_in_window). A
 * result that kept none draws the pair alone.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "reports/html_parts.h"
#include "sim/check/context.h"

#define MAX_LANES 8   /* clients drawn around one violation */
#define MAX_BARS  400 /* critical sections drawn around one violation */

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

/* The sections a timeline reads, sorted by key then entry, and the pair's
 * two among them. */
struct view {
    const struct section *s;
    size_t n, a, b;
    struct context_window w;
};

/* The key's sections around the pair: [*lo, *hi), the whole of its run in
 * the sorted array (on a key sorted by the witness's sequence, entry
 * times need not rise, so no time bounds the walk). */
static void key_range(const struct view *v, size_t *lo, size_t *hi)
{
    size_t i = v->a < v->b ? v->a : v->b;
    size_t a = i, b = i + 1;
    while (a > 0 && v->s[a - 1].key == v->w.key)
        a--;
    while (b < v->n && v->s[b].key == v->w.key)
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
static size_t *pick_bars(const struct view *v, const struct lanes *l, size_t lo, size_t hi,
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
        const struct section *s = &v->s[i];
        if (lane_of(l, s->client) < 0 || !context_in_window(&v->w, s))
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

void html_lock_timeline(FILE *f, const struct run_result *r, const struct violation *pair,
                        size_t nth)
{
    struct section own[2] = {pair->sa, pair->sb};
    struct view v = {.s = r->sections, .n = r->n_sections, .a = pair->a, .b = pair->b};
    if (r->sections == NULL) /* a one-pass check keeps none: the pair alone */
        v = (struct view){.s = own, .n = 2, .a = 0, .b = 1};
    const struct section *a = &v.s[v.a], *b = &v.s[v.b];
    v.w = context_window_of(a, b, r->t0_mono_ns);
    uint64_t w0 = v.w.w0_ns, w1 = v.w.w1_ns;
    struct lanes l = {.n = 0};
    add_lane(&l, a->client);
    add_lane(&l, b->client);
    size_t lo, hi;
    key_range(&v, &lo, &hi);
    for (size_t i = lo; i < hi; i++)
        if (context_in_window(&v.w, &v.s[i]))
            add_lane(&l, v.s[i].client);
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
            a->client, b->client, (double)pair->overlap_ns / 1e6);
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
    size_t n_bars = 0, *bars = pick_bars(&v, &l, lo, hi, o0, &n_bars);
    for (size_t k = 0; k < n_bars; k++) {
        const struct section *s = &v.s[bars[k]];
        section_bar(&c, r, s, c.top + lane_h * lane_of(&l, s->client) + 8, w0, w1);
    }
    free(bars);
    double x0 = svg_x(&c, report_rel_s(r, o0)), x1 = svg_x(&c, report_rel_s(r, o1));
    fprintf(f,
            "<g class=\"violation\"><title>overlap %.3f ms: clients %" PRIu32 " and %" PRIu32
            " both inside the critical section of ",
            (double)pair->overlap_ns / 1e6, a->client, b->client);
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
