/* test_history.c - history buffers, merge, the JSON-lines file both ways,
 * and the sections the checker is fed.
 *
 * The file format is pinned by one history compared line by line with the
 * text docs/history.md shows; the reader is pinned by a round trip of a
 * history holding every kind of event, and by its error messages.
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

#include "sim/check/availability.h"
#include "sim/check/stuck.h"
#include "sim/engine/client.h"
#include "sim/engine/run_ctx.h"
#include "sim/record/history.h"
#include "sim/record/latency_timeline.h"
#include "sim/scenario/scenario.h"

/* Kinds by their index in the fault registry, which history files number
 * them by: kill is 2, pause 3 (sim/faults/registry.c). */
#define KIND_KILL  2
#define KIND_PAUSE 3

#define CHUNK 4096 /* history.c's chunk size; the tests cross it */

static struct history_event ev(uint64_t t, uint32_t client, uint8_t type, uint8_t f)
{
    return (struct history_event){.t_ns = t, .client = client, .type = type, .f = f};
}

static struct history_event fault(uint64_t t, uint32_t target, uint8_t kind, uint8_t end)
{
    struct history_event e = ev(t, target, HT_INFO, HF_FAULT);
    e.arg = kind;
    e.arg2 = end;
    e.key = 0; /* the scenario's first fault */
    e.owner = HISTORY_NO_NOTE;
    e.seq = HISTORY_NO_NOTE;
    return e;
}

static void assert_event_equal(const struct history_event *a, const struct history_event *b)
{
    assert_int_equal(a->t_ns, b->t_ns);
    assert_int_equal(a->token, b->token);
    assert_int_equal(a->seq, b->seq);
    assert_int_equal(a->client, b->client);
    assert_int_equal(a->key, b->key);
    assert_int_equal(a->owner, b->owner);
    assert_int_equal(a->type, b->type);
    assert_int_equal(a->f, b->f);
    assert_int_equal(a->arg, b->arg);
    assert_int_equal(a->arg2, b->arg2);
}

static void assert_section_equal(const struct section *a, const struct section *b)
{
    assert_int_equal(a->key, b->key);
    assert_int_equal(a->owner, b->owner);
    assert_int_equal(a->client, b->client);
    assert_int_equal(a->effect, b->effect);
    assert_int_equal(a->has_seq, b->has_seq);
    assert_int_equal(a->token, b->token);
    assert_int_equal(a->from_ns, b->from_ns);
    assert_int_equal(a->to_ns, b->to_ns);
    if (a->has_seq) {
        assert_int_equal(a->seq_from, b->seq_from);
        assert_int_equal(a->seq_to, b->seq_to);
    }
}

/* A history made by hand, owning copies of everything like a merged one. */
static void make_history(struct history *h, const struct history_event *e, size_t n,
                         const char *const *keys, size_t n_keys, const char *const *owners,
                         size_t n_owners)
{
    struct history_buf *b = history_buf_new();
    assert_non_null(b);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(history_append(b, &e[i]), 0);
    assert_int_equal(
        history_merge(h, &b, 1,
                      &(struct history_names){
                          .keys = keys, .n_keys = n_keys, .owners = owners, .n_owners = n_owners}),
        0);
    history_buf_free(b);
}

#define PATH_LEN 32
#define ERR_LEN  256

/* A fresh file holding text; its name goes into path. */
static const char *write_file(char path[PATH_LEN], const char *text)
{
    snprintf(path, PATH_LEN, "/tmp/locklab_hist_XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
    return path;
}

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

/* h as history_write_jsonl writes it; the caller frees it. */
static char *jsonl_of(const struct history *h)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    assert_int_equal(history_write_jsonl(h, f), 0);
    assert_int_equal(fclose(f), 0);
    return text;
}

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

/* Per second: the latency of the acquires granted in it, from their own
 * invoke; nearest-rank percentiles, exact. */
static void test_latency_timeline(void **state)
{
    (void)state;
    const uint64_t ms = 1000000, t0 = 5000 * ms;
    struct history_event e[] = {
        ev(t0 + 100 * ms, 0, HT_INVOKE, HF_ACQUIRE),  ev(t0 + 200 * ms, 0, HT_OK, HF_ACQUIRE),
        ev(t0 + 500 * ms, 1, HT_INVOKE, HF_ACQUIRE),  ev(t0 + 1500 * ms, 1, HT_OK, HF_ACQUIRE),
        ev(t0 + 1600 * ms, 0, HT_INVOKE, HF_ACQUIRE), ev(t0 + 1650 * ms, 0, HT_OK, HF_ACQUIRE),
        ev(t0 + 1700 * ms, 0, HT_INVOKE, HF_ACQUIRE), ev(t0 + 1800 * ms, 0, HT_FAIL, HF_ACQUIRE),
    };
    struct history h;
    make_history(&h, e, sizeof(e) / sizeof(e[0]), NULL, 0, NULL, 0);
    h.start_mono_ns = t0;
    h.clients = 2;
    struct latency_second l[3];
    assert_int_equal(latency_timeline(&h, l, 3), 0);
    assert_int_equal(l[0].count, 1);
    assert_true(l[0].p50_ms == 100.0 && l[0].p99_ms == 100.0 && l[0].max_ms == 100.0);
    assert_int_equal(l[1].count, 2); /* 1000 ms granted at 1.5 s, 50 ms at 1.65 s */
    assert_true(l[1].p50_ms == 50.0 && l[1].p99_ms == 1000.0 && l[1].max_ms == 1000.0);
    assert_int_equal(l[2].count, 0); /* a failed acquire is no grant */
    history_free(&h);
}

static const char *read_text(const char *text, struct history *h, char err[ERR_LEN]);

/* A process fault: its servers and what it did travel as notes, its index
 * pairs start and end, and the span names the servers. */
/* w written, then read back into r: the text, for the caller to look
 * into and free. */
static char *written_and_read(const struct history *w, struct history *r)
{
    char *text = jsonl_of(w);
    char err[ERR_LEN];
    assert_string_equal(read_text(text, r, err), "");
    return text;
}

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
    assert_int_equal(history_read_jsonl(path, &r, err, sizeof(err)), 0);
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

static const char start_line[] = "{\"type\":\"start\",\"locklab\":1,\"mono_ns\":1}\n";

/* What the reader says about text, or "" when it read it. The message
 * names the file; the path is stripped so tests read ":N: what". */
static const char *read_text(const char *text, struct history *h, char err[ERR_LEN])
{
    char path[PATH_LEN];
    err[0] = '\0';
    write_file(path, text);
    int rc = history_read_jsonl(path, h, err, ERR_LEN);
    unlink(path);
    assert_int_equal(rc, err[0] ? -1 : 0);
    if (rc == 0)
        return err;
    assert_int_equal(h->n, 0); /* nothing left behind */
    assert_null(h->ev);
    size_t plen = strlen(path);
    assert_memory_equal(err, path, plen);
    return err + plen;
}

static void assert_read_error(const char *text, const char *want)
{
    struct history h;
    char err[ERR_LEN];
    assert_string_equal(read_text(text, &h, err), want);
}

static void test_read_errors_name_the_line(void **state)
{
    (void)state;
    char buf[1024];
    const char *acq =
        "{\"time\":1,\"process\":0,\"type\":\"invoke\",\"f\":\"acquire\",\"key\":\"k\","
        "\"owner\":\"o\"}\n";

    snprintf(buf, sizeof(buf), "%s%s{\"time\":2,", start_line, acq);
    struct history h;
    char err[ERR_LEN];
    const char *got = read_text(buf, &h, err);
    assert_true(strncmp(got, ":3: bad JSON at column ", 23) == 0);

    snprintf(buf, sizeof(buf),
             "%s{\"time\":1,\"process\":0,\"type\":\"invoke\",\"f\":\"grab\",\"key\":\"k\","
             "\"owner\":\"o\"}\n",
             start_line);
    assert_read_error(buf, ":2: unknown f \"grab\"");

    snprintf(buf, sizeof(buf),
             "%s%s\n{\"time\":2,\"process\":0,\"type\":\"ok\",\"f\":\"acquire\","
             "\"owner\":\"o\"}\n",
             start_line, acq);
    assert_read_error(buf, ":4: missing \"key\"");

    assert_read_error(acq, ":1: expected the start line, {\"type\":\"start\",...}");
    assert_read_error("", ":1: no start line (empty file)");
    assert_read_error("{\"type\":\"start\",\"locklab\":2,\"mono_ns\":1}\n",
                      ":1: unsupported \"locklab\" version 2 (this reader knows 1)");

    snprintf(buf, sizeof(buf), "%s{\"time\":1,\"process\":0,\"type\":\"done\"}\n", start_line);
    assert_read_error(buf, ":2: unknown type \"done\"");
    snprintf(buf, sizeof(buf),
             "%s{\"time\":1,\"process\":0,\"type\":\"invoke\",\"f\":\"release\",\"key\":\"k\","
             "\"owner\":\"o\",\"effect\":\"lost\"}\n",
             start_line);
    assert_read_error(buf, ":2: unknown effect \"lost\"");
    snprintf(buf, sizeof(buf),
             "%s{\"time\":1,\"process\":0,\"type\":\"fail\",\"f\":\"acquire\",\"key\":\"k\","
             "\"owner\":\"o\",\"error\":\"timeout\"}\n",
             start_line);
    assert_read_error(buf, ":2: unknown error \"timeout\"");
    snprintf(buf, sizeof(buf),
             "%s{\"time\":1,\"process\":\"nemesis\",\"type\":\"info\",\"f\":\"partition\","
             "\"value\":\"start\",\"target\":0}\n",
             start_line);
    assert_read_error(buf, ":2: unknown f \"partition\"");
    /* host stalls: each line after the start line, and the error it earns */
#define STALL(t, e, f)                                                                             \
    "{\"time\":" #t ",\"process\":\"host\",\"type\":\"info\",\"f\":\"" f "\",\"end\":" #e "}\n"
    static const char *const stalls[][2] = {
        {STALL(5, 4, "stall"), ":2: a stall's \"end\" is before its \"time\""},
        {STALL(5, 9, "stall") STALL(8, 12, "stall"),
         ":3: a stall that begins before the previous one ended"},
        {STALL(5, 9, "pause"), ":2: unknown f \"pause\" of the host (it logs \"stall\")"},
    };
#undef STALL
    for (size_t i = 0; i < sizeof(stalls) / sizeof(stalls[0]); i++) {
        snprintf(buf, sizeof(buf), "%s%s", start_line, stalls[i][0]);
        assert_read_error(buf, stalls[i][1]);
    }
    snprintf(buf, sizeof(buf), "%s{\"time\":-1}\n", start_line);
    assert_read_error(buf, ":2: missing \"type\"");
    snprintf(buf, sizeof(buf), "%s{\"type\":\"ok\",\"time\":-1}\n", start_line);
    assert_read_error(buf, ":2: \"time\" must be an integer >= 0");
    snprintf(buf, sizeof(buf),
             "%s{\"time\":5,\"process\":0,\"type\":\"ok\",\"f\":\"renew\","
             "\"key\":\"k\",\"owner\":\"o\"}\n%s",
             start_line, acq);
    assert_read_error(buf, ":3: \"time\" 1 is before the previous event's 5");
    snprintf(buf, sizeof(buf), "%s{\"type\":\"end\",\"mono_ns\":1,\"complete\":true}\n%s",
             start_line, acq);
    assert_read_error(buf, ":3: a line after the end line");

    assert_int_equal(history_read_jsonl("/nonexistent/h.jsonl", &h, err, ERR_LEN), -1);
    assert_string_equal(err, "/nonexistent/h.jsonl: No such file or directory");
}

/* No end line: the run stopped abruptly, it ends at its last event.
 * Blank lines at the end are fine; "seq" may be absent. */
static void test_read_incomplete_file(void **state)
{
    (void)state;
    char buf[512];
    snprintf(buf, sizeof(buf),
             "%s{\"time\":150,\"process\":4,\"type\":\"ok\",\"f\":\"acquire\",\"key\":\"k\","
             "\"owner\":\"o\"}\n\n  \n",
             start_line);
    struct history h;
    char err[ERR_LEN];
    assert_string_equal(read_text(buf, &h, err), "");
    assert_false(h.complete);
    assert_int_equal(h.start_mono_ns, 1);
    assert_int_equal(h.end_mono_ns, 150);
    assert_int_equal(h.n, 1);
    assert_int_equal(h.ev[0].seq, HISTORY_NO_SEQ);
    assert_int_equal(h.ev[0].client, 4);
    history_free(&h);
}

/* A run that could not be judged says why in its end line, and `check`
 * reads it back; a reason beside "complete": true is refused. */
static void test_end_line_reason_round_trip(void **state)
{
    (void)state;
    struct history h = {0};
    h.start_mono_ns = 1;
    h.end_mono_ns = 2;
    h.complete = false;
    snprintf(h.incomplete_reason, sizeof(h.incomplete_reason),
             "faults[0] (kill redis-1) was not carried out: \"restart\" failed");
    struct history back;
    char *text = written_and_read(&h, &back);
    const char *end = strstr(text, "{\"type\":\"end\"");
    assert_non_null(end);
    assert_string_equal(end, "{\"type\":\"end\",\"mono_ns\":2,\"complete\":false,\"reason\":"
                             "\"faults[0] (kill redis-1) was not carried out: \\\"restart\\\" "
                             "failed\",\"dropped\":0}\n");
    assert_false(back.complete);
    assert_string_equal(back.incomplete_reason, h.incomplete_reason);
    history_free(&back);
    free(text);
    char bad[512];
    snprintf(bad, sizeof(bad),
             "%s{\"type\":\"end\",\"mono_ns\":2,\"complete\":true,\"reason\":\"x\"}\n", start_line);
    assert_read_error(bad, ":2: \"reason\" must be a string, and only where \"complete\" is false");
}

/* Names from the file reach a terminal through `check`: their control
 * bytes (here a screen-clearing escape) are shown as '?', and two keys that
 * differ only there stay two keys. */
static void test_read_names_made_printable(void **state)
{
    (void)state;
    char buf[1024];
    snprintf(buf, sizeof(buf),
             "%s{\"time\":10,\"process\":0,\"type\":\"invoke\",\"f\":\"acquire\","
             "\"key\":\"k\\u001b[2J\\u0001\",\"owner\":\"o\\t1\"}\n"
             "{\"time\":11,\"process\":1,\"type\":\"invoke\",\"f\":\"acquire\","
             "\"key\":\"k\\u001b[2J\\u0002\",\"owner\":\"o2\"}\n",
             start_line);
    struct history h;
    char err[ERR_LEN];
    assert_string_equal(read_text(buf, &h, err), "");
    assert_int_equal(h.n_keys, 2);
    assert_string_equal(h.keys[0], "k?[2J?");
    assert_string_equal(h.keys[1], "k?[2J?");
    assert_int_not_equal(h.ev[0].key, h.ev[1].key);
    assert_string_equal(h.owners[0], "o?1");
    history_free(&h);
}

/* ---- the file as untrusted input ------------------------------------------ */

/* The start line of the hostile cases: 2 clients, the run began at 1000. */
#define START2 "{\"type\":\"start\",\"locklab\":1,\"mono_ns\":1000,\"clients\":2}\n"
#define INVOKE(t, p)                                                                               \
    "{\"time\":" #t ",\"process\":" #p ",\"type\":\"invoke\",\"f\":\"acquire\",\"key\":\"k\","     \
    "\"owner\":\"o\"}\n"
#define LINK(t)                                                                                    \
    "{\"time\":" #t                                                                                \
    ",\"process\":1,\"type\":\"info\",\"f\":\"link\",\"owner\":\"o\",\"value\":\"connected\"}\n"
#define FAULT(target, idx)                                                                         \
    "{\"time\":1100,\"process\":\"nemesis\",\"type\":\"info\",\"f\":\"client_pause\","             \
    "\"value\":\"start\",\"fault\":" #idx ",\"target\":" #target "}\n"

/* Each number is bounded before anything sizes a table or computes with
 * it: what `locklab check` says (after "locklab: " and the file's name),
 * on one line, before it exits 2. */
static void test_read_refuses_hostile_numbers(void **state)
{
    (void)state;
    static const char *const cases[][2] = {
        /* a client number the checker once took for a table's size: SIGSEGV, out of memory */
        {START2 INVOKE(1100, 4294967295),
         ":2: \"process\" 4294967295 is not a client: the start line says 2 clients, 0 to 1"},
        {START2 INVOKE(1100, 4294967294),
         ":2: \"process\" 4294967294 is not a client: the start line says 2 clients, 0 to 1"},
        {START2 INVOKE(1100, 2), ":2: \"process\" 2 is not a client: the start line says 2 "
                                 "clients, 0 to 1"},
        {"{\"type\":\"start\",\"locklab\":1,\"mono_ns\":1000,\"clients\":1}\n" INVOKE(1100, 1),
         ":2: \"process\" 1 is not a client: the start line says 1 client, 0 to 0"},
        {"{\"type\":\"start\",\"locklab\":1,\"mono_ns\":1000}\n" INVOKE(1100, 1048576),
         ":2: \"process\" 1048576 is not a client number, 0 to 1048575"},
        {"{\"type\":\"start\",\"locklab\":1,\"mono_ns\":1000,\"clients\":1048577}\n",
         ":1: \"clients\" must be at most 1048576"},
        /* times: from the start line's on, at most a week later */
        {"{\"type\":\"start\",\"locklab\":1,\"mono_ns\":9223372036854775807}\n",
         ":1: \"mono_ns\" must be at most 4611686018427387904"},
        {"{\"type\":\"start\",\"locklab\":1,\"mono_ns\":1,\"wall_ns\":4611686018427387905}\n",
         ":1: \"wall_ns\" must be at most 4611686018427387904"},
        {START2 INVOKE(999, 0), ":2: \"time\" 999 is before the start line's \"mono_ns\" 1000"},
        {START2 LINK(999), ":2: \"time\" 999 is before the start line's \"mono_ns\" 1000"},
        {START2 INVOKE(604800000001001, 0), ":2: \"time\" 604800000001001 is more than a week "
                                            "after the start line's \"mono_ns\" 1000"},
        {START2 "{\"type\":\"end\",\"mono_ns\":999,\"complete\":true}\n",
         ":2: \"mono_ns\" 999 is before the start line's \"mono_ns\" 1000"},
        {START2 "{\"time\":1100,\"process\":\"host\",\"type\":\"info\",\"f\":\"stall\","
                "\"end\":604800000001001}\n",
         ":2: \"end\" 604800000001001 is more than a week after the start line's \"mono_ns\" 1000"},
        {START2 "{\"time\":1100,\"process\":0,\"type\":\"invoke\",\"f\":\"acquire\",\"key\":\"k\","
                "\"owner\":\"o\",\"due\":1101}\n",
         ":2: \"due\" 1101 is after the acquire's \"time\" 1100"},
        {START2 "{\"time\":1100,\"process\":0,\"type\":\"invoke\",\"f\":\"acquire\",\"key\":\"k\","
                "\"owner\":\"o\",\"due\":999}\n",
         ":2: \"due\" 999 is before the start line's \"mono_ns\" 1000"},
        /* counts, leases, indexes */
        {START2 "{\"time\":1100,\"process\":0,\"type\":\"ok\",\"f\":\"acquire\",\"key\":\"k\","
                "\"owner\":\"o\",\"seq\":281474976710656}\n",
         ":2: \"seq\" must be at most 281474976710655"},
        {START2
         "{\"type\":\"end\",\"mono_ns\":1000,\"complete\":true,\"dropped\":281474976710656}\n",
         ":2: \"dropped\" must be at most 281474976710655"},
        {"{\"type\":\"start\",\"locklab\":1,\"mono_ns\":1,\"ttl_ms\":86400001}\n",
         ":1: \"ttl_ms\" must be at most 86400000"},
        {"{\"type\":\"start\",\"locklab\":1,\"mono_ns\":1,\"slack_ms\":86400001}\n",
         ":1: \"slack_ms\" must be at most 86400000"},
        {"{\"type\":\"start\",\"locklab\":1,\"mono_ns\":1,\"stall_floor_ms\":\"10\"}\n",
         ":1: \"stall_floor_ms\" must be an integer >= 0"},
        {START2 FAULT(2, 0),
         ":2: \"target\" 2 is not a client: the start line says 2 clients, 0 to 1"},
        {START2 FAULT(4294967295, 0),
         ":2: \"target\" 4294967295 is not a client: the start line says 2 clients, 0 to 1"},
        {START2 FAULT(1, 1048576), ":2: \"fault\" must be at most 1048575"},
        /* the file's strings in a message cannot break its line */
        {START2 "{\"time\":1100,\"process\":0,\"type\":\"ok\",\"f\":\"a\\nb\\u001b[2J\"}\n",
         ":2: unknown f \"a?b?[2J\""},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        assert_read_error(cases[i][0], cases[i][1]);
}

/* At the bounds, not past them: read. */
static void test_read_takes_the_bounds(void **state)
{
    (void)state;
    static const char text[] =
        "{\"type\":\"start\",\"locklab\":1,\"mono_ns\":4611686018427387904,\"clients\":2,"
        "\"ttl_ms\":86400000}\n"
        "{\"time\":4611686018427387904,\"process\":1,\"type\":\"info\",\"f\":\"link\","
        "\"owner\":\"o\",\"value\":\"connected\"}\n"
        "{\"time\":4611686018427387904,\"process\":1,\"type\":\"invoke\",\"f\":\"acquire\","
        "\"key\":\"k\",\"owner\":\"o\",\"due\":4611686018427387904}\n"
        "{\"time\":4611686018427387904,\"process\":1,\"type\":\"ok\",\"f\":\"acquire\","
        "\"key\":\"k\",\"owner\":\"o\",\"seq\":281474976710654}\n"
        "{\"time\":4612290818427387904,\"process\":1,\"type\":\"invoke\",\"f\":\"release\","
        "\"key\":\"k\",\"owner\":\"o\",\"seq\":281474976710655}\n"
        "{\"type\":\"end\",\"mono_ns\":4612290818427387904,\"complete\":true,"
        "\"dropped\":281474976710655}\n";
    struct history h;
    char err[ERR_LEN];
    assert_string_equal(read_text(text, &h, err), "");
    assert_int_equal(h.n, 4);
    assert_int_equal(h.ev[3].t_ns - h.start_mono_ns, 604800000000000ULL); /* a week */
    assert_int_equal(h.ev[3].seq, 281474976710655ULL);
    assert_int_equal(h.ev[1].due_ns, 4611686018427387904ULL);
    history_free(&h);
}

#define OK_ACQ(t, p, seq)                                                                          \
    "{\"time\":" #t ",\"process\":" #p ",\"type\":\"ok\",\"f\":\"acquire\",\"key\":\"k\","         \
    "\"owner\":\"o" #p "\",\"seq\":" #seq "}\n"
#define REL(t, p, seq)                                                                             \
    "{\"time\":" #t ",\"process\":" #p ",\"type\":\"invoke\",\"f\":\"release\",\"key\":\"k\","     \
    "\"owner\":\"o" #p "\",\"seq\":" #seq "}\n"

/* The witness numbers each entry and exit on a key once, and a client's in
 * the order it made them: a file that says otherwise is refused at the
 * line where it first does. */
static void test_read_refuses_broken_seqs(void **state)
{
    (void)state;
    static const char *const cases[][2] = {
        {START2 OK_ACQ(1100, 0, 0) REL(1200, 0, 1) OK_ACQ(1300, 1, 0) REL(1400, 1, 2),
         ":4: \"seq\" 0 on key \"k\" again (line 2 had it): the witness numbers each entry and "
         "exit on a key once"},
        {START2 OK_ACQ(1100, 0, 0) REL(1200, 0, 1) OK_ACQ(1300, 1, 1) REL(1400, 1, 1),
         ":4: \"seq\" 1 on key \"k\" again (line 3 had it): the witness numbers each entry and "
         "exit on a key once"},
        {START2 OK_ACQ(1100, 0, 5) REL(1200, 0, 3),
         ":3: \"seq\" 3 of client 0 on key \"k\" is not after its 5 on line 2: a client's "
         "entries and exits on a key come in the order of their seqs"},
        /* the earliest line first, whichever promise it breaks */
        {START2 OK_ACQ(1100, 1, 7) OK_ACQ(1150, 0, 4) REL(1200, 0, 2) REL(1300, 1, 4),
         ":4: \"seq\" 2 of client 0 on key \"k\" is not after its 4 on line 3: a client's "
         "entries and exits on a key come in the order of their seqs"},
        {START2 OK_ACQ(
             1100, 0,
             0) "{\"time\":1200,\"process\":0,\"type\":\"info\",\"f\":\"crash\",\"key\":\"k\","
                "\"owner\":\"o0\",\"seq\":0}\n",
         ":3: \"seq\" 0 on key \"k\" again (line 2 had it): the witness numbers each entry and "
         "exit on a key once"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        assert_read_error(cases[i][0], cases[i][1]);
}

/* What a run can write is read: two clients read the clock a few ns away
 * from their witness step, so client 1, which entered (seq 1) before client
 * 0 left (seq 2), may log its entry after; the same seq on another key. */
static void test_read_takes_seqs_across_clients(void **state)
{
    (void)state;
    static const char text[] = START2 OK_ACQ(1100, 0, 0) REL(1200, 0, 2) OK_ACQ(1201, 1, 1)
        REL(1300, 1, 3) "{\"time\":1400,\"process\":1,\"type\":\"ok\",\"f\":\"acquire\","
                        "\"key\":\"k2\",\"owner\":\"o1\",\"seq\":0}\n";
    struct history h;
    char err[ERR_LEN];
    assert_string_equal(read_text(text, &h, err), "");
    assert_int_equal(h.n, 5);
    assert_int_equal(h.ev[2].seq, 1);
    history_free(&h);
}

/* A file of a start line, then count bytes of byte and no '\n'. */
static void write_long_line(char path[PATH_LEN], size_t count, char byte)
{
    write_file(path, start_line);
    FILE *f = fopen(path, "a");
    assert_non_null(f);
    for (size_t i = 0; i < count; i++)
        assert_int_equal(fputc(byte, f), (unsigned char)byte);
    assert_int_equal(fclose(f), 0);
}

/* No line is held past HISTORY_LINE_MAX bytes: /dev/zero, one endless
 * line, is refused at once. A line of exactly that many bytes is read. */
static void test_read_refuses_an_endless_line(void **state)
{
    (void)state;
    struct history h;
    char err[ERR_LEN], path[PATH_LEN];
    assert_int_equal(history_read_jsonl("/dev/zero", &h, err, ERR_LEN), -1);
    assert_string_equal(err, "/dev/zero:1: a line longer than 65536 bytes, the most a history "
                             "line may be");
    write_long_line(path, 65537, ' ');
    assert_int_equal(history_read_jsonl(path, &h, err, ERR_LEN), -1);
    unlink(path);
    assert_string_equal(err + strlen(path), ":2: a line longer than 65536 bytes, the most a "
                                            "history line may be");
    write_long_line(path, 65536, ' ');
    assert_int_equal(history_read_jsonl(path, &h, err, ERR_LEN), 0);
    unlink(path);
    assert_int_equal(h.n, 0);
    history_free(&h);
    write_long_line(path, 3, '\0'); /* NUL is no JSON, not the end of the line */
    assert_int_equal(history_read_jsonl(path, &h, err, ERR_LEN), -1);
    unlink(path);
    assert_string_equal(err + strlen(path),
                        ":2: bad JSON at column 1: '[' or '{' expected near end of file");
}

/* The lock's library fed to client_log_links: what it "reported". */
static const struct lock_link_event *fake_links;
static size_t n_fake_links;

static size_t give_links(struct lock_client *c, struct lock_link_event *out, size_t max)
{
    (void)c;
    size_t n = n_fake_links < max ? n_fake_links : max;
    memcpy(out, fake_links, n * sizeof(*out));
    fake_links += n;
    n_fake_links -= n;
    return n;
}

/* The times of the link lines a client logs of these reports, the run
 * having started at 1000. */
static size_t logged_links(const struct lock_link_event *rep, size_t n, struct history_event *out)
{
    static const struct lock_ops ops = {.name = "fake", .links = give_links};
    struct scenario scn;
    scenario_defaults(&scn);
    struct run_ctx run = {.scn = &scn, .ops = &ops, .t0_ns = 1000};
    struct client cl;
    assert_int_equal(client_init(&cl, &run, 0, 1), 0);
    cl.connected = true;
    fake_links = rep;
    n_fake_links = n;
    client_log_links(&cl);
    struct history h;
    assert_int_equal(history_merge(&h, &cl.hist, 1, &(struct history_names){0}), 0);
    memcpy(out, h.ev, h.n * sizeof(*out));
    size_t got = h.n;
    history_free(&h);
    cl.connected = false;
    client_destroy(&cl);
    return got;
}

/* Every client opens its session before the start line, and no line may
 * come before it: what the library reported before the start is logged at
 * it, the last state only; what came later keeps its time. */
static void test_links_before_the_start_are_logged_at_it(void **state)
{
    (void)state;
    const struct lock_link_event rep[] = {
        {.t_ns = 500, .state = LOCK_LINK_CONNECTING},
        {.t_ns = 800, .state = LOCK_LINK_CONNECTED},
        {.t_ns = 1000, .state = LOCK_LINK_CONNECTING},
        {.t_ns = 1500, .state = LOCK_LINK_EXPIRED},
        {.t_ns = 1600, .state = LOCK_LINK_CONNECTED},
        {.t_ns = 1700, .state = LOCK_LINK_CONNECTING},
        {.t_ns = 1800, .state = LOCK_LINK_CONNECTED},
        {.t_ns = 1900, .state = LOCK_LINK_CONNECTING},
        {.t_ns = 2000, .state = LOCK_LINK_CONNECTED}, /* a ninth: a second batch */
    };
    struct history_event out[9];
    assert_int_equal(logged_links(rep, 9, out), 8);
    static const uint64_t want_t[] = {1000, 1000, 1500, 1600, 1700, 1800, 1900, 2000};
    for (size_t i = 0; i < 8; i++) {
        assert_int_equal(out[i].t_ns, want_t[i]);
        assert_int_equal(out[i].arg, rep[i + 1].state);
        assert_int_equal(out[i].f, HF_LINK);
        assert_int_equal(out[i].key, UINT32_MAX);
    }
    /* all of them before the start: one line, at it */
    assert_int_equal(logged_links(rep, 2, out), 1);
    assert_int_equal(out[0].t_ns, 1000);
    assert_int_equal(out[0].arg, LOCK_LINK_CONNECTED);
}

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
    assert_int_equal(checker_run(s, ns, f, nf, 0, 10, &c), 0);
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
    assert_int_equal(checker_run(s, ns, f, nf, 0, 10, &c), 0);
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
    assert_int_equal(stuck_compute(&h, s, ns, &k, &nk), 0);
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
    availability_compute(&h, f, nf, &a);
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

/* Read back, the same sections come out: the offline check of a file and
 * the check at the end of a run see the same thing. */
static void test_sections_of_file_match(void **state)
{
    (void)state;
    struct history w, r;
    small_history(&w);
    char path[PATH_LEN], err[ERR_LEN];
    write_file(path, small_jsonl);
    assert_int_equal(history_read_jsonl(path, &r, err, sizeof(err)), 0);
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
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_server_fault_round_trip),
        cmocka_unit_test(test_latency_timeline),
        cmocka_unit_test(test_read_errors_name_the_line),
        cmocka_unit_test(test_read_incomplete_file),
        cmocka_unit_test(test_end_line_reason_round_trip),
        cmocka_unit_test(test_read_names_made_printable),
        cmocka_unit_test(test_read_refuses_hostile_numbers),
        cmocka_unit_test(test_read_takes_the_bounds),
        cmocka_unit_test(test_read_refuses_broken_seqs),
        cmocka_unit_test(test_read_takes_seqs_across_clients),
        cmocka_unit_test(test_read_refuses_an_endless_line),
        cmocka_unit_test(test_links_before_the_start_are_logged_at_it),
        cmocka_unit_test(test_sections),
        cmocka_unit_test(test_truncated_history_shows_two_holders),
        cmocka_unit_test(test_one_process_holds_two_keys),
        cmocka_unit_test(test_stuck_keys_and_grants_within),
        cmocka_unit_test(test_sections_of_file_match),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
