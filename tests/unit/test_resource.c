/* test_resource.c - the store's versions (optimistic concurrency): a
 * value moves with the version its row is at; reads of an older version
 * are refused, a newer one is adopted only when no commit can still write
 * it; a committed write the store cannot apply is counted; with fencing
 * too, a refused access raises no token. Exact values,
 * in the order the engine makes the calls (client_commit, client_unlock).
 * And the witness: entries counted by mode, the sequence they get, and
 * the offline checker agreeing with it on the sections it numbered. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "sim/check/checker.h"
#include "sim/engine/resource.h"
#include "sim/scenario/scenario.h"

static struct resource *versioned(int64_t initial)
{
    struct resource *r = resource_new(1, initial, false);
    assert_non_null(r);
    resource_set_versioned(r);
    return r;
}

/* The first read adopts the row's version (rows outlive runs); a write
 * at that version moves it on; an older read is then refused. */
static void test_first_read_adopts_then_writes_move_on(void **state)
{
    (void)state;
    struct resource *r = versioned(10);
    int64_t v = 0;
    assert_int_equal(resource_read(r, 0, 5, &v), RES_OK);
    assert_int_equal(v, 10);
    resource_commit_begin(r, 0);
    assert_int_equal(resource_write(r, 0, 5, 9), RES_OK);
    resource_commit_end(r, 0, false);
    assert_int_equal(resource_read(r, 0, 5, &v), RES_FENCED); /* stale: 6 now */
    assert_int_equal(resource_read(r, 0, 6, &v), RES_OK);
    assert_int_equal(v, 9);
    assert_int_equal(resource_rejected(r), 1);
    assert_int_equal(resource_lost_commits(r), 0);
    resource_free(r);
}

/* B reads at 5 and its commit goes through; before B writes 9, C reads
 * at 6 and must wait; then B's write lands and C reads it. */
static void commit_in_flight_then_read(struct resource *r)
{
    int64_t v = 0;
    assert_int_equal(resource_read(r, 0, 5, &v), RES_OK);     /* B reads 10 at 5 */
    resource_commit_begin(r, 0);                              /* B's commit went through */
    assert_int_equal(resource_read(r, 0, 6, &v), RES_FENCED); /* C: B has not written */
    assert_int_equal(resource_write(r, 0, 5, 9), RES_OK);
    resource_commit_end(r, 0, false);
    assert_int_equal(resource_read(r, 0, 6, &v), RES_OK);
    assert_int_equal(v, 9);
}

/* A commit with no answer (it did not commit) leaves the store unsure; B
 * then commits 5 -> 6 and, before B writes, C reads version 6: C must wait
 * for B's write, not adopt 6 over the old value, and B's write lands. */
static void test_no_adoption_while_a_commit_is_in_flight(void **state)
{
    (void)state;
    struct resource *r = versioned(10);
    int64_t v = 0;
    assert_int_equal(resource_read(r, 0, 5, &v), RES_OK);
    resource_commit_begin(r, 0); /* A */
    resource_commit_end(r, 0, true);
    commit_in_flight_then_read(r);
    assert_int_equal(resource_lost_commits(r), 0);
    resource_free(r);
}

/* After an unknown commit that did commit (the row is at 6 but nobody
 * wrote 6 here), a read of 6 with nothing in flight adopts it. */
static void test_unknown_commit_is_adopted_when_nothing_is_in_flight(void **state)
{
    (void)state;
    struct resource *r = versioned(10);
    int64_t v = 0;
    assert_int_equal(resource_read(r, 0, 5, &v), RES_OK);
    resource_commit_begin(r, 0);
    resource_commit_end(r, 0, true);
    assert_int_equal(resource_read(r, 0, 6, &v), RES_OK);
    assert_int_equal(v, 10);
    resource_free(r);
}

/* Two commits through from one version (a broken compare-and-set): the
 * second write cannot apply, and is counted. */
static void test_two_commits_from_one_version_are_counted(void **state)
{
    (void)state;
    struct resource *r = versioned(10);
    int64_t v = 0;
    assert_int_equal(resource_read(r, 0, 5, &v), RES_OK);
    resource_commit_begin(r, 0);
    resource_commit_begin(r, 0);
    assert_int_equal(resource_write(r, 0, 5, 9), RES_OK);
    resource_commit_end(r, 0, false);
    assert_int_equal(resource_write(r, 0, 5, 9), RES_FENCED);
    resource_commit_end(r, 0, false);
    assert_int_equal(resource_lost_commits(r), 1);
    resource_free(r);
}

/* Fencing on a versioned store: B's commit went through (5 -> 6) and,
 * before B writes, C reads at 6 and is refused (B's commit is in flight).
 * The refused read leaves no token behind, so B's write at 5 lands: a
 * store remembers only the tokens it let in. (Raised by C's read, the
 * highest token fenced B's committed write out, and a run with no fault
 * counted a lost commit in some seeds and not others.) */
static void test_a_refused_read_fences_no_commit_out(void **state)
{
    (void)state;
    struct resource *r = resource_new(1, 10, true);
    assert_non_null(r);
    resource_set_versioned(r);
    int64_t v = 0;
    commit_in_flight_then_read(r);
    assert_int_equal(resource_read(r, 0, 5, &v), RES_FENCED); /* older than 6, now let in */
    assert_int_equal(resource_rejected(r), 2);
    assert_int_equal(resource_lost_commits(r), 0);
    resource_free(r);
}

/* ---- the witness -------------------------------------------------------- */

#define X LOCK_MODE_EXCLUSIVE
#define S LOCK_MODE_SHARED
#define P LOCK_MODE_PERMIT

static bool enter(struct resource *r, enum lock_mode m, uint64_t want_seq)
{
    uint64_t seq = UINT64_MAX;
    bool c = resource_enter(r, 0, m, &seq);
    assert_int_equal(seq, want_seq);
    return c;
}

static void test_witness_exclusive(void **state)
{
    (void)state;
    struct resource *r = resource_new(1, 0, false);
    assert_non_null(r);
    assert_false(enter(r, X, 0));
    assert_true(enter(r, X, 1)); /* a second holder */
    assert_int_equal(resource_leave(r, 0, X), 2);
    assert_int_equal(resource_leave(r, 0, X), 3);
    assert_false(enter(r, X, 4));
    assert_int_equal(resource_concurrent_entries(r), 1);
    resource_free(r);
}

/* Readers share; a writer among them is concurrent, and so is a reader
 * entering while it is inside; once it left, readers share again. */
static void test_witness_readers_and_a_writer(void **state)
{
    (void)state;
    struct resource *r = resource_new(1, 0, false);
    assert_non_null(r);
    assert_false(enter(r, S, 0));
    assert_false(enter(r, S, 1));
    assert_false(enter(r, S, 2));
    assert_true(enter(r, X, 3));
    assert_true(enter(r, S, 4));
    assert_int_equal(resource_leave(r, 0, X), 5);
    assert_false(enter(r, S, 6));
    assert_int_equal(resource_concurrent_entries(r), 2);
    /* four readers still inside: a writer now is concurrent */
    assert_true(enter(r, X, 7));
    assert_int_equal(resource_concurrent_entries(r), 3);
    resource_free(r);
}

static void test_witness_permits(void **state)
{
    (void)state;
    struct resource *r = resource_new(1, 0, false);
    assert_non_null(r);
    resource_set_permits(r, 2);
    assert_false(enter(r, P, 0));
    assert_false(enter(r, P, 1));
    assert_true(enter(r, P, 2)); /* the third of two */
    assert_int_equal(resource_leave(r, 0, P), 3);
    assert_true(enter(r, P, 4)); /* two still inside */
    assert_int_equal(resource_leave(r, 0, P), 5);
    assert_int_equal(resource_leave(r, 0, P), 6);
    assert_false(enter(r, P, 7)); /* one inside */
    assert_true(enter(r, X, 8));  /* a writer among permits */
    assert_int_equal(resource_concurrent_entries(r), 3);
    resource_free(r);

    /* never set: one permit, a mutex */
    r = resource_new(1, 0, false);
    assert_non_null(r);
    assert_false(enter(r, P, 0));
    assert_true(enter(r, P, 1));
    resource_free(r);
}

/* Every client of a run inside at once in one mode leaves the other
 * count alone: a count never carries into the next field. */
static void test_witness_counts_do_not_carry(void **state)
{
    (void)state;
    enum { ALL = SCENARIO_MAX_CLIENTS };
    struct resource *r = resource_new(1, 0, false);
    assert_non_null(r);
    for (uint64_t i = 0; i < ALL; i++)
        assert_false(enter(r, S, i));
    assert_true(enter(r, X, ALL));
    for (uint64_t i = 0; i < ALL; i++)
        assert_int_equal(resource_leave(r, 0, S), ALL + 1 + i);
    assert_true(enter(r, S, 2 * ALL + 1)); /* the writer is still inside */
    assert_int_equal(resource_leave(r, 0, X), 2 * ALL + 2);
    assert_int_equal(resource_leave(r, 0, S), 2 * ALL + 3);
    assert_false(enter(r, X, 2 * ALL + 4)); /* all gone: nothing carried over */
    assert_int_equal(resource_concurrent_entries(r), 2);
    resource_free(r);
}

/* The sequence wraps at 2^30; unwrapped against the last whole value it
 * comes out whole, forward and (an event logged a hair late) back. */
static void test_witness_sequence_unwraps(void **state)
{
    (void)state;
    const uint64_t range = 1ULL << RESOURCE_SEQ_BITS;
    assert_int_equal(resource_unwrap_seq(0, 0), 0);
    assert_int_equal(resource_unwrap_seq(0, 5), 5);
    assert_int_equal(resource_unwrap_seq(range - 2, 1), range + 1);
    assert_int_equal(resource_unwrap_seq(range + 1, range - 1), range - 1);
    assert_int_equal(resource_unwrap_seq(5 * range + 7, 3), 5 * range + 3);
    assert_int_equal(resource_unwrap_seq(5 * range + 7, 9), 5 * range + 9);
}

/* A script of entries and exits in every mode, its sections numbered by
 * the witness's sequence: the checker counts the concurrent entries the
 * witness counted, and (sections of different owners) no more. */
static void test_witness_and_checker_agree(void **state)
{
    (void)state;
    /* >= 0: enter holder h in its mode; < 0: holder -h-1 leaves */
    static const enum lock_mode mode[] = {S, S, X, S, P, P, P, X, S};
    static const int script[] = {0, 1, 2, -1, -2, 3, -3, -4, 4, 5, 6, -5, -6, -7, 7, 8, -8, -9};
    enum { N = sizeof(mode) / sizeof(mode[0]) };
    struct resource *r = resource_new(1, 0, false);
    assert_non_null(r);
    resource_set_permits(r, 2);
    struct section s[N];
    for (size_t i = 0; i < sizeof(script) / sizeof(script[0]); i++) {
        int h = script[i];
        uint64_t seq;
        if (h >= 0) {
            resource_enter(r, 0, mode[h], &seq);
            s[h] = (struct section){.owner = (uint32_t)h,
                                    .mode = (uint8_t)mode[h],
                                    .permits = 2,
                                    .has_seq = true,
                                    .seq_from = seq};
        } else {
            s[-h - 1].seq_to = resource_leave(r, 0, mode[-h - 1]);
        }
    }
    struct check_result c;
    assert_int_equal(checker_run(s, N, NULL, 0, 0, 0, false, &c), 0);
    /* by hand: writer 2 on readers 0 and 1 (two pairs); reader 3 on
     * writer 2; permit 6 the third of two; reader 8 on writer 7 */
    assert_int_equal(resource_concurrent_entries(r), 4);
    assert_int_equal(c.concurrent_entries, 4);
    assert_int_equal(c.overlaps, 5);
    checker_result_free(&c);
    resource_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_first_read_adopts_then_writes_move_on),
        cmocka_unit_test(test_no_adoption_while_a_commit_is_in_flight),
        cmocka_unit_test(test_unknown_commit_is_adopted_when_nothing_is_in_flight),
        cmocka_unit_test(test_two_commits_from_one_version_are_counted),
        cmocka_unit_test(test_a_refused_read_fences_no_commit_out),
        cmocka_unit_test(test_witness_exclusive),
        cmocka_unit_test(test_witness_readers_and_a_writer),
        cmocka_unit_test(test_witness_permits),
        cmocka_unit_test(test_witness_counts_do_not_carry),
        cmocka_unit_test(test_witness_and_checker_agree),
        cmocka_unit_test(test_witness_sequence_unwraps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
