/* svg.c - chart parts for the HTML reports (svg.h). */
#include "reports/svg.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "algorithms/lock.h"
#include "reports/report.h"

/* Tableau 10 without its red. */
static const char *const series[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b",
                                     "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
#define N_SERIES (sizeof(series) / sizeof(series[0]))

const char *svg_series_colour(size_t i)
{
    return series[i % N_SERIES];
}

const char *svg_client_colour(unsigned client)
{
    return series[client % N_SERIES];
}

/* One colour per lock of the registry, by its index there (Tableau 20
 * without its reds): the locks compared most often come first and get
 * the strongest colours, a lock's pale twin the pale one of its family
 * (redis-naive beside redis). */
static const char *const by_lock[] = {
    "#1f77b4", /* redis */
    "#aec7e8", /* redis-naive */
    "#ff7f0e", /* redlock */
    "#2ca02c", /* zookeeper */
    "#9467bd", /* etcd */
    "#17becf", /* postgres-advisory */
    "#8c564b", /* postgres-row */
    "#bcbd22", /* postgres-optimistic */
    "#e377c2", /* redisson */
    "#7f7f7f", /* redisson-fenced */
    "#ffbb78", /* redisson-fair */
    "#98df8a", /* redisson-rw */
    "#c5b0d5", /* redisson-semaphore */
    "#9edae5", /* redisson-multi */
    "#c49c94", /* redisson-rw-naive */
    "#dbdb8d", /* redisson-semaphore-naive */
    "#393b79", /* redis-cluster: redis's blue, darker (Tableau's 20b) */
    "#7b4173", /* redisson-cluster: redisson's pink, darker (Tableau's 20b) */
    "#637939", /* redisson-latch: Tableau 20b's olive */
    "#b5cf6b", /* redisson-latch-naive: its pale twin */
    "#843c39", /* mysql-named: Tableau 20b's red-brown, a family of its own */
    "#ad494a", /* mysql-row: 20b's brick */
    "#e7969c", /* mysql-optimistic: the family's pale one, as postgres-optimistic's */
};
#define N_BY_LOCK (sizeof(by_lock) / sizeof(by_lock[0]))

const char *report_algorithm_colour(const char *name)
{
    for (size_t i = 0; i < lock_count(); i++)
        if (strcmp(lock_at(i)->name, name) == 0)
            return by_lock[i % N_BY_LOCK];
    return "#333333"; /* no lock of the registry: no lock's colour */
}

void svg_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '<':
            fputs("&lt;", f);
            break;
        case '>':
            fputs("&gt;", f);
            break;
        case '&':
            fputs("&amp;", f);
            break;
        case '"':
            fputs("&quot;", f);
            break;
        default:
            fputc(*s, f);
        }
    }
}

static double axis_pos(const struct svg_axis *a, double v)
{
    if (a->log) {
        double lo = log10(a->lo), hi = log10(a->hi);
        double x = v > 0 ? log10(v) : lo;
        return hi > lo ? (x - lo) / (hi - lo) : 0.0;
    }
    return a->hi > a->lo ? (v - a->lo) / (a->hi - a->lo) : 0.0;
}

static double clamp01(double v)
{
    return v < 0 ? 0 : v > 1 ? 1 : v;
}

/* How far along an axis of span px v lies, from its start. */
static double along(const struct svg_axis *a, bool zero, double v, double span)
{
    if (!a->log || !zero)
        return clamp01(axis_pos(a, v)) * span;
    if (!(v > 0))
        return 0;
    return SVG_ZERO_ROW + clamp01(axis_pos(a, v)) * (span - SVG_ZERO_ROW);
}

double svg_x(const struct svg_chart *c, double v)
{
    return c->left + along(&c->x, false, v, c->width - c->left - c->right);
}

double svg_y(const struct svg_chart *c, double v)
{
    return c->height - c->bottom - along(&c->y, c->y_zero, v, c->height - c->top - c->bottom);
}

struct svg_axis svg_log_axis(double lo, double hi)
{
    if (!(hi > 0)) {
        lo = 0.1;
        hi = 1;
    }
    struct svg_axis a = {pow(10, floor(log10(lo))), pow(10, ceil(log10(hi))), true};
    if (a.hi <= a.lo)
        a.hi = a.lo * 10;
    return a;
}

struct svg_chart svg_time_chart(FILE *f, double end_s, double height)
{
    return (struct svg_chart){.f = f,
                              .width = 1000,
                              .height = height,
                              .left = 70,
                              .right = 20,
                              .top = 24,
                              .bottom = 40,
                              .x = {0, end_s, false}};
}

void svg_begin(struct svg_chart *c, const char *cls, const char *label)
{
    fprintf(c->f,
            "<svg class=\"%s\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %.0f %.0f\" "
            "width=\"%.0f\" height=\"%.0f\" role=\"img\" aria-label=\"",
            cls, c->width, c->height, c->width, c->height);
    svg_text(c->f, label);
    fprintf(c->f, "\">\n");
}

void svg_end(struct svg_chart *c)
{
    fprintf(c->f, "</svg>\n");
}

static void default_label(char *buf, size_t len, double v)
{
    snprintf(buf, len, "%g", v);
}

/* 1-2-5 steps giving about five ticks. */
static double nice_step(double span)
{
    double raw = span / 5, mag = pow(10, floor(log10(raw)));
    double m = raw / mag;
    return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * mag;
}

static size_t ticks(const struct svg_axis *a, bool integer, double *out, size_t cap)
{
    size_t n = 0;
    if (!(a->hi > a->lo))
        return 0;
    if (a->log) {
        for (double d = pow(10, ceil(log10(a->lo))); d <= a->hi * 1.0001 && n < cap; d *= 10)
            out[n++] = d;
        return n;
    }
    double step = nice_step(a->hi - a->lo);
    if (integer)
        step = step < 1 ? 1 : round(step);
    for (double v = ceil(a->lo / step) * step; v <= a->hi + step * 1e-9 && n < cap; v += step)
        out[n++] = fabs(v) < step * 1e-9 ? 0 : v;
    return n;
}

static void x_tick(struct svg_chart *c, double v, const char *label)
{
    double x = svg_x(c, v);
    fprintf(c->f,
            "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
            "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">",
            x, c->top, x, c->height - c->bottom, x, c->height - c->bottom + c->under + 14);
    svg_text(c->f, label);
    fprintf(c->f, "</text>\n");
}

static void y_tick(struct svg_chart *c, double v, const char *label)
{
    double y = svg_y(c, v);
    fprintf(c->f,
            "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
            "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">",
            c->left, y, c->width - c->right, y, c->left - 5, y + 4);
    svg_text(c->f, label);
    fprintf(c->f, "</text>\n");
}

static void frame(struct svg_chart *c, const char *x_title, const char *y_title)
{
    double bottom = c->height - c->bottom;
    fprintf(c->f, "<rect class=\"frame\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>\n",
            c->left, c->top, c->width - c->left - c->right, bottom - c->top);
    if (x_title) {
        fprintf(c->f, "<text class=\"axis\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">",
                (c->left + c->width - c->right) / 2, c->height - 6);
        svg_text(c->f, x_title);
        fprintf(c->f, "</text>\n");
    }
    if (y_title) {
        double y = (c->top + bottom) / 2;
        fprintf(c->f,
                "<text class=\"axis\" x=\"14\" y=\"%.1f\" text-anchor=\"middle\" "
                "transform=\"rotate(-90 14 %.1f)\">",
                y, y);
        svg_text(c->f, y_title);
        fprintf(c->f, "</text>\n");
    }
}

void svg_x_axis(struct svg_chart *c, const char *title, svg_label_fn label)
{
    double t[32];
    char buf[32];
    frame(c, title, NULL);
    size_t n = ticks(&c->x, c->x_integer, t, 32);
    for (size_t i = 0; i < n; i++) {
        (label ? label : default_label)(buf, sizeof(buf), t[i]);
        x_tick(c, t[i], buf);
    }
}

void svg_axes(struct svg_chart *c, const char *x_title, const char *y_title, svg_label_fn x_label,
              svg_label_fn y_label)
{
    double t[32];
    char buf[32];
    size_t n;
    frame(c, x_title, y_title);
    if (x_label != NULL || !c->x.log) {
        n = ticks(&c->x, c->x_integer, t, 32);
        for (size_t i = 0; i < n; i++) {
            (x_label ? x_label : default_label)(buf, sizeof(buf), t[i]);
            x_tick(c, t[i], buf);
        }
    }
    n = ticks(&c->y, false, t, 32);
    for (size_t i = 0; i < n; i++) {
        (y_label ? y_label : default_label)(buf, sizeof(buf), t[i]);
        y_tick(c, t[i], buf);
    }
    if (c->y.log && c->y_zero) {
        (y_label ? y_label : default_label)(buf, sizeof(buf), 0);
        y_tick(c, 0, buf);
        /* the break between 0 and the first decade: the axis skips the rest */
        double y = c->height - c->bottom - SVG_ZERO_ROW / 2;
        fprintf(c->f,
                "<path class=\"axis-break\" fill=\"none\" stroke=\"#555\" d=\"M%.1f %.1fl8 -3"
                "M%.1f %.1fl8 -3\"/>\n",
                c->left - 4, y + 1.5, c->left - 4, y + 4.5);
    }
}

void svg_spectrum_x_axis(struct svg_chart *c, int nines)
{
    static const char *const names[] = {"0%",     "90%",     "99%",     "99.9%",
                                        "99.99%", "99.999%", "99.9999%"};
    for (int i = 0; i <= nines && i < 7; i++)
        x_tick(c, pow(10, i), names[i]);
}

void svg_band(struct svg_chart *c, double x0, double x1, const char *kind, const char *label,
              const char *hover, int row)
{
    double a = svg_x(c, x0), b = svg_x(c, x1);
    if (b - a < 2) /* a moment (a clock jump): still visible */
        b = a + 2;
    /* a label that would run past the right edge ends at the band's end */
    double room = c->width - c->right - a;
    bool end = room < 6.5 * (double)strlen(label) + 4;
    fprintf(c->f, "<g class=\"band %s\"><title>", kind);
    svg_text(c->f, hover);
    fprintf(c->f,
            "</title><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>"
            "<text x=\"%.1f\" y=\"%.1f\"%s>",
            a, c->top, b - a, c->height - c->top - c->bottom, end ? b - 2 : a + 2,
            c->band_labels_above ? c->top - 4 - 11 * row : c->top + 11 + 11 * row,
            end ? " text-anchor=\"end\"" : "");
    svg_text(c->f, label);
    fprintf(c->f, "</text></g>\n");
}

void svg_line(struct svg_chart *c, const double *xs, const double *ys, size_t n, const char *colour,
              const char *name, bool dashed)
{
    fprintf(c->f, "<g class=\"series\"><title>");
    svg_text(c->f, name);
    fprintf(c->f, "</title><path fill=\"none\" stroke-linecap=\"round\" stroke=\"%s\"%s d=\"",
            colour, dashed ? " stroke-dasharray=\"4 3\"" : "");
    bool pen = false;
    for (size_t i = 0; i < n; i++) {
        if (isnan(ys[i])) {
            pen = false;
            continue;
        }
        fprintf(c->f, "%c%.1f %.1f", pen ? 'L' : 'M', svg_x(c, xs[i]), svg_y(c, ys[i]));
        pen = true;
    }
    fprintf(c->f, "\"/>");
    /* a point with no neighbour draws no line: a dot instead */
    for (size_t i = 0; i < n; i++)
        if (!isnan(ys[i]) && (i == 0 || isnan(ys[i - 1])) && (i + 1 == n || isnan(ys[i + 1])))
            fprintf(c->f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" fill=\"%s\"/>",
                    svg_x(c, xs[i]), svg_y(c, ys[i]), colour);
    fprintf(c->f, "</g>\n");
}

void svg_legend(struct svg_chart *c, const char *const *names, const char *const *colours, size_t n)
{
    double x = c->left + 8, y = c->top - 8;
    for (size_t i = 0; i < n; i++) {
        fprintf(c->f,
                "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"4\" fill=\"%s\"/>"
                "<text class=\"legend\" x=\"%.1f\" y=\"%.1f\">",
                x, y - 3, colours[i], x + 16, y + 2);
        svg_text(c->f, names[i]);
        fprintf(c->f, "</text>\n");
        x += 24 + 7.0 * (double)strlen(names[i]);
    }
}

void svg_hover_column(struct svg_chart *c, double x0, double x1, const char *hover)
{
    double a = svg_x(c, x0), b = svg_x(c, x1);
    fprintf(c->f,
            "<rect class=\"hover\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"><title>", a,
            c->top, b - a, c->height - c->top - c->bottom);
    svg_text(c->f, hover);
    fprintf(c->f, "</title></rect>\n");
}
