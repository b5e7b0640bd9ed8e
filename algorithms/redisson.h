/* redisson.h - lock.redisson, the Redisson locks' client settings
 * (redisson_fair.c's family; their topology is lock.redis's). */
#ifndef LOCKLAB_REDISSON_H
#define LOCKLAB_REDISSON_H

#include <stdint.h>

#include "algorithms/lock_family.h"

struct redisson_spec {
    uint32_t fair_wait_ms; /* RFairLock's threadWaitTime (default 300000, Redisson's 5 min) */
};

extern const struct lock_family redisson_family;

#endif
