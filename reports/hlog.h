/* hlog.h - HdrHistogram's interval log (.hlog), format version 1.3.
 *
 * One line per interval: its start (seconds from the log's StartTime), its
 * length, its largest value, and its histogram in HdrHistogram's V2
 * encoding, deflated and base64-encoded, as HistogramLogWriter writes it;
 * HistogramLogProcessor and HistogramLogReader read these files. locklab
 * writes one interval per second of the run (empty ones too, so a reader
 * sees the stalls), values in microseconds, Interval_Max in milliseconds.
 */
#ifndef LOCKLAB_HLOG_H
#define LOCKLAB_HLOG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct histogram;
struct interval_sample;

/* h in the V2 encoding, uncompressed: cookie 0x1c849313, payload length,
 * normalizing index offset 0, significant digits, lowest and highest
 * trackable values, the conversion ratio 1.0 (big-endian), then the counts
 * up to the largest value's as ZigZag LEB128, a run of zeros as one
 * negative number. Into buf[0..cap): the length, or -1 when it does not fit. */
long hlog_encode_raw(const struct histogram *h, unsigned char *buf, size_t cap);
/* The same deflated (zlib) behind cookie 0x1c849314 and its length, then
 * base64: malloc'd, NUL-terminated; NULL out of memory. */
char *hlog_encode(const struct histogram *h);

/* The log of one operation: samples sorted by second (intervals.h), one
 * line for each second in [0, seconds); start_wall_ns is the run's start
 * line (the log's StartTime); elapsed_s ends the last interval. Returns 0,
 * or -1 (errno set). */
int hlog_write(FILE *f, const struct interval_sample *s, size_t n, uint32_t seconds,
               uint64_t start_wall_ns, double elapsed_s);

#endif
