/* check_stream.h - the offline checker over a history's events as they
 * come, in memory bounded by the keys, the clients and the sections still
 * open (sweep.h), not by the run's length.
 *
 * checker_event takes the events in the history's order (time order);
 * it rebuilds the critical sections and the fault spans as
 * history_sections does and hands the sections to the checker's sweeps.
 * checker_end fills the same check_result checker_run would on
 * history_sections' output: the same counts; the listed pairs named by
 * the order their holders entered (history_sections' indices), in the
 * order they were judged, each with its two sections (sa, sb).
 */
#ifndef LOCKLAB_CHECK_STREAM_H
#define LOCKLAB_CHECK_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/check/checker.h"
#include "sim/record/history.h"

struct checker;

/* lookback_ns, max_listed and writes_only as checker_run's. out is zeroed
 * and filled by checker_end. NULL: out of memory. */
struct checker *checker_begin(uint64_t lookback_ns, size_t max_listed, bool writes_only,
                              struct check_result *out);
/* One event, not earlier than the one before. 0; -1 out of memory; -2 it
 * came out of time order, or from a process numbered past
 * HISTORY_MAX_CLIENTS (the checker is left as it was, and must still be
 * ended). */
int checker_event(struct checker *c, const struct history_event *e);
/* The history ended at end_ns: sections still open stay open (EFFECT_OPEN,
 * checker.h), everything is judged, out completed, c freed. The fault
 * spans (history_sections') go to *faults and *n_faults when faults is
 * not NULL (the caller frees them). 0, or -1 out of memory (out emptied). */
int checker_end(struct checker *c, uint64_t end_ns, struct fault_span **faults, size_t *n_faults);
/* Sections the checker holds now, and the most it ever held. */
size_t checker_held(const struct checker *c);
size_t checker_held_peak(const struct checker *c);

#endif
