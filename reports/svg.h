/* svg.h - the few chart parts the HTML reports draw, as inline SVG.
 *
 * A chart is a plot area inside margins, with an x and a y axis each
 * linear or log10; callers give data values and the chart maps them. Every
 * mark can carry a <title> (the hover text: no script needed). Output is
 * plain text into a FILE, so a page is written in one pass.
 */
#ifndef LOCKLAB_SVG_H
#define LOCKLAB_SVG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct svg_axis {
    double lo, hi;
    bool log; /* log10; lo must be > 0 */
};
#define SVG_ZERO_ROW 14.0 /* px: svg_chart's y_zero */

struct svg_chart {
    FILE *f;
    double width, height;            /* the whole picture, px */
    double left, right, top, bottom; /* margins around the plot area */
    struct svg_axis x, y;
    bool band_labels_above; /* band labels in the top margin (a short chart) */
    bool x_integer;         /* x ticks at whole numbers only (client numbers) */
    /* px kept under the plot area, above the x ticks' labels (inside
     * bottom), for marks that must not cover the data */
    double under;
    /* y on a log axis with a row for 0 at its foot, SVG_ZERO_ROW px under
     * lo's decade (a log axis has no 0: without the row, a 0 would be
     * drawn as lo), with a tick "0" and a break mark between them */
    bool y_zero;
};

/* The colour of series i of a chart, and of client c (never red: red marks
 * what went wrong). */
const char *svg_series_colour(size_t i);
const char *svg_client_colour(unsigned client);

/* Text with <, >, & and quotes escaped, for HTML and SVG alike. */
void svg_text(FILE *f, const char *s);

/* <svg ...> with a role and a label for screen readers; class names it. */
void svg_begin(struct svg_chart *c, const char *cls, const char *label);
void svg_end(struct svg_chart *c);
double svg_x(const struct svg_chart *c, double v);
double svg_y(const struct svg_chart *c, double v);
/* A log axis from the decade at or below lo to the one at or above hi, at
 * least one decade wide; 0.1..1 when hi is not > 0 (nothing to show). */
struct svg_axis svg_log_axis(double lo, double hi);
/* The frame of every chart over a run's time, report.html's and
 * compare.html's alike: x from 0 to end_s seconds, y left to the caller. */
struct svg_chart svg_time_chart(FILE *f, double end_s, double height);

/* Grid lines and tick labels. Linear axes get 1-2-5 steps; log axes
 * decades. fmt turns a tick's value into its label (NULL: "%g"). */
typedef void (*svg_label_fn)(char *buf, size_t len, double v);
void svg_axes(struct svg_chart *c, const char *x_title, const char *y_title, svg_label_fn x_label,
              svg_label_fn y_label);
/* The frame and the x axis only (a timeline's rows are labelled apart). */
void svg_x_axis(struct svg_chart *c, const char *title, svg_label_fn label);
/* The x axis of a latency spectrum: 0%, 90%, 99% ... at log10(1/(1-p)). */
void svg_spectrum_x_axis(struct svg_chart *c, int nines);

/* A shaded band over the whole plot height from x0 to x1 (a fault's
 * window), its label at the top and its hover text. */
void svg_band(struct svg_chart *c, double x0, double x1, const char *kind, const char *label,
              const char *hover, int row);
/* A line through the points; NaN in ys breaks it. */
void svg_line(struct svg_chart *c, const double *xs, const double *ys, size_t n, const char *colour,
              const char *name, bool dashed);
/* The legend: one swatch and name per series, top right. */
void svg_legend(struct svg_chart *c, const char *const *names, const char *const *colours,
                size_t n);
/* Invisible columns over [x0, x1) that give hover text to a time span. */
void svg_hover_column(struct svg_chart *c, double x0, double x1, const char *hover);

#endif
