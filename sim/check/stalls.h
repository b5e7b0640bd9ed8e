/* stalls.h - the host stalls of a history (HF_STALL events) as its events
 * come, each cut to its longest stretch in which no other event happened
 * (history_stalls' rule, history.h). The state is the stalls not yet
 * over, and the list of those found: one per stall of the testbed whose
 * cut is at least min_ns long, never per event or per stall line. */
#ifndef LOCKLAB_STALLS_H
#define LOCKLAB_STALLS_H

#include <stddef.h>
#include <stdint.h>

#include "sim/check/checker.h"
#include "sim/record/history.h"

struct stalls;

/* NULL: out of memory. */
struct stalls *stalls_begin(uint64_t min_ns);
/* One event, not earlier than the one before. 0, or -1 out of memory. */
int stalls_event(struct stalls *s, const struct history_event *e);
/* The stalls held now: those found min_ns long, and those not yet over. */
size_t stalls_held(const struct stalls *s);
/* The history ended: the stalls still min_ns long or longer, in time
 * order, into *out (malloc'ed, the caller frees); s frees itself. 0, or
 * -1 out of memory. */
int stalls_end(struct stalls *s, struct host_stall **out, size_t *n);

#endif
