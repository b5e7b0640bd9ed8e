/* test_metrics_text.c - the metrics endpoint's exposition (metrics_text.h):
 * given figures written out in both formats, compared whole with the text
 * worked out by hand from the OpenMetrics 1.0 and Prometheus 0.0.4 rules;
 * and which format an Accept header gets. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/cli/metrics_text.h"

/* metrics_text's output for m in fmt, in a buffer of the caller's (free). */
static char *text_of(const struct metrics *m, enum metrics_format fmt)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    assert_int_equal(metrics_text(f, m, "9.8.7", fmt), 0);
    assert_int_equal(fclose(f), 0);
    return buf;
}

/* A run 2.5 s in: 1 acquire under 0.5 ms, 2 up to 1 ms, 1 at 3 s, 1 past
 * 10 s; a quote and a backslash in its scenario's name; two faults. */
static void figures(struct metrics *m)
{
    memset(m, 0, sizeof(*m));
    snprintf(m->scenario, sizeof(m->scenario), "a\"b\\c");
    snprintf(m->algorithm, sizeof(m->algorithm), "redis");
    m->started = true;
    m->elapsed_s = 2.5;
    m->clients = 4;
    m->clients_running = 3;
    m->steps = 7;
    const uint64_t acq[MO_COUNT] = {5, 1, 2, 3}, rel[MO_COUNT] = {4, 1, 0, 6};
    memcpy(m->acquire, acq, sizeof(acq));
    memcpy(m->release, rel, sizeof(rel));
    m->concurrent_entries = 9;
    m->latency[0] = 1;
    m->latency[1] = 2;
    m->latency[12] = 1; /* 2.5 s < 3 s <= 5 s */
    m->latency[LIVE_LE_COUNT] = 1;
    m->latency_sum_us = 13001250;
    m->n_faults = 2;
    m->faults[0] = (struct metrics_fault){.kind = "pause", .target = "one", .active = true};
    m->faults[1] = (struct metrics_fault){.kind = "latency", .target = "redis-1", .active = false};
}

#define RUN "scenario=\"a\\\"b\\\\c\",algorithm=\"redis\""

static const char buckets[] = "locklab_acquire_latency_seconds_bucket{" RUN ",le=\"0.0005\"} 1\n"
                              "locklab_acquire_latency_seconds_bucket{" RUN ",le=\"0.001\"} 3\n"
                              "locklab_acquire_latency_seconds_bucket{" RUN ",le=\"0.0025\"} 3\n"
                              "locklab_acquire_latency_seconds_bucket{" RUN ",le=\"0.005\"} 3\n"
                              "locklab_acquire_latency_seconds_bucket{" RUN ",le=\"0.01\"} 3\n"
                              "locklab_acquire_latency_seconds_bucket{" RUN ",le=\"0.025\"} 3\n"
                              "locklab_acquire_latency_seconds_bucket{" RUN ",le=\"0.05\"} 3\n"
                              "locklab_acquire_latency_seconds_bucket{" RUN ",le=\"0.1\"} 3\n"
                              "locklab_acquire_latency_seconds_bucket{" RUN ",le=\"0.25\"} 3\n"
                              "locklab_acquire_latency_seconds_bucket{" RUN ",le=\"0.5\"} 3\n"
                              "locklab_acquire_latency_seconds_bucket{" RUN ",le=\"1.0\"} 3\n"
                              "locklab_acquire_latency_seconds_bucket{" RUN ",le=\"2.5\"} 3\n"
                              "locklab_acquire_latency_seconds_bucket{" RUN ",le=\"5.0\"} 4\n"
                              "locklab_acquire_latency_seconds_bucket{" RUN ",le=\"10.0\"} 4\n"
                              "locklab_acquire_latency_seconds_bucket{" RUN ",le=\"+Inf\"} 5\n"
                              "locklab_acquire_latency_seconds_count{" RUN "} 5\n"
                              "locklab_acquire_latency_seconds_sum{" RUN "} 13.00125\n";

static const char samples_head[] = "locklab_run_info{" RUN ",version=\"9.8.7\"} 1\n";

#define H_RUN     "The run being served: its scenario, algorithm and locklab's version."
#define H_ELAPSED "Seconds since the start line; once the clients have left, report.json elapsed_s."
#define H_CLIENTS "Clients still in their loop (of report.json scenario.clients)."
#define H_STEPS   "Business steps ended (report.json counters.steps)."
#define H_ACQ                                                                                      \
    "Acquires ended, by outcome (report.json counters.acquire_ok, acquire_busy, "                  \
    "acquire_no_effect, acquire_ambiguous)."
#define H_REL                                                                                      \
    "Releases ended, by outcome (report.json counters.release_ok, release_lost, "                  \
    "release_no_effect, release_ambiguous)."
#define H_WITNESS                                                                                  \
    "Entries the online witness saw into a section another owner held (report.json "               \
    "checker.witness_concurrent_entries)."
#define H_LATENCY                                                                                  \
    "Latency of the granted acquires so far (report.json operations.acquire), from the request, "  \
    "or in open loop from when the step was due."
#define H_FAULT                                                                                    \
    "1 while the fault's window is on (report.json faults[N] from start_s to end_s), by its "      \
    "index in the scenario, kind and target."

#define COUNTS                                                                                     \
    "locklab_acquires_total{" RUN ",outcome=\"ok\"} 5\n"                                           \
    "locklab_acquires_total{" RUN ",outcome=\"busy\"} 1\n"                                         \
    "locklab_acquires_total{" RUN ",outcome=\"no_effect\"} 2\n"                                    \
    "locklab_acquires_total{" RUN ",outcome=\"ambiguous\"} 3\n"
#define RELEASES                                                                                   \
    "locklab_releases_total{" RUN ",outcome=\"ok\"} 4\n"                                           \
    "locklab_releases_total{" RUN ",outcome=\"lost\"} 1\n"                                         \
    "locklab_releases_total{" RUN ",outcome=\"no_effect\"} 0\n"                                    \
    "locklab_releases_total{" RUN ",outcome=\"ambiguous\"} 6\n"
#define FAULTS                                                                                     \
    "locklab_fault_active{" RUN ",fault=\"0\",kind=\"pause\",target=\"one\"} 1\n"                  \
    "locklab_fault_active{" RUN ",fault=\"1\",kind=\"latency\",target=\"redis-1\"} 0\n"

static void openmetrics_names_families_without_suffixes_and_ends_in_eof(void **state)
{
    (void)state;
    struct metrics m;
    figures(&m);
    char *got = text_of(&m, METRICS_OPENMETRICS);
    char want[16384];
    snprintf(want, sizeof(want),
             "# TYPE locklab_run info\n# HELP locklab_run " H_RUN "\n%s"
             "# TYPE locklab_elapsed_seconds gauge\n# UNIT locklab_elapsed_seconds seconds\n"
             "# HELP locklab_elapsed_seconds " H_ELAPSED "\n"
             "locklab_elapsed_seconds{" RUN "} 2.500\n"
             "# TYPE locklab_clients_running gauge\n# HELP locklab_clients_running " H_CLIENTS "\n"
             "locklab_clients_running{" RUN "} 3\n"
             "# TYPE locklab_steps counter\n# HELP locklab_steps " H_STEPS "\n"
             "locklab_steps_total{" RUN "} 7\n"
             "# TYPE locklab_acquires counter\n# HELP locklab_acquires " H_ACQ "\n" COUNTS
             "# TYPE locklab_releases counter\n# HELP locklab_releases " H_REL "\n" RELEASES
             "# TYPE locklab_concurrent_entries counter\n"
             "# HELP locklab_concurrent_entries " H_WITNESS "\n"
             "locklab_concurrent_entries_total{" RUN "} 9\n"
             "# TYPE locklab_acquire_latency_seconds histogram\n"
             "# UNIT locklab_acquire_latency_seconds seconds\n"
             "# HELP locklab_acquire_latency_seconds " H_LATENCY "\n%s"
             "# TYPE locklab_fault_active gauge\n# HELP locklab_fault_active " H_FAULT "\n" FAULTS
             "# EOF\n",
             samples_head, buckets);
    assert_string_equal(got, want);
    free(got);
}

static void prometheus_text_names_samples_and_has_no_unit_info_or_eof(void **state)
{
    (void)state;
    struct metrics m;
    figures(&m);
    char *got = text_of(&m, METRICS_PROMETHEUS);
    char want[16384];
    snprintf(
        want, sizeof(want),
        "# HELP locklab_run_info " H_RUN "\n# TYPE locklab_run_info gauge\n%s"
        "# HELP locklab_elapsed_seconds " H_ELAPSED "\n"
        "# TYPE locklab_elapsed_seconds gauge\n"
        "locklab_elapsed_seconds{" RUN "} 2.500\n"
        "# HELP locklab_clients_running " H_CLIENTS "\n# TYPE locklab_clients_running gauge\n"
        "locklab_clients_running{" RUN "} 3\n"
        "# HELP locklab_steps_total " H_STEPS "\n# TYPE locklab_steps_total counter\n"
        "locklab_steps_total{" RUN "} 7\n"
        "# HELP locklab_acquires_total " H_ACQ "\n# TYPE locklab_acquires_total counter\n" COUNTS
        "# HELP locklab_releases_total " H_REL "\n# TYPE locklab_releases_total counter\n" RELEASES
        "# HELP locklab_concurrent_entries_total " H_WITNESS "\n"
        "# TYPE locklab_concurrent_entries_total counter\n"
        "locklab_concurrent_entries_total{" RUN "} 9\n"
        "# HELP locklab_acquire_latency_seconds " H_LATENCY "\n"
        "# TYPE locklab_acquire_latency_seconds histogram\n%s"
        "# HELP locklab_fault_active " H_FAULT "\n# TYPE locklab_fault_active gauge\n" FAULTS,
        samples_head, buckets);
    assert_string_equal(got, want);
    free(got);
}

/* Before a run is followed there is nothing to say: OpenMetrics still
 * ends its (empty) set. */
static void no_run_yet_gives_an_empty_set(void **state)
{
    (void)state;
    struct metrics m;
    memset(&m, 0, sizeof(m));
    char *om = text_of(&m, METRICS_OPENMETRICS), *prom = text_of(&m, METRICS_PROMETHEUS);
    assert_string_equal(om, "# EOF\n");
    assert_string_equal(prom, "");
    free(om);
    free(prom);
}

static void the_accept_header_chooses_the_format(void **state)
{
    (void)state;
    /* what Prometheus 2.42 (Debian 12's) sends, read off a scrape */
    assert_int_equal(metrics_format_of("application/openmetrics-text;version=1.0.0,application/"
                                       "openmetrics-text;version=0.0.1;q=0.75,text/plain;"
                                       "version=0.0.4;q=0.5,*/*;q=0.1"),
                     METRICS_OPENMETRICS);
    assert_int_equal(metrics_format_of("text/plain;version=0.0.4;q=0.5,*/*;q=0.1"),
                     METRICS_PROMETHEUS);
    assert_int_equal(metrics_format_of("*/*"), METRICS_PROMETHEUS); /* curl's */
    assert_int_equal(metrics_format_of(NULL), METRICS_PROMETHEUS);
    assert_int_equal(metrics_format_of("Application/OpenMetrics-Text; q=0, text/plain"),
                     METRICS_PROMETHEUS);
    assert_int_equal(metrics_format_of("text/plain;q=0.5, application/openmetrics-text; q=0.3"),
                     METRICS_OPENMETRICS);
    assert_string_equal(metrics_content_type(METRICS_OPENMETRICS),
                        "application/openmetrics-text; version=1.0.0; charset=utf-8");
    assert_string_equal(metrics_content_type(METRICS_PROMETHEUS),
                        "text/plain; version=0.0.4; charset=utf-8");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(openmetrics_names_families_without_suffixes_and_ends_in_eof),
        cmocka_unit_test(prometheus_text_names_samples_and_has_no_unit_info_or_eof),
        cmocka_unit_test(no_run_yet_gives_an_empty_set),
        cmocka_unit_test(the_accept_header_chooses_the_format),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
