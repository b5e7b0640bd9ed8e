/* test_latency_begun.c - acquire latency binned by when each acquire
 * began (latency_timeline.h): the log buckets' edges, invoke/ok pairs of
 * a history put in the second they began (the due time in open loop),
 * failures and other events left out, and each second's nearest-rank
 * percentiles at the buckets' tops, capped at the exact max. Values
 * worked by hand: 8 buckets per power of two above 16 us, so 64..127 us
 * share buckets 8 wide, 4096..8191 512 wide.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "sim/record/history.h"
#include "sim/record/latency_timeline.h"

#define MS 1000000ULL
#define S  1000000000ULL
#define T0 (10 * S)

static void test_buckets(void **state)
{
    (void)state;
    /* the last two: the last bucket takes anything longer */
    static const struct {
        uint64_t us;
        size_t bucket;
    } in[] = {{0, 0},
              {15, 15},
              {16, 16},
              {17, 16},
              {18, 17},
              {31, 23},
              {32, 24},
              {1000, 63},
              {2000000, 151},
              {(1ULL << 36) - 1, BEGUN_BUCKETS - 1},
              {1ULL << 50, BEGUN_BUCKETS - 1}};
    static const struct {
        size_t bucket;
        uint64_t top;
    } tops[] = {{24, 35}, {63, 1023}, {151, 2097151}, {BEGUN_BUCKETS - 1, (1ULL << 36) - 1}};
    for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++)
        assert_int_equal(begun_bucket(in[i].us), in[i].bucket);
    for (size_t i = 0; i < sizeof(tops) / sizeof(tops[0]); i++)
        assert_int_equal(begun_bucket_top(tops[i].bucket), tops[i].top);
    /* every bucket starts one past the top of the one before */
    for (size_t k = 1; k < BEGUN_BUCKETS; k++)
        assert_int_equal(begun_bucket(begun_bucket_top(k - 1) + 1), k);
}

static struct history_event ev(uint32_t client, uint8_t type, uint8_t f, uint64_t t, uint64_t due)
{
    struct history_event e = {.t_ns = t, .client = client, .type = type, .f = f};
    e.due_ns = due;
    return e;
}

static void feed(struct begun_timeline *b, struct history_event e)
{
    begun_event(b, &e);
}

/* A 2.2 s wait that began at 0.9 s is second 0's, not second 3's where it
 * was granted; an open-loop acquire counts from its due time. */
static void test_by_begin(void **state)
{
    (void)state;
    struct begun_timeline *b = begun_new(T0, 4, 2);
    assert_non_null(b);
    feed(b, ev(0, HT_INVOKE, HF_ACQUIRE, T0 + 900 * MS, 0));
    feed(b, ev(1, HT_INVOKE, HF_ACQUIRE, T0 + 1200 * MS, T0 + 1100 * MS));
    feed(b, ev(1, HT_OK, HF_ACQUIRE, T0 + 1200 * MS + 500000, 0)); /* 100.5 ms from due */
    feed(b, ev(1, HT_INVOKE, HF_RELEASE, T0 + 1300 * MS, 0));
    feed(b, ev(1, HT_INVOKE, HF_ACQUIRE, T0 + 1500 * MS, 0));
    feed(b, ev(1, HT_FAIL, HF_ACQUIRE, T0 + 1600 * MS, 0)); /* busy: no grant */
    feed(b, ev(1, HT_INVOKE, HF_ACQUIRE, T0 + 2000 * MS, 0));
    feed(b, ev(1, HT_OK, HF_ACQUIRE, T0 + 2000 * MS + 10000, 0)); /* 10 us */
    feed(b, ev(5, HT_INVOKE, HF_ACQUIRE, T0 + 2100 * MS, 0));     /* no such client */
    feed(b, ev(5, HT_OK, HF_ACQUIRE, T0 + 2200 * MS, 0));
    feed(b, ev(HISTORY_SERVERS, HT_INFO, HF_FAULT, T0 + 2300 * MS, 0));
    feed(b, ev(0, HT_OK, HF_ACQUIRE, T0 + 3100 * MS, 0)); /* 2.2 s */
    feed(b, ev(1, HT_OK, HF_ACQUIRE, T0 + 3200 * MS, 0)); /* an ok with no invoke */

    struct latency_second out[5];
    begun_finish(b, out, 5);
    assert_int_equal(out[0].count, 1);
    /* 2,200,000 us: bucket 2,097,152..2,359,295, its top capped at the max */
    assert_true(out[0].p50_ms == 2200.0 && out[0].p99_ms == 2200.0 && out[0].max_ms == 2200.0);
    assert_int_equal(out[1].count, 1);
    assert_true(out[1].p50_ms == 100.5 && out[1].max_ms == 100.5);
    assert_int_equal(out[2].count, 1);
    assert_true(out[2].p50_ms == 0.010 && out[2].p99_ms == 0.010 && out[2].max_ms == 0.010);
    assert_int_equal(out[3].count, 0);
    assert_true(out[3].p50_ms == 0.0 && out[3].max_ms == 0.0);
    assert_int_equal(out[4].count, 0); /* past the timeline: zeroed */
    begun_free(b);
}

/* Nearest rank at the bucket's top: 97 x 100 us, 2 x 4200 us, 1 x 5000
 * us. p50 is rank 50, 100's bucket 96..103; p99 rank 99, 4200's bucket
 * 4096..4607; the max exact. An acquire begun before the start line is
 * second 0's, one after the last second the last's. */
static void test_percentiles(void **state)
{
    (void)state;
    struct begun_timeline *b = begun_new(T0, 3, 1);
    assert_non_null(b);
    for (int i = 0; i < 97; i++)
        begun_add(b, T0 + 1500 * MS, 100);
    begun_add(b, T0 + 1100 * MS, 4200);
    begun_add(b, T0 + 1900 * MS, 4200);
    begun_add(b, T0 + 1999 * MS, 5000);
    begun_add(b, T0 - 5 * S, 7);
    begun_add(b, T0 + 50 * S, 3);
    struct latency_second out[3];
    begun_finish(b, out, 3);
    assert_int_equal(out[0].count, 1);
    assert_true(out[0].p50_ms == 0.007 && out[0].max_ms == 0.007);
    assert_int_equal(out[1].count, 100);
    assert_true(out[1].p50_ms == 0.103);
    assert_true(out[1].p99_ms == 4.607);
    assert_true(out[1].max_ms == 5.0);
    assert_int_equal(out[2].count, 1);
    assert_true(out[2].p99_ms == 0.003);
    begun_free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_buckets),
        cmocka_unit_test(test_by_begin),
        cmocka_unit_test(test_percentiles),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
