/* intervals.h - every operation's samples by the second of the run they
 * ended in: the per-second histograms of the .hlog interval logs and the
 * per-second acquire latency of report.json (latency_timeline.c).
 *
 * Each thread records its samples into a histogram of the second it is in
 * (tally.h); when a later second begins, that histogram is sealed here
 * into a compact form and appended to the thread's log. After the run the
 * threads' logs are merged exactly, second by second. The samples are the
 * very ones the whole-run histograms hold (tally.c moves each sealed
 * second into them), so the seconds of one operation add up exactly to its
 * .hgrm, and the memory grows with the run's seconds, not its events.
 *
 * A sealed second: its number and the operation, the exact smallest and
 * largest value (microseconds), then the counters from the smallest's slot
 * to the largest's, each a ZigZag LEB128 word, a run of zeros one negative
 * word (HdrHistogram's V2 encoding of counts), deflated when that makes
 * them shorter (as the .hlog deflates them: about half). A busy second
 * touches a few thousand counters, a byte or two each before deflating; a
 * quiet one costs a dozen bytes, an empty one nothing.
 */
#ifndef LOCKLAB_INTERVALS_H
#define LOCKLAB_INTERVALS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct histogram;
struct interval_block;
struct interval_scratch;

/* One thread's sealed seconds, seconds ascending. Fixed blocks only ever
 * added during the run (tally.h says why nothing is realloc'd there). */
struct interval_log {
    struct interval_block *head, *tail;
    /* Full blocks past the head go to an unnamed file as they fill, so a
     * run's memory does not grow with its seconds: spilled bytes of it
     * come before head. NULL: none yet (or no file could be made). */
    FILE *spill;
    uint64_t spilled;
    bool spill_broken;                /* a write failed: what follows stays in memory */
    struct interval_scratch *scratch; /* made by the first seal, freed with the log */
    size_t bytes;                     /* sealed bytes, the blocks' use */
    uint64_t late; /* samples that ended before their thread's open second (tally.c) */
    uint64_t lost; /* seconds not sealed for want of memory: in the .hgrm, not the .hlog */
};

/* Append h, the samples of op (enum op_kind) that ended in second (from
 * the start line), to log. h is not changed; an empty h adds nothing. A
 * log's seconds must come in ascending order. 0, or -1 out of memory (the
 * log is as it was, and counts the second lost). */
int intervals_seal(struct interval_log *log, uint32_t second, int op, const struct histogram *h);
void intervals_log_free(struct interval_log *log); /* accepts a zeroed one */

/* Called for each second with op's samples of that second, all logs
 * merged: its counters, count, min and max (no sum: no mean); empty in a
 * second without any. A non-zero return stops the walk. */
typedef int (*interval_fn)(void *arg, uint32_t second, const struct histogram *h);

/* fn for every second in [0, seconds), and on past it while a log holds
 * later ones. Returns fn's first non-zero return, 0, or -1 (out of memory,
 * or a log out of order). */
int intervals_each(const struct interval_log *logs, size_t n, int op, uint32_t seconds,
                   interval_fn fn, void *arg);

#endif
