/* context.h - the sections around each drawn group of violations, and
 * each listed pair's two, rebuilt from a stream of history events, for the
 * reports: report.html draws, for the groups with the most violations
 * (groups.h), a timeline of the key in a window around the stale holder
 * and all that overlapped it (reports/html_timelines.c), and every report
 * names each pair's two sections.
 *
 * A run that checks its history in one pass (check_pass.h) keeps no
 * sections: each listed pair carries its two (violation.sa, sb) and is
 * named by the order its holders entered. A second pass over the history
 * (a run's own history.llh, after the run) through a context rebuilds only
 * the sections on a drawn group's key that fall in its window, by the
 * pairing every section builder shares (pairing.h), and fills r->sections
 * with them and every listed pair's two, in the order the whole-history
 * check sorts its sections (checker.h: by key, then entry), each listed
 * pair's a and b made indices into it. Its memory is the sections open on
 * those keys and the ones it keeps, never the run's length.
 */
#ifndef LOCKLAB_CONTEXT_H
#define LOCKLAB_CONTEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/check/checker.h"
#include "sim/check/result.h"
#include "sim/record/history.h"

/* The groups report.html draws a timeline for: this many with the most
 * violations (groups_drawn). */
#define CONTEXT_WINDOWS 10
/* A group's window ends at most this long after its first overlap, so a
 * holder stale to the end of a long soak does not keep every section of
 * its key: the first seconds tell how it went. */
#define CONTEXT_GROUP_SPAN_NS 10000000000ULL

/* The sections a violation's timeline draws: those of its key that reach
 * into [w0_ns, w1_ns] and entered no earlier than early_ns. */
struct context_window {
    uint32_t key;
    uint64_t early_ns, w0_ns, w1_ns;
};

/* The window around the pair a, b: their span padded by a quarter of it
 * (50 ms at least) on each side, not before t0_ns; a section may have
 * entered up to a minute before it and still reach into it. */
struct context_window context_window_of(const struct section *a, const struct section *b,
                                        uint64_t t0_ns);
/* The window around group g: its stale holder's entry to the last exit of
 * it or any that overlapped it (at most CONTEXT_GROUP_SPAN_NS past the
 * first overlap), padded as a pair's. */
struct context_window context_window_of_group(const struct violation_group *g, uint64_t t0_ns);

static inline bool context_in_window(const struct context_window *w, const struct section *s)
{
    return s->key == w->key && s->from_ns >= w->early_ns && s->from_ns <= w->w1_ns &&
           s->to_ns >= w->w0_ns;
}

/* Listed pair v's sections, the one that entered first and the other:
 * r's array when it keeps one (the whole history's, or a context's), else
 * the pair's own copies. */
static inline const struct section *violation_first(const struct run_result *r,
                                                    const struct violation *v)
{
    return r->sections ? &r->sections[v->a] : &v->sa;
}

static inline const struct section *violation_second(const struct run_result *r,
                                                     const struct violation *v)
{
    return r->sections ? &r->sections[v->b] : &v->sb;
}

struct context;

/* A context for r's listed pairs and groups (r->check from a one-pass
 * check: pairs named by entry order, r->sections NULL), windows around the
 * `windows` groups report.html draws (groups_drawn; CONTEXT_WINDOWS for
 * report.html), placed by r->t0_mono_ns. NULL: out of memory. */
struct context *context_begin(const struct run_result *r, size_t windows);
/* One event of the history r was checked from, in its order. 0; -1 out of
 * memory; -2 out of time order, or from a process numbered past
 * HISTORY_MAX_CLIENTS. */
int context_event(struct context *x, const struct history_event *e);
/* The history ended at end_ns (sections still held end there, as the
 * checker leaves them): r->sections and r->n_sections filled, each listed
 * pair's a and b remapped into them; x freed. 0, or -1 out of memory (r
 * as it was). */
int context_end(struct context *x, uint64_t end_ns, struct run_result *r);
/* Give up (accepts NULL). */
void context_free(struct context *x);
/* The most sections it held at once, open and kept. */
size_t context_held_peak(const struct context *x);

/* The whole second pass over the history file at path (history.llh or
 * .jsonl, history_reader.h) into r, as context_begin..context_end. 0; -1
 * out of memory; -2 the file could not be read to its end or its events
 * are out of order, with "path...: why" in err. r is left as it was on
 * error. */
int context_from_file(const char *path, struct run_result *r, size_t windows, char *err,
                      size_t errlen);

#endif
