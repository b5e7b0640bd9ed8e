/* test_settle.c - the rule compare waits by between two algorithms
 * (sim/fleet/settle.h), fed CPU samples with exact values: a server is
 * quiet under 5 % of a core over a window, busy from 5 % on; the fleet
 * settles when every server was quiet over the same window; the bound ends
 * the wait with the busy ones named; a clock that did not move decides
 * nothing; a server started again counts from zero. And the /proc reader:
 * a server's CPU time includes its live children's (PostgreSQL's
 * backends), and a gone process has none.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sim/fleet/settle.h"

static void quiet_in_the_first_window(void **state)
{
    (void)state;
    struct settle s;
    const uint64_t t0[2] = {100, 200}, t1[2] = {110, 220};
    settle_begin(&s, 2, t0, 1000, 15000);
    assert_int_equal(settle_sample(&s, t1, 1500), SETTLE_QUIET);
    assert_int_equal(s.busy_pct[0], 2); /* 10 ms of 500 */
    assert_int_equal(s.busy_pct[1], 4); /* 20 ms of 500 */
    assert_false(s.ever_busy[0]);
    assert_false(s.ever_busy[1]);
}

static void five_percent_of_a_core_is_busy(void **state)
{
    (void)state;
    struct settle s;
    const uint64_t t0[1] = {0}, under[1] = {24}, at[1] = {24 + 25};
    settle_begin(&s, 1, t0, 0, 15000);
    assert_int_equal(settle_sample(&s, under, 500), SETTLE_QUIET); /* 4.8 % */
    assert_int_equal(settle_sample(&s, at, 1000), SETTLE_BUSY);    /* 5.0 % */
    assert_int_equal(s.busy_pct[0], 5);
    assert_true(s.ever_busy[0]);
}

/* One server busy, then quiet: settled once every server is quiet in the
 * same window, and the busy one is remembered as waited for. */
static void busy_then_quiet_settles_and_names_the_busy(void **state)
{
    (void)state;
    struct settle s;
    const uint64_t a[2] = {1000, 50}, b[2] = {1300, 55}, c[2] = {1310, 400}, d[2] = {1312, 401};
    settle_begin(&s, 2, a, 0, 15000);
    assert_int_equal(settle_sample(&s, b, 500), SETTLE_BUSY); /* 60 % and 1 % */
    assert_int_equal(s.busy_pct[0], 60);
    assert_true(s.busy[0]);
    assert_false(s.busy[1]);
    assert_int_equal(settle_sample(&s, c, 1000), SETTLE_BUSY); /* 2 % and 69 % */
    assert_int_equal(s.busy_pct[1], 69);
    assert_int_equal(settle_sample(&s, d, 1500), SETTLE_QUIET);
    assert_true(s.ever_busy[0]);
    assert_true(s.ever_busy[1]);
    assert_int_equal(s.last_ms - s.start_ms, 1500);
}

static void the_bound_ends_a_wait_on_a_busy_server(void **state)
{
    (void)state;
    struct settle s;
    const uint64_t a[1] = {0}, b[1] = {400}, c[1] = {800};
    settle_begin(&s, 1, a, 10000, 1000);
    assert_int_equal(settle_sample(&s, b, 10500), SETTLE_BUSY);  /* 500 ms in */
    assert_int_equal(settle_sample(&s, c, 11000), SETTLE_BOUND); /* 1000 ms in, 80 % */
    assert_int_equal(s.busy_pct[0], 80);
}

/* Quiet at the bound is quiet: the bound only says the wait ran out. */
static void quiet_at_the_bound_is_quiet(void **state)
{
    (void)state;
    struct settle s;
    const uint64_t a[1] = {0}, b[1] = {400}, c[1] = {401};
    settle_begin(&s, 1, a, 0, 1000);
    assert_int_equal(settle_sample(&s, b, 500), SETTLE_BUSY);
    assert_int_equal(settle_sample(&s, c, 1000), SETTLE_QUIET);
}

static void a_clock_that_did_not_move_decides_nothing(void **state)
{
    (void)state;
    struct settle s;
    const uint64_t a[1] = {0}, b[1] = {0};
    settle_begin(&s, 1, a, 700, 1000);
    assert_int_equal(settle_sample(&s, b, 700), SETTLE_BUSY);
    assert_int_equal(s.last_ms, 700);
    s.max_ms = 0; /* the same sample, once the bound has passed */
    assert_int_equal(settle_sample(&s, b, 700), SETTLE_BOUND);
}

/* A server a fault started again has a new CPU time, smaller than the
 * last: all of it is what it did since. */
static void a_restarted_server_counts_from_zero(void **state)
{
    (void)state;
    struct settle s;
    const uint64_t a[1] = {5000}, b[1] = {30}, c[1] = {40};
    settle_begin(&s, 1, a, 0, 15000);
    assert_int_equal(settle_sample(&s, b, 500), SETTLE_BUSY); /* 30 ms: 6 % */
    assert_int_equal(s.busy_pct[0], 6);
    assert_int_equal(settle_sample(&s, c, 1000), SETTLE_QUIET);
}

static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A child that burnt 300 ms of CPU and stopped (alive, not reaped) counts
 * in its parent's CPU time; once reaped it is gone and its pid reads -1. */
static void a_server_counts_its_live_children(void **state)
{
    (void)state;
    int64_t before = settle_cpu_ms((int)getpid());
    assert_true(before >= 0);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        volatile uint64_t x = 0;
        double start = cpu_s();
        for (uint64_t i = 0; i < 4000000000ULL && cpu_s() - start < 0.3; i++)
            x += i;
        kill(getpid(), SIGSTOP); /* stopped, not gone: its CPU time stays readable */
        _exit(0);
    }
    int st;
    assert_int_equal(waitpid(child, &st, WUNTRACED), child);
    assert_true(WIFSTOPPED(st));
    int64_t own = settle_cpu_ms((int)child);
    assert_true(own >= 250); /* ticks are sampled: some slack */
    assert_true(settle_cpu_ms((int)getpid()) - before >= own);
    assert_int_equal(kill(child, SIGKILL), 0);
    assert_int_equal(waitpid(child, &st, 0), child);
    assert_int_equal(settle_cpu_ms((int)child), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(quiet_in_the_first_window),
        cmocka_unit_test(five_percent_of_a_core_is_busy),
        cmocka_unit_test(busy_then_quiet_settles_and_names_the_busy),
        cmocka_unit_test(the_bound_ends_a_wait_on_a_busy_server),
        cmocka_unit_test(quiet_at_the_bound_is_quiet),
        cmocka_unit_test(a_clock_that_did_not_move_decides_nothing),
        cmocka_unit_test(a_restarted_server_counts_from_zero),
        cmocka_unit_test(a_server_counts_its_live_children),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
