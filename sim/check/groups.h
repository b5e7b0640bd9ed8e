/* groups.h - the checker's violations grouped by cause (checker.h's
 * struct violation_groups), counted as the sweeps find them, in memory
 * bounded by the sections held and CHECK_MAX_GROUPS, never by the pairs.
 *
 * The rule: one group per stale holder. In a pair (a, b) a entered first
 * and was still inside when b entered; a is the section that outlived its
 * claim (a holder paused past its lease, a grant the server forgot), and
 * every b that entered while it was inside is one more consequence of that
 * one failure. A fault is not the unit, for three reasons: one fault may
 * strand holders on several keys, and each key's timeline tells its own
 * story; a stale holder may have no fault at all (a host stall, an unsafe
 * lock such as redis-naive); and the faults near a pair are named by a
 * lookback, so one pair may name two faults. The faults near a group are
 * kept with it, as a pair's are.
 *
 * The sweeps (sweep.c) call groups_pair for every unfenced pair, a handle
 * per section kept in the sweep's slot, and groups_leave when a section
 * leaves the sweeps for good: its group is then complete, and competes
 * for the CHECK_MAX_GROUPS kept places by its pairs (ties: the earlier
 * holder); a group that loses is counted in other_groups and other_pairs.
 * What a group holds (pairs, span, the lowest-numbered clients) does not
 * depend on the order its pairs come in, so a stream and a whole history
 * group alike.
 */
#ifndef LOCKLAB_GROUPS_H
#define LOCKLAB_GROUPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/check/checker.h"

/* No group yet: a handle's first value. */
#define GROUP_NONE UINT32_MAX

struct group_track {
    struct violation_group *open; /* groups whose holder is still in the sweeps */
    uint32_t *free;               /* free places in open */
    size_t n_open, cap_open, n_free, cap_free;
    struct violation_group *kept; /* a min-heap on (pairs, then the later holder first) */
    size_t n_kept, cap_kept;
    size_t live; /* groups whose holder has not left */
    bool failed; /* out of memory on a leave */
    struct violation_groups *out;
};

/* out zeroed; its writes_only set. */
void groups_begin(struct group_track *t, struct violation_groups *out, bool writes_only);
/* An unfenced pair: a (handle *h, GROUP_NONE at first) entered first,
 * b overlapped it. 0, or -1 out of memory. */
int groups_pair(struct group_track *t, uint32_t *h, const struct section *a,
                const struct section *b);
/* The section of handle *h left the sweeps: its group, if any, is done
 * (out of memory is told by groups_finish). */
void groups_leave(struct group_track *t, uint32_t *h);
/* Every section has left: out->list sorted by the holders' entry, t's
 * memory freed. 0, or -1 out of memory on the way (out emptied). */
int groups_finish(struct group_track *t);
/* Give up (t's memory and out's list freed). */
void groups_free(struct group_track *t);

/* The later side of a group for the rules that name a pair's faults and
 * stalls: a section from the first overlap to the last. */
struct section groups_later(const struct violation_group *g);

/* Whether s (another section of g's key) is one of g's pairs by the
 * checker's rule for two exclusive or shared holds: another owner, a mode
 * that conflicts, entered after the stale holder and before it left (on
 * the witness's sequence when both carry one, else in time), and not
 * fenced. A permit past its count pairs with one holder only, and is not
 * found by this. */
bool groups_pairs_with(const struct violation_groups *gs, const struct violation_group *g,
                       const struct section *s);

/* Whose grant was stale in a group, as the history shows it; the words
 * for each are reports/violation_groups.c's. */
enum group_blame_kind {
    BLAME_NOT_KNOWN = 0, /* the lock's lease is not known */
    BLAME_OUTLIVED,      /* the holder's lease may have run out before the first other holder
                            entered (it had by then if granted as late as its ask) */
    BLAME_LOST,          /* the first other holder entered before the holder's lease could
                            have run out, granted as early as its ask */
    BLAME_LATE_HOLDER,   /* the holder entered on a late grant (stale_grants.h) that had lapsed */
    BLAME_LATE_ENTRANT,  /* the first other holder did: the holder's grant was sound */
    BLAME_SESSION_ENDED, /* no lease: a fault of its servers or its connection, while it held */
    BLAME_SESSION_LOST,  /* no lease, and nothing in the history ended its session */
    BLAME_KINDS
};
/* report.json's names: "not_known", "outlived", "lost", ... */
extern const char *const group_blame_names[BLAME_KINDS];

struct late_grant;

/* What the blame is judged from: the lock's lease (0 when not known),
 * whether it has none at all (lock_ops.leaseless), the late grants and
 * the fault spans of the run. */
struct blame_facts {
    uint64_t lease_ns;
    bool leaseless;
    const struct late_grant *late;
    size_t n_late;
    const struct fault_span *spans;
    size_t n_spans;
};

struct group_blame {
    enum group_blame_kind why;
    const struct late_grant *late; /* BLAME_LATE_*: the lapsed grant */
    size_t span;                   /* BLAME_SESSION_ENDED: the fault span that ended it */
    uint64_t lease_end_ns;         /* the latest the holder's lease as granted ran to; 0: none */
    uint64_t lease_end_min_ns;     /* OUTLIVED, LOST: the earliest (its ask plus the lease) */
};

/* The blame of g, in this order: a lock with no lease (its session);
 * none known; the holder's own grant late and lapsed; the first other
 * holder's; the holder's lease run out before that entry; else lost. */
struct group_blame groups_blame(const struct violation_group *g, const struct blame_facts *f);

/* Which kept groups report.html draws: at most max, those with the most
 * pairs (ties: the earlier), their indices into gs->list in its order.
 * Returns how many, into idx. */
size_t groups_drawn(const struct violation_groups *gs, size_t max, size_t *idx);

#endif
