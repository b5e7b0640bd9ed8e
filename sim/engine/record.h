/* record.h - the run's history as the run goes (runner_state.h's side of
 * it): the recorder (sim/record/recorder.h) takes every client's, the
 * nemesis's and the stall meter's events in order, and this file's sink
 * makes each whole (the witness's seq unwrapped, its owner named) and
 * writes it to the run's journal (history.llh). Only runner.c and
 * collect.c include it.
 */
#ifndef LOCKLAB_RECORD_H
#define LOCKLAB_RECORD_H

#include <stddef.h>
#include <stdint.h>

struct runner;
struct run_result;

/* The lock's lease and the longest holder stall it rides out (history.h's
 * ttl_ms and slack_ms). */
uint32_t record_lease_ms(const struct runner *r);
uint32_t record_slack_ms(const struct runner *r);

/* At the start line (t0 set, the stall meter started): the start record
 * written and the recorder started. 0, or -1 with err set. */
int record_start(struct runner *r, char *err, size_t errlen);
/* Every appender done: the recorder stopped, and what it counted in res
 * (history_events, unreached_acquires, dropped); the journal handed to
 * res. Late events make the run incomplete. */
void record_stop(struct runner *r, struct run_result *res);
void record_free(struct runner *r); /* accepts a runner that never recorded */

#endif
