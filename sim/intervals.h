/* intervals.h - every operation's samples by the second of the run they
 * ended in: the per-second histograms of the .hlog interval logs.
 *
 * The samples are the very values the whole-run histograms recorded (the
 * same clock readings, in microseconds), rebuilt from the history once the
 * run is over (the whole step's come from each client's step log), so the
 * seconds of one operation add up exactly to its .hgrm. */
#ifndef LOCKLAB_INTERVALS_H
#define LOCKLAB_INTERVALS_H

#include <stddef.h>
#include <stdint.h>

struct run_result;

struct interval_sample {
    uint64_t us;
    uint32_t second; /* since the start line */
};

/* The samples of op (enum op_kind) in *out (malloc'd; the caller frees),
 * sorted by second. 0, or -1 out of memory. */
int intervals_collect(const struct run_result *r, int op, struct interval_sample **out, size_t *n);

#endif
