/* test_groups.c - the violations grouped by stale holder (sim/check/groups.h),
 * on a history made by hand, checked both ways (the whole history, and the
 * one pass a run makes), against values worked by hand.
 *
 * The history (times in ms):
 *   key 0 "lock:a", no witness sequence; client 1 paused (fault 0, a
 *   client_pause aimed at it, 100..1000):
 *     c1 [100, 1000]      the stale holder
 *     c2 [200, 250]       pair 1
 *     c3 [300, 350]       pair 2
 *     c2 [400, 450]       pair 3 (client 2 again)
 *     c4 [500, 550]       fenced: overlaps, but no violation
 *     c5 [1200, 1300]     after it left: none
 *   key 1 "lock:b", every section with a sequence:
 *     c6 [100, 300] seq 1..4, c7 [150, 200] seq 2..3: one pair
 *     c8 [250, 400] seq 5..6: overlaps c6 in time, not on the witness
 *   key 2 "lock:c" (an unsafe lock, no fault): a chain
 *     c9 [2000, 2100], c10 [2050, 2200], c11 [2150, 2250]: (c9, c10) and
 *     (c10, c11), two groups of one pair each
 * So: 6 violations, 4 groups, by entry: c1 (3 pairs), c6 (1), c9 (1),
 * c10 (1).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "sim/check/check_pass.h"
#include "sim/check/context.h"
#include "sim/check/groups.h"
#include "sim/check/result.h"
#include "tests/lib/history_make.h"

#define MS 1000000ULL
#define NO HISTORY_NO_SEQ

struct step {
    char what; /* 'A' acquire ok, 'R' release invoke */
    uint64_t ms;
    uint32_t client, key;
    uint64_t seq;
    uint8_t effect;
};

static const struct step steps[] = {
    {'A', 100, 1, 0, NO, 0},
    {'A', 100, 6, 1, 1, 0},
    {'A', 150, 7, 1, 2, 0},
    {'A', 200, 2, 0, NO, 0},
    {'R', 200, 7, 1, 3, EFFECT_APPLIED},
    {'R', 250, 2, 0, NO, EFFECT_APPLIED},
    {'A', 250, 8, 1, 5, 0},
    {'A', 300, 3, 0, NO, 0},
    {'R', 300, 6, 1, 4, EFFECT_APPLIED},
    {'R', 350, 3, 0, NO, EFFECT_APPLIED},
    {'R', 400, 8, 1, 6, EFFECT_APPLIED},
    {'A', 400, 2, 0, NO, 0},
    {'R', 450, 2, 0, NO, EFFECT_APPLIED},
    {'A', 500, 4, 0, NO, 0},
    {'R', 550, 4, 0, NO, EFFECT_FENCED},
    {'R', 1000, 1, 0, NO, EFFECT_APPLIED},
    {'A', 1200, 5, 0, NO, 0},
    {'R', 1300, 5, 0, NO, EFFECT_APPLIED},
    {'A', 2000, 9, 2, NO, 0},
    {'A', 2050, 10, 2, NO, 0},
    {'R', 2100, 9, 2, NO, EFFECT_APPLIED},
    {'A', 2150, 11, 2, NO, 0},
    {'R', 2200, 10, 2, NO, EFFECT_APPLIED},
    {'R', 2250, 11, 2, NO, EFFECT_APPLIED},
};
#define N_STEPS (sizeof(steps) / sizeof(steps[0]))

static const char *const keys[] = {"lock:a", "lock:b", "lock:c", "lock:d"};
static const char *const owners[] = {"o0", "o1", "o2", "o3", "o4",  "o5",
                                     "o6", "o7", "o8", "o9", "o10", "o11"};

static struct history_event event_of(const struct step *s)
{
    struct history_event e = ev(s->ms * MS, s->client, s->what == 'A' ? HT_OK : HT_INVOKE,
                                s->what == 'A' ? HF_ACQUIRE : HF_RELEASE);
    e.key = s->key;
    e.owner = s->client;
    e.seq = s->seq;
    e.arg = s->effect;
    return e;
}

/* The hand-made history: steps, with the pause of client 1 around them. */
static void history_of(struct history *h)
{
    struct history_event e[N_STEPS + 2];
    size_t n = 0;
    e[n++] = fault(100 * MS, 1, KIND_PAUSE, 0);
    for (size_t i = 0; i < N_STEPS; i++) {
        e[n++] = event_of(&steps[i]);
        if (steps[i].ms == 1000)
            e[n++] = fault(1000 * MS, 1, KIND_PAUSE, 1);
    }
    make_history(h, e, n, keys, 4, owners, 12);
    h->start_mono_ns = 1;
    h->end_mono_ns = 3000 * MS;
}

static void whole_result(struct run_result *r, const struct history *h)
{
    memset(r, 0, sizeof(*r));
    r->hist = *h;
    assert_int_equal(result_check_history(r, 0, false), 0);
}

static void stream_result(struct run_result *r, const struct history *h)
{
    memset(r, 0, sizeof(*r));
    struct check_pass *p = check_pass_begin(0, false);
    assert_non_null(p);
    for (size_t i = 0; i < h->n; i++)
        assert_int_equal(check_pass_event(p, &h->ev[i]), 0);
    assert_int_equal(check_pass_end(p, h->end_mono_ns, r), 0);
}

struct want {
    uint32_t client, key;
    uint64_t from_ms, to_ms, pairs, first_ms, last_ms, reach_ms;
    uint32_t holders[3];
    uint32_t n_holders;
    size_t n_faults;
};

static const struct want groups[] = {
    {1, 0, 100, 1000, 3, 200, 450, 450, {2, 3}, 2, 1},
    {6, 1, 100, 300, 1, 150, 200, 200, {7}, 1, 1},
    {9, 2, 2000, 2100, 1, 2050, 2100, 2200, {10}, 1, 0},
    {10, 2, 2050, 2200, 1, 2150, 2200, 2250, {11}, 1, 0},
};

static void assert_groups(const struct check_result *c)
{
    const struct violation_groups *gs = &c->groups;
    assert_int_equal(c->violations, 6);
    assert_int_equal(c->fenced_pairs, 1);
    assert_int_equal(gs->groups, 4);
    assert_int_equal(gs->n_list, 4);
    assert_int_equal(gs->other_groups, 0);
    assert_int_equal(gs->other_pairs, 0);
    for (size_t i = 0; i < 4; i++) {
        const struct violation_group *g = &gs->list[i];
        const struct want *w = &groups[i];
        assert_int_equal(g->stale.client, w->client);
        assert_int_equal(g->stale.key, w->key);
        assert_int_equal(g->stale.from_ns, w->from_ms * MS);
        assert_int_equal(g->stale.to_ns, w->to_ms * MS);
        assert_int_equal(g->pairs, w->pairs);
        assert_int_equal(g->first_ns, w->first_ms * MS);
        assert_int_equal(g->last_ns, w->last_ms * MS);
        assert_int_equal(g->reach_ns, w->reach_ms * MS);
        assert_int_equal(g->n_holders, w->n_holders);
        assert_memory_equal(g->holders, w->holders, w->n_holders * sizeof(uint32_t));
        assert_false(g->more_holders);
        assert_int_equal(g->n_faults, w->n_faults);
        if (w->n_faults)
            assert_int_equal(g->faults[0], 0);
    }
}

static void test_groups_whole(void **state)
{
    (void)state;
    struct history h;
    history_of(&h);
    struct run_result r;
    whole_result(&r, &h);
    assert_groups(&r.check);
    /* the page's rule finds each group's pairs among the sections */
    for (size_t i = 0; i < r.check.groups.n_list; i++) {
        const struct violation_group *g = &r.check.groups.list[i];
        uint64_t n = 0;
        for (size_t k = 0; k < r.n_sections; k++)
            n += groups_pairs_with(&r.check.groups, g, &r.sections[k]);
        assert_int_equal(n, g->pairs);
    }
    result_free(&r);
}

static void test_groups_stream(void **state)
{
    (void)state;
    struct history h;
    history_of(&h);
    struct run_result r;
    stream_result(&r, &h);
    assert_groups(&r.check);
    result_free(&r);
    history_free(&h);
}

/* key 3, an unsafe lock: 103 stale holders in turn, each overlapped by
 * one later holder; the first three by two. The kept 100 are the three
 * of two pairs and the 97 earliest of one; three groups of one pair are
 * counted in "other". */
static void test_groups_cap(void **state)
{
    (void)state;
    enum { N = CHECK_MAX_GROUPS + 3 };
    struct history_event *e = calloc(8 * N, sizeof(*e));
    assert_non_null(e);
    size_t n = 0;
    for (uint32_t i = 0; i < N; i++) {
        uint64_t t = (uint64_t)i * 100 * MS;
        /* client 0 holds [t, t+50]; client 1 enters at t+10 and leaves at
         * t+20; for the first three, client 2 enters at t+25, leaves at t+35 */
        const struct {
            uint64_t ms;
            uint32_t client;
            bool acquire;
        } at[] = {{0, 0, true},  {10, 1, true},  {20, 1, false},
                  {25, 2, true}, {35, 2, false}, {50, 0, false}};
        for (size_t k = 0; k < sizeof(at) / sizeof(at[0]); k++) {
            if (at[k].client == 2 && i >= 3)
                continue;
            struct history_event x =
                ev(t + at[k].ms * MS, at[k].client, at[k].acquire ? HT_OK : HT_INVOKE,
                   at[k].acquire ? HF_ACQUIRE : HF_RELEASE);
            x.key = 3;
            x.owner = at[k].client;
            x.seq = NO;
            x.arg = at[k].acquire ? 0 : EFFECT_APPLIED;
            e[n++] = x;
        }
    }
    struct history h;
    make_history(&h, e, n, keys, 4, owners, 12);
    free(e);
    h.start_mono_ns = 1;
    h.end_mono_ns = (uint64_t)N * 100 * MS;
    struct run_result s;
    stream_result(&s, &h);
    struct run_result r;
    whole_result(&r, &h);
    const struct check_result *both[] = {&s.check, &r.check};
    for (size_t k = 0; k < 2; k++) {
        const struct violation_groups *gs = &both[k]->groups;
        assert_int_equal(both[k]->violations, N + 3);
        assert_int_equal(gs->groups, N);
        assert_int_equal(gs->n_list, CHECK_MAX_GROUPS);
        assert_int_equal(gs->other_groups, 3);
        assert_int_equal(gs->other_pairs, 3);
        uint64_t sum = gs->other_pairs;
        for (size_t i = 0; i < gs->n_list; i++) {
            sum += gs->list[i].pairs;
            /* in the order their holders entered: the 97 earliest of one pair */
            assert_int_equal(gs->list[i].stale.from_ns, (uint64_t)i * 100 * MS);
            assert_int_equal(gs->list[i].pairs, i < 3 ? 2 : 1);
            assert_int_equal(gs->list[i].n_holders, i < 3 ? 2 : 1);
        }
        assert_int_equal(sum, both[k]->violations);
        /* drawn: the most pairs first, then the earliest, in the list's order */
        size_t idx[10];
        assert_int_equal(groups_drawn(gs, 10, idx), 10);
        for (size_t i = 0; i < 10; i++)
            assert_int_equal(idx[i], i);
    }
    result_free(&s);
    result_free(&r);
}

/* More clients than a group names: the lowest 16, in order, and a flag. */
static void test_groups_holders(void **state)
{
    (void)state;
    struct violation_groups out;
    struct group_track t;
    groups_begin(&t, &out, false);
    struct section a = {.key = 0, .owner = 100, .client = 100, .from_ns = 0, .to_ns = 1000};
    uint32_t h = GROUP_NONE;
    for (uint32_t c = 40; c > 20; c--) { /* 40 down to 21, then 21 again */
        struct section b = {.key = 0, .owner = c, .client = c, .from_ns = c, .to_ns = 2000 + c};
        assert_int_equal(groups_pair(&t, &h, &a, &b), 0);
    }
    struct section b = {.key = 0, .owner = 99, .client = 21, .from_ns = 500, .to_ns = 600};
    assert_int_equal(groups_pair(&t, &h, &a, &b), 0);
    groups_leave(&t, &h);
    assert_int_equal(h, GROUP_NONE);
    assert_int_equal(groups_finish(&t), 0);
    assert_int_equal(out.n_list, 1);
    const struct violation_group *g = &out.list[0];
    assert_int_equal(g->pairs, 21);
    assert_int_equal(g->n_holders, GROUP_MAX_HOLDERS);
    for (uint32_t i = 0; i < GROUP_MAX_HOLDERS; i++)
        assert_int_equal(g->holders[i], 21 + i);
    assert_true(g->more_holders);
    assert_int_equal(g->first_ns, 21);
    assert_int_equal(g->last_ns, 1000);
    assert_int_equal(g->reach_ns, 2040);
    free(out.list);
}

/* A group's window: its holder's entry to the last exit of it or of those
 * that overlapped it, padded a quarter; one that ran on for minutes is cut
 * 10 s after its first overlap, so the context keeps a few seconds. */
static void test_groups_window(void **state)
{
    (void)state;
    const uint64_t S = 1000 * MS;
    struct violation_group g = {
        .stale = {.key = 2, .from_ns = 10 * S, .to_ns = 12 * S},
        .first_ns = 11 * S,
        .last_ns = 12 * S,
        .reach_ns = 14 * S,
    };
    struct context_window w = context_window_of_group(&g, 1);
    assert_int_equal(w.key, 2);
    assert_int_equal(w.w0_ns, 9 * S); /* [10, 14] s padded by 1 s */
    assert_int_equal(w.w1_ns, 15 * S);
    g.stale.to_ns = 300 * S; /* a holder stale to the end of a long soak */
    g.reach_ns = 290 * S;
    w = context_window_of_group(&g, 1);
    assert_int_equal(w.w0_ns, 10 * S - 11 * S / 4); /* [10, 21] s padded by 2.75 s */
    assert_int_equal(w.w1_ns, 21 * S + 11 * S / 4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_groups_whole),  cmocka_unit_test(test_groups_stream),
        cmocka_unit_test(test_groups_cap),    cmocka_unit_test(test_groups_holders),
        cmocka_unit_test(test_groups_window),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
