/* test_checker_modes.c - the offline checker judging by lock mode.
 *
 * Each test is one rule of sim/check/checker.h's "Modes" with the numbers
 * worked out by hand: readers share, never with a writer; a semaphore of N
 * permits admits N holders, and the N+1st is one pair (the entrant and the
 * holder inside that leaves first); the same owner never conflicts with
 * itself, except by using up permits. Times are small made-up nanoseconds.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>

#include "sim/check/checker.h"

#define NO_CAP 1000

static struct section sec(uint8_t mode, uint32_t owner, uint64_t from, uint64_t to)
{
    return (struct section){
        .mode = mode, .owner = owner, .client = owner, .from_ns = from, .to_ns = to};
}

static struct section excl(uint32_t owner, uint64_t from, uint64_t to)
{
    return sec(LOCK_MODE_EXCLUSIVE, owner, from, to);
}

static struct section shared(uint32_t owner, uint64_t from, uint64_t to)
{
    return sec(LOCK_MODE_SHARED, owner, from, to);
}

static struct section permit(uint32_t n, uint32_t owner, uint64_t from, uint64_t to)
{
    struct section s = sec(LOCK_MODE_PERMIT, owner, from, to);
    s.permits = n;
    return s;
}

/* The same with the witness's sequence numbers. */
static struct section with_seq(struct section s, uint64_t seq_from, uint64_t seq_to)
{
    s.has_seq = true;
    s.seq_from = seq_from;
    s.seq_to = seq_to;
    return s;
}

static struct check_result check(struct section *s, size_t n)
{
    struct check_result r;
    assert_int_equal(checker_run(s, n, NULL, 0, 0, NO_CAP, false, &r), 0);
    assert_int_equal(r.violations, r.overlaps - r.fenced_pairs);
    assert_int_equal(r.n_list, r.overlaps < NO_CAP ? r.overlaps : NO_CAP);
    return r;
}

static void assert_counts(const struct check_result *r, uint64_t overlaps, uint64_t fenced,
                          uint64_t concurrent)
{
    assert_int_equal(r->overlaps, overlaps);
    assert_int_equal(r->fenced_pairs, fenced);
    assert_int_equal(r->concurrent_entries, concurrent);
}

static void assert_pair(const struct violation *v, size_t a, size_t b, uint64_t overlap_ns)
{
    assert_int_equal(v->a, a);
    assert_int_equal(v->b, b);
    assert_int_equal(v->overlap_ns, overlap_ns);
}

/* ---- readers and writers ------------------------------------------------ */

static void test_readers_overlap_freely(void **state)
{
    (void)state;
    struct section s[] = {shared(1, 100, 300), shared(2, 150, 350), shared(3, 200, 250)};
    struct check_result r = check(s, 3);
    assert_counts(&r, 0, 0, 0);
    checker_result_free(&r);
}

/* A writer entering among two readers conflicts with both; a reader
 * entering while the writer is inside conflicts with it alone; a reader
 * entering as the writer leaves, with nobody. */
static void test_writer_among_readers(void **state)
{
    (void)state;
    struct section s[] = {shared(1, 100, 400), shared(2, 150, 450), excl(3, 200, 300),
                          shared(4, 250, 350), shared(5, 300, 310)};
    struct check_result r = check(s, 5);
    assert_counts(&r, 3, 0, 2);
    assert_pair(&r.list[0], 0, 2, 100);
    assert_pair(&r.list[1], 1, 2, 100);
    assert_pair(&r.list[2], 2, 3, 50);
    assert_false(r.list[0].fenced);
    checker_result_free(&r);
}

static void test_readers_entering_on_a_writer(void **state)
{
    (void)state;
    struct section s[] = {excl(1, 100, 300), shared(2, 200, 400), shared(3, 250, 260)};
    struct check_result r = check(s, 3);
    assert_counts(&r, 2, 0, 2);
    assert_pair(&r.list[0], 0, 1, 100);
    assert_pair(&r.list[1], 0, 2, 10);
    checker_result_free(&r);
}

/* As with two writers: a fenced side makes the pair safe. */
static void test_fenced_writer_among_readers(void **state)
{
    (void)state;
    struct section s[] = {shared(1, 100, 300), excl(2, 200, 400)};
    s[1].effect = EFFECT_FENCED;
    struct check_result r = check(s, 2);
    assert_counts(&r, 1, 1, 1);
    assert_int_equal(r.violations, 0);
    assert_true(r.list[0].fenced);
    checker_result_free(&r);
}

/* A mode the checker does not know is judged the strict way. */
static void test_unknown_mode_is_exclusive(void **state)
{
    (void)state;
    struct section s[] = {shared(1, 100, 300), sec(LOCK_MODE_COUNT, 2, 200, 400)};
    struct check_result r = check(s, 2);
    assert_counts(&r, 1, 0, 1);
    checker_result_free(&r);
}

/* Many readers inside at once cost nothing to judge (they are never walked
 * by another reader), and a writer among them conflicts with each. */
static void test_many_readers_one_writer(void **state)
{
    (void)state;
    enum { READERS = 100000 };
    struct section *s = malloc((READERS + 2) * sizeof(*s));
    assert_non_null(s);
    for (uint32_t i = 0; i < READERS; i++)
        s[i] = shared(i, 1000 + i, 1000000000);
    s[READERS] = excl(READERS, 500000, 600000);
    s[READERS + 1] = shared(READERS + 1, 550000, 560000);
    struct check_result r;
    assert_int_equal(checker_run(s, READERS + 2, NULL, 0, 0, 10, false, &r), 0);
    /* the writer finds the 100000 readers inside; the last reader the writer */
    assert_counts(&r, READERS + 1, 0, 2);
    assert_int_equal(r.n_list, 10);
    checker_result_free(&r);
    free(s);
}

/* ---- permits ------------------------------------------------------------ */

/* N = 2: the third holder inside is one violation, paired with the holder
 * that leaves first; a fourth entering while two are still inside is
 * another; two at a time never is. */
static void test_permits_two_with_three_holders(void **state)
{
    (void)state;
    struct section s[] = {permit(2, 1, 100, 400), permit(2, 2, 200, 300), permit(2, 3, 250, 500),
                          permit(2, 4, 320, 330), permit(2, 5, 600, 700)};
    struct check_result r = check(s, 5);
    assert_counts(&r, 2, 0, 2);
    assert_pair(&r.list[0], 1, 2, 50);
    assert_pair(&r.list[1], 0, 3, 10);
    checker_result_free(&r);

    struct section two[] = {permit(2, 1, 100, 300), permit(2, 2, 200, 400), permit(2, 3, 300, 500)};
    r = check(two, 3);
    assert_counts(&r, 0, 0, 0);
    checker_result_free(&r);
}

/* A semaphore counts permits, not owners: one owner holding three of two
 * is as much a violation. */
static void test_permits_of_one_owner_count(void **state)
{
    (void)state;
    struct section s[] = {permit(2, 7, 100, 400), permit(2, 7, 200, 300), permit(2, 7, 250, 260)};
    struct check_result r = check(s, 3);
    assert_counts(&r, 1, 0, 1);
    assert_pair(&r.list[0], 1, 2, 10);
    checker_result_free(&r);
}

/* One permit is a mutex; 0 (a hand-built section) is taken as 1. */
static void test_one_permit_is_a_mutex(void **state)
{
    (void)state;
    struct section s[] = {permit(1, 1, 100, 300), permit(0, 2, 200, 400)};
    struct check_result r = check(s, 2);
    assert_counts(&r, 1, 0, 1);
    assert_pair(&r.list[0], 0, 1, 100);
    checker_result_free(&r);
}

/* A permit is a shared hold: a writer conflicts with it both ways, and a
 * permit counts the readers inside against its N (checker.h). */
static void test_permits_among_other_modes(void **state)
{
    (void)state;
    struct section s[] = {excl(1, 100, 300), permit(2, 2, 200, 400)};
    struct check_result r = check(s, 2);
    assert_counts(&r, 1, 0, 1);
    checker_result_free(&r);

    struct section t[] = {shared(1, 100, 300), permit(2, 2, 150, 400), permit(2, 3, 200, 250)};
    r = check(t, 3);
    assert_counts(&r, 1, 0, 1);
    assert_pair(&r.list[0], 0, 2, 50);
    checker_result_free(&r);
}

/* ---- re-entry ----------------------------------------------------------- */

static void test_reentry_by_the_same_owner(void **state)
{
    (void)state;
    struct section s[] = {excl(7, 100, 500), excl(7, 200, 300), shared(7, 250, 260)};
    struct check_result r = check(s, 3);
    assert_counts(&r, 0, 0, 0);
    checker_result_free(&r);

    struct section t[] = {shared(7, 100, 500), excl(7, 200, 300), shared(8, 250, 260)};
    r = check(t, 3);
    assert_counts(&r, 1, 0, 1); /* another owner's reader meets the writer */
    assert_pair(&r.list[0], 1, 2, 10);
    checker_result_free(&r);
}

/* ---- order: the witness's sequence, and time where it is missing -------- */

/* On the sequence: the time overlap of a writer and a reader that the
 * witness saw one after the other is none; a sequence overlap with no
 * common nanosecond is one. */
static void test_modes_on_the_sequence(void **state)
{
    (void)state;
    struct section s[] = {with_seq(excl(1, 100, 200), 0, 1), with_seq(shared(2, 150, 250), 2, 3)};
    struct check_result r = check(s, 2);
    assert_counts(&r, 0, 0, 0);
    checker_result_free(&r);

    struct section t[] = {with_seq(excl(1, 100, 200), 0, 2), with_seq(shared(2, 200, 300), 1, 3),
                          with_seq(shared(3, 200, 300), 4, 5), with_seq(shared(4, 250, 260), 6, 7)};
    r = check(t, 4);
    assert_counts(&r, 1, 0, 1);
    assert_pair(&r.list[0], 0, 1, 0);
    checker_result_free(&r);

    struct section p[] = {with_seq(permit(2, 1, 100, 400), 0, 5),
                          with_seq(permit(2, 2, 100, 400), 1, 4),
                          with_seq(permit(2, 3, 100, 400), 2, 3)};
    r = check(p, 3);
    assert_counts(&r, 1, 0, 1);
    assert_pair(&r.list[0], 1, 2, 300); /* the one leaving first: seq 4 */
    checker_result_free(&r);
}

/* A key where one permit lacks a sequence: it is judged on time against
 * everything, and an entry with one is judged once, where it was first. */
static void test_permits_in_mixed_order(void **state)
{
    (void)state;
    /* N = 2: two with a sequence, a third known only in time */
    struct section s[] = {with_seq(permit(2, 1, 100, 400), 0, 5),
                          with_seq(permit(2, 2, 200, 300), 1, 4), permit(2, 3, 250, 350)};
    struct check_result r = check(s, 3);
    assert_counts(&r, 1, 0, 1);
    assert_pair(&r.list[0], 1, 2, 50);
    checker_result_free(&r);

    /* N = 1: B over A on the sequence; C (timed) over A in time; B, which
     * also finds C inside in time, is not counted a second time */
    struct section t[] = {with_seq(permit(1, 1, 100, 400), 0, 3),
                          with_seq(permit(1, 2, 200, 300), 1, 2), permit(1, 3, 150, 500)};
    r = check(t, 3);
    assert_counts(&r, 2, 0, 2);
    /* sorted by time: A 0, C 1, B 2; the sequence's pair is listed first */
    assert_pair(&r.list[0], 0, 2, 100);
    assert_pair(&r.list[1], 0, 1, 250);
    checker_result_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_readers_overlap_freely),
        cmocka_unit_test(test_writer_among_readers),
        cmocka_unit_test(test_readers_entering_on_a_writer),
        cmocka_unit_test(test_fenced_writer_among_readers),
        cmocka_unit_test(test_unknown_mode_is_exclusive),
        cmocka_unit_test(test_many_readers_one_writer),
        cmocka_unit_test(test_permits_two_with_three_holders),
        cmocka_unit_test(test_permits_of_one_owner_count),
        cmocka_unit_test(test_one_permit_is_a_mutex),
        cmocka_unit_test(test_permits_among_other_modes),
        cmocka_unit_test(test_reentry_by_the_same_owner),
        cmocka_unit_test(test_modes_on_the_sequence),
        cmocka_unit_test(test_permits_in_mixed_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
