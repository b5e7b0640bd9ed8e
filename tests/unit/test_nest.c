/* test_nest.c - a holder's re-entries held apart from the sweeps
 * (sim/check/nest.h): their coding, byte for byte, and what comes back;
 * and the stuck keys' count of a holder that re-enters (stuck.c keeps a
 * run of re-entries as one hold).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "sim/check/nest.h"
#include "sim/check/stuck.h"
#include "sim/record/history.h"

static const struct section base = {.key = 7, .owner = 3, .client = 2, .from_ns = 1000};

static struct section reentry(uint64_t from_ns)
{
    struct section s = base;
    s.from_ns = from_ns;
    s.asked_ns = from_ns;
    s.seq_from = HISTORY_NO_SEQ;
    return s;
}

/* The plain case costs two bytes: the entry's delta and a header saying
 * the next id and nothing else; an ask, a mode, a token and permits each
 * add their own varint. */
static void test_bytes_per_reentry(void **state)
{
    (void)state;
    struct nest t = {0};
    nest_start(&t, &base, 40);
    assert_int_equal(nest_push(&t, &(struct section){0}, 40), -1); /* an id not above the top */
    struct section a = reentry(1001);
    assert_int_equal(nest_push(&t, &a, 41), 0);
    assert_int_equal(t.len, 2);
    const unsigned char plain[] = {0x01, 0x00};
    assert_memory_equal(t.buf, plain, 2);
    struct section b = reentry(1201); /* 200 ns on: a two-byte delta */
    b.asked_ns = 1101;
    b.mode = LOCK_MODE_SHARED;
    b.token = 5;
    assert_int_equal(nest_push(&t, &b, 44), 0); /* 44: two ids went to other keys */
    /* token 5, mode 1, ask 100, delta 200 (0xc8 0x01), header (2 << 4 | ask, mode, token) */
    const unsigned char full[] = {0x05, 0x01, 0x64, 0xc8, 0x01, 0x27};
    assert_int_equal(t.len, 2 + sizeof(full));
    assert_memory_equal(t.buf + 2, full, sizeof(full));
    struct section late = reentry(1100); /* before the top's entry */
    assert_int_equal(nest_push(&t, &late, 45), -1);
    assert_int_equal(t.n, 2);
    nest_free(&t);
}

/* Field by field: a struct's padding is nobody's (a copy of one returned
 * by value may carry any bytes there), so a byte compare can differ on
 * equal sections. */
static void assert_same_section(const struct section *a, const struct section *b)
{
    assert_int_equal(a->key, b->key);
    assert_int_equal(a->owner, b->owner);
    assert_int_equal(a->client, b->client);
    assert_int_equal(a->effect, b->effect);
    assert_int_equal(a->mode, b->mode);
    assert_int_equal(a->has_seq, b->has_seq);
    assert_int_equal(a->permits, b->permits);
    assert_int_equal(a->token, b->token);
    assert_int_equal(a->from_ns, b->from_ns);
    assert_int_equal(a->asked_ns, b->asked_ns);
    assert_int_equal(a->to_ns, b->to_ns);
    assert_int_equal(a->seq_from, b->seq_from);
    assert_int_equal(a->seq_to, b->seq_to);
}

/* Pushed and popped in any order, what comes back is what went in,
 * oldest first, each with its id. */
static void test_back_as_pushed(void **state)
{
    (void)state;
    struct nest t = {0};
    nest_start(&t, &base, 9);
    struct section want[40];
    uint64_t want_id[40];
    size_t n = 0;
    uint64_t from = 1000, id = 9;
    for (int i = 0; i < 60; i++) {
        if (i % 3 == 2) { /* every third step a re-entry leaves */
            nest_pop(&t);
            n--;
            continue;
        }
        from += (uint64_t)(i * i * 977) % 100000;
        id += 1 + (uint64_t)(i % 4) * 1000;
        struct section s = reentry(from);
        s.asked_ns = from - (uint64_t)(i % 5) * 333;
        s.mode = (uint8_t)(i % 3);
        s.token = i % 2 ? (uint64_t)i << 40 : 0;
        s.permits = i % 3 == 1 ? (uint32_t)i : 0;
        assert_int_equal(nest_push(&t, &s, id), 0);
        want[n] = s;
        want_id[n++] = id;
    }
    struct section *got;
    uint64_t *ids;
    size_t m;
    assert_int_equal(nest_take(&t, &got, &ids, &m), 0);
    assert_int_equal(m, n);
    assert_int_equal(t.n, 0);
    for (size_t i = 0; i < n; i++) {
        assert_same_section(&got[i], &want[i]);
        assert_int_equal(ids[i], want_id[i]);
    }
    free(got);
    free(ids);
}

static struct history_event hold_ev(uint64_t t, uint32_t client, uint8_t type, uint8_t f)
{
    return (struct history_event){
        .t_ns = t, .client = client, .type = type, .f = f, .owner = client, .seq = HISTORY_NO_SEQ};
}

/* Client 0 enters k0 and re-enters it twice; client 1 waits from 20. Two
 * releases leave one hold, so the key is held until client 0 dies at 40:
 * stuck 40 .. 60, when client 1 is granted (and 10 .. 11, the first
 * acquire's round trip on a free key). A release that let go of the
 * whole run would make it 30 .. 60; a death that left one, none. */
static void test_stuck_counts_each_reentry(void **state)
{
    (void)state;
    const struct history_event e[] = {
        hold_ev(10, 0, HT_INVOKE, HF_ACQUIRE), hold_ev(11, 0, HT_OK, HF_ACQUIRE),
        hold_ev(12, 0, HT_INVOKE, HF_ACQUIRE), hold_ev(13, 0, HT_OK, HF_ACQUIRE),
        hold_ev(14, 0, HT_INVOKE, HF_ACQUIRE), hold_ev(15, 0, HT_OK, HF_ACQUIRE),
        hold_ev(20, 1, HT_INVOKE, HF_ACQUIRE), hold_ev(30, 0, HT_INVOKE, HF_RELEASE),
        hold_ev(31, 0, HT_INVOKE, HF_RELEASE), hold_ev(40, 0, HT_INFO, HF_CRASH),
        hold_ev(60, 1, HT_OK, HF_ACQUIRE),     hold_ev(70, 1, HT_INVOKE, HF_RELEASE),
    };
    struct stuck *s = stuck_begin();
    assert_non_null(s);
    for (size_t i = 0; i < sizeof(e) / sizeof(e[0]); i++)
        assert_int_equal(stuck_event(s, &e[i]), 0);
    struct stuck_key *k;
    size_t n;
    assert_int_equal(stuck_end(s, 100, &k, &n), 0);
    assert_int_equal(n, 1);
    assert_int_equal(k[0].longest_ns, 20);
    assert_int_equal(k[0].longest_from_ns, 40);
    assert_int_equal(k[0].total_ns, 21); /* and 10 .. 11, client 0's first acquire */
    assert_int_equal(k[0].stretches, 2);
    free(k);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bytes_per_reentry),
        cmocka_unit_test(test_back_as_pushed),
        cmocka_unit_test(test_stuck_counts_each_reentry),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
