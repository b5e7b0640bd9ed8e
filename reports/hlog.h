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

/* h in the V2 encoding, uncompressed: cookie 0x1c849313, payload length,
 * normalizing index offset 0, significant digits, lowest and highest
 * trackable values, the conversion ratio 1.0 (big-endian), then the counts
 * up to the largest value's as ZigZag LEB128, a run of zeros as one
 * negative number. Into buf[0..cap): the length, or -1 when it does not fit. */
long hlog_encode_raw(const struct histogram *h, unsigned char *buf, size_t cap);
/* The same deflated (zlib) behind cookie 0x1c849314 and its length, then
 * base64: malloc'd, NUL-terminated; NULL out of memory. */
char *hlog_encode(const struct histogram *h);

/* The log's header: start_wall_ns is the run's start line (the log's
 * StartTime and BaseTime). 0, or -1. */
int hlog_begin(FILE *f, uint64_t start_wall_ns);
/* One interval: h, the samples of [second, second + 1) from the start
 * line (intervals.h), the last cut short by the run's end at elapsed_s.
 * Returns 0, or -1 (errno set). */
int hlog_interval(FILE *f, const struct histogram *h, uint32_t second, double elapsed_s);

#endif
