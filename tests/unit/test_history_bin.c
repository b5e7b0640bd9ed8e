/* test_history_bin.c - history.llh, the binary history (history_bin.h,
 * docs/history.md "history.llh"): a known history's exact bytes, the
 * round trip against the JSON-lines form event by event, the streaming
 * reader, and what a damaged file gets: a truncated one, a corrupt varint,
 * an id never named, each one error line naming the byte offset. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/record/history_bin.h"
#include "sim/record/history_reader.h"
#include "tests/lib/history_make.h"

/* The bytes of the history in one_section(), worked out by hand from the
 * layout in docs/history.md. */
static const unsigned char one_section_bytes[] = {
    0x89, 'L',  'L',  'H',  '\r', '\n', 0x1a, '\n', /* signature */
    0x01, 0x01, 0xe8, 0x07, 0x00, 0x02, 0x2a, 0x00,
    0x00, 0x00,            /* start: v1, mono 1000,
                              wall 0, 2 clients, seed 42 */
    0x01, 's',  0x01, 'a', /* scenario, algorithm */
    0x02, 0x01, 'k',       /* at 22: key 0 "k" */
    0x03, 0x01, 'o',       /* owner 0 "o" */
    0x21, 0x90, 0x03, 0x01, 0x00, 0x00, 0x0c, 0x0e,
    0x06,                                     /* at 28: ok acquire, +200 ns,
                                                 client 1, token 7, seq 3 */
    0x24, 0x14, 0x01, 0x00, 0x00, 0x04, 0x02, /* at 37: invoke release +10 ns,
                                                 applied, seq 4 (+1) */
    0x05, 0xd0, 0x0f, 0x01, 0x00, 0x00,       /* at 44: end 2000, complete */
};

static void one_section(struct history *h)
{
    struct history_event e[2] = {ev(1200, 1, HT_OK, HF_ACQUIRE),
                                 ev(1210, 1, HT_INVOKE, HF_RELEASE)};
    e[0].token = 7;
    e[0].seq = 3;
    e[1].seq = 4;
    e[1].arg = EFFECT_APPLIED;
    const char *keys[] = {"k"}, *owners[] = {"o"};
    make_history(h, e, 2, keys, 1, owners, 1);
    h->start_mono_ns = 1000;
    h->end_mono_ns = 2000;
    h->complete = true;
    h->clients = 2;
    h->seed = 42;
    snprintf(h->scenario, sizeof(h->scenario), "s");
    snprintf(h->algorithm, sizeof(h->algorithm), "a");
}

/* h as history.llh in memory; the caller frees it. */
static unsigned char *llh_of(const struct history *h, size_t *len)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    assert_non_null(f);
    assert_int_equal(history_write_llh(h, f), 0);
    assert_int_equal(fclose(f), 0);
    return (unsigned char *)buf;
}

/* bytes[0..len) read back: "" into h, or the error with the path cut off. */
static const char *read_bytes(const unsigned char *bytes, size_t len, struct history *h,
                              char err[ERR_LEN])
{
    FILE *f = fmemopen((void *)bytes, len, "r");
    assert_non_null(f);
    err[0] = '\0';
    int rc = history_read_stream(f, "h.llh", h, err, ERR_LEN);
    fclose(f);
    assert_int_equal(rc, err[0] ? -1 : 0);
    return err[0] ? err + strlen("h.llh") : err;
}

static void a_known_history_has_known_bytes(void **state)
{
    (void)state;
    struct history h;
    one_section(&h);
    size_t len;
    unsigned char *b = llh_of(&h, &len);
    assert_int_equal(len, sizeof(one_section_bytes));
    assert_memory_equal(b, one_section_bytes, len);
    free(b);
    history_free(&h);
}

/* Every kind of event, with ids used out of order and an owner beyond its
 * table: the binary form reads back to what the JSON lines read back to,
 * event for event and name for name, and exports to the same text. */
static void both_forms_read_the_same(void **state)
{
    (void)state;
    struct history_event e[12];
    size_t n = 0;
    e[n] = ev(1100, 0, HT_INVOKE, HF_ACQUIRE), e[n].key = 1, e[n].owner = 1, e[n].due_ns = 1050,
    n++;
    e[n] = ev(1150, 0, HT_OK, HF_ACQUIRE), e[n].key = 1, e[n].owner = 1, e[n].token = 9,
    e[n].seq = HISTORY_NO_SEQ, n++;
    e[n] = ev(1160, 1, HT_OK, HF_ACQUIRE), e[n].mode = LOCK_MODE_PERMIT, e[n].permits = 2,
    e[n].seq = 5, n++;
    e[n] = ev(1170, 1, HT_FAIL, HF_RELEASE), e[n].arg = HE_LOST, n++;
    e[n] = ev(1180, 1, HT_INFO, HF_RENEW), e[n].arg = HE_ERROR, n++;
    e[n] = ev(1190, 0, HT_INVOKE, HF_RELEASE), e[n].key = 1, e[n].owner = 1,
    e[n].arg = EFFECT_FENCED, e[n].seq = HISTORY_NO_SEQ, n++;
    e[n] = ev(1200, 1, HT_INFO, HF_CRASH), e[n].seq = 6, n++;
    e[n] = ev(1210, 1, HT_INFO, HF_LINK), e[n].owner = 7, e[n].arg = 1, n++; /* beyond: "#7" */
    e[n] = fault(1220, 0, KIND_PAUSE, 0), n++;
    e[n] = fault(1230, 0, KIND_KILL, 1), e[n].client = HISTORY_SERVERS, e[n].owner = 0,
    e[n].seq = HISTORY_NO_NOTE, n++;
    e[n] = ev(1240, HISTORY_HOST, HT_INFO, HF_STALL), e[n].end_ns = 1300, n++;
    e[n] = ev(1300, 0, HT_OK, HF_RENEW), n++;
    const char *keys[] = {"k0", "k1"}, *owners[] = {"o0", "o1"};
    struct history w;
    make_history(&w, e, n, keys, 2, owners, 2);
    const char *notes[] = {"redis-1"};
    free(w.notes); /* make_history's empty table, replaced */
    w.notes = calloc(1, sizeof(char *));
    w.notes[0] = strdup(notes[0]);
    w.n_notes = 1;
    w.start_mono_ns = 1000;
    w.end_mono_ns = 2000;
    w.clients = 2;
    w.metered = true;
    snprintf(w.incomplete_reason, sizeof(w.incomplete_reason), "cut\nshort");

    char *text = jsonl_of(&w), err[ERR_LEN];
    struct history fromtext, frombin;
    assert_string_equal(read_text(text, &fromtext, err), "");
    size_t len;
    unsigned char *b = llh_of(&w, &len);
    assert_string_equal(read_bytes(b, len, &frombin, err), "");
    assert_int_equal(frombin.n, n);
    assert_int_equal(fromtext.n, n);
    for (size_t i = 0; i < n; i++)
        assert_event_equal(&frombin.ev[i], &fromtext.ev[i]);
    assert_int_equal(frombin.n_keys, 2);
    assert_string_equal(frombin.keys[0], "k1"); /* numbered in the order first named */
    assert_string_equal(frombin.owners[2], "#7");
    assert_string_equal(frombin.notes[0], "redis-1");
    assert_int_equal(frombin.n_owners, fromtext.n_owners);
    assert_false(frombin.complete);
    assert_true(frombin.metered);
    assert_string_equal(frombin.incomplete_reason, "cut?short"); /* made printable */
    char *again = jsonl_of(&frombin), *again_text = jsonl_of(&fromtext);
    assert_string_equal(again, again_text);
    free(again);
    free(again_text);
    free(text);
    free(b);
    history_free(&w);
    history_free(&fromtext);
    history_free(&frombin);
}

static void the_reader_streams_event_by_event(void **state)
{
    (void)state;
    FILE *f = fmemopen((void *)one_section_bytes, sizeof(one_section_bytes), "r");
    char err[ERR_LEN];
    struct history_reader *r = history_reader_stream(f, "h.llh", err, ERR_LEN);
    assert_non_null(r);
    assert_int_equal(history_reader_format(r), HISTORY_LLH);
    struct history_event e;
    const struct history *h = history_reader_header(r);
    assert_int_equal(history_reader_next(r, &e), 1);
    assert_int_equal(h->start_mono_ns, 1000);
    assert_int_equal(h->n_keys, 1);
    assert_false(h->end_line);
    assert_int_equal(e.t_ns, 1200);
    assert_int_equal(e.token, 7);
    assert_int_equal(e.seq, 3);
    assert_int_equal(history_reader_next(r, &e), 1);
    assert_int_equal(e.seq, 4);
    assert_int_equal(history_reader_next(r, &e), 0);
    assert_true(h->end_line);
    assert_true(h->complete);
    assert_int_equal(h->end_mono_ns, 2000);
    assert_int_equal(history_reader_next(r, &e), 0);
    history_reader_close(r);
    fclose(f);
}

static void a_damaged_file_is_one_error_naming_the_byte(void **state)
{
    (void)state;
    struct history h;
    char err[ERR_LEN];
    unsigned char b[sizeof(one_section_bytes) + 16];
    memcpy(b, one_section_bytes, sizeof(one_section_bytes));
    /* cut inside the first event */
    assert_string_equal(read_bytes(b, 30, &h, err), ": byte 28: the file ends inside a record");
    /* cut between records: read, but incomplete, ending at its last event */
    assert_string_equal(read_bytes(b, 44, &h, err), "");
    assert_int_equal(h.n, 2);
    assert_false(h.complete);
    assert_false(h.end_line);
    assert_int_equal(h.end_mono_ns, 1210);
    history_free(&h);
    /* a time delta of eleven bytes */
    memset(b + 29, 0xff, 11);
    assert_string_equal(read_bytes(b, sizeof(one_section_bytes), &h, err),
                        ": byte 28: a varint of more than 64 bits");
    /* an owner id the file never named */
    memcpy(b, one_section_bytes, sizeof(one_section_bytes));
    b[33] = 0x01;
    assert_string_equal(read_bytes(b, sizeof(one_section_bytes), &h, err),
                        ": byte 28: owner id 1: the file named 1 so far");
    /* a client the start line does not have */
    memcpy(b, one_section_bytes, sizeof(one_section_bytes));
    b[31] = 0x02;
    assert_string_equal(read_bytes(b, sizeof(one_section_bytes), &h, err),
                        ": byte 28: process 2 is not a client: the start says 2 clients, 0 to 1");
    /* a signature cut short, and an unknown record */
    assert_string_equal(read_bytes(b, 5, &h, err),
                        ": byte 0: not a history: neither JSON lines nor history.llh's signature");
    memcpy(b, one_section_bytes, sizeof(one_section_bytes));
    b[22] = 0x7f;
    assert_string_equal(read_bytes(b, sizeof(one_section_bytes), &h, err),
                        ": byte 22: unknown record 0x7f");
    /* the same seq twice on a key */
    memcpy(b, one_section_bytes, sizeof(one_section_bytes));
    b[43] = 0x00; /* the release's seq: +0, 3 again */
    assert_string_equal(read_bytes(b, sizeof(one_section_bytes), &h, err),
                        ": byte 37: seq 3 on key \"k\" again (byte 28 had it): the witness numbers "
                        "each entry and exit on a key once");
    /* a client's seq on a key going back: the same words as the JSONL
     * reader's (history_validate.c), a byte for a line */
    b[43] = 0x01; /* -1: 2 after 3 */
    assert_string_equal(
        read_bytes(b, sizeof(one_section_bytes), &h, err),
        ": byte 37: seq 2 of client 1 on key \"k\" is not after its 3 at byte 28: a "
        "client's entries and exits on a key come in the order of their seqs");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_known_history_has_known_bytes),
        cmocka_unit_test(both_forms_read_the_same),
        cmocka_unit_test(the_reader_streams_event_by_event),
        cmocka_unit_test(a_damaged_file_is_one_error_naming_the_byte),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
