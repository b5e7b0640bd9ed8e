/* tally.h - what the clients sharing one OS thread measure together: the
 * whole-run histograms of each operation, the per-second timeline of
 * steps that got or missed their lock, the live window, every step's
 * latency sample.
 *
 * One per worker (its coroutines write it in turn, never at once), one per
 * client that runs on a thread of its own: a client's share of the
 * figures costs nothing of its own, so 10,000 clients do not carry 10,000
 * sets of full-range histograms (188 KiB each). Histograms are exact HDR
 * counts, so merging the tallies after the run gives the very figures
 * per-client ones gave. Per-client figures a report needs (fairness) are
 * the client's counters.
 */
#ifndef LOCKLAB_TALLY_H
#define LOCKLAB_TALLY_H

#include <stddef.h>
#include <stdint.h>

#include "sim/engine/live.h"
#include "sim/record/intervals.h"
#include "sim/record/measures.h"

struct histogram;

/* Step samples in fixed blocks, never moved nor freed until the run is
 * over: a growing realloc'd array left freed blocks behind in the heap the
 * lock's client library allocates from, and made every hiredis call's
 * malloc slower (500 instructions a cycle more, bench/cycle_instructions.sh);
 * blocks only ever added leave it as it was. */
#define STEP_CHUNK 512
struct step_chunk {
    struct step_chunk *next;
    size_t n;
    struct interval_sample s[STEP_CHUNK];
};

struct tally {
    struct histogram *h[OP_COUNT];
    uint32_t *tl_ok, *tl_fail; /* steps that got / missed the lock, by second */
    size_t tl_len;
    struct live_window live; /* the last seconds' acquire latency, for the live line */
    struct step_chunk *steps, *steps_tail;
    size_t n_steps;
};

/* 0, or -1 out of memory (what was allocated is freed by tally_destroy). */
int tally_init(struct tally *t, size_t timeline_len);
void tally_destroy(struct tally *t); /* accepts a zeroed one */
/* A step of ns ended at end_ns (t0_ns: the start line): one allocation per
 * STEP_CHUNK steps. */
void tally_step(struct tally *t, uint64_t t0_ns, uint64_t end_ns, uint64_t ns, int ok);
void tally_free_steps(struct tally *t);

#endif
