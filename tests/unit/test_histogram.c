/* test_histogram.c - layout, percentiles, merge and moments of sim/histogram.c.
 *
 * Expected values are worked out by hand from the layout (1 us .. 1 h,
 * 3 digits: 2048 sub-buckets, bucket b has width 2^b), and percentiles are
 * checked against the sorted values: the sorted run is the reference.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/record/histogram.h"

#define HOUR_COUNTS_LEN 23552 /* (22 buckets + 1) * 1024 */
#define HOUR_TOP_INDEX  23220 /* slot of 3600000000 */
#define HOUR_TOP_HIGH   3600809983LL

static struct histogram *hour(void)
{
    struct histogram *h = histogram_new(HIST_LOWEST_US, HIST_HIGHEST_US, HIST_SIG_DIGITS);

    assert_non_null(h);
    return h;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

    return (x > y) - (x < y);
}

/* ---- layout ---------------------------------------------------------- */

static void test_layout_one_hour(void **state)
{
    struct histogram *h = hour();

    (void)state;
    assert_int_equal(h->lowest, 1);
    assert_int_equal(h->highest, 3600000000LL);
    assert_int_equal(h->sig_digits, 3);
    assert_int_equal(h->unit_magnitude, 0);
    assert_int_equal(h->sub_bucket_count, 2048); /* 2^ceil(log2(2000)) */
    assert_int_equal(h->sub_bucket_half_count, 1024);
    assert_int_equal(h->sub_bucket_half_count_magnitude, 10);
    assert_int_equal(h->sub_bucket_mask, 2047);
    /* 2048 << 21 = 2^32 is the first power past 3.6e9: buckets 0..21. */
    assert_int_equal(h->bucket_count, 22);
    assert_int_equal(h->counts_len, HOUR_COUNTS_LEN);
    assert_int_equal(h->total_count, 0);
    assert_int_equal(h->min, INT64_MAX);
    assert_int_equal(h->max, 0);
    assert_int_equal(h->saturated, 0);
    for (int32_t i = 0; i < h->counts_len; i++)
        assert_int_equal(h->counts[i], 0);
    histogram_free(h);
}

static void test_layout_other_shapes(void **state)
{
    struct histogram *h;

    (void)state;
    /* lowest 1000: unit 512, 2048 << 9 = 2^20, 2^32 after 12 more doublings. */
    h = histogram_new(1000, 3600000000LL, 3);
    assert_non_null(h);
    assert_int_equal(h->unit_magnitude, 9);
    assert_int_equal(h->sub_bucket_mask, 2047LL << 9);
    assert_int_equal(h->bucket_count, 13);
    assert_int_equal(h->counts_len, 14 * 1024);
    histogram_free(h);

    h = histogram_new(1, 2, 1); /* 2*10 -> 32 sub-buckets, one bucket */
    assert_non_null(h);
    assert_int_equal(h->sub_bucket_count, 32);
    assert_int_equal(h->sub_bucket_half_count, 16);
    assert_int_equal(h->bucket_count, 1);
    assert_int_equal(h->counts_len, 32);
    histogram_free(h);

    h = histogram_new(1, 3600000000LL, 5); /* 2*10^5 -> 2^18; 2^32 = 2^18 << 14 */
    assert_non_null(h);
    assert_int_equal(h->sub_bucket_count, 262144);
    assert_int_equal(h->bucket_count, 15);
    assert_int_equal(h->counts_len, 16 * 131072);
    histogram_free(h);

    h = histogram_new(1, INT64_MAX, 3); /* 2048 << 52 would pass 2^62 */
    assert_non_null(h);
    assert_int_equal(h->bucket_count, 53);
    assert_int_equal(histogram_index(h, INT64_MAX), h->counts_len - 1);
    assert_int_equal(histogram_highest_equivalent(h, INT64_MAX), INT64_MAX);
    assert_int_equal(histogram_lowest_equivalent(h, INT64_MAX), 2047LL << 52);
    histogram_free(h);
}

static void test_new_rejects_bad_arguments(void **state)
{
    (void)state;
    assert_null(histogram_new(0, 100, 3));
    assert_null(histogram_new(-1, 100, 3));
    assert_null(histogram_new(10, 19, 3));
    assert_null(histogram_new(1, 3600000000LL, 0));
    assert_null(histogram_new(1, 3600000000LL, 6));
    assert_null(histogram_new(1LL << 60, INT64_MAX, 3)); /* unit 2^60 leaves no room */
    histogram_free(NULL);
}

/* ---- bucket arithmetic ------------------------------------------------ */

struct edge {
    int64_t value, lowest, highest, width;
    int32_t index;
};

static void test_equivalent_values_at_edges(void **state)
{
    static const struct edge edges[] = {
        {0, 0, 0, 1, 0},
        {1, 1, 1, 1, 1},
        {1023, 1023, 1023, 1, 1023},
        {1024, 1024, 1024, 1, 1024},
        {2047, 2047, 2047, 1, 2047},
        {2048, 2048, 2049, 2, 2048},
        {2049, 2048, 2049, 2, 2048},
        {2050, 2050, 2051, 2, 2049},
        {4095, 4094, 4095, 2, 3071},
        {4096, 4096, 4099, 4, 3072},
        {8191, 8188, 8191, 4, 4095},
        {8192, 8192, 8199, 8, 4096},
        {1000000, 999936, 1000447, 512, 11169},
        {5000000, 4997120, 5001215, 4096, 13508},
        {60000000, 59998208, 60030975, 32768, 17191},
        {3600000000LL, 3598712832LL, HOUR_TOP_HIGH, 2097152, HOUR_TOP_INDEX},
    };
    struct histogram *h = hour();

    (void)state;
    for (size_t i = 0; i < sizeof(edges) / sizeof(edges[0]); i++) {
        const struct edge *e = &edges[i];

        assert_int_equal(histogram_lowest_equivalent(h, e->value), e->lowest);
        assert_int_equal(histogram_highest_equivalent(h, e->value), e->highest);
        assert_int_equal(histogram_bucket_width(h, e->value), e->width);
        assert_int_equal(histogram_index(h, e->value), e->index);
        assert_int_equal(histogram_value_at_index(h, e->index), e->lowest);
    }
    histogram_free(h);
}

static void test_index_clamps(void **state)
{
    struct histogram *h = hour();

    (void)state;
    assert_int_equal(histogram_index(h, -5), 0);
    assert_int_equal(histogram_index(h, INT64_MIN), 0);
    assert_int_equal(histogram_index(h, 3600000001LL), HOUR_TOP_INDEX);
    assert_int_equal(histogram_index(h, INT64_MAX), HOUR_TOP_INDEX);
    /* The last slot of the array ends just below 2^32. */
    assert_int_equal(histogram_value_at_index(h, HOUR_COUNTS_LEN - 1), 4292870144LL);
    histogram_free(h);
}

static void test_index_value_round_trip(void **state)
{
    struct histogram *h = hour();

    (void)state;
    for (int32_t i = 0; i < h->counts_len; i++) {
        int64_t v = histogram_value_at_index(h, i);

        assert_int_equal(histogram_lowest_equivalent(h, v), v);
        if (i + 1 < h->counts_len)
            assert_int_equal(histogram_highest_equivalent(h, v),
                             histogram_value_at_index(h, i + 1) - 1);
        if (i <= HOUR_TOP_INDEX) {
            assert_int_equal(histogram_index(h, v), i);
            assert_int_equal(histogram_index(h, histogram_highest_equivalent(h, v)), i);
        } else {
            assert_int_equal(histogram_index(h, v), HOUR_TOP_INDEX);
        }
    }
    histogram_free(h);
}

static void test_unit_above_one(void **state)
{
    struct histogram *h = histogram_new(1000, 3600000000LL, 3);

    (void)state;
    assert_non_null(h);
    assert_int_equal(histogram_index(h, 0), 0);
    assert_int_equal(histogram_index(h, 511), 0);
    assert_int_equal(histogram_index(h, 512), 1);
    assert_int_equal(histogram_bucket_width(h, 0), 512);
    assert_int_equal(histogram_lowest_equivalent(h, 1000), 512);
    assert_int_equal(histogram_highest_equivalent(h, 1000), 1023);
    /* 2048 * 512 = 2^20 opens the second bucket, width 1024. */
    assert_int_equal(histogram_index(h, 1048576), 2048);
    assert_int_equal(histogram_bucket_width(h, 1048576), 1024);
    histogram_free(h);
}

/* ---- recording -------------------------------------------------------- */

static void test_record_tracks_exact_stats(void **state)
{
    struct histogram *h = hour();

    (void)state;
    histogram_record(h, 2049);
    histogram_record(h, 2048);
    histogram_record(h, -7); /* counts as 0 */
    histogram_record_n(h, 1000, 3);
    histogram_record_n(h, 5, 0); /* nothing */
    assert_int_equal(h->total_count, 6);
    assert_int_equal(h->min, 0);
    assert_int_equal(h->max, 2049);
    assert_int_equal(h->saturated, 0);
    assert_int_equal(h->counts[0], 1);
    assert_int_equal(h->counts[1000], 3);
    assert_int_equal(h->counts[2048], 2);
    assert_true(h->sum == 7097.0);
    assert_true(h->sum_sq == 2049.0 * 2049 + 2048.0 * 2048 + 3 * 1000000.0);

    histogram_reset(h);
    assert_int_equal(h->total_count, 0);
    assert_int_equal(h->min, INT64_MAX);
    assert_int_equal(h->max, 0);
    assert_int_equal(h->counts[2048], 0);
    assert_true(h->sum == 0.0);
    assert_int_equal(histogram_percentile(h, 50), 0);
    histogram_free(h);
}

static void test_values_above_highest_saturate(void **state)
{
    struct histogram *h = hour();

    (void)state;
    histogram_record(h, 3600000000LL); /* the limit itself is trackable */
    histogram_record(h, 4000000000LL);
    histogram_record(h, 7200000000LL);
    assert_int_equal(h->saturated, 2);
    assert_int_equal(h->counts[HOUR_TOP_INDEX], 3);
    assert_int_equal(h->max, 7200000000LL);
    assert_int_equal(h->total_count, 3);
    assert_true(h->sum == 14800000000.0);
    /* Inside the top slot a percentile reads its top edge, p100 the true max. */
    assert_int_equal(histogram_percentile(h, 50), HOUR_TOP_HIGH);
    assert_int_equal(histogram_percentile(h, 99.99), HOUR_TOP_HIGH);
    assert_int_equal(histogram_percentile(h, 100), 7200000000LL);
    histogram_free(h);
}

/* ---- percentiles against the sorted reference ------------------------- */

/* Percentiles as parts per million so the test's rank is exact integer
 * arithmetic: rank = ceil(ppm * n / 10^6), at least 1. */
static int64_t reference(const struct histogram *h, const int64_t *sorted, int64_t n, int64_t ppm)
{
    int64_t rank = (ppm * n + 999999) / 1000000, v;

    if (ppm >= 1000000)
        return sorted[n - 1];
    if (rank < 1)
        rank = 1;
    v = sorted[rank - 1];
    if (v > h->highest)
        v = h->highest; /* counted in the top slot */
    v = histogram_highest_equivalent(h, v);
    return v < sorted[n - 1] ? v : sorted[n - 1];
}

static void check_one(const struct histogram *h, const int64_t *sorted, int64_t n, int64_t ppm)
{
    double p = (double)ppm / 10000.0;
    int64_t want = reference(h, sorted, n, ppm), got = histogram_percentile(h, p);

    if (got != want)
        print_message("p%.4f of %lld values: got %lld want %lld\n", p, (long long)n, (long long)got,
                      (long long)want);
    assert_int_equal(got, want);
}

/* Records values, sorts them, and checks the usual percentiles and every
 * hundredth of a percent against the sorted run. */
static struct histogram *check_against_sorted(int64_t *values, int64_t n)
{
    static const int64_t usual[] = {0, 500000, 900000, 990000, 999000, 999900, 1000000};
    struct histogram *h = hour();

    for (int64_t i = 0; i < n; i++)
        histogram_record(h, values[i]);
    qsort(values, (size_t)n, sizeof(*values), cmp_i64);
    assert_int_equal(h->min, values[0]);
    assert_int_equal(h->max, values[n - 1]);
    for (size_t i = 0; i < sizeof(usual) / sizeof(usual[0]); i++)
        check_one(h, values, n, usual[i]);
    for (int64_t ppm = 0; ppm <= 1000000; ppm += 100)
        check_one(h, values, n, ppm);
    return h;
}

static int64_t *alloc_values(int64_t n)
{
    int64_t *v = calloc((size_t)n, sizeof(*v));

    assert_non_null(v);
    return v;
}

static void test_percentiles_one_to_ten_thousand(void **state)
{
    int64_t n = 10000, *v = alloc_values(n);
    struct histogram *h;

    (void)state;
    for (int64_t i = 0; i < n; i++)
        v[n - 1 - i] = i + 1; /* recorded in reverse: order must not matter */
    h = check_against_sorted(v, n);
    assert_int_equal(histogram_percentile(h, 0), 1);
    /* 0.07 * 10000 / 100 is a hair above 7 in doubles; the rank is still 7. */
    assert_int_equal(histogram_percentile(h, 0.07), 7);
    assert_int_equal(histogram_percentile(h, 50), 5003);    /* 5000: width 4 from 4096 */
    assert_int_equal(histogram_percentile(h, 90), 9007);    /* 9000: width 8 from 8192 */
    assert_int_equal(histogram_percentile(h, 99), 9903);    /* 9900 in [9896, 9903] */
    assert_int_equal(histogram_percentile(h, 99.9), 9991);  /* 9990 in [9984, 9991] */
    assert_int_equal(histogram_percentile(h, 99.99), 9999); /* 9999 in [9992, 9999] */
    assert_int_equal(histogram_percentile(h, 100), 10000);
    assert_int_equal(histogram_percentile(h, 150), 10000);
    assert_int_equal(histogram_percentile(h, -3), 1);
    assert_int_equal(histogram_percentile(h, NAN), 1);
    histogram_free(h);
    free(v);
}

static void test_percentiles_constant(void **state)
{
    int64_t n = 1000, *v = alloc_values(n);
    struct histogram *h;

    (void)state;
    for (int64_t i = 0; i < n; i++)
        v[i] = 123456; /* slot [123456, 123519]: the cap at max decides */
    h = check_against_sorted(v, n);
    assert_int_equal(histogram_percentile(h, 0), 123456);
    assert_int_equal(histogram_percentile(h, 50), 123456);
    assert_int_equal(histogram_percentile(h, 99.99), 123456);
    histogram_free(h);
    free(v);
}

static void test_percentiles_bimodal(void **state)
{
    int64_t n = 1000, *v = alloc_values(n);
    struct histogram *h;

    (void)state;
    for (int64_t i = 0; i < n; i++)
        v[i] = i % 10 == 9 ? 50000 : 100;
    h = check_against_sorted(v, n);
    assert_int_equal(histogram_percentile(h, 50), 100);
    assert_int_equal(histogram_percentile(h, 90), 100);     /* rank 900: the last 100 */
    assert_int_equal(histogram_percentile(h, 90.1), 50000); /* [49984, 50015] capped */
    assert_int_equal(histogram_percentile(h, 99), 50000);
    histogram_free(h);
    free(v);
}

static void test_percentiles_long_tail(void **state)
{
    int64_t n = 1005, *v = alloc_values(n);
    struct histogram *h;

    (void)state;
    for (int64_t i = 0; i < 1000; i++)
        v[i] = i + 1;
    v[1000] = v[1001] = v[1002] = 5000000; /* 5 s */
    v[1003] = v[1004] = 60000000;          /* 60 s */
    h = check_against_sorted(v, n);
    assert_int_equal(histogram_percentile(h, 50), 503);        /* rank ceil(502.5) */
    assert_int_equal(histogram_percentile(h, 99), 995);        /* rank ceil(994.95) */
    assert_int_equal(histogram_percentile(h, 99.5), 1000);     /* rank ceil(999.975) */
    assert_int_equal(histogram_percentile(h, 99.7), 5001215);  /* rank 1002: 5 s slot's top */
    assert_int_equal(histogram_percentile(h, 99.9), 60000000); /* rank 1004, capped at max */
    assert_int_equal(histogram_percentile(h, 100), 60000000);
    histogram_free(h);
    free(v);
}

static void test_percentiles_above_highest(void **state)
{
    int64_t n = 111, *v = alloc_values(n);
    struct histogram *h;

    (void)state;
    for (int64_t i = 0; i < 100; i++)
        v[i] = i + 1;
    for (int64_t i = 100; i < 110; i++)
        v[i] = 4000000000LL;
    v[110] = 7200000000LL;
    h = check_against_sorted(v, n);
    assert_int_equal(h->saturated, 11);
    assert_int_equal(histogram_percentile(h, 90), 100);           /* rank ceil(99.9) */
    assert_int_equal(histogram_percentile(h, 91), HOUR_TOP_HIGH); /* rank 102 */
    assert_int_equal(histogram_percentile(h, 100), 7200000000LL);
    histogram_free(h);
    free(v);
}

static void test_percentile_empty(void **state)
{
    struct histogram *h = hour();

    (void)state;
    assert_int_equal(histogram_percentile(h, 0), 0);
    assert_int_equal(histogram_percentile(h, 50), 0);
    assert_int_equal(histogram_percentile(h, 100), 0);
    histogram_free(h);
}

/* ---- merge ------------------------------------------------------------ */

static uint64_t next_random(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void assert_same_histogram(const struct histogram *a, const struct histogram *b)
{
    assert_int_equal(a->counts_len, b->counts_len);
    for (int32_t i = 0; i < a->counts_len; i++)
        assert_int_equal(a->counts[i], b->counts[i]);
    assert_int_equal(a->total_count, b->total_count);
    assert_int_equal(a->min, b->min);
    assert_int_equal(a->max, b->max);
    assert_int_equal(a->saturated, b->saturated);
    /* Integer sums below 2^53 are exact in any order; squares are not. */
    assert_true(a->sum == b->sum);
    assert_true(fabs(a->sum_sq - b->sum_sq) <= 1e-12 * b->sum_sq);
}

static void test_merge_equals_serial(void **state)
{
    struct histogram *serial = hour(), *merged = hour(), *part[4];
    uint64_t seed = 0x9e3779b97f4a7c15ULL;

    (void)state;
    for (int i = 0; i < 4; i++)
        part[i] = hour();
    for (int i = 0; i < 100000; i++) {
        /* Log-spread values from 0 to 2^33, so some land above the top. */
        int64_t v = (int64_t)(next_random(&seed) % (1ULL << (next_random(&seed) % 34)));

        histogram_record(serial, v);
        histogram_record(part[i % 4], v);
    }
    assert_true(serial->saturated > 0);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(histogram_merge(merged, part[i]), 0);
        histogram_free(part[i]);
    }
    assert_same_histogram(merged, serial);
    for (int64_t ppm = 0; ppm <= 1000000; ppm += 1000)
        assert_int_equal(histogram_percentile(merged, (double)ppm / 10000.0),
                         histogram_percentile(serial, (double)ppm / 10000.0));
    histogram_free(serial);
    histogram_free(merged);
}

static void test_merge_rejects_other_layouts(void **state)
{
    struct histogram *dst = hour(), *before = hour();
    struct histogram *others[] = {
        histogram_new(2, HIST_HIGHEST_US, 3),
        histogram_new(1, 60000000, 3),
        histogram_new(1, HIST_HIGHEST_US, 2),
    };

    (void)state;
    histogram_record_n(dst, 777, 5);
    assert_int_equal(histogram_merge(before, dst), 0);
    for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
        assert_non_null(others[i]);
        histogram_record(others[i], 1);
        assert_int_equal(histogram_merge(dst, others[i]), -1);
        assert_same_histogram(dst, before);
        histogram_free(others[i]);
    }
    histogram_free(dst);
    histogram_free(before);
}

static void test_merge_empty(void **state)
{
    struct histogram *full = hour(), *empty = hour(), *copy = hour();

    (void)state;
    histogram_record(full, 3);
    histogram_record(full, 4000000000LL);
    assert_int_equal(histogram_merge(copy, full), 0);
    assert_int_equal(histogram_merge(full, empty), 0);
    assert_same_histogram(full, copy);
    assert_int_equal(histogram_merge(empty, full), 0);
    assert_same_histogram(empty, full);
    assert_int_equal(empty->min, 3);
    assert_int_equal(empty->saturated, 1);
    histogram_free(full);
    histogram_free(empty);
    histogram_free(copy);
}

/* ---- mean and standard deviation -------------------------------------- */

static void test_mean_stddev(void **state)
{
    static const int64_t textbook[] = {2, 4, 4, 4, 5, 5, 7, 9};
    struct histogram *h = hour();

    (void)state;
    assert_true(histogram_mean(h) == 0.0);
    assert_true(histogram_stddev(h) == 0.0);

    for (size_t i = 0; i < sizeof(textbook) / sizeof(textbook[0]); i++)
        histogram_record(h, textbook[i]);
    assert_true(histogram_mean(h) == 5.0);
    assert_true(histogram_stddev(h) == 2.0); /* E[x^2] = 29, mean^2 = 25 */

    histogram_reset(h);
    for (int64_t v = 1; v <= 4; v++)
        histogram_record(h, v);
    assert_true(histogram_mean(h) == 2.5);
    assert_true(fabs(histogram_stddev(h) - sqrt(1.25)) < 1e-9);

    histogram_reset(h);
    for (int64_t v = 1; v <= 100; v++)
        histogram_record(h, v);
    assert_true(histogram_mean(h) == 50.5);
    assert_true(fabs(histogram_stddev(h) - 28.86607004772212) < 1e-9); /* sqrt(9999/12) */

    histogram_reset(h);
    histogram_record_n(h, 1000000, 1000000);
    assert_true(histogram_mean(h) == 1000000.0);
    assert_true(histogram_stddev(h) == 0.0);

    /* Saturated values keep their true size in the moments. */
    histogram_reset(h);
    histogram_record(h, 1);
    histogram_record(h, 7200000000LL);
    assert_true(histogram_mean(h) == 3600000000.5);
    histogram_free(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_layout_one_hour),
        cmocka_unit_test(test_layout_other_shapes),
        cmocka_unit_test(test_new_rejects_bad_arguments),
        cmocka_unit_test(test_equivalent_values_at_edges),
        cmocka_unit_test(test_index_clamps),
        cmocka_unit_test(test_index_value_round_trip),
        cmocka_unit_test(test_unit_above_one),
        cmocka_unit_test(test_record_tracks_exact_stats),
        cmocka_unit_test(test_values_above_highest_saturate),
        cmocka_unit_test(test_percentiles_one_to_ten_thousand),
        cmocka_unit_test(test_percentiles_constant),
        cmocka_unit_test(test_percentiles_bimodal),
        cmocka_unit_test(test_percentiles_long_tail),
        cmocka_unit_test(test_percentiles_above_highest),
        cmocka_unit_test(test_percentile_empty),
        cmocka_unit_test(test_merge_equals_serial),
        cmocka_unit_test(test_merge_rejects_other_layouts),
        cmocka_unit_test(test_merge_empty),
        cmocka_unit_test(test_mean_stddev),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
