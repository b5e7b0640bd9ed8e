/* hlog.c - HdrHistogram interval logs (.hlog), see hlog.h. */
#include "reports/hlog.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

#include "sim/record/histogram.h"

#define COOKIE_V2            0x1c849313u /* V2 encoding, 9-byte LEB128 words */
#define COOKIE_V2_COMPRESSED 0x1c849314u
#define HEADER_BYTES         40
#define MAX_WORD_BYTES       9

struct out {
    unsigned char *p, *end;
};

static bool put_be(struct out *o, uint64_t v, int bytes)
{
    if (o->end - o->p < bytes)
        return false;
    for (int i = bytes - 1; i >= 0; i--)
        *o->p++ = (unsigned char)(v >> (8 * i));
    return true;
}

/* ZigZag, then LEB128 of at most 9 bytes: the ninth keeps all 8 bits. */
static bool put_zigzag(struct out *o, int64_t v)
{
    uint64_t z = ((uint64_t)v << 1) ^ (v < 0 ? UINT64_MAX : 0);
    for (int i = 0; i < MAX_WORD_BYTES; i++) {
        if (o->p == o->end)
            return false;
        if (i == MAX_WORD_BYTES - 1 || z < 0x80) {
            *o->p++ = (unsigned char)z;
            return true;
        }
        *o->p++ = (unsigned char)(z | 0x80);
        z >>= 7;
    }
    return true;
}

static bool put_counts(struct out *o, const struct histogram *h)
{
    int32_t limit = h->total_count ? histogram_index(h, h->max) + 1 : 1;
    if (limit > h->counts_len)
        limit = h->counts_len; /* a max above the top lands in the last counter */
    for (int32_t i = 0; i < limit;) {
        int64_t count = h->counts[i++];
        int64_t zeros = 0;
        if (count == 0)
            for (zeros = 1; i < limit && h->counts[i] == 0; i++)
                zeros++;
        if (!put_zigzag(o, zeros > 1 ? -zeros : count))
            return false;
    }
    return true;
}

long hlog_encode_raw(const struct histogram *h, unsigned char *buf, size_t cap)
{
    struct out o = {buf, buf + cap};
    double ratio = 1.0;
    uint64_t ratio_bits;
    memcpy(&ratio_bits, &ratio, sizeof(ratio_bits));
    if (!put_be(&o, COOKIE_V2, 4) || !put_be(&o, 0, 4) /* payload length, below */ ||
        !put_be(&o, 0, 4) || !put_be(&o, (uint64_t)h->sig_digits, 4) ||
        !put_be(&o, (uint64_t)h->lowest, 8) || !put_be(&o, (uint64_t)h->highest, 8) ||
        !put_be(&o, ratio_bits, 8) || !put_counts(&o, h))
        return -1;
    struct out len = {buf + 4, buf + 8};
    put_be(&len, (uint64_t)(o.p - buf - HEADER_BYTES), 4);
    return (long)(o.p - buf);
}

static char *base64(const unsigned char *in, size_t n)
{
    static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char *out = malloc(4 * ((n + 2) / 3) + 1), *p = out;
    if (out == NULL)
        return NULL;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)in[i] << 16;
        if (i + 1 < n)
            v |= (uint32_t)in[i + 1] << 8;
        if (i + 2 < n)
            v |= in[i + 2];
        *p++ = abc[v >> 18];
        *p++ = abc[(v >> 12) & 63];
        *p++ = i + 1 < n ? abc[(v >> 6) & 63] : '=';
        *p++ = i + 2 < n ? abc[v & 63] : '=';
    }
    *p = '\0';
    return out;
}

char *hlog_encode(const struct histogram *h)
{
    size_t cap = HEADER_BYTES + (size_t)h->counts_len * MAX_WORD_BYTES;
    unsigned char *raw = malloc(cap);
    uLongf zlen = compressBound(cap);
    unsigned char *z = malloc(8 + zlen);
    char *text = NULL;
    long n = raw && z ? hlog_encode_raw(h, raw, cap) : -1;
    /* Java's Deflater: zlib's stream format at its default level */
    if (n >= 0 && compress2(z + 8, &zlen, raw, (uLong)n, Z_DEFAULT_COMPRESSION) == Z_OK) {
        struct out o = {z, z + 8};
        put_be(&o, COOKIE_V2_COMPRESSED, 4);
        put_be(&o, zlen, 4);
        text = base64(z, 8 + zlen);
    }
    free(raw);
    free(z);
    return text;
}

int hlog_begin(FILE *f, uint64_t start_wall_ns)
{
    time_t t = (time_t)(start_wall_ns / 1000000000u);
    struct tm tm;
    char when[64];
    gmtime_r(&t, &tm);
    strftime(when, sizeof(when), "%a %b %d %H:%M:%S UTC %Y", &tm);
    double start = (double)start_wall_ns / 1e9;
    int rc = fprintf(f,
                     "#[Logged with locklab %s: values in microseconds, Interval_Max in "
                     "milliseconds]\n"
                     "#[Histogram log format version 1.3]\n"
                     "#[StartTime: %.3f (seconds since epoch), %s]\n"
                     "#[BaseTime: %.3f (seconds since epoch)]\n"
                     "\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\","
                     "\"Interval_Compressed_Histogram\"\n",
                     LOCKLAB_VERSION, start, when, start);
    return rc < 0 ? -1 : 0;
}

/* One second's line; the last second may be cut short by the run's end.
 * Its length is written to the millisecond, never as 0.000: a run that
 * ends a fraction of a millisecond past a whole second (the coroutine
 * engine's clients leave that close to the deadline) still has that
 * second's interval, and a reader takes a zero length for none. */
int hlog_interval(FILE *f, const struct histogram *h, uint32_t second, double elapsed_s)
{
    double len = elapsed_s - second;
    if (len > 1.0 || len <= 0.0)
        len = 1.0;
    if (len < 0.001)
        len = 0.001;
    char *text = hlog_encode(h);
    if (text == NULL) {
        errno = ENOMEM;
        return -1;
    }
    int rc = fprintf(f, "%.3f,%.3f,%.3f,%s\n", (double)second, len, (double)h->max / 1000.0, text);
    free(text);
    return rc < 0 ? -1 : 0;
}
