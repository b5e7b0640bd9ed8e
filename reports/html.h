/* html.h - what the three HTML pages (report.html, compare.html,
 * matrix.html) share: one stylesheet, the page frame, the percentile
 * spectrum. Each page is a single self-contained file: inline CSS and SVG,
 * no script, no font, nothing fetched; hover text is SVG <title>. */
#ifndef LOCKLAB_HTML_H
#define LOCKLAB_HTML_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "reports/svg.h"

struct run_meta;
struct server_version;

struct histogram;
struct report_safety;
struct report_safety_sum;

/* The 1/(1-p) axis ends at 99.999%. */
#define HTML_SPECTRUM_NINES 5
#define HTML_SPECTRUM_MAX   512

/* A latency spectrum curve: x = 1/(1-p), y in ms (HdrHistogram's ticks,
 * 5 per half distance, as the .hgrm). */
struct html_curve {
    double x[HTML_SPECTRUM_MAX], y[HTML_SPECTRUM_MAX];
    size_t n;
    bool dashed; /* drawn dashed, so a curve under it still shows */
};
void html_curve_of(struct html_curve *c, const struct histogram *h);

void html_begin(FILE *f, const char *title);
/* The same with a page's own rules after the shared stylesheet. */
void html_begin_css(FILE *f, const char *title, const char *css);
/* The footer, then </body></html>. */
void html_end(FILE *f);
/* One line of where and how the page's runs ran (report_meta_json's
 * figures, as data-* attributes): the host, its cores and kernel,
 * locklab's version and commit, the start, the servers as they answered,
 * the command line. Nothing when m is NULL. */
void html_meta_line(FILE *f, const struct run_meta *m, uint64_t started_wall_ns,
                    const struct server_version *v, size_t n, bool proxy);
/* The spectrum chart of n curves, curve i in colours[i] (NULL: the
 * series colours in order). */
void html_spectrum_chart(FILE *f, const struct html_curve *const *curves, const char *const *names,
                         const char *const *colours, size_t n, const char *label);
/* A lock's name and, after it, a swatch of its colour
 * (report_algorithm_colour): the same on every page that names it.
 * data-colour on the swatch for tests. */
void html_algorithm_name(FILE *f, const char *name);
/* The swatch alone (after a name drawn otherwise: a link). */
void html_algorithm_swatch(FILE *f, const char *name);
/* The safety beside a verdict badge, as a badge of the same size: red
 * "UNSAFE: 110 violations, ..." or green "safe", never a PASS alone beside
 * violations. data-safety ("safe"/"unsafe") and data-violations for tests. */
void html_safety_badge(FILE *f, const struct report_safety *s);
/* The same for several runs: "UNSAFE", "UNSAFE 1/3" or "safe". */
void html_safety_sum_badge(FILE *f, const struct report_safety_sum *sum);
/* Milliseconds for a tick or a cell: "0.1 ms", "250 ms", "2 s". */
void html_ms_label(char *buf, size_t len, double ms);
void html_ms_tick(char *buf, size_t len, double ms);
/* A tick label in seconds: "12 s". */
void html_time_tick(char *buf, size_t len, double s);
/* html_end for a page with no chart: the footer names what hover shows
 * there instead ("hover a seed's figure for its verdict"). */
void html_end_hover(FILE *f, const char *hover);

#endif
