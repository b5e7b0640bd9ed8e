/* spans.h - fault spans rebuilt from a history's events as they come, by
 * the one rule (a start paired with the earliest running end of the same
 * fault, type and target) that history_sections, the streaming checker
 * and the consumers that need the windows as they open and close
 * (availability) share. A scenario has a few faults: the spans are kept
 * whole, as the report keeps them. */
#ifndef LOCKLAB_SPANS_H
#define LOCKLAB_SPANS_H

#include <stddef.h>

#include "sim/check/checker.h"
#include "sim/record/history.h"

struct span_track {
    struct fault_span *fs; /* in the order they started; to_ns UINT64_MAX while on */
    size_t n, cap;
    size_t *open; /* indices of those still on */
    size_t n_open, cap_open;
};

/* A fault event (HF_FAULT) into t. Returns the span it opened or closed,
 * SIZE_MAX when none (an end that matches nothing), or SPAN_OOM when
 * memory ran out. */
#define SPAN_OOM ((size_t)-2)
size_t span_track_event(struct span_track *t, const struct history_event *e);
void span_track_free(struct span_track *t);

#endif
