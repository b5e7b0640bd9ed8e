/* test_compare_parts.c - compare.html's story parts (reports/compare_parts.c)
 * on comparisons built by hand, with the exact markup a page check reads:
 * a bar label inside its bar or beside it, never past the frame; the
 * throughput steps with the last, partial interval's length and scaled
 * rate; the worst p99 per interval; a fault band spanning the runs as
 * they lived it; seconds grouped on a long run. Nothing runs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algorithms/lock.h"
#include "reports/compare_parts.h"
#include "sim/scenario/scenario.h"

static char *text;
static size_t text_len;

static FILE *open_text(void)
{
    free(text);
    text = NULL;
    FILE *f = open_memstream(&text, &text_len);
    assert_non_null(f);
    return f;
}

static void close_text(FILE *f)
{
    assert_int_equal(fclose(f), 0);
}

static void has(const char *want)
{
    if (strstr(text, want) == NULL)
        fail_msg("not in the output: %s", want);
}

static void bar_label_inside(void **state)
{
    (void)state;
    FILE *f = open_text();
    compare_bar_label(f, 100, 395, 460, 28, "1346.6 ms"); /* 9 chars: 63 px */
    close_text(f);
    assert_string_equal(text,
                        "<text class=\"bar-label\" x=\"391.0\" y=\"28.0\" textLength=\"63.0\" "
                        "lengthAdjust=\"spacingAndGlyphs\" text-anchor=\"end\" "
                        "fill=\"#fff\">1346.6 ms</text>");
}

static void bar_label_beside(void **state)
{
    (void)state;
    FILE *f = open_text();
    compare_bar_label(f, 100, 130, 460, 28, "12.5 /s"); /* 49 px: not inside 30 */
    close_text(f);
    assert_string_equal(text,
                        "<text class=\"bar-label\" x=\"134.0\" y=\"28.0\" textLength=\"49.0\" "
                        "lengthAdjust=\"spacingAndGlyphs\" fill=\"#333\">12.5 /s</text>");
}

/* A comparison of one or two rows over a scenario with nfaults faults. */
struct fixture {
    struct scenario scn;
    struct comparison c;
};

static struct fixture *fixture(size_t rows, size_t seconds, double elapsed)
{
    struct fixture *x = calloc(1, sizeof(*x));
    assert_non_null(x);
    x->c.scn = &x->scn;
    x->c.n = rows;
    for (size_t i = 0; i < rows; i++) {
        struct compare_row *r = &x->c.rows[i];
        snprintf(r->algorithm, sizeof(r->algorithm), "%s", i ? "zookeeper" : "redis");
        r->ran = true;
        r->elapsed_s = elapsed;
        r->tl_len = seconds;
        r->tl_ok = calloc(seconds, sizeof(*r->tl_ok));
        r->tl_latency = calloc(seconds, sizeof(*r->tl_latency));
        assert_non_null(r->tl_ok);
        assert_non_null(r->tl_latency);
    }
    return x;
}

static void fixture_free(struct fixture *x)
{
    compare_free(&x->c);
    free(x);
}

static void throughput_partial_interval(void **state)
{
    (void)state;
    struct fixture *x = fixture(1, 6, 5.178185521);
    static const uint32_t ok[] = {269, 175, 303, 306, 308, 16};
    memcpy(x->c.rows[0].tl_ok, ok, sizeof(ok));
    FILE *f = open_text();
    compare_time_charts(f, &x->c);
    close_text(f);
    has("<g class=\"series\" data-algorithm=\"redis\" data-interval-s=\"1\" "
        "data-counts=\"269,175,303,306,308,16\" "
        "data-lengths-s=\"1.000,1.000,1.000,1.000,1.000,0.178\" data-partial=\"last\">");
    /* 16 in 0.178185521 s */
    has("the last interval is 0.178 s long: its 16 acquired scaled to 89.8/s (dashed)");
    has("<path class=\"partial\"");
    fixture_free(x);
}

static void latency_worst_p99(void **state)
{
    (void)state;
    struct fixture *x = fixture(1, 3, 3.0);
    struct latency_second *l = x->c.rows[0].tl_latency;
    l[0] = (struct latency_second){.count = 10, .p50_ms = 1, .p99_ms = 2.5, .max_ms = 3};
    /* second 1: nothing granted (a pause): no level, not 0 */
    l[2] = (struct latency_second){.count = 4, .p50_ms = 100, .p99_ms = 2004.75, .max_ms = 2010};
    FILE *f = open_text();
    compare_time_charts(f, &x->c);
    close_text(f);
    has("data-p99-ms=\"2.500,-,2004.750\"");
    has("data-partial=\"none\"");
    fixture_free(x);
}

static void fault_band_as_lived(void **state)
{
    (void)state;
    struct fixture *x = fixture(2, 5, 5.0);
    x->scn.n_faults = 1;
    x->scn.faults[0].kind = 0;
    x->scn.faults[0].at_ms = 1000;
    x->scn.faults[0].duration_ms = 2000;
    const double span[2][2] = {{1.006, 3.007}, {1.003, 3.003}};
    for (size_t i = 0; i < 2; i++) {
        struct compare_row *r = &x->c.rows[i];
        r->n_faults = 1;
        r->faults[0] = (struct compare_fault){.kind = 0,
                                              .at_ms = 1000,
                                              .fired = true,
                                              .ended = true,
                                              .start_s = span[i][0],
                                              .end_s = span[i][1]};
    }
    FILE *f = open_text();
    compare_time_charts(f, &x->c);
    close_text(f);
    /* from the earliest start to the latest end, once per chart */
    const char *band =
        "<g data-fault=\"0\" data-from-s=\"1.003\" data-to-s=\"3.007\" data-planned-s=\"1.000\">";
    const char *second = strstr(text, band);
    assert_non_null(second);
    assert_non_null(strstr(second + 1, band));
    has("data-run=\"redis\" data-from-s=\"1.006\" data-to-s=\"3.007\"");
    has("data-run=\"zookeeper\" data-from-s=\"1.003\" data-to-s=\"3.003\"");
    char label[64];
    snprintf(label, sizeof(label), ">%s (as run)</text>", fault_type_name(0));
    has(label);
    fixture_free(x);
}

static void long_run_groups_seconds(void **state)
{
    (void)state;
    struct fixture *x = fixture(1, 1201, 1200.5); /* 600 intervals at most: 3 s each */
    for (size_t s = 0; s < 1201; s++)
        x->c.rows[0].tl_ok[s] = 2;
    FILE *f = open_text();
    compare_time_charts(f, &x->c);
    close_text(f);
    has("data-interval-s=\"3\"");
    /* 401 intervals: the last is second 1200 alone, 0.5 s of it */
    has(",6,2\" data-lengths-s=\"3.000,");
    has(",3.000,0.500\" data-partial=\"last\">");
    has("its 2 acquired scaled to 4.0/s");
    fixture_free(x);
}

/* Each lock of the registry its own colour, never red, the same at every
 * call: compare.html, matrix.html and scorecard.html draw a lock alike. */
static void every_lock_its_own_colour(void **state)
{
    (void)state;
    for (size_t i = 0; i < lock_count(); i++) {
        const char *a = report_algorithm_colour(lock_at(i)->name);
        assert_string_equal(a, report_algorithm_colour(lock_at(i)->name));
        assert_string_not_equal(a, "#d62728"); /* Tableau's red */
        assert_string_not_equal(a, "#ff9896");
        assert_string_not_equal(a, "#c62828"); /* the pages' FAIL and UNSAFE */
        for (size_t j = 0; j < i; j++)
            if (strcmp(a, report_algorithm_colour(lock_at(j)->name)) == 0)
                fail_msg("%s and %s share %s", lock_at(i)->name, lock_at(j)->name, a);
    }
    assert_string_equal(report_algorithm_colour("redis"), "#1f77b4");
    assert_string_equal(report_algorithm_colour("etcd"), "#9467bd");
    assert_string_equal(report_algorithm_colour("no-such-lock"), "#333333");
}

/* The per-algorithm span marks lie under the plot area, one lane each,
 * in the algorithm's colour; the x ticks' labels move down to make room. */
static void span_marks_under_the_plot(void **state)
{
    (void)state;
    struct fixture *x = fixture(2, 5, 5.0);
    x->scn.n_faults = 1;
    x->scn.faults[0].at_ms = 1000;
    x->scn.faults[0].duration_ms = 2000;
    for (size_t i = 0; i < 2; i++) {
        x->c.rows[i].n_faults = 1;
        x->c.rows[i].faults[0] = (struct compare_fault){
            .at_ms = 1000, .fired = true, .ended = true, .start_s = 1.0, .end_s = 3.0};
    }
    FILE *f = open_text();
    compare_time_charts(f, &x->c);
    close_text(f);
    /* 280 px and 2 lanes of 4 px plus 3: the plot from 24 to 240 as before */
    has("viewBox=\"0 0 1000 291\"");
    has("<rect class=\"frame\" x=\"70.0\" y=\"24.0\" width=\"910.0\" height=\"216.0\"/>");
    has("data-run=\"redis\" data-from-s=\"1.000\" data-to-s=\"3.000\" x=\"252.0\" "
        "y=\"242.0\" width=\"364.0\" height=\"3\" fill=\"#1f77b4\">");
    has("data-run=\"zookeeper\" data-from-s=\"1.000\" data-to-s=\"3.000\" x=\"252.0\" "
        "y=\"246.0\" width=\"364.0\" height=\"3\" fill=\"#2ca02c\">");
    has("<text class=\"tick\" x=\"70.0\" y=\"265.0\" text-anchor=\"middle\">");
    fixture_free(x);
}

/* A second with no grant on a log axis is drawn at 0, on its own row at
 * the plot's foot with a tick "0", not at the lowest decade. */
static void zero_on_a_log_axis(void **state)
{
    (void)state;
    struct fixture *x = fixture(1, 4, 4.0);
    static const uint32_t ok[] = {3000, 0, 30, 3000}; /* 100 times: a log axis */
    memcpy(x->c.rows[0].tl_ok, ok, sizeof(ok));
    FILE *f = open_text();
    compare_time_charts(f, &x->c);
    close_text(f);
    has("<text class=\"tick\" x=\"65.0\" y=\"244.0\" text-anchor=\"end\">0</text>");
    has("class=\"axis-break\"");
    /* 10 .. 10000 over 216 - 14 px above the row: 3000/s at 240 - 14 - 202 * 2.477 / 3,
     * 30/s at 240 - 14 - 202 * 0.477 / 3, none at 240 */
    has("d=\"M70.0 59.2L297.5 59.2L297.5 240.0L525.0 240.0L525.0 193.9L752.5 193.9L752.5 "
        "59.2L980.0 59.2\"");
    fixture_free(x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bar_label_inside),
        cmocka_unit_test(bar_label_beside),
        cmocka_unit_test(throughput_partial_interval),
        cmocka_unit_test(latency_worst_p99),
        cmocka_unit_test(fault_band_as_lived),
        cmocka_unit_test(long_run_groups_seconds),
        cmocka_unit_test(every_lock_its_own_colour),
        cmocka_unit_test(span_marks_under_the_plot),
        cmocka_unit_test(zero_on_a_log_axis),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    free(text);
    return rc;
}
