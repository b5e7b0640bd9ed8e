/* test_checker.c - the offline mutual-exclusion checker, case by case.
 *
 * Each test is one sentence of sim/check/checker.h with the numbers worked out
 * by hand: which pairs overlap, how long, whether fenced, which faults were
 * active. Times are small made-up nanoseconds; keys and owners are ids.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim/check/checker.h"
#include "sim/check/result.h"
#include "sim/engine/verdict.h"
#include "sim/scenario/scenario.h"

#define NO_CAP 1000

/* A section known only in time (a history from another tool). */
static struct section timed(uint32_t key, uint32_t owner, uint64_t from, uint64_t to)
{
    return (struct section){
        .key = key, .owner = owner, .client = owner, .from_ns = from, .to_ns = to};
}

/* A section with the witness's sequence numbers (a run's own history). */
static struct section seqd(uint32_t key, uint32_t owner, uint64_t from, uint64_t to,
                           uint64_t seq_from, uint64_t seq_to)
{
    struct section s = timed(key, owner, from, to);
    s.has_seq = true;
    s.seq_from = seq_from;
    s.seq_to = seq_to;
    return s;
}

static struct check_result check(struct section *s, size_t n, const struct fault_span *f, size_t nf,
                                 size_t cap)
{
    struct check_result r;
    assert_int_equal(checker_run(s, n, f, nf, 0, cap, false, &r), 0);
    assert_int_equal(r.sections, n);
    assert_int_equal(r.violations, r.overlaps - r.fenced_pairs);
    assert_int_equal(r.cap, cap);
    return r;
}

static void assert_counts(const struct check_result *r, uint64_t overlaps, uint64_t fenced,
                          uint64_t concurrent)
{
    assert_int_equal(r->overlaps, overlaps);
    assert_int_equal(r->fenced_pairs, fenced);
    assert_int_equal(r->violations, overlaps - fenced);
    assert_int_equal(r->concurrent_entries, concurrent);
}

static void assert_pair(const struct violation *v, size_t a, size_t b, uint64_t overlap_ns,
                        bool fenced)
{
    assert_int_equal(v->a, a);
    assert_int_equal(v->b, b);
    assert_int_equal(v->overlap_ns, overlap_ns);
    assert_int_equal(v->fenced, fenced);
}

/* ---- nothing to find ---------------------------------------------------- */

static void test_empty(void **state)
{
    (void)state;
    struct check_result r = check(NULL, 0, NULL, 0, NO_CAP);
    assert_counts(&r, 0, 0, 0);
    assert_int_equal(r.n_list, 0);
    checker_result_free(&r);
    checker_result_free(&r); /* freeing twice is harmless: it zeroes */
}

static void test_one_section(void **state)
{
    (void)state;
    struct section s[] = {timed(0, 1, 100, 200)};
    struct check_result r = check(s, 1, NULL, 0, NO_CAP);
    assert_counts(&r, 0, 0, 0);
    checker_result_free(&r);
}

static void test_sequential_owners(void **state)
{
    (void)state;
    struct section s[] = {timed(0, 1, 100, 200), timed(0, 2, 300, 400), timed(0, 1, 500, 600)};
    struct check_result r = check(s, 3, NULL, 0, NO_CAP);
    assert_counts(&r, 0, 0, 0);
    checker_result_free(&r);
}

/* One ends exactly when the next begins: a clean hand-over. */
static void test_touching_intervals_do_not_overlap(void **state)
{
    (void)state;
    struct section s[] = {timed(0, 1, 100, 200), timed(0, 2, 200, 300)};
    struct check_result r = check(s, 2, NULL, 0, NO_CAP);
    assert_counts(&r, 0, 0, 0);
    assert_int_equal(r.n_list, 0);
    checker_result_free(&r);
}

/* Re-entry by the same owner is no conflict, and no concurrent entry
 * either: the witness is entered once per holder of a key (resource.h),
 * so it never sees a re-entry. */
static void test_same_owner_reentry(void **state)
{
    (void)state;
    struct section nested[] = {timed(0, 7, 100, 500), timed(0, 7, 200, 300)};
    struct check_result r = check(nested, 2, NULL, 0, NO_CAP);
    assert_counts(&r, 0, 0, 0);
    assert_int_equal(r.n_list, 0);
    checker_result_free(&r);

    struct section crossing[] = {timed(0, 7, 100, 300), timed(0, 7, 200, 400)};
    r = check(crossing, 2, NULL, 0, NO_CAP);
    assert_counts(&r, 0, 0, 0);
    checker_result_free(&r);
}

static void test_different_keys_never_conflict(void **state)
{
    (void)state;
    struct section s[] = {timed(1, 1, 100, 300), timed(0, 2, 100, 300), timed(2, 3, 150, 250)};
    struct check_result r = check(s, 3, NULL, 0, NO_CAP);
    assert_counts(&r, 0, 0, 0);
    /* sorted in place by key */
    assert_int_equal(s[0].key, 0);
    assert_int_equal(s[1].key, 1);
    assert_int_equal(s[2].key, 2);
    checker_result_free(&r);
}

/* ---- overlaps ----------------------------------------------------------- */

/* Given out of order: indices in the result refer to the sorted array. */
static void test_simple_overlap(void **state)
{
    (void)state;
    struct section s[] = {timed(0, 2, 200, 500), timed(0, 1, 100, 300)};
    struct check_result r = check(s, 2, NULL, 0, NO_CAP);
    assert_counts(&r, 1, 0, 1);
    assert_int_equal(r.n_list, 1);
    assert_int_equal(s[0].owner, 1); /* entered first */
    assert_int_equal(s[1].owner, 2);
    assert_pair(&r.list[0], 0, 1, 100, false); /* both inside during [200, 300) */
    assert_int_equal(r.list[0].n_faults, 0);
    checker_result_free(&r);
}

/* A [0,100) B [10,100) C [20,100): pairs AB, AC, BC; B and C entered
 * an occupied key. */
static void test_three_way_overlap(void **state)
{
    (void)state;
    struct section s[] = {timed(0, 3, 20, 100), timed(0, 1, 0, 100), timed(0, 2, 10, 100)};
    struct check_result r = check(s, 3, NULL, 0, NO_CAP);
    assert_counts(&r, 3, 0, 2);
    assert_int_equal(r.n_list, 3);
    assert_pair(&r.list[0], 0, 1, 90, false);
    assert_pair(&r.list[1], 0, 2, 80, false);
    assert_pair(&r.list[2], 1, 2, 80, false);
    checker_result_free(&r);
}

/* The resource rejected the stale holder's write: safe, counted apart. */
static void test_fenced_overlap_is_not_a_violation(void **state)
{
    (void)state;
    struct section s[] = {timed(0, 1, 0, 100), timed(0, 2, 50, 150)};
    s[0].effect = EFFECT_FENCED;
    struct check_result r = check(s, 2, NULL, 0, NO_CAP);
    assert_counts(&r, 1, 1, 1);
    assert_int_equal(r.violations, 0);
    assert_int_equal(r.n_list, 1); /* listed all the same */
    assert_pair(&r.list[0], 0, 1, 50, true);
    checker_result_free(&r);
}

/* The same overlap with the later side fenced, and with neither. */
static void test_fenced_either_side(void **state)
{
    (void)state;
    struct section s[] = {timed(0, 1, 0, 100), timed(0, 2, 50, 150), timed(0, 3, 60, 70)};
    s[1].effect = EFFECT_FENCED;
    s[2].effect = EFFECT_CRASHED;
    struct check_result r = check(s, 3, NULL, 0, NO_CAP);
    /* 1-2 fenced, 1-3 not, 2-3 fenced */
    assert_counts(&r, 3, 2, 2);
    assert_int_equal(r.violations, 1);
    assert_pair(&r.list[0], 0, 1, 50, true);
    assert_pair(&r.list[1], 0, 2, 10, false);
    assert_pair(&r.list[2], 1, 2, 10, true);
    checker_result_free(&r);
}

/* ---- sequence versus time ------------------------------------------------ */

/* B entered the witness (seq 1) before A left it (seq 2), though A read
 * its exit clock 3 ns before B read its entry clock: the sequence wins,
 * and the pair shares no nanosecond. */
static void test_seq_overlap_where_time_does_not(void **state)
{
    (void)state;
    struct section s[] = {seqd(0, 1, 100, 200, 0, 2), seqd(0, 2, 203, 300, 1, 3)};
    struct check_result r = check(s, 2, NULL, 0, NO_CAP);
    assert_counts(&r, 1, 0, 1);
    assert_pair(&r.list[0], 0, 1, 0, false);
    checker_result_free(&r);
}

/* The times overlap by 5 ns but the witness saw A leave (seq 1) before B
 * entered (seq 2): no overlap. */
static void test_seq_no_overlap_where_time_does(void **state)
{
    (void)state;
    struct section s[] = {seqd(0, 1, 100, 205, 0, 1), seqd(0, 2, 200, 300, 2, 3)};
    struct check_result r = check(s, 2, NULL, 0, NO_CAP);
    assert_counts(&r, 0, 0, 0);
    checker_result_free(&r);
}

/* Entry order comes from the sequence too: B's clock says it entered
 * first, the witness says A did. */
static void test_seq_decides_entry_order(void **state)
{
    (void)state;
    struct section s[] = {seqd(0, 2, 99, 300, 1, 3), seqd(0, 1, 100, 200, 0, 2)};
    struct check_result r = check(s, 2, NULL, 0, NO_CAP);
    assert_counts(&r, 1, 0, 1);
    assert_int_equal(s[0].owner, 1);
    assert_pair(&r.list[0], 0, 1, 100, false);
    checker_result_free(&r);
}

/* Only one side has a sequence: compared on time. */
static void test_mixed_seq_falls_back_to_time(void **state)
{
    (void)state;
    struct section overlap[] = {seqd(0, 1, 100, 205, 0, 1), timed(0, 2, 200, 300)};
    struct check_result r = check(overlap, 2, NULL, 0, NO_CAP);
    assert_counts(&r, 1, 0, 1);
    assert_pair(&r.list[0], 0, 1, 5, false);
    checker_result_free(&r);

    struct section apart[] = {seqd(0, 1, 100, 200, 0, 2), timed(0, 2, 203, 300)};
    r = check(apart, 2, NULL, 0, NO_CAP);
    assert_counts(&r, 0, 0, 0);
    checker_result_free(&r);
}

/* In a key where one section lacks a sequence (say it was still open when
 * the run ended), the pairs that have both still use the sequence. */
static void test_mixed_key_keeps_seq_pairs(void **state)
{
    (void)state;
    struct section s[] = {seqd(0, 1, 100, 200, 0, 2), seqd(0, 2, 203, 300, 1, 3),
                          timed(0, 3, 250, 400)};
    struct check_result r = check(s, 3, NULL, 0, NO_CAP);
    /* 1-2 on the sequence (0 ns), 2-3 on time (50 ns), 1-3 apart */
    assert_counts(&r, 2, 0, 2);
    assert_pair(&r.list[0], 0, 1, 0, false);
    assert_pair(&r.list[1], 1, 2, 50, false);
    checker_result_free(&r);

    /* overlapping in both sequence and time: still one pair, not two */
    struct section both[] = {seqd(0, 1, 100, 300, 0, 2), seqd(0, 2, 200, 400, 1, 3),
                             timed(0, 3, 500, 600)};
    r = check(both, 3, NULL, 0, NO_CAP);
    assert_counts(&r, 1, 0, 1);
    assert_pair(&r.list[0], 0, 1, 100, false);
    checker_result_free(&r);
}

/* ---- faults ------------------------------------------------------------- */

static void test_faults_attached_to_violation(void **state)
{
    (void)state;
    /* overlap [200, 300) */
    struct section s[] = {timed(0, 1, 100, 300), timed(0, 2, 200, 500)};
    struct fault_span f[] = {
        {.type = 0, .client = 1, .from_ns = 0, .to_ns = 50},           /* over before */
        {.type = 0, .client = 1, .from_ns = 250, .to_ns = 260},        /* inside */
        {.type = 1, .client = 2, .from_ns = 150, .to_ns = UINT64_MAX}, /* still running */
        {.type = 0, .client = 2, .from_ns = 301, .to_ns = 400},        /* after */
    };
    struct check_result r = check(s, 2, f, 4, NO_CAP);
    assert_int_equal(r.list[0].n_faults, 2);
    assert_int_equal(r.list[0].faults[0], 1);
    assert_int_equal(r.list[0].faults[1], 2);
    checker_result_free(&r);
}

/* A fault that struck the earlier holder while it held (its renewals lost)
 * and ended long before the overlap still explains it; one that ended
 * before that holder entered, past the lookback, does not. */
static void test_faults_on_the_earlier_holder(void **state)
{
    (void)state;
    struct section s[] = {timed(0, 1, 100, 900), timed(0, 2, 600, 700)};
    struct fault_span f[] = {
        {.type = 0, .client = 1, .from_ns = 50, .to_ns = 90},   /* before: no */
        {.type = 0, .client = 1, .from_ns = 150, .to_ns = 250}, /* on the first holder: yes */
        {.type = 0, .client = 2, .from_ns = 800, .to_ns = 850}, /* after the overlap: no */
    };
    struct check_result r = check(s, 2, f, 3, NO_CAP);
    assert_int_equal(r.violations, 1);
    assert_int_equal(r.list[0].n_faults, 1);
    assert_int_equal(r.list[0].faults[0], 1);
    checker_result_free(&r);
}

/* Overlapping only in sequence: faults at the moment the later one entered. */
static void test_faults_at_sequence_only_overlap(void **state)
{
    (void)state;
    struct section s[] = {seqd(0, 1, 100, 200, 0, 2), seqd(0, 2, 203, 300, 1, 3)};
    struct fault_span f[] = {
        {.type = 0, .client = 1, .from_ns = 201, .to_ns = 202}, /* in the 3 ns gap */
        {.type = 0, .client = 1, .from_ns = 150, .to_ns = 203}, /* ends at the entry */
    };
    struct check_result r = check(s, 2, f, 2, NO_CAP);
    assert_int_equal(r.list[0].n_faults, 1);
    assert_int_equal(r.list[0].faults[0], 1);
    checker_result_free(&r);
}

static void test_at_most_four_faults_per_violation(void **state)
{
    (void)state;
    struct section s[] = {timed(0, 1, 100, 300), timed(0, 2, 200, 500)};
    struct fault_span f[6];
    for (int i = 0; i < 6; i++)
        f[i] = (struct fault_span){.type = 0, .client = i, .from_ns = 0, .to_ns = 1000};
    struct check_result r = check(s, 2, f, 6, NO_CAP);
    assert_int_equal(r.list[0].n_faults, CHECK_MAX_FAULTS_PER_VIOLATION);
    for (size_t i = 0; i < CHECK_MAX_FAULTS_PER_VIOLATION; i++)
        assert_int_equal(r.list[0].faults[i], i);
    checker_result_free(&r);
}

/* ---- scale -------------------------------------------------------------- */

/* Ten holders inside at once: 45 pairs, 9 occupied entries; listing 5. */
static void test_listing_cap_keeps_counts_exact(void **state)
{
    (void)state;
    struct section s[10];
    for (uint32_t i = 0; i < 10; i++)
        s[i] = timed(0, i, i, 1000);
    struct check_result r = check(s, 10, NULL, 0, 5);
    assert_counts(&r, 45, 0, 9);
    assert_int_equal(r.n_list, 5);
    assert_pair(&r.list[0], 0, 1, 999, false);
    assert_pair(&r.list[1], 0, 2, 998, false);
    assert_pair(&r.list[2], 1, 2, 998, false);
    assert_pair(&r.list[3], 0, 3, 997, false);
    assert_pair(&r.list[4], 1, 3, 997, false);
    checker_result_free(&r);

    r = check(s, 10, NULL, 0, 0);
    assert_counts(&r, 45, 0, 9);
    assert_int_equal(r.n_list, 0);
    assert_null(r.list);
    checker_result_free(&r);
}

static double seconds_since(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

static void shuffle(struct section *s, size_t n)
{
    uint64_t x = 88172645463325252ULL;
    for (size_t i = n; i > 1; i--) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        size_t j = (size_t)(x % i);
        struct section t = s[i - 1];
        s[i - 1] = s[j];
        s[j] = t;
    }
}

/* 100000 hand-overs on 10 keys, shuffled: nothing found, quickly. */
static void test_many_sequential_sections(void **state)
{
    (void)state;
    size_t n = 100000;
    struct section *s = malloc(n * sizeof(*s));
    assert_non_null(s);
    for (size_t i = 0; i < n; i++) {
        uint64_t k = i / 10, t = 1000 + 100 * k;
        s[i] = seqd((uint32_t)(i % 10), (uint32_t)(i % 7), t, t + 100, 2 * k, 2 * k + 1);
    }
    shuffle(s, n);
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    struct check_result r = check(s, n, NULL, 0, NO_CAP);
    assert_true(seconds_since(&t0) < 5.0);
    assert_counts(&r, 0, 0, 0);
    for (size_t i = 1; i < n; i++)
        assert_true(s[i - 1].key < s[i].key ||
                    (s[i - 1].key == s[i].key && s[i - 1].seq_from < s[i].seq_from));
    checker_result_free(&r);
    free(s);
}

/* 2000 holders of one key all inside at once: n(n-1)/2 pairs counted
 * exactly, one in four fenced, only the first 1000 listed. */
static void test_million_overlaps_counted_exactly(void **state)
{
    (void)state;
    size_t n = 2000;
    struct section *s = malloc(n * sizeof(*s));
    assert_non_null(s);
    for (size_t i = 0; i < n; i++)
        s[i] = timed(0, (uint32_t)i, i, 1000000);
    for (size_t i = 0; i < 500; i++)
        s[i].effect = EFFECT_FENCED;
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    struct check_result r = check(s, n, NULL, 0, NO_CAP);
    assert_true(seconds_since(&t0) < 5.0);
    /* fenced pairs: any pair touching the first 500 */
    uint64_t all = 1999000, clean = 1500 * 1499 / 2;
    assert_counts(&r, all, all - clean, n - 1);
    assert_int_equal(r.n_list, NO_CAP);
    checker_result_free(&r);
    free(s);
}

/* ---- host stalls --------------------------------------------------------- */

/* A stall counts for a pair with the part of it the earlier holder lived
 * before the later one entered, when it ended at most a lease before that
 * entry; the longest such part is named. */
static void test_stall_attached_while_the_earlier_holder_held(void **state)
{
    (void)state;
    struct section s[] = {timed(0, 1, 100, 300), timed(0, 2, 200, 500), timed(1, 3, 1000, 1200),
                          timed(1, 4, 1100, 1300)};
    const struct host_stall st[] = {
        {50, 120},   /* 70 long, but a lived only 20 of it */
        {150, 190},  /* inside a, before b: 40 */
        {200, 260},  /* begins as b enters: too late */
        {990, 1000}, /* ends as c enters: too early */
        {1010, 1020} /* inside c, before d: 10 */
    };
    struct check_result r = check(s, 4, NULL, 0, NO_CAP);
    checker_attach_stalls(&r, s, st, 5, 1000);
    assert_int_equal(r.n_list, 2);
    assert_int_equal(r.list[0].stall_ns, 40);
    assert_int_equal(r.list[0].stall_from_ns, 150);
    assert_int_equal(r.list[1].stall_ns, 10);
    assert_int_equal(r.list[1].stall_from_ns, 1010);
    /* a 10 ns lease: the stall at 150..190 ended 10 before b entered,
     * the one at 1010..1020 80 before d did */
    checker_attach_stalls(&r, s, st, 5, 10);
    assert_int_equal(r.list[0].stall_ns, 40);
    assert_int_equal(r.list[1].stall_ns, 0);
    checker_attach_stalls(&r, s, st, 5, 9);
    assert_int_equal(r.list[0].stall_ns, 0);
    checker_attach_stalls(&r, s, st, 0, 1000);
    assert_int_equal(r.list[0].stall_ns, 0);
    checker_result_free(&r);
}

#define MS 1000000ULL

/* Two violations, each in a stall longer than the 200 ms slack, no fault:
 * the host made them. Any one thing otherwise makes them the lock's. */
static void test_host_made_violations_only_past_the_slack(void **state)
{
    (void)state;
    static struct run_result r;
    struct violation list[3] = {
        {.stall_ns = 300 * MS, .stall_from_ns = 1000 * MS},
        {.stall_ns = 250 * MS, .stall_from_ns = 3000 * MS},
        {.fenced = true}, /* a fenced pair is no violation: nothing to explain */
    };
    r.hist.metered = true;
    r.hist.slack_ms = 200;
    r.check.violations = 2;
    r.check.list = list;
    r.check.n_list = 3;
    char why[320];
    assert_true(result_host_made_violations(&r, why, sizeof(why)));
    assert_string_equal(why, "the host stalled the testbed 300 ms at 1.000 s (no thread of it "
                             "ran), past the 200 ms its lock rides out; every violation (2) came "
                             "of such a stall, no fault near it: this run cannot judge the lock");
    list[1].stall_ns = 200 * MS; /* no longer than the slack: the lease should have held */
    assert_false(result_host_made_violations(&r, why, sizeof(why)));
    list[1].stall_ns = 250 * MS;
    list[1].n_faults = 1; /* a fault near it: the fault's */
    assert_false(result_host_made_violations(&r, why, sizeof(why)));
    list[1].n_faults = 0;
    r.check.violations = 3; /* one not listed could be the lock's own */
    assert_false(result_host_made_violations(&r, why, sizeof(why)));
    r.check.violations = 2;
    r.hist.slack_ms = 0; /* the lease does not outlast the hold: no stall excuses */
    assert_false(result_host_made_violations(&r, why, sizeof(why)));
    r.hist.slack_ms = 200;
    r.hist.metered = false; /* no meter: nothing can be told */
    assert_false(result_host_made_violations(&r, why, sizeof(why)));
    r.hist.metered = true;
    r.hist.dropped = 1; /* a lost event could be the lock's own violation */
    assert_false(result_host_made_violations(&r, why, sizeof(why)));
    r.hist.dropped = 0;
    /* a slack of a few scheduler ticks (under 50 ms), or under a tenth of
     * the lease, is the configuration's weakness: no stall excuses it */
    r.hist.slack_ms = 49;
    list[0].stall_ns = list[1].stall_ns = 300 * MS;
    assert_false(result_host_made_violations(&r, why, sizeof(why)));
    r.hist.slack_ms = 200;
    r.hist.ttl_ms = 2010;
    assert_false(result_host_made_violations(&r, why, sizeof(why)));
    r.hist.ttl_ms = 2000;
    assert_true(result_host_made_violations(&r, why, sizeof(why)));
}

/* A run that failed only on violations the host made, and on invariants
 * only overlaps break, is INCOMPLETE; an invariant a configuration breaks
 * with no overlap at all (a late scheduled instance) keeps its FAIL. */
static void test_host_made_run_is_incomplete_unless_something_else_failed(void **state)
{
    (void)state;
    static struct scenario scn;
    static struct run_result r;
    struct violation v = {.stall_ns = 300 * MS, .stall_from_ns = 1000 * MS};
    scn.expect.violations = (struct expect_num){.op = EXPECT_EQ, .value = 0};
    scn.expect.invariants = EXPECT_INV_HOLD;
    r.scn = &scn;
    r.hist.metered = true;
    r.hist.slack_ms = 200;
    r.check.violations = 1;
    r.check.list = &v;
    r.check.n_list = 1;
    r.witness_agrees = true;
    r.n_inv = 1;
    r.inv[0] = (struct invariant){.name = "no_duplicate_runs", .holds = false};
    r.complete = true;
    result_judge(&r);
    assert_true(r.complete);
    assert_false(r.passed);
    r.inv[0].by_overlaps = true;
    result_judge(&r);
    assert_false(r.complete);
    assert_non_null(strstr(r.incomplete_reason, "the host stalled the testbed 300 ms"));
}

/* ---- optimistic concurrency: judged by its writes ------------------------ */

/* Three pairs overlap on three keys: two readers that wrote nothing, a
 * writer and a reader, two writers. Only the last is a violation under
 * writes_only; all three are without it. */
static void test_writes_only_judges_writes(void **state)
{
    (void)state;
    struct section s[] = {
        timed(1, 1, 10, 20), timed(1, 2, 15, 25), /* none, none */
        timed(2, 1, 10, 20), timed(2, 2, 15, 25), /* applied, none */
        timed(3, 1, 10, 20), timed(3, 2, 15, 25), /* applied, applied */
    };
    for (size_t i = 0; i < 6; i++)
        s[i].effect = EFFECT_NONE;
    s[2].effect = s[4].effect = s[5].effect = EFFECT_APPLIED;
    struct check_result r;
    assert_int_equal(checker_run(s, 6, NULL, 0, 0, NO_CAP, true, &r), 0);
    assert_counts(&r, 3, 2, 3);
    assert_int_equal(r.n_list, 3);
    assert_false(r.list[2].fenced); /* key 3: the two writers */
    assert_int_equal(s[r.list[2].a].key, 3);
    checker_result_free(&r);
    assert_int_equal(checker_run(s, 6, NULL, 0, 0, NO_CAP, false, &r), 0);
    assert_counts(&r, 3, 0, 3);
    checker_result_free(&r);
}

/* One owner re-entering a key 5,000 times, then another owner inside the
 * whole nest once and, later, inside the 5 outermost holds: every nested
 * hold is its own section, so each of the other owner's entries pairs with
 * every one still inside (5,000 + 5), and the re-entries none. */
static void test_deep_reentry_pairs_each_hold(void **state)
{
    (void)state;
    enum { DEPTH = 5000 };
    struct section *s = calloc(DEPTH + 2, sizeof(*s));
    assert_non_null(s);
    for (uint64_t i = 0; i < DEPTH; i++)
        s[i] = timed(0, 1, 10 * i + 10, 200000 - 10 * i);
    s[DEPTH] = timed(0, 2, 60000, 60005);       /* inside all 5,000 (innermost: to 150010) */
    s[DEPTH + 1] = timed(0, 2, 199950, 200100); /* inside those with to > 199950: i < 5 */
    struct check_result r = check(s, DEPTH + 2, NULL, 0, NO_CAP);
    assert_counts(&r, DEPTH + 5, 0, 2);
    assert_int_equal(r.n_list, NO_CAP);
    /* listed earliest holder first: the outermost hold with the first intruder */
    assert_int_equal(r.list[0].sa.owner, 1);
    assert_int_equal(r.list[0].sa.from_ns, 10);
    assert_int_equal(r.list[0].sb.from_ns, 60000);
    checker_result_free(&r);
    free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_writes_only_judges_writes),
        cmocka_unit_test(test_one_section),
        cmocka_unit_test(test_sequential_owners),
        cmocka_unit_test(test_touching_intervals_do_not_overlap),
        cmocka_unit_test(test_same_owner_reentry),
        cmocka_unit_test(test_deep_reentry_pairs_each_hold),
        cmocka_unit_test(test_different_keys_never_conflict),
        cmocka_unit_test(test_simple_overlap),
        cmocka_unit_test(test_three_way_overlap),
        cmocka_unit_test(test_fenced_overlap_is_not_a_violation),
        cmocka_unit_test(test_fenced_either_side),
        cmocka_unit_test(test_seq_overlap_where_time_does_not),
        cmocka_unit_test(test_seq_no_overlap_where_time_does),
        cmocka_unit_test(test_seq_decides_entry_order),
        cmocka_unit_test(test_mixed_seq_falls_back_to_time),
        cmocka_unit_test(test_mixed_key_keeps_seq_pairs),
        cmocka_unit_test(test_faults_attached_to_violation),
        cmocka_unit_test(test_faults_at_sequence_only_overlap),
        cmocka_unit_test(test_faults_on_the_earlier_holder),
        cmocka_unit_test(test_at_most_four_faults_per_violation),
        cmocka_unit_test(test_listing_cap_keeps_counts_exact),
        cmocka_unit_test(test_many_sequential_sections),
        cmocka_unit_test(test_million_overlaps_counted_exactly),
        cmocka_unit_test(test_stall_attached_while_the_earlier_holder_held),
        cmocka_unit_test(test_host_made_violations_only_past_the_slack),
        cmocka_unit_test(test_host_made_run_is_incomplete_unless_something_else_failed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
