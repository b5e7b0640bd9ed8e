/* test_resource.c - the store's versions (optimistic concurrency): a
 * value moves with the version its row is at; reads of an older version
 * are refused, a newer one is adopted only when no commit can still write
 * it; a committed write the store cannot apply is counted. Exact values,
 * in the order the engine makes the calls (client_commit, client_unlock). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "sim/workloads/resource.h"

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
    assert_int_equal(resource_read(r, 0, 5, &v), RES_OK);     /* B reads 10 at 5 */
    resource_commit_begin(r, 0);                              /* B's commit went through */
    assert_int_equal(resource_read(r, 0, 6, &v), RES_FENCED); /* C: B has not written */
    assert_int_equal(resource_write(r, 0, 5, 9), RES_OK);
    resource_commit_end(r, 0, false);
    assert_int_equal(resource_read(r, 0, 6, &v), RES_OK);
    assert_int_equal(v, 9);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_first_read_adopts_then_writes_move_on),
        cmocka_unit_test(test_no_adoption_while_a_commit_is_in_flight),
        cmocka_unit_test(test_unknown_commit_is_adopted_when_nothing_is_in_flight),
        cmocka_unit_test(test_two_commits_from_one_version_are_counted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
