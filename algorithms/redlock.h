/* redlock.h - lock.redlock, the settings of the locks that vote across
 * independent Redis masters (redlock, redisson-multi); the family is
 * redlock.c's. */
#ifndef LOCKLAB_REDLOCK_H
#define LOCKLAB_REDLOCK_H

#include <stdint.h>

#include "algorithms/lock_family.h"

struct redlock_spec {
    uint32_t nodes;           /* independent Redis masters (default 5) */
    uint32_t node_timeout_ms; /* one node's answer, small against the ttl (default 50) */
    uint32_t quorum;          /* votes needed; 0 in the file = nodes/2 + 1 */
};

extern const struct lock_family redlock_family;

#endif
