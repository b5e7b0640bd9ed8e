/* pairing.h - how a history's events make critical sections: the one rule
 * the three that rebuild sections share, history_sections (sections.c, a
 * whole history), the streaming checker (check_stream.c) and the
 * violations' context (context.c, the sections around each listed pair).
 * Each keeps its own chains of a process's open sections (an array index,
 * a sweep's slot, a pool of its own); what an event does to them, which
 * section an acquire opens and how one closes are decided here, so the
 * three cannot drift apart.
 *
 * A section runs from a process's acquire ok to its release invoke (or
 * crash) on the same key. A process may hold several keys at once and
 * re-enter one it holds: each release closes the newest on its key; a
 * crash closes every one it held on the key. An acquire by another owner
 * (another life of the process) on a key the process still holds closes
 * the older section as crashed, at the acquire, with no sequence: it must
 * have left, though nobody saw how.
 */
#ifndef LOCKLAB_PAIRING_H
#define LOCKLAB_PAIRING_H

#include <stdbool.h>
#include <stdint.h>

#include "sim/check/checker.h"
#include "sim/record/history.h"

enum section_step {
    STEP_NONE = 0, /* not a section's step (a fault, a failed acquire, ...) */
    STEP_OPEN,     /* acquire ok: a section enters */
    STEP_RELEASE,  /* release invoke: the newest on its key leaves */
    STEP_CRASH,    /* the process died: all it held on the key leave */
};

static inline enum section_step section_step_of(const struct history_event *e)
{
    if (e->f == HF_ACQUIRE && e->type == HT_OK)
        return STEP_OPEN;
    if (e->f == HF_RELEASE && e->type == HT_INVOKE)
        return STEP_RELEASE;
    return e->f == HF_CRASH ? STEP_CRASH : STEP_NONE;
}

/* The section an acquire ok opens, its exit still unknown; asked_ns is
 * when its acquire was asked (asks.h). */
static inline struct section section_of_acquire(const struct history_event *e, uint64_t asked_ns)
{
    return (struct section){
        .key = e->key,
        .owner = e->owner,
        .client = e->client,
        .mode = e->mode,
        .permits = e->permits,
        .token = e->token,
        .from_ns = e->t_ns,
        .asked_ns = asked_ns,
        .seq_from = e->seq,
    };
}

/* What a release or crash leaves in the section it closes. */
static inline uint8_t section_step_effect(enum section_step step, const struct history_event *e)
{
    return step == STEP_RELEASE ? (uint8_t)e->arg : (uint8_t)EFFECT_CRASHED;
}

/* Where a section leaves: an exit before its entry is the entry; a
 * section lacking either witness step has no sequence (seq_to ==
 * HISTORY_NO_SEQ: the exit is known only in time). */
struct section_exit {
    uint64_t to_ns;
    uint64_t seq_to; /* 0 without a sequence */
    bool has_seq;
};

static inline struct section_exit section_exit_at(const struct section *s, uint64_t t,
                                                  uint64_t seq_to)
{
    bool has_seq = s->seq_from != HISTORY_NO_SEQ && seq_to != HISTORY_NO_SEQ;
    return (struct section_exit){.to_ns = t > s->from_ns ? t : s->from_ns,
                                 .seq_to = has_seq ? seq_to : 0,
                                 .has_seq = has_seq};
}

/* Close s in place by that rule; a section without a sequence keeps none
 * (seq_from 0 too), as history_sections has always written it. */
static inline void section_close(struct section *s, uint64_t t, uint64_t seq_to, uint8_t effect)
{
    struct section_exit x = section_exit_at(s, t, seq_to);
    s->to_ns = x.to_ns;
    s->effect = effect;
    s->has_seq = x.has_seq;
    s->seq_to = x.seq_to;
    if (!x.has_seq)
        s->seq_from = 0;
}

#endif
