/* test_history_sections.c - what is derived from a history for the
 * checker and the reports: the critical sections and fault spans (open
 * ones stay open, one process may hold several keys), the stretches a key
 * had no holder, and the grants made inside a fault's window.
 *
 * The histories made by hand and the files written and read back go
 * through tests/lib/history_make.h.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>

#include "sim/check/availability.h"
#include "sim/check/sections.h"
#include "sim/check/stuck.h"
#include "sim/record/history.h"
#include "tests/lib/history_make.h"

/* ---- sections and fault spans --------------------------------------------- */

/* Two owners hold one key when the file stops (no end line: the writer
 * died). Closing open sections at the last event would give the second
 * holder zero length and hide the pair; open sections stay open. */
static void test_truncated_history_shows_two_holders(void **state)
{
    (void)state;
    char buf[1024];
    snprintf(buf, sizeof(buf),
             "%s{\"time\":110,\"process\":0,\"type\":\"ok\",\"f\":\"acquire\",\"key\":\"k\","
             "\"owner\":\"a\",\"seq\":0}\n"
             "{\"time\":150,\"process\":1,\"type\":\"ok\",\"f\":\"acquire\",\"key\":\"k\","
             "\"owner\":\"b\",\"seq\":1}\n",
             start_line);
    struct history h;
    char err[ERR_LEN];
    assert_string_equal(read_text(buf, &h, err), "");
    assert_false(h.complete);
    struct section *s;
    struct fault_span *f;
    size_t ns, nf;
    assert_int_equal(history_sections(&h, &s, &ns, &f, &nf), 0);
    assert_int_equal(ns, 2);
    assert_int_equal(s[0].effect, EFFECT_OPEN);
    assert_int_equal(s[1].effect, EFFECT_OPEN);
    assert_int_equal(s[1].from_ns, 150);
    assert_int_equal(s[1].to_ns, 150);
    struct check_result c;
    assert_int_equal(checker_run(s, ns, f, nf, 0, 10, false, &c), 0);
    assert_int_equal(c.overlaps, 1);
    assert_int_equal(c.violations, 1);
    assert_int_equal(c.concurrent_entries, 1);
    assert_int_equal(c.list[0].overlap_ns, 0); /* both open: no known common length */
    checker_result_free(&c);
    free(s);
    free(f);
    history_free(&h);
}

/* One process holds two keys at once (a scheduler keeping a task's lock
 * for its hold while it fires the next task): both sections stay open
 * until their own release, and a release on a third key changes nothing. */
static void test_one_process_holds_two_keys(void **state)
{
    (void)state;
    const char *keys[] = {"k0", "k1", "k2"}, *owners[] = {"o0", "o1"};
    struct history_event e[] = {
        ev(10, 0, HT_OK, HF_ACQUIRE),     /* k0 */
        ev(20, 0, HT_OK, HF_ACQUIRE),     /* k1, k0 still held */
        ev(25, 0, HT_INVOKE, HF_RELEASE), /* k2: not held */
        ev(30, 1, HT_OK, HF_ACQUIRE),     /* another owner on k1: overlaps */
        ev(40, 0, HT_INVOKE, HF_RELEASE), /* k0 */
        ev(50, 0, HT_INVOKE, HF_RELEASE), /* k1 */
        ev(60, 1, HT_INVOKE, HF_RELEASE), /* k1 */
    };
    uint32_t key[] = {0, 1, 2, 1, 0, 1, 1};
    for (size_t i = 0; i < 7; i++) {
        e[i].key = key[i];
        e[i].owner = e[i].client;
        e[i].seq = HISTORY_NO_SEQ;
    }
    struct history h;
    make_history(&h, e, 7, keys, 3, owners, 2);
    h.end_mono_ns = 70;
    struct section *s;
    struct fault_span *f;
    size_t ns, nf;
    assert_int_equal(history_sections(&h, &s, &ns, &f, &nf), 0);
    assert_int_equal(ns, 3);
    const struct section want[] = {
        {.key = 0, .owner = 0, .client = 0, .from_ns = 10, .to_ns = 40},
        {.key = 1, .owner = 0, .client = 0, .from_ns = 20, .to_ns = 50},
        {.key = 1, .owner = 1, .client = 1, .from_ns = 30, .to_ns = 60},
    };
    for (size_t i = 0; i < ns; i++)
        assert_section_equal(&s[i], &want[i]);
    struct check_result c;
    assert_int_equal(checker_run(s, ns, f, nf, 0, 10, false, &c), 0);
    assert_int_equal(c.violations, 1);
    assert_int_equal(c.list[0].overlap_ns, 20);
    checker_result_free(&c);
    free(s);
    free(f);
    history_free(&h);
}

/* A crashed holder leaves waiters with no holder until the next grant; an
 * acquire on a free key (its round trip), a busy try and a wait still open
 * at the end count too. A fault window
 * counts a grant begun inside it apart from one decided before it. */
static void test_stuck_keys_and_grants_within(void **state)
{
    (void)state;
    const char *keys[] = {"k0", "k1"}, *owners[] = {"o0", "o1", "o2", "o3"};
    struct history_event e[] = {
        ev(10, 0, HT_INVOKE, HF_ACQUIRE),
        fault(15, HISTORY_SERVERS, KIND_PAUSE, 0),
        ev(20, 0, HT_OK, HF_ACQUIRE),
        ev(30, 1, HT_INVOKE, HF_ACQUIRE),
        ev(50, 0, HT_INFO, HF_CRASH), /* stuck from here... */
        ev(90, 1, HT_OK, HF_ACQUIRE), /* ...to here: 40 */
        fault(95, HISTORY_SERVERS, KIND_PAUSE, 1),
        ev(100, 1, HT_INVOKE, HF_RELEASE),
        ev(101, 1, HT_OK, HF_RELEASE),
        ev(110, 2, HT_INVOKE, HF_ACQUIRE),
        ev(115, 2, HT_FAIL, HF_ACQUIRE),   /* 5 more */
        ev(120, 3, HT_INVOKE, HF_ACQUIRE), /* k1: open to the end, 80 */
    };
    size_t n = sizeof(e) / sizeof(e[0]);
    for (size_t i = 0; i < n; i++) {
        if (e[i].f == HF_FAULT)
            continue;
        e[i].key = e[i].client == 3 ? 1 : 0;
        e[i].owner = e[i].client;
        e[i].seq = HISTORY_NO_SEQ;
    }
    e[10].arg = HE_BUSY;
    struct history h;
    make_history(&h, e, n, keys, 2, owners, 4);
    h.end_mono_ns = 200;
    struct section *s;
    struct fault_span *f;
    size_t ns, nf;
    assert_int_equal(history_sections(&h, &s, &ns, &f, &nf), 0);
    assert_int_equal(ns, 2);
    assert_int_equal(nf, 1);

    struct stuck_key *k;
    size_t nk;
    assert_int_equal(stuck_compute(&h, &k, &nk), 0);
    /* k0: 10 to 20 as well, client 0's own wait */
    const struct stuck_key want[] = {{.key = 1, 80, 120, 80, 1}, {.key = 0, 40, 50, 55, 3}};
    assert_int_equal(nk, 2);
    for (size_t i = 0; i < nk; i++) {
        assert_int_equal(k[i].key, want[i].key);
        assert_int_equal(k[i].longest_ns, want[i].longest_ns);
        assert_int_equal(k[i].longest_from_ns, want[i].longest_from_ns);
        assert_int_equal(k[i].total_ns, want[i].total_ns);
        assert_int_equal(k[i].stretches, want[i].stretches);
    }
    free(k);

    struct fault_availability a;
    assert_int_equal(availability_compute(&h, nf, &a), 0);
    assert_int_equal(a.granted, 2);
    assert_int_equal(a.granted_within, 1); /* client 0 asked before the fault */
    assert_int_equal(a.failed, 0);
    free(s);
    free(f);
    history_free(&h);
}

static void test_sections(void **state)
{
    (void)state;
    const char *keys[] = {"k0", "k1"}, *owners[] = {"o0", "o1", "o2", "o3"};
    struct history_event e[] = {
        ev(10, 0, HT_INVOKE, HF_ACQUIRE),
        ev(20, 0, HT_OK, HF_ACQUIRE),     /* normal */
        ev(25, 3, HT_INVOKE, HF_RELEASE), /* nothing open */
        ev(30, 1, HT_OK, HF_ACQUIRE),
        fault(40, 1, 0, 0),               /* pause of 1 */
        ev(45, 0, HT_INVOKE, HF_RELEASE), /* other key */
        ev(50, 0, HT_INVOKE, HF_RELEASE),
        ev(60, 0, HT_OK, HF_RELEASE),
        ev(70, 1, HT_INFO, HF_CRASH),
        ev(80, 2, HT_OK, HF_ACQUIRE), /* open at the end */
        fault(90, 1, 0, 1),
        fault(95, 2, 1, 0), /* never ends */
        ev(96, 3, HT_OK, HF_ACQUIRE),
        ev(97, 3, HT_INVOKE, HF_RELEASE) /* no seq */
    };
    for (size_t i = 0; i < sizeof(e) / sizeof(e[0]); i++)
        if (e[i].f != HF_FAULT)
            e[i].owner = e[i].client;
    e[1].seq = 0, e[1].token = 5;
    e[3].seq = 1, e[3].key = 1;
    e[5].key = 1;
    e[6].seq = 2, e[6].arg = EFFECT_FENCED;
    e[8].seq = 3, e[8].key = 1;
    e[9].seq = 4;
    e[12].seq = HISTORY_NO_SEQ;
    e[13].seq = HISTORY_NO_SEQ, e[13].arg = EFFECT_NONE;
    struct history h;
    make_history(&h, e, sizeof(e) / sizeof(e[0]), keys, 2, owners, 4);
    h.end_mono_ns = 100;

    struct section *s;
    struct fault_span *f;
    size_t ns, nf;
    assert_int_equal(history_sections(&h, &s, &ns, &f, &nf), 0);
    assert_int_equal(ns, 4);
    const struct section want[] = {
        {.key = 0,
         .owner = 0,
         .client = 0,
         .effect = EFFECT_FENCED,
         .has_seq = true,
         .token = 5,
         .from_ns = 20,
         .to_ns = 50,
         .seq_from = 0,
         .seq_to = 2},
        {.key = 1,
         .owner = 1,
         .client = 1,
         .effect = EFFECT_CRASHED,
         .has_seq = true,
         .from_ns = 30,
         .to_ns = 70,
         .seq_from = 1,
         .seq_to = 3},
        {.key = 0,
         .owner = 2,
         .client = 2,
         .effect = EFFECT_OPEN, /* never released: open to the end */
         .has_seq = false,
         .from_ns = 80,
         .to_ns = 100},
        {.key = 0,
         .owner = 3,
         .client = 3,
         .effect = EFFECT_NONE,
         .has_seq = false,
         .from_ns = 96,
         .to_ns = 97},
    };
    for (size_t i = 0; i < ns; i++)
        assert_section_equal(&s[i], &want[i]);
    assert_int_equal(nf, 2);
    assert_int_equal(f[0].type, 0);
    assert_int_equal(f[0].client, 1);
    assert_int_equal(f[0].from_ns, 40);
    assert_int_equal(f[0].to_ns, 90);
    assert_int_equal(f[1].type, 1);
    assert_int_equal(f[1].client, 2);
    assert_int_equal(f[1].from_ns, 95);
    assert_int_equal(f[1].to_ns, UINT64_MAX);
    free(s);
    free(f);
    history_free(&h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sections),
        cmocka_unit_test(test_truncated_history_shows_two_holders),
        cmocka_unit_test(test_one_process_holds_two_keys),
        cmocka_unit_test(test_stuck_keys_and_grants_within),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
