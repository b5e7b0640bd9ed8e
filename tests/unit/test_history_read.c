/* test_history_read.c - the history reader and its refusals: each error
 * names the file and the line, a file cut short or holding a reason is
 * read as such, names from the file are made printable, and a file from
 * anywhere (untrusted input) has every number bounded, its seqs in order
 * and no line past HISTORY_LINE_MAX. Also the link lines a client logs of
 * what its lock's library reported before the start line.
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
#include <string.h>
#include <unistd.h>

#include "sim/engine/client.h"
#include "sim/engine/run_ctx.h"
#include "sim/record/history.h"
#include "sim/record/history_reader.h"
#include "sim/scenario/scenario.h"
#include "tests/lib/history_make.h"

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
             "%s{\"time\":1,\"process\":\"nemesis\",\"type\":\"info\",\"f\":\"split_brain\","
             "\"value\":\"start\",\"target\":0}\n",
             start_line);
    assert_read_error(buf, ":2: unknown f \"split_brain\"");
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

    assert_int_equal(history_read_file("/nonexistent/h.jsonl", &h, err, ERR_LEN), -1);
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
         ":4: \"seq\" 0 on key \"k\" again (every seq below 2 had come by line 3): the witness "
         "numbers each entry and exit on a key once"},
        {START2 OK_ACQ(1100, 0, 0) REL(1200, 0, 1) OK_ACQ(1300, 1, 1) REL(1400, 1, 1),
         ":4: \"seq\" 1 on key \"k\" again (every seq below 2 had come by line 3): the witness "
         "numbers each entry and exit on a key once"},
        /* above the steps all seen, a seq's line is kept while it waits */
        {START2 OK_ACQ(1100, 0, 2) OK_ACQ(1200, 1, 0) REL(1300, 1, 2),
         ":4: \"seq\" 2 on key \"k\" again (line 2 had it): the witness numbers each entry and "
         "exit on a key once"},
        /* ... and forgotten once the steps below it come */
        {START2 OK_ACQ(1100, 0, 2) OK_ACQ(1200, 1, 0) REL(1300, 1, 1) REL(1400, 0, 2),
         ":5: \"seq\" 2 on key \"k\" again (every seq below 3 had come by line 4): the witness "
         "numbers each entry and exit on a key once"},
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
         ":3: \"seq\" 0 on key \"k\" again (every seq below 1 had come by line 2): the witness "
         "numbers each entry and exit on a key once"},
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
    assert_int_equal(history_read_file("/dev/zero", &h, err, ERR_LEN), -1);
    assert_string_equal(err, "/dev/zero:1: a line longer than 65536 bytes, the most a history "
                             "line may be");
    write_long_line(path, 65537, ' ');
    assert_int_equal(history_read_file(path, &h, err, ERR_LEN), -1);
    unlink(path);
    assert_string_equal(err + strlen(path), ":2: a line longer than 65536 bytes, the most a "
                                            "history line may be");
    write_long_line(path, 65536, ' ');
    assert_int_equal(history_read_file(path, &h, err, ERR_LEN), 0);
    unlink(path);
    assert_int_equal(h.n, 0);
    history_free(&h);
    write_long_line(path, 3, '\0'); /* NUL is no JSON, not the end of the line */
    assert_int_equal(history_read_file(path, &h, err, ERR_LEN), -1);
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
    assert_int_equal(client_init(&cl, &run, 0, NULL, NULL), 0);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
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
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
