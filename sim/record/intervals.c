/* intervals.c - per-second histograms sealed into a thread's log, and the
 * logs merged second by second (intervals.h). */
#include "sim/record/intervals.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "sim/record/histogram.h"

/* Big enough that a busy second's few KiB rarely straddle two; a block is
 * malloc'd once and kept until the log is freed. */
#define BLOCK_BYTES 65536

struct interval_block {
    struct interval_block *next;
    size_t used;
    unsigned char b[BLOCK_BYTES];
};

/* Sealing runs twice over a second: once counting its bytes, so that every
 * block it needs is there before a byte is written (a log never holds half
 * a second), then writing them. */
struct writer {
    struct interval_log *log; /* NULL: only count */
    size_t n;
};

static void put(struct writer *w, unsigned char c)
{
    w->n++;
    if (w->log == NULL)
        return;
    struct interval_block *b = w->log->tail;
    if (b->used == BLOCK_BYTES)
        b = w->log->tail = b->next; /* made ready by reserve() */
    b->b[b->used++] = c;
}

static void put_varint(struct writer *w, uint64_t v)
{
    for (; v >= 0x80; v >>= 7)
        put(w, (unsigned char)(v | 0x80));
    put(w, (unsigned char)v);
}

/* ZigZag, then LEB128 (counts and zero runs stay far below the 2^63 where
 * the V2 encoding's ninth byte would differ). */
static void put_zigzag(struct writer *w, int64_t v)
{
    put_varint(w, ((uint64_t)v << 1) ^ (v < 0 ? UINT64_MAX : 0));
}

static void put_second(struct writer *w, uint32_t second, int op, const struct histogram *h)
{
    put_varint(w, second);
    put(w, (unsigned char)op);
    put_varint(w, (uint64_t)h->min);
    put_varint(w, (uint64_t)h->max);
    int32_t hi = histogram_index(h, h->max);
    for (int32_t i = histogram_index(h, h->min); i <= hi;) {
        int64_t count = h->counts[i++];
        int64_t zeros = 0;
        if (count == 0)
            for (zeros = 1; i <= hi && h->counts[i] == 0; i++)
                zeros++;
        put_zigzag(w, zeros > 1 ? -zeros : count);
    }
}

/* Blocks for n more bytes after the tail, linked in only once all are
 * there. */
static int reserve(struct interval_log *log, size_t n)
{
    size_t room = log->tail ? BLOCK_BYTES - log->tail->used : 0;
    struct interval_block *first = NULL, **link = &first;
    for (; room < n; room += BLOCK_BYTES) {
        struct interval_block *b = malloc(sizeof(*b));
        if (b == NULL) {
            while (first) {
                struct interval_block *next = first->next;
                free(first);
                first = next;
            }
            return -1;
        }
        b->next = NULL;
        b->used = 0;
        *link = b;
        link = &b->next;
    }
    if (first == NULL)
        return 0;
    if (log->tail)
        log->tail->next = first;
    else
        log->head = log->tail = first;
    return 0;
}

int intervals_seal(struct interval_log *log, uint32_t second, int op, const struct histogram *h)
{
    if (h->total_count == 0)
        return 0;
    struct writer count = {.log = NULL};
    put_second(&count, second, op, h);
    if (reserve(log, count.n) < 0) {
        log->lost++;
        return -1;
    }
    struct writer w = {.log = log};
    put_second(&w, second, op, h);
    log->bytes += w.n;
    return 0;
}

void intervals_log_free(struct interval_log *log)
{
    while (log->head) {
        struct interval_block *next = log->head->next;
        free(log->head);
        log->head = next;
    }
    memset(log, 0, sizeof(*log));
}

/* ---- reading ----------------------------------------------------------- */

struct cursor {
    const struct interval_block *b;
    size_t at;
    bool bad; /* read past the end, or a word too long */
};

static bool at_end(struct cursor *c)
{
    while (c->b && c->at == c->b->used) {
        c->b = c->b->next;
        c->at = 0;
    }
    return c->b == NULL;
}

static unsigned char get(struct cursor *c)
{
    if (at_end(c)) {
        c->bad = true;
        return 0;
    }
    return c->b->b[c->at++];
}

static uint64_t get_varint(struct cursor *c)
{
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        unsigned char x = get(c);
        v |= (uint64_t)(x & 0x7f) << shift;
        if (!(x & 0x80))
            return v;
    }
    c->bad = true;
    return 0;
}

/* The next second's header; the cursor is left before it. */
static uint32_t peek_second(const struct cursor *c)
{
    struct cursor p = *c;
    return (uint32_t)get_varint(&p);
}

/* One sealed second: added to h when add, else passed over. */
static void read_second(struct cursor *c, struct histogram *h, bool add)
{
    int64_t min = (int64_t)get_varint(c), max = (int64_t)get_varint(c);
    int32_t i = histogram_index(h, min), hi = histogram_index(h, max);
    if (min > max)
        c->bad = true;
    while (i <= hi && !c->bad) {
        uint64_t z = get_varint(c);
        int64_t v = (int64_t)(z >> 1) ^ -(int64_t)(z & 1);
        if (v < 0) { /* -v zero counters */
            i += (int32_t)(-v < hi - i + 1 ? -v : hi - i + 1);
            continue;
        }
        if (add) {
            h->counts[i] += v;
            h->total_count += v;
        }
        i++;
    }
    if (!add || c->bad)
        return;
    if (min < h->min)
        h->min = min;
    if (max > h->max)
        h->max = max;
}

int intervals_each(const struct interval_log *logs, size_t n, int op, uint32_t seconds,
                   interval_fn fn, void *arg)
{
    struct histogram *h = histogram_new(HIST_LOWEST_US, HIST_HIGHEST_US, HIST_SIG_DIGITS);
    /* Emptied into by every second: histogram_move clears only the counters a
     * second used, where a reset would clear all 23,552 each second. */
    struct histogram *spent = histogram_new(HIST_LOWEST_US, HIST_HIGHEST_US, HIST_SIG_DIGITS);
    struct cursor *cur = calloc(n ? n : 1, sizeof(*cur));
    int rc = h && spent && cur ? 0 : -1;
    for (size_t i = 0; rc == 0 && i < n; i++)
        cur[i].b = logs[i].head;
    bool more = n > 0;
    for (uint64_t s = 0; rc == 0 && (s < seconds || more); s++) {
        more = false;
        for (size_t i = 0; i < n && rc == 0; i++) {
            while (!at_end(&cur[i]) && peek_second(&cur[i]) == s) {
                (void)get_varint(&cur[i]);
                int which = get(&cur[i]);
                read_second(&cur[i], h, which == op);
            }
            if (cur[i].bad || (!at_end(&cur[i]) && peek_second(&cur[i]) < s))
                rc = -1; /* sealed out of order, or cut short: not a log this file wrote */
            more = more || !at_end(&cur[i]);
        }
        if (rc == 0)
            rc = fn(arg, (uint32_t)s, h);
        histogram_move(spent, h);
    }
    free(cur);
    histogram_free(h);
    histogram_free(spent);
    return rc;
}
