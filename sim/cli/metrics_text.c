/* metrics_text.c - the exposition formats of the metrics endpoint (see
 * metrics_text.h). The two differ only in their descriptor lines: in
 * OpenMetrics a family is named without its samples' suffix (a counter
 * locklab_acquires has samples locklab_acquires_total), has a UNIT line
 * when its name ends in one, may be an info, and the text ends in
 * "# EOF"; the 0.0.4 text names the samples, knows no info (a gauge) and
 * just ends. */
#include "sim/cli/metrics_text.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

const char *metrics_content_type(enum metrics_format fmt)
{
    return fmt == METRICS_OPENMETRICS ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
                                      : "text/plain; version=0.0.4; charset=utf-8";
}

/* The q of the media range at r (up to its comma): 1 unless it says. */
static double quality(const char *r)
{
    const char *end = strchr(r, ',');
    for (const char *p = r; (p = strchr(p, ';')) != NULL && (end == NULL || p < end);) {
        p++;
        while (*p == ' ' || *p == '\t')
            p++;
        if ((p[0] == 'q' || p[0] == 'Q') && p[1] == '=')
            return strtod(p + 2, NULL);
    }
    return 1.0;
}

enum metrics_format metrics_format_of(const char *accept)
{
    static const char om[] = "application/openmetrics-text";
    for (const char *p = accept; p && (p = strcasestr(p, om)) != NULL; p += sizeof(om) - 1)
        if (quality(p) > 0)
            return METRICS_OPENMETRICS;
    return METRICS_PROMETHEUS;
}

/* A label's value between its quotes: backslash, quote and newline
 * escaped, as both formats ask. */
static void put_value(FILE *f, const char *v)
{
    for (; *v; v++) {
        if (*v == '\\' || *v == '"')
            fputc('\\', f);
        if (*v == '\n')
            fputs("\\n", f);
        else
            fputc(*v, f);
    }
}

/* The labels every sample carries: which run it is. */
static void put_run(FILE *f, const struct metrics *m)
{
    fputs("scenario=\"", f);
    put_value(f, m->scenario);
    fputs("\",algorithm=\"", f);
    put_value(f, m->algorithm);
    fputc('"', f);
}

enum kind { COUNTER, GAUGE, HISTOGRAM, INFO };

/* A family's descriptor lines. unit: the suffix its name ends in, or NULL. */
static void family(FILE *f, enum metrics_format fmt, const char *name, enum kind k,
                   const char *unit, const char *help)
{
    static const char *const om_types[] = {"counter", "gauge", "histogram", "info"};
    static const char *const prom_types[] = {"counter", "gauge", "histogram", "gauge"};
    if (fmt == METRICS_OPENMETRICS) {
        fprintf(f, "# TYPE %s %s\n", name, om_types[k]);
        if (unit)
            fprintf(f, "# UNIT %s %s\n", name, unit);
        fprintf(f, "# HELP %s %s\n", name, help);
        return;
    }
    const char *suffix = k == COUNTER ? "_total" : k == INFO ? "_info" : "";
    fprintf(f, "# HELP %s%s %s\n", name, suffix, help);
    fprintf(f, "# TYPE %s%s %s\n", name, suffix, prom_types[k]);
}

/* One sample: name, the run's labels and `more` (a label list or ""),
 * then its value as written in value. */
static void sample(FILE *f, const struct metrics *m, const char *name, const char *more,
                   const char *value)
{
    fprintf(f, "%s{", name);
    put_run(f, m);
    fprintf(f, "%s} %s\n", more, value);
}

static void sample_u(FILE *f, const struct metrics *m, const char *name, const char *more,
                     uint64_t v)
{
    char text[24];
    snprintf(text, sizeof(text), "%" PRIu64, v);
    sample(f, m, name, more, text);
}

/* Whole microseconds as seconds, exactly: 2500000 -> "2.5", 1000000 -> "1.0". */
static void seconds_of_us(uint64_t us, char *buf, size_t len)
{
    int n = snprintf(buf, len, "%" PRIu64 ".%06" PRIu64, us / 1000000u, us % 1000000u);
    while (n > 0 && (size_t)n < len && buf[n - 1] == '0' && buf[n - 2] != '.')
        buf[--n] = '\0';
}

static void outcomes(FILE *f, const struct metrics *m, const char *name, const uint64_t *v,
                     const char *refused)
{
    const char *names[MO_COUNT] = {"ok", refused, "no_effect", "ambiguous"};
    for (int o = 0; o < MO_COUNT; o++) {
        char more[32];
        snprintf(more, sizeof(more), ",outcome=\"%s\"", names[o]);
        sample_u(f, m, name, more, v[o]);
    }
}

static void latency(FILE *f, const struct metrics *m, enum metrics_format fmt)
{
    family(f, fmt, "locklab_acquire_latency_seconds", HISTOGRAM, "seconds",
           "Latency of the granted acquires so far (report.json operations.acquire), from the "
           "request, or in open loop from when the step was due.");
    uint64_t below = 0;
    char le[48], v[32];
    for (unsigned b = 0; b < LIVE_LE_COUNT; b++) {
        below += m->latency[b];
        seconds_of_us(live_le_us[b], v, sizeof(v));
        snprintf(le, sizeof(le), ",le=\"%s\"", v);
        sample_u(f, m, "locklab_acquire_latency_seconds_bucket", le, below);
    }
    below += m->latency[LIVE_LE_COUNT];
    sample_u(f, m, "locklab_acquire_latency_seconds_bucket", ",le=\"+Inf\"", below);
    sample_u(f, m, "locklab_acquire_latency_seconds_count", "", below);
    seconds_of_us(m->latency_sum_us, v, sizeof(v));
    sample(f, m, "locklab_acquire_latency_seconds_sum", "", v);
}

static void faults(FILE *f, const struct metrics *m, enum metrics_format fmt)
{
    family(f, fmt, "locklab_fault_active", GAUGE, NULL,
           "1 while the fault's window is on (report.json faults[N] from start_s to end_s), by "
           "its index in the scenario, kind and target.");
    for (size_t i = 0; i < m->n_faults && i < SCENARIO_MAX_FAULTS; i++) {
        const struct metrics_fault *x = &m->faults[i];
        fputs("locklab_fault_active{", f);
        put_run(f, m);
        fprintf(f, ",fault=\"%zu\",kind=\"", i);
        put_value(f, x->kind);
        fputs("\",target=\"", f);
        put_value(f, x->target);
        fprintf(f, "\"} %d\n", x->active ? 1 : 0);
    }
}

int metrics_text(FILE *f, const struct metrics *m, const char *version, enum metrics_format fmt)
{
    if (m->algorithm[0]) {
        char v[32];
        family(f, fmt, "locklab_run", INFO, NULL,
               "The run being served: its scenario, algorithm and locklab's version.");
        fputs("locklab_run_info{", f);
        put_run(f, m);
        fputs(",version=\"", f);
        put_value(f, version);
        fputs("\"} 1\n", f);
        family(f, fmt, "locklab_elapsed_seconds", GAUGE, "seconds",
               "Seconds since the start line; once the clients have left, report.json "
               "elapsed_s.");
        snprintf(v, sizeof(v), "%.3f", m->elapsed_s);
        sample(f, m, "locklab_elapsed_seconds", "", v);
        family(f, fmt, "locklab_clients_running", GAUGE, NULL,
               "Clients still in their loop (of report.json scenario.clients).");
        sample_u(f, m, "locklab_clients_running", "", m->clients_running);
        family(f, fmt, "locklab_steps", COUNTER, NULL,
               "Business steps ended (report.json counters.steps).");
        sample_u(f, m, "locklab_steps_total", "", m->steps);
        family(f, fmt, "locklab_acquires", COUNTER, NULL,
               "Acquires ended, by outcome (report.json counters.acquire_ok, acquire_busy, "
               "acquire_no_effect, acquire_ambiguous).");
        outcomes(f, m, "locklab_acquires_total", m->acquire, "busy");
        family(f, fmt, "locklab_releases", COUNTER, NULL,
               "Releases ended, by outcome (report.json counters.release_ok, release_lost, "
               "release_no_effect, release_ambiguous).");
        outcomes(f, m, "locklab_releases_total", m->release, "lost");
        family(f, fmt, "locklab_concurrent_entries", COUNTER, NULL,
               "Entries the online witness saw into a section another owner held (report.json "
               "checker.witness_concurrent_entries).");
        sample_u(f, m, "locklab_concurrent_entries_total", "", m->concurrent_entries);
        latency(f, m, fmt);
        faults(f, m, fmt);
    }
    if (fmt == METRICS_OPENMETRICS)
        fputs("# EOF\n", f);
    return ferror(f) ? -1 : 0;
}
