/* test_html_charts.c - report.html's time charts on a run built by hand
 * (reports/html_charts.c), with the exact marks a test or a reader finds:
 * the partial last interval scaled to its length, the log rate axis when a
 * fault cuts the rate below a twentieth and not otherwise, overlapping
 * violations merged into one span and a distant one apart (a fenced pair
 * left out), and the stale holder's lease end at grant + ttl. Nothing
 * runs; the page is written into memory. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reports/html_parts.h"

#define S  1000000000ULL
#define MS 1000000ULL
#define T0 (100 * S)

static struct run_result res;
static uint32_t ok[6], fail[6];
static struct violation listed[4];

static struct section sec(uint32_t client, uint64_t from, uint64_t to)
{
    return (struct section){
        .client = client, .owner = client, .from_ns = T0 + from, .to_ns = T0 + to};
}

/* 5.25 s: five whole seconds and a quarter; one stale holder (client 1,
 * granted at 1 s, ttl 500 ms) overlapped by clients 2 and 3 at 1.5 s and
 * by client 4 at 2.5 s; client 5's pair was fenced. */
static int fresh(void **state)
{
    (void)state;
    memset(&res, 0, sizeof(res));
    static const uint32_t rates[6] = {300, 300, 30, 30, 300, 63};
    memcpy(ok, rates, sizeof(ok));
    memset(fail, 0, sizeof(fail));
    res.t0_mono_ns = T0;
    res.elapsed_s = 5.25;
    res.tl_len = 6;
    res.tl_ok = ok;
    res.tl_fail = fail;
    res.hist.ttl_ms = 500;
    struct section a = sec(1, 1 * S, 3 * S);
    listed[0] = (struct violation){.sa = a, .sb = sec(2, 1500 * MS, 1510 * MS)};
    listed[1] = (struct violation){.sa = a, .sb = sec(3, 1505 * MS, 1520 * MS)};
    listed[2] = (struct violation){.sa = a, .sb = sec(5, 2000 * MS, 2010 * MS), .fenced = true};
    listed[3] = (struct violation){.sa = a, .sb = sec(4, 2500 * MS, 2600 * MS)};
    res.check.list = listed;
    res.check.n_list = 4;
    res.check.violations = 3;
    return 0;
}

static char *throughput(void)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    html_throughput_chart(f, &res);
    assert_int_equal(fclose(f), 0);
    return buf;
}

static size_t count(const char *page, const char *what)
{
    size_t n = 0;
    for (const char *p = page; (p = strstr(p, what)) != NULL; p++)
        n++;
    return n;
}

static void test_partial_interval(void **state)
{
    (void)state;
    char *page = throughput();
    /* 63 steps in 0.25 s: 252 per second, not a fall to 63 */
    assert_non_null(strstr(page, "<g class=\"partial\" data-from-s=\"5\" data-length-s=\"0.250\" "
                                 "data-ok=\"63\" data-failed=\"0\" data-ok-per-s=\"252.000\" "
                                 "data-failed-per-s=\"0.000\">"));
    assert_int_equal(count(page, "class=\"partial-step\""), 2); /* ok and failed */
    /* 30/s is a tenth of 300/s: linear */
    assert_null(strstr(page, "log scale"));
    free(page);

    res.elapsed_s = 6.0; /* a whole last second: nothing partial */
    page = throughput();
    assert_null(strstr(page, "class=\"partial\""));
    assert_null(strstr(page, "partial-step"));
    free(page);
}

static void test_log_axis(void **state)
{
    (void)state;
    static const uint32_t rates[6] = {3000, 3000, 30, 0, 3000, 750};
    memcpy(ok, rates, sizeof(ok));
    char *page = throughput();
    /* 30/s is a hundredth of 3000/s: log, from 10 to 10,000, and the 0 a gap */
    assert_non_null(strstr(page, "steps per second (log scale; 0 left out)"));
    assert_non_null(strstr(page, ">10</text>"));
    assert_non_null(strstr(page, ">10000</text>"));
    assert_null(strstr(page, ">0</text>"));
    free(page);
}

static void test_violation_spans(void **state)
{
    (void)state;
    char *page = throughput();
    /* clients 2 and 3 overlap client 1 from 1.5 s to 1.52 s: one span of
     * two pairs; client 4's 2.5 .. 2.6 s apart; client 5's fenced pair none */
    assert_non_null(strstr(page, "<g class=\"vspan\" data-from-s=\"1.500000\" "
                                 "data-to-s=\"1.520000\" data-pairs=\"2\">"));
    assert_non_null(strstr(page, "<g class=\"vspan\" data-from-s=\"2.500000\" "
                                 "data-to-s=\"2.600000\" data-pairs=\"1\">"));
    assert_int_equal(count(page, "class=\"vspan\""), 2);
    /* one stale holder, one lease end: granted 1 s + 500 ms */
    assert_int_equal(count(page, "class=\"lease\""), 1);
    assert_non_null(strstr(page, "<g class=\"lease\" data-client=\"1\" data-granted-s=\"1.000000\" "
                                 "data-ttl-ms=\"500\" data-at-s=\"1.500000\">"));
    assert_non_null(strstr(page, "client 1's lease ends (1.00 s + 500 ms)"));
    free(page);

    res.hist.ttl_ms = 0; /* no lease known: no marker */
    page = throughput();
    assert_int_equal(count(page, "class=\"lease\""), 0);
    free(page);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_partial_interval, fresh),
        cmocka_unit_test_setup(test_log_axis, fresh),
        cmocka_unit_test_setup(test_violation_spans, fresh),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
