/* history_reader.c - one reader over both history formats
 * (history_reader.h): the first bytes say which decoder reads the rest,
 * and loading a whole history is a loop over next.
 */
#include "sim/record/history_reader.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sim/record/history_bin.h"
#include "sim/record/history_decode.h"

struct history_reader {
    enum history_format fmt;
    FILE *f;
    bool own; /* f was opened here */
    struct reader *jsonl;
    struct llh_dec *llh;
    bool done;
    struct history h; /* the header: start, tables, end */
    char err[512];
    char name[512];
};

void history_printable(char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            *s = '?';
}

/* The binary form when the signature is there; text otherwise (the JSON
 * reader then says what is wrong with it). Only the signature's first
 * byte is taken back, so a stream that is neither is read as text. */
static int sniff(struct history_reader *r)
{
    int c = getc(r->f);
    if (c != (unsigned char)LLH_MAGIC[0]) {
        if (c != EOF)
            ungetc(c, r->f);
        r->fmt = HISTORY_JSONL;
        return 0;
    }
    char sig[LLH_MAGIC_LEN];
    size_t got = fread(sig + 1, 1, LLH_MAGIC_LEN - 1, r->f);
    if (got != LLH_MAGIC_LEN - 1 || memcmp(sig + 1, &LLH_MAGIC[1], LLH_MAGIC_LEN - 1) != 0) {
        snprintf(r->err, sizeof(r->err),
                 "%.400s: byte 0: not a history: neither JSON lines nor history.llh's signature",
                 r->name);
        return -1;
    }
    r->fmt = HISTORY_LLH;
    return 0;
}

struct history_reader *history_reader_stream(FILE *f, const char *name, char *err, size_t errlen)
{
    struct history_reader *r = calloc(1, sizeof(*r));
    if (r == NULL) {
        snprintf(err, errlen, "%s: out of memory", name);
        return NULL;
    }
    r->f = f;
    snprintf(r->name, sizeof(r->name), "%s", name);
    if (sniff(r) == 0) {
        if (r->fmt == HISTORY_LLH)
            r->llh = llh_dec_new(f, r->name, &r->h, r->err, sizeof(r->err));
        else
            r->jsonl = jsonl_dec_new(f, r->name, &r->h, r->err, sizeof(r->err));
    }
    if (r->llh == NULL && r->jsonl == NULL) {
        snprintf(err, errlen, "%s", r->err[0] ? r->err : "out of memory");
        free(r);
        return NULL;
    }
    return r;
}

struct history_reader *history_reader_open(const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return NULL;
    }
    struct history_reader *r = history_reader_stream(f, path, err, errlen);
    if (r == NULL) {
        fclose(f);
        return NULL;
    }
    r->own = true;
    return r;
}

enum history_format history_reader_format(const struct history_reader *r)
{
    return r->fmt;
}

int history_reader_next(struct history_reader *r, struct history_event *e)
{
    if (r->done)
        return r->err[0] ? -1 : 0;
    int rc = r->llh ? llh_dec_next(r->llh, e) : jsonl_dec_next(r->jsonl, e);
    if (rc <= 0)
        r->done = true;
    return rc;
}

const struct history *history_reader_header(const struct history_reader *r)
{
    return &r->h;
}

const char *history_reader_error(const struct history_reader *r)
{
    return r->err;
}

void history_reader_take(struct history_reader *r, struct history *h)
{
    *h = r->h;
    h->ev = NULL;
    h->n = 0;
    memset(&r->h, 0, sizeof(r->h));
}

void history_reader_close(struct history_reader *r)
{
    if (r == NULL)
        return;
    llh_dec_free(r->llh);
    jsonl_dec_free(r->jsonl);
    if (r->own)
        fclose(r->f);
    history_free(&r->h);
    free(r);
}

/* Every name the reports print, made printable: `check` writes keys,
 * owners and fault notes to a terminal, and a hostile file's could move
 * its cursor or rewrite what it shows. Events name them by id, given
 * before this, so two that differ only in such bytes stay two. */
void history_names_printable(struct history *h)
{
    char **tables[] = {h->keys, h->owners, h->notes};
    const size_t counts[] = {h->n_keys, h->n_owners, h->n_notes};
    for (size_t t = 0; t < 3; t++)
        for (size_t i = 0; i < counts[t]; i++)
            history_printable(tables[t][i]);
    history_printable(h->scenario);
    history_printable(h->algorithm);
    history_printable(h->incomplete_reason);
}

static int load(struct history_reader *r, struct history *h, char *err, size_t errlen)
{
    struct history_event *ev = NULL;
    size_t n = 0, cap = 0;
    int rc;
    memset(h, 0, sizeof(*h));
    for (;;) {
        if (n == cap) {
            size_t c = cap ? 2 * cap : 1024;
            struct history_event *p = realloc(ev, c * sizeof(*p));
            if (p == NULL) {
                snprintf(r->err, sizeof(r->err), "%.400s: out of memory", r->name);
                rc = -1;
                break;
            }
            ev = p;
            cap = c;
        }
        rc = history_reader_next(r, &ev[n]);
        if (rc <= 0)
            break;
        n++;
    }
    if (rc < 0) {
        snprintf(err, errlen, "%s", r->err);
        free(ev);
        return -1;
    }
    history_reader_take(r, h);
    h->ev = ev;
    h->n = n;
    history_names_printable(h);
    return 0;
}

int history_read_stream(FILE *f, const char *name, struct history *h, char *err, size_t errlen)
{
    memset(h, 0, sizeof(*h));
    struct history_reader *r = history_reader_stream(f, name, err, errlen);
    if (r == NULL)
        return -1;
    int rc = load(r, h, err, errlen);
    history_reader_close(r);
    return rc;
}

int history_read_file(const char *path, struct history *h, char *err, size_t errlen)
{
    memset(h, 0, sizeof(*h));
    struct history_reader *r = history_reader_open(path, err, errlen);
    if (r == NULL)
        return -1;
    int rc = load(r, h, err, errlen);
    history_reader_close(r);
    return rc;
}

int history_reader_to_jsonl(struct history_reader *r, FILE *out)
{
    struct history_event e;
    const struct history *h = history_reader_header(r);
    int rc = history_reader_next(r, &e), wrote = 0;
    if (rc >= 0)
        wrote = history_jsonl_start(h, out);
    for (; rc == 1 && wrote == 0; rc = history_reader_next(r, &e))
        wrote = history_jsonl_event(h, &e, out);
    if (rc == 0 && wrote == 0)
        wrote = history_jsonl_end(h, out);
    return rc < 0 ? -1 : wrote < 0 ? -2 : 0;
}
