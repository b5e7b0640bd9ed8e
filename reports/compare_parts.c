/* compare_parts.c - a comparison over time: each algorithm's throughput and
 * acquire p99 per interval on one axis with the fault bands, what each
 * fault window cost each algorithm, and the settings each really ran with.
 * The rows keep what they need of their runs here, as each run ends. */
#include "reports/compare_parts.h"
#include "sim/scenario/scenario.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_INTERVALS 600 /* per time chart: a long run groups seconds */
#define CHAR_W        7.0 /* px per character of an 11 px label (DejaVu Sans' digits) */

/* --- what a row keeps ------------------------------------------------------ */

static void keep_series(struct compare_row *row, const struct run_result *r)
{
    size_t n = r->tl_len;
    /* by when each acquire began, as report.html draws it; by when it was
     * granted only for a result without the history's replay */
    const struct latency_second *lat = r->tl_begun ? r->tl_begun : r->tl_latency;
    if (n == 0 || r->tl_ok == NULL || lat == NULL)
        return;
    row->tl_ok = malloc(n * sizeof(*row->tl_ok));
    row->tl_latency = malloc(n * sizeof(*row->tl_latency));
    if (row->tl_ok == NULL || row->tl_latency == NULL) {
        free(row->tl_ok);
        free(row->tl_latency);
        row->tl_ok = NULL;
        row->tl_latency = NULL;
        return;
    }
    memcpy(row->tl_ok, r->tl_ok, n * sizeof(*row->tl_ok));
    memcpy(row->tl_latency, lat, n * sizeof(*row->tl_latency));
    row->latency_by_begin = r->tl_begun != NULL;
    row->tl_len = n;
}

static void keep_faults(struct compare_row *row, const struct run_result *r)
{
    row->n_faults = r->n_faults; /* both arrays hold SCENARIO_MAX_FAULTS */
    for (size_t i = 0; i < r->n_faults; i++) {
        const struct fault_record *x = &r->faults[i];
        struct compare_fault *k = &row->faults[i];
        const struct fault_availability *a = result_fault_availability(r, i);
        *k = (struct compare_fault){
            .kind = x->spec.kind, .at_ms = x->spec.at_ms, .fired = x->fired, .ended = x->ended};
        if (x->fired) {
            k->start_s = report_rel_s(r, x->start_ns);
            k->end_s = x->ended ? report_rel_s(r, x->end_ns) : r->elapsed_s;
        }
        if (x->fired && a) {
            k->has_avail = true;
            k->avail = *a;
        }
    }
}

static void keep_settings(struct compare_row *row, const struct run_result *r)
{
    size_t len = 0;
    FILE *f = open_memstream(&row->settings, &len);
    if (f) {
        report_settings(f, r->scn);
        if (fclose(f) != 0) {
            free(row->settings);
            row->settings = NULL;
        }
    }
    json_t *scn = report_scenario_json(r->scn);
    if (scn == NULL)
        return;
    row->settings_json = json_pack("{s:O, s:O, s:O, s:s?}", "lock", json_object_get(scn, "lock"),
                                   "workload", json_object_get(scn, "workload"), "defaults",
                                   json_object_get(scn, "defaults"), "text", row->settings);
    json_decref(scn);
}

void compare_row_keep(struct compare_row *row, const struct run_result *r)
{
    row->stuck_lock_ms = report_stuck_ms(r);
    if (!report_stuck(r, row->stuck_lock, sizeof(row->stuck_lock)))
        row->stuck_lock[0] = '\0';
    keep_series(row, r);
    keep_faults(row, r);
    keep_settings(row, r);
}

void compare_free(struct comparison *c)
{
    for (size_t i = 0; i < c->n; i++) {
        struct compare_row *row = &c->rows[i];
        free(row->tl_ok);
        free(row->tl_latency);
        free(row->settings);
        json_decref(row->settings_json);
        row->tl_ok = NULL;
        row->tl_latency = NULL;
        row->settings = NULL;
        row->settings_json = NULL;
    }
}

/* --- compare.json ---------------------------------------------------------- */

static json_t *fault_json(const struct compare_fault *k)
{
    json_t *o = json_pack("{s:s, s:I, s:b}", "type", fault_type_name(k->kind), "at_ms",
                          (json_int_t)k->at_ms, "fired", k->fired);
    json_object_set_new(o, "start_s", k->fired ? json_real(k->start_s) : json_null());
    json_object_set_new(o, "end_s", k->fired && k->ended ? json_real(k->end_s) : json_null());
    json_object_set_new(o, "availability",
                        k->has_avail ? report_availability_json(&k->avail) : json_null());
    return o;
}

struct fault_cost compare_fault_cost(const struct compare_row *row)
{
    struct fault_cost x = FAULT_COST_NONE;
    for (size_t i = 0; row->ran && i < row->n_faults; i++)
        if (row->faults[i].has_avail)
            report_fault_cost_add(&x, &row->faults[i].avail);
    return x;
}

/* {windows, granted, ...}: null for each figure when no window was on
 * (0 failed would claim a window that cost nothing), recovery_ms null too
 * when one never recovered. */
static json_t *fault_cost_json(const struct compare_row *row)
{
    struct fault_cost x = compare_fault_cost(row);
    bool any = x.windows > 0;
    json_t *o = json_pack("{s:I}", "windows", (json_int_t)x.windows);
    json_object_set_new(o, "granted", any ? json_integer((json_int_t)x.granted) : json_null());
    json_object_set_new(o, "granted_within",
                        any ? json_integer((json_int_t)x.granted_within) : json_null());
    json_object_set_new(o, "failed", any ? json_integer((json_int_t)x.failed) : json_null());
    json_object_set_new(o, "ambiguous", any ? json_integer((json_int_t)x.ambiguous) : json_null());
    json_object_set_new(o, "longest_no_grant_ms",
                        any ? json_real(x.longest_no_grant_ms) : json_null());
    json_object_set_new(o, "recovered", any ? json_boolean(x.recovered) : json_null());
    json_object_set_new(o, "recovery_ms",
                        any && x.recovered ? json_real(x.recovery_ms) : json_null());
    return o;
}

void compare_row_parts_json(json_t *o, const struct compare_row *row)
{
    if (!row->ran) {
        json_object_set_new(o, "faults", json_null());
        json_object_set_new(o, "fault_cost", json_null());
        json_object_set_new(o, "settings", json_null());
        json_object_set_new(o, "stuck_lock_ms", json_null());
        return;
    }
    json_object_set_new(o, "stuck_lock_ms", json_real(row->stuck_lock_ms));
    json_t *faults = json_array();
    for (size_t i = 0; i < row->n_faults; i++)
        json_array_append_new(faults, fault_json(&row->faults[i]));
    json_object_set_new(o, "faults", faults);
    json_object_set_new(o, "fault_cost", fault_cost_json(row));
    json_object_set(o, "settings", row->settings_json ? row->settings_json : json_null());
}

json_t *compare_planned_faults_json(const struct comparison *c)
{
    json_t *a = json_array();
    for (size_t i = 0; i < c->scn->n_faults; i++)
        json_array_append_new(a, report_fault_spec_json(&c->scn->faults[i]));
    return a;
}

/* --- the time charts ------------------------------------------------------- */

static double interval_p99(const struct compare_row *row, size_t g, size_t k);

/* The seconds of one interval of the charts: every row's run grouped alike. */
static size_t interval_of(const struct comparison *c, double *end_s)
{
    size_t longest = 0;
    *end_s = 0;
    for (size_t i = 0; i < c->n; i++) {
        const struct compare_row *row = &c->rows[i];
        if (!row->tl_ok)
            continue;
        longest = row->tl_len > longest ? row->tl_len : longest;
        *end_s = row->elapsed_s > *end_s ? row->elapsed_s : *end_s;
    }
    if (*end_s <= 0)
        *end_s = 1;
    return longest > MAX_INTERVALS ? (longest + MAX_INTERVALS - 1) / MAX_INTERVALS : 1;
}

/* Interval k of a row: its start, its length (the last one cut at the
 * run's end), and its locks acquired. False past the row's end. */
static bool interval_at(const struct compare_row *row, size_t g, size_t k, double *from,
                        double *len, uint64_t *count)
{
    size_t s = k * g;
    if (s >= row->tl_len)
        return false;
    *count = 0;
    for (size_t j = s; j < s + g && j < row->tl_len; j++)
        *count += row->tl_ok[j];
    *from = (double)s;
    double left = row->elapsed_s - *from;
    *len = left < (double)g ? left : (double)g;
    if (*len < 0.001) /* grants counted in a second the clock put past the end */
        *len = 0.001;
    return true;
}

static size_t intervals_of(const struct compare_row *row, size_t g)
{
    return (row->tl_len + g - 1) / g;
}

/* Each fault as the runs lived it: one band from the earliest start to the
 * latest end over the algorithms, and a thin mark per algorithm for its
 * own span, under the plot area (chart_begin keeps room there): on it,
 * the marks would hide the series' lowest levels. */
static void fault_bands(struct svg_chart *ch, const struct comparison *c)
{
    for (size_t i = 0; i < c->scn->n_faults; i++) {
        double a = INFINITY, b = -INFINITY;
        char hover[1024];
        size_t used = 0;
        const struct fault_spec *spec = &c->scn->faults[i];
        report_append(hover, sizeof(hover), &used,
                      "%s, planned at %.3f s; as run:", fault_type_name(spec->kind),
                      (double)spec->at_ms / 1000.0);
        for (size_t j = 0; j < c->n; j++) {
            const struct compare_row *row = &c->rows[j];
            if (!row->ran || i >= row->n_faults || !row->faults[i].fired)
                continue;
            const struct compare_fault *k = &row->faults[i];
            a = k->start_s < a ? k->start_s : a;
            b = k->end_s > b ? k->end_s : b;
            report_append(hover, sizeof(hover), &used, " %s %.3f .. %.3f s%s", row->algorithm,
                          k->start_s, k->end_s, k->ended ? "" : " (to the end)");
        }
        if (!(a <= b))
            continue; /* fired in no run */
        char label[64];
        snprintf(label, sizeof(label), "%s (as run)", fault_type_name(spec->kind));
        fprintf(ch->f,
                "<g data-fault=\"%zu\" data-from-s=\"%.3f\" data-to-s=\"%.3f\" "
                "data-planned-s=\"%.3f\">",
                i, a, b, (double)spec->at_ms / 1000.0);
        svg_band(ch, a, b, fault_band(spec->kind), label, hover, (int)(i % 3));
        for (size_t j = 0, lane = 0; j < c->n; j++) {
            const struct compare_row *row = &c->rows[j];
            if (!row->ran || i >= row->n_faults || !row->faults[i].fired)
                continue;
            const struct compare_fault *k = &row->faults[i];
            double x0 = svg_x(ch, k->start_s), x1 = svg_x(ch, k->end_s);
            fprintf(ch->f,
                    "<rect class=\"span-mark\" data-run=\"%s\" data-from-s=\"%.3f\" "
                    "data-to-s=\"%.3f\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"3\" "
                    "fill=\"%s\"><title>%s: %.3f .. %.3f s</title></rect>",
                    row->algorithm, k->start_s, k->end_s, x0,
                    ch->height - ch->bottom + 4.0 * (double)(lane++) + 2, x1 - x0 > 1 ? x1 - x0 : 1,
                    report_algorithm_colour(row->algorithm), row->algorithm, k->start_s, k->end_s);
        }
        fprintf(ch->f, "</g>\n");
    }
}

/* A step path: one level per interval [x0[k], x0[k]+len[k]); NaN breaks
 * it. The last interval, when partial, goes apart and dashed. */
static void step_path(struct svg_chart *ch, const double *x0, const double *len, const double *y,
                      size_t n, bool last_partial, const char *colour)
{
    size_t whole = last_partial && n ? n - 1 : n;
    fprintf(ch->f, "<path fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" d=\"", colour);
    bool pen = false;
    for (size_t k = 0; k < whole; k++) {
        if (isnan(y[k])) {
            pen = false;
            continue;
        }
        double yy = svg_y(ch, y[k]);
        if (pen)
            fprintf(ch->f, "L%.1f %.1f", svg_x(ch, x0[k]), yy);
        else
            fprintf(ch->f, "M%.1f %.1f", svg_x(ch, x0[k]), yy);
        fprintf(ch->f, "L%.1f %.1f", svg_x(ch, x0[k] + len[k]), yy);
        pen = true;
    }
    fprintf(ch->f, "\"/>");
    if (whole < n && !isnan(y[whole])) {
        double yy = svg_y(ch, y[whole]);
        fprintf(ch->f,
                "<path class=\"partial\" fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" "
                "stroke-dasharray=\"3 2\" d=\"M%.1f %.1fL%.1f %.1f\"/>",
                colour, svg_x(ch, x0[whole]), yy, svg_x(ch, x0[whole] + len[whole]), yy);
    }
}

/* A log axis when the levels drawn span 30 times or more (30/s under a
 * latency fault beside 3000/s before it), with a row for 0 when some
 * interval had no grant; else linear from 0. */
static struct svg_axis rate_axis(double lo, double hi)
{
    if (!(hi > 0))
        return (struct svg_axis){0, 1, false};
    if (lo > 0 && hi / lo >= 30)
        return svg_log_axis(lo, hi);
    return (struct svg_axis){0, hi * 1.08, false};
}

/* One series' intervals as both time charts draw them, sized for the
 * longest row: where each starts, its length, its level, its grants. */
struct series_buf {
    double *x0, *len, *y;
    uint64_t *counts;
};

static void series_buf_free(struct series_buf *b)
{
    free(b->x0);
    free(b->len);
    free(b->y);
    free(b->counts);
}

static bool series_buf_alloc(struct series_buf *b, size_t most)
{
    b->x0 = malloc(most * sizeof(double));
    b->len = malloc(most * sizeof(double));
    b->y = malloc(most * sizeof(double));
    b->counts = malloc(most * sizeof(uint64_t));
    if (b->x0 && b->len && b->y && b->counts)
        return true;
    series_buf_free(b);
    return false;
}

/* The levels of one row, into y (rates: acquired per second, scaled to
 * each interval's length), with x0 and len. */
static size_t row_rates(const struct compare_row *row, size_t g, struct series_buf *b)
{
    size_t n = 0;
    double from, l;
    uint64_t count;
    while (interval_at(row, g, n, &from, &l, &count)) {
        b->x0[n] = from;
        b->len[n] = l;
        b->counts[n] = count;
        b->y[n] = (double)count / l;
        n++;
    }
    return n;
}

/* Invisible columns, one per interval, whose hover text gives every
 * algorithm's figure in it: locks acquired per second, or the p99. */
static void hover_columns(struct svg_chart *ch, const struct comparison *c, size_t g, size_t most,
                          bool latency)
{
    for (size_t k = 0; k < most; k++) {
        char hover[1024];
        size_t used = 0;
        double a = (double)(k * g), b = a + (double)g < ch->x.hi ? a + (double)g : ch->x.hi;
        if (b <= a)
            break;
        report_append(hover, sizeof(hover), &used, "%g s .. %g s:", a, a + (double)g);
        for (size_t i = 0; i < c->n; i++) {
            const struct compare_row *row = &c->rows[i];
            double from, len;
            uint64_t count;
            if (!row->tl_ok || !interval_at(row, g, k, &from, &len, &count))
                continue;
            double p99 = interval_p99(row, g, k);
            if (!latency)
                report_append(hover, sizeof(hover), &used, " %s %.1f/s (%" PRIu64 " in %.3f s);",
                              row->algorithm, (double)count / len, count, len);
            else if (isnan(p99))
                report_append(hover, sizeof(hover), &used, " %s no grant;", row->algorithm);
            else
                report_append(hover, sizeof(hover), &used, " %s p99 %.3f ms;", row->algorithm, p99);
        }
        svg_hover_column(ch, a, b, hover);
    }
}

static void series_legend(struct svg_chart *ch, const struct comparison *c)
{
    const char *names[COMPARE_MAX], *colours[COMPARE_MAX];
    size_t n = 0;
    for (size_t i = 0; i < c->n; i++)
        if (c->rows[i].tl_ok) {
            names[n] = c->rows[i].algorithm;
            colours[n++] = report_algorithm_colour(c->rows[i].algorithm);
        }
    svg_legend(ch, names, colours, n);
}

/* A series' path in its colour, closing the group its data opened. */
static void series_end(struct svg_chart *ch, const struct series_buf *b, size_t n, bool partial,
                       const struct compare_row *row)
{
    step_path(ch, b->x0, b->len, b->y, n, partial, report_algorithm_colour(row->algorithm));
    fprintf(ch->f, "</g>\n");
}

/* What opens both time charts: the frame on y, the axes, and the faults'
 * bands behind the series to come. */
static struct svg_chart chart_begin(FILE *f, const struct comparison *c, double end_s,
                                    struct svg_axis y, bool y_zero, const char *cls,
                                    const char *label, const char *y_title, svg_label_fn y_tick)
{
    struct svg_chart ch = svg_time_chart(f, end_s, 280);
    size_t lanes = 0; /* one per run that lived a fault: its span marks */
    for (size_t i = 0; i < c->n && c->scn->n_faults; i++)
        lanes += c->rows[i].ran && c->rows[i].n_faults > 0;
    ch.under = lanes ? 4.0 * (double)lanes + 3 : 0;
    ch.bottom += ch.under;
    ch.height += ch.under;
    ch.y = y;
    ch.y_zero = y_zero;
    svg_begin(&ch, cls, label);
    svg_axes(&ch, "seconds since each run's start", y_title, html_time_tick, y_tick);
    fault_bands(&ch, c);
    return ch;
}

/* What closes both time charts once every series is drawn. */
static void chart_end(struct svg_chart *ch, const struct comparison *c, size_t g, size_t most,
                      bool latency, struct series_buf *b)
{
    hover_columns(ch, c, g, most, latency);
    series_legend(ch, c);
    svg_end(ch);
    series_buf_free(b);
}

static void throughput_chart(FILE *f, const struct comparison *c, size_t g, double end_s,
                             size_t most)
{
    struct series_buf b;
    double lo = INFINITY, hi = 0;
    bool zeros = false;
    if (!series_buf_alloc(&b, most))
        return;
    for (size_t i = 0; i < c->n; i++) {
        if (!c->rows[i].tl_ok)
            continue;
        size_t n = row_rates(&c->rows[i], g, &b);
        for (size_t k = 0; k < n; k++) {
            hi = b.y[k] > hi ? b.y[k] : hi;
            lo = b.y[k] > 0 && b.y[k] < lo ? b.y[k] : lo;
            zeros = zeros || b.y[k] == 0;
        }
    }
    struct svg_axis y = rate_axis(lo, hi);
    /* an interval with no grant (a pause) is 0 on its own row, not lo */
    struct svg_chart ch = chart_begin(
        f, c, end_s, y, y.log && zeros, "chart throughput",
        "locks acquired per second, per interval, one series per algorithm, with the faults",
        "locks acquired per second", NULL);
    for (size_t i = 0; i < c->n; i++) {
        const struct compare_row *row = &c->rows[i];
        if (!row->tl_ok)
            continue;
        size_t n = row_rates(row, g, &b);
        bool partial = n > 0 && b.len[n - 1] < (double)g - 1e-9;
        fprintf(f, "<g class=\"series\" data-algorithm=\"%s\" data-interval-s=\"%zu\"",
                row->algorithm, g);
        fprintf(f, " data-counts=\"");
        for (size_t k = 0; k < n; k++)
            fprintf(f, "%s%" PRIu64, k ? "," : "", b.counts[k]);
        fprintf(f, "\" data-lengths-s=\"");
        for (size_t k = 0; k < n; k++)
            fprintf(f, "%s%.3f", k ? "," : "", b.len[k]);
        fprintf(f, "\" data-partial=\"%s\"><title>", partial ? "last" : "none");
        svg_text(f, row->algorithm);
        if (partial)
            fprintf(f,
                    ": locks acquired per second; the last interval is %.3f s long: its %" PRIu64
                    " acquired scaled to %.1f/s (dashed)",
                    b.len[n - 1], b.counts[n - 1], b.y[n - 1]);
        fprintf(f, "</title>");
        series_end(&ch, &b, n, partial, row);
    }
    chart_end(&ch, c, g, most, false, &b);
}

/* The worst p99 of an interval's seconds that had a grant; NaN with none. */
static double interval_p99(const struct compare_row *row, size_t g, size_t k)
{
    double worst = NAN;
    for (size_t j = k * g; j < (k + 1) * g && j < row->tl_len; j++) {
        const struct latency_second *l = &row->tl_latency[j];
        if (l->count && (isnan(worst) || l->p99_ms > worst))
            worst = l->p99_ms;
    }
    return isnan(worst) ? NAN : worst > 0.001 ? worst : 0.001;
}

static void latency_chart(FILE *f, const struct comparison *c, size_t g, double end_s, size_t most)
{
    struct series_buf b;
    double lo = INFINITY, hi = 0;
    if (!series_buf_alloc(&b, most))
        return;
    for (size_t i = 0; i < c->n; i++)
        for (size_t k = 0; c->rows[i].tl_ok && k < intervals_of(&c->rows[i], g); k++) {
            double v = interval_p99(&c->rows[i], g, k);
            if (!isnan(v)) {
                lo = v < lo ? v : lo;
                hi = v > hi ? v : hi;
            }
        }
    struct svg_chart ch = chart_begin(
        f, c, end_s, svg_log_axis(lo, hi), false, "chart latency",
        "acquire p99 per interval on a log axis, one series per algorithm, with the faults",
        "acquire p99", html_ms_tick);
    for (size_t i = 0; i < c->n; i++) {
        const struct compare_row *row = &c->rows[i];
        if (!row->tl_ok)
            continue;
        size_t n = row_rates(row, g, &b);
        fprintf(f,
                "<g class=\"series\" data-algorithm=\"%s\" data-interval-s=\"%zu\" data-p99-ms=\"",
                row->algorithm, g);
        for (size_t k = 0; k < n; k++) {
            b.y[k] = interval_p99(row, g, k);
            if (isnan(b.y[k]))
                fprintf(f, "%s-", k ? "," : "");
            else
                fprintf(f, "%s%.3f", k ? "," : "", b.y[k]);
        }
        fprintf(f, "\"><title>");
        svg_text(f, row->algorithm);
        fprintf(f, ": acquire p99 per interval (no line: no grant in it)</title>");
        series_end(&ch, &b, n, false, row);
    }
    chart_end(&ch, c, g, most, true, &b);
}

void compare_time_charts(FILE *f, const struct comparison *c)
{
    double end_s;
    size_t g = interval_of(c, &end_s), most = 1;
    for (size_t i = 0; i < c->n; i++)
        if (c->rows[i].tl_ok && intervals_of(&c->rows[i], g) > most)
            most = intervals_of(&c->rows[i], g);
    fprintf(f, "<h2 id=\"over-time\">Over time</h2>\n<p class=\"note\">Each algorithm ran the "
               "scenario on its own timeline, one after another; the x axis is seconds since "
               "each run's start. Every fault's band spans it as the runs lived it, from the "
               "earliest start to the latest end over the algorithms (a thin mark per algorithm "
               "in its colour, under the plot, shows its own span; hover a band for the planned "
               "time). Each algorithm has one colour on every page. When the levels span 30 "
               "times or more the axis is log, and an interval with no lock acquired is drawn "
               "at 0, on its own row at the foot, past a break in the axis.");
    fprintf(f,
            " One step per %zu s interval; the last one, cut short by the run's end, is scaled "
            "to its length and dashed.</p>\n<h3>Locks acquired per second</h3>\n",
            g);
    throughput_chart(f, c, g, end_s, most);
    bool begun = false; /* rows that ran all bin alike: collect.c replays every run */
    for (size_t i = 0; i < c->n; i++)
        begun = begun || c->rows[i].latency_by_begin;
    fprintf(f,
            "<h3>Acquire p99</h3>\n<p class=\"note\">The worst second's p99 of each "
            "interval, of the acquires %s in it (as each run's report.html bins them); "
            "no line where none was.</p>\n",
            begun ? "begun (in open loop: due)" : "granted");
    latency_chart(f, c, g, end_s, most);
}

/* --- the fault windows' cost ----------------------------------------------- */

static void recovery_cell(FILE *f, const struct compare_fault *k)
{
    if (k->avail.recovery_ns == AVAIL_NEVER)
        fprintf(f, "<td data-recovery-ms=\"never\">never</td>");
    else
        fprintf(f, "<td data-recovery-ms=\"%.3f\">%.3f s</td>", (double)k->avail.recovery_ns / 1e6,
                (double)k->avail.recovery_ns / 1e9);
}

static void cost_row(FILE *f, const struct compare_row *row, size_t i)
{
    const struct compare_fault *k = &row->faults[i];
    fprintf(f, "<tr data-run=\"%s\" data-fault=\"%zu\"><td class=\"l\">", row->algorithm, i);
    html_algorithm_name(f, row->algorithm);
    fprintf(f, "</td>");
    if (!k->fired || !k->has_avail) {
        fprintf(f, "<td>%s</td><td colspan=\"6\">-</td></tr>\n",
                k->fired ? "no window" : "did not fire");
        return;
    }
    const struct fault_availability *a = &k->avail;
    char text[400];
    report_availability(a, k->kind, text, sizeof(text));
    fprintf(f,
            "<td title=\"%s\">%.3f .. %.3f s</td><td data-granted=\"%" PRIu64
            "\" data-granted-within=\"%" PRIu64 "\">%" PRIu64 " (%" PRIu64 ")</td>"
            "<td data-failed=\"%" PRIu64 "\">%" PRIu64 "</td><td data-ambiguous=\"%" PRIu64
            "\">%" PRIu64 "</td><td data-no-grant-ms=\"%.3f\">%.3f s</td>",
            text, k->start_s, k->end_s, a->granted, a->granted_within, a->granted,
            a->granted_within, a->failed, a->failed, a->ambiguous, a->ambiguous,
            (double)a->longest_no_grant_ns / 1e6, (double)a->longest_no_grant_ns / 1e9);
    recovery_cell(f, k);
    fprintf(f, "</tr>\n");
}

void compare_cost_table(FILE *f, const struct comparison *c)
{
    fprintf(f, "<h2 id=\"fault-cost\">What each fault window cost</h2>\n");
    if (c->scn->n_faults == 0) {
        fprintf(f, "<p class=\"note\">The scenario has no faults.</p>\n");
        return;
    }
    fprintf(f, "<p class=\"note\">Per fault and algorithm, in its own run: the locks granted "
               "while the fault was on (in brackets, those also asked for during it), the "
               "acquires that failed and those whose outcome is unknown, the longest stretch "
               "with a client waiting and no grant on any key (the longest no grant), and the "
               "time from the fault's end (its start, for a kill) to the next grant.</p>\n");
    fprintf(f, "<table class=\"cost\"><tr><th class=\"l\">algorithm</th><th>window (as run)</th>"
               "<th>granted</th><th>failed</th><th>ambiguous</th><th>longest no grant</th>"
               "<th>recovery</th></tr>\n");
    for (size_t i = 0; i < c->scn->n_faults; i++) {
        char plan[256];
        fprintf(f, "<tr class=\"fault\"><th class=\"l\" colspan=\"7\">fault %zu at %.3f s: ", i,
                (double)c->scn->faults[i].at_ms / 1000.0);
        svg_text(f, report_fault_plan(&c->scn->faults[i], plan, sizeof(plan)));
        fprintf(f, "</th></tr>\n");
        for (size_t j = 0; j < c->n; j++)
            if (c->rows[j].ran && i < c->rows[j].n_faults)
                cost_row(f, &c->rows[j], i);
    }
    fprintf(f, "</table>\n<p class=\"note\">Stuck locks over each whole run (a key with "
               "waiters and no holder, matrix.html's stuck):");
    for (size_t j = 0; j < c->n; j++) {
        const struct compare_row *row = &c->rows[j];
        if (!row->ran)
            continue;
        fprintf(f, "<br><span data-run=\"%s\" data-stuck-lock-ms=\"%.3f\">", row->algorithm,
                row->stuck_lock_ms);
        svg_text(f, row->algorithm);
        fprintf(f, ": ");
        svg_text(f, row->stuck_lock[0] ? row->stuck_lock : "none");
        fprintf(f, "</span>");
    }
    fprintf(f, "</p>\n");
}

/* --- the effective settings ------------------------------------------------ */

/* Is line (len bytes) among every other ran row's settings lines? */
static bool shared_line(const struct comparison *c, size_t self, const char *line, size_t len)
{
    for (size_t j = 0; j < c->n; j++) {
        const char *s = c->rows[j].settings;
        if (j == self || !c->rows[j].ran || s == NULL)
            continue;
        bool found = false;
        for (const char *p = s; *p && !found;) {
            size_t n = strcspn(p, "\n");
            found = n == len && memcmp(p, line, len) == 0;
            p += n + (p[n] == '\n');
        }
        if (!found)
            return false;
    }
    return true;
}

void compare_settings_block(FILE *f, const struct comparison *c)
{
    fprintf(f, "<h2 id=\"settings\">Effective settings</h2>\n<p class=\"note\">What each "
               "algorithm ran with, as <code>locklab show</code> prints it after every default "
               "and clamp; lines not shared by every algorithm in bold.</p>\n"
               "<div style=\"display:flex;flex-wrap:wrap;gap:12px\">\n");
    for (size_t i = 0; i < c->n; i++) {
        const struct compare_row *row = &c->rows[i];
        if (!row->ran || row->settings == NULL)
            continue;
        fprintf(f, "<div class=\"settings\" data-algorithm=\"%s\" style=\"max-width:100%%\"><h3>",
                row->algorithm);
        svg_text(f, row->algorithm);
        fprintf(f, "</h3><pre style=\"white-space:pre-wrap;max-width:560px;margin:0\">");
        for (const char *p = row->settings; *p;) {
            size_t n = strcspn(p, "\n");
            char line[1024];
            snprintf(line, sizeof(line), "%.*s", (int)n, p);
            bool own = !shared_line(c, i, p, n);
            fprintf(f, "<span class=\"line\"%s>%s", own ? " data-own=\"1\"" : "", own ? "<b>" : "");
            svg_text(f, line + strspn(line, " "));
            fprintf(f, "%s</span>\n", own ? "</b>" : "");
            p += n + (p[n] == '\n');
        }
        fprintf(f, "</pre></div>\n");
    }
    fprintf(f, "</div>\n");
}

/* --- bar labels -------------------------------------------------------------- */

void compare_bar_label(FILE *f, double x0, double x_end, double frame_right, double y,
                       const char *text)
{
    double w = CHAR_W * (double)strlen(text);
    bool inside = x_end - x0 >= w + 8;
    double x = inside ? x_end - 4 : x_end + 4;
    if (!inside && x + w > frame_right - 2) /* no room either side: at the frame's end */
        x = frame_right - 2 - w;
    fprintf(f,
            "<text class=\"bar-label\" x=\"%.1f\" y=\"%.1f\" textLength=\"%.1f\" "
            "lengthAdjust=\"spacingAndGlyphs\"%s>",
            x, y, w, inside ? " text-anchor=\"end\" fill=\"#fff\"" : " fill=\"#333\"");
    svg_text(f, text);
    fprintf(f, "</text>");
}
