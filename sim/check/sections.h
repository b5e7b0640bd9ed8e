/* sections.h - what a whole history in memory makes: its critical
 * sections and fault spans (sections.c), and its host stalls. The
 * streaming form of the same rules is check_stream.h. */
#ifndef LOCKLAB_SECTIONS_H
#define LOCKLAB_SECTIONS_H

#include "sim/check/checker.h"
#include "sim/record/history.h"

/* Reconstruct critical sections and fault spans from h's events: a section
 * runs from its acquire ok to the release invoke (or crash) of the same
 * process on the same key, in the ok's mode; a process may hold several
 * keys at once, and re-enter a key it holds as the same owner (a nested
 * section: a release closes the newest, a crash all of them). One
 * still open at the end of the history is EFFECT_OPEN (to_ns =
 * end_mono_ns, for reports; the checker treats it as endless). A fault
 * still active at the end has to_ns = UINT64_MAX. Arrays are malloc'ed and
 * owned by the caller. Returns 0, or -1 out of memory. */
int history_sections(const struct history *h, struct section **sections, size_t *n_sections,
                     struct fault_span **faults, size_t *n_faults);

/* The host stalls among h's events (HF_STALL), in time order, each cut to
 * its longest stretch in which no other event happened: a thread that
 * logged something meanwhile shows the process was not stopped whole (the
 * meter's thread alone was late). Those still min_ns long or longer. The
 * array is malloc'ed and owned by the caller. Returns 0, or -1 out of
 * memory. */
int history_stalls(const struct history *h, uint64_t min_ns, struct host_stall **stalls, size_t *n);

#endif
