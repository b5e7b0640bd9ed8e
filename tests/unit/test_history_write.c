/* test_history_write.c - the history writer: per-thread buffers and their
 * merge, the JSON-lines file it writes, and that file read back the same
 * (events, notes, host stalls, sections).
 *
 * The file format is pinned by one history compared line by line with the
 * text docs/history.md shows (small_jsonl, which tests/runs/test_docs.py
 * finds here); the reader is pinned by a round trip of a history holding
 * every kind of event.
 *
 * The histories made by hand and the files written and read back go
 * through tests/lib/history_make.h.
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
#include <unistd.h>

#include "algorithms/lock.h"
#include "sim/check/sections.h"
#include "sim/check/stalls.h"
#include "sim/record/history.h"
#include "sim/record/history_reader.h"
#include "tests/lib/history_make.h"

#define CHUNK 4096 /* history.c's largest chunk; the tests cross several */

/* ---- buffers and merge -------------------------------------------------- */

static void test_append_across_chunks(void **state)
{
    (void)state;
    size_t n = 3 * CHUNK + 5;
    struct history_buf *b = history_buf_new();
    assert_non_null(b);
    assert_int_equal(history_buf_len(b), 0);
    for (size_t i = 0; i < n; i++) {
        struct history_event e = ev(1000 + i, 0, HT_OK, HF_RENEW);
        e.seq = i;
        assert_int_equal(history_append(b, &e), 0);
    }
    assert_int_equal(history_buf_len(b), n);
    assert_int_equal(history_buf_dropped(b), 0);

    struct history h;
    assert_int_equal(history_merge(&h, &b, 1, &(struct history_names){0}), 0);
    assert_int_equal(h.n, n);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(h.ev[i].t_ns, 1000 + i);
        assert_int_equal(h.ev[i].seq, i);
    }
    history_free(&h);
    history_buf_free(b);
    history_buf_free(NULL);
}

/* Three threads' buffers (passed in no particular order): one time order,
 * equal times by client, equal (time, client) in recording order. */
static void test_merge_three_buffers(void **state)
{
    (void)state;
    static const uint64_t times[3][4] = {{10, 20, 30, 30}, {10, 15, 30, 0}, {5, 20, 20, 0}};
    static const size_t lens[3] = {4, 3, 3};
    struct history_buf *b[3];
    for (uint32_t c = 0; c < 3; c++) {
        b[c] = history_buf_new();
        assert_non_null(b[c]);
        for (size_t i = 0; i < lens[c]; i++) {
            struct history_event e = ev(times[c][i], c, HT_OK, HF_RENEW);
            e.seq = 10 * c + i; /* where it came from */
            history_append(b[c], &e);
        }
    }
    struct history_buf *order[3] = {b[2], b[0], b[1]};
    const char *keys[] = {"k0", "k1"}, *owners[] = {"o0"};
    struct history h;
    assert_int_equal(history_merge(&h, order, 3,
                                   &(struct history_names){
                                       .keys = keys, .n_keys = 2, .owners = owners, .n_owners = 1}),
                     0);

    static const uint64_t want_seq[] = {20, 0, 10, 11, 1, 21, 22, 2, 3, 12};
    assert_int_equal(h.n, 10);
    for (size_t i = 0; i < 10; i++)
        assert_int_equal(h.ev[i].seq, want_seq[i]);
    assert_int_equal(h.n_keys, 2);
    assert_string_equal(h.keys[1], "k1");
    assert_ptr_not_equal(h.keys[1], keys[1]); /* copied */
    assert_int_equal(h.n_owners, 1);
    assert_string_equal(h.owners[0], "o0");
    history_free(&h);
    for (int c = 0; c < 3; c++)
        history_buf_free(b[c]);
}

/* Equal time and client in two buffers: the order the buffers were given. */
static void test_merge_ties_keep_buffer_order(void **state)
{
    (void)state;
    struct history_buf *b[2] = {history_buf_new(), history_buf_new()};
    for (uint64_t i = 0; i < 2; i++) {
        struct history_event e = ev(10, 5, HT_OK, HF_RENEW);
        e.seq = i;
        history_append(b[i], &e);
    }
    struct history h;
    assert_int_equal(history_merge(&h, b, 2, &(struct history_names){0}), 0);
    assert_int_equal(h.ev[0].seq, 0);
    assert_int_equal(h.ev[1].seq, 1);
    history_free(&h);
    struct history_buf *swapped[2] = {b[1], b[0]};
    assert_int_equal(history_merge(&h, swapped, 2, &(struct history_names){0}), 0);
    assert_int_equal(h.ev[0].seq, 1);
    assert_int_equal(h.ev[1].seq, 0);
    history_free(&h);
    history_buf_free(b[0]);
    history_buf_free(b[1]);
}

/* A thread that logged an older time than its previous event still ends
 * up in time order, and equal times keep their recording order. */
static void test_merge_out_of_order_buffer(void **state)
{
    (void)state;
    static const uint64_t times[] = {50, 40, 40, 60, 10};
    struct history_buf *b = history_buf_new();
    for (size_t i = 0; i < 5; i++) {
        struct history_event e = ev(times[i], 0, HT_OK, HF_RENEW);
        e.seq = i;
        history_append(b, &e);
    }
    struct history h;
    assert_int_equal(history_merge(&h, &b, 1, &(struct history_names){0}), 0);
    static const uint64_t want[] = {4, 1, 2, 0, 3};
    for (size_t i = 0; i < 5; i++)
        assert_int_equal(h.ev[i].seq, want[i]);
    history_free(&h);
    history_buf_free(b);
}

/* ---- the file, written ---------------------------------------------------- */

static const char *const small_keys[] = {"lock:stock:0"};
static const char *const small_owners[] = {"r1:0:0", "r1:1:0"};

static void small_history(struct history *h)
{
    struct history_event e[10] = {
        ev(1100, 0, HT_INVOKE, HF_ACQUIRE), ev(1200, 0, HT_OK, HF_ACQUIRE),
        ev(1300, 1, HT_FAIL, HF_ACQUIRE),   ev(1350, 1, HT_INFO, HF_FAULT),
        ev(1400, 0, HT_INVOKE, HF_RELEASE), ev(1450, HISTORY_HOST, HT_INFO, HF_STALL),
        ev(1500, 0, HT_OK, HF_RELEASE),     ev(1600, 1, HT_INFO, HF_FAULT),
    };
    e[1].token = 7;
    e[1].seq = 0;
    e[2].owner = 1;
    e[2].arg = HE_BUSY;
    e[3] = fault(1350, 1, 0, 0);
    e[4].seq = 1;
    e[4].arg = EFFECT_APPLIED;
    e[5].end_ns = 1480; /* the host stopped the testbed meanwhile */
    e[5].key = e[5].owner = UINT32_MAX;
    e[7] = fault(1600, 1, 0, 1);
    /* the scenario's second fault kills redis-3 and brings it back */
    for (int i = 0; i < 2; i++) {
        e[8 + i] = fault(1700 + 200 * (uint64_t)i, HISTORY_SERVERS, KIND_KILL, (uint8_t)i);
        e[8 + i].key = 1;
        e[8 + i].owner = 0;
        e[8 + i].seq = 1 + (uint64_t)i;
    }
    make_history(h, e, 10, small_keys, 1, small_owners, 2);
    static const char *const notes[] = {"redis-3", "SIGKILL redis-3 (pid 4242)",
                                        "redis-3 back on port 40001 as pid 4300, data lost"};
    free(h->notes); /* history_merge's empty table */
    h->notes = calloc(3, sizeof(*h->notes));
    assert_non_null(h->notes);
    for (size_t i = 0; i < 3; i++)
        h->notes[i] = strdup(notes[i]);
    h->n_notes = 3;
    h->start_mono_ns = 1000;
    h->start_wall_ns = 1700000000000000000ULL;
    h->end_mono_ns = 2000;
    h->complete = true;
    snprintf(h->scenario, sizeof(h->scenario), "flash_sale");
    snprintf(h->algorithm, sizeof(h->algorithm), "redis");
    h->clients = 2;
    h->seed = 42;
}

static const char small_jsonl[] =
    "{\"type\":\"start\",\"locklab\":1,\"mono_ns\":1000,\"wall_ns\":1700000000000000000,"
    "\"scenario\":\"flash_sale\",\"algorithm\":\"redis\",\"clients\":2,\"seed\":42}\n"
    "{\"time\":1100,\"process\":0,\"type\":\"invoke\",\"f\":\"acquire\",\"key\":\"lock:stock:0\","
    "\"owner\":\"r1:0:0\"}\n"
    "{\"time\":1200,\"process\":0,\"type\":\"ok\",\"f\":\"acquire\",\"key\":\"lock:stock:0\","
    "\"owner\":\"r1:0:0\",\"token\":7,\"seq\":0}\n"
    "{\"time\":1300,\"process\":1,\"type\":\"fail\",\"f\":\"acquire\",\"key\":\"lock:stock:0\","
    "\"owner\":\"r1:1:0\",\"error\":\"busy\"}\n"
    "{\"time\":1350,\"process\":\"nemesis\",\"type\":\"info\",\"f\":\"client_pause\","
    "\"value\":\"start\",\"fault\":0,\"target\":1}\n"
    "{\"time\":1400,\"process\":0,\"type\":\"invoke\",\"f\":\"release\",\"key\":\"lock:stock:0\","
    "\"owner\":\"r1:0:0\",\"seq\":1,\"effect\":\"applied\"}\n"
    "{\"time\":1450,\"process\":\"host\",\"type\":\"info\",\"f\":\"stall\",\"end\":1480}\n"
    "{\"time\":1500,\"process\":0,\"type\":\"ok\",\"f\":\"release\",\"key\":\"lock:stock:0\","
    "\"owner\":\"r1:0:0\"}\n"
    "{\"time\":1600,\"process\":\"nemesis\",\"type\":\"info\",\"f\":\"client_pause\","
    "\"value\":\"end\",\"fault\":0,\"target\":1}\n"
    "{\"time\":1700,\"process\":\"nemesis\",\"type\":\"info\",\"f\":\"kill\",\"value\":\"start\","
    "\"fault\":1,\"target\":\"redis-3\",\"detail\":\"SIGKILL redis-3 (pid 4242)\"}\n"
    "{\"time\":1900,\"process\":\"nemesis\",\"type\":\"info\",\"f\":\"kill\",\"value\":\"end\","
    "\"fault\":1,\"target\":\"redis-3\",\"detail\":\"redis-3 back on port 40001 as pid 4300, "
    "data lost\"}\n"
    "{\"type\":\"end\",\"mono_ns\":2000,\"complete\":true,\"dropped\":0}\n";

static void test_write_known_text(void **state)
{
    (void)state;
    struct history h;
    small_history(&h);
    char *text = jsonl_of(&h);
    assert_string_equal(text, small_jsonl);
    free(text);
    history_free(&h);
}

/* Keys and owners are user data: quotes, backslashes, control bytes. */
static void test_write_escapes_strings(void **state)
{
    (void)state;
    const char *keys[] = {"a\"b\\c\n\x01"}, *owners[] = {"\t"};
    struct history_event e = ev(5, 3, HT_OK, HF_RENEW);
    struct history h;
    make_history(&h, &e, 1, keys, 1, owners, 1);
    char *text = jsonl_of(&h);
    assert_non_null(strstr(text, "\"key\":\"a\\\"b\\\\c\\n\\u0001\",\"owner\":\"\\t\"}\n"));
    free(text);
    history_free(&h);
}

static void test_write_to_full_disk_fails(void **state)
{
    (void)state;
    struct history h;
    small_history(&h);
    FILE *f = fopen("/dev/full", "w");
    assert_non_null(f);
    errno = 0;
    assert_int_equal(history_write_jsonl(&h, f), -1);
    assert_int_equal(errno, ENOSPC);
    fclose(f);
    history_free(&h);
}

/* An event the format has no words for is refused, not written wrong. */
static void test_write_refuses_unknown_values(void **state)
{
    (void)state;
    struct history_event e = ev(5, 0, HT_INVOKE, HF_RELEASE);
    e.arg = EFFECT_COUNT;
    struct history h;
    make_history(&h, &e, 1, small_keys, 1, small_owners, 1);
    FILE *f = fopen("/dev/null", "w");
    assert_int_equal(history_write_jsonl(&h, f), -1);
    assert_int_equal(errno, EINVAL);
    fclose(f);
    history_free(&h);
}

/* ---- the file, read back -------------------------------------------------- */

/* A process fault: its servers and what it did travel as notes, its index
 * pairs start and end, and the span names the servers. */
static void test_server_fault_round_trip(void **state)
{
    (void)state;
    const char *notes[] = {"redis-2", "SIGKILL redis-2 (pid 7)",
                           "redis-2 back on port 6001 as pid 8, data lost"};
    struct history_event e[2];
    for (int i = 0; i < 2; i++) {
        e[i] = ev(100 + 50 * (uint64_t)i, HISTORY_SERVERS, HT_INFO, HF_FAULT);
        e[i].arg = KIND_KILL;
        e[i].arg2 = (uint8_t)i;
        e[i].key = 3;
        e[i].owner = 0;
        e[i].seq = 1 + (uint64_t)i;
    }
    struct history_buf *b = history_buf_new();
    for (int i = 0; i < 2; i++)
        assert_int_equal(history_append(b, &e[i]), 0);
    struct history w;
    assert_int_equal(
        history_merge(&w, &b, 1, &(struct history_names){.notes = notes, .n_notes = 3}), 0);
    history_buf_free(b);
    w.end_mono_ns = 200;
    struct history r;
    char *text = written_and_read(&w, &r);
    assert_non_null(strstr(text, "{\"time\":100,\"process\":\"nemesis\",\"type\":\"info\",\"f\":"
                                 "\"kill\",\"value\":\"start\",\"fault\":3,\"target\":\"redis-2\","
                                 "\"detail\":\"SIGKILL redis-2 (pid 7)\"}\n"));
    free(text);
    assert_int_equal(r.n, 2);
    for (size_t i = 0; i < 2; i++)
        assert_event_equal(&r.ev[i], &w.ev[i]);
    assert_int_equal(r.n_notes, 3);
    for (size_t i = 0; i < 3; i++)
        assert_string_equal(r.notes[i], notes[i]);
    struct section *sec;
    struct fault_span *fs;
    size_t ns, nf;
    assert_int_equal(history_sections(&r, &sec, &ns, &fs, &nf), 0);
    assert_int_equal(ns, 0);
    assert_int_equal(nf, 1);
    assert_int_equal(fs[0].type, KIND_KILL);
    assert_int_equal(fs[0].client, -1);
    assert_int_equal(fs[0].fault, 3);
    assert_int_equal(fs[0].servers, 0);
    assert_int_equal(fs[0].from_ns, 100);
    assert_int_equal(fs[0].to_ns, 150);
    free(sec);
    free(fs);
    history_free(&r);
    history_free(&w);
}

/* A host stall: written as the host's line with its end, read back the
 * same, listed by history_stalls; the start line carries the slack and
 * says the meter ran. */
static void test_stall_round_trip(void **state)
{
    (void)state;
    struct history_event e = ev(100, HISTORY_HOST, HT_INFO, HF_STALL);
    e.end_ns = 350;
    e.key = e.owner = UINT32_MAX;
    struct history_buf *b = history_buf_new();
    assert_int_equal(history_append(b, &e), 0);
    struct history w;
    assert_int_equal(history_merge(&w, &b, 1, &(struct history_names){0}), 0);
    history_buf_free(b);
    w.end_mono_ns = 400;
    w.slack_ms = 200;
    w.metered = true;
    struct history r;
    char *text = written_and_read(&w, &r);
    assert_non_null(strstr(text, ",\"slack_ms\":200,\"stall_floor_ms\":10}\n"));
    assert_non_null(strstr(
        text,
        "{\"time\":100,\"process\":\"host\",\"type\":\"info\",\"f\":\"stall\",\"end\":350}\n"));
    free(text);
    assert_int_equal(r.n, 1);
    assert_event_equal(&r.ev[0], &w.ev[0]);
    assert_int_equal(r.ev[0].end_ns, 350);
    assert_int_equal(r.slack_ms, 200);
    assert_true(r.metered);
    struct host_stall *st;
    size_t n;
    assert_int_equal(history_stalls(&r, 0, &st, &n), 0);
    assert_int_equal(n, 1);
    assert_int_equal(st[0].from_ns, 100);
    assert_int_equal(st[0].to_ns, 350);
    free(st);
    history_free(&r);
    history_free(&w);
}

/* A stall in which a client still logged something was the meter's
 * thread alone being late, not the process stopped: what is left is its
 * longest stretch with no event, kept when at least min_ns long. */
static void test_stalls_cut_at_other_threads_events(void **state)
{
    (void)state;
    struct history_event e[5] = {
        ev(100, HISTORY_HOST, HT_INFO, HF_STALL),
        ev(120, 0, HT_INVOKE, HF_ACQUIRE),
        ev(170, 1, HT_OK, HF_RENEW),
        ev(300, HISTORY_HOST, HT_INFO, HF_STALL),
        ev(330, 0, HT_OK, HF_ACQUIRE),
    };
    e[0].end_ns = 200;
    e[3].end_ns = 310; /* ends before the next event: whole */
    struct history h;
    make_history(&h, e, 5, small_keys, 1, small_owners, 2);
    struct host_stall *st;
    size_t n;
    assert_int_equal(history_stalls(&h, 10, &st, &n), 0);
    assert_int_equal(n, 2);
    assert_int_equal(st[0].from_ns, 120); /* of 100..120, 120..170, 170..200 */
    assert_int_equal(st[0].to_ns, 170);
    assert_int_equal(st[1].from_ns, 300);
    assert_int_equal(st[1].to_ns, 310);
    free(st);
    assert_int_equal(history_stalls(&h, 11, &st, &n), 0);
    assert_int_equal(n, 1);
    assert_int_equal(st[0].to_ns - st[0].from_ns, 50);
    free(st);
    history_free(&h);
}

/* A long run on a busy host logs a stall line every few seconds, most of
 * them cut short by other threads' events: those are dropped as they end,
 * and the ones kept come out in order, the last one still on at the end
 * of the history (cut there) or over before it. */
static void stalls_one_in_three_cut_short(bool last_on)
{
    enum { STALLS = 1001 };
    static struct history_event e[3 * STALLS];
    size_t n = 0;
    for (uint64_t i = 0; i < STALLS; i++) {
        uint64_t t = 1000 * i + 100;
        e[n] = ev(t, HISTORY_HOST, HT_INFO, HF_STALL);
        e[n++].end_ns = t + 50;
        if (i % 3 == 0) /* its quiet part 40 */
            e[n++] = ev(t + 10, 0, HT_OK, HF_RENEW);
        else if (i % 3 == 1) /* 48 */
            e[n++] = ev(t + 2, 0, HT_OK, HF_RENEW);
        if (i + 1 < STALLS || !last_on)
            e[n++] = ev(t + 60, 0, HT_OK, HF_RENEW);
    }
    /* held: the stalls kept so far, and the one on */
    struct stalls *s = stalls_begin(45);
    assert_non_null(s);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(stalls_event(s, &e[i]), 0);
    assert_int_equal(stalls_held(s), 667);
    struct host_stall *st;
    size_t m;
    assert_int_equal(stalls_end(s, &st, &m), 0);
    assert_int_equal(m, 667);
    free(st);
    struct history h;
    make_history(&h, e, n, small_keys, 1, small_owners, 2);
    assert_int_equal(history_stalls(&h, 45, &st, &m), 0);
    assert_int_equal(m, 667);
    for (uint64_t i = 0, j = 0; i < STALLS; i++) {
        uint64_t t = 1000 * i + 100;
        if (i % 3 == 0)
            continue;
        assert_int_equal(st[j].from_ns, i % 3 == 1 ? t + 2 : t);
        assert_int_equal(st[j].to_ns, t + 50);
        j++;
    }
    free(st);
    history_free(&h);
}

static void test_stalls_cut_short_are_dropped_as_they_end(void **state)
{
    (void)state;
    stalls_one_in_three_cut_short(true);
    stalls_one_in_three_cut_short(false);
}

static void test_round_trip(void **state)
{
    (void)state;
    /* ids in order of first appearance, as the reader interns them */
    const char *keys[] = {"k\"1", "k\\2"}, *owners[] = {"o1", "o2", "o3"};
    struct history_event e[] = {
        ev(10, 0, HT_INVOKE, HF_ACQUIRE),
        ev(11, 0, HT_OK, HF_ACQUIRE),
        ev(12, 1, HT_INVOKE, HF_ACQUIRE),
        ev(13, 1, HT_FAIL, HF_ACQUIRE),
        ev(14, 2, HT_INVOKE, HF_ACQUIRE),
        ev(15, 2, HT_INFO, HF_ACQUIRE),
        ev(16, 0, HT_OK, HF_RENEW),
        ev(17, 0, HT_FAIL, HF_RENEW),
        ev(18, 0, HT_INFO, HF_RENEW),
        fault(19, 0, 0, 0),
        fault(20, 0, 0, 1),
        ev(21, 0, HT_INVOKE, HF_RELEASE),
        ev(22, 0, HT_FAIL, HF_RELEASE),
        ev(23, 1, HT_OK, HF_ACQUIRE),
        fault(24, 1, 1, 0),
        ev(24, 1, HT_INFO, HF_CRASH),
        ev(30, 2, HT_OK, HF_ACQUIRE),
        ev(31, 2, HT_INVOKE, HF_RELEASE),
        ev(32, 2, HT_INFO, HF_RELEASE),
        ev(33, 2, HT_OK, HF_ACQUIRE),
        ev(34, 1, HT_INFO, HF_LINK),
        ev(35, 1, HT_INFO, HF_LINK),
    };
    size_t n = sizeof(e) / sizeof(e[0]);
    for (size_t i = 0; i < n; i++)
        if (e[i].f != HF_FAULT) {
            e[i].owner = e[i].client;
            e[i].key = e[i].client == 2;
        }
    e[1].token = 99, e[1].seq = 0;
    e[3].arg = HE_BUSY;
    e[5].arg = HE_ERROR;
    e[7].arg = HE_LOST;
    e[8].arg = HE_ERROR;
    e[11].seq = 1, e[11].arg = EFFECT_FENCED;
    e[12].arg = HE_LOST;
    e[13].seq = 2;
    e[15].seq = HISTORY_NO_SEQ; /* a crash whose sequence nobody knew */
    e[16].seq = 0, e[16].token = 1ULL << 62;
    e[17].seq = 1, e[17].arg = EFFECT_NONE;
    e[18].arg = HE_ERROR;
    e[19].seq = HISTORY_NO_SEQ;         /* still open, sequence unknown */
    e[20].key = e[21].key = UINT32_MAX; /* a link event has no key */
    e[20].arg = LOCK_LINK_CONNECTING;
    e[21].arg = LOCK_LINK_EXPIRED;

    struct history w;
    make_history(&w, e, n, keys, 2, owners, 3);
    w.start_mono_ns = 1;
    w.start_wall_ns = 2;
    w.end_mono_ns = 40;
    w.complete = false;
    w.dropped = 3;
    snprintf(w.scenario, sizeof(w.scenario), "s \"quoted\"");
    snprintf(w.algorithm, sizeof(w.algorithm), "redlock");
    w.clients = 3;
    w.seed = 1ULL << 63 >> 1;
    char path[PATH_LEN];
    write_file(path, "");
    FILE *f = fopen(path, "w");
    assert_int_equal(history_write_jsonl(&w, f), 0);
    assert_int_equal(fclose(f), 0);

    struct history r;
    char err[ERR_LEN];
    assert_int_equal(history_read_file(path, &r, err, sizeof(err)), 0);
    unlink(path);
    assert_int_equal(r.n, n);
    for (size_t i = 0; i < n; i++)
        assert_event_equal(&r.ev[i], &w.ev[i]);
    assert_int_equal(r.n_keys, 2);
    assert_int_equal(r.n_owners, 3);
    for (size_t i = 0; i < 2; i++)
        assert_string_equal(r.keys[i], keys[i]);
    for (size_t i = 0; i < 3; i++)
        assert_string_equal(r.owners[i], owners[i]);
    assert_int_equal(r.start_mono_ns, 1);
    assert_int_equal(r.start_wall_ns, 2);
    assert_int_equal(r.end_mono_ns, 40);
    assert_false(r.complete);
    assert_int_equal(r.dropped, 3);
    assert_string_equal(r.scenario, "s \"quoted\"");
    assert_string_equal(r.algorithm, "redlock");
    assert_int_equal(r.clients, 3);
    assert_int_equal(r.seed, 1ULL << 62);
    history_free(&r);
    history_free(&w);
}

/* Read back, the same sections come out: the offline check of a file and
 * the check at the end of a run see the same thing. */
static void test_sections_of_file_match(void **state)
{
    (void)state;
    struct history w, r;
    small_history(&w);
    char path[PATH_LEN], err[ERR_LEN];
    write_file(path, small_jsonl);
    assert_int_equal(history_read_file(path, &r, err, sizeof(err)), 0);
    unlink(path);
    struct section *s1, *s2;
    struct fault_span *f1, *f2;
    size_t n1, n2, m1, m2;
    assert_int_equal(history_sections(&w, &s1, &n1, &f1, &m1), 0);
    assert_int_equal(history_sections(&r, &s2, &n2, &f2, &m2), 0);
    assert_int_equal(n1, 1);
    assert_int_equal(n2, 1);
    assert_section_equal(&s1[0], &s2[0]);
    assert_int_equal(s2[0].token, 7);
    assert_int_equal(s2[0].from_ns, 1200);
    assert_int_equal(s2[0].to_ns, 1400);
    assert_int_equal(m1, 2);
    assert_int_equal(m2, 2);
    for (size_t i = 0; i < 2; i++) {
        assert_int_equal(f1[i].type, f2[i].type);
        assert_int_equal(f1[i].client, f2[i].client);
        assert_int_equal(f1[i].fault, f2[i].fault);
        assert_int_equal(f1[i].servers, f2[i].servers);
        assert_int_equal(f1[i].from_ns, f2[i].from_ns);
        assert_int_equal(f1[i].to_ns, f2[i].to_ns);
    }
    assert_int_equal(f2[1].type, KIND_KILL);
    assert_int_equal(f2[1].client, -1);
    assert_string_equal(r.notes[f2[1].servers], "redis-3");
    assert_int_equal(f2[1].from_ns, 1700);
    assert_int_equal(f2[1].to_ns, 1900);
    free(s1);
    free(s2);
    free(f1);
    free(f2);
    history_free(&w);
    history_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_append_across_chunks),
        cmocka_unit_test(test_merge_three_buffers),
        cmocka_unit_test(test_merge_ties_keep_buffer_order),
        cmocka_unit_test(test_merge_out_of_order_buffer),
        cmocka_unit_test(test_write_known_text),
        cmocka_unit_test(test_write_escapes_strings),
        cmocka_unit_test(test_write_to_full_disk_fails),
        cmocka_unit_test(test_write_refuses_unknown_values),
        cmocka_unit_test(test_stall_round_trip),
        cmocka_unit_test(test_stalls_cut_at_other_threads_events),
        cmocka_unit_test(test_stalls_cut_short_are_dropped_as_they_end),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_server_fault_round_trip),
        cmocka_unit_test(test_sections_of_file_match),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
