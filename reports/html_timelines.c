/* html_timelines.c - the lock timeline of a group of violations in
 * report.html (sim/check/groups.h): one lane per client that held the key
 * in the window, the stale holder's first, then those that overlapped it;
 * their critical sections as bars with their tokens; the faults behind
 * them; the moment the stale holder's lease ran out; and every pair of the
 * group marked where it overlapped, not one pair of many.
 *
 * The sections come from r->sections, sorted by key then entry: all of
 * the run's, or those a context rebuilt around the drawn groups
 * (sim/check/context.h), which draw alike; the window and which sections
 * it shows are the context's (context_window_of_group, context_in_window).
 * A result that kept none draws the stale holder and its listed pairs.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "reports/html.h"
#include "reports/html_parts.h"
#include "reports/violation_groups.h"
#include "sim/check/context.h"
#include "sim/check/groups.h"

#define MAX_LANES 20  /* clients drawn in one timeline: the stale holder and 19 more */
#define MAX_BARS  400 /* critical sections drawn in one timeline */

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

/* The sections a timeline reads, sorted by key then entry, the group's
 * key's among them [lo, hi), and the window. */
struct view {
    const struct section *s;
    size_t n, lo, hi;
    struct context_window w;
};

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
    uint64_t rank; /* the stale holder 0, its pairs next, then the others; each by distance */
};

static int by_rank(const void *a, const void *b)
{
    const struct near *x = a, *y = b;
    return x->rank < y->rank ? -1 : x->rank > y->rank;
}

static bool same_section(const struct section *x, const struct section *y)
{
    return x->key == y->key && x->client == y->client && x->owner == y->owner &&
           x->from_ns == y->from_ns;
}

/* The sections drawn: those of the lanes' clients in the window; on a hot
 * key at most MAX_BARS, the stale holder, its pairs, then those that
 * began nearest the first overlap, so a long run's page stays small. *n
 * of them. */
static size_t *pick_bars(const struct view *v, const struct lanes *l,
                         const struct violation_groups *gs, const struct violation_group *g,
                         size_t *n)
{
    size_t span = v->hi - v->lo;
    struct near *c = malloc((span ? span : 1) * sizeof(*c));
    size_t *out = malloc((span ? span : 1) * sizeof(*out)), m = 0;
    *n = 0;
    if (c == NULL || out == NULL) {
        free(c);
        free(out);
        return NULL;
    }
    uint64_t at = g->first_ns, far = UINT64_MAX / 4;
    for (size_t i = v->lo; i < v->hi; i++) {
        const struct section *s = &v->s[i];
        if (lane_of(l, s->client) < 0 || !context_in_window(&v->w, s))
            continue;
        uint64_t d = s->from_ns > at ? s->from_ns - at : at - s->from_ns;
        d = d < far ? d : far - 1;
        uint64_t rank = same_section(s, &g->stale)    ? 0
                        : groups_pairs_with(gs, g, s) ? 1 + d
                                                      : far + d;
        c[m++] = (struct near){i, rank};
    }
    if (m > MAX_BARS)
        qsort(c, m, sizeof(*c), by_rank);
    for (size_t k = 0; k < m && k < MAX_BARS; k++)
        out[(*n)++] = c[k].i;
    free(c);
    return out;
}

/* The key's sections: r's, or, when it kept none, the stale holder and
 * the later side of its listed pairs (own, room for r's list and one). */
static struct view view_of(const struct run_result *r, const struct violation_group *g,
                           struct section *own)
{
    struct view v = {.s = r->sections, .n = r->n_sections};
    if (r->sections == NULL) {
        own[v.n++] = g->stale;
        for (size_t i = 0; i < r->check.n_list; i++)
            if (report_pair_in_group(r, &r->check.list[i], g))
                own[v.n++] = r->check.list[i].sb;
        v.s = own;
    }
    v.w = context_window_of_group(g, r->t0_mono_ns);
    for (v.lo = 0; v.lo < v.n && v.s[v.lo].key != g->stale.key; v.lo++)
        ;
    for (v.hi = v.lo; v.hi < v.n && v.s[v.hi].key == g->stale.key; v.hi++)
        ;
    return v;
}

/* The stale holder's lease running out: a dashed line across the lanes. */
static void lease_end(struct svg_chart *c, const struct run_result *r,
                      const struct violation_group *g, double lanes_h)
{
    uint64_t end = report_group_lease_end_ns(r, g);
    double at = report_rel_s(r, end);
    if (end != 0 && at > c->x.hi) { /* a lost grant with a long lease: said at the edge */
        fprintf(c->f,
                "<text class=\"lease-beyond\" x=\"%.1f\" y=\"%.1f\" font-size=\"10\" "
                "fill=\"#b71c1c\" text-anchor=\"end\">its lease ran to %.3f s &#8594;</text>\n",
                c->width - c->right, c->top - 6, at);
        return;
    }
    if (end == 0 || at < c->x.lo)
        return;
    double x = svg_x(c, at);
    fprintf(c->f,
            "<g class=\"lease-end\" data-at-s=\"%.6f\"><title>client %" PRIu32
            "'s lease (ttl %" PRIu32 " ms) ran out at %.3f s</title>"
            "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#b71c1c\" "
            "stroke-width=\"2\" stroke-dasharray=\"5,3\"/>"
            "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" fill=\"#b71c1c\">lease ran out "
            "%.3f s</text></g>\n",
            at, g->stale.client, r->hist.ttl_ms, at, x, c->top - 14, x, c->top + lanes_h + 4, x + 4,
            c->top - 6, at);
}

/* Pair s of the group: where it and the stale holder were both inside,
 * on s's lane. */
static void pair_mark(struct svg_chart *c, const struct run_result *r,
                      const struct violation_group *g, const struct section *s, double y,
                      uint64_t w0, uint64_t w1)
{
    const struct section *a = &g->stale;
    uint64_t o0 = s->from_ns > a->from_ns ? s->from_ns : a->from_ns;
    uint64_t o1 = s->to_ns < a->to_ns ? s->to_ns : a->to_ns;
    o1 = o1 > o0 ? o1 : o0;
    double x0 = svg_x(c, report_rel_s(r, o0 < w0 ? w0 : o0));
    double x1 = svg_x(c, report_rel_s(r, o1 > w1 ? w1 : o1));
    fprintf(c->f,
            "<g class=\"pair\" data-client=\"%" PRIu32 "\" data-from-s=\"%.6f\"><title>client "
            "%" PRIu32 " inside %.3f .. %.3f s while client %" PRIu32 " still was</title>"
            "<rect class=\"overlap\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"16\"/></g>\n",
            s->client, report_rel_s(r, s->from_ns), s->client, report_rel_s(r, o0),
            report_rel_s(r, o1), a->client, x0, y - 2, x1 - x0 > 2 ? x1 - x0 : 2);
}

void html_group_timeline(FILE *f, const struct run_result *r, const struct violation_group *g,
                         size_t nth)
{
    const struct violation_groups *gs = &r->check.groups;
    struct section *own = r->sections ? NULL : malloc((r->check.n_list + 1) * sizeof(*own));
    if (r->sections == NULL && own == NULL)
        return;
    struct view v = view_of(r, g, own);
    uint64_t w0 = v.w.w0_ns, w1 = v.w.w1_ns;
    struct lanes l = {.n = 0};
    add_lane(&l, g->stale.client);
    /* the holders that overlapped it before those that only held nearby */
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = v.lo; i < v.hi; i++)
            if (context_in_window(&v.w, &v.s[i]) &&
                (pass == 1 || groups_pairs_with(gs, g, &v.s[i])))
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
    const char *key = r->hist.keys[g->stale.key];
    char label[320], cause[600];
    uint64_t end = report_group_lease_end_ns(r, g);
    snprintf(label, sizeof(label),
             "group %zu: client %" PRIu32 " held %s %s: %" PRIu64 " violation%s", nth + 1,
             g->stale.client, key,
             end == 0             ? "while others entered"
             : end <= g->first_ns ? "past its lease"
                                  : "after its grant was lost",
             g->pairs, g->pairs == 1 ? "" : "s");
    fprintf(f, "<div class=\"lock-timeline\" data-key=\"");
    svg_text(f, key);
    fprintf(f,
            "\" data-stale=\"%" PRIu32 "\" data-stale-from-s=\"%.6f\" data-pairs=\"%" PRIu64
            "\" data-first-s=\"%.6f\" data-last-s=\"%.6f\"",
            g->stale.client, report_rel_s(r, g->stale.from_ns), g->pairs,
            report_rel_s(r, g->first_ns), report_rel_s(r, g->last_ns));
    if (end)
        fprintf(f, " data-lease-end-s=\"%.6f\"", report_rel_s(r, end));
    fprintf(f, ">\n<h3>");
    svg_text(f, label);
    fprintf(f, "</h3>\n<p class=\"note\">");
    svg_text(f, report_group_cause(r, g, cause, sizeof(cause)));
    fprintf(f, ".</p>\n");
    svg_begin(&c, "chart timeline", label);
    fprintf(f, "<rect class=\"frame\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>\n",
            c.left, c.top, c.width - c.left - c.right, lane_h * (double)l.n);
    svg_x_axis(&c, "seconds since the start", html_time_tick);
    timeline_faults(&c, r, &l, w0, w1, lane_h);
    for (size_t i = 0; i < l.n; i++)
        fprintf(f,
                "<text class=\"lane\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">client %" PRIu32
                "</text>\n",
                c.left - 6, c.top + lane_h * (double)i + 15, l.client[i]);
    /* the stretch the stale holder was overlapped, on its own lane */
    double s0 = svg_x(&c, report_rel_s(r, g->first_ns < w0 ? w0 : g->first_ns));
    double s1 = svg_x(&c, report_rel_s(r, g->last_ns > w1 ? w1 : g->last_ns));
    fprintf(f,
            "<g class=\"violation\"><title>%" PRIu64 " violation%s: others inside %s while client "
            "%" PRIu32 " still was, %.3f .. %.3f s</title>",
            g->pairs, g->pairs == 1 ? "" : "s", key, g->stale.client, report_rel_s(r, g->first_ns),
            report_rel_s(r, g->last_ns));
    fprintf(f,
            "<rect class=\"group-span\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
            "style=\"fill:#d32f2f;fill-opacity:.07\"/></g>\n",
            s0, c.top + 2, s1 - s0 > 2 ? s1 - s0 : 2, lane_h * (double)l.n - 4);
    size_t n_bars = 0, *bars = pick_bars(&v, &l, gs, g, &n_bars), marked = 0;
    for (size_t k = 0; k < n_bars; k++) {
        const struct section *s = &v.s[bars[k]];
        double y = c.top + lane_h * lane_of(&l, s->client) + 8;
        section_bar(&c, r, s, y, w0, w1);
        if (groups_pairs_with(gs, g, s)) {
            pair_mark(&c, r, g, s, y, w0, w1);
            marked++;
        }
    }
    free(bars);
    lease_end(&c, r, g, lane_h * (double)l.n);
    svg_end(&c);
    fprintf(f, "<p class=\"note\" data-pairs-drawn=\"%zu\">", marked);
    if (marked < g->pairs)
        fprintf(f,
                "%zu of its %" PRIu64 " violations drawn (the window, lanes and bars hold no "
                "more).",
                marked, g->pairs);
    else
        fprintf(f, "Every one of its %" PRIu64 " violation%s marked.", g->pairs,
                g->pairs == 1 ? "" : "s");
    if (l.n_dropped)
        fprintf(f, " %zu more client%s held this key in the window; not drawn.", l.n_dropped,
                l.n_dropped == 1 ? "" : "s");
    fprintf(f, "</p>\n</div>\n");
    free(own);
}
