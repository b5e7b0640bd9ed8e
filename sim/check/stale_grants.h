/* stale_grants.h - what a history says of grants that went stale where
 * the checker's pairs cannot tell whose grant it was: the late grants, and
 * the grants lost while held that the holder learned of at its release.
 *
 * A late grant: an acquire whose client was stopped (a client_pause of a
 * waiter) while the acquire was in flight. A stopped client sends nothing,
 * so a grant it entered on right after the stop was asked for before it:
 * the server's lease ran from then, not from the entry, and may have run
 * out before the client entered (a reply held in the socket while the
 * process stood still, Kleppmann's pause). Such a holder enters after a
 * valid one as often as before it, so a group (groups.h) must ask this
 * list whose grant was stale, not the order of entry.
 *
 * Lost at release: a release that answered not-owner (HE_LOST): the
 * grant was gone while its holder still acted on it, and the holder
 * learned of it only then (a watchdog's failed renewal is not the business
 * code's news). Optimistic concurrency's commits answer so on a conflict,
 * which is no lost grant: they are not counted.
 *
 * Fed each event in the history's order, as check_pass's consumers are;
 * the state is a few words per client and the late grants kept.
 */
#ifndef LOCKLAB_STALE_GRANTS_H
#define LOCKLAB_STALE_GRANTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/record/history.h"

/* The most late grants kept: one per client stopped while it waited, a
 * few per scenario; a history from elsewhere may have more. */
#define LATE_GRANTS_MAX 1000

/* What a late grant's release answered. */
enum late_release {
    LATE_HELD = 0, /* no answer yet: held to the end, or its holder died */
    LATE_RELEASED, /* released (a lock may say so of a key nobody held) */
    LATE_LOST,     /* not-owner: the server had let it go */
    LATE_UNKNOWN,  /* sent, no answer (or never sent) */
};

struct late_grant {
    uint32_t client, key;
    uint32_t stop_kind;    /* the fault kind that stopped it (fault_type_name) */
    uint8_t release;       /* enum late_release */
    uint64_t asked_ns;     /* its acquire's invoke */
    uint64_t stop_from_ns; /* the stop, inside the acquire */
    uint64_t stop_to_ns;   /* its end, or the entry when the end came later in the history */
    uint64_t entered_ns;   /* the acquire's ok: its section's from_ns */
};

struct stale_grants;

/* writes_only: the lock is optimistic concurrency (its not-owner answers
 * are conflicts). NULL: out of memory. */
struct stale_grants *stale_grants_begin(bool writes_only);
/* One event, in the history's order. 0, or -1 out of memory. */
int stale_grants_event(struct stale_grants *t, const struct history_event *e);
/* The history ended: the late grants in entry order into *late (malloc'ed,
 * the caller frees; NULL when none), their number, and the releases that
 * answered not-owner; t freed. */
void stale_grants_end(struct stale_grants *t, struct late_grant **late, size_t *n_late,
                      uint64_t *lost_at_release);
/* Give up (accepts NULL). */
void stale_grants_free(struct stale_grants *t);

/* Had the grant been asked before the stop, it could not have outlived
 * stop_from + lease: did that come before the entry, and did the entry
 * follow the stop's end soon enough (within a lease) to be the answer
 * held meanwhile? Its release's answer cannot say otherwise: Redisson's
 * fair lock answers "released" to the unlock of a key nobody holds. */
static inline bool late_grant_lapsed(const struct late_grant *g, uint64_t lease_ns)
{
    return lease_ns && g->stop_from_ns + lease_ns <= g->entered_ns &&
           g->entered_ns - g->stop_to_ns < lease_ns;
}

#endif
