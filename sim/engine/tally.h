/* tally.h - what the clients sharing one OS thread measure together: the
 * whole-run histograms of each operation, the same by the second of the
 * run (the .hlog intervals, the latency timeline), the per-second
 * timeline of steps that got or missed their lock, the live window.
 *
 * One per worker (its coroutines write it in turn, never at once): a
 * client's share of the figures costs nothing of its own, so 10,000 clients do not carry 10,000
 * sets of full-range histograms (188 KiB each). Histograms are exact HDR
 * counts, so merging the tallies after the run gives the very figures
 * per-client ones gave. Per-client figures a report needs (fairness) are
 * the client's counters.
 *
 * A sample goes into the histogram of the second it ended in, the open
 * second. A thread's samples come in time order (each is recorded right
 * after its clock reading, without yielding), so it needs no other: when a
 * sample of a later second comes, the open second is sealed into the
 * thread's interval log (intervals.h) and moved into the whole-run
 * histograms, touching only the counters it used. The hot path pays one
 * comparison more than a plain histogram record.
 *
 * A worker's tally hands the seal to a sealer thread (tally_sealer_start):
 * at a turn the worker swaps in a spare zeroed set of histograms and
 * publishes the full one with its second; the sealer seals it into the
 * log, moves it into h[] and hands it back zeroed. The seal (encoding,
 * deflate, moving thousands of counters) then costs the worker's clients
 * nothing but a swap and a wake-up. Should the sealer not have taken the
 * last set by the next turn, the worker seals that one itself first, so
 * the log still gets its seconds in order and every sample stays in its
 * second. log and h[] belong to whoever holds the slot (busy), or to the
 * tally's thread once it has finished. The spare set costs a worker
 * OP_COUNT more full-range histograms (5 x 188 KiB).
 *
 * Memory: only the sealed seconds grow, with the run's seconds and the
 * spread of each second's samples, not their number. Measured (a
 * temporary count of interval_log.bytes at the end of the run): 60 s of
 * bench/uncontended.json at 21,800 steps/s on two workers sealed 540 KB in
 * all, 0.45 KB a second per thread and operation, 16 MB for a 30-minute
 * run at that rate; scenarios/flash_sale_10k.json (10,000 clients, 1,800
 * steps/s) 31 KB in 23 s. The bound per second, thread and operation is a
 * full-range histogram's encoding (23,552 counters), never reached: a
 * second's samples span a few thousand counters at most.
 */
#ifndef LOCKLAB_TALLY_H
#define LOCKLAB_TALLY_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/engine/live.h"
#include "sim/record/histogram.h"
#include "sim/record/intervals.h"
#include "sim/record/measures.h"

struct tally {
    struct histogram *h[OP_COUNT];    /* the whole run: every sealed second moved in */
    struct histogram *open[OP_COUNT]; /* the open second's samples */
    uint64_t open_from_ns;            /* the open second's start (monotonic clock) */
    uint32_t open_second;             /* from the start line */
    bool is_open;
    struct interval_log log;   /* the sealed seconds */
    uint32_t *tl_ok, *tl_fail; /* steps that got / missed the lock, by second */
    size_t tl_len;
    struct live_window live; /* the last seconds' acquire latency, for the live line */
    /* The handoff to the sealer (NULL: the tally's thread seals). */
    struct tally_sealer *sealer;
    struct histogram *spare[OP_COUNT]; /* zeroed while free; the handed set while full */
    uint32_t spare_second;             /* the handed set's second */
    atomic_int slot;                   /* TALLY_SLOT_* */
    uint64_t sealed_off;               /* seconds the sealer sealed (the rest: inline) */
};

enum { TALLY_SLOT_FREE, TALLY_SLOT_FULL, TALLY_SLOT_BUSY };

/* A thread that seals the seconds of tallies[0..n) off their own threads:
 * gives each a spare set of histograms (one that cannot get one keeps
 * sealing on its own thread). NULL when the thread cannot start: every
 * tally then seals on its own thread, as without one. Started before the
 * tallies' threads record, stopped (tally_sealer_stop) before
 * tally_finish or tally_destroy. */
struct tally_sealer *tally_sealer_start(struct tally *tallies, size_t n);
void tally_sealer_stop(struct tally_sealer *s); /* joins it; accepts NULL */

/* 0, or -1 out of memory (what was allocated is freed by tally_destroy). */
int tally_init(struct tally *t, size_t timeline_len);
void tally_destroy(struct tally *t); /* accepts a zeroed one */

/* The slow path of tally_record: end_ns is not in the open second. */
void tally_turn(struct tally *t, uint64_t t0_ns, uint64_t end_ns);

/* A sample of op: ns long, ended at end_ns (the clock reading the caller
 * took), t0_ns the start line. */
static inline void tally_record(struct tally *t, uint64_t t0_ns, enum op_kind op, uint64_t end_ns,
                                uint64_t ns)
{
    if (end_ns - t->open_from_ns >= 1000000000u) /* before it too: unsigned */
        tally_turn(t, t0_ns, end_ns);
    histogram_record(t->open[op], (int64_t)(ns / 1000));
}

/* A step of ns ended at end_ns (t0_ns: the start line). */
void tally_step(struct tally *t, uint64_t t0_ns, uint64_t end_ns, uint64_t ns, int ok);

/* Once the thread is done: the open second sealed (and a set still
 * handed over), h[] whole. */
void tally_finish(struct tally *t);

#endif
