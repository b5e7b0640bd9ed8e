/* test_limiter.c - the token bucket in front of the lock requests
 * (sim/engine/limiter.h): its refill, its cap, the wait it promises and
 * the refusal past the caller's wait, at exact times. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "sim/engine/limiter.h"

#define MS 1000000ULL

/* 10 a second, 2 kept: full at the start, then one every 100 ms. */
static void test_burst_then_refill(void **state)
{
    (void)state;
    struct limiter *l = limiter_new(10, 2, 0);
    uint64_t at = 1;
    assert_true(limiter_take(l, 0, 0, &at));
    assert_int_equal(at, 0);
    assert_true(limiter_take(l, 0, 0, &at));
    assert_int_equal(at, 0);
    assert_false(limiter_take(l, 0, 0, &at)); /* empty, and no wait allowed */
    assert_false(limiter_take(l, 0, 99 * MS, &at));
    assert_true(limiter_take(l, 0, 100 * MS, &at)); /* the next token, 100 ms on */
    assert_int_equal(at, 100 * MS);
    /* a second waiter queues behind the first: 200 ms */
    assert_false(limiter_take(l, 0, 150 * MS, &at));
    assert_true(limiter_take(l, 0, 200 * MS, &at));
    assert_int_equal(at, 200 * MS);
    limiter_free(l);
}

/* Idle time refills no more than burst. */
static void test_refill_capped(void **state)
{
    (void)state;
    struct limiter *l = limiter_new(10, 2, 0);
    uint64_t at = 0;
    assert_true(limiter_take(l, 0, 0, &at));
    assert_true(limiter_take(l, 0, 0, &at));
    /* 10 s idle: 100 tokens' worth, 2 kept */
    assert_true(limiter_take(l, 10000 * MS, 0, &at));
    assert_true(limiter_take(l, 10000 * MS, 0, &at));
    assert_false(limiter_take(l, 10000 * MS, 0, &at));
    /* 50 ms later half a token: the next is 50 ms away */
    assert_true(limiter_take(l, 10050 * MS, 50 * MS, &at));
    assert_int_equal(at, 10100 * MS);
    limiter_free(l);
}

/* A refused request takes nothing: the next one's wait is unchanged. */
static void test_refusal_takes_nothing(void **state)
{
    (void)state;
    struct limiter *l = limiter_new(1000, 1, 0);
    uint64_t at = 0;
    assert_true(limiter_take(l, 0, 0, &at));
    for (int i = 0; i < 5; i++)
        assert_false(limiter_take(l, 0, 0, &at));
    assert_true(limiter_take(l, 0, 1 * MS, &at));
    assert_int_equal(at, 1 * MS);
    limiter_free(l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_burst_then_refill),
        cmocka_unit_test(test_refill_capped),
        cmocka_unit_test(test_refusal_takes_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
