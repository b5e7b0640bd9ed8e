/* availability.h - what each fault cost the clients, from the history.
 *
 * Per fault span: the acquisitions that failed (the wait ran out) and the
 * ambiguous ones (sent, answer never came) while it was on; the longest
 * stretch inside it during which some client was waiting and none
 * acquired; and the recovery time, from the fault's end (its start, for a
 * kill: a lock service should carry on without the server) to the first
 * acquisition after it. Liveness beside the checker's safety.
 *
 * As a stream (begin / event / end): the events in the history's order,
 * in memory bounded by the clients and the fault spans, never by the
 * run's length; the spans are rebuilt as history_sections pairs them, so
 * out[i] is the window of its spans[i].
 */
#ifndef LOCKLAB_AVAILABILITY_H
#define LOCKLAB_AVAILABILITY_H

#include <stddef.h>
#include <stdint.h>

#include "sim/check/checker.h"
#include "sim/record/history.h"

#define AVAIL_NEVER UINT64_MAX /* no acquisition came after the fault */

struct fault_availability {
    uint64_t granted;             /* acquisitions during the window */
    uint64_t granted_within;      /* of those, the ones also begun inside it: what the
                                     fault let through, not what was decided before it */
    uint64_t failed;              /* acquires that failed (busy, no effect), tried during it */
    uint64_t ambiguous;           /* acquires tried during it whose outcome is unknown */
    uint64_t longest_no_grant_ns; /* clients waiting, nobody acquiring */
    uint64_t recovery_ns;         /* AVAIL_NEVER, or to the first acquisition after */
    uint64_t recovery_from_ns;    /* the moment recovery is counted from */
};

struct availability;

/* NULL: out of memory. */
struct availability *availability_begin(void);
/* One event, not earlier than the one before. 0, or -1 out of memory. */
int availability_event(struct availability *a, const struct history_event *e);
/* The history ended at end_ns: one fault_availability per fault span, in
 * the order the spans started, into *out (malloc'ed, the caller frees) and
 * their number into *n; a frees itself. 0, or -1 out of memory. */
int availability_end(struct availability *a, uint64_t end_ns, struct fault_availability **out,
                     size_t *n);

/* The same over h's events: out[i] for the i-th of h's n fault spans
 * (history_sections'). 0, or -1 out of memory. */
int availability_compute(const struct history *h, size_t n, struct fault_availability *out);

#endif
