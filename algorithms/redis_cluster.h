/* redis_cluster.h - lock.redis_cluster, the Redis Cluster the
 * redis-cluster lock runs on: its masters, a replica of each or none, and
 * the WAIT a grant may ask of them; the family is
 * redis_cluster_family.c's. */
#ifndef LOCKLAB_REDIS_CLUSTER_H
#define LOCKLAB_REDIS_CLUSTER_H

#include <stdbool.h>
#include <stdint.h>

#include "algorithms/lock.h"
#include "algorithms/lock_family.h"

struct redis_cluster_spec {
    uint32_t masters;         /* 3..5 */
    uint32_t replicas;        /* of each master: 0, 1 or 2 */
    uint32_t wait_replicas;   /* after SET: WAIT this many replicas, else no lock */
    uint32_t wait_timeout_ms; /* WAIT's timeout */
    bool sharded_pubsub;      /* redisson-cluster: SPUBLISH / SSUBSCRIBE (Redisson's
                                 shardedSubscriptionMode AUTO on Redis 7), else
                                 PUBLISH / SUBSCRIBE (its mode OFF) */
};

extern const struct lock_family redis_cluster_family;

static inline const struct redis_cluster_spec *redis_cluster_settings(const struct lock_config *cfg)
{
    return lock_settings(cfg, &redis_cluster_family);
}

#endif
