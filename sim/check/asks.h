/* asks.h - when each critical section's acquire was asked, for the
 * rebuilders of sections (pairing.h): per process, its last acquire
 * invoke. A client has one acquire under way at a time, so the ok that
 * follows on the same key is its answer.
 *
 * The ask bounds when the lease began: a server grants between the ask
 * and the ok the client read, so a lease of ttl ran out no earlier than
 * the ask plus ttl and no later than the entry plus ttl (groups.h's
 * blame needs both ends).
 */
#ifndef LOCKLAB_ASKS_H
#define LOCKLAB_ASKS_H

#include <stddef.h>
#include <stdint.h>

#include "sim/record/history.h"

struct ask;

struct asks {
    struct ask *by_proc;
    size_t n;
};

/* e, when it is an acquire's invoke, is its process's ask (processes
 * numbered past HISTORY_MAX_CLIENTS are not followed). 0, or -1 out of
 * memory. */
int asks_event(struct asks *a, const struct history_event *e);
/* The ask the acquire ok `ok` answered: the process's last invoke on the
 * same key, not after the ok; the ok's own time when there is none. */
uint64_t asks_asked_ns(const struct asks *a, const struct history_event *ok);
void asks_free(struct asks *a);

#endif
