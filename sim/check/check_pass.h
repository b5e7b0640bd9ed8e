/* check_pass.h - everything `locklab check` concludes from a history, in
 * one pass over its events: the checker (check_stream.h), each fault
 * window's availability, the stuck keys and the host stalls, each fed the
 * event as it comes. The state is bounded by the keys, the clients, the
 * sections still open and the fault windows, never by the run's length.
 *
 * check_pass_end fills a run_result as result_check_history fills it from
 * a whole history (check, spans, avail, stuck, stalls), but for the
 * sections: none are kept (sections NULL), and each listed overlap
 * carries its two (violation.sa, sb).
 */
#ifndef LOCKLAB_CHECK_PASS_H
#define LOCKLAB_CHECK_PASS_H

#include <stdbool.h>
#include <stdint.h>

#include "sim/check/result.h"
#include "sim/record/history.h"

struct check_pass;

/* lookback_ns and writes_only as result_check_history's. NULL: out of
 * memory. */
struct check_pass *check_pass_begin(uint64_t lookback_ns, bool writes_only);
/* Judge a latch's rounds too (latch_check.h), with its settings from the
 * history's start line: check_pass_end then fills r's invariants with
 * the two the latch workload judges. 0, or -1 out of memory. */
int check_pass_latch(struct check_pass *p, const struct history_latch *s);
/* One event, not earlier than the one before. 0; -1 out of memory; -2 out
 * of time order, or from a process numbered past HISTORY_MAX_CLIENTS. */
int check_pass_event(struct check_pass *p, const struct history_event *e);
/* The history ended at end_ns: r's check, spans, avail, stuck and stalls
 * filled (r->sections left NULL); p freed. 0, or -1 out of memory. */
int check_pass_end(struct check_pass *p, uint64_t end_ns, struct run_result *r);
/* Give up the pass (accepts NULL). */
void check_pass_free(struct check_pass *p);
/* The most sections the checker held at once. */
size_t check_pass_held_peak(const struct check_pass *p);

#endif
