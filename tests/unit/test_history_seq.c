/* test_history_seq.c - the reader's check of the witness's seqs, made as
 * the events come (sim/record/history_seq.c): it finds, at the same line,
 * what a check of the whole file finds (the sort of every mark the reader
 * made before, kept here as the oracle), and what it holds stays bounded
 * by the steps still missing, not by the length of the stream.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdbool.h>
#include <stdlib.h>

#include "sim/record/history_seq.h"

struct mark {
    uint64_t seq, line;
    uint32_t key, client;
};

/* The oracle's answer: the earliest line that breaks a promise, a seq
 * again winning over one out of order on the same line. */
struct verdict {
    uint64_t line, prev_line, prev_seq;
    bool again;
};

#define CMP(x, y) (((x) > (y)) - ((x) < (y)))

static int by_key_seq(const void *pa, const void *pb)
{
    const struct mark *a = pa, *b = pb;
    int c = CMP(a->key, b->key);
    c = c ? c : CMP(a->seq, b->seq);
    return c ? c : CMP(a->line, b->line);
}

static int by_key_client(const void *pa, const void *pb)
{
    const struct mark *a = pa, *b = pb;
    int c = CMP(a->key, b->key);
    c = c ? c : CMP(a->client, b->client);
    return c ? c : CMP(a->line, b->line);
}

static void keep(struct verdict *v, const struct mark *prev, const struct mark *at, bool again)
{
    if (v->line != 0 && v->line <= at->line)
        return;
    *v = (struct verdict){
        .line = at->line, .prev_line = prev->line, .prev_seq = prev->seq, .again = again};
}

static struct verdict oracle(const struct mark *in, size_t n)
{
    struct verdict v = {0};
    struct mark *m = malloc(n * sizeof(*m) + 1);
    assert_non_null(m);
    for (size_t i = 0; i < n; i++)
        m[i] = in[i];
    qsort(m, n, sizeof(*m), by_key_seq);
    for (size_t i = 1; i < n; i++)
        if (m[i].key == m[i - 1].key && m[i].seq == m[i - 1].seq)
            keep(&v, &m[i - 1], &m[i], true);
    qsort(m, n, sizeof(*m), by_key_client);
    for (size_t i = 1; i < n; i++)
        if (m[i].key == m[i - 1].key && m[i].client == m[i - 1].client && m[i].seq <= m[i - 1].seq)
            keep(&v, &m[i - 1], &m[i], false);
    free(m);
    return v;
}

static uint64_t rng = 0x2545f4914f6cdd1dULL;

static uint32_t below(uint32_t n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng % n);
}

enum { MAX_MARKS = 96, KEYS = 3, CLIENTS = 4 };

/* A stream a run could write: per key, the steps 0, 1, ... in order, each
 * a client's; then neighbours of different clients swapped (logged in
 * either order), and maybe one seq changed to anything near. */
static size_t make_stream(struct mark *m, bool damage)
{
    size_t n = 8 + below(MAX_MARKS - 8);
    uint64_t next[KEYS] = {0};
    for (size_t i = 0; i < n; i++) {
        uint32_t k = below(KEYS);
        m[i] = (struct mark){.seq = next[k]++, .key = k, .client = below(CLIENTS)};
    }
    for (size_t swaps = below(n); swaps > 0; swaps--) {
        size_t i = below((uint32_t)n - 1);
        if (m[i].client != m[i + 1].client || m[i].key != m[i + 1].key) {
            struct mark t = m[i];
            m[i] = m[i + 1];
            m[i + 1] = t;
        }
    }
    if (damage)
        m[below((uint32_t)n)].seq = below(MAX_MARKS / KEYS + 4);
    for (size_t i = 0; i < n; i++)
        m[i].line = 2 + i;
    return n;
}

/* Every stream, whole or damaged, gets the oracle's verdict at its line,
 * with the line (and the seq) it names where the check still keeps it. */
static void test_seq_check_agrees_with_the_whole_file(void **state)
{
    (void)state;
    struct mark m[MAX_MARKS];
    size_t broken = 0, below_mark = 0;
    for (int trial = 0; trial < 20000; trial++) {
        size_t n = make_stream(m, trial % 2 == 1);
        struct verdict want = oracle(m, n);
        struct seq_check s = {0};
        struct seq_fault f = {0};
        size_t i = 0;
        int rc = 0;
        for (; i < n && rc == 0; i++)
            rc = seq_check_add(&s, m[i].key, m[i].client, m[i].seq, m[i].line, &f);
        assert_int_not_equal(rc, -1);
        seq_check_free(&s);
        if (want.line == 0) {
            assert_int_equal(rc, 0);
            continue;
        }
        broken++;
        assert_int_equal(rc, 1);
        assert_int_equal(f.line, want.line);
        assert_int_equal(f.kind != SEQ_NOT_AFTER, want.again);
        if (f.kind == SEQ_BELOW) {
            /* the seq came before the line that completed the steps below */
            below_mark++;
            assert_true(f.seq < f.prev_seq);
            assert_true(want.prev_line <= f.prev_line && f.prev_line < f.line);
        } else {
            assert_int_equal(f.prev_line, want.prev_line);
            assert_int_equal(f.prev_seq, want.prev_seq);
        }
    }
    /* the generator made each kind of stream, and every kind of fault */
    assert_true(broken > 5000 && broken < 10000);
    assert_true(below_mark > 1000 && below_mark < broken);
}

/* Two clients logging each pair of steps in the opposite order: at most
 * one step (with its client's entry) waits at a time, however long the
 * stream; a step that never comes keeps everything after it. */
static void test_seq_check_holds_the_steps_missing(void **state)
{
    (void)state;
    struct seq_check s = {0};
    struct seq_fault f;
    size_t peak = 0;
    for (uint64_t seq = 0; seq < 1000000; seq += 2) {
        assert_int_equal(seq_check_add(&s, 7, 1, seq + 1, 2 + seq, &f), 0);
        if (seq_check_held(&s) > peak)
            peak = seq_check_held(&s);
        assert_int_equal(seq_check_add(&s, 7, 0, seq, 3 + seq, &f), 0);
    }
    assert_int_equal(peak, 2);
    assert_int_equal(seq_check_held(&s), 0);
    /* a gap at 1000000: the 1000 steps after it wait, and each client's
     * newest; the step, once it comes (from a third client), frees them */
    for (uint64_t seq = 1000001; seq <= 1001000; seq++)
        assert_int_equal(seq_check_add(&s, 7, (uint32_t)(seq % 2), seq, seq + 1, &f), 0);
    assert_int_equal(seq_check_held(&s), 1002);
    assert_int_equal(seq_check_add(&s, 7, 2, 1000000, 1001002, &f), 0);
    assert_int_equal(seq_check_held(&s), 0);
    assert_int_equal(s.keys[7].next, 1001001);
    assert_int_equal(seq_check_add(&s, 7, 1, 1000500, 1001003, &f), 1);
    assert_int_equal(f.kind, SEQ_BELOW);
    assert_int_equal(f.prev_seq, 1001001);
    assert_int_equal(f.prev_line, 1001002);
    seq_check_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seq_check_agrees_with_the_whole_file),
        cmocka_unit_test(test_seq_check_holds_the_steps_missing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
