/* html_page.c - the frame, stylesheet and spectrum every HTML page shares. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "reports/hgrm.h"
#include "reports/html.h"
#include "reports/report.h"
#include "sim/record/histogram.h"

/* Print-friendly: light background, charts kept whole on a page. */
static const char style[] =
    "body{font:14px/1.4 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;color:#222;"
    "margin:24px auto;max-width:1100px;padding:0 16px;background:#fff}"
    "h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid "
    "#ddd;padding-bottom:3px}h3{font-size:15px;margin:16px 0 4px}"
    ".verdict{display:inline-block;padding:2px 10px;border-radius:4px;font-weight:600;color:#fff;"
    "margin-left:8px;font-size:15px;vertical-align:2px}"
    ".PASS{background:#2a7d2a}.FAIL{background:#c62828}.INCOMPLETE{background:#b26a00}"
    ".NOTRUN{background:#777}"
    ".SAFE{background:#2a7d2a}.UNSAFE{background:#c62828}.CAUTION{background:#b26a00}"
    "td.unsafe{color:#c62828;font-weight:700}"
    "td .verdict{font-size:13px;margin:1px 4px 1px 0}td.verdicts{min-width:210px}"
    /* compare's 14 columns in the page's width */
    "table.compare{font-size:13px}table.compare td,table.compare th{padding:3px 5px}"
    "table.compare td.verdicts{min-width:172px}table.compare .verdict{white-space:nowrap}"
    ".meta{color:#555;margin:2px 0}.why{color:#c62828;font-weight:600}"
    ".cards{display:flex;flex-wrap:wrap;gap:10px;margin:12px 0}"
    ".card{border:1px solid #ddd;border-radius:6px;padding:6px 12px;min-width:120px}"
    ".card b{display:block;font-size:19px}.card span{color:#666;font-size:12px}"
    ".card.bad b{color:#c62828}"
    "table{border-collapse:collapse;margin:6px 0 12px;font-variant-numeric:tabular-nums}"
    "th,td{border:1px solid #ddd;padding:3px 8px;text-align:right;vertical-align:top}"
    "th{background:#f4f4f4}td:not(.l){white-space:nowrap}td.l,th.l{text-align:left}tr.bad "
    "td{background:#fdecea}"
    "pre{background:#f7f7f7;border:1px solid #ddd;padding:8px;overflow:auto;font-size:12px}"
    "svg{display:block;margin:4px 0 10px;max-width:100%;height:auto;font-size:11px;"
    "page-break-inside:avoid;break-inside:avoid}"
    "svg .frame{fill:none;stroke:#999}svg .grid{stroke:#eee}svg .tick{fill:#555}"
    "svg .axis{fill:#333;font-size:12px}svg .legend{fill:#333;font-size:12px}"
    "svg .series path{stroke-width:1.8}svg .hover{fill:transparent}"
    "svg .hover:hover{fill:rgba(0,0,0,.06)}"
    "svg .band rect{fill:#9e9e9e;fill-opacity:.22}svg .band text{fill:#444;font-size:11px}"
    "svg .band.network rect{fill:#5c8fd6}svg .band.client rect{fill:#f0a030;fill-opacity:.3}"
    "svg .band.clock rect{fill:#9c5bd0;fill-opacity:.5}"
    "svg .band.host rect{fill:#c0392b;fill-opacity:.18}"
    "svg .overlap{fill:#d32f2f;fill-opacity:.55;stroke:#b71c1c}"
    "svg .section{stroke:#333;stroke-width:.5}svg .lane{fill:#333;font-size:11px}"
    "svg .bar{fill:#4c78a8}"
    "p.note{color:#555;font-size:13px;max-width:900px}"
    /* a long description or key wraps inside the page, never off it */
    "body{overflow-wrap:break-word}td.l,.meta,p.note,code{overflow-wrap:anywhere}"
    "pre{white-space:pre-wrap;overflow-wrap:anywhere}"
    /* names a reader scans for (invariants, matrix rows): wrapped between words */
    "td.l.words{overflow-wrap:normal}"
    "svg .partial rect{fill:#888;fill-opacity:.13;stroke:#888;stroke-dasharray:3 3}"
    "svg .partial text{fill:#555;font-size:10px}"
    "svg .vspan .vshade{fill:#d32f2f;fill-opacity:.10}svg .vspan .vbar{fill:#d32f2f}"
    "svg .vspan text{fill:#b71c1c;font-size:11px;font-weight:600}"
    "svg .lease line{stroke:#b71c1c;stroke-width:1.5;stroke-dasharray:2 2}"
    "svg .lease text{fill:#b71c1c;font-size:11px}"
    "svg .lease text,svg .vspan text,svg .partial text{paint-order:stroke;stroke:#fff;"
    "stroke-width:3px;stroke-linejoin:round}"
    "footer{margin-top:30px;color:#777;font-size:12px}"
    ".runmeta{font-size:12px}"
    "@media print{body{margin:0;max-width:none}.card{break-inside:avoid}"
    "svg .hover:hover{fill:transparent}}";

void html_begin(FILE *f, const char *title)
{
    html_begin_css(f, title, "");
}

void html_begin_css(FILE *f, const char *title, const char *css)
{
    fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
               "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>");
    svg_text(f, title);
    fprintf(f, "</title>\n<style>%s%s</style>\n</head><body>\n", style, css);
}

void html_end(FILE *f)
{
    fprintf(f,
            "<footer>Written by locklab %s. One self-contained file: no script, nothing "
            "fetched; hover a chart for its figures.</footer>\n</body></html>\n",
            LOCKLAB_VERSION);
}

struct curve_fill {
    struct html_curve *c;
    const struct histogram *h;
};

static void add_tick(void *arg, int32_t index, double level, int64_t cumulative)
{
    struct curve_fill *cf = arg;
    struct html_curve *c = cf->c;
    double x = level >= 100.0 ? INFINITY : 1.0 / (1.0 - level / 100.0);
    (void)cumulative;
    if (c->n == HTML_SPECTRUM_MAX || x > pow(10, HTML_SPECTRUM_NINES))
        return;
    c->x[c->n] = x;
    c->y[c->n] =
        (double)histogram_highest_equivalent(cf->h, histogram_value_at_index(cf->h, index)) /
        1000.0;
    c->n++;
}

void html_curve_of(struct html_curve *c, const struct histogram *h)
{
    struct curve_fill cf = {c, h};
    c->n = 0;
    c->dashed = false;
    hgrm_ticks(h, 5, add_tick, &cf);
}

void html_ms_label(char *buf, size_t len, double ms)
{
    if (ms >= 1000)
        snprintf(buf, len, "%.3f s", ms / 1000);
    else
        snprintf(buf, len, "%.3f ms", ms);
}

void html_ms_tick(char *buf, size_t len, double ms)
{
    if (ms >= 1000)
        snprintf(buf, len, "%g s", ms / 1000);
    else
        snprintf(buf, len, "%g ms", ms);
}

/* The y range of the curves, widened to whole decades. */
static void curve_range(const struct html_curve *const *curves, size_t n, double *lo, double *hi)
{
    *lo = INFINITY;
    *hi = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < curves[i]->n; k++) {
            double y = curves[i]->y[k] > 0.001 ? curves[i]->y[k] : 0.001;
            *lo = y < *lo ? y : *lo;
            *hi = y > *hi ? y : *hi;
        }
    if (!(*hi > 0)) {
        *lo = 0.1;
        *hi = 1;
    }
    *lo = pow(10, floor(log10(*lo)));
    *hi = pow(10, ceil(log10(*hi)));
    if (*hi <= *lo)
        *hi = *lo * 10;
}

void html_spectrum_chart(FILE *f, const struct html_curve *const *curves, const char *const *names,
                         const char *const *given, size_t n, const char *label)
{
    struct svg_chart c = {.f = f,
                          .width = 1000,
                          .height = 320,
                          .left = 70,
                          .right = 40, /* room for the last tick's label */
                          .top = 24,
                          .bottom = 40,
                          .x = {1, pow(10, HTML_SPECTRUM_NINES), true}};
    c.y.log = true;
    curve_range(curves, n, &c.y.lo, &c.y.hi);
    /* the axis ends just past the data (a third of a nine), not at
     * 99.999 % when the highest tick is 99.93 % */
    double last = 10;
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < curves[i]->n; k++)
            last = curves[i]->x[k] > last ? curves[i]->x[k] : last;
    if (last * 2 < c.x.hi)
        c.x.hi = last * 2;
    int nines = (int)floor(log10(c.x.hi) + 1e-9);
    svg_begin(&c, "chart spectrum", label);
    svg_axes(&c, "percentile (1/(1-p) scale)", "latency", NULL, html_ms_tick);
    svg_spectrum_x_axis(&c, nines);
    const char *colours[16];
    for (size_t i = 0; i < n && i < 16; i++) {
        colours[i] = given ? given[i] : svg_series_colour(i);
        char name[96];
        snprintf(name, sizeof(name), "%s: %zu points", names[i], curves[i]->n);
        svg_line(&c, curves[i]->x, curves[i]->y, curves[i]->n, colours[i], name, curves[i]->dashed);
        /* a point per tick, with its figures on hover */
        for (size_t k = 0; k < curves[i]->n; k++) {
            fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.2\" fill=\"%s\"><title>",
                    svg_x(&c, curves[i]->x[k]), svg_y(&c, curves[i]->y[k]), colours[i]);
            char v[32];
            html_ms_label(v, sizeof(v), curves[i]->y[k]);
            svg_text(f, names[i]);
            fprintf(f, ": %.4f%% at or below %s</title></circle>\n",
                    100.0 * (1.0 - 1.0 / curves[i]->x[k]), v);
        }
    }
    svg_legend(&c, names, colours, n < 16 ? n : 16);
    svg_end(&c);
}

void html_algorithm_swatch(FILE *f, const char *name)
{
    const char *colour = report_algorithm_colour(name);
    fprintf(f,
            "<span class=\"swatch\" data-colour=\"%s\" style=\"display:inline-block;width:10px;"
            "height:10px;margin-left:6px;background:%s\"></span>",
            colour, colour);
}

void html_algorithm_name(FILE *f, const char *name)
{
    svg_text(f, name);
    html_algorithm_swatch(f, name);
}

void html_safety_badge(FILE *f, const struct report_safety *s)
{
    char text[160];
    fprintf(f, "<span class=\"verdict %s\" data-safety=\"%s\" data-violations=\"%" PRIu64 "\">",
            report_safety_class(s), s->safe ? "safe" : "unsafe", s->violations);
    svg_text(f, report_safety_text(s, text, sizeof(text)));
    fprintf(f, "</span>");
}

void html_safety_sum_badge(FILE *f, const struct report_safety_sum *sum)
{
    char word[32];
    fprintf(f,
            "<span class=\"verdict %s\" data-safety=\"%s\" data-violations=\"%" PRIu64
            "\" data-runs=\"%zu\" data-unsafe-runs=\"%zu\">",
            report_safety_sum_class(sum), sum->unsafe ? "unsafe" : "safe", sum->violations,
            sum->runs, sum->unsafe);
    svg_text(f, report_safety_sum_word(sum, word, sizeof(word)));
    fprintf(f, "</span>");
}

void html_end_hover(FILE *f, const char *hover)
{
    fprintf(f,
            "<footer>Written by locklab %s. One self-contained file: no script, nothing "
            "fetched; %s.</footer>\n</body></html>\n",
            LOCKLAB_VERSION, hover);
}

/* A data-* attribute holding s, escaped. */
static void meta_attr(FILE *f, const char *name, const char *s)
{
    fprintf(f, " data-%s=\"", name);
    svg_text(f, s);
    fputc('"', f);
}

void html_meta_line(FILE *f, const struct run_meta *m, uint64_t started_wall_ns,
                    const struct server_version *v, size_t n, bool proxy)
{
    if (m == NULL)
        return;
    struct report_meta_shown sh;
    report_meta_shown(m, started_wall_ns, v, n, proxy, &sh);
    const char *when = sh.when;
    const struct server_version *all = sh.all;
    size_t k = sh.n;
    fprintf(f, "<p class=\"meta runmeta\" data-meta=\"run\"");
    meta_attr(f, "host", m->host);
    fprintf(f, " data-cores-online=\"%ld\" data-cores-usable=\"%ld\"", m->cores_online,
            m->cores_usable);
    meta_attr(f, "kernel", m->kernel);
    meta_attr(f, "locklab-version", m->version);
    meta_attr(f, "commit", m->commit);
    meta_attr(f, "started-at", when);
    meta_attr(f, "command-line", m->command_line);
    fprintf(f, ">Ran on <b>");
    svg_text(f, m->host);
    fprintf(f, "</b> (%ld cores, %ld usable; ", m->cores_online, m->cores_usable);
    svg_text(f, m->kernel);
    fprintf(f, ") &middot; locklab ");
    svg_text(f, m->version);
    fprintf(f, " (");
    svg_text(f, m->commit);
    fprintf(f, ") &middot; %.10s %.8s UTC &middot; servers:", when, when + 11);
    /* one per kind and version, with how many and where: five Redis
     * masters of one version are one "redis 7.0.15 x5" */
    size_t shown = 0;
    for (size_t i = 0; i < k; i++) {
        size_t same = 0, first = i;
        for (size_t j = 0; j < k; j++)
            if (strcmp(all[j].kind, all[i].kind) == 0 &&
                strcmp(all[j].version, all[i].version) == 0 && same++ == 0)
                first = j;
        if (first != i)
            continue;
        fprintf(f, "%s <span class=\"server\"", shown++ ? "," : "");
        meta_attr(f, "server-kind", all[i].kind);
        meta_attr(f, "server-version", all[i].version);
        fprintf(f, " data-server-count=\"%zu\" data-server-addresses=\"", same);
        for (size_t j = 0, n_addr = 0; j < k; j++)
            if (strcmp(all[j].kind, all[i].kind) == 0 &&
                strcmp(all[j].version, all[i].version) == 0 && all[j].address[0]) {
                fprintf(f, "%s", n_addr++ ? " " : "");
                svg_text(f, all[j].address);
            }
        fprintf(f, "\" title=\"");
        svg_text(f, all[i].version[0] ? all[i].answer : all[i].why);
        fprintf(f, "\">");
        /* the proxy is locklab's own: its version is locklab's */
        svg_text(f, strcmp(all[i].kind, "proxy") == 0 ? "locklab's proxy" : all[i].kind);
        fputc(' ', f);
        svg_text(f, all[i].version[0] ? all[i].version : "version unknown");
        if (same > 1)
            fprintf(f, " &times;%zu", same);
        fprintf(f, "</span>");
    }
    fprintf(f, "%s<br><code data-figure=\"command-line\">", k ? "" : " none");
    svg_text(f, m->command_line);
    fprintf(f, "</code></p>\n");
}
