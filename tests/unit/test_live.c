/* test_live.c - the live progress line's coarse latency window, with
 * values worked out by hand from its buckets (powers of two split in four),
 * and the run's latency totals the metrics endpoint serves. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "sim/engine/live.h"

/* The percentile of a window holding only `us`, read back for its second. */
static uint64_t edge_of(uint64_t us)
{
    static struct live_window w;
    uint64_t sum[LIVE_BUCKETS] = {0};
    memset(&w, 0, sizeof(w));
    live_record(&w, 0, us);
    live_collect(&w, 0, sum);
    return live_percentile(sum, 50);
}

static void buckets_have_the_expected_upper_edges(void **state)
{
    (void)state;
    /* 0..7 are exact; from 8 on, four buckets per power of two. */
    for (uint64_t v = 0; v < 8; v++)
        assert_int_equal(edge_of(v), v);
    assert_int_equal(edge_of(8), 9);
    assert_int_equal(edge_of(9), 9);
    assert_int_equal(edge_of(10), 11);
    assert_int_equal(edge_of(15), 15);
    assert_int_equal(edge_of(16), 19);
    assert_int_equal(edge_of(50), 55);     /* 48..55 */
    assert_int_equal(edge_of(99), 111);    /* 96..111 */
    assert_int_equal(edge_of(1000), 1023); /* 896..1023 */
    assert_int_equal(edge_of(1024), 1279); /* 1024..1279 */
    /* Past the last bucket everything lands in it. */
    assert_int_equal(edge_of(UINT64_MAX), edge_of((uint64_t)1 << 40));
}

static void percentiles_of_one_to_a_hundred(void **state)
{
    (void)state;
    static struct live_window w;
    uint64_t sum[LIVE_BUCKETS] = {0};
    for (uint64_t v = 1; v <= 100; v++)
        live_record(&w, 5, v);
    live_collect(&w, 5, sum);
    assert_int_equal(live_percentile(sum, 50), 55);  /* rank 50: value 50 */
    assert_int_equal(live_percentile(sum, 99), 111); /* rank 99: value 99 */
    assert_int_equal(live_percentile(sum, 100), 111);
    assert_int_equal(live_percentile(sum, 0), 1); /* rank 1: value 1 */
}

static void a_window_counts_only_its_own_seconds(void **state)
{
    (void)state;
    static struct live_window w;
    uint64_t sum[LIVE_BUCKETS] = {0};
    assert_int_equal(live_percentile(sum, 99), 0); /* empty */
    live_collect(&w, 0, sum);                      /* a zeroed window counts no second */
    assert_int_equal(live_percentile(sum, 99), 0);

    live_record(&w, 5, 100);
    live_record(&w, 6, 7);
    live_collect(&w, 4, sum);
    assert_int_equal(live_percentile(sum, 99), 0);
    live_collect(&w, 6, sum);
    assert_int_equal(live_percentile(sum, 99), 7);

    /* Second 7 takes second 5's slot: second 5 is forgotten. */
    memset(sum, 0, sizeof(sum));
    live_record(&w, 7, 3);
    live_collect(&w, 5, sum);
    assert_int_equal(live_percentile(sum, 99), 0);
    live_collect(&w, 7, sum);
    assert_int_equal(live_percentile(sum, 99), 3);
}

/* The run's totals for the metrics endpoint: a value on a bound counts
 * under it, one a microsecond past counts under the next, one past the
 * largest in the last count; nothing is forgotten as seconds pass. */
static void totals_count_by_bound_and_keep_every_second(void **state)
{
    (void)state;
    static struct live_window w;
    memset(&w, 0, sizeof(w));
    live_record(&w, 0, 500);
    live_record(&w, 1, 501);
    live_record(&w, 2, 1000);
    live_record(&w, 3, 10000001);
    live_record(&w, 9, 0);
    uint64_t le[LIVE_LE_COUNT + 1] = {0}, sum = 0;
    live_totals(&w, le, &sum);
    assert_int_equal(le[0], 2); /* 500 and 0 */
    assert_int_equal(le[1], 2); /* 501 and 1000 */
    for (unsigned i = 2; i < LIVE_LE_COUNT; i++)
        assert_int_equal(le[i], 0);
    assert_int_equal(le[LIVE_LE_COUNT], 1);
    assert_int_equal(sum, 500 + 501 + 1000 + 10000001);
    assert_int_equal(live_le_us[LIVE_LE_COUNT - 1], 10000000);
    live_totals(&w, le, &sum); /* added to what the caller holds */
    assert_int_equal(le[0], 4);
    assert_int_equal(sum, 2 * (500 + 501 + 1000 + 10000001));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(buckets_have_the_expected_upper_edges),
        cmocka_unit_test(percentiles_of_one_to_a_hundred),
        cmocka_unit_test(a_window_counts_only_its_own_seconds),
        cmocka_unit_test(totals_count_by_bound_and_keep_every_second),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
