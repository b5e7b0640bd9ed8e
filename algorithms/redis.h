/* redis.h - lock.redis, the topology of the locks on one Redis master (redis,
 * the Redisson locks): a master alone, or with replicas (their replication
 * through locklab's proxy) and sentinels that fail over; the family is
 * redis_family.c's. */
#ifndef LOCKLAB_REDIS_H
#define LOCKLAB_REDIS_H

#include <stdint.h>

#include "algorithms/lock.h"
#include "algorithms/lock_family.h"

struct redis_spec {
    uint32_t replicas;        /* 0..2; 1 when sentinels are asked and this is not */
    uint32_t sentinels;       /* 0 (none), 1 or 3 */
    uint32_t wait_replicas;   /* after SET: WAIT this many replicas, else no lock */
    uint32_t wait_timeout_ms; /* WAIT's timeout */
};

extern const struct lock_family redis_family;

/* lock.redis in a client's configuration (all zero: no WAIT). */
static inline const struct redis_spec *redis_settings(const struct lock_config *cfg)
{
    return lock_settings(cfg, &redis_family);
}

#endif
