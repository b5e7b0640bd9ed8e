/* intervals.c - per-second histograms sealed into a thread's log, and the
 * logs merged second by second (intervals.h). */
#include "sim/record/intervals.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zlib.h>

#include "sim/record/histogram.h"

#define MAX_WORD_BYTES    9  /* a LEB128 word of 64 bits */
#define HEADER_MAX        48 /* second, op, min, max and two lengths, as varints */
#define WINDOW_BITS       12 /* raw deflate, 4 KiB back-references */
#define DEFLATE_MEM_LEVEL 1
#define MIN_DEFLATE       64 /* below it deflate's own header outweighs the gain */

/* Big enough that a busy second's few KiB rarely straddle two; a block is
 * malloc'd once and kept until the log is freed. */
#define BLOCK_BYTES 65536

struct interval_block {
    struct interval_block *next;
    size_t used;
    unsigned char b[BLOCK_BYTES];
};

/* The scratch a log seals in, made once on its first busy second and kept
 * (a thread's heap sees no alloc-free churn): the counters encoded, then
 * deflated, both as large as a full-range histogram can need. */
struct interval_scratch {
    unsigned char *raw, *packed;
    size_t cap, packed_cap;
    z_stream z;
};

struct out {
    unsigned char *p, *end;
};

static void put(struct out *o, unsigned char c)
{
    if (o->p < o->end) /* the scratch is sized for the worst case: never false */
        *o->p++ = c;
}

static void put_varint(struct out *o, uint64_t v)
{
    for (; v >= 0x80; v >>= 7)
        put(o, (unsigned char)(v | 0x80));
    put(o, (unsigned char)v);
}

/* ZigZag, then LEB128 (counts and zero runs stay far below the 2^63 where
 * the V2 encoding's ninth byte would differ). */
static void put_zigzag(struct out *o, int64_t v)
{
    put_varint(o, ((uint64_t)v << 1) ^ (v < 0 ? UINT64_MAX : 0));
}

static size_t put_counts(unsigned char *buf, size_t cap, const struct histogram *h)
{
    struct out o = {buf, buf + cap};
    int32_t hi = histogram_index(h, h->max);
    for (int32_t i = histogram_index(h, h->min); i <= hi;) {
        int64_t count = h->counts[i++];
        int64_t zeros = 0;
        if (count == 0)
            for (zeros = 1; i <= hi && h->counts[i] == 0; i++)
                zeros++;
        put_zigzag(&o, zeros > 1 ? -zeros : count);
    }
    return (size_t)(o.p - buf);
}

static struct interval_scratch *scratch_new(const struct histogram *h)
{
    struct interval_scratch *x = calloc(1, sizeof(*x));
    if (x == NULL)
        return NULL;
    x->cap = (size_t)h->counts_len * MAX_WORD_BYTES;
    /* A small window: a second's counters are a few KiB at most. A small
     * hash (memLevel 1: 256 heads): deflateReset clears it every second,
     * and the default's 64 KiB clearing cost more than the seal itself. */
    if (deflateInit2(&x->z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, -WINDOW_BITS, DEFLATE_MEM_LEVEL,
                     Z_DEFAULT_STRATEGY) != Z_OK) {
        free(x);
        return NULL;
    }
    x->packed_cap = deflateBound(&x->z, (uLong)x->cap);
    x->raw = malloc(x->cap);
    x->packed = malloc(x->packed_cap);
    if (x->raw == NULL || x->packed == NULL) {
        deflateEnd(&x->z);
        free(x->raw);
        free(x->packed);
        free(x);
        return NULL;
    }
    return x;
}

/* n raw bytes deflated into x->packed: their length, or 0 when that does
 * not make them shorter (a quiet second's dozen bytes). */
static size_t deflated(struct interval_scratch *x, size_t n)
{
    if (n < MIN_DEFLATE || deflateReset(&x->z) != Z_OK)
        return 0;
    x->z.next_in = x->raw;
    x->z.avail_in = (uInt)n;
    x->z.next_out = x->packed;
    x->z.avail_out = (uInt)x->packed_cap;
    if (deflate(&x->z, Z_FINISH) != Z_STREAM_END)
        return 0;
    size_t z = x->packed_cap - x->z.avail_out;
    return z < n ? z : 0;
}

/* Blocks for n more bytes after the tail, linked in only once all are
 * there: a log never holds half a second. */
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

static void append(struct interval_log *log, const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        struct interval_block *b = log->tail;
        if (b->used == BLOCK_BYTES)
            b = log->tail = b->next; /* made ready by reserve() */
        b->b[b->used++] = p[i];
    }
}

/* Every full block but the tail written to the log's file and freed: a
 * block is filled once and never changed, and the reader takes the file's
 * bytes before the blocks still held. A failed write keeps the rest in
 * memory (the file holds whole blocks only). */
static void spill_full(struct interval_log *log)
{
    while (!log->spill_broken && log->head && log->head != log->tail &&
           log->head->used == BLOCK_BYTES) {
        if (log->spill == NULL && (log->spill = tmpfile()) == NULL) {
            log->spill_broken = true;
            return;
        }
        int fd = fileno(log->spill);
        ssize_t w = pwrite(fd, log->head->b, BLOCK_BYTES, (off_t)log->spilled);
        if (w != BLOCK_BYTES) {
            log->spill_broken = true;
            return;
        }
        struct interval_block *next = log->head->next;
        free(log->head);
        log->head = next;
        log->spilled += BLOCK_BYTES;
    }
}

int intervals_seal(struct interval_log *log, uint32_t second, int op, const struct histogram *h)
{
    if (h->total_count == 0)
        return 0;
    if (log->scratch == NULL && (log->scratch = scratch_new(h)) == NULL) {
        log->lost++;
        return -1;
    }
    struct interval_scratch *x = log->scratch;
    size_t n = put_counts(x->raw, x->cap, h), z = deflated(x, n);
    unsigned char head[HEADER_MAX];
    struct out o = {head, head + sizeof(head)};
    put_varint(&o, second);
    put(&o, (unsigned char)op);
    put_varint(&o, (uint64_t)h->min);
    put_varint(&o, (uint64_t)h->max);
    put_varint(&o, n);
    put_varint(&o, z); /* 0: stored as encoded */
    size_t hn = (size_t)(o.p - head), body = z ? z : n;
    if (reserve(log, hn + body) < 0) {
        log->lost++;
        return -1;
    }
    append(log, head, hn);
    append(log, z ? x->packed : x->raw, body);
    log->bytes += hn + body;
    spill_full(log);
    return 0;
}

void intervals_log_free(struct interval_log *log)
{
    if (log->scratch) {
        deflateEnd(&log->scratch->z);
        free(log->scratch->raw);
        free(log->scratch->packed);
        free(log->scratch);
    }
    while (log->head) {
        struct interval_block *next = log->head->next;
        free(log->head);
        log->head = next;
    }
    if (log->spill)
        fclose(log->spill);
    memset(log, 0, sizeof(*log));
}

/* ---- reading ----------------------------------------------------------- */

/* A log read from its start: the file's bytes (through a block of the
 * cursor's own), then the blocks still held. A second's number is read
 * ahead once (peek) and taken with take_second. */
struct cursor {
    const struct interval_block *b;
    size_t at;
    const struct interval_log *log;
    struct interval_block *fbuf; /* the file's bytes being read: NULL once past them */
    uint64_t off;                /* the file's next byte to read into fbuf */
    bool has_peek;
    uint32_t peek;
    bool bad; /* read past the end, a word too long, or the file unreadable */
};

/* The cursor at the start of log. false: no memory for the file's block. */
static bool cursor_open(struct cursor *c, const struct interval_log *log)
{
    *c = (struct cursor){.b = log->head, .log = log};
    if (log->spilled == 0)
        return true;
    c->fbuf = malloc(sizeof(*c->fbuf));
    if (c->fbuf == NULL)
        return false;
    c->fbuf->next = NULL;
    c->fbuf->used = 0;
    c->b = c->fbuf;
    return true;
}

static void cursor_close(struct cursor *c)
{
    free(c->fbuf);
    c->fbuf = NULL;
}

/* The cursor's block is read: the file's next bytes, or the held blocks. */
static void next_block(struct cursor *c)
{
    c->at = 0;
    if (c->b != c->fbuf || c->fbuf == NULL) {
        c->b = c->b->next;
        return;
    }
    uint64_t left = c->log->spilled - c->off;
    if (left == 0) {
        c->b = c->log->head;
        return;
    }
    size_t n = left < BLOCK_BYTES ? (size_t)left : BLOCK_BYTES;
    if (pread(fileno(c->log->spill), c->fbuf->b, n, (off_t)c->off) != (ssize_t)n) {
        c->bad = true;
        c->b = NULL;
        return;
    }
    c->fbuf->used = n;
    c->off += n;
}

static bool at_end(struct cursor *c)
{
    if (c->has_peek)
        return false;
    while (c->b && c->at == c->b->used)
        next_block(c);
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

/* The next second's number, read ahead and kept until taken. */
static uint32_t peek_second(struct cursor *c)
{
    if (!c->has_peek) {
        c->peek = (uint32_t)get_varint(c);
        c->has_peek = true;
    }
    return c->peek;
}

static void take_second(struct cursor *c)
{
    (void)peek_second(c);
    c->has_peek = false;
}

/* What reading needs besides the cursors: room for one second's counters,
 * encoded and deflated, and the inflater. */
struct reader {
    unsigned char *raw, *packed;
    size_t cap;
    z_stream z;
    bool z_ready;
};

struct in {
    const unsigned char *p, *end;
    bool bad;
};

static uint64_t in_varint(struct in *c)
{
    uint64_t v = 0;
    for (int shift = 0; shift < 64 && c->p < c->end; shift += 7) {
        unsigned char x = *c->p++;
        v |= (uint64_t)(x & 0x7f) << shift;
        if (!(x & 0x80))
            return v;
    }
    c->bad = true;
    return 0;
}

/* The n encoded bytes of a second's counters, from min's slot to max's,
 * added to h. */
static bool add_counts(struct histogram *h, const unsigned char *p, size_t n, int64_t min,
                       int64_t max)
{
    struct in c = {p, p + n, false};
    int32_t i = histogram_index(h, min), hi = histogram_index(h, max);
    while (i <= hi && !c.bad) {
        uint64_t z = in_varint(&c);
        int64_t v = (int64_t)(z >> 1) ^ -(int64_t)(z & 1);
        if (v < 0) { /* -v zero counters */
            i += (int32_t)(-v < hi - i + 1 ? -v : hi - i + 1);
            continue;
        }
        h->counts[i++] += v;
        h->total_count += v;
    }
    if (c.bad || c.p != c.end)
        return false;
    if (min < h->min)
        h->min = min;
    if (max > h->max)
        h->max = max;
    return true;
}

static void get_bytes(struct cursor *c, unsigned char *to, size_t n)
{
    for (size_t i = 0; i < n && !c->bad; i++) {
        unsigned char x = get(c);
        if (to)
            to[i] = x;
    }
}

static bool inflated(struct reader *r, size_t z, size_t n)
{
    if (!r->z_ready) {
        if (inflateInit2(&r->z, -WINDOW_BITS) != Z_OK)
            return false;
        r->z_ready = true;
    } else if (inflateReset(&r->z) != Z_OK) {
        return false;
    }
    r->z.next_in = r->packed;
    r->z.avail_in = (uInt)z;
    r->z.next_out = r->raw;
    r->z.avail_out = (uInt)n;
    return inflate(&r->z, Z_FINISH) == Z_STREAM_END && r->z.avail_out == 0;
}

/* One sealed second after its number and op: added to h when add, else
 * passed over. */
static void read_second(struct cursor *c, struct reader *r, struct histogram *h, bool add)
{
    int64_t min = (int64_t)get_varint(c), max = (int64_t)get_varint(c);
    uint64_t n = get_varint(c), z = get_varint(c);
    if (c->bad || min > max || n > r->cap || z > r->cap) {
        c->bad = true;
        return;
    }
    if (!add) {
        get_bytes(c, NULL, z ? z : n);
        return;
    }
    get_bytes(c, z ? r->packed : r->raw, z ? z : n);
    if (c->bad || (z && !inflated(r, z, n)) || !add_counts(h, r->raw, n, min, max))
        c->bad = true;
}

int intervals_each(const struct interval_log *logs, size_t n, int op, uint32_t seconds,
                   interval_fn fn, void *arg)
{
    struct histogram *h = histogram_new(HIST_LOWEST_US, HIST_HIGHEST_US, HIST_SIG_DIGITS);
    /* Emptied into by every second: histogram_move clears only the counters a
     * second used, where a reset would clear all 23,552 each second. */
    struct histogram *spent = histogram_new(HIST_LOWEST_US, HIST_HIGHEST_US, HIST_SIG_DIGITS);
    struct cursor *cur = calloc(n ? n : 1, sizeof(*cur));
    struct reader r = {.cap = h ? (size_t)h->counts_len * MAX_WORD_BYTES : 0};
    r.raw = malloc(r.cap ? r.cap : 1);
    r.packed = malloc(r.cap ? r.cap : 1);
    int rc = h && spent && cur && r.raw && r.packed ? 0 : -1;
    for (size_t i = 0; rc == 0 && i < n; i++)
        if (!cursor_open(&cur[i], &logs[i]))
            rc = -1;
    bool more = n > 0;
    for (uint64_t s = 0; rc == 0 && (s < seconds || more); s++) {
        more = false;
        for (size_t i = 0; i < n && rc == 0; i++) {
            while (!cur[i].bad && !at_end(&cur[i]) && peek_second(&cur[i]) == s) {
                take_second(&cur[i]);
                int which = get(&cur[i]);
                read_second(&cur[i], &r, h, which == op);
            }
            if (cur[i].bad || (!at_end(&cur[i]) && peek_second(&cur[i]) < s))
                rc = -1; /* sealed out of order, or cut short: not a log this file wrote */
            more = more || !at_end(&cur[i]);
        }
        if (rc == 0)
            rc = fn(arg, (uint32_t)s, h);
        histogram_move(spent, h);
    }
    if (r.z_ready)
        inflateEnd(&r.z);
    free(r.raw);
    free(r.packed);
    for (size_t i = 0; cur && i < n; i++)
        cursor_close(&cur[i]);
    free(cur);
    histogram_free(h);
    histogram_free(spent);
    return rc;
}
