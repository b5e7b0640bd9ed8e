/* test_context.c - the violations' context (sim/check/context.h): the
 * sections a one-pass check's report needs around each drawn violation,
 * rebuilt from the events, against what the whole-history path
 * (result_check_history: every section, sorted) has in the same windows,
 * and against values worked by hand.
 *
 * The history (times in ms, t0 = 1 ms):
 *   key 0, no witness sequence:
 *     c4 [5, 10]          before the window (it ends before 25)
 *     c5 [20, 30]         reaches into it
 *     c1 [100, 300], c2 [200, 400]       the first violation: window [25, 475]
 *     c3 [410, 440] [420, 440] [425, 430] nested thrice; one release
 *                         closes the newest, the crash at 440 both others
 *     c6 [450, 460] owner 6, then owner 60 [460, 470]: another life of
 *                         the process closes the first as crashed
 *     c13 [472, end)      never released: open to the end (3000)
 *   key 1, every section with a sequence (sorted by it):
 *     c15 [5000, 70930]   reaches into the window but entered more than a
 *                         minute before it
 *     c7 [71000, 71200] seq 3..5, c8 [71100, 71300] seq 4..6: the second
 *                         violation, window [70925, 71375]
 *     c9 [71310, 71320] seq 9..10 around c10 [71312, 71314] seq 7..8: in
 *                         time c9 first, by the witness c10
 *     c14 [72000, 72100]  after the window
 *   key 2, no window: c11 [150, 250] and c12 [210, 260] fenced: a listed
 *     fenced pair, whose two sections come from the pair itself.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "reports/html_parts.h"
#include "sim/check/check_pass.h"
#include "sim/check/context.h"
#include "sim/check/result.h"
#include "sim/record/history_bin.h"
#include "tests/lib/history_make.h"

#define MS 1000000ULL
#define NO HISTORY_NO_SEQ

/* One step of the history: 'A' acquire ok, 'R' release invoke (with its
 * effect), 'C' crash; at ms, of client on key as owner, witness seq. */
struct step {
    char what;
    uint64_t ms;
    uint32_t client, key, owner;
    uint64_t seq;
    uint8_t effect;
};

static const struct step steps[] = {
    {'A', 5, 4, 0, 4, NO, 0},
    {'R', 10, 4, 0, 4, NO, EFFECT_APPLIED},
    {'A', 20, 5, 0, 5, NO, 0},
    {'R', 30, 5, 0, 5, NO, EFFECT_APPLIED},
    {'A', 100, 1, 0, 1, NO, 0},
    {'A', 150, 11, 2, 11, NO, 0},
    {'A', 200, 2, 0, 2, NO, 0},
    {'A', 210, 12, 2, 12, NO, 0},
    {'R', 250, 11, 2, 11, NO, EFFECT_APPLIED},
    {'R', 260, 12, 2, 12, NO, EFFECT_FENCED},
    {'R', 300, 1, 0, 1, NO, EFFECT_APPLIED},
    {'R', 400, 2, 0, 2, NO, EFFECT_NONE},
    {'A', 410, 3, 0, 3, NO, 0},
    {'A', 420, 3, 0, 3, NO, 0},
    {'A', 425, 3, 0, 3, NO, 0},
    {'R', 430, 3, 0, 3, NO, EFFECT_APPLIED},
    {'C', 440, 3, 0, 3, NO, 0},
    {'A', 450, 6, 0, 6, NO, 0},
    {'A', 460, 6, 0, 60, NO, 0},
    {'R', 470, 6, 0, 60, NO, EFFECT_APPLIED},
    {'A', 472, 13, 0, 13, NO, 0},
    {'A', 5000, 15, 1, 15, 1, 0},
    {'R', 70930, 15, 1, 15, 2, EFFECT_APPLIED},
    {'A', 71000, 7, 1, 7, 3, 0},
    {'A', 71100, 8, 1, 8, 4, 0},
    {'R', 71200, 7, 1, 7, 5, EFFECT_APPLIED},
    {'R', 71300, 8, 1, 8, 6, EFFECT_APPLIED},
    {'A', 71310, 9, 1, 9, 9, 0},
    {'A', 71312, 10, 1, 10, 7, 0},
    {'R', 71314, 10, 1, 10, 8, EFFECT_APPLIED},
    {'R', 71320, 9, 1, 9, 10, EFFECT_APPLIED},
    {'A', 72000, 14, 1, 14, 11, 0},
    {'R', 72100, 14, 1, 14, 12, EFFECT_APPLIED},
};
#define N_STEPS (sizeof(steps) / sizeof(steps[0]))

static struct history_event event_of(const struct step *s)
{
    static const uint8_t type[] = {['A'] = HT_OK, ['R'] = HT_INVOKE, ['C'] = HT_INFO};
    static const uint8_t f[] = {['A'] = HF_ACQUIRE, ['R'] = HF_RELEASE, ['C'] = HF_CRASH};
    struct history_event e = ev(s->ms * MS, s->client, type[(int)s->what], f[(int)s->what]);
    e.key = s->key;
    e.owner = s->owner;
    e.seq = s->seq;
    e.arg = s->effect;
    e.token = s->what == 'A' ? s->client : 0;
    return e;
}

static const char *const keys[] = {"lock:a", "lock:b", "lock:c"};
static const char *const owners[61] = {
    "o0",  "o1",  "o2",  "o3",  "o4",  "o5",  "o6",  "o7",  "o8",  "o9",  "o10", "o11", "o12",
    "o13", "o14", "o15", "o16", "o17", "o18", "o19", "o20", "o21", "o22", "o23", "o24", "o25",
    "o26", "o27", "o28", "o29", "o30", "o31", "o32", "o33", "o34", "o35", "o36", "o37", "o38",
    "o39", "o40", "o41", "o42", "o43", "o44", "o45", "o46", "o47", "o48", "o49", "o50", "o51",
    "o52", "o53", "o54", "o55", "o56", "o57", "o58", "o59", "o60"};

static void history_of(struct history *h)
{
    struct history_event e[N_STEPS];
    for (size_t i = 0; i < N_STEPS; i++)
        e[i] = event_of(&steps[i]);
    make_history(h, e, N_STEPS, keys, 3, owners, 61);
    h->start_mono_ns = 1 * MS;
    h->end_mono_ns = 3000 * MS;
}

/* r checked as `run` checked its history before the stream: every section kept. */
static void whole_result(struct run_result *r)
{
    memset(r, 0, sizeof(*r));
    history_of(&r->hist);
    r->t0_mono_ns = r->hist.start_mono_ns;
    assert_int_equal(result_check_history(r, 0, false), 0);
}

/* r checked in one pass (check_pass.h): no sections, the pairs by entry order. */
static void stream_result(struct run_result *r, struct history *h)
{
    memset(r, 0, sizeof(*r));
    history_of(h);
    /* the names, as a run keeps them, but no events */
    history_of(&r->hist);
    free(r->hist.ev);
    r->hist.ev = NULL;
    r->hist.n = 0;
    struct check_pass *p = check_pass_begin(0, false);
    assert_non_null(p);
    for (size_t i = 0; i < h->n; i++)
        assert_int_equal(check_pass_event(p, &h->ev[i]), 0);
    assert_int_equal(check_pass_end(p, h->end_mono_ns, r), 0);
    r->t0_mono_ns = h->start_mono_ns;
    assert_null(r->sections);
}

/* r's sections rebuilt from h's events; the most the context held. */
static size_t context_of(struct run_result *r, const struct history *h, size_t windows)
{
    struct context *x = context_begin(r, windows);
    assert_non_null(x);
    for (size_t i = 0; i < h->n; i++)
        assert_int_equal(context_event(x, &h->ev[i]), 0);
    size_t peak = context_held_peak(x);
    assert_int_equal(context_end(x, h->end_mono_ns, r), 0);
    return peak;
}

struct want {
    uint32_t key, client, owner;
    uint64_t from_ms, to_ms;
    uint8_t effect;
};

static const struct want kept[] = {
    {0, 5, 5, 20, 30, EFFECT_APPLIED},       {0, 1, 1, 100, 300, EFFECT_APPLIED},
    {0, 2, 2, 200, 400, EFFECT_NONE},        {0, 3, 3, 410, 440, EFFECT_CRASHED},
    {0, 3, 3, 420, 440, EFFECT_CRASHED},     {0, 3, 3, 425, 430, EFFECT_APPLIED},
    {0, 6, 6, 450, 460, EFFECT_CRASHED},     {0, 6, 60, 460, 470, EFFECT_APPLIED},
    {0, 13, 13, 472, 3000, EFFECT_OPEN},     {1, 7, 7, 71000, 71200, EFFECT_APPLIED},
    {1, 8, 8, 71100, 71300, EFFECT_APPLIED}, {1, 10, 10, 71312, 71314, EFFECT_APPLIED},
    {1, 9, 9, 71310, 71320, EFFECT_APPLIED}, {2, 11, 11, 150, 250, EFFECT_APPLIED},
    {2, 12, 12, 210, 260, EFFECT_FENCED},
};
#define N_KEPT (sizeof(kept) / sizeof(kept[0]))

static const struct violation *listed_on(const struct run_result *r, uint32_t key)
{
    for (size_t i = 0; i < r->check.n_list; i++)
        if (r->check.list[i].sa.key == key)
            return &r->check.list[i];
    fail_msg("no listed pair on key %u", key);
    return NULL;
}

static void test_kept_by_hand(void **state)
{
    (void)state;
    struct run_result r;
    struct history h;
    stream_result(&r, &h);
    assert_int_equal(r.check.violations, 2);
    assert_int_equal(r.check.fenced_pairs, 1);
    assert_int_equal(r.check.n_list, 3);
    /* held at most: 12 kept and c13, c14 open; 18 sections in all */
    assert_int_equal(context_of(&r, &h, CONTEXT_WINDOWS), 14);
    assert_int_equal(r.n_sections, N_KEPT);
    for (size_t i = 0; i < N_KEPT; i++) {
        const struct section *s = &r.sections[i];
        assert_int_equal(s->key, kept[i].key);
        assert_int_equal(s->client, kept[i].client);
        assert_int_equal(s->owner, kept[i].owner);
        assert_int_equal(s->from_ns, kept[i].from_ms * MS);
        assert_int_equal(s->to_ns, kept[i].to_ms * MS);
        assert_int_equal(s->effect, kept[i].effect);
        assert_int_equal(s->has_seq, kept[i].key == 1);
    }
    /* each pair named by its place in the kept array, and the same two */
    const size_t at[3][2] = {{1, 2}, {9, 10}, {13, 14}};
    for (uint32_t k = 0; k < 3; k++) {
        const struct violation *v = listed_on(&r, k);
        assert_int_equal(v->a, at[k][0]);
        assert_int_equal(v->b, at[k][1]);
        assert_int_equal(v->fenced, k == 2);
        assert_section_equal(violation_first(&r, v), &v->sa);
        assert_section_equal(violation_second(&r, v), &v->sb);
    }
    history_free(&h);
    result_free(&r);
}

/* The whole path's sections in w, in its order, against the context's. */
static void assert_same_in_window(const struct run_result *whole, const struct run_result *ctx,
                                  const struct context_window *w, size_t expected)
{
    size_t j = 0, n = 0;
    for (size_t i = 0; i < whole->n_sections; i++) {
        if (!context_in_window(w, &whole->sections[i]))
            continue;
        while (j < ctx->n_sections && !context_in_window(w, &ctx->sections[j]))
            j++;
        assert_true(j < ctx->n_sections);
        assert_section_equal(&whole->sections[i], &ctx->sections[j++]);
        n++;
    }
    while (j < ctx->n_sections)
        assert_false(context_in_window(w, &ctx->sections[j++]));
    assert_int_equal(n, expected);
}

/* Not inlined: gcc -O3 then takes the text open_memstream gave for a
 * pointer into the local that received it (-Wdangling-pointer). */
__attribute__((noinline)) static char *timeline(const struct run_result *r,
                                                const struct violation_group *g)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    html_group_timeline(f, r, g, 0);
    assert_int_equal(fclose(f), 0);
    return text;
}

/* The group of r's whose stale holder held key. */
static const struct violation_group *group_on(const struct run_result *r, uint32_t key)
{
    for (size_t i = 0; i < r->check.groups.n_list; i++)
        if (r->check.groups.list[i].stale.key == key)
            return &r->check.groups.list[i];
    fail_msg("no group on key %u", key);
    return NULL;
}

static size_t count(const char *text, const char *what)
{
    size_t n = 0;
    for (const char *p = strstr(text, what); p; p = strstr(p + 1, what))
        n++;
    return n;
}

static void test_same_as_whole(void **state)
{
    (void)state;
    struct run_result whole, ctx;
    struct history h;
    whole_result(&whole);
    stream_result(&ctx, &h);
    /* before the context: each timeline draws its stale holder and its pair alone */
    char *alone = timeline(&ctx, group_on(&ctx, 0));
    assert_int_equal(count(alone, "class=\"held\""), 2);
    assert_int_equal(count(alone, "class=\"pair\""), 1);
    free(alone);
    context_of(&ctx, &h, CONTEXT_WINDOWS);
    const size_t in_window[2] = {9, 4};
    for (uint32_t k = 0; k < 2; k++) {
        const struct violation *v = listed_on(&ctx, k), *wv = listed_on(&whole, k);
        assert_section_equal(&whole.sections[wv->a], &ctx.sections[v->a]);
        assert_section_equal(&whole.sections[wv->b], &ctx.sections[v->b]);
        /* a group of one pair has the pair's window */
        struct context_window w = context_window_of(&v->sa, &v->sb, ctx.t0_mono_ns);
        struct context_window wg = context_window_of_group(group_on(&ctx, k), ctx.t0_mono_ns);
        assert_int_equal(wg.w0_ns, w.w0_ns);
        assert_int_equal(wg.w1_ns, w.w1_ns);
        assert_same_in_window(&whole, &ctx, &w, in_window[k]);
        char *a = timeline(&whole, group_on(&whole, k)), *b = timeline(&ctx, group_on(&ctx, k));
        assert_string_equal(a, b);
        assert_int_equal(count(b, "class=\"held\""), in_window[k]);
        assert_int_equal(count(b, "class=\"pair\""), 1);
        assert_int_equal(count(b, "class=\"lease-end\""), 0); /* no ttl in this history */
        free(a);
        free(b);
    }
    history_free(&h);
    result_free(&whole);
    result_free(&ctx);
}

/* The same from a file, either form: a file numbers keys and owners in the
 * order it first names them (lock:c before lock:b here), the run its own,
 * so they are matched by name. A file the run's names do not cover, or
 * that cannot be read, is refused. */
static void test_from_file(void **state)
{
    (void)state;
    struct run_result mem, file;
    struct history h, h2;
    stream_result(&mem, &h);
    context_of(&mem, &h, CONTEXT_WINDOWS);
    for (int form = 0; form < 2; form++) {
        stream_result(&file, &h2);
        char path[PATH_LEN] = "/tmp/locklab_ctx_XXXXXX", err[ERR_LEN] = "";
        int fd = mkstemp(path);
        assert_true(fd >= 0);
        FILE *f = fdopen(fd, "w");
        assert_non_null(f);
        assert_int_equal(form ? history_write_llh(&h2, f) : history_write_jsonl(&h2, f), 0);
        assert_int_equal(fclose(f), 0);
        assert_int_equal(context_from_file(path, &file, CONTEXT_WINDOWS, err, sizeof(err)), 0);
        unlink(path);
        assert_string_equal(err, "");
        assert_int_equal(file.n_sections, mem.n_sections);
        for (size_t i = 0; i < mem.n_sections; i++)
            assert_section_equal(&file.sections[i], &mem.sections[i]);
        for (size_t i = 0; i < mem.check.n_list; i++) {
            assert_int_equal(file.check.list[i].a, mem.check.list[i].a);
            assert_int_equal(file.check.list[i].b, mem.check.list[i].b);
        }
        history_free(&h2);
        result_free(&file);
    }
    /* a file the run's names do not cover: refused, nothing filled */
    stream_result(&file, &h2);
    char path[PATH_LEN] = "/tmp/locklab_ctx_XXXXXX", err[ERR_LEN] = "";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    assert_non_null(f);
    assert_int_equal(history_write_llh(&h2, f), 0);
    assert_int_equal(fclose(f), 0);
    free(file.hist.owners[7]);
    file.hist.owners[7] = strdup("someone else");
    assert_int_equal(context_from_file(path, &file, CONTEXT_WINDOWS, err, sizeof(err)), -2);
    unlink(path);
    char want[ERR_LEN];
    snprintf(want, sizeof(want), "%s: owner \"o7\" is not one of the run's", path);
    assert_string_equal(err, want);
    assert_null(file.sections);
    /* still named by entry: c1 entered third, c2 fifth */
    assert_int_equal(listed_on(&file, 0)->a, 2);
    assert_int_equal(listed_on(&file, 0)->b, 4);
    /* and the file's own errors, as its reader words them */
    assert_int_equal(
        context_from_file("/nonexistent/history.llh", &file, CONTEXT_WINDOWS, err, sizeof(err)),
        -2);
    assert_non_null(strstr(err, "/nonexistent/history.llh"));
    assert_null(file.sections);
    history_free(&h);
    history_free(&h2);
    result_free(&mem);
    result_free(&file);
}

/* Events fed out of time order, or from a process past the limit, are
 * refused as the checker refuses them; the context stays usable. */
static void test_refused(void **state)
{
    (void)state;
    struct run_result r;
    struct history h;
    stream_result(&r, &h);
    struct context *x = context_begin(&r, CONTEXT_WINDOWS);
    assert_non_null(x);
    assert_int_equal(context_event(x, &h.ev[1]), 0);
    assert_int_equal(context_event(x, &h.ev[0]), -2);
    struct history_event far = h.ev[2];
    far.client = HISTORY_MAX_CLIENTS;
    assert_int_equal(context_event(x, &far), -2);
    context_free(x);
    history_free(&h);
    result_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kept_by_hand),
        cmocka_unit_test(test_same_as_whole),
        cmocka_unit_test(test_from_file),
        cmocka_unit_test(test_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
