/* history_io.c - how fast a history is written and read back, in each
 * form: bench/history_io.sh runs it on a real run's history.
 *
 *   history_io HISTORY COPIES OUT_DIR
 *
 * HISTORY (either form) is repeated COPIES times end to end, each copy's
 * times and seqs moved past the previous one's so the whole stays a valid
 * history, into one of COPIES times the sections; it is written to
 * OUT_DIR/big.llh and OUT_DIR/big.jsonl, timing each writer, then each
 * file is read back event by event through history_reader.h (what check's
 * load is), timing each. Prints bytes per section and sections per second.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim/record/history_bin.h"
#include "sim/record/history_reader.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static size_t sections_of(const struct history *h)
{
    size_t n = 0;
    for (size_t i = 0; i < h->n; i++)
        n += h->ev[i].f == HF_ACQUIRE && h->ev[i].type == HT_OK;
    return n;
}

static int repeat(const struct history *one, long copies, struct history *big)
{
    *big = *one;
    big->ev = malloc(one->n * (size_t)copies * sizeof(*big->ev));
    if (big->ev == NULL)
        return -1;
    uint64_t span = one->end_mono_ns - one->start_mono_ns + 1, seq_span = 0;
    for (size_t i = 0; i < one->n; i++)
        if (one->ev[i].f <= HF_CRASH && one->ev[i].seq != HISTORY_NO_SEQ &&
            one->ev[i].seq >= seq_span)
            seq_span = one->ev[i].seq + 1;
    for (long c = 0; c < copies; c++) {
        for (size_t i = 0; i < one->n; i++) {
            struct history_event e = one->ev[i];
            e.t_ns += (uint64_t)c * span;
            if (e.f == HF_STALL)
                e.end_ns += (uint64_t)c * span;
            if (e.f <= HF_CRASH && e.seq != HISTORY_NO_SEQ &&
                ((e.f == HF_ACQUIRE && e.type == HT_OK) ||
                 (e.f == HF_RELEASE && e.type == HT_INVOKE) || e.f == HF_CRASH))
                e.seq += (uint64_t)c * seq_span;
            big->ev[(size_t)c * one->n + i] = e;
        }
    }
    big->n = one->n * (size_t)copies;
    big->end_mono_ns = one->start_mono_ns + (uint64_t)copies * span;
    return 0;
}

static int write_timed(const char *path, const struct history *h,
                       int (*write)(const struct history *, FILE *), const char *what,
                       size_t sections)
{
    FILE *f = fopen(path, "wb");
    if (f == NULL)
        return -1;
    double t = now_s();
    int rc = write(h, f);
    if (fclose(f) != 0)
        rc = -1;
    t = now_s() - t;
    f = fopen(path, "rb");
    if (f == NULL)
        return -1;
    fseek(f, 0, SEEK_END);
    long bytes = ftell(f);
    fclose(f);
    printf("write %-6s %10ld bytes  %6.1f B/section  %6.3f s  %6.1f ns/event\n", what, bytes,
           (double)bytes / (double)sections, t, t * 1e9 / (double)h->n);
    return rc;
}

static int read_timed(const char *path, const char *what, size_t want)
{
    char err[600];
    double t = now_s();
    struct history_reader *r = history_reader_open(path, err, sizeof(err));
    if (r == NULL) {
        fprintf(stderr, "history_io: %s\n", err);
        return -1;
    }
    struct history_event e;
    size_t n = 0, sections = 0;
    int rc;
    while ((rc = history_reader_next(r, &e)) == 1) {
        n++;
        sections += e.f == HF_ACQUIRE && e.type == HT_OK;
    }
    t = now_s() - t;
    if (rc < 0)
        fprintf(stderr, "history_io: %s\n", history_reader_error(r));
    history_reader_close(r);
    if (rc < 0 || sections != want)
        return -1;
    printf("read  %-6s %10zu events %zu sections  %6.3f s  %8.0f sections/s\n", what, n, sections,
           t, (double)sections / t);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: history_io HISTORY COPIES OUT_DIR\n");
        return 2;
    }
    long copies = atol(argv[2]);
    char err[600], llh[1024], jsonl[1024];
    struct history one, big;
    if (copies < 1 || history_read_file(argv[1], &one, err, sizeof(err)) < 0) {
        fprintf(stderr, "history_io: %s\n", copies < 1 ? "COPIES must be at least 1" : err);
        return 2;
    }
    if (repeat(&one, copies, &big) < 0) {
        fprintf(stderr, "history_io: out of memory\n");
        return 3;
    }
    size_t sections = sections_of(&big);
    printf("history: %zu events, %zu sections (%ld copies of %s)\n", big.n, sections, copies,
           argv[1]);
    snprintf(llh, sizeof(llh), "%s/big.llh", argv[3]);
    snprintf(jsonl, sizeof(jsonl), "%s/big.jsonl", argv[3]);
    int rc = write_timed(llh, &big, history_write_llh, "llh", sections) < 0 ||
             write_timed(jsonl, &big, history_write_jsonl, "jsonl", sections) < 0 ||
             read_timed(llh, "llh", sections) < 0 || read_timed(jsonl, "jsonl", sections) < 0;
    free(big.ev);
    history_free(&one);
    return rc ? 3 : 0;
}
