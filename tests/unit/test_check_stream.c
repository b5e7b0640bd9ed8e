/* test_check_stream.c - the checker over a stream of events
 * (sim/check/check_stream.h) against the whole-history one
 * (history_sections + checker_run), and the stream's boundaries: what it
 * may forget, and when, must never hide an overlap.
 *
 * Each case feeds one list of events, in time order, to both and asserts
 * the hand-worked counts on each; the listed pairs must be the same pairs
 * of sections. A seeded generator then runs many histories mixing modes,
 * permits, witness sequences out of file order, crashes, re-entry and
 * sections left open, through both.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "sim/check/check_stream.h"
#include "sim/check/checker.h"
#include "sim/check/sections.h"
#include "sim/record/history.h"

#define NO_CAP 100000
#define NO     HISTORY_NO_SEQ

struct both {
    struct check_result whole, stream;
    size_t peak; /* the most sections the stream held at once */
};

static struct history_event acq(uint64_t t, uint32_t client, uint32_t key, uint64_t seq)
{
    return (struct history_event){.t_ns = t,
                                  .client = client,
                                  .key = key,
                                  .owner = client,
                                  .type = HT_OK,
                                  .f = HF_ACQUIRE,
                                  .seq = seq};
}

static struct history_event rel(uint64_t t, uint32_t client, uint32_t key, uint64_t seq)
{
    return (struct history_event){.t_ns = t,
                                  .client = client,
                                  .key = key,
                                  .owner = client,
                                  .type = HT_INVOKE,
                                  .f = HF_RELEASE,
                                  .arg = EFFECT_APPLIED,
                                  .seq = seq};
}

static struct history_event permit(struct history_event e, uint32_t n)
{
    e.mode = LOCK_MODE_PERMIT;
    e.permits = n;
    return e;
}

/* A canonical order of listed pairs, by their two sections. */
enum { PAIR_FIELDS = 10 };
struct pair {
    uint64_t v[PAIR_FIELDS];
};

static struct pair pair_of(const struct section *a, const struct section *b,
                           const struct violation *v)
{
    return (struct pair){{a->key, a->client, a->from_ns, a->to_ns, a->owner, b->client, b->from_ns,
                          b->to_ns, v->fenced, v->overlap_ns}};
}

static int cmp_pair(const void *pa, const void *pb)
{
    const struct pair *a = pa, *b = pb;
    for (size_t i = 0; i < PAIR_FIELDS; i++)
        if (a->v[i] != b->v[i])
            return a->v[i] < b->v[i] ? -1 : 1;
    return 0;
}

/* Both checkers on e[0..n); the history ends at end_ns. Every count
 * equal, and the listed pairs (none capped away) the same pairs. */
static struct both check_both(const struct history_event *e, size_t n, uint64_t end_ns)
{
    struct both r;
    struct history h = {.ev = (struct history_event *)e, .n = n, .end_mono_ns = end_ns};
    struct section *s;
    struct fault_span *f;
    size_t ns, nf;
    assert_int_equal(history_sections(&h, &s, &ns, &f, &nf), 0);
    assert_int_equal(checker_run(s, ns, f, nf, 0, NO_CAP, false, &r.whole), 0);

    struct checker *c = checker_begin(0, NO_CAP, false, &r.stream);
    assert_non_null(c);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(checker_event(c, &e[i]), 0);
    r.peak = checker_held_peak(c);
    struct fault_span *sf;
    size_t snf;
    assert_int_equal(checker_end(c, end_ns, &sf, &snf), 0);

    assert_int_equal(r.stream.sections, r.whole.sections);
    assert_int_equal(r.stream.overlaps, r.whole.overlaps);
    assert_int_equal(r.stream.fenced_pairs, r.whole.fenced_pairs);
    assert_int_equal(r.stream.violations, r.whole.violations);
    assert_int_equal(r.stream.concurrent_entries, r.whole.concurrent_entries);
    assert_int_equal(r.stream.n_list, r.whole.n_list);
    assert_int_equal(snf, nf);
    if (nf > 0)
        assert_memory_equal(sf, f, nf * sizeof(*f));
    size_t m = r.whole.n_list;
    struct pair *pw = malloc((m ? m : 1) * sizeof(*pw)), *ps = malloc((m ? m : 1) * sizeof(*ps));
    assert_true(pw && ps);
    for (size_t i = 0; i < m; i++) {
        const struct violation *v = &r.whole.list[i], *u = &r.stream.list[i];
        pw[i] = pair_of(&s[v->a], &s[v->b], v);
        ps[i] = pair_of(&u->sa, &u->sb, u);
    }
    qsort(pw, m, sizeof(*pw), cmp_pair);
    qsort(ps, m, sizeof(*ps), cmp_pair);
    for (size_t i = 0; i < m; i++)
        assert_int_equal(cmp_pair(&pw[i], &ps[i]), 0);
    free(pw);
    free(ps);
    free(s);
    free(f);
    free(sf);
    return r;
}

static void free_both(struct both *r)
{
    checker_result_free(&r->whole);
    checker_result_free(&r->stream);
}

/* Exactly one overlap, one entry into an occupied key: client a's section
 * was inside, b's entered it. The caller looks further, then frees r. */
static struct both one_overlap(const struct history_event *e, size_t n, uint32_t a, uint32_t b)
{
    struct both r = check_both(e, n, 1000);
    assert_int_equal(r.stream.overlaps, 1);
    assert_int_equal(r.stream.concurrent_entries, 1);
    assert_int_equal(r.stream.list[0].sa.client, a);
    assert_int_equal(r.stream.list[0].sb.client, b);
    return r;
}

/* One long holder, known only in time, and 50 short ones of others, each
 * inside it: forgetting the long one before it ended would miss them. */
static void test_long_section_over_many_short(void **state)
{
    (void)state;
    struct history_event e[2 + 100];
    size_t n = 0;
    e[n++] = acq(100, 0, 0, NO);
    for (uint32_t i = 0; i < 50; i++) {
        e[n++] = acq(200 + 100 * i, 1 + i % 3, 0, NO);
        e[n++] = rel(250 + 100 * i, 1 + i % 3, 0, NO);
    }
    e[n++] = rel(10000, 0, 0, NO);
    struct both r = check_both(e, n, 20000);
    assert_int_equal(r.stream.overlaps, 50);
    assert_int_equal(r.stream.concurrent_entries, 50);
    assert_int_equal(r.stream.list[0].overlap_ns, 50);
    assert_int_equal(r.stream.list[0].sa.client, 0); /* the long one entered first */
    assert_int_equal(r.stream.list[0].sa.to_ns, 10000);
    /* Entries wait behind an open one that sorts before them (its exit and
     * effect decide their pairs): the long one and the 50 inside it, every
     * one of them an overlap. A safe exclusive lock has none such. */
    assert_int_equal(r.peak, 51);
    free_both(&r);
}

/* A holder that never let go overlaps everyone after it, however late. */
static void test_open_section_overlaps_all_after(void **state)
{
    (void)state;
    struct history_event e[] = {acq(100, 0, 0, 0), acq(200, 1, 0, 1), rel(300, 1, 0, 2),
                                acq(400, 2, 0, 3), rel(500, 2, 0, 4), acq(600, 1, 1, 0),
                                rel(700, 1, 1, 1)};
    struct both r = check_both(e, sizeof(e) / sizeof(e[0]), 1000);
    assert_int_equal(r.stream.overlaps, 2);
    assert_int_equal(r.stream.concurrent_entries, 2);
    assert_int_equal(r.stream.list[0].sa.effect, EFFECT_OPEN);
    assert_int_equal(r.stream.list[0].sa.to_ns, 1000);
    assert_int_equal(r.stream.list[0].sb.client, 1);
    assert_int_equal(r.stream.list[1].sb.client, 2);
    free_both(&r);
}

/* Permits, N = 2, three holders: the third enters with two inside, one
 * pair with the one of them that leaves first (seq 4: process 0). */
static void test_permits_two_three_holders(void **state)
{
    (void)state;
    struct history_event e[] = {
        permit(acq(100, 0, 0, 0), 2), permit(acq(150, 1, 0, 1), 2), permit(acq(200, 2, 0, 2), 2),
        permit(rel(300, 2, 0, 3), 2), permit(rel(400, 0, 0, 4), 2), permit(rel(500, 1, 0, 5), 2),
    };
    struct both r = one_overlap(e, sizeof(e) / sizeof(e[0]), 0, 2);
    assert_int_equal(r.stream.list[0].overlap_ns, 100);
    free_both(&r);
}

/* The sequence, not the file's order: B's line comes after A's exit, but
 * the witness had B enter (1) before A left (2). */
static void test_seq_overlap_after_exit_line(void **state)
{
    (void)state;
    struct history_event e[] = {acq(100, 0, 0, 0), rel(200, 0, 0, 2), acq(203, 1, 0, 1),
                                rel(300, 1, 0, 3)};
    struct both r = check_both(e, sizeof(e) / sizeof(e[0]), 1000);
    assert_int_equal(r.stream.overlaps, 1);
    assert_int_equal(r.stream.list[0].overlap_ns, 0); /* no common nanosecond */
    free_both(&r);
}

/* C enters (seq 4) after A left (3) and is judged on the sequence only once
 * B's late line fills steps 1 and 2: judged at once, C's entry would have
 * pushed A out before B came to overlap it. */
static void test_seq_waits_for_every_lower_step(void **state)
{
    (void)state;
    struct history_event e[] = {acq(100, 0, 0, 0), rel(200, 0, 0, 3), acq(201, 2, 0, 4),
                                rel(250, 2, 0, 5), acq(260, 1, 0, 1), rel(270, 1, 0, 2)};
    struct both r = one_overlap(e, sizeof(e) / sizeof(e[0]), 0, 1);
    free_both(&r);
}

/* Two entries at one nanosecond on time: the later-leaving one is judged
 * second, as the whole-history sort has it, so it is the one that entered
 * an occupied key. */
static void test_time_tie(void **state)
{
    (void)state;
    struct history_event e[] = {acq(100, 1, 0, NO), acq(100, 0, 0, NO), rel(150, 0, 0, NO),
                                rel(300, 1, 0, NO)};
    struct both r = one_overlap(e, sizeof(e) / sizeof(e[0]), 0, 1);
    free_both(&r);
}

/* A long run of clean hand-overs on four keys: the stream holds at most
 * what is inside or just left, per key, never the run. */
static void test_state_bounded_by_keys(void **state)
{
    (void)state;
    enum { KEYS = 4, ROUNDS = 5000 };
    struct history_event *e = malloc(2 * KEYS * ROUNDS * sizeof(*e));
    assert_non_null(e);
    size_t n = 0;
    for (uint32_t i = 0; i < ROUNDS; i++)
        for (uint32_t k = 0; k < KEYS; k++) {
            uint64_t t = 1000 + 100 * (uint64_t)i;
            e[n++] = acq(t + k, i % 7, k, 2 * i);
            e[n++] = rel(t + 50 + k, i % 7, k, 2 * i + 1);
        }
    /* time order: each round's entries then its exits */
    struct history_event *o = malloc(n * sizeof(*o));
    assert_non_null(o);
    size_t m = 0;
    for (size_t i = 0; i < n; i += 2 * KEYS) {
        for (size_t k = 0; k < KEYS; k++)
            o[m++] = e[i + 2 * k];
        for (size_t k = 0; k < KEYS; k++)
            o[m++] = e[i + 2 * k + 1];
    }
    struct both r = check_both(o, m, 10000000);
    assert_int_equal(r.stream.sections, KEYS * ROUNDS);
    assert_int_equal(r.stream.overlaps, 0);
    /* per key: the one inside, and the one before it, still in the heaps */
    assert_int_equal(r.peak, 2 * KEYS);
    free_both(&r);
    free(e);
    free(o);
}

/* ---- seeded histories ------------------------------------------------------ */

static uint64_t rng_state;

static uint32_t rnd(uint32_t n)
{
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (uint32_t)((rng_state >> 33) % n);
}

struct gen_ev {
    struct history_event e;
    uint64_t order;
};

static int cmp_gen(const void *pa, const void *pb)
{
    const struct gen_ev *a = pa, *b = pb;
    if (a->e.t_ns != b->e.t_ns)
        return a->e.t_ns < b->e.t_ns ? -1 : 1;
    return a->order < b->order ? -1 : a->order > b->order;
}

/* Clients taking random keys in random modes, unguarded: the witness
 * numbers each key's entries and exits in true order, the lines carry a
 * clock read a little off it, so the file's order and the sequence's
 * differ. Some keys carry no sequence (a foreign file), some holders crash
 * or never let go, some re-enter. */
static size_t generate(struct gen_ev *g, uint32_t clients, uint32_t keys, uint32_t steps)
{
    uint64_t seq[8] = {0};
    size_t n = 0;
    for (uint32_t c = 0; c < clients; c++) {
        uint64_t t = 100 + rnd(50);
        for (uint32_t i = 0; i < steps; i++) {
            uint32_t k = rnd(keys);
            bool seqd = k != 0; /* key 0: known only in time */
            uint8_t mode = k == 2 ? LOCK_MODE_PERMIT : k == 3 ? rnd(2) : LOCK_MODE_EXCLUSIVE;
            struct history_event a = acq(t, c, k, NO);
            a.mode = mode;
            a.permits = mode == LOCK_MODE_PERMIT ? 2 : 0;
            a.owner = c * 1000 + i / 4; /* a new owner now and then: a new life */
            a.seq = seqd ? seq[k]++ : NO;
            a.t_ns = t + rnd(3); /* the clock read after the witness step */
            g[n].e = a;
            g[n].order = n;
            n++;
            uint64_t hold = 1 + rnd(40);
            if (rnd(10) == 0 && i + 1 < steps) { /* re-entries, nested: no witness step */
                uint32_t depth = 1 + rnd(5), gap = 1 + rnd(12);
                for (uint32_t j = 1; j <= depth; j++) {
                    struct history_event in = a;
                    in.t_ns = a.t_ns + j;
                    in.seq = NO;
                    g[n] = (struct gen_ev){in, n};
                    n++;
                }
                for (uint32_t j = depth; j >= 1; j--) { /* the newest leaves first */
                    struct history_event out =
                        rel(a.t_ns + depth + (depth - j + 1) * gap, c, k, NO);
                    out.owner = a.owner;
                    g[n] = (struct gen_ev){out, n};
                    n++;
                }
                hold += depth + (depth + 1) * gap;
            }
            if (rnd(60) == 0)
                break; /* this client never lets go, nor comes back */
            struct history_event r = rel(a.t_ns + hold, c, k, NO);
            r.owner = a.owner;
            r.seq = seqd ? seq[k]++ : NO;
            if (rnd(15) == 0) {
                r.f = HF_CRASH;
                r.type = HT_INFO;
            } else {
                r.arg = (uint8_t)rnd(3); /* applied, none, fenced */
            }
            g[n].e = r;
            g[n].order = n;
            n++;
            t = r.t_ns + rnd(30);
        }
    }
    return n;
}

/* The witness steps are taken in one true order per key; the generator
 * hands them out per client, so renumber each key's steps by time first
 * (the lines then stray from that order only by the jitter). */
static void renumber(struct gen_ev *g, size_t n)
{
    uint64_t seq[8] = {0};
    bool swapped = false;
    for (size_t i = 0; i < n; i++) {
        struct history_event *e = &g[i].e;
        if (e->seq != NO)
            e->seq = seq[e->key]++;
        bool swap = e->seq != NO && !swapped && rnd(3) == 0 && i > 0 && g[i - 1].e.key == e->key &&
                    g[i - 1].e.seq != NO && g[i - 1].e.client != e->client &&
                    g[i - 1].e.t_ns + 3 > e->t_ns;
        if (swap) {
            uint64_t s = g[i - 1].e.seq; /* two clients' steps, lines the other way round */
            g[i - 1].e.seq = e->seq;
            e->seq = s;
        }
        swapped = swap;
    }
}

static void test_seeded_histories_agree(void **state)
{
    (void)state;
    enum { CLIENTS = 6, KEYS = 5, STEPS = 60, ROUNDS = 300 };
    struct gen_ev *g = malloc(CLIENTS * STEPS * 12 * sizeof(*g));
    struct history_event *e = malloc(CLIENTS * STEPS * 12 * sizeof(*e));
    assert_true(g && e);
    uint64_t overlaps = 0;
    for (uint64_t seed = 1; seed <= ROUNDS; seed++) {
        rng_state = seed;
        size_t n = generate(g, CLIENTS, KEYS, STEPS);
        qsort(g, n, sizeof(*g), cmp_gen);
        renumber(g, n);
        for (size_t i = 0; i < n; i++)
            e[i] = g[i].e;
        struct both r = check_both(e, n, e[n - 1].t_ns + 10);
        overlaps += r.stream.overlaps;
        free_both(&r);
    }
    assert_true(overlaps > 0); /* the histories do hold overlaps to find */
    free(g);
    free(e);
}

/* Out of time order, or from a process past the bound: refused, nothing
 * taken in. */
static void test_refuses_what_it_cannot_judge(void **state)
{
    (void)state;
    struct check_result r;
    struct checker *c = checker_begin(0, 10, false, &r);
    assert_non_null(c);
    struct history_event a = acq(200, 0, 0, 0), early = acq(100, 1, 0, 1);
    struct history_event far = acq(300, HISTORY_MAX_CLIENTS, 0, 1);
    assert_int_equal(checker_event(c, &a), 0);
    assert_int_equal(checker_event(c, &early), -2);
    assert_int_equal(checker_event(c, &far), -2);
    assert_int_equal(checker_end(c, 1000, NULL, NULL), 0);
    assert_int_equal(r.sections, 1);
    assert_int_equal(r.overlaps, 0);
    checker_result_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_long_section_over_many_short),
        cmocka_unit_test(test_open_section_overlaps_all_after),
        cmocka_unit_test(test_permits_two_three_holders),
        cmocka_unit_test(test_seq_overlap_after_exit_line),
        cmocka_unit_test(test_seq_waits_for_every_lower_step),
        cmocka_unit_test(test_time_tie),
        cmocka_unit_test(test_state_bounded_by_keys),
        cmocka_unit_test(test_seeded_histories_agree),
        cmocka_unit_test(test_refuses_what_it_cannot_judge),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
