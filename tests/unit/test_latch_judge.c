/* test_latch_judge.c - the latch workload's judgement of one waiter's
 * round (latch_judge), case by case with exact times: 3 parties, a bound
 * of 100 ms, times in ms since an origin of 1 s. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "sim/check/latch_check.h"

#define MS(t) (1000000000ULL + (uint64_t)(t)*1000000ULL)

/* A round of 3 parties, all sent and answered by zero_ms (0: not yet),
 * the waiter able to pass from from_ms, looked at at_ms. */
static struct latch_round_view round_of(uint32_t sent, uint64_t zero_ms, uint64_t from_ms,
                                        uint64_t at_ms)
{
    return (struct latch_round_view){
        .parties = 3,
        .sent = sent,
        .zero_ns = zero_ms ? MS(zero_ms) : 0,
        .from_ns = MS(from_ms),
        .at_ns = MS(at_ms),
        .bound_ms = 100,
    };
}

/* Through with 2 of 3 countDowns sent: early, whatever the times. */
static void pass_before_the_last_count_down_is_early(void **state)
{
    (void)state;
    uint64_t after = 7;
    struct latch_round_view v = round_of(2, 0, 0, 50);
    assert_int_equal(latch_judge(&v, 1, &after), LATCH_EARLY);
    assert_int_equal(after, 0);
    /* not through with 2 sent: nothing is due yet */
    assert_int_equal(latch_judge(&v, 0, &after), LATCH_ON_TIME);
}

/* All sent, the last answer not yet back: through between the zero and
 * its answer, on time (the zero existed; its time is not known yet). */
static void pass_before_the_last_answer_is_on_time(void **state)
{
    (void)state;
    uint64_t after = 7;
    struct latch_round_view v = round_of(3, 0, 0, 50);
    assert_int_equal(latch_judge(&v, 1, &after), LATCH_ON_TIME);
    assert_int_equal(after, 0);
}

/* Zero answered at 200, the waiter awaiting since 10: 100 ms after is
 * the bound itself (on time), 100.000001 ms is late. */
static void the_bound_counts_from_the_zero(void **state)
{
    (void)state;
    uint64_t after;
    struct latch_round_view v = round_of(3, 200, 10, 300);
    assert_int_equal(latch_judge(&v, 1, &after), LATCH_ON_TIME);
    assert_int_equal(after, 100000000ULL);
    v.at_ns += 1;
    assert_int_equal(latch_judge(&v, 1, &after), LATCH_LATE);
    assert_int_equal(after, 100000001ULL);
}

/* A waiter paused from 150 to 2150 through the zero at 200 passes at
 * 2180: 30 ms after its resumption, on time; had the bound counted from
 * the zero, 1980 ms late. */
static void a_paused_waiter_counts_from_its_resumption(void **state)
{
    (void)state;
    uint64_t after;
    struct latch_round_view v = round_of(3, 200, 2150, 2180);
    assert_int_equal(latch_judge(&v, 1, &after), LATCH_ON_TIME);
    assert_int_equal(after, 30000000ULL);
    v.from_ns = MS(10);
    assert_int_equal(latch_judge(&v, 1, &after), LATCH_LATE);
    assert_int_equal(after, 1980000000ULL);
}

/* Not through at the run's end: missed once the bound is past, not
 * before. */
static void not_through_at_the_end(void **state)
{
    (void)state;
    uint64_t after;
    struct latch_round_view v = round_of(3, 200, 10, 250);
    assert_int_equal(latch_judge(&v, 0, &after), LATCH_ON_TIME);
    assert_int_equal(after, 50000000ULL);
    v.at_ns = MS(301);
    assert_int_equal(latch_judge(&v, 0, &after), LATCH_MISSED);
    assert_int_equal(after, 101000000ULL);
}

/* A countDown without an answer: the zero's time is unknown, and even a
 * pass with fewer sent is not called early (the lost one may count). */
static void an_unanswered_count_down_is_not_judged(void **state)
{
    (void)state;
    uint64_t after = 7;
    struct latch_round_view v = round_of(2, 0, 0, 5000);
    v.unanswered = 1;
    assert_int_equal(latch_judge(&v, 1, &after), LATCH_UNJUDGED);
    assert_int_equal(latch_judge(&v, 0, &after), LATCH_UNJUDGED);
    assert_int_equal(after, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pass_before_the_last_count_down_is_early),
        cmocka_unit_test(pass_before_the_last_answer_is_on_time),
        cmocka_unit_test(the_bound_counts_from_the_zero),
        cmocka_unit_test(a_paused_waiter_counts_from_its_resumption),
        cmocka_unit_test(not_through_at_the_end),
        cmocka_unit_test(an_unanswered_count_down_is_not_judged),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
