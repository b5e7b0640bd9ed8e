/* history_make.c - histories made by hand and history files written and
 * read back, for the history unit tests (history_make.h). */
#include "tests/lib/history_make.h"

#include "sim/record/history_reader.h"

#include <setjmp.h>
#include <stdarg.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char start_line[] = "{\"type\":\"start\",\"locklab\":1,\"mono_ns\":1}\n";

struct history_event ev(uint64_t t, uint32_t client, uint8_t type, uint8_t f)
{
    return (struct history_event){.t_ns = t, .client = client, .type = type, .f = f};
}

struct history_event fault(uint64_t t, uint32_t target, uint8_t kind, uint8_t end)
{
    struct history_event e = ev(t, target, HT_INFO, HF_FAULT);
    e.arg = kind;
    e.arg2 = end;
    e.key = 0; /* the scenario's first fault */
    e.owner = HISTORY_NO_NOTE;
    e.seq = HISTORY_NO_NOTE;
    return e;
}

void assert_section_equal(const struct section *a, const struct section *b)
{
    assert_int_equal(a->key, b->key);
    assert_int_equal(a->owner, b->owner);
    assert_int_equal(a->client, b->client);
    assert_int_equal(a->effect, b->effect);
    assert_int_equal(a->mode, b->mode);
    assert_int_equal(a->permits, b->permits);
    assert_int_equal(a->has_seq, b->has_seq);
    assert_int_equal(a->token, b->token);
    assert_int_equal(a->from_ns, b->from_ns);
    assert_int_equal(a->to_ns, b->to_ns);
    if (a->has_seq) {
        assert_int_equal(a->seq_from, b->seq_from);
        assert_int_equal(a->seq_to, b->seq_to);
    }
}

void make_history(struct history *h, const struct history_event *e, size_t n,
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

const char *write_file(char path[PATH_LEN], const char *text)
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

char *jsonl_of(const struct history *h)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    assert_int_equal(history_write_jsonl(h, f), 0);
    assert_int_equal(fclose(f), 0);
    return text;
}

const char *read_text(const char *text, struct history *h, char err[ERR_LEN])
{
    char path[PATH_LEN];
    err[0] = '\0';
    write_file(path, text);
    int rc = history_read_file(path, h, err, ERR_LEN);
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

char *written_and_read(const struct history *w, struct history *r)
{
    char *text = jsonl_of(w);
    char err[ERR_LEN];
    assert_string_equal(read_text(text, r, err), "");
    return text;
}

void assert_event_equal(const struct history_event *a, const struct history_event *b)
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
    assert_int_equal(a->mode, b->mode);
    assert_int_equal(a->permits, b->permits);
}
