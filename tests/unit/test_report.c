/* test_report.c - the safety beside every verdict (reports/safety.c), case
 * by case with the exact words a person reads: a known-unsafe scenario
 * that PASSes must still say UNSAFE, a fenced run is safe, an incomplete
 * run says what it saw so far, and a run whose violations the host made
 * says so. Results are built by hand; nothing runs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reports/report.h"

static struct run_result res;
static struct violation listed[4];
static struct report_safety_sum sum;

/* A complete run that met its expectations, with no violation. */
static int fresh(void **state)
{
    (void)state;
    memset(&res, 0, sizeof(res));
    memset(listed, 0, sizeof(listed));
    memset(&sum, 0, sizeof(sum));
    res.complete = true;
    res.passed = true;
    res.witness_agrees = true;
    res.check.list = listed;
    return 0;
}

static void add_invariant(const char *name, bool holds, bool advisory)
{
    struct invariant *inv = &res.inv[res.n_inv++];
    snprintf(inv->name, sizeof(inv->name), "%s", name);
    inv->holds = holds;
    inv->advisory = advisory;
}

/* The expectation on violations as result_judge records it. */
static void expect_violations(const char *want, bool met)
{
    struct expect_record *e = &res.expects[res.n_expects++];
    snprintf(e->what, sizeof(e->what), "violations");
    snprintf(e->want, sizeof(e->want), "%s", want);
    snprintf(e->got, sizeof(e->got), "%llu", (unsigned long long)res.check.violations);
    e->met = met;
    res.passed = met;
}

static const char *text_of(void)
{
    static char buf[200];
    struct report_safety s = report_safety_of(&res);
    return report_safety_text(&s, buf, sizeof(buf));
}

static const char *line_of(void)
{
    static char buf[600];
    return report_verdict_line(&res, buf, sizeof(buf));
}

static void safe_run_passes_as_safe(void **state)
{
    (void)state;
    add_invariant("no_oversell", true, false);
    expect_violations("0", true);
    assert_string_equal(text_of(), "safe");
    assert_string_equal(line_of(), "PASS (safe)");
    struct report_safety s = report_safety_of(&res);
    assert_string_equal(report_safety_class(&s), "SAFE");
}

/* Overlaps the store's fencing rejected are safe: no violation. */
static void fenced_pairs_are_safe(void **state)
{
    (void)state;
    res.check.overlaps = 7;
    res.check.fenced_pairs = 7;
    res.rejected_accesses = 9;
    expect_violations("0", true);
    assert_string_equal(line_of(), "PASS (safe)");
}

/* The case: flash_sale_pause expects violations and gets them. */
static void unsafe_pass_says_unsafe_beside_pass(void **state)
{
    (void)state;
    res.check.violations = 110;
    add_invariant("no_oversell", false, false);
    add_invariant("stock_accounting", false, false);
    add_invariant("stock_never_negative", false, false);
    add_invariant("every_period_ran", false, true); /* availability: not safety */
    expect_violations(">0", true);
    assert_string_equal(text_of(), "UNSAFE: 110 violations, 3 invariants broken");
    assert_string_equal(line_of(), "PASS (expected UNSAFE: 110 violations, 3 invariants broken)");
    struct report_safety s = report_safety_of(&res);
    assert_false(s.safe);
    assert_int_equal(s.invariants_broken, 3);
    assert_string_equal(report_safety_class(&s), "UNSAFE");
}

static void unsafe_fail_gives_its_reason_after(void **state)
{
    (void)state;
    res.check.violations = 1;
    expect_violations("0", false);
    assert_string_equal(line_of(), "FAIL (UNSAFE: 1 violation) - violations: expected 0, got 1");
}

static void safe_fail_is_not_called_expected(void **state)
{
    (void)state;
    expect_violations(">0", false);
    assert_string_equal(line_of(), "FAIL (safe) - violations: expected >0, got 0");
}

/* A correct lock whose configuration broke the business (a hold shorter
 * than the instances' lateness): mutual exclusion held, the rest did not. */
static void safe_with_a_broken_invariant_says_but(void **state)
{
    (void)state;
    add_invariant("no_duplicate_runs", false, false);
    assert_string_equal(text_of(), "safe, but 1 invariant broken");
    struct report_safety s = report_safety_of(&res);
    assert_string_equal(report_safety_class(&s), "CAUTION");
}

static void incomplete_says_what_it_saw_so_far(void **state)
{
    (void)state;
    res.check.violations = 3;
    expect_violations(">0", true);
    res.complete = false;
    snprintf(res.incomplete_reason, sizeof(res.incomplete_reason), "interrupted after 2.0 s");
    assert_string_equal(line_of(),
                        "INCOMPLETE (UNSAFE so far: 3 violations) - interrupted after 2.0 s; "
                        "so far the expectations held");
    res.check.violations = 0;
    expect_violations("0", true);
    assert_string_equal(
        line_of(),
        "INCOMPLETE (safe so far) - interrupted after 2.0 s; so far the expectations held");
    struct report_safety s = report_safety_of(&res);
    assert_string_equal(report_safety_class(&s), "CAUTION");
}

/* Lost history events leave the count short, whatever the verdict. */
static void dropped_events_make_it_so_far(void **state)
{
    (void)state;
    res.hist.dropped = 12;
    res.passed = false;
    assert_string_equal(line_of(),
                        "FAIL (safe so far) - 12 history events were lost (out of memory): "
                        "no verdict");
}

/* Two violations, each inside a 700 ms host stall past a 200 ms slack,
 * no fault near: result_host_made_violations says yes, and result_judge
 * made the run INCOMPLETE. The run did end: its count is whole. */
static void host_made_violations_are_named(void **state)
{
    (void)state;
    res.hist.metered = true;
    res.hist.ttl_ms = 300;
    res.hist.slack_ms = 200;
    res.check.violations = 2;
    res.check.overlaps = 2;
    res.check.n_list = 2;
    for (size_t i = 0; i < 2; i++) {
        listed[i].stall_ns = 700000000u;
        listed[i].stall_from_ns = 1000000000u;
    }
    expect_violations("0", false);
    res.complete = false;
    snprintf(res.incomplete_reason, sizeof(res.incomplete_reason), "the host stalled");
    struct report_safety s = report_safety_of(&res);
    assert_true(s.host_made);
    assert_false(s.so_far);
    assert_string_equal(line_of(), "INCOMPLETE (UNSAFE: 2 violations, all in host stalls) - "
                                   "the host stalled; so far FAIL: violations: expected 0, got 2");
    listed[1].n_faults = 1; /* a fault near one of them: the lock's to answer for */
    assert_string_equal(text_of(), "UNSAFE so far: 2 violations");
}

static void json_carries_the_same(void **state)
{
    (void)state;
    res.check.violations = 110;
    add_invariant("no_oversell", false, false);
    struct report_safety s = report_safety_of(&res);
    json_t *j = report_safety_json(&s);
    char *text = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
    assert_string_equal(text, "{\"safe\":false,\"violations\":110,\"invariants_broken\":1,"
                              "\"so_far\":false,\"host_made\":false,"
                              "\"text\":\"UNSAFE: 110 violations, 1 invariant broken\"}");
    free(text);
    json_decref(j);
}

static void add_run(uint64_t violations, bool so_far, const char *name)
{
    struct report_safety s = {.safe = violations == 0, .violations = violations, .so_far = so_far};
    report_safety_add(&sum, &s, name);
}

static const char *sum_text(void)
{
    static char buf[400];
    return report_safety_sum_text(&sum, buf, sizeof(buf));
}

static const char *sum_word(void)
{
    static char buf[32];
    return report_safety_sum_word(&sum, buf, sizeof(buf));
}

static void sum_of_none(void **state)
{
    (void)state;
    assert_string_equal(sum_text(), "nothing ran");
    assert_string_equal(sum_word(), "-");
    assert_string_equal(report_safety_sum_class(&sum), "NOTRUN");
}

static void sum_of_unsafe_runs_names_them(void **state)
{
    (void)state;
    add_run(122, false, "redis");
    add_run(117, false, "redlock");
    add_run(41, false, "zookeeper");
    assert_string_equal(sum_text(),
                        "UNSAFE: 280 violations in 3 of 3 runs (redis, redlock, zookeeper)");
    assert_string_equal(sum_word(), "UNSAFE");
    assert_string_equal(report_safety_sum_class(&sum), "UNSAFE");
}

static void sum_of_some_unsafe_counts_them(void **state)
{
    (void)state;
    add_run(0, false, "redis");
    add_run(1, true, "redis-naive");
    add_run(0, false, "zookeeper");
    assert_string_equal(sum_text(), "UNSAFE so far: 1 violation in 1 of 3 runs (redis-naive)");
    assert_string_equal(sum_word(), "UNSAFE 1/3");
}

static void sum_of_safe_runs(void **state)
{
    (void)state;
    add_run(0, false, NULL);
    assert_string_equal(sum_text(), "safe (1 run)");
    add_run(0, true, NULL);
    assert_string_equal(sum_text(), "safe so far (2 runs)");
    assert_string_equal(sum_word(), "safe");
    assert_string_equal(report_safety_sum_class(&sum), "CAUTION");
    json_t *j = report_safety_sum_json(&sum);
    assert_true(json_is_true(json_object_get(j, "safe")));
    assert_int_equal(json_integer_value(json_object_get(j, "unsafe_runs")), 0);
    json_decref(j);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(safe_run_passes_as_safe, fresh),
        cmocka_unit_test_setup(fenced_pairs_are_safe, fresh),
        cmocka_unit_test_setup(unsafe_pass_says_unsafe_beside_pass, fresh),
        cmocka_unit_test_setup(unsafe_fail_gives_its_reason_after, fresh),
        cmocka_unit_test_setup(safe_fail_is_not_called_expected, fresh),
        cmocka_unit_test_setup(safe_with_a_broken_invariant_says_but, fresh),
        cmocka_unit_test_setup(incomplete_says_what_it_saw_so_far, fresh),
        cmocka_unit_test_setup(dropped_events_make_it_so_far, fresh),
        cmocka_unit_test_setup(host_made_violations_are_named, fresh),
        cmocka_unit_test_setup(json_carries_the_same, fresh),
        cmocka_unit_test_setup(sum_of_none, fresh),
        cmocka_unit_test_setup(sum_of_unsafe_runs_names_them, fresh),
        cmocka_unit_test_setup(sum_of_some_unsafe_counts_them, fresh),
        cmocka_unit_test_setup(sum_of_safe_runs, fresh),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
