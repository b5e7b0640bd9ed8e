/* test_intervals.c - the per-second histograms: a second sealed into a
 * thread's log byte for byte, the threads' logs merged second by second,
 * the seconds adding up to the whole-run histogram a tally keeps, a late
 * sample, seconds sealed off the thread by the sealer the same as on it,
 * and the latency timeline taken from them. Exact values, worked
 * by hand from HdrHistogram's layout (1 us .. 1 h, 3 digits: values below
 * 2048 us have their own counter; 32768..65535 share counters 32 wide,
 * 65536..131071 64 wide, 524288..1048575 512 wide).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim/engine/tally.h"
#include "sim/record/histogram.h"
#include "sim/record/intervals.h"
#include "sim/record/latency_timeline.h"

#define MS 1000000ULL
#define S  1000000000ULL

static struct histogram *hist(void)
{
    struct histogram *h = histogram_new(HIST_LOWEST_US, HIST_HIGHEST_US, HIST_SIG_DIGITS);
    assert_non_null(h);
    return h;
}

/* What intervals_each handed over, second by second, for one op. */
#define MAX_SECONDS 12
struct seen {
    uint32_t n;
    uint32_t second[MAX_SECONDS];
    int64_t total[MAX_SECONDS], min[MAX_SECONDS], max[MAX_SECONDS];
    int64_t at[MAX_SECONDS][4]; /* counts of the values probe[] */
    int stop_at;                /* return 1 at this call (-1: never) */
};
static const int64_t probe[4] = {100, 105, 2000, 50000};

static int see(void *arg, uint32_t second, const struct histogram *h)
{
    struct seen *s = arg;
    assert_true(s->n < MAX_SECONDS);
    s->second[s->n] = second;
    s->total[s->n] = h->total_count;
    s->min[s->n] = h->total_count ? h->min : -1;
    s->max[s->n] = h->max;
    for (int k = 0; k < 4; k++)
        s->at[s->n][k] = h->counts[histogram_index(h, probe[k])];
    return (int)s->n++ == s->stop_at;
}

/* histogram_move: the counters and figures added, the source emptied. */
static void test_move(void **state)
{
    (void)state;
    struct histogram *a = hist(), *b = hist();
    histogram_record(a, 7);
    histogram_record_n(b, 100, 3);
    histogram_record(b, 50000);
    assert_int_equal(histogram_move(a, b), 0);
    assert_int_equal(a->total_count, 5);
    assert_int_equal(a->min, 7);
    assert_int_equal(a->max, 50000);
    assert_int_equal(a->counts[histogram_index(a, 100)], 3);
    assert_int_equal(a->counts[histogram_index(a, 50000)], 1);
    assert_true(a->sum == 7.0 + 300.0 + 50000.0);
    assert_int_equal(b->total_count, 0);
    assert_int_equal(b->max, 0);
    assert_int_equal(b->min, INT64_MAX);
    for (int32_t i = 0; i < b->counts_len; i++)
        assert_int_equal(b->counts[i], 0);
    histogram_free(a);
    histogram_free(b);
}

/* Every second's count, and their sum counter by counter. */
struct sum {
    struct histogram *h;
    uint32_t calls;
    int64_t total_each; /* what each second must hold; -1: any */
};

static int add_up(void *arg, uint32_t second, const struct histogram *h)
{
    struct sum *s = arg;
    assert_int_equal(second, s->calls);
    s->calls++;
    if (s->total_each >= 0)
        assert_int_equal(h->total_count, s->total_each);
    assert_int_equal(histogram_merge(s->h, h), 0);
    return 0;
}

/* A second's seal: second 2 (1 byte), op 1 (1), min 100 (1), max 105 (1),
 * the counters' length 3 (1) and their deflated length 0 (1: stored, too
 * short to gain), then the counters 100..105: 3 (zigzag 6), four zeros
 * (-4: 7), 1 (2). */
static void test_seal_bytes(void **state)
{
    (void)state;
    struct interval_log log = {0};
    struct histogram *h = hist();
    assert_int_equal(intervals_seal(&log, 2, 1, h), 0); /* empty: nothing */
    assert_int_equal(log.bytes, 0);
    assert_null(log.head);
    histogram_record_n(h, 100, 3);
    histogram_record(h, 105);
    assert_int_equal(intervals_seal(&log, 2, 1, h), 0);
    assert_int_equal(log.bytes, 9);
    assert_int_equal(h->total_count, 4); /* left as it was */
    assert_int_equal(log.late, 0);
    assert_int_equal(log.lost, 0);
    intervals_log_free(&log);
    assert_int_equal(log.bytes, 0);
    intervals_log_free(&log); /* a zeroed one */
    histogram_free(h);
}

/* The count of value v in the test below: 1..7 from a linear congruential
 * sequence, without the repeats deflate would fold away. */
static int64_t scattered(int64_t v)
{
    uint32_t x = 12345;
    for (int64_t i = 0; i < v; i++)
        x = x * 1103515245u + 12345u;
    return 1 + (x >> 16) % 7;
}

/* Seconds whose seals are deflated and straddle the 64 KiB blocks, the
 * full ones spilled to the log's file, read back whole: 1..2000 us each
 * scattered(v) times, 150 seconds. */
static void test_seal_across_blocks(void **state)
{
    (void)state;
    struct interval_log log = {0};
    struct histogram *h = hist();
    int64_t total = 0;
    for (int64_t v = 1; v <= 2000; v++) {
        histogram_record_n(h, v, scattered(v));
        total += scattered(v);
    }
    for (uint32_t s = 0; s < 150; s++)
        assert_int_equal(intervals_seal(&log, s, OP_HOLD, h), 0);
    /* 2,000 one-byte counters and 8 bytes of header before deflating */
    assert_true(log.bytes > 65536 && log.bytes < 150 * 2008 * 3 / 4);
    /* every full block is on file, only the one being filled is held */
    assert_ptr_equal(log.head, log.tail);
    assert_non_null(log.spill);
    assert_int_equal(log.spilled % 65536, 0);
    assert_true(log.spilled > 0 && log.spilled <= log.bytes && log.bytes - log.spilled < 65536);
    struct sum sum = {.h = hist(), .total_each = total};
    assert_int_equal(intervals_each(&log, 1, OP_HOLD, 150, add_up, &sum), 0);
    assert_int_equal(sum.calls, 150);
    assert_int_equal(sum.h->total_count, 150 * total);
    assert_int_equal(sum.h->min, 1);
    assert_int_equal(sum.h->max, 2000);
    for (int64_t v = 1; v <= 2000; v++)
        assert_int_equal(sum.h->counts[histogram_index(h, v)], 150 * scattered(v));
    sum = (struct sum){.h = sum.h, .total_each = 0}; /* another op: 150 empty seconds */
    histogram_reset(sum.h);
    assert_int_equal(intervals_each(&log, 1, OP_STEP, 150, add_up, &sum), 0);
    assert_int_equal(sum.calls, 150);
    histogram_free(sum.h);
    intervals_log_free(&log);
    histogram_free(h);
}

static void seal(struct interval_log *log, uint32_t second, int op, const int64_t *v, size_t n)
{
    struct histogram *h = hist();
    for (size_t i = 0; i < n; i++)
        histogram_record(h, v[i]);
    assert_int_equal(intervals_seal(log, second, op, h), 0);
    histogram_free(h);
}

/* Two threads' logs merged second by second, op by op; empty seconds
 * too, and past `seconds` while a log has more. */
static void test_merge_threads(void **state)
{
    (void)state;
    struct interval_log logs[2] = {{0}, {0}};
    seal(&logs[0], 0, OP_ACQUIRE, (int64_t[]){100, 100}, 2);
    seal(&logs[0], 0, OP_RELEASE, (int64_t[]){2000}, 1);
    seal(&logs[0], 2, OP_ACQUIRE, (int64_t[]){105}, 1);
    seal(&logs[1], 1, OP_ACQUIRE, (int64_t[]){50000}, 1);
    seal(&logs[1], 2, OP_ACQUIRE, (int64_t[]){100, 2000}, 2);

    struct seen s = {.stop_at = -1};
    assert_int_equal(intervals_each(logs, 2, OP_ACQUIRE, 4, see, &s), 0);
    assert_int_equal(s.n, 4);
    const int64_t total[] = {2, 1, 3, 0}, min[] = {100, 50000, 100, -1},
                  max[] = {100, 50000, 2000, 0};
    const int64_t at[4][4] = {{2, 0, 0, 0}, {0, 0, 0, 1}, {1, 1, 1, 0}, {0, 0, 0, 0}};
    for (uint32_t k = 0; k < 4; k++) {
        assert_int_equal(s.second[k], k);
        assert_int_equal(s.total[k], total[k]);
        assert_int_equal(s.min[k], min[k]);
        assert_int_equal(s.max[k], max[k]);
        for (int j = 0; j < 4; j++)
            assert_int_equal(s.at[k][j], at[k][j]);
    }

    s = (struct seen){.stop_at = -1}; /* the run said 1 second: the logs have 3 */
    assert_int_equal(intervals_each(logs, 2, OP_ACQUIRE, 1, see, &s), 0);
    assert_int_equal(s.n, 3);
    s = (struct seen){.stop_at = -1};
    assert_int_equal(intervals_each(logs, 2, OP_RELEASE, 2, see, &s), 0);
    assert_int_equal(s.n, 3);
    assert_int_equal(s.total[0], 1);
    assert_int_equal(s.at[0][2], 1);
    assert_int_equal(s.total[1] + s.total[2], 0);
    s = (struct seen){.stop_at = 1}; /* the callback's non-zero ends the walk */
    assert_int_equal(intervals_each(logs, 2, OP_ACQUIRE, 4, see, &s), 1);
    assert_int_equal(s.n, 2);
    s = (struct seen){.stop_at = -1}; /* no log: the run's seconds, empty */
    assert_int_equal(intervals_each(NULL, 0, OP_ACQUIRE, 2, see, &s), 0);
    assert_int_equal(s.n, 2);
    assert_int_equal(s.total[0] + s.total[1], 0);

    seal(&logs[1], 1, OP_HOLD, (int64_t[]){7}, 1); /* out of order: not a log tally.c writes */
    s = (struct seen){.stop_at = -1};
    assert_int_equal(intervals_each(logs, 2, OP_ACQUIRE, 4, see, &s), -1);
    intervals_log_free(&logs[0]);
    intervals_log_free(&logs[1]);
}

/* A tally's samples: each into the second it ended in; the seconds add up
 * exactly to the whole-run histogram; a sample from before the start line
 * counts in second 0; a late one (cannot happen in a run) in the open
 * second, counted. */
static void test_tally_seconds_add_up(void **state)
{
    (void)state;
    struct tally t;
    assert_int_equal(tally_init(&t, 4), 0);
    const uint64_t t0 = 1000 * S, us = 1000;
    tally_record(&t, t0, OP_ACQUIRE, t0 - 5 * MS, 100 * us); /* before the start line */
    tally_record(&t, t0, OP_ACQUIRE, t0 + 100 * MS, 105 * us);
    tally_record(&t, t0, OP_HOLD, t0 + 200 * MS, 2000 * us);
    tally_step(&t, t0, t0 + 999 * MS, 50000 * us, 1);
    assert_int_equal(t.log.bytes, 0);                     /* second 0 still open */
    tally_record(&t, t0, OP_ACQUIRE, t0 + S, 50000 * us); /* second 1 seals second 0 */
    assert_true(t.log.bytes > 0);
    assert_int_equal(t.h[OP_ACQUIRE]->total_count, 2);
    assert_int_equal(t.open[OP_ACQUIRE]->total_count, 1);
    tally_step(&t, t0, t0 + 3 * S + 1, 100 * us, 0);
    tally_record(&t, t0, OP_ACQUIRE, t0 + 3 * S + 2, 100 * us);
    tally_record(&t, t0, OP_ACQUIRE, t0 + S + 500 * MS, 2000 * us); /* late: into second 3 */
    assert_int_equal(t.log.late, 1);
    tally_step(&t, t0, t0 + 9 * S, 100 * us, 1); /* past the timeline: its last second */
    tally_finish(&t);
    for (int op = 0; op < OP_COUNT; op++)
        assert_int_equal(t.open[op]->total_count, 0);

    struct seen s = {.stop_at = -1};
    assert_int_equal(intervals_each(&t.log, 1, OP_ACQUIRE, 4, see, &s), 0);
    assert_int_equal(s.n, 10); /* the log goes on to second 9, the last step's */
    const int64_t total[] = {2, 1, 0, 2},
                  at[4][4] = {{1, 1, 0, 0}, {0, 0, 0, 1}, {0}, {1, 0, 1, 0}};
    for (uint32_t k = 0; k < 4; k++) {
        assert_int_equal(s.total[k], total[k]);
        for (int j = 0; j < 4; j++)
            assert_int_equal(s.at[k][j], at[k][j]);
    }
    for (int op = 0; op < OP_COUNT; op++) {
        struct sum sum = {.h = hist(), .total_each = -1};
        assert_int_equal(intervals_each(&t.log, 1, op, 4, add_up, &sum), 0);
        assert_int_equal(sum.calls, 10);
        assert_int_equal(sum.h->total_count, t.h[op]->total_count);
        assert_int_equal(sum.h->max, t.h[op]->max);
        assert_int_equal(sum.h->min, t.h[op]->min);
        assert_memory_equal(sum.h->counts, t.h[op]->counts,
                            (size_t)sum.h->counts_len * sizeof(*sum.h->counts));
        histogram_free(sum.h);
    }
    assert_int_equal(t.h[OP_STEP]->total_count, 3);
    assert_int_equal(t.h[OP_HOLD]->total_count, 1);
    assert_int_equal(t.tl_ok[0], 1);
    assert_int_equal(t.tl_fail[3], 1);
    assert_int_equal(t.tl_ok[3], 1);
    tally_destroy(&t);
}

/* Each second's histogram of one op, as intervals_each hands them over. */
#define SEALED_SECONDS 40
struct per_second {
    struct histogram *h[SEALED_SECONDS];
    uint32_t calls;
};

static int keep(void *arg, uint32_t second, const struct histogram *h)
{
    struct per_second *p = arg;
    assert_true(second < SEALED_SECONDS && second == p->calls);
    p->h[p->calls] = hist();
    assert_int_equal(histogram_merge(p->h[p->calls], h), 0);
    p->calls++;
    return 0;
}

/* Until the sealer has handed the set back: it sealed it, as the tally's
 * thread did nothing meanwhile. Bounded: 2 s. */
static void wait_free(struct tally *t)
{
    for (int i = 0; i < 2000 && atomic_load(&t->slot) != TALLY_SLOT_FREE; i++)
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    assert_int_equal(atomic_load(&t->slot), TALLY_SLOT_FREE);
}

/* A tally whose seconds the sealer seals against one that seals its own,
 * fed the same samples: every second of every op the same, the whole-run
 * histograms the same and adding up to the seconds. The first 20 seconds
 * wait for the sealer after each turn, so it sealed exactly those 19; the
 * rest turn at once, so the tally's thread seals a set the sealer has not
 * taken yet, and the seconds must still come out in order. */
static void test_tally_sealer(void **state)
{
    (void)state;
    struct tally t[2];
    assert_int_equal(tally_init(&t[0], 4), 0);
    assert_int_equal(tally_init(&t[1], 4), 0);
    struct tally_sealer *sealer = tally_sealer_start(&t[0], 1);
    assert_non_null(sealer);
    assert_ptr_equal(t[0].sealer, sealer);
    const uint64_t t0 = 1000 * S, us = 1000;
    for (uint32_t sec = 0; sec < SEALED_SECONDS; sec++) {
        for (uint32_t k = 0; k < 1 + sec % 7; k++)
            for (int i = 0; i < 2; i++) {
                uint64_t end = t0 + sec * S + k * MS;
                tally_record(&t[i], t0, (enum op_kind)(k % OP_STEP), end,
                             (100 + sec * 37 + k) * us);
                tally_step(&t[i], t0, end, (sec * 1000 + k) * us, (int)(k & 1));
            }
        if (sec >= 1 && sec <= 19)
            wait_free(&t[0]); /* the turn into sec handed sec - 1 over */
    }
    tally_sealer_stop(sealer);
    assert_null(t[0].sealer);
    tally_finish(&t[0]);
    tally_finish(&t[1]);
    assert_int_equal(t[0].log.late, 0);
    assert_int_equal(t[0].log.lost, 0);
    /* 39 seconds handed over: the 19 waited for by the sealer, the rest by
     * either */
    assert_true(t[0].sealed_off >= 19 && t[0].sealed_off <= SEALED_SECONDS - 1);
    for (int op = 0; op < OP_COUNT; op++) {
        struct per_second p[2] = {{.calls = 0}, {.calls = 0}};
        for (int i = 0; i < 2; i++)
            assert_int_equal(intervals_each(&t[i].log, 1, op, SEALED_SECONDS, keep, &p[i]), 0);
        assert_int_equal(p[0].calls, SEALED_SECONDS);
        assert_int_equal(p[1].calls, SEALED_SECONDS);
        struct histogram *sum = hist();
        for (uint32_t sec = 0; sec < SEALED_SECONDS; sec++) {
            assert_int_equal(p[0].h[sec]->total_count, p[1].h[sec]->total_count);
            assert_memory_equal(p[0].h[sec]->counts, p[1].h[sec]->counts,
                                (size_t)sum->counts_len * sizeof(*sum->counts));
            assert_int_equal(histogram_merge(sum, p[0].h[sec]), 0);
            histogram_free(p[0].h[sec]);
            histogram_free(p[1].h[sec]);
        }
        assert_int_equal(sum->total_count, t[0].h[op]->total_count);
        assert_memory_equal(sum->counts, t[0].h[op]->counts,
                            (size_t)sum->counts_len * sizeof(*sum->counts));
        assert_memory_equal(t[1].h[op]->counts, t[0].h[op]->counts,
                            (size_t)sum->counts_len * sizeof(*sum->counts));
        histogram_free(sum);
    }
    /* Second s has 1 + s % 7 steps: 5 weeks of 1..7 (28 each) and 1..5. */
    assert_int_equal(t[0].h[OP_STEP]->total_count, 5 * 28 + 15);
    assert_int_equal(t[0].log.bytes, t[1].log.bytes);
    tally_destroy(&t[0]);
    tally_destroy(&t[1]);
}

/* Per second: count, nearest-rank p50 and p99 as the highest value of
 * their bucket but never above the max, and the exact max. Second 1:
 * 1,000,000 us and 50,000 us; p50 is rank 1, 50,000's bucket
 * [49,984, 50,015]; p99 rank 2, 1,000,000's [999,936, 1,000,447], so the
 * max. Second 0: 100,000 us, its bucket's top 100,031 capped at the max. */
static void test_latency_timeline(void **state)
{
    (void)state;
    struct interval_log logs[2] = {{0}, {0}};
    seal(&logs[0], 0, OP_ACQUIRE, (int64_t[]){100000}, 1);
    seal(&logs[0], 1, OP_ACQUIRE, (int64_t[]){1000000}, 1);
    seal(&logs[1], 1, OP_ACQUIRE, (int64_t[]){50000}, 1);
    seal(&logs[1], 1, OP_ACQUIRE_FAILED, (int64_t[]){7}, 1); /* a failed acquire is no grant */
    seal(&logs[1], 2, OP_ACQUIRE_FAILED, (int64_t[]){7}, 1);
    struct latency_second l[3];
    assert_int_equal(latency_timeline(logs, 2, l, 3), 0);
    assert_int_equal(l[0].count, 1);
    assert_true(l[0].p50_ms == 100.0 && l[0].p99_ms == 100.0 && l[0].max_ms == 100.0);
    assert_int_equal(l[1].count, 2);
    assert_true(l[1].p50_ms == 50015 / 1e3);
    assert_true(l[1].p99_ms == 1000.0 && l[1].max_ms == 1000.0);
    assert_int_equal(l[2].count, 0);
    assert_true(l[2].p50_ms == 0.0 && l[2].p99_ms == 0.0 && l[2].max_ms == 0.0);
    struct latency_second one[1]; /* a shorter timeline than the logs */
    assert_int_equal(latency_timeline(logs, 2, one, 1), 0);
    assert_int_equal(one[0].count, 1);
    intervals_log_free(&logs[0]);
    intervals_log_free(&logs[1]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_move),
        cmocka_unit_test(test_seal_bytes),
        cmocka_unit_test(test_seal_across_blocks),
        cmocka_unit_test(test_merge_threads),
        cmocka_unit_test(test_tally_seconds_add_up),
        cmocka_unit_test(test_tally_sealer),
        cmocka_unit_test(test_latency_timeline),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
