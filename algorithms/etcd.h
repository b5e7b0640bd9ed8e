/* etcd.h - lock.etcd, the settings of etcd's concurrency.Mutex (etcd.c's
 * family), and the lease etcd grants, on which its resolved lease rests. */
#ifndef LOCKLAB_ETCD_H
#define LOCKLAB_ETCD_H

#include <stdbool.h>
#include <stdint.h>

#include "algorithms/lock_family.h"

/* Its cluster, and whether a waiter checks its own key still exists once
 * its predecessors are gone (etcd 3.5's fix for #11456; false plays etcd
 * 3.4, which grants on an expired lease). */
struct etcd_spec {
    uint32_t nodes;    /* managed members: 1 or 3 */
    bool recheck;      /* default true */
    uint32_t lease_ms; /* resolved: ttl_ms rounded up to whole seconds, at least 2 s */
};

extern const struct lock_family etcd_family;

/* The managed members' raft timing. etcd grants no lease shorter than
 * 3/2 of its election timeout, in whole heartbeats, rounded up to a second
 * (etcdserver's MinLeaseTTL: (3 * electionTicks / 2) heartbeats): its
 * default 1000 ms grants 2 s at least, 500 ms grants 1 s, so that a 1 s
 * ttl runs on a 1 s lease. etcd refuses a heartbeat longer than a fifth
 * of the election timeout; 50 ms (a tenth) lets a follower miss nine in a
 * row on a loaded machine before it stands for election. */
#define ETCD_ELECTION_TIMEOUT_MS 500
#define ETCD_HEARTBEAT_MS        50
/* etcd's own defaults: what an etcd locklab does not start is taken to run */
#define ETCD_DEFAULT_ELECTION_TIMEOUT_MS 1000
#define ETCD_DEFAULT_HEARTBEAT_MS        100

/* The shortest lease, in seconds, an etcd with these timings grants. */
static inline uint32_t etcd_lease_floor_s(uint32_t election_ms, uint32_t heartbeat_ms)
{
    uint32_t ticks = election_ms / heartbeat_ms;
    return (3 * ticks / 2 * heartbeat_ms + 999) / 1000;
}

#endif
