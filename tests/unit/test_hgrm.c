/* test_hgrm.c - the .hgrm text, line for line.
 *
 * Expected tables are worked out by hand from HdrHistogram's tick rule:
 * with 5 ticks per half distance the step is 10% up to 50%, 5% up to 75%,
 * 2.5% up to 87.5%, then 1.25%, 0.625%, ... each tick reported at the first
 * value whose cumulative share reaches it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>

#include "reports/hgrm.h"
#include "reports/hlog.h"
#include "sim/record/histogram.h"

#include <string.h>

#define HEADER "       Value     Percentile TotalCount 1/(1-Percentile)\n\n"

static struct histogram *hour(void)
{
    struct histogram *h = histogram_new(HIST_LOWEST_US, HIST_HIGHEST_US, HIST_SIG_DIGITS);

    assert_non_null(h);
    return h;
}

/* The text hgrm_write produces, malloc'ed. */
static char *render(const struct histogram *h, double scale, int ticks)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);

    assert_non_null(f);
    assert_int_equal(hgrm_write(f, h, scale, ticks), 0);
    assert_int_equal(fclose(f), 0);
    assert_non_null(text);
    return text;
}

static void test_one_to_hundred_us_in_ms(void **state)
{
    static const char expected[] =
        HEADER "       0.001 0.000000000000          1           1.00\n"
               "       0.010 0.100000000000         10           1.11\n"
               "       0.020 0.200000000000         20           1.25\n"
               "       0.030 0.300000000000         30           1.43\n"
               "       0.040 0.400000000000         40           1.67\n"
               "       0.050 0.500000000000         50           2.00\n"
               "       0.055 0.550000000000         55           2.22\n"
               "       0.060 0.600000000000         60           2.50\n"
               "       0.065 0.650000000000         65           2.86\n"
               "       0.070 0.700000000000         70           3.33\n"
               "       0.075 0.750000000000         75           4.00\n"
               "       0.078 0.775000000000         78           4.44\n"
               "       0.080 0.800000000000         80           5.00\n"
               "       0.083 0.825000000000         83           5.71\n"
               "       0.085 0.850000000000         85           6.67\n"
               "       0.088 0.875000000000         88           8.00\n"
               "       0.089 0.887500000000         89           8.89\n"
               "       0.090 0.900000000000         90          10.00\n"
               "       0.092 0.912500000000         92          11.43\n"
               "       0.093 0.925000000000         93          13.33\n"
               "       0.094 0.937500000000         94          16.00\n"
               "       0.095 0.943750000000         95          17.78\n"
               "       0.095 0.950000000000         95          20.00\n"
               "       0.096 0.956250000000         96          22.86\n"
               "       0.097 0.962500000000         97          26.67\n"
               "       0.097 0.968750000000         97          32.00\n"
               "       0.098 0.971875000000         98          35.56\n"
               "       0.098 0.975000000000         98          40.00\n"
               "       0.098 0.978125000000         98          45.71\n"
               "       0.099 0.981250000000         99          53.33\n"
               "       0.099 0.984375000000         99          64.00\n"
               "       0.099 0.985937500000         99          71.11\n"
               "       0.099 0.987500000000         99          80.00\n"
               "       0.099 0.989062500000         99          91.43\n"
               "       0.100 0.990625000000        100         106.67\n"
               "       0.100 1.000000000000        100\n"
               "#[Mean    =        0.051, StdDeviation   =        0.029]\n"
               "#[Max     =        0.100, Total count    =          100]\n"
               "#[Buckets =           22, SubBuckets     =         2048]\n";
    struct histogram *h = hour();
    char *text;

    (void)state;
    for (int64_t v = 1; v <= 100; v++)
        histogram_record(h, v);
    text = render(h, 1000.0, 5);
    assert_string_equal(text, expected);
    free(text);
    histogram_free(h);
}

static void test_single_value(void **state)
{
    static const char expected[] =
        HEADER "       1.000 0.000000000000          1           1.00\n"
               "       1.000 1.000000000000          1\n"
               "#[Mean    =        1.000, StdDeviation   =        0.000]\n"
               "#[Max     =        1.000, Total count    =            1]\n"
               "#[Buckets =           22, SubBuckets     =         2048]\n";
    struct histogram *h = hour();
    char *text;

    (void)state;
    histogram_record(h, 1000);
    text = render(h, 1000.0, 5);
    assert_string_equal(text, expected);
    free(text);
    histogram_free(h);
}

/* Ticks up to 50% all land on 1500 us; the next one reaches the top slot,
 * shown by its upper edge, while the Max line keeps the true 4000 s. */
static void test_saturated_tail_and_exact_max(void **state)
{
    static const char expected[] =
        HEADER "       1.500 0.000000000000          1           1.00\n"
               "       1.500 0.100000000000          1           1.11\n"
               "       1.500 0.200000000000          1           1.25\n"
               "       1.500 0.300000000000          1           1.43\n"
               "       1.500 0.400000000000          1           1.67\n"
               "       1.500 0.500000000000          1           2.00\n"
               " 3600809.983 0.550000000000          2           2.22\n"
               " 3600809.983 1.000000000000          2\n"
               "#[Mean    =  2000000.750, StdDeviation   =  1999999.250]\n"
               "#[Max     =  4000000.000, Total count    =            2]\n"
               "#[Buckets =           22, SubBuckets     =         2048]\n";
    struct histogram *h = hour();
    char *text;

    (void)state;
    histogram_record(h, 1500);
    histogram_record(h, 4000000000LL);
    text = render(h, 1000.0, 5);
    assert_string_equal(text, expected);
    free(text);
    histogram_free(h);
}

/* One tick per half distance: 0%, 50%, 75%, 87.5%, ... */
static void test_one_tick_per_half_distance(void **state)
{
    static const char expected[] =
        HEADER "       1.000 0.000000000000          1           1.00\n"
               "       2.000 0.500000000000          2           2.00\n"
               "       3.000 0.750000000000          3           4.00\n"
               "       4.000 0.875000000000          4           8.00\n"
               "       4.000 1.000000000000          4\n"
               "#[Mean    =        2.500, StdDeviation   =        1.118]\n"
               "#[Max     =        4.000, Total count    =            4]\n"
               "#[Buckets =           22, SubBuckets     =         2048]\n";
    struct histogram *h = hour();
    char *text;

    (void)state;
    for (int64_t v = 1; v <= 4; v++)
        histogram_record(h, v);
    text = render(h, 1.0, 1);
    assert_string_equal(text, expected);
    free(text);
    histogram_free(h);
}

static void test_empty(void **state)
{
    static const char expected[] =
        HEADER "#[Mean    =        0.000, StdDeviation   =        0.000]\n"
               "#[Max     =        0.000, Total count    =            0]\n"
               "#[Buckets =           22, SubBuckets     =         2048]\n";
    struct histogram *h = hour();
    char *text;

    (void)state;
    text = render(h, 1000.0, 5);
    assert_string_equal(text, expected);
    free(text);
    histogram_free(h);
}

static void test_full_device_fails(void **state)
{
    struct histogram *h = hour();
    FILE *f = fopen("/dev/full", "w");

    (void)state;
    if (f == NULL) {
        histogram_free(h);
        skip();
    }
    for (int64_t v = 1; v <= 100; v++)
        histogram_record(h, v);
    assert_int_equal(hgrm_write(f, h, 1000.0, 5), -1);
    fclose(f);
    histogram_free(h);
}

static void test_bad_arguments(void **state)
{
    struct histogram *h = hour();
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);

    (void)state;
    assert_non_null(f);
    assert_int_equal(hgrm_write(NULL, h, 1000.0, 5), -1);
    assert_int_equal(hgrm_write(f, NULL, 1000.0, 5), -1);
    assert_int_equal(hgrm_write(f, h, 0.0, 5), -1);
    assert_int_equal(hgrm_write(f, h, 1000.0, 0), -1);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(len, 0); /* nothing written */
    free(text);
    histogram_free(h);
}

/* The .hlog's V2 encoding, byte for byte what HdrHistogram 2.1.11 (Java,
 * Debian's libhdrhistogram-java) writes from encodeIntoByteBuffer for the
 * same layout and values: one count per value, 300 of 37, and a run of
 * zeros between them as one negative number. */
static const char *hex_of(const struct histogram *h, char *out)
{
    unsigned char buf[4096];
    long n = hlog_encode_raw(h, buf, sizeof(buf));
    assert_true(n > 0);
    for (long i = 0; i < n; i++)
        sprintf(out + 2 * i, "%02x", buf[i]);
    return out;
}

static void test_hlog_v2_encoding_is_hdrhistogram_s(void **state)
{
    (void)state;
    struct histogram *h = histogram_new(HIST_LOWEST_US, HIST_HIGHEST_US, HIST_SIG_DIGITS);
    char hex[8200];
    assert_string_equal(hex_of(h, hex), "1c849313000000010000000000000003000000000000000100000000"
                                        "d693a4003ff000000000000000");
    const int64_t v[] = {1, 2, 2, 1000, 1001, 2047, 2048, 123456, 5000000};
    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
        histogram_record(h, v[i]);
    histogram_record_n(h, 37, 300);
    assert_string_equal(hex_of(h, hex), "1c849313000000140000000000000003000000000000000100000000"
                                        "d693a4003ff000000000000000020443d804830f0202a91002028f5e02"
                                        "f35402");
    /* compressed: cookie 0x1c849314 in base64 is "HISTF" */
    char *b64 = hlog_encode(h);
    assert_non_null(b64);
    assert_int_equal(strncmp(b64, "HISTFAAAA", 9), 0);
    free(b64);
    /* a buffer too small is refused, not overrun */
    unsigned char small[44];
    assert_int_equal(hlog_encode_raw(h, small, sizeof(small)), -1);
    histogram_free(h);
}

/* hlog_begin's header and hlog_interval's lines, as text: each line's
 * start, length and max, then h's encoding. The length is the second's
 * part of the run: 1 for a whole second (and for a second the run did not
 * reach into), the run's fraction for the last, and never under 0.001 s,
 * which is what a run ending 0.4 ms past a whole second would print as
 * 0.000 (a reader takes a zero length for no interval). */
static char *hlog_line(const struct histogram *h, uint32_t second, double elapsed_s)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    assert_int_equal(hlog_interval(f, h, second, elapsed_s), 0);
    assert_int_equal(fclose(f), 0);
    return text;
}

static void expect_line(const struct histogram *h, uint32_t second, double elapsed_s,
                        const char *head)
{
    char *b64 = hlog_encode(h), want[4096];
    assert_non_null(b64);
    snprintf(want, sizeof(want), "%s%s\n", head, b64);
    char *line = hlog_line(h, second, elapsed_s);
    assert_string_equal(line, want);
    free(line);
    free(b64);
}

static void test_hlog_lines(void **state)
{
    (void)state;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    assert_int_equal(hlog_begin(f, 1700000000123456789ULL), 0);
    assert_int_equal(fclose(f), 0);
    assert_string_equal(text, "#[Logged with locklab " LOCKLAB_VERSION
                              ": values in microseconds, Interval_Max in milliseconds]\n"
                              "#[Histogram log format version 1.3]\n"
                              "#[StartTime: 1700000000.123 (seconds since epoch), "
                              "Tue Nov 14 22:13:20 UTC 2023]\n"
                              "#[BaseTime: 1700000000.123 (seconds since epoch)]\n"
                              "\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\","
                              "\"Interval_Compressed_Histogram\"\n");
    free(text);

    struct histogram *h = histogram_new(HIST_LOWEST_US, HIST_HIGHEST_US, HIST_SIG_DIGITS);
    assert_non_null(h);
    histogram_record(h, 250);
    histogram_record(h, 1500);
    expect_line(h, 0, 2.5, "0.000,1.000,1.500,");    /* a whole second */
    expect_line(h, 2, 2.25, "2.000,0.250,1.500,");   /* the last, cut short */
    expect_line(h, 7, 7.0004, "7.000,0.001,1.500,"); /* 0.4 ms: at least 0.001 */
    expect_line(h, 7, 7.0016, "7.000,0.002,1.500,"); /* to the millisecond */
    expect_line(h, 3, 3.0, "3.000,1.000,1.500,");    /* not reached: a whole second */
    expect_line(h, 3, 1.5, "3.000,1.000,1.500,");    /* before it: the same */
    histogram_reset(h);
    expect_line(h, 4, 9.0, "4.000,1.000,0.000,"); /* empty: max 0 */
    histogram_free(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_to_hundred_us_in_ms),
        cmocka_unit_test(test_single_value),
        cmocka_unit_test(test_saturated_tail_and_exact_max),
        cmocka_unit_test(test_one_tick_per_half_distance),
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_full_device_fails),
        cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_hlog_v2_encoding_is_hdrhistogram_s),
        cmocka_unit_test(test_hlog_lines),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
