/* nest.h - a holder's re-entries of a key it holds alone, kept as a few
 * bytes each rather than as sections in the sweeps: a history in which
 * one owner re-enters a key a million times would otherwise hold a
 * million sections open (check_stream.c decides when they may stay
 * apart: while no other owner can pair with them).
 *
 * Each re-entry is coded against the one below it (the first against the
 * section it re-entered): its entry time and id as deltas, then its ask,
 * mode, token and permits only when they are not the plain case, all as
 * LEB128 varints with a header last, so the newest comes off the top and
 * the whole stack comes back as sections, oldest first.
 */
#ifndef LOCKLAB_NEST_H
#define LOCKLAB_NEST_H

#include <stddef.h>
#include <stdint.h>

#include "sim/check/checker.h"

struct nest {
    uint32_t proc, owner, key; /* whose re-entries, of which key */
    uint64_t n;                /* re-entries held */
    uint64_t top_from, top_id; /* the newest's entry and id; with none, the base section's */
    unsigned char *buf;
    size_t len, cap;
};

/* Start an empty stack on the section base (its process, owner and key;
 * entered at base->from_ns). The first re-entry's id is coded against
 * below_id, any id below it. */
void nest_start(struct nest *t, const struct section *base, uint64_t below_id);
/* Re-entry s (of t's process, owner and key; no sequence; entered no
 * earlier than the top) named id, above the top. 0; -1 out of memory, or
 * an id or time it cannot code (t unchanged: the caller keeps it as a
 * section). */
int nest_push(struct nest *t, const struct section *s, uint64_t id);
/* The newest leaves. */
void nest_pop(struct nest *t);
/* The whole stack as open sections (seq_from HISTORY_NO_SEQ, as an entry
 * with no sequence opens) and their ids, oldest first, in arrays the
 * caller frees; t emptied. 0, or -1 out of memory (t unchanged). */
int nest_take(struct nest *t, struct section **s, uint64_t **ids, size_t *n);
void nest_free(struct nest *t);

#endif
