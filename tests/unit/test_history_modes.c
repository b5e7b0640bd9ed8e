/* test_history_modes.c - lock modes and re-entry in the history: an
 * acquire's "mode" and "permits" written on its invoke and ok lines (an
 * exclusive line exactly as before modes existed), read back strictly,
 * carried into the sections, and judged by mode when a hand-written file
 * is checked (docs/history.md, "Modes and re-entry").
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/check/checker.h"
#include "sim/check/sections.h"
#include "sim/record/history.h"
#include "tests/lib/history_make.h"

static const char *const keys[] = {"k"};
static const char *const owners[] = {"o0", "o1", "o2"};

static struct history_event acq(uint64_t t, uint32_t client, uint8_t type, uint8_t mode,
                                uint32_t permits)
{
    struct history_event e = ev(t, client, type, HF_ACQUIRE);
    e.owner = client;
    e.mode = mode;
    e.permits = permits;
    e.seq = HISTORY_NO_SEQ;
    return e;
}

static struct history_event rel(uint64_t t, uint32_t client)
{
    struct history_event e = ev(t, client, HT_INVOKE, HF_RELEASE);
    e.owner = client;
    e.seq = HISTORY_NO_SEQ;
    return e;
}

/* ---- writing ------------------------------------------------------------ */

static void test_write_modes(void **state)
{
    (void)state;
    struct history_event e[] = {
        acq(10, 0, HT_INVOKE, LOCK_MODE_EXCLUSIVE, 0), acq(20, 0, HT_OK, LOCK_MODE_EXCLUSIVE, 0),
        acq(30, 1, HT_INVOKE, LOCK_MODE_SHARED, 0),    acq(40, 1, HT_OK, LOCK_MODE_SHARED, 0),
        acq(50, 2, HT_INVOKE, LOCK_MODE_PERMIT, 3),    acq(60, 2, HT_OK, LOCK_MODE_PERMIT, 3),
        acq(70, 2, HT_FAIL, LOCK_MODE_PERMIT, 3),
    };
    e[6].arg = HE_BUSY;
    struct history h;
    make_history(&h, e, 7, keys, 1, owners, 3);
    char *text = jsonl_of(&h);
    const char *want =
        "{\"time\":10,\"process\":0,\"type\":\"invoke\",\"f\":\"acquire\",\"key\":\"k\","
        "\"owner\":\"o0\"}\n"
        "{\"time\":20,\"process\":0,\"type\":\"ok\",\"f\":\"acquire\",\"key\":\"k\","
        "\"owner\":\"o0\"}\n"
        "{\"time\":30,\"process\":1,\"type\":\"invoke\",\"f\":\"acquire\",\"key\":\"k\","
        "\"owner\":\"o1\",\"mode\":\"shared\"}\n"
        "{\"time\":40,\"process\":1,\"type\":\"ok\",\"f\":\"acquire\",\"key\":\"k\","
        "\"owner\":\"o1\",\"mode\":\"shared\"}\n"
        "{\"time\":50,\"process\":2,\"type\":\"invoke\",\"f\":\"acquire\",\"key\":\"k\","
        "\"owner\":\"o2\",\"mode\":\"permit\",\"permits\":3}\n"
        "{\"time\":60,\"process\":2,\"type\":\"ok\",\"f\":\"acquire\",\"key\":\"k\","
        "\"owner\":\"o2\",\"mode\":\"permit\",\"permits\":3}\n"
        "{\"time\":70,\"process\":2,\"type\":\"fail\",\"f\":\"acquire\",\"key\":\"k\","
        "\"owner\":\"o2\",\"error\":\"busy\"}\n";
    const char *events = strchr(text, '\n') + 1; /* past the start line */
    assert_memory_equal(events, want, strlen(want));
    free(text);

    /* and back: each acquire's mode and permits as they were */
    struct history r;
    text = written_and_read(&h, &r);
    assert_int_equal(r.n, 7);
    for (size_t i = 0; i < 6; i++) {
        assert_int_equal(r.ev[i].mode, e[i].mode);
        assert_int_equal(r.ev[i].permits, e[i].permits);
    }
    free(text);
    history_free(&r);
    history_free(&h);
}

/* What the reader would refuse, the writer never writes. */
static void test_write_refuses_what_cannot_be_read(void **state)
{
    (void)state;
    const struct history_event bad[] = {acq(10, 0, HT_OK, LOCK_MODE_COUNT, 0),
                                        acq(10, 0, HT_OK, LOCK_MODE_PERMIT, 0)};
    for (size_t i = 0; i < 2; i++) {
        struct history h;
        make_history(&h, &bad[i], 1, keys, 1, owners, 1);
        FILE *f = fopen("/dev/null", "w");
        assert_non_null(f);
        errno = 0;
        assert_int_equal(history_write_jsonl(&h, f), -1);
        assert_int_equal(errno, EINVAL);
        fclose(f);
        history_free(&h);
    }
}

/* ---- reading ------------------------------------------------------------ */

#define LINE(type, extra)                                                                          \
    "{\"time\":2,\"process\":0,\"type\":\"" type "\",\"f\":\"acquire\",\"key\":\"k\","             \
    "\"owner\":\"o\"" extra "}\n"

static void test_read_refuses_bad_modes(void **state)
{
    (void)state;
    static const char *const cases[][2] = {
        {LINE("invoke", ",\"mode\":\"upgrade\""), ":2: unknown mode \"upgrade\""},
        {LINE("ok", ",\"mode\":2"), ":2: \"mode\" must be a string"},
        {LINE("ok", ",\"mode\":\"permit\""), ":2: missing \"permits\""},
        {LINE("ok", ",\"mode\":\"permit\",\"permits\":0"), ":2: \"permits\" must be at least 1"},
        {LINE("invoke", ",\"mode\":\"permit\",\"permits\":-1"),
         ":2: \"permits\" must be an integer >= 0"},
        {LINE("ok", ",\"mode\":\"shared\",\"permits\":2"),
         ":2: \"permits\" on a line whose mode is not \"permit\""},
        {LINE("ok", ",\"permits\":2"), ":2: \"permits\" on a line whose mode is not \"permit\""},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char buf[512];
        snprintf(buf, sizeof(buf), "%s%s", start_line, cases[i][0]);
        struct history h;
        char err[ERR_LEN];
        assert_string_equal(read_text(buf, &h, err), cases[i][1]);
    }
}

/* A line without a mode, as every history before modes and other tools'
 * write it, is exclusive; "exclusive" may be said. */
static void test_read_takes_modes(void **state)
{
    (void)state;
    char buf[1024];
    snprintf(buf, sizeof(buf), "%s%s%s%s", start_line, LINE("ok", ""),
             LINE("ok", ",\"mode\":\"exclusive\""),
             LINE("ok", ",\"mode\":\"permit\",\"permits\":4294967295"));
    struct history h;
    char err[ERR_LEN];
    assert_string_equal(read_text(buf, &h, err), "");
    assert_int_equal(h.n, 3);
    assert_int_equal(h.ev[0].mode, LOCK_MODE_EXCLUSIVE);
    assert_int_equal(h.ev[1].mode, LOCK_MODE_EXCLUSIVE);
    assert_int_equal(h.ev[2].mode, LOCK_MODE_PERMIT);
    assert_int_equal(h.ev[2].permits, 4294967295u);
    history_free(&h);
}
#undef LINE

/* ---- sections ----------------------------------------------------------- */

/* The same owner taking a key it holds again nests a section in the first;
 * each release closes the newest, a crash all of them. */
static void test_reentry_nests_sections(void **state)
{
    (void)state;
    struct history_event e[] = {
        acq(20, 0, HT_OK, LOCK_MODE_SHARED, 0),
        acq(30, 0, HT_OK, LOCK_MODE_SHARED, 0), /* re-entry */
        rel(40, 0),
        rel(50, 0),
        acq(60, 0, HT_OK, LOCK_MODE_EXCLUSIVE, 0),
        acq(70, 0, HT_OK, LOCK_MODE_EXCLUSIVE, 0), /* re-entry */
        ev(80, 0, HT_INFO, HF_CRASH),
        acq(90, 1, HT_OK, LOCK_MODE_PERMIT, 2),
        acq(95, 1, HT_OK, LOCK_MODE_PERMIT, 2), /* a new life: the old one left */
    };
    e[6].seq = HISTORY_NO_SEQ;
    e[8].owner = 2;
    struct history h;
    make_history(&h, e, sizeof(e) / sizeof(e[0]), keys, 1, owners, 3);
    h.end_mono_ns = 100;
    struct section *s;
    struct fault_span *f;
    size_t ns, nf;
    assert_int_equal(history_sections(&h, &s, &ns, &f, &nf), 0);
    assert_int_equal(ns, 6);
    const struct section want[] = {
        {.owner = 0, .mode = LOCK_MODE_SHARED, .from_ns = 20, .to_ns = 50},
        {.owner = 0, .mode = LOCK_MODE_SHARED, .from_ns = 30, .to_ns = 40},
        {.owner = 0, .effect = EFFECT_CRASHED, .from_ns = 60, .to_ns = 80},
        {.owner = 0, .effect = EFFECT_CRASHED, .from_ns = 70, .to_ns = 80},
        {.owner = 1,
         .client = 1,
         .effect = EFFECT_CRASHED,
         .mode = LOCK_MODE_PERMIT,
         .permits = 2,
         .from_ns = 90,
         .to_ns = 95},
        {.owner = 2,
         .client = 1,
         .effect = EFFECT_OPEN,
         .mode = LOCK_MODE_PERMIT,
         .permits = 2,
         .from_ns = 95,
         .to_ns = 100},
    };
    for (size_t i = 0; i < ns; i++)
        assert_section_equal(&s[i], &want[i]);
    free(s);
    free(f);
    history_free(&h);
}

/* ---- a file, checked by mode -------------------------------------------- */

#define OK(t, p, mode)                                                                             \
    "{\"time\":" #t ",\"process\":" #p ",\"type\":\"ok\",\"f\":\"acquire\",\"key\":\"k\","         \
    "\"owner\":\"o" #p "\"" mode "}\n"
#define REL(t, p)                                                                                  \
    "{\"time\":" #t ",\"process\":" #p ",\"type\":\"invoke\",\"f\":\"release\",\"key\":\"k\","     \
    "\"owner\":\"o" #p "\"}\n"
#define SHARED  ",\"mode\":\"shared\""
#define PERMIT2 ",\"mode\":\"permit\",\"permits\":2"

static struct check_result check_text(const char *events)
{
    char buf[4096];
    snprintf(buf, sizeof(buf), "%s%s", start_line, events);
    struct history h;
    char err[ERR_LEN];
    assert_string_equal(read_text(buf, &h, err), "");
    struct section *s;
    struct fault_span *f;
    size_t ns, nf;
    assert_int_equal(history_sections(&h, &s, &ns, &f, &nf), 0);
    struct check_result r;
    assert_int_equal(checker_run(s, ns, f, nf, 0, 10, false, &r), 0);
    free(s);
    free(f);
    history_free(&h);
    return r;
}

static void test_check_a_file_by_mode(void **state)
{
    (void)state;
    /* readers overlapping: nothing */
    struct check_result r = check_text(OK(10, 0, SHARED) OK(20, 1, SHARED) REL(30, 0)
                                           OK(35, 2, SHARED) REL(40, 1) REL(50, 2));
    assert_int_equal(r.sections, 3);
    assert_int_equal(r.violations, 0);
    assert_int_equal(r.concurrent_entries, 0);
    checker_result_free(&r);

    /* a writer entering on two readers: two pairs; the same without modes
     * (an older file) would have been three */
    r = check_text(OK(10, 0, SHARED) OK(20, 1, SHARED) OK(25, 2, "") REL(30, 0) REL(40, 1)
                       REL(50, 2));
    assert_int_equal(r.violations, 2);
    assert_int_equal(r.concurrent_entries, 1);
    assert_int_equal(r.list[0].b, 2);
    checker_result_free(&r);
    r = check_text(OK(10, 0, "") OK(20, 1, "") OK(25, 2, "") REL(30, 0) REL(40, 1) REL(50, 2));
    assert_int_equal(r.violations, 3);
    assert_int_equal(r.concurrent_entries, 2);
    checker_result_free(&r);

    /* three holders of two permits: one, the third with the one leaving first */
    r = check_text(OK(10, 0, PERMIT2) OK(20, 1, PERMIT2) OK(25, 2, PERMIT2) REL(30, 1) REL(40, 0)
                       REL(50, 2));
    assert_int_equal(r.violations, 1);
    assert_int_equal(r.concurrent_entries, 1);
    assert_int_equal(r.list[0].a, 1);
    assert_int_equal(r.list[0].b, 2);
    assert_int_equal(r.list[0].overlap_ns, 5);
    checker_result_free(&r);
}

/* ---- the examples of docs/history.md ------------------------------------ */

/* Two readers share the report, then a writer takes it and re-enters it
 * (the re-entry is no new holder to the witness: no seq). */
static const char rw_jsonl[] =
    "{\"type\":\"start\",\"locklab\":1,\"mono_ns\":1000,\"wall_ns\":1700000000000000000,"
    "\"scenario\":\"report_cache\",\"algorithm\":\"redisson-rw\",\"clients\":3,\"seed\":42}\n"
    "{\"time\":1050,\"process\":0,\"type\":\"invoke\",\"f\":\"acquire\",\"key\":\"report\","
    "\"owner\":\"r1:0:0\",\"mode\":\"shared\"}\n"
    "{\"time\":1100,\"process\":0,\"type\":\"ok\",\"f\":\"acquire\",\"key\":\"report\","
    "\"owner\":\"r1:0:0\",\"mode\":\"shared\",\"seq\":0}\n"
    "{\"time\":1150,\"process\":1,\"type\":\"ok\",\"f\":\"acquire\",\"key\":\"report\","
    "\"owner\":\"r1:1:0\",\"mode\":\"shared\",\"seq\":1}\n"
    "{\"time\":1200,\"process\":0,\"type\":\"invoke\",\"f\":\"release\",\"key\":\"report\","
    "\"owner\":\"r1:0:0\",\"seq\":2,\"effect\":\"none\"}\n"
    "{\"time\":1250,\"process\":1,\"type\":\"invoke\",\"f\":\"release\",\"key\":\"report\","
    "\"owner\":\"r1:1:0\",\"seq\":3,\"effect\":\"none\"}\n"
    "{\"time\":1300,\"process\":2,\"type\":\"ok\",\"f\":\"acquire\",\"key\":\"report\","
    "\"owner\":\"r1:2:0\",\"token\":7,\"seq\":4}\n"
    "{\"time\":1350,\"process\":2,\"type\":\"ok\",\"f\":\"acquire\",\"key\":\"report\","
    "\"owner\":\"r1:2:0\",\"token\":7}\n"
    "{\"time\":1400,\"process\":2,\"type\":\"invoke\",\"f\":\"release\",\"key\":\"report\","
    "\"owner\":\"r1:2:0\",\"effect\":\"applied\"}\n"
    "{\"time\":1450,\"process\":2,\"type\":\"invoke\",\"f\":\"release\",\"key\":\"report\","
    "\"owner\":\"r1:2:0\",\"seq\":5,\"effect\":\"applied\"}\n"
    "{\"type\":\"end\",\"mono_ns\":2000,\"complete\":true,\"dropped\":0}\n";

/* Three holders of a pool of two permits, never more than two at once. */
static const char semaphore_jsonl[] =
    "{\"type\":\"start\",\"locklab\":1,\"mono_ns\":1000,\"wall_ns\":1700000000000000000,"
    "\"scenario\":\"pool\",\"algorithm\":\"redisson-semaphore\",\"clients\":3,\"seed\":42}\n"
    "{\"time\":1100,\"process\":0,\"type\":\"ok\",\"f\":\"acquire\",\"key\":\"pool\","
    "\"owner\":\"r1:0:0\",\"mode\":\"permit\",\"permits\":2,\"seq\":0}\n"
    "{\"time\":1150,\"process\":1,\"type\":\"ok\",\"f\":\"acquire\",\"key\":\"pool\","
    "\"owner\":\"r1:1:0\",\"mode\":\"permit\",\"permits\":2,\"seq\":1}\n"
    "{\"time\":1200,\"process\":0,\"type\":\"invoke\",\"f\":\"release\",\"key\":\"pool\","
    "\"owner\":\"r1:0:0\",\"seq\":2,\"effect\":\"applied\"}\n"
    "{\"time\":1200,\"process\":2,\"type\":\"ok\",\"f\":\"acquire\",\"key\":\"pool\","
    "\"owner\":\"r1:2:0\",\"mode\":\"permit\",\"permits\":2,\"seq\":3}\n"
    "{\"time\":1300,\"process\":1,\"type\":\"invoke\",\"f\":\"release\",\"key\":\"pool\","
    "\"owner\":\"r1:1:0\",\"seq\":4,\"effect\":\"applied\"}\n"
    "{\"time\":1350,\"process\":2,\"type\":\"invoke\",\"f\":\"release\",\"key\":\"pool\","
    "\"owner\":\"r1:2:0\",\"seq\":5,\"effect\":\"applied\"}\n"
    "{\"type\":\"end\",\"mono_ns\":2000,\"complete\":true,\"dropped\":0}\n";

static void doc_history(struct history *h, const struct history_event *e, size_t n, const char *key,
                        const char *scenario, const char *algorithm)
{
    const char *const names[] = {"r1:0:0", "r1:1:0", "r1:2:0"};
    make_history(h, e, n, &key, 1, names, 3);
    h->start_mono_ns = 1000;
    h->start_wall_ns = 1700000000000000000ULL;
    h->end_mono_ns = 2000;
    h->complete = true;
    h->clients = 3;
    h->seed = 42;
    snprintf(h->scenario, sizeof(h->scenario), "%s", scenario);
    snprintf(h->algorithm, sizeof(h->algorithm), "%s", algorithm);
}

static struct history_event with(struct history_event e, uint64_t seq, uint64_t token)
{
    e.seq = seq;
    e.token = token;
    return e;
}

static struct history_event released(uint64_t t, uint32_t client, uint64_t seq, uint8_t effect)
{
    struct history_event e = rel(t, client);
    e.seq = seq;
    e.arg = effect;
    return e;
}

/* The writer writes them byte for byte, and the check finds them safe. */
static void test_doc_examples(void **state)
{
    (void)state;
    const struct history_event rw[] = {
        acq(1050, 0, HT_INVOKE, LOCK_MODE_SHARED, 0),
        with(acq(1100, 0, HT_OK, LOCK_MODE_SHARED, 0), 0, 0),
        with(acq(1150, 1, HT_OK, LOCK_MODE_SHARED, 0), 1, 0),
        released(1200, 0, 2, EFFECT_NONE),
        released(1250, 1, 3, EFFECT_NONE),
        with(acq(1300, 2, HT_OK, LOCK_MODE_EXCLUSIVE, 0), 4, 7),
        with(acq(1350, 2, HT_OK, LOCK_MODE_EXCLUSIVE, 0), HISTORY_NO_SEQ, 7),
        released(1400, 2, HISTORY_NO_SEQ, EFFECT_APPLIED),
        released(1450, 2, 5, EFFECT_APPLIED),
    };
    const struct history_event sem[] = {
        with(acq(1100, 0, HT_OK, LOCK_MODE_PERMIT, 2), 0, 0),
        with(acq(1150, 1, HT_OK, LOCK_MODE_PERMIT, 2), 1, 0),
        released(1200, 0, 2, EFFECT_APPLIED),
        with(acq(1200, 2, HT_OK, LOCK_MODE_PERMIT, 2), 3, 0),
        released(1300, 1, 4, EFFECT_APPLIED),
        released(1350, 2, 5, EFFECT_APPLIED),
    };
    struct history h;
    doc_history(&h, rw, sizeof(rw) / sizeof(rw[0]), "report", "report_cache", "redisson-rw");
    char *text = jsonl_of(&h);
    assert_string_equal(text, rw_jsonl);
    free(text);
    history_free(&h);
    doc_history(&h, sem, sizeof(sem) / sizeof(sem[0]), "pool", "pool", "redisson-semaphore");
    text = jsonl_of(&h);
    assert_string_equal(text, semaphore_jsonl);
    free(text);
    history_free(&h);

    const char *const files[] = {rw_jsonl, semaphore_jsonl};
    const uint64_t sections[] = {4, 3};
    for (size_t i = 0; i < 2; i++) {
        char err[ERR_LEN];
        assert_string_equal(read_text(files[i], &h, err), "");
        struct section *s;
        struct fault_span *f;
        size_t ns, nf;
        assert_int_equal(history_sections(&h, &s, &ns, &f, &nf), 0);
        struct check_result r;
        assert_int_equal(checker_run(s, ns, f, nf, 0, 10, false, &r), 0);
        assert_int_equal(r.sections, sections[i]);
        assert_int_equal(r.overlaps, 0);
        assert_int_equal(r.concurrent_entries, 0);
        checker_result_free(&r);
        free(s);
        free(f);
        history_free(&h);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_write_modes),
        cmocka_unit_test(test_write_refuses_what_cannot_be_read),
        cmocka_unit_test(test_read_refuses_bad_modes),
        cmocka_unit_test(test_read_takes_modes),
        cmocka_unit_test(test_reentry_nests_sections),
        cmocka_unit_test(test_check_a_file_by_mode),
        cmocka_unit_test(test_doc_examples),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
