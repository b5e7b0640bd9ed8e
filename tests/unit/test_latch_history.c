/* test_latch_history.c - a latch's rounds judged from a history made by
 * hand (latch_check.h), with exact values: 3 parties and 3 waiters on one
 * latch, a bound of 100 ms, times in ms from an origin of 1 s. One waiter
 * passes on time, one before the last countDown was sent, one never passes
 * within the bound; a second trySetCount finds the latch set and is not
 * followed by a delete. The same history written as JSON lines and as
 * history.llh and read back is judged the same. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "sim/check/check_pass.h"
#include "sim/check/latch_check.h"
#include "sim/record/history_bin.h"
#include "sim/record/history_reader.h"
#include "tests/lib/history_make.h"

#define MS(t) (1000000000ULL + (uint64_t)(t)*1000000ULL)

static const char *const keys[] = {"lock:latch:0"};
static const char *const owners[] = {"r:0:0", "r:1:0", "r:2:0", "r:3:0", "r:4:0", "r:5:0"};

/* An await's result: what its waiter saw, sent and the zero (0: none). */
static struct history_event seen(uint64_t t, uint32_t c, uint8_t type, uint32_t sent, uint64_t zero)
{
    struct history_event e = ev(MS(t), c, type, HF_AWAIT);
    e.owner = c;
    e.permits = sent;
    e.zero_ns = zero ? MS(zero) : 0;
    e.arg = type == HT_FAIL ? HE_BUSY : HE_NONE;
    return e;
}

static struct history_event call(uint64_t t, uint32_t c, uint8_t type, uint8_t f)
{
    struct history_event e = ev(MS(t), c, type, f);
    e.owner = c;
    if (f == HF_SET_COUNT && type == HT_INVOKE)
        e.permits = 3;
    if (f == HF_SET_COUNT && type == HT_FAIL)
        e.arg = HE_BUSY;
    return e;
}

static void make_round(struct history *h)
{
    const struct history_event e[] = {
        call(0, 0, HT_INVOKE, HF_SET_COUNT),
        call(1, 0, HT_OK, HF_SET_COUNT),
        call(2, 3, HT_INVOKE, HF_AWAIT),
        call(2, 4, HT_INVOKE, HF_AWAIT),
        call(2, 5, HT_INVOKE, HF_AWAIT),
        call(10, 0, HT_INVOKE, HF_COUNT_DOWN),
        call(11, 0, HT_OK, HF_COUNT_DOWN),
        call(20, 1, HT_INVOKE, HF_COUNT_DOWN),
        call(21, 1, HT_OK, HF_COUNT_DOWN),
        seen(30, 4, HT_OK, 2, 0), /* through with 2 of 3 sent: early */
        call(40, 2, HT_INVOKE, HF_COUNT_DOWN),
        call(50, 2, HT_OK, HF_COUNT_DOWN), /* the zero */
        seen(60, 3, HT_OK, 3, 50),         /* 10 ms after the zero: on time */
        seen(100, 5, HT_FAIL, 3, 50),      /* its wait ran out, */
        call(100, 5, HT_INVOKE, HF_AWAIT), /* again, */
        seen(300, 5, HT_FAIL, 3, 50),      /* and out again at the end: missed */
        call(350, 0, HT_INVOKE, HF_SET_COUNT),
        call(351, 0, HT_FAIL, HF_SET_COUNT), /* set already, no delete: no round */
    };
    make_history(h, e, sizeof(e) / sizeof(e[0]), keys, 1, owners, 6);
    h->start_mono_ns = MS(0);
    h->end_mono_ns = MS(400);
    h->complete = true;
    h->clients = 6;
    snprintf(h->algorithm, sizeof(h->algorithm), "redisson-latch");
    h->latch = (struct history_latch){.latches = 1, .parties = 3, .bound_ms = 100};
}

/* The figures of h's latch lines. */
static struct latch_tally tally_of(const struct history *h)
{
    struct latch_check *c = latch_check_begin(&h->latch);
    assert_non_null(c);
    for (size_t i = 0; i < h->n; i++)
        assert_int_equal(latch_check_event(c, &h->ev[i]), 0);
    struct latch_tally t;
    latch_check_end(c, &t);
    return t;
}

static void assert_round(const struct latch_tally *t)
{
    assert_int_equal(t->rounds, 1);
    assert_int_equal(t->set_failed, 1);
    assert_int_equal(t->passes, 2);
    assert_int_equal(t->early, 1);
    assert_int_equal(t->fewest_sent, 2);
    assert_int_equal(t->late, 0);
    assert_int_equal(t->missed, 1);
    assert_int_equal(t->judged_out, 0);
    assert_int_equal(t->after_pause, 0);
    assert_int_equal(t->slowest_ns, 10000000);
}

static void a_pass_an_early_pass_and_a_miss(void **state)
{
    (void)state;
    struct history h;
    make_round(&h);
    struct latch_tally t = tally_of(&h);
    assert_round(&t);
    struct invariant inv[2];
    assert_int_equal(latch_tally_invariants(&t, &h.latch, inv, 2), 2);
    assert_false(inv[0].holds);
    assert_string_equal(inv[0].detail, "1 rounds of 1 latch(es), 2 passes; 1 passed before the "
                                       "count reached zero (the fewest countDowns sent then: 2 "
                                       "of 3)");
    assert_false(inv[1].holds);
    assert_string_equal(inv[1].detail,
                        "the slowest pass came 10.0 ms after its waiter could pass (bound 100 ms; "
                        "0 waiters paused through the zero, judged from their resumption); 0 "
                        "later than the bound, 1 never through by the end; 0 passes not judged "
                        "(a countDown unanswered); 1 rounds not begun (trySetCount failed)");
    history_free(&h);
}

/* The lines as docs/history.md shows them, read back to the same figures. */
static void the_jsonl_lines_read_back_alike(void **state)
{
    (void)state;
    struct history h, r;
    make_round(&h);
    char *text = written_and_read(&h, &r);
    assert_non_null(strstr(text, "\"bound_ms\":100}\n"));
    assert_non_null(strstr(text, "{\"time\":1000000000,\"process\":0,\"type\":\"invoke\",\"f\":"
                                 "\"set_count\",\"key\":\"lock:latch:0\",\"owner\":\"r:0:0\","
                                 "\"count\":3}\n"));
    assert_non_null(strstr(text, "{\"time\":1060000000,\"process\":3,\"type\":\"ok\",\"f\":"
                                 "\"await\",\"key\":\"lock:latch:0\",\"owner\":\"r:3:0\","
                                 "\"sent\":3,\"zero\":1050000000}\n"));
    assert_non_null(strstr(text, "\"f\":\"await\",\"key\":\"lock:latch:0\",\"owner\":\"r:5:0\","
                                 "\"error\":\"busy\",\"sent\":3,\"zero\":1050000000}\n"));
    assert_int_equal(r.latch.latches, 1);
    assert_int_equal(r.latch.parties, 3);
    assert_int_equal(r.latch.bound_ms, 100);
    struct latch_tally t = tally_of(&r);
    assert_round(&t);
    free(text);
    history_free(&h);
    history_free(&r);
}

/* history.llh: the same events back, judged alike, and check's one pass
 * makes the run's two invariants of them. */
static void the_binary_form_reads_back_alike(void **state)
{
    (void)state;
    struct history h, r = {0};
    make_round(&h);
    char path[] = "/tmp/locklab_latch_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    assert_int_equal(history_write_llh(&h, f), 0);
    assert_int_equal(fclose(f), 0);
    char err[ERR_LEN];
    assert_int_equal(history_read_file(path, &r, err, sizeof(err)), 0);
    assert_int_equal(r.n, h.n);
    for (size_t i = 0; i < h.n; i++) {
        /* owner ids follow first use in a file read back: compare names */
        struct history_event a = r.ev[i], b = h.ev[i];
        assert_string_equal(r.owners[a.owner], h.owners[b.owner]);
        a.owner = b.owner = 0;
        assert_event_equal(&a, &b);
        assert_int_equal(r.ev[i].zero_ns, h.ev[i].zero_ns);
        assert_int_equal(r.ev[i].unanswered, h.ev[i].unanswered);
    }
    struct latch_tally t = tally_of(&r);
    assert_round(&t);

    struct check_pass *p = check_pass_begin(0, false);
    assert_non_null(p);
    assert_int_equal(check_pass_latch(p, &r.latch), 0);
    for (size_t i = 0; i < r.n; i++)
        assert_int_equal(check_pass_event(p, &r.ev[i]), 0);
    struct run_result *res = calloc(1, sizeof(*res));
    assert_non_null(res);
    assert_int_equal(check_pass_end(p, r.end_mono_ns, res), 0);
    assert_int_equal(res->n_inv, 2);
    assert_false(res->invariants_hold);
    assert_string_equal(res->inv[0].name, "no_pass_before_zero");
    assert_string_equal(res->inv[1].name, "every_waiter_within_bound");
    result_free(res);
    free(res);
    unlink(path);
    history_free(&h);
    history_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_pass_an_early_pass_and_a_miss),
        cmocka_unit_test(the_jsonl_lines_read_back_alike),
        cmocka_unit_test(the_binary_form_reads_back_alike),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
