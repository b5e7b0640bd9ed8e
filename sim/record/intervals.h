/* intervals.h - every operation's samples by the second of the run they
 * ended in: the per-second histograms of the .hlog interval logs and the
 * per-second acquire latency of report.json (latency_timeline.c).
 *
 * The samples are the very clock readings the whole-run histograms
 * recorded (which keep them in microseconds), rebuilt from the history
 * once the run is over (the whole step's come from each client's step
 * log), so the seconds of one operation add up exactly to its .hgrm. */
#ifndef LOCKLAB_INTERVALS_H
#define LOCKLAB_INTERVALS_H

#include <stddef.h>
#include <stdint.h>

struct history;
struct run_result;

struct interval_sample {
    uint64_t ns;
    uint32_t second; /* since the start line */
};

/* The samples of op (enum op_kind) in *out (malloc'd; the caller frees),
 * sorted by second. 0, or -1 out of memory. */
int intervals_collect(const struct run_result *r, int op, struct interval_sample **out, size_t *n);
/* The same for the operations the history alone holds: OP_ACQUIRE (from
 * each invoke, or its step's due time, to the grant), OP_ACQUIRE_FAILED
 * and OP_RELEASE. */
int intervals_of_history(const struct history *h, int op, struct interval_sample **out, size_t *n);

#endif
