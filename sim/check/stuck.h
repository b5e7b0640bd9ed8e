/* stuck.h - stuck locks: per key, the time clients spent waiting for it
 * while nobody held it.
 *
 * Safety asks whether two clients held a key at once; liveness asks the
 * opposite question. A key is stuck while some client waits to acquire it
 * and no client believes it holds it: the lock is on the server all the
 * same (a crashed holder's key until its ttl, a key an unanswered acquire
 * left behind, a key a failover lost the release of), or the server does
 * not answer. Every acquire of a free key adds its round trip, and a lock
 * that polls (Redis, Redlock) short stretches at every hand-over, up to
 * its retry backoff; a stretch far longer than those is a stuck lock. Redisson's
 * users report such locks after failovers.
 *
 * As a stream (begin / event / end): the events in the history's order,
 * in memory bounded by the keys, the clients and the sections still open.
 */
#ifndef LOCKLAB_STUCK_H
#define LOCKLAB_STUCK_H

#include <stddef.h>
#include <stdint.h>

#include "sim/check/checker.h"
#include "sim/record/history.h"

struct stuck_key {
    uint32_t key;             /* key id in the history */
    uint64_t longest_ns;      /* the longest stretch with waiters and no holder */
    uint64_t longest_from_ns; /* when it began (CLOCK_MONOTONIC) */
    uint64_t total_ns;        /* all such stretches together */
    uint64_t stretches;       /* how many (of non-zero length) */
};

struct stuck;

/* NULL: out of memory. */
struct stuck *stuck_begin(void);
/* One event, not earlier than the one before. 0, or -1 out of memory. */
int stuck_event(struct stuck *s, const struct history_event *e);
/* The history ended at end_ns (what is still held or awaited lasts to
 * it): per key with any stuck time, longest first, into *out (malloc'ed,
 * the caller frees); s frees itself. 0, or -1 out of memory. */
int stuck_end(struct stuck *s, uint64_t end_ns, struct stuck_key **out, size_t *n_out);

/* The same over h's events. 0, or -1 out of memory. */
int stuck_compute(const struct history *h, struct stuck_key **out, size_t *n_out);

#endif
