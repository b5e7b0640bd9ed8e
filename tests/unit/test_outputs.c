/* test_outputs.c - what other tools read (reports/percentiles.c,
 * reports/csv.c) and the live line's figure (sim/engine/live.c), with the
 * exact text expected: --percentiles read as memtier spells it and refused
 * with the bad value named, its keys and column names, the CSV of a run
 * and of a comparison built by hand (RFC 4180 quoting), and the coarse p99
 * shown with the two digits it has. Nothing runs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reports/csv.h"
#include "reports/report.h"
#include "sim/cli/cli.h"
#include "sim/engine/live.h"
#include "sim/record/histogram.h"
#include "tests/lib/capture.h"

static void percentiles_read_as_memtier_spells_them(void **state)
{
    (void)state;
    double p[RESULT_MAX_PERCENTILES];
    char why[160];
    assert_int_equal(report_parse_percentiles("50,99,99.9,99.99", p, why, sizeof(why)), 4);
    assert_true(p[0] == 50 && p[1] == 99 && p[2] == 99.9 && p[3] == 99.99);
    assert_int_equal(report_parse_percentiles("100", p, why, sizeof(why)), 1);
    assert_true(p[0] == 100);
    assert_int_equal(report_parse_percentiles("0.5,1e2", p, why, sizeof(why)), 2);
    assert_true(p[0] == 0.5 && p[1] == 100);
    assert_int_equal(report_parse_percentiles("1,2,3,4,5,6,7,8,9,10", p, why, sizeof(why)), 10);
}

static void bad_percentiles_name_the_bad_value(void **state)
{
    (void)state;
    static const struct {
        const char *arg, *why;
    } cases[] = {
        {"0", "expected numbers in (0, 100] separated by commas, got \"0\""},
        {"50,100.5", "expected numbers in (0, 100] separated by commas, got \"100.5\""},
        {"50,,99", "expected numbers in (0, 100] separated by commas, got \"\""},
        {"50,", "expected numbers in (0, 100] separated by commas, got \"\""},
        {"", "expected numbers in (0, 100] separated by commas, got \"\""},
        {"-1", "expected numbers in (0, 100] separated by commas, got \"-1\""},
        {"nan", "expected numbers in (0, 100] separated by commas, got \"nan\""},
        {"0x10", "expected numbers in (0, 100] separated by commas, got \"0x10\""},
        {"99 ", "expected numbers in (0, 100] separated by commas, got \"99 \""},
        {"p99", "expected numbers in (0, 100] separated by commas, got \"p99\""},
        {"99,99.0", "99.0 is named twice"},
        {"1,2,3,4,5,6,7,8,9,10,11",
         "at most 10 percentiles, got more in \"1,2,3,4,5,6,7,8,9,10,11\""},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        double p[RESULT_MAX_PERCENTILES];
        char why[160] = "";
        assert_int_equal(report_parse_percentiles(cases[i].arg, p, why, sizeof(why)), 0);
        assert_string_equal(why, cases[i].why);
    }
}

static void keys_and_labels(void **state)
{
    (void)state;
    static const struct {
        double p;
        const char *key, *label;
    } cases[] = {{50, "p50.00", "p50"},          {90, "p90.00", "p90"},
                 {99.9, "p99.90", "p99.9"},      {99.99, "p99.99", "p99.99"},
                 {99.999, "p99.999", "p99.999"}, {0.5, "p0.50", "p0.5"},
                 {100, "p100.00", "max"}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char key[40], label[40];
        assert_string_equal(report_percentile_key(cases[i].p, key, sizeof(key)), cases[i].key);
        assert_string_equal(report_percentile_label(cases[i].p, label, sizeof(label)),
                            cases[i].label);
    }
}

/* A run of 2 s: 999 acquires of 1..999 us (exact at three digits), none
 * released, 3 acquire errors of which 1 unsent; 2 violations, so FAIL and
 * unsafe on every line. */
static void run_csv_is_exact(void **state)
{
    (void)state;
    struct run_result *r = calloc(1, sizeof(*r));
    struct scenario *s = calloc(1, sizeof(*s));
    assert_true(r && s);
    scenario_defaults(s);
    snprintf(s->name, sizeof(s->name), "flash_sale_pause");
    r->scn = s;
    r->algorithm = "redis-naive";
    r->complete = true;
    r->invariants_hold = true;
    r->check.violations = 2;
    for (int k = 0; k < OP_COUNT; k++)
        assert_non_null(r->ops[k] = histogram_new(1, 3600000000LL, 3));
    for (int64_t us = 1; us <= 999; us++)
        histogram_record(r->ops[OP_ACQUIRE], us);
    r->elapsed_s = 2.0;
    r->stat[ST_ACQUIRE_ERR] = 3;
    r->stat[ST_ACQUIRE_NO_EFFECT] = 1;
    const double pct[] = {50, 99, 99.9, 100};
    memcpy(r->percentiles, pct, sizeof(pct));
    r->n_percentiles = 4;
    struct capture out;
    report_csv(capture_open(&out), r);
    const char *text = capture_text(&out);
    assert_string_equal(
        text, "operation,count,per_second,mean_ms,p50_ms,p99_ms,p99.9_ms,p100_ms,"
              "errors,ambiguous,verdict,safe,violations,invariants_hold,scenario,algorithm\n"
              "acquire,999,499.500,0.500,0.500,0.990,0.999,0.999,3,2,"
              "FAIL,false,2,true,flash_sale_pause,redis-naive\n"
              "acquire_failed,0,0.000,,,,,,,,FAIL,false,2,true,flash_sale_pause,redis-naive\n"
              "release,0,0.000,,,,,,0,0,FAIL,false,2,true,flash_sale_pause,redis-naive\n"
              "hold,0,0.000,,,,,,,,FAIL,false,2,true,flash_sale_pause,redis-naive\n"
              "step,0,0.000,,,,,,,,FAIL,false,2,true,flash_sale_pause,redis-naive\n");
    free(out.text);
    for (int k = 0; k < OP_COUNT; k++)
        histogram_free(r->ops[k]);
    free(s);
    free(r);
}

/* A fault window of a row: what it cost, as the availability measured it. */
static void window(struct compare_row *row, uint64_t granted, uint64_t within, uint64_t failed,
                   uint64_t ambiguous, uint64_t no_grant_ns, uint64_t recovery_ns)
{
    struct compare_fault *k = &row->faults[row->n_faults++];
    k->fired = k->ended = k->has_avail = true;
    k->avail = (struct fault_availability){.granted = granted,
                                           .granted_within = within,
                                           .failed = failed,
                                           .ambiguous = ambiguous,
                                           .longest_no_grant_ns = no_grant_ns,
                                           .recovery_ns = recovery_ns};
}

/* A comparison by hand: a row that ran through two fault windows (and a
 * fault that never fired), one NOT RUN whose note needs quoting, one whose
 * window never recovered, one whose only fault never fired; the default
 * percentiles. */
static void compare_csv_quotes_what_it_must(void **state)
{
    (void)state;
    struct comparison *c = calloc(1, sizeof(*c));
    struct scenario *s = calloc(1, sizeof(*s));
    assert_true(c && s);
    scenario_defaults(s);
    snprintf(s->name, sizeof(s->name), "flash_sale_pause");
    c->scn = s;
    struct compare_row *a = &c->rows[c->n++], *b = &c->rows[c->n++];
    struct compare_row *d = &c->rows[c->n++], *e = &c->rows[c->n++];
    snprintf(a->algorithm, sizeof(a->algorithm), "redis");
    snprintf(a->verdict, sizeof(a->verdict), "PASS");
    snprintf(a->run_dir, sizeof(a->run_dir), "runs/x,y/redis");
    a->ran = a->has_latency = a->invariants_hold = true;
    a->safety.safe = true;
    a->elapsed_s = 1.25;
    a->steps = 10;
    a->acquired = 9;
    a->busy = 1;
    a->qps = 7.2;
    const double ms[] = {0.125, 0.25, 0.5, 1, 2};
    memcpy(a->acquire_pct_ms, ms, sizeof(ms));
    snprintf(b->algorithm, sizeof(b->algorithm), "redlock");
    snprintf(b->verdict, sizeof(b->verdict), "NOT RUN");
    snprintf(b->note, sizeof(b->note), "the scenario checks fencing tokens (\"fencing\": true)");
    window(a, 5, 3, 7, 1, 1234567, 2500000);
    a->n_faults++; /* fired never: no window, not counted */
    window(a, 1, 1, 2, 0, 2000000, 1000000);
    a->stuck_lock_ms = 812.5;
    snprintf(d->algorithm, sizeof(d->algorithm), "redis-naive");
    snprintf(d->verdict, sizeof(d->verdict), "UNSAFE");
    d->ran = true;
    d->violations = 4;
    window(d, 0, 0, 12, 3, 1500000000, AVAIL_NEVER);
    d->stuck_lock_ms = 1500.25;
    snprintf(e->algorithm, sizeof(e->algorithm), "zookeeper");
    snprintf(e->verdict, sizeof(e->verdict), "safe");
    e->ran = e->safety.safe = true;
    e->n_faults = 1;
    struct capture out;
    compare_csv(capture_open(&out), c);
    const char *text = capture_text(&out);
    assert_string_equal(
        text, "algorithm,verdict,safe,violations,elapsed_s,steps,acquired,busy,errors,per_second,"
              "p50_ms,p90_ms,p99_ms,p99.9_ms,p100_ms,fenced_pairs,rejected_accesses,"
              "invariants_hold,run_dir,note,scenario,fault_windows,fault_granted,"
              "fault_granted_within,fault_failed,fault_ambiguous,fault_longest_no_grant_ms,"
              "fault_recovered,fault_recovery_ms,stuck_ms\n"
              "redis,PASS,true,0,1.250,10,9,1,0,7.200,0.125,0.250,0.500,1.000,2.000,0,0,true,"
              "\"runs/x,y/redis\",,flash_sale_pause,2,6,4,9,1,2.000,true,2.500,812.500\n"
              "redlock,NOT RUN,,,,,,,,,,,,,,,,,,\"the scenario checks fencing tokens "
              "(\"\"fencing\"\": true)\",flash_sale_pause,,,,,,,,,\n"
              "redis-naive,UNSAFE,false,4,0.000,0,0,0,0,0.000,,,,,,0,0,false,,,flash_sale_pause,"
              "1,0,0,12,3,1500.000,false,,1500.250\n"
              "zookeeper,safe,true,0,0.000,0,0,0,0,0.000,,,,,,0,0,false,,,flash_sale_pause,"
              "0,,,,,,,,0.000\n");
    free(out.text);
    free(s);
    free(c);
}

/* compare's table with --percentiles 50,99.999: those columns, the wide
 * one as wide as its head; "-" for a row without a grant. */
static void compare_table_shows_the_chosen_percentiles(void **state)
{
    (void)state;
    struct comparison *c = calloc(1, sizeof(*c));
    struct scenario *s = calloc(1, sizeof(*s));
    assert_true(c && s);
    scenario_defaults(s); /* a scenario always names its workload */
    snprintf(s->name, sizeof(s->name), "flash_sale");
    c->scn = s;
    c->complete = true;
    c->percentiles[0] = 50;
    c->percentiles[1] = 99.999;
    c->n_percentiles = 2;
    struct compare_row *a = &c->rows[c->n++], *b = &c->rows[c->n++];
    snprintf(a->algorithm, sizeof(a->algorithm), "redis");
    snprintf(a->verdict, sizeof(a->verdict), "safe");
    a->ttl_ms = a->lease_ms = 500;
    a->n_seeds = 1;
    a->seeds[0] =
        (struct compare_seed){.seed = 1, .ran = true, .complete = true, .safety.safe = true};
    a->ran = a->has_latency = true;
    a->safety.safe = true;
    a->acquire_pct_ms[0] = 0.125;
    a->acquire_pct_ms[1] = 507.714;
    snprintf(b->algorithm, sizeof(b->algorithm), "zookeeper");
    snprintf(b->verdict, sizeof(b->verdict), "safe");
    b->ttl_ms = 500;
    b->lease_ms = 1000;
    b->n_seeds = 1;
    b->seeds[0] =
        (struct compare_seed){.seed = 1, .ran = true, .complete = true, .safety.safe = true};
    b->ran = true;
    b->safety.safe = true;
    struct capture out;
    compare_terminal(capture_open(&out), c, true);
    const char *text = capture_text(&out);
    assert_non_null(strstr(text,
                           "\nalgorithm    ttl ms lease ms       qps    p50 ms p99.999 ms  "
                           "max/min    failed  stuck s violations  safety  invariants\n"
                           "redis           500      500       0.0     0.125    507.714        "
                           "-         0    0.000          0  safe    \n"
                           "zookeeper       500     1000       0.0         -          -        "
                           "-         0    0.000          0  safe    \n"));
    free(out.text);
    free(s);
    free(c);
}

/* The live p99 is a bucket's upper edge, known to within 25%: two
 * significant digits, never three decimals on 330 ms. */
static void live_p99_has_two_digits(void **state)
{
    (void)state;
    static const struct {
        uint64_t us;
        const char *text;
    } cases[] = {{1, "0.001"},  {5, "0.005"},     {48, "0.048"},   {99, "0.099"},
                 {100, "0.10"}, {127, "0.13"},    {1000, "1.0"},   {1279, "1.3"},
                 {9960, "10"},  {10239, "10"},    {327679, "330"}, {2621439, "2600"},
                 {995, "1.0"},  {999999, "1000"}, {54, "0.054"}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char buf[32];
        assert_string_equal(live_ms_text(cases[i].us, buf, sizeof(buf)), cases[i].text);
    }
}

/* The whole live line, as a log shows it every 10 s. */
static void live_line_says_about(void **state)
{
    (void)state;
    struct progress p = {.elapsed_s = 10.04,
                         .steps = 21654,
                         .acquired = 21650,
                         .failed = 4,
                         .witness = 0,
                         .acquire_p99_us = 327679,
                         .running = 9,
                         .clients = 32};
    char line[256];
    assert_string_equal(face_text(&p, 2148.4, line, sizeof(line)),
                        "[  10.0s]     2148 steps/s  acquire p99 ~330 ms  acquired 21650     "
                        "failed 4       concurrent entries 0     clients running 9/32");
    p.acquire_p99_us = 0; /* no grant in the last second */
    assert_string_equal(face_text(&p, 0, line, sizeof(line)),
                        "[  10.0s]        0 steps/s  acquire p99 -  acquired 21650     "
                        "failed 4       concurrent entries 0     clients running 9/32");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(percentiles_read_as_memtier_spells_them),
        cmocka_unit_test(bad_percentiles_name_the_bad_value),
        cmocka_unit_test(keys_and_labels),
        cmocka_unit_test(run_csv_is_exact),
        cmocka_unit_test(compare_csv_quotes_what_it_must),
        cmocka_unit_test(compare_table_shows_the_chosen_percentiles),
        cmocka_unit_test(live_p99_has_two_digits),
        cmocka_unit_test(live_line_says_about),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
